"""Solve an objective for a ruleset, or load its table: the one entry point
that the CLI, the advisor and the evaluator use."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import kernel
from .errors import StateError, TableError
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


def peak_memory_mb() -> float:
    """Peak resident memory of this process so far, in MiB."""
    import resource
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


@dataclass
class Solution:
    """A solved objective: values per state, with the states and how it was obtained."""

    rs: Ruleset
    objective: str
    table: Table
    solved_now: bool
    index: dict = field(init=False)

    def __post_init__(self):
        self.index = {decode(row): i for i, row in enumerate(self.table.states)}

    @property
    def meta(self) -> dict:
        return self.table.meta

    def state_index(self, x: PlayerState) -> int:
        try:
            return self.index[x]
        except KeyError:
            raise StateError(f"no such game state in the table: {x.describe(self.rs)}") from None

    @property
    def seated(self) -> bool:
        """Whether the values depend on the mover's seat (an equal_turns duel:
        ``values[seat, mover, opponent]``, seat 0 first, 1 second)."""
        return self.table.values.ndim == 3

    def value(self, x: PlayerState, y: PlayerState | None = None, seat: int | None = None) -> float:
        """The stored value of state ``x`` (race), or of mover ``x`` against ``y`` (duel;
        with equal_turns, mover ``x`` in ``seat``, 0 first or 1 second)."""
        v = self.table.values
        if v.ndim >= 2 and y is None:
            raise TypeError("a duel value needs the opponent's state")
        if v.ndim == 3:
            if seat not in (0, 1):
                raise TypeError("an equal_turns duel value needs the mover's seat (0 or 1)")
            return float(v[seat, self.state_index(x), self.state_index(y)])
        if v.ndim == 2:
            return float(v[self.state_index(x), self.state_index(y)])
        return float(v[self.state_index(x)])

    def start_value(self) -> float:
        """The value of the initial state: P(first player wins) for the duel."""
        x0 = Moves(self.rs).initial()
        return self.value(x0, x0 if self.table.values.ndim >= 2 else None, 0 if self.seated else None)

    def fair_compensation(self) -> tuple[int, float] | None:
        """The extra starting points for the second player that bring the duel
        closest to 50/50: the ``c`` minimising |P(first player wins) - 1/2| when
        the second player starts with ``c`` points, and that probability.

        P(first wins) = P(x0, y_c) with x0 the initial state (first to move) and
        y_c the opened state with score c; scores that are not plain states of
        the table (dump scores, pits with roll-back) are skipped."""
        if self.table.values.ndim < 2:
            return None
        moves = Moves(self.rs)
        x0 = moves.initial()
        best = None
        for c in range(0, self.rs.goal, self.rs.unit):
            y = moves.normalise(PlayerState(c, opened=True), before=None) if c else x0
            if y not in self.index:
                continue
            p = self.value(x0, y, 0 if self.seated else None)
            if best is None or abs(p - 0.5) < abs(best[1] - 0.5):
                best = (c, p)
            if p < 0.5 - 0.25:  # far past the balance point: nothing closer beyond
                break
        return best

    def summary(self) -> dict:
        m = self.meta
        out = {"start_value": self.start_value(), "states": m["states"], "iterations": m["iterations"],
               "residual": m["residual"], "solve_seconds": m["solve_seconds"],
               "kernel": m.get("kernel"), "table": str(self.table.path), "solved_now": self.solved_now}
        if "peak_memory_mb" in m:
            out["peak_memory_mb"] = m["peak_memory_mb"]
            out["player_states"] = m["player_states"]
        for key in ("policy_rounds", "linear_sweeps", "policy_fallback"):
            if m.get(key) is not None:
                out[key] = m[key]
        fair = self.fair_compensation()
        if fair is not None:
            out["fair_compensation"] = {"points": fair[0], "p_first": fair[1]}
        return out

    def describe(self, rs: Ruleset) -> str:
        m = self.meta
        what = {"race": "expected turns to win alone from the start",
                "duel": "P(first player wins) with optimal play"}.get(self.objective, self.objective)
        how = "solved now" if self.solved_now else "from the stored table"
        fair = self.fair_compensation()
        fair_line = (f"  fair compensation: the second player starts with {fair[0]} points "
                     f"-> P(first player wins) = {fair[1]:.6f}\n" if fair else "")
        return (f"{rs.name}: {what} = {self.start_value():.12f}\n"
                f"  {m['states']} states, {m['iterations']} sweeps, residual {m['residual']:.2e}, "
                f"{m['solve_seconds']:.2f} s ({how})\n{fair_line}  table: {self.table.path}")


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
        try:
            sol = solve_race(rs, progress=bar)
        finally:
            bar.close()
        values, states = sol.turns, sol.space.encode()
        extra = {"states": len(sol.space), "iterations": sol.iterations, "residual": sol.residual,
                 "solve_seconds": sol.seconds, "kernel": kernel.IMPLEMENTATION,
                 "peak_memory_mb": peak_memory_mb(), "player_states": len(sol.space),
                 "value_meaning": "expected turns to win alone"}
    elif objective == "duel":
        from .duel import solve_duel
        bar = Progress(f"solving {rs.name} duel", progress)
        try:
            sol = solve_duel(rs, progress=bar)
        finally:
            bar.close()
        model = sol.model
        values, states = model.table_values(sol.P), model.space.encode()
        extra = {"states": model.pairs, "player_states": model.players, "iterations": sol.passes,
                 "policy_rounds": sol.rounds, "linear_sweeps": sol.sweeps, "policy_fallback": sol.fallback,
                 "residual": sol.residual, "solve_seconds": sol.seconds, "kernel": kernel.IMPLEMENTATION,
                 "peak_memory_mb": peak_memory_mb(),
                 "value_meaning": "P(mover wins) for mover state (row) against opponent state (column)"}
        if model.equal_turns:
            extra["value_meaning"] = ("P(mover wins, a tie counted 1/2) for [seat of the mover (0 first, "
                                      "1 second), mover state, opponent state]")
            extra["last_turn_horizon"] = model.horizon
    else:
        raise TableError(f"unknown objective {objective!r}")
    folder = save_table(Path(write_target(tables_dir)), rs, objective, values, states, extra)
    from .tables import load_table
    return Solution(rs, objective, load_table(folder, rs, objective), solved_now=True)
