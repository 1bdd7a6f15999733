"""Poker dice (RULES.md §10): hands, the turn, the seat-order game, tables, the commands.

Independent checks: the published single-roll hand counts and the Yahtzee figure; an
exact-fraction reference written apart from the solver (tests/poker_reference.py); Monte
Carlo games of the solved players; invariants of every solved game.
"""

import inspect
import json
import math
import random
from collections import Counter
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from poker_reference import best_turn, hand_key, two_player_values

from thousand.analysis.poker_bots import OptimalPokerBot, play_game
from thousand.base.errors import RulesetError, StateError, TableError
from thousand.cli import main
from thousand.engine.poker import solve_turn, turn_shape
from thousand.play.poker import PokerGame
from thousand.rules import load_ruleset
from thousand.rules.poker import ROLLS
from thousand.solvers.poker import MAX_PLAYERS, solve_poker
from thousand.storage import find_table
from thousand.storage.poker import load_poker, poker_solution

ALL_ROLLS = list(product(range(1, 7), repeat=5))


@pytest.fixture
def runner() -> CliRunner:
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:  # click < 8.2
        return CliRunner(mix_stderr=False)
    return CliRunner()


def run(runner, *args, input=None):
    return runner.invoke(main, list(args), input=input, catch_exceptions=False)


@pytest.fixture(scope="module")
def poker():
    return load_ruleset("poker")


@pytest.fixture(scope="module")
def solved(poker, tmp_path_factory):
    return poker_solution(poker, 4, tmp_path_factory.mktemp("poker-tables"))


# --------------------------------------------------------------------------- hands


def test_single_roll_hand_counts_with_straights():
    """The standard poker-dice counts out of 6**5 = 7,776 (with straights, three of a kind)."""
    rs = load_ruleset("poker", ["straights=true"])
    counts = Counter(rs.hand(d).name for d in ALL_ROLLS)
    assert counts == {
        "five of a kind": 6,
        "four of a kind": 150,
        "full house": 300,
        "straight": 240,
        "three of a kind": 1200,
        "two pairs": 1800,
        "pair": 3600,
        "nothing": 480,
    }


def test_without_straights_they_are_nothing_and_without_threes_a_pair(poker):
    counts = Counter(poker.hand(d).name for d in ALL_ROLLS)
    assert counts["nothing"] == 480 + 240 and "straight" not in counts
    rs = load_ruleset("poker", ["three_of_a_kind=false"])
    assert rs.hand((5, 5, 5, 2, 1)).name == "pair" and rs.hand((5, 5, 5, 2, 1)).key == (10,)


@pytest.mark.parametrize("overrides", [(), ("straights=true",), ("three_of_a_kind=false",)])
def test_strength_order_is_the_reference_order(overrides):
    """The solver's strengths order the 252 rolls exactly as the reference's (category, points)."""
    rs = load_ruleset("poker", overrides)
    three = "three_of_a_kind=false" not in overrides
    straights = "straights=true" in overrides
    ref = {d: hand_key(d, three, straights) for d in ROLLS}
    mine = {d: rs.hands.strength(d) for d in ROLLS}
    for a in ROLLS:
        for b in ROLLS[::7]:
            assert (ref[a] > ref[b]) == (mine[a] > mine[b]) and (ref[a] == ref[b]) == (mine[a] == mine[b])


def test_tie_breaks_as_the_source_says(poker):
    """ "Four queens beat four tens"; under hand_sum the other dice do not count, under ranked
    they break the tie (high to low)."""
    s = poker.hands.strength
    assert s((6, 6, 6, 6, 1)) > s((5, 5, 5, 5, 6))
    assert s((6, 6, 6, 6, 1)) == s((6, 6, 6, 6, 5))
    assert s((6, 6, 5, 5, 1)) == s((6, 6, 5, 5, 4))  # two pairs: 22 points either way
    assert s((2, 2, 2, 6, 6)) > s((3, 3, 3, 4, 4))  # full house by the sum of all five: 18 > 17
    assert s((1, 2, 3, 4, 6)) > s((1, 2, 3, 4, 5))  # nothing by the sum
    ranked = load_ruleset("poker", ["tie_break=ranked"]).hands.strength
    assert ranked((6, 6, 6, 6, 5)) > ranked((6, 6, 6, 6, 1))
    assert ranked((3, 3, 3, 4, 4)) > ranked((2, 2, 2, 6, 6))  # the triple's face first


