# kernel_turn.pxi: the turn DP: columns of opponent states in blocks, backward over the turn total, the tail by Newton's method; and the greedy policy as sparse rows
# (included into _kernel.pyx: one compiled module, split by algorithm)

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
    """Solve one turn (see :func:`thousand.kernel.turn_dp` and :func:`thousand.kernel._pure.turn_dp`).

    Returns ``(start, dstart, V, R, RC)``: ``start`` = R(0, N) per column;
    ``dstart`` its derivative with respect to the bust value (None unless
    ``grad``); the tables V, R (T+2, N+1, K) and RC (T+2, K) (None unless ``full``).
    """
    return _turn(rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad, full, False)[:5]


def turn_ends(Rolls rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad):
    """Solve one turn and say how it ends under its decisions (see
    :func:`thousand.kernel.turn_ends` and :func:`thousand.kernel._pure.turn_ends`).

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
