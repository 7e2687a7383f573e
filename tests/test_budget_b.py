"""BSGD (removal, merging; §3.7) and BOGD / BOGD++ (§3.8) against the NumPy oracles of
tests/reference_budget_b.py, plus the invariants §5.1 (B >= T: BOGD = OGD, BSGD = kernel
Pegasos), §5.12 (budget, BOGD++ probabilities, clipped survivors), §5.13 (golden section vs grid,
L_n >= 0), duplicates, seeds, partial_fit, pickling, model files and threads."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern.learners.bogd import bogdpp_probabilities
from onlinekern.learners.bsgd import merge_objective_value, merge_search

import reference as ref
import reference_budget_b as rb
from streams import encode, make_X, online, score_f

RTOL, ATOL = 1e-10, 1e-12
TASKS = ["binary", "multiclass", "regression"]
BSGD = {"removal": ok.BSGDRemoval, "merging": ok.BSGDMerge}
BOGD = {"uniform": ok.BOGD, "nonuniform": ok.BOGDPlusPlus}
LOSSES = {"binary": ["hinge", "logistic"], "multiclass": ["hinge", "softmax"],
          "regression": ["epsilon-insensitive", "squared"]}


# --- data (fixed seeds; same generator as tests/test_learners.py) -------------------------------------

def make_data(task, T=200, d=4, seed=0, noise=0.3):
    X = make_X(T, d, seed)
    rng = np.random.default_rng(seed + 1000)
    if task == "binary":
        s = X[:, 0] * X[:, 1] + 0.7 * np.sin(2 * X[:, 2]) + noise * rng.normal(size=T)
        y = np.where(s > 0, 7, 3)
    elif task == "multiclass":
        s = np.stack([X[:, 0] + X[:, 1] ** 2 - 0.5, -X[:, 0] + 0.5 * X[:, 2], X[:, 3] - X[:, 1]], 1)
        y = np.array([10, 20, 30])[np.argmax(s + noise * rng.normal(size=s.shape), axis=1)]
    else:
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=T)
    return X, y


def check_online(res, scores, ref_scores, ye, task):
    np.testing.assert_allclose(scores, ref_scores, rtol=RTOL, atol=ATOL)
    if task == "regression":
        assert res.rmse == pytest.approx(np.sqrt(np.mean((ye - ref_scores) ** 2)), rel=1e-9)
    else:
        m_ref = np.array([ref.mistake(task, f, yy) for f, yy in zip(ref_scores, ye)])
        m = np.array([ref.mistake(task, f, yy) for f, yy in zip(scores, ye)])
        np.testing.assert_array_equal(m, m_ref)
        assert res.n_mistakes == m_ref.sum()


def model_in_insertion_order(learner):
    order = learner.core_.sv.insertion_order
    return np.asarray(learner.support_vectors_)[order], np.asarray(learner.dual_coef_)[order]


def check_model(learner, SV, alpha, g):
    S, a = model_in_insertion_order(learner)
    assert S.shape == SV.shape
    np.testing.assert_allclose(S, SV, rtol=1e-12, atol=1e-14)        # merged points: h from pow
    np.testing.assert_allclose(a, alpha, rtol=1e-10, atol=1e-12)
    Xq = make_X(20, SV.shape[1], 99)
    expected = np.array([ref.rbf(x, SV, g) @ alpha for x in Xq]) if len(SV) else 0 * Xq[:, 0]
    np.testing.assert_allclose(score_f(learner, Xq), expected, rtol=RTOL, atol=ATOL)


def bsgd_params(task, **kw):
    p = dict(kw, preset="paper")          # the oracles implement the spec's rules on raw targets
    if task == "regression":
        p["task"] = "regression"
    return p


# --- oracle self-consistency ---------------------------------------------------------------------

@pytest.mark.parametrize("task", TASKS)
def test_oracle_bsgd_without_maintenance_is_pegasos(task):
    X, y = make_data(task, T=80, seed=1)
    ye = encode(y, task)
    s0, S0, a0 = rb.ref_pegasos(X, ye, task, 0.3, 0.02, epsilon=0.2, n_classes=3)
    for m in ("removal", "merging"):
        s, S, a = rb.ref_bsgd(X, ye, task, 0.3, 80, 0.02, m, epsilon=0.2, n_classes=3)
        np.testing.assert_array_equal(s, s0)
        np.testing.assert_array_equal(S, S0)


@pytest.mark.parametrize("task", TASKS)
def test_oracle_bogd_without_removal_is_ogd(task):
    X, y = make_data(task, T=80, seed=2)
    ye = encode(y, task)
    loss = LOSSES[task][0]
    s0, _, a0 = ref.ref_kernel_ogd(X, ye, task, 0.3, eta=0.25, lam=0.01, loss_name=loss, n_classes=3)
    s, _, a = rb.ref_bogd(X, ye, task, 0.3, 80, eta=0.25, lam=0.01, loss_name=loss, n_classes=3)
    np.testing.assert_allclose(s, s0, rtol=1e-13, atol=1e-15)


def test_oracle_pegasos_norms_are_equal():
    """Why the tie rules exist: unmerged Pegasos coefficients all have ||alpha|| = 1/(lambda t)."""
    X, y = make_data("binary", T=60, seed=3)
    _, _, a = rb.ref_pegasos(X, encode(y, "binary"), "binary", 0.3, 0.05)
    np.testing.assert_allclose(np.abs(a), 1.0 / (0.05 * 60), rtol=1e-13)


# --- BSGD §3.7 vs oracle -------------------------------------------------------------------------

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("maintenance", ["removal", "merging"])
def test_bsgd_vs_oracle(maintenance, task, sparse):
    X, y = make_data(task, seed=4)
    ye = encode(y, task)
    g, B, lam = 0.4, 15, 0.05
    log = []
    rs, SV, alpha = rb.ref_bsgd(X, ye, task, g, B, lam, maintenance, epsilon=0.15, n_classes=3, log=log)
    assert len(log) > 100 and len(SV) == B
    if maintenance == "merging":
        assert any(e["kind"] == "merge" for e in log)
    params = bsgd_params(task, budget=B, gamma=g, lam=lam, epsilon=0.15)
    Xin = sp.csr_matrix(X) if sparse else X
    res, scores = online(BSGD[maintenance](**params), Xin, y)
    check_online(res, scores, rs, ye, task)
    learner = BSGD[maintenance](**params).fit(Xin, y)
    check_model(learner, SV, alpha, g)
    assert learner.n_maintenance_ == len(log)


@pytest.mark.parametrize("maintenance", ["removal", "merging"])
def test_bsgd_anytime_lambda_vs_oracle(maintenance):
    # the product rule when the stream length is unknown: lambda_t = min(1e-3, 1/t), so the
    # steps change at t = 1,000 (a new SV enters with 1 from there on)
    from onlinekern.learners.bsgd import ANYTIME_LAM, ANYTIME_LAM_T, CLASSIFICATION_LAM, LAM_T
    X, y = make_data("binary", T=1600, seed=6)
    ye = encode(y, "binary")
    _, SV, alpha = rb.ref_bsgd(X, ye, "binary", 0.4, 15, lambda t: min(CLASSIFICATION_LAM, ANYTIME_LAM_T / t),
                                maintenance)
    learner = BSGD[maintenance](budget=15, gamma=0.4).partial_fit(X, y, classes=np.unique(y))
    assert learner.lam_ == ANYTIME_LAM                          # the stream's length was not known
    check_model(learner, SV, alpha, 0.4)
    fixed = BSGD[maintenance](budget=15, gamma=0.4).fit(X, y)  # known: min(1e-3, 4/T) throughout
    assert fixed.lam_ == pytest.approx(min(CLASSIFICATION_LAM, LAM_T / len(y)))


@pytest.mark.parametrize("maintenance", ["removal", "merging"])
def test_bsgd_small_tolerance_and_budget(maintenance):
    """Other corners of the parameter space: B = 3, a tight merge tolerance, large lambda."""
    X, y = make_data("binary", T=150, seed=5)
    ye = encode(y, "binary")
    rs, SV, alpha = rb.ref_bsgd(X, ye, "binary", 0.7, 3, 0.5, maintenance, merge_tol=1e-7)
    kw = dict(merge_tol=1e-7) if maintenance == "merging" else {}
    res, scores = online(BSGD[maintenance](budget=3, gamma=0.7, lam=0.5, **kw), X, y)
    check_online(res, scores, rs, ye, "binary")


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("maintenance", ["removal", "merging"])
def test_bsgd_duplicates(maintenance, task):
    """§3.7 step 4: a duplicate of x_t absorbs (merging) or drops (removal) the new SV."""
    X, y = make_data(task, T=60, seed=6)
    idx = np.random.default_rng(0).integers(0, 9, size=150)
    X, y = X[idx], y[idx]                                    # only 9 distinct rows
    ye = encode(y, task)
    log = []
    rs, SV, alpha = rb.ref_bsgd(X, ye, task, 0.5, 6, 0.1, maintenance, n_classes=3, log=log)
    assert sum(e["kind"] == "duplicate" for e in log) > 5
    params = bsgd_params(task, budget=6, gamma=0.5, lam=0.1)
    res, scores = online(BSGD[maintenance](**params), X, y)
    check_online(res, scores, rs, ye, task)
    check_model(BSGD[maintenance](**params).fit(X, y), SV, alpha, 0.5)


@pytest.mark.parametrize("maintenance", ["removal", "merging"])
def test_bsgd_duplicate_partner_is_most_similar_then_oldest(maintenance):
    """S = (a + 1e-6 e_1, a, a) and x_t = a: all three are duplicates (k >= 1 - 1e-8); the new
    coefficient goes to the most similar one, the older of the two exact copies."""
    a = np.array([0.5, -1.0, 0.25])
    X = np.array([a + [1e-6, 0, 0], a, a, a])
    y = np.array([1, 0, 1, 0])
    log = []
    rs, SV, alpha = rb.ref_bsgd(X, encode(y, "binary"), "binary", 1.0, 3, 1.0, maintenance, log=log)
    assert [e["kind"] for e in log] == ["duplicate"] and log[0]["j"] == 1
    learner = BSGD[maintenance](budget=3, gamma=1.0, lam=1.0)
    res, scores = online(learner, X, y)
    check_online(res, scores, rs, encode(y, "binary"), "binary")
    S, al = model_in_insertion_order(learner)
    np.testing.assert_array_equal(S, X[:3])
    np.testing.assert_allclose(al, alpha, rtol=1e-12, atol=1e-15)
    if maintenance == "merging":
        assert al[1] != al[2] and al[0] == pytest.approx(alpha[0])


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("maintenance", ["removal", "merging"])
def test_bsgd_unlimited_budget_is_kernel_pegasos(maintenance, task):
    """§5.1: B >= T, BSGD = kernel Pegasos with the same lambda."""
    X, y = make_data(task, seed=7)
    ye = encode(y, task)
    rs, SV, alpha = rb.ref_pegasos(X, ye, task, 0.3, 0.01, epsilon=0.1, n_classes=3)
    params = bsgd_params(task, budget=200, gamma=0.3, lam=0.01)
    res, scores = online(BSGD[maintenance](**params), X, y)
    check_online(res, scores, rs, ye, task)
    learner = BSGD[maintenance](**params).fit(X, y)
    check_model(learner, SV, alpha, 0.3)
    assert learner.n_maintenance_ == 0


def test_bsgd_removal_binary_is_fifo():
    """With the exact-arithmetic tie rule, binary BSGD-removal deletes the oldest SV."""
    X, y = make_data("binary", T=120, seed=8)
    learner = ok.BSGDRemoval(budget=10, gamma=0.3, lam=0.05)
    stamps = []
    for i in range(len(y)):
        learner.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.unique(y))
        stamps.append(learner.core_.sv.get_state()["stamp"].copy())
    for a, b in zip(stamps, stamps[1:]):
        gone = set(a) - set(b)
        assert not gone or gone == {min(a)}


# --- §5.13 the merge problem ----------------------------------------------------------------------

def grid_check(kappa, am, an, tol=1e-4):
    r = merge_search(kappa, am, an, tol)
    grid = np.linspace(r["lo"], r["hi"], 100_000)
    J = -(r["a1"] * kappa ** ((1.0 - grid) ** 2) + r["a2"] * kappa ** (grid ** 2))
    near = np.abs(grid - r["h"]) <= 2e-4
    scale = abs(r["a1"]) + abs(r["a2"])
    # h agrees with a grid argmin; when J has two equal minima (a1 = a2 and kappa < e^-2 gives a
    # symmetric, bimodal J) any of them is one
    assert J[near].min() <= J.min() + 1e-12 * scale, (kappa, am, an, r)
    if np.sum(J <= J.min() + 1e-9 * scale) < 200:          # a unique, well-separated minimum
        assert abs(r["h"] - grid[np.argmin(J)]) <= 2e-4
    assert r["loss"] >= -1e-12
    assert r["lo"] <= r["h"] <= r["hi"]
    return r


def test_merge_search_matches_grid_random():
    rng = np.random.default_rng(11)
    for _ in range(120):
        C = int(rng.choice([1, 1, 3]))
        kappa = float(np.exp(-rng.exponential(1.5)))
        am = rng.normal(size=C) * 10 ** rng.uniform(-1, 1)
        an = rng.normal(size=C) * 10 ** rng.uniform(-1, 1)
        if C > 1:
            am[rng.random(C) < 0.4] = 0.0
            an[rng.random(C) < 0.4] = 0.0
        r = grid_check(kappa, am, an)
        h, az, L = rb.merge(kappa, am, an, 1e-4)
        assert r["h"] == pytest.approx(h, abs=1e-15)
        np.testing.assert_allclose(r["alpha_z"], az, rtol=1e-13, atol=1e-15)
        assert r["loss"] == pytest.approx(L, rel=1e-10, abs=1e-13)


@pytest.mark.parametrize("kappa,am,an,bracket", [
    (0.6, 1.0, 2.0, (0.0, 1.0)),            # a1 a2 > 0
    (0.6, 2.0, -1.0, (1.0, 6.0)),           # a1 > 0 >= a2
    (0.6, -1.0, 2.0, (-5.0, 0.0)),          # otherwise
    (0.3, 1.0, -1.0, (1.0, 6.0)),           # alpha_m + alpha_n = 0 -> 1e-4
    (0.05, 1.0, 1.0, (0.0, 1.0)),           # symmetric bimodal J: ties keep the left mode
    (1.0, 0.7, 0.3, (0.0, 1.0)),            # duplicates: J flat
    (0.9, [1.0, -1.0, 0.0], [1.0, 0.0, -1.0], (0.0, 1.0)),
])
def test_merge_search_cases(kappa, am, an, bracket):
    r = grid_check(kappa, am, an)
    assert (r["lo"], r["hi"]) == bracket
    if kappa == 0.05:
        assert r["h"] < 0.5
    assert merge_objective_value(r["h"], kappa, r["a1"], r["a2"]) == pytest.approx(
        -(r["a1"] * kappa ** ((1 - r["h"]) ** 2) + r["a2"] * kappa ** (r["h"] ** 2)), rel=1e-14)


def test_merge_search_tolerance_and_errors():
    r1 = merge_search(0.5, 1.0, 3.0, 1e-2)
    r2 = merge_search(0.5, 1.0, 3.0, 1e-8)
    assert abs(r1["h"] - r2["h"]) <= 1e-2
    with pytest.raises(ValueError):
        merge_search(0.5, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError):
        merge_search(1.5, 1.0, 1.0)
    with pytest.raises(ValueError):
        merge_search(0.5, [1.0, 2.0], [1.0])


def test_merge_degradation_nonnegative_in_learner():
    X, y = make_data("multiclass", T=150, seed=12)
    log = []
    rb.ref_bsgd(X, encode(y, "multiclass"), "multiclass", 0.5, 8, 0.05, "merging", n_classes=3, log=log)
    merges = [e for e in log if e["kind"] == "merge"]
    assert merges and all(e["L"] >= -1e-12 for e in merges)


# --- BOGD / BOGD++ §3.8 vs oracle -------------------------------------------------------------------

BOGD_CASES = [(t, l) for t in TASKS for l in LOSSES[t]]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("task,loss", BOGD_CASES)
@pytest.mark.parametrize("sampling", ["uniform", "nonuniform"])
def test_bogd_vs_oracle(sampling, task, loss, sparse):
    X, y = make_data(task, seed=13)
    ye = encode(y, task)
    g, B, eta, lam, cb, seed = 0.4, 12, 0.3, 0.02, 1.2, 5
    log = []
    rs, SV, alpha = rb.ref_bogd(X, ye, task, g, B, eta, lam, cb, sampling, loss, epsilon=0.15,
                                n_classes=3, seed=seed, log=log)
    assert len(log) > 50
    params = dict(budget=B, gamma=g, eta=eta, lam=lam, coef_bound=cb, loss=loss, epsilon=0.15, seed=seed,
                  preset="paper")
    Xin = sp.csr_matrix(X) if sparse else X
    res, scores = online(BOGD[sampling](**params), Xin, y)
    check_online(res, scores, rs, ye, task)
    learner = BOGD[sampling](**params).fit(Xin, y)
    check_model(learner, SV, alpha, g)
    assert learner.n_removals_ == len(log)


def test_bogdpp_clamping_path_vs_oracle():
    """A dominant coefficient (large eta, weak clip) makes some p_i < 0: clamp and renormalise."""
    X, y = make_data("regression", T=200, seed=14)
    log = []
    rs, SV, alpha = rb.ref_bogd(X, y, "regression", 0.5, 6, 1.5, 0.0, 50.0, "nonuniform", "squared",
                                seed=2, log=log)
    assert any(np.any(e["p"] == 0) for e in log)           # clamping happened
    res, scores = online(ok.BOGDPlusPlus(budget=6, gamma=0.5, eta=1.5, lam=0.0, coef_bound=50.0,
                                         loss="squared", seed=2, preset="paper"), X, y)
    check_online(res, scores, rs, y, "regression")


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("sampling", ["uniform", "nonuniform"])
def test_bogd_unlimited_budget_is_ogd(sampling, task):
    """§5.1: B >= T, BOGD/BOGD++ = kernel OGD with the same eta, lambda and loss (bit-identical)."""
    X, y = make_data(task, seed=15)
    loss = LOSSES[task][0]
    p = dict(gamma=0.3, eta=0.25, lam=0.01, loss=loss)
    r1, s1 = online(BOGD[sampling](budget=len(y), **p), X, y)
    r2, s2 = online(ok.KernelOGD(**p), X, y)
    np.testing.assert_array_equal(s1, s2)
    a = BOGD[sampling](budget=len(y), **p).fit(X, y)
    b = ok.KernelOGD(**p).fit(X, y)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.n_removals_ == 0


# --- §5.12 probabilities and the clipped survivors -------------------------------------------------

def test_bogdpp_probabilities_invariant():
    rng = np.random.default_rng(16)
    cases = [np.zeros(5), np.array([3.0]), np.array([0.0, 0.0, 1.0]), np.array([100.0, 1, 1, 1]),
             np.array([1.0, 1.0])]
    cases += [np.abs(rng.standard_cauchy(int(rng.integers(1, 30)))) * (rng.random() < 0.9)
              for _ in range(300)]
    for norms in cases:
        p, cp, clamped = bogdpp_probabilities(norms)
        assert np.all(p >= 0) and p.sum() == pytest.approx(1.0, abs=1e-12)
        p_ref, cp_ref, clamped_ref = rb.bogdpp_probabilities(norms)
        np.testing.assert_allclose(p, p_ref, rtol=1e-12, atol=1e-15)
        assert clamped == clamped_ref
        if not clamped:
            np.testing.assert_allclose(1 - p, cp * norms, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError):
        bogdpp_probabilities([-1.0, 2.0])


@pytest.mark.parametrize("task,loss", [("binary", "hinge"), ("multiclass", "hinge"), ("regression", "absolute")])
@pytest.mark.parametrize("sampling", ["uniform", "nonuniform"])
def test_bogd_step_invariants(sampling, task, loss):
    """§5.12 after every step: |S| <= B; after a removal step, p >= 0 sums to 1 and every
    survivor's coefficient lies within eta gamma_c (the new SV is -eta g, not clipped)."""
    X, y = make_data(task, T=120, seed=17)
    eta, cb, B = 0.5, 1.5, 7
    learner = BOGD[sampling](budget=B, gamma=0.6, eta=eta, lam=0.01, coef_bound=cb, loss=loss, seed=3)
    kw = {"classes": np.unique(y)} if task != "regression" else {}
    removals = 0
    for i in range(len(y)):
        learner.partial_fit(X[i:i + 1], y[i:i + 1], **kw)
        assert learner.model_size_ <= B
        if learner.n_removals_ > removals:
            removals = learner.n_removals_
            p = learner.core_.last_probabilities
            assert len(p) == B and np.all(p >= 0) and p.sum() == pytest.approx(1.0, abs=1e-12)
            S, a = model_in_insertion_order(learner)
            assert np.all(np.abs(a[:-1]) <= eta * cb * (1 + 1e-15))
    assert removals > 50


