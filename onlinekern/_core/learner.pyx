# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""LearnerCore: the compiled per-example interface and the single training loop.

A learner implements ``predict_row`` and ``step`` (both ``noexcept nogil``) on one row given as
``(data, indices, nnz)``; dense rows share one ``arange`` index buffer, so dense and sparse data
take the same code path (a learner may add a dense fast path when ``nnz == n_features``).
``run`` presents the rows of a CSR or dense matrix once, in order or through a permutation,
without the GIL; the Python side is only touched at checkpoints (progress callback, Ctrl-C).
"""
from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY, isfinite, sqrt
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

import numpy as np
import scipy.sparse as sp

from onlinekern._core.threads import POLICY

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int ok_openmp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int ok_openmp_max_threads(void) { return 1; }   /* built without OpenMP: loops are serial */
    #endif
    """
    int ok_openmp_max_threads() nogil


def openmp_max_threads():
    """Threads the OpenMP runtime of the compiled loops would start now (``omp_get_max_threads``).

    ``OMP_NUM_THREADS`` when it is set, a ``threadpoolctl`` limit while one is in force (joblib's
    loky workers start with one), else the processors this process may run on; 1 in a build
    without OpenMP.  ``n_threads=None`` takes this, capped at the usable cores (as scikit-learn's
    OpenMP estimators do).

    Returns
    -------
    int
    """
    return max(1, ok_openmp_max_threads())


TASK_NAMES = {TASK_BINARY: "binary", TASK_MULTICLASS: "multiclass", TASK_REGRESSION: "regression"}
TASK_CODES = {v: k for k, v in TASK_NAMES.items()}


class DivergenceError(FloatingPointError, ValueError):
    """A learner's score became NaN or infinite during training: the run was stopped.

    Raised by :meth:`LearnerCore.run` (so by ``fit``, ``partial_fit`` and ``run_online``) as
    soon as the pre-update score of an example is not finite, or, in regression, its squared
    error overflows; continuing would only produce a meaningless error rate.  Raised by
    ``decision_function`` and ``predict`` too when a score is not finite, so no learner ever
    returns a NaN or infinite prediction.  It is a ``ValueError`` (the CLI reports it as a data
    error, exit status 1) and a ``FloatingPointError``.

    Attributes
    ----------
    index : int
        1-based position, in the stream (or the rows) presented by this call, of the first
        example whose score was not finite.
    learner : str
        Name of the learner (its core class without the ``Core`` suffix).
    """

    def __init__(self, index, learner, message=None):
        self.index = index
        self.learner = learner
        if message is None:
            message = (f"{learner} diverged: the score of example {index} is not finite (NaN or "
                       f"infinity); try a smaller eta, a larger lam, or scale the data "
                       f"(features and regression targets of order 1)")
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.index, self.learner, str(self)))

cdef inline double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef bint is_mistake(int task, const double* f, double y, int C) noexcept nogil:
    """ALGORITHMS.md §1.2: a margin <= 0 is a mistake (a score of exactly 0 counts)."""
    cdef int c, yi
    cdef double best
    if task == TASK_BINARY:
        return y * f[0] <= 0.0
    yi = <int>y
    best = -INFINITY
    for c in range(C):
        if c != yi and f[c] > best:
            best = f[c]
    return f[yi] - best <= 0.0


cdef inline double example_loss(int task, const double* f, double y, int C, bint tnorm, double loc,
                                double scl) noexcept nogil:
    """One example's loss of a prediction for following the leader: a mistake (0 or 1), or the
    squared error in the target's own units (f standardised when tnorm)."""
    cdef double p
    if task != TASK_REGRESSION:
        return 1.0 if is_mistake(task, f, y, C) else 0.0
    p = loc + scl * f[0] if tnorm else f[0]
    return (y - p) * (y - p)


cdef inline double tscale(long long n, double m2) noexcept nogil:
    """Population standard deviation of n targets with sum of squared deviations m2 (1 if 0)."""
    if n < 2 or not m2 > 0.0:
        return 1.0
    return sqrt(m2 / n)


