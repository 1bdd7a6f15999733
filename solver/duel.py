"""Objective ``duel``: the probability that the player to move wins, both playing optimally.

With ``P(x, y)`` the win probability of the mover in state ``x`` against an
opponent in state ``y``, at the start of the mover's turn,

    P(x, y) = TurnDP_x( stop[t]   = 1                   if bank(x, t) wins
                                  = 1 - P(y_t, bank(x, t))  otherwise,
                        forced[t] = the same for a mid-turn end,
                        Z = 1 - P(y, zero(x)),  W = 1 )

where ``y_t`` is the opponent after the mover's score went up (push-off,
overtaking) and ``TurnDP_x`` is :func:`solver.kernel.turn_dp`, run for one
mover and a whole vector of opponents at once.

Solving order. A pair's *level* is the sum of both scores. Banking raises
the level; a bust keeps it (the roles swap: ``(x, y) -> (y, zero(x))``); only
penalties (bolts, samosval, falls, overtaking, pit roll-back) lower it.
Levels are solved from the top down. Inside a level the bust links form a
functional graph (each pair has one bust successor), whose cycles -- the
``(a, b) <-> (b, a)`` cycle of plain play, longer ones through bolt counts --
are solved exactly: each pair's value is linearised in its bust value
(``dP/dZ`` = P(the turn busts), from the turn DP), the level's linear system
is solved, and the turn DPs are re-run at the new bust values until nothing
moves (the linearisation is exact once the decisions stop changing). Values
of lower levels, reached only through penalties, are taken from the
previous pass; passes repeat until no value moves by more than ``tol``.
Without penalties (Pig, plain, Farkle) one pass is exact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as spla

from . import kernel
from .errors import ThousandError
from .game import WIN, Moves
from .rules import Ruleset
from .states import WIN_INDEX, StateSpace, build_state_space

MAX_PAIRS = 60_000_000  # 480 MB of float64 values; more does not fit the solver's layout


class DuelModel:
    """The pair state space and every mover's turn ends (:class:`solver.kernel.DuelPlans`)."""

    def __init__(self, rs: Ruleset, space: StateSpace | None = None):
        if rs.equal_turns:
            raise ThousandError("the duel solver does not support equal_turns rulesets yet")
        self.rs = rs
        self.moves = Moves(rs)
        self.space = space or build_state_space(rs, opponents=True)
        n = self.n = len(self.space)
        if n * n > MAX_PAIRS:
            raise ThousandError(f"{rs.name}: {n} player states make {n * n:,} pairs, more than the duel "
                                f"solver holds ({MAX_PAIRS:,})")
        st = self.space.states
        idx = self.space.index
        mv = self.moves
        score = np.array([x.score for x in st], dtype=np.int64)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self.space.T + 1, out=ptr[1:])
        nxt = np.full(ptr[-1], -2, dtype=np.int64)
        after = np.zeros(ptr[-1], dtype=np.int64)
        climbed = np.zeros(ptr[-1], dtype=np.uint8)
        for i, x in enumerate(st):
            e = self.space.ends[i]
            a = ptr[i]
            after[a:ptr[i + 1]] = x.score
            for t in range(1, e.T + 1):
                y = e.stop_next[t] if e.stop_ok[t] else e.forced_next[t]
                if y is None:
                    continue
                nxt[a + t] = WIN_INDEX if y == WIN else idx[y]
                if y != WIN and e.forced_event[t] != "overshoot":
                    after[a + t] = mv.raised_to(x, t * rs.unit)
                    climbed[a + t] = mv.climbed(x, y)
        self.plans = kernel.DuelPlans(
            ptr=ptr,
            stop_ok=np.concatenate(self.space.stop_ok).astype(np.uint8),
            forced_ok=np.concatenate(self.space.forced_ok).astype(np.uint8),
            next=nxt, after=after, climbed=climbed,
            bust=self.space.bust_idx.astype(np.int64), score=score,
            overtaken=np.array([idx[mv.affect_opponent(x, x.score - 1, x.score + 1, False)] for x in st],
                               dtype=np.int64),
            pushed=np.array([idx[mv.affect_opponent(x, x.score, x.score, True)] for x in st], dtype=np.int64),
            on_barrel=np.array([mv.on_barrel(x) for x in st], dtype=np.uint8),
        )
        self.score = score
        # score groups: states are sorted by descending score, so each is a range
        bounds = np.flatnonzero(np.diff(score)) + 1
        starts = np.concatenate([[0], bounds])
        ends = np.concatenate([bounds, [n]])
        self.groups = {int(score[a]): (int(a), int(b)) for a, b in zip(starts, ends)}

    def lowers_levels(self) -> bool:
        """Whether any move lowers the sum of the scores (penalties): then the
        levels must be swept more than once."""
        p = self.plans
        mover = np.repeat(np.arange(self.n), np.diff(p.ptr))
        ok = p.next >= 0
        down = np.any(p.score[p.next[ok]] < p.score[mover[ok]])
        return bool(down or np.any(p.score[p.bust] < p.score) or np.any(p.overtaken != np.arange(self.n))
                    or np.any(p.pushed != np.arange(self.n)))


