"""DSG (§3.13), UDSG (§3.14) and CDSG (§3.15) against the NumPy oracles of tests/reference_dsg.py,
the §5.6 invariants, the novelty offset rule, the softmax gradient, chunking, model files and
threads."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern._core.counter_rng import normals
from onlinekern.kernels import median_gamma
from onlinekern.learners import dsg as dsg_module
from onlinekern.learners.dsg import cdsg_step_size, derivative_bound
from onlinekern.losses import Softmax

import reference as ref
import reference_dsg as rd
from test_learners import encode, make_data, make_X
from streams import score_f

RTOL, ATOL = 1e-10, 1e-12
G = 0.3                       # kernel width of the synthetic tests
SMALL = dict(batch_size=5, block_size=4, gamma=G, preset="paper")   # the oracles: raw targets

ALL = {                       # task -> losses of §2 (multiclass: softmax and C&S hinge)
    "binary": ["hinge", "logistic", "squared-hinge"],
    "multiclass": ["softmax", "hinge"],
    "regression": ["squared", "absolute", "epsilon-insensitive", "huber", "quantile"],
}
CASES = [(t, l) for t, ls in ALL.items() for l in ls]
VARIANTS = {"dsg": (ok.DSG, {}, {}),
            "udsg": (ok.UDSG, dict(new_iters=2, reuse_iters=3), dict(G=2, U=3)),
            "cdsg": (ok.CDSG, {}, {})}


def n_classes(task):
    return 3 if task == "multiclass" else 1


def online(learner, X, y, **kw):
    res = ok.run_online(learner, X, y, keep_scores=True, **kw)
    return res, np.asarray(res.scores).reshape(len(y), -1)


def check_scores(res, s, rs, ye, task):
    np.testing.assert_allclose(s, rs, rtol=RTOL, atol=ATOL)
    if task == "regression":
        assert res.rmse == pytest.approx(np.sqrt(np.mean((ye - rs[:, 0]) ** 2)), rel=1e-9)
    else:
        f = (lambda v: v[0]) if task == "binary" else (lambda v: v)
        mis = [ref.mistake(task, f(v), yy) for v, yy in zip(rs, ye)]
        assert res.n_mistakes == int(np.sum(mis))
        np.testing.assert_array_equal([ref.mistake(task, f(v), yy) for v, yy in zip(s, ye)], mis)


def run_pair(variant, task, loss, X, y, params=None, **oracle_kw):
    cls, extra, okw = VARIANTS[variant]
    p = dict(SMALL, loss=loss, **extra, **(params or {}))
    learner = cls(**p)
    res, s = online(learner, X, y)
    ye = encode(y, task)
    rs, st = rd.ref_dsg(X, ye, task, C=n_classes(task), g=G, B=p["batch_size"], F=p["block_size"],
                        loss=loss, variant=variant, return_state=True, **okw, **oracle_kw)
    return learner, res, s, rs, st, ye


# --- the three learners against the oracles -------------------------------------------------------

@pytest.mark.parametrize("task,loss", CASES)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_vs_oracle(variant, task, loss):
    X, y = make_data(task, T=200, seed=1)
    learner, res, s, rs, st, ye = run_pair(variant, task, loss, X, y)
    check_scores(res, s, rs, ye, task)
    # model after the stream: 40 iterations; blocks vs reuse as the oracle decided
    assert learner.n_iterations_ == 40 and learner.n_pending_ == 0
    assert learner.n_blocks_ == len(st["E"]) and learner.n_reused_ == st["n_reuse"]
    assert learner.model_size_ == learner.n_blocks_ * 2 * 4
    A = np.asarray(learner.coef_).reshape(len(st["A"]), -1, 8)
    np.testing.assert_allclose(A, np.array([a.T for a in st["A"]]), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(learner.core_.scalar_parts, np.array(st["beta"]), rtol=1e-9, atol=1e-12)
    Xq = make_X(20, 4, 90)
    f = score_f(learner, Xq).reshape(20, -1)
    np.testing.assert_allclose(f, rd.decision(st, Xq, G, n_classes(task)), rtol=RTOL, atol=ATOL)
    if variant != "dsg" and task != "regression":
        assert learner.n_reused_ > 0           # the reuse branch really ran


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("task,loss", [("binary", "logistic"), ("multiclass", "softmax"), ("regression", "squared")])
def test_sparse_vs_oracle_and_dense(variant, task, loss):
    """CSR rows (only the nonzeros regenerate normals) equal the oracle and the dense run bit for bit."""
    X, y = make_data(task, T=120, seed=2)
    cls, extra, okw = VARIANTS[variant]
    _, sd = online(cls(**SMALL, loss=loss, **extra), X, y)
    res, ss = online(cls(**SMALL, loss=loss, **extra), sp.csr_matrix(X), y)
    np.testing.assert_array_equal(ss, sd)
    rs = rd.ref_dsg(X, encode(y, task), task, C=n_classes(task), g=G, B=5, F=4, loss=loss, variant=variant, **okw)
    check_scores(res, ss, rs, encode(y, task), task)


def test_partial_batch_is_pending():
    X, y = make_data("binary", T=103, seed=3)
    learner = ok.DSG(**SMALL).fit(X, y)
    assert learner.n_iterations_ == 20 and learner.n_pending_ == 3 and learner.n_blocks_ == 20
    _, st = rd.ref_dsg(X, encode(y, "binary"), "binary", g=G, B=5, F=4, return_state=True)
    assert st["pending"] == 3
    np.testing.assert_allclose(score_f(learner, X[:10]), rd.decision(st, X[:10], G)[:, 0],
                               rtol=RTOL, atol=ATOL)


def test_multiclass_logistic_is_softmax():
    X, y = make_data("multiclass", T=80, seed=4)
    _, a = online(ok.DSG(**SMALL, loss="logistic"), X, y)
    _, b = online(ok.DSG(**SMALL, loss="softmax"), X, y)
    np.testing.assert_array_equal(a, b)


def test_precondition_vs_oracle():
    """DSG Matlab block preconditioner (§3.13 step 4); B > 2F so P is well conditioned."""
    X, y = make_data("regression", T=200, seed=5)
    for variant in ("dsg", "udsg"):
        cls, extra, okw = VARIANTS[variant]
        p = dict(batch_size=10, block_size=3, gamma=G, loss="squared", precondition=True,
                 preset="paper")
        res, s = online(cls(**p, **extra), X, y)
        rs = rd.ref_dsg(X, y, "regression", g=G, B=10, F=3, loss="squared", variant=variant,
                        precondition=True, **okw)
        np.testing.assert_allclose(s, rs, rtol=1e-8, atol=1e-10)
        plain = online(cls(**dict(p, precondition=False), **extra), X, y)[1]
        assert not np.allclose(plain, s)


def test_paper_gamma_is_median():
    X, y = make_data("binary", T=150, seed=6)
    learner = ok.DSG(batch_size=5, block_size=4, median_scale=0.5, seed=3, preset="paper").fit(X, y)
    assert learner.gamma_ == median_gamma(X, 3, 0.5)
    assert ok.DSG().get_params()["gamma"] == "auto" and ok.DSG.paper_defaults["gamma"] == "median"


def test_defaults_from_the_spec():
    p = ok.DSG().get_params()
    assert (p["batch_size"], p["block_size"], p["nu"], p["theta"], p["t0"]) == ("auto", "auto", 1e-5, "auto", "auto")
    paper = ok.DSG.paper_defaults
    assert (paper["batch_size"], paper["block_size"], paper["theta"], paper["t0"]) == (64, 32, 1e4, 1e4)
    X, y = make_data("binary", T=40, seed=6)
    chosen = ok.DSG(preset="paper").fit(X, y)
    assert (chosen.batch_size_, chosen.block_size_, chosen.theta_, chosen.t0_) == (64, 32, 1e4, 1e4)
    # product defaults: B = 8, F = 32, t0 = 1e4 (classification), first step 1/L (logistic: L = 1/4; squared: 1)
    chosen = ok.DSG().fit(X, y)
    assert (chosen.batch_size_, chosen.block_size_, chosen.theta_, chosen.t0_) == (8, 32, 4e4, 1e4)
    Xr, yr = make_data("regression", T=40, seed=6)
    assert ok.DSG(loss="squared", t0=100.0).fit(Xr, yr).theta_ == 100.0
    # regression: B = 8 sqrt(T / 1000) within [4, 8] when the stream's length T is known, else 8
    assert [dsg_module.regression_batch(T) for T in (None, 40, 250, 391, 500, 700, 999, 1000, 10 ** 6)] == \
        [8, 4, 4, 5, 6, 7, 8, 8, 8]
    chosen = ok.DSG(loss="squared").fit(Xr, yr)
    assert (chosen.batch_size_, chosen.block_size_) == (4, 32)
    Xl, yl = make_data("regression", T=1200, seed=6)
    assert ok.CDSG(loss="huber").fit(Xl, yl).batch_size_ == 8
    assert ok.UDSG(loss="absolute").partial_fit(Xr, yr).batch_size_ == 8
    assert ok.DSG(loss="squared", batch_size=3).fit(Xr, yr).core_.B == 3
    assert ok.UDSG(loss="squared-hinge").fit(X, y).theta_ == 5e3
    assert ok.UDSG().get_params()["new_iters"] == 1 and ok.UDSG().get_params()["reuse_iters"] == 1
    assert ok.CDSG().get_params()["lipschitz_m"] is None and ok.CDSG().get_params()["sigma_var"] == 1.0


# --- §5.6 invariants --------------------------------------------------------------------------------

def cache_limit(monkeypatch, n_features, block_size, blocks):
    """store_omega='auto' caches only the first ``blocks`` blocks from here on."""
    monkeypatch.setattr(dsg_module, "OMEGA_CACHE_BYTES", n_features * block_size * 8 * blocks)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("store", [True, "auto", "partial"])
def test_store_omega_bit_identical(variant, store, monkeypatch):
    """Caching every block (True), the default ('auto': all of them fit here) or only the first 7
    (the rest regenerated) give the bits of regenerating every block (False)."""
    X, y = make_data("multiclass", T=150, seed=7)
    cls, extra, _ = VARIANTS[variant]
    _, a = online(cls(**SMALL, loss="softmax", store_omega=False, **extra), X, y)
    la = cls(**SMALL, loss="softmax", store_omega=False, **extra).fit(X, y)
    if store == "partial":
        cache_limit(monkeypatch, X.shape[1], SMALL["block_size"], 7)
    kw = dict(store_omega="auto" if store == "partial" else store)
    learner = cls(**SMALL, loss="softmax", **kw, **extra)
    res, b = online(learner, X, y)
    expect = {"partial": 7, True: dsg_module.ALL_BLOCKS,
              "auto": dsg_module.OMEGA_CACHE_BYTES // (X.shape[1] * SMALL["block_size"] * 8)}[store]
    assert learner.core_.cache_blocks == expect
    assert learner.core_.m > 7 and learner.core_.store_omega
    lb = cls(**SMALL, loss="softmax", **kw, **extra).fit(X, y)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(la.coef_, lb.coef_)
    Xq = make_X(40, 4, 89)
    np.testing.assert_array_equal(score_f(la, Xq), score_f(lb, Xq))
    np.testing.assert_array_equal(score_f(lb, sp.csr_matrix(Xq)), score_f(lb, Xq))
    # a saved model caches as many blocks as it did, and goes on learning the same bits
    restored = pickle.loads(pickle.dumps(lb))
    assert restored.core_.cache_blocks == lb.core_.cache_blocks
    Xn, yn = make_data("multiclass", T=60, seed=8)
    np.testing.assert_array_equal(restored.partial_fit(Xn, yn).core_.coefficients,
                                  la.partial_fit(Xn, yn).core_.coefficients)


def test_store_omega_auto_caches_what_fits():
    """'auto' caches blocks while d F doubles each fit in OMEGA_CACHE_BYTES; True all, False none."""
    X, y = make_data("binary", T=40, seed=3)
    d, F = X.shape[1], 16
    auto = ok.DSG(block_size=F, batch_size=4).fit(X, y)
    assert auto.core_.cache_blocks == dsg_module.OMEGA_CACHE_BYTES // (d * F * 8)
    assert ok.DSG(block_size=F, batch_size=4, store_omega=True).fit(X, y).core_.cache_blocks >= 2 ** 62
    none = ok.DSG(block_size=F, batch_size=4, store_omega=False).fit(X, y)
    assert none.core_.cache_blocks == 0 and not none.core_.store_omega
    # 12.8 MB per block of d rows: sized by d; 128 MB: past the budget, so sized by the columns
    # present (2), as the compact copy of the data would be
    for d, blocks in ((10 ** 5, 5), (10 ** 6, dsg_module.OMEGA_CACHE_BYTES // (2 * F * 8))):
        wide = ok.DSG(block_size=F, batch_size=4).fit(sp.csr_matrix((np.ones(2), ([0, 1], [0, d - 1])),
                                                                   shape=(2, d)), [1, -1])
        assert wide.core_.cache_blocks == blocks and wide.core_.store_omega == (blocks > 0)


@pytest.mark.parametrize("block_size, T, loss", [(1, 2600, "logistic"), (3, 400, "hinge"), (2100, 30, "hinge")])
def test_store_omega_bit_identical_over_runs_of_live_blocks(block_size, T, loss):
    """The cached path projects runs of consecutive live blocks (at most 2048 features each) in one
    piece: runs cut by dead blocks (hinge batches without a violation), by the run length (2600
    one-feature blocks) and single blocks wider than a run give the regenerated path's bits."""
    X, y = make_data("binary", T=T, seed=11)
    p = dict(batch_size=1, block_size=block_size, gamma=G, loss=loss, theta=2.0, t0=1.0)
    _, a = online(ok.DSG(store_omega=False, **p), X, y)
    learner = ok.DSG(store_omega=True, **p)
    _, b = online(learner, X, y)
    live = np.abs(learner.coef_).reshape(learner.core_.m, -1).max(axis=1) > 0
    assert live.all() if loss == "logistic" else (live.any() and not live.all())
    np.testing.assert_array_equal(a, b)


