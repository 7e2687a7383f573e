/*
 * primitives.c -- micro-benchmarks of the primitives onlinekern's hot loops are made of, for the
 * per-learner cost model (issue 7): cost per example = sum over primitives of count x the cost
 * per unit measured here.
 *
 * It includes the package's own headers (include/ok_vmath.h, include/ok_kernel.h), so every
 * primitive runs the exact code the learners run, and it is meant to be compiled with setup.py's
 * flags (tools/bench_primitives.py does that: Python's CFLAGS, which include -fwrapv, then
 * -O3 -fno-math-errno -ffp-contract=off, plus -DOK_HAVE_LIBMVEC=1 -lmvec when the libmvec probe
 * passes, -fopenmp when the OpenMP probe passes).  The header decides its SIMD level once into the file-static ok_level_; this program
 * sets ok_level_ itself to time every level the CPU supports (0 baseline SSE2 / scalar libm,
 * 1 AVX2+FMA, 2 AVX-512F; ONLINEKERN_SIMD still caps the highest level tried).
 *
 * Each measurement: calibrate an iteration count so that one repetition takes ~target ms, then
 * time `reps` repetitions with clock_gettime (thread CPU clock, see now_ns) and report the median
 * (and the min/max, so noisy figures can be spotted).  Single thread throughout.
 *
 *   usage: primitives [--target-ms 50] [--reps 7] [--skip-dram] [--levels 0,1,2]
 *                     [--no-composites] [--only roof,vec|dot,axpy,sqdist,math,mem,krow]
 *
 * Output: one JSON document on stdout {"meta": {...}, "results": [ {...}, ... ]}.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "ok_vmath.h"
#include "ok_kernel.h"

#ifndef OK_X86
#error "primitives.c measures the x86-64 dispatch levels of ok_vmath.h; build on x86-64 with gcc"
#endif

/* ---- timing ---------------------------------------------------------------------------- */

static double target_ns = 50e6;
static int reps = 7;
static volatile double sink;     /* results go here so no loop is dead code */

/* Hide a pointer's value from the optimiser (no hoisting of pure calls out of the loop). */
#define LAUNDER(p) __asm__ volatile("" : "+r"(p))
/* Make the compiler assume memory changed (no caching of loads across iterations). */
#define CLOBBER() __asm__ volatile("" ::: "memory")

/* The machine is shared: time with the thread's CPU clock, which stops while the scheduler runs
 * someone else (cache pollution by the neighbours still shows, as spread); the wall clock is
 * kept alongside, and their ratio says how contended the run was. */
static double clock_ns(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}
static double now_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }
static double wall_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

typedef void (*bench_fn)(void *ctx, long iters);

typedef struct { double med, lo, hi, wall; long iters; } timing;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ns per call of fn(ctx, 1): median over reps repetitions of ~target_ns each. */
static timing measure(bench_fn fn, void *ctx) {
    long iters = 1;
    double t;
    for (;;) {                                     /* calibration doubles as warm-up */
        double t0 = now_ns();
        fn(ctx, iters);
        t = now_ns() - t0;
        if (t >= target_ns / 20 || iters > (1L << 40)) break;
        iters *= (t < target_ns / 1000) ? 16 : 2;
    }
    iters = (long)((double)iters * target_ns / (t > 1.0 ? t : 1.0));
    if (iters < 1) iters = 1;
    double *v = malloc(sizeof(double) * 2 * reps), *w = v + reps;
    for (int r = 0; r < reps; r++) {
        double w0 = wall_ns(), t0 = now_ns();
        fn(ctx, iters);
        v[r] = (now_ns() - t0) / (double)iters;
        w[r] = (wall_ns() - w0) / (double)iters;
    }
    qsort(v, reps, sizeof(double), cmp_double);
    qsort(w, reps, sizeof(double), cmp_double);
#define MEDIAN(a) (reps % 2 ? (a)[reps / 2] : 0.5 * ((a)[reps / 2 - 1] + (a)[reps / 2]))
    timing out = { MEDIAN(v), v[0], v[reps - 1], MEDIAN(w), iters };
#undef MEDIAN
    free(v);
    return out;
}

