"""Race (solitaire) solve of every preset: states, time and peak memory.

Each preset is solved in a fresh process, so that its peak resident memory is
its own. Usage: ``python bench/bench_race.py [PRESET ...]``.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
from thousand import kernel
from thousand.engine.player import Moves
from thousand.solvers.race import solve_race
from thousand.rules import load_ruleset
from thousand.engine.states import build_state_space
rs = load_ruleset(sys.argv[1])
t0 = time.perf_counter()
space = build_state_space(rs)
t1 = time.perf_counter()
sol = solve_race(rs, space=space)
t2 = time.perf_counter()
print(json.dumps({"preset": rs.name, "states": len(space), "build_s": t1 - t0, "solve_s": t2 - t1,
                  "iterations": sol.iterations, "residual": sol.residual,
                  "expected_turns": float(sol.turns[space.index[Moves(rs).initial()]]),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "kernel": kernel.IMPLEMENTATION}))
"""


def main(names: list[str]) -> None:
    if not names:
        from thousand.rules import preset_names

        names = preset_names("1000")
    print(
        f"{'preset':18} {'states':>7} {'build s':>8} {'solve s':>8} {'iter':>5} {'residual':>9} "
        f"{'E[turns]':>12} {'peak MB':>8}"
    )
    for name in names:
        out = subprocess.run([sys.executable, "-c", CHILD, name], capture_output=True, text=True)
        if out.returncode:
            print(f"{name:18} failed: {out.stderr.strip().splitlines()[-1]}")
            continue
        r = json.loads(out.stdout)
        print(
            f"{r['preset']:18} {r['states']:7d} {r['build_s']:8.2f} {r['solve_s']:8.2f} {r['iterations']:5d} "
            f"{r['residual']:9.1e} {r['expected_turns']:12.6f} {r['peak_mb']:8.1f}",
            flush=True,
        )
    print(f"kernel: {r['kernel'] if names else '-'}")


if __name__ == "__main__":
    main(sys.argv[1:])
