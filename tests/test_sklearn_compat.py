"""scikit-learn compatibility: check_estimator, tags, predict_proba, Pipeline, GridSearchCV, clone.

scikit-learn is a test extra only: ``onlinekern`` must import without it (checked in a subprocess).

scikit-learn's ``check_estimator`` runs over every name of ``onlinekern.available_learners()``
(learners with a ``task`` parameter once as a classifier and once as a regressor), with their
defaults and one thread.  Every check passes except those listed in
``EXPECTED`` with their reason; the test fails if a listed check starts passing or another check
fails, so the list stays exact.  Every registered name passes with its defaults; the one listed
failure is an extra configuration:

* ShrinkingGradient's default prediction is exact (product preset); its sampled estimator
  (``exact_predict=False``) runs as extra configurations below with the product preset's row-keyed
  estimates (a row's estimate does not depend on its batch or order) and passes every check but
  ``check_regressors_train``: one pass over scikit-learn's 200-example regression set does not
  reach R^2 > 0.5 (the measured R^2 and why in ``R2``).
"""
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn")

import onlinekern as ok  # noqa: E402
from sklearn.base import clone, is_classifier, is_regressor  # noqa: E402
from sklearn.exceptions import NotFittedError as SkNotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils import get_tags  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

# Every learner runs with its defaults; one thread keeps the file fast (OpenMP on a busy machine
# costs more than it gains on 200 rows).
SMALL = dict(n_threads=1)


def configurations():
    """(id, registry name, parameters) for every registered name, plus sampled ShrinkingGradient."""
    out = []
    for name, info in sorted(ok.available_learners().items()):
        names = info["class"]._get_param_names()
        params = {k: v for k, v in SMALL.items() if k in names}
        if "task" in names:
            out.append((f"{name}[classification]", name, {**params, "task": "classification"}))
            if "regression" in info["tasks"]:
                out.append((f"{name}[regression]", name, {**params, "task": "regression"}))
        else:
            out.append((name, name, params))
    sg = [params for cid, name, params in out if name == "sg"][0]
    for task in ("classification", "regression"):
        out.append((f"sg[{task},sampled]", "sg", {**sg, "task": task, "exact_predict": False, "n_samples": 100}))
    return out


CONFIGS = configurations()

# R^2 of one pass (fit, then score on the same rows) on check_regressors_train's data, measured
# with the defaults, and why each of these configurations fails that check.
R2 = {"sg[regression,sampled]": (0.169, "the sampled estimator (m = 100) is too noisy")}
# SON and KONS pass although the check sets ``alpha = 0.01`` on any regressor with an ``alpha`` (its
# linear models' penalty; theirs is the ridge of the Newton system, A = alpha I + ...): the
# regression defaults' curvature floor (and SON's Robust Frequent Directions) keep the steps
# bounded whatever alpha is (measured R^2 at alpha = 0.01: 0.72-0.87)


def expected_failures():
    """{configuration id: {check name: reason}} for every check expected to fail."""
    out = {}
    for cid, (r2, why) in R2.items():
        out.setdefault(cid, {})["check_regressors_train"] = f"R^2 = {r2} < 0.5: {why}"
    return out


EXPECTED = expected_failures()


