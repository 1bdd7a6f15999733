"""Any number of players: an exact equilibrium of games whose turns change only the mover
(Pig, plain, Farkle and rulesets like them: no overtaking, no push-off, no penalty that
lowers a score, no equal turns), with its certificate.

A state is ``s = (x_0, x_1, ..., x_{N-1})``, player-state indices with ``x_0`` the mover
and then the seats that follow in order; its value ``V[s]`` is the vector of the players'
win probabilities in that order (they sum to 1). A turn of ``x_0`` ends by banking at a
total ``t`` (the mover becomes ``x' = next(x_0, t)``, or wins), by a bust (``x_0`` stays)
or by an instant win; the next state is the rotation ``s' = (x_1, ..., x_{N-1}, x')``. So

    V[s][0] = max over the mover's decisions of  E[ V[s'][N-1] ]      (the turn DP)
    V[s][k] = E_pi[ V[s'][k-1] ],  k = 1..N-1                          (under those decisions)

with ``V = e_0`` (the mover's unit vector) on a win. Each player maximises their own
chance; the mover banks on exact ties (the kernel's tie rule, as in the duel).

Levels: a bank raises the score sum, a bust keeps it, so levels are solved from the top
down. Inside a level the busts link ``s`` to its rotation ``sigma(s)`` (the mover keeps its
state and moves to the last place): orbits of at most N states, each a small game of its
own coupled to the rest only through the higher levels. For fixed decisions an orbit is
linear and solved in closed form,

    V[s] = sum_{j<N} (prod_{i<j} b(sigma^i s)) S^j A(sigma^j s) / (1 - prod_{i<N} b(sigma^i s)),

where ``A(s)`` is the value of the turn's banks and instant wins, ``b(s)`` its chance of a
bust and ``S`` the rotation of a value vector (``(S v)[0] = v[N-1]``). The decisions are
then the best responses to the mover's bust value ``z(s) = V[sigma(s)][N-1]``, and the two
steps alternate until no decision changes: a pure equilibrium of the orbit. Where they
cycle (three-player Pig from a goal of 50 on), :func:`_mix_orbit` searches the movers
that flip: each either keeps one of its policies (its bust value then lies between that
policy's breakpoints) or mixes two neighbouring policies at a breakpoint (its bust value is
then that breakpoint, which fixes the weight); candidates with fewer mixtures come first,
and each is checked (every mover best-responds). Measured: three-player Pig to 50 settles
with pure decisions found this way; to 100 one orbit, where all three movers flip, finds
no candidate yet (docs/solver.md).

The certificate is the largest gain any seat could get by deviating at any decision: for
every state, the mover's best value by the turn DP against the equilibrium's bust value,
minus the equilibrium's own value for it (at most 1e-9 to be accepted).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import kernel
from .errors import ThousandError
from .i18n import _
from .rules import Ruleset
from .states import WIN_INDEX, build_state_space

MAX_VALUES = 200_000_000     # float64 numbers of V (1.6 GB)
MAX_ROUNDS = 60              # best-response rounds of an orbit before it is treated as cycling
CERTIFICATE = 1e-9


class NPlayerError(ThousandError):
    """The N-player solver cannot solve this ruleset (yet), or found no equilibrium."""


@dataclass
class NPlayerSolution:
    """``V`` (m**N, N): the value of every state (flat index ``sum x_k m**(N-1-k)``);
    ``start``: the value of the first state, seat 0 to move; ``certificate``: the largest
    gain of a deviation; ``mixed``: the states where the mover mixes (state -> weight)."""

    rs: Ruleset
    players: int
    space: object
    V: np.ndarray
    certificate: float
    seconds: float
    rounds: int
    mixed: dict = field(default_factory=dict)

    @property
    def m(self) -> int:
        return len(self.space)

    def index(self, states) -> int:
        """The flat index of the tuple of player states (the mover first)."""
        s = 0
        for x in states:
            s = s * self.m + self.space.lookup(x)
        return s

    @property
    def start(self) -> np.ndarray:
        """Every seat's chance from the start, seat 0 (the first player) to move."""
        from .game import Moves
        x0 = Moves(self.rs).normalise(Moves(self.rs).initial())
        return self.V[self.index([x0] * self.players)]


def check_supported(rs: Ruleset, players: int) -> None:
    """Refuse in one line what this solver does not solve, before any work."""
    if players < 2:
        raise NPlayerError(_("a game needs at least two players: --players A B [C ...]"))
    why = []
    if rs.equal_turns:
        why.append("equal_turns")
    if rs.overtake:
        why.append("overtaking")
    if rs.barrel.kind != "none":
        why.append("a barrel")
    if rs.bolts.limit or rs.pit_attempts or rs.dump:
        why.append("penalties (bolts, pits with attempts, dumps)")
    if why:
        raise NPlayerError(_("{0}: the exact N-player solver plays games whose turns change only the mover; "
                             "this ruleset has {1}").format(rs.name, ", ".join(why)))


