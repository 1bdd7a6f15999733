"""Conformance of the turn engine (thousand.engine), the one definition of a turn in play,
on every preset and on random rulesets: its chance nodes are distributions, every legal
action applies, games end; and the fast encodings agree with it -- the kernel's end
distribution of the optimal turn, and the compiled simulator's games for the same seeds."""

import heapq
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_kernel_twin import _bust_everywhere, rulesets

from thousand import kernel
from thousand.analysis import simulate
from thousand.analysis.bots import BotState, HoldBot, RandomBot
from thousand.engine import MAX_TURNS, TurnEnd, TurnRules, TurnState, finish_turn
from thousand.engine.ends import TurnEnds
from thousand.engine.player import WIN
from thousand.engine.states import seeds
from thousand.kernel._sim_pure import Rng
from thousand.rules import from_mapping, load_ruleset, preset_names
from thousand.solvers.advice import SolvedTurn

# the kernel in use against the engine, exact fractions and published values: run on the
# pure twin too (tests/conftest.py)
pytestmark = pytest.mark.twin

PRESETS = preset_names("1000")
_fast = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def game_rulesets(draw):
    """A random scoring table (tests/test_kernel_twin.py) under random game rules: opening,
    a pit, samosval, overtaking, bolts and a barrel of any kind, on a small goal."""
    rs = draw(rulesets(max_dice=5))
    m = rs.to_mapping()
    u = rs.unit
    goal = u * draw(st.integers(20, 60))
    m["goal"] = goal
    m["open_min"] = u * draw(st.integers(0, 3))
    m["min_bank"] = u * draw(st.integers(0, 4))
    if draw(st.booleans()):
        low = u * draw(st.integers(4, goal // u // 2))
        m["pits"] = [{"low": low, "exit": low + u * draw(st.integers(1, 4))}]
    if draw(st.booleans()):
        m["dump"] = [u * draw(st.integers(3, goal // u - 5))]
        m["dump_mid_turn"] = draw(st.booleans())
    m["overtake"] = u * draw(st.integers(0, 2))
    if draw(st.booleans()):
        m["bolts"] = {
            "limit": draw(st.integers(2, 3)),
            "penalty": u * draw(st.integers(1, 4)),
            "consecutive": draw(st.booleans()),
            "exempt": draw(st.sampled_from([[], ["unopened"]])),
        }
    kind = draw(st.sampled_from(["none", "points", "region", "exact"]))
    if kind == "points":
        m["barrel"] = {
            "kind": "points",
            "threshold": goal - u * draw(st.integers(2, 6)),
            "attempts": draw(st.integers(0, 3)),
            "fall_penalty": u,
            "max_falls": draw(st.integers(0, 2)),
            "push_off": draw(st.sampled_from(["none", "fall"])),
        }
    elif kind == "region":
        m["barrel"] = {"kind": "region", "threshold": goal - u * draw(st.integers(2, 6))}
    elif kind == "exact":
        m["barrel"] = {"kind": "exact", "overshoots": draw(st.integers(1, 3)), "fall_penalty": u, "max_falls": 1}
    from hypothesis import reject

    from thousand.base.errors import RulesetError
    from thousand.rules import from_mapping

    try:
        out = from_mapping(m)
    except RulesetError:
        reject()
    if not _bust_everywhere(kernel.roll_table(out)):
        reject()  # a dice count that always scores: a turn of hot dice need not end
    return out


def _some_states(rs, k=12, seed=0):
    """Player states of ``rs`` to start turns from: the initial state and a spread of seeds
    (fewer with six dice, whose turns are long to walk in Python)."""
    k = k if rs.dice < 6 else 2
    engine = TurnRules(rs)
    xs = seeds(engine.moves)
    rng = random.Random(seed)
    return [engine.moves.initial()] + rng.sample(xs, min(k, len(xs)))


# --------------------------------------------------------------------------- the state machine


@pytest.mark.parametrize("name", PRESETS)
def test_outcomes_are_distributions(name):
    rs = load_ruleset(name)
    engine = TurnRules(rs)
    for n in range(1, rs.dice + 1):
        outs = engine.outcomes(TurnState(engine.moves.initial(), 0, n))
        exact = sum(Fraction(round(p * rs.faces**n), rs.faces**n) for _, p in outs)
        assert exact == 1 and abs(sum(p for _, p in outs) - 1) < 1e-12
        assert all(len(r) == n and list(r) == sorted(r) for r, _ in outs)


def _check_every_action_applies(rs, seed, walks=30):
    """Random walks through turns: every legal action applies, to a state of the
    same player or to an end that finish_turn accepts."""
    engine = TurnRules(rs)
    rng = random.Random(seed)
    for x in _some_states(rs, seed=seed):
        for _ in range(walks):
            s = engine.start(x)
            for _step in range(200):
                roll = tuple(sorted(rng.randint(1, rs.faces) for _ in range(s.dice)))
                r = engine.after_roll(s, roll)
                if isinstance(r, TurnEnd):
                    end = r
                    break
                legal = engine.legal(r)
                assert legal, "a roll that does not bust has a set-aside"
                assert len({(a.keep, a.roll) for a in legal}) == len(legal)
                for a in legal:
                    nxt = engine.apply(r, a)
                    if isinstance(nxt, TurnEnd):
                        assert nxt.total == s.total + a.points and (a.forced or not a.roll)
                    else:
                        assert nxt.player == x and nxt.roll is None and nxt.total == s.total + a.points
                        assert engine.compulsory(nxt) == (a.then == "roll (compulsory)")
                        assert 1 <= nxt.dice <= rs.dice
                a = legal[rng.randrange(len(legal))]
                nxt = engine.apply(r, a)
                if isinstance(nxt, TurnEnd):
                    end = nxt
                    break
                s = nxt
            else:
                continue
            res = finish_turn(engine.moves, (x, x), 0, end)
            if res.won:
                assert res.players[0] == WIN
            else:
                assert engine.moves.check(res.players[0]) == res.players[0]
                assert engine.moves.check(res.players[1]) == res.players[1]


@pytest.mark.parametrize("name", PRESETS)
def test_every_legal_action_applies(name):
    _check_every_action_applies(load_ruleset(name), seed=len(name))


@_fast
@given(game_rulesets(), st.integers(0, 2**16))
def test_every_legal_action_applies_random_rules(rs, seed):
    _check_every_action_applies(rs, seed, walks=5)


def _engine_game(rs, bots, seed):
    """One game of ``bots`` (one bot: a race alone; three or more: any number of players)
    through the engine with the simulator's dice: game 0 of ``seed`` draws each roll of n
    dice as one number below faces**n (the ordered roll, die i its digit i). Returns
    (winner seat or None, turns played)."""
    engine = TurnRules(rs)
    rng = Rng(seed, 0)
    F = rs.faces
    states = [engine.moves.initial()] * len(bots)
    mover = 0
    for k in range(1, MAX_TURNS + 1):
        s = engine.start(states[mover])
        opp = states[(mover + 1) % len(bots)] if len(bots) > 1 else None
        while True:
            r = rng.below(F**s.dice)
            s = engine.after_roll(s, [(r // F**i) % F + 1 for i in range(s.dice)])
            if isinstance(s, TurnEnd):
                break
            s = engine.apply(s, bots[mover].choose(BotState.at(engine, s, opp)))
            if isinstance(s, TurnEnd):
                break
        res = finish_turn(engine.moves, states, mover, s)
        if res.won:
            return mover, k
        states = list(res.players)
        mover = (mover + 1) % len(bots)
    return None, MAX_TURNS


@pytest.mark.parametrize("name", PRESETS)
def test_random_games_end(name):
    rs = load_ruleset(name)
    for seed in range(3):
        winner, k = _engine_game(rs, [HoldBot(rs.goal // 4), HoldBot(rs.goal // 8), RandomBot(seed)], seed)
        assert winner is not None and k < MAX_TURNS


# --------------------------------------------------------------------------- the kernel's turn


def _random_end_values(ends: TurnEnds, rng: np.random.Generator):
    """End values for one turn: banks and forced ends worth 0.5-1, a bust 0-0.3, an instant win 1
    (random, so that the optimal decisions have no ties)."""
    T = ends.T
    stop = np.where(ends.stop_ok[:, None] == 1, rng.uniform(0.5, 1.0, (T + 1, 1)), 0.0)
    forced = np.where(ends.forced_ok[:, None] == 1, rng.uniform(0.5, 1.0, (T + 1, 1)), 0.0)
    return stop, forced, rng.uniform(0.0, 0.3, 1), np.ones(1)


def _optimal_action(engine, sol, r):
    """The action of largest value at the rolled state ``r`` (a tie banks; then the first)."""
    best, bv = None, None
    for a in engine.legal(r):
        v = sol.value(engine, engine.apply(r, a))
        if bv is None or v > bv or (v == bv and not a.roll and best.roll):
            best, bv = a, v
    return best


def engine_end_distribution(engine: TurnRules, sol: SolvedTurn, x) -> dict:
    """How the optimal turn of ``x`` ends, enumerated through the engine: {(kind, t units): p}
    with totals above T counted at T (as the kernel does). Totals up to T are walked forward
    in increasing order; beyond T every total behaves alike, so the tail is a linear system
    over the dice count (hot dice chain)."""
    u, T, D = engine.rs.unit, sol.ends.T, engine.rs.dice

    def throw(s, m, push, sink):
        """The roll at the state ``s`` (mass ``m``): ends into ``sink``, states to ``push``."""
        for roll, p in engine.outcomes(s):
            r = engine.after_roll(s, roll)
            if not isinstance(r, TurnEnd):
                r = engine.apply(r, _optimal_action(engine, sol, r))
            if isinstance(r, TurnEnd):
                k = (r.kind, min(r.total // u, T))
                sink[k] = sink.get(k, 0.0) + m * p
            else:
                push(r, m * p)

    out: dict = {}
    tail = np.zeros(D + 1)  # mass that passed T, by the dice to roll
    mass = {(0, D): 1.0}
    heap = [(0, D)]

    def push(s, q):
        if s.total > T * u:
            tail[s.dice] += q
            return
        k = (s.total, s.dice)
        if k not in mass:
            mass[k] = 0.0
            heapq.heappush(heap, k)
        mass[k] += q

    while heap:
        t, n = heapq.heappop(heap)
        throw(TurnState(x, t, n), mass.pop((t, n)), push, out)
    if tail.any():
        M = np.zeros((D + 1, D + 1))  # tail: dice n -> dice n' after one roll
        ends_of = [{} for _ in range(D + 1)]
        for n in range(1, D + 1):

            def push_tail(s, q, n=n):
                M[n, s.dice] += q

            throw(TurnState(x, (T + 1) * u, n), 1.0, push_tail, ends_of[n])
        keys = sorted({k for e in ends_of for k in e})
        B = np.array([[e.get(k, 0.0) for k in keys] for e in ends_of[1:]])
        X = np.linalg.solve(np.eye(D) - M[1:, 1:], B)
        for j, k in enumerate(keys):
            out[k] = out.get(k, 0.0) + float(tail[1:] @ X[:, j])
    return out


def _check_end_distribution(rs, seed):
    engine = TurnRules(rs)
    table = kernel.roll_table(rs)
    rng = np.random.default_rng(seed)
    for x in _some_states(rs, k=6, seed=seed):
        ends = TurnEnds.of(engine.moves, x)
        stop, forced, bust, win = _random_end_values(ends, rng)
        tv = kernel.turn_dp(table, ends.stop_ok, stop, ends.forced_ok, forced, bust, win, full=True)
        sol = SolvedTurn(ends, stop, forced, bust, win, tv)
        sp, fp, bp, wp = kernel.end_distribution(table, ends.stop_ok, stop, ends.forced_ok, forced, tv)
        want = {("stop", t): sp[t, 0] for t in np.flatnonzero(sp[:, 0])}
        want.update({("forced", t): fp[t, 0] for t in np.flatnonzero(fp[:, 0])})
        want.update({k: v for k, v in (((("bust", 0), bp[0]), (("win", 0), wp[0]))) if v})
        got = engine_end_distribution(engine, sol, x)
        keys = set(want) | set(got)
        err = max(abs(want.get(k, 0.0) - got.get(k, 0.0)) for k in keys)
        assert err <= 1e-12, (rs.name, x, err)
        assert abs(sum(got.values()) - 1) <= 1e-12


@pytest.mark.parametrize("name", PRESETS)
def test_optimal_turn_ends_as_the_kernel_says(name):
    _check_end_distribution(load_ruleset(name), seed=len(name))


@_fast
@given(game_rulesets(), st.integers(0, 2**16))
def test_optimal_turn_ends_as_the_kernel_says_random_rules(rs, seed):
    _check_end_distribution(rs, seed)


def test_optimal_turn_ends_past_a_mid_turn_samosval_at_the_barrel():
    """A mid-turn samosval at the points barrel's threshold (160, from 155): a total past it
    (165) is no samosval, so the turn's horizon must reach past it, not stop at the
    barrel's threshold (the random rules above found this)."""
    rs = from_mapping(
        {
            "dice": 2,
            "goal": 185,
            "scoring": {"singles": {"1": 5}},
            "dump": [160],
            "dump_mid_turn": True,
            "barrel": {"kind": "points", "threshold": 160, "attempts": 0, "fall_penalty": 5, "push_off": "fall"},
        }
    )
    moves = TurnRules(rs).moves
    assert TurnEnds.of(moves, moves.initial()._replace(score=155)).T >= 2
    _check_end_distribution(rs, 0)


# --------------------------------------------------------------------------- the simulator's games


@pytest.mark.parametrize("name", PRESETS)
def test_simulator_plays_the_engines_games(name):
    """The compiled simulator's games are the engine's games: same winner, same length
    (a race alone where the simulator plays no duels: equal_turns)."""
    rs = load_ruleset(name)
    holds = (rs.goal // 3, rs.goal // 10)
    for seed in range(4):
        # a game longer than MAX_TURNS is unfinished in both (hold bots can loop in pits)
        if rs.equal_turns:
            winner, turns_played = _engine_game(rs, [HoldBot(holds[1])], seed)
            sim = simulate.simulate_race(rs, f"hold:{holds[1]}", games=1, seed=seed)
            assert (sim.first_wins, sim.unfinished) == ((1, 0) if winner == 0 else (0, 1))
        else:
            winner, turns_played = _engine_game(rs, [HoldBot(h) for h in holds], seed)
            sim = simulate.simulate_duel(rs, *(f"hold:{h}" for h in holds), games=1, seed=seed)
            assert (sim.first_wins, sim.second_wins, sim.unfinished) == {0: (1, 0, 0), 1: (0, 1, 0), None: (0, 0, 1)}[
                winner
            ]
        if winner is not None:
            assert sim.mean_turns == turns_played
