"""OnlineLearner: the scikit-learn-style Python half of every learner, written once.

Its parameter checks and presets live in :mod:`onlinekern.params`, its input checks in
:mod:`onlinekern.validation` (both re-exported here).

A learner class declares its hyper-parameters in an explicit ``__init__`` (stored unchanged, as
scikit-learn requires), its CLI family name, accepted losses and tasks, and implements one hook,
``_make_core``, which builds the compiled core (``onlinekern._core``).  Everything else —
validation, label encoding, ``partial_fit``/``fit``/``decision_function``/``predict``/``score``,
``get_params``/``set_params``, pickling — lives here.

Label encoding (ALGORITHMS.md §1.1): ``classes_`` holds the sorted distinct labels; binary maps
classes_[0] -> -1 and classes_[1] -> +1, multiclass maps classes_[c] -> c.  ``fit`` reads the
classes from the whole label vector; ``partial_fit`` needs them on its first call.

scikit-learn compatibility (scikit-learn is only a test extra: nothing here imports it at module
import; ``__sklearn_tags__`` imports ``sklearn.utils`` when scikit-learn asks for the tags).
Learners work in ``clone``, ``Pipeline`` and ``GridSearchCV``; the estimator type (classifier or
regressor) follows ``loss`` / ``task``; input is validated with scikit-learn's messages (1-D X,
NaN/inf, empty X, "X has N features, but L is expecting M features as input", feature names of
data frames, column-vector y); ``predict_proba`` / ``predict_log_proba`` exist (``hasattr`` is
truthful) for the binary logistic loss (sigmoid of f) and the softmax loss (softmax of f; on two
classes the softmax loss is the logistic loss on the binary score f = s_1 - s_0, so sigmoid of f,
:func:`onlinekern.losses.binary_form`), not for the multiclass margin-logistic loss, which is no
probability model; ``decision_function`` exists
for classifiers only (a regressor's ``predict`` is its score f).  Differences that remain, and so
the expected failures of ``sklearn.utils.estimator_checks.check_estimator`` over every registered
learner (the list, with measured figures, is enforced by tests/test_sklearn_compat.py):

* ``fit`` is one pass in the given order (the papers' online protocol), i.e. ``partial_fit`` on a
  fresh model; more epochs are more ``partial_fit`` calls.  No ``sample_weight``.
* With default step sizes, one pass over scikit-learn's 200-example regression set stays below
  R^2 = 0.5 for some regressors (check_regressors_train: DSG's absolute, epsilon-insensitive,
  Huber and quantile losses, UDSG's absolute and quantile losses and CDSG's quantile loss, R^2
  0.32-0.49; the only check that fails with the defaults).
* A sparse X may have fewer columns than the fitted width (a LIBSVM file whose trailing features
  never occur); dense X must match exactly.

Sparse input of any width (issue 26): validation, the width selection of ``gamma="auto"``
(:mod:`onlinekern.kernels`), ``feature_scale_`` (a :class:`onlinekern.kernels.ColumnScale` on wide
data) and :meth:`OnlineLearner.row_data` cost the nonzeros of X and never allocate an array of
``n_features_in_``; what the compiled core keeps per column is the learner's own.
"""
import contextlib
import inspect

import numpy as np
import scipy.sparse as sp

from onlinekern._core.learner import TASK_CODES, RowData, openmp_max_threads
from onlinekern._core.losses import MULTICLASS_LOSSES, canonical_loss, loss_task
from onlinekern._core.threads import usable_cores
from onlinekern.kernels import resolve_gamma, scale_basis, scale_features, width_candidates
# The parameter checks and presets (onlinekern.params) and NotFittedError (onlinekern.validation)
# are re-exported: learners and users import them from here.
from onlinekern.params import (AUTO, AUTO_BUDGET, PARAM_CHECKS, PRESETS, check_flag,  # noqa: F401
                               check_nonnegative, check_positive, check_positive_int, is_auto)
