# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Forgetron, self-tuned (Dekel, Shalev-Shwartz & Singer, SIAM J. Comput. 37(5), 2008),
ALGORITHMS.md §3.4.

On a mistake: M <- M + 1 and x_t joins S with weight 1.  If S now holds B + 1 SVs, the oldest one
r is forgotten after every weight has been shrunk by the largest phi in (0, 1] with

    Psi(phi) + Q <= (15/32) M,   Psi(phi) = (delta phi)^2 + 2 delta phi - 2 delta mu phi^2,

where delta is r's weight and mu = y_r f'(x_r) its margin under the expansion f' that already
contains x_t (both measured before shrinking); then Q <- Q + Psi(phi).  phi solves a quadratic
q(phi) = A phi^2 + b phi + c <= 0 with A = delta^2 - 2 delta mu, b = 2 delta, c = Q - (15/32) M:
phi = 1 if q(1) <= 0, otherwise phi = -2c / (b + sqrt(b^2 - 4Ac)), the *smallest* positive root
(one formula for every sign of A).  KOL and the LSOKL Matlab code take (-b - sqrt(.))/(2A) when
A < 0, the larger root (> 1), which inflates f instead of shrinking it; that is not copied.

The shrink is O(1) through the SupportSet scale.  The new SV takes the slot of the forgotten one,
which is where "append, then delete r" (delete = move the last slot into the hole) puts it.
f'(x_r) = f(x_r) + alpha_t k(x_t, x_r), where k(x_t, x_r) comes from the prediction's kernel
row, so one extra kernel row (x_r against S) is computed per removal: O(B d).

