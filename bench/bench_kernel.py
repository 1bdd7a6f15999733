"""Time one turn DP call of the ``plain`` preset: compiled kernel vs the pure twin.

    python bench/bench_kernel.py [--T 200] [--K 1 1000] [--grad] [--repeat 5]

The turn: totals 0..T units (T = 200 units = 1000 points), banking allowed
from 10 units (50 points), the value of banking t = t, a bust worth 0, no
forced ends; K identical columns. Prints the best time per call over a few
repeats (the machine may be shared: the minimum is the least disturbed run).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import solver  # noqa: F401
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver import kernel  # noqa: E402
from solver.rules import load_ruleset  # noqa: E402


def _inputs(T: int, K: int):
    stop_ok = np.ones(T + 1, np.uint8)
    stop_ok[:10] = 0
    stop_val = np.ascontiguousarray(np.broadcast_to(np.arange(T + 1, dtype=float)[:, None],
                                                    (T + 1, K)))
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
    args = ap.parse_args(argv)

    rs = load_ruleset("plain")
    try:
        kernel.implementation(pure=False)
        impls = [("compiled", False), ("pure", True)]
    except ImportError:
        print("compiled kernel not built: timing the pure twin only", file=sys.stderr)
        impls = [("pure", True)]
    tables = {name: kernel.roll_table(rs, pure=pure) for name, pure in impls}
    print(f"turn_dp, preset plain ({rs.dice} dice, unit {rs.unit}), T = {args.T} units, "
          f"grad = {args.grad}, full = False")
    print(f"{'K':>6}  " + "  ".join(f"{name:>12}" for name, _ in impls)
          + ("   speed-up" if len(impls) == 2 else ""))
    for K in args.K:
        inputs = _inputs(args.T, K)
        times, starts = [], []
        for name, pure in impls:
            tab = tables[name]

            def call(tab=tab, pure=pure):
                return kernel.turn_dp(tab, *inputs, grad=args.grad, pure=pure)

            starts.append(call().start)
            times.append(_time_call(call, args.budget, args.repeat))
        line = f"{K:>6}  " + "  ".join(f"{_fmt(t):>12}" for t in times)
        if len(times) == 2:
            line += f"   {times[1] / times[0]:8.0f}x"
            diff = float(np.max(np.abs(starts[0] - starts[1])))
            line += f"   (max |start difference| {diff:.1e})"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
