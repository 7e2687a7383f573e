"""The river estimators (onlinekern.river_adapter) pass river's own estimator checks
(``river.checks.check_estimator``) for one learner of every family; skipped without river."""
import numpy as np
import pytest

river = pytest.importorskip("river")
from river import checks, datasets, evaluate, metrics  # noqa: E402

import onlinekern as ok  # noqa: E402
from onlinekern.river_adapter import OnlinekernClassifier, OnlinekernRegressor  # noqa: E402

SMALL = {"fogd": {"n_components": 32}, "rrf": {"n_components": 32}, "rbp": {"budget": 20},
         "dsg": {"block_size": 8}, "sg": {"eta": 0.5}}
# one learner of each family: kernel Perceptron and OGD, FOGD, a budgeted learner, RRF, DSG, SG
CLASSIFIERS = ["perceptron", "ogd-logit", "fogd-hinge", "rbp", "rrf-logit", "dsg", "sg"]
REGRESSORS = ["fogd-l2", "rbp", "sg"]


def small(name):
    return SMALL.get(name.split("-")[0])


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_river_checks_classifier(name):
    checks.check_estimator(OnlinekernClassifier(name, params=small(name), n_features=32))


@pytest.mark.parametrize("name", REGRESSORS)
def test_river_checks_regressor(name):
    checks.check_estimator(OnlinekernRegressor(name, params=small(name), n_features=32))


@pytest.mark.parametrize("family", sorted({v["family"] for v in ok.available_learners().values()}))
def test_every_family_learns_through_river(family):
    model = OnlinekernClassifier(family, params=small(family), n_features=32)
    score = evaluate.progressive_val_score(datasets.Phishing().take(120), model, metrics.Accuracy())
    assert score.get() > 0.5


def test_model_is_partial_fit_on_hashed_rows():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.random(40) < 0.5
    model, ref = OnlinekernClassifier("fogd-hinge", n_features=8), ok.FOGD(seed=0)
    for i in range(40):
        x = {f"f{j}": v for j, v in enumerate(X[i])}
        model.learn_one(x, bool(y[i]))
        ref.partial_fit(model.hashed_row(x), [int(y[i])], classes=[0, 1])
    Q = model.hashed_row({f"f{j}": v for j, v in enumerate(X[0])})
    np.testing.assert_array_equal(model.model_.decision_function(Q), ref.decision_function(Q))
    assert model.predict_one({f"f{j}": v for j, v in enumerate(X[0])}) == bool(ref.predict(Q)[0])


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="not one of classes"):
        OnlinekernClassifier("fogd-hinge").learn_one({"a": 1.0}, "spam")
    with pytest.raises(ValueError, match="not a regressor"):
        OnlinekernRegressor("fogd-hinge")
    with pytest.raises(NotImplementedError):
        OnlinekernClassifier("fogd-hinge").predict_proba_one({"a": 1.0})
