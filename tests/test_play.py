"""The scorekeeper: the engine on top of Moves, and the `thousand play` command driven by stdin."""

import json

import pytest
from click.testing import CliRunner

from thousand.cli import main
from thousand.engine.player import Moves, PlayerState
from thousand.play.game import Game, Refused
from thousand.rules import load_ruleset


def game(spec, *overrides, players=("A", "B")):
    return Game(load_ruleset(spec, overrides), list(players), spec, overrides)


def play(g, *entries):
    for e in entries:
        g.submit(e)
    return g


# --------------------------------------------------------------------------- engine


def test_pig_turns_bank_bust_and_win():
    g = game("pig", "goal=20")
    play(g, "roll 6", "roll 5", "stop")
    assert g.states[0].score == 11 and g.current == 1
    play(g, "roll 4", "roll 1")  # bust: B's 4 is lost
    assert g.states[1].score == 0 and g.current == 0
    play(g, "roll 6", "roll 3")
    assert g.turn.total == 9
    play(g, "stop")
    assert g.over and g.winners == [0]
    with pytest.raises(Refused):
        g.submit("roll 3")


def test_refusals_leave_the_game_unchanged():
    g = game("classic")
    play(g, "roll 1,5,3,3,4")  # 15, three dice left
    before = (g.turn.total, g.turn.dice, list(g.log))
    for bad, why in [("stop", "not opened"), ("roll 1,1", "3 dice"), ("roll 7,1,1", "face 7"), ("keep 1", "no roll")]:
        with pytest.raises(Refused, match=why):
            g.submit(bad)
        assert (g.turn.total, g.turn.dice, list(g.log)) == before


def test_hot_dice_must_roll_is_compulsory():
    g = game("classic")
    play(g, "roll 2,2,2,1,5")  # 20 + 15 = 35, all five set aside
    assert g.turn.total == 35 and g.turn.dice == 5 and g.turn.compulsory
    with pytest.raises(Refused, match="compulsory"):
        g.submit("stop")
    play(g, "roll 1,1,1,3,4")  # +100: 135, two dice
    assert not g.turn.compulsory
    play(g, "stop")
    assert g.states[0] == PlayerState(135)


def test_pits_overtaking_and_samosval():
    rs = load_ruleset("classic")
    g = game("classic")
    # A: 1,1,1,1,2 -> 200, one die; stop -> 200, in the pit from 200 to 300
    play(g, "roll 1,1,1,1,2", "stop")
    assert g.states[0].score == 200 and "pit from 200 to 300" in g.status(0)
    # B opens with 5,5,5 + 1 (60) ... 5,5,5,1,3 -> 60
    play(g, "roll 5,5,5,1,3", "stop")
    assert g.states[1].score == 60
    # A in the pit cannot bank below 300
    play(g, "roll 1,2,3,3,4")
    with pytest.raises(Refused, match="pit"):
        g.submit("stop")
    play(g, "roll 2,3,4,6")  # bust: pits are bolt-exempt in classic
    assert g.states[0] == PlayerState(200)
    # B jumps from 60 over A's 200 to 270 (into a pit, allowed): A is overtaken (-50) -> 150
    play(g, "roll 1,1,1,5,5", "roll 1,1,1,2,3", "stop")  # 110, hot dice, + 100
    assert g.states[1].score == 270
    assert g.states[0].score == 150 and "overtaken" in g.history[0][-1]
    # samosval: A at 150 banks 405 -> 555 -> 0, still opened
    g2 = Game(rs, ["A", "B"], "classic")
    g2.states[0] = PlayerState(150)
    g2._apply("roll 4,4,4,4,4")  # 400, hot dice
    g2._apply("roll 5,2,2,3,4")  # +5: 405, four dice
    g2._apply("stop")
    assert g2.states[0] == PlayerState(0, opened=True)


