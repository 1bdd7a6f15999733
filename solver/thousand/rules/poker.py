"""Poker dice («покер на костях», RULES.md section 10): the ruleset and the hands.

A :class:`PokerRuleset` is the poker-dice counterpart of :class:`thousand.rules.Ruleset`:
built from a TOML mapping with ``game = "poker"`` (a preset or a file, plus
``key=value`` overrides), validated, written back to canonical TOML, hashed.

Hands are ranked by :attr:`PokerRuleset.hands`: every one of the 252 sorted rolls of
five dice gets a strength (an integer, larger is better; equal strength is a tie that
the tied players replay). The category order is fixed (five of a kind, four, full
house, straight when on, three of a kind when on, two pairs, a pair, nothing); within a
category ``tie_break`` decides: ``hand_sum`` (the sum of the faces of the dice that
make the hand; all five for a full house, a straight and nothing) or ``ranked`` (the
larger group's face, then the smaller group's, then the other dice high to low).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations_with_replacement
from typing import Any

from thousand.base.errors import RulesetError, StateError
from thousand.base.i18n import _

from .text import MappingReader, content_hash, dump_toml

__all__ = [
    "CATEGORIES",
    "CATEGORY_RU",
    "CATEGORY_WORDS",
    "DICE",
    "FACES",
    "FORMAT",
    "GAME",
    "MAX_ROLLS",
    "ROLLS",
    "TIE_BREAKS",
    "Hand",
    "HandTable",
    "PokerRuleset",
    "check_dice",
    "is_poker",
    "parse_dice",
    "poker_from_mapping",
]

GAME = "poker"
FORMAT = 1  # version of the poker mapping layout; part of the hash
DICE, FACES = 5, 6  # the game's dice: the hands are defined for five six-faced dice
TIE_BREAKS = ("hand_sum", "ranked")
MAX_ROLLS = 6

# categories, weakest first; the index is the category's rank
CATEGORIES = (
    "nothing",
    "pair",
    "two pairs",
    "three of a kind",
    "straight",
    "full house",
    "four of a kind",
    "five of a kind",
)
CATEGORY_RU = ("ничего", "пара", "две пары", "тройка", "стрит", "фулл хаус", "каре", "покер")
# names a user may type for a category (--to-beat four:6)
CATEGORY_WORDS = {
    "nothing": 0,
    "pair": 1,
    "two-pairs": 2,
    "twopairs": 2,
    "three": 3,
    "straight": 4,
    "full": 5,
    "full-house": 5,
    "four": 6,
    "five": 7,
    "poker": 7,
}

ROLLS = tuple(combinations_with_replacement(range(1, FACES + 1), DICE))  # the 252 sorted rolls


@dataclass(frozen=True)
class Hand:
    """What five dice make: the category, the faces that make it, and the tie-break key."""

    dice: tuple[int, ...]
    category: int
    faces: tuple[int, ...]  # the groups' faces, larger group first (straight: its high face)
    key: tuple[int, ...]  # compared after the category

    @property
    def name(self) -> str:
        return CATEGORIES[self.category]

    def describe(self, tie_break: str = "hand_sum") -> str:
        """E.g. ``four of a kind of 6 (24 points)``; under ``ranked`` the order of the faces."""
        c, f = self.category, self.faces
        if c in (2, 5):
            what = (_("two pairs, {a} and {b}") if c == 2 else _("a full house, {a} over {b}")).format(a=f[0], b=f[1])
        elif c == 0:
            what = _("nothing")
        else:
            what = {
                1: _("a pair of {a}"),
                3: _("three of a kind of {a}"),
                4: _("a straight to {a}"),
                6: _("four of a kind of {a}"),
                7: _("five of a kind of {a}"),
            }[c].format(a=f[0])
        if tie_break == "hand_sum":
            return _("{hand} ({n} points)").format(hand=what, n=self.key[0])
        return _("{hand} (then {order})").format(hand=what, order="-".join(map(str, self.key)))


@dataclass(frozen=True)
class PokerRuleset:
    """A complete, validated poker-dice ruleset. Build it with :func:`thousand.load_ruleset`
    (a mapping with ``game = "poker"``)."""

    name: str = "poker"
    summary: str = ""
    rolls: int = 3
    lock_kept: bool = True
    three_of_a_kind: bool = True
    straights: bool = False
    tie_break: str = "hand_sum"

    game = GAME
    dice = DICE
    faces = FACES

    def to_mapping(self) -> dict[str, Any]:
        """The canonical mapping (every key present) that :func:`poker_from_mapping` reads."""
        return {
            "name": self.name,
            "summary": self.summary,
            "game": GAME,
            "dice": DICE,
            "faces": FACES,
            "rolls": self.rolls,
            "lock_kept": self.lock_kept,
            "three_of_a_kind": self.three_of_a_kind,
            "straights": self.straights,
            "tie_break": self.tie_break,
        }

    def to_toml(self) -> str:
        return dump_toml(self.to_mapping())

    @cached_property
    def hash(self) -> str:
        """A stable content hash of the rules (name and summary excluded)."""
        return content_hash(self.to_mapping(), FORMAT)

    # ------------------------------------------------------------ hands

    def hand(self, dice) -> Hand:
        """The hand five dice make under these rules."""
        d = check_dice(dice)
        count = Counter(d)
        groups = sorted(count.items(), key=lambda fc: (-fc[1], -fc[0]))  # larger group, then higher face
        sizes = [c for _f, c in groups]
        faces = [f for f, _c in groups]
        high = sorted(d, reverse=True)
        if sizes == [5]:
            cat, made, top = 7, list(d), faces[:1]
        elif sizes == [4, 1]:
            cat, made, top = 6, [faces[0]] * 4, faces[:1]
        elif sizes == [3, 2]:
            cat, made, top = 5, list(d), faces[:2]
        elif sizes == [3, 1, 1]:
            if self.three_of_a_kind:
                cat, made, top = 3, [faces[0]] * 3, faces[:1]
            else:  # without the hand, three equal dice are (at least) a pair
                cat, made, top = 1, [faces[0]] * 2, faces[:1]
        elif sizes == [2, 2, 1]:
            cat, made, top = 2, [faces[0]] * 2 + [faces[1]] * 2, faces[:2]
        elif sizes == [2, 1, 1, 1]:
            cat, made, top = 1, [faces[0]] * 2, faces[:1]
        elif self.straights and high in ([5, 4, 3, 2, 1], [6, 5, 4, 3, 2]):
            cat, made, top = 4, list(d), high[:1]
        else:
            cat, made, top = 0, list(d), []
        if self.tie_break == "hand_sum":
            key: tuple[int, ...] = (sum(made),)
        else:
            rest = list(high)
            for f in top:
                for _k in range(count[f] if cat != 1 or f != top[0] else 2):
                    rest.remove(f)
            key = tuple(top) + tuple(rest)
        return Hand(d, cat, tuple(top), key)

    @cached_property
    def hands(self) -> HandTable:
        return HandTable(self)

    def parse_hand(self, text: str) -> Hand:
        """A hand to beat, as five dice (``6,6,6,6,2``) or as ``KIND:FACES`` (``four:6``,
        ``full:6,2``, ``two-pairs:6,5``, ``pair:4``, ``three:5``, ``five:3``, ``straight:6``,
        with ``tie_break = "ranked"`` only the dice say the whole hand)."""
        text = text.strip()
        word, sep, rest = text.partition(":")
        if not sep:
            return self.hand(parse_dice(text))
        cat = CATEGORY_WORDS.get(word.strip().lower())
        if cat is None:
            raise StateError(
                _("unknown hand {0!r}: one of {1}, or five dice").format(word, ", ".join(sorted(CATEGORY_WORDS)))
            )
        try:
            nums = [int(x) for x in rest.replace(" ", "").split(",") if x]
        except ValueError:
            raise StateError(_("hand {0!r}: the faces must be whole numbers").format(text)) from None
        matches = [h for h in self.hands.by_strength if h.category == cat and self._named(h, nums)]
        if not matches:
            raise StateError(_("no hand {0!r} under {1}'s rules").format(text, self.name))
        strengths = {self.hands.strength(h.dice) for h in matches}
        if len(strengths) > 1:
            raise StateError(
                _("hand {0!r} is not one hand under tie_break = {1!r}: give the five dice").format(text, self.tie_break)
            )
        return matches[0]

    def _named(self, h: Hand, nums: list[int]) -> bool:
        if h.category == 0:
            return False  # nothing is named by its five dice
        if h.category == 2:
            nums = sorted(nums, reverse=True)
        return list(h.faces) == nums


class HandTable:
    """Every sorted roll of five dice with its hand and its strength (0 = the weakest)."""

    def __init__(self, rs: PokerRuleset):
        self.rs = rs
        self.hand_of = {d: rs.hand(d) for d in ROLLS}
        keys = sorted({(h.category, h.key) for h in self.hand_of.values()})
        self._rank = {k: i for i, k in enumerate(keys)}
        self.count = len(keys)
        # one representative roll of every strength, weakest first
        rep: dict[int, Hand] = {}
        for d in ROLLS:
            rep.setdefault(self.strength(d), self.hand_of[d])
        self.by_strength = [rep[i] for i in range(self.count)]

    def strength(self, dice) -> int:
        h = self.hand_of[tuple(sorted(dice))]
        return self._rank[(h.category, h.key)]

    def describe(self, strength: int) -> str:
        return self.by_strength[strength].describe(self.rs.tie_break)


def check_dice(dice, n: int = DICE) -> tuple[int, ...]:
    """Sorted faces of exactly ``n`` dice, each 1 to 6, or a :class:`StateError`."""
    try:
        d = tuple(sorted(int(x) for x in dice))
    except (TypeError, ValueError):
        raise StateError(_("dice {dice!r}: whole numbers 1 to {top} expected").format(dice=dice, top=FACES)) from None
    if len(d) != n:
        raise StateError(
            (
                _("{k} dice given; poker dice is played with {n}") if n == DICE else _("{k} dice given, {n} expected")
            ).format(k=len(d), n=n)
        )
    if d and not (1 <= d[0] and d[-1] <= FACES):
        bad = d[0] if d[0] < 1 else d[-1]
        raise StateError(_("face {face} is not a face of a die (1 to {top})").format(face=bad, top=FACES))
    return d


def parse_dice(text: str, n: int | None = DICE) -> tuple[int, ...]:
    """``6,6,3,2,1`` or ``66321`` -> sorted faces (``n`` of them unless None)."""
    t = text.strip()
    parts = [p for p in t.replace(" ", ",").split(",") if p] if ("," in t or " " in t) else list(t)
    try:
        faces = [int(p) for p in parts]
    except ValueError:
        raise StateError(_("dice {0!r}: faces 1 to {1} separated by commas expected").format(text, FACES)) from None
    return check_dice(faces, len(faces) if n is None else n)


def poker_from_mapping(mapping: Mapping[str, Any]) -> PokerRuleset:
    """Validate a mapping with ``game = "poker"`` and build the :class:`PokerRuleset`."""
    r = MappingReader(dict(mapping), "")
    if r.get("game", str, GAME) != GAME:
        raise RulesetError(_("not a poker-dice ruleset"))
    name = r.get("name", str, "custom-poker")
    summary = r.get("summary", str, "")
    if r.get("dice", int, DICE) != DICE:
        raise RulesetError(_("poker dice is played with {0} dice (its hands need five)").format(DICE))
    if r.get("faces", int, FACES) != FACES:
        raise RulesetError(_("poker dice is played with {0}-faced dice").format(FACES))
    rolls = r.get("rolls", int, 3)
    if not 1 <= rolls <= MAX_ROLLS:
        raise RulesetError(_("rolls must be 1 to {0}, got {1}").format(MAX_ROLLS, rolls))
    rs = PokerRuleset(
        name,
        summary,
        rolls,
        r.get("lock_kept", bool, True),
        r.get("three_of_a_kind", bool, True),
        r.get("straights", bool, False),
        r.choice("tie_break", TIE_BREAKS, "hand_sum"),
    )
    r.done()
    return rs


def is_poker(mapping: Mapping[str, Any]) -> bool:
    return isinstance(mapping, Mapping) and mapping.get("game") == GAME
