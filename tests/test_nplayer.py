"""The N-player solver (thousand.nplayer): two players give the duel; three players of
small Pig games against an independent value iteration over (scores, turn total); the
values are probabilities that sum to 1 and the certificate (the largest gain of a
deviation) is at most 1e-9."""

from __future__ import annotations

import numpy as np
import pytest

from thousand.game import Moves
from thousand.nplayer import NPlayerError, solve_nplayer
from thousand.rules import load_ruleset
from thousand.solve import solve_objective


def test_two_players_are_the_duel(tmp_path):
    rs = load_ruleset("pig", ("goal=30",))
    sol = solve_nplayer(rs, 2)
    duel = solve_objective(rs, "duel", str(tmp_path), progress=False)
    m = len(sol.space)
    worst = max(abs(sol.V[i * m + j, 0] - duel.value(x, y))
                for i, x in enumerate(sol.space.states) for j, y in enumerate(sol.space.states))
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
    rs = load_ruleset("pig", (f"goal={goal}", f"faces={faces}", "scoring.singles={}",
                              *[f"scoring.singles.{f}={f}" for f in range(2, faces + 1)]))
    sol = solve_nplayer(rs, 3)
    ref = reference_pig(goal, faces, 3)
    moves = Moves(rs)
    worst = 0.0
    for s in np.ndindex(*(goal,) * 3):
        xs = [moves.normalise(moves.initial()._replace(score=int(v))) for v in s]
        worst = max(worst, float(np.max(np.abs(sol.V[sol.index(xs)] - ref[(tuple(int(v) for v in s), 0)]))))
    assert worst <= 1e-12
    assert sol.certificate <= 1e-9


@pytest.mark.parametrize("goal", [20, pytest.param(50, marks=pytest.mark.heavy)])
def test_three_player_pig_is_an_equilibrium(goal):
    sol = solve_nplayer(load_ruleset("pig", (f"goal={goal}",)), 3)
    assert np.all(sol.V >= -1e-15) and np.all(sol.V <= 1 + 1e-15)
    assert np.allclose(sol.V.sum(axis=1), 1.0, atol=1e-12)
    assert sol.certificate <= 1e-9
    first, second, third = sol.start
    assert first > second > third      # moving earlier is worth more at Pig


def test_refused_in_one_line_before_any_work():
    with pytest.raises(NPlayerError, match="overtaking"):
        solve_nplayer(load_ruleset("classic"), 3)
    with pytest.raises(NPlayerError, match="GB of values"):
        solve_nplayer(load_ruleset("plain"), 4)
