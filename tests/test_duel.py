"""The duel objective: Pig's published optimum, exact fractions, invariants, advice."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import tiny
from click.testing import CliRunner
from reference import exact_duel
from tiny import TINY_DUELS

from thousand import kernel
from thousand.cli import main
from thousand.engine.player import Moves, PlayerState
from thousand.rules import from_mapping, load_ruleset
from thousand.solvers import duel
from thousand.solvers.duel import DuelModel, solve_duel
from thousand.solvers.race import solve_race

TINY = TINY_DUELS


def solved(name):
    return tiny.solved(TINY, name)


@pytest.mark.twin
@pytest.mark.slow
def test_pig_first_player_wins_0_530592725274():
    sol = solve_duel(load_ruleset("pig"))
    x0 = PlayerState(0)
    i = sol.model.space.index[x0]
    assert sol.P[i, i] == pytest.approx(0.530592725274, abs=1e-9)
    assert sol.residual <= 1e-12


@pytest.mark.twin
@pytest.mark.parametrize("name", sorted(TINY))
def test_duel_matches_exact_fractions(name):
    rs, sol = solved(name)
    states = sol.model.space.states
    exact = exact_duel(rs, states, sol.P.tolist())
    err = max(abs(float(exact[(x, y)]) - sol.P[i, j]) for i, x in enumerate(states) for j, y in enumerate(states))
    assert err <= 1e-12
    assert sol.residual <= 1e-12


@pytest.mark.parametrize("name", sorted(TINY))
def test_policy_iteration_reaches_the_passes_fixed_point(name, monkeypatch):
    """Policy iteration (the default for rulesets with penalties whose interface passes
    are off) and Gauss-Seidel passes alone find the same values, policy iteration in no
    more DP passes (on these tiny rules passes alone need as few as seven); so does
    policy iteration refused for memory (it then goes on with passes)."""
    monkeypatch.setattr(duel, "INTERFACE_MAX", 0)
    rs = from_mapping(TINY[name])
    sol = solve_duel(rs)
    by_passes = solve_duel(rs, method="passes")
    assert np.max(np.abs(sol.P - by_passes.P)) <= 1e-12
    assert by_passes.rounds == 0
    if DuelModel(rs).lowers_levels():
        assert sol.rounds >= 1 and sol.passes <= by_passes.passes
        monkeypatch.setenv("THOUSAND_DUEL_MEMORY_MB", "0.0001")
        starved = solve_duel(rs)
        assert starved.sweeps == 0 and "memory budget" in starved.fallback
        assert sol.fallback is None
        assert np.max(np.abs(starved.P - by_passes.P)) <= 1e-12


@pytest.mark.parametrize("name", [n for n in sorted(TINY) if DuelModel(from_mapping(TINY[n])).lowers_levels()])
@pytest.mark.parametrize("gain", [0.0, 1.0])
def test_chord_rounds_reach_the_same_fixed_point(name, gain, monkeypatch):
    """Rounds that keep the last round's systems and only measure the new residual
    (chord steps) change the work, not the fixed point: never kept (gain 0) and kept
    after every round that gains (gain 1) give the values of passes alone."""
    rs = from_mapping(TINY[name])
    by_passes = solve_duel(rs, method="passes")
    chords = []
    measure = duel._residual_pass
    monkeypatch.setattr(duel, "_residual_pass", lambda *a: chords.append(1) or measure(*a))
    monkeypatch.setattr(duel, "CHORD_GAIN", gain)
    monkeypatch.setattr(duel, "INTERFACE_MAX", 0)
    sol = solve_duel(rs)
    assert np.max(np.abs(sol.P - by_passes.P)) <= 1e-12 and sol.residual <= 1e-13
    assert (len(chords) > 0) == (gain > 0 and sol.rounds > 1)


@pytest.mark.parametrize("name", ["pig-10", "overtaking-bolts"])
def test_a_solve_from_nothing_starts_each_level_from_its_guess(name, monkeypatch):
    """The first pass starts each level from the two above (duel._guess) wherever
    passes solve the duel -- no penalties, or method "passes" -- and never from
    start values or under policy rounds; the values are the same either way."""
    rs = from_mapping(TINY[name])
    guessed = []
    guess = duel._guess
    monkeypatch.setattr(duel, "_guess", lambda *a: guessed.append(1) or guess(*a))
    penalties = DuelModel(rs).lowers_levels()
    sol = solve_duel(rs, method="passes")
    assert len(guessed) == len(duel._levels(DuelModel(rs)))
    guessed.clear()
    again = solve_duel(rs)
    assert (len(guessed) > 0) == (not penalties)
    guessed.clear()
    from_start = solve_duel(rs, method="passes", start=sol.P)
    assert not guessed
    assert np.max(np.abs(again.P - sol.P)) <= 1e-12 and np.max(np.abs(from_start.P - sol.P)) <= 1e-12


@pytest.mark.parametrize("name", sorted(TINY))
def test_a_pass_reads_only_the_interface_before_solving_it(name):
    """DuelModel.interface, checked against what a pass does: an interface pass (every
    level's DPs re-run until nothing moves) from two different value matrices that
    agree on the interface pairs gives the same values -- the pass is a function of
    the interface's values, which makes the interface passes' fixed point the duel's
    (solve_duel). Leaving the interface's same-level pairs out of it breaks this on
    overtaking-bolts."""
    rs = from_mapping(TINY[name])
    model = DuelModel(rs)
    n, levels = model.n, duel._levels(model)
    J = model.interface(n * n)
    assert (len(J) > 0) == model.lowers_levels()
    rng = np.random.default_rng(7)

    def exact_pass(Q):
        duel._pass(model, model.table, Q, levels, True, 0, interface=J)
        return Q

    # values near the duel's (far from them a policy may bust for sure, a singular level)
    near = solve_duel(rs, method="passes").P.T

    def noisy():
        return np.clip(near + rng.uniform(-0.05, 0.05, (n, n)), 0.0, 1.0)

    Q1, Q2 = noisy(), noisy()
    Q2.ravel()[J] = Q1.ravel()[J]
    assert np.max(np.abs(exact_pass(Q1.copy()) - exact_pass(Q2.copy()))) <= 1e-12
    if len(J):
        assert model.interface(len(J) - 1) is None  # a smaller limit refuses


@pytest.mark.parametrize("name", [n for n in sorted(TINY) if DuelModel(from_mapping(TINY[n])).lowers_levels()])
def test_interface_passes_reach_the_passes_fixed_point(name, monkeypatch):
    """Where the interface is small (DuelModel.interface, at most INTERFACE_MAX pairs)
    the default solve takes interface passes -- exact passes mixed on the interface's
    values -- and finds the values of passes alone; handed over to the policy rounds
    (and passes) after INTERFACE_PASSES, it finds them too, and says so."""
    rs = from_mapping(TINY[name])
    by_passes = solve_duel(rs, method="passes")
    monkeypatch.setattr(duel, "INTERFACE_MAX", 10**6)
    sol = solve_duel(rs)
    assert sol.interface == len(DuelModel(rs).interface(10**6)) > 0
    assert sol.rounds == 0 and sol.fallback is None
    assert np.max(np.abs(sol.P - by_passes.P)) <= 1e-12 and sol.residual <= 1e-13
    monkeypatch.setattr(duel, "INTERFACE_PASSES", 1)
    handed = solve_duel(rs)
    assert handed.interface == 0 and handed.fallback == "1 interface passes"
    assert np.max(np.abs(handed.P - by_passes.P)) <= 1e-12


def test_admissions_penalties_land_on_one_pair():
    """admission's only penalty is the push-off back to the opening score (75) by a
    player climbing the barrel (850, the score it records): a pass reads one pair
    before solving it, 75 to move against 850, and the default solve takes interface
    passes."""
    model = DuelModel(load_ruleset("admission"))
    J = model.interface(duel.INTERFACE_MAX)
    assert J is not None and len(J) == 1
    y, x = divmod(int(J[0]), model.n)
    mover, opponent = model.space.states[x], model.space.states[y]
    assert (mover.score, mover.opened, opponent.score) == (75, True, 850)


def test_the_solve_output_says_when_interface_passes_solved_it(tmp_path):
    """`thousand solve --json` names the interface's pairs (and no policy rounds) where
    interface passes solved the duel; the value is the passes' own."""
    rules = ["admission", "--set", "goal=100", "--set", "barrel.threshold=80", "--set", "open_min=10"]
    r = CliRunner().invoke(main, ["solve", *rules, "--objective", "duel", "--tables", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["interface_pairs"] == 1 and d["policy_rounds"] == 0 and d["residual"] <= 1e-13
    rs = load_ruleset("admission", ("goal=100", "barrel.threshold=80", "open_min=10"))
    by_passes = solve_duel(rs, method="passes")
    i = by_passes.model.space.index[Moves(rs).initial()]
    assert d["start_value"] == pytest.approx(by_passes.P[i, i], abs=1e-12)


def test_interface_passes_mix_on_the_interface_alone():
    """The mixing of interface passes fits its coefficients to the interface's residuals
    and moves every value with them: on an affine map whose values all follow one
    coordinate it lands on the fixed point in two steps, where plain iteration needs many."""
    rng = np.random.default_rng(3)
    b, c = rng.uniform(-0.4, 0.4, 50), rng.uniform(0.1, 0.9, 50)

    def G(x):  # every value is a function of x[0]; the fixed point of x[0] is c[0] / (1 - b[0])
        return b * x[0] + c

    acc = duel._Anderson(depth=3, bounded=False, fit=np.array([0]))
    x = np.zeros(50)
    for _ in range(2):
        g = G(x)
        acc.step(x, g)  # in place: g becomes the next iterate
        x = g
    want = b * c[0] / (1 - b[0]) + c
    assert np.max(np.abs(x - want)) <= 1e-12
    assert np.max(np.abs(G(G(np.zeros(50))) - want)) > 1e-3


def test_anderson_forgets_its_history_on_reset():
    """Anderson mixing reused for a new problem (the rounds' evaluations share one):
    after ``reset`` it solves the new affine fixed point as a fresh mixer does, step for
    step, although its buffers still hold the old problem's differences (on an affine
    map of 8 values a history of 10 ends, like a Krylov method, at the fixed point)."""
    rng = np.random.default_rng(5)
    A1, A2 = (rng.uniform(-0.2, 0.2, (8, 8)) for _ in range(2))
    c1, c2 = rng.uniform(size=8), rng.uniform(size=8)

    def run(acc, A, c, steps):
        x = np.zeros(8)
        for _ in range(steps):
            g = A @ x + c
            acc.step(x, g)
            x = g
        return x

    kept = duel._Anderson(depth=10, bounded=False)
    run(kept, A1, c1, 6)
    kept.reset()
    x_kept = run(kept, A2, c2, 12)
    x_fresh = run(duel._Anderson(depth=10, bounded=False), A2, c2, 12)
    np.testing.assert_array_equal(x_kept, x_fresh)
    want = np.linalg.solve(np.eye(8) - A2, c2)
    assert np.max(np.abs(x_kept - want)) <= 1e-9


@pytest.mark.parametrize("name", [n for n in sorted(TINY) if DuelModel(from_mapping(TINY[n])).lowers_levels()])
def test_a_policy_round_is_an_approximate_newton_step(name, monkeypatch):
    """A round moves Q by ``(I + M~)^-1 (TurnDP(P) - P)``: with the exact rows it lands on
    the greedy policy's own value (a dense solve of ``(I + M) q = c`` here); with
    entries below the drop left out, its error shrinks at least by the factor
    ``|(I + M~)^-1 (M - M~)|`` that the left-out entries allow."""
    rs = from_mapping(TINY[name])
    model = DuelModel(rs)
    n, levels = model.n, duel._levels(model)
    Q = np.full((n, n), 0.5)
    duel._pass(model, model.table, Q, levels, True, 0, first=True)
    movers, lo, hi = model.opponents()
    exact = kernel.duel_policy(model.table, model.plans, Q, movers, lo, hi)
    pair = np.concatenate([np.arange(a, b) * n + i for i, a, b in zip(movers, lo, hi)])

    def dense(drop):  # the rows as a matrix, entries below drop left out (a pair can appear twice in a row)
        out, big = np.zeros((len(pair), n * n)), exact.vals >= drop
        np.add.at(out, (np.repeat(np.arange(len(pair)), np.diff(exact.indptr))[big], exact.cols[big]), exact.vals[big])
        return out

    M = dense(0.0)
    solved = np.zeros(n * n, dtype=bool)
    solved[np.concatenate([lv.py * n + lv.px for lv in levels])] = True
    keep = solved[pair]
    pair, M, c = pair[keep], M[keep], exact.c[keep]
    A = M[:, pair]  # the unknowns' part; the rest is constant
    rhs = c - M[:, ~solved] @ Q.ravel()[~solved]
    want = np.linalg.solve(np.eye(len(pair)) + A, rhs)
    before = np.max(np.abs(Q.ravel()[pair] - want))
    assert before > 1e-6  # a step with something to do
    monkeypatch.setattr(duel, "EVAL_SHARE", 1e-15)
    for drop in (0.0, 0.05):
        monkeypatch.setattr(duel, "POLICY_DROP", drop)
        q = Q.copy().ravel()
        systems, _ = duel._policy_round(model, model.table, q.reshape(n, n), levels, 0, 1 << 40)
        duel._evaluate_policy(systems, q, model.table.backend)
        after = np.max(np.abs(q[pair] - want))
        if drop == 0.0:
            assert after <= 1e-12
        else:
            At = dense(drop)[keep][:, pair]
            assert np.count_nonzero(At) < np.count_nonzero(A)  # something was left out
            factor = np.max(np.sum(np.abs(np.linalg.solve(np.eye(len(pair)) + At, A - At)), axis=1))
            assert after <= (factor + 1e-6) * before + 1e-12


@pytest.mark.parametrize("name", sorted(TINY))
def test_duel_invariants(name):
    rs, sol = solved(name)
    P = sol.P
    assert np.all(P >= -1e-15) and np.all(P <= 1 + 1e-15)
    # one roll from the goal: a mover whose every scoring first roll may be
    # banked for the win (no hot dice to roll again, no mid-turn end) wins
    # unless that roll busts, and then it is the opponent's turn
    moves = Moves(rs)
    from thousand import kernel

    p_bust = kernel.roll_table(rs).classes[rs.dice - 1].bust_weight / rs.faces**rs.dice
    for i, x in enumerate(sol.model.space.states):
        if all(
            moves.wins(x, p)
            and moves.can_bank(x, p)
            and not moves.mid_turn(x, p)
            and (used < rs.dice or rs.hot_dice == "free")
            for p, used in _first_roll_points(rs)
        ):
            z = sol.model.space.index[moves.zero(x)]
            assert P[i] == pytest.approx((1 - p_bust) + p_bust * (1 - P[:, z]), abs=1e-12)


def _first_roll_points(rs):
    from reference import sorted_rolls

    from thousand.rules.scoring import RollScorer

    sc = RollScorer(rs)
    return {(p, len(kept)) for roll, _ in sorted_rolls(rs.dice, rs.faces) for p, kept in sc.set_asides(roll)}


def test_without_interaction_the_duel_tracks_the_race():
    # Pig-10 has no interaction: a mover who needs fewer expected turns alone
    # is at least even against an opponent in the same state, and the one
    # closer to the goal wins more often.
    rs, sol = solved("pig-10")
    race = solve_race(rs)
    states = sol.model.space.states
    turns = {x: race.turns[race.space.index[x]] for x in race.space.states}
    P = sol.P
    for i, x in enumerate(states):
        for j, y in enumerate(states):
            if turns[x] < turns[y]:
                assert P[i, j] > 0.5
            # symmetric seats: P(x, y) + P(y, x) > 1 (moving first is an advantage)
            assert P[i, j] + P[j, i] >= 1.0 - 1e-12


def test_kernels_agree_on_a_small_duel():
    from thousand import kernel

    rs = from_mapping(TINY["overtaking-bolts"])
    a = solve_duel(rs, model=DuelModel(rs, table=kernel.backend("pure").roll_table(rs)))
    try:
        compiled = kernel.backend("compiled")
    except ImportError:
        pytest.skip("compiled kernel not built")
    b = solve_duel(rs, model=DuelModel(rs, table=compiled.roll_table(rs)))
    assert np.max(np.abs(a.P - b.P)) <= 1e-12


def test_duel_cli_and_advice(tmp_path):
    runner = CliRunner()
    args = ["solve", "pig", "--set", "goal=20", "--objective", "duel", "--tables", str(tmp_path), "--json"]
    r = runner.invoke(main, args)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for key in ("start_value", "states", "iterations", "residual", "seconds", "peak_memory_mb", "table"):
        assert key in d
    assert 0.5 < d["start_value"] < 1 and d["residual"] <= 1e-12
    r = runner.invoke(
        main,
        [
            "advise",
            "pig",
            "--set",
            "goal=20",
            "--tables",
            str(tmp_path),
            "--me",
            "10",
            "--opp",
            "15",
            "--turn",
            "6",
            "--dice",
            "1",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    a = json.loads(r.stdout)
    assert a["objective"] == "duel" and {o["action"] for o in a["options"]} == {"roll", "stop"}
    probs = [o["win_probability"] for o in a["options"]]
    assert probs == sorted(probs, reverse=True) and a["margin"] == pytest.approx(probs[0] - probs[1])
    # stopping at 16 against 15: the value is 1 - P(opponent at 15 vs me at 16)
    table = json.loads((Path(d["table"]) / "meta.json").read_text())
    assert table["objective"] == "duel"
    r = runner.invoke(
        main, ["advise", "pig", "--set", "goal=20", "--tables", str(tmp_path), "--me", "10", "--objective", "duel"]
    )
    assert r.exit_code == 2 and "--opp" in r.stderr


@pytest.mark.slow
def test_the_open_barrel_scaled_down_by_policy_iteration_equals_passes_alone():
    """classic-open (an exact barrel at the goal, six overshoots make a fall; the full
    preset is solved only by policy iteration) at goal 200 with three overshoots and no pit
    or dump: policy iteration and Gauss-Seidel passes alone reach the same table."""
    rs = load_ruleset("classic-open", ["goal=200", "pits=[]", "dump=[]", "barrel.overshoots=3"])
    assert rs.barrel.kind == "exact" and rs.overtake and rs.bolts.limit
    by_policy = solve_duel(rs)
    by_passes = solve_duel(rs, method="passes")
    assert by_policy.rounds >= 1 and by_passes.rounds == 0
    assert np.max(np.abs(by_policy.P - by_passes.P)) <= 1e-12
    assert max(by_policy.residual, by_passes.residual) <= 1e-12


# --------------------------------------------------------------------------- fixed-point tables


@pytest.mark.parametrize("name", ["barrel-push-off", "overtaking-bolts"])
def test_a_fixed_point_table_answers_and_a_forced_solve_starts_from_it(name, tmp_path, monkeypatch):
    """A fixed-point table: each value within 1/(2 (2^32 - 1)) of the solved one (as
    meta.json says), the advice labelled, and a forced solve that starts from it lands on the
    cold solve's values in fewer passes, stored exactly and then preferred."""
    from thousand.storage import FIXED32_SCALE, find_table
    from thousand.storage.solve import solve_objective

    rs, sol = solved(name)
    # a cache of its own: an exact table of these rules solved by an earlier test would win the lookup
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rounded = tmp_path / "rounded"
    r = CliRunner().invoke(
        main,
        ["solve", str(_toml(rs, tmp_path)), "--objective", "duel", "--tables", str(rounded), "--fixed-point", "--json"],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["values_encoding"] == "fixed32"
    table = find_table(rs, "duel", str(rounded))
    assert not table.exact and np.load(table.path / "values.npy").dtype == np.uint32
    err = np.max(np.abs(np.asarray(table.values) - sol.P))
    assert err <= 0.5 / FIXED32_SCALE + 1e-16
    assert table.encoding_error == pytest.approx(err, abs=1e-15)  # meta.json against the cold solve
    r = CliRunner().invoke(
        main, ["advise", str(_toml(rs, tmp_path)), "--tables", str(rounded), "--me", "0", "--opp", "0", "--json"]
    )
    assert r.exit_code == 0, r.output
    assert "32-bit fixed point" in json.loads(r.stdout)["note"]
    # as a shipped table: the exact solve goes to the cache (the tests' own) and wins the lookup
    from thousand.storage import files as tables

    monkeypatch.setattr(tables, "shipped_tables", lambda: rounded)
    again = solve_objective(rs, "duel", None, progress=False, force=True)
    assert again.table.exact and again.meta["started_from"] == str(table.path)
    assert np.max(np.abs(np.asarray(again.table.values) - sol.P)) <= 1e-12
    assert again.meta["residual"] <= 1e-12 and again.meta["iterations"] < sol.passes
    assert find_table(rs, "duel", None).path == again.table.path


def test_tables_round_stores_an_exact_table_in_fixed_point(tmp_path):
    """`thousand tables round` (how the largest shipped tables are made): the shipped Pig
    table rounded, each value within the bound of the exact one; a table that is itself
    rounded is not rounded again."""
    from thousand.storage import FIXED32_SCALE, find_table, load_table

    rs = load_ruleset("pig")
    exact = find_table(rs, "duel", None)
    r = CliRunner().invoke(main, ["tables", "round", "pig", "--to", str(tmp_path / "a"), "--json"])
    assert r.exit_code == 0, r.output
    folder = Path(json.loads(r.stdout)["table"])
    rounded = load_table(folder, rs, "duel")
    assert not rounded.exact and rounded.meta["rounded_from"] == str(exact.path)
    assert np.max(np.abs(np.asarray(rounded.values) - np.asarray(exact.values))) <= 0.5 / FIXED32_SCALE + 1e-16
    small = ["pig", "--set", "goal=20"]
    r = CliRunner().invoke(
        main, ["solve", *small, "--objective", "duel", "--fixed-point", "--tables", str(tmp_path / "b")]
    )
    assert r.exit_code == 0, r.output
    for where in (str(tmp_path / "b"), str(tmp_path / "nothing")):
        r = CliRunner().invoke(main, ["tables", "round", *small, "--tables", where, "--to", str(tmp_path / "c")])
        assert r.exit_code == 2 and "no exact duel table" in r.stderr and not (tmp_path / "c").exists()


def _toml(rs, where: Path) -> Path:
    from thousand.rules import dump_toml

    path = where / f"{rs.hash}.toml"
    path.write_text(dump_toml(rs.to_mapping()), encoding="utf-8")
    return path


def test_fixed_point_is_refused_where_values_are_not_probabilities(tmp_path):
    r = CliRunner().invoke(
        main, ["solve", "pig", "--set", "goal=20", "--objective", "race", "--fixed-point", "--tables", str(tmp_path)]
    )
    assert r.exit_code == 2 and "--fixed-point" in r.stderr and not any(tmp_path.iterdir())


def test_textbook_baseline_reaches_the_same_fixed_point():
    rs, sol = solved("barrel-push-off")
    base = solve_duel(rs, tol=1e-14, method="textbook")
    assert np.max(np.abs(base.P - sol.P)) <= 1e-12


def test_fair_compensation_is_the_start_closest_to_even(tmp_path):
    """The second player's extra starting points that bring P(first wins) closest
    to 1/2, checked against exact fractions on a tiny Pig."""
    from thousand.storage.solve import solve_objective

    rs, sol = solved("pig-10")
    states = sol.model.space.states
    exact = exact_duel(rs, states, sol.P.tolist())
    x0 = Moves(rs).initial()
    candidates = {y.score: exact[(x0, y)] for y in states}
    c = min(candidates, key=lambda s: (abs(candidates[s] - Fraction(1, 2)), s))
    solution = solve_objective(rs, "duel", str(tmp_path), progress=False)
    points, p_first = solution.fair_compensation()
    assert points == c > 0
    assert p_first == pytest.approx(float(candidates[c]), abs=1e-12)
    assert solution.summary()["fair_compensation"] == {"points": points, "p_first": p_first}


SHIPPED_DUELS = [
    "pig",
    "plain",
    "farkle",
    "farkle-cardgames",
    "zilch",
    "admission",
    "classic-nobarrel",
    "kubiki",
    "street",
    "classic",
    "classic-open",
]


@pytest.mark.parametrize("preset", SHIPPED_DUELS)
def test_shipped_duel_tables_load_and_are_converged(preset):
    from thousand.storage import folder_name, load_table, shipped_tables

    rs = load_ruleset(preset)
    table = load_table(shipped_tables() / folder_name(rs, "duel"), rs, "duel")
    P = np.asarray(table.values)
    assert P.shape == (table.meta["player_states"],) * 2
    assert table.meta["residual"] <= 1e-12 and P.min() >= 0.0 and P.max() <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("preset", SHIPPED_DUELS)
def test_shipped_duel_tables_are_fixed_points_of_todays_rules(preset):
    """One full DP pass over the stored values, by the rules as this code reads them: the
    Bellman residual of an exact table is the solve's; of a fixed-point one, at most twice its
    rounding (the turn DP moves no value by more than its inputs moved)."""
    from thousand.solvers.duel import bellman_residual
    from thousand.storage import FIXED32_SCALE, folder_name, load_table, shipped_tables

    rs = load_ruleset(preset)
    table = load_table(shipped_tables() / folder_name(rs, "duel"), rs, "duel")
    model = DuelModel(rs)
    assert np.array_equal(table.states, model.space.encode())
    bound = 1e-12 if table.exact else 2 * 0.5 / FIXED32_SCALE + 1e-12
    assert bellman_residual(model, model.table, model.from_table_values(table.values)) <= bound


@pytest.mark.slow
def test_a_duel_without_a_value_is_refused_in_one_line(tmp_path):
    """Barrel falls and no bolts: both players can prefer never to bank, the passes
    cycle, and the solver says so instead of storing a table."""
    args = [
        "solve",
        "classic",
        "--set",
        "goal=100",
        "--set",
        "barrel.threshold=80",
        "--set",
        "pits=[]",
        "--set",
        "dump=[]",
        "--set",
        "bolts.limit=0",
        "--set",
        "bolts.penalty=0",
        "--objective",
        "duel",
        "--tables",
        str(tmp_path),
    ]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    assert "does not converge" in r.stderr and "never to bank" in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("thousand: error: ") and "Traceback" not in r.stderr
    assert not any(tmp_path.iterdir())
