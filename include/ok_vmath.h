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
 * every level and for any block split.  exp comes from glibc's libmvec (4 ulp) when the build
 * found it (OK_HAVE_LIBMVEC), else from scalar libm; cos and sin from onlinekern's own vector
 * kernel below (AVX2 and AVX-512 give the same bits; within 2 ulp of the exact values, 1.51
 * measured).  Both can differ from scalar libm (level 0, within 1 ulp) in the last bits, which is
 * why the level can be pinned.  Array tails
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
__m256d _ZGVdN4v_exp(__m256d);
__m512d _ZGVeN8v_exp(__m512d);
__m256d _ZGVdN4v_log(__m256d);
__m512d _ZGVeN8v_log(__m512d);
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

/* OK_MULTI(ret, name, (params), (args), body...) compiles one body at each SIMD level (name_base_,
 * name_avx2_, name_avx512_) and defines name(), which runs the level's version; OK_DISPATCH defines
 * only that dispatcher, for versions written out by hand (different vector widths per level).
 * Kernels here and the learners' own fused passes (support.pxd, bsgd.pyx) are built this way. */
#ifdef OK_X86
#define OK_DISPATCH(RET, NAME, PARAMS, ARGS)                                                  \
    static RET NAME PARAMS {                                                                  \
        int level_ = ok_level_ >= 0 ? ok_level_ : ok_simd_level();                            \
        if (level_ == 2) return NAME##_avx512_ ARGS;                                          \
        if (level_ == 1) return NAME##_avx2_ ARGS;                                            \
        return NAME##_base_ ARGS;                                                             \
    }
#define OK_MULTI(RET, NAME, PARAMS, ARGS, ...)                                                \
    static RET NAME##_base_ PARAMS { __VA_ARGS__ }                                            \
    __attribute__((target("avx2,fma"))) static RET NAME##_avx2_ PARAMS { __VA_ARGS__ }       \
    __attribute__((target("avx512f"))) static RET NAME##_avx512_ PARAMS { __VA_ARGS__ }      \
    OK_DISPATCH(RET, NAME, PARAMS, ARGS)
/* The same with a body written for one vector width: BODY A0, BODY A1 and BODY A2 are the
 * scalar-level, AVX2 and AVX-512 bodies, each Ak the parenthesised arguments (vector types and
 * width) of the level's own registers -- GCC lowers a generic vector wider than the target's
 * registers through the stack. */
#define OK_MULTI_W(RET, NAME, PARAMS, ARGS, BODY, A0, A1, A2)                                 \
    static RET NAME##_base_ PARAMS { BODY A0 }                                                \
    __attribute__((target("avx2,fma"))) static RET NAME##_avx2_ PARAMS { BODY A1 }           \
    __attribute__((target("avx512f"))) static RET NAME##_avx512_ PARAMS { BODY A2 }          \
    OK_DISPATCH(RET, NAME, PARAMS, ARGS)
#else
#define OK_MULTI(RET, NAME, PARAMS, ARGS, ...) static RET NAME PARAMS { __VA_ARGS__ }
#define OK_MULTI_W(RET, NAME, PARAMS, ARGS, BODY, A0, A1, A2) static RET NAME PARAMS { BODY A0 }
#endif

/* 1 if exp (libmvec found) and cos/sin (the kernel below) are vectorised: level > 0. */
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

/* Sixteen elements a round (four AVX2 vectors), as the dot: a one-vector loop is so short that
 * where it falls against the 64-byte lines of the decoded-op cache decided its speed -- FOGD's
 * axpys (D = 1000) ran 10-15 % slower after unrelated code moved it across a line.  Elementwise:
 * the same bits however the loop is cut. */
#define OK_AXPY_BODY                                                                          \
    int i = 0, k;                                                                             \
    for (int q_ = 0; q_ < n / 16; q_++, i += 16)                                              \
        for (k = 0; k < 16; k++) y[i + k] += alpha * x[i + k];                                \
    for (; i < n; i++) y[i] += alpha * x[i];

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

/* a[0:D] = sum_k v[k] E[idx[k], 0:D] for k < m (the caller drops zero v[k]): the sequence
 * "a = 0; a += v[k] E[idx[k]] (ok_axpy) for each k" with the same operations in the same order per
 * element (so the same bits: a vector lane does one multiply and one add, no contraction), but
 * register-blocked: 4W (then W) outputs stay in registers while the nonzeros stream past, instead of
 * a being read and written once per nonzero (W = 8, 4, 2 doubles at AVX-512, AVX2, SSE2).  Pays while E's rows are in L1/L2 (short D); the
 * caller picks it by D. */
