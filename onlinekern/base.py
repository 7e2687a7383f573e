"""OnlineLearner: the scikit-learn-style Python half of every learner, written once.

A learner class declares its hyper-parameters in an explicit ``__init__`` (stored unchanged, as
scikit-learn requires), its CLI family name, accepted losses and tasks, and implements one hook,
``_make_core``, which builds the compiled core (``onlinekern._core``).  Everything else —
validation, label encoding, ``partial_fit``/``fit``/``decision_function``/``predict``/``score``,
``get_params``/``set_params``, pickling — lives here.

Label encoding (ALGORITHMS.md §1.1): ``classes_`` holds the sorted distinct labels; binary maps
classes_[0] -> -1 and classes_[1] -> +1, multiclass maps classes_[c] -> c.  ``fit`` reads the
classes from the whole label vector; ``partial_fit`` needs them on its first call.
"""
import inspect
import numbers

import joblib
import numpy as np
import scipy.sparse as sp

from onlinekern._core.learner import TASK_CODES, RowData
from onlinekern._core.losses import canonical_loss, loss_task
from onlinekern.kernels import resolve_gamma
from onlinekern.seeding import check_seed


class NotFittedError(ValueError, AttributeError):
    """Raised when a learner is used for prediction before it has seen data."""


def _positive(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")


def _nonnegative(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a non-negative finite number, got {v!r}")


def _positive_int(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")


def _unit_open(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not 0 < v < 1:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {v!r}")


def _threads(name, v):
    if v is not None:
        _positive_int(name, v)


def _seed(name, v):
    check_seed(v)


def _gamma(name, v):
    if v is None or (isinstance(v, str) and v.strip().lower() == "median"):
        return
    resolve_gamma(v, None)


# Checks by parameter name, shared by every learner that has the parameter.
PARAM_CHECKS = {
    "eta": _positive,
    "lam": _nonnegative,
    "epsilon": _nonnegative,
    "huber_delta": _positive,
    "quantile": _unit_open,
    "n_components": _positive_int,
    "budget": _positive_int,             # None only where the learner's default is None
    "seed": _seed,
    "n_threads": _threads,
    "gamma": _gamma,
    "rank": _positive_int,
    "k_merge": _positive_int,
    "horizon": _positive_int,            # None only where the learner's default is None
    "eta_linear": _positive,
}


class OnlineLearner:
    """Base class of every onlinekern learner (scikit-learn conventions).

    Subclasses set the class attributes below and implement ``_make_core``.
    """

    family = ""                  # CLI family name, e.g. "fogd" (names: fogd, fogd-hinge, ...)
    losses = None                # accepted canonical loss names, or None (mistake-driven)
    tasks = ("binary", "multiclass", "regression")
    summary = ""                 # one line for --list
    paper = ""                   # reference for --list and the docstring
    size_name = "SVs"            # what model_size counts

    # ---- hyper-parameters --------------------------------------------------------------
    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind == p.POSITIONAL_OR_KEYWORD]

    def get_params(self, deep=True):
        """Hyper-parameters as a dict (scikit-learn API)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set hyper-parameters (scikit-learn API); unknown names raise ValueError."""
        valid = self._get_param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}; valid: {', '.join(valid)}")
            setattr(self, key, value)
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if not _same(v, defaults.get(k))]
        return f"{type(self).__name__}({', '.join(changed)})"

    def _validate_params(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        for name, value in self.get_params().items():
            check = PARAM_CHECKS.get(name)
            if value is None and defaults.get(name, 0) is None:
                continue                 # None is this learner's own default ("none"/"automatic")
            if check is not None:
                check(name, value)
        if "loss" in self._get_param_names():
            key = canonical_loss(self.loss)
            if self.losses is not None and key not in self.losses:
                raise ValueError(f"{type(self).__name__} does not support loss {self.loss!r} "
                                 f"(supported: {', '.join(self.losses)})")

    # ---- task and labels --------------------------------------------------------------
    def _task_kind(self):
        """'classification' or 'regression', from the loss or the ``task`` parameter."""
        if "loss" in self._get_param_names():
            return loss_task(self.loss)
        task = getattr(self, "task", "classification")
        if task not in ("classification", "regression"):
            raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
        return task

    def _encode_y(self, y):
        y = np.asarray(y)
        if y.ndim != 1:
            y = y.ravel() if y.ndim == 2 and 1 in y.shape else y
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {np.shape(y)}")
        if self.task_ == "regression":
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("y contains NaN or infinite values")
            return y
        pos = np.searchsorted(self.classes_, y)
        pos = np.clip(pos, 0, len(self.classes_) - 1)
        bad = self.classes_[pos] != y
        if np.any(bad):
            raise ValueError(f"y contains labels not in classes_ {self.classes_.tolist()}: "
                             f"{np.unique(y[bad])[:5].tolist()}")
        if self.task_ == "binary":
            return np.where(pos == 1, 1.0, -1.0)
        return pos.astype(np.float64)

    # ---- input -------------------------------------------------------------------------
    @staticmethod
    def _check_X(X):
        if sp.issparse(X):
            return sp.csr_matrix(X, dtype=np.float64)
        A = np.asarray(X, dtype=np.float64)
        if A.ndim != 2:
            raise ValueError(f"X must be a 2-D array or sparse matrix, got shape {A.shape}")
        return A

    def _n_threads(self):
        n = getattr(self, "n_threads", None)
        return joblib.cpu_count() if n is None else int(n)

    # ---- building the model ------------------------------------------------------------
    def _make_core(self, n_features, task, n_outputs, gamma, X):
        """Return the compiled core for this learner (subclasses)."""
        raise TypeError(f"{type(self).__name__} does not define _make_core")

    def _initialize(self, X, y, classes):
        self._validate_params()
        n_features = X.shape[1]
        if n_features < 1:
            raise ValueError("X has no features")
        kind = self._task_kind()
        if kind == "classification":
            labels = np.unique(np.asarray(y) if classes is None else np.asarray(classes))
            if labels.dtype.kind == "f" and not np.all(labels == np.round(labels)):
                raise ValueError(f"{type(self).__name__} classifies, but the labels are not whole numbers "
                                 f"(e.g. {labels[labels != np.round(labels)][0]!r}): regression targets? "
                                 "use a regression loss or task='regression'")
            if len(labels) < 2:
                raise ValueError(f"classification needs at least 2 classes, got {labels.tolist()}")
            task = "binary" if len(labels) == 2 else "multiclass"
            self.classes_ = labels
        else:
            task = "regression"
        if task not in self.tasks:
            raise ValueError(f"{type(self).__name__} does not support {task} "
                             f"(supported: {', '.join(self.tasks)})")
        self.task_ = task
        n_outputs = len(self.classes_) if task == "multiclass" else 1
        gamma = None
        if "gamma" in self._get_param_names():
            gamma = resolve_gamma(self.gamma, X, getattr(self, "seed", 0), getattr(self, "median_scale", 1.0))
            self.gamma_ = gamma
        self.n_features_in_ = n_features
        self.core_ = self._make_core(n_features, TASK_CODES[task], n_outputs, gamma, X)

    def _reset(self):
        for attr in ("core_", "classes_", "task_", "gamma_", "n_features_in_"):
            self.__dict__.pop(attr, None)

    def _check_fitted(self):
        if "core_" not in self.__dict__:
            raise NotFittedError(f"this {type(self).__name__} has not seen any data yet; call fit or partial_fit first")

    # ---- scikit-learn API ----------------------------------------------------------------
    def partial_fit(self, X, y, classes=None):
        """Learn from the rows of X once, in order, continuing from the current model.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n, d)
        y : array-like, shape (n,)
        classes : array-like, optional
            All class labels; required on the first call for classification.
        """
        X = self._check_X(X)
        y = np.asarray(y)
        if "core_" not in self.__dict__:
            if classes is None and self._task_kind() == "classification":
                raise ValueError("classes must be given on the first call to partial_fit "
                                 "(all labels the stream will contain)")
            self._initialize(X, y, classes)
        elif classes is not None and self._task_kind() == "classification":
            if not np.array_equal(np.unique(classes), self.classes_):
                raise ValueError(f"classes {np.unique(classes).tolist()} differ from classes_ {self.classes_.tolist()}")
        self.core_.set_threads(self._n_threads())
        rows = RowData(X, self.n_features_in_)
        if rows.n_rows != len(y):
            raise ValueError(f"X has {rows.n_rows} rows but y has {len(y)} labels")
        self.core_.run(rows, self._encode_y(y))
        return self

    def fit(self, X, y):
        """Start afresh and learn from the rows of X once, in the given order."""
        X = self._check_X(X)
        self._reset()
        self._initialize(X, np.asarray(y), None)
        return self.partial_fit(X, y)

    def decision_function(self, X):
        """Scores f(x): shape (n,) for binary and regression, (n, C) for multiclass."""
        self._check_fitted()
        rows = RowData(self._check_X(X), self.n_features_in_)
        self.core_.set_threads(self._n_threads())
        out = self.core_.decision_function(rows)
        return out[:, 0] if out.shape[1] == 1 else out

    def predict(self, X):
        """Labels (binary: sign(f) with sign(0) = +1; multiclass: argmax) or regression values."""
        s = self.decision_function(X)
        if self.task_ == "regression":
            return s
        if self.task_ == "binary":
            return self.classes_[(s >= 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]

    def score(self, X, y):
        """Accuracy (classification) or R^2 (regression)."""
        pred = self.predict(X)
        y = np.asarray(y)
        if self.task_ == "regression":
            y = y.astype(np.float64)
            ss_res = np.sum((y - pred) ** 2)
            ss_tot = np.sum((y - y.mean()) ** 2)
            return float(1.0 - ss_res / ss_tot) if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
        return float(np.mean(pred == y))

    # ---- learned state -------------------------------------------------------------------
    @property
    def model_size_(self):
        """Support vectors (kernel learners) or weights per output (feature learners)."""
        self._check_fitted()
        return int(self.core_.size)

    @property
    def n_seen_(self):
        """Examples learned from so far."""
        self._check_fitted()
        return int(self.core_.n_seen)


class KernelLearner(OnlineLearner):
    """Base of kernel-expansion learners: exposes the support set."""

    size_name = "SVs"

    @property
    def support_vectors_(self):
        """(n_SV, d) array of support vectors (slot order)."""
        self._check_fitted()
        return self.core_.sv.support_vectors

    @property
    def dual_coef_(self):
        """Coefficients alpha: (n_SV,) or (n_SV, C) for multiclass."""
        self._check_fitted()
        c = self.core_.sv.coefficients
        return c[:, 0] if c.shape[1] == 1 else c

    @property
    def n_support_(self):
        self._check_fitted()
        return int(self.core_.sv.n)


class RandomFeatureModel:
    """Mixin for models with a random-feature part: exposes its weights and feature map."""

    @property
    def coef_(self):
        """Weights of z(x): (2D,) or (C, 2D) for multiclass."""
        self._check_fitted()
        w = self.core_.weights
        return w[0] if w.shape[0] == 1 else w

    @property
    def feature_map_(self):
        """The RandomFourierMap (use ``.transform(X)`` for z(x))."""
        self._check_fitted()
        return self.core_.fmap


class FeatureLearner(RandomFeatureModel, OnlineLearner):
    """Base of random-feature learners: a linear model on z(x)."""

    size_name = "features"


def _same(a, b):
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 - arrays and odd types: treat as changed
        return False
