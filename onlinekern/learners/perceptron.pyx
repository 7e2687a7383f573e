# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Kernel Perceptron (Freund & Schapire, Machine Learning 37, 1999), ALGORITHMS.md §3.1.

Binary: on a mistake (y f <= 0) append (x_t, y_t).  Multiclass: on m <= 0 a Crammer–Singer step
of size 1, i.e. append (x_t, e_y - e_r) with r the runner-up.  Regression (LSOKL): on an
epsilon-mistake |y - f| > epsilon append (x_t, eta sign(y - f)).  The papers' support set is
unbounded; the product default bounds it (``budget``) so that a pass costs bounded time.

Averaged (ext; Freund & Schapire 1999, the averaged variant of the voted Perceptron): the updates
are the Perceptron's, decided on f_t, but the prediction that is recorded and returned is that of
the average of the hypotheses f_1, ..., f_t used so far, fbar_t(x) = (1/t) sum_{s<=t} f_s(x)
(KernelCore.set_averaged: the support set keeps each coefficient's history; for the Perceptron,
sum_i alpha_i (t - T_i)/t k(x_i, x) with T_i the example count when SV i was added).  The
budgeted learners that share the mixin (RBP, Forgetron, BPAs) average until their first removal
and predict with the current hypothesis from then on (KernelCore.set_averaged).
"""
from onlinekern._core.learner cimport TASK_BINARY, TASK_MULTICLASS, TASK_REGRESSION, is_mistake
from onlinekern._core.support cimport KernelCore
from onlinekern._core.losses cimport runner_up

from onlinekern.base import KernelLearner
from onlinekern.params import is_auto, stream_budget


#: Product regression step of the mistake-driven learners (Perceptron, RBP, Forgetron, Projectron):
#: an epsilon-mistake adds a support vector of coefficient eta sign(y - f) (targets standardised
#: online).  The LSOKL Matlab value, 0.1 (the 'paper' preset), takes ten mistakes to move a
#: prediction by one standard deviation.  Measured, first 5,000 rows, RMSE at 0.1 -> 0.2: Perceptron
#: casp 5.27 -> 5.20, cadata 65,320 -> 62,880, abalone 2.421 -> 2.413; Projectron 5.28 -> 5.21,
#: 65,390 -> 62,810, 2.420 -> 2.410; Forgetron 5.54 -> 5.52, 73,070 -> 70,570, 2.555 -> 2.553; RBP
#: 5.465 -> 5.478, 73,260 -> 71,550, 2.549 -> 2.567 (0.3 was worse than 0.2 on 5 of 6 cells);
#: scikit-learn's check_regressors_train (200 rows, one pass): R^2 0.47 -> 0.68.
REGRESSION_ETA = 0.2


def averaged_default(task):
    """The product default of ``average`` for the mistake-driven learners: True unless ``task`` is
    regression.

    The plain Perceptron's own predictions make many mistakes on noisy data: on the first 5,000
    rows of a9a, ijcnn1, w8a and german.numer it made 20.8, 11.1, 4.0 and 33 % against the
    majority class's 23, 10.1, 3.1 and 30 %, at every kernel width tried.  The average of its
    hypotheses (Freund & Schapire 1999; Collins 2002) makes 16.7, 8.4, 2.7 and 27.5 % with the
    same updates (BENCHMARKS.md "Defaults").

    Left at 'auto' by the Perceptron and the Projectron(++), whose average lasts the whole
    stream, each example is predicted by whichever of the averaged and the current hypothesis has
    made fewer mistakes on the examples before it (follow the leader; ties: the average;
    ``LearnerCore.avg_leader``): the average weights every past hypothesis alike, so when the
    stream drifts it lags.  w8a in file order (its 1,479 positives are rows 741-2,219)
    made the averaged Perceptron err on 42.6 % of the rows, the current hypothesis on 0.01 %.
    """
    return task != "regression"


class Averaged:
    """Mixin of the mistake-driven learners with an ``average`` parameter (Perceptron, RBP,
    Forgetron, Projectron, Projectron++, BPAs): its product default, :func:`averaged_default`."""

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """average: :func:`averaged_default`; eta: :data:`REGRESSION_ETA`; other names: the next
        class's rule."""
        if name == "average":
            return averaged_default(task)
        if name == "eta":
            return REGRESSION_ETA
        return super().auto_value(name, X, task, n_outputs, n_stream)

    #: Whether the average is kept over the whole stream (no removal ever ends it: the Perceptron
    #: and the Projectron(++)); only then does average='auto' follow the leader (see
    #: :func:`averaged_default`).  RBP, the Forgetron and BPAs stop averaging at their first
    #: removal, which bounds the lag; following the leader there changed their width race on whole
    #: ijcnn1 (RBP 5.97 -> 7.40 %, Forgetron 5.67 -> 6.98 %) for gains on 5,000-row slices only.
    average_lasts = False

    def _set_averaging(self, core):
        """Averaged predictions on the core when ``average`` is in force; left at 'auto' by a
        learner whose average lasts (:attr:`average_lasts`), the prediction follows the leader
        between the averaged and the current hypothesis (:func:`averaged_default`); an explicit
        True always averages."""
        on = bool(self.param_value("average"))
        core.set_averaged(on)
        core.avg_leader = on and is_auto(self.average) and self.average_lasts


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
    cdef public Py_ssize_t budget            # -1: unbounded

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        self.kernel_scores(x, idx, nnz, out)
        if not perceptron_update(self.task, out, y, self.n_outputs, self.eta, self.epsilon, self.grad_buf):
            return 0
        if self.budget >= 0 and self.sv.n >= self.budget:
            return 0                         # full: the Stoptron keeps its hypothesis
        return 0 if self.sv.append(x, idx, nnz, self.xsq, self.grad_buf) >= 0 else -1

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(eta=self.eta, epsilon=self.epsilon, budget=int(self.budget))
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        self.eta, self.epsilon = float(st["eta"]), float(st["epsilon"])
        self.budget = int(st.get("budget", -1))


