"""`thousand web build`: the page as a static app, for any static host and phones offline."""

from __future__ import annotations

import json
from pathlib import Path

import click

from thousand.base.i18n import _

from .group import Group
from .options import tables_option

__all__ = ["web"]


@click.group(cls=Group)
def web() -> None:
    """The web page without a server (`thousand serve` is the page with one)."""


@web.command()
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--rules",
    "presets",
    multiple=True,
    metavar="PRESET",
    help="A ruleset to include (repeat for several; default: every 1000 preset whose two-player table is "
    "found and at most 15 MB, and those without one for scorekeeping).",
)
@tables_option
@click.option("--json", "as_json", is_flag=True, help="Print the build's summary as JSON.")
def build(out: Path, presets: tuple[str, ...], tables_dir: str | None, as_json: bool) -> None:
    """Write the static app into OUT: a folder any static host serves (or `python -m http.server`).

    Opened once on a phone, it installs to the home screen and from then on, with no network,
    keeps score, saves the games on the phone and advises: exactly for two players from the
    two-player table of the rules, for three players and more by the approximation the
    advisor chooses, with its measured cost.
    """
    from thousand.web.static_build import build_static

    summary = build_static(out, list(presets) or None, tables_dir)
    if as_json:
        click.echo(json.dumps(summary, indent=1))
        return
    click.echo(
        _("{out}: {files} files, {mb:.1f} MB; rules: {rules}").format(
            out=out,
            files=summary["files"],
            mb=summary["bytes"] / 2**20,
            rules=", ".join(
                name
                if advice == "duel"
                else _("{0} (last turns only)").format(name)
                if advice
                else _("{0} (score only)").format(name)
                for name, advice in summary["presets"].items()
            ),
        )
    )
    click.echo(_("serve it from any static host, e.g. `python -m http.server -d {out}`").format(out=out))
