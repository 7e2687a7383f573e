/*
 * ok_sketch.h -- the small dense linear algebra of a Frequent-Directions sketch (Liberty, KDD 2013;
 * Ghashami et al., SIAM J. Comput. 2016) as Sketched Online Newton uses it (Luo, Agarwal,
 * Cesa-Bianchi & Langford, NeurIPS 2016): the sketch S holds k <= 2m rows of length F, its Gram
 * matrix G = S S^T (k x k) and the Cholesky factor L of M = alpha I + G are kept as rows arrive,
 * and a full buffer is shrunk through the eigenvectors of the k x k matrix G (never an SVD of S).
 *
 * Every routine runs a fixed sequence of operations (no pivoting by value, no early exits other
 * than the QL iteration's convergence test, itself a fixed function of the data), so the results
 * are the same bits on every run; they are small (k <= 2m, m of the order of tens) and serial.
 * Matrices are row-major with a leading dimension ld.
 */
#ifndef OK_SKETCH_H
#define OK_SKETCH_H

#include <math.h>
#include <string.h>

#include "ok_vmath.h"   /* OK_MULTI, OK_MULTI_W: the eigensolver and recombination per SIMD level */

/* Append row k (0-based) to the Cholesky factor L of a k x k matrix, making it the factor of the
 * (k + 1) x (k + 1) matrix with new off-diagonal row b[0..k) and diagonal d.  Returns 0, or -1 if
 * the new pivot is not positive (the matrix is not positive definite: L unchanged). */
static inline int ok_chol_append(double *L, int ld, int k, const double *b, double d) {
    double s = d, p;
    int i, j;
    for (j = 0; j < k; j++) {
        double v = b[j];
        for (i = 0; i < j; i++) v -= L[k * ld + i] * L[j * ld + i];
        v /= L[j * ld + j];
        L[k * ld + j] = v;
        s -= v * v;
    }
    if (!(s > 0.0)) return -1;
    p = sqrt(s);
    L[k * ld + k] = p;
    return 0;
}

/* Solve L L^T c = u (L lower triangular k x k); c may alias u. */
static inline void ok_chol_solve(const double *L, int ld, int k, const double *u, double *c) {
    int i, j;
    for (i = 0; i < k; i++) {                       /* L y = u */
        double v = u[i];
        for (j = 0; j < i; j++) v -= L[i * ld + j] * c[j];
        c[i] = v / L[i * ld + i];
    }
    for (i = k - 1; i >= 0; i--) {                  /* L^T c = y */
        double v = c[i];
        for (j = i + 1; j < k; j++) v -= L[j * ld + i] * c[j];
        c[i] = v / L[i * ld + i];
    }
}

/* sqrt(a^2 + b^2) without overflow or harmful underflow: the plain formula when it is safely in
 * range (the usual case), else the scaled form.  A fixed function of (a, b). */
static inline double ok_hypot(double a, double b) {
    double r = sqrt(a * a + b * b);
    if (!(r > 1e-150 && r < 1e150)) {
        double x = fabs(a), y = fabs(b), t;
        if (x < y) { t = x; x = y; y = t; }
        if (!(x > 0.0)) return x == 0.0 ? 0.0 : x + y;   /* 0, or NaN */
        t = y / x;
        r = x * sqrt(1.0 + t * t);
    }
    return r;
}

/* sum_k a[k] b[k] by ok_vmath.h's dot body (OK_DOT_BODY: sixteen partial sums in a fixed tree,
 * the same bits at every SIMD level), inlined into the eigensolver's per-level bodies: its dots are
 * short (n <= 2m), where ok_dot's run-time dispatch would cost as much as the sum. */
static inline __attribute__((always_inline)) double ok_dot_inl_(const double *a, const double *b, int n) {
    OK_DOT_BODY
}

