"""Random features on wide sparse data (issue 26): the keyed rule of onlinekern._core.features.

A column's frequencies are drawn from the counter-based generator keyed by (seed, column), so they
do not depend on n_features or on the order columns appear in, and no buffer is sized by
n_features.  The row cache is transparent (same bits at any size), FOGD/RRF/DSG learn on a
scattered copy as on the compact one, and model files of wide data round-trip exactly.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern._core import features as fm
from onlinekern._core.counter_rng import normals, zig_normals
from onlinekern.seeding import FEATURE_ROWS

from reference_rrf import rrf_gradients, RHO_RANGE

WIDE = 1 << 24


def _scattered(X, width, seed=0):
    """X (dense, d columns) with column c moved to cmap[c], a seeded one-to-one map into width."""
    cmap = np.sort(np.random.default_rng(seed).choice(width, size=X.shape[1], replace=False))
    cmap = np.random.default_rng(seed + 1).permutation(cmap)     # not order-preserving
    C = sp.csr_matrix(X)
    W = sp.csr_matrix((C.data, cmap[C.indices], C.indptr), shape=(X.shape[0], width))
    W.sort_indices()
    return W, cmap


def _data(T=600, d=12, seed=0, density=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d)) * (rng.random((T, d)) < density)
    y = np.where(np.sin(X[:, 0] * 2) + X[:, 1] ** 2 - 0.5 * X[:, 2] > 0.3, 1, -1)
    return X, y


def test_rule_auto_keeps_stored_E_on_narrow_data():
    assert fm.feature_rule(123, 400) == "features"
    assert fm.feature_rule(1 << 22, 400) == "keyed"
    assert fm.feature_rule(10, 10, "keyed") == "keyed"
    with pytest.raises(ValueError, match="rule"):
        fm.feature_rule(10, 10, "sometimes")
    narrow = ok.RandomFourierMap(123, 400, 0.5, seed=3)
    assert narrow.rule == "features" and narrow.E.shape == (123, 400)


@pytest.mark.parametrize("version", [2, 1])
@pytest.mark.parametrize("seed", [0, 11])
def test_row_is_independent_of_width_and_equals_python_twin(seed, version):
    cols = np.array([0, 5, 4_000_000, 16_000_000, 123])
    D = 37
    kv = {} if version == fm.KEYED_VERSION else {"keyed_version": version}
    a = ok.RandomFourierMap(WIDE, D, 0.5, seed=seed, **kv)
    b = ok.RandomFourierMap(1 << 23, D, 0.5, seed=seed, rule="keyed", **kv)
    c = ok.RandomFourierMap(16_000_001, D, 2.0, seed=seed, rule="keyed", cache_bytes=0, **kv)
    assert a.rule == b.rule == c.rule == "keyed" and a.E is None and a.keyed_version == version
    ra = a.rows(cols)
    draw = zig_normals if version == 2 else (lambda *args: normals(*args))
    twin = np.array([draw(seed, FEATURE_ROWS, int(col), D) for col in cols])
    np.testing.assert_array_equal(ra, twin)
    np.testing.assert_array_equal(ra, fm.keyed_rows(seed, cols, D, version))
    np.testing.assert_array_equal(b.rows(cols[cols < (1 << 23)]), twin[cols < (1 << 23)])
    np.testing.assert_array_equal(c.rows(cols[::-1]), twin[::-1])
    # a longer D extends the row: the first D frequencies are the same
    np.testing.assert_array_equal(ok.RandomFourierMap(WIDE, D + 8, 0.5, seed=seed, **kv).rows(cols)[:, :D], twin)
    assert not np.array_equal(ok.RandomFourierMap(WIDE, D, 0.5, seed=seed + 1, **kv).rows(cols), twin)
    # the two generators draw other rows
    other = fm.keyed_rows(seed, cols, D, 3 - version)
    assert not np.any(other == twin)
    with pytest.raises(ValueError, match="columns"):
        b.rows([1 << 23])


def test_features_independent_of_width_and_order_and_equal_numpy():
    X, _ = _data(T=50)
    W, cmap = _scattered(X, WIDE)
    D, g = 64, 0.3
    z1 = ok.RandomFourierMap(WIDE, D, g, seed=5).transform(W)
    # another width (same columns) and the rows presented backwards: same bits
    W2 = sp.csr_matrix((W.data, W.indices, W.indptr), shape=(W.shape[0], WIDE + 77))
    z2 = ok.RandomFourierMap(WIDE + 77, D, g, seed=5).transform(W2[::-1])[::-1]
    np.testing.assert_array_equal(z1, z2)
    # NumPy: z = D^-1/2 [cos(sqrt(2g) x E); sin(...)] with E's rows from the Python twin
    E = fm.keyed_rows(5, cmap, D)
    A = np.sqrt(2 * g) * X @ E
    ref = np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(D)
    np.testing.assert_allclose(z1, ref, rtol=1e-11, atol=1e-12)


def test_kernel_approximation_on_wide_sparse_pairs():
    rng = np.random.default_rng(2)
    n, nnz, D, g = 40, 30, 4000, 0.05
    rows = []
    for _ in range(n):
        cols = rng.choice(WIDE, size=nnz, replace=False)
        rows.append((cols, rng.normal(size=nnz)))
    # pairs share some columns: copy half of the previous row's columns
    data, ind, ptr = [], [], [0]
    for i, (cols, vals) in enumerate(rows):
        if i % 2:
            cols = np.concatenate([rows[i - 1][0][:nnz // 2], cols[nnz // 2:]])
            vals = np.concatenate([rows[i - 1][1][:nnz // 2] + 0.1 * vals[:nnz // 2], vals[nnz // 2:]])
        o = np.argsort(cols)
        ind.extend(cols[o]); data.extend(vals[o]); ptr.append(len(ind))
    X = sp.csr_matrix((data, ind, ptr), shape=(n, WIDE))
    Z = ok.RandomFourierMap(WIDE, D, g, seed=1).transform(X)
    approx = np.einsum("ij,ij->i", Z[0::2], Z[1::2])
    diff = X[0::2] - X[1::2]
    exact = np.exp(-g * np.asarray(diff.multiply(diff).sum(axis=1)).ravel())
    # each paired feature's term has variance <= 1/2: the estimate's sd is <= 1/sqrt(2 D)
    assert np.max(np.abs(approx - exact)) < 5 / np.sqrt(2 * D)
    assert abs(np.mean(approx - exact)) < 3 / np.sqrt(2 * D * len(exact))
    assert exact.min() > 0.05                 # pairs close enough that the kernel is not ~0


def test_cache_size_never_changes_bits():
    X, _ = _data(T=80, d=30)
    W, _ = _scattered(X, WIDE)
    D = 50
    big = ok.RandomFourierMap(WIDE, D, 0.4, seed=2)
    one = ok.RandomFourierMap(WIDE, D, 0.4, seed=2, cache_bytes=0)
    few = ok.RandomFourierMap(WIDE, D, 0.4, seed=2, cache_bytes=5 * D * 8)
    zb = big.transform(W)
    np.testing.assert_array_equal(zb, one.transform(W))
    np.testing.assert_array_equal(zb, few.transform(W))
    assert one.cache_stats()["rows"] == 1 and few.cache_stats()["rows"] == 5
    sb, so = big.cache_stats(), one.cache_stats()
    assert sb["misses"] == 30 and sb["hits"] == W.nnz - 30         # every column drawn once
    assert so["misses"] > sb["misses"]


def test_cache_keeps_a_reused_row_against_rows_seen_once():
    """A miss replaces a line not hit since it was drawn before one that was: a column asked for
    again survives a run of columns seen once (plain LRU would evict it), and the rows are the
    same numbers either way."""
    D = 16
    fmap = ok.RandomFourierMap(WIDE, D, 0.4, seed=2, cache_bytes=8 * D * 8)      # one set of 8 lines
    hot, once = 123_457, np.arange(1_000_000, 1_000_008)
    got = np.vstack([fmap.rows([hot, hot]), fmap.rows(once), fmap.rows([hot])])
    assert fmap.cache_stats() == {"rows": 8, "ways": 8, "hits": 2, "misses": 9, "epochs": 0}
    np.testing.assert_array_equal(got, fm.keyed_rows(2, np.r_[hot, hot, once, hot], D))


def test_cache_use_clock_rescaled_keeps_the_order_of_use():
    """The cache's use clock is halved (every 2^19 lookups for a small cache), lines' ticks and
    their reuse flags with it: afterwards a miss still replaces the line not hit since it was drawn,
    else the least recently used one, and the rows are the same numbers."""
    D = 2
    fmap = ok.RandomFourierMap(WIDE, D, 0.4, seed=2, cache_bytes=8 * D * 8)      # one set of 8 lines
    c = np.arange(500, 508)
    fmap.rows(np.tile(c, ((1 << 20) - 96) // 8))          # 8 misses, then hits: every line reused
    fmap.rows(np.full(200, c[0]))                          # the clock passes 2^20 here
    st = fmap.cache_stats()
    assert st["epochs"] == 1 and st["misses"] == 8
    # 99 replaces c[1] (least recent: c[0] was hit since); 98 replaces 99 (not hit since drawn)
    seq = np.r_[99, 98, c]
    missed, got = [], []
    for col in seq:
        before = fmap.cache_stats()["misses"]
        got.append(fmap.rows([col]))
        missed.append(fmap.cache_stats()["misses"] - before)
    assert missed == [1, 1, 0, 1, 0, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(np.vstack(got), fm.keyed_rows(2, seq, D))


def test_learners_same_bits_with_a_one_row_cache(monkeypatch):
    X, y = _data(T=400)
    W, _ = _scattered(X, WIDE)
    kw = dict(gamma=0.3, preset="paper", seed=4)
    runs = {}
    for cache in (fm.ROW_CACHE_BYTES, 0):
        monkeypatch.setattr(fm, "ROW_CACHE_BYTES", cache)
        f = ok.FOGD(n_components=64, **kw).fit(W, y)
        r = ok.RRF(n_components=32, eta_gamma=1e-2, **kw).fit(W, y)
        runs[cache] = (f.core_.weights, f.decision_function(W), r.core_.weights, r.log_bandwidth_)
        assert f.feature_map_.rule == "keyed"
    for a, b in zip(*runs.values()):
        np.testing.assert_array_equal(a, b)


def test_race_candidates_share_one_row_cache(monkeypatch):
    """gamma="auto" on wide data: the race's candidate maps (one seed, one D, other widths) draw a
    column's keyed row once for all of them, into one cache kept whole to the end of the pass; the
    bits are those of a race whose candidates regenerate every row (a one-row cache)."""
    X, y = _data(T=300)
    W, _ = _scattered(X, WIDE)
    runs = {}
    for cache in (fm.ROW_CACHE_BYTES, 0):
        monkeypatch.setattr(fm, "ROW_CACHE_BYTES", cache)
        f = ok.FOGD(n_components=32, seed=4).fit(W, y)
        r = ok.RRF(n_components=16, seed=4).fit(W, y)
        assert f.width_choice_["of"] > 1 and r.width_choice_["of"] > 1
        runs[cache] = (f.gamma_, f.core_.weights, f.decision_function(W), r.gamma_, r.core_.weights,
                       r.log_bandwidth_, r.decision_function(W))
        if cache:
            for m in (f.core_.fmap, r.core_.fmap):
                st = m.cache_stats()
                assert m.cache_shared and st["rows"] == fm.ROW_CACHE_BYTES // (8 * m.D)   # kept whole
                # every candidate's steps and the predictions looked rows up in the one cache,
                # which drew each of the 12 columns once
                assert st["misses"] == 12 and st["hits"] + st["misses"] > 2 * W.nnz
    for a, b in zip(*runs.values()):
        np.testing.assert_array_equal(a, b)


def test_join_cache_only_between_maps_of_the_same_rows():
    a = ok.RandomFourierMap(WIDE, 16, 0.5, seed=1)
    b = ok.RandomFourierMap(WIDE, 16, 2.0, seed=1)          # another width: the same rows
    assert not b.join_cache(ok.RandomFourierMap(WIDE, 16, 0.5, seed=2))      # other seed
    assert not b.join_cache(ok.RandomFourierMap(WIDE, 8, 0.5, seed=1))       # other D
    assert not b.join_cache(ok.RandomFourierMap(100, 16, 0.5, seed=1))       # stored E
    assert not b.join_cache(ok.RandomFourierMap(WIDE, 16, 0.5, seed=1, keyed_version=1))   # other rows
    assert not b.cache_shared
    assert b.join_cache(a) and a.cache_shared and b.cache_shared
    np.testing.assert_array_equal(b.rows([5, 7]), fm.keyed_rows(1, [5, 7], 16))
    assert a.cache_stats()["misses"] == 2 and a.rows([7]).shape == (1, 16)
    assert a.cache_stats()["misses"] == 2                   # drawn through b, found by a
    a.share_cache(4)                                        # shared caches stay whole
    assert a.cache_stats()["rows"] == b.cache_stats()["rows"] == fm.ROW_CACHE_BYTES // (8 * 16)
    with pytest.raises(ValueError, match="cannot take another"):
        a.join_cache(ok.RandomFourierMap(WIDE, 16, 0.5, seed=1))
    del a                                                   # b keeps the cache it uses alive
    np.testing.assert_array_equal(b.rows([9]), fm.keyed_rows(1, [9], 16))


def test_rrf_gradient_rows_kept_from_the_projection_same_bits(monkeypatch):
    # a few nonzeros a row over 200 columns: a 56-row cache keeps each row's rows pinned from the
    # projection to the rho-gradient (kept_row) and evicts between rows; the bits are those of the
    # full cache (no eviction) and of the one-row cache (nothing kept: every row fetched again)
    X, y = _data(T=400, d=200, density=0.03)
    W, _ = _scattered(X, WIDE)
    runs = []
    for cache in (fm.ROW_CACHE_BYTES, 56 * 32 * 8, 0):
        monkeypatch.setattr(fm, "ROW_CACHE_BYTES", cache)
        r = ok.RRF(n_components=32, gamma=0.3, eta_gamma=3e-2, preset="paper", seed=4).fit(W, y)
        stats = r.core_.fmap.cache_stats()
        runs.append((r.core_.weights, r.log_bandwidth_, r.decision_function(W)))
    assert stats["rows"] == 1
    assert np.any(runs[0][1] != runs[0][1][0])              # the bandwidths did move
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["fogd", "rrf", "dsg", "cdsg"])
def test_one_and_two_threads_same_bits(name):
    X, y = _data(T=300)
    W, _ = _scattered(X, WIDE)
    out = []
    for nt in (1, 2):
        if name == "fogd":
            la = ok.FOGD(n_components=600, gamma=0.3, preset="paper", seed=1, n_threads=nt)
        elif name == "rrf":
            la = ok.RRF(n_components=64, gamma=0.3, eta_gamma=1e-2, preset="paper", seed=1, n_threads=nt)
        else:
            la = ok.make_learner(name, gamma=0.3, preset="paper", seed=1, n_threads=nt)
        la.fit(W, y)
        if name in ("dsg", "cdsg"):
            la.core_.par_threshold = 0             # split every prediction over the threads
            la.partial_fit(W[:64], y[:64])
        out.append(la.decision_function(W))
    np.testing.assert_array_equal(out[0], out[1])


def _rrf_oracle(X, y, E, g0, eta, eta_rho):
    """ref_rrf's loop (tests/reference_rrf.py) with a given E."""
    d, D = E.shape
    rho0 = 0.5 * np.log(2.0 * g0)
    rho = np.full(d, rho0)
    w = np.zeros((1, 2 * D))
    scores = []
    for t in range(X.shape[0]):
        _, gw, gr, f = rrf_gradients(X[t], y[t], "binary", w, rho, E)
        scores.append(f[0])
        w = w - eta * gw
        rho = np.clip(rho - eta_rho * gr, rho0 - RHO_RANGE, rho0 + RHO_RANGE)
    return np.array(scores), w[0], rho


