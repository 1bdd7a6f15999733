# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False, embedsignature=True
"""Compiled kernel (``thousand._kernel``): roll classes and the single-turn DP.

The compiled twin of :mod:`thousand._pure`: the same functions with the same
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
    :class:`thousand._pure.Rolls`): built once per ruleset by
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
    and :class:`thousand._pure.Plans`), owning contiguous copies of the arrays."""
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


# =========================================================================== rolls


ctypedef struct _Best:
    Py_ssize_t F          # faces
    Py_ssize_t G          # groups
    const int64_t* gc     # G x F group counts
    const int64_t* gp     # G group points
    int64_t* gsize        # G dice per group
    int64_t* binom        # binom[a * bstride + b] = C(a, b)
    Py_ssize_t bstride
    int64_t* memo_p       # best points per ranked count vector
    int64_t* memo_u       # dice used (-1: not yet known)
    int64_t* memo_f       # most points of a composition using every die (-1: none; -2: not yet known)
    int64_t* work         # (n + 1) x F scratch vectors, one per recursion depth


cdef inline Py_ssize_t _rank(const _Best* b, const int64_t* c) noexcept nogil:
    """Rank of a count vector among those with sum <= n (combinatorial number system).

    With partial sums s_i = c_0 + ... + c_i (non-decreasing, at most n) the
    strictly increasing b_i = s_i + i give rank = sum_i C(b_i, i + 1). A
    vector's sub-vectors have smaller ranks.
    """
    cdef Py_ssize_t i, s = 0, r = 0
    for i in range(b.F):
        s += c[i]
        r += b.binom[(s + i) * b.bstride + i + 1]
    return r


cdef inline bint _rest(const _Best* b, const int64_t* c, Py_ssize_t g, int64_t* d) noexcept nogil:
    """Whether group ``g`` fits in ``c``; if so, the dice left over are written to ``d``."""
    cdef Py_ssize_t i, F = b.F
    cdef const int64_t* row = b.gc + g * F
    if b.gsize[g] <= 0:
        return False
    for i in range(F):
        if c[i] < row[i]:
            return False
    for i in range(F):
        d[i] = c[i] - row[i]
    return True


cdef void _best(_Best* b, const int64_t* c, Py_ssize_t depth,
                int64_t* out_p, int64_t* out_u) noexcept nogil:
    """Best composition of ``c``: (points, dice used), most points then most dice."""
    cdef Py_ssize_t r = _rank(b, c)
    if b.memo_u[r] >= 0:
        out_p[0] = b.memo_p[r]
        out_u[0] = b.memo_u[r]
        return
    cdef Py_ssize_t g
    cdef int64_t bp = 0, bu = 0, p = 0, u = 0
    cdef int64_t* d = b.work + depth * b.F
    for g in range(b.G):
        if not _rest(b, c, g, d):
            continue
        _best(b, d, depth + 1, &p, &u)
        p += b.gp[g]
        u += b.gsize[g]
        if p > bp or (p == bp and u > bu):
            bp = p
            bu = u
    b.memo_p[r] = bp
    b.memo_u[r] = bu
    out_p[0] = bp
    out_u[0] = bu


cdef int64_t _full(_Best* b, const int64_t* c, Py_ssize_t depth) noexcept nogil:
    """The most points of a composition of ``c`` that uses every die, or -1 if none does."""
    cdef Py_ssize_t r = _rank(b, c)
    if b.memo_f[r] >= -1:
        return b.memo_f[r]
    cdef Py_ssize_t g, i
    cdef int64_t best = -1, p
    cdef int64_t* d = b.work + depth * b.F
    cdef bint empty = True
    for i in range(b.F):
        if c[i]:
            empty = False
            break
    if empty:
        b.memo_f[r] = 0
        return 0
    for g in range(b.G):
        if not _rest(b, c, g, d):
            continue
        p = _full(b, d, depth + 1)
        if p >= 0 and p + b.gp[g] > best:
            best = p + b.gp[g]
    b.memo_f[r] = best
    return best


cdef Py_ssize_t _sort_unique(int64_t* opts, Py_ssize_t m) noexcept nogil:
    """Sort (points, used) pairs ascending and drop duplicates; the new count."""
    cdef Py_ssize_t i, j, w
    cdef int64_t p, u
    for i in range(1, m):
        p = opts[2 * i]
        u = opts[2 * i + 1]
        j = i - 1
        while j >= 0 and (opts[2 * j] > p or (opts[2 * j] == p and opts[2 * j + 1] > u)):
            opts[2 * j + 2] = opts[2 * j]
            opts[2 * j + 3] = opts[2 * j + 1]
            j -= 1
        opts[2 * j + 2] = p
        opts[2 * j + 3] = u
    if m == 0:
        return 0
    w = 1
    for i in range(1, m):
        if opts[2 * i] != opts[2 * w - 2] or opts[2 * i + 1] != opts[2 * w - 1]:
            opts[2 * w] = opts[2 * i]
            opts[2 * w + 1] = opts[2 * i + 1]
            w += 1
    return w


