"""Rulesets of the 1000 dice family: one frozen object per set of rules.

A :class:`Ruleset` holds every parameter of docs/rules.md. It is built from a
mapping (a TOML preset or file, plus ``key=value`` overrides), validated, and
written back to canonical TOML that loads to the same :attr:`Ruleset.hash`.

All point values are stored in points; :attr:`Ruleset.unit` is the gcd of
every point value (5 for the 1000 family, 1 for Pig, 50 for Farkle) and the
solvers count in units.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, reduce
from importlib import resources
from pathlib import Path
from typing import Any

from thousand.base.errors import RulesetError
from thousand.base.i18n import _
from thousand.base.untrusted import MAX_DEPTH, InputError, cut, load_toml, nesting_depth

from .poker import PokerRuleset, is_poker, poker_from_mapping
from .text import MappingReader, content_hash, dump_toml

__all__ = [
    "BARREL_KINDS",
    "COMPOSE_MODES",
    "EXEMPT_STATUSES",
    "FALL_TO",
    "FORMAT",
    "HOT_DICE_MODES",
    "KEEP_MODES",
    "MAX_GOAL_UNITS",
    "PUSH_OFF",
    "Barrel",
    "Bolts",
    "Pit",
    "Ruleset",
    "Scoring",
    "from_mapping",
    "load_ruleset",
    "preset_names",
    "ruleset_from_mapping",
]

FORMAT = 1  # version of the ruleset mapping layout; part of the hash

KEEP_MODES = ("all", "any")
COMPOSE_MODES = ("best", "any")
HOT_DICE_MODES = ("must_roll", "free", "confirm")
BARREL_KINDS = ("none", "points", "region", "exact")
# a goal of more units than this makes even one turn DP too long to be a game of dice
MAX_GOAL_UNITS = 100_000
FALL_TO = ("penalty", "entry", "open_min")
PUSH_OFF = ("none", "fall", "penalty", "open_min")
EXEMPT_STATUSES = ("unopened", "pit", "barrel")


# --------------------------------------------------------------------------- parts


@dataclass(frozen=True)
class Scoring:
    """The scoring table of one roll.

    ``singles``: (face, points); ``kinds``: (count, face, points) for ``count``
    dice of one face; ``straights``: (faces, points), the faces all shown once;
    ``patterns``: (size, count, distinct, points), ``count`` groups of ``size``
    equal dice (faces of different groups distinct when ``distinct``), e.g. three
    pairs = (2, 3, False, 1500); ``instant_win``: (face, count) rolls that win the
    game at once; ``nothing``: the points of a roll of all the game's dice in which no
    die scores (it uses every die, so the dice are hot; 0: such a roll busts).
    """

    singles: tuple[tuple[int, int], ...] = ()
    kinds: tuple[tuple[int, int, int], ...] = ()
    straights: tuple[tuple[tuple[int, ...], int], ...] = ()
    patterns: tuple[tuple[int, int, bool, int], ...] = ()
    instant_win: tuple[tuple[int, int], ...] = ()
    nothing: int = 0

    def point_values(self) -> list[int]:
        return (
            [p for _f, p in self.singles]
            + [p for *_k, p in self.kinds]
            + [p for _f, p in self.straights]
            + [p for *_k, p in self.patterns]
            + ([self.nothing] if self.nothing else [])
        )


@dataclass(frozen=True)
class Pit:
    """A pit: a player with ``low <= s < exit`` may bank only ``s + t >= exit``."""

    low: int
    exit: int


@dataclass(frozen=True)
class Bolts:
    """Zero turns give bolts; ``limit`` of them cost ``penalty`` (limit 0: no bolts)."""

    limit: int = 0
    penalty: int = 0
    consecutive: bool = False
    exempt: tuple[str, ...] = ()


@dataclass(frozen=True)
class Barrel:
    """The barrel (бочка); see docs/rules.md section 5."""

    kind: str = "none"
    threshold: int = 0
    attempts: int = 0
    fall_penalty: int = 0
    fall_to: str = "penalty"
    max_falls: int = 0
    overshoots: int = 0
    push_off: str = "none"
    push_off_penalty: int = 0


@dataclass(frozen=True)
class Ruleset:
    """A complete, validated set of rules. Build it with :func:`load_ruleset`."""

    name: str
    summary: str
    dice: int
    faces: int
    scoring: Scoring
    keep: str
    hot_dice: str
    goal: int
    open_min: int = 0
    floor: int = 0
    pits: tuple[Pit, ...] = ()
    pit_attempts: int = 0
    dump: tuple[int, ...] = ()
    dump_mid_turn: bool = False
    overtake: int = 0
    bolts: Bolts = field(default_factory=Bolts)
    barrel: Barrel = field(default_factory=Barrel)
    equal_turns: bool = False
    declared_unit: int = 0
    min_bank: int = 0
    compose: str = "best"

    # ---------------------------------------------------------------- derived

    @cached_property
    def unit(self) -> int:
        """The gcd of every point value of the ruleset (the solvers' counting unit)."""
        if self.declared_unit:
            return self.declared_unit
        return reduce(math.gcd, (abs(v) for v in self._point_values() if v), 0) or 1

    def _point_values(self) -> list[int]:
        b = self.barrel
        vals = self.scoring.point_values() + [
            self.goal,
            self.open_min,
            self.min_bank,
            self.floor,
            self.overtake,
            self.bolts.penalty,
            b.threshold,
            b.fall_penalty,
            b.push_off_penalty,
        ]
        vals += list(self.dump) + [p.low for p in self.pits] + [p.exit for p in self.pits]
        return vals

    def to_mapping(self) -> dict[str, Any]:
        """The canonical mapping (every key present) that :func:`from_mapping` reads."""
        sc = self.scoring
        kinds: dict[str, dict[str, int]] = {}
        for count, face, pts in sc.kinds:
            kinds.setdefault(str(count), {})[str(face)] = pts
        m: dict[str, Any] = {
            "name": self.name,
            "summary": self.summary,
            "dice": self.dice,
            "faces": self.faces,
            "keep": self.keep,
            "compose": self.compose,
            "hot_dice": self.hot_dice,
            "goal": self.goal,
            "open_min": self.open_min,
            "min_bank": self.min_bank,
            "floor": self.floor,
            "pit_attempts": self.pit_attempts,
            "dump": list(self.dump),
            "dump_mid_turn": self.dump_mid_turn,
            "overtake": self.overtake,
            "equal_turns": self.equal_turns,
            "unit": self.declared_unit,
            "scoring": {
                "singles": {str(f): p for f, p in sc.singles},
                "kinds": kinds,
                "straights": [{"faces": list(fs), "points": p} for fs, p in sc.straights],
                "patterns": [{"size": s, "count": c, "distinct": d, "points": p} for s, c, d, p in sc.patterns],
                "instant_win": [{"face": f, "count": c} for f, c in sc.instant_win],
                "nothing": sc.nothing,
            },
            "pits": [{"low": p.low, "exit": p.exit} for p in self.pits],
            "bolts": {
                "limit": self.bolts.limit,
                "penalty": self.bolts.penalty,
                "consecutive": self.bolts.consecutive,
                "exempt": list(self.bolts.exempt),
            },
            "barrel": {
                "kind": self.barrel.kind,
                "threshold": self.barrel.threshold,
                "attempts": self.barrel.attempts,
                "fall_penalty": self.barrel.fall_penalty,
                "fall_to": self.barrel.fall_to,
                "max_falls": self.barrel.max_falls,
                "overshoots": self.barrel.overshoots,
                "push_off": self.barrel.push_off,
                "push_off_penalty": self.barrel.push_off_penalty,
            },
        }
        return m

    def to_toml(self) -> str:
        return dump_toml(self.to_mapping())

    @cached_property
    def hash(self) -> str:
        """A stable content hash of the rules (name and summary excluded)."""
        return content_hash(self.to_mapping(), FORMAT)

    # ------------------------------------------------------------ statuses

    def pit_of(self, score: int) -> Pit | None:
        """The pit whose band holds ``score``, if any."""
        for p in self.pits:
            if p.low <= score < p.exit:
                return p
        return None

    def on_barrel(self, score: int) -> bool:
        """Whether a score stands on the barrel (points: at the cap; region/exact: in the band)."""
        b = self.barrel
        if b.kind == "points":
            return score == b.threshold
        if b.kind in ("region", "exact"):
            return b.threshold > 0 and b.threshold <= score < self.goal
        return False


# --------------------------------------------------------------------------- loading


def preset_names(game: str | None = None) -> list[str]:
    """Names of the shipped presets, in the order of docs/rules.md section 8 (poker dice
    last); ``game``: only those of ``"1000"`` (the 1000 family) or ``"poker"``."""
    order = [
        "classic",
        "classic-nobarrel",
        "classic-open",
        "street",
        "kubiki",
        "admission",
        "six-dice",
        "plain",
        "pig",
        "farkle",
        "farkle-cardgames",
        "zilch",
        "poker",
    ]
    found = {p.name[:-5] for p in resources.files("thousand.rules.presets").iterdir() if p.name.endswith(".toml")}
    names = [n for n in order if n in found] + sorted(found - set(order))
    if game is None:
        return names
    return [n for n in names if is_poker(tomllib.loads(_preset_text(n))) == (game == "poker")]


def _preset_text(name: str) -> str | None:
    res = resources.files("thousand.rules.presets").joinpath(name + ".toml")
    return res.read_text(encoding="utf-8") if res.is_file() else None


def load_ruleset(spec: str | Ruleset | PokerRuleset, overrides: Iterable[str] = ()) -> Ruleset | PokerRuleset:
    """A ruleset from a preset name or a TOML path, then ``key=value`` overrides.

    Overrides use dotted keys (``bolts.penalty=50``) and TOML values
    (``keep=any``, ``dump=[555]``, ``barrel.kind="none"``; a bare word is a string).
    A mapping with ``game = "poker"`` is a poker-dice ruleset (:class:`PokerRuleset`).
    """
    if isinstance(spec, (Ruleset, PokerRuleset)):
        mapping = spec.to_mapping()
    else:
        text = _preset_text(spec) if "/" not in spec and not spec.endswith(".toml") else None
        if text is None:
            path = Path(spec)
            if not path.is_file():
                raise RulesetError(
                    _("unknown ruleset {0!r}: not a preset ({1}) and no such file").format(
                        spec, ", ".join(preset_names())
                    )
                )
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise RulesetError(_("cannot read ruleset file {0}: {1}").format(spec, exc)) from None
        try:
            mapping = load_toml(text, _("ruleset {0}").format(cut(spec)))
        except InputError as exc:
            raise RulesetError(str(exc)) from None
    for item in overrides:
        _apply_override(mapping, item)
    return ruleset_from_mapping(mapping)


def ruleset_from_mapping(mapping: Mapping[str, Any]) -> Ruleset | PokerRuleset:
    """A 1000-family :class:`Ruleset`, or a :class:`PokerRuleset` for ``game = "poker"``."""
    return poker_from_mapping(mapping) if is_poker(mapping) else from_mapping(mapping)


def _apply_override(mapping: dict, item: str) -> None:
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise RulesetError(_("override {0!r} is not of the form key=value").format(cut(item)))
    if nesting_depth(raw, toml=True) > MAX_DEPTH:
        raise RulesetError(_("override {0!r} nests deeper than {1} levels").format(cut(item), MAX_DEPTH))
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    parts = key.split(".")
    node = mapping
    for p in parts[:-1]:
        nxt = node.get(p)
        if nxt is None:
            nxt = node[p] = {}
        if not isinstance(nxt, dict):
            raise RulesetError(_("override {0!r}: {1!r} is not a table").format(key, p))
        node = nxt
    node[parts[-1]] = value


# --------------------------------------------------------------------------- validation


def _int_key(k: str, where: str) -> int:
    try:
        return int(k)
    except ValueError:
        raise RulesetError(_("{0}: key {1!r} is not a whole number").format(where, k)) from None


def _nonneg(v: int, name: str) -> int:
    if v < 0:
        raise RulesetError(_("{0} must not be negative, got {1}").format(name, v))
    return v


def _read_scoring(r: MappingReader, dice: int, faces: int) -> Scoring:
    def face_ok(f: int, where: str) -> int:
        if not 1 <= f <= faces:
            raise RulesetError(_("{0}: face {1} is not between 1 and {2}").format(where, f, faces))
        return f

    def pts_ok(p: Any, where: str) -> int:
        if not isinstance(p, int) or isinstance(p, bool) or p <= 0:
            raise RulesetError(_("{0}: points must be a positive whole number, got {1!r}").format(where, p))
        return p

    singles = []
    for k, p in r.get("singles", dict, {}).items():
        singles.append((face_ok(_int_key(k, "scoring.singles"), "scoring.singles"), pts_ok(p, f"scoring.singles.{k}")))
    kinds = []
    for ck, table in r.get("kinds", dict, {}).items():
        count = _int_key(ck, "scoring.kinds")
        if not 2 <= count <= dice:
            raise RulesetError(_("scoring.kinds.{0}: a kind needs 2 to {1} dice").format(ck, dice))
        if not isinstance(table, dict):
            raise RulesetError(_("scoring.kinds.{0} must be a table of face = points").format(ck))
        for fk, p in table.items():
            kinds.append(
                (
                    count,
                    face_ok(_int_key(fk, f"scoring.kinds.{ck}"), f"scoring.kinds.{ck}"),
                    pts_ok(p, f"scoring.kinds.{ck}.{fk}"),
                )
            )
    straights = []
    for i, s in enumerate(r.get("straights", list, [])):
        sr = MappingReader(s, f"scoring.straights[{i}]")
        fs = sr.get("faces", list, required=True)
        p = pts_ok(sr.get("points", int, required=True), f"scoring.straights[{i}]")
        sr.done()
        if not fs or len(set(fs)) != len(fs) or not all(isinstance(f, int) for f in fs):
            raise RulesetError(_("scoring.straights[{0}].faces must be distinct faces").format(i))
        if len(fs) > dice:
            raise RulesetError(_("scoring.straights[{0}] needs {1} dice, the game has {2}").format(i, len(fs), dice))
        straights.append((tuple(sorted(face_ok(f, f"scoring.straights[{i}]") for f in fs)), p))
    patterns = []
    for i, s in enumerate(r.get("patterns", list, [])):
        pr = MappingReader(s, f"scoring.patterns[{i}]")
        size, count = pr.get("size", int, required=True), pr.get("count", int, required=True)
        distinct = pr.get("distinct", bool, False)
        p = pts_ok(pr.get("points", int, required=True), f"scoring.patterns[{i}]")
        pr.done()
        if size < 1 or count < 1 or size * count > dice:
            raise RulesetError(
                _("scoring.patterns[{0}]: {1} groups of {2} do not fit in {3} dice").format(i, count, size, dice)
            )
        if distinct and count > faces:
            raise RulesetError(
                _("scoring.patterns[{0}]: {1} distinct faces on a {2}-faced die").format(i, count, faces)
            )
        patterns.append((size, count, distinct, p))
    instant = []
    for i, s in enumerate(r.get("instant_win", list, [])):
        ir = MappingReader(s, f"scoring.instant_win[{i}]")
        f, c = ir.get("face", int, required=True), ir.get("count", int, required=True)
        ir.done()
        if not 1 <= c <= dice:
            raise RulesetError(_("scoring.instant_win[{0}]: count must be 1 to {1}").format(i, dice))
        instant.append((face_ok(f, f"scoring.instant_win[{i}]"), c))
    nothing = _nonneg(r.get("nothing", int, 0), "scoring.nothing")
    r.done()
    if not (singles or kinds or straights or patterns):
        raise RulesetError(_("scoring: the table scores nothing"))
    if nothing and not (singles or kinds):
        raise RulesetError(_("scoring.nothing: without singles or kinds every roll of all the dice would score"))
    return Scoring(
        tuple(sorted(singles)),
        tuple(sorted(kinds)),
        tuple(sorted(straights)),
        tuple(sorted(patterns)),
        tuple(sorted(instant)),
        nothing,
    )


def from_mapping(mapping: Mapping[str, Any]) -> Ruleset:
    """Validate a mapping (as read from TOML) and build the :class:`Ruleset`."""
    r = MappingReader(dict(mapping), "")
    name = r.get("name", str, "custom")
    summary = r.get("summary", str, "")
    dice = r.get("dice", int, required=True)
    faces = r.get("faces", int, 6)
    if not 1 <= dice <= 8:
        raise RulesetError(_("dice must be 1 to 8, got {0}").format(dice))
    if not 2 <= faces <= 12:
        raise RulesetError(_("faces must be 2 to 12, got {0}").format(faces))
    scoring = _read_scoring(r.sub("scoring"), dice, faces)
    keep = r.choice("keep", KEEP_MODES, "all")
    compose = r.choice("compose", COMPOSE_MODES, "best")
    if compose == "any" and keep != "any":
        raise RulesetError(_('compose = "any" chooses how a set-aside is scored: it needs keep = "any"'))
    hot = r.choice("hot_dice", HOT_DICE_MODES, "must_roll")
    goal = r.get("goal", int, required=True)
    if goal <= 0:
        raise RulesetError(_("goal must be positive, got {0}").format(goal))
    open_min = _nonneg(r.get("open_min", int, 0), "open_min")
    min_bank = _nonneg(r.get("min_bank", int, 0), "min_bank")
    floor = r.get("floor", int, 0)
    if floor > 0:
        raise RulesetError(_("floor must be 0 or negative, got {0}").format(floor))
    pit_attempts = _nonneg(r.get("pit_attempts", int, 0), "pit_attempts")
    dump = tuple(sorted(r.get("dump", list, [])))
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in dump):
        raise RulesetError(_("dump must be a list of whole numbers"))
    dump_mid = r.get("dump_mid_turn", bool, False)
    overtake = _nonneg(r.get("overtake", int, 0), "overtake")
    equal_turns = r.get("equal_turns", bool, False)
    unit = _nonneg(r.get("unit", int, 0), "unit")

    pits = []
    for i, p in enumerate(r.get("pits", list, [])):
        pr = MappingReader(p, f"pits[{i}]")
        pits.append(Pit(pr.get("low", int, required=True), pr.get("exit", int, required=True)))
        pr.done()
    pits.sort(key=lambda p: p.low)

    br = r.sub("bolts")
    bolts = Bolts(
        _nonneg(br.get("limit", int, 0), "bolts.limit"),
        _nonneg(br.get("penalty", int, 0), "bolts.penalty"),
        br.get("consecutive", bool, False),
        tuple(sorted(br.get("exempt", list, []))),
    )
    br.done()
    ar = r.sub("barrel")
    barrel = Barrel(
        kind=ar.choice("kind", BARREL_KINDS, "none"),
        threshold=_nonneg(ar.get("threshold", int, 0), "barrel.threshold"),
        attempts=_nonneg(ar.get("attempts", int, 0), "barrel.attempts"),
        fall_penalty=_nonneg(ar.get("fall_penalty", int, 0), "barrel.fall_penalty"),
        fall_to=ar.choice("fall_to", FALL_TO, "penalty"),
        max_falls=_nonneg(ar.get("max_falls", int, 0), "barrel.max_falls"),
        overshoots=_nonneg(ar.get("overshoots", int, 0), "barrel.overshoots"),
        push_off=ar.choice("push_off", PUSH_OFF, "none"),
        push_off_penalty=_nonneg(ar.get("push_off_penalty", int, 0), "barrel.push_off_penalty"),
    )
    ar.done()
    r.done()

    rs = Ruleset(
        name=name,
        summary=summary,
        dice=dice,
        faces=faces,
        scoring=scoring,
        keep=keep,
        hot_dice=hot,
        goal=goal,
        open_min=open_min,
        floor=floor,
        pits=tuple(pits),
        pit_attempts=pit_attempts,
        dump=dump,
        dump_mid_turn=dump_mid,
        overtake=overtake,
        bolts=bolts,
        barrel=barrel,
        equal_turns=equal_turns,
        declared_unit=unit,
        min_bank=min_bank,
        compose=compose,
    )
    _check_consistency(rs)
    return rs


