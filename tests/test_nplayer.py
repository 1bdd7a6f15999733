"""The N-player solver (thousand.solvers.nplayer): two players give the duel; three players of
small Pig games against an independent value iteration over (scores, turn total); the
values are probabilities that sum to 1 and the certificate (the largest gain of a
deviation) is at most 1e-9."""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest
import tiny
from tiny import TINY_DUELS

from thousand import kernel
from thousand.engine.player import Moves
from thousand.rules import load_ruleset
from thousand.solvers import nplayer
from thousand.solvers.nplayer import NPlayerError, solve_nplayer
from thousand.storage.solve import solve_objective


def test_two_players_are_the_duel(tmp_path):
    rs = load_ruleset("pig", ("goal=30",))
    sol = solve_nplayer(rs, 2)
    duel = solve_objective(rs, "duel", str(tmp_path), progress=False)
    m = len(sol.space)
    worst = max(
        abs(sol.V[i * m + j, 0] - duel.value(x, y))
        for i, x in enumerate(sol.space.states)
        for j, y in enumerate(sol.space.states)
    )
    assert worst <= 1e-12
    assert np.allclose(sol.V.sum(axis=1), 1.0, atol=1e-12) and sol.certificate <= 1e-9


def reference_pig(goal: int, faces: int, players: int, sweeps: int = 20000):
    """Value iteration, written apart from the solver: V[(scores, t)] is the vector of
    win probabilities (the mover first); the mover holds or rolls to maximise its own
    entry (holding on ties); a 1 loses the turn total, another face adds its value."""
    from itertools import product

    scores = list(product(range(goal), repeat=players))
    V = {(s, t): np.full(players, 1.0 / players) for s in scores for t in range(goal)}
    rot = lambda v: np.roll(v, 1)  # noqa: E731  the next state's vector seen from this mover

    def hold(s, t):
        if s[0] + t >= goal:
            return np.eye(players)[0]
        return rot(V[(s[1:] + (s[0] + t,), 0)])

    for _k in range(sweeps):
        change = 0.0
        for s in scores:
            for t in range(goal - s[0] - 1, -1, -1):
                outs = [rot(V[(s[1:] + (s[0],), 0)])]
                for f in range(2, faces + 1):
                    outs.append(hold(s, t + f) if s[0] + t + f >= goal else V[(s, t + f)])
                roll = sum(outs) / faces
                new = roll
                if t > 0:
                    h = hold(s, t)
                    new = h if h[0] >= roll[0] else roll
                change = max(change, float(np.max(np.abs(new - V[(s, t)]))))
                V[(s, t)] = new
        if change < 1e-15:
            return V
    raise AssertionError("the reference value iteration did not converge")


@pytest.mark.parametrize("goal, faces", [(6, 3), (8, 4)])
def test_three_players_of_small_pig_against_value_iteration(goal, faces):
    rs = load_ruleset(
        "pig",
        (
            f"goal={goal}",
            f"faces={faces}",
            "scoring.singles={}",
            *[f"scoring.singles.{f}={f}" for f in range(2, faces + 1)],
        ),
    )
    sol = solve_nplayer(rs, 3)
    ref = reference_pig(goal, faces, 3)
    moves = Moves(rs)
    worst = 0.0
    for s in np.ndindex(*(goal,) * 3):
        xs = [moves.normalise(moves.initial()._replace(score=int(v))) for v in s]
        worst = max(worst, float(np.max(np.abs(sol.V[sol.index(xs)] - ref[(tuple(int(v) for v in s), 0)]))))
    assert worst <= 1e-12
    assert sol.certificate <= 1e-9


@pytest.mark.parametrize("goal", [20, pytest.param(50, marks=pytest.mark.slow)])
def test_three_player_pig_is_an_equilibrium(goal):
    sol = solve_nplayer(load_ruleset("pig", (f"goal={goal}",)), 3)
    assert np.all(sol.V >= -1e-15) and np.all(sol.V <= 1 + 1e-15)
    assert np.allclose(sol.V.sum(axis=1), 1.0, atol=1e-12)
    assert sol.certificate <= 1e-9
    first, second, third = sol.start
    assert first > second > third  # moving earlier is worth more at Pig