def test_named_hands(poker):
    assert poker.parse_hand("four:6").dice.count(6) == 4 and poker.parse_hand("four:6").name == "four of a kind"
    assert poker.hands.strength(poker.parse_hand("two-pairs:5,6").dice) == poker.hands.strength((5, 5, 6, 6, 1))
    assert poker.parse_hand("full:2,6").faces == (2, 6)
    for bad in ("two-pairs:6,6", "five:7", "four:6,5", "flush:6", "nothing:1", "6,6,6,6"):
        with pytest.raises(StateError):
            poker.parse_hand(bad)
    with pytest.raises(StateError, match="not one hand"):
        load_ruleset("poker", ["tie_break=ranked"]).parse_hand("four:6")


# --------------------------------------------------------------------------- ruleset


def test_ruleset_round_trip_and_hash(poker, tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(poker.to_toml(), encoding="utf-8")
    assert load_ruleset(str(p)) == poker and load_ruleset(str(p)).hash == poker.hash
    hashes = {
        load_ruleset("poker", o).hash
        for o in (
            [],
            ["lock_kept=false"],
            ["straights=true"],
            ["tie_break=ranked"],
            ["three_of_a_kind=false"],
            ["rolls=2"],
        )
    }
    assert len(hashes) == 6
    assert load_ruleset("poker", ["name=other", "summary=x"]).hash == poker.hash


@pytest.mark.parametrize(
    "override, message",
    [
        ("dice=6", "5 dice"),
        ("faces=8", "6-faced"),
        ("rolls=0", "rolls must be"),
        ("rolls=7", "rolls must be"),
        ("tie_break=best", "tie_break must be one of"),
        ("lock_kept=1", "lock_kept must be bool"),
        ("jokers=true", "unknown key 'jokers'"),
    ],
)
def test_bad_poker_rulesets(override, message):
    with pytest.raises(RulesetError, match=message):
        load_ruleset("poker", [override])


# --------------------------------------------------------------------------- the turn


def five_of_a_kind(d):
    return 1 if len(set(d)) == 1 else 0


def test_yahtzee_five_of_a_kind_in_three_free_rolls():
    """Playing for five of a kind with free re-rolls: 2,783,176 / 6**10 (the Yahtzee figure)."""
    target = Fraction(2783176, 6**10)
    ref, _ = best_turn(five_of_a_kind, 3, lock=False)
    assert ref == target
    u = np.array([five_of_a_kind(d) for d in ROLLS], dtype=float)
    assert abs(solve_turn(turn_shape(False), 3, u).value[0] - float(target)) < 1e-15


def test_five_of_a_kind_under_the_lock_rule_is_lower_and_exact():
    free, _ = best_turn(five_of_a_kind, 3, lock=False)
    locked, _ = best_turn(five_of_a_kind, 3, lock=True)
    assert locked < free
    u = np.array([five_of_a_kind(d) for d in ROLLS], dtype=float)
    assert abs(solve_turn(turn_shape(True), 3, u).value[0] - float(locked)) < 1e-15
    # the solitaire objective of the CLI says the same
    r = CliRunner().invoke(main, ["solve", "poker", "--reach", "five:1", "--json"])
    assert r.exit_code == 0 and abs(json.loads(r.stdout)["reach_probability"] - float(locked)) < 1e-12


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=len(ROLLS), max_size=len(ROLLS)), st.integers(1, 3), st.booleans())
def test_turn_value_is_the_reference_value(weights, rolls, lock):
    """Any utility of the final dice: the solver's turn value is the exact reference value,
    and its final-hand distribution sums to 1 and gives that value back."""
    u = dict(zip(ROLLS, weights))
    ref, _ = best_turn(lambda d: Fraction(u[d], 9), rolls, lock)
    U = np.array([u[d] / 9 for d in ROLLS])
    sol = solve_turn(turn_shape(lock), rolls, U)
    f = sol.final_distribution()[0]
    assert abs(sol.value[0] - float(ref)) < 1e-12
    assert abs(f.sum() - 1) < 1e-12 and abs(f @ U - sol.value[0]) < 1e-12 and f.min() >= 0


