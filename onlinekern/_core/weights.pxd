# A (C, F) weight matrix with one global scale: w_c = scale * W[c].  Shrinking every weight
# (1 - eta*lambda, 1 - 1/t) is O(1); the scale is folded back when it underflows.
cdef class ScaledWeights:
    cdef readonly int C
    cdef readonly int F
    cdef readonly double scale
    cdef object W_                       # numpy (C, F), kept alive
    cdef double* W
    cdef void scores(self, const double* z, double zscale, double* out) noexcept nogil
    cdef void axpy(self, int c, double a, const double* z) noexcept nogil
    cdef void shrink(self, double c) noexcept nogil
