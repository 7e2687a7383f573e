# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Random Fourier features (ALGORITHMS.md §1.3) and FeatureCore, the base of feature-space learners.

z(x) = D^{-1/2} [cos(Omega^T x); sin(Omega^T x)],  Omega = sqrt(2 gamma) E,  E ~ N(0, 1)^{d x D}
from the FEATURES stream, so E[z(x)^T z(x')] = exp(-gamma ||x - x'||^2).  E is stored and the
input is scaled instead (a = E^T (sqrt(2 gamma) x)): the same code then serves RRF, whose
per-feature scale exp(rho_n) changes every step.  The D^{-1/2} factor is folded into the scalar
of each dot/axpy instead of being applied to 2D features.  cos/sin and the long dot/axpy run
through the dispatched vector kernels of include/ok_vmath.h.

precision="float32" (opt-in) keeps a float32 copy of E in tiles and computes Omega^T x and cos/sin
in float32 (ok_project32, ok_vcossin32); the features handed to the weights are still float64.
E itself, its stream and the model state are the same in both precisions.

Wide data: the keyed rule
-------------------------
A (d, D) matrix cannot follow wide sparse data (hashed text, URLs: millions of possible columns, a
few dozen nonzeros per row).  There E is never stored: row c, the D frequencies of input column c,
is drawn on demand from a counter-based generator keyed by (seed, column),

    E[c, j] = z_j of row c of (seed, FEATURE_ROWS),   j < D      (FEATURE_ROWS = 8, onlinekern.seeding)

drawn by the generator of the map's ``keyed_version``: 2 (:data:`KEYED_VERSION`, every new map)
is the 256-layer ziggurat of include/ok_zig.h over a per-row SplitMix64 counter stream (~3.3 ns
per normal on AVX2), 1 is ok_normal(seed, FEATURE_ROWS, c, j) of include/ok_rng.h (Philox +
Box-Muller, ~9 ns), the rows of models saved before version 2, which load and go on with them
(model states record the version, ``keyed_version``; a keyed state without it is version 1).
Either way element j of a row is a pure function of (seed, c, j), so a column's row is the same
bits whatever n_features is, whenever and in whatever order the column appears, and the features keep their distribution (omega ~ N(0, 2 gamma I) over all columns).
A bounded cache of the hot columns' rows (include/ok_rowcache.h; ``cache_bytes``, 64 MiB by default,
8-way set associative; a miss replaces the least recently used line not hit since it was drawn,
else the least recently used one) saves the regeneration: a miss costs D
normals, a hit D multiply-adds.  Generation is pure, so every result is the
same bits whatever the cache size (one row or all of them) and on any thread count; rows are
fetched serially, in the step, never inside a parallel section.  Memory: the cache plus O(D)
scratch, never O(d): no buffer of the map is sized by n_features.

