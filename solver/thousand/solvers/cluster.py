"""The duel solved on a Dask cluster: the same passes as :func:`thousand.solvers.duel.solve_duel`
with ``method="passes"``, each worker holding only its block of the values.

The equation is the duel's (:mod:`thousand.solvers.duel`),

    P(x, y) = TurnDP_x( stop[t] = 1 - P(y_t, bank(x, t)) or 1, forced[t] likewise,
                        Z = 1 - P(y, zero(x)), W = 1 ),

solved level by level (the sum of both scores), top down, each level's bust links
``(x, y) -> (y, zero(x))`` exactly (Newton's method on the bust values,
:func:`thousand.solvers.duel._solve_level`), in passes until a pass changes no value by
more than ``tol`` (one pass where no penalty lowers a level), then certified by the
largest Bellman residual of a full Jacobi pass.

How the values are split (docs/distributed.md). Worker block ``k`` owns a set of solver
states ``S_k`` and holds the rows ``P[y, :]`` of its states (each row only over the
opponents it can face: with ``equal_turns`` the other seat's half). It computes the turn
DPs of every pair whose *opponent* is one of its states: the turn of ``x`` against ``y``
reads ``P(y_t, x')`` for the states ``x'`` it can bank to and ``P(y, zero(x))``, all on the
rows ``y``, ``pushed(y)``, ``overtaken(y)`` and ``overtaken(pushed(y))``; the blocks are
unions of the classes of states those maps join (:func:`partition`), so every read is
local. A computed value ``P(x, y)`` is then stored on the row ``x``, in the block of ``x``.
Per level the coordinator (the client) gathers each computed pair's linearisation
(value, bust slope, bust value: 24 bytes), solves the level's links and sends each
value to the block of its row (8 bytes). Nothing else travels.

Fault tolerance. Every ``checkpoint_seconds`` (at a level's end) each block writes its
rows to ``checkpoint/gen-G/`` and the coordinator then writes ``checkpoint/state.json``
(the generation, the pass, the last level done, the pass's largest change so far)
atomically. A lost worker (its block's calls fail) makes every block reload generation G
and the solve go on after that level, on the workers that remain or replace it; a new
run of the same command (after Ctrl-C or a killed client) does the same. A generation
is complete only once ``state.json`` names it: a run killed while writing one goes on
from the one before. Values reloaded are those of a Gauss-Seidel pass stopped at a level
boundary, so the passes, and the final residual that certifies them, are unchanged.

The connection, the checkpoints (:func:`save_block`, :func:`checkpoint_rows`, ``state.json``),
the recovery loop (:func:`recovering`) and the gathering of the rows (:func:`gather_rows`) are
shared with the N-player equilibrium on a cluster (:mod:`thousand.solvers.cluster_nplayer`).
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from thousand.base.errors import ThousandError
from thousand.rules.ruleset import Ruleset

from .duel import (
    STALL_PASSES,
    DuelDiverges,
    DuelModel,
    _diverges,
    _level,
    _level_sums,
    _turns,
    level_links,
    level_movers,
    stale_busts,
)
from .store import InMemory

__all__ = [
    "CHECKPOINT_SECONDS",
    "CLUSTER_EXTRA",
    "MAP_NORESERVE",
    "MAX_RECOVERIES",
    "RECOVERY_WAIT",
    "STATE",
    "ClusterError",
    "ClusterSolution",
    "DuelBlock",
    "block_memory",
    "by_block",
    "checkpoint_rows",
    "connect",
    "gather_rows",
    "identity",
    "joined",
    "partition",
    "recovering",
    "save_block",
    "solve_duel_on_cluster",
]

CLUSTER_EXTRA = "the --cluster option needs Dask distributed: pip install 'thousand[cluster]'"
MAP_NORESERVE = 0x4000  # Linux: no swap reserved for the value matrix's untouched pages
CHECKPOINT_SECONDS = 300.0
MAX_RECOVERIES = 5  # lost workers survived in one solve before it gives up
RECOVERY_WAIT = 30.0  # seconds a recovery waits for the cluster to have its workers again


class ClusterError(ThousandError):
    """A cluster that cannot be reached or used, or a checkpoint that does not fit."""


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ClusterError(CLUSTER_EXTRA) from None
    return distributed


def connect(spec: str, timeout: float = 20.0):
    """A Dask client for ``spec``: ``local:N`` starts a :class:`distributed.LocalCluster` of N
    single-threaded worker processes on this machine (closed with the client);
    ``tcp://HOST:PORT`` (or ``tls://``) connects to a running scheduler. Returns
    ``(client, cluster or None)``."""
    dd = _distributed()
    if spec.startswith("local:"):
        try:
            workers = int(spec[len("local:") :])
        except ValueError:
            workers = 0
        if workers < 1:
            raise ClusterError(f"--cluster {spec}: local:N takes a number of workers N of at least 1")
        cluster = dd.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # a free port: several local clusters may run at once
            silence_logs=40,
        )
        return dd.Client(cluster), cluster
    if "://" not in spec:
        raise ClusterError(f"--cluster {spec}: give local:N or a scheduler address such as tcp://HOST:8786")
    try:
        return dd.Client(spec, timeout=timeout), None
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"--cluster {spec}: no Dask scheduler answers there ({e})") from None


def partition(model: DuelModel, blocks: int) -> list[np.ndarray]:
    """The solver's states in at most ``blocks`` sorted blocks, each a union of the classes
    that ``pushed`` and ``overtaken`` join (a block's turn DPs then read only its own rows),
    balanced by their states (greedy, largest class first). Six-dice's
    states are each their own class; overtaking joins classic's 1,611 into three large
    classes, so no more than three blocks there do work."""
    p, n = model.plans, model.n
    label = joined(n, (pair for arr in (p.overtaken, p.pushed) for pair in enumerate(arr.tolist())))
    classes: dict[int, list[int]] = {}
    for i, c in enumerate(label.tolist()):
        classes.setdefault(c, []).append(i)
    # every state faces as many movers (n, or with equal turns the other seat's m), so a
    # block's pairs are its states times that: balancing states balances the work
    load = np.zeros(min(blocks, len(classes)), dtype=np.int64)
    members: list[list[int]] = [[] for _ in load]
    for cls in sorted(classes.values(), key=lambda c: (-len(c), c[0])):
        k = int(np.argmin(load))
        members[k].extend(cls)
        load[k] += len(cls)
    return [np.array(sorted(m), dtype=np.int64) for m in members if m]


def joined(n: int, pairs) -> np.ndarray:
    """The class (0, 1, ...) of each of ``n`` items once every pair ``(a, b)`` is joined:
    the classes of states that a move's changes to the others connect (union-find)."""
    parent = np.arange(n)

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for x, y in pairs:
        a, c = find(x), find(y)
        if a != c:
            parent[a] = c
    return np.unique([find(x) for x in range(n)], return_inverse=True)[1].reshape(n)


def _ranges(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``concatenate([arange(a[j], b[j]) for j])`` without the loop."""
    k = b - a
    if not len(k) or not k.sum():
        return np.zeros(0, dtype=np.int64)
    start = np.repeat(a - np.concatenate([[0], np.cumsum(k)[:-1]]), k)
    return start + np.arange(int(k.sum()), dtype=np.int64)


def _value_matrix(n: int) -> np.ndarray:
    """An (n, n) float64 matrix in anonymous memory reserved for nothing: only the pages a
    block writes become resident, so a block of k rows holds about k rows' worth."""
    size = max(8 * n * n, mmap.PAGESIZE)
    try:
        buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
    except (OSError, ValueError, OverflowError) as e:
        raise ClusterError(f"cannot map {size / 2**30:.1f} GiB of address space for a block's rows ({e})") from None
    return np.frombuffer(buf, dtype=np.float64, count=n * n).reshape(n, n)


class DuelBlock:
    """One worker's block: the rows ``P[y, lo(y):hi(y)]`` of its states ``y``, and the turn
    DPs of the pairs whose opponent is one of them (module docstring). Run as a Dask actor;
    every method is also callable in-process (the tests do)."""

    def __init__(self, rs: Ruleset, states: np.ndarray, threads: int = 1, checkpoint: str | None = None):
        from thousand.engine.states import build_state_space

        self.model = DuelModel(rs, space=build_state_space(rs, opponents=True), max_pairs=None)
        self.states = np.unique(np.asarray(states, dtype=np.int64))  # sorted: a level's pairs are found by bisection
        n = self.model.n
        self.mine = np.zeros(n, dtype=bool)
        self.mine[self.states] = True
        self.threads = threads
        _, lo, hi = self.model.opponents()
        self.lo, self.width = lo, int(hi[0] - lo[0])
        self.P = _value_matrix(n)
        self.Q = self.P.T  # Q[x, y] = P(y, x): the solver's layout (duel.py), read in place
        self._cols = self.lo[self.states][:, None] + np.arange(self.width)[None, :]
        if checkpoint:
            self.load(checkpoint)
        else:
            self.P[self.states[:, None], self._cols] = 0.5
        self.level = None
        self.busy = 0.0  # seconds spent in step(): the share of the solve this worker computed
        self.sums = _level_sums(self.model)

    # -- the pairs of a level this block computes, and those whose value it stores ----------

    def _pairs(self, i: int):
        """Level ``i`` (index into the levels, highest first): (its pairs whose opponent is
        here, as (px, py); its pairs whose mover is here, as (px, py)), both in the level's
        order (:func:`thousand.solvers.duel._level`)."""
        if self.level is None or self.level[0] != i:
            # only this block's pairs are built (a whole level on every worker would cost each
            # worker the coordinator's O(pairs) a pass)
            movers, lo, hi = level_movers(self.model, self.sums[i])
            a, b = np.searchsorted(self.states, lo), np.searchsorted(self.states, hi)
            computed = (np.repeat(movers, b - a), self.states[_ranges(a, b)])
            mine = self.mine[movers]
            m, ml, mh = movers[mine], lo[mine], hi[mine]
            stored = (np.repeat(m, mh - ml), _ranges(ml, mh))
            self.level = (i, computed, stored, None)
        return self.level

    def turns(self, i: int, which: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The turn DPs of level ``i``'s pairs computed here (``which``: only those, as
        positions among them): ``(v, d, z)``, the value at the current bust value, its
        derivative in the bust value ``Z``, and the successor's value ``P(y, zero(x))``
        (``Z = 1 - z``)."""
        _, (px, py), _, _ = self._pairs(i)
        if which is not None:
            px, py = px[which], py[which]
        v, d = _turns(self.model, self.model.table, InMemory(self.Q), px, py, self.threads)
        z = self.P[py, self.model.plans.bust[px]]
        return v, d, z

    def step(self, put: tuple | None, turns: tuple | None) -> tuple[float, tuple | None]:
        """One message of the coordinator: first ``put`` = ``(i, values, first)`` (:meth:`put`),
        then ``turns`` = ``(i, which)`` (:meth:`turns`). A block's own puts come before its
        turns, and that is all the order the level needs: a turn of ``x`` against ``y`` reads
        rows of ``y``'s block only. Returns (the put's change or 0, the turns or None)."""
        t0 = time.perf_counter()
        change = self.put(*put) if put is not None else 0.0
        out = change, (self.turns(*turns) if turns is not None else None)
        self.busy += time.perf_counter() - t0
        return out

    def put(self, i: int, values: np.ndarray, first: bool) -> float:
        """Store level ``i``'s values of the pairs whose mover is here; returns the largest
        change from the values they held when the level began (``first``: it begins now)."""
        _, _, (px, py), old = self._pairs(i)
        if first or old is None:
            old = self.P[px, py].copy()
            self.level = self.level[:3] + (old,)
        self.P[px, py] = values
        return float(np.max(np.abs(values - old), initial=0.0))

    def residual(self, i: int) -> np.ndarray:
        """Level ``i``'s turn values at the values as they stand (for the certificate)."""
        return self.turns(i)[0]

    def compare(self, i: int, values: np.ndarray) -> float:
        """The largest distance of ``values`` from level ``i``'s stored values here."""
        _, _, (px, py), _ = self._pairs(i)
        return float(np.max(np.abs(values - self.P[px, py]), initial=0.0))

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """``(states, P[states, lo:hi])``: this block's rows, to assemble the table."""
        return self.states, self.P[self.states[:, None], self._cols]

    # -- checkpoints -----------------------------------------------------------------------

    def save(self, folder: str, k: int) -> str:
        """Write this block's rows to ``folder`` (block ``k``), each file atomically."""
        save_block(folder, k, *self.rows())
        return self.model.rs.hash

    def load(self, folder: str) -> None:
        """This block's rows from a checkpoint generation (written by any partition)."""
        found = np.zeros(self.model.n, dtype=bool)
        for states, block in checkpoint_rows(folder, self.mine, (self.width,)):
            self.P[states[:, None], self.lo[states][:, None] + np.arange(self.width)[None, :]] = block
            found[states] = True
        if not found[self.states].all():
            raise ClusterError(f"{folder}: the checkpoint lacks {int((~found[self.states]).sum())} states' rows")

    def memory(self) -> dict:
        """This worker's peak resident memory, its block's rows and the seconds it computed."""
        return block_memory(len(self.states) * self.width * 8, len(self.states), self.busy)


def block_memory(nbytes: int, states: int, busy: float) -> dict:
    """A block's report: its worker's peak resident memory, the MB of its values, its
    states and the seconds it computed."""
    import resource

    return {
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "rows_mb": nbytes / 2**20,
        "states": states,
        "busy_s": busy,
    }


def save_block(folder: str, k: int, rows: np.ndarray, values: np.ndarray) -> None:
    """Block ``k``'s rows (their numbers, and their values, one row each) into a checkpoint
    generation ``folder``, each file written atomically (tmp, fsync, rename)."""
    base = Path(folder) / f"block-{k}"
    for suffix, arr in ((".states.npy", rows), (".values.npy", values)):
        tmp = base.with_name(base.name + suffix + ".tmp")
        with open(tmp, "wb") as f:
            np.save(f, arr)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, base.with_name(base.name + suffix))


