"""The duel on a Dask cluster: its overhead on this machine, and what the full six-dice duel
would cost on a real cluster.

Usage: ``python bench/bench_cluster.py [--price USD_PER_VCPU_HOUR] [--bandwidth GB_PER_S]
[--skip-full]``. In one run:

1. A derived six-dice duel that one machine solves (goal 100, a pit [40, 60), no barrel:
   168 player states, 56,448 pairs, equal turns, bolts, the pit's roll-back) by
   Gauss-Seidel passes in this process (one thread), then on ``local:1`` and ``local:2``
   (``thousand.solvers.cluster``): wall seconds, seconds per pair and pass, the overhead
   ratio (a cluster's seconds per pair-pass times its workers, over the single process's),
   the coordinator's CPU seconds and the bytes that travelled per pair-pass, the workers'
   peak memory, and the largest difference of the values (they must agree to 1e-12).
2. The full six-dice duel's model (30,024 player states, 1,802,881,152 pairs): the seconds
   and memory to build it (what every worker does first), and the turn DPs of a block's
   pairs timed on a sample of levels (the pairs whose opponent is in a random 1/64 of the
   states, as a block holds them), one thread.
3. The projection for 16, 64 and 256 workers: wall time, memory per worker, CPU-hours and
   their price, for the passes the derived game took and for three times as many. The model:

       wall = build + passes * (pairs * t_dp * overhead / W + pairs * (c_coord + bytes / bandwidth))

   ``t_dp`` from 2, ``overhead`` the 2-worker ratio from 1 (measured on far smaller levels
   than the full game's, so it is pessimistic), ``c_coord`` the coordinator's work per pair
   timed on the full game's sampled levels (the level's pairs, their blocks, the links'
   solve; in the derived runs of 1 its CPU time per pair is far larger, being mostly the
   fixed cost of a message on levels of a few hundred pairs), ``bytes`` per pair-pass from
   the 2-worker run; the coordinator's share does not shrink with W. Memory per worker
   is the model's peak plus its rows (``pairs * 8 / W`` bytes). CPU-hours bill every
   worker (one vCPU each) for the whole wall time.

Classic with three players to 1000 (4.2e9 states) is projected by bench/bench_cluster_nplayer.py.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

import numpy as np

DERIVED = ("goal=100", "pits=[{low=40,exit=60}]", 'barrel={kind="none"}')
PRICE = 0.0425  # USD per vCPU-hour: an on-demand c6i.xlarge (4 vCPUs) at 0.17 USD/h, AWS us-east-1 list price
BANDWIDTH = 1.25  # GB/s into and out of the coordinator (10 Gbit/s)
WORKERS = (16, 64, 256)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def derived_runs() -> dict:
    from thousand.rules.ruleset import load_ruleset
    from thousand.solvers.cluster import connect, solve_duel_on_cluster
    from thousand.solvers.duel import solve_duel

    rs = load_ruleset("six-dice", DERIVED)
    t = time.perf_counter()
    one = solve_duel(rs, method="passes", threads=1)
    single = time.perf_counter() - t
    pairs = one.model.pairs
    out = {"pairs": pairs, "passes": one.passes, "single_s": single, "single_pp": single / (pairs * one.passes)}
    print(f"derived six-dice ({', '.join(DERIVED)}): {one.model.players} player states, {pairs:,} pairs")
    per = out["single_pp"] * 1e6
    print(f"  one process, one thread: {single:8.1f} s, {one.passes} passes, {per:7.2f} us per pair-pass")
    for W in (1, 2):
        client, cluster = connect(f"local:{W}")
        try:
            with tempfile.TemporaryDirectory() as ck:
                c0, t = time.process_time(), time.perf_counter()
                sol = solve_duel_on_cluster(rs, client, ck)
                wall, coord = time.perf_counter() - t, time.process_time() - c0
        finally:
            client.close()
            cluster.close()
        pp = wall / (pairs * sol.passes)
        diff = float(np.max(np.abs(one.model.table_values(one.P) - sol.values)))
        r = {
            "wall": wall,
            "pp": pp,
            "overhead": pp * W / out["single_pp"],
            "coord_pp": coord / (pairs * sol.passes),
            "bytes_pp": sol.bytes_moved / (pairs * sol.passes),
            "peak_mb": max(m["peak_mb"] for m in sol.worker_memory),
            "diff": diff,
            "passes": sol.passes,
        }
        out[W] = r
        print(
            f"  local:{W}: {wall:8.1f} s, {sol.passes} passes, {pp * 1e6:7.2f} us per pair-pass, overhead ratio "
            f"{r['overhead']:.2f}, coordinator {r['coord_pp'] * 1e6:.2f} us and {r['bytes_pp']:.1f} bytes per "
            f"pair-pass, worker peak {r['peak_mb']:.0f} MB, largest difference {diff:.1e}"
        )
    print(f"  speed-up of 2 workers over 1: {out[1]['wall'] / out[2]['wall']:.2f}")
    return out


def full_sample(share: int = 64, levels: int = 6, seed: int = 1) -> dict:
    from thousand.engine.states import build_state_space
    from thousand.rules.ruleset import load_ruleset
    from thousand.solvers.cluster import _value_matrix, by_block
    from thousand.solvers.duel import DuelModel, _level, _level_sums, _turns
    from thousand.solvers.store import InMemory

    rs = load_ruleset("six-dice")
    before = rss_mb()
    t = time.perf_counter()
    model = DuelModel(rs, space=build_state_space(rs, opponents=True), max_pairs=None)
    build = time.perf_counter() - t
    model_mb = rss_mb()
    print(
        f"full six-dice: {model.players:,} player states, {model.pairs:,} pairs; the model built in {build:.0f} s, "
        f"peak {model_mb:.0f} MB (this process held {before:.0f} MB before)"
    )
    rng = np.random.default_rng(seed)
    held = np.sort(rng.choice(model.n, size=max(1, model.n // share), replace=False))
    mine = np.zeros(model.n, dtype=bool)
    mine[held] = True
    P = _value_matrix(model.n)
    _, lo, hi = model.opponents()
    width = int(hi[0] - lo[0])
    P[held[:, None], lo[held][:, None] + np.arange(width)[None, :]] = 0.5
    sums = _level_sums(model)
    mover_pos = np.full(model.n, -1, dtype=np.int64)
    total_pairs = total_s = coord_pairs = coord_s = 0.0
    owner = rng.integers(0, share, size=model.n)  # a split into `share` blocks, as the sample's
    for f in np.linspace(0.05, 0.95, levels):
        i = int(f * (len(sums) - 1))
        lv = _level(model, sums[i], mover_pos)
        k = mine[lv.py]
        px, py = lv.px[k], lv.py[k]
        t = time.perf_counter()
        _turns(model, model.table, InMemory(P.T), px, py, 1)
        s = time.perf_counter() - t
        total_pairs += len(px)
        total_s += s
        # the coordinator's own work on the whole level, as solve_duel_on_cluster does it for
        # W blocks: the level's pairs, who computes and stores each, the links' solve
        t = time.perf_counter()
        lv = _level(model, sums[i], mover_pos)
        by_block(owner[lv.py], share), by_block(owner[lv.px], share)
        a, b = np.zeros(len(lv.px)), rng.random(len(lv.px))
        a[lv.d_rows] = 0.3
        model.table.backend.solve_links(lv.succ, a, b)
        c = time.perf_counter() - t
        coord_pairs += len(lv.px)
        coord_s += c
        print(
            f"  level {i + 1:4d} of {len(sums)} (sum {sums[i]}): {len(lv.px):,} pairs, a block's {len(px):,} "
            f"in {s:.2f} s, {s / max(len(px), 1) * 1e6:.1f} us per pair; the coordinator's part "
            f"{c / len(lv.px) * 1e6:.2f} us per pair"
        )
    t_dp = total_s / total_pairs
    c_coord = coord_s / coord_pairs
    print(f"  turn DP per pair, the sampled levels together: {t_dp * 1e6:.1f} us (one thread)")
    print(f"  the coordinator per pair on these levels: {c_coord * 1e6:.2f} us")
    return {
        "pairs": model.pairs,
        "build": build,
        "model_mb": model_mb,
        "t_dp": t_dp,
        "c_coord": c_coord,
        "levels": len(sums),
    }


def project(derived: dict, full: dict, price: float, bandwidth: float) -> None:
    two = derived[2]
    pairs = full["pairs"]
    print(
        f"projection for the full six-dice duel (price {price} USD per vCPU-hour, coordinator bandwidth "
        f"{bandwidth} GB/s, one vCPU per worker):"
    )
    print("  passes  workers      wall   memory/worker   CPU-hours      USD")
    for passes in (derived["passes"], 3 * derived["passes"]):
        for W in WORKERS:
            compute = pairs * full["t_dp"] * two["overhead"] / W
            coord = pairs * (full["c_coord"] + two["bytes_pp"] / (bandwidth * 1e9))
            wall = full["build"] + passes * (compute + coord)
            mem = full["model_mb"] + pairs * 8 / W / 2**20
            cpu_h = wall * W / 3600
            print(
                f"  {passes:6d} {W:8d} {wall / 3600:8.1f} h {mem / 1024:11.1f} GB {cpu_h:11,.0f} {cpu_h * price:8,.0f}"
            )
    one_core = pairs * full["t_dp"] * derived["passes"] / 3600
    print(f"  (one process, one thread, the derived game's {derived['passes']} passes: {one_core:,.0f} CPU-hours)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--price", type=float, default=PRICE, help="USD per vCPU-hour")
    ap.add_argument("--bandwidth", type=float, default=BANDWIDTH, help="GB/s into and out of the coordinator")
    ap.add_argument("--skip-full", action="store_true", help="only the derived game (no 1.6 GB model)")
    args = ap.parse_args()
    derived = derived_runs()
    if not args.skip_full:
        project(derived, full_sample(), args.price, args.bandwidth)


if __name__ == "__main__":
    main()
