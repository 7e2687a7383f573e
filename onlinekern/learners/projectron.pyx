# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Projectron and Projectron++ (Orabona, Keshet & Caputo, "Bounded kernel-based online learning",
JMLR 10, 2009; ICML 2008), ALGORITHMS.md §3.5.

A Perceptron that, on a mistake, projects the new example onto the span of the current SVs
instead of adding it, whenever the projection error is small:

    d = K^{-1} k_t,  P = k_t^T d = ||Pi_S k(x_t, .)||^2,  delta^2 = max(k_tt - P, 0)

(delta is the *distance*, not its square; DOGMA compares the square).  If delta <= eta, or
delta^2 <= 1e-12 (appending would make K^{-1} blow up), or the optional budget B is full:
alpha <- alpha + y_t d; otherwise x_t joins S and K^{-1} grows by the block-inverse formula

    K^{-1} <- [[K^{-1} + d d^T / delta^2, -d / delta^2], [-d^T / delta^2, 1 / delta^2]].

Projectron++ also updates on margin errors 0 < y_t f < 1 (loss l = 1 - y_t f), S unchanged:
rule ``eta`` (reconstructed from DOGMA): if P > 0 and l > delta/eta, tau = min(l/P, 1,
2(l - delta/eta)/P); rule ``U`` (LSOKL, needs B): U = sqrt((B+1)/ln(B+1))/4, tau = min(l/P, 1),
update if tau (2l - tau P - 2 U delta) >= 0; then alpha <- alpha + tau y_t d.  Both rules skip
P = 0 (k_t = 0, so d = 0 and there is nothing to add; the spec states the guard for ``eta`` only).

Multiclass (LSOKL Matlab): one S and one K^{-1} for all classes, alpha in R^{|S| x C}; a
projection adds d to column y and subtracts it from column r (the runner-up); an append is a
Crammer–Singer step; Projectron++ uses P_2 = 2P and delta_2 = sqrt(2) delta.  Regression
(Projectron only, LSOKL): on |y - f| > epsilon the step s = eta_r sign(y - f) is projected
(alpha += s d) or appended.

K^{-1} is symmetric: only its upper triangle is stored and updated, in a square buffer with a
fixed row stride, preallocated to B x B when a budget is set, grown geometrically (x2, outside
the common path) otherwise.  d is only computed when an update happens.  Cost per update
O(|S| d + |S|^2).

