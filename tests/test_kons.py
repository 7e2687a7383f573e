"""KONS (PROS-N-KONS's kernel online Newton step on a leverage-sampled Nystrom embedding): the
compiled learner against the NumPy oracle (tests/reference_kons.py), the embedding's invariants,
and second-order accuracy on ijcnn1."""
import os

import numpy as np
import pytest

import onlinekern as ok
from onlinekern._core.losses import get_multiclass_loss
from reference_kons import KONSRef
from streams import run_at_levels


def _data(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.4 * X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]


def _hinge(f, y):
    return -y if y * f[0] < 1.0 else 0.0


def _rbf(A, B, gamma):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize("budget, mu, restart", [(1000, 0.01, False), (30, 0.05, False), (1000, 0.5, False),
                                                 (30, 0.01, True)])
def test_binary_hinge_matches_the_numpy_oracle(budget, mu, restart):
    X, y, _ = _data()
    est = ok.KONS(gamma=0.6, budget=budget, alpha=0.05, eta=0.5, mu=mu, restart=restart, preset="paper", seed=4,
                  n_threads=1)
    res = ok.run_online(est, X, y, keep_scores=True)
    ref = KONSRef(X.shape[1], 0.6, _hinge, budget=budget, alpha=0.05, eta=0.5, mu=mu, restart=restart, seed=4)
    scores = np.array([ref.step(X[t], y[t])[0] for t in range(len(y))])
    np.testing.assert_allclose(res.scores, scores, rtol=1e-8, atol=1e-9)
    np.testing.assert_array_equal(est.support_vectors_, ref.X)
    np.testing.assert_allclose(est.core_.probabilities, ref.p, rtol=1e-12)
    np.testing.assert_allclose(est.dual_coef_, ref.beta[:, 0], rtol=1e-8, atol=1e-9)
    assert res.n_mistakes == int(np.sum(scores * y <= 0))
    assert 1 < est.n_landmarks_ <= budget
    if budget == 30:
        assert est.n_landmarks_ == 30
    if restart:
        assert est.core_.n_restarts == est.core_.n_added