def _check_consistency(rs: Ruleset) -> None:
    """Cross-field checks: each failure is one :class:`RulesetError` line. One step per part
    of the rules: points and the goal, bolts, pits and samosval scores, the barrel."""
    _check_points_and_goal(rs)
    _check_bolts(rs)
    _check_pits_and_dumps(rs)
    _check_barrel(rs)


def _check_points_and_goal(rs: Ruleset) -> None:
    u = rs.unit
    for v in rs._point_values():
        if v % u:
            raise RulesetError(_("point value {0} is not a multiple of the unit {1}").format(v, u))
    if rs.goal // rs.unit > MAX_GOAL_UNITS:
        raise RulesetError(
            _("goal {0} is {1:,} units of {2} points: the solver plays goals of at most {3:,} units").format(
                rs.goal, rs.goal // rs.unit, rs.unit, MAX_GOAL_UNITS
            )
        )
    if rs.open_min >= rs.goal:
        raise RulesetError(_("open_min {0} must be below the goal {1}").format(rs.open_min, rs.goal))
    if rs.min_bank >= rs.goal:
        raise RulesetError(_("min_bank {0} must be below the goal {1}").format(rs.min_bank, rs.goal))
    g = reduce(math.gcd, rs.scoring.point_values())
    if rs.barrel.kind == "exact" and rs.goal % g:
        raise RulesetError(
            _("goal {0} cannot be reached exactly: every roll scores a multiple of {1}").format(rs.goal, g)
        )
    if rs.open_min and max(rs.scoring.point_values()) < 1:
        raise RulesetError(_("the dice cannot reach the opening minimum"))


