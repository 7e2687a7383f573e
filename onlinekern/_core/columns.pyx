# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""ColumnMap: column index -> compact slot, for state that must follow the columns seen.

A LIBSVM file may number its columns up to millions (hashed text, URLs) while each row holds a few
dozen nonzeros.  State kept per column (a dense support vector, a per-column bandwidth, a cached
random-feature row) then lives in arrays indexed by *slot*: the columns in the order they were
first added.  Lookups run without the GIL; growth is geometric and reports failure (-1), never
crashes.  A bucket keeps its column and slot side by side (one cache line per probe: on wide data
the table outgrows the caches and every lookup of a rare column is a memory access; from 4 MiB the
table sits on huge pages, include/ok_mem.h, so that access is not also a TLB miss).  Slots are
never reused, and renumbered only by ``renumber``, whose caller remaps the state it indexes by
slot (a support set dropping the columns its vectors no longer hold); state indexed by slot
otherwise stays valid.
"""
from libc.stdlib cimport free
from libc.string cimport memset

import numpy as np

cdef extern from *:
    void __builtin_prefetch(const void* p) nogil
cdef extern from "ok_mem.h" nogil:
    void* ok_malloc_big(size_t bytes)
    void* ok_realloc_big(void* old, size_t bytes)


cdef inline Py_ssize_t _bucket(int col, Py_ssize_t hcap) noexcept nogil:
    # Fibonacci hashing of the 32-bit column; hcap is a power of two
    return <Py_ssize_t>((<unsigned long long>(<unsigned int>col) * 11400714819323198485ULL) >> 40) & (hcap - 1)


cdef class ColumnMap:
    """Columns numbered in the order they are first added.

    Parameters
    ----------
    columns : array of int, optional
        Columns to add first, in order (a saved map's :meth:`columns`).
    """

    def __cinit__(self, columns=None):
        self.hcap = 0
        self.ccap = 0
        self.n = 0
        if self._grow() != 0:
            raise MemoryError("cannot allocate a column map")
        if columns is not None:
            self.add_all(columns)

    def __dealloc__(self):
        free(self.kv); free(self.cols)

    cdef int _grow(self) noexcept nogil:
        """Double the hash table (rehashing) and the slot array.  0, or -1 without memory."""
        cdef Py_ssize_t ncap = 64 if self.hcap == 0 else 2 * self.hcap, i, b
        cdef int* nkv = <int*>ok_malloc_big(2 * ncap * sizeof(int))   # huge pages from 4 MiB (ok_mem.h)
        cdef void* p
        if nkv == NULL:
            return -1
        p = ok_realloc_big(self.cols, (ncap // 2) * sizeof(int))
        if p == NULL:
            free(nkv)
            return -1
        self.cols = <int*>p
        self.ccap = ncap // 2
        memset(nkv, 0xff, 2 * ncap * sizeof(int))          # every key -1
        for i in range(self.n):
            b = _bucket(self.cols[i], ncap)
            while nkv[2 * b] != -1:
                b = (b + 1) & (ncap - 1)
            nkv[2 * b] = self.cols[i]
            nkv[2 * b + 1] = <int>i
        free(self.kv)
        self.kv = nkv
        self.hcap = ncap
        return 0

    cdef int get(self, int col) noexcept nogil:
        """Slot of ``col``, or -1 if it was never added."""
        cdef Py_ssize_t b = _bucket(col, self.hcap)
        cdef const int* kv = self.kv
        while kv[2 * b] != -1:
            if kv[2 * b] == col:
                return kv[2 * b + 1]
            b = (b + 1) & (self.hcap - 1)
        return -1

    cdef int add(self, int col) noexcept nogil:
        """Slot of ``col``, adding it (as slot n) if new; -1 without memory.  ``col`` >= 0."""
        cdef Py_ssize_t b = _bucket(col, self.hcap)
        while self.kv[2 * b] != -1:
            if self.kv[2 * b] == col:
                return self.kv[2 * b + 1]
            b = (b + 1) & (self.hcap - 1)
        if 2 * (self.n + 1) > self.hcap:                   # load <= 1/2
            if self._grow() != 0:
                return -1
            return self.add(col)
        self.kv[2 * b] = col
        self.kv[2 * b + 1] = <int>self.n
        self.cols[self.n] = col
        self.n += 1
        return <int>(self.n - 1)

    cdef int renumber(self, const int* keep) noexcept nogil:
        """Keep the slots with ``keep[slot] != 0`` (``keep`` has n entries), renumbered 0, 1, ... in
        their order, and drop the others; the table is rebuilt at the size the kept columns need.
        A kept column's slot never rises, so the owner can move its slot-indexed state down in
        place, in slot order.  0, or -1 without memory (the map unchanged)."""
        cdef Py_ssize_t i, m = 0, ncap = 64, b
        cdef int* nkv
        cdef void* p
        for i in range(self.n):
            m += keep[i] != 0
        while 2 * (m + 1) > ncap:                          # load <= 1/2, as add keeps it
            ncap *= 2
        nkv = <int*>ok_malloc_big(2 * ncap * sizeof(int))
        if nkv == NULL:
            return -1
        memset(nkv, 0xff, 2 * ncap * sizeof(int))
        m = 0
        for i in range(self.n):
            if keep[i] != 0:
                self.cols[m] = self.cols[i]
                b = _bucket(self.cols[m], ncap)
                while nkv[2 * b] != -1:
                    b = (b + 1) & (ncap - 1)
                nkv[2 * b] = self.cols[m]
                nkv[2 * b + 1] = <int>m
                m += 1
        free(self.kv)
        self.kv = nkv
        self.hcap = ncap
        self.n = m
        p = ok_realloc_big(self.cols, (ncap // 2) * sizeof(int))
        if p != NULL:                                      # (a smaller block: the old one serves)
            self.cols = <int*>p
            self.ccap = ncap // 2
        return 0

    cdef void _prefetch(self, const int* idx, int nnz) noexcept nogil:
        """Ask for the first buckets of a row's columns before probing them one by one: on wide data
        the table outgrows the caches, and the row's misses then overlap instead of queueing."""
        cdef int k
        for k in range(nnz):
            __builtin_prefetch(self.kv + 2 * _bucket(idx[k], self.hcap))

    cdef void lookup(self, const int* idx, int nnz, int* out) noexcept nogil:
        """out[k] = slot of idx[k], or -1 for a column never added."""
        cdef int k
        self._prefetch(idx, nnz)
        for k in range(nnz):
            out[k] = self.get(idx[k])

    cdef int insert(self, const int* idx, int nnz, int* out) noexcept nogil:
        """out[k] = slot of idx[k], adding new columns in the order they occur.  0, or -1."""
        cdef int k
        self._prefetch(idx, nnz)
        for k in range(nnz):
            out[k] = self.add(idx[k])
            if out[k] < 0:
                return -1
        return 0

    def __len__(self):
        return self.n

    def add_all(self, columns):
        """Add ``columns`` in order (those present keep their slot); returns their slots."""
        cols = np.ascontiguousarray(columns, dtype=np.int64)
        if cols.size and (cols.min() < 0 or cols.max() > 2147483647):
            raise ValueError("columns must lie in [0, 2**31 - 1]")
        c32 = np.ascontiguousarray(cols, dtype=np.int32)
        out = np.empty(c32.shape[0], dtype=np.int32)
        cdef const int[::1] cv = c32
        cdef int[::1] ov = out
        if c32.shape[0] and self.insert(&cv[0], <int>c32.shape[0], &ov[0]) != 0:
            raise MemoryError("cannot grow the column map")
        return out

    def slots(self, columns):
        """Slots of ``columns`` (-1 where never added), as an int32 array."""
        c32 = np.ascontiguousarray(columns, dtype=np.int32)
        out = np.empty(c32.shape[0], dtype=np.int32)
        cdef const int[::1] cv = c32
        cdef int[::1] ov = out
        if c32.shape[0]:
            self.lookup(&cv[0], <int>c32.shape[0], &ov[0])
        return out

    def columns(self):
        """The columns by slot (int32 array of length len(self)): slot i holds column columns()[i]."""
        out = np.empty(self.n, dtype=np.int32)
        cdef int[::1] ov = out
        cdef Py_ssize_t i
        for i in range(self.n):
            ov[i] = self.cols[i]
        return out

    def nbytes(self):
        """Bytes allocated (hash table and slot array)."""
        return self.hcap * 2 * sizeof(int) + self.ccap * sizeof(int)

    def __reduce__(self):
        return (ColumnMap, (self.columns(),))
