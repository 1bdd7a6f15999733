"""The lookaheads of thousand.solvers.approx (``ahead``, ``round``): every player's duel odds
in every state, one turn of the odds' play at a time, checked against the duel table read
one state at a time, the odds' own decider, and the exact evaluation of the odds' profile."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from thousand.engine.player import Moves, PlayerState
from thousand.rules import load_ruleset
from thousand.solvers.approx import LookaheadDecider, OddsDecider, combine_duels, duel_matrix, duel_odds
from thousand.solvers.nplayer import NPlayerGame
from thousand.solvers.profile import evaluate_profile
from thousand.storage.solve import solve_objective

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_approx import classic_board  # noqa: E402


def _game(preset, sets, tables):
    rs = load_ruleset(preset, sets)
    duel = solve_objective(rs, "duel", tables, progress=False)
    game = NPlayerGame(rs, 3)
    return rs, game, duel, duel_matrix(game.space, duel)


@pytest.fixture(scope="module")
def pig30(tmp_path_factory):
    return _game("pig", ("goal=30",), str(tmp_path_factory.mktemp("tables")))


@pytest.fixture(scope="module")
def classic100(tmp_path_factory):
    return _game("classic", classic_board(100, (50, 60), 75, 65, bolts=2), str(tmp_path_factory.mktemp("tables")))


def test_every_players_odds_are_its_duels_combined(pig30):
    """Player a against b has the duel chance of whichever of the two moves first, read off
    the duel table state by state."""
    rs, game, duel, _P = pig30
    U = duel_odds(game, _P)
    moves, sp = Moves(rs), game.space
    for scores in [(0, 0, 0), (12, 25, 3), (27, 5, 20), (4, 29, 28)]:
        x, y1, y2 = (moves.normalise(PlayerState(v)) for v in scores)
        s = (sp.lookup(x) * game.m + sp.lookup(y1)) * game.m + sp.lookup(y2)
        p = duel.value
        expect = [
            float(combine_duels(np.array([p(x, y1), p(x, y2)]), "odds")),
            float(combine_duels(np.array([1 - p(x, y1), p(y1, y2)]), "odds")),
            float(combine_duels(np.array([1 - p(x, y2), 1 - p(y1, y2)]), "odds")),
        ]
        assert U[s] == pytest.approx(expect, abs=1e-12)


@pytest.mark.parametrize("which", ["pig30", "classic100"])
def test_looking_no_turn_ahead_is_the_odds_own_decider(which, request):
    """At depth 0 the lookahead reads every player's odds after the mover's end, which is
    what the odds' decider computes from the duel table with each opponent overtaken or
    pushed off: the same end values in every state (two paths: the game's successors
    against the decider's own end maps)."""
    _rs, game, _duel, P = request.getfixturevalue(which)
    look, odds = LookaheadDecider(game, P, 0), OddsDecider(game.space, P, 2)
    for i in range(game.m):
        rest = np.arange(game.M1)
        a, b = look.decide(i, rest), odds.decide(i, rest)
        rows = game.space.stop_ok[i] | game.space.forced_ok[i]  # the totals a turn can end at
        assert np.allclose(a[0][rows], b[0][rows], atol=1e-12) and np.allclose(a[1], b[1], atol=1e-12)


def test_a_lookahead_deep_enough_is_the_odds_played_by_everyone(pig30):
    """Looking ever further ahead through turns played by the odds' decisions, the values
    become those of every seat playing the odds, which the exact evaluation (trees and
    cycles of zero turns solved in closed form) gives."""
    _rs, game, _duel, P = pig30
    deep = LookaheadDecider(game, P, 400).U
    exact = evaluate_profile(game.space, 3, [OddsDecider(game.space, P, 2)])[0]
    assert np.max(np.abs(deep - exact)) < 1e-9
    shallow = LookaheadDecider(game, P, 2)
    assert shallow.name == "ahead" and LookaheadDecider(game, P, 3).name == "round"
    assert np.max(np.abs(shallow.U - exact)) > 1e-3  # two turns are not the whole game


@pytest.mark.parametrize("which", ["pig30", "classic100"])
def test_the_lookahead_at_one_decision_is_the_whole_games(which, request):
    """Advice computes the lookahead at each decision from the states its turns reach
    alone; measurement computes it for every state at once, level by level: the same end
    values (two paths through the same turns)."""
    _rs, game, _duel, P = request.getfixturevalue(which)
    rng = np.random.default_rng(5)
    for depth in (2, 3):
        whole, local = LookaheadDecider(game, P, depth), LookaheadDecider(game, P, depth, whole=False)
        assert local.U is None and local.name == whole.name
        for i in rng.choice(game.m, size=6, replace=False):
            rest = rng.choice(game.M1, size=40, replace=False)
            a, b = whole.decide(int(i), rest), local.decide(int(i), rest)
            assert np.max(np.abs(a[0] - b[0])) < 1e-12 and np.max(np.abs(a[1] - b[1])) < 1e-12


def test_the_ahead_advice_is_the_turn_its_decider_plays(pig30):
    """The advice's lookahead (computed at the decision) values the turn as the decider
    the measurement plays: the turn DP of the whole game's end values."""
    from thousand import kernel
    from thousand.solvers.advice import AheadGame, ahead_advisor

    rs, game, duel, P = pig30
    ahead = AheadGame(duel, 3)
    whole = LookaheadDecider(game, P, 2)
    sp, m, table, moves = game.space, game.m, kernel.roll_table(rs), Moves(rs)
    for me, a, b in [(0, 0, 0), (12, 25, 3), (27, 5, 20), (4, 28, 29)]:
        x, y1, y2 = (moves.normalise(PlayerState(v)) for v in (me, a, b))
        i = sp.lookup(x)
        stop, bust, win = whole.decide(i, np.array([sp.lookup(y1) * m + sp.lookup(y2)]))
        start = kernel.turn_dp(table, sp.stop_ok[i], stop, sp.forced_ok[i], stop, bust, win).start[0]
        assert ahead_advisor(ahead, [y1, y2]).solve_turn(x).tv.start[0] == pytest.approx(start, abs=1e-12)
    with pytest.raises(Exception, match="built for 3"):
        ahead_advisor(ahead, [x])


def test_three_players_advice_by_the_lookahead_where_it_measured_least(pig30, classic100, monkeypatch, tmp_path):
    """Where the lookahead measured the least with three players of a 1000 game, the advice
    plays it and says what it does; a front end that cannot compute it (the page with no
    server) is given the best of the others; four players, and games whose moves leave the
    others alone (Pig), are never given it."""
    import json

    from click.testing import CliRunner

    import thousand.advice.costs as costs
    import thousand.advice.policy as policy
    from thousand.cli import main

    def fake(preset):
        return [
            {"ruleset": f"{preset}-100", "preset": preset, "goal": 100, "players": 3, "dice": 5,
             "losses": {"ahead": [0.0001, 0.0002, 0.0001], "odds": [0.0003, 0.0002, 0.0002],
                        "product": [0.0008] * 3}},
            {"ruleset": f"{preset}-150", "preset": preset, "goal": 150, "players": 3, "dice": 5,
             "losses": {"odds": [0.0004] * 3, "product": [0.0009] * 3}},
        ]  # fmt: skip

    cases = fake("classic") + fake("pig")
    monkeypatch.setattr(costs, "measured_cases", lambda: cases)
    monkeypatch.setattr(policy.Advisor, "players_available", lambda self, n: (False, "not here"))
    classic, pig = classic100[0], pig30[0]
    adv = policy.Advisor(classic, solver=lambda *a: None)
    assert adv.duels_method(3) == "ahead"
    assert adv.duels_method(3, lookahead=False) == "odds"
    assert adv.duels_method(4) == "odds"
    assert policy.Advisor(pig, solver=lambda *a: None).duels_method(3) == "odds"
    sets = [w for a in classic_board(100, (50, 60), 75, 65, bolts=2) for w in ("--set", a)]
    args = ["advise", "classic", *sets, "--me", "25", "--opp", "40", "--opp", "0", "--tables", str(tmp_path)]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    part = json.loads(r.stdout)["advice"][-1]
    assert not part["exact"] and part["method_id"] == "ahead"
    assert "next turn played out" in part["method"] and "less than 0.05%" in part["method"]
    # compared where both were measured: a method measured on a longer game too is not
    # judged by that game alone
    cases[0]["losses"]["ahead"] = [0.00035] * 3  # below the odds at 150, above them at 100
    assert policy.Advisor(classic, solver=lambda *a: None).duels_method(3) == "odds"