def _check_bolts(rs: Ruleset) -> None:
    for s in rs.bolts.exempt:
        if s not in EXEMPT_STATUSES:
            raise RulesetError(_("bolts.exempt: unknown status {0!r} (use {1})").format(s, ", ".join(EXEMPT_STATUSES)))
    if rs.bolts.limit and rs.bolts.penalty == 0:
        raise RulesetError(_("bolts.limit is set but bolts.penalty is 0"))
    if rs.bolts.penalty and not rs.bolts.limit:
        raise RulesetError(_("bolts.penalty is set but bolts.limit is 0"))


def _check_pits_and_dumps(rs: Ruleset) -> None:
    prev_exit = None
    for p in rs.pits:
        if not 0 < p.low < p.exit:
            raise RulesetError(_("pit [{0}, {1}) must have 0 < low < exit").format(p.low, p.exit))
        if p.exit > rs.goal:
            raise RulesetError(_("pit [{0}, {1}) ends above the goal {2}").format(p.low, p.exit, rs.goal))
        if prev_exit is not None and p.low < prev_exit:
            raise RulesetError(_("pits overlap at {0}").format(p.low))
        prev_exit = p.exit
    if rs.pit_attempts and not rs.pits:
        raise RulesetError(_("pit_attempts is set but there are no pits"))
    # a score moves by what the dice score and by the penalties; a dump score off that grid is
    # never reached, and would only shrink the counting unit (five times the states for 333)
    moves = [*rs.scoring.point_values(), rs.overtake, rs.bolts.penalty, rs.barrel.fall_penalty]
    step = reduce(math.gcd, (abs(v) for v in [*moves, rs.barrel.push_off_penalty, rs.open_min, rs.floor] if v), 0)
    for d in rs.dump:
        if not 0 < d < rs.goal:
            raise RulesetError(_("dump score {0} must lie between 0 and the goal {1}").format(d, rs.goal))
        if step > 1 and d % step:
            raise RulesetError(
                _("dump score {0} can never be reached: every score is a multiple of {1}").format(d, step)
            )
    if rs.dump_mid_turn and not rs.dump:
        raise RulesetError(_("dump_mid_turn is set but there is no dump score"))


