# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""ScaledWeights: the weight matrix of feature-space models (FOGD, DualSGD, RRF, NOGD, ...)."""
from onlinekern._core.vmath cimport ok_dot, ok_axpy

import numpy as np

cdef double RENORM = 1e-100


cdef class ScaledWeights:
    """Weights w_c = scale * W[c] for c < C, each of length F.

    Parameters
    ----------
    C, F : int
    W : array (C, F), optional initial *true* weights (zeros by default)
    scale : float, optional; with W, the stored representation (model files)
    """

    def __init__(self, int C, int F, W=None, double scale=1.0):
        if C < 1 or F < 1:
            raise ValueError("ScaledWeights needs C >= 1 and F >= 1")
        if not scale != 0.0:
            raise ValueError("scale must be non-zero")
        self.C = C
        self.F = F
        arr = np.zeros((C, F)) if W is None else np.array(W, dtype=np.float64, copy=True).reshape(C, F)
        self.W_ = np.ascontiguousarray(arr)
        cdef double[:, ::1] v = self.W_
        self.W = &v[0, 0]
        self.scale = scale

    cdef void scores(self, const double* z, double zscale, double* out) noexcept nogil:
        """out[c] = w_c . (zscale * z)."""
        cdef int c
        cdef double s = self.scale * zscale
        for c in range(self.C):
            out[c] = s * ok_dot(self.W + <Py_ssize_t>c * self.F, z, self.F)

    cdef void axpy(self, int c, double a, const double* z) noexcept nogil:
        """w_c += a * z."""
        ok_axpy(self.F, a / self.scale, z, self.W + <Py_ssize_t>c * self.F)

    cdef void shrink(self, double c) noexcept nogil:
        """w <- c * w, O(1)."""
        cdef Py_ssize_t i, n = <Py_ssize_t>self.C * self.F
        if c == 0.0:
            for i in range(n):
                self.W[i] = 0.0
            self.scale = 1.0
            return
        self.scale *= c
        if -RENORM < self.scale < RENORM:
            for i in range(n):
                self.W[i] *= self.scale
            self.scale = 1.0

    @property
    def values(self):
        """The true weights, array (C, F)."""
        return self.scale * np.asarray(self.W_)

    @property
    def stored(self):
        """The stored (scaled) matrix itself, shared, shape (C, F)."""
        return self.W_

    def get_state(self):
        return {"C": self.C, "F": self.F, "W": np.array(self.W_), "scale": self.scale}

    @staticmethod
    def from_state(st):
        return ScaledWeights(int(st["C"]), int(st["F"]), np.asarray(st["W"]), float(st["scale"]))

    def __reduce__(self):
        return (ScaledWeights, (self.C, self.F, np.array(self.W_), self.scale))
