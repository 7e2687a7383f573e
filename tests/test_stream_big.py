"""Peak memory of one streaming pass (``python -m onlinekern.train --stream``) over a generated
LIBSVM file far larger than what the pass may hold in memory.

The file is ijcnn1-like (22 features in [-1, 1], labels from a fixed non-linear rule with 10 %
label noise), rows drawn with a seeded generator from a pool of 2^18 pre-formatted rows, so
gigabytes take seconds to write.  FOGD-hinge (D = 400) learns it in one pass (``--classes`` and
``--n-features`` given); the child's peak resident set must stay under 300 MB.  By default the
file is 0.05 GB (seconds); the run BENCHMARKS.md cites::

    ONLINEKERN_STREAM_GB=5 python -m pytest tests/test_stream_big.py -s
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
GIGABYTES = float(os.environ.get("ONLINEKERN_STREAM_GB", "0.05"))
D = 22
POOL = 1 << 18
BLOCK = 1 << 17
# runs the command in argv[1:] and prints its peak RSS (KiB): the only child of this process
PEAK = "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); " \
       "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"


def make_pool(seed):
    """POOL formatted rows (bytes, newline-terminated) and their labels."""
    rng = np.random.default_rng([seed, 22])
    X = np.round(rng.uniform(-1.0, 1.0, size=(POOL, D)), 6)
    X[rng.random(X.shape) < 0.4] = 0.0                     # ijcnn1 is ~60 % dense
    w = rng.normal(size=D)
    f = np.sin(3.0 * X[:, :4]).sum(axis=1) + X @ w * 0.5 + (X[:, 4] * X[:, 5]) * 2.0
    y = np.where(f > np.median(f), 1, -1)
    flip = rng.random(POOL) < 0.10
    y[flip] = -y[flip]
    rows = []
    for i in range(POOL):
        nz = np.flatnonzero(X[i])
        feats = " ".join(f"{j + 1}:{X[i, j]:.6g}" for j in nz)
        rows.append(f"{y[i]:d} {feats}\n".encode())
    return rows


def write_file(path, gigabytes, seed):
    """Write about ``gigabytes`` GB of rows; returns (rows, bytes, seconds)."""
    t0 = time.perf_counter()
    pool = make_pool(seed)
    rng = np.random.default_rng([seed, 1])
    target = int(gigabytes * 1e9)
    n = size = 0
    with open(path, "wb", buffering=1 << 22) as f:
        while size < target:
            idx = rng.integers(0, POOL, size=BLOCK)
            block = b"".join([pool[i] for i in idx.tolist()])
            if size + len(block) > target:             # trim the last block to whole rows
                cut = block.rfind(b"\n", 0, target - size) + 1
                if cut <= 0:
                    cut = block.find(b"\n") + 1
                block = block[:cut]
            f.write(block)
            n += block.count(b"\n")
            size += len(block)
    return n, size, time.perf_counter() - t0


def test_streaming_pass_stays_under_300_mb(tmp_path):
    path = tmp_path / "stream.libsvm"
    n_rows, n_bytes, _ = write_file(path, GIGABYTES, seed=0)
    out = tmp_path / "result.json"
    cmd = [sys.executable, "-m", "onlinekern.train", "-a", "fogd-hinge", str(path), "--stream", "--classes", "1,-1",
           "--n-features", str(D), "-g", "0.1", "--n-components", "400", "--chunk-rows", "65536", "--seed", "0",
           "-q", "--json", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PEAK] + cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr
    peak_mb = int(proc.stdout.split()[-1]) / 1024.0
    run = json.loads(out.read_text())["runs"][0]
    print(f"\nstreaming {n_bytes / 1e9:.2f} GB ({run['n_examples']:,} rows): peak RSS {peak_mb:.1f} MB, "
          f"{wall:.1f} s wall, {run['seconds']:.1f} s learning, {run['mistake_rate']:.2f} % mistakes")
    assert run["n_examples"] == n_rows
    assert peak_mb < 300, f"peak RSS {peak_mb:.1f} MB >= 300 MB"
