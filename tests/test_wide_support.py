"""Support vectors of wide sparse data: compact columns and the sparse slab (issue 26).

A support set over d > WIDE_D columns stores its SVs over the columns they actually hold
(compact mode) and, once those rows would be mostly zeros, as a CSR-like slab.  A query column no
SV has reads an all-zero column, so every kernel value is the one of the compact matrix: a matrix
and its copy scattered into millions of columns give the same scores and mistakes.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern._core import support
from onlinekern._core.support import SupportSet
from onlinekern.io.model import load_model, save_model
from onlinekern.registry import available_learners

#: One registry name per support-vector learner family (KernelCore subclasses).
SV_LEARNERS = ["perceptron", "ogd", "rbp", "forgetron", "projectron", "projectronpp", "bpas", "bsgd-removal",
               "bsgd-merge", "bogd", "bogdpp", "nogd", "sg", "dualsgd", "lasvm",
               "kons"]
#: DualSGD's random-feature part draws a frequency row per column index, so its scores change
#: with the columns' numbering; its support-vector part is checked separately.
COMPARABLE = [n for n in SV_LEARNERS if n != "dualsgd"]
GAMMA = 0.05


def scatter(X, cols, n_cols):
    """X with column j moved to cols[j] (a one-to-one map into n_cols columns)."""
    X = sp.csr_matrix(X).tocoo()
    return sp.csr_matrix((X.data, (X.row, np.asarray(cols)[X.col])), shape=(X.shape[0], n_cols))


def monotone_map(d, n_cols, seed=0):
    """Sorted random columns: each row's nonzeros keep their order, so sums keep their bits."""
    return np.sort(np.random.default_rng(seed).choice(n_cols, d, replace=False))


def shuffled_map(d, n_cols, seed=1):
    return np.random.default_rng(seed).permutation(n_cols)[:d]


