"""`thousand solve RULES`: solve a ruleset for an objective (turn, race, duel, rate, N players)."""

from __future__ import annotations

import time

import click

from thousand.base.choices import OBJECTIVES
from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.base.objectives import CHOSEN, REGISTRY
from thousand.base.objectives import objective as objective_named

from .options import (
    emit,
    json_option,
    rules_argument,
    ruleset_of,
    set_option,
    tables_option,
)

__all__ = ["solve"]

# every method of the objectives a user chooses (each objective checks its own)
METHOD_NAMES = tuple(dict.fromkeys(m for name in CHOSEN for m in REGISTRY[name].methods))


@click.command()
@rules_argument
@set_option
@click.option(
    "--objective",
    type=click.Choice(OBJECTIVES),
    default=None,
    help="turn: the most points one turn banks on average (instant; a bank counts its raw "
    "total, with no barrel cap and no samosval; a bust, a mid-turn dump and an overshoot "
    "count 0; an instant win counts the points missing to the goal); race: fewest "
    "expected turns alone (seconds); duel: two-player win probability (seconds for Pig, "
    "Farkle and plain, minutes for the 1000 presets); rate: the most points per turn in the "
    "long run, with the penalty for repeated zero turns (a strategy per zero-turn counter; "
    "Farkle family, Pig, plain). Required unless --players is given.",
)
@click.option(
    "--players",
    "players",
    type=int,
    default=None,
    help="The win probability of every seat for this many players with equilibrium play "
    "(3 or more: the exact N-player equilibrium and its certificate; 2 is the duel).",
)
@click.option(
    "--method",
    type=click.Choice(METHOD_NAMES),
    default=None,
    help="How to solve (default: the objective's fastest; duel: policy, passes or textbook, "
    "all reaching the same values; a stored table is used unless --force).",
)
@tables_option
@click.option(
    "--force",
    is_flag=True,
    help="Solve again and replace the stored table (atomically); a duel "
    "starts from a fixed-point table of the same rules if that is the one stored. With --store: "
    "replace FILE.npy, or start again over an interrupted solve's FILE.npy.partial.",
)
@click.option(
    "--fixed-point",
    "fixed_point",
    is_flag=True,
    help="Store the new duel table's values in 32-bit fixed point (within 1.2e-10 of the solved "
    "ones, half the size: how the large shipped tables are made).",
)
@click.option(
    "--store",
    "store",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.npy",
    help="Solve the duel out of core: its values go to FILE.npy (P[mover, opponent]; with "
    "equal_turns the first seat's states, then the second's), with at most --memory-mb of "
    "them in memory at once, by passes; no table is stored.",
)
@click.option(
    "--memory-mb", "memory_mb", type=float, default=None, help="With --store: the memory the values may take (MB)."
)
@click.option(
    "--cluster",
    "cluster",
    default=None,
    metavar="local:N|tcp://HOST:PORT",
    help="Solve the duel, or with --players N the equilibrium, on Dask workers (pip install "
    "'thousand[cluster]'): local:N starts N worker processes here, tcp://HOST:PORT uses a running "
    "scheduler; each worker holds its block of the values, checkpoints let a lost worker or an "
    "interrupted run go on (docs/distributed.md).",
)
@click.option(
    "--checkpoint",
    "checkpoint",
    type=click.Path(file_okay=False),
    default=None,
    metavar="DIR",
    help="With --cluster: the checkpoints' folder, one every worker can write (default: .partial/ "
    "in the tables folder); the same command goes on from it.",
)
@json_option
def solve(
    rules: str,
    overrides: tuple[str, ...],
    objective: str | None,
    players: int | None,
    method: str | None,
    tables_dir: str | None,
    force: bool,
    fixed_point: bool,
    store: str | None,
    memory_mb: float | None,
    cluster: str | None,
    checkpoint: str | None,
    as_json: bool,
) -> None:
    """Solve a ruleset for an objective and print the value of the initial state."""
    from thousand.storage.solve import solve as solve_rules

    rs = ruleset_of(rules, overrides)
    t0 = time.perf_counter()
    chosen, players = _what_to_solve(objective, players, method)
    _check_options(chosen, players, method, fixed_point, store, memory_mb, cluster, checkpoint, tables_dir)
    if store is not None:
        _solve_to_store(rs, store, memory_mb, force, as_json, t0)
        return
    if chosen.per_players:
        res = chosen.solve(
            rs, tables_dir, players=players, force=force, progress=True, cluster=cluster, checkpoint=checkpoint
        )
        data = {
            "ruleset": rs.name,
            "ruleset_hash": rs.hash,
            "objective": "win",
            **res.summary(),
            "seconds": round(time.perf_counter() - t0, 6),
        }
        emit(data, as_json, res.describe())
        return
    objective = chosen.name
    res = solve_rules(
        rs,
        objective,
        method=method,
        tables=tables_dir,
        force=force,
        progress=True,
        encoding="fixed32" if fixed_point else "float64",
        cluster=cluster,
        checkpoint=checkpoint,
    )
    data = {"ruleset": rs.name, "ruleset_hash": rs.hash, "objective": objective}
    data.update(res.summary())
    data["seconds"] = round(time.perf_counter() - t0, 6)
    emit(data, as_json, res.describe(rs))