/* ---- JSON output --------------------------------------------------------------------- */

static int n_emitted = 0;

/* One result.  per_call_units: units of work in one call of the benchmark function; rate_per_unit:
 * flops (rate_unit "GFLOP/s"), bytes ("GB/s") or items ("G/s") per unit, 0 for no rate. */
static void emit(const char *prim, const char *unit, const char *level, long n, timing t,
                 double per_call_units, double rate_per_unit, const char *rate_unit, const char *note) {
    double ns = t.med / per_call_units;
    printf("%s\n  {\"primitive\": \"%s\", \"unit\": \"%s\", \"level\": \"%s\", \"n\": %ld, "
           "\"ns_per_unit\": %.6g, \"ns_per_unit_min\": %.6g, \"ns_per_unit_max\": %.6g, "
           "\"spread\": %.4f, \"wall_over_cpu\": %.4f, \"rate\": %.6g, \"rate_unit\": \"%s\", \"ns_per_call\": %.6g, "
           "\"units_per_call\": %.6g, \"iters\": %ld, \"note\": \"%s\"}",
           n_emitted ? "," : "", prim, unit, level, n, ns, t.lo / per_call_units, t.hi / per_call_units,
           (t.hi - t.lo) / t.med, t.wall / t.med, rate_per_unit > 0 ? rate_per_unit / ns : 0.0, rate_unit, t.med,
           per_call_units, t.iters, note ? note : "");
    n_emitted++;
    fflush(stdout);
}

static int level_mask = 7;          /* --levels: which dispatch levels to time */
static int use_level(int level) { return (level_mask >> level) & 1; }

static const char *level_name(int level) {
    return level == 2 ? "avx512" : level == 1 ? "avx2" : "base";
}

/* One row per dispatch level 0..top that --levels selects: fn(ctx) timed with ok_level_ = L. */
static void at_levels(int top, bench_fn fn, void *ctx, const char *prim, const char *unit, long n,
                      double per_call, double rate, const char *rate_unit, const char *note) {
    for (int L = 0; L <= top; L++) {
        if (!use_level(L)) continue;
        ok_level_ = L;
        emit(prim, unit, level_name(L), n, measure(fn, ctx), per_call, rate, rate_unit, note);
    }
}

/* ---- random data ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double urand(void) {                        /* splitmix64 -> [0, 1) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}
static double nrand(void) {                        /* Box-Muller standard normal */
    double u = urand(), v = urand();
    return sqrt(-2.0 * log(u + 1e-300)) * cos(2.0 * M_PI * v);
}
static double *dalloc(size_t n) {                  /* 64-byte aligned, zeroed */
    size_t bytes = ((n * sizeof(double) + 63) / 64) * 64;
    double *p = aligned_alloc(64, bytes ? bytes : 64);
    if (!p) { fprintf(stderr, "primitives: out of memory (%zu bytes)\n", bytes); exit(2); }
    memset(p, 0, bytes);
    return p;
}
/* nnz sorted distinct indices out of d */
static void random_subset(int *idx, int nnz, int d) {
    int k = 0;
    for (int j = 0; j < d && k < nnz; j++)
        if (urand() * (d - j) < (nnz - k)) idx[k++] = j;
}

/* ---- 1. compute roof: register-resident independent chains ---------------------------- */
/* acc = acc * m + c on CH independent accumulators; m < 1 keeps the values bounded (no
 * overflow or denormals).  "mul+add" is what -ffp-contract=off code (ok_dot, ok_sqdist_fm)
 * issues; "fma" is the fused instruction, the machine's advertised roof. */
