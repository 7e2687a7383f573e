"""Kernel-width helpers shared by every learner (ALGORITHMS.md §1.3–1.4)."""
import numbers

import numpy as np
import scipy.sparse as sp

from onlinekern.seeding import MEDIAN, rng

N_MEDIAN = 4000


def median_gamma(X, seed=0, scale=1.0):
    """The median heuristic: g = 1 / (2 (c * med)^2).

    ``med`` is the median of ||x_i - x_j|| over all pairs i < j of min(N, 4000) rows drawn without
    replacement from the MEDIAN stream; ``c`` is ``scale`` (``--median-scale``).  Falls back to
    1/d when med = 0 (e.g. all sampled rows equal).
    """
    n, d = X.shape
    if n == 0:
        raise ValueError("the median heuristic needs at least one row")
    m = min(n, N_MEDIAN)
    rows = np.sort(rng(seed, MEDIAN).choice(n, size=m, replace=False))
    S = X[rows]
    if sp.issparse(S):
        S = S.toarray()
    S = np.asarray(S, dtype=np.float64)
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
