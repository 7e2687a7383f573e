/*
 * ok_rowcache.h -- a bounded cache of keyed random-feature rows.
 *
 * On wide data the frequency matrix E (d x D) is never stored: row c (the D frequencies of input
 * column c) is E[c, j] = ok_normal(seed, stream, c, j), j < D, drawn on demand by the counter-based
 * generator of ok_rng.h.  Generation is a pure function of (seed, stream, c), so a row is the same
 * bits wherever, whenever and however often it is drawn, and whatever the cache holds: the cache
 * only decides how often a row is regenerated, never what it contains.
 *
 * Layout: `nsets` sets of `ways` lines (8-way set associative, or fewer ways when the cache holds
 * fewer than 8 rows); a column's set is a Fibonacci hash of the column, its line within the set
 * is found by comparing tags, and a miss replaces an empty line, else the least recently used
 * line not hit since it was drawn, else the least recently used one: a row seen once -- most of a
 * wide stream's columns -- does not push out the rows its examples keep asking for (on a Zipf
 * text stream over 2^24 columns, 262,144 rows, RRF's default cache: 18.7 % misses with plain LRU,
 * 15.2 % this way; the unavoidable first draws are 3.1 %).  One comparison decides it: a hit sets
 * the top bit of the line's use tick (OK_ROWCACHE_REUSED), so every line drawn and never hit
 * since orders before every line that was.  A set's tags and ticks share one 64-byte line (ticks
 * of 31 bits, rescaled by ok_rowcache_epoch), so a lookup costs one miss of bookkeeping, not two;
 * a miss asks for the victim row's lines before drawing it.  The rows are one malloc'ed block,
 * resident only where rows are written, and advised onto transparent huge pages (ok_mem.h), as
 * NumPy advises the stored matrix of narrow data, so that a row's read is not also a TLB miss; the
 * price is residency in 2 MiB pieces (rows are spread over the sets, so a few thousand rows
 * touch every piece).
 * A row pointer returned by ok_rowcache_row stays valid until the next call (a later miss may
 * replace it); ok_rowcache_pin keeps a chunk of rows valid together (lines used since a tick are
 * never replaced; a row that finds its whole set pinned is drawn into caller scratch), for
 * ok_project_rows, the register-blocked projection over row pointers.
 */
#ifndef OK_ROWCACHE_H
#define OK_ROWCACHE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ok_mem.h"
#include "ok_rng.h"
#include "ok_zig.h"
#include "ok_vmath.h"

/* One set's bookkeeping in one 64-byte line: the columns its lines hold (-1: empty) and their use
 * ticks, so a lookup touches one line of bookkeeping besides the row itself. */
typedef struct {
    int32_t tag[8];         /* column held, or -1 */
    uint32_t used[8];       /* tick of the last use (0: never); top bit: hit since drawn */
} ok_rowcache_set;

typedef struct {
    int D;                  /* row length */
    int ways;               /* lines per set (1..8) */
    long nsets;             /* sets */
    double *rows;           /* nsets * ways * D */
    ok_rowcache_set *sets;  /* nsets, 64-byte aligned */
    uint64_t tick;          /* at most tick_limit after a call of ok_rowcache_epoch */
    uint64_t tick_limit;
    uint64_t seed;
    uint32_t stream;
    int version;            /* the rows' generator: 1 ok_normals (Philox + Box-Muller), 2 ok_zig_normals */
    long long hits, misses, epochs;
} ok_rowcache;

/* The bit of a line's use tick that marks a hit since the line was drawn (ticks stay below it). */
#define OK_ROWCACHE_REUSED (1u << 31)
/* ok_rowcache_epoch halves every tick once the clock passes tick_limit = 16 lines, at least
 * OK_ROWCACHE_TICKS and at most 2^30 (below the flag bit): its pass over the lines comes once in
 * at least 8 lines' worth of lookups, and any long run -- and the tests -- take this path. */
