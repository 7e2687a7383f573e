"""river estimators over any onlinekern learner (``pip install onlinekern[river]``).

``OnlinekernClassifier(learner="fogd-hinge")`` and ``OnlinekernRegressor(learner="fogd-l2")``
wrap a registered learner (``onlinekern.available_learners()``) as a river estimator:
``learn_one(x, y)``, ``predict_one(x)`` and, where the learner's loss gives probabilities,
``predict_proba_one(x)``, with ``x`` a dict of feature name -> value.  Each call is one
``partial_fit`` / ``predict`` on a 1-row CSR matrix, so the model is the one ``partial_fit``
builds on the same rows (DSG-family learners keep a partial mini-batch pending, as there).

river's features are open-ended names, the compiled models have a fixed input width: each name
goes to column ``crc32(repr(name)) % n_features`` (the hashing trick), so features may appear and
disappear at any time; names that collide add up.  The default width is :data:`HASH_WIDTH` =
2^20 columns (Vowpal Wabbit's default is 2^18 weights): few collisions for vocabularies of up to a
few hundred thousand names.  Its cost is the row's nonzeros, not the width, wherever the
learner's own memory follows the nonzeros (issue 26: the width selection, scaling and this
adapter never allocate an array of the width; give a learner that still stores per-column state a
smaller ``n_features``).  The classes are fixed when the estimator is
made (``classes``; river's binary convention ``(False, True)`` by default), because a compiled
classifier is built for a fixed set of classes before its first example.  Give kernel learners a
``gamma``: the width selection (``gamma="auto"``) sees a single row at the first call, from which it
can only take LIBSVM's 1/d -- about 1e-6 at the default width.
"""
import zlib

import numpy as np
import scipy.sparse as sp

try:
    from river import base
except ImportError as exc:                                  # the optional dependency
    raise ImportError("onlinekern.river_adapter needs river: pip install 'onlinekern[river]'") from exc

from onlinekern.registry import make_learner

#: Default hashing width of both estimators (2^20 columns).
HASH_WIDTH = 1 << 20


def _columns(x, n_features):
    """(sorted columns, values) of the dict ``x`` hashed into ``n_features`` columns."""
    cols = {}
    for name, value in x.items():
        j = zlib.crc32(repr(name).encode()) % n_features
        cols[j] = cols.get(j, 0.0) + float(value)
    keys = sorted(cols)
    return keys, [cols[j] for j in keys]


class _Wrapped:
    """What both estimators share: the learner, built at the first example, and the row of ``x``."""

    def hashed_row(self, x):
        """The 1 x ``n_features`` CSR row the learner sees for the dict ``x``."""
        keys, values = _columns(x, self.n_features)
        return sp.csr_matrix((np.asarray(values, dtype=np.float64), np.asarray(keys, dtype=np.int32),
                              np.array([0, len(keys)])), shape=(1, self.n_features))

    def _build(self, task, kind):
        learner = make_learner(self.learner, **(self.params or {}))
        names = learner.get_params()
        learner.set_params(**{k: v for k, v in (("seed", self.seed), ("task", task)) if k in names})
        if learner._estimator_type != kind:
            raise ValueError(f"learner={self.learner!r} (params {self.params}) is a {learner._estimator_type}, "
                             f"not a {kind}: pick a name with a {task} loss (available_learners())")
        return learner


class OnlinekernClassifier(_Wrapped, base.Classifier):
    """A river classifier over an onlinekern learner.

    Parameters
    ----------
    learner : str
        A registered learner name, e.g. ``"fogd-hinge"``, ``"rbp"``, ``"dsg"`` (``available_learners()``).
    params : dict, optional
        Hyper-parameters of the learner (``make_learner(learner, **params)``).
    classes : tuple
        Every class label of the stream, in order; a binary model maps ``classes[0]`` to -1.
    n_features : int
        Width of the hashed input (default :data:`HASH_WIDTH`, 2^20).
    seed : int
        The learner's seed, where it has one.
    """

    def __init__(self, learner="fogd-hinge", params=None, classes=(False, True), n_features=HASH_WIDTH, seed=0):
        self.learner = learner
        self.params = params
        self.classes = classes
        self.n_features = n_features
        self.seed = seed
        if len(classes) < 2:
            raise ValueError(f"classes={classes!r}: a classifier needs at least two classes")
        self.model_ = self._build("classification", "classifier")          # fails early on a bad name or parameter

    @property
    def _multiclass(self):
        return len(self.classes) > 2

    @classmethod
    def _unit_test_params(cls):
        yield {"learner": "fogd-hinge", "params": {"n_components": 32}, "n_features": 1024}
        yield {"learner": "rbp", "params": {"budget": 20}, "n_features": 1024}

    def _index(self, y):
        for i, c in enumerate(self.classes):
            if c == y:
                return i
        raise ValueError(f"label {y!r} is not one of classes={self.classes!r}")

    def learn_one(self, x, y):
        """Learn from one example ``x`` (dict name -> value) with label ``y`` (one of ``classes``)."""
        fitted = self.model_.__sklearn_is_fitted__()
        self.model_.partial_fit(self.hashed_row(x), np.array([self._index(y)]),
                                classes=None if fitted else np.arange(len(self.classes)))

    def predict_one(self, x):
        """The predicted label of ``x``; ``classes[0]`` before any learning."""
        if not self.model_.__sklearn_is_fitted__():
            return self.classes[0]
        return self.classes[int(self.model_.predict(self.hashed_row(x))[0])]

    def predict_proba_one(self, x):
        """{label: probability} of ``x`` (losses with probabilities); uniform before any learning.

        For losses without probabilities (hinge, ...) river's own ``Classifier.predict_proba_one``
        answers: it raises, which is how river marks a classifier that predicts labels only.
        """
        if not hasattr(self.model_, "predict_proba"):
            return super().predict_proba_one(x)
        if not self.model_.__sklearn_is_fitted__():
            return {c: 1.0 / len(self.classes) for c in self.classes}
        p = self.model_.predict_proba(self.hashed_row(x))[0]
        return {self.classes[int(i)]: float(v) for i, v in zip(self.model_.classes_, p)}


class OnlinekernRegressor(_Wrapped, base.Regressor):
    """A river regressor over an onlinekern learner.

    Parameters
    ----------
    learner : str
        A registered learner name with a regression task, e.g. ``"fogd-l2"``, ``"rbp"``.
    params : dict, optional
        Hyper-parameters of the learner (``make_learner(learner, **params)``).
    n_features : int
        Width of the hashed input (default :data:`HASH_WIDTH`, 2^20).
    seed : int
        The learner's seed, where it has one.
    """

    def __init__(self, learner="fogd-l2", params=None, n_features=HASH_WIDTH, seed=0):
        self.learner = learner
        self.params = params
        self.n_features = n_features
        self.seed = seed
        self.model_ = self._build("regression", "regressor")

    @classmethod
    def _unit_test_params(cls):
        yield {"learner": "fogd-l2", "params": {"n_components": 32}, "n_features": 1024}
        yield {"learner": "rbp", "params": {"budget": 20}, "n_features": 1024}

    def learn_one(self, x, y):
        """Learn from one example ``x`` (dict name -> value) with target ``y``."""
        self.model_.partial_fit(self.hashed_row(x), np.array([float(y)]))

    def predict_one(self, x):
        """The predicted value of ``x``; 0.0 before any learning."""
        if not self.model_.__sklearn_is_fitted__():
            return 0.0
        return float(self.model_.predict(self.hashed_row(x))[0])
