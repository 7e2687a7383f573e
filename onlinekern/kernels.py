"""Kernel-width helpers shared by every learner (ALGORITHMS.md §1.3–1.4).

``gamma="auto"`` (the product default) chooses among the kernels of :func:`width_candidates` --
multiples of the median-heuristic width, with each feature as given, divided by its range
(:func:`feature_scale`, :func:`scale_features`) or divided by its standard deviation -- online on
the first examples (:mod:`onlinekern.selection`).  The papers' widths (1/d, or a number tuned on
data min-max scaled to [0, 1]) stay reachable through ``preset="paper"`` or an explicit ``gamma``.

Wide sparse data (issue 26) cost their nonzeros here, never their largest column index: a sample
of sparse rows wider than :data:`DENSE_COLUMNS` (or whose dense form would exceed
:data:`DENSE_SAMPLE` entries) is kept in CSR, its
columns are renumbered to the columns it actually holds (the *compact* columns, in increasing
order), the pairwise distances come from row norms and sparse dot products, and the per-feature
factors are a :class:`ColumnScale` (the sample's columns and their factors, 1 elsewhere) instead
of an array of ``n_features`` values.  Narrow data (dense arrays, or sparse samples small enough
to densify) follow exactly the computation of before, so their numbers are unchanged to the bit;
a sparse wide copy of them (the same columns scattered among more) gives the same numbers up to
the order of the summations in the dot products (exactly the same numbers when those sums are
exact, as for 0/1 features).
"""
import hashlib
import numbers

import numpy as np
import scipy.sparse as sp

from onlinekern.preprocessing import lookup_sorted
from onlinekern.seeding import MEDIAN, rng

__all__ = ["BASES", "ColumnScale", "DENSE_COLUMNS", "DENSE_SAMPLE", "FeatureFactors", "N_MEDIAN", "WIDTH_MULTIPLIERS",
           "feature_scale", "median_gamma", "resolve_gamma", "scale_basis", "scale_features", "width_candidates"]

#: What per-feature factors divide by: each feature's range over the sample (max - min, the papers'
#: min-max scaling up to a shift), or its standard deviation there (scikit-learn's
#: ``StandardScaler(with_mean=False)``; the Gaussian kernel does not see the shift either way).
BASES = ("ranges", "deviations")

N_MEDIAN = 4000

#: Largest dense form (rows x columns) of a sparse sample that is densified (32 MB of float64):
#: above it the sample stays CSR and the heuristics work on its nonzeros.
DENSE_SAMPLE = 1 << 22

#: Widest sparse data whose sample is densified (with at most :data:`DENSE_SAMPLE` entries), as
#: before issue 26, so that narrow LIBSVM files keep their numbers to the bit; wider data never
#: allocate an array of their width here, not even for a one-row sample.
DENSE_COLUMNS = 4096

#: Rows of the pairwise-distance matrix computed at a time on a sparse sample.
_BLOCK_ROWS = 256


