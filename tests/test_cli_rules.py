"""The command line for rulesets: `thousand rules list/show` and the errors of
`thousand rules show` and `thousand solve ... --objective turn` on bad rules
(one line on stderr, exit code 2)."""

from __future__ import annotations

import inspect
import json

import pytest
from click.testing import CliRunner

from thousand.cli import main
from thousand.rules import load_ruleset, preset_names

PRESETS = [
    "classic",
    "classic-nobarrel",
    "classic-open",
    "street",
    "kubiki",
    "admission",
    "six-dice",
    "plain",
    "pig",
    "farkle",
    "farkle-cardgames",
    "zilch",
    "poker",
]


@pytest.fixture
def runner() -> CliRunner:
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:  # click < 8.2
        return CliRunner(mix_stderr=False)
    return CliRunner()


def run(runner: CliRunner, *args: str):
    return runner.invoke(main, list(args), catch_exceptions=False)


# --------------------------------------------------------------------------- rules list / show


def test_rules_list_shows_all_thirteen(runner):
    r = run(runner, "rules", "list")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == PRESETS
    for ln, name in zip(lines, PRESETS):
        assert load_ruleset(name).summary in ln


def test_rules_list_json(runner):
    r = run(runner, "rules", "list", "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert [p["name"] for p in data["presets"]] == PRESETS == preset_names()
    for p in data["presets"]:
        assert p["hash"] == load_ruleset(p["name"]).hash


@pytest.mark.parametrize("name", PRESETS)
def test_rules_show_loads_back(runner, name, tmp_path):
    r = run(runner, "rules", "show", name)
    assert r.exit_code == 0, r.stderr
    rs = load_ruleset(name)
    unit = f"unit {rs.unit} points" if name != "poker" else "poker dice"
    assert r.stdout.splitlines()[0] == f"# ruleset hash {rs.hash}, {unit}"
    path = tmp_path / "shown.toml"
    path.write_text(r.stdout, encoding="utf-8")
    back = load_ruleset(str(path))
    assert back.hash == rs.hash and back == rs
    # and showing the file again prints the same text
    r2 = run(runner, "rules", "show", str(path))
    assert r2.exit_code == 0 and r2.stdout == r.stdout


@pytest.mark.parametrize(
    "name, override, attr, value",
    [
        ("classic", "keep=any", "keep", "any"),
        ("plain", "goal=500", "goal", 500),
        ("farkle", "goal=500", "goal", 500),
        ("classic", "bolts.penalty=50", ("bolts", "penalty"), 50),
    ],
)
def test_rules_show_override(runner, name, override, attr, value, tmp_path):
    r = run(runner, "rules", "show", name, "--set", override)
    assert r.exit_code == 0, r.stderr
    path = tmp_path / "o.toml"
    path.write_text(r.stdout, encoding="utf-8")
    rs, base = load_ruleset(str(path)), load_ruleset(name)
    got = getattr(getattr(rs, attr[0]), attr[1]) if isinstance(attr, tuple) else getattr(rs, attr)
    assert got == value
    assert rs.hash != base.hash
    assert rs.hash == load_ruleset(name, [override]).hash
    assert f"# ruleset hash {rs.hash}," in r.stdout


def test_rules_show_name_does_not_change_hash(runner):
    a = run(runner, "rules", "show", "classic")
    b = run(runner, "rules", "show", "classic", "--set", "name=mine", "--set", "summary=x y")
    assert a.stdout.splitlines()[0] == b.stdout.splitlines()[0]
    assert 'name = "mine"' in b.stdout and 'summary = "x y"' in b.stdout


def test_solve_turn_takes_overrides(runner):
    a = json.loads(run(runner, "solve", "pig", "--objective", "turn", "--json").stdout)
    b = json.loads(run(runner, "solve", "pig", "--objective", "turn", "--json", "--set", "goal=50").stdout)
    assert a["ruleset_hash"] == load_ruleset("pig").hash
    assert b["ruleset_hash"] == load_ruleset("pig", ["goal=50"]).hash != a["ruleset_hash"]
    assert a["unit"] == 1 and a["objective"] == "turn"


# --------------------------------------------------------------------------- bad rulesets

BAD_TOML = {
    "unknown_key": 'dice = 5\ngoal = 1000\ncolour = "red"\n[scoring]\nsingles = { 1 = 10 }\n',
    "unknown_nested_key": "dice = 5\ngoal = 1000\n[scoring]\nsingles = { 1 = 10 }\n[barrel]\nheight = 3\n",
    "wrong_type": 'dice = 5\ngoal = "1000"\n[scoring]\nsingles = { 1 = 10 }\n',
    "overlapping_pits": "dice = 5\ngoal = 1000\n[scoring]\nsingles = { 1 = 10, 5 = 5 }\n"
    "[[pits]]\nlow = 200\nexit = 300\n[[pits]]\nlow = 250\nexit = 350\n",
    "not_a_multiple_of_unit": "dice = 5\ngoal = 1000\nunit = 10\n[scoring]\nsingles = { 1 = 10, 5 = 5 }\n",
    "goal_not_reachable_exactly": "dice = 5\ngoal = 1002\n[scoring]\nsingles = { 1 = 10, 5 = 5 }\n"
    '[barrel]\nkind = "exact"\novershoots = 6\n',
    "barrel_none_with_threshold": "dice = 5\ngoal = 1000\n[scoring]\nsingles = { 1 = 10 }\n"
    '[barrel]\nkind = "none"\nthreshold = 880\n',
    "barrel_threshold_above_goal": "dice = 5\ngoal = 1000\n[scoring]\nsingles = { 1 = 10 }\n"
    '[barrel]\nkind = "points"\nthreshold = 1200\n',
    "invalid_toml": "dice = 5\ngoal = = 1000\n",
    "not_utf8": None,
}

BAD_ARGS = [
    ("nosuchpreset",),
    ("/nonexistent/dir/rules.toml",),
    ("missing.toml",),
    ("classic", "--set", "keep"),
    ("classic", "--set", "=any"),
    ("classic", "--set", "goal.x=1"),
    ("classic", "--set", "colour=red"),
    ("classic", "--set", "goal=abc"),
    ("classic", "--set", "pits=[{low=200, exit=300}, {low=250, exit=350}]"),
    ("classic", "--set", "unit=10"),
    ("classic-open", "--set", "goal=1003"),
    ("classic", "--set", "barrel.kind=none"),
    ("admission", "--set", "goal=800"),
    ("classic", "--set", "barrel.threshold=1200"),
    ("classic", "--set", "keep=some"),
]


def _check_error(r) -> None:
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("thousand: error: ")
    assert r.stdout == ""


def _bad_file(tmp_path, case: str) -> str:
    path = tmp_path / f"{case}.toml"
    if BAD_TOML[case] is None:
        path.write_bytes(b'name = "\xff\xfe"\n')
    else:
        path.write_text(BAD_TOML[case], encoding="utf-8")
    return str(path)


COMMANDS = [("rules", "show"), ("solve",)]
TURN = ("--objective", "turn")


@pytest.mark.parametrize("command", COMMANDS, ids=["rules-show", "solve"])
@pytest.mark.parametrize("case", list(BAD_TOML))
def test_bad_ruleset_file(runner, tmp_path, command, case):
    tail = TURN if command == ("solve",) else ()
    r = run(runner, *command, _bad_file(tmp_path, case), *tail)
    _check_error(r)


@pytest.mark.parametrize("command", COMMANDS, ids=["rules-show", "solve"])
@pytest.mark.parametrize("args", BAD_ARGS, ids=[" ".join(a) for a in BAD_ARGS])
def test_bad_ruleset_args(runner, tmp_path, monkeypatch, command, args):
    monkeypatch.chdir(tmp_path)
    tail = TURN + ("--json",) if command == ("solve",) else ()
    r = run(runner, *command, *args, *tail)
    _check_error(r)


@pytest.mark.parametrize(
    "case, words",
    [
        ("unknown_key", "unknown key 'colour'"),
        ("unknown_nested_key", "unknown key 'barrel.height'"),
        ("wrong_type", "goal must be int"),
        ("overlapping_pits", "overlap"),
        ("not_a_multiple_of_unit", "not a multiple of the unit 10"),
        ("goal_not_reachable_exactly", "cannot be reached exactly"),
        ("barrel_none_with_threshold", "barrel.kind is none"),
        ("barrel_threshold_above_goal", "barrel.threshold"),
        ("invalid_toml", "not valid TOML"),
        ("not_utf8", "cannot read"),
    ],
)
def test_bad_ruleset_messages(runner, tmp_path, case, words):
    r = run(runner, "rules", "show", _bad_file(tmp_path, case))
    _check_error(r)
    assert words in r.stderr


def test_unknown_preset_message_lists_presets(runner):
    r = run(runner, "solve", "nosuchpreset", "--objective", "turn")
    _check_error(r)
    assert "nosuchpreset" in r.stderr and "classic" in r.stderr


def test_bad_override_message(runner):
    r = run(runner, "rules", "show", "classic", "--set", "keep")
    _check_error(r)
    assert "key=value" in r.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (("evaluate", "pig", "--bot", "hold:20", "--seed", "x"), "'--seed'"),
        (("nosuchcommand",), "No such command"),
        (("advise", "pig"), "Missing option '--me'"),
        (("solve", "pig", "--objective", "fastest"), "'--objective'"),
    ],
)
def test_usage_errors_are_one_line(runner, args, words):
    """click's own usage errors follow the same rule as ours: one line, exit 2."""
    r = run(runner, *args)
    _check_error(r)
    assert words in r.stderr


def test_no_command_prints_the_help(runner):
    r = run(runner)
    assert r.exit_code == 0 and "Usage:" in r.stdout and "advise" in r.stdout