def test_one_block_is_fogd_style_z1_weights():
    """T = B: A_1 = -gamma_1 (1/B) sum_b z_1(x_b) g_b^T with g_b = l'(0, y_b), E_1 from the counter RNG."""
    B, F, d = 7, 5, 4
    X, y = make_data("binary", T=B, seed=8)
    learner = ok.DSG(batch_size=B, block_size=F, gamma=G, loss="logistic", theta=1e4, seed=11).fit(X, y)
    E1 = normals(11, 2, 1, (d, F))
    np.testing.assert_array_equal(learner.core_.block_E(1), E1)
    Z = rd.z_block(X, E1, G)
    ye = encode(y, "binary")
    gb = np.array([ref.dloss("logistic", 0.0, v) for v in ye])
    gam1 = 1e4 / (1 + 1e4)
    np.testing.assert_allclose(learner.coef_[0], -gam1 * Z.T @ gb / B, rtol=1e-12, atol=1e-15)
    assert learner.n_blocks_ == 1 and learner.model_size_ == 2 * F


@pytest.mark.parametrize("task,loss", [("binary", "hinge"), ("multiclass", "softmax"), ("regression", "huber")])
def test_udsg_without_reuse_is_dsg(task, loss):
    X, y = make_data(task, T=150, seed=9)
    _, a = online(ok.DSG(**SMALL, loss=loss), X, y)
    la = ok.UDSG(**SMALL, loss=loss, new_iters=3, reuse_iters=0)
    _, b = online(la, X, y)
    np.testing.assert_array_equal(a, b)
    assert la.n_reused_ == 0