typedef double ok_v8d_ __attribute__((vector_size(64)));
typedef double ok_v4d_ __attribute__((vector_size(32)));
typedef double ok_v2d_ __attribute__((vector_size(16)));
/* an unaligned load of a generic vector of type VT (one vector load at the level's width) */
#define OK_VLOAD(VT, p) ({ VT v_; memcpy(&v_, (p), sizeof v_); v_; })
/* The body at one vector width: VT holds W doubles, the width of the level's registers (GCC
 * lowers a wider generic vector through the stack).  Each output is the same chain of multiplies
 * and adds at every width, so every level gives the same bits. */
#define OK_PROJECT_BODY(VT, W)                                                                \
    int j = 0, k, t;                                                                          \
    VT zero_;                                                                                 \
    for (t = 0; t < W; t++) zero_[t] = 0.0;                                                   \
    for (; j + 4 * W <= D; j += 4 * W) {                                                      \
        VT a0 = zero_, a1 = zero_, a2 = zero_, a3 = zero_;                                    \
        for (k = 0; k < m; k++) {                                                             \
            const double *r = E + (long)idx[k] * D + j, vk = v[k];  /* vector * scalar */   \
            a0 += OK_VLOAD(VT, r) * vk;                                                       \
            a1 += OK_VLOAD(VT, r + W) * vk;                                                   \
            a2 += OK_VLOAD(VT, r + 2 * W) * vk;                                               \
            a3 += OK_VLOAD(VT, r + 3 * W) * vk;                                               \
        }                                                                                     \
        memcpy(a + j, &a0, sizeof a0);                                                        \
        memcpy(a + j + W, &a1, sizeof a1);                                                    \
        memcpy(a + j + 2 * W, &a2, sizeof a2);                                                \
        memcpy(a + j + 3 * W, &a3, sizeof a3);                                                \
    }                                                                                         \
    for (; j + W <= D; j += W) {                                                              \
        VT a0 = zero_;                                                                        \
        for (k = 0; k < m; k++)                                                               \
            a0 += OK_VLOAD(VT, E + (long)idx[k] * D + j) * v[k];                              \
        memcpy(a + j, &a0, sizeof a0);                                                        \
    }                                                                                         \
    if (j < D) {           /* the last D % W (< 8) outputs: independent scalar chains */     \
        const int rem = D - j;                                                                \
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0;          \
        for (k = 0; k < m; k++) {                                                             \
            const double vk = v[k], *r = E + (long)idx[k] * D + j;                            \
            s0 += vk * r[0];                                                                  \
            if (rem > 1) s1 += vk * r[1];                                                     \
            if (rem > 2) s2 += vk * r[2];                                                     \
            if (rem > 3) s3 += vk * r[3];                                                     \
            if (rem > 4) s4 += vk * r[4];                                                     \
            if (rem > 5) s5 += vk * r[5];                                                     \
            if (rem > 6) s6 += vk * r[6];                                                     \
        }                                                                                     \
        {                                                                                     \
            const double s_[7] = {s0, s1, s2, s3, s4, s5, s6};                                \
            for (t = 0; t < rem; t++) a[j + t] = s_[t];                                       \
        }                                                                                     \
    }
OK_MULTI_W(void, ok_project, (int D, int m, const double *restrict v, const int *restrict idx,
                              const double *restrict E, double *restrict a), (D, m, v, idx, E, a),
           OK_PROJECT_BODY, (ok_v2d_, 2), (ok_v4d_, 4), (ok_v8d_, 8))

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
OK_VLOOP(ok_exp_avx2_, "avx2,fma", 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_exp)
OK_VLOOP(ok_log_avx2_, "avx2,fma", 4, _mm256_loadu_pd, _mm256_storeu_pd, _ZGVdN4v_log)
OK_VLOOP(ok_exp_avx512_, "avx512f", 8, _mm512_loadu_pd, _mm512_storeu_pd, _ZGVeN8v_exp)
OK_VLOOP(ok_log_avx512_, "avx512f", 8, _mm512_loadu_pd, _mm512_storeu_pd, _ZGVeN8v_log)
#undef OK_VLOOP
#endif