def checkpoint_rows(folder: str, mine: np.ndarray, shape: tuple):
    """The rows of a checkpoint generation that a block holds (``mine``: a mask over the
    row numbers), from every block file whatever split wrote them: (row numbers, values),
    a row's values of ``shape``. Files of other rules, unreadable ones and values outside
    [0, 1] (every value here is a chance) are refused in one line."""
    for f in sorted(Path(folder).glob("block-*.states.npy")):
        try:
            rows = np.load(f)
            values = np.load(f.with_name(f.name.replace(".states.", ".values.")), mmap_mode="r")
        except (OSError, ValueError) as e:
            raise ClusterError(f"{f}: not a readable checkpoint block ({e})") from None
        if values.shape != (len(rows), *shape) or not np.all((rows >= 0) & (rows < len(mine))):
            raise ClusterError(f"{f}: a checkpoint block of other rules (shape {values.shape})")
        take = np.flatnonzero(mine[rows])
        if len(take):
            block = np.asarray(values[take])
            if not np.all((block >= 0.0) & (block <= 1.0)):
                raise ClusterError(f"{f}: values outside [0, 1]; not a solve's chances (damaged?)")
            yield rows[take], block


@dataclass
class ClusterSolution:
    """The result of :func:`solve_duel_on_cluster`: ``values`` laid out as a duel table stores
    them (:meth:`thousand.solvers.duel.DuelModel.table_values`)."""

    model: DuelModel
    values: np.ndarray
    passes: int
    residual: float
    seconds: float
    blocks: int
    workers: int
    recoveries: int
    resumed_from: dict | None
    bytes_moved: int
    worker_memory: list


