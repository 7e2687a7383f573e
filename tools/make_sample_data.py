"""Write the two small sample data sets of the repository (deterministic, seed fixed).

``data/sample_classification.libsvm``
    3000 rows, 6 features, labels -1/+1: two interleaved spirals (two turns each, radius 8,
    Gaussian noise of standard deviation 0.4) in features 1-2, plus four irrelevant sparse noise
    features 3-6 (each present in about half of the rows, uniform on [0, 1]).  Not linearly
    separable: a linear learner stays near 45 % online mistakes, ``fogd-hinge`` with default
    parameters (gamma = 1/6) makes about 8-10 % in one pass.

``data/sample_regression.libsvm``
    3000 rows, 5 features: a noisy 2-D sinc ("Mexican hat")
    y = sin(r)/r + N(0, 0.05^2), r = (pi/2) ||(x1, x2)||, (x1, x2) uniform on [-4, 4]^2, plus three
    irrelevant sparse noise features 3-5.  Target standard deviation ~0.25; ``ogd-eps`` with
    default parameters reaches an online RMSE of about 0.1.

Values are rounded to 3 decimals so the files stay small (~100-150 KB).  Rows are in random
order, so a single run in file order is already a fair online stream.

Usage: ``python tools/make_sample_data.py [OUTDIR]`` (default: ``data/`` beside ``tools/``).
"""
import os
import sys

import numpy as np

import harness as h

from onlinekern.io import save_libsvm

SEED = 20240601
N_ROWS = 3000


def sparse_noise(rng, n, k, density=0.5):
    """k irrelevant features, uniform on [0, 1], each present in about ``density`` of the rows."""
    return rng.random((n, k)) * (rng.random((n, k)) < density)


def two_spirals(rng, n=N_ROWS, turns=2.0, radius=8.0, noise=0.4, n_noise=4):
    half = n // 2
    y = np.repeat([1.0, -1.0], [half, n - half])
    # sqrt spreads the points evenly along the arm length (the arm gets longer with t)
    t = np.sqrt(rng.random(n)) * turns * 2 * np.pi
    r = t / (turns * 2 * np.pi) * radius
    angle = t + np.where(y > 0, 0.0, np.pi)
    xy = np.column_stack([r * np.cos(angle), r * np.sin(angle)]) + noise * rng.standard_normal((n, 2))
    X = np.column_stack([xy, sparse_noise(rng, n, n_noise)])
    order = rng.permutation(n)
    return np.round(X[order], 3), y[order]


def mexican_hat(rng, n=N_ROWS, half_width=4.0, noise=0.05, n_noise=3):
    Z = rng.uniform(-half_width, half_width, size=(n, 2))
    r = (np.pi / 2) * np.linalg.norm(Z, axis=1)
    y = np.sinc(r / np.pi) + noise * rng.standard_normal(n)    # np.sinc(u) = sin(pi u)/(pi u)
    X = np.column_stack([Z, sparse_noise(rng, n, n_noise)])
    return np.round(X, 3), np.round(y, 3)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = argv[0] if argv else str(h.REPO / "data")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    for name, make in (("classification", two_spirals), ("regression", mexican_hat)):
        X, y = make(rng)
        path = os.path.join(out, f"sample_{name}.libsvm")
        save_libsvm(path, X, y)
        print(f"{path}: {X.shape[0]} rows x {X.shape[1]} features, {os.path.getsize(path)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
