"""Bad input as a new user gives it: every case is one line on stderr with exit code 2 (or
a refused entry), never a traceback, never a silent wrong answer, never lost data. Each
test reproduces a reported defect; the fuzz tests feed random bytes, TOML, JSON and lines."""

import json
import shutil
import string
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thousand.analysis.bots import BotState, coerce_action, load_bot
from thousand.base.errors import BotError, ThousandError
from thousand.cli import main
from thousand.engine import TurnRules, TurnState
from thousand.engine.player import Moves, PlayerState
from thousand.play import Game
from thousand.rules import load_ruleset
from thousand.storage import shipped_tables

PIG_DUEL = "6049f6a439fd12a1-duel"
HERE = Path(__file__).parent / "bots"
ADVISE_PIG = ["advise", "pig", "--me", "50", "--opp", "80", "--turn", "20", "--dice", "1"]


def run(args, **kw):
    return CliRunner().invoke(main, args, **kw)


def one_line_error(r, code=2):
    assert r.exit_code == code, (r.exit_code, r.output)
    assert "Traceback" not in r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("thousand: error: "), r.stderr
    return lines[0]


@pytest.fixture
def pig_tables(tmp_path):
    """A copy of the shipped Pig duel table in a tables folder of the test's own."""
    shutil.copytree(shipped_tables() / PIG_DUEL, tmp_path / PIG_DUEL)
    return tmp_path


# --------------------------------------------------------------------------- damaged tables


def test_an_empty_values_file_is_a_damaged_table_not_an_interruption(pig_tables):
    (pig_tables / PIG_DUEL / "values.npy").write_bytes(b"")
    for args in (ADVISE_PIG, ["solve", "pig", "--objective", "duel"]):
        line = one_line_error(run([*args, "--tables", str(pig_tables)]))
        assert "values.npy" in line and "--force" in line


@pytest.mark.parametrize("damage", ["all 2.0", "one minus", "shuffled states", "one value nudged"])
def test_a_damaged_table_is_refused_with_how_to_repair_it(pig_tables, damage):
    folder = pig_tables / PIG_DUEL
    v = np.load(folder / "values.npy")
    s = np.load(folder / "states.npy")
    if damage == "all 2.0":
        np.save(folder / "values.npy", np.full_like(v, 2.0))
    elif damage == "one minus":
        np.save(folder / "values.npy", 1.0 - v)
    elif damage == "shuffled states":
        s[:, 0] = np.random.default_rng(1).permutation(s[:, 0])
        np.save(folder / "states.npy", s)
    else:
        v[3, 4] += 1e-9
        np.save(folder / "values.npy", v)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for args in (ADVISE_PIG, ["solve", "pig", "--objective", "duel"]):
        line = one_line_error(run([*args, "--tables", str(pig_tables)]))
        assert "--force" in line
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # refusing touches nothing


@pytest.mark.parametrize(
    "edit",
    [
        {"values_encoding": "float64"},
        {"values_encoding": "fixed16"},
        {"encoding_error": 2e-10},
        {"encoding_error": None},
    ],
)
def test_a_fixed_point_table_whose_meta_lies_is_refused(pig_tables, edit):
    """A fixed-point copy of the Pig table (uint32 values) with meta.json edited: an encoding
    that does not match the array or an error bound no rounding can have."""
    from thousand.storage import load_table, save_table

    rs = load_ruleset("pig")
    table = load_table(pig_tables / PIG_DUEL, rs, "duel")
    rounded = pig_tables / "rounded"
    folder = save_table(rounded, rs, "duel", np.asarray(table.values), table.states, dict(table.meta), "fixed32")
    assert run([*ADVISE_PIG, "--tables", str(rounded)]).exit_code == 0
    meta = json.loads((folder / "meta.json").read_text())
    meta.update(edit)
    (folder / "meta.json").write_text(json.dumps(meta))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    line = one_line_error(run([*ADVISE_PIG, "--tables", str(rounded)]))
    assert "encoding" in line or "do not match" in line
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_table_without_checksums_is_refused(pig_tables):
    meta = json.loads((pig_tables / PIG_DUEL / "meta.json").read_text())
    del meta["sha256"]
    (pig_tables / PIG_DUEL / "meta.json").write_text(json.dumps(meta))
    assert "checksums" in one_line_error(run([*ADVISE_PIG, "--tables", str(pig_tables)]))


