"""`thousand tables list|verify|round|clean`: the stored tables, their checks, fixed point, and cleaning."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from thousand.base.errors import StateError
from thousand.base.i18n import _

from .group import Group
from .options import (
    emit,
    json_option,
    rules_argument,
    ruleset_of,
    set_option,
    tables_option,
)

__all__ = ["tables", "tables_clean", "tables_export", "tables_list", "tables_round", "tables_verify"]


@click.group(cls=Group)
def tables() -> None:
    """List, verify and clean stored tables."""


@tables.command("list")
@tables_option
@json_option
def tables_list(tables_dir: str | None, as_json: bool) -> None:
    """Every stored table on the search path, with its ruleset, objective, size and state."""
    from thousand.storage.files import leftovers, search_path, stored_tables

    found = stored_tables(tables_dir)
    lines = [
        f"{t.where:8} {t.ruleset:18} {t.objective:5} {t.bytes / 2**20:8.1f} MB {t.encoding:7}  "
        f"{'ok' if not t.problem else 'BAD: ' + t.problem}  {t.path}"
        for t in found
    ]
    left = [x for root in search_path(tables_dir) for x in leftovers(root)]
    if left:
        lines.append(
            f"{len(left)} unfinished writes of interrupted solves ({sum(x.bytes for x in left) / 2**20:.1f} MB): "
            "thousand tables clean removes them"
        )
    emit(
        {"tables": [t.to_json() for t in found], "unfinished_writes": [str(x.path) for x in left]},
        as_json,
        "\n".join(lines) or "no stored tables",
    )


@tables.command("verify")
@tables_option
@json_option
def tables_verify(tables_dir: str | None, as_json: bool) -> None:
    """Check every stored table (checksums, ruleset, format, ranges); exit 2 if one fails."""
    from thousand.storage.files import stored_tables

    found = stored_tables(tables_dir)
    bad = [t for t in found if t.problem]
    emit(
        {"checked": len(found), "bad": [t.to_json() for t in bad]},
        as_json,
        "\n".join([f"BAD {t.path}: {t.problem}" for t in bad] + [f"{len(found)} tables checked, {len(bad)} bad"]),
    )
    if bad:
        sys.exit(2)


@tables.command("round")
@rules_argument
@set_option
@click.option(
    "--to",
    "to_dir",
    type=click.Path(file_okay=False),
    required=True,
    help="Tables directory to write the fixed-point table to (e.g. the repository's tables/).",
)
@tables_option
@json_option
def tables_round(rules: str, overrides: tuple[str, ...], to_dir: str, tables_dir: str | None, as_json: bool) -> None:
    """Store the exact duel table of RULES (found on the search path) in 32-bit fixed point
    under --to: half the size, every value within 1.2e-10 (how the largest shipped tables
    are made from a solve)."""

    import numpy as np

    from thousand.storage.files import FIXED32, find_table, load_table, save_table

    rs = ruleset_of(rules, overrides)
    table = find_table(rs, "duel", tables_dir)
    if table is None or not table.exact:
        raise StateError(
            _(
                "no exact duel table of {0} on the search path: solve it first with `thousand solve {0} "
                "--objective duel`"
            ).format(rs.name)
        )
    folder = save_table(
        Path(to_dir),
        rs,
        "duel",
        np.asarray(table.values),
        table.states,
        {**table.meta, "rounded_from": str(table.path)},
        FIXED32,
    )
    err = load_table(folder, rs, "duel").encoding_error
    emit(
        {"table": str(folder), "from": str(table.path), "encoding_error": err},
        as_json,
        f"{folder}: {rs.name} duel in fixed point, within {err:.1e} of {table.path}",
    )


@tables.command("clean")
@tables_option
@click.option("--all", "everything", is_flag=True, help="Remove every cached table, not only the bad ones.")
@json_option
def tables_clean(tables_dir: str | None, everything: bool, as_json: bool) -> None:
    """Remove bad tables (or, with --all, every table) from the user cache or --tables, and
    the unfinished writes of interrupted solves; says how much it freed. Shipped tables are
    never touched."""
    import shutil

    from thousand.storage.files import remove_leftovers, search_path, shipped_tables, stored_tables

    gone = [t for t in stored_tables(tables_dir) if t.where != "shipped" and (everything or t.problem)]
    for t in gone:
        shutil.rmtree(t.path, ignore_errors=True)
    # the folders of writes that a kill interrupted: found by their names, whoever left them
    left = [x for root in search_path(tables_dir) if root != shipped_tables() for x in remove_leftovers(root)]
    freed = sum(t.bytes for t in gone) + sum(x.bytes for x in left)
    emit(
        {
            "removed": [str(t.path) for t in gone],
            "unfinished_writes_removed": [str(x.path) for x in left],
            "bytes_freed": freed,
        },
        as_json,
        "\n".join(
            [f"removed {t.path}" for t in gone]
            + [f"removed {x.path} (an interrupted solve's unfinished write)" for x in left]
            + [f"{len(gone)} tables and {len(left)} unfinished writes removed, {freed / 2**20:.1f} MB freed"]
        ),
    )


@tables.command("export")
@rules_argument
@set_option
@click.option("--players", "players", type=int, required=True, help="The equilibrium of this many players (3 or more).")
@click.option("--out", "out", required=True, metavar="FILE.npz", help="Where to write it (an .npz; docs/export.md).")
@tables_option
@json_option
def tables_export(
    rules: str, overrides: tuple[str, ...], players: int, out: str, tables_dir: str | None, as_json: bool
) -> None:
    """Export the equilibrium of N players for anyone to check: every seat's chance in every
    state, the states where a mover mixes and the rules in full (docs/export.md; a standalone
    script there re-checks Pig's equations from the file alone)."""
    from thousand.base.untrusted import output_file
    from thousand.storage.players import solve_players

    rs = ruleset_of(rules, overrides)
    if players < 3:
        raise StateError(_("--players {0}: the export is of an equilibrium of 3 players or more").format(players))
    if not out.endswith(".npz"):
        raise StateError(_("--out {0}: the export is an .npz file; name it so").format(out))
    target = output_file(out, "--out")
    sol = solve_players(rs, players, tables_dir, progress=True)
    got = sol.export(target)
    emit(
        got,
        as_json,
        _("wrote the equilibrium of {n} players of {name} to {out}: {states:,} states, {mb:.1f} MB").format(
            n=players, name=rs.name, out=got["out"], states=got["states"], mb=got["bytes"] / 2**20
        ),
    )
