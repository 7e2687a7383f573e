# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""SupportSet, the growable support-vector store, and KernelCore, the base of kernel learners.

A kernel expansion f(x) = sum_i alpha_i k(x_i, x) with the Gaussian kernel
k(x, x') = exp(-gamma ||x - x'||^2) (ALGORITHMS.md §1.3).  SVs are stored densely (d doubles
each) with cached squared norms, so a sparse query costs O(nnz) per SV (a gather) and a dense one
a contiguous dot; a feature-major mirror (XT[j * cap + i] = x_i[j]) lets the kernel row run
across SVs in vector lanes (include/ok_kernel.h).  Coefficients carry one global scale (alpha_i = scale * coef_i), so shrinking
every alpha (OGD's 1 - eta*lambda, BSGD's 1 - 1/t, Forgetron's phi) is O(1) (§1.1).  Removal
moves the last slot into the hole; an insertion stamp per slot keeps the FIFO order for learners
that remove the oldest SV.  Growth is geometric and happens inside the nogil step only when the
store is full (bounded by the budget when there is one); failure is reported, never a crash.

Wide data (issue 26).  The layout follows the data, never the learner:

* dense (d <= WIDE_D = 4096): the rows over the original columns, as described above -- narrow
  data keep their layout, their speed and their bits;
* compact (d > WIDE_D): the rows over the columns that stored SVs hold (a ColumnMap, numbered in
  order of first appearance), w doubles each with w >= columns + 1, so the last compact column is
  always zero.  A query's columns are translated once per kernel row (qidx); a column no SV has
  reads the zero column, which is exactly what a dense SV holds there, so the sparse-query formula
  gives the numbers of the compact file (the same bits when the map keeps each row's column
  order).  New columns widen the rows by half (X and XT re-laid);
* slab: when the compact rows would be wider than SLAB_MIN_WIDTH and hold fewer than
  1/SLAB_SPARSITY nonzeros on average (text: 10^5 columns, 10^2 nonzeros a row), the store moves
  one way to a CSR-like pool: per slot an offset and a count into (value, compact column) arrays,
  12 bytes per stored nonzero.  A slot owns a room of entries (its size, or half again for a
  rewritten SV of GROW_NNZ entries or more) and is rewritten in place while the room holds it;
  removed and outgrown rooms become holes, squeezed out in place when the pool fills (an SV of
  GROW_NNZ entries or more keeps up to half its size spare there).  A kernel row scatters the
  query once over the compact columns (qbuf), each SV gathers at its own nonzeros,
  ``d = sum (q_c - s)^2 + max(0, ||x||^2 - sum q_c^2)`` (the dense formula with the roles
  swapped: no cancellation, k(x, x) = 1 for a duplicate stored in the query's order), and the
  buffer is cleared after; blocks of SV_BLOCK keep the sums independent of the threads.  Once
  the map holds RECOMPACT_MIN columns and twice as many as it kept the last time, the set drops
  the columns none of its SVs holds and renumbers the others in their order (_recompact): the
  map, the buffers and the gathers then span the columns the model holds (57,555 for BPAs'
  1,000 SVs after 100,000 text rows), not every column the stream has shown (10^6 and growing);
  the values are the same bits.  Each
  scatter buffer has a bitmap of the columns it holds: from BITS_MIN_COLS compact columns on, a
  gather reads the bit and the buffer only where it is set (the same values, from 1/64 of the
  bytes: a text query holds ~10^2 of ~10^6 columns).
  A slab SV with at least HEAVY_NNZ entries (BSGD's merged "sinks" on text, which collect every
  column the stream shows) is also held as a dense row over the compact columns, within
  HEAVY_BYTES per set: its kernel values then sum over the query's entries (the dense path's
  sparse-query formula), so it costs what a fresh SV costs, and merges read it instead of
  scattering it.  A merge of a fresh SV into such a sink (_absorb) costs the fresh SV's
  nonzeros: the row holds the merged point divided by a scale (rsc), new columns are appended
  to the sink's entries, whose values are then stale ("lazy") until something reads the SV as a
  whole (_settle: values from the row, sorted, norm summed anew).  Otherwise the slab is the
  SV's record (entries, model files); the row only answers kernel values, and whether an SV has
  one depends on the stored sequence alone.

Learners never read the layout: ``entries`` gives an SV as a query row with original columns,
``sv_nz`` / ``col_of`` its values without copying, ``merge_into`` BSGD's merged point (over the
union of the supports), ``begin_sv_query`` / ``log_kernels_sv`` the merge's SV-to-SV kernels and
``linear_row`` the linear kernel.  Model state and ``support_vectors`` are CSR with original
columns for wide data (size proportional to the stored nonzeros; the column map's order and the
width are saved so a loaded set has the same bits); narrow sets keep the dense ``X`` of old files.
"""
from libc.stdlib cimport malloc, calloc, realloc, free, qsort
from libc.math cimport NAN, signbit
from libc.string cimport memset, memcpy, memmove
from libc.stdint cimport uint64_t
from cpython.pyport cimport PY_SSIZE_T_MAX
from cython.parallel cimport prange
from onlinekern._core.vmath cimport ok_dot, ok_sqdist, ok_vexp

from onlinekern._core.columns cimport ColumnMap

cdef extern from "ok_mem.h" nogil:
    void* ok_malloc_big(size_t bytes)
    void* ok_realloc_big(void* old, size_t bytes)

cdef extern from "ok_kernel.h" nogil:
    void ok_sqdist_fm(const double* XT, Py_ssize_t B, Py_ssize_t lo, Py_ssize_t hi, const double* x,
                      const int* idx, int nnz, bint dense, const double* sqn, double* dist)
    void ok_sqdist_slab_mir(const long long* off, const int* nz, const double* val, const int* col,
                            double* const* mir, const double* rsc, const double* sqn, Py_ssize_t lo, Py_ssize_t hi,
                            const double* q, const uint64_t* qb, double xsq, const double* xv, const int* xc,
                            int xn, double* dist)

import numpy as np

cdef double RENORM = 1e-100
#: From this many compact columns in use (1 MiB of doubles, a core's L2 here) the kernel rows'
#: gathers read the scatter buffers through their bitmaps (ok_sqdist_slab); below it directly.
BITS_MIN_COLS = 1 << 17
cdef Py_ssize_t bits_min_cols = BITS_MIN_COLS


cdef int grow_zeroed(void** p, size_t old_bytes, size_t new_bytes) noexcept nogil:
    """realloc *p to new_bytes, the bytes past old_bytes zeroed (huge pages from 4 MiB, ok_mem.h).
    0, or -1 (*p unchanged)."""
    cdef void* q = ok_realloc_big(p[0], new_bytes)
    if q == NULL:
        return -1
    memset(<char*>q + old_bytes, 0, new_bytes - old_bytes)
    p[0] = q
    return 0


cdef int cmp_pairs(const void* a, const void* b) noexcept nogil:
    """qsort order of (key, value) pairs of long longs: by key."""
    cdef long long ka = (<const long long*>a)[0], kb = (<const long long*>b)[0]
    return (ka > kb) - (ka < kb)

#: Widths above which a support set stores compact columns ("auto" storage): narrow data keep the
#: dense layout (and its bits) unchanged.
WIDE_D = 4096
#: Compact rows switch to the slab when they would be wider than this ...
SLAB_MIN_WIDTH = 1024
#: ... and hold fewer than 1/SLAB_SPARSITY nonzeros on average.
SLAB_SPARSITY = 8
cdef int wide_d = WIDE_D, slab_min_width = SLAB_MIN_WIDTH, slab_sparsity = SLAB_SPARSITY
#: Slab SVs with at least this many stored nonzeros are also held as a dense row over the compact
#: columns (BSGD's merged "sinks" on text: every column the stream has shown) ...
HEAVY_NNZ = 1024
#: ... within this many bytes of such rows per support set (the rest stay slab-only).
HEAVY_BYTES = 64 << 20
cdef int heavy_min_nnz = HEAVY_NNZ
cdef long long heavy_max_bytes = HEAVY_BYTES
cdef int GROW_NNZ = 256                  # a rewritten slab SV this long gets room to grow
#: A slab set drops the compact columns none of its SVs holds once its column map has this many
#: columns and twice as many as it kept the last time (SupportSet._recompact).
RECOMPACT_MIN = 1 << 16
cdef Py_ssize_t recompact_min = RECOMPACT_MIN


cdef inline long long room_for(long long n) noexcept nogil:
    """The room a slab SV of n entries gets when it moves: half again from GROW_NNZ entries."""
    return n + n // 2 if n >= GROW_NNZ else n


cdef int MIR_POOL = 4                    # zeroed spare dense rows kept for reuse
cdef int COMPACT_W0 = 64                 # first compact width (the last column stays all zeros)
STORAGE = {"dense": STORE_DENSE, "compact": STORE_COMPACT, "slab": STORE_SLAB}
STORAGE_NAMES = {v: k for k, v in STORAGE.items()}

# Work units n_SV * (nnz + 8) from which a kernel row is split over threads; measured by
# tools/bench_threads.py (BENCHMARKS.md).  Tests lower it to force the parallel path.
cdef Py_ssize_t default_par_threshold = 32768


def get_par_threshold():
    """Work size from which new SupportSets split kernel rows over threads."""
    return default_par_threshold


def set_storage_limits(wide=None, slab_width=None, heavy_nnz=None, heavy_bytes=None):
    """Set the width above which new support sets store compact columns (default WIDE_D), the
    compact width above which sparse rows move to the slab (default SLAB_MIN_WIDTH), the stored
    nonzeros from which a slab SV is also held as a dense row (default HEAVY_NNZ) and the bytes of
    such rows a support set may hold (default HEAVY_BYTES); None keeps a value.  Returns the
    previous four, in this order.  Tests change them to exercise the wide paths on small data."""
    global wide_d, slab_min_width, heavy_min_nnz, heavy_max_bytes
    old = (wide_d, slab_min_width, heavy_min_nnz, heavy_max_bytes)
    if wide is not None:
        wide_d = max(1, int(wide))
    if slab_width is not None:
        slab_min_width = max(0, int(slab_width))
    if heavy_nnz is not None:
        heavy_min_nnz = max(1, int(heavy_nnz))
    if heavy_bytes is not None:
        heavy_max_bytes = max(0, int(heavy_bytes))
    return old


def set_recompact_min(Py_ssize_t value):
    """Set the column-map size from which new slab sets drop the columns their SVs no longer hold
    (RECOMPACT_MIN; the values are the same bits either way); returns the previous value.  Tests
    use small values to renumber often."""
    global recompact_min
    old = recompact_min
    recompact_min = max(1, value)
    return old


def set_bits_min_cols(Py_ssize_t value):
    """Set the compact columns in use from which kernel rows read the bitmaps (BITS_MIN_COLS; the
    values are the same bits either way); returns the previous value.  Tests use 0 and a huge
    value to run both paths."""
    global bits_min_cols
    old = bits_min_cols
    bits_min_cols = max(0, value)
    return old


def set_par_threshold(Py_ssize_t value):
    """Set the work size from which new SupportSets go parallel; returns the previous value."""
    global default_par_threshold
    old = default_par_threshold
    default_par_threshold = max(0, value)
    return old


cdef void sort_entries(int* col, double* val, int n) noexcept nogil:
    """Sort the entries (col, val)[0:n] by column in place (Shell sort with Knuth's gaps; the
    columns are distinct, so the result is unique)."""
    cdef int g = 1, i, k, c
    cdef double v
    while g < n // 3:
        g = 3 * g + 1
    while g >= 1:
        for i in range(g, n):
            c = col[i]
            v = val[i]
            k = i
            while k >= g and col[k - g] > c:
                col[k] = col[k - g]
                val[k] = val[k - g]
                k -= g
            col[k] = c
            val[k] = v
        g //= 3


cdef double row_sqnorm(const double* x, int nnz) noexcept nogil:
    """||x||^2 summed in index order with one accumulator (the kernel's sparse path relies on it)."""
    cdef int k
    cdef double s = 0.0
    for k in range(nnz):
        s += x[k] * x[k]
    return s


cdef class SupportSet:
    """Support-vector store with a kernel row and block-parallel kernel sums.

    Parameters
    ----------
    d : int
        Input dimension (the number of original columns, up to 2**31 - 1).
    C : int
        Coefficients per SV (1 for binary/regression, classes for multiclass).
    gamma : float
        Kernel width.
    budget : int
        Maximum number of SVs (-1 for none); slots are preallocated up to it.
    n_threads : int
        OpenMP threads for the kernel sum (results do not depend on it).
    storage : {"auto", "dense", "compact", "slab"}
        How SVs are stored (see the module docstring).  "auto": dense when ``d <= WIDE_D``,
        otherwise compact columns, switching to the slab once the compact rows would be mostly
        zeros.  The others force a mode (tests, and model files restoring theirs).
    """

    def __cinit__(self, int d, int C, double gamma, Py_ssize_t budget=-1, int n_threads=1, storage="auto"):
        if d < 1 or C < 1:
            raise ValueError("SupportSet needs d >= 1 and C >= 1")
        if not gamma > 0:
            raise ValueError(f"gamma must be > 0, got {gamma!r}")
        cdef int j
        if storage != "auto" and storage not in STORAGE:
            raise ValueError(f"storage must be one of {sorted(STORAGE)}, got {storage!r}")
        self.d = d
        self.C = C
        self.gamma = gamma
        self.budget = budget
        self.scale = 1.0
        self.n_threads = max(1, n_threads)
        self.par_threshold = default_par_threshold
        self.n = 0
        self.cap = 0
        self.clock = 0
        self.sq_slot = -1
        self.mir_bytes = heavy_max_bytes
        self.recompact_at = recompact_min
        if storage == "auto":
            self.mode = STORE_DENSE if d <= wide_d else STORE_COMPACT
        else:
            self.mode = STORAGE[storage]
        if self.mode == STORE_DENSE:
            self.w = d
            self.cmap = None
            # entries() of a dense SV: the row and the index list 0..d-1
            self.eidx = <int*>malloc(d * sizeof(int))
            if self.eidx == NULL:
                raise MemoryError("cannot allocate a support set")
            for j in range(d):
                self.eidx[j] = j
        else:
            self.w = COMPACT_W0 if self.mode == STORE_COMPACT else 0
            self.cmap = ColumnMap()
        initial = 64 if budget < 0 else budget
        if self.reserve(max(1, initial)) != 0 or self._scratch(COMPACT_W0, COMPACT_W0) != 0:
            raise MemoryError(f"cannot allocate a support set of {initial} vectors of dimension {d}")

    def __dealloc__(self):
        cdef Py_ssize_t i
        free(self.X); free(self.XT); free(self.sqn); free(self.coef); free(self.stamp); free(self.k); free(self.part)
        free(self.gam); free(self.nz); free(self.rcap); free(self.rsc); free(self.lazy); free(self.off); free(self.pval); free(self.pcol); free(self.qidx)
        free(self.qbuf); free(self.sbuf); free(self.tbuf); free(self.ebuf); free(self.eidx)
        free(self.qbits); free(self.sbits); free(self.tbits)
        if self.mir != NULL:
            for i in range(self.cap):
                free(self.mir[i])
        if self.mpool != NULL:
            for i in range(self.npool):
                free(self.mpool[i])
        free(self.mir); free(self.mpool)

    @property
    def storage(self):
        """The storage mode: "dense", "compact" or "slab"."""
        return STORAGE_NAMES[self.mode]

    @property
    def dense_rows(self):
        """Slab SVs also held as a dense row over the compact columns (heavy SVs; 0 otherwise)."""
        return self.nmir

    def share_rows(self, int parts):
        """Bound this set's dense rows by a 1/``parts`` share of the heavy-row bytes (1: all of
        them), dropping rows (spare ones first, then from the last slot down) until the bound holds.

        The width race calls it (through ``KernelCore.share_caches``) with the number of candidate
        sets still running, so eight candidates together hold no more rows than one set.  A row
        changes no result beyond the summation order of a kernel value (within 1e-12 of the
        slab's); which SVs have rows depends only on the sequence of stores and these calls.

        Parameters
        ----------
        parts : int >= 1
        """
        if parts < 1:
            raise ValueError(f"parts must be >= 1, got {parts}")
        self.mir_bytes = heavy_max_bytes // parts
        if self.nmir + self.npool > 0:
            self._mir_grow(self.scap)

    # -- storage ----------------------------------------------------------------------------
    cdef int reserve(self, Py_ssize_t cap) noexcept nogil:
        """Grow storage to at least cap slots (capped by the budget). 0 on success."""
        cdef Py_ssize_t nb, j
        cdef void* p
        if self.budget >= 0 and cap > self.budget:
            cap = self.budget
        if cap <= self.cap:
            return 0 if cap >= 1 or self.cap >= 1 else -1
        nb = (cap + SV_BLOCK - 1) // SV_BLOCK
        if self.mode == STORE_SLAB:
            p = realloc(self.off, cap * sizeof(long long))
            if p == NULL: return -1
            self.off = <long long*>p
        else:
            p = ok_realloc_big(self.X, cap * self.w * sizeof(double))
            if p == NULL: return -1
            self.X = <double*>p
        p = realloc(self.nz, cap * sizeof(int))
        if p == NULL: return -1
        self.nz = <int*>p
        p = realloc(self.rcap, cap * sizeof(int))
        if p == NULL: return -1
        self.rcap = <int*>p
        p = realloc(self.rsc, cap * sizeof(double))
        if p == NULL: return -1
        self.rsc = <double*>p
        p = realloc(self.lazy, cap * sizeof(char))
        if p == NULL: return -1
        self.lazy = <char*>p
        for j in range(self.cap, cap):
            self.rsc[j] = 1.0
            self.lazy[j] = 0
        p = realloc(self.sqn, cap * sizeof(double))
        if p == NULL: return -1
        self.sqn = <double*>p
        p = realloc(self.coef, cap * self.C * sizeof(double))
        if p == NULL: return -1
        self.coef = <double*>p
        p = realloc(self.gam, cap * self.C * sizeof(double))
        if p == NULL: return -1
        self.gam = <double*>p
        p = realloc(self.stamp, cap * sizeof(long long))
        if p == NULL: return -1
        self.stamp = <long long*>p
        p = realloc(self.k, cap * sizeof(double))
        if p == NULL: return -1
        self.k = <double*>p
        p = realloc(self.part, nb * self.C * sizeof(double))
        if p == NULL: return -1
        self.part = <double*>p
        p = realloc(self.mir, cap * sizeof(double*))
        if p == NULL: return -1
        self.mir = <double**>p
        for j in range(self.cap, cap):
            self.mir[j] = NULL
        if self.mpool == NULL:
            self.mpool = <double**>calloc(MIR_POOL, sizeof(double*))
            if self.mpool == NULL: return -1
        if self.mode != STORE_SLAB:
            # the mirror's stride is the capacity: lay it out anew
            p = ok_malloc_big(cap * self.w * sizeof(double))
            if p == NULL: return -1
            for j in range(self.w):
                if self.n:
                    memcpy(<double*>p + j * cap, self.XT + j * self.cap, self.n * sizeof(double))
            free(self.XT)
            self.XT = <double*>p
        self.cap = cap
        return 0

    cdef int _scratch(self, Py_ssize_t ncols, Py_ssize_t nent) noexcept nogil:
        """Grow the scatter buffers to ncols compact columns (slab; zero-filled) and the
        entry/index buffers to nent.  0, or -1 without memory."""
        cdef Py_ssize_t nc
        cdef void* p
        if self.mode == STORE_SLAB and ncols > self.scap:
            nc = 2 * self.scap if self.scap else 64
            while nc < ncols:
                nc *= 2
            # the scatter buffers and their bitmaps (nc / 64 words: nc is a power of two >= 64)
            if (grow_zeroed(<void**>&self.qbuf, self.scap * sizeof(double), nc * sizeof(double)) != 0
                    or grow_zeroed(<void**>&self.sbuf, self.scap * sizeof(double), nc * sizeof(double)) != 0
                    or grow_zeroed(<void**>&self.tbuf, self.scap * sizeof(double), nc * sizeof(double)) != 0
                    or grow_zeroed(<void**>&self.qbits, self.scap // 8, nc // 8) != 0
                    or grow_zeroed(<void**>&self.sbits, self.scap // 8, nc // 8) != 0
                    or grow_zeroed(<void**>&self.tbits, self.scap // 8, nc // 8) != 0):
                return -1
            self._mir_grow(nc)
            self.scap = nc
        if nent > self.qcap:
            nc = 2 * self.qcap if self.qcap else 64
            while nc < nent:
                nc *= 2
            p = realloc(self.qidx, nc * sizeof(int))
            if p == NULL: return -1
            self.qidx = <int*>p
            self.qcap = nc
        if self.mode != STORE_DENSE and nent > self.ecap:
            nc = 2 * self.ecap if self.ecap else 64
            while nc < nent:
                nc *= 2
            p = realloc(self.ebuf, nc * sizeof(double))
            if p == NULL: return -1
            self.ebuf = <double*>p
            p = realloc(self.eidx, nc * sizeof(int))
            if p == NULL: return -1
            self.eidx = <int*>p
            self.ecap = nc
        return 0

    cdef void _mirror(self, Py_ssize_t i) noexcept nogil:
        """Copy slot i's row into the feature-major mirror (dense and compact modes)."""
        cdef Py_ssize_t j
        cdef const double* r = self.X + i * self.w
        for j in range(self.w):
            self.XT[j * self.cap + i] = r[j]

    cdef int _widen(self, Py_ssize_t need) noexcept nogil:
        """Compact mode: make rows at least ``need`` doubles wide (growth by half), or switch to
        the slab when the wider rows would hold mostly zeros.  0, or -1 without memory."""
        cdef Py_ssize_t nw = self.w, i, j
        cdef double* nx
        cdef double* nt
        while nw < need:                    # x1.5 (multiples of 8): at most ~50% zeros, O(log) relayouts
            nw = ((nw + nw // 2) + 7) // 8 * 8
        if nw > slab_min_width and self.nnz_total * slab_sparsity < <long long>self.n * nw:
            return self._to_slab()
        nx = <double*>calloc(self.cap * nw, sizeof(double))
        nt = <double*>calloc(self.cap * nw, sizeof(double))
        if nx == NULL or nt == NULL:
            free(nx); free(nt)
            return -1
        for i in range(self.n):
            memcpy(nx + i * nw, self.X + i * self.w, self.w * sizeof(double))
        for j in range(self.w):
            memcpy(nt + j * self.cap, self.XT + j * self.cap, self.n * sizeof(double))
        free(self.X); free(self.XT)
        self.X = nx
        self.XT = nt
        self.w = <int>nw
        return 0

    cdef int _to_slab(self) noexcept nogil:
        """Compact mode -> slab (one way): each row's nonzeros in compact-column order."""
        cdef long long pc = 2 * self.nnz_total + 64, p = 0
        cdef Py_ssize_t i, j, nc = self.cmap.n, used = self.cmap.n
        cdef long long* off = <long long*>malloc(self.cap * sizeof(long long))
        cdef double* pv = <double*>malloc(pc * sizeof(double))
        cdef int* pcl = <int*>malloc(pc * sizeof(int))
        cdef const double* r
        if off == NULL or pv == NULL or pcl == NULL:
            free(off); free(pv); free(pcl)
            return -1
        if used > self.w - 1:                   # columns just added by the SV being stored
            used = self.w - 1
        for i in range(self.n):
            r = self.X + i * self.w
            off[i] = p
            for j in range(used):
                if r[j] != 0.0:
                    pv[p] = r[j]
                    pcl[p] = <int>j
                    p += 1
            self.nz[i] = <int>(p - off[i])
            self.rcap[i] = self.nz[i]
        free(self.X); free(self.XT)
        self.X = NULL
        self.XT = NULL
        self.off, self.pval, self.pcol = off, pv, pcl
        self.pused, self.pcap, self.pholes = p, pc, 0
        self.nnz_total = p
        self.mode = STORE_SLAB
        self.w = 0
        if self._scratch(nc + 1, nc + 1) != 0:
            return -1
        for i in range(self.n):
            self._mir_fit(i)
        return 0

    cdef int _slab_compact(self, long long need) noexcept nogil:
        """Slide the SVs' entries over the holes, in place and in pool order (no second pool, so
        the peak memory is the pool's), each SV's room becoming its size -- but an SV of
        GROW_NNZ entries or more keeps its room up to half again its size: a merged "sink" that
        lost its spare room here would move (and the pool soon compact again) at its next merge
        that adds a column, which on text made every compaction cost a move of each sink and
        the compactions come every few examples.  Then grow the pool (realloc) when less than a
        fifth of it would be free after ``need`` more entries.  0, or -1 without memory."""
        cdef long long p = 0, pc, room
        cdef Py_ssize_t i, s
        cdef long long* order = <long long*>malloc(2 * self.n * sizeof(long long) + 1)
        cdef void* q
        if order == NULL:
            return -1
        for i in range(self.n):
            order[2 * i] = self.off[i]
            order[2 * i + 1] = i
        qsort(order, self.n, 2 * sizeof(long long), cmp_pairs)
        for s in range(self.n):
            i = order[2 * s + 1]
            if self.off[i] != p:
                memmove(self.pval + p, self.pval + self.off[i], self.nz[i] * sizeof(double))
                memmove(self.pcol + p, self.pcol + self.off[i], self.nz[i] * sizeof(int))
            room = min(<long long>self.rcap[i], room_for(self.nz[i]))   # rcap >= nz
            self.off[i] = p
            self.rcap[i] = <int>room
            p += room
        free(order)
        self.pcompactions += 1
        self.pused, self.pholes = p, 0
        if 5 * (p + need) > 4 * self.pcap:
            pc = (3 * (p + need)) // 2 + 64
            q = ok_realloc_big(self.pval, pc * sizeof(double))
            if q == NULL:
                return -1
            self.pval = <double*>q
            q = ok_realloc_big(self.pcol, pc * sizeof(int))
            if q == NULL:
                return -1
            self.pcol = <int*>q
            self.pcap = pc
        return 0

    cdef int _slab_put(self, Py_ssize_t i, const double* vals, const int* cols, int m) noexcept nogil:
        """Slab: slot i's vector becomes the m entries (vals, compact cols), its dense row (if
        any) kept equal.  0, or -1."""
        if self.mir[i] != NULL:
            self._mir_clear(i)
        if self._slab_store(i, vals, cols, m) != 0:
            return -1
        self._mir_fit(i)
        return 0

    cdef int _slab_store(self, Py_ssize_t i, const double* vals, const int* cols, int m) noexcept nogil:
        """_slab_put without the dense row: the pool only.  A present slot is rewritten where it
        is when its room holds m entries; otherwise its room becomes a hole and m entries (with
        room to grow by half for a vector of GROW_NNZ or more, such as BSGD's merged "sinks",
        which gain a few columns at each merge) are taken at the end of the pool.  0, or -1."""
        cdef long long room = m
        self.lazy[i] = 0
        self.rsc[i] = 1.0
        if i < self.n:
            self.nnz_total -= self.nz[i]
            if m <= self.rcap[i]:
                memcpy(self.pval + self.off[i], vals, m * sizeof(double))
                memcpy(self.pcol + self.off[i], cols, m * sizeof(int))
                self.nz[i] = m
                self.nnz_total += m
                return 0
            room = room_for(m)
        else:
            self.off[i] = 0                     # a new slot owns no room yet
            self.rcap[i] = 0
        self.nz[i] = 0
        if self._slab_move(i, room) != 0:
            return -1
        memcpy(self.pval + self.off[i], vals, m * sizeof(double))
        memcpy(self.pcol + self.off[i], cols, m * sizeof(int))
        self.nz[i] = m
        self.nnz_total += m
        return 0

    cdef void _swap_room(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        """Exchange the pool entries (and room) of slots a and b."""
        self.off[a], self.off[b] = self.off[b], self.off[a]
        self.nz[a], self.nz[b] = self.nz[b], self.nz[a]
        self.rcap[a], self.rcap[b] = self.rcap[b], self.rcap[a]

    # -- dense rows of heavy slab SVs ----------------------------------------------------------
    cdef void _mir_clear(self, Py_ssize_t i) noexcept nogil:
        """Zero slot i's dense row at its stored entries (the row is then all zeros)."""
        cdef double* r = self.mir[i]
        cdef int kk
        for kk in range(self.nz[i]):
            r[self.pcol[self.off[i] + kk]] = 0.0

    cdef void _mir_drop(self, Py_ssize_t i) noexcept nogil:
        """Release slot i's dense row (kept zeroed in the pool, or freed)."""
        if self.mir[i] == NULL:
            return
        self._settle(i)
        self._mir_clear(i)
        if self.npool < MIR_POOL:
            self.mpool[self.npool] = self.mir[i]
            self.npool += 1
        else:
            free(self.mir[i])
        self.mir[i] = NULL
        self.nmir -= 1

    cdef void _mir_fit(self, Py_ssize_t i) noexcept nogil:
        """After slot i's entries were written (its dense row, if any, zero): a row for a heavy SV
        while the byte bound allows, none for one that fell under half the threshold, and the
        row filled.  Deterministic: it depends on the sequence of stores only."""
        cdef double* r = self.mir[i]
        cdef int kk
        cdef long long most
        if r != NULL and self.nz[i] < heavy_min_nnz // 2:
            self._mir_drop(i)                  # already zero: the pool gets a clean row
            return
        if r == NULL:
            if self.nz[i] < heavy_min_nnz:
                return
            most = self.mir_bytes // (<long long>self.scap * <long long>sizeof(double))
            if self.nmir + self.npool >= most and self.npool == 0:
                return
            if self.npool > 0:
                self.npool -= 1
                r = self.mpool[self.npool]
            else:
                r = <double*>calloc(self.scap, sizeof(double))
                if r == NULL:
                    return                         # the slab alone still gives every value
            self.mir[i] = r
            self.nmir += 1
        sort_entries(self.pcol + self.off[i], self.pval + self.off[i], self.nz[i])
        for kk in range(self.nz[i]):
            r[self.pcol[self.off[i] + kk]] = self.pval[self.off[i] + kk]

    cdef int _mir_grow(self, Py_ssize_t nc) noexcept nogil:
        """The compact columns grew to nc: widen every dense row (zero tails), then free spare
        rows and, from the last slot down, rows in use until the byte bound holds.  Always 0: a
        row that cannot grow is dropped (the slab alone still gives every value)."""
        cdef Py_ssize_t i
        cdef void* p
        cdef long long most = self.mir_bytes // (<long long>nc * <long long>sizeof(double))
        while self.npool > 0 and (self.nmir + self.npool > most):
            self.npool -= 1
            free(self.mpool[self.npool])
        for i in range(self.npool):
            p = realloc(self.mpool[i], nc * sizeof(double))
            if p == NULL:
                free(self.mpool[i])
                self.npool -= 1
                self.mpool[i] = self.mpool[self.npool]
                continue
            self.mpool[i] = <double*>p
            memset(self.mpool[i] + self.scap, 0, (nc - self.scap) * sizeof(double))
        i = self.n - 1
        while i >= 0:
            if self.mir[i] != NULL:
                p = NULL
                if self.nmir + self.npool <= most:
                    p = realloc(self.mir[i], nc * sizeof(double))
                if p == NULL:
                    self._settle(i)
                    free(self.mir[i])
                    self.nmir -= 1
                else:
                    memset(<double*>p + self.scap, 0, (nc - self.scap) * sizeof(double))
                self.mir[i] = <double*>p
            i -= 1
        return 0

    cdef const double* _dense_of(self, Py_ssize_t i, double* buf) noexcept nogil:
        """Slab SV i over the compact columns: its dense row (settled), or scattered into buf."""
        if self.mir[i] != NULL:
            self._settle(i)
            return self.mir[i]
        self._scatter(i, buf)
        return buf

    cdef void _undense(self, Py_ssize_t i, double* buf) noexcept nogil:
        """Undo _dense_of(i, buf)."""
        if self.mir[i] == NULL:
            self._unscatter(i, buf)

    cdef int _store(self, Py_ssize_t i, const double* x, const int* idx, int nnz) noexcept nogil:
        """Write the vector (x, idx, nnz) into slot i.  0, or -1 without memory."""
        cdef int kk, m = 0, c
        cdef double* r
        if self.mode == STORE_DENSE:
            r = self.X + i * self.d
            memset(r, 0, self.d * sizeof(double))
            for kk in range(nnz):
                r[idx[kk]] = x[kk]
            self._mirror(i)
            return 0
        if self.mode == STORE_SLAB and self.cmap.n >= self.recompact_at:
            self._recompact()                  # without memory for it, the map stays as it is
            self.recompact_at = max(recompact_min, 2 * self.cmap.n)
        if self._scratch(0, nnz) != 0:
            return -1
        for kk in range(nnz):                  # the nonzeros, at compact columns (new ones added)
            if x[kk] != 0.0:
                c = self.cmap.add(idx[kk])
                if c < 0:
                    return -1
                self.qidx[m] = c
                self.ebuf[m] = x[kk]
                m += 1
        if self._scratch(self.cmap.n + 1, self.cmap.n + 1) != 0:
            return -1
        if self.mode == STORE_COMPACT and self.cmap.n + 1 > self.w and self._widen(self.cmap.n + 1) != 0:
            return -1
        if self.mode == STORE_SLAB:
            return self._slab_put(i, self.ebuf, self.qidx, m)
        r = self.X + i * self.w
        memset(r, 0, self.w * sizeof(double))
        for kk in range(m):
            r[self.qidx[kk]] = self.ebuf[kk]
        self._mirror(i)
        if i < self.n:
            self.nnz_total -= self.nz[i]
        self.nz[i] = m
        self.nnz_total += m
        return 0

    cdef Py_ssize_t append(self, const double* x, const int* idx, int nnz, double xsq, const double* alpha) noexcept nogil:
        """Add SV x with true coefficients alpha[0:C]; returns its slot, or -1 if full/no memory."""
        cdef Py_ssize_t i = self.n
        if i == self.cap:
            if self.budget >= 0 and i >= self.budget:
                return -1
            if self.reserve(2 * self.cap if self.cap else 64) != 0:
                return -1
        if self.replace(i, x, idx, nnz, xsq, alpha) != 0:   # the new slot gets the newest stamp
            return -1
        self.n += 1
        return i

    cdef void remove(self, Py_ssize_t i) noexcept nogil:
        """Delete slot i by moving the last SV into it (O(w + C); O(C) in the slab).  Ends the
        averaging history (``track``): the average of the hypotheses is no longer a sum over the
        SVs present."""
        cdef Py_ssize_t last = self.n - 1
        self.track = False
        if self.mode != STORE_DENSE:
            self.nnz_total -= self.nz[i]
        if self.mode == STORE_SLAB:
            self._mir_drop(i)
            self.pholes += self.rcap[i]
        if i != last:
            if self.mode == STORE_SLAB:
                self.off[i] = self.off[last]
                self.rcap[i] = self.rcap[last]
                self.rsc[i] = self.rsc[last]
                self.lazy[i] = self.lazy[last]
                self.lazy[last] = 0
                self.rsc[last] = 1.0
                self.mir[i] = self.mir[last]
                self.mir[last] = NULL
            else:
                memcpy(self.X + i * self.w, self.X + last * self.w, self.w * sizeof(double))
                self._mirror(i)
            if self.mode != STORE_DENSE:
                self.nz[i] = self.nz[last]
            memcpy(self.coef + i * self.C, self.coef + last * self.C, self.C * sizeof(double))
            memcpy(self.gam + i * self.C, self.gam + last * self.C, self.C * sizeof(double))
            self.sqn[i] = self.sqn[last]
            self.stamp[i] = self.stamp[last]
            self.k[i] = self.k[last]
        self.n = last

    cdef Py_ssize_t oldest(self) noexcept nogil:
        """Slot of the SV inserted first among those present (-1 if empty)."""
        cdef Py_ssize_t i, best = -1
        for i in range(self.n):
            if best < 0 or self.stamp[i] < self.stamp[best]:
                best = i
        return best

    cdef void shrink(self, double c) noexcept nogil:
        """alpha_i <- c * alpha_i for every SV, in O(1) (renormalising when the scale underflows)."""
        cdef Py_ssize_t i
        if self.track:
            for i in range(self.n * self.C):
                self.gam[i] += (c - 1.0) * (self.scale * self.coef[i]) * <double>self.now
        if c == 0.0:
            memset(self.coef, 0, self.n * self.C * sizeof(double))
            self.scale = 1.0
            return
        self.scale *= c
        if -RENORM < self.scale < RENORM:
            for i in range(self.n * self.C):
                self.coef[i] *= self.scale
            self.scale = 1.0

    cdef void add_coef(self, Py_ssize_t i, const double* delta) noexcept nogil:
        """alpha_i += delta[0:C]."""
        cdef int c
        for c in range(self.C):
            self.coef[i * self.C + c] += delta[c] / self.scale
            self.track_change(i, c, delta[c])

    cdef double alpha(self, Py_ssize_t i, int c) noexcept nogil:
        """True coefficient alpha_ic."""
        return self.scale * self.coef[i * self.C + c]

    cdef void set_alpha(self, Py_ssize_t i, int c, double value) noexcept nogil:
        """alpha_ic <- value."""
        self.track_change(i, c, value - self.scale * self.coef[i * self.C + c])
        self.coef[i * self.C + c] = value / self.scale

    cdef double* row(self, Py_ssize_t i) noexcept nogil:
        """The stored row of SV i: d doubles in dense mode, the compact row (w doubles) in compact
        mode, NULL in the slab (read-only; mode-agnostic code uses entries / sv_nz)."""
        if self.mode == STORE_SLAB:
            return NULL
        return self.X + i * self.w

    cdef int entries(self, Py_ssize_t i, const double** x, const int** idx) noexcept nogil:
        """SV i as a query row (x, idx) with ORIGINAL columns; returns its length.  Dense mode:
        the stored row with 0..d-1 (a dense query, exactly as before); otherwise its nonzeros in
        stored order, in a buffer of the set valid until the next call that changes the set or
        calls entries again."""
        cdef int m = 0, j, kk
        cdef const double* r
        if self.mode == STORE_DENSE:
            x[0] = self.X + i * self.d
            idx[0] = self.eidx
            return self.d
        if self.mode == STORE_COMPACT:
            r = self.X + i * self.w
            for j in range(min(self.cmap.n, self.w - 1)):
                if r[j] != 0.0:
                    self.ebuf[m] = r[j]
                    self.eidx[m] = self.cmap.cols[j]
                    m += 1
        else:
            self._settle(i)
            for kk in range(self.nz[i]):
                self.ebuf[kk] = self.pval[self.off[i] + kk]
                self.eidx[kk] = self.cmap.cols[self.pcol[self.off[i] + kk]]
            m = self.nz[i]
        x[0] = self.ebuf
        idx[0] = self.eidx
        return m

    cdef int sv_nz(self, Py_ssize_t i, const double** vals, const int** cols) noexcept nogil:
        """SV i's stored values without copying (thread-safe while the set does not change):
        ``cols`` NULL means a row whose k-th value sits at column k (dense: original, compact:
        compact columns; zeros included), otherwise the compact columns of the slab's entries.
        col_of maps a compact column to the original one."""
        if self.mode == STORE_SLAB:
            self._settle(i)                     # a no-op but for BSGD's merged rows
            vals[0] = self.pval + self.off[i]
            cols[0] = self.pcol + self.off[i]
            return self.nz[i]
        vals[0] = self.X + i * self.w
        cols[0] = NULL
        return self.d if self.mode == STORE_DENSE else <int>min(self.cmap.n, self.w - 1)

    cdef int col_of(self, int c) noexcept nogil:
        """The original column of stored column c (see sv_nz)."""
        return c if self.mode == STORE_DENSE else self.cmap.cols[c]

    cdef double value_at(self, Py_ssize_t i, int col) noexcept nogil:
        """x_i at original column col (0 <= col < d)."""
        cdef int c, kk
        if self.mode == STORE_DENSE:
            return self.X[i * self.d + col]
        c = self.cmap.get(col)
        if c < 0:
            return 0.0
        if self.mode == STORE_COMPACT:
            return self.X[i * self.w + c] if c < self.w else 0.0
        if self.mir[i] != NULL:
            return self.rsc[i] * self.mir[i][c]
        for kk in range(self.nz[i]):
            if self.pcol[self.off[i] + kk] == c:
                return self.pval[self.off[i] + kk]
        return 0.0

    cdef int replace(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq, const double* alpha) noexcept nogil:
        """Overwrite slot i with a new SV (x, alpha): it counts as the newest SV.  Overwriting an SV
        present (i < n) removes it, and ends the averaging history as ``remove`` does.  0, or -1
        without memory (wide data: the compact width or the slab could not grow)."""
        cdef int c
        if i < self.n:
            self.track = False
        if self._store(i, x, idx, nnz) != 0:
            return -1
        self.sqn[i] = xsq
        for c in range(self.C):
            self.coef[i * self.C + c] = alpha[c] / self.scale
            self.gam[i * self.C + c] = 0.0             # a new coefficient: its history starts now
            self.track_change(i, c, alpha[c])
        self.stamp[i] = self.clock
        self.clock += 1
        return 0

    cdef void _set_coefs(self, Py_ssize_t i, const double* alpha) noexcept nogil:
        cdef int c
        self.track = False
        for c in range(self.C):
            self.coef[i * self.C + c] = alpha[c] / self.scale
            self.gam[i * self.C + c] = 0.0             # a new coefficient: its history starts now
            self.track_change(i, c, alpha[c])

    cdef void set_dense(self, Py_ssize_t i, const double* z, const double* alpha) noexcept nogil:
        """Dense mode: overwrite slot i with the dense vector z[0:d] and coefficients alpha, keeping
        its place in insertion order (a merged SV takes the place of the one it replaces, as in
        BudgetedSVM).  The SV it overwrites leaves the set: the averaging history ends as in
        ``remove``.  (Any mode: merge_into.)"""
        cdef int j
        cdef double* r = self.X + i * self.d
        for j in range(self.d):
            r[j] = z[j]
        self._mirror(i)
        self.sqn[i] = row_sqnorm(r, self.d)
        self._set_coefs(i, alpha)

    cdef int merge_into(self, Py_ssize_t m, Py_ssize_t j, double h, const double* alpha) noexcept nogil:
        """Slot m <- z = h x_m + (1 - h) x_j with coefficients alpha, keeping m's place in insertion
        order (BSGD's merge).  Slot j must leave the set next (``remove``): in the slab its
        storage may have gone to z.  Dense: z over all d columns (set_dense); compact: over the
        compact columns; slab: over the union of the two supports, m's entries first.  0, or -1
        without memory."""
        cdef Py_ssize_t t
        cdef int kk, cnt = 0, c
        cdef double* rm
        cdef const double* rj
        cdef const double* sm
        cdef const double* tj
        cdef double v
        cdef long long om, oj
        if self.mode == STORE_DENSE:
            if self.ecap < self.d:
                free(self.ebuf)
                self.ebuf = <double*>malloc(self.d * sizeof(double))
                if self.ebuf == NULL:
                    self.ecap = 0
                    return -1
                self.ecap = self.d
            rm = self.X + m * self.d
            rj = self.X + j * self.d
            for t in range(self.d):
                self.ebuf[t] = h * rm[t] + (1.0 - h) * rj[t]
            self.set_dense(m, self.ebuf, alpha)
            return 0
        if self.mode == STORE_COMPACT:
            rm = self.X + m * self.w
            rj = self.X + j * self.w
            for t in range(self.w):
                rm[t] = h * rm[t] + (1.0 - h) * rj[t]
                cnt += rm[t] != 0.0
            self._mirror(m)
            self.sqn[m] = row_sqnorm(rm, self.w)
            self.nnz_total += cnt - self.nz[m]
            self.nz[m] = cnt
            self._set_coefs(m, alpha)
            return 0
        if self.mir[m] == NULL and self.mir[j] != NULL and h < 1.0:
            # the sink is j: z = (1 - h) x_j + h x_m in j's row and room, handed to slot m
            if self._absorb(j, m, 1.0 - h, h) != 0:
                return -1
            self._swap_room(m, j)
            self.mir[m], self.mir[j] = self.mir[j], NULL
            self.rsc[m], self.rsc[j] = self.rsc[j], 1.0
            self.lazy[m], self.lazy[j] = self.lazy[j], 0
            self.sqn[m] = self.sqn[j]
            self._set_coefs(m, alpha)
            return 0
        if self.mir[m] != NULL and self.mir[j] == NULL and h > 0.0:
            if self._absorb(m, j, h, 1.0 - h) != 0:   # the sink is m: z in its own row and room
                return -1
            self._set_coefs(m, alpha)
            return 0
        # slab: both over the compact columns (dense rows or scattered), m's entries then j's
        # entries outside m's support
        sm = self._dense_of(m, self.sbuf)
        tj = self._dense_of(j, self.tbuf)
        om = self.off[m]
        oj = self.off[j]
        for kk in range(self.nz[m]):
            c = self.pcol[om + kk]
            v = h * self.pval[om + kk] + (1.0 - h) * tj[c]
            if v != 0.0:
                self.ebuf[cnt] = v
                self.qidx[cnt] = c
                cnt += 1
        for kk in range(self.nz[j]):
            c = self.pcol[oj + kk]
            if sm[c] == 0.0:
                v = h * 0.0 + (1.0 - h) * self.pval[oj + kk]
                if v != 0.0:
                    self.ebuf[cnt] = v
                    self.qidx[cnt] = c
                    cnt += 1
        self._undense(m, self.sbuf)
        self._undense(j, self.tbuf)
        if self.mir[m] == NULL and self.mir[j] == NULL and self.rcap[j] > self.rcap[m]:
            self._swap_room(m, j)               # z takes j's larger room (j leaves next)
        if self._slab_put(m, self.ebuf, self.qidx, cnt) != 0:
            return -1
        self.sqn[m] = row_sqnorm(self.ebuf, cnt)
        self._set_coefs(m, alpha)
        return 0

    cdef int _absorb(self, Py_ssize_t s, Py_ssize_t l, double ws, double wl) noexcept nogil:
        """Slab: SV s (with a dense row) becomes z = ws x_s + wl x_l in O(nonzeros of x_l): s's
        row holds z / rsc[s] (its entries' columns are z's support, their values stale: the
        slot is "lazy" until _settle), ||z||^2 from ||x_s||^2, ||x_l||^2 and <x_s, x_l>.  BSGD's
        merges of a fresh SV into a "sink" that holds every column a text stream has shown
        would otherwise rewrite the sink at every merge.  0, or -1 without memory."""
        cdef double* M = self.mir[s]
        cdef long long ol
        cdef int kk, c, grow = 0
        cdef double r, nr, a, v, old, dot = 0.0
        if ws * self.rsc[s] < 1e-150:
            self._settle(s)                     # renormalise: the scale would underflow
        r = self.rsc[s]
        nr = ws * r
        a = wl / nr
        if wl == 0.0:                           # z = ws x_s: a new scale only
            self.sqn[s] = ws * ws * self.sqn[s]
            self.rsc[s] = nr
            self.lazy[s] = 1
            return 0
        ol = self.off[l]
        for kk in range(self.nz[l]):            # <x_l, M> and the columns x_s does not have
            old = M[self.pcol[ol + kk]]
            dot += self.pval[ol + kk] * old
            grow += old == 0.0 and not signbit(old)
        c = self.nz[s] + grow
        if c > self.rcap[s] and self._slab_move(s, c + c // 2) != 0:
            return -1
        ol = self.off[l]                        # (a move may have compacted the pool)
        for kk in range(self.nz[l]):
            c = self.pcol[ol + kk]
            old = M[c]
            v = old + a * self.pval[ol + kk]
            if v == 0.0:
                v = -0.0                        # -0.0: a column of the support whose value is 0
            M[c] = v
            if old == 0.0 and not signbit(old):
                self.pcol[self.off[s] + self.nz[s]] = c
                self.pval[self.off[s] + self.nz[s]] = 0.0
                self.nz[s] += 1
        self.nnz_total += grow
        v = ws * ws * self.sqn[s] + 2.0 * ws * wl * r * dot + wl * wl * self.sqn[l]
        self.sqn[s] = v if v > 0.0 else 0.0
        self.rsc[s] = nr
        self.lazy[s] = 1
        return 0

    cdef int _slab_move(self, Py_ssize_t i, long long room) noexcept nogil:
        """Give slot i a new room of ``room`` entries at the end of the pool, its first nz[i]
        entries copied there (a compaction first, if the pool is full, keeps them) and its old
        room a hole (counted in ``moves`` for an SV present).  0, or -1 without memory."""
        if self.pused + room > self.pcap and self._slab_compact(room) != 0:
            return -1
        memcpy(self.pval + self.pused, self.pval + self.off[i], self.nz[i] * sizeof(double))
        memcpy(self.pcol + self.pused, self.pcol + self.off[i], self.nz[i] * sizeof(int))
        self.pholes += self.rcap[i]
        if i < self.n:
            self.pmoves += 1
        self.off[i] = self.pused
        self.rcap[i] = <int>room
        self.pused += room
        return 0

    cdef void _settle(self, Py_ssize_t i) noexcept nogil:
        """A lazy slot (_absorb) made exact: its values written from the dense row times its
        scale (the row rescaled too), zeros dropped, entries sorted by column, ||x||^2 summed
        anew.  O(its nonzeros); nothing for any other slot."""
        cdef double* M
        cdef double r, v
        cdef long long o
        cdef int kk, k = 0, c
        if not self.lazy[i]:
            return
        M = self.mir[i]
        r = self.rsc[i]
        o = self.off[i]
        for kk in range(self.nz[i]):
            c = self.pcol[o + kk]
            v = r * M[c]
            if v != 0.0:
                M[c] = v
                self.pcol[o + k] = c
                self.pval[o + k] = v
                k += 1
            else:
                M[c] = 0.0
        self.nnz_total -= self.nz[i] - k
        self.nz[i] = k
        sort_entries(self.pcol + o, self.pval + o, k)
        self.sqn[i] = row_sqnorm(self.pval + o, k)
        self.rsc[i] = 1.0
        self.lazy[i] = 0

    cdef int _recompact(self) noexcept nogil:
        """Slab: drop the compact columns no stored SV holds and renumber the others in their
        order (ColumnMap.renumber), remapping the pool's entries and the dense rows of heavy SVs
        (the scatter buffers hold zeros between queries, so they need nothing).  Without it the
        map, the buffers and the kernel rows' gathers span every column the stream has ever
        stored -- a million and growing on a text stream, of which a budget of 1,000 SVs holds
        ~6 x 10^4 -- instead of the columns the model holds.  Every kernel value keeps its bits:
        sums run over an SV's entries or the query's in their stored order, and a renumbering
        that keeps the columns' order keeps sorted entries sorted.  _store calls it before it adds
        a vector's columns, once the map has ``recompact_at`` columns.  0, or -1 without memory
        for it (the set unchanged, and as valid: renumbering saves memory, it is never needed)."""
        cdef Py_ssize_t nc = self.cmap.n, i, c, live = 0
        cdef long long e
        cdef int* newid = <int*>calloc(nc + 1, sizeof(int))
        cdef double* r
        if newid == NULL:
            return -1
        for i in range(self.n):                 # mark the columns the SVs hold
            for e in range(self.off[i], self.off[i] + self.nz[i]):
                newid[self.pcol[e]] = 1
        if self.cmap.renumber(newid) != 0:
            free(newid)
            return -1
        for c in range(nc):                     # marks -> new slots, in the old order
            if newid[c] != 0:
                newid[c] = <int>live
                live += 1
            else:
                newid[c] = -1
        for i in range(self.n):
            for e in range(self.off[i], self.off[i] + self.nz[i]):
                self.pcol[e] = newid[self.pcol[e]]
            r = self.mir[i]
            if r != NULL:                       # down in place: a new slot is never above the old
                for c in range(nc):
                    if newid[c] >= 0:
                        r[newid[c]] = r[c]
                memset(r + live, 0, (nc - live) * sizeof(double))
        free(newid)
        self.recompactions += 1
        return 0

    # -- kernel values ----------------------------------------------------------------------
    cdef int _load(self, const double* x, const int* idx, int nnz) noexcept nogil:
        """Prepare a query: compact mode translates its columns into qidx (columns no SV has ->
        the zero column w - 1); the slab scatters it into qbuf.  0, or -1 (``failed`` set)."""
        cdef int kk, c
        if self.mode == STORE_DENSE:
            return 0
        if nnz > self.qcap and self._scratch(0, nnz) != 0:
            self.failed = True
            return -1
        if self.mode == STORE_COMPACT:
            for kk in range(nnz):
                c = self.cmap.get(idx[kk])
                self.qidx[kk] = c if 0 <= c < self.w - 1 else self.w - 1
            return 0
        for kk in range(nnz):
            c = self.cmap.get(idx[kk])
            self.qidx[kk] = c
            if c >= 0:
                self.qbuf[c] = x[kk]
                self.qbits[c >> 6] |= (<uint64_t>1) << (c & 63)
        self.qsq = row_sqnorm(x, nnz)
        return 0

    cdef void _unload(self, const int* idx, int nnz) noexcept nogil:
        cdef int kk, c
        if self.mode == STORE_SLAB:
            for kk in range(nnz):
                c = self.qidx[kk]
                if c >= 0:
                    self.qbuf[c] = 0.0
                    self.qbits[c >> 6] = 0

    cdef const uint64_t* _gather_bits(self, const uint64_t* bits) noexcept nogil:
        """The bitmap a kernel row's gathers read before their scatter buffer, or NULL (read the
        buffer) while the columns in use are few enough for the core's cache (BITS_MIN_COLS)."""
        return bits if self.cmap is not None and self.cmap.n >= bits_min_cols else NULL

    cdef uint64_t* _bits_of(self, const double* buf) noexcept nogil:
        """The bitmap kept with scatter buffer buf (qbuf, sbuf or tbuf)."""
        return self.qbits if buf == self.qbuf else (self.sbits if buf == self.sbuf else self.tbits)

    cdef void _scatter(self, Py_ssize_t i, double* buf) noexcept nogil:
        cdef int kk, c
        cdef uint64_t* bits = self._bits_of(buf)
        for kk in range(self.nz[i]):
            c = self.pcol[self.off[i] + kk]
            buf[c] = self.pval[self.off[i] + kk]
            bits[c >> 6] |= (<uint64_t>1) << (c & 63)

    cdef void _unscatter(self, Py_ssize_t i, double* buf) noexcept nogil:
        cdef int kk, c
        cdef uint64_t* bits = self._bits_of(buf)
        for kk in range(self.nz[i]):
            c = self.pcol[self.off[i] + kk]
            buf[c] = 0.0
            bits[c >> 6] = 0

    cdef void _dists(self, Py_ssize_t lo, Py_ssize_t hi, const double* x, const int* idx, int nnz,
                            double* out) noexcept nogil:
        """||x_i - x||^2 for SVs lo..hi-1 of the loaded query."""
        if self.mode == STORE_DENSE:
            ok_sqdist_fm(self.XT, self.cap, lo, hi, x, idx, nnz, nnz == self.d, self.sqn, out)
        elif self.mode == STORE_COMPACT:
            ok_sqdist_fm(self.XT, self.cap, lo, hi, x, self.qidx, nnz, False, self.sqn, out)
        else:
            ok_sqdist_slab_mir(self.off, self.nz, self.pval, self.pcol, self.mir, self.rsc, self.sqn, lo, hi, self.qbuf,
                               self._gather_bits(self.qbits), self.qsq, x, self.qidx, nnz, out)

    cdef double sqdist_x(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq) noexcept nogil:
        """||x_i - x||^2 for a query row (the one formula every kernel value here uses)."""
        cdef const double* r = self.X + i * self.d
        cdef double dist, part, t, sk
        cdef int kk
        if self.mode == STORE_DENSE and nnz == self.d:
            # dense query: (x_k - s)^2 in index order, exactly as ok_sqdist_fm's dense lanes
            dist = 0.0
            for kk in range(nnz):
                t = x[kk] - r[kk]
                dist += t * t
            return dist
        if self.mode == STORE_DENSE:
            # sparse query against a dense SV: exact differences on the query's support plus the
            # SV's mass outside it (sqn minus its mass on the support).  Both sums run in index
            # order with one accumulator, like row_sqnorm, so an SV whose support lies inside the
            # query's (a duplicate above all) leaves exactly 0, and k(x, x) = 1.
            dist = 0.0
            part = 0.0
            for kk in range(nnz):
                sk = r[idx[kk]]
                part += sk * sk
                t = x[kk] - sk
                dist += t * t
            t = self.sqn[i] - part
            if t > 0.0:
                dist += t
            return dist
        if self._load(x, idx, nnz) != 0:
            return NAN
        # one SV: the routines write out[i], so shift the arrays to make it out[0]
        if self.mode == STORE_COMPACT:
            ok_sqdist_fm(self.XT + i, self.cap, 0, 1, x, self.qidx, nnz, False, self.sqn + i, &dist)
        else:
            ok_sqdist_slab_mir(self.off + i, self.nz + i, self.pval, self.pcol, self.mir + i, self.rsc + i, self.sqn + i, 0, 1,
                               self.qbuf, self._gather_bits(self.qbits), self.qsq, x, self.qidx, nnz, &dist)
        self._unload(idx, nnz)
        return dist

    cdef double kernel_x(self, Py_ssize_t i, const double* x, const int* idx, int nnz, double xsq) noexcept nogil:
        """k(x_i, x) for one SV (same bits as the value kernel_row gives)."""
        return ok_exp_scalar(-self.gamma * self.sqdist_x(i, x, idx, nnz, xsq))

    cdef double log_kernel_sv(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """ln k(x_i, x_j) = -gamma ||x_i - x_j||^2 between two stored SVs."""
        cdef double dist
        cdef const double* q
        if self.mode != STORE_SLAB:
            return -self.gamma * ok_sqdist(self.X + i * self.w, self.X + j * self.w, self.w)
        q = self._dense_of(j, self.tbuf)
        ok_sqdist_slab_mir(self.off + i, self.nz + i, self.pval, self.pcol, self.mir + i, self.rsc + i, self.sqn + i, 0, 1, q,
                           NULL if self.mir[j] != NULL else self._gather_bits(self.tbits),
                           self.sqn[j], self.pval + self.off[j], self.pcol + self.off[j], self.nz[j], &dist)
        self._undense(j, self.tbuf)
        return -self.gamma * dist

    cdef double kernel_sv(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """k(x_i, x_j) between two stored SVs."""
        return ok_exp_scalar(self.log_kernel_sv(i, j))

    cdef void begin_sv_query(self, Py_ssize_t m) noexcept nogil:
        """Make SV m the query of log_kernels_sv (the slab scatters it); end with end_sv_query."""
        if self.mode == STORE_SLAB:
            self.svq = self._dense_of(m, self.sbuf)
            self.svq_bits = NULL if self.mir[m] != NULL else self._gather_bits(self.sbits)
        self.sq_slot = m

    cdef void log_kernels_sv(self, Py_ssize_t m, Py_ssize_t a, Py_ssize_t b, double* out) noexcept nogil:
        """out[i] = ln k(x_m, x_i) for SVs a..b-1 (log_kernel_sv(i, m)'s value), m the SV of
        begin_sv_query.  Reads only: blocks of candidates may run in parallel."""
        cdef Py_ssize_t i
        if self.mode == STORE_SLAB:
            ok_sqdist_slab_mir(self.off, self.nz, self.pval, self.pcol, self.mir, self.rsc, self.sqn, a, b, self.svq,
                               self.svq_bits,
                               self.sqn[m], self.pval + self.off[m], self.pcol + self.off[m], self.nz[m], out)
            for i in range(a, b):
                out[i] = -self.gamma * out[i]
            return
        for i in range(a, b):
            out[i] = -self.gamma * ok_sqdist(self.X + i * self.w, self.X + m * self.w, self.w)

    cdef void end_sv_query(self) noexcept nogil:
        if self.mode == STORE_SLAB and self.sq_slot >= 0:
            self._undense(self.sq_slot, self.sbuf)
        self.sq_slot = -1

    cdef void _block(self, Py_ssize_t b, const double* x, const int* idx, int nnz, double xsq, bint want_scores) noexcept nogil:
        """Kernel values of SVs [b*SV_BLOCK, ...) into self.k, and their partial score."""
        cdef Py_ssize_t lo = b * SV_BLOCK, hi = lo + SV_BLOCK, i
        cdef int c, C = self.C
        cdef double* out
        if hi > self.n:
            hi = self.n
        self._dists(lo, hi, x, idx, nnz, self.k)
        for i in range(lo, hi):
            self.k[i] = -self.gamma * self.k[i]
        ok_vexp(self.k + lo, self.k + lo, <int>(hi - lo))
        if not want_scores:
            return
        out = self.part + b * C
        if C == 1:
            out[0] = ok_dot(self.coef + lo, self.k + lo, <int>(hi - lo))
        else:
            for c in range(C):
                out[c] = 0.0
            for i in range(lo, hi):
                for c in range(C):
                    out[c] += self.coef[i * C + c] * self.k[i]

    cdef void _blocks(self, const double* x, const int* idx, int nnz, double xsq, bint want_scores) noexcept nogil:
        cdef Py_ssize_t nb = (self.n + SV_BLOCK - 1) // SV_BLOCK, b, i
        if self._load(x, idx, nnz) != 0:
            for i in range(self.n):
                self.k[i] = NAN
            for b in range(nb * self.C):
                self.part[b] = NAN
            return
        if self.n_threads > 1 and nb > 1 and self.n * (nnz + 8) >= self.par_threshold:
            for b in prange(nb, num_threads=self.n_threads, schedule="static"):
                self._block(b, x, idx, nnz, xsq, want_scores)
        else:
            for b in range(nb):
                self._block(b, x, idx, nnz, xsq, want_scores)
        self._unload(idx, nnz)

    cdef void kernel_row(self, const double* x, const int* idx, int nnz, double xsq) noexcept nogil:
        """self.k[i] = k(x_i, x) for every SV."""
        self._blocks(x, idx, nnz, xsq, False)

    cdef void predict(self, const double* x, const int* idx, int nnz, double xsq, double* out) noexcept nogil:
        """out[c] = sum_i alpha_ic k(x_i, x); also leaves the kernel row in self.k."""
        cdef Py_ssize_t nb = (self.n + SV_BLOCK - 1) // SV_BLOCK, b
        cdef int c
        for c in range(self.C):
            out[c] = 0.0
        if self.n == 0:
            return
        self._blocks(x, idx, nnz, xsq, True)
        for b in range(nb):
            for c in range(self.C):
                out[c] += self.part[b * self.C + c]
        for c in range(self.C):
            out[c] *= self.scale

    cdef void linear_row(self, const double* x, const int* idx, int nnz) noexcept nogil:
        """self.k[i] = x_i^T x for every SV (the linear kernel; one accumulator per SV, over the
        query's nonzeros in order, or the SV's in the slab)."""
        cdef Py_ssize_t i
        cdef int kk
        cdef double s
        cdef const double* r
        if self._load(x, idx, nnz) != 0:
            for i in range(self.n):
                self.k[i] = NAN
            return
        for i in range(self.n):
            s = 0.0
            if self.mode == STORE_SLAB:
                for kk in range(self.nz[i]):
                    s += self.qbuf[self.pcol[self.off[i] + kk]] * self.pval[self.off[i] + kk]
            else:
                r = self.X + i * self.w
                if self.mode == STORE_DENSE and nnz == self.d:
                    s = ok_dot(r, x, nnz)
                else:
                    for kk in range(nnz):
                        s += r[idx[kk] if self.mode == STORE_DENSE else self.qidx[kk]] * x[kk]
            self.k[i] = s
        self._unload(idx, nnz)

    cdef void average_correction(self, long long t, double* out) noexcept nogil:
        """out[c] = -(1/t) sum_i gam_ic k_i with the kernel row of the last query in self.k: added to
        f_t it gives the average of the hypotheses used for examples 1..t (0 when t = 0, and 0 once
        ``track`` is off: after the first removal the prediction is f_t itself)."""
        cdef Py_ssize_t i
        cdef int c
        cdef double acc
        for c in range(self.C):
            acc = 0.0
            if t > 0 and self.track:
                for i in range(self.n):
                    acc = acc + self.gam[i * self.C + c] * self.k[i]
                acc = -acc / <double>t
            out[c] = acc

    cdef void track_change(self, Py_ssize_t i, int c, double delta) noexcept nogil:
        """Record a change delta of alpha_ic made outside the methods above (learners that write
        the coefficients directly)."""
        if self.track:
            self.gam[i * self.C + c] += delta * <double>self.now

    # -- Python access ----------------------------------------------------------------------
    def _csr(self):
        """(data, indices, indptr) of the SVs in slot order, original columns, stored order."""
        cdef Py_ssize_t i
        cdef const double* xv
        cdef const int* iv
        cdef int m, kk
        indptr = np.zeros(self.n + 1, dtype=np.int64)
        data, indices = [], []
        for i in range(self.n):
            m = self.entries(i, &xv, &iv)
            dv = np.array([xv[kk] for kk in range(m)], dtype=np.float64)
            jv = np.array([iv[kk] for kk in range(m)], dtype=np.int32)
            keep = dv != 0.0
            data.append(dv[keep])
            indices.append(jv[keep])
            indptr[i + 1] = indptr[i] + int(keep.sum())
        cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)
        return cat(data, np.float64), cat(indices, np.int32), indptr

    @property
    def support_vectors(self):
        """The SVs in slot order: an (n, d) array in dense mode, otherwise an (n, d) CSR matrix
        (scipy.sparse) with the original columns, sorted within each row."""
        if self.mode != STORE_DENSE:
            import scipy.sparse as sp
            data, indices, indptr = self._csr()
            m = sp.csr_matrix((data, indices, indptr), shape=(self.n, self.d))
            m.sort_indices()
            return m
        out = np.empty((self.n, self.d))
        cdef double[:, ::1] ov = out
        if self.n:
            memcpy(&ov[0, 0], self.X, self.n * self.d * sizeof(double))
        return out

    @property
    def coefficients(self):
        """(n, C) array of the true coefficients alpha (scale applied)."""
        cdef Py_ssize_t i
        out = np.empty((self.n, self.C))
        cdef double[:, ::1] ov = out
        for i in range(self.n * self.C):
            ov[i // self.C, i % self.C] = self.scale * self.coef[i]
        return out

    @property
    def insertion_order(self):
        """Slots sorted from oldest to newest SV."""
        st = np.array([self.stamp[i] for i in range(self.n)], dtype=np.int64)
        return np.argsort(st, kind="stable")

    @property
    def stored_nonzeros(self):
        """Nonzeros held by the SVs present (compact and slab modes; n * d when dense)."""
        return int(self.nnz_total) if self.mode != STORE_DENSE else self.n * self.d

    def pool_stats(self):
        """The slab's pool (diagnostics and tests): entries ``used`` (handed out to slots, holes
        included), ``holes`` (entries no SV owns), ``allocated``, ``moves``: how many times a
        rewritten SV did not fit its room and was written elsewhere, ``compactions``, and
        ``recompactions``: how many times the set dropped the compact columns its SVs no longer
        hold (_recompact).  Zeros outside the slab."""
        if self.mode != STORE_SLAB:
            return {"used": 0, "holes": 0, "allocated": 0, "moves": 0, "compactions": 0, "recompactions": 0}
        return {"used": int(self.pused), "holes": int(self.pholes), "allocated": int(self.pcap),
                "moves": int(self.pmoves), "compactions": int(self.pcompactions),
                "recompactions": int(self.recompactions)}

    def nbytes(self):
        """Bytes this set has allocated (malloc, which tracemalloc does not see)."""
        cdef Py_ssize_t cap = self.cap, nb = (self.cap + SV_BLOCK - 1) // SV_BLOCK
        total = cap * (4 * sizeof(double) + sizeof(long long) + 2 * sizeof(int) + sizeof(char))
        total += 2 * cap * self.C * sizeof(double)
        total += nb * self.C * sizeof(double)
        if self.mode == STORE_SLAB:
            total += cap * sizeof(long long) + self.pcap * (sizeof(double) + sizeof(int))
        else:
            total += 2 * cap * self.w * sizeof(double)
        total += 3 * self.scap * sizeof(double) + self.qcap * sizeof(int)
        total += self.ecap * (sizeof(double) + sizeof(int)) if self.mode != STORE_DENSE else self.d * sizeof(int)
        if self.cmap is not None:
            total += self.cmap.nbytes()
        return int(total)

    def _query(self, data, indices):
        """(data, indices) of a Python query, validated: ``indices`` None means a dense row of d."""
        dv = np.ascontiguousarray(data, dtype=np.float64).ravel()
        idx = np.arange(dv.shape[0]) if indices is None else np.asarray(indices).ravel()
        if (indices is None and dv.shape[0] != self.d) or len(idx) != dv.shape[0] or \
                (len(idx) and (idx.min() < 0 or idx.max() >= self.d or np.unique(idx).size != len(idx))):
            raise ValueError("query does not match the support set's dimension")
        if indices is None and self.mode != STORE_DENSE:     # wide: the nonzeros only
            keep = dv != 0.0
            dv, idx = dv[keep], idx[keep]
        return np.append(dv, 0.0), np.append(idx, 0).astype(np.int32), dv.shape[0]

    def kernel_values(self, x, indices=None):
        """k(x_i, x) for every SV: a dense query x of d values, or the sparse query (x, indices)
        with distinct 0-based indices (tests)."""
        dq, iq, nnz = self._query(x, indices)
        cdef double[::1] xv = dq
        cdef int[::1] iv = iq
        if self.n:
            self.kernel_row(&xv[0], &iv[0], nnz, row_sqnorm(&xv[0], nnz))
        return np.array([self.k[i] for i in range(self.n)])

    def sqdists(self, data, indices=None):
        """||x_i - x||^2 for every SV (slot order) through the kernel row's routine.

        ``indices`` None: ``data`` is a dense query of d values; otherwise the sparse query
        (data, indices) with distinct 0-based indices (tests and diagnostics).
        """
        dq, iq, nnz = self._query(data, indices)
        cdef double[::1] dv = dq
        cdef int[::1] iv = iq
        out = np.zeros(self.n)
        cdef double[::1] ov = out
        if self.n:
            if self._load(&dv[0], &iv[0], nnz) != 0:
                raise MemoryError("cannot grow the query buffer")
            self._dists(0, self.n, &dv[0], &iv[0], nnz, &ov[0])
            self._unload(&iv[0], nnz)
        return out

    def sv_kernels(self, Py_ssize_t m):
        """k(x_m, x_i) for every SV i through the merge's routine (log_kernels_sv; tests)."""
        if not 0 <= m < self.n:
            raise IndexError("no such support vector")
        out = np.zeros(self.n)
        cdef double[::1] ov = out
        self.begin_sv_query(m)
        self.log_kernels_sv(m, 0, self.n, &ov[0])
        self.end_sv_query()
        return np.exp(out)

    def kernel_pair(self, Py_ssize_t i, Py_ssize_t j):
        """k(x_i, x_j) between two stored SVs (kernel_sv; tests)."""
        if not (0 <= i < self.n and 0 <= j < self.n):
            raise IndexError("no such support vector")
        return self.kernel_sv(i, j)

    def merge(self, Py_ssize_t m, Py_ssize_t j, double h, alpha):
        """Slot m <- h x_m + (1 - h) x_j with coefficients alpha, then SV j leaves the set as in
        ``discard`` (merge_into and remove, BSGD's maintenance step; tests)."""
        if not (0 <= m < self.n and 0 <= j < self.n and m != j):
            raise IndexError("no such pair of support vectors")
        cdef double[::1] av = np.ascontiguousarray(alpha, dtype=np.float64).reshape(self.C)
        if self.merge_into(m, j, h, &av[0]) != 0:
            raise MemoryError("cannot merge")
        self.remove(j)

    def add(self, data, indices=None, alpha=None):
        """Append an SV (a dense row of d, or sparse (data, indices)); returns its slot (tests)."""
        dq, iq, nnz = self._query(data, indices)
        cdef double[::1] dv = dq
        cdef int[::1] iv = iq
        cdef double[::1] av = np.ones(self.C) if alpha is None else \
            np.ascontiguousarray(alpha, dtype=np.float64).reshape(self.C)
        cdef Py_ssize_t i = self.append(&dv[0], &iv[0], nnz, row_sqnorm(&dv[0], nnz), &av[0])
        if i < 0:
            raise MemoryError("support set full or out of memory")
        return i

    def discard(self, Py_ssize_t i):
        """Remove slot i (the last SV moves into it; tests)."""
        if not 0 <= i < self.n:
            raise IndexError("no such support vector")
        self.remove(i)

    def get_state(self):
        """The set as plain arrays: dense mode ``X`` (n, d) as before; compact and slab modes
        the SVs as CSR with original columns (``data``, ``indices``, ``indptr``, stored order),
        the column map's ``columns`` and the compact ``width``: size proportional to the stored
        nonzeros, and set_state restores the same bits.  Reading a lazy SV (a BSGD sink, _absorb)
        settles it first, as every whole read does, so the norms are taken after the entries."""
        cdef Py_ssize_t i
        csr = self._csr() if self.mode != STORE_DENSE else None
        coef = np.array([self.coef[i] for i in range(self.n * self.C)]).reshape(self.n, self.C)
        stamp = np.array([self.stamp[i] for i in range(self.n)], dtype=np.int64)
        sqn = np.array([self.sqn[i] for i in range(self.n)])
        gam = np.array([self.gam[i] for i in range(self.n * self.C)]).reshape(self.n, self.C)
        st = {"d": self.d, "C": self.C, "gamma": self.gamma, "budget": self.budget, "n_threads": self.n_threads,
              "scale": self.scale, "clock": self.clock, "coef": coef, "stamp": stamp, "sqn": sqn,
              "track": int(self.track), "gam": gam}
        if self.mode == STORE_DENSE:
            st["X"] = self.support_vectors
        else:
            data, indices, indptr = csr
            st.update(storage=self.storage, width=int(self.w), columns=self.cmap.columns(),
                      data=data, indices=indices, indptr=indptr, recompact_at=int(self.recompact_at))
        return st

    def set_state(self, st):
        cdef Py_ssize_t i, n
        cdef int w
        if "X" in st:
            n = np.asarray(st["X"]).shape[0]
            if np.asarray(st["X"]).shape != (n, self.d):
                raise ValueError("support set arrays have inconsistent shapes")
        else:
            indptr = np.asarray(st["indptr"], dtype=np.int64)
            data = np.ascontiguousarray(st["data"], dtype=np.float64)
            indices = np.ascontiguousarray(st["indices"], dtype=np.int32)
            n = indptr.shape[0] - 1
            if n < 0 or indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[n] != data.shape[0] \
                    or indices.shape != data.shape or \
                    (indices.size and (indices.min() < 0 or indices.max() >= self.d)):
                raise ValueError("support set arrays have inconsistent shapes")
        if np.asarray(st["coef"]).shape != (n, self.C) \
                or np.asarray(st["stamp"]).shape != (n,) or np.asarray(st["sqn"]).shape != (n,):
            raise ValueError("support set arrays have inconsistent shapes")
        if self.budget >= 0 and n > self.budget:
            raise ValueError("support set holds more vectors than its budget")
        gam = np.zeros((n, self.C)) if "gam" not in st else np.asarray(st["gam"], dtype=np.float64)
        if gam.shape != (n, self.C):
            raise ValueError("support set arrays have inconsistent shapes")
        cdef const double[:, ::1] cv = np.ascontiguousarray(st["coef"], dtype=np.float64).reshape(n, self.C)
        cdef const long long[::1] sv = np.ascontiguousarray(st["stamp"], dtype=np.int64)
        cdef const double[::1] qv = np.ascontiguousarray(st["sqn"], dtype=np.float64)
        cdef const double[:, ::1] gv = np.ascontiguousarray(gam).reshape(n, self.C)
        cdef const double[:, ::1] Xv
        cdef const double[::1] dv
        cdef const int[::1] jv
        if "X" not in st and self.mode != STORE_DENSE:
            # the saved column map (same compact order) and width, before any SV is stored
            cols = np.asarray(st["columns"])
            if cols.ndim != 1 or (cols.size and (cols.min() < 0 or cols.max() >= self.d)) \
                    or len(np.unique(cols)) != cols.size:
                raise ValueError("support set column map is inconsistent")
            self.cmap = ColumnMap(cols)
            if self.mode == STORE_COMPACT:
                w = int(st["width"])
                if w < cols.size + 1:
                    raise ValueError("support set width is inconsistent")
                free(self.X); free(self.XT)
                self.X = <double*>calloc(self.cap * w, sizeof(double))
                self.XT = <double*>calloc(self.cap * w, sizeof(double))
                if self.X == NULL or self.XT == NULL:
                    raise MemoryError("cannot allocate the support set")
                self.w = w
            if self._scratch(cols.size + 1, cols.size + 1) != 0:
                raise MemoryError("cannot allocate the support set")
        if self.reserve(max(n, 1)) != 0 or (n > self.cap):
            raise MemoryError("cannot allocate the support set")
        if "X" in st:
            Xv = np.ascontiguousarray(st["X"], dtype=np.float64).reshape(n, self.d)
            for i in range(n):
                if self.mode == STORE_DENSE:
                    memcpy(self.X + i * self.d, &Xv[i, 0], self.d * sizeof(double))
                    self._mirror(i)
                else:                                   # a dense file loaded into wide storage
                    row = np.asarray(Xv[i])
                    nzc = np.flatnonzero(row).astype(np.int32)
                    self._store_py(i, np.append(row[nzc], 0.0), np.append(nzc, 0).astype(np.int32), nzc.size)
        else:
            if self.mode == STORE_DENSE:
                raise ValueError("a sparse support set state needs wide storage")
            dv = np.append(data, 0.0)
            jv = np.append(indices, 0).astype(np.int32)
            self.recompact_at = PY_SSIZE_T_MAX         # the saved map, as it was
            for i in range(n):
                if self._store(i, &dv[indptr[i]], &jv[indptr[i]], <int>(indptr[i + 1] - indptr[i])) != 0:
                    raise MemoryError("cannot allocate the support set")
                self.n = i + 1                         # _store counts a slot >= n as new
            # when the set drops its unused columns next (files before it: from twice the map)
            self.recompact_at = max(1, int(st.get("recompact_at", max(recompact_min, 2 * self.cmap.n))))
        for i in range(n):
            memcpy(self.coef + i * self.C, &cv[i, 0], self.C * sizeof(double))
            memcpy(self.gam + i * self.C, &gv[i, 0], self.C * sizeof(double))
            self.stamp[i] = sv[i]
            self.sqn[i] = qv[i]
        self.n = n
        self.scale = float(st["scale"])
        self.clock = int(st["clock"])
        self.track = bool(st.get("track", 0))

    def _store_py(self, Py_ssize_t i, data, indices, int nnz):
        cdef const double[::1] dv = data
        cdef const int[::1] jv = indices
        if self._store(i, &dv[0], &jv[0], nnz) != 0:
            raise MemoryError("cannot allocate the support set")
        self.n = max(self.n, i + 1)

    def __reduce__(self):
        return (_rebuild_support, (self.get_state(),))


def _rebuild_support(st):
    s = SupportSet(int(st["d"]), int(st["C"]), float(st["gamma"]), int(st["budget"]), int(st["n_threads"]),
                   storage=str(st.get("storage", "auto")))
    s.set_state(st)
    return s


cdef inline double ok_exp_scalar(double v) noexcept nogil:
    # one value through the same vector routine as the kernel rows, so k(x_i, x_j) computed
    # here matches the value a query would get bit for bit
    cdef double out
    ok_vexp(&v, &out, 1)
    return out


cdef class KernelCore(LearnerCore):
    """Base of learners whose model is a kernel expansion held in a SupportSet."""

    def _setup_kernel(self, int n_features, int task, int n_outputs, double gamma, Py_ssize_t budget=-1, int n_threads=1):
        self._setup(n_features, task, n_outputs, n_threads)
        self.gamma = gamma
        self.sv = SupportSet(n_features, self.n_outputs, gamma, budget, self.n_threads)

    cdef void kernel_scores(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        """Score x (and leave k(x_i, x) in self.sv.k and ||x||^2 in self.xsq)."""
        self.xsq = row_sqnorm(x, nnz)
        self.sv.predict(x, idx, nnz, self.xsq, out)
        if self.averaged:                # before any update of this step (LearnerCore.run adds it)
            self.sv.now = self.n_seen
            self.sv.average_correction(self.n_seen, self.avg_buf)

    cdef bint out_of_memory(self) noexcept nogil:
        return self.sv.failed

    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        cdef int c
        self.kernel_scores(x, idx, nnz, out)
        if self.average_leads():
            for c in range(self.n_outputs):
                out[c] += self.avg_buf[c]
        return -1 if self.sv.failed else 0

    def set_averaged(self, bint on):
        """Record and return the average of the hypotheses used so far instead of the current
        one (the averaged Perceptron, Freund & Schapire 1999); the updates are unchanged.  Call
        before the first example: the support set starts tracking the coefficients' history.

        The average is kept while it is exact, i.e. until the first SV leaves the set (a budget's
        removal, replacement or merge); from then on the prediction is the current hypothesis.  A
        removed SV's share of the past hypotheses cannot be kept within the budget, and the
        average restricted to the SVs present weights each by its age (t - T_i)/t: it lags
        behind the updates and ended worse than the majority label over whole streams (RBP,
        budget 1,000: ijcnn1 41.9 %, a9a 33.4 %, against 6.2 % and 21.4 % without averaging).
        Keeping it further, until the removed share of the average's mass reached 0.5 to 20 %,
        never did better than stopping at the first removal (a9a, magic04, cod-rna.tr).
        """
        if on and self.sv.n and not self.sv.track:
            raise ValueError("averaging must be switched on before the first support vector")
        self.averaged = on
        self.sv.track = on

    cdef Py_ssize_t model_size(self) noexcept nogil:
        return self.sv.n

    def share_caches(self, int parts):
        """See LearnerCore.share_caches: the support set's dense rows of heavy SVs
        (``SupportSet.share_rows``)."""
        self.sv.share_rows(parts)

    @property
    def n_threads_(self):
        return self.n_threads

    def set_threads(self, int n):
        LearnerCore.set_threads(self, n)
        self.sv.n_threads = self.n_threads

    def get_state(self):
        st = LearnerCore.get_state(self)
        st["gamma"] = self.gamma
        st["sv"] = self.sv.get_state()
        return st

    def set_state(self, st):
        LearnerCore.set_state(self, st)
        self.gamma = float(st["gamma"])
        sv = _rebuild_support(st["sv"])
        if sv.d != self.n_features or sv.C != self.n_outputs:
            raise ValueError("support set dimensions do not match the learner")
        self.sv = sv