def test_every_shipped_table_passes_its_checks():
    from thousand.storage import load_table
    from thousand.storage.solve import solve

    seen = 0
    for folder in shipped_tables().iterdir():
        if folder.is_dir():
            meta = json.loads((folder / "meta.json").read_text())
            from thousand.rules import ruleset_from_mapping

            rs = ruleset_from_mapping(meta["ruleset"])
            if meta["objective"] == "poker":
                from thousand.storage import find_table
                from thousand.storage.poker import load_poker

                table = find_table(rs, "poker", None)
                assert str(table.path) == str(folder) and load_poker(table, rs).players == meta["players"]
            elif meta["objective"] == "geometric":  # the duel approximation's table (thousand.solvers.geometric)
                from thousand.storage import find_table
                from thousand.storage.geometric import geometric_duel

                assert str(find_table(rs, "geometric", None).path) == str(folder)
                g = geometric_duel(rs, progress=False)
                assert g.values.shape == (len(g.index), len(meta["grid"]))
            else:
                sol = solve(rs, meta["objective"])
                assert not sol.solved_now and str(sol.table.path) == str(folder)
                assert load_table(folder, rs, meta["objective"]).exact == (meta.get("values_encoding") != "fixed32")
            seen += 1
    assert seen >= 20


# --------------------------------------------------------------------------- files and sizes


@pytest.mark.parametrize(
    "args",
    [
        # a path under a regular file: no folder of that name can exist, whatever the machine holds
        ["chart", "pig", "--objective", "race", "--kind", "stop", "--out", f"{__file__}/x.png"],
        ["chart", "pig", "--objective", "race", "--kind", "stop", "--out", "x.txt"],
        ["chart", "pig", "--objective", "race", "--kind", "stop", "--data", f"{__file__}/x.csv"],
        ["solve", "pig", "--set", "goal=30", "--objective", "race", "--tables", "/proc/x"],
        ["solve", "pig", "--set", "goal=30", "--objective", "race", "--tables", "/dev/null/x"],
        ["advise", "pig", "--set", "goal=30", "--me", "5", "--tables", "/dev/null/x"],
        ["solve", "plain", "--set", "goal=1000000000000", "--objective", "turn"],
    ],
)
def test_unwritable_places_and_absurd_sizes_are_one_line(args):
    if "--out" in args and "x.png" in args[-1]:
        pytest.importorskip("matplotlib")
    one_line_error(run(args))


def test_a_duel_that_cannot_fit_is_refused_at_once():
    import time

    t0 = time.perf_counter()
    line = one_line_error(run(["solve", "plain", "--set", "goal=100000", "--objective", "duel"]))
    assert "pairs" in line and time.perf_counter() - t0 < 5


# --------------------------------------------------------------------------- bots


def test_a_python_bot_that_hangs_is_late_then_given_up(tmp_path):
    bot = load_bot(f"{HERE}/pybots.py:Hangs", load_ruleset("pig", ("goal=30",)), timeout=0.2)
    engine = TurnRules(load_ruleset("pig", ("goal=30",)))
    st = BotState.at(engine, TurnState(PlayerState(0), 5, 1, (4,)), PlayerState(0))
    assert bot.choose(st) is not None and bot.faults.counts == {"late": 1}
    bot.choose(st)
    with pytest.raises(BotError, match="times in a row"):
        bot.choose(st)


def test_hold_needs_a_non_negative_total():
    with pytest.raises(BotError, match="N >= 0"):
        load_bot("hold:-5", load_ruleset("pig"))


# --------------------------------------------------------------------------- states


def test_both_players_on_a_barrel_with_push_off_is_refused():
    line = one_line_error(run(["advise", "classic", "--me", "880", "--opp", "880"]))
    assert "barrel" in line


@pytest.mark.parametrize(
    "args, what",
    [
        (["--turn", "1000000"], "times the goal"),
        (["--turn", "5", "--dice", "3"], "cannot occur"),
        (["--turn", "20", "--dice", "5"], "cannot occur"),
    ],
)
def test_unreachable_turn_states_are_refused(args, what):
    assert what in one_line_error(run(["advise", "classic", "--me", "100", *args]))


def test_a_pit_entry_from_above_is_one_state():
    rs = load_ruleset("six-dice")
    m = Moves(rs)
    a = m.check(PlayerState(250, pit_entry=320))
    b = m.check(PlayerState(250, pit_entry=195))
    assert a == b and a.pit_entry == 195
    with pytest.raises(ThousandError, match="inside the pit"):
        m.check(PlayerState(250, pit_entry=210))
    # being pushed into the barrier from above rolls back to just below it
    x = m.normalise(PlayerState(250), before=320)
    assert x.pit_entry == 195


# --------------------------------------------------------------------------- the scorekeeper


def test_the_end_of_input_saves_the_game_and_it_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    r = run(["play", "pig", "--players", "Ann", "Bob"], input="roll 4\nroll 5\n")
    assert r.exit_code == 0, r.output
    saved = list((tmp_path / "thousand" / "games").glob("*.json"))
    assert len(saved) == 1 and f"--resume {saved[0]}" in r.output
    r = run(["play", "--resume", str(saved[0])], input="stop\n")
    assert r.exit_code == 0 and "resumed" in r.output and "Ann banks 9" in r.output
    assert json.loads(saved[0].read_text())["log"] == ["roll 4", "roll 5", "stop"]


