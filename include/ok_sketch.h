/*
 * ok_sketch.h -- the small dense linear algebra of a Frequent-Directions sketch (Liberty, KDD 2013;
 * Ghashami et al., SIAM J. Comput. 2016) as Sketched Online Newton uses it (Luo, Agarwal,
 * Cesa-Bianchi & Langford, NeurIPS 2016): the sketch S holds k <= 2m rows of length F, its Gram
 * matrix G = S S^T (k x k) and the Cholesky factor L of M = alpha I + G are kept as rows arrive,
 * and a full buffer is shrunk through the eigenvectors of the k x k matrix G (never an SVD of S).
 *
 * Every routine runs a fixed sequence of operations (no pivoting by value, no early exits other
 * than the Jacobi sweeps' fixed tolerance), so the results are the same bits on every run; they
 * are small (k <= 2m, m of the order of tens) and serial.  Matrices are row-major with a leading
 * dimension ld.
 */
#ifndef OK_SKETCH_H
#define OK_SKETCH_H

#include <math.h>
#include <string.h>

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

/* Eigen-decomposition of the symmetric n x n matrix A (destroyed) by cyclic Jacobi rotations:
 * eigenvalues in w, in decreasing order, and the matching unit eigenvectors in the columns of V
 * (V[r * ld + j] is component r of vector j).  Sweeps stop when the off-diagonal mass is below
 * 1e-30 of the total, or after 60 sweeps. */
static inline void ok_sym_eig(double *A, int n, int ld, double *w, double *V, int *order, double *tmp) {
    int i, j, r, p, q, sweep;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) V[i * ld + j] = i == j ? 1.0 : 0.0;
    for (sweep = 0; sweep < 60; sweep++) {
        double off = 0.0, tot = 0.0;
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++) {
                double a = A[i * ld + j] * A[i * ld + j];
                tot += a;
                if (i != j) off += a;
            }
        if (!(off > 1e-30 * tot)) break;
        for (p = 0; p < n - 1; p++)
            for (q = p + 1; q < n; q++) {
                double apq = A[p * ld + q], app, aqq, theta, t, c, s;
                if (apq == 0.0) continue;
                app = A[p * ld + p];
                aqq = A[q * ld + q];
                theta = (aqq - app) / (2.0 * apq);
                t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                c = 1.0 / sqrt(t * t + 1.0);
                s = t * c;
                for (r = 0; r < n; r++) {           /* A <- A J (columns p, q) */
                    double arp = A[r * ld + p], arq = A[r * ld + q];
                    A[r * ld + p] = c * arp - s * arq;
                    A[r * ld + q] = s * arp + c * arq;
                }
                for (r = 0; r < n; r++) {           /* A <- J^T A (rows p, q) */
                    double apr = A[p * ld + r], aqr = A[q * ld + r];
                    A[p * ld + r] = c * apr - s * aqr;
                    A[q * ld + r] = s * apr + c * aqr;
                }
                for (r = 0; r < n; r++) {           /* V <- V J */
                    double vrp = V[r * ld + p], vrq = V[r * ld + q];
                    V[r * ld + p] = c * vrp - s * vrq;
                    V[r * ld + q] = s * vrp + c * vrq;
                }
            }
    }
    for (i = 0; i < n; i++) order[i] = i;
    for (i = 1; i < n; i++) {                       /* stable insertion sort, decreasing */
        int o = order[i];
        for (j = i; j > 0 && A[order[j - 1] * ld + order[j - 1]] < A[o * ld + o]; j--) order[j] = order[j - 1];
        order[j] = o;
    }
    for (i = 0; i < n; i++) w[i] = A[order[i] * ld + order[i]];
    for (r = 0; r < n; r++) {
        for (j = 0; j < n; j++) tmp[j] = V[r * ld + order[j]];
        memcpy(V + r * ld, tmp, (size_t)n * sizeof(double));
    }
}

#endif /* OK_SKETCH_H */
