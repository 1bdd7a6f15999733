"""thousand review: every decision of a saved game, valued against the table it comes from."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import thousand
from thousand.base.errors import StateError
from thousand.cli import main
from thousand.engine.player import PlayerState
from thousand.play.game import Advisors, Game
from thousand.play.review import ACCURATE, load_game, review_game
from thousand.play.session import save_game
from thousand.rules import load_ruleset

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "classic-game.json"


def pig_game(log, goal=30, names=("A", "B")):
    rs = load_ruleset("pig", (f"goal={goal}",))
    g = Game(rs, list(names), "pig", (f"goal={goal}",))
    for e in log:
        g.submit(e)
    return rs, g


def test_a_stop_is_valued_by_the_duel_table(tmp_path):
    """A banks 9 and B 3: each stop is worth 1 - P(opponent to move wins) read straight off the
    solved duel table (not through the advisor's turn), and what it gave up is the best
    option's value less that."""
    rs, g = pig_game(["roll 4", "roll 5", "stop", "roll 3", "stop"])
    sol = thousand.solve(rs, "duel", tables=str(tmp_path))
    rv = review_game(g, tables_dir=str(tmp_path))
    stops = [d for d in rv.decisions if d.chosen == "stop"]
    assert [d.player for d in stops] == [0, 1]
    a, b = stops
    assert abs(a.chosen_value - (1 - sol.value(PlayerState(0), PlayerState(9)))) < 1e-9
    assert abs(b.chosen_value - (1 - sol.value(PlayerState(9), PlayerState(3)))) < 1e-9
    for d in rv.decisions:
        assert d.exact and d.best_value >= d.chosen_value - 1e-12
        assert abs(d.lost - max(0.0, d.best_value - d.chosen_value)) < 1e-15
    # the first decision (roll on at 4) and the two stops are every decision there was
    assert [d.entry for d in rv.decisions] == [1, 2, 4]


def test_a_player_who_follows_the_advice_gives_up_nothing_and_one_who_never_stops_does(tmp_path):
    """A takes the duel advice at every decision; B never stops while the game goes on.
    The review finds A accurate everywhere and B's losses exactly where B rolled on
    against the advice."""
    rs = load_ruleset("pig", ("goal=30",))
    adv = Advisors(rs, "duel", str(tmp_path))

    def play(seed):
        g, against = Game(rs, ["A", "B"], "pig", ("goal=30",), seed=seed), []
        while not g.over and len(g.log) < 400:
            tr = g.turn
            verb = "roll"
            if tr.roll is None and g.engine.can_stop(tr.state):
                best = adv.advice(g)[0][1].best.action
                if g.current == 0 and best == "stop":
                    verb = "stop"
                elif g.current == 1 and best == "stop":
                    against.append(len(g.log))
            g.submit("stop" if verb == "stop" else "roll " + str(g.roll_dice()[0]))
        return g, against

    # the first seed whose game gives B a turn in which stopping was the advice
    g, rolled_against = next((g, a) for g, a in map(play, range(1, 100)) if a)
    rv = review_game(g, tables_dir=str(tmp_path))
    a, b = rv.summary
    assert a.decisions > 0 and a.accurate == a.decisions and a.lost < 1e-12
    assert b.decisions > 0 and rolled_against
    assert {d.entry for d in rv.decisions if d.player == 1 and d.lost > 1e-12} == set(rolled_against)
    assert abs(b.lost - sum(d.lost for d in rv.decisions if d.player == 1)) < 1e-12
    assert b.accurate == sum(1 for d in rv.decisions if d.player == 1 and d.lost <= ACCURATE["win_probability"])
    assert [d.lost for d in b.worst] == sorted((d.lost for d in rv.decisions if d.player == 1), reverse=True)[:3]


def test_the_turn_objective_values_expected_points(tmp_path):
    """With --objective turn a stop at t is worth t points, and rolling on from the start of
    a turn of Pig's is worth the best expected score of a turn less nothing."""
    rs, g = pig_game(["roll 4", "roll 6", "stop", "roll 2", "stop"], goal=100)
    rv = review_game(g, objective="turn")
    assert rv.value_name == "expected_points"
    stop_a = next(d for d in rv.decisions if d.chosen == "stop" and d.player == 0)
    assert stop_a.chosen_value == pytest.approx(10.0, abs=1e-9)
    # at 10 points rolling on is better in Pig (the optimum holds at 20 for the turn alone)
    assert stop_a.best == "roll 1" and stop_a.lost > 0


def test_three_players_say_how_the_values_were_found(tmp_path):
    rs, g = pig_game(["roll 5", "stop", "roll 6", "roll 2", "stop", "roll 1"], goal=12, names=("A", "B", "C"))
    rv = review_game(g, tables_dir=str(tmp_path))
    assert rv.decisions and all(d.method == rv.methods[0] for d in rv.decisions)
    assert "against 2 players who all play their best" in rv.methods[0] and rv.all_exact


def test_the_example_game_reviews_every_roll_or_stop_choice():
    """The example (a game of classic kept by the scorekeeper): a decision at every entry
    where stopping was allowed, counted here by replaying the log through the engine."""
    g = load_game(EXAMPLE)
    replay = Game(g.rs, list(g.names), g.spec, g.overrides, g.seed)
    where = []
    for k, e in enumerate(g.log):
        if replay.turn.roll is None and replay.engine.can_stop(replay.turn.state):
            where.append(k)
        replay.submit(e)
    rv = review_game(g)
    assert [d.entry for d in rv.decisions] == where
    assert rv.finished and rv.winners == [g.names[g.winners[0]]]
    assert all(0.0 <= d.chosen_value <= 1.0 and d.lost >= 0.0 for d in rv.decisions)


def test_review_cli_text_json_and_chart(tmp_path):
    r = CliRunner().invoke(main, ["review", str(EXAMPLE), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["players"] == ["Anna", "Boris"] and data["objective"] == "win" and data["exact"]
    assert {p["name"] for p in data["summary"]} == {"Anna", "Boris"}
    text = CliRunner().invoke(main, ["review", str(EXAMPLE)])
    assert text.exit_code == 0 and "accuracy" in text.stdout and "Boris won" in text.stdout
    pytest.importorskip("matplotlib")
    out = tmp_path / "review.png"
    r = CliRunner().invoke(main, ["review", str(EXAMPLE), "--chart", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "content, msg",
    [
        ("not json", "cannot read the saved game"),
        ('{"format": 9}', "is not a saved game"),
        ('{"format": 1, "rules": "pig", "overrides": [], "players": ["A", "B"], "log": ["roll 9"]}', "saved"),
    ],
)
def test_a_bad_game_file_is_one_line(tmp_path, content, msg):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    r = CliRunner().invoke(main, ["review", str(bad)])
    assert r.exit_code == 2 and msg in r.output and r.output.strip().count("\n") == 0, r.output


def test_a_chart_that_is_not_png_and_a_poker_game_are_refused(tmp_path):
    r = CliRunner().invoke(main, ["review", str(EXAMPLE), "--chart", str(tmp_path / "x.jpg")])
    assert r.exit_code == 2 and ".png" in r.output
    from thousand.play.poker import PokerGame

    poker = load_ruleset("poker")
    g = PokerGame(poker, ["A", "B"], "poker", ())
    path = tmp_path / "poker.json"
    save_game(g, path)
    with pytest.raises(StateError, match="poker"):
        review_game(load_game(path))


def test_values_in_expected_turns_are_judged_in_turns(tmp_path):
    """With the race table (--advice race) the values are expected turns, lower is better: what
    a decision gave up is its turns above the best, in turns, and accurate within 0.01."""
    from thousand.play.review import render

    rs, g = pig_game(["roll 2", "stop", "roll 6", "roll 6", "roll 6", "stop", "roll 3"], goal=40, names=("A", "B", "C"))
    rv = review_game(g, tables_dir=str(tmp_path), mode="race")
    assert rv.value_name == "expected_turns" and {d.value for d in rv.decisions} == {"expected_turns"}
    race = thousand.solve(rs, "race", tables=str(tmp_path))
    stop = next(d for d in rv.decisions if d.entry == 1)  # A banks 2: then A has 2 and a turn's start
    assert stop.chosen == "stop" and abs(stop.chosen_value - (1 + race.value(PlayerState(2)))) < 1e-9
    assert stop.lost == pytest.approx(stop.chosen_value - stop.best_value) and stop.lost > ACCURATE["expected_turns"]
    assert "(within 0.010 turns)" in render(rv) and " pp" not in render(rv)


def test_a_set_aside_among_several_is_a_decision(tmp_path):
    """Admission keeps any scoring dice: from 1,2,3,4,5 setting aside the 5 alone, where the
    straight scores 125, is a keep decision whose value is that option's, below the best."""
    rs = load_ruleset("admission")
    g = Game(rs, ["A", "B"], "admission")
    g.submit("roll 1,5,2,3,4")
    options = {tuple(d) for _p, d in g.turn.options}
    assert {(5,), (1, 2, 3, 4, 5)} <= options
    g.submit("keep 5")
    (d,) = review_game(g, tables_dir=str(tmp_path)).decisions
    assert d.kind == "keep" and d.chosen.startswith("keep 5 (+5)") and d.best.startswith("keep 1,2,3,4,5 (+125)")
    assert d.lost == pytest.approx(d.best_value - d.chosen_value) and d.lost > ACCURATE["win_probability"]