class _WorkerLost(Exception):
    pass


def _lost(client, actors) -> bool:
    """Whether a worker holding one of the blocks is gone."""
    try:
        alive = set(client.scheduler_info()["workers"])
    except Exception:  # noqa: BLE001  (a scheduler that does not answer: nothing to recover on)
        return False
    return any(a._address not in alive for a in actors)


def solve_duel_on_cluster(
    rs: Ruleset,
    client,
    checkpoint: str | os.PathLike,
    tol: float = 1e-13,
    max_passes: int = 1000,
    blocks: int | None = None,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
    progress: Callable[[dict], None] | None = None,
    model: DuelModel | None = None,
    values_path: str | os.PathLike | None = None,
) -> ClusterSolution:
    """Solve the duel of ``rs`` on the Dask ``client``'s workers (module docstring), one block
    per worker (or ``blocks``), checkpointing into the folder ``checkpoint`` and going on
    from what it holds (a generation named by its ``state.json``, for these rules).

    ``progress(info)`` is called after every level with ``pass``, ``level``, ``levels``,
    ``pairs_done`` (this pass), ``pairs`` (per pass), ``seconds`` and ``change``.
    ``values_path``: gather the values into that ``.npy`` file (memory-mapped) instead of
    memory: the client then needs no room for the whole table.
    Raises :class:`thousand.solvers.duel.DuelDiverges` as the single-machine passes do."""
    t0 = time.perf_counter()
    if model is None:
        from thousand.engine.states import build_state_space

        model = DuelModel(rs, space=build_state_space(rs, opponents=True), max_pairs=None)
    folder = Path(checkpoint)
    ident = identity(rs, "duel", model.n)
    workers = len(client.scheduler_info()["workers"])
    if not workers:
        raise ClusterError("the cluster has no workers")
    parts = partition(model, blocks or workers)
    sums = _level_sums(model)
    mover_pos = np.full(model.n, -1, dtype=np.int64)
    owner = np.empty(model.n, dtype=np.int64)
    for k, s in enumerate(parts):
        owner[s] = k
    repeat = model.lowers_levels()
    runs = 1 if repeat else 100
    per_pass = model.pairs
    moved = 0

    def run(actors, state):
        nonlocal moved
        pass_no, start_level, change, history = _resume_point(state)
        last_save = time.perf_counter()
        while pass_no <= max_passes:
            done_pairs = 0
            pending: dict = {}  # each block's values of the last level, sent with its next call
            for i in range(start_level, len(sums)):
                lv = _level(model, sums[i], mover_pos)
                nbytes, level_change, pending = _solve_level_on(client, actors, owner, model, lv, i, runs, pending)
                moved += nbytes
                change = max(change, level_change)
                done_pairs += len(lv.px)
                if progress:
                    progress(
                        {
                            "pass": pass_no,
                            "level": i + 1,
                            "levels": len(sums),
                            "pairs_done": done_pairs,
                            "pairs": per_pass,
                            "seconds": time.perf_counter() - t0,
                            "change": change,
                        }
                    )
                if time.perf_counter() - last_save >= checkpoint_seconds or i == len(sums) - 1:
                    change = max(change, _flush(client, actors, pending))
                    pending = {}
                    state = _save(client, actors, folder, ident, state, pass_no, i, change, history)
                    last_save = time.perf_counter()
            start_level = 0
            if change <= tol or not repeat:
                break
            history.append(change)
            if len(history) > STALL_PASSES and min(history[-STALL_PASSES:]) > 0.1 * min(history[:-STALL_PASSES]):
                raise DuelDiverges(_diverges(rs, pass_no, change))
            pass_no, change = pass_no + 1, 0.0
        return pass_no, _residual(client, actors, owner, model, sums, mover_pos)

    def start(state):
        return _start_blocks(client, (DuelBlock, rs), parts, folder, state)

    (pass_no, residual), actors, recoveries, resumed_from = recovering(client, folder, ident, start, run)
    if residual > 1e-10:
        raise DuelDiverges(_diverges(rs, pass_no, residual))
    shape = _table_shape(model)
    if values_path is None:
        table = np.empty(shape)
    else:
        table = np.lib.format.open_memmap(values_path, mode="w+", dtype=np.float64, shape=shape)
    memory = gather_rows(client, actors, table.reshape(-1, shape[-1]))  # the solver's state x is row x
    return ClusterSolution(
        model,
        table,
        pass_no,
        residual,
        time.perf_counter() - t0,
        len(parts),
        workers,
        recoveries,
        resumed_from,
        moved,
        memory,
    )


