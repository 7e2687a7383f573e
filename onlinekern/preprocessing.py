"""Scaling of features (min-max, LIBSVM ``svm-scale`` style, or max-abs) and of regression targets.

``FeatureScaler`` learns, per feature, the minimum and maximum over **all** rows of the training
data, implicit zeros of a sparse matrix included (as ``svm-scale`` and scikit-learn's
``MinMaxScaler`` on the dense equivalent do), and maps [min, max] linearly onto
[lower, upper].  ``TargetScaler`` does the same for regression targets, onto [0, 1] by default
(the papers report RMSE on targets scaled this way).

Both keep their learned state as plain lists and numbers (``get_state()`` / ``from_state()``), so
model files can store them as JSON-ready dicts and ``predict`` can apply the training scaling.

Conventions
-----------
* Constant features (max == min, including features never seen in the training data) map to
  ``lower``, as scikit-learn's ``MinMaxScaler`` does.  ``svm-scale`` drops them instead (value 0);
  the two agree for the default ``lower = 0``.  A constant feature carries no information for
  the Gaussian kernel either way.
* Values outside the training range (test data) are not clipped, as in ``svm-scale`` and
  ``MinMaxScaler``: they map outside [lower, upper].
* Sparse input gives CSR output.  Where a feature's zero maps to zero (min = 0 and lower = 0, or a
  constant feature with lower = 0) its stored entries are rescaled in place and the sparsity
  pattern is kept (explicit zeros stay explicit).  Where zero maps to a non-zero value, every row
  of that feature becomes a stored entry (a "dense-valued" column in the CSR result); only those
  columns are densified, so e.g. two centred coordinates among thousands of non-negative sparse
  features cost two dense columns, not a dense matrix.
* Dense input gives a dense float64 array.

``MaxAbsScaler`` is the scaling for wide sparse data (scikit-learn's ``MaxAbsScaler``): every
feature is divided by its largest absolute training value, so zeros stay zeros (a sparse row keeps
its pattern, whatever the signs), values land in [-1, 1], and the state is the columns seen with a
non-zero value and their maxima -- never an array of the data's width.  On a feature whose values
are >= 0 with at least one (implicit) zero it is exactly FeatureScaler's [0, 1] scaling.
"""
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = ["FeatureScaler", "MaxAbsScaler", "SCALE_RULES", "TargetScaler", "WIDE_COLUMNS", "feature_scaler",
           "lookup_sorted", "scaler_from_state"]

#: Widths above which ``feature_scaler("auto", d)`` scales by max-abs rather than min-max: min-max
#: keeps 2 numbers per column of the width (and moves the zeros of columns with negative values).
WIDE_COLUMNS = 65536


def lookup_sorted(keys, values, query, default=1.0):
    """``values`` at the positions of ``query`` in the sorted ``keys``, ``default`` where absent.

    The per-column state of wide data (factors of the columns seen) is a pair of arrays, sorted
    columns and their values: this reads it for any columns in O(len(query) log len(keys)).

    Parameters
    ----------
    keys : ndarray (k,), strictly increasing
    values : ndarray (k,)
    query : array-like of the keys' type
    default : float

    Returns
    -------
    ndarray of float64, shaped like ``query``
    """
    query = np.asarray(query)
    out = np.full(query.shape, default, dtype=np.float64)
    if keys.size and query.size:
        pos = np.minimum(np.searchsorted(keys, query), keys.size - 1)
        hit = keys[pos] == query
        out[hit] = values[pos[hit]]
    return out

#: The rules of :func:`feature_scaler` (the CLI's ``--scale-rule``).
SCALE_RULES = ("auto", "minmax", "maxabs")


def _check_range(lower, upper):
    for name, v in (("lower", lower), ("upper", upper)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if not lower < upper:
        raise ValueError(f"lower must be smaller than upper, got lower={lower!r}, upper={upper!r}")
    return float(lower), float(upper)


def _as_2d(X):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return X
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"X must be a 2-D array or sparse matrix, got shape {A.shape}")
    return A