Numerics: delta^2 is clipped at 0 and nothing is appended when delta^2 <= 1e-12, so K^{-1} stays
finite.  Its accuracy is that of the block formula: rounding is amplified by 1/delta^2 at each
append, so ||K^{-1} K_S - I|| stays near 1e-12 when proj_eta bounds delta away from 0 (the
default 0.1 gives 1/delta^2 <= 100), but with proj_eta ~ 0 and near-duplicate inputs
(cond(K_S) ~ 1e12 and more) K^{-1} loses its digits while staying finite.
"""
from libc.math cimport sqrt, log, NAN
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from onlinekern._core.learner cimport TASK_BINARY, TASK_MULTICLASS, TASK_REGRESSION
from onlinekern._core.support cimport KernelCore
from onlinekern._core.losses cimport runner_up
from onlinekern._core.vmath cimport ok_dot, ok_axpy

import numpy as np

from onlinekern.learners.perceptron import Averaged
from onlinekern.base import KernelLearner, is_auto, check_nonnegative as _nonnegative
from onlinekern import params
from onlinekern.params import AUTO_BUDGET, sv_cost

cdef double DELTA2_MIN = 1e-12
cdef double SQRT2 = 1.4142135623730951

RULES = ("eta", "U")


cdef class ProjectronCore(KernelCore):
    cdef public double proj_eta, eta, epsilon
    cdef readonly Py_ssize_t budget       # -1: no budget
    cdef readonly bint plus
    cdef readonly int rule                # 0: eta (JMLR/DOGMA), 1: U (LSOKL)
    cdef readonly double U
    cdef readonly double delta2           # delta^2 of the last update (NaN before)
    cdef double* Kinv                     # kcap x kcap, row stride kcap; upper triangle of n x n
    cdef double* dbuf                     # kcap
    cdef Py_ssize_t kcap

    def __dealloc__(self):
        free(self.Kinv)
        free(self.dbuf)

    def _setup_projectron(self, Py_ssize_t budget, bint plus, int rule):
        self.budget = budget
        self.plus = plus
        self.rule = rule
        self.U = 0.25 * sqrt((budget + 1.0) / log(budget + 1.0)) if budget > 0 else NAN
        self.delta2 = NAN
        if self.grow(budget if budget > 0 else 64) != 0:
            raise MemoryError("cannot allocate the inverse kernel matrix")

    cdef int grow(self, Py_ssize_t cap) noexcept nogil:
        """Reallocate K^{-1} and d for cap SVs, keeping the n x n block. 0 on success."""
        cdef Py_ssize_t n = self.sv.n if self.sv.n < self.kcap else self.kcap, i   # rows held
        cdef double* K2
        cdef double* d2
        if cap <= self.kcap:
            return 0
        K2 = <double*>malloc(cap * cap * sizeof(double))
        d2 = <double*>malloc(cap * sizeof(double))
        if K2 == NULL or d2 == NULL:
            free(K2)
            free(d2)
            return -1
        for i in range(n):
            memcpy(K2 + i * cap, self.Kinv + i * self.kcap, n * sizeof(double))
        if n:
            memcpy(d2, self.dbuf, n * sizeof(double))     # d may be in use (grow during append)
        free(self.Kinv)
        free(self.dbuf)
        self.Kinv = K2
        self.dbuf = d2
        self.kcap = cap
        return 0

    cdef int append_sv(self, const double* x, const int* idx, int nnz, const double* a, double delta2) noexcept nogil:
        """x joins S with coefficients a; K^{-1} grows by the block formula (d in dbuf)."""
        cdef Py_ssize_t n = self.sv.n, i, s
        cdef double inv = 1.0 / delta2
        cdef double* d = self.dbuf
        cdef double* row
        if n == self.kcap and self.grow(2 * self.kcap) != 0:
            return -1
        d = self.dbuf
        if self.sv.append(x, idx, nnz, self.xsq, a) < 0:
            return -1
        s = self.kcap
        for i in range(n):
            row = self.Kinv + i * s
            ok_axpy(<int>(n - i), d[i] * inv, d + i, row + i)     # K^{-1} + d d^T / delta^2
            row[n] = -d[i] * inv
        self.Kinv[n * s + n] = inv
        return 0

    cdef void inverse_times(self, const double* k, Py_ssize_t n) noexcept nogil:
        """dbuf = K^{-1} k from the upper triangle: each row is read once (it is in cache for
        both its dot product and its axpy), half the memory traffic of the full matrix."""
        cdef Py_ssize_t i
        cdef double* row
        cdef double* d = self.dbuf
        for i in range(n):
            d[i] = 0.0
        for i in range(n):
            row = self.Kinv + i * self.kcap
            d[i] += ok_dot(row + i, k + i, <int>(n - i))
            ok_axpy(<int>(n - i - 1), k[i], row + i + 1, d + i + 1)

    cdef void add_d(self, double scale, int cy, int cr) noexcept nogil:
        """alpha_{., cy} += scale d and, when cr >= 0, alpha_{., cr} -= scale d."""
        cdef Py_ssize_t i
        cdef int C = self.sv.C
        cdef double s = scale / self.sv.scale
        cdef double* coef = self.sv.coef
        for i in range(self.sv.n):
            coef[i * C + cy] += s * self.dbuf[i]
            if cr >= 0:
                coef[i * C + cr] -= s * self.dbuf[i]
        if self.sv.track:                                          # averaged predictions' history
            for i in range(self.sv.n):
                self.sv.track_change(i, cy, scale * self.dbuf[i])
                if cr >= 0:
                    self.sv.track_change(i, cr, -scale * self.dbuf[i])

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* a = self.grad_buf
        cdef int c, C = self.n_outputs, yi = 0, r = -1
        cdef Py_ssize_t n = self.sv.n, i
        cdef bint mistake, margin = False
        cdef double m = 0.0, step = 0.0, P, delta2, delta, l, Pp, dp, thr, tau, beta
        self.kernel_scores(x, idx, nnz, out)
        # 1. what kind of update, if any
        if self.task == TASK_BINARY:
            m = y * out[0]
            mistake = m <= 0.0
            a[0] = y
        elif self.task == TASK_MULTICLASS:
            yi = <int>y
            r = runner_up(out, yi, C)
            m = out[yi] - out[r]
            mistake = m <= 0.0
            for c in range(C):
                a[c] = 0.0
            a[yi] = 1.0
            a[r] = -1.0
        else:
            if y - out[0] > self.epsilon:
                step = self.eta
            elif out[0] - y > self.epsilon:
                step = -self.eta
            mistake = step != 0.0
            a[0] = step
        if not mistake:
            margin = self.plus and self.task != TASK_REGRESSION and 0.0 < m < 1.0
            if not margin:
                return 0
        if n == 0:
            # f = 0, so this is a mistake: S = ((x_t, a)), K^{-1} = [1/k_tt] = [1]
            if self.sv.append(x, idx, nnz, self.xsq, a) < 0:
                return -1
            self.Kinv[0] = 1.0
            self.delta2 = 1.0
            return 0
        # 2. d = K^{-1} k_t, P = k_t^T d, delta^2 = max(k_tt - P, 0) with k_tt = 1
        self.inverse_times(self.sv.k, n)
        P = ok_dot(self.sv.k, self.dbuf, <int>n)
        delta2 = 1.0 - P
        if delta2 < 0.0:
            delta2 = 0.0
        delta = sqrt(delta2)
        self.delta2 = delta2
        # 3. mistake: project, or append
        if mistake:
            if delta <= self.proj_eta or delta2 <= DELTA2_MIN or (self.budget > 0 and n >= self.budget):
                if self.task == TASK_BINARY:
                    self.add_d(y, 0, -1)
                elif self.task == TASK_MULTICLASS:
                    self.add_d(1.0, yi, r)
                else:
                    self.add_d(step, 0, -1)
                return 0
            return self.append_sv(x, idx, nnz, a, delta2)
        # 4. Projectron++ margin error 0 < m < 1, S unchanged
        l = 1.0 - m
        Pp = P
        dp = delta
        if self.task == TASK_MULTICLASS:
            Pp = 2.0 * P
            dp = SQRT2 * delta
        if not Pp > 0.0:
            return 0                       # k_t = 0 (x_t far from S): d = 0, nothing to add
        if self.rule == 0:
            if self.proj_eta > 0.0:
                thr = dp / self.proj_eta
            elif dp == 0.0:
                thr = 0.0                  # eta = 0: only an exact projection (delta = 0) updates
            else:
                return 0
            if not l > thr:
                return 0
            tau = l / Pp
            if tau > 1.0:
                tau = 1.0
            if 2.0 * (l - thr) / Pp < tau:
                tau = 2.0 * (l - thr) / Pp
        else:
            tau = l / Pp
            if tau > 1.0:
                tau = 1.0
            beta = tau * (2.0 * l - tau * Pp - 2.0 * self.U * dp)
            if not beta >= 0.0:
                return 0
        if self.task == TASK_BINARY:
            self.add_d(tau * y, 0, -1)
        else:
            self.add_d(tau, yi, r)
        return 0

    @property
    def kernel_inverse(self):
        """The n x n inverse kernel matrix K^{-1} kept for the current SVs (slot order)."""
        cdef Py_ssize_t n = self.sv.n, i, j
        out = np.empty((n, n))
        cdef double[:, ::1] ov = out
        for i in range(n):
            for j in range(i, n):
                ov[i, j] = self.Kinv[i * self.kcap + j]
                ov[j, i] = ov[i, j]
        return out

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(proj_eta=self.proj_eta, eta=self.eta, epsilon=self.epsilon, budget=int(self.budget),
                  plus=bool(self.plus), rule=int(self.rule), delta2=self.delta2, Kinv=self.kernel_inverse)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        self.proj_eta, self.eta, self.epsilon = float(st["proj_eta"]), float(st["eta"]), float(st["epsilon"])
        budget, rule = int(st["budget"]), int(st["rule"])
        if budget == 0 or budget < -1 or self.sv.budget != budget:
            raise ValueError("Projectron state: budget does not match the support set")
        if rule not in (0, 1) or (rule == 1 and budget < 0):
            raise ValueError("Projectron state: unknown margin rule")
        Kinv = np.ascontiguousarray(st["Kinv"], dtype=np.float64)
        n = self.sv.n
        if Kinv.shape != (n, n) or not np.all(np.isfinite(Kinv)) or not np.array_equal(Kinv, Kinv.T):
            raise ValueError(f"Projectron state: Kinv must be a finite symmetric ({n}, {n}) matrix")
        free(self.Kinv)
        free(self.dbuf)
        self.Kinv = NULL
        self.dbuf = NULL
        self.kcap = 0
        self._setup_projectron(budget, bool(st["plus"]), rule)
        if self.grow(max(n, 1)) != 0:
            raise MemoryError("cannot allocate the inverse kernel matrix")
        cdef const double[:, ::1] kv = Kinv
        cdef Py_ssize_t i
        for i in range(n):
            memcpy(self.Kinv + i * self.kcap, &kv[i, 0], n * sizeof(double))
        self.delta2 = float(st["delta2"])


#: Bounds of :func:`projectron_budget`.
BUDGET_MIN, BUDGET_MAX = 200, 2048


def projectron_budget(X, n_outputs, n_stream, update_rate):
    """The product default of the Projectron's ``budget``: the largest B with
    T (B c + u B^2) <= :data:`onlinekern.params.PASS_WORK`, within [:data:`BUDGET_MIN`,
    :data:`BUDGET_MAX`] = [200, 2048] (K^{-1} is preallocated to B x B).

    Per example the kernel row costs B c (c = :func:`onlinekern.params.sv_cost`); an update
    (projection or append) costs ~B^2 multiply-adds (d = K^{-1} k_t over the stored triangle of
    K^{-1}), and u, the work of the updates per example in those units, is the worst measured
    on whole streams: an update cost 1.65 ns per B^2 on a9a (the Projectron at B = 1,500, one
    thread under load) and the Projectron updated on 45 % of poker's examples (10 classes),
    u = 1.09 there (a9a 0.27, ijcnn1 0.05); so u = 1.2 for the Projectron and 1.6 for
    Projectron++, which also updates on margin errors.  The stream's length T unknown
    (``partial_fit``): :data:`onlinekern.params.AUTO_BUDGET`.

    Parameters
    ----------
    X : array or sparse matrix, the first rows.
    n_outputs : int
    n_stream : int or None, the stream's length T.
    update_rate : float, u.

    Returns
    -------
    int
    """
    if n_stream is None:
        return AUTO_BUDGET
    c = sv_cost(X, n_outputs)
    q = params.PASS_WORK / max(1, int(n_stream))
    b = (-c + np.sqrt(c * c + 4.0 * update_rate * q)) / (2.0 * update_rate)
    return int(min(max(int(b), BUDGET_MIN), BUDGET_MAX))


def _check_projectron_params(learner):
    """The shared checks (budget None means no budget) plus the threshold's."""
    KernelLearner._validate_params(learner)
    _nonnegative("proj_eta", learner.proj_eta)