#define ROOF_FN(NAME, TARGET, V, SET1, MUL, ADD, FMA, FUSED, CH, REDUCE)                       \
    TARGET static void NAME(void *ctx, long iters) {                                       \
        (void)ctx;                                                                          \
        V m = SET1(0.999999), c = SET1(1e-7), acc[CH];                                      \
        for (int k = 0; k < CH; k++) acc[k] = SET1(1.0 + k * 0.01);                         \
        for (long i = 0; i < iters; i++) {                                                  \
            _Pragma("GCC unroll 32")  /* all chains in registers, never in a stack array */  \
            for (int k = 0; k < CH; k++) acc[k] = FUSED ? FMA(acc[k], m, c) : ADD(MUL(acc[k], m), c); \
        }                                                                                   \
        for (int k = 1; k < CH; k++) acc[0] = ADD(acc[0], acc[k]);                          \
        sink += REDUCE(acc[0]);                                                             \
    }
static double red128(__m128d v) { return _mm_cvtsd_f64(v); }
__attribute__((target("avx2,fma"))) static double red256(__m256d v) { return _mm256_cvtsd_f64(v); }
__attribute__((target("avx512f"))) static double red512(__m512d v) { return _mm512_cvtsd_f64(v); }
#define NOFMA(a, b, c) (a)
#define NOTARGET
ROOF_FN(roof_sd_muladd, NOTARGET, __m128d, _mm_set1_pd, _mm_mul_sd, _mm_add_sd, NOFMA, 0, 12, red128)
ROOF_FN(roof_pd_muladd, NOTARGET, __m128d, _mm_set1_pd, _mm_mul_pd, _mm_add_pd, NOFMA, 0, 12, red128)
ROOF_FN(roof_sd_fma, __attribute__((target("avx2,fma"))), __m128d, _mm_set1_pd, _mm_mul_sd, _mm_add_sd, _mm_fmadd_sd, 1, 12, red128)
ROOF_FN(roof_256_muladd, __attribute__((target("avx2,fma"))), __m256d, _mm256_set1_pd, _mm256_mul_pd, _mm256_add_pd, NOFMA, 0, 12, red256)
ROOF_FN(roof_256_fma, __attribute__((target("avx2,fma"))), __m256d, _mm256_set1_pd, _mm256_mul_pd, _mm256_add_pd, _mm256_fmadd_pd, 1, 12, red256)
ROOF_FN(roof_512_muladd, __attribute__((target("avx512f"))), __m512d, _mm512_set1_pd, _mm512_mul_pd, _mm512_add_pd, NOFMA, 0, 24, red512)
ROOF_FN(roof_512_fma, __attribute__((target("avx512f"))), __m512d, _mm512_set1_pd, _mm512_mul_pd, _mm512_add_pd, _mm512_fmadd_pd, 1, 24, red512)

/* Effective core clock: a chain of dependent 1-cycle integer adds. */
static void clock_loop(void *ctx, long iters) {
    (void)ctx;
    long x = 0;
    for (long i = 0; i < iters; i++)
        __asm__ volatile(".rept 32\n\taddq $1, %0\n\t.endr" : "+r"(x));
    sink += (double)x;
}

static void bench_roof(int max_level) {
    timing t = measure(clock_loop, NULL);
    double ghz = 32.0 / t.med;
    emit("core clock (dependent int add chain)", "cycle", "-", 32, t, 32.0, 1.0, "GHz", "1 cycle per add assumed");
    struct { bench_fn fn; int level; const char *prim; const char *lv; int lanes, ch; } v[] = {
        { roof_sd_muladd, 0, "peak mul+add (unfused)", "base x1 (SSE2 scalar)", 1, 12 },
        { roof_pd_muladd, 0, "peak mul+add (unfused)", "base x2 (SSE2 packed)", 2, 12 },
        { roof_sd_fma, 1, "peak FMA", "avx2 x1 (scalar vfmadd)", 1, 12 },
        { roof_256_muladd, 1, "peak mul+add (unfused)", "avx2 x4", 4, 12 },
        { roof_256_fma, 1, "peak FMA", "avx2 x4", 4, 12 },
        { roof_512_muladd, 2, "peak mul+add (unfused)", "avx512 x8", 8, 24 },
        { roof_512_fma, 2, "peak FMA", "avx512 x8", 8, 24 },
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (v[i].level > max_level || !use_level(v[i].level)) continue;
        t = measure(v[i].fn, NULL);
        double per_call = (double)v[i].lanes * v[i].ch;
        char note[96];
        snprintf(note, sizeof note, "%d chains; %.2f multiply-adds per cycle", v[i].ch,
                 per_call / t.med / ghz);
        emit(v[i].prim, "lane multiply-add", v[i].lv, v[i].ch, t, per_call, 2.0, "GFLOP/s", note);
    }
}