/* ---- cos and sin together: onlinekern's own vector kernel ------------------------------
 *
 * The random-feature learners need cos and sin of the same D arguments.  libmvec computes them
 * in two passes, each with its own argument reduction (0.86 ns per pair at AVX-512 here); this
 * kernel reduces once and evaluates both polynomials (0.62 ns).  Method: k = the nearest integer
 * to a 2/pi, r = a - k pi/2 with pi/2 as three doubles (159 bits) subtracted by FMA, then fdlibm's
 * minimax polynomials __kernel_sin and __kernel_cos on |r| <= pi/4 and the quadrant k mod 4.
 * Inside an FMA each k * part is exact; the first step is exact too (a - k PIO2_1 is a multiple of
 * 2^-52, or of ulp(a) for |a| < 1, below 1 in magnitude), the other two round once each, and the
 * rest of pi/2 left out, 5.6e-50 k, is ~1e-35 of the smallest |r| of any double below 1e5 (6.2e-19,
 * a = 45.553093477052, k = 29).  So r is within about 1 ulp of the exact a - k pi/2 where cos or
 * sin is tiny.  Error against the exact cos and sin (mpmath, tests/test_vmath.py): at most 1.51
 * ulp measured for |a| < 1e5 (0.99 at the doubles nearest k pi/2; the tests hold it to 2 ulp),
 * <= 2.3e-16 absolute; sin(+-0) = +-0.  Lanes with |a| >= 1e5 or NaN take scalar libm, lane by
 * lane, so every element's value depends on that element alone -- never on its neighbours, its
 * position or the vector width.  AVX2 and AVX-512 run the same operations in the same order and
 * give the same bits.  Level 0 uses scalar libm throughout. */
#ifdef OK_X86
#define OK_SC_S1 -1.66666666666666324348e-01
#define OK_SC_S2  8.33333333332248946124e-03
#define OK_SC_S3 -1.98412698298579493134e-04
#define OK_SC_S4  2.75573137070700676789e-06
#define OK_SC_S5 -2.50507602534068634195e-08
#define OK_SC_S6  1.58969099521155010221e-10
#define OK_SC_C1  4.16666666666666019037e-02
#define OK_SC_C2 -1.38888888888741095749e-03
#define OK_SC_C3  2.48015872894767294178e-05
#define OK_SC_C4 -2.75573143513906633035e-07
#define OK_SC_C5  2.08757232129817482790e-09
#define OK_SC_C6 -1.13596475577881948265e-11
#define OK_SC_PIO2_1 0x1.921fb54442d18p+0     /* pi/2 rounded to double */
#define OK_SC_PIO2_2 0x1.1a62633145c07p-54    /* pi/2 - PIO2_1 rounded */
#define OK_SC_PIO2_3 -0x1.f1976b7ed8fbcp-110  /* pi/2 - PIO2_1 - PIO2_2 rounded (|rest| < 5.6e-50) */
#define OK_SC_INVPIO2 6.36619772367581382433e-01
#define OK_SC_LIMIT 1.0e5

/* The part both widths share: kd = k + 1.5 2^52 (adding the shifter rounds x 2/pi to the nearest
 * integer, ties to even, and leaves k mod 2^51 in kd's low bits), the reduced r = a - k pi/2, and
 * sin(r), cos(r) by fdlibm's polynomials (V: vector type; the intrinsics of one width are passed in). */
#define OK_SC_SHIFTER 6755399441055744.0
#define OK_SC_REDUCE_POLY(V, SET1, MUL, ADD, SUB, FMADD, FNMADD, x, kd, sr, cr)                   \
    V kd = ADD(MUL(x, SET1(OK_SC_INVPIO2)), SET1(OK_SC_SHIFTER));                                 \
    V k_ = SUB(kd, SET1(OK_SC_SHIFTER));                                                         \
    V r_ = FNMADD(k_, SET1(OK_SC_PIO2_1), x);                                                    \
    r_ = FNMADD(k_, SET1(OK_SC_PIO2_2), r_);                                                     \
    r_ = FNMADD(k_, SET1(OK_SC_PIO2_3), r_);                                                     \
    V z_ = MUL(r_, r_);                                                                          \
    V ps_ = FMADD(z_, SET1(OK_SC_S6), SET1(OK_SC_S5));                                           \
    ps_ = FMADD(z_, ps_, SET1(OK_SC_S4));                                                        \
    ps_ = FMADD(z_, ps_, SET1(OK_SC_S3));                                                        \
    ps_ = FMADD(z_, ps_, SET1(OK_SC_S2));                                                        \
    ps_ = FMADD(z_, ps_, SET1(OK_SC_S1));                                                        \
    V sr = FMADD(MUL(r_, z_), ps_, r_);                                                          \
    V pc_ = FMADD(z_, SET1(OK_SC_C6), SET1(OK_SC_C5));                                           \
    pc_ = FMADD(z_, pc_, SET1(OK_SC_C4));                                                        \
    pc_ = FMADD(z_, pc_, SET1(OK_SC_C3));                                                        \
    pc_ = FMADD(z_, pc_, SET1(OK_SC_C2));                                                        \
    pc_ = FMADD(z_, pc_, SET1(OK_SC_C1));                                                        \
    V cr = FMADD(MUL(z_, z_), pc_, FNMADD(SET1(0.5), z_, SET1(1.0)));

