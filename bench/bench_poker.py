"""Poker dice: the time of an advice answer (start-up included) and of the full solve.

Targets (issue: poker dice): any advice answer under 0.5 s including start-up; the full
solve for up to 6 players under 10 s. The baseline beside the solve is the direct turn
DP (every part of the re-rollable dice tried at every state, one utility at a time),
written here, against the package's max-transform over the subset lattice; both give the
same values, which the script checks.

Usage: ``python bench/bench_poker.py [--players 2,3,4,6,8] [--rules poker --set k=v ...]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def advice_latency(args: list[str], runs: int = 5) -> list[float]:
    """Wall seconds of ``thousand advise ...`` in a fresh process (what a user waits)."""
    exe = shutil.which("thousand") or sys.executable
    cmd = [exe, "advise", *args] if exe != sys.executable else [exe, "-m", "thousand.cli", "advise", *args]
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        out.append(time.perf_counter() - t0)
        if r.returncode:
            raise SystemExit(f"advise failed: {r.stderr.strip()}")
    return out


def direct_turn(shape, rolls, U):
    """The baseline: for each utility and state, the max over every keep (no lattice)."""
    from thousand.engine.poker import KEEP_ID, _submultisets

    values = []
    choices = []
    for locked, free in shape.states:
        choices.append([KEEP_ID[tuple(sorted(locked + y))] for y in _submultisets(free) if len(y) < len(free)])
    width = max(len(c) for c in choices)
    cm = np.full((len(shape.states), width), len(KEEP_ID), dtype=np.intp)
    for i, c in enumerate(choices):
        cm[i, : len(c)] = c
    for u in np.atleast_2d(U):
        W = u[shape.roll_of_state]
        for _k in range(rolls - 1, 0, -1):
            C = shape.expect(W[None, :])[0]
            best = np.append(C, -np.inf)[cm].max(axis=1)
            W = np.maximum(u[shape.roll_of_state], best)
        values.append(W[shape.first] @ shape.start[shape.first])
    return np.array(values)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--players", default="2,3,4,5,6,8")
    ap.add_argument("--rules", default="poker")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    a = ap.parse_args()
    from thousand.engine.poker import solve_turn, turn_shape
    from thousand.rules import load_ruleset
    from thousand.solvers.poker import solve_poker

    rs = load_ruleset(a.rules, a.overrides)
    print(
        f"ruleset {rs.name} {' '.join(a.overrides)} (hash {rs.hash}), {rs.hands.count} hand strengths, "
        f"{os.cpu_count()} cores"
    )

    # 1. the turn DP: lattice vs direct, on the utilities of one game-solver batch
    rng = np.random.default_rng(1)
    U = rng.random((rs.hands.count, 252))
    shape = turn_shape(rs.lock_kept)
    t0 = time.perf_counter()
    lat = solve_turn(shape, rs.rolls, U).value
    t1 = time.perf_counter()
    base = direct_turn(shape, rs.rolls, U)
    t2 = time.perf_counter()
    print(
        f"turn DP, {len(U)} utilities: lattice {t1 - t0:.3f} s, direct baseline {t2 - t1:.3f} s "
        f"({(t2 - t1) / (t1 - t0):.1f}x); largest difference {np.abs(lat - base).max():.1e}"
    )

    # 2. the full solve for each player count (target: 6 players under 10 s)
    print(
        f"{'players':>7} {'solve s':>8} {'target s':>8} {'rounds':>6} {'residual':>9} {'P(replay)':>10} "
        f"{'seat 1':>9} {'last seat':>9} {'peak MB':>8}"
    )
    for n in [int(x) for x in a.players.split(",")]:
        t0 = time.perf_counter()
        sol = solve_poker(rs, n)
        dt = time.perf_counter() - t0
        v = sol.seat_values[n]
        print(
            f"{n:7d} {dt:8.2f} {'10' if n <= 6 else '-':>8} {sol.rounds[n]:6d} {sol.residual[n]:9.1e} "
            f"{sol.replay[n]:10.2e} {v[0]:9.6f} {v[-1]:9.6f} "
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:8.1f}",
            flush=True,
        )

    # 3. an advice answer in a fresh process (target: 0.5 s), from the stored table
    cache = tempfile.mkdtemp(prefix="bench-poker-")
    env_args = [a.rules] + [x for o in a.overrides for x in ("--set", o)]
    os.environ["XDG_CACHE_HOME"] = cache
    advice_latency([*env_args, "--roll", "6,6,3,2,1", "--after", "2"], runs=1)  # solves it if not shipped
    for label, extra in [
        ("first throw, 2 after", ["--roll", "6,6,3,2,1", "--after", "2"]),
        (
            "throw 2, to beat a full house",
            ["--roll", "6,6,3,2,1", "--throw", "2", "--rerollable", "3,2,1", "--to-beat", "full:6,2"],
        ),
    ]:
        times = advice_latency([*env_args, *extra])
        print(
            f"advice ({label}): median {statistics.median(times):.3f} s, max {max(times):.3f} s "
            f"(target 0.5 s) over {len(times)} runs, start-up included"
        )
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