def synthetic(n=700, d=30, seed=0, density=0.2):
    """Sparse real-valued rows (~6 nonzeros) with a nonlinear label."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, data_rvs=lambda k: rng.normal(size=k), format="csr")
    y = np.where(np.sin(2 * X[:, 0].toarray().ravel()) + X[:, 1].toarray().ravel() ** 2 > 0.1, 1.0, -1.0)
    return X, y


def make(name, **extra):
    cls = available_learners()[name]["class"]
    params = cls().get_params()
    kw = {"gamma": GAMMA}
    if "budget" in params:
        kw["budget"] = 40 if name != "nogd" else 30      # small: maintenance runs many times
    if name == "sg":
        kw["exact_predict"] = True                       # the estimator's features follow column ids
    kw.update(extra)
    return cls(**kw)


def scores(model, X):
    return model.predict(X) if model.task_ == "regression" else model.decision_function(X)


@pytest.fixture
def slab_always():
    """Compact rows move to the slab as soon as they widen (the slab path on small data)."""
    old = support.set_storage_limits(slab_width=0)
    yield
    support.set_storage_limits(*old)


def _compare(name, X, y, n_cols, exact):
    ref = make(name).fit(X, y)
    s0 = scores(ref, X[:300])
    for cols in (monotone_map(X.shape[1], n_cols), shuffled_map(X.shape[1], n_cols)):
        Xw = scatter(X, cols, n_cols)
        m = make(name).fit(Xw, y)
        assert m.core_.sv.storage in ("compact", "slab")
        assert m.core_.sv.n == ref.core_.sv.n
        s1 = scores(m, Xw[:300])
        if exact:
            np.testing.assert_array_equal(s1, s0)
        else:
            np.testing.assert_allclose(s1, s0, rtol=0, atol=1e-12)
        exact = False                                    # a shuffled map reorders the sums


@pytest.mark.parametrize("n_cols", [2 ** 22, 2 ** 24])
@pytest.mark.parametrize("name", COMPARABLE)
def test_scattered_copy_gives_the_same_scores(name, n_cols):
    X, y = synthetic()
    # merges, the Forgetron's SV queries, NOGD's SV-SV kernels and LASVM's kernel rows of SVs
    # sum over the compact columns' order (first appearance): equal to 1e-12
    _compare(name, X, y, n_cols, exact=name not in ("bsgd-merge", "forgetron", "nogd", "lasvm"))


@pytest.mark.parametrize("name", COMPARABLE)
def test_scattered_copy_in_the_slab_gives_the_same_scores(name, slab_always):
    X, y = synthetic(d=200, seed=3, density=0.03)     # compact rows would be mostly zeros
    ref = make(name).fit(X, y)
    Xw = scatter(X, monotone_map(X.shape[1], 2 ** 22), 2 ** 22)
    m = make(name).fit(Xw, y)
    assert m.core_.sv.storage == "slab"
    np.testing.assert_allclose(scores(m, Xw[:300]), scores(ref, X[:300]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", COMPARABLE)
def test_a9a_scattered_gives_the_same_mistakes(shared_data, name):
    X, y = ok.load_libsvm(str(shared_data.compressed("a9a")))
    X, y = sp.csr_matrix(X)[:1500], np.asarray(y)[:1500]
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 22), 2 ** 22)
    ref = make(name).fit(X, y)
    m = make(name).fit(Xw, y)
    s0, s1 = scores(ref, X[:500]), scores(m, Xw[:500])
    np.testing.assert_array_equal(np.sign(s1), np.sign(s0))           # the same mistakes
    if name == "bsgd-merge":        # merged SVs hold fractions, summed in another column order
        np.testing.assert_allclose(s1, s0, rtol=0, atol=1e-12)
    else:                           # 0/1 values: every distance is an exact integer in any order
        np.testing.assert_array_equal(s1, s0)


def test_bsgd_merge_partners_tied_in_exact_arithmetic_do_not_follow_the_column_order(shared_data):
    """a9a's binary rows and their duplicates give merge partners whose degradations are equal in
    exact arithmetic and differ by the rounding of sums over the columns, whose order the scatter
    permutes; the tie band (bsgd.pyx, L_TIE_RTOL) decides them by age in both copies.  Without it
    these 8,000 rows at B = 200 made 18.225 % mistakes compact and 17.925 % scattered."""
    X, y = ok.load_libsvm(str(shared_data.compressed("a9a")))
    X, y = sp.csr_matrix(X)[:8000], np.asarray(y)[:8000]
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 22), 2 ** 22)
    runs = []
    for data in (X.toarray(), Xw):
        la = ok.make_learner("bsgd-merge", budget=200, gamma=0.5, seed=0, n_threads=1)
        runs.append(ok.run_online(la, data, y, seed=0, run=0, checkpoints=None).error)
        assert la.core_.n_merges > 1000
    assert runs[0] == runs[1]


def test_dualsgd_runs_on_wide_data_with_its_support_vectors_in_original_columns():
    X, y = synthetic()
    cols = shuffled_map(X.shape[1], 2 ** 13)             # the d x D frequency matrix stays small
    Xw = scatter(X, cols, 2 ** 13)
    m = make("dualsgd", budget=20, k_merge=5).fit(Xw, y)
    assert m.core_.sv.storage == "compact"
    S = m.support_vectors_
    assert sp.issparse(S) and S.shape == (m.core_.sv.n, 2 ** 13)
    assert set(S.indices) <= set(cols)
    assert np.all(np.isfinite(scores(m, Xw[:50])))


# -- the store itself ----------------------------------------------------------------------------

def _rows(n=120, d=40, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, random_state=rng, data_rvs=lambda k: rng.normal(size=k), format="csr")
    return X


def _fill(s, X, cols):
    for i in range(X.shape[0]):
        r = X[i]
        s.add(r.data, cols[r.indices], alpha=np.full(s.C, 1.0 + i))


@pytest.mark.parametrize("storage", ["dense", "compact", "slab"])
def test_kernel_values_match_numpy(storage):
    X = _rows()
    d = 2 ** 24 if storage != "dense" else 40
    cols = monotone_map(40, d) if storage != "dense" else np.arange(40)
    s = SupportSet(d, 1, 0.3, -1, 1, storage=storage)
    _fill(s, X[:80], cols)
    S = X[:80].toarray()
    for q in range(80, 120):
        r = X[q]
        ref = np.exp(-0.3 * ((S - r.toarray()) ** 2).sum(1))
        np.testing.assert_allclose(s.kernel_values(r.data, cols[r.indices]), ref, rtol=1e-13, atol=0)
    # SV-SV kernels (NOGD, merges) against the same reference
    K = np.exp(-0.3 * ((S[:, None, :] - S[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose([s.kernel_pair(3, j) for j in range(80)], K[3], rtol=1e-13, atol=0)
    np.testing.assert_allclose(np.delete(s.sv_kernels(5), 5), np.delete(K[5], 5), rtol=1e-13, atol=0)
    np.testing.assert_allclose(s.kernel_pair(7, 7), 1.0, rtol=0, atol=1e-15)


def test_a_duplicate_has_kernel_one_in_the_slab():
    X = _rows()
    s = SupportSet(2 ** 24, 1, 0.3, -1, 1, storage="slab")
    _fill(s, X[:20], np.arange(40) * 1000)
    r = X[4]
    assert s.kernel_values(r.data, r.indices * 1000)[4] == 1.0


def test_slab_same_bits_at_one_and_two_threads(force_parallel):
    X = _rows(n=600)
    out = []
    for nt in (1, 2):
        s = SupportSet(2 ** 24, 2, 0.3, -1, nt, storage="slab")
        _fill(s, X[:500], np.arange(40) * 7919)
        out.append(np.concatenate([s.kernel_values(X[q].data, X[q].indices * 7919) for q in range(500, 600)]))
    np.testing.assert_array_equal(out[0], out[1])


@pytest.mark.parametrize("storage", ["compact", "slab"])
def test_remove_replace_and_merge_keep_values_right(storage):
    rng = np.random.default_rng(5)
    X = _rows(n=300)
    cols = shuffled_map(40, 2 ** 22)
    s = SupportSet(2 ** 22, 1, 0.2, 50, 1, storage=storage)
    ref = []                                           # dense rows of the SVs, slot order
    for i in range(300):
        r = X[i]
        if s.n == 50:
            op = rng.integers(3)
            j = int(rng.integers(s.n))
            if op == 0:                                # remove: the last SV moves into slot j
                s.discard(j)
                ref[j] = ref[-1]
                ref.pop()
            elif op == 1:                              # merge j with another SV into slot j
                k = (j + 1 + int(rng.integers(s.n - 1))) % s.n
                h = float(rng.uniform())
                s.merge(j, k, h, [1.0])                # ... and k leaves (the last moves in)
                ref[j] = h * ref[j] + (1 - h) * ref[k]
                ref[k] = ref[-1]
                ref.pop()
            else:
                s.discard(j)
                ref[j] = ref[-1]
                ref.pop()
        s.add(r.data, cols[r.indices])
        ref.append(r.toarray().ravel())
    S = np.array(ref)
    got = s.support_vectors.toarray()[:, cols]
    np.testing.assert_allclose(got, S, rtol=0, atol=1e-15)
    for q in range(250, 300):
        r = X[q]
        np.testing.assert_allclose(s.sqdists(r.data, cols[r.indices]), ((S - r.toarray()) ** 2).sum(1),
                                   rtol=1e-12, atol=1e-12)


def test_compact_rows_switch_to_the_slab_when_mostly_zeros():
    rng = np.random.default_rng(0)
    s = SupportSet(2 ** 24, 1, 0.1, -1, 1)
    assert s.storage == "compact"
    for i in range(400):                               # 10 nonzeros in fresh columns each time
        idx = np.sort(rng.choice(2 ** 24, 10, replace=False))
        s.add(rng.normal(size=10), idx)
    assert s.storage == "slab" and s.stored_nonzeros == 4000
    assert s.cmap.n == len(np.unique(s.support_vectors.indices))


def test_narrow_data_keep_the_dense_store():
    assert SupportSet(4096, 1, 1.0).storage == "dense"
    assert SupportSet(4097, 1, 1.0).storage == "compact"


def test_memory_of_a_wide_store_follows_the_nonzeros():
    rng = np.random.default_rng(1)
    B, nnz = 1000, 50
    s = SupportSet(2 ** 24, 1, 0.1, B, 1)
    for i in range(3 * B):                             # budget full: replace as BPAs does
        idx = np.sort(rng.choice(2 ** 24, nnz, replace=False))
        if s.n == B:
            s.discard(int(rng.integers(B)))
        s.add(rng.normal(size=nnz), idx)
    assert s.storage == "slab"
    stored = s.stored_nonzeros
    assert stored == B * nnz
    cols = s.cmap.n                                    # every column ever stored: <= 3 B nnz
    # values and columns (12 B per entry, twice for the pool's slack) + O(columns: the column
    # map and the scatter buffers) + O(B)
    assert s.nbytes() < 2 * 12 * 2 * stored + 128 * cols + 200 * B
    assert s.nbytes() < 60e6                           # a dense store would take 2 B 2^24 doubles


@pytest.mark.parametrize("storage", ["compact", "slab"])
def test_state_round_trip_keeps_the_bits(storage):
    X = _rows()
    cols = shuffled_map(40, 2 ** 23)
    s = SupportSet(2 ** 23, 2, 0.3, -1, 1, storage=storage)
    _fill(s, X[:80], cols)
    st = s.get_state()
    assert "X" not in st and st["data"].size == s.stored_nonzeros
    t = support._rebuild_support(st)
    assert t.storage == s.storage
    for q in range(80, 120):
        r = X[q]
        np.testing.assert_array_equal(t.kernel_values(r.data, cols[r.indices]),
                                      s.kernel_values(r.data, cols[r.indices]))


def test_support_vectors_are_csr_in_original_columns():
    X, y = synthetic()
    cols = shuffled_map(X.shape[1], 2 ** 22)
    m = make("perceptron").fit(scatter(X, cols, 2 ** 22), y)
    ref = make("perceptron").fit(X, y)
    S = m.support_vectors_
    assert sp.issparse(S) and S.shape == (ref.core_.sv.n, 2 ** 22)
    np.testing.assert_array_equal(S.toarray()[:, cols], ref.support_vectors_)


@pytest.mark.parametrize("name", ["bsgd-merge", "forgetron", "projectron", "nogd", "sg"])
def test_model_files_of_wide_data_round_trip(tmp_path, name):
    X, y = synthetic()
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 24), 2 ** 24)
    m = make(name).fit(Xw[:500], y[:500])
    path = tmp_path / "model.npz"
    save_model(m, path)
    assert path.stat().st_size < 2_000_000                # sparse SVs, not n_SV x 2^24
    m2 = load_model(path)
    np.testing.assert_array_equal(scores(m2, Xw[500:]), scores(m, Xw[500:]))
    m.partial_fit(Xw[500:600], y[500:600])               # and learning continues identically
    m2.partial_fit(Xw[500:600], y[500:600])
    np.testing.assert_array_equal(scores(m2, Xw[600:]), scores(m, Xw[600:]))


@pytest.mark.parametrize("layout", ["compact", "slab"])
@pytest.mark.parametrize("name", SV_LEARNERS)
def test_wide_layouts_same_bits_at_one_and_two_threads(name, layout, force_parallel, request):
    """Every SV learner, kernel rows and merge candidates split over threads: 1 and 2 threads give
    the same scores (a candidate block once wrote its SV-SV distances shifted by its start, so
    BSGD-merge on text differed between thread counts and stopped on a NaN score)."""
    if layout == "slab":
        request.getfixturevalue("slab_always")
    X, y = synthetic(d=200, density=0.03) if layout == "slab" else synthetic()    # slab: sparse rows
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 22), 2 ** 22)
    out = []
    for nt in (1, 2):
        m = make(name, n_threads=nt).fit(Xw, y)
        assert m.core_.sv.storage == layout
        out.append(scores(m, Xw[:200]))
    np.testing.assert_array_equal(out[0], out[1])


# -- dense rows of heavy slab SVs ----------------------------------------------------------------

@pytest.fixture
def heavy_always():
    """Every slab SV of two or more entries is also held as a dense row (the heavy path on small
    data); the byte bound left as it is."""
    old = support.set_storage_limits(heavy_nnz=2)
    yield
    support.set_storage_limits(*old)


@pytest.mark.parametrize("name", COMPARABLE)
def test_heavy_dense_rows_give_the_same_scores(name, slab_always, heavy_always):
    X, y = synthetic(d=200, seed=3, density=0.03)
    ref = make(name).fit(X, y)
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 22), 2 ** 22)
    m = make(name).fit(Xw, y)
    assert m.core_.sv.storage == "slab"
    assert m.core_.sv.dense_rows == sum(np.diff(m.support_vectors_.indptr) >= 2) > 0
    np.testing.assert_allclose(scores(m, Xw[:300]), scores(ref, X[:300]), rtol=0, atol=1e-12)


def test_heavy_rows_respect_their_byte_bound_and_can_be_switched_off(slab_always):
    X, y = synthetic(d=200, seed=3, density=0.03)
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 22), 2 ** 22)
    runs = {}
    # none, three rows (200 columns: the scatter buffers hold 256 compact columns), all
    for nbytes in (0, 3 * 8 * 256, 1 << 30):
        old = support.set_storage_limits(heavy_nnz=2, heavy_bytes=nbytes)
        try:
            m = make("bsgd-merge").fit(Xw, y)
        finally:
            support.set_storage_limits(*old)
        sv = m.core_.sv
        runs[nbytes] = (sv.dense_rows, scores(m, Xw[:300]))
    assert runs[0][0] == 0
    assert runs[3 * 8 * 256][0] == 3
    assert runs[1 << 30][0] > 3
    for _, s in runs.values():
        np.testing.assert_allclose(s, runs[0][1], rtol=0, atol=1e-12)


def test_a_share_of_the_row_bytes_drops_rows_and_keeps_the_scores(slab_always):
    # the width race gives each of its k running candidates 1/k of the bytes (share_caches)
    X, y = synthetic(n=1400, d=200, seed=3, density=0.03)
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 22), 2 ** 22)
    old = support.set_storage_limits(heavy_nnz=2, heavy_bytes=8 * 8 * 256)    # eight rows
    try:
        m = make("bsgd-merge").fit(Xw[:700], y[:700])
        sv = m.core_.sv
        assert sv.dense_rows == 8
        before = scores(m, Xw[:300])
        m.core_.share_caches(4)                 # two rows' bytes
        assert sv.dense_rows == 2
        np.testing.assert_allclose(scores(m, Xw[:300]), before, rtol=0, atol=1e-12)
        m.core_.share_caches(1)
        m.partial_fit(Xw[700:], y[700:])        # stores after the share is lifted get rows again
        assert sv.dense_rows == 8
        with pytest.raises(ValueError, match="parts"):
            sv.share_rows(0)
    finally:
        support.set_storage_limits(*old)


def test_bsgd_merge_sinks_on_text_get_dense_rows():
    """Near-orthogonal sparse rows (40 of 2^20 columns each): the most merged SV collects their
    columns and gets a dense row at the default threshold; the scores are those of a run without
    dense rows (to 1e-9), and so are the mistakes."""
    rng = np.random.default_rng(5)
    n, d = 2500, 2 ** 20
    rows = [np.unique(rng.integers(0, d, size=40)) for _ in range(n)]
    X = sp.csr_matrix((rng.random(sum(map(len, rows))) + 0.5, np.concatenate(rows),
                       np.concatenate([[0], np.cumsum([len(r) for r in rows])])), shape=(n, d))
    low = np.asarray(X[:, : d // 2].sum(axis=1)).ravel()      # mass in the lower half of the columns
    y = np.where(low > np.median(low), 1.0, -1.0)
    runs = []
    for nbytes in (0, None):
        old = support.set_storage_limits(heavy_bytes=nbytes)
        try:
            m = ok.make_learner("bsgd-merge", gamma=0.2, budget=50, lam=1e-4)
            r = ok.run_online(m, X, y, keep_scores=True)
        finally:
            support.set_storage_limits(*old)
        runs.append((m.core_.sv.dense_rows, r))
    assert runs[0][0] == 0 and runs[1][0] >= 1
    assert max(np.diff(m.support_vectors_.indptr)) >= support.HEAVY_NNZ
    np.testing.assert_allclose(runs[1][1].scores, runs[0][1].scores, rtol=0, atol=1e-9)
    assert runs[1][1].n_mistakes == runs[0][1].n_mistakes


def _vocab_rows(rng, vocab):
    """draw(m): a random sparse row of m nonzeros over the columns ``vocab`` -- (values, columns)
    in column order, and the row as a dense reference over ``vocab``."""
    def draw(m):
        pos = rng.choice(vocab.size, m, replace=False)
        order = np.argsort(vocab[pos])
        vals = rng.random(m) + 0.5
        r = np.zeros(vocab.size)
        r[pos] = vals
        return vals[order], vocab[pos][order], r
    return draw


@pytest.mark.parametrize("rows", [False, True])
def test_a_growing_sink_is_rewritten_in_its_room(rows):
    """BSGD's pattern on text: a fresh SV merged into the same large SV again and again, either
    way round.  The sink is rewritten where it is while its room (half again its size when it last
    moved) holds it, so the pool neither fills with dead copies of it nor compacts at every few
    merges; with a dense row it is scaled lazily (O(the fresh SV's nonzeros) per merge).  Kernel
    values, distances and the stored vectors stay those of a dense reference."""
    rng = np.random.default_rng(11)
    vocab = rng.choice(2 ** 22, 5000, replace=False)  # the columns used; references over them
    draw = _vocab_rows(rng, vocab)

    old = support.set_storage_limits(slab_width=0, heavy_nnz=256 if rows else 1 << 30)
    try:
        s = SupportSet(2 ** 22, 1, 0.05, -1, 1, storage="slab")
        ref = []
        for m in [400] + [30] * 20:                     # the sink-to-be, then 20 SVs that stay
            vals, cols, r = draw(m)
            s.add(vals, cols)
            ref.append(r)
        sink = 0
        for t in range(300):
            vals, cols, r = draw(30)
            fresh = s.add(vals, cols)
            ref.append(r)
            h = float(rng.uniform(0.05, 0.3))           # z = h x_fresh + (1 - h) x_sink
            if t % 3:
                s.merge(fresh, sink, h, [1.0])          # z in the fresh slot; the sink leaves
                ref[fresh] = h * ref[fresh] + (1 - h) * ref[sink]
                ref[sink] = ref[-1]
                assert fresh == s.n                     # so the merged SV moved into `sink`
            else:
                s.merge(sink, fresh, 1 - h, [1.0])      # z in the sink's slot; the fresh SV leaves
                ref[sink] = (1 - h) * ref[sink] + h * ref[fresh]
            ref.pop()
            if t % 50 == 49:                            # values read while the sink is scaled lazily
                R = np.array(ref)
                qv, q, dq = draw(50)
                np.testing.assert_allclose(s.sqdists(qv, q), ((R - dq) ** 2).sum(1), rtol=1e-12)
                k = int(rng.integers(1, s.n))
                want = np.exp(-0.05 * ((R[sink] - R[k]) ** 2).sum())
                assert s.kernel_pair(sink, k) == pytest.approx(want, rel=1e-12)   # lazy
                assert s.kernel_pair(k, sink) == pytest.approx(want, rel=1e-12)   # settled
        st = s.pool_stats()
        R = np.array(ref)
        assert s.n == 21 and s.stored_nonzeros == np.count_nonzero(R)
        assert np.count_nonzero(R[sink]) > 2000
        assert s.dense_rows == (1 if rows else 0)
        # the sink grew from 400 to over 2,000 entries: a handful of moves, not one per merge
        assert st["moves"] <= 8
        assert st["allocated"] <= 4 * s.stored_nonzeros + 1000
        qv, q, dq = draw(50)
        np.testing.assert_allclose(s.sqdists(qv, q), ((R - dq) ** 2).sum(1), rtol=1e-12)
        V = s.support_vectors
        np.testing.assert_allclose(V[:, vocab].toarray(), R, rtol=0, atol=1e-14)
        assert V.nnz == s.stored_nonzeros
        np.testing.assert_allclose(s.sqdists(qv, q), ((R - dq) ** 2).sum(1), rtol=1e-12)
    finally:
        support.set_storage_limits(*old)


@pytest.mark.parametrize("rows", [False, True])
def test_compactions_leave_a_growing_sink_its_spare_room(rows):
    """Between merges into a sink, fresh SVs of 300 entries come and go, so the pool fills with
    holes and compacts again and again.  A compaction keeps the sink's spare room (up to half its
    size), so the sink moves only when it outgrows that room -- a handful of times while it
    grows from 400 to thousands of entries -- not after every compaction (when its room shrank
    to its size at each, every compaction cost the next merge a move of the whole sink, and on
    text the compactions then came every few examples).  Distances stay a dense reference's."""
    rng = np.random.default_rng(5)
    vocab = rng.choice(2 ** 22, 6000, replace=False)
    draw = _vocab_rows(rng, vocab)

    old = support.set_storage_limits(slab_width=0, heavy_nnz=256 if rows else 1 << 30)
    try:
        s = SupportSet(2 ** 22, 1, 0.05, -1, 1, storage="slab")
        vals, cols, sink_ref = draw(400)
        sink = s.add(vals, cols)
        for t in range(400):
            for _ in range(3):                          # churn: holes at the end of the pool
                vals, cols, _r = draw(300)
                s.discard(s.add(vals, cols))
            vals, cols, r = draw(40)
            fresh = s.add(vals, cols)
            h = float(rng.uniform(0.05, 0.3))
            s.merge(sink, fresh, 1 - h, [1.0])          # z in the sink's slot; the fresh SV leaves
            sink_ref = (1 - h) * sink_ref + h * r
        st = s.pool_stats()
        assert s.n == 1 and np.count_nonzero(sink_ref) > 3000
        assert st["compactions"] >= 40                  # the churn did compact the pool, often
        assert st["moves"] <= 10                        # 400 -> 3,000+ entries: ~6 moves of 1.5x
        qv, q, dq = draw(50)
        np.testing.assert_allclose(s.sqdists(qv, q), [((sink_ref - dq) ** 2).sum()], rtol=1e-12)
        V = s.support_vectors
        np.testing.assert_allclose(V[:, vocab].toarray()[0], sink_ref, rtol=0, atol=1e-14)
    finally:
        support.set_storage_limits(*old)


def test_lazy_merges_give_the_same_bits_at_one_and_two_threads(slab_always, force_parallel):
    """BSGD-merge with dense rows for SVs of 20+ entries (merged SVs here, fresh rows hold ~6):
    merges into them are scaled lazily, kernel rows split over threads read the scale; 1 and 2
    threads give the same scores, within 1e-12 of a run without dense rows."""
    X, y = synthetic(n=1500, d=200, seed=4, density=0.03)
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 22), 2 ** 22)
    out = {}
    for nbytes, nt in ((None, 1), (None, 2), (0, 1)):
        old = support.set_storage_limits(heavy_nnz=20, heavy_bytes=nbytes)
        try:
            m = make("bsgd-merge", n_threads=nt).fit(Xw, y)
        finally:
            support.set_storage_limits(*old)
        out[nbytes, nt] = (m.core_.sv.dense_rows, scores(m, Xw[:400]))
    assert out[None, 1][0] > 0 and out[0, 1][0] == 0
    np.testing.assert_array_equal(out[None, 1][1], out[None, 2][1])
    np.testing.assert_allclose(out[None, 1][1], out[0, 1][1], rtol=0, atol=1e-12)