/* ---- 2. ok_dot / ok_axpy ---------------------------------------------------------------- */

typedef struct { const double *a; double *b; int n; } vec_ctx;

/* s += FN(a, b, n) per iteration: ok_dot, ok_sqdist */
#define REDUCE_LOOP(NAME, FN)                                                                  \
    static void NAME(void *ctx, long iters) {                                                  \
        vec_ctx *c = ctx;                                                                      \
        const double *a = c->a, *b = c->b;                                                     \
        double s = 0.0;                                                                        \
        for (long i = 0; i < iters; i++) { LAUNDER(a); s += FN(a, b, c->n); }                 \
        sink += s;                                                                             \
    }
REDUCE_LOOP(dot_loop, ok_dot)
REDUCE_LOOP(sqdist_loop, ok_sqdist)
static void axpy_loop(void *ctx, long iters) {
    vec_ctx *c = ctx;
    for (long i = 0; i < iters; i++) {          /* alternating sign keeps y bounded */
        ok_axpy(c->n, (i & 1) ? -1e-3 : 1e-3, c->a, c->b);
        CLOBBER();
    }
    sink += c->b[0];
}

/* fn over two fresh random vectors of n at every level, one row each */
static void time_vec(int max_level, int n, bench_fn fn, const char *prim, double flops, const char *note) {
    double *a = dalloc(n), *b = dalloc(n);
    for (int i = 0; i < n; i++) { a[i] = nrand(); b[i] = nrand(); }
    vec_ctx c = { a, b, n };
    at_levels(max_level, fn, &c, prim, "element", n, n, flops, "GFLOP/s", note);
    free(a); free(b);
}

static void bench_dot_axpy(int max_level, int do_dot, int do_axpy, int do_sqdist) {
    static const int sizes[] = { 128, 1000, 2000, 8000 }, dims[] = { 22, 1000 };
    for (int s = 0; s < 4; s++) {
        if (do_dot) time_vec(max_level, sizes[s], dot_loop, "ok_dot", 2.0, "2 reads + mul + add per element");
        if (do_axpy)
            time_vec(max_level, sizes[s], axpy_loop, "ok_axpy", 2.0, "2 reads + 1 write + mul + add per element");
    }
    /* ok_sqdist (SV-to-SV distances: kernel_sv, budget maintenance) at d = 22 (ijcnn1) and 1000 */
    for (int s = 0; s < 2 && do_sqdist; s++)
        time_vec(max_level, dims[s], sqdist_loop, "ok_sqdist", 3.0, "2 reads + sub + mul + add per element");
}

/* ---- 3. cos+sin and exp -------------------------------------------------------------- */

/* The arguments come from a pool of POOL random values (512 KB, L2-resident) at a new random
 * offset every call.  Scalar libm's cos/sin branch on the argument's range: on a repeated
 * 1000-value array the branch predictor learns the outcomes and cos+sin looks ~2x cheaper than
 * on fresh arguments (measured on this machine: ~16 vs ~29 ns per pair), and fresh arguments
 * are what a learner sees.  libmvec is branch-free in this range and does not care. */
#define POOL (1 << 16)
typedef struct { const double *pool; double *c, *s; int n; } math_ctx;

