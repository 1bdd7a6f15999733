"""The Farkle family (RULES.md §11): min_bank, the "nothing" pattern, the zilch preset and
the objective rate (the most points per turn in the long run).

Independent checks: a one-die reference in exact fractions (written here, from the
equations, not from the solver) for min_bank's turn value and for the average-reward
equations of rate; the identity rate = turn without penalties on random rulesets; the
engine's set-asides against the kernel's classes with the nothing pattern; Busche's
published Zilch figure.
"""

import json
from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from test_kernel_twin import _bust_everywhere, rulesets

from thousand.base.errors import RulesetError, StateError
from thousand.cli import main
from thousand.engine import TurnRules
from thousand.engine.player import PlayerState
from thousand.rules import from_mapping, load_ruleset
from thousand.solvers.rate import solve_rate
from thousand.solvers.turn import expected_turn_points

# the kernel in use against the engine, exact fractions and published values: run on the
# pure twin too (tests/conftest.py)
pytestmark = pytest.mark.twin


def one_die(points: dict[int, int], faces: int, **extra):
    """A one-die ruleset: face -> points, the other faces bust (a Pig of ``faces`` faces)."""
    m = {
        "name": "tiny",
        "dice": 1,
        "faces": faces,
        "keep": "all",
        "hot_dice": "free",
        "goal": 1000,
        "scoring": {"singles": {str(f): p for f, p in points.items()}},
    }
    m.update(extra)
    return from_mapping(m)


def turn_reference(points, faces, stop_value, bust_value, can_stop, cap=400):
    """Exact value and end statistics of the best one-die turn: V(t) = max(stop(t), E[next]).

    Above ``cap`` stopping is optimal for the cases used here (the expected gain of a roll,
    sum(points)/faces, is below the loss P(bust) * (t + |values|)). Returns (V(0) and, under the
    chosen policy, E[points banked], P(bust))."""
    p = Fraction(1, faces)
    V, A, Z = {}, {}, {}
    for t in range(cap, -1, -1):
        roll = p * (faces - len(points)) * bust_value + sum(p * V.get(t + x, stop_value(cap)) for x in points.values())
        ra = sum(p * A.get(t + x, cap) for x in points.values())
        rz = p * (faces - len(points)) + sum(p * Z.get(t + x, 0) for x in points.values())
        if t > 0 and can_stop(t) and (t >= cap or stop_value(t) >= roll):
            V[t], A[t], Z[t] = stop_value(t), Fraction(t), Fraction(0)
        else:
            V[t], A[t], Z[t] = roll, ra, rz
    return V[0], A[0], Z[0]


# --------------------------------------------------------------------------- min_bank


def test_min_bank_turn_value_in_exact_fractions():
    pts = {2: 2, 3: 3}
    rs = one_die(pts, 3, min_bank=8)
    ref, _, _ = turn_reference(pts, 3, lambda t: Fraction(t), Fraction(0), lambda t: t >= 8)
    assert abs(expected_turn_points(rs).value - float(ref)) < 1e-12
    free, _, _ = turn_reference(pts, 3, lambda t: Fraction(t), Fraction(0), lambda t: True)
    assert ref < free and abs(expected_turn_points(one_die(pts, 3)).value - float(free)) < 1e-12


def test_min_bank_is_a_rule_of_every_bank():
    rs = load_ruleset("farkle", ["min_bank=300"])
    engine = TurnRules(rs)
    x = PlayerState(5000)
    s = engine.apply(
        engine.after_roll(engine.start(x), (1, 5, 2, 3, 4, 6)),
        engine.legal(engine.after_roll(engine.start(x), (1, 5, 2, 3, 4, 6)))[0],
    )
    assert not engine.can_stop(s) and "at least 300" in engine.stop_refusal(s)
    assert rs.hash != load_ruleset("farkle").hash
    assert load_ruleset("farkle", ["min_bank=0"]).hash == load_ruleset("farkle").hash
    with pytest.raises(RulesetError, match="min_bank must not be negative"):
        load_ruleset("farkle", ["min_bank=-50"])
    assert load_ruleset("farkle", ["min_bank=320"]).unit == 10  # the unit is the gcd of every value
    with pytest.raises(RulesetError, match="below the goal"):
        load_ruleset("farkle", ["min_bank=10000"])


def test_new_keys_round_trip_and_old_hashes_stay(tmp_path):
    rs = load_ruleset("zilch")
    p = tmp_path / "z.toml"
    p.write_text(rs.to_toml(), encoding="utf-8")
    assert load_ruleset(str(p)) == rs and load_ruleset(str(p)).hash == rs.hash
    assert "min_bank = 300" in rs.to_toml() and "nothing = 500" in rs.to_toml()
    # keys added later are hashed only when set: the shipped tables keep their names
    assert load_ruleset("classic").hash == "a645c044fdfd6aea" and load_ruleset("farkle").hash == "f2cb6fc229f3c270"