# --------------------------------------------------------------------------- the game


def test_without_decisions_every_seat_is_equal():
    """One throw each: no decision, so by symmetry (the replay included) every seat has 1/N."""
    sol = solve_poker(load_ruleset("poker", ["rolls=1"]), 5)
    for n in range(2, 6):
        assert np.allclose(sol.seat_values[n], 1 / n, atol=1e-14)


@pytest.mark.slow
def test_two_players_two_throws_exact_fractions():
    """The reference solves the two-player game of two throws in exact fractions (the replay
    as a linear equation); the solver agrees to 1e-12."""
    ref = two_player_values(2)
    sol = solve_poker(load_ruleset("poker", ["rolls=2"]), 2)
    assert sum(ref) == 1
    assert np.allclose(sol.seat_values[2], [float(x) for x in ref], atol=1e-12, rtol=0)


def test_invariants_of_the_solved_game(poker):
    sol = solve_poker(poker, 6)
    for n in range(1, 7):
        v = sol.seat_values[n]
        assert abs(v.sum() - 1) < 1e-12 and v.min() > 0 and v.max() <= 1
        if n > 1:
            assert sol.residual[n] <= 1e-15 and 0 < sol.replay[n] < 0.05
            assert np.all(np.diff(v) > 0)  # later seats see more: each is better placed
    for t in sol.T.values():
        assert t.min() >= -1e-15 and t.max() <= 1 + 1e-15
    assert sol.seconds < 60


def test_lock_rule_and_tie_break_change_the_game(poker):
    base = solve_poker(poker, 3).seat_values[3]
    free = solve_poker(load_ruleset("poker", ["lock_kept=false"]), 3).seat_values[3]
    ranked = solve_poker(load_ruleset("poker", ["tie_break=ranked"]), 3).seat_values[3]
    assert not np.allclose(base, free, atol=1e-4) and not np.allclose(base, ranked, atol=1e-4)


@pytest.mark.slow
def test_simulated_optimal_players_match_the_solved_values(solved, poker):
    """Games of three solved players, the dice thrown at random: each seat's share of wins is
    within its 99.9% interval of the solved value."""
    rng = random.Random(2026)
    bots = [OptimalPokerBot(solved) for _ in range(3)]
    n = 12000
    wins = Counter(play_game(poker, bots, rng) for _ in range(n))
    for seat, v in enumerate(solved.seat_values[3]):
        p = wins[seat] / n
        assert abs(p - v) < 3.3 * math.sqrt(v * (1 - v) / n), (seat, p, v)


def test_advice_values_are_the_turn_and_the_best_is_first(solved, poker):
    adv = solved.advise((6, 6, 3, 2, 1), after=2)
    vals = [o.value for o in adv.options]
    assert adv.best.value == max(vals) and adv.best.reroll == (1, 2, 3)
    assert len(adv.options) == 24  # stop and the 23 distinct re-rolls of 1,2,3,6,6
    # the first player's value before the throw is the seat value
    t = solved.turn(None, 0, 3)
    assert abs(t.value[0] - solved.seat_values[3][0]) < 1e-12
    # at the last throw there is no choice; a beaten hand has lost
    last = solved.advise((1, 2, 3, 4, 6), throw=3, rerollable=(4,), to_beat="6,6,5,5,1", after=1)
    assert [o.label for o in last.options] == ["stop"] and last.options[0].value == 0 and "lost" in last.note