class FeatureScaler:
    """Scale every feature linearly from its training [min, max] to [lower, upper].

    Parameters
    ----------
    lower, upper : float
        Target range (default [0, 1], ``svm-scale -l 0 -u 1``).

    Attributes
    ----------
    data_min_, data_max_ : ndarray (n_features,)
        Per-feature minimum and maximum over all training rows, implicit zeros included.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> s = FeatureScaler().fit(np.array([[0.0, -1.0], [2.0, 1.0]]))
    >>> s.transform(np.array([[1.0, 0.0]])).tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, lower=0.0, upper=1.0):
        self.lower = lower
        self.upper = upper

    def fit(self, X):
        """Learn the per-feature minimum and maximum of ``X`` (dense or sparse)."""
        self.lower, self.upper = _check_range(self.lower, self.upper)
        X = _as_2d(X)
        n, d = X.shape
        if n == 0:
            raise ValueError("cannot fit a scaler on 0 rows")
        if sp.issparse(X):
            if X.nnz and not np.all(np.isfinite(X.data)):
                raise ValueError("X contains NaN or infinite values")
            # scipy's min/max of a sparse matrix include the implicit zeros.
            lo = np.asarray(X.min(axis=0).todense()).ravel()
            hi = np.asarray(X.max(axis=0).todense()).ravel()
        else:
            if not np.all(np.isfinite(X)):
                raise ValueError("X contains NaN or infinite values")
            lo, hi = X.min(axis=0), X.max(axis=0)
        self.data_min_ = np.asarray(lo, dtype=np.float64)
        self.data_max_ = np.asarray(hi, dtype=np.float64)
        self.n_features_in_ = d
        return self

    def _coefficients(self):
        """(a, b) with x' = a x + b per feature; constant features get a = 0, b = lower."""
        rng = self.data_max_ - self.data_min_
        const = rng <= 0
        a = np.where(const, 0.0, (self.upper - self.lower) / np.where(const, 1.0, rng))
        b = np.where(const, self.lower, self.lower - a * self.data_min_)
        return a, b

    def transform(self, X):
        """Scale ``X``; CSR in, CSR out (sparse where zero maps to zero); dense in, dense out."""
        if "data_min_" not in self.__dict__:
            raise ValueError("this FeatureScaler is not fitted yet; call fit first")
        X = _as_2d(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the scaler was fitted on {self.n_features_in_}")
        a, b = self._coefficients()
        if not sp.issparse(X):
            return X * a + b
        n, d = X.shape
        moved = np.flatnonzero(b != 0.0)          # features whose zero maps to a non-zero value
        if moved.size == 0:
            out = X.copy()
            out.data = out.data * a[out.indices] + b[out.indices]
            return out
        keep = np.ones(d, dtype=bool)
        keep[moved] = False
        coo = X.tocoo()
        sel = keep[coo.col]
        rows = [coo.row[sel].astype(np.int64)]
        cols = [coo.col[sel].astype(np.int64)]
        vals = [coo.data[sel] * a[coo.col[sel]] + b[coo.col[sel]]]
        # The moved features as a dense block (n x k), every value stored.
        block = np.asarray(X[:, moved].todense()) * a[moved] + b[moved]
        rows.append(np.repeat(np.arange(n, dtype=np.int64), moved.size))
        cols.append(np.tile(moved.astype(np.int64), n))
        vals.append(block.ravel())
        out = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                            shape=(n, d))
        out.sort_indices()
        return out

    def fit_transform(self, X):
        return self.fit(X).transform(X)

    def zero_preserving(self):
        """True if every feature maps 0 to 0 (sparse input then keeps its sparsity pattern)."""
        return not np.any(self._coefficients()[1] != 0.0)

    def get_state(self):
        """Plain dict (lists and numbers) for model files."""
        return {"kind": "FeatureScaler", "lower": self.lower, "upper": self.upper,
                "n_features": int(self.n_features_in_),
                "min": self.data_min_.tolist(), "max": self.data_max_.tolist()}

    @classmethod
    def from_state(cls, state):
        """Rebuild a fitted scaler from ``get_state()``."""
        s = cls(float(state["lower"]), float(state["upper"]))
        s.lower, s.upper = _check_range(s.lower, s.upper)
        s.data_min_ = np.asarray(state["min"], dtype=np.float64)
        s.data_max_ = np.asarray(state["max"], dtype=np.float64)
        s.n_features_in_ = int(state.get("n_features", len(s.data_min_)))
        if s.data_min_.shape != (s.n_features_in_,) or s.data_max_.shape != (s.n_features_in_,):
            raise ValueError("scaler state: min and max must both have n_features values")
        return s

    def __repr__(self):
        return f"FeatureScaler(lower={self.lower!r}, upper={self.upper!r})"


