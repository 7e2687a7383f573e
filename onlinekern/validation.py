"""Input checks in scikit-learn's words, without importing scikit-learn.

scikit-learn is only a test extra: these checks raise and warn with its messages (and, when it is
already imported, its exception and warning classes), so that its estimator checks recognise
onlinekern's learners, but nothing here imports it.
"""
import sys
import warnings

import numpy as np
import scipy.sparse as sp

__all__ = ["NotFittedError", "assert_all_finite", "check_feature_names", "check_y", "column_or_1d",
           "conversion_warning", "feature_names", "not_fitted_error"]


class NotFittedError(ValueError, AttributeError):
    """Raised when a learner is used for prediction before it has seen data."""



def conversion_warning():
    """scikit-learn's DataConversionWarning when scikit-learn is already imported, else UserWarning.

    scikit-learn is only a test extra: never import it here just to warn.
    """
    exc = sys.modules.get("sklearn.exceptions")
    return getattr(exc, "DataConversionWarning", UserWarning)


_NOT_FITTED = {}


def not_fitted_error():
    """NotFittedError, also a scikit-learn NotFittedError when scikit-learn is already imported
    (its checks and ``except sklearn.exceptions.NotFittedError`` then recognise it)."""
    exc = sys.modules.get("sklearn.exceptions")
    base = getattr(exc, "NotFittedError", None)
    if base is None or issubclass(NotFittedError, base):
        return NotFittedError
    if base not in _NOT_FITTED:
        _NOT_FITTED[base] = type("NotFittedError", (NotFittedError, base),
                                 {"__module__": __name__, "__doc__": NotFittedError.__doc__})
    return _NOT_FITTED[base]


def check_y(y):
    """``y`` as an array; scikit-learn's ValueError when it is None."""
    if y is None:
        raise ValueError("this learner requires y to be passed, but the target y is None")
    return np.asarray(y)


def column_or_1d(y):
    """``y`` as a 1-D array: a column vector is raveled with scikit-learn's DataConversionWarning,
    any other shape is a ValueError."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape "
                      "of y to (n_samples,), for example using ravel().", conversion_warning(), stacklevel=3)
        return y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    return y


def assert_all_finite(a):
    """ValueError with scikit-learn's message when ``a`` holds NaN or infinity."""
    # the sum is a cheap first test; overflow to inf falls through to the exact test
    if a.size and not np.isfinite(np.sum(a)):
        if np.isnan(a).any():
            raise ValueError("Input X contains NaN.")
        if not np.isfinite(a).all():
            raise ValueError("Input X contains infinity or a value too large for dtype('float64').")


def feature_names(X):
    """Column names of a data frame when they are all strings (scikit-learn's rule), else None."""
    cols = getattr(X, "columns", None)
    if cols is None or sp.issparse(X):
        return None
    names = np.asarray(cols, dtype=object)
    kinds = {isinstance(c, str) for c in names}
    if kinds == {True}:
        return names
    if kinds == {True, False}:
        raise TypeError("Feature names are only supported if all input features have string names, "
                        f"but your input has {sorted({type(c).__name__ for c in names})} as feature name / "
                        "column name types. Convert them all to strings to use feature names.")
    return None


def check_feature_names(est, X, reset):
    """Record (``reset``) or check the column names of ``X`` against ``est.feature_names_in_``,
    warning or raising as scikit-learn does."""
    names = feature_names(X)
    if reset:
        if names is not None:
            est.feature_names_in_ = names
        else:
            est.__dict__.pop("feature_names_in_", None)
        return
    fitted = est.__dict__.get("feature_names_in_")
    if fitted is None and names is None:
        return
    name = type(est).__name__
    if names is not None and fitted is None:
        warnings.warn(f"X has feature names, but {name} was fitted without feature names", UserWarning, stacklevel=4)
    elif names is None:
        warnings.warn(f"X does not have valid feature names, but {name} was fitted with feature names",
                      UserWarning, stacklevel=4)
    elif len(names) != len(fitted) or np.any(names != fitted):
        raise ValueError("The feature names should match those that were passed during fit.\n"
                         f"Fitted with: {list(fitted)[:10]}\nGiven: {list(names)[:10]}")
