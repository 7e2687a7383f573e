"""Wide sparse data at the edges of the learners (issue 26): the width selection, feature scaling,
model files, the river adapter and the wide-data tools cost the nonzeros, never the width."""
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern import kernels
from onlinekern.kernels import ColumnScale, feature_scale, scale_features, width_candidates
from onlinekern.preprocessing import FeatureScaler, MaxAbsScaler, feature_scaler, scaler_from_state
from streams import load_tool

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
WIDE = 1 << 24

scatter_tool = load_tool("scatter_columns")
text_tool = load_tool("make_text_stream")
import harness  # noqa: E402  (tools/ is on sys.path once load_tool ran)


def compact_data(n=600, d=40, seed=0, exact=True):
    """Sparse rows of d columns with different ranges; exact=True: values k/8 with small k, so every
    dot product and norm is exact whatever the summation order."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-12, 13, size=(n, d)) / 8.0 if exact else rng.normal(size=(n, d))
    X = X * rng.choice([1.0, 4.0, 0.25], size=d)       # ranges differing by more than 2
    X[rng.random((n, d)) < 0.7] = 0.0
    X[:, 3] = 0.0                                       # a column never present
    return sp.csr_matrix(X)


def scatter(X, width, seed=0):
    """X with column j moved to P(j), P a seeded permutation of [0, width) (the scatter tool's map)."""
    P = harness.ColumnPermutation(width, seed)
    cols = P(np.arange(X.shape[1]))
    W = sp.csr_matrix((X.data.copy(), cols[X.indices], X.indptr.copy()), shape=(X.shape[0], width))
    W.sort_indices()
    return W, cols


def same_candidates(compact, wide, cols, exact=True):
    assert len(compact) == len(wide)
    for (s1, g1), (s2, g2) in zip(compact, wide):
        if exact:
            assert g1 == g2
        else:
            assert g2 == pytest.approx(g1, rel=1e-12)
        assert (s1 is None) == (s2 is None)
        if s1 is not None:
            assert isinstance(s2, ColumnScale) and s2.n_features == WIDE
            np.testing.assert_array_equal(s2.factors_of(cols), s1)    # same factor per column
            assert np.sum(s1 != 1.0) == s2.columns.size                # and no other column listed


# ---- the width selection ---------------------------------------------------------------------

def test_width_selection_on_2_24_columns_is_small_and_equals_the_compact_copy():
    X = compact_data()
    W, cols = scatter(X, WIDE)
    kernels._CANDIDATES.clear()
    tracemalloc.start()
    try:
        wide = width_candidates(W, seed=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the dense sample alone would be 600 x 2^24 doubles (75 GiB); the work is the sample's
    # nonzeros and its 600 x 600 distances
    assert peak < 16 << 20, peak
    compact = width_candidates(X, seed=1)
    assert len(compact) == 8                      # ranges differ: scaled and raw candidates
    same_candidates(compact, wide, cols)


def test_width_selection_sparse_distances_match_the_dense_ones(monkeypatch):
    """The sparse Gram path (samples too wide to densify even over their own columns) gives the
    dense computation's gammas up to summation order, and exactly on exact data."""
    for exact in (True, False):
        X = compact_data(n=300, d=30, seed=2, exact=exact)
        W, cols = scatter(X, WIDE, seed=5)
        kernels._CANDIDATES.clear()
        compact = width_candidates(X, seed=0)
        monkeypatch.setattr(kernels, "DENSE_SAMPLE", 0)
        kernels._CANDIDATES.clear()
        wide = width_candidates(W, seed=0)
        monkeypatch.undo()
        same_candidates(compact, wide, cols, exact=exact)


def test_dense_sample_distances_overwrite_the_gram_matrix_with_the_same_numbers():
    """The dense path writes the pairs' squared distances over the Gram matrix (its own memory),
    with the numbers of the block-wise computation, so the median heuristic's memory is the m^2
    Gram matrix, not it plus the m (m - 1) / 2 distances."""
    rng = np.random.default_rng(7)
    S = rng.normal(size=(700, 13)) * rng.uniform(0.1, 10, size=13)
    sq = np.einsum("ij,ij->i", S, S)
    G = S @ S.T
    blockwise = kernels._upper_distances(sq, lambda i0, i1: G[i0:i1], S.shape[0])
    over = kernels._upper_distances_over_gram(sq, G.copy())
    np.testing.assert_array_equal(over, blockwise)
    m = 1500
    S = rng.normal(size=(m, 6))
    tracemalloc.start()
    try:
        kernels._median_of_sample(S, 6, 1.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.2 * m * m * 8, peak          # the Gram matrix (and a row), not it + the pairs


def test_feature_scale_of_wide_data_is_a_column_scale_with_the_dense_factors():
    X = compact_data(seed=3)
    W, cols = scatter(X, WIDE, seed=9)
    s = feature_scale(X, seed=4)
    cs = feature_scale(W, seed=4)
    assert isinstance(cs, ColumnScale) and cs.shape == (WIDE,)
    np.testing.assert_array_equal(cs.factors_of(cols), s)
    # applied through the columns: the scaled wide copy is the scattered scaled compact file
    np.testing.assert_array_equal(scale_features(W, cs)[:, cols].toarray(), scale_features(X, s).toarray())
    dense = np.zeros((2, 8))
    dense[:, 5] = 2.0
    small = ColumnScale([1, 5], [3.0, 0.5], 8)
    np.testing.assert_array_equal(scale_features(dense, small), dense * small.toarray())


def test_column_scale_checks_and_state():
    s = ColumnScale([2, 7], [0.5, 4.0], 10)
    assert s == ColumnScale.from_state(s.get_state())
    assert s.factors_of(np.array([0, 2, 7, 9])).tolist() == [1.0, 0.5, 4.0, 1.0]
    for bad in (([3, 2], [1.0, 1.0], 10), ([2, 10], [1.0, 1.0], 10), ([1], [0.0], 10), ([1], [1.0, 2.0], 10)):
        with pytest.raises(ValueError):
            ColumnScale(*bad)


def test_single_wide_row_allocates_nothing_of_its_width():
    X = sp.csr_matrix((np.array([1.0, 2.0]), np.array([5, WIDE - 1]), np.array([0, 2])), shape=(1, WIDE))
    kernels._CANDIDATES.clear()
    tracemalloc.start()
    try:
        cands = width_candidates(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert cands == [(None, 1.0 / WIDE)] and peak < 1 << 20


def test_a9a_scattered_into_2_24_columns_gives_the_compact_candidates(shared_data):
    X, _ = ok.load_libsvm(shared_data.plain("a9a"))
    X = X[:2000]
    W, cols = scatter(X, WIDE, seed=0)
    same_candidates(width_candidates(X, seed=0), width_candidates(W, seed=0), cols)


# ---- learners, model files ----------------------------------------------------------------------

def test_wide_fit_keeps_a_column_scale_through_model_files(tmp_path):
    """gamma='auto' on wide CSR: a chosen scale is a ColumnScale, stored as two short arrays, and
    the loaded model predicts the same scores.  (The race may keep a raw-feature candidate, so the
    scaled candidates' shared ColumnScale is set on the model to exercise the file either way.)"""
    X = compact_data(n=400, d=20, seed=6, exact=False)
    y = np.where(X[:, 0].toarray().ravel() + X[:, 1].toarray().ravel() > 0, 1, -1)
    W, _ = scatter(X, 1 << 22, seed=1)
    learner = ok.make_learner("dsg", batch_size=8).fit(W, y)
    s = learner.__dict__.get("feature_scale_")
    assert s is None or isinstance(s, ColumnScale)
    cands = width_candidates(W, seed=0)
    scaled = [c for c, _ in cands if c is not None]
    assert scaled and all(c is scaled[0] for c in scaled)      # one shared copy per call
    learner.feature_scale_ = scaled[0]                          # the file must carry it either way
    path = tmp_path / "wide.npz"
    ok.save_model(learner, path)
    back = ok.load_model(path)
    assert back.feature_scale_ == scaled[0]
    np.testing.assert_array_equal(back.decision_function(W[:50]), learner.decision_function(W[:50]))
    with np.load(path) as z:
        assert max(z[k].size for k in z.files) < 1 << 16         # nothing of the data's width


# ---- scaling ------------------------------------------------------------------------------------

def test_max_abs_scaler_equals_scikit_learn():
    skp = pytest.importorskip("sklearn.preprocessing")
    rng = np.random.default_rng(0)
    X = sp.random(300, 5000, density=0.01, random_state=2, format="csr")
    X.data = rng.normal(size=X.nnz) * rng.choice([1e-3, 1.0, 1e3], size=X.nnz)
    ours, theirs = MaxAbsScaler().fit(X), skp.MaxAbsScaler().fit(X)
    a, b = ours.transform(X), theirs.transform(X)
    assert sp.issparse(a) and a.nnz == X.nnz
    np.testing.assert_array_equal(a.toarray(), b.toarray())
    A = X[:, :50].toarray()
    np.testing.assert_array_equal(MaxAbsScaler().fit(A).transform(A), skp.MaxAbsScaler().fit(A).transform(A))
    # state of the columns seen, not of the width; partial_fit in two halves gives the same state
    assert ours.columns_.size == np.unique(X.indices).size
    half = MaxAbsScaler().partial_fit(X[:150]).partial_fit(X[150:])
    np.testing.assert_array_equal(half.columns_, ours.columns_)
    np.testing.assert_array_equal(half.max_abs_, ours.max_abs_)
    back = scaler_from_state(ours.get_state())
    np.testing.assert_array_equal(back.transform(X).toarray(), b.toarray())


def test_scaler_rule_follows_the_width():
    assert isinstance(feature_scaler("auto", 123), FeatureScaler)
    assert isinstance(feature_scaler("auto", 1 << 20), MaxAbsScaler)
    assert isinstance(feature_scaler("maxabs", 10), MaxAbsScaler)
    with pytest.raises(ValueError, match="scale rule"):
        feature_scaler("zscore", 10)
    # on features >= 0 with an implicit zero, max-abs is min-max to [0, 1]
    X = sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0], [1.5, 1.0]]))
    np.testing.assert_array_equal(MaxAbsScaler().fit_transform(X).toarray(),
                                  FeatureScaler().fit_transform(X).toarray())


