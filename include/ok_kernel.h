/*
 * ok_kernel.h -- squared distances from one query to a block of support vectors stored
 * feature-major (XT[j * B + i] = x_i[j], B = the store's capacity).
 *
 * A sparse query with nnz non-zeros touches nnz contiguous rows of XT and runs across SVs in the
 * vector lanes, instead of gathering nnz scattered values per SV (4-5x faster at B = 1000 on
 * ijcnn1).  Per SV the operations and their order are fixed -- over the query's non-zeros in
 * index order: p += s*s; t = x_k - s; d += t*t; then d += sqn_i - p if positive -- so the result
 * is exact on duplicates (k(x, x) = 1), identical at every SIMD level (no FMA, one chain per SV)
 * and identical to the scalar SupportSet.sqdist_x of a single SV.  A dense query (nnz = d) sums
 * (x_k - s)^2 in index order.
 */
#ifndef OK_KERNEL_H
#define OK_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include "ok_vmath.h"

/* Squared distances ||x_i - x||^2 of the SVs lo..hi-1 to one query, with the SVs stored
 * feature-major (XT[j * B + i] = x_i[j]).  Per SV the operations and their order are those of
 * SupportSet.sqdist_x's sparse path (p += s*s; t = x_k - s; d += t*t over the query's
 * non-zeros in index order; then d += sqn_i - p if positive), so a sparse query gets the same
 * bits; a dense query (nnz = d) sums (x_k - s)^2 in index order.  The vector versions run the
 * same sequence in each lane, accumulators in registers (4 independent chains), without FMA
 * (-ffp-contract=off), so every SIMD level gives the same bits. */
#define OK_FM_COL(DENSE, kk) (XT + (ptrdiff_t)((DENSE) ? (kk) : idx[kk]) * B)
#define OK_FM_SCALAR(DENSE)                                                                    \
    for (; i < hi; i++) {                                                                   \
        double d_ = 0.0, p_ = 0.0;                                                          \
        for (int kk = 0; kk < nnz; kk++) {                                                  \
            double s = OK_FM_COL(DENSE, kk)[i];                                                       \
            if (!DENSE) p_ += s * s;                                                        \
            double t = x[kk] - s;                                                           \
            d_ += t * t;                                                                    \
        }                                                                                   \
        if (!DENSE) { double q = sqn[i] - p_; if (q > 0.0) d_ += q; }                       \
        dist[i] = d_;                                                                       \
    }
static void ok_sqdist_fm_base(const double *XT, ptrdiff_t B, ptrdiff_t lo, ptrdiff_t hi,
                           const double *x, const int *idx, int nnz, int dense, const double *sqn, double *dist) {
    ptrdiff_t i = lo;
    if (dense) { OK_FM_SCALAR(1) } else { OK_FM_SCALAR(0) }
}
#ifdef OK_X86
#define OK_FM_VEC(DENSE, V, W, LOAD, STORE, SET1, ZERO, ADD, SUB, MUL, FIX)                    \
    for (; i + 4 * W <= hi; i += 4 * W) {                                                   \
        V d0 = ZERO(), d1 = ZERO(), d2 = ZERO(), d3 = ZERO();                               \
        V p0 = ZERO(), p1 = ZERO(), p2 = ZERO(), p3 = ZERO();                               \
        for (int kk = 0; kk < nnz; kk++) {                                                  \
            const double *c = OK_FM_COL(DENSE, kk) + i;                                               \
            V xk = SET1(x[kk]);                                                             \
            V s0 = LOAD(c), s1 = LOAD(c + W), s2 = LOAD(c + 2 * W), s3 = LOAD(c + 3 * W);   \
            if (!DENSE) {                                                                   \
                p0 = ADD(p0, MUL(s0, s0)); p1 = ADD(p1, MUL(s1, s1));                       \
                p2 = ADD(p2, MUL(s2, s2)); p3 = ADD(p3, MUL(s3, s3));                       \
            }                                                                               \
            s0 = SUB(xk, s0); s1 = SUB(xk, s1); s2 = SUB(xk, s2); s3 = SUB(xk, s3);         \
            d0 = ADD(d0, MUL(s0, s0)); d1 = ADD(d1, MUL(s1, s1));                           \
            d2 = ADD(d2, MUL(s2, s2)); d3 = ADD(d3, MUL(s3, s3));                           \
        }                                                                                   \
        if (!DENSE) {                                                                       \
            d0 = FIX(d0, SUB(LOAD(sqn + i), p0)); d1 = FIX(d1, SUB(LOAD(sqn + i + W), p1)); \
            d2 = FIX(d2, SUB(LOAD(sqn + i + 2 * W), p2));                                   \
            d3 = FIX(d3, SUB(LOAD(sqn + i + 3 * W), p3));                                   \
        }                                                                                   \
        STORE(dist + i, d0); STORE(dist + i + W, d1);                                       \
        STORE(dist + i + 2 * W, d2); STORE(dist + i + 3 * W, d3);                           \
    }                                                                                       \
    OK_FM_SCALAR(DENSE)
