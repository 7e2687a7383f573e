"""§1.3 / §1.5 / §5 item 5: the random Fourier map of the compiled package."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import RBFSampler

import onlinekern as ok

from reference import fourier_E, fourier_z, rbf


def _E(seed, d, D):
    ss = np.random.SeedSequence(entropy=seed, spawn_key=(1,))
    return np.random.Generator(np.random.PCG64(ss)).standard_normal((d, D))


@pytest.mark.parametrize("seed,d,D", [(0, 3, 5), (7, 10, 64), (123456789, 1, 1000)])
def test_E_is_features_stream(seed, d, D):
    fmap = ok.RandomFourierMap(d, D, 0.5, seed=seed)
    assert fmap.E.shape == (d, D)
    np.testing.assert_array_equal(fmap.E, _E(seed, d, D))
    np.testing.assert_array_equal(fourier_E(seed, d, D), _E(seed, d, D))


def test_different_seeds_differ():
    a = ok.RandomFourierMap(4, 50, 0.5, seed=1).E
    b = ok.RandomFourierMap(4, 50, 0.5, seed=2).E
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("g", [0.05, 0.5, 3.0])
def test_matches_sklearn_rbfsampler(g):
    rng = np.random.default_rng(3)
    d, D = 6, 300
    X = rng.normal(size=(40, d))
    fmap = ok.RandomFourierMap(d, D, g, seed=4)
    Z = fmap.transform(X)
    assert Z.shape == (40, 2 * D)
    omega = np.sqrt(2 * g) * _E(4, d, D)
    samp = RBFSampler(gamma=g, n_components=D, random_state=0).fit(X)
    samp.random_weights_ = omega
    samp.random_offset_ = np.zeros(D)
    rbf_cos = samp.transform(X)
    samp.random_offset_ = np.full(D, -np.pi / 2)
    rbf_sin = samp.transform(X)
    expected = np.hstack([rbf_cos, rbf_sin]) / np.sqrt(2)
    np.testing.assert_allclose(Z, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(Z, fourier_z(X, _E(4, d, D), g), rtol=1e-9, atol=1e-13)


def test_sparse_input_transform():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 12)) * (rng.random((30, 12)) < 0.3)
    fmap = ok.RandomFourierMap(12, 100, 0.2, seed=9)
    np.testing.assert_allclose(fmap.transform(sp.csr_matrix(X)), fmap.transform(X),
                               rtol=1e-12, atol=1e-14)


def test_feature_norm_is_one():
    rng = np.random.default_rng(2)
    Z = ok.RandomFourierMap(5, 77, 0.3, seed=0).transform(rng.normal(size=(20, 5)))
    np.testing.assert_allclose(np.sum(Z * Z, axis=1), 1.0, rtol=1e-13)   # = k(x, x)


def test_kernel_approximation_uniform_bound():
    """§5.5: D = 1e4, 100 random pairs, |z(x).z(x') - k(x, x')| < 0.06 for all."""
    rng = np.random.default_rng(20)
    d, g = 5, 0.2
    X1, X2 = rng.normal(size=(100, d)), rng.normal(size=(100, d))
    fmap = ok.RandomFourierMap(d, 10_000, g, seed=0)
    approx = np.sum(fmap.transform(X1) * fmap.transform(X2), axis=1)
    exact = np.array([rbf(a, b, g)[0] for a, b in zip(X1, X2)])
    assert np.max(np.abs(approx - exact)) < 0.06


def test_kernel_approximation_unbiased():
    """§5.5: mean over 50 independent Omega is within 4 sd / sqrt(50) of k."""
    rng = np.random.default_rng(21)
    d, g, D = 4, 0.25, 200
    X1, X2 = rng.normal(size=(10, d)) * 0.7, rng.normal(size=(10, d)) * 0.7
    vals = np.empty((50, 10))
    for s in range(50):
        fmap = ok.RandomFourierMap(d, D, g, seed=s)
        vals[s] = np.sum(fmap.transform(X1) * fmap.transform(X2), axis=1)
    exact = np.array([rbf(a, b, g)[0] for a, b in zip(X1, X2)])
    sd = vals.std(axis=0, ddof=1)
    assert np.all(np.abs(vals.mean(axis=0) - exact) <= 4 * sd / np.sqrt(50))


@pytest.mark.parametrize("D", [100, 1000, 10_000])
def test_error_shrinks_with_D(D):
    rng = np.random.default_rng(22)
    d, g = 3, 0.5
    X1, X2 = rng.normal(size=(200, d)), rng.normal(size=(200, d))
    exact = np.array([rbf(a, b, g)[0] for a, b in zip(X1, X2)])
    approx = np.sum(fourier_z(X1, _E(1, d, D), g) * fourier_z(X2, _E(1, d, D), g), axis=1)
    # |err| <= t with prob >= 1 - 2 exp(-D t^2 / 2): t = sqrt(2 ln(2e6) / D) fails w.p. ~1e-6 each
    assert np.max(np.abs(approx - exact)) < np.sqrt(2 * np.log(2e6) / D)
    fmap = ok.RandomFourierMap(d, D, g, seed=1)
    learner = np.sum(fmap.transform(X1) * fmap.transform(X2), axis=1)
    np.testing.assert_allclose(learner, approx, rtol=1e-9, atol=1e-12)