Tasks: binary; multiclass (ext: a Crammer–Singer step of size 1 appends sigma(e_y - e_c) with c
the runner-up; delta = sqrt(2) sigma_r, mu = (f'_{y_r}(x_r) - f'_{c_r}(x_r)) / sqrt(2), the binary
quantities of the C&S vector, so the same bound holds); regression (LSOKL epsilon-tube: append
eta sign(y - f); normalised delta = |alpha_r| / eta, mu = sign(alpha_r) f'(x_r) / eta).  y_r and
c_r need no storage: every shrink is uniform, so alpha_r stays sigma_r (e_{y_r} - e_{c_r}) and
they are its largest and smallest components (sign(alpha_r) for binary and regression).
"""
from libc.math cimport sqrt, fabs, NAN

from onlinekern._core.learner cimport TASK_BINARY, TASK_MULTICLASS, TASK_REGRESSION, is_mistake
from onlinekern._core.support cimport KernelCore, sv_alpha
from onlinekern.learners.perceptron cimport perceptron_update

import numpy as np

from onlinekern.base import KernelLearner
from onlinekern.learners.perceptron import Averaged

cdef double SQRT2 = 1.4142135623730951


cdef double forgetron_phi(double delta, double mu, double Q, double M) noexcept nogil:
    """The largest phi in (0, 1] with Psi(phi) + Q <= (15/32) M (§3.4 step 4)."""
    cdef double A = delta * delta - 2.0 * delta * mu
    cdef double b = 2.0 * delta
    cdef double c = Q - (15.0 / 32.0) * M
    cdef double disc, den, phi
    if A + b + c <= 0.0:
        return 1.0
    disc = b * b - 4.0 * A * c
    if disc < 0.0:
        disc = 0.0            # q(1) > 0 > q(0) guarantees disc >= 0; guard the last ulp only
    den = b + sqrt(disc)
    if not den > 0.0:
        return 1.0            # unreachable: q(1) > 0 needs delta > 0 (c < 0)
    phi = -2.0 * c / den
    return 1.0 if phi > 1.0 else phi


def py_forgetron_phi(double delta, double mu, double Q, double M):
    """forgetron_phi from Python (tests)."""
    return forgetron_phi(delta, mu, Q, M)


cdef class ForgetronCore(KernelCore):
    cdef public double eta, epsilon
    cdef readonly Py_ssize_t budget
    cdef readonly double Q           # accumulated removal damage
    cdef readonly long long M        # number of updates (mistakes)
    cdef readonly double phi         # phi of the last removal (NaN before the first)
    cdef object scratch2_
    cdef double* fr                  # f'(x_r), n_outputs

    def _setup_forgetron(self, Py_ssize_t budget):
        self.budget = budget
        self.Q = 0.0
        self.M = 0
        self.phi = NAN
        self._setup_scratch()

    def _setup_scratch(self):
        buf = np.zeros(self.n_outputs)
        self.scratch2_ = buf
        cdef double[::1] bv = buf
        self.fr = &bv[0]

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* a = self.grad_buf
        cdef int c, yi, C = self.n_outputs, yr, cr
        cdef Py_ssize_t r
        cdef double ktr, ar, delta, mu, phi
        cdef const double* xr
        cdef const int* ir
        cdef int nr
        self.kernel_scores(x, idx, nnz, out)
        # 1. stop unless the Perceptron would update
        if not perceptron_update(self.task, out, y, self.n_outputs, self.eta, self.epsilon, a):
            return 0
        # 2. M <- M + 1; x_t joins S; done if |S| <= B
        self.M += 1
        if self.sv.n < self.budget:
            return 0 if self.sv.append(x, idx, nnz, self.xsq, a) >= 0 else -1
        # 3. r = oldest; f'(x_r) over S plus x_t (k(x_t, x_r) is in the prediction's kernel row)
        r = self.sv.oldest()
        ktr = self.sv.k[r]
        nr = self.sv.entries(r, &xr, &ir)               # x_r as a query (dense data: its dense row)
        self.sv.predict(xr, ir, nr, self.sv.sqn[r], self.fr)
        for c in range(C):
            self.fr[c] += a[c] * ktr
        if self.task == TASK_MULTICLASS:
            yr = 0
            cr = 0
            for c in range(1, C):
                if sv_alpha(self.sv, r, c) > sv_alpha(self.sv, r, yr):
                    yr = c
                if sv_alpha(self.sv, r, c) < sv_alpha(self.sv, r, cr):
                    cr = c
            delta = SQRT2 * sv_alpha(self.sv, r, yr)
            mu = (self.fr[yr] - self.fr[cr]) / SQRT2 if yr != cr else 0.0
        else:
            ar = sv_alpha(self.sv, r, 0)
            delta = fabs(ar)
            mu = self.fr[0] if ar >= 0.0 else -self.fr[0]
            if self.task == TASK_REGRESSION:
                delta /= self.eta
                mu /= self.eta
        # 4.-5. shrink every weight (x_t included) by phi; account for the damage
        phi = forgetron_phi(delta, mu, self.Q, <double>self.M)
        self.sv.shrink(phi)
        self.Q += (delta * phi) * (delta * phi) + 2.0 * delta * phi - 2.0 * delta * mu * phi * phi
        self.phi = phi
        # 6. delete r: x_t (weight phi * a) takes its slot
        for c in range(C):
            a[c] *= phi
        return self.sv.replace(r, x, idx, nnz, self.xsq, a)

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(eta=self.eta, epsilon=self.epsilon, budget=int(self.budget), Q=self.Q, M=self.M, phi=self.phi)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        self.eta, self.epsilon = float(st["eta"]), float(st["epsilon"])
        budget = int(st["budget"])
        if budget < 1 or self.sv.budget != budget:
            raise ValueError("Forgetron state: budget does not match the support set")
        self.budget = budget
        Q, M, phi = float(st["Q"]), int(st["M"]), float(st["phi"])
        if not np.isfinite(Q) or M < 0 or Q > (15.0 / 32.0) * M * (1 + 1e-9):
            raise ValueError("Forgetron state: need M >= 0 and a finite Q <= 15/32 M")
        self.Q, self.M, self.phi = Q, M, phi
        self._setup_scratch()


class Forgetron(Averaged, KernelLearner):
    """Self-tuned Forgetron: a budget Perceptron that shrinks all weights, then forgets the oldest SV.

    Dekel, Shalev-Shwartz & Singer, "The Forgetron: a kernel-based Perceptron on a budget",
    SIAM J. Comput. 37(5), 2008 (self-tuned variant).  ALGORITHMS.md §3.4: the shrink phi is the
    largest value in (0, 1] keeping the accumulated damage Q within (15/32) M (smallest positive
    root of the quadratic, not the reference codes' larger root).  Multiclass is an extension
    (Crammer–Singer steps, delta = sqrt(2) sigma_r); regression follows LSOKL's epsilon-tube with
    the normalised delta = ``|alpha_r| / eta`` and mu = sign(alpha_r) f'(x_r)/eta.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    budget : int or 'auto'
        Maximum number of support vectors B; 'auto' (default): 1,000 (the 'paper' preset: 100, KOL).
    eta : float
        Regression step (0.1, LSOKL Matlab).
    epsilon : float
        Regression tube (0.1, LSOKL Matlab).
    average : bool or 'auto'
        Predict with the average of the hypotheses used so far (online and after training; the
        updates stay the paper's) until the budget fills, and with the current hypothesis from the
        first forgotten SV on (the average over the SVs kept alone made 11.1 % over whole ijcnn1
        and 23.3 % over a9a; now 7.8 % and 20.6 %, see ``KernelCore.set_averaged``).  'auto'
        (default): on for classification, off for regression; the 'paper' preset: off.
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
        Threads for the kernel sums over support vectors (None: all cores, or OMP_NUM_THREADS).

    Attributes
    ----------
    Q_ : float
        Accumulated removal damage Q (Q_ <= 15/32 M_ always).
    M_ : int
        Number of updates (mistakes, or epsilon-mistakes) M.
    phi_ : float
        Shrink factor of the last removal (NaN before the first).
    """

    family = "forgetron"
    summary = "self-tuned Forgetron: shrink all weights, then forget the oldest SV when over budget"
    paper = "Dekel, Shalev-Shwartz & Singer, SIAM J. Comput. 2008"
    paper_defaults = {"gamma": None, "average": False, "budget": 100, "eta": 0.1}
    #: gamma="auto" races the widths until 4 B examples have been seen
    #: (:func:`onlinekern.selection.race_stages`): a mistake-driven learner fills its budget only
    #: after B mistakes, and until then a wide kernel leads; on whole ijcnn1 (permutation 0) the
    #: race of the first 7,000 examples kept gamma = 0.80, the 4 B race gamma = 12.78.
    race_budget_fills = 4

    # budget="auto": AUTO_BUDGET (KernelLearner.auto_value); average: the Perceptron's rule (averaged
    # at B = 1000 on 5,000 rows: a9a 25.5 -> 16.9 %, ijcnn1 17.0 -> 8.4 %, w8a 4.7 -> 2.7 %).

    def __init__(self, gamma="auto", budget="auto", eta="auto", epsilon=0.1, average="auto", task="classification",
                 preset="auto", seed=0, n_threads=None):
        self.gamma = gamma
        self.average = average
        self.preset = preset
        self.budget = budget
        self.eta = eta
        self.epsilon = epsilon
        self.task = task
        self.seed = seed
        self.n_threads = n_threads

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = ForgetronCore()
        budget = int(self.param_value("budget"))
        core._setup_kernel(n_features, task, n_outputs, gamma, budget, self._n_threads())
        core.eta, core.epsilon = float(self.param_value("eta")), float(self.epsilon)
        self._set_averaging(core)
        core._setup_forgetron(budget)
        return core

    @property
    def Q_(self):
        self._check_fitted()
        return float(self.core_.Q)

    @property
    def M_(self):
        self._check_fitted()
        return int(self.core_.M)

    @property
    def phi_(self):
        self._check_fitted()
        return float(self.core_.phi)