class MaxAbsScaler:
    """Divide every feature by its largest absolute training value (zeros stay zeros).

    The same numbers as ``sklearn.preprocessing.MaxAbsScaler`` (sparse input: multiplied by the
    reciprocal, dense input: divided, as there); a feature whose training values are all zero, or
    that never occurs, keeps the factor 1.  Its memory is the columns seen, so it suits data of any
    width: a 2^24-column LIBSVM file of text costs its vocabulary, not 2^24 numbers.

    Attributes
    ----------
    columns_ : ndarray (k,) of int64
        The (0-based, increasing) columns with a non-zero training value.
    max_abs_ : ndarray (k,) of float64
        Their largest absolute values.
    n_features_in_ : int
    n_samples_seen_ : int

    Examples
    --------
    >>> import numpy as np
    >>> s = MaxAbsScaler().fit(np.array([[0.0, -4.0], [2.0, 1.0]]))
    >>> s.transform(np.array([[1.0, 2.0]])).tolist()
    [[0.5, 0.5]]
    """

    def fit(self, X):
        """Learn the largest absolute value of every column of ``X`` (dense or sparse)."""
        for attr in ("columns_", "max_abs_", "n_features_in_", "n_samples_seen_"):
            self.__dict__.pop(attr, None)
        return self.partial_fit(X)

    def partial_fit(self, X):
        """Merge the largest absolute values of the rows of ``X`` into the state (online)."""
        X = _as_2d(X)
        n, d = X.shape
        if sp.issparse(X):
            if X.nnz and not np.all(np.isfinite(X.data)):
                raise ValueError("X contains NaN or infinite values")
            keep = X.data != 0.0
            cols = X.indices[keep].astype(np.int64)
            vals = np.abs(X.data[keep])
            order = np.argsort(cols, kind="stable")
            cols, vals = cols[order], vals[order]
            starts = np.flatnonzero(np.concatenate([[True], cols[1:] != cols[:-1]])) if cols.size else cols
            cols = cols[starts] if cols.size else cols
            vals = np.maximum.reduceat(vals, starts) if vals.size else vals
        else:
            if not np.all(np.isfinite(X)):
                raise ValueError("X contains NaN or infinite values")
            m = np.abs(X).max(axis=0) if n else np.zeros(d)
            cols = np.flatnonzero(m > 0).astype(np.int64)
            vals = m[cols]
        if "columns_" in self.__dict__:
            if not sp.issparse(X) and d != self.n_features_in_:
                raise ValueError(f"X has {d} features, the scaler was fitted on {self.n_features_in_}")
            allc = np.concatenate([self.columns_, cols])
            allv = np.concatenate([self.max_abs_, vals])
            order = np.lexsort((-allv, allc))          # by column, the largest value first
            allc, allv = allc[order], allv[order]
            first = np.concatenate([[True], allc[1:] != allc[:-1]]) if allc.size else allc.astype(bool)
            cols, vals = allc[first], allv[first]
            d = max(d, self.n_features_in_)
            n += self.n_samples_seen_
        self.columns_ = np.asarray(cols, dtype=np.int64)
        self.max_abs_ = np.asarray(vals, dtype=np.float64)
        self.n_features_in_ = int(d)
        self.n_samples_seen_ = int(n)
        return self

    def scale_of(self, columns):
        """The divisor of each of ``columns`` (its max-abs value; 1 for a column never seen non-zero)."""
        self._check_fitted()
        return lookup_sorted(self.columns_, self.max_abs_, columns)

    def _check_fitted(self):
        if "columns_" not in self.__dict__:
            raise ValueError("this MaxAbsScaler is not fitted yet; call fit first")

    def transform(self, X):
        """Scale ``X``: CSR in, CSR out with the same pattern; dense in, dense out."""
        self._check_fitted()
        X = _as_2d(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the scaler was fitted on {self.n_features_in_}")
        if sp.issparse(X):
            out = X.copy()
            out.data *= 1.0 / self.scale_of(out.indices)
            return out
        return X / self.scale_of(np.arange(X.shape[1]))

    def fit_transform(self, X):
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)

    def zero_preserving(self):
        """Always True: zeros map to zeros."""
        return True

    def get_state(self):
        """Plain dict (two arrays and numbers) for model files; :meth:`from_state` inverts it."""
        self._check_fitted()
        return {"kind": "MaxAbsScaler", "n_features": int(self.n_features_in_),
                "n_samples": int(self.n_samples_seen_),
                "columns": self.columns_.copy(), "max_abs": self.max_abs_.copy()}

    @classmethod
    def from_state(cls, state):
        """Rebuild a fitted scaler from ``get_state()`` (ValueError on inconsistent state)."""
        s = cls()
        cols = np.asarray(state["columns"], dtype=np.int64).ravel()
        vals = np.asarray(state["max_abs"], dtype=np.float64).ravel()
        d = int(state["n_features"])
        if cols.shape != vals.shape or (cols.size and (cols[0] < 0 or cols[-1] >= d or np.any(np.diff(cols) <= 0))):
            raise ValueError("scaler state: columns must be increasing in [0, n_features), one max_abs each")
        if not np.all(np.isfinite(vals) & (vals > 0)):
            raise ValueError("scaler state: max_abs must be positive finite numbers")
        s.columns_, s.max_abs_, s.n_features_in_ = cols, vals, d
        s.n_samples_seen_ = int(state.get("n_samples", 0))
        return s

    def __repr__(self):
        return "MaxAbsScaler()"


