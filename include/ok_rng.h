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

/* The uniforms of m <= OK_BM_CHUNK Philox blocks of (seed, stream, key1) -- the consecutive blocks
 * pair0, pair0 + 1, ... or, when blk is not NULL, the blocks blk[0..m) -- as ok_normal takes them: u1[j] = 1 - u53(word 0, word 1) in (0, 1], u2[j] = u53(word 2,
 * word 3).  The ten rounds run over the m blocks side by side (structure of arrays), so each level
 * compiles them to vector code (32 x 32 -> 64-bit multiplies, vpmuludq); integer arithmetic is
 * exact, and the 53-bit integers are converted through two exact int32 halves, so every uniform is
 * the same bits as ok_rng_block + ok_u53 at any SIMD level. */
#define OK_PHILOX_BATCH_BODY                                                                    \
    uint32_t c0[OK_BM_CHUNK], c1[OK_BM_CHUNK], c2[OK_BM_CHUNK], c3[OK_BM_CHUNK];             \
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32) ^ (stream * 0x85EBCA6Bu);      \
    for (int j = 0; j < m; j++) {                                                             \
        uint64_t b = blk ? blk[j] : pair0 + (uint64_t)j;                                      \
        c0[j] = (uint32_t)b; c1[j] = (uint32_t)(b >> 32);                                     \
        c2[j] = (uint32_t)key1; c3[j] = (uint32_t)(key1 >> 32);                               \
    }                                                                                         \
    for (int r = 0; r < 10; r++) {                                                            \
        for (int j = 0; j < m; j++) {                                                         \
            uint64_t p0 = (uint64_t)OK_PHILOX_M0 * c0[j];                                     \
            uint64_t p1 = (uint64_t)OK_PHILOX_M1 * c2[j];                                     \
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[j] ^ k0;                                  \
            uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3[j] ^ k1;                                  \
            c1[j] = (uint32_t)p1; c3[j] = (uint32_t)p0;                                       \
            c0[j] = n0; c2[j] = n2;                                                           \
        }                                                                                     \
        k0 += OK_PHILOX_W0; k1 += OK_PHILOX_W1;                                               \
    }                                                                                         \
    for (int j = 0; j < m; j++) {                                                             \
        /* ((hi << 32 | lo) >> 11) = (hi >> 1) 2^22 + ((hi & 1) << 21 | lo >> 11), both < 2^31 */ \
        double a1 = (double)(int32_t)(c0[j] >> 1) * 4194304.0                                  \
                  + (double)(int32_t)(((c0[j] & 1u) << 21) | (c1[j] >> 11));                  \
        double a2 = (double)(int32_t)(c2[j] >> 1) * 4194304.0                                  \
                  + (double)(int32_t)(((c2[j] & 1u) << 21) | (c3[j] >> 11));                  \
        u1[j] = 1.0 - a1 * (1.0 / 9007199254740992.0);                                         \
        u2[j] = a2 * (1.0 / 9007199254740992.0);                                               \
    }

#ifdef OK_X86
static void ok_philox_uniforms__base_(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t pair0,
                                      const uint64_t *blk, int m, double *u1, double *u2) { OK_PHILOX_BATCH_BODY }
/* AVX2: eight blocks at a time in two vectors of four 64-bit lanes, each lane holding one 32-bit
 * word (vpmuludq multiplies the low halves into the full 64-bit product); the words are then
 * stored back to the arrays and converted as in the plain body. */
