"""Strategy cards: a rule a person can hold in their head, and its exact cost.

A :class:`Card` is a table of *stop marks*: rows are bands of the score gap (my score
minus the opponent's) or of my own score (below a pit, in it, on the barrel: where the
1000 family's optimum turns), and, optionally, an endgame row (the opponent needs at most E
points); columns are groups of dice counts. Its rule, as printed:

1. Bank whenever banking wins the game.
2. After a roll, value each set-aside: where its turn total reaches the mark of your
   band and the dice you would roll next (hot dice: all of them), its total (you would
   bank); elsewhere its total plus the *worth* of the dice you would roll (one number per
   column: what rolling them on adds, roughly). Take the highest (on a tie the more
   points; a set-aside that ends the turn at once, a samosval dump or an overshoot,
   only when nothing else is legal), then bank or roll on as its mark says. Where a bank
   onto a samosval score sends the score to 0, never bank onto it: roll on.
3. With equal turns (the round is completed, docs/rules.md section 7) rule 1 banks as
   soon as a bank reaches the goal, and in the last turn, against the other player's
   finished total, the card rolls on until a bank beats it (on an exact barrel, where
   every finished total is the goal, until it can bank the tie), choosing set-asides by
   the worths of rule 2.

Stopping is of course only where the rules allow it (opening, pits, barrel): the
card's marks say *when you want to*. Beyond a state's saturation total every bank
ends alike and the card banks as soon as it may, as :class:`thousand.analysis.exact.PolicyTurns`
does for any bot.

Exact cost. With the card's turn-end distribution ``p_a^card(e)`` (a forward pass
of probability mass through the turn under the card's decisions, :func:`card_turn_ends`)
and the optimal player's ``p_b^opt(e)`` (the greedy turn of the duel table,
:func:`thousand.kernel.turn_ends` on the duel table), the card's chance against the optimum solves
the absorbing chain

    C(a, b) = P_a^card(win) + sum_e p_a^card(e) O(b_e, a_e)    (the card moves)
    O(b, a) = sum_e p_b^opt(e) C(a_e, b_e)                     (the optimum moves)

with ``C``/``O`` the card's win probability, solved by levels (:class:`CardDuel`; with
equal turns the seat is in the state and a first-seat win is worth what the other's last
turn leaves). The
card's *loss* is the win probability it gives up against an optimal opponent, averaged
over the two seats:
``1/2 [(P* - C(x0, x0)) + ((1 - P*) - O(x0, x0))] = 1/2 - (C + O) / 2``, where P* is the
duel's value; its *turn loss* is the expected points of one turn from the start,
optimum minus card.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from thousand import kernel
from thousand.base.errors import ThousandError
from thousand.base.i18n import _
from thousand.engine.player import WIN, Moves, PlayerState
from thousand.engine.turn import TurnEnd, TurnRules, TurnState
from thousand.kernel import CONFIRM, FREE
from thousand.kernel._pure import _mover_ends
from thousand.rules.ruleset import Ruleset

from .bots import Bot, BotState

__all__ = [
    "CARD_ANDERSON",
    "CARD_MAX_PAIRS",
    "CARD_PAIR_BYTES",
    "SEARCH_TOL",
    "Card",
    "CardBot",
    "CardDuel",
    "CardReport",
    "DuelOutOfReach",
    "LastTurnColumns",
    "Shape",
    "card_last_turns",
    "card_turn_ends",
    "card_turn_points",
    "find_card",
    "least_by_size",
    "last_turn_columns",
    "last_turn_takes",
    "parse_shape",
    "samosval_banks",
    "shape",
    "shapes",
    "turn_card",
    "turn_marks",
    "turn_only",
]

# rank tiers of a set-aside (rule 2 of the card: a win first, a forced end only when nothing else is legal)
_FORCED, _PLAY, _WIN = 0.0, 1.0, 2.0
_TIER = float(2**44)


@dataclass(frozen=True)
class Card:
    """A strategy card for ruleset ``rs`` (module docstring).

    ``groups``: the first dice count of each column, ascending from 1 (``(1,)`` one
    column for every count; ``(1, 3)`` columns 1-2 and 3-N dice). ``edges``: where a new
    row starts, ascending, in the score gap (my score minus the opponent's, points; ``by``
    ``"gap"``) or in my own score (``by`` ``"score"``): ``()`` one row; ``(-200,)`` "behind
    by more than 200" and the rest; ``(880,)`` by score: below 880, and 880 or more.
    ``marks[row][col]``: bank at or above this turn total (points). ``worth[col]``: what
    rolling that many dice on is worth when choosing a set-aside (points; empty: nothing;
    keep-all rules have nothing to choose and print none)."""

    rs: Ruleset
    groups: tuple[int, ...]
    edges: tuple[int, ...]
    marks: tuple[tuple[int, ...], ...]
    worth: tuple[int, ...] = ()
    endgame: int = 0  # > 0: the last row of marks applies when the opponent needs at most this many points
    by: str = "gap"  # what the rows split: "gap" (my score minus the opponent's) or "score" (my own)

    def __post_init__(self):
        n = self.rs.dice
        if self.by not in ("gap", "score"):
            raise ThousandError(f"card: rows go by the score gap or by your own score, not {self.by!r}")
        if not self.groups or self.groups[0] != 1 or list(self.groups) != sorted(set(self.groups)):
            raise ThousandError(f"card: dice groups must start at 1 and ascend: {self.groups}")
        if self.groups[-1] > n:
            raise ThousandError(f"card: a dice group starts beyond {n} dice: {self.groups}")
        if list(self.edges) != sorted(set(self.edges)):
            raise ThousandError(f"card: score-gap edges must ascend: {self.edges}")
        if len(self.marks) != self.rows or any(len(r) != len(self.groups) for r in self.marks):
            raise ThousandError("card: one row of marks per score-gap band (and the endgame), one mark per dice group")
        if self.endgame < 0:
            raise ThousandError(f"card: the endgame row needs a positive distance to the goal: {self.endgame}")
        if self.worth and len(self.worth) != len(self.groups):
            raise ThousandError("card: one worth per dice group")

    @property
    def chooses(self) -> bool:
        """Whether the card says which dice to set aside (keep any: a worth per column)."""
        return self.rs.keep == "any"

    @property
    def rows(self) -> int:
        """Rows of marks: one per score-gap band, and the endgame row where there is one."""
        return len(self.edges) + 1 + (self.endgame > 0)

    @property
    def cells(self) -> int:
        """The numbers on the card: its marks, and its worths where it chooses dice."""
        return (len(self.marks) + self.chooses) * len(self.groups)

    def band(self, gap: int, opponent: int | None = None, me: int = 0) -> int:
        """The row of a score gap (my score minus the opponent's, points), the opponent's
        score and my own (``me``, for rows by score): the endgame row where the opponent
        needs at most ``endgame`` points."""
        if self.endgame and opponent is not None and self.rs.goal - opponent <= self.endgame:
            return self.rows - 1
        return bisect.bisect_right(self.edges, me if self.by == "score" else gap)

    def column(self, dice: int) -> int:
        return bisect.bisect_right(self.groups, dice) - 1

    def mark(self, gap: int, dice: int, opponent: int | None = None, me: int = 0) -> int:
        """The stop mark (points) with ``dice`` to roll next at score gap ``gap`` (and the
        opponent's score, for the endgame row, and my own, for rows by score)."""
        return self.marks[self.band(gap, opponent, me)][self.column(dice)]

    def thresholds(self) -> np.ndarray:
        """Marks per band and dice count, (bands, dice + 1) points (column 0 unused)."""
        out = np.zeros((len(self.marks), self.rs.dice + 1), dtype=np.int64)
        for d in range(1, self.rs.dice + 1):
            out[:, d] = [row[self.column(d)] for row in self.marks]
        return out

    def reduced(self) -> Card:
        """The card that plays exactly as this one with no row or column twice: adjacent
        rows of equal marks merged (the edge between them dropped), an endgame row equal
        to every other row dropped, and adjacent columns with equal marks in every row
        (and equal worths) merged. Its :attr:`cells` is the size this card really has."""
        bands = [list(r) for r in self.marks[: len(self.edges) + 1]]
        end = [list(r) for r in self.marks[len(self.edges) + 1 :]]
        edges = list(self.edges)
        i = 1
        while i < len(bands):
            if bands[i] == bands[i - 1]:
                del bands[i], edges[i - 1]
            else:
                i += 1
        endgame = self.endgame
        if end and all(r == end[0] for r in bands):
            end, endgame = [], 0
        rows, groups, worth = bands + end, list(self.groups), list(self.worth)
        j = 1
        while j < len(groups):
            if all(r[j] == r[j - 1] for r in rows) and (not worth or worth[j] == worth[j - 1]):
                del groups[j]
                for r in rows:
                    del r[j]
                if worth:
                    del worth[j]
            else:
                j += 1
        return replace(
            self,
            groups=tuple(groups),
            edges=tuple(edges),
            marks=tuple(tuple(r) for r in rows),
            worth=tuple(worth),
            endgame=endgame,
        )

    def worths(self) -> np.ndarray:
        """The worth of rolling on per dice count, (dice + 1,) points (column 0: hot dice, all of them)."""
        w = self.worth or (0,) * len(self.groups)
        out = np.array([w[self.column(d)] for d in range(1, self.rs.dice + 1)], dtype=np.float64)
        return np.concatenate([out[-1:], out])

    # ---- what a person reads

    def group_label(self, j: int) -> str:
        lo = self.groups[j]
        hi = self.groups[j + 1] - 1 if j + 1 < len(self.groups) else self.rs.dice
        return str(lo) if lo == hi else f"{lo}-{hi}"

    def band_label(self, i: int) -> str:
        """The score gaps of row ``i`` in words (gap: my score minus the opponent's)."""
        if self.endgame and i == self.rows - 1:
            return _("the opponent needs {e} or less").format(e=self.endgame)
        if not self.edges:
            return _("any score")
        lo = self.edges[i - 1] if i > 0 else None
        hi = self.edges[i] if i < len(self.edges) else None
        if self.by == "score":
            if lo is None:
                return _("your score below {s}").format(s=hi)
            if hi is None:
                return _("your score {s} or more").format(s=lo)
            return _("your score {lo} to {hi}").format(lo=lo, hi=hi - 1)
        if lo is None:
            return _("behind by more than {g}").format(g=-hi) if hi <= 0 else _("below {g}").format(g=_signed(hi))
        if hi is None:
            return _("ahead by {g} or more").format(g=lo) if lo > 0 else _("{g} or better").format(g=_signed(lo))
        return _("from {lo} to {hi}").format(lo=_signed(lo), hi=_signed(hi - 1))

    def rules_text(self) -> list[str]:
        """The card's rule in words (the table of marks goes beside it)."""
        if self.rs.equal_turns:
            # the round is completed (docs/rules.md section 7): reaching the goal first is not the win yet
            first = _("Bank whenever banking reaches the goal (the other player then has one last turn).")
        else:
            first = _("Bank whenever banking wins the game.")
        lines = [
            first,
            _(
                "Bank when your turn total reaches the mark for your score and the dice you would roll next"
                "{hot}; otherwise roll on."
            ).format(hot=_(" (hot dice: all {n})").format(n=self.rs.dice) if self.rs.dice > 1 else ""),
        ]
        if self.chooses:
            lines.append(
                _(
                    "Choosing what to set aside: one you would bank with counts its turn total, one you would roll "
                    "on with its turn total plus the worth of the dice you would roll; take the most."
                )
            )
        if self.rs.equal_turns:
            lines.append(
                _("Your last turn, the other player having reached the goal: roll on until a bank beats their total.")
                if self.rs.barrel.kind != "exact"
                else _("Your last turn, the other player having reached the goal: roll on until you can bank it too.")
            )
        if (self.rs.dump and self.rs.dump_mid_turn) or self.rs.barrel.kind == "exact":
            lines.append(_("Never take a set-aside that ends your turn (a dump, an overshoot) if another is legal."))
        if self.rs.dump and not self.rs.dump_mid_turn:
            lines.append(
                _("Never bank onto {scores}: a samosval takes your score to 0; roll on instead.").format(
                    scores=", ".join(map(str, self.rs.dump))
                )
            )
        return lines

    def markdown(self, report: CardReport | None = None) -> str:
        head = "| " + _("score \\ dice to roll") + " | " + " | ".join(map(self.group_label, range(len(self.groups))))
        out = [
            "# " + _("Strategy card: {name}").format(name=self.rs.name),
            "",
            *[f"{k}. {line}" for k, line in enumerate(self.rules_text(), start=1)],
            "",
            _("Marks (bank at or above this turn total), by the dice you would roll next:"),
            "",
            head + " |",
            "|---" + "|---:" * len(self.groups) + "|",
        ]
        for i, row in enumerate(self.marks):
            out.append(f"| {self.band_label(i)} | " + " | ".join(str(m) for m in row) + " |")
        if self.chooses:
            worth = self.worth or (0,) * len(self.groups)
            out.append("| " + _("worth of rolling them") + " | " + " | ".join(f"+{w}" for w in worth) + " |")
        if report is not None:
            out += ["", *report.lines()]
        return "\n".join(out) + "\n"

    @classmethod
    def from_json(cls, rs: Ruleset, d: dict) -> Card:
        """A card of :meth:`to_json` for ruleset ``rs`` (another ruleset's card, carried over)."""
        marks = tuple(map(tuple, d["marks"]))
        worth = tuple(d.get("worth", ()))
        return cls(rs, tuple(d["groups"]), tuple(d["edges"]), marks, worth, d.get("endgame", 0), d.get("by", "gap"))

    def to_json(self) -> dict:
        return {
            "ruleset": self.rs.name,
            "groups": list(self.groups),
            "edges": list(self.edges),
            "marks": [list(r) for r in self.marks],
            "worth": list(self.worth) if self.chooses else [],
            "endgame": self.endgame,
            "by": self.by,
            "cells": self.cells,
            "rules": self.rules_text(),
        }


def _signed(v: int) -> str:
    return f"+{v}" if v > 0 else str(v)


# --------------------------------------------------------------------------- one turn


def card_turn_ends(
    table: kernel.RollTable,
    stop_ok: np.ndarray,
    forced_ok: np.ndarray,
    wins: np.ndarray,
    last: np.ndarray,
    marks: np.ndarray,
    worth: np.ndarray,
    unit: int,
    avoid: np.ndarray | None = None,
):
    """How turns end under card decisions, one column per turn: ``(stop_p, forced_p,
    bust_p, win_p)`` as :func:`thousand.kernel.end_distribution` gives them for the
    optimum (each column's totals above its last total counted at it; they sum to 1).
    ``avoid`` (T+1, K): totals the card never banks by choice (onto a samosval score; a
    bank the rules force, as a confirming roll's, still happens).

    ``stop_ok``, ``forced_ok``, ``wins`` (a bank at t wins): (T+1, K) per total in
    units, each column's values beyond its own last total ``last[k]`` repeating the
    value there; ``marks`` (K, dice+1): the stop mark in points per dice count;
    ``worth`` (K, dice+1): what rolling on with that many dice is worth (points; column 0
    for hot dice, all of them). The card's decisions are laid out here, where to bank and
    the rank of every place a set-aside leads to, and the kernel's forward pass of
    probability mass (:func:`thousand.kernel.ranked_end_distribution`) follows them over
    the totals (each set-aside adds at least one unit). Above its last total a
    column's every bank ends alike and the card banks as soon as it may (module
    docstring); the row T+1 holds every total above T, and its hot-dice cycle is
    followed until its mass is below 1e-17."""
    N, hot = table.dice, table.hot_mode
    T = stop_ok.shape[0] - 1
    L = T + 2
    K = marks.shape[0]
    s_ok = np.vstack([stop_ok, stop_ok[-1:]]).astype(bool)  # (L, K)
    f_ok = np.vstack([forced_ok, forced_ok[-1:]]).astype(bool)
    t_units = np.arange(L, dtype=np.float64)
    beyond = t_units[:, None] > np.asarray(last)[None, :]
    win = (np.vstack([wins, wins[-1:]]).astype(bool) | beyond) & s_ok
    shun = np.zeros_like(s_ok) if avoid is None else np.vstack([avoid, avoid[-1:]]).astype(bool) & ~beyond
    # the card banks at a decision (t, m) where allowed and the total reaches the mark (or wins)
    reach = (t_units[:, None, None] * unit >= marks.T[None, :, :]) & ~shun[:, None, :]
    bank = s_ok[:, None, :] & (reach | win[:, None, :])
    bank[:, 0, :] = bank[:, N, :] if hot == FREE else False  # hot dice: a decision at N dice only when free
    # the rank of arriving at (t, m) after a set-aside (rule 2 of the card): a win first, a
    # forced end last, else the total where the card banks, the total plus the dice's worth
    # where it rolls on; ties to more points, then more dice
    m_eff = np.arange(N + 1, dtype=np.float64)
    m_eff[0] = N
    t3 = t_units[:, None, None]
    roll_val = t3 + (worth.T / unit)[None, :, :]
    key = lambda v: (v * 4096.0 + t3) * 8.0 + m_eff[None, :, None]  # noqa: E731
    at_t = key(np.broadcast_to(t3, roll_val.shape))
    rank = _PLAY * _TIER + np.where(bank, at_t, key(roll_val))
    # a win where the card may bank: hot dice that must be rolled are no decision
    may_win = win[:, None, :] & ((m_eff[None, :, None] > 0) if hot == FREE else (np.arange(N + 1) > 0)[None, :, None])
    rank = np.where(may_win, _WIN * _TIER + at_t, rank)
    rank = np.where(f_ok[:, None, :], _FORCED * _TIER + np.broadcast_to(t3, rank.shape), rank)
    # after a confirming roll a total that may be banked is banked at once, whatever the dice left
    conf = (s_ok & ~f_ok)[:, None, :]
    rank_c = np.where(conf, np.where(win[:, None, :], _WIN, _PLAY) * _TIER + at_t, rank)

    stop_p, forced_p, bust_p, win_p = kernel.ranked_end_distribution(
        table, s_ok[:-1], f_ok[:-1], bank, rank, rank_c if hot == CONFIRM else None
    )
    # each column's totals above its last total counted at it (the kernel counts the tail at T)
    out = []
    for p in (stop_p, forced_p):
        folded = np.where(beyond[: T + 1], 0.0, p)
        folded[np.minimum(last, T), np.arange(K)] += np.where(beyond[: T + 1], p, 0.0).sum(axis=0)
        out.append(folded)
    return out[0], out[1], bust_p, win_p


def _padded(turns: list[tuple[np.ndarray, ...]]):
    """Turns given as per-total arrays over their own totals 0..T_k, one array per field, as
    (T+1, K) columns padded to the longest by each column's last value; and each column's
    last total ``T_k``."""
    T = max(len(r[0]) for r in turns) - 1
    K = len(turns)
    fields = [np.empty((T + 1, K), dtype=np.uint8) for _f in turns[0]]
    for k, turn in enumerate(turns):
        for out, a in zip(fields, turn):
            out[: len(a), k] = a
            out[len(a) :, k] = a[-1]
    return fields, np.array([len(r[0]) - 1 for r in turns])


def _columns(card: Card, rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]]):
    """The arguments of :func:`card_turn_ends` for turns given as ``(stop_ok, forced_ok,
    wins, band, avoid)`` over their own totals 0..T_k: padded to the longest, repeating each
    column's last value."""
    (ok, forced, wins, avoid), last = _padded([(r[0], r[1], r[2], r[4]) for r in rows])
    th = card.thresholds()[[r[3] for r in rows]].astype(np.float64)
    worth = np.broadcast_to(card.worths(), (len(rows), card.rs.dice + 1))
    return ok, forced, wins, last, th, worth, card.rs.unit, avoid


