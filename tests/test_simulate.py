"""The game simulator of the built-in bots: its roll lookup, the compiled loop
against its pure twin (same seed, same games), and the win rates and turn
counts against exact values (Pig's duel optimum, the race tables)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tiny import PAIR_SCORING, TINY_DUELS

from thousand import kernel
from thousand.analysis import simulate
from thousand.analysis.simulate import SimulationUnsupported, parse_builtin, simulate_duel, simulate_race
from thousand.base.errors import ThousandError
from thousand.engine.player import Moves, PlayerState
from thousand.rules import from_mapping, load_ruleset
from thousand.rules.scoring import RollScorer
from thousand.solvers.advice import duel_advisor
from thousand.storage.solve import solve_objective

TINY = {
    **TINY_DUELS,
    "confirm-any": {
        "dice": 2,
        "goal": 30,
        "keep": "any",
        "hot_dice": "confirm",
        "open_min": 10,
        "scoring": PAIR_SCORING,
    },
    "exact-barrel": {
        "dice": 2,
        "goal": 30,
        "scoring": PAIR_SCORING,
        "barrel": {"kind": "exact", "threshold": 20, "overshoots": 2, "fall_penalty": 10},
    },
}

BOT_PAIRS = [
    ("optimal", "optimal"),
    ("optimal", "race"),
    ("hold:15", "random"),
    ("cautious", "optimal"),
    ("random", "random"),
]


def tiny(name):
    return from_mapping(TINY[name])


def compiled_available() -> bool:
    try:
        from thousand.kernel import _sim  # noqa: F401

        return True
    except ImportError:
        return False


needs_compiled = pytest.mark.skipif(not compiled_available(), reason="thousand.kernel._sim is not built")


# --------------------------------------------------------------------------- rolls


@pytest.mark.parametrize("preset", ["plain", "farkle", "pig"])
def test_roll_lookup_gives_every_ordered_roll_its_class(preset):
    rs = load_ruleset(preset)
    table = kernel.roll_table(rs)
    lut, off, size = simulate.roll_lookup(rs)
    scorer = RollScorer(rs)
    for n in range(1, min(rs.dice, 4) + 1):
        seg = lut[off[n] : off[n + 1]]
        assert len(seg) == int(size[n]) == rs.faces**n
        lo, hi = table.cls_ptr[n], table.cls_ptr[n + 1]
        # each class is hit by exactly as many ordered rolls as its weight says
        assert np.array_equal(np.bincount(seg - lo, minlength=hi - lo), table.classes[n - 1].weight)
        for r in range(0, len(seg), max(1, len(seg) // 300)):
            roll = tuple(int(r // rs.faces**i % rs.faces) + 1 for i in range(n))
            c = int(seg[r])
            opts = {
                (int(p), int(u))
                for p, u in zip(
                    table.opt_points[table.opt_ptr[c] : table.opt_ptr[c + 1]],
                    table.opt_used[table.opt_ptr[c] : table.opt_ptr[c + 1]],
                )
            }
            assert opts == {(p // rs.unit, len(k)) for p, k in scorer.set_asides(roll)}, roll


# --------------------------------------------------------------------------- bots and errors


def test_bot_specs():
    assert parse_builtin("hold:20").param == 20
    assert parse_builtin("cautious").param == 0
    assert parse_builtin(" Optimal ").table == "duel"
    assert parse_builtin("race").table == "race"
    for bad in ("hold", "hold:-5", "hold:x", "greedy", ""):
        with pytest.raises(ThousandError):
            parse_builtin(bad)
    with pytest.raises(ThousandError):
        simulate_duel(tiny("pig-10"), "optimal", "nobody", 10, 1)


def test_unsupported_rulesets_are_refused_in_one_line(monkeypatch, tmp_path):
    with pytest.raises(SimulationUnsupported, match="equal_turns"):
        simulate_duel(load_ruleset("six-dice"), "hold:300", "hold:300", 10, 1)
    monkeypatch.setattr(simulate, "MEMORY_BUDGET_MB", 0.0001)
    with pytest.raises(SimulationUnsupported, match="budget") as exc:
        simulate_duel(tiny("overtaking-bolts"), "optimal", "hold:10", 10, 1, tables_dir=tmp_path)
    assert "\n" not in str(exc.value)
    # bots without tables need no budget
    assert simulate_duel(tiny("overtaking-bolts"), "hold:10", "random", 10, 1).games == 10


# --------------------------------------------------------------------------- compiled = pure


@needs_compiled
@pytest.mark.parametrize("name", sorted(TINY))
def test_compiled_loop_plays_the_same_games_as_its_twin(name, tmp_path):
    rs = tiny(name)
    compiled, pure = kernel.backend("compiled").roll_table(rs), kernel.backend("pure").roll_table(rs)
    for first, second in BOT_PAIRS:
        a = simulate_duel(rs, first, second, 400, seed=11, tables_dir=tmp_path, table=compiled)
        b = simulate_duel(rs, first, second, 400, seed=11, tables_dir=tmp_path, table=pure)
        assert (a.first_wins, a.second_wins, a.unfinished, a.mean_turns) == (
            b.first_wins,
            b.second_wins,
            b.unfinished,
            b.mean_turns,
        ), (first, second)
        assert a.first_wins + a.second_wins + a.unfinished == 400
    for bot in ("optimal", "hold:15", "random"):
        a = simulate_race(rs, bot, 300, seed=5, tables_dir=tmp_path, table=compiled)
        b = simulate_race(rs, bot, 300, seed=5, tables_dir=tmp_path, table=pure)
        assert (a.first_wins, a.mean_turns, a.std_turns) == (b.first_wins, b.mean_turns, b.std_turns), bot


@needs_compiled
def test_results_do_not_depend_on_threads_and_seeds_matter(tmp_path):
    rs = tiny("barrel-push-off")
    compiled = kernel.backend("compiled").roll_table(rs)
    one = simulate_duel(rs, "optimal", "random", 5000, seed=3, tables_dir=tmp_path, threads=1, table=compiled)
    two = simulate_duel(rs, "optimal", "random", 5000, seed=3, tables_dir=tmp_path, threads=2, table=compiled)
    assert (one.first_wins, one.mean_turns) == (two.first_wins, two.mean_turns)
    other = simulate_duel(rs, "optimal", "random", 5000, seed=4, tables_dir=tmp_path, table=compiled)
    assert (other.first_wins, other.mean_turns) != (one.first_wins, one.mean_turns)


# --------------------------------------------------------------------------- the optimal policy


@pytest.mark.parametrize("name", ["dump-opening", "pig-10", "barrel-push-off", "confirm-any"])
def test_optimal_bot_decides_as_the_advisor(name, tmp_path):
    """The stop bits of the duel policy are the advisor's roll-or-stop answers."""
    rs = tiny(name)
    sol = solve_objective(rs, "duel", tmp_path, progress=False)
    plans = simulate._duel_plans(rs)
    dec, doff, _, _ = simulate._bot_policy(
        rs, kernel.roll_table(rs), parse_builtin("optimal"), plans, tmp_path, duel=True
    )[:4]
    states = plans.space.states
    checked = 0
    for x in range(len(states)):
        for y in range(0, len(states), 2):
            T = plans.ptr[x + 1] - plans.ptr[x] - 1
            adv = duel_advisor(sol, states[y])
            for t in range(1, T + 1):
                if not plans.stop_ok[plans.ptr[x] + t]:
                    continue
                for n in range(1, rs.dice + 1):
                    a = adv.advise(states[x], t * rs.unit, n)
                    vals = {o.action: o.value for o in a.options}
                    if "stop" not in vals or abs(vals["stop"] - vals["roll"]) < 1e-9:  # compulsory / tie
                        continue
                    bit = (dec[doff[x] + y * (T + 2) + t] >> n) & 1
                    assert bool(bit) == (vals["stop"] > vals["roll"]), (states[x], states[y], t, n)
                    checked += 1
    assert checked > 20