def recovering(client, folder: Path, ident: dict, start, run):
    """``run(actors, state)`` on the blocks ``start(state)`` started from the checkpoint in
    ``folder`` (``state``: its ``state.json``, None for none): when a worker is lost, every
    block is started again from the last generation and ``run`` goes on from there.
    Returns (what ``run`` returned, the actors, the recoveries, the checkpoint the solve
    began from or None)."""
    folder.mkdir(parents=True, exist_ok=True)
    workers = len(client.scheduler_info()["workers"])
    state = _read_state(folder, ident)
    resumed_from = dict(state) if state else None
    recoveries = 0
    while True:
        try:
            actors = start(state)
            return run(actors, state), actors, recoveries, resumed_from
        except _WorkerLost:
            recoveries += 1
            if recoveries > MAX_RECOVERIES:
                raise ClusterError(f"lost workers {recoveries} times; the checkpoint stays in {folder}") from None
            # a replaced worker (a LocalCluster's nanny starts one at once) keeps the blocks
            # balanced; a worker that stays away leaves its blocks to the others
            try:
                client.wait_for_workers(workers, timeout=RECOVERY_WAIT)
            except (TimeoutError, OSError):
                if not client.scheduler_info()["workers"]:
                    raise ClusterError(f"no workers are left; the checkpoint stays in {folder}") from None
            state = _read_state(folder, ident)


