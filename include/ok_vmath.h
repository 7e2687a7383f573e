/*
 * ok_vmath.h -- the vectorised inner kernels of onlinekern, dispatched once per process.
 *
 * Random-feature learners spend most of their time in cos/sin and in long dot products and
 * axpys (FOGD at D = 1000: 1000 sin/cos pairs, ~13k multiply-adds per ijcnn1 example); kernel
 * learners spend theirs in exp.  A portable build targets baseline x86-64 (SSE2), which leaves
 * most of the machine idle, so the hot kernels here are compiled several times with target
 * attributes and the widest one the CPU supports is chosen at run time:
 *
 *   level 2: AVX-512F       level 1: AVX2 + FMA       level 0: baseline (SSE2 / scalar)
 *
 * ONLINEKERN_SIMD=scalar|avx2|avx512 in the environment caps the level.
 *
 * Reproducibility.  dot() keeps 16 independent partial sums in a fixed lane order and combines
 * them in a fixed tree, and the build uses -ffp-contract=off, so dot/axpy give the same bits at
 * every level and for any block split.  cos/sin/exp come from glibc's libmvec (4 ulp) when the
 * build found it (OK_HAVE_LIBMVEC), else from scalar libm; libmvec results can differ from libm
 * (and between AVX2 and AVX-512) by a few ulp, which is why the level can be pinned.  Array tails
 * are padded to a full vector, so an element's value never depends on its position in a block
 * (and so never on the thread count).  libmvec is declared here rather than through <math.h>
 * because glibc only declares it under -ffast-math, which we keep out of the build.
 */
#ifndef OK_VMATH_H
#define OK_VMATH_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define OK_X86 1
#include <immintrin.h>
#endif

#if defined(OK_X86) && defined(OK_HAVE_LIBMVEC)
#define OK_MVEC 1
__m256d _ZGVdN4v_cos(__m256d);
__m256d _ZGVdN4v_sin(__m256d);
__m256d _ZGVdN4v_exp(__m256d);
__m512d _ZGVeN8v_cos(__m512d);
__m512d _ZGVeN8v_sin(__m512d);
__m512d _ZGVeN8v_exp(__m512d);
#endif

static int ok_level_ = -1;

/* Decide the level once (idempotent; the race on first use writes the same value). */
static int ok_simd_level(void) {
    if (ok_level_ >= 0) return ok_level_;
    int level = 0;
#ifdef OK_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) level = 2;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) level = 1;
    const char *cap = getenv("ONLINEKERN_SIMD");
    if (cap) {
        if (strcmp(cap, "scalar") == 0) level = 0;
        else if (strcmp(cap, "avx2") == 0 && level > 1) level = 1;
    }
#endif
    ok_level_ = level;
    return level;
}

/* 1 if cos/sin/exp are vectorised (libmvec found and level > 0). */
static int ok_vector_math(void) {
#ifdef OK_MVEC
    return ok_simd_level() > 0;
#else
    return 0;
#endif
}

/* ---- dot and axpy: one plain C body, compiled per target ------------------------------- */

#define OK_DOT_BODY                                                                           \
    double s[16];                                                                             \
    int i = 0, k;                                                                             \
    for (k = 0; k < 16; k++) s[k] = 0.0;                                                      \
    for (int q_ = 0; q_ < n / 16; q_++, i += 16)  /* counted loop: vectorises under -fwrapv */ \
        for (k = 0; k < 16; k++) s[k] += a[i + k] * b[i + k];                                 \
    for (k = 0; i + k < n; k++) s[k] += a[i + k] * b[i + k];                                  \
    for (k = 0; k < 8; k++) s[k] += s[k + 8];                                                 \
    for (k = 0; k < 4; k++) s[k] += s[k + 4];                                                 \
    return (s[0] + s[2]) + (s[1] + s[3]);

#define OK_SQDIST_BODY                                                                        \
    double s[16], t;                                                                          \
    int i = 0, k;                                                                             \
    for (k = 0; k < 16; k++) s[k] = 0.0;                                                      \
    for (int q_ = 0; q_ < n / 16; q_++, i += 16)                                              \
        for (k = 0; k < 16; k++) { t = a[i + k] - b[i + k]; s[k] += t * t; }                 \
    for (k = 0; i + k < n; k++) { t = a[i + k] - b[i + k]; s[k] += t * t; }                  \
    for (k = 0; k < 8; k++) s[k] += s[k + 8];                                                 \
    for (k = 0; k < 4; k++) s[k] += s[k + 4];                                                 \
    return (s[0] + s[2]) + (s[1] + s[3]);

#define OK_AXPY_BODY                                                                          \
    for (int i = 0; i < n; i++) y[i] += alpha * x[i];