def roll_classes(group_counts, group_points, instant, n, faces, keep_any, unit, compose_any=False):
    """Roll classes of ``n`` dice (see :func:`thousand._pure.roll_classes`).

    Returns ``(rolls, roll_class, weight, opt_ptr, opt_points, opt_used, is_instant)``.
    """
    cdef Py_ssize_t F = int(faces), N = int(n), U = int(unit)
    if F < 1 or N < 0:
        raise ValueError(f"need faces >= 1 and n >= 0, got faces={F}, n={N}")
    if U < 1:
        raise ValueError(f"unit must be positive, got {U}")
    if N > 20:
        raise ValueError(f"at most 20 dice, got {N}")
    gc_arr = np.ascontiguousarray(np.asarray(group_counts, dtype=np.int64).reshape(-1, F))
    gp_arr = np.ascontiguousarray(np.asarray(group_points, dtype=np.int64).reshape(-1))
    in_arr = np.ascontiguousarray(np.asarray(instant, dtype=np.int64).reshape(-1, F))
    if gc_arr.shape[0] != gp_arr.shape[0]:
        raise ValueError("group_counts and group_points differ in length")
    cdef const int64_t[:, ::1] gc = gc_arr
    cdef const int64_t[::1] gp = gp_arr
    cdef const int64_t[:, ::1] ic = in_arr
    cdef Py_ssize_t G = gc.shape[0], I = ic.shape[0]
    cdef bint any_mode = bool(keep_any), full_mode = bool(compose_any)

    # binomials C(a, b) for a <= N + F, b <= F + 1
    cdef Py_ssize_t bstride = F + 2, brows = N + F + 2
    binom_arr = np.zeros((brows, bstride), dtype=np.int64)
    cdef int64_t[:, ::1] binom = binom_arr
    cdef Py_ssize_t a, bb, i, j
    for a in range(brows):
        binom[a, 0] = 1
        for bb in range(1, min(a, bstride - 1) + 1):
            binom[a, bb] = binom[a - 1, bb - 1] + (binom[a - 1, bb] if bb <= a - 1 else 0)
    cdef Py_ssize_t n_vec = binom[N + F, F]          # count vectors with sum <= N
    cdef Py_ssize_t n_rolls = binom[N + F - 1, F - 1]  # count vectors with sum == N

    gsize_arr = gc_arr.sum(axis=1).astype(np.int64) if G else np.zeros(0, np.int64)
    cdef int64_t[::1] gsize = gsize_arr
    memo_p_arr = np.zeros(n_vec, dtype=np.int64)
    memo_u_arr = np.full(n_vec, -1, dtype=np.int64)
    memo_f_arr = np.full(n_vec, -2, dtype=np.int64)
    work_arr = np.zeros((N + 2) * F, dtype=np.int64)
    cdef int64_t[::1] memo_p = memo_p_arr, memo_u = memo_u_arr, memo_f = memo_f_arr, work = work_arr

    cdef _Best b
    b.F = F
    b.G = G
    b.gc = &gc[0, 0] if G else NULL
    b.gp = &gp[0] if G else NULL
    b.gsize = &gsize[0] if G else NULL
    b.binom = &binom[0, 0]
    b.bstride = bstride
    b.memo_p = &memo_p[0]
    b.memo_u = &memo_u[0]
    b.memo_f = &memo_f[0]
    b.work = &work[0]

    fact = np.ones(N + 1, dtype=np.int64)
    cdef int64_t[::1] fa = fact
    for i in range(1, N + 1):
        fa[i] = fa[i - 1] * i

    rolls_arr = np.zeros((n_rolls, F), dtype=np.int64)
    roll_class_arr = np.zeros(n_rolls, dtype=np.int64)
    weight_arr = np.zeros(n_rolls, dtype=np.int64)
    cdef int64_t[:, ::1] rolls = rolls_arr
    cdef int64_t[::1] roll_class = roll_class_arr, weight = weight_arr
    cdef Py_ssize_t max_opts = 1 << N
    opts_arr = np.zeros(2 * max_opts, dtype=np.int64)
    c_arr = np.zeros(F, dtype=np.int64)
    s_arr = np.zeros(F, dtype=np.int64)
    cdef int64_t[::1] opts = opts_arr, c = c_arr, s = s_arr
    cdef int64_t* cp = &c[0]
    cdef int64_t* sp = &s[0]
    cdef int64_t* op = &opts[0]

    keys = {}
    key_list = []
    flags = []
    cdef Py_ssize_t ri = 0, nopt, k, cls, rem
    cdef int64_t w, p = 0, u = 0
    cdef bint inst, fits
    c[0] = N
    while True:
        for i in range(F):
            rolls[ri, i] = cp[i]
        w = fa[N]
        for i in range(F):
            w //= fa[cp[i]]
        inst = False
        for j in range(I):
            fits = True
            for i in range(F):
                if cp[i] < ic[j, i]:
                    fits = False
                    break
            if fits:
                inst = True
                break
        if inst:
            key = b"I"
        else:
            nopt = 0
            if any_mode:
                # every non-empty sub-multiset all of whose dice score
                for i in range(F):
                    sp[i] = 0
                k = 0
                while True:
                    i = 0
                    while i < F and sp[i] == cp[i]:
                        k -= sp[i]
                        sp[i] = 0
                        i += 1
                    if i == F:
                        break
                    sp[i] += 1
                    k += 1
                    if full_mode:  # any composition that uses every die of the set-aside
                        p = _full(&b, sp, 0)
                        u = k if p >= 0 else -1
                    else:          # its best composition, which must use every die
                        _best(&b, sp, 0, &p, &u)
                    if u == k:
                        op[2 * nopt] = p // U
                        op[2 * nopt + 1] = k
                        nopt += 1
                nopt = _sort_unique(op, nopt)
            else:
                _best(&b, cp, 0, &p, &u)
                if u:
                    op[0] = p // U
                    op[1] = u
                    nopt = 1
            key = (<char*>op)[:16 * nopt]
        cls = keys.get(key, -1)
        if cls < 0:
            cls = len(key_list)
            keys[key] = cls
            key_list.append(key)
            flags.append(1 if inst else 0)
        roll_class[ri] = cls
        weight[cls] += w
        ri += 1
        # the next sorted roll: decrement the last non-zero face before the last one
        i = F - 2
        while i >= 0 and cp[i] == 0:
            i -= 1
        if i < 0:
            break
        rem = cp[F - 1]
        cp[F - 1] = 0
        cp[i] -= 1
        cp[i + 1] = rem + 1

    n_cls = len(key_list)
    counts = [0 if f else len(kk) // 16 for kk, f in zip(key_list, flags)]
    opt_ptr = np.zeros(n_cls + 1, dtype=np.int64)
    np.cumsum(counts, out=opt_ptr[1:])
    flat = np.frombuffer(b"".join(kk for kk, f in zip(key_list, flags) if not f),
                         dtype=np.int64).reshape(-1, 2)
    return (rolls_arr, roll_class_arr, weight_arr[:n_cls].copy(), opt_ptr,
            flat[:, 0].copy(), flat[:, 1].copy(), np.array(flags, dtype=np.uint8))


# =========================================================================== turn DP


ctypedef struct _Pol:
    # the greedy policy of a solved turn, as sparse rows (see duel_policy)
    double* e               # (T+1) x K: mass ending the turn at each total (banked or
                            # mid-turn; totals above T counted at T)
    double* bw              # 2 x K: mass of busts, of instant wins
    double* M               # (T+1) x RS: mass arriving at (total, dice left), A's layout
    double* RM              # (T+1) x RS: mass rolling n dice at each total
    const Py_ssize_t* sg_ptr  # classes with one option, by dice left m: sg_ptr[m]:sg_ptr[m+1],
    const Py_ssize_t* sg_n    # each with its dice rolled, units added and probability,
    const Py_ssize_t* sg_x    # sorted by units (the arrivals at a total pull from them)
    const double* sg_p
    double* MC              # the same after a confirming roll (confirm mode)
    double* tm              # 4 rows of RS: tail mass, next tail mass, both after confirming
    double* rm              # (N + 1) x KB: mass rolling n dice at the current total
    double* cm              # KB: mass making a confirming roll
    double* hv              # 5 x KB: the tail's hot-dice masses and a snapshot of its ends
    double* bv              # KB: the best value of a class's options per column (_pol_throw)
    Py_ssize_t* bi          # KB: which option it is
    Py_ssize_t* sg_end      # N + 1: per dice left, the end of the classes the current total pulls
    double* out_c           # per pair: the policy's constant term
    int64_t* cols           # per pair, from cap_ptr[pair]: successor indices into Q
    double* vals            # their probabilities
    int64_t* cnt            # per pair: entries written
    const int64_t* cap_ptr


ctypedef struct _Tab:
    # sizes
    Py_ssize_t T, K, N, KB, RS     # RS = (N + 1) * KB doubles per row
    Py_ssize_t maxpts              # most units one option adds
    bint ring                      # rows are slots t % P mirrored at t % P + P (else row = t)
    Py_ssize_t P, NR               # ring period; rows of the main storage
    int hot
    bint grad, full
    # per dice count n (1..N): bust / instant probability, scoring classes nlo[n]:nlo[n+1],
    # those with one option first (nlo[n]:nmid[n]), then the others
    double* pbust
    double* pinst
    Py_ssize_t* nlo
    Py_ssize_t* nmid
    # scoring classes: probability, options cbeg[j]:cend[j]; coff[j] = poff[cbeg[j]]
    double* cprob
    Py_ssize_t* cbeg
    Py_ssize_t* cend
    Py_ssize_t* coff
    # options: offset from the row of t to the value after the option (pts * RS + left * KB),
    # and the offset inside the tail row (left * KB)
    Py_ssize_t* poff
    Py_ssize_t* oleft
    Py_ssize_t* opts               # units each option adds
    Py_ssize_t n_opt
    # inputs (row stride K)
    const uint8_t* s_ok
    const double* S
    const uint8_t* f_ok
    const double* F
    const double* Z
    const double* W
    # outputs (full tables: row stride (N + 1) * K resp. K)
    double* start
    double* dstart
    double* oV
    double* oR
    double* oRC
    _Pol* pol                      # not NULL: run the policy's forward pass after each block
    const int64_t* row0            # not NULL (a frame of movers): column k's turn starts at
                                   # row row0[k], and start[k] takes R(row0[k], N)


ctypedef struct _Blk:
    Py_ssize_t c0, kb     # first column, width
    bint prefill          # rows above T are filled with the tail row (narrow blocks)
    Py_ssize_t* offs      # else: option offsets of a total near T (tail row beyond T)
    const double* Z       # inputs shifted to column c0
    const double* W
    double* A             # arrival values A(t, m): NR rows of (N + 1) x KB
    double* dA
    double* AC            # the same after a confirming roll (confirm mode)
    double* dAC
    double* tA            # the tail row (totals above T) of A, dA, AC, dAC: the row
                          # right after each one's NR rows
    double* tdA
    double* tAC
    double* tdAC
    double* Rt            # current row: (N + 1) x KB
    double* Vt
    double* dRt
    double* dVt
    double* RCt           # KB
    double* dRCt
    double* tmp
    double* dtmp
    # tail solve
    double* ta
    double* tda
    double* tac
    double* tdac
    double* h
    double* fh
    double* slope
    double* tr
    double* tdr
    double* fz


cdef inline void _copy(double* dst, const double* src, Py_ssize_t n) noexcept nogil:
    if n == 1:
        dst[0] = src[0]
    else:
        memcpy(dst, src, n * sizeof(double))


cdef inline void _zero(double* dst, Py_ssize_t n) noexcept nogil:
    if n == 1:
        dst[0] = 0.0
    else:
        memset(dst, 0, n * sizeof(double))


cdef inline double _top(const double* A, const Py_ssize_t* offs, Py_ssize_t o,
                         Py_ssize_t o1) noexcept nogil:
    """The best of options o..o1-1 (one column)."""
    cdef double best = A[offs[o]], v
    for o in range(o + 1, o1):
        v = A[offs[o]]
        best = v if v > best else best
    return best


cdef inline double _top_d(const double* A, const double* dA, const Py_ssize_t* offs,
                           Py_ssize_t o, Py_ssize_t o1, double* dbest) noexcept nogil:
    """The best of options o..o1-1 and (into dbest) the derivative of the first best."""
    cdef double best = A[offs[o]], v
    dbest[0] = dA[offs[o]]
    for o in range(o + 1, o1):
        v = A[offs[o]]
        if v > best:
            best = v
            dbest[0] = dA[offs[o]]
    return best


cdef void _roll(const _Tab* tb, _Blk* bk, Py_ssize_t n, const double* A, const double* dA,
                const Py_ssize_t* offs, double dinit, double* out, double* dout,
                bint grad) noexcept nogil:
    """out = P_bust Z + P_inst W + sum_c p_c max_options A[offs[o]] (dout alike from dA).

    The first option attaining a class's maximum decides the derivative.
    """
    cdef Py_ssize_t kb = bk.kb, k, j, jmid, jend, o, o1
    cdef double pb = tb.pbust[n], pi = tb.pinst[n], p, a0, a1, a2, a3, d0, d1, d2, d3, dbest
    cdef const double* Z = bk.Z
    cdef const double* W = bk.W
    cdef double* tmp = bk.tmp
    cdef double* dtmp = bk.dtmp
    cdef const double* cprob = tb.cprob
    cdef const Py_ssize_t* cbeg = tb.cbeg
    cdef const Py_ssize_t* cend = tb.cend
    cdef const Py_ssize_t* coff = tb.coff
    if kb == 1:
        # one column: scalar code with four partial sums (a single running sum would
        # make the latency of one addition per option the bottleneck)
        j = tb.nlo[n]
        jmid = tb.nmid[n]
        jend = tb.nlo[n + 1]
        if offs != tb.poff:  # (narrow blocks always use poff; kept general)
            jmid = j
        a0 = pb * Z[0] + pi * W[0]
        a1 = a2 = a3 = 0.0
        if grad:
            d0 = dinit
            d1 = d2 = d3 = 0.0
            while j + 4 <= jmid:
                a0 += cprob[j] * A[coff[j]]
                d0 += cprob[j] * dA[coff[j]]
                a1 += cprob[j + 1] * A[coff[j + 1]]
                d1 += cprob[j + 1] * dA[coff[j + 1]]
                a2 += cprob[j + 2] * A[coff[j + 2]]
                d2 += cprob[j + 2] * dA[coff[j + 2]]
                a3 += cprob[j + 3] * A[coff[j + 3]]
                d3 += cprob[j + 3] * dA[coff[j + 3]]
                j += 4
            while j < jmid:
                a0 += cprob[j] * A[coff[j]]
                d0 += cprob[j] * dA[coff[j]]
                j += 1
            while j < jend:
                a1 += cprob[j] * _top_d(A, dA, offs, cbeg[j], cend[j], &dbest)
                d1 += cprob[j] * dbest
                j += 1
            dout[0] = (d0 + d1) + (d2 + d3)
        else:
            while j + 4 <= jmid:
                a0 += cprob[j] * A[coff[j]]
                a1 += cprob[j + 1] * A[coff[j + 1]]
                a2 += cprob[j + 2] * A[coff[j + 2]]
                a3 += cprob[j + 3] * A[coff[j + 3]]
                j += 4
            while j < jmid:
                a0 += cprob[j] * A[coff[j]]
                j += 1
            while j + 2 <= jend:
                a2 += cprob[j] * _top(A, offs, cbeg[j], cend[j])
                a3 += cprob[j + 1] * _top(A, offs, cbeg[j + 1], cend[j + 1])
                j += 2
            while j < jend:
                a1 += cprob[j] * _top(A, offs, cbeg[j], cend[j])
                j += 1
        out[0] = (a0 + a1) + (a2 + a3)
        return
    for k in range(kb):
        out[k] = pb * Z[k] + pi * W[k]
    if grad:
        for k in range(kb):
            dout[k] = dinit
    j = tb.nlo[n]
    jend = tb.nlo[n + 1]
    while j < jend:
        if (j + 3 < jend and cend[j] - cbeg[j] == 1 and cend[j + 1] - cbeg[j + 1] == 1
                and cend[j + 2] - cbeg[j + 2] == 1 and cend[j + 3] - cbeg[j + 3] == 1):
            # four classes with one option each: one pass
            thk_acc4(out, A + offs[cbeg[j]], A + offs[cbeg[j + 1]], A + offs[cbeg[j + 2]],
                     A + offs[cbeg[j + 3]], cprob[j], cprob[j + 1], cprob[j + 2],
                     cprob[j + 3], kb)
            if grad:
                thk_acc4(dout, dA + offs[cbeg[j]], dA + offs[cbeg[j + 1]],
                         dA + offs[cbeg[j + 2]], dA + offs[cbeg[j + 3]], cprob[j],
                         cprob[j + 1], cprob[j + 2], cprob[j + 3], kb)
            j += 4
            continue
        p = cprob[j]
        o = cbeg[j]
        o1 = cend[j]
        j += 1
        if o1 - o == 1:
            thk_axpy(out, p, A + offs[o], kb)
            if grad:
                thk_axpy(dout, p, dA + offs[o], kb)
        elif grad:
            memcpy(tmp, A + offs[o], kb * sizeof(double))
            memcpy(dtmp, dA + offs[o], kb * sizeof(double))
            for o in range(o + 1, o1):
                thk_max2(tmp, dtmp, A + offs[o], dA + offs[o], kb)
            thk_axpy(out, p, tmp, kb)
            thk_axpy(dout, p, dtmp, kb)
        else:
            memcpy(tmp, A + offs[o], kb * sizeof(double))
            for o in range(o + 1, o1):
                thk_vmax(tmp, A + offs[o], kb)
            thk_axpy(out, p, tmp, kb)


cdef inline void _settle(const _Tab* tb, _Blk* bk, Py_ssize_t n, bint sok,
                         const double* srow, bint grad) noexcept nogil:
    """V = stop where banking is allowed and at least as good as rolling, else R."""
    cdef Py_ssize_t kb = bk.kb, off = n * tb.KB
    cdef double sv, r
    if sok and kb == 1:
        sv = srow[0]
        r = bk.Rt[off]
        bk.Vt[off] = sv if sv >= r else r
        if grad:
            bk.dVt[off] = 0.0 if sv >= r else bk.dRt[off]
    elif sok:
        thk_settle(bk.Vt + off, bk.Rt + off, srow, kb)
        if grad:
            thk_settle_d(bk.dVt + off, bk.dRt + off, srow, bk.Rt + off, kb)
    else:
        _copy(bk.Vt + off, bk.Rt + off, kb)
        if grad:
            _copy(bk.dVt + off, bk.dRt + off, kb)


cdef inline void _fill_rows(double* dst, const double* src, Py_ssize_t rows,
                            Py_ssize_t stride, Py_ssize_t kb) noexcept nogil:
    cdef Py_ssize_t m
    for m in range(rows):
        _copy(dst + m * stride, src, kb)


cdef inline void _zero_rows(double* dst, Py_ssize_t rows, Py_ssize_t stride,
                            Py_ssize_t kb) noexcept nogil:
    cdef Py_ssize_t m
    for m in range(rows):
        _zero(dst + m * stride, kb)


cdef inline void _hot(const _Tab* tb, _Blk* bk, double* dst, double* ddst, bint grad) noexcept nogil:
    """The value of hot dice from the current row: V(t, N), R(t, N) or RC(t)."""
    cdef Py_ssize_t kb = bk.kb, nk = tb.N * tb.KB
    if tb.hot == HOT_FREE:
        _copy(dst, bk.Vt + nk, kb)
        if grad:
            _copy(ddst, bk.dVt + nk, kb)
    elif tb.hot == HOT_MUST_ROLL:
        _copy(dst, bk.Rt + nk, kb)
        if grad:
            _copy(ddst, bk.dRt + nk, kb)
    else:
        _copy(dst, bk.RCt, kb)
        if grad:
            _copy(ddst, bk.dRCt, kb)


cdef void _arrive(const _Tab* tb, _Blk* bk, double* Ar, double* dAr, double* ACr, double* dACr,
                  bint fok, const double* frow, bint sok, const double* srow,
                  bint grad) noexcept nogil:
    """Fill one row of A (dA; AC, dAC in confirm mode) from the current row's values."""
    cdef Py_ssize_t N = tb.N, KB = tb.KB, kb = bk.kb
    cdef bint conf = tb.hot == HOT_CONFIRM
    if fok:
        _fill_rows(Ar, frow, N + 1, KB, kb)
        if grad:
            _zero_rows(dAr, N + 1, KB, kb)
        if conf:
            _fill_rows(ACr, frow, N + 1, KB, kb)
            if grad:
                _zero_rows(dACr, N + 1, KB, kb)
        return
    if kb == KB:
        memcpy(Ar + KB, bk.Vt + KB, N * KB * sizeof(double))
        if grad:
            memcpy(dAr + KB, bk.dVt + KB, N * KB * sizeof(double))
    else:
        _fill_rows_from(Ar + KB, bk.Vt + KB, N, KB, kb)
        if grad:
            _fill_rows_from(dAr + KB, bk.dVt + KB, N, KB, kb)
    _hot(tb, bk, Ar, dAr, grad)
    if conf:
        _fill_confirm(ACr, dACr, Ar, dAr, sok, srow, N + 1, KB, kb, grad)


cdef inline void _fill_confirm(double* ACr, double* dACr, const double* Ar, const double* dAr, bint sok,
                               const double* srow, Py_ssize_t rows, Py_ssize_t KB, Py_ssize_t kb,
                               bint grad) noexcept nogil:
    """AC after a confirming roll: the bank where banking is allowed, else A."""
    if sok:
        _fill_rows(ACr, srow, rows, KB, kb)
        if grad:
            _zero_rows(dACr, rows, KB, kb)
    else:
        _fill_rows_from(ACr, Ar, rows, KB, kb)
        if grad:
            _fill_rows_from(dACr, dAr, rows, KB, kb)


cdef inline void _fill_rows_from(double* dst, const double* src, Py_ssize_t rows,
                                 Py_ssize_t stride, Py_ssize_t kb) noexcept nogil:
    cdef Py_ssize_t m
    for m in range(rows):
        _copy(dst + m * stride, src + m * stride, kb)


cdef void _tail_eval(const _Tab* tb, _Blk* bk, bint sok, const double* srow) noexcept nogil:
    """f(h) and its slope (into bk.fh, bk.slope): the hot value implied by a guess bk.h."""
    cdef Py_ssize_t N = tb.N, KB = tb.KB, kb = bk.kb, n, k
    cdef double* a = bk.ta
    cdef double* da = bk.tda
    cdef double* r = bk.tr
    cdef double* dr = bk.tdr
    cdef double* an
    cdef double* dan
    _copy(a, bk.h, kb)
    for k in range(kb):
        da[k] = 1.0
    for n in range(1, N + 1):
        _roll(tb, bk, n, a, da, tb.oleft, 0.0, r, dr, True)
        an = a + n * KB
        dan = da + n * KB
        if sok:
            for k in range(kb):
                if srow[k] >= r[k]:
                    an[k] = srow[k]
                    dan[k] = 0.0
                else:
                    an[k] = r[k]
                    dan[k] = dr[k]
        else:
            _copy(an, r, kb)
            _copy(dan, dr, kb)
    if tb.hot == HOT_FREE:
        _copy(bk.fh, a + N * KB, kb)
        _copy(bk.slope, da + N * KB, kb)
    elif tb.hot == HOT_MUST_ROLL:
        _copy(bk.fh, r, kb)
        _copy(bk.slope, dr, kb)
    else:
        if sok:
            _fill_rows(bk.tac, srow, N + 1, KB, kb)
            _zero_rows(bk.tdac, N + 1, KB, kb)
        else:
            _fill_rows_from(bk.tac, a, N + 1, KB, kb)
            _fill_rows_from(bk.tdac, da, N + 1, KB, kb)
        _roll(tb, bk, N, bk.tac, bk.tdac, tb.oleft, 0.0, bk.fh, bk.slope, True)


cdef void _tail_fill(const _Tab* tb, _Blk* bk, bint sok, const double* srow,
                     const double* dh, bint grad) noexcept nogil:
    """Write the tail row of A (AC) and the current row for the hot value bk.h."""
    cdef Py_ssize_t N = tb.N, KB = tb.KB, kb = bk.kb, n
    cdef double* Ar = bk.tA
    cdef double* dAr = bk.tdA
    cdef double* ACr = bk.tAC
    cdef double* dACr = bk.tdAC
    cdef bint conf = tb.hot == HOT_CONFIRM
    _copy(Ar, bk.h, kb)
    if grad:
        if dh == NULL:
            _zero(dAr, kb)
        else:
            _copy(dAr, dh, kb)
    for n in range(1, N + 1):
        _roll(tb, bk, n, Ar, dAr, tb.oleft, tb.pbust[n],
              bk.Rt + n * KB, bk.dRt + n * KB, grad)
        _settle(tb, bk, n, sok, srow, grad)
        _copy(Ar + n * KB, bk.Vt + n * KB, kb)
        if grad:
            _copy(dAr + n * KB, bk.dVt + n * KB, kb)
    if conf:
        _fill_confirm(ACr, dACr, Ar, dAr, sok, srow, N + 1, KB, kb, grad)
        _roll(tb, bk, N, ACr, dACr, tb.oleft, tb.pbust[N], bk.RCt, bk.dRCt, grad)
    _hot(tb, bk, Ar, dAr, grad)
    if conf and not sok:
        _fill_rows_from(ACr, Ar, N + 1, KB, kb)
        if grad:
            _fill_rows_from(dACr, dAr, N + 1, KB, kb)


cdef void _store_row(const _Tab* tb, _Blk* bk, Py_ssize_t t) noexcept nogil:
    """Copy the current row into the full output tables V, R (and RC)."""
    cdef Py_ssize_t N = tb.N, K = tb.K, KB = tb.KB, kb = bk.kb, m
    cdef Py_ssize_t base = t * (N + 1) * K + bk.c0
    for m in range(1, N + 1):
        _copy(tb.oV + base + m * K, bk.Vt + m * KB, kb)
        _copy(tb.oR + base + m * K, bk.Rt + m * KB, kb)
    if tb.hot == HOT_CONFIRM:
        _copy(tb.oRC + t * K + bk.c0, bk.RCt, kb)


cdef inline void _mirror(const _Tab* tb, _Blk* bk, Py_ssize_t slot) noexcept nogil:
    """Copy ring slot ``slot`` (A, dA, AC, dAC) to its mirror ``slot + P``."""
    cdef Py_ssize_t RS = tb.RS, s = slot * RS, d = (slot + tb.P) * RS
    memcpy(bk.A + d, bk.A + s, RS * sizeof(double))
    if tb.grad:
        memcpy(bk.dA + d, bk.dA + s, RS * sizeof(double))
    if tb.hot == HOT_CONFIRM:
        memcpy(bk.AC + d, bk.AC + s, RS * sizeof(double))
        if tb.grad:
            memcpy(bk.dAC + d, bk.dAC + s, RS * sizeof(double))


cdef void _prefill(const _Tab* tb, _Blk* bk, double* store, const double* row) noexcept nogil:
    """Copy ``row`` into the storage rows of totals above T (doubling memcpy)."""
    cdef Py_ssize_t RS = tb.RS, first, nrows, k, c
    if tb.ring:
        first, nrows = 0, tb.NR
    else:
        first, nrows = tb.T + 1, tb.maxpts
    if nrows <= 0:
        return
    cdef double* dst = store + first * RS
    memcpy(dst, row, RS * sizeof(double))
    k = 1
    while k < nrows:
        c = k if k <= nrows - k else nrows - k
        memcpy(dst + k * RS, dst, c * RS * sizeof(double))
        k += c


cdef void _solve_block(const _Tab* tb, _Blk* bk) noexcept nogil:
    cdef Py_ssize_t T = tb.T, N = tb.N, K = tb.K, KB = tb.KB, RS = tb.RS, P = tb.P
    cdef Py_ssize_t kb = bk.kb, c0 = bk.c0, n, k, t, r0, it, base, o, tail
    cdef const Py_ssize_t* offs
    cdef bint grad = tb.grad, conf = tb.hot == HOT_CONFIRM, sok, fok, conv
    cdef const double* srow
    cdef const double* frow
    cdef double x, y, m, sl
    cdef double* h = bk.h
    cdef double* fh = bk.fh
    cdef double* slope = bk.slope
    cdef double* dA
    cdef double* AC
    cdef double* dAC

    # ---- tail: every total above T behaves like T; hot dice are its only cycle
    sok = tb.s_ok[T] != 0
    fok = tb.f_ok[T] != 0
    srow = tb.S + T * K + c0
    frow = tb.F + T * K + c0
    if fok:
        _arrive(tb, bk, bk.tA, bk.tdA, bk.tAC, bk.tdAC, True, frow, sok, srow, grad)
        for n in range(1, N + 1):
            _roll(tb, bk, n, bk.tA, bk.tdA, tb.oleft, tb.pbust[n],
                  bk.Rt + n * KB, bk.dRt + n * KB, grad)
            _settle(tb, bk, n, sok, srow, grad)
        if conf:
            _roll(tb, bk, N, bk.tAC, bk.tdAC, tb.oleft, tb.pbust[N], bk.RCt, bk.dRCt, grad)
    else:
        # Newton's method on the convex piecewise-linear h -> f(h), from below
        for k in range(kb):
            x = bk.Z[k]
            y = bk.W[k]
            m = x if x <= y else y
            if sok and srow[k] < m:
                m = srow[k]
            h[k] = m
        for it in range(_NEWTON):
            _tail_eval(tb, bk, sok, srow)
            conv = True
            for k in range(kb):
                x = fabs(h[k])
                m = x if x > 1.0 else 1.0
                if not (fabs(fh[k] - h[k]) <= 1e-15 * m):
                    conv = False
                    break
            if conv:
                _copy(h, fh, kb)
                break
            for k in range(kb):
                sl = slope[k]
                if sl < 1.0:
                    h[k] = (fh[k] - sl * h[k]) / (1.0 - sl)
                else:
                    h[k] = fh[k]
        _tail_fill(tb, bk, sok, srow, NULL, grad)
        if grad:
            # d h / d Z = f_Z / (1 - f_h) at the fixed point, then refill
            _copy(bk.fz, bk.tdA, kb)
            _tail_eval(tb, bk, sok, srow)
            for k in range(kb):
                bk.fz[k] = bk.fz[k] / (1.0 - slope[k])
            _tail_fill(tb, bk, sok, srow, bk.fz, grad)
    if tb.full:
        _store_row(tb, bk, T + 1)
    if bk.prefill:
        # the rows of totals T + 1 .. T + maxpts all hold the tail row (in a ring:
        # every row; the rows of T are written before they are read)
        _prefill(tb, bk, bk.A, bk.tA)
        if grad:
            _prefill(tb, bk, bk.dA, bk.tdA)
        if conf:
            _prefill(tb, bk, bk.AC, bk.tAC)
            if grad:
                _prefill(tb, bk, bk.dAC, bk.tdAC)

    # ---- totals T..0: every scoring roll adds at least one unit, so go down
    r0 = T % P if tb.ring else T
    dA = AC = dAC = NULL
    for t in range(T, -1, -1):
        sok = tb.s_ok[t] != 0
        fok = tb.f_ok[t] != 0
        srow = tb.S + t * K + c0
        frow = tb.F + t * K + c0
        base = r0 * RS
        offs = tb.poff
        if not bk.prefill and t + tb.maxpts > T:
            # options that pass T read the tail row, which follows the NR rows
            tail = tb.NR * RS - base
            for o in range(tb.n_opt):
                bk.offs[o] = tail + tb.oleft[o] if t + tb.opts[o] > T else tb.poff[o]
            offs = bk.offs
        if grad:
            dA = bk.dA + base
        if conf:
            AC = bk.AC + base
            if grad:
                dAC = bk.dAC + base
        for n in range(1, N + 1):
            _roll(tb, bk, n, bk.A + base, dA, offs, tb.pbust[n],
                  bk.Rt + n * KB, bk.dRt + n * KB, grad)
            _settle(tb, bk, n, sok, srow, grad)
        if conf:
            _roll(tb, bk, N, AC, dAC, offs, tb.pbust[N], bk.RCt, bk.dRCt, grad)
        if tb.row0 != NULL:
            _emit(tb, bk, t)
        if t > 0:
            _arrive(tb, bk, bk.A + base, dA, AC, dAC, fok, frow, sok, srow, grad)
            if tb.ring:
                _mirror(tb, bk, r0)
        if tb.full:
            _store_row(tb, bk, t)
        if tb.ring:
            r0 = r0 - 1 if r0 > 0 else P - 1
        else:
            r0 -= 1
    if tb.row0 == NULL:
        _copy(tb.start + c0, bk.Rt + N * KB, kb)
        if grad:
            _copy(tb.dstart + c0, bk.dRt + N * KB, kb)


cdef inline void _emit(const _Tab* tb, _Blk* bk, Py_ssize_t t) noexcept nogil:
    """A frame of movers: the columns whose turn starts at row t take R(t, N) (and
    its derivative) -- rows below a column's start only feed columns starting lower."""
    cdef Py_ssize_t k, c0 = bk.c0, nk = tb.N * tb.KB
    for k in range(bk.kb):
        if tb.row0[c0 + k] == t:
            tb.start[c0 + k] = bk.Rt[nk + k]
            if tb.grad:
                tb.dstart[c0 + k] = bk.dRt[nk + k]


cdef inline const double* _pol_src(const _Tab* tb, const double* src, const double* tsrc,
                                   Py_ssize_t t, Py_ssize_t o, bint tail) noexcept nogil:
    """The block's values (in block storage ``src``, tail row ``tsrc``) of option o taken
    at total t: one per column."""
    if tail or t + tb.opts[o] > tb.T:
        return tsrc + tb.oleft[o]
    return src + (t + tb.opts[o]) * tb.RS + tb.oleft[o]


cdef inline double* _pol_at(const _Tab* tb, double* target, double* ttarget, Py_ssize_t t,
                            Py_ssize_t o, bint tail) noexcept nogil:
    """Where option o taken at total t sends its mass: row t + points of ``target``, or
    the tail row ``ttarget`` for totals above T."""
    if tail or t + tb.opts[o] > tb.T:
        return ttarget + tb.oleft[o]
    return target + t * tb.RS + tb.poff[o]


cdef void _pol_throw(const _Tab* tb, _Blk* bk, _Pol* pol, Py_ssize_t t, Py_ssize_t n,
                     const double* mass, const double* src, const double* tsrc, double* target,
                     double* ttarget, bint tail, bint multi_only) noexcept nogil:
    """Roll n dice at total t with ``mass`` (one entry per column of the block): busts and
    instant wins into pol.bw; each scoring class sends its share to its first best option
    (by the values ``src``/``tsrc``, the turn DP's tie rule), landing in ``target`` at row
    t + points, or in the tail row ``ttarget`` when that passes T (always, with ``tail``).
    ``multi_only``: only the classes with a choice of options, and no busts (the rest
    of the roll is pulled, see :func:`_pol_pull`)."""
    cdef Py_ssize_t kb = bk.kb, K = tb.K, c0 = bk.c0, j, o, o1, oo, k
    cdef double pb = tb.pbust[n], pi = tb.pinst[n], p
    cdef double* bust = pol.bw + c0
    cdef double* win = pol.bw + K + c0
    if not multi_only:
        for k in range(kb):
            bust[k] += pb * mass[k]
            win[k] += pi * mass[k]
    cdef double* top = pol.bv
    cdef Py_ssize_t* pick = pol.bi
    for j in range(tb.nmid[n] if multi_only else tb.nlo[n], tb.nlo[n + 1]):
        o = tb.cbeg[j]
        o1 = tb.cend[j]
        p = tb.cprob[j]
        if o1 - o == 1:
            thk_axpy(_pol_at(tb, target, ttarget, t, o, tail), p, mass, kb)
            continue
        # option by option over the block's columns (contiguous, as the turn DP's own max):
        # the first best option per column (the turn DP's tie rule, in vector selects), then
        # its mass
        memcpy(top, _pol_src(tb, src, tsrc, t, o, tail), kb * sizeof(double))
        for k in range(kb):
            pick[k] = o
        for oo in range(o + 1, o1):
            thk_argmax(top, pick, _pol_src(tb, src, tsrc, t, oo, tail), oo, kb)
        for k in range(kb):
            _pol_at(tb, target, ttarget, t, pick[k], tail)[k] += p * mass[k]


cdef inline void _pol_confirmed(const _Tab* tb, _Blk* bk, bint sok, double* Mr, double* MCr, double* et,
                                bint clear) noexcept nogil:
    """The mass that arrived by a confirming roll (MCr) banks at once where banking is
    allowed (into et), else goes on as an ordinary arrival (into Mr); ``clear`` zeroes MCr."""
    cdef Py_ssize_t kb = bk.kb, KB = tb.KB, m, k
    for m in range(tb.N + 1):
        for k in range(kb):
            if sok:
                et[k] += MCr[m * KB + k]
            else:
                Mr[m * KB + k] += MCr[m * KB + k]
            if clear:
                MCr[m * KB + k] = 0.0


cdef void _pol_route(const _Tab* tb, _Blk* bk, _Pol* pol, bint sok, bint fok,
                     const double* srow, double* Mr, double* MCr, const double* Ar,
                     double* et, double* rm) noexcept nogil:
    """The mass arriving at one total (rows Mr, MCr of (N + 1) x KB; A's row Ar there)
    ends the turn (into et) or rolls on (into rm, (N + 1) x KB; a confirming roll into
    pol.cm), as the solved turn decides: banking where it is allowed and V == stop
    (banking wins ties), hot dice by the hot-dice mode."""
    cdef Py_ssize_t kb = bk.kb, KB = tb.KB, N = tb.N, m, n, k
    cdef bint conf = tb.hot == HOT_CONFIRM
    cdef double* row
    cdef double d
    if fok:
        for m in range(N + 1):
            for k in range(kb):
                et[k] += Mr[m * KB + k]
                if conf:
                    et[k] += MCr[m * KB + k]
        return
    if conf:
        _pol_confirmed(tb, bk, sok, Mr, MCr, et, False)
    for k in range(kb):
        d = Mr[k]
        if tb.hot == HOT_FREE:
            Mr[N * KB + k] += d
        elif tb.hot == HOT_MUST_ROLL:
            rm[N * KB + k] += d
        else:
            pol.cm[k] += d
    for n in range(1, N + 1):
        row = Mr + n * KB
        if sok:
            thk_route(et, rm + n * KB, row, Ar + n * KB, srow, kb)
        else:
            thk_axpy(rm + n * KB, 1.0, row, kb)


cdef inline bint _pol_any(const double* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        if x[k] != 0.0:
            return True
    return False


cdef void _pol_push(const _Tab* tb, _Blk* bk, _Pol* pol, Py_ssize_t t) noexcept nogil:
    """At total t (below the tail): throw the classes with a choice of options for the
    rolling mass RM(t, n), and the confirming roll (pol.cm, cleared), forward."""
    cdef Py_ssize_t kb = bk.kb, KB = tb.KB, RS = tb.RS, n
    cdef double* rm = pol.RM + t * RS
    for n in range(1, tb.N + 1):
        if tb.nmid[n] < tb.nlo[n + 1] and _pol_any(rm + n * KB, kb):
            _pol_throw(tb, bk, pol, t, n, rm + n * KB, bk.A, bk.tA, pol.M, pol.tm, False, True)
    if tb.hot == HOT_CONFIRM and _pol_any(pol.cm, kb):
        _pol_throw(tb, bk, pol, t, tb.N, pol.cm, bk.AC, bk.tAC, pol.MC, pol.tm + 2 * RS, False, False)
        _zero(pol.cm, kb)


cdef void _pol_pull(const _Tab* tb, _Blk* bk, _Pol* pol, Py_ssize_t t) noexcept nogil:
    """The arrivals at total t from the classes with one option:
    M(t, m) += sum over classes c leaving m dice p_c RM(t - x_c, n_c), four classes at a
    time (the turn DP's own gather, run forward)."""
    cdef Py_ssize_t kb = bk.kb, KB = tb.KB, RS = tb.RS, m, j, e
    cdef const Py_ssize_t* sn = pol.sg_n
    cdef const Py_ssize_t* sx = pol.sg_x
    cdef const double* sp = pol.sg_p
    cdef const double* RM = pol.RM
    cdef double* dst
    for m in range(tb.N + 1):
        j = pol.sg_ptr[m]
        # the classes adding at most t units: sorted by units, and t only grows in a
        # block's pass, so the end moves on from the last total's (reset by _pol_block)
        e = pol.sg_end[m]
        while e < pol.sg_ptr[m + 1] and sx[e] <= t:
            e += 1
        pol.sg_end[m] = e
        dst = pol.M + t * RS + m * KB
        while j + 4 <= e:
            thk_acc4(dst, RM + (t - sx[j]) * RS + sn[j] * KB, RM + (t - sx[j + 1]) * RS + sn[j + 1] * KB,
                     RM + (t - sx[j + 2]) * RS + sn[j + 2] * KB, RM + (t - sx[j + 3]) * RS + sn[j + 3] * KB,
                     sp[j], sp[j + 1], sp[j + 2], sp[j + 3], kb)
            j += 4
        while j < e:
            thk_axpy(dst, sp[j], RM + (t - sx[j]) * RS + sn[j] * KB, kb)
            j += 1


cdef void _pol_block(const _Tab* tb, _Blk* bk, _Pol* pol) noexcept nogil:
    """The end distribution of the solved block's greedy policy: a forward pass of
    probability mass from (0, N) up the totals (every option adds a unit), then the
    tail (totals above T, :func:`_pol_tail`). At each total the arrivals are pulled
    from the rolling mass below (:func:`_pol_pull`; classes with a choice of options
    push theirs, :func:`_pol_push`), then routed. Afterwards the rolling mass of each
    dice count, summed from the top, gives busts, instant wins and what the classes
    with one option send past T. Needs the block storage with one row per total."""
    cdef Py_ssize_t T = tb.T, N = tb.N, K = tb.K, KB = tb.KB, RS = tb.RS
    cdef Py_ssize_t kb = bk.kb, c0 = bk.c0, t, k, n, m, j, t0
    cdef bint conf = tb.hot == HOT_CONFIRM
    cdef double* M = pol.M
    cdef double* MC = pol.MC
    cdef double* RM = pol.RM
    cdef double* tm = pol.tm
    cdef double* tmc = pol.tm + 2 * RS
    memset(M, 0, (T + 1) * RS * sizeof(double))
    memset(RM, 0, (T + 1) * RS * sizeof(double))
    if conf:
        memset(MC, 0, (T + 1) * RS * sizeof(double))
    memset(pol.cm, 0, KB * sizeof(double))
    memset(tm, 0, 4 * RS * sizeof(double))
    for t in range(T + 1):
        _zero(pol.e + t * K + c0, kb)
    _zero(pol.bw + c0, kb)
    _zero(pol.bw + K + c0, kb)
    for m in range(N + 1):
        pol.sg_end[m] = pol.sg_ptr[m]
    # a turn starts by rolling all dice (in a frame, at the column's own start row)
    for k in range(kb):
        RM[(tb.row0[c0 + k] * RS if tb.row0 != NULL else 0) + N * KB + k] = 1.0
    _pol_push(tb, bk, pol, 0)
    for t in range(1, T + 1):
        _pol_pull(tb, bk, pol, t)
        _pol_route(tb, bk, pol, tb.s_ok[t] != 0, tb.f_ok[t] != 0, tb.S + t * K + c0,
                   M + t * RS, MC + t * RS if conf else NULL, bk.A + t * RS, pol.e + t * K + c0,
                   RM + t * RS)
        _pol_push(tb, bk, pol, t)
    # RM(t) := sum of RM(t..T): busts and instant wins of every roll, and what the classes
    # with one option send past T (from the totals t >= T + 1 - x)
    for t in range(T - 1, -1, -1):
        thk_axpy(RM + t * RS + KB, 1.0, RM + (t + 1) * RS + KB, N * KB)
    for n in range(1, N + 1):
        thk_axpy(pol.bw + c0, tb.pbust[n], RM + n * KB, kb)
        thk_axpy(pol.bw + K + c0, tb.pinst[n], RM + n * KB, kb)
    for m in range(N + 1):
        for j in range(pol.sg_ptr[m], pol.sg_ptr[m + 1]):
            t0 = T + 1 - pol.sg_x[j]
            if t0 < 0:
                t0 = 0
            thk_axpy(tm + m * KB, pol.sg_p[j], RM + t0 * RS + pol.sg_n[j] * KB, kb)
    # totals above T behave like T: the tail row, solved exactly (see _pol_tail)
    _pol_tail(tb, bk, pol, tm, tmc)


cdef void _pol_tail_sweep(const _Tab* tb, _Blk* bk, _Pol* pol, bint sok, const double* srow,
                          double* tm, double* tmc, double* et, double* hot) noexcept nogil:
    """Route the tail mass (tm; tmc after a confirming roll) once down the dice counts:
    inside the tail a roll only lowers the dice left, so one sweep from N to 1 settles
    every path but hot dice, whose mass (arriving at 0 dice) goes to ``hot``."""
    cdef Py_ssize_t kb = bk.kb, KB = tb.KB, N = tb.N, n, k
    cdef double* rm = pol.rm
    cdef double d
    if tb.hot == HOT_CONFIRM:
        _pol_confirmed(tb, bk, sok, tm, tmc, et, True)
    for k in range(kb):
        hot[k] = tm[k]
        tm[k] = 0.0
    for n in range(N, 0, -1):
        for k in range(kb):
            d = tm[n * KB + k]
            tm[n * KB + k] = 0.0
            if sok and bk.tA[n * KB + k] == srow[k]:
                et[k] += d
                rm[k] = 0.0
            else:
                rm[k] = d
        if _pol_any(rm, kb):
            _pol_throw(tb, bk, pol, tb.T, n, rm, bk.A, bk.tA, tm, tm, True, False)
    for k in range(kb):
        hot[k] += tm[k]
        tm[k] = 0.0


cdef void _pol_tail(const _Tab* tb, _Blk* bk, _Pol* pol, double* tm, double* tmc) noexcept nogil:
    """The tail: every total above T ends like T. One sweep settles the mass that
    reached it except hot dice (mass H per column); a round started by one unit of hot
    dice gives, per unit, the ends it adds and the hot dice h it returns to, so hot
    dice add H / (1 - h) of those ends (the geometric series of the hot-dice cycle)."""
    cdef Py_ssize_t T = tb.T, N = tb.N, K = tb.K, KB = tb.KB, RS = tb.RS, kb = bk.kb, c0 = bk.c0, k, m
    cdef bint sok = tb.s_ok[T] != 0
    cdef const double* srow = tb.S + T * K + c0
    cdef double* et = pol.e + T * K + c0
    cdef double* bust = pol.bw + c0
    cdef double* win = pol.bw + K + c0
    cdef double* H = pol.hv
    cdef double* h = pol.hv + KB
    cdef double* snap = pol.hv + 2 * KB
    cdef double f
    if tb.f_ok[T]:
        for m in range(N + 1):
            for k in range(kb):
                et[k] += tm[m * KB + k]
                if tb.hot == HOT_CONFIRM:
                    et[k] += tmc[m * KB + k]
        return
    _pol_tail_sweep(tb, bk, pol, sok, srow, tm, tmc, et, H)
    if not _pol_any(H, kb):
        return
    for k in range(kb):
        snap[k] = et[k]
        snap[KB + k] = bust[k]
        snap[2 * KB + k] = win[k]
    memset(tm, 0, RS * sizeof(double))
    memset(tmc, 0, RS * sizeof(double))
    for k in range(kb):
        pol.rm[k] = 1.0
    if tb.hot == HOT_FREE:
        for k in range(kb):
            tm[N * KB + k] = 1.0
    elif tb.hot == HOT_MUST_ROLL:
        _pol_throw(tb, bk, pol, T, N, pol.rm, bk.A, bk.tA, tm, tm, True, False)
    else:
        _pol_throw(tb, bk, pol, T, N, pol.rm, bk.AC, bk.tAC, tmc, tmc, True, False)
    _pol_tail_sweep(tb, bk, pol, sok, srow, tm, tmc, et, h)
    for k in range(kb):
        # h < 1: every round of hot dice can bust (else the turn DP's tail has no value either)
        f = H[k] / (1.0 - h[k]) if h[k] < 1.0 else 0.0
        et[k] = snap[k] + (et[k] - snap[k]) * f
        bust[k] = snap[KB + k] + (bust[k] - snap[KB + k]) * f
        win[k] = snap[2 * KB + k] + (win[k] - snap[2 * KB + k]) * f


cdef inline Py_ssize_t _ws_need(const _Tab* tb) noexcept nogil:
    """Doubles of workspace that :func:`_run_in` needs for ``tb``."""
    cdef Py_ssize_t RS = tb.RS
    cdef bint grad = tb.grad, conf = tb.hot == HOT_CONFIRM
    cdef Py_ssize_t nstore = (1 + grad) * (1 + conf)
    # A dA AC dAC and their tail rows; current row, tail solve scratch
    return nstore * (tb.NR * RS + RS) + 8 * RS + 10 * tb.KB


cdef int _run(_Tab* tb) noexcept nogil:
    """Solve every column block; 0 on success, -1 when out of memory."""
    cdef double* ws = <double*>malloc(_ws_need(tb) * sizeof(double))
    cdef Py_ssize_t* offs = <Py_ssize_t*>malloc((tb.n_opt + 1) * sizeof(Py_ssize_t))
    if ws == NULL or offs == NULL:
        free(ws)
        free(offs)
        return -1
    _run_in(tb, ws, offs)
    free(ws)
    free(offs)
    return 0


cdef void _run_in(_Tab* tb, double* ws, Py_ssize_t* offs) noexcept nogil:
    """Solve every column block in the workspace ``ws`` (:func:`_ws_need` doubles) with
    ``offs`` (n_opt + 1 indices) as option offset scratch."""
    cdef Py_ssize_t KB = tb.KB, RS = tb.RS, K = tb.K
    cdef bint grad = tb.grad, conf = tb.hot == HOT_CONFIRM
    cdef Py_ssize_t store = tb.NR * RS
    cdef _Blk bk
    # narrow blocks copy the tail row into the rows above T (maxpts rows of RS doubles);
    # wide ones (or short turns) send the options that pass T to the tail row instead
    # (an index per option and total near T)
    cdef Py_ssize_t near = tb.T + 1 if tb.T + 1 < tb.maxpts else tb.maxpts
    bk.prefill = tb.maxpts * RS <= 4 * near * tb.n_opt
    bk.offs = offs
    cdef double* q = ws
    bk.A = q
    q += store
    bk.tA = q
    q += RS
    bk.dA = bk.tdA = bk.AC = bk.tAC = bk.dAC = bk.tdAC = NULL
    if grad:
        bk.dA = q
        q += store
        bk.tdA = q
        q += RS
    if conf:
        bk.AC = q
        q += store
        bk.tAC = q
        q += RS
        if grad:
            bk.dAC = q
            q += store
            bk.tdAC = q
            q += RS
    bk.Rt = q
    bk.Vt = q + RS
    bk.dRt = q + 2 * RS
    bk.dVt = q + 3 * RS
    bk.ta = q + 4 * RS
    bk.tda = q + 5 * RS
    bk.tac = q + 6 * RS
    bk.tdac = q + 7 * RS
    q += 8 * RS
    bk.RCt = q
    bk.dRCt = q + KB
    bk.tmp = q + 2 * KB
    bk.dtmp = q + 3 * KB
    bk.h = q + 4 * KB
    bk.fh = q + 5 * KB
    bk.slope = q + 6 * KB
    bk.tr = q + 7 * KB
    bk.tdr = q + 8 * KB
    bk.fz = q + 9 * KB
    # row 0 of Rt/Vt (no dice) and RCt are never computed: keep them defined
    memset(bk.Rt, 0, 4 * RS * sizeof(double))
    memset(bk.RCt, 0, 2 * KB * sizeof(double))
    cdef Py_ssize_t c0 = 0
    while c0 < K:
        bk.c0 = c0
        bk.kb = KB if K - c0 > KB else K - c0
        bk.Z = tb.Z + c0
        bk.W = tb.W + c0
        _solve_block(tb, &bk)
        if tb.pol != NULL:
            _pol_block(tb, &bk, tb.pol)
        c0 += KB


cdef const double[::1] _f64_1(object x) except *:
    try:
        return x
    except (ValueError, TypeError, BufferError):
        return np.ascontiguousarray(x, dtype=np.float64)


cdef const double[:, ::1] _f64_2(object x) except *:
    try:
        return x
    except (ValueError, TypeError, BufferError):
        return np.ascontiguousarray(x, dtype=np.float64)


cdef const int64_t[::1] _i64_1(object x) except *:
    try:
        return x
    except (ValueError, TypeError, BufferError):
        return np.ascontiguousarray(x, dtype=np.int64)


cdef const uint8_t[::1] _u8_1(object x) except *:
    try:
        return x
    except (ValueError, TypeError, BufferError):
        return np.ascontiguousarray(x, dtype=np.uint8)


cdef class _Flat:
    """The scoring classes of every dice count flattened into a :class:`_Tab` (the
    fields that do not depend on the turn), laid out for blocks of ``KB`` columns.

    Owns the buffers ``tb`` points into; ``tb.oleft``/``tb.poff``/``tb.coff`` depend on
    KB (see :func:`_layout` to lay them out again for another width).
    """
    cdef _Tab tb
    cdef double* dbuf
    cdef Py_ssize_t* ibuf
    cdef Py_ssize_t n_cls       # flattened scoring classes (tb.nlo[N + 1])
    cdef Py_ssize_t* left       # dice left after each option

    def __cinit__(self, const int64_t[::1] cptr, const double[::1] cprob,
                  const uint8_t[::1] cinst, const int64_t[::1] optr,
                  const int64_t[::1] opts, const int64_t[::1] oused, Py_ssize_t N,
                  Py_ssize_t KB):
        self.dbuf = NULL
        self.ibuf = NULL
        if cptr.shape[0] < N + 2:
            raise ValueError(f"cls_ptr needs {N + 2} entries, has {cptr.shape[0]}")
        cdef Py_ssize_t n_cls = cptr[N + 1], n, c, o, j, no, lo, hi, n_opt = 0, maxpts = 0
        cdef Py_ssize_t RS = (N + 1) * KB
        if cprob.shape[0] < n_cls or cinst.shape[0] < n_cls or optr.shape[0] < n_cls + 1:
            raise ValueError("class arrays are shorter than cls_ptr says")
        for n in range(1, N + 1):
            if not 0 <= cptr[n] <= cptr[n + 1] <= n_cls:
                raise ValueError("cls_ptr must be non-decreasing")
        if n_cls > cptr[1] and optr[cptr[1]] < 0:
            raise ValueError("opt_ptr must not be negative")
        for c in range(cptr[1], n_cls):
            if optr[c + 1] < optr[c]:
                raise ValueError("opt_ptr must be non-decreasing")
            n_opt += optr[c + 1] - optr[c]
        if n_cls > 0 and (optr[n_cls] > opts.shape[0] or optr[n_cls] > oused.shape[0]):
            raise ValueError("option arrays are shorter than opt_ptr says")
        cdef _Tab tb
        memset(&tb, 0, sizeof(_Tab))
        # scratch: doubles pbust, pinst (N + 2), cprob (n_cls); indices nlo, nmid (N + 2),
        # cbeg, cend, coff (n_cls), poff, oleft, opts, left (n_opt)
        self.dbuf = <double*>malloc((2 * (N + 2) + n_cls + 1) * sizeof(double))
        self.ibuf = <Py_ssize_t*>malloc((2 * (N + 2) + 3 * n_cls + 4 * n_opt + 1)
                                        * sizeof(Py_ssize_t))
        if self.dbuf == NULL or self.ibuf == NULL:
            raise MemoryError()
        cdef double sb, si
        cdef double* dbuf = self.dbuf
        cdef Py_ssize_t* ibuf = self.ibuf
        tb.pbust = dbuf
        tb.pinst = dbuf + N + 2
        tb.cprob = dbuf + 2 * (N + 2)
        tb.nlo = ibuf
        tb.nmid = ibuf + N + 2
        tb.cbeg = tb.nmid + N + 2
        tb.cend = tb.cbeg + n_cls
        tb.coff = tb.cend + n_cls
        tb.poff = tb.coff + n_cls
        tb.oleft = tb.poff + n_opt
        tb.opts = tb.oleft + n_opt
        self.left = tb.opts + n_opt
        # ---- flatten the scoring classes of every dice count
        j = 0
        no = 0
        for n in range(1, N + 1):
            lo = cptr[n]
            hi = cptr[n + 1]
            tb.nlo[n] = j
            sb = 0.0
            si = 0.0
            for c in range(lo, hi):
                if cinst[c]:
                    si += cprob[c]
                elif optr[c + 1] == optr[c]:
                    sb += cprob[c]
            # classes with a single option first, then the others (each in its order)
            for single in range(2):
                if single == 1:
                    tb.nmid[n] = j
                for c in range(lo, hi):
                    if cinst[c] or optr[c + 1] == optr[c] or (optr[c + 1] - optr[c] == 1) != (single == 0):
                        continue
                    tb.cprob[j] = cprob[c]
                    tb.cbeg[j] = no
                    for o in range(optr[c], optr[c + 1]):
                        if opts[o] < 1:
                            raise ValueError(f"option {o} adds {opts[o]} units; "
                                             "every option must add at least one")
                        if not 0 <= oused[o] <= n:
                            raise ValueError(f"option {o} uses {oused[o]} of {n} dice")
                        tb.opts[no] = opts[o]
                        self.left[no] = n - oused[o]
                        if opts[o] > maxpts:
                            maxpts = opts[o]
                        no += 1
                    tb.cend[j] = no
                    j += 1
            tb.pbust[n] = sb
            tb.pinst[n] = si
        tb.nlo[N + 1] = j
        tb.n_opt = no
        tb.N = N
        tb.maxpts = maxpts
        self.n_cls = j
        _layout(&tb, self.left, KB, tb.poff, tb.oleft, tb.coff)
        self.tb = tb

    def __dealloc__(self):
        free(self.dbuf)
        free(self.ibuf)


cdef inline void _layout(_Tab* tb, const Py_ssize_t* left, Py_ssize_t KB, Py_ssize_t* poff,
                         Py_ssize_t* oleft, Py_ssize_t* coff) noexcept nogil:
    """Lay the options out for blocks of KB columns: into ``poff``, ``oleft``, ``coff``
    (which ``tb`` then points to), and set tb.KB, tb.RS."""
    cdef Py_ssize_t RS = (tb.N + 1) * KB, o, c
    for o in range(tb.n_opt):
        oleft[o] = left[o] * KB
        poff[o] = tb.opts[o] * RS + oleft[o]
    for c in range(tb.nlo[tb.N + 1]):
        coff[c] = poff[tb.cbeg[c]]
    tb.poff = poff
    tb.oleft = oleft
    tb.coff = coff
    tb.KB = KB
    tb.RS = RS


def _check_rules(Py_ssize_t N, int hot, Py_ssize_t T):
    """The argument checks every entry point shares: dice, hot-dice mode, a total row."""
    if N < 1:
        raise ValueError(f"dice must be at least 1, got {N}")
    if hot != HOT_MUST_ROLL and hot != HOT_FREE and hot != HOT_CONFIRM:
        raise ValueError(f"hot_mode must be 0, 1 or 2, got {hot}")
    if T < 0:
        raise ValueError("stop_ok is empty")


def _check_ends(Py_ssize_t T, Py_ssize_t K, Py_ssize_t s0, Py_ssize_t s1, Py_ssize_t f0, Py_ssize_t v0,
                Py_ssize_t v1):
    """Turn-end arrays: stop_ok/forced_ok (T+1,), stop_val/forced_val (T+1, K)."""
    if s0 != T + 1 or s1 != K or f0 != T + 1 or v0 != T + 1 or v1 != K:
        raise ValueError("shapes: stop_ok/forced_ok (T+1,), stop_val/forced_val (T+1, K)")


def turn_dp(Rolls rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad, full):
    """Solve one turn (see :func:`thousand.kernel.turn_dp` and :func:`thousand._pure.turn_dp`).

    Returns ``(start, dstart, V, R, RC)``: ``start`` = R(0, N) per column;
    ``dstart`` its derivative with respect to the bust value (None unless
    ``grad``); the tables V, R (T+2, N+1, K) and RC (T+2, K) (None unless ``full``).
    """
    return _turn(rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad, full, False)[:5]


def turn_ends(Rolls rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad):
    """Solve one turn and say how it ends under its decisions (see
    :func:`thousand.kernel.turn_ends` and :func:`thousand._pure.turn_ends`).

    Returns ``(start, dstart, ends, bust_p, win_p)``: as :func:`turn_dp`, then per column
    the probability of ending the turn at each total (banked or mid-turn; (T+1, K), totals
    above T at T), of a bust and of an instant win. The forward pass of mass runs on each
    column block right after the block is solved (the duel policy's pass, ``_pol_block``),
    so no full table is written.
    """
    out = _turn(rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad, False, True)
    return out[0], out[1], out[5], out[6], out[7]


cdef tuple _turn(Rolls rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad, full,
                 bint want_ends):
    """:func:`turn_dp` (``full``: the tables V, R, RC) and, with ``want_ends``, the end
    distribution of its decisions: ``(start, dstart, V, R, RC, ends, bust_p, win_p)``."""
    cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, dice, hot_mode = rolls.arrays()
    cdef const int64_t[::1] cptr = _i64_1(cls_ptr)
    cdef const double[::1] cprob = _f64_1(cls_prob)
    cdef const uint8_t[::1] cinst = _u8_1(cls_instant)
    cdef const int64_t[::1] optr = _i64_1(opt_ptr)
    cdef const int64_t[::1] opts = _i64_1(opt_points)
    cdef const int64_t[::1] oused = _i64_1(opt_used)
    cdef const uint8_t[::1] s_ok = _u8_1(stop_ok)
    cdef const double[:, ::1] S = _f64_2(stop_val)
    cdef const uint8_t[::1] f_ok = _u8_1(forced_ok)
    cdef const double[:, ::1] Fv = _f64_2(forced_val)
    cdef const double[::1] Z = _f64_1(bust_val)
    cdef const double[::1] W = _f64_1(win_val)
    cdef Py_ssize_t N = dice, T = s_ok.shape[0] - 1, K = Z.shape[0]
    cdef int hot = hot_mode
    cdef bint want_grad = grad, want_full = full
    _check_rules(N, hot, T)
    _check_ends(T, K, S.shape[0], S.shape[1], f_ok.shape[0], Fv.shape[0], Fv.shape[1])
    if W.shape[0] != K:
        raise ValueError("shapes: bust_val/win_val (K,)")
    cdef Py_ssize_t KB = (K if K < BLOCK else BLOCK) if K > 0 else 1
    cdef Py_ssize_t RS = (N + 1) * KB
    cdef _Flat fl = _Flat(cptr, cprob, cinst, optr, opts, oused, N, KB)
    cdef _Tab tb = fl.tb
    cdef int rc = 0
    cdef Py_ssize_t maxpts = fl.tb.maxpts

    tb.T = T
    tb.K = K
    tb.N = N
    tb.KB = KB
    tb.RS = RS
    tb.maxpts = maxpts
    tb.hot = hot
    tb.grad = want_grad
    tb.full = want_full
    # storage: rows t = 0 .. T + maxpts, or (long turns) a ring of period maxpts + 1
    # stored twice so that slot(t) + pts never wraps; the forward pass of the ends needs
    # one row per total
    tb.ring = (not want_full) and (not want_ends) and T > maxpts + 1
    tb.P = maxpts + 1 if tb.ring else T + maxpts + 1
    tb.NR = 2 * tb.P if tb.ring else T + maxpts + 1
    tb.s_ok = &s_ok[0]
    tb.f_ok = &f_ok[0]

    start_a = np.empty(K)
    dstart_a = np.empty(K) if want_grad else None
    V_a = R_a = RC_a = ends_a = bw_a = None
    if want_full:
        V_a = np.zeros((T + 2, N + 1, K))
        R_a = np.zeros((T + 2, N + 1, K))
        RC_a = np.zeros((T + 2, K))
    cdef _Pol pol
    cdef double* pbuf = NULL
    cdef Py_ssize_t[::1] pick_v = np.empty(KB + N + 1, dtype=np.intp)
    cdef Py_ssize_t* pick_a = &pick_v[0]
    cdef Py_ssize_t store = tb.NR * RS
    if want_ends:
        ends_a = np.zeros((T + 1, K))
        bw_a = np.zeros((2, K))
    if K > 0:
        tb.S = &S[0, 0]
        tb.F = &Fv[0, 0]
        tb.Z = &Z[0]
        tb.W = &W[0]
        tb.start = _ptr1(start_a)
        if want_grad:
            tb.dstart = _ptr1(dstart_a)
        if want_full:
            tb.oV = _ptr3(V_a)
            tb.oR = _ptr3(R_a)
            tb.oRC = _ptr2(RC_a)
        if want_ends:
            # the classes with one option, by dice left and units added (the forward pass pulls them)
            # they depend on the roll classes alone: built once per table (a turn_ends call of a
            # few columns spent most of its time building them)
            if rolls._singles is None:
                rolls._singles = _single_options(&fl.tb, fl.left, N, True)
            sgptr_v, sgn_v, sgx_v, sgp_v = rolls._singles
            _pol_views(&pol, sgptr_v, sgn_v, sgx_v, sgp_v)
            pol.e = _ptr2(ends_a)
            pol.bw = _ptr2(bw_a)
            pbuf = <double*>malloc(((2 + (hot == HOT_CONFIRM)) * store + 6 * RS + 6 * KB) * sizeof(double))
            if pbuf == NULL:
                raise MemoryError("turn_ends: out of memory")
            _pol_scratch(&pol, pbuf, store, RS, KB, hot == HOT_CONFIRM)
            pol.bi = pick_a
            pol.sg_end = pick_a + KB
            tb.pol = &pol
        try:
            with nogil:
                rc = _run(&tb)
        finally:
            free(pbuf)
        if rc != 0:
            raise MemoryError("turn_dp: out of memory")
    return start_a, dstart_a, V_a, R_a, RC_a, ends_a, bw_a[0] if want_ends else None, \
        bw_a[1] if want_ends else None


cdef tuple _single_options(const _Tab* tb, const Py_ssize_t* left, Py_ssize_t N, bint wanted):
    """The scoring classes with one option, sorted by dice left and then units added, as
    (ptr by dice left (N + 2), dice rolled, units added, probability) arrays: the forward
    pass of a policy pulls its arrivals at a total from them (:func:`_pol_pull`). Not
    ``wanted``: none (empty arrays of the same shapes)."""
    cdef Py_ssize_t nn, jj, oo
    sg_m, sg_n, sg_x, sg_p = [], [], [], []
    for nn in range(1, (N + 1) if wanted else 1):
        for jj in range(tb.nlo[nn], tb.nmid[nn]):
            oo = tb.cbeg[jj]
            sg_m.append(left[oo])
            sg_n.append(nn)
            sg_x.append(tb.opts[oo])
            sg_p.append(tb.cprob[jj])
    order = np.lexsort((np.array(sg_x, dtype=np.intp), np.array(sg_m, dtype=np.intp)))
    sg_m_a = np.array(sg_m, dtype=np.intp)[order]
    return (np.searchsorted(sg_m_a, np.arange(N + 2)).astype(np.intp),
            np.append(np.array(sg_n, dtype=np.intp)[order], 0),
            np.append(np.array(sg_x, dtype=np.intp)[order], 0),
            np.append(np.array(sg_p, dtype=np.float64)[order], 0.0))


cdef inline void _pol_scratch(_Pol* pol, double* buf, Py_ssize_t store, Py_ssize_t RS, Py_ssize_t KB,
                              bint confirm) noexcept nogil:
    """Lay the forward pass's scratch out in ``buf``: M, RM (and MC with ``confirm``) of
    ``store`` doubles, the tail rows (4 RS), rm (RS), cm (KB), hv (5 KB) and bv (KB) --
    (2 + confirm) store + 6 RS + 6 KB doubles in all (RS >= KB)."""
    pol.M = buf
    pol.RM = buf + store
    pol.MC = pol.RM + store
    pol.tm = pol.MC + (store if confirm else 0)
    pol.rm = pol.tm + 4 * RS
    pol.cm = pol.rm + RS
    pol.hv = pol.cm + KB
    pol.bv = pol.hv + 5 * KB


cdef void _pol_views(_Pol* pol, const Py_ssize_t[::1] sgptr, const Py_ssize_t[::1] sgn,
                     const Py_ssize_t[::1] sgx, const double[::1] sgp):
    """A zeroed ``pol`` pointing at the single-option classes (:func:`_single_options`);
    the arrays must outlive its use."""
    memset(pol, 0, sizeof(_Pol))
    pol.sg_ptr = &sgptr[0]
    pol.sg_n = &sgn[0]
    pol.sg_x = &sgx[0]
    pol.sg_p = &sgp[0]


cdef double* _ptr1(object a) except NULL:
    cdef double[::1] v = a
    return &v[0]


cdef double* _ptr2(object a) except NULL:
    cdef double[:, ::1] v = a
    return &v[0, 0]


cdef double* _ptr3(object a) except NULL:
    cdef double[:, :, ::1] v = a
    return &v[0, 0, 0]


# =========================================================================== end distribution


cdef void _ed_throw(const _Tab* tb, const Py_ssize_t* left, Py_ssize_t t, Py_ssize_t n,
                    double mass, const double* table, double* target, Py_ssize_t L,
                    double* bw) noexcept nogil:
    """Roll n dice at total t with ``mass``: busts and instant wins into bw[0], bw[1];
    every scoring class sends its mass to its first best option of ``table``."""
    cdef Py_ssize_t N1 = tb.N + 1, j, o, tt, best_at, at
    cdef double best, v
    bw[0] += tb.pbust[n] * mass
    bw[1] += tb.pinst[n] * mass
    for j in range(tb.nlo[n], tb.nlo[n + 1]):
        o = tb.cbeg[j]
        tt = t + tb.opts[o]
        if tt > L - 1:
            tt = L - 1
        best_at = tt * N1 + left[o]
        best = table[best_at]
        for o in range(o + 1, tb.cend[j]):
            tt = t + tb.opts[o]
            if tt > L - 1:
                tt = L - 1
            at = tt * N1 + left[o]
            v = table[at]
            if v > best:
                best = v
                best_at = at
        target[best_at] += tb.cprob[j] * mass


cdef void _ed_forward(const _Tab* tb, const Py_ssize_t* left, Py_ssize_t L, const uint8_t* s_ok,
                      const uint8_t* f_ok, const uint8_t* bank, const double* A, const double* AC,
                      double* w, double* sp, double* fp, double* bw) noexcept nogil:
    """One column's forward pass of probability mass (the twin's ``_forward``) under given
    decisions: ``s_ok``, ``f_ok`` (L) and ``bank``, ``A``, ``AC`` (L x (N + 1)) of the
    column, row L - 1 standing for every total above L - 2. Adds the banks and mid-turn
    ends per row into ``sp``, ``fp`` (L) and the busts and instant wins into ``bw[0]``,
    ``bw[1]``; ``w`` holds 2 L (N + 1) + 2 (N + 1) doubles of work."""
    cdef Py_ssize_t N = tb.N, N1 = tb.N + 1, t, m, n, it, src
    cdef int hot = tb.hot
    cdef double* arr = w
    cdef double* arrc = w + L * N1
    cdef double* dec = w + 2 * L * N1
    cdef double* rol = dec + N1
    cdef double* a
    cdef double con, mass, tot
    memset(arr, 0, 2 * L * N1 * sizeof(double))
    it = 0
    t = 0
    while True:
        # ---- route the arrivals at t (none at t = 0: every option adds a unit)
        for m in range(N1):
            dec[m] = 0.0
            rol[m] = 0.0
        con = 0.0
        if t == 0:
            rol[N] = 1.0
        else:
            for src in range(2):
                a = (arrc if src else arr) + t * N1
                if f_ok[t] or (src and s_ok[t]):
                    tot = 0.0
                    for m in range(N1):
                        tot += a[m]
                        a[m] = 0.0
                    if f_ok[t]:
                        fp[t] += tot
                    else:
                        sp[t] += tot
                    continue
                for m in range(1, N1):
                    dec[m] += a[m]
                if hot == HOT_FREE:
                    dec[N] += a[0]
                elif hot == HOT_MUST_ROLL:
                    rol[N] += a[0]
                else:
                    con += a[0]
                for m in range(N1):
                    a[m] = 0.0
        # ---- decide and roll
        for n in range(1, N1):
            if s_ok[t] and bank[t * N1 + n]:
                sp[t] += dec[n]
            else:
                rol[n] += dec[n]
        for n in range(1, N1):
            if rol[n] != 0.0:
                _ed_throw(tb, left, t, n, rol[n], A, arr, L, bw)
        if con != 0.0:
            _ed_throw(tb, left, t, N, con, AC, arrc, L, bw)
        # ---- next total; the tail row feeds itself through hot dice
        if t < L - 1:
            t += 1
            continue
        it += 1
        mass = 0.0
        for m in range(N1):
            mass += arr[t * N1 + m] + arrc[t * N1 + m]
        if mass <= 1e-17 or it >= 100000:
            break


cdef inline void _ed_store(Py_ssize_t c, Py_ssize_t K, Py_ssize_t T, const double* sp, const double* fp,
                           const double* bw, double* stop_p, double* forced_p, double* bust_p,
                           double* win_p) noexcept nogil:
    """Column c's ends into the (T + 1, K) outputs, the tail row counted at T."""
    cdef Py_ssize_t t
    for t in range(T + 1):
        stop_p[t * K + c] = sp[t]
        forced_p[t * K + c] = fp[t]
    stop_p[T * K + c] += sp[T + 1]
    forced_p[T * K + c] += fp[T + 1]
    bust_p[c] = bw[0]
    win_p[c] = bw[1]


ctypedef struct _ColWork:
    double* A                   # (L, N + 1): the ranks of arrival, after a plain roll
    double* AC                  # ... after a confirming roll
    double* sp                  # (L): banks per row
    double* fp                  # (L): mid-turn ends per row
    double* work                # the forward pass's own (2 L (N + 1) + 2 (N + 1))
    uint8_t* bank               # (L, N + 1): bank at (t, m)
    uint8_t* sk                 # (L): banking allowed
    uint8_t* fk                 # (L): the turn ends here


cdef inline void _col_work(_ColWork* cw, double* w, uint8_t* wb, Py_ssize_t L, Py_ssize_t N1) noexcept nogil:
    """One column's work space laid out in ``w`` (4 L (N + 1) + 2 L + 2 (N + 1) doubles) and
    ``wb`` (L (N + 3) bytes)."""
    cw.A = w
    cw.AC = w + L * N1
    cw.sp = w + 2 * L * N1
    cw.fp = cw.sp + L
    cw.work = cw.fp + L
    cw.bank = wb
    cw.sk = wb + L * N1
    cw.fk = cw.sk + L


cdef inline void _col_finish(const _Tab* tb, const Py_ssize_t* left, const _ColWork* cw, Py_ssize_t c,
                             Py_ssize_t K, Py_ssize_t T, double* stop_p, double* forced_p, double* bust_p,
                             double* win_p) noexcept nogil:
    """Column c's forward pass over its filled work space, and its ends into the outputs."""
    cdef double bw[2]
    memset(cw.sp, 0, 2 * (T + 2) * sizeof(double))
    bw[0] = 0.0
    bw[1] = 0.0
    _ed_forward(tb, left, T + 2, cw.sk, cw.fk, cw.bank, cw.A, cw.AC, cw.work, cw.sp, cw.fp, bw)
    _ed_store(c, K, T, cw.sp, cw.fp, bw, stop_p, forced_p, bust_p, win_p)


cdef void _ed_column(const _Tab* tb, const Py_ssize_t* left, Py_ssize_t c, Py_ssize_t K,
                     Py_ssize_t T, const uint8_t* s_ok, const double* S, const uint8_t* f_ok,
                     const double* Fv, const double* V, const double* R, const double* RC,
                     double* w, uint8_t* wb, double* stop_p, double* forced_p, double* bust_p,
                     double* win_p) noexcept nogil:
    """The end distribution of column c (as the pure twin, one column at a time): the
    solved turn's decisions, banking where allowed and ``S >= R`` (banking wins ties),
    each class's first best option of A; work space as :func:`_col_work`."""
    cdef Py_ssize_t N = tb.N, N1 = tb.N + 1, L = T + 2, t, m, tr
    cdef int hot = tb.hot
    cdef _ColWork cw
    _col_work(&cw, w, wb, L, N1)
    cdef double hv, sv
    # A and AC as in turn_dp, rebuilt from the solved tables; the banks the turn DP chose
    for t in range(L):
        tr = t if t <= T else T
        cw.sk[t] = s_ok[tr]
        cw.fk[t] = f_ok[tr]
        sv = S[tr * K + c]
        for m in range(N1):
            cw.bank[t * N1 + m] = s_ok[tr] and sv >= R[(t * N1 + m) * K + c]
        if f_ok[tr]:
            for m in range(N1):
                cw.A[t * N1 + m] = Fv[tr * K + c]
                cw.AC[t * N1 + m] = Fv[tr * K + c]
            continue
        for m in range(1, N1):
            cw.A[t * N1 + m] = V[(t * N1 + m) * K + c]
        if hot == HOT_FREE:
            hv = V[(t * N1 + N) * K + c]
        elif hot == HOT_MUST_ROLL:
            hv = R[(t * N1 + N) * K + c]
        else:
            hv = RC[t * K + c]
        cw.A[t * N1] = hv
        for m in range(N1):
            cw.AC[t * N1 + m] = sv if s_ok[tr] else cw.A[t * N1 + m]
    _col_finish(tb, left, &cw, c, K, T, stop_p, forced_p, bust_p, win_p)


cdef void _ranked_column(const _Tab* tb, const Py_ssize_t* left, Py_ssize_t c, Py_ssize_t K,
                         Py_ssize_t T, const uint8_t* s_ok, const uint8_t* f_ok, const uint8_t* bank,
                         const double* rank, const double* rank_c, double* w, uint8_t* wb,
                         double* stop_p, double* forced_p, double* bust_p, double* win_p) noexcept nogil:
    """Column c of :func:`ranked_end_distribution`: its decisions and ranks gathered into its
    work space (:func:`_col_work`), then the forward pass."""
    cdef Py_ssize_t N1 = tb.N + 1, L = T + 2, t, m, tr, i
    cdef _ColWork cw
    _col_work(&cw, w, wb, L, N1)
    for t in range(L):
        tr = t if t <= T else T
        cw.sk[t] = s_ok[tr * K + c]
        cw.fk[t] = f_ok[tr * K + c]
        for m in range(N1):
            i = (t * N1 + m) * K + c
            cw.bank[t * N1 + m] = bank[i]
            cw.A[t * N1 + m] = rank[i]
            cw.AC[t * N1 + m] = rank_c[i]
    _col_finish(tb, left, &cw, c, K, T, stop_p, forced_p, bust_p, win_p)


def end_distribution(Rolls rolls, stop_ok, stop_val, forced_ok, forced_val, V, R, RC):
    """How a solved turn ends (see :func:`thousand.kernel.end_distribution` and
    :func:`thousand._pure.end_distribution`): ``(stop_p, forced_p, bust_p, win_p)``.

    A forward pass of probability mass, one column at a time without the GIL (the columns
    spread over OpenMP's threads); the tail row's hot-dice cycle is iterated until its mass
    is below 1e-17 (as the twin).
    """
    cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, dice, hot_mode = rolls.arrays()
    cdef const int64_t[::1] cptr = _i64_1(cls_ptr)
    cdef const double[::1] cprob = _f64_1(cls_prob)
    cdef const uint8_t[::1] cinst = _u8_1(cls_instant)
    cdef const int64_t[::1] optr = _i64_1(opt_ptr)
    cdef const int64_t[::1] opts = _i64_1(opt_points)
    cdef const int64_t[::1] oused = _i64_1(opt_used)
    cdef const uint8_t[::1] s_ok = _u8_1(stop_ok)
    cdef const double[:, ::1] S = _f64_2(stop_val)
    cdef const uint8_t[::1] f_ok = _u8_1(forced_ok)
    cdef const double[:, ::1] Fv = _f64_2(forced_val)
    cdef Py_ssize_t N = dice, T = s_ok.shape[0] - 1
    cdef int hot = hot_mode
    _check_rules(N, hot, T)
    V_a = np.ascontiguousarray(V, dtype=np.float64)
    R_a = np.ascontiguousarray(R, dtype=np.float64)
    if V_a.ndim != 3 or V_a.shape[0] != T + 2 or V_a.shape[1] != N + 1 or R_a.shape != V_a.shape:
        raise ValueError("V and R must have shape (T+2, dice+1, K)")
    cdef Py_ssize_t K = V_a.shape[2]
    RC_a = (np.zeros((T + 2, K)) if RC is None and hot != HOT_CONFIRM
            else np.ascontiguousarray(RC, dtype=np.float64))
    if RC_a.shape != (T + 2, K):
        raise ValueError("RC must have shape (T+2, K)")
    _check_ends(T, K, S.shape[0], S.shape[1], f_ok.shape[0], Fv.shape[0], Fv.shape[1])
    if K == 0:
        return _end_columns(None, hot, 0, T, NULL)
    cdef const double[:, :, ::1] Vm = V_a
    cdef const double[:, :, ::1] Rm = R_a
    cdef const double[:, ::1] RCm = RC_a
    cdef _EdIn a
    a.ranked = False
    a.s_ok, a.f_ok, a.S, a.Fv = &s_ok[0], &f_ok[0], &S[0, 0], &Fv[0, 0]
    a.V, a.R, a.RC = &Vm[0, 0, 0], &Rm[0, 0, 0], &RCm[0, 0]
    return _end_columns(_Flat(cptr, cprob, cinst, optr, opts, oused, N, 1), hot, K, T, &a)


ctypedef struct _EdIn:
    bint ranked                 # the decisions handed in (ranked_end_distribution), else solved
    const uint8_t* s_ok         # solved: (T+1,); ranked: (T+1, K)
    const uint8_t* f_ok
    const double* S             # solved: the bank and forced-end values, the solved tables
    const double* Fv
    const double* V
    const double* R
    const double* RC
    const uint8_t* bank         # ranked: (T+2, N+1, K) each
    const double* rank
    const double* rank_c


cdef tuple _end_columns(_Flat fl, int hot, Py_ssize_t K, Py_ssize_t T, const _EdIn* a):
    """The end distributions of K columns, ``(stop_p, forced_p, bust_p, win_p)``: one column
    at a time without the GIL, the columns spread over OpenMP's threads (each with its own
    work space) unless there are too few to pay for waking them."""
    stop_p = np.zeros((T + 1, K))
    forced_p = np.zeros((T + 1, K))
    bust_p = np.zeros(K)
    win_p = np.zeros(K)
    if K == 0:
        return stop_p, forced_p, bust_p, win_p
    cdef _Tab tb = fl.tb
    tb.hot = hot
    cdef double[:, ::1] spm = stop_p
    cdef double[:, ::1] fpm = forced_p
    cdef double[::1] bpm = bust_p
    cdef double[::1] wpm = win_p
    cdef Py_ssize_t N = tb.N, L = T + 2, c
    cdef Py_ssize_t need = 4 * L * (N + 1) + 2 * L + 2 * (N + 1)
    cdef double* w
    cdef uint8_t* wb
    cdef int nt = _column_threads(K * L * (N + 1))
    cdef int failed = 0
    cdef int* failp = &failed
    with nogil, parallel(num_threads=nt):
        w = <double*>malloc(need * sizeof(double))
        wb = <uint8_t*>malloc(L * (N + 3))
        if w == NULL or wb == NULL:
            failp[0] = 1
        for c in prange(K, schedule="static"):
            if w == NULL or wb == NULL:
                continue
            if a.ranked:
                _ranked_column(&tb, fl.left, c, K, T, a.s_ok, a.f_ok, a.bank, a.rank, a.rank_c, w, wb,
                               &spm[0, 0], &fpm[0, 0], &bpm[0], &wpm[0])
            else:
                _ed_column(&tb, fl.left, c, K, T, a.s_ok, a.S, a.f_ok, a.Fv, a.V, a.R, a.RC, w, wb,
                           &spm[0, 0], &fpm[0, 0], &bpm[0], &wpm[0])
        free(w)
        free(wb)
    if failed:
        raise MemoryError("end distribution: out of memory")
    return stop_p, forced_p, bust_p, win_p


cdef int _column_threads(Py_ssize_t work):
    """The threads for a loop of independent columns: every one OpenMP offers, unless the
    work is too small to pay for waking them."""
    cdef int nt = thk_max_threads()
    return 1 if work < _SERIAL_WORK or nt < 1 else nt


def ranked_end_distribution(Rolls rolls, stop_ok, forced_ok, bank, rank, rank_c):
    """How turns end under given decisions (see :func:`thousand.kernel.ranked_end_distribution`
    and :func:`thousand._pure.ranked_end_distribution`): ``(stop_p, forced_p, bust_p,
    win_p)``. The forward pass of :func:`end_distribution`, one column at a time without
    the GIL, the columns spread over OpenMP's threads."""
    cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, dice, hot_mode = rolls.arrays()
    cdef Py_ssize_t N = dice
    cdef int hot = hot_mode
    cdef const uint8_t[:, ::1] s_ok = np.ascontiguousarray(stop_ok, dtype=np.uint8)
    cdef const uint8_t[:, ::1] f_ok = np.ascontiguousarray(forced_ok, dtype=np.uint8)
    cdef Py_ssize_t T = s_ok.shape[0] - 1, K = s_ok.shape[1]
    _check_rules(N, hot, T)
    shape = (T + 2, N + 1, K)
    bank_a = np.ascontiguousarray(bank, dtype=np.uint8)
    rank_a = np.ascontiguousarray(rank, dtype=np.float64)
    rank_ca = rank_a if rank_c is None else np.ascontiguousarray(rank_c, dtype=np.float64)
    if (f_ok.shape[0] != T + 1 or f_ok.shape[1] != K or bank_a.shape != shape or rank_a.shape != shape
            or rank_ca.shape != shape):
        raise ValueError("stop_ok, forced_ok (T+1, K) and bank, rank, rank_c (T+2, dice+1, K) disagree")
    cdef const uint8_t[:, :, ::1] bk = bank_a
    cdef const double[:, :, ::1] rk = rank_a
    cdef const double[:, :, ::1] rc = rank_ca
    if K == 0:
        return _end_columns(None, hot, 0, T, NULL)
    cdef _EdIn a
    a.ranked = True
    a.s_ok, a.f_ok, a.bank, a.rank, a.rank_c = &s_ok[0, 0], &f_ok[0, 0], &bk[0, 0, 0], &rk[0, 0, 0], &rc[0, 0, 0]
    fl = _Flat(_i64_1(cls_ptr), _f64_1(cls_prob), _u8_1(cls_instant), _i64_1(opt_ptr), _i64_1(opt_points),
               _i64_1(opt_used), N, 1)
    return _end_columns(fl, hot, K, T, &a)


# =========================================================================== duel level


ctypedef struct _Duel:
    PlanView plan               # every mover's turn ends (thk.pxd)
    const double* Q
    Py_ssize_t nQ
    Py_ssize_t sn, so           # Q[nx, y] is Q[nx * sn + y * so]: (nQ, 1), or (1, nQ) for a transposed store
    const int64_t* win_col      # equal_turns: column of win_L per row (-1: the win is final), or NULL
    const double* win_L         # (nQ, nL): the opponent's last-turn win probability per target
    Py_ssize_t nL
    const int64_t* movers
    const int64_t* lo
    const int64_t* hi
    double* out_v
    double* out_d
    const int64_t* out_ptr
    bint grad
    # frames (duel_frames; else NULL): entry j is a frame of columns lo[j]:hi[j], column c
    # mover fmover[c] against fopp[c], its turn starting at row frow0[c] of mover movers[j]'s rows
    const int64_t* fmover
    const int64_t* fopp
    const int64_t* frow0


cdef inline void _duel_tab(const _Tab* tmpl, const _Duel* d, Py_ssize_t j, _Tab* tb,
                           bint flat) noexcept nogil:
    """The sizes of mover j's turn DP (layout, storage) in ``tb``, a copy of ``tmpl``;
    ``flat`` keeps one storage row per total (no ring), as the policy's forward pass needs."""
    cdef Py_ssize_t i = d.movers[j], K = d.hi[j] - d.lo[j], maxpts = tmpl.maxpts
    cdef Py_ssize_t T = d.plan.ptr[i + 1] - d.plan.ptr[i] - 1
    tb[0] = tmpl[0]
    tb.T = T
    tb.K = K
    tb.KB = (K if K < BLOCK else BLOCK) if K > 0 else 1
    tb.RS = (tb.N + 1) * tb.KB
    tb.grad = d.grad
    tb.full = False
    tb.ring = (not flat) and T > maxpts + 1
    tb.P = maxpts + 1 if tb.ring else T + maxpts + 1
    tb.NR = 2 * tb.P if tb.ring else T + maxpts + 1


cdef inline void _last_turn_row(double* row, const _Duel* d, Py_ssize_t lo, Py_ssize_t K,
                                Py_ssize_t c) noexcept nogil:
    """A win that leaves every opponent ``lo + k`` one last turn (equal_turns):
    ``1 - win_L[lo + k, c]``, with column ``c`` the mover's final total."""
    cdef const double* col = d.win_L + lo * d.nL + c
    cdef Py_ssize_t k
    for k in range(K):
        row[k] = 1.0 - col[k * d.nL]


cdef inline Py_ssize_t _opp_after(const _Duel* d, Py_ssize_t r, int64_t si,
                                  Py_ssize_t y) noexcept nogil:
    """The opponent y after the mover's end at plan row r: pushed off the barrel
    (if the mover climbed it), then overtaken (if passed on the way up from si)."""
    cdef int64_t sc
    if d.plan.climbed[r] != 0 and d.plan.on_barrel[y]:
        y = d.plan.pushed[y]
    sc = d.plan.score[y]
    if si < sc and sc < d.plan.after[r]:
        y = d.plan.overtaken[y]
    return y


cdef void _duel_ends(const _Duel* d, Py_ssize_t j, Py_ssize_t T, double* ends,
                     double* Z) noexcept nogil:
    """Mover j's end values against its opponents lo..hi-1: ``ends`` (T+1) x K (banking
    or a mid-turn end at each total; 0 where the turn cannot end) and the bust values Z."""
    cdef Py_ssize_t i = d.movers[j], lo = d.lo[j], K = d.hi[j] - d.lo[j]
    cdef Py_ssize_t a = d.plan.ptr[i], t, k, r, nx
    cdef int64_t si = d.plan.score[i]
    cdef const double* qrow = d.Q + d.plan.bust[i] * d.sn + lo * d.so
    cdef double* row
    for k in range(K):
        Z[k] = 1.0 - qrow[k * d.so]
    for t in range(T + 1):
        r = a + t
        row = ends + t * K
        if not (d.plan.stop_ok[r] or d.plan.forced_ok[r]):
            for k in range(K):
                row[k] = 0.0
            continue
        nx = d.plan.next[r]
        if nx == -1:
            if d.win_col != NULL and d.win_col[r] >= 0:
                _last_turn_row(row, d, lo, K, d.win_col[r])
                continue
            for k in range(K):
                row[k] = 1.0
            continue
        if nx < 0:
            nx = 0
        qrow = d.Q + nx * d.sn
        for k in range(K):
            row[k] = 1.0 - qrow[_opp_after(d, r, si, lo + k) * d.so]


cdef void _frame_ends(const _Duel* d, Py_ssize_t j, Py_ssize_t T, double* ends,
                      double* Z) noexcept nogil:
    """Frame j's end values, ``ends`` (T+1) x K: column k (mover i against y, starting at
    row r0) holds at row r0 + t what :func:`_duel_ends` gives mover i at total t, and 0
    below r0; Z its bust value."""
    cdef Py_ssize_t K = d.hi[j] - d.lo[j], k, c, i, y, r0, a, t, r, pr, nx
    cdef int64_t si
    for k in range(K):
        c = d.lo[j] + k
        i = d.fmover[c]
        y = d.fopp[c]
        r0 = d.frow0[c]
        a = d.plan.ptr[i]
        si = d.plan.score[i]
        Z[k] = 1.0 - d.Q[d.plan.bust[i] * d.sn + y * d.so]
        for r in range(r0):
            ends[r * K + k] = 0.0
        for r in range(r0, T + 1):
            pr = a + r - r0
            if not (d.plan.stop_ok[pr] or d.plan.forced_ok[pr]):
                ends[r * K + k] = 0.0
                continue
            nx = d.plan.next[pr]
            if nx == -1:
                if d.win_col != NULL and d.win_col[pr] >= 0:
                    ends[r * K + k] = 1.0 - d.win_L[y * d.nL + d.win_col[pr]]
                else:
                    ends[r * K + k] = 1.0
                continue
            if nx < 0:
                nx = 0
            ends[r * K + k] = 1.0 - d.Q[nx * d.sn + _opp_after(d, pr, si, y) * d.so]


cdef void _pol_row(const _Duel* d, _Pol* pol, const double* ends, Py_ssize_t K, Py_ssize_t k,
                   Py_ssize_t T, Py_ssize_t i, Py_ssize_t y, Py_ssize_t r0, Py_ssize_t p) noexcept nogil:
    """Pair p's policy as a sparse row: mover i against y, in column k (of K) of a
    solved turn that starts at row r0 (0 unless a frame) and ends at row r at the
    mover's total r - r0. The turn's value is c_p - sum_e vals_e Q[cols_e] (cols_e =
    successor pair, flat in Q), where c_p gathers every end that does not read Q (wins,
    and the 1 of each 1 - Q)."""
    cdef Py_ssize_t a = d.plan.ptr[i], base = pol.cap_ptr[p], cnt = 0, r, pr, nx
    cdef int64_t si = d.plan.score[i], col
    cdef double c = 0.0, m
    for r in range(r0 + 1, T + 1):
        m = pol.e[r * K + k]
        if m == 0.0:
            continue
        pr = a + r - r0
        nx = d.plan.next[pr]
        if nx == -1:
            c += m * ends[r * K + k]
            continue
        c += m
        col = nx * d.nQ + _opp_after(d, pr, si, y)
        if cnt > 0 and pol.cols[base + cnt - 1] == col:
            # consecutive totals that hand over the same pair (a capped bank, an
            # overshoot) make one entry
            pol.vals[base + cnt - 1] += m
            continue
        pol.cols[base + cnt] = col
        pol.vals[base + cnt] = m
        cnt += 1
    m = pol.bw[k]
    if m != 0.0:
        c += m
        pol.cols[base + cnt] = d.plan.bust[i] * d.nQ + y
        pol.vals[base + cnt] = m
        cnt += 1
    pol.out_c[p] = c + pol.bw[K + k]
    pol.cnt[p] = cnt


cdef void _pol_rows(const _Duel* d, Py_ssize_t j, const _Tab* tb, const double* ends,
                    _Pol* pol) noexcept nogil:
    """Entry j's policy rows (:func:`_pol_row`): mover j against its opponents
    lo..hi-1, or, for a frame, each column's own mover and opponent from its own row."""
    cdef Py_ssize_t k, c
    for k in range(tb.K):
        if d.frow0 != NULL:
            c = d.lo[j] + k
            _pol_row(d, pol, ends, tb.K, k, tb.T, d.fmover[c], d.fopp[c], d.frow0[c], c)
        else:
            _pol_row(d, pol, ends, tb.K, k, tb.T, d.movers[j], d.lo[j] + k, 0, d.out_ptr[j] + k)


cdef void _duel_one(const _Tab* tmpl, const Py_ssize_t* left, const _Duel* d, Py_ssize_t j,
                    double* ends, double* Z, const double* W, Py_ssize_t* lay,
                    Py_ssize_t* offs, double* ws, _Pol* pol) noexcept nogil:
    """Mover j's turn against its opponents: the end values, then the turn DP (and,
    with ``pol``, the greedy policy's sparse rows)."""
    cdef Py_ssize_t i = d.movers[j], K = d.hi[j] - d.lo[j], n_opt = tmpl.n_opt
    cdef Py_ssize_t a = d.plan.ptr[i]
    cdef _Tab tb
    if K <= 0:
        return
    _duel_tab(tmpl, d, j, &tb, pol != NULL)
    if d.frow0 != NULL:
        _frame_ends(d, j, tb.T, ends, Z)
        tb.row0 = d.frow0 + d.lo[j]
    else:
        _duel_ends(d, j, tb.T, ends, Z)
    _layout(&tb, left, tb.KB, lay, lay + n_opt, lay + 2 * n_opt)
    tb.s_ok = d.plan.stop_ok + a
    tb.f_ok = d.plan.forced_ok + a
    tb.S = ends
    tb.F = ends
    tb.Z = Z
    tb.W = W
    tb.start = d.out_v + d.out_ptr[j]
    tb.dstart = d.out_d + d.out_ptr[j] if d.grad else NULL
    tb.pol = pol
    _run_in(&tb, ws, offs)
    if pol != NULL:
        _pol_rows(d, j, &tb, ends, pol)


def duel_level(Rolls rolls, Plans plans, Q, movers, opp_lo, opp_hi, out_v, out_d, out_ptr, grad, threads):
    """Solve the turns of many movers against ranges of opponents (see
    :func:`thousand.kernel.duel_level`; the reference is :func:`thousand._pure.duel_level`).

    With ``plans.win_col``/``win_L`` (equal_turns), a win row ``r`` with ``win_col[r] >= 0``
    is worth ``1 - win_L[y, win_col[r]]`` against opponent ``y`` instead of 1.

    Writes R(0, N) of mover j against opponent ``opp_lo[j] + k`` to
    ``out_v[out_ptr[j] + k]`` (and its bust derivative to ``out_d`` when ``grad``).
    The classes are flattened once; every mover's end values and turn DP run without
    the GIL, movers spread over ``threads`` OpenMP threads (0: OpenMP's default) with
    per-thread scratch.
    """
    _duel_call(rolls, plans, Q, movers, opp_lo, opp_hi, out_v, out_d, out_ptr, grad, threads, None)


def _frames_checked(Plans plans, frame_movers, col_ptr, col_movers, col_opps, col_row0):
    """The frame arrays as contiguous int64, checked: the layout, the indices, and every
    column's turn being its frame's rows shifted (ValueError otherwise)."""
    cp = np.ascontiguousarray(col_ptr, dtype=np.int64)
    cm = np.ascontiguousarray(col_movers, dtype=np.int64)
    co = np.ascontiguousarray(col_opps, dtype=np.int64)
    cr = np.ascontiguousarray(col_row0, dtype=np.int64)
    fm = np.ascontiguousarray(frame_movers, dtype=np.int64)
    cdef Py_ssize_t F = fm.shape[0], C = cm.shape[0], nQ = plans.n
    if cp.shape[0] != F + 1 or cp[0] != 0 or cp[F] != C or np.any(np.diff(cp) < 0):
        raise ValueError("col_ptr must run from 0 to the number of columns, one entry per frame plus one")
    if co.shape[0] != C or cr.shape[0] != C:
        raise ValueError("col_movers, col_opps and col_row0 need one entry per column")
    if C and (min(cm.min(), co.min(), fm.min() if F else 0) < 0 or max(cm.max(), co.max()) >= nQ
              or (F and fm.max() >= nQ) or cr.min() < 0):
        raise ValueError("frame and column movers, opponents must be state indices, rows >= 0")
    _, plan_stop_ok, plan_forced_ok, *_ = plans.arrays()
    cdef const int64_t[::1] pp = np.ascontiguousarray(plans.arrays()[0], dtype=np.int64)
    cdef const uint8_t[::1] ps = np.ascontiguousarray(plan_stop_ok, dtype=np.uint8)
    cdef const uint8_t[::1] pf = np.ascontiguousarray(plan_forced_ok, dtype=np.uint8)
    cdef const int64_t[::1] cpv = cp, cmv = cm, crv = cr, fmv = fm
    cdef Py_ssize_t f, c, i, fi, t, Tf, Ti, r0
    cdef int bad = 0
    with nogil:
        for f in range(F):
            fi = fmv[f]
            Tf = pp[fi + 1] - pp[fi] - 1
            for c in range(cpv[f], cpv[f + 1]):
                i = cmv[c]
                r0 = crv[c]
                Ti = pp[i + 1] - pp[i] - 1
                if Ti != Tf - r0:
                    bad = 1
                    break
                for t in range(1, Ti + 1):
                    if ps[pp[i] + t] != ps[pp[fi] + r0 + t] or pf[pp[i] + t] != pf[pp[fi] + r0 + t]:
                        bad = 1
                        break
                if bad:
                    break
            if bad:
                break
    if bad:
        raise ValueError("a column's turn is not its frame's rows shifted (horizon, banking or forced ends)")
    return fm, cp, cm, co, cr


def duel_frames(Rolls rolls, Plans plans, Q, frame_movers, col_ptr, col_movers, col_opps, col_row0, out_v,
                out_d, grad, threads):
    """:func:`duel_level` for frames of movers (see :func:`thousand.kernel.duel_frames`;
    the reference is :func:`thousand._pure.duel_frames`): frame f is one turn DP over the
    rows of ``frame_movers[f]`` with a column per pair c in ``col_ptr[f]:col_ptr[f+1]``,
    mover ``col_movers[c]`` against ``col_opps[c]``, whose turn starts at row
    ``col_row0[c]``; its R goes to ``out_v[c]`` (the derivative to ``out_d[c]``).
    Every column's turns must be the frame's rows shifted: ``T_c = T_f - row0`` and
    the same stop_ok/forced_ok at every total t >= 1 (ValueError otherwise)."""
    fm, cp, cm, co, cr = _frames_checked(plans, frame_movers, col_ptr, col_movers, col_opps, col_row0)
    cdef Py_ssize_t F = fm.shape[0]
    _duel_call(rolls, plans, Q, fm, cp[:F], cp[1:], out_v, out_d, cp, grad, threads, None, (cm, co, cr))


def duel_policy(Rolls rolls, Plans plans, Q, movers, opp_lo, opp_hi, out_v, out_ptr, out_c, cap_ptr, out_cols,
                out_vals, out_cnt, threads):
    """:func:`duel_level` without the gradient, plus the greedy policy of every pair as a
    sparse row (see :func:`thousand.kernel.duel_policy`; the reference is
    :func:`thousand._pure.duel_policy`): pair p = out_ptr[j] + k gets ``out_c[p]`` and
    ``out_cnt[p]`` entries ``out_cols/out_vals[cap_ptr[p]:]`` (capacity: the mover's T + 1).
    A win row's value (1, or ``1 - win_L`` as in duel_level) goes to ``out_c``.
    """
    cdef Py_ssize_t pairs = np.asarray(out_ptr)[-1] if len(out_ptr) else 0
    cap_a = np.ascontiguousarray(cap_ptr, dtype=np.int64)
    if cap_a.shape[0] != pairs + 1:
        raise ValueError("cap_ptr needs one entry per pair plus one")
    for arr_, name in ((out_c, "out_c"), (out_cnt, "out_cnt")):
        if arr_.shape[0] < pairs:
            raise ValueError(f"{name} is shorter than out_ptr says")
    if out_cols.shape[0] < cap_a[-1] or out_vals.shape[0] < cap_a[-1]:
        raise ValueError("out_cols/out_vals are shorter than cap_ptr says")
    _duel_call(rolls, plans, Q, movers, opp_lo, opp_hi, out_v, np.empty(0), out_ptr, False, threads,
               (out_c, cap_a, out_cols, out_vals, out_cnt))


def duel_policy_frames(Rolls rolls, Plans plans, Q, frame_movers, col_ptr, col_movers, col_opps, col_row0,
                       out_v, out_c, cap_ptr, out_cols, out_vals, out_cnt, threads):
    """:func:`duel_policy` for frames of movers (see :func:`duel_frames`): pair c (a
    column) gets ``out_v[c]``, ``out_c[c]`` and ``out_cnt[c]`` entries from
    ``cap_ptr[c]`` (capacity: its own mover's T + 1)."""
    fm, cp, cm, co, cr = _frames_checked(plans, frame_movers, col_ptr, col_movers, col_opps, col_row0)
    cdef Py_ssize_t F = fm.shape[0], C = cm.shape[0]
    cap_a = np.ascontiguousarray(cap_ptr, dtype=np.int64)
    if cap_a.shape[0] != C + 1:
        raise ValueError("cap_ptr needs one entry per pair plus one")
    for arr_, name in ((out_v, "out_v"), (out_c, "out_c"), (out_cnt, "out_cnt")):
        if arr_.shape[0] < C:
            raise ValueError(f"{name} needs one entry per pair")
    if out_cols.shape[0] < cap_a[C] or out_vals.shape[0] < cap_a[C]:
        raise ValueError("out_cols/out_vals are shorter than cap_ptr says")
    _duel_call(rolls, plans, Q, fm, cp[:F], cp[1:], out_v, np.empty(0), cp, False, threads,
               (out_c, cap_a, out_cols, out_vals, out_cnt), (cm, co, cr))


# The duel calls' per-thread work memory, kept between calls. A duel pass or policy
# round makes hundreds of calls, each needing megabytes; fresh memory each time is fresh
# pages each time (the policy rounds fix glibc's mmap threshold low, so every such block
# is mapped, faulted in and unmapped: a million page faults per classic round).
_WORKSPACE_LOCK = threading.Lock()
_workspace = [np.empty(0)]


def _duel_workspace(Py_ssize_t n):
    """``(buffer of at least n doubles, held)``: the kept one when no other thread is
    in a duel call (``held``: the caller releases _WORKSPACE_LOCK after it), else a
    private one."""
    if not _WORKSPACE_LOCK.acquire(blocking=False):
        return np.empty(max(n, 1)), False
    try:
        if _workspace[0].shape[0] < n:
            _workspace[0] = np.empty(0)  # the old one goes first
            _workspace[0] = np.empty(n + n // 4)
    except BaseException:
        _WORKSPACE_LOCK.release()
        raise
    return _workspace[0], True


cdef _duel_call(Rolls rolls, Plans plans, Q, movers, opp_lo, opp_hi, out_v, out_d, out_ptr, grad, threads,
                policy, frames=None):
    """The body of duel_level, duel_policy and duel_frames: checks, then every mover
    (or frame: ``frames`` = its columns' movers, opponents, start rows, checked by
    duel_frames; opp_lo/opp_hi then index the columns) on OpenMP threads."""
    cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, dice, hot_mode = rolls.arrays()
    (plan_ptr, plan_stop_ok, plan_forced_ok, plan_next, plan_after, plan_climbed, bust_idx, score, overtaken,
     pushed, on_barrel, win_col, win_L) = plans.arrays()
    cdef const int64_t[::1] cptr = _i64_1(cls_ptr)
    cdef const double[::1] cprob = _f64_1(cls_prob)
    cdef const uint8_t[::1] cinst = _u8_1(cls_instant)
    cdef const int64_t[::1] optr = _i64_1(opt_ptr)
    cdef const int64_t[::1] opts = _i64_1(opt_points)
    cdef const int64_t[::1] oused = _i64_1(opt_used)
    cdef Py_ssize_t N = dice
    cdef int hot = hot_mode
    _check_rules(N, hot, 0)
    pp_a = np.ascontiguousarray(plan_ptr, dtype=np.int64)
    ps_a = np.ascontiguousarray(plan_stop_ok, dtype=np.uint8)
    pf_a = np.ascontiguousarray(plan_forced_ok, dtype=np.uint8)
    pn_a = np.ascontiguousarray(plan_next, dtype=np.int64)
    pa_a = np.ascontiguousarray(plan_after, dtype=np.int64)
    pc_a = np.ascontiguousarray(plan_climbed, dtype=np.uint8)
    bu_a = np.ascontiguousarray(bust_idx, dtype=np.int64)
    sc_a = np.ascontiguousarray(score, dtype=np.int64)
    ov_a = np.ascontiguousarray(overtaken, dtype=np.int64)
    pu_a = np.ascontiguousarray(pushed, dtype=np.int64)
    ob_a = np.ascontiguousarray(on_barrel, dtype=np.uint8)
    # a transposed view (an out-of-core store holds P, read as Q = P.T) is read in place,
    # not copied; the policy rows name successors by flat C-order index, so they need C order
    cdef bint transposed = (policy is None and isinstance(Q, np.ndarray) and Q.dtype == np.float64
                            and Q.ndim == 2 and Q.flags.f_contiguous and not Q.flags.c_contiguous)
    Q_a = Q.T if transposed else np.ascontiguousarray(Q, dtype=np.float64)
    mv_a = np.ascontiguousarray(movers, dtype=np.int64)
    lo_a = np.ascontiguousarray(opp_lo, dtype=np.int64)
    hi_a = np.ascontiguousarray(opp_hi, dtype=np.int64)
    op_a = np.ascontiguousarray(out_ptr, dtype=np.int64)
    cdef bint want_grad = grad
    # ---- validation (vectorised, once per call)
    if Q_a.ndim != 2 or Q_a.shape[0] != Q_a.shape[1]:
        raise ValueError("Q must be a square matrix")
    cdef Py_ssize_t nQ = Q_a.shape[0], M = mv_a.shape[0], rows
    if plans.n != nQ:   # the plans themselves were checked when they were built
        raise ValueError(f"Q must be {plans.n} x {plans.n}, one row and column per state of the plans")
    rows = int(pp_a[-1])
    if lo_a.shape[0] != M or hi_a.shape[0] != M or op_a.shape[0] != M + 1:
        raise ValueError("opp_lo/opp_hi need one entry per mover, out_ptr one more")
    if M:
        if mv_a.min() < 0 or mv_a.max() >= nQ:
            raise ValueError("movers must be state indices")
        if lo_a.min() < 0 or (frames is None and hi_a.max() > nQ) or np.any(hi_a < lo_a):
            raise ValueError("need 0 <= opp_lo <= opp_hi <= n")
        if op_a[0] < 0 or np.any(np.diff(op_a) != hi_a - lo_a):
            raise ValueError("out_ptr must step by opp_hi - opp_lo")
    cdef double[::1] ov = out_v
    cdef double[::1] od = out_d
    if M and ov.shape[0] < op_a[M]:
        raise ValueError("out_v is shorter than out_ptr says")
    if want_grad and M and od.shape[0] < op_a[M]:
        raise ValueError("out_d is shorter than out_ptr says")
    wc_a = np.ascontiguousarray(win_col if win_col is not None else np.zeros(1), dtype=np.int64)
    wl_a = np.ascontiguousarray(win_L if win_L is not None else np.zeros((1, 1)), dtype=np.float64)
    if M == 0 or op_a[M] == op_a[0]:
        return

    if rolls._flat is None:   # flattened once per Rolls: a level's call is often small
        rolls._flat = _Flat(cptr, cprob, cinst, optr, opts, oused, N, 1)
    cdef _Flat fl = <_Flat>rolls._flat
    cdef _Tab tmpl = fl.tb
    tmpl.hot = hot
    cdef const int64_t[::1] pp = pp_a, pn = pn_a, pa = pa_a, bu = bu_a, sc = sc_a
    cdef const int64_t[::1] ovt = ov_a, pu = pu_a, mv = mv_a, lo = lo_a, hi = hi_a, opt = op_a
    cdef const uint8_t[::1] ps = ps_a, pf = pf_a, pc = pc_a, ob = ob_a
    cdef const double[:, ::1] Qm = Q_a
    cdef const int64_t[::1] wc = wc_a
    cdef const double[:, ::1] wl = wl_a
    cdef double dummy = 0.0
    cdef _Duel d
    plan_view(&d.plan, plans)
    d.Q = &Qm[0, 0]
    d.nQ = nQ
    d.sn = 1 if transposed else nQ
    d.so = nQ if transposed else 1
    d.win_col = &wc[0] if win_col is not None else NULL
    d.win_L = &wl[0, 0]
    d.nL = wl.shape[1]
    d.movers = &mv[0]
    d.lo = &lo[0]
    d.hi = &hi[0]
    d.out_v = &ov[0]
    d.out_d = &od[0] if want_grad else &dummy
    d.out_ptr = &opt[0]
    d.grad = want_grad
    d.fmover = d.fopp = d.frow0 = NULL
    cdef const int64_t[::1] fmv_, fov_, frv_
    if frames is not None:
        fmv_, fov_, frv_ = frames
        if fmv_.shape[0]:
            d.fmover = &fmv_[0]
            d.fopp = &fov_[0]
            d.frow0 = &frv_[0]

    # ---- per-thread scratch sizes: the largest mover
    cdef bint want_pol = policy is not None
    cdef Py_ssize_t j, kmax = 1, ends_max = 1, ws_max = 1, store_max = 1, K, T1, need, work = 0
    cdef _Tab tb
    with nogil:
        for j in range(M):
            K = hi[j] - lo[j]
            if K <= 0:
                continue
            T1 = pp[mv[j] + 1] - pp[mv[j]]
            work += T1 * (K + 8)       # rows x columns, plus a column's fixed cost
            _duel_tab(&tmpl, &d, j, &tb, want_pol)
            need = _ws_need(&tb)
            if K > kmax:
                kmax = K
            if T1 * K > ends_max:
                ends_max = T1 * K
            if need > ws_max:
                ws_max = need
            if tb.NR * tb.RS > store_max:
                store_max = tb.NR * tb.RS
    # the policy's scratch: e, bw, M (and MC), the tail rows, rm, cm
    cdef Py_ssize_t RSB = (N + 1) * BLOCK, pol_need = 0
    cdef _Pol ptmpl
    cdef double[::1] pc_v
    cdef int64_t[::1] pcap_v, pcols_v, pcnt_v
    cdef double[::1] pvals_v
    # the classes with one option (only the policy's forward pass reads them)
    sg = _single_options(&tmpl, fl.left, N, want_pol)
    sgptr_v, sgn_v, sgx_v, sgp_v = sg
    _pol_views(&ptmpl, sgptr_v, sgn_v, sgx_v, sgp_v)
    if want_pol:
        pol_need = ends_max + 2 * kmax + (2 + (hot == HOT_CONFIRM)) * store_max + 6 * RSB + 6 * BLOCK
        pc_v, pcap_v, pcols_v, pvals_v, pcnt_v = policy
        if M and op_a[M] > op_a[0]:
            ptmpl.out_c = &pc_v[0]
            ptmpl.cap_ptr = &pcap_v[0]
            ptmpl.cnt = &pcnt_v[0]
            if pcap_v[pcap_v.shape[0] - 1] > 0:
                ptmpl.cols = &pcols_v[0]
                ptmpl.vals = &pvals_v[0]
    ones_a = np.ones(kmax)
    cdef const double[::1] ones = ones_a
    cdef const double* W = &ones[0]
    cdef Py_ssize_t n_opt = tmpl.n_opt, n_lay = 2 * tmpl.n_opt + fl.n_cls + 1
    cdef const Py_ssize_t* left = fl.left
    cdef int nt = threads
    if nt <= 0:
        nt = thk_max_threads()
    if nt > M:
        nt = <int>M
    if work < _SERIAL_WORK:
        nt = 1          # waking the other threads would cost more than it saves
    if nt < 1:
        nt = 1
    cdef int failed = 0
    cdef int* failp = &failed
    cdef double* buf
    cdef double* pb
    cdef Py_ssize_t* ibuf
    cdef _Pol* polp
    cdef const _Pol* ptp = &ptmpl
    cdef Py_ssize_t per_thread = ends_max + kmax + ws_max + pol_need
    ws_a, ws_held = _duel_workspace(nt * per_thread)
    cdef double[::1] ws_v = ws_a
    cdef double* ws0 = &ws_v[0]
    try:
        with nogil, parallel(num_threads=nt):
            buf = ws0 + threadid() * per_thread
            ibuf = <Py_ssize_t*>malloc((n_lay + n_opt + 1 + BLOCK + N + 1) * sizeof(Py_ssize_t))
            polp = NULL
            if want_pol:
                polp = <_Pol*>malloc(sizeof(_Pol))
            if ibuf == NULL or (want_pol and polp == NULL):
                failp[0] = 1
            elif want_pol:
                polp[0] = ptp[0]
                pb = buf + ends_max + kmax + ws_max
                polp.e = pb
                polp.bw = pb + ends_max
                _pol_scratch(polp, pb + ends_max + 2 * kmax, store_max, RSB, BLOCK, hot == HOT_CONFIRM)
                polp.bi = ibuf + n_lay + n_opt + 1
                polp.sg_end = polp.bi + BLOCK
            for j in prange(M, schedule="dynamic"):
                if ibuf != NULL and (polp != NULL or not want_pol):
                    _duel_one(&tmpl, left, &d, j, buf, buf + ends_max, W, ibuf, ibuf + n_lay,
                              buf + ends_max + kmax, polp)
            free(ibuf)
            free(polp)
    finally:
        if ws_held:
            _WORKSPACE_LOCK.release()
    if failed:
        raise MemoryError("duel_level: out of memory")


# =========================================================================== sparse rows


cdef int _rows_minus_k(const int64_t* ip, const int32_t* cl, const float* v32, const double* v64,
                       const double* xv, Py_ssize_t nx, const double* cv, double* ov, Py_ssize_t m,
                       int nt) noexcept nogil:
    """``ov[i] = cv[i] - sum_e vals[e] * xv[cl[e]]`` over the m CSR rows ``ip``/``cl``
    (values float32 from ``v32``, else float64 from ``v64``, summed in float64), the
    rows on ``nt`` OpenMP threads (one below 200,000 entries: too little work to wake
    the others); returns 1 if a column is outside xv (``nx`` entries), checked in the
    loop: one pass over the entries."""
    cdef Py_ssize_t i, e
    cdef double acc
    cdef int32_t col
    cdef int bad = 0
    cdef int* badp = &bad   # shared (an assignment in prange would make it thread-private)
    if ip[m] < 200000:
        nt = 1
    for i in prange(m, num_threads=nt, schedule="static"):
        acc = cv[i]
        for e in range(ip[i], ip[i + 1]):
            col = cl[e]
            if col < 0 or col >= nx:
                badp[0] = 1
                continue
            if v32 != NULL:
                acc = acc - <double>v32[e] * xv[col]
            else:
                acc = acc - v64[e] * xv[col]
        ov[i] = acc
    return bad


def rows_minus(indptr, cols, vals, x, c, out, threads):
    """``out[i] = c[i] - sum_{e = indptr[i]}^{indptr[i+1]-1} vals[e] * x[cols[e]]`` for every
    row i (see :func:`thousand.kernel.rows_minus`), rows spread over ``threads`` OpenMP
    threads (0: OpenMP's default). ``vals`` may be float32 (a policy's approximate rows,
    summed in float64) or float64."""
    cdef const int64_t[::1] ip = _i64_1(indptr)
    cdef const int32_t[::1] cl = np.ascontiguousarray(cols, dtype=np.int32)
    vals_a = np.asarray(vals)
    cdef bint single = vals_a.dtype == np.float32
    if not single:
        vals_a = _f64_1(vals_a)
    cdef const double[::1] xv = _f64_1(x)
    cdef const double[::1] cv = _f64_1(c)
    cdef double[::1] ov = out
    cdef Py_ssize_t m = ip.shape[0] - 1, i
    if m < 0 or cv.shape[0] < m or ov.shape[0] < m:
        raise ValueError("indptr needs one entry per row plus one; c and out one per row")
    if m == 0:
        return
    cdef int bad = 0
    cdef Py_ssize_t nv = vals_a.shape[0]
    with nogil:
        if ip[0] != 0 or ip[m] > cl.shape[0] or ip[m] > nv:
            bad = 1
        for i in range(m):
            if ip[i + 1] < ip[i]:
                bad = 1
    if bad:
        raise ValueError("indptr must start at 0, not decrease, and fit cols/vals")
    cdef int nt = threads if threads > 0 else thk_max_threads()
    cdef const float[::1] v32
    cdef const double[::1] v64
    cdef const float* p32 = NULL
    cdef const double* p64 = NULL
    if single:
        v32 = np.ascontiguousarray(vals_a)
        p32 = &v32[0] if nv else NULL
    else:
        v64 = vals_a
        p64 = &v64[0] if nv else NULL
    with nogil:
        bad = _rows_minus_k(&ip[0], &cl[0] if cl.shape[0] else NULL, p32, p64,
                            &xv[0] if xv.shape[0] else NULL, xv.shape[0], &cv[0], &ov[0], m, nt)
    if bad:
        raise ValueError("cols must index x")


cdef int _links_solve(const int64_t* sc, const double* av, const double* bv, double* ov, uint8_t* st,
                      int64_t* path, Py_ssize_t m) noexcept nogil:
    """The walk of :func:`solve_links` over m rows (``st``: m bytes, zeroed by the
    caller; ``path``: m entries of scratch). Returns 1 on a singular cycle."""
    cdef Py_ssize_t k0, u, L, i, j, node
    cdef double p, q
    for k0 in range(m):
        if st[k0]:
            continue
        L = 0
        u = k0
        while u >= 0 and st[u] == 0:
            st[u] = 1
            path[L] = u
            L += 1
            u = sc[u]
        if u >= 0 and st[u] == 1:
            i = L - 1
            while path[i] != u:
                i -= 1
            p = bv[path[L - 1]]
            q = -av[path[L - 1]]
            for j in range(L - 2, i - 1, -1):
                node = path[j]
                p = bv[node] - av[node] * p
                q = -av[node] * q
            if 1.0 - q == 0.0:
                return 1
            ov[u] = p / (1.0 - q)
            st[u] = 2
            for j in range(L - 1, i, -1):
                node = path[j]
                ov[node] = bv[node] - av[node] * ov[sc[node]]
                st[node] = 2
            L = i
        for j in range(L - 1, -1, -1):
            node = path[j]
            if sc[node] >= 0:
                ov[node] = bv[node] - av[node] * ov[sc[node]]
            else:
                ov[node] = bv[node]
            st[node] = 2
    return 0


def solve_links(succ, a, b, out):
    """Solve ``out[k] + a[k] * out[succ[k]] = b[k]`` for every k (``out[k] = b[k]``
    where ``succ[k] < 0``): a functional graph (one successor per row), see
    :meth:`thousand.kernel.Backend.solve_links`. Each unvisited row is followed along
    its successors until a solved row, a row without successor, or a cycle; a cycle
    ``c_0 -> ... -> c_{L-1} -> c_0`` is solved by composing its rows backwards into
    ``x_{c_0} = p + q x_{c_0}``, then the path is substituted back. O(rows)."""
    cdef const int64_t[::1] sc = _i64_1(succ)
    cdef const double[::1] av = _f64_1(a)
    cdef const double[::1] bv = _f64_1(b)
    cdef double[::1] ov = out
    cdef Py_ssize_t m = bv.shape[0], k0
    if sc.shape[0] != m or av.shape[0] != m or ov.shape[0] < m:
        raise ValueError("succ, a and b need one entry per row, out at least as many")
    for k0 in range(m):
        if sc[k0] >= m:
            raise ValueError("succ must index the rows (or be negative)")
    if m == 0:
        return
    state_a = np.zeros(m, dtype=np.uint8)   # 0 unvisited, 1 on the current path, 2 solved
    path_a = np.empty(m, dtype=np.int64)
    cdef uint8_t[::1] st = state_a
    cdef int64_t[::1] path = path_a
    cdef int singular
    with nogil:
        singular = _links_solve(&sc[0], &av[0], &bv[0], &ov[0], &st[0], &path[0], m)
    if singular:
        raise ZeroDivisionError("solve_links: a cycle's rows are singular (the product of its -a is 1)")


cdef class LevelSweep:
    """Gauss-Seidel sweeps of a policy round's correction system over its levels (the
    reference is :class:`thousand._pure.LevelSweep`). ``levels``: per level, top down,
    ``(rows, rho, indptr, cols, vals, succ, a)``: the level's positions in x, its
    right-hand side, its CSR rows (int32 columns into x; float32 or float64 values) and
    its links. A sweep sets, level by level, ``x[rows] = (I + D)^-1 (rho - O x)`` with
    O the CSR rows at the current x and D the links (:func:`solve_links`). The arrays
    are checked and held once; a sweep runs without the GIL and allocates nothing."""
    cdef object keep                # the arrays the pointers below point into
    cdef Py_ssize_t nlev, size
    cdef Py_ssize_t* m
    cdef const int64_t** rows
    cdef const double** rho
    cdef const int64_t** ip
    cdef const int32_t** cl
    cdef const float** v32          # per level one of v32 / v64 is set
    cdef const double** v64
    cdef const int64_t** succ
    cdef const double** a
    cdef double* rhs                # scratch of the largest level
    cdef double* out
    cdef uint8_t* st
    cdef int64_t* path

    def __cinit__(self, levels, Py_ssize_t size):
        levels = list(levels)
        cdef Py_ssize_t n = len(levels), L, mm, mmax = 1
        self.nlev, self.size = n, size
        self.m = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        self.rows = <const int64_t**>malloc((n + 1) * sizeof(void*))
        self.rho = <const double**>malloc((n + 1) * sizeof(void*))
        self.ip = <const int64_t**>malloc((n + 1) * sizeof(void*))
        self.cl = <const int32_t**>malloc((n + 1) * sizeof(void*))
        self.v32 = <const float**>malloc((n + 1) * sizeof(void*))
        self.v64 = <const double**>malloc((n + 1) * sizeof(void*))
        self.succ = <const int64_t**>malloc((n + 1) * sizeof(void*))
        self.a = <const double**>malloc((n + 1) * sizeof(void*))
        if (self.m == NULL or self.rows == NULL or self.rho == NULL or self.ip == NULL or self.cl == NULL
                or self.v32 == NULL or self.v64 == NULL or self.succ == NULL or self.a == NULL):
            raise MemoryError()
        keep = []
        cdef const int64_t[::1] rv, iv, sv
        cdef const double[::1] hv, av
        cdef const int32_t[::1] cv
        cdef const float[::1] f32
        cdef const double[::1] f64
        for L, level in enumerate(levels):
            r, h, ptr, cols, vals, succ, a = level
            r, ptr, succ = (np.ascontiguousarray(x, dtype=np.int64) for x in (r, ptr, succ))
            h, a = np.ascontiguousarray(h, dtype=np.float64), np.ascontiguousarray(a, dtype=np.float64)
            cols = np.ascontiguousarray(cols, dtype=np.int32)
            vals = np.asarray(vals)
            vals = np.ascontiguousarray(vals, dtype=np.float32 if vals.dtype == np.float32 else np.float64)
            mm = r.shape[0]
            if h.shape[0] != mm or succ.shape[0] != mm or a.shape[0] != mm or ptr.shape[0] != mm + 1:
                raise ValueError("a level needs rho, succ and a per row, indptr per row plus one")
            if mm and (r.min() < 0 or r.max() >= size or succ.max() >= mm):
                raise ValueError("rows must index x, succ the level's rows (or be negative)")
            if ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[mm] > cols.shape[0] or ptr[mm] > vals.shape[0]:
                raise ValueError("indptr must start at 0, not decrease, and fit cols/vals")
            keep.append((r, h, ptr, cols, vals, succ, a))
            self.m[L] = mm
            mmax = max(mmax, mm)
            rv, hv, iv, sv, av = r, h, ptr, succ, a
            self.rows[L] = &rv[0] if mm else NULL
            self.rho[L] = &hv[0] if mm else NULL
            self.ip[L] = &iv[0]
            self.succ[L] = &sv[0] if mm else NULL
            self.a[L] = &av[0] if mm else NULL
            self.cl[L] = NULL
            self.v32[L] = NULL
            self.v64[L] = NULL
            if cols.shape[0]:
                cv = cols
                self.cl[L] = &cv[0]
            if vals.shape[0] and vals.dtype == np.float32:
                f32 = vals
                self.v32[L] = &f32[0]
            elif vals.shape[0]:
                f64 = vals
                self.v64[L] = &f64[0]
        self.keep = keep
        self.rhs = <double*>malloc(mmax * sizeof(double))
        self.out = <double*>malloc(mmax * sizeof(double))
        self.st = <uint8_t*>malloc(mmax)
        self.path = <int64_t*>malloc(mmax * sizeof(int64_t))
        if self.rhs == NULL or self.out == NULL or self.st == NULL or self.path == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.m)
        free(self.rows)
        free(self.rho)
        free(self.ip)
        free(self.cl)
        free(self.v32)
        free(self.v64)
        free(self.succ)
        free(self.a)
        free(self.rhs)
        free(self.out)
        free(self.st)
        free(self.path)

    def sweep(self, double[::1] x, int threads=0):
        """One sweep, in place on ``x`` (float64, the size given); returns the largest
        change of an entry. The CSR rows are spread over ``threads`` OpenMP threads
        (0: all)."""
        if x.shape[0] != self.size:
            raise ValueError("x must have the size the sweep was built for")
        cdef Py_ssize_t L, m, k, nx = self.size
        cdef double change = 0.0, d
        cdef int bad = 0, singular = 0, nt = threads if threads > 0 else thk_max_threads()
        cdef double* xp = &x[0] if nx else NULL
        with nogil:
            for L in range(self.nlev):
                m = self.m[L]
                if m == 0:
                    continue
                if _rows_minus_k(self.ip[L], self.cl[L], self.v32[L], self.v64[L], xp, nx, self.rho[L],
                                 self.rhs, m, nt):
                    bad = 1
                memset(self.st, 0, m)
                if _links_solve(self.succ[L], self.a[L], self.rhs, self.out, self.st, self.path, m):
                    singular = 1
                    break
                for k in range(m):
                    d = fabs(self.out[k] - xp[self.rows[L][k]])
                    if d > change:
                        change = d
                    xp[self.rows[L][k]] = self.out[k]
        if bad:
            raise ValueError("cols must index x")
        if singular:
            raise ZeroDivisionError("a level's links are singular (the product of a cycle's -a is 1)")
        return change


cdef struct _Patterns:
    Py_ssize_t n, ns                # states; stores
    const int64_t* first            # ns + 1: store s holds patterns first[s]..first[s+1]-1
    const int64_t* base             # per store: where its rows read x
    const int64_t** ptr
    const int32_t** ends
    const double** prob
    const double** bust_p
    const double** cst
    const int32_t** mover
    const int64_t* nxt              # the plans (see Plans)
    const int64_t* after
    const uint8_t* climbed
    const int64_t* bust
    const int64_t* score
    const int64_t* overtaken
    const int64_t* pushed
    const uint8_t* on_barrel


cdef inline double _pattern_row(const _Patterns* tb, int64_t p, int64_t j, bint linked, const double* x,
                                double* a) noexcept nogil:
    """Row (pattern p, opponent j) of :class:`PatternSweep` at x, its link's bust left out
    where ``linked``: the right-hand side, and ``a`` the link's coefficient (-bust_p, or 0).
    What depends on the opponent alone is read once per row: an end's opponent is j or,
    where the end climbed the barrel j is on, j pushed off; either overtaken when the
    mover's score passes it."""
    cdef Py_ssize_t s = 0, e
    cdef int64_t q, g, y, base, n = tb.n, own
    cdef int64_t sj, sp, pj, oj, op
    cdef const int32_t* ends
    cdef const double* prob
    cdef bint on
    cdef double acc, bp
    while p >= tb.first[s + 1]:
        s += 1
    q = p - tb.first[s]
    own = tb.score[tb.mover[s][q]]
    base = tb.base[s]
    on = tb.on_barrel[j]
    pj = tb.pushed[j]
    sj, sp = tb.score[j], tb.score[pj]
    oj, op = tb.overtaken[j], tb.overtaken[pj]
    ends, prob = tb.ends[s], tb.prob[s]
    acc = tb.cst[s][q]
    for e in range(tb.ptr[s][q], tb.ptr[s][q + 1]):
        g = ends[e]
        if on and tb.climbed[g]:
            y = op if own < sp and sp < tb.after[g] else pj
        else:
            y = oj if own < sj and sj < tb.after[g] else j
        acc = acc + prob[e] * x[base + tb.nxt[g] * n + y]
    bp = tb.bust_p[s][q]
    if linked:
        a[0] = -bp
    else:
        a[0] = 0.0
        acc = acc + bp * x[base + tb.bust[tb.mover[s][q]] * n + j]
    return acc


cdef double* _level_wins(list stores, const int32_t[::1] pat, const int32_t[::1] opp) except? NULL:
    """A level's first-seat wins per row, ``sum_e wprob[e] won[j, wcol[e]]`` over its
    pattern's win ends (the stores' fields 7-10 as Backend.pattern_sweep splits them),
    malloc'ed; NULL where no store has wins. Summed once: they read no x."""
    cdef Py_ssize_t ns = len(stores), s, k, m = pat.shape[0], e, nw
    cdef int64_t first = 0, q
    cdef double acc
    cdef double* out = NULL
    cdef const int64_t[::1] wptr
    cdef const int32_t[::1] wcol
    cdef const double[::1] wprob
    cdef const double[:, ::1] won
    for s in range(ns):
        w = stores[s]
        if w[7] is not None and w[9].shape[0]:
            if out == NULL:
                out = <double*>calloc(m, sizeof(double))
                if out == NULL:
                    raise MemoryError()
            wptr, wcol, wprob, won = w[8], w[9], w[10], w[7]
            nw = won.shape[1]
            with nogil:
                for k in prange(m, schedule="static"):
                    q = pat[k] - first
                    if q < 0 or q >= wptr.shape[0] - 1:
                        continue
                    acc = 0.0
                    for e in range(wptr[q], wptr[q + 1]):
                        acc = acc + wprob[e] * won[opp[k], wcol[e]]
                    out[k] += acc
        first += stores[s][3].shape[0]
    return out


cdef class PatternSweep:
    """Gauss-Seidel sweeps over levels of turns drawn from shared patterns (the reference
    is :class:`thousand._pure.PatternSweep`; :meth:`thousand.kernel.Backend.pattern_sweep`
    checks every array once, so the sweep follows the indices without checks). Holds the
    plans, the stores and the levels; a sweep runs without the GIL and allocates nothing."""
    cdef object keep                # the arrays the pointers below point into
    cdef _Patterns tb
    cdef Py_ssize_t nlev, size
    cdef Py_ssize_t* m
    cdef const int64_t** rows
    cdef const int32_t** pat
    cdef const int32_t** opp
    cdef const int64_t** succ
    cdef double** won               # per level and row: its first-seat wins, summed once (NULL: none)
    cdef double* rhs                # scratch of the largest level
    cdef double* a
    cdef double* out
    cdef uint8_t* st
    cdef int64_t* path

    def __cinit__(self, Plans plans, stores, levels, Py_ssize_t size):
        stores, levels = list(stores), list(levels)
        cdef Py_ssize_t ns = len(stores), n = len(levels), s, L, mm, mmax = 1
        self.size, self.nlev = size, n
        self.tb.n, self.tb.ns = plans.n, ns
        self.tb.first = <const int64_t*>malloc((ns + 1) * sizeof(int64_t))
        self.tb.base = <const int64_t*>malloc((ns + 1) * sizeof(int64_t))
        self.tb.ptr = <const int64_t**>malloc((ns + 1) * sizeof(void*))
        self.tb.ends = <const int32_t**>malloc((ns + 1) * sizeof(void*))
        self.tb.prob = <const double**>malloc((ns + 1) * sizeof(void*))
        self.tb.bust_p = <const double**>malloc((ns + 1) * sizeof(void*))
        self.tb.cst = <const double**>malloc((ns + 1) * sizeof(void*))
        self.tb.mover = <const int32_t**>malloc((ns + 1) * sizeof(void*))
        self.m = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        self.won = <double**>calloc(n + 1, sizeof(void*))
        self.rows = <const int64_t**>malloc((n + 1) * sizeof(void*))
        self.pat = <const int32_t**>malloc((n + 1) * sizeof(void*))
        self.opp = <const int32_t**>malloc((n + 1) * sizeof(void*))
        self.succ = <const int64_t**>malloc((n + 1) * sizeof(void*))
        if (self.tb.first == NULL or self.tb.base == NULL or self.tb.ptr == NULL or self.tb.ends == NULL
                or self.tb.prob == NULL or self.tb.bust_p == NULL or self.tb.cst == NULL or self.tb.mover == NULL
                or self.won == NULL or self.m == NULL or self.rows == NULL or self.pat == NULL or self.opp == NULL
                or self.succ == NULL):
            raise MemoryError()
        keep = [plans]
        cdef const int64_t[::1] i64a
        cdef const int32_t[::1] i32a
        cdef const double[::1] f64a
        cdef const uint8_t[::1] u8a
        cdef int64_t* first = <int64_t*>self.tb.first
        cdef int64_t* base = <int64_t*>self.tb.base
        first[0] = 0
        for s, store in enumerate(stores):
            ptr, ends, prob, bust_p, cst, mover, b = store[:7]
            keep.append(store)
            first[s + 1] = first[s] + bust_p.shape[0]
            base[s] = b
            i64a = ptr
            self.tb.ptr[s] = &i64a[0]
            i32a = ends
            self.tb.ends[s] = &i32a[0] if ends.shape[0] else NULL
            f64a = prob
            self.tb.prob[s] = &f64a[0] if prob.shape[0] else NULL
            f64a = bust_p
            self.tb.bust_p[s] = &f64a[0] if bust_p.shape[0] else NULL
            f64a = cst
            self.tb.cst[s] = &f64a[0] if cst.shape[0] else NULL
            i32a = mover
            self.tb.mover[s] = &i32a[0] if mover.shape[0] else NULL
        i64a = plans.next
        self.tb.nxt = &i64a[0]
        i64a = plans.after
        self.tb.after = &i64a[0]
        u8a = plans.climbed
        self.tb.climbed = &u8a[0]
        i64a = plans.bust
        self.tb.bust = &i64a[0] if plans.n else NULL
        i64a = plans.score
        self.tb.score = &i64a[0] if plans.n else NULL
        i64a = plans.overtaken
        self.tb.overtaken = &i64a[0] if plans.n else NULL
        i64a = plans.pushed
        self.tb.pushed = &i64a[0] if plans.n else NULL
        u8a = plans.on_barrel
        self.tb.on_barrel = &u8a[0] if plans.n else NULL
        for L, level in enumerate(levels):
            rows, pat, opp, succ = level
            keep.append(level)
            mm = rows.shape[0]
            self.m[L] = mm
            mmax = max(mmax, mm)
            self.rows[L] = self.pat[L] = self.opp[L] = self.succ[L] = NULL
            if mm:
                i64a = rows
                self.rows[L] = &i64a[0]
                i32a = pat
                self.pat[L] = &i32a[0]
                i32a = opp
                self.opp[L] = &i32a[0]
                i64a = succ
                self.succ[L] = &i64a[0]
                self.won[L] = _level_wins(stores, pat, opp)
        self.keep = keep
        self.rhs = <double*>malloc(mmax * sizeof(double))
        self.a = <double*>malloc(mmax * sizeof(double))
        self.out = <double*>malloc(mmax * sizeof(double))
        self.st = <uint8_t*>malloc(mmax)
        self.path = <int64_t*>malloc(mmax * sizeof(int64_t))
        if self.rhs == NULL or self.a == NULL or self.out == NULL or self.st == NULL or self.path == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(<void*>self.tb.first)
        free(<void*>self.tb.base)
        free(self.tb.ptr)
        free(self.tb.ends)
        free(self.tb.prob)
        free(self.tb.bust_p)
        free(self.tb.cst)
        free(self.tb.mover)
        cdef Py_ssize_t L
        if self.won != NULL:
            for L in range(self.nlev):
                free(self.won[L])
        free(self.won)
        free(self.m)
        free(self.rows)
        free(self.pat)
        free(self.opp)
        free(self.succ)
        free(self.rhs)
        free(self.a)
        free(self.out)
        free(self.st)
        free(self.path)

    def sweep(self, double[::1] x, int threads=0):
        """One sweep, in place on ``x`` (float64, the size given); returns the largest
        change of an entry. A level's rows are spread over ``threads`` OpenMP threads
        (0: all; one for levels under 2,000 rows)."""
        if x.shape[0] != self.size:
            raise ValueError("x must have the size the sweep was built for")
        cdef Py_ssize_t L, m, k
        cdef double change = 0.0, d
        cdef int singular = 0, nt = threads if threads > 0 else thk_max_threads(), t
        cdef double* xp = &x[0] if self.size else NULL
        cdef const _Patterns* tb = &self.tb
        cdef const int64_t* rw
        cdef const int32_t* pt
        cdef const int32_t* op
        cdef const int64_t* sc
        cdef double* rhs = self.rhs
        cdef double* av = self.a
        cdef const double* wn
        with nogil:
            for L in range(self.nlev):
                m = self.m[L]
                if m == 0:
                    continue
                rw, pt, op, sc, wn = self.rows[L], self.pat[L], self.opp[L], self.succ[L], self.won[L]
                t = nt if m >= 2000 else 1
                for k in prange(m, num_threads=t, schedule="static"):
                    rhs[k] = _pattern_row(tb, pt[k], op[k], sc[k] >= 0, xp, &av[k])
                    if wn != NULL:
                        rhs[k] = rhs[k] + wn[k]
                memset(self.st, 0, m)
                if _links_solve(sc, av, rhs, self.out, self.st, self.path, m):
                    singular = 1
                    break
                for k in range(m):
                    d = fabs(self.out[k] - xp[rw[k]])
                    if d > change:
                        change = d
                    xp[rw[k]] = self.out[k]
        if singular:
            raise ZeroDivisionError("a level's links are singular (the product of a cycle's -a is 1)")
        return change


cdef inline Py_ssize_t _one_link(const int64_t* cp, const int64_t* cn, const int64_t* cl, const double* vl,
                                 const int64_t* loc, Py_ssize_t nloc, Py_ssize_t p, double drop) noexcept nogil:
    """The entry of row p that rows_split(links=True) keeps inside: the largest kept
    entry whose column is local (the first of equals), or -1."""
    cdef Py_ssize_t e, c, best = -1
    for e in range(cp[p], cp[p] + cn[p]):
        c = cl[e]
        if c < 0 or c >= nloc or fabs(vl[e]) < drop or loc[c] < 0:
            continue
        if best < 0 or fabs(vl[e]) > fabs(vl[best]):
            best = e
    return best


_SPLIT_SERIAL_ROWS = 512  # fewer rows than this are split on one thread


cdef struct _Split:
    const int64_t* cp
    const int64_t* cn
    const int64_t* cl
    const double* vl
    const int64_t* loc
    Py_ssize_t nloc
    bint split
    bint one
    bint single
    double drop


cdef int _split_row(const _Split* sp, Py_ssize_t p, bint count, int64_t* out_at, int64_t* in_at, int32_t* oc,
                    double* ov, float* ov32, int64_t* ir, int64_t* il, double* iv) noexcept nogil:
    """Row p of rows_split. ``count``: its numbers of outer and inner entries go to
    ``out_at[0]`` and ``in_at[0]``; returns 1 on a bad column. Else its entries go to
    the outputs from offsets ``out_at[0]`` and ``in_at[0]``."""
    cdef Py_ssize_t e, c, pick = -1
    cdef int64_t n_out = 0, n_in = 0
    cdef int bad = 0
    if sp.one and sp.cn[p]:
        pick = _one_link(sp.cp, sp.cn, sp.cl, sp.vl, sp.loc, sp.nloc, p, sp.drop)
    for e in range(sp.cp[p], sp.cp[p] + sp.cn[p]):
        c = sp.cl[e]
        if c < 0 or c > 2147483647 or (sp.split and c >= sp.nloc):
            bad = 1
            continue
        if fabs(sp.vl[e]) < sp.drop:
            continue
        if sp.split and sp.loc[c] >= 0 and (not sp.one or e == pick):
            if not count:
                ir[in_at[0] + n_in] = p
                il[in_at[0] + n_in] = sp.loc[c]
                iv[in_at[0] + n_in] = sp.vl[e]
            n_in += 1
        else:
            if not count:
                oc[out_at[0] + n_out] = <int32_t>c
                if sp.single:
                    ov32[out_at[0] + n_out] = <float>sp.vl[e]
                else:
                    ov[out_at[0] + n_out] = sp.vl[e]
            n_out += 1
    if count:
        out_at[0] = n_out
        in_at[0] = n_in
    return bad


def rows_split(cap_ptr, cnt, cols, vals, local, double drop=0.0, bint links=False, int threads=0):
    """Compact the rows that duel_policy wrote into capacity slots (row p: ``cnt[p]``
    entries from ``cap_ptr[p]``) and split them (see :func:`thousand.kernel.rows_split`):
    entries whose column c has ``local[c] >= 0`` go to ``(in_rows, in_locs, in_vals)``
    (the row, local[c], the value), the others to the CSR rows ``(indptr, out_cols,
    out_vals)`` with int32 columns. ``local`` None: no split. ``drop > 0``: entries
    below ``drop`` are left out and ``out_vals`` is float32 (an approximate Jacobian).
    ``links``: at most one entry per row goes inside, its largest local one (the
    first of equals); the row's other local entries go to the CSR rows. The rows are
    counted, then written, on ``threads`` OpenMP threads (0: all)."""
    cdef const int64_t[::1] cp = _i64_1(cap_ptr)
    cdef const int64_t[::1] cn = _i64_1(cnt)
    cdef const int64_t[::1] cl = _i64_1(cols)
    cdef const double[::1] vl = _f64_1(vals)
    cdef bint split = local is not None
    cdef const int64_t[::1] loc = _i64_1(local if split else np.zeros(1, np.int64))
    cdef Py_ssize_t m = cn.shape[0], p
    if cp.shape[0] < m + 1:
        raise ValueError("cap_ptr needs one entry per row plus one")
    for p in range(m):
        if cn[p] < 0 or cp[p] < 0 or cp[p] + cn[p] > cl.shape[0] or cp[p] + cn[p] > vl.shape[0]:
            raise ValueError("row slots must lie inside cols/vals")
    cdef _Split sp
    sp.cp = &cp[0]
    sp.cn = &cn[0] if m else NULL
    sp.cl = &cl[0] if cl.shape[0] else NULL
    sp.vl = &vl[0] if vl.shape[0] else NULL
    sp.loc = &loc[0]
    sp.nloc = loc.shape[0]
    sp.split = split
    sp.one = links and split
    sp.drop = drop
    sp.single = drop > 0
    # row p's outer entries go to [out_at[p], out_at[p + 1]) (the CSR indptr), inner ones from in_at[p]
    indptr_a = np.zeros(m + 1, dtype=np.int64)
    in_at_a = np.zeros(m + 1, dtype=np.int64)
    cdef int64_t[::1] ip = indptr_a
    cdef int64_t[::1] ia = in_at_a
    cdef int bad = 0
    cdef int nt = threads if threads > 0 else thk_max_threads()
    if m < _SPLIT_SERIAL_ROWS:
        nt = 1
    for p in prange(m, nogil=True, schedule="static", num_threads=nt):
        if _split_row(&sp, p, True, &ip[p + 1], &ia[p + 1], NULL, NULL, NULL, NULL, NULL, NULL):
            bad = 1
    if bad:
        raise ValueError("columns must be pair indices below 2**31 (and inside local)")
    np.cumsum(indptr_a, out=indptr_a)
    np.cumsum(in_at_a, out=in_at_a)
    cdef Py_ssize_t n_out = ip[m], n_in = ia[m]
    out_cols_a = np.empty(n_out, dtype=np.int32)
    out_vals_a = np.empty(n_out, dtype=np.float32 if sp.single else np.float64)
    in_rows_a = np.empty(n_in, dtype=np.int64)
    in_locs_a = np.empty(n_in, dtype=np.int64)
    in_vals_a = np.empty(n_in)
    cdef int32_t[::1] oc = out_cols_a
    cdef double[::1] ov
    cdef float[::1] ov32
    cdef double* ovp = NULL
    cdef float* ov32p = NULL
    if n_out and sp.single:
        ov32 = out_vals_a
        ov32p = &ov32[0]
    elif n_out:
        ov = out_vals_a
        ovp = &ov[0]
    cdef int64_t[::1] ir = in_rows_a
    cdef int64_t[::1] il = in_locs_a
    cdef double[::1] iv = in_vals_a
    cdef int32_t* ocp = &oc[0] if n_out else NULL
    cdef int64_t* irp = &ir[0] if n_in else NULL
    cdef int64_t* ilp = &il[0] if n_in else NULL
    cdef double* ivp = &iv[0] if n_in else NULL
    for p in prange(m, nogil=True, schedule="static", num_threads=nt):
        _split_row(&sp, p, False, &ip[p], &ia[p], ocp, ovp, ov32p, irp, ilp, ivp)
    return indptr_a, out_cols_a, out_vals_a, in_rows_a, in_locs_a, in_vals_a