@dataclass
class _Level:
    """The pairs of one level: movers, their opponent ranges, and bust successors."""

    movers: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    px: np.ndarray       # mover of each pair
    py: np.ndarray       # opponent of each pair
    succ: np.ndarray     # index (in this level) of the pair a bust leads to, or -1
    d_rows: np.ndarray   # pairs whose bust successor is in the level


def _levels(model: DuelModel) -> list[_Level]:
    groups = model.groups
    scores = sorted(groups)
    out = []
    mover_pos = np.full(model.n, -1, dtype=np.int64)
    for L in sorted({a + b for a in scores for b in scores}, reverse=True):
        movers, lo, hi = [], [], []
        for s in scores:
            if L - s in groups:
                a, b = groups[s]
                ya, yb = groups[L - s]
                movers.extend(range(a, b))
                lo.extend([ya] * (b - a))
                hi.extend([yb] * (b - a))
        movers, lo, hi = (np.array(v, dtype=np.int64) for v in (movers, lo, hi))
        K = hi - lo
        ptr = np.concatenate([[0], np.cumsum(K)])
        px = np.repeat(movers, K)
        py = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)])
        mover_pos[movers] = np.arange(len(movers))
        jy = mover_pos[py]
        bust = model.plans.bust[px]
        col = bust - lo[np.maximum(jy, 0)]
        inside = (jy >= 0) & (col >= 0) & (col < K[np.maximum(jy, 0)])
        succ = np.where(inside, ptr[np.maximum(jy, 0)] + col, -1)
        mover_pos[movers] = -1
        out.append(_Level(movers, lo, hi, px, py, succ, np.flatnonzero(inside)))
    return out


@dataclass
class DuelSolution:
    model: DuelModel
    P: np.ndarray           # (n, n): P[mover, opponent]
    passes: int
    residual: float
    seconds: float


class DuelDiverges(ThousandError):
    """The passes do not settle: no fixed point attracts them."""


STALL_PASSES = 40  # passes without a tenfold gain in the largest change before giving up


def solve_duel(rs: Ruleset, tol: float = 1e-13, max_passes: int = 1000, pure: bool | None = None,
               model: DuelModel | None = None, threads: int = 0,
               progress: Callable[[int, float], None] | None = None) -> DuelSolution:
    """Solve the duel for every pair of states (see the module docstring).

    Raises :class:`DuelDiverges` when the passes stop converging (no tenfold
    gain in :data:`STALL_PASSES` passes) or the final Bellman residual is not
    small: rules under which a zero turn costs nothing (no bolts) and banking
    can hurt (barrel falls) let both players prefer never to bank, and then
    the win probabilities have no unique value."""
    t0 = time.perf_counter()
    model = model or DuelModel(rs)
    table = kernel.roll_table(rs, pure)
    n = model.n
    Q = np.full((n, n), 0.5)  # Q[y, x] = P(x, y): a mover's ends gather rows of Q
    levels = _levels(model)
    repeat = model.lowers_levels()
    passes = 0
    accel = _Anderson(depth=6)
    history: list[float] = []
    while passes < max_passes:
        passes += 1
        before = Q.copy() if repeat else None
        change = 0.0
        for lv in levels:
            old = Q[lv.py, lv.px]
            # with penalties the pass is repeated anyway: one DP run per level and
            # pass is enough (the final residual certifies the fixed point)
            for _ in range(1 if repeat else 100):
                v, d, _ptr = kernel.duel_level(table, model.plans, Q, lv.movers, lv.lo, lv.hi, grad=True,
                                               threads=threads, pure=pure)
                new = v
                if len(lv.d_rows):
                    # P_k = v_k + d_k ((1 - P_succ(k)) - Z_k): exact while no decision changes
                    r = lv.d_rows
                    z = 1.0 - Q[model.plans.bust[lv.px[r]], lv.py[r]]
                    rhs = v.copy()
                    rhs[r] += d[r] * (1.0 - z)
                    m = len(v)
                    A = sparse.identity(m, format="csr") + sparse.csr_matrix((d[r], (r, lv.succ[r])),
                                                                             shape=(m, m))
                    new = spla.spsolve(A.tocsc(), rhs)
                moved = float(np.max(np.abs(new - v)))
                Q[lv.py, lv.px] = new
                if moved <= 1e-15:
                    break
            change = max(change, float(np.max(np.abs(Q[lv.py, lv.px] - old))))
        if progress:
            progress(passes, change)
        if change <= tol or not repeat:
            break
        history.append(change)
        if len(history) > STALL_PASSES and min(history[-STALL_PASSES:]) > 0.1 * min(history[:-STALL_PASSES]):
            raise DuelDiverges(_diverges(rs, passes, change))
        if change < 1e-2:
            Q[:] = accel.step(before, Q)
    del accel
    P = np.ascontiguousarray(Q.T)
    residual = bellman_residual(model, table, P, pure)
    if residual > 1e-10:
        raise DuelDiverges(_diverges(rs, passes, residual))
    return DuelSolution(model, P, passes, residual, time.perf_counter() - t0)