@pytest.mark.parametrize("task,loss", [("binary", "logistic"), ("multiclass", "softmax"), ("regression", "squared")])
def test_cdsg_huge_sigma_is_dsg(task, loss):
    X, y = make_data(task, T=150, seed=10)
    _, a = online(ok.DSG(**SMALL, loss=loss), X, y)
    lc = ok.CDSG(**SMALL, loss=loss, sigma_var=1e12)
    _, b = online(lc, X, y)
    np.testing.assert_array_equal(a, b)
    assert lc.n_reused_ == 0


def _q(s, a, b, c, v, gam):
    return 2 * (a + v) * s * s - 4 * b * s + (c - gam * gam * a)


def test_cdsg_step_solves_eq9():
    """§5.6: s_k solves the quadratic with equality and every s in [s_lo, s_k] satisfies eq. (9)."""
    rng = np.random.default_rng(12)
    n_pos = 0
    for trial in range(400):
        C = 1 + trial % 3
        gbar = rng.normal(size=C) * rng.choice([0.01, 1.0, 10.0])
        beta = rng.normal(size=C) * rng.choice([0.1, 1.0, 5.0]) + rng.uniform(0, 2) * gbar
        gam, M, sigma, B = rng.uniform(0.01, 2), rng.uniform(0.1, 3), rng.uniform(0, 3), int(rng.integers(1, 100))
        s = cdsg_step_size(beta, gbar, gam, M, sigma, B)
        a, b, c, v = gbar @ gbar, beta @ gbar, beta @ beta, (M * sigma / B) ** 2
        assert s == pytest.approx(rd.cdsg_step(beta, gbar, gam, M, sigma, B), rel=1e-9, abs=1e-12)
        lhs = lambda t: 2 * np.sum((beta - t * gbar) ** 2) + 2 * t * t * M * M * sigma * sigma / B ** 2
        rhs = c + gam * gam * a
        if s == 0.0:
            # no positive step satisfies (9): the quadratic is positive on (0, inf) or has no root
            ts = np.linspace(1e-9, 10 * (1 + abs(b) / (a + v)), 200)
            assert all(lhs(t) > rhs * (1 - 1e-12) for t in ts)
            continue
        n_pos += 1
        scale = max(4 * abs(b) * s, 2 * (a + v) * s * s, abs(c - gam * gam * a), 1e-300)
        assert abs(_q(s, a, b, c, v, gam)) <= 1e-10 * scale       # equality at s_k
        delta = b * b - 0.5 * (a + v) * (c - gam * gam * a)
        s_lo = max(0.0, (b - np.sqrt(delta)) / (a + v))
        for t in np.linspace(s_lo, s, 25):
            assert lhs(t) <= rhs * (1 + 1e-10) + 1e-14             # eq. (9) holds on [s_lo, s_k]
        assert lhs(s * (1 + 1e-6) + 1e-12) > rhs                   # and fails just beyond s_k
    assert n_pos > 100
    # degenerate cases: a + v = 0, negative discriminant
    assert cdsg_step_size([1.0], [0.0], 1.0, 1.0, 0.0, 10) == 0.0
    assert cdsg_step_size([5.0], [0.1], 0.1, 1.0, 1.0, 1) == 0.0