#define OK_ROWCACHE_TICKS (1u << 20)

/* Lines for `bytes` of rows of D doubles (at least 1). */
static inline long ok_rowcache_lines(long D, size_t bytes) {
    size_t lines = bytes / ((size_t)D * sizeof(double));
    return lines < 1 ? 1 : (long)lines;
}

/* Set up a cache of about `bytes` of rows (at least one row) of generator `version` (1 or 2).  0,
 * or -1 without memory. */
static inline int ok_rowcache_init(ok_rowcache *c, uint64_t seed, uint32_t stream, int version, int D,
                                   size_t bytes) {
    long lines = ok_rowcache_lines(D, bytes), i;
    int w;
    c->D = D;
    c->ways = lines < 8 ? (int)lines : 8;
    c->nsets = lines / c->ways;
    lines = c->nsets * c->ways;
    c->rows = (double *)ok_malloc_big((size_t)lines * (size_t)D * sizeof(double));   /* huge pages */
    c->sets = (ok_rowcache_set *)aligned_alloc(64, (size_t)c->nsets * sizeof(ok_rowcache_set));
    c->tick = 0;
    c->tick_limit = 16 * (uint64_t)lines;
    if (c->tick_limit < OK_ROWCACHE_TICKS) c->tick_limit = OK_ROWCACHE_TICKS;
    if (c->tick_limit > (1u << 30)) c->tick_limit = 1u << 30;
    c->seed = seed;
    c->stream = stream;
    c->version = version;
    c->hits = c->misses = c->epochs = 0;
    if (c->rows == NULL || c->sets == NULL) {
        free(c->rows); free(c->sets);
        c->rows = NULL; c->sets = NULL;
        return -1;
    }
    for (i = 0; i < c->nsets; i++)
        for (w = 0; w < 8; w++) { c->sets[i].tag[w] = -1; c->sets[i].used[w] = 0; }
    return 0;
}

static inline void ok_rowcache_free(ok_rowcache *c) {
    free(c->rows); free(c->sets);
    c->rows = NULL; c->sets = NULL;
}

/* Keep the clock within 31 bits: past tick_limit, halve it and every line's tick (flags kept),
 * which keeps their order up to ties.  Call it only where no row is pinned (ok_rowcache_pin
 * compares ticks with a chunk's start): the projection calls it before each row, and
 * ok_rowcache_row before each lookup. */
static inline void ok_rowcache_epoch(ok_rowcache *c) {
    long i;
    int w;
    if (c->tick < c->tick_limit)
        return;
    for (i = 0; i < c->nsets; i++)
        for (w = 0; w < c->ways; w++) {
            uint32_t u = c->sets[i].used[w];
            c->sets[i].used[w] = (u & OK_ROWCACHE_REUSED) | ((u & ~OK_ROWCACHE_REUSED) >> 1);
        }
    c->tick >>= 1;
    c->epochs++;
}

/* The set of column `col`: a Fibonacci hash of the column. */
static inline long ok_rowcache_set_of(const ok_rowcache *c, int col) {
    return c->nsets == 1 ? 0
         : (long)((((uint64_t)(uint32_t)col * 11400714819323198485ULL) >> 32) * (uint64_t)c->nsets >> 32);
}

/* Ask for the lines of a row about to be overwritten, for writing: a victim line of a large cache
 * is rarely in the CPU's caches, and the row's stores would each wait for their line to arrive;
 * requested before the row is drawn, the lines arrive while its normals are computed.  At most
 * the first OK_BM_CHUNK pairs' lines (1 KiB, what ok_normals computes before its first store):
 * more requests than the core can keep in flight would only wait, and the stores that follow
 * run in order, which the hardware prefetcher follows. */
static inline void ok_rowcache_prefetch_(const double *row, int D) {
    const char *p = (const char *)row;
    const char *end = (const char *)(row + (D < 2 * OK_BM_CHUNK ? D : 2 * OK_BM_CHUNK));
    for (; p < end; p += 64) __builtin_prefetch(p, 1, 3);
}

