"""Three players on a Dask cluster: the overhead on this machine, and what classic with three
players to 1000 would cost on a real cluster.

Usage: ``python bench/bench_cluster_nplayer.py [--price USD_PER_VCPU_HOUR] [--bandwidth GB_PER_S]
[--latency-ms MS] [--skip-full]``. In one run:

1. A derived classic that one machine solves for three players (goal 150, a pit [50, 75), the
   barrel at 100, samosval at 85, one fall, two bolts: 79,507 states, the small classic of
   tests/test_nplayer.py): the equilibrium in this process (one thread, with its Anderson
   mixing), then on ``local:1`` and ``local:2`` (``thousand.solvers.cluster_nplayer``): wall
   seconds, sweeps, seconds per state and sweep, the overhead ratio (a cluster's seconds per
   state-sweep times its workers, over the single process's), the coordinator's CPU and the
   bytes that travelled per state-sweep, the rounds of messages per level and sweep, the
   workers' peak memory, and the largest difference of the values (at most 1e-12).
2. A round trip's latency on ``local:2`` (a block's read of one state, 200 times).
3. Full classic for three players (1,611 player states, 4.2e9 states): the game built (what
   every worker does first), its levels and the largest, and the best turns of sampled
   states timed on six levels (one thread), against the same on the derived game: the ratio
   scales the derived game's seconds per state-sweep to the full game's.
4. The projection for 16, 64 and 256 workers: wall time, memory per worker, CPU-hours and
   their price, for the sweeps the derived game took on the cluster and three times as many:

       wall = build + sweeps * (states * t_state * compute / W
                                + states * (c_coord + bytes / bandwidth)
                                + levels * trips * latency)

   ``t_state`` the derived single process's seconds per state-sweep times the turn ratio of 3,
   ``compute`` the 2-worker run's computing seconds (the blocks' own, summed) over the single
   process's, ``c_coord`` the coordinator's own seconds per state on levels of the full game
   (solved by the level solver against blocks that answer at once: on the derived game's
   levels of a few hundred states its time is mostly the fixed cost of messages), ``bytes``
   and ``trips`` (rounds of messages per level) from the 2-worker run, ``latency`` from 2 (or
   ``--latency-ms``: a real cluster's network). The coordinator's share does not shrink with W.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

import numpy as np

DERIVED = (
    "goal=150",
    "pits=[{low=50,exit=75}]",
    "barrel.threshold=100",
    "dump=[85]",
    "barrel.max_falls=1",
    "bolts.limit=2",
    'bolts.exempt=["unopened"]',
)
PRICE = 0.0425  # USD per vCPU-hour: an on-demand c6i.xlarge (4 vCPUs) at 0.17 USD/h, AWS us-east-1 list price
BANDWIDTH = 1.25  # GB/s into and out of the coordinator (10 Gbit/s)
WORKERS = (16, 64, 256)
PLAYERS = 3


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def derived_runs() -> dict:
    from thousand.rules.ruleset import load_ruleset
    from thousand.solvers.cluster import connect
    from thousand.solvers.cluster_nplayer import solve_nplayer_on_cluster
    from thousand.solvers.nplayer import level_sums, solve_nplayer

    rs = load_ruleset("classic", DERIVED)
    t = time.perf_counter()
    one = solve_nplayer(rs, PLAYERS, threads=1)
    single = time.perf_counter() - t
    states = one.V.shape[0]
    levels = len(level_sums(one.game))
    out = {"states": states, "levels": levels, "single_s": single, "single_ps": single / (states * one.passes)}
    print(f"derived classic ({', '.join(DERIVED)}), {PLAYERS} players: {one.m} player states, {states:,} states")
    print(
        f"  one process, one thread: {single:8.1f} s, {one.passes} sweeps, "
        f"{out['single_ps'] * 1e6:7.2f} us per state-sweep"
    )
    for W in (1, 2):
        client, cluster = connect(f"local:{W}")
        try:
            with tempfile.TemporaryDirectory() as ck:
                c0, t = time.process_time(), time.perf_counter()
                sol, run = solve_nplayer_on_cluster(rs, PLAYERS, client, ck)
                wall, coord = time.perf_counter() - t, time.process_time() - c0
            if W == 2:
                out["latency"] = latency(client, rs)
        finally:
            client.close()
            cluster.close()
        ss = states * sol.passes
        r = {
            "wall": wall,
            "sweeps": sol.passes,
            "ps": wall / ss,
            "overhead": wall / ss * W / out["single_ps"],
            "coord_ps": coord / ss,
            "bytes_ps": run.bytes_moved / ss,
            "trips": run.round_trips / (levels * sol.passes),
            "peak_mb": max(m["peak_mb"] for m in run.worker_memory),
            # the workers' computing seconds over the single process's for as many sweeps
            "compute": sum(m["busy_s"] for m in run.worker_memory) / (out["single_ps"] * ss),
            "diff": float(np.max(np.abs(one.V - sol.V))),
        }
        out[W] = r
        print(
            f"  local:{W}: {wall:8.1f} s, {sol.passes} sweeps, {r['ps'] * 1e6:7.2f} us per state-sweep, overhead "
            f"ratio {r['overhead']:.2f}, coordinator {r['coord_ps'] * 1e6:.2f} us CPU and {r['bytes_ps']:.0f} bytes "
            f"per state-sweep, {r['trips']:.1f} rounds of messages per level, the workers computed "
            f"{r['compute']:.2f} times the single process's seconds, worker peak {r['peak_mb']:.0f} MB, "
            f"largest difference {r['diff']:.1e}"
        )
    print(f"  speed-up of 2 workers over 1: {out[1]['wall'] / out[2]['wall']:.2f}")
    print(f"  a round trip to two blocks on local:2: {out['latency'] * 1e3:.2f} ms")
    return out


def latency(client, rs, n: int = 200) -> float:
    """Seconds per round of messages to two blocks (each reads one state), as the
    coordinator waits for them."""
    from thousand.solvers.cluster import _results, _start_blocks
    from thousand.solvers.cluster_nplayer import NPlayerBlock, key_owner
    from thousand.solvers.nplayer import NPlayerGame

    game = NPlayerGame(rs, PLAYERS)
    owner = key_owner(game, 2)
    parts = [np.flatnonzero(owner == k) for k in range(2)]
    actors = _start_blocks(client, (NPlayerBlock, rs, PLAYERS), parts, None, None)
    one = [np.array([p[0] * game.m]) for p in parts]
    t = time.perf_counter()
    for _ in range(n):
        _results(client, actors, [a.step(None, ("read", (s,), {})) for a, s in zip(actors, one)])
    return (time.perf_counter() - t) / n


class _Even:
    """Values of 1/N for every state: what a turn reads, without 100 GB of them."""

    def __init__(self, N: int):
        self.N = N

    def __getitem__(self, key):
        states, cols = key if isinstance(key, tuple) else (key, slice(None))
        if isinstance(cols, slice):
            shape = (*np.shape(states), self.N)
        else:
            shape = np.broadcast_shapes(np.shape(states), np.shape(cols))  # V[states[..., None], seen]
        return np.full(shape, 1.0 / self.N)


def turn_seconds(game, levels: int = 6, sample: int = 2000, seed: int = 1) -> float:
    """Seconds per state of a round's best turns (the end distributions and the DP's
    derivative, then the own values again), on ``sample`` states of each of ``levels``
    levels spread over the game, one thread."""
    from thousand.solvers.nplayer import _own_values, _turns, level_states, level_sums

    rng = np.random.default_rng(seed)
    sums = level_sums(game)
    V, total, n = _Even(game.N), 0.0, 0
    for f in np.linspace(0.05, 0.95, levels):
        lvl = level_states(game, sums[int(f * (len(sums) - 1))])
        states = np.sort(rng.choice(lvl, size=min(sample, len(lvl)), replace=False))
        z = np.full(len(states), 1.0 / game.N)
        t = time.perf_counter()
        _turns(states, z, V, game, grad=True)
        _own_values(states, z, V, game)
        total += time.perf_counter() - t
        n += len(states)
    return total / n


class _Answered:
    """An actor call's answer, already there."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class _InstantBlock:
    """A block that answers every call at once with fixed values (every chance 1/N, a bust
    half the time): the coordinator's own work on a level, without the turns or the network."""

    def __init__(self, N: int):
        self.N = N

    def step(self, put, call):
        old = None if put is None else np.full_like(put[1], 1.0 / self.N)
        if call is None:
            return _Answered((old, None))
        name, (states, *rest), kwargs = call
        n, N = len(states), self.N
        half, even = np.full(n, 0.5), np.full((n, N), 1.0 / N)
        out = {
            "turns": lambda: (half, even, half, half if kwargs.get("grad") else None),
            "own_values": lambda: (half, half),
            "first_guess": lambda: half,
            "tree_step": lambda: even,
            "read": lambda: even,
            "best": lambda: half,
        }[name]()
        return _Answered((old, out))