def test_cdsg_reuse_moves_the_argmax_block():
    """With nu = 0 (no decay) a reuse iteration changes exactly block k* = argmax_k s_k (lowest
    index on ties), by eta* = s_k* > gamma_i: beta_k* <- beta_k* - eta* gbar."""
    X, y = make_data("binary", T=150, seed=13)
    ye = encode(y, "binary")
    learner = ok.CDSG(**SMALL, loss="hinge", nu=0.0)
    reused = 0
    for t in range(0, 150, 5):
        if t:
            A0, b0, m0 = learner.coef_.copy(), learner.core_.scalar_parts.copy(), learner.n_blocks_
        s = online(learner, X[t:t + 5], y[t:t + 5], reset=(t == 0), classes=np.unique(y))[1][:, 0]
        if t == 0 or learner.n_blocks_ > m0:
            continue
        reused += 1
        gbar = np.array([np.mean([ref.dloss("hinge", f, v) for f, v in zip(s, ye[t:t + 5])])])
        gam = 1e4 / (learner.n_iterations_ + 1e4)
        steps = [rd.cdsg_step(b0[j], gbar, gam, 1.0, 1.0, 5) for j in range(m0)]
        k = int(np.argmax(steps))
        assert steps[k] > gam
        A1, b1 = learner.coef_, learner.core_.scalar_parts
        assert [j for j in range(m0) if not np.array_equal(A1[j], A0[j])] == [k]
        np.testing.assert_allclose(b1[k], b0[k] - steps[k] * gbar, rtol=1e-12, atol=1e-15)
    assert reused > 0


