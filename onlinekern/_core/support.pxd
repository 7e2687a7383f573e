from libc.stdint cimport uint64_t

from onlinekern._core.learner cimport LearnerCore
from onlinekern._core.columns cimport ColumnMap

# Vectorised scans for the learners' O(S) budget-maintenance passes.  Each gives exactly the
# result of the sequential loop it replaces (a minimum and a comparison are exact, so splitting the
# scan into lanes changes no bit, and NaN and signed zeros behave as in the scan), so results do not
# depend on the SIMD level.  The bodies use GCC vector extensions, compiled per level with target
# attributes and chosen at run time like ok_vmath.h's kernels: Cython's loops over these arrays
# stay scalar (no aliasing information, a minimum with a data-dependent index), and gcc cannot
# vectorise a floating-point minimum reduction without -ffast-math.  OKSV_MULTI(ret, name,
# (params), (args), body...) is ok_vmath.h's OK_MULTI: name() and its three compiled versions;
# learners use it for their own fused passes too.
cdef extern from *:
    """
    #include "ok_vmath.h"
    #ifndef OK_SUPPORT_SCANS
    #define OK_SUPPORT_SCANS
    #include <limits.h>
    typedef double okv8d __attribute__((vector_size(64)));
    typedef long long okv8l __attribute__((vector_size(64)));
    typedef double okv4d __attribute__((vector_size(32)));
    typedef long long okv4l __attribute__((vector_size(32)));
    typedef double okv2d __attribute__((vector_size(16)));
    typedef long long okv2l __attribute__((vector_size(16)));
    #define OKV_LOADT OK_VLOAD                     /* ok_vmath.h */
    #define OKV_SELT(VL, mask, a, b) (((mask) & (VL)(a)) | (~(mask) & (VL)(b)))  /* mask ? a : b */
    #define OKSV_MULTI OK_MULTI                     /* ok_vmath.h */

    /* OKSV_MULTI_W(ret, name, (params), (args), BODY): BODY(VD, VL, W) is a macro written for
     * vectors of W doubles (VD) and W 64-bit integers (VL); each level gets it at its own
     * register width (W = 8 at AVX-512, 4 at AVX2, 2 at SSE2) through ok_vmath.h's OK_MULTI_W.
     * GCC lowers a generic vector wider than the target's registers through the stack, which
     * made the 8-lane bodies several times slower at AVX2 than plain loops.  The bodies below
     * give results that do not depend on W. */
    #define OKSV_MULTI_W(RET, NAME, PARAMS, ARGS, BODY)                                          \
        OK_MULTI_W(RET, NAME, PARAMS, ARGS, BODY, (okv2d, okv2l, 2), (okv4d, okv4l, 4), (okv8d, okv8l, 8))

    /* Any lane of a mask set (shuffle-or steps instead of lane extractions). */
    #if defined(__clang__) || __GNUC__ >= 12
    #define OKV_SWAP(t, a, b, c, d, e, f, g, h) __builtin_shufflevector(t, t, a, b, c, d, e, f, g, h)
    #define OKV_SWAP4(t, a, b, c, d) __builtin_shufflevector(t, t, a, b, c, d)
    #else
    #define OKV_SWAP(t, a, b, c, d, e, f, g, h) __builtin_shuffle(t, (okv8l){a, b, c, d, e, f, g, h})
    #define OKV_SWAP4(t, a, b, c, d) __builtin_shuffle(t, (okv4l){a, b, c, d})
    #endif
    #define OKV_ANY_8(m) ({ okv8l t_ = (m);                                                      \
        t_ |= OKV_SWAP(t_, 4, 5, 6, 7, 0, 1, 2, 3);                                              \
        t_ |= OKV_SWAP(t_, 2, 3, 0, 1, 6, 7, 4, 5);                                              \
        t_ |= OKV_SWAP(t_, 1, 0, 3, 2, 5, 4, 7, 6);                                              \
        t_[0] != 0; })
    #define OKV_ANY_4(m) ({ okv4l t_ = (m);                                                      \
        t_ |= OKV_SWAP4(t_, 2, 3, 0, 1);                                                         \
        t_ |= OKV_SWAP4(t_, 1, 0, 3, 2);                                                         \
        t_[0] != 0; })
    #define OKV_ANY_2(m) ({ okv2l t_ = (m); (t_[0] | t_[1]) != 0; })
    #define OKV_ANYW(W, m) OKV_ANY_##W(m)

    /* The minimum of v[0:n] (n >= 1) as the scan `m = v[0]; m = v[i] < m ? v[i] : m` finds it:
     * NaNs are skipped, unless v[0] is one (then the result is v[0]).  Four independent sets of
     * W lanes, so the compare-and-keep chains overlap.  (Which of two equal minima -0 and +0 is
     * returned may depend on W; callers look the value up with ==, which does not.) */
    #define OK_SCAN_MIN_BODY(VD, VL, W)                                                          \
        VD m0, m1, m2, m3, q;                                                                    \
        Py_ssize_t i = 0, b_, nb = n / (4 * W);                                                  \
        double r;                                                                                \
        int k;                                                                                   \
        for (k = 0; k < W; k++) m0[k] = v[0];                                                    \
        m1 = m2 = m3 = m0;                                                                       \
        for (b_ = 0; b_ < nb; b_++, i += 4 * W) {                                                \
            q = OKV_LOADT(VD, v + i);         m0 = (VD)OKV_SELT(VL, q < m0, q, m0);              \
            q = OKV_LOADT(VD, v + i + W);     m1 = (VD)OKV_SELT(VL, q < m1, q, m1);              \
            q = OKV_LOADT(VD, v + i + 2 * W); m2 = (VD)OKV_SELT(VL, q < m2, q, m2);              \
            q = OKV_LOADT(VD, v + i + 3 * W); m3 = (VD)OKV_SELT(VL, q < m3, q, m3);              \
        }                                                                                        \
        for (b_ = 0; b_ < (n - i) / W; b_++) {                                                   \
            q = OKV_LOADT(VD, v + i + W * b_);                                                   \
            m0 = (VD)OKV_SELT(VL, q < m0, q, m0);                                                \
        }                                                                                        \
        i += W * b_;                                                                             \
        m0 = (VD)OKV_SELT(VL, m1 < m0, m1, m0);                                                  \
        m2 = (VD)OKV_SELT(VL, m3 < m2, m3, m2);                                                  \
        m0 = (VD)OKV_SELT(VL, m2 < m0, m2, m0);                                                  \
        r = m0[0];                                                                               \
        for (k = 1; k < W; k++) r = m0[k] < r ? m0[k] : r;                                       \
        for (; i < n; i++) r = v[i] < r ? v[i] : r;                                              \
        return r;
    OKSV_MULTI_W(double, ok_scan_min, (const double *restrict v, Py_ssize_t n), (v, n), OK_SCAN_MIN_BODY)

    /* The first i < n with `v[i] OP x` (-1: none): 4W elements per test of the OR of their
     * masks, then the scalar scan from the group that holds the first match. */
    #define OKV_FIRST_BODY(VT, VL, W, OP)                                                        \
        VT xv;                                                                                   \
        Py_ssize_t i = 0, b_, nb = n / (4 * W);                                                  \
        int k;                                                                                   \
        for (k = 0; k < W; k++) xv[k] = x;                                                       \
        for (b_ = 0; b_ < nb; b_++, i += 4 * W)                                                  \
            if (OKV_ANYW(W, (OKV_LOADT(VT, v + i) OP xv) | (OKV_LOADT(VT, v + i + W) OP xv)      \
                         | (OKV_LOADT(VT, v + i + 2 * W) OP xv) | (OKV_LOADT(VT, v + i + 3 * W) OP xv))) \
                break;                                                                           \
        for (; i < n; i++)                                                                       \
            if (v[i] OP x) return i;                                                             \
        return -1;
    #define OK_FIRST_EQ_BODY(VD, VL, W) OKV_FIRST_BODY(VD, VL, W, ==)
    #define OK_FIRST_GT_BODY(VD, VL, W) OKV_FIRST_BODY(VD, VL, W, >)
    #define OK_FIRST_GE_BODY(VD, VL, W) OKV_FIRST_BODY(VD, VL, W, >=)
    #define OK_FIND_I64_BODY(VD, VL, W) OKV_FIRST_BODY(VL, VL, W, ==)
    OKSV_MULTI_W(Py_ssize_t, ok_first_eq, (const double *restrict v, Py_ssize_t n, double x), (v, n, x),
                 OK_FIRST_EQ_BODY)
    OKSV_MULTI_W(Py_ssize_t, ok_first_gt, (const double *restrict v, Py_ssize_t n, double x), (v, n, x),
                 OK_FIRST_GT_BODY)
    OKSV_MULTI_W(Py_ssize_t, ok_first_ge, (const double *restrict v, Py_ssize_t n, double x), (v, n, x),
                 OK_FIRST_GE_BODY)
    OKSV_MULTI(void, ok_coef_norms, (const double *restrict coef, double scale, int C, Py_ssize_t n, int root,
                                     double *restrict out), (coef, scale, C, n, root, out),
        double s, a;
        if (C == 1) {
            for (Py_ssize_t i = 0; i < n; i++) {
                a = scale * coef[i];
                s = 0.0 + a * a;
                out[i] = root ? sqrt(s) : s;
            }
            return;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            s = 0.0;
            for (int c = 0; c < C; c++) {
                a = scale * coef[i * C + c];
                s = s + a * a;
            }
            out[i] = root ? sqrt(s) : s;
        })
    OKSV_MULTI_W(Py_ssize_t, ok_find_i64, (const long long *restrict v, Py_ssize_t n, long long x), (v, n, x),
                 OK_FIND_I64_BODY)
    #endif
    """
    double ok_scan_min(const double* v, Py_ssize_t n) noexcept nogil
    Py_ssize_t ok_first_eq(const double* v, Py_ssize_t n, double x) noexcept nogil
    Py_ssize_t ok_first_gt(const double* v, Py_ssize_t n, double x) noexcept nogil
    Py_ssize_t ok_first_ge(const double* v, Py_ssize_t n, double x) noexcept nogil
    Py_ssize_t ok_find_i64(const long long* v, Py_ssize_t n, long long x) noexcept nogil
    void ok_coef_norms(const double* coef, double scale, int C, Py_ssize_t n, int root, double* out) noexcept nogil

