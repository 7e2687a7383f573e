"""NOGD (§3.10) and DualSGD (§3.11) against the NumPy oracles of tests/reference_budget_c.py, the
§5 invariants that concern them (5.1, 5.9, 5.12, 5.14-5.16), state round trips and threads."""
import contextlib
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok

import reference as ref
import reference_budget_c as rb
from streams import encode, online, score_f

RTOL, ATOL = 1e-10, 1e-12            # exact kernel parts vs oracle
FRTOL, FATOL = 1e-9, 1e-12           # with random features (vectorised cos/sin, a few ulp)
# NOGD after the switch: LAPACK's dsyevr and numpy's eigh (dsyevd) round differently; the
# eigenvector error ~ eps/gap is amplified by Lambda^{-1/2} in M
NRTOL, NATOL = 1e-8, 1e-10

REG_LOSSES = ["squared", "absolute", "epsilon-insensitive", "huber", "quantile"]


# --- data ------------------------------------------------------------------------------------------

def make_X(T, d, seed, sparsity=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    X[rng.random((T, d)) < sparsity] = 0.0
    return X


def make_data(task, T=200, d=4, seed=0):
    X = make_X(T, d, seed)
    rng = np.random.default_rng(seed + 500)
    if task == "binary":
        s = X[:, 0] * X[:, 1] + 0.7 * np.sin(2 * X[:, 2]) + 0.3 * rng.normal(size=T)
        y = np.where(s > 0, 5, -2)
    elif task == "multiclass":
        s = np.stack([X[:, 0] + X[:, 1] ** 2 - 0.5, -X[:, 0] + 0.5 * X[:, 2], X[:, 3] - X[:, 1]], 1)
        y = np.array([1, 4, 9])[np.argmax(s + 0.3 * rng.normal(size=s.shape), axis=1)]
    else:
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=T)
    return X, y


def check_online(res, scores, ref_scores, ye, task, rtol, atol):
    assert scores.shape == np.shape(ref_scores)
    np.testing.assert_allclose(scores, ref_scores, rtol=rtol, atol=atol)
    if task == "regression":
        assert res.rmse == pytest.approx(np.sqrt(np.mean((ye - ref_scores) ** 2)), rel=1e-8)
    else:
        m_ref = np.array([ref.mistake(task, f, yy) for f, yy in zip(ref_scores, ye)])
        m = np.array([ref.mistake(task, f, yy) for f, yy in zip(scores, ye)])
        np.testing.assert_array_equal(m, m_ref)
        assert res.n_mistakes == m_ref.sum()


def task_of(loss, default):
    return "regression" if loss in REG_LOSSES else default


# --- oracle self-checks ---------------------------------------------------------------------------

def test_oracle_nystrom_full_rank_is_exact():
    """With k = B the Nystrom map reproduces the kernel expansion: w^T M k_S = alpha^T k_S."""
    X = make_X(15, 3, 1)
    alpha = np.random.default_rng(2).normal(size=(15, 2))
    M, w, lam = rb.nystrom(X, alpha, 0.4, 15)
    assert len(lam) == 15 and np.all(np.diff(lam) <= 0)
    Xq = make_X(10, 3, 3)
    K = np.array([ref.rbf(x, X, 0.4) for x in Xq])
    np.testing.assert_allclose((K @ M.T) @ w, K @ alpha, rtol=1e-9, atol=1e-12)