def test_barrel_attempts_fall_and_push_off():
    rs = load_ruleset("classic")
    moves = Moves(rs)
    g = Game(rs, ["A", "B"], "classic")
    g.states = [PlayerState(800), PlayerState(880)]
    g._apply("roll 5,5,5,5,1")  # 110, hot dice (compulsory)
    g._apply("roll 1,2,3,3,4")  # +10: 120, four dice
    g._apply("stop")  # 920 -> capped at 880: climbs; B pushed off
    assert g.states[0].score == 880 and "on the barrel" in g.status(0)
    assert g.states[1] == moves.affect_opponent(PlayerState(880), 800, 880, True)
    assert g.states[1].score == 780 and "pushed off" in g.history[1][-1]
    # B plays; then A fails three times on the barrel and falls
    for _ in range(3):
        if g.current == 1:
            g._apply("roll 2,3,4,6,6")  # B busts
        g._apply("roll 1,2,3,4,6")  # A: 10, cannot bank below 1000
        with pytest.raises(Refused, match="barrel"):
            g._stop()
        g._apply("roll 2,3,4,6")  # bust
        if g.current == 1:
            g._apply("roll 2,3,4,6,6")
    assert g.states[0].score == 780 and g.states[0].falls == 1


def test_keep_any_choice_and_confirm():
    g = game("admission")
    play(g, "roll 2,5,3,3,5")
    assert g.turn.roll is not None  # a choice: 5 or 5,5
    with pytest.raises(Refused, match="legal"):
        g.submit("keep 2,5")
    with pytest.raises(Refused, match="set dice aside"):
        g.submit("roll 1,1,1")
    play(g, "keep 5")
    assert g.turn.total == 5 and g.turn.dice == 4
    # hot dice under confirm: the roll of all dice is compulsory and, if it scores, banks at once
    g = game("admission")
    play(g, "roll 1,1,1,5,5", "keep 1,1,1,5,5")
    assert g.turn.total == 110 and g.turn.compulsory and g.turn.confirming
    with pytest.raises(Refused, match="compulsory"):
        g.submit("stop")
    play(g, "roll 5,2,3,3,6")
    assert g.states[0].score == 115 and g.current == 1


def test_instant_win_and_equal_turns():
    g = game("six-dice", players=("A", "B", "C"))
    play(g, "roll 1,1,1,1,1,1")
    assert g.over and g.winners == [0]
    g = game("six-dice", "goal=200", 'barrel={kind="none"}', "pits=[]", "pit_attempts=0", players=("A", "B", "C"))
    play(g, "roll 5,5,5,5,5,2", "keep 5,5,5,5,5", "stop")  # 500 >= 200: A is done, the round goes on
    assert not g.over and g.finished == {0: 500} and g.current == 1
    play(g, "roll 5,5,5,5,5,2", "keep 5,5,5,5,5", "stop")  # B ties
    play(g, "roll 2,2,3,3,4,6")  # C busts: the round is complete
    assert g.over and g.winners == [0, 1] and "shared" in g.messages[-1]


def test_a_winning_bank_leaves_the_last_turns_as_they_stand():
    # docs/rules.md section 7: a bank that meets the win condition is settled at the win
    # check; it neither overtakes nor pushes off the players still to play their last turns
    g = game("pig", "goal=20", "equal_turns=true", "overtake=5")
    play(g, "roll 1", "roll 6", "roll 6", "roll 2", "stop")  # A busts, B 14
    play(g, "roll 6", "roll 6", "roll 6", "roll 4", "stop")  # A passes B with 22 >= 20
    assert g.finished == {0: 22} and g.states[1].score == 14 and not g.over
    # a bank short of the goal that passes B overtakes it
    g = game("pig", "goal=20", "equal_turns=true", "overtake=5")
    play(g, "roll 1", "roll 6", "roll 6", "roll 2", "stop", "roll 6", "roll 6", "roll 4", "stop")
    assert g.states[0].score == 16 and g.states[1].score == 9


def test_undo_is_replay_and_save_resume(tmp_path):
    g = game("pig", "goal=30")
    play(g, "roll 6", "roll 5", "stop", "roll 4")
    snap = (list(g.states), g.current, g.turn.total)
    g.submit("roll 1")
    g.undo()
    assert (list(g.states), g.current, g.turn.total) == snap
    g2 = Game.from_json(json.loads(json.dumps(g.to_json())))
    assert g2.log == g.log and g2.states == g.states and g2.turn.total == g.turn.total
    bad = dict(g.to_json(), log=g.log + ["stop", "stop"])
    with pytest.raises(Exception, match="does not replay"):
        Game.from_json(bad)