def gather_rows(client, actors, rows_of: np.ndarray) -> list[dict]:
    """Every block's rows (``rows()``: row numbers and their values) written into
    ``rows_of``, one block at a time (the client holds one block's rows beside the table);
    returns each worker's :meth:`memory`."""
    memory = []
    for a in actors:
        rows, values = _results(client, actors, [a.rows()])[0]
        rows_of[rows] = values
        memory.append(_results(client, actors, [a.memory()])[0])
    return memory


def _table_shape(model: DuelModel) -> tuple[int, ...]:
    """The shape of the duel table's values: (n, n), or with equal_turns (2, m, m)."""
    m = model.players
    return (2, m, m) if model.equal_turns else (model.n, model.n)


def _results(client, actors, futures) -> list:
    """The results of actor calls; a lost worker raises :class:`_WorkerLost`."""
    try:
        return [f.result() for f in futures]
    except ThousandError:
        raise
    except Exception:
        # the scheduler may learn of a dead worker a moment after its comm closed
        for _ in range(50):
            if _lost(client, actors):
                raise _WorkerLost() from None
            time.sleep(0.2)
        raise


def _start_blocks(client, block: tuple, parts: list[np.ndarray], folder: Path, state: dict | None) -> list:
    """One actor per part, ``block[0](*block[1:], part, threads, generation)`` (a
    :class:`DuelBlock` or an N-player block), spread over the workers (their threads
    each), loaded from the checkpoint generation ``state`` names (None: a first guess)."""
    info = client.scheduler_info()["workers"]
    workers = sorted(info)
    source = str(folder / f"gen-{state['gen']}") if state else None
    futures = []
    for k, states in enumerate(parts):
        w = workers[k % len(workers)]
        threads = max(1, int(info[w].get("nthreads", 1)) // max(1, -(-len(parts) // len(workers))))
        futures.append(
            client.submit(*block, states, threads, source, actor=True, workers=[w], allow_other_workers=False)
        )
    try:
        actors = [f.result() for f in futures]
    except ThousandError:
        raise
    except Exception as e:  # noqa: BLE001
        if isinstance(e, ImportError) or "thousand" in str(e) and "module" in str(e).lower():
            raise ClusterError(f"the workers cannot run the solver ({e}); install thousand on every worker") from None
        raise _WorkerLost() from None
    return actors


def by_block(keys: np.ndarray, blocks: int) -> list[np.ndarray]:
    """The positions of ``keys`` (block numbers) per block, each in increasing order: one
    sort, not a scan per block (the coordinator runs this on every level)."""
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(blocks + 1))
    return [order[bounds[k] : bounds[k + 1]] for k in range(blocks)]


