# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Random Fourier features (ALGORITHMS.md §1.3) and FeatureCore, the base of feature-space learners.

z(x) = D^{-1/2} [cos(Omega^T x); sin(Omega^T x)],  Omega = sqrt(2 gamma) E,  E ~ N(0, 1)^{d x D}
from the FEATURES stream, so E[z(x)^T z(x')] = exp(-gamma ||x - x'||^2).  E is stored and the
input is scaled instead (a = E^T (sqrt(2 gamma) x)): the same code then serves RRF, whose
per-feature scale exp(rho_n) changes every step.  The D^{-1/2} factor is folded into the scalar
of each dot/axpy instead of being applied to 2D features.  cos/sin and the long dot/axpy run
through the dispatched vector kernels of include/ok_vmath.h.

precision="float32" (opt-in) keeps a float32 copy of E in tiles and computes Omega^T x and cos/sin
in float32 (ok_project32, ok_vcossin32); the features handed to the weights are still float64.
E itself, its stream and the model state are the same in both precisions.
"""
from libc.math cimport sqrt
from onlinekern._core.vmath cimport ok_axpy, ok_project, ok_vcossin, ok_project32, ok_vcossin32, OK_F32_TILE
from onlinekern._core.learner cimport LearnerCore, RowView, row_view, get_row
from onlinekern._core.weights cimport ScaledWeights

import numpy as np
from onlinekern._core.learner import RowData
from onlinekern.seeding import FEATURES, rng
from onlinekern._core.vmath import tile_f32

PRECISIONS = ("float64", "float32")

# E larger than this is refused with a clear message rather than exhausting memory
MAX_E_BYTES = 4 << 30


def draw_E(seed, int d, int D):
    """E of the FEATURES stream: one standard_normal((d, D)) call (§1.5)."""
    if d * D * 8 > MAX_E_BYTES:
        raise MemoryError(f"random feature matrix of {d} x {D} doubles exceeds {MAX_E_BYTES >> 30} GiB; "
                          "use fewer components")
    return np.ascontiguousarray(rng(seed, FEATURES).standard_normal((d, D)))


# ok_project (register-blocked) up to this many frequencies; one axpy per nonzero above.
cdef int PROJECT_BLOCKED = 512


cdef class RandomFourierMap:
    """Paired random Fourier features of the Gaussian kernel exp(-gamma ||x - x'||^2).

    Parameters
    ----------
    n_features : int
    n_components : int, number of frequencies D (the map has 2D features).
    gamma : float > 0
    seed : int, decides E through the FEATURES stream.
    E : ndarray (n_features, n_components), optional; given instead of drawn (model files).
    precision : "float64" (default) or "float32": the arithmetic of Omega^T x and cos/sin.
    """

    def __init__(self, int n_features, int n_components, double gamma, seed=0, E=None, precision="float64"):
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        if n_components < 1:
            raise ValueError(f"n_components must be >= 1, got {n_components}")
        if not gamma > 0:
            raise ValueError(f"gamma must be > 0, got {gamma!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(map(repr, PRECISIONS))}, got {precision!r}")
        self.d = n_features
        self.D = n_components
        self.gamma = gamma
        self.seed = seed
        self.root = sqrt(2.0 * gamma)
        self.norm = 1.0 / sqrt(<double>n_components)
        if E is None:
            E = draw_E(seed, n_features, n_components)
        E = np.ascontiguousarray(E, dtype=np.float64)
        if E.shape != (n_features, n_components):
            raise ValueError(f"E has shape {E.shape}, expected {(n_features, n_components)}")
        self.E_ = E
        cdef const double[:, ::1] ev = E
        self.E = &ev[0, 0]
        buf = np.zeros(3 * n_components)
        self.scratch_ = buf
        cdef double[::1] bv = buf
        self.a = &bv[0]
        self.cs = &bv[n_components]
        self.nz_ = np.zeros(n_features)
        self.nzi_ = np.zeros(n_features, dtype=np.int32)
        cdef double[::1] zv = self.nz_
        cdef int[::1] zi = self.nzi_
        self.nzv = &zv[0]
        self.nzi = &zi[0]
        self.f32 = precision == "float32"
        if self.f32:
            self._setup_f32()

    def _setup_f32(self):
        tiles = tile_f32(self.E_)
        self.Dp = tiles.shape[0] * OK_F32_TILE
        a32 = np.zeros(self.Dp, dtype=np.float32)
        nzv32 = np.zeros(self.d, dtype=np.float32)
        self.f32_ = (tiles, a32, nzv32)
        cdef const float[:, :, ::1] tv = tiles
        cdef float[::1] av = a32, vv = nzv32
        self.Et32 = &tv[0, 0, 0]
        self.a32 = &av[0]
        self.nzv32 = &vv[0]

    @property
    def precision(self):
        return "float32" if self.f32 else "float64"

    @property
    def E(self):
        """The standard-normal matrix E (Omega = sqrt(2 gamma) E)."""
        return self.E_

    @property
    def n_components(self):
        return self.D

    cdef void project(self, const double* x, const int* idx, int nnz, const double* feat_scale) noexcept nogil:
        """a = sum_k (s_k x_k) E[idx_k, :], s_k = root (feat_scale NULL) or feat_scale[idx_k].

        Up to PROJECT_BLOCKED frequencies one register-blocked pass (ok_project); above, one
        axpy per nonzero: E's rows then stream from L2, which bounds both forms alike (the
        blocked one measured no faster at D = 1000).  Both give the same bits."""
        cdef int k, j, D = self.D, m = 0, init = 0
        cdef double v
        if self.f32:
            # float32 path: at most d nonzeros per call (rows with repeated indices have more;
            # each later call continues the float32 sums, which gives the same bits as one call)
            k = 0
            while True:
                m = 0
                while k < nnz and m < self.d:
                    v = x[k] * (self.root if feat_scale == NULL else feat_scale[idx[k]])
                    if v != 0.0:
                        self.nzv32[m] = <float>v
                        self.nzi[m] = idx[k]
                        m += 1
                    k += 1
                ok_project32(self.Dp, self.d, m, self.nzv32, self.nzi, self.Et32, self.a32, init)
                init = 1
                if k >= nnz:
                    return
        if D <= PROJECT_BLOCKED and nnz <= self.d:      # (more nonzeros than features: duplicates)
            for k in range(nnz):
                v = x[k] * (self.root if feat_scale == NULL else feat_scale[idx[k]])
                if v != 0.0:
                    self.nzv[m] = v
                    self.nzi[m] = idx[k]
                    m += 1
            ok_project(D, m, self.nzv, self.nzi, self.E, self.a)
            return
        for j in range(D):
            self.a[j] = 0.0
        for k in range(nnz):
            v = x[k] * (self.root if feat_scale == NULL else feat_scale[idx[k]])
            if v != 0.0:
                ok_axpy(D, v, self.E + <Py_ssize_t>idx[k] * D, self.a)

    cdef void features(self, const double* x, const int* idx, int nnz, const double* feat_scale) noexcept nogil:
        """cs = [cos a; sin a] (without the D^{-1/2} factor)."""
        self.project(x, idx, nnz, feat_scale)
        if self.f32:
            ok_vcossin32(self.a32, self.cs, self.cs + self.D, self.D)
        else:
            ok_vcossin(self.a, self.cs, self.cs + self.D, self.D)

    def transform(self, X):
        """z(x) for every row of X: array (n, 2D)."""
        return self.transform_rows(RowData(X, self.d), NULL)

    cdef object transform_rows(self, object rows, const double* feat_scale):
        """z(x) for every row of a RowData, the input scaled per feature by feat_scale
        (NULL: sqrt(2 gamma) for all, as ``project``)."""
        cdef RowView rv = row_view(rows)
        cdef Py_ssize_t n = rows.n_rows, i
        out = np.zeros((n, 2 * self.D))
        cdef double[:, ::1] ov = out
        cdef const double* xr
        cdef const int* xi
        cdef int j, nnz
        for i in range(n):
            get_row(&rv, i, &xr, &xi, &nnz)
            self.features(xr, xi, nnz, feat_scale)
            for j in range(2 * self.D):
                ov[i, j] = self.norm * self.cs[j]
        return out

    def __reduce__(self):
        return (RandomFourierMap, (self.d, self.D, self.gamma, self.seed, self.E_, self.precision))


cdef class FeatureCore(LearnerCore):
    """Base of learners with a linear model w in the random-feature space: f_c(x) = w_c . z(x).

    The weights are a ScaledWeights, so the L2 shrink (1 - eta*lambda) is O(1); the D^{-1/2}
    of z is applied as a scalar (``fmap.norm``) to scores and steps, never to 2D features.
    """

    def _setup_features(self, int n_features, int task, int n_outputs, int n_components, double gamma, seed, E=None,
                        int n_threads=1, precision="float64"):
        self._setup(n_features, task, n_outputs, n_threads)
        self.fmap = RandomFourierMap(n_features, n_components, gamma, seed, E, precision)
        self.F2 = 2 * n_components
        self.w = ScaledWeights(self.n_outputs, self.F2)

    cdef Py_ssize_t model_size(self) noexcept nogil:
        return self.F2

    @property
    def weights(self):
        """True weights, (C, 2D)."""
        return self.w.values

    def get_state(self):
        st = LearnerCore.get_state(self)
        st.update({"n_components": self.fmap.D, "gamma": self.fmap.gamma, "seed": self.fmap.seed,
                   "E": self.fmap.E_, "w": self.w.get_state(), "precision": self.fmap.precision})
        return st

    def set_state(self, st):
        LearnerCore.set_state(self, st)
        self.fmap = RandomFourierMap(self.n_features, int(st["n_components"]), float(st["gamma"]), int(st["seed"]), st["E"],
                                     str(st.get("precision", "float64")))
        self.F2 = 2 * self.fmap.D
        w = ScaledWeights.from_state(st["w"])
        if w.C != self.n_outputs or w.F != self.F2:
            raise ValueError("weights do not match the learner's outputs and features")
        self.w = w
