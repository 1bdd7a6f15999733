"""Objective ``race``: one player alone minimises the expected number of turns to win.

With ``J(x)`` = minus the expected number of turns still needed from state
``x`` (``J(win) = 0``), the stochastic-shortest-path fixed point is

    J(x) = -1 + TurnDP_x( stop[t] = J(bank(x, t)),  forced[t] = J(end(x, t)),
                          Z = J(zero(x)),  W = 0 )

where ``TurnDP_x`` is :func:`solver.kernel.turn_dp` (the optimal decisions
inside the turn). It is solved by Gauss-Seidel sweeps in order of descending
score; a state whose zero turn leads back to itself is solved exactly for
its own value by Newton's method on ``j = -1 + f(j)`` (``f`` is convex and
piecewise linear in the bust value, with slope = P(bust) < 1). Sweeps stop
when no value moves by more than ``tol``; the reported residual is the
largest Bellman residual of one more full (Jacobi) pass.

Interaction rules (overtaking, push-off, equal turns) need an opponent and do
not apply to a lone player.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import kernel
from .rules import Ruleset
from .states import StateSpace, build_state_space


@dataclass
class RaceSolution:
    space: StateSpace
    turns: np.ndarray        # expected turns to win from each state
    iterations: int
    residual: float
    seconds: float

    def expected_turns(self, i: int) -> float:
        return float(self.turns[i])


def _turn_value(table, space: StateSpace, i: int, J: np.ndarray, bust: float, grad: bool,
                pure: bool | None):
    """TurnDP_i with next-state values taken from ``J`` (``J[-1]`` is the win, 0)."""
    return kernel.turn_dp(table, space.stop_ok[i], J[space.stop_idx[i]][:, None],
                          space.forced_ok[i], J[space.forced_idx[i]][:, None],
                          np.array([bust]), np.zeros(1), grad=grad, pure=pure)


def bellman(table, space: StateSpace, i: int, J: np.ndarray, pure: bool | None = None) -> float:
    """The right-hand side of the race equation for state ``i``."""
    return -1.0 + float(_turn_value(table, space, i, J, J[space.bust_idx[i]], False, pure).start[0])


def solve_race(rs: Ruleset, tol: float = 1e-13, max_sweeps: int = 100000,
               pure: bool | None = None, space: StateSpace | None = None,
               progress: Callable[[int, float], None] | None = None) -> RaceSolution:
    """Solve the race fixed point for every state of ``rs``."""
    t0 = time.perf_counter()
    space = space or build_state_space(rs)
    table = kernel.roll_table(rs, pure)
    n = len(space)
    J = np.zeros(n + 1)  # J[n] = J[-1] stands for the win
    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        delta = 0.0
        for i in range(n):
            if space.bust_idx[i] == i:
                j = J[i]
                for _ in range(60):
                    r = _turn_value(table, space, i, J, j, True, pure)
                    g, slope = -1.0 + float(r.start[0]), float(r.dstart[0])
                    j_new = (g - slope * j) / (1.0 - slope) if slope < 1.0 else g
                    if abs(j_new - j) <= 1e-15 * max(1.0, abs(j)):
                        j = j_new
                        break
                    j = j_new
                new = j
            else:
                new = bellman(table, space, i, J, pure)
            delta = max(delta, abs(new - J[i]))
            J[i] = new
        if progress:
            progress(sweeps, delta)
        if delta <= tol:
            break
    residual = max((abs(bellman(table, space, i, J, pure) - J[i]) for i in range(n)), default=0.0)
    return RaceSolution(space, -J[:n].copy(), sweeps, residual, time.perf_counter() - t0)
