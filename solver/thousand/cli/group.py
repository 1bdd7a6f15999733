"""The command line's group: every refusal one line on stderr and exit 2, the language
option anywhere on the line, Ctrl-C a line and exit 130."""

from __future__ import annotations

import sys

import click

from thousand.base.errors import ThousandError
from thousand.base.i18n import LANGUAGES, _, using

__all__ = ["Group", "fail", "take_language"]

# click >= 8.2 raises this for a group called without a command; older clicks print the help
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class Group(click.Group):
    """A click group that turns every :class:`ThousandError`, and click's own usage
    errors (a bad option value, a missing argument), into one line and exit 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            args, lang = take_language(args)
        except ValueError as exc:
            fail(exc)
            sys.exit(2)
        # the language holds for this call only (one process may run several: tests, a server)
        with using(lang):
            return self._main(args, prog_name, complete_var, standalone_mode, **extra)

    def _main(self, args, prog_name, complete_var, standalone_mode, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except _NO_ARGS_IS_HELP as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(0)
        except click.ClickException as exc:
            fail(exc.format_message())
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo(_("thousand: interrupted"), err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ThousandError as exc:
            fail(exc)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo(_("thousand: interrupted"), err=True)
            ctx.exit(130)


def fail(message: object) -> None:
    """The one line on stderr that every refusal is: its message on one line, a long input
    quoted in it cut short (a 10,000-face roll is not echoed whole)."""
    from thousand.base.untrusted import cut

    click.echo(_("thousand: error: {message}").format(message=cut(message, 600)), err=True)


def take_language(args: list[str]) -> tuple[list[str], str | None]:
    """``--lang L`` (or ``--lang=L``) wherever it stands on the command line, before or after
    the command: (the other arguments, L or None). ValueError for an unknown language."""
    out, k, lang = [], 0, None
    while k < len(args):
        a = args[k]
        if a == "--":
            out.extend(args[k:])
            break
        if a == "--lang" or a.startswith("--lang="):
            if a == "--lang":
                if k + 1 >= len(args):
                    raise ValueError("--lang needs a language: en or ru")
                value, k = args[k + 1], k + 2
            else:
                value, k = a.split("=", 1)[1], k + 1
            if value not in LANGUAGES:
                raise ValueError(f"unknown language {value!r}: one of {', '.join(LANGUAGES)}")
            lang = value
            continue
        out.append(a)
        k += 1
    return out, lang
