from onlinekern._core.learner cimport LearnerCore

# Rows of SVs are processed in fixed blocks of this many; each block's partial score is summed in
# block order, so the result does not depend on how many threads computed the blocks.
cdef enum:
    SV_BLOCK = 128

cdef class SupportSet:
    cdef readonly int d                  # input dimension (SVs stored densely, d doubles each)
    cdef readonly int C                  # coefficients per SV (1, or classes)
    cdef readonly Py_ssize_t n           # number of SVs
    cdef readonly Py_ssize_t cap         # allocated slots
    cdef readonly Py_ssize_t budget      # hard cap on slots (-1: unbounded)
    cdef readonly double gamma           # k(x, x') = exp(-gamma ||x - x'||^2)
    cdef readonly double scale           # alpha_i = scale * coef_i  (O(1) uniform shrink)
    cdef public int n_threads
    cdef public Py_ssize_t par_threshold # use prange when n * (nnz + 8) exceeds this
    cdef double* X                       # cap * d (row-major: merges, set_dense, row())
    cdef double* XT                      # d * cap (feature-major mirror: the kernel row)
    cdef double* sqn                     # cap: ||x_i||^2
    cdef double* coef                    # cap * C (scaled coefficients)
    cdef long long* stamp                # cap: insertion time (FIFO order survives swap-removal)
    cdef long long clock
    cdef double* k                       # cap: kernel values of the last query
    cdef double* part                    # per-block partial scores

    cdef int reserve(self, Py_ssize_t cap) noexcept nogil
    cdef void _mirror(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t append(self, const double* x, const int* idx, int nnz, double xsq, const double* alpha) noexcept nogil
    cdef void remove(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t oldest(self) noexcept nogil
    cdef void shrink(self, double c) noexcept nogil
    cdef void add_coef(self, Py_ssize_t i, const double* delta) noexcept nogil
    cdef void set_alpha(self, Py_ssize_t i, int c, double value) noexcept nogil
    cdef void replace(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq, const double* alpha) noexcept nogil
    cdef void set_dense(self, Py_ssize_t i, const double* z, const double* alpha) noexcept nogil
    cdef double* row(self, Py_ssize_t i) noexcept nogil
    cdef double sqdist_x(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq) noexcept nogil
    cdef double kernel_x(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq) noexcept nogil
    cdef double alpha(self, Py_ssize_t i, int c) noexcept nogil
    cdef void kernel_row(self, const double* x, const int* idx, int nnz, double xsq) noexcept nogil
    cdef void predict(self, const double* x, const int* idx, int nnz, double xsq, double* out) noexcept nogil
    cdef double log_kernel_sv(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef double kernel_sv(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef void _blocks(self, const double* x, const int* idx, int nnz, double xsq, bint want_scores) noexcept nogil
    cdef void _block(self, Py_ssize_t b, const double* x, const int* idx, int nnz, double xsq, bint want_scores) noexcept nogil


cdef class KernelCore(LearnerCore):
    cdef public SupportSet sv
    cdef readonly double gamma
    cdef double xsq                      # ||x||^2 of the row being processed
    cdef void kernel_scores(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil

cdef double row_sqnorm(const double* x, int nnz) noexcept nogil

cdef inline double sv_alpha(SupportSet sv, Py_ssize_t i, int c) noexcept nogil:
    """alpha_ic = scale * coef_ic, inlined into the learners' loops (SupportSet.alpha is the
    same value through a method call the C compiler cannot inline across modules)."""
    return sv.scale * sv.coef[i * sv.C + c]

cdef inline void sv_set_alpha(SupportSet sv, Py_ssize_t i, int c, double value) noexcept nogil:
    """alpha_ic <- value (SupportSet.set_alpha, inlined)."""
    sv.coef[i * sv.C + c] = value / sv.scale