class ColumnScale:
    """Per-feature factors of wide data: the listed columns' factors, 1 for every other column.

    It plays the role of the ``(n_features,)`` array of :func:`feature_scale` on data too wide for
    one (a 2^24-column LIBSVM file): its size is the number of columns listed, and
    :func:`scale_features` applies it to the stored entries of a CSR matrix through their columns.

    Parameters
    ----------
    columns : array-like of int
        Strictly increasing column indices in [0, n_features).
    factors : array-like of float
        Positive finite factor of each listed column.
    n_features : int
        Width of the data the factors belong to.
    basis : str, optional
        What the factors divide by (one of :data:`BASES`; not part of the state).

    Attributes
    ----------
    columns : ndarray (k,) of int64
    factors : ndarray (k,) of float64
    n_features : int
    shape : tuple
        ``(n_features,)``, the shape of the array it stands for.
    """

    def __init__(self, columns, factors, n_features, basis="ranges"):
        self.basis = basis
        cols = np.asarray(columns, dtype=np.int64).ravel()
        fac = np.asarray(factors, dtype=np.float64).ravel()
        n = _as_int(n_features, "n_features")
        if n < 1:
            raise ValueError(f"n_features must be >= 1, got {n}")
        if cols.shape != fac.shape:
            raise ValueError(f"columns and factors differ in length ({cols.size} and {fac.size})")
        if cols.size and (cols[0] < 0 or cols[-1] >= n or np.any(np.diff(cols) <= 0)):
            raise ValueError(f"columns must be strictly increasing in [0, {n})")
        if not np.all(np.isfinite(fac) & (fac > 0)):
            raise ValueError("factors must be positive finite numbers")
        self.columns, self.factors, self.n_features = cols, fac, n

    @property
    def shape(self):
        """``(n_features,)``."""
        return (self.n_features,)

    def factors_of(self, columns):
        """The factor of each column of ``columns`` (1 for a column not listed).

        Parameters
        ----------
        columns : ndarray of int

        Returns
        -------
        ndarray of float64, shaped like ``columns``
        """
        return lookup_sorted(self.columns, self.factors, columns)

    def toarray(self):
        """The ``(n_features,)`` array of factors (O(n_features) memory: for narrow data only)."""
        out = np.ones(self.n_features, dtype=np.float64)
        out[self.columns] = self.factors
        return out

    def copy(self):
        """An independent copy."""
        return ColumnScale(self.columns.copy(), self.factors.copy(), self.n_features, self.basis)

    def get_state(self):
        """Plain dict (two arrays and a number) for model files; :meth:`from_state` inverts it."""
        return {"kind": "ColumnScale", "columns": self.columns.copy(), "factors": self.factors.copy(),
                "n_features": int(self.n_features)}

    @classmethod
    def from_state(cls, state):
        """Rebuild from :meth:`get_state` (ValueError on inconsistent state)."""
        if not isinstance(state, dict) or state.get("kind") != "ColumnScale":
            raise ValueError("not a ColumnScale state")
        return cls(state["columns"], state["factors"], state["n_features"])

    def __eq__(self, other):
        return (isinstance(other, ColumnScale) and self.n_features == other.n_features
                and np.array_equal(self.columns, other.columns) and np.array_equal(self.factors, other.factors))

    __hash__ = None

    def __repr__(self):
        return f"ColumnScale({self.columns.size} columns of {self.n_features})"


