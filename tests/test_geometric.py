"""The memoryless-opponent approximation (thousand.solvers.geometric), the exact evaluation of a
seat profile it is measured with (thousand.solvers.duel.seat_profile_values), and the advice that
falls back on it when the exact duel does not fit."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tiny
from click.testing import CliRunner
from tiny import TINY_EQUAL_TURNS

from thousand.base.errors import ThousandError
from thousand.cli import main
from thousand.rules import load_ruleset
from thousand.solvers import duel as duel_module
from thousand.solvers.duel import seat_profile_values
from thousand.solvers.geometric import GRID, discounts, solve_geometric, stand_ins


def _pig_reference(goal: int, d: float) -> dict:
    """Pig (one die, a 1 ends the turn with nothing, any other face adds itself) against a
    memoryless opponent, written out directly: W(s, t) = 1 once s + t reaches the goal, else
    max(bank: d V(s + t) for t > 0, roll: d V(s) / 6 + sum_{r=2..6} W(s, t + r) / 6), V(s) =
    W(s, 0), by value iteration until nothing moves."""
    V = {s: 0.0 for s in range(goal)}
    for _ in range(100000):
        new = {}
        for s in range(goal):
            W = {}
            for t in range(goal - s - 1, -1, -1):
                roll = d * V[s] / 6 + sum(1.0 if s + t + r >= goal else W[t + r] for r in range(2, 7)) / 6
                W[t] = max(roll, d * V[s + t]) if t > 0 else roll
            new[s] = W[0]
        change = max(abs(new[s] - V[s]) for s in V)
        V = new
        if change < 1e-16:
            break
    return V


def test_values_match_a_direct_pig_solution():
    rs = load_ruleset("pig", ["goal=12"])
    sol = solve_geometric(rs)
    assert sol.residual <= 1e-12
    assert sol.values.shape == (len(sol.space), len(GRID))
    for k, d in enumerate(discounts()):
        ref = _pig_reference(12, float(d))
        for i, x in enumerate(sol.space.states):
            assert abs(sol.values[i, k] - ref[x.score]) <= 1e-12, (x, d)


def test_sure_opponent_leaves_only_this_turn():
    # N = 1: the opponent wins its next turn for sure, so V is the chance of winning within this
    # turn -- in Pig at 9 of 12: a 3, 4, 5 or 6 at once, or a 2 and then anything but a 1
    rs = load_ruleset("pig", ["goal=12"])
    sol = solve_geometric(rs, grid=(1.0, 2.0))
    i = next(i for i, x in enumerate(sol.space.states) if x.score == 9)
    assert abs(sol.values[i, 0] - (4 / 6 + 1 / 6 * 5 / 6)) <= 1e-15


@pytest.mark.parametrize("name", ["equal-pig-like", "equal-barrel", "equal-exact"])
def test_profile_of_optimal_seats_is_the_duel_and_deviations_lose(name):
    rs, sol = tiny.solved(TINY_EQUAL_TURNS, name)
    model = sol.model
    m = model.players
    Q = np.ascontiguousarray(sol.P.T)
    P = seat_profile_values(model, model.table, Q, Q)
    cross = np.zeros((model.n, model.n), dtype=bool)
    cross[:m, m:] = cross[m:, :m] = True
    assert np.max(np.abs(P - sol.P)[cross]) <= 1e-12
    # the exact duel is a saddle point: a player who plays anything else, in either seat, does not gain
    for A in stand_ins(model)[0].values():
        first = seat_profile_values(model, model.table, A, Q)
        second = seat_profile_values(model, model.table, Q, A)
        assert np.all(first[:m, m:] <= sol.P[:m, m:] + 1e-12)  # first-seat movers' chances
        assert np.all(second[m:, :m] <= sol.P[m:, :m] + 1e-12)  # second-seat movers' chances
        assert np.all((first >= -1e-12) & (first <= 1 + 1e-12))


def test_profile_needs_seats():
    rs, sol = tiny.solved(tiny.TINY_DUELS, "pig-10")
    Q = np.ascontiguousarray(sol.P.T)
    with pytest.raises(ThousandError):
        seat_profile_values(sol.model, sol.model.table, Q, Q)


def _json(output: str) -> dict:
    return json.loads(next(line for line in output.splitlines() if line.startswith("{")))


ADVISE = [
    "advise",
    "pig",
    "--set",
    "goal=20",
    "--set",
    "equal_turns=true",
    "--me",
    "10",
    "--opp",
    "15",
    "--seat",
    "first",
    "--turn",
    "6",
    "--json",
]


def test_advice_falls_back_on_the_approximation_when_the_duel_does_not_fit(tmp_path, monkeypatch):
    exact = CliRunner().invoke(main, ADVISE + ["--tables", str(tmp_path / "exact")])
    assert exact.exit_code == 0, exact.output
    assert "Estimate" not in exact.output and _json(exact.output)["advice"][0]["exact"]
    monkeypatch.setattr(duel_module, "MAX_PAIRS", 100)
    r = CliRunner().invoke(main, ADVISE + ["--tables", str(tmp_path / "approx")])
    assert r.exit_code == 0, r.output
    data = _json(r.output)
    missing, estimate = data["advice"]
    assert missing["method"].startswith("No exact advice") and "pairs" in missing["method"]
    assert estimate["method"].startswith("Estimate: the opponent taken as one who wins each of their turns")
    assert not estimate["exact"] and data["value"] == "estimated_win_probability"
    values = [o["estimated_win_probability"] for o in data["options"]]
    assert all(0.0 <= v <= 1.0 for v in values) and values == sorted(values, reverse=True)
    # a clear decision comes out as the exact duel's
    assert data["best"] == _json(exact.output)["best"]
    assert (tmp_path / "approx").is_dir() and any(
        p.name.endswith("-geometric") for p in (tmp_path / "approx").iterdir()
    )


def test_damaged_geometric_table_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(duel_module, "MAX_PAIRS", 100)
    assert CliRunner().invoke(main, ADVISE + ["--tables", str(tmp_path)]).exit_code == 0
    folder = next(p for p in tmp_path.iterdir() if p.name.endswith("-geometric"))
    meta = json.loads((folder / "meta.json").read_text())
    meta["grid"] = meta["grid"][:-1]
    (folder / "meta.json").write_text(json.dumps(meta))
    r = CliRunner().invoke(main, ADVISE + ["--tables", str(tmp_path)])
    assert r.exit_code == 2
    assert "geometric table" in r.output and len(r.output.strip().splitlines()) == 1