/* Eigen-decomposition of the symmetric n x n matrix A (destroyed): eigenvalues in w, in
 * decreasing order, and the matching unit eigenvectors in the columns of V (V[r * ld + j] is
 * component r of vector j); order[0..n) and tmp[0..n) are scratch (order ends as the permutation
 * that sorted the eigenvalues).  A and V must not overlap.
 *
 * Householder tridiagonalisation then the QL algorithm with implicit Wilkinson shifts (EISPACK
 * tred2 / tql2, as in JAMA's EigenvalueDecomposition), of the order of LAPACK's 9 n^3 for the
 * eigenvalues and vectors, where cyclic Jacobi costs ~3 n^3 multiply-adds per sweep and several
 * sweeps.
 * Only the upper triangle of A is read (A[i * ld + j], j >= i).  The transformations are
 * accumulated in A held transposed (row j of A ends as eigenvector j before sorting), so every
 * inner loop -- the Householder updates, their accumulation and the QL rotations -- runs along
 * contiguous rows.  The QL iteration stops on each eigenvalue when its subdiagonal element is at
 * most 2^-52 of the largest |d| + |e| seen, or after 64 iterations (the value reached is kept);
 * with a NaN or infinite input every test fails or passes at once: NaN results, never a hang.
 * Deterministic: a fixed sequence of operations for given input bits (serial, no value-dependent
 * pivoting, no threads), so the same bits on every run.  The stable sort keeps equal eigenvalues
 * in the order QL produced them.  Compiled once per SIMD level (OK_MULTI of ok_vmath.h): the
 * compiler vectorises the row loops without reassociating (the dot products' four partial sums
 * are explicit: OK_DOT_BODY) or contracting (-ffp-contract=off), so every level gives the same bits.
 * Scratch: none beyond order and tmp (SON's ework: A and V, 2m x 2m each, then w and tmp). */