Which rule (``rule``): "features" is the FEATURES-stream matrix above, "keyed" the on-demand rows,
"auto" (default) takes "features" when E fits in :data:`DENSE_E_BYTES` (d D 8 bytes <= 64 MiB:
every data set of the benchmarks and papers, whose goldens and published figures are unchanged)
and "keyed" above it.  The decision is a pure function of (d, D), so a model rebuilt from its
state takes the same rule; model states record it (``feature_rule``; files without it are
"features" files and load as before).  The keyed rule computes in float64 only: precision="float32"
is refused there with a clear message.  Under the keyed rule the projection takes the nonzeros in
chunks of 32 whose rows the cache holds together (a row whose whole cache set is taken by the chunk
goes to spare scratch) through a register-blocked pass over row pointers, each chunk continuing the
sums of the last: the same chain of operations per output whatever the chunks and the cache.  A row
whose nonzeros take at most 1/8 of the cache's lines keeps all its rows pinned until the next
projection, and ``kept_row`` hands them to a learner that needs them again for the same example
(RRF's rho-gradient) without a second lookup.
The projection asks for the lines of a chunk's cache sets before their lookups (and for the next
chunk's while it works on this one) and for a hit's row as it is found: on a wide stream most of
them are in main memory, and the lookups would otherwise wait for each in turn.
Measured (AVX2 EPYC, busy): a miss draws D normals at ~3.3 ns each (version 1: ~9 ns, Box-Muller's
log and cos/sin about half of it); on a Zipf(1.1) stream over 2^20 columns (72
nonzeros per row) the default cache hits 71 % of the rows (1 MiB: 30 %, 256 MiB: 81 %) with plain
LRU replacement; on the 2^24-column text stream (tools/make_text_stream.py, 262,144 rows) RRF's
default cache misses 15.2 % of its lookups with the rule above, 18.7 % with plain LRU.
"""
from libc.math cimport sqrt
from libc.stdlib cimport realloc, free
from onlinekern._core.vmath cimport ok_axpy, ok_project, ok_vcossin, ok_project32, ok_vcossin32, OK_F32_TILE
from onlinekern._core.learner cimport LearnerCore, RowView, row_view, get_row
from onlinekern._core.weights cimport ScaledWeights
from onlinekern._core.columns cimport ColumnMap
from libc.stdint cimport uint32_t, uint64_t

import weakref

import numpy as np
from onlinekern._core.learner import RowData
from onlinekern.seeding import FEATURES, FEATURE_ROWS, rng
from onlinekern._core.counter_rng import normals as _counter_normals, zig_normals as _counter_zig_normals
from onlinekern._core.vmath import tile_f32

PRECISIONS = ("float64", "float32")
RULES = ("auto", "features", "keyed")
#: The keyed rows' generator of new maps (module docstring); :data:`KEYED_VERSIONS` load
KEYED_VERSION = 2
KEYED_VERSIONS = (1, 2)

#: rule="auto" keeps the stored FEATURES-stream E while d * D * 8 bytes fit here, keyed rows above
DENSE_E_BYTES = 64 << 20
#: Default size of the keyed rule's row cache (rows of D doubles; resident once used, in 2 MiB pages
#: where the system gives transparent huge pages: include/ok_mem.h)
ROW_CACHE_BYTES = 64 << 20


def feature_rule(int n_features, int n_components, rule="auto"):
    """The frequency rule a map of this shape uses: "features" (stored E) or "keyed" (rows on demand).

    Parameters
    ----------
    n_features, n_components : int
        d and D.
    rule : {"auto", "features", "keyed"}
        "auto": "features" when d D 8 bytes <= :data:`DENSE_E_BYTES`, else "keyed".

    Returns
    -------
    str
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(map(repr, RULES))}, got {rule!r}")
    if rule != "auto":
        return rule
    return "features" if <long long>n_features * n_components * 8 <= DENSE_E_BYTES else "keyed"


def keyed_rows(seed, columns, int n_components, int version=KEYED_VERSION):
    """Rows of the keyed frequency matrix for ``columns`` (Python twin, for test oracles).

    Parameters
    ----------
    seed : int
    columns : array of int
    n_components : int
    version : int
        The generator (:data:`KEYED_VERSIONS`).

    Returns
    -------
    ndarray (len(columns), n_components)
        Row c: the first n_components normals of row c of (seed, FEATURE_ROWS) -- ok_zig_normals
        (version 2) or ok_normals (version 1) -- the numbers the keyed map uses.
    """
    if version not in KEYED_VERSIONS:
        raise ValueError(f"keyed_version must be one of {KEYED_VERSIONS}, got {version!r}")
    draw = _counter_zig_normals if version == 2 else _counter_normals
    cols = np.asarray(columns, dtype=np.int64).ravel()
    out = np.empty((cols.shape[0], n_components))
    for i, c in enumerate(cols):
        out[i] = draw(seed, FEATURE_ROWS, int(c), n_components)
    return out

