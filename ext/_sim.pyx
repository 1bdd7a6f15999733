# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled game simulator for the built-in bots (see :mod:`thousand.simulate`).

``run`` plays whole games in a nogil loop on integer state indices: a roll
of ``n`` dice is one random number below ``faces**n`` (the ordered roll)
mapped to its roll class by a lookup table; decisions come from the bots'
float32 policy rows or from their simple rules; turn ends move the players
through the flattened plans of :class:`thousand.kernel.DuelPlans`. Every game
has its own xoshiro256** stream, so the results do not depend on the thread
count and match the pure twin :mod:`thousand._sim_pure` bit for bit.
"""

import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint64_t, int32_t, uint8_t

IMPLEMENTATION = "compiled"

cdef extern from *:
    """
    #include <stdint.h>
    typedef struct { uint64_t s0, s1, s2, s3; } sim_rng;

    static inline uint64_t sim_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

    static inline void sim_seed(sim_rng *r, uint64_t seed, uint64_t game) {
        uint64_t x = seed + game * 0xD1B54A32D192ED03ULL;
        uint64_t out[4];
        for (int i = 0; i < 4; i++) {
            x += 0x9E3779B97F4A7C15ULL;
            uint64_t z = x;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            out[i] = z ^ (z >> 31);
        }
        r->s0 = out[0]; r->s1 = out[1]; r->s2 = out[2]; r->s3 = out[3];
    }

    static inline uint64_t sim_next(sim_rng *r) {
        uint64_t res = sim_rotl(r->s1 * 5, 7) * 9;
        uint64_t t = r->s1 << 17;
        r->s2 ^= r->s0;
        r->s3 ^= r->s1;
        r->s1 ^= r->s2;
        r->s0 ^= r->s3;
        r->s2 ^= t;
        r->s3 = sim_rotl(r->s3, 45);
        return res;
    }

    static inline uint64_t sim_below(sim_rng *r, uint64_t m) {
        return (uint64_t)(((__uint128_t)sim_next(r) * m) >> 64);
    }
    """
    ctypedef struct sim_rng:
        uint64_t s0
    void sim_seed(sim_rng *r, uint64_t seed, uint64_t game) nogil
    uint64_t sim_next(sim_rng *r) nogil
    uint64_t sim_below(sim_rng *r, uint64_t m) nogil
    void sim_prefetch "__builtin_prefetch"(const void *p) nogil


cdef enum:
    MUST_ROLL = 0
    FREE = 1
    CONFIRM = 2
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
    const int64_t *ptr
    const uint8_t *sok
    const uint8_t *fok
    const int64_t *nxt
    const int64_t *after
    const uint8_t *climbed
    const int64_t *bust
    const int64_t *score
    const int64_t *overtaken
    const int64_t *pushed
    const uint8_t *on_barrel
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
    if c.fok[prow + k1] or (confirming and c.sok[prow + k1]):
        return 0
    if n == c.optused[o] and c.hot != FREE:
        return 0
    return c.sok[prow + k1]


cdef int64_t play_turn(const Ctx *c, int b, int64_t x, int64_t y, sim_rng *rng, int64_t *row_out) noexcept nogil:
    """One turn of bot b in state x against y: BUST, WIN or END (row_out = the plan row)."""
    cdef int64_t prow = c.ptr[x]
    cdef int64_t T = c.ptr[x + 1] - prow - 1
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
            if c.sok[prow + k]:
                if kind == OPTIMAL:
                    stop = (dec[imin(t, T + 1)] >> n) & 1
                elif kind == HOLD:
                    stop = t * c.unit >= c.param[b] or c.nxt[prow + k] == -1
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
                    if confirming and c.sok[prow + k1]:
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
        if c.fok[prow + k] or (confirming and c.sok[prow + k]):
            row_out[0] = prow + k
            return END
        confirming = False
        if left == 0:
            n = N
            decide = hot == FREE
            confirming = hot == CONFIRM
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
            x = c.bust[x]
        else:
            x2 = c.nxt[row]
            if x2 == -1:
                return turns * 4 + mover + 1
            if not race:
                if c.climbed[row] and c.on_barrel[y]:
                    y = c.pushed[y]
                if c.score[x] < c.score[y] and c.score[y] < c.after[row]:
                    y = c.overtaken[y]
            x = x2
        if race:
            p[0] = x
        else:
            p[mover] = x
            p[1 - mover] = y
            mover = 1 - mover
    return turns * 4


def run(const int32_t[::1] lut, const int64_t[::1] lut_off, const uint64_t[::1] lut_size,
        const uint8_t[::1] cls_instant, const int64_t[::1] opt_ptr, const int64_t[::1] opt_points,
        const int64_t[::1] opt_used, int64_t dice, int64_t hot_mode, int64_t unit,
        const int64_t[::1] ptr, const uint8_t[::1] stop_ok, const uint8_t[::1] forced_ok,
        const int64_t[::1] nxt, const int64_t[::1] after, const uint8_t[::1] climbed,
        const int64_t[::1] bust, const int64_t[::1] score, const int64_t[::1] overtaken,
        const int64_t[::1] pushed, const uint8_t[::1] on_barrel,
        int64_t start0, int64_t start1, const int64_t[::1] kinds, const int64_t[::1] params,
        const uint8_t[::1] dec0, const int64_t[::1] doff0, const float[::1] val0, const int64_t[::1] voff0,
        int64_t blind0, const uint8_t[::1] dec1, const int64_t[::1] doff1, const float[::1] val1,
        const int64_t[::1] voff1, int64_t blind1, int64_t race, int64_t games, uint64_t seed, int64_t game0, int64_t max_turns, int threads):
    """See :func:`thousand._sim_pure.run`."""
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
    c.ptr = &ptr[0]
    c.sok = &stop_ok[0]
    c.fok = &forced_ok[0]
    c.nxt = &nxt[0]
    c.after = &after[0]
    c.climbed = &climbed[0]
    c.bust = &bust[0]
    c.score = &score[0]
    c.overtaken = &overtaken[0]
    c.pushed = &pushed[0]
    c.on_barrel = &on_barrel[0]
    c.kind[0] = kinds[0]
    c.kind[1] = kinds[1]
    c.param[0] = params[0]
    c.param[1] = params[1]
    c.dec[0] = &dec0[0]
    c.dec[1] = &dec1[0]
    c.doff[0] = &doff0[0]
    c.doff[1] = &doff1[0]
    c.val[0] = &val0[0]
    c.val[1] = &val1[0]
    c.voff[0] = &voff0[0]
    c.voff[1] = &voff1[0]
    c.blind[0] = blind0
    c.blind[1] = blind1
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
