"""The geometric approximation's tables: the duel stand-in of rulesets whose pairs are too
many to solve (six-dice), found on the table search path or solved and written now.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from thousand import kernel
from thousand.base.progress import Progress
from thousand.engine.states import build_state_space, decode
from thousand.rules.ruleset import Ruleset
from thousand.solvers.geometric import GRID, GeometricDuel, solve_geometric
from thousand.solvers.lastturn import last_turn_horizon

from .files import find_table, load_table, save_table, write_target
from .solve import player_table_meta, solve_objective

__all__ = ["geometric_duel", "solve_geometric_table"]


def geometric_duel(rs: Ruleset, tables_dir: str | None = None, progress: bool = True) -> GeometricDuel:
    """The approximation's values for ``rs``: its race table (expected turns alone) and its
    geometric table (``V`` over :data:`GRID`), found on the table search path or solved now
    (a progress line on stderr) and written like every table."""
    race = solve_objective(rs, "race", tables_dir, progress=progress)
    table = find_table(rs, "geometric", tables_dir)
    solved_now = table is None
    if table is None:
        if progress:
            sys.stderr.write(
                f"solving the memoryless-opponent values of {rs.name} (the duel approximation): "
                f"{len(race.table.states):,} player states, {len(GRID)} columns\n"
            )
        bar = Progress(f"solving {rs.name} geometric", progress)
        try:
            space = build_state_space(rs)
            sol = solve_geometric(rs, space=space, progress=bar)
        finally:
            bar.close()
        horizon = None
        if rs.equal_turns:
            horizon = int(last_turn_horizon(rs, kernel.roll_table(rs), space.states))
        meaning = (
            "V[state, k]: best chance of winning against an opponent who wins each of its turns with chance 1/grid[k]"
        )
        extra = {
            **player_table_meta(len(space), sol, meaning),
            "grid": [float(g) for g in sol.grid],
            "last_turn_horizon": horizon,
        }
        folder = save_table(Path(write_target(tables_dir)), rs, "geometric", sol.values, space.encode(), extra)
        table = load_table(folder, rs, "geometric")
    index = {decode(row): i for i, row in enumerate(table.states)}
    turns = np.array([race.value(x) for x in index])
    geo = GeometricDuel(
        rs, index, np.asarray(table.values), table.meta["grid"], turns, table.meta.get("last_turn_horizon")
    )
    geo.table, geo.solved_now = table, solved_now
    return geo


def solve_geometric_table(rs: Ruleset, tables_dir=None, *, progress=True, **_how) -> GeometricDuel:
    """The ``geometric`` objective (the registry's solver): :func:`geometric_duel`."""
    return geometric_duel(rs, tables_dir, progress=progress)
