"""The duel out of core (thousand.solvers.store): a derived six-dice duel solved with its values
in memory and with them in a memory-mapped file under a budget smaller than the table,
in one run; the same values, the time, the memory.

Usage: ``python bench/bench_outofcore.py [--goal 400] [--budget-mb 0.5] [--threads K]``

The ruleset is six-dice with ``goal=G``, ``barrel.threshold=G-50`` and the pits and barrel
attempts and falls off (the derived six-dice duels of docs/solver.md), ``equal_turns``
kept. Each mode runs in a fresh process (its own peak resident memory), both by passes
alone (the out-of-core solve keeps to passes without acceleration; the in-memory one
accelerates them). Printed per mode: passes, seconds (wall and CPU), the Bellman
residual, peak resident MB of the process, and for the store the largest part of it
mapped in the process at any release (read from /proc/self/pagemap) against the budget.
Then the largest difference over the solved pairs, and the full preset's pass time
projected from the measured CPU time per pair and pass (its turns are longer, so it is
a lower bound).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import json, resource, sys, time
from thousand.solvers.duel import DuelModel, solve_duel
from thousand.rules import load_ruleset
from thousand.solvers.store import ValueStore
import numpy as np
goal, mode, out, budget, threads = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
rs = load_ruleset("six-dice", [f"goal={goal}", f"barrel.threshold={goal - 50}", "pits=[]", "pit_attempts=0",
                               "barrel.attempts=0", "barrel.max_falls=0", "barrel.fall_to=penalty"])
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])  # noqa: E731
model = DuelModel(rs)
st = ValueStore(out, model.n, int(budget * 2**20), measure=True) if mode == "store" else None
t0, c0 = time.perf_counter(), cpu()
sol = solve_duel(rs, model=model, method="passes", store=st, threads=threads)
t1, c1 = time.perf_counter(), cpu()
if st is None:
    np.save(out, sol.P)
else:
    st.close()
movers, lo, hi = model.opponents()
print(json.dumps({"states": model.n, "pairs": int(np.sum(hi - lo)), "table_mb": model.n ** 2 * 8 / 2**20,
                  "passes": sol.passes, "solve_s": t1 - t0, "cpu_s": c1 - c0, "residual": sol.residual,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "store_peak_mb": st.peak_resident / 2**20 if st else None,
                  "budget_mb": st.budget / 2**20 if st else None}))
"""

SIX_DICE_PAIRS = 1_802_881_152  # the preset's cross-seat pairs (docs/solver.md)


def child(goal: int, mode: str, out: str, budget: float, threads: int) -> dict:
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(goal), mode, out, str(budget), str(threads)], capture_output=True, text=True
    )
    if r.returncode:
        sys.exit(f"{mode}: {r.stderr.strip().splitlines()[-1]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def largest_difference(a: str, b: str, n: int) -> float:
    """Over the cross-seat pairs (equal_turns: seat blocks), read a block of rows at a time."""
    A, B = np.load(a, mmap_mode="r"), np.load(b, mmap_mode="r")
    m = n // 2
    worst = 0.0
    for r0 in range(0, n, 256):
        rows = np.arange(r0, min(n, r0 + 256))
        for lo in (0, m):
            sel = rows[(rows < m) == (lo == m)]
            if len(sel):
                worst = max(worst, float(np.max(np.abs(A[sel, lo : lo + m] - B[sel, lo : lo + m]))))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goal", type=int, default=400)
    ap.add_argument("--budget-mb", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        mem = child(a.goal, "memory", str(Path(d) / "memory.npy"), a.budget_mb, a.threads)
        ooc = child(a.goal, "store", str(Path(d) / "store.npy"), a.budget_mb, a.threads)
        diff = largest_difference(str(Path(d) / "memory.npy"), str(Path(d) / "store.npy"), mem["states"])
    print(
        f"six-dice derived, goal {a.goal}: {mem['states']:,} states (both seats), {mem['pairs']:,} pairs, "
        f"value table {mem['table_mb']:.2f} MB"
    )
    print(
        f"{'mode':<14}{'passes':>7}{'wall s':>9}{'CPU s':>9}{'residual':>10}{'peak MB':>9}"
        f"{'store resident MB':>19}{'us/pair/pass CPU':>18}"
    )
    for name, r in (("in memory", mem), ("out of core", ooc)):
        res = "" if r["store_peak_mb"] is None else f"{r['store_peak_mb']:.3f} of {r['budget_mb']:.3f}"
        rate = r["cpu_s"] / (r["pairs"] * r["passes"]) * 1e6
        print(
            f"{name:<14}{r['passes']:>7}{r['solve_s']:>9.1f}{r['cpu_s']:>9.1f}{r['residual']:>10.1e}"
            f"{r['peak_mb']:>9.0f}{res:>19}{rate:>18.1f}"
        )
    print(f"largest difference over the solved pairs: {diff:.1e}")
    rate = ooc["cpu_s"] / (ooc["pairs"] * ooc["passes"])
    print(
        f"full six-dice at this CPU rate: {rate * SIX_DICE_PAIRS / 3600:,.0f} core-hours per pass "
        f"(a lower bound: its turns are longer), {SIX_DICE_PAIRS * 8 / 2**30:.1f} GiB of cross-seat values"
    )


if __name__ == "__main__":
    main()
