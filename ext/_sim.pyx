# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled game simulator for the built-in bots (see :mod:`thousand.analysis.simulate`).

``run`` plays whole games in a nogil loop on integer state indices: a roll
of ``n`` dice is one random number below ``faces**n`` (the ordered roll)
mapped to its roll class by a lookup table; decisions come from the bots'
float32 policy rows or from their simple rules; turn ends move the players
through the flattened plans of :class:`thousand.kernel.DuelPlans`. Every game
has its own xoshiro256** stream, so the results do not depend on the thread
count and match the pure twin :mod:`thousand.kernel._sim_pure` bit for bit.
"""

import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint64_t, int32_t, uint8_t

from thk cimport HOT_CONFIRM, HOT_FREE, HOT_MUST_ROLL, PlanView, plan_view

IMPLEMENTATION = "compiled"

cdef extern from "thk_rng.h":
    ctypedef struct sim_rng:
        uint64_t s0
    void sim_seed(sim_rng *r, uint64_t seed, uint64_t game) nogil
    uint64_t sim_next(sim_rng *r) nogil
    uint64_t sim_below(sim_rng *r, uint64_t m) nogil
    void sim_prefetch "__builtin_prefetch"(const void *p) nogil


cdef enum:
    OPTIMAL = 0
    HOLD = 1
    RANDOM = 2
    BUST = 0
    END = 1
    WIN = 2


ctypedef struct Ctx:
    const int32_t *lut
    const int64_t *lut_off
    const uint64_t *lut_size
    const uint8_t *inst
    const int64_t *optp
    const int64_t *optpts
    const int64_t *optused
    int64_t N
    int64_t hot
    int64_t unit
    PlanView plan               # every state's turn ends (thk.pxd)
    int64_t kind[2]
    int64_t param[2]
    const uint8_t *dec[2]
    const int64_t *doff[2]
    const float *val[2]
    const int64_t *voff[2]
    int64_t blind[2]
    int64_t W


cdef inline int64_t imin(int64_t a, int64_t b) noexcept nogil:
    return a if a < b else b


cdef inline int64_t random_stops(const Ctx *c, int64_t o, int64_t t, int64_t n, int64_t T, int64_t prow,
                                bint confirming) noexcept nogil:
    """1 if setting option o aside leaves the choice to bank (a second legal action), else 0."""
    cdef int64_t k1 = imin(t + c.optpts[o], T)
    if c.plan.forced_ok[prow + k1] or (confirming and c.plan.stop_ok[prow + k1]):
        return 0
    if n == c.optused[o] and c.hot != HOT_FREE:
        return 0
    return c.plan.stop_ok[prow + k1]


cdef int64_t play_turn(const Ctx *c, int b, int64_t x, int64_t y, sim_rng *rng, int64_t *row_out) noexcept nogil:
    """One turn of bot b in state x against y: BUST, WIN or END (row_out = the plan row)."""
    cdef int64_t prow = c.plan.ptr[x]
    cdef int64_t T = c.plan.ptr[x + 1] - prow - 1
    cdef int64_t kind = c.kind[b]
    cdef const uint8_t *dec = c.dec[b]
    cdef const float *val = c.val[b]
    cdef int64_t W = c.W, N = c.N, hot = c.hot
    cdef int64_t t = 0, n = N, k, k1, t1, left, o, o0, o1, j, cls, bp, bu
    cdef bint decide = False, confirming = False, stop, have, want_stop = False
    cdef int64_t cnt, pick
    cdef const float *r
    cdef float a, best
    if kind == OPTIMAL:
        dec = dec + c.doff[b][x]
        val = val + c.voff[b][x]
        if not c.blind[b]:
            dec = dec + y * (T + 2)
            val = val + y * (T + 2) * W
        # the decision rows are needed after the first roll: fetch them meanwhile
        for k in range(0, T + 2, 64):
            sim_prefetch(dec + k)
    while True:
        if decide:
            k = imin(t, T)
            if c.plan.stop_ok[prow + k]:
                if kind == OPTIMAL:
                    stop = (dec[imin(t, T + 1)] >> n) & 1
                elif kind == HOLD:
                    stop = t * c.unit >= c.param[b] or c.plan.next[prow + k] == -1
                else:
                    stop = want_stop
                if stop:
                    row_out[0] = prow + k
                    return END
        cls = c.lut[c.lut_off[n] + <int64_t>sim_below(rng, c.lut_size[n])]
        if c.inst[cls]:
            return WIN
        o0 = c.optp[cls]
        o1 = c.optp[cls + 1]
        if o0 == o1:
            return BUST
        j = o0
        if kind == RANDOM:
            # uniform over the legal actions: each set-aside, then roll, or stop where allowed
            cnt = 0
            for o in range(o0, o1):
                cnt += 1 + random_stops(c, o, t, n, T, prow, confirming)
            pick = <int64_t>sim_below(rng, <uint64_t>cnt) if cnt > 1 else 0
            for o in range(o0, o1):
                left = 1 + random_stops(c, o, t, n, T, prow, confirming)
                if pick < left:
                    j = o
                    want_stop = pick == 1
                    break
                pick -= left
        elif o1 - o0 > 1:
            if kind == OPTIMAL:
                have = False
                best = 0
                for o in range(o0, o1):
                    t1 = t + c.optpts[o]
                    k1 = imin(t1, T)
                    r = val + imin(t1, T + 1) * W
                    if confirming and c.plan.stop_ok[prow + k1]:
                        a = r[0]
                    else:
                        left = n - c.optused[o]
                        a = r[left if left else N + 1]
                    if not have or a > best:
                        have = True
                        best = a
                        j = o
            else:
                bp = -1
                bu = 0
                for o in range(o0, o1):
                    if c.optpts[o] > bp or (c.optpts[o] == bp and c.optused[o] < bu):
                        bp = c.optpts[o]
                        bu = c.optused[o]
                        j = o
        t += c.optpts[j]
        left = n - c.optused[j]
        k = imin(t, T)
        if c.plan.forced_ok[prow + k] or (confirming and c.plan.stop_ok[prow + k]):
            row_out[0] = prow + k
            return END
        confirming = False
        if left == 0:
            n = N
            decide = hot == HOT_FREE
            confirming = hot == HOT_CONFIRM
        else:
            n = left
            decide = True


cdef int64_t play_game(const Ctx *c, int64_t start0, int64_t start1, bint race, uint64_t seed, uint64_t g,
                       int64_t max_turns) noexcept nogil:
    """One game: turns * 4 + winner + 1 (winner 0/1, or -1 if unfinished after max_turns)."""
    cdef sim_rng rng
    cdef int64_t p[2]
    cdef int64_t mover = 0, turns = 0, x, y, x2, row = 0, what
    sim_seed(&rng, seed, g)
    p[0] = start0
    p[1] = start1
    while turns < max_turns:
        turns += 1
        x = p[mover]
        y = p[1 - mover]
        what = play_turn(c, <int>mover, x, y, &rng, &row)
        if what == WIN:
            return turns * 4 + mover + 1
        if what == BUST:
            x = c.plan.bust[x]
        else:
            x2 = c.plan.next[row]
            if x2 == -1:
                return turns * 4 + mover + 1
            if not race:
                if c.plan.climbed[row] and c.plan.on_barrel[y]:
                    y = c.plan.pushed[y]
                if c.plan.score[x] < c.plan.score[y] and c.plan.score[y] < c.plan.after[row]:
                    y = c.plan.overtaken[y]
            x = x2
        if race:
            p[0] = x
        else:
            p[mover] = x
            p[1 - mover] = y
            mover = 1 - mover
    return turns * 4


def run(rolls, lookup, plans, int64_t unit, int64_t start0, int64_t start1, bots, int64_t race, int64_t games,
        uint64_t seed, int64_t game0, int64_t max_turns, int threads):
    """See :func:`thousand.kernel._sim_pure.run`."""
    cdef const int32_t[::1] lut = lookup[0]
    cdef const int64_t[::1] lut_off = lookup[1]
    cdef const uint64_t[::1] lut_size = lookup[2]
    cdef const uint8_t[::1] cls_instant = rolls.cls_instant
    cdef const int64_t[::1] opt_ptr = rolls.opt_ptr
    cdef const int64_t[::1] opt_points = rolls.opt_points
    cdef const int64_t[::1] opt_used = rolls.opt_used
    cdef int64_t dice = rolls.dice, hot_mode = rolls.hot_mode
    b0, b1 = bots
    cdef const uint8_t[::1] dec0 = b0.dec
    cdef const uint8_t[::1] dec1 = b1.dec
    cdef const int64_t[::1] doff0 = b0.doff
    cdef const int64_t[::1] doff1 = b1.doff
    cdef const float[::1] val0 = b0.val
    cdef const float[::1] val1 = b1.val
    cdef const int64_t[::1] voff0 = b0.voff
    cdef const int64_t[::1] voff1 = b1.voff
    cdef Ctx c
    c.lut = &lut[0]
    c.lut_off = &lut_off[0]
    c.lut_size = &lut_size[0]
    c.inst = &cls_instant[0]
    c.optp = &opt_ptr[0]
    c.optpts = &opt_points[0] if opt_points.shape[0] else NULL
    c.optused = &opt_used[0] if opt_used.shape[0] else NULL
    c.N = dice
    c.hot = hot_mode
    c.unit = unit
    plan_view(&c.plan, plans)
    c.kind[0] = b0.kind
    c.kind[1] = b1.kind
    c.param[0] = b0.param
    c.param[1] = b1.param
    c.dec[0] = &dec0[0]
    c.dec[1] = &dec1[0]
    c.doff[0] = &doff0[0]
    c.doff[1] = &doff1[0]
    c.val[0] = &val0[0]
    c.val[1] = &val1[0]
    c.voff[0] = &voff0[0]
    c.voff[1] = &voff1[0]
    c.blind[0] = b0.blind
    c.blind[1] = b1.blind
    c.W = dice + 2
    cdef int64_t g, w, tr = 0, res
    cdef int64_t wins0 = 0, wins1 = 0, unf = 0, s1 = 0, s2 = 0
    cdef bint is_race = race != 0
    if threads <= 0:
        import os
        threads = os.cpu_count() or 1
    # one loop for any thread count: Cython turns the += below into OpenMP reductions
    for g in prange(games, nogil=True, num_threads=threads, schedule="static", chunksize=256):
        res = play_game(&c, start0, start1, is_race, seed, <uint64_t>(game0 + g), max_turns)
        w = (res & 3) - 1
        tr = res >> 2
        if w == 0:
            wins0 += 1
        elif w == 1:
            wins1 += 1
        else:
            unf += 1
        if w >= 0:
            s1 += tr
            s2 += tr * tr
    return wins0, wins1, unf, s1, s2
