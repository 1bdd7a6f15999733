# kernel_sweeps.pxi: sparse rows and the sweeps of policy iteration: rows minus a vector, the bust links, the level and pattern sweeps
# (included into _kernel.pyx: one compiled module, split by algorithm)

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
    reference is :class:`thousand.kernel._pure.LevelSweep`). ``levels``: per level, top down,
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
    is :class:`thousand.kernel._pure.PatternSweep`; :meth:`thousand.kernel.Backend.pattern_sweep`
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
