"""The dispatched math kernels: accuracy against numpy and a high-precision reference (mpmath),
and independence from SIMD level."""

import numpy as np
import pytest

from onlinekern._core import vmath
from streams import run_at_levels

ULP_KERNEL = 2.0     # onlinekern's float64 cos/sin kernel, |x| < 1e5 (levels 1-2): max measured 1.51
ULP_LIBM = 1.0       # glibc's scalar cos/sin: level 0, and the lanes the kernel hands to libm
ULP_KERNEL32 = 2.0   # the float32 path, in float32 ulps of the float32 argument's cos/sin: 1.52
KERNEL_LIMIT = 1e5   # OK_SC_LIMIT and OK_SC32_LIMIT: larger |x| (and NaN) take libm


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
        # cos/sin come from onlinekern's kernel at levels 1-2 and libm at 0: within 2 ulp
        for cs_a, cs_b in zip(r["cos"], results[-1]["cos"]):
            np.testing.assert_allclose([float.fromhex(v) for v in cs_a], [float.fromhex(v) for v in cs_b],
                                       rtol=0, atol=4e-16)


# --- ulp error against a high-precision reference ----------------------------------------------

def ulp_arguments(mpmath, seed=17, all_k=False, n=1000):
    """Named float64 argument sets: random over the learners' range and beyond it (the libm
    fallback), the doubles nearest k pi/2 (where cos or sin is tiny and only an accurate argument
    reduction gives a small relative error) and their neighbours 1 and 1000 ulp away, and special
    values.  ``all_k`` takes every k with |k pi/2| < 1e5 instead of a sample; ``n`` sets the size
    of the random sets."""
    rng = np.random.default_rng(seed)
    sign = lambda n: rng.choice([-1.0, 1.0], n)
    kmax = int(KERNEL_LIMIT / (np.pi / 2))
    if all_k:
        ks = np.arange(1, kmax + 1)
    else:   # 1..256 holds the closest double to a multiple in range: k = 29, |x - k pi/2| = 6.2e-19
        ks = np.unique(np.concatenate([np.arange(1, 257), 29 * 2 ** np.arange(12), rng.integers(257, kmax + 1, 400)]))
    with mpmath.workprec(256):
        near = np.array([float(int(k) * mpmath.pi / 2) for k in ks])
    near = np.concatenate([near, -near])
    out = {
        "uniform |x| < 1e5": rng.uniform(-KERNEL_LIMIT, KERNEL_LIMIT, 2 * n),
        "normal(0, 30)": rng.normal(0, 30, n),
        "log-uniform 1e-6..1e5": sign(n) * np.exp(rng.uniform(np.log(1e-6), np.log(KERNEL_LIMIT), n)),
        "beyond 1e5 (libm)": sign(n // 3) * np.exp(rng.uniform(np.log(KERNEL_LIMIT), np.log(1e300), n // 3)),
        "nearest k pi/2": near,
        "k pi/2 +-1 ulp": np.concatenate([np.nextafter(near, np.inf), np.nextafter(near, -np.inf)]),
        "k pi/2 +-1000 ulp": np.concatenate([near + 1000 * np.spacing(near), near - 1000 * np.spacing(near)]),
        "special": np.array([0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-300, 1e-8, -1e-8,
                             np.nextafter(KERNEL_LIMIT, 0), -np.nextafter(KERNEL_LIMIT, 0), KERNEL_LIMIT,
                             1e300, np.inf, -np.inf, np.nan]),
    }
    return out


def exact(mpmath, x, f):
    """f(x) for each float x, by mpmath at 256 bits (it widens its own precision to reduce large
    arguments)."""
    with mpmath.workprec(256):
        return [f(mpmath.mpf(float(v))) for v in x]


def ulp_errors(mpmath, ref, y, bits=53):
    """|y - ref| in units in the last place (of a ``bits``-bit float) of the exact values ``ref``;
    0 where both are NaN, inf where only one is or where an exact zero is missed."""
    tiny = -1074 if bits == 53 else -149
    err = np.empty(len(ref))
    with mpmath.workprec(256):
        for i, (r, yi) in enumerate(zip(ref, y)):
            if mpmath.isnan(r) or not np.isfinite(yi):
                err[i] = 0.0 if (mpmath.isnan(r) and np.isnan(yi)) else np.inf
            elif r == 0:
                err[i] = 0.0 if yi == 0 else np.inf
            else:
                ulp = mpmath.ldexp(1, max(int(mpmath.frexp(r)[1]) - bits, tiny))
                err[i] = float(abs(mpmath.mpf(float(yi)) - r) / ulp)
    return err


ULP_CHILD = r"""
import json, numpy as np
from onlinekern._core import vmath
x = np.load(ARGS)
x32 = np.load(ARGS32)
c, s = vmath.cossin(x)
c32, s32 = vmath.cossin32(x32)
print(json.dumps({"level": vmath.simd_level(), "c": [v.hex() for v in c.tolist()], "s": [v.hex() for v in s.tolist()],
                  "c32": [v.hex() for v in c32.tolist()], "s32": [v.hex() for v in s32.tolist()]}))
"""


def run_ulp_children(mpmath, directory, **sets_kw):
    """The argument sets, and (cos, sin) of the float64 and float32 paths at every SIMD level."""
    sets = ulp_arguments(mpmath, **sets_kw)
    x = np.concatenate(list(sets.values()))
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
    x32 = x32[~(np.abs(x32) >= KERNEL_LIMIT)]        # the float32 kernel's range, and NaN
    np.save(directory / "args.npy", x)
    np.save(directory / "args32.npy", x32)
    child = ULP_CHILD.replace("ARGS32", repr(str(directory / "args32.npy"))).replace("ARGS", repr(str(directory / "args.npy")))
    runs = []
    for r in run_at_levels(child):
        h = lambda key: np.array([float.fromhex(v) for v in r[key]])
        runs.append({"level": r["level"], "c": h("c"), "s": h("s"), "c32": h("c32"), "s32": h("s32"),
                     "bits": {k: r[k] for k in ("c", "s", "c32", "s32")}})
    return sets, x, x32, runs


@pytest.fixture(scope="module")
def ulp_runs(tmp_path_factory):
    mpmath = pytest.importorskip("mpmath")
    sets, x, x32, runs = run_ulp_children(mpmath, tmp_path_factory.mktemp("ulp"))
    x32d = x32.astype(np.float64)
    refs = {"c": exact(mpmath, x, mpmath.cos), "s": exact(mpmath, x, mpmath.sin),
            "c32": exact(mpmath, x32d, mpmath.cos), "s32": exact(mpmath, x32d, mpmath.sin)}
    for r in runs:
        for key, ref in refs.items():
            r["e" + key] = ulp_errors(mpmath, ref, r[key], bits=24 if key.endswith("32") else 53)
    return sets, x, x32, runs


def test_cossin_ulp_error_at_every_simd_level(ulp_runs):
    """Against mpmath: within ULP_KERNEL ulp where onlinekern's kernel runs (levels 1-2, |x| < 1e5),
    within ULP_LIBM where glibc's libm does; including the doubles nearest multiples of pi/2,
    where the reduction's last part of pi/2 decides the relative error (it was ~1e5 ulp without it)."""
    _, x, _, runs = ulp_runs
    assert [r["level"] for r in runs][-1] == 0
    for r in runs:
        kernel = (np.abs(x) < KERNEL_LIMIT) if r["level"] > 0 else np.zeros(len(x), bool)
        for name, err in (("cos", r["ec"]), ("sin", r["es"])):
            bound = np.where(kernel, ULP_KERNEL, ULP_LIBM)
            bad = np.flatnonzero(~(err <= bound))
            assert bad.size == 0, (f"level {r['level']}: {name} off by {err[bad[:5]]} ulp at x = "
                                   f"{x[bad[:5]].tolist()} ({bad.size} arguments)")


def test_cossin32_ulp_error_at_every_simd_level(ulp_runs):
    """The float32 path against the exact cos/sin of the float32 argument, in float32 ulps,
    including the floats nearest multiples of pi/2 (its three float parts of pi/2 suffice there)."""
    _, _, x32, runs = ulp_runs
    for r in runs:
        for name, err in (("cos", r["ec32"]), ("sin", r["es32"])):
            bad = np.flatnonzero(~(err <= ULP_KERNEL32))
            assert bad.size == 0, (f"level {r['level']}: float32 {name} off by {err[bad[:5]]} ulp at x = "
                                   f"{x32[bad[:5]].tolist()}")


def test_sin_keeps_the_sign_of_zero_at_every_simd_level(ulp_runs):
    """sin(-0.0) = -0.0 and sin(+0.0) = +0.0 (the values compare equal, so the sign bit is checked),
    sin of a tiny argument is the argument itself, cos(+-0) = 1; on both paths, at every level."""
    _, x, x32, runs = ulp_runs
    for r in runs:
        for xs, c, s in ((x, r["c"], r["s"]), (x32, r["c32"], r["s32"])):
            zero = xs == 0
            assert np.signbit(xs[zero]).any() and not np.signbit(xs[zero]).all()
            assert np.array_equal(np.signbit(s[zero]), np.signbit(xs[zero])), f"level {r['level']}: sin(-0)"
            assert np.all(c[zero] == 1.0)
            tiny = (np.abs(xs) < 1e-200) & (xs != 0)
            assert np.array_equal(s[tiny], xs[tiny].astype(np.float64)), f"level {r['level']}: sin(tiny)"


def test_cossin_kernel_is_bit_identical_on_avx2_and_avx512(ulp_runs):
    """The float64 kernel runs the same operations at both vector widths (on a CPU without AVX-512
    both runs are the AVX2 level)."""
    runs = ulp_runs[3]
    assert runs[0]["level"] >= runs[1]["level"] and runs[1]["level"] in (0, 1)
    if runs[1]["level"] == 1:
        assert runs[0]["bits"] == runs[1]["bits"]


if __name__ == "__main__":
    # PYTHONPATH=. python tests/test_vmath.py [--all-k]: the largest ulp error per argument set at
    # every level; --all-k: every k pi/2 below 1e5 and 20 times the random arguments (~10 min)
    import sys
    import tempfile
    from pathlib import Path

    import mpmath
    with tempfile.TemporaryDirectory() as d:
        big = "--all-k" in sys.argv
        sets, x, x32, runs = run_ulp_children(mpmath, Path(d), all_k=big, n=20000 if big else 1000)
    x32d = x32.astype(np.float64)
    refs = {name: (exact(mpmath, xs, mpmath.cos), exact(mpmath, xs, mpmath.sin)) for name, xs in sets.items()}
    ref32 = exact(mpmath, x32d, mpmath.cos), exact(mpmath, x32d, mpmath.sin)
    for r in runs:
        print(f"level {r['level']}: max ulp error (cos, sin)")
        i = 0
        for name, xs in sets.items():
            sl = slice(i, i + len(xs))
            i += len(xs)
            ec = ulp_errors(mpmath, refs[name][0], r["c"][sl]).max()
            es = ulp_errors(mpmath, refs[name][1], r["s"][sl]).max()
            print(f"  {name:24s} n = {len(xs):6d}  {ec:9.4g}  {es:9.4g}")
        ec = ulp_errors(mpmath, ref32[0], r["c32"], bits=24).max()
        es = ulp_errors(mpmath, ref32[1], r["s32"], bits=24).max()
        print(f"  float32 path (all sets)  n = {len(x32):6d}  {ec:9.4g}  {es:9.4g}  (float32 ulps)")
        print("  sin(-0.0) = %r, sin(-0.0f) = %r" % (r["s"][x == 0][np.signbit(x[x == 0])][0],
                                                   r["s32"][x32 == 0][np.signbit(x32[x32 == 0])][0]))