def _what_to_solve(objective: str | None, players: int | None, method: str | None):
    """The objective the options name (the registry's) and the number of players: ``--players
    N`` is the duel for 2 and the equilibrium of N players beyond; a game against opponents
    takes no objective of a player alone."""
    if players is not None and players < 2:
        raise StateError(_("--players must be at least 2, not {0}").format(players))
    named = objective_named(objective) if objective is not None else None
    if players is None:
        if named is None:
            raise StateError(_("say what to solve: --objective turn|race|duel|rate, or --players N"))
        return named, None
    game = REGISTRY["duel"] if players == 2 else REGISTRY["players"]
    if named is not None and not named.opponents:
        if players == 2:
            raise StateError(_("--players 2 is the duel: it takes no --objective {0}").format(objective))
        raise StateError(
            _(
                "--players {0} solves the win probabilities of {0} seats: it takes neither --objective {1} nor --method"
            ).format(players, objective)
        )
    if game.per_players and method is not None:
        raise StateError(
            _(
                "--players {0} solves the win probabilities of {0} seats: it takes neither --objective {1} nor --method"
            ).format(players, method)
        )
    return game, (players if game.per_players else None)


def _check_options(chosen, players, method, fixed_point, store, memory_mb, cluster, checkpoint, tables_dir) -> None:
    """The options that go with some objectives only, refused in one line with any other."""
    if cluster is not None and store is not None:
        raise StateError(_("--cluster solves into a table: no --store"))
    if checkpoint is not None and cluster is None:
        raise StateError(_("--checkpoint goes with --cluster"))
    if store is not None or memory_mb is not None:
        if store is None or memory_mb is None:
            raise StateError(_("--store FILE.npy and --memory-mb MB go together"))
        if not chosen.out_of_core or method not in (None, "passes") or fixed_point or tables_dir:
            raise StateError(
                _(
                    "--store solves the duel by passes into FILE.npy: it takes no --players, "
                    "--objective other than duel, --method other than passes, --fixed-point or "
                    "--tables"
                )
            )
    if fixed_point and "fixed32" not in chosen.encodings:
        raise StateError(_("--fixed-point stores duel tables, not {0}").format(chosen.solve_options(players)))


def _solve_to_store(rs, store: str, memory_mb: float, force: bool, as_json: bool, t0: float) -> None:
    """The duel solved out of core into ``store`` (no table)."""
    from thousand.storage.solve import solve_duel_to_store

    data = solve_duel_to_store(rs, store, memory_mb, force=force)
    data["seconds"] = round(time.perf_counter() - t0, 6)
    emit(
        data,
        as_json,
        _(
            "{name} duel out of core: P(first player wins) = {p:.12f}; {passes} passes, "
            "residual {res:.1e}, {s:.1f} s, values in {path} ({n:,} x {n:,})"
        ).format(
            name=rs.name,
            p=data["start_value"],
            passes=data["iterations"],
            res=data["residual"],
            s=data["solve_seconds"],
            path=data["store"],
            n=data["store_shape"][0],
        ),
    )