@pytest.mark.slow
def test_pig_optimal_first_player_wins_0_5306():
    rs = load_ruleset("pig")
    r = simulate_duel(rs, "optimal", "optimal", 400_000, seed=2024, threads=0)
    sigma = math.sqrt(0.5306 * 0.4694 / r.games)
    assert abs(r.first_win_rate - 0.530592725274) < 3 * sigma
    assert r.unfinished == 0


@pytest.mark.slow
def test_pig_optimal_is_never_worse_than_its_value():
    """Optimal play guarantees its game value against any opponent."""
    rs = load_ruleset("pig")
    v = 0.530592725274
    first = simulate_duel(rs, "optimal", "hold:20", 200_000, seed=1, threads=0)
    second = simulate_duel(rs, "hold:20", "optimal", 200_000, seed=2, threads=0)
    sigma = math.sqrt(0.25 / 200_000)
    assert first.first_win_rate > v - 3 * sigma
    assert second.first_win_rate < v + 3 * sigma
    # and it gains against hold:20 (a 2-3 point edge, Neller & Presser)
    assert first.first_win_rate - v > 10 * sigma


@pytest.mark.slow
def test_pig_hold_20_against_itself_0_5347():
    rs = load_ruleset("pig")
    r = simulate_duel(rs, "hold:20", "hold:20", 400_000, seed=77, threads=0)
    sigma = math.sqrt(0.5347 * 0.4653 / r.games)
    assert abs(r.first_win_rate - 0.5347) < 3 * sigma
    # distinguishable from the optimal players' 0.5306
    assert abs(r.first_win_rate - 0.5306) > 2 * sigma


@pytest.mark.parametrize("name", ["pig-10", "confirm-any", "exact-barrel"])
def test_race_bot_takes_the_race_tables_expected_turns(name, tmp_path):
    rs = tiny(name)
    games = 20_000 if kernel.IMPLEMENTATION == "compiled" else 3000  # the game loop follows the kernel
    r = simulate_race(rs, "race", games, seed=9, tables_dir=tmp_path)
    sol = solve_objective(rs, "race", tmp_path, progress=False)
    want = sol.start_value()
    assert r.unfinished == 0
    assert abs(r.mean_turns - want) < 4 * r.std_turns / math.sqrt(r.games), (r.mean_turns, want)
    # a worse player needs measurably more turns
    h = simulate_race(rs, "random", games, seed=9, tables_dir=tmp_path)
    assert h.mean_turns > want + 4 * h.std_turns / math.sqrt(h.games)


@pytest.mark.slow
def test_plain_optimal_first_player_matches_the_duel_table():
    rs = load_ruleset("plain")
    sol = solve_objective(rs, "duel", progress=False)
    r = simulate_duel(rs, "optimal", "optimal", 300_000, seed=5, threads=0)
    sigma = math.sqrt(0.25 / r.games)
    assert abs(r.first_win_rate - sol.start_value()) < 3 * sigma
    x0 = Moves(rs).initial()
    assert x0 == PlayerState(0)