# -- bitmap-filtered gathers ---------------------------------------------------------------------

@pytest.mark.parametrize("name", COMPARABLE)
def test_bitmap_gathers_give_the_same_bits(name, slab_always, force_parallel):
    """From BITS_MIN_COLS compact columns on, the slab's kernel rows read a query's values through
    a bitmap of its columns (a clear bit reads 0.0, what the buffer holds there): exactly the
    scores of the direct gathers, with and without heavy SVs' dense rows, at 1 and 2 threads."""
    X, y = synthetic(d=200, seed=3, density=0.03)
    Xw = scatter(X, shuffled_map(X.shape[1], 2 ** 22), 2 ** 22)
    runs = {}
    for bits in (0, 1 << 40):
        old = support.set_bits_min_cols(bits)
        old_limits = support.set_storage_limits(heavy_nnz=4)
        try:
            for nt in (1, 2):
                m = make(name, n_threads=nt).fit(Xw, y)
                assert m.core_.sv.storage == "slab"
                runs[bits, nt] = scores(m, Xw[:300])
        finally:
            support.set_bits_min_cols(old)
            support.set_storage_limits(*old_limits)
    for s in runs.values():
        np.testing.assert_array_equal(s, runs[1 << 40, 1])


@pytest.fixture
def recompact_often():
    """Slab sets drop the columns their SVs no longer hold from 64 columns on (RECOMPACT_MIN,
    65,536, on small data)."""
    old = support.set_recompact_min(64)
    yield
    support.set_recompact_min(old)


