"""`thousand play RULES --players A B ...`: the scorekeeper of a real game."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from thousand.base.choices import ADVICE_MODES
from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.rules.poker import PokerRuleset

from .options import (
    set_option,
    tables_option,
)

__all__ = ["play"]


@click.command()
@click.argument("rules", metavar="[RULES]", required=False)
@click.argument("names", nargs=-1, metavar="[A B ...]")
@click.option(
    "--players",
    "players",
    multiple=True,
    metavar="NAME",
    help="The players in the order of play: --players A B C, or --players A,B,C.",
)
@set_option
@click.option("--seed", type=int, default=None, help="Seed for the dice the program throws (`roll` alone).")
@click.option(
    "--resume",
    "resume",
    type=click.Path(dir_okay=False),
    default=None,
    help="Resume a saved game (its rules and players come with it).",
)
@click.option(
    "--advice",
    type=click.Choice(ADVICE_MODES),
    default="auto",
    show_default=True,
    help="What `?` uses: duel (exact for two players; solved on first use), race "
    "(the solitaire policy), auto (duel when its table exists or solves in seconds, "
    "and with 3+ players the race policy too).",
)
@tables_option
def play(
    rules: str | None,
    names: tuple[str, ...],
    players: tuple[str, ...],
    overrides: tuple[str, ...],
    seed: int | None,
    resume: str | None,
    advice: str,
    tables_dir: str | None,
) -> None:
    """Keep the score sheet of a real game: thousand play RULES --players A B [C ...].

    Reads commands line by line from stdin (type `help`): enter the rolls or let the
    program roll, set dice aside, roll on or stop; every rule of RULES is applied to
    the sheet. `?` shows advice; `undo` takes back an entry. The game is saved as it
    goes (under ~/.local/state/thousand/games, or back to the --resume file), so the
    end of the input or Ctrl-C loses nothing: thousand play --resume FILE goes on.
    """
    import datetime
    import secrets

    from thousand.base.untrusted import ensure_private_folder
    from thousand.play.game import Advisors, open_game, run_command
    from thousand.play.session import autosave_dir, run_session

    # `--players A B C` gives A to the option and B, C as arguments: one list in order
    plist = [p for n in (*players, *names) for p in n.split(",") if p]
    g, said = open_game(rules, overrides, plist, seed, resume)
    if said:
        click.echo(said)
    # a name of its own for every game (two games started in the same second never share one)
    if resume:
        path = Path(resume)
    else:
        try:
            folder = ensure_private_folder(autosave_dir())
        except OSError as exc:
            raise StateError(
                _("cannot use {0} for the saved games: {1}").format(autosave_dir(), exc.strerror or exc)
            ) from None
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        name = "".join(c if c.isalnum() else "-" for c in g.rs.name)
        path = folder / f"{stamp}-{name}-{secrets.token_hex(3)}.json"
    if isinstance(g.rs, PokerRuleset):
        from thousand.play.poker import PokerAdvisor, run_poker_command

        sys.exit(
            run_session(g, PokerAdvisor(g.rs, tables_dir), sys.stdin, click.echo, run_poker_command, autosave=path)
        )
    sys.exit(run_session(g, Advisors(g.rs, advice, tables_dir), sys.stdin, click.echo, run_command, autosave=path))
