from onlinekern._core.learner cimport LearnerCore
from onlinekern._core.weights cimport ScaledWeights

cdef class RandomFourierMap:
    cdef readonly int d                 # input dimension
    cdef readonly int D                 # frequencies (2D features)
    cdef readonly double gamma
    cdef readonly long long seed
    cdef readonly double root           # sqrt(2 gamma): Omega = root * E
    cdef readonly double norm           # D^{-1/2}
    cdef object E_                      # (d, D) float64, kept alive
    cdef const double* E
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
    cdef void project(self, const double* x, const int* idx, int nnz, const double* feat_scale) noexcept nogil
    cdef void features(self, const double* x, const int* idx, int nnz, const double* feat_scale) noexcept nogil
    cdef object transform_rows(self, object rows, const double* feat_scale)


cdef class FeatureCore(LearnerCore):
    cdef public RandomFourierMap fmap
    cdef public ScaledWeights w         # (C, 2D) weights of z(x)
    cdef int F2                         # 2D: weights per output
