# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""LASVM on a budget: the online SVM solver of Bordes, Ertekin, Weston & Bottou ("Fast kernel
classifiers with online and active learning", JMLR 6, 2005) with its support set bounded.

The model is f(x) = sum_s alpha_s k(x_s, x) + b over a support set S with signed coefficients,
A_s = min(0, C y_s) <= alpha_s <= B_s = max(0, C y_s), sum_s alpha_s = 0 (kept by every step),
and the dual gradients g_s = y_s - sum_t alpha_t k(x_s, x_t).  Each example is predicted, then:

PROCESS(x_k, y_k): g_k = y_k - sum_s alpha_s k_sk.  Its partner is j = argmin {g_s : alpha_s >
A_s} when y_k = +1 (then i = k), i = argmax {g_s : alpha_s < B_s} when y_k = -1 (then j = k).
If g_i - g_j <= tau the example is dropped.  Otherwise it joins S with alpha_k = 0 (with no
partner yet, it joins without a step) and the direction search on (i, j) runs:

    lambda = min((g_i - g_j) / (2 - 2 k_ij), B_i - alpha_i, alpha_j - A_j),
    alpha_i += lambda, alpha_j -= lambda, g_s -= lambda (k_is - k_js) for every s in S.

REPROCESS: the direction search on the most violating pair (i = argmax, j = argmin as above) if
g_i - g_j > tau; then every s with alpha_s = 0 that cannot enter a violating pair (y_s = -1 and
g_s >= g_max, or y_s = +1 and g_s <= g_min) leaves S, and b = (g_max + g_min) / 2 (g_max alone
or g_min alone when the other side is empty, 0 when both are).

The budget (not in the paper): when S holds B vectors and a violating example would join, an SV
v leaves first: the bound SV (|alpha_v| = C) of largest violation y_v (g_v - b) = 1 - y_v f(x_v)
if that exceeds 2 (f misclassifies it by more than the margin: an outlier the expansion has given
up on), otherwise the SV of smallest |alpha_v| (first slots within TIE).  Its share of every
gradient is given back (g_t += alpha_v k_vt), and its coefficient goes to the SVs left so that
sum alpha = 0 still holds: to u = argmax g_u among those that can grow (alpha_v > 0; argmin among
those that can shrink when alpha_v < 0), up to u's bound, then to the next (the move
alpha_v(e_u - e_v) that loses the least dual objective; g_t -= delta k_ut).  Then the partner is
looked for again.  alpha = 0 vectors cost nothing to remove.  Bound SVs never leave through the
smallest |alpha| on noisy data, so the set filled with outliers: on cod-rna (B = 250, C = 10,
gamma = 2, NumPy oracle) 21.7 % over 10,000 rows, 7.6 % with the outlier rule (ijcnn1, B = 500:
4.14 and 4.08 % over 20,000; evicting the oldest SV: 8.65 and 5.80 %, the most violating bound SV
whatever its violation: 7.50 and 6.40 %).  Dropping the coefficient instead of passing it on lets
sum alpha drift with every removal, and b with it (cod-rna: b reached -5).