def feature_scaler(rule, n_features):
    """The unfitted feature scaler of ``rule`` for data of ``n_features`` columns.

    ``"minmax"``: :class:`FeatureScaler` to [0, 1] (``svm-scale``, the papers' preprocessing);
    ``"maxabs"``: :class:`MaxAbsScaler` (zeros stay zeros, state of the columns seen);
    ``"auto"``: min-max up to :data:`WIDE_COLUMNS` columns, max-abs above (the two agree on
    features >= 0 with an implicit zero, i.e. on most sparse data).
    """
    if rule not in SCALE_RULES:
        raise ValueError(f"scale rule must be one of {', '.join(SCALE_RULES)}, got {rule!r}")
    if rule == "maxabs" or (rule == "auto" and n_features > WIDE_COLUMNS):
        return MaxAbsScaler()
    return FeatureScaler(0.0, 1.0)


def scaler_from_state(state):
    """The fitted FeatureScaler or MaxAbsScaler of a ``get_state()`` dict (by its ``kind``)."""
    kind = state.get("kind", "FeatureScaler") if isinstance(state, dict) else None
    if kind == "FeatureScaler":
        return FeatureScaler.from_state(state)
    if kind == "MaxAbsScaler":
        return MaxAbsScaler.from_state(state)
    raise ValueError(f"unknown feature scaler kind {kind!r}")


class TargetScaler:
    """Scale regression targets linearly from their training [min, max] to [lower, upper].

    Parameters
    ----------
    lower, upper : float
        Target range (default [0, 1]).  Constant targets map to ``lower``; ``inverse_transform``
        then returns the constant.
    """

    def __init__(self, lower=0.0, upper=1.0):
        self.lower = lower
        self.upper = upper

    def fit(self, y):
        self.lower, self.upper = _check_range(self.lower, self.upper)
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.size == 0:
            raise ValueError("cannot fit a scaler on 0 targets")
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite values")
        self.min_, self.max_ = float(y.min()), float(y.max())
        return self

    def _coefficients(self):
        if "min_" not in self.__dict__:
            raise ValueError("this TargetScaler is not fitted yet; call fit first")
        rng = self.max_ - self.min_
        if rng <= 0:
            return 0.0, self.lower
        a = (self.upper - self.lower) / rng
        return a, self.lower - a * self.min_

    def transform(self, y):
        a, b = self._coefficients()
        return np.asarray(y, dtype=np.float64) * a + b

    def fit_transform(self, y):
        return self.fit(y).transform(y)

    def inverse_transform(self, y):
        """Back to the original units (predictions of a model trained on scaled targets)."""
        a, b = self._coefficients()
        y = np.asarray(y, dtype=np.float64)
        if a == 0.0:
            return np.full_like(y, self.min_)
        return (y - b) / a

    def get_state(self):
        return {"kind": "TargetScaler", "lower": self.lower, "upper": self.upper,
                "min": self.min_, "max": self.max_}

    @classmethod
    def from_state(cls, state):
        s = cls(float(state["lower"]), float(state["upper"]))
        s.lower, s.upper = _check_range(s.lower, s.upper)
        s.min_, s.max_ = float(state["min"]), float(state["max"])
        return s

    def __repr__(self):
        return f"TargetScaler(lower={self.lower!r}, upper={self.upper!r})"