class Perceptron(Averaged, KernelLearner):
    """Kernel Perceptron with the Gaussian kernel (the papers' unbounded support set; the product
    default stops adding once a budget that depends on the stream's length is full).

    Freund & Schapire, "Large margin classification using the perceptron algorithm",
    Machine Learning 37 (1999); multiclass by Crammer–Singer steps; regression by the LSOKL
    epsilon-tube rule.  ALGORITHMS.md §3.1.

    Parameters
    ----------
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    eta : float
        Regression step size (0.1).
    epsilon : float
        Regression tube (0.1).
    average : bool or 'auto'
        Predict with the average of the hypotheses used so far (online and after training; the
        updates stay the Perceptron's).  'auto' (default): on for classification (see
        :func:`averaged_default`), off for regression; the 'paper' preset: off.
    task : {'classification', 'regression'}
    budget : int, 'auto' or None
        Most support vectors kept; when the set is full, an update is skipped (the "Stoptron" of
        Orabona, Keshet & Caputo 2009): the hypothesis stays as it is, and so does the averaged
        one's history (no SV is ever removed).  'auto' (default): :func:`onlinekern.params.stream_budget`, the
        largest set whose kernel rows keep a pass over the stream within a fixed work (5,289 SVs
        on ijcnn1's 141,691 rows, 20,006 on a9a's 32,561; 4,000 when the length of the stream is
        unknown); None or the 'paper' preset: unbounded.  Skipping beat removing the oldest SV
        and removing a random one (RBP) at 1,000 SVs on ijcnn1, a9a and poker (4.62 / 19.51 /
        50.50 % against 5.94 / 21.20 / 54.01 % and 6.20 / 21.39 / 55.33 %).
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

    family = "perceptron"
    summary = "kernel Perceptron: add the example on every mistake (unbounded)"
    paper = "Freund & Schapire, Machine Learning 1999"
    paper_defaults = {"gamma": None, "average": False, "budget": None, "eta": 0.1}
    average_lasts = True

    def __init__(self, gamma="auto", eta="auto", epsilon=0.1, average="auto", task="classification", budget="auto",
                 preset="auto", seed=0, n_threads=None):
        self.gamma = gamma
        self.average = average
        self.budget = budget
        self.preset = preset
        self.eta = eta
        self.epsilon = epsilon
        self.task = task
        self.seed = seed
        self.n_threads = n_threads

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """budget: :func:`onlinekern.params.stream_budget`; average: :func:`averaged_default`."""
        if name == "budget":
            return stream_budget(X, n_outputs, n_stream)
        return super().auto_value(name, X, task, n_outputs, n_stream)

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = PerceptronCore()
        core._setup_kernel(n_features, task, n_outputs, gamma, -1, self._n_threads())
        core.eta, core.epsilon = float(self.param_value("eta")), float(self.epsilon)
        budget = self.param_value("budget")
        core.budget = -1 if budget is None else int(budget)
        self._set_averaging(core)
        return core
