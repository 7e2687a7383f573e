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


def tile_f32(E):
    """E (d, D) as the float32 path stores it: (Dp / 64, d, 64) float32 tiles, tile t holding
    columns [64t, 64t + 64) of every row, zero-padded to Dp = D rounded up to a multiple of 64."""
    E = np.asarray(E, dtype=np.float64)
    d, D = E.shape
    Dp = (D + OK_F32_TILE - 1) // OK_F32_TILE * OK_F32_TILE
    padded = np.zeros((d, Dp), dtype=np.float32)
    padded[:, :D] = E
    return np.ascontiguousarray(padded.reshape(d, Dp // OK_F32_TILE, OK_F32_TILE).transpose(1, 0, 2))


def cossin32(a):
    """Return (cos(a), sin(a)) of the float32 path: float32 arguments and arithmetic, float64 results."""
    x32 = np.ascontiguousarray(a, dtype=np.float32).ravel()
    cdef Py_ssize_t n = x32.shape[0]
    padded = np.zeros((n + 15) // 16 * 16, dtype=np.float32)
    padded[:n] = x32
    cdef float[::1] x = padded
    c = np.empty(n); s = np.empty(n)
    cdef double[::1] cv = c, sv = s
    if n:
        ok_vcossin32(&x[0], &cv[0], &sv[0], <int>n)
    return c, s


def project32(x, idx, E, double root=1.0, int chunk=0):
    """The float32 path's a = sum_k v_k E[idx[k], :] (v_k = float32(x[k] * root), zeros dropped),
    from E (d, D) tiled by ``tile_f32``; float32 result of length D.  ``chunk`` > 0 feeds the
    nonzeros ``chunk`` at a time (the continuing form the map uses for rows with repeated indices)."""
    xs = np.ascontiguousarray(x, dtype=np.float64).ravel()
    ix = np.ascontiguousarray(idx, dtype=np.int32).ravel()
    E = np.asarray(E, dtype=np.float64)
    if E.ndim != 2 or E.shape[1] == 0:
        raise ValueError("project32: E must be a non-empty (d, D) matrix")
    if xs.shape[0] != ix.shape[0]:
        raise ValueError("project32: x and idx differ in length")
    if ix.shape[0] and (ix.min() < 0 or ix.max() >= E.shape[0]):
        raise ValueError("project32: index out of range")
    vals = xs * root
    keep = vals != 0.0
    cdef float[::1] vv = np.ascontiguousarray(vals[keep], dtype=np.float32)
    cdef int[::1] iv = np.ascontiguousarray(ix[keep])
    cdef float[:, :, ::1] et = tile_f32(E)
    cdef long Dp = et.shape[0] * OK_F32_TILE
    out = np.zeros(Dp, dtype=np.float32)
    cdef float[::1] ov = out
    cdef int m = vv.shape[0], k0 = 0, step = chunk if chunk > 0 else max(m, 1)
    while True:
        ok_project32(Dp, <int>E.shape[0], min(step, m - k0), &vv[k0] if k0 < m else NULL,
                     &iv[k0] if k0 < m else NULL, &et[0, 0, 0], &ov[0], 1 if k0 > 0 else 0)
        k0 += step
        if k0 >= m:
            break
    return out[:E.shape[1]]
