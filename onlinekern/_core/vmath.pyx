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


def project(x, idx, E, scale=None, double root=1.0):
    """a = sum_k v_k E[idx[k], :], v_k = x[k] * (scale[idx[k]] if scale is given else root), zero v_k
    dropped as RandomFourierMap.project drops them: the register-blocked kernel (E: (d, D))."""
    xs = np.ascontiguousarray(x, dtype=np.float64).ravel()
    ix = np.ascontiguousarray(idx, dtype=np.int32).ravel()
    cdef double[:, ::1] ev = np.ascontiguousarray(E, dtype=np.float64)
    if xs.shape[0] != ix.shape[0]:
        raise ValueError("project: x and idx differ in length")
    if ix.shape[0] and (ix.min() < 0 or ix.max() >= ev.shape[0]):
        raise ValueError("project: index out of range")
    if scale is not None:
        sc = np.ascontiguousarray(scale, dtype=np.float64).ravel()
        if sc.shape[0] != ev.shape[0]:
            raise ValueError("project: scale must have one value per row of E")
        vals = xs * sc[ix]
    else:
        vals = xs * root
    keep = vals != 0.0
    cdef double[::1] vv = np.ascontiguousarray(vals[keep])
    cdef int[::1] iv = np.ascontiguousarray(ix[keep])
    out = np.empty(ev.shape[1])
    cdef double[::1] ov = out
    if ev.shape[1] == 0:
        return out
    ok_project(<int>ev.shape[1], <int>vv.shape[0], &vv[0] if vv.shape[0] else NULL,
               &iv[0] if iv.shape[0] else NULL, &ev[0, 0], &ov[0])
    return out
