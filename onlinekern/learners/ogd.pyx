# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Kernel OGD / NORMA (Kivinen, Smola & Williamson, IEEE TSP 52(8), 2004), ALGORITHMS.md §3.2.

1. f = f_t(x_t); record; g = l'(f, y_t) (a vector for multiclass).
2. alpha_i <- (1 - eta lambda) alpha_i for every SV  (O(1) through the SupportSet scale).
3. If g != 0: append (x_t, -eta g).

The paper's expansion is unbounded.  With a budget (the product default, ``budget``), the oldest
SV is dropped before an append when the set is full: NORMA's truncation (Kivinen, Smola &
Williamson 2004, §III-B: drop the terms older than tau, whose coefficient has decayed by
(1 - eta lambda)^tau) with the window counted in support vectors instead of examples.
"""
from onlinekern._core.learner cimport TASK_MULTICLASS
from onlinekern._core.support cimport KernelCore
from onlinekern._core.losses cimport TaskLoss

from onlinekern._core.losses import TaskLoss as PyTaskLoss
from onlinekern.base import KernelLearner
from onlinekern.params import stream_budget
from onlinekern.losses import smooth_step

ALL_LOSSES = ("hinge", "logistic", "squared-hinge", "squared", "absolute", "epsilon-insensitive", "huber", "quantile", "softmax")


cdef class OGDCore(KernelCore):
    cdef public double eta, lam
    cdef public TaskLoss loss
    cdef public Py_ssize_t budget            # -1: unbounded

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef int c
        cdef bint nonzero = False
        self.kernel_scores(x, idx, nnz, out)
        self.loss.grad(out, y, self.n_outputs, g)
        if self.lam > 0.0:
            self.sv.shrink(1.0 - self.eta * self.lam)
        for c in range(self.n_outputs):
            nonzero = nonzero or g[c] != 0.0
            g[c] = -self.eta * g[c]
        if not nonzero:
            return 0
        if self.budget >= 0 and self.sv.n >= self.budget:
            if self.lam == 0.0:
                return 0                             # full, nothing decays: keep the expansion
            self.sv.remove(self.sv.oldest())       # NORMA's truncation: the oldest, smallest term goes
        return 0 if self.sv.append(x, idx, nnz, self.xsq, g) >= 0 else -1

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(eta=self.eta, lam=self.lam, loss=self.loss.spec, budget=int(self.budget))
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        self.eta, self.lam = float(st["eta"]), float(st["lam"])
        self.budget = int(st.get("budget", -1))
        self.loss = task_loss(st["loss"], self.task)


def learner_loss(learner, int task):
    """The TaskLoss for a learner's ``loss`` and loss parameters on ``task``."""
    return PyTaskLoss(learner.loss, task == TASK_MULTICLASS, learner.epsilon, learner.huber_delta, learner.quantile)


def task_loss(spec, int task):
    """Rebuild a TaskLoss from its spec dict (checked against the core's task)."""
    if bool(spec["multiclass"]) != (task == TASK_MULTICLASS):
        raise ValueError("the loss does not match the learner's task")
    return PyTaskLoss(spec["name"], spec["multiclass"], spec["epsilon"], spec["huber_delta"], spec["quantile"])


class KernelOGD(KernelLearner):
    """Kernel online gradient descent (NORMA) with the Gaussian kernel (the paper's unbounded
    expansion; the product default bounds it by a budget that depends on the stream's length).

    Kivinen, Smola & Williamson, "Online learning with kernels", IEEE TSP 52(8), 2004.
    ALGORITHMS.md §3.2.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width; 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    eta : float or 'auto'
        Step size; 'auto' (default): 0.2 (the 'paper' preset's value), times 4 for the logistic loss and max(2, K/2) for softmax over K classes (:func:`onlinekern.losses.smooth_step`).
    lam : float
        L2 regularisation: every step shrinks all coefficients by 1 - eta*lam (0).
    loss : str
        hinge (default), logistic, squared-hinge; squared, absolute, epsilon-insensitive, huber,
        quantile (regression); multiclass: hinge (Crammer–Singer), logistic, softmax.
        Softmax on two classes is the logistic loss on the binary score f = s_1 - s_0
        (:func:`onlinekern.losses.binary_form`): one score, the logistic step, and
        ``predict_proba`` is [1 - sig(f), sig(f)].
    epsilon, huber_delta, quantile : float
        Parameters of the epsilon-insensitive, Huber and quantile losses.
    budget : int, 'auto' or None
        Most support vectors kept.  When the set is full: with ``lam`` > 0 the oldest SV is
        dropped before the new one is added (NORMA's truncation: the oldest coefficient has
        decayed the most); with ``lam`` = 0 nothing decays and the new one is not added (the
        expansion stays as it is; at 4,000 SVs this beat dropping the oldest on ijcnn1 and casp,
        5.59 against 6.52 % and RMSE 4.76 against 5.00, and lost on a9a, 17.51 against 17.16 %).
        'auto' (default): :func:`onlinekern.params.stream_budget`, the largest set
        whose kernel rows keep a pass over the stream within a fixed work (5,289 SVs on ijcnn1's
        141,691 rows, 20,006 on a9a's 32,561; 4,000 when the stream's length is unknown); None
        or the 'paper' preset: unbounded.
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
    n_threads : int or None
    """

    family = "ogd"
    losses = ALL_LOSSES
    summary = "kernel online gradient descent (NORMA): a new SV whenever the loss has a gradient"
    paper = "Kivinen, Smola & Williamson, IEEE TSP 2004"
    paper_defaults = {"gamma": None, "eta": 0.2, "budget": None}

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """eta: the papers' 0.2, times 1/L for a smooth loss (:func:`onlinekern.losses.smooth_step`);
        budget: :func:`onlinekern.params.stream_budget`."""
        if name == "eta":
            return smooth_step(self.paper_defaults["eta"], self.loss, task, n_outputs, self.quantile)
        if name == "budget":
            return stream_budget(X, n_outputs, n_stream)
        return self.paper_defaults[name]

    def __init__(self, gamma="auto", eta="auto", lam=0.0, loss="hinge", epsilon=0.1, huber_delta=1.0,
                 quantile=0.5, budget="auto", preset="auto", seed=0, n_threads=None):
        self.gamma = gamma
        self.preset = preset
        self.eta = eta
        self.lam = lam
        self.budget = budget
        self.loss = loss
        self.epsilon = epsilon
        self.huber_delta = huber_delta
        self.quantile = quantile
        self.seed = seed
        self.n_threads = n_threads

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = OGDCore()
        core._setup_kernel(n_features, task, n_outputs, gamma, -1, self._n_threads())
        core.eta, core.lam = float(self.param_value("eta")), float(self.lam)
        core.loss = learner_loss(self, task)
        budget = self.param_value("budget")
        core.budget = -1 if budget is None else int(budget)
        return core
