"""Objective ``duel``: the probability that the player to move wins, both playing optimally.

With ``P(x, y)`` the win probability of the mover in state ``x`` against an
opponent in state ``y``, at the start of the mover's turn,

    P(x, y) = TurnDP_x( stop[t]   = 1                   if bank(x, t) wins
                                  = 1 - P(y_t, bank(x, t))  otherwise,
                        forced[t] = the same for a mid-turn end,
                        Z = 1 - P(y, zero(x)),  W = 1 )

where ``y_t`` is the opponent after the mover's score went up (push-off,
overtaking) and ``TurnDP_x`` is :func:`thousand.kernel.turn_dp`, run for one
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
previous pass. Without penalties (Pig, plain, Farkle) one pass is exact.

Interface passes (rulesets whose penalties land on few pairs). A pass reads a
value before it solves it only where a penalty leads to a pair of the same level or
a lower one (:meth:`DuelModel.interface`); with each level's DPs re-run until nothing
moves, every value a pass computes is a function of those values ``u``, so the duel is
the fixed point of the small map ``u -> pass(u)``. Where ``u`` has at most
:data:`INTERFACE_MAX` pairs (admission: one, the player pushed back to the opening
score against the player on the barrel) the passes are mixed by a multisecant
(Anderson) step fitted to the residuals at ``u`` and applied to every value, which
settles in about ``|u| + 3`` passes.

Policy iteration (other rulesets with penalties). With every turn's decisions held
fixed the equation is linear, ``(I + M) P = c``: ``M`` holds the probability
that the turn from a pair hands the game over to each successor pair (the end
distribution of the greedy turn, :func:`thousand.kernel.duel_policy`) and ``c``
the rest (wins). Once passes have brought the largest change below
:data:`POLICY_START` (or after :data:`POLICY_PASSES` passes), each round runs one Jacobi DP pass -- the Bellman
residual and the greedy policy of every pair -- and solves that policy's
system approximately -- a Newton step ``P += (I + M~)^-1 (TurnDP(P) - P)`` with
the small entries of ``M`` left out (level-ordered Gauss-Seidel sweeps,
Anderson-accelerated) -- until the pass finds the residual at most ``tol``.

With ``equal_turns`` (docs/rules.md section 7) the seat of the mover enters the
state: ``P_A(x, y)`` for a first-seat mover against a second-seat opponent and
``P_B(x, y)`` the other way round, with the same equation except

    P_A: stop/forced[t] = 1 - L(y, min(s_x + t, F_max))   if bank(x, t) wins
    P_B: stop/forced[t] = 1                                if bank(x, t) wins

and each seat's non-winning ends read the other seat's values. ``L(y, F)`` is
the second seat's chance (a tie counted 1/2) of beating the final total ``F`` in
one last turn: a turn DP per state ``y`` with one column per ``F``
(:func:`thousand.solvers.lastturn.last_turn_values`). Final totals above the horizon ``F_max``
(:func:`thousand.solvers.lastturn.last_turn_horizon`) count as ``F_max``, which moves no value by more
than 1e-16. The states are doubled, ``(x, first)`` and ``(x, second)``, so that
the levels above and :func:`thousand.kernel.duel_level` apply unchanged; only
the cross-seat pairs are solved (:class:`DuelModel`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as spla

from thousand import kernel
from thousand.base.errors import ThousandError
from thousand.engine.ends import TurnEnds
from thousand.engine.player import WIN, Moves, PlayerState
from thousand.engine.states import WIN_INDEX, StateSpace, build_state_space, opponent_maps
from thousand.rules.ruleset import Ruleset

from .lastturn import first_seat_T, last_turn_horizon, last_turn_table
from .store import ValueStore, values_of

__all__ = [
    "CHORD_GAIN",
    "EVAL_DEPTH",
    "EVAL_SHARE",
    "EVAL_STALL",
    "FRAME_COLUMNS",
    "HELD_FACTOR",
    "INTERFACE_DEPTH",
    "INTERFACE_MAX",
    "INTERFACE_PASSES",
    "LOST_WAY",
    "MAX_PAIRS",
    "MAX_ROUNDS",
    "MAX_SWEEPS",
    "METHODS",
    "POLICY_DROP",
    "POLICY_PASSES",
    "POLICY_RESTART",
    "POLICY_START",
    "RERUN",
    "STALL_PASSES",
    "TOO_MANY_ROUNDS",
    "DuelDiverges",
    "DuelModel",
    "DuelSolution",
    "bellman_residual",
    "level_links",
    "level_movers",
    "policy_memory_budget",
    "seat_profile_values",
    "solve_duel",
    "stale_busts",
]

MAX_PAIRS = 60_000_000  # 480 MB of float64 values; more does not fit the solver's layout


class DuelModel:
    """The pair state space and every mover's turn ends (:class:`thousand.kernel.DuelPlans`).

    Without ``equal_turns`` a state of the solver is a player state (``n`` of
    them, ``n = players``) and every pair ``(x, y)`` is solved. With
    ``equal_turns`` the seat of the mover matters and enters the state: the
    solver's states are ``(x, first)`` = index ``i`` and ``(x, second)`` =
    index ``players + i`` (``n = 2 players``), and only the cross-seat pairs
    are solved (a first-seat mover faces a second-seat opponent and back:
    :attr:`sides`). The first seat's turns run to the horizon
    :attr:`horizon` (see :func:`last_turn_horizon`) and its winning rows are
    worth ``1 - L(y, F)`` (:func:`last_turn_values`, through
    ``plans.win_col``/``plans.win_L``); the second seat's wins are final.
    """

    def __init__(
        self,
        rs: Ruleset,
        space: StateSpace | None = None,
        table: kernel.RollTable | None = None,
        max_pairs: int | None = MAX_PAIRS,
    ):
        self.rs = rs
        self.moves = Moves(rs)
        self.space = space or build_state_space(rs, opponents=True)
        m = self.players = len(self.space)
        self.equal_turns = bool(rs.equal_turns)
        seats = 2 if self.equal_turns else 1
        n = self.n = seats * m
        self.pairs = seats * m * m  # the pairs solved (cross-seat ones only with equal_turns)
        # the in-memory solver's limit; an out-of-core solve (thousand.solvers.store) passes None
        if max_pairs is not None and n * n > max_pairs:
            if self.equal_turns:
                raise ThousandError(
                    f"{rs.name}: {m:,} player states make {self.pairs:,} pairs (equal_turns: each seat "
                    f"against the other), whose value matrix needs {8 * n * n / 2**30:,.1f} GiB; the duel "
                    f"solver holds {max_pairs:,} values ({8 * max_pairs // 10**6} MB) in memory"
                )
            raise ThousandError(
                f"{rs.name}: {m} player states make {m * m:,} pairs, more than the duel "
                f"solver holds in memory ({max_pairs:,})"
            )
        st = self.space.states
        idx = self.space.index
        mv = self.moves
        u = rs.unit
        # the roll table, and with it the kernel backend, every solve of this model runs on
        table = self.table = table or kernel.roll_table(rs)
        self.horizon = last_turn_horizon(rs, table, st) if self.equal_turns else None
        # blocks of solver states: (offset, the turn ends of each state, whether its wins leave a last turn)
        blocks = [(0, list(self.space.ends), False)]
        if self.equal_turns:
            first = [TurnEnds.of(mv, x, T=first_seat_T(rs, mv, x, self.horizon)) for x in st]
            blocks = [(0, first, True), (m, list(self.space.ends), False)]
        ends_all = [e for _, ends, _ in blocks for e in ends]
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([e.T + 1 for e in ends_all], out=ptr[1:])
        nxt = np.full(ptr[-1], -2, dtype=np.int64)
        after = np.zeros(ptr[-1], dtype=np.int64)
        climbed = np.zeros(ptr[-1], dtype=np.uint8)
        win_col = np.full(ptr[-1], -1, dtype=np.int64)
        for off, ends, last_turn in blocks:
            for i, (x, e) in enumerate(zip(st, ends)):
                a = ptr[off + i]
                after[a : ptr[off + i + 1]] = x.score
                for t in range(1, e.T + 1):
                    y = e.stop_next[t] if e.stop_ok[t] else e.forced_next[t]
                    if y is None:
                        continue
                    if y == WIN:
                        nxt[a + t] = WIN_INDEX
                        # A first-seat win is settled at the win check (docs/rules.md section 3, step 1):
                        # the total F = s + t is final (uncapped, beyond the horizon valued as at
                        # it), and the opponent plays its last turn from where it stands. Push-off
                        # and overtaking cannot change that turn's outcome: this bank does not move
                        # the opponent (the mover has finished), and what the opponent's last bank
                        # does to the finished mover cannot change F. So the row is 1 - L(y, F).
                        if last_turn:
                            win_col[a + t] = (min(x.score + t * u, self.horizon) - rs.goal) // u
                        continue
                    nxt[a + t] = off + idx[y]
                    _before, after[a + t], climbed[a + t] = e.others_after(mv, t)
        one = lambda a: np.tile(np.asarray(a), seats)  # noqa: E731  per-state arrays, one copy per seat
        shift = np.repeat(np.arange(seats) * m, m)  # ... and state indices into their own seat's block
        score = one([x.score for x in st]).astype(np.int64)
        extra = {}
        if self.equal_turns:
            targets = np.arange(rs.goal, self.horizon + 1, u)
            win_L = np.zeros((n, len(targets)))
            win_L[m:] = last_turn_table(rs, table, st, targets)
            extra = dict(win_col=win_col, win_L=win_L)
            self.last_turn = win_L[m:]
            self.targets = targets
        others = opponent_maps(self.space)
        self.plans = kernel.DuelPlans(
            ptr=ptr,
            stop_ok=np.concatenate([e.stop_ok for e in ends_all]).astype(np.uint8),
            forced_ok=np.concatenate([e.forced_ok for e in ends_all]).astype(np.uint8),
            next=nxt,
            after=after,
            climbed=climbed,
            bust=one(self.space.bust_idx).astype(np.int64) + shift,
            score=score,
            overtaken=one(others.overtaken) + shift,
            pushed=one(others.pushed) + shift,
            on_barrel=one(others.on_barrel).astype(np.uint8),
            **extra,
        )
        self.score = score
        # the state one unit higher with the same counters (-1 if none): where a level's first values come from
        up = np.array([idx.get(x._replace(score=x.score + u), -1) for x in st], dtype=np.int64)
        self.up = np.where(one(up) >= 0, one(up) + shift, -1)
        self.frame = self._frames(st)
        # score groups of each seat's block: states are sorted by descending score, so each is a range
        sc = score[:m]
        bounds = np.flatnonzero(np.diff(sc)) + 1
        starts = np.concatenate([[0], bounds])
        stops = np.concatenate([bounds, [m]])
        block = [{int(sc[a]): (int(a) + off, int(b) + off) for a, b in zip(starts, stops)} for off in range(0, n, m)]
        self.groups = block[0]
        # (mover groups, opponent groups) of the pairs that are solved
        self.sides = [(block[0], block[1]), (block[1], block[0])] if self.equal_turns else [(block[0], block[0])]

    def _frames(self, st: list[PlayerState]) -> np.ndarray:
        """A frame id per solver state: states whose turns are each other's shifted by
        their scores (the same counters, the same last total in points, the same banking
        and forced ends at every total t >= 1 reached from each) share an id, and one
        level's movers of a frame share one vectorised turn DP
        (:func:`thousand.kernel.duel_frames`)."""
        p, u, m = self.plans, self.rs.unit, self.players
        T = np.diff(p.ptr) - 1
        frame = np.empty(self.n, dtype=np.int64)
        groups: dict = {}
        for i in range(self.n):
            x = st[i % m]
            groups.setdefault((i // m, x._replace(score=0), x.score + int(T[i]) * u), []).append(i)
        next_id = 0
        for members in groups.values():
            base = None
            for i in sorted(members, key=lambda i: self.score[i]):  # lowest score: the longest turn
                if base is not None:
                    r0 = (self.score[i] - self.score[base]) // u
                    a, b = p.ptr[i] + 1, p.ptr[base] + r0 + 1
                    k = T[i]
                    if not (
                        np.array_equal(p.stop_ok[a : a + k], p.stop_ok[b : b + k])
                        and np.array_equal(p.forced_ok[a : a + k], p.forced_ok[b : b + k])
                    ):
                        base = None
                if base is None:
                    base, next_id = i, next_id + 1
                frame[i] = next_id - 1
        return frame

    def index(self, x: PlayerState, seat: int = 0) -> int:
        """The solver's state index of player state ``x`` in ``seat`` (0 first, 1 second)."""
        return seat * self.players + self.space.index[x]

    def opponents(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(movers, lo, hi)``: every solved pair, mover ``movers[j]`` against ``lo[j]:hi[j]``."""
        movers = np.arange(self.n, dtype=np.int64)
        if not self.equal_turns:
            return movers, np.zeros(self.n, np.int64), np.full(self.n, self.n, np.int64)
        m = self.players
        lo = np.where(movers < m, m, 0).astype(np.int64)
        return movers, lo, lo + m

    def table_values(self, P: np.ndarray) -> np.ndarray:
        """The values a table stores: ``P`` (n, n), or with equal_turns (2, players,
        players): ``[0][i, j]`` = P(first-seat mover i, second-seat opponent j),
        ``[1][i, j]`` = P(second-seat mover i, first-seat opponent j)."""
        if not self.equal_turns:
            return P
        m = self.players
        return np.stack([P[:m, m:], P[m:, :m]])

    def from_table_values(self, values: np.ndarray) -> np.ndarray:
        """``P`` (n, n) from a table's values (:meth:`table_values`); with equal_turns the
        same-seat pairs, which no turn reaches, hold 1/2."""
        values = np.asarray(values, dtype=np.float64)
        if not self.equal_turns:
            return np.array(values)
        m = self.players
        P = np.full((self.n, self.n), 0.5)
        P[:m, m:], P[m:, :m] = values[0], values[1]
        return P

    def interface(self, limit: int) -> np.ndarray | None:
        """The pairs a pass reads before it solves them, as indices into ``Q.ravel()``
        (``Q[y, x] = P(x, y)``), sorted; None when there are more than ``limit``.

        A pass solves the levels from the top down and each level's bust links exactly,
        so it reads a value before solving it only where an end leads to a pair of the
        same level or a lower one other than through an in-level bust: a penalty
        (push-off, overtaking, a fall, samosval, bolts, a pit's roll-back). With those
        values ``u`` held, every value a pass computes is a function of ``u``, and the
        duel's fixed point is the fixed point of ``u -> pass(u)`` restricted to them
        (:func:`solve_duel`, interface passes). The open-minimum push-off of
        ``admission`` sends every such end to one pair; bolts and overtaking, to about
        as many pairs as there are states."""
        p, n, sc = self.plans, self.n, self.plans.score
        ident = np.arange(n)
        # opponents an end can move: on the barrel (pushed off) or overtakeable
        movable = (p.on_barrel.astype(bool) & (p.pushed != ident)) | (p.overtaken != ident)
        movers, lo, hi = self.opponents()
        found: set[int] = set()
        for i in movers:
            Y = np.arange(lo[i], hi[i])
            a, b = p.ptr[i], p.ptr[i + 1]
            rows = a + np.flatnonzero((p.next[a:b] >= 0) & ((p.stop_ok[a:b] | p.forced_ok[a:b]) > 0))
            lowers = sc[p.next[rows]] <= sc[i]  # ends that do not raise the mover's score
            # an end that raises it lowers the level only where it moves the opponent
            for R, Ys in ((rows[lowers], Y), (rows[~lowers], Y[movable[Y]])):
                if len(R) and len(Ys):
                    opp = kernel.end_opponents(p, i, R, Ys)
                    nxt = p.next[R][:, None]
                    down = sc[opp] + sc[nxt] <= sc[i] + sc[Ys][None, :]
                    found.update((nxt * n + opp)[down].tolist())
            if sc[p.bust[i]] < sc[i]:  # a zero turn's penalty (bolts)
                found.update((p.bust[i] * n + Y).tolist())
            if len(found) > limit:
                return None
        return np.array(sorted(found), dtype=np.int64)

    def lowers_levels(self) -> bool:
        """Whether any move lowers the sum of the scores (penalties): then the
        levels must be swept more than once."""
        p = self.plans
        mover = np.repeat(np.arange(self.n), np.diff(p.ptr))
        ok = p.next >= 0
        down = np.any(p.score[p.next[ok]] < p.score[mover[ok]])
        same = np.arange(self.n)
        return bool(
            down or np.any(p.score[p.bust] < p.score) or np.any(p.overtaken != same) or np.any(p.pushed != same)
        )


@dataclass
class _Level:
    """The pairs of one level: movers, their opponent ranges, and bust successors."""

    movers: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    px: np.ndarray  # mover of each pair
    py: np.ndarray  # opponent of each pair
    succ: np.ndarray  # index (in this level) of the pair a bust leads to, or -1
    d_rows: np.ndarray  # pairs whose bust successor is in the level


def level_movers(model: DuelModel, L: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(movers, lo, hi)``: the movers of level ``L`` in the level's order, mover ``movers[j]``
    facing the opponents ``lo[j]:hi[j]`` (the level's pairs, mover by mover)."""
    movers, lo, hi = [], [], []
    for groups, opp in model.sides:
        for s in sorted(groups):
            if L - s in opp:
                a, b = groups[s]
                ya, yb = opp[L - s]
                movers.extend(range(a, b))
                lo.extend([ya] * (b - a))
                hi.extend([yb] * (b - a))
    return tuple(np.array(v, dtype=np.int64) for v in (movers, lo, hi))


def _level(model: DuelModel, L: int, mover_pos: np.ndarray) -> _Level:
    """The solved pairs (:attr:`DuelModel.sides`) whose scores sum to ``L``
    (``mover_pos``: n entries of -1, scratch, left as found)."""
    movers, lo, hi = level_movers(model, L)
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
    return _Level(movers, lo, hi, px, py, succ, np.flatnonzero(inside))


def _level_sums(model: DuelModel) -> list[int]:
    """The levels (sums of both scores) that hold solved pairs, highest first."""
    return sorted({a + b for mg, og in model.sides for a in mg for b in og}, reverse=True)


def _levels(model: DuelModel) -> list[_Level]:
    """The solved pairs by level, highest first (:func:`_level`)."""
    mover_pos = np.full(model.n, -1, dtype=np.int64)
    return [_level(model, L, mover_pos) for L in _level_sums(model)]


class _LevelsOneAtATime:
    """The levels of :func:`_levels`, each built when it is reached and then dropped: the
    out-of-core solve holds one level's index arrays (about 32 bytes per pair) instead
    of every level's."""

    def __init__(self, model: DuelModel):
        self.model, self.sums = model, _level_sums(model)
        self.mover_pos = np.full(model.n, -1, dtype=np.int64)

    def __iter__(self):
        return (_level(self.model, L, self.mover_pos) for L in self.sums)


@dataclass
class DuelSolution:
    model: DuelModel
    P: np.ndarray  # (n, n): P[mover, opponent]
    passes: int  # turn-DP passes over all pairs (Gauss-Seidel passes and policy rounds)
    residual: float
    seconds: float
    rounds: int = 0  # policy-iteration rounds among the passes
    sweeps: int = 0  # sweeps of the policies' linear systems
    fallback: str | None = None  # why policy iteration first handed back to the passes, if it did
    interface: int = 0  # pairs of the interface whose passes solved the duel (0: none did)


class DuelDiverges(ThousandError):
    """The passes do not settle: no fixed point attracts them."""


STALL_PASSES = 40  # passes without a tenfold gain in the largest change before giving up
POLICY_START = 5e-2  # largest pass change below which policy iteration takes over
POLICY_PASSES = 2  # ... or after this many passes (the rounds settle classic from there in fewer seconds)
MAX_ROUNDS = 12  # policy rounds that build systems before falling back to passes
LOST_WAY = "two policy rounds without a smaller residual"
TOO_MANY_ROUNDS = f"{MAX_ROUNDS} policy rounds"
POLICY_RESTART = 0.03  # after a fallback, the rounds try again once the pass change is this share of where they began
MAX_SWEEPS = 2000  # sweeps of one policy evaluation
EVAL_DEPTH = 10  # Anderson depth of a policy evaluation
POLICY_DROP = 1e-4  # policy-row entries below this are left out of a round's Jacobian (docs/solver.md)
EVAL_SHARE = 1e-3  # a round's correction is solved until a sweep moves it by this share of the residual
EVAL_STALL = 100  # sweeps without halving the best change before an evaluation gives up
CHORD_GAIN = 5e-2  # a round that cuts the residual to this share has the next keep its systems
INTERFACE_MAX = 4  # interface passes where a pass reads at most this many pairs before solving them
INTERFACE_PASSES = 30  # ... and hand over to the policy rounds if they have not settled after this many
INTERFACE_DEPTH = 4  # passes an interface pass mixes beyond the interface's size


HELD_FACTOR = 1.2  # resident memory per byte the rounds count (classic-open: 23.7 GB for 20 GB counted)


def policy_memory_budget() -> int:
    """Bytes the policy rounds may hold (the levels' systems and the evaluation's
    history, counted times :data:`HELD_FACTOR` for what the count does not see):
    ``THOUSAND_DUEL_MEMORY_MB``, by default half the machine's memory. A policy that
    needs more is not built; the solve goes on with passes."""
    env = os.environ.get("THOUSAND_DUEL_MEMORY_MB")
    if env:
        return int(float(env) * 2**20)
    try:
        return int(0.5 * os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


class _OverBudget(Exception):
    """A policy's linear systems would exceed :func:`policy_memory_budget`."""


def _fixed_mmap_threshold() -> None:
    """Let glibc return freed large blocks to the system at once. A policy round keeps
    each level's system and frees the level's temporaries of similar size; with glibc's
    sliding mmap threshold those come from the heap and its holes stay resident
    (measured on classic: 5.8 GB resident for 2.5 GB of systems, 3.0 GB with the
    threshold fixed at 1 MiB; most of a level's arrays are smaller than that, and at
    16 KiB a freed round's systems go back to the system: a 2.2 GB peak instead of
    3.9). Elsewhere (no glibc) nothing happens."""
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(-3, 1 << 14)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError, TypeError):
        pass


METHODS = ("policy", "passes", "textbook")


def solve_duel(
    rs: Ruleset,
    tol: float = 1e-13,
    max_passes: int = 1000,
    model: DuelModel | None = None,
    threads: int = 0,
    progress: Callable[[int, float], None] | None = None,
    method: str = "policy",
    start: np.ndarray | None = None,
    store: ValueStore | None = None,
) -> DuelSolution:
    """Solve the duel for every pair of states (see the module docstring).

    ``store``: solve out of core, the values in a memory-mapped
    :class:`thousand.solvers.store.ValueStore` (n, n) of which at most its budget is resident;
    it keeps to passes without acceleration (policy iteration's systems and the
    Anderson history are each larger than the values), and ``P`` of the result is the
    store's memory map.

    ``start``: first values ``P`` (n, n) instead of 1/2 and the levels' guesses (not for
    the textbook method) -- a rounded table (a shipped fixed-point one) to refine. The
    fixed point, and the final residual that certifies it, do not depend on it; only the
    work does.

    ``method``: ``"policy"`` (the default: where penalties make levels cycle, interface
    passes or passes and then policy iteration, see below), ``"passes"`` (Gauss-Seidel
    passes alone) or ``"textbook"`` (the baseline: in-place Gauss-Seidel sweeps over all
    pairs, one scalar turn DP per pair, until no value moves by more than ``tol``; for
    benchmarks and as a check, it reaches the same fixed point).

    Rulesets whose penalties lead to at most :data:`INTERFACE_MAX` pairs that a pass
    reads before it solves them (:meth:`DuelModel.interface`) take interface passes:
    exact passes whose values are mixed to make the interface's values a fixed point
    (handed over to the policy rounds below after :data:`INTERFACE_PASSES`;
    ``interface`` of the result counts the pairs when they solved it). Other rulesets
    whose penalties lower the level take Gauss-Seidel passes until the largest change is
    below :data:`POLICY_START` (at most :data:`POLICY_PASSES` of them), then policy
    iteration (:func:`_policy_iteration`): each round is one turn-DP pass that also records the
    greedy policy of every pair as a sparse row, and an approximate Newton step for that
    policy (:func:`_evaluate_policy`); it ends when the pass finds the Bellman
    residual at most ``tol``.

    Raises :class:`DuelDiverges` when the passes stop converging (no tenfold
    gain in :data:`STALL_PASSES` passes) or the final Bellman residual is not
    small: rules under which a zero turn costs nothing (no bolts) and banking
    can hurt (barrel falls) let both players prefer never to bank, and then
    the win probabilities have no unique value."""
    if method not in METHODS:
        raise ThousandError(f"unknown duel method {method!r}: one of {', '.join(METHODS)}")
    model = model or DuelModel(rs)
    if method == "textbook":
        if store is not None:
            raise ThousandError("the textbook method runs in memory; a value store takes passes")
        return _solve_textbook(model, tol, progress)
    policy_iteration = method == "policy" and store is None
    t0 = time.perf_counter()
    table = model.table
    Q = _first_values(model.n, store, start)
    levels = _levels(model) if store is None else _LevelsOneAtATime(model)
    repeat = model.lowers_levels()
    passes = rounds = sweeps = 0
    accel = _Anderson(depth=6)
    history: list[float] = []
    use_policy = policy_iteration and repeat
    mix = _interface_mixer(model) if use_policy else None
    policy_at, tries = POLICY_START, 0  # the pass change below which the rounds take over
    residual = fallback = None
    while passes < max_passes:
        if (
            mix is None
            and use_policy
            and history
            and (history[-1] < policy_at or (not tries and len(history) >= POLICY_PASSES))
        ):
            residual, r_rounds, r_sweeps, why = _policy_iteration(
                model, table, Q, levels, tol, threads, progress, passes
            )
            fallback = fallback or why
            passes += r_rounds
            rounds += r_rounds
            sweeps += r_sweeps
            if residual is not None:
                break
            # the rounds did not settle: go on with passes from here, and where the rounds only
            # lost their way (not memory, not a singular policy) try them once more closer in
            tries += 1
            use_policy = tries < 2 and why in (LOST_WAY, TOO_MANY_ROUNDS)
            # rounds that began early (after POLICY_PASSES, the change still above
            # POLICY_START) try again at POLICY_START, as if they had waited for it
            policy_at = policy_at if history[-1] >= policy_at else min(policy_at, history[-1]) * POLICY_RESTART
            accel = _Anderson(depth=6)
        passes += 1
        accelerate = repeat and store is None
        before = Q.copy() if accelerate else None
        # the levels' guesses start a solve from nothing; policy rounds, which take over
        # after two passes, do without them (classic measured: docs/solver.md)
        first = (
            passes == 1
            and start is None
            and (not use_policy or mix is not None)
            and not (store is not None and store.reopened)
        )
        change = _pass(
            model,
            table,
            Q,
            levels,
            repeat,
            threads,
            first=first,
            interface=None if mix is None else mix.fit,
            prior=before if mix is not None and not first else None,
        )
        if progress:
            progress(passes, change)
        if change <= tol or not repeat:
            break
        history.append(change)
        if len(history) > STALL_PASSES and min(history[-STALL_PASSES:]) > 0.1 * min(history[:-STALL_PASSES]):
            raise DuelDiverges(_diverges(rs, passes, change))
        if mix is not None:
            # interface passes: the next values from the last few passes, mixed to make
            # the interface pairs' values a fixed point (docs/solver.md)
            mix.step(before, Q)
            if passes >= INTERFACE_PASSES:
                mix, fallback = None, f"{INTERFACE_PASSES} interface passes"  # the rounds take over
        elif accelerate and change < 1e-2:
            accel.step(before, Q)
    del accel
    P, residual = _certified(model, table, Q, store, levels, residual, threads)
    if residual > 1e-10:
        raise DuelDiverges(_diverges(rs, passes, residual))
    return DuelSolution(
        model,
        P,
        passes,
        residual,
        time.perf_counter() - t0,
        rounds,
        sweeps,
        fallback,
        0 if mix is None else len(mix.fit),
    )


def _first_values(n: int, store: ValueStore | None, start: np.ndarray | None):
    """The values a solve starts from, transposed (``Q[y, x] = P(x, y)``: a mover's ends
    gather rows of Q): 1/2 everywhere, ``start``, or the store's (1/2 when made, or an
    interrupted solve's)."""
    if store is not None:
        if store.n != n or start is not None:
            raise ThousandError(
                f"a value store of {store.n} states for {n} states"
                if store.n != n
                else "a value store starts at 1/2, not at start values"
            )
        return store
    Q = np.full((n, n), 0.5)
    if start is not None:
        if np.shape(start) != (n, n):
            raise ThousandError(f"start values of shape {np.shape(start)}, not ({n}, {n})")
        Q[:] = np.asarray(start, dtype=np.float64).T
    return Q


def _certified(model, table, Q, store, levels, residual, threads) -> tuple:
    """The values ``P`` and their Bellman residual (the largest change one more exact
    pass would make): the policy rounds' own where they ended the solve, else measured
    here, level by level for a value store."""
    if store is None:
        P = np.ascontiguousarray(Q.T)
        return P, bellman_residual(model, table, P) if residual is None else residual
    if residual is None:
        residual = max(
            (
                float(np.max(np.abs(_turns(model, table, store, lv.px, lv.py, threads)[0] - store.get(lv.py, lv.px))))
                for lv in levels
            ),
            default=0.0,
        )
    return store.P, residual


def _interface_mixer(model: DuelModel) -> _Anderson | None:
    """The mixing of interface passes (:meth:`DuelModel.interface`), or None where the
    interface has more than :data:`INTERFACE_MAX` pairs or the mixing's history (a copy
    of the values per pass mixed) would pass :func:`policy_memory_budget`."""
    fit = model.interface(INTERFACE_MAX)
    if fit is None:
        return None
    depth = len(fit) + INTERFACE_DEPTH
    if HELD_FACTOR * (depth + 3) * 8 * model.n**2 > policy_memory_budget():
        return None
    return _Anderson(depth=depth, fit=fit)


def _pass(
    model: DuelModel,
    table,
    Q,
    levels: list[_Level],
    repeat: bool,
    threads: int,
    first: bool = False,
    interface: np.ndarray | None = None,
    prior: np.ndarray | None = None,
) -> float:
    """One Gauss-Seidel pass over the levels, top down, each level's bust cycles solved
    exactly (:func:`_solve_level`); returns the largest change. ``first``: Q holds no
    values yet, so each level starts from :func:`_guess`. ``Q``: the values, an array or
    a :class:`thousand.solvers.store.ValueStore`.

    ``interface`` (interface passes; :meth:`DuelModel.interface`, as indices into
    ``Q.ravel()``): the pass is made a function of the interface's values as they were
    when it began -- each level's DPs are re-run until nothing moves even where
    penalties make the pass repeat, and every DP reads the interface pairs of its own
    level at those values (but for one that is also a bust successor in the level, which
    the DPs read through the same entry as the bust). ``prior``: the values (n, n)
    before this pass, from which each level starts as the levels above it moved
    (:func:`_guess_change`)."""
    vals = values_of(Q)
    change = 0.0
    n = model.n
    for lv in levels:
        old = vals.get(lv.py, lv.px)
        held = None
        if interface is not None:
            # (an interface pair that is also a bust successor in its level is read at the
            # level's own solve: the DPs read both through the same entry of Q)
            hold = np.isin(lv.py * n + lv.px, interface)
            hold[lv.succ[lv.succ >= 0]] = False
            k = np.flatnonzero(hold)
            held = (k, old[k]) if len(k) else None
        if first:
            _guess(model, vals, lv)
        elif prior is not None:
            _guess_change(model, vals, lv, prior)
        if held is not None:  # the guesses start the DPs of the others, not these reads
            vals.put(lv.py[held[0]], lv.px[held[0]], held[1])
        # with penalties the pass is repeated anyway: one DP run per level and
        # pass is enough (the final residual certifies the fixed point)
        new = _solve_level(model, table, vals, lv, 1 if repeat and interface is None else 100, threads, held)
        change = max(change, float(np.max(np.abs(new - old))))
    return change


RERUN = 1e-15  # a pair's turn DP is re-run when its bust value moved by more than this


def _solve_level(
    model: DuelModel,
    table,
    vals,
    lv: _Level,
    runs: int,
    threads: int,
    held: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Solve one level's pairs in place (Newton's method on the bust links); returns
    their new values.

    A turn DP at bust value ``Z_k`` gives ``v_k`` and ``d_k = dv_k/dZ`` (the chance
    the turn busts); while its decisions hold, ``P_k = v_k + d_k (Z - Z_k)`` with
    ``Z = 1 - P_succ(k)``, so the level's values solve

        P_k + d_k P_succ(k) = v_k + d_k (1 - Z_k)

    (a functional graph: :meth:`thousand.kernel.Backend.solve_links`). The DPs of
    the pairs whose bust value then moved by more than :data:`RERUN` are run again
    at the new value -- only those: every other pair's DP would repeat itself --
    until none moved (at most ``runs`` DP runs; then the linearisation is exact).
    ``held``: (positions in the level, values) of pairs that every DP reads at those
    values, whatever the level's solve has made of them so far (:func:`_pass`)."""
    vals = values_of(vals)
    plans = model.plans
    r = lv.d_rows
    bust_of = plans.bust[lv.px[r]]
    py_r = lv.py[r]
    z_used = np.empty(len(lv.px))
    z_used[r] = 1.0 - vals.get(bust_of, py_r)
    v, d = _turns(model, table, vals, lv.px, lv.py, threads)
    if not len(r):
        vals.put(lv.py, lv.px, v)
        return v
    a = np.zeros(len(v))
    succ = lv.succ
    for run in range(runs):
        new = level_links(table.backend, succ, r, v, d, z_used, a)
        vals.put(lv.py, lv.px, new)
        stale = stale_busts(new, succ, r, z_used)
        if run + 1 == runs or not len(stale):
            return new
        z_used[stale] = 1.0 - vals.get(plans.bust[lv.px[stale]], lv.py[stale])
        if held is not None:
            k, u = held
            vals.put(lv.py[k], lv.px[k], u)
        v[stale], d[stale] = _turns(model, table, vals, lv.px[stale], lv.py[stale], threads)
        if held is not None:
            vals.put(lv.py[k], lv.px[k], new[k])
    return new


def level_links(backend, succ, r, v, d, z_used, a) -> np.ndarray:
    """A level's values from its turn DPs linearised in their bust values: the pairs ``r``
    whose bust successor ``succ`` is in the level solve ``P_k + d_k P_succ(k) = v_k + d_k (1 -
    Z_k)`` (``Z_k = z_used[k]`` the bust value each DP ran at), the others are ``v_k``
    (:func:`_solve_level`; ``a``: scratch of the level's length, zero off ``r``)."""
    a[r] = d[r]
    b = v.copy()
    b[r] += d[r] * (1.0 - z_used[r])
    return backend.solve_links(succ, a, b)


def stale_busts(new: np.ndarray, succ: np.ndarray, r: np.ndarray, z_used: np.ndarray) -> np.ndarray:
    """The pairs of ``r`` whose bust value ``1 - new[succ]`` moved by more than :data:`RERUN`
    from the one their turn DP ran at: their DPs run again."""
    return r[np.abs(1.0 - new[succ[r]] - z_used[r]) > RERUN]


FRAME_COLUMNS = 16  # pairs per frame: wider frames vectorise more and waste more rows below their movers


@dataclass
class _Frames:
    """Pairs laid out as frames for :func:`thousand.kernel.duel_frames`: the pairs in
    the order ``order``, frame f holding ``cp[f]:cp[f+1]`` over the rows of mover
    ``fm[f]``, pair c = ``(movers[c], opps[c])`` starting at row ``row0[c]``."""

    order: np.ndarray
    fm: np.ndarray
    cp: np.ndarray
    movers: np.ndarray
    opps: np.ndarray
    row0: np.ndarray


def _frames(model: DuelModel, px: np.ndarray, py: np.ndarray) -> _Frames:
    """The pairs ``(px[k], py[k])`` by frames (:attr:`DuelModel.frame`) of up to
    :data:`FRAME_COLUMNS` pairs in order of the mover's score, each over the rows of its
    lowest mover."""
    fr, sc = model.frame[px], model.score[px]
    order = np.lexsort((sc, fr))
    fr_s = fr[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = fr_s[1:] != fr_s[:-1]
    group = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
    start = np.flatnonzero(first | ((np.arange(len(order)) - group) % FRAME_COLUMNS == 0))
    cp = np.append(start, len(order))
    movers = px[order]
    fm = movers[start]
    row0 = (sc[order] - np.repeat(model.score[fm], np.diff(cp))) // model.rs.unit
    return _Frames(order, fm, cp, movers, py[order], row0)


def _turns(
    model: DuelModel, table, vals, px: np.ndarray, py: np.ndarray, threads: int
) -> tuple[np.ndarray, np.ndarray]:
    """The turn DPs (values and bust derivatives) of the pairs ``(px[k], py[k])``, by
    frames (:func:`_frames`); out of core, in parts by opponent
    (:meth:`thousand.solvers.store.ValueStore.opponent_parts`)."""
    vals = values_of(vals)
    v, d = np.empty(len(px)), np.empty(len(px))
    for part in vals.opponent_parts(py, model.plans):
        f = _frames(model, px[part], py[part])
        v_s, d_s = kernel.duel_frames(
            table, model.plans, vals.Q, f.fm, f.cp, f.movers, f.opps, f.row0, grad=True, threads=threads
        )
        vals.release()
        v[part[f.order]], d[part[f.order]] = v_s, d_s
    return v, d


def _from_above(model: DuelModel, lv: _Level, f, alone: float) -> np.ndarray:
    """``f`` at a level's pairs read off the two levels above, ``f(x, y) ~ f(x+, y) +
    f(x, y+) - f(x+, y+)`` with ``x+`` the state one unit higher
    (:attr:`DuelModel.up`); a pair at the top of its range takes its one neighbour
    above, or ``alone``. ``f(rows, cols)`` reads like ``Q[rows, cols]``."""
    x, y = lv.px, lv.py
    ux, uy = model.up[x], model.up[y]
    hx, hy = ux >= 0, uy >= 0
    g = np.full(len(x), alone)
    both = hx & hy
    g[both] = f(y[both], ux[both]) + f(uy[both], x[both]) - f(uy[both], ux[both])
    g[hx & ~hy] = f(y[hx & ~hy], ux[hx & ~hy])
    g[hy & ~hx] = f(uy[hy & ~hx], x[hy & ~hx])
    return g


def _guess(model: DuelModel, vals, lv: _Level) -> None:
    """First values for a level whose pairs have none, read off the two levels above
    (already solved, :func:`_from_above`), 1/2 where there is none. Only where the DPs
    start: the bust values of the level's pairs (the fixed point does not depend on it)."""
    vals.put(lv.py, lv.px, np.clip(_from_above(model, lv, vals.get, 0.5), 0.0, 1.0))


def _guess_change(model: DuelModel, vals, lv: _Level, prior: np.ndarray) -> None:
    """Values for a level that a pass is about to solve again: its ``prior`` values
    (before the pass) moved as the two levels above have just moved (:func:`_from_above`
    of ``Q - prior``). Measured on admission's interface passes: 4.6 and 2.7 turn DPs
    per pair in its second and third passes without it, 2.2 and 2.0 with it
    (docs/solver.md)."""
    x, y = lv.px, lv.py
    g = prior[y, x] + _from_above(model, lv, lambda r, c: vals.get(r, c) - prior[r, c], 0.0)
    vals.put(y, x, np.clip(g, 0.0, 1.0))


@dataclass
class _LevelSystem:
    """One level's rows of a round's correction system ``(I + M~) delta = rho`` (delta
    indexed like Q.ravel()): ``(I + D) delta[rows] = rho - O delta``, with D each row's
    largest entry that stays in the level -- a functional graph, ``D[k, succ[k]] = a[k]``
    (succ -1: none), solved by following its links -- and O every other entry, as CSR
    arrays ``indptr``, ``cols`` (int32), ``vals`` (float32); ``rho`` is the level's
    Bellman residual ``TurnDP(P) - P``."""

    rows: np.ndarray
    rho: np.ndarray
    indptr: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    succ: np.ndarray
    a: np.ndarray
    frames: _Frames  # the level's pairs as frames, in the order of ``rows``


def _policy_round(
    model: DuelModel,
    table,
    Q: np.ndarray,
    levels: list[_Level],
    threads: int,
    budget: int,
    scratch: kernel.Scratch | None = None,
) -> tuple[list[_LevelSystem], float]:
    """One Jacobi turn-DP pass at Q: the Bellman residual ``rho = TurnDP(P) - P`` and the
    greedy policy of every pair, level by level, as the rows of an approximate Jacobian
    (entries below :data:`POLICY_DROP` left out, float32; raises :class:`_OverBudget`
    once they pass ``budget`` bytes; ``scratch``: the kernel's buffers, kept from round
    to round). Returns the systems and max |rho|."""
    n = model.n
    q = Q.ravel()
    pos = np.full(n * n, -1, dtype=np.int64)
    systems, residual = [], 0.0
    held = 2 * (EVAL_DEPTH + 3) * q.nbytes  # the evaluation's Anderson history, correction and copies
    scratch = scratch or kernel.Scratch()
    for lv in levels:
        f = _frames(model, lv.px, lv.py)
        rows = f.opps * n + f.movers  # the level's pairs in frame order
        m = len(rows)
        pos[rows] = np.arange(m)
        r = kernel.duel_policy(
            table,
            model.plans,
            Q,
            f.fm,
            None,
            None,
            threads=threads,
            local=pos,
            frames=(f.cp, f.movers, f.opps, f.row0),
            drop=POLICY_DROP,
            scratch=scratch,
            links=True,
        )
        pos[rows] = -1
        rho = r.v - q[rows]
        residual = max(residual, float(np.max(np.abs(rho))))
        in_rows, in_locs, in_vals = r.inner
        succ, a = np.full(m, -1, dtype=np.int64), np.zeros(m)
        succ[in_rows], a[in_rows] = in_locs, in_vals
        table.backend.solve_links(succ, a, np.zeros(m))  # ZeroDivisionError: a cycle that never ends
        sy = _LevelSystem(rows, rho, r.indptr, r.cols, r.vals, succ, a, f)
        systems.append(sy)
        held += (
            sy.vals.nbytes
            + sy.cols.nbytes
            + sy.indptr.nbytes
            + rows.nbytes
            + rho.nbytes
            + succ.nbytes
            + a.nbytes
            + sum(x.nbytes for x in (f.order, f.fm, f.cp, f.movers, f.opps, f.row0))
        )
        if HELD_FACTOR * held > budget:
            raise _OverBudget
    return systems, residual


def _residual_pass(model: DuelModel, table, Q: np.ndarray, systems: list[_LevelSystem], threads: int) -> float:
    """A round that keeps the last round's systems (a chord step): one Jacobi turn-DP
    pass at Q, without rows or derivatives, puts each level's Bellman residual
    ``rho = TurnDP(P) - P`` into its system. Returns max |rho|."""
    q = Q.ravel()
    residual = 0.0
    for sy in systems:
        f = sy.frames
        v, _ = kernel.duel_frames(
            table, model.plans, Q, f.fm, f.cp, f.movers, f.opps, f.row0, grad=False, threads=threads
        )
        sy.rho = v - q[sy.rows]
        residual = max(residual, float(np.max(np.abs(sy.rho))))
    return residual


def _evaluate_policy(
    systems: list[_LevelSystem],
    q: np.ndarray,
    backend: kernel.Backend,
    threads: int = 0,
    max_sweeps: int = MAX_SWEEPS,
    accel: _Anderson | None = None,
) -> int:
    """One approximate Newton step for the round's policy, in place on q:
    ``q += delta`` with ``(I + M~) delta = rho``. With the exact rows M this is the
    policy's exact evaluation, ``(I + M) q_new = c``, since ``rho = c - (I + M) q``;
    with M~ (small entries left out) the step still lands within about
    ``|(I + M~)^-1 (M - M~)|`` of it, and the fixed point is unchanged because rho
    comes from the exact turn DP (measured in docs/solver.md). Gauss-Seidel sweeps over
    the levels, top down (each level's links solved exactly, its other in-level
    entries taken at the last sweep's values), Anderson-accelerated (the sweep map is
    affine, so this converges like a Krylov method), until a sweep moves delta by at
    most :data:`EVAL_SHARE` of max |rho| (or 1e-17) or stops gaining. Returns the
    sweeps taken. ``accel``: an :class:`_Anderson` of depth :data:`EVAL_DEPTH` to reuse
    (its buffers kept from one round's evaluation to the next)."""
    delta, before = np.zeros_like(q), np.empty_like(q)
    goal = max(EVAL_SHARE * max((float(np.max(np.abs(sy.rho))) for sy in systems), default=0.0), 1e-17)
    if accel is None:
        accel = _Anderson(depth=EVAL_DEPTH, bounded=False)
    accel.reset()
    sweeper = backend.level_sweep(
        [(sy.rows, sy.rho, sy.indptr, sy.cols, sy.vals, sy.succ, sy.a) for sy in systems], q.size
    )
    best, stale, sweep = np.inf, 0, 0
    for sweep in range(1, max_sweeps + 1):  # noqa: B007 (the count of sweeps is the result)
        np.copyto(before, delta)
        change = sweeper.sweep(delta, threads)
        if change <= goal:
            break
        if change < best * 0.5:
            best, stale = change, 0
        else:
            stale += 1
            if stale >= 30 and change < 1e-12:
                break  # rounding noise: the system is solved as well as floats allow
            if stale >= EVAL_STALL:
                break  # no progress (a policy whose game need not end): the next residual says so
        accel.step(before, delta)
    q += delta
    np.clip(q, 0.0, 1.0, out=q)
    return sweep


def _policy_iteration(
    model: DuelModel, table, Q: np.ndarray, levels: list[_Level], tol: float, threads: int, progress, passes: int
):
    """Policy rounds from Q until a round's pass finds the Bellman residual at most ``tol``.

    Returns ``(residual, rounds, sweeps, reason)``; residual None when the rounds did
    not settle, and ``reason`` says why (a singular system: policies that never end
    the game; no gain in two rounds; :data:`MAX_ROUNDS`; a policy over
    :func:`policy_memory_budget`), leaving Q at the best values seen."""
    rounds = sweeps = 0
    best = np.inf
    best_Q = None
    gainless = 0
    reason = TOO_MANY_ROUNDS
    budget = policy_memory_budget()
    _fixed_mmap_threshold()
    systems, chord, scratch = None, False, kernel.Scratch()
    accel = _Anderson(depth=EVAL_DEPTH, bounded=False)  # the evaluations' history, its buffers kept
    built = 0  # rounds that built systems: chord rounds continue only while each gains 20-fold
    while built < MAX_ROUNDS:
        rounds += 1
        built += not chord
        if chord:
            residual = _residual_pass(model, table, Q, systems, threads)
        else:
            systems = None  # the old systems go before the new ones are built
            try:
                systems, residual = _policy_round(model, table, Q, levels, threads, budget, scratch)
            except _OverBudget:
                # Q is untouched by the round: the passes go on from it
                reason = (
                    f"a policy's linear systems exceed the memory budget of {budget / 2**20:,.0f} MB "
                    "(THOUSAND_DUEL_MEMORY_MB)"
                )
                break
            except ZeroDivisionError:  # a level's links close a cycle of certain busts: a game without end
                reason = "a policy's linear system is singular"
                break
        if progress:
            progress(passes + rounds, residual)
        if residual <= tol:
            return residual, rounds, sweeps, None
        # a round that cut the residual to CHORD_GAIN of the best before it is in Newton's
        # last steps: the policy hardly changes any more, so the next round keeps these
        # systems and measures only the new residual (a chord step); one that gains less
        # has the next round build new ones
        chord = residual <= CHORD_GAIN * best < np.inf
        if residual < best:
            best, best_Q, gainless = residual, Q.copy(), 0
        else:
            gainless += 1
            if gainless >= 2:
                reason = LOST_WAY
                break
        sweeps += _evaluate_policy(systems, Q.ravel(), table.backend, threads, accel=accel)
    del systems
    if best_Q is not None:
        Q[:] = best_Q
    return None, rounds, sweeps, reason


def _diverges(rs: Ruleset, passes: int, change: float) -> str:
    hint = (
        " (without bolts a zero turn costs nothing, so both players may prefer never to bank:"
        " the game need not end and its win probabilities have no unique value)"
        if not rs.bolts.limit
        else ""
    )
    return f"{rs.name}: the duel does not converge; after {passes} passes values still move by {change:.1e}{hint}"


def _solve_textbook(model: DuelModel, tol: float, progress, max_sweeps: int = 100000) -> DuelSolution:
    """``solve_duel(method="textbook")``: in-place Gauss-Seidel sweeps over all pairs,
    one scalar turn DP per pair."""
    t0 = time.perf_counter()
    table = model.table
    n = model.n
    Q = np.full((n, n), 0.5)
    one = np.ones(1, dtype=np.int64)
    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        change = 0.0
        for x in range(n):
            for y in range(n):
                v, _, _ = kernel.duel_level(
                    table, model.plans, Q, one * x, one * y, one * (y + 1), grad=False, threads=1
                )
                change = max(change, abs(v[0] - Q[y, x]))
                Q[y, x] = v[0]
        if progress:
            progress(sweeps, change)
        if change <= tol:
            break
    P = np.ascontiguousarray(Q.T)
    return DuelSolution(model, P, sweeps, bellman_residual(model, table, P), time.perf_counter() - t0)


class _Anderson:
    """Anderson acceleration of a fixed point x = G(x) (whole passes, or sweeps of a
    policy's linear system).

    Near the solution no decision changes and a pass is an affine map, so
    mixing the last few iterates converges like a Krylov method instead of
    geometrically: with residuals f = G(x) - x and the differences dF, dG of the
    last ``depth`` steps, the next iterate is G(x) - dG gamma, where gamma
    minimises |f - dF gamma| (solved through the small Gram matrix dF dF^T,
    updated one row per step). Far from the solution the history is dropped
    whenever a step does not reduce the residual. The final Bellman residual is
    measured independently, so acceleration cannot make a wrong answer look
    converged.

    ``fit``: indices of x; gamma is fitted to the residuals there alone and applied to
    all of x. When every coordinate of G(x) is a function of x[fit] (interface passes,
    :meth:`DuelModel.interface`), this is a multisecant method on the few coordinates
    ``fit`` that carries the whole vector along.
    """

    def __init__(self, depth: int, bounded: bool = True, fit: np.ndarray | None = None):
        self.depth = depth
        self.bounded = bounded  # iterates are probabilities: clip them to [0, 1]
        self.fit = fit
        self.dF: np.ndarray | None = None  # (depth, size): rows are differences of residuals
        self.dG: np.ndarray | None = None
        self.gram = np.zeros((depth, depth))
        # buffers made at the first step and kept (a fresh 20 MB array costs page faults
        # at every step): this residual, the last one, the last G(x), the mix dG gamma
        self.f = self.f_last = self.g_last = self.mix = None
        self.reset()

    def reset(self) -> None:
        """Forget the history (a new fixed-point problem of the same size); the buffers stay."""
        self.used = 0  # rows of dF/dG in use
        self.slot = 0  # the row the next difference goes to
        self.have_last = False
        self.last = np.inf

    def step(self, x: np.ndarray, g: np.ndarray) -> None:
        """Mix in place: ``g`` (C-contiguous), the map's value at ``x``, becomes the next
        iterate."""
        if not g.flags.c_contiguous:
            raise ValueError("Anderson mixing works in place on a C-contiguous array")
        gv, xv = g.reshape(-1), x.reshape(-1)
        if self.dF is None:
            k = gv.size if self.fit is None else len(self.fit)
            self.dF, self.dG = np.empty((self.depth, k)), np.empty((self.depth, gv.size))
            self.f, self.f_last = np.empty(k), np.empty(k)
            self.g_last, self.mix = np.empty(gv.size), np.empty(gv.size)
        f = self.f
        if self.fit is None:
            np.subtract(gv, xv, out=f)
        else:
            np.subtract(gv[self.fit], xv[self.fit], out=f)
        norm = max(float(f.max()), -float(f.min())) if f.size else 0.0
        if norm > self.last:
            self.used, self.have_last = 0, False
        self.last = norm
        if self.have_last:
            j = self.slot
            np.subtract(f, self.f_last, out=self.dF[j])
            np.subtract(gv, self.g_last, out=self.dG[j])
            self.used = min(self.used + 1, self.depth)
            self.slot = (j + 1) % self.depth
            rows = self.dF[: self.used] @ self.dF[j]
            self.gram[j, : self.used] = rows
            self.gram[: self.used, j] = rows
        np.copyto(self.g_last, gv)
        self.f, self.f_last, self.have_last = self.f_last, f, True
        if self.used == 0:
            return
        m = self.used
        gamma, *_ = np.linalg.lstsq(self.gram[:m, :m], self.dF[:m] @ f, rcond=1e-13)
        np.dot(gamma, self.dG[:m], out=self.mix)
        gv -= self.mix
        if self.bounded:
            np.clip(gv, 0.0, 1.0, out=gv)


def bellman_residual(model: DuelModel, table, P: np.ndarray) -> float:
    """The largest |P - TurnDP(P)| over every solved pair (one Jacobi pass over every mover)."""
    Q = np.ascontiguousarray(P.T)
    movers, lo, hi = model.opponents()
    v, _, _ = kernel.duel_level(table, model.plans, Q, movers, lo, hi, grad=False)
    m = hi[0] - lo[0]  # every mover faces one block of m opponents
    return float(np.max(np.abs(v.reshape(len(movers), m) - P[movers[:, None], lo[:, None] + np.arange(m)])))


def seat_profile_values(model: DuelModel, table, Q_first: np.ndarray, Q_second: np.ndarray) -> np.ndarray:
    """Exact values of a duel in which each seat plays the turn decisions greedy for its
    own values: the first seat's turns (solver states ``0..players-1``) those of
    :func:`thousand.kernel.duel_policy` at ``Q_first``, the second seat's at
    ``Q_second`` (both laid out as the solver's ``Q[y, x] = P(x, y)``). With the
    decisions fixed the duel is linear (module docstring, policy iteration):

        P_p = c_p - sum_e M_pe P_e

    over every solved pair, solved here by one sparse LU factorisation. Returns ``P``
    (n, n) like :attr:`DuelSolution.P` (the mover's chance under the profile). With
    ``Q_first = Q_second`` = the solved duel's values this is the duel itself; with one
    seat's values replaced by an approximation's stand-in, its cost in win probability
    is read off exactly (bench/bench_approx.py --duel). Needs ``equal_turns`` (seats
    are part of the state; without them a pair does not say whose turn policy is whose)."""
    if not model.equal_turns:
        raise ThousandError(
            "profile values need seats in the state (equal_turns); other duels are evaluated by thousand.analysis.exact"
        )
    n, m = model.n, model.players
    movers, lo, hi = model.opponents()
    rows, cols, vals, c_all, flat_all = [], [], [], [], []
    for seat, Q in ((0, Q_first), (1, Q_second)):
        sel = slice(seat * m, (seat + 1) * m)
        r = kernel.duel_policy(table, model.plans, np.ascontiguousarray(Q), movers[sel], lo[sel], hi[sel])
        mv = np.repeat(movers[sel], hi[sel] - lo[sel])
        op = np.concatenate([np.arange(a, b) for a, b in zip(lo[sel], hi[sel])])
        flat = op * n + mv
        counts = np.diff(r.indptr)
        rows.append(np.repeat(flat, counts))
        cols.append(np.asarray(r.cols, dtype=np.int64))
        vals.append(np.asarray(r.vals, dtype=np.float64))
        c_all.append(r.c)
        flat_all.append(flat)
    flat = np.concatenate(flat_all)
    pos = np.full(n * n, -1, dtype=np.int64)
    pos[flat] = np.arange(len(flat))
    r_, c_ = pos[np.concatenate(rows)], pos[np.concatenate(cols)]
    if np.any(c_ < 0):
        raise ThousandError("a turn hands over to a pair that is not solved")
    A = sparse.identity(len(flat), format="csc") + sparse.csc_matrix(
        (np.concatenate(vals), (r_, c_)), shape=(len(flat), len(flat))
    )
    q = spla.splu(A).solve(np.concatenate(c_all))
    Qp = np.full(n * n, 0.5)
    Qp[flat] = q
    return np.ascontiguousarray(Qp.reshape(n, n).T)
