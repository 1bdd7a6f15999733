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