def _check_barrel(rs: Ruleset) -> None:
    b = rs.barrel
    if b.kind == "none":
        unused = (b.threshold, b.attempts, b.fall_penalty, b.max_falls, b.overshoots)
        if any(unused) or b.fall_to != "penalty" or b.push_off != "none":
            raise RulesetError(_("barrel.kind is none but other barrel settings are given"))
    else:
        _check_barrel_kind(rs, b)
        _check_barrel_falls(rs, b)
    if b.push_off_penalty and b.push_off != "penalty":
        raise RulesetError(_("barrel.push_off_penalty is set but barrel.push_off is not penalty"))


def _check_barrel_kind(rs: Ruleset, b) -> None:
    """Where the barrel stands and what its kind counts (attempts or overshoots)."""
    if b.kind in ("points", "region") and not 0 < b.threshold < rs.goal:
        raise RulesetError(_("barrel.threshold must lie between 0 and the goal {0}").format(rs.goal))
    if b.kind == "exact" and not 0 <= b.threshold < rs.goal:
        raise RulesetError(_("barrel.threshold must be below the goal {0}").format(rs.goal))
    if b.kind == "exact" and b.overshoots == 0:
        raise RulesetError(_("an exact barrel needs barrel.overshoots > 0"))
    if b.kind == "exact" and b.attempts:
        raise RulesetError(_("an exact barrel counts overshoots, not barrel.attempts"))
    if b.kind != "exact" and b.overshoots:
        raise RulesetError(_("barrel.overshoots applies only to an exact barrel"))
    if b.kind == "points" and rs.pit_of(b.threshold):
        raise RulesetError(_("the barrel {0} lies inside a pit").format(b.threshold))


def _check_barrel_falls(rs: Ruleset, b) -> None:
    """What a fall from the barrel, or a push off it, costs and where it lands."""
    if b.fall_to == "entry" and b.kind != "points":
        raise RulesetError(_("barrel.fall_to = entry applies only to a points barrel"))
    if b.kind == "region" and (b.attempts or b.max_falls or b.fall_penalty or b.fall_to != "penalty"):
        raise RulesetError(_("a region barrel has no attempts or falls (failures count as bolts)"))
    if b.kind == "points" and b.attempts == 0 and b.push_off != "fall" and (b.max_falls or b.fall_penalty):
        raise RulesetError(_("barrel falls are set but barrel.attempts is 0 (no player ever falls)"))
    if b.fall_to == "open_min" and rs.open_min == 0:
        raise RulesetError(_("barrel.fall_to = open_min but open_min is 0"))
    if b.push_off == "penalty" and b.push_off_penalty == 0:
        raise RulesetError(_("barrel.push_off = penalty needs barrel.push_off_penalty > 0"))
    if b.push_off == "open_min" and rs.open_min == 0:
        raise RulesetError(_("barrel.push_off = open_min but open_min is 0"))
