"""The width race's third family of kernels: every feature divided by its standard deviation on the
median heuristic's sample (onlinekern.kernels.width_candidates, basis "deviations"), against NumPy,
dense and sparse alike, only where it changes the kernel, and named by the learner that chose it."""
import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern.kernels import WIDTH_MULTIPLIERS, ColumnScale, FeatureFactors, scale_basis, width_candidates


def outlier_data(n=3000, seed=0):
    """Four binary noise features (range 1, deviation 0.5) and two informative continuous ones of
    deviation 0.1 whose range one outlier row stretches to ~20: dividing by the ranges shrinks the
    informative features 40 times against the noise, dividing by the deviations does not."""
    rng = np.random.default_rng(seed)
    B = (rng.random((n, 4)) < 0.5).astype(float)
    C = 0.1 * rng.normal(size=(n, 2))
    C[7] = [10.0, -10.0]
    y = np.where(C[:, 0] ** 2 + C[:, 1] ** 2 > 0.0139, 1, -1)       # a ring: needs the kernel
    return np.hstack([B, C]), y


def families(cands):
    return [None if s is None else scale_basis(s) for s, _ in cands]


def test_deviations_family_matches_numpy_dense_and_sparse():
    X, _ = outlier_data()
    dense = width_candidates(X, seed=0)
    sparse = width_candidates(sp.csr_matrix(X), seed=0)
    k = len(WIDTH_MULTIPLIERS)
    assert families(dense) == ["ranges"] * k + [None] * k + ["deviations"] * k
    z = dense[2 * k][0]
    assert isinstance(z, FeatureFactors) and z.basis == "deviations"
    np.testing.assert_array_equal(np.asarray(sparse[2 * k][0]), np.asarray(z))    # the same bits
    assert [g for _, g in dense] == [g for _, g in sparse]
    cols = np.random.default_rng(2).permutation(1 << 22)[:X.shape[1]]          # scattered, too wide
    W = sp.csr_matrix(X)                                                       # to densify
    W = sp.csr_matrix((W.data, cols[W.indices], W.indptr), shape=(X.shape[0], 1 << 22))
    W.sort_indices()
    wide = width_candidates(W, seed=0)
    zs = wide[2 * k][0]
    assert isinstance(zs, ColumnScale) and zs.basis == "deviations" and families(wide) == families(dense)
    np.testing.assert_array_equal(zs.factors_of(cols), np.asarray(z))
    assert [g for _, g in wide] == [g for _, g in dense]
    # against NumPy on the sample the heuristic draws (all rows here: n < its sample size): 1/sd
    # rounded to the nearest power of two, which scales every value exactly
    np.testing.assert_array_equal(np.asarray(z), np.exp2(np.round(np.log2(1.0 / X.std(axis=0)))))
    assert [g / dense[2 * k][1] for _, g in dense[2 * k:]] == pytest.approx([m / WIDTH_MULTIPLIERS[0]
                                                                              for m in WIDTH_MULTIPLIERS])


def test_no_deviations_family_where_it_weighs_the_features_as_the_ranges_do():
    """Features whose deviation is the same fraction of their range (here: uniform, different
    scales) would give the ranges' kernels again, up to the width: not raced twice."""
    rng = np.random.default_rng(1)
    X = rng.random((800, 5)) * np.array([1.0, 3.0, 10.0, 0.5, 2.0])
    assert "deviations" not in families(width_candidates(X, seed=0))


def test_learner_names_the_deviations_it_chose_and_files_keep_it(tmp_path):
    X, y = outlier_data()
    learner = ok.make_learner("fogd-hinge", n_threads=1, seed=0)
    res = ok.run_online(learner, X, y)
    assert learner.feature_scale_basis_ == "deviations"
    assert learner.chosen_params()["feature_scale"] == "per-feature standard deviations"
    assert res.error < 0.8 * 100 * min(np.mean(y == 1), np.mean(y == -1))
    ok.save_model(learner, tmp_path / "m.okm")
    back = ok.load_model(tmp_path / "m.okm")
    assert back.chosen_params()["feature_scale"] == "per-feature standard deviations"
    np.testing.assert_array_equal(back.decision_function(X[:200]), learner.decision_function(X[:200]))
    ranges_only = ok.make_learner("fogd-hinge", n_threads=1, seed=0)
    ranges_only.fit(X[:, :4], y)                 # binary features only: nothing to standardise
    assert ranges_only.chosen_params().get("feature_scale", "per-feature ranges") == "per-feature ranges"


def test_binary_data_and_its_scattered_copy_give_the_same_bits_with_deviations():
    """Power-of-two factors scale exactly, so binary rows keep exact sums in any column order: a
    support-vector learner that chose the deviations makes the same predictions on a copy whose
    columns are scattered into 2^22 (another summation order), as it does with the ranges."""
    rng = np.random.default_rng(5)
    n, d = 3000, 40
    freq = np.geomspace(0.5, 0.01, d)                          # common and rare binary features
    X = (rng.random((n, d)) < freq).astype(float)
    y = np.where(X[:, 30:].sum(axis=1) + 0.3 * X[:, 0] > 0.5, 1, -1)    # rare features decide
    C = sp.csr_matrix(X)
    cols = np.random.default_rng(6).permutation(1 << 22)[:d]
    W = sp.csr_matrix((C.data, cols[C.indices], C.indptr), shape=(n, 1 << 22))
    W.sort_indices()
    runs = []
    for M in (C, W):
        learner = ok.make_learner("bsgd-removal", n_threads=1, budget=200)
        res = ok.run_online(learner, M, y, keep_scores=True)
        runs.append((learner, res, res.scores))
    (a, ra, sa), (b, rb, sb) = runs
    assert a.feature_scale_basis_ == b.feature_scale_basis_ == "deviations"
    assert a.gamma_ == b.gamma_ and ra.error == rb.error
    np.testing.assert_array_equal(sa, sb)