def _solve_level_on(
    client, actors, owner: np.ndarray, model: DuelModel, lv, i: int, runs: int, pending: dict
) -> tuple[int, float, dict]:
    """Level ``i`` solved on the blocks (:func:`thousand.solvers.duel._solve_level`, its
    turn DPs on the blocks of the opponents, its links here), one message per block and
    run: ``pending`` (block -> the previous level's put) goes with the first. Returns the
    bytes moved, the largest change the puts sent reported, and this level's puts, to go
    with the next message (:func:`_flush` sends them alone)."""
    K = len(actors)
    comp, stor = owner[lv.py], owner[lv.px]
    at_comp, at_stor = by_block(comp, K), by_block(stor, K)
    rank = np.empty(len(lv.px), dtype=np.int64)
    for pos in at_comp:
        rank[pos] = np.arange(len(pos))
    v, d, z = np.empty(len(lv.px)), np.empty(len(lv.px)), np.empty(len(lv.px))
    todo: dict = {k: None for k in range(K) if len(at_comp[k])}  # block -> level positions to run (None: all)
    change, moved, done = 0.0, 0, 0
    r, succ = lv.d_rows, lv.succ
    a = np.zeros(len(v))
    z_used = None
    while True:
        keys = sorted(set(todo) | set(pending))
        calls = [
            actors[k].step(pending.get(k), None if k not in todo else (i, None if todo[k] is None else rank[todo[k]]))
            for k in keys
        ]
        for k, (ch, res) in zip(keys, _results(client, actors, calls)):
            change = max(change, ch)
            if res is not None:
                at = at_comp[k] if todo[k] is None else todo[k]
                v[at], d[at] = res[0], res[1]
                if z_used is None:
                    z[at] = res[2]
                moved += 24 * len(at)
        if z_used is None:
            z_used = 1.0 - z
        new = level_links(model.table.backend, succ, r, v, d, z_used, a) if len(r) else v.copy()
        done += 1
        pending = {k: (i, new[at_stor[k]], done == 1) for k in range(K) if len(at_stor[k])}
        moved += 8 * len(lv.px)
        if not len(r) or done >= runs:
            return moved, change, pending
        stale = stale_busts(new, succ, r, z_used)
        if not len(stale):
            return moved, change, pending
        # re-run them at the new bust values, each on its block after that block stored them
        z_used[stale] = 1.0 - new[succ[stale]]
        owners = comp[stale]
        todo = {k: stale[owners == k] for k in np.unique(owners).tolist()}