# --- budget never exceeded (all four learners, all tasks) ------------------------------------------

ALL = {
    "bsgd-removal": lambda task: ok.BSGDRemoval(**bsgd_params(task, budget=5, gamma=0.5, lam=0.05)),
    "bsgd-merge": lambda task: ok.BSGDMerge(**bsgd_params(task, budget=5, gamma=0.5, lam=0.05)),
    "bogd": lambda task: ok.BOGD(budget=5, gamma=0.5, loss="squared" if task == "regression" else "hinge", seed=1),
    "bogdpp": lambda task: ok.BOGDPlusPlus(budget=5, gamma=0.5, loss="squared" if task == "regression" else "logistic", seed=1),
}


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("name", sorted(ALL))
def test_budget_never_exceeded(name, task):
    X, y = make_data(task, T=60, seed=18)
    learner = ALL[name](task)
    kw = {"classes": np.unique(y)} if task != "regression" else {}
    sizes = []
    for i in range(len(y)):
        learner.partial_fit(X[i:i + 1], y[i:i + 1], **kw)
        sizes.append(learner.model_size_)
    assert max(sizes) == 5 and sizes[-1] == 5


# --- seeds, partial_fit, pickling, model files, threads ---------------------------------------------

LEARNERS = {
    "bsgd-removal-bin": ("binary", lambda: ok.BSGDRemoval(budget=12, gamma=0.3, lam=0.02)),
    "bsgd-merge-mc": ("multiclass", lambda: ok.BSGDMerge(budget=12, gamma=0.3, lam=0.02)),
    "bsgd-merge-reg": ("regression", lambda: ok.BSGDMerge(budget=12, gamma=0.3, lam=0.02, task="regression")),
    "bogd-bin": ("binary", lambda: ok.BOGD(budget=12, gamma=0.3, seed=2)),
    "bogd-mc": ("multiclass", lambda: ok.BOGD(budget=12, gamma=0.3, loss="softmax", seed=2)),
    "bogdpp-reg": ("regression", lambda: ok.BOGDPlusPlus(budget=12, gamma=0.3, loss="epsilon-insensitive", seed=2)),
    "bogdpp-mc": ("multiclass", lambda: ok.BOGDPlusPlus(budget=12, gamma=0.3, seed=2)),
}


