"""Where the duel's values live while the passes run: in memory, or out of core.

The duel solver reads and writes its values only through the few accessors below, so
the same passes run on an array in memory (:class:`InMemory`, the default) or on a
memory-mapped file of which only a bounded part is resident (:class:`ValueStore`).

Why the store is laid out by the opponent. The solver's values are ``Q[y, x] = P(x, y)``.
A turn of mover ``x`` against ``y`` reads ``Q[x', y_t] = P(y_t, x')`` for every state
``x'`` it can bank to, with ``y_t`` = ``y`` pushed off the barrel and/or overtaken, and
its bust value ``Q[zero(x), y]``: all of it on the rows ``y``, ``pushed(y)``,
``overtaken(y)``, ``overtaken(pushed(y))`` of ``P``. A level of the duel (both scores'
sum) reads the whole region above it, so no band of levels is enough; but the pairs of a
level split by their opponent, and each part reads those four rows of ``P`` per
opponent. So the store holds ``P`` row-major (the kernel reads it as the transposed
``Q``, in place); the passes run each level in parts by opponent, in state order, whose
rows together touch at most ``budget // window`` fault-around windows (:data:`WINDOW`;
:meth:`ValueStore.opponent_parts`); the solver's own gathers and scatters run in parts of
rows the same way (:meth:`ValueStore.row_parts`); and after each part the mapping is
dropped from this process (``madvise(MADV_DONTNEED)``; a shared file mapping keeps its
data in the file and the page cache). At most the budget is then mapped at once.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

from thousand.base.errors import ThousandError

__all__ = ["PAGE", "READ_ROWS", "WINDOW", "InMemory", "ValueStore", "values_of"]

PAGE = mmap.PAGESIZE
# A read fault on a file mapping also maps the pages around it that are in the page cache
# ("fault-around", 64 KiB by default in Linux, and not turned off by MADV_RANDOM); they
# are resident in the process all the same, so a row is counted in such windows.
WINDOW = max(PAGE, 64 * 1024)
READ_ROWS = 4  # rows of P one opponent's turns read: y, pushed(y), overtaken(y), overtaken(pushed(y))


class InMemory:
    """The values ``Q`` (n, n) as an array: one part, plain indexing."""

    def __init__(self, Q: np.ndarray):
        self.Q = Q

    def get(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return self.Q[i, j]

    def put(self, i: np.ndarray, j: np.ndarray, v: np.ndarray) -> None:
        self.Q[i, j] = v

    def opponent_parts(self, py: np.ndarray, plans) -> list[np.ndarray]:
        return [np.arange(len(py))]

    def release(self) -> None:
        pass


def values_of(Q) -> InMemory | ValueStore:
    """An accessor for ``Q``: a :class:`ValueStore` as it is, an array wrapped."""
    return Q if isinstance(Q, (InMemory, ValueStore)) else InMemory(Q)


def _groups(keys: np.ndarray) -> list[np.ndarray]:
    """Indices of ``keys``, one array per distinct key, in key order."""
    if not len(keys):
        return []
    order = np.argsort(keys, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(keys[order])) + 1)


def _window_parts(keys: np.ndarray, lo: np.ndarray, hi: np.ndarray, limit: int) -> list[np.ndarray]:
    """Indices of ``keys`` in parts that touch at most ``limit`` windows together: key
    ``u`` (the sorted distinct keys) touches windows ``lo[u, c]..hi[u, c]`` for each c.
    Greedy in key order, so that neighbouring rows share their windows."""
    if not len(keys):
        return []
    uniq, inv = np.unique(keys, return_inverse=True)
    cut_at, held = [], set()
    for u in range(len(uniq)):
        mine = {w for a, b in zip(lo[u].tolist(), hi[u].tolist()) for w in range(a, b + 1)}
        if held and len(held | mine) > limit:
            cut_at.append(u)
            held = set()
        held |= mine
    part_of_key = np.zeros(len(uniq), dtype=np.int64)
    part_of_key[cut_at] = 1
    return _groups(np.cumsum(part_of_key)[inv])


class ValueStore:
    """The duel's values ``P`` (n, n) in a ``.npy`` file, memory-mapped, with at most
    ``budget`` bytes of it resident in this process (module docstring).

    ``P[x, y]`` is the mover's chance in state ``x`` against ``y``; the solver works on
    ``Q = P.T``. The file is an ordinary ``.npy`` array: ``np.load(path, mmap_mode="r")``
    reads it back. ``measure=True`` notes before every release how much of the store is
    resident in this process (``peak_resident``, bytes, the largest; :meth:`resident`),
    which is how the budget is shown to hold. ``window``: the unit in which rows are
    counted (:data:`WINDOW`; a smaller one makes more, smaller parts, which the tests use
    on tiny games, but then fault-around can map more than the budget). ``reopen``: go
    on from the values already in ``path`` (an interrupted solve's; checked: shape,
    type, every value in [0, 1]) instead of 1/2 everywhere."""

    def __init__(
        self,
        path: str | os.PathLike,
        n: int,
        budget: int,
        measure: bool = False,
        window: int = WINDOW,
        reopen: bool = False,
    ):
        self.path = os.path.realpath(os.fspath(path))
        self.window = int(window)
        self.row_bytes = (-(-n * 8 // self.window) + 1) * self.window  # the windows one row of P can touch
        self.rows = int(budget) // self.row_bytes
        if self.rows < READ_ROWS:
            raise ThousandError(
                f"a value store of {n:,} states needs a memory budget of at least "
                f"{READ_ROWS * self.row_bytes / 2**20:.2f} MB ({READ_ROWS} rows of "
                f"{self.row_bytes:,} bytes), not {int(budget) / 2**20:.2f} MB"
            )
        self.n, self.budget, self.measure = n, int(budget), measure
        self.windows = self.budget // self.window
        self.peak_resident = 0
        self.reopened = reopen
        if reopen:
            try:
                self.P = np.lib.format.open_memmap(self.path, mode="r+")
            except (OSError, ValueError) as e:
                raise ThousandError(f"{self.path}: not a readable .npy array ({e})") from None
            if self.P.shape != (n, n) or self.P.dtype != np.float64 or not self.P.flags.c_contiguous:
                raise ThousandError(
                    f"{self.path}: holds {self.P.dtype} values of shape {self.P.shape}, "
                    f"not the float64 ({n}, {n}) of these rules"
                )
        else:
            self.P = np.lib.format.open_memmap(self.path, mode="w+", dtype=np.float64, shape=(n, n))
        self.Q = self.P.T
        self.P._mmap.madvise(mmap.MADV_RANDOM)  # no read-ahead from the file beyond the page read
        self.release()
        for a in range(0, n, self.rows):
            if reopen:
                block = self.P[a : a + self.rows]
                if not np.all((block >= 0.0) & (block <= 1.0)):
                    raise ThousandError(
                        f"{self.path}: holds values outside [0, 1]; it is not a duel's values (damaged?)"
                    )
            else:
                self.P[a : a + self.rows] = 0.5
            self.release()

    @property
    def table_bytes(self) -> int:
        return self.n * self.n * 8

    def resident(self) -> int:
        """Bytes of the store present in this process's page tables now (from
        ``/proc/self/pagemap``, bit 63 of each page's entry; 0 where it cannot be read)."""
        a = self.P.ctypes.data
        first, last = a // PAGE, (a + self.P.nbytes - 1) // PAGE + 1
        try:
            with open("/proc/self/pagemap", "rb") as f:
                f.seek(first * 8)
                entries = np.frombuffer(f.read((last - first) * 8), dtype=np.uint64)
        except OSError:
            return 0
        return int(np.count_nonzero(entries >> np.uint64(63))) * PAGE

    def release(self) -> None:
        """Drop the store's pages from this process (their data stays in the file);
        with ``measure``, note first how much of it was resident."""
        if self.measure:
            self.peak_resident = max(self.peak_resident, self.resident())
        self.P._mmap.madvise(mmap.MADV_DONTNEED)

    def _windows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first and last window each row of P touches (``rows`` any shape)."""
        a, w = self.P.ctypes.data, self.n * 8
        return (a + rows * w) // self.window, (a + (rows + 1) * w - 1) // self.window

    def row_parts(self, rows: np.ndarray) -> list[np.ndarray]:
        """Indices of ``rows`` (rows of P) in parts within the budget."""
        rows = np.asarray(rows)
        u = np.unique(rows)
        lo, hi = self._windows(u[:, None])
        return _window_parts(rows, lo, hi, self.windows)

    def get(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """``Q[i, j]`` = ``P[j, i]``, read in parts within the budget."""
        out = np.empty(len(j))
        for part in self.row_parts(j):
            out[part] = self.P[j[part], i[part]]
            self.release()
        return out

    def put(self, i: np.ndarray, j: np.ndarray, v) -> None:
        """``Q[i, j] = v``, written in parts within the budget."""
        v = np.broadcast_to(v, np.shape(j))
        for part in self.row_parts(j):
            self.P[j[part], i[part]] = v[part]
            self.release()

    def opponent_parts(self, py: np.ndarray, plans) -> list[np.ndarray]:
        """The pairs with opponents ``py`` in parts whose turns read rows of P within
        the budget: opponent y's turns read rows y, pushed(y), overtaken(y) and
        overtaken(pushed(y)) (``plans``: the :class:`thousand.kernel.DuelPlans`)."""
        py = np.asarray(py)
        u = np.unique(py)
        pu = plans.pushed[u]
        lo, hi = self._windows(np.stack([u, pu, plans.overtaken[u], plans.overtaken[pu]], axis=1))
        return _window_parts(py, lo, hi, self.windows)

    def close(self) -> None:
        """Write the values to the file and unmap them."""
        self.P.flush()
        self.release()
        del self.Q, self.P