Cost per example: one kernel row for the prediction and, per direction search, the rows of the
pair's SVs (the new example's row is the prediction's), plus O(|S|) passes over the gradients.
Kernel rows of SVs come from a small cache of rows (``cache_rows``, least recently used out): a
cached row keeps the values of the slots below its length, moves them as SVs leave and computes
the slots after it when used again, each value as a fresh row computes it, so a cached row is the
same numbers as a recomputed one and results do not depend on the cache's size.  The curvature uses k_ii = 1 (the Gaussian kernel)
and 2 - 2 k_ij is floored at 1e-12 (duplicates).  Binary classification only (LASVM's setting).
"""
from libc.math cimport fabs, INFINITY
from libc.string cimport memcpy

from onlinekern._core.support cimport KernelCore, sv_alpha, sv_set_alpha
from onlinekern._core.vmath cimport ok_axpy

cdef extern from *:
    """
    /* The working-set scans over the SVs' coefficients a, bounds lo <= a <= hi and gradients g:
     * out[0] = max {g_s : a_s < hi_s}, out[1] = min {g_s : a_s > lo_s} (-inf / +inf when empty),
     * in W lanes (a maximum is exact in any order: the same numbers at every SIMD level). */
    #define OKLA_EXTREMES_BODY(VD, VL, W)                                                        \
        VD mx, mn, q;                                                                            \
        VL mu, ml;                                                                               \
        Py_ssize_t i = 0;                                                                        \
        int k;                                                                                   \
        double rx, rn;                                                                           \
        for (k = 0; k < W; k++) { mx[k] = -INFINITY; mn[k] = INFINITY; }                         \
        for (; i + W <= n; i += W) {                                                             \
            q = OKV_LOADT(VD, g + i);                                                            \
            mu = (OKV_LOADT(VD, a + i) < OKV_LOADT(VD, hi + i)) & (q > mx);                      \
            ml = (OKV_LOADT(VD, a + i) > OKV_LOADT(VD, lo + i)) & (q < mn);                      \
            mx = (VD)OKV_SELT(VL, mu, q, mx);                                                    \
            mn = (VD)OKV_SELT(VL, ml, q, mn);                                                    \
        }                                                                                        \
        rx = mx[0]; rn = mn[0];                                                                  \
        for (k = 1; k < W; k++) { rx = mx[k] > rx ? mx[k] : rx; rn = mn[k] < rn ? mn[k] : rn; }  \
        for (; i < n; i++) {                                                                     \
            if (a[i] < hi[i] && g[i] > rx) rx = g[i];                                            \
            if (a[i] > lo[i] && g[i] < rn) rn = g[i];                                            \
        }                                                                                        \
        out[0] = rx; out[1] = rn;
    OKSV_MULTI_W(void, okla_extremes, (const double *restrict a, const double *restrict lo,
                 const double *restrict hi, const double *restrict g, Py_ssize_t n, double *restrict out),
                 (a, lo, hi, g, n, out), OKLA_EXTREMES_BODY)

    /* The first s with a_s < hi_s and g_s >= t (up = 1), or a_s > lo_s and g_s <= t (up = 0);
     * -1: none.  W lanes per test, then the scalar scan from the group that holds it. */
    #define OKLA_FIRST_BODY(VD, VL, W)                                                           \
        VD tv;                                                                                   \
        Py_ssize_t i = 0;                                                                        \
        int k;                                                                                   \
        for (k = 0; k < W; k++) tv[k] = t;                                                       \
        for (; i + W <= n; i += W) {                                                             \
            VD q = OKV_LOADT(VD, g + i), av = OKV_LOADT(VD, a + i);                              \
            VL m = up ? ((av < OKV_LOADT(VD, b + i)) & (q >= tv)) : ((av > OKV_LOADT(VD, b + i)) & (q <= tv)); \
            if (OKV_ANYW(W, m)) break;                                                           \
        }                                                                                        \
        for (; i < n; i++)                                                                       \
            if (up ? (a[i] < b[i] && g[i] >= t) : (a[i] > b[i] && g[i] <= t)) return i;         \
        return -1;
    OKSV_MULTI_W(Py_ssize_t, okla_first, (const double *restrict a, const double *restrict b,
                 const double *restrict g, Py_ssize_t n, double t, int up), (a, b, g, n, t, up), OKLA_FIRST_BODY)
    """
    void okla_extremes(const double* a, const double* lo, const double* hi, const double* g, Py_ssize_t n,
                       double* out) noexcept nogil
    Py_ssize_t okla_first(const double* a, const double* b, const double* g, Py_ssize_t n, double t,
                          int up) noexcept nogil

import numpy as np

from onlinekern.base import KernelLearner
from onlinekern.params import AUTO_BUDGET, check_positive, check_nonnegative

# Gradients this close (relative) count as equal when the working pair is chosen: after an
# unclipped direction search g_i = g_j in exact arithmetic, and every free SV has g_s = b at the
# optimum, so exact ties are the rule; the first slot among them is taken, so that rounding (the
# summation order of a kernel value) does not decide which SV moves.
cdef double TIE = 1e-12


cdef class LASVMCore(KernelCore):
    cdef public double c                 # box C
    cdef public double tau               # violation tolerance
    cdef public double b                 # bias
    cdef readonly Py_ssize_t budget
    cdef readonly int cache_rows
    cdef public long long n_rows, n_hits # kernel rows asked for, found in the cache
    cdef public long long n_searches     # direction searches (each an O(|S|) gradient update)
    cdef public long long n_scans        # working-pair scans (each two O(|S|) passes)
    cdef object bufs_
    cdef Py_ssize_t cap
    cdef double* g                       # cap: dual gradients
    cdef double* ys                      # cap: labels of the SVs
    cdef double* lb                      # cap: A_s = min(0, C y_s)
    cdef double* ub                      # cap: B_s = max(0, C y_s)
    cdef double* kx                      # cap: kernel row of the example being learnt
    cdef double* crow                    # cache_rows * cap: cached kernel rows of SVs
    cdef Py_ssize_t* cslot               # cache_rows: the SV of each cached row (-1: free)
    cdef Py_ssize_t* clen                # cache_rows: slots below this hold the row's values
    cdef long long* cuse                 # cache_rows: last use (least recently used goes first)
    cdef long long tick

    def _setup_lasvm(self, Py_ssize_t budget, double c, double tau, int cache_rows):
        self.budget, self.c, self.tau = budget, c, tau
        self.cap = budget
        if cache_rows < 2:
            raise ValueError(f"cache_rows must be at least 2, got {cache_rows}")
        self.bufs_ = (np.zeros(5 * self.cap), np.zeros(cache_rows * self.cap),
                      np.full(2 * cache_rows, -1, dtype=np.intp), np.zeros(cache_rows, dtype=np.int64))
        cdef double[::1] a = self.bufs_[0]
        cdef double[::1] r = self.bufs_[1]
        cdef Py_ssize_t[::1] s = self.bufs_[2]
        cdef long long[::1] u = self.bufs_[3]
        self.g, self.ys, self.kx = &a[0], &a[self.cap], &a[2 * self.cap]
        self.lb, self.ub = &a[3 * self.cap], &a[4 * self.cap]
        self.crow, self.cslot, self.clen, self.cuse = &r[0], &s[0], &s[cache_rows], &u[0]
        self.cache_rows = cache_rows
        self.tick = 0

    def share_caches(self, int parts):
        """Keep 1/``parts`` of the kernel-row cache (at least two rows: a direction search holds
        two), emptied (results never depend on it), and of the support set's dense rows
        (KernelCore.share_caches)."""
        cdef int e
        KernelCore.share_caches(self, parts)
        self.cache_rows = max(2, len(self.bufs_[3]) // max(parts, 1))
        for e in range(len(self.bufs_[3])):
            self.cslot[e] = -1

    # -- the support set and its gradients, kept in step ---------------------------------------

    cdef void pair(self, Py_ssize_t* i, Py_ssize_t* j) noexcept nogil:
        """i: the first slot s with alpha_s < B_s whose g_s is within TIE of the largest such g;
        j: the first slot s with alpha_s > A_s whose g_s is within TIE of the smallest (-1: none)."""
        cdef double e[2]
        cdef Py_ssize_t n = self.sv.n
        self.n_scans += 1
        okla_extremes(self.sv.coef, self.lb, self.ub, self.g, n, e)
        i[0] = -1 if e[0] == -INFINITY else okla_first(self.sv.coef, self.ub, self.g, n,
                                                        e[0] - TIE * (1.0 + fabs(e[0])), 1)
        j[0] = -1 if e[1] == INFINITY else okla_first(self.sv.coef, self.lb, self.g, n,
                                                       e[1] + TIE * (1.0 + fabs(e[1])), 0)

    cdef Py_ssize_t partner_of(self, double y) noexcept nogil:
        cdef Py_ssize_t i, j
        self.pair(&i, &j)
        return j if y > 0 else i

    cdef double* row_of(self, Py_ssize_t s) noexcept nogil:
        """k(x_s, x_t) for every SV t (k_ss = 1), from the cache or computed into it (NULL when
        the set could not compute it).  A cached row holds the values of the slots below its
        length clen; the SVs that joined since are computed when the row is used again, one by
        one when they are few (at most 1/8 of the set), else the whole row in SIMD lanes: each
        value as the full row computes it (query x_s, stored x_t)."""
        cdef int e, pick = -1, m
        cdef Py_ssize_t t, n = self.sv.n
        cdef const double* xv
        cdef const int* iv
        cdef double* r
        self.n_rows += 1
        self.tick += 1
        for e in range(self.cache_rows):
            if self.cslot[e] == s:
                self.cuse[e] = self.tick
                r = self.crow + e * self.cap
                if 8 * (n - self.clen[e]) <= n:
                    self.n_hits += 1
                    if self.clen[e] < n:
                        m = self.sv.entries(s, &xv, &iv)
                        for t in range(self.clen[e], n):
                            r[t] = 1.0 if t == s else self.sv.kernel_x(t, xv, iv, m, self.sv.sqn[s])
                        self.clen[e] = n
                    return r
                pick = e
                break
        if pick < 0:
            pick = 0
            for e in range(1, self.cache_rows):     # a free row, else the least recently used
                if self.cslot[pick] >= 0 and (self.cslot[e] < 0 or self.cuse[e] < self.cuse[pick]):
                    pick = e
        m = self.sv.entries(s, &xv, &iv)
        self.sv.kernel_row(xv, iv, m, self.sv.sqn[s])
        if self.sv.failed:
            return NULL
        r = self.crow + pick * self.cap
        memcpy(r, self.sv.k, n * sizeof(double))
        r[s] = 1.0
        self.cslot[pick] = s
        self.clen[pick] = n
        self.cuse[pick] = self.tick
        return r

    cdef void drop(self, Py_ssize_t s) noexcept nogil:
        """Remove SV s (the last slot moves into it, as SupportSet.remove) and its gradient; a
        cached row moves the last slot's value into s, computing it when the row does not hold it."""
        cdef Py_ssize_t last = self.sv.n - 1
        cdef int e, m
        cdef double* r
        cdef const double* xv
        cdef const int* iv
        for e in range(self.cache_rows):
            if self.cslot[e] < 0:
                continue
            r = self.crow + e * self.cap
            if self.clen[e] > last:
                r[s] = r[last]
                self.clen[e] = last
            elif self.clen[e] > s:                 # the value moving into s is not held: compute it
                if self.cslot[e] == last:
                    r[s] = 1.0
                elif self.cslot[e] != s:
                    m = self.sv.entries(self.cslot[e], &xv, &iv)
                    r[s] = self.sv.kernel_x(last, xv, iv, m, self.sv.sqn[self.cslot[e]])
            if self.cslot[e] == s:
                self.cslot[e] = -1
            elif self.cslot[e] == last:
                self.cslot[e] = s
        self.g[s] = self.g[last]
        self.ys[s] = self.ys[last]
        self.lb[s] = self.lb[last]
        self.ub[s] = self.ub[last]
        self.kx[s] = self.kx[last]
        self.sv.remove(s)

    cdef Py_ssize_t add(self, const double* x, const int* idx, int nnz, double y, double gk) noexcept nogil:
        """Append the example with alpha = 0 (the cached rows get its value when next used).
        Its slot, or -1."""
        cdef double zero = 0.0
        cdef Py_ssize_t n = self.sv.append(x, idx, nnz, self.xsq, &zero)
        if n < 0:
            return -1
        self.g[n] = gk
        self.ys[n] = y
        self.lb[n] = -self.c if y < 0 else 0.0
        self.ub[n] = self.c if y > 0 else 0.0
        self.kx[n] = 1.0
        return n

    cdef inline void set_alpha(self, Py_ssize_t s, double a) noexcept nogil:
        """alpha_s <- a, on a bound (0 or +-C) when within TIE * C of it: the bound tests (==)
        then do not depend on the rounding of the steps that led there."""
        if fabs(a - self.ub[s]) <= TIE * self.c:
            a = self.ub[s]
        elif fabs(a - self.lb[s]) <= TIE * self.c:
            a = self.lb[s]
        sv_set_alpha(self.sv, s, 0, a)

    cdef void search(self, Py_ssize_t i, Py_ssize_t j, const double* ki, const double* kj) noexcept nogil:
        """The direction search on the pair (i, j) with their kernel rows."""
        cdef double eta = 2.0 - 2.0 * ki[j], lam
        self.n_searches += 1
        cdef Py_ssize_t s
        if eta < 1e-12:
            eta = 1e-12
        cdef double ai = sv_alpha(self.sv, i, 0) , aj = sv_alpha(self.sv, j, 0)
        cdef int clip = 0
        lam = (self.g[i] - self.g[j]) / eta
        if self.ub[i] - ai <= lam:
            lam, clip = self.ub[i] - ai, 1
        if aj - self.lb[j] <= lam:
            lam, clip = aj - self.lb[j], 2
        # a clipped coefficient lands exactly on its bound (bound SVs are told apart with ==)
        self.set_alpha(i, self.ub[i] if clip == 1 else ai + lam)
        self.set_alpha(j, self.lb[j] if clip == 2 else aj - lam)
        for s in range(self.sv.n):
            self.g[s] -= lam * (ki[s] - kj[s])

    cdef Py_ssize_t victim(self) noexcept nogil:
        """The SV to leave a full set: the bound SV (|alpha| = C) of largest margin violation
        1 - y_s f(x_s) = y_s (g_s - b), if that exceeds 2 (f misclassifies it by more than the
        margin: an outlier the expansion has given up on); otherwise the SV of smallest |alpha|.
        The first slot within TIE of the extreme."""
        cdef Py_ssize_t s, n = self.sv.n
        cdef double a, worst = 2.0, small = INFINITY
        cdef bint outlier = False
        for s in range(n):
            a = fabs(sv_alpha(self.sv, s, 0))
            if a < small:
                small = a
            if a == self.c and self.ys[s] * (self.g[s] - self.b) > worst:
                worst = self.ys[s] * (self.g[s] - self.b)
                outlier = True
        if outlier:
            worst -= TIE * (1.0 + worst)
            for s in range(n):
                if fabs(sv_alpha(self.sv, s, 0)) == self.c and self.ys[s] * (self.g[s] - self.b) >= worst:
                    return s
        small += TIE * (1.0 + small)
        for s in range(n):
            if fabs(sv_alpha(self.sv, s, 0)) <= small:
                return s
        return 0

    cdef int absorb(self, double r, double* gk) noexcept nogil:
        """Give a removed SV's coefficient r to the SVs left, so that sum alpha stays 0: to the
        SV of largest gradient that can grow (r > 0; of smallest that can shrink, r < 0), up to
        its bound, then the next.  Of the moves that keep the sum, this loses the least dual
        objective to first order (the gradients are those without the removed SV)."""
        cdef Py_ssize_t i, j, u
        cdef double room, d
        cdef double* ku
        while r != 0.0:
            self.pair(&i, &j)
            u = i if r > 0.0 else j
            if u < 0:
                return 0                   # every SV at the bound (C too small for the budget)
            room = self.ub[u] - sv_alpha(self.sv, u, 0) if r > 0.0 else self.lb[u] - sv_alpha(self.sv, u, 0)
            if fabs(r) < fabs(room):
                d = r
                self.set_alpha(u, sv_alpha(self.sv, u, 0) + d)
            else:
                d = room
                self.set_alpha(u, self.ub[u] if r > 0.0 else self.lb[u])
            r -= d
            ku = self.row_of(u)
            if ku == NULL:
                return -1
            ok_axpy(<int>self.sv.n, -d, ku, self.g)
            gk[0] -= d * self.kx[u]
        return 0

    cdef inline double violation(self, double y, double gk, Py_ssize_t partner) noexcept nogil:
        return gk - self.g[partner] if y > 0 else self.g[partner] - gk

    # -- the protocol ---------------------------------------------------------------------------

    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        self.kernel_scores(x, idx, nnz, out)
        out[0] += self.b
        return -1 if self.sv.failed else 0

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double f
        self.kernel_scores(x, idx, nnz, out)
        if self.sv.failed:
            return -1
        f = out[0]
        out[0] = f + self.b
        memcpy(self.kx, self.sv.k, self.sv.n * sizeof(double))
        if self.process(x, idx, nnz, y, y - f) != 0:
            return -1
        return self.reprocess()

    cdef int process(self, const double* x, const int* idx, int nnz, double y, double gk) noexcept nogil:
        cdef Py_ssize_t partner, v, k
        cdef double av
        cdef double* kv
        cdef double* kp
        partner = self.partner_of(y)
        if partner >= 0 and not self.violation(y, gk, partner) > self.tau:
            return 0
        if self.sv.n >= self.budget:
            v = self.victim()
            av = sv_alpha(self.sv, v, 0)
            if av != 0.0:
                kv = self.row_of(v)
                if kv == NULL:
                    return -1
                ok_axpy(<int>self.sv.n, av, kv, self.g)
                gk += av * self.kx[v]
            self.drop(v)
            if av != 0.0 and self.absorb(av, &gk) != 0:
                return -1
            partner = self.partner_of(y)
            if partner >= 0 and not self.violation(y, gk, partner) > self.tau:
                return 0
        k = self.add(x, idx, nnz, y, gk)
        if k < 0:
            return -1
        if partner < 0:
            return 0
        kp = self.row_of(partner)
        if kp == NULL:
            return -1
        if y > 0:
            self.search(k, partner, self.kx, kp)
        else:
            self.search(partner, k, kp, self.kx)
        return 0

    cdef int reprocess(self) noexcept nogil:
        cdef Py_ssize_t i, j, s
        cdef double* ki
        cdef double* kj
        cdef double gmax, gmin
        self.pair(&i, &j)
        if i >= 0 and j >= 0 and self.g[i] - self.g[j] > self.tau:
            ki = self.row_of(i)
            if ki == NULL:
                return -1
            kj = self.row_of(j)            # evicts the least recently used row, never i's
            if kj == NULL:
                return -1
            self.search(i, j, ki, kj)
            self.pair(&i, &j)
        if i >= 0 and j >= 0:
            gmax, gmin = self.g[i], self.g[j]
            s = self.sv.n - 1
            while s >= 0:
                if sv_alpha(self.sv, s, 0) == 0.0 and (
                        (self.ys[s] < 0 and self.g[s] >= gmax) or (self.ys[s] > 0 and self.g[s] <= gmin)):
                    self.drop(s)
                s -= 1
            self.b = 0.5 * (gmax + gmin)
        elif i >= 0:
            self.b = self.g[i]
        elif j >= 0:
            self.b = self.g[j]
        else:
            self.b = 0.0
        return 0

    # -- state ----------------------------------------------------------------------------------

    @property
    def gradients(self):
        """The dual gradients g_s of the SVs (slot order)."""
        return np.array(self.bufs_[0][:self.sv.n])

    def get_state(self):
        st = KernelCore.get_state(self)
        n = self.sv.n
        st.update(c=self.c, tau=self.tau, b=self.b, budget=int(self.budget), cache_rows=int(self.cache_rows),
                  g=np.array(self.bufs_[0][:n]), ys=np.array(self.bufs_[0][self.cap:self.cap + n]))
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        budget = int(st["budget"])
        if budget < 2 or self.sv.budget != budget:
            raise ValueError("LASVM state: budget does not match the support set")
        self._setup_lasvm(budget, float(st["c"]), float(st["tau"]), int(st["cache_rows"]))
        n = self.sv.n
        g, ys = np.asarray(st["g"], dtype=np.float64), np.asarray(st["ys"], dtype=np.float64)
        if g.shape != (n,) or ys.shape != (n,) or not np.all(np.abs(ys) == 1.0):
            raise ValueError("LASVM state: gradients or labels do not match the support set")
        self.bufs_[0][:n] = g
        self.bufs_[0][self.cap:self.cap + n] = ys
        self.bufs_[0][3 * self.cap:3 * self.cap + n] = np.minimum(0.0, self.c * ys)
        self.bufs_[0][4 * self.cap:4 * self.cap + n] = np.maximum(0.0, self.c * ys)
        if self.sv.scale != 1.0:         # the scans read the stored coefficients as alpha
            raise ValueError("LASVM state: the support set's scale must be 1")
        self.b = float(st["b"])


class LASVM(KernelLearner):
    """LASVM on a budget: an online SVM solver (SMO steps on the dual as examples arrive, with
    a reprocessing step after each) whose support set is bounded.

    Bordes, Ertekin, Weston & Bottou, "Fast kernel classifiers with online and active learning",
    JMLR 6, 2005 (PROCESS / REPROCESS, one pass, no finishing step), with a budget: at B support
    vectors the one with the smallest absolute coefficient leaves before a new one joins (its share of the
    dual gradients is given back).  Gaussian kernel, binary classification.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width of exp(-gamma ||x - x'||^2); 'auto' (default): chosen online on the first
        few thousand examples (onlinekern.selection); the 'paper' preset: 1 / n_features.
    c : float
        The box C of the dual (alpha_s y_s in [0, C]) (10).
    budget : int or 'auto'
        Most support vectors B (>= 2); 'auto' (default): 1,000 (the 'paper' preset too).
    tau : float
        Tolerance of a violating pair (LASVM's 0.001).
    cache_rows : int
        Kernel rows of support vectors kept between steps (>= 2; 32); results do not depend on it.
    preset : {'auto', 'paper'}
        As for every learner.
    seed : int
        Seed (used by the width selection).
    n_threads : int or None
        Threads for the kernel rows (None: all cores, or OMP_NUM_THREADS); results do not depend on it.
    """

    family = "lasvm"
    tasks = ("binary",)
    summary = "LASVM on a budget: online SMO steps with reprocessing (an exact SVM's accuracy in one pass)"
    paper = "Bordes, Ertekin, Weston & Bottou, JMLR 2005"
    paper_defaults = {"gamma": None, "budget": AUTO_BUDGET}

    def __init__(self, gamma="auto", c=10.0, budget="auto", tau=1e-3, cache_rows=32, preset="auto", seed=0,
                 n_threads=None):
        self.gamma = gamma
        self.c = c
        self.budget = budget
        self.tau = tau
        self.cache_rows = cache_rows
        self.preset = preset
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        super()._validate_params()
        check_positive("c", self.c)
        check_nonnegative("tau", self.tau)
        if isinstance(self.cache_rows, bool) or not isinstance(self.cache_rows, (int, np.integer)) \
                or self.cache_rows < 2:
            raise ValueError(f"cache_rows must be an integer >= 2, got {self.cache_rows!r}")

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = LASVMCore()
        budget = int(self.param_value("budget"))
        if budget < 2:
            raise ValueError(f"budget must be at least 2 for LASVM, got {budget}")
        core._setup_kernel(n_features, task, n_outputs, gamma, budget, self._n_threads())
        core._setup_lasvm(budget, float(self.c), float(self.tau), int(self.cache_rows))
        return core

    @property
    def intercept_(self):
        """The bias b of the decision function."""
        self._check_fitted()
        return float(self.core_.b)