def test_situation_checks(solved):
    for kw, msg in [
        ({"after": 0}, "at least one player after"),
        ({"holders": 2, "after": 1}, "need the hand"),
        ({"to_beat": "6,6,6,6,6", "holders": 0}, "at least one player"),
        ({"to_beat": "6,6,6,6,6", "after": 8}, "up to 8"),
    ]:
        with pytest.raises(StateError, match=msg):
            solved.advise((6, 6, 3, 2, 1), **kw)
    for dice, throw, free, msg in [
        ((6, 6, 3, 2, 1), 2, None, "lock rule"),
        ((6, 6, 3, 2, 1), 2, (4,), "not among"),
        ((6, 6, 3, 2, 1), 1, (6,), "at throw 1"),
        ((6, 6, 3, 2, 1), 4, None, "throws 1 to 3"),
        ((6, 6, 3, 2), 1, None, "4 dice"),
        ((6, 6, 3, 2, 0), 1, None, "face 0"),
    ]:
        with pytest.raises(StateError, match=msg):
            solved.advise(dice, throw=throw, rerollable=free, after=1)


# --------------------------------------------------------------------------- tables


def test_table_is_stored_checked_and_extended(tmp_path):
    poker = load_ruleset("poker", ["rolls=2"])  # not a shipped table
    a = poker_solution(poker, 2, tmp_path)
    table = find_table(poker, "poker", tmp_path)
    assert table.meta["players"] == 2 and load_poker(table, poker).players == 2
    b = poker_solution(poker, 2, tmp_path)  # loaded, the same numbers
    assert np.array_equal(a.seat_values[2], b.seat_values[2])
    c = poker_solution(poker, 3, tmp_path)  # more players than stored: solved again, stored
    assert c.players == 3 and find_table(poker, "poker", tmp_path).meta["players"] == 3
    values = table.path / "values.npy"
    data = bytearray(values.read_bytes())
    data[-8:] = np.float64(0.5).tobytes()
    values.write_bytes(bytes(data))
    with pytest.raises(TableError, match="not the array that was solved"):
        poker_solution(poker, 2, tmp_path)


def test_shipped_poker_table_answers_without_solving(poker, monkeypatch):
    import thousand.storage.poker as g

    monkeypatch.setattr(g, "solve_poker", lambda *a, **k: pytest.fail("solved instead of loading"))
    sol = poker_solution(poker, MAX_PLAYERS)
    assert sol.players == MAX_PLAYERS


# --------------------------------------------------------------------------- the commands


def test_cli_advise_and_solve(runner):
    r = run(runner, "advise", "poker", "--roll", "6,6,3,2,1", "--after", "1", "--json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["best"] == "re-roll 1,2,3" and d["options"][0]["win_probability"] == max(
        o["win_probability"] for o in d["options"]
    )
    r = run(
        runner,
        "advise",
        "poker",
        "--roll",
        "6,6,3,2,1",
        "--roll-number",
        "2",
        "--rerollable",
        "3,2,1",
        "--to-beat",
        "full:6,2",
    )
    assert r.exit_code == 0 and "only 1,2,3" in r.stdout and "chance to win" in r.stdout
    r = run(runner, "solve", "poker", "--players", "3", "--json")
    d = json.loads(r.stdout)
    assert r.exit_code == 0 and abs(sum(d["seat_values"]) - 1) < 1e-12 and len(d["seat_values"]) == 3
    r = run(runner, "advise", "poker", "--help")
    assert r.exit_code == 0 and "--rerollable" in r.stdout and "--me" not in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--roll", "6,6,3,2,1,1", "--after", "1"], "6 dice given"),
        (["--roll", "6,6,3,2,0", "--after", "1"], "face 0"),
        (["--roll", "6,6,3,2,1", "--throw", "2", "--rerollable", "6,6,6", "--after", "1"], "not among"),
        (["--roll", "6,6,3,2,1", "--to-beat", "two-pairs:6,6"], "no hand"),
        (["--roll", "6,6,3,2,1", "--to-beat", "6,6,6,6,7"], "face 7"),
        (["--roll", "6,6,3,2,1"], "--after N"),
        (["--roll", "6,6,3,2,1", "--to-beat", "four:6", "--holders", "4", "--after", "4"], "9 players"),
        (["--roll", "x", "--after", "1"], "faces 1 to 6"),
    ],
)
def test_cli_bad_poker_input_is_one_line_and_exit_2(runner, args, message):
    r = run(runner, "advise", "poker", *args)
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_cli_other_commands_refuse_poker(runner):
    r = run(runner, "chart", "poker", "--json")
    assert r.exit_code == 2 and "poker-dice ruleset" in r.stderr
    r = run(runner, "advise", "classic", "--me", "0", "--roll", "1,5,3,3,4")
    assert r.exit_code == 0 and "keep" in r.stdout  # the 1000 advise is untouched


