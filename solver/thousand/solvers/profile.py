"""Exact values of a profile of fixed decisions among three players and more.

Each seat ``k`` plays its own decider; the decisions no longer depend on the values, so a
state's value vector is affine in the values of the states its turn leads to. With ``s``
a state whose mover sits in seat ``k``, ``P_s(t)`` the chance its turn ends with a bank
(or a mid-turn end) at total ``t`` leading to ``succ(s, t)``, ``P_s(win)`` the chance it
wins, and ``b_s`` the chance of a zero turn leading to ``zero(s)``::

    V_k(s) = A_k(s) + b_s * roll(V_{k+1}(zero(s)), 1)
    A_k(s) = sum_t P_s(t) * seen(V_{k+1}(succ(s, t))) + P_s(win) * e_0

(``seen``/``roll``: the successor's places as the mover sees them, its own chance first).
``A`` of a level is a sparse linear map of the values plus a constant, built once from the
end distributions (:class:`LevelPlan`); the zero-turn links form trees ending in cycles,
solved in closed form on the cycles (:func:`thousand.solvers.nplayer._orbit_values`) and
outwards on the trees, as the solver's levels are. Games whose moves lower a score are
swept until the values settle, Anderson-mixed near the fixed point (a sweep of fixed
decisions is an affine map).

It measures the approximations of :mod:`thousand.solvers.approx` and the bots of
``thousand evaluate --players N``.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from thousand.base.i18n import _

from .duel import _Anderson
from .nplayer import (
    ACCELERATE,
    NPlayerError,
    NPlayerGame,
    NPlayerSolution,
    _bank_values,
    _chunks,
    _cycle_steps,
    _levels,
    _links,
    _not_settling,
    _orbit_values,
    _stop_values,
    _turn_ends,
)

__all__ = ["EquilibriumDecider", "LevelPlan", "decide_by", "decided_ends", "evaluate_profile", "level_plans"]


class EquilibriumDecider:
    """The equilibrium's own decisions: the turn DP against the solution's values (a
    mixed state is played by the kernel's tie rule, one of the two policies it mixes)."""

    name = "equilibrium"

    def __init__(self, sol: NPlayerSolution):
        self.sol = sol

    def decide(self, i: int, rest: np.ndarray, seat: int = 0):
        return decide_by(self.sol.V, self.sol.game, i, rest, seat)


def decide_by(V: np.ndarray, game: NPlayerGame, i: int, rest: np.ndarray, seat: int = 0):
    """The end values ``(stop, Z, W)`` of mover ``i`` against the others ``rest`` (in
    ``seat``) read from value vectors ``V`` (flat states x N, in the order of play from
    each state's mover): the mover's own place in the state after each end."""
    W, bank_rows, win_rows = _bank_values(i, rest, V, game, seat=seat)
    Ww = game.win_values(seat, i, rest)
    stop = _stop_values(game.turn_space(seat), i, W[..., 0], bank_rows, win_rows, 1.0 if Ww is None else Ww[..., 0])
    zero = game.after_zero(seat * game.total + i * game.M1 + rest, np.full(len(rest), game.bust[i]))
    return stop, V[zero, game.N - 1], np.ones(len(rest))


class LevelPlan:
    """One level of the evaluation, for ``seats`` blocks of its states ``lvl`` (``n``):
    ``A = const + (S @ V)[:, seen]`` over the rows ``k n + r`` (seat ``k``, state ``lvl[r]``),
    with ``V`` the flat values (seats x total, N); ``b`` the chance of a zero turn; the rows
    whose turns a bot gives itself (``bots``: recomputed each sweep, as they read the
    values); and the zero-turn links taken apart (``fronts``, ``cyc``, ``csucc``,
    ``steps``)."""

    def __init__(self, game: NPlayerGame, lvl: np.ndarray, seats: int, deciders):
        n, N, total = len(lvl), game.N, game.total
        self.lvl, self.n = lvl, n
        self.nxt = game.bust_next(lvl) % total
        pos = np.minimum(np.searchsorted(lvl, self.nxt), n - 1)
        inside = lvl[pos] == self.nxt
        self.const, self.b = np.zeros((seats * n, N)), np.zeros(seats * n)
        succ = np.full(seats * n, -1, dtype=np.int64)
        self.bots: list[tuple[np.ndarray, int, int, np.ndarray]] = []
        r_parts, c_parts, p_parts = [], [], []
        movers = lvl // game.M1
        order = np.argsort(movers, kind="stable")
        cuts = np.flatnonzero(np.diff(movers[order])) + 1
        groups = np.split(order, cuts) if n else []
        for k in range(seats):
            nk = (k + 1) % seats
            succ[k * n : (k + 1) * n] = np.where(inside, nk * n + pos, -1)
            for cols in groups:
                i = int(movers[cols[0]])
                rest = lvl[cols] % game.M1
                rows = k * n + cols
                if hasattr(deciders[k], "turn_ends"):  # a seat that gives its turn's ends itself
                    if game.seats > 1:
                        raise NPlayerError(
                            _("{0}: a bot's turns are not valued with equal_turns for three players and more").format(
                                game.rs.name
                            )
                        )
                    self.bots.append((rows, k, i, rest))
                    continue
                how = deciders[k].decide(i, rest, seat=k) if game.seats > 1 else deciders[k].decide(i, rest)
                bank_p, win_p, instant_p, self.b[rows] = decided_ends(game, i, *how, seat=k)
                # the game's successors carry the next seat where it tells the seats apart
                to, _rows, _wins = game.successors(i, rest, seat=k)
                if game.seats == 1:
                    to = to + nk * total
                some = bank_p > 0.0
                r_parts.append(np.broadcast_to(rows, bank_p.shape)[some])
                c_parts.append(to[some])
                p_parts.append(bank_p[some])
                Ww = game.win_values(k, i, rest)
                if Ww is None:
                    self.const[rows, 0] += win_p.sum(axis=0)
                else:
                    self.const[rows] += np.einsum("bk,bkn->kn", win_p, Ww)
                self.const[rows, 0] += instant_p
        self.S = None
        if r_parts:
            self.S = sparse.csr_matrix(
                (np.concatenate(p_parts), (np.concatenate(r_parts), np.concatenate(c_parts))),
                shape=(seats * n, seats * total),
            )
        self.fronts, self.cyc = _links(succ)
        self.csucc = np.searchsorted(self.cyc, succ[self.cyc])
        self.steps = _cycle_steps(self.csucc, N) if len(self.cyc) else N

    def ends(self, flat: np.ndarray, game: NPlayerGame) -> np.ndarray:
        """``A`` of the decided rows from the flat values: ``const + (S @ V)[:, seen]``."""
        return self.const + (self.S @ flat)[:, game.seen] if self.S is not None else self.const.copy()

    def step(self, U: np.ndarray, game: NPlayerGame) -> np.ndarray:
        """One turn of the level's movers (one seat block, no bots) from the values ``U``
        (total, N) of the states their turns lead to: ``A + b roll(U(zero), 1)`` per state."""
        return self.ends(U, game) + self.b[:, None] * np.roll(U[self.nxt], 1, axis=1)

    def sweep(self, V: np.ndarray, game: NPlayerGame, deciders) -> None:
        """The level's values from the current ones, in place in ``V`` (seats, total, N)."""
        seats, n, N = V.shape[0], self.n, game.N
        A, b = self.ends(V.reshape(-1, N), game), self.b
        for rows, k, i, rest in self.bots:
            A[rows], b[rows] = deciders[k].turn_ends(i, rest, V[(k + 1) % seats], game)
        cyc = self.cyc
        if len(cyc):
            V[cyc // n, self.lvl[cyc % n]] = _orbit_values(A[cyc], b[cyc], self.csucc, N, self.steps)
        for front in reversed(self.fronts):
            k, r = front // n, front % n
            after = V[(k + 1) % seats, self.nxt[r]]
            V[k, self.lvl[r]] = A[front] + b[front, None] * np.roll(after, 1, axis=1)


def level_plans(game: NPlayerGame, decider) -> list[LevelPlan]:
    """Every level's plan for one decider in every seat (a game that does not tell its seats apart)."""
    return [LevelPlan(game, lvl, 1, [decider]) for lvl in _levels(game, seats=1)]


def evaluate_profile(
    space, players: int, deciders, table=None, tol: float = 1e-13, max_passes: int = 1000, accelerate: bool = True
) -> np.ndarray:
    """Exact values of a profile of fixed decisions (module docstring): ``deciders[k]``
    decides every turn of seat ``k`` (one decider: every seat alike) by its end values
    (``decide``), or gives the turn's (A, b) itself (``turn_ends``, as a bot's enumerated
    turns do). Returns ``V`` (seats, m**N, N): ``V[k][s]`` is the value vector (in the
    order of play from the mover) of state ``s`` with seat ``k`` to move; ``V[0][start]``
    lists the seats' chances in seat order. With one decider the seat index is dropped
    (``seats`` = 1), unless the game tells its seats apart (``equal_turns``: then ``decide``
    is told the seat, and ``V`` is the solver's ``V`` by seat).

    The levels' plans (end distributions, the linear map to the values, the links) are
    built once and kept between sweeps; near the fixed point the sweeps are Anderson-mixed
    (``accelerate=False``: plain sweeps alone)."""
    deciders = list(deciders)
    if len(deciders) not in (1, players):
        raise ValueError("one decider, or one per seat")
    N = players
    game = NPlayerGame(space.rs, players, space, table)
    seats = 1 if len(deciders) == 1 and game.seats == 1 else players
    deciders = deciders * (seats // len(deciders))
    V = np.full((seats, game.total, N), 1.0 / N)
    levels = _levels(game, seats=1)
    plans: list[LevelPlan | None] = [None] * len(levels)
    accel, change = _Anderson(depth=6), np.inf
    for _sweep in range(max_passes):
        before = V.copy() if game.lowers else None
        for li, lvl in enumerate(levels):
            plan = plans[li] or LevelPlan(game, lvl, seats, deciders)
            if game.lowers:  # swept again: keep it
                plans[li] = plan
            plan.sweep(V, game, deciders)
        if not game.lowers:
            return V
        last, change = change, float(np.max(np.abs(V - before)))
        if change <= tol:
            return V
        if accelerate and change < min(ACCELERATE, last):
            # the change is measured at the next plain sweep from the mixed values, so the
            # evaluation ends only on a sweep that moved nothing
            accel.step(before, V)
    raise _not_settling(space.rs.name, N, max_passes, change)


def decided_ends(game, i: int, stop_val, z, w, seat: int = 0):
    """How mover ``i``'s turns (in ``seat``) end under the decisions that maximise
    (``stop_val``, bust ``z``, instant win ``w``): P(end at each total without a win)
    (B, K) over its ``rows``, P(a win by a bank) (W, K) over its ``win_rows``, and P(an
    instant win) and P(a zero turn) (K,)."""
    e = game.turn_rows(seat)[i]
    space = game.turn_space(seat)
    K = len(z)
    if stop_val.shape[0] < space.T[i] + 1:
        # a decider that does not see the seat's longer turns: totals above its horizon as at it
        stop_val = np.concatenate([stop_val, np.repeat(stop_val[-1:], space.T[i] + 1 - stop_val.shape[0], axis=0)])
    bank_p, win_p = np.empty((len(e.rows), K)), np.empty((len(e.win_rows), K))
    instant_p, bust_p = np.empty(K), np.empty(K)
    for c in _chunks(K):
        _tv, ends, bust_p[c], instant_p[c] = _turn_ends(game.table, space, i, stop_val[:, c], z[c], w[c])
        bank_p[:, c] = ends[e.rows]
        win_p[:, c] = ends[e.win_rows]
    return bank_p, win_p, instant_p, bust_p
