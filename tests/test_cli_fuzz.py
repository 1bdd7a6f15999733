"""Malformed invocations of every command, generated: each one is refused in one line on
stderr with exit code 2, never a traceback, and writes nothing.

Every case starts from a well-formed invocation of one command and breaks it in one way
that the command must notice before doing any work: a ruleset that does not exist, an
option value of the wrong kind, an option that does not exist, a broken ``--set``, input
nested past any depth, a roll with faces the dice do not have, a file that is not what
it should be, an output into a folder that does not exist. Hypothesis draws the command,
the break and its text; a few hundred cases run in seconds (no case reaches a solve).
"""

from __future__ import annotations

import string

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thousand.cli import main

# well-formed invocations, each cheap to refuse; "{rules}" is the ruleset argument
COMMANDS = [
    ["rules", "show", "{rules}"],
    ["rules", "check", "{rules}"],
    ["solve", "{rules}", "--objective", "turn"],
    ["advise", "{rules}", "--me", "50", "--opp", "80", "--turn", "20", "--dice", "1"],
    ["evaluate", "{rules}", "--bot", "hold:20", "--games", "10"],
    ["play", "{rules}", "--players", "A", "B"],
    ["card", "{rules}", "--cells", "2"],
    ["chart", "{rules}", "--json"],
    ["tables", "round", "{rules}", "--to", "{tmp}"],
]
# (command, option): an option that takes a whole number, for the wrong-kind break
NUMBER_OPTIONS = [
    (["advise", "{rules}", "--opp", "80", "--turn", "20", "--dice", "1"], "--me"),
    (["advise", "{rules}", "--me", "50", "--opp", "80", "--turn", "20"], "--dice"),
    (["evaluate", "{rules}", "--bot", "hold:20"], "--games"),
    (["evaluate", "{rules}", "--bot", "hold:20", "--games", "10"], "--seed"),
    (["play", "{rules}", "--players", "A", "B"], "--seed"),
    (["card", "{rules}"], "--cells"),
    (["serve", "--games", "{tmp}/g"], "--port"),
    (["solve", "{rules}"], "--players"),
]
OUTPUTS = [
    ["card", "{rules}", "--cells", "1", "--out"],
    ["card", "{rules}", "--cells", "1", "--png"],
    ["chart", "{rules}", "--data"],
    ["chart", "{rules}", "--out"],
    ["review", "{tmp}/game.json", "--chart"],
]
FILES = [  # commands that read a file the user names
    ["rules", "check", "{file}"],
    ["review", "{file}"],
    ["play", "--resume", "{file}"],
    ["advise", "{file}", "--me", "0"],
]

letters = st.text(alphabet=string.ascii_letters + "_-. ,;:!?@#%&*()", min_size=1, max_size=40)
not_a_number = st.one_of(letters.filter(lambda t: not any(c.isdigit() for c in t)), st.just("1.5e"), st.just("--"))
deep = st.integers(33, 5000).map(lambda n: "[" * n + "]" * n)


def _fill(args: list[str], tmp) -> list[str]:
    return [a.replace("{rules}", "pig").replace("{tmp}", str(tmp)) for a in args]


@st.composite
def broken_invocation(draw, tmp):
    """(args, what was broken): one well-formed invocation broken in one way."""
    kind = draw(st.sampled_from(["rules", "number", "option", "set", "deep", "roll", "file", "output"]))
    if kind == "rules":
        name = draw(letters.filter(lambda t: t.strip() and not t.startswith("-")))
        base = draw(st.sampled_from(COMMANDS))
        return _fill([a.replace("{rules}", "nosuch-" + name) for a in base], tmp), kind
    if kind == "number":
        base, option = draw(st.sampled_from(NUMBER_OPTIONS))
        return [*_fill(base, tmp), option, draw(not_a_number)], kind
    if kind == "option":
        base = draw(st.sampled_from(COMMANDS))
        return [*_fill(base, tmp), "--zz" + draw(st.text(string.ascii_lowercase, min_size=1, max_size=12))], kind
    if kind == "set":
        base = draw(st.sampled_from(COMMANDS))
        item = draw(
            st.one_of(
                letters.filter(lambda t: "=" not in t).map(lambda t: "x" + t),  # no '='
                st.just("goal=-5"),
                st.just("goal=0"),
                st.just("="),
                not_a_number.map(lambda t: "goal=" + t),
                st.text(string.ascii_lowercase, min_size=1, max_size=10).map(lambda k: f"zz{k}=1"),
            )
        )
        return [*_fill(base, tmp), "--set", item], kind
    if kind == "deep":
        base = draw(st.sampled_from(COMMANDS))
        return [*_fill(base, tmp), "--set", "goal=" + draw(deep)], kind
    if kind == "roll":
        faces = draw(
            st.one_of(
                st.lists(st.integers(7, 10**6), min_size=1, max_size=3),
                st.lists(st.integers(1, 6), min_size=6, max_size=10_000),  # more dice than Pig has
            )
        )
        args = ["advise", "pig", "--me", "50", "--opp", "80", "--roll", ",".join(map(str, faces))]
        return args, kind
    if kind == "file":
        content = draw(
            st.one_of(
                st.binary(max_size=200),
                deep.map(str.encode),
                st.just(b'{"format": 1, "rules": "pig"}'),
                st.just(b"[1, 2, 3]"),
                st.just(b"goal = "),
            )
        )
        suffix = draw(st.sampled_from([".json", ".toml"]))
        path = tmp / f"input{suffix}"
        path.write_bytes(content)
        base = draw(st.sampled_from(FILES))
        return [a.replace("{file}", str(path)) for a in _fill(base, tmp)], kind
    base = draw(st.sampled_from(OUTPUTS))
    where = draw(st.sampled_from(["{tmp}/no/such/folder/x.out", "{tmp}"]))
    return [*_fill(base, tmp), where.replace("{tmp}", str(tmp))], kind


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz")
    (tmp / "game.json").write_text('{"format": 1}')
    return tmp


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), lang=st.sampled_from([[], ["--lang", "ru"]]))
def test_every_malformed_invocation_is_one_line_and_exit_2(workdir, data, lang, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(workdir.parent / "fuzz-state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(workdir.parent / "fuzz-cache"))
    args, kind = data.draw(broken_invocation(workdir))
    before = sorted(p.name for p in workdir.iterdir())  # after the draw, which may write an input file
    r = CliRunner().invoke(main, [*lang, *args], input="")
    shown = " ".join(args)[:300]
    assert r.exit_code == 2, (kind, shown, r.exit_code, r.output[-500:])
    assert "Traceback" not in r.output, (kind, shown, r.output[-2000:])
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, (kind, shown, r.stderr[-1000:])
    assert lines[0].startswith(("thousand: error: ", "thousand: ошибка: ")), (kind, shown, lines[0])
    assert len(lines[0]) < 1000, (kind, shown)  # long input is quoted cut short
    # nothing was written where the command was pointed (tables, outputs)
    assert sorted(p.name for p in workdir.iterdir()) == before, (kind, shown)