/* The quadrant q = k mod 4 from kd's two low bits: bit 0 swaps sin and cos, bit 1 of q (sin) and
 * of q + 1 (cos) is moved to the sign bit.  sin(r) of r = -0 is +0 (an FMA adding a zero product),
 * so the lanes with x = +-0 take x itself: fixupimm with token 1 (the source) for the class zero. */
__attribute__((target("avx512f"), always_inline)) static inline void
ok_cossin8_(__m512d x, __m512d *cc, __m512d *ss) {
    OK_SC_REDUCE_POLY(__m512d, _mm512_set1_pd, _mm512_mul_pd, _mm512_add_pd, _mm512_sub_pd,
                      _mm512_fmadd_pd, _mm512_fnmadd_pd, x, kd, sr, cr)
    __m512i q = _mm512_castpd_si512(kd);
    __mmask8 sw = _mm512_test_epi64_mask(q, _mm512_set1_epi64(1));
    __m512i ns = _mm512_slli_epi64(_mm512_and_si512(q, _mm512_set1_epi64(2)), 62);
    __m512i nc = _mm512_slli_epi64(_mm512_and_si512(_mm512_add_epi64(q, _mm512_set1_epi64(1)), _mm512_set1_epi64(2)), 62);
    __m512d s = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(_mm512_mask_blend_pd(sw, sr, cr)), ns));
    *cc = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(_mm512_mask_blend_pd(sw, cr, sr)), nc));
    *ss = _mm512_fixupimm_pd(s, x, _mm512_set1_epi64(0x100), 0);
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
ok_cossin4_(__m256d x, __m256d *cc, __m256d *ss) {
    OK_SC_REDUCE_POLY(__m256d, _mm256_set1_pd, _mm256_mul_pd, _mm256_add_pd, _mm256_sub_pd,
                      _mm256_fmadd_pd, _mm256_fnmadd_pd, x, kd, sr, cr)
    __m256i q = _mm256_castpd_si256(kd);
    __m256d sw = _mm256_castsi256_pd(_mm256_slli_epi64(q, 63));          /* blendv reads the sign bit */
    __m256i ns = _mm256_slli_epi64(_mm256_and_si256(q, _mm256_set1_epi64x(2)), 62);
    __m256i nc = _mm256_slli_epi64(_mm256_and_si256(_mm256_add_epi64(q, _mm256_set1_epi64x(1)), _mm256_set1_epi64x(2)), 62);
    __m256d s = _mm256_xor_pd(_mm256_blendv_pd(sr, cr, sw), _mm256_castsi256_pd(ns));
    *cc = _mm256_xor_pd(_mm256_blendv_pd(cr, sr, sw), _mm256_castsi256_pd(nc));
    *ss = _mm256_blendv_pd(s, x, _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_EQ_OQ));  /* sin(+-0) = +-0 */
}
#undef OK_SC_REDUCE_POLY
#undef OK_SC_SHIFTER

/* The lanes the kernel does not cover (|a| >= OK_SC_LIMIT or NaN) through scalar libm. */
static void ok_cossin_fix_(const double *a, double *c, double *s, int n) {
    for (int k = 0; k < n; k++)
        if (!(fabs(a[k]) < OK_SC_LIMIT)) { c[k] = cos(a[k]); s[k] = sin(a[k]); }
}