def test_regression_and_multiclass_match_the_numpy_oracle():
    X, y, t = _data(n=300, seed=1)
    est = ok.KONS(gamma=0.5, budget=40, loss="l2", alpha=1.0, eta=1.0, restart=False, preset="paper",
                  seed=2).fit(X, t)
    ref = KONSRef(4, 0.5, lambda f, yy: f[0] - yy, budget=40, alpha=1.0, eta=1.0, seed=2)
    for i in range(len(t)):
        ref.step(X[i], t[i])
    np.testing.assert_allclose(est.dual_coef_, ref.beta[:, 0], rtol=1e-8, atol=1e-9)
    y3 = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int) * 2
    est = ok.KONS(gamma=0.5, budget=50, alpha=0.1, restart=False, preset="paper", seed=0)
    ok.run_online(est, X, y3)
    hinge = get_multiclass_loss("hinge")
    ref = KONSRef(4, 0.5, lambda f, c: hinge.py_grad(f, int(c))[1], C=4, budget=50, alpha=0.1, eta=0.3, seed=0)
    for i in range(len(y3)):
        ref.step(X[i], y3[i])
    np.testing.assert_allclose(est.dual_coef_, ref.beta, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("loss, grad", [("l2", lambda f, yy: f[0] - yy),
                                        ("quantile", lambda f, yy: 0.5 if f[0] > yy else (-0.5 if f[0] < yy else 0.0))])
def test_curvature_floor_matches_the_numpy_oracle(loss, grad):
    X, _, t = _data(n=300, seed=6)
    est = ok.KONS(gamma=0.5, budget=40, loss=loss, alpha=0.01, eta=0.3, restart=False, curvature_floor=True,
                  preset="paper", seed=2).fit(X, t)
    ref = KONSRef(4, 0.5, grad, budget=40, alpha=0.01, eta=0.3, seed=2, floor=True)
    for i in range(len(t)):
        ref.step(X[i], t[i])
    np.testing.assert_allclose(est.dual_coef_, ref.beta[:, 0], rtol=1e-8, atol=1e-9)


def _overshoots(est, X, t):
    """Examples whose own step carried the prediction past the target (squared loss)."""
    count = 0
    for i in range(len(t)):
        before = est.predict(X[i:i + 1])[0] if i else 0.0
        est.partial_fit(X[i:i + 1], t[i:i + 1])
        after = est.predict(X[i:i + 1])[0]
        count += (after - t[i]) * (before - t[i]) < -1e-12 or abs(after - t[i]) > abs(before - t[i]) + 1e-12
    return count


@pytest.mark.parametrize("name, extra", [("kons-l2", dict(restart=False)), ("son-l2", dict(robust_sketch=True))])
def test_the_curvature_floor_never_overshoots_the_target(name, extra):
    # with A >= alpha I + z z^T (KONS; SON between shrinks, and its 6 shrinks here with Robust FD),
    # a step moves the prediction on its own example by less than its residual, towards the
    # target; without the floor a small alpha overshoots (KONS: 66 of 150 examples, SON: 34)
    X, _, t = _data(n=150, seed=8)
    kw = dict(gamma=0.5, alpha=0.001, preset="paper", seed=1, **extra)
    assert _overshoots(ok.make_learner(name, curvature_floor=True, **kw), X, t) == 0
    assert _overshoots(ok.make_learner(name, curvature_floor=False, **kw), X, t) > 10


def test_the_factors_are_the_embedding_and_newton_matrices():
    X, y, _ = _data(n=500, seed=3)
    est = ok.KONS(gamma=0.7, budget=60, alpha=0.1, eta=0.5, mu=0.02, restart=False, seed=1).fit(X, y)
    S, core = est.support_vectors_, est.core_
    L, LA, p = core.embedding_factor, core.newton_factor, core.probabilities
    np.testing.assert_allclose(L @ L.T, _rbf(S, S, 0.7) + 0.02 * np.diag(p), atol=1e-10)
    assert np.all(p > 0) and np.all(p <= 1)
    # R R^T = P = L A L^T with A = alpha I plus a positive semi-definite sum of gradients
    P = LA @ LA.T
    assert np.all(np.linalg.eigvalsh(P - 0.1 * (L @ L.T)) > -1e-9)
    A = np.linalg.solve(L, np.linalg.solve(L, P).T)
    assert np.all(np.linalg.eigvalsh(A) >= 0.1 - 1e-8) and np.allclose(A, A.T, atol=1e-8)
    # the predictor is w^T z(x) = beta^T k_I(x) with beta the dual coefficients
    np.testing.assert_allclose(est.decision_function(X[:40]), _rbf(X[:40], S, 0.7) @ est.dual_coef_, atol=1e-10)


def test_same_bits_on_any_thread_count_and_seed_decides_the_dictionary(force_parallel):
    X, y, _ = _data(n=600, seed=5)
    runs = [ok.run_online(ok.KONS(gamma=0.6, budget=80, seed=3, preset="paper", n_threads=t), X, y, keep_scores=True)
            for t in (1, 2)]
    assert runs[0].scores.tobytes() == runs[1].scores.tobytes()
    # a dictionary that does not fill: which points join is the seed's choice
    a, b = (ok.KONS(gamma=0.6, budget=1000, mu=0.5, seed=s).fit(X, y) for s in (3, 4))
    assert 0 < a.n_landmarks_ < 300 and 0 < b.n_landmarks_ < 300
    assert a.support_vectors_.shape != b.support_vectors_.shape or not np.array_equal(a.support_vectors_, b.support_vectors_)
    again = ok.KONS(gamma=0.6, budget=1000, mu=0.5, seed=3).fit(X, y)
    assert again.support_vectors_.tobytes() == a.support_vectors_.tobytes()


def _ldl_state(est, seed):
    """The fitted core's state with P's factor replaced by a random, well-conditioned one (1 / D on
    the diagonal, unit L_P below), and that P."""
    rng = np.random.default_rng(seed)
    st = est.core_.get_state()
    j = est.n_landmarks_
    Lp = np.tril(rng.normal(scale=0.3, size=(j, j)), -1) + np.eye(j)
    dg = rng.uniform(0.2, 3.0, size=j)
    st["LDP"] = np.tril(Lp, -1) + np.diag(1.0 / dg)
    return st, Lp @ np.diag(dg) @ Lp.T


def test_newton_update_is_method_c1_on_the_ldl_factor():
    """One update P <- P + a^2 k k^T against NumPy: the kept factor is P_new's, and the returned
    direction is P_new^{-1} k; two updates in a row compose."""
    X, y, _ = _data(n=600, seed=4)
    est = ok.KONS(gamma=0.5, budget=37, mu=0.02, loss="logistic", seed=1).fit(X, y)
    assert est.n_landmarks_ == 37
    st, P = _ldl_state(est, 3)
    core = type(est.core_)()
    core.set_state(st)
    rng = np.random.default_rng(9)
    for a in (0.7, 2.5):
        k = rng.normal(size=37)
        v = core.newton_update(k, a)
        P = P + a * a * np.outer(k, k)
        np.testing.assert_allclose(v, np.linalg.solve(P, k), rtol=1e-10, atol=1e-12)
        R = core.newton_factor
        np.testing.assert_allclose(R @ R.T, P, rtol=1e-11, atol=1e-11)
    with pytest.raises(ValueError):
        core.newton_update(np.ones(36), 1.0)
    with pytest.raises(ValueError):
        core.newton_update(np.ones(37), 0.0)


LEVELS_CHILD = r"""
import json, sys, numpy as np, onlinekern as ok
sys.path.insert(0, {tests!r})
from test_kons import _data, _ldl_state
X, y, _ = _data(n=900, seed=6)
# 75 landmarks: the update's pairs of columns and the backward's blocks of four with dots of every
# length mod 8 (the fitted part depends on the level's exp; the factor is replaced by a fixed one)
est = ok.KONS(gamma=0.5, budget=75, mu=0.02, loss="logistic", seed=2).fit(X, y)
st, _ = _ldl_state(est, 5)
core = type(est.core_)()
core.set_state(st)
rng = np.random.default_rng(1)
out = {"n": int(est.n_landmarks_), "v": []}
for a in (0.3, 1.0, 4.0):
    out["v"].append([x.hex() for x in core.newton_update(rng.normal(size=75), a).tolist()])
out["F"] = [x.hex() for x in core.newton_ldl.ravel().tolist()]
print(json.dumps(out))
"""


def test_same_bits_at_every_simd_level():
    """The factor's update pass (okk_ldl2) and the four-column backward dots (okk_dots4) give the
    same bits with scalar, AVX2 and AVX-512 code."""
    results = run_at_levels(LEVELS_CHILD.replace("{tests!r}", repr(os.path.dirname(os.path.abspath(__file__)))))
    assert results[0]["n"] == results[2]["n"] == 75
    assert results[0] == results[1] == results[2]


def test_second_order_steps_beat_first_order_on_ijcnn1(shared_data):
    # the first 5,000 rows of ijcnn1 (file order), one width, the same 400 landmarks' worth of model
    X, y = ok.load_libsvm(shared_data.plain("ijcnn1"), n_features=22)
    X, y = X[:5000], y[:5000]
    kons = ok.run_online(ok.KONS(gamma=2.0, alpha=0.01, eta=0.3, budget=400, restart=False), X, y).mistake_rate  # 1.54 %
    nogd = ok.run_online(ok.NOGD(gamma=2.0, budget=400, preset="paper"), X, y).mistake_rate   # measured 9.64 %
    bpas = ok.run_online(ok.BPAs(gamma=2.0, budget=400, preset="paper"), X, y).mistake_rate   # measured 8.62 %
    assert kons < 0.75 * min(nogd, bpas), (kons, nogd, bpas)


def test_bad_parameters_are_refused():
    X, y, _ = _data(n=30)
    for bad in (dict(alpha=0.0), dict(eta=-1.0), dict(mu=0.0), dict(oversample=float("nan")), dict(budget=0),
                dict(restart="yes")):
        with pytest.raises(ValueError):
            ok.KONS(**bad).fit(X, y)