def test_cdsg_lipschitz_auto_and_fixed():
    """M = sup ||l'|| for bounded losses; for squared and squared-hinge the running max of the
    examples' ||l'|| (the paper's per-example bound, Assumption 2.3); a given M overrides both."""
    X, y = make_data("regression", T=200, seed=14)
    for loss in ("squared", "huber"):
        for M in (None, 0.5):
            learner, res, s, rs, _, _ = run_pair("cdsg", "regression", loss, X, y,
                                                 params=dict(lipschitz_m=M, huber_delta=0.3), M=M, huber_delta=0.3)
            check_scores(res, s, rs, y, "regression")
    Xb, yb = make_data("binary", T=200, seed=14)
    a = online(ok.CDSG(**SMALL, loss="hinge"), Xb, yb)[1]
    b = online(ok.CDSG(**SMALL, loss="hinge", lipschitz_m=1.0), Xb, yb)[1]
    np.testing.assert_array_equal(a, b)
    Xm, ym = make_data("multiclass", T=200, seed=14)
    a = online(ok.CDSG(**SMALL, loss="softmax"), Xm, ym)[1]
    b = online(ok.CDSG(**SMALL, loss="softmax", lipschitz_m=np.sqrt(2.0)), Xm, ym)[1]
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("loss,multiclass,kw", [
    ("hinge", False, {}), ("logistic", False, {}), ("squared-hinge", False, {}), ("squared", False, {}),
    ("absolute", False, {}), ("epsilon-insensitive", False, {}), ("huber", False, dict(huber_delta=0.3)),
    ("quantile", False, dict(quantile=0.8)), ("softmax", True, {}), ("hinge", True, {})])