static inline __attribute__((always_inline)) void ok_sym_eig_body_(double *A, int n, int ld, double *w, double *V,
                                                                    int *order, double *tmp) {
    double *d = w, *e = tmp;
    int i, j, k, l, m, iter;
    if (n <= 0) return;
#define OK_T(r, c) A[(r) * ld + (c)]
    /* --- tred2 on T = A: T(j, k) stands for JAMA's V[k][j] --- */
    for (j = 0; j < n; j++) d[j] = OK_T(j, n - 1);
    for (i = n - 1; i > 0; i--) {
        double scale = 0.0, h = 0.0, f, g, hh;
        for (k = 0; k < i; k++) scale += fabs(d[k]);
        if (scale == 0.0) {
            e[i] = d[i - 1];
            for (j = 0; j < i; j++) {
                d[j] = OK_T(j, i - 1);
                OK_T(j, i) = 0.0;
                OK_T(i, j) = 0.0;
            }
        } else {
            for (k = 0; k < i; k++) {               /* the Householder vector */
                d[k] /= scale;
                h += d[k] * d[k];
            }
            f = d[i - 1];
            g = sqrt(h);
            if (f > 0.0) g = -g;
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            for (j = 0; j < i; j++) e[j] = 0.0;
            for (j = 0; j < i; j++) {               /* e = A u (upper triangle, by rows) */
                double *tj = A + j * ld;
                f = d[j];
                OK_T(i, j) = f;
                for (k = j + 1; k < i; k++) e[k] += tj[k] * f;
                e[j] += tj[j] * f + ok_dot_inl_(tj + j + 1, d + j + 1, i - j - 1);
            }
            f = 0.0;
            for (j = 0; j < i; j++) {
                e[j] /= h;
                f += e[j] * d[j];
            }
            hh = f / (h + h);
            for (j = 0; j < i; j++) e[j] -= hh * d[j];
            for (j = 0; j < i; j++) {               /* A -= u p^T + p u^T */
                double *tj = A + j * ld;
                f = d[j];
                g = e[j];
                for (k = j; k < i; k++) tj[k] -= f * e[k] + g * d[k];
                d[j] = OK_T(j, i - 1);
                OK_T(j, i) = 0.0;
            }
        }
        d[i] = h;
    }
    for (i = 0; i < n - 1; i++) {                   /* accumulate the transformations */
        double h = d[i + 1];
        double *ti1 = A + (i + 1) * ld;
        OK_T(i, n - 1) = OK_T(i, i);
        OK_T(i, i) = 1.0;
        if (h != 0.0) {
            for (k = 0; k <= i; k++) d[k] = ti1[k] / h;
            for (j = 0; j <= i; j++) {
                double *tj = A + j * ld, g = ok_dot_inl_(ti1, tj, i + 1);
                for (k = 0; k <= i; k++) tj[k] -= g * d[k];
            }
        }
        for (k = 0; k <= i; k++) ti1[k] = 0.0;
    }
    for (j = 0; j < n; j++) {
        d[j] = OK_T(j, n - 1);
        OK_T(j, n - 1) = 0.0;
    }
    OK_T(n - 1, n - 1) = 1.0;
    /* --- tql2: d the diagonal, e the subdiagonal (e[i] couples i and i + 1) --- */
    for (i = 1; i < n; i++) e[i - 1] = e[i];
    e[n - 1] = 0.0;
    {
        const double eps = 2.220446049250313e-16;   /* 2^-52 */
        double f = 0.0, tst1 = 0.0;
        for (l = 0; l < n; l++) {
            double t = fabs(d[l]) + fabs(e[l]);
            if (t > tst1) tst1 = t;
            for (m = l; m < n - 1; m++)             /* e[n - 1] = 0: m stops at n - 1 at worst */
                if (fabs(e[m]) <= eps * tst1) break;
            if (m > l) {
                for (iter = 0; iter < 64; iter++) {
                    double g = d[l], p, r, h, dl1, c = 1.0, c2 = 1.0, c3 = 1.0, el1 = e[l + 1], s = 0.0, s2 = 0.0;
                    p = (d[l + 1] - g) / (2.0 * e[l]);   /* the implicit (Wilkinson) shift */
                    r = ok_hypot(p, 1.0);
                    if (p < 0.0) r = -r;
                    d[l] = e[l] / (p + r);
                    d[l + 1] = e[l] * (p + r);
                    dl1 = d[l + 1];
                    h = g - d[l];
                    for (i = l + 2; i < n; i++) d[i] -= h;
                    f += h;
                    p = d[m];
                    for (i = m - 1; i >= l; i--) {  /* implicit QL sweep */
                        double *ti = A + i * ld, *ti1 = ti + ld;
                        c3 = c2;
                        c2 = c;
                        s2 = s;
                        g = c * e[i];
                        h = c * p;
                        r = ok_hypot(p, e[i]);
                        e[i + 1] = s * r;
                        s = e[i] / r;
                        c = p / r;
                        p = c * d[i] - s * g;
                        d[i + 1] = h + s * (c * g + s * d[i]);
                        for (k = 0; k < n; k++) {   /* rotate eigenvectors i, i + 1 (rows of A) */
                            double a = ti1[k], b = ti[k];
                            ti1[k] = s * b + c * a;
                            ti[k] = c * b - s * a;
                        }
                    }
                    p = -s * s2 * c3 * el1 * e[l] / dl1;
                    e[l] = s * p;
                    d[l] = c * p;
                    if (!(fabs(e[l]) > eps * tst1)) break;
                }
            }
            d[l] += f;
            e[l] = 0.0;
        }
    }
    /* --- sort decreasing (stable), eigenvector j to column j of V --- */
    for (i = 0; i < n; i++) order[i] = i;
    for (i = 1; i < n; i++) {
        int o = order[i];
        for (j = i; j > 0 && d[order[j - 1]] < d[o]; j--) order[j] = order[j - 1];
        order[j] = o;
    }
    for (j = 0; j < n; j++) tmp[j] = d[order[j]];
    memcpy(w, tmp, (size_t)n * sizeof(double));
    for (j = 0; j < n; j++) {
        const double *tj = A + order[j] * ld;
        for (k = 0; k < n; k++) V[k * ld + j] = tj[k];
    }
#undef OK_T
}
OK_MULTI(void, ok_sym_eig, (double *A, int n, int ld, double *w, double *V, int *order, double *tmp),
         (A, n, ld, w, V, order, tmp), ok_sym_eig_body_(A, n, ld, w, V, order, tmp);)

/* Frequent Directions' recombination: R[i, 0:F] = sum_{r < n} C[i * ldc + r] S[r, 0:F] for
 * i < kept (S and R row-major with rows of F; no overlap).  Each output is the chain
 * 0 + S[0, j] c_0 + S[1, j] c_1 + ... (one multiply, one add per term, r increasing): the bits of
 * the ok_axpy sequence, at every SIMD level.  Blocked: for each 32 columns (n x 256 bytes of S,
 * in L1 for n up to ~100), 3 output rows x 4 vectors of columns stay in registers while the n
 * rows stream past, so S comes from L2 once and each output is written once (ok_project, one
 * output row a pass, reads all of S from L2 for every output row: ~2x slower here). */
