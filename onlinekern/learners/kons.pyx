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
   A <- A + eta ||h||^2 z z^T,  v = A^{-1} z,  w_c <- w_c - h_c v, i.e. beta_c <- beta_c - h_c L^{-T} v.

A is kept as its Cholesky factor (a rank-one update per step, column-major so every inner loop
runs over contiguous memory); L grows one row per landmark and its old rows never change, so the
coordinates of the embedding, w, A and beta carry over when a landmark joins (CON-KONS's
continuation without a re-projection).  Cost per example: the kernel row (O(j d)); on a step with
h != 0, the two triangular solves with L (j^2 / 2 madd each), the update of A's factor (~j^2) and
the solve with it (j^2).  Memory: the landmarks plus two j x j factors (B^2 doubles each).

What the papers leave open, and the choices (docstring of KONS): the embedding's matrix is
Cholesky of K_I + mu diag(p) (KORS's weighted dictionary, not an eigendecomposition of K_I); only
points with a non-zero gradient are offered to the dictionary; the projection onto abs(f(x_t)) <= C
is not applied; multiclass shares one A through ||h||^2 (as SON).
"""
from libc.math cimport sqrt
from libc.string cimport memset
from onlinekern._core.support cimport KernelCore, sv_alpha
from onlinekern._core.losses cimport TaskLoss
from onlinekern._core.rng cimport RandomStream
from onlinekern._core.vmath cimport ok_dot, ok_axpy

import numpy as np
from onlinekern.base import KernelLearner, check_positive, is_auto
from onlinekern.learners.ogd import ALL_LOSSES, learner_loss, task_loss
from onlinekern.params import AUTO_BUDGET
from onlinekern.seeding import CHOICE

# a landmark joins only if its pivot sqrt(r + mu p) squared exceeds this (duplicates of landmarks)
cdef double PIVOT_FLOOR = 1e-12


cdef class KONSCore(KernelCore):
    cdef public double alpha, eta, mu, oversample
    cdef public bint restart
    cdef public TaskLoss loss
    cdef public RandomStream rng
    cdef readonly int B
    cdef readonly long long n_added, n_restarts
    cdef object bufs_
    cdef double* LK                     # B x B row-major: L, L L^T = K_I + mu diag(p)
    cdef double* LA                     # B x B column-major (LA[c * B + r], r >= c): A's factor
    cdef double* pw                     # B: sampling probability of each landmark
    cdef double* z                      # B: the embedding of the example
    cdef double* v                      # B: A^{-1} z, then L^{-T} A^{-1} z
    cdef double* xw                     # B: the rank-one update's vector

    def _setup_kons(self, int budget, double alpha, double eta, double mu, double oversample, bint restart,
                    seed, state=None):
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        self.B = budget
        self.alpha, self.eta, self.mu, self.oversample, self.restart = alpha, eta, mu, oversample, restart
        self.rng = RandomStream(seed, CHOICE, state=state)
        B = budget
        self.bufs_ = (np.zeros(B * B), np.zeros(B * B), np.zeros(B), np.zeros(B), np.zeros(B), np.zeros(B))
        cdef double[::1] a = self.bufs_[0], b = self.bufs_[1], c = self.bufs_[2], d = self.bufs_[3]
        cdef double[::1] e = self.bufs_[4], f = self.bufs_[5]
        self.LK, self.LA, self.pw, self.z, self.v, self.xw = &a[0], &b[0], &c[0], &d[0], &e[0], &f[0]
        self.n_added = 0
        self.n_restarts = 0

    cdef void _reset(self, Py_ssize_t j) noexcept nogil:
        """PROS-N-KONS's restart: w = 0 (beta = 0) and A = alpha I."""
        cdef Py_ssize_t i
        cdef int c
        cdef double s = sqrt(self.alpha)
        cdef double* coef = self.sv.coef
        for i in range(j * self.n_outputs):
            coef[i] = 0.0
        for i in range(j):
            memset(self.LA + i * self.B, 0, j * sizeof(double))
            self.LA[i * self.B + i] = s
        self.n_restarts += 1

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef int C = self.n_outputs, c
        cdef Py_ssize_t j = self.sv.n, i, k, B = self.B
        cdef double hn2 = 0.0, r, p, piv, a, lkk, rr, cc, s, ic
        cdef double* col
        cdef double* coef
        self.kernel_scores(x, idx, nnz, out)
        self.loss.grad(out, y, C, g)
        for c in range(C):
            hn2 = hn2 + g[c] * g[c]
        if hn2 == 0.0:
            return 0
        # z = L^{-1} k_I(x) (rows of L are contiguous)
        for i in range(j):
            self.z[i] = (self.sv.k[i] - ok_dot(self.LK + i * B, self.z, i)) / self.LK[i * B + i]
        if j < B:
            r = 1.0 - ok_dot(self.z, self.z, j)
            p = 0.0
            if r > 0.0:
                p = self.oversample * r / self.mu
                if p > 1.0:
                    p = 1.0
            if self.rng.random() < p and r + self.mu * p > PIVOT_FLOOR:
                for c in range(C):
                    self.xw[c] = 0.0
                if self.sv.append(x, idx, nnz, self.xsq, self.xw) < 0:
                    return -1
                piv = sqrt(r + self.mu * p)
                for i in range(j):
                    self.LK[j * B + i] = self.z[i]
                    self.LA[i * B + j] = 0.0
                self.LK[j * B + j] = piv
                self.LA[j * B + j] = sqrt(self.alpha)
                self.pw[j] = p
                self.z[j] = r / piv
                j += 1
                self.n_added += 1
                if self.restart:
                    self._reset(j)
                    return 0
        # A <- A + eta hn2 z z^T: rank-one update of its Cholesky factor, column by column
        a = sqrt(self.eta * hn2)
        for i in range(j):
            self.xw[i] = a * self.z[i]
        for k in range(j):
            col = self.LA + k * B
            lkk = col[k]
            rr = sqrt(lkk * lkk + self.xw[k] * self.xw[k])
            cc = rr / lkk
            s = self.xw[k] / lkk
            ic = 1.0 / cc
            col[k] = rr
            for i in range(k + 1, j):
                col[i] = (col[i] + s * self.xw[i]) * ic
                self.xw[i] = cc * self.xw[i] - s * col[i]
        # v = A^{-1} z: forward (column-oriented) then backward (dots with the columns)
        for i in range(j):
            self.v[i] = self.z[i]
        for k in range(j):
            col = self.LA + k * B
            self.v[k] = self.v[k] / col[k]
            if k + 1 < j:
                ok_axpy(<int>(j - k - 1), -self.v[k], col + k + 1, self.v + k + 1)
        k = j - 1
        while k >= 0:
            col = self.LA + k * B
            self.v[k] = (self.v[k] - ok_dot(col + k + 1, self.v + k + 1, <int>(j - k - 1))) / col[k]
            k -= 1
        # v <- L^{-T} v (rows of L: column-oriented backward substitution)
        k = j - 1
        while k >= 0:
            self.v[k] = self.v[k] / self.LK[k * B + k]
            if k > 0:
                ok_axpy(<int>k, -self.v[k], self.LK + k * B, self.v)
            k -= 1
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
        return np.array(self.bufs_[0]).reshape(self.B, self.B)[:j, :j].copy()

    @property
    def newton_factor(self):
        """The Cholesky factor of A (j x j, lower)."""
        j = self.sv.n
        return np.array(self.bufs_[1]).reshape(self.B, self.B)[:j, :j].T.copy()

    @property
    def probabilities(self):
        """The sampling probability p_i of each landmark (slot order)."""
        return np.array(self.bufs_[2][:self.sv.n])

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(alpha=self.alpha, eta=self.eta, mu=self.mu, oversample=self.oversample,
                  restart=int(self.restart), budget=int(self.B), loss=self.loss.spec, rng=self.rng.state,
                  n_added=int(self.n_added), n_restarts=int(self.n_restarts), LK=self.embedding_factor,
                  LA=self.newton_factor, p=self.probabilities)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        budget = int(st["budget"])
        if budget < 1 or self.sv.budget != budget:
            raise ValueError("KONS state: budget does not match the support set")
        self._setup_kons(budget, float(st["alpha"]), float(st["eta"]), float(st["mu"]), float(st["oversample"]),
                         bool(st["restart"]), 0, st["rng"])
        self.loss = task_loss(st["loss"], self.task)
        j = self.sv.n
        LK, LA, p = (np.asarray(st[k], dtype=np.float64) for k in ("LK", "LA", "p"))
        if LK.shape != (j, j) or LA.shape != (j, j) or p.shape != (j,):
            raise ValueError("KONS state: factors do not match the landmarks")
        if j and (np.any(np.diag(LK) <= 0) or np.any(np.diag(LA) <= 0)):
            raise ValueError("KONS state: factors must have a positive diagonal")
        self.bufs_[0].reshape(budget, budget)[:j, :j] = np.tril(LK)
        self.bufs_[1].reshape(budget, budget)[:j, :j] = np.tril(LA).T
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
    paper_defaults = {"gamma": None, "budget": AUTO_BUDGET, "restart": True, "alpha": 1.0}

    def __init__(self, budget="auto", gamma="auto", alpha="auto", eta=0.3, mu=0.01, oversample=1.0, restart="auto",
                 loss="hinge", epsilon=0.1, huber_delta=1.0, quantile=0.5, preset="auto", seed=0, n_threads=None):
        self.budget = budget
        self.gamma = gamma
        self.alpha = alpha
        self.eta = eta
        self.mu = mu
        self.oversample = oversample
        self.restart = restart
        self.loss = loss
        self.epsilon = epsilon
        self.huber_delta = huber_delta
        self.quantile = quantile
        self.preset = preset
        self.seed = seed
        self.n_threads = n_threads

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """budget: 400 (a full dictionary costs ~3 B^2 per update: 0.5 M multiply-adds); restart:
        False; alpha: 0.03 (classification) or 0.3 (regression)."""
        if name == "alpha":
            return 0.3 if task == "regression" else 0.03
        if name == "budget":
            return 400
        if name == "restart":
            return False
        return super().auto_value(name, X, task, n_outputs, n_stream)

    def _validate_params(self):
        super()._validate_params()
        for name in ("alpha", "eta", "mu", "oversample"):
            if not (name == "alpha" and is_auto(self.alpha)):
                check_positive(name, getattr(self, name))
        if not (is_auto(self.restart) or isinstance(self.restart, (bool, np.bool_))):
            raise ValueError(f"restart must be True, False or 'auto', got {self.restart!r}")

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = KONSCore()
        budget = int(self.param_value("budget"))
        core._setup_kernel(n_features, task, n_outputs, gamma, budget, self._n_threads())
        core.loss = learner_loss(self, task)
        core._setup_kons(budget, float(self.param_value("alpha")), float(self.eta), float(self.mu), float(self.oversample),
                         bool(self.param_value("restart")), self.seed)
        return core

    @property
    def n_landmarks_(self):
        """Landmarks in the dictionary."""
        self._check_fitted()
        return int(self.core_.sv.n)
