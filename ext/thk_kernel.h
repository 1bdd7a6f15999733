/* C helpers of the compiled kernel (ext/_kernel.pyx): OpenMP's thread count and the
   innermost loops of the turn DP. */
#ifndef THK_KERNEL_H
#define THK_KERNEL_H

#include <Python.h>   /* Py_ssize_t */

/* OpenMP's thread count when the build has it, else 1 (prange then runs serially) */
#ifdef _OPENMP
#include <omp.h>
static int thk_max_threads(void) { return omp_get_max_threads(); }
#else
static int thk_max_threads(void) { return 1; }
#endif

/* The innermost loops of the turn DP: over the contiguous columns of a block.
   On x86-64 Linux with GCC they are compiled twice, for AVX2 and for the
   baseline, and the loader picks one (target_clones). Neither uses FMA, so
   both give the same numbers. */
#include <string.h>
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && __GNUC__ >= 8
#define THK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define THK_CLONES
#endif
#if defined(_MSC_VER)
#define THK_R __restrict
#else
#define THK_R restrict
#endif

/* out += p * src */
THK_CLONES static void thk_axpy(double *THK_R out, double p, const double *THK_R src,
                                Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) out[k] += p * src[k];
}

/* out += p0 s0 + p1 s1 + p2 s2 + p3 s3, added one after the other: the same
   rounding as four axpy passes with a quarter of the loads and stores of out */
THK_CLONES static void thk_acc4(double *THK_R out, const double *s0, const double *s1,
                                const double *s2, const double *s3, double p0, double p1,
                                double p2, double p3, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) {
        double o = out[k];
        o += p0 * s0[k];
        o += p1 * s1[k];
        o += p2 * s2[k];
        o += p3 * s3[k];
        out[k] = o;
    }
}

/* tmp = max(tmp, src) */
THK_CLONES static void thk_vmax(double *THK_R tmp, const double *THK_R src, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) {
        double v = src[k], b = tmp[k];
        tmp[k] = v > b ? v : b;
    }
}

/* tmp = max(tmp, src) and dtmp follows the first maximum (replaced only where
   src > tmp); gcc does not if-convert the two selects, hence vector extensions */
#if defined(__GNUC__) || defined(__clang__)
typedef double thk_v4d __attribute__((vector_size(32)));
typedef long long thk_v4l __attribute__((vector_size(32)));
#endif
THK_CLONES static void thk_max2(double *THK_R tmp, double *THK_R dtmp,
                                const double *THK_R src, const double *THK_R dsrc,
                                Py_ssize_t n) {
    Py_ssize_t k = 0;
#if defined(__GNUC__) || defined(__clang__)
    for (; k + 4 <= n; k += 4) {
        thk_v4d v, b, dv, db;
        thk_v4l m, r, q;
        memcpy(&v, src + k, sizeof v);
        memcpy(&b, tmp + k, sizeof b);
        memcpy(&dv, dsrc + k, sizeof dv);
        memcpy(&db, dtmp + k, sizeof db);
        m = (thk_v4l)(v > b);
        r = ((thk_v4l)v & m) | ((thk_v4l)b & ~m);
        q = ((thk_v4l)dv & m) | ((thk_v4l)db & ~m);
        memcpy(tmp + k, &r, sizeof r);
        memcpy(dtmp + k, &q, sizeof q);
    }
#endif
    for (; k < n; k++) {
        double v = src[k];
        if (v > tmp[k]) { tmp[k] = v; dtmp[k] = dsrc[k]; }
    }
}

/* top = max(top, src) and pick = idx where src > top: the first option attaining the
   maximum keeps its index (the turn DP's tie rule), as thk_max2 */
THK_CLONES static void thk_argmax(double *THK_R top, Py_ssize_t *THK_R pick,
                                  const double *THK_R src, Py_ssize_t idx, Py_ssize_t n) {
    Py_ssize_t k = 0;
#if defined(__GNUC__) || defined(__clang__)
    if (sizeof(Py_ssize_t) == sizeof(long long)) {
        thk_v4l iv = {idx, idx, idx, idx};
        for (; k + 4 <= n; k += 4) {
            thk_v4d v, b;
            thk_v4l m, r, p, q;
            memcpy(&v, src + k, sizeof v);
            memcpy(&b, top + k, sizeof b);
            memcpy(&p, pick + k, sizeof p);
            m = (thk_v4l)(v > b);
            r = ((thk_v4l)v & m) | ((thk_v4l)b & ~m);
            q = (iv & m) | (p & ~m);
            memcpy(top + k, &r, sizeof r);
            memcpy(pick + k, &q, sizeof q);
        }
    }
#endif
    for (; k < n; k++) {
        double v = src[k];
        if (v > top[k]) { top[k] = v; pick[k] = idx; }
    }
}

/* v = s where s >= r (banking wins ties), else r; dv = 0 there, else dr */
THK_CLONES static void thk_settle(double *THK_R v, const double *THK_R r,
                                  const double *THK_R s, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) {
        double a = s[k], b = r[k];
        v[k] = a >= b ? a : b;
    }
}
THK_CLONES static void thk_settle_d(double *THK_R dv, const double *THK_R dr,
                                    const double *THK_R s, const double *THK_R r,
                                    Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) {
        double d = dr[k];
        dv[k] = s[k] >= r[k] ? 0.0 : d;
    }
}

/* The policy's forward pass routes the mass arriving at a total: where the solved turn
   banks (a == s: its value there is the bank's), into et; else on, into rm. Adding the
   mass or +0.0 (masses are >= 0) gives the numbers the branch gives. */
THK_CLONES static void thk_route(double *THK_R et, double *THK_R rm, const double *THK_R row,
                                 const double *THK_R a, const double *THK_R s, Py_ssize_t n) {
    Py_ssize_t k = 0;
#if defined(__GNUC__) || defined(__clang__)
    for (; k + 4 <= n; k += 4) {
        thk_v4d av, sv, rv, ev, mv;
        thk_v4l m, in, out;
        memcpy(&av, a + k, sizeof av);
        memcpy(&sv, s + k, sizeof sv);
        memcpy(&rv, row + k, sizeof rv);
        memcpy(&ev, et + k, sizeof ev);
        memcpy(&mv, rm + k, sizeof mv);
        m = (thk_v4l)(av == sv);
        in = (thk_v4l)rv & m;
        out = (thk_v4l)rv & ~m;
        ev += (thk_v4d)in;
        mv += (thk_v4d)out;
        memcpy(et + k, &ev, sizeof ev);
        memcpy(rm + k, &mv, sizeof mv);
    }
#endif
    for (; k < n; k++) {
        if (a[k] == s[k]) et[k] += row[k];
        else rm[k] += row[k];
    }
}

#endif /* THK_KERNEL_H */
