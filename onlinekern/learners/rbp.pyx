# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""RBP, the Randomized Budget Perceptron (Cavallanti, Cesa-Bianchi & Gentile, Machine Learning
69(2-3), 2007), ALGORITHMS.md §3.3.

The kernel Perceptron (§3.1) with a hard budget B: immediately before an append, if |S| = B, one
SV chosen uniformly at random is deleted.  The choice is ``integers(B)`` on the CHOICE stream
(§1.5), consumed in call order, and indexes S in *insertion order* (position 0 = oldest SV), the
order §1.1 says S keeps and the LSOKL Matlab code's array order (it deletes from the array and
appends at its end).  The SupportSet stores SVs in slots (removal moves the last slot into the
hole), so a small array ``pos`` maps insertion positions to slots; keeping it up to date costs
O(B) integer moves per removal, negligible next to the O(B d) kernel row.
"""
from libc.string cimport memmove

from onlinekern._core.learner cimport TASK_BINARY, TASK_MULTICLASS, TASK_REGRESSION, is_mistake
from onlinekern._core.support cimport KernelCore
from onlinekern.learners.perceptron cimport perceptron_update
from onlinekern._core.rng cimport RandomStream

import numpy as np

from onlinekern.base import KernelLearner
from onlinekern.learners.perceptron import Averaged
from onlinekern.seeding import CHOICE


cdef class RBPCore(KernelCore):
    cdef public double eta, epsilon
    cdef readonly Py_ssize_t budget
    cdef public RandomStream rng
    cdef object pos_                 # int64 array (budget,): slot of the SV at insertion position j
    cdef long long* pos

    def _setup_budget(self, Py_ssize_t budget, seed, state=None):
        self.budget = budget
        self.rng = RandomStream(seed, CHOICE, state=state)
        self.pos_ = np.zeros(max(budget, 1), dtype=np.int64)
        cdef long long[::1] v = self.pos_
        self.pos = &v[0]
        # positions of the SVs present (slots sorted by insertion stamp)
        order = self.sv.insertion_order
        self.pos_[:len(order)] = order

    cdef void remove_position(self, Py_ssize_t j) noexcept nogil:
        """Delete the SV at insertion position j, keeping pos consistent with the slot layout."""
        cdef Py_ssize_t n = self.sv.n, slot = self.pos[j], last = n - 1, p
        memmove(self.pos + j, self.pos + j + 1, (n - 1 - j) * sizeof(long long))
        self.sv.remove(slot)                  # the SV in slot `last` now lives in `slot`
        if slot != last:
            for p in range(n - 1):
                if self.pos[p] == last:
                    self.pos[p] = slot
                    break

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* a = self.grad_buf
        cdef int c, yi
        cdef Py_ssize_t slot
        self.kernel_scores(x, idx, nnz, out)
        # the Perceptron's update decision (§3.1)
        if not perceptron_update(self.task, out, y, self.n_outputs, self.eta, self.epsilon, a):
            return 0
        # budget: uniform random removal just before the append (§3.3)
        if self.sv.n >= self.budget:
            self.remove_position(self.rng.integers(self.sv.n))
        slot = self.sv.append(x, idx, nnz, self.xsq, a)
        if slot < 0:
            return -1
        self.pos[self.sv.n - 1] = slot
        return 0

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(eta=self.eta, epsilon=self.epsilon, budget=int(self.budget), rng=self.rng.state)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        self.eta, self.epsilon = float(st["eta"]), float(st["epsilon"])
        budget = int(st["budget"])
        if budget < 1 or self.sv.budget != budget:
            raise ValueError("RBP state: budget does not match the support set")
        self._setup_budget(budget, 0, st["rng"])


class RBP(Averaged, KernelLearner):
    """Randomized Budget Perceptron: the kernel Perceptron that deletes a uniformly random SV
    before adding one when the budget is full.

    Cavallanti, Cesa-Bianchi & Gentile, "Tracking the best hyperplane with a simple budget
    Perceptron", Machine Learning 69(2-3), 2007.  ALGORITHMS.md §3.3: binary (append y_t on
    y_t f <= 0), multiclass (Crammer–Singer step of size 1) and regression (LSOKL epsilon-tube:
    append eta sign(y - f) when ``|y - f| > epsilon``).  The removed SV is position
    ``integers(B)`` of S in insertion order, drawn from the CHOICE stream of ``seed`` (§1.5).
    ``average=True`` (ext): the Perceptron's averaged prediction (onlinekern.learners.perceptron)
    until the budget fills, RBP's own from the first removal on.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    budget : int or 'auto'
        Maximum number of support vectors B; 'auto' (default): 1,000 (the 'paper' preset: 100, KOL
        -B; LSOKL Matlab uses 50).
    eta : float
        Regression step (0.1: LSOKL Matlab eta_perceptron).
    epsilon : float
        Regression tube (0.1: LSOKL Matlab epsl).
    average : bool or 'auto'
        Predict with the average of the hypotheses used so far (online and after training; the
        updates and removals stay RBP's) until the first removal, and with the current hypothesis
        from then on: a removed SV's share of the average cannot be kept within the budget, and
        the average over the SVs kept alone ended worse than the majority label over whole
        streams (ijcnn1 41.9 %, a9a 33.4 %; now 8.2 % and 20.8 %, see
        ``KernelCore.set_averaged``).  'auto' (default): on for classification, off for
        regression; the 'paper' preset: off.
    task : {'classification', 'regression'}
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Seed of the removal choices (stream CHOICE) and of gamma='median'.
    n_threads : int or None
        Threads for the kernel sum over support vectors (None: all cores, or OMP_NUM_THREADS).
    """

    family = "rbp"
    summary = "Randomized Budget Perceptron: Perceptron that deletes a random SV when the budget is full"
    paper = "Cavallanti, Cesa-Bianchi & Gentile, Machine Learning 2007"
    paper_defaults = {"gamma": None, "budget": 100, "average": False, "eta": 0.1}
    #: gamma="auto" races the widths until 4 B examples have been seen
    #: (:func:`onlinekern.selection.race_stages`): a mistake-driven learner fills its budget only
    #: after B mistakes, and until then a wide kernel leads; on whole ijcnn1 (permutation 0) the
    #: race of the first 7,000 examples kept gamma = 0.80, the 4 B race gamma = 12.78.
    race_budget_fills = 4

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
        core = RBPCore()
        budget = int(self.param_value("budget"))
        core._setup_kernel(n_features, task, n_outputs, gamma, budget, self._n_threads())
        core.eta, core.epsilon = float(self.param_value("eta")), float(self.epsilon)
        self._set_averaging(core)
        core._setup_budget(budget, self.seed)
        return core
