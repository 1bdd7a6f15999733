"""Duel solve: time, peak memory and pair states per second, and the textbook baseline.

Each solve runs in a fresh process so that its peak resident memory is its own.
Usage: ``python bench/bench_duel.py [--baseline] [--passes] [--threads K] [PRESET ...]``
(default presets: plain, pig, farkle, farkle-cardgames, classic). ``--passes`` also
times each preset with Gauss-Seidel passes alone (no policy iteration), the method
policy iteration replaced for rulesets with penalties; ``--threads K`` runs the
solver on K threads (default: every core).

``--baseline`` also runs the textbook method written in C (``bench/textbook_duel.c``,
compiled here with ``cc -O3``: in-place Gauss-Seidel sweeps over all pairs, one
scalar turn DP per pair, to a change below 1e-12, one thread) on ``plain`` in the same
run, checks that it reaches the solver's values, and prints the solver's wall and CPU
time as a share of the textbook's.

Columns: pairs, solve seconds (wall, and CPU over all threads), turn-DP passes over
all pairs (policy rounds among them; or in brackets the pairs of the interface whose
interface passes solved it), sweeps of the policies' linear systems, the
final Bellman residual, P(first player wins), peak resident MB, and pair
evaluations per second (pairs x passes / wall seconds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

CHILD = r"""
import json, resource, sys, time
from thousand import kernel
from thousand.solvers.duel import DuelModel, solve_duel
from thousand.engine.player import Moves
from thousand.rules import load_ruleset
import numpy as np
rs = load_ruleset(sys.argv[1])
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])  # noqa: E731  user + system
t0 = time.perf_counter()
model = DuelModel(rs)
t1, c1 = time.perf_counter(), cpu()
sol = solve_duel(rs, model=model, method={"levels": "policy"}.get(sys.argv[2], sys.argv[2]),
                 threads=int(sys.argv[3]))
t2, c2 = time.perf_counter(), cpu()
if len(sys.argv) > 4:
    np.save(sys.argv[4], sol.P)
i = model.space.index[Moves(rs).initial()]
print(json.dumps({"preset": rs.name, "method": sys.argv[2], "pairs": model.n ** 2, "build_s": t1 - t0,
                  "solve_s": t2 - t1, "cpu_s": c2 - c1, "passes": sol.passes, "residual": sol.residual,
                  "rounds": getattr(sol, "rounds", 0), "sweeps": getattr(sol, "sweeps", 0),
                  "interface": getattr(sol, "interface", 0),
                  "p_first": float(sol.P[i, i]),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "kernel": kernel.IMPLEMENTATION}))