# Rows of SVs are processed in fixed blocks of this many; each block's partial score is summed in
# block order, so the result does not depend on how many threads computed the blocks.
cdef enum:
    SV_BLOCK = 128

# Storage modes of a SupportSet (see the module docstring of support.pyx).
cdef enum:
    STORE_DENSE = 0      # d doubles per SV over the original columns (narrow data: d <= WIDE_D)
    STORE_COMPACT = 1    # w doubles per SV over the compact columns of ``cmap`` (+ a zero column)
    STORE_SLAB = 2       # CSR-like pool of (value, compact column) per stored nonzero

cdef class SupportSet:
    cdef readonly int d                  # input dimension (original columns)
    cdef readonly int C                  # coefficients per SV (1, or classes)
    cdef readonly Py_ssize_t n           # number of SVs
    cdef readonly Py_ssize_t cap         # allocated slots
    cdef readonly Py_ssize_t budget      # hard cap on slots (-1: unbounded)
    cdef readonly double gamma           # k(x, x') = exp(-gamma ||x - x'||^2)
    cdef readonly double scale           # alpha_i = scale * coef_i  (O(1) uniform shrink)
    cdef public int n_threads
    cdef public Py_ssize_t par_threshold # use prange when n * (nnz + 8) exceeds this
    cdef readonly int mode               # STORE_DENSE, STORE_COMPACT or STORE_SLAB
    cdef readonly int w                  # dense/compact: doubles per stored row (d, or the compact width)
    cdef readonly ColumnMap cmap         # compact/slab: the columns of the stored SVs (None: dense)
    cdef double* X                       # dense/compact: cap * w (row-major: merges, row())
    cdef double* XT                      # dense/compact: w * cap (feature-major mirror: the kernel row)
    cdef double* sqn                     # cap: ||x_i||^2
    cdef double* coef                    # cap * C (scaled coefficients)
    cdef long long* stamp                # cap: insertion time (FIFO order survives swap-removal)
    cdef long long clock
    cdef double* k                       # cap: kernel values of the last query
    # Averaged predictions (track on): gam[i, c] = sum over the changes delta of alpha_ic of
    # delta * (the example count when it was made), so that the average of the hypotheses used
    # for examples 1..t is f_t - (1/t) sum_i gam_i k_i.  Every coefficient change through the
    # methods below keeps it; ``now`` is the current example count (set by KernelCore).  The sum
    # runs over the SVs present, so it is the average only while no SV has left the set: the
    # first removal (remove, replace of a present SV, set_dense) switches tracking off for good
    # and the correction is 0 from then on (the prediction is the current hypothesis).
    cdef double* gam                     # cap * C (true units)
    cdef public bint track
    cdef public long long now
    cdef double* part                    # per-block partial scores
    # wide data (compact and slab modes)
    cdef int* nz                         # cap: stored nonzeros of slot i
    cdef long long nnz_total             # sum of nz over the SVs present
    cdef long long* off                  # slab: cap offsets into the pool
    cdef int* rcap                       # slab: entries slot i owns from off[i] (>= nz[i])
    # slab, BSGD's merges into a heavy SV (_absorb): while lazy[i], SV i is rsc[i] * its dense row,
    # its entries' values are stale (their columns are its support) until _settle
    cdef double* rsc
    cdef char* lazy
    cdef double* pval                    # slab pool: values
    cdef int* pcol                       # slab pool: compact columns
    cdef long long pused, pcap, pholes   # slab pool: entries handed out, allocated, dead
    cdef long long pmoves                # slab pool: rewritten SVs that left their room (total)
    cdef long long pcompactions          # slab pool: compactions (total)
    cdef Py_ssize_t recompact_at         # slab: drop the columns no SV holds once cmap has this many
    cdef long long recompactions         # slab: times it did (total)
    cdef int* qidx                       # compact: the query's compact columns (w - 1: none)
    cdef Py_ssize_t qcap
    cdef double qsq                      # slab: ||x||^2 of the loaded query
    cdef double* qbuf                    # slab: the loaded query scattered over compact columns
    cdef double* sbuf                    # slab: a scattered SV (SV-SV kernels, merges)
    cdef double* tbuf                    # slab: second scatter buffer (merges)
    cdef Py_ssize_t scap                 # length of qbuf / sbuf / tbuf
    # slab: one bit per compact column, set where qbuf / sbuf / tbuf may be nonzero (the gathers
    # of a kernel row read the bit, 1/64 of the bytes, and q only where it is set)
    cdef uint64_t* qbits
    cdef uint64_t* sbits
    cdef uint64_t* tbits
    cdef const uint64_t* svq_bits        # begin_sv_query: sbits, or NULL when SV m has a dense row
    cdef Py_ssize_t sq_slot              # slab: the slot scattered in sbuf (-1: none)
    cdef double* ebuf                    # entries(): values (also the merge's scratch)
    cdef int* eidx                       # entries(): original columns (dense mode: 0..d-1)
    cdef Py_ssize_t ecap
    cdef public bint failed              # a query buffer could not grow (values are NaN)
    # slab: "heavy" SVs (at least heavy_nnz entries) are also held as a dense row over the compact
    # columns (scap doubles), so a kernel value sums over the query's entries, not the SV's
    cdef double** mir                    # cap: slot i's dense row, or NULL
    cdef double** mpool                  # zeroed spare rows (at most MIR_POOL)
    cdef int nmir, npool                 # rows in use, spare rows
    cdef long long mir_bytes             # this set's bound on its dense rows (heavy_bytes / share)
    cdef const double* svq               # begin_sv_query: SV m scattered (sbuf or its dense row)
    cdef uint64_t* _bits_of(self, const double* buf) noexcept nogil
    cdef const uint64_t* _gather_bits(self, const uint64_t* bits) noexcept nogil

    cdef int reserve(self, Py_ssize_t cap) noexcept nogil
    cdef void _mirror(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t append(self, const double* x, const int* idx, int nnz, double xsq, const double* alpha) noexcept nogil
    cdef void remove(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t oldest(self) noexcept nogil
    cdef void shrink(self, double c) noexcept nogil
    cdef void add_coef(self, Py_ssize_t i, const double* delta) noexcept nogil
    cdef void set_alpha(self, Py_ssize_t i, int c, double value) noexcept nogil
    cdef int replace(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq, const double* alpha) noexcept nogil
    cdef void set_dense(self, Py_ssize_t i, const double* z, const double* alpha) noexcept nogil
    cdef int merge_into(self, Py_ssize_t m, Py_ssize_t j, double h, const double* alpha) noexcept nogil
    cdef int _absorb(self, Py_ssize_t s, Py_ssize_t l, double ws, double wl) noexcept nogil
    cdef int _slab_move(self, Py_ssize_t i, long long room) noexcept nogil
    cdef void _settle(self, Py_ssize_t i) noexcept nogil
    cdef int _recompact(self) noexcept nogil
    cdef double* row(self, Py_ssize_t i) noexcept nogil
    cdef int entries(self, Py_ssize_t i, const double** x, const int** idx) noexcept nogil
    cdef int sv_nz(self, Py_ssize_t i, const double** vals, const int** cols) noexcept nogil
    cdef int col_of(self, int c) noexcept nogil
    cdef double value_at(self, Py_ssize_t i, int col) noexcept nogil
    cdef double sqdist_x(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq) noexcept nogil
    cdef double kernel_x(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq) noexcept nogil
    cdef double alpha(self, Py_ssize_t i, int c) noexcept nogil
    cdef void kernel_row(self, const double* x, const int* idx, int nnz, double xsq) noexcept nogil
    cdef void predict(self, const double* x, const int* idx, int nnz, double xsq, double* out) noexcept nogil
    cdef void linear_row(self, const double* x, const int* idx, int nnz) noexcept nogil
    cdef void average_correction(self, long long t, double* out) noexcept nogil
    cdef void track_change(self, Py_ssize_t i, int c, double delta) noexcept nogil
    cdef double log_kernel_sv(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef double kernel_sv(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef void begin_sv_query(self, Py_ssize_t m) noexcept nogil
    cdef void log_kernels_sv(self, Py_ssize_t m, Py_ssize_t a, Py_ssize_t b, double* out) noexcept nogil
    cdef void end_sv_query(self) noexcept nogil
    cdef void _set_coefs(self, Py_ssize_t i, const double* alpha) noexcept nogil
    cdef void _dists(self, Py_ssize_t lo, Py_ssize_t hi, const double* x, const int* idx, int nnz, double* out) noexcept nogil
    cdef int _load(self, const double* x, const int* idx, int nnz) noexcept nogil
    cdef void _unload(self, const int* idx, int nnz) noexcept nogil
    cdef int _store(self, Py_ssize_t i, const double* x, const int* idx, int nnz) noexcept nogil
    cdef int _slab_put(self, Py_ssize_t i, const double* vals, const int* cols, int m) noexcept nogil
    cdef int _slab_store(self, Py_ssize_t i, const double* vals, const int* cols, int m) noexcept nogil
    cdef void _swap_room(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef int _slab_compact(self, long long need) noexcept nogil
    cdef int _widen(self, Py_ssize_t need) noexcept nogil
    cdef int _to_slab(self) noexcept nogil
    cdef int _scratch(self, Py_ssize_t ncols, Py_ssize_t nent) noexcept nogil
    cdef void _scatter(self, Py_ssize_t i, double* buf) noexcept nogil
    cdef void _unscatter(self, Py_ssize_t i, double* buf) noexcept nogil
    cdef const double* _dense_of(self, Py_ssize_t i, double* buf) noexcept nogil
    cdef void _undense(self, Py_ssize_t i, double* buf) noexcept nogil
    cdef void _mir_clear(self, Py_ssize_t i) noexcept nogil
    cdef void _mir_drop(self, Py_ssize_t i) noexcept nogil
    cdef void _mir_fit(self, Py_ssize_t i) noexcept nogil
    cdef int _mir_grow(self, Py_ssize_t nc) noexcept nogil
    cdef void _blocks(self, const double* x, const int* idx, int nnz, double xsq, bint want_scores) noexcept nogil
    cdef void _block(self, Py_ssize_t b, const double* x, const int* idx, int nnz, double xsq, bint want_scores) noexcept nogil


cdef class KernelCore(LearnerCore):
    cdef public SupportSet sv
    cdef readonly double gamma
    cdef double xsq                      # ||x||^2 of the row being processed
    cdef void kernel_scores(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil
    cdef bint out_of_memory(self) noexcept nogil

cdef double row_sqnorm(const double* x, int nnz) noexcept nogil

cdef inline double sv_alpha(SupportSet sv, Py_ssize_t i, int c) noexcept nogil:
    """alpha_ic = scale * coef_ic, inlined into the learners' loops (SupportSet.alpha is the
    same value through a method call the C compiler cannot inline across modules)."""
    return sv.scale * sv.coef[i * sv.C + c]

cdef inline void sv_set_alpha(SupportSet sv, Py_ssize_t i, int c, double value) noexcept nogil:
    """alpha_ic <- value (SupportSet.set_alpha, inlined)."""
    sv.coef[i * sv.C + c] = value / sv.scale