from onlinekern.selection import select_width
from onlinekern.validation import (NotFittedError, assert_all_finite, check_feature_names, check_y,  # noqa: F401
                                   column_or_1d, not_fitted_error)

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
    #: The papers' value of every parameter whose default is ``"auto"`` (``preset="paper"``).
    paper_defaults = {"gamma": None}

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
            if value is None and (defaults.get(name, 0) is None or self.paper_defaults.get(name, 0) is None):
                continue                 # None is this learner's or its papers' default ("none"/a rule)
            if is_auto(value) and name in self.paper_defaults:
                continue                 # resolved on the first data (resolve_params)
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
        y = column_or_1d(y)
        if self.task_ == "regression":
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("Input y contains NaN or infinity.")
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
        """X as float64 CSR or a 2-D float64 array (no width or finiteness checks: see _validate_X).

        Read-only input (e.g. a joblib memmap) is used in place: the compiled code reads rows
        through const views (RowView).
        """
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            if X.dtype.kind == "c":
                raise ValueError("Complex data not supported")
            return X.astype(np.float64, copy=False)
        A = np.asarray(X)
        if A.dtype.kind == "c":
            raise ValueError("Complex data not supported")
        A = A.astype(np.float64, copy=False)
        if A.ndim == 1:
            raise ValueError(f"Expected 2D array, got 1D array instead: shape {A.shape}. Reshape your data either "
                             "using array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) "
                             "if it contains a single sample.")
        if A.ndim != 2:
            raise ValueError(f"X must be a 2-D array or sparse matrix, got shape {A.shape}")
        return A

    def _validate_X(self, X, reset, min_samples=0):
        """Convert X (_check_X), check names, width, size and finiteness the scikit-learn way.

        ``reset`` (fit, first partial_fit) records ``feature_names_in_``; otherwise X must match the
        fitted width: exactly for dense X, at most for sparse X (a LIBSVM file whose trailing
        features never occur has fewer columns; its missing columns are zeros).
        """
        check_feature_names(self, X, reset)
        X = self._check_X(X)
        name = type(self).__name__
        n, d = X.shape
        if n < min_samples:
            raise ValueError(f"Found array with {n} sample(s) (shape={X.shape}) while a minimum of "
                             f"{min_samples} is required by {name}.")
        if reset and d < 1:
            raise ValueError(f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                             f"required by {name}.")
        if not reset and "n_features_in_" in self.__dict__:
            m = self.n_features_in_
            if d > m or (d != m and not sp.issparse(X)):
                raise ValueError(f"X has {d} features, but {name} is expecting {m} features as input.")
        assert_all_finite(X.data if sp.issparse(X) else X)
        return X

    def _n_threads(self):
        """Threads a pass may use: ``n_threads``, or with None the OpenMP default
        (``OMP_NUM_THREADS``, a ``threadpoolctl`` limit) capped at the usable cores."""
        n = getattr(self, "n_threads", None)
        return min(usable_cores(), openmp_max_threads()) if n is None else int(n)

    def _pass_context(self, n_rows):
        """Context manager around one pass of the core over ``n_rows`` examples (``fit``,
        ``partial_fit``, ``run_online``, each streamed chunk).

        Nothing by default.  A learner whose step may call LAPACK returns a BLAS thread limit of
        ``n_threads`` for the passes that may make that call (see NOGD), so that ``n_threads``
        bounds every thread of the pass."""
        return contextlib.nullcontext()

    # ---- building the model ------------------------------------------------------------
    def _make_core(self, n_features, task, n_outputs, gamma, X):
        """Return the compiled core for this learner (subclasses).  ``X``: the first data as given;
        only its shape and nonzero pattern may be read (a candidate kernel's per-feature factors,
        positive and finite, change neither), so the width race scales no copy of X for it."""
        raise TypeError(f"{type(self).__name__} does not define _make_core")

    def _initialize(self, X, y, classes, n_stream=None):
        """Validate, fix the task and build the core.

        ``n_stream``: the length T of the stream about to be learned when the caller knows it
        (``fit``, ``run_online``, the CLI), else None (``partial_fit``).  Learners with a
        ``horizon`` parameter use it when ``horizon`` is None (``horizon_``): e.g. DualSGD's
        lambda = 2/T "if T is known" (ALGORITHMS.md §3.11).
        """
        self._validate_params()
        n_features = X.shape[1]
        if n_features < 1:
            raise ValueError("X has no features")
        kind = self._task_kind()
        if kind == "classification":
            labels = np.unique(np.asarray(y) if classes is None else np.asarray(classes))
            if labels.dtype.kind in "fc" and not np.all(np.isfinite(labels)):
                raise ValueError("Input y contains NaN or infinity")
            if labels.dtype.kind == "f" and not np.all(labels == np.round(labels)):
                raise ValueError(f"Unknown label type: continuous.  {type(self).__name__} classifies, but the "
                                 f"labels are not whole numbers (e.g. {labels[labels != np.round(labels)][0]!r}): "
                                 "regression targets? use a regression loss or task='regression'")
            if len(labels) < 2:
                raise ValueError(f"classification needs at least 2 classes, got {len(labels)} "
                                 f"class{'' if len(labels) == 1 else 'es'}: {labels.tolist()}")
            task = "binary" if len(labels) == 2 else "multiclass"
            self.classes_ = labels
        else:
            task = "regression"
        # (the first words of the multiclass message are scikit-learn's, which its checks look for)
        why = "Only binary classification is supported. The type of the target is multiclass: " \
            if task == "multiclass" else ""
        if task not in self.tasks:
            raise ValueError(f"{why}{type(self).__name__} does not support {task} "
                             f"(supported: {', '.join(self.tasks)})")
        if task == "multiclass" and not self._multiclass_capable():
            raise ValueError(f"{why}loss {self.loss!r} of {type(self).__name__} has no multiclass form "
                             f"(multiclass losses: {', '.join(MULTICLASS_LOSSES)})")
        self.task_ = task
        n_outputs = len(self.classes_) if task == "multiclass" else 1
        names = self._get_param_names()
        if "horizon" in names:
            self.horizon_ = self.horizon if self.horizon is not None else n_stream
        self.n_features_in_ = n_features
        self.resolve_params(X, y, task, n_outputs, n_stream)
        kernels = [(None, None)]
        if "gamma" in names:
            seed, scale = getattr(self, "seed", 0), getattr(self, "median_scale", 1.0)
            if not is_auto(self.gamma):
                kernels = [(None, resolve_gamma(self.gamma, X, seed, scale))]
            elif self.preset_ == "paper":
                kernels = [(None, resolve_gamma(self.paper_defaults["gamma"], X, seed, scale))]
            else:
                kernels = width_candidates(X, seed, scale)
        cores = []
        for s, gamma in kernels:        # X as given: _make_core reads its shape and nonzero pattern,
            core = self._make_core(n_features, TASK_CODES[task], n_outputs, gamma, X)   # not values
            core.target_norm = task == "regression" and self.preset_ == "auto"
            cores.append((s, gamma, core))
        s, gamma, self.core_ = cores[0]
        if gamma is not None:
            self.gamma_ = gamma
        if s is not None:
            self.feature_scale_, self.feature_scale_basis_ = s, scale_basis(s)
        if len(cores) > 1:
            self.__dict__["_pending_widths"] = cores      # chosen by the first pass (run_core)

    @property
    def preset_(self):
        """The preset in force: the ``preset`` parameter, or "paper" for a learner without one."""
        return getattr(self, "preset", "paper")

    def resolve_params(self, X, y, task, n_outputs, n_stream):
        """Resolve every parameter left at ``"auto"`` (gamma excepted) on the first data.

        Under ``preset="paper"`` each takes :attr:`paper_defaults`; under ``preset="auto"`` the
        learner's :meth:`auto_value` rule.  Each resolved value is kept as a fitted attribute named
        after the parameter with a trailing underscore (``eta_``, ...); :meth:`param_value` reads the value
        in force for any parameter.

        Parameters
        ----------
        X : array or sparse matrix
            The first rows seen (features already multiplied by ``feature_scale_`` if any).
        y : array
            Their labels or targets (raw).  Rules may use the number of classes, never the labels'
            values for the examples about to be predicted.
        task : {'binary', 'multiclass', 'regression'}
        n_outputs : int
        n_stream : int or None
            Length of the stream when known (fit, run_online, the CLI).
        """
        resolved = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if name == "gamma" or not is_auto(value) or name not in self.paper_defaults:
                continue
            if self.preset_ == "paper":
                resolved[name] = self.paper_defaults[name]
            else:
                resolved[name] = self.auto_value(name, X, task, n_outputs, n_stream)
            setattr(self, name + "_", resolved[name])
        self.resolved_params_ = resolved

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """The product default of parameter ``name`` (learners override; default: the papers' value,
        and :data:`onlinekern.params.AUTO_BUDGET` for every ``budget="auto"``).

        Parameters
        ----------
        name : str
        X : array or sparse matrix (first rows, scaled as the model sees them)
        task : str
        n_outputs : int
        n_stream : int or None

        Returns
        -------
        The value to use.
        """
        if name == "budget":
            return AUTO_BUDGET
        return self.paper_defaults[name]

    def param_value(self, name):
        """The value in force of hyper-parameter ``name``: resolved if it was ``"auto"``."""
        resolved = self.__dict__.get("resolved_params_", {})
        return resolved[name] if name in resolved else getattr(self, name)

    def run_core(self, X, y, order=None, checkpoints=None, scores=None, callback=None):
        """One pass of the compiled core over validated X and encoded y (``LearnerCore.run``).

        The first pass after ``_initialize`` with ``gamma="auto"`` first lets the candidate kernels
        compete on its first examples (:func:`onlinekern.selection.select_width`); every pass
        applies ``feature_scale_``.  Arguments and result as ``LearnerCore.run``.
        """
        pending = self.__dict__.pop("_pending_widths", None)
        if pending is None:
            return self.core_.run(self.row_data(X), y, order, checkpoints, scores, callback)
        return select_width(self, pending, X, y, order, checkpoints, scores, callback)

    def chosen_params(self):
        """What the adaptive defaults chose on the first data, as a JSON-ready dict.

        ``gamma`` (the width in force), ``feature_scale`` ("per-feature ranges" or "per-feature
        standard deviations" when ``feature_scale_`` is set, after ``feature_scale_basis_``), every
        parameter resolved from ``"auto"``, and for regression under
        the product preset the targets' running ``target_mean`` and ``target_std``.
        """
        self._check_fitted()
        out = {"preset": self.preset_}
        if "gamma_" in self.__dict__:
            out["gamma"] = float(self.gamma_)
        if "feature_scale_" in self.__dict__:
            basis = self.__dict__.get("feature_scale_basis_", "ranges")      # files before it: ranges
            out["feature_scale"] = "per-feature " + ("standard deviations" if basis == "deviations" else "ranges")
        out.update({k: (float(v) if isinstance(v, (float, np.floating)) else v)
                    for k, v in self.__dict__.get("resolved_params_", {}).items()})
        if self.task_ == "regression" and self.core_.target_norm:
            out["target_mean"] = float(self.core_.target_location)
            out["target_std"] = float(self.core_.target_scale)
        return out

    def row_data(self, X):
        """X (validated) as the compiled core reads it: a RowData, with ``feature_scale_`` applied."""
        s = self.__dict__.get("feature_scale_")
        return RowData(X if s is None else scale_features(X, s), self.n_features_in_)

    def _reset(self):
        # every fitted attribute (scikit-learn's convention: a trailing underscore, no leading one)
        for attr in [k for k in self.__dict__ if k.endswith("_") and not k.startswith("_")]:
            self.__dict__.pop(attr, None)

    def _check_fitted(self):
        if "core_" not in self.__dict__:
            raise not_fitted_error()(f"this {type(self).__name__} has not seen any data yet; call fit or partial_fit first")

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
        first = "core_" not in self.__dict__
        X = self._validate_X(X, reset=first, min_samples=1 if first else 0)
        y = check_y(y)
        if first:
            if classes is None and self._task_kind() == "classification":
                raise ValueError("classes must be given on the first call to partial_fit "
                                 "(all labels the stream will contain)")
            self._initialize(X, y, classes)
        elif classes is not None and self._task_kind() == "classification":
            if not np.array_equal(np.unique(classes), self.classes_):
                raise ValueError(f"classes {np.unique(classes).tolist()} differ from classes_ {self.classes_.tolist()}")
        return self._learn(X, y)

    def fit(self, X, y):
        """Start afresh and learn from the rows of X once, in the given order.

        One pass, like the papers' online protocol: ``fit`` is ``partial_fit`` on a fresh model
        (with ``classes`` read from y); call ``partial_fit`` again for more epochs.
        """
        self._reset()
        X = self._validate_X(X, reset=True, min_samples=1)
        y = check_y(y)
        self._initialize(X, y, None, n_stream=X.shape[0])
        return self._learn(X, y)

    def _learn(self, X, y):
        """One pass of the core over validated X and y (an initialised model)."""
        self.core_.set_threads(self._n_threads())
        if X.shape[0] != len(y):
            raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                             f"X has {X.shape[0]} rows but y has {len(y)} labels")
        with self._pass_context(X.shape[0]):
            self.run_core(X, self._encode_y(y))
        return self

    @property
    def decision_function(self):
        """Scores f(x) of a classifier: shape (n,) for binary, (n, C) for multiclass.

        A property so that ``hasattr`` is truthful: a regressor (a regression loss or
        ``task='regression'``) has none, as scikit-learn requires; its ``predict`` is f(x).
        """
        task = self.__dict__.get("task_")        # the fitted task, else the one the parameters say
        if task == "regression" or (task is None and self._estimator_type == "regressor"):
            raise AttributeError(f"{type(self).__name__} is a regressor: it has no decision_function; "
                                 "its predict returns the score f(x)")
        return self._scores

    def _scores(self, X):
        """f(x) for every task: shape (n,) for binary and regression, (n, C) for multiclass."""
        self._check_fitted()
        rows = self.row_data(self._validate_X(X, reset=False))
        self.core_.set_threads(self._n_threads())
        out = self.core_.decision_function(rows)
        return out[:, 0] if out.shape[1] == 1 else out

    def predict(self, X):
        """Labels (binary: sign(f) with sign(0) = +1; multiclass: argmax) or regression values."""
        s = self._scores(X)
        if self.task_ == "regression":
            return s
        if self.task_ == "binary":
            return self.classes_[(s >= 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]

    def score(self, X, y):
        """Accuracy (classification) or R^2 (regression)."""
        pred = self.predict(X)
        y = column_or_1d(check_y(y))
        if self.task_ == "regression":
            y = y.astype(np.float64)
            ss_res = np.sum((y - pred) ** 2)
            ss_tot = np.sum((y - y.mean()) ** 2)
            return float(1.0 - ss_res / ss_tot) if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
        return float(np.mean(pred == y))

    @property
    def fit_transform(self):
        """``fit(X, y).transform(X)``, for learners with a ``transform`` (e.g. RRF's z(x)) only."""
        if not hasattr(type(self), "transform"):
            raise AttributeError(f"{type(self).__name__} has no transform, hence no fit_transform")
        return self._fit_transform

    def _fit_transform(self, X, y=None, **fit_params):
        return self.fit(X, y, **fit_params).transform(X)

    # ---- probabilities (logistic and softmax losses only) ---------------------------------
    def _proba_link(self):
        """'sigmoid' or 'softmax' when the scores are log-odds / logits, else AttributeError.

        Binary logistic loss log(1 + e^{-yf}): P(classes_[1] | x) = sig(f).  Softmax loss: P = softmax(f)
        (on two classes it is the logistic loss on the one score f, so sig(f) again).
        The multiclass margin-logistic loss log(1 + e^{-(f_y - f_r)}) (ALGORITHMS.md §2) fits no
        probability model, so it gets no predict_proba.  Before fitting, the answer follows the loss
        parameter (the task, hence a multiclass margin loss, is only known from the data).
        """
        if "loss" not in self._get_param_names() or getattr(self, "novelty", False):
            raise AttributeError(f"{type(self).__name__} has no predict_proba: it has no probabilistic loss")
        try:
            name = canonical_loss(self.loss)
        except ValueError:
            raise AttributeError(f"predict_proba needs loss='logistic' or 'softmax', got {self.loss!r}") from None
        if "core_" in self.__dict__:
            spec = getattr(getattr(self.core_, "loss", None), "spec", None)
            if spec is not None:
                name = spec["name"]          # e.g. DSG runs multiclass 'logistic' as softmax
            if self.task_ == "binary" and name == "logistic":
                return "sigmoid"
            if self.task_ == "multiclass" and name == "softmax":
                return "softmax"
            raise AttributeError(f"predict_proba is not available for the {self.task_} {name} loss of "
                                 f"{type(self).__name__} (only binary logistic and softmax losses)")
        if name in ("logistic", "softmax"):
            return "sigmoid" if name == "logistic" else "softmax"
        raise AttributeError(f"predict_proba needs loss='logistic' or 'softmax', got {self.loss!r}")

    @property
    def predict_proba(self):
        """Class probabilities (n, n_classes) in ``classes_`` order; logistic (binary) or softmax loss only.

        A property so that ``hasattr(learner, "predict_proba")`` tells whether it is available.
        """
        self._proba_link()
        return self._predict_proba

    @property
    def predict_log_proba(self):
        """Log of predict_proba, computed stably; same availability as predict_proba."""
        self._proba_link()
        return self._predict_log_proba

    def _predict_log_proba(self, X):
        link = self._proba_link()
        s = self._scores(X)
        if link == "sigmoid":
            return np.column_stack([-np.logaddexp(0.0, s), -np.logaddexp(0.0, -s)])
        m = np.max(s, axis=1, keepdims=True)
        return s - (m + np.log(np.sum(np.exp(s - m), axis=1, keepdims=True)))

    def _predict_proba(self, X):
        return np.exp(self._predict_log_proba(X))

    # ---- scikit-learn integration -------------------------------------------------------
    @property
    def _estimator_type(self):
        """'classifier' or 'regressor' (scikit-learn < 1.6), from the loss or the task parameter."""
        try:
            kind = self._task_kind()
        except ValueError:
            return None
        return "classifier" if kind == "classification" else "regressor"

    def __sklearn_is_fitted__(self):
        return "core_" in self.__dict__

    def __sklearn_tags__(self):
        """scikit-learn >= 1.6 estimator tags (scikit-learn is imported here only, when asked).

        The estimator type follows ``loss`` / ``task``; sparse input is accepted; one pass of an
        online learner over a few hundred rows may not reach scikit-learn's "reasonable score"
        thresholds, which ``_poor_score`` declares per learner.
        """
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags
        etype = self._estimator_type
        required = not getattr(self, "novelty", False)
        tags = Tags(estimator_type=etype, target_tags=TargetTags(required=required),
                    input_tags=InputTags(sparse=True))
        if etype == "classifier":
            tags.classifier_tags = ClassifierTags(poor_score=self._poor_score,
                                                  multi_class=self._multiclass_capable())
        elif etype == "regressor":
            tags.regressor_tags = RegressorTags(poor_score=self._poor_score)
        if hasattr(type(self), "transform"):     # e.g. RRF.transform: z(x) with the learned bandwidths
            from sklearn.utils import TransformerTags
            tags.transformer_tags = TransformerTags()
        return tags

    _poor_score = False

    def _multiclass_capable(self):
        """Whether this configuration takes more than 2 classes (squared hinge has no multiclass form)."""
        if "multiclass" not in self.tasks:
            return False
        if "loss" in self._get_param_names():
            try:
                return canonical_loss(self.loss) in MULTICLASS_LOSSES
            except ValueError:
                return True
        return True

    # ---- pickling ------------------------------------------------------------------------
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