static inline const double *pool_slice(const math_ctx *m, uint64_t *lcg) {
    *lcg = *lcg * 6364136223846793005ull + 1442695040888963407ull;
    return m->pool + (*lcg >> 33) % (uint64_t)(POOL - m->n);
}
static void cossin_loop(void *ctx, long iters) {
    math_ctx *m = ctx;
    uint64_t lcg = 12345;
    for (long i = 0; i < iters; i++) {
        ok_vcossin(pool_slice(m, &lcg), m->c, m->s, m->n);
        CLOBBER();
    }
    sink += m->c[0] + m->s[m->n - 1];
}
static void exp_loop(void *ctx, long iters) {
    math_ctx *m = ctx;
    uint64_t lcg = 12345;
    for (long i = 0; i < iters; i++) {
        ok_vexp(pool_slice(m, &lcg), m->c, m->n);
        CLOBBER();
    }
    sink += m->c[0];
}
/* reference: glibc's fused scalar sincos(), what gcc emits for cos and sin in one loop */
static void sincos_loop(void *ctx, long iters) {
    math_ctx *m = ctx;
    uint64_t lcg = 12345;
    for (long i = 0; i < iters; i++) {
        const double *a = pool_slice(m, &lcg);
        for (int j = 0; j < m->n; j++) sincos(a[j], m->s + j, m->c + j);
        CLOBBER();
    }
    sink += m->c[0];
}

static void bench_math(int max_level) {
    static const int sizes[] = { 100, 1000, 4000 };
    /* vector math only exists above level 0 when libmvec was linked; without it every level
     * runs scalar libm, so only level 0 is timed */
    int top = ok_vector_math() ? max_level : 0;
    /* FOGD's arguments a = sqrt(2 gamma) E^T x ~ N(0, 2 gamma ||x||^2): N(0, 3^2) is ijcnn1 at
     * gamma = 1 (13 values in [-1, 1]); exp's are -gamma ||x - x_i||^2, here uniform in [-30, 0] */
    double *ca = dalloc(POOL), *ea = dalloc(POOL), *c = dalloc(4000), *sn = dalloc(4000);
    for (int i = 0; i < POOL; i++) { ca[i] = 3.0 * nrand(); ea[i] = -30.0 * urand(); }
    for (int s = 0; s < 3; s++) {
        int n = sizes[s];
        math_ctx mc = { ca, c, sn, n }, me = { ea, c, sn, n };
        for (int L = 0; L <= top; L++) {
            if (!use_level(L)) continue;
            ok_level_ = L;
            timing t = measure(cossin_loop, &mc);
            emit("ok_vcossin (cos+sin)", "value pair", L ? level_name(L) : "base (scalar libm)", n, t, n, 1.0, "G/s",
                 L ? "libmvec, separate cos and sin loops" : "libm cos() then sin() loops");
        }
        if (n == 1000) {
            timing t = measure(sincos_loop, &mc);
            emit("libm sincos() reference", "value pair", "base (scalar libm)", n, t, n, 1.0, "G/s", "fused scalar sincos per element");
        }
        for (int L = 0; L <= top; L++) {
            if (!use_level(L)) continue;
            ok_level_ = L;
            timing t = measure(exp_loop, &me);
            emit("ok_vexp", "value", L ? level_name(L) : "base (scalar libm)", n, t, n, 1.0, "G/s",
                 L ? "libmvec" : "libm exp() loop");
        }
    }
    free(ca); free(ea); free(c); free(sn);
}

/* ---- 4. memory bandwidth --------------------------------------------------------------- */
/* Streaming read: sum of an array with 16 independent partial sums -- the structure of
 * OK_DOT_BODY (which gcc vectorises at each target) with one operand. */
#define SUM_BODY                                                                               \
    double s[16];                                                                              \
    size_t i = 0;                                                                              \
    int k;                                                                                     \
    for (k = 0; k < 16; k++) s[k] = 0.0;                                                       \
    for (; i + 16 <= n; i += 16)                                                               \
        for (k = 0; k < 16; k++) s[k] += a[i + k];                                             \
    for (k = 0; k < 8; k++) s[k] += s[k + 8];                                                  \
    for (k = 0; k < 4; k++) s[k] += s[k + 4];                                                  \
    return (s[0] + s[2]) + (s[1] + s[3]);