class Projectron(Averaged, KernelLearner):
    """Projectron: a kernel Perceptron that projects instead of adding when the new example is
    within distance eta of the span of the SVs.

    Orabona, Keshet & Caputo, "Bounded kernel-based online learning", JMLR 10, 2009 (ICML 2008).
    ALGORITHMS.md §3.5.  delta is the distance ||k(x_t, .) - Pi_S k(x_t, .)|| (not its square);
    never appends when delta^2 <= 1e-12.  With a budget B, projects whenever ``|S| = B``.
    Multiclass and regression follow the LSOKL Matlab code.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    proj_eta : float
        Projection threshold eta on delta (0.1, the authors' DOGMA library); 0 projects only
        examples already in the span.
    budget : int, 'auto' or None
        Hard cap on the number of SVs: a full set projects every update (the paper's budget
        form).  'auto' (default): :func:`projectron_budget`, the largest set whose kernel rows
        and K^{-1} updates keep a pass over the stream within a fixed work (332 on ijcnn1's
        141,691 rows, 702 on a9a's 32,561, 802 on poker's 25,010; 1,000 when the stream's length
        is unknown); None or the 'paper' preset: no budget.
    eta : float or 'auto'
        Regression step eta_r; 'auto' (default): 0.2 (REGRESSION_ETA in onlinekern.learners.perceptron); the 'paper' preset: 0.1 (LSOKL Matlab).
    epsilon : float
        Regression tube (0.1, LSOKL Matlab).
    average : bool or 'auto'
        Predict with the average of the hypotheses used so far (online and after training; the
        updates stay the paper's).  The Projectron never removes an SV (at the budget it
        projects), so this is the exact average over the whole stream.  'auto' (default): on for
        classification, off for regression; the 'paper' preset: off.
    task : {'classification', 'regression'}
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Seed (used by gamma='median').
    n_threads : int or None
        Threads for the kernel sum over support vectors (None: all cores, or OMP_NUM_THREADS).
    """

    family = "projectron"
    summary = "Projectron: Perceptron that projects onto the SV span unless the new example is far from it"
    paper = "Orabona, Keshet & Caputo, JMLR 2009"
    plus = False
    paper_defaults = {"gamma": None, "average": False, "budget": None, "eta": 0.1}
    average_lasts = True
    #: u of :func:`projectron_budget`: the work of the updates per example, in B^2 units.
    update_rate = 1.2

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """budget: :func:`projectron_budget`; average and eta: the Perceptron's rules."""
        if name == "budget":
            return projectron_budget(X, n_outputs, n_stream, self.update_rate)
        return super().auto_value(name, X, task, n_outputs, n_stream)

    def __init__(self, gamma="auto", proj_eta=0.1, budget="auto", eta="auto", epsilon=0.1, average="auto",
                 task="classification", preset="auto", seed=0, n_threads=None):
        self.gamma = gamma
        self.average = average
        self.preset = preset
        self.proj_eta = proj_eta
        self.budget = budget
        self.eta = eta
        self.epsilon = epsilon
        self.task = task
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        _check_projectron_params(self)

    def _rule(self):
        return 0

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        budget = self.param_value("budget")
        budget = -1 if budget is None else int(budget)
        core = ProjectronCore()
        core._setup_kernel(n_features, task, n_outputs, gamma, budget, self._n_threads())
        core.proj_eta = float(self.proj_eta)
        self._set_averaging(core)
        # regression step and tube (Projectron++ has no regression, so no such parameters)
        core.eta = float(self.param_value("eta")) if hasattr(self, "eta") else 0.1      # Projectron++: no regression
        core.epsilon = float(getattr(self, "epsilon", 0.1))
        core._setup_projectron(budget, self.plus, self._rule())
        return core

    @property
    def kernel_inverse_(self):
        """K^{-1} for the current SVs, (n_SV, n_SV), rows and columns in slot order."""
        self._check_fitted()
        return self.core_.kernel_inverse


