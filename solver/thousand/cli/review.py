"""`thousand review GAME`: a saved game decision by decision."""

from __future__ import annotations

import click

from thousand.base.choices import ADVICE_MODES, REVIEW_OBJECTIVES

from .options import (
    OUTPUT_FILE,
    emit,
    json_option,
    tables_option,
)

__all__ = ["review"]


@click.command()
@click.argument("game", metavar="GAME", type=click.Path(dir_okay=False))
@click.option(
    "--objective",
    type=click.Choice(REVIEW_OBJECTIVES),
    default="win",
    show_default=True,
    help="What a decision gives up: win probability (the duel or the N-player game), or expected points of the turn.",
)
@click.option(
    "--advice",
    type=click.Choice(ADVICE_MODES),
    default="auto",
    show_default=True,
    help="Where the win probabilities come from, as in `thousand play`: auto takes the exact duel or "
    "equilibrium where it can, else the best measured approximation.",
)
@click.option("--chart", "chart_out", type=OUTPUT_FILE, default=None, help="The curve (PNG).")
@json_option
@tables_option
def review(game: str, objective: str, advice: str, chart_out: str | None, as_json: bool, tables_dir: str | None):
    """Review a saved game (from `thousand play` or the web page): every decision of every
    player with the best option and what the choice gave up, then each player's accuracy
    (decisions within 0.1 percentage point of the best), total loss and worst decisions.
    """
    from thousand.play.review import draw, load_game, render, review_game

    rv = review_game(load_game(game), objective, tables_dir, advice)
    if chart_out:
        draw(rv, chart_out)
    emit(rv.to_json(), as_json, render(rv) + (f"\nchart: {chart_out}" if chart_out else ""))
