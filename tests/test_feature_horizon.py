"""``n_components="auto"`` of the first-order random-feature learners (FOGD, RRF, DualSGD): the
papers' D for short or unknown streams, more for a long one known in advance, bounded by the
pass's work, the same for a data set and its columns scattered into a wider space, and kept by
model files (onlinekern.params.stream_components); and the regression ``lam`` of the Pegasos-step
learners (BSGD, DualSGD) and the step offset t0 of the doubly stochastic learners, lowered for a
long regression stream known in advance (onlinekern.params.stream_lam, horizon_shrink)."""
import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern import params
from onlinekern.protocol import trivial_error

from streams import make_data

BASES = {"fogd-hinge": 400, "rrf-hinge": 100, "dualsgd-hinge": 200}


def test_rule_follows_the_horizon_within_its_bounds(monkeypatch):
    X = np.ones((10, 8))                        # dense: 8 multiply-adds per frequency
    assert params.stream_components(X, 1, None, 400) == 400         # unknown length
    assert params.stream_components(X, 1, params.FEATURE_HORIZON, 400) == 400
    assert params.stream_components(X, 1, 4 * params.FEATURE_HORIZON, 400) == 800     # sqrt(4) x
    assert params.stream_components(X, 1, 2 * params.FEATURE_HORIZON, 100) == 144     # 141.4 -> 16 k
    # the work bound: T D (8 + 6 + 4) <= FEATURE_WORK; RRF reads the nonzeros twice
    T = 1_000_000
    assert params.stream_components(X, 1, T, 400) == int(params.FEATURE_WORK // (T * 18))
    assert params.stream_components(X, 1, T, 100, reads=2) == int(params.FEATURE_WORK // (T * 26))
    assert params.stream_components(X, 10, T, 400) < params.stream_components(X, 1, T, 400)
    monkeypatch.setattr(params, "FEATURE_WORK", 1e15)
    assert params.stream_components(X, 1, T, 400) == params.FEATURE_GROWTH * 400      # the cap
    monkeypatch.setattr(params, "FEATURE_WORK", 1.0)
    assert params.stream_components(X, 1, T, 400) == 400                              # never below


def test_rule_reads_nonzeros_not_width():
    """A text-like stream (165 nonzeros per row, 500,000 rows) keeps the base D (FOGD's and RRF's);
    a compact sparse set and its columns scattered one to one into 2^22 columns get the same D."""
    rng = np.random.default_rng(0)
    wide = sp.random(50, 1 << 20, density=165 / (1 << 20), format="csr", random_state=1)
    assert params.stream_components(wide, 1, 500_000, 400) == 400
    assert params.stream_components(wide, 1, 500_000, 100, reads=2) == 100
    compact = sp.random(200, 123, density=0.11, format="csr", random_state=2)
    cols = rng.permutation(1 << 22)[:123]
    scattered = sp.csr_matrix((compact.data, cols[compact.indices], compact.indptr), shape=(200, 1 << 22))
    for T in (3_000, 32_561, 10 ** 6):
        assert params.stream_components(compact, 1, T, 400) == params.stream_components(scattered, 1, T, 400)
    assert params.stream_components(compact, 1, 32_561, 400) > 400


@pytest.mark.parametrize("name", sorted(BASES))
def test_learners_grow_D_only_for_a_known_long_stream(name):
    T = 4 * params.FEATURE_HORIZON
    X, y = make_data("binary", T=T, d=4, seed=3)
    base = BASES[name]
    grown = params.stream_components(X, 1, T, base)
    assert grown == 16 * int(2 * base / 16 + 0.5)        # sqrt(4) x base, to a multiple of 16
    fitted = ok.make_learner(name, gamma=0.5, seed=0, n_threads=1).fit(X, y)
    assert fitted.n_components_ == grown == fitted.core_.fmap.n_components
    assert fitted.chosen_params()["n_components"] == grown
    res = ok.run_online(ok.make_learner(name, gamma=0.5, seed=0, n_threads=1), X, y)
    assert res.error < 0.8 * 100 * min(np.mean(y == 3), np.mean(y == 7))
    streamed = ok.make_learner(name, gamma=0.5, seed=0, n_threads=1)
    streamed.partial_fit(X[:500], y[:500], classes=[3, 7])          # length unknown: the base D
    assert streamed.n_components_ == base == streamed.core_.fmap.n_components
    paper = ok.make_learner(name, gamma=0.5, preset="paper", seed=0, n_threads=1).fit(X, y)
    assert paper.n_components_ == base
    fixed = ok.make_learner(name, gamma=0.5, n_components=48, seed=0, n_threads=1).fit(X, y)
    assert fixed.core_.fmap.n_components == 48 and "n_components" not in fixed.resolved_params_


def test_grown_model_round_trips(tmp_path):
    T = 2 * params.FEATURE_HORIZON
    X, y = make_data("binary", T=T, d=4, seed=5)
    learner = ok.make_learner("fogd-hinge", gamma=0.5, seed=0, n_threads=1).fit(X, y)
    assert learner.n_components_ > 400
    ok.save_model(learner, tmp_path / "m.okm")
    back = ok.load_model(tmp_path / "m.okm")
    assert back.n_components_ == learner.n_components_ == back.core_.fmap.n_components
    np.testing.assert_array_equal(back.decision_function(X[:300]), learner.decision_function(X[:300]))


def test_regression_lam_falls_with_the_horizon_down_to_its_floor():
    H = params.FEATURE_HORIZON
    assert params.stream_lam(0.03, None) == 0.03                    # unknown length
    assert params.stream_lam(0.03, H) == 0.03
    assert params.stream_lam(0.03, 4 * H) == pytest.approx(0.015)   # 1 / sqrt(4)
    assert params.stream_lam(0.03, 9 * H) == pytest.approx(0.03 / params.LAM_SHRINK)
    assert params.stream_lam(0.03, 10 ** 7) == pytest.approx(0.03 / params.LAM_SHRINK)
    assert params.stream_lam(0.03, 5 * H) > params.stream_lam(0.03, 6 * H)


@pytest.mark.parametrize("name, paper_lam", [("bsgd-removal", 1e-4), ("dualsgd-eps", None)])
def test_regression_learners_lower_lam_only_for_a_known_long_stream(name, paper_lam):
    T = 4 * params.FEATURE_HORIZON
    X, y = make_data("regression", T=T, d=4, seed=7)
    kw = {"task": "regression"} if name.startswith("bsgd") else {}
    fitted = ok.make_learner(name, gamma=0.5, seed=0, n_threads=1, **kw).fit(X, y)
    assert fitted.chosen_params()["lam"] == pytest.approx(0.015)
    assert fitted.core_.lam == pytest.approx(0.015)
    res = ok.run_online(ok.make_learner(name, gamma=0.5, seed=0, n_threads=1, **kw), X, y)
    assert res.error < 0.9 * trivial_error(y, "regression")
    streamed = ok.make_learner(name, gamma=0.5, seed=0, n_threads=1, **kw)
    streamed.partial_fit(X[:500], y[:500])                          # length unknown: 0.03
    assert streamed.core_.lam == pytest.approx(0.03)
    short = ok.make_learner(name, gamma=0.5, seed=0, n_threads=1, **kw).fit(X[:3000], y[:3000])
    assert short.core_.lam == pytest.approx(0.03)
    paper = ok.make_learner(name, gamma=0.5, preset="paper", seed=0, n_threads=1, **kw).fit(X, y)
    assert paper.core_.lam == pytest.approx(2.0 / T if paper_lam is None else paper_lam)
    fixed = ok.make_learner(name, gamma=0.5, lam=0.05, seed=0, n_threads=1, **kw).fit(X, y)
    assert fixed.core_.lam == 0.05


@pytest.mark.parametrize("name", ["dsg-eps", "udsg-l2", "cdsg-huber"])
def test_dsg_regression_step_decays_only_over_a_known_long_stream(name):
    """t0 = 1e4 x 5,000 / T (at least 1e3) for a regression stream of known length T > 5,000, so
    the step theta/(i + t0) decays within the pass; 1e4 otherwise, and theta = t0 / L follows."""
    from onlinekern.learners.dsg import T0, T0_SHRINK
    H = params.FEATURE_HORIZON
    assert params.horizon_shrink(T0, None, 1.0, T0_SHRINK) == T0
    assert params.horizon_shrink(T0, 4 * H, 1.0, T0_SHRINK) == pytest.approx(T0 / 4)
    assert params.horizon_shrink(T0, 100 * H, 1.0, T0_SHRINK) == pytest.approx(T0 / T0_SHRINK)
    T = 4 * H
    X, y = make_data("regression", T=T, d=4, seed=11)
    fitted = ok.make_learner(name, gamma=0.5, seed=0, n_threads=1).fit(X, y)
    assert fitted.core_.t0 == pytest.approx(T0 / 4) == fitted.chosen_params()["t0"]
    assert fitted.core_.theta == pytest.approx(T0 / 4)         # theta = t0 / L, L = 1 for these losses
    res = ok.run_online(ok.make_learner(name, gamma=0.5, seed=0, n_threads=1), X, y)
    assert res.error < 0.9 * trivial_error(y, "regression")
    Xc, yc = make_data("binary", T=T, d=4, seed=11)
    assert ok.make_learner(name.split("-")[0] + "-logit", gamma=0.5, seed=0, n_threads=1).fit(Xc, yc).core_.t0 == T0
    streamed = ok.make_learner(name, gamma=0.5, seed=0, n_threads=1)
    streamed.partial_fit(X[:500], y[:500])                          # length unknown
    assert streamed.core_.t0 == T0
    assert ok.make_learner(name, gamma=0.5, preset="paper", seed=0, n_threads=1).fit(X, y).core_.t0 == T0
    assert ok.make_learner(name, gamma=0.5, t0=50.0, seed=0, n_threads=1).fit(X, y).core_.t0 == 50.0