@pytest.mark.parametrize("cid, name, params", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_check_estimator(cid, name, params):
    est = ok.make_learner(name, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None)
    failed = {r["check_name"]: r["exception"] for r in results if r["status"] == "failed"}
    assert len(results) > 40
    expected = EXPECTED.get(cid, {})
    unexpected = {k: repr(v)[:300] for k, v in failed.items() if k not in expected}
    assert not unexpected, unexpected
    assert set(failed) == set(expected), f"now passing, remove from EXPECTED: {sorted(set(expected) - set(failed))}"


def test_expected_failures_name_real_configurations():
    ids = {cid for cid, _, _ in CONFIGS}
    assert set(EXPECTED) <= ids, set(EXPECTED) - ids
    assert {name for _, name, _ in CONFIGS} == set(ok.available_learners())
    assert all(reason for checks in EXPECTED.values() for reason in checks.values())


@pytest.mark.parametrize("cid, name, params", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_regressors_have_no_decision_function(cid, name, params):
    """hasattr is truthful before and after fitting; a regressor's predict is its score."""
    est = ok.make_learner(name, **params)
    X = np.random.default_rng(0).normal(size=(40, 3))
    if is_regressor(est):
        assert not hasattr(est, "decision_function")
        est.fit(X, X[:, 0])
        assert not hasattr(est, "decision_function")
        with pytest.raises(AttributeError, match="regressor: it has no decision_function"):
            est.decision_function(X)
        assert np.all(np.isfinite(est.predict(X)))
    else:
        assert is_classifier(est) and hasattr(est, "decision_function")
        y = np.arange(40) % (3 if name.endswith("-softmax") else 2)
        s = est.fit(X, y).decision_function(X)
        assert s.shape[0] == 40 and np.all(np.isfinite(s))


def test_import_without_sklearn():
    code = ("import sys; sys.modules['sklearn'] = None\n"    # any sklearn import now raises ImportError
            "import onlinekern, numpy as np\n"
            "e = onlinekern.FOGD(n_components=8).fit(np.random.rand(20, 3), np.arange(20) % 2)\n"
            "assert e.__sklearn_is_fitted__() and e._estimator_type == 'classifier'\n"
            "import warnings\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    e.fit(np.random.rand(20, 3), (np.arange(20) % 2)[:, None])\n"
            "assert 'column-vector' in str(w[0].message)\n"
            "try:\n"
            "    onlinekern.FOGD().predict(np.zeros((1, 3)))\n"
            "except onlinekern.NotFittedError:\n"
            "    pass\n")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- tags ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("est, kind", [
    (ok.KernelOGD(), "classifier"), (ok.KernelOGD(loss="squared"), "regressor"),
    (ok.Perceptron(), "classifier"), (ok.Perceptron(task="regression"), "regressor"),
    (ok.ShrinkingGradient(), "regressor"), (ok.DSG(loss="huber"), "regressor"), (ok.FOGD(loss="logit"), "classifier"),
])
def test_estimator_type_follows_loss_and_task(est, kind):
    tags = get_tags(est)
    assert tags.estimator_type == kind == est._estimator_type
    assert is_classifier(est) == (kind == "classifier") and is_regressor(est) == (kind == "regressor")
    assert tags.input_tags.sparse and tags.target_tags.required
    assert (tags.classifier_tags is not None) == (kind == "classifier")
    assert (tags.regressor_tags is not None) == (kind == "regressor")


def test_multiclass_tag():
    assert get_tags(ok.FOGD()).classifier_tags.multi_class
    assert not get_tags(ok.FOGD(loss="squared-hinge")).classifier_tags.multi_class
    assert not get_tags(ok.DSG(novelty=True)).target_tags.required


def test_not_fitted_error_is_both():
    with pytest.raises(SkNotFittedError):
        ok.FOGD().predict(np.zeros((2, 3)))
    with pytest.raises(ok.NotFittedError):
        ok.FOGD().decision_function(np.zeros((2, 3)))
    e = ok.FOGD()
    assert not e.__sklearn_is_fitted__()
    e.fit(np.random.rand(10, 2), np.arange(10) % 2)
    assert e.__sklearn_is_fitted__()


# ---- predict_proba ----------------------------------------------------------------------------
def blobs(n=120, d=3, C=2, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % C
    X = rng.normal(size=(n, d)) + 2.0 * y[:, None]
    return X, y


def test_predict_proba_binary_logistic_is_sigmoid():
    X, y = blobs()
    e = ok.KernelOGD(loss="logistic").fit(X, y)
    s = e.decision_function(X)
    P = e.predict_proba(X)
    np.testing.assert_allclose(P[:, 1], 1.0 / (1.0 + np.exp(-s)), rtol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(e.predict_log_proba(X), np.log(P), rtol=1e-12)
    assert np.array_equal(e.classes_[np.argmax(P, axis=1)], e.predict(X))
    # no overflow far from the boundary
    big = e.predict_log_proba(X * 0 + 1e3)
    assert np.all(np.isfinite(big))


@pytest.mark.parametrize("learner", [ok.KernelOGD(loss="softmax"), ok.FOGD(loss="softmax", n_components=32),
                                     ok.DSG(batch_size=8, block_size=8)])   # DSG runs multiclass logistic as softmax
def test_predict_proba_softmax(learner):
    X, y = blobs(C=3)
    e = learner.fit(X, y)
    s = e.decision_function(X)
    P = e.predict_proba(X)
    expect = np.exp(s - s.max(axis=1, keepdims=True))
    expect /= expect.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P, expect, rtol=1e-12)
    assert np.array_equal(e.classes_[np.argmax(P, axis=1)], e.predict(X))


def test_predict_proba_availability():
    X, y = blobs()
    X3, y3 = blobs(C=3)
    for e in (ok.KernelOGD(), ok.Perceptron(), ok.FOGD(loss="squared"), ok.DSG(novelty=True)):
        assert not hasattr(e, "predict_proba") and not hasattr(e, "predict_log_proba")
    assert not hasattr(ok.KernelOGD().fit(X, y), "predict_proba")
    e = ok.KernelOGD(loss="logistic")
    assert hasattr(e, "predict_proba")
    assert hasattr(e.fit(X, y), "predict_proba")
    # multiclass margin-logistic (f_y - f_runner-up) is no probability model: not provided
    e.fit(X3, y3)
    assert not hasattr(e, "predict_proba")
    with pytest.raises(AttributeError, match="multiclass logistic"):
        e.predict_proba(X3)


# ---- meta-estimators ----------------------------------------------------------------------------
def test_pipeline_and_clone():
    X, y = blobs(n=200, d=4)
    pipe = make_pipeline(StandardScaler(), ok.FOGD(n_components=64, seed=3))
    pipe.fit(X, y)
    assert pipe.score(X, y) > 0.8
    assert pipe.predict(X).shape == (200,)
    c = clone(pipe)
    assert c.get_params()["fogd__n_components"] == 64 and c.get_params()["fogd__seed"] == 3
    assert not c[-1].__sklearn_is_fitted__()
    e = ok.NOGD(budget=20, rank=5, eta=0.3, loss="logit")
    c = clone(e)
    assert c is not e and c.get_params() == e.get_params()
    # same data, same seed: the clone learns the same model
    np.testing.assert_array_equal(c.fit(X, y).decision_function(X), e.fit(X, y).decision_function(X))


def test_grid_search():
    X, y = blobs(n=150, d=3)
    gs = GridSearchCV(ok.KernelOGD(), {"eta": [0.05, 0.2, 0.8]}, cv=3)
    gs.fit(X, y)
    assert gs.best_params_["eta"] in (0.05, 0.2, 0.8)
    assert len(gs.cv_results_["mean_test_score"]) == 3
    assert type(gs.cv).__name__ == "int" and gs.best_estimator_.n_features_in_ == 3
    Xr = X[:, :1]
    gr = GridSearchCV(ok.FOGD(loss="squared", n_components=32), {"eta": [0.1, 0.4]}, cv=3).fit(X, Xr.ravel())
    assert np.isfinite(gr.best_score_)


# ---- input handling -------------------------------------------------------------------------------
def test_string_labels_and_score():
    X, y = blobs(C=3)
    names = np.array(["a", "b", "c"])[y]
    e = ok.KernelOGD().fit(X, names)
    assert e.classes_.tolist() == ["a", "b", "c"]
    assert set(e.predict(X)) <= {"a", "b", "c"}
    assert e.score(X, names) == np.mean(e.predict(X) == names)


def test_feature_count_and_names():
    X, y = blobs()
    e = ok.FOGD(n_components=16).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but FOGD is expecting 3 features as input"):
        e.predict(X[:, :2])
    with pytest.raises(ValueError, match="X has 2 features"):
        e.partial_fit(X[:, :2], y)
    # a sparse X may be narrower (a LIBSVM file whose last features never occur)
    np.testing.assert_array_equal(e.decision_function(sp.csr_matrix(X[:, :2])),
                                  e.decision_function(np.column_stack([X[:, :2], np.zeros(len(X))])))
    with pytest.raises(ValueError, match="NaN"):
        e.predict(np.where(X > 1, np.nan, X))
    with pytest.raises(ValueError, match="Reshape your data"):
        e.predict(X[0])
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["u", "v", "w"])
    e.fit(df, y)
    assert e.feature_names_in_.tolist() == ["u", "v", "w"]
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        e.predict(X)
    with pytest.raises(ValueError, match="feature names should match"):
        e.predict(df.rename(columns={"u": "z"}))
    e.fit(X, y)
    assert not hasattr(e, "feature_names_in_")


def test_regression_target_for_classifier():
    X, _ = blobs()
    with pytest.raises(ValueError, match="Unknown label type"):
        ok.KernelOGD().fit(X, X[:, 0])


def test_pickle_from_readonly_memmap(tmp_path):
    joblib = pytest.importorskip("joblib")
    X, y = blobs(C=3)
    for e in (ok.KernelOGD(), ok.FOGD(n_components=16), ok.DSG(batch_size=8, block_size=8)):
        e.fit(X, y)
        path = tmp_path / "m.joblib"
        joblib.dump(e, path)
        back = joblib.load(path, mmap_mode="r")
        np.testing.assert_array_equal(back.decision_function(X), e.decision_function(X))
        back.partial_fit(X, y)                       # resumed learning writes into the model
        again = pickle.loads(pickle.dumps(e)).partial_fit(X, y)
        np.testing.assert_array_equal(back.decision_function(X), again.decision_function(X))
