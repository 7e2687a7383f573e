"""The counter-based generator: Random123 known answers, offsets, and distribution sanity."""
import numpy as np
import pytest

from onlinekern._core import counter_rng as crng


@pytest.mark.parametrize("ctr,key,expected", [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
])
def test_philox_known_answers(ctr, key, expected):
    assert crng.philox(ctr, key) == expected


def test_elements_are_functions_of_their_index():
    z = crng.normals(7, 2, 11, 101)
    for first in (0, 1, 2, 33, 50):
        assert np.array_equal(crng.normals(7, 2, 11, 101 - first, first=first), z[first:])
    u = crng.uniforms(7, 3, 11, 40)
    assert np.array_equal(crng.uniforms(7, 3, 11, 10, first=30), u[30:])


@pytest.mark.parametrize("first", [0, 1, 2 ** 33 + 1])
def test_scattered_elements_match_the_batch_and_the_scalar_path(first):
    """ok_normals_at (a sparse row's normals, drawn in vector blocks) gives element first + idx[k]
    bit for bit as ok_normals and the scalar ok_normal do, in any order, repeated or not, over
    block counts that are not multiples of the vector width."""
    rng = np.random.default_rng(3)
    for n in (1, 7, 64, 65, 203):
        idx = rng.integers(0, 5000, size=n)
        idx[n // 2:] = idx[: n - n // 2]             # repeats too
        got = crng.normals_at(9, 4, 17, idx, first=first)
        assert np.array_equal(got, crng.normals(9, 4, 17, 5000, first=first)[idx])
        assert np.array_equal(got[:5], [crng.normal(9, 4, 17, first + int(i)) for i in idx[:5]])


def test_streams_and_keys_differ():
    base = crng.normals(1, 2, 0, 64)
    for other in (crng.normals(2, 2, 0, 64), crng.normals(1, 4, 0, 64), crng.normals(1, 2, 1, 64)):
        assert not np.array_equal(base, other)


def test_distributions():
    z = crng.normals(0, 2, 5, 400000)
    assert abs(z.mean()) < 4 / np.sqrt(z.size) * 1.0
    assert abs(z.var() - 1) < 4 * np.sqrt(2 / z.size)
    assert abs(np.mean(z ** 4) - 3) < 0.05          # Gaussian kurtosis
    assert abs(np.corrcoef(z[:-1:2], z[1::2])[0, 1]) < 0.01   # the Box-Muller pair is uncorrelated
    u = crng.uniforms(0, 3, 5, 200000)
    assert u.min() >= 0 and u.max() < 1
    hist, _ = np.histogram(u, bins=20, range=(0, 1))
    expected = u.size / 20
    assert np.sum((hist - expected) ** 2 / expected) < 60    # chi-square, 19 dof, p ~ 1e-6
    assert crng.normals(0, 2, 5, (3, 4)).shape == (3, 4)


# ---- the ziggurat rows (include/ok_zig.h: the keyed random-feature rows, version 2) -----------

def _zig_sample(rows=3000, n=200):
    return np.concatenate([crng.zig_normals(0, 8, k, n) for k in range(rows)])


def test_ziggurat_elements_are_functions_of_their_index():
    row = crng.zig_normals(7, 8, 123, 700)
    for n in (1, 37, 64, 699):
        assert np.array_equal(crng.zig_normals(7, 8, 123, n), row[:n])
    assert not np.array_equal(crng.zig_normals(7, 8, 124, 700), row)      # another row
    assert not np.array_equal(crng.zig_normals(8, 8, 123, 700), row)      # another seed
    assert not np.array_equal(crng.zig_normals(7, 9, 123, 700), row)      # another stream


def test_ziggurat_is_standard_normal():
    """600,000 draws: Kolmogorov-Smirnov against N(0, 1), the moments, and the mass of the tail
    (beyond R, the base layer's slow path) and of the wedges' band (|z| in [1, 2.5], where most
    wedge rejections fall) against the normal's, each within 5 standard errors."""
    from scipy import stats
    z = _zig_sample()
    n = z.size
    assert stats.kstest(z, "norm").pvalue > 1e-4
    assert abs(z.mean()) < 5 / np.sqrt(n)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / n)
    assert abs(np.mean(z ** 4) - 3) < 0.05
    assert abs(np.corrcoef(z[:-1], z[1:])[0, 1]) < 5 / np.sqrt(n)
    r = float.fromhex(_header_define("OK_ZIG_R"))
    for p in (2 * stats.norm.sf(r), 2 * (stats.norm.cdf(2.5) - stats.norm.cdf(1.0))):
        lo, hi = (r, np.inf) if p < 0.01 else (1.0, 2.5)
        got = np.mean((np.abs(z) >= lo) & (np.abs(z) < hi))
        assert abs(got - p) < 5 * np.sqrt(p * (1 - p) / n), (lo, hi, got, p)
    hist, edges = np.histogram(z, bins=40, range=(-4, 4))
    expected = n * np.diff(stats.norm.cdf(edges))
    assert np.sum((hist - expected) ** 2 / expected) < 100      # chi-square, 39 dof, p ~ 1e-6


def _header_define(name):
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "include" / "ok_zigtab.h").read_text()
    for line in text.splitlines():
        if line.startswith(f"#define {name} "):
            return line.split()[2]
    raise AssertionError(f"{name} not in ok_zigtab.h")


def test_ziggurat_tables_are_the_generators():
    """include/ok_zigtab.h holds what tools/make_zigtab.py computes (to the last few ulp: another
    libm may round its exp and log otherwise), and the layers have equal areas."""
    import importlib.util
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("make_zigtab", root / "tools" / "make_zigtab.py")
    mz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mz)
    r, v, x, ratio = mz.tables()
    text = (root / "include" / "ok_zigtab.h").read_text()
    def table(name):
        body = text[text.index(name):]
        body = body[body.index("{") + 1:body.index("}")]
        return np.array([float.fromhex(t) for t in body.replace("\n", " ").split(",") if t.strip()])
    np.testing.assert_allclose(table("OK_ZIG_X["), x, rtol=1e-13, atol=0)
    np.testing.assert_allclose(table("OK_ZIG_RATIO["), ratio, rtol=1e-13, atol=0)
    assert abs(float.fromhex(_header_define("OK_ZIG_R")) - r) < 1e-13
    f = lambda t: np.exp(-0.5 * np.asarray(t) ** 2)
    xs = np.array(x)
    areas = xs[1:256] * (f(xs[2:257]) - f(xs[1:256]))           # layers 1..255: rectangles
    np.testing.assert_allclose(areas, v, rtol=1e-9)
    assert abs(r - 3.6541528853610088) < 1e-12                  # Marsaglia and Tsang's R for 256 layers
