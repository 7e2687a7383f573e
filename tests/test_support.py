"""SupportSet's kernel row: exact distances, one set of bits for row and single values, every SIMD
level and every storage layout change (growth, removal, replacement)."""

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from streams import run_at_levels


def store(n=150, d=7, seed=5, **kw):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.3] = 0.0
    y = rng.choice([-1.0, 1.0], n)
    learner = ok.KernelOGD(loss="logistic", gamma=0.2, **kw).fit(X, y)   # every row becomes an SV
    return learner, X


def test_sqdists_exact_dense_and_sparse():
    learner, X = store()
    sv = learner.core_.sv
    SV = sv.support_vectors
    for x in np.random.default_rng(1).normal(size=(6, 7)) * 30 + 100:   # far from the origin
        exact = np.sum((SV - x) ** 2, axis=1)
        np.testing.assert_allclose(sv.sqdists(x), exact, rtol=1e-14)
        nz = np.array([0, 2, 5])
        xs = np.zeros(7)
        xs[nz] = x[nz]
        np.testing.assert_allclose(sv.sqdists(x[nz], nz), np.sum((SV - xs) ** 2, axis=1), rtol=1e-12, atol=1e-9)
    # a stored SV as a sparse query is exactly at distance 0 from itself: k(x, x) = 1
    for i in range(0, 150, 17):
        nz = np.flatnonzero(SV[i])
        assert sv.sqdists(SV[i][nz], nz)[i] == 0.0
        assert sv.kernel_values(SV[i])[i] == 1.0
    with pytest.raises(ValueError):
        sv.sqdists(np.ones(3))


def test_row_and_single_values_and_layout_changes():
    """Growth past the initial capacity, swap-removal and replacement keep the feature-major
    mirror in step: the block row equals exact kernel values computed from the stored rows."""
    learner, X = store(n=300)          # grows 64 -> 128 -> 256 -> 512
    sv = learner.core_.sv
    q = np.random.default_rng(2).normal(size=7)
    before = sv.kernel_values(q)
    np.testing.assert_allclose(before, np.exp(-0.2 * np.sum((sv.support_vectors - q) ** 2, axis=1)), rtol=1e-14)
    # budgeted learners remove and replace: BPAs replaces in place, RBP swap-removes
    for name in ("bpas", "rbp"):
        lr = ok.make_learner(name, budget=40, gamma=0.3).fit(X, np.where(X[:, 0] > 0, 1, 0))
        s = lr.core_.sv
        np.testing.assert_allclose(s.kernel_values(q), np.exp(-0.3 * np.sum((s.support_vectors - q) ** 2, axis=1)),
                                   rtol=1e-14)


CHILD = r"""
import json, numpy as np, onlinekern as ok
rng = np.random.default_rng(5)
X = rng.normal(size=(150, 7)); X[rng.random(X.shape) < 0.3] = 0.0
sv = ok.KernelOGD(loss="logistic", gamma=0.2).fit(X, rng.choice([-1.0, 1.0], 150)).core_.sv
out = []
for x in rng.normal(size=(4, 7)):
    out.append([v.hex() for v in sv.sqdists(x)])
    nz = np.array([0, 2, 5])
    out.append([v.hex() for v in sv.sqdists(x[nz], nz)])
print(json.dumps(out))
"""


def test_same_bits_at_every_simd_level():
    """Element-wise without FMA: scalar, AVX2 and AVX-512 agree bit for bit (150 SVs: full vector
    groups, single vectors and a scalar tail)."""
    results = run_at_levels(CHILD)
    assert results[0] == results[1] == results[2]


def test_dualsgd_kernel_part_is_the_support_set():
    """DualSGD's kernel part is SupportSet.predict: with nothing merged yet it scores like kernel
    OGD on the same store, bit for bit, dense, sparse and empty rows alike."""
    rng = np.random.default_rng(24)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, 0)
    dual = ok.DualSGD(budget=150, gamma=0.3, lam=0.01, maintenance="removal").fit(X, y)
    assert dual.model_size_ == 150 and dual.core_.n_merged == 0
    ogd = ok.KernelOGD(gamma=0.3).fit(X[:5], y[:5])
    ogd.core_.sv = dual.core_.sv
    Xq = rng.normal(size=(40, 4))
    Xq[Xq < -1] = 0.0
    for Q in (Xq, sp.csr_matrix(Xq), sp.csr_matrix((2, 4))):
        np.testing.assert_array_equal(dual.decision_function(Q), ogd.decision_function(Q))