/* Draw row `col` into `row` (D doubles) with the cache's generator. */
static inline void ok_rowcache_draw_(const ok_rowcache *c, int col, double *row) {
    if (c->version == 1)
        ok_normals(c->seed, c->stream, (uint64_t)(uint32_t)col, 0, row, c->D);
    else
        ok_zig_normals(c->seed, c->stream, (uint64_t)(uint32_t)col, row, c->D);
}

/* Row `col` (>= 0) of the keyed matrix: D doubles, valid until the next call. */
static inline const double *ok_rowcache_row(ok_rowcache *c, int col) {
    long set = ok_rowcache_set_of(c, col);
    ok_rowcache_set *st = c->sets + set;
    int victim = 0, w;
    double *row;
    ok_rowcache_epoch(c);
    c->tick++;
    for (w = 0; w < c->ways; w++) {
        if (st->tag[w] == col) {
            st->used[w] = (uint32_t)c->tick | OK_ROWCACHE_REUSED;
            c->hits++;
            return c->rows + ((size_t)set * (size_t)c->ways + (size_t)w) * (size_t)c->D;
        }
        if (st->used[w] < st->used[victim]) victim = w;
    }
    row = c->rows + ((size_t)set * (size_t)c->ways + (size_t)victim) * (size_t)c->D;
    ok_rowcache_prefetch_(row, c->D);
    ok_rowcache_draw_(c, col, row);
    st->tag[victim] = col;
    st->used[victim] = (uint32_t)c->tick;
    c->misses++;
    return row;
}

/* Ask for the bookkeeping line of column `col`'s set, a lookup soon to come (the projection asks
 * for a chunk's sets before it looks them up, and for the next chunk's while it works on this one:
 * on a wide stream most sets are not in the CPU's caches, and the lookups would wait for each in
 * turn). */
static inline void ok_rowcache_touch(const ok_rowcache *c, int col) {
    __builtin_prefetch(c->sets + ok_rowcache_set_of(c, col), 1, 3);
}

/* Ask for the lines of a row just found, for reading: the projection reads the chunk's rows
 * together, after the chunk's lookups, so a hit's lines arrive while the next rows are looked up
 * or drawn. */
static inline void ok_rowcache_prefetch_row_(const double *row, int D) {
    const char *p = (const char *)row, *end = (const char *)(row + D);
    for (; p < end; p += 64) __builtin_prefetch(p, 0, 3);
}

/* Row `col` for use together with every row fetched since tick t0 (the rows of one chunk of
 * nonzeros): those lines are never replaced; when every line of the column's set is one of them,
 * the row is drawn into `spare` (D doubles) instead.  The pointer stays valid while the chunk's
 * fetches go on. */
static inline const double *ok_rowcache_pin(ok_rowcache *c, int col, uint64_t t0, double *spare) {
    long set = ok_rowcache_set_of(c, col);
    ok_rowcache_set *st = c->sets + set;
    int victim = -1, w;
    double *row;
    c->tick++;
    for (w = 0; w < c->ways; w++) {
        if (st->tag[w] == col) {
            st->used[w] = (uint32_t)c->tick | OK_ROWCACHE_REUSED;
            c->hits++;
            row = c->rows + ((size_t)set * (size_t)c->ways + (size_t)w) * (size_t)c->D;
            ok_rowcache_prefetch_row_(row, c->D);
            return row;
        }
        if ((st->used[w] & ~OK_ROWCACHE_REUSED) <= t0 && (victim < 0 || st->used[w] < st->used[victim]))
            victim = w;
    }
    c->misses++;
    if (victim < 0) {                          /* the whole set holds this chunk's rows */
        ok_rowcache_draw_(c, col, spare);
        return spare;
    }
    row = c->rows + ((size_t)set * (size_t)c->ways + (size_t)victim) * (size_t)c->D;
    ok_rowcache_prefetch_(row, c->D);
    ok_rowcache_draw_(c, col, row);
    st->tag[victim] = col;
    st->used[victim] = (uint32_t)c->tick;
    return row;
}

