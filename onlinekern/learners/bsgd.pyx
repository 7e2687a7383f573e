# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""BSGD, Budgeted Stochastic Gradient Descent (Wang, Crammer & Vucetic, JMLR 13, 2012), §3.7.

Kernel Pegasos with a hard budget B.  Step t (1-based, counted over everything the learner has
seen, so ``partial_fit`` chunks continue the same schedule):

1. f = f_t(x_t); record.
2. alpha_i <- (1 - 1/t) alpha_i for every SV (O(1) through the SupportSet scale).
3. If the loss has a gradient g = l'(f, y_t) != 0, append (x_t, -g/(lambda t)): binary hinge
   (y/(lambda t) when y f < 1), multiclass Crammer–Singer hinge ((e_y - e_r)/(lambda t) when
   m < 1), regression (ext) epsilon-insensitive.
4. If |S| > B: a duplicate of x_t (k >= 1 - 1e-8) absorbs the new SV (``merging``) or the new SV
   is dropped (``removal``); otherwise ``removal`` deletes argmin ||alpha_i||^2 k(x_i, x_i) and
   ``merging`` merges m* = argmin ||alpha_i||^2 with the partner n* whose merge degrades the
   model least (golden-section search for the merge position h of each candidate).

Ties decided in exact arithmetic, not by rounding noise
------------------------------------------------------
Under Pegasos steps every SV that was never merged has ||alpha_i|| = 1/(lambda t) *exactly*
(added with 1/(lambda tau), shrunk by prod_{s=tau+1..t} (1 - 1/s) = tau/t), so the argmin of the
norms is a tie among all of them, and pairs of such SVs give exactly symmetric merge problems.
Floating point would break these ties by accumulated rounding (BudgetedSVM does), which makes the
result depend on how the shrink is stored.  onlinekern decides them as exact arithmetic would:

