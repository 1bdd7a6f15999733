"""Tables solved in the background while the page shows progress.

The advice of a game needs a table (the race or the duel of its ruleset); when the table
is neither shipped nor stored, :meth:`Solves.solution` starts one solve per (ruleset,
objective) in a thread and raises :class:`Solving`, whose progress (the time so far against
the estimate of :func:`thousand.storage.solve.estimate`) the page polls. The finished table is
stored as the command line stores it, so a restart finds it.
"""

from __future__ import annotations

import threading
import time

from thousand.base.errors import ThousandError
from thousand.rules.ruleset import Ruleset

__all__ = ["Job", "Solves", "Solving"]


class Solving(Exception):
    """A table this answer needs is being solved: ``progress()`` says how far it is."""

    def __init__(self, job: Job):
        super().__init__(job.objective)
        self.job = job


class Job:
    def __init__(self, rs: Ruleset, objective: str, tables_dir: str | None):
        from thousand.storage.solve import estimate

        self.rs, self.objective, self.tables_dir = rs, objective, tables_dir
        self.expected = float(estimate(rs, objective)["seconds"][1])
        self.started = time.monotonic()
        self.error: str | None = None
        self.solution = None
        self.thread = threading.Thread(target=self._run, name=f"solve {rs.name} {objective}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from thousand.storage.solve import solve_objective

        try:
            self.solution = solve_objective(self.rs, self.objective, self.tables_dir, progress=False)
        except ThousandError as exc:
            self.error = str(exc)
        except MemoryError:
            self.error = f"{self.rs.name}: out of memory while solving the {self.objective}"

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()

    def progress(self) -> dict:
        elapsed = time.monotonic() - self.started
        frac = min(elapsed / self.expected, 0.99) if self.expected > 0 else None
        return {
            "status": "failed" if self.done and self.error else "done" if self.done else "solving",
            "error": self.error,
            "ruleset": self.rs.name,
            "objective": self.objective,
            "elapsed": round(elapsed, 1),
            "expected": round(self.expected, 1),
            "fraction": frac,
        }


class Solves:
    """The solutions the server has, and the solves it is running."""

    def __init__(self, tables_dir: str | None):
        self.tables_dir = tables_dir
        self._jobs: dict[tuple[str, str], Job] = {}
        self._guard = threading.Lock()

    def start(self, rs: Ruleset, objective: str) -> Job:
        """The solve of ``objective`` for ``rs``: the one running (or finished) if there is one,
        else a new one -- so two phones asking at once start one solve, not two."""
        with self._guard:
            job = self._jobs.get((rs.hash, objective))
            if job is None:
                job = self._jobs[(rs.hash, objective)] = Job(rs, objective, self.tables_dir)
            return job

    def job(self, rs: Ruleset, objective: str) -> Job | None:
        """The solve of ``objective`` for ``rs`` this server started, if any."""
        with self._guard:
            return self._jobs.get((rs.hash, objective))

    def solution(self, rs: Ruleset, objective: str, tables_dir: str | None = None):
        """The solution of ``objective`` for ``rs`` if its table exists (or a solve has
        finished); otherwise :class:`Solving` (a solve is started on the first ask)."""
        from thousand.storage.files import find_table
        from thousand.storage.solve import solve_objective

        key = (rs.hash, objective)
        with self._guard:
            job = self._jobs.get(key)
            # a solve writes its table (atomically) a moment before its thread ends: what is on
            # disk is the answer, as the advisors' own look at the disk says; it is read as its
            # objective reads its tables (the geometric one with its race table)
            if (job is None or not job.done) and find_table(rs, objective, self.tables_dir) is not None:
                return solve_objective(rs, objective, self.tables_dir, progress=False)
            if job is None:
                job = self._jobs[key] = Job(rs, objective, self.tables_dir)
        if not job.done:
            raise Solving(job)
        if job.error is not None:  # kept: the same question gets the same refusal, not a new solve
            raise ThousandError(job.error)
        return job.solution
