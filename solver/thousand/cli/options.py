"""What several commands share, declared once: the ruleset argument and the ``--set``,
``--json`` and ``--tables`` options, output files checked before any work, the counts a
command accepts, and the one way a result is printed (:func:`emit`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from thousand.base.errors import BotError, RulesetError
from thousand.base.i18n import _
from thousand.rules.poker import PokerRuleset
from thousand.rules.ruleset import Ruleset, load_ruleset

__all__ = [
    "MAX_COUNT",
    "OUTPUT_FILE",
    "OutputFile",
    "check_counts",
    "emit",
    "json_option",
    "names_poker",
    "rules_argument",
    "ruleset_of",
    "set_option",
    "tables_option",
]


MAX_COUNT = 10**8  # games, states or decisions asked for: more would run for days, not finish


def check_counts(*named: tuple[str, int]) -> None:
    """Each count given on the command line from 0 to :data:`MAX_COUNT` (one line otherwise)."""

    for name, v in named:
        if v < 0:
            raise BotError(_("{0} must be 0 or more").format(name))
        if v > MAX_COUNT:
            raise BotError(_("{0} must be at most {1:,} (that many would run for days)").format(name, MAX_COUNT))


def emit(data: dict, as_json: bool, human: str) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=None, sort_keys=False))
    else:
        click.echo(human)


class OutputFile(click.ParamType):
    """A file the command writes: checked when the command line is read, before any work,
    so that a missing folder is one line at once, not after a long search (no folder is
    created on the user's behalf)."""

    name = "file"

    def convert(self, value, param, ctx):
        from thousand.base.untrusted import InputError, output_file

        try:
            return str(output_file(value, _("file")))
        except InputError as exc:
            self.fail(str(exc), param, ctx)


OUTPUT_FILE = OutputFile()

# options that several commands share, declared once
rules_argument = click.argument("rules", metavar="RULES")
set_option = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a ruleset key (dotted keys, TOML values); repeatable.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
tables_option = click.option(
    "--tables",
    "tables_dir",
    type=click.Path(file_okay=False),
    envvar="THOUSAND_TABLES",
    help="Tables directory (default: the shipped tables, then the user cache).",
)


def ruleset_of(rules: str, overrides: tuple[str, ...], poker: bool = False) -> Ruleset:
    """The ruleset of a command; a poker-dice ruleset only where the command takes one."""
    rs = load_ruleset(rules, overrides)
    if isinstance(rs, PokerRuleset) and not poker:
        command = click.get_current_context().info_name
        raise RulesetError(
            _(
                "{0} is a poker-dice ruleset: `thousand {1}` is for the 1000 family (poker dice "
                "has rules, solve, advise, play and evaluate)"
            ).format(rules, command)
        )
    return rs


def names_poker(spec: str) -> bool:
    """Whether a RULES argument names a poker-dice ruleset (a preset or a TOML file)."""

    from thousand.base.untrusted import load_toml
    from thousand.rules.ruleset import _preset_text

    try:
        text = _preset_text(spec) if "/" not in spec and not spec.endswith(".toml") else None
        if text is None and spec.endswith(".toml") and Path(spec).is_file():
            text = Path(spec).read_text(encoding="utf-8")
        return text is not None and load_toml(text).get("game") == "poker"
    except (OSError, ValueError):  # InputError and UnicodeDecodeError are ValueErrors
        return False  # the command itself reports a broken file
