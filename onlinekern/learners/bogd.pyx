# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""BOGD and BOGD++, Bounded Online Gradient Descent (Zhao, Wang, Wu, Jin & Hoi, ICML 2012), §3.8.

Kernel OGD (§3.2) with a hard budget B kept by random removal with unbiased rescaling:

1. f = f_t(x_t); record; g = l'(f, y_t) (a vector for multiclass).
2. alpha_i <- (1 - eta lambda) alpha_i for every SV (O(1) through the SupportSet scale).
3. If g = 0: stop.  If |S| < B: append (x_t, -eta g); stop.
4. Removal probabilities over S in insertion order (§1.1): BOGD p_i = 1/B; BOGD++
   c_p = (B - 1)/sum_j ||alpha_j|| sqrt(k_jj), p_i = 1 - c_p ||alpha_i|| sqrt(k_ii) (k_ii = 1);
   negative p_i are clamped to 0 and p renormalised; all alpha_j = 0 gives the uniform p.
5. Draw r ~ p on the CHOICE stream (§1.5), consumed in call order:
   BOGD: ``r = integers(B)``; BOGD++: ``u = random()``, c = cumsum(p) (sequential sums),
   r = the first i with c_i > u c_{B-1}.  A NumPy oracle drawing from
   ``onlinekern.seeding.rng(seed, CHOICE)`` reproduces both: ``rng.integers(B)`` and
   ``c = np.cumsum(p); r = int(np.argmax(c > rng.random() * c[-1]))``.
6. Survivors: alpha_i <- alpha_i / (1 - p_i) (BOGD++ without clamping: alpha_i/(c_p ||alpha_i||),
   an alpha_i = 0 staying 0), then every component is clipped to [-eta gamma_c, eta gamma_c].
