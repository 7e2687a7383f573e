/*
 * ok_rng.h -- counter-based random numbers: Philox4x32-10 (Salmon et al., SC 2011).
 *
 * A counter-based generator is a pure function of (key, counter), so a random feature can be
 * regenerated from its index instead of stored (DSG, ALGORITHMS.md §3.13) and any thread can
 * draw any element without shared state.  onlinekern keys it with (seed, stream) and counts with
 * (key1, element index):
 *
 *   ok_uniform(seed, stream, key1, i)  in [0, 1) with 53 random bits
 *   ok_normal(seed, stream, key1, i)   standard normal (Box-Muller on the pair i/2)
 *
 * Element i of a stream uses Philox block (key1, i / 2); its 128 bits give two 53-bit uniforms,
 * and Box-Muller turns them into two normals: element 2j is the cosine branch, 2j+1 the sine
 * branch.  Uniform element i and normal element i^1 come from the same Philox block, so a consumer
 * that draws both kinds from one (seed, stream, key1) must keep their element ranges apart (Shrinking
 * Gradient pads each sample to an even element for this).  The Python twin
 * (onlinekern._core.counter_rng) calls the same functions, so NumPy test
 * oracles see exactly these numbers.
 *
 * Box-Muller runs on blocks of pairs through the dispatched vector kernels of ok_vmath.h (log,
 * and cos/sin from one argument reduction): every element's value depends on its own Philox block
 * only -- ok_normal(i) and ok_normals(...)[k] agree bit for bit at any position -- and, like
 * cos/sin/exp, on the SIMD level (scalar libm at level 0, within a few ulp of it otherwise).
 */
#ifndef OK_RNG_H
#define OK_RNG_H

#include <math.h>
#include <stdint.h>
#include "ok_vmath.h"

#define OK_PHILOX_M0 0xD2511F53u
#define OK_PHILOX_M1 0xCD9E8D57u
#define OK_PHILOX_W0 0x9E3779B9u
#define OK_PHILOX_W1 0xBB67AE85u

static inline void ok_philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4]) {
    uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
    uint32_t k0 = key_in[0], k1 = key_in[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)OK_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)OK_PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += OK_PHILOX_W0;
        k1 += OK_PHILOX_W1;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* The 128-bit block (key1, block) of stream (seed, stream). */
static inline void ok_rng_block(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t block, uint32_t out[4]) {
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32) ^ (stream * 0x85EBCA6Bu)};
    uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)key1, (uint32_t)(key1 >> 32)};
    ok_philox4x32_10(ctr, key, out);
}

static inline double ok_u53(uint32_t hi, uint32_t lo) {
    return (double)((((uint64_t)hi << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, 1): element i of (seed, stream, key1). */
static inline double ok_uniform(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t i) {
    uint32_t b[4];
    ok_rng_block(seed, stream, key1, i >> 1, b);
    return (i & 1) ? ok_u53(b[2], b[3]) : ok_u53(b[0], b[1]);
}

#define OK_BM_CHUNK 64

/* Box-Muller on m <= OK_BM_CHUNK pairs: u1 in (0, 1], u2 in [0, 1) -> (r cos t, r sin t) with
 * r = sqrt(-2 log u1), t = 2 pi u2.  c/s receive the cosine and sine branches; u1 and u2 are
 * overwritten. */
static inline void ok_box_muller_(double *u1, double *u2, double *c, double *s, int m) {
    ok_vlog(u1, u1, m);
    for (int j = 0; j < m; j++) {
        u1[j] = sqrt(-2.0 * u1[j]);
        u2[j] = 6.283185307179586 * u2[j];
    }
    ok_vcossin(u2, c, s, m);
    for (int j = 0; j < m; j++) {
        c[j] = u1[j] * c[j];
        s[j] = u1[j] * s[j];
    }
}

/* Standard normal: element i of (seed, stream, key1). */
static inline double ok_normal(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t i) {
    uint32_t b[4];
    double u1, u2, c, s;
    ok_rng_block(seed, stream, key1, i >> 1, b);
    u1 = 1.0 - ok_u53(b[0], b[1]);          /* (0, 1]: log is finite */
    u2 = ok_u53(b[2], b[3]);
    ok_box_muller_(&u1, &u2, &c, &s, 1);
    return (i & 1) ? s : c;
}

/* out[k] = ok_normal(seed, stream, key1, first + k) for k < n, one Philox call per pair and
 * Box-Muller in vector blocks of OK_BM_CHUNK pairs. */
static inline void ok_normals(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t first, double *out, long n) {
    double u1[OK_BM_CHUNK], u2[OK_BM_CHUNK], c[OK_BM_CHUNK], s[OK_BM_CHUNK];
    uint64_t pair = first >> 1, last = (first + (uint64_t)n - 1) >> 1;   /* pairs touched */
    long k = 0;
    if (n <= 0) return;
    while (pair <= last) {
        int m = 0;
        for (; m < OK_BM_CHUNK && pair + (uint64_t)m <= last; m++) {
            uint32_t b[4];
            ok_rng_block(seed, stream, key1, pair + (uint64_t)m, b);
            u1[m] = 1.0 - ok_u53(b[0], b[1]);
            u2[m] = ok_u53(b[2], b[3]);
        }
        ok_box_muller_(u1, u2, c, s, m);
        for (int j = 0; j < m; j++) {
            uint64_t e = (pair + (uint64_t)j) << 1;          /* the pair's even element */
            if (e >= first && k < n) out[k++] = c[j];
            if (e + 1 >= first && k < n) out[k++] = s[j];
        }
        pair += (uint64_t)m;
    }
}

#endif /* OK_RNG_H */