#define OK_CS_LOOP(NAME, TARGET, W, V, KERNEL, LOADU, STOREU, ABS_MAX_BIG)                   \
    __attribute__((target(TARGET))) static void NAME(const double *a, double *c, double *s, int n) { \
        int i = 0, k;                                                                         \
        V cv, sv;                                                                             \
        for (; i + W <= n; i += W) {                                                          \
            V x = LOADU(a + i);                                                               \
            KERNEL(x, &cv, &sv);                                                              \
            STOREU(c + i, cv);                                                                \
            STOREU(s + i, sv);                                                                \
            if (ABS_MAX_BIG(x)) ok_cossin_fix_(a + i, c + i, s + i, W);                       \
        }                                                                                     \
        if (i < n && n >= W) {  /* the last W lanes, overlapping the previous vector: each */ \
            V x = LOADU(a + n - W);  /* lane depends only on its own argument, so lanes        */ \
            KERNEL(x, &cv, &sv);     /* computed twice get the same value twice                */ \
            STOREU(c + n - W, cv);                                                            \
            STOREU(s + n - W, sv);                                                            \
            if (ABS_MAX_BIG(x)) ok_cossin_fix_(a + n - W, c + n - W, s + n - W, W);           \
        } else if (i < n) {                                                                   \
            double buf[W], cb[W], sb[W];                                                      \
            int r = n - i;                                                                    \
            for (k = 0; k < W; k++) buf[k] = k < r ? a[i + k] : 0.0;                          \
            V x = LOADU(buf);                                                                 \
            KERNEL(x, &cv, &sv);                                                              \
            STOREU(cb, cv);                                                                   \
            STOREU(sb, sv);                                                                   \
            if (ABS_MAX_BIG(x)) ok_cossin_fix_(buf, cb, sb, W);                               \
            for (k = 0; k < r; k++) { c[i + k] = cb[k]; s[i + k] = sb[k]; }                   \
        }                                                                                     \
    }
#define OK_BIG8(x) _mm512_cmp_pd_mask(_mm512_abs_pd(x), _mm512_set1_pd(OK_SC_LIMIT), _CMP_NLT_UQ)
#define OK_BIG4(x) _mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x), \
                                                    _mm256_set1_pd(OK_SC_LIMIT), _CMP_NLT_UQ))
OK_CS_LOOP(ok_cossin_avx512_, "avx512f", 8, __m512d, ok_cossin8_, _mm512_loadu_pd, _mm512_storeu_pd, OK_BIG8)
OK_CS_LOOP(ok_cossin_avx2_, "avx2,fma", 4, __m256d, ok_cossin4_, _mm256_loadu_pd, _mm256_storeu_pd, OK_BIG4)
#undef OK_CS_LOOP
#undef OK_BIG8
#undef OK_BIG4
#endif

/* ---- the opt-in float32 path of the random features ------------------------------------
 *
 * FOGD at D = 1000 spends its time streaming E's rows (8 KB each, from L2) and in 1000 cos/sin
 * pairs.  With ``precision="float32"`` E is kept as float32 in tiles of OK_F32_TILE columns
 * (tile t holds columns [64t, 64t + 64) of all d rows, row after row, zero-padded past D), so a
 * row's share of a tile is one contiguous 256-byte piece and a whole tile is contiguous: half the
 * bytes of the float64 rows, read in order.  Omega^T x is accumulated in float32 and cos/sin are
 * evaluated in float32 (16 lanes at AVX-512), then widened to the float64 features the weights
 * use (weights, scores and updates stay float64).  Every level -- scalar, AVX2, AVX-512 -- runs the
 * same IEEE operations in the same order (multiplies and adds without contraction in the
 * projection; explicit fused multiply-adds, fmaf at level 0, in cos/sin), so the float32 path
 * gives the same bits everywhere; it differs from the float64 path by float32 rounding
 * (~1e-7 relative in Omega^T x, ~1e-7 absolute in cos/sin). */
#define OK_F32_TILE 64
typedef float ok_v16f_ __attribute__((vector_size(64)));
typedef float ok_v8f_ __attribute__((vector_size(32)));
typedef float ok_v4f_ __attribute__((vector_size(16)));

/* a[0:Dp] (+)= sum_k v[k] Et[tile][idx[k]][:] for k < m; Dp a multiple of OK_F32_TILE, Et the tiled
 * E of d rows.  init = 0 starts from zero, 1 continues the sums already in a (the same bits as one
 * call over all nonzeros: a float accumulator is stored and reloaded exactly). */