__attribute__((target("avx2"))) static void ok_philox_uniforms__avx2_(uint64_t seed, uint32_t stream,
        uint64_t key1, uint64_t pair0, const uint64_t *blk, int m, double *u1, double *u2) {
    uint32_t c0[OK_BM_CHUNK + 8], c1[OK_BM_CHUNK + 8], c2[OK_BM_CHUNK + 8], c3[OK_BM_CHUNK + 8];
    const __m256i lo32 = _mm256_set1_epi64x(0xFFFFFFFFLL);
    const __m256i M0 = _mm256_set1_epi64x(OK_PHILOX_M0), M1 = _mm256_set1_epi64x(OK_PHILOX_M1);
    const __m256i kc2 = _mm256_set1_epi64x((uint32_t)key1), kc3 = _mm256_set1_epi64x((uint32_t)(key1 >> 32));
    uint32_t key0 = (uint32_t)seed, keyb = (uint32_t)(seed >> 32) ^ (stream * 0x85EBCA6Bu);
    for (int j0 = 0; j0 < m; j0 += 8) {
        uint64_t b[8];
        for (int q = 0; q < 8; q++)     /* lanes past m compute a block nobody reads */
            b[q] = blk ? (j0 + q < m ? blk[j0 + q] : 0) : pair0 + (uint64_t)(j0 + q);
        __m256i a0 = _mm256_set_epi64x((uint32_t)b[3], (uint32_t)b[2], (uint32_t)b[1], (uint32_t)b[0]);
        __m256i a1 = _mm256_set_epi64x((uint32_t)(b[3] >> 32), (uint32_t)(b[2] >> 32),
                                       (uint32_t)(b[1] >> 32), (uint32_t)(b[0] >> 32));
        __m256i b0 = _mm256_set_epi64x((uint32_t)b[7], (uint32_t)b[6], (uint32_t)b[5], (uint32_t)b[4]);
        __m256i b1 = _mm256_set_epi64x((uint32_t)(b[7] >> 32), (uint32_t)(b[6] >> 32),
                                       (uint32_t)(b[5] >> 32), (uint32_t)(b[4] >> 32));
        __m256i a2 = kc2, a3 = kc3, b2 = kc2, b3 = kc3;
        uint32_t k0 = key0, k1 = keyb;
        for (int r = 0; r < 10; r++) {
            __m256i K0 = _mm256_set1_epi64x(k0), K1 = _mm256_set1_epi64x(k1);
            __m256i pa0 = _mm256_mul_epu32(a0, M0), pa1 = _mm256_mul_epu32(a2, M1);
            __m256i pb0 = _mm256_mul_epu32(b0, M0), pb1 = _mm256_mul_epu32(b2, M1);
            a0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pa1, 32), a1), K0);
            a2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pa0, 32), a3), K1);
            a1 = _mm256_and_si256(pa1, lo32);
            a3 = _mm256_and_si256(pa0, lo32);
            b0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pb1, 32), b1), K0);
            b2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pb0, 32), b3), K1);
            b1 = _mm256_and_si256(pb1, lo32);
            b3 = _mm256_and_si256(pb0, lo32);
            k0 += OK_PHILOX_W0; k1 += OK_PHILOX_W1;
        }
        {
            uint64_t t[4][8];
            _mm256_storeu_si256((__m256i *)t[0], a0); _mm256_storeu_si256((__m256i *)(t[0] + 4), b0);
            _mm256_storeu_si256((__m256i *)t[1], a1); _mm256_storeu_si256((__m256i *)(t[1] + 4), b1);
            _mm256_storeu_si256((__m256i *)t[2], a2); _mm256_storeu_si256((__m256i *)(t[2] + 4), b2);
            _mm256_storeu_si256((__m256i *)t[3], a3); _mm256_storeu_si256((__m256i *)(t[3] + 4), b3);
            for (int q = 0; q < 8; q++) {
                c0[j0 + q] = (uint32_t)t[0][q]; c1[j0 + q] = (uint32_t)t[1][q];
                c2[j0 + q] = (uint32_t)t[2][q]; c3[j0 + q] = (uint32_t)t[3][q];
            }
        }
    }
    for (int j = 0; j < m; j++) {
        double a1 = (double)(int32_t)(c0[j] >> 1) * 4194304.0 + (double)(int32_t)(((c0[j] & 1u) << 21) | (c1[j] >> 11));
        double a2 = (double)(int32_t)(c2[j] >> 1) * 4194304.0 + (double)(int32_t)(((c2[j] & 1u) << 21) | (c3[j] >> 11));
        u1[j] = 1.0 - a1 * (1.0 / 9007199254740992.0);
        u2[j] = a2 * (1.0 / 9007199254740992.0);
    }
}
#define ok_philox_uniforms__avx512_ ok_philox_uniforms__avx2_
OK_DISPATCH(void, ok_philox_uniforms_, (uint64_t seed, uint32_t stream, uint64_t key1, uint64_t pair0,
                                        const uint64_t *blk, int m, double *u1, double *u2),
            (seed, stream, key1, pair0, blk, m, u1, u2))
#else
static void ok_philox_uniforms_(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t pair0,
                                const uint64_t *blk, int m, double *u1, double *u2) { OK_PHILOX_BATCH_BODY }
#endif

/* out[k] = ok_normal(seed, stream, key1, first + k) for k < n: Philox on blocks of OK_BM_CHUNK
 * pairs side by side (ok_philox_uniforms_) and Box-Muller in the same vector blocks. */
static inline void ok_normals(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t first, double *out, long n) {
    double u1[OK_BM_CHUNK], u2[OK_BM_CHUNK], c[OK_BM_CHUNK], s[OK_BM_CHUNK];
    uint64_t pair = first >> 1, last = (first + (uint64_t)n - 1) >> 1;   /* pairs touched */
    long k = 0;
    if (n <= 0) return;
    while (pair <= last) {
        int m = (last - pair + 1) < (uint64_t)OK_BM_CHUNK ? (int)(last - pair + 1) : OK_BM_CHUNK;
        ok_philox_uniforms_(seed, stream, key1, pair, NULL, m, u1, u2);
        ok_box_muller_(u1, u2, c, s, m);
        for (int j = 0; j < m; j++) {
            uint64_t e = (pair + (uint64_t)j) << 1;          /* the pair's even element */
            if (e >= first && k < n) out[k++] = c[j];
            if (e + 1 >= first && k < n) out[k++] = s[j];
        }
        pair += (uint64_t)m;
    }
}

/* out[k] = ok_normal(seed, stream, key1, first + idx[k]) for k < n (any n, any idx >= 0): the
 * normals of scattered elements -- a sparse row's columns -- in the vector blocks of ok_normals,
 * the same bits as element-by-element ok_normal. */
static inline void ok_normals_at(uint64_t seed, uint32_t stream, uint64_t key1, uint64_t first, const int *idx,
                                 double *out, long n) {
    double u1[OK_BM_CHUNK], u2[OK_BM_CHUNK], c[OK_BM_CHUNK], s[OK_BM_CHUNK];
    uint64_t blk[OK_BM_CHUNK];
    for (long k0 = 0; k0 < n; k0 += OK_BM_CHUNK) {
        int m = (n - k0) < OK_BM_CHUNK ? (int)(n - k0) : OK_BM_CHUNK;
        for (int j = 0; j < m; j++) blk[j] = (first + (uint64_t)idx[k0 + j]) >> 1;
        ok_philox_uniforms_(seed, stream, key1, 0, blk, m, u1, u2);
        ok_box_muller_(u1, u2, c, s, m);
        for (int j = 0; j < m; j++) out[k0 + j] = ((first + (uint64_t)idx[k0 + j]) & 1) ? s[j] : c[j];
    }
}

#endif /* OK_RNG_H */