@pytest.mark.skipif(kernel.BACKEND.name == "pure", reason="the pure twin holds the GIL and always runs one thread")
@pytest.mark.parametrize(
    "rules",
    [("pig", ("goal=30",)), ("farkle", ("goal=1000",)), ("tiny", "overtaking-bolts"), ("tiny-equal", "equal-barrel")],
)
def test_threads_do_not_change_a_value(rules, monkeypatch):
    """The movers' turns of a level run on several threads, each writing its own columns:
    one thread and three (more than this machine's cores, so they interleave) give the same
    values to the last bit, and the same mixed states. Every level runs threaded here, however
    short its turns."""
    monkeypatch.setattr(nplayer, "PARALLEL_WORK", 0)
    if rules[0] == "tiny":
        rs = tiny.solved(TINY_DUELS, rules[1])[0]
    elif rules[0] == "tiny-equal":
        rs = tiny.solved(tiny.TINY_EQUAL_TURNS, rules[1])[0]
    else:
        rs = load_ruleset(*rules)
    one, three = solve_nplayer(rs, 3, threads=1), solve_nplayer(rs, 3, threads=3)
    assert np.array_equal(one.V, three.V)
    assert one.mixed == three.mixed and one.certificate == three.certificate


def test_thread_count():
    """0 threads means every core the process may use, or OMP_NUM_THREADS where set; the
    pure twin always runs one."""
    compiled, pure = kernel.backend("compiled"), kernel.backend("pure")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert compiled.threads(5) == 5 and pure.threads(5) == 1 and pure.threads(0) == 1
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("OMP_NUM_THREADS", raising=False)
        assert compiled.threads(0) == cores
        mp.setenv("OMP_NUM_THREADS", "3,2")
        assert compiled.threads(0) == 3 and pure.threads(0) == 1
        mp.setenv("OMP_NUM_THREADS", "many")
        assert compiled.threads(0) == cores


def test_refused_in_one_line_before_any_work():
    with pytest.raises(NPlayerError, match="GB of values"):
        solve_nplayer(load_ruleset("classic"), 3)
    with pytest.raises(NPlayerError, match="GB of values"):
        solve_nplayer(load_ruleset("plain"), 4)
    # equal_turns puts the mover's seat in the state: four seats of Pig are 4 * 100**4 states
    with pytest.raises(NPlayerError, match="400,000,000 states of 4 players"):
        solve_nplayer(load_ruleset("pig", ("equal_turns=true",)), 4)


INTERACTING = [name for name in sorted(TINY_DUELS) if name != "pig-10"]


@pytest.mark.parametrize("name", INTERACTING)
def test_two_players_with_interactions_are_the_duel(name):
    """Overtaking, push-off, mid-turn dumps, bolts and barrels: the N-player solver's
    repeated level sweeps reach the duel solver's values (its passes and policy rounds)."""
    rs, duel = tiny.solved(TINY_DUELS, name)
    sol = solve_nplayer(rs, 2)
    assert sol.passes > 1  # these rules lower levels: one sweep is not enough
    assert [x for x in sol.space.states] == [x for x in duel.model.space.states]
    m = sol.m
    assert np.max(np.abs(sol.V[:, 0].reshape(m, m) - duel.P)) <= 1e-12
    assert sol.certificate <= 1e-12


