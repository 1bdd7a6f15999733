"""`thousand chart`: the numbers behind the charts agree with the advisor; PNGs when matplotlib is there."""

import csv
import json

import pytest
from click.testing import CliRunner

from thousand.analysis import chart as chart_mod
from thousand.cli import main
from thousand.engine.player import PlayerState
from thousand.rules import load_ruleset
from thousand.solvers.advice import duel_advisor, race_advisor
from thousand.storage.solve import solve_objective


def run(args):
    return CliRunner().invoke(main, args)


def rows_of(args):
    r = run(args + ["--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["rows"]


def test_pig_race_hold_boundary_matches_the_advisor(tmp_path):
    out = tmp_path / "pig.csv"
    r = run(["chart", "pig", "--set", "goal=40", "--objective", "race", "--data", str(out), "--tables", str(tmp_path)])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 40 and {r["dice"] for r in rows} == {"1"}
    rs = load_ruleset("pig", ("goal=40",))
    adv = race_advisor(solve_objective(rs, "race", str(tmp_path), progress=False))
    for row in rows[::7]:
        s, h = int(row["score"]), int(row["hold_at"])
        x = PlayerState(s)
        assert adv.advise(x, h, 1).best.action == "stop"
        if h > 1:
            assert adv.advise(x, h - 1, 1).best.action == "roll"
    # close to the goal: hold at what is missing
    assert int(rows[-1]["hold_at"]) == 1


@pytest.mark.slow
def test_pig_duel_hold_at_the_start_is_21(tmp_path):
    rows = rows_of(["chart", "pig", "--objective", "duel", "--kind", "stop", "--tables", str(tmp_path)])
    at = {(r["score"], r["opp_score"]): r["hold_at"] for r in rows}
    assert at[(0, 0)] == 21
    rs = load_ruleset("pig")
    adv = duel_advisor(solve_objective(rs, "duel", str(tmp_path), progress=False), PlayerState(0))
    assert adv.advise(PlayerState(0), 21, 1).best.action == "stop"
    assert adv.advise(PlayerState(0), 20, 1).best.action == "roll"


def test_small_duel_stop_and_win_numbers(tmp_path):
    base = ["chart", "pig", "--set", "goal=20", "--objective", "duel", "--tables", str(tmp_path)]
    stop = rows_of(base + ["--kind", "stop"])
    win = rows_of(base + ["--kind", "win"])
    rs = load_ruleset("pig", ("goal=20",))
    sol = solve_objective(rs, "duel", str(tmp_path), progress=False)
    pw = {(r["score"], r["opp_score"]): r["p_win"] for r in win}
    assert len(pw) == 400 and pw[(0, 0)] == pytest.approx(sol.start_value(), abs=1e-15)
    for r in stop[::97]:
        x, y, h = PlayerState(r["score"]), PlayerState(r["opp_score"]), r["hold_at"]
        adv = duel_advisor(sol, y)
        assert adv.advise(x, h, 1).best.action == "stop"
        if h > 1:
            assert adv.advise(x, h - 1, 1).best.action == "roll"


def test_chart_refusals(tmp_path, monkeypatch):
    r = run(["chart", "pig", "--objective", "race", "--kind", "win", "--json", "--tables", str(tmp_path)])
    assert r.exit_code == 2 and "needs --objective duel" in r.output
    r = run(["chart", "pig"])
    assert r.exit_code == 2 and "--out" in r.output
    monkeypatch.setattr(chart_mod, "_mpl", lambda: None)
    r = run(["chart", "pig", "--out", str(tmp_path / "x.png")])
    assert r.exit_code == 2
    # one line like every other error, naming an install that works in a clone too
    assert r.output.strip() == (
        "thousand: error: the charts (thousand chart, thousand review --chart, thousand card --png) need "
        "matplotlib: pip install matplotlib (in a clone of the repository: pip install '.[chart]')"
    )


def test_chart_png(tmp_path):
    pytest.importorskip("matplotlib")
    for kind in ("stop", "win"):
        png = tmp_path / f"{kind}.png"
        r = run(
            [
                "chart",
                "pig",
                "--set",
                "goal=20",
                "--objective",
                "duel",
                "--kind",
                kind,
                "--out",
                str(png),
                "--tables",
                str(tmp_path),
            ]
        )
        assert r.exit_code == 0, r.output
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    png = tmp_path / "rules.png"
    r = run(
        [
            "chart",
            "pig",
            "--set",
            "goal=20",
            "--kind",
            "rules",
            "--compare",
            "pig",
            "--out",
            str(png),
            "--tables",
            str(tmp_path),
        ]
    )
    assert r.exit_code == 0, r.output
    assert png.stat().st_size > 1000