def test_rrf_on_scattered_data_is_rrf_with_the_columns_keyed_rows():
    """The scattered copy learns exactly the RRF of the compact copy whose E holds the keyed rows of
    the columns it was scattered to (up to the summation order of the nonzeros)."""
    X, y = _data(T=300, d=8)
    W, cmap = _scattered(X, WIDE, seed=3)
    D, g0, eta, eg = 24, 0.4, 0.3, 0.05
    la = ok.RRF(n_components=D, gamma=g0, eta=eta, eta_gamma=eg, preset="paper", seed=7).fit(W, y)
    s_ref, w_ref, rho_ref = _rrf_oracle(X, y, fm.keyed_rows(7, cmap, D), g0, eta, eg)
    np.testing.assert_allclose(la.core_.weights[0], w_ref, rtol=1e-8, atol=1e-10)
    cols, rho = la.column_log_bandwidth_
    assert sorted(cols) == sorted(cmap)
    where = {int(c): n for n, c in enumerate(cmap)}
    np.testing.assert_allclose(rho, rho_ref[[where[int(c)] for c in cols]], rtol=1e-8, atol=1e-10)
    dense = la.log_bandwidth_
    assert dense.shape == (WIDE,)
    np.testing.assert_array_equal(dense[cols], rho)
    assert np.all(np.delete(dense[:1000], np.intersect1d(cols, np.arange(1000))) == la.core_.rho0)
    np.testing.assert_allclose(la.decision_function(W).ravel(), la.transform(W) @ la.core_.weights[0],
                               rtol=1e-10, atol=1e-12)


