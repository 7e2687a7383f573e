# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""KONS on an adaptive Nystrom embedding: the kernel online Newton step of PROS-N-KONS
(Calandriello, Lazaric & Valko, "Efficient second-order online kernel learning with adaptive
embedding", NeurIPS 2017), with the dictionary sampled by ridge leverage scores as in KORS
(Calandriello, Lazaric & Valko, ICML 2017), at most B landmarks.

Dictionary I (the support set, j <= B landmarks, each with its sampling probability p_i) and the
embedding z(x) = L^{-1} k_I(x), L L^T = K_I + mu diag(p) (Cholesky).  For example x_t:

1. f = beta^T k_I(x_t)  (beta = L^{-T} w: the support set's coefficients, so a prediction costs
   one kernel row);  h = l'(f, y_t) (C scores);  nothing more when h = 0;
2. z = L^{-1} k_I(x_t);  r = 1 - ||z||^2 = k(x,x) - k^T (K_I + mu diag(p))^{-1} k, KORS's estimate
   of the ridge leverage score times mu;  if j < B, x_t joins with probability
   p = min(1, oversample r / mu) (one uniform of the CHOICE stream per candidate): L gains the row
   [z^T, sqrt(r + mu p)], z the coordinate r / sqrt(r + mu p), A the diagonal entry alpha, beta a
   zero coefficient (f unchanged); with restart (the paper's PROS-N-KONS) beta = 0 and A = alpha I
   instead, and the step ends;
3. Online Newton step in the embedding (the example's own gradient included, as SON):
   A <- A + eta ||h||^2 z z^T,  w_c <- w_c - h_c A^{-1} z; with the curvature floor (product
   default for regression, as SON's) the weight is max(eta ||h||^2, 1): A is never weaker than
   the squared loss's Hessian on the standardised target, so z^T A^{-1} z < 1 and a step moves
   the prediction on its example by less than |h| (eta ||h||^2 alone vanishes near the target
   for the squared loss and is below 1 for the Lipschitz losses: with a small alpha, A stays
   near alpha and the step overshoots by up to 1 / alpha).

Computed in the landmarks' coordinates: with P = L A L^T, beta_c <- beta_c - h_c P^{-1} k_I(x) and
P <- P + eta ||h||^2 k k^T (L z = k), so a step needs neither z nor L: only P's LDL^T factor (unit
lower L_P, 1 / D kept on its diagonal; columns packed so each column's pass is one contiguous
stream), updated by Gill, Golub, Murray & Saunders's method C1 for a rank-one update (1974), which
leaves D_new^{-1} L_new^{-1} k on the way, then one backward substitution with L_new^T.  When a
landmark joins, A gains the diagonal entry alpha, L_P the row L_P^T c, c = L^{-T} z, and D the entry
alpha (r + mu p); a restart sets L_P = L diag(L)^{-1}, D = alpha diag(L)^2.  L is needed only while
the dictionary can still grow (the leverage test: z = L^{-1} k, j^2 / 2); it gains one row per
landmark and its old rows never change, so the embedding's coordinates, w, A and beta carry over
when a landmark joins (CON-KONS's continuation without a re-projection).  Cost per example: the
kernel row (O(j d)); on a step with h != 0, about 1.5 j^2 multiply-adds over the factor's j^2 / 2
entries (read twice, written once) and j divisions, plus z (j^2 / 2 over L's) while j < B.
Memory: the landmarks plus two packed triangles of B (B + 1) / 2 doubles.

What the papers leave open, and the choices (docstring of KONS): the embedding's matrix is
Cholesky of K_I + mu diag(p) (KORS's weighted dictionary, not an eigendecomposition of K_I); only
points with a non-zero gradient are offered to the dictionary; the projection onto abs(f(x_t)) <= C
is not applied; multiclass shares one A through ||h||^2 (as SON).
"""
from libc.math cimport sqrt
from onlinekern._core.support cimport KernelCore
from onlinekern._core.losses cimport TaskLoss
from onlinekern._core.rng cimport RandomStream
from onlinekern._core.vmath cimport ok_dot, ok_axpy

import numpy as np
from onlinekern.base import KernelLearner, check_flag, check_positive, is_auto
from onlinekern.learners.ogd import ALL_LOSSES, learner_loss, task_loss
from onlinekern.params import AUTO_BUDGET
from onlinekern.seeding import CHOICE

cdef extern from *:
    """
    #include "ok_vmath.h"
    /* The rank-one update of an LDL^T factor (Gill, Golub, Murray & Saunders 1974, method C1) on
     * the rows of two consecutive columns j and j + 1 in one pass (w loaded and stored once for
     * both): for each column (multiplier p, coefficient b) w_r -= p l_r, then l_r += b w_r. */
    OK_MULTI(void, okk_ldl2, (double *restrict l0, double *restrict l1, double *restrict w, Py_ssize_t n,
                              double p0, double b0, double p1, double b1), (l0, l1, w, n, p0, b0, p1, b1),
        for (Py_ssize_t i = 0; i < n; i++) {
            double x = w[i] - p0 * l0[i];
            l0[i] = l0[i] + b0 * x;
            x = x - p1 * l1[i];
            l1[i] = l1[i] + b1 * x;
            w[i] = x;
        })
    /* Four dots with one vector: out[c] = sum_i cols[c][i] v[i], v loaded once for the four
     * columns.  Element i goes to partial sum i mod 8 of its column, added in increasing i, and
     * the eight are combined in a fixed tree, whatever the width W of the level's vectors (8 / W
     * vectors of partial sums per column): the same bits at every SIMD level. */
    #define OKK_DOTS4_BODY(VT, W)                                                                  \
        VT a0[8 / W], a1[8 / W], a2[8 / W], a3[8 / W], x;                                          \
        double s[4][8];                                                                            \
        const double *c_[4] = {c0, c1, c2, c3};                                                    \
        int i = 0, k, c, q;                                                                        \
        for (q = 0; q < 8 / W; q++) { a0[q] = (VT){0}; a1[q] = a0[q]; a2[q] = a0[q]; a3[q] = a0[q]; } \
        for (int b_ = 0; b_ < n / 8; b_++, i += 8)                                                 \
            for (q = 0; q < 8 / W; q++) {                                                          \
                x = OK_VLOAD(VT, v + i + q * W);                                                   \
                a0[q] += OK_VLOAD(VT, c0 + i + q * W) * x;                                         \
                a1[q] += OK_VLOAD(VT, c1 + i + q * W) * x;                                         \
                a2[q] += OK_VLOAD(VT, c2 + i + q * W) * x;                                         \
                a3[q] += OK_VLOAD(VT, c3 + i + q * W) * x;                                         \
            }                                                                                      \
        for (k = 0; k < 8; k++) {                                                                  \
            s[0][k] = a0[k / W][k % W]; s[1][k] = a1[k / W][k % W];                                \
            s[2][k] = a2[k / W][k % W]; s[3][k] = a3[k / W][k % W];                                \
        }                                                                                          \
        for (c = 0; c < 4; c++) {                                                                  \
            for (k = 0; i + k < n; k++) s[c][k] += c_[c][i + k] * v[i + k];                        \
            for (k = 0; k < 4; k++) s[c][k] += s[c][k + 4];                                        \
            out[c] = (s[c][0] + s[c][2]) + (s[c][1] + s[c][3]);                                    \
        }
    OK_MULTI_W(void, okk_dots4, (const double *restrict c0, const double *restrict c1, const double *restrict c2,
                                 const double *restrict c3, const double *restrict v, int n, double *restrict out),
               (c0, c1, c2, c3, v, n, out), OKK_DOTS4_BODY, (ok_v2d_, 2), (ok_v4d_, 4), (ok_v8d_, 8))
    """
    void okk_dots4(const double* c0, const double* c1, const double* c2, const double* c3, const double* v, int n,
                   double* out) noexcept nogil
    void okk_ldl2(double* l0, double* l1, double* w, Py_ssize_t n, double p0, double b0, double p1,
                  double b1) noexcept nogil


# a landmark joins only if its pivot sqrt(r + mu p) squared exceeds this (duplicates of landmarks)
cdef double PIVOT_FLOOR = 1e-12


cdef inline Py_ssize_t col_at(Py_ssize_t B, Py_ssize_t k) noexcept nogil:
    """Offset of column k (its diagonal) in the column-packed factor of capacity B: column k holds
    rows k..B-1, so a full dictionary's factor is one contiguous stream."""
    return k * B - k * (k - 1) // 2


cdef inline Py_ssize_t row_at(Py_ssize_t i) noexcept nogil:
    """Offset of row i in the row-packed lower triangle (rows 0..i-1 before it)."""
    return i * (i + 1) // 2


cdef inline double c1_row(double* l, double x, double p, double b) noexcept nogil:
    """One row of one column in method C1 (okk_ldl2's element, for the scalar head rows): the
    row's w entry x becomes x - p l, then l += b x; returns the new x."""
    x = x - p * l[0]
    l[0] = l[0] + b * x
    return x


cdef inline void ldl_column(double* col, double* w, double* v, Py_ssize_t k, double* g, double ia, double* p,
                            double* b) noexcept nogil:
    """Column k's scalars in the rank-one update P + w w^T of P = L D L^T (method C1, written with
    g = 1 / alpha, so its only serial step is an addition, and with 1 / d stored on the diagonal,
    so it takes one division): the multiplier p = w[k] (w reduced by the columns before),
    g' = g + p^2 / d, D's new entry d g' / g, the coefficient b = p / (d g'); v[k] = b / a, the
    k-th entry of D_new^{-1} L_new^{-1} k_I(x) (y_k = p / g: no separate forward substitution)."""
    cdef double di = col[k], g1, ig1
    p[0] = w[k]
    g1 = g[0] + p[0] * p[0] * di
    ig1 = 1.0 / g1
    b[0] = p[0] * di * ig1
    col[k] = di * g[0] * ig1
    g[0] = g1
    v[k] = b[0] * ia


cdef inline void pair_head(double* F, Py_ssize_t B, Py_ssize_t j, Py_ssize_t k, double* w, double* v, double* g,
                           double ia, double* prm) noexcept nogil:
    """The scalar chain of columns k and k + 1: column k's scalars, its entry in row k + 1, column
    k + 1's scalars (prm: p, b of each)."""
    cdef double* col = F + col_at(B, k) - k
    ldl_column(col, w, v, k, g, ia, &prm[0], &prm[1])
    if k + 1 < j:
        w[k + 1] = c1_row(col + k + 1, w[k + 1], prm[0], prm[1])
        ldl_column(F + col_at(B, k + 1) - k - 1, w, v, k + 1, g, ia, &prm[2], &prm[3])


cdef void newton_solve(double* F, Py_ssize_t B, Py_ssize_t j, double a, const double* kv, double* w,
                       double* v) noexcept nogil:
    """Update the column-packed LDL^T factor of P (unit lower L below the diagonal, 1 / D on it) to
    the factor of P + a^2 k k^T and leave P_new^{-1} k in v.

    The update is Gill, Golub, Murray & Saunders's method C1 (one pass over each column: w_r -= p
    l_r, l_r += b w_r), two columns per pass (okk_ldl2, compiled per SIMD level, element-wise and
    without contraction: the same bits at every level); it leaves D_new^{-1} L_new^{-1} k = b / a
    as it goes, so the only solve left is the backward one, L_new^T v = b / a, four columns per
    pass over the solved part of v (okk_dots4) and then a small triangle.  The scalar chain of the
    next two columns (a division each) is issued between the first two rows of the current pair's
    pass and the rest of it, so the processor overlaps it with that pass; every element still sees
    the same operations on the same values."""
    cdef Py_ssize_t i, k = 0, hi, lo, m, n
    cdef double* col
    cdef double* col1
    cdef double prm[4]
    cdef double nxt[4]
    cdef double d[4]
    cdef double acc, g = 1.0, ia = 1.0 / a
    for i in range(j):
        w[i] = a * kv[i]
    if j == 0:
        return
    for i in range(4):
        nxt[i] = 0.0
    pair_head(F, B, j, 0, w, v, &g, ia, prm)
    while k + 1 < j:                             # columns k and k + 1, their scalars in prm
        col = F + col_at(B, k) - k              # col[k] holds 1 / D's entry, col[i] row i of L_P
        col1 = F + col_at(B, k + 1) - k - 1
        for i in range(k + 2, min(k + 4, j)):   # the pair's first two rows, as okk_ldl2
            w[i] = c1_row(col1 + i, c1_row(col + i, w[i], prm[0], prm[1]), prm[2], prm[3])
        if k + 2 < j:
            pair_head(F, B, j, k + 2, w, v, &g, ia, nxt)
        if j - k - 4 > 0:
            okk_ldl2(col + k + 4, col1 + k + 4, w + k + 4, j - k - 4, prm[0], prm[1], prm[2], prm[3])
        for i in range(4):
            prm[i] = nxt[i]
        k += 2
    # backward: v <- L^{-T} v, four columns lo..lo+3 at a time: the dots over the rows solved
    # before the previous block in one pass (okk_dots4, independent of the previous block, so it
    # overlaps that block's triangle), then the previous block's four rows and the block's own
    # triangle in scalars
    hi = j
    while hi > 0:
        lo = hi - 4 if hi >= 4 else 0
        n = hi + 4 if hi + 4 < j else j                  # rows [hi, n): the previous block
        if hi - lo == 4 and j > n:
            okk_dots4(F + col_at(B, lo) - lo + n, F + col_at(B, lo + 1) - lo - 1 + n,
                      F + col_at(B, lo + 2) - lo - 2 + n, F + col_at(B, lo + 3) - lo - 3 + n, v + n,
                      <int>(j - n), d)
        else:
            for m in range(lo, hi):
                d[m - lo] = ok_dot(F + col_at(B, m) - m + n, v + n, <int>(j - n))
        m = hi - 1
        while m >= lo:
            col = F + col_at(B, m) - m
            acc = d[m - lo]
            for i in range(hi, n):
                acc = acc + col[i] * v[i]
            for i in range(m + 1, hi):
                acc = acc + col[i] * v[i]
            v[m] = v[m] - acc
            m -= 1
        hi = lo


cdef void lower_transpose_solve(const double* L, Py_ssize_t j, double* v) noexcept nogil:
    """v <- L^{-T} v for the row-packed lower-triangular L (backward substitution by rows of L)."""
    cdef Py_ssize_t k = j - 1
    while k >= 0:
        v[k] = v[k] / L[row_at(k) + k]
        if k > 0:
            ok_axpy(<int>k, -v[k], L + row_at(k), v)
        k -= 1


cdef class KONSCore(KernelCore):
    cdef public double alpha, eta, mu, oversample
    cdef public bint restart
    cdef public bint floor              # curvature floor: A gains max(eta ||h||^2, 1) z z^T
    cdef public TaskLoss loss
    cdef public RandomStream rng
    cdef readonly int B
    cdef readonly long long n_added, n_restarts
    cdef object bufs_
    cdef double* LK                     # L, L L^T = K_I + mu diag(p): lower, rows packed (row_at)
    cdef double* LD                     # P = L A L^T as L_P D L_P^T: 1 / D on the diagonal, unit L_P below; columns packed (col_at)
    cdef double* pw                     # B: sampling probability of each landmark
    cdef double* z                      # B: the embedding of the example, then L^{-T} z
    cdef double* kx                     # B: k_I(x) when a landmark joins (the new one's k(x, x) = 1 added)
    cdef double* v                      # B: P^{-1} k_I(x) (= L^{-T} A^{-1} z)
    cdef double* xw                     # B: the rank-one update's vector

    def _setup_kons(self, int budget, double alpha, double eta, double mu, double oversample, bint restart,
                    seed, state=None, bint floor=False):
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        self.B = budget
        self.alpha, self.eta, self.mu, self.oversample, self.restart = alpha, eta, mu, oversample, restart
        self.floor = floor
        self.rng = RandomStream(seed, CHOICE, state=state)
        B = budget
        T = B * (B + 1) // 2
        self.bufs_ = (np.zeros(T), np.zeros(T), np.zeros(B), np.zeros(B), np.zeros(B), np.zeros(B), np.zeros(B))
        cdef double[::1] a = self.bufs_[0], b = self.bufs_[1], c = self.bufs_[2], d = self.bufs_[3]
        cdef double[::1] e = self.bufs_[4], f = self.bufs_[5], h = self.bufs_[6]
        self.LK, self.LD, self.pw, self.z, self.v, self.xw, self.kx = &a[0], &b[0], &c[0], &d[0], &e[0], &f[0], &h[0]
        self.n_added = 0
        self.n_restarts = 0

    cdef void _reset(self, Py_ssize_t j) noexcept nogil:
        """PROS-N-KONS's restart: w = 0 (beta = 0) and A = alpha I, so P = alpha L L^T: P's unit
        factor is L's columns divided by their diagonal, D = alpha diag(L)^2."""
        cdef Py_ssize_t i, m
        cdef double lmm
        cdef double* coef = self.sv.coef
        for i in range(j * self.n_outputs):
            coef[i] = 0.0
        for m in range(j):
            lmm = self.LK[row_at(m) + m]
            self.LD[col_at(self.B, m)] = 1.0 / (self.alpha * lmm * lmm)
            for i in range(m + 1, j):
                self.LD[col_at(self.B, m) + i - m] = self.LK[row_at(i) + m] / lmm
        self.n_restarts += 1

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef int C = self.n_outputs, c
        cdef Py_ssize_t j = self.sv.n, i, m, B = self.B
        cdef double hn2 = 0.0, r, p, piv, a, w2
        cdef double* coef
        cdef double* kvec
        self.kernel_scores(x, idx, nnz, out)
        self.loss.grad(out, y, C, g)
        for c in range(C):
            hn2 = hn2 + g[c] * g[c]
        if hn2 == 0.0:
            return 0
        kvec = self.sv.k                         # k_I(x), left by kernel_scores
        if j < B:
            # z = L^{-1} k_I(x) (rows of L are contiguous); r = k(x, x) - ||z||^2
            for i in range(j):
                self.z[i] = (kvec[i] - ok_dot(self.LK + row_at(i), self.z, <int>i)) / self.LK[row_at(i) + i]
            r = 1.0 - ok_dot(self.z, self.z, <int>j)
            p = 0.0
            if r > 0.0:
                p = self.oversample * r / self.mu
                if p > 1.0:
                    p = 1.0
            if self.rng.random() < p and r + self.mu * p > PIVOT_FLOOR:
                for i in range(j):                       # k_I(x) before the append (which may
                    self.kx[i] = kvec[i]                 # move the support set's buffers)
                kvec = self.kx
                for c in range(C):
                    self.xw[c] = 0.0
                if self.sv.append(x, idx, nnz, self.xsq, self.xw) < 0:
                    return -1
                piv = sqrt(r + self.mu * p)
                # P gains the row and column of the new coordinate (A's new diagonal alpha): with
                # c = L^{-T} z, P's new row is P c and its diagonal c^T P c + alpha piv^2, so the
                # unit factor's new row is L_P^T c and D's new entry alpha piv^2
                for i in range(j):
                    self.LK[row_at(j) + i] = self.z[i]          # L gains the row [z^T, piv]
                self.LK[row_at(j) + j] = piv
                lower_transpose_solve(self.LK, j, self.z)       # z <- c = L^{-T} z (old rows)
                for m in range(j):
                    self.LD[col_at(B, m) + j - m] = self.z[m] + ok_dot(self.LD + col_at(B, m) + 1, self.z + m + 1,
                                                                       <int>(j - m - 1))
                self.LD[col_at(B, j)] = 1.0 / (self.alpha * piv * piv)
                self.pw[j] = p
                self.kx[j] = 1.0                     # k(x, x)
                j += 1
                self.n_added += 1
                if self.restart:
                    self._reset(j)
                    return 0
        # P <- P + eta hn2 k k^T (A <- A + eta hn2 z z^T) and v = P^{-1} k_I(x) = L^{-T} A^{-1} z
        w2 = self.eta * hn2
        if self.floor:
            w2 = max(w2, 1.0)
        a = sqrt(w2)
        newton_solve(self.LD, B, j, a, kvec, self.xw, self.v)
        # beta_c -= h_c v
        coef = self.sv.coef
        for i in range(j):
            for c in range(C):
                if g[c] != 0.0:
                    coef[i * C + c] -= g[c] * self.v[i] / self.sv.scale
        return 0

    # -- views and state ----------------------------------------------------------------------

    @property
    def embedding_factor(self):
        """L (j x j, lower): L L^T = K_I + mu diag(p), z(x) = L^{-1} k_I(x)."""
        j = self.sv.n
        r, c = np.tril_indices(j)
        out = np.zeros((j, j))
        out[r, c] = np.asarray(self.bufs_[0])[r * (r + 1) // 2 + c]
        return out

    @property
    def newton_factor(self):
        """R (j x j, lower): the Cholesky factor of P = L A L^T = alpha (K_I + mu diag(p)) +
        eta sum ||h||^2 k_I(x) k_I(x)^T (A in the landmarks' coordinates), R = L_P D^{1/2} from the
        LDL^T factor the learner keeps (newton_ldl)."""
        F = self.newton_ldl
        Lp = np.tril(F, -1) + np.eye(len(F))
        return Lp / np.sqrt(np.diag(F))

    @property
    def newton_ldl(self):
        """P's LDL^T factor as the learner keeps it (j x j): 1 / D on the diagonal, the unit lower
        L_P below it (P = L_P D L_P^T)."""
        return self._unpack_columns(np.asarray(self.bufs_[1]), self.sv.n)

    def newton_update(self, k, double a):
        """The Newton part of a step on its own: P <- P + a^2 k k^T on the kept factor.

        Parameters
        ----------
        k : array of shape (n_landmarks,)
            A kernel row over the landmarks (the step passes k_I(x)).
        a : float
            The update's scale (the step passes sqrt(eta ||h||^2)); positive.

        Returns
        -------
        ndarray of shape (n_landmarks,)
            P_new^{-1} k, the direction the step moves the coefficients along.
        """
        cdef Py_ssize_t j = self.sv.n
        cdef double[::1] kv = np.ascontiguousarray(k, dtype=np.float64).reshape(-1)
        if kv.shape[0] != j:
            raise ValueError(f"k has {kv.shape[0]} entries, the dictionary {j} landmarks")
        if not a > 0.0:
            raise ValueError(f"a must be positive, got {a}")
        if j:
            with nogil:
                newton_solve(self.LD, self.B, j, a, &kv[0], self.xw, self.v)
        return np.array(self.bufs_[4][:j])

    def _columns_index(self, j):
        r, c = np.tril_indices(j)
        return r, c, c * self.B - c * (c - 1) // 2 + (r - c)

    def _unpack_columns(self, buf, j):
        r, c, at = self._columns_index(j)
        out = np.zeros((j, j))
        out[r, c] = buf[at]
        return out

    @property
    def probabilities(self):
        """The sampling probability p_i of each landmark (slot order)."""
        return np.array(self.bufs_[2][:self.sv.n])

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(alpha=self.alpha, eta=self.eta, mu=self.mu, oversample=self.oversample,
                  restart=int(self.restart), floor=int(self.floor), budget=int(self.B), loss=self.loss.spec,
                  rng=self.rng.state,
                  n_added=int(self.n_added), n_restarts=int(self.n_restarts), LK=self.embedding_factor,
                  LDP=self.newton_ldl, p=self.probabilities)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        budget = int(st["budget"])
        if budget < 1 or self.sv.budget != budget:
            raise ValueError("KONS state: budget does not match the support set")
        self._setup_kons(budget, float(st["alpha"]), float(st["eta"]), float(st["mu"]), float(st["oversample"]),
                         bool(st["restart"]), 0, st["rng"], bool(st.get("floor", 0)))
        self.loss = task_loss(st["loss"], self.task)
        j = self.sv.n
        LK, LDP, p = (np.asarray(st[k], dtype=np.float64) for k in ("LK", "LDP", "p"))
        if LK.shape != (j, j) or LDP.shape != (j, j) or p.shape != (j,):
            raise ValueError("KONS state: factors do not match the landmarks")
        if j and (np.any(np.diag(LK) <= 0) or np.any(np.diag(LDP) <= 0)):
            raise ValueError("KONS state: factors must have a positive diagonal")
        r, c, at = self._columns_index(j)
        self.bufs_[0][r * (r + 1) // 2 + c] = LK[r, c]
        self.bufs_[1][at] = LDP[r, c]
        self.bufs_[2][:j] = p
        self.n_added, self.n_restarts = int(st["n_added"]), int(st["n_restarts"])


class KONS(KernelLearner):
    """Kernel online Newton step on an adaptive Nystrom embedding (PROS-N-KONS): a second-order
    online kernel learner whose cost per example grows with its dictionary, not with the stream.

    Calandriello, Lazaric & Valko, "Efficient second-order online kernel learning with adaptive
    embedding", NeurIPS 2017 (PROS-N-KONS; the dictionary by KORS, ICML 2017).  Landmarks join
    the dictionary with probability proportional to their ridge leverage score (estimated on the
    dictionary), the examples are embedded as z(x) = L^{-1} k_I(x) with L L^T = K_I + mu diag(p),
    and the weights take online Newton steps w <- w - h A^{-1} z, A = alpha I + eta sum ||h||^2 z z^T.
    With ``restart=True`` (the 'paper' preset) every new landmark resets w and A, as PROS-N-KONS
    does; the product default keeps them (the embedding's old coordinates do not change when a
    landmark joins, so nothing learnt is lost).

    Choices where the papers leave room: the embedding is the Cholesky factor of K_I + mu diag(p)
    (KORS's weighted dictionary) rather than an eigendecomposition of K_I: the same span, O(j^2)
    per landmark instead of O(j^3); points with a zero loss gradient are not offered to the
    dictionary (they change nothing else either); the projection onto abs(f(x_t)) <= C is left out;
    multiclass shares one A through ||h||^2 (as :class:`SON`); at most ``budget`` landmarks.

    Parameters
    ----------
    budget : int or 'auto'
        Most landmarks B; 'auto' (default): 400 (the 'paper' preset: 1,000).  A step with a
        non-zero gradient costs ~3 B^2 multiply-adds once the dictionary is full.
    gamma : float, 'auto', 'median' or None
        Kernel width of exp(-gamma ||x - x'||^2); 'auto' (default): chosen online on the first
        few thousand examples (onlinekern.selection); the 'paper' preset: 1 / n_features.
    alpha : float > 0 or 'auto'
        A = alpha I before any gradient; the first step is 1/alpha times the gradient.  'auto'
        (default): 0.03 for classification, 0.3 for regression (the 'paper' preset: 1.0, A_0 = I;
        the paper tunes it per data set).  Measured with eta = 0.3 on the first 20,000 rows of
        ijcnn1, cod-rna, a9a and w8a (permutation 0, width chosen online), alpha = 0.03 was best
        or within 0.4 points of the best of alpha in {0.001 .. 1}, eta in {0.1 .. 10} on each
        (2.52, 5.18, 16.15, 1.62 %); on the first 5,000 rows of casp, cadata and abalone 0.3 had
        the lowest RMSE of {0.1, 0.3, 1, 3} (with targets standardised online, a smaller alpha
        overshoots: the squared loss's gradients are small near the target, so A stays small).
    eta : float > 0
        Weight of each gradient in A (0.3) (the paper's sigma / 2).
    mu : float > 0
        Ridge of the leverage scores and of the embedding (0.01).
    oversample : float > 0
        KORS's beta (1 + epsilon): a point joins with probability min(1, oversample r / mu) (1.0).
    restart : bool or 'auto'
        Reset w and A whenever a landmark joins (PROS-N-KONS); 'auto' (default): False (the
        'paper' preset: True).
    curvature_floor : bool or 'auto'
        A gains max(eta ||h||^2, 1) z z^T instead of eta ||h||^2 z z^T (as :class:`SON`: a step
        never moves the prediction on its example by more than |h|); 'auto' (default): True for
        regression, False for classification (the 'paper' preset: False).
    loss : str
        Any loss of onlinekern.losses (hinge default); multiclass: hinge, logistic, softmax.
    epsilon, huber_delta, quantile : float
        Loss parameters.
    preset : {'auto', 'paper'}
        As for every learner.
    seed : int
        Decides the dictionary's sampling (and the width selection).
    n_threads : int or None
        Threads for the kernel rows; results never depend on it.
    """

    family = "kons"
    losses = ALL_LOSSES
    summary = "kernel online Newton step on a Nystrom embedding sampled by ridge leverage scores (PROS-N-KONS)"
    paper = "Calandriello, Lazaric & Valko, NeurIPS 2017"
    paper_defaults = {"gamma": None, "budget": AUTO_BUDGET, "restart": True, "alpha": 1.0, "curvature_floor": False}

    def __init__(self, budget="auto", gamma="auto", alpha="auto", eta=0.3, mu=0.01, oversample=1.0, restart="auto",
                 curvature_floor="auto", loss="hinge", epsilon=0.1, huber_delta=1.0, quantile=0.5, preset="auto", seed=0,
                 n_threads=None):
        self.budget = budget
        self.gamma = gamma
        self.alpha = alpha
        self.eta = eta
        self.mu = mu
        self.oversample = oversample
        self.restart = restart
        self.curvature_floor = curvature_floor
        self.loss = loss
        self.epsilon = epsilon
        self.huber_delta = huber_delta
        self.quantile = quantile
        self.preset = preset
        self.seed = seed
        self.n_threads = n_threads

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """budget: 400 (a full dictionary costs ~3 B^2 per update: 0.5 M multiply-adds); restart:
        False; alpha: 0.03 (classification) or 0.3 (regression); curvature_floor: True for
        regression."""
        if name == "alpha":
            return 0.3 if task == "regression" else 0.03
        if name == "budget":
            return 400
        if name == "restart":
            return False
        if name == "curvature_floor":
            return task == "regression"
        return super().auto_value(name, X, task, n_outputs, n_stream)

    def _validate_params(self):
        super()._validate_params()
        for name in ("alpha", "eta", "mu", "oversample"):
            if not (name == "alpha" and is_auto(self.alpha)):
                check_positive(name, getattr(self, name))
        check_flag("restart", self.restart)
        check_flag("curvature_floor", self.curvature_floor)

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = KONSCore()
        budget = int(self.param_value("budget"))
        core._setup_kernel(n_features, task, n_outputs, gamma, budget, self._n_threads())
        core.loss = learner_loss(self, task)
        core._setup_kons(budget, float(self.param_value("alpha")), float(self.eta), float(self.mu), float(self.oversample),
                         bool(self.param_value("restart")), self.seed, None, bool(self.param_value("curvature_floor")))
        return core

    @property
    def n_landmarks_(self):
        """Landmarks in the dictionary."""
        self._check_fitted()
        return int(self.core_.sv.n)
