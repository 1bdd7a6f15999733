"""Objective ``geometric``: one player against a memoryless opponent -- the duel
approximation for rulesets whose pairs are too many to solve (six-dice).

An opponent who wins each of its turns with the same chance ``q``, whatever happens,
has survived ``r`` of its turns with probability ``(1 - q)^r``. A mover who wins on its
own turn ``r + 1`` from now then beats it with probability ``(1 - q)^r``, so with
``d = 1 - q`` its best chance from state ``x`` at the start of its turn is

    V_q(x) = TurnDP_x( stop[t] = d V_q(bank(x, t)),  forced[t] = d V_q(end(x, t)),
                       Z = d V_q(zero(x)),  W = 1 )

(:func:`thousand.kernel.turn_dp`): a discounted problem over the player states alone,
``len(space)`` values per ``q`` instead of the duel's ``len(space)**2``. The values are
solved for a grid of the opponent's expected turns ``N = 1 / q`` (:data:`GRID`), all
columns in one turn DP per state: Gauss-Seidel sweeps in order of descending score (a
state whose zero turn returns to itself solved for its own value by Newton's method, as
in :mod:`thousand.solvers.race`), then policy iteration -- each column's greedy turn policies
(:func:`thousand.kernel.end_distribution`) evaluated exactly by one sparse solve of
``(I - d P) V = w`` (``w`` the chance the turn wins) -- until no value moves by ``tol``.
The residual is the largest Bellman residual of a final full pass.

As duel advice (:class:`GeometricDuel`) the opponent in state ``y`` is taken to win each
turn with ``q = 1 / N(y)``, ``N(y)`` its expected turns to win alone (the race table);
the values at ``N(y)`` are interpolated linearly in ``log N`` between grid columns. The
chance the opponent takes once the turn is handed over, in place of the duel's
``P(y, x')``, is ``1 - d(y) V(x')``; the turn being decided keeps every exact rule the
duel has (a first seat's win under ``equal_turns`` is worth ``1 - L(y, F)``, the
opponent's exact last-turn chance). What the approximation costs in win probability is
measured against the exact duel on rulesets small enough to solve
(``bench/bench_duel_approx.py``, docs/results.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as spla

from thousand import kernel
from thousand.base.errors import StateError
from thousand.engine.player import PlayerState
from thousand.engine.states import WIN_INDEX, StateSpace, build_state_space
from thousand.rules.ruleset import Ruleset

__all__ = [
    "GRID",
    "WARM",
    "GeometricDuel",
    "GeometricSolution",
    "bellman_residual",
    "discounts",
    "solve_geometric",
    "stand_ins",
]

# the opponent's expected turns to win alone, N = 1/q, at which V_q is solved
GRID = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0, 128.0)
WARM = 1e-3  # sweeps until the largest change is below this, then policy iteration


def discounts(grid=GRID) -> np.ndarray:
    """``d = 1 - 1/N`` per grid column."""
    return 1.0 - 1.0 / np.asarray(grid, dtype=np.float64)


@dataclass
class GeometricSolution:
    space: StateSpace
    grid: np.ndarray  # (K,) the opponent's expected turns per column
    values: np.ndarray  # (n, K) V_q(x), q = 1 / grid[k]
    iterations: int  # sweeps plus policy rounds
    residual: float
    seconds: float


def _ends(space: StateSpace, i: int, V: np.ndarray, d: np.ndarray):
    """Stop and forced end values of state ``i``: ``d V(next)`` per column, 1 for a win."""
    out = []
    for idx in (space.stop_idx[i], space.forced_idx[i]):
        v = d * V[idx]
        v[idx == WIN_INDEX] = 1.0
        out.append(v)
    return out


def _turn(table, space: StateSpace, i: int, V: np.ndarray, d: np.ndarray, bust: np.ndarray, **kw):
    stop_v, forced_v = _ends(space, i, V, d)
    return kernel.turn_dp(table, space.stop_ok[i], stop_v, space.forced_ok[i], forced_v, bust, np.ones(len(d)), **kw)


def _sweep(table, space: StateSpace, V: np.ndarray, d: np.ndarray) -> float:
    """One Gauss-Seidel sweep in place (all columns at once); returns the largest change."""
    delta = 0.0
    for i in range(len(space)):
        if space.bust_idx[i] == i:
            # v = f(d v): Newton's method on the convex piecewise-linear f, column by column at once
            v = V[i].copy()
            for _ in range(60):
                r = _turn(table, space, i, V, d, d * v, grad=True)
                slope = d * r.dstart
                new = (r.start - slope * v) / (1.0 - slope)
                done = np.max(np.abs(new - v)) <= 1e-15
                v = new
                if done:
                    break
        else:
            v = _turn(table, space, i, V, d, d * V[space.bust_idx[i]]).start
        delta = max(delta, float(np.max(np.abs(v - V[i]))))
        V[i] = v
    return delta


def _evaluate(table, space: StateSpace, V: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The values of the turn policies greedy for ``V``, column by column: ``(I - d P) V = w``."""
    n, K = len(space), len(d)
    rows, cols, vals, ks = [], [], [], []  # the transitions of every column, told apart by ks
    win = np.zeros((n, K))
    for i in range(n):
        stop_v, forced_v = _ends(space, i, V, d)
        bust = d * V[space.bust_idx[i]]
        tv = kernel.turn_dp(table, space.stop_ok[i], stop_v, space.forced_ok[i], forced_v, bust, np.ones(K), full=True)
        sp, fp, bp, wp = kernel.end_distribution(table, space.stop_ok[i], stop_v, space.forced_ok[i], forced_v, tv)
        win[i] = wp
        for idx, p in ((space.stop_idx[i], sp), (space.forced_idx[i], fp)):
            win[i] += p[idx == WIN_INDEX].sum(axis=0)
            t, k = np.nonzero((idx >= 0)[:, None] & (p > 0))
            rows.append(np.full(len(t), i))
            cols.append(idx[t])
            vals.append(p[t, k])
            ks.append(k)
        rows.append(np.full(K, i))
        cols.append(np.full(K, space.bust_idx[i]))
        vals.append(bp)
        ks.append(np.arange(K))
    rows, cols, vals, ks = (np.concatenate(a) for a in (rows, cols, vals, ks))
    out = np.empty((n, K))
    eye = sparse.identity(n, format="csc")
    for k in range(K):
        sel = ks == k
        P = sparse.csr_matrix((vals[sel], (rows[sel], cols[sel])), shape=(n, n))
        out[:, k] = spla.spsolve((eye - d[k] * P).tocsc(), win[:, k])
    return out