def test_rrf_learns_on_scattered_copy_like_on_compact():
    X, y = _data(T=3000, d=10, seed=5)
    W, _ = _scattered(X, WIDE, seed=9)
    rates = []
    for data in (X, W):
        mist = []
        for s in range(4):
            la = ok.RRF(n_components=64, gamma=0.3, eta_gamma=1e-2, preset="paper", seed=s).fit(data[:2000], y[:2000])
            mist.append(np.mean(la.predict(data[2000:]) != y[2000:]))
        rates.append(np.mean(mist))
    assert rates[1] < 0.3                              # it learns (majority rate ~0.5)
    assert abs(rates[0] - rates[1]) < 0.04


@pytest.mark.parametrize("make", [
    lambda: ok.FOGD(n_components=40, gamma=0.3, preset="paper", seed=2),
    lambda: ok.FOGD(n_components=40, gamma=0.3, preset="paper", seed=2, average=True),
    lambda: ok.RRF(n_components=30, gamma=0.3, eta_gamma=1e-2, preset="paper", seed=2),
    lambda: ok.make_learner("udsg", gamma=0.3, preset="paper", seed=2),
])
def test_wide_model_files_round_trip(tmp_path, make):
    X, y = _data(T=301)
    W, _ = _scattered(X, WIDE)
    la = make().fit(W[:200], y[:200])
    path = tmp_path / "m.npz"
    ok.save_model(la, path)
    assert path.stat().st_size < 200_000                     # D + columns seen, not d x D
    lb = ok.load_model(path)
    np.testing.assert_array_equal(lb.decision_function(W), la.decision_function(W))
    np.testing.assert_array_equal(lb.partial_fit(W[200:], y[200:]).decision_function(W),
                                  la.partial_fit(W[200:], y[200:]).decision_function(W))


