"""The equal_turns duel (docs/rules.md section 7): the second seat's last turn, ties worth 1/2.

Exact fractions from tests/reference.py (independent of the kernel), a last turn
derived by hand, invariants, tables, advice and the refusal of the full six-dice game.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
import tiny
from click.testing import CliRunner
from reference import exact_duel, exact_last_turn
from tiny import TINY_DUELS, TINY_EQUAL_TURNS

from thousand import kernel
from thousand.base.errors import ThousandError
from thousand.cli import main
from thousand.engine.player import PlayerState
from thousand.rules import from_mapping, load_ruleset
from thousand.solvers.duel import DuelModel, solve_duel
from thousand.solvers.lastturn import last_turn_horizon, last_turn_table, last_turn_values


def solved(name):
    return tiny.solved(TINY_EQUAL_TURNS, name)


def _start(sol):
    """P(first player wins) from the start, and the solution's two seat tables."""
    vals = sol.model.table_values(sol.P)
    i0 = sol.model.space.index[sol.model.moves.initial()]
    return (vals[0, i0, i0] if sol.model.equal_turns else vals[i0, i0]), vals


# the reference's policy iteration in fractions is slow on the larger ones
_SLOW = {"equal-overtaking-bolts"}


@pytest.mark.twin
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW else n for n in sorted(TINY_EQUAL_TURNS)]
)
def test_equal_turns_matches_exact_fractions(name):
    rs, sol = solved(name)
    model = sol.model
    states = model.space.states
    vals = model.table_values(sol.P)
    exact = exact_duel(rs, states, vals.tolist(), model.horizon)
    err = max(
        abs(float(exact[(seat, x, y)]) - vals[seat, i, j])
        for seat in (0, 1)
        for i, x in enumerate(states)
        for j, y in enumerate(states)
    )
    assert err <= 1e-12
    assert sol.residual <= 1e-12


@pytest.mark.parametrize("name", sorted(TINY_EQUAL_TURNS))
def test_equal_turns_invariants(name):
    rs, sol = solved(name)
    model = sol.model
    m = model.players
    vals = model.table_values(sol.P)
    assert vals.shape == (2, m, m)
    assert np.all(vals >= -1e-15) and np.all(vals <= 1 + 1e-15)
    # the horizon's truncation bound (docstring of last_turn_horizon) holds
    live = [y for y in model.space.states if model.moves.wins(y, rs.goal - y.score)]
    if rs.barrel.kind != "exact" and live:
        table = kernel.roll_table(rs)
        at = last_turn_table(rs, table, live, [model.horizon])[:, 0]
        far = last_turn_table(rs, table, live, [4 * model.horizon])[:, 0]
        assert np.all(at - far < 1e-16) and np.all(at >= far)
    # L(y, F) does not increase with the total to beat
    assert np.all(np.diff(model.last_turn, axis=1) <= 1e-15)


def test_only_cross_seat_pairs_are_solved():
    from thousand.solvers.duel import _levels

    rs, sol = solved("equal-barrel")
    model = sol.model
    m = model.players
    seen = np.zeros((model.n, model.n), dtype=int)
    for lv in _levels(model):
        seen[lv.px, lv.py] += 1
    assert np.all(seen[:m, m:] == 1) and np.all(seen[m:, :m] == 1)  # each cross pair once
    assert not seen[:m, :m].any() and not seen[m:, m:].any()  # no same-seat pair
    assert model.pairs == 2 * m * m


def test_first_seat_advantage_is_smaller_with_equal_turns():
    """Completing the round takes the first mover's edge away: on these tiny games the
    second seat, which knows the total to beat, is even ahead."""
    for name in ("equal-pig-like", "equal-barrel", "equal-exact"):
        rs_eq, sol_eq = solved(name)
        rs = from_mapping(dict(TINY_EQUAL_TURNS[name], equal_turns=False))
        p_eq, _ = _start(sol_eq)
        p, _ = _start(solve_duel(rs))
        assert p > 0.5 and p_eq < p, name


def _one_die(score_face, goal, **extra):
    """One die, only ``score_face`` scores 5 points: a Pig in which a die is rarely kept."""
    return from_mapping(
        {
            "dice": 1,
            "hot_dice": "free",
            "goal": goal,
            "scoring": {"singles": {str(score_face): 5}},
            "equal_turns": True,
            **extra,
        }
    )