#define OK_PROJECT32_BODY(VT, W)                                                              \
    int k, t, h;                                                                              \
    VT zero_;                                                                                 \
    for (t = 0; t < W; t++) zero_[t] = 0.0f;                                                  \
    for (long j = 0; j < Dp; j += OK_F32_TILE) {                                              \
        const float *tile = Et + j * d;                                                       \
        for (h = 0; h < OK_F32_TILE; h += 4 * W) {                                            \
            VT a0 = zero_, a1 = zero_, a2 = zero_, a3 = zero_;                                \
            if (init) {                                                                       \
                a0 = OK_VLOAD(VT, a + j + h); a1 = OK_VLOAD(VT, a + j + h + W);               \
                a2 = OK_VLOAD(VT, a + j + h + 2 * W); a3 = OK_VLOAD(VT, a + j + h + 3 * W);   \
            }                                                                                 \
            for (k = 0; k < m; k++) {                                                         \
                const float *r = tile + (long)idx[k] * OK_F32_TILE + h, vk = v[k];            \
                a0 += OK_VLOAD(VT, r) * vk;                                                   \
                a1 += OK_VLOAD(VT, r + W) * vk;                                               \
                a2 += OK_VLOAD(VT, r + 2 * W) * vk;                                           \
                a3 += OK_VLOAD(VT, r + 3 * W) * vk;                                           \
            }                                                                                 \
            memcpy(a + j + h, &a0, sizeof a0);                                                \
            memcpy(a + j + h + W, &a1, sizeof a1);                                            \
            memcpy(a + j + h + 2 * W, &a2, sizeof a2);                                        \
            memcpy(a + j + h + 3 * W, &a3, sizeof a3);                                        \
        }                                                                                     \
    }
OK_MULTI_W(void, ok_project32, (long Dp, int d, int m, const float *restrict v, const int *restrict idx,
                                const float *restrict Et, float *restrict a, int init), (Dp, d, m, v, idx, Et, a, init),
           OK_PROJECT32_BODY, (ok_v4f_, 4), (ok_v8f_, 8), (ok_v16f_, 16))

/* cos and sin in float32: k = the nearest integer to x 2/pi, r = x - k pi/2 with pi/2 in three
 * float parts subtracted by FMA (the first step is exact for |k| < 2^17), Cephes' sinf/cosf
 * polynomials on |r| <= pi/4 and the quadrant k mod 4.  Error <= 1.2e-7 absolute against
 * cos/sin of the same float32 argument in float64 (tests/test_float32.py), and within 2 float32
 * ulps of the exact values (1.52 measured, also at the floats nearest k pi/2: the rest of pi/2
 * left out is 1.1e-23 k; tests/test_vmath.py); sin(+-0) = +-0.  Lanes with
 * |x| >= OK_SC32_LIMIT or NaN take float64 libm, lane by lane. */
#define OK_SC32_INVPIO2 0.636619772367581343f
#define OK_SC32_PIO2_1 1.57079637050628662109375f
#define OK_SC32_PIO2_2 -4.37113900018624283e-8f
#define OK_SC32_PIO2_3 -1.71512451e-15f
#define OK_SC32_S1 -1.6666654611e-1f
#define OK_SC32_S2 8.3321608736e-3f
#define OK_SC32_S3 -1.9515295891e-4f
#define OK_SC32_C1 4.166664568298827e-2f
#define OK_SC32_C2 -1.388731625493765e-3f
#define OK_SC32_C3 2.443315711809948e-5f
#define OK_SC32_LIMIT 1.0e5f

/* One lane at level 0: the vector kernels' operations, one by one (fmaf is correctly rounded). */
static inline void ok_cossin32_1_(float x, double *c, double *s) {
    if (!(fabsf(x) < OK_SC32_LIMIT)) { *c = cos((double)x); *s = sin((double)x); return; }
    float k = rintf(x * OK_SC32_INVPIO2);
    float r = fmaf(-k, OK_SC32_PIO2_1, x);
    r = fmaf(-k, OK_SC32_PIO2_2, r);
    r = fmaf(-k, OK_SC32_PIO2_3, r);
    float z = r * r;
    float ps = fmaf(z, OK_SC32_S3, OK_SC32_S2);
    ps = fmaf(z, ps, OK_SC32_S1);
    float sr = fmaf(r * z, ps, r);
    float pc = fmaf(z, OK_SC32_C3, OK_SC32_C2);
    pc = fmaf(z, pc, OK_SC32_C1);
    float cr = fmaf(z * z, pc, fmaf(-0.5f, z, 1.0f));
    int q = (int)k & 3;
    float sv = (q & 1) ? cr : sr, cv = (q & 1) ? sr : cr;
    *s = x == 0.0f ? (double)x : (q & 2) ? -sv : sv;                  /* sin(-0) = -0 */
    *c = ((q + 1) & 2) ? -cv : cv;
}

