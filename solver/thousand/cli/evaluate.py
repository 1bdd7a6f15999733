"""`thousand evaluate RULES --bot SPEC`: how far a bot is from optimal play, and where it goes wrong."""

from __future__ import annotations

import click

from thousand.base.choices import EXACT_BUDGET
from thousand.base.errors import BotError
from thousand.base.i18n import _
from thousand.base.objectives import objective as objective_named

from .options import (
    check_counts,
    emit,
    json_option,
    rules_argument,
    ruleset_of,
    set_option,
    tables_option,
)

__all__ = ["evaluate"]


@click.command()
@rules_argument
@set_option
@click.option(
    "--bot",
    "bot_spec",
    required=True,
    metavar="SPEC",
    help="optimal, race, hold:N, cautious, random, exec:COMMAND (JSON lines), module:attr or path/to/file.py:attr "
    "(a bot with decide(state)), policy:MODULE:ATTR (a callable on (observation, mask), docs/bots.md).",
)
@click.option(
    "--opponent",
    "opp_spec",
    default="optimal",
    show_default=True,
    metavar="SPEC",
    help="The opponent in a duel (a bot spec).",
)
@click.option(
    "--objective",
    type=click.Choice(("duel", "race")),
    default="duel",
    show_default=True,
    help="duel: win probability against the opponent; race: expected turns alone.",
)
@click.option(
    "--games",
    type=int,
    default=2000,
    show_default=True,
    help="Monte Carlo games (a duel plays half of them in each seat order); 0: none.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the dice (and of random bots).")
@click.option(
    "--exact/--no-exact",
    default=True,
    show_default=True,
    help="Evaluate exactly where the decision states fit the budget.",
)
@click.option(
    "--best-response/--no-best-response",
    default=None,
    help="With the exact duel, also the exact best response to the bot in each seat: how much an "
    "opponent who knows its policy wins (deterministic bots; several times the exact evaluation's time). "
    "Default: where the duel has at most 10,000 state pairs (Pig to 100).",
)
@click.option(
    "--budget",
    type=int,
    default=EXACT_BUDGET,
    show_default=True,
    help="Most decision states the exact evaluation asks the bot about.",
)
@click.option(
    "--blunder-games",
    type=int,
    default=500,
    show_default=True,
    help="Monte Carlo games in which every decision of the bot is valued by the table.",
)
@click.option("--worst", type=int, default=5, show_default=True, help="Worst decisions to list.")
@click.option(
    "--timeout", type=float, default=2.0, show_default=True, help="Seconds an exec: bot has for each decision."
)
@click.option(
    "--players",
    "players",
    type=int,
    default=2,
    show_default=True,
    help="3 or more: the bot in each seat in turn, the others playing the exact equilibrium of "
    "that many players (--opponent does not apply).",
)
@tables_option
@json_option
def evaluate(
    rules: str,
    overrides: tuple[str, ...],
    bot_spec: str,
    opp_spec: str,
    objective: str,
    games: int,
    seed: int,
    exact: bool,
    best_response: bool | None,
    budget: int,
    blunder_games: int,
    worst: int,
    timeout: float,
    players: int,
    tables_dir: str | None,
    as_json: bool,
) -> None:
    """How far a bot is from optimal play, and where it goes wrong."""
    from thousand.analysis.evaluate import run_evaluation

    rs = ruleset_of(rules, overrides)
    check_counts(("--games", games), ("--budget", budget), ("--blunder-games", blunder_games), ("--worst", worst))
    if not timeout > 0:
        raise BotError(_("--timeout must be positive"))
    if players < 2:
        raise BotError(_("--players must be at least 2, not {0}").format(players))
    if players > 2:
        if not objective_named(objective).opponents or opp_spec != "optimal":
            raise BotError(
                _(
                    "--players {0}: the others play the equilibrium; it takes neither --objective race nor --opponent"
                ).format(players)
            )
        from thousand.analysis.seats import evaluate_players

        report = evaluate_players(
            rs,
            bot_spec,
            players,
            games,
            seed,
            exact,
            budget,
            timeout,
            tables_dir,
            blunder_games=blunder_games,
            worst=worst,
            overrides=overrides,
        )
        emit(report["json"], as_json, report["text"])
        return
    report = run_evaluation(
        rs,
        bot_spec,
        opp_spec,
        objective,
        games,
        seed,
        exact,
        budget,
        worst,
        timeout,
        tables_dir,
        overrides,
        blunder_games=blunder_games,
        best_response=best_response,
    )
    emit(report["json"], as_json, report["text"])