def coordinator_seconds(game, blocks: int = 64, levels: int = 4) -> float:
    """The coordinator's seconds per state of a sweep on the full game: each of ``levels``
    levels (spread over the game, the largest left out) built and solved by the level solver
    through :class:`thousand.solvers.cluster_nplayer.BlockValues` over ``blocks`` blocks that
    answer at once (:class:`_InstantBlock`): the grouping by block, the links, the orbits'
    closed forms and the bookkeeping, without the turns and the network."""
    from thousand.solvers.cluster_nplayer import BlockValues, key_owner
    from thousand.solvers.nplayer import _solve_level, level_states, level_sums

    sums = level_sums(game)
    values = BlockValues(None, [_InstantBlock(game.N) for _ in range(blocks)], game, key_owner(game, blocks))
    total, n = 0.0, 0
    for f in np.linspace(0.1, 0.9, levels):
        t = time.perf_counter()
        lvl = level_states(game, sums[int(f * (len(sums) - 1))])
        values.begin(lvl)
        _solve_level(lvl, values, {})
        values.end()
        s = time.perf_counter() - t
        total, n = total + s, n + len(lvl)
        print(f"  the coordinator on a level of {len(lvl):,} states: {s:.1f} s, {s / len(lvl) * 1e6:.2f} us per state")
    return total / n