def bellman_residual(table, space: StateSpace, V: np.ndarray, d: np.ndarray) -> float:
    """The largest ``|TurnDP(V) - V|`` over every state and column (one Jacobi pass)."""
    res = 0.0
    for i in range(len(space)):
        r = _turn(table, space, i, V, d, d * V[space.bust_idx[i]])
        res = max(res, float(np.max(np.abs(r.start - V[i]))))
    return res


def solve_geometric(
    rs: Ruleset,
    tol: float = 1e-12,
    grid=GRID,
    space: StateSpace | None = None,
    table: kernel.RollTable | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> GeometricSolution:
    """Solve ``V_q`` (the module docstring) for every state of ``space`` (default: the
    player states of ``rs``) and every ``q = 1 / N``, ``N`` in ``grid``."""
    t0 = time.perf_counter()
    space = space or build_state_space(rs)
    table = table or kernel.roll_table(rs)
    grid = np.asarray(grid, dtype=np.float64)
    d = discounts(grid)
    n = len(space)
    V = np.zeros((n + 1, len(d)))  # row n: where WIN_INDEX (-1) points (its ends are set to 1 by _ends)
    steps, delta = 0, np.inf
    while steps < 500 and delta > WARM:
        steps += 1
        delta = _sweep(table, space, V, d)
        if progress:
            progress(steps, delta)
    while steps < 1000:
        steps += 1
        new = _evaluate(table, space, V, d)
        delta = float(np.max(np.abs(new - V[:n])))
        V[:n] = new
        if progress:
            progress(steps, delta)
        if delta <= tol:
            break
    residual = bellman_residual(table, space, V, d)
    return GeometricSolution(space, grid, V[:n].copy(), steps, residual, time.perf_counter() - t0)


class GeometricDuel:
    """Duel values by the memoryless-opponent approximation (module docstring), in the
    duel table's shape: :meth:`opponent_values` gives, for an opponent about to move
    in state ``y`` against the mover's state ``x``, ``1 - d(y) V(x)`` at the
    opponent's ``N(y)``, where the duel has ``P(y, x)``.

    ``values``: V (n, K) over ``index`` (state -> row); ``turns``: N(y) per row (the race
    table's expected turns); ``horizon`` (:attr:`last_turn_horizon`): the first seat's last-turn horizon under
    ``equal_turns`` (:func:`thousand.solvers.lastturn.last_turn_horizon`)."""

    def __init__(
        self, rs: Ruleset, index: dict, values: np.ndarray, grid, turns: np.ndarray, horizon: int | None = None
    ):
        self.rs = rs
        self.index = index
        self.grid = np.asarray(grid, dtype=np.float64)
        self.values = np.asarray(values, dtype=np.float64)
        self.turns = np.asarray(turns, dtype=np.float64)
        self.last_turn_horizon = horizon
        self.seated = bool(rs.equal_turns)

    objective = "geometric"
    solved_now = False
    table = None  # the stored table it was read from (thousand.storage.geometric)

    def start_value(self) -> float:
        """The first player's estimated chance from the start, against one opponent in
        the initial state (the approximation's value, not a win probability)."""
        from thousand.engine.player import Moves

        x0 = Moves(self.rs).normalise(Moves(self.rs).initial())
        i = self.state_index(x0)
        return float(self.against(np.array([i]), self.survival(np.array([i])))[0])

    def advise(self, me: PlayerState, opponents, *, turn: int = 0, dice=None, roll=None, seat: int | None = None):
        """The options of ``me`` facing ``opponents`` (in the order they move next), valued
        by the approximation (:func:`thousand.solvers.advice.memoryless_advisor`)."""
        from .advice import memoryless_advisor

        adv = memoryless_advisor(self, list(opponents), seat)
        roll = tuple(roll) if roll is not None else None
        adv.engine.check_reachable(adv.engine.state(me, turn, dice, roll))
        return adv.advise(me, turn, dice, roll)

    def summary(self) -> dict:
        meta = self.table.meta if self.table is not None else {}
        return {
            "start_value": self.start_value(),
            "states": len(self.index),
            "grid": [float(g) for g in self.grid],
            "iterations": meta.get("iterations"),
            "residual": meta.get("residual"),
            "solve_seconds": meta.get("solve_seconds"),
            "table": str(self.table.path) if self.table is not None else None,
            "solved_now": self.solved_now,
        }

    def describe(self) -> str:
        return (
            f"{self.rs.name}: {self.start_value():.6f} estimated for the first player against one memoryless "
            f"opponent ({len(self.index):,} states, {len(self.grid)} columns)"
        )

    def state_index(self, x: PlayerState) -> int:
        try:
            return self.index[x]
        except KeyError:
            from thousand.base.i18n import _

            raise StateError(_("no such game state in the table: {0}").format(x.describe(self.rs))) from None

    def at(self, y_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(d, V)`` for opponents ``y_rows``: ``d = 1 - 1/N(y)`` and ``V[:, j]`` the values of
        every state at ``N(y_j)`` (interpolated in log N between grid columns)."""
        N = np.clip(self.turns[np.asarray(y_rows)], self.grid[0], self.grid[-1])
        g = np.log(self.grid)
        k = np.clip(np.searchsorted(g, np.log(N), side="right") - 1, 0, len(g) - 2)
        w = (np.log(N) - g[k]) / (g[k + 1] - g[k])
        V = self.values[:, k] * (1.0 - w) + self.values[:, k + 1] * w
        return 1.0 - 1.0 / N, V

    def survival(self, rows: np.ndarray) -> np.ndarray:
        """``d = 1 - 1/N(y)``: the chance that opponents ``rows`` do not win a turn (N clipped to the grid)."""
        return 1.0 - 1.0 / np.clip(self.turns[np.asarray(rows)], self.grid[0], self.grid[-1])

    def against(self, rows: np.ndarray, D: np.ndarray) -> np.ndarray:
        """``D V_q(x)`` with ``q = 1 - D``, entry by entry: the chance of the states ``rows``
        once a memoryless opponent who wins a round with ``q`` is to move."""
        with np.errstate(divide="ignore"):
            return D * self.interpolated(rows, 1.0 / (1.0 - D))

    def interpolated(self, rows: np.ndarray, N: np.ndarray) -> np.ndarray:
        """``V_{1/N}`` of the states ``rows`` at the opponent's expected turns ``N`` (entry by
        entry, linear in ``log N`` between grid columns, clipped to the grid)."""
        N = np.clip(np.asarray(N, dtype=np.float64), self.grid[0], self.grid[-1])
        g = np.log(self.grid)
        k = np.clip(np.searchsorted(g, np.log(N), side="right") - 1, 0, len(g) - 2)
        w = (np.log(N) - g[k]) / (g[k + 1] - g[k])
        return self.values[rows, k] * (1.0 - w) + self.values[rows, k + 1] * w

    def opponent_values(self, seat: int | None = None):
        """What stands where the duel reads ``P[opponent, mover]`` (indexable by
        ``[rows, col]`` like the duel table): the opponent's chance once the turn is handed
        over. The same for either seat (the approximation does not see seats)."""
        return _OpponentChances(self)


class _OpponentChances:
    """``[y_rows, x]`` -> ``1 - d(y) V_{N(y)}(x)``, computed on access."""

    def __init__(self, g: GeometricDuel):
        self.g = g

    def __getitem__(self, key):
        y, x = key
        y = np.atleast_1d(np.asarray(y))
        d, V = self.g.at(y)
        return 1.0 - d * V[x]


def stand_ins(model) -> tuple[dict, object]:
    """The approximations as stand-ins for a duel model's values (measurement only: n x n
    each), in the solver's layout ``Q[x, y] = P(y, x)``, from which the duel kernel's greedy
    policy is each approximation's play (:func:`thousand.solvers.duel.seat_profile_values`):

    * ``geometric``: ``1 - d(y) V(x)`` at the opponent's ``N(y)`` (:class:`GeometricDuel`);
    * ``race``: ``a N(x)``, so that a bank leaving the mover at x is worth ``1 - a N(x)``, an
      increasing map of minus its expected turns alone (a win 1; ``a`` keeps it in [0, 1]).

    Returns ``(stand_ins, geometric solution)``; both are solved on the model's player states."""
    from .race import solve_race

    rs, n, m = model.rs, model.n, model.players
    race = solve_race(rs, space=model.space)
    geo = solve_geometric(rs, space=model.space)
    rows = np.arange(n) % m
    d, V = GeometricDuel(rs, model.space.index, geo.values, geo.grid, race.turns, model.horizon).at(rows)
    a = 1.0 / (float(np.max(race.turns)) + 1.0)
    return {
        "geometric": 1.0 - V[rows] * d[None, :],
        "race": np.ascontiguousarray(np.broadcast_to((a * race.turns[rows])[:, None], (n, n))),
    }, geo
