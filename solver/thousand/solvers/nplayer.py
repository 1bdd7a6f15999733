"""Any number of players: an exact equilibrium of N seats, with its certificate -- Pig,
plain, Farkle, and 1000 rulesets with every interaction (overtaking, push-off, samosval,
bolts, pits, barrels), and ``equal_turns`` (the mover's seat in the state; a win before
the last seat worth the rest of the round: :class:`NPlayerGame`).

A state is ``s = (x_0, x_1, ..., x_{N-1})``, player-state indices with ``x_0`` the mover
and then the seats that follow in order; its value ``V[s]`` is the vector of the players'
win probabilities in that order (they sum to 1). A turn of ``x_0`` ends at a total ``t``
(a bank, or a mid-turn end: the mover becomes ``x' = next(x_0, t)``, or wins, and every
other player ``x_k`` becomes ``x_k' = f_t(x_k)``: overtaken, pushed off the barrel, or
unchanged -- :class:`EndRows`), by a zero turn (the mover becomes ``zero(x_0)``: a bolt,
a failed attempt, a penalty; the others stay) or by an instant win; the next state is
the rotation ``s' = (x_1', ..., x_{N-1}', x')``. So

    V[s][0] = max over the mover's decisions of  E[ V[s'][N-1] ]      (the turn DP)
    V[s][k] = E_pi[ V[s'][k-1] ],  k = 1..N-1                          (under those decisions)

with ``V = e_0`` (the mover's unit vector) on a win. Each player maximises their own
chance; the mover banks on exact ties (the kernel's tie rule, as in the duel).

Levels: without interactions a bank raises the score sum and a zero turn keeps it, so
levels are solved from the top down in one sweep. Penalties, overtaking and push-off
lower it: then a level reads the lower levels' values from the sweep before, and the
sweeps repeat until no value moves by more than ``tol`` (Gauss-Seidel over levels; the
duel's passes). A zero turn that changes the mover (a bolt, an attempt) links a state to
another of its level or to a lower one: the links of a level form trees that end in
cycles or leave it; each tree state is solved once its successor is (the best response
to a known bust value is one turn DP), the cycles as below.

Cycles: where the zero turn keeps the mover's state, it links ``s`` to its rotation
``sigma(s)`` (the mover moves to the last place): orbits of at most N states (longer ones
through counters that come round, as bolts at the floor), each a small game of its own
coupled to the rest only through values already known. For fixed decisions an orbit is
linear and solved in closed form, with ``M`` a multiple of N and of the orbit's length,

    V[s] = sum_{j<M} (prod_{i<j} b(sigma^i s)) S^j A(sigma^j s) / (1 - prod_{i<M} b(sigma^i s)),

where ``A(s)`` is the value of the turn's banks and instant wins, ``b(s)`` its chance of a
bust and ``S`` the rotation of a value vector (``(S v)[0] = v[N-1]``). The decisions are
then the best responses to the mover's bust value ``z(s) = V[sigma(s)][N-1]``, and the two
steps alternate until no decision changes: a pure equilibrium of the orbit. Where they
cycle (three-player Pig from a goal of 50 on), :func:`_mix_orbit` lists each mover's
policies along its bust value with their breakpoints, takes a pure equilibrium of the
orbit if one exists (every combination solved at once), and otherwise follows smoothed
best responses to a point near the equilibrium and solves there exactly for the movers
that mix two neighbouring policies at a breakpoint (the weight that puts the mover's bust
value on that breakpoint). Several equilibria: the pure one nearest the policies the
rounds reached, else the one with the fewest mixtures nearest the smoothed point.

A round costs one turn DP per state (the mover's best value and its chance of a bust);
the end distributions that give A and b are redone only where that chance moved, and the
first guess of a bust value is extrapolated from the same orbit with the mover one, two
and three steps higher. The movers of a level's states run their turns on several threads.

The certificate is the largest gain any seat could get by deviating at any decision: for
every state, the mover's best value by the turn DP against the equilibrium's bust value,
minus the equilibrium's own value for it (at most 1e-9 to be accepted).

:func:`thousand.solvers.profile.evaluate_profile` values fixed decisions exactly by the
same levels and orbits (the decisions no longer depend on the values, so each orbit is
closed in one step).
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache, cached_property
from math import gcd

import numpy as np

from thousand import kernel
from thousand.base.errors import ThousandError
from thousand.base.i18n import _
from thousand.engine.ends import TurnEnds
from thousand.engine.player import Moves
from thousand.engine.states import WIN_INDEX, build_state_space, opponent_maps
from thousand.rules.ruleset import Ruleset

from .duel import _Anderson
from .lastturn import LastRound, first_seat_T, last_turn_horizon

__all__ = [
    "ACCELERATE",
    "CERTIFICATE",
    "MAX_ROUNDS",
    "MAX_VALUES",
    "ORBIT_WINDOWS",
    "PARALLEL_WORK",
    "POLICY_ATOL",
    "STALL",
    "EndRows",
    "NPlayerError",
    "NPlayerGame",
    "NPlayerSolution",
    "StateValues",
    "certificate",
    "check_size",
    "check_supported",
    "end_rows",
    "level_states",
    "level_sums",
    "seat_count",
    "solve_nplayer",
    "stalled",
    "turn_ends",
]

MAX_VALUES = 200_000_000  # float64 numbers of V (1.6 GB)
MAX_ROUNDS = 60  # best-response rounds of an orbit before it is treated as cycling
CERTIFICATE = 1e-9
POLICY_ATOL = 1e-12  # ends (A, b) closer than this are the same policy of an orbit's mover
ORBIT_WINDOWS = (0.02, 0.2, None)  # half-widths of the bust values around the current ones over which a
# cycling orbit's staircases are listed, in turn (None: all of [0, 1])
ACCELERATE = 1e-4  # sweeps that change values by less than this, and less than the one before, are Anderson-mixed
STALL = 40  # sweeps without a tenfold gain in the largest change before giving up


class NPlayerError(ThousandError):
    """The N-player solver cannot solve this ruleset (yet), or found no equilibrium."""


@dataclass
class NPlayerSolution:
    """``V`` (seats * m**N, N): the value of every state (flat index ``c m**N + sum x_k
    m**(N-1-k)``, with ``c`` the mover's seat under ``equal_turns`` and 0 otherwise: one
    seat); ``start``: the value of the first state, seat 0 to move; ``certificate``: the largest
    gain of a deviation; ``mixed``: the states where the mover mixes (state -> weight);
    ``passes``: the sweeps over the levels."""

    rs: Ruleset
    players: int
    space: object
    V: np.ndarray
    certificate: float
    seconds: float
    rounds: int
    mixed: dict = field(default_factory=dict)
    passes: int = 1

    @cached_property
    def game(self) -> NPlayerGame:
        return NPlayerGame(self.rs, self.players, self.space)

    @property
    def m(self) -> int:
        return len(self.space)

    @property
    def seats(self) -> int:
        """Seats told apart in the state: N under ``equal_turns``, else 1."""
        return seat_count(self.rs, self.players)

    def index(self, states, seat: int = 0) -> int:
        """The flat index of the tuple of player states (the mover first), the mover in
        ``seat`` (0 = the first; it matters under ``equal_turns`` only)."""
        s = 0
        for x in states:
            s = s * self.m + self.space.lookup(x)
        return (seat % self.seats) * self.m**self.players + s

    @property
    def start(self) -> np.ndarray:
        """Every seat's chance from the start, seat 0 (the first player) to move."""
        from thousand.engine.player import Moves

        x0 = Moves(self.rs).normalise(Moves(self.rs).initial())
        return self.V[self.index([x0] * self.players)]


