from onlinekern._core.learner cimport LearnerCore
from onlinekern._core.weights cimport ScaledWeights
from libc.stdint cimport uint32_t, uint64_t

cdef extern from "ok_rowcache.h" nogil:
    ctypedef struct ok_rowcache:
        int D
        int ways
        long nsets
        uint64_t tick
        long long hits
        long long misses
        long long epochs
    long ok_rowcache_lines(long D, size_t nbytes)
    int ok_rowcache_init(ok_rowcache* c, uint64_t seed, uint32_t stream, int version, int D, size_t nbytes)
    void ok_rowcache_free(ok_rowcache* c)
    void ok_rowcache_epoch(ok_rowcache* c)
    const double* ok_rowcache_row(ok_rowcache* c, int col)
    const double* ok_rowcache_pin(ok_rowcache* c, int col, uint64_t t0, double* spare)
    void ok_project_rows(int D, int m, const double* v, const double* const* rows, double* a, int init)
    size_t ok_rowcache_bytes(const ok_rowcache* c)
    void ok_rowcache_touch(const ok_rowcache* c, int col)

cdef class RandomFourierMap:
    cdef readonly int d                 # input dimension
    cdef readonly int D                 # frequencies (2D features)
    cdef readonly double gamma
    cdef readonly long long seed
    cdef readonly double root           # sqrt(2 gamma): Omega = root * E
    cdef readonly double norm           # D^{-1/2}
    cdef object E_                      # (d, D) float64, kept alive (None under the keyed rule)
    cdef const double* E                # NULL under the keyed rule
    # the keyed rule (wide data): row c of E drawn on demand, E[c, j] = ok_normal(seed, FEATURE_ROWS, c, j)
    cdef readonly bint keyed
    cdef readonly int keyed_version     # the rows' generator (KEYED_VERSIONS)
    cdef readonly Py_ssize_t cache_bytes
    cdef ok_rowcache cache              # its own cache (cache_ok), unless it uses another map's
    cdef bint cache_ok
    cdef ok_rowcache* cp                # the cache in use: &cache, or the cache of the map it joined
    cdef object cache_host              # that map (kept alive), or None
    cdef readonly bint cache_shared     # joined by or joined to another map (join_cache)
    cdef object rowp_, spare_           # kept alive: a chunk's row pointers and spare rows
    cdef const double** rowp
    cdef double* spare
    # the last projected row's cache rows by nonzero (NULL: not kept), pinned since tick t_row
    cdef const double** krow
    cdef int krow_cap, kept_n
    cdef uint64_t t_row
    cdef object scratch_
    cdef double* a                      # D: Omega^T x (the float64 path only)
    cdef double* cs                     # 2D: [cos a; sin a] (unscaled)
    cdef object nz_                     # kept alive: the nonzero values of a row, scaled (d)
    cdef object nzi_                    # and their indices (d)
    cdef double* nzv
    cdef int* nzi
    # the opt-in float32 path (precision="float32"; include/ok_vmath.h): tiled float32 E, Omega^T x
    # in float32 (a32, padded to Dp), cs still float64
    cdef readonly bint f32
    cdef long Dp
    cdef object f32_                    # kept alive: (tiles, a32, nzv32)
    cdef const float* Et32
    cdef float* a32
    cdef float* nzv32
    cdef const double* row(self, int col) noexcept nogil
    cdef const double* kept_row(self, int k, int col) noexcept nogil
    cdef bint _reserve_kept(self, int nnz) noexcept nogil
    cdef void project(self, const double* x, const int* idx, int nnz, const double* feat_scale,
                      const int* sidx) noexcept nogil
    cdef void features(self, const double* x, const int* idx, int nnz, const double* feat_scale) noexcept nogil
    cdef void features_at(self, const double* x, const int* idx, int nnz, const double* feat_scale,
                          const int* sidx) noexcept nogil
    cdef object transform_rows(self, object rows, const double* feat_scale, object slot_map=*)


cdef class FeatureCore(LearnerCore):
    cdef public RandomFourierMap fmap
    cdef public ScaledWeights w         # (C, 2D) weights of z(x)
    cdef int F2                         # 2D: weights per output