def _fit_recompacting_from(value, name, X, y):
    old = support.set_recompact_min(value)
    try:
        return make(name).fit(X, y)
    finally:
        support.set_recompact_min(old)


def _many_columns():
    """~12 nonzeros a row over 3,000 columns scattered into 2^24, labels at random (every learner
    updates often): a budget of 40 SVs holds a few hundred of the columns the stream shows."""
    X, _ = synthetic(n=900, d=3000, seed=4, density=0.004)
    y = np.where(np.random.default_rng(4).random(900) < 0.5, 1.0, -1.0)
    return scatter(X, shuffled_map(X.shape[1], 2 ** 24), 2 ** 24), y


#: Learners whose full budget keeps exchanging SVs (the others stop adding, merge, or hold landmarks).
REPLACING = ("rbp", "forgetron", "bpas", "bsgd-removal", "bogd", "bogdpp", "sg", "lasvm")


@pytest.mark.parametrize("name", COMPARABLE)
def test_dropping_the_columns_no_sv_holds_keeps_the_bits(name, slab_always):
    Xw, y = _many_columns()
    ref = _fit_recompacting_from(1 << 40, name, Xw, y)       # never: every column stays mapped
    m = _fit_recompacting_from(64, name, Xw, y)
    s, r = m.core_.sv, ref.core_.sv
    assert s.storage == r.storage == "slab"
    assert s.pool_stats()["recompactions"] > 0 and r.pool_stats()["recompactions"] == 0
    np.testing.assert_array_equal(scores(m, Xw[:300]), scores(ref, Xw[:300]))
    assert (m.support_vectors_ != ref.support_vectors_).nnz == 0
    held = np.unique(s.support_vectors.indices).size
    assert len(s.cmap) < max(64, 2 * held) + Xw[0].nnz * 4  # the columns held, and what came since
    if name in REPLACING:                                    # budgets that keep replacing SVs
        assert len(s.cmap) < len(r.cmap) / 2