static double sum_base(const double *a, size_t n) { SUM_BODY }
__attribute__((target("avx2,fma"))) static double sum_avx2(const double *a, size_t n) { SUM_BODY }
__attribute__((target("avx512f"))) static double sum_avx512(const double *a, size_t n) { SUM_BODY }

typedef struct { const double *a; size_t n; int level; } bw_ctx;
static void read_loop(void *ctx, long iters) {
    bw_ctx *b = ctx;
    const double *a = b->a;
    double s = 0.0;
    for (long i = 0; i < iters; i++) {
        LAUNDER(a);
        s += b->level == 2 ? sum_avx512(a, b->n) : b->level == 1 ? sum_avx2(a, b->n) : sum_base(a, b->n);
    }
    sink += s;
}

/* FOGD's projection a = sum_k (root x_k) E[idx_k, :] exactly as RandomFourierMap.project
 * (onlinekern/_core/features.pyx): zero a, then one ok_axpy of D per non-zero.  The query
 * cycles through NQ random sparse rows, so the rows of E read change between examples. */
#define NQ 64
typedef struct {
    const double *E; double *acc, *cs, *w; int d, D, nnz;
    int idx[NQ][64]; double x[NQ][64]; double root;
} proj_ctx;

static inline void project(proj_ctx *p, int q) {
    int D = p->D;
    for (int j = 0; j < D; j++) p->acc[j] = 0.0;
    for (int k = 0; k < p->nnz; k++) {
        double v = p->x[q][k] * p->root;
        if (v != 0.0) ok_axpy(D, v, p->E + (ptrdiff_t)p->idx[q][k] * D, p->acc);
    }
}
static void proj_loop(void *ctx, long iters) {
    proj_ctx *p = ctx;
    for (long i = 0; i < iters; i++) { project(p, (int)(i % NQ)); CLOBBER(); }
    sink += p->acc[0];
}
/* RandomFourierMap.features: project, then cos/sin of the D projections */
static void features_loop(void *ctx, long iters) {
    proj_ctx *p = ctx;
    for (long i = 0; i < iters; i++) {
        project(p, (int)(i % NQ));
        ok_vcossin(p->acc, p->cs, p->cs + p->D, p->D);
        CLOBBER();
    }
    sink += p->cs[0];
}
/* one FOGD step that updates (binary, hinge mistake): features, score w.cs (ok_dot of 2D),
 * w += step * cs (ok_axpy of 2D) -- checks that the parts add up */
static void fogd_step_loop(void *ctx, long iters) {
    proj_ctx *p = ctx;
    double s = 0.0;
    for (long i = 0; i < iters; i++) {
        project(p, (int)(i % NQ));
        ok_vcossin(p->acc, p->cs, p->cs + p->D, p->D);
        s += ok_dot(p->w, p->cs, 2 * p->D);
        ok_axpy(2 * p->D, (i & 1) ? -1e-3 : 1e-3, p->cs, p->w);
        CLOBBER();
    }
    sink += s;
}