def arrays(learner):
    return list(model_in_insertion_order(learner))


@pytest.mark.parametrize("k", [3, 17])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_partial_fit_chunks_equal_fit(name, k):
    task, make = LEARNERS[name]
    X, y = make_data(task, seed=19)
    full = make().fit(X, y)
    part = make()
    for i, idx in enumerate(np.array_split(np.arange(len(y)), k)):
        kw = {"classes": np.unique(y)} if task != "regression" and i == 0 else {}
        part.partial_fit(X[idx], y[idx], **kw)
    for a, b in zip(arrays(full), arrays(part)):
        np.testing.assert_array_equal(a, b)
    Xq = make_X(20, 4, 94)
    np.testing.assert_array_equal(score_f(part, Xq), score_f(full, Xq))


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_pickle_and_model_file_round_trips(name, tmp_path):
    task, make = LEARNERS[name]
    X, y = make_data(task, seed=20)
    kw = {"classes": np.unique(y)} if task != "regression" else {}
    learner = make().partial_fit(X[:120], y[:120], **kw)
    clone = pickle.loads(pickle.dumps(learner))
    path = tmp_path / "m.okm"
    ok.save_model(learner, path)
    loaded = ok.load_model(path)
    assert type(loaded) is type(learner) and loaded.get_params() == learner.get_params()
    Xq = make_X(20, 4, 93)
    for other in (clone, loaded):
        np.testing.assert_array_equal(score_f(other, Xq), score_f(learner, Xq))
    # resumed learning is bit-identical: t (BSGD), the scale, the CHOICE stream all restored
    learner.partial_fit(X[120:], y[120:])
    for other in (clone, loaded):
        other.partial_fit(X[120:], y[120:])
        for a, b in zip(arrays(learner), arrays(other)):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(score_f(other, Xq), score_f(learner, Xq))