def keyed_version_of(st):
    """The keyed rows' version a model state asks for: its ``keyed_version``, or 1 for a state
    written before the key existed (version 1 was the only one then).  Ignored by maps of the
    "features" rule."""
    return int(st.get("keyed_version", 1))

# E larger than this is refused with a clear message rather than exhausting memory
MAX_E_BYTES = 4 << 30


# E arrays alive, by (seed, d, D): the width race's candidates (one map each, the same seed) share one
_DRAWN = weakref.WeakValueDictionary()


def draw_E(seed, int d, int D):
    """E of the FEATURES stream: one standard_normal((d, D)) call (§1.5), read-only, and the very
    array another map of the same (seed, d, D) still holds (the width race runs up to eight maps of
    one seed: at d D = 2^16 x 100 eight copies were 420 MB)."""
    if <long long>d * D * 8 > MAX_E_BYTES:
        raise MemoryError(f"random feature matrix of {d} x {D} doubles exceeds {MAX_E_BYTES >> 30} GiB; "
                          "use fewer components")
    key = (int(seed), d, D)
    E = _DRAWN.get(key)
    if E is None:
        E = np.ascontiguousarray(rng(seed, FEATURES).standard_normal((d, D)))
        E.flags.writeable = False
        _DRAWN[key] = E
    return E


# ok_project (register-blocked) up to this many frequencies; one axpy per nonzero above.
cdef int PROJECT_BLOCKED = 512
# the keyed rule projects the nonzeros in chunks of this many rows held together in the cache
cdef int KEYED_CHUNK = 32