# --------------------------------------------------------------------------- the nothing pattern


def test_nothing_pattern_scores_all_dice_and_makes_them_hot():
    rs = load_ruleset("zilch")
    engine = TurnRules(rs)
    assert engine.set_asides((2, 2, 3, 3, 4, 6)) == [(500, (2, 2, 3, 3, 4, 6))]
    assert engine.set_asides((2, 2, 3, 3, 4, 4))[0] == (1500, (2, 2, 3, 3, 4, 4))  # three pairs
    # compose = "any": four 1s and a pair may be scored as three pairs (all six, hot) or as 2000
    assert {(1500, (1, 1, 1, 1, 2, 2)), (2000, (1, 1, 1, 1))} <= set(engine.set_asides((1, 1, 1, 1, 2, 2)))
    best = TurnRules(load_ruleset("zilch", ["compose=best"])).set_asides((1, 1, 1, 1, 2, 2))
    assert (1500, (1, 1, 1, 1, 2, 2)) not in best
    with pytest.raises(RulesetError, match="needs keep"):
        load_ruleset("zilch", ["keep=all"])
    s = engine.start(PlayerState(0))
    r = engine.after_roll(s, (2, 2, 3, 3, 4, 6))
    nxt = engine.apply(r, next(a for a in engine.legal(r) if a.roll))
    assert nxt.total == 500 and nxt.dice == 6  # hot: all six again
    five = engine.after_roll(engine.state(PlayerState(0), 300, 5), (2, 2, 3, 3, 4))
    assert five.kind == "bust"  # only all six dice
    with pytest.raises(RulesetError, match="scoring.nothing must not be negative"):
        load_ruleset("zilch", ["scoring.nothing=-500"])


def test_nothing_raises_the_turn_value_of_farkle():
    base = expected_turn_points(load_ruleset("farkle")).value
    more = expected_turn_points(load_ruleset("farkle", ["scoring.nothing=500"])).value
    assert more > base


# --------------------------------------------------------------------------- rate


def rate_reference(pts, faces, limit, penalty, min_bank=0):
    """The average-reward equations of a one-die game with consecutive bolts, exactly:
    policy iteration in fractions. g + h(c) = max E[r + h(c')], h(0) = 0."""
    L = max(limit, 1)
    h = [Fraction(0)] * L
    for _ in range(50):
        stats = []
        for c in range(L):
            last = c == L - 1 and limit
            zero_r = Fraction(-penalty) if last else Fraction(0)
            nxt = 0 if (last or not limit) else c + 1
            _, A, Z = turn_reference(pts, faces, lambda t: Fraction(t) + h[0], zero_r + h[nxt], lambda t: t >= min_bank)
            stats.append((A, Z, zero_r, nxt))
        # solve g + h(c) = A_c(1 - ...) exactly: R_c = A_c + Z_c * zero_r; h(c) = R_c - g + (1-Z_c) h0 + Z_c h(nxt)
        # unknowns g, h1..h_{L-1}: Gaussian elimination in fractions
        n = L
        M = [[Fraction(0)] * (n + 1) for _ in range(n)]
        for c, (A, Z, zr, nx) in enumerate(stats):
            M[c][0] = Fraction(1)
            row = [Fraction(0)] * L
            row[c] += 1
            row[0] -= 1 - Z
            row[nx] -= Z
            for k in range(1, L):
                M[c][k] += row[k]
            M[c][n] = A + Z * zr
        for i in range(n):
            piv = next(r for r in range(i, n) if M[r][i] != 0)
            M[i], M[piv] = M[piv], M[i]
            for r in range(n):
                if r != i and M[r][i] != 0:
                    f = M[r][i] / M[i][i]
                    M[r] = [a - f * b for a, b in zip(M[r], M[i])]
        sol = [M[i][n] / M[i][i] for i in range(n)]
        new = [Fraction(0)] + sol[1:]
        if new == h:
            return sol[0], h
        h = new
    raise AssertionError("no convergence")


@pytest.mark.parametrize(
    "pts, faces, limit, penalty, min_bank",
    [
        ({2: 2, 3: 3}, 3, 2, 4, 0),
        ({2: 2, 3: 3, 4: 4}, 4, 3, 10, 0),
        ({3: 3, 4: 4, 5: 5, 6: 6}, 6, 2, 6, 8),
    ],
)
def test_rate_solves_the_average_reward_equations_exactly(pts, faces, limit, penalty, min_bank):
    extra = {"bolts": {"limit": limit, "penalty": penalty, "consecutive": True}}
    if min_bank:
        extra["min_bank"] = min_bank
    rs = one_die(pts, faces, **extra)
    g, h = rate_reference(pts, faces, limit, penalty, min_bank)
    sol = solve_rate(rs)
    assert abs(sol.gain - float(g)) < 1e-10, (sol.gain, float(g))
    assert max(abs(a - float(b)) for a, b in zip(sol.relative, h)) < 1e-9
    assert sol.gain < expected_turn_points(rs).value  # the penalty costs