@pytest.mark.twin
def test_last_turn_by_hand():
    """B at score s needs a final total above F (tie: 1/2) in one turn.

    One die, faces 2-6 score their value, a 1 busts (Pig), goal 20. From s = 19
    (any bank meets the goal) against F = 22: let g(r) be B's chance with r
    points still to beat. g(r) = 1 for r < 0 (bank: the total beats F). At
    r = 0 (a tie), banking gives 1/2 but rolling wins unless a 1 comes: g(0) =
    5/6. g(1) = 5/6 (every scoring face beats it). g(2) = (1/6)(g(0) + 4) =
    29/36. g(3) = (1/6)(g(1) + g(0) + 3) = (1/6)(5/6 + 5/6 + 3) = 7/9. So
    L(19, F) = 7/9, 29/36, 5/6 for F = 22, 21, 20.
    The one-die 5-only game of goal 10 shows a tie taken: from s = 5 against
    F = 10, a 5 (p 1/6) ties; rolling on wins 1/6 < 1/2, so B banks the tie:
    L = (1/6)(1/2) = 1/12. Against F = 15 B needs two 5s, and the second makes
    a tie: L = (1/6)(1/6)(1/2) = 1/72; against F = 20 ... three: 1/432.
    """
    pig = from_mapping(dict(TINY_DUELS["pig-10"], goal=20, equal_turns=True))
    table = kernel.roll_table(pig)
    y = PlayerState(19)
    got = last_turn_values(pig, table, y, [22, 21, 20])
    want = [Fraction(7, 9), Fraction(29, 36), Fraction(5, 6)]
    np.testing.assert_allclose(got, [float(w) for w in want], rtol=0, atol=1e-15)
    assert [exact_last_turn(pig, y, F) for F in (22, 21, 20)] == want

    fives = _one_die(5, 10)
    table = kernel.roll_table(fives)
    got = last_turn_values(fives, table, PlayerState(5), [10, 15, 20])
    np.testing.assert_allclose(got, [1 / 12, 1 / 72, 1 / 432], rtol=0, atol=1e-15)
    # the same through the advisor: its opening roll is worth L
    r = CliRunner().invoke(
        main,
        ["advise", "pig", "--set", "goal=20", "--set", "equal_turns=true", "--me", "19", "--to-beat", "22", "--json"],
    )
    assert r.exit_code == 0, r.output
    a = json.loads(r.stdout)
    assert a["to_beat"] == 22 and a["best"] == "roll 1"
    assert a["options"][0]["win_probability"] == pytest.approx(7 / 9, abs=1e-15)


def test_last_turn_advice_values_every_option():
    # B at 10 with 10 this turn (total 20, the goal) against 22: stopping loses,
    # a roll of 3-6 wins, a 2 ties and B rolls on (5/6): 4/6 + (1/6)(5/6) = 29/36
    base = ["advise", "pig", "--set", "goal=20", "--set", "equal_turns=true", "--me", "10", "--to-beat", "22", "--json"]
    r = CliRunner().invoke(main, base + ["--turn", "10", "--dice", "1"])
    assert r.exit_code == 0, r.output
    opts = {o["action"]: o["win_probability"] for o in json.loads(r.stdout)["options"]}
    assert opts == pytest.approx({"roll": 29 / 36, "stop": 0.0}, abs=1e-15)
    # a tie to bank: at 22 against 22 stopping is worth 1/2
    r = CliRunner().invoke(main, base + ["--turn", "12", "--dice", "1"])
    opts = {o["action"]: o["win_probability"] for o in json.loads(r.stdout)["options"]}
    assert opts == pytest.approx({"roll": 5 / 6, "stop": 0.5}, abs=1e-15)
    # a roll to choose from
    r = CliRunner().invoke(main, base + ["--turn", "10", "--roll", "2"])
    a = json.loads(r.stdout)
    assert {o["label"]: o["win_probability"] for o in a["options"]} == pytest.approx(
        {"keep 2 (+2), then roll 1": 5 / 6, "keep 2 (+2), then stop": 0.5}, abs=1e-15
    )