cdef class RandomFourierMap:
    """Paired random Fourier features of the Gaussian kernel exp(-gamma ||x - x'||^2).

    Parameters
    ----------
    n_features : int
    n_components : int, number of frequencies D (the map has 2D features).
    gamma : float > 0
    seed : int, decides E (the FEATURES stream, or the keyed rows).
    E : ndarray (n_features, n_components), optional; given instead of drawn (model files; the
        "features" rule only).
    precision : "float64" (default) or "float32": the arithmetic of Omega^T x and cos/sin
        ("features" rule only).
    rule : "auto" (default), "features" or "keyed": how E is made (module docstring,
        :func:`feature_rule`).
    cache_bytes : int, optional
        Size of the keyed rule's row cache (:data:`ROW_CACHE_BYTES`); at least one row is kept.
        Results do not depend on it.
    keyed_version : int, optional
        The keyed rows' generator (:data:`KEYED_VERSIONS`; default :data:`KEYED_VERSION`): 1
        only to go on with a model saved before version 2.  Ignored under "features".
    """

    def __cinit__(self, *args, **kwargs):
        self.cache_ok = False
        self.cp = &self.cache
        self.cache_host = None
        self.cache_shared = False
        self.keyed = False
        self.krow = NULL
        self.krow_cap = 0
        self.kept_n = 0

    def __dealloc__(self):
        if self.cache_ok:
            ok_rowcache_free(&self.cache)
            self.cache_ok = False
        free(self.krow)
        self.krow = NULL

    def __init__(self, int n_features, int n_components, double gamma, seed=0, E=None, precision="float64",
                 rule="auto", cache_bytes=None, keyed_version=None):
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        if n_components < 1:
            raise ValueError(f"n_components must be >= 1, got {n_components}")
        if not gamma > 0:
            raise ValueError(f"gamma must be > 0, got {gamma!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(map(repr, PRECISIONS))}, got {precision!r}")
        if E is not None and rule == "auto":
            rule = "features"
        rule = feature_rule(n_features, n_components, rule)
        if cache_bytes is None:
            cache_bytes = ROW_CACHE_BYTES
        if int(cache_bytes) < 0:
            raise ValueError(f"cache_bytes must be >= 0, got {cache_bytes!r}")
        if keyed_version is None:
            keyed_version = KEYED_VERSION
        if keyed_version not in KEYED_VERSIONS:
            raise ValueError(f"keyed_version must be one of {KEYED_VERSIONS}, got {keyed_version!r}")
        self.keyed_version = int(keyed_version)
        self.d = n_features
        self.D = n_components
        self.gamma = gamma
        self.seed = seed
        self.root = sqrt(2.0 * gamma)
        self.norm = 1.0 / sqrt(<double>n_components)
        self.keyed = rule == "keyed"
        self.cache_bytes = int(cache_bytes)
        self.f32 = precision == "float32"
        if self.keyed:
            self._alloc_scratch()
            if E is not None:
                raise ValueError("the keyed rule draws E's rows on demand: E must not be given")
            if self.f32:
                raise ValueError(f"precision='float32' needs the stored frequency matrix, and {n_features} x "
                                 f"{n_components} is past {DENSE_E_BYTES >> 20} MiB (wide data use the keyed "
                                 "rule, float64 only): use precision='float64'")
            self.E_ = None
            self.E = NULL
            self.nz_ = np.zeros(KEYED_CHUNK)
            self.nzi_ = None
            self.rowp_ = np.zeros(KEYED_CHUNK, dtype=np.uintp)
            self.spare_ = np.zeros(KEYED_CHUNK * n_components)
            self._bind_keyed()
            self.share_cache(1)
            return
        if E is None:
            E = draw_E(seed, n_features, n_components)
        E = np.ascontiguousarray(E, dtype=np.float64)
        if E.shape != (n_features, n_components):
            raise ValueError(f"E has shape {E.shape}, expected {(n_features, n_components)}")
        self.E_ = E
        cdef const double[:, ::1] ev = E
        self.E = &ev[0, 0]
        self._alloc_scratch()          # after E, as before the keyed rule (the same heap layout)
        self.nz_ = np.zeros(n_features)
        self.nzi_ = np.zeros(n_features, dtype=np.int32)
        cdef double[::1] zv = self.nz_
        cdef int[::1] zi = self.nzi_
        self.nzv = &zv[0]
        self.nzi = &zi[0]
        if self.f32:
            self._setup_f32()

    def _alloc_scratch(self):
        buf = np.zeros(3 * self.D)
        self.scratch_ = buf
        cdef double[::1] bv = buf
        self.a = &bv[0]
        self.cs = &bv[self.D]

    def _bind_keyed(self):
        cdef double[::1] zv = self.nz_, sv = self.spare_
        cdef size_t[::1] pv = self.rowp_
        self.nzv = &zv[0]
        self.spare = &sv[0]
        self.rowp = <const double**>&pv[0]

    def _setup_f32(self):
        tiles = tile_f32(self.E_)
        self.Dp = tiles.shape[0] * OK_F32_TILE
        a32 = np.zeros(self.Dp, dtype=np.float32)
        nzv32 = np.zeros(self.d, dtype=np.float32)
        self.f32_ = (tiles, a32, nzv32)
        cdef const float[:, :, ::1] tv = tiles
        cdef float[::1] av = a32, vv = nzv32
        self.Et32 = &tv[0, 0, 0]
        self.a32 = &av[0]
        self.nzv32 = &vv[0]

    @property
    def precision(self):
        return "float32" if self.f32 else "float64"

    @property
    def rule(self):
        """"features" (E stored, FEATURES stream) or "keyed" (rows drawn on demand)."""
        return "keyed" if self.keyed else "features"

    @property
    def E(self):
        """The standard-normal matrix E (Omega = sqrt(2 gamma) E); None under the keyed rule
        (use :meth:`rows`)."""
        return self.E_

    @property
    def n_components(self):
        return self.D

    def rows(self, columns):
        """Rows of E for ``columns``: array (len(columns), D), under either rule.

        Parameters
        ----------
        columns : array of int in [0, n_features)

        Returns
        -------
        ndarray
        """
        cols = np.asarray(columns, dtype=np.int64).ravel()
        if cols.size and (cols.min() < 0 or cols.max() >= self.d):
            raise ValueError(f"columns must lie in [0, {self.d})")
        if not self.keyed:
            return np.array(self.E_[cols])
        out = np.empty((cols.shape[0], self.D))
        cdef double[:, ::1] ov = out
        cdef const double* r
        cdef Py_ssize_t i
        cdef int j
        for i in range(cols.shape[0]):
            r = self.row(<int>cols[i])
            for j in range(self.D):
                ov[i, j] = r[j]
        return out

    def share_cache(self, int parts):
        """Hold a 1/``parts`` share of ``cache_bytes`` in the keyed row cache (emptied): the width
        race runs one map per candidate kernel, and each full cache would multiply the memory.
        Results do not depend on the cache, only the rows regenerated do.  No-op under "features",
        and for maps that share one cache (:meth:`join_cache`), which keep it whole.

        Parameters
        ----------
        parts : int >= 1
        """
        if not self.keyed or self.cache_shared:
            return
        if parts < 1:
            raise ValueError(f"parts must be >= 1, got {parts}")
        if self.cache_ok:
            ok_rowcache_free(&self.cache)
            self.cache_ok = False
        self.kept_n = 0
        if ok_rowcache_init(&self.cache, <uint64_t>self.seed, <uint32_t>FEATURE_ROWS, self.keyed_version, self.D,
                            <size_t>(self.cache_bytes // parts)) != 0:
            raise MemoryError("cannot allocate the random-feature row cache")
        self.cache_ok = True

    def join_cache(self, RandomFourierMap other):
        """Use ``other``'s keyed row cache instead of one's own (freed), when both draw the same rows.

        The width race's candidates are maps of one seed and D that differ only in their kernel
        width, which scales the rows (``root``, RRF's e^rho) but is not part of them: row c is
        row c of (seed, FEATURE_ROWS) in every candidate.  Sharing one cache, a column's row is
        drawn once for all the candidates instead of once per candidate, into one cache of
        ``cache_bytes`` rather than a 1/k share each; the bits are unchanged (the cache never
        decides a row's numbers).  The maps must not run at the same time (the race runs its
        candidates one after another; every row is fetched in the step, outside parallel sections).

        Parameters
        ----------
        other : RandomFourierMap
            Keyed, with this map's seed, D and keyed_version.

        Returns
        -------
        bool
            Whether the cache is now shared (False: a map of the "features" rule, or other rows).
        """
        if (not (self.keyed and other.keyed and self.seed == other.seed and self.D == other.D
                 and self.keyed_version == other.keyed_version) or other is self):
            return False
        host = other if other.cache_host is None else other.cache_host
        if host is self or host is self.cache_host:      # already the cache in use
            return True
        if self.cache_shared and self.cache_host is None:
            raise ValueError("other maps use this map's row cache: it cannot take another's")
        if self.cache_ok:
            ok_rowcache_free(&self.cache)
            self.cache_ok = False
        self.cache_host = host
        self.cp = (<RandomFourierMap>host).cp
        self.kept_n = 0
        self.cache_shared = True
        (<RandomFourierMap>host).cache_shared = True
        return True

    def cache_stats(self):
        """The keyed row cache: dict of rows (capacity), ways, hits, misses and epochs (times its use
        clock was rescaled: every 8 x rows lookups, at least 2^19); zeros under "features"."""
        if not self.keyed:
            return {"rows": 0, "ways": 0, "hits": 0, "misses": 0, "epochs": 0}
        return {"rows": int(self.cp.nsets * self.cp.ways), "ways": int(self.cp.ways),
                "hits": int(self.cp.hits), "misses": int(self.cp.misses),
                "epochs": int(self.cp.epochs)}

    def nbytes(self):
        """Bytes the map uses: E and its d-sized buffers, or the keyed row cache in use (another
        map's when joined: :meth:`join_cache`), plus scratch."""
        n = self.scratch_.nbytes
        if self.keyed:
            return n + int(ok_rowcache_bytes(self.cp)) + self.nz_.nbytes + self.rowp_.nbytes + self.spare_.nbytes
        n += self.E_.nbytes + self.nz_.nbytes + self.nzi_.nbytes
        if self.f32:
            n += sum(a.nbytes for a in self.f32_)
        return n

    cdef const double* row(self, int col) noexcept nogil:
        """Row ``col`` of E (valid until the next call under the keyed rule)."""
        if self.keyed:
            return ok_rowcache_row(self.cp, col)
        return self.E + <Py_ssize_t>col * self.D

    cdef const double* kept_row(self, int k, int col) noexcept nogil:
        """Row ``col`` = idx[k] of E, for nonzero k of the row :meth:`project` took last, before
        any other use of the map: under the keyed rule the row the projection pinned (no second
        lookup), or fetched again without replacing the pinned ones (valid until the next call).
        The same numbers as :meth:`row`."""
        cdef const double* r
        if not self.keyed:
            return self.E + <Py_ssize_t>col * self.D
        if k < self.kept_n:
            r = self.krow[k]
            if r != NULL:
                return r
        return ok_rowcache_pin(self.cp, col, self.t_row, self.spare)

    cdef void project(self, const double* x, const int* idx, int nnz, const double* feat_scale,
                      const int* sidx) noexcept nogil:
        """a = sum_k (s_k x_k) E[idx_k, :], s_k = root (feat_scale NULL) or feat_scale[sidx_k]
        (root where sidx_k < 0).

        Up to PROJECT_BLOCKED frequencies one register-blocked pass (ok_project); above, one
        axpy per nonzero: E's rows then stream from L2, which bounds both forms alike (the
        blocked one measured no faster at D = 1000).  Both give the same bits.  The keyed rule
        projects chunks of KEYED_CHUNK nonzeros whose rows the cache holds together
        (ok_rowcache_pin) with the register-blocked ok_project_rows; each chunk continues the sums
        of the last, so the bits do not depend on the chunks, nor on the cache."""
        cdef int k, j, D = self.D, m = 0, init = 0
        cdef double v
        cdef uint64_t t0
        cdef bint keep
        cdef const double* r
        if self.keyed:
            # a row of at most 1/8 of the cache's lines keeps all its rows pinned together, so a
            # learner that needs them again (RRF's gradient) takes them from krow (kept_row)
            keep = <long>nnz * 8 <= <long>self.cp.nsets * self.cp.ways and self._reserve_kept(nnz)
            self.kept_n = nnz if keep else 0
            ok_rowcache_epoch(self.cp)         # (no row is pinned yet: the clock may be rescaled)
            self.t_row = self.cp.tick
            k = 0
            while True:
                m = 0
                t0 = self.t_row if keep else self.cp.tick
                # ask for the sets of this chunk (the first) and of the next one: their lines
                # arrive while this chunk's rows are looked up, drawn and projected
                for j in range(k if k == 0 else k + KEYED_CHUNK,
                               k + 2 * KEYED_CHUNK if k + 2 * KEYED_CHUNK < nnz else nnz):
                    ok_rowcache_touch(self.cp, idx[j])
                while k < nnz and m < KEYED_CHUNK:
                    if feat_scale == NULL or sidx[k] < 0:
                        v = x[k] * self.root
                    else:
                        v = x[k] * feat_scale[sidx[k]]
                    r = NULL
                    if v != 0.0:
                        self.nzv[m] = v
                        r = ok_rowcache_pin(self.cp, idx[k], t0, self.spare + <Py_ssize_t>m * D)
                        self.rowp[m] = r
                        if r == self.spare + <Py_ssize_t>m * D:     # scratch: not kept past the chunk
                            r = NULL
                        m += 1
                    if keep:
                        self.krow[k] = r
                    k += 1
                if m > 0 or init == 0:
                    ok_project_rows(D, m, self.nzv, self.rowp, self.a, init)
                    init = 1
                if k >= nnz:
                    return
        if self.f32:
            # float32 path: at most d nonzeros per call (rows with repeated indices have more;
            # each later call continues the float32 sums, which gives the same bits as one call)
            k = 0
            while True:
                m = 0
                while k < nnz and m < self.d:
                    v = x[k] * (self.root if feat_scale == NULL else feat_scale[sidx[k]])
                    if v != 0.0:
                        self.nzv32[m] = <float>v
                        self.nzi[m] = idx[k]
                        m += 1
                    k += 1
                ok_project32(self.Dp, self.d, m, self.nzv32, self.nzi, self.Et32, self.a32, init)
                init = 1
                if k >= nnz:
                    return
        if D <= PROJECT_BLOCKED and nnz <= self.d:      # (more nonzeros than features: duplicates)
            for k in range(nnz):
                v = x[k] * (self.root if feat_scale == NULL else feat_scale[sidx[k]])
                if v != 0.0:
                    self.nzv[m] = v
                    self.nzi[m] = idx[k]
                    m += 1
            ok_project(D, m, self.nzv, self.nzi, self.E, self.a)
            return
        for j in range(D):
            self.a[j] = 0.0
        for k in range(nnz):
            v = x[k] * (self.root if feat_scale == NULL else feat_scale[sidx[k]])
            if v != 0.0:
                ok_axpy(D, v, self.E + <Py_ssize_t>idx[k] * D, self.a)

    cdef bint _reserve_kept(self, int nnz) noexcept nogil:
        """Room for ``nnz`` kept row pointers (geometric growth); False without memory."""
        cdef int cap
        cdef void* p
        if nnz <= self.krow_cap:
            return True
        cap = nnz if nnz > 2 * self.krow_cap else 2 * self.krow_cap
        p = realloc(self.krow, <size_t>cap * sizeof(double*))
        if p == NULL:
            return False
        self.krow = <const double**>p
        self.krow_cap = cap
        return True

    cdef void features(self, const double* x, const int* idx, int nnz, const double* feat_scale) noexcept nogil:
        """cs = [cos a; sin a] (without the D^{-1/2} factor); feat_scale (if not NULL) indexed by column."""
        self.features_at(x, idx, nnz, feat_scale, idx)

    cdef void features_at(self, const double* x, const int* idx, int nnz, const double* feat_scale,
                          const int* sidx) noexcept nogil:
        """``features`` with the scale of nonzero k at feat_scale[sidx[k]] (sqrt(2 gamma) where
        sidx[k] < 0, keyed rule): RRF's per-column state lives at the columns' slots on wide data."""
        self.project(x, idx, nnz, feat_scale, sidx)
        if self.f32:
            ok_vcossin32(self.a32, self.cs, self.cs + self.D, self.D)
        else:
            ok_vcossin(self.a, self.cs, self.cs + self.D, self.D)

    def transform(self, X):
        """z(x) for every row of X: array (n, 2D).  Sparse X of any width allocates no (d, D) array
        under the keyed rule."""
        return self.transform_rows(RowData(X, self.d), NULL)

    cdef object transform_rows(self, object rows, const double* feat_scale, object slot_map=None):
        """z(x) for every row of a RowData, the input scaled per feature by feat_scale
        (NULL: sqrt(2 gamma) for all, as ``project``): indexed by column, or with ``slot_map`` (a
        ColumnMap) by the column's slot (sqrt(2 gamma) for columns it does not hold)."""
        cdef RowView rv = row_view(rows)
        cdef Py_ssize_t n = rows.n_rows, i
        out = np.zeros((n, 2 * self.D))
        cdef double[:, ::1] ov = out
        cdef const double* xr
        cdef const int* xi
        cdef int j, nnz
        cdef ColumnMap cmap = slot_map
        cdef int[::1] sv
        slots = np.zeros(64, dtype=np.int32)
        for i in range(n):
            get_row(&rv, i, &xr, &xi, &nnz)
            if cmap is not None:
                if nnz > slots.shape[0]:
                    slots = np.zeros(2 * nnz, dtype=np.int32)
                sv = slots
                cmap.lookup(xi, nnz, &sv[0])
                self.features_at(xr, xi, nnz, feat_scale, &sv[0])
            else:
                self.features(xr, xi, nnz, feat_scale)
            for j in range(2 * self.D):
                ov[i, j] = self.norm * self.cs[j]
        return out

    def keyed_state(self):
        """The entries a model state needs beyond seed and D to redraw this map's rows:
        ``{"keyed_version": ...}`` under the keyed rule, {} otherwise (read back by
        :func:`keyed_version_of`)."""
        return {"keyed_version": self.keyed_version} if self.keyed else {}

    def __reduce__(self):
        return (RandomFourierMap, (self.d, self.D, self.gamma, self.seed, self.E_, self.precision, self.rule,
                                   self.cache_bytes, self.keyed_version))


cdef class FeatureCore(LearnerCore):
    """Base of learners with a linear model w in the random-feature space: f_c(x) = w_c . z(x).

    The weights are a ScaledWeights, so the L2 shrink (1 - eta*lambda) is O(1); the D^{-1/2}
    of z is applied as a scalar (``fmap.norm``) to scores and steps, never to 2D features.
    """

    def _setup_features(self, int n_features, int task, int n_outputs, int n_components, double gamma, seed, E=None,
                        int n_threads=1, precision="float64", rule="auto", cache_bytes=None):
        self._setup(n_features, task, n_outputs, n_threads)
        self.fmap = RandomFourierMap(n_features, n_components, gamma, seed, E, precision, rule, cache_bytes)
        self.F2 = 2 * n_components
        self.w = ScaledWeights(self.n_outputs, self.F2)

    cdef Py_ssize_t model_size(self) noexcept nogil:
        return self.F2

    def share_caches(self, int parts):
        """See LearnerCore.share_caches: the map's keyed row cache."""
        self.fmap.share_cache(parts)

    def join_caches(self, other):
        """See LearnerCore.join_caches: the map's keyed row cache (RandomFourierMap.join_cache)."""
        return isinstance(other, FeatureCore) and self.fmap.join_cache((<FeatureCore>other).fmap)

    @property
    def weights(self):
        """True weights, (C, 2D)."""
        return self.w.values

    def get_state(self):
        st = LearnerCore.get_state(self)
        st.update({"n_components": self.fmap.D, "gamma": self.fmap.gamma, "seed": self.fmap.seed,
                   "w": self.w.get_state(), "precision": self.fmap.precision, "feature_rule": self.fmap.rule,
                   "row_cache_bytes": self.fmap.cache_bytes})
        st.update(self.fmap.keyed_state())
        if not self.fmap.keyed:             # the keyed rule's rows follow from the seed and the version
            st["E"] = self.fmap.E_
        return st

    def set_state(self, st):
        LearnerCore.set_state(self, st)
        rule = str(st.get("feature_rule", "features"))     # files before the keyed rule: "features"
        if rule not in ("features", "keyed"):
            raise ValueError(f"unknown feature_rule {rule!r}")
        self.fmap = RandomFourierMap(self.n_features, int(st["n_components"]), float(st["gamma"]), int(st["seed"]),
                                     st["E"] if rule == "features" else None, str(st.get("precision", "float64")),
                                     rule, st.get("row_cache_bytes"), keyed_version_of(st))
        self.F2 = 2 * self.fmap.D
        w = ScaledWeights.from_state(st["w"])
        if w.C != self.n_outputs or w.F != self.F2:
            raise ValueError("weights do not match the learner's outputs and features")
        self.w = w
