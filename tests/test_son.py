"""SON (sketched online Newton on random Fourier features): the compiled learner against a NumPy
twin of Luo et al.'s Algorithm 1 with Frequent Directions, and the sketch's invariants."""
import numpy as np
import pytest

import onlinekern as ok
from onlinekern._core.losses import get_multiclass_loss


def son_reference(Z, y, alpha, eta, m, grad, C=1, robust=False, floor=False):
    """Online scores (n, C) and final w (C, F) of SON on the features Z (n, F).

    A_t = alpha I + S^T S, S the Frequent-Directions sketch (at most 2m rows, shrunk by the m-th
    largest eigenvalue of S S^T when full) of the rows sqrt(eta) ||h_t|| z_t, h_t = grad(f_t, y_t)
    the loss gradient in the C scores; w_c <- w_c - h_tc A_t^{-1} z_t.  Solved directly
    (numpy.linalg), not as the compiled learner does.  ``robust``: Robust Frequent Directions
    (alpha += delta / 2 at each shrink); ``floor``: rows sqrt(max(eta ||h||^2, 1)) z_t."""
    n, F = Z.shape
    w, S, scores = np.zeros((C, F)), np.zeros((0, F)), np.empty((n, C))
    for t in range(n):
        z = Z[t]
        scores[t] = f = w @ z
        h = np.atleast_1d(grad(f, y[t]))
        if not np.any(h):
            continue
        weight = eta * np.sum(h * h)
        S = np.vstack([S, np.sqrt(max(weight, 1.0) if floor else weight) * z])
        if S.shape[0] == 2 * m:
            lam, U = np.linalg.eigh(S @ S.T)
            lam, U = lam[::-1], U[:, ::-1]
            d = lam[m - 1]
            if robust and d > 0:
                alpha = alpha + d / 2
            keep = [i for i in range(m - 1) if lam[i] > d and lam[i] > 0]
            S = np.array([np.sqrt((lam[i] - d) / lam[i]) * (U[:, i] @ S) for i in keep]).reshape(len(keep), F)
        v = np.linalg.solve(alpha * np.eye(F) + S.T @ S, z)
        w = w - np.outer(h, v)
    return scores, w


def _data(n=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1, -1), np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]


@pytest.mark.parametrize("m", [1, 3, 6])
def test_binary_hinge_matches_the_numpy_twin(m):
    X, y, _ = _data()
    est = ok.SON(n_components=24, sketch_size=m, gamma=0.4, alpha=0.5, eta=2.0, preset="paper", seed=3)
    res = ok.run_online(est, X, y)
    Z = est.feature_map_.transform(X)
    scores, w = son_reference(Z, y, 0.5, 2.0, m, lambda f, t: -t if t * f[0] < 1.0 else 0.0)
    np.testing.assert_allclose(est.core_.weights, w, rtol=1e-9, atol=1e-11)
    assert res.n_mistakes == int(np.sum(scores[:, 0] * y <= 0))
    assert est.n_shrinks_ > 3
    assert est.core_.sketch.shape[0] < 2 * m


def test_larger_sketch_matches_the_numpy_twin():
    # 2m = 24 rows: the eigensolver (Householder + implicit QL, include/ok_sketch.h) on a larger
    # Gram matrix than above, against numpy.linalg.eigh in the twin
    X, y, _ = _data(n=400, seed=7)
    est = ok.SON(n_components=40, sketch_size=12, gamma=0.4, alpha=0.5, eta=2.0, preset="paper", seed=1)
    res = ok.run_online(est, X, y)
    Z = est.feature_map_.transform(X)
    scores, w = son_reference(Z, y, 0.5, 2.0, 12, lambda f, t: -t if t * f[0] < 1.0 else 0.0)
    np.testing.assert_allclose(est.core_.weights, w, rtol=1e-9, atol=1e-11)
    assert res.n_mistakes == int(np.sum(scores[:, 0] * y <= 0))
    assert est.n_shrinks_ > 3
    assert est.core_.sketch.shape[0] < 24