def test_hand_edited_state_raises():
    learner = ok.BSGDMerge(budget=5, gamma=0.3, lam=0.05).fit(*make_data("binary", T=40, seed=21))
    st = learner.core_.get_state()
    for key, value in (("budget", 3), ("maintenance", 7), ("lam", 0.0), ("merge_tol", -1.0)):
        bad = dict(st, **{key: value})
        with pytest.raises(ValueError):
            type(learner.core_).__new__(type(learner.core_)).set_state(bad)
    learner = ok.BOGD(budget=5, gamma=0.3).fit(*make_data("binary", T=40, seed=21))
    st = learner.core_.get_state()
    for key, value in (("budget", 9), ("sampling", 5), ("coef_bound", 0.0), ("eta", -1.0)):
        with pytest.raises(ValueError):
            type(learner.core_).__new__(type(learner.core_)).set_state(dict(st, **{key: value}))


def test_seeds():
    X, y = make_data("binary", seed=22)
    for cls in (ok.BOGD, ok.BOGDPlusPlus):
        _, a = online(cls(budget=10, gamma=0.3, seed=3), X, y)
        _, b = online(cls(budget=10, gamma=0.3, seed=3), X, y)
        _, c = online(cls(budget=10, gamma=0.3, seed=4), X, y)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    for cls in (ok.BSGDRemoval, ok.BSGDMerge):          # deterministic: no random choices
        _, a = online(cls(budget=10, gamma=0.3, lam=0.01), X, y)
        _, b = online(cls(budget=10, gamma=0.3, lam=0.01, seed=9), X, y)
        np.testing.assert_array_equal(a, b)