static void bench_memory(int max_level, int skip_dram, int composites) {
    static const size_t kb[] = { 16, 256, 4096, 262144 };
    static const char *where[] = { "16 KB (L1)", "256 KB (L2)", "4 MB (L3)", "256 MB (DRAM)" };
    int nsz = skip_dram ? 3 : 4;
    size_t nmax = kb[nsz - 1] * 1024 / sizeof(double);
    double *a = dalloc(nmax);
    for (size_t i = 0; i < nmax; i++) a[i] = 1.0 + (double)(i & 1023) * 1e-3;
    for (int s = 0; s < nsz; s++) {
        size_t n = kb[s] * 1024 / sizeof(double);
        for (int L = 0; L <= max_level; L++) {
            if (!use_level(L)) continue;
            bw_ctx b = { a, n, L };
            timing t = measure(read_loop, &b);
            char prim[64];
            snprintf(prim, sizeof prim, "stream read %s", where[s]);
            emit(prim, "double", level_name(L), (long)n, t, (double)n, 8.0, "GB/s", "16-lane sum, one thread");
        }
    }
    free(a);

    /* ijcnn1: d = 22, ~13 non-zeros per row; FOGD D = 1000 */
    static proj_ctx p;
    p.d = 22; p.D = 1000; p.nnz = 13; p.root = sqrt(2.0 * 1.0);
    double *E = dalloc((size_t)p.d * p.D);
    for (int i = 0; i < p.d * p.D; i++) E[i] = nrand();
    p.E = E; p.acc = dalloc(p.D); p.cs = dalloc(2 * p.D); p.w = dalloc(2 * p.D);
    for (int q = 0; q < NQ; q++) {
        random_subset(p.idx[q], p.nnz, p.d);
        for (int k = 0; k < p.nnz; k++) p.x[q][k] = 2.0 * urand() - 1.0;
    }
    for (int i = 0; i < 2 * p.D; i++) p.w[i] = 1e-2 * nrand();
    double madds = (double)p.nnz * p.D;
    at_levels(max_level, proj_loop, &p, "projection a += x_j E[j,:] (13 of 22 rows, D=1000)", "multiply-add",
              (long)madds, madds, 2.0, "GFLOP/s", "RandomFourierMap.project: zero a + 13 ok_axpy of 1000");
    if (composites) {
        at_levels(max_level, features_loop, &p, "composite: FOGD features (project + cossin, D=1000)", "example", 1,
                  1.0, 0.0, "", "check: ~ 13000 x projection + 1000 x cossin(n=1000)");
        at_levels(max_level, fogd_step_loop, &p, "composite: FOGD updating step (features + dot 2D + axpy 2D)",
                  "example", 1, 1.0, 0.0, "", "check: features + 2000 x dot(n=2000) + 2000 x axpy(n=2000)");
    }
    free(E); free(p.acc); free(p.cs); free(p.w);
}

/* ---- 5. Gaussian kernel row over a feature-major support set ----------------------------- */
/* SupportSet._block (onlinekern/_core/support.pyx) for every block of SV_BLOCK = 128 SVs:
 * ok_sqdist_fm over the block, k = -gamma * k, ok_vexp in place; predict adds
 * ok_dot(coef, k) per block (C = 1).  mode 0: distances only, 1: kernel row, 2: predict. */
#define SV_BLOCK 128
typedef struct {
    const double *XT, *sqn, *coef; double *k;
    ptrdiff_t cap, n; int d, nnz, dense, mode; double gamma;
    int idx[NQ][64]; double x[NQ][64];
} krow_ctx;

static void krow_loop(void *ctx, long iters) {
    krow_ctx *c = ctx;
    double s = 0.0;
    for (long it = 0; it < iters; it++) {
        int q = (int)(it % NQ);
        const double *x = c->x[q];
        const int *idx = c->idx[q];
        ptrdiff_t nb = (c->n + SV_BLOCK - 1) / SV_BLOCK;
        for (ptrdiff_t b = 0; b < nb; b++) {
            ptrdiff_t lo = b * SV_BLOCK, hi = lo + SV_BLOCK;
            if (hi > c->n) hi = c->n;
            ok_sqdist_fm(c->XT, c->cap, lo, hi, x, idx, c->nnz, c->dense, c->sqn, c->k);
            if (c->mode >= 1) {
                for (ptrdiff_t i = lo; i < hi; i++) c->k[i] = -c->gamma * c->k[i];
                ok_vexp(c->k + lo, c->k + lo, (int)(hi - lo));
            }
            if (c->mode == 2) s += ok_dot(c->coef + lo, c->k + lo, (int)(hi - lo));
        }
        CLOBBER();
    }
    sink += s + c->k[0];
}

