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


@dataclass
class MoverPlan:
    """What one mover's turn does, as arrays over totals t = 0..T."""

    T: int
    stop_ok: np.ndarray
    forced_ok: np.ndarray
    end_ok: np.ndarray      # stop_ok | forced_ok
    next_idx: np.ndarray    # mover's next state per t (stop or forced), WIN_INDEX for a win
    after: np.ndarray       # mover's score after the end at t (before samosval), for overtaking
    climbed: np.ndarray     # bool: the end at t put the mover on the barrel
    bust_idx: int


class DuelModel:
    """The pair state space and the per-mover plans."""

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
        self.score = np.array([x.score for x in st], dtype=np.int64)
        idx = self.space.index
        mv = self.moves
        self.overtaken = np.array([idx[mv.affect_opponent(x, x.score - 1, x.score + 1, False)] for x in st])
        self.pushed = np.array([idx[mv.affect_opponent(x, x.score, x.score, True)] for x in st])
        self.on_barrel = np.array([mv.on_barrel(x) for x in st], dtype=bool)
        self.plans = [self._plan(i) for i in range(n)]

    def _plan(self, i: int) -> MoverPlan:
        sp, rs, mv = self.space, self.rs, self.moves
        x = sp.states[i]
        T = int(sp.T[i])
        stop_ok, forced_ok = sp.stop_ok[i], sp.forced_ok[i]
        nxt = np.where(stop_ok.astype(bool), sp.stop_idx[i], sp.forced_idx[i])
        after = np.full(T + 1, x.score, dtype=np.int64)
        climbed = np.zeros(T + 1, dtype=bool)
        for t in range(1, T + 1):
            e = sp.ends[i]
            y = e.stop_next[t] if stop_ok[t] else e.forced_next[t]
            if y is None or y == WIN or e.forced_event[t] == "overshoot":
                continue
            after[t] = mv.raised_to(x, t * rs.unit)
            climbed[t] = mv.climbed(x, y)
        return MoverPlan(T, stop_ok, forced_ok, (stop_ok | forced_ok).astype(np.uint8), nxt, after, climbed,
                         int(sp.bust_idx[i]))

    def opponents_after(self, plan: MoverPlan, before: int, Y: np.ndarray) -> np.ndarray:
        """(T+1, K) opponent state after the mover's end at each t, for opponents ``Y``."""
        y1 = np.where(plan.climbed[:, None] & self.on_barrel[Y][None, :], self.pushed[Y][None, :], Y[None, :])
        s = self.score[y1]
        return np.where((before < s) & (s < plan.after[:, None]), self.overtaken[y1], y1)


@dataclass
class DuelSolution:
    model: DuelModel
    P: np.ndarray           # (n, n): P[mover, opponent]
    passes: int
    residual: float
    seconds: float


def _end_values(model: DuelModel, Q: np.ndarray, i: int, Y: np.ndarray) -> np.ndarray:
    """(T+1, K): the mover's win probability for each way the turn of ``i`` ends at t."""
    plan = model.plans[i]
    opp = model.opponents_after(plan, int(model.score[i]), Y)
    nxt = plan.next_idx
    win = nxt == WIN_INDEX
    vals = 1.0 - Q[np.where(win, 0, np.maximum(nxt, 0))[:, None], opp]
    vals[win] = 1.0
    vals[~plan.end_ok.astype(bool)] = 0.0
    return vals


def evaluate(model: DuelModel, table, Q: np.ndarray, i: int, Y: np.ndarray, grad: bool = False,
             pure: bool | None = None):
    """TurnDP of mover ``i`` against opponents ``Y``, with values from ``Q = P.T``."""
    plan = model.plans[i]
    ends = _end_values(model, Q, i, Y)
    bust = 1.0 - Q[plan.bust_idx, Y]
    return kernel.turn_dp(table, plan.stop_ok, ends, plan.forced_ok, ends, bust, np.ones(len(Y)),
                          grad=grad, pure=pure)


def solve_duel(rs: Ruleset, tol: float = 1e-13, max_passes: int = 500, pure: bool | None = None,
               model: DuelModel | None = None,
               progress: Callable[[int, float], None] | None = None) -> DuelSolution:
    """Solve the duel for every pair of states (see the module docstring)."""
    t0 = time.perf_counter()
    model = model or DuelModel(rs)
    table = kernel.roll_table(rs, pure)
    n = model.n
    score = model.score
    P = np.full((n, n), 0.5)
    Q = P.T.copy()  # Q[y, x] = P[x, y]: a row of Q is what the mover's ends gather
    by_score: dict[int, np.ndarray] = {}
    for s in np.unique(score):
        by_score[int(s)] = np.nonzero(score == s)[0]
    scores = sorted(by_score)
    levels = sorted({a + b for a in scores for b in scores}, reverse=True)
    bust_of = np.array([p.bust_idx for p in model.plans])

    passes = 0
    while passes < max_passes:
        passes += 1
        change = 0.0
        for L in levels:
            pairs_x, pairs_y = [], []
            for s in scores:
                if L - s in by_score:
                    X, Y = by_score[s], by_score[L - s]
                    pairs_x.append(np.repeat(X, len(Y)))
                    pairs_y.append(np.tile(Y, len(X)))
            px, py = np.concatenate(pairs_x), np.concatenate(pairs_y)
            m = len(px)
            pos = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(px, py))}
            # bust successor of pair k = (x, y): (y, zero(x)), inside the level when zero(x) kept the score
            succ = np.array([pos.get((int(b), int(bust_of[a])), -1) for a, b in zip(px, py)])
            inside = succ >= 0
            old = P[px, py].copy()
            for _ in range(100):
                v = np.empty(m)
                d = np.empty(m)
                for s in scores:
                    if L - s not in by_score:
                        continue
                    Y = by_score[L - s]
                    for i in by_score[s]:
                        r = evaluate(model, table, Q, int(i), Y, grad=True, pure=pure)
                        ks = [pos[(int(i), int(y))] for y in Y]
                        v[ks] = r.start
                        d[ks] = r.dstart
                # P_k = v_k + d_k * ((1 - P_succ) - Z_k) for in-level successors
                z = 1.0 - P[py[inside], bust_of[px[inside]]]
                rhs = v.copy()
                rhs[inside] += d[inside] * (1.0 - z)
                A = sparse.identity(m, format="csr") + sparse.csr_matrix(
                    (d[inside], (np.nonzero(inside)[0], succ[inside])), shape=(m, m))
                new = spla.spsolve(A.tocsc(), rhs) if inside.any() else rhs
                moved = float(np.max(np.abs(new - P[px, py])))
                P[px, py] = new
                Q[py, px] = new
                if moved <= 1e-15:
                    break
            change = max(change, float(np.max(np.abs(P[px, py] - old))))
        if progress:
            progress(passes, change)
        if change <= tol:
            break
    residual = bellman_residual(model, table, P, pure)
    return DuelSolution(model, P, passes, residual, time.perf_counter() - t0)


def bellman_residual(model: DuelModel, table, P: np.ndarray, pure: bool | None = None) -> float:
    """The largest |P - TurnDP(P)| over all pairs (one Jacobi pass, mover by mover)."""
    Q = np.ascontiguousarray(P.T)
    Y = np.arange(model.n)
    worst = 0.0
    for i in range(model.n):
        r = evaluate(model, table, Q, i, Y, pure=pure)
        worst = max(worst, float(np.max(np.abs(r.start - P[i]))))
    return worst
