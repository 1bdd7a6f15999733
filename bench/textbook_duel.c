/* The textbook duel solver, in C: the baseline of bench/bench_duel.py --baseline.
 *
 * In-place Gauss-Seidel sweeps over all pairs (x, y) in index order, each value
 * replaced by one scalar turn DP of the mover x against y at the current values,
 * from P = 1/2 until no value moves by more than tol:
 *
 *   P(x, y) = R(0, N),  R(t, k) = Pbust(k) Z + sum_c p_c A(min(t + x_c, T), k - u_c)
 *   A(t, 0) = R(t, N)   (hot dice must be rolled)      A(t, m) = V(t, m)
 *   V(t, k) = max(stop(t), R(t, k)) where banking at t is allowed, else R(t, k)
 *   stop(t) = 1 if banking t wins, else 1 - P(y, next(t));   Z = 1 - P(y, bust(x))
 *
 * with T the mover's horizon (banking at T wins), so that at T the only cycle is
 * hot dice: R(T, N) = (p_some + Pbust(N) Z) / (1 - p_all) with p_all the chance
 * that a roll of N dice uses them all.
 *
 * It covers the rulesets bench_duel.py exports to it (keep = all, hot dice must be
 * rolled, no forced ends, no instant wins, no equal_turns: plain); the exporter
 * checks that. Input (little-endian, written by bench_duel.py):
 *   int64 n, N, n_class_total, n_ends
 *   int64 cls_ptr[N + 2]              classes of k dice: cls_ptr[k] .. cls_ptr[k + 1]
 *   double prob[n_class_total]        chance of each class
 *   int64 points[n_class_total]       units its set-aside scores (-1: a bust)
 *   int64 used[n_class_total]         dice it uses
 *   int64 ptr[n + 1]                  state i's totals 0..T_i are ptr[i] .. ptr[i + 1] - 1
 *   uint8 stop_ok[n_ends]             banking allowed at that total
 *   int64 next[n_ends]                the state a bank leads to, -1 a win
 *   int64 bust[n]                     the state a bust leads to
 * Usage: textbook_duel INPUT OUTPUT TOL   (OUTPUT: the n x n values P[x * n + y], double)
 * Prints: sweeps, change, cpu seconds, wall seconds.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *read_n(FILE *f, size_t size, size_t count) {
    void *p = malloc(size * (count ? count : 1));
    if (!p || fread(p, size, count, f) != count) {
        fprintf(stderr, "textbook_duel: short input\n");
        exit(2);
    }
    return p;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: textbook_duel INPUT OUTPUT TOL\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    int64_t *hdr = read_n(f, sizeof(int64_t), 4);
    int64_t n = hdr[0], N = hdr[1], nc = hdr[2], ne = hdr[3];
    int64_t *cls_ptr = read_n(f, sizeof(int64_t), (size_t)N + 2);
    double *prob = read_n(f, sizeof(double), (size_t)nc);
    int64_t *points = read_n(f, sizeof(int64_t), (size_t)nc);
    int64_t *used = read_n(f, sizeof(int64_t), (size_t)nc);
    int64_t *ptr = read_n(f, sizeof(int64_t), (size_t)n + 1);
    uint8_t *stop_ok = read_n(f, sizeof(uint8_t), (size_t)ne);
    int64_t *next = read_n(f, sizeof(int64_t), (size_t)ne);
    int64_t *bust = read_n(f, sizeof(int64_t), (size_t)n);
    fclose(f);
    double tol = atof(argv[3]);

    /* per k dice: the bust chance; for k = N, the chance a roll uses all dice or leaves some */
    double *pbust = calloc((size_t)N + 1, sizeof(double));
    double p_all = 0.0, some = 0.0;   /* N dice: all used, some left */
    for (int64_t k = 1; k <= N; k++)
        for (int64_t c = cls_ptr[k]; c < cls_ptr[k + 1]; c++) {
            if (points[c] < 0)
                pbust[k] += prob[c];
            else if (k == N && used[c] == N)
                p_all += prob[c];
            else if (k == N)
                some += prob[c];
        }
    int64_t Tmax = 0;
    for (int64_t i = 0; i < n; i++)
        if (ptr[i + 1] - ptr[i] - 1 > Tmax)
            Tmax = ptr[i + 1] - ptr[i] - 1;
    double *P = malloc(sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < n * n; i++)
        P[i] = 0.5;
    double *V = malloc(sizeof(double) * (size_t)((Tmax + 1) * (N + 1)));
    double *R = malloc(sizeof(double) * (size_t)((Tmax + 1) * (N + 1)));

    clock_t c0 = clock();
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    int64_t sweeps = 0;
    double change = 1.0;
    while (change > tol && sweeps < 100000) {
        sweeps++;
        change = 0.0;
        for (int64_t x = 0; x < n; x++) {
            int64_t T = ptr[x + 1] - ptr[x] - 1;
            const uint8_t *sok = stop_ok + ptr[x];
            const int64_t *nx = next + ptr[x];
            for (int64_t y = 0; y < n; y++) {
                double Z = 1.0 - P[y * n + bust[x]];
                /* at T: banking wins; the forced roll of hot dice is the only cycle */
                for (int64_t k = 1; k <= N; k++)
                    V[T * (N + 1) + k] = 1.0;
                R[T * (N + 1) + N] = (some + pbust[N] * Z) / (1.0 - p_all);
                for (int64_t t = T - 1; t >= 0; t--) {
                    double stop = !sok[t] ? 0.0 : nx[t] == -1 ? 1.0 : 1.0 - P[y * n + nx[t]];
                    for (int64_t k = 1; k <= N; k++) {
                        double r = pbust[k] * Z;
                        for (int64_t c = cls_ptr[k]; c < cls_ptr[k + 1]; c++) {
                            if (points[c] < 0)
                                continue;
                            int64_t t2 = t + points[c];
                            if (t2 > T)
                                t2 = T;
                            int64_t left = k - used[c];
                            r += prob[c] * (left ? V[t2 * (N + 1) + left] : R[t2 * (N + 1) + N]);
                        }
                        R[t * (N + 1) + k] = r;
                        V[t * (N + 1) + k] = (sok[t] && stop > r) ? stop : r;
                    }
                }
                double v = R[N];
                double dv = fabs(v - P[x * n + y]);
                if (dv > change)
                    change = dv;
                P[x * n + y] = v;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    double wall = (double)(w1.tv_sec - w0.tv_sec) + 1e-9 * (double)(w1.tv_nsec - w0.tv_nsec);
    FILE *o = fopen(argv[2], "wb");
    if (!o || fwrite(P, sizeof(double), (size_t)(n * n), o) != (size_t)(n * n)) {
        perror(argv[2]);
        return 2;
    }
    fclose(o);
    printf("%lld %.3e %.6f %.6f\n", (long long)sweeps, change, cpu, wall);
    return 0;
}