def test_old_states_without_rule_load_as_stored_E():
    X, y = _data(T=100)
    la = ok.FOGD(n_components=20, gamma=0.3, preset="paper", seed=1).fit(X, y)
    st = la.core_.get_state()
    assert st["feature_rule"] == "features"
    del st["feature_rule"], st["row_cache_bytes"]
    core = type(la.core_)()
    core.set_state(st)
    assert core.fmap.rule == "features"
    np.testing.assert_array_equal(core.fmap.E, la.core_.fmap.E)


@pytest.mark.parametrize("make", [
    lambda: ok.FOGD(n_components=24, gamma=0.3, seed=2),
    lambda: ok.make_learner("dualsgd", n_components=24, gamma=0.3, seed=2, budget=20),
])
def test_keyed_version_1_models_load_and_go_on_with_their_rows(make):
    """A wide model saved before the ziggurat rows (no ``keyed_version`` in its state) is a
    version-1 model: it loads with the Philox + Box-Muller rows it learnt with and goes on exactly
    as a version-1 learner; a new model records version 2, and its state round-trips."""
    X, y = _data(T=240)
    W, cmap = _scattered(X, WIDE)
    new = make().fit(W[:120], y[:120])
    st = new.core_.get_state()
    assert st["keyed_version"] == 2 and new.core_.fmap.keyed_version == 2
    # a version-1 learner: a learner whose map is rebuilt with the old rows after its first rows
    n0 = int(np.argmax(y != y[0])) + 1                       # the first rows that hold both labels
    old = make().fit(W[:n0], y[:n0])
    st1 = old.core_.get_state()
    st1["keyed_version"] = 1
    old.core_.set_state(st1)
    assert old.core_.fmap.keyed_version == 1
    np.testing.assert_array_equal(old.core_.fmap.rows(cmap[:3]), fm.keyed_rows(2, cmap[:3], 24, 1))
    old.partial_fit(W[n0:120], y[n0:120])
    st_old = old.core_.get_state()
    assert st_old["keyed_version"] == 1
    del st_old["keyed_version"]                              # as a file written before version 2
    core = type(old.core_)()
    core.set_state(st_old)
    assert core.fmap.keyed_version == 1
    old.core_ = core
    ref = make().fit(W[:n0], y[:n0])
    ref.core_.set_state(dict(st1))
    ref.partial_fit(W[n0:], y[n0:])
    np.testing.assert_array_equal(old.partial_fit(W[120:], y[120:]).decision_function(W), ref.decision_function(W))
    # and version 1's rows are other rows: the same stream learns other scores
    assert not np.array_equal(ref.decision_function(W), make().fit(W, y).decision_function(W))
    core2 = type(new.core_)()
    core2.set_state(st)
    assert core2.fmap.keyed_version == 2