@pytest.fixture(scope="module")
def noisy():
    rng = np.random.default_rng(23)
    X = rng.normal(size=(520, 40))
    y = np.where(X[:, 0] + 1.5 * rng.normal(size=520) > 0, 1, 0)
    return X, y


@pytest.mark.usefixtures("force_parallel")
# 400 SVs x 40 features pass both parallel thresholds: the kernel sums (n (nnz + 8) >= 16384)
# and the merge candidates (n (d + 64) >= 16384)
@pytest.mark.parametrize("make", [
    lambda n: ok.BSGDMerge(budget=400, gamma=0.025, lam=1.0, n_threads=n),
    lambda n: ok.BSGDRemoval(budget=400, gamma=0.025, lam=1.0, n_threads=n),
    lambda n: ok.BOGDPlusPlus(budget=400, gamma=0.025, loss="logistic", n_threads=n),
])
def test_threads_bit_identical(noisy, make):
    X, y = noisy
    l1, l2 = make(1), make(2)
    r1, s1 = online(l1, X, y)
    r2, s2 = online(l2, X, y)
    np.testing.assert_array_equal(s1, s2)
    assert l1.model_size_ == 400
    assert l1.core_.sv.par_threshold == 0          # the parallel path ran (force_parallel)
    maintained = l1.n_maintenance_ if hasattr(l1, "n_maintenance_") else l1.n_removals_
    assert maintained > 60
    for a, b in zip(arrays(l1), arrays(l2)):
        np.testing.assert_array_equal(a, b)
    Xq = X[:50] + 0.1
    np.testing.assert_array_equal(score_f(l1, Xq), score_f(l2, Xq))


