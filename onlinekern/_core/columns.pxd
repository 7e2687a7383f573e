# ColumnMap: the columns a model has seen, numbered in order of first appearance (slots 0, 1, ...).
# Wide sparse data (millions of possible columns, a few thousand present) keep their per-column
# state -- support vectors over compact columns, RRF's bandwidths, random-feature rows -- in
# arrays of len(map) rather than of the largest column index.  Open addressing, linear probing.
cimport cython


@cython.final
cdef class ColumnMap:
    cdef int* kv                        # 2 hcap: bucket b holds (column or -1 if empty, slot) at 2b, 2b + 1
    cdef Py_ssize_t hcap                # power of two, > 2 * n
    cdef int* cols                      # ccap: slot -> column
    cdef Py_ssize_t ccap
    cdef readonly Py_ssize_t n          # columns mapped
    cdef int get(self, int col) noexcept nogil
    cdef int add(self, int col) noexcept nogil
    cdef int _grow(self) noexcept nogil
    cdef int renumber(self, const int* keep) noexcept nogil
    cdef void _prefetch(self, const int* idx, int nnz) noexcept nogil
    cdef void lookup(self, const int* idx, int nnz, int* out) noexcept nogil
    cdef int insert(self, const int* idx, int nnz, int* out) noexcept nogil
