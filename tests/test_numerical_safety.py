"""Numerical safety of every registered learner (issue: trustworthy in real use).

The contract, for every learner and task on finite input:

* a prediction (pre-update score in ``run_online``, ``decision_function``, ``predict``) is never
  NaN or infinite: a run either ends with finite numbers or stops with ``DivergenceError``
  naming the example, and a model that overflowed refuses to predict (``DivergenceError``);
* step sizes far too small, constant features and feature magnitudes of 1e-300 and 1e300 are
  handled: kernel learners (whose Gaussian kernel is computed from the differences, never from
  ``|x|^2 + |s|^2 - 2 x.s``) stay finite and exact; where a quantity is not representable (the
  median-heuristic gamma of 1e300-sized features is 1e-600) the error says so and what to do.
"""
import numpy as np
import pytest

import onlinekern as ok
from onlinekern.base import KernelLearner
from onlinekern.kernels import median_gamma
from streams import score_f

N, D = 120, 5


def _targets(task, X):
    rng = np.random.default_rng(3)
    r = X[:, :D] @ rng.standard_normal(D) + 0.1 * rng.standard_normal(len(X))
    if task == "binary":
        return np.where(r > 0, 1.0, -1.0)
    if task == "multiclass":
        return np.digitize(r, np.quantile(r, [1 / 3, 2 / 3])).astype(float)
    return r


BASE = np.random.default_rng(7).standard_normal((N, D))


def _params(name, task, **extra):
    params = {"n_threads": 1}
    learner = ok.make_learner(name)
    names = learner.get_params()
    if "task" in names:
        params["task"] = "regression" if task == "regression" else "classification"
    if "budget" in names:
        params["budget"] = 30          # budget maintenance runs within N examples
    if "n_components" in names:
        params["n_components"] = 32
    return {**params, **extra}


def cases():
    for name, info in sorted(ok.available_learners().items()):
        for task in info["tasks"]:
            yield pytest.param(name, task, id=f"{name}-{task}")


def _run(name, task, X, **extra):
    """run_online + decision_function; returns the result or the DivergenceError."""
    learner = ok.make_learner(name, **_params(name, task, **extra))
    y = _targets(task, BASE)
    try:
        res = ok.run_online(learner, X, y, seed=0, keep_scores=True)
    except ok.DivergenceError as e:
        assert 1 <= e.index <= N and e.learner
        # the overflowed model never hands out a NaN: it raises again on prediction
        try:
            out = score_f(learner, X[:10])
        except ok.DivergenceError as again:
            assert "cannot predict" in str(again)
        else:
            assert np.all(np.isfinite(out))
        return e
    assert np.all(np.isfinite(res.scores))
    assert np.isfinite(res.error)
    assert np.all(np.isfinite(score_f(learner, X[:10])))
    assert learner.predict(X[:10]).shape[0] == 10
    return res


def _step(name, huge):
    """The step-size parameter set to a huge or a tiny step, or None (no step size)."""
    params = ok.make_learner(name).get_params()
    for key in ("eta", "theta", "c"):          # OGD-style eta, DSG's theta, BPAs' aggressiveness C
        if key in params:
            return {key: 1e300 if huge else 1e-300}
    if "lam" in params:                        # Pegasos-style 1/(lam t): small lam = huge step
        return {"lam": 1e-300 if huge else 1e300}
    return None


@pytest.mark.parametrize("name,task", list(cases()))
def test_huge_step_size_never_returns_nan(name, task):
    """A step size of 1e300: finite numbers or a DivergenceError, never a NaN or inf score or RMSE."""
    step = _step(name, huge=True)
    if step is None:
        pytest.skip(f"{name} has no step size")
    _run(name, task, BASE, **step)


@pytest.mark.parametrize("name,task", list(cases()))
def test_tiny_step_size_and_constant_feature_stay_finite(name, task):
    X = BASE.copy()
    X[:, 2] = 7.0                                     # a constant feature
    out = _run(name, task, X)
    assert not isinstance(out, ok.DivergenceError) or name.startswith("dualsgd"), out
    step = _step(name, huge=False)
    if step is not None:
        out = _run(name, task, BASE, **step)
        assert not isinstance(out, ok.DivergenceError), out


@pytest.mark.parametrize("scale", [1e300, 1e-300])
@pytest.mark.parametrize("name,task", list(cases()))
def test_extreme_feature_magnitudes(name, task, scale):
    """Features of magnitude 1e300 or 1e-300: finite results, or a clear error naming the cause."""
    try:
        out = _run(name, task, BASE * scale)
    except ValueError as e:
        # only the median heuristic may refuse, and it must say why and what to do
        assert "extreme magnitude" in str(e) and "gamma" in str(e), e
        assert ok.make_learner(name).get_params().get("gamma") == "median"
        return
    family = ok.available_learners()[name]["class"]
    if issubclass(family, KernelLearner) and not name.startswith(("dualsgd", "sg")):
        # Pure Gaussian-kernel models: every kernel value is exact (0 or 1 in the limit), so no
        # overflow is possible and the run must finish.
        assert not isinstance(out, ok.DivergenceError), out


