# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""SupportSet, the growable support-vector store, and KernelCore, the base of kernel learners.

A kernel expansion f(x) = sum_i alpha_i k(x_i, x) with the Gaussian kernel
k(x, x') = exp(-gamma ||x - x'||^2) (ALGORITHMS.md §1.3).  SVs are stored densely (d doubles
each) with cached squared norms, so a sparse query costs O(nnz) per SV (a gather) and a dense one
a contiguous dot; a feature-major mirror (XT[j * cap + i] = x_i[j]) lets the kernel row run
across SVs in vector lanes (include/ok_kernel.h).  Coefficients carry one global scale (alpha_i = scale * coef_i), so shrinking
every alpha (OGD's 1 - eta*lambda, BSGD's 1 - 1/t, Forgetron's phi) is O(1) (§1.1).  Removal
moves the last slot into the hole; an insertion stamp per slot keeps the FIFO order for learners
that remove the oldest SV.  Growth is geometric and happens inside the nogil step only when the
store is full (bounded by the budget when there is one); failure is reported, never a crash.
"""
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset, memcpy
from cython.parallel cimport prange
from onlinekern._core.vmath cimport ok_dot, ok_sqdist, ok_vexp

cdef extern from "ok_kernel.h" nogil:
    void ok_sqdist_fm(const double* XT, Py_ssize_t B, Py_ssize_t lo, Py_ssize_t hi, const double* x,
                      const int* idx, int nnz, bint dense, const double* sqn, double* dist)

import numpy as np

cdef double RENORM = 1e-100

# Work units n_SV * (nnz + 8) from which a kernel row is split over threads; measured by
# tools/bench_threads.py (BENCHMARKS.md).  Tests lower it to force the parallel path.
cdef Py_ssize_t default_par_threshold = 32768


def get_par_threshold():
    """Work size from which new SupportSets split kernel rows over threads."""
    return default_par_threshold


def set_par_threshold(Py_ssize_t value):
    """Set the work size from which new SupportSets go parallel; returns the previous value."""
    global default_par_threshold
    old = default_par_threshold
    default_par_threshold = max(0, value)
    return old


cdef double row_sqnorm(const double* x, int nnz) noexcept nogil:
    """||x||^2 summed in index order with one accumulator (the kernel's sparse path relies on it)."""
    cdef int k
    cdef double s = 0.0
    for k in range(nnz):
        s += x[k] * x[k]
    return s


cdef class SupportSet:
    """Dense support-vector store with a kernel row and block-parallel kernel sums.

    Parameters
    ----------
    d : int, input dimension.
    C : int, coefficients per SV (1 for binary/regression, classes for multiclass).
    gamma : float, kernel width.
    budget : int, maximum number of SVs (-1 for none); memory is preallocated up to it.
    n_threads : int, OpenMP threads for the kernel sum (results do not depend on it).
    """

    def __cinit__(self, int d, int C, double gamma, Py_ssize_t budget=-1, int n_threads=1):
        if d < 1 or C < 1:
            raise ValueError("SupportSet needs d >= 1 and C >= 1")
        if not gamma > 0:
            raise ValueError(f"gamma must be > 0, got {gamma!r}")
        self.d = d
        self.C = C
        self.gamma = gamma
        self.budget = budget
        self.scale = 1.0
        self.n_threads = max(1, n_threads)
        self.par_threshold = default_par_threshold
        self.n = 0
        self.cap = 0
        self.clock = 0
        initial = 64 if budget < 0 else budget
        if self.reserve(max(1, initial)) != 0:
            raise MemoryError(f"cannot allocate a support set of {initial} vectors of dimension {d}")

    def __dealloc__(self):
        free(self.X); free(self.XT); free(self.sqn); free(self.coef); free(self.stamp); free(self.k); free(self.part)
        free(self.gam)

    cdef int reserve(self, Py_ssize_t cap) noexcept nogil:
        """Grow storage to at least cap slots (capped by the budget). 0 on success."""
        cdef Py_ssize_t nb, j
        cdef void* p
        if self.budget >= 0 and cap > self.budget:
            cap = self.budget
        if cap <= self.cap:
            return 0 if cap >= 1 or self.cap >= 1 else -1
        nb = (cap + SV_BLOCK - 1) // SV_BLOCK
        p = realloc(self.X, cap * self.d * sizeof(double))
        if p == NULL: return -1
        self.X = <double*>p
        p = realloc(self.sqn, cap * sizeof(double))
        if p == NULL: return -1
        self.sqn = <double*>p
        p = realloc(self.coef, cap * self.C * sizeof(double))
        if p == NULL: return -1
        self.coef = <double*>p
        p = realloc(self.gam, cap * self.C * sizeof(double))
        if p == NULL: return -1
        self.gam = <double*>p
        p = realloc(self.stamp, cap * sizeof(long long))
        if p == NULL: return -1
        self.stamp = <long long*>p
        p = realloc(self.k, cap * sizeof(double))
        if p == NULL: return -1
        self.k = <double*>p
        p = realloc(self.part, nb * self.C * sizeof(double))
        if p == NULL: return -1
        self.part = <double*>p
        # the mirror's stride is the capacity: lay it out anew
        p = malloc(cap * self.d * sizeof(double))
        if p == NULL: return -1
        for j in range(self.d):
            if self.n:
                memcpy(<double*>p + j * cap, self.XT + j * self.cap, self.n * sizeof(double))
        free(self.XT)
        self.XT = <double*>p
        self.cap = cap
        return 0

    cdef void _mirror(self, Py_ssize_t i) noexcept nogil:
        """Copy slot i's row into the feature-major mirror."""
        cdef Py_ssize_t j
        cdef const double* r = self.X + i * self.d
        for j in range(self.d):
            self.XT[j * self.cap + i] = r[j]

    cdef Py_ssize_t append(self, const double* x, const int* idx, int nnz, double xsq, const double* alpha) noexcept nogil:
        """Add SV x with true coefficients alpha[0:C]; returns its slot, or -1 if full/no memory."""
        cdef Py_ssize_t i = self.n
        if i == self.cap:
            if self.budget >= 0 and i >= self.budget:
                return -1
            if self.reserve(2 * self.cap if self.cap else 64) != 0:
                return -1
        self.replace(i, x, idx, nnz, xsq, alpha)         # the new slot gets the newest stamp
        self.n += 1
        return i

    cdef void remove(self, Py_ssize_t i) noexcept nogil:
        """Delete slot i by moving the last SV into it (O(d + C)).  Ends the averaging history
        (``track``): the average of the hypotheses is no longer a sum over the SVs present."""
        cdef Py_ssize_t last = self.n - 1
        self.track = False
        if i != last:
            memcpy(self.X + i * self.d, self.X + last * self.d, self.d * sizeof(double))
            self._mirror(i)
            memcpy(self.coef + i * self.C, self.coef + last * self.C, self.C * sizeof(double))
            memcpy(self.gam + i * self.C, self.gam + last * self.C, self.C * sizeof(double))
            self.sqn[i] = self.sqn[last]
            self.stamp[i] = self.stamp[last]
            self.k[i] = self.k[last]
        self.n = last

    cdef Py_ssize_t oldest(self) noexcept nogil:
        """Slot of the SV inserted first among those present (-1 if empty)."""
        cdef Py_ssize_t i, best = -1
        for i in range(self.n):
            if best < 0 or self.stamp[i] < self.stamp[best]:
                best = i
        return best

    cdef void shrink(self, double c) noexcept nogil:
        """alpha_i <- c * alpha_i for every SV, in O(1) (renormalising when the scale underflows)."""
        cdef Py_ssize_t i
        if self.track:
            for i in range(self.n * self.C):
                self.gam[i] += (c - 1.0) * (self.scale * self.coef[i]) * <double>self.now
        if c == 0.0:
            memset(self.coef, 0, self.n * self.C * sizeof(double))
            self.scale = 1.0
            return
        self.scale *= c
        if -RENORM < self.scale < RENORM:
            for i in range(self.n * self.C):
                self.coef[i] *= self.scale
            self.scale = 1.0

    cdef void add_coef(self, Py_ssize_t i, const double* delta) noexcept nogil:
        """alpha_i += delta[0:C]."""
        cdef int c
        for c in range(self.C):
            self.coef[i * self.C + c] += delta[c] / self.scale
            self.track_change(i, c, delta[c])

    cdef double alpha(self, Py_ssize_t i, int c) noexcept nogil:
        """True coefficient alpha_ic."""
        return self.scale * self.coef[i * self.C + c]

    cdef void set_alpha(self, Py_ssize_t i, int c, double value) noexcept nogil:
        """alpha_ic <- value."""
        self.track_change(i, c, value - self.scale * self.coef[i * self.C + c])
        self.coef[i * self.C + c] = value / self.scale

    cdef double* row(self, Py_ssize_t i) noexcept nogil:
        """The stored dense vector of SV i (d doubles; read-only for learners)."""
        return self.X + i * self.d

    cdef void replace(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq, const double* alpha) noexcept nogil:
        """Overwrite slot i with a new SV (x, alpha): it counts as the newest SV.  Overwriting an SV
        present (i < n) removes it, and ends the averaging history as ``remove`` does."""
        cdef int kk, c
        cdef double* r = self.X + i * self.d
        if i < self.n:
            self.track = False
        memset(r, 0, self.d * sizeof(double))
        for kk in range(nnz):
            r[idx[kk]] = x[kk]
        self._mirror(i)
        self.sqn[i] = xsq
        for c in range(self.C):
            self.coef[i * self.C + c] = alpha[c] / self.scale
            self.gam[i * self.C + c] = 0.0             # a new coefficient: its history starts now
            self.track_change(i, c, alpha[c])
        self.stamp[i] = self.clock
        self.clock += 1

    cdef void set_dense(self, Py_ssize_t i, const double* z, const double* alpha) noexcept nogil:
        """Overwrite slot i with the dense vector z[0:d] and coefficients alpha, keeping its place in
        insertion order (a merged SV takes the place of the one it replaces, as in BudgetedSVM).
        The SV it overwrites leaves the set: the averaging history ends as in ``remove``."""
        cdef int j, c
        cdef double* r = self.X + i * self.d
        self.track = False
        for j in range(self.d):
            r[j] = z[j]
        self._mirror(i)
        self.sqn[i] = row_sqnorm(r, self.d)
        for c in range(self.C):
            self.coef[i * self.C + c] = alpha[c] / self.scale
            self.gam[i * self.C + c] = 0.0             # a new coefficient: its history starts now
            self.track_change(i, c, alpha[c])

    cdef double sqdist_x(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq) noexcept nogil:
        """||x_i - x||^2 for a query row (the one formula every kernel value here uses)."""
        cdef const double* r = self.X + i * self.d
        cdef double dist, part, t, sk
        cdef int kk
        if nnz == self.d:
            # dense query: (x_k - s)^2 in index order, exactly as ok_sqdist_fm's dense lanes
            dist = 0.0
            for kk in range(nnz):
                t = x[kk] - r[kk]
                dist += t * t
            return dist
        # sparse query against a dense SV: exact differences on the query's support plus the SV's
        # mass outside it (sqn minus its mass on the support).  Both sums run in index order with
        # one accumulator, like row_sqnorm, so an SV whose support lies inside the query's (a
        # duplicate above all) leaves exactly 0, and k(x, x) = 1.
        dist = 0.0
        part = 0.0
        for kk in range(nnz):
            sk = r[idx[kk]]
            part += sk * sk
            t = x[kk] - sk
            dist += t * t
        t = self.sqn[i] - part
        if t > 0.0:
            dist += t
        return dist

    cdef double kernel_x(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq) noexcept nogil:
        """k(x_i, x) for one SV (same bits as the value kernel_row gives)."""
        return ok_exp_scalar(-self.gamma * self.sqdist_x(i, x, idx, nnz, xsq))

    cdef double log_kernel_sv(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """ln k(x_i, x_j) = -gamma ||x_i - x_j||^2 between two stored SVs."""
        return -self.gamma * ok_sqdist(self.X + i * self.d, self.X + j * self.d, self.d)

    cdef double kernel_sv(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """k(x_i, x_j) between two stored SVs."""
        return ok_exp_scalar(self.log_kernel_sv(i, j))

    cdef void _block(self, Py_ssize_t b, const double* x, const int* idx, int nnz, double xsq, bint want_scores) noexcept nogil:
        """Kernel values of SVs [b*SV_BLOCK, ...) into self.k, and their partial score."""
        cdef Py_ssize_t lo = b * SV_BLOCK, hi = lo + SV_BLOCK, i
        cdef int c, C = self.C
        cdef double* out
        if hi > self.n:
            hi = self.n
        ok_sqdist_fm(self.XT, self.cap, lo, hi, x, idx, nnz, nnz == self.d, self.sqn, self.k)
        for i in range(lo, hi):
            self.k[i] = -self.gamma * self.k[i]
        ok_vexp(self.k + lo, self.k + lo, <int>(hi - lo))
        if not want_scores:
            return
        out = self.part + b * C
        if C == 1:
            out[0] = ok_dot(self.coef + lo, self.k + lo, <int>(hi - lo))
        else:
            for c in range(C):
                out[c] = 0.0
            for i in range(lo, hi):
                for c in range(C):
                    out[c] += self.coef[i * C + c] * self.k[i]

    cdef void _blocks(self, const double* x, const int* idx, int nnz, double xsq, bint want_scores) noexcept nogil:
        cdef Py_ssize_t nb = (self.n + SV_BLOCK - 1) // SV_BLOCK, b
        if self.n_threads > 1 and nb > 1 and self.n * (nnz + 8) >= self.par_threshold:
            for b in prange(nb, num_threads=self.n_threads, schedule="static"):
                self._block(b, x, idx, nnz, xsq, want_scores)
        else:
            for b in range(nb):
                self._block(b, x, idx, nnz, xsq, want_scores)

    cdef void kernel_row(self, const double* x, const int* idx, int nnz, double xsq) noexcept nogil:
        """self.k[i] = k(x_i, x) for every SV."""
        self._blocks(x, idx, nnz, xsq, False)

    cdef void predict(self, const double* x, const int* idx, int nnz, double xsq, double* out) noexcept nogil:
        """out[c] = sum_i alpha_ic k(x_i, x); also leaves the kernel row in self.k."""
        cdef Py_ssize_t nb = (self.n + SV_BLOCK - 1) // SV_BLOCK, b
        cdef int c
        for c in range(self.C):
            out[c] = 0.0
        if self.n == 0:
            return
        self._blocks(x, idx, nnz, xsq, True)
        for b in range(nb):
            for c in range(self.C):
                out[c] += self.part[b * self.C + c]
        for c in range(self.C):
            out[c] *= self.scale

    cdef void average_correction(self, long long t, double* out) noexcept nogil:
        """out[c] = -(1/t) sum_i gam_ic k_i with the kernel row of the last query in self.k: added to
        f_t it gives the average of the hypotheses used for examples 1..t (0 when t = 0, and 0 once
        ``track`` is off: after the first removal the prediction is f_t itself)."""
        cdef Py_ssize_t i
        cdef int c
        cdef double acc
        for c in range(self.C):
            acc = 0.0
            if t > 0 and self.track:
                for i in range(self.n):
                    acc = acc + self.gam[i * self.C + c] * self.k[i]
                acc = -acc / <double>t
            out[c] = acc

    cdef void track_change(self, Py_ssize_t i, int c, double delta) noexcept nogil:
        """Record a change delta of alpha_ic made outside the methods above (learners that write
        the coefficients directly)."""
        if self.track:
            self.gam[i * self.C + c] += delta * <double>self.now

    # -- Python access ----------------------------------------------------------------------
    @property
    def support_vectors(self):
        """(n, d) array of the SVs, in slot order."""
        out = np.empty((self.n, self.d))
        cdef double[:, ::1] ov = out
        if self.n:
            memcpy(&ov[0, 0], self.X, self.n * self.d * sizeof(double))
        return out

    @property
    def coefficients(self):
        """(n, C) array of the true coefficients alpha (scale applied)."""
        cdef Py_ssize_t i
        out = np.empty((self.n, self.C))
        cdef double[:, ::1] ov = out
        for i in range(self.n * self.C):
            ov[i // self.C, i % self.C] = self.scale * self.coef[i]
        return out

    @property
    def insertion_order(self):
        """Slots sorted from oldest to newest SV."""
        st = np.array([self.stamp[i] for i in range(self.n)], dtype=np.int64)
        return np.argsort(st, kind="stable")

    def kernel_values(self, x):
        """k(x_i, x) for a dense query x (tests)."""
        cdef double[::1] xv = np.ascontiguousarray(x, dtype=np.float64)
        if xv.shape[0] != self.d:
            raise ValueError("query has the wrong dimension")
        idx = np.arange(self.d, dtype=np.int32)
        cdef int[::1] iv = idx
        if self.n:
            self.kernel_row(&xv[0], &iv[0], self.d, row_sqnorm(&xv[0], self.d))
        return np.array([self.k[i] for i in range(self.n)])

    def sqdists(self, data, indices=None):
        """||x_i - x||^2 for every SV (slot order) through the kernel row's routine.

        ``indices`` None: ``data`` is a dense query of d values; otherwise the sparse query
        (data, indices) with increasing 0-based indices (tests and diagnostics).
        """
        cdef double[::1] dv = np.ascontiguousarray(data, dtype=np.float64)
        cdef int nnz = dv.shape[0]
        idx = np.arange(nnz) if indices is None else np.asarray(indices)
        if (indices is None and nnz != self.d) or len(idx) != nnz or \
                (nnz and (idx.min() < 0 or idx.max() >= self.d or np.any(np.diff(idx) <= 0))):
            raise ValueError("query does not match the support set's dimension")
        cdef int[::1] iv = np.append(idx, 0).astype(np.int32)
        cdef double dummy = 0.0
        out = np.zeros(self.n)
        cdef double[::1] ov = out
        if self.n:
            ok_sqdist_fm(self.XT, self.cap, 0, self.n, &dv[0] if nnz else &dummy, &iv[0], nnz,
                         nnz == self.d, self.sqn, &ov[0])
        return out

    def get_state(self):
        cdef Py_ssize_t i
        X = self.support_vectors
        coef = np.array([self.coef[i] for i in range(self.n * self.C)]).reshape(self.n, self.C)
        stamp = np.array([self.stamp[i] for i in range(self.n)], dtype=np.int64)
        sqn = np.array([self.sqn[i] for i in range(self.n)])
        gam = np.array([self.gam[i] for i in range(self.n * self.C)]).reshape(self.n, self.C)
        return {"d": self.d, "C": self.C, "gamma": self.gamma, "budget": self.budget, "n_threads": self.n_threads,
                "scale": self.scale, "clock": self.clock, "X": X, "coef": coef, "stamp": stamp, "sqn": sqn,
                "track": int(self.track), "gam": gam}

    def set_state(self, st):
        cdef Py_ssize_t i, n = np.asarray(st["X"]).shape[0]
        if np.asarray(st["X"]).shape != (n, self.d) or np.asarray(st["coef"]).shape != (n, self.C) \
                or np.asarray(st["stamp"]).shape != (n,) or np.asarray(st["sqn"]).shape != (n,):
            raise ValueError("support set arrays have inconsistent shapes")
        if self.budget >= 0 and n > self.budget:
            raise ValueError("support set holds more vectors than its budget")
        cdef const double[:, ::1] Xv = np.ascontiguousarray(st["X"], dtype=np.float64).reshape(n, self.d)
        cdef const double[:, ::1] cv = np.ascontiguousarray(st["coef"], dtype=np.float64).reshape(n, self.C)
        cdef const long long[::1] sv = np.ascontiguousarray(st["stamp"], dtype=np.int64)
        cdef const double[::1] qv = np.ascontiguousarray(st["sqn"], dtype=np.float64)
        if self.reserve(max(n, 1)) != 0 or (n > self.cap):
            raise MemoryError("cannot allocate the support set")
        gam = np.zeros((n, self.C)) if "gam" not in st else np.asarray(st["gam"], dtype=np.float64)
        if gam.shape != (n, self.C):
            raise ValueError("support set arrays have inconsistent shapes")
        cdef const double[:, ::1] gv = np.ascontiguousarray(gam).reshape(n, self.C)
        for i in range(n):
            memcpy(self.X + i * self.d, &Xv[i, 0], self.d * sizeof(double))
            self._mirror(i)
            memcpy(self.coef + i * self.C, &cv[i, 0], self.C * sizeof(double))
            memcpy(self.gam + i * self.C, &gv[i, 0], self.C * sizeof(double))
            self.stamp[i] = sv[i]
            self.sqn[i] = qv[i]
        self.n = n
        self.scale = float(st["scale"])
        self.clock = int(st["clock"])
        self.track = bool(st.get("track", 0))

    def __reduce__(self):
        return (_rebuild_support, (self.get_state(),))


def _rebuild_support(st):
    s = SupportSet(int(st["d"]), int(st["C"]), float(st["gamma"]), int(st["budget"]), int(st["n_threads"]))
    s.set_state(st)
    return s


cdef inline double ok_exp_scalar(double v) noexcept nogil:
    # one value through the same vector routine as the kernel rows, so k(x_i, x_j) computed
    # here matches the value a query would get bit for bit
    cdef double out
    ok_vexp(&v, &out, 1)
    return out


cdef class KernelCore(LearnerCore):
    """Base of learners whose model is a kernel expansion held in a SupportSet."""

    def _setup_kernel(self, int n_features, int task, int n_outputs, double gamma, Py_ssize_t budget=-1, int n_threads=1):
        self._setup(n_features, task, n_outputs, n_threads)
        self.gamma = gamma
        self.sv = SupportSet(n_features, self.n_outputs, gamma, budget, self.n_threads)

    cdef void kernel_scores(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        """Score x (and leave k(x_i, x) in self.sv.k and ||x||^2 in self.xsq)."""
        self.xsq = row_sqnorm(x, nnz)
        self.sv.predict(x, idx, nnz, self.xsq, out)
        if self.averaged:                # before any update of this step (LearnerCore.run adds it)
            self.sv.now = self.n_seen
            self.sv.average_correction(self.n_seen, self.avg_buf)

    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        cdef int c
        self.kernel_scores(x, idx, nnz, out)
        if self.averaged:
            for c in range(self.n_outputs):
                out[c] += self.avg_buf[c]
        return 0

    def set_averaged(self, bint on):
        """Record and return the average of the hypotheses used so far instead of the current
        one (the averaged Perceptron, Freund & Schapire 1999); the updates are unchanged.  Call
        before the first example: the support set starts tracking the coefficients' history.

        The average is kept while it is exact, i.e. until the first SV leaves the set (a budget's
        removal, replacement or merge); from then on the prediction is the current hypothesis.  A
        removed SV's share of the past hypotheses cannot be kept within the budget, and the
        average restricted to the SVs present weights each by its age (t - T_i)/t: it lags
        behind the updates and ended worse than the majority label over whole streams (RBP,
        budget 1,000: ijcnn1 41.9 %, a9a 33.4 %, against 6.2 % and 21.4 % without averaging).
        Keeping it further, until the removed share of the average's mass reached 0.5 to 20 %,
        never did better than stopping at the first removal (a9a, magic04, cod-rna.tr).
        """
        if on and self.sv.n and not self.sv.track:
            raise ValueError("averaging must be switched on before the first support vector")
        self.averaged = on
        self.sv.track = on

    cdef Py_ssize_t model_size(self) noexcept nogil:
        return self.sv.n

    @property
    def n_threads_(self):
        return self.n_threads

    def set_threads(self, int n):
        LearnerCore.set_threads(self, n)
        self.sv.n_threads = self.n_threads

    def get_state(self):
        st = LearnerCore.get_state(self)
        st["gamma"] = self.gamma
        st["sv"] = self.sv.get_state()
        return st

    def set_state(self, st):
        LearnerCore.set_state(self, st)
        self.gamma = float(st["gamma"])
        sv = _rebuild_support(st["sv"])
        if sv.d != self.n_features or sv.C != self.n_outputs:
            raise ValueError("support set dimensions do not match the learner")
        self.sv = sv
