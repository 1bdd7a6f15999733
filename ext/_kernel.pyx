# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False, embedsignature=True
"""Compiled kernel (``thousand.kernel._kernel``): roll classes, the single-turn DP, where a
turn ends, the duel's passes and the sweeps of policy iteration, one file per algorithm:

- ``kernel_rolls.pxi``: every roll of n dice in classes that offer the same set-asides;
- ``kernel_turn.pxi``: the turn DP (and its greedy policy as sparse rows);
- ``kernel_ends.pxi``: the end distribution of a turn under the DP's or a rule's decisions;
- ``kernel_duel.pxi``: the duel's level and frame passes;
- ``kernel_sweeps.pxi``: sparse rows, bust links, the level and pattern sweeps.

They are included here, textually: one compiled module with one set of C helpers
(``thk_kernel.h``) and declarations shared with the simulator (``thk.pxd``).

The compiled twin of :mod:`thousand.kernel._pure`: the same functions with the same
arguments and the same results (class numbering, option order, tie rules,
tail solve, gradient). The equations are stated in :mod:`thousand.kernel`.

Layout of the turn DP
---------------------
Columns (opponent states) are independent DPs, solved in blocks of at most
``BLOCK`` columns. A block stores the arrival values A(t, m) (and dA, AC, dAC
as needed) as rows of ``(dice + 1) x width`` doubles, columns innermost, so
every inner loop runs over contiguous columns (C helpers below; on x86-64
Linux with GCC also compiled for AVX2). The rows are one per total
0 .. T + maxpts (maxpts = the most units one roll adds), or, for a long turn
without the full tables, a ring of period maxpts + 1 stored twice so that no
option wraps; memory is then independent of T. Totals above T all read the
tail row (solved first, its hot-dice cycle by Newton's method): narrow blocks
copy it into the rows above T, wide ones redirect the options that pass T.
The DP runs without the GIL and without Python objects; a column's values do
not depend on the other columns.
"""

import threading

import numpy as np

from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t, uint8_t
from cython.parallel cimport parallel, prange, threadid

from thk cimport HOT_CONFIRM, HOT_FREE, HOT_MUST_ROLL, PlanView, plan_view

cdef extern from "thk_kernel.h":
    int thk_max_threads() noexcept nogil
    void thk_axpy(double* out, double p, const double* src, Py_ssize_t n) noexcept nogil
    void thk_acc4(double* out, const double* s0, const double* s1, const double* s2,
                  const double* s3, double p0, double p1, double p2, double p3,
                  Py_ssize_t n) noexcept nogil
    void thk_vmax(double* tmp, const double* src, Py_ssize_t n) noexcept nogil
    void thk_max2(double* tmp, double* dtmp, const double* src, const double* dsrc,
                  Py_ssize_t n) noexcept nogil
    void thk_argmax(double* top, Py_ssize_t* pick, const double* src, Py_ssize_t idx,
                    Py_ssize_t n) noexcept nogil
    void thk_settle(double* v, const double* r, const double* s, Py_ssize_t n) noexcept nogil
    void thk_settle_d(double* dv, const double* dr, const double* s, const double* r,
                      Py_ssize_t n) noexcept nogil
    void thk_route(double* et, double* rm, const double* row, const double* a, const double* s,
                   Py_ssize_t n) noexcept nogil

IMPLEMENTATION = "compiled"

MUST_ROLL, FREE, CONFIRM = 0, 1, 2



cdef class Rolls:
    """The roll classes of every dice count 1..``dice``, flattened (see
    :class:`thousand.kernel._pure.Rolls`): built once per ruleset by
    :class:`thousand.kernel.Backend` and owning its arrays."""
    cdef readonly object cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used
    cdef readonly Py_ssize_t dice
    cdef readonly int hot_mode
    cdef object _flat   # the classes flattened for the duel loops (a _Flat), built on first use
    cdef object _singles  # the single-option classes of turn_ends' forward pass, built on first use

    def __cinit__(self, cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, dice, hot_mode):
        if dice < 1 or hot_mode not in (MUST_ROLL, FREE, CONFIRM):
            raise ValueError("dice must be >= 1 and hot_mode 0, 1 or 2")
        self.cls_ptr = np.ascontiguousarray(cls_ptr, dtype=np.int64)
        self.cls_prob = np.ascontiguousarray(cls_prob, dtype=np.float64)
        self.cls_instant = np.ascontiguousarray(cls_instant, dtype=np.uint8)
        self.opt_ptr = np.ascontiguousarray(opt_ptr, dtype=np.int64)
        self.opt_points = np.ascontiguousarray(opt_points, dtype=np.int64)
        self.opt_used = np.ascontiguousarray(opt_used, dtype=np.int64)
        self.dice, self.hot_mode = dice, hot_mode

    def arrays(self):
        return (self.cls_ptr, self.cls_prob, self.cls_instant, self.opt_ptr, self.opt_points, self.opt_used,
                self.dice, self.hot_mode)