#ifdef OK_X86
#define OK_SC32_REDUCE_POLY(V, SET1, MUL, FMADD, FNMADD, ROUND, x, k, sr, cr)                    \
    V k = ROUND(MUL(x, SET1(OK_SC32_INVPIO2)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);    \
    V r_ = FNMADD(k, SET1(OK_SC32_PIO2_1), x);                                                   \
    r_ = FNMADD(k, SET1(OK_SC32_PIO2_2), r_);                                                    \
    r_ = FNMADD(k, SET1(OK_SC32_PIO2_3), r_);                                                    \
    V z_ = MUL(r_, r_);                                                                          \
    V ps_ = FMADD(z_, SET1(OK_SC32_S3), SET1(OK_SC32_S2));                                       \
    ps_ = FMADD(z_, ps_, SET1(OK_SC32_S1));                                                      \
    V sr = FMADD(MUL(r_, z_), ps_, r_);                                                          \
    V pc_ = FMADD(z_, SET1(OK_SC32_C3), SET1(OK_SC32_C2));                                       \
    pc_ = FMADD(z_, pc_, SET1(OK_SC32_C1));                                                      \
    V cr = FMADD(MUL(z_, z_), pc_, FNMADD(SET1(0.5f), z_, SET1(1.0f)));

/* 16 lanes; q = k mod 4 as integers: bit 0 swaps sin and cos, bit 1 of q (sin) and of q + 1
 * (cos) is moved to the sign bit. */
__attribute__((target("avx512f"), always_inline)) static inline void
ok_cossin16f_(__m512 x, __m512 *cc, __m512 *ss) {
    OK_SC32_REDUCE_POLY(__m512, _mm512_set1_ps, _mm512_mul_ps, _mm512_fmadd_ps, _mm512_fnmadd_ps,
                        _mm512_roundscale_ps, x, k, sr, cr)
    __m512i q = _mm512_cvtps_epi32(k);
    __mmask16 sw = _mm512_test_epi32_mask(q, _mm512_set1_epi32(1));
    __m512i ns = _mm512_slli_epi32(_mm512_and_si512(q, _mm512_set1_epi32(2)), 30);
    __m512i nc = _mm512_slli_epi32(_mm512_and_si512(_mm512_add_epi32(q, _mm512_set1_epi32(1)), _mm512_set1_epi32(2)), 30);
    *ss = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(_mm512_mask_blend_ps(sw, sr, cr)), ns));
    *cc = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(_mm512_mask_blend_ps(sw, cr, sr)), nc));
    *ss = _mm512_mask_mov_ps(*ss, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ), x);  /* sin(-0) = -0 */
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
ok_cossin8f_(__m256 x, __m256 *cc, __m256 *ss) {
    OK_SC32_REDUCE_POLY(__m256, _mm256_set1_ps, _mm256_mul_ps, _mm256_fmadd_ps, _mm256_fnmadd_ps,
                        _mm256_round_ps, x, k, sr, cr)
    __m256i q = _mm256_cvtps_epi32(k);
    __m256 sw = _mm256_castsi256_ps(_mm256_slli_epi32(q, 31));          /* blendv reads the sign bit */
    __m256i ns = _mm256_slli_epi32(_mm256_and_si256(q, _mm256_set1_epi32(2)), 30);
    __m256i nc = _mm256_slli_epi32(_mm256_and_si256(_mm256_add_epi32(q, _mm256_set1_epi32(1)), _mm256_set1_epi32(2)), 30);
    *ss = _mm256_xor_ps(_mm256_blendv_ps(sr, cr, sw), _mm256_castsi256_ps(ns));
    *cc = _mm256_xor_ps(_mm256_blendv_ps(cr, sr, sw), _mm256_castsi256_ps(nc));
    *ss = _mm256_blendv_ps(*ss, x, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));  /* sin(-0) = -0 */
}
#undef OK_SC32_REDUCE_POLY

/* c[i] = cos(a[i]), s[i] = sin(a[i]) widened to double for i < n; a holds a multiple of W floats
 * (the padded projection), so every vector is full and only the stores are cut at n. */