def test_a_model_with_merged_sinks_saves_loads_and_goes_on_identically(tmp_path, slab_always):
    """BSGD's merges into a sink with a dense row leave it lazy (its entries' values stale, its
    norm from a formula) until something reads it whole; saving reads it, so the norm saved must
    be the settled one the learner goes on with (it was taken before the entries, 1 ulp apart)."""
    Xw, y = _many_columns()
    m = make("bsgd-merge").fit(Xw[:600], y[:600])
    path = tmp_path / "model.npz"
    save_model(m, path)
    m2 = load_model(path)
    np.testing.assert_array_equal(scores(m2, Xw[:300]), scores(m, Xw[:300]))
    m.partial_fit(Xw[600:], y[600:])
    m2.partial_fit(Xw[600:], y[600:])
    np.testing.assert_array_equal(scores(m2, Xw[:300]), scores(m, Xw[:300]))


@pytest.mark.parametrize("name", ["bpas", "bsgd-merge"])
def test_a_model_that_dropped_columns_saves_loads_and_goes_on_identically(tmp_path, name, slab_always,
                                                                          recompact_often):
    Xw, y = _many_columns()
    m = make(name).fit(Xw[:600], y[:600])
    assert m.core_.sv.pool_stats()["recompactions"] > 0
    path = tmp_path / "model.npz"
    save_model(m, path)
    m2 = load_model(path)
    assert len(m2.core_.sv.cmap) == len(m.core_.sv.cmap)
    m.partial_fit(Xw[600:], y[600:])                       # both renumber at the same point again
    m2.partial_fit(Xw[600:], y[600:])
    assert m2.core_.sv.pool_stats()["recompactions"] > 0
    np.testing.assert_array_equal(scores(m2, Xw[:300]), scores(m, Xw[:300]))


