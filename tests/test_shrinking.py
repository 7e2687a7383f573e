"""Shrinking Gradient (ALGORITHMS.md §3.16) against the NumPy oracle of tests/reference_shrinking.py,
plus §5.7 (exact prediction = kernel OGD with squared loss; EST is unbiased), the shrink branch, the
Fenwick sampler, the scale trick (§5.15), model files, partial_fit chunks, threads and seeds."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern.train import main

import reference_shrinking as ref
from streams import score_f

RTOL, ATOL = 1e-10, 1e-12


def make_data(task, T=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    X[rng.random((T, d)) < 0.3] = 0.0
    if task == "regression":
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] - 0.3 * X[:, 2] * X[:, 3]
    elif task == "binary":
        y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 5, 2)
    else:
        y = np.array([10, 20, 30])[np.argmax(np.stack([X[:, 0], X[:, 1], -X[:, 0] - X[:, 1]], 1), 1)]
    return X, y


def encode(y, task):
    if task == "regression":
        return y.astype(float)
    classes = np.unique(y)
    if task == "binary":
        return np.where(y == classes[1], 1.0, -1.0)
    return np.searchsorted(classes, y).astype(float)


def mistakes(scores, ye, task):
    if task == "binary":
        return scores[:, 0] * ye <= 0
    f = scores.copy()
    yi = ye.astype(int)
    fy = f[np.arange(len(yi)), yi]
    f[np.arange(len(yi)), yi] = -np.inf
    return fy - f.max(1) <= 0


def learner(task, **kw):
    params = dict(preset="paper", eta=0.3, n_samples=16, gamma=0.3, norm_bound=0.05, seed=3, n_threads=1,
                  task="regression" if task == "regression" else "classification")
    params.update(kw)
    return ok.ShrinkingGradient(**params)


# --- against the oracle ---------------------------------------------------------------------------

@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("feature", ["fourier", "coordinate"])
@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_vs_oracle(task, feature, exact):
    X, y = make_data(task, seed=1)
    ye = encode(y, task)
    C = 3 if task == "multiclass" else 1
    L = learner(task, feature=feature, exact_predict=exact)
    res = ok.run_online(L, X, y, keep_scores=True)
    scores = np.asarray(res.scores).reshape(len(y), C)
    want, model = ref.ref_shrinking(X, ye, task, 0.3, 0.3, 0.05, 16, 3, feature, exact, n_classes=C)
    np.testing.assert_allclose(scores, want, rtol=RTOL, atol=ATOL)
    # both branches of Algorithm 1 ran: some steps shrank, some added an x_i
    assert 0 < model.n_shrinks and 0 < len(model.SV) < len(y) * (1 if task != "multiclass" else 2)
    np.testing.assert_array_equal(L.support_vectors_, np.array(model.SV))
    np.testing.assert_allclose(np.asarray(L.dual_coef_).reshape(-1, C), model.alpha, rtol=1e-12, atol=1e-14)
    assert L.model_size_ == len(model.SV)
    if task == "regression":
        assert res.rmse == pytest.approx(np.sqrt(np.mean((ye - want[:, 0]) ** 2)), rel=1e-9)
    else:
        m = mistakes(want, ye, task)
        np.testing.assert_array_equal(mistakes(scores, ye, task), m)
        assert res.n_mistakes == m.sum()
    # after training: EST with keys 2^63 + j, j counting every prediction (two calls = new draws)
    Xq = make_data("regression", T=7, seed=2)[0]
    for _ in range(2):
        got = np.asarray(score_f(L, Xq)).reshape(len(Xq), C)
        np.testing.assert_allclose(got, np.array([model.predict(x) for x in Xq]), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("feature", ["fourier", "coordinate"])
def test_sparse_input_matches_dense(feature):
    X, y = make_data("regression", seed=4)
    a = ok.run_online(learner("regression", feature=feature), X, y, keep_scores=True)
    b = ok.run_online(learner("regression", feature=feature), sp.csr_matrix(X), y, keep_scores=True)
    np.testing.assert_allclose(np.asarray(b.scores), np.asarray(a.scores), rtol=1e-12, atol=1e-13)


def test_first_binary_example_is_a_mistake():
    X, y = make_data("binary", T=5)
    res = ok.run_online(learner("binary"), X, y, keep_scores=True)
    assert np.asarray(res.scores).ravel()[0] == 0.0 and res.n_mistakes >= 1


# --- §5.7 -----------------------------------------------------------------------------------------

def test_exact_predict_without_shrink_is_kernel_ogd():
    X, y = make_data("regression", seed=5)
    eta, g = 0.2, 0.4
    sg = ok.ShrinkingGradient(preset="paper", eta=eta, gamma=g, exact_predict=True, norm_bound=1e6, n_threads=1)
    ogd = ok.KernelOGD(loss="squared", eta=eta, lam=0.0, gamma=g, n_threads=1, preset="paper")
    a = ok.run_online(sg, X, y, keep_scores=True)
    b = ok.run_online(ogd, X, y, keep_scores=True)
    np.testing.assert_allclose(np.asarray(a.scores), np.asarray(b.scores), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(sg.support_vectors_, ogd.support_vectors_)
    np.testing.assert_allclose(sg.dual_coef_, ogd.dual_coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(score_f(sg, X[:20]), score_f(ogd, X[:20]), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("feature", ["fourier", "coordinate"])
def test_estimator_is_unbiased(feature):
    X, y = make_data("regression", T=60, seed=6)
    L = learner("regression", feature=feature, norm_bound=1.0).fit(X, y)
    m, reps = 20, 2000
    x = make_data("regression", T=1, seed=7)[0][0]
    exact = L.core_.exact_py(x)[0]
    est = np.array([L.estimate(x, m, key=k)[0] for k in range(reps)])
    norm1 = L.core_.alpha_norm1[0]
    assert norm1 == pytest.approx(np.abs(L.dual_coef_).sum(), rel=1e-12)
    if feature == "fourier":
        # |sign psi psi| <= 2, so each sample of ||alpha||_1 E^(k) lies in [-2||alpha||_1, 2||alpha||_1]
        bound = 4 * norm1 * 2 / np.sqrt(reps * m)
    else:                          # psi = sqrt(d) x_w is unbounded: use the empirical spread
        bound = 4 * est.std() / np.sqrt(reps)
    assert abs(est.mean() - exact) < bound
    assert est.std() > 0


def test_linear_kernel_of_coordinate_feature():
    X, y = make_data("regression", T=40, seed=8)
    L = learner("regression", feature="coordinate", norm_bound=1.0).fit(X, y)
    x = X[3]
    np.testing.assert_allclose(L.core_.exact_py(x), [L.support_vectors_ @ x @ L.dual_coef_], rtol=1e-12)


# --- the shrink branch ----------------------------------------------------------------------------

def test_shrink_branch_divides_alpha_and_adds_nothing():
    x = np.array([[0.3, -0.2, 0.5]] * 3)
    L = ok.ShrinkingGradient(preset="paper", eta=1.0, norm_bound=0.5, exact_predict=True, gamma=0.5, n_threads=1)
    L.partial_fit(x[:1], [10.0])                           # E = 0 < 8: alpha_1 = eta (10 - 0)
    assert L.model_size_ == 1 and L.dual_coef_[0] == 10.0
    res = ok.run_online(L, x[1:2], [10.0], keep_scores=True, reset=False)
    assert np.asarray(res.scores).ravel()[0] == pytest.approx(10.0)   # |E| = 10 >= 16 B_n = 8
    assert L.model_size_ == 1 and L.dual_coef_[0] == 2.5  # alpha <- alpha / 4, x_t not added
    L.partial_fit(x[2:3], [10.0])                          # |E| = 2.5 < 8: update again
    assert L.model_size_ == 2 and L.dual_coef_[1] == pytest.approx(7.5)


def test_shrink_branch_with_estimator():
    # one SV and the query equal to it: EST = |alpha| mean(2 cos^2) > 0; tiny B_n forces a shrink
    x = np.array([[0.1, 0.2]] * 2)
    L = ok.ShrinkingGradient(preset="paper", eta=1.0, norm_bound=1e-3, n_samples=50, gamma=1.0, n_threads=1)
    L.partial_fit(x, [1.0, 1.0])
    assert L.model_size_ == 1 and L.dual_coef_[0] == 0.25


def test_multiclass_shrinks_per_class():
    # one-vs-rest: at x3 class 2's estimate is large (shrink), classes 0 and 1 add a coefficient
    g, a = 1.0, np.sqrt(-np.log(0.6))                      # k(x1, x3) = k(x2, x3) = 0.6
    X = np.array([[-a, 0.0], [a, 0.0], [0.0, 0.0]])
    L = ok.ShrinkingGradient(preset="paper", eta=1.0, norm_bound=0.05, exact_predict=True, gamma=g,
                             task="classification", n_threads=1)
    res = ok.run_online(L, X, [0, 1, 0], keep_scores=True, classes=[0, 1, 2])
    k12 = np.exp(-g * 4 * a * a)
    a1 = np.array([1.0, -1.0, -1.0])
    E2 = k12 * a1
    a2 = np.array([-1.0, 1.0, -1.0]) - E2
    E3 = 0.6 * (a1 + a2)
    assert abs(E3[2]) >= 16 * 0.05 > max(abs(E3[0]), abs(E3[1]))
    np.testing.assert_allclose(np.asarray(res.scores), [np.zeros(3), E2, E3], rtol=1e-12, atol=1e-15)
    want = np.array([[a1[0], a1[1], a1[2] / 4], [a2[0], a2[1], a2[2] / 4], [1 - E3[0], -1 - E3[1], 0.0]])
    np.testing.assert_allclose(L.dual_coef_, want, rtol=1e-12)
    assert L.dual_coef_[2, 2] == 0.0
    # the sampler of class 2 never draws the slot whose class-2 coefficient is 0
    got = L.core_.sample_index(2, np.random.default_rng(0).random(20000))
    assert set(np.unique(got)) == {0, 1}
    assert set(np.unique(L.core_.sample_index(0, np.random.default_rng(1).random(20000)))) == {0, 1, 2}


def test_scale_trick_equals_explicit_shrink_with_renormalisation():
    # B_n tiny: after the first step every step shrinks (scale 4^-199 < 1e-100: renormalised once)
    X, y = make_data("regression", T=200, seed=9)
    L = ok.ShrinkingGradient(preset="paper", eta=0.5, norm_bound=1e-300, exact_predict=True, gamma=0.3, n_threads=1)
    res = ok.run_online(L, X, y, keep_scores=True)
    assert L.model_size_ == 1
    assert L.dual_coef_[0] == pytest.approx(0.5 * y[0] * 0.25 ** 199, rel=1e-12)
    assert L.core_.scales[0] > 1e-100
    s = np.asarray(res.scores).ravel()
    want = 0.5 * y[0] * 0.25 ** np.arange(0, 199) * np.exp(-0.3 * np.sum((X[1:] - X[0]) ** 2, 1))
    np.testing.assert_allclose(s[1:], want, rtol=1e-12)
    # EST after renormalisation: oracle agreement (same renormalisation, same tree rebuild)
    L2 = ok.ShrinkingGradient(preset="paper", eta=0.5, norm_bound=1e-300, n_samples=8, gamma=0.3, n_threads=1)
    a = ok.run_online(L2, X, y, keep_scores=True)
    want2, model = ref.ref_shrinking(X, y, "regression", 0.3, 0.5, 1e-300, 8, 0)
    np.testing.assert_allclose(np.asarray(a.scores).ravel(), want2[:, 0], rtol=RTOL, atol=1e-300)
    np.testing.assert_allclose(L2.dual_coef_, model.alpha[:, 0], rtol=1e-12)


# --- the Fenwick sampler --------------------------------------------------------------------------

def test_fenwick_sampler_matches_inverse_cdf_and_frequencies():
    X, y = make_data("regression", T=300, seed=10)
    L = learner("regression", norm_bound=1.0, eta=0.1).fit(X, y)
    w = np.abs(L.dual_coef_)
    n = len(w)
    assert n > 200 and np.all(w > 0)
    rng = np.random.default_rng(11)
    u = np.concatenate([[0.0, np.nextafter(1.0, 0.0)], rng.random(200_000)])
    got = L.core_.sample_index(0, u)
    cum = np.cumsum(w)
    inv = np.minimum(np.searchsorted(cum, u * cum[-1], side="right"), n - 1)
    # the tree and the cumulative sum round differently only right at a boundary
    assert np.mean(got != inv) < 1e-4
    freq = np.bincount(got, minlength=n) / len(u)
    p = w / w.sum()
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / len(u)) + 1e-6)
    # the oracle's copy of the tree draws the same slots
    tree = ref.Fenwick()
    for v in np.abs(L.core_.sv.coefficients[:, 0]):
        tree.append(v)
    tot = tree.total()
    assert [tree.find(v * tot, w) for v in u[:2000]] == list(got[:2000])


# --- parameters -----------------------------------------------------------------------------------

def test_default_eta_and_required_horizon():
    X, y = make_data("regression", T=20)
    # T unknown (partial_fit on a fresh model): the paper's step needs eta or horizon ...
    with pytest.raises(ValueError, match="horizon"):
        ok.ShrinkingGradient(preset="paper").partial_fit(X, y)
    # ... the product preset's sampled estimator follows the doubling schedule: step t uses T = 2^k >= t
    L = ok.ShrinkingGradient(n_samples=50, exact_predict=False, n_threads=1).partial_fit(X, y)
    assert L.core_.t_epoch == 32 and L.eta_ == L.core_.eta == np.sqrt(25.0) / 32
    L.partial_fit(X, y)                                    # steps 21..40: the epoch T = 64
    assert L.core_.t_epoch == 64 and L.eta_ == np.sqrt(25.0) / 64
    # the product defaults (exact predictions, a budget) take the constant PRODUCT_ETA: no T needed
    from onlinekern.learners.shrinking import PRODUCT_BUDGET, PRODUCT_ETA
    L = ok.ShrinkingGradient(n_threads=1).partial_fit(X, y)
    assert L.core_.t_epoch == 0 and L.eta_ == L.core_.eta == PRODUCT_ETA and L.core_.exact_predict
    assert L.chosen_params()["budget"] == PRODUCT_BUDGET == L.core_.budget
    # fit knows T = 20 rows: eta = B / sqrt(T) (Theorem 1) with the paper preset, sqrt(m / 2) / T for
    # the sampled prediction under the product preset
    L = ok.ShrinkingGradient(norm_bound=2.0, preset="paper").fit(X, y)
    assert L.horizon_ == 20 and L.core_.eta == 2.0 / np.sqrt(20) and L.core_.budget == 0
    L = ok.ShrinkingGradient(norm_bound=2.0, n_samples=50, exact_predict=False).fit(X, y)
    assert L.eta_ == L.core_.eta == np.sqrt(25.0) / 20
    for bad in [dict(eta=0.1, feature="cosine"), dict(eta=0.1, n_samples=0), dict(eta=-1.0),
                dict(eta=0.1, norm_bound=0), dict(horizon=0), dict(eta=0.1, exact_predict="yes")]:
        with pytest.raises(ValueError):
            ok.ShrinkingGradient(**bad).fit(X, y)


def test_registry_and_cli(tmp_path, capsys):
    assert ok.available_learners()["sg"]["class"] is ok.ShrinkingGradient
    X, y = make_data("regression", T=50)
    path = tmp_path / "r.libsvm"
    ok.save_libsvm(path, X, y)
    assert main(["-a", "sg", str(path), "--horizon", "50", "--n-samples", "10", "-q"]) == 0
    with_horizon = capsys.readouterr().out
    assert "RMSE" in with_horizon
    # the CLI knows the file's length: the default horizon is its 50 rows
    assert main(["-a", "sg", str(path), "--n-samples", "10", "-q"]) == 0
    assert capsys.readouterr().out.split("RMSE")[1][:12] == with_horizon.split("RMSE")[1][:12]


# --- state, chunks, threads, seeds ----------------------------------------------------------------

@pytest.mark.parametrize("task", ["regression", "multiclass"])
def test_model_file_and_pickle_resume(tmp_path, task):
    X, y = make_data(task, seed=13)
    kw = {"classes": np.unique(y)} if task != "regression" else {}
    L = learner(task)
    L.partial_fit(X[:120], y[:120], **kw)
    path = tmp_path / "m.okm"
    ok.save_model(L, path)
    clones = [ok.load_model(path), pickle.loads(pickle.dumps(L))]
    Xq = X[150:160]
    ref_pred = score_f(L, Xq)
    L.partial_fit(X[120:], y[120:])
    final = score_f(L, Xq)
    for c in clones:
        np.testing.assert_array_equal(score_f(c, Xq), ref_pred)   # same post-training keys
        c.partial_fit(X[120:], y[120:])
        np.testing.assert_array_equal(c.dual_coef_, L.dual_coef_)
        np.testing.assert_array_equal(c.support_vectors_, L.support_vectors_)
        np.testing.assert_array_equal(score_f(c, Xq), final)
        assert c.get_params() == L.get_params()


@pytest.mark.parametrize("feature", ["fourier", "coordinate"])
def test_predict_samples(feature):
    """Estimates after training use predict_samples (Theorem 1, part 3); training does not."""
    X, y = make_data("regression", T=80, seed=21)
    Xq = make_data("regression", T=30, seed=22)[0]
    base = learner("regression", feature=feature, norm_bound=1.0)
    a = ok.run_online(base, X, y, keep_scores=True)
    big = learner("regression", feature=feature, norm_bound=1.0, predict_samples=4000)
    b = ok.run_online(big, X, y, keep_scores=True)
    # training is untouched: the same scores, coefficients and support set
    np.testing.assert_array_equal(np.asarray(a.scores), np.asarray(b.scores))
    np.testing.assert_array_equal(big.dual_coef_, base.dual_coef_)
    assert big.core_.predict_samples == 4000 and base.core_.predict_samples == base.n_samples == 16
    # the default equals asking for n_samples explicitly, bit for bit
    same = learner("regression", feature=feature, norm_bound=1.0, predict_samples=16).fit(X, y)
    np.testing.assert_array_equal(score_f(same, Xq), score_f(base, Xq))
    # the first post-training estimate is EST(alpha, x, m_pred) with key 2^63
    x = Xq[0]
    fresh = learner("regression", feature=feature, norm_bound=1.0, predict_samples=4000).fit(X, y)
    np.testing.assert_array_equal(score_f(fresh, x[None, :]), fresh.estimate(x, 4000, key=2 ** 63))
    # and with 250 times the samples the error against the exact sum is far smaller
    exact = np.array([base.core_.exact_py(q)[0] for q in Xq])
    err_small = np.mean((score_f(base, Xq) - exact) ** 2)
    err_big = np.mean((score_f(big, Xq) - exact) ** 2)
    assert err_big < err_small / 20
    # it travels with the model
    st = big.core_.get_state()
    assert st["predict_samples"] == 4000
    with pytest.raises(ValueError):
        learner("regression", predict_samples=0).fit(X, y)
    old = dict(st)
    del old["predict_samples"]                  # a model file written before the parameter
    core = type(big.core_).__new__(type(big.core_))
    core.set_state(old)
    assert core.predict_samples == core.n_samples


def test_hand_edited_state_raises():
    X, y = make_data("regression", T=30)
    L = learner("regression").fit(X, y)
    st = L.core_.get_state()
    core = type(L.core_).__new__(type(L.core_))
    for key, bad in [("scale", np.array([1.0, 2.0])), ("scale", np.array([-1.0])), ("feature", "cosine"),
                     ("n_pred", -1)]:
        with pytest.raises(ValueError):
            core.set_state(dict(st, **{key: bad}))


@pytest.mark.parametrize("k", [1, 3, 17])
def test_partial_fit_chunks_equal_fit(k):
    X, y = make_data("binary", seed=14)
    full = learner("binary").fit(X, y)
    part = learner("binary")
    for i, idx in enumerate(np.array_split(np.arange(len(y)), k)):
        part.partial_fit(X[idx], y[idx], classes=np.unique(y) if i == 0 else None)
    np.testing.assert_array_equal(part.dual_coef_, full.dual_coef_)
    np.testing.assert_array_equal(score_f(part, X[:30]), score_f(full, X[:30]))


def test_threads_bit_identical():
    # C m (d + 8) = 200 * 108 > 16384 work units: the m Fourier samples run in prange
    rng = np.random.default_rng(15)
    X = rng.normal(size=(80, 100)) / 10
    y = np.tanh(X[:, 0] * 10)
    out = []
    for nt in (1, 2):
        L = ok.ShrinkingGradient(preset="paper", eta=0.2, n_samples=200, norm_bound=0.5, seed=4, n_threads=nt)
        res = ok.run_online(L, X, y, keep_scores=True)
        out.append((np.asarray(res.scores), L.dual_coef_, score_f(L, X[:10])))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_seeds():
    X, y = make_data("regression", seed=16)
    a = ok.run_online(learner("regression", seed=5), X, y, keep_scores=True).scores
    b = ok.run_online(learner("regression", seed=5), X, y, keep_scores=True).scores
    c = ok.run_online(learner("regression", seed=6), X, y, keep_scores=True).scores
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# --- the ICML'17 Section 6 experiment (onlinekern.experiments.shrinking) -------------------------

@pytest.mark.parametrize("schedule", ["const", "sqrt", "inv"])
def test_experiment_loss_of_f_t_is_the_exact_kernel_sum(schedule):
    # The regret of eq. (7) (Theorem 1) sums l_t(f_t) = 1/2 (<f_t, Phi(x_t)> - y_t)^2, the loss of
    # the function f_t, not of the estimate E_t; the tool once reported only the latter.  Here the
    # tool's exact column must be sum_{i<t} alpha_i x_i^T x_t (no shrink: B_n huge), its E_t column
    # the learner's own pre-update scores, and alpha_t = eta_t (y_t - E_t) with the scheduled step.
    from onlinekern.experiments import shrinking as se
    X, y, Xt, yt = se.make_data(40, 60, 20, 5, "coordinate", 0.5, seed=1)
    eta, m = 0.5, 8
    f, fx, ft, ft_m, info = se.shrinking(X, y, Xt, m, eta, schedule, 1e9, "coordinate", 2, 0.5, 4000)
    assert info["shrinks"] == 0
    L = ok.ShrinkingGradient(preset="paper", eta=eta, n_samples=m, norm_bound=1e9, feature="coordinate", seed=2, n_threads=1)
    if schedule == "const":          # one pass in one call: the same draws and scores
        np.testing.assert_array_equal(np.asarray(ok.run_online(L, X, y, keep_scores=True).scores).ravel(), f)
    steps = np.array([se.step_size(eta, schedule, t + 1) for t in range(len(y))])
    alpha = steps * (y - f)
    want = np.array([alpha[:t] @ (X[:t] @ X[t]) for t in range(len(y))])
    np.testing.assert_allclose(fx, want, rtol=1e-10, atol=1e-13)
    assert np.max(np.abs(fx - f)) > 1e-3          # the estimate is noisy: the two columns differ
    # test points: EST with m_test samples concentrates on the exact value (Lemma 4), the
    # training m does not
    exact_t = Xt @ X.T @ alpha
    assert np.mean((ft - exact_t) ** 2) < 0.2 * np.mean((ft_m - exact_t) ** 2)


def test_product_prediction_is_a_function_of_the_row():
    """Under the product preset a row's estimate after training is keyed by the row (its nonzero
    (index, value) pairs), not by its place among the calls: order, subsets, repeats and the
    sparse form give the same numbers; the paper preset keys the j-th call (independent draws)."""
    import scipy.sparse as sp
    X, y = make_data("regression", T=60)
    L = ok.ShrinkingGradient(n_samples=20, exact_predict=False, n_threads=1, seed=3).fit(X, y)
    s = L.predict(X)
    rev = L.predict(X[::-1])[::-1]
    np.testing.assert_array_equal(s, rev)
    np.testing.assert_array_equal(s[7:9], L.predict(X[7:9]))
    np.testing.assert_allclose(s, L.predict(sp.csr_matrix(X)), rtol=1e-12, atol=1e-14)   # same draws
    P = ok.ShrinkingGradient(n_samples=20, n_threads=1, seed=3, preset="paper").fit(X, y)
    assert not np.array_equal(P.predict(X[:5]), P.predict(X[:5]))


@pytest.mark.parametrize("exact", [True, False])
def test_budget_replaces_the_oldest(exact):
    """budget B: after B SVs each new one takes the oldest one's slot; the sampler's weights follow
    (||alpha||_1 per output equals the coefficients' sum) and the model is the newest B examples."""
    X, y = make_data("regression", T=90)
    L = ok.ShrinkingGradient(budget=25, exact_predict=exact, n_samples=20, eta=0.2, gamma=0.5,
                             n_threads=1, seed=1).fit(X, y)
    assert L.n_support_ == 25
    kept = {tuple(r) for r in L.support_vectors_}
    newest = {tuple(r) for r in X[-25:]}
    assert kept == newest
    np.testing.assert_allclose(L.core_.alpha_norm1, np.abs(L.core_.alpha).sum(axis=0), rtol=1e-12)
    U = ok.ShrinkingGradient(budget=None, exact_predict=exact, n_samples=20, eta=0.2, gamma=0.5,
                             n_threads=1, seed=1).fit(X[:25], y[:25])
    Lb = ok.ShrinkingGradient(budget=25, exact_predict=exact, n_samples=20, eta=0.2, gamma=0.5,
                              n_threads=1, seed=1).fit(X[:25], y[:25])
    np.testing.assert_array_equal(U.dual_coef_, Lb.dual_coef_)         # no difference below the budget
