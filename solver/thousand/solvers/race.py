"""Objective ``race``: one player alone minimises the expected number of turns to win.

With ``J(x)`` = minus the expected number of turns still needed from state
``x`` (``J(win) = 0``), the stochastic-shortest-path fixed point is

    J(x) = -1 + TurnDP_x( stop[t] = J(bank(x, t)),  forced[t] = J(end(x, t)),
                          Z = J(zero(x)),  W = 0 )

where ``TurnDP_x`` is :func:`thousand.kernel.turn_dp` (the optimal decisions
inside the turn). Gauss-Seidel sweeps in order of descending score come
first (a state whose zero turn leads back to itself is solved exactly for
its own value by Newton's method on ``j = -1 + f(j)``: ``f`` is convex and
piecewise linear in the bust value, with slope = P(bust) < 1), then policy
iteration with exact policy evaluation (a sparse linear solve) finishes the
job in a few rounds. The reported residual is the largest Bellman residual
of one more full (Jacobi) pass.

Interaction rules (overtaking, push-off, equal turns) need an opponent and do
not apply to a lone player.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as spla

from thousand import kernel
from thousand.engine.states import StateSpace, build_state_space
from thousand.rules.ruleset import Ruleset

__all__ = ["RaceSolution", "bellman", "policy_matrix", "solve_race"]


@dataclass
class RaceSolution:
    space: StateSpace
    turns: np.ndarray  # expected turns to win from each state
    iterations: int
    residual: float
    seconds: float

    def expected_turns(self, i: int) -> float:
        return float(self.turns[i])


def _turn_value(table, space: StateSpace, i: int, J: np.ndarray, bust: float, grad: bool):
    """TurnDP_i with next-state values taken from ``J`` (``J[-1]`` is the win, 0)."""
    return kernel.turn_dp(
        table,
        space.stop_ok[i],
        J[space.stop_idx[i]][:, None],
        space.forced_ok[i],
        J[space.forced_idx[i]][:, None],
        np.array([bust]),
        np.zeros(1),
        grad=grad,
    )


def bellman(table, space: StateSpace, i: int, J: np.ndarray) -> float:
    """The right-hand side of the race equation for state ``i``."""
    return -1.0 + float(_turn_value(table, space, i, J, J[space.bust_idx[i]], False).start[0])


def _sweep(table, space: StateSpace, J: np.ndarray) -> float:
    """One Gauss-Seidel sweep in place; returns the largest change."""
    delta = 0.0
    for i in range(len(space)):
        if space.bust_idx[i] == i:
            # j = -1 + f(j): Newton's method on the convex piecewise-linear f
            j = J[i]
            for _ in range(60):
                r = _turn_value(table, space, i, J, j, True)
                g, slope = -1.0 + float(r.start[0]), float(r.dstart[0])
                j_new = (g - slope * j) / (1.0 - slope) if slope < 1.0 else g
                done = abs(j_new - j) <= 1e-15 * max(1.0, abs(j))
                j = j_new
                if done:
                    break
            new = j
        else:
            new = bellman(table, space, i, J)
        delta = max(delta, abs(new - J[i]))
        J[i] = new
    return delta


def policy_matrix(table, space: StateSpace, J: np.ndarray):
    """The transition matrix between states of the turn policies greedy for ``J``
    (wins leave the matrix): row i holds P(turn from i ends in state j)."""
    n = len(space)
    rows, cols, vals = [], [], []
    for i in range(n):
        stop_v = J[space.stop_idx[i]][:, None]
        forced_v = J[space.forced_idx[i]][:, None]
        tv = kernel.turn_dp(
            table,
            space.stop_ok[i],
            stop_v,
            space.forced_ok[i],
            forced_v,
            np.array([J[space.bust_idx[i]]]),
            np.zeros(1),
            full=True,
        )
        sp, fp, bp, _ = kernel.end_distribution(table, space.stop_ok[i], stop_v, space.forced_ok[i], forced_v, tv)
        for idx, p in ((space.stop_idx[i], sp[:, 0]), (space.forced_idx[i], fp[:, 0])):
            keep = (p > 0) & (idx >= 0)
            rows.append(np.full(int(keep.sum()), i))
            cols.append(idx[keep])
            vals.append(p[keep])
        rows.append(np.array([i]))
        cols.append(np.array([space.bust_idx[i]]))
        vals.append(np.array([bp[0]]))
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))


def solve_race(
    rs: Ruleset,
    tol: float = 1e-13,
    max_sweeps: int = 100000,
    table: kernel.RollTable | None = None,
    space: StateSpace | None = None,
    progress: Callable[[int, float], None] | None = None,
    warm: float = 1e-2,
) -> RaceSolution:
    """Solve the race fixed point for every state of ``rs``.

    Gauss-Seidel sweeps bring the values within ``warm``; then policy
    iteration: the turn policies greedy for the current values are evaluated
    exactly by one sparse linear solve of ``J = -1 + P J``, until the values
    stop moving (by ``tol``). Without :func:`thousand.kernel.end_distribution`
    (the fallback ``max_sweeps`` path) sweeps go on to ``tol`` instead. ``table``
    (default: the selected backend's) is the roll table the turns are solved with.
    """
    t0 = time.perf_counter()
    space = space or build_state_space(rs)
    table = table or kernel.roll_table(rs)
    n = len(space)
    J = np.zeros(n + 1)  # J[n] = J[-1] stands for the win
    steps = 0
    delta = np.inf
    while steps < min(max_sweeps, 200) and delta > warm:
        steps += 1
        delta = _sweep(table, space, J)
        if progress:
            progress(steps, delta)
    while steps < max_sweeps:
        steps += 1
        P = policy_matrix(table, space, J)
        J_new = spla.spsolve((sparse.identity(n, format="csc") - P).tocsc(), -np.ones(n))
        if not np.all(np.isfinite(J_new)) or np.any(J_new > -1.0 + 1e-9):
            # the greedy policy never wins from somewhere (too early to switch):
            # sweep on and try again
            delta = _sweep(table, space, J)
            continue
        delta = float(np.max(np.abs(J_new - J[:n])))
        J[:n] = J_new
        if progress:
            progress(steps, delta)
        if delta <= tol:
            break
    residual = max((abs(bellman(table, space, i, J) - J[i]) for i in range(n)), default=0.0)
    return RaceSolution(space, -J[:n].copy(), steps, residual, time.perf_counter() - t0)
