"""OpenSpiel's Pig: the exact policy against OpenSpiel's own game, and OpenSpiel bots rated
by ``thousand evaluate`` (tried with open-spiel 2.0.2)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

pyspiel = pytest.importorskip("pyspiel")

from thousand.analysis import openspiel as tos  # noqa: E402
from thousand.base.errors import BotError  # noqa: E402
from thousand.cli import main  # noqa: E402
from thousand.env.openspiel import PigPolicy, play_along  # noqa: E402

BOTS = Path(__file__).resolve().parent / "bots"
EVALUATE_PIG_30 = ("evaluate", "pig", "--set", "goal=30", "--games", "0", "--json")


@pytest.mark.parametrize("winscore", [20, 100])
def test_openspiels_pig_and_these_rules_agree_along_played_games(winscore, tmp_path):
    """Legal actions at every decision, the winner and the returns of every game agree."""
    got = play_along(pyspiel.load_game("pig", {"winscore": winscore}), games=300, seed=winscore, tables=str(tmp_path))
    assert got["games"] == 300 and got["decisions"] > 1000
    assert got["legal_differ"] == got["winner_differ"] == got["returns_differ"] == 0


def test_play_along_notices_other_rules(monkeypatch, tmp_path):
    """The same check against rules of another goal finds the games ending otherwise."""
    game = pyspiel.load_game("pig", {"winscore": 30})
    real = tos.pig_rules
    monkeypatch.setattr("thousand.env.openspiel.pig_rules", lambda g: real(pyspiel.load_game("pig", {"winscore": 40})))
    got = play_along(game, games=100, seed=3, tables=str(tmp_path))
    assert got["winner_differ"] + got["legal_differ"] > 0


def test_the_policy_wins_in_openspiel_as_the_duel_table_says():
    """PigPolicy against itself in OpenSpiel's pig to 100: the first player's wins over 3,000
    games within four standard errors of the duel table's 0.530593 (Neller & Presser)."""
    game = pyspiel.load_game("pig", {"winscore": 100})
    policy = PigPolicy(game)
    rng = random.Random(5)
    wins, games = 0, 3000
    for _g in range(games):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.randrange(6))
            else:
                (a,) = policy.action_probabilities(s)
                s.apply_action(a)
        wins += s.returns()[0] > 0
    p = 0.5305927252737468
    assert abs(wins / games - p) < 4 * math.sqrt(p * (1 - p) / games)


def test_an_openspiel_bot_is_rated_exactly_with_one_command(tmp_path):
    """``--bot openspiel:FILE:ATTR``: an OpenSpiel Bot holding at 10 gets the built-in
    hold:10's exact chances and the same best response."""
    args = [*EVALUATE_PIG_30, "--timeout", "60", "--tables", str(tmp_path)]
    got = {}
    for spec in ("hold:10", f"openspiel:{BOTS / 'openspiel_bots.py'}:hold10"):
        r = CliRunner().invoke(main, [*args, "--bot", spec])
        assert r.exit_code == 0, r.output
        got[spec] = json.loads(r.stdout)["exact"]
    a, b = got.values()
    assert abs(a["value_first"] - b["value_first"]) < 1e-12 and abs(a["value_second"] - b["value_second"]) < 1e-12
    br_a, br_b = a["best_response"], b["best_response"]
    assert abs(br_a["best_response_first"] - br_b["best_response_first"]) < 1e-12


def test_a_state_is_rebuilt_as_openspiel_holds_it():
    game = pyspiel.load_game("pig", {"winscore": 50})
    for scores, player, total in (((0, 0), 0, 2), ((17, 9), 1, 13), ((48, 30), 0, 7)):
        s = tos.pig_state(game, scores, player, total)
        assert tos.read_pig(s) == (scores, total, player)


def test_bad_openspiel_input_is_one_line(tmp_path):
    with pytest.raises(BotError, match="diceoutcomes"):
        tos.pig_rules(pyspiel.load_game("pig", {"diceoutcomes": 4}))
    r = CliRunner().invoke(main, ["evaluate", "plain", "--bot", f"openspiel:{BOTS / 'openspiel_bots.py'}:hold20"])
    assert r.exit_code == 2 and "OpenSpiel" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = CliRunner().invoke(
        main,
        ["evaluate", "pig", "--set", "goal=20", "--bot", f"openspiel:{BOTS / 'openspiel_bots.py'}:stubborn"]
        + ["--games", "0", "--json", "--no-best-response", "--tables", str(tmp_path)],
    )
    # every answer a fault: the evaluation gives up in one line, naming the first
    (error,) = [x for x in r.stderr.splitlines() if x.startswith("thousand: error:")]
    assert r.exit_code == 2 and "not roll (0) or stop (1)" in error


def test_without_openspiel_an_openspiel_bot_is_one_line(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyspiel", None)  # as if open-spiel were not installed
    r = CliRunner().invoke(main, ["evaluate", "pig", "--bot", f"openspiel:{BOTS / 'openspiel_bots.py'}:hold20"])
    assert r.exit_code == 2 and "pip install 'thousand[rl]'" in r.stderr
