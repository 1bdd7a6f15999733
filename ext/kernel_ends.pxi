# kernel_ends.pxi: where a turn ends: the forward pass of probability mass under the DP's decisions, or under a rule's (a strategy card's)
# (included into _kernel.pyx: one compiled module, split by algorithm)

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
    :func:`thousand.kernel._pure.end_distribution`): ``(stop_p, forced_p, bust_p, win_p)``.

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
    and :func:`thousand.kernel._pure.ranked_end_distribution`): ``(stop_p, forced_p, bust_p,
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
