# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Python access to the dispatched math kernels of ``include/ok_vmath.h`` (tests, benchmarks)."""
import numpy as np


def simd_level():
    """SIMD level in use: 0 baseline, 1 AVX2+FMA, 2 AVX-512 (capped by ONLINEKERN_SIMD)."""
    return ok_simd_level()


def vector_math():
    """True if exp runs through glibc's libmvec and cos/sin through the vector kernel (level > 0)."""
    return bool(ok_vector_math())


def cossin(a):
    """Return (cos(a), sin(a)) computed by the learners' kernel."""
    cdef double[::1] x = np.ascontiguousarray(a, dtype=np.float64).ravel()
    c = np.empty(x.shape[0]); s = np.empty(x.shape[0])
    cdef double[::1] cv = c, sv = s
    if x.shape[0]:
        ok_vcossin(&x[0], &cv[0], &sv[0], <int>x.shape[0])
    return c, s


def exp(a):
    """Return exp(a) computed by the learners' kernel."""
    cdef double[::1] x = np.ascontiguousarray(a, dtype=np.float64).ravel()
    out = np.empty(x.shape[0])
    cdef double[::1] ov = out
    if x.shape[0]:
        ok_vexp(&x[0], &ov[0], <int>x.shape[0])
    return out


def dot(a, b):
    """Dot product with the learners' fixed-order 16-lane summation."""
    cdef double[::1] x = np.ascontiguousarray(a, dtype=np.float64).ravel()
    cdef double[::1] y = np.ascontiguousarray(b, dtype=np.float64).ravel()
    if x.shape[0] != y.shape[0]:
        raise ValueError("dot: arrays differ in length")
    if x.shape[0] == 0:
        return 0.0
    return ok_dot(&x[0], &y[0], <int>x.shape[0])
