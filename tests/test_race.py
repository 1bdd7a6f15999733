"""The race objective: exact fractions on tiny games, rule effects, properties, tables, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import exact_race

from thousand.cli import main
from thousand.engine.player import Moves, PlayerState
from thousand.rules import from_mapping, load_ruleset, preset_names
from thousand.solvers.advice import race_advisor
from thousand.solvers.race import solve_race

CLASSIC_SCORING = {
    "singles": {"1": 10, "5": 5},
    "kinds": {"3": {"1": 100, "2": 20, "3": 30, "4": 40, "5": 50, "6": 60}},
}

TINY = {
    "pig-20": {
        "dice": 1,
        "hot_dice": "free",
        "goal": 20,
        "scoring": {"singles": {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6}},
    },
    "three-dice-50": {"dice": 3, "goal": 50, "scoring": CLASSIC_SCORING},
    "counters": {
        "dice": 3,
        "goal": 50,
        "open_min": 10,
        "scoring": CLASSIC_SCORING,
        "bolts": {"limit": 2, "penalty": 10},
        "pits": [{"low": 20, "exit": 30}],
        "pit_attempts": 2,
        "dump": [35],
        "dump_mid_turn": True,
    },
    "points-barrel": {
        "dice": 3,
        "goal": 50,
        "keep": "any",
        "hot_dice": "confirm",
        "scoring": CLASSIC_SCORING,
        "barrel": {"kind": "points", "threshold": 35, "attempts": 2, "fall_penalty": 10, "max_falls": 2},
    },
    "exact-barrel": {
        "dice": 2,
        "goal": 30,
        "scoring": {"singles": {"1": 10, "5": 5}},
        "barrel": {"kind": "exact", "overshoots": 2, "fall_penalty": 10, "max_falls": 1},
    },
    "region-street": {
        "dice": 2,
        "goal": 40,
        "floor": -10,
        "open_min": 10,
        "scoring": {"singles": {"1": 10, "5": 5}, "kinds": {"2": {"1": 25}}},
        "bolts": {"limit": 2, "penalty": 10, "consecutive": True},
        "barrel": {"kind": "region", "threshold": 30},
    },
    "entry-falls": {
        "dice": 2,
        "goal": 40,
        "keep": "any",
        "scoring": {"singles": {"1": 10, "5": 5}, "kinds": {"2": {"1": 25, "5": 15}}},
        "barrel": {"kind": "points", "threshold": 30, "attempts": 1, "fall_to": "entry", "max_falls": 2},
    },
}


@pytest.mark.twin
@pytest.mark.parametrize("name", sorted(TINY))
def test_race_matches_exact_fractions(name):
    rs = from_mapping(TINY[name])
    sol = solve_race(rs)
    exact = exact_race(rs, sol.space.states, sol.turns)
    err = max(abs(float(exact[x]) - sol.turns[i]) for i, x in enumerate(sol.space.states))
    assert err <= 1e-12
    assert sol.residual <= 1e-12


@pytest.mark.twin
@pytest.mark.slow
def test_pig_race_one_turn_values():
    # From 99 any face but a 1 wins: 6/5 expected turns. From 98, hold after a
    # 2 is not needed (every face 2..6 wins), also 6/5.
    rs = load_ruleset("pig")
    sol = solve_race(rs)
    assert sol.turns[sol.space.index[PlayerState(99)]] == pytest.approx(6 / 5, abs=1e-12)
    assert sol.turns[sol.space.index[PlayerState(98)]] == pytest.approx(6 / 5, abs=1e-12)


def _advise(rs, sol, x, **kw):
    return race_advisor(_Solution(rs, sol)).advise(x, **kw)


class _Solution:
    """A race solution in the shape the advisor reads (without a table on disk)."""

    def __init__(self, rs, sol):
        self.rs, self.sol = rs, sol

    def value(self, x):
        return float(self.sol.turns[self.sol.space.index[x]])


SMALL_1000 = {
    "dice": 5,
    "goal": 300,
    "scoring": {
        "singles": {"1": 10, "5": 5},
        "kinds": {
            "3": {"1": 100, "2": 20, "3": 30, "4": 40, "5": 50, "6": 60},
            "4": {"1": 200, "2": 40, "3": 60, "4": 80, "5": 100, "6": 120},
            "5": {"1": 1000, "2": 200, "3": 300, "4": 400, "5": 500, "6": 600},
        },
        "straights": [{"faces": [1, 2, 3, 4, 5], "points": 125}, {"faces": [2, 3, 4, 5, 6], "points": 250}],
    },
}


def _small(**extra):
    m = json.loads(json.dumps(SMALL_1000))
    m.update(extra)
    return from_mapping(m)


@pytest.fixture(scope="module")
def base():
    rs = _small()
    return rs, solve_race(rs)


@pytest.mark.slow
def test_dump_makes_stopping_at_the_dump_score_disastrous(base):
    # 100 banked, 55 in the turn, 2 dice left: without samosval banking 155 is
    # right; with a dump at 155 the same bank would zero the score.
    rs0, sol0 = base
    a0 = _advise(rs0, sol0, PlayerState(100), turn_total=55, dice=2)
    assert a0.best.action == "stop"
    rs1 = _small(dump=[155])
    sol1 = solve_race(rs1)
    a1 = _advise(rs1, sol1, PlayerState(100), turn_total=55, dice=2)
    assert a1.best.action == "roll"
    stop1 = next(o for o in a1.options if o.action == "stop")
    assert stop1.value == pytest.approx(1 + sol1.turns[sol1.space.index[PlayerState(0)]])


@pytest.mark.slow
def test_pit_turns_a_stop_into_a_roll(base):
    # From 180 with 30 in the turn (2 dice left) banking lands on 210. With a pit
    # [200, 300) there, sitting in it is worse than pressing on.
    rs0, sol0 = base
    assert _advise(rs0, sol0, PlayerState(180), turn_total=30, dice=2).best.action == "stop"
    rs1 = _small(pits=[{"low": 200, "exit": 300}])
    sol1 = solve_race(rs1)
    assert _advise(rs1, sol1, PlayerState(180), turn_total=30, dice=2).best.action == "roll"


@pytest.mark.slow
def test_bolt_about_to_cost_changes_the_risk():
    # With two bolts a third zero turn costs 100: a modest total is banked
    # where a player with no bolts rolls on.
    rs = _small(bolts={"limit": 3, "penalty": 100})
    sol = solve_race(rs)
    adv = race_advisor(_Solution(rs, sol))
    a0 = adv.advise(PlayerState(150, bolts=0), turn_total=15, dice=3)
    a2 = adv.advise(PlayerState(150, bolts=2), turn_total=15, dice=3)
    assert (a0.best.action, a2.best.action) == ("roll", "stop")
    # at a score of 0 the penalty is absorbed by the floor: two bolts make
    # the player bolder, not more careful
    a0 = adv.advise(PlayerState(0, bolts=0), turn_total=30, dice=2)
    a2 = adv.advise(PlayerState(0, bolts=2), turn_total=30, dice=2)
    assert (a0.best.action, a2.best.action) == ("stop", "roll")


@pytest.mark.slow
def test_opening_minimum_forbids_small_banks():
    rs = _small(open_min=50)
    sol = solve_race(rs)
    a = _advise(rs, sol, PlayerState(0, opened=False), turn_total=45, dice=2)
    assert [o.action for o in a.options] == ["roll"]
    a = _advise(rs, sol, PlayerState(0, opened=False), turn_total=50, dice=2)
    assert "stop" in [o.action for o in a.options]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(TINY)), st.data())
def test_race_properties(name, data):
    rs = from_mapping(TINY[name])
    sol = _solve_cached(name)
    turns = sol.turns
    assert np.all(np.isfinite(turns)) and np.all(turns >= 1.0)
    i = data.draw(st.integers(0, len(sol.space) - 1))
    x = sol.space.states[i]
    # the Bellman equation holds at every state
    from thousand import kernel
    from thousand.solvers.race import bellman

    J = np.append(-turns, 0.0)
    assert abs(-bellman(kernel.roll_table(rs), sol.space, i, J) - turns[i]) <= 1e-12
    # a zero turn never helps: the state a bust leads to is no better
    y = Moves(rs).zero(x)
    assert turns[sol.space.index[y]] >= turns[i] - 1.0 - 1e-12


_CACHE: dict = {}


def _solve_cached(name):
    if name not in _CACHE:
        _CACHE[name] = solve_race(from_mapping(TINY[name]))
    return _CACHE[name]


def test_more_points_never_hurt_without_obligations():
    sol = _solve_cached("three-dice-50")
    scores = sorted((x.score, sol.turns[i]) for i, x in enumerate(sol.space.states))
    vals = [v for _, v in scores]
    assert all(a >= b - 1e-12 for a, b in zip(vals, vals[1:]))


# ------------------------------------------------------------------ tables and CLI


def test_solve_race_writes_and_reuses_a_table(tmp_path):
    runner = CliRunner()
    args = ["solve", "pig", "--objective", "race", "--set", "goal=30", "--tables", str(tmp_path), "--json"]
    r1 = runner.invoke(main, args)
    assert r1.exit_code == 0, r1.output
    d1 = json.loads(r1.stdout)
    assert d1["solved_now"] is True and d1["residual"] <= 1e-12
    for key in ("start_value", "states", "iterations", "residual", "seconds", "table"):
        assert key in d1
    r2 = runner.invoke(main, args)
    d2 = json.loads(r2.stdout)
    assert d2["solved_now"] is False and d2["start_value"] == d1["start_value"]
    meta = json.loads((tmp_path / f"{d1['ruleset_hash']}-race" / "meta.json").read_text())
    assert meta["ruleset_hash"] == d1["ruleset_hash"] and meta["objective"] == "race"
    assert meta["format"] == 2 and meta["values_dtype"] == "float64"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_damaged_or_mismatched_table_is_refused(tmp_path):
    runner = CliRunner()
    args = ["solve", "pig", "--objective", "race", "--set", "goal=30", "--tables", str(tmp_path), "--json"]
    d = json.loads(runner.invoke(main, args).stdout)
    folder = tmp_path / f"{d['ruleset_hash']}-race"
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["ruleset_hash"] = "0" * 16
    meta_path.write_text(json.dumps(meta))
    r = runner.invoke(main, args)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "made for ruleset" in r.stderr
    meta_path.write_text("{not json")
    r = runner.invoke(main, args)
    assert r.exit_code == 2 and "meta.json" in r.stderr
    values = (folder / "values.npy").read_bytes()
    assert len(values) > 0  # the damaged table was not overwritten


def test_advise_cli(tmp_path):
    runner = CliRunner()
    base = ["advise", "pig", "--set", "goal=30", "--tables", str(tmp_path)]
    r = runner.invoke(main, base + ["--me", "10", "--turn", "8", "--dice", "1", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert {o["action"] for o in d["options"]} == {"roll", "stop"}
    assert d["options"][0]["expected_turns"] <= d["options"][1]["expected_turns"]
    r = runner.invoke(main, base + ["--me", "10", "--turn", "8", "--roll", "4"])
    assert r.exit_code == 0 and "keep 4" in r.stdout
    for bad in (
        ["--me", "10", "--roll", "7"],
        ["--me", "31"],
        ["--me", "10", "--dice", "2"],
        ["--me", "10", "--bolts", "1"],
        ["--me", "-5"],
    ):
        r = runner.invoke(main, base + bad)
        assert r.exit_code == 2, (bad, r.output)
        assert r.stderr.startswith("thousand: error:") and r.stderr.count("\n") == 1


@pytest.mark.parametrize("preset", [p for p in preset_names("1000") if p != "six-dice"])
def test_every_shipped_race_table_loads(preset):
    """The race tables in tables/ load for their preset (hash, format, model version)."""
    from thousand.storage import folder_name, load_table, shipped_tables

    rs = load_ruleset(preset)
    folder = shipped_tables() / folder_name(rs, "race")
    table = load_table(folder, rs, "race")
    assert table.values.shape == (table.meta["states"],)
    assert np.all(table.values >= 1.0)
