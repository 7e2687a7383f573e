"""Kernel-width helpers shared by every learner (ALGORITHMS.md §1.3–1.4).

``gamma="auto"`` (the product default) chooses among the kernels of :func:`width_candidates` --
multiples of the median-heuristic width, with and without each feature divided by its range
(:func:`feature_scale`, :func:`scale_features`) -- online on the first examples
(:mod:`onlinekern.selection`).  The papers' widths (1/d, or a number tuned on data min-max scaled
to [0, 1]) stay reachable through ``preset="paper"`` or an explicit ``gamma``.
"""
import hashlib
import numbers

import numpy as np
import scipy.sparse as sp

from onlinekern.seeding import MEDIAN, rng

N_MEDIAN = 4000


def _sample(X, seed):
    """The rows the median heuristic looks at: min(N, 4000) drawn without replacement (MEDIAN stream)."""
    n = X.shape[0]
    if n == 0:
        raise ValueError("the median heuristic needs at least one row")
    m = min(n, N_MEDIAN)
    rows = np.sort(rng(seed, MEDIAN).choice(n, size=m, replace=False))
    S = X[rows]
    if sp.issparse(S):
        S = S.toarray()
    return np.asarray(S, dtype=np.float64)


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
    ndarray (d,) of positive finite float64
    """
    return _scale_of_sample(_sample(X, seed))


def _scale_of_sample(S):
    """:func:`feature_scale` of the sample ``S`` (rows drawn by :func:`_sample`, never empty)."""
    span = S.max(axis=0) - S.min(axis=0)
    with np.errstate(divide="ignore", over="ignore"):
        s = 1.0 / span
    ok = np.isfinite(s) & (span > 0)
    return np.where(ok, s, 1.0)


#: Multiples of the median-heuristic width tried by ``gamma="auto"`` (the first is preferred on ties).
WIDTH_MULTIPLIERS = (4.0, 16.0, 1.0, 64.0)


def width_candidates(X, seed=0, scale=1.0):
    """The kernels ``gamma="auto"`` chooses among online: ``[(feature_scale or None, gamma), ...]``.

    On the median heuristic's sample of X: with every feature divided by its range
    (:func:`feature_scale`), the widths ``m * median_gamma`` for m in :data:`WIDTH_MULTIPLIERS`; and
    when the features' ranges differ by more than a factor 2 (so the rescaling changes the kernel),
    the same multiples of the median width of the unscaled features; from a single row (nothing to
    measure), LIBSVM's 1/d on the raw features alone.  The median heuristic
    (Schoelkopf & Smola 2002; Garreau, Jitkrittum & Kanagawa, "Large sample analysis of the median
    heuristic", 2017) gives the scale of the data, not of the classes: the right width was 2 to 60
    times it on the data sets measured (BENCHMARKS.md "Defaults"), hence a few multiples and an
    online choice (:mod:`onlinekern.selection`) rather than one formula.  The list of each sample
    is kept (the last 64 samples), so the learners of a sweep over one data set compute it once.

    Parameters
    ----------
    X : array or sparse matrix (n, d)
    seed : int
        MEDIAN stream seed (the sample's rows).
    scale : float
        c of the median heuristic (``median_scale``).

    Returns
    -------
    list of (ndarray (d,) or None, float)
    """
    S = _sample(X, seed)
    d = X.shape[1]
    key = (hashlib.blake2b(np.ascontiguousarray(S).view(np.uint8)).digest(), S.shape, d,
           float(scale))
    if key not in _CANDIDATES:
        if len(_CANDIDATES) >= 64:
            _CANDIDATES.pop(next(iter(_CANDIDATES)), None)
        _CANDIDATES[key] = _candidates_of_sample(S, d, scale)
    return [(None if s is None else s.copy(), g) for s, g in _CANDIDATES[key]]


# The candidates of the last 64 samples seen (a few floats per feature each): every learner of a
# sweep or benchmark over the same data gets the same (deterministic) list without recomputing the
# O(N^2) median heuristics.
_CANDIDATES = {}


def _candidates_of_sample(S, d, scale):
    """:func:`width_candidates` of the sample ``S`` (computed, not cached)."""
    if S.shape[0] < 2:       # one row (river's learn_one, a first partial_fit of one row): no
        return [(None, 1.0 / d)]        # distances, no ranges -- LIBSVM's 1/d on the raw features
    s = _scale_of_sample(S)
    g_scaled = _median_of_sample(S * s, d, scale)
    out = [(s, g_scaled * m) for m in WIDTH_MULTIPLIERS]
    span = 1.0 / s[s != 1.0] if np.any(s != 1.0) else np.ones(1)
    ranges = np.concatenate([span, np.ones(int(np.sum(s == 1.0) > 0))])
    if ranges.max() > 2.0 * ranges.min():
        g_raw = _median_of_sample(S, d, scale)
        out += [(None, g_raw * m) for m in WIDTH_MULTIPLIERS]
    return out


def median_gamma(X, seed=0, scale=1.0):
    """The median heuristic: g = 1 / (2 (c * med)^2).

    ``med`` is the median of ||x_i - x_j|| over all pairs i < j of min(N, 4000) rows drawn without
    replacement from the MEDIAN stream; ``c`` is ``scale`` (``--median-scale``).  Falls back to
    1/d when med = 0 (e.g. all sampled rows equal).
    """
    return _median_of_sample(_sample(X, seed), X.shape[1], scale)


def _median_of_sample(S, d, scale):
    """1 / (2 (scale * med)^2), med the median pairwise distance of the rows of S (1/d if 0)."""
    m = S.shape[0]
    # For features of extreme magnitude (1e300, 1e-300) work on S / max|S| so the squared
    # distances cannot overflow or underflow; the scale comes back in the median distance.
    # (Data of ordinary magnitude is left untouched, so its gamma is the same to the bit.)
    big = float(np.max(np.abs(S))) if S.size else 0.0
    if big > 0.0 and not 1e-100 < big < 1e100:
        S = S / big
    else:
        big = 1.0
    sq = np.einsum("ij,ij->i", S, S)
    iu = np.triu_indices(m, k=1)
    if iu[0].size == 0:
        return 1.0 / d
    d2 = sq[:, None] + sq[None, :] - 2.0 * (S @ S.T)
    med = big * float(np.sqrt(max(np.median(d2[iu]), 0.0)))
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
    s : ndarray (len(s),)

    Returns
    -------
    ndarray or CSR matrix
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.data *= s[X.indices]
        return X
    return np.asarray(X) * s[: X.shape[1]]


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