def _flush(client, actors, pending: dict) -> float:
    """Send the puts still pending (:func:`_solve_level_on`); their largest change."""
    keys = sorted(pending)
    out = _results(client, actors, [actors[k].step(pending[k], None) for k in keys])
    return max((ch for ch, _ in out), default=0.0)


def _residual(client, actors, owner: np.ndarray, model: DuelModel, sums: list[int], mover_pos: np.ndarray) -> float:
    """The largest Bellman residual ``|TurnDP(P) - P|`` over every pair (a Jacobi pass)."""
    K = len(actors)
    worst = 0.0
    for i, L in enumerate(sums):
        lv = _level(model, L, mover_pos)
        at_comp, at_stor = by_block(owner[lv.py], K), by_block(owner[lv.px], K)
        v = np.empty(len(lv.px))
        calls = [(k, actors[k].residual(i)) for k in range(K) if len(at_comp[k])]
        for (k, _f), vk in zip(calls, _results(client, actors, [f for _, f in calls])):
            v[at_comp[k]] = vk
        calls = [actors[k].compare(i, v[at_stor[k]]) for k in range(K) if len(at_stor[k])]
        worst = max(worst, max(_results(client, actors, calls), default=0.0))
    return worst


STATE = "state.json"


def _resume_point(state: dict | None) -> tuple[int, int, float, list[float]]:
    """(pass, first level to solve, the pass's largest change so far, earlier passes' changes)."""
    if not state:
        return 1, 0, 0.0, []
    return state["pass"], state["level"] + 1, state["change"], list(state["history"])


def identity(rs: Ruleset, objective: str, states: int) -> dict:
    """What a checkpoint must be of: the rules, the objective and the number of states."""
    return {"ruleset": rs.name, "ruleset_hash": rs.hash, "states": states, "objective": objective}


def _read_state(folder: Path, ident: dict) -> dict | None:
    """The checkpoint in ``folder`` (None if it has none); refused when it is of other rules."""
    path = folder / STATE
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ClusterError(f"{path}: not a readable checkpoint ({e}); --force starts again") from None
    if not isinstance(state, dict) or state.get("identity") != ident:
        raise ClusterError(f"{folder}: a checkpoint of other rules; --force starts again over it")
    if not (folder / f"gen-{state.get('gen')}").is_dir():
        raise ClusterError(f"{folder}: the checkpoint's generation {state.get('gen')} is missing; --force starts again")
    return state


def _save(
    client, actors, folder: Path, ident: dict, state, pass_no: int, level: int, change, history, extra=None
) -> dict:
    """A new checkpoint generation: every block's rows, then ``state.json`` naming it
    (``extra``: more of the solve's own state to keep in it)."""
    gen = (state["gen"] + 1) if state else 1
    target = folder / f"gen-{gen}"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    _results(client, actors, [a.save(str(target), k) for k, a in enumerate(actors)])
    new = {
        "identity": ident,
        "gen": gen,
        "pass": pass_no,
        "level": level,
        "change": change,
        "history": list(history),
        "blocks": len(actors),
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **(extra or {}),
    }
    tmp = folder / (STATE + ".tmp")
    tmp.write_text(json.dumps(new))
    os.replace(tmp, folder / STATE)
    for old in folder.glob("gen-*"):
        if old.name != target.name:
            shutil.rmtree(old, ignore_errors=True)
    return new