/* d + (q if q > 0 else 0): adding +0.0 leaves d (>= 0) unchanged, as the scalar branch does */
__attribute__((target("avx2,fma"))) static inline __m256d ok_fm_fix256(__m256d d, __m256d q) {
    return _mm256_add_pd(d, _mm256_and_pd(q, _mm256_cmp_pd(q, _mm256_setzero_pd(), _CMP_GT_OQ)));
}
__attribute__((target("avx512f"))) static inline __m512d ok_fm_fix512(__m512d d, __m512d q) {
    return _mm512_mask_add_pd(d, _mm512_cmp_pd_mask(q, _mm512_setzero_pd(), _CMP_GT_OQ), d, q);
}
__attribute__((target("avx2,fma"))) static void ok_sqdist_fm_avx2(const double *XT, ptrdiff_t B,
        ptrdiff_t lo, ptrdiff_t hi, const double *x, const int *idx, int nnz, int dense, const double *sqn, double *dist) {
    ptrdiff_t i = lo;
    if (dense) {
        OK_FM_VEC(1, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, _mm256_setzero_pd,
               _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, ok_fm_fix256)
    } else {
        OK_FM_VEC(0, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, _mm256_setzero_pd,
               _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd, ok_fm_fix256)
    }
}
__attribute__((target("avx512f"))) static void ok_sqdist_fm_avx512(const double *XT, ptrdiff_t B,
        ptrdiff_t lo, ptrdiff_t hi, const double *x, const int *idx, int nnz, int dense, const double *sqn, double *dist) {
    ptrdiff_t i = lo;
    if (dense) {
        OK_FM_VEC(1, __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, _mm512_setzero_pd,
               _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, ok_fm_fix512)
    } else {
        OK_FM_VEC(0, __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, _mm512_setzero_pd,
               _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, ok_fm_fix512)
    }
}
#endif
/* dense: x holds all nnz = d features and idx is not read */
static inline void ok_sqdist_fm(const double *XT, ptrdiff_t B, ptrdiff_t lo, ptrdiff_t hi, const double *x,
                             const int *idx, int nnz, int dense, const double *sqn, double *dist) {
#ifdef OK_X86
    int level = ok_simd_level();
    if (level == 2) { ok_sqdist_fm_avx512(XT, B, lo, hi, x, idx, nnz, dense, sqn, dist); return; }
    if (level == 1) { ok_sqdist_fm_avx2(XT, B, lo, hi, x, idx, nnz, dense, sqn, dist); return; }
#endif
    ok_sqdist_fm_base(XT, B, lo, hi, x, idx, nnz, dense, sqn, dist);
}

/* Squared distances of the SVs lo..hi-1 of a sparse slab (SV i's nonzeros are val[off[i] ..
 * off[i] + nz[i]) at compact columns col[...]) to one query scattered over the compact columns
 * (q[c] = the query's value at compact column c, 0 where it has none), with ||x||^2 = xsq.  Per SV,
 * over its stored nonzeros in order: v = q[c]; p += v*v; t = v - s; d += t*t; then
 * d += xsq - p if positive (the query's mass outside the SV's support).  The exact-difference
 * form of the dense path with the roles of query and SV swapped: no cancellation, a duplicate of
 * the query stored in the query's order gives p == xsq and d == 0 exactly.  Scalar (the gathers
 * dominate); per SV a fixed order, so the value does not depend on the threads.
 *
 * qb (may be NULL): a bitmap of the columns where q may be nonzero (bit c of word c / 64).  An SV's
 * entry at a column whose bit is clear reads 0.0 -- exactly what q holds there, so the same bits --
 * from the bitmap (1 bit a column: 128 KB at 10^6 columns, in the core's cache) instead of from q
 * (8 bytes a column: 8 MB, in memory): on text the query has ~10^2 of ~10^6 columns, and the SVs'
 * gathers are what a kernel row costs. */
static const double ok_qzero_ = 0.0;
#define OK_QBIT(qb, c) (((qb)[(unsigned)(c) >> 6] >> ((unsigned)(c) & 63u)) & 1u)
/* The body of ok_sqdist_slab for one way of reading q (GET(c): the query's value at compact
 * column c), one SV after another.  (Four SVs side by side, to overlap their chains of additions,
 * measured 10 % slower on text at 2^16 columns: the gathers, not the additions, set the pace.) */
