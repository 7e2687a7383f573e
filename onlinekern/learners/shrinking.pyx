# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Shrinking Gradient (Livni, Carmon & Globerson, ICML 2017, Algorithms 1-2), ALGORITHMS.md §3.16.

Squared-loss online gradient descent in span{Phi(x_i)} when the kernel is reachable only through
random features psi(x; w) with E_w[psi(x; w) psi(x'; w)] = k(x, x').  At step t:

1. E_t = EST(alpha, x_t, m) (Algorithm 2): m times draw i with probability |alpha_i|/||alpha||_1
   and a fresh feature w, E^(k) = sign(alpha_i) psi(x_i; w) psi(x_t; w); E_t = ||alpha||_1/m sum_k E^(k).
   Record with f = E_t.
2. If |E_t| < 16 B_n: alpha_t = eta (y_t - E_t) and x_t joins; else alpha <- alpha/4.

The sampler over |alpha_i| is a Fenwick tree built by appends only (coefficients never change
after insertion except through a global scale, which leaves the distribution unchanged), so a
draw and an append are O(log t).  Random numbers come from the counter-based generator
include/ok_rng.h, not from numpy's PCG64 (see ``ShrinkingGradient`` for the element layout).
"""
from libc.math cimport fabs, sqrt, pow
from libc.string cimport memcpy
from libc.stdint cimport uint64_t
from libc.stdlib cimport realloc, free
from cython.parallel cimport prange, threadid

from onlinekern._core.learner cimport TASK_MULTICLASS
from onlinekern._core.support cimport KernelCore, row_sqnorm, sv_alpha, sv_set_alpha, STORE_DENSE
from onlinekern._core.counter_rng cimport ok_uniform, ok_normal, ok_normals, ok_normals_at, ok_mix64
from onlinekern._core.vmath cimport ok_dot, ok_vcossin

import numpy as np

from onlinekern.base import (PARAM_CHECKS, KernelLearner, is_auto,
                             check_positive as _positive, check_positive_int as _positive_int)
from onlinekern.seeding import ESTIMATOR as _ESTIMATOR_STREAM

cdef unsigned int ESTIMATOR = 4          # ALGORITHMS.md §1.5 stream ESTIMATOR
cdef uint64_t POST_KEY = 1ULL << 63      # key1 of the j-th call after training: 2^63 + j
cdef double RENORM = 1e-100              # §1.1: renormalise the scale below this
cdef double SQRT2 = 1.4142135623730951
cdef double TWO_PI = 6.283185307179586
cdef Py_ssize_t PAR_WORK = 16384         # the SupportSet's measured threshold for prange
cdef double CV_RATE = 0.01               # the control value's running-mean rate (reduce_variance)

assert _ESTIMATOR_STREAM == ESTIMATOR

#: First horizon of the product preset's doubling schedule when T is unknown (ShrinkingGradient.eta_).
ANYTIME_T0 = 1
#: The product preset's step with exact predictions (ShrinkingGradient.eta_).
PRODUCT_ETA = 0.3
#: The product preset's budget (``budget="auto"``): at most this many SVs, the oldest replaced.
PRODUCT_BUDGET = 8000

# ---- random features psi(x; w) ---------------------------------------------------------------
# One enum value per feature.  A sample draws w from elements first, first + 1, ... of the counter
# stream (seed, ESTIMATOR, key1); coordinate_product returns psi(x_i; w) psi(x; w), and the Fourier
# product (sqrt(2) cos(w^T x_i + b)) (sqrt(2) cos(w^T x + b)) is formed in ShrinkingCore.estimate
# from fourier_args, with the cos of all samples in one vector call.  feature_stride says how many elements one sample occupies (including
# the uniform that picks i), and ShrinkingCore.exact_scores holds the matching exact kernel.

cdef enum Feature:
    FEATURE_FOURIER = 0       # sqrt(2) cos(w^T x + b), w ~ N(0, 2g I), b ~ U[0, 2 pi): Gaussian kernel
    FEATURE_COORDINATE = 1    # sqrt(d) x_w, w uniform over coordinates: linear kernel x^T x'

FEATURES = {"fourier": FEATURE_FOURIER, "coordinate": FEATURE_COORDINATE}
FEATURE_NAMES = {v: k for k, v in FEATURES.items()}


cdef inline Py_ssize_t feature_stride(int feature, int d) noexcept nogil:
    # element 0: the uniform that picks i.  Fourier: element 1 the uniform for b, elements 2..d+1
    # the normals of w, padded to an even count so every sample starts on a Philox block (a
    # uniform and a normal in the same block are dependent: ok_rng.h derives both from it).
    if feature == FEATURE_FOURIER:
        return 2 + <Py_ssize_t>d + (d & 1)
    return 2


cdef inline double query_coord(const double* x, const int* idx, int nnz, int d, int w) noexcept nogil:
    """x_w of a row given as (data, sorted indices, nnz)."""
    cdef int lo = 0, hi = nnz - 1, mid
    if nnz == d:
        return x[w]
    while lo <= hi:
        mid = (lo + hi) >> 1
        if idx[mid] == w:
            return x[mid]
        if idx[mid] < w:
            lo = mid + 1
        else:
            hi = mid - 1
    return 0.0


cdef inline double query_dot(const double* v, const double* x, const int* idx, int nnz, int d) noexcept nogil:
    """v^T x for a dense v[0:d] and a (possibly sparse) row."""
    cdef int k
    cdef double s = 0.0
    if nnz == d:
        return ok_dot(v, x, d)
    for k in range(nnz):
        s += v[idx[k]] * x[k]
    return s


cdef inline int coordinate_of(uint64_t seed, uint64_t key1, uint64_t first, int d) noexcept nogil:
    """The coordinate w = floor(d u) of the coordinate feature, u from element first."""
    cdef int c = <int>(ok_uniform(seed, ESTIMATOR, key1, first) * d)
    if c >= d:
        c = d - 1
    return c


cdef inline double coordinate_product(uint64_t seed, uint64_t key1, uint64_t first, double sqrtd,
                                      const double* xi, const double* x, const int* idx, int nnz, int d) noexcept nogil:
    """psi(x_i) psi(x) for psi = sqrt(d) x_w, w = floor(d u) from element first."""
    cdef int c = coordinate_of(seed, key1, first, d)
    return (sqrtd * xi[c]) * (sqrtd * query_coord(x, idx, nnz, d, c))


cdef enum:
    NORMAL_CHUNK = 64     # normals drawn per ok_normals_at call (its vector block, on the stack)


cdef inline double normal_dot(uint64_t seed, uint64_t key1, uint64_t first, const double* x, const int* idx,
                              int nnz) noexcept nogil:
    """w^T x with w_j = the normal of element first + j, drawn only at x's nonzeros (wide data:
    the same w as the dense path's batch of d normals, ok_normals_at agreeing with ok_normals)."""
    return normal_dot_cols(seed, key1, first, x, idx, NULL, nnz)


cdef inline double normal_dot_cols(uint64_t seed, uint64_t key1, uint64_t first, const double* x, const int* idx,
                                   const int* col_of, int nnz) noexcept nogil:
    """sum_k w_{c_k} x[k] over the nonzero x[k], c_k = idx[k] (or col_of[idx[k]] when col_of is
    given; idx NULL: k), in x's order; the normals are drawn in vector blocks of NORMAL_CHUNK."""
    cdef double w[NORMAL_CHUNK]
    cdef double v[NORMAL_CHUNK]
    cdef int c[NORMAL_CHUNK]
    cdef int k, j, m = 0
    cdef double s = 0.0
    for k in range(nnz + 1):
        if m == NORMAL_CHUNK or (k == nnz and m > 0):
            ok_normals_at(seed, ESTIMATOR, key1, first, c, w, m)
            for j in range(m):
                s += w[j] * v[j]
            m = 0
        if k < nnz and x[k] != 0.0:
            j = k if idx == NULL else idx[k]
            c[m] = j if col_of == NULL else col_of[j]
            v[m] = x[k]
            m += 1
    return s


cdef inline uint64_t row_key(const double* x, const int* idx, int nnz, int d) noexcept nogil:
    """A 63-bit key that is a function of the row's nonzero (index, value) pairs only (the same
    for its dense and sparse forms): the stream key of a row's estimate after training under
    ``row_keys``."""
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL, v
    cdef int k, j
    for k in range(nnz):
        if x[k] == 0.0:
            continue
        j = k if nnz == d else idx[k]
        memcpy(&v, &x[k], 8)
        h = ok_mix64(h ^ ok_mix64(v + 0x632BE59BD9B4E019ULL * <uint64_t>(j + 1)))
    return h >> 1


cdef inline Py_ssize_t lowbit(Py_ssize_t j) noexcept nogil:
    return j & (-j)


cdef class ShrinkingCore(KernelCore):
    """Compiled Shrinking Gradient: SVs in the SupportSet (its scale stays 1; the coefficient of
    SV i for output c is scale[c] * coef_ic), one global scale and one Fenwick tree per output."""
    cdef public double eta, norm_bound
    cdef readonly int n_samples
    cdef readonly int predict_samples    # m of the EST calls after training (ext)
    cdef public bint exact_predict
    cdef readonly int feature
    cdef readonly uint64_t seed
    cdef readonly long long n_pred       # EST calls after training so far (keys 2^63 + j)
    cdef public bint row_keys            # after training: key 2^63 + hash(row), not 2^63 + j
    cdef public bint reduce_variance     # paired Fourier feature and control value (product)
    cdef public double eta_coef, eta_power   # anytime step: eta = eta_coef / t_epoch^eta_power
    cdef public long long t_epoch        # > 0: the doubling schedule's current horizon
    cdef public Py_ssize_t budget        # > 0: at most this many SVs, a new one replaces the oldest
    cdef double sqrt2g, sqrtd
    cdef Py_ssize_t stride
    cdef object buf_                     # keeps scale / total / ebuf / a alive
    cdef double* scale                   # C: alpha_ic = scale[c] * coef_ic
    cdef double* total                   # C: ||coef_c||_1 of the last estimate
    cdef double* ebuf                    # C * max(m, m_pred): the samples E^(k), summed in order
    cdef double* a                       # C: new scaled coefficients
    cdef double* ssum                    # C: sum_i coef_ic (signed; alpha sums to scale * ssum)
    cdef double* cv                      # C: control value (running mean of the products)
    cdef double* sgnsum                  # C: sum of the last estimate's signs
    cdef double* ksum                    # C: sum of the last estimate's unsigned products
    cdef int n_scr                       # threads an estimate may use
    cdef double* tree                    # fcap * C Fenwick nodes (1-based node j at (j-1)*C)
    cdef Py_ssize_t fcap
    cdef double* nbuf                    # the normals of one estimate's samples (Fourier feature)
    cdef Py_ssize_t nbuf_cap
    cdef double* sbuf                    # per sample: target, then 2 cos arguments, 2 cos, 2 sin
    cdef Py_ssize_t* slot                # per sample: the drawn SV
    cdef Py_ssize_t sbuf_cap

    def __dealloc__(self):
        free(self.tree)
        free(self.nbuf)
        free(self.sbuf)
        free(self.slot)

    def _setup_shrinking(self, double eta, double norm_bound, int n_samples, bint exact_predict,
                         int feature, seed, int predict_samples=0):
        """predict_samples: m of the estimates after training (0: n_samples)."""
        cdef int c
        if feature not in FEATURE_NAMES:
            raise ValueError(f"unknown feature code {feature}")
        if not (eta > 0 and np.isfinite(eta)) or not (norm_bound > 0 and np.isfinite(norm_bound)) or n_samples < 1:
            raise ValueError("eta and norm_bound must be > 0 and n_samples >= 1")
        if predict_samples < 0:
            raise ValueError(f"predict_samples must be >= 1 (0: n_samples), got {predict_samples}")
        if not 0 <= int(seed) < 2 ** 64:
            raise ValueError(f"seed must lie in [0, 2^64) for the counter-based generator, got {seed}")
        self.eta, self.norm_bound, self.n_samples = eta, norm_bound, n_samples
        self.predict_samples = predict_samples if predict_samples > 0 else n_samples
        self.exact_predict, self.feature, self.seed = exact_predict, feature, <uint64_t>int(seed)
        self.n_pred = 0
        self.sqrt2g = sqrt(2.0 * self.gamma)
        self.sqrtd = sqrt(<double>self.n_features)
        self.stride = feature_stride(feature, self.n_features)
        cdef int C = self.n_outputs
        self.buf_ = np.zeros(7 * C + C * max(n_samples, self.predict_samples))
        cdef double[::1] v = self.buf_
        self.scale, self.total, self.a, self.ebuf = &v[0], &v[C], &v[2 * C], &v[7 * C]
        self.ssum, self.cv, self.sgnsum, self.ksum = &v[3 * C], &v[4 * C], &v[5 * C], &v[6 * C]
        self.row_keys = self.reduce_variance = False
        self.t_epoch = 0
        self.budget = 0
        for c in range(C):
            self.scale[c] = 1.0
        self._alloc_scratch()
        self._rebuild_trees()

    def _alloc_scratch(self):
        self.n_scr = max(1, self.n_threads)

    def set_threads(self, int n):
        KernelCore.set_threads(self, n)
        self._alloc_scratch()

    # -- the sampler: a Fenwick tree over |coef_ic| per output, built by appends only ----------
    cdef int tree_reserve(self, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t cap = self.fcap if self.fcap else 64
        cdef void* p
        if n <= self.fcap:
            return 0
        while cap < n:
            cap *= 2
        p = realloc(self.tree, cap * self.n_outputs * sizeof(double))
        if p == NULL:
            return -1
        self.tree = <double*>p
        self.fcap = cap
        return 0

    cdef void tree_set(self, Py_ssize_t n, int c, double v) noexcept nogil:
        """Node n (1-based) covers (n - lowbit(n), n]: v plus the nodes that tile (n - lowbit(n), n - 1]."""
        cdef int C = self.n_outputs
        cdef Py_ssize_t j = n - 1, lim = n - lowbit(n)
        cdef double s = v
        while j > lim:
            s += self.tree[(j - 1) * C + c]
            j -= lowbit(j)
        self.tree[(n - 1) * C + c] = s

    cdef void tree_add(self, Py_ssize_t n, int c, double delta) noexcept nogil:
        """Weight of slot n (1-based) += delta: the nodes covering it, n, n + lowbit(n), ..."""
        cdef int C = self.n_outputs
        while n <= self.sv.n:
            self.tree[(n - 1) * C + c] += delta
            n += lowbit(n)

    cdef double tree_total(self, int c) noexcept nogil:
        cdef int C = self.n_outputs
        cdef Py_ssize_t j = self.sv.n
        cdef double s = 0.0
        while j > 0:
            s += self.tree[(j - 1) * C + c]
            j -= lowbit(j)
        return s

    cdef void tree_find_many(self, int c, double* target, Py_ssize_t* pos, Py_ssize_t k) noexcept nogil:
        """pos[s] = the slot i with prefix(i) <= target[s] < prefix(i + 1) for s < k (slots of weight
        0 are skipped; target is consumed).  The k walks go down the tree together, level by
        level, branch-free: whether a walk goes right is a coin flip no branch predictor learns,
        and the walks' loads are independent, so they overlap.  A target that reaches the total
        through rounding takes the last slot of nonzero weight."""
        cdef int C = self.n_outputs
        cdef Py_ssize_t n = self.sv.n, step = 1, nxt, q, p
        cdef double v
        cdef int right
        for q in range(k):
            pos[q] = 0
        while step * 2 <= n:
            step *= 2
        while step > 0:
            for q in range(k):
                nxt = pos[q] + step
                if nxt <= n:
                    # t - v * 0 is t (also for -0.0: the tree's weights are finite and >= 0)
                    v = self.tree[(nxt - 1) * C + c]
                    right = v <= target[q]
                    pos[q] += step * right
                    target[q] -= v * right
            step >>= 1
        for q in range(k):
            if pos[q] >= n:
                p = n - 1
                while p > 0 and sv_alpha(self.sv, p, c) == 0.0:
                    p -= 1
                pos[q] = p

    def _rebuild_trees(self):
        cdef Py_ssize_t n = self.sv.n, i
        cdef int c
        if self.tree_reserve(max(n, 1)) != 0:
            raise MemoryError("cannot allocate the sampling tree")
        for c in range(self.n_outputs):
            self._rebuild_tree(c)

    cdef void _rebuild_tree(self, int c) noexcept nogil:
        cdef Py_ssize_t i
        self.ssum[c] = 0.0
        for i in range(self.sv.n):
            self.tree_set(i + 1, c, fabs(sv_alpha(self.sv, i, c)))
            self.ssum[c] += sv_alpha(self.sv, i, c)

    cdef void shrink(self, int c, double f) noexcept nogil:
        """alpha_c <- f alpha_c in O(1); renormalising (O(n)) when the scale underflows (§1.1)."""
        cdef Py_ssize_t i
        self.scale[c] *= f
        if self.scale[c] < RENORM:
            for i in range(self.sv.n):
                self.sv.set_alpha(i, c, sv_alpha(self.sv, i, c) * self.scale[c])
            self.scale[c] = 1.0
            self._rebuild_tree(c)

    # -- EST (Algorithm 2) ----------------------------------------------------------------------
    cdef void fourier_args(self, Py_ssize_t s, int m, uint64_t key1, const double* x, const int* idx, int nnz,
                           double* sgn, double* arg) noexcept nogil:
        """Sample s (output s // m, SV slot[s]): its two cos arguments w^T x_i + b and w^T x + b
        into arg[2 s], arg[2 s + 1] and sign(alpha_ic) into sgn[s] (zeros when alpha_c = 0).
        b comes from element s stride + 1, w = sqrt(2g) times the normals from s stride + 2."""
        cdef int c = <int>(s // m)
        cdef Py_ssize_t i = self.slot[s]
        cdef uint64_t base = <uint64_t>s * <uint64_t>self.stride
        cdef const double* w = self.nbuf + s * self.stride + 2
        cdef double b
        if not self.total[c] > 0.0:
            arg[2 * s] = 0.0
            arg[2 * s + 1] = 0.0
            return
        # paired feature (reduce_variance): [cos, sin](w^T x), products cos(w^T (x_i - x)), no b
        b = 0.0 if self.reduce_variance else TWO_PI * ok_uniform(self.seed, ESTIMATOR, key1, base + 1)
        if self.sv.mode == STORE_DENSE:
            arg[2 * s] = self.sqrt2g * ok_dot(w, self.sv.row(i), self.n_features) + b
            arg[2 * s + 1] = self.sqrt2g * query_dot(w, x, idx, nnz, self.n_features) + b
        else:
            # wide data: the normals of the columns present only (nbuf is not filled)
            arg[2 * s] = self.sqrt2g * self.sv_normal_dot(i, key1, base + 2) + b
            arg[2 * s + 1] = self.sqrt2g * normal_dot(self.seed, key1, base + 2, x, idx, nnz) + b
        sgn[s] = 1.0 if sv_alpha(self.sv, i, c) > 0.0 else -1.0

    cdef double sv_normal_dot(self, Py_ssize_t i, uint64_t key1, uint64_t first) noexcept nogil:
        """w^T x_i (see normal_dot) over SV i's stored nonzeros (compact or slab layout: stored
        column -> original column through the support set's column map); reads only."""
        cdef const double* v
        cdef const int* cols
        cdef int m = self.sv.sv_nz(i, &v, &cols)
        return normal_dot_cols(self.seed, key1, first, v, cols, self.sv.cmap.cols, m)

    cdef int reserve_samples(self, Py_ssize_t n_work) noexcept nogil:
        cdef double* grown
        cdef Py_ssize_t* sgrown
        if n_work <= self.sbuf_cap:
            return 0
        grown = <double*>realloc(self.sbuf, 7 * n_work * sizeof(double))
        if grown == NULL:
            return -1
        self.sbuf = grown
        sgrown = <Py_ssize_t*>realloc(self.slot, n_work * sizeof(Py_ssize_t))
        if sgrown == NULL:
            return -1
        self.slot = sgrown
        self.sbuf_cap = n_work
        return 0

    cdef int estimate(self, const double* x, const int* idx, int nnz, uint64_t key1, int m,
                       double* ebuf, double* out) noexcept nogil:
        """out[c] = EST(alpha_c, x, m) with stream key key1; samples land in ebuf[c m + k] and are
        summed in k order, so the result does not depend on the number of threads.

        Sample s = c m + k reads its uniforms and normals from elements s stride .. of the stream:
        the SV pick from element s stride, then the feature (Fourier: b from element s stride + 1,
        the normals from s stride + 2; coordinate: the coordinate from s stride + 1).  The picks
        of an output's m samples walk its tree together (tree_find_many), and the Fourier cos of
        all 2 C m arguments are one ok_vcossin call."""
        cdef int C = self.n_outputs, c, nt = self.n_threads, j
        cdef Py_ssize_t s, k, n_work = <Py_ssize_t>C * m, need = n_work * self.stride
        cdef double acc, sgn
        cdef double* grown
        cdef double* target
        cdef double* arg
        cdef double* cs
        cdef double* sn
        for c in range(C):
            self.total[c] = self.tree_total(c) if self.sv.n > 0 else 0.0
        if n_work == 0:
            return 0
        if self.reserve_samples(n_work) != 0:
            return -1
        target, arg = self.sbuf, self.sbuf + n_work
        cs, sn = self.sbuf + 3 * n_work, self.sbuf + 5 * n_work
        if self.feature == FEATURE_FOURIER and self.sv.mode == STORE_DENSE:
            # every sample's normals in one call (vector Box-Muller over the whole range; the
            # uniforms' elements are drawn too and ignored): element-wise the same numbers
            if need > self.nbuf_cap:
                grown = <double*>realloc(self.nbuf, need * sizeof(double))
                if grown == NULL:
                    return -1
                self.nbuf = grown
                self.nbuf_cap = need
            ok_normals(self.seed, ESTIMATOR, key1, 0, self.nbuf, need)
        # 1. pick i with probability |alpha_ic| / ||alpha_c||_1 for every sample
        for c in range(C):
            if not self.total[c] > 0.0:
                continue
            for k in range(m):
                s = <Py_ssize_t>c * m + k
                target[s] = ok_uniform(self.seed, ESTIMATOR, key1, <uint64_t>s * <uint64_t>self.stride) * self.total[c]
            self.tree_find_many(c, target + <Py_ssize_t>c * m, self.slot + <Py_ssize_t>c * m, m)
        # 2. the feature products
        if nt > self.n_scr:
            nt = self.n_scr
        if self.feature == FEATURE_FOURIER:
            # target (consumed by the walks) now holds each sample's sign
            if nt > 1 and n_work * ((self.n_features if self.sv.mode == STORE_DENSE else 2 * nnz) + 8) >= PAR_WORK:
                for s in prange(n_work, num_threads=nt, schedule="static"):
                    self.fourier_args(s, m, key1, x, idx, nnz, target, arg)
            else:
                for s in range(n_work):
                    self.fourier_args(s, m, key1, x, idx, nnz, target, arg)
            ok_vcossin(arg, cs, sn, <int>(2 * n_work))
            if self.reduce_variance:
                for c in range(C):
                    self.sgnsum[c] = 0.0
                    self.ksum[c] = 0.0
                for s in range(n_work):
                    if self.total[s // m] > 0.0:
                        # cos(w^T x_i) cos(w^T x) + sin(w^T x_i) sin(w^T x) = cos(w^T (x_i - x))
                        acc = cs[2 * s] * cs[2 * s + 1] + sn[2 * s] * sn[2 * s + 1]
                        self.ksum[s // m] += acc
                        self.sgnsum[s // m] += target[s]
                        ebuf[s] = target[s] * acc
            else:
                for s in range(n_work):
                    if self.total[s // m] > 0.0:
                        # (sqrt2 cos(w^T x_i + b)) (sqrt2 cos(w^T x + b)), signed
                        ebuf[s] = target[s] * ((SQRT2 * cs[2 * s]) * (SQRT2 * cs[2 * s + 1]))
        else:
            for s in range(n_work):
                if self.total[s // m] > 0.0:
                    c = <int>(s // m)
                    sgn = 1.0 if sv_alpha(self.sv, self.slot[s], c) > 0.0 else -1.0
                    if self.sv.mode == STORE_DENSE:
                        ebuf[s] = sgn * coordinate_product(self.seed, key1, <uint64_t>s * <uint64_t>self.stride + 1,
                                                           self.sqrtd, self.sv.row(self.slot[s]), x, idx, nnz,
                                                           self.n_features)
                    else:
                        j = coordinate_of(self.seed, key1, <uint64_t>s * <uint64_t>self.stride + 1, self.n_features)
                        ebuf[s] = sgn * ((self.sqrtd * self.sv.value_at(self.slot[s], j))
                                         * (self.sqrtd * query_coord(x, idx, nnz, self.n_features, j)))
        for c in range(C):
            if not self.total[c] > 0.0:          # alpha = 0: EST returns 0 (Algorithm 2)
                out[c] = 0.0
                continue
            acc = 0.0
            for k in range(m):
                acc += ebuf[<Py_ssize_t>c * m + k]
            if self.reduce_variance and self.feature == FEATURE_FOURIER:
                # control variate: sum_i alpha_i cv + ||alpha||_1 / m sum_k sign_k (k_k - cv), unbiased
                # for any cv fixed before the draws (cv: the running mean of past products)
                out[c] = self.scale[c] * (self.cv[c] * self.ssum[c]
                                          + (self.total[c] / m) * (acc - self.cv[c] * self.sgnsum[c]))
            else:
                out[c] = (self.scale[c] * self.total[c] / m) * acc
        return 0

    cdef void exact_scores(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        """out[c] = sum_i alpha_ic k(x_i, x) with the feature's own kernel."""
        cdef int C = self.n_outputs, c
        cdef Py_ssize_t i
        cdef double kv
        if self.feature == FEATURE_FOURIER:
            self.sv.predict(x, idx, nnz, self.xsq, out)      # Gaussian kernel, SV scale is 1
        else:
            for c in range(C):
                out[c] = 0.0
            if self.sv.mode != STORE_DENSE:
                self.sv.linear_row(x, idx, nnz)              # wide data: x_i^T x into sv.k
            for i in range(self.sv.n):                       # linear kernel x_i^T x
                if self.sv.mode == STORE_DENSE:
                    kv = query_dot(self.sv.row(i), x, idx, nnz, self.n_features)
                else:
                    kv = self.sv.k[i]
                for c in range(C):
                    out[c] += sv_alpha(self.sv, i, c) * kv
        for c in range(C):
            out[c] *= self.scale[c]

    # -- the learner interface -------------------------------------------------------------------
    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        cdef uint64_t key
        self.xsq = row_sqnorm(x, nnz)
        if self.exact_predict:
            self.exact_scores(x, idx, nnz, out)
        else:
            if self.row_keys:
                key = POST_KEY + row_key(x, idx, nnz, self.n_features)
            else:
                key = POST_KEY + <uint64_t>self.n_pred
            if self.estimate(x, idx, nnz, key, self.predict_samples, self.ebuf, out) != 0:
                return -1
            self.n_pred += 1
        return 0

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef int C = self.n_outputs, c
        cdef double target, old, thr = 16.0 * self.norm_bound
        cdef bint add = False
        cdef Py_ssize_t n = self.sv.n, i
        self.xsq = row_sqnorm(x, nnz)
        # the doubling schedule (T unknown): horizon 2^k for steps 2^(k-1) < t <= 2^k, continued
        if self.t_epoch > 0 and self.n_seen + 1 > self.t_epoch:
            while self.n_seen + 1 > self.t_epoch:
                self.t_epoch *= 2
            self.eta = self.eta_coef / pow(<double>self.t_epoch, self.eta_power)
        # 1. E_t = EST(alpha, x_t, m) with stream key t (1-based step)
        if self.exact_predict:
            self.exact_scores(x, idx, nnz, out)
        else:
            if self.estimate(x, idx, nnz, <uint64_t>(self.n_seen + 1), self.n_samples, self.ebuf, out) != 0:
                return -1
            if self.reduce_variance and self.feature == FEATURE_FOURIER:
                for c in range(C):
                    if self.total[c] > 0.0:
                        self.cv[c] += CV_RATE * (self.ksum[c] / self.n_samples - self.cv[c])
        # 2. per output: a descent step alpha_t = eta (y - E_t), or the shrink alpha <- alpha / 4.
        # Algorithm 1 prints alpha_t = -eta (y_t - E_t); the text (f_{t+1} = f_t - eta grad,
        # eqs. 9-12) and the proof of Lemma 5 use the descent sign taken here (§3.16, §6.9).
        for c in range(C):
            if self.task == TASK_MULTICLASS:        # one-vs-rest targets +-1 (ext)
                target = 1.0 if c == <int>y else -1.0
            else:
                target = y
            if fabs(out[c]) < thr:
                self.a[c] = self.eta * (target - out[c]) / self.scale[c]
                add = add or self.a[c] != 0.0
            else:
                self.shrink(c, 0.25)
                self.a[c] = 0.0
        # a zero coefficient changes nothing (and kernel OGD skips g = 0 the same way, §3.2)
        if not add:
            return 0
        if self.budget > 0 and n >= self.budget:
            # the budget (product preset): the new SV takes the oldest one's slot
            i = self.sv.oldest()
            for c in range(C):
                old = sv_alpha(self.sv, i, c)
                self.tree_add(i + 1, c, fabs(self.a[c]) - fabs(old))
                self.ssum[c] += self.a[c] - old
            return self.sv.replace(i, x, idx, nnz, self.xsq, self.a)
        if self.tree_reserve(n + 1) != 0 or self.sv.append(x, idx, nnz, self.xsq, self.a) < 0:
            return -1
        for c in range(C):
            self.tree_set(n + 1, c, fabs(self.a[c]))
            self.ssum[c] += self.a[c]
        return 0

    # -- Python access (tests, tools) ------------------------------------------------------------
    def estimate_py(self, x, int m, key):
        """EST(alpha, x, m) for a dense x with stream key ``key`` (no counters change): (C,) array."""
        if m < 1:
            raise ValueError("m must be >= 1")
        cdef double[::1] xv = np.ascontiguousarray(x, dtype=np.float64)
        if xv.shape[0] != self.n_features:
            raise ValueError("x has the wrong dimension")
        idx = np.arange(self.n_features, dtype=np.int32)
        cdef int[::1] iv = idx
        eb = np.zeros(self.n_outputs * m)
        out = np.zeros(self.n_outputs)
        cdef double[::1] ev = eb, ov = out
        cdef uint64_t k1 = <uint64_t>int(key)
        cdef int status
        with nogil:
            self.xsq = row_sqnorm(&xv[0], self.n_features)
            status = self.estimate(&xv[0], &iv[0], self.n_features, k1, m, &ev[0], &ov[0])
        if status != 0:
            raise MemoryError("could not allocate the estimator's normals")
        return out

    def exact_py(self, x):
        """sum_i alpha_ic k(x_i, x) for a dense x with the feature's kernel: (C,) array."""
        cdef double[::1] xv = np.ascontiguousarray(x, dtype=np.float64)
        if xv.shape[0] != self.n_features:
            raise ValueError("x has the wrong dimension")
        idx = np.arange(self.n_features, dtype=np.int32)
        cdef int[::1] iv = idx
        out = np.zeros(self.n_outputs)
        cdef double[::1] ov = out
        self.xsq = row_sqnorm(&xv[0], self.n_features)
        self.exact_scores(&xv[0], &iv[0], self.n_features, &ov[0])
        return out

    def sample_index(self, int c, u):
        """Slots drawn by the Fenwick sampler of output c for uniforms u (tests)."""
        uu = np.ascontiguousarray(u, dtype=np.float64)
        if self.sv.n == 0:
            raise ValueError("the model is empty")
        if not 0 <= c < self.n_outputs:
            raise ValueError("no such output")
        cdef double tot = self.tree_total(c)
        target = uu * tot
        slots = np.zeros(uu.shape[0], dtype=np.intp)
        cdef double[::1] tv = target
        cdef Py_ssize_t[::1] slv = slots
        if uu.shape[0]:
            self.tree_find_many(c, &tv[0], &slv[0], uu.shape[0])
        return slots.astype(np.int64, copy=False)

    @property
    def alpha(self):
        """(n, C) true coefficients alpha_ic = scale[c] coef_ic."""
        return self.sv.coefficients * self.scales[None, :]

    @property
    def scales(self):
        return np.array([self.scale[c] for c in range(self.n_outputs)])

    @property
    def alpha_norm1(self):
        """||alpha_c||_1 per output, as the sampler sees it (scale times the tree total)."""
        return np.array([self.scale[c] * (self.tree_total(c) if self.sv.n else 0.0) for c in range(self.n_outputs)])

    @property
    def feature_name(self):
        return FEATURE_NAMES[self.feature]

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(eta=self.eta, norm_bound=self.norm_bound, n_samples=self.n_samples,
                  predict_samples=self.predict_samples, exact_predict=int(self.exact_predict), feature=FEATURE_NAMES[self.feature],
                  seed=int(self.seed), n_pred=int(self.n_pred), scale=self.scales)
        st.update(budget=int(self.budget), row_keys=int(self.row_keys), reduce_variance=int(self.reduce_variance),
                  eta_coef=float(self.eta_coef), eta_power=float(self.eta_power), t_epoch=int(self.t_epoch),
                  control=np.array([self.cv[c] for c in range(self.n_outputs)]))
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        feature = st["feature"]
        if feature not in FEATURES:
            raise ValueError(f"unknown feature {feature!r}")
        self._setup_shrinking(float(st["eta"]), float(st["norm_bound"]), int(st["n_samples"]),
                              bool(st["exact_predict"]), FEATURES[feature], int(st["seed"]),
                              int(st.get("predict_samples", 0)))     # files before predict_samples: m
        scale = np.asarray(st["scale"], dtype=np.float64)
        if scale.shape != (self.n_outputs,) or not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            raise ValueError("scale must hold one positive finite number per output")
        if self.sv.scale != 1.0 or not np.all(np.isfinite(self.sv.coefficients)):
            raise ValueError("support set coefficients are not finite or carry a scale")
        n_pred = int(st["n_pred"])
        if not 0 <= n_pred < 2 ** 63:
            raise ValueError("n_pred out of range")
        self.n_pred = n_pred
        for c in range(self.n_outputs):
            self.scale[c] = scale[c]
        self._rebuild_trees()
        # files written before the product's estimator options: the paper's behaviour
        self.row_keys, self.reduce_variance = bool(st.get("row_keys", 0)), bool(st.get("reduce_variance", 0))
        self.eta_coef, self.eta_power = float(st.get("eta_coef", 0.0)), float(st.get("eta_power", 0.0))
        self.t_epoch = int(st.get("t_epoch", 0))
        self.budget = int(st.get("budget", 0))
        if self.budget < 0 or (self.budget > 0 and self.sv.n > self.budget):
            raise ValueError("budget must be >= 0 and hold every stored SV")
        control = np.asarray(st.get("control", np.zeros(self.n_outputs)), dtype=np.float64)
        if control.shape != (self.n_outputs,) or not np.all(np.isfinite(control)) or self.t_epoch < 0:
            raise ValueError("control must hold one finite number per output; t_epoch must be >= 0")
        for c in range(self.n_outputs):
            self.cv[c] = control[c]


class ShrinkingGradient(KernelLearner):
    """Shrinking Gradient: squared-loss OGD with kernel values estimated from random features.

    Livni, Carmon & Globerson, "Learning Infinite Layer Networks Without the Kernel Trick",
    ICML 2017, Algorithm 1 (the update) and Algorithm 2 (EST, the scalar-product estimator,
    eq. 11); ALGORITHMS.md §3.16.  The model is f = sum_i alpha_i Phi(x_i), but it is never
    evaluated through the kernel: each prediction averages m products
    sign(alpha_i) psi(x_i; w) psi(x; w) with i drawn with probability ``|alpha_i| / ||alpha||_1`` and
    w a fresh random feature, times ``||alpha||_1`` (unbiased for sum_i alpha_i k(x_i, x)).  If the
    estimate E_t satisfies ``|E_t| < 16 B_n`` the example joins with alpha_t = eta (y_t - E_t), else
    every alpha is divided by 4.  Sign: Algorithm 1 prints alpha_t = -eta (y_t - E_t); the text
    (f_{t+1} = f_t - eta grad_t, eqs. 9-12) and Lemma 5's proof use gradient descent, as here.

    Tasks: regression (the paper); binary (ext: targets +-1, predict by sign); multiclass (ext:
    one-vs-rest, one coefficient vector, scale and shrink decision per class over one list of
    x_i, targets +-1, predict by argmax).  A new x_i whose coefficients are all zero is not
    stored (it would change nothing; kernel OGD skips g = 0 the same way).

    Random numbers: stream ESTIMATOR (4) of the counter-based Philox generator include/ok_rng.h
    (a pure function of (seed, stream, key1, element)), not numpy's PCG64 of ALGORITHMS.md §1.5,
    because the estimator needs a fresh stream per step inside the nogil loop (the spec allows the
    same substitution for DSG blocks).  key1 = t at training step t (1-based) and 2^63 + j for the
    j-th EST call after training (``decision_function`` rows, counted over the model's life, so
    repeated predictions are independent estimates; saved with the model).  Sample k of output c
    occupies elements s*S .. s*S + S - 1 with s = c*m + k: element s*S is the uniform u that
    picks i (the Fenwick search for u * ||coef_c||_1); Fourier: element s*S + 1 is the uniform
    for b, elements s*S + 2 .. s*S + d + 1 the standard normals e with w = sqrt(2 gamma) e,
    S = d + 2 rounded up to even; coordinate: element s*S + 1 is the uniform u' with
    w = floor(d u'), S = 2.  (Samples start on an even element because a uniform and a normal
    drawn from the same Philox block are dependent.)  ``onlinekern._core.counter_rng.uniforms``
    and ``normals`` give the same numbers in NumPy.

    Parameters
    ----------
    norm_bound : float
        Radius B_n of the competitor ball; shrink when ``|E_t| >= 16 B_n`` (1).  The analysis assumes
        ``|psi| < 1`` and ``|y| <= 1``; the Fourier feature reaches sqrt(2), so the threshold is heuristic.
    n_samples : int
        Estimator samples m per prediction (100; the theory's O(B^4 T log(BT)) has no practical
        value, §3.16).
    predict_samples : int or None
        Samples per estimate after training (``predict``, ``decision_function``, the test rows
        of ``run_online``); None = n_samples.  Theorem 1 (part 3) gives test points their own m,
        set by the accuracy wanted: the estimate's variance falls as 1/m, while training keeps
        the m its regret bound and its budget assume (ext, not in §3.16).
    eta : float or None
        Step size; None: a rule (``eta_``): B_n / sqrt(T) (Theorem 1, T the stream length) with
        the paper preset or an explicit ``exact_predict=True``; with the product preset 0.3
        (``PRODUCT_ETA``, no T needed) for its exact predictions, and sqrt(n_samples / 2) / T for
        the sampled prediction (``exact_predict=False``: its noise stays below the standardised
        targets' spread), on a doubling schedule T = 2^k >= t when T is unknown.  Measured with
        the product's exact predictions and budget, first 20,000 rows of permutation 0 (error
        over the majority's / RMSE over the mean's; eta 0.1 / 0.3 / 0.6): ijcnn1 0.935 / 0.911 /
        0.942, a9a 0.733 / 0.746 / 0.756, cod-rna.tr 0.353 / 0.342 / 0.368, casp 0.878 / 0.878
        / 0.899.
    horizon : int or None
        Stream length T for the default step (None: the rows given to ``fit`` or
        ``run_online``; ``partial_fit`` on a fresh model then needs eta or horizon under the
        paper preset, and follows the doubling schedule under the product preset).
    exact_predict : bool or 'auto'
        Use the exact sum_i alpha_i k(x_i, x) instead of EST, in training and prediction.
        With a threshold never reached this is kernel OGD with the squared loss (§5.7).
        'auto' (default): True with the product preset, False (the paper's EST) with
        ``preset="paper"``.  Why the product predicts exactly: EST's standard deviation grows
        with ||alpha||_1 (up to sqrt(2 / m) ||alpha||_1; Theorem 1 needs m = O(B^4 T log T)
        samples), so with m = 100 a step large enough to learn makes the estimate noise, and a
        step small enough to keep it quiet does not learn: whole streams, permutation 0, the
        sampled estimator with its best product settings (paired [cos, sin] features, a control
        variate, sqrt(m / 2) / T) reached ijcnn1 9.58 % (majority 9.57), a9a 24.10 (24.08),
        w8a 3.01 (2.97); exact predictions with the budget below 6.60, 17.15 and 2.28 %.
        Under the product preset with ``exact_predict=False`` the estimator takes paired
        features cos(w^T x_i) cos(w^T x) + sin(w^T x_i) sin(w^T x) = cos(w^T (x_i - x)) (no
        phase b: E = k, abs(E) <= 1) and the control variate sum_i alpha_i c + ||alpha||_1 / m
        sum_k sign_k (k_k - c), c a running mean of past products (unbiased for any c fixed
        before the draws), and a row's estimate after training is keyed by the row (the same
        number for the same row in any batch or order).
    budget : int, None or 'auto'
        At most this many SVs: a new SV takes the oldest one's slot (the sampler's weights
        follow).  None: unbounded (the paper; the model grows with the stream).  'auto'
        (default): 8,000 (``PRODUCT_BUDGET``) with the product preset, None with
        ``preset="paper"``.  It bounds a step to O(budget d) with exact predictions: whole
        streams, permutation 0, one core, budget 1,000 / 4,000 / 7,000 / 8,000 / 10,000:
        ijcnn1 (141,691 rows) 9.38 / 7.47 / 6.74 / 6.60 / 6.32 % in 7 / 18 / 28 / 30 / 40 s;
        w8a 2.85 / 2.54 / 2.32 / 2.28 / 2.22 % in 3 / 11 / 19 / 20 / 22 s.
    feature : {'fourier', 'coordinate'}
        The random feature psi: 'fourier' (Gaussian kernel, default) or 'coordinate' (linear kernel).
        'fourier' = sqrt(2) cos(w^T x + b), w ~ N(0, 2 gamma I), b ~ U[0, 2 pi), whose kernel is
        exp(-gamma ||x - x'||^2); 'coordinate' = sqrt(d) x_w with w uniform over the d
        coordinates (the paper's Section 6 experiment), whose kernel is the linear kernel
        E_w[psi(x; w) psi(x'; w)] = x^T x' (gamma unused).
    gamma : float, 'auto', 'median' or None
        Kernel width of the Fourier feature; 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    task : {'regression', 'classification'}
        Regression (default, the paper's setting) or classification (binary/multiclass, ext).
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Decides every estimator draw (in [0, 2^64)).
    n_threads : int or None
        Threads for the m Fourier samples of one estimate (fixed-order sum: results do not depend
        on it); None = all cores, or OMP_NUM_THREADS.
    """

    family = "sg"
    losses = None
    tasks = ("binary", "multiclass", "regression")
    summary = "Shrinking Gradient: squared-loss OGD on kernel values estimated from sampled random features"
    paper = "Livni, Carmon & Globerson, ICML 2017"

    paper_defaults = {"gamma": None, "exact_predict": False, "budget": None}

    def __init__(self, norm_bound=1.0, n_samples=100, predict_samples=None, eta=None, horizon=None,
                 exact_predict="auto", budget="auto", feature="fourier", gamma="auto", task="regression",
                 preset="auto", seed=0, n_threads=None):
        self.budget = budget
        self.norm_bound = norm_bound
        self.n_samples = n_samples
        self.predict_samples = predict_samples
        self.eta = eta
        self.horizon = horizon
        self.exact_predict = exact_predict
        self.feature = feature
        self.gamma = gamma
        self.preset = preset
        self.task = task
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        for name, value in self.get_params().items():
            check = PARAM_CHECKS.get(name)
            # eta, horizon and budget may be None (their defaults / the paper's); 'auto' is resolved later
            if check is not None and not (name in ("eta", "horizon", "budget") and value is None) \
                    and not (name in self.paper_defaults and is_auto(value)):
                check(name, value)
        _positive("norm_bound", self.norm_bound)
        _positive_int("n_samples", self.n_samples)
        if self.predict_samples is not None:
            _positive_int("predict_samples", self.predict_samples)
        if self.horizon is not None:
            _positive_int("horizon", self.horizon)
        if not isinstance(self.exact_predict, (bool, np.bool_)) and not is_auto(self.exact_predict):
            raise ValueError(f"exact_predict must be True, False or 'auto', got {self.exact_predict!r}")
        if self.budget is not None and not is_auto(self.budget):
            _positive_int("budget", self.budget)
        if self.feature not in FEATURES:
            raise ValueError(f"feature must be one of {', '.join(FEATURES)}, got {self.feature!r}")
        if not 0 <= int(self.seed) < 2 ** 64:
            raise ValueError(f"seed must lie in [0, 2^64), got {self.seed!r}")

    def _exact(self):
        """Whether predictions are exact: ``exact_predict``, 'auto' = the product preset's True."""
        v = self.param_value("exact_predict")
        return self.preset_ == "auto" if is_auto(v) else bool(v)

    def _step_rule(self):
        """(coefficient, power): the default step is coefficient / T^power (see ``eta_``)."""
        if self.preset_ == "auto":
            if self._exact():
                return PRODUCT_ETA, 0.0
            return float(np.sqrt(int(self.n_samples) / 2.0)), 1.0
        return float(self.norm_bound), 0.5

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """Product defaults: exact predictions, a budget of AUTO_BUDGET SVs (see the parameters)."""
        if name == "exact_predict":
            return True
        if name == "budget":
            return PRODUCT_BUDGET
        return KernelLearner.auto_value(self, name, X, task, n_outputs, n_stream)

    @property
    def eta_(self):
        """The step size in use: eta; else PRODUCT_ETA (0.3) under the product preset with exact
        predictions (its default); else, with T = horizon or the length of the stream given to
        ``fit`` / ``run_online``, the paper's norm_bound / sqrt(T) (Theorem 1) under
        ``preset="paper"`` or an explicit ``exact_predict=True``, and sqrt(n_samples / 2) / T for
        the product preset's sampled prediction.  When T is unknown (``partial_fit`` on a fresh model, unscanned streams) the
        product preset follows the doubling schedule: step t uses the rule with T = 2^k, the
        smallest power of two >= t, continuing the model from one epoch to the next
        (``preset="paper"`` needs eta or horizon, as Theorem 1 does); this property then gives
        the step of the current epoch.

        The product rule keeps the sampled prediction's noise below the targets' spread (they
        are standardised online, so about 1): EST averages m terms bounded by 2 ||alpha||_1
        (``|psi psi'| <= 2`` for the Fourier feature), so its standard deviation is at most
        sqrt(2 / m) ||alpha||_1, and each step adds about ``eta |y - E|`` ~ eta to ||alpha||_1, so
        ||alpha||_1 <= eta T.  eta = sqrt(m / 2) / T bounds the noise by 1 at the end of the
        stream.  Measured on the first 5,000 rows of permutation 0 of abalone, casp and cadata
        (m = 100, RMSE over the running mean's): the paper's step 3.1x and 3.0x (abalone, casp)
        with the product's width and targets, 1.30x, 1.74x and 2.05x with the whole paper preset;
        this rule 0.94x, 1.05x and 1.00x -- no longer worse than the mean, not yet learning.
        """
        if self.eta is not None:
            return float(self.eta)
        core = self.__dict__.get("core_")
        if core is not None and core.t_epoch > 0:
            return float(core.eta)
        T = self.__dict__.get("horizon_", self.horizon)
        coef, power = self._step_rule()
        if power == 0.0:
            return coef
        if T is None:
            if self.preset_ == "auto":
                coef, power = self._step_rule()
                return coef / float(ANYTIME_T0) ** power
            raise ValueError("ShrinkingGradient with preset='paper' needs eta, or horizon (the stream "
                             "length T) for the paper's step norm_bound / sqrt(T) (Theorem 1); fit and "
                             "run_online know T, partial_fit and unscanned streams do not (the product "
                             "preset then follows a doubling schedule)")
        coef, power = self._step_rule()
        return coef / float(T) ** power

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = ShrinkingCore()
        core._setup_kernel(n_features, task, n_outputs, gamma, -1, self._n_threads())
        core._setup_shrinking(self.eta_, float(self.norm_bound), int(self.n_samples),
                              self._exact(), FEATURES[self.feature], int(self.seed),
                              int(self.predict_samples or 0))
        budget = self.param_value("budget")
        core.budget = 0 if budget is None else int(budget)
        if self.preset_ == "auto":
            core.row_keys = True
            core.reduce_variance = not self._exact()
            coef, power = self._step_rule()
            if self.eta is None and power > 0 and self.__dict__.get("horizon_", self.horizon) is None:
                core.eta_coef, core.eta_power = coef, power
                core.t_epoch = ANYTIME_T0
        return core

    @property
    def dual_coef_(self):
        """Coefficients alpha (per-output scale applied): (n_SV,) or (n_SV, C) for multiclass."""
        self._check_fitted()
        a = self.core_.alpha
        return a[:, 0] if a.shape[1] == 1 else a

    def estimate(self, x, m=None, key=0):
        """EST(alpha, x, m) of Algorithm 2 for one dense row with stream key ``key`` (2^63 + j is
        used by the j-th prediction after training, t by training step t): (C,) array."""
        self._check_fitted()
        return self.core_.estimate_py(x, int(self.n_samples if m is None else m), int(key))
