"""LASVM on a budget: the compiled learner against the NumPy oracle (tests/reference_lasvm.py),
the dual's invariants, the kernel-row cache's invisibility and LASVM's accuracy on ijcnn1."""
import numpy as np
import pytest

import onlinekern as ok
from reference_lasvm import LASVMRef


def _data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.4 * X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _rbf(A, B, gamma):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize("budget, c", [(10_000, 10.0), (40, 10.0), (25, 1.0), (2, 100.0)])
def test_matches_the_numpy_oracle(budget, c):
    X, y = _data()
    est = ok.LASVM(gamma=0.7, c=c, budget=budget, preset="paper", n_threads=1)
    res = ok.run_online(est, X, y, keep_scores=True)
    ref = LASVMRef(X.shape[1], 0.7, c, budget)
    scores = np.array([ref.step(X[t], y[t]) for t in range(len(y))])
    np.testing.assert_allclose(res.scores, scores, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(est.support_vectors_, ref.X)
    np.testing.assert_allclose(est.dual_coef_, ref.a, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(est.core_.gradients, ref.g, rtol=1e-9, atol=1e-9)
    assert est.intercept_ == pytest.approx(ref.b, abs=1e-9)
    assert res.n_mistakes == int(np.sum(scores * y <= 0))
    assert est.n_support_ <= budget


@pytest.mark.parametrize("budget", [10_000, 60])
def test_the_dual_stays_consistent(budget):
    X, y = _data(n=800, seed=2)
    C = 5.0
    est = ok.LASVM(gamma=0.5, c=C, budget=budget, preset="paper").fit(X, y)
    S, a, g = est.support_vectors_, est.dual_coef_, est.core_.gradients
    ys = y[[int(np.flatnonzero((X == s).all(1))[0]) for s in S]]
    # the box, the gradients of the expansion kept, the decision function
    assert np.all(a * ys >= -1e-12) and np.all(a * ys <= C + 1e-12)
    np.testing.assert_allclose(g, ys - _rbf(S, S, 0.5) @ a, atol=1e-9)
    np.testing.assert_allclose(est.decision_function(X[:50]), _rbf(X[:50], S, 0.5) @ a + est.intercept_, atol=1e-9)
    if budget > len(y):                 # no removal of a non-zero coefficient: sum alpha = 0
        assert abs(a.sum()) < 1e-9
    else:
        assert est.n_support_ == budget


def test_results_do_not_depend_on_the_row_cache_or_threads():
    X, y = _data(n=700, seed=4)
    runs = []
    for cache_rows, threads in [(2, 1), (3, 1), (32, 1), (32, 2)]:
        est = ok.LASVM(gamma=0.6, budget=50, cache_rows=cache_rows, preset="paper", n_threads=threads)
        res = ok.run_online(est, X, y, keep_scores=True)
        runs.append((res.scores.tobytes(), est.dual_coef_.tobytes(), est.core_.gradients.tobytes()))
        if cache_rows == 32:
            assert 0 < est.core_.n_hits < est.core_.n_rows
    assert all(r == runs[0] for r in runs[1:])


def test_budgeted_lasvm_beats_first_order_learners_on_ijcnn1(shared_data):
    # the first 5,000 rows of ijcnn1 (file order), one width for all; LASVM is the paper's
    # online SVM, the others the first-order budgeted learners at the same budget
    X, y = ok.load_libsvm(shared_data.plain("ijcnn1"), n_features=22)
    X, y = X[:5000], y[:5000]
    lasvm = ok.run_online(ok.LASVM(gamma=4.0, budget=500, preset="paper"), X, y).mistake_rate   # measured 1.34 %
    bpas = ok.run_online(ok.BPAs(gamma=4.0, budget=500, preset="paper"), X, y).mistake_rate     # measured 6.36 %
    nogd = ok.run_online(ok.NOGD(gamma=4.0, budget=500, preset="paper"), X, y).mistake_rate     # measured 9.64 %
    assert lasvm < 0.5 * min(bpas, nogd)


def test_only_binary_and_bad_parameters_are_refused():
    X, y = _data(n=30)
    with pytest.raises(ValueError):
        ok.LASVM().fit(X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0).astype(int))
    for bad in (dict(c=0.0), dict(tau=-1.0), dict(cache_rows=1), dict(budget=1), dict(c=float("nan"))):
        with pytest.raises(ValueError):
            ok.LASVM(**bad).fit(X, y)