def solve_nplayer(rs: Ruleset, players: int = 3, progress=None) -> NPlayerSolution:
    """The equilibrium of ``rs`` for ``players`` seats (see the module docstring)."""
    check_supported(rs, players)
    t0 = time.perf_counter()
    space = build_state_space(rs)
    m, N = len(space), players
    if m ** N * N > MAX_VALUES:
        raise NPlayerError(_("{0}: {1:,} player states make {2:,} states of {3} players, {4:,.1f} GB of values; "
                             "the N-player solver holds {5:,}").format(
            rs.name, m, m ** N, N, 8 * m ** N * N / 1e9, MAX_VALUES))
    if np.any(space.bust_idx != np.arange(m)) or any(f.any() for f in space.forced_ok):
        raise NPlayerError(_("{0}: a zero turn or a mid-turn end changes a player here: not solved for N "
                             "players yet").format(rs.name))
    table = kernel.roll_table(rs)
    u = rs.unit
    score_units = np.array([x.score // u for x in space.states], dtype=np.int64)
    M1 = m ** (N - 1)
    total = m ** N
    # the level (sum of the units of every score) of every state
    digits = np.indices((m,) * N).reshape(N, -1)          # digits[k][s] = x_k
    level = score_units[digits].sum(axis=0)
    V = np.zeros((total, N))
    rounds_all = 0
    mixed: dict = {}
    order = np.argsort(-level, kind="stable")
    bounds = np.flatnonzero(np.diff(level[order])) + 1
    for lvl_states in np.split(order, bounds):
        r = _solve_level(lvl_states, digits, V, space, table, m, M1, N, mixed)
        rounds_all = max(rounds_all, r)
        if progress:
            progress(int(level[lvl_states[0]]), r)
    cert = certificate(V, space, table, m, N)
    return NPlayerSolution(rs, N, space, V, cert, time.perf_counter() - t0, rounds_all, mixed)


def _rotate(s: np.ndarray, m: int, M1: int, last: np.ndarray) -> np.ndarray:
    """(x_1, ..., x_{N-1}, last) for states s = (x_0, ..., x_{N-1})."""
    return (s % M1) * m + last


def _turns(states: np.ndarray, z: np.ndarray, V: np.ndarray, space, table, m: int, M1: int, N: int):
    """The mover's best turn in every state against bust values ``z``: (own value, A, b)
    with A the value vector of the banks and instant wins, b the chance of a bust."""
    own = np.empty(len(states))
    A = np.zeros((len(states), N))
    b = np.empty(len(states))
    movers = states // M1
    for i in np.unique(movers):
        cols = np.flatnonzero(movers == i)
        s = states[cols]
        T = int(space.T[i])
        nxt = space.stop_idx[i]                      # (T+1,) next player state, WIN_INDEX, -2
        ok = space.stop_ok[i]
        K = len(s)
        rows = np.flatnonzero(ok)
        win_rows = rows[nxt[rows] == WIN_INDEX]
        bank_rows = rows[nxt[rows] >= 0]
        # the next state after banking at t: (x_1, ..., x_{N-1}, next(i, t))
        succ = (s % M1)[None, :] * m + nxt[bank_rows][:, None]          # (B, K)
        W = np.roll(V[succ], 1, axis=-1)                                # the mover's view: S V[s']
        stop_val = np.zeros((T + 1, K))
        stop_val[bank_rows] = W[..., 0]
        stop_val[win_rows] = 1.0
        forced = np.zeros(T + 1, np.uint8)
        fval = np.zeros((T + 1, K))
        tv = kernel.turn_dp(table, ok, stop_val, forced, fval, z[cols], np.ones(K), full=True)
        stop_p, _f, bust_p, win_p = kernel.end_distribution(table, ok, stop_val, forced, fval, tv)
        own[cols] = tv.start
        a = np.einsum("bk,bkn->kn", stop_p[bank_rows], W)
        a[:, 0] += stop_p[win_rows].sum(axis=0) + win_p
        A[cols] = a
        b[cols] = bust_p
    return own, A, b


def _orbit_values(A: np.ndarray, b: np.ndarray, pos: np.ndarray, succ: np.ndarray, N: int) -> np.ndarray:
    """Closed-form values of a level's orbits for fixed decisions (module docstring):
    ``pos`` maps a state's flat index to its row, ``succ[row]`` is the row of sigma(s)."""
    n = len(A)
    num = np.zeros((n, N))
    prod = np.ones(n)
    row = np.arange(n)
    for j in range(N):
        num += prod[:, None] * np.roll(A[row], j, axis=-1)
        prod = prod * b[row]
        row = succ[row]
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / (1.0 - prod)[:, None]


def _solve_level(states, digits, V, space, table, m, M1, N, mixed) -> int:
    states = np.sort(states)
    n = len(states)
    pos = {int(s): k for k, s in enumerate(states)}
    sig = _rotate(states, m, M1, states // M1)              # bust: the mover keeps its state
    succ = np.searchsorted(states, sig)
    assert np.array_equal(states[succ], sig)
    z = np.full(n, 1.0 / N)
    last_b = None
    history: list[np.ndarray] = []
    for rounds in range(1, MAX_ROUNDS + 1):
        own, A, b = _turns(states, z, V, space, table, m, M1, N)
        vals = _orbit_values(A, b, pos, succ, N)
        z_new = vals[succ, N - 1]
        if last_b is not None and np.array_equal(b, last_b) and np.max(np.abs(z_new - z)) <= 1e-15:
            V[states] = vals
            return rounds
        history.append(b.copy())
        last_b = b
        z = z_new
    # some orbits cycle: settle the ones that did settle, mix in the others
    own, A, b = _turns(states, z, V, space, table, m, M1, N)
    vals = _orbit_values(A, b, pos, succ, N)
    V[states] = vals
    _mix_cycling(states, succ, z, V, space, table, m, M1, N, mixed)
    return MAX_ROUNDS


def _mix_cycling(states, succ, z, V, space, table, m, M1, N, mixed) -> None:
    """Every orbit of the level whose best responses do not settle: :func:`_mix_orbit`."""
    vals = V[states]
    z_now = vals[succ, N - 1]
    own, A, b = _turns(states, z_now, V, space, table, m, M1, N)
    gain = own - vals[:, 0]
    bad = np.flatnonzero(np.abs(gain) > CERTIFICATE)
    if not len(bad):
        return
    done = set()
    for k in bad:
        if k in done:
            continue
        orbit = [int(k)]
        while int(succ[orbit[-1]]) != orbit[0]:
            orbit.append(int(succ[orbit[-1]]))
        done.update(orbit)
        if not _mix_orbit(np.array(orbit), states, z_now, V, space, table, m, M1, N, mixed):
            raise NPlayerError(_("{0} players: no equilibrium found for the orbit of state {1} (best responses "
                                 "cycle, and no candidate of pure decisions and mixtures at the breakpoints "
                                 "near the cycle holds)").format(N, int(states[k])))


def _mix_orbit(orbit, states, z, V, space, table, m, M1, N, mixed) -> bool:
    """An equilibrium of one orbit whose best responses cycle (module docstring).

    A mover's best response depends only on its bust value and steps, as that value
    grows, through policies that risk more; near the cycle each flipping mover has a few
    breakpoints (found on a grid of 129 bust values around the cycle, then by bisection). A candidate gives every flipping mover either one of its policies (its
    bust value must then lie between the policy's breakpoints) or a mixture of the two
    policies at one breakpoint (its bust value must then be that breakpoint); the weights
    of the mixtures are solved for, the other movers best-respond, and the first candidate
    that holds is the equilibrium (fewest mixtures first, then nearest the cycle)."""
    from itertools import product
    from scipy import optimize
    L = len(orbit)
    sub = states[orbit]
    succ = np.roll(np.arange(L), -1)

    def policy(r, zr):
        _own, A, b = _turns(sub[r:r + 1], np.array([zr]), V, space, table, m, M1, N)
        return A[0], b[0]

    # 1. the cycle of best responses, and the movers that flip in it
    zz, seen = z[orbit].copy(), []
    for _k in range(4 * MAX_ROUNDS):
        own, A, b = _turns(sub, zz, V, space, table, m, M1, N)
        vals = _orbit_values(A, b, None, succ, N)
        seen.append((zz.copy(), b.copy()))
        zz = vals[succ, N - 1]
    tail = seen[-2 * MAX_ROUNDS:]
    flips = [r for r in range(L) if len({float(bb[r]) for _z, bb in tail}) > 1]
    if not flips:
        return False
    # 2. each flipping mover's breakpoints near the cycle, and its policies between them
    steps = {}
    for r in flips:
        lo = min(zq[r] for zq, _b in tail)
        hi = max(zq[r] for zq, _b in tail)
        pad = max(hi - lo, 1e-6)
        grid = np.linspace(max(0.0, lo - pad), min(1.0, hi + pad), 129)
        pols = [policy(r, g) for g in grid]
        cuts, found = [], []
        for j in range(1, len(grid)):
            if pols[j][1] != pols[j - 1][1]:
                a, c = grid[j - 1], grid[j]
                for _k in range(200):
                    mid = 0.5 * (a + c)
                    if mid in (a, c):
                        break
                    if policy(r, mid)[1] == pols[j - 1][1]:
                        a = mid
                    else:
                        c = mid
                cuts.append(c)
                found.append((policy(r, a), policy(r, c)))
        # policies 0..len(cuts): policy k holds on [cuts[k-1], cuts[k]]
        pol_list = [pols[0]] + [f[1] for f in found]
        steps[r] = (cuts, pol_list, grid[0], grid[-1])

    def solve_candidate(choice):
        """choice[r] = ("pure", k) or ("mix", k): mix policies k and k+1 at cuts[k]."""
        mix = [r for r in flips if choice[r][0] == "mix"]

        def run(q):
            zz = z[orbit].copy()
            for r in flips:
                cuts = steps[r][0]
                if choice[r][0] == "mix":
                    zz[r] = cuts[choice[r][1]]
            for _k in range(MAX_ROUNDS):
                own, A, b = _turns(sub, zz, V, space, table, m, M1, N)
                for r in flips:
                    kind, k = choice[r]
                    pols = steps[r][1]
                    if kind == "pure":
                        A[r], b[r] = pols[k]
                    else:
                        w = float(np.clip(q[mix.index(r)], 0.0, 1.0))
                        A[r] = w * pols[k][0] + (1 - w) * pols[k + 1][0]
                        b[r] = w * pols[k][1] + (1 - w) * pols[k + 1][1]
                vals = _orbit_values(A, b, None, succ, N)
                z_new = vals[succ, N - 1]
                if np.max(np.abs(z_new - zz)) <= 1e-15:
                    return vals, z_new
                zz = z_new
            return None, None

        def F(q):
            vals, zz = run(q)
            if vals is None:
                return np.full(len(mix), 1.0)
            return np.array([zz[r] - steps[r][0][choice[r][1]] for r in mix])
        q = np.zeros(0)
        if mix:
            try:
                if len(mix) == 1:
                    f0, f1 = F(np.array([0.0]))[0], F(np.array([1.0]))[0]
                    if f0 * f1 > 0:
                        return None
                    q = np.array([optimize.brentq(lambda w: F(np.array([w]))[0], 0.0, 1.0, xtol=1e-16)])
                else:
                    q = optimize.root(F, np.full(len(mix), 0.5), method="hybr", tol=1e-15).x
            except (ValueError, RuntimeError):
                return None
            if not np.all((q >= -1e-12) & (q <= 1 + 1e-12)) or np.max(np.abs(F(q))) > 1e-12:
                return None
        vals, zz = run(q)
        if vals is None:
            return None
        # the pure movers' bust values must lie where their policy is a best response
        for r in flips:
            kind, k = choice[r]
            cuts = steps[r][0]
            if kind == "pure":
                lo = cuts[k - 1] if k > 0 else -np.inf
                hi = cuts[k] if k < len(cuts) else np.inf
                if not (lo - 1e-13 <= zz[r] <= hi + 1e-13):
                    return None
        own, _A, _b = _turns(sub, zz, V, space, table, m, M1, N)
        if np.max(own - vals[:, 0]) > CERTIFICATE:
            return None
        return vals, {int(sub[r]): float(np.clip(w, 0, 1)) for r, w in zip(mix, q)}

    options = {r: [("pure", k) for k in range(len(steps[r][1]))] + [("mix", k) for k in range(len(steps[r][0]))]
               for r in flips}
    cands = sorted(product(*(options[r] for r in flips)), key=lambda c: sum(kind == "mix" for kind, _k in c))
    for cand in cands:
        got = solve_candidate(dict(zip(flips, cand)))
        if got is not None:
            V[sub] = got[0]
            mixed.update(got[1])
            return True
    return False


def certificate(V: np.ndarray, space, table, m: int, N: int) -> float:
    """The largest gain of a deviation: max over states of (the mover's best value by the
    turn DP against the equilibrium's bust value) - (its equilibrium value)."""
    M1 = m ** (N - 1)
    states = np.arange(m ** N)
    sig = _rotate(states, m, M1, states // M1)
    z = V[sig, N - 1]
    worst = 0.0
    for chunk in np.array_split(states, max(1, len(states) // 200_000)):
        own, _A, _b = _turns(chunk, z[chunk], V, space, table, m, M1, N)
        worst = max(worst, float(np.max(own - V[chunk, 0])))
    return worst
