"""RRF (§3.12) against the NumPy oracle of tests/reference_rrf.py, finite-difference checks of
the compiled gradients (§5 "Gradient checks"), §5.3 (eta_gamma = 0 is FOGD), the overflow guard
of the log-bandwidths, model files, pickling, partial_fit chunking, seeds and threads."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern.experiments.grids import subset_indices
from onlinekern.experiments.runner import mean_online_loss
from onlinekern.experiments.tuning import tune
from onlinekern.learners.rrf import RHO_RANGE, RRFCore

import reference as ref
import reference_rrf as rref
from streams import encode, make_X, online, score_f

# vectorised cos/sin differ from numpy's by a few ulp; 200 coupled (w, rho) updates amplify that
RTOL, ATOL = 1e-9, 1e-11

CASES = [("binary", "hinge"), ("binary", "logistic"), ("multiclass", "hinge"),
         ("multiclass", "logistic"), ("regression", "squared"), ("regression", "absolute"),
         ("regression", "epsilon-insensitive")]


# --- synthetic data (fixed seeds) -----------------------------------------------------------------

def make_data(task, T=200, d=5, seed=0):
    X = make_X(T, d, seed)
    rng = np.random.default_rng(seed + 1000)
    if task == "binary":
        s = X[:, 0] * X[:, 1] + 0.7 * np.sin(2 * X[:, 2]) + 0.3 * rng.normal(size=T)
        y = np.where(s > 0, 7, 3)                   # raw labels {3, 7}: 3 -> -1, 7 -> +1
    elif task == "multiclass":
        s = np.stack([X[:, 0] + X[:, 1] ** 2 - 0.5, -X[:, 0] + 0.5 * X[:, 2], X[:, 3] - X[:, 1]], 1)
        y = np.array([10, 20, 30])[np.argmax(s + 0.3 * rng.normal(size=s.shape), axis=1)]
    else:
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=T)
    return X, y


def check_online(res, scores, ref_scores, ye, task):
    np.testing.assert_allclose(scores, ref_scores, rtol=RTOL, atol=ATOL)
    if task == "regression":
        assert res.rmse == pytest.approx(np.sqrt(np.mean((ye - ref_scores) ** 2)), rel=1e-9)
    else:
        m_ref = np.array([ref.mistake(task, f, yy) for f, yy in zip(ref_scores, ye)])
        m_got = np.array([ref.mistake(task, f, yy) for f, yy in zip(scores, ye)])
        np.testing.assert_array_equal(m_got, m_ref)
        assert res.n_mistakes == m_ref.sum()


# --- the learner against the oracle --------------------------------------------------------------

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("lam,init", [(0.0, 0.0), (0.02, 0.3)])
@pytest.mark.parametrize("task,loss", CASES)
def test_rrf_vs_oracle(task, loss, lam, init, sparse):
    X, y = make_data(task, seed=1)
    ye = encode(y, task)
    g0, D, seed, eta, eg = 0.35, 24, 7, 0.4, 0.05
    rs, w, rho, clips = rref.ref_rrf(X, ye, task, g0, D, eta=eta, eta_rho=eg, lam=lam, loss_name=loss,
                                     epsilon=0.15, n_classes=3, seed=seed, init=init)
    rho0 = 0.5 * np.log(2 * g0)
    assert np.max(np.abs(rho - rho0)) > 1e-2      # the log-bandwidths really moved
    assert clips == 0
    p = dict(n_components=D, gamma=g0, eta=eta, eta_gamma=eg, lam=lam, init=init, loss=loss,
             epsilon=0.15, seed=seed, preset="paper")     # the oracle: the spec's rule, raw targets
    Xin = sp.csr_matrix(X) if sparse else X
    res, scores = online(ok.RRF(**p), Xin, y)
    check_online(res, scores, rs, ye, task)
    learner = ok.RRF(**p).fit(Xin, y)
    np.testing.assert_allclose(learner.coef_, w, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(learner.log_bandwidth_, rho, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(learner.bandwidth_, np.exp(2 * rho) / 2, rtol=RTOL)
    assert learner.n_rho_clips_ == 0
    np.testing.assert_array_equal(learner.feature_map_.E, ref.fourier_E(seed, 5, D))
    Xq = make_X(25, 5, 96)
    Zq = rref.rrf_z(Xq, ref.fourier_E(seed, 5, D), rho)
    expected = Zq @ w.T if task == "multiclass" else Zq @ w
    np.testing.assert_allclose(score_f(learner, Xq), expected, rtol=RTOL, atol=ATOL)
    Zl = learner.transform(sp.csr_matrix(Xq) if sparse else Xq)
    np.testing.assert_allclose(Zl, Zq, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(Zl @ (w.T if task == "multiclass" else w), score_f(learner, Xq),
                               rtol=1e-12, atol=1e-13)


def test_rrf_paper_defaults_vs_oracle():
    """The paper preset is the spec's defaults: D = 100, eta = 0.3, eta_gamma = 1e-4, lam = 0,
    g0 = 0.5 (rho = 0), w0 = 0, hinge; and the same with init='reference' (0.01 sqrt(D) randn
    from stream INIT)."""
    X, y = make_data("binary", seed=2)
    ye = encode(y, "binary")
    learner = ok.RRF(preset="paper")
    assert (learner.lam, learner.init, learner.loss) == (0.0, 0.0, "hinge")
    assert (learner.gamma, learner.eta, learner.eta_gamma, learner.n_components) == ("auto",) * 4
    assert ok.RRF.paper_defaults == {"gamma": 0.5, "eta_gamma": 1e-4, "eta": 0.3, "n_components": 100}
    rs, w, rho, _ = rref.ref_rrf(X, ye, "binary", 0.5, 100)
    res, scores = online(learner, X, y)
    check_online(res, scores, rs, ye, "binary")
    assert learner.eta_ == 0.3 and learner.n_components_ == 100
    rs, w, rho, _ = rref.ref_rrf(X, ye, "binary", 0.5, 100, init=0.1)
    res, scores = online(ok.RRF(init="reference", preset="paper"), X, y)
    check_online(res, scores, rs, ye, "binary")
    assert np.any(rho != 0.0)


def test_product_step_is_one_over_the_curvature_for_smooth_losses():
    """eta='auto': the papers' hinge step 0.3, times 1/L for a loss with l'' <= L < 1 (logistic 4x;
    softmax, the multiclass logistic loss, 2x); FOGD the same from its 0.4."""
    X, y = make_data("binary", seed=2)
    Xm, ym = make_data("multiclass", seed=2)
    got = [ok.RRF(loss=loss, gamma=0.5).fit(X, y).eta_ for loss in ("hinge", "logistic")]
    assert got == [0.3, 1.2]
    assert ok.FOGD(loss="squared-hinge", gamma=0.5).fit(X, y).eta_ == 0.4      # L = 2: the papers' step
    assert ok.RRF(loss="logistic", gamma=0.5).fit(Xm, ym).eta_ == 0.6
    assert ok.FOGD(loss="logistic", gamma=0.5).fit(X, y).eta_ == 1.6
    assert ok.FOGD(loss="softmax", gamma=0.5).fit(Xm, ym).eta_ == 0.8
    assert ok.FOGD(loss="logistic", gamma=0.5, preset="paper").fit(X, y).eta_ == 0.4


def test_warm_step_of_nonsmooth_regression_vs_oracle():
    """The product step of the absolute and epsilon-insensitive losses starts at the papers' 0.3
    and falls as 1/sqrt(t) to 0.1 at t = WARM_T0 (WARM_ETA); here with WARM_T0 = 50 on the core,
    against the oracle with that schedule (t = 1 takes 0.3 either way, so a paper-preset first
    step starts the run)."""
    from onlinekern.learners.rrf import WARM_ETA, WARM_T0

    X, y = make_data("regression", seed=3)
    assert len(y) > 120
    g0, D, seed, t0 = 0.35, 24, 7, 50
    sched = lambda t: 0.1 * min(3.0, max(1.0, np.sqrt(t0 / t)))
    for loss in ("absolute", "epsilon-insensitive"):
        rs, w, rho, _ = rref.ref_rrf(X, y, "regression", g0, D, eta=sched, eta_rho=0.05, loss_name=loss,
                                     epsilon=0.15, seed=seed)
        learner = ok.RRF(n_components=D, gamma=g0, eta_gamma=0.05, loss=loss, epsilon=0.15, seed=seed,
                         preset="paper").fit(X[:1], y[:1])
        learner.core_.eta, learner.core_.warm_t0, learner.core_.warm_cap = 0.1, t0, 3.0
        res = ok.run_online(learner, X[1:], y[1:], keep_scores=True, reset=False)
        np.testing.assert_allclose(res.scores, rs[1:], rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(learner.coef_, w, rtol=RTOL, atol=ATOL)
        # the product default sets the schedule on nonsmooth regression only
        fitted = ok.RRF(loss=loss, gamma=g0).fit(X, y)
        assert fitted.eta_ == WARM_ETA and fitted.core_.warm_t0 == WARM_T0 and fitted.core_.eta == pytest.approx(0.1)
    assert ok.RRF(loss="squared", gamma=g0).fit(X, y).core_.warm_t0 == 0.0
    assert ok.RRF(loss="absolute", gamma=g0, preset="paper").fit(X, y).core_.warm_t0 == 0.0
    assert ok.RRF(loss="absolute", gamma=g0, eta=0.2).fit(X, y).core_.warm_t0 == 0.0


def test_rrf_real_data_slice_vs_oracle(shared_data):
    """300 sparse rows of ijcnn1 (13 of 22 features stored per row)."""
    X, y = ok.load_libsvm(shared_data.compressed("ijcnn1"))
    X, y = X[:300], y[:300]
    ye = encode(y, "binary")
    rs, w, rho, _ = rref.ref_rrf(X.toarray(), ye, "binary", 0.5, 40, eta=0.5, eta_rho=0.02, seed=3)
    res, scores = online(ok.RRF(n_components=40, eta=0.5, eta_gamma=0.02, seed=3, preset="paper"), X, y)
    check_online(res, scores, rs, ye, "binary")


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_rrf_learned_widths_on_ijcnn1_at_the_papers_largest_step(shared_data, loss):
    """30,000 rows of ijcnn1 at the point rrf-ijcnn1-casp tunes (eta 1, g0 0.5) with the rho step
    at the IJCAI'17 grid's largest value, 1e-2: no step reaches the overflow guard, no feature's
    width collapses (a step of 3e-2 drove one to the guard's floor on the full stream,
    BENCHMARKS.md), and the learned widths pay: fewer mistakes than FOGD with the same D, eta,
    initial width, seed and order (measured 5.1-5.8 against 6.7-8.1 %)."""
    X, y = ok.load_libsvm(shared_data.compressed("ijcnn1"))
    X, y = X[:30000], y[:30000]
    for run in (0, 1):
        rrf = ok.RRF(n_components=100, loss=loss, eta=1.0, gamma=0.5, eta_gamma=1e-2, seed=run, n_threads=1)
        fogd = ok.FOGD(n_components=100, loss=loss, eta=1.0, gamma=0.5, seed=run, n_threads=1)
        r = ok.run_online(rrf, X, y, seed=0, run=run, checkpoints=None)
        f = ok.run_online(fogd, X, y, seed=0, run=run, checkpoints=None)
        assert rrf.n_rho_clips_ == 0
        rho = rrf.log_bandwidth_
        assert rho.min() > -2.0 and rho.max() < 3.0, rho
        assert r.error < f.error - 1.0, (r.error, f.error)


# --- gradients: compiled code vs central differences and vs the oracle -----------------------------

def core_at(core, w, rho):
    """A copy of ``core`` with weights w (C, 2D) and log-scales rho, through its state dict."""
    st = core.get_state()
    st["w"] = {"C": w.shape[0], "F": w.shape[1], "W": np.array(w, dtype=float), "scale": 1.0}
    st["rho"] = np.array(rho, dtype=float)
    st["feat_scale"] = np.exp(rho)
    new = RRFCore.__new__(RRFCore)
    new.set_state(st)
    return new


def gradient_point(task, loss, seed):
    """A core, an example and parameters away from every kink (hinge margin 1, r = 0 of l1,
    |r| = eps, ties for the runner-up)."""
    rng = np.random.default_rng(seed)
    d, D, C = 5, 8, 3
    X, y = make_data(task, T=10, d=d, seed=seed)
    learner = ok.RRF(n_components=D, gamma=0.4, lam=0.03, loss=loss, epsilon=0.1, seed=seed)
    learner.partial_fit(X, y, **({} if task == "regression" else {"classes": np.unique(y)}))
    core = learner.core_
    E = core.fmap.E
    x = np.array([0.7, -1.2, 0.0, 0.4, 1.5])          # one zero: its rho gradient is exactly 0
    for _ in range(1000):
        w = rng.normal(scale=0.4, size=(C if task == "multiclass" else 1, 2 * D))
        rho = 0.5 * np.log(0.8) + rng.normal(scale=0.3, size=d)
        yy = {"binary": 1.0, "multiclass": 1, "regression": 0.3}[task]
        _, _, _, f = rref.rrf_gradients(x, yy, task, w, rho, E, 0.03, loss, 0.1)
        if task == "binary":
            ok_point = yy * f[0] < 0.9
        elif task == "multiclass":
            r = ref.runner_up(f, yy)
            third = [c for c in range(C) if c not in (yy, r)][0]
            ok_point = f[yy] - f[r] < 0.9 and f[r] - f[third] > 1e-2
        else:
            res = abs(f[0] - yy)
            ok_point = res > 0.1 + 1e-2 if loss == "epsilon-insensitive" else res > 1e-2
        if ok_point:
            return core, x, yy, w, rho
    raise AssertionError("no point away from the kinks")


@pytest.mark.parametrize("task,loss", CASES)
def test_gradients_finite_differences(task, loss):
    """§5: central differences, step 1e-6, relative tolerance 1e-5, of J = l + lam/2 ||w||^2
    with respect to w and rho (multiclass: runner-up fixed, the point keeps it unique).  The
    absolute floor 1e-8 (1 + |J|) covers the rounding of J divided by 2h (~1e-10 |J|)."""
    for seed in (0, 1):
        core, x, yy, w, rho = gradient_point(task, loss, seed)
        c0 = core_at(core, w, rho)
        J, gw, gr = c0.py_gradients(x, yy)
        # the compiled gradients equal the oracle's
        J_ref, gw_ref, gr_ref, _ = rref.rrf_gradients(x, yy, task, w, rho, c0.fmap.E, 0.03, loss, 0.1)
        assert J == pytest.approx(J_ref, rel=1e-12)
        np.testing.assert_allclose(gw, gw_ref, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gr, gr_ref, rtol=1e-10, atol=1e-14)
        assert gr[2] == 0.0 and np.all(gr[[0, 1, 3, 4]] != 0.0)
        h = 1e-6
        fd_w = np.zeros_like(w)
        for i in np.ndindex(w.shape):
            wp, wm = w.copy(), w.copy()
            wp[i] += h
            wm[i] -= h
            fd_w[i] = (core_at(core, wp, rho).py_gradients(x, yy)[0]
                       - core_at(core, wm, rho).py_gradients(x, yy)[0]) / (2 * h)
        fd_r = np.zeros_like(rho)
        for n in range(len(rho)):
            rp, rm = rho.copy(), rho.copy()
            rp[n] += h
            rm[n] -= h
            fd_r[n] = (core_at(core, w, rp).py_gradients(x, yy)[0]
                       - core_at(core, w, rm).py_gradients(x, yy)[0]) / (2 * h)
        atol = 1e-8 * (1 + abs(J))
        np.testing.assert_allclose(gw, fd_w, rtol=1e-5, atol=atol)
        np.testing.assert_allclose(gr, fd_r, rtol=1e-5, atol=atol)
        assert np.max(np.abs(gr)) > 1e-3            # a real check, not 0 = 0


def test_py_gradients_leaves_model_unchanged():
    X, y = make_data("binary", seed=3)
    learner = ok.RRF(n_components=10, eta_gamma=0.05, init=0.2).fit(X, y)
    before = (learner.coef_.copy(), learner.log_bandwidth_.copy())
    J, gw, gr = learner.core_.py_gradients(X[0], 1.0)
    J2, gw2, gr2 = learner.core_.py_gradients(X[0], 1.0)
    assert J == J2
    np.testing.assert_array_equal(gr, gr2)           # the accumulator was cleared
    np.testing.assert_array_equal(learner.coef_, before[0])
    np.testing.assert_array_equal(learner.log_bandwidth_, before[1])


# --- §5.3: eta_gamma = 0 is FOGD -----------------------------------------------------------------

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("task,g0,lam", [("binary", 0.5, 0.0), ("binary", 0.3, 0.01),
                                         ("multiclass", 0.7, 0.02)])
def test_eta_gamma_zero_is_fogd(task, g0, lam, sparse):
    """§5.3: same E (FEATURES stream), g = g0, eta, lambda, hinge, w0 = 0: bit-identical."""
    X, y = make_data(task, seed=4)
    Xin = sp.csr_matrix(X) if sparse else X
    p = dict(n_components=30, gamma=g0, eta=0.35, lam=lam, loss="hinge", seed=5)
    r1, s1 = online(ok.RRF(eta_gamma=0.0, **p), Xin, y)
    r2, s2 = online(ok.FOGD(**p), Xin, y)
    np.testing.assert_array_equal(s1, s2)
    assert r1.n_mistakes == r2.n_mistakes
    a = ok.RRF(eta_gamma=0.0, **p).fit(Xin, y)
    b = ok.FOGD(**p).fit(Xin, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.log_bandwidth_, np.full(5, 0.5 * np.log(2 * g0)))
    Xq = make_X(20, 5, 95)
    np.testing.assert_array_equal(score_f(a, Xq), score_f(b, Xq))
    # and a non-zero eta_gamma does change the scores
    _, s3 = online(ok.RRF(eta_gamma=0.05, **p), Xin, y)
    assert not np.array_equal(s1, s3)


# --- overflow guard -----------------------------------------------------------------------------

@pytest.mark.parametrize("task,loss", [("binary", "hinge"), ("binary", "logistic"),
                                       ("multiclass", "logistic"), ("regression", "squared"),
                                       ("regression", "epsilon-insensitive")])
def test_huge_eta_gamma_stays_finite(task, loss):
    """A diverging rho step is clipped to rho_0 +- ln(1e8); scores never become NaN or inf."""
    X, y = make_data(task, T=300, seed=6)
    X = 30.0 * X                                          # large inputs make it worse
    p = dict(n_components=20, gamma=0.5, eta=0.1, eta_gamma=1e12, init="reference", loss=loss, seed=1)
    res, scores = online(ok.RRF(**p), X, y)
    assert np.all(np.isfinite(scores))
    learner = ok.RRF(**p).fit(X, y)
    rho = learner.log_bandwidth_
    assert learner.n_rho_clips_ > 0
    assert np.all(np.isfinite(rho)) and np.all(np.abs(rho - 0.0) <= RHO_RANGE)
    assert np.any(np.abs(rho) == RHO_RANGE)               # the bound was reached
    assert np.all(np.isfinite(score_f(learner, make_X(50, 5, 94) * 1e3)))
    assert np.all(np.isfinite(learner.coef_))
    # without the guard the same run overflows (the oracle with the clip removed)
    if task == "binary" and loss == "hinge":
        ye = encode(y, task)
        with np.errstate(all="ignore"):
            saved = rref.RHO_RANGE
            try:
                rref.RHO_RANGE = np.inf
                rs, _, _, _ = rref.ref_rrf(X, ye, task, 0.5, 20, eta=0.1, eta_rho=1e12, seed=1, init=0.1 * np.sqrt(20))
            finally:
                rref.RHO_RANGE = saved
        assert not np.all(np.isfinite(rs))


def test_rho_clip_interval_follows_g0():
    X, y = make_data("binary", T=100, seed=7)
    learner = ok.RRF(gamma=0.02, n_components=10, eta_gamma=1e12, init=0.5).fit(X, y)
    rho0 = 0.5 * np.log(0.04)
    rho = learner.log_bandwidth_
    assert learner.n_rho_clips_ > 0
    assert np.all(rho >= rho0 - RHO_RANGE - 1e-12) and np.all(rho <= rho0 + RHO_RANGE + 1e-12)
    g = learner.bandwidth_
    assert np.all(g >= 0.02 * 1e-16 * (1 - 1e-9)) and np.all(g <= 0.02 * 1e16 * (1 + 1e-9))


# --- first step, attributes, registry, validation ---------------------------------------------------

@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_first_example_mistake_and_rho_still(task):
    """§5.14 with w0 = 0; §3.12: with w0 = 0 the first rho-gradient is 0."""
    X, y = make_data(task, T=1, seed=8)
    learner = ok.RRF(eta_gamma=0.5, gamma=0.2)
    res, scores = online(learner, X, y, classes=np.unique(make_data(task, seed=8)[1]))
    assert np.all(scores[0] == 0.0) and res.n_mistakes == 1
    np.testing.assert_array_equal(learner.log_bandwidth_, np.full(5, 0.5 * np.log(0.4)))
    assert np.any(learner.coef_ != 0.0)


def test_bandwidth_attributes():
    X, y = make_data("regression", seed=9)
    learner = ok.RRF(loss="squared", gamma=0.5, n_components=16)
    learner.fit(X[:1], y[:1])
    np.testing.assert_array_equal(learner.log_bandwidth_, np.zeros(5))
    np.testing.assert_array_equal(learner.bandwidth_, np.full(5, 0.5))
    learner = ok.RRF(loss="squared", eta_gamma=0.05, n_components=16).fit(X, y)
    np.testing.assert_allclose(learner.bandwidth_, np.exp(2 * learner.log_bandwidth_) / 2, rtol=1e-15)
    np.testing.assert_allclose(learner.core_.feature_scale, np.exp(learner.log_bandwidth_), rtol=1e-15)
    assert learner.coef_.shape == (32,)
    assert learner.model_size_ == 32


def test_registry_names_and_losses():
    names = ok.available_learners()
    expected = {"rrf-hinge": "hinge", "rrf-logit": "logistic", "rrf-l2": "squared",
                "rrf-l1": "absolute", "rrf-eps": "epsilon-insensitive"}
    for name, loss in expected.items():
        assert names[name]["loss"] == loss
        learner = ok.make_learner(name, n_components=10)
        assert isinstance(learner, ok.RRF) and learner.loss == loss
    assert names["rrf-eps"]["tasks"] == ("regression",)
    assert names["rrf-logit"]["tasks"] == ("binary", "multiclass")
    assert not any(n in names for n in ("rrf-softmax", "rrf-huber", "rrf-sqhinge"))
    X, y = make_data("regression", T=50, seed=10)
    _, a = online(ok.make_learner("rrf-eps", n_components=10, eta_gamma=0.01), X, y)
    _, b = online(ok.RRF(n_components=10, eta_gamma=0.01, loss="epsilon-insensitive"), X, y)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [dict(loss="softmax"), dict(loss="huber"), dict(loss="squared-hinge"),
                                 dict(eta_gamma=-1.0), dict(eta_gamma=float("nan")), dict(eta=0.0),
                                 dict(init=-0.1), dict(init="gaussian"), dict(n_components=0),
                                 dict(gamma=-1.0)])
def test_invalid_parameters(bad):
    X, y = make_data("binary", T=20, seed=11)
    with pytest.raises(ValueError):
        ok.RRF(**bad).fit(X, y)


# --- seeds, chunking, pickling, model files, threads --------------------------------------------

def test_seeds():
    X, y = make_data("binary", seed=12)
    p = dict(n_components=20, eta_gamma=0.02, init="reference")
    _, a = online(ok.RRF(seed=3, **p), X, y)
    _, b = online(ok.RRF(seed=3, **p), X, y)
    _, c = online(ok.RRF(seed=4, **p), X, y)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    l1 = ok.RRF(seed=0, **p).set_params(seed=4).fit(X, y)
    l2 = ok.RRF(seed=4, **p).fit(X, y)
    np.testing.assert_array_equal(l1.coef_, l2.coef_)
    np.testing.assert_array_equal(l1.log_bandwidth_, l2.log_bandwidth_)


LEARNERS = {
    "bin": ("binary", lambda: ok.RRF(n_components=20, gamma=0.5, eta_gamma=0.03, lam=0.01, init=0.2, seed=1)),
    "mc": ("multiclass", lambda: ok.RRF(n_components=20, gamma=0.5, eta_gamma=0.03, loss="logistic")),
    "reg": ("regression", lambda: ok.RRF(n_components=20, gamma=0.5, eta_gamma=0.03, loss="absolute", init=0.1)),
    "clip": ("binary", lambda: ok.RRF(n_components=20, gamma=0.5, eta_gamma=1e9, init=0.3)),
}


def model_arrays(learner):
    return [np.asarray(learner.coef_), learner.log_bandwidth_, learner.core_.feature_scale,
            np.array([learner.n_rho_clips_, learner.n_seen_])]


@pytest.mark.parametrize("k", [1, 3, 17])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_partial_fit_chunks_equal_fit(name, k):
    task, make = LEARNERS[name]
    X, y = make_data(task, seed=13)
    full = make().fit(X, y)
    part = make()
    for i, idx in enumerate(np.array_split(np.arange(len(y)), k)):
        kw = {"classes": np.unique(y)} if task != "regression" and i == 0 else {}
        part.partial_fit(X[idx], y[idx], **kw)
    for a, b in zip(model_arrays(full), model_arrays(part)):
        np.testing.assert_array_equal(a, b)
    Xq = make_X(30, 5, 93)
    np.testing.assert_array_equal(score_f(part, Xq), score_f(full, Xq))


@pytest.mark.parametrize("how", ["pickle", "model-file"])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_round_trip_and_resume(name, how, tmp_path):
    task, make = LEARNERS[name]
    X, y = make_data(task, seed=14)
    learner = make()
    kw = {"classes": np.unique(y)} if task != "regression" else {}
    learner.partial_fit(X[:120], y[:120], **kw)
    if how == "pickle":
        clone = pickle.loads(pickle.dumps(learner))
    else:
        ok.save_model(learner, tmp_path / "m.okm")
        clone = ok.load_model(tmp_path / "m.okm")
    Xq = make_X(30, 5, 92)
    np.testing.assert_array_equal(score_f(clone, Xq), score_f(learner, Xq))
    assert clone.get_params() == learner.get_params()
    learner.partial_fit(X[120:], y[120:])
    clone.partial_fit(X[120:], y[120:])
    for a, b in zip(model_arrays(learner), model_arrays(clone)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(score_f(clone, Xq), score_f(learner, Xq))


@pytest.mark.parametrize("edit", ["rho-shape", "rho-nan", "scale-mismatch", "rho-outside",
                                  "eta-negative", "w-shape"])
def test_hand_edited_state_raises(edit):
    X, y = make_data("binary", T=40, seed=15)
    core = ok.RRF(n_components=8, eta_gamma=0.05, init=0.1).fit(X, y).core_
    st = core.get_state()
    if edit == "rho-shape":
        st["rho"] = st["rho"][:-1]
    elif edit == "rho-nan":
        st["rho"] = st["rho"].copy()
        st["rho"][0] = np.nan
    elif edit == "scale-mismatch":
        st["feat_scale"] = st["feat_scale"] * 1.5
    elif edit == "rho-outside":
        st["rho"] = st["rho"] + 2 * RHO_RANGE
        st["feat_scale"] = np.exp(st["rho"])
    elif edit == "eta-negative":
        st["eta_rho"] = -1.0
    else:
        st["w"] = dict(st["w"], F=10, W=np.zeros((1, 10)))
    with pytest.raises(ValueError):
        RRFCore.__new__(RRFCore).set_state(st)


def test_threads_identical():
    rng = np.random.default_rng(16)
    X = rng.normal(size=(3000, 8))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * rng.normal(size=3000) > 0, 1, 0)
    p = dict(n_components=64, eta_gamma=0.01, init="reference")
    _, s1 = online(ok.RRF(n_threads=1, **p), X, y)
    _, s2 = online(ok.RRF(n_threads=2, **p), X, y)
    np.testing.assert_array_equal(s1, s2)


def test_duplicate_indices_in_csr():
    """A CSR row with a repeated column (not summed) is the same input as the summed row."""
    X, y = make_data("binary", T=60, seed=17)
    Xs = sp.csr_matrix(X)
    data, ind, ptr = [], [], [0]
    for i in range(Xs.shape[0]):
        row = Xs.getrow(i)
        for j, v in zip(row.indices, row.data):
            data += [0.25 * v, 0.75 * v]          # dyadic split: the sum is exact
            ind += [j, j]
        ptr.append(len(data))
    Xd = sp.csr_matrix((data, ind, ptr), shape=Xs.shape)
    assert not Xd.has_canonical_format
    p = dict(n_components=16, eta_gamma=0.05, init=0.2)
    _, a = online(ok.RRF(**p), Xs, y)
    _, b = online(ok.RRF(**p), Xd, y)
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-13)


# --- the tuning's tie-break: exact ties on the mistake rate are broken by the loss ----------------

@pytest.mark.parametrize("task,loss", CASES)
def test_mean_online_loss_is_the_numpy_loss_of_the_pre_update_scores(task, loss):
    X, y = make_data(task, T=150)
    eps = 0.2                                  # not the default 0.1: the learner's own epsilon counts
    learner = ok.RRF(n_components=16, loss=loss, eta=0.5, eta_gamma=0.01, epsilon=eps, seed=3, n_threads=1)
    res = ok.run_online(learner, X, y, seed=4, run=2, checkpoints=None, keep_scores=True)
    f, yo = np.asarray(res.scores), y[res.order]
    classes = np.unique(y)
    if task == "multiclass":                   # Crammer-Singer margin m = f_y - max_{c != y} f_c
        col = np.searchsorted(classes, yo)
        fy = f[np.arange(len(yo)), col]
        other = f.copy()
        other[np.arange(len(yo)), col] = -np.inf
        m = fy - other.max(axis=1)
        want = np.maximum(0, 1 - m) if loss == "hinge" else np.logaddexp(0, -m)
    elif task == "binary":
        z = np.where(yo == classes[1], 1.0, -1.0) * f
        want = np.maximum(0, 1 - z) if loss == "hinge" else np.logaddexp(0, -z)
    else:
        r = np.abs(f - yo)
        want = {"squared": 0.5 * r ** 2, "absolute": r, "epsilon-insensitive": np.maximum(0, r - eps)}[loss]
    assert mean_online_loss(learner, res, y) == pytest.approx(want.mean(), rel=1e-12)
    assert mean_online_loss(learner, ok.run_online(learner, X, y, checkpoints=None), y) is None   # no scores


def test_tuning_breaks_exact_mistake_ties_by_the_loss_not_by_grid_order():
    # With w0 = 0 and steps this small every hinge step is taken, so FOGD's scores are exactly
    # proportional to eta: the same signs, the same mistakes, different losses.
    X, y = make_data("binary", T=300)
    kw = dict(subset=0.1, seed=0, n_jobs=1, params={"n_components": 16})
    chosen = {}
    for tie_break in ("grid", "loss"):
        for etas in ([1e-6, 3e-6], [3e-6, 1e-6]):
            res = tune("fogd-hinge", X, y, grid={"eta": etas, "gamma": [0.5]}, tie_break=tie_break, **kw)
            chosen[tie_break, etas[0]] = res.best_point["eta"]
            assert ("loss" in res.table[0]) == (tie_break == "loss")
    assert chosen["grid", 1e-6] == 1e-6 and chosen["grid", 3e-6] == 3e-6     # the first in grid order
    assert chosen["loss", 1e-6] == chosen["loss", 3e-6]                     # whatever the order
    sub = subset_indices(len(y), 0.1, 0)
    per = {}
    for eta in (1e-6, 3e-6):                   # the tuning pass by hand: run 0, learner seed 0
        r = ok.run_online(ok.FOGD(n_components=16, loss="hinge", eta=eta, gamma=0.5, seed=0, n_threads=1),
                          X[sub], y[sub], seed=0, run=0, checkpoints=None, keep_scores=True)
        z = np.where(y[sub][r.order] == 7, 1.0, -1.0) * np.asarray(r.scores)
        per[eta] = (r.error, np.maximum(0, 1 - z).mean())
    assert per[1e-6][0] == per[3e-6][0]                   # an exact tie on the mistake rate
    assert chosen["loss", 1e-6] == min(per, key=lambda k: per[k][1])    # broken by the lower mean hinge loss
