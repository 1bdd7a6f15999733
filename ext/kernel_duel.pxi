# kernel_duel.pxi: the duel's passes: every mover's turn at a level against its opponents, their ends read from the values above
# (included into _kernel.pyx: one compiled module, split by algorithm)

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
    :func:`thousand.kernel.duel_level`; the reference is :func:`thousand.kernel._pure.duel_level`).

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
    the reference is :func:`thousand.kernel._pure.duel_frames`): frame f is one turn DP over the
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
    :func:`thousand.kernel._pure.duel_policy`): pair p = out_ptr[j] + k gets ``out_c[p]`` and
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