@pytest.mark.parametrize("name", ["perceptron", "ogd", "projectron", "bsgd-removal", "nogd"])
def test_gaussian_kernel_is_exact_at_1e300(name):
    """The same row twice at magnitude 1e300: k(x, x) = 1 exactly (no inf - inf = NaN), and
    rows 1e300 apart: k = 0."""
    a = np.array([[3.0, -1.0, 2.0]]) * 1e300
    X = np.vstack([a, a, -a])
    y = np.array([1.0, 1.0, -1.0])
    learner = ok.make_learner(name, gamma=0.5, n_threads=1)
    res = ok.run_online(learner, X, y, keep_scores=True)
    # Perceptron-style first update on the mistake at f = 0 gives alpha_1 = eta * y_1 > 0: the
    # repeated row then scores alpha_1 * k(a, a) = alpha_1 and the opposite row scores 0.
    assert res.scores[0] == 0.0
    assert res.scores[1] > 0.0 and np.isfinite(res.scores[1])
    assert res.scores[2] == 0.0


def test_median_heuristic_handles_and_refuses_extreme_magnitudes():
    X = np.random.default_rng(0).standard_normal((40, 4))
    g = median_gamma(X)
    # scale-equivariant where representable: gamma(cX) = gamma(X)/c^2
    np.testing.assert_allclose(median_gamma(X * 1e120) * 1e240, g, rtol=1e-13)
    np.testing.assert_allclose(median_gamma(X * 1e-120) * 1e-240, g, rtol=1e-13)
    # ordinary data is untouched: the very same bits as the plain formula
    from onlinekern.kernels import N_MEDIAN  # noqa: F401  (the sample size the formula uses)
    for scale in (1e300, 1e-300):
        with pytest.raises(ValueError, match="extreme magnitude.*pass gamma"):
            median_gamma(X * scale)


def test_regression_overflow_of_the_squared_error_is_divergence():
    """A finite score with |y - f| > 1e154 overflows the RMSE: reported as divergence, not inf."""
    y = _targets("regression", BASE)
    learner = ok.make_learner("ogd-l2", eta=1e300, preset="paper", n_threads=1)
    with pytest.raises(ok.DivergenceError) as err:
        ok.run_online(learner, BASE, y)
    assert err.value.index == 2            # example 1 sets alpha = 1e300 * y_1; example 2 overflows


def test_fit_knows_the_stream_length():
    """T is known to fit and run_online: DualSGD's lambda = 2/T (§3.11) and Shrinking
    Gradient's eta (B/sqrt(T) under the paper preset, sqrt(m/2)/T for the product's sampled
    estimator; its default exact predictions take a constant step) follow from it; partial_fit on
    a fresh model does not know T (the paper's step then needs it)."""
    X = BASE
    y = _targets("binary", X)
    d = ok.make_learner("dualsgd", n_threads=1).fit(X, y)
    assert d.horizon_ == N and d.core_.lam == 2.0 / N
    assert ok.make_learner("dualsgd", n_threads=1, horizon=1000).fit(X, y).core_.lam == 2.0 / 1000
    assert ok.make_learner("dualsgd", n_threads=1).partial_fit(X, y, classes=[-1, 1]).core_.lam == 1e-4
    s = ok.make_learner("sg", n_threads=1, exact_predict=False).fit(X, y)
    assert s.horizon_ == N and s.eta_ == np.sqrt(s.n_samples / 2.0) / N
    p = ok.make_learner("sg", n_threads=1, preset="paper").fit(X, y)
    assert p.horizon_ == N and p.eta_ == 1.0 / np.sqrt(N)
    with pytest.raises(ValueError, match="needs eta, or horizon"):
        ok.make_learner("sg", n_threads=1, preset="paper").partial_fit(X, y, classes=[-1, 1])
    # saved and loaded with the model
    import tempfile
    import os
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.okm")
        ok.save_model(s, path)
        back = ok.load_model(path)
        assert back.horizon_ == N and back.eta_ == s.eta_


def test_cli_reports_rrf_clipping(tmp_path, capsys):
    """A guard that binds is reported: the CLI warns and the JSON records the count."""
    import json
    from onlinekern.train import main as train_main
    X = BASE
    y = _targets("binary", X)
    path = tmp_path / "b.libsvm"
    ok.save_libsvm(path, X, y)
    out = tmp_path / "r.json"
    assert train_main(["-a", "rrf-hinge", str(path), "--eta-gamma", "1e12", "-g", "0.02", "-D", "10",
                       "-q", "-j", "1", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert "clipped by the overflow guard" in err
    runs = json.loads(out.read_text())["runs"]
    assert runs[0]["n_rho_clips_"] > 0
    # a sane step binds nothing and says nothing
    assert train_main(["-a", "rrf-hinge", str(path), "-q", "-j", "1"]) == 0
    assert "clipped" not in capsys.readouterr().err