def last_turn_takes(rs: Ruleset, final: np.ndarray, to_beat: int) -> np.ndarray:
    """Where the card banks in a last turn against the finished total ``to_beat``: a final
    total above it; equal to it only on an exact barrel, where no total can be above
    (rule 3 of the module docstring). ``final``: the totals the banks would finish with."""
    final = np.asarray(final)
    return (final > to_beat) | ((final == to_beat) & (rs.barrel.kind == "exact"))


@dataclass
class LastTurnColumns:
    """The last turns :func:`card_last_turns` values, laid out once per game (they do not
    depend on the card): one column per distinct last turn and final total ``F``, in
    chunks as :func:`card_turn_ends` takes them (``(stop_ok, forced_ok, takes)`` padded,
    and each column's last total), each column's bank values (1, 1/2, 0 as a bank
    finishes above, at, below ``F``), and per state its first column of ``targets``."""

    chunks: list[tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]]
    values: list[np.ndarray]
    first: np.ndarray
    targets: int


def last_turn_columns(rs: Ruleset, moves: Moves, states: list[PlayerState], targets: np.ndarray) -> LastTurnColumns:
    """The last turns of ``states`` against every final total of ``targets``
    (:class:`LastTurnColumns`): a card rolls until a bank meets the win condition above
    ``F`` (:func:`last_turn_takes`); every turn runs to ``max(saturation, F - s + unit)``
    and banks as soon as it may beyond. States whose last turns are alike share columns."""
    from thousand.solvers.lastturn import last_turn_ends

    u = rs.unit
    top = int(np.max(targets))
    turns, values, first, seen = [], [], [], {}
    for y in states:
        e = last_turn_ends(moves, y, top)
        wins = np.array([z == WIN for z in e.stop_next]) & (e.stop_ok != 0)
        key = (y.score, e.stop_ok.tobytes(), e.forced_ok.tobytes(), wins.tobytes())
        if key in seen:
            first.append(seen[key])
            continue
        seen[key] = len(turns)
        first.append(len(turns))
        final = y.score + np.arange(e.T + 1) * u
        sat = moves.saturation(y) // u
        for F in targets:
            T = min(e.T, max(sat, (int(F) - y.score) // u + 1))
            takes = wins[: T + 1] & last_turn_takes(rs, final[: T + 1], int(F))
            # a bank's value: 1, 1/2, 0 as it finishes above, at, below F (a confirming roll's bank too)
            value = np.where(wins[: T + 1], 0.5 * (np.sign(final[: T + 1] - int(F)) + 1.0), 0.0)
            turns.append((e.stop_ok[: T + 1], e.forced_ok[: T + 1], takes))
            values.append(value)
    # columns a few thousand at a time: card_turn_ends holds (totals, dice, columns) of ranks
    step = max(1, 4_000_000 // ((max(len(t[0]) for t in turns) + 1) * (rs.dice + 1)))
    chunks = [_padded(turns[a : a + step]) for a in range(0, len(turns), step)]
    return LastTurnColumns(chunks, values, np.array(first, dtype=np.int64), len(targets))


def card_last_turns(card: Card, columns: LastTurnColumns, table: kernel.RollTable | None = None) -> np.ndarray:
    """``L_card(y, F)`` (states, targets) of :func:`last_turn_columns`: the chance that the
    card, in the last turn of an equal_turns round from ``y`` against the finished total
    ``F``, wins (a tie counted 1/2), as :func:`thousand.solvers.lastturn.last_turn_values`
    gives the optimum's. The card chooses what to set aside by its worths. ``table``: the
    ruleset's roll table (of the kernel in use when not given)."""
    rs = card.rs
    table = table or kernel.roll_table(rs)
    won = np.zeros(len(columns.values))
    at = 0
    for (ok, forced, takes), last in columns.chunks:
        K = len(last)
        never = np.full((K, rs.dice + 1), np.inf)  # no mark: the card banks only where it takes the win
        worth = np.broadcast_to(card.worths(), (K, rs.dice + 1))
        stop_p, _f, _b, win_p = card_turn_ends(table, ok, forced, takes, last, never, worth, rs.unit)
        for k in range(K):
            v = columns.values[at + k]
            won[at + k] = win_p[k] + stop_p[: len(v), k] @ v
        at += K
    return won[columns.first[:, None] + np.arange(columns.targets)[None, :]]


def samosval_banks(rs: Ruleset, score: int, totals: int) -> np.ndarray:
    """Per turn total 0..totals-1 (units), whether banking it from ``score`` lands on a
    samosval score and sends the score to 0: what the card never does by choice (where
    the samosval strikes mid-turn instead, the turn ends by itself and there is nothing to
    choose)."""
    if not rs.dump or rs.dump_mid_turn:
        return np.zeros(totals, dtype=bool)
    return np.isin(score + np.arange(totals) * rs.unit, rs.dump)


def card_turn_points(card: Card, x: PlayerState | None = None, T: int | None = None) -> float:
    """Expected points of one turn from ``x`` (the start) under the card at a level score,
    valued as :func:`thousand.solvers.turn.expected_turn_points` values the optimum's (on
    its horizon ``T``, solved here when not given)."""
    from thousand.solvers.turn import expected_turn_points

    rs = card.rs
    moves = Moves(rs)
    x = x or moves.initial()
    T = T if T is not None else expected_turn_points(rs, x).T
    u = rs.unit
    t = np.arange(T + 1)
    forced = np.array([moves.mid_turn(x, int(k) * u) is not None for k in t], np.uint8)
    ok = np.array([moves.can_bank(x, int(k) * u) for k in t], np.uint8) & (1 - forced)
    wins = np.array([bool(ok[k]) and moves.wins(x, int(k) * u) for k in t], np.uint8)
    args = _columns(card, [(ok, forced, wins, card.band(0, me=x.score), samosval_banks(rs, x.score, T + 1))])
    stop_p, _f, _b, win_p = card_turn_ends(kernel.roll_table(rs), *args)
    return float(stop_p[:, 0] @ (t * float(u)) + win_p[0] * max(rs.goal - x.score, 0))


# --------------------------------------------------------------------------- the duel


class DuelOutOfReach(ThousandError):
    """The card's duel cannot be built here (equal turns; more pairs than memory allows).
    A card can still be given, measured by one turn's points alone (:func:`turn_only`)."""


class CardDuel:
    """The duel of a card against the optimal player (module docstring), built once per
    ruleset: the optimal player's turns as patterns, and the levels they are swept in.
    :meth:`measure` values a card exactly.

    The unknowns are ``x = [C_Q, O_Q]`` (2 n^2): ``C_Q[b * n + a] = C(a moves, b)`` and
    ``O_Q[a * n + b] = O(b moves, a)``, the layout of the duel solver's ``Q``; in both
    halves pair ``k = opponent * n + mover``. A turn's ends depend on the pair only
    through its mover and its decisions: the card's through the card's row for the pair
    (a handful per mover), the optimum's through its greedy policy against that opponent
    (classic-open: 492 distinct policies per mover on average among its 3,600
    opponents). So each half's rows are *patterns* -- a mover's turn-end distribution,
    kept once -- and a pair's row is a pattern and its opponent
    (:meth:`thousand.kernel.Backend.pattern_sweep`), where a sparse row per pair would
    take 16.9 GB for classic and about 78 GiB for classic-open.

    With ``equal_turns`` the states are the duel solver's, seat and player state
    (:class:`thousand.solvers.duel.DuelModel`), and only the pairs of a first-seat mover
    against a second-seat opponent and back are swept. A first-seat bank that reaches
    the goal at final total ``F`` hands the other player its last turn: the card's is
    worth ``1 - L(y, F)`` to it (the optimum's last turn, the duel solver's ``win_L``),
    the optimum's ``L_card(a, F)`` (the card's last turn, :func:`card_last_turns`): per
    opponent (the stores' ``won``), summed once per pair when the sweeper is built. A
    second seat's bank that wins is final.

    A pair's level is the sum of both scores: a bank raises it, a bust keeps it, only
    penalties and overtaking lower it. :meth:`measure` sweeps the levels top down, each
    level's bust links (the card's bust to the optimum's turn at the same pair and back)
    solved exactly, every other entry at the values of the sweep so far (Gauss-Seidel; the
    sweeps Anderson-mixed), until a sweep changes no value by more than ``tol``: without
    penalties one sweep is the solution."""

    def __init__(self, rs: Ruleset, solution=None, tables_dir: str | None = None, progress: bool = False):
        from thousand.engine.states import build_state_space
        from thousand.solvers.duel import DuelModel
        from thousand.storage.solve import estimate, solve_objective

        t0 = time.perf_counter()
        self.rs = rs
        est = estimate(rs, "duel")
        if est["exceeded"] or est["pairs"] > CARD_MAX_PAIRS:
            seats = " (equal turns: each seat against the other)" if rs.equal_turns else ""
            least = "at least " if est["exceeded"] else ""  # the listing of states stopped at the solver's limit
            raise DuelOutOfReach(
                f"{rs.name}: {least}{est['pairs']:,} pairs{seats}; measuring a card holds its levels and the "
                f"optimum's turns, {least}{est['pairs'] * CARD_PAIR_BYTES / 2**30:,.0f} GiB here, more than the "
                f"{CARD_MAX_PAIRS:,} pairs it allows"
            )
        model = self.model = DuelModel(rs, space=build_state_space(rs, opponents=True, ends=est["ends"]))
        n = self.n = model.n
        m = model.players
        sol = solution or solve_objective(rs, "duel", tables_dir, progress=progress)
        st = model.space.states
        if hasattr(sol, "P"):  # a DuelSolution of the same model: its order already
            P = np.asarray(sol.P, dtype=np.float64)
        else:
            perm = np.array([sol.index[x] for x in st])
            v = np.asarray(sol.values, dtype=np.float64)
            P = model.from_table_values(v[:, perm][:, :, perm] if v.ndim == 3 else v[np.ix_(perm, perm)])
        x0 = model.moves.initial()
        first, second = model.index(x0), model.index(x0, 1 if model.equal_turns else 0)
        self.k0 = second * n + first  # the start: the first seat moves
        self.p_star = float(P[first, second])
        Q = np.ascontiguousarray(P.T)
        del P
        self.table, self.plans = model.table, model.plans
        self.moves = model.moves
        score = model.score
        self.gap = score[:, None] - score[None, :]  # gap[a, b]: card's score minus the opponent's
        # each mover's opponents: the other seat's states with equal turns, every state without
        _, self.lo, self.hi = model.opponents()
        self.opt_patterns, opt_pat = _optimum_patterns(self.table, self.plans, Q, self.lo, self.hi)
        del Q
        # the levels, top down: each level's pairs ascending, their C rows then their O rows
        pairs = np.arange(n * n, dtype=np.int64)
        if model.equal_turns:  # a seat against the other only
            pairs = pairs[(pairs % n < m) != (pairs // n < m)]
        lev = score[pairs % n] + score[pairs // n]
        order = np.argsort(-lev, kind="stable")
        bounds = np.concatenate([[0], np.flatnonzero(np.diff(lev[order])) + 1, [len(pairs)]])
        keeps = score[self.plans.bust] == score  # a zero turn keeps the mover's score: the level's link
        self.levels = []
        for L in range(len(bounds) - 1):
            k = pairs[order[bounds[L] : bounds[L + 1]]]
            i, j = k % n, k // n
            size = len(k)
            # a bust hands the turn over: to the pair (j moves, bust[i]) of the other half, in the
            # level when it keeps i's score
            link = np.where(keeps[i], np.searchsorted(k, self.plans.bust[i] * n + j), -1)
            succ = np.concatenate([np.where(link >= 0, size + link, -1), link])
            opp = np.concatenate([j, j]).astype(np.int32)
            self.levels.append((np.concatenate([k, n * n + k]), opp, succ, opt_pat[k]))
        # equal turns: a card's first-seat win is worth 1 - L(opponent, F) to it
        self.won_card = None if self.plans.win_L is None else 1.0 - self.plans.win_L
        self._last_turns: dict = {}  # L_card per the card's worths (its marks play no part in a last turn)
        self._columns: LastTurnColumns | None = None
        self.setup_seconds = time.perf_counter() - t0
        self._start: np.ndarray | None = None

    def card_patterns(self, card: Card) -> tuple[tuple, np.ndarray]:
        """The card's turns as patterns (a store of :meth:`~thousand.kernel.Backend.pattern_sweep`,
        numbered after the optimum's), one per mover and card row it meets, and each pair's
        pattern (``pat[k]``, pair k = opponent * n + mover)."""
        n, plans = self.n, self.plans
        key = self.gap if card.by == "gap" else np.broadcast_to(self.model.score[:, None], self.gap.shape)
        bands = np.searchsorted(np.asarray(card.edges), key, side="right")  # (n, n): the card's row per pair
        if card.endgame:  # the endgame row, by the opponent's score (column)
            bands[:, self.rs.goal - self.model.score <= card.endgame] = card.rows - 1
        first, turns, movers = [], [], []
        for i in range(n):
            a, b = plans.ptr[i], plans.ptr[i + 1]
            s_ok, f_ok, nxt = plans.stop_ok[a:b], plans.forced_ok[a:b], plans.next[a:b]
            used = np.unique(bands[i, self.lo[i] : self.hi[i]])
            first.append((len(turns), used))
            shun = samosval_banks(self.rs, int(self.model.score[i]), b - a)
            turns += [(s_ok, f_ok, (nxt == -1).astype(np.uint8), int(k), shun) for k in used]
            movers += [i] * len(used)
        sp, fp, bp, wp = card_turn_ends(self.table, *_columns(card, turns))
        ends = sp + fp
        base = len(self.opt_patterns[3])
        pat = np.zeros(n * n, dtype=np.int32)
        ptr, rows, prob, cst = [0], [], [], np.array(wp, dtype=np.float64)
        for c, i in enumerate(movers):
            a, b = plans.ptr[i], plans.ptr[i + 1]
            nxt, mass = plans.next[a:b], ends[: b - a, c]
            last = _first_seat_wins(plans, a, b)  # read per opponent (won); other wins are final
            cst[c] += mass[(nxt == -1) & ~last].sum()
            ts = np.flatnonzero(((nxt >= 0) | last) & (mass > 0))
            rows.append(a + ts)
            prob.append(mass[ts])
            ptr.append(ptr[-1] + len(ts))
        for i, (c0, used) in enumerate(first):
            lo, hi = self.lo[i], self.hi[i]
            pat[lo * n + i : hi * n + i : n] = base + c0 + np.searchsorted(used, bands[i, lo:hi])
        store = (
            np.asarray(ptr, dtype=np.int64),
            np.concatenate(rows).astype(np.int32),
            np.concatenate(prob),
            np.asarray(bp, dtype=np.float64),
            cst,
            np.asarray(movers, dtype=np.int32),
            n * n,  # the card's rows read the optimum's half
            self.won_card,
        )
        return store, pat

    def last_turns(self, card: Card) -> np.ndarray | None:
        """Equal turns: what the optimum's first-seat win at each final total leaves the card,
        ``(n, targets)``: ``L_card`` (:func:`card_last_turns`) on the second seat's rows (the
        card's), 0 on the first seat's (never read). None without equal turns."""
        if not self.model.equal_turns:
            return None
        key = tuple(card.worths())
        if key not in self._last_turns:
            m = self.model.players
            if self._columns is None:  # laid out on the first card: they do not depend on it
                self._columns = last_turn_columns(self.rs, self.moves, self.model.space.states, self.model.targets)
            out = np.zeros((self.n, len(self.model.targets)))
            out[m:] = card_last_turns(card, self._columns)
            self._last_turns = {key: out}  # one kept (n x final totals); a worth's change asks again
        return self._last_turns[key]

    def measure(self, card: Card, tol: float = 1e-14, max_sweeps: int = 100_000) -> CardReport:
        """The card's exact cost against the optimum (:class:`CardReport`)."""
        from thousand.solvers.duel import _Anderson

        t0 = time.perf_counter()
        store, pat = self.card_patterns(card)
        n2 = self.n * self.n
        levels = [(rows, np.concatenate([pat[rows[: len(o)]], o]), opp, succ) for rows, opp, succ, o in self.levels]
        optimum = (*self.opt_patterns, self.last_turns(card))
        sweeper = self.table.backend.pattern_sweep(self.plans, [optimum, store], levels, 2 * n2)
        x = self._start.copy() if self._start is not None else np.full(2 * n2, 0.5)
        before = np.empty_like(x)
        accel = _Anderson(depth=CARD_ANDERSON, bounded=False)
        change, sweeps = np.inf, 0
        while sweeps < max_sweeps:
            sweeps += 1
            np.copyto(before, x)
            change = sweeper.sweep(x, 0)
            if change <= tol:
                break
            # the sweep is an affine map: mixing its last iterates converges like a Krylov
            # method (the stopping test above is the plain sweep's change all the same)
            accel.step(before, x)
        if change > tol:
            raise ThousandError(f"{self.rs.name}: the card's duel did not settle ({change:.1e} after {sweeps} sweeps)")
        self._start = x  # the next card's values start here (a search moves one mark at a time)
        return CardReport(
            card,
            first=float(x[self.k0]),
            second=float(x[n2 + self.k0]),
            p_star=self.p_star,
            sweeps=sweeps,
            residual=change,
            seconds=time.perf_counter() - t0,
        )


def _first_seat_wins(plans: kernel.DuelPlans, a: int, b: int) -> np.ndarray:
    """Of plan rows a..b-1, the wins that leave the other player a last turn (equal turns,
    ``win_col >= 0``): their worth depends on the opponent."""
    if plans.win_col is None:
        return np.zeros(b - a, dtype=bool)
    return (plans.next[a:b] == -1) & (plans.win_col[a:b] >= 0)


def _optimum_patterns(
    table: kernel.RollTable, plans: kernel.DuelPlans, Q: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[tuple, np.ndarray]:
    """The optimal player's turns as patterns: per mover i, its greedy turn against every
    opponent ``lo[i]..hi[i]-1`` (``Q[y, x] = P[x, y]``, the duel solver's turn DP, its ends
    as :func:`thousand.kernel.duel_level` values them, :func:`thousand.kernel.turn_ends`)
    and how it ends; equal distributions kept once. Returns the store (read by the card's
    half, from x's start; without its ``won``, which is the card's) and each pair's pattern
    (pair k = opponent * n + mover)."""
    n = Q.shape[0]
    pat = np.zeros(n * n, dtype=np.int32)
    ptr, rows, prob, bust, movers = [np.zeros(1, np.int64)], [], [], [], []
    at = 0  # patterns so far
    for i in range(n):
        a, b = plans.ptr[i], plans.ptr[i + 1]
        stop_ok, forced_ok, nxt, _opp, ends, bust_v = _mover_ends(plans, Q, i, lo[i], hi[i])
        _, mass, bust_p, _ = kernel.turn_ends(table, stop_ok, ends, forced_ok, ends, bust_v, 1.0)
        # a final win of the optimum: the card's chance is 0 there; a first-seat one leaves it a last turn
        mass[(nxt < 0) & ~_first_seat_wins(plans, a, b)] = 0.0
        uniq, inv = np.unique(np.vstack([mass, bust_p]), axis=1, return_inverse=True)
        pat[np.arange(lo[i], hi[i]) * n + i] = at + inv.ravel()
        at += uniq.shape[1]
        t, u = np.nonzero(uniq[:-1].T)  # per pattern, its ends in order of total
        rows.append((a + u).astype(np.int32))
        prob.append(uniq[:-1].T[t, u])
        ptr.append(ptr[-1][-1] + np.cumsum(np.bincount(t, minlength=uniq.shape[1])))
        bust.append(uniq[-1])
        movers.append(np.full(uniq.shape[1], i, dtype=np.int32))
    store = (
        np.concatenate(ptr),
        np.concatenate(rows),
        np.concatenate(prob),
        np.concatenate(bust),
        np.zeros(at),  # the optimum's turn itself never wins the game for the card
        np.concatenate(movers),
        0,
    )
    return store, pat


@dataclass
class CardReport:
    """A card's exact cost: its win probability against the optimum in each seat
    (``first``: the card moves first), the duel's value ``p_star``, and one turn's
    expected points from the start, card and optimum."""

    card: Card
    first: float | None  # None: no duel to measure against (``unmeasured`` says why)
    second: float | None
    p_star: float | None
    turn_points: float | None = None  # filled by :meth:`with_turn`
    turn_optimum: float | None = None
    sweeps: int = 0  # sweeps of the level-ordered Gauss-Seidel solve
    residual: float = 0.0  # the last sweep's largest change
    seconds: float = 0.0
    steps: list = field(default_factory=list)  # the search's trail: (cells, least loss found with at most that many)
    unmeasured: str | None = None  # why the win chance is not measured (no duel here)

    @property
    def loss(self) -> float | None:
        """Win probability given up against an optimal opponent, both seats averaged."""
        return None if self.first is None else 0.5 - 0.5 * (self.first + self.second)

    def with_turn(self) -> CardReport:
        """This report with one turn's expected points, card and optimum."""
        from thousand.solvers.turn import expected_turn_points

        opt = expected_turn_points(self.card.rs)
        return replace(self, turn_points=card_turn_points(self.card, T=opt.T), turn_optimum=opt.value)

    @property
    def turn_loss(self) -> float | None:
        return None if self.turn_points is None else self.turn_optimum - self.turn_points

    def lines(self) -> list[str]:
        if self.first is None:
            out = [_("Win chance against an optimal opponent: not measured ({why}).").format(why=self.unmeasured)]
        else:
            out = [
                _(
                    "Measured exactly against an optimal opponent: wins {w:.4%} of games (first {f:.4%}, "
                    "second {s:.4%}), {loss:.4%} less than the optimum's 50%."
                ).format(w=0.5 * (self.first + self.second), f=self.first, s=self.second, loss=self.loss)
            ]
        if self.turn_points is not None:
            out.append(
                _("One turn from the start: {c:.2f} points on average, the optimum {o:.2f} ({d:.2f} less).").format(
                    c=self.turn_points, o=self.turn_optimum, d=self.turn_loss
                )
            )
        if self.steps:
            out.append(
                _("Least loss found by size (numbers on the card): ")
                + ", ".join(f"{c}: {v:.4%}" for c, v in self.steps)
            )
        return out

    @classmethod
    def from_json(cls, rs: Ruleset, d: dict) -> CardReport:
        """A report of :meth:`to_json` (the figures as measured, not measured again)."""
        return cls(
            Card.from_json(rs, d["card"]),
            d["win_first"],
            d["win_second"],
            d["p_star"],
            d.get("turn_points"),
            d.get("turn_optimum"),
            d.get("sweeps", d.get("rounds", 0)),  # "rounds": the name before 2026-12-05
            d.get("residual", 0.0),
            d.get("seconds", 0.0),
            [(s["cells"], s["loss"]) for s in d.get("steps", [])],
            d.get("unmeasured"),
        )

    def to_json(self) -> dict:
        return {
            "card": self.card.to_json(),
            "loss": self.loss,
            "win_first": self.first,
            "win_second": self.second,
            "p_star": self.p_star,
            "turn_points": self.turn_points,
            "turn_optimum": self.turn_optimum,
            "turn_loss": self.turn_loss,
            "sweeps": self.sweeps,
            "residual": self.residual,
            "seconds": round(self.seconds, 3),
            "steps": [{"cells": c, "loss": v} for c, v in self.steps],
            "unmeasured": self.unmeasured,
        }


def turn_only(rs: Ruleset, why: str, cells: int | None = None) -> CardReport:
    """The turn's optimum as a card (:func:`turn_card`), measured by one turn's points
    alone: the card where the duel it would be measured against is out of reach (``why``,
    :class:`DuelOutOfReach`). Without the duel there is nothing to search by, so this is
    the only card; ``cells``: refused if it has more numbers."""
    card = turn_card(rs)
    if cells is not None and card.cells > cells:
        raise ThousandError(
            f"{rs.name}: without the duel the only card is the turn's, of {card.cells} numbers, more than {cells}"
        )
    return CardReport(card, None, None, None, unmeasured=why).with_turn()


# --------------------------------------------------------------------------- the search


# the most pairs whose card duel is held in memory, and the bytes a pair takes at the peak
# (the duel table, the patterns, the levels, the Anderson history: classic-open's 12,960,000
# pairs took 11.4 GB, classic's 2,595,321 1.9 GB)
CARD_MAX_PAIRS = 20_000_000
CARD_PAIR_BYTES = 880

# the sweeps' Anderson depth: 2 x depth copies of the values held besides them
CARD_ANDERSON = 10

# the search compares cards at this precision (their losses differ by far more); the card
# it returns is measured again to the default 1e-14
SEARCH_TOL = 1e-10


# card shapes: (dice groups, rows, an endgame row or not, what the rows split: "gap" or "score")
Shape = tuple[int, int, int, str]


def shapes(rs: Ruleset) -> list[Shape]:
    """The card shapes offered, smallest first: one column; columns for 2, 3 groups of dice
    counts and for every count; each with one, two and three rows by the score gap, two
    and three by your own score, and with an endgame row or without."""
    n = rs.dice
    out = {(min(g, n), b, e, "gap") for g in (1, 2, 3, n) for b in (1, 2, 3) for e in (0, 1)}
    out |= {(min(g, n), b, e, "score") for g in (1, 2, 3, n) for b in (2, 3) for e in (0, 1)}
    return sorted(out, key=lambda s: (_size(rs, *s[:3]), s[1], s[2], s[3]))


def shape(spec: tuple) -> Shape:
    """A shape from ``(columns, rows, endgame)`` (rows by the gap) or with its fourth part."""
    g, b, e, *by = spec
    return (int(g), int(b), int(e), by[0] if by else "gap")


def parse_shape(rs: Ruleset, text: str) -> Shape:
    """A card shape written ``COLUMNS,ROWS,ENDGAME[,gap|score]`` (``6,1,0``: a column per
    dice count of six-dice; ``1,3,1,score``: one column, three rows by your own score and an
    endgame row), checked against ``rs``; a one-line :class:`ThousandError` otherwise."""
    parts = [p.strip() for p in text.split(",")]
    why = None
    if len(parts) not in (3, 4) or not all(p.isdigit() for p in parts[:3]):
        why = _("write COLUMNS,ROWS,ENDGAME with an optional ,gap or ,score (e.g. 6,1,0)")
    elif len(parts) == 4 and parts[3] not in ("gap", "score"):
        why = _("the fourth part is gap or score, not {0}").format(parts[3])
    else:
        g, b, e, by = shape(parts)
        if not 1 <= g <= rs.dice:
            why = _("a card has 1 to {0} columns (a column per dice count at most)").format(rs.dice)
        elif not (1 if by == "gap" else 2) <= b <= 3:
            why = _("rows by the gap go from 1 to 3, rows by your own score from 2 to 3")
        elif e not in (0, 1):
            why = _("the endgame row is 0 or 1")
        else:
            return g, b, e, by
    raise ThousandError(_("card shape {0}: {1}").format(text, why))


def _size(rs: Ruleset, groups: int, bands: int, endgame: int = 0) -> int:
    return (bands + endgame + (rs.keep == "any")) * groups


def _group_splits(n: int, k: int) -> list[tuple[int, ...]]:
    return [(1, *c) for c in combinations(range(2, n + 1), k - 1)]


def find_card(
    rs: Ruleset,
    cells: int = 12,
    duel: CardDuel | None = None,
    progress: Callable[[str], None] | None = None,
    tables_dir: str | None = None,
    only: list[tuple] | None = None,
) -> CardReport:
    """The card with at most ``cells`` numbers and the least exact loss found.

    ``only``: search these shapes (columns, rows, endgame row 0/1, and ``"score"`` for rows
    by your own score) alone, in order of size, instead of every shape of :func:`shapes`.

    Each shape of :func:`shapes` that fits, smallest first (rows and endgame rows only
    on the best column layout of their column count) starts twice: from the best card so
    far and from the turn's optimum (:func:`turn_card`), each laid onto its columns and
    rows (for one column, also a scan of its mark; rows by your own score start at every
    choice of edges among the scores where the rules change, :func:`_score_edges`), and each
    start is improved by pattern search: every mark, worth, row edge and the endgame
    distance moved by 8, 4, 2, 1 steps of the ruleset's unit while that lowers the exact
    loss (:meth:`CardDuel.measure`); the better result is kept. (Improving only the better
    start is half the work but stops in worse local optima: on Pig to 30 it kept 7.18% at
    two numbers, where the turn's start reaches a card that plays as the optimum.) Every
    start from the best card so far reproduces a smaller card's play where it can, so the
    loss does not rise with the size. A card found is counted at the size it really has
    (:meth:`Card.reduced`: a card of three rows whose two rows are equal is a card of two),
    and the result is reduced too. ``steps`` of the result lists, per size, the least loss
    found with at most that many numbers (the least found: the search is local, not
    exhaustive)."""
    duel = duel or CardDuel(rs, tables_dir=tables_dir)
    say = progress or (lambda s: None)
    u = rs.unit
    cache: dict = {}

    def loss(card: Card) -> float:
        key = (card.groups, card.edges, card.marks, card.worth, card.endgame, card.by)
        r = cache.get(key)
        if r is None:
            r = cache[key] = duel.measure(card, tol=SEARCH_TOL)
        return r.loss

    seed = turn_card(rs)
    t0 = time.perf_counter()
    loss(seed)
    once = time.perf_counter() - t0
    best: Card | None = None
    best_of: dict[int, Card] = {}  # the best card of each column count
    found: dict[int, float] = {}  # the least loss of a card found, by the size it really has
    searched: set[int] = set()
    offered = [shape(s) for s in only] if only else shapes(rs)
    fits = [s for s in sorted(offered, key=lambda s: _size(rs, *s[:3])) if _size(rs, *s[:3]) <= cells]
    if not fits:
        raise ThousandError(f"{rs.name}: the smallest card has {_size(rs, 1, 1)} numbers, more than {cells}")
    # what the wait will be: each shape is tens to hundreds of exact measurements
    say(
        f"searching {len(fits)} card shape(s) of up to {cells} numbers; one exact measurement takes "
        f"{once:.2g} s here, and a shape needs tens to hundreds of them"
    )
    for g, b, e, by in fits:
        size = _size(rs, g, b, e)
        # rows are tried on the best column layout of each column count (more rows on worse
        # columns only cost evaluations); with no card of that count yet (``only``), on every layout
        splits = [best_of[g].groups] if (b > 1 or e) and g in best_of else _group_splits(rs.dice, g)
        starts = []  # the best start laid from each source, each improved
        for src in (best, seed) if best is not None else (seed,):
            cands = []
            for edges in [_edges(rs, b)] if by == "gap" else _score_edges(rs, b):
                for groups in splits:
                    cands += _laid(src, groups, edges, b, e, by)
            if g == 1 and b == 1 and not e:  # one mark: a scan in coarse steps too
                top = max(rs.goal // 2, 20 * u)
                step = max(u, (top // 16) // u * u)
                cands += [replace(c, marks=((m,),)) for c in cands[:] for m in range(step, top + 1, step)]
            starts.append(min(cands, key=loss))
        card = min((_improve(c, loss, u) for c in starts), key=loss)
        if g not in best_of or loss(card) < loss(best_of[g]):
            best_of[g] = card
        if best is None or loss(card) < loss(best) - 1e-9:
            best = card
        real = card.reduced().cells
        found[real] = min(found.get(real, 1.0), loss(card))
        searched.add(size)
        rows = f"{b} row(s){' by your score' if by == 'score' else ''}{', an endgame row' if e else ''}"
        really = "" if real == size else f", really {real} numbers"
        took = time.perf_counter() - t0
        say(f"{size} numbers ({g} column(s), {rows}{really}): loss {loss(card):.4%} ({took:.0f} s so far)")
    return replace(duel.measure(best.reduced()), steps=least_by_size(found, searched)).with_turn()


def least_by_size(found: dict[int, float], sizes=()) -> list[tuple[int, float]]:
    """The size table of a search: for each size (those of ``found``, the least loss of a card
    of that real size, and ``sizes`` besides) the least loss found with at most that many
    numbers; sizes below the smallest card found are left out."""
    return [(n, min(v for m, v in found.items() if m <= n)) for n in sorted({*found, *sizes}) if min(found) <= n]


def turn_card(rs: Ruleset) -> Card:
    """The turn's optimum as a card (one column per dice count, one row): the marks of
    :func:`turn_marks`, and as each count's worth what rolling it on adds at the total
    (a multiple of the unit below the goal) whose card banks the most points per turn."""
    from thousand.solvers.turn import expected_turn_points

    marks = turn_marks(rs)
    groups = tuple(range(1, rs.dice + 1))
    row = (tuple(marks[d] for d in groups),)
    if rs.keep != "any":
        return Card(rs, groups, (), row)
    R = expected_turn_points(rs, full=True).tables.R[:, :, 0]
    u = rs.unit
    cards = []
    for t0 in range(0, min(R.shape[0] - 1, max(1, rs.goal // (10 * u)), 40)):
        worth = tuple(_round(max(R[t0, d] - t0 * u, 0.0), max(1, u // 5)) for d in groups)
        cards.append(Card(rs, groups, (), row, worth))
    return max(cards, key=card_turn_points)


def turn_marks(rs: Ruleset) -> dict[int, int]:
    """Per dice count to roll next, the smallest turn total (points) from which banking is
    always at least as good as rolling in the turn that maximises expected points
    (:func:`thousand.solvers.turn.expected_turn_points`): the marks of the turn's optimum,
    where the search starts. Capped at the goal."""
    from thousand.solvers.turn import expected_turn_points

    sol = expected_turn_points(rs, full=True)
    R = sol.tables.R[:, :, 0]
    t = np.arange(R.shape[0]) * float(rs.unit)
    out = {}
    for m in range(1, rs.dice + 1):
        rolls = np.flatnonzero(R[:, m] > t + 1e-9)
        out[m] = int(min((rolls[-1] + 1) * rs.unit if len(rolls) else rs.unit, rs.goal))
    return out


def _round(v: float, step: int) -> int:
    return int(round(v / step)) * step


def _laid(src: Card, groups: tuple[int, ...], edges: tuple[int, ...], b: int, e: int, by: str) -> list[Card]:
    """Cards of ``b`` rows split at ``edges`` (by ``by``) on the columns ``groups`` that play
    as ``src`` does at a point of each row (at a level score gap, or from a score of 0,
    where ``src`` splits the other way), with an endgame row (``e``) in two ways: as the
    level row on the last unit (nearly the card without it), and "roll until you win" when
    the opponent needs a tenth of the goal."""
    rs, u = src.rs, src.rs.unit

    def mark(i: int, d: int) -> int:
        v = _gap_of(edges, i)
        return src.mark(v, d, me=0) if by == "gap" else src.mark(0, d, me=v)

    marks = tuple(tuple(mark(i, d) for d in groups) for i in range(b))
    worth = tuple(int(src.worths()[d]) for d in groups) if rs.keep == "any" else ()
    if not e:
        return [Card(rs, groups, edges, marks, worth, by=by)]
    level = marks[_band_of(edges, 0)]
    far = max(u, rs.goal // 10 // u * u)
    return [
        Card(rs, groups, edges, (*marks, level), worth, u, by),
        Card(rs, groups, edges, (*marks, (rs.goal,) * len(groups)), worth, far, by),
    ]


def _edges(rs: Ruleset, bands: int) -> tuple[int, ...]:
    g = max(rs.unit, (rs.goal // 10) // rs.unit * rs.unit)
    return () if bands == 1 else ((-g,) if bands == 2 else (-g, g))


def _score_edges(rs: Ruleset, bands: int) -> list[tuple[int, ...]]:
    """Where rows by your own score may start: every choice of ``bands - 1`` of the scores
    where the rules change (a pit's floor and exit, the barrel, a samosval score, the
    opening; the goal's quarters where the rules have none of those)."""
    points = {p.low for p in rs.pits} | {p.exit for p in rs.pits} | set(rs.dump)
    if rs.barrel.kind != "none":
        points.add(rs.barrel.threshold)
    if rs.open_min:
        points.add(rs.open_min)
    points = {v for v in points if 0 < v < rs.goal} or {rs.goal * k // 4 // rs.unit * rs.unit for k in (1, 2, 3)}
    return [c for c in combinations(sorted(points), bands - 1)]


def _band_of(edges: tuple[int, ...], gap: int) -> int:
    return bisect.bisect_right(edges, gap)


def _gap_of(edges: tuple[int, ...], band: int) -> int:
    """A score gap inside ``band``."""
    if not edges:
        return 0
    return edges[band - 1] if band > 0 else edges[0] - 1


def _improve(card: Card, loss, u: int) -> Card:
    """Pattern search on the marks, the worths and the edges (see :func:`find_card`)."""
    best, cur = card, loss(card)
    for step in (8, 4, 2, 1):
        moved = True
        while moved:
            moved = False
            for cand in _neighbours(best, step * u):
                v = loss(cand)
                if v < cur - 1e-12:  # first improvement: move there and look around it
                    best, cur, moved = cand, v, True
                    break
    return best


def _neighbours(card: Card, d: int):
    rs = card.rs
    for i in range(len(card.marks)):
        for j in range(len(card.groups)):
            for s in (d, -d):
                m = card.marks[i][j] + s
                if m < rs.unit:
                    continue
                marks = [list(row) for row in card.marks]
                marks[i][j] = m
                marks = tuple(map(tuple, marks))
                yield replace(card, marks=marks)
    for j in range(len(card.worth)):
        for s in (d, -d):
            if card.worth[j] + s >= 0:
                w = list(card.worth)
                w[j] += s
                yield replace(card, worth=tuple(w))
    if card.endgame:
        for s in (d, -d):
            if card.endgame + s >= rs.unit:
                yield replace(card, endgame=card.endgame + s)
    for k in range(len(card.edges)):
        for s in (d, -d):
            e = list(card.edges)
            e[k] += s
            if e == sorted(set(e)):
                yield replace(card, edges=tuple(e))


# --------------------------------------------------------------------------- the card as a bot


class CardBot(Bot):
    """The card played through :class:`thousand.engine.TurnRules` (the engine's legal
    actions, its own arithmetic): the independent twin of :func:`card_turn_ends` that
    the tests hold it to, and a bot for ``thousand evaluate``."""

    def __init__(self, card: Card):
        super().__init__()
        self.card = card
        self.name = f"card:{card.cells}"
        self.engine = TurnRules(card.rs)

    def decide(self, state: BotState) -> object:
        card, rs, eng = self.card, self.card.rs, self.engine
        u = rs.unit
        x = state.me
        top = max((o.score for o in state.opponents), default=None)
        gap = x.score - (x.score if top is None else top)
        s = TurnState(x, state.turn_total, len(state.roll), state.roll)
        sat = eng.moves.saturation(x)
        worth = card.worths()
        last_turn = state.to_beat is not None

        def key(v, t, m):
            return ((v / u) * 4096.0 + t / u) * 8.0 + m

        def rank(a):
            nxt = eng.keep(s, a.keep)
            if isinstance(nxt, TurnEnd):
                if nxt.kind != "stop":
                    return _FORCED * _TIER + nxt.total / u, False
                won = eng.moves.wins(x, nxt.total) or nxt.total > sat
                if last_turn:
                    won = eng.moves.wins(x, nxt.total) and last_turn_takes(rs, x.score + nxt.total, state.to_beat)
                return (_WIN if won else _PLAY) * _TIER + key(nxt.total, nxt.total, rs.dice), False
            t, m = nxt.total, nxt.dice
            if eng.compulsory(nxt):
                return _PLAY * _TIER + key(t + worth[m], t, m), True
            if eng.can_stop(nxt):
                if last_turn:  # rule 3: only a bank that takes the win against the finished total
                    if eng.moves.wins(x, t) and last_turn_takes(rs, x.score + t, state.to_beat):
                        return _WIN * _TIER + key(t, t, m), False
                    return _PLAY * _TIER + key(t + worth[m], t, m), True
                if eng.moves.wins(x, t) or t > sat:
                    return _WIN * _TIER + key(t, t, m), False
                samosval = not rs.dump_mid_turn and x.score + t in rs.dump  # a bank that sends the score to 0
                if t >= card.mark(gap, m, top, me=x.score) and not samosval:
                    return _PLAY * _TIER + key(t, t, m), False
            return _PLAY * _TIER + key(t + worth[m], t, m), True

        best, roll = None, True
        seen = set()
        for a in state.legal:
            if a.keep in seen:
                continue
            seen.add(a.keep)
            r, want_roll = rank(a)
            if best is None or r > best[0]:
                best, roll = (r, a.keep), want_roll
        keep = best[1]
        cands = [a for a in state.legal if a.keep == keep]
        return next((a for a in cands if a.roll == roll), cands[0])
