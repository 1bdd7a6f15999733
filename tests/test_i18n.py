"""Russian and English: the catalog covers every message, the compiled catalog is the
source catalog, placeholders survive translation, and the commands speak Russian when
asked (``--lang``, ``THOUSAND_LANG``, the locale) with the same numbers as in English."""

from __future__ import annotations

import ast
import gettext
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from thousand.base import i18n
from thousand.cli import main
from thousand.play import Advisors, Game, run_command
from thousand.play.session import run_session
from thousand.rules import load_ruleset

PACKAGE = Path(i18n.__file__).resolve().parents[1]  # the whole package, every layer
PO = Path(i18n.__file__).resolve().parent / "locale" / "ru" / "LC_MESSAGES" / "thousand.po"
MO = PO.with_suffix(".mo")


def code_messages() -> dict[str, str | None]:
    """Every literal message passed to _(), N_() or ngettext() in the package (msgid ->
    msgid_plural or None), read from the source with the ast module."""
    out: dict[str, str | None] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("_", "N_", "ngettext")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                plural = node.args[1].value if node.func.id == "ngettext" else None
                out[node.args[0].value] = plural
    return out


def po_entries(text: str) -> dict[str, list[str]]:
    """msgid -> its msgstr (or msgstr[k] forms), from the text of a .po file (a reader
    of the subset of the format the catalog uses, written apart from gettext's)."""
    entries: dict[str, list[str]] = {}
    field, cur = None, {}

    def flush():
        if "msgid" in cur:
            forms = [v for k, v in sorted(cur.items()) if k.startswith("msgstr")]
            entries[cur["msgid"]] = forms

    for line in text.splitlines() + [""]:
        line = line.strip()
        if not line or line.startswith("#"):
            if not line and cur:
                flush()
                cur = {}
            continue
        m = re.match(r'^(msgid_plural|msgid|msgstr(?:\[\d\])?)\s+"(.*)"$', line)
        if m:
            field = m.group(1)
            cur[field] = _unquote(m.group(2))
        else:
            assert line.startswith('"') and line.endswith('"'), line
            cur[field] += _unquote(line[1:-1])
    entries.pop("", None)
    return entries


def _unquote(s: str) -> str:
    return s.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def fields(s: str) -> set[str]:
    return set(re.findall(r"\{(\w*)[^}]*\}", s))


def test_every_message_of_the_code_has_a_russian_translation():
    po = po_entries(PO.read_text(encoding="utf-8"))
    code = code_messages()
    assert len(code) > 150
    missing = [m for m in code if m not in po or not all(po[m])]
    assert not missing, missing
    stale = [m for m in po if m not in code]
    assert not stale, stale


def test_placeholders_survive_translation():
    for msgid, forms in po_entries(PO.read_text(encoding="utf-8")).items():
        for form in forms:
            # a plural form may leave out {n} (one = "другого игрока"), never add a field
            assert fields(form) <= fields(msgid) | {"n"}, (msgid, form)
            if len(forms) == 1:
                assert fields(form) == fields(msgid), (msgid, form)


def test_the_compiled_catalog_is_the_source_catalog():
    """thousand.mo (what gettext reads) holds exactly the entries of thousand.po: run
    msgfmt after editing the .po."""
    po = po_entries(PO.read_text(encoding="utf-8"))
    with MO.open("rb") as fh:
        mo = gettext.GNUTranslations(fh)
    for msgid, forms in po.items():
        if len(forms) == 1:
            assert mo.gettext(msgid) == forms[0], msgid
        else:
            # Russian plural forms: 1 -> 0, 3 -> 1, 5 -> 2
            assert [mo.ngettext(msgid, "x", n) for n in (1, 3, 5)] == forms, msgid
    assert len(mo._catalog) - 1 == sum(len(f) for f in po.values())  # "-1": the header


