"""Time one turn DP call of the ``plain`` preset: compiled kernel vs the pure twin;
then the duel's hot loop ``duel_level``.

    python bench/bench_kernel.py [--T 200] [--K 1 1000] [--grad] [--repeat 5] [--no-duel]

The turn: totals 0..T units (T = 200 units = 1000 points), banking allowed
from 10 units (50 points), the value of banking t = t, a bust worth 0, no
forced ends; K identical columns. Prints the best time per call over a few
repeats (the machine may be shared: the minimum is the least disturbed run).

duel_level: the ``plain`` duel model, every mover against every opponent (the
residual pass, gradient on) and every mover against one opponent (K = 1, as in
most levels of a solve), with a random Q: pair evaluations per second of the
compiled ``duel_level`` (one thread, and OpenMP's default) and of the Python loop
over the compiled ``turn_dp`` it replaces.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import thousand  # noqa: F401
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from thousand import kernel  # noqa: E402
from thousand.rules import load_ruleset  # noqa: E402


def _inputs(T: int, K: int):
    stop_ok = np.ones(T + 1, np.uint8)
    stop_ok[:10] = 0
    stop_val = np.ascontiguousarray(np.broadcast_to(np.arange(T + 1, dtype=float)[:, None], (T + 1, K)))
    forced_ok = np.zeros(T + 1, np.uint8)
    forced_val = np.zeros((T + 1, K))
    return stop_ok, stop_val, forced_ok, forced_val, np.zeros(K), np.full(K, float(T))


def _time_call(fn, budget: float, repeat: int) -> float:
    """Best seconds per call: calls grouped so that one group lasts about ``budget``."""
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    number = max(1, int(budget / one))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _fmt(sec: float) -> str:
    if sec < 1e-3:
        return f"{sec * 1e6:9.1f} us"
    if sec < 1.0:
        return f"{sec * 1e3:9.2f} ms"
    return f"{sec:9.2f} s "


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--T", type=int, default=200, help="largest total, in units (default 200)")
    ap.add_argument("--K", type=int, nargs="+", default=[1, 1000], help="columns (default 1 1000)")
    ap.add_argument("--grad", action="store_true", help="also compute the bust derivative")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--budget", type=float, default=0.3, help="seconds per timed group")
    ap.add_argument("--no-duel", action="store_true", help="skip the duel_level timing")
    args = ap.parse_args(argv)

    rs = load_ruleset("plain")
    try:
        kernel.backend("compiled")
        impls = [("compiled", False), ("pure", True)]
    except ImportError:
        print("compiled kernel not built: timing the pure twin only", file=sys.stderr)
        impls = [("pure", True)]
    tables = {name: kernel.backend(name).roll_table(rs) for name, _ in impls}
    print(
        f"turn_dp, preset plain ({rs.dice} dice, unit {rs.unit}), T = {args.T} units, grad = {args.grad}, full = False"
    )
    print(f"{'K':>6}  " + "  ".join(f"{name:>12}" for name, _ in impls) + ("   speed-up" if len(impls) == 2 else ""))
    for K in args.K:
        inputs = _inputs(args.T, K)
        times, starts = [], []
        for name, _pure in impls:
            tab = tables[name]

            def call(tab=tab):
                return kernel.turn_dp(tab, *inputs, grad=args.grad)

            starts.append(call().start)
            times.append(_time_call(call, args.budget, args.repeat))
        line = f"{K:>6}  " + "  ".join(f"{_fmt(t):>12}" for t in times)
        if len(times) == 2:
            line += f"   {times[1] / times[0]:8.0f}x"
            diff = float(np.max(np.abs(starts[0] - starts[1])))
            line += f"   (max |start difference| {diff:.1e})"
        print(line, flush=True)
    if not args.no_duel:
        if len(impls) < 2:
            print("duel_level: compiled kernel not built, skipped", file=sys.stderr)
        else:
            bench_duel(rs, tables["compiled"], args.repeat)
    return 0


def bench_duel(rs, tab, repeat: int) -> None:
    """Pair evaluations per second of duel_level: compiled vs the Python loop."""
    from thousand.kernel import _pure
    from thousand.solvers.duel import DuelModel

    impl = kernel.backend("compiled").impl
    model = DuelModel(rs, table=tab)
    p = model.plans
    n = model.n
    Q = np.random.default_rng(0).random((n, n))
    movers = np.arange(n, dtype=np.int64)
    workloads = [
        ("every mover x every opponent", np.zeros(n, np.int64), np.full(n, n, np.int64)),
        ("every mover x one opponent", movers.copy(), movers + 1),
    ]
    print(f"\nduel_level, preset plain: {n} player states, grad = True, T up to {int(np.diff(p.ptr).max()) - 1} units")
    for title, lo, hi in workloads:
        pairs = int((hi - lo).sum())
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(hi - lo, out=ptr[1:])
        fixed = (tab.rolls, p.native(tab.backend), Q, movers, lo, hi)
        pure_plans = p.native(kernel.backend("pure"))

        def loop(rolls, _plans, Q, movers, lo, hi, v, d, ptr, grad, threads):
            """duel_level as a Python loop over the movers, each one compiled turn_dp call"""
            for j in range(len(movers)):
                stop_ok, forced_ok, _, _, ends, bust = _pure._mover_ends(pure_plans, Q, movers[j], lo[j], hi[j])
                r = impl.turn_dp(rolls, stop_ok, ends, forced_ok, ends, bust, np.ones(hi[j] - lo[j]), grad, False)
                v[ptr[j] : ptr[j + 1]], d[ptr[j] : ptr[j + 1]] = r[0], r[1]

        runs = [
            ("compiled, 1 thread", impl.duel_level, 1),
            ("compiled, OpenMP default", impl.duel_level, 0),
            ("Python loop over turn_dp", loop, 0),
        ]
        print(f"{title} ({pairs} pairs)")
        print(f"  {'':26}  {'per call':>12}  {'pairs/s':>12}")
        ref = None
        for name, fn, threads in runs:
            v = np.empty(pairs)
            d = np.empty(pairs)

            def call(fn=fn, v=v, d=d, threads=threads, fixed=fixed, ptr=ptr):
                fn(*fixed, v, d, ptr, True, threads)

            sec = _time_call(call, 0.5, repeat)
            line = f"  {name:26}  {_fmt(sec):>12}  {pairs / sec:12.0f}"
            if ref is None:
                ref = (v.copy(), d.copy())
            else:
                diff = max(float(np.max(np.abs(v - ref[0]))), float(np.max(np.abs(d - ref[1]))))
                line += f"   (max |difference| {diff:.1e})"
            print(line, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
