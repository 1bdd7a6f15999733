"""Game simulator throughput: games per second of the built-in bots.

Each case runs in a fresh process (so its peak memory is its own): the bots'
policy tables are built once (time and size printed; a missing duel table is
solved first and cached, which is not counted), then games are played with one
thread and with every thread. ``games/s`` is wall-clock; ``per CPU-s`` divides
by the process's CPU time, which is the per-core figure when other work shares
the machine.

Usage: ``python bench/bench_sim.py [--games N] [CASE ...]`` with CASE like
``plain:optimal:optimal`` (default: plain, pig and farkle optimal vs optimal;
classic hold:300 vs hold:300 and cautious vs random).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

DEFAULT = [
    "plain:optimal:optimal",
    "pig:optimal:optimal",
    "farkle:optimal:optimal",
    "classic:hold:300:hold:300",
    "classic:cautious:random",
    "plain:hold:300:hold:300",
]

CHILD = r"""
import json, os, resource, sys, time
from thousand import simulate
from thousand.rules import load_ruleset
from thousand.solve import solve_objective
name, first, second, games = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rs = load_ruleset(name)
if "optimal" in (first, second):
    solve_objective(rs, "duel", progress=False)   # solved and cached if missing: not timed
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
warm = simulate.simulate_duel(rs, first, second, 100, seed=1)
plans = simulate._duel_plans(rs)
bots = [simulate.parse_builtin(b) for b in (first, second)]
policy_mb = sum(simulate.policy_bytes(rs, plans, True) for b in set(bots) if b.table == "duel") / 2 ** 20
out = {"case": f"{name} {first} vs {second}", "states": len(plans.ptr) - 1,
       "policy_s": warm.policy_seconds, "policy_mb": policy_mb}
for threads in (1, 0):
    c0 = time.process_time()
    r = simulate.simulate_duel(rs, first, second, games, seed=7, threads=threads)
    cpu = time.process_time() - c0
    key = "t1" if threads == 1 else "all"
    out[key] = {"games_s": r.games / r.seconds, "per_cpu_s": r.games / cpu, "p_first": r.first_win_rate,
                "ci95": r.ci95, "turns": r.mean_turns, "impl": r.implementation}
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["threads_all"] = os.cpu_count()
print(json.dumps(out))
"""


def run(case: str, games: int) -> None:
    parts = case.split(":")
    name, rest = parts[0], parts[1:]
    # bots may contain a colon (hold:N)
    bots, i = [], 0
    while i < len(rest):
        if rest[i] == "hold" and i + 1 < len(rest):
            bots.append(f"hold:{rest[i + 1]}")
            i += 2
        else:
            bots.append(rest[i])
            i += 1
    if len(bots) != 2:
        sys.exit(f"bad case {case!r}: want RULES:BOT:BOT")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, name, bots[0], bots[1], str(games)], capture_output=True, text=True
    )
    if out.returncode:
        print(f"{case}: failed\n{out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ''}")
        return
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"{r['case']}: {r['states']} player states; policy {r['policy_s']:.2f} s, {r['policy_mb']:.1f} MB; "
        f"peak RSS {r['peak_mb']:.0f} MB"
    )
    for key, label in (("t1", "1 thread"), ("all", f"{r['threads_all']} threads")):
        s = r[key]
        print(
            f"  {label:>9}: {s['games_s']:>11,.0f} games/s  ({s['per_cpu_s']:>11,.0f} per CPU-s)  "
            f"P(first wins) {s['p_first']:.4f} ± {s['ci95']:.4f}, {s['turns']:.1f} turns/game [{s['impl']}]"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200_000)
    ap.add_argument("cases", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    for case in args.cases:
        run(case, args.games)


if __name__ == "__main__":
    main()
