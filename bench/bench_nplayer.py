"""The N-player solver (thousand.solvers.nplayer) on three-player Pig (or ``--rules``: plain,
farkle, ...): states, time, peak memory, the certificate (the largest gain of a deviation)
and the mixed states, per goal; two players beside it against the duel solver, in the same
run.

    python bench/bench_nplayer.py [--rules pig] [--goals 20 50 100] [--players 3]
    python bench/bench_nplayer.py --rules plain --goals 500 1000
    python bench/bench_nplayer.py --rules farkle --goals 3000 --threads 1 2   # thread scaling
    python bench/bench_nplayer.py --rules classic --goals 150 --set "pits=[{low=50,exit=75}]" \
        --set barrel.threshold=100 --set "dump=[85]" --set barrel.max_falls=1 --set bolts.limit=2 \
        --set 'bolts.exempt=["unopened"]'
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

try:
    import thousand  # noqa: F401
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from thousand.engine.player import Moves  # noqa: E402
from thousand.rules import load_ruleset  # noqa: E402
from thousand.solvers.duel import solve_duel  # noqa: E402
from thousand.solvers.nplayer import NPlayerError, solve_nplayer  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="pig", help="a preset (its goal replaced by each of --goals)")
    ap.add_argument("--goals", type=int, nargs="+", default=[20, 50, 100])
    ap.add_argument("--players", type=int, default=3)
    ap.add_argument("--set", action="append", default=[], help="a rule override, as for thousand (repeatable)")
    ap.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=[0],
        help="solve the N-player game with each of these thread counts (0: every core), one "
        "after the other, and check that the values agree",
    )
    a = ap.parse_args()
    for goal in a.goals:
        rs = load_ruleset(a.rules, (f"goal={goal}", *a.set))
        name = f"{a.rules} goal {goal}"
        t0 = time.perf_counter()
        two = solve_nplayer(rs, 2)
        t2 = time.perf_counter() - t0
        t0 = time.perf_counter()
        duel = solve_duel(rs)
        td = time.perf_counter() - t0
        i0 = duel.model.space.lookup(Moves(rs).initial())
        print(
            f"{name}, 2 players: N-player solver {t2:.2f} s, duel solver {td:.2f} s, "
            f"P(first) {two.start[0]:.12f} and {float(duel.P[i0, i0]):.12f}"
        )
        first = None
        for threads in a.threads:
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                sol = solve_nplayer(rs, a.players, threads=threads)
            except NPlayerError as exc:
                print(f"{name}, {a.players} players: REFUSED after {time.perf_counter() - t0:.1f} s: {exc}")
                break
            cpu = time.process_time() - c0
            same = (
                ""
                if first is None
                else f", largest difference from the first run {float(np.max(np.abs(sol.V - first.V))):.1e}"
            )
            first = first or sol
            print(
                f"{name}, {a.players} players, threads {threads or 'all'}: {len(sol.space) ** a.players:,} states, "
                f"{sol.seconds:.1f} s ({cpu:.1f} s CPU), {sol.passes} sweeps over the levels, "
                f"peak {peak_mb():.0f} MB, certificate {sol.certificate:.1e}, mixed states {len(sol.mixed)}, "
                f"seats {', '.join(f'{v:.6f}' for v in sol.start)}{same}"
            )


if __name__ == "__main__":
    main()