def test_derivative_bound_is_the_sup_of_the_loss_derivative(loss, multiclass, kw):
    """derivative_bound (CDSG's default M) equals sup ||l'|| over a wide grid of scores and targets,
    or is None when ||l'|| grows with the score."""
    task = "multiclass" if multiclass else ("binary" if loss in ("hinge", "logistic", "squared-hinge") else "regression")
    bound = derivative_bound(loss, multiclass, **kw)
    assert bound == rd.loss_bound(loss, task, **kw)
    fs = np.linspace(-50, 50, 2001)
    if task == "multiclass":
        rng = np.random.default_rng(3)
        norms = [np.linalg.norm(rd.grad(loss, task, f, y)) for f in rng.normal(scale=20, size=(2000, 3))
                 for y in range(3)]
    else:
        ys = (-1.0, 1.0) if task == "binary" else (-3.0, 0.0, 2.5)
        norms = [abs(rd.grad(loss, task, [f], y, **kw)[0]) for f in fs for y in ys]
    if bound is None:
        assert max(norms) > 50
    else:
        assert max(norms) <= bound * (1 + 1e-12) and max(norms) >= bound * (1 - 1e-3)


# --- novelty detection --------------------------------------------------------------------------------

def novelty_data(T=200, seed=15):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, 3))
    out = rng.random(T) < 0.1
    X[out] = X[out] * 4 + 5
    return X, np.where(out, -1, 1)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_novelty_vs_oracle(variant):
    X, y = novelty_data()
    cls, extra, okw = VARIANTS[variant]
    learner = cls(**SMALL, novelty=True, nu=0.2, **extra)
    res, s = online(learner, X, y)
    rs, st = rd.ref_dsg(X, y.astype(float), "binary", g=G, B=5, F=4, nu=0.2, novelty=True,
                        variant=variant, return_state=True, **okw)
    check_scores(res, s, rs, y.astype(float), "binary")
    assert learner.offset_ == pytest.approx(st["offset"], rel=1e-12, abs=1e-14)
    Xq = make_X(15, 3, 88)
    np.testing.assert_allclose(score_f(learner, Xq), rd.decision(st, Xq, G, novelty=True)[:, 0],
                               rtol=RTOL, atol=ATOL)


def test_novelty_offset_rule():
    """o_0 = 0; o += gamma_i (nu - fraction of the batch with f < o) (§2, averaged over the batch)."""
    X, _ = novelty_data(T=10)
    nu, B = 0.3, 5
    learner = ok.DSG(batch_size=B, block_size=4, gamma=G, novelty=True, nu=nu, theta=2.0, t0=1.0)
    learner.partial_fit(X[:B])                       # f = 0 = o: no example below the offset
    gam1 = 2.0 / (1 + 1.0)
    assert learner.offset_ == gam1 * nu
    assert np.all(learner.coef_ == 0) and learner.n_blocks_ == 1
    core = learner.core_
    scores = [core.py_step(x, 1.0)[0] for x in X[B:]]   # every score is f - o with f from block 1 (zero)
    np.testing.assert_array_equal(scores, -gam1 * nu)
    gam2 = 2.0 / (2 + 1.0)
    assert learner.offset_ == pytest.approx(gam1 * nu + gam2 * (nu - 1.0), rel=1e-15)
    assert np.any(learner.coef_[1] != 0)             # the violators gave block 2 a coefficient
    # fit without labels (all inliers); labels must be +-1
    f = ok.DSG(**SMALL, novelty=True).fit(X)
    assert list(f.classes_) == [-1, 1] and set(f.predict(X)) <= {-1, 1}
    with pytest.raises(ValueError):
        ok.DSG(**SMALL, novelty=True).fit(X, np.arange(10))
    with pytest.raises(ValueError):
        ok.DSG(**SMALL).fit(X)


# --- the softmax gradient ---------------------------------------------------------------------------

def test_softmax_block_gradient_finite_differences():
    """The first block's coefficients are -gamma_1 times the gradient, with respect to the block's
    weights, of the batch's mean softmax loss (central differences through the compiled loss)."""
    B, F, d, C = 6, 3, 4, 3
    X, y = make_data("multiclass", T=B, seed=16)
    ye = encode(y, "multiclass")
    learner = ok.DSG(batch_size=B, block_size=F, gamma=G, loss="softmax", theta=1e4, seed=5).fit(X, y)
    gam1 = 1e4 / (1 + 1e4)
    H = -learner.coef_[0] / gam1                               # (C, 2F)
    Z = rd.z_block(X, normals(5, 2, 1, (d, F)), G)            # (B, 2F)
    sm = Softmax()
    rng = np.random.default_rng(0)
    W0 = rng.normal(scale=0.3, size=(C, 2 * F))                # a point away from 0 too

    def batch_loss(W):
        return np.mean([sm.py_loss(W @ Z[b], int(ye[b])) for b in range(B)])

    def fd(W0):
        out = np.zeros_like(W0)
        for c in range(C):
            for q in range(2 * F):
                e = np.zeros_like(W0)
                e[c, q] = 1e-6
                out[c, q] = (batch_loss(W0 + e) - batch_loss(W0 - e)) / 2e-6
        return out

    np.testing.assert_allclose(H, fd(np.zeros((C, 2 * F))), rtol=1e-5, atol=1e-9)
    grad_w0 = np.mean([np.outer(sm.py_grad(W0 @ Z[b], int(ye[b]))[1], Z[b]) for b in range(B)], axis=0)
    np.testing.assert_allclose(grad_w0, fd(W0), rtol=1e-5, atol=1e-9)


