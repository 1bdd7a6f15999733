"""Duel solve: time, peak memory and pair states per second, and the textbook baseline.

Each solve runs in a fresh process so that its peak resident memory is its own.
Usage: ``python bench/bench_duel.py [--baseline] [--passes] [PRESET ...]`` (default
presets: plain, pig, farkle, farkle-cardgames, classic). ``--baseline`` also times the
textbook method (in-place Gauss-Seidel sweeps over all pairs, one scalar turn DP
per pair, to a change below 1e-12) on ``plain``; ``--passes`` also times each preset
with Gauss-Seidel passes alone (no policy iteration), the method policy iteration
replaced for rulesets with penalties.

Columns: pairs, solve seconds, turn-DP passes over all pairs (policy rounds among
them), sweeps of the policies' linear systems, the final Bellman residual, P(first
player wins), peak resident MB, and pair evaluations per second (pairs x passes /
seconds).
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
from thousand import kernel
from thousand.duel import DuelModel, solve_duel
from thousand.game import Moves
from thousand.rules import load_ruleset
rs = load_ruleset(sys.argv[1])
t0 = time.perf_counter()
model = DuelModel(rs)
t1 = time.perf_counter()
sol = solve_duel(rs, model=model, method={"levels": "policy"}.get(sys.argv[2], sys.argv[2]))
t2 = time.perf_counter()
i = model.space.index[Moves(rs).initial()]
print(json.dumps({"preset": rs.name, "method": sys.argv[2], "pairs": model.n ** 2, "build_s": t1 - t0,
                  "solve_s": t2 - t1, "passes": sol.passes, "residual": sol.residual,
                  "rounds": getattr(sol, "rounds", 0), "sweeps": getattr(sol, "sweeps", 0),
                  "p_first": float(sol.P[i, i]),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "kernel": kernel.IMPLEMENTATION}))
"""


def run(name: str, method: str) -> None:
    out = subprocess.run([sys.executable, "-c", CHILD, name, method], capture_output=True, text=True)
    if out.returncode:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        print(f"{name:18} {method:9} failed: {tail}", flush=True)
        return
    r = json.loads(out.stdout)
    rate = r["pairs"] * r["passes"] / r["solve_s"] if r["solve_s"] else float("nan")
    passes = f"{r['passes']} ({r['rounds']})"
    print(f"{r['preset']:18} {method:9} {r['pairs']:10d} {r['solve_s']:9.1f} {passes:>9} {r['sweeps']:6d} "
          f"{r['residual']:9.1e} {r['p_first']:.12f} {r['peak_mb']:8.1f} {rate:12.0f}  ({r['kernel']})", flush=True)


def main(argv: list[str]) -> None:
    baseline = "--baseline" in argv
    names = [a for a in argv if not a.startswith("--")] or ["plain", "pig", "farkle", "farkle-cardgames",
                                                              "classic"]
    print(f"{'preset':18} {'method':9} {'pairs':>10} {'solve s':>9} {'passes':>9} {'sweeps':>6} {'residual':>9} "
          f"{'P(first wins)':14} {'peak MB':>8} {'pair-evals/s':>12}")
    for name in names:
        run(name, "levels")
        if "--passes" in argv:
            run(name, "passes")
    if baseline:
        run("plain", "textbook")


if __name__ == "__main__":
    main(sys.argv[1:])