class ProjectronPP(Projectron):
    """Projectron++: the Projectron that also updates on margin errors 0 < y f < 1.

    Orabona, Keshet & Caputo, JMLR 10, 2009.  ALGORITHMS.md §3.5 step 4: rule ``eta``
    tau = min(l/P, 1, 2(l - delta/eta)/P) when P > 0 and l > delta/eta (reconstructed from the
    authors' DOGMA code), or rule ``U`` (LSOKL, needs a budget): tau = min(l/P, 1), applied when
    tau (2l - tau P - 2 U delta) >= 0 with U = sqrt((B+1)/ln(B+1))/4.  Multiclass uses
    P_2 = 2P and delta_2 = sqrt(2) delta; no regression.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    proj_eta : float
        Projection threshold eta on delta (0.1, DOGMA).
    budget : int, 'auto' or None
        Hard cap on the number of SVs (rule 'U' needs one).  'auto' (default):
        :func:`projectron_budget` with u = 1.6 (288 on ijcnn1's 141,691 rows, 610 on a9a's
        32,561; 1,000 when the stream's length is unknown); None or the 'paper' preset: none.
    margin_rule : {'eta', 'U'}
        Margin-update rule: 'eta' (JMLR/DOGMA) or 'U' (LSOKL budget form).
    average : bool or 'auto'
        Predict with the average of the hypotheses used so far (online and after training; the
        updates stay the paper's).  The Projectron never removes an SV (at the budget it
        projects), so this is the exact average over the whole stream.  'auto' (default): on; the
        'paper' preset: off.
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Seed (used by gamma='median').
    n_threads : int or None
        Threads for the kernel sum over support vectors (None: all cores, or OMP_NUM_THREADS).
    """

    family = "projectronpp"
    tasks = ("binary", "multiclass")
    summary = "Projectron++: Projectron that also updates on margin errors (projected steps)"
    paper = "Orabona, Keshet & Caputo, JMLR 2009"
    plus = True
    update_rate = 1.6

    def __init__(self, gamma="auto", proj_eta=0.1, budget="auto", margin_rule="eta", average="auto", preset="auto",
                 seed=0, n_threads=None):
        self.gamma = gamma
        self.average = average
        self.preset = preset
        self.proj_eta = proj_eta
        self.budget = budget
        self.margin_rule = margin_rule
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        _check_projectron_params(self)
        if self.margin_rule not in RULES:
            raise ValueError(f"margin_rule must be one of {', '.join(map(repr, RULES))}, got {self.margin_rule!r}")
        if self.margin_rule == "U" and (self.budget is None or (is_auto(self.budget) and self.preset_ == "paper")):
            raise ValueError("margin_rule='U' needs a budget (U = sqrt((B+1)/ln(B+1))/4)")

    def _rule(self):
        return RULES.index(self.margin_rule)
