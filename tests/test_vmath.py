"""The dispatched math kernels: accuracy against numpy and independence from SIMD level."""

import numpy as np
import pytest

from onlinekern._core import vmath
from streams import run_at_levels


@pytest.mark.parametrize("n", list(range(0, 20)) + [1000, 1003])
def test_cossin_exp_match_numpy(n):
    a = np.random.default_rng(n).normal(0, 30, n)
    c, s = vmath.cossin(a)
    np.testing.assert_allclose(c, np.cos(a), rtol=0, atol=1e-15)
    np.testing.assert_allclose(s, np.sin(a), rtol=0, atol=1e-15)
    e = -np.abs(a) / 3
    np.testing.assert_allclose(vmath.exp(e), np.exp(e), rtol=4e-16, atol=0)


def test_values_do_not_depend_on_position_in_array():
    """Tails are padded to a full vector, so a value never depends on where it sits."""
    a = np.random.default_rng(1).normal(0, 10, 37)
    c_all, s_all = vmath.cossin(a)
    e_all = vmath.exp(-a * a)
    for lo in range(0, 37, 5):
        for hi in (lo + 1, lo + 3, 37):
            c, s = vmath.cossin(a[lo:hi])
            assert np.array_equal(c, c_all[lo:hi]) and np.array_equal(s, s_all[lo:hi])
            assert np.array_equal(vmath.exp(-a[lo:hi] ** 2), e_all[lo:hi])


@pytest.mark.parametrize("scale", [1e-3, 1.0, 100.0, 9.9e4, 1e6, 1e300])
def test_cossin_accuracy_over_the_argument_range(scale):
    """onlinekern's cos/sin kernel (one argument reduction for both) against libm: within
    2.3e-16 absolute for |a| < 1e5; beyond, and for inf/NaN, the lanes take libm itself."""
    a = np.random.default_rng(7).uniform(-scale, scale, 20011)
    c, s = vmath.cossin(a)
    np.testing.assert_allclose(c, np.cos(a), rtol=0, atol=2.3e-16)
    np.testing.assert_allclose(s, np.sin(a), rtol=0, atol=2.3e-16)
    # exact quadrant boundaries and their neighbours
    k = np.arange(-40, 41)
    for b in (k * np.pi / 2, np.nextafter(k * np.pi / 2, np.inf), np.nextafter(k * np.pi / 2, -np.inf)):
        c, s = vmath.cossin(b)
        np.testing.assert_allclose(c, np.cos(b), rtol=0, atol=2.3e-16)
        np.testing.assert_allclose(s, np.sin(b), rtol=0, atol=2.3e-16)


@pytest.mark.parametrize("cossin,dtype,specials", [
    (vmath.cossin, np.float64, (1e6, -3e9, np.inf, -np.inf, np.nan, 1e300)),
    (vmath.cossin32, np.float32, (1e5, -3e9, np.inf, -np.inf, np.nan))])   # the float32 path's kernel
def test_cossin_big_and_special_lanes_do_not_affect_neighbours(cossin, dtype, specials):
    """A lane outside the kernel's range (float64 libm of the argument) never changes its
    neighbours' values."""
    rng = np.random.default_rng(3)
    a = rng.normal(0, 10, 64).astype(dtype)
    c0, s0 = cossin(a)
    for special in specials:
        b = a.copy()
        b[5::9] = special
        c, s = cossin(b)
        keep = np.ones(64, bool)
        keep[5::9] = False
        assert np.array_equal(c[keep], c0[keep]) and np.array_equal(s[keep], s0[keep])
        with np.errstate(invalid="ignore"):            # cos(inf) = NaN is the expected value
            np.testing.assert_array_equal(c[~keep], np.cos(b[~keep].astype(np.float64)))
            np.testing.assert_array_equal(s[~keep], np.sin(b[~keep].astype(np.float64)))


def test_dot_accuracy():
    rng = np.random.default_rng(3)
    for n in (1, 7, 16, 17, 1000, 4099):
        a, b = rng.normal(size=n), rng.normal(size=n)
        assert abs(vmath.dot(a, b) - float(np.dot(a, b))) <= 1e-13 * (np.abs(a) @ np.abs(b))
    with pytest.raises(ValueError):
        vmath.dot(np.ones(3), np.ones(4))


def project_reference(x, idx, E, scale=None, root=1.0):
    """a = 0, then a += v_k E[idx_k] for every nonzero v_k in order: the axpy sequence the
    register-blocked kernel must reproduce bit for bit (NumPy multiplies and adds separately)."""
    a = np.zeros(E.shape[1])
    for xk, n in zip(x, idx):
        v = xk * (scale[n] if scale is not None else root)
        if v != 0.0:
            a = a + v * E[n]
    return a


@pytest.mark.parametrize("D", [1, 7, 31, 32, 33, 100, 130])
def test_project_is_the_axpy_sequence_bit_for_bit(D):
    rng = np.random.default_rng(D)
    d = 22
    E = rng.normal(size=(d, D))
    idx = np.sort(rng.choice(d, size=13, replace=False))
    x = rng.normal(size=13)
    x[[2, 7]] = 0.0                                     # skipped, as ok_axpy's caller skips them
    scale = np.exp(rng.normal(size=d))
    np.testing.assert_array_equal(vmath.project(x, idx, E, root=0.7), project_reference(x, idx, E, root=0.7))
    np.testing.assert_array_equal(vmath.project(x, idx, E, scale=scale), project_reference(x, idx, E, scale=scale))
    np.testing.assert_array_equal(vmath.project(x[:0], idx[:0], E), np.zeros(D))


CHILD = r"""
import json, numpy as np
from onlinekern._core import vmath
rng = np.random.default_rng(11)
out = {"level": vmath.simd_level(), "dot": [], "cos": [], "project": []}
for n in (5, 16, 33, 1000):
    a, b = rng.normal(size=n), rng.normal(size=n)
    out["dot"].append(vmath.dot(a, b).hex())
    out["cos"].append([float(v).hex() for v in vmath.cossin(a * 20)[0]])
for D in (3, 32, 45, 100):
    E = rng.normal(size=(9, D))
    out["project"].append([float(v).hex() for v in vmath.project(rng.normal(size=5), [0, 2, 3, 7, 8], E, root=1.3)])
print(json.dumps(out))
"""


def test_dot_is_bit_identical_at_every_simd_level():
    results = run_at_levels(CHILD)
    assert results[-1]["level"] == 0
    for r in results[:-1]:
        assert r["dot"] == results[-1]["dot"]
        assert r["project"] == results[-1]["project"]
        # cos/sin come from libmvec at levels 1-2 and libm at 0: a few ulp apart at most
        for cs_a, cs_b in zip(r["cos"], results[-1]["cos"]):
            np.testing.assert_allclose([float.fromhex(v) for v in cs_a], [float.fromhex(v) for v in cs_b],
                                       rtol=0, atol=4e-16)