def reference_players(rs, sol):
    """Every state's turn solved by the reference turn (tests/reference.py: sorted rolls
    scored one by one, plain recursion, no kernel) against the solver's values, the
    others changed by each end as the rules say (thousand.engine.player.Moves); then the profile
    of those decisions valued by one sparse linear solve over (state, place). Returns
    (the reference's best value of each mover, the profile's values (S, N))."""
    from reference import TurnReference
    from scipy import sparse
    from scipy.sparse.linalg import spsolve

    from thousand.engine.player import WIN

    ref = TurnReference(rs)
    mv = ref.moves
    N, m = sol.players, sol.m
    st = sol.space.states
    S = m**N
    rows, cols, vals = [], [], []
    rhs = np.zeros(S * N)
    best = np.empty(S)
    for s in range(S):
        xs = [st[(s // m ** (N - 1 - k)) % m] for k in range(N)]
        x, others = xs[0], xs[1:]

        def label(kind, t, x=x, others=others):
            if kind == "win":
                return WIN
            if kind == "bust":
                return (*others, mv.zero(x))
            ev = mv.mid_turn(x, t) if kind == "forced" else None
            y = mv.mid_turn_end(x, t, ev) if ev else mv.bank(x, t)
            if y == WIN:
                return WIN
            if ev == "overshoot":
                return (*others, y)
            return (*(mv.affect_opponent(o, x.score, mv.raised_to(x, t), mv.climbed(x, y)) for o in others), y)

        def value(o):
            return 1.0 if o == WIN else sol.V[sol.index(o), N - 1]

        v, dist = ref.solve(x, value, label)
        best[s] = float(v)
        profile_rows(
            s, N, dist, lambda o: None if o == WIN else sol.index(o), lambda o: np.eye(N)[0], rows, cols, vals, rhs
        )
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(S * N, S * N))
    return best, spsolve(A.tocsc(), rhs).reshape(S, N)


def profile_rows(s, N, dist, successor, terminal, rows, cols, vals, rhs):
    """State ``s``'s block of ``(I - M) V = rhs`` over (state, place), from its turn's end
    distribution ``dist``: ``successor(o)`` the flat index of the state an outcome leads to,
    or None where it ends the game with the value vector ``terminal(o)`` (mover first)."""
    for k in range(N):
        rows.append(s * N + k)
        cols.append(s * N + k)
        vals.append(1.0)
    for o, q in dist.items():
        j = successor(o)
        if j is None:
            rhs[s * N : (s + 1) * N] += float(q) * terminal(o)
            continue
        for k in range(N):  # V[s][k] = sum q V[o][k - 1]: the mover goes last
            rows.append(s * N + k)
            cols.append(j * N + (k - 1) % N)
            vals.append(-float(q))


@pytest.mark.twin
@pytest.mark.parametrize("name", INTERACTING)
def test_three_players_with_interactions_against_an_independent_evaluation(name):
    """Three players of tiny rulesets with every interaction: no mover gains by deviating
    (the reference turn's best value is the solver's), and the solver's values are those
    of the profile of the reference's decisions, valued by one linear solve."""
    rs = tiny.solved(TINY_DUELS, name)[0]
    sol = solve_nplayer(rs, 3)
    assert not sol.mixed
    best, profile = reference_players(rs, sol)
    assert np.max(np.abs(best - sol.V[:, 0])) <= 1e-12
    assert np.max(np.abs(profile - sol.V)) <= 1e-12
    assert np.allclose(sol.V.sum(axis=1), 1.0, atol=1e-12)
    assert sol.certificate <= 1e-12


@pytest.mark.slow
def test_three_players_of_a_small_classic():
    """A 1000 ruleset with pits, a dump, overtaking, bolts and a barrel with push-off:
    three players' equilibrium, certified, its values probabilities that sum to 1, and
    the first seat's head start worth something."""
    rs = load_ruleset("classic", SMALL_CLASSIC)
    sol = solve_nplayer(rs, 3)
    assert sol.certificate <= 1e-9
    assert np.all(sol.V >= -1e-12) and np.all(sol.V <= 1 + 1e-12)
    assert np.allclose(sol.V.sum(axis=1), 1.0, atol=1e-12)
    assert sol.start[0] > 1 / 3


# every interaction of classic on a board small enough for three players (79,507 states);
# pits cost bolts here: with bolts exempt in a pit, players waiting in pits for the others
# to climb out first make a war of attrition in which the game need not end
SMALL_CLASSIC = (
    "goal=150",
    "pits=[{low=50,exit=75}]",
    "barrel.threshold=100",
    "dump=[85]",
    "barrel.max_falls=1",
    "bolts.limit=2",
    'bolts.exempt=["unopened"]',
)


@pytest.mark.parametrize("name", INTERACTING)
def test_the_equilibrium_played_is_the_equilibrium_with_interactions(name):
    """The solver's decisions valued as fixed decisions (thousand.solvers.profile.evaluate_profile:
    kept end distributions, sweeps, trees and cycles of zero turns) give its values."""
    from thousand.solvers.profile import EquilibriumDecider, evaluate_profile

    rs = tiny.solved(TINY_DUELS, name)[0]
    sol = solve_nplayer(rs, 3)
    V = evaluate_profile(sol.space, 3, [EquilibriumDecider(sol)])
    assert np.max(np.abs(V[0] - sol.V)) <= 1e-12


@pytest.mark.parametrize("name", ["overtaking-bolts", "barrel-push-off", "dump-opening"])
def test_a_bot_among_equilibrium_players_with_interactions(name, tmp_path):
    """A hold-at bot in each seat of a three-player game with overtaking and bolts, a
    barrel with push-off, or mid-turn dumps: its exact chances (its turns enumerated through the turn engine,
    the game valued by evaluate_profile) agree with Monte Carlo games played through the
    engine's own end-of-turn rules (thousand.engine.finish_turn)."""
    from thousand.analysis.bots import load_bot
    from thousand.analysis.seats import exact_seats, mc_seats
    from thousand.solvers.nplayer import NPlayerSolution, certificate

    rs = tiny.solved(TINY_DUELS, name)[0]
    sol = solve_nplayer(rs, 3)
    bot = load_bot("hold:10", rs, "duel", str(tmp_path), 1, 2.0, {})
    got, asked = exact_seats(sol, bot)
    assert asked > 0
    assert isinstance(sol, NPlayerSolution) and certificate(sol.V, sol.game) <= 1e-12
    mc = mc_seats(sol, bot, 6000, seed=3)
    for k, r in enumerate(mc):
        lo, hi = r["ci95"]
        assert lo - 0.005 <= got[k] <= hi + 0.005, (k, got[k], r)
        assert got[k] <= sol.start[k] + 1e-12


@pytest.mark.parametrize("name", ["overtaking-bolts", "barrel-push-off", "dump-opening"])
def test_exact_advice_with_interactions_is_the_equilibrium(name, tmp_path):
    """The advice for three players (thousand.storage.players: the turn engine's own turn, each end
    valued in the stored table with the others as the end leaves them) gives, at the start
    of a turn, the solver's value of the mover in every state."""
    from thousand.storage.players import solve_players

    rs = tiny.solved(TINY_DUELS, name)[0]
    table = solve_players(rs, 3, tmp_path)
    sol = solve_nplayer(rs, 3)
    st = sol.space.states
    worst = 0.0
    for s in range(0, sol.V.shape[0], 7):
        xs = [st[(s // sol.m ** (2 - k)) % sol.m] for k in range(3)]
        adv = table.advise(xs[0], xs[1:], turn=0, dice=rs.dice)
        worst = max(worst, abs(adv.best.value - sol.V[s, 0]))
    assert worst <= 1e-12


def test_sweeps_that_do_not_settle_stop_in_one_line():
    """Pits exempt from bolts, with overtaking: three players may wait in the pit for each
    other to climb out first, and the sweeps over the levels do not settle; the solver stops
    after 40 sweeps without a tenfold gain, saying why, instead of running on."""
    from tiny import PAIR_SCORING

    from thousand.rules import from_mapping

    rs = from_mapping(
        {
            "dice": 2,
            "goal": 30,
            "scoring": PAIR_SCORING,
            "overtake": 5,
            "pits": [{"low": 10, "exit": 20}],
            "bolts": {"limit": 2, "penalty": 10, "exempt": ["pit"]},
        }
    )
    assert solve_nplayer(rs, 2).certificate <= 1e-12  # the duel of it settles
    with pytest.raises(NPlayerError, match="do not settle.*wait for each other"):
        solve_nplayer(rs, 3)


def reference_last_round(rs, ref, horizon):
    """The rest of an equal_turns round after a win, by the reference turn (no kernel, no
    thousand.solvers.lastturn): ``U(ys, B, k)`` is the vector (each of the k players sharing the
    top total B, then each player of ``ys`` in seat order) when ``ys`` still have their
    last turns; each plays to maximise its own chance, a new top leaves the old leaders 0,
    an end short of the win condition acts on the players after it (overtaking, push-off),
    final totals above ``horizon`` count as the horizon (as the solver's)."""

    from thousand.engine.player import WIN

    mv = ref.moves

    @functools.cache
    def U(ys: tuple, B: int, k: int) -> tuple:
        if not ys:
            return (1.0 / k,)
        y, rest = ys[0], ys[1:]

        def part(o):
            kind, t = o
            if kind == "win":
                return "instant", None
            if kind == "stop" and mv.bank(y, t) == WIN:
                G = y.score + t
                if G > B:
                    return "top", U(rest, min(G, horizon), 1)
                if G == B:
                    return "tie", U(rest, B, k + 1)
                return "miss", U(rest, B, k)
            after = rest
            if kind in ("stop", "forced"):
                ev = mv.mid_turn(y, t) if kind == "forced" else None
                z = mv.mid_turn_end(y, t, ev) if ev else mv.bank(y, t)
                if ev != "overshoot":
                    after = tuple(mv.affect_opponent(o, y.score, mv.raised_to(y, t), mv.climbed(y, z)) for o in rest)
            return "miss", U(after, B, k)

        def value(o):
            what, nxt = part(o)
            return 1.0 if what == "instant" else (0.0 if what == "miss" else nxt[0])

        sat = max(mv.saturation(y), horizon + rs.unit - y.score) if mv.wins(y, rs.goal - y.score) else None
        _v, dist = ref.solve(y, value, lambda kind, t: (kind, t), sat=sat)
        out = np.zeros(len(ys) + 1)
        for o, q in dist.items():
            what, nxt = part(o)
            q = float(q)
            if what == "instant":
                out[1] += q
                continue
            out[0] += q * nxt[0] * (what != "top")
            out[1] += q * nxt[0] * (what != "miss")
            out[2:] += q * np.asarray(nxt[1:])
        return tuple(out)

    return U


def reference_players_equal_turns(rs, sol):
    """:func:`reference_players` with equal_turns: the mover's seat in the state, and a win
    by a seat before the last valued by :func:`reference_last_round` for the later seats
    (0 for the earlier ones); that seat's turn runs to the final-total horizon."""
    import sys

    from reference import TurnReference
    from scipy import sparse
    from scipy.sparse.linalg import spsolve

    from thousand.engine.player import WIN
    from thousand.solvers.lastturn import first_seat_T

    ref = TurnReference(rs, floats=True)  # float probabilities: the turns run to the horizon
    # ... and the memoised recursion goes one total deeper per roll (as reference.exact_duel)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    mv = ref.moves
    N, m = sol.players, sol.m
    horizon = sol.game.last_round.horizon
    U = reference_last_round(rs, ref, horizon)
    st = sol.space.states
    S = N * m**N
    rows, cols, vals = [], [], []
    rhs = np.zeros(S * N)
    best = np.empty(S)
    for s in range(S):
        c = s // m**N
        xs = [st[(s // m ** (N - 1 - k)) % m] for k in range(N)]
        x, others = xs[0], xs[1:]
        r = N - 1 - c  # the later seats of the round

        def label(kind, t, x=x, others=others, c=c, r=r):
            if kind == "win":
                return WIN
            if kind == "bust":
                return (c + 1) % N, (*others, mv.zero(x))
            ev = mv.mid_turn(x, t) if kind == "forced" else None
            y = mv.mid_turn_end(x, t, ev) if ev else mv.bank(x, t)
            if y == WIN:
                return ("final", min(x.score + t, horizon)) if r else WIN
            if ev == "overshoot":
                return (c + 1) % N, (*others, y)
            return (c + 1) % N, (
                *(mv.affect_opponent(o, x.score, mv.raised_to(x, t), mv.climbed(x, y)) for o in others),
                y,
            )

        def vector(o, others=others, r=r):
            out = np.zeros(N)
            out[: r + 1] = U(tuple(others[:r]), o[1], 1)
            return out

        def value(o):
            if o == WIN:
                return 1.0
            if o[0] == "final":
                return vector(o)[0]
            return sol.V[sol.index(o[1], seat=o[0]), N - 1]

        sat = first_seat_T(rs, mv, x, horizon) * rs.unit if r else None
        v, dist = ref.solve(x, value, label, sat=sat)
        best[s] = float(v)
        profile_rows(
            s,
            N,
            dist,
            lambda o: None if o == WIN or o[0] == "final" else sol.index(o[1], seat=o[0]),
            lambda o, vector=vector: np.eye(N)[0] if o == WIN else vector(o),
            rows,
            cols,
            vals,
            rhs,
        )
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(S * N, S * N))
    return best, spsolve(A.tocsc(), rhs).reshape(S, N)


EQUAL_TURNS = sorted(tiny.TINY_EQUAL_TURNS)


@pytest.mark.parametrize("name", EQUAL_TURNS)
def test_two_players_with_equal_turns_are_the_equal_turns_duel(name):
    """Two seats through the N-player solver, the seat of the mover in the state, equal the
    equal_turns duel (its own last-turn tables and seats) on every pair to 1e-12."""
    rs, duel = tiny.solved(tiny.TINY_EQUAL_TURNS, name)
    sol = solve_nplayer(rs, 2)
    m = sol.m
    perm = np.array([duel.model.space.index[x] for x in sol.space.states])
    table = duel.model.table_values(duel.P)[:, perm][:, :, perm]
    assert np.max(np.abs(sol.V[:, 0].reshape(2, m, m) - table)) <= 1e-12
    assert sol.certificate <= 1e-12


@pytest.mark.twin
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "equal-overtaking-bolts" else n for n in EQUAL_TURNS]
)  # its reference takes two minutes
def test_three_players_with_equal_turns_against_an_independent_evaluation(name):
    """Three seats with equal_turns: every later seat's last turn after a win, the highest
    total winning and a tie at the top shared. Checked apart from the kernel and from
    thousand.solvers.lastturn: no mover gains by deviating (the reference turn's best value, with
    the rest of the round by reference turns, is the solver's), and the profile of those
    decisions, valued by one linear solve, has the solver's values."""
    rs = tiny.solved(tiny.TINY_EQUAL_TURNS, name)[0]
    sol = solve_nplayer(rs, 3)
    assert sol.V.shape == (3 * sol.m**3, 3)
    best, profile = reference_players_equal_turns(rs, sol)
    assert np.max(np.abs(best - sol.V[:, 0])) <= 1e-12
    assert np.max(np.abs(profile - sol.V)) <= 1e-12
    assert np.allclose(sol.V.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(sol.V >= -1e-12) and np.all(sol.V <= 1 + 1e-12)
    assert sol.certificate <= 1e-12


@pytest.mark.parametrize("name", ["equal-barrel", pytest.param("equal-overtaking-bolts", marks=pytest.mark.slow)])
def test_exact_advice_with_equal_turns_is_the_equilibrium(name, tmp_path):
    """With equal_turns the stored table of three players keeps every seat, and the advice
    in each seat (the turn engine's own turn; a win before the last seat valued by the rest
    of the round, such a turn running to the final-total horizon) gives, at the start of
    a turn, the solver's value of the mover; the seat is required."""
    from thousand.base.errors import StateError
    from thousand.solvers.profile import EquilibriumDecider, evaluate_profile
    from thousand.storage.players import solve_players

    rs = tiny.solved(tiny.TINY_EQUAL_TURNS, name)[0]
    table = solve_players(rs, 3, tmp_path)
    sol = solve_nplayer(rs, 3)
    assert table.meta["last_turn_horizon"] == sol.game.last_round.horizon
    st, m = sol.space.states, sol.m
    worst = 0.0
    for s in range(0, sol.V.shape[0], 5):
        seat = s // m**3
        xs = [st[(s // m ** (2 - k)) % m] for k in range(3)]
        adv = table.advise(xs[0], xs[1:], turn=0, dice=rs.dice, seat=seat)
        worst = max(worst, abs(adv.best.value - sol.V[s, 0]))
    assert worst <= 1e-12
    assert np.allclose(table.seat_values(), sol.start, atol=1e-12)
    with pytest.raises(StateError, match="which seat"):
        table.advise(st[0], st[:2])
    # the equilibrium's decisions, valued as fixed decisions seat by seat, give its values
    V = evaluate_profile(sol.space, 3, [EquilibriumDecider(sol)])
    assert np.max(np.abs(V.reshape(-1, 3) - sol.V)) <= 1e-12