cdef RowView row_view(object rows) except *:
    """Pointers into a RowData's arrays (which the caller keeps alive)."""
    cdef RowView v
    cdef const double[::1] d1
    cdef const double[:, ::1] d2
    cdef const int[::1] iv = rows.indices
    cdef const long long[::1] pv = rows.indptr
    v.dense = rows.dense
    v.n_rows = rows.n_rows
    v.d_in = 0
    v.data = NULL
    v.indices = &iv[0] if iv.shape[0] else NULL
    v.indptr = &pv[0]
    if v.dense:
        d2 = rows.data
        v.d_in = d2.shape[1]
        if d2.shape[0] and v.d_in:
            v.data = &d2[0, 0]
    else:
        d1 = rows.data
        if d1.shape[0]:
            v.data = &d1[0]
    return v


class RowData:
    """A matrix prepared for the compiled loop: CSR arrays, or a dense C-contiguous array."""

    def __init__(self, X, n_features):
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            if X.shape[1] > n_features:
                raise ValueError(f"X has {X.shape[1]} features, but the model was set up for {n_features}")
            if not X.has_sorted_indices:
                X = X.sorted_indices()
            self.dense = False
            self.data = np.ascontiguousarray(X.data, dtype=np.float64)
            self.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
            self.indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
            self.n_rows = X.shape[0]
        else:
            A = np.asarray(X)
            if A.ndim != 2:
                raise ValueError(f"X must be 2-D, got an array of shape {A.shape}")
            if A.shape[1] > n_features:
                raise ValueError(f"X has {A.shape[1]} features, but the model was set up for {n_features}")
            self.dense = True
            self.data = np.ascontiguousarray(A, dtype=np.float64)
            self.indices = np.arange(A.shape[1], dtype=np.int32)
            self.indptr = np.zeros(1, dtype=np.int64)
            self.n_rows = A.shape[0]
        if self.data.size and not np.all(np.isfinite(self.data)):
            raise ValueError("X contains NaN or infinite values")


