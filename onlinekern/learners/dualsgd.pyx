# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""DualSGD, dual space gradient descent (Le, Nguyen, Nguyen & Phung, NIPS 2016), §3.11.

Model f(x) = sum_{i in S} alpha_i k(x_i, x) + W^T z(x): a core set S of at most B support vectors
plus linear weights W on the random Fourier features z of the same kernel (§1.3).  Step t:
  1. f = f_t(x_t); record; g = l'(f, y_t).
  2. alpha <- (1 - 1/t) alpha;  W <- (1 - 1/t) W   (two O(1) scales).
  3. If g = 0: stop (§6.6).  a_new = -g/(lambda t)   (Pegasos step eta_t = 1/(lambda t)).
  4. If |S| = B, k-merging: the k SVs with smallest ||alpha_i||_2 (ties: older first) move into W,
     W += z(x_i) alpha_i^T, and leave S; ``removal`` deletes the single smallest, no transfer.
  5. Append (x_t, a_new).
"""
from libc.math cimport sqrt
from onlinekern._core.support cimport KernelCore, sv_alpha
from onlinekern._core.features cimport RandomFourierMap
from onlinekern._core.weights cimport ScaledWeights
from onlinekern._core.losses cimport TaskLoss

import numpy as np
from onlinekern._core.learner import TASK_NAMES
from onlinekern._core.features import keyed_version_of
from onlinekern._core.losses import TaskLoss as PyTaskLoss
from onlinekern.base import KernelLearner, RandomFeatureModel, check_positive, is_auto
from onlinekern.learners.ogd import task_loss
from onlinekern.params import stream_components, stream_lam



DUALSGD_LOSSES = ("hinge", "logistic", "squared", "absolute", "epsilon-insensitive")
MAINTENANCE = ("k-merging", "removal")


cdef class DualSGDCore(KernelCore):
    cdef public double lam
    cdef public TaskLoss loss
    cdef readonly int k_merge
    cdef readonly bint removal          # maintenance "removal" instead of "k-merging"
    cdef public RandomFourierMap fmap
    cdef public ScaledWeights W         # (C, 2D)
    cdef int F2
    cdef readonly long long n_merged    # SVs moved into W so far (W is exactly 0 while none)
    cdef object bufs_
    cdef double* gkey                   # per slot: ||g_i||_2 of the SV's gradient (see maintain)
    cdef int* sel                       # the SVs chosen by one maintenance step
    cdef double* tmp                    # C

    def share_caches(self, int parts):
        """See LearnerCore.share_caches: the feature map's keyed row cache and the support set's
        dense rows."""
        KernelCore.share_caches(self, parts)
        self.fmap.share_cache(parts)

    def join_caches(self, other):
        """See LearnerCore.join_caches: the feature map's keyed row cache."""
        return isinstance(other, DualSGDCore) and self.fmap.join_cache((<DualSGDCore>other).fmap)

    def _setup_dualsgd(self, int n_components, seed, E, int k_merge, bint removal, keyed_version=None):
        cdef int B = <int>self.sv.budget
        if B < 1:
            raise ValueError("DualSGD needs a budget >= 1")
        if k_merge < 1:
            raise ValueError(f"k_merge must be >= 1, got {k_merge}")
        self.fmap = RandomFourierMap(self.n_features, n_components, self.gamma, seed, E, keyed_version=keyed_version)
        self.F2 = 2 * n_components
        self.W = ScaledWeights(self.n_outputs, self.F2)
        self.k_merge = k_merge
        self.removal = removal
        self.n_merged = 0
        arrays = {"gkey": np.zeros(B), "sel": np.zeros(B, dtype=np.int32),
                  "tmp": np.zeros(self.n_outputs)}
        cdef double[::1] dv
        cdef int[::1] iv
        cdef Py_ssize_t i
        dv = arrays["gkey"]; self.gkey = &dv[0]
        iv = arrays["sel"]; self.sel = &iv[0]
        dv = arrays["tmp"]; self.tmp = &dv[0]
        self.bufs_ = arrays

    cdef inline bint before(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """SV i is removed before SV j: smaller norm, or the same norm and older."""
        return self.gkey[i] < self.gkey[j] or (self.gkey[i] == self.gkey[j] and self.sv.stamp[i] < self.sv.stamp[j])

    cdef void maintain(self) noexcept nogil:
        """Step 4 on a full core set: choose, transfer (k-merging) and delete.

        Every coefficient in S equals -g_i/(lambda t) at step t (a_new = -g/(lambda s) at step s,
        then t-s shrinks by (1 - 1/u) multiply it by s/t), so ranking by ||alpha_i|| is ranking by
        ||g_i||, kept exactly per slot.  Ranking the rounded products instead would break the
        ties that hinge and epsilon-insensitive losses always produce (|g| = 1 for every SV) by
        rounding noise rather than by age, as the tie rule asks.
        """
        cdef Py_ssize_t n = self.sv.n, i, pos, last, a
        cdef int kk = 1 if self.removal else self.k_merge, cnt = 0, c, C = self.n_outputs
        cdef double coef
        cdef const double* xr
        cdef const int* ir
        cdef int nr
        if kk > n:
            kk = <int>n
        # the kk first SVs in the (norm, age) order, by insertion into a sorted list
        for i in range(n):
            if cnt == kk and not self.before(i, self.sel[cnt - 1]):
                continue
            pos = cnt if cnt < kk else kk - 1
            while pos > 0 and self.before(i, self.sel[pos - 1]):
                self.sel[pos] = self.sel[pos - 1]
                pos -= 1
            self.sel[pos] = <int>i
            if cnt < kk:
                cnt += 1
        if not self.removal:
            # W += z(x_i) alpha_i^T, z from the stored row (SupportSet.entries: the dense row on
            # dense data, whose zeros are skipped, so a sparse x_i gives the same bits as its
            # sparse row would; the nonzeros with their original columns on wide data)
            for a in range(cnt):
                i = self.sel[a]
                nr = self.sv.entries(i, &xr, &ir)
                self.fmap.features(xr, ir, nr, NULL)
                for c in range(C):
                    coef = sv_alpha(self.sv, i, c)
                    if coef != 0.0:
                        self.W.axpy(c, coef * self.fmap.norm, self.fmap.cs)
            self.n_merged += cnt
        # delete in descending slot order: remove() moves the last SV into the hole, and every
        # chosen slot above the current one is already gone
        for a in range(1, cnt):
            pos = a
            while pos > 0 and self.sel[pos - 1] < self.sel[pos]:
                self.sel[pos - 1], self.sel[pos] = self.sel[pos], self.sel[pos - 1]
                pos -= 1
        for a in range(cnt):
            i = self.sel[a]
            last = self.sv.n - 1
            self.gkey[i] = self.gkey[last]
            self.sv.remove(i)

    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        cdef int c
        self.kernel_scores(x, idx, nnz, out)          # SupportSet's feature-major kernel row
        if self.n_merged > 0:
            self.fmap.features(x, idx, nnz, NULL)
            self.W.scores(self.fmap.cs, self.fmap.norm, self.tmp)
            for c in range(self.n_outputs):
                out[c] += self.tmp[c]
        return 0

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef double t = <double>(self.n_seen + 1), shrink, gn = 0.0
        cdef int c
        cdef bint nonzero = False
        self.predict_row(x, idx, nnz, out)                 # 1. (W part skipped while W = 0)
        self.loss.grad(out, y, self.n_outputs, g)
        shrink = 1.0 - 1.0 / t                             # 2.
        self.sv.shrink(shrink)
        self.W.shrink(shrink)
        for c in range(self.n_outputs):                    # 3.
            nonzero = nonzero or g[c] != 0.0
            gn += g[c] * g[c]
        if not nonzero:
            return 0
        for c in range(self.n_outputs):
            g[c] = -g[c] / (self.lam * t)
        if self.sv.n >= self.sv.budget:                    # 4.
            self.maintain()
        if self.sv.append(x, idx, nnz, self.xsq, g) < 0:   # 5.
            return -1
        self.gkey[self.sv.n - 1] = sqrt(gn)
        return 0

    @property
    def weights(self):
        """W, (C, 2D)."""
        return self.W.values

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(lam=self.lam, loss=self.loss.spec, k_merge=self.k_merge,
                  maintenance=MAINTENANCE[1] if self.removal else MAINTENANCE[0],
                  n_components=self.fmap.D, seed=self.fmap.seed, E=self.fmap.E_, W=self.W.get_state(),
                  n_merged=self.n_merged, gkey=np.array(self.bufs_["gkey"][:self.sv.n]))
        st.update(self.fmap.keyed_state())
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        self.lam = float(st["lam"])
        if not self.lam > 0:
            raise ValueError("DualSGD state: lambda must be positive")
        self.loss = task_loss(st["loss"], self.task)
        if st["maintenance"] not in MAINTENANCE:
            raise ValueError(f"DualSGD state: unknown maintenance {st['maintenance']!r}")
        self._setup_dualsgd(int(st["n_components"]), int(st["seed"]), st["E"], int(st["k_merge"]),
                            st["maintenance"] == "removal", keyed_version_of(st))
        W = ScaledWeights.from_state(st["W"])
        gkey = np.asarray(st["gkey"], dtype=np.float64)
        if W.C != self.n_outputs or W.F != self.F2:
            raise ValueError("DualSGD state: W does not match the outputs and features")
        if gkey.shape != (self.sv.n,) or int(st["n_merged"]) < 0:
            raise ValueError("DualSGD state: inconsistent support-set keys")
        self.W = W
        self.bufs_["gkey"][:self.sv.n] = gkey
        self.n_merged = int(st["n_merged"])


#: lam of the product preset for regression: the first Pegasos step 1/lam ~ 33 on targets
#: standardised online.  The papers' 2/T makes every coefficient -g/(lam t), so early predictions
#: reach T/2 target units and the squared loss diverges; measured on the first 2,000 rows of casp,
#: cadata and abalone, lam in [0.01, 0.1] is the best of {1e-3, ..., 1} for every regression loss;
#: on 5,000 rows 0.03 beats 0.1 (RMSE / running mean's, -eps: casp 0.94 -> 0.90, cadata
#: 0.89 -> 0.78, abalone 0.86 -> 0.82; -l2 0.93 / 0.88 / 0.85 -> 0.91 / 0.89 / 0.82), and 0.01 is
#: unstable for -l2 (cadata 1.18; abalone at 0.003: 4e4).
REGRESSION_LAM = 0.03


class DualSGD(RandomFeatureModel, KernelLearner):
    """Dual space gradient descent: a budgeted kernel expansion whose overflow is merged into a
    random-feature (dual space) linear model.

    Le, Nguyen, Nguyen & Phung, "Dual space gradient descent for online learning", NIPS 2016.
    ALGORITHMS.md §3.11.  f(x) = sum_{i in S} alpha_i k(x_i, x) + W^T z(x), one Gaussian kernel
    for both parts (z as §1.3, E from the FEATURES stream; §6.6).  Pegasos steps: every step shrinks
    alpha and W by (1 - 1/t); a non-zero gradient g appends (x_t, -g/(lambda t)); when the core set
    is full the ``k_merge`` smallest-norm SVs (ties: oldest first) are moved into W first.  Unlike
    the reference code an SV is added only when g != 0 (§6.6).  With budget >= T it is kernel
    Pegasos (§5.1).

    ``support_vectors_``/``dual_coef_`` describe the core set, ``coef_`` the weights W.

    Parameters
    ----------
    budget : int
        Core-set size B (100, tund/dsgd ``run_dsgd.py`` demo).
    k_merge : int
        Support vectors moved into W per maintenance step (20, demo).
    n_components : int or 'auto'
        Random Fourier frequencies D of the dual space, 2D weights; 'auto' (default): 200 (demo,
        the 'paper' preset's value) for a stream of at most 5,000 examples or of unknown length,
        more for a longer one known in advance: 200 sqrt(T / 5,000) up to 2,000, within the pass's
        work bound (:func:`onlinekern.params.stream_components`).
    gamma : float, 'auto', 'median' or None
        Kernel width of both parts; 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    lam : float, 'auto' or None
        Pegasos regularisation lambda, step 1/(lambda t).  'auto' (default): None for
        classification, 0.03 for regression (REGRESSION_LAM), down to 0.01 on a long stream of
        known length (:func:`onlinekern.params.stream_lam`).  None: 2/T when the stream length T
        is known (the demo's 2/N): ``horizon`` if given, else the rows given to ``fit`` or
        ``run_online`` (the CLI's file); 1e-4 when it is not (``partial_fit`` on a fresh model, a
        stream of unknown length).  ``horizon_`` records the T used.  Every
        coefficient is -g_i/(lambda t), so f grows like 1/(lambda t): fine for the sign of a
        classifier, but regression needs a tuned lambda (casp, targets in [0, 1]: RMSE 37 at 1e-4,
        0.30 at 0.22).
    horizon : int or None
        Stream length T, used only to set lam = 2/T when lam is None (default: the length of
        the stream given to ``fit`` / ``run_online``).
    loss : str
        logistic (default; multiclass margin form), hinge (Crammer–Singer for multiclass);
        squared, absolute, epsilon-insensitive (regression).
    epsilon : float
        Tube of the epsilon-insensitive loss (0.1).
    maintenance : str
        'k-merging' (default) or 'removal' (delete the smallest-norm SV, nothing moves to W).
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

    family = "dualsgd"
    losses = DUALSGD_LOSSES
    summary = "dual space gradient descent: budgeted Pegasos whose overflow SVs merge into random-feature weights"
    paper = "Le, Nguyen, Nguyen & Phung, NIPS 2016"

    paper_defaults = {"gamma": None, "lam": None, "n_components": 200}

    def __init__(self, budget=100, k_merge=20, n_components="auto", gamma="auto", lam="auto", horizon=None,
                 loss="logistic", epsilon=0.1, maintenance="k-merging", preset="auto", seed=0, n_threads=None):
        self.budget = budget
        self.k_merge = k_merge
        self.n_components = n_components
        self.gamma = gamma
        self.preset = preset
        self.lam = lam
        self.horizon = horizon
        self.loss = loss
        self.epsilon = epsilon
        self.maintenance = maintenance
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        # the shared checks (lam and horizon may be None: their defaults), then lam > 0 (Pegasos
        # steps 1/(lam t)) and the maintenance rule
        KernelLearner._validate_params(self)
        if self.lam is not None and not is_auto(self.lam):
            check_positive("lam", self.lam)
        if self.maintenance not in MAINTENANCE:
            raise ValueError(f"maintenance must be one of {', '.join(MAINTENANCE)}, got {self.maintenance!r}")

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """lam: the papers' rule (None: 2/T) for classification, :data:`REGRESSION_LAM` for regression,
        lowered with a known horizon (:func:`onlinekern.params.stream_lam`); n_components: 200,
        grown with a known horizon (:func:`onlinekern.params.stream_components`)."""
        if name == "n_components":
            return stream_components(X, n_outputs, n_stream, self.paper_defaults[name])
        if name == "lam" and task == "regression":
            return stream_lam(REGRESSION_LAM, n_stream)
        return self.paper_defaults[name]

    def _lambda(self):
        """The lambda in use: lam, else 2/T with T = horizon or the length of the stream given to
        ``fit`` / ``run_online`` (T known), else 1e-4 (§3.11)."""
        lam = self.param_value("lam")
        if lam is not None:
            return float(lam)
        T = self.__dict__.get("horizon_", self.horizon)
        if T is not None:
            return 2.0 / float(T)
        return 1e-4

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = DualSGDCore()
        core._setup_kernel(n_features, task, n_outputs, gamma, int(self.budget), self._n_threads())
        core.lam = self._lambda()
        core.loss = PyTaskLoss(self.loss, TASK_NAMES[task] == "multiclass", self.epsilon)
        core._setup_dualsgd(int(self.param_value("n_components")), self.seed, None, int(self.k_merge),
                            self.maintenance == "removal")
        return core