def test_duplicate_rows_match_the_numpy_twin():
    # a stream of 7 points repeated in turn (squared loss: every example updates): the 2m = 10
    # sketch rows span at most 7 directions, so S S^T has a repeated zero eigenvalue at each shrink
    X, _, t = _data(n=7, seed=4)
    X, t = np.tile(X, (30, 1)), np.tile(t, 30)
    est = ok.SON(n_components=12, sketch_size=5, gamma=0.5, alpha=0.3, eta=1.0, loss="l2", preset="paper", seed=2)
    est.fit(X, t)
    Z = est.feature_map_.transform(X)
    _, w = son_reference(Z, t, 0.3, 1.0, 5, lambda f, yy: f[0] - yy)
    np.testing.assert_allclose(est.core_.weights, w, rtol=1e-9, atol=1e-11)
    assert est.n_shrinks_ > 10


def test_regression_squared_loss_matches_the_numpy_twin():
    X, _, t = _data(seed=1)
    est = ok.SON(n_components=20, sketch_size=4, gamma=0.5, alpha=1.0, eta=1.0, loss="l2", preset="paper", seed=2)
    est.fit(X, t)
    Z = est.feature_map_.transform(X)
    _, w = son_reference(Z, t, 1.0, 1.0, 4, lambda f, yy: f[0] - yy)
    np.testing.assert_allclose(est.core_.weights, w, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("loss, grad", [("l2", lambda f, yy: f[0] - yy),
                                        ("l1", lambda f, yy: float(np.sign(f[0] - yy)))])
def test_robust_sketch_and_curvature_floor_match_the_numpy_twin(loss, grad):
    # the product preset's two departures (module docstring), switched on explicitly under the
    # paper preset (raw targets) with a small alpha, where they matter
    X, _, t = _data(seed=3)
    est = ok.SON(n_components=20, sketch_size=4, gamma=0.5, alpha=0.01, eta=1.0, loss=loss, robust_sketch=True,
                 curvature_floor=True, preset="paper", seed=2)
    est.fit(X, t)
    Z = est.feature_map_.transform(X)
    _, w = son_reference(Z, t, 0.01, 1.0, 4, grad, robust=True, floor=True)
    np.testing.assert_allclose(est.core_.weights, w, rtol=1e-9, atol=1e-11)
    assert est.core_.alpha > 0.01 and est.n_shrinks_ > 10     # alpha grew at the shrinks


def test_the_product_preset_resolves_both_departures():
    X, y, t = _data(n=60)
    reg = ok.make_learner("son-l2").fit(X, t)
    clf = ok.make_learner("son-hinge").fit(X, y)
    paper = ok.make_learner("son-l2", preset="paper", gamma=0.5).fit(X, t)
    assert (reg.robust_sketch_, reg.curvature_floor_) == (True, True)
    assert (clf.robust_sketch_, clf.curvature_floor_) == (False, False)
    assert (paper.robust_sketch_, paper.curvature_floor_) == (False, False)


def test_multiclass_shares_one_sketch_and_matches_the_numpy_twin():
    X, _, _ = _data(n=400, seed=5)
    y3 = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int) * 2
    est = ok.SON(n_components=16, sketch_size=3, gamma=0.5, preset="paper", seed=0)
    ok.run_online(est, X, y3)
    Z = est.feature_map_.transform(X)
    hinge = get_multiclass_loss("hinge")
    _, w = son_reference(Z, y3, 0.1, 1.0, 3, lambda f, c: hinge.py_grad(f, int(c))[1], C=4)
    np.testing.assert_allclose(est.core_.weights, w, rtol=1e-9, atol=1e-10)
    assert est.core_.sketch.shape[1] == 32 and est.n_shrinks_ > 3


def test_second_order_steps_beat_first_order_on_ijcnn1(shared_data):
    # the first 4,000 rows of ijcnn1 (file order), the same width and frequencies for both
    X, y = ok.load_libsvm(shared_data.plain("ijcnn1"), n_features=22)
    X, y = X[:4000], y[:4000]
    kw = dict(n_components=100, gamma=1.0, preset="paper", seed=0)
    son = ok.run_online(ok.SON(**kw), X, y).mistake_rate            # measured 3.60 %
    fogd = ok.run_online(ok.FOGD(eta=0.4, **kw), X, y).mistake_rate  # measured 9.38 %
    assert son < 0.5 * fogd


@pytest.mark.parametrize("bad", [dict(alpha=0.0), dict(eta=-1.0), dict(sketch_size=0), dict(alpha=float("nan"))])
def test_bad_parameters_are_refused(bad):
    X, y, _ = _data(n=20)
    with pytest.raises(ValueError):
        ok.SON(**bad).fit(X, y)
