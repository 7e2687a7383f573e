"""FOGD's opt-in float32 feature map (precision="float32"; include/ok_vmath.h, features.pyx).

Omega^T x is accumulated in float32 from a tiled float32 copy of E and cos/sin are evaluated in
float32; the weights stay float64.  The projection is checked bit for bit against NumPy float32
arithmetic, cos/sin against float64 libm of the same argument, the learner against the FOGD
oracle with float32 features, and every level and thread count against each other.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
import reference as ref
from onlinekern._core import vmath
from onlinekern._core.features import RandomFourierMap
from streams import encode, make_data, make_X, online, run_at_levels

COSSIN32_ATOL = 1.2e-7        # float32 cos/sin against float64 libm of the same float32 argument


# --- the kernels -----------------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0, 1e3, 9.9e4])
def test_cossin32_accuracy(scale):
    a = np.random.default_rng(5).uniform(-scale, scale, 20011).astype(np.float32)
    c, s = vmath.cossin32(a)
    assert c.dtype == np.float64 and s.dtype == np.float64
    np.testing.assert_allclose(c, np.cos(a.astype(np.float64)), rtol=0, atol=COSSIN32_ATOL)
    np.testing.assert_allclose(s, np.sin(a.astype(np.float64)), rtol=0, atol=COSSIN32_ATOL)
    # quadrant boundaries and their float32 neighbours
    b = (np.arange(-40, 41) * np.pi / 2).astype(np.float32)
    for x in (b, np.nextafter(b, np.float32(np.inf)), np.nextafter(b, np.float32(-np.inf))):
        c, s = vmath.cossin32(x)
        np.testing.assert_allclose(c, np.cos(x.astype(np.float64)), rtol=0, atol=COSSIN32_ATOL)
        np.testing.assert_allclose(s, np.sin(x.astype(np.float64)), rtol=0, atol=COSSIN32_ATOL)


def test_cossin32_values_do_not_depend_on_length():
    a = np.random.default_rng(1).normal(0, 10, 53).astype(np.float32)
    c_all, s_all = vmath.cossin32(a)
    for n in range(0, 53, 4):
        c, s = vmath.cossin32(a[:n])
        assert np.array_equal(c, c_all[:n]) and np.array_equal(s, s_all[:n])


@pytest.mark.parametrize("D", [1, 7, 63, 64, 65, 100, 1000])
def test_project32_is_numpy_float32_arithmetic_bit_for_bit(D):
    rng = np.random.default_rng(D)
    E = rng.normal(size=(9, D))
    x = rng.normal(size=9)
    x[[1, 4]] = 0.0                       # zeros are dropped, as the map drops them
    idx = np.arange(9, dtype=np.int32)
    a = vmath.project32(x, idx, E, root=1.3)
    assert a.dtype == np.float32 and a.shape == (D,)
    np.testing.assert_array_equal(a, ref.fourier_a32(x, E, 1.3 ** 2 / 2))
    # fed a few nonzeros at a time (rows with repeated indices), the sums continue exactly
    for chunk in (1, 2, 3):
        np.testing.assert_array_equal(vmath.project32(x, idx, E, root=1.3, chunk=chunk), a)
    # and within float32 rounding of the float64 projection
    np.testing.assert_allclose(a, vmath.project(x, idx, E, root=1.3), rtol=0,
                               atol=1e-6 * (np.abs(x) @ np.abs(E)).max() * 1.3)


def test_tile_layout():
    E = np.arange(3 * 70, dtype=float).reshape(3, 70)
    t = vmath.tile_f32(E)
    assert t.shape == (2, 3, 64) and t.dtype == np.float32
    np.testing.assert_array_equal(t[0], E[:, :64])
    np.testing.assert_array_equal(t[1, :, :6], E[:, 64:])
    assert not t[1, :, 6:].any()          # zero padding past D


# --- the map -------------------------------------------------------------------------------------

def test_map_float32_features_match_float32_reference():
    rng = np.random.default_rng(2)
    X = make_X(40, 6, 3)
    m = RandomFourierMap(6, 100, 0.4, seed=9, precision="float32")
    assert m.precision == "float32"
    Z = m.transform(X)
    np.testing.assert_allclose(Z, ref.fourier_z32(X, m.E, 0.4), rtol=0, atol=COSSIN32_ATOL / 10)
    # the same E as the float64 map, and features within float32 rounding of its features
    m64 = RandomFourierMap(6, 100, 0.4, seed=9)
    np.testing.assert_array_equal(m.E, m64.E)
    np.testing.assert_allclose(Z, m64.transform(X), rtol=0, atol=1e-5)
    # sparse rows give the same features as dense ones
    np.testing.assert_array_equal(m.transform(sp.csr_matrix(X)), Z)
    Xr = rng.normal(size=(5, 6))
    np.testing.assert_array_equal(m.transform(Xr)[2], m.transform(Xr[2:3])[0])


def test_map_float32_row_with_repeated_indices():
    """A non-canonical CSR row with more entries than features goes through the projection in
    chunks of d nonzeros; the result is the sequential float32 sum over all its entries."""
    m = RandomFourierMap(3, 70, 0.5, seed=1, precision="float32")
    data, ind = np.array([0.5, 0.25, 0.75, 0.5, 1.0]), np.array([0, 0, 1, 2, 2])
    X = sp.csr_matrix((data, ind, np.array([0, 5])), shape=(1, 3))
    assert not X.has_canonical_format and X.nnz == 5
    E32 = m.E.astype(np.float32)
    a = np.zeros(70, dtype=np.float32)
    for v, i in zip(data, ind):                   # sqrt(2 gamma) = 1
        a = a + E32[i] * np.float32(v)
    z = np.hstack([np.cos(a.astype(np.float64)), np.sin(a.astype(np.float64))]) / np.sqrt(70)
    np.testing.assert_allclose(m.transform(X)[0], z, rtol=0, atol=COSSIN32_ATOL / 8)


def test_map_rejects_unknown_precision():
    with pytest.raises(ValueError, match="precision"):
        RandomFourierMap(3, 10, 1.0, precision="float16")
    with pytest.raises(ValueError, match="precision"):
        ok.FOGD(precision="half").fit(np.ones((3, 2)), [0, 1, 0])


# --- the learner ---------------------------------------------------------------------------------

@pytest.mark.parametrize("task,loss", [("binary", "hinge"), ("binary", "logistic"),
                                       ("multiclass", "softmax"), ("regression", "squared")])
def test_fogd_float32_vs_oracle(task, loss):
    X, y = make_data(task, seed=6)
    ye = encode(y, task)
    g, D, seed = 0.35, 100, 11
    rs, w, _, _ = ref.ref_fogd(X, ye, task, g, D, eta=0.5, loss_name=loss, n_classes=3, seed=seed,
                               precision="float32")
    res, scores = online(ok.FOGD(n_components=D, gamma=g, eta=0.5, loss=loss, seed=seed,
                                 precision="float32", preset="paper"), X, y)     # raw targets
    # the oracle's cos/sin are float64 libm of the float32 argument, within 1.2e-7 of the kernel's
    np.testing.assert_allclose(scores, rs, rtol=1e-5, atol=1e-6)
    if task != "regression":
        r64, _ = online(ok.FOGD(n_components=D, gamma=g, eta=0.5, loss=loss, seed=seed, preset="paper"), X, y)
        assert abs(res.n_mistakes - r64.n_mistakes) <= 2
    learner = ok.FOGD(n_components=D, gamma=g, eta=0.5, loss=loss, seed=seed, precision="float32",
                      preset="paper").fit(X, y)
    np.testing.assert_allclose(learner.coef_, w, rtol=1e-5, atol=1e-6)


def test_fogd_float32_threads_and_model_file(tmp_path):
    X, y = make_data("binary", T=300, d=5, seed=4)
    p = dict(n_components=130, gamma=0.5, eta=0.4, seed=3, precision="float32")
    r1, s1 = online(ok.FOGD(n_threads=1, **p), X, y)
    r2, s2 = online(ok.FOGD(n_threads=2, **p), X, y)
    assert np.array_equal(s1, s2) and r1.n_mistakes == r2.n_mistakes
    learner = ok.FOGD(**p).fit(X, y)
    path = tmp_path / "m.okm"
    ok.save_model(learner, path)
    back = ok.load_model(path)
    assert back.precision == "float32" and back.core_.fmap.precision == "float32"
    Xq = make_X(20, 5, 8)
    np.testing.assert_array_equal(back.decision_function(Xq), learner.decision_function(Xq))
    # a state written before the option existed (no "precision") loads as float64
    st = learner.core_.get_state()
    del st["precision"]
    core = type(learner.core_)()
    core.set_state(st)
    assert core.fmap.precision == "float64"


CHILD = r"""
import json, numpy as np, onlinekern as ok
from onlinekern._core import vmath
rng = np.random.default_rng(11)
out = {"level": vmath.simd_level()}
a = (rng.normal(size=1003) * 40).astype(np.float32)
out["cossin"] = [float(v).hex() for v in np.concatenate(vmath.cossin32(a))]
E = rng.normal(size=(9, 150))
out["project"] = [float(v).hex() for v in vmath.project32(rng.normal(size=5), [0, 2, 3, 7, 8], E, root=1.3)]
X = rng.normal(size=(300, 6)); y = np.sign(X[:, 0] * X[:, 1] + 0.1)
r = ok.run_online(ok.FOGD(n_components=77, gamma=0.5, precision="float32"), X, y, keep_scores=True)
out["fogd"] = [float(v).hex() for v in r.scores]
print(json.dumps(out))
"""


def test_float32_path_is_bit_identical_at_every_simd_level():
    """Unlike the float64 path (libmvec at levels 1-2, libm at 0), the float32 path runs the same
    IEEE operations at every level, fmaf included, so its bits do not depend on the level."""
    results = run_at_levels(CHILD)
    assert results[-1]["level"] == 0
    for r in results[:-1]:
        for key in ("cossin", "project", "fogd"):
            assert r[key] == results[-1][key], f"{key} differs between level {r['level']} and the scalar level"


def test_fogd_float32_on_ijcnn1_matches_float64_mistake_rate(shared_data):
    """At the paper setting (D = 1000) the float32 features change no conclusion: on the first
    20,000 ijcnn1 rows the mistake rate is within 0.1 percentage points of the float64 run."""
    X, y = ok.load_libsvm(shared_data.compressed("ijcnn1"), n_features=22)[:2]
    X, y = X[:20000], y[:20000]
    rates = {p: ok.run_online(ok.FOGD(n_components=1000, gamma=0.5, eta=0.4, precision=p), X, y).mistake_rate
             for p in ("float64", "float32")}
    assert abs(rates["float32"] - rates["float64"]) <= 0.1, rates