/* a[j] (+)= sum_k v[k] rows[k][j], j < D, k < m: ok_project's register-blocked pass over row
 * pointers.  init = 0 starts from zero, init = 1 continues the sums in a; each output is the same
 * chain of multiplies and adds at every level and however the nonzeros are split into calls. */
#define OK_PROJECT_ROWS_BODY(VT, W)                                                           \
    int j = 0, k, t;                                                                          \
    VT zero_;                                                                                 \
    for (t = 0; t < W; t++) zero_[t] = 0.0;                                                   \
    for (; j + 4 * W <= D; j += 4 * W) {                                                      \
        VT a0 = zero_, a1 = zero_, a2 = zero_, a3 = zero_;                                    \
        if (init) {                                                                           \
            a0 = OK_VLOAD(VT, a + j); a1 = OK_VLOAD(VT, a + j + W);                           \
            a2 = OK_VLOAD(VT, a + j + 2 * W); a3 = OK_VLOAD(VT, a + j + 3 * W);               \
        }                                                                                     \
        for (k = 0; k < m; k++) {                                                             \
            const double *r = rows[k] + j, vk = v[k];                                         \
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
        VT a0 = init ? OK_VLOAD(VT, a + j) : zero_;                                           \
        for (k = 0; k < m; k++)                                                               \
            a0 += OK_VLOAD(VT, rows[k] + j) * v[k];                                           \
        memcpy(a + j, &a0, sizeof a0);                                                        \
    }                                                                                         \
    if (j < D) {           /* the last D % W (< 8) outputs: independent scalar chains */     \
        const int rem = D - j;                                                                \
        double s_[7] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};                                   \
        double s0, s1, s2, s3, s4, s5, s6;                                                    \
        if (init) for (t = 0; t < rem; t++) s_[t] = a[j + t];                                 \
        s0 = s_[0]; s1 = s_[1]; s2 = s_[2]; s3 = s_[3]; s4 = s_[4]; s5 = s_[5]; s6 = s_[6];   \
        for (k = 0; k < m; k++) {                                                             \
            const double vk = v[k], *r = rows[k] + j;                                         \
            s0 += r[0] * vk;                                                                  \
            if (rem > 1) s1 += r[1] * vk;                                                     \
            if (rem > 2) s2 += r[2] * vk;                                                     \
            if (rem > 3) s3 += r[3] * vk;                                                     \
            if (rem > 4) s4 += r[4] * vk;                                                     \
            if (rem > 5) s5 += r[5] * vk;                                                     \
            if (rem > 6) s6 += r[6] * vk;                                                     \
        }                                                                                     \
        s_[0] = s0; s_[1] = s1; s_[2] = s2; s_[3] = s3; s_[4] = s4; s_[5] = s5; s_[6] = s6;   \
        for (t = 0; t < rem; t++) a[j + t] = s_[t];                                           \
    }
OK_MULTI_W(void, ok_project_rows, (int D, int m, const double *restrict v, const double *const *rows,
                                   double *restrict a, int init), (D, m, v, rows, a, init),
           OK_PROJECT_ROWS_BODY, (ok_v2d_, 2), (ok_v4d_, 4), (ok_v8d_, 8))

/* Bytes held (rows and the sets' bookkeeping, whether or not touched yet). */
static inline size_t ok_rowcache_bytes(const ok_rowcache *c) {
    size_t lines = (size_t)c->nsets * (size_t)c->ways;
    return lines * (size_t)c->D * sizeof(double) + (size_t)c->nsets * sizeof(ok_rowcache_set);
}

#endif /* OK_ROWCACHE_H */