def test_play_wording_and_round_counter():
    g = Game(load_ruleset("pig", ("goal=5",)), ["A", "B"])
    g.submit("roll 6")
    g.submit("stop")
    assert g.over and g.round == 1


def test_help_and_json_as_documented():
    assert "You have not opened yet" in run(["advise", "--help"]).output
    assert "Your bolts" in run(["advise", "--help"]).output
    d = json.loads(run(["rules", "show", "classic", "--json"]).output)
    assert d["hash"] == load_ruleset("classic").hash
    r = run(
        [
            "rules",
            "check",
            "classic",
            "--set",
            "goal=500",
            "--set",
            "dump=[]",
            "--set",
            "barrel.threshold=440",
            "--set",
            "pits=[]",
        ]
    )
    assert r.exit_code == 0 and "valid" in r.output
    assert "samosval" in run(["solve", "--help"]).output


# --------------------------------------------------------------------------- fuzz

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(st.binary(max_size=400))
def test_fuzz_ruleset_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("rules") / "r.toml"
    path.write_bytes(data)
    r = run(["rules", "check", str(path)])
    if r.exit_code:
        one_line_error(r)


TOML_KEYS = [
    "goal",
    "dice",
    "faces",
    "keep",
    "hot_dice",
    "open_min",
    "floor",
    "dump",
    "overtake",
    "dump_mid_turn",
    "equal_turns",
    "pit_attempts",
]
TOML_VALUES = st.one_of(
    st.integers(-(10**13), 10**13),
    st.booleans(),
    st.text(string.printable, max_size=8),
    st.lists(st.integers(-1000, 2000), max_size=3),
)


@FUZZ
@given(
    st.dictionaries(st.sampled_from(TOML_KEYS), TOML_VALUES, max_size=5),
    st.sampled_from(["classic", "pig", "farkle", "six-dice"]),
)
def test_fuzz_ruleset_overrides(overrides, preset):
    args = ["rules", "check", preset]
    for k, v in overrides.items():
        args += ["--set", f"{k}={json.dumps(v)}"]
    r = run(args)
    if r.exit_code:
        one_line_error(r)


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.floats(allow_nan=True), st.text(max_size=6)),
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=5), c, max_size=4)),
    max_leaves=12,
)


@FUZZ
@given(st.one_of(JSON, st.fixed_dictionaries({"keep": JSON, "then": JSON})))
def test_fuzz_bot_answers(answer):
    engine = TurnRules(load_ruleset("plain"))
    s = engine.after_roll(TurnState(PlayerState(0), 0, 5), (1, 5, 5, 2, 3))
    st_ = BotState.at(engine, s, PlayerState(0))
    try:
        a = coerce_action(st_, answer)
    except BotError as exc:
        assert exc.kind in ("malformed", "illegal") and "\n" not in str(exc)
    else:
        assert a in st_.legal


@FUZZ
@given(st.lists(st.text(string.printable, max_size=20), max_size=12))
def test_fuzz_scorekeeper_lines(lines):
    from thousand.play import Advisors, run_command

    g = Game(load_ruleset("classic"), ["A", "B"], "classic")
    adv = Advisors(g.rs, "race", None)
    for line in lines:
        if line.strip().lower().startswith(("?", "hint", "advice", "save")):
            continue  # advice solves tables; saving writes files: both tested elsewhere
        before = list(g.log)
        try:
            run_command(g, line, adv)
        except ThousandError as exc:
            assert "\n" not in str(exc)
            assert g.log == before  # a refused entry changes nothing
    assert Game.from_json(g.to_json()).log == g.log


def test_tables_list_verify_clean(pig_tables):
    (pig_tables / PIG_DUEL / "values.npy").write_bytes(b"junk")
    shutil.copytree(shipped_tables() / "5e598d8c4a791ff3-duel", pig_tables / "5e598d8c4a791ff3-duel")
    (pig_tables / "__pycache__").mkdir()  # not a table (an installed package has one beside its tables)
    listed = json.loads(run(["tables", "list", "--tables", str(pig_tables), "--json"]).output)["tables"]
    assert not any("__pycache__" in t["path"] for t in listed)
    mine = {Path(t["path"]).name: t for t in listed if t["where"] == "explicit"}
    assert not mine[PIG_DUEL]["ok"] and mine["5e598d8c4a791ff3-duel"]["ok"]
    assert all(t["ok"] for t in listed if t["where"] == "shipped")
    r = run(["tables", "verify", "--tables", str(pig_tables)])
    assert r.exit_code == 2 and "1 bad" in r.output
    r = run(["tables", "clean", "--tables", str(pig_tables)])
    assert r.exit_code == 0 and not (pig_tables / PIG_DUEL).exists()
    assert (pig_tables / "5e598d8c4a791ff3-duel").exists() and (shipped_tables() / PIG_DUEL).exists()
    assert run(["tables", "verify", "--tables", str(pig_tables)]).exit_code == 0


