# The compiled half of every learner: a per-example predict_row/step on a (data, indices, nnz)
# row, and the one training loop (LearnerCore.run) that drives step() over a whole matrix without
# the GIL.  The Python half (scikit-learn API) is onlinekern.base.OnlineLearner.

cdef enum Task:
    TASK_BINARY = 0        # y in {-1, +1}, one score
    TASK_MULTICLASS = 1    # y = class index 0..C-1, C scores
    TASK_REGRESSION = 2    # y real, one score

cdef class LearnerCore:
    cdef readonly int n_features
    cdef readonly int n_outputs          # 1, or C for multiclass
    cdef readonly int task
    cdef readonly long long n_seen       # examples stepped on so far
    cdef public int n_threads            # threads in use now (<= max_threads; see set_threads)
    cdef public int max_threads          # the most threads a pass may use
    cdef int failed                      # set by step() when it could not allocate
    cdef object scratch_                 # keeps the scratch buffers below alive
    cdef double* score_buf               # n_outputs
    cdef double* grad_buf                # n_outputs
    # Averaged predictions (the averaged Perceptron family): step() leaves in avg_buf the
    # correction that turns its pre-update score into the average of the hypotheses so far, and
    # run() records out + avg_buf (see KernelCore.set_averaged).
    cdef public bint averaged
    cdef double* avg_buf                 # n_outputs
    # Follow the leader between the averaged and the current hypothesis (average="leader"):
    # each example is predicted by the one with the smaller loss on the examples before it
    # (mistakes, or squared errors for regression; ties: the average); run() keeps both losses.
    cdef public bint avg_leader
    cdef public double loss_avg, loss_cur
    cdef double* alt_buf                 # n_outputs: the current hypothesis's score in run()
    cdef bint average_leads(self) noexcept nogil
    # Online target normalisation (regression, the product defaults): the core learns
    # (y - loc) / scale and predicts loc + scale * f, with loc and scale the running mean and
    # standard deviation of the targets seen so far (see LearnerCore.run).
    cdef public bint target_norm
    cdef public long long t_count
    cdef public double t_mean, t_m2

    # Score of one row with the current model into out[0:n_outputs].  Returns 0, or -1 on failure.
    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil
    # Learn from one example; out receives the PRE-update score (so the protocol never predicts
    # twice).  y: +-1 (binary), class index (multiclass) or target (regression).  0 or -1.
    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil
    # Whether a score was lost to a failed allocation (a query buffer that could not grow): run()
    # then raises MemoryError instead of reporting the resulting NaN score as a divergence.
    cdef bint out_of_memory(self) noexcept nogil
    # Number of support vectors, or of features/weights for random-feature learners.
    cdef Py_ssize_t model_size(self) noexcept nogil
    # Re-reads the cores the machine has free (onlinekern._core.threads) and resizes the team.
    cdef void follow_machine(self)

cdef bint is_mistake(int task, const double* f, double y, int C) noexcept nogil

# Raw access to the rows of a RowData (CSR, or dense with a shared arange index buffer); the
# RowData object must stay alive while the view is used.
cdef struct RowView:
    bint dense
    int d_in                            # dense: row length
    Py_ssize_t n_rows
    const double* data
    const int* indices
    const long long* indptr

cdef RowView row_view(object rows) except *

cdef extern from *:
    """
    #define OK_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 3)
    """
    void OK_PREFETCH(const void* p) noexcept nogil

cdef inline void prefetch_row(const RowView* v, Py_ssize_t i) noexcept nogil:
    """Ask for the cache lines of row i, up to 24 values (its offsets must be cached: see
    prefetch_offsets); a row may start anywhere in a line, so its last value is asked for too."""
    cdef Py_ssize_t a, b, k
    if v.dense:
        a = i * v.d_in
        b = a + v.d_in
    else:
        a = v.indptr[i]
        b = v.indptr[i + 1]
        if b > a:
            OK_PREFETCH(v.indices + a)
            OK_PREFETCH(v.indices + b - 1)
    if b - a > 24:
        b = a + 24
    k = a
    while k < b:
        OK_PREFETCH(v.data + k)
        k += 8
    if b > a:
        OK_PREFETCH(v.data + b - 1)

cdef inline void prefetch_offsets(const RowView* v, Py_ssize_t i) noexcept nogil:
    if not v.dense:
        OK_PREFETCH(v.indptr + i)

cdef inline void get_row(const RowView* v, Py_ssize_t i, const double** x, const int** idx, int* nnz) noexcept nogil:
    if v.dense:
        x[0] = v.data + i * v.d_in
        idx[0] = v.indices
        nnz[0] = v.d_in
    else:
        x[0] = v.data + v.indptr[i]
        idx[0] = v.indices + v.indptr[i]
        nnz[0] = <int>(v.indptr[i + 1] - v.indptr[i])