def test_advice_matches_the_table(tmp_path):
    """A turn's opening roll, re-solved by the advisor, is the stored value, for both seats."""
    from thousand.solvers.advice import duel_advisor
    from thousand.storage.solve import solve_objective

    rs = from_mapping(TINY_EQUAL_TURNS["equal-barrel"])
    solution = solve_objective(rs, "duel", str(tmp_path), progress=False)
    assert solution.meta["last_turn_horizon"] == solved("equal-barrel")[1].model.horizon
    states = [decode for decode in solution.index]
    for seat in (0, 1):
        for x in states:
            for y in states:
                adv = duel_advisor(solution, y, seat).advise(x)
                assert adv.best.value == pytest.approx(solution.value(x, y, seat), abs=1e-13)


def test_equal_turns_cli(tmp_path):
    runner = CliRunner()
    base = ["--set", "goal=20", "--set", "equal_turns=true", "--tables", str(tmp_path)]
    r = runner.invoke(main, ["solve", "pig", *base, "--objective", "duel", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["residual"] <= 1e-12 and d["player_states"] == 20 and d["states"] == 2 * 20 * 20
    meta = json.loads((tmp_path / d["table"].split("/")[-1] / "meta.json").read_text())
    assert meta["values_shape"] == [2, 20, 20] and meta["last_turn_horizon"] >= 20
    rs = load_ruleset("pig", ("goal=20", "equal_turns=true"))
    p, _ = _start(solve_duel(rs))
    assert d["start_value"] == pytest.approx(p, abs=1e-15)
    adv = ["advise", "pig", *base, "--me", "10", "--opp", "15", "--turn", "6", "--dice", "1"]
    a = json.loads(runner.invoke(main, adv + ["--seat", "first", "--json"]).stdout)
    b = json.loads(runner.invoke(main, adv + ["--seat", "second", "--json"]).stdout)
    assert a["options"] != b["options"]
    # one-line errors, exit 2
    for extra, words in (
        (["--opp", "15"], "--seat first or --seat second"),
        (["--opp", "15", "--seat", "first", "--to-beat", "25"], "--to-beat"),
        (["--to-beat", "15"], "at least the goal"),
        (["--seat", "first", "--objective", "race"], "race has no seats"),
    ):
        r = runner.invoke(main, ["advise", "pig", *base, "--me", "10", *extra])
        assert r.exit_code == 2 and words in r.stderr, (extra, r.output)
        assert r.stderr.count("\n") == 1
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
            "--seat",
            "first",
        ],
    )
    assert r.exit_code == 2 and "equal_turns rulesets only" in r.stderr
    # the last turn needs no table: the six-dice game's own (unit 5)
    r = runner.invoke(main, ["advise", "six-dice", "--me", "880", "--to-beat", "1003"])
    assert r.exit_code == 2 and "multiple of 5" in r.stderr


def test_equal_turns_table_checks(tmp_path):
    from thousand.storage.files import TableError, load_table
    from thousand.storage.solve import solve_objective

    rs = from_mapping(TINY_EQUAL_TURNS["equal-exact"])
    sol = solve_objective(rs, "duel", str(tmp_path), progress=False)
    folder = sol.table.path
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps(dict(meta, last_turn_horizon=None)))
    with pytest.raises(TableError, match="last_turn_horizon"):
        load_table(folder, rs, "duel")
    v = np.load(folder / "values.npy")
    np.save(folder / "values.npy", v[0])
    # a consistent table of the wrong shape (its checksum made to match): the shape check refuses it
    from thousand.storage import file_sha256

    sums = dict(meta["sha256"], **{"values.npy": file_sha256(folder / "values.npy")})
    (folder / "meta.json").write_text(json.dumps(dict(meta, values_shape=list(v[0].shape), sha256=sums)))
    with pytest.raises(TableError, match="equal_turns duel table"):
        load_table(folder, rs, "duel")


def test_six_dice_is_refused_in_one_line():
    with pytest.raises(ThousandError) as exc:
        DuelModel(load_ruleset("six-dice"))
    msg = str(exc.value)
    # 30,024 player states since an entry into a barrier from above is one state (it was 34,425)
    assert "\n" not in msg and "30,024 player states" in msg and "pairs" in msg and "GiB" in msg