def test_a_long_solve_says_what_it_costs(capsys):
    from thousand.base.progress import Progress
    from thousand.storage.solve import _check_size

    est = _check_size(load_ruleset("classic"), "duel", True)
    from thousand.engine.states import build_state_space

    n = len(build_state_space(load_ruleset("classic"), opponents=True))
    assert est["player_states"] == n and est["expected"] > 30
    err = capsys.readouterr().err
    # the time is one turn DP timed here, so the pure twin's estimate is in hours
    assert "roughly" in err and ("minutes" in err or "hours" in err) and f"{n:,} player states" in err
    p = Progress("solving classic duel", True, expected=600.0)
    assert "roughly 480 s left" in p.line(3, 0.1, p.t0 + 120) and "[####" in p.line(3, 0.1, p.t0 + 120)
    # a clock reading where (t0 + 120) - t0 is 119.99999999999x: still a fifth of the bar
    p.t0 = 16296.412188395561
    assert (p.t0 + 120) - p.t0 < 120 and "[#### " in p.line(3, 0.1, p.t0 + 120)
    assert "longer than estimated" in p.line(9, 1e-5, p.t0 + 700)


def test_a_duel_too_large_is_refused_before_its_states_are_all_listed():
    """six-dice has about 30,000 player states; the refusal stops listing them once their
    pairs pass the solver's limit, at a fifth of them."""
    from math import isqrt

    from thousand.solvers.duel import MAX_PAIRS

    r = run(["solve", "six-dice", "--objective", "duel", "--tables", "/nonexistent-dir/t"])
    assert r.exit_code == 2 and "at least" in r.output and "pairs" in r.output, r.output
    counted = int(r.output.split("at least ")[1].split(" ")[0].replace(",", ""))
    assert isqrt(MAX_PAIRS) // 2 < counted < 8000


# --------------------------------------------------------------------------- reported by a new user (#57)


def test_an_empty_face_is_refused_not_dropped():
    line = one_line_error(run(["advise", "classic", "--me", "500", "--roll", "1,,5,3,3"]))
    assert "empty face" in line
    # spaces and commas still separate faces as before
    r = run(["advise", "classic", "--me", "500", "--roll", "1, 5,3 3,4", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["roll"] == [1, 3, 3, 4, 5]


def test_a_count_of_games_that_would_run_for_days_is_refused():
    for args in (["evaluate", "pig", "--bot", "hold:20"], ["evaluate", "poker", "--bot", "optimal"]):
        line = one_line_error(run([*args, "--games", "99999999999999999999"]))
        assert "at most 100,000,000" in line


def test_a_game_too_large_for_the_solver_says_its_size_in_a_readable_line():
    line = one_line_error(run(["solve", "pig", "--players", "99"]))
    assert "e+198 states of 99 players" in line and len(line) < 300


def test_a_json_file_that_is_no_save_says_so():
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "notgame.json"
        path.write_text('{"a": 1}')
        line = one_line_error(run(["play", "--resume", str(path)]))
    assert 'no "format" field' in line


def test_a_samosval_score_no_total_can_reach_is_refused():
    """Every classic score is a multiple of 5 (the dice, the penalties): a dump at 333 is never
    reached and used to shrink the counting unit to 1 point, five times the states."""
    line = one_line_error(run(["rules", "check", "classic", "--set", "dump=[333]"]))
    assert "333" in line and "multiple of 5" in line
    r = run(["rules", "check", "classic", "--set", "dump=[335]", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["unit"] == 5


def test_an_evaluation_against_equilibrium_players_too_large_says_what_would_work():
    line = one_line_error(run(["evaluate", "plain", "--set", "goal=5000", "--bot", "hold:300", "--players", "3"]))
    assert "--set goal=2000 or less" in line and "without --players" in line
    # the goal of the suggestion is one the rules accept and whose three-player game fits
    from thousand.engine.states import build_state_space
    from thousand.solvers.nplayer import MAX_VALUES

    m = len(build_state_space(load_ruleset("plain", ("goal=2000",)), opponents=True))
    assert 3 * m**3 <= MAX_VALUES
    # classic's barrel and pits do not move with the goal: no command, a ruleset file of one's own
    line = one_line_error(run(["evaluate", "classic", "--bot", "hold:300", "--players", "3"]))
    assert "a ruleset file with a goal near" in line
