"""One turn from a game state: how it can end, and the objective ``turn``.

:class:`TurnEnds` lists, for a player state ``x`` and every turn total ``t``
(in units), where banking leads, where a mid-turn event ends the turn, and
where a bust leads. Game-level solvers turn these next states into values and
hand them to :func:`thousand.kernel.turn_dp`; the turn DP itself never changes.

The objective ``turn`` maximises the expected number of points banked in one
turn, ``E[t at the bank]``, with banking allowed where the state's obligations
(opening, pit, barrel) allow it; a bust, a mid-turn dump and an overshoot bank
nothing, an instant win counts as the points still missing to the goal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import kernel
from .game import Moves, PlayerState
from .rules import Ruleset


@dataclass
class TurnEnds:
    """Where a turn from ``x`` can end, per total ``t`` = 0..T units (T+1: beyond)."""

    x: PlayerState
    T: int
    stop_ok: np.ndarray          # uint8 (T+1,)
    stop_next: list              # PlayerState | WIN | None per t
    forced_ok: np.ndarray        # uint8 (T+1,)
    forced_next: list            # PlayerState | WIN | None per t
    forced_event: list           # "dump" / "overshoot" / None per t
    bust_next: PlayerState

    @classmethod
    def of(cls, moves: Moves, x: PlayerState, T: int | None = None) -> "TurnEnds":
        u = moves.rs.unit
        if T is None:
            T = moves.saturation(x) // u
        stop_ok = np.zeros(T + 1, np.uint8)
        forced_ok = np.zeros(T + 1, np.uint8)
        stop_next: list = [None] * (T + 1)
        forced_next: list = [None] * (T + 1)
        events: list = [None] * (T + 1)
        for t in range(1, T + 1):
            pts = t * u
            ev = moves.mid_turn(x, pts)
            if ev:
                forced_ok[t] = 1
                events[t] = ev
                forced_next[t] = moves.mid_turn_end(x, pts, ev)
            elif moves.can_bank(x, pts):
                stop_ok[t] = 1
                stop_next[t] = moves.bank(x, pts)
        return cls(x, T, stop_ok, stop_next, forced_ok, forced_next, events, moves.zero(x))

    def others_after(self, moves: Moves, t: int) -> tuple[int, int, bool]:
        """What the end at total ``t`` does to every other player, as the arguments
        ``(before, after, climbed)`` of :meth:`thousand.game.Moves.affect_opponent`: the
        mover's score before and the score it reached (an overshoot reaches nothing), and
        whether it climbed onto the barrel."""
        x = self.x
        y = self.stop_next[t] if self.stop_ok[t] else self.forced_next[t]
        if y is None or self.forced_event[t] == "overshoot":
            return x.score, x.score, False
        return x.score, moves.raised_to(x, t * moves.rs.unit), moves.climbed(x, y)


class TurnSolution(NamedTuple):
    """The objective ``turn`` for one player state: the value, the DP tables of the
    horizon used (``T`` units), the doublings of T it took and the change at the last."""

    value: float
    tables: kernel.TurnValues
    T: int
    doublings: int
    change: float


def expected_turn_points(rs: Ruleset, x: PlayerState | None = None, T: int | None = None,
                         full: bool = False, table: kernel.RollTable | None = None) -> TurnSolution:
    """The objective ``turn``: the max expected points banked in one turn from ``x``.

    Totals are unbounded, so the DP is cut at ``T`` units (above it, banking
    is worth ``T``); without ``T`` given, T doubles until the value moves by
    less than 1e-13 of itself.
    """
    moves = Moves(rs)
    x = x or moves.initial()
    table = table or kernel.roll_table(rs)
    u = rs.unit

    def solve(T: int):
        t = np.arange(T + 1)
        ok = np.array([moves.can_bank(x, int(k) * u) and not moves.mid_turn(x, int(k) * u)
                       for k in t], np.uint8)
        forced = np.array([moves.mid_turn(x, int(k) * u) is not None for k in t], np.uint8)
        stop = (t * float(u))[:, None]
        win = np.array([float(max(rs.goal - x.score, 0))])
        res = kernel.turn_dp(table, ok, stop, forced, np.zeros((T + 1, 1)), np.zeros(1), win, full=full)
        return float(res.start[0]), res

    if T is not None:
        v, res = solve(T)
        return TurnSolution(v, res, T, 0, 0.0)
    T = max(64, 4 * (rs.goal // u))
    v, res = solve(T)
    doublings = 0
    while True:
        T2 = 2 * T
        v2, res2 = solve(T2)
        doublings += 1
        change = abs(v2 - v)
        if change <= 1e-13 * max(1.0, abs(v2)) or T2 > 1 << 22:
            return TurnSolution(v2, res2, T2, doublings, change)
        v, res, T = v2, res2, T2