# --- API: names, defaults, errors ------------------------------------------------------------------

def test_registry_and_defaults():
    names = ok.available_learners()
    for n in ("bsgd-removal", "bsgd-merge", "bogd", "bogd-hinge", "bogd-eps", "bogdpp", "bogdpp-logit"):
        assert n in names
    assert names["bsgd-merge"]["tasks"] == ("binary", "multiclass", "regression")
    assert isinstance(ok.make_learner("bogdpp-eps"), ok.BOGDPlusPlus)
    assert ok.make_learner("bogd-eps").loss == "epsilon-insensitive"
    p = ok.BSGDMerge().get_params()
    assert (p["budget"], p["lam"], p["merge_tol"], p["preset"]) == ("auto", "auto", 1e-4, "auto")
    assert (ok.BSGDMerge.paper_defaults["lam"], ok.BSGDMerge.paper_defaults["budget"]) == (1e-4, 50)
    X, y = make_data("binary", T=60, seed=3)
    fitted = ok.BSGDRemoval().fit(X, y)
    assert (fitted.budget_, fitted.lam_) == (1000, 1e-3)
    fitted = ok.BSGDRemoval(preset="paper").fit(X, y)
    assert (fitted.budget_, fitted.lam_) == (50, 1e-4)
    assert "merge_tol" not in ok.BSGDRemoval().get_params()
    p = ok.BOGD().get_params()
    assert (p["budget"], p["eta"], p["lam"], p["coef_bound"], p["loss"]) == ("auto", "auto", "auto", 10.0, "hinge")
    assert (ok.BOGD.paper_defaults["budget"], ok.BOGD.paper_defaults["lam"]) == (100, 1e-3)
    X, y = make_data("binary", T=60, seed=3)
    fitted = ok.BOGD().fit(X, y)          # product defaults: lam = 1/(eta B) cancels the rescaling
    assert (fitted.budget_, fitted.eta_, fitted.lam_) == (1000, 0.2, 1.0 / (0.2 * 1000))
    fitted = ok.BOGD(loss="logistic").fit(X, y)          # eta = 0.2 / L, L = 1/4
    assert (fitted.eta_, fitted.lam_) == (0.8, 1.0 / (0.8 * 1000))
    fitted = ok.BOGDPlusPlus(budget=40).fit(X, y)
    assert fitted.lam_ == 1.0 / (0.2 * 40) and not hasattr(fitted, "budget_")
    Xm = make_X(120, 4, 3)                # softmax over K classes: eta * max(2, K/2)
    assert ok.BOGD(loss="logistic").fit(Xm, np.arange(120) % 10).eta_ == 0.2 * 10 / 2
    assert ok.BOGD(loss="logistic").fit(Xm, np.arange(120) % 3).eta_ == 0.2 * 2
    fitted = ok.BOGD(preset="paper").fit(X, y)
    assert (fitted.budget_, fitted.lam_) == (100, 1e-3)


@pytest.mark.parametrize("make", [
    lambda: ok.BSGDRemoval(lam=0.0), lambda: ok.BSGDMerge(merge_tol=0.0), lambda: ok.BSGDMerge(budget=0),
    lambda: ok.BSGDRemoval(task="ranking"), lambda: ok.BOGD(coef_bound=-1.0), lambda: ok.BOGDPlusPlus(eta=0.0),
    lambda: ok.BOGD(loss="nonsense"),
])
def test_invalid_parameters(make):
    X, y = make_data("binary", T=10, seed=24)
    with pytest.raises(ValueError):
        make().fit(X, y)


@pytest.mark.parametrize("name", sorted(ALL))
@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_first_example_is_a_mistake(name, task):
    """§5.14."""
    X, y = make_data(task, T=10, seed=25)
    res, scores = online(ALL[name](task), X, y)
    assert np.all(scores[0] == 0.0) and res.n_mistakes >= 1
