from onlinekern._core.learner cimport LearnerCore

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
    cdef double* a                      # D: Omega^T x
    cdef double* cs                     # 2D: [cos a; sin a] (unscaled)
    cdef void project(self, const double* x, const int* idx, int nnz, const double* feat_scale) noexcept nogil
    cdef void features(self, const double* x, const int* idx, int nnz, const double* feat_scale) noexcept nogil


cdef class FeatureCore(LearnerCore):
    cdef public RandomFourierMap fmap
    cdef int F2                         # 2D: weights per output
    cdef object W_                      # (C, 2D) scaled weights, kept alive
    cdef double* W                      # true weights w_c = wscale * W[c]
    cdef double wscale
    cdef void weight_scores(self, double* out) noexcept nogil
    cdef void weight_step(self, int c, double a) noexcept nogil
    cdef void weight_shrink(self, double c) noexcept nogil