def test_float32_refused_on_wide_data():
    with pytest.raises(ValueError, match="float32"):
        ok.RandomFourierMap(WIDE, 100, 0.5, precision="float32")
    X, y = _data(T=20)
    W, _ = _scattered(X, WIDE)
    with pytest.raises(ValueError, match="float32"):
        ok.FOGD(n_components=100, gamma=0.3, preset="paper", precision="float32").fit(W, y)


def test_memory_follows_cache_and_columns_not_width():
    m = ok.RandomFourierMap(WIDE, 400, 0.5, seed=0)
    assert m.nbytes() <= fm.ROW_CACHE_BYTES * 1.1 + 64 * 1024
    small = ok.RandomFourierMap(WIDE, 400, 0.5, seed=0, cache_bytes=1 << 20)
    assert small.nbytes() <= (1 << 20) * 1.1 + 64 * 1024
    narrow = ok.RandomFourierMap(100, 400, 0.5, seed=0)
    assert narrow.nbytes() >= 100 * 400 * 8
    X, y = _data(T=200, d=12)
    W, _ = _scattered(X, WIDE)
    r = ok.RRF(n_components=16, gamma=0.3, preset="paper").fit(W, y)
    st = r.core_.get_state()
    assert st["rho"].shape == (12,) and st["columns"].shape == (12,) and "E" not in st
    d = ok.make_learner("dsg", gamma=0.3, preset="paper").fit(W, y)
    assert len(d.core_.ocols) == 12 and d.core_.ccap <= 64


