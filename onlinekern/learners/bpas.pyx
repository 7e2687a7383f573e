# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""BPAs, Budgeted Passive-Aggressive "simple" (Wang & Vucetic, "Online passive-aggressive
algorithms on a budget", AISTATS 2010), ALGORITHMS.md §3.6.

PA-I with the hinge loss: on l = max(0, 1 - y_t f) > 0, tau = min(C, l / k_tt).  Below the budget
x_t joins S with tau y_t.  At the budget, for every SV r the candidate update "remove r, project
alpha_r k(x_r, .) onto k(x_t, .) and add the PA step" gives

    beta_r = alpha_r k_rt + tau y_t,  f_r = f - alpha_r k_rt + beta_r,
    Q_r = 1/2 (alpha_r^2 + beta_r^2 - 2 alpha_r beta_r k_rt) + C max(0, 1 - y_t f_r),

and the SV r* = argmin Q_r (first slot on ties, the LSOKL array order: SVs are replaced in
place) is replaced by (x_t, beta_{r*}).  k_rt = k(x_r, x_t) is the kernel row of the prediction
(left in the SupportSet by ``predict``), so a step costs O(B d) + O(B C).

Multiclass (LSOKL Matlab): l = max(0, 1 - (f_y - f_s)) with s the runner-up, tau = min(C, l/2),
beta_r = alpha_r k_rt + tau (e_y - e_s), the distance ||alpha_r||^2 + ||beta_r||^2
- 2 k_rt alpha_r . beta_r (halved in Q_r as in the binary rule and the Matlab code) and l_r from the
multiclass margin of f - alpha_r k_rt + beta_r (its own runner-up).
"""
from onlinekern._core.learner cimport TASK_BINARY, TASK_MULTICLASS
from onlinekern._core.support cimport KernelCore, sv_alpha, ok_scan_min, ok_first_eq
from onlinekern._core.losses cimport runner_up

cdef extern from *:
    """
    /* Q_r of every candidate r < n (binary BPA-S), in the operation order of the scalar rule:
     * an elementwise loop gcc vectorises (no contraction, so every SIMD level gives the same bits). */
    OKSV_MULTI(void, okbpas_scores, (const double *restrict coef, const double *restrict kr, double scale,
                                     double f, double tau, double y, double c, Py_ssize_t n,
                                     double *restrict Q), (coef, kr, scale, f, tau, y, c, n, Q),
        double ty = tau * y, ar, krt, b, fr, lr;
        for (Py_ssize_t i = 0; i < n; i++) {
            ar = scale * coef[i];
            krt = kr[i];
            b = (ar * krt) + ty;
            fr = (f - (ar * krt)) + b;
            lr = 1.0 - (y * fr);
            lr = lr < 0.0 ? 0.0 : lr;
            Q[i] = (0.5 * (((ar * ar) + (b * b)) - (((2.0 * ar) * b) * krt))) + (c * lr);
        })
    """
    void okbpas_scores(const double* coef, const double* kr, double scale, double f, double tau,
                       double y, double c, Py_ssize_t n, double* Q) noexcept nogil

import numbers

import numpy as np

from onlinekern.base import KernelLearner
from onlinekern.learners.perceptron import Averaged


cdef class BPAsCore(KernelCore):
    cdef public double c
    cdef readonly Py_ssize_t budget
    cdef object scratch2_
    cdef double* beta                 # n_outputs: candidate beta_r
    cdef double* best                 # n_outputs: beta of the best candidate so far
    cdef double* fr                   # n_outputs: f_r
    cdef double* q                    # budget: Q_r of every candidate (binary)

    def _setup_bpas(self, Py_ssize_t budget):
        self.budget = budget
        buf = np.zeros(3 * self.n_outputs + budget)
        self.scratch2_ = buf
        cdef double[::1] v = buf
        self.beta = &v[0]
        self.best = &v[self.n_outputs]
        self.fr = &v[2 * self.n_outputs]
        self.q = &v[3 * self.n_outputs]

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        if self.task == TASK_BINARY:
            return self.step_binary(x, idx, nnz, y, out)
        return self.step_multiclass(x, idx, nnz, <int>y, out)

    cdef int step_binary(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double f, l, tau, ar, krt, b, bbest
        cdef Py_ssize_t rbest
        self.kernel_scores(x, idx, nnz, out)
        f = out[0]
        l = 1.0 - y * f
        if not l > 0.0:
            return 0
        tau = l if l < self.c else self.c          # min(C, l / k_tt), k_tt = 1
        if self.sv.n < self.budget:
            b = tau * y
            return 0 if self.sv.append(x, idx, nnz, self.xsq, &b) >= 0 else -1
        # Q_r of every candidate, their minimum and the first r attaining it, in vectorised passes:
        # the r of the scan `if Q_r < Qbest` (first slot on ties; a NaN Q_0 keeps r = 0)
        okbpas_scores(self.sv.coef, self.sv.k, self.sv.scale, f, tau, y, self.c, self.sv.n, self.q)
        rbest = ok_first_eq(self.q, self.sv.n, ok_scan_min(self.q, self.sv.n))
        if rbest < 0:
            rbest = 0
        krt = self.sv.k[rbest]
        ar = sv_alpha(self.sv, rbest, 0)
        bbest = ar * krt + tau * y
        return self.sv.replace(rbest, x, idx, nnz, self.xsq, &bbest)

    cdef int step_multiclass(self, const double* x, const int* idx, int nnz, int y, double* out) noexcept nogil:
        cdef int C = self.n_outputs, s, k
        cdef double l, tau, krt, ar, dist, lr, Q, Qbest = 0.0
        cdef Py_ssize_t r, rbest = -1
        self.kernel_scores(x, idx, nnz, out)
        s = runner_up(out, y, C)
        l = 1.0 - (out[y] - out[s])
        if not l > 0.0:
            return 0
        tau = 0.5 * l if 0.5 * l < self.c else self.c     # min(C, l / ||e_y - e_s||^2)
        if self.sv.n < self.budget:
            for k in range(C):
                self.beta[k] = 0.0
            self.beta[y] = tau
            self.beta[s] = -tau
            return 0 if self.sv.append(x, idx, nnz, self.xsq, self.beta) >= 0 else -1
        for r in range(self.sv.n):
            krt = self.sv.k[r]
            dist = 0.0
            for k in range(C):
                ar = sv_alpha(self.sv, r, k)
                self.beta[k] = ar * krt
                self.fr[k] = out[k] - ar * krt
            self.beta[y] += tau
            self.beta[s] -= tau
            for k in range(C):
                ar = sv_alpha(self.sv, r, k)
                self.fr[k] += self.beta[k]
                dist += ar * ar + self.beta[k] * self.beta[k] - 2.0 * krt * ar * self.beta[k]
            lr = 1.0 - (self.fr[y] - self.fr[runner_up(self.fr, y, C)])
            if lr < 0.0:
                lr = 0.0
            Q = 0.5 * dist + self.c * lr
            if rbest < 0 or Q < Qbest:
                rbest, Qbest = r, Q
                for k in range(C):
                    self.best[k] = self.beta[k]
        return self.sv.replace(rbest, x, idx, nnz, self.xsq, self.best)

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(c=self.c, budget=int(self.budget))
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        self.c = float(st["c"])
        budget = int(st["budget"])
        if budget < 1 or self.sv.budget != budget:
            raise ValueError("BPAs state: budget does not match the support set")
        self._setup_bpas(budget)


class BPAs(Averaged, KernelLearner):
    """Budgeted Passive-Aggressive (simple): PA-I that, at the budget, replaces the SV whose
    removal plus projection onto the new example costs least.

    Wang & Vucetic, "Online passive-aggressive algorithms on a budget", AISTATS 2010 (BPA-S).
    ALGORITHMS.md §3.6: binary PA-I with tau = min(C, l); multiclass by the LSOKL Matlab rule
    (tau = min(C, l/2), Crammer–Singer direction e_y - e_s).  No regression.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    budget : int or 'auto'
        Maximum number of support vectors B; 'auto' (default): 1,000 (the 'paper' preset: 100, KOL).
    c : float
        PA-I aggressiveness C (1: KOL -cbpas, LSOKL C_BPAs).
    average : bool or 'auto'
        Predict with the average of the hypotheses used so far (online and after training; the
        updates stay the paper's) until the budget fills, and with the current hypothesis from the
        first replaced SV on (``KernelCore.set_averaged``).  'auto' (default): on (see
        ``auto_value``); the 'paper' preset: off.
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

    family = "bpas"
    tasks = ("binary", "multiclass")
    summary = "Budgeted Passive-Aggressive (simple): PA-I that replaces the cheapest SV at the budget"
    paper = "Wang & Vucetic, AISTATS 2010"
    paper_defaults = {"gamma": None, "average": False, "budget": 100}

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """budget: :data:`onlinekern.params.AUTO_BUDGET` (a9a 21.4 -> 18.8 %, ijcnn1 10.6 -> 8.4 % on
        5,000 rows); average: the Perceptron's rule
        (:func:`onlinekern.learners.perceptron.averaged_default`), averaging until the first
        replacement: on the first 5,000 rows it made fewer mistakes than
        BPAs's own predictions in 20 of the defaults benchmark's 26 cells (a9a 18.6 against
        18.8 %, cod-rna.tr 8.1 against 9.2 %, german.numer 27.6 against 29.5 %; splice 21.4
        against 20.4 %), and over whole streams on a9a, cod-rna.tr, w8a and magic04 (w8a 1.64
        against 2.52 %; ijcnn1 3.71 against 3.53 %, letter.scale 20.17 against 20.06 %)."""
        return super().auto_value(name, X, task, n_outputs, n_stream)

    def __init__(self, gamma="auto", budget="auto", c=1.0, average="auto", preset="auto", seed=0, n_threads=None):
        self.gamma = gamma
        self.average = average
        self.preset = preset
        self.budget = budget
        self.c = c
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        super()._validate_params()
        v = self.c
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
            raise ValueError(f"c must be a positive finite number, got {v!r}")

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = BPAsCore()
        budget = int(self.param_value("budget"))
        core._setup_kernel(n_features, task, n_outputs, gamma, budget, self._n_threads())
        core.c = float(self.c)
        self._set_averaging(core)
        core._setup_bpas(budget)
        return core