7. Delete r; append (x_t, -eta g).
"""
from libc.math cimport sqrt, isfinite
from libc.string cimport memmove

from onlinekern._core.support cimport KernelCore, sv_alpha, sv_set_alpha
from onlinekern._core.losses cimport TaskLoss
from onlinekern._core.rng cimport RandomStream

import numbers

import numpy as np

from onlinekern.base import KernelLearner
from onlinekern.learners.ogd import ALL_LOSSES, learner_loss, task_loss
from onlinekern.seeding import CHOICE

cdef enum Sampling:
    SAMPLING_UNIFORM = 0      # BOGD
    SAMPLING_NONUNIFORM = 1   # BOGD++

UNIFORM = SAMPLING_UNIFORM
NONUNIFORM = SAMPLING_NONUNIFORM


cdef bint nonuniform_probabilities(const double* norms, Py_ssize_t n, double* p, double* cp) noexcept nogil:
    """BOGD++ removal probabilities from the norms ||alpha_i|| sqrt(k_ii) (step 4).

    Writes p[0:n] and c_p (0 when every norm is 0); returns True when p is not the closed form
    1 - c_p ||alpha_i|| (clamped and renormalised, or uniform because all alpha are 0).
    """
    cdef Py_ssize_t i
    cdef double total = 0.0, s = 0.0
    cdef bint clamped = False
    for i in range(n):
        total += norms[i]
    if not total > 0.0:
        cp[0] = 0.0
        for i in range(n):
            p[i] = 1.0 / n
        return True
    cp[0] = (n - 1) / total
    for i in range(n):
        p[i] = 1.0 - cp[0] * norms[i]
        if p[i] < 0.0:
            clamped = True
    if clamped:
        for i in range(n):
            if p[i] < 0.0:
                p[i] = 0.0
            s += p[i]
        for i in range(n):
            p[i] = p[i] / s
    return clamped


def bogdpp_probabilities(norms):
    """BOGD++ removal probabilities (step 4 of §3.8) from Python (tests, §5.12).

    Parameters
    ----------
    norms : array (n,) of ||alpha_i|| sqrt(k_ii) >= 0, in insertion order.

    Returns
    -------
    (p, c_p, clamped)
    """
    cdef double[::1] nv = np.ascontiguousarray(norms, dtype=np.float64)
    cdef Py_ssize_t n = nv.shape[0]
    if n < 1:
        raise ValueError("need at least one norm")
    if not np.all(np.isfinite(nv)) or np.any(np.asarray(nv) < 0):
        raise ValueError("norms must be finite and non-negative")
    p = np.zeros(n)
    cdef double[::1] pv = p
    cdef double cp
    clamped = nonuniform_probabilities(&nv[0], n, &pv[0], &cp)
    return p, cp, bool(clamped)


cdef class BOGDCore(KernelCore):
    cdef public double eta, lam, coef_bound
    cdef readonly Py_ssize_t budget
    cdef readonly int sampling
    cdef public TaskLoss loss
    cdef public RandomStream rng
    cdef object buf_                  # scratch arrays below (kept alive here)
    cdef long long* pos               # budget: slot of the SV at insertion position j (0 = oldest)
    cdef double* p                    # budget: removal probabilities of the last removal step
    cdef double* norms                # budget: ||alpha_i|| by insertion position
    cdef public Py_ssize_t n_p        # length of the last p (0 before any removal)
    cdef public long long n_removals

    def _setup_budget(self, Py_ssize_t budget, int sampling, double eta, double lam, double coef_bound, seed,
                      rng_state=None):
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        if sampling not in (UNIFORM, NONUNIFORM):
            raise ValueError(f"unknown sampling {sampling!r}")
        for name, v in (("eta", eta), ("coef_bound", coef_bound)):
            if not (isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        if not (isfinite(lam) and lam >= 0):
            raise ValueError(f"lam must be a non-negative finite number, got {lam!r}")
        if self.sv.n > budget:
            raise ValueError("support set holds more vectors than the budget")
        self.budget = budget
        self.sampling = sampling
        self.eta, self.lam, self.coef_bound = eta, lam, coef_bound
        self.rng = RandomStream(seed, CHOICE, state=rng_state)
        self.buf_ = (np.zeros(budget, dtype=np.int64), np.zeros(budget), np.zeros(budget))
        cdef long long[::1] a = self.buf_[0]
        cdef double[::1] b = self.buf_[1], c = self.buf_[2]
        self.pos = &a[0]
        self.p = &b[0]
        self.norms = &c[0]
        order = self.sv.insertion_order
        self.buf_[0][:len(order)] = order
        self.n_p = 0

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef int c
        cdef bint nonzero = False
        cdef Py_ssize_t slot
        self.kernel_scores(x, idx, nnz, out)                   # 1.
        self.loss.grad(out, y, self.n_outputs, g)
        if self.lam > 0.0:                                     # 2. (exactly kernel OGD's shrink)
            self.sv.shrink(1.0 - self.eta * self.lam)
        for c in range(self.n_outputs):
            nonzero = nonzero or g[c] != 0.0
            g[c] = -self.eta * g[c]
        if not nonzero:                                        # 3.
            return 0
        if self.sv.n >= self.budget:                           # 4.-7.
            self.remove_one()
        slot = self.sv.append(x, idx, nnz, self.xsq, g)
        if slot < 0:
            return -1
        self.pos[self.sv.n - 1] = slot
        return 0

    cdef void remove_one(self) noexcept nogil:
        cdef Py_ssize_t n = self.sv.n, j, r = 0, slot
        cdef int c, C = self.n_outputs
        cdef double a, s, den, cp = 0.0, bound = self.eta * self.coef_bound, u, cum, total
        cdef bint clamped = True
        if self.sampling == SAMPLING_UNIFORM:
            for j in range(n):
                self.p[j] = 1.0 / n
            r = self.rng.integers(n)
        else:
            for j in range(n):
                slot = self.pos[j]
                s = 0.0
                for c in range(C):
                    a = sv_alpha(self.sv, slot, c)
                    s = s + a * a
                self.norms[j] = sqrt(s)                        # sqrt(k_jj) = 1
            clamped = nonuniform_probabilities(self.norms, n, self.p, &cp)
            total = 0.0
            for j in range(n):
                total += self.p[j]
            u = self.rng.random() * total
            cum = 0.0
            r = -1
            for j in range(n):
                cum += self.p[j]
                if cum > u:
                    r = j
                    break
            if r < 0:                                          # rounding guard: last p_j > 0
                r = n - 1
                while r > 0 and self.p[r] == 0.0:
                    r -= 1
        self.n_p = n
        # 6. unbiased rescaling of the survivors, then the clip at eta gamma_c
        for j in range(n):
            if j == r:
                continue
            slot = self.pos[j]
            if clamped:
                den = 1.0 - self.p[j]
            else:
                den = cp * self.norms[j]                       # = 1 - p_j before rounding
            for c in range(C):
                a = sv_alpha(self.sv, slot, c)
                if a != 0.0:
                    a = a / den
                if a > bound:
                    a = bound
                elif a < -bound:
                    a = -bound
                sv_set_alpha(self.sv, slot, c, a)
        self.remove_position(r)                                # 7.
        self.n_removals += 1

    cdef void remove_position(self, Py_ssize_t j) noexcept nogil:
        """Delete the SV at insertion position j and keep pos consistent with the slot layout."""
        cdef Py_ssize_t n = self.sv.n, slot = self.pos[j], last = n - 1, q
        memmove(self.pos + j, self.pos + j + 1, (n - 1 - j) * sizeof(long long))
        self.sv.remove(slot)                                   # slot `last` moves into `slot`
        if slot != last:
            for q in range(n - 1):
                if self.pos[q] == last:
                    self.pos[q] = slot
                    break

    @property
    def last_probabilities(self):
        """Removal probabilities of the last removal step, by insertion position (tests, §5.12)."""
        return np.array([self.p[j] for j in range(self.n_p)])

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(eta=self.eta, lam=self.lam, coef_bound=self.coef_bound, budget=self.budget,
                  sampling=self.sampling, loss=self.loss.spec, rng=self.rng.state, n_removals=self.n_removals)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        budget = int(st["budget"])
        if self.sv.budget != budget:
            raise ValueError("support set does not match the budget")
        self._setup_budget(budget, int(st["sampling"]), float(st["eta"]), float(st["lam"]),
                           float(st["coef_bound"]), 0, st["rng"])
        self.loss = task_loss(st["loss"], self.task)
        self.n_removals = int(st["n_removals"])


class _BOGD(KernelLearner):
    """Shared Python half of BOGD and BOGDPlusPlus (not registered: no family)."""

    losses = ALL_LOSSES
    tasks = ("binary", "multiclass", "regression")
    paper = "Zhao, Wang, Wu, Jin & Hoi, ICML 2012"
    _sampling = UNIFORM

    def __init__(self, budget=100, gamma=None, eta=0.2, lam=1e-3, coef_bound=10.0, loss="hinge", epsilon=0.1,
                 huber_delta=1.0, quantile=0.5, seed=0, n_threads=None):
        self.budget = budget
        self.gamma = gamma
        self.eta = eta
        self.lam = lam
        self.coef_bound = coef_bound
        self.loss = loss
        self.epsilon = epsilon
        self.huber_delta = huber_delta
        self.quantile = quantile
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        super()._validate_params()
        v = self.coef_bound
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
            raise ValueError(f"coef_bound must be a positive finite number, got {v!r}")

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = BOGDCore()
        core._setup_kernel(n_features, task, n_outputs, gamma, int(self.budget), self._n_threads())
        core._setup_budget(int(self.budget), self._sampling, float(self.eta), float(self.lam),
                           float(self.coef_bound), self.seed)
        core.loss = learner_loss(self, task)
        return core

    @property
    def n_removals_(self):
        """Removal steps so far."""
        self._check_fitted()
        return int(self.core_.n_removals)


class BOGD(_BOGD):
    """BOGD: kernel OGD on a budget with uniform random removal and unbiased rescaling.

    Zhao, Wang, Wu, Jin & Hoi, "Fast bounded online gradient descent algorithms for scalable
    kernel-based online learning", ICML 2012.  ALGORITHMS.md §3.8 (``--sampling uniform``).

    Parameters
    ----------
    budget : int
        Maximum number of SVs B (100, KOL).
    gamma : float, 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); None = 1/n_features.
    eta : float
        Step size (0.2, LSOKL Matlab).
    lam : float
        Regularisation: every step shrinks all coefficients by 1 - eta*lam (1e-3, KOL).
    coef_bound : float
        gamma_c: after a removal every survivor's coefficient is clipped to [-eta gamma_c,
        eta gamma_c] (10, LSOKL Matlab ``gamma``).
    loss : str
        hinge (default), logistic, squared-hinge; squared, absolute, epsilon-insensitive, huber,
        quantile (regression); multiclass (ext, vector alpha): hinge (Crammer–Singer), logistic,
        softmax.
    epsilon, huber_delta, quantile : float
        Loss parameters.
    seed : int
        Seeds the removal choices (CHOICE stream) and the median heuristic.
    n_threads : int or None
        Threads for kernel sums (None: all cores); results never depend on it.
    """

    family = "bogd"
    summary = "bounded OGD: uniform random removal with unbiased rescaling"
    _sampling = UNIFORM


class BOGDPlusPlus(_BOGD):
    """BOGD++: BOGD removing an SV with probability decreasing in its coefficient norm.

    Zhao, Wang, Wu, Jin & Hoi, ICML 2012.  ALGORITHMS.md §3.8 (``--sampling nonuniform``):
    p_i = 1 - c_p ||alpha_i||, c_p = (B - 1)/sum_j ||alpha_j|| (clamped at 0 and renormalised).

    Parameters
    ----------
    budget : int
        Maximum number of SVs B (100, KOL).
    gamma : float, 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); None = 1/n_features.
    eta : float
        Step size (0.2, LSOKL Matlab).
    lam : float
        Regularisation: every step shrinks all coefficients by 1 - eta*lam (1e-3, KOL).
    coef_bound : float
        gamma_c: after a removal every survivor's coefficient is clipped to [-eta gamma_c,
        eta gamma_c] (10, LSOKL Matlab ``gamma``).
    loss : str
        hinge (default), logistic, squared-hinge; squared, absolute, epsilon-insensitive, huber,
        quantile (regression); multiclass (ext, vector alpha): hinge (Crammer–Singer), logistic,
        softmax.
    epsilon, huber_delta, quantile : float
        Loss parameters.
    seed : int
        Seeds the removal choices (CHOICE stream) and the median heuristic.
    n_threads : int or None
        Threads for kernel sums (None: all cores); results never depend on it.
    """

    family = "bogdpp"
    summary = "bounded OGD++: removal probability decreasing in the coefficient norm"
    _sampling = NONUNIFORM