# --- chunks, files, threads, seeds ------------------------------------------------------------------

LEARNERS = {
    "dsg-logit": ("binary", lambda: ok.DSG(**SMALL)),
    "udsg-softmax": ("multiclass", lambda: ok.UDSG(**SMALL, loss="softmax", reuse_iters=2)),
    "cdsg-l2": ("regression", lambda: ok.CDSG(**SMALL, loss="squared")),
    "cdsg-novelty": ("novelty", lambda: ok.CDSG(**SMALL, novelty=True, nu=0.1)),
    "dsg-precond": ("regression", lambda: ok.DSG(**dict(SMALL, batch_size=9), loss="huber", precondition=True)),
}


def data_for(task, seed):
    if task == "novelty":
        X, y = novelty_data(T=200, seed=seed)
        return X[:, :3], y
    return make_data(task, T=200, seed=seed)


def state_arrays(learner):
    return [np.asarray(learner.coef_), np.array([learner.offset_, learner.n_pending_, learner.n_blocks_])]


@pytest.mark.parametrize("k", [1, 3, 17])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_partial_fit_chunks_equal_fit(name, k):
    task, make = LEARNERS[name]
    X, y = data_for(task, 17)
    full = make().fit(X, y)
    part = make()
    cls_kw = {} if task == "regression" else {"classes": np.unique(y)}
    for i, idx in enumerate(np.array_split(np.arange(len(y)), k)):
        part.partial_fit(X[idx], y[idx], **(cls_kw if i == 0 else {}))
    for a, b in zip(state_arrays(full), state_arrays(part)):
        np.testing.assert_array_equal(a, b)
    Xq = X[:30]
    np.testing.assert_array_equal(score_f(part, Xq), score_f(full, Xq))
    # the pre-update scores too: run_online in chunks without reset
    _, s_full = online(make(), X, y)
    chunked = make()
    pieces = []
    for i, idx in enumerate(np.array_split(np.arange(len(y)), k)):
        pieces.append(online(chunked, X[idx], y[idx], reset=(i == 0),
                             classes=np.unique(y) if task != "regression" else None)[1])
    np.testing.assert_array_equal(np.vstack(pieces), s_full)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_pickle_and_model_file_resume(name, tmp_path):
    task, make = LEARNERS[name]
    X, y = data_for(task, 18)
    learner = make()
    kw = {} if task == "regression" else {"classes": np.unique(y)}
    learner.partial_fit(X[:123], y[:123], **kw)                # leaves a partial batch pending
    assert learner.n_pending_ == 123 % learner.batch_size
    clone = pickle.loads(pickle.dumps(learner))
    ok.save_model(learner, tmp_path / "m.okm")
    loaded = ok.load_model(tmp_path / "m.okm")
    Xq = X[150:]
    for other in (clone, loaded):
        np.testing.assert_array_equal(score_f(other, Xq), score_f(learner, Xq))
        assert other.get_params() == learner.get_params()
    learner.partial_fit(X[123:], y[123:])
    for other in (clone, loaded):
        other.partial_fit(X[123:], y[123:])
        np.testing.assert_array_equal(score_f(other, Xq), score_f(learner, Xq))
        for a, b in zip(state_arrays(learner), state_arrays(other)):
            np.testing.assert_array_equal(a, b)


def test_hand_edited_state_raises():
    X, y = make_data("binary", T=53, seed=19)
    learner = ok.CDSG(**SMALL).fit(X, y)
    core = learner.core_
    st = core.get_state()
    for key, bad in [("A", st["A"][:, :, :3]), ("beta", st["beta"][:-1]), ("live", st["live"][:-1]),
                     ("n_reuse", st["n_iter"] + 1), ("scale", 0.0), ("pend_indices", st["pend_indices"] + 99),
                     ("pend_ptr", st["pend_ptr"][:1]), ("variant", 7), ("batch_size", 0)]:
        bad_state = dict(st, **{key: bad})
        with pytest.raises(ValueError):
            type(core).__new__(type(core)).set_state(bad_state)
    fresh = type(core).__new__(type(core))
    fresh.set_state(st)
    np.testing.assert_array_equal(fresh.coefficients, core.coefficients)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("store", [False, True, "partial"])
