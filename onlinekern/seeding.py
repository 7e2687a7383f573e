"""One integer seed decides everything random (ALGORITHMS.md §1.5).

Stream ``s`` with keys ``k...`` is ``Generator(PCG64(SeedSequence(entropy=seed, spawn_key=(s, *k))))``;
the stream numbers below are part of the file formats and results, never renumber them.
"""
import numpy as np

PERMUTATION = 0   # data order of run r: rng(seed, PERMUTATION, r).permutation(N)
FEATURES = 1      # E in R^{d x D} for FOGD, RRF, DualSGD: one standard_normal((d, D)) call
DSG_BLOCK = 2     # DSG block i: rng(seed, DSG_BLOCK, i).standard_normal((d, F))
CHOICE = 3        # removal / sampling choices (RBP, BOGD, UDSG), consumed in call order
ESTIMATOR = 4     # Shrinking Gradient estimator at step t
MEDIAN = 5        # median-heuristic subsample
INIT = 6          # random weight initialisation
SUBSET = 7        # rows of the tuning subset (onlinekern.tune; an addition to ALGORITHMS.md §1.5)
FEATURE_ROWS = 8  # keyed random-feature rows of wide data: row c of stream (seed, 8) (include/ok_zig.h)


def check_seed(seed):
    """Validate a seed: a non-negative integer (numpy integers accepted)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def rng(seed, stream, *keys):
    """The numpy Generator of ``stream`` (with ``keys``) under ``seed``."""
    seq = np.random.SeedSequence(entropy=check_seed(seed), spawn_key=(stream, *[int(k) for k in keys]))
    return np.random.Generator(np.random.PCG64(seq))


def permutation(seed, run, n):
    """Presentation order of run ``run`` of a permutation experiment over ``n`` rows."""
    return rng(seed, PERMUTATION, run).permutation(n)
