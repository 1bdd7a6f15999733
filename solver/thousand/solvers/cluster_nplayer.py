"""The N-player equilibrium solved on a Dask cluster: the sweeps of
:func:`thousand.solvers.nplayer.solve_nplayer`, each worker holding only its block of the values.

The equations are the single machine's (:mod:`thousand.solvers.nplayer`): for a state
``s = (x_0, x_1, ..., x_{N-1})`` (with the mover's seat ``c`` under ``equal_turns``)

    V[s][0] = max over the mover's decisions of  E[ V[s'][N-1] ],
    V[s][k] = E_pi[ V[s'][k-1] ],  k = 1..N-1,

``s'`` the state the turn ends in, solved level by level from the top, each level's zero-turn
links as trees and orbits (best-response rounds, mixing where they cycle), the levels swept
until no value moves by more than ``tol``, then certified by the largest gain of a
deviation.

How the values are split (docs/distributed.md). A state's *row* is its first N-1 player
states ``(x_0, ..., x_{N-2})``, its *rest* the last N-1, ``(x_1, ..., x_{N-1})``. The turn
of ``x_0`` in ``s`` reads the states it ends in, ``(f_t(x_1), ..., f_t(x_{N-1}), x')`` for its
banks and ``(x_1, ..., x_{N-1}, zero(x_0))`` for its zero turn: rows ``f_t(rest)``, with
``f_t`` what the end does to every other player (overtaking, push-off; else nothing). So
the rows are split by their player states into blocks that are unions of the classes
``f_t`` joins (a class per player state where nothing does), every seat's copy of a row in
the same block, and the turns of a state are run by the block of its rest: every value
they read is that block's. The first guesses of the bust values read the rows of the
rests too.

The coordinator (the client) runs the single machine's level solver
(:func:`thousand.solvers.nplayer._solve_level`) on :class:`BlockValues`: each batch of
turns goes to the blocks of the states' rests (the states and their bust values out, each
state's own value, A, b and derivative back), and the values the level solver writes stay
with the coordinator until the level ends; they then go to the blocks of their rows.

Fault tolerance is the duel's (:mod:`thousand.solvers.cluster`): a checkpoint generation at
a level's end every ``checkpoint_seconds`` and at each sweep's end, a lost worker's blocks
started again from the last one, a new run of the same command going on from it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from thousand.rules.ruleset import Ruleset

from .cluster import (
    CHECKPOINT_SECONDS,
    ClusterError,
    _results,
    _resume_point,
    _save,
    _start_blocks,
    block_memory,
    by_block,
    checkpoint_rows,
    gather_rows,
    identity,
    joined,
    recovering,
    save_block,
)
from .nplayer import (
    NPlayerGame,
    NPlayerSolution,
    StateValues,
    _not_settling,
    _solve_level,
    check_supported,
    level_states,
    level_sums,
    stalled,
)

__all__ = [
    "GREEDY_CLASSES",
    "BlockValues",
    "NPlayerBlock",
    "NPlayerClusterRun",
    "key_owner",
    "solve_nplayer_on_cluster",
]

GREEDY_CLASSES = 100_000  # up to this many class tuples are balanced one by one, largest first


def key_owner(game: NPlayerGame, blocks: int) -> np.ndarray:
    """The block of every tuple of N-1 player states (flat, ``0 .. m**(N-1) - 1``): blocks
    are unions of tuples of classes, a class being the player states that the ends' changes
    to other players (:class:`thousand.solvers.nplayer.EndRows` ``opp``) join, so that a
    turn's reads stay in the block of its rest. Balanced by their tuples: largest first
    onto the lightest block where the class tuples are few; where they are many (every
    player state its own class), by the tuple's number, which spreads every level alike."""
    m, N = game.m, game.N
    pairs = set()
    for rows in {id(game.ends): game.ends, id(game.early_ends): game.early_ends}.values():
        for e in rows:
            if e.opp is not None:
                b, x = np.nonzero(e.opp != np.arange(m)[None, :])
                pairs.update(zip(x.tolist(), e.opp[b, x].tolist()))
    cls = joined(m, pairs)
    C = int(cls.max()) + 1
    keys = np.arange(m ** (N - 1), dtype=np.int64)
    tup = np.zeros(len(keys), dtype=np.int64)
    for k in range(N - 1):
        tup = tup * C + cls[(keys // m ** (N - 2 - k)) % m]
    ids, inverse, counts = np.unique(tup, return_inverse=True, return_counts=True)
    blocks = max(1, min(blocks, len(ids)))
    if len(ids) <= GREEDY_CLASSES:
        load = np.zeros(blocks, dtype=np.int64)
        of_tuple = np.empty(len(ids), dtype=np.int64)
        for t in np.lexsort((ids, -counts)):
            k = int(np.argmin(load))
            of_tuple[t] = k
            load[k] += counts[t]
    else:
        of_tuple = np.arange(len(ids), dtype=np.int64) % blocks
    return of_tuple[inverse]


class _Rows:
    """A block's values, indexed by the game's flat state numbers as the single machine's
    ``V`` is (``V[states]``, ``V[states, cols]``, ``V[states] = values``): only the rows of
    the block's keys exist, and reading another is refused rather than wrapped round."""

    def __init__(self, game: NPlayerGame, keys: np.ndarray, data: np.ndarray):
        self.game, self.data = game, data  # data: (keys, seats, m, N)
        self.flat = data.reshape(-1, game.N)
        self.slot = np.full(game.M1, -1, dtype=np.int64)
        self.slot[keys] = np.arange(len(keys))

    def _local(self, states) -> np.ndarray:
        g = self.game
        s = np.asarray(states, dtype=np.int64)
        slot = self.slot[(s % g.total) // g.m]
        if slot.size and slot.min() < 0:
            raise ClusterError("a block was asked for a row it does not hold (the split is not closed)")
        return (slot * g.seats + s // g.total) * g.m + s % g.m

    def __getitem__(self, key):
        if isinstance(key, tuple):
            states, cols = key
            return self.flat[self._local(states), cols]
        return self.flat[self._local(key)]

    def __setitem__(self, states, values) -> None:
        self.flat[self._local(states)] = values


class NPlayerBlock:
    """One worker's block: the values of the rows whose player states are its ``keys`` (every
    seat's copy), and the turns of the states whose rest is one of them (module docstring).
    Run as a Dask actor; every method is also callable in-process (the tests do)."""

    def __init__(self, rs: Ruleset, players: int, keys: np.ndarray, threads: int = 1, checkpoint: str | None = None):
        self.game = game = NPlayerGame(rs, players, threads=threads)
        self.keys = np.unique(np.asarray(keys, dtype=np.int64))
        self.shape = (game.seats, game.m, game.N)
        self.V = _Rows(game, self.keys, np.full((len(self.keys), *self.shape), 1.0 / players))
        if checkpoint:
            self.load(checkpoint)
        # the turns, first guesses, trees, reads and certificate terms of the single machine,
        # on this block's rows: the states asked for have their rests (and rows) here
        self.values = StateValues(self.V, game)
        self.busy = 0.0  # seconds spent in step(): the share of the solve this worker computed

    def step(self, put: tuple | None, call: tuple | None):
        """One message of the coordinator: first ``put`` = (states, values) (:meth:`put`), then
        ``call`` = (method, arguments, keywords), a method of
        :class:`thousand.solvers.nplayer.StateValues` on this block's rows; timed into
        :attr:`busy`. The put comes first, and that is all the order a level needs:
        the calls read only this block's own rows. Returns (the put's replaced values or
        None, the call's result or None)."""
        t0 = time.perf_counter()
        old = self.put(*put) if put is not None else None
        out = None
        if call is not None:
            name, args, kwargs = call
            if name not in ("turns", "own_values", "first_guess", "tree_step", "best", "read"):
                raise ClusterError(f"a block has no call {name!r}")
            out = getattr(self.values, name)(*args, **kwargs)
        self.busy += time.perf_counter() - t0
        return old, out

    def put(self, states: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Store the values of ``states`` (their rows here); returns the values they replace."""
        old = self.V[states]
        self.V[states] = values
        return old

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, values (keys, seats, m * N)): this block's rows, to assemble the table."""
        return self.keys, self.V.data.reshape(len(self.keys), self.game.seats, -1)

    def save(self, folder: str, k: int) -> str:
        """Write this block's rows to ``folder`` (block ``k``), each file atomically."""
        save_block(folder, k, self.keys, self.V.data)
        return self.game.rs.hash

    def load(self, folder: str) -> None:
        """This block's rows from a checkpoint generation (written by any split)."""
        found = np.zeros(self.game.M1, dtype=bool)
        for keys, block in checkpoint_rows(folder, self.V.slot >= 0, self.shape):
            self.V.data[self.V.slot[keys]] = block
            found[keys] = True
        if not found[self.keys].all():
            raise ClusterError(f"{folder}: the checkpoint lacks {int((~found[self.keys]).sum())} rows")

    def memory(self) -> dict:
        """This worker's peak resident memory, its block's values and the seconds it computed."""
        return block_memory(self.V.data.nbytes, int(np.prod(self.V.data.shape[:-1])), self.busy)


class BlockValues:
    """:class:`thousand.solvers.nplayer.StateValues` answered by the blocks: turns by the
    blocks of the states' rests, reads by those of their rows, writes kept here for the
    level being solved (:meth:`begin`) and stored on the blocks when it ends (:meth:`end`).
    Within a level the coordinator's own writes are read back from here, as the single
    machine reads its own. Where a bank can end in the same level (penalties, overtaking,
    push-off lower it) the turns read values of the level too: the writes not yet stored
    go to each block with its next batch of turns, as the single machine's turns see every
    value written before them (with the level's values as the sweep before left them, the
    sweeps of such a game can alternate without settling). ``moved`` counts the bytes sent
    and received."""

    def __init__(self, client, actors: list, game: NPlayerGame, owner: np.ndarray):
        self.client, self.actors, self.game, self.owner = client, actors, game, owner
        self.moved = 0
        self.round_trips = 0  # rounds of messages, each waited for: the latency a solve pays
        self.begin(np.zeros(0, dtype=np.int64))

    def begin(self, states: np.ndarray) -> None:
        """A level starts: ``states`` (sorted) are the ones its solver writes."""
        self.level = states
        self.vals = np.empty((len(states), self.game.N))
        self.old = np.empty((len(states), self.game.N))  # each state's value before the level
        self.written = np.zeros(len(states), dtype=bool)
        self.stored = np.zeros(len(states), dtype=bool)  # written and sent as written
        self.had = np.zeros(len(states), dtype=bool)  # old is known

    def end(self) -> float:
        """The level's values to the blocks of their rows; the largest change from the
        values they held before the level."""
        self._on(None, None, put=True)
        w = self.written
        change = float(np.max(np.abs(self.vals[w] - self.old[w]), initial=0.0))
        self.begin(np.zeros(0, dtype=np.int64))
        return change

    def _rest_key(self, states: np.ndarray) -> np.ndarray:
        return states % self.game.M1

    def _row_key(self, states: np.ndarray) -> np.ndarray:
        return (states % self.game.total) // self.game.m

    def _on(self, keys: np.ndarray | None, name: str | None, *arrays, put: bool | None = None, **kwargs) -> list:
        """``name`` called on each block with its share of ``arrays`` (by the blocks of
        ``keys``), all blocks at once, each message carrying first the writes not yet stored
        on that block (where the turns read the level's values, or ``put``); returns
        [(positions, result)]."""
        K = len(self.actors)
        if put is None:
            put = self.game.lowers
        pend = np.flatnonzero(self.written & ~self.stored) if put else np.zeros(0, dtype=np.int64)
        to_put = by_block(self.owner[self._row_key(self.level[pend])], K)
        to_call = by_block(self.owner[keys], K) if keys is not None else [pend[:0]] * K
        calls, futures = [], []
        for k in range(K):
            p, c = pend[to_put[k]], to_call[k]
            if len(p) or len(c):
                sent = (self.level[p], self.vals[p]) if len(p) else None
                call = (name, tuple(a[c] for a in arrays), kwargs) if len(c) else None
                calls.append((p, c))
                futures.append(self.actors[k].step(sent, call))
                self.moved += sum(x.nbytes for x in sent or ()) + sum(a[c].nbytes for a in arrays)
        out = _results(self.client, self.actors, futures)
        self.round_trips += bool(futures)
        got = []
        for (p, c), (old, res) in zip(calls, out):
            if old is not None:
                first = p[~self.had[p]]
                self.old[first] = old[~self.had[p]]
                self.had[p] = True
                self.stored[p] = True
                self.moved += old.nbytes
            if res is not None:
                got.append((c, res))
                self.moved += _nbytes(res)
        return got

    def _gathered(self, keys, name: str, states, *arrays, shapes, **kwargs):
        """The results of ``name`` put back in the order of ``states``: one array per entry
        of ``shapes`` (each the trailing shape of its result; None: a result that is None)."""
        n = len(states)
        outs = [None if sh is None else np.empty((n, *sh)) for sh in shapes]
        for pos, res in self._on(keys, name, states, *arrays, **kwargs):
            res = res if isinstance(res, tuple) else (res,)
            for o, r in zip(outs, res):
                if o is not None:
                    o[pos] = r
        return tuple(outs) if len(outs) > 1 else outs[0]

    def turns(self, states: np.ndarray, z: np.ndarray, grad: bool = False):
        N = self.game.N
        shapes = [(), (N,), (), () if grad else None]
        return self._gathered(self._rest_key(states), "turns", states, z, shapes=shapes, grad=grad)

    def own_values(self, states: np.ndarray, z: np.ndarray):
        return self._gathered(self._rest_key(states), "own_values", states, z, shapes=[(), ()])

    def first_guess(self, states: np.ndarray) -> np.ndarray:
        return self._gathered(self._rest_key(states), "first_guess", states, shapes=[()])

    def tree_step(self, states: np.ndarray, after: np.ndarray) -> np.ndarray:
        # it reads the level's values: the writes not yet stored go with it, whatever the rules
        return self._gathered(self._rest_key(states), "tree_step", states, after, shapes=[(self.game.N,)], put=True)

    def best(self, states: np.ndarray) -> np.ndarray:
        return self._gathered(self._rest_key(states), "best", states, shapes=[()])

    def read(self, states: np.ndarray) -> np.ndarray:
        out = np.empty((len(states), self.game.N))
        pos = np.minimum(np.searchsorted(self.level, states), max(len(self.level) - 1, 0))
        here = np.zeros(len(states), dtype=bool)
        if len(self.level):
            here = (self.level[pos] == states) & self.written[pos]
        out[here] = self.vals[pos[here]]
        away = np.flatnonzero(~here)
        if len(away):
            out[away] = self._gathered(self._row_key(states[away]), "read", states[away], shapes=[(self.game.N,)])
        return out

    def write(self, states: np.ndarray, values: np.ndarray) -> None:
        pos = np.searchsorted(self.level, states)
        if np.any(pos >= len(self.level)) or np.any(self.level[np.minimum(pos, len(self.level) - 1)] != states):
            raise ClusterError("the level solver wrote a state outside its level")
        self.vals[pos] = values
        self.written[pos] = True
        self.stored[pos] = False


def _nbytes(result) -> int:
    if isinstance(result, tuple):
        return sum(_nbytes(r) for r in result)
    return result.nbytes if isinstance(result, np.ndarray) else 8


@dataclass
class NPlayerClusterRun:
    """How a cluster solve ran: the blocks, workers, recoveries, the checkpoint it began
    from (None), the bytes the coordinator sent and received, each worker's memory and
    computing seconds, and the rounds of messages the coordinator waited for."""

    blocks: int
    workers: int
    recoveries: int
    resumed_from: dict | None
    bytes_moved: int
    worker_memory: list
    round_trips: int


def solve_nplayer_on_cluster(
    rs: Ruleset,
    players: int,
    client,
    checkpoint: str | os.PathLike,
    tol: float = 1e-13,
    max_passes: int = 500,
    blocks: int | None = None,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
    progress: Callable[[dict], None] | None = None,
    values_path: str | os.PathLike | None = None,
) -> tuple[NPlayerSolution, NPlayerClusterRun]:
    """The equilibrium of ``rs`` for ``players`` seats on the Dask ``client``'s workers
    (module docstring), one block per worker (or ``blocks``), checkpointing into the folder
    ``checkpoint`` and going on from what it holds. ``progress(info)`` as the duel's
    (:func:`thousand.solvers.cluster.solve_duel_on_cluster`), counting states.
    ``values_path``: gather the values into that ``.npy`` file (memory-mapped).
    Raises :class:`thousand.solvers.nplayer.NPlayerError` as the single machine does
    (no equilibrium of an orbit, sweeps that do not settle)."""
    t0 = time.perf_counter()
    check_supported(rs, players)
    game = NPlayerGame(rs, players, threads=1)
    N, total = players, game.seats * game.total
    folder = Path(checkpoint)
    ident = identity(rs, f"players{players}", total)
    workers = len(client.scheduler_info()["workers"])
    if not workers:
        raise ClusterError("the cluster has no workers")
    owner = key_owner(game, blocks or workers)
    parts = [np.flatnonzero(owner == k) for k in range(int(owner.max()) + 1)]
    sums = level_sums(game)
    moved = trips = 0

    def run(actors, state):
        nonlocal moved, trips
        pass_no, start_level, change, history = _resume_point(state)
        mixed = {int(k): w for k, w in (state or {}).get("mixed", [])}
        rounds = (state or {}).get("rounds", 0)
        values = BlockValues(client, actors, game, owner)
        last_save = time.perf_counter()
        try:
            while True:
                if pass_no > max_passes or stalled(history):
                    raise _not_settling(rs.name, N, pass_no - 1, history[-1])
                done = 0
                for i in range(start_level, len(sums)):
                    lvl = level_states(game, sums[i])
                    values.begin(lvl)
                    rounds = max(rounds, _solve_level(lvl, values, mixed))
                    change = max(change, values.end())
                    done += len(lvl)
                    if progress:
                        progress(
                            {
                                "pass": pass_no,
                                "level": i + 1,
                                "levels": len(sums),
                                "pairs_done": done,
                                "pairs": total,
                                "unit": "states",
                                "seconds": time.perf_counter() - t0,
                                "change": change,
                            }
                        )
                    if time.perf_counter() - last_save >= checkpoint_seconds or i == len(sums) - 1:
                        extra = {"mixed": sorted(mixed.items()), "rounds": rounds}
                        state = _save(client, actors, folder, ident, state, pass_no, i, change, history, extra)
                        last_save = time.perf_counter()
                start_level = 0
                if change <= tol or not game.lowers:
                    break
                history.append(change)
                # each sweep finds the mixtures of its own orbits, as the single machine's
                pass_no, change, mixed = pass_no + 1, 0.0, {}
            cert = 0.0
            for L in sums:
                lvl = level_states(game, L)
                cert = max(cert, float(np.max(values.best(lvl) - values.read(lvl)[:, 0])))
        finally:
            moved, trips = moved + values.moved, trips + values.round_trips
        return pass_no, cert, mixed, rounds

    def start(state):
        return _start_blocks(client, (NPlayerBlock, rs, players), parts, folder, state)

    (passes, cert, mixed, rounds), actors, recoveries, resumed_from = recovering(client, folder, ident, start, run)
    if values_path is None:
        V = np.empty((total, N))
    else:
        V = np.lib.format.open_memmap(values_path, mode="w+", dtype=np.float64, shape=(total, N))
    # the table's rows by key: V[c total + key m + last] is rows_of[key, c, last N + n]
    rows_of = V.reshape(game.seats, game.M1, game.m * N).transpose(1, 0, 2)
    memory = gather_rows(client, actors, rows_of)
    sol = NPlayerSolution(rs, N, game.space, V, cert, time.perf_counter() - t0, rounds, mixed, passes)
    return sol, NPlayerClusterRun(len(parts), workers, recoveries, resumed_from, moved, memory, trips)
