# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Kernel Perceptron (Freund & Schapire, Machine Learning 37, 1999), ALGORITHMS.md §3.1.

Binary: on a mistake (y f <= 0) append (x_t, y_t).  Multiclass: on m <= 0 a Crammer–Singer step
of size 1, i.e. append (x_t, e_y - e_r) with r the runner-up.  Regression (LSOKL): on an
epsilon-mistake |y - f| > epsilon append (x_t, eta sign(y - f)).  The support set is unbounded.
"""
from onlinekern._core.learner cimport TASK_BINARY, TASK_MULTICLASS, TASK_REGRESSION, is_mistake
from onlinekern._core.support cimport KernelCore
from onlinekern._core.losses cimport runner_up

from onlinekern.base import KernelLearner


cdef bint perceptron_update(int task, const double* f, double y, int C, double eta, double epsilon,
                            double* a) noexcept nogil:
    """Would the Perceptron update on (f, y)?  If so, a[0:C] receives the new SV's coefficient.

    Binary: a mistake y f <= 0 adds y.  Multiclass: a margin <= 0 adds e_y - e_r (Crammer–Singer
    step of size 1, r the runner-up).  Regression: an epsilon-mistake |y - f| > epsilon adds
    eta sign(y - f).
    """
    cdef int c, yi
    if task == TASK_REGRESSION:
        if y - f[0] > epsilon:
            a[0] = eta
        elif f[0] - y > epsilon:
            a[0] = -eta
        else:
            return False
        return True
    if not is_mistake(task, f, y, C):
        return False
    if task == TASK_BINARY:
        a[0] = y
        return True
    yi = <int>y
    for c in range(C):
        a[c] = 0.0
    a[yi] = 1.0
    a[runner_up(f, yi, C)] = -1.0
    return True


cdef class PerceptronCore(KernelCore):
    cdef public double eta, epsilon

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        self.kernel_scores(x, idx, nnz, out)
        if not perceptron_update(self.task, out, y, self.n_outputs, self.eta, self.epsilon, self.grad_buf):
            return 0
        return 0 if self.sv.append(x, idx, nnz, self.xsq, self.grad_buf) >= 0 else -1

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(eta=self.eta, epsilon=self.epsilon)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        self.eta, self.epsilon = float(st["eta"]), float(st["epsilon"])


class Perceptron(KernelLearner):
    """Kernel Perceptron with the Gaussian kernel (unbounded support set).

    Freund & Schapire, "Large margin classification using the perceptron algorithm",
    Machine Learning 37 (1999); multiclass by Crammer–Singer steps; regression by the LSOKL
    epsilon-tube rule.  ALGORITHMS.md §3.1.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    eta : float
        Regression step size (0.1).
    epsilon : float
        Regression tube (0.1).
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
        Threads for the kernel sum over support vectors (None: all cores).
    """

    family = "perceptron"
    summary = "kernel Perceptron: add the example on every mistake (unbounded)"
    paper = "Freund & Schapire, Machine Learning 1999"

    def __init__(self, gamma="auto", eta=0.1, epsilon=0.1, task="classification", preset="auto", seed=0, n_threads=None):
        self.gamma = gamma
        self.preset = preset
        self.eta = eta
        self.epsilon = epsilon
        self.task = task
        self.seed = seed
        self.n_threads = n_threads

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = PerceptronCore()
        core._setup_kernel(n_features, task, n_outputs, gamma, -1, self._n_threads())
        core.eta, core.epsilon = float(self.eta), float(self.epsilon)
        return core
