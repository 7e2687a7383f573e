"""A river-style one-example API over any onlinekern learner (river itself is not needed).

``RiverAdapter(learner, features=..., classes=...)`` exposes ``learn_one(x, y)``,
``predict_one(x)`` and, where the learner has ``predict_proba``, ``predict_proba_one(x)``, with
``x`` a dict of feature name -> value.  Each call is one ``partial_fit`` / ``predict`` on a 1-row
matrix, so the model is exactly the one ``partial_fit`` on the same stream builds (DSG-family
learners keep a partial mini-batch pending, as in ``partial_fit``).

The compiled models have a fixed input width, so the feature names are fixed once: from
``features`` or, if it is None, from the sorted keys of the first example learned from.  A later
example with an unknown name raises ValueError (silently dropping it would change the model);
missing names are zeros, as in river's sparse dicts.
"""
import numpy as np


class RiverAdapter:
    """One-example (river-style) learning and prediction with an onlinekern learner.

    Parameters
    ----------
    learner : OnlineLearner
        The (unfitted, or already partially fitted) learner; updated in place.
    features : sequence of hashable, optional
        Feature names in column order.  Default: the sorted keys of the first learned example.
    classes : array-like, optional
        Every class label of the stream; required for classifiers (the compiled model is built
        for a fixed set of classes before the first example).
    """

    def __init__(self, learner, features=None, classes=None):
        self.learner = learner
        self.classes = classes
        self.features = None if features is None else list(features)
        self._index = None if features is None else {f: i for i, f in enumerate(self.features)}

    def _row(self, x):
        if self._index is None:
            raise ValueError("no feature names yet: learn from an example first or pass features=")
        row = np.zeros((1, len(self._index)))
        for key, value in x.items():
            j = self._index.get(key)
            if j is None:
                raise ValueError(f"unknown feature {key!r}: the model was built for {len(self._index)} features "
                                 "(pass every name in features= when creating the adapter)")
            row[0, j] = float(value)
        return row

    def _fitted(self):
        return self.learner.__sklearn_is_fitted__()

    def learn_one(self, x, y):
        """Learn from one example ``x`` (dict name -> value) with target ``y``; returns self."""
        if self._index is None:
            self.features = sorted(x)
            self._index = {f: i for i, f in enumerate(self.features)}
        X = self._row(x)
        if not self._fitted() and self.learner._estimator_type == "classifier" and self.classes is None \
                and not getattr(self.learner, "novelty", False):
            raise ValueError("a classifier needs classes= (every label of the stream) before its first example")
        self.learner.partial_fit(X, np.asarray([y]),
                                 classes=None if self._fitted() else self.classes)
        return self

    def predict_one(self, x):
        """Predicted label or value for one example; None (classifier) or 0.0 before any learning."""
        if not self._fitted():
            return None if self.learner._estimator_type == "classifier" else 0.0
        return self.learner.predict(self._row(x))[0]

    def predict_proba_one(self, x):
        """{class: probability} for one example (learners whose loss gives probabilities); {} before learning."""
        proba = self.learner.predict_proba           # AttributeError for non-probabilistic losses
        if not self._fitted():
            return {}
        p = proba(self._row(x))[0]
        return {c: float(v) for c, v in zip(self.learner.classes_.tolist(), p)}
