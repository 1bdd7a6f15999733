# kernel_rolls.pxi: roll classes: every roll of n dice grouped by the set-asides it offers (the twin: :func:`thousand.kernel._pure.roll_classes`)
# (included into _kernel.pyx: one compiled module, split by algorithm)

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
    """Roll classes of ``n`` dice (see :func:`thousand.kernel._pure.roll_classes`).

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