def test_cli_play_a_game_with_a_tie_replay_undo_and_resume(runner, tmp_path):
    save = tmp_path / "g.json"
    script = (
        "\n".join(
            [
                "roll 6,6,3,2,1",
                "?",
                "reroll 1,2,3",
                "roll 5,5,4",
                "stop",
                "roll 6,6,5,5,4",
                "stop",  # B ties A: 6,6,5,5 (22 points)
                "roll 1,2,3,4,6",
                "reroll 1",
                "roll 1",
                "undo",
                "roll 2",  # C: 2,2,3,4,6
                "reroll 2,6",  # refused: 6 was not thrown again
                "reroll 2",
                "roll 1",  # the last throw: nothing, C is out
                f"save {save}",
            ]
        )
        + "\n"
    )
    r = run(runner, "play", "poker", "--players", "A", "B", "C", input=script)
    assert r.exit_code == 0, r.stderr
    assert "advice (exact)" in r.stdout and "refused: only the dice thrown at the last throw" in r.stdout
    assert "A and B tie with two pairs" in r.stdout and "replay 1 (tied players)" in r.stdout and "out: C" in r.stdout
    data = json.loads(save.read_text())
    assert data["rules"] == "poker" and data["players"] == ["A", "B", "C"]
    # resume: the replay between A and B goes on
    r = run(runner, "play", "--resume", str(save), input="roll 6,6,6,6,6\nstop\nroll 1,1,1,1,2\nstop\n")
    assert r.exit_code == 0 and "GAME OVER: A wins" in r.stdout, r.stdout


def test_play_refuses_what_the_rules_do_not_allow(poker):
    g = PokerGame(poker, ["A", "B"])
    g.submit("roll 6,6,3,2,1")
    g.submit("reroll 1,2,3")
    g.submit("roll 6,5,4")
    before = list(g.log)
    for bad, why in [
        ("reroll 6,6", "lock rule"),
        ("reroll 2", "not among"),
        ("roll 1,2", "pick up first"),
        ("roll 1,2,3,4,5,6", "6 dice"),
    ]:
        with pytest.raises(StateError, match=why):
            g.submit(bad)
        assert g.log == before
    g.submit("reroll 4,5")
    with pytest.raises(StateError, match="2 dice were picked up"):
        g.submit("roll 1")


# --------------------------------------------------------------------------- bots


def test_evaluate_optimal_loses_nothing_and_stop_matches_its_games(solved, poker):
    from thousand.analysis.poker_evaluate import evaluate_poker

    r = evaluate_poker(poker, solved, "optimal", 2, 0, 1, True, 10**6, 3, 2.0)["json"]
    assert r["method"] == "exact" and all(abs(s["loss"]) < 1e-12 for s in r["seats"]) and not r["worst"]
    r = evaluate_poker(poker, solved, "stop", 2, 3000, 5, True, 10**6, 3, 2.0)["json"]
    for s in r["seats"]:
        lo, hi = s["monte_carlo"]["interval"]
        half = (hi - lo) / 2 * 3.3 / 1.96  # a 99.9% interval
        assert abs(s["monte_carlo"]["win_probability"] - s["exact"]) < half
        assert s["loss"] > 0.3
    assert r["worst"][0]["reroll"] == [] and r["worst"][0]["loss"] > 0.3