static double ok_dot_base_(const double *a, const double *b, int n) { OK_DOT_BODY }
static void ok_axpy_base_(int n, double alpha, const double *x, double *y) { OK_AXPY_BODY }
static double ok_sqdist_base_(const double *a, const double *b, int n) { OK_SQDIST_BODY }
#ifdef OK_X86
__attribute__((target("avx2,fma"))) static double ok_dot_avx2_(const double *a, const double *b, int n) { OK_DOT_BODY }
__attribute__((target("avx512f"))) static double ok_dot_avx512_(const double *a, const double *b, int n) { OK_DOT_BODY }
__attribute__((target("avx2,fma"))) static double ok_sqdist_avx2_(const double *a, const double *b, int n) { OK_SQDIST_BODY }
__attribute__((target("avx512f"))) static double ok_sqdist_avx512_(const double *a, const double *b, int n) { OK_SQDIST_BODY }
__attribute__((target("avx2,fma"))) static void ok_axpy_avx2_(int n, double alpha, const double *x, double *y) { OK_AXPY_BODY }
__attribute__((target("avx512f"))) static void ok_axpy_avx512_(int n, double alpha, const double *x, double *y) { OK_AXPY_BODY }
#endif

/* sum_i a[i] * b[i], bit-identical at every SIMD level. */
static inline double ok_dot(const double *a, const double *b, int n) {
#ifdef OK_X86
    int level = ok_level_ >= 0 ? ok_level_ : ok_simd_level();
    if (level == 2) return ok_dot_avx512_(a, b, n);
    if (level == 1) return ok_dot_avx2_(a, b, n);
#endif
    return ok_dot_base_(a, b, n);
}

/* sum_i (a[i] - b[i])^2 (exact differences: no cancellation for points far from the origin). */
static inline double ok_sqdist(const double *a, const double *b, int n) {
#ifdef OK_X86
    int level = ok_level_ >= 0 ? ok_level_ : ok_simd_level();
    if (level == 2) return ok_sqdist_avx512_(a, b, n);
    if (level == 1) return ok_sqdist_avx2_(a, b, n);
#endif
    return ok_sqdist_base_(a, b, n);
}

/* y += alpha * x (element-wise, so bit-identical at every level without contraction). */
static inline void ok_axpy(int n, double alpha, const double *x, double *y) {
#ifdef OK_X86
    int level = ok_level_ >= 0 ? ok_level_ : ok_simd_level();
    if (level == 2) { ok_axpy_avx512_(n, alpha, x, y); return; }
    if (level == 1) { ok_axpy_avx2_(n, alpha, x, y); return; }
#endif
    ok_axpy_base_(n, alpha, x, y);
}

/* ---- cos/sin/exp over arrays ------------------------------------------------------------ */

#ifdef OK_MVEC
#define OK_VLOOP(NAME, TARGET, W, LOADU, STOREU, F1)                                          \
    __attribute__((target(TARGET))) static void NAME(const double *a, double *out, int n) {  \
        int i = 0, k;                                                                         \
        for (; i + W <= n; i += W) STOREU(out + i, F1(LOADU(a + i)));                         \
        if (i < n) {                                                                          \
            double buf[W];                                                                    \
            int r = n - i;                                                                    \
            for (k = 0; k < W; k++) buf[k] = k < r ? a[i + k] : 0.0;                          \
            STOREU(buf, F1(LOADU(buf)));                                                      \
            for (k = 0; k < r; k++) out[i + k] = buf[k];                                      \
        }                                                                                     \
    }
OK_VLOOP(ok_cos_avx2_, "avx2,fma", 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_cos)
OK_VLOOP(ok_sin_avx2_, "avx2,fma", 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_sin)
OK_VLOOP(ok_exp_avx2_, "avx2,fma", 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_exp)
OK_VLOOP(ok_cos_avx512_, "avx512f", 8, _mm512_loadu_pd, _mm512_storeu_pd, _ZGVeN8v_cos)
OK_VLOOP(ok_sin_avx512_, "avx512f", 8, _mm512_loadu_pd, _mm512_storeu_pd, _ZGVeN8v_sin)
OK_VLOOP(ok_exp_avx512_, "avx512f", 8, _mm512_loadu_pd, _mm512_storeu_pd, _ZGVeN8v_exp)
#undef OK_VLOOP
#endif

/* c[i] = cos(a[i]), s[i] = sin(a[i]) for i < n.  c and s must not alias a.
 * Two separate loops: gcc would fuse cos and sin of one element into a scalar sincos call. */
static inline void ok_vcossin(const double *a, double *c, double *s, int n) {
#ifdef OK_MVEC
    int level = ok_level_ >= 0 ? ok_level_ : ok_simd_level();
    if (level == 2) { ok_cos_avx512_(a, c, n); ok_sin_avx512_(a, s, n); return; }
    if (level == 1) { ok_cos_avx2_(a, c, n); ok_sin_avx2_(a, s, n); return; }
#endif
    for (int i = 0; i < n; i++) c[i] = cos(a[i]);
    for (int i = 0; i < n; i++) s[i] = sin(a[i]);
}

/* out[i] = exp(a[i]) for i < n; out may be a. */
static inline void ok_vexp(const double *a, double *out, int n) {
#ifdef OK_MVEC
    int level = ok_level_ >= 0 ? ok_level_ : ok_simd_level();
    if (level == 2) { ok_exp_avx512_(a, out, n); return; }
    if (level == 1) { ok_exp_avx2_(a, out, n); return; }
#endif
    for (int i = 0; i < n; i++) out[i] = exp(a[i]);
}

#endif /* OK_VMATH_H */
