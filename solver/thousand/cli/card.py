"""`thousand card RULES`: a strategy card a person can remember."""

from __future__ import annotations

from pathlib import Path

import click

from thousand.base.errors import StateError
from thousand.base.i18n import _

from .options import (
    OUTPUT_FILE,
    emit,
    json_option,
    rules_argument,
    ruleset_of,
    set_option,
    tables_option,
)

__all__ = ["card"]


@click.command()
@rules_argument
@set_option
@click.option(
    "--cells",
    type=click.IntRange(1, 60),
    default=12,
    show_default=True,
    help="The most numbers the card may have: its marks (by dice to roll, score gap or your own score, endgame), "
    "and a worth per column where you choose which dice to set aside.",
)
@click.option(
    "--shapes",
    "shape_specs",
    multiple=True,
    metavar="C,R,E[,score]",
    help="Search only these shapes: columns (groups of dice counts), rows (by the score gap, or by your own "
    "score with ,score), endgame row 0 or 1; repeatable (default: every shape that fits --cells).",
)
@click.option("--out", "md_out", type=OUTPUT_FILE, default=None, help="Write the card as Markdown.")
@click.option("--png", "png_out", type=OUTPUT_FILE, default=None, help="The card as a one-page PNG.")
@json_option
@tables_option
def card(
    rules: str,
    overrides: tuple[str, ...],
    cells: int,
    shape_specs: tuple[str, ...],
    md_out: str | None,
    png_out: str | None,
    as_json: bool,
    tables_dir: str | None,
):
    """A strategy card a person can remember: stop marks by dice left and score gap, found
    by searching the cards of each size for the least win probability given up against an
    optimal opponent, measured exactly (docs/card.md). Where that duel is out of reach
    (six-dice), the turn's optimum as a card, measured by one turn's points alone."""
    from thousand.analysis.card import CardDuel, DuelOutOfReach, find_card, parse_shape, turn_only

    rs = ruleset_of(rules, overrides)
    only = [parse_shape(rs, s) for s in shape_specs] or None
    if png_out:
        from thousand.analysis.chart import check_card_png

        check_card_png(png_out)
    # a ruleset of one's own has its duel solved first, with its estimate and progress bar
    try:
        duel = CardDuel(rs, tables_dir=tables_dir, progress=not as_json)
    except DuelOutOfReach as exc:  # no duel to search by: the turn's card, measured by its points
        rep = turn_only(rs, str(exc), cells)
    else:
        say = None if as_json else lambda s: click.echo(s, err=True)
        rep = find_card(rs, cells, duel=duel, progress=say, only=only)
    text = rep.card.markdown(rep)
    if md_out:
        try:
            Path(md_out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise StateError(_("cannot write {0}: {1}").format(md_out, exc.strerror or exc)) from None
    if png_out:
        from thousand.analysis.chart import draw_card

        draw_card(rep.card, rep, png_out)
    emit(rep.to_json(), as_json, text.rstrip())