def stalled(history: list[float]) -> bool:
    """Whether the sweeps' largest changes ``history`` went :data:`STALL` sweeps without a
    tenfold gain on the best before them: the values are not settling."""
    return len(history) > STALL and min(history[-STALL:]) > 0.1 * min(history[:-STALL])


def seat_count(rs: Ruleset, players: int) -> int:
    """The seats a state tells apart: every seat under ``equal_turns`` (the mover's seat
    decides who still plays in the round), else one."""
    return players if rs.equal_turns else 1


def _not_settling(name: str, players: int, passes: int, change: float) -> NPlayerError:
    return NPlayerError(
        _(
            "{0}, {1} players: the sweeps over the levels do not settle; after {2} passes "
            "values still move by {3:.1e} (where a mover is indifferent its choice may "
            "alternate from sweep to sweep, and where waiting costs nothing the players may "
            "wait for each other: docs/solver.md)"
        ).format(name, players, passes, change)
    )


def check_supported(rs: Ruleset, players: int) -> None:
    """Refuse in one line what this solver does not solve, before any work."""
    if players < 2:
        raise NPlayerError(_("a game needs at least two players: --players A B [C ...]"))


def check_size(rs: Ruleset, players: int, at_least: int = 0) -> int:
    """The player states of ``rs``, after refusing in one line a game too large to hold
    (before any value is allocated). ``at_least``: a known lower bound on the player states
    (a stored race table's), which refuses a game too large without enumerating them."""
    N, seats = players, seat_count(rs, players)

    def refuse(m: int, message: str) -> None:
        if seats * m**N * N > MAX_VALUES:
            states, gb = seats * m**N, 8 * seats * m**N * N / 1e9
            raise NPlayerError(message.format(rs.name, m, _count(states), N, _count(gb, ".1f"), MAX_VALUES))

    refuse(
        at_least,
        _(
            "{0}: at least {1:,} player states make {2} states of {3} players, {4} GB of "
            "values; the N-player solver holds {5:,}"
        ),
    )
    m = len(build_state_space(rs, opponents=True))
    refuse(
        m,
        _("{0}: {1:,} player states make {2} states of {3} players, {4} GB of values; the N-player solver holds {5:,}"),
    )
    return m


def _count(x: float, spec: str = "") -> str:
    """A count as a person reads it: with thousands separators up to a trillion, beyond in
    powers of ten (a game of 99 players has a 200-digit count of states)."""
    return f"{x:,{spec}}" if x < 1e12 else f"{x:.2e}"


