"""Solve an objective for a ruleset, or load its table: the one entry point
that the CLI, the advisor and the evaluator use."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import kernel
from .errors import TableError
from .game import Moves, PlayerState
from .rules import Ruleset
from .states import decode
from .tables import Table, find_table, save_table, write_target


class Progress:
    """A one-line progress report on stderr, shown only once a solve has run for a second."""

    def __init__(self, label: str, enabled: bool = True):
        self.label, self.enabled = label, enabled
        self.t0 = time.perf_counter()
        self.shown = False

    def __call__(self, step: int, change: float) -> None:
        if not self.enabled or time.perf_counter() - self.t0 < 1.0:
            return
        self.shown = True
        sys.stderr.write(f"\r{self.label}: sweep {step}, largest change {change:.3e}, "
                         f"{time.perf_counter() - self.t0:.1f} s   ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


@dataclass
class Solution:
    """A solved objective: values per state, with the states and how it was obtained."""

    rs: Ruleset
    objective: str
    table: Table
    solved_now: bool
    index: dict = field(default_factory=dict)

    def __post_init__(self):
        self.index = {decode(row): i for i, row in enumerate(self.table.states)}

    @property
    def meta(self) -> dict:
        return self.table.meta

    def state_index(self, x: PlayerState) -> int:
        try:
            return self.index[x]
        except KeyError:
            from .errors import StateError
            raise StateError(f"no such game state in the table: {x.describe(self.rs)}") from None

    def value(self, x: PlayerState) -> float:
        return float(self.table.values[self.state_index(x)])

    def start_value(self) -> float:
        return self.value(Moves(self.rs).initial())

    def summary(self) -> dict:
        m = self.meta
        return {"start_value": self.start_value(), "states": m["states"], "iterations": m["iterations"],
                "residual": m["residual"], "solve_seconds": m["solve_seconds"],
                "kernel": m.get("kernel"), "table": str(self.table.path), "solved_now": self.solved_now}

    def describe(self, rs: Ruleset) -> str:
        m = self.meta
        what = {"race": "expected turns to win alone from the start"}.get(self.objective, self.objective)
        how = "solved now" if self.solved_now else "from the stored table"
        return (f"{rs.name}: {what} = {self.start_value():.12f}\n"
                f"  {m['states']} states, {m['iterations']} sweeps, residual {m['residual']:.2e}, "
                f"{m['solve_seconds']:.2f} s ({how})\n  table: {self.table.path}")


def solve_objective(rs: Ruleset, objective: str, tables_dir: str | None = None,
                    progress: bool = True, force: bool = False) -> Solution:
    """The table of ``objective`` for ``rs``: found on the search path, or solved
    now (progress on stderr) and written atomically."""
    if not force:
        table = find_table(rs, objective, tables_dir)
        if table is not None:
            return Solution(rs, objective, table, solved_now=False)
    if objective == "race":
        from .race import solve_race
        bar = Progress(f"solving {rs.name} race", progress)
        sol = solve_race(rs, progress=bar)
        bar.close()
        values, states = sol.turns, sol.space.encode()
        extra = {"states": len(sol.space), "iterations": sol.iterations, "residual": sol.residual,
                 "solve_seconds": sol.seconds, "kernel": kernel.IMPLEMENTATION,
                 "value_meaning": "expected turns to win alone"}
    else:
        raise TableError(f"objective {objective!r} has no solver yet")
    folder = save_table(Path(write_target(tables_dir)), rs, objective, values, states, extra)
    from .tables import load_table
    return Solution(rs, objective, load_table(folder, rs, objective), solved_now=True)
