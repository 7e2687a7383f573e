# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Python twin of include/ok_rng.h and include/ok_zig.h, for test oracles: the very numbers the
compiled code draws."""
import numpy as np
from libc.stdint cimport uint32_t, uint64_t


def normals(seed, int stream, key1, n, first=0):
    """Standard normals ok_normal(seed, stream, key1, first + k), k < n (n an int or a shape)."""
    shape = (int(n),) if np.ndim(n) == 0 else tuple(int(v) for v in n)
    out = np.empty(int(np.prod(shape)))
    cdef double[::1] ov = out
    if out.shape[0]:
        ok_normals(<uint64_t>seed, <uint32_t>stream, <uint64_t>key1, <uint64_t>first, &ov[0], <long>out.shape[0])
    return out.reshape(shape)


def zig_normals(seed, int stream, key1, n):
    """The first n normals of row key1 of (seed, stream) by the ziggurat, ok_zig_normals (include/ok_zig.h)."""
    out = np.empty(int(n))
    cdef double[::1] ov = out
    if out.shape[0]:
        ok_zig_normals(<uint64_t>seed, <uint32_t>stream, <uint64_t>key1, &ov[0], <long>out.shape[0])
    return out


def normals_at(seed, int stream, key1, idx, first=0):
    """Standard normals ok_normal(seed, stream, key1, first + idx[k]) of scattered elements
    (ok_normals_at: the normals of a sparse row's columns)."""
    cdef int[::1] iv = np.ascontiguousarray(idx, dtype=np.intc)
    out = np.empty(iv.shape[0])
    cdef double[::1] ov = out
    if out.shape[0]:
        ok_normals_at(<uint64_t>seed, <uint32_t>stream, <uint64_t>key1, <uint64_t>first, &iv[0], &ov[0],
                      <long>out.shape[0])
    return out


def normal(seed, int stream, key1, i):
    """One standard normal, ok_normal(seed, stream, key1, i): the scalar path."""
    return ok_normal(<uint64_t>seed, <uint32_t>stream, <uint64_t>key1, <uint64_t>i)


def uniforms(seed, int stream, key1, n, first=0):
    """Uniforms in [0, 1): ok_uniform(seed, stream, key1, first + k), k < n."""
    cdef Py_ssize_t k, m = int(n)
    out = np.empty(m)
    cdef double[::1] ov = out
    for k in range(m):
        ov[k] = ok_uniform(<uint64_t>seed, <uint32_t>stream, <uint64_t>key1, <uint64_t>(first + k))
    return out


def philox(ctr, key):
    """One Philox4x32-10 block (for known-answer tests)."""
    cdef uint32_t c[4]
    cdef uint32_t kk[2]
    cdef uint32_t o[4]
    for i in range(4):
        c[i] = ctr[i]
    kk[0] = key[0]
    kk[1] = key[1]
    ok_philox4x32_10(c, kk, o)
    return [o[0], o[1], o[2], o[3]]
