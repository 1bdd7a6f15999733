"""`thousand chart RULES`: pictures of the strategy."""

from __future__ import annotations

import json

import click

from thousand.base.choices import CHART_KINDS
from thousand.base.errors import StateError
from thousand.base.i18n import _

from .options import (
    OUTPUT_FILE,
    rules_argument,
    ruleset_of,
    set_option,
    tables_option,
)

__all__ = ["chart"]


@click.command()
@rules_argument
@set_option
@click.option(
    "--objective",
    type=click.Choice(("race", "duel")),
    default="race",
    show_default=True,
    help="race: fewest expected turns alone; duel: two-player win probability.",
)
@click.option(
    "--kind",
    type=click.Choice(CHART_KINDS),
    default="stop",
    show_default=True,
    help="stop: when to stop (race: per score and dice; duel: over both scores); "
    "win: duel win probability over both scores; rules: race hold-at totals of "
    "RULES and the --compare rulesets on one plot.",
)
@click.option(
    "--compare",
    multiple=True,
    metavar="RULES",
    help="With --kind rules: rulesets to compare with (default: classic-nobarrel, plain); "
    "the --set overrides apply to them too.",
)
@click.option("--out", "out", type=OUTPUT_FILE, default=None, help="The picture (PNG).")
@click.option(
    "--data",
    "data",
    type=OUTPUT_FILE,
    default=None,
    help="Write the numbers behind the chart as CSV (works without matplotlib).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers behind the chart as JSON.")
@tables_option
def chart(
    rules: str,
    overrides: tuple[str, ...],
    objective: str,
    kind: str,
    compare: tuple[str, ...],
    out: str | None,
    data: str | None,
    as_json: bool,
    tables_dir: str | None,
) -> None:
    """Charts to learn from: when to stop, and who is winning (from the solved tables)."""
    from thousand.analysis.chart import make_chart

    if not (out or data or as_json):
        raise StateError(_("say where the chart goes: --out FILE.png, --data FILE.csv or --json"))
    rs = ruleset_of(rules, overrides)
    rows = make_chart(rs, rules, objective, kind, compare, overrides, tables_dir, out, data)
    if as_json:
        click.echo(
            json.dumps(
                {"ruleset": rs.name, "ruleset_hash": rs.hash, "objective": objective, "kind": kind, "rows": rows}
            )
        )
    else:
        click.echo(
            f"{rs.name} {objective} {kind}: {len(rows)} rows"
            + (f", data {data}" if data else "")
            + (f", chart {out}" if out else "")
        )
