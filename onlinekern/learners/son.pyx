# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""SON: Sketched Online Newton on random Fourier features (Luo, Agarwal, Cesa-Bianchi & Langford,
"Efficient Second Order Online Learning by Sketching", NeurIPS 2016, Algorithm 1 with the
Frequent-Directions sketch of their Algorithm 2, on FOGD's map z(x)).

Online Newton Step on the 2D features: with g_t the loss gradient in w,

    A_t = alpha I + eta sum_{s <= t} g_s g_s^T,     w_{t+1} = w_t - A_t^{-1} g_t,

the sum replaced by S^T S, S a Frequent-Directions sketch of the rows sqrt(eta) g_s: at most 2m
rows; when 2m are held, S <- diag(sqrt(max(lambda_i - lambda_m, 0))) V_m^T from S S^T's
eigenpairs (lambda_m the m-th largest), so m - 1 rows remain.  By Woodbury

    A^{-1} g = (g - S^T (alpha I + S S^T)^{-1} S g) / alpha,

O(k F) per example for k sketch rows and F = 2D features, with S S^T and the Cholesky factor of
alpha I + S S^T kept as rows arrive (include/ok_sketch.h).  The paper's sigma_t (exp-concavity)
is taken 0 and its eta_t constant (its experiments' setting).

Two departures for regression under the product preset (both off for classification and under
``preset="paper"``):

* Robust Frequent Directions (Luo, Chen, Zhang & Zhang, "Robust Frequent Directions with
  Application in Online Learning", JMLR 2019): each shrink adds half of the mass it removes,
  delta / 2, to alpha, so the directions the sketch dropped keep a curvature of the size of what
  was seen along them instead of falling back to alpha: with plain FD and a small alpha, every
  step outside the sketch's 2m directions is 1/alpha times the gradient.  Classification keeps
  plain FD: there those large steps help (measured on the 5,000-row defaults benchmark with RFD
  on: 59 of 98 cells worse, letter.scale 27.2 -> 34.0 % with the hinge loss, ijcnn1 6.8 -> 8.4 %).
* Curvature floor (regression): the sketch row's weight is max(eta ||h||^2, 1) instead of
  eta ||h||^2, so A is at least alpha I + z z^T along the example's own row (the squared loss's
  Hessian on the online-standardised target): then z^T A^{-1} z < 1 and a step moves the
  prediction on its own example by less than |h| (for the squared loss, less than the residual:
  no overshoot; a shrink on that step takes up to delta off the row, Robust FD gives half back).
  ONS's outer product of gradients alone vanishes near the target for the squared loss
  (h = f - y) and is eta h^2 < 1 for the Lipschitz losses (eps, l1, quantile), so with a small
  alpha A stays near alpha and each step overshoots by up to 1 / alpha.  Classification keeps
  ONS's rule.

Multiclass (not in the paper): g_c = h_c z for every class shares one sketch of the rows
sqrt(eta) ||h|| z (A approximates sum_c g_c g_c^T = ||h||^2 z z^T on each class's block), so
A^{-1} z is computed once and w_c -= h_c A^{-1} z.  Binary and regression (C = 1) are the paper's
update exactly.  Cost per example: FOGD's map, 2 k F for S z and S^T c, O(k^2) for the solve,
and every m examples an eigen-decomposition of a 2m x 2m matrix (Householder tridiagonalisation
and implicit QL, include/ok_sketch.h) and a (m - 1) x 2m x F product.
"""
from libc.math cimport sqrt, NAN
from onlinekern._core.features cimport FeatureCore
from onlinekern._core.losses cimport TaskLoss
from onlinekern._core.vmath cimport ok_dot, ok_project
from libc.string cimport memcpy, memset

import numpy as np
from onlinekern.base import FeatureLearner, check_flag, check_positive, check_positive_int
from onlinekern.learners.ogd import ALL_LOSSES, learner_loss, task_loss

cdef extern from "ok_sketch.h" nogil:
    int ok_chol_append(double* L, int ld, int k, const double* b, double d)
    void ok_chol_solve(const double* L, int ld, int k, const double* u, double* c)
    void ok_sym_eig(double* A, int n, int ld, double* w, double* V, int* order, double* tmp)
    void ok_fd_combine(int F, int n, int kept, const double* C, int ldc, const double* S, double* R)


cdef class SONCore(FeatureCore):
    cdef public double alpha, eta       # alpha grows by delta / 2 per shrink when robust
    cdef public bint robust, floor      # Robust Frequent Directions; curvature floor (module doc)
    cdef public TaskLoss loss
    cdef readonly int m                 # sketch size: at most 2m rows held
    cdef readonly int k                 # rows held
    cdef public long long n_shrinks
    cdef object bufs_                   # numpy buffers below, kept alive
    cdef double* S                      # (2m + 1) x F: the sketch rows, then z for the solve
    cdef double* G                      # 2m x 2m: S S^T
    cdef double* L                      # 2m x 2m: Cholesky factor of alpha I + G
    cdef double* u                      # 2m: S z, then (alpha I + G)^{-1} S z
    cdef double* v                      # F: alpha A^{-1} z
    cdef double* ework                  # eigen-decomposition scratch: A, V (2m x 2m), w, tmp (2m);
                                        # between shrinks, the solve's 2m coefficients
    cdef double* R                      # m x F: the shrink's new rows, before they go back to S
    cdef int* order                     # 2m: ok_sym_eig's scratch, and the solve's row indices

    def _setup_sketch(self, int m, double alpha, double eta, bint robust=False, bint floor=False):
        if m < 1:
            raise ValueError(f"sketch_size must be >= 1, got {m}")
        self.m, self.alpha, self.eta, self.robust, self.floor = m, alpha, eta, robust, floor
        cdef int n2 = 2 * m
        self.bufs_ = (np.zeros((n2 + 1, self.F2)), np.zeros((n2, n2)), np.zeros((n2, n2)), np.zeros(n2),
                      np.zeros(self.F2), np.zeros(2 * n2 * n2 + 2 * n2), np.zeros(n2, dtype=np.intc),
                      np.zeros((m, self.F2)))
        self._bind()
        self.k = 0
        self.n_shrinks = 0

    def _bind(self):
        cdef double[:, ::1] s = self.bufs_[0], g = self.bufs_[1], l = self.bufs_[2]
        cdef double[:, ::1] r = self.bufs_[7]
        cdef double[::1] u = self.bufs_[3], v = self.bufs_[4], e = self.bufs_[5]
        cdef int[::1] o = self.bufs_[6]
        self.S, self.G, self.L, self.u, self.v, self.ework, self.order, self.R = \
            &s[0, 0], &g[0, 0], &l[0, 0], &u[0], &v[0], &e[0], &o[0], &r[0, 0]

    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        self.fmap.features(x, idx, nnz, NULL)
        self.w.scores(self.fmap.cs, self.fmap.norm, out)
        return 0

    cdef void _shrink(self) noexcept nogil:
        """Frequent Directions on the 2m rows held: S <- diag(sqrt(max(lambda_i - lambda_m, 0)))
        V^T, V^T = diag(lambda)^{-1/2} U^T S from G = U diag(lambda) U^T; G and L become diagonal."""
        cdef int n2 = 2 * self.m, F = self.F2, i, r, kept = 0
        cdef double* A = self.ework
        cdef double* U = self.ework + n2 * n2
        cdef double* lam = self.ework + 2 * n2 * n2
        cdef double* tmp = lam + n2
        cdef double delta, f
        memcpy(A, self.G, <size_t>(n2 * n2) * sizeof(double))
        ok_sym_eig(A, n2, n2, lam, U, self.order, tmp)
        delta = lam[self.m - 1]
        for i in range(self.m - 1):             # lambda is decreasing: the rows that stay nonzero
            if not (lam[i] > delta and lam[i] > 0.0):
                break
            kept += 1
        # new row i = sum_r (f_i U[r, i]) S_r, f_i = sqrt((lambda_i - delta) / lambda_i): the
        # coefficients into A (free after the eigensolver), the rows into R by contiguous row
        # operations (ok_fd_combine: the axpy sequence over the 2m rows, register-blocked), then
        # back into S; rows kept..2m-1 become zero
        for i in range(kept):
            f = sqrt((lam[i] - delta) / lam[i])
            for r in range(n2):
                A[i * n2 + r] = f * U[r * n2 + i]
        ok_fd_combine(F, n2, kept, A, n2, self.S, self.R)
        if self.robust and delta > 0.0:
            self.alpha = self.alpha + 0.5 * delta
        if kept > 0:
            memcpy(self.S, self.R, <size_t>kept * <size_t>F * sizeof(double))
        memset(self.S + <Py_ssize_t>kept * F, 0, <size_t>(n2 - kept) * <size_t>F * sizeof(double))
        for i in range(n2 * n2):
            self.G[i] = 0.0
            self.L[i] = 0.0
        for i in range(kept):
            self.G[i * n2 + i] = lam[i] - delta
            self.L[i * n2 + i] = sqrt(self.alpha + lam[i] - delta)
        self.k = kept
        self.n_shrinks += 1

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef int c, i, j, k, n2 = 2 * self.m, F = self.F2
        cdef double hn2 = 0.0, a, zz, w2, nrm = self.fmap.norm
        cdef double* row
        cdef const double* cs
        self.fmap.features(x, idx, nnz, NULL)
        cs = self.fmap.cs
        self.w.scores(cs, nrm, out)
        self.loss.grad(out, y, self.n_outputs, g)
        for c in range(self.n_outputs):
            hn2 = hn2 + g[c] * g[c]
        if hn2 == 0.0:
            return 0
        # u = S z (z = nrm cs), then the new sketch row sqrt(eta hn2) z, its Gram row a u and
        # diagonal a^2 z.z, and the Cholesky factor's new row
        k = self.k
        for i in range(k):
            self.u[i] = nrm * ok_dot(self.S + <Py_ssize_t>i * F, cs, F)
        zz = nrm * nrm * ok_dot(cs, cs, F)
        w2 = self.eta * hn2
        if self.floor:
            w2 = max(w2, 1.0)
        a = sqrt(w2)
        row = self.S + <Py_ssize_t>k * F
        for i in range(F):
            row[i] = a * nrm * cs[i]
        for i in range(k):
            self.G[k * n2 + i] = a * self.u[i]
            self.G[i * n2 + k] = a * self.u[i]
        self.G[k * n2 + k] = a * a * zz
        if ok_chol_append(self.L, n2, k, self.G + k * n2, self.alpha + self.G[k * n2 + k]) != 0:
            # the sketch overflowed (a huge eta or gradient: inf - inf in the factor): the model
            # is gone, so its weights say so and the next score stops the run (DivergenceError)
            for i in range(self.n_outputs * F):
                self.w.W[i] = NAN
            return 0
        self.u[k] = a * zz
        self.k = k + 1
        if self.k == n2:
            self._shrink()
            k = self.k
            for i in range(k):
                self.u[i] = nrm * ok_dot(self.S + <Py_ssize_t>i * F, cs, F)
        # v = alpha A^{-1} z = z - S^T (alpha I + G)^{-1} S z: z into S's last row, then
        # v = 1 z - sum_i u_i S_i over the nonzero u_i in one register-blocked pass (ok_project: the
        # same bits as v = z followed by one ok_axpy per row); k < 2m here, so k + 1 terms fit
        ok_chol_solve(self.L, n2, self.k, self.u, self.u)
        row = self.S + <Py_ssize_t>n2 * F
        for i in range(F):
            row[i] = nrm * cs[i]
        self.order[0] = n2
        self.ework[0] = 1.0
        j = 1
        for i in range(self.k):
            if self.u[i] != 0.0:
                self.order[j] = i
                self.ework[j] = -self.u[i]
                j += 1
        ok_project(F, j, self.ework, self.order, self.S, self.v)
        for c in range(self.n_outputs):
            if g[c] != 0.0:
                self.w.axpy(c, -g[c] / self.alpha, self.v)
        return 0

    def get_state(self):
        st = FeatureCore.get_state(self)
        st.update(alpha=self.alpha, eta=self.eta, robust=int(self.robust), floor=int(self.floor),
                  sketch_size=self.m, k=self.k, n_shrinks=self.n_shrinks,
                  S=np.array(self.bufs_[0][:self.k]), G=np.array(self.bufs_[1][:self.k, :self.k]),
                  L=np.array(self.bufs_[2][:self.k, :self.k]), loss=self.loss.spec)
        return st

    def set_state(self, st):
        FeatureCore.set_state(self, st)
        self._setup_sketch(int(st["sketch_size"]), float(st["alpha"]), float(st["eta"]), bool(st.get("robust", 0)),
                           bool(st.get("floor", 0)))
        k = int(st["k"])
        if not 0 <= k < 2 * self.m:
            raise ValueError("sketch rows do not match the sketch size")
        self.bufs_[0][:k] = np.asarray(st["S"]).reshape(k, self.F2)
        self.bufs_[1][:k, :k] = np.asarray(st["G"]).reshape(k, k)
        self.bufs_[2][:k, :k] = np.asarray(st["L"]).reshape(k, k)
        self.k = k
        self.n_shrinks = int(st["n_shrinks"])
        self.loss = task_loss(st["loss"], self.task)

    @property
    def sketch(self):
        """The sketch rows S (k, 2D), A = alpha I + S^T S."""
        return np.array(self.bufs_[0][:self.k])



class SON(FeatureLearner):
    """Sketched Online Newton on random Fourier features: a second-order online learner.

    Luo, Agarwal, Cesa-Bianchi & Langford, "Efficient Second Order Online Learning by Sketching",
    NeurIPS 2016 (Frequent-Directions sketch), on FOGD's paired random Fourier features
    z(x) = D^{-1/2}[cos Omega^T x; sin Omega^T x].  Each step preconditions the loss gradient by
    A^{-1}, A = alpha I + eta sum_s g_s g_s^T kept as a sketch of ``sketch_size`` directions (at
    most twice that many rows), at O(sketch_size x D) per example.

    Parameters
    ----------
    n_components : int
        Number of frequencies D (2D weights) (400).
    sketch_size : int
        m: the sketch holds at most 2m rows and keeps m - 1 after each shrink (20).
    gamma : float, 'auto', 'median' or None
        Kernel width, as for :class:`FOGD` ('auto': chosen online among multiples of the median
        heuristic width).
    alpha : float > 0
        Regularisation of A (A = alpha I before any gradient) (0.1).
    eta : float > 0
        Weight of each gradient in A (1.0); ``alpha / eta`` is the ridge of the Newton system, and
        the first step is 1/alpha times the gradient.
    robust_sketch : bool or 'auto'
        Robust Frequent Directions: each shrink adds delta / 2 to alpha (module docstring);
        'auto' (default): True for regression, False for classification (the 'paper' preset:
        False, plain Frequent Directions).
    curvature_floor : bool or 'auto'
        Weight each sketch row by max(eta ||h||^2, 1) (module docstring: a step never moves the
        prediction by more than its gradient); 'auto' (default): True for regression, False for
        classification (the 'paper' preset: False).
    loss : str
        Any loss of onlinekern.losses (hinge default); multiclass: hinge, logistic, softmax (the
        classes share one sketch).
    epsilon, huber_delta, quantile : float
        Loss parameters.
    preset : {'auto', 'paper'}
        As for every learner ('paper': the papers' width).
    seed : int
        Decides the random features and the median heuristic.
    n_threads : int or None
        Threads of the feature map; results never depend on it.
    """

    family = "son"
    losses = ALL_LOSSES
    summary = "sketched online Newton (Frequent Directions) on D random Fourier features"
    paper = "Luo, Agarwal, Cesa-Bianchi & Langford, NeurIPS 2016"
    paper_defaults = {"gamma": None, "robust_sketch": False, "curvature_floor": False}

    def __init__(self, n_components=400, sketch_size=20, gamma="auto", alpha=0.1, eta=1.0, robust_sketch="auto",
                 curvature_floor="auto", loss="hinge", epsilon=0.1, huber_delta=1.0, quantile=0.5, preset="auto",
                 seed=0, n_threads=None):
        self.n_components = n_components
        self.sketch_size = sketch_size
        self.gamma = gamma
        self.preset = preset
        self.alpha = alpha
        self.eta = eta
        self.robust_sketch = robust_sketch
        self.curvature_floor = curvature_floor
        self.loss = loss
        self.epsilon = epsilon
        self.huber_delta = huber_delta
        self.quantile = quantile
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        super()._validate_params()
        check_positive("alpha", self.alpha)
        check_positive("eta", self.eta)
        check_positive_int("sketch_size", self.sketch_size)
        check_flag("robust_sketch", self.robust_sketch)
        check_flag("curvature_floor", self.curvature_floor)

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """robust_sketch and curvature_floor: True for regression (module docstring)."""
        if name in ("robust_sketch", "curvature_floor"):
            return task == "regression"
        return super().auto_value(name, X, task, n_outputs, n_stream)

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = SONCore()
        core._setup_features(n_features, task, n_outputs, int(self.n_components), gamma, self.seed, None,
                             self._n_threads())
        core.loss = learner_loss(self, task)
        core._setup_sketch(int(self.sketch_size), float(self.alpha), float(self.eta),
                           bool(self.param_value("robust_sketch")), bool(self.param_value("curvature_floor")))
        return core

    @property
    def n_shrinks_(self):
        """Frequent-Directions shrinks so far."""
        self._check_fitted()
        return int(self.core_.n_shrinks)