#define OK_SLAB_BODY(GET)                                                                         \
    for (ptrdiff_t i = lo; i < hi; i++) {                                                         \
        const double *v_ = val + off[i]; const int *c_ = col + off[i];                            \
        double d_ = 0.0, p_ = 0.0;                                                                \
        for (int k = 0; k < nz[i]; k++) {                                                         \
            double x_ = GET(c_[k]); p_ += x_ * x_; double t = x_ - v_[k]; d_ += t * t;            \
        }                                                                                         \
        double r = xsq - p_;                                                                      \
        if (r > 0.0) d_ += r;                                                                     \
        dist[i] = d_;                                                                             \
    }

/* q[c] through the bitmap, branch-free: the address of q[c] or of a zero, by mask (text queries
 * share their frequent words with most SVs, so a branch would often be mispredicted) */
static inline double ok_qget_bits_(const double *q, const uint64_t *qb, int c) {
    uintptr_t m = (uintptr_t)0 - (uintptr_t)OK_QBIT(qb, c);
    return *(const double *)(((uintptr_t)(q + c) & m) | ((uintptr_t)&ok_qzero_ & ~m));
}
#define OK_QGET_PLAIN(c) (q[c])
#define OK_QGET_BITS(c) ok_qget_bits_(q, qb, c)
static inline void ok_sqdist_slab_plain_(const long long *off, const int *nz, const double *val, const int *col,
                                         ptrdiff_t lo, ptrdiff_t hi, const double *q, double xsq, double *dist) {
    OK_SLAB_BODY(OK_QGET_PLAIN)
}
static inline void ok_sqdist_slab_bits_(const long long *off, const int *nz, const double *val, const int *col,
                                        ptrdiff_t lo, ptrdiff_t hi, const double *q, const uint64_t *qb,
                                        double xsq, double *dist) {
    OK_SLAB_BODY(OK_QGET_BITS)
}
static inline void ok_sqdist_slab(const long long *off, const int *nz, const double *val, const int *col,
                                  ptrdiff_t lo, ptrdiff_t hi, const double *q, const uint64_t *qb,
                                  double xsq, double *dist) {
    if (qb == NULL) ok_sqdist_slab_plain_(off, nz, val, col, lo, hi, q, xsq, dist);
    else ok_sqdist_slab_bits_(off, nz, val, col, lo, hi, q, qb, xsq, dist);
}

/* ok_sqdist_slab with "heavy" SVs (mir[i] != NULL: SV i also held as a dense row over the compact
 * columns, see SupportSet): those are summed over the query's entries instead of their own --
 * (xv, xc, xn) the query's values and compact columns (xc < 0: a column no SV has) -- as the dense
 * path sums a sparse query: t = x - s, d += t*t, p += s*s on the query's support, then the SV's
 * mass outside it, sqn[i] - p, if positive.  O(query nonzeros) instead of O(SV nonzeros): a merged
 * "sink" that holds every column a text stream has shown costs what a fresh SV costs.  The row
 * holds SV i divided by rsc[i] (1 but for BSGD's lazily scaled merges), so s = rsc[i] * row[c].
 * Other SVs as ok_sqdist_slab; a fixed order per SV, so the value does not depend on the threads. */
static inline void ok_sqdist_slab_mir(const long long *off, const int *nz, const double *val, const int *col,
                                      double *const *mir, const double *rsc, const double *sqn,
                                      ptrdiff_t lo, ptrdiff_t hi,
                                      const double *q, const uint64_t *qb, double xsq, const double *xv,
                                      const int *xc, int xn, double *dist) {
    for (ptrdiff_t i = lo; i < hi; i++) {
        const double *m_ = mir[i];
        if (m_ == NULL) {                  /* a run of SVs without a row */
            ptrdiff_t j = i + 1;
            while (j < hi && mir[j] == NULL) j++;
            ok_sqdist_slab(off, nz, val, col, i, j, q, qb, xsq, dist);
            i = j - 1;
            continue;
        }
        double d_ = 0.0, p_ = 0.0, r_ = rsc[i];
        for (int k = 0; k < xn; k++) {
            double s = xc[k] >= 0 ? r_ * m_[xc[k]] : 0.0;
            p_ += s * s;
            double t = xv[k] - s;
            d_ += t * t;
        }
        double r = sqn[i] - p_;
        if (r > 0.0) d_ += r;
        dist[i] = d_;
    }
}

#endif /* OK_KERNEL_H */
