# Counter-based random numbers (include/ok_rng.h): pure functions of (seed, stream, key1, i).
from libc.stdint cimport uint32_t, uint64_t

cdef extern from "ok_rng.h" nogil:
    void ok_philox4x32_10(const uint32_t* ctr, const uint32_t* key, uint32_t* out)
    double ok_uniform(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t i)
    double ok_normal(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t i)
    void ok_normals(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t first, double* out, long n)
    void ok_normals_at(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t first, const int* idx, double* out,
                       long n)

cdef extern from "ok_zig.h" nogil:
    void ok_zig_normals(uint64_t seed, uint32_t stream, uint64_t key1, double* out, long n)
    uint64_t ok_mix64(uint64_t z)     # SplitMix64's finaliser