def _as_int(value, name):
    """``value`` as a Python int (ValueError naming ``name`` for a bool or a non-integer)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _sample(X, seed):
    """The rows the median heuristic looks at: min(N, 4000) drawn without replacement (MEDIAN stream).

    A dense array, or -- for sparse X wider than :data:`DENSE_COLUMNS` or whose sample would have
    more than :data:`DENSE_SAMPLE` entries densified -- a canonical float64 CSR matrix (sorted
    columns, duplicates summed).
    """
    n = X.shape[0]
    if n == 0:
        raise ValueError("the median heuristic needs at least one row")
    m = min(n, N_MEDIAN)
    rows = np.sort(rng(seed, MEDIAN).choice(n, size=m, replace=False))
    if sp.issparse(X):
        S = sp.csr_matrix(sp.csr_matrix(X)[rows], dtype=np.float64, copy=True)
        if S.shape[1] <= DENSE_COLUMNS and m * S.shape[1] <= DENSE_SAMPLE:
            return np.asarray(S.toarray(), dtype=np.float64)
        S.sum_duplicates()           # canonical: sorted columns, each at most once per row
        return S
    return np.asarray(X[rows], dtype=np.float64)


def _compact(S):
    """(CSR over the compact columns, sorted original columns) of a canonical CSR sample."""
    cols, inv = np.unique(S.indices, return_inverse=True)
    Sc = sp.csr_matrix((S.data, inv.astype(np.int32).ravel(), S.indptr), shape=(S.shape[0], max(cols.size, 1)))
    return Sc, cols


class FeatureFactors(np.ndarray):
    """A ``(n_features,)`` array of per-feature factors that knows what they divide by (``basis``,
    one of :data:`BASES`): the dense counterpart of :class:`ColumnScale`'s ``basis``.

    Parameters
    ----------
    factors : array-like of float
    basis : str
    """

    def __new__(cls, factors, basis):
        obj = np.asarray(factors, dtype=np.float64).view(cls)
        obj.basis = basis
        return obj

    def __array_finalize__(self, obj):
        self.basis = getattr(obj, "basis", "ranges")


def scale_basis(s):
    """What the per-feature factors ``s`` divide by: ``"ranges"`` or ``"deviations"``
    (:data:`BASES`); ``"ranges"`` for factors that do not say (a plain array).

    Parameters
    ----------
    s : ndarray, FeatureFactors or ColumnScale

    Returns
    -------
    str
    """
    return getattr(s, "basis", "ranges")


def feature_scale(X, seed=0):
    """Per-feature factors 1 / (max - min) over the median heuristic's sample of X.

    Multiplying feature j by ``s[j]`` maps its sampled range onto an interval of length 1 -- the
    papers' min-max scaling to [0, 1] up to a shift, which the Gaussian kernel does not see
    (k depends on x - x' only), so sparse rows stay sparse.  A feature constant on the sample
    (range 0, or never present) keeps the factor 1.

    Parameters
    ----------
    X : array or sparse matrix (n, d)
    seed : int
        Seed of the MEDIAN stream that draws the sample (the same rows as :func:`median_gamma`).

    Returns
    -------
    ndarray (d,) of positive finite float64, or, for sparse X too wide to densify its sample, a
    :class:`ColumnScale` (the factors of the sample's columns whose factor is not 1).
    """
    return _scale_of_sample(_sample(X, seed), X.shape[1])


def _scale_of_sample(S, d):
    """:func:`feature_scale` of the sample ``S`` (rows drawn by :func:`_sample`, never empty)."""
    if not sp.issparse(S):
        span = S.max(axis=0) - S.min(axis=0)
        with np.errstate(divide="ignore", over="ignore"):
            s = 1.0 / span
        ok = np.isfinite(s) & (span > 0)
        return np.where(ok, s, 1.0)
    Sc, cols = _compact(S)
    m, k = S.shape[0], cols.size
    if k == 0:
        return ColumnScale([], [], d)
    counts = np.bincount(Sc.indices, minlength=k)
    order = np.argsort(Sc.indices, kind="stable")
    vals = Sc.data[order]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    hi = np.maximum.reduceat(vals, starts)
    lo = np.minimum.reduceat(vals, starts)
    gap = counts < m                      # a row without the column: an implicit zero
    hi = np.where(gap, np.maximum(hi, 0.0), hi)
    lo = np.where(gap, np.minimum(lo, 0.0), lo)
    span = hi - lo
    with np.errstate(divide="ignore", over="ignore"):
        s = 1.0 / span
    s = np.where(np.isfinite(s) & (span > 0), s, 1.0)
    keep = s != 1.0
    return ColumnScale(cols[keep], s[keep], d)


def _deviation_scale_of_sample(S, d):
    """Per-feature factors 1 / (standard deviation over the sample ``S``, implicit zeros counted),
    rounded to the nearest power of two; 1 for a feature constant on the sample.  A power of two
    scales a value exactly, so data of few bits (binary, counts) keep exact sums of squares and dot
    products in any order: a data set and its columns scattered into a wider space, summed in
    another column order, give the same kernel values and the same width, as with the ranges of
    binary data (a factor 1).  The weighting is kept within a factor sqrt(2).  A
    :class:`FeatureFactors` for dense ``S``, a :class:`ColumnScale` (over the sample's columns) for
    sparse ``S``; basis "deviations".  Both sum each column's entries in row order, so a dense
    sample and its sparse copy, or its columns scattered into a wider space, give the same bits."""
    if not sp.issparse(S):
        return FeatureFactors(_deviation_scale_of_sample(sp.csr_matrix(S), d).toarray(), "deviations")
    Sc, cols = _compact(S)
    m, k = S.shape[0], cols.size
    if k == 0:
        return ColumnScale([], [], d, "deviations")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):   # |x| ~ 1e160+: sd inf or nan
        mean = np.bincount(Sc.indices, weights=Sc.data, minlength=k) / m
        sd = np.sqrt(np.maximum(np.bincount(Sc.indices, weights=Sc.data ** 2, minlength=k) / m - mean ** 2, 0.0))
        z = 1.0 / sd
    z = np.where(np.isfinite(z) & (sd > 0), z, 1.0)
    z = np.exp2(np.round(np.log2(z)))     # a power of two: scaling keeps every bit of a value
    keep = z != 1.0
    return ColumnScale(cols[keep], z[keep], d, "deviations")


def _relative_factors(z, s, S):
    """z / s over the features not constant on the sample ``S``: how differently the two scalings
    weigh them (a constant ratio is one global factor, which the widths absorb).  For ColumnScales
    these are the columns either lists (a varying column's range and deviation are never both 1)."""
    if isinstance(z, ColumnScale):
        cols = np.union1d(z.columns, s.columns)
        return z.factors_of(cols) / s.factors_of(cols)
    varies = S.max(axis=0) > S.min(axis=0)
    return np.asarray(z, dtype=np.float64)[varies] / np.asarray(s, dtype=np.float64)[varies]


#: Multiples of the median-heuristic width tried by ``gamma="auto"`` (the first is preferred on ties).
WIDTH_MULTIPLIERS = (4.0, 16.0, 1.0, 64.0)


def width_candidates(X, seed=0, scale=1.0):
    """The kernels ``gamma="auto"`` chooses among online: ``[(feature_scale or None, gamma), ...]``.

    On the median heuristic's sample of X: with every feature divided by its range
    (:func:`feature_scale`), the widths ``m * median_gamma`` for m in :data:`WIDTH_MULTIPLIERS`;
    when the features' ranges differ by more than a factor 2 (so the rescaling changes the kernel),
    the same multiples of the median width of the unscaled features; and when dividing by the
    standard deviation instead of the range weighs the features differently (their ratios differ by
    more than a factor 2), the same multiples with every feature divided by its standard deviation
    on the sample, rounded to a power of two (a :class:`FeatureFactors` or :class:`ColumnScale` of
    basis "deviations"; zeros stay zeros, values keep every bit). Ranges follow the extremes,
    deviations the bulk: on ijcnn1, whose ten binary features span [0, 1] and whose ten continuous
    ones span [-1.3, 1.3] with a standard deviation of 0.17, min-max scaling shrinks the continuous
    features 2.6 times against the binary ones and standardising enlarges them; over the whole
    min-max scaled stream NOGD-hinge's default made 7.86 % mistakes with the ranges' kernels alone,
    4.26 % with the deviations' (BENCHMARKS.md "Standard deviations in the width race").  From a
    single row (nothing to measure), LIBSVM's 1/d on the raw features alone.  The median heuristic
    (Schoelkopf & Smola 2002; Garreau, Jitkrittum & Kanagawa, "Large sample analysis of the median
    heuristic", 2017) gives the scale of the data, not of the classes: the right width was 2 to 60
    times it on the data sets measured (BENCHMARKS.md "Defaults"), hence a few multiples and an
    online choice (:mod:`onlinekern.selection`) rather than one formula.  The list of each sample
    is kept (the last 64 samples), so the learners of a sweep over one data set compute it once.
    The candidates of one call share one copy of each scaling's factors (the race scales its rows
    once per scaling).

    Parameters
    ----------
    X : array or sparse matrix (n, d)
    seed : int
        MEDIAN stream seed (the sample's rows).
    scale : float
        c of the median heuristic (``median_scale``).

    Returns
    -------
    list of (ndarray (d,) or ColumnScale or None, float)
    """
    S = _sample(X, seed)
    d = X.shape[1]
    h = hashlib.blake2b()
    if sp.issparse(S):
        for part in (S.data, S.indices, S.indptr):
            h.update(np.ascontiguousarray(part).view(np.uint8))
        key = ("csr", h.digest(), S.shape, d, float(scale))
    else:
        h.update(np.ascontiguousarray(S).view(np.uint8))
        key = (h.digest(), S.shape, d, float(scale))
    if key not in _CANDIDATES:
        if len(_CANDIDATES) >= 64:
            _CANDIDATES.pop(next(iter(_CANDIDATES)), None)
        _CANDIDATES[key] = _candidates_of_sample(S, d, scale)
    copies = {}
    out = []
    for s, g in _CANDIDATES[key]:
        if s is not None and id(s) not in copies:
            copies[id(s)] = s.copy()
        out.append((None if s is None else copies[id(s)], g))
    return out


# The candidates of the last 64 samples seen (a few floats per feature each): every learner of a
# sweep or benchmark over the same data gets the same (deterministic) list without recomputing the
# O(N^2) median heuristics.
_CANDIDATES = {}


def _candidates_of_sample(S, d, scale):
    """:func:`width_candidates` of the sample ``S`` (computed, not cached)."""
    if S.shape[0] < 2:       # one row (river's learn_one, a first partial_fit of one row): no
        return [(None, 1.0 / d)]        # distances, no ranges -- LIBSVM's 1/d on the raw features
    s = _scale_of_sample(S, d)
    g_scaled = _median_of_sample(scale_features(S, s), d, scale)
    out = [(s, g_scaled * m) for m in WIDTH_MULTIPLIERS]
    f = s.factors if isinstance(s, ColumnScale) else s
    other = f[f != 1.0]                           # the ranges of the features whose factor is not 1
    n_unit = d - other.size                       # features of range 1, constant or never present
    span = 1.0 / other if other.size else np.ones(1)
    ranges = np.concatenate([span, np.ones(int(n_unit > 0))])
    if ranges.max() > 2.0 * ranges.min():
        g_raw = _median_of_sample(S, d, scale)
        out += [(None, g_raw * m) for m in WIDTH_MULTIPLIERS]
    z = _deviation_scale_of_sample(S, d)
    q = _relative_factors(z, s, S)
    if q.size and q.max() > 2.0 * q.min():
        g_dev = _median_of_sample(scale_features(S, z), d, scale)
        out += [(z, g_dev * m) for m in WIDTH_MULTIPLIERS]
    return out


def median_gamma(X, seed=0, scale=1.0):
    """The median heuristic: g = 1 / (2 (c * med)^2).

    ``med`` is the median of ||x_i - x_j|| over all pairs i < j of min(N, 4000) rows drawn without
    replacement from the MEDIAN stream; ``c`` is ``scale`` (``--median-scale``).  Falls back to
    1/d when med = 0 (e.g. all sampled rows equal).  Sparse X costs the sample's nonzeros and the
    N (N - 1) / 2 distances, whatever its width.
    """
    return _median_of_sample(_sample(X, seed), X.shape[1], scale)


def _upper_distances(sq, gram_rows, m):
    """The squared distances sq_i + sq_j - 2 G_ij of every pair i < j, in row-major order.

    ``gram_rows(i0, i1)`` gives rows i0..i1-1 of the Gram matrix G (dense).  Works block by block,
    so memory is the m (m - 1) / 2 results plus one block.
    """
    out = np.empty(m * (m - 1) // 2, dtype=np.float64)
    pos = 0
    for i0 in range(0, m, _BLOCK_ROWS):
        i1 = min(m, i0 + _BLOCK_ROWS)
        block = sq[i0:i1, None] + sq[None, :] - 2.0 * gram_rows(i0, i1)
        upper = np.arange(m)[None, :] > np.arange(i0, i1)[:, None]
        vals = block[upper]
        out[pos:pos + vals.size] = vals
        pos += vals.size
    return out


def _upper_distances_over_gram(sq, G):
    """:func:`_upper_distances` of a dense Gram matrix ``G``, the same numbers written over G's own
    buffer row by row: row i's pairs land before row i + 1 is read (the output never passes the
    input), so the m^2 Gram matrix is the whole memory, not it plus the m (m - 1) / 2 results
    (4,000 rows: 128 + 64 MB before).  Returns a view of G."""
    m = G.shape[0]
    flat = G.reshape(-1)
    pos = 0
    for i in range(m - 1):
        vals = sq[i] + sq[i + 1:] - 2.0 * G[i, i + 1:]
        flat[pos:pos + vals.size] = vals
        pos += vals.size
    return flat[:pos]


def _sparse_gram(Sc):
    """``gram_rows(i0, i1)``: rows i0..i1-1 of Sc Sc^T for a CSR sample over its compact columns.

    A sparse product costs the sum over columns of (rows holding the column)^2, so the columns
    held by more than 1/8 of the rows (text's frequent words) go through a dense block and BLAS
    instead: at most 8 nnz / m such columns, so the block is at most 8 doubles per nonzero.
    """
    m = Sc.shape[0]
    held = np.bincount(Sc.indices, minlength=Sc.shape[1])
    hot = held > m // 8
    if not hot.any():
        ScT = Sc.T.tocsr()
        return lambda i0, i1: (Sc[i0:i1] @ ScT).toarray()
    D = Sc[:, np.flatnonzero(hot)].toarray()
    R = Sc[:, np.flatnonzero(~hot)].tocsr()
    RT = R.T.tocsr()
    return lambda i0, i1: (R[i0:i1] @ RT).toarray() + D[i0:i1] @ D.T


def _median_of_sample(S, d, scale):
    """1 / (2 (scale * med)^2), med the median pairwise distance of the rows of S (1/d if 0)."""
    m = S.shape[0]
    if m < 2:
        return 1.0 / d
    # For features of extreme magnitude (1e300, 1e-300) work on S / max|S| so the squared
    # distances cannot overflow or underflow; the scale comes back in the median distance.
    # (Data of ordinary magnitude is left untouched, so its gamma is the same to the bit.)
    values = S.data if sp.issparse(S) else S
    big = float(np.max(np.abs(values))) if values.size else 0.0
    if big > 0.0 and not 1e-100 < big < 1e100:
        S = S / big
    else:
        big = 1.0
    if sp.issparse(S):
        Sc, cols = _compact(S)
        if m * cols.size <= DENSE_SAMPLE:
            S = Sc.toarray()                # few columns in the sample: the dense computation
    if sp.issparse(S):
        sq = np.asarray(Sc.multiply(Sc).sum(axis=1), dtype=np.float64).ravel()
        d2 = _upper_distances(sq, _sparse_gram(Sc), m)
    else:
        sq = np.einsum("ij,ij->i", S, S)
        d2 = _upper_distances_over_gram(sq, np.ascontiguousarray(S @ S.T))
    med = big * float(np.sqrt(max(np.median(d2, overwrite_input=True), 0.0)))
    if med == 0.0:
        return 1.0 / d
    sigma = np.float64(scale) * med
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        gamma = float(1.0 / (2.0 * sigma * sigma))
    if not (np.isfinite(gamma) and gamma > 0.0):
        raise ValueError(f"the median heuristic gives gamma = 1/(2 * {sigma:.3g}^2), which is not a "
                         f"representable positive number: the features are of extreme magnitude; "
                         f"scale them (FeatureScaler, --scale) or pass gamma explicitly")
    return gamma


def scale_features(X, s):
    """X with column j multiplied by ``s[j]`` (a new array or CSR matrix; X is not modified).

    Parameters
    ----------
    X : ndarray (n, d) or CSR matrix (n, d'), d' <= len(s)
    s : ndarray (len(s),) or ColumnScale
        A :class:`ColumnScale` is applied through the columns of X's stored entries (cost: the
        nonzeros, whatever the width).

    Returns
    -------
    ndarray or CSR matrix
    """
    if isinstance(s, ColumnScale):
        if sp.issparse(X):
            X = sp.csr_matrix(X, copy=True)
            X.data *= s.factors_of(X.indices)
            return X
        A = np.array(X, dtype=np.float64)
        inside = s.columns < A.shape[1]
        A[:, s.columns[inside]] *= s.factors[inside]
        return A
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.data *= s[X.indices]
        return X
    return np.asarray(X) * np.asarray(s)[: X.shape[1]]      # a plain array: the data carry no basis


def resolve_gamma(gamma, X, seed=0, scale=1.0):
    """Turn a ``gamma`` hyper-parameter (None, 'median' or a number) into a positive float."""
    if gamma is None:
        return 1.0 / X.shape[1]
    if isinstance(gamma, str):
        if gamma.strip().lower() == "median":
            return median_gamma(X, seed, scale)
        try:
            gamma = float(gamma)
        except ValueError:
            raise ValueError(f"gamma must be a positive number or 'median', got {gamma!r}") from None
    if isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, numbers.Real) or not np.isfinite(gamma) or gamma <= 0:
        raise ValueError(f"gamma must be a positive number or 'median', got {gamma!r}")
    return float(gamma)
