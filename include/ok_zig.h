/*
 * ok_zig.h -- keyed standard normals by a 256-layer ziggurat: the keyed random-feature rows of
 * wide data, version 2 (include/ok_rowcache.h; version 1 is ok_normals of ok_rng.h).
 *
 * Row `key1` of stream (seed, stream) is a sequence of standard normals z_0, z_1, ...:
 *
 *   key     = words 0-1 of Philox block (key1, 0) of (seed, stream)     (one block per row)
 *   w(c)    = mix64(key + (c + 1) * 0x9E3779B97F4A7C15)                 (SplitMix64, counter c)
 *   z_j     = the ziggurat on w(j << 16), then w(j << 16 | 1), ... while it rejects
 *
 * so every element is a pure function of (seed, stream, key1, j): element j of a row is the same
 * bits whatever the row's length and whatever else was drawn, like ok_normal's.  The ziggurat is
 * Marsaglia and Tsang's (J. Stat. Softw. 5(8), 2000) with Doornik's one-word fast path (ZIGNOR,
 * 2005): the low 8 bits of a word pick the layer i, its top 53 bits a signed u in [-1, 1);
 * |u| < x_{i+1} / x_i returns u x_i (98.8 % of the draws: one multiply-xorshift hash and a
 * comparison, no log or cos); otherwise the wedge (exp of the two layer edges against a fresh
 * uniform) or, in the base layer, Marsaglia's tail beyond R.  The tables (include/ok_zigtab.h,
 * tools/make_zigtab.py) are exact literals; the slow paths call libm's exp and log, which the
 * rows' values then depend on (as version 1's depend on the SIMD level's log and cos/sin).
 * Measured (AVX2 EPYC): ~3.3 ns per normal against ~9 ns for Philox + Box-Muller.
 * SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014; Stafford's "Mix13") on a counter is a
 * bijection of 64-bit words with full avalanche; the per-row key comes from Philox, so rows are
 * as independent as Philox blocks.
 */
#ifndef OK_ZIG_H
#define OK_ZIG_H

#include <math.h>
#include <stdint.h>
#include "ok_rng.h"
#include "ok_zigtab.h"

static inline uint64_t ok_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The key of row key1 of (seed, stream). */
static inline uint64_t ok_zig_key(uint64_t seed, uint32_t stream, uint64_t key1) {
    uint32_t b[4];
    ok_rng_block(seed, stream, key1, 0, b);
    return ((uint64_t)b[0] << 32) | b[1];
}

static inline uint64_t ok_zig_word(uint64_t key, uint64_t c) {
    return ok_mix64(key + (c + 1) * 0x9E3779B97F4A7C15ULL);
}

/* A uniform in (0, 1] from a word's top 53 bits (log is finite). */
static inline double ok_zig_u01(uint64_t w) {
    return (double)((w >> 11) + 1) * 0x1p-53;
}

/* Element j past the fast path: w = w(j << 16) did not fall inside its layer's rectangle. */
static double ok_zig_slow_(uint64_t key, uint64_t j, uint64_t w) {
    uint64_t c = j << 16;
    for (;;) {
        int i = (int)(w & 255);
        double u = (double)((int64_t)w >> 11) * 0x1p-52;
        if (fabs(u) < OK_ZIG_RATIO[i])
            return u * OK_ZIG_X[i];
        if (i == 0) {                   /* the tail beyond R (Marsaglia 1964) */
            double x, y;
            do {
                x = log(ok_zig_u01(ok_zig_word(key, ++c))) / OK_ZIG_R;
                y = log(ok_zig_u01(ok_zig_word(key, ++c)));
            } while (-2.0 * y < x * x);
            return u < 0 ? x - OK_ZIG_R : OK_ZIG_R - x;
        } else {                        /* the wedge between x_{i+1} and x_i */
            double x = u * OK_ZIG_X[i];
            double f0 = exp(-0.5 * (OK_ZIG_X[i] * OK_ZIG_X[i] - x * x));
            double f1 = exp(-0.5 * (OK_ZIG_X[i + 1] * OK_ZIG_X[i + 1] - x * x));
            if (f1 + ok_zig_u01(ok_zig_word(key, ++c)) * (f0 - f1) < 1.0)
                return x;
        }
        w = ok_zig_word(key, ++c);
    }
}

/* out[k] = z_k of row key1 of (seed, stream), k < n. */
static inline void ok_zig_normals(uint64_t seed, uint32_t stream, uint64_t key1, double *out, long n) {
    uint64_t key = ok_zig_key(seed, stream, key1);
    for (long j = 0; j < n; j++) {
        uint64_t w = ok_zig_word(key, (uint64_t)j << 16);
        int i = (int)(w & 255);
        double u = (double)((int64_t)w >> 11) * 0x1p-52;
        out[j] = fabs(u) < OK_ZIG_RATIO[i] ? u * OK_ZIG_X[i] : ok_zig_slow_(key, (uint64_t)j, w);
    }
}

#endif /* OK_ZIG_H */
