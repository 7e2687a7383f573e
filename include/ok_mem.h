/*
 * ok_mem.h -- large blocks on transparent huge pages, as NumPy's own arrays are.
 *
 * Wide data make a few large structures that every example reads at scattered places: the keyed
 * row cache (64 MiB of random-feature rows), the column map's hash table, a support set's scatter
 * buffers, slab pools and dense rows.  With 4 KiB pages each such read is also a TLB miss (the
 * second-level TLB covers 8 MiB here), whereas a NumPy array of 4 MiB or more is advised onto
 * 2 MiB pages (NumPy's `madvise_hugepage`, on by default on Linux) -- so the stored frequency
 * matrix of narrow data already had them and the keyed rule's cache did not.  ok_advise_huge
 * gives any block of at least OK_HUGE_MIN bytes the same advice (MADV_HUGEPAGE on its page-aligned
 * interior; the kernel backs the 2 MiB-aligned ranges inside with huge pages when it has them).
 * Advice only: contents, addresses and results are unchanged, a refusal is ignored, and where the
 * system has no such advice (not Linux, or THP "never") nothing happens.
 */
#ifndef OK_MEM_H
#define OK_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define OK_HUGE_MIN ((size_t)4 << 20)     /* NumPy's threshold, 4 MiB */

static inline void ok_advise_huge(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p == NULL || bytes < OK_HUGE_MIN) return;
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
    if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p; (void)bytes;
#endif
}

/* malloc / realloc, advised as above.  NULL on failure, as malloc and realloc (realloc leaves the
 * old block in place then). */
static inline void *ok_malloc_big(size_t bytes) {
    void *p = malloc(bytes);
    ok_advise_huge(p, bytes);
    return p;
}

static inline void *ok_realloc_big(void *old, size_t bytes) {
    void *p = realloc(old, bytes);
    ok_advise_huge(p, bytes);
    return p;
}

#endif /* OK_MEM_H */