def full_sample() -> dict:
    from thousand.rules.ruleset import load_ruleset
    from thousand.solvers.nplayer import NPlayerGame, _score_units, level_sums

    derived = NPlayerGame(load_ruleset("classic", DERIVED), PLAYERS, threads=1)
    before = rss_mb()
    t = time.perf_counter()
    game = NPlayerGame(load_ruleset("classic"), PLAYERS, threads=1)
    build = time.perf_counter() - t
    model_mb = rss_mb()
    states = game.seats * game.total
    # the levels' sizes: the histogram of a player state's units, convolved once per player
    hist = np.bincount(_score_units(game))
    sizes = hist.copy()
    for _ in range(PLAYERS - 1):
        sizes = np.convolve(sizes, hist)
    levels = len(level_sums(game))
    print(
        f"full classic, {PLAYERS} players: {game.m:,} player states, {states:,} states, {levels} levels (the "
        f"largest {sizes.max():,} states); the game built in {build:.1f} s, peak {model_mb:.0f} MB (this process "
        f"held {before:.0f} MB before)"
    )
    t_full, t_derived = turn_seconds(game), turn_seconds(derived)
    print(
        f"  a round's best turns per state, six levels sampled, one thread: {t_full * 1e6:.1f} us "
        f"(the derived game's {t_derived * 1e6:.1f} us: {t_full / t_derived:.2f} times)"
    )
    c_coord = coordinator_seconds(game)
    print(f"  the coordinator per state on these levels: {c_coord * 1e6:.2f} us")
    return {
        "states": states,
        "levels": levels,
        "largest": int(sizes.max()),
        "build": build,
        "model_mb": model_mb,
        "ratio": t_full / t_derived,
        "c_coord": c_coord,
    }


def project(derived: dict, full: dict, price: float, bandwidth: float, latency: float) -> None:
    two = derived[2]
    states = full["states"]
    t_state = derived["single_ps"] * full["ratio"]
    print(
        f"projection for classic, {PLAYERS} players to 1000 (price {price} USD per vCPU-hour, coordinator "
        f"bandwidth {bandwidth} GB/s, a round trip {latency * 1e3:.2f} ms, one vCPU per worker; "
        f"{t_state * 1e6:.1f} us per state-sweep on one thread):"
    )
    print("  sweeps  workers      wall   memory/worker   CPU-hours      USD")
    for sweeps in (two["sweeps"], 3 * two["sweeps"]):
        for W in WORKERS:
            compute = states * t_state * two["compute"] / W
            coord = states * (full["c_coord"] + two["bytes_ps"] / (bandwidth * 1e9))
            waits = full["levels"] * two["trips"] * latency
            wall = full["build"] + sweeps * (compute + coord + waits)
            mem = full["model_mb"] + states * PLAYERS * 8 / W / 2**20
            cpu_h = wall * W / 3600
            print(
                f"  {sweeps:6d} {W:8d} {wall / 3600:8.1f} h {mem / 1024:11.1f} GB {cpu_h:11,.0f} {cpu_h * price:8,.0f}"
            )
    one_core = states * t_state * two["sweeps"] / 3600
    print(f"  (one process, one thread, {two['sweeps']} sweeps: {one_core:,.0f} CPU-hours)")
    print(
        f"  the coordinator holds one level at a time: the largest has {full['largest']:,} states "
        f"({full['largest'] * 8 / 2**30:.2f} GiB of state numbers alone)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--price", type=float, default=PRICE, help="USD per vCPU-hour")
    ap.add_argument("--bandwidth", type=float, default=BANDWIDTH, help="GB/s into and out of the coordinator")
    ap.add_argument("--latency-ms", type=float, default=None, help="a round trip's latency (default: measured here)")
    ap.add_argument("--skip-full", action="store_true", help="only the derived game")
    args = ap.parse_args()
    derived = derived_runs()
    if not args.skip_full:
        lat = derived["latency"] if args.latency_ms is None else args.latency_ms / 1e3
        project(derived, full_sample(), args.price, args.bandwidth, lat)


if __name__ == "__main__":
    main()
