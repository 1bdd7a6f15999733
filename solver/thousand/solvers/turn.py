"""The objective ``turn``: the most points one turn banks on average.

It maximises the expected number of points banked in one turn, ``E[t at the bank]``,
with banking allowed where the state's obligations (opening, pit, barrel) allow it; a
bust, a mid-turn dump and an overshoot bank nothing, an instant win counts as the points
still missing to the goal.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from thousand import kernel
from thousand.engine.player import Moves, PlayerState
from thousand.rules.ruleset import Ruleset

__all__ = ["TurnSolution", "expected_turn_points"]


class TurnSolution(NamedTuple):
    """The objective ``turn`` for one player state: the value, the DP tables of the
    horizon used (``T`` units), the doublings of T it took and the change at the last."""

    value: float
    tables: kernel.TurnValues
    T: int
    doublings: int
    change: float


def expected_turn_points(
    rs: Ruleset,
    x: PlayerState | None = None,
    T: int | None = None,
    full: bool = False,
    table: kernel.RollTable | None = None,
) -> TurnSolution:
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
        ok = np.array([moves.can_bank(x, int(k) * u) and not moves.mid_turn(x, int(k) * u) for k in t], np.uint8)
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