cdef class LearnerCore:
    """Base of every compiled learner core; subclasses override predict_row/step/model_size."""

    def __cinit__(self, *args, **kwargs):
        self.n_threads = 1
        self.max_threads = 1
        self.target_norm = False
        self.t_count = 0
        self.t_mean = 0.0
        self.t_m2 = 0.0

    @property
    def target_location(self):
        """Running mean of the regression targets seen (0 before any, or without normalisation)."""
        return self.t_mean if self.target_norm else 0.0

    @property
    def target_scale(self):
        """Running standard deviation of the regression targets seen (1 while undefined or zero)."""
        return tscale(self.t_count, self.t_m2) if self.target_norm else 1.0

    def _setup(self, int n_features, int task, int n_outputs, int n_threads=1):
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        if task == TASK_MULTICLASS and n_outputs < 2:
            raise ValueError("multiclass needs at least 2 classes")
        self.n_features = n_features
        self.task = task
        self.n_outputs = n_outputs if task == TASK_MULTICLASS else 1
        self.n_threads = self.max_threads = max(1, n_threads)
        self.n_seen = 0
        buf = np.zeros(4 * self.n_outputs)
        self.scratch_ = buf
        cdef double[::1] v = buf
        self.score_buf = &v[0]
        self.grad_buf = &v[self.n_outputs]
        self.avg_buf = &v[2 * self.n_outputs]
        self.alt_buf = &v[3 * self.n_outputs]

    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        return -1

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        return -1

    cdef bint out_of_memory(self) noexcept nogil:
        return False

    def share_caches(self, int parts):
        """Shrink the core's memory-sized caches to a 1/``parts`` share (1: their full size),
        emptied; results never depend on them.  The width race calls it with the number of
        candidates still running (onlinekern.selection).  Default: no caches."""

    def join_caches(self, other):
        """Use the caches of core ``other`` where both hold the same numbers (the keyed random-feature
        rows of one seed), instead of one's own; such caches are then kept whole by
        :meth:`share_caches`.  The width race joins every candidate to the first, which it runs one
        after another.  Returns whether anything is shared.  Default: no caches, False."""
        return False

    cdef bint average_leads(self) noexcept nogil:
        """Whether a prediction now takes the averaged hypothesis (``averaged``, and under
        ``avg_leader`` a loss so far no larger than the current hypothesis's)."""
        return self.averaged and not (self.avg_leader and self.loss_avg > self.loss_cur)

    cdef Py_ssize_t model_size(self) noexcept nogil:
        return 0

    def set_threads(self, int n):
        """Allow up to ``n`` OpenMP threads for the parts of a step worth splitting.

        The core uses as many of them as the machine has cores free now (``n_threads``), and
        ``run`` asks again while it runs (onlinekern._core.threads).  Results never depend on
        the thread count.  Subclasses that size buffers by thread call this first, then read
        ``n_threads``.
        """
        self.max_threads = max(1, n)
        self.n_threads = POLICY.threads(self.max_threads)

    cdef void follow_machine(self):
        if self.max_threads > 1 and POLICY.threads(self.max_threads) != self.n_threads:
            self.set_threads(self.max_threads)

    @property
    def size(self):
        """Model size (support vectors or weights)."""
        return self.model_size()

    @property
    def task_name(self):
        return TASK_NAMES[self.task]

    def run(self, rows, y, order=None, checkpoints=None, scores=None, callback=None):
        """Present the rows once and learn from each after scoring it.

        Parameters
        ----------
        rows : RowData
        y : ndarray of float64, encoded targets (+-1, class index, or real)
        order : ndarray of int64 or None
            Row indices in presentation order (a permutation, or any selection); None = file order.
        checkpoints : ndarray of int64 or None
            Sorted 1-based example counts (within this call) at which to record progress.
        scores : ndarray (n, n_outputs) of float64 or None
            Receives the pre-update score of each presented example, in presentation order.
        callback : callable or None
            ``callback(n_done, n_mistakes, sq_error, model_size, seconds)`` at each checkpoint,
            with the GIL held; may raise to stop.

        Returns
        -------
        dict with ``n_mistakes``, ``sq_error``, ``seconds`` and, per checkpoint, ``cp_mistakes``,
        ``cp_sq_error``, ``cp_size``, ``cp_seconds``.
        """
        cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
        cdef Py_ssize_t n = rows.n_rows if order is None else len(order)
        if order is None and yv.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {yv.shape[0]} values")
        cdef const long long[::1] ordv
        cdef const long long* ordp = NULL
        if order is not None:
            order = np.ascontiguousarray(order, dtype=np.int64)
            if n and (order.min() < 0 or order.max() >= rows.n_rows):
                raise ValueError("order holds row indices outside the data")
            if yv.shape[0] != rows.n_rows:
                raise ValueError(f"X has {rows.n_rows} rows but y has {yv.shape[0]} values")
            ordv = order
            if n:
                ordp = &ordv[0]
        if self.task == TASK_MULTICLASS and n:
            yy = np.asarray(yv)
            if yy.min() < 0 or yy.max() >= self.n_outputs or np.any(yy != np.floor(yy)):
                raise ValueError("multiclass targets must be class indices 0..C-1")
        cps = np.zeros(0, dtype=np.int64) if checkpoints is None else np.ascontiguousarray(checkpoints, dtype=np.int64)
        cdef long long[::1] cpv = cps
        cdef Py_ssize_t n_cp = cps.shape[0]
        cp_mis = np.zeros(n_cp, dtype=np.int64); cp_sq = np.zeros(n_cp); cp_size = np.zeros(n_cp, dtype=np.int64); cp_sec = np.zeros(n_cp)
        cdef long long[::1] cmv = cp_mis, csv = cp_size
        cdef double[::1] cqv = cp_sq, ctv = cp_sec
        cdef double[:, ::1] scv
        cdef double* scp = NULL
        if scores is not None:
            if scores.shape[0] < n or scores.shape[1] != self.n_outputs:
                raise ValueError("scores buffer has the wrong shape")
            scv = scores
            if n:
                scp = &scv[0, 0]

        cdef RowView rv = row_view(rows)

        cdef Py_ssize_t t, i, k = 0
        cdef long long next_cp = cpv[0] if n_cp else -1
        cdef long long n_mis = 0
        cdef double sq = 0.0, diff, t0, yi, ystep, loc = 0.0, scl = 1.0, delta
        cdef bint tnorm = self.target_norm and self.task == TASK_REGRESSION
        cdef int C = self.n_outputs, c, status = 0, nnz
        cdef const double* xr
        cdef const int* xi
        cdef double* f = self.score_buf
        cdef bint stop = False, at_cp, diverged = False, lead
        cdef double next_look, every = POLICY.interval     # seconds between two looks at the machine

        t0 = now()
        next_look = t0 + every
        with nogil:
            for t in range(n):
                if (t & 63) == 63 and self.max_threads > 1 and now() >= next_look:
                    with gil:
                        self.follow_machine()
                    next_look = now() + every
                i = ordp[t] if ordp != NULL else t
                get_row(&rv, i, &xr, &xi, &nnz)
                if ordp != NULL:
                    # A permuted stream jumps around X: fetch the data of the row 4 ahead (and
                    # the offsets of the row 8 ahead) while this example computes, so the cache
                    # and TLB misses overlap the work (no effect on results).  One row ahead
                    # was too late for the fast learners: FOGD at D = 4 took 0.13 us per
                    # example against 0.07 in file order; 4 ahead, 0.08.
                    if t + 8 < n:
                        prefetch_offsets(&rv, ordp[t + 8])
                    if t + 4 < n:
                        prefetch_row(&rv, ordp[t + 4])
                        OK_PREFETCH(&yv[ordp[t + 4]])
                yi = yv[i]
                ystep = yi
                if tnorm:
                    # Online standardisation (Welford): the prediction uses the statistics of
                    # the targets before this one (loc, scl); the update's target uses them with
                    # y_t included, so |ystep| <= sqrt(n - 1) and the first steps stay bounded.
                    loc = self.t_mean
                    scl = tscale(self.t_count, self.t_m2)
                    self.t_count += 1
                    delta = yi - self.t_mean
                    self.t_mean += delta / self.t_count
                    self.t_m2 += delta * (yi - self.t_mean)
                    ystep = (yi - self.t_mean) / tscale(self.t_count, self.t_m2)
                status = self.step(xr, xi, nnz, ystep, f)
                if status != 0:
                    break
                if self.averaged:              # the recorded prediction: the averaged hypothesis
                    lead = self.average_leads()
                    for c in range(C):
                        self.alt_buf[c] = f[c]
                        f[c] += self.avg_buf[c]
                    if self.avg_leader:
                        # both hypotheses' losses on this example; the prediction was the leader's
                        # on the examples before it (decided above, before the label counts)
                        self.loss_avg += example_loss(self.task, f, yi, C, tnorm, loc, scl)
                        self.loss_cur += example_loss(self.task, self.alt_buf, yi, C, tnorm, loc, scl)
                        if not lead:
                            for c in range(C):
                                f[c] = self.alt_buf[c]
                if tnorm:
                    f[0] = loc + scl * f[0]
                self.n_seen += 1
                # A non-finite pre-update score means the model has overflowed: stop rather
                # than count NaN comparisons as an error rate (one test per output).
                for c in range(C):
                    if not isfinite(f[c]):
                        diverged = True
                if diverged:
                    if self.out_of_memory():       # a NaN from a failed allocation, not the model
                        diverged = False
                        status = -1
                    break
                if self.task == TASK_REGRESSION:
                    diff = yi - f[0]
                    # A finite score whose squared error overflows (|y - f| > 1e154) has
                    # diverged just the same: an infinite RMSE would be a silent non-answer.
                    if not isfinite(sq + diff * diff):
                        diverged = True
                        break
                    sq += diff * diff
                elif is_mistake(self.task, f, yi, C):
                    n_mis += 1
                if scp != NULL:
                    for c in range(C):
                        scp[t * C + c] = f[c]
                at_cp = t + 1 == next_cp
                if at_cp:
                    cmv[k] = n_mis
                    cqv[k] = sq
                    csv[k] = self.model_size()
                    ctv[k] = now() - t0
                    k += 1
                    next_cp = cpv[k] if k < n_cp else -1
                if at_cp or (t & 8191) == 8191:
                    with gil:
                        if PyErr_CheckSignals() != 0:
                            stop = True
                        elif at_cp and callback is not None:
                            callback(t + 1, n_mis, sq, self.model_size(), ctv[k - 1])
                    if stop:
                        break
        seconds = now() - t0
        if stop:
            raise KeyboardInterrupt
        if status != 0:
            raise MemoryError("the learner could not allocate memory for its model")
        if diverged:
            raise DivergenceError(int(t + 1), self._learner_name())
        return {"n_mistakes": int(n_mis), "sq_error": float(sq), "seconds": seconds, "n_done": int(t + 1 if n else 0),
                "cp_mistakes": cp_mis[:k], "cp_sq_error": cp_sq[:k], "cp_size": cp_size[:k], "cp_seconds": cp_sec[:k]}

    def decision_function(self, rows):
        """Scores of every row with the current model, shape (n, n_outputs)."""
        cdef Py_ssize_t n = rows.n_rows, i
        out = np.zeros((n, self.n_outputs))
        cdef double[:, ::1] ov = out
        cdef RowView rv = row_view(rows)
        cdef const double* xr
        cdef const int* xi
        cdef int nnz, status = 0
        cdef double next_look, every = POLICY.interval
        self.follow_machine()
        with nogil:
            next_look = now() + every
            for i in range(n):
                if (i & 63) == 63 and self.max_threads > 1 and now() >= next_look:
                    with gil:
                        self.follow_machine()
                    next_look = now() + every
                get_row(&rv, i, &xr, &xi, &nnz)
                status = self.predict_row(xr, xi, nnz, &ov[i, 0])
                if status != 0:
                    break
        if status != 0:
            raise MemoryError("the learner could not allocate scratch memory")
        if self.target_norm and self.task == TASK_REGRESSION:
            out *= self.target_scale
            out += self.target_location
        return self.finite_scores(out)

    def finite_scores(self, out):
        """``out`` (n, n_outputs) when every score is finite; else DivergenceError naming the row.

        Never hand out NaN or infinite predictions: a model that overflowed (a run that stopped
        with DivergenceError, or a hand-made state) says so instead.  Every ``decision_function``
        returns through here.
        """
        if out.shape[0] and not np.isfinite(out).all():
            i = int(np.flatnonzero(~np.isfinite(out).all(axis=1))[0])
            name = self._learner_name()
            raise DivergenceError(i + 1, name, f"{name} cannot predict: the score of row {i + 1} is not "
                                  f"finite (NaN or infinity) because the model has overflowed; retrain "
                                  f"with a smaller eta, a larger lam, or scaled data")
        return out

    def _learner_name(self):
        name = type(self).__name__
        return name[:-4] if name.endswith("Core") else name

    # -- state for pickling and model files: plain dicts of numbers and arrays ----------------
    def get_state(self):
        return {"n_features": self.n_features, "task": self.task, "n_outputs": self.n_outputs,
                "n_seen": self.n_seen, "n_threads": self.max_threads, "target_norm": int(self.target_norm),
                "averaged": int(self.averaged), "avg_leader": int(self.avg_leader),
                "loss_avg": self.loss_avg, "loss_cur": self.loss_cur,
                "t_count": self.t_count, "t_mean": self.t_mean, "t_m2": self.t_m2}

    def set_state(self, state):
        self._setup(int(state["n_features"]), int(state["task"]), int(state["n_outputs"]), int(state["n_threads"]))
        self.n_seen = int(state["n_seen"])
        self.averaged = bool(state.get("averaged", 0))
        self.avg_leader = bool(state.get("avg_leader", 0))
        self.loss_avg = float(state.get("loss_avg", 0.0))
        self.loss_cur = float(state.get("loss_cur", 0.0))
        self.target_norm = bool(state.get("target_norm", 0))
        self.t_count = int(state.get("t_count", 0))
        self.t_mean = float(state.get("t_mean", 0.0))
        self.t_m2 = float(state.get("t_m2", 0.0))

    def __reduce__(self):
        return (_rebuild_core, (type(self), self.get_state()))


def _rebuild_core(cls, state):
    core = cls.__new__(cls)
    core.set_state(state)
    return core