@settings(max_examples=25, deadline=None)
@given(rulesets(max_dice=4))
def test_rate_without_penalty_is_the_turn_value(rs):
    """With no bolts penalty and no opening the long run repeats the first turn."""
    m = rs.to_mapping()
    m["open_min"], m["bolts"] = 0, {"limit": 0, "penalty": 0, "consecutive": False, "exempt": []}
    m["scoring"]["instant_win"] = []
    rs = from_mapping(m)
    from hypothesis import assume

    from thousand import kernel

    assume(_bust_everywhere(kernel.roll_table(rs)))  # else a turn need not end: no finite value
    assert abs(solve_rate(rs).gain - expected_turn_points(rs).value) < 1e-9 * max(1.0, expected_turn_points(rs).value)


def test_rate_is_refused_where_it_has_no_meaning():
    with pytest.raises(StateError, match="pits and a dump score .* and a barrel"):
        solve_rate(load_ruleset("classic"))
    rs = load_ruleset(
        "classic",
        [
            "pits=[]",
            "dump=[]",
            "barrel.kind=none",
            "barrel.threshold=0",
            "barrel.attempts=0",
            "barrel.fall_penalty=0",
            "barrel.max_falls=0",
            "barrel.push_off=none",
        ],
    )
    assert solve_rate(rs).gain > 0


def test_zilch_published_rate_busche_2010():
    """Busche, "Maximizing Expected Scores in the Game of Zilch" (2010): three strategies, for
    0, 1 and 2 zilches in a row, give 620.855 points per turn, "the best you can possibly do".
    It needs the reading compose = "any" (docs/rules.md): with the best composition only,
    0.013 is missing. The strategies grow more careful with each zilch, as Busche says."""
    sol = solve_rate(load_ruleset("zilch"))
    assert f"{sol.gain:.3f}" == "620.855"
    assert f"{solve_rate(load_ruleset('zilch', ['compose=best'])).gain:.3f}" != "620.855"
    assert sol.counters == 3
    assert sol.zero_probability[0] > sol.zero_probability[1] > sol.zero_probability[2]
    assert sol.relative[0] > sol.relative[1] > sol.relative[2]


def test_cli_rate_solve_and_advise():
    r = CliRunner().invoke(main, ["solve", "zilch", "--objective", "rate", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["objective"] == "rate" and d["counters"] == 3 and len(d["expected_points"]) == 3
    r = CliRunner().invoke(
        main,
        [
            "advise",
            "zilch",
            "--objective",
            "rate",
            "--me",
            "2000",
            "--bolts",
            "2",
            "--turn",
            "300",
            "--dice",
            "2",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["best"] == "stop" and d["value"] == "long_run_points"
    r = CliRunner().invoke(main, ["solve", "classic", "--objective", "rate"])
    assert r.exit_code == 2 and "not defined" in r.stderr


def test_min_bank_duel_near_the_goal():
    """A player 50 short of the goal still needs a bank of min_bank: the turn's horizon (its
    saturation) covers it, so the duel converges to win probabilities in [0, 1]."""
    from thousand.storage.solve import solve

    sol = solve(load_ruleset("farkle", ["goal=1000", "min_bank=300"]), "duel")
    assert sol.residual < 1e-12 and 0 <= sol.values.min() and sol.values.max() <= 1
    assert 0.5 < sol.start_value() < 0.7
    x, y = PlayerState(950), PlayerState(0)
    from thousand.engine.player import Moves

    assert Moves(sol.rs).saturation(x) == 300
    # the leader 50 short wins more often than not, but must still make 300 in a turn
    assert 0.5 < sol.value(x, y) < 1


def test_scorekeeper_applies_min_bank_and_the_nothing_pattern():
    from thousand.play import Game

    g = Game(load_ruleset("zilch"), ["A", "B"], "zilch")
    g.submit("roll 1,2,3,4,4,6")  # the lone 1 is set aside by itself
    assert g.turn.total == 100
    with pytest.raises(StateError, match="at least 300"):
        g.submit("stop")
    g.submit("roll 1,1,1,2,3")  # +1000 with five dice: 1100
    g.submit("keep 1,1,1")
    g.submit("stop")
    assert g.states[0].score == 1100 and g.current == 1
    g.submit("roll 2,2,3,3,4,6")  # nothing: 500, all six dice again
    assert g.turn.total == 500 and g.turn.dice == 6