def _diverges(rs: Ruleset, passes: int, change: float) -> str:
    hint = (" (without bolts a zero turn costs nothing, so both players may prefer never to bank:"
            " the game need not end and its win probabilities have no unique value)"
            if not rs.bolts.limit else "")
    return f"{rs.name}: the duel does not converge; after {passes} passes values still move by {change:.1e}{hint}"


def solve_duel_textbook(rs: Ruleset, tol: float = 1e-12, max_sweeps: int = 100000, pure: bool | None = None,
                        model: DuelModel | None = None,
                        progress: Callable[[int, float], None] | None = None) -> DuelSolution:
    """The baseline: in-place Gauss-Seidel sweeps over all pairs, one scalar turn
    DP per pair, until no value moves by more than ``tol``. For benchmarks and
    as a check of :func:`solve_duel`; it reaches the same fixed point."""
    t0 = time.perf_counter()
    model = model or DuelModel(rs)
    table = kernel.roll_table(rs, pure)
    n = model.n
    Q = np.full((n, n), 0.5)
    one = np.ones(1, dtype=np.int64)
    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        change = 0.0
        for x in range(n):
            for y in range(n):
                v, _, _ = kernel.duel_level(table, model.plans, Q, one * x, one * y, one * (y + 1), grad=False,
                                            threads=1, pure=pure)
                change = max(change, abs(v[0] - Q[y, x]))
                Q[y, x] = v[0]
        if progress:
            progress(sweeps, change)
        if change <= tol:
            break
    P = np.ascontiguousarray(Q.T)
    return DuelSolution(model, P, sweeps, bellman_residual(model, table, P, pure), time.perf_counter() - t0)


class _Anderson:
    """Anderson acceleration of the fixed point Q = F(Q) of whole passes.

    Near the solution no decision changes and a pass is an affine map, so
    mixing the last few passes (least squares on their residuals) converges
    like a Krylov method instead of geometrically. Far from it the history is
    dropped whenever a step does not reduce the residual. The final Bellman
    residual is measured independently, so acceleration cannot make a wrong
    answer look converged.
    """

    def __init__(self, depth: int):
        self.depth = depth
        self.xs: list[np.ndarray] = []
        self.gs: list[np.ndarray] = []
        self.last = np.inf

    def step(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        f = g - x
        norm = float(np.max(np.abs(f)))
        if norm > self.last:
            self.xs.clear()
            self.gs.clear()
        self.last = norm
        self.xs.append(x.ravel().copy())
        self.gs.append(g.ravel().copy())
        if len(self.xs) > self.depth + 1:
            self.xs.pop(0)
            self.gs.pop(0)
        if len(self.xs) < 2:
            return g
        F = np.stack([gg - xx for gg, xx in zip(self.gs, self.xs)], axis=1)
        G = np.stack(self.gs, axis=1)
        dF = np.diff(F, axis=1)
        dG = np.diff(G, axis=1)
        gamma, *_ = np.linalg.lstsq(dF, F[:, -1], rcond=None)
        out = (G[:, -1] - dG @ gamma).reshape(g.shape)
        return np.clip(out, 0.0, 1.0)


def bellman_residual(model: DuelModel, table, P: np.ndarray, pure: bool | None = None) -> float:
    """The largest |P - TurnDP(P)| over all pairs (one Jacobi pass over every mover)."""
    Q = np.ascontiguousarray(P.T)
    n = model.n
    movers = np.arange(n)
    v, _, _ = kernel.duel_level(table, model.plans, Q, movers, np.zeros(n, np.int64), np.full(n, n),
                                grad=False, pure=pure)
    return float(np.max(np.abs(v.reshape(n, n) - P)))
