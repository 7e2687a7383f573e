"""Diverging runs stop with DivergenceError; bad hyper-parameters fail with clear messages."""
import pickle

import numpy as np
import pytest

import onlinekern as ok
from onlinekern._core.learner import DivergenceError
from onlinekern.train import main as train_main


@pytest.fixture(scope="module")
def regression():
    # Targets of size ~1-3 with features of order 1: DualSGD's Pegasos coefficients
    # -g/(lam t) with lam = 1e-4 (its default when the stream length is unknown) blow up under
    # the unbounded squared loss.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    y = X @ rng.standard_normal(5)
    return X, y


def _dualsgd():
    return ok.make_learner("dualsgd-l2", lam=1e-4, preset="paper", n_threads=1)


def test_dualsgd_l2_raises_divergence_error_with_the_index(regression):
    X, y = regression
    with pytest.raises(DivergenceError) as err:
        _dualsgd().fit(X, y)
    e = err.value
    assert isinstance(e, ValueError) and isinstance(e, FloatingPointError)
    assert e.learner == "DualSGD"
    assert 1 < e.index <= len(y)
    msg = str(e)
    assert f"example {e.index}" in msg and "DualSGD" in msg
    for hint in ("smaller eta", "larger lam", "scale"):
        assert hint in msg
    # The index is exact: the examples before it give finite pre-update scores (file order).
    learner = _dualsgd().partial_fit(X[:e.index - 1], y[:e.index - 1])
    with pytest.raises(DivergenceError) as again:
        learner.partial_fit(X[e.index - 1:e.index], y[e.index - 1:e.index])
    assert again.value.index == 1           # 1-based within the stream of that call
    # Picklable (multiprocessing sweeps send exceptions between processes).
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is DivergenceError and back.index == e.index and str(back) == msg


def test_run_online_raises_too(regression):
    X, y = regression
    with pytest.raises(DivergenceError):
        ok.run_online(_dualsgd(), X, y, seed=0)
    # A larger lam keeps the same learner finite.
    res = ok.run_online(ok.make_learner("dualsgd-l2", lam=1.0, preset="paper", n_threads=1), X, y, seed=0)
    assert np.isfinite(res.error)


@pytest.mark.parametrize("name,task", [("fogd", "binary"), ("fogd-l2", "regression"),
                                       ("ogd-l2", "regression")])
def test_huge_eta_never_returns_nan_silently(regression, name, task):
    X, y = regression
    if task == "binary":
        y = np.where(y > 0, 1.0, -1.0)
    learner = ok.make_learner(name, eta=1e300, preset="paper", n_threads=1)
    try:
        res = ok.run_online(learner, X, y, seed=0, keep_scores=True)
    except DivergenceError as e:
        assert 1 <= e.index <= len(y)
    else:
        # Whichever the learner does, the contract holds: no NaN score returned silently.
        assert np.all(np.isfinite(res.scores)) and np.isfinite(res.error)


def test_cli_exits_1_with_one_line(regression, tmp_path, capsys):
    X, y = regression
    path = tmp_path / "reg.libsvm"
    ok.save_libsvm(path, X, y)
    status = train_main(["-a", "dualsgd-l2", str(path), "--lam", "1e-4", "--preset", "paper", "-q", "-j", "1"])
    out = capsys.readouterr()
    assert status == 1
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert "diverged" in lines[0] and "Traceback" not in out.err


# ---------------------------------------------------------------- hyper-parameters

@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 3))
    return X, np.where(X[:, 0] > 0, 1.0, -1.0)


@pytest.mark.parametrize("name,params,word", [
    ("bogd", {"budget": -5}, "budget"),
    ("rbp", {"budget": 0}, "budget"),
    ("fogd", {"n_components": 0}, "n_components"),
    ("ogd", {"gamma": 0.0}, "gamma"),
    ("ogd", {"gamma": -1.0}, "gamma"),
    ("fogd", {"eta": float("nan")}, "eta"),
    ("perceptron", {"eta": float("nan")}, "eta"),
])
def test_bad_hyper_parameters_name_the_parameter(binary, name, params, word):
    X, y = binary
    with pytest.raises(ValueError, match=word):
        ok.make_learner(name, n_threads=1, **params).fit(X, y)


@pytest.mark.parametrize("name,suggestion", [("fogdd", "fogd"), ("bogd-hnge", "bogd-hinge"),
                                             ("fogd-logistc", "fogd-logit"),
                                             ("percepton", "perceptron")])
def test_unknown_algorithm_did_you_mean(name, suggestion):
    with pytest.raises(ValueError, match=f"unknown algorithm.*did you mean '{suggestion}'"):
        ok.make_learner(name)


def test_unknown_loss_did_you_mean(binary):
    X, y = binary
    with pytest.raises(ValueError, match="unknown loss 'hingee'.*did you mean 'hinge'"):
        ok.FOGD(loss="hingee").fit(X, y)
    with pytest.raises(ValueError, match="unknown loss.*did you mean"):
        ok.make_learner("fogd", loss="logistc")


def test_cli_unknown_algorithm_exits_2(capsys):
    assert train_main(["-a", "fogdd", "x.libsvm"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'fogd'" in err and "Traceback" not in err