def test_seeded_rolls_are_reproducible():
    a, b = game("classic"), game("classic")
    a.seed = b.seed = 7
    assert a.roll_dice() == b.roll_dice()


# --------------------------------------------------------------------------- command


def run(args, text):
    return CliRunner().invoke(main, args, input=text)


def test_play_command_script(tmp_path):
    save = tmp_path / "g.json"
    r = run(
        ["play", "pig", "--set", "goal=30", "--players", "Ann", "Bob"],
        f"roll 6\nroll 5\nstop\nroll 4\nstop\nbogus\nstop please\nundo\nsheet\nsave {save}\nquit\n",
    )
    assert r.exit_code == 0, r.output
    assert "Ann banks 11: 0 → 11" in r.output
    assert "Bob banks 4" in r.output
    assert "refused: unknown command 'bogus'" in r.output
    assert "undone: stop" in r.output
    assert "Traceback" not in r.output
    data = json.loads(save.read_text())
    assert data["log"] == ["roll 6", "roll 5", "stop", "roll 4"]
    r2 = run(["play", "pig", "--set", "goal=30", "--resume", str(save)], "sheet\nroll 5\nstop\n")
    assert r2.exit_code == 0, r2.output
    assert "resumed" in r2.output and "Bob banks 9: 0 → 9" in r2.output
    r3 = run(["play", "pig", "--resume", str(save)], "")
    assert r3.exit_code == 2 and "other rules" in r3.output


def test_play_command_random_rolls_with_seed():
    import re

    out = [
        run(["play", "pig", "--players", "A", "B", "--seed", "3"], "roll\nroll\nroll\nsheet\n").output for _ in range(2)
    ]
    # the same seed plays the same game; each game autosaves to a file of its own
    same = [re.sub(r"\S+/thousand/games/\S+\.json", "SAVE", o) for o in out]
    assert same[0] == same[1] and "A rolls" in out[0] and out[0] != out[1]


def test_play_needs_two_players():
    r = run(["play", "pig", "--players", "Solo"], "")
    assert r.exit_code == 2 and "at least two players" in r.output


def test_play_advice_duel_and_race(tmp_path):
    tables = str(tmp_path / "tables")
    r = run(["play", "pig", "--set", "goal=20", "--players", "A", "B", "--tables", tables], "roll 6\n?\n")
    assert r.exit_code == 0, r.output
    assert "Exact: the best play against B, who also plays their best." in r.output and "% to win" in r.output
    r = run(
        ["play", "pig", "--set", "goal=20", "--players", "A", "B", "C", "--tables", tables],
        "roll 6\nroll 4\nstop\nhint\n",
    )
    assert "Exact: the best play against 2 players who all play their best." in r.output
    assert "fewest expected turns" not in r.output
    r = run(
        ["play", "pig", "--set", "goal=20", "--players", "A", "B", "C", "--tables", tables, "--advice", "race"],
        "hint\n",
    )
    assert "Estimate: the fewest expected turns to reach the goal alone" in r.output and "expected turns" in r.output
    r = run(["play", "pig", "--set", "goal=20", "--players", "A", "B", "--tables", tables, "--advice", "race"], "?\n")
    assert "fewest expected turns" in r.output and "best play against" not in r.output