HUGE_PROBE = """
import sys
import numpy as np
import onlinekern as ok
from onlinekern._core.columns import ColumnMap


def advised():      # KiB of mappings advised onto transparent huge pages ("hg" in smaps' VmFlags)
    total = size = 0
    for line in open("/proc/self/smaps"):
        if line.startswith("Size:"):
            size = int(line.split()[1])
        elif line.startswith("VmFlags:") and " hg" in line:
            total += size
    return total


out = []
b = advised()
m = ok.RandomFourierMap(1 << 24, 100, 0.5, seed=0, cache_bytes=32 << 20)
out.append(advised() - b)
b = advised()
small = ok.RandomFourierMap(1 << 24, 100, 0.5, seed=0, cache_bytes=1 << 20)
out.append(advised() - b)
cols = np.arange(0, 1 << 21, dtype=np.int32) * 3
b = advised()
cm = ColumnMap(cols)                 # a table of 2^22 buckets: 32 MiB
out.append(advised() - b)
print(m.rule, small.rule, len(cm), *out)
"""


@pytest.mark.skipif(not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled")
                    or not os.path.exists("/proc/self/smaps"),
                    reason="no transparent huge pages here (Linux with THP only)")
def test_keyed_row_cache_and_column_map_are_advised_onto_huge_pages():
    """The keyed rule's row cache and a column map past 4 MiB ask for huge pages (include/ok_mem.h),
    as NumPy does for its arrays: their scattered reads are then not TLB misses too.  The advice is
    a flag on the mapping, set whether or not the kernel finds huge pages to back it; measured in a
    fresh process, so no earlier test's freed and re-used memory is already advised."""
    out = subprocess.run([sys.executable, "-c", HUGE_PROBE], capture_output=True, text=True, check=True)
    rule, rule_small, n, cache_kib, small_kib, map_kib = out.stdout.split()
    assert (rule, rule_small, int(n)) == ("keyed", "keyed", 1 << 21)
    assert int(cache_kib) >= 30 * 1024           # the 32 MiB cache
    assert int(small_kib) == 0                   # 1 MiB: below NumPy's 4 MiB, no advice
    assert int(map_kib) >= 40 * 1024             # the 32 MiB table and its 8 MiB slot array


def test_dsg_wide_cache_is_transparent():
    X, y = _data(T=400)
    W, _ = _scattered(X, WIDE)
    sc = []
    for store in ("auto", False):
        la = ok.make_learner("dsg", gamma=0.3, preset="paper", seed=3, store_omega=store).fit(W, y)
        sc.append((la.decision_function(W), la.core_.coefficients))
    assert ok.make_learner("dsg", gamma=0.3, preset="paper").fit(W, y).core_.cache_blocks > 0
    np.testing.assert_array_equal(sc[0][0], sc[1][0])
    np.testing.assert_array_equal(sc[0][1], sc[1][1])


def test_transform_of_wide_csr_allocates_no_width_sized_array():
    import tracemalloc
    X, y = _data(T=30, d=20)
    W, _ = _scattered(X, WIDE)
    m = ok.RandomFourierMap(WIDE, 300, 0.5, seed=0)
    la = ok.RRF(n_components=50, gamma=0.3, preset="paper").fit(W, y)
    tracemalloc.start()
    try:
        m.transform(W)
        la.transform(W)
        la.decision_function(W)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20                 # one width-sized double array would be 128 MiB
