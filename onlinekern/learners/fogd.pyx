# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""FOGD, Fourier Online Gradient Descent (Lu, Hoi, Wang, Zhao & Liu, JMLR 17, 2016), §3.9.

1. z = z(x_t); f = w^T z; record; g = l'(f, y_t).
2. w <- (1 - eta lambda) w - eta g z   (multiclass: w_c <- (1 - eta lambda) w_c - eta g_c z).
With ``average`` the step-averaged w (mean of w after each step) is used for prediction after
training (the online scores are always those of the current w).
"""
from onlinekern._core.features cimport FeatureCore
from onlinekern._core.losses cimport TaskLoss
from onlinekern._core.vmath cimport ok_dot, ok_axpy

import numpy as np
from onlinekern.base import FeatureLearner
from onlinekern.learners.ogd import ALL_LOSSES, learner_loss, task_loss
from onlinekern.losses import smooth_step
from onlinekern.params import stream_components




cdef class FOGDCore(FeatureCore):
    cdef public double eta, lam
    cdef public TaskLoss loss
    cdef public bint average
    cdef object avg_               # (C, 2D) sum of w after each step, when averaging
    cdef double* avg
    cdef public long long n_avg

    def _setup_average(self, bint average):
        self.average = average
        self.avg_ = np.zeros((self.n_outputs, self.F2))
        cdef double[:, ::1] v = self.avg_
        self.avg = &v[0, 0]
        self.n_avg = 0

    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        cdef int c
        cdef Py_ssize_t j
        self.fmap.features(x, idx, nnz, NULL)
        if self.average and self.n_avg > 0:
            for c in range(self.n_outputs):
                out[c] = ok_dot(self.avg + <Py_ssize_t>c * self.F2, self.fmap.cs, self.F2) * (self.fmap.norm / self.n_avg)
        else:
            self.w.scores(self.fmap.cs, self.fmap.norm, out)
        return 0

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef int c
        cdef Py_ssize_t j
        self.fmap.features(x, idx, nnz, NULL)
        self.w.scores(self.fmap.cs, self.fmap.norm, out)
        self.loss.grad(out, y, self.n_outputs, g)
        if self.lam > 0.0:
            self.w.shrink(1.0 - self.eta * self.lam)
        for c in range(self.n_outputs):
            if g[c] != 0.0:
                self.w.axpy(c, -self.eta * g[c] * self.fmap.norm, self.fmap.cs)
        if self.average:
            # the mean of w after each step (ALGORITHMS.md §3.9 "step-averaged w")
            ok_axpy(self.n_outputs * self.F2, self.w.scale, self.w.W, self.avg)
            self.n_avg += 1
        return 0

    def get_state(self):
        st = FeatureCore.get_state(self)
        st.update(eta=self.eta, lam=self.lam, average=int(self.average), avg=np.array(self.avg_), n_avg=self.n_avg,
                  loss=self.loss.spec)
        return st

    def set_state(self, st):
        FeatureCore.set_state(self, st)
        self.eta, self.lam = float(st["eta"]), float(st["lam"])
        self._setup_average(bool(st["average"]))
        self.avg_[...] = np.asarray(st["avg"]).reshape(self.avg_.shape)
        self.n_avg = int(st["n_avg"])
        self.loss = task_loss(st["loss"], self.task)


class FOGD(FeatureLearner):
    """Fourier online gradient descent: linear OGD on paired random Fourier features.

    Lu, Hoi, Wang, Zhao & Liu, "Large scale online kernel learning", JMLR 17(47), 2016.
    ALGORITHMS.md §3.9.  z(x) = D^{-1/2}[cos Omega^T x; sin Omega^T x], Omega = sqrt(2 gamma) E.

    Parameters
    ----------
    n_components : int or 'auto'
        Number of frequencies D (2D weights); 'auto' (default): 400 (the 'paper' preset's value)
        for a stream of at most 5,000 examples or of unknown length, more for a longer one known in
        advance (``fit``, ``run_online``, the CLI): 400 sqrt(T / 5,000) up to 4,000, within the pass's
        work bound (:func:`onlinekern.params.stream_components`).
    gamma : float, 'auto', 'median' or None
        Kernel width; 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    eta : float or 'auto'
        Step size in the scaled-feature convention (LSOKL's eta_ref corresponds to D*eta_ref);
        'auto' (default): 0.4 (the 'paper' preset's value), times 4 for the logistic loss and
        max(2, K/2) for softmax over K classes (:func:`onlinekern.losses.smooth_step`).
    lam : float
        L2 regularisation (0).
    loss : str
        Any loss of onlinekern.losses (hinge default); multiclass: hinge, logistic, softmax.
        Softmax on two classes is the logistic loss on the binary score f = s_1 - s_0
        (:func:`onlinekern.losses.binary_form`): one score, the logistic step, and
        ``predict_proba`` is [1 - sig(f), sig(f)].
    epsilon, huber_delta, quantile : float
        Loss parameters.
    average : bool
        Predict after training with the step-averaged weights.
    precision : 'float64' or 'float32'
        Arithmetic of the feature map ('float64'). 'float32' (opt-in) keeps E as float32 and
        computes Omega^T x and cos/sin in float32 -- 1.8x faster at D = 1000 on ijcnn1 (BENCHMARKS.md) --
        while the weights, scores and updates stay float64.  Features then differ from the
        float64 ones by ~1e-7 (relative in Omega^T x), so results are close but not identical;
        both are the same bits at every SIMD level and thread count.  Meant for scaled data:
        the phase error grows with ``|omega . x|``.
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Decides E (FEATURES stream) and the median heuristic.
    n_threads : int or None
    """

    family = "fogd"
    losses = ALL_LOSSES
    summary = "Fourier online gradient descent: linear OGD on D random Fourier features"
    paper = "Lu, Hoi, Wang, Zhao & Liu, JMLR 2016"
    paper_defaults = {"gamma": None, "eta": 0.4, "n_components": 400}

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """eta: the papers' 0.4, times 1/L for a loss of curvature L < 1 (:func:`onlinekern.losses.smoothness`;
        see :func:`onlinekern.losses.smooth_step`); n_components: 400, grown with a known horizon
        (:func:`onlinekern.params.stream_components`)."""
        if name == "n_components":
            return stream_components(X, n_outputs, n_stream, self.paper_defaults[name])
        if name == "eta":
            return smooth_step(self.paper_defaults["eta"], self.loss, task, n_outputs)
        return self.paper_defaults[name]

    def __init__(self, n_components="auto", gamma="auto", eta="auto", lam=0.0, loss="hinge", epsilon=0.1,
                 huber_delta=1.0, quantile=0.5, average=False, precision="float64", preset="auto", seed=0, n_threads=None):
        self.n_components = n_components
        self.gamma = gamma
        self.preset = preset
        self.eta = eta
        self.lam = lam
        self.loss = loss
        self.epsilon = epsilon
        self.huber_delta = huber_delta
        self.quantile = quantile
        self.average = average
        self.precision = precision
        self.seed = seed
        self.n_threads = n_threads

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = FOGDCore()
        core._setup_features(n_features, task, n_outputs, int(self.param_value("n_components")), gamma, self.seed, None, self._n_threads(),
                              self.precision)
        core.eta, core.lam = float(self.param_value("eta")), float(self.lam)
        core._setup_average(bool(self.average))
        core.loss = learner_loss(self, task)
        return core