static void bench_kernel_row(int max_level) {
    /* (d, nnz): ijcnn1-like sparse queries (22 features, 13 non-zeros) and cod-rna-like dense 8 */
    static const int cfg[2][2] = { { 22, 13 }, { 8, 8 } };
    static const char *modes[] = { "ok_sqdist_fm only", "kernel row (sqdist_fm + exp)", "predict (kernel row + dot)" };
    static krow_ctx c;
    for (int g = 0; g < 2; g++) {
        c.d = cfg[g][0]; c.nnz = cfg[g][1]; c.dense = c.nnz == c.d;
        c.cap = 1000; c.n = 1000;          /* budget B = 1000, store preallocated to the budget */
        double *XT = dalloc((size_t)c.d * c.cap), *sqn = dalloc(c.cap), *coef = dalloc(c.cap);
        c.k = dalloc(c.cap);
        /* SVs are past examples: same sparsity as the queries */
        for (ptrdiff_t i = 0; i < c.n; i++) {
            int sidx[64];
            random_subset(sidx, c.nnz, c.d);
            for (int k = 0; k < c.nnz; k++) XT[(ptrdiff_t)sidx[k] * c.cap + i] = 2.0 * urand() - 1.0;
            double q = 0.0;
            for (int j = 0; j < c.d; j++) q += XT[(ptrdiff_t)j * c.cap + i] * XT[(ptrdiff_t)j * c.cap + i];
            sqn[i] = q;
            coef[i] = nrand();
        }
        for (int q = 0; q < NQ; q++) {
            random_subset(c.idx[q], c.nnz, c.d);
            for (int k = 0; k < c.nnz; k++) c.x[q][k] = 2.0 * urand() - 1.0;
        }
        c.XT = XT; c.sqn = sqn; c.coef = coef; c.gamma = 1.0;
        for (int mode = 0; mode < 3; mode++) {
            c.mode = mode;
            char prim[128];
            snprintf(prim, sizeof prim, "%s, B=1000, d=%d %s", modes[mode], c.d, c.dense ? "dense" : "nnz=13");
            at_levels(max_level, krow_loop, &c, prim, "SV", c.n, (double)c.n, 0.0, "",
                      c.dense ? "cod-rna-like dense query" : "ijcnn1-like sparse query, feature-major rows");
        }
        free(XT); free(sqn); free(coef); free(c.k);
    }
}

/* ---- main ---------------------------------------------------------------------------- */

/* 1 if name is one of the comma-separated sections in list (NULL: all) */
static int wanted(const char *list, const char *name) {
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

int main(int argc, char **argv) {
    int skip_dram = 0, no_composites = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--target-ms") && i + 1 < argc) target_ns = atof(argv[++i]) * 1e6;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--skip-dram")) skip_dram = 1;
        else if (!strcmp(argv[i], "--no-composites")) no_composites = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--levels") && i + 1 < argc) {
            level_mask = 0;
            for (const char *p = argv[++i]; *p; p++)
                if (*p >= '0' && *p <= '2') level_mask |= 1 << (*p - '0');
        } else {
            fprintf(stderr, "usage: %s [--target-ms MS] [--reps N] [--skip-dram] [--levels 0,1,2] "
                    "[--no-composites] [--only roof,vec|dot,axpy,sqdist,math,mem,krow]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    int max_level = ok_simd_level();     /* CPU support, capped by ONLINEKERN_SIMD */
    printf("{\"meta\": {\"max_level\": %d, \"vector_math\": %d, \"libmvec\": %d, \"target_ms\": %g, "
           "\"reps\": %d},\n \"results\": [",
           max_level, ok_vector_math(),
#ifdef OK_HAVE_LIBMVEC
           1,
#else
           0,
#endif
           target_ns / 1e6, reps);
    if (wanted(only, "roof")) bench_roof(max_level);
    int vec = wanted(only, "vec");
    if (vec || wanted(only, "dot") || wanted(only, "axpy") || wanted(only, "sqdist"))
        bench_dot_axpy(max_level, vec || wanted(only, "dot"), vec || wanted(only, "axpy"), vec || wanted(only, "sqdist"));
    if (wanted(only, "math")) bench_math(max_level);
    if (wanted(only, "mem")) bench_memory(max_level, skip_dram, !no_composites);
    if (wanted(only, "krow")) bench_kernel_row(max_level);
    ok_level_ = -1;
    printf("\n]}\n");
    return 0;
}