#define OK_FD_BLOCK 32
#define OK_FD_STORE4_(p, W, a0, a1, a2, a3)                                                   \
    do {                                                                                      \
        memcpy((p), &a0, sizeof a0);                                                          \
        memcpy((p) + W, &a1, sizeof a1);                                                      \
        memcpy((p) + 2 * W, &a2, sizeof a2);                                                  \
        memcpy((p) + 3 * W, &a3, sizeof a3);                                                  \
    } while (0)
#define OK_FD_COMBINE_BODY(VT, W)                                                             \
    int i, j, jb, je, r, t;                                                                   \
    VT z_;                                                                                    \
    for (t = 0; t < W; t++) z_[t] = 0.0;                                                      \
    for (jb = 0; jb < F; jb += OK_FD_BLOCK) {                                                 \
        je = F - jb < OK_FD_BLOCK ? F : jb + OK_FD_BLOCK;                                     \
        for (i = 0; i < kept; i += 3) {                                                       \
            const int nr = kept - i < 3 ? kept - i : 3;   /* rows of this group */            \
            const double *c0 = C + (long)i * ldc;                                             \
            const double *c1 = nr > 1 ? c0 + ldc : c0, *c2 = nr > 2 ? c0 + 2 * ldc : c0;      \
            double *r0 = R + (long)i * F;                                                     \
            for (j = jb; j + 4 * W <= je; j += 4 * W) {                                       \
                VT a00 = z_, a01 = z_, a02 = z_, a03 = z_, a10 = z_, a11 = z_, a12 = z_, a13 = z_; \
                VT a20 = z_, a21 = z_, a22 = z_, a23 = z_;                                    \
                for (r = 0; r < n; r++) {                                                     \
                    const double *sr = S + (long)r * F + j;                                   \
                    VT x0 = OK_VLOAD(VT, sr), x1 = OK_VLOAD(VT, sr + W);                      \
                    VT x2 = OK_VLOAD(VT, sr + 2 * W), x3 = OK_VLOAD(VT, sr + 3 * W);          \
                    a00 += x0 * c0[r]; a01 += x1 * c0[r]; a02 += x2 * c0[r]; a03 += x3 * c0[r]; \
                    a10 += x0 * c1[r]; a11 += x1 * c1[r]; a12 += x2 * c1[r]; a13 += x3 * c1[r]; \
                    a20 += x0 * c2[r]; a21 += x1 * c2[r]; a22 += x2 * c2[r]; a23 += x3 * c2[r]; \
                }                                                                             \
                OK_FD_STORE4_(r0 + j, W, a00, a01, a02, a03);                                 \
                if (nr > 1) OK_FD_STORE4_(r0 + F + j, W, a10, a11, a12, a13);                 \
                if (nr > 2) OK_FD_STORE4_(r0 + 2 * F + j, W, a20, a21, a22, a23);             \
            }                                                                                 \
            for (; j < je; j++) {          /* the last F % 4W columns: scalar chains */       \
                double b0 = 0.0, b1 = 0.0, b2 = 0.0;                                          \
                for (r = 0; r < n; r++) {                                                     \
                    const double x = S[(long)r * F + j];                                      \
                    b0 += x * c0[r]; b1 += x * c1[r]; b2 += x * c2[r];                        \
                }                                                                             \
                r0[j] = b0;                                                                   \
                if (nr > 1) r0[F + j] = b1;                                                   \
                if (nr > 2) r0[2 * F + j] = b2;                                               \
            }                                                                                 \
        }                                                                                     \
    }
OK_MULTI_W(void, ok_fd_combine, (int F, int n, int kept, const double *restrict C, int ldc,
                                 const double *restrict S, double *restrict R),
           (F, n, kept, C, ldc, S, R), OK_FD_COMBINE_BODY, (ok_v2d_, 2), (ok_v4d_, 4), (ok_v8d_, 8))

#endif /* OK_SKETCH_H */
