# Declarations of include/ok_vmath.h: dispatched dot/axpy and vectorised cos/sin/exp.
cdef extern from "ok_vmath.h" nogil:
    int ok_simd_level()
    int ok_vector_math()
    double ok_dot(const double* a, const double* b, int n)
    double ok_sqdist(const double* a, const double* b, int n)
    void ok_axpy(int n, double alpha, const double* x, double* y)
    void ok_project(int D, int m, const double* v, const int* idx, const double* E, double* a)
    void ok_vcossin(const double* a, double* c, double* s, int n)
    # the opt-in float32 path of the random features (tiled E, see ok_vmath.h)
    enum: OK_F32_TILE
    void ok_project32(long Dp, int d, int m, const float* v, const int* idx, const float* Et, float* a, int init)
    void ok_vcossin32(const float* a, double* c, double* s, int n)
    void ok_vexp(const double* a, double* out, int n)