cdef class Plans:
    """Every mover's turn ends in a duel, flattened (see :class:`thousand.kernel.DuelPlans`
    and :class:`thousand.kernel._pure.Plans`), owning contiguous copies of the arrays."""
    cdef readonly object ptr, stop_ok, forced_ok, next, after, climbed, bust, score, overtaken, pushed
    cdef readonly object on_barrel, win_col, win_L
    cdef readonly Py_ssize_t n      # player states (solver states)

    def __cinit__(self, ptr, stop_ok, forced_ok, next, after, climbed, bust, score, overtaken, pushed,
                  on_barrel, win_col=None, win_L=None):
        i64, u8 = np.int64, np.uint8
        self.ptr = np.ascontiguousarray(ptr, dtype=i64)
        self.stop_ok = np.ascontiguousarray(stop_ok, dtype=u8)
        self.forced_ok = np.ascontiguousarray(forced_ok, dtype=u8)
        self.next = np.ascontiguousarray(next, dtype=i64)
        self.after = np.ascontiguousarray(after, dtype=i64)
        self.climbed = np.ascontiguousarray(climbed, dtype=u8)
        self.bust = np.ascontiguousarray(bust, dtype=i64)
        self.score = np.ascontiguousarray(score, dtype=i64)
        self.overtaken = np.ascontiguousarray(overtaken, dtype=i64)
        self.pushed = np.ascontiguousarray(pushed, dtype=i64)
        self.on_barrel = np.ascontiguousarray(on_barrel, dtype=u8)
        self.win_col = None if win_col is None else np.ascontiguousarray(win_col, dtype=i64)
        self.win_L = None if win_L is None else np.ascontiguousarray(win_L, dtype=np.float64)
        self._check()

    def _check(self):
        """Every index the duel loops follow stays inside the arrays (checked once, here:
        the loops run in C without bounds checks)."""
        if self.ptr.ndim != 1 or self.ptr.shape[0] < 1:
            raise ValueError("plan_ptr must have one entry per state plus one")
        n = self.n = self.ptr.shape[0] - 1
        for arr_, name in ((self.bust, "bust_idx"), (self.score, "score"), (self.overtaken, "overtaken"),
                           (self.pushed, "pushed"), (self.on_barrel, "on_barrel")):
            if arr_.shape != (n,):
                raise ValueError(f"{name} must have one entry per state ({n})")
        for arr_ in (self.bust, self.overtaken, self.pushed):
            if n and (arr_.min() < 0 or arr_.max() >= n):
                raise ValueError("bust_idx/overtaken/pushed must be state indices")
        rows = int(self.ptr[-1])
        if self.ptr[0] < 0 or np.any(np.diff(self.ptr) < 1):
            raise ValueError("plan_ptr must start at 0 or more and give every state a row")
        for arr_ in (self.stop_ok, self.forced_ok, self.next, self.after, self.climbed):
            if arr_.shape[0] < rows:
                raise ValueError("plan arrays are shorter than plan_ptr says")
        if rows and self.next[:rows].max() >= n:
            raise ValueError("plan_next must be a state index, -1 (a win) or negative (unused)")
        if (self.win_col is None) != (self.win_L is None):
            raise ValueError("win_col and win_L go together")
        if self.win_col is not None:
            if self.win_L.ndim != 2 or self.win_L.shape[0] != n or self.win_L.shape[1] < 1:
                raise ValueError("win_L must have one row per state and at least one column")
            if self.win_col.ndim != 1 or self.win_col.shape[0] < rows:
                raise ValueError("win_col is shorter than plan_ptr says")
            if rows and self.win_col[:rows].max() >= self.win_L.shape[1]:
                raise ValueError("win_col must be a column of win_L or negative")

    def arrays(self):
        return (self.ptr, self.stop_ok, self.forced_ok, self.next, self.after, self.climbed, self.bust,
                self.score, self.overtaken, self.pushed, self.on_barrel, self.win_col, self.win_L)


cdef enum:
    _NEWTON = 200          # Newton steps of the tail solve (as the pure twin)

# Columns per block: a block keeps (storage rows) x (dice + 1) x BLOCK doubles (twice
# with the gradient), which should stay in the L2/L3 caches; 128 measured best
# for the plain preset at K = 1000 (T = 200 units).
cdef enum:
    BLOCK = 128

# duel_level runs on one thread below this much work (sum over movers of turn rows x
# (opponents + 8); one row of one column costs some 40 ns for the plain preset)
cdef enum:
    _SERIAL_WORK = 8192


# the algorithms, one file each (textually included: one module, one set of C helpers)
include "kernel_rolls.pxi"
include "kernel_turn.pxi"
include "kernel_ends.pxi"
include "kernel_duel.pxi"
include "kernel_sweeps.pxi"
