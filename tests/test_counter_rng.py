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