def test_russian_plural_forms():
    i18n.set_language("ru")
    try:
        assert [i18n.dice_count(n) for n in (1, 2, 4, 5, 11, 21, 22)] == [
            "1 кубик",
            "2 кубика",
            "4 кубика",
            "5 кубиков",
            "11 кубиков",
            "21 кубик",
            "22 кубика",
        ]
    finally:
        i18n.set_language(None)
    assert i18n.dice_count(1) == "1 die" and i18n.dice_count(3) == "3 dice"


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"THOUSAND_LANG": "ru"}, "ru"),
        ({"THOUSAND_LANG": "en", "LANG": "ru_RU.UTF-8"}, "en"),
        ({"LANG": "ru_RU.UTF-8"}, "ru"),
        ({"LANGUAGE": "fr:ru", "LANG": "en_US.UTF-8"}, "ru"),
        ({"LC_ALL": "de_DE.UTF-8", "LANG": "ru_RU.UTF-8"}, "en"),
        ({}, "en"),
    ],
)
def test_the_language_comes_from_the_environment(monkeypatch, env, expected):
    for var in ("THOUSAND_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert i18n.language() == expected


def run(args, **kw):
    return CliRunner().invoke(main, args, **kw)


def test_advice_in_russian_has_the_same_numbers():
    args = ["advise", "pig", "--me", "50", "--opp", "80", "--turn", "20", "--dice", "1"]
    en, ru = run(args), run(["--lang", "ru", *args])
    assert en.exit_code == ru.exit_code == 0
    assert "шанс на победу" in ru.output and "остановиться" in ru.output and "соперник" in ru.output
    assert "P(win)" not in ru.output and "chance" not in ru.output
    number = re.compile(r"\d+\.\d{6}")
    assert number.findall(en.output) == number.findall(ru.output) and number.findall(en.output)
    # the option after the command works too, and the next call is English again
    assert run([*args, "--lang", "ru"]).output == ru.output
    assert run(args).output == en.output
    # JSON: the fields and the values stay; only the words are Russian
    je, jr = (json.loads(run([*a, "--json"]).output) for a in (args, ["--lang", "ru", *args]))
    assert [o["win_probability"] for o in je["options"]] == [o["win_probability"] for o in jr["options"]]
    assert [o["action"] for o in je["options"]] == [o["action"] for o in jr["options"]]


def test_advice_explains_in_russian_with_the_games_terms():
    r = run(["advise", "classic", "--me", "200", "--turn", "35", "--dice", "3", "--lang", "ru"])
    assert r.exit_code == 0 and "в яме от 200 до 300" in r.output and "остановиться нельзя" in r.output
    assert "болтов 0" in r.output
    r = run(["advise", "classic", "--me", "540", "--turn", "15", "--dice", "2", "--lang", "ru"])
    assert r.exit_code == 0 and "самосвал" in r.output, r.output
    r = run(["advise", "classic", "--me", "880", "--turn", "50", "--dice", "3", "--lang", "ru"])
    assert r.exit_code == 0 and "на бочке" in r.output, r.output


def test_errors_in_russian_are_one_line_with_exit_2():
    r = run(["--lang", "ru", "advise", "classic", "--me", "7"])
    assert r.exit_code == 2 and r.output.strip() == "thousand: ошибка: счёт 7 не кратен 5"
    r = run(["advise", "pig", "--me", "5", "--lang", "xx"])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "en, ru" in r.output
    r = run(["advise", "pig", "--me", "5", "--lang"])
    assert r.exit_code == 2 and "--lang" in r.output


def test_the_scorekeeper_in_russian(tmp_path):
    rs = load_ruleset("classic")
    g = Game(rs, ["Аня", "Борис"], "classic", (), seed=None)
    lines = ["roll 1,5,2,3,3", "stop", "roll 2,4,6", "help", "undo", "frob"]
    out: list[str] = []
    i18n.set_language("ru")
    try:
        code = run_session(
            g,
            Advisors(rs, "race", None),
            io.StringIO("\n".join(lines) + "\n"),
            lambda text, nl=True: out.append(text),
            run_command,
            autosave=tmp_path / "game.json",
        )
    finally:
        i18n.set_language(None)
    text = "\n".join(out)
    assert code == 0
    for words in (
        "Аня выбрасывает 1,2,3,3,5: откладывает 1,5 на 15; очки хода 15",
        "не открылся (нужно 50)",
        "отказ: ещё не открылся: для первой записи нужно не меньше 50 за ход (есть 15)",
        "пустой бросок, 15 очков хода сгорают",
        "команды (по одной в строке",
        "отменено: roll 2,4,6",
        "отказ: неизвестная команда 'frob'",
        "продолжить: thousand play --resume",
    ):
        assert words in text, words
    # the saved log is the same in every language: the program reads it back
    assert json.loads((tmp_path / "game.json").read_text())["log"] == ["roll 1,2,3,3,5"]


def test_poker_dice_in_russian():
    r = run(["advise", "poker", "--roll", "6,6,3,2,1", "--after", "2", "--lang", "ru"])
    assert r.exit_code == 0, r.output
    assert "пара 6 (12 очков)" in r.output and "перебросить 1,2,3" in r.output and "после вас ходят ещё 2" in r.output
    en = run(["advise", "poker", "--roll", "6,6,3,2,1", "--after", "2"])
    number = re.compile(r"\d\.\d{6}")
    assert number.findall(en.output) == number.findall(r.output)
    r = run(["advise", "poker", "--roll", "6,6,3,2", "--lang", "ru"])
    assert r.exit_code == 2 and "в покер на костях играют 5" in r.output