"""


def run(name: str, method: str, threads: int, save: str | None = None) -> dict | None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, name, method, str(threads), *([save] if save else [])],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        print(f"{name:18} {method:9} failed: {tail}", flush=True)
        return None
    r = json.loads(out.stdout)
    rate = r["pairs"] * r["passes"] / r["solve_s"] if r["solve_s"] else float("nan")
    passes = f"{r['passes']} [{r['interface']}]" if r.get("interface") else f"{r['passes']} ({r['rounds']})"
    print(
        f"{r['preset']:18} {method:9} {r['pairs']:10d} {r['solve_s']:9.2f} {r['cpu_s']:8.2f} {passes:>9} "
        f"{r['sweeps']:6d} {r['residual']:9.1e} {r['p_first']:.12f} {r['peak_mb']:8.1f} {rate:12.0f}  "
        f"({r['kernel']})",
        flush=True,
    )
    return r


def export_textbook(name: str, path: str) -> int:
    """Write the ruleset's pairs and roll classes in the layout textbook_duel.c reads,
    refusing rulesets outside what it implements; returns the initial state's index."""
    from thousand.engine.player import Moves
    from thousand.engine.states import WIN_INDEX
    from thousand.rules import load_ruleset
    from thousand.solvers.duel import DuelModel

    rs = load_ruleset(name)
    model = DuelModel(rs)
    tab, p = model.table, model.plans
    N = rs.dice
    if rs.keep != "all" or rs.hot_dice != "must_roll" or rs.equal_turns or p.forced_ok.any() or tab.cls_instant.any():
        raise SystemExit(
            f"{name}: the C textbook covers keep = all, hot dice must be rolled, no forced ends, "
            "no instant wins and no equal_turns"
        )
    counts = np.diff(tab.opt_ptr)
    if counts.max() > 1:
        raise SystemExit(f"{name}: more than one set-aside per roll class")
    last = p.ptr[1:] - 1
    if (np.diff(p.ptr) < 2).any() or not (p.stop_ok[last].all() and (p.next[last] == WIN_INDEX).all()):
        raise SystemExit(f"{name}: every turn must run over a total or more, and banking at its horizon must win")
    points = np.where(counts == 1, tab.opt_points[np.minimum(tab.opt_ptr[:-1], len(tab.opt_points) - 1)], -1)
    used = np.where(counts == 1, tab.opt_used[np.minimum(tab.opt_ptr[:-1], len(tab.opt_used) - 1)], 0)
    nxt = np.where(p.next == WIN_INDEX, -1, p.next)
    with open(path, "wb") as f:
        for arr, dt in (
            (np.array([model.n, N, len(tab.cls_prob), len(p.next)]), np.int64),
            (tab.cls_ptr, np.int64),
            (tab.cls_prob, np.float64),
            (points, np.int64),
            (used, np.int64),
            (p.ptr, np.int64),
            (p.stop_ok, np.uint8),
            (nxt, np.int64),
            (p.bust, np.int64),
        ):
            np.ascontiguousarray(arr, dtype=dt).tofile(f)
    return model.space.index[Moves(rs).initial()]


def textbook_baseline(threads: int) -> None:
    """The solver and the C textbook on plain, one after the other, and the ratios."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        print("textbook C baseline: no C compiler found", flush=True)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        exe, data, out, mine = (os.path.join(tmp, f) for f in ("textbook_duel", "plain.bin", "P.bin", "P.npy"))
        subprocess.run([cc, "-O3", "-o", exe, os.path.join(here, "textbook_duel.c"), "-lm"], check=True)
        i = export_textbook("plain", data)
        r = run("plain", "levels", threads, save=mine)
        done = subprocess.run([exe, data, out, "1e-12"], capture_output=True, text=True, check=True)
        sweeps, change, cpu, wall = done.stdout.split()
        P = np.load(mine)
        C = np.fromfile(out).reshape(P.shape)
        first = C[i, i]
        print(
            f"{'plain':18} {'textbook':9} {P.size:10d} {float(wall):9.2f} {float(cpu):8.2f} {sweeps:>9} "
            f"{'':6} {float(change):9.1e} {first:.12f}  "
            f"(C, -O3, one thread; largest difference from the solver's values {np.abs(C - P).max():.1e})",
            flush=True,
        )
        if r:
            print(
                f"plain: solver / textbook C = {r['solve_s'] / float(wall):.3f} wall, "
                f"{r['cpu_s'] / float(cpu):.3f} CPU",
                flush=True,
            )


def main(argv: list[str]) -> None:
    threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else 0
    rest = [a for i, a in enumerate(argv) if not (a == "--threads" or (i and argv[i - 1] == "--threads"))]
    names = [a for a in rest if not a.startswith("--")] or ["plain", "pig", "farkle", "farkle-cardgames", "classic"]
    print(
        f"{'preset':18} {'method':9} {'pairs':>10} {'solve s':>9} {'CPU s':>8} {'passes':>9} {'sweeps':>6} "
        f"{'residual':>9} {'P(first wins)':14} {'peak MB':>8} {'pair-evals/s':>12}"
    )
    if "--baseline" in argv:
        textbook_baseline(threads)
    for name in names:
        if "--baseline" in argv and name == "plain":
            continue  # run beside the baseline above
        run(name, "levels", threads)
        if "--passes" in argv:
            run(name, "passes", threads)


if __name__ == "__main__":
    main(sys.argv[1:])