* argmin of ||alpha_i||^2: every SV within relative 1e-9 of the minimum ties; the oldest wins
  (BudgetedSVM's first-in-storage-order rule, its store being in insertion order);
* a1, a2: a denominator alpha_mc + alpha_nc that cancels to within relative 1e-9 of
  |alpha_mc| + |alpha_nc| is zero (and replaced by 1e-4 as the spec says);
* golden section: J(p) and J(q) within 1e-12 of the size of their terms count as equal (an
  exact tie, e.g. a1 = a2 at the first symmetric probes, keeps the left part, as ``fp <= fq``
  does);
* argmin of L_n and the duplicate partner: exact comparison, the oldest SV wins ties.

The merged SV replaces x_{m*} in place (it keeps m*'s insertion rank, as in BudgetedSVM), so the
insertion order of the store is the list order of the reference implementation.
"""
from libc.math cimport pow, fabs, sqrt, isfinite
from cython.parallel cimport prange

from onlinekern._core.learner cimport TASK_MULTICLASS, TASK_REGRESSION
from onlinekern._core.support cimport KernelCore
from onlinekern._core.losses cimport TaskLoss

import numbers

import numpy as np

from onlinekern._core.losses import TaskLoss as PyTaskLoss
from onlinekern.base import KernelLearner

cdef enum Maintenance:
    MAINTAIN_REMOVAL = 0
    MAINTAIN_MERGING = 1

REMOVAL = MAINTAIN_REMOVAL
MERGING = MAINTAIN_MERGING

cdef double GOLDEN = (sqrt(5.0) - 1.0) / 2.0     # 0.618..., the golden-section ratio
cdef double DUPLICATE_K = 1.0 - 1e-8            # k(x_j, x_t) >= this: x_t duplicates SV j
cdef double ZERO_DENOMINATOR = 1e-4             # spec: a zero alpha_mc + alpha_nc becomes 1e-4
cdef double NORM_TIE_RTOL = 1e-9                # see "Ties decided in exact arithmetic"
cdef double CANCEL_RTOL = 1e-9
cdef double J_TIE_RTOL = 1e-12
cdef int MAX_SECTIONS = 400                     # safety net: tol is validated > 0, this never binds


# --- the merge problem of §3.7 (nogil; also exposed to Python for the §5.13 test) ----------------

cdef inline double merge_objective(double kappa, double a1, double a2, double h, double* size) noexcept nogil:
    """J(h) = -(a1 kappa^((1-h)^2) + a2 kappa^(h^2)); size = |a1| kappa^.. + |a2| kappa^.."""
    cdef double t1 = pow(kappa, (1.0 - h) * (1.0 - h)), t2 = pow(kappa, h * h)
    size[0] = fabs(a1) * t1 + fabs(a2) * t2
    return -(a1 * t1 + a2 * t2)


cdef double golden_section(double kappa, double a1, double a2, double lo, double hi, double tol) noexcept nogil:
    """Minimise J on [lo, hi] by golden-section search; stop when the bracket width < 2 tol and
    return its midpoint (§3.7; the loop of BudgetedSVM's goldenSectionSearch)."""
    cdef double p = hi - GOLDEN * (hi - lo), q = lo + GOLDEN * (hi - lo)
    cdef double sp, sq
    cdef double fp = merge_objective(kappa, a1, a2, p, &sp)
    cdef double fq = merge_objective(kappa, a1, a2, q, &sq)
    cdef int it = 0
    while hi - lo >= 2.0 * tol and it < MAX_SECTIONS:
        if fp <= fq + J_TIE_RTOL * (sp + sq):
            hi = q
            q = p
            fq = fp
            sq = sp
            p = hi - GOLDEN * (hi - lo)
            fp = merge_objective(kappa, a1, a2, p, &sp)
        else:
            lo = p
            p = q
            fp = fq
            sp = sq
            q = lo + GOLDEN * (hi - lo)
            fq = merge_objective(kappa, a1, a2, q, &sq)
        it += 1
    return 0.5 * (lo + hi)


cdef double merge_pair(double kappa, const double* cm, double sm, const double* cn, double sn, int C,
                       double tol, double* out) noexcept nogil:
    """Merge SV m (alpha_m = sm * cm[0:C]) with SV n (alpha_n = sn * cn[0:C]) at kernel value kappa.

    out[0:6] = h, a1, a2, lo, hi, (unused); returns the degradation
    L = sum_c alpha_mc^2 + alpha_nc^2 + 2 kappa alpha_mc alpha_nc - alpha_zc^2 with
    alpha_z = alpha_m kappa^((1-h)^2) + alpha_n kappa^(h^2).
    """
    cdef int c
    cdef double am, an, den, a1 = 0.0, a2 = 0.0, lo, hi, h, k1, k2, az, L = 0.0
    for c in range(C):
        am = sm * cm[c]
        an = sn * cn[c]
        den = am + an
        if fabs(den) <= CANCEL_RTOL * (fabs(am) + fabs(an)):
            den = ZERO_DENOMINATOR
        a1 = a1 + am / den
        a2 = a2 + an / den
    if a1 * a2 > 0.0:
        lo = 0.0
        hi = 1.0
    elif a1 > 0.0:
        lo = 1.0
        hi = 6.0
    else:
        lo = -5.0
        hi = 0.0
    h = golden_section(kappa, a1, a2, lo, hi, tol)
    k1 = pow(kappa, (1.0 - h) * (1.0 - h))
    k2 = pow(kappa, h * h)
    for c in range(C):
        am = sm * cm[c]
        an = sn * cn[c]
        az = am * k1 + an * k2
        L = L + (am * am + an * an + 2.0 * kappa * am * an - az * az)
    out[0] = h
    out[1] = a1
    out[2] = a2
    out[3] = lo
    out[4] = hi
    return L


def merge_search(kappa, alpha_m, alpha_n, tol=1e-4):
    """The merge of §3.7 for one pair, from Python (tests, §5.13).

    Parameters
    ----------
    kappa : float, k(x_m, x_n) in (0, 1].
    alpha_m, alpha_n : float or array (C,), the coefficients of the SV being merged and its partner.
    tol : float, golden-section tolerance.

    Returns
    -------
    dict with ``h`` (merged point z = h x_m + (1 - h) x_n), ``a1``, ``a2``, the bracket ``lo``,
    ``hi``, ``alpha_z`` (array (C,)) and the degradation ``loss`` L.
    """
    cdef double[::1] am = np.atleast_1d(np.ascontiguousarray(alpha_m, dtype=np.float64))
    cdef double[::1] an = np.atleast_1d(np.ascontiguousarray(alpha_n, dtype=np.float64))
    if am.shape[0] != an.shape[0] or am.shape[0] < 1:
        raise ValueError("alpha_m and alpha_n must have the same positive length")
    if not (isfinite(kappa) and 0.0 <= kappa <= 1.0):
        raise ValueError(f"kappa must lie in [0, 1], got {kappa!r}")
    if not (isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    out = np.zeros(6)
    cdef double[::1] ov = out
    cdef double L = merge_pair(kappa, &am[0], 1.0, &an[0], 1.0, <int>am.shape[0], tol, &ov[0])
    h = out[0]
    a_m, a_n = np.asarray(am), np.asarray(an)
    alpha_z = a_m * kappa ** ((1.0 - h) ** 2) + a_n * kappa ** (h * h)
    return {"h": h, "a1": out[1], "a2": out[2], "lo": out[3], "hi": out[4], "alpha_z": alpha_z, "loss": L}


def merge_objective_value(h, kappa, a1, a2):
    """J(h) of §3.7 (tests)."""
    cdef double size
    return merge_objective(kappa, a1, a2, h, &size)


# --- the learner core --------------------------------------------------------------------------

cdef class BSGDCore(KernelCore):
    cdef public double lam, merge_tol
    cdef readonly Py_ssize_t budget
    cdef readonly int maintenance
    cdef public TaskLoss loss
    cdef object buf_                  # scratch arrays below (kept alive here)
    cdef double* z                    # d: the merged point
    cdef double* cand                 # (B + 1) * 2: h and L of each merge candidate
    cdef double* norms                # B + 1: ||alpha_i||^2
    cdef double* az                   # C: alpha of the merged SV
    cdef public long long n_maintenance   # budget maintenance steps so far
    cdef public long long n_merges        # merges of two distinct SVs so far

    def _setup_budget(self, Py_ssize_t budget, int maintenance, double lam, double merge_tol):
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        if maintenance not in (REMOVAL, MERGING):
            raise ValueError(f"unknown maintenance {maintenance!r}")
        if not (isfinite(lam) and lam > 0):
            raise ValueError(f"lam must be a positive finite number, got {lam!r}")
        if not (isfinite(merge_tol) and merge_tol > 0):
            raise ValueError(f"merge_tol must be a positive finite number, got {merge_tol!r}")
        self.budget = budget
        self.maintenance = maintenance
        self.lam = lam
        self.merge_tol = merge_tol
        self.buf_ = (np.zeros(self.n_features), np.zeros(2 * (budget + 1)), np.zeros(budget + 1),
                     np.zeros(self.n_outputs))
        cdef double[::1] a = self.buf_[0], b = self.buf_[1], c = self.buf_[2], e = self.buf_[3]
        self.z = &a[0]
        self.cand = &b[0]
        self.norms = &c[0]
        self.az = &e[0]

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef double t = <double>(self.n_seen + 1)
        cdef int c
        cdef bint nonzero = False
        cdef Py_ssize_t n_old
        self.kernel_scores(x, idx, nnz, out)                 # 1. f, and k(x_i, x_t) in self.sv.k
        self.loss.grad(out, y, self.n_outputs, g)
        self.sv.shrink(1.0 - 1.0 / t)                        # 2. Pegasos shrink (t = 1: to 0)
        for c in range(self.n_outputs):
            nonzero = nonzero or g[c] != 0.0
        if not nonzero:
            return 0
        for c in range(self.n_outputs):                      # 3. append -g/(lambda t)
            g[c] = -g[c] / (self.lam * t)
        n_old = self.sv.n
        if self.sv.append(x, idx, nnz, self.xsq, g) < 0:
            return -1
        if self.sv.n > self.budget:                          # 4. budget maintenance
            self.maintain(n_old, g)
        return 0

    cdef Py_ssize_t oldest_of_min(self, Py_ssize_t n) noexcept nogil:
        """argmin of self.norms[0:n], ties (relative NORM_TIE_RTOL) to the oldest SV."""
        cdef Py_ssize_t i, best = -1
        cdef double vmin = self.norms[0], limit
        for i in range(1, n):
            if self.norms[i] < vmin:
                vmin = self.norms[i]
        limit = vmin + NORM_TIE_RTOL * vmin
        for i in range(n):
            if self.norms[i] <= limit and (best < 0 or self.sv.stamp[i] < self.sv.stamp[best]):
                best = i
        return best

    cdef void maintain(self, Py_ssize_t n_old, const double* a_new) noexcept nogil:
        cdef Py_ssize_t i, j = -1, new = self.sv.n - 1
        cdef int c, C = self.n_outputs
        cdef double s
        self.n_maintenance += 1
        # a duplicate of x_t among the old SVs (the kernel row of step 1 is still in self.sv.k;
        # the most similar one, ties to the oldest)
        for i in range(n_old):
            if self.sv.k[i] >= DUPLICATE_K and (j < 0 or self.sv.k[i] > self.sv.k[j]
                                           or (self.sv.k[i] == self.sv.k[j] and self.sv.stamp[i] < self.sv.stamp[j])):
                j = i
        if j >= 0:
            if self.maintenance == MAINTAIN_MERGING:
                self.sv.add_coef(j, a_new)                # alpha_j += alpha_new
            self.sv.remove(new)
            return
        for i in range(self.sv.n):
            s = 0.0
            for c in range(C):
                s = s + self.sv.alpha(i, c) * self.sv.alpha(i, c)
            self.norms[i] = s                        # k(x_i, x_i) = 1 for the Gaussian kernel
        if self.maintenance == MAINTAIN_REMOVAL:
            self.sv.remove(self.oldest_of_min(self.sv.n))
        else:
            self.merge(self.oldest_of_min(self.sv.n))

    cdef void merge(self, Py_ssize_t m) noexcept nogil:
        cdef Py_ssize_t n = self.sv.n, i, best = -1
        cdef int c, C = self.n_outputs, dd = self.n_features
        cdef double h, k1, k2, kappa
        cdef double* xm
        cdef double* xn
        # every candidate partner is independent: split them over threads when worth it; the
        # argmin below runs serially in slot order, so the result never depends on the threads
        if self.n_threads > 1 and n * (dd + 64) >= self.sv.par_threshold:
            for i in prange(n, num_threads=self.n_threads, schedule="static"):
                self.candidate(m, i)
        else:
            for i in range(n):
                self.candidate(m, i)
        for i in range(n):
            if i == m:
                continue
            if best < 0 or self.cand[2 * i + 1] < self.cand[2 * best + 1] or (
                    self.cand[2 * i + 1] == self.cand[2 * best + 1] and self.sv.stamp[i] < self.sv.stamp[best]):
                best = i
        h = self.cand[2 * best]
        kappa = self.sv.kernel_sv(m, best)
        k1 = pow(kappa, (1.0 - h) * (1.0 - h))
        k2 = pow(kappa, h * h)
        for c in range(C):
            self.az[c] = self.sv.alpha(m, c) * k1 + self.sv.alpha(best, c) * k2
        xm = self.sv.row(m)
        xn = self.sv.row(best)
        for i in range(dd):
            self.z[i] = h * xm[i] + (1.0 - h) * xn[i]
        self.sv.set_dense(m, self.z, self.az)             # z takes x_m*'s place (BudgetedSVM order)
        self.sv.remove(best)
        self.n_merges += 1

    cdef void candidate(self, Py_ssize_t m, Py_ssize_t i) noexcept nogil:
        cdef double out[6]
        cdef int C = self.n_outputs
        if i == m:
            return
        self.cand[2 * i + 1] = merge_pair(self.sv.kernel_sv(m, i), self.sv.coef + m * C, self.sv.scale,
                                          self.sv.coef + i * C, self.sv.scale, C, self.merge_tol, out)
        self.cand[2 * i] = out[0]

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(lam=self.lam, merge_tol=self.merge_tol, budget=self.budget, maintenance=self.maintenance,
                  loss=self.loss.spec, n_maintenance=self.n_maintenance, n_merges=self.n_merges)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        budget = int(st["budget"])
        self._setup_budget(budget, int(st["maintenance"]), float(st["lam"]), float(st["merge_tol"]))
        if self.sv.budget != budget + 1 or self.sv.n > budget:
            raise ValueError("support set does not match the budget")
        self.loss = _bsgd_loss(st["loss"]["epsilon"], self.task)
        if self.loss.spec != st["loss"]:
            raise ValueError("BSGD uses the hinge (classification) or epsilon-insensitive (regression) loss")
        self.n_maintenance = int(st["n_maintenance"])
        self.n_merges = int(st["n_merges"])


def _bsgd_loss(epsilon, int task):
    """Hinge (binary), Crammer–Singer hinge (multiclass) or epsilon-insensitive (regression)."""
    if task == TASK_REGRESSION:
        return PyTaskLoss("epsilon-insensitive", False, float(epsilon))
    return PyTaskLoss("hinge", task == TASK_MULTICLASS)


class _BSGD(KernelLearner):
    """Shared Python half of BSGDRemoval and BSGDMerge (not registered: no family)."""

    losses = None
    tasks = ("binary", "multiclass", "regression")
    paper = "Wang, Crammer & Vucetic, JMLR 2012"
    _maintenance = REMOVAL

    def _validate_params(self):
        super()._validate_params()
        if isinstance(self.lam, (bool, np.bool_)) or not isinstance(self.lam, numbers.Real) \
                or not np.isfinite(self.lam) or self.lam <= 0:
            raise ValueError(f"lam must be a positive finite number (Pegasos steps 1/(lam t)), got {self.lam!r}")
        tol = getattr(self, "merge_tol", 1e-4)
        if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real) or not np.isfinite(tol) or tol <= 0:
            raise ValueError(f"merge_tol must be a positive finite number, got {tol!r}")

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = BSGDCore()
        # one slot beyond the budget: step 3 appends before step 4 restores |S| <= B
        core._setup_kernel(n_features, task, n_outputs, gamma, int(self.budget) + 1, self._n_threads())
        core._setup_budget(int(self.budget), self._maintenance, float(self.lam),
                           float(getattr(self, "merge_tol", 1e-4)))
        core.loss = _bsgd_loss(self.epsilon, task)
        return core

    @property
    def n_maintenance_(self):
        """Budget maintenance steps (removals or merges, duplicates included) so far."""
        self._check_fitted()
        return int(self.core_.n_maintenance)


class BSGDRemoval(_BSGD):
    """BSGD with removal: kernel Pegasos that deletes the smallest-norm SV when over budget.

    Wang, Crammer & Vucetic, "Breaking the curse of kernelization: budgeted stochastic gradient
    descent for large-scale SVM training", JMLR 13 (2012).  ALGORITHMS.md §3.7.

    Parameters
    ----------
    budget : int
        Maximum number of SVs B (50, BudgetedSVM ``-B``).
    gamma : float, 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); None = 1/n_features.
    lam : float
        Pegasos regularisation lambda > 0, step 1/(lambda t) (1e-4, BudgetedSVM ``-L``).
    epsilon : float
        Regression tube of the epsilon-insensitive loss (0.1; regression is ext).
    task : {'classification', 'regression'}
        Hinge / Crammer–Singer hinge, or epsilon-insensitive regression.
    seed : int
        Seed (used by gamma='median').
    n_threads : int or None
        Threads for kernel sums (None: all cores); results never depend on it.
    """

    family = "bsgd-removal"
    summary = "budgeted Pegasos (BSGD): delete the smallest-norm SV when over budget"
    _maintenance = REMOVAL

    def __init__(self, budget=50, gamma=None, lam=1e-4, epsilon=0.1, task="classification", seed=0,
                 n_threads=None):
        self.budget = budget
        self.gamma = gamma
        self.lam = lam
        self.epsilon = epsilon
        self.task = task
        self.seed = seed
        self.n_threads = n_threads


class BSGDMerge(_BSGD):
    """BSGD with merging (BSGD-M): the smallest-norm SV is merged with its best partner.

    Wang, Crammer & Vucetic, JMLR 13 (2012), merging for the Gaussian kernel; the
    golden-section search follows BudgetedSVM (djurikom/BudgetedSVM).  ALGORITHMS.md §3.7.  The IJCAI'17 "BSGD-M".

    Parameters
    ----------
    budget : int
        Maximum number of SVs B (50, BudgetedSVM ``-B``).
    gamma : float, 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); None = 1/n_features.
    lam : float
        Pegasos regularisation lambda > 0, step 1/(lambda t) (1e-4, BudgetedSVM ``-L``).
    merge_tol : float
        Golden-section tolerance: stop when the bracket is narrower than 2 merge_tol (1e-4,
        BudgetedSVM).
    epsilon : float
        Regression tube of the epsilon-insensitive loss (0.1; regression is ext).
    task : {'classification', 'regression'}
        Hinge / Crammer–Singer hinge, or epsilon-insensitive regression.
    seed : int
        Seed (used by gamma='median').
    n_threads : int or None
        Threads for kernel sums and merge candidates (None: all cores); results never depend on it.
    """

    family = "bsgd-merge"
    summary = "budgeted Pegasos (BSGD-M): merge the smallest-norm SV with its best partner"
    _maintenance = MERGING

    def __init__(self, budget=50, gamma=None, lam=1e-4, merge_tol=1e-4, epsilon=0.1, task="classification",
                 seed=0, n_threads=None):
        self.budget = budget
        self.gamma = gamma
        self.lam = lam
        self.merge_tol = merge_tol
        self.epsilon = epsilon
        self.task = task
        self.seed = seed
        self.n_threads = n_threads

    @property
    def n_merges_(self):
        """Merges of two distinct SVs so far (duplicates absorbed are not counted)."""
        self._check_fitted()
        return int(self.core_.n_merges)