def test_a_budgeted_slab_maps_the_columns_of_its_svs_not_of_the_stream(recompact_often):
    """40 SVs, each of 12 columns never seen before, the oldest dropped: 36,000 columns shown, at
    most ~2 x 480 mapped, and every kernel value that of a dense reference."""
    rng = np.random.default_rng(2)
    s = SupportSet(2 ** 24, 1, 0.05, 40, 1, storage="slab")
    cols = rng.choice(2 ** 24, 3000 * 12, replace=False).reshape(3000, 12)
    for t in range(3000):
        if s.n == 40:
            s.discard(int(s.insertion_order[0]))
        s.add(rng.random(12) + 0.5, np.sort(cols[t]))
        assert len(s.cmap) <= 2 * 40 * 12 + 12
    assert s.pool_stats()["recompactions"] > 10
    S = s.support_vectors
    q = np.sort(np.r_[S[0].indices[:6], cols[0][:6]])        # half an SV's columns, half long gone
    qv = rng.random(12)
    Sq = S[:, q].toarray()
    sq = np.asarray(S.multiply(S).sum(axis=1)).ravel()
    ref = np.exp(-0.05 * (sq - (Sq ** 2).sum(1) + ((Sq - qv) ** 2).sum(1)))
    np.testing.assert_allclose(s.kernel_values(qv, q), ref, rtol=1e-13, atol=0)