def test_play_advice_with_equal_turns(tmp_path):
    """Two players: the duel by seat while nobody has finished, then the exact last turn."""
    tables = str(tmp_path / "tables")
    base = ["play", "pig", "--set", "goal=20", "--set", "equal_turns=true", "--players", "A", "B", "--tables", tables]
    r = run(base, "roll 6\n?\n")
    assert r.exit_code == 0, r.output
    assert "Exact: the best play against B, who also plays their best (equal turns)." in r.output
    assert "A (first seat)" in r.output
    # A banks 6+6+6+4 = 22 (over the goal); B's last turn from 0 after 5,6,6 = 17: B must beat 22
    r = run(base, "roll 6\nroll 6\nroll 6\nroll 4\nstop\nroll 5\nroll 6\nroll 6\n?\n")
    assert r.exit_code == 0, r.output
    assert "Exact: your last turn, to beat 22; a tie counts half." in r.output
    # with 17 of 22 to beat from 0: stopping loses (17 < 20), and rolling is worth L = g(5) of
    # tests/test_equal_turns.py::test_last_turn_by_hand's recursion
    from fractions import Fraction

    g = {-k: Fraction(1) for k in range(1, 7)}
    for rem in range(0, 6):
        g[rem] = sum(g[rem - f] for f in range(2, 7)) / 6
    assert f"roll 1  chance to win {float(g[5]):.6f}" in r.output
    # three players: the exact equilibrium by seat, then the round's last turns
    base3 = [
        "play",
        "pig",
        "--set",
        "goal=6",
        "--set",
        "equal_turns=true",
        "--players",
        "A",
        "B",
        "C",
        "--tables",
        tables,
    ]
    r = run(base3, "roll 4\n?\n")
    assert "Exact: the best play against 2 players who all play their best." in r.output
    # A banks 4+5 = 9; B, in its last turn with C still to play, after rolling 6 and 2
    r = run(base3, "roll 4\nroll 5\nstop\nroll 6\nroll 2\n?\n")
    assert r.exit_code == 0, r.output
    assert "Exact: your last turn of the round, to beat 9 (held by 1), 1 still to play after you" in r.output


def test_samosval_mid_turn_ends_the_turn():
    # a set-aside that makes the score a dump score ends the turn at once (dump_mid_turn)
    g = game(
        "plain",
        "dice=2",
        "goal=30",
        "dump=[15]",
        "dump_mid_turn=true",
        'scoring={singles={"1"=10,"5"=5},kinds={"2"={"1"=25,"5"=15}}}',
    )
    play(g, "roll 1,5")
    assert g.current == 1 and g.states[0].score == 0 and "samosval" in g.history[0][-1]


def test_resume_a_save_with_bad_fields_is_one_line(tmp_path):
    g = play(game("pig", "goal=30"), "roll 6", "stop")
    good = g.to_json()
    for key, bad in (("players", [1, 2]), ("players", "AB"), ("log", [5]), ("rules", 5), ("seed", "x")):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps({**good, key: bad}))
        res = CliRunner().invoke(main, ["play", "pig", "--set", "goal=30", "--resume", str(path)], input="")
        assert res.exit_code == 2 and "bad field" in res.output and "Traceback" not in res.output, (key, res.output)


def test_a_save_of_a_ruleset_file_opens_where_the_file_is_not(tmp_path):
    """A save holds its rules in full: the game of a TOML file of one's own resumes and is
    reviewed after the file is gone (another machine), with the rules it was played by."""
    rules = tmp_path / "short-pig.toml"
    r = CliRunner().invoke(main, ["rules", "show", "pig", "--set", "goal=40"])
    rules.write_text(r.output)
    save = tmp_path / "game.json"
    r = CliRunner().invoke(
        main,
        ["play", str(rules), "--players", "A", "B"],
        input=f"roll 6\nstop\nsave {save}\n",
        env={"XDG_STATE_HOME": str(tmp_path / "st")},
    )
    assert r.exit_code == 0, r.output
    rules.unlink()
    data = json.loads(save.read_text())
    assert data["ruleset"]["goal"] == 40 and data["rules"] == str(rules)
    r = CliRunner().invoke(main, ["play", "--resume", str(save)], input="roll 5\nstop\n")
    assert r.exit_code == 0 and "resumed" in r.output, r.output
    g = Game.from_json(json.loads(save.read_text()))
    assert g.rs.goal == 40 and [s.score for s in g.states][:2] == [6, 5]
    r = CliRunner().invoke(main, ["review", str(save), "--json", "--tables", str(tmp_path / "tables")])
    assert r.exit_code == 0, r.output
    # a save whose stored rules were edited no longer matches its hash: refused in one line
    data = json.loads(save.read_text())
    data["ruleset"]["goal"] = 50
    save.write_text(json.dumps(data))
    r = CliRunner().invoke(main, ["play", "--resume", str(save)], input="")
    assert r.exit_code == 2 and "changed since the game was saved" in r.stderr