def test_train_scale_on_a_wide_file_stores_max_abs_and_predict_applies_it(tmp_path):
    X = compact_data(n=200, d=10, seed=7, exact=False)
    y = np.where(X[:, 0].toarray().ravel() >= 0, 1, -1)
    W, _ = scatter(X, 1 << 22, seed=2)
    data = tmp_path / "wide.svm"
    ok.save_libsvm(data, W, y)
    model = tmp_path / "m.npz"
    run = subprocess.run([sys.executable, "-m", "onlinekern.train", "-a", "dsg", str(data), "--scale",
                          "--model", str(model), "-q"], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr
    learner, extra = ok.load_model(model, return_extra=True)
    assert extra["feature_scaler"]["kind"] == "MaxAbsScaler"
    fs = scaler_from_state(extra["feature_scaler"])
    Xf, yf = ok.load_libsvm(data, n_features=learner.n_features_in_)
    expected = np.mean(learner.predict(fs.transform(Xf)) == yf)
    pred = subprocess.run([sys.executable, "-m", "onlinekern.predict", str(model), str(data)],
                          capture_output=True, text=True, cwd=REPO)
    assert pred.returncode == 0, pred.stderr
    assert f"accuracy = {100 * expected:.2f}%" in pred.stdout


# ---- river --------------------------------------------------------------------------------------

def test_river_adapter_hashes_into_2_20_columns_at_the_cost_of_the_nonzeros():
    pytest.importorskip("river")
    from onlinekern import river_adapter
    assert river_adapter.HASH_WIDTH == 1 << 20
    model = river_adapter.OnlinekernClassifier("dsg", params={"gamma": 0.5, "batch_size": 4})
    assert model.n_features == 1 << 20
    rng = np.random.default_rng(0)
    tracemalloc.start()
    try:
        correct = 0
        for t in range(300):
            x = {f"w{j}": float(v) for j, v in zip(rng.choice(5000, 5, replace=False), rng.random(5))}
            x["signal"] = float(rng.normal())
            label = x["signal"] > 0
            correct += t >= 150 and model.predict_one(x) == label
            model.learn_one(x, label)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak                  # 2^20 doubles alone would be 8 MB per row
    assert correct > 0.7 * 150
    assert model.hashed_row({"a": 1.0}).shape == (1, 1 << 20)


# ---- the tools ----------------------------------------------------------------------------------

def test_column_permutation_is_one_to_one_and_inverts():
    for n in (1, 2, 3, 10, 1000, 4097):
        p = harness.ColumnPermutation(n, seed=n)
        img = p(np.arange(n))
        assert sorted(img.tolist()) == list(range(n))
        np.testing.assert_array_equal(p.inverse(img), np.arange(n))
    big = harness.ColumnPermutation(1 << 40, seed=3)
    x = np.array([0, 5, (1 << 40) - 1])
    np.testing.assert_array_equal(big.inverse(big(x)), x)
    assert not np.array_equal(harness.ColumnPermutation(1000, 1)(np.arange(5)),
                              harness.ColumnPermutation(1000, 2)(np.arange(5)))


def test_scatter_tool_round_trip(tmp_path):
    X = compact_data(n=50, d=12, seed=8, exact=False)
    y = np.arange(50) % 3
    src, wide, back = tmp_path / "in.svm", tmp_path / "wide.svm", tmp_path / "back.svm"
    ok.save_libsvm(src, X, y)
    for a, b, extra in ((src, wide, []), (wide, back, ["--inverse"])):
        run = subprocess.run([sys.executable, str(TOOLS / "scatter_columns.py"), str(a), str(b),
                              "--columns", str(WIDE), "--seed", "4"] + extra, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
    assert back.read_text() == src.read_text()
    Xw, yw = ok.load_libsvm(wide, n_features=WIDE)
    cols = harness.ColumnPermutation(WIDE, 4)(np.arange(12))
    np.testing.assert_array_equal(yw, y)
    np.testing.assert_array_equal(Xw[:, cols].toarray(), X.toarray())
    assert Xw.nnz == X.nnz
    bad = tmp_path / "bad.svm"
    bad.write_text("1 3:1 99:2\n")
    run = subprocess.run([sys.executable, str(TOOLS / "scatter_columns.py"), str(bad), str(tmp_path / "o"),
                          "--columns", "50"], capture_output=True, text=True)
    assert run.returncode != 0 and "bad.svm:1" in run.stderr


def test_text_stream_is_reproducible_with_the_documented_rows(tmp_path):
    a, b = tmp_path / "a.svm", tmp_path / "b.svm"
    text_tool.TextStream(1 << 20, 3).write(a, 5000)
    text_tool.TextStream(1 << 20, 3).write(b, 5000)
    assert a.read_bytes() == b.read_bytes()
    X, y = ok.load_libsvm(a)
    nnz = np.diff(X.indptr)
    assert nnz.min() >= text_tool.MIN_WORDS and nnz.max() <= text_tool.MAX_WORDS
    assert nnz.max() > 200 and nnz.min() < 40                 # the range is used
    np.testing.assert_allclose(np.sqrt(X.multiply(X).sum(axis=1)).A.ravel(), 1.0, rtol=1e-4)
    assert 0.4 < np.mean(y > 0) < 0.6
    assert X.shape[1] <= 1 << 20
    # the same rows at 2^24 (one to one) and 2^16 (hashed) columns: same labels and values
    other = {}
    for width in (1 << 16, 1 << 24):
        cols, vals, indptr, labels = next(text_tool.TextStream(width, 3).chunks(5000))
        other[width] = (np.diff(indptr), labels, vals, indptr)
    np.testing.assert_array_equal(other[1 << 24][0], nnz[:text_tool.CHUNK])
    np.testing.assert_array_equal(other[1 << 24][1], y[:text_tool.CHUNK])
    for i in range(20):           # each row's values, as a set, are the same (columns differ)
        np.testing.assert_allclose(np.sort(X[i].data), np.sort(other[1 << 24][2][other[1 << 24][3][i]:other[1 << 24][3][i + 1]]),
                                   rtol=1e-5)
    n16 = other[1 << 16][0]
    np.testing.assert_array_equal(other[1 << 16][1], y[:text_tool.CHUNK])
    assert np.all(n16 <= nnz[:text_tool.CHUNK]) and np.mean(n16 == nnz[:text_tool.CHUNK]) > 0.8


def test_stream_on_a_2_24_column_text_file_and_predict(tmp_path):
    """train --stream on a wide text-like file (width selection on the first chunk, the chosen
    scale applied per chunk), its model file, and predict on the same file agree."""
    data, model = tmp_path / "text.svm", tmp_path / "m.npz"
    text_tool.TextStream(WIDE, 1).write(data, 600)
    run = subprocess.run([sys.executable, "-m", "onlinekern.train", "-a", "dsg", str(data), "--stream",
                          "--chunk-rows", "200", "--classes=-1,1", f"--n-features={WIDE}", "--model", str(model),
                          "-q"], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr
    learner = ok.load_model(model)
    assert learner.n_features_in_ == WIDE
    s = learner.__dict__.get("feature_scale_")
    assert s is None or isinstance(s, ColumnScale)
    X, y = ok.load_libsvm(data, n_features=WIDE)
    expected = np.mean(learner.predict(X) == y)
    pred = subprocess.run([sys.executable, "-m", "onlinekern.predict", str(model), str(data)],
                          capture_output=True, text=True, cwd=REPO)
    assert pred.returncode == 0, pred.stderr
    assert f"accuracy = {100 * expected:.2f}%" in pred.stdout