def test_horizon_bound_with_an_instant_win():
    """An instant win beats every total, so L(y, F) never falls below it: the horizon
    stops where L(y, F) - L(y, inf) is below 1e-16."""
    rs = from_mapping(
        {
            "dice": 2,
            "goal": 20,
            "hot_dice": "free",
            "equal_turns": True,
            "scoring": {"singles": {"1": 10, "5": 5}, "instant_win": [{"face": 6, "count": 2}]},
        }
    )
    table = kernel.roll_table(rs)
    states = DuelModel(rs).space.states
    F = last_turn_horizon(rs, table, states)
    L = last_turn_table(rs, table, states, [F, 10 * F])
    assert np.all(L[:, 1] >= 1 / 36 - 1e-15)  # the instant win's floor
    assert np.all(L[:, 0] - L[:, 1] < 1e-16)


@pytest.mark.twin
@pytest.mark.parametrize("name", ["equal-barrel", "equal-overtaking-bolts"])
def test_last_turns_of_a_round_against_reference_turns(name):
    """A last turn with players still to play after it and a top shared by ``tied``: the
    advice at the start of the turn equals the reference recursion of tests/test_nplayer.py
    (reference turns, no kernel, no thousand.solvers.lastturn), each later player maximising its own
    chance; with nobody after and one leader it is the two-player last turn."""
    from reference import TurnReference
    from test_nplayer import reference_last_round

    from thousand import kernel
    from thousand.engine.states import build_state_space
    from thousand.solvers.advice import last_turn_advisor
    from thousand.solvers.lastturn import last_turn_horizon

    rs = solved(name)[0]
    states = build_state_space(rs, opponents=True).states
    ref = TurnReference(rs, floats=True)
    table = kernel.roll_table(rs)
    worst = 0.0
    for me, later, B, tied in (
        (states[0], [states[-1]], rs.goal, 1),
        (states[-1], [states[1]], rs.goal + 10, 2),
        (states[2], [states[3], states[0]], rs.goal + 5, 1),
        (states[1], [], rs.goal, 2),
    ):
        top = max(last_turn_horizon(rs, table, later), B) if later else B
        U = reference_last_round(rs, ref, top)
        adv = last_turn_advisor(rs, B, tied, later).advise(me, 0, rs.dice, None)
        worst = max(worst, abs(adv.best.value - U((me, *later), B, tied)[1]))
    assert worst <= 1e-12
    two = last_turn_advisor(rs, rs.goal + 5).advise(states[0], 0, rs.dice, None)
    assert two.best.value == pytest.approx(
        reference_last_round(rs, ref, rs.goal + 5)((states[0],), rs.goal + 5, 1)[1], abs=1e-12
    )


def test_equal_turns_cli_for_three_players(tmp_path):
    """advise with two opponents needs the seat (first to third) and gives the exact
    equilibrium; --to-beat F takes the players still to play (--opp) and --tied K."""
    runner = CliRunner()
    base = ["advise", "pig", "--set", "goal=6", "--set", "equal_turns=true", "--tables", str(tmp_path)]
    r = runner.invoke(main, [*base, "--me", "4", "--opp", "3", "--opp", "2", "--seat", "third", "--turn", "2"])
    assert r.exit_code == 0, r.output
    assert "Exact: the best play against 2 players who all play their best." in r.output
    r = runner.invoke(
        main,
        [*base, "--me", "0", "--to-beat", "8", "--tied", "2", "--opp", "5", "--turn", "5", "--dice", "1", "--json"],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["to_beat"] == 8 and d["tied"] == 2
    for extra, words in (
        (["--me", "4", "--opp", "3", "--opp", "2"], "--seat first, second, ... (of 3)"),
        (["--me", "4", "--opp", "3", "--opp", "2", "--seat", "fourth"], "seats first to third"),
        (["--me", "4", "--opp", "3", "--seat", "third"], "first and the second seat"),
        (["--me", "4", "--tied", "2"], "goes with --to-beat"),
        (["--me", "4", "--to-beat", "8", "--seat", "first"], "takes no --seat"),
        (["--me", "4", "--to-beat", "8", "--tied", "0"], "--tied 0"),
    ):
        r = runner.invoke(main, [*base, *extra])
        assert r.exit_code == 2 and words in r.stderr, (extra, r.output)
        assert r.stderr.count("\n") == 1