def test_exact_bot_value_is_a_direct_enumeration_for_the_stop_bot(solved, poker):
    """A bot that keeps its first throw: its chance in seat 1 of 2 is
    Σ_d P(d) · [P(opponent ends below d) + P(level) · W(2, 0)], with W its own replay value."""
    from thousand.analysis.poker_evaluate import evaluate_poker

    r = evaluate_poker(poker, solved, "stop", 2, 0, 1, True, 10**6, 1, 2.0)["json"]
    p = Counter(ALL_ROLLS and [tuple(sorted(d)) for d in ALL_ROLLS])
    s = poker.hands.strength
    lo = eq = 0.0
    for d, c in p.items():
        t = solved.turn(s(d), 1, 1)
        f = np.zeros(solved.H)
        np.add.at(f, solved.strength_of_roll, t.final_distribution()[0])
        lo += c / 7776 * f[: s(d)].sum()
        eq += c / 7776 * f[s(d)]
    assert abs(r["seats"][0]["exact"] - lo / (1 - eq)) < 1e-12


def test_user_bots_faults_are_counted(solved, poker, tmp_path):
    from thousand.analysis.poker_evaluate import evaluate_poker

    bot = tmp_path / "b.py"
    bot.write_text(
        "def decide(state):\n"
        "    if state.throw == 1 and state.dice[0] == 1:\n        return 'garbage'\n"
        "    if state.throw == 1 and state.dice[0] == 2:\n        return [7]\n"
        "    return {'keep': list(state.dice)}\n"
    )
    r = evaluate_poker(poker, solved, f"{bot}:decide", 2, 20, 1, False, 0, 3, 2.0)["json"]
    assert r["faults"]["counts"].get("malformed") and r["faults"]["counts"].get("illegal")
    with pytest.raises(Exception, match="a bot of the 1000 family"):
        evaluate_poker(poker, solved, "hold:20", 2, 0, 1, False, 0, 3, 2.0)


def test_cli_evaluate(runner):
    r = run(runner, "evaluate", "poker", "--bot", "greedy", "--games", "200", "--json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["method"] == "exact" and len(d["seats"]) == 2 and d["mean_loss"] > 0.01
    r = run(runner, "evaluate", "poker", "--bot", "greedy", "--players", "9")
    assert r.exit_code == 2 and "--players" in r.stderr


def test_json_lines_bot_and_a_hanging_bot(runner, tmp_path):
    bot = tmp_path / "keep.py"
    bot.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n"
        "        assert m['ruleset']['game'] == 'poker' and m['objective'] == 'poker'\n"
        "        print(json.dumps({'type': 'ready', 'name': 'keeper'}), flush=True)\n"
        "    elif m['type'] == 'decide':\n"
        "        s = m['state']\n"
        "        print(json.dumps({'id': m['id'], 'reroll': []}), flush=True)\n"
        "    else:\n"
        "        break\n"
    )
    r = run(
        runner, "evaluate", "poker", "--bot", f"exec:{__import__('sys').executable} {bot}", "--games", "50", "--json"
    )
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    stop = run(runner, "evaluate", "poker", "--bot", "stop", "--games", "0", "--json")
    assert [s["exact"] for s in d["seats"]] == [s["exact"] for s in json.loads(stop.stdout)["seats"]]
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ndef decide(state):\n    time.sleep(5)\n")
    r = run(runner, "evaluate", "poker", "--bot", f"{slow}:decide", "--timeout", "0.05", "--games", "5")
    assert r.exit_code == 2 and "did not answer within" in r.stderr and len(r.stderr.strip().splitlines()) == 1