def test_oracle_dualsgd_without_maintenance_is_pegasos():
    for task in ("binary", "multiclass"):
        X, y = make_data(task, seed=3)
        ye = encode(y, task)
        a = rb.ref_dualsgd(X, ye, task, 0.3, 500, 5, 16, 0.05, "hinge", n_classes=3)
        s, SV, alpha = rb.ref_kernel_pegasos(X, ye, task, 0.3, 0.05, n_classes=3)
        np.testing.assert_allclose(a["scores"], s, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(a["alpha"], alpha, rtol=1e-12)


# --- NOGD ---------------------------------------------------------------------------------------------

NOGD_CASES = ([("binary", l) for l in ("hinge", "logistic", "squared-hinge")]
              + [("multiclass", l) for l in ("hinge", "logistic", "softmax")]
              + [("regression", l) for l in REG_LOSSES])


def nogd_params(task, loss, B, rank, **kw):
    p = dict(budget=B, rank=rank, gamma=0.3, eta=0.4, eta_linear=0.25, loss=loss, epsilon=0.15,
             huber_delta=0.6, quantile=0.3, preset="paper")   # the oracles: the spec's rules, raw targets
    p.update(kw)
    return p


def nogd_oracle(X, ye, task, p):
    return rb.ref_nogd(X, ye, task, p["gamma"], p["budget"], p["rank"], p["eta"], p["eta_linear"],
                       p["loss"], p["epsilon"], p["huber_delta"], p["quantile"], n_classes=3)


def kernel_pred(SV, beta, Xq, g):
    return np.array([ref.rbf(x, SV, g) @ beta for x in np.asarray(Xq)])


@pytest.mark.parametrize("rank", [6, 25])
@pytest.mark.parametrize("task,loss", NOGD_CASES)
def test_nogd_vs_oracle(task, loss, rank):
    X, y = make_data(task, seed=4)
    ye = encode(y, task)
    p = nogd_params(task, loss, 25, rank)
    o = nogd_oracle(X, ye, task, p)
    assert o["switch"] is not None and o["switch"] < 150          # both phases are exercised
    res, scores = online(ok.NOGD(**p), X, y)
    check_online(res, scores, o["scores"], ye, task, NRTOL, NATOL)
    # phase 1 exactly as kernel OGD: to the usual kernel tolerance up to the switch
    s = o["switch"]
    np.testing.assert_allclose(scores[:s], o["scores"][:s], rtol=RTOL, atol=ATOL)
    learner = ok.NOGD(**p).fit(X, y)
    core = learner.core_
    assert core.switched and core.k == len(o["M"]) and learner.model_size_ == 25
    np.testing.assert_array_equal(learner.support_vectors_, o["SV"])
    M = core.landmark_map
    np.testing.assert_allclose(M.T @ M, o["M"].T @ o["M"], rtol=NRTOL, atol=NATOL)   # sign-free
    # flat-zone losses score through beta = M^T w, kept up to date on every update
    assert core.lazy == (loss in ("hinge", "squared-hinge", "epsilon-insensitive"))
    if core.lazy:
        np.testing.assert_allclose(core.get_state()["beta"].T, M.T @ core.linear_weights.T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(learner.dual_coef_), o["beta"], rtol=NRTOL, atol=NATOL)
    Xq = make_X(30, 4, 40)
    np.testing.assert_allclose(score_f(learner, Xq), kernel_pred(o["SV"], o["beta"], Xq, 0.3),
                               rtol=NRTOL, atol=NATOL)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("task,loss", [("binary", "hinge"), ("multiclass", "hinge"), ("regression", "epsilon-insensitive")])
def test_nogd_sparse_input(task, loss, sparse):
    X, y = make_data(task, seed=5)
    ye = encode(y, task)
    p = nogd_params(task, loss, 20, 8)
    o = nogd_oracle(X, ye, task, p)
    res, scores = online(ok.NOGD(**p), sp.csr_matrix(X) if sparse else X, y)
    check_online(res, scores, o["scores"], ye, task, NRTOL, NATOL)


@pytest.mark.parametrize("switches", [True, False])
@pytest.mark.parametrize("task,loss", [("binary", "logistic"), ("multiclass", "hinge"), ("regression", "squared")])
def test_nogd_average(task, loss, switches):
    """--average: the mean of the predictors after each step; the online scores are unchanged."""
    X, y = make_data(task, seed=6)
    ye = encode(y, task)
    p = nogd_params(task, loss, 20 if switches else 400, 7, average=True)
    o = nogd_oracle(X, ye, task, p)
    assert (o["switch"] is not None) == switches
    res, scores = online(ok.NOGD(**p), X, y)
    check_online(res, scores, o["scores"], ye, task, NRTOL, NATOL)
    learner = ok.NOGD(**p).fit(X, y)
    Xq = make_X(25, 4, 41)
    np.testing.assert_allclose(score_f(learner, Xq), kernel_pred(o["SV"], o["beta_avg"], Xq, 0.3),
                               rtol=NRTOL, atol=NATOL)
    plain = ok.NOGD(**dict(p, average=False)).fit(X, y)
    np.testing.assert_allclose(score_f(plain, Xq), kernel_pred(o["SV"], o["beta"], Xq, 0.3),
                               rtol=NRTOL, atol=NATOL)


@pytest.mark.parametrize("task,loss", [("binary", "hinge"), ("binary", "logistic"), ("multiclass", "softmax"),
                                       ("regression", "epsilon-insensitive"), ("regression", "huber")])
def test_nogd_big_budget_is_ogd(task, loss):
    """§5.1: B >= T, NOGD never switches and is kernel OGD with lambda = 0, bit for bit."""
    X, y = make_data(task, seed=7)
    p = dict(gamma=0.3, eta=0.35, loss=loss)
    r1, s1 = online(ok.NOGD(budget=len(y), rank=5, **p), X, y)
    r2, s2 = online(ok.KernelOGD(lam=0.0, **p), X, y)
    np.testing.assert_array_equal(s1, s2)
    a = ok.NOGD(budget=len(y), **p).fit(X, y)
    b = ok.KernelOGD(**p).fit(X, y)
    assert not a.core_.switched
    np.testing.assert_array_equal(a.support_vectors_, b.support_vectors_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    Xq = make_X(20, 4, 42)
    np.testing.assert_array_equal(score_f(a, Xq), score_f(b, Xq))


@pytest.mark.parametrize("task,loss", [("binary", "hinge"), ("multiclass", "logistic"), ("regression", "squared")])
def test_nogd_switch_keeps_predictor_full_rank(task, loss):
    """§5.9: at the switch with k = B, w^T z(x) = alpha^T k_S(x) on the SVs (1e-8).  eta_linear is
    so small that the switching step's own phase-2 update vanishes in rounding (w = w_switch)."""
    X, y = make_data(task, seed=8)
    ye = encode(y, task)
    B = 15
    p = nogd_params(task, loss, B, B, eta_linear=1e-300)
    o = nogd_oracle(X, ye, task, p)
    s = o["switch"]
    kw = {"classes": np.unique(y)} if task != "regression" else {}
    learner = ok.NOGD(**p).partial_fit(X[:s - 1], y[:s - 1], **kw)
    assert learner.model_size_ == B and not learner.core_.switched
    before = score_f(learner, learner.support_vectors_)
    np.testing.assert_allclose(before, kernel_pred(o["SV"], o["alpha"], o["SV"], 0.3), rtol=RTOL, atol=ATOL)
    learner.partial_fit(X[s - 1:s], y[s - 1:s])
    core = learner.core_
    assert core.switched and core.k == B
    after = score_f(learner, learner.support_vectors_)
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-8 * max(1.0, np.abs(before).max()))
    # and the same for the weights themselves (sign-free: M^T w = V V^T alpha = alpha)
    np.testing.assert_allclose(np.asarray(learner.dual_coef_), o["alpha"], rtol=0, atol=1e-8)


def test_nogd_rank_shrinks_on_a_singular_kernel_matrix():
    """Three distinct points repeated: K has rank 3, so only 3 eigenvalues exceed 1e-12 lambda_1."""
    base = make_X(3, 4, 9, sparsity=0.0)
    X = base[np.arange(120) % 3]
    y = np.where(np.arange(120) % 3 == 1, 1, 0) ^ (np.arange(120) % 7 == 0)
    ye = encode(y, "binary")
    p = nogd_params("binary", "hinge", 10, 10)
    o = nogd_oracle(X, ye, "binary", p)
    assert o["switch"] is not None and len(o["M"]) == 3
    learner = ok.NOGD(**p)
    res, scores = online(learner, X, y)
    assert learner.core_.k == 3 and learner.core_.landmark_map.shape == (3, 10)
    check_online(res, scores, o["scores"], ye, "binary", NRTOL, NATOL)


def test_nogd_rank_capped_at_budget():
    X, y = make_data("binary", seed=10)
    learner = ok.NOGD(budget=12, rank=50, gamma=0.3).fit(X, y)
    assert learner.core_.kcap == 12 and learner.core_.k <= 12


# --- DualSGD ----------------------------------------------------------------------------------------

DUAL_CASES = ([("binary", l) for l in ("hinge", "logistic")] + [("multiclass", l) for l in ("hinge", "logistic")]
              + [("regression", l) for l in ("squared", "absolute", "epsilon-insensitive")])


def dual_params(loss, **kw):
    p = dict(budget=20, k_merge=6, n_components=24, gamma=0.3, lam=0.02, loss=loss, epsilon=0.15, seed=3,
             preset="paper")
    p.update(kw)
    return p


def dual_oracle(X, ye, task, p):
    return rb.ref_dualsgd(X, ye, task, p["gamma"], p["budget"], p["k_merge"], p["n_components"], p["lam"],
                          p["loss"], p["epsilon"], p.get("maintenance", "k-merging"), n_classes=3, seed=p["seed"])


def check_dual_model(learner, o, p, rtol=FRTOL, atol=FATOL):
    order = learner.core_.sv.insertion_order
    np.testing.assert_array_equal(np.asarray(learner.support_vectors_)[order], o["SV"])
    np.testing.assert_allclose(np.asarray(learner.dual_coef_)[order], o["alpha"], rtol=1e-12, atol=1e-14)
    W = np.asarray(learner.coef_)
    np.testing.assert_allclose(W.T if W.ndim == 2 else W, o["W"], rtol=rtol, atol=atol)
    assert learner.core_.n_merged == o["merged"]
    Xq = make_X(25, 4, 43)
    np.testing.assert_allclose(score_f(learner, Xq), rb.dualsgd_decision(o, Xq, p["gamma"], p["seed"],
                               p["n_components"]), rtol=rtol, atol=atol)


@pytest.mark.parametrize("maintenance", ["k-merging", "removal"])
@pytest.mark.parametrize("task,loss", DUAL_CASES)
def test_dualsgd_vs_oracle(task, loss, maintenance):
    X, y = make_data(task, seed=11)
    ye = encode(y, task)
    p = dual_params(loss, maintenance=maintenance)
    o = dual_oracle(X, ye, task, p)
    assert len(o["removed"]) >= 2 * p["k_merge"]                    # maintenance really ran
    assert o["merged"] == (len(o["removed"]) if maintenance == "k-merging" else 0)
    res, scores = online(ok.DualSGD(**p), X, y)
    check_online(res, scores, o["scores"], ye, task, FRTOL, FATOL)
    learner = ok.DualSGD(**p).fit(X, y)
    assert learner.model_size_ == len(o["SV"]) <= p["budget"]
    check_dual_model(learner, o, p)


@pytest.mark.parametrize("task,loss", [("binary", "logistic"), ("multiclass", "hinge"), ("regression", "absolute")])
def test_dualsgd_sparse_input(task, loss):
    X, y = make_data(task, seed=12)
    ye = encode(y, task)
    p = dual_params(loss)
    o = dual_oracle(X, ye, task, p)
    res, scores = online(ok.DualSGD(**p), sp.csr_matrix(X), y)
    check_online(res, scores, o["scores"], ye, task, FRTOL, FATOL)
    check_dual_model(ok.DualSGD(**p).fit(sp.csr_matrix(X), y), o, p)


@pytest.mark.parametrize("task", ["binary", "multiclass"])
@pytest.mark.parametrize("k_merge,D", [(1, 8), (20, 64)])
def test_dualsgd_big_budget_is_kernel_pegasos(task, k_merge, D):
    """§5.1: B >= T makes DualSGD with hinge loss kernel Pegasos with the same lambda (any k, D)."""
    X, y = make_data(task, seed=13)
    ye = encode(y, task)
    s, SV, alpha = rb.ref_kernel_pegasos(X, ye, task, 0.3, 0.05, n_classes=3)
    learner = ok.DualSGD(budget=len(y), k_merge=k_merge, n_components=D, gamma=0.3, lam=0.05, loss="hinge")
    res, scores = online(learner, X, y)
    check_online(res, scores, s, ye, task, RTOL, ATOL)
    learner = ok.DualSGD(budget=len(y), k_merge=k_merge, n_components=D, gamma=0.3, lam=0.05, loss="hinge").fit(X, y)
    np.testing.assert_array_equal(learner.support_vectors_, SV)
    np.testing.assert_allclose(learner.dual_coef_, alpha, rtol=1e-12, atol=0)
    assert not np.any(learner.coef_)


def test_dualsgd_hinge_merges_the_oldest():
    """Hinge: every SV has ||alpha_i|| = 1/(lambda t), so the tie rule makes k-merging FIFO."""
    X, y = make_data("binary", seed=14)
    learner = ok.DualSGD(**dual_params("hinge"))
    kw = {"classes": np.unique(y)}
    stamps_seen = []
    for i in range(len(y)):
        before = learner.core_.sv.get_state()["stamp"].copy() if i else np.zeros(0, dtype=np.int64)
        learner.partial_fit(X[i:i + 1], y[i:i + 1], **kw)
        after = learner.core_.sv.get_state()["stamp"]
        gone = np.setdiff1d(before, after)
        if len(gone):
            assert len(gone) == 6 and np.all(gone < np.min(np.setdiff1d(before, gone)))
            stamps_seen.append(gone)
    assert len(stamps_seen) >= 3


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_dualsgd_lambda_default(loss):
    """lam=None: 2/T when T is known (horizon, else the stream given to run_online / fit),
    1e-4 when it is not (partial_fit on a fresh model) (§3.11)."""
    X, y = make_data("binary", seed=15)
    p = dict(budget=20, k_merge=5, n_components=16, gamma=0.3, loss=loss)
    _, a = online(ok.DualSGD(**p), X, y)                    # T = 200 rows
    _, b = online(ok.DualSGD(lam=2 / 200, **p), X, y)
    np.testing.assert_array_equal(a, b)
    fresh = ok.DualSGD(**p).partial_fit(X, y, classes=np.unique(y))
    assert fresh.core_.lam == 1e-4 and fresh.horizon_ is None
    np.testing.assert_array_equal(score_f(fresh, X),
                                  score_f(ok.DualSGD(lam=1e-4, **p).fit(X, y), X))
    _, c = online(ok.DualSGD(horizon=1000, **p), X, y)
    _, d = online(ok.DualSGD(lam=0.002, **p), X, y)
    np.testing.assert_array_equal(c, d)
    _, e = online(ok.DualSGD(lam=0.5, horizon=200, **p), X, y)         # an explicit lam wins
    _, f = online(ok.DualSGD(lam=0.5, **p), X, y)
    np.testing.assert_array_equal(e, f)


def test_dualsgd_seed_decides_the_features():
    X, y = make_data("binary", seed=16)
    p = dual_params("logistic")
    _, a = online(ok.DualSGD(**p), X, y)
    _, b = online(ok.DualSGD(**p), X, y)
    _, c = online(ok.DualSGD(**dict(p, seed=4)), X, y)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(ok.DualSGD(**p).fit(X, y).feature_map_.E, ref.fourier_E(3, 4, 24))


@pytest.mark.parametrize("bad", [dict(loss="huber"), dict(loss="softmax"), dict(loss="squared-hinge"),
                                 dict(lam=0.0), dict(lam=-1.0), dict(horizon=0), dict(k_merge=0),
                                 dict(maintenance="merging"), dict(budget=0)])
def test_dualsgd_rejects_bad_parameters(bad):
    X, y = make_data("binary", T=20, seed=17)
    with pytest.raises(ValueError):
        ok.DualSGD(**bad).fit(X, y)


@pytest.mark.parametrize("bad", [dict(rank=0), dict(rank=2.5), dict(eta_linear=0.0), dict(budget=0)])
def test_nogd_rejects_bad_parameters(bad):
    X, y = make_data("binary", T=20, seed=17)
    with pytest.raises(ValueError):
        ok.NOGD(**bad).fit(X, y)


def test_registry_names():
    names = ok.available_learners()
    for n in ("nogd", "nogd-hinge", "nogd-eps", "nogd-softmax", "dualsgd", "dualsgd-hinge", "dualsgd-logit",
              "dualsgd-l2", "dualsgd-l1", "dualsgd-eps"):
        assert n in names, n
    assert "dualsgd-huber" not in names and "dualsgd-softmax" not in names
    assert ok.make_learner("dualsgd-eps").get_params()["loss"] == "epsilon-insensitive"
    assert names["dualsgd"]["loss"] == "logistic"
    defaults = ok.DualSGD().get_params()
    assert (defaults["budget"], defaults["k_merge"], defaults["n_components"], defaults["lam"]) == (100, 20, "auto", "auto")
    assert ok.DualSGD.paper_defaults["lam"] is None                # the papers' 2/T
    assert ok.DualSGD.paper_defaults["n_components"] == 200
    defaults = ok.NOGD().get_params()
    assert (defaults["budget"], defaults["rank"], defaults["eta"], defaults["eta_linear"]) == ("auto", None, "auto", "auto")
    assert (ok.NOGD.paper_defaults["budget"], ok.NOGD.paper_defaults["eta"], ok.NOGD.paper_defaults["eta_linear"]) \
        == (100, 0.2, 0.2)


@pytest.mark.parametrize("budget, rank", [(100, 20), (1000, 200), (12, 2), (2, 1), (1, 1)])
def test_nogd_default_rank_is_a_fifth_of_the_budget(budget, rank):
    """rank=None keeps round(0.2 B) eigenpairs (at least one): KOL's 20 at B = 100, LSOKL's k = 0.2."""
    X, y = make_data("binary", T=3 * budget + 10)
    learner = ok.NOGD(budget=budget, gamma=0.3).fit(X, y)
    assert learner.core_.kcap == rank
    explicit = ok.NOGD(budget=budget, rank=rank, gamma=0.3).fit(X, y)
    np.testing.assert_array_equal(score_f(learner, X), score_f(explicit, X))


# --- shared contract: budget, first mistake, chunks, round trips, threads ---------------------------

LEARNERS = {
    "nogd-bin": ("binary", lambda: ok.NOGD(budget=15, rank=6, gamma=0.3)),
    "nogd-mc-avg": ("multiclass", lambda: ok.NOGD(budget=15, rank=15, gamma=0.3, loss="logistic", average=True)),
    "nogd-reg": ("regression", lambda: ok.NOGD(budget=15, rank=5, gamma=0.3, loss="epsilon-insensitive")),
    "dualsgd-bin": ("binary", lambda: ok.DualSGD(budget=15, k_merge=4, n_components=16, gamma=0.3, lam=0.02)),
    "dualsgd-mc": ("multiclass", lambda: ok.DualSGD(budget=15, k_merge=4, n_components=16, gamma=0.3, loss="hinge",
                                                     horizon=200)),
    "dualsgd-reg": ("regression", lambda: ok.DualSGD(budget=15, k_merge=4, n_components=16, gamma=0.3, loss="squared",
                                                    lam=0.05, maintenance="removal")),
}


def first_kw(task, y):
    return {"classes": np.unique(y)} if task != "regression" else {}


def model_arrays(learner):
    out = [np.asarray(learner.support_vectors_), np.asarray(learner.dual_coef_)]
    if isinstance(learner, ok.DualSGD):
        out.append(np.asarray(learner.coef_))
    return out


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_budget_never_exceeded(name):
    """§5.12: |S| <= B after every step."""
    task, make = LEARNERS[name]
    X, y = make_data(task, T=120, seed=18)
    learner = make()
    sizes = []
    for i in range(len(y)):
        learner.partial_fit(X[i:i + 1], y[i:i + 1], **(first_kw(task, y) if i == 0 else {}))
        sizes.append(learner.model_size_)
    assert max(sizes) == learner.budget and all(s <= learner.budget for s in sizes)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_first_example_is_a_mistake(name):
    """§5.14."""
    task, make = LEARNERS[name]
    if task == "regression":
        pytest.skip("no mistakes in regression")
    X, y = make_data(task, T=10, seed=19)
    res, scores = online(make(), X, y)
    assert np.all(scores[0] == 0.0) and res.n_mistakes >= 1


@pytest.mark.parametrize("k", [2, 7])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_partial_fit_chunks_equal_fit(name, k):
    """§5.16 across chunkings (the NOGD switch lands inside a chunk or at its first row)."""
    task, make = LEARNERS[name]
    X, y = make_data(task, seed=20)
    full = make().fit(X, y)
    part = make()
    for i, idx in enumerate(np.array_split(np.arange(len(y)), k)):
        part.partial_fit(X[idx], y[idx], **(first_kw(task, y) if i == 0 else {}))
    for a, b in zip(model_arrays(full), model_arrays(part)):
        np.testing.assert_array_equal(a, b)
    Xq = make_X(30, 4, 44)
    np.testing.assert_array_equal(score_f(part, Xq), score_f(full, Xq))


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_pickle_and_model_file_round_trips(name, tmp_path):
    task, make = LEARNERS[name]
    X, y = make_data(task, seed=21)
    learner = make().partial_fit(X[:100], y[:100], **first_kw(task, y))
    clone = pickle.loads(pickle.dumps(learner))
    path = tmp_path / "m.okm"
    ok.save_model(learner, path)
    loaded = ok.load_model(path)
    Xq = make_X(30, 4, 45)
    for other in (clone, loaded):
        assert other.get_params() == learner.get_params()
        np.testing.assert_array_equal(score_f(other, Xq), score_f(learner, Xq))
    learner.partial_fit(X[100:], y[100:])
    for other in (clone, loaded):
        other.partial_fit(X[100:], y[100:])
        np.testing.assert_array_equal(score_f(other, Xq), score_f(learner, Xq))
        for a, b in zip(model_arrays(learner), model_arrays(other)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["nogd-bin", "dualsgd-mc"])
def test_hand_edited_state_raises_value_error(name):
    task, make = LEARNERS[name]
    X, y = make_data(task, seed=22)
    learner = make().fit(X, y)
    core = learner.core_
    st = core.get_state()
    edits = [("gkey", np.zeros(3))] if name.startswith("dualsgd") else [("M", np.zeros((2, 2))), ("k", 99)]
    edits.append(("loss", dict(st["loss"], multiclass=not st["loss"]["multiclass"])))
    for key, value in edits:
        bad = dict(st, **{key: value})
        with pytest.raises(ValueError):
            type(core).__new__(type(core)).set_state(bad)


@pytest.fixture(scope="module")
def wide():
    rng = np.random.default_rng(23)
    X = rng.normal(size=(700, 120))
    y = np.where(X[:, 0] + X[:, 1] * X[:, 2] + 1.5 * rng.normal(size=700) > 0, 1, 0)
    return X, y


@pytest.mark.usefixtures("force_parallel")
@pytest.mark.parametrize("kind", ["nogd", "dualsgd"])
def test_threads_bit_identical(wide, kind):
    """Two blocks of SVs x 120 features pass the work threshold of the block-parallel kernel sum
    (NOGD: SupportSet's 16384 units from 129 SVs; DualSGD: 4 x 16384 from 512 SVs)."""
    X, y = wide
    if kind == "nogd":
        X, y = X[:200], y[:200]
        make = lambda n: ok.NOGD(budget=150, rank=20, gamma=0.004, loss="logistic", n_threads=n)
    else:
        make = lambda n: ok.DualSGD(budget=600, k_merge=20, n_components=32, gamma=0.004, n_threads=n)
    l1, l2 = make(1), make(2)
    r1, s1 = online(l1, X, y)
    r2, s2 = online(l2, X, y)
    np.testing.assert_array_equal(s1, s2)
    if kind == "nogd":
        assert l1.model_size_ == 150 and l1.core_.switched
    else:
        assert l1.model_size_ > 512 and l1.core_.n_merged > 0
    for a, b in zip(model_arrays(l1), model_arrays(l2)):
        np.testing.assert_array_equal(a, b)
    Xq = make_X(50, 120, 46)
    np.testing.assert_array_equal(score_f(l1, Xq), score_f(l2, Xq))


# --- real data (small slices) -----------------------------------------------------------------------

def test_real_data_slices_vs_oracles(shared_data):
    X, y = ok.load_libsvm(shared_data.plain("ijcnn1"))
    X, y = X[:400].toarray(), y[:400]
    ye = encode(y, "binary")
    p = nogd_params("binary", "hinge", 40, 10, gamma=1.0)
    o = nogd_oracle(X, ye, "binary", p)
    res, scores = online(ok.NOGD(**p), sp.csr_matrix(X), y)
    assert o["switch"] is not None
    check_online(res, scores, o["scores"], ye, "binary", NRTOL, NATOL)
    p = dual_params("logistic", budget=40, k_merge=10, gamma=1.0, n_components=32, lam=1e-3)
    o = rb.ref_dualsgd(X, ye, "binary", 1.0, 40, 10, 32, 1e-3, "logistic", seed=3)
    res, scores = online(ok.DualSGD(**p), sp.csr_matrix(X), y)
    assert o["merged"] > 0
    check_online(res, scores, o["scores"], ye, "binary", FRTOL, FATOL)


def test_nogd_holds_blas_threads_to_n_threads_until_the_switch():
    """The switch calls LAPACK inside the compiled loop: its BLAS pool is held to n_threads."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    X, y = make_data("binary", T=60)
    learner = ok.NOGD(budget=40, gamma=0.3, n_threads=1).partial_fit(X[:10], y[:10], classes=np.unique(y))
    assert not learner.core_.switched
    n_sv = learner.core_.sv.n
    # a pass too short to fill the budget cannot switch: no limit (it would cost every partial_fit)
    assert isinstance(learner._pass_context(40 - n_sv), contextlib.nullcontext)
    with learner._pass_context(41 - n_sv):
        blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        assert blas and all(i["num_threads"] == 1 for i in blas)
    learner.partial_fit(X, y)
    assert learner.core_.switched
    assert isinstance(learner._pass_context(1000), contextlib.nullcontext)