#define OK_CS32_LOOP(NAME, TARGET, W, V, KERNEL, LOADU, BIG, WIDEN_STORE)                     \
    __attribute__((target(TARGET))) static void NAME(const float *a, double *c, double *s, int n) { \
        V cv, sv;                                                                             \
        for (int i = 0; i < n; i += W) {                                                      \
            V x = LOADU(a + i);                                                               \
            KERNEL(x, &cv, &sv);                                                              \
            if (i + W <= n) {                                                                 \
                WIDEN_STORE(c + i, cv);                                                       \
                WIDEN_STORE(s + i, sv);                                                       \
            } else {                                                                          \
                double cb[W], sb[W];                                                          \
                WIDEN_STORE(cb, cv);                                                          \
                WIDEN_STORE(sb, sv);                                                          \
                for (int k = 0; k < n - i; k++) { c[i + k] = cb[k]; s[i + k] = sb[k]; }       \
            }                                                                                 \
            if (BIG(x))                                                                       \
                for (int k = 0; k < W && i + k < n; k++)                                      \
                    if (!(fabsf(a[i + k]) < OK_SC32_LIMIT)) ok_cossin32_1_(a[i + k], c + i + k, s + i + k); \
        }                                                                                     \
    }
#define OK_BIG16F(x) _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(OK_SC32_LIMIT), _CMP_NLT_UQ)
#define OK_BIG8F(x) _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), \
                                                     _mm256_set1_ps(OK_SC32_LIMIT), _CMP_NLT_UQ))
#define OK_WIDEN16(p, v) do {                                                                 \
        _mm512_storeu_pd((p), _mm512_cvtps_pd(_mm512_castps512_ps256(v)));                    \
        _mm512_storeu_pd((p) + 8, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)))); \
    } while (0)
#define OK_WIDEN8(p, v) do {                                                                  \
        _mm256_storeu_pd((p), _mm256_cvtps_pd(_mm256_castps256_ps128(v)));                    \
        _mm256_storeu_pd((p) + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));              \
    } while (0)
OK_CS32_LOOP(ok_cossin32_avx512_, "avx512f", 16, __m512, ok_cossin16f_, _mm512_loadu_ps, OK_BIG16F, OK_WIDEN16)
OK_CS32_LOOP(ok_cossin32_avx2_, "avx2,fma", 8, __m256, ok_cossin8f_, _mm256_loadu_ps, OK_BIG8F, OK_WIDEN8)
#undef OK_CS32_LOOP
#undef OK_BIG16F
#undef OK_BIG8F
#undef OK_WIDEN16
#undef OK_WIDEN8
#endif

/* c[i] = cos(a[i]), s[i] = sin(a[i]) (float32 arguments and arithmetic, double results), i < n.
 * a must hold n rounded up to a multiple of 16 floats (the tail's values are computed, not stored). */
static inline void ok_vcossin32(const float *a, double *c, double *s, int n) {
#ifdef OK_X86
    int level = ok_level_ >= 0 ? ok_level_ : ok_simd_level();
    if (level == 2) { ok_cossin32_avx512_(a, c, s, n); return; }
    if (level == 1) { ok_cossin32_avx2_(a, c, s, n); return; }
#endif
    for (int i = 0; i < n; i++) ok_cossin32_1_(a[i], c + i, s + i);
}

/* c[i] = cos(a[i]), s[i] = sin(a[i]) for i < n.  c and s must not alias a. */
static inline void ok_vcossin(const double *a, double *c, double *s, int n) {
#ifdef OK_X86
    int level = ok_level_ >= 0 ? ok_level_ : ok_simd_level();
    if (level == 2) { ok_cossin_avx512_(a, c, s, n); return; }
    if (level == 1) { ok_cossin_avx2_(a, c, s, n); return; }
#endif
    /* two separate loops: gcc would fuse cos and sin of one element into a scalar sincos */
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

/* out[i] = log(a[i]) for i < n; out may be a (libmvec at levels 1-2, libm at 0, element-wise). */
static inline void ok_vlog(const double *a, double *out, int n) {
#ifdef OK_MVEC
    int level = ok_level_ >= 0 ? ok_level_ : ok_simd_level();
    if (level == 2) { ok_log_avx512_(a, out, n); return; }
    if (level == 1) { ok_log_avx2_(a, out, n); return; }
#endif
    for (int i = 0; i < n; i++) out[i] = log(a[i]);
}

#endif /* OK_VMATH_H */
