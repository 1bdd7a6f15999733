"""The ``thousand`` command line: one module per command (or group of commands), loaded
when the command is used, so that ``thousand --help`` reads no solver.

Every command parses its options and renders its result; the work is done by the layers
below. Results go to stdout (``--json`` for machines), progress and errors to stderr. Bad
input is one line on stderr and exit code 2, never a traceback (:mod:`.group`). The
options several commands share live in :mod:`.options`.

To add a command: a module here with a click command named as the module says, and a row
in :data:`COMMANDS`.
"""

from __future__ import annotations

import importlib

import click

from thousand.base.i18n import LANGUAGES
from thousand.base.version import __version__

from .group import Group
from .options import names_poker

__all__ = ["COMMANDS", "main"]

# command name -> the module of this package that defines it (as an attribute of that name)
COMMANDS = {
    "advise": "advise",
    "card": "card",
    "chart": "chart",
    "evaluate": "evaluate",
    "play": "play",
    "review": "review",
    "rules": "rules",
    "serve": "serve",
    "solve": "solve",
    "tables": "tables",
    "web": "web",
}
# one verb, two games: these commands of poker dice take their own options (module .poker)
POKER_TWINS = {"solve": "poker_solve", "advise": "poker_advise", "evaluate": "poker_evaluate"}


class Main(Group):
    """The top group: its commands are imported when used (:data:`COMMANDS`)."""

    def list_commands(self, ctx) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx, name: str):
        module = COMMANDS.get(name)
        return None if module is None else getattr(importlib.import_module(f"{__name__}.{module}"), name)

    def resolve_command(self, ctx, args):
        # `thousand advise poker ...` is the poker-dice command of the same name; the ruleset
        # is the first argument that is not an option
        name, cmd, rest = super().resolve_command(ctx, args)
        if name in POKER_TWINS:
            first = next((a for a in rest if not a.startswith("-")), None)
            if first is not None and names_poker(first):
                return name, getattr(importlib.import_module(f"{__name__}.poker"), POKER_TWINS[name]), rest
        return name, cmd, rest


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="thousand")
@click.option(
    "--lang",
    type=click.Choice(LANGUAGES),
    expose_value=False,
    help="Language of advice, the scorekeeper and errors (default: THOUSAND_LANG, then the locale); "
    "also accepted after the command.",
)
def main() -> None:
    """Exact optimal play for the dice game 1000 (Тысяча) and its family.

    RULES is a preset name (see `thousand rules list`) or a path to a TOML file.
    """