def test_threads_bit_identical(variant, store, monkeypatch):
    """1 and 2 threads give the same scores, model and predictions: the parallel paths forced with
    par_threshold = 0, and (regenerating) reached by the default threshold itself."""
    X = make_X(160, 8, 20)
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1, 0)
    Xq = make_X(50, 8, 87)
    cls, extra, _ = VARIANTS[variant]
    if store == "partial":                   # the first 5 blocks cached, the rest regenerated
        cache_limit(monkeypatch, 8, 8, 5)
    p = dict(batch_size=4, block_size=8, gamma=0.2, store_omega="auto" if store == "partial" else store, **extra)
    out = []
    for nt in (1, 2):
        learner = cls(n_threads=nt, **p)
        s1 = online(learner, X[:8], y[:8])[1]
        learner.core_.par_threshold = 0
        s2 = online(learner, X[8:], y[8:], reset=False)[1]
        out.append((np.vstack([s1, s2]), learner.coef_, score_f(learner, Xq),
                    score_f(learner, sp.csr_matrix(Xq)), learner.core_.predict_rows(Xq)[:, 0]))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(out[0][2], out[0][3])      # dense = sparse queries
    np.testing.assert_array_equal(out[0][2], out[0][4])      # block-major = per-row path
    if not store:
        l1 = cls(n_threads=1, **p).fit(X, y)
        l2 = cls(n_threads=2, **p).fit(X, y)
        assert l2.core_.work_units(8) >= l2.core_.par_threshold
        np.testing.assert_array_equal(l1.coef_, l2.coef_)
        np.testing.assert_array_equal(l1.core_.predict_rows(Xq), l2.core_.predict_rows(Xq))


def test_seeds():
    X, y = make_data("binary", T=100, seed=21)
    a = online(ok.UDSG(**SMALL, seed=4), X, y)[1]
    b = online(ok.UDSG(**SMALL, seed=4), X, y)[1]
    c = online(ok.UDSG(**SMALL, seed=5), X, y)[1]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_registry_names_and_params():
    names = ok.available_learners()
    for fam in ("dsg", "udsg", "cdsg"):
        for suffix in ("", "-hinge", "-logit", "-sqhinge", "-l2", "-l1", "-eps", "-huber", "-quantile", "-softmax"):
            assert fam + suffix in names
    learner = ok.make_learner("udsg-l2", new_iters=2, reuse_iters=1, batch_size=5, block_size=4, gamma=G,
                              preset="paper")
    assert isinstance(learner, ok.UDSG) and learner.loss == "squared"
    X, y = make_data("regression", T=60, seed=22)
    np.testing.assert_array_equal(online(learner, X, y)[1],
                                  online(ok.UDSG(new_iters=2, reuse_iters=1, loss="squared", **SMALL), X, y)[1])


@pytest.mark.parametrize("bad", [dict(batch_size=0), dict(block_size=1.5), dict(nu=-1.0), dict(theta=0.0),
                                 dict(t0=-1.0), dict(median_scale=0.0), dict(novelty="yes"),
                                 dict(store_omega=1), dict(loss="nonsense")])
def test_invalid_params(bad):
    X, y = make_data("binary", T=20, seed=23)
    with pytest.raises(ValueError):
        ok.DSG(**bad).fit(X, y)


def test_invalid_variant_params():
    X, y = make_data("binary", T=20, seed=23)
    for learner in (ok.UDSG(new_iters=0), ok.UDSG(reuse_iters=-1), ok.CDSG(lipschitz_m=0.0),
                    ok.CDSG(sigma_var=-1.0)):
        with pytest.raises(ValueError):
            learner.fit(X, y)


def test_real_data_slice_vs_oracle(shared_data):
    """a9a (sparse, d = 123): 150 rows of CDSG against the oracle."""
    X, y = ok.load_libsvm(shared_data.compressed("a9a"))[:2]
    X, y = X[:150], y[:150]
    p = dict(batch_size=6, block_size=4, gamma=0.05, loss="hinge")
    learner = ok.CDSG(**p)
    res, s = online(learner, X, y)
    ye = encode(y, "binary")
    rs = rd.ref_dsg(X, ye, "binary", g=0.05, B=6, F=4, loss="hinge", variant="cdsg")
    check_scores(res, s, rs, ye, "binary")