class NPlayerGame:
    """The N-player game of a ruleset: its player states (closed under every way another
    player's move changes a player), each mover's :class:`EndRows`, the roll table, and
    ``m``, ``N``, ``M1 = m**(N-1)``, ``total = m**N`` and ``seats`` for the flat state
    index ``c total + sum x_k m**(N-1-k)``.

    With ``equal_turns`` the mover's seat ``c`` enters the state (``seats`` = N): a win by
    a seat before the last leaves the later seats their last turns, so it is worth
    :class:`thousand.solvers.lastturn.LastRound`'s vector for the final total, and that seat's
    turns run to the final-total horizon (``turn_space(c)``: the player states with
    those longer turns); the last seat's wins are final."""

    def __init__(self, rs: Ruleset, players: int, space=None, table=None, threads: int = 0):
        self.rs, self.N = rs, players
        self.space = space if space is not None else build_state_space(rs, opponents=True)
        self.m = len(self.space)
        self.M1 = self.m ** (players - 1)
        self.total = self.m**players
        self.seats = seat_count(rs, players)
        self.table = table or kernel.roll_table(rs)
        # threads for the turns of a level's movers (0: every core; see _each_mover)
        self.threads = self.table.backend.threads(threads)
        self.ends = end_rows(self.space)
        self.bust = self.space.bust_idx
        self.early_space, self.early_ends, self.last_round = self.space, self.ends, None
        self.horizon = None
        if rs.equal_turns:
            moves = Moves(rs)
            self.horizon = horizon = last_turn_horizon(rs, self.table, self.space.states)
            self.early_space = build_state_space(
                rs,
                opponents=True,
                ends={x: TurnEnds.of(moves, x, T=first_seat_T(rs, moves, x, horizon)) for x in self.space.states},
            )
            self.early_ends = end_rows(self.early_space)
            self.last_round = LastRound(rs, self.table, self.space.states, horizon)
        self.seen = np.roll(np.arange(players), 1)  # a successor's places as its last mover sees them
        score = np.array([x.score for x in self.space.states], dtype=np.int64)
        # whether some move lowers the sum of the scores (penalties, overtaking, push-off):
        # then a level reads values of lower levels, and the levels are swept until they settle
        self.lowers = bool(
            np.any(score[self.bust] < score)
            or any(e.opp is not None or np.any(score[e.nxt] < score[i]) for i, e in enumerate(self.ends))
        )

    def early(self, seat: int) -> bool:
        """Whether a win by ``seat`` leaves later seats a last turn (equal_turns)."""
        return self.seats > 1 and seat < self.N - 1

    def turn_space(self, seat: int):
        """The player states with the turns of a mover in ``seat``."""
        return self.early_space if self.early(seat) else self.space

    def turn_rows(self, seat: int) -> list[EndRows]:
        """Every mover's :class:`EndRows` in ``seat``."""
        return self.early_ends if self.early(seat) else self.ends

    def split(self, states: np.ndarray):
        """(seat, mover, rest) of flat states: the mover's seat, its player state, and the
        others (flat, in the order they move next)."""
        s = states % self.total
        return states // self.total, s // self.M1, s % self.M1

    def successors(self, i: int, rest: np.ndarray, seat: int = 0):
        """``(succ, rows, win_rows)``: the state after each end of mover ``i``'s turn without a
        win, ``succ`` (B, K) over the totals ``rows`` (B,), against the others ``rest`` (K,
        flat, in the order they move next), and the totals that win; the mover in ``seat``."""
        e = self.turn_rows(seat)[i]
        others = rest[None, :] if e.opp is None else _moved(rest, e.opp, self.m, self.N)
        return ((seat + 1) % self.seats) * self.total + others * self.m + e.nxt[:, None], e.rows, e.win_rows

    def win_values(self, seat: int, i: int, rest: np.ndarray):
        """The value vectors (seen by the mover) of mover ``i``'s wins by a bank, (W, K, N)
        over its ``win_rows`` against the others ``rest``; None where a win is final (worth
        the mover's unit vector). Under ``equal_turns`` a seat before the last leaves the
        ``r = N - 1 - seat`` players after it their last turns: the vector of
        :class:`thousand.solvers.lastturn.LastRound` for its final total, 0 for the seats before it."""
        if not self.early(seat):
            return None
        r = self.N - 1 - seat
        e = self.turn_rows(seat)[i]
        F = self.space.states[i].score + e.win_rows * self.rs.unit
        out = np.zeros((len(F), len(rest), self.N))
        out[..., : r + 1] = self.last_round.value(r, (rest // self.m ** (self.N - 1 - r))[None, :], F[:, None])
        return out

    def after_zero(self, states: np.ndarray, last: np.ndarray) -> np.ndarray:
        """(x_1, ..., x_{N-1}, last) with the next seat to move."""
        seat = states // self.total
        return ((seat + 1) % self.seats) * self.total + _rotate(states % self.total, self.m, self.M1, last)

    def bust_next(self, states: np.ndarray) -> np.ndarray:
        """The state after the mover's zero turn: (x_1, ..., x_{N-1}, zero(x_0))."""
        return self.after_zero(states, self.bust[self.split(states)[1]])


def solve_nplayer(
    rs: Ruleset, players: int = 3, progress=None, tol: float = 1e-13, max_passes: int = 500, threads: int = 0
) -> NPlayerSolution:
    """The equilibrium of ``rs`` for ``players`` seats (see the module docstring).
    ``progress(done, total, sweep, sweeps)`` is called after each level with the states
    solved so far in this sweep of ``total``; where the levels are swept more than once,
    ``sweeps`` is the sweeps expected from the rate at which the last one settled (an
    estimate that may grow; 1 where one sweep solves the game). ``threads``: the movers' turns of a level run
    on that many threads (0: every core); the values do not depend on it."""
    check_supported(rs, players)
    check_size(rs, players)
    t0 = time.perf_counter()
    game = NPlayerGame(rs, players, threads=threads)
    N = players
    total = game.seats * game.total
    V = np.full((total, N), 1.0 / N)
    rounds_all = 0
    up = _one_step_up(game.space)
    levels = _levels(game)
    passes, change, expect = 0, np.inf, 1
    accel = _Anderson(depth=6)
    history: list[float] = []
    values = StateValues(V, game, up)
    while change > tol:
        if passes >= max_passes or stalled(history):
            # no tenfold gain in STALL sweeps: the values are not settling (docs/solver.md: a war of
            # attrition, where waiting costs nothing, makes a game that need not end)
            raise _not_settling(rs.name, N, passes, change)
        passes += 1
        before = V.copy() if game.lowers else None
        mixed: dict = {}
        done = 0
        for lvl_states in levels:
            r = _solve_level(lvl_states, values, mixed)
            rounds_all = max(rounds_all, r)
            done += len(lvl_states)
            if progress:
                progress(done, total, passes, max(expect, passes))
        last, change = change, (float(np.max(np.abs(V - before))) if game.lowers else 0.0)
        history.append(change)
        if game.lowers:
            # the passes to go if the change keeps shrinking at the rate of the last pass (at most 50)
            rate = change / last if np.isfinite(last) and last > 0 else 0.5
            expect = passes + (
                min(50, int(np.ceil(np.log(tol / change) / np.log(rate)))) if 0 < rate < 1 and change > tol else 1
            )
            if tol < change < min(ACCELERATE, last):
                # near the solution no decision changes and a sweep is an affine map: mix the last
                # sweeps (Anderson, as the duel's passes); the next sweep's change is measured at
                # the mixed values, and the solve ends only on a plain sweep that moved nothing
                accel.step(before, V)
    cert = certificate(V, game)
    return NPlayerSolution(rs, N, game.space, V, cert, time.perf_counter() - t0, rounds_all, mixed, passes)


def _levels(game, seats: int | None = None) -> list[np.ndarray]:
    """The states of the N-player game by level, the highest first (:func:`level_states`
    of every :func:`level_sums`)."""
    return [level_states(game, L, seats) for L in level_sums(game)]


def _score_units(game) -> np.ndarray:
    space = game.space
    return np.array([x.score // space.rs.unit for x in space.states], dtype=np.int64)


def level_sums(game) -> list[int]:
    """The levels of the N-player game, the highest first: the sums of the units of every
    player's score that its states take (a bank raises the level unless it changes
    another player, a zero turn keeps it unless it costs a penalty)."""
    sums = np.zeros(1, dtype=np.int64)
    one = np.unique(_score_units(game))
    for _k in range(game.N):
        sums = np.unique(sums[:, None] + one[None, :])
    return [int(L) for L in sums[::-1]]


def level_states(game, level: int, seats: int | None = None) -> np.ndarray:
    """The states of one level, sorted (every seat's copy of a state in it), built from the
    player states' units alone: a cluster's coordinator holds one level at a time, never
    the whole game. ``seats``: the seats' copies (default ``game.seats``; 1: the states
    alone)."""
    m, N = game.m, game.N
    seats = game.seats if seats is None else seats
    units = _score_units(game)
    # the flat tuples (x_k, ..., x_{N-1}) with their units' sums, from the last player back
    # (at most m**(N-1) of them), keeping only the sums that players 0..k-1 can complete
    sums, flat = units, np.arange(m, dtype=np.int64)
    for k in range(N - 1, 0, -1):
        left = level - sums
        keep = (left >= k * units.min()) & (left <= k * units.max())
        sums, flat = sums[keep], flat[keep]
        if k > 1:
            width = m ** (N - k)
            sums = (units[:, None] + sums[None, :]).ravel()
            flat = (np.arange(m, dtype=np.int64)[:, None] * width + flat[None, :]).ravel()
    # the mover last, by its units: the level's states alone are built, never m**N of them
    order = np.argsort(sums, kind="stable")
    sums, flat = sums[order], flat[order]
    parts = []
    for u in np.unique(units):
        lo, hi = np.searchsorted(sums, level - u, "left"), np.searchsorted(sums, level - u, "right")
        if hi > lo:
            movers = np.flatnonzero(units == u).astype(np.int64)
            parts.append((movers[:, None] * game.M1 + flat[None, lo:hi]).ravel())
    lvl = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    return np.concatenate([c * game.total + lvl for c in range(seats)])


class StateValues:
    """What the level solver (:func:`_solve_level`) asks of the values: the movers' best
    turns against given bust values, which read the values of the states a turn ends in,
    the first guess of a bust value, and the values of states themselves, read and written.
    Here all of ``V`` is in this process; the cluster's coordinator
    (:mod:`thousand.solvers.cluster_nplayer`) answers the same from the blocks that hold it."""

    def __init__(self, V: np.ndarray, game: NPlayerGame, up: np.ndarray | None = None):
        self.V, self.game = V, game
        if up is not None:
            self.__dict__["up"] = up

    @cached_property
    def up(self) -> np.ndarray:
        """:func:`_one_step_up`, made when a first guess first needs it."""
        return _one_step_up(self.game.space)

    def turns(self, states: np.ndarray, z: np.ndarray, grad: bool = False):
        """:func:`_turns`: (own value, A, b, d) of the mover's best turn in each state."""
        return _turns(states, z, self.V, self.game, grad)

    def own_values(self, states: np.ndarray, z: np.ndarray):
        """:func:`_own_values`: the mover's best value and its derivative in ``z``."""
        return _own_values(states, z, self.V, self.game)

    def first_guess(self, states: np.ndarray) -> np.ndarray:
        """:func:`_first_guess`: the bust values a level's cycles start from."""
        return _first_guess(states, self.V, self.game, self.up)

    def tree_step(self, states: np.ndarray, after: np.ndarray) -> np.ndarray:
        """:func:`_tree_values`: states whose zero turn leads to ``after``, solved already."""
        return _tree_values(states, after, self.V, self.game)

    def best(self, states: np.ndarray) -> np.ndarray:
        """The mover's best value in each state against its bust value as it stands
        (:func:`certificate`'s term)."""
        return _own_values(states, self.V[self.game.bust_next(states), self.game.N - 1], self.V, self.game)[0]

    def read(self, states: np.ndarray) -> np.ndarray:
        return self.V[states]

    def write(self, states: np.ndarray, values: np.ndarray) -> None:
        self.V[states] = values


def _tree_values(states: np.ndarray, after: np.ndarray, V, game) -> np.ndarray:
    """The values of ``states`` whose zero turn leads to the states ``after``, whose values
    are known: the best response to that bust value is exact, one turn DP,
    ``V[s] = A(s) + b(s) S V[after]`` (``S``: the rotation that puts the mover last)."""
    known = V[after]
    _own, A, b, _d = _turns(states, known[:, game.N - 1], V, game)
    return A + b[:, None] * np.roll(known, 1, axis=1)


def _rotate(s: np.ndarray, m: int, M1: int, last: np.ndarray) -> np.ndarray:
    """(x_1, ..., x_{N-1}, last) for states s = (x_0, ..., x_{N-1})."""
    return (s % M1) * m + last


def _turns(states: np.ndarray, z: np.ndarray, V: np.ndarray, game, grad: bool = False):
    """The mover's best turn in every state against bust values ``z``: (own value, A, b, d)
    with A the value vector of the banks and instant wins, b the chance of a bust, and
    (``grad``) d the DP's derivative in ``z`` (b again, by the backward pass: what
    :func:`_own_values` compares between rounds)."""
    N = game.N
    own = np.empty(len(states))
    A = np.zeros((len(states), N))
    b = np.empty(len(states))
    d = np.empty(len(states)) if grad else None

    def mover(c, i, cols, rest):
        space = game.turn_space(c)
        W, bank_rows, win_rows = _bank_values(i, rest, V, game, seat=c)
        Ww = game.win_values(c, i, rest)
        stop_val = _stop_values(space, i, W[..., 0], bank_rows, win_rows, 1.0 if Ww is None else Ww[..., 0])
        own[cols], A[cols], b[cols], dc = _policy_ends(
            game.table, space, i, stop_val, z[cols], np.ones(len(cols)), W, bank_rows, win_rows, grad, Ww
        )
        if grad:
            d[cols] = dc

    _each_mover(mover, states, game)
    return own, A, b, d


# Threads pay where a mover's turns are long: the turn DP's work per group (columns x
# turn rows x the roll table's options) at least this much on average. Measured side by
# side, one thread and two (three players): Farkle to 3000 (about 1.4 million per group)
# 23.0 -> 15.1 s, plain to 700 (0.47 million) 50.7 -> 44.0 s, plain to 500 (0.24
# million) 17.3 -> 17.1 s, Pig to 100 (0.02 million) 23.3 -> 24.9 s; a level of two
# players' Farkle has one column per group and took twice as long on two threads.
PARALLEL_WORK = 1 << 18


def _each_mover(work, states: np.ndarray, game) -> None:
    """``work(seat, mover, cols, rest)`` for every group of :func:`_by_mover`, on
    ``game.threads`` threads: the groups write disjoint columns, and the kernel's turn DP
    releases the GIL, so the turns of different movers run side by side (one call has too
    few columns -- one mover against the others of a level -- to split by itself). Only
    where a group's turns are long enough (:data:`PARALLEL_WORK`): the rest of a group's
    work holds the GIL."""
    groups = list(_by_mover(states, game))
    if (
        game.threads > 1
        and len(groups) > 1
        and len(game.table.opt_points) * sum(len(g[2]) * (int(game.turn_space(g[0]).T[g[1]]) + 1) for g in groups)
        >= PARALLEL_WORK * len(groups)
    ):
        for _done in _pool(game.threads).map(lambda g: work(*g), groups):
            pass
    else:
        for g in groups:
            work(*g)


@cache
def _pool(threads: int) -> ThreadPoolExecutor:
    """One pool of ``threads`` workers per process, kept for every solve."""
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="thousand-nplayer")


def _by_mover(states: np.ndarray, game):
    """The states grouped by the mover's seat and player state: (seat, mover, the columns
    of ``states``, the others of each)."""
    seat, movers, rest = game.split(states)
    key = seat * game.m + movers
    for k in np.unique(key):
        cols = np.flatnonzero(key == k)
        c, i = divmod(int(k), game.m)
        yield c, i, cols, rest[cols]


@dataclass
class EndRows:
    """Mover ``i``'s turn ends in the N-player game: the totals ``rows`` at which its turn
    ends without a win (a bank, or a mid-turn end such as a dump or an overshoot), its next
    state there (``nxt``), the totals that win (``win_rows``), and ``opp`` (B, m): every
    other player's state after the end at each row (overtaking, push-off), or None where
    no end changes another player."""

    rows: np.ndarray
    nxt: np.ndarray
    win_rows: np.ndarray
    opp: np.ndarray | None


def end_rows(space) -> list[EndRows]:
    """:class:`EndRows` of every player state of ``space`` (closed under opponents' moves)."""
    moves = Moves(space.rs)
    maps = opponent_maps(space)
    out = []
    for i, e in enumerate(space.ends):
        nxt = np.where(space.stop_ok[i] != 0, space.stop_idx[i], space.forced_idx[i])
        ok = (space.stop_ok[i] != 0) | (space.forced_ok[i] != 0)
        ok[0] = False
        rows = np.flatnonzero(ok & (nxt >= 0))
        win_rows = np.flatnonzero(ok & (nxt == WIN_INDEX))
        opp = None
        if len(rows):
            after = [e.others_after(moves, int(t)) for t in rows]
            opp = maps.after(e.x.score, np.array([a for _b, a, _c in after]), np.array([c for _b, _a, c in after]))
            if np.array_equal(opp, np.broadcast_to(np.arange(len(space)), opp.shape)):
                opp = None
        out.append(EndRows(rows, nxt[rows], win_rows, opp))
    return out


def _moved(rest: np.ndarray, opp: np.ndarray, m: int, N: int) -> np.ndarray:
    """(B, K): the others ``rest`` (flat, in the order they move next) after each of the
    B ends whose changes ``opp`` (B, m) gives, digit by digit."""
    out = np.zeros((opp.shape[0], len(rest)), dtype=np.int64)
    for k in range(N - 1):
        out = out * m + opp[:, (rest // m ** (N - 2 - k)) % m]
    return out


def _bank_values(i: int, rest: np.ndarray, V: np.ndarray, game, own: bool = False, seat: int = 0):
    """The value vectors, seen by the mover (its own chance first), of every end of mover
    ``i``'s turn at a total without a win, against the others ``rest`` (flat index, in the
    order they move next), the mover in ``seat``: ``W`` (B, K, N) over the totals
    ``bank_rows``, and ``win_rows`` (the totals that win). ``own``: the mover's chance
    alone, ``W`` (B, K)."""
    succ, rows, win_rows = game.successors(i, rest, seat)
    if own:
        return V[succ, game.N - 1], rows, win_rows
    # seen by the mover: its own chance (the successor's last place) first -- one gather
    return V[succ[..., None], game.seen], rows, win_rows


def _own_values(states: np.ndarray, z: np.ndarray, V: np.ndarray, game):
    """The mover's best value in every state against bust values ``z``, and its derivative
    in ``z`` (the chance of a bust under the best decisions): the turn DP alone, no end
    distribution."""
    own, d = np.empty(len(states)), np.empty(len(states))

    def mover(seat, i, cols, rest):
        space = game.turn_space(seat)
        W, bank_rows, win_rows = _bank_values(i, rest, V, game, own=True, seat=seat)
        Ww = game.win_values(seat, i, rest)
        stop_val = _stop_values(space, i, W, bank_rows, win_rows, 1.0 if Ww is None else Ww[..., 0])
        for c in _chunks(len(cols)):
            # the end values serve as stop values and as mid-turn ones: each total has one kind
            tv = kernel.turn_dp(
                game.table,
                space.stop_ok[i],
                stop_val[:, c],
                space.forced_ok[i],
                stop_val[:, c],
                z[cols[c]],
                np.ones(len(cols[c])),
                grad=True,
            )
            own[cols[c]], d[cols[c]] = tv.start, tv.dstart

    _each_mover(mover, states, game)
    return own, d


def _chunks(K: int, size: int = 1024) -> list[slice]:
    """Column blocks for the turn DP's full tables ((T+2) x (dice+1) values per column):
    small enough to stay in cache, and to bound their memory."""
    return [slice(lo, min(lo + size, K)) for lo in range(0, K, size)]


def _stop_values(space, i: int, bank: np.ndarray, bank_rows, win_rows, win=1.0) -> np.ndarray:
    """The (T+1, K) end values of mover ``i``: ``bank`` (B, K) at the totals that end the
    turn without a win (a bank, or a mid-turn end), ``win`` (a number, or (W, K)) where the
    end wins."""
    stop_val = np.zeros((int(space.T[i]) + 1, bank.shape[1]))
    stop_val[bank_rows] = bank
    stop_val[win_rows] = win
    return stop_val


def _policy_ends(table, space, i: int, stop_val, z, w, W, bank_rows, win_rows, grad: bool = False, Ww=None):
    """The turn of mover ``i`` played by the decisions that maximise (``stop_val``, bust
    ``z``, instant win ``w``), valued by the true value vectors ``W`` of its banks (and
    ``Ww`` of its wins, None: the unit vector): (the maximised value, A, b, d) -- A the
    expected value vector of the banks and wins under those decisions, b their chance of a
    bust, d (``grad``, else None) the DP's derivative in ``z``. The decider's values and
    the true ones coincide for the equilibrium; an approximation decides by its own and is
    valued by the true ones."""
    K = len(z)
    own, A, b = np.empty(K), np.empty((K, W.shape[-1])), np.empty(K)
    d = np.empty(K) if grad else None
    for c in _chunks(K):
        tv, stop_p, b[c], win_p = _turn_ends(table, space, i, stop_val[:, c], z[c], w[c], grad)
        own[c] = tv.start
        if grad:
            d[c] = tv.dstart
        a = np.einsum("bk,bkn->kn", stop_p[bank_rows], W[:, c])
        if Ww is None:
            a[:, 0] += stop_p[win_rows].sum(axis=0) + win_p
        else:
            a += np.einsum("bk,bkn->kn", stop_p[win_rows], Ww[:, c])
            a[:, 0] += win_p
        A[c] = a
    return own, A, b, d


def turn_ends(table, space, i: int, stop_val, z, w):
    """The turn DP of mover ``i`` maximising (``stop_val``, ``z``, ``w``) and how its turn
    then ends: (the maximised value, P(end at t) (T+1, K) -- a bank or a mid-turn end,
    whichever the total has --, P(bust), P(instant win))."""
    tv, stop_p, bust_p, win_p = _turn_ends(table, space, i, stop_val, z, w)
    return tv.start, stop_p, bust_p, win_p


def _turn_ends(table, space, i: int, stop_val, z, w, grad: bool = False):
    """:func:`thousand.kernel.turn_ends` for mover ``i``: the end values ``stop_val`` serve
    as stop values and as mid-turn ones (each total has one kind)."""
    return kernel.turn_ends(table, space.stop_ok[i], stop_val, space.forced_ok[i], stop_val, z, w, grad=grad)


def _orbit_values(A: np.ndarray, b: np.ndarray, succ: np.ndarray, N: int, M: int | None = None) -> np.ndarray:
    """Closed-form values of cycles for fixed decisions (module docstring): row ``r``
    holds a state's A and b, ``succ[r]`` is the row its zero turn leads to; ``M`` steps
    (a multiple of N and of every cycle's length; N by default) bring each row back to
    itself with the players in place."""
    n = len(A)
    num = np.zeros((n, N))
    prod = np.ones(n)
    row = np.arange(n)
    for j in range(M or N):
        num += prod[:, None] * np.roll(A[row], j, axis=-1)
        prod = prod * b[row]
        row = succ[row]
    # a cycle that never ends the game (every mover always busts) wins nobody anything
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((prod < 1.0)[:, None], num / (1.0 - prod)[:, None], 0.0)


def _cycle_steps(succ: np.ndarray, N: int) -> int:
    """The least common multiple of N and the length of every cycle of ``succ`` (every
    row lies on a cycle)."""
    M = N
    rows = np.arange(len(succ))
    cur, k = succ.copy(), 1
    left = np.ones(len(succ), bool)
    while left.any():
        back = left & (cur == rows)
        if back.any():
            M = int(np.lcm(M, k))
            left &= ~back
        cur, k = succ[cur], k + 1
    return M


def _solve_level(states, values, mixed) -> int:
    """One level. A zero turn leads each state to one successor (the mover's zero turn,
    then the rotation), in this level or below it (a penalty). In the level these links
    form trees that end in cycles or leave the level. The cycles are small games of their
    own: :func:`_solve_cycles`. The trees are then solved from their ends outwards, one
    turn DP per state: its successor is known, so its best response is exact.
    ``values``: :class:`StateValues` (or the cluster's). Returns the rounds the cycles took."""
    game = values.game
    n = len(states)
    nxt = game.bust_next(states)
    pos = np.minimum(np.searchsorted(states, nxt), n - 1)
    succ = np.where(states[pos] == nxt, pos, -1)
    fronts, cyc = _links(succ)
    rounds = _solve_cycles(states[cyc], np.searchsorted(cyc, succ[cyc]), values, mixed) if len(cyc) else 0
    for front in reversed(fronts):
        values.write(states[front], values.tree_step(states[front], nxt[front]))
    return rounds


def _links(succ: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The functional graph ``succ`` (-1: a link out of it) taken apart: the rows on its
    cycles, and the others in fronts, peeled from the rows no link points to; taken in
    reverse, each front's successors are on a cycle, out of the graph, or in a later front."""
    n = len(succ)
    indeg = np.bincount(succ[succ >= 0], minlength=n)
    alive = np.ones(n, bool)
    fronts = []
    front = np.flatnonzero(indeg == 0)
    while len(front):
        fronts.append(front)
        alive[front] = False
        tgt = succ[front]
        tgt = tgt[tgt >= 0]
        np.subtract.at(indeg, tgt, 1)
        front = np.unique(tgt[indeg[tgt] == 0])
    return fronts, np.flatnonzero(alive)


def _solve_cycles(states, succ, values, mixed) -> int:
    """The states of a level on cycles of zero turns (``succ``: the row each one's zero
    turn leads to): best-response rounds on the cycles not yet settled (a cycle settles
    when its decisions repeat and its bust values stop moving), then :func:`_mix_orbit`
    for the cycles still cycling after :data:`MAX_ROUNDS` rounds. Returns the rounds taken."""
    game = values.game
    N = game.N
    n = len(states)
    M = _cycle_steps(succ, N)
    # each state's orbit, named by its smallest member (orbits are closed under succ)
    orb, cur = np.arange(n), succ.copy()
    for _k in range(M - 1):
        orb, cur = np.minimum(orb, cur), succ[cur]
    z = values.first_guess(states)
    A, b = np.zeros((n, N)), np.zeros(n)
    last_b = np.full(n, np.nan)
    last_d = np.full(n, np.nan)
    active = np.ones(n, bool)
    rounds = 0
    while active.any() and rounds < MAX_ROUNDS:
        rounds += 1
        idx = np.flatnonzero(active)
        # A and b change only with the decisions: the end distributions are redone where the
        # chance of a bust under the best decisions moved (a change of decisions that kept it
        # to the bit and changed the others' values would be a tie for the mover: still a
        # best response, and the certificate checks every state at the end)
        if rounds == 1:
            # every end distribution is new: one pass gives them and the DP's derivative
            _own, A[idx], b[idx], last_d[idx] = values.turns(states[idx], z[idx], grad=True)
        else:
            _own, d = values.own_values(states[idx], z[idx])
            redo = idx[d != last_d[idx]]
            last_d[idx] = d
            if len(redo):
                _own, A[redo], b[redo], _d = values.turns(states[redo], z[redo])
        vals = _orbit_values(A, b, succ, N, M)
        z_new = vals[succ, N - 1]
        still = (b != last_b) | (np.abs(z_new - z) > 1e-15)
        moving = np.zeros(n, bool)
        np.logical_or.at(moving, orb, still & active)
        settled = active & ~moving[orb]
        values.write(states[settled], vals[settled])
        last_b, z = b.copy(), z_new
        active &= ~settled
    if active.any():
        values.write(states[active], vals[active])
        _mix_cycling(states, succ, values, mixed, np.flatnonzero(active))
    return rounds


def _first_guess(states, V, game, up) -> np.ndarray:
    """The first guess of each mover's bust value ``z(s) = V[zero(s)][N-1]``: the same orbit
    with the mover's zero-turn state one, two and three steps higher (levels above, solved
    already) extrapolated by the parabola through them, ``3 z1 - 3 z2 + z3`` (a line or the
    one value where fewer exist; 1/N where none does), clipped to [0, 1]. The decisions of
    Farkle's movers change every 1e-4 or so of a bust value: a closer first guess leaves
    fewer of them to change in the second round, each change an end distribution to redo
    (Farkle to 3000, three players: 400,000 end distributions with the one value, 309,000
    with the line, 299,000 with the parabola). Only where the rounds start changes; they
    end at the same test."""
    N = game.N
    z = np.full(len(states), 1.0 / N)
    coef = {1: (1.0,), 2: (2.0, -1.0), 3: (3.0, -3.0, 1.0)}
    steps, ups = np.zeros(len(states), dtype=np.int64), []
    at = game.bust[game.split(states)[1]]
    for _k in range(3):
        at = np.where(at >= 0, up[np.maximum(at, 0)], -1)
        ups.append(at)
        steps += at >= 0
    for k, c in coef.items():
        rows = np.flatnonzero(steps == k)
        if len(rows):
            z[rows] = np.clip(
                sum(ck * V[game.after_zero(states[rows], ups[j][rows]), N - 1] for j, ck in enumerate(c)), 0.0, 1.0
            )
    return z


def _one_step_up(space) -> np.ndarray:
    """Per player state, the index of the same state one unit higher (-1 if none)."""
    u = space.rs.unit
    return np.array([space.index.get(x._replace(score=x.score + u), -1) for x in space.states], dtype=np.int64)


def _mix_cycling(states, succ, values, mixed, candidates) -> None:
    """Every orbit among ``candidates`` (rows of the level) whose best responses do not
    settle: :func:`_mix_orbit`."""
    game = values.game
    N = game.N
    vals = values.read(states)
    z_now = vals[succ, N - 1]
    own, _d = values.own_values(states[candidates], z_now[candidates])
    bad = candidates[np.abs(own - vals[candidates, 0]) > CERTIFICATE]
    done = set()
    for k in bad:
        if k in done:
            continue
        orbit = [int(k)]
        while int(succ[orbit[-1]]) != orbit[0]:
            orbit.append(int(succ[orbit[-1]]))
        done.update(orbit)
        if not _mix_orbit(np.array(orbit), states, z_now, values, mixed, np.inf if game.lowers else CERTIFICATE):
            raise NPlayerError(
                _(
                    "{0} players: no equilibrium found for the orbit of state {1} (best responses "
                    "cycle, and no candidate of pure decisions and mixtures at the breakpoints "
                    "near the cycle holds)"
                ).format(N, int(states[k]))
            )


def _policies(sub, r, values, lo: float = 0.0, hi: float = 1.0):
    """Every decision rule mover ``r`` of an orbit best-responds with, as its bust value
    runs over [lo, hi]: (breakpoints, [(A, b) per policy]) with policy k optimal between
    breakpoints k-1 and k (found on a grid, then each change bisected to the last bit; every
    grid point, and every bisection step of all the changes at once, in one batch). The
    first policy stands for the bust values below ``lo`` too, the last for those above ``hi``."""

    def at(zs):
        zs = np.asarray(zs, dtype=float)
        _own, A, b, _d = values.turns(np.full(len(zs), sub[r]), zs)
        return [(A[k], float(b[k])) for k in range(len(zs))]

    def same(p, q):
        # decisions whose ends agree to rounding are one policy: a tie the turn DP breaks
        # either way by the last bit would otherwise make thousands of breakpoints of noise
        return abs(p[1] - q[1]) <= POLICY_ATOL and float(np.max(np.abs(p[0] - q[0]))) <= POLICY_ATOL

    grid = np.linspace(lo, hi, 257)
    ps = at(grid)
    # open intervals (a, pa, c, pc) whose ends play different policies; each step bisects
    # them all, keeping the halves whose ends still differ, until they are one bit wide
    todo = [(grid[j - 1], ps[j - 1], grid[j], ps[j]) for j in range(1, len(grid)) if not same(ps[j - 1], ps[j])]
    found = []
    while todo:
        mids = [0.5 * (a + c) for a, _pa, c, _pc in todo]
        wide = [k for k, (a, _pa, c, _pc) in enumerate(todo) if mids[k] not in (a, c)]
        found += [(c, pc) for (a, _pa, c, pc), mid in zip(todo, mids) if mid in (a, c)]
        pm = at([mids[k] for k in wide])
        nxt = []
        for k, q in zip(wide, pm):
            a, pa, c, pc = todo[k]
            if not same(pa, q):
                nxt.append((a, pa, mids[k], q))
            if not same(q, pc):
                nxt.append((mids[k], q, c, pc))
        todo = nxt
    found.sort(key=lambda e: e[0])
    cuts, pols = [], [ps[0]]
    for c, p in found:
        if cuts and c - cuts[-1] <= POLICY_ATOL:
            # several policies change at one bust value (their values in z all cross there,
            # as when every bank of the turn leads to the same state): the mover is
            # indifferent among them only at that point, where mixing the first and the
            # last of them reaches every chance of a bust between
            pols[-1] = p
            continue
        cuts.append(c)
        pols.append(p)
    return np.array(cuts), pols


def _mix_orbit(orbit, states, z, values, mixed, settle: float = CERTIFICATE) -> bool:
    """An equilibrium of one orbit whose best responses cycle (:func:`_mix_orbit_in`),
    its movers' staircases listed first over a window of bust values around the current
    ones, widened when no certified equilibrium lies in it (:data:`ORBIT_WINDOWS`; only the
    whole of [0, 1] keeps a candidate of gain up to ``settle``). A window changes only
    where the search looks: whatever it finds is checked by the turn DP (:func:`_accept`).
    Farkle's movers step through thousands of policies over [0, 1], and listing them all
    (a batched turn DP per grid point and bisection step) was most of the mixing's time."""
    z0 = z[orbit]
    for half in ORBIT_WINDOWS:
        window = [(0.0, 1.0) if half is None else (max(0.0, zr - half), min(1.0, zr + half)) for zr in z0]
        if _mix_orbit_in(orbit, states, z, values, mixed, settle if half is None else CERTIFICATE, window):
            return True
    return False


def _mix_orbit_in(orbit, states, z, values, mixed, settle: float, window) -> bool:
    """An equilibrium of one orbit whose best responses cycle (module docstring), the
    staircases of mover r listed over the bust values ``window[r]``.

    Each mover's best response, as its bust value z grows, steps through a list of
    policies at breakpoints (:func:`_policies`); a strategy is a position theta along that
    list (a fraction mixes two neighbours), and the orbit's values are linear-fractional in
    the mixtures. An equilibrium is a theta whose own bust values put every mover on its
    staircase: inside its policy's interval, or at the breakpoint where it mixes. The
    staircases are smoothed by ramps of width eps, the smooth fixed point is followed as
    eps shrinks to 1e-13, and the exact equilibrium is then solved for the movers found
    mixing and checked by the turn DP. Failing all of that, the candidate of least gain
    is kept if its gain is at most ``settle`` (a sweep whose lower levels are not final
    yet keeps it whatever its gain: the certificate judges the end)."""
    orb = _Orbit(orbit, states, values, window)
    theta = np.array([float(np.searchsorted(orb.lists[r][0], z[orbit][r])) for r in range(orb.L)])
    pure = _pure_equilibria(orb.lists, orb.succ, orb.N, orb.M, theta)
    if pure is not None:
        return _accept(pure.astype(float), [], orb.zs, orb.sub, values, mixed)
    theta = orb.smoothed_point(theta)
    combos = orb.candidates(theta)
    # first exactly: the mixers' weights put their bust values on their breakpoints and the
    # pure movers' inside their intervals; then, where no combination holds exactly (dense
    # staircases, as Farkle's, where a mover's own weight barely moves its bust value), the
    # same candidates and the smoothed point itself, kept if the certificate holds: no
    # mover gains more than CERTIFICATE by its best response
    for combo in combos:
        th = orb.solve_mixers(combo, theta, strict=True)
        if (
            th is not None
            and orb.pure_movers_inside(combo, th)
            and _accept(th, orb.mixers(combo), orb.zs, orb.sub, values, mixed)
        ):
            return True
    best = _LeastGain(orb, values)
    if not best.consider(theta, [r for r in range(orb.L) if theta[r] != np.floor(theta[r])]):
        for combo in combos:
            th = orb.solve_mixers(combo, theta, strict=False)
            if th is not None and best.consider(th, orb.mixers(combo)):
                break
    return best.th is not None and _accept(best.th, best.frac, orb.zs, orb.sub, values, mixed, bound=settle)


class _LeastGain:
    """The relaxed pass's candidate of least gain so far (:func:`_gain`)."""

    def __init__(self, orb, values):
        self.orb, self.values = orb, values
        self.gain, self.th, self.frac = np.inf, None, None

    def consider(self, th, frac) -> bool:
        """Keep ``th`` if it gains least so far; whether it is an equilibrium outright."""
        g = _gain(th, self.orb.zs, self.orb.sub, self.values)
        if g < self.gain:
            self.gain, self.th, self.frac = g, th, frac
        return g <= 1e-12


class _Orbit:
    """One orbit's movers, each with its staircase of best responses over its bust value
    (:func:`_policies`), and the orbit's values under strategies ``theta`` (a position along
    each mover's list of policies; a fraction mixes two neighbours)."""

    def __init__(self, orbit, states, values, window):
        self.L, self.N = len(orbit), values.game.N
        self.M = self.L * self.N // gcd(self.L, self.N)  # steps round the orbit until it is back, the players in place
        self.sub = states[orbit]
        self.succ = np.roll(np.arange(self.L), -1)
        self.lists = [_policies(self.sub, r, values, *window[r]) for r in range(self.L)]
        self.K = [len(p) - 1 for _c, p in self.lists]
        # the policies as plain floats: the iterations below evaluate the orbit tens of
        # thousands of times on a handful of numbers, where numpy's per-call cost dominates
        self.polA = [[tuple(float(v) for v in p[0]) for p in pols] for _c, pols in self.lists]
        self.polb = [[float(p[1]) for p in pols] for _c, pols in self.lists]
        self.cutl = [[float(c) for c in cuts] for cuts, _p in self.lists]

    def strategy(self, r, th):
        K, polA, polb = self.K, self.polA, self.polb
        if K[r] == 0:
            return polA[r][0], polb[r][0]
        th = min(max(float(th), 0.0), float(K[r]))
        k = min(int(th), K[r] - 1)
        w = th - k
        a0, a1 = polA[r][k], polA[r][k + 1]
        return tuple((1 - w) * x + w * y for x, y in zip(a0, a1)), (1 - w) * polb[r][k] + w * polb[r][k + 1]

    def zs(self, theta, full=False):
        """The bust value of every mover of the orbit for strategies ``theta`` (with
        ``full``, also the orbit's value vectors): :func:`_orbit_values` on floats."""
        L, M, N = self.L, self.M, self.N
        Ab = [self.strategy(r, theta[r]) for r in range(L)]
        loop = 1.0
        for j in range(M):
            loop *= Ab[j % L][1]
        vals = []
        for r in range(L):
            v = [0.0] * N
            prod = 1.0
            for j in range(M):
                a, bj = Ab[(r + j) % L]
                for n in range(N):
                    v[n] += prod * a[(n - j) % N]
                prod *= bj
            # a loop that never ends the game (every mover always busts) wins nobody anything
            vals.append([x / (1.0 - loop) if loop < 1.0 else 0.0 for x in v])
        z_of = [vals[(r + 1) % L][N - 1] for r in range(L)]
        return (np.array(vals), np.array(z_of)) if full else z_of

    def stair(self, r, zr, eps):
        # sum over the sorted cuts c of clip((zr - c) / eps + 1/2, 0, 1): the cuts below
        # zr - eps/2 count 1, those inside the ramp their fraction
        cuts = self.cutl[r]
        lo, hi = bisect_left(cuts, zr - 0.5 * eps), bisect_right(cuts, zr + 0.5 * eps)
        return lo + sum(min(max((zr - c) / eps + 0.5, 0.0), 1.0) for c in cuts[lo:hi])

    def smoothed_point(self, theta):
        """No pure equilibrium: follow the smoothed staircases (a damped fixed-point
        iteration, the ramps narrowing to 1e-13); the last width at which the iteration
        settled is kept (narrower ones get stiff)."""
        for eps in 10.0 ** -np.arange(2, 14):
            th = [float(v) for v in theta]
            for _k in range(4000):
                zz = self.zs(th)
                target = [self.stair(r, zz[r], eps) for r in range(self.L)]
                gap = max(abs(a - b) for a, b in zip(target, th))
                if gap < 1e-12:
                    break
                th = [0.98 * a + 0.02 * b for a, b in zip(th, target)]
            if gap > 1e-9:
                break
            theta = np.array(th)
        return theta

    def candidates(self, theta) -> list:
        """Near the smoothed point (two policies either side) each mover keeps a policy or
        mixes two neighbours at their breakpoint: the combinations, fewest mixtures first,
        then nearest the smoothed point."""
        from itertools import product

        lo = np.floor(theta).astype(int)
        choices = []
        for r in range(self.L):
            ks = range(max(0, lo[r] - 2), min(self.K[r], lo[r] + 2) + 1)
            choices.append([("pure", k) for k in ks] + [("mix", k) for k in ks if k + 1 <= self.K[r]])

        def rank(c):
            return (
                sum(kind == "mix" for kind, _k in c),
                sum(abs(k + (0.5 if kind == "mix" else 0.0) - theta[r]) for r, (kind, k) in enumerate(c)),
            )

        return sorted(product(*choices), key=rank)

    @staticmethod
    def mixers(combo) -> list[int]:
        return [r for r, (kind, _k) in enumerate(combo) if kind == "mix"]

    def solve_mixers(self, combo, theta, strict: bool):
        """The strategies of ``combo`` with the mixers' weights that put their bust values on
        their breakpoints (a root, or least squares inside the box of weights); None where
        the weights leave [0, 1], or, ``strict``, where they miss the breakpoints."""
        from scipy import optimize

        frac = self.mixers(combo)
        th = np.array([k for _kind, k in combo], dtype=float)
        if not frac:
            return th

        def G(w):
            t = th.copy()
            t[frac] += w
            zz = self.zs(t)
            return np.array([zz[r] - self.lists[r][0][int(th[r])] for r in frac])

        w0 = np.clip(theta[frac] - th[frac], 0.01, 0.99)
        w = optimize.root(G, w0, method="hybr", tol=1e-16).x
        if not strict or np.max(np.abs(G(np.clip(w, 0, 1)))) > 1e-12:
            # weakly coupled mixers: least squares inside the box of weights
            ls = optimize.least_squares(G, w0, bounds=(0.0, 1.0), xtol=1e-15, ftol=1e-15, gtol=1e-15)
            if np.max(np.abs(ls.fun)) < np.max(np.abs(G(np.clip(w, 0, 1)))):
                w = ls.x
        if not np.all((w > -1e-12) & (w < 1 + 1e-12)):
            return None
        if strict and np.max(np.abs(G(np.clip(w, 0, 1)))) > 1e-12:
            return None
        th = th.copy()
        th[frac] += np.clip(w, 0.0, 1.0)
        return th

    def pure_movers_inside(self, combo, th) -> bool:
        """Whether every mover of ``combo`` that keeps one policy has its bust value inside
        that policy's interval."""
        zz = self.zs(th)
        for r, (kind, k) in enumerate(combo):
            if kind == "pure":
                cuts = self.lists[r][0]
                a = cuts[k - 1] if k > 0 else -np.inf
                c = cuts[k] if k < len(cuts) else np.inf
                if not a - 1e-13 <= zz[r] <= c + 1e-13:
                    return False
        return True


def _gain(th, zs, sub, values) -> float:
    """The most any mover of the orbit gains by its best response to strategies ``th``."""
    vals, zz = zs(th, full=True)
    own, _d = values.own_values(sub, zz)
    return float(np.max(own - vals[:, 0]))


def _accept(th, frac, zs, sub, values, mixed, bound: float = CERTIFICATE) -> bool:
    """Store the orbit's values for strategies ``th`` if every mover's best value against
    its bust value (the turn DP) is its value in the orbit, to ``bound``."""
    if _gain(th, zs, sub, values) > bound:
        return False
    values.write(sub, zs(th, full=True)[0])
    for r in frac:
        mixed[int(sub[r])] = float(th[r] - np.floor(th[r]))
    return True


def _pure_equilibria(lists, succ, N, M, near, limit: int = 2_000_000):
    """The pure equilibrium of an orbit nearest (in policy positions) to ``near``, or None:
    every combination of the movers' policies is solved in closed form at once and kept
    when each mover's bust value lies in its policy's interval."""
    L = len(lists)
    sizes = [len(p) for _c, p in lists]
    if int(np.prod(sizes)) > limit:
        return None
    idx = np.indices(sizes).reshape(L, -1)  # (L, C) policy of each mover
    A = np.stack([np.array([p[0] for p in lists[r][1]])[idx[r]] for r in range(L)])  # (L, C, N)
    b = np.stack([np.array([p[1] for p in lists[r][1]])[idx[r]] for r in range(L)])  # (L, C)
    ok = np.ones(idx.shape[1], bool)
    for r in range(L):
        # the value of the state after mover r's bust, seen from r+1: the closed form at succ[r]
        # (M steps go round the orbit until it is back with the players in place)
        num = np.zeros((idx.shape[1], N))
        prod = np.ones(idx.shape[1])
        row = succ[r]
        for j in range(M):
            num += prod[:, None] * np.roll(A[row], j, axis=-1)
            prod = prod * b[row]
            row = succ[row]
        with np.errstate(divide="ignore", invalid="ignore"):
            zr = np.where(prod < 1.0, num[:, N - 1] / (1.0 - prod), 0.0)
        cuts = lists[r][0]
        lo = np.concatenate([[-np.inf], cuts])[idx[r]]
        hi = np.concatenate([cuts, [np.inf]])[idx[r]]
        ok &= (zr >= lo - 1e-13) & (zr <= hi + 1e-13)
    found = np.flatnonzero(ok)
    if not len(found):
        return None
    dist = np.abs(idx[:, found] - np.asarray(near)[:, None]).sum(axis=0)
    return idx[:, found[np.argmin(dist)]]


def mixed_options(V: np.ndarray, game, states) -> np.ndarray:
    """The two turn policies mixed in each of ``states`` (flat rows where the solution
    mixes), as (len(states), 2, N + 1): for the policy below the breakpoint and the one
    above it, its chance of a bust ``b`` and then ``A``, every player's chance (mover
    first) from its banks and instant wins, so that the state's values are

        V[s] = sum over the two of  weight_k (A_k + b_k S V[after a bust])

    (weight_above = the stored weight; ``S`` puts the mover first). The breakpoint is the
    mover's own chance after a bust, ``V[after a bust][N - 1]``; both policies are best
    there. They are found as the solver found them (:func:`_policies` on a window of 1e-9
    round the breakpoint)."""
    states = np.asarray(states, dtype=np.int64)
    out = np.zeros((len(states), 2, game.N + 1))
    values = StateValues(V, game)
    for j, s in enumerate(states):
        z = float(V[game.bust_next(np.array([s]))[0], game.N - 1])
        cuts, pols = _policies(np.array([s]), 0, values, max(0.0, z - 1e-9), min(1.0, z + 1e-9))
        k = int(np.argmin(np.abs(cuts - z))) if len(cuts) else 0
        for side, (A, b) in enumerate(pols[k : k + 2] if len(pols) > 1 else pols * 2):
            out[j, side, 0], out[j, side, 1:] = b, A
    return out


def certificate(V: np.ndarray, game) -> float:
    """The largest gain of a deviation: max over states of (the mover's best value by the
    turn DP against the equilibrium's bust value) - (its equilibrium value)."""
    states = np.arange(game.seats * game.total)
    values = StateValues(V, game)
    worst = 0.0
    for chunk in np.array_split(states, max(1, len(states) // 200_000)):
        worst = max(worst, float(np.max(values.best(chunk) - V[chunk, 0])))
    return worst
