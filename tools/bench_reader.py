"""Benchmark onlinekern's LIBSVM reader against sklearn.datasets.load_svmlight_file.

Decompresses ``ijcnn1.t.xz`` (91,701 rows) from the shared data folder to a temporary file,
times both readers alternately on it (so drifts in machine load hit both alike), checks that
their outputs are identical and prints the medians, the ratio and a Markdown table row.

Usage::

    python tools/bench_reader.py [--data-dir ../shared/data] [--repeats 7] [--name ijcnn1.t]
"""
import argparse
import lzma
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _identical(a, b):
    """Exact equality of two (X, y) results (index dtypes aside: sklearn gives int64)."""
    (Xa, ya), (Xb, yb) = a, b
    return (Xa.shape == Xb.shape
            and np.array_equal(Xa.indptr, Xb.indptr)
            and np.array_equal(Xa.indices, Xb.indices)
            and Xa.data.dtype == Xb.data.dtype
            and Xa.data.tobytes() == Xb.data.tobytes()
            and ya.tobytes() == yb.tobytes())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data",
                        help="folder holding NAME.xz (default: ../shared/data from the repo root)")
    parser.add_argument("--name", default="ijcnn1.t", help="data set name (default: ijcnn1.t)")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs of each reader")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(REPO))
    from sklearn.datasets import load_svmlight_file

    from onlinekern.io import load_libsvm

    source = args.data_dir / (args.name + ".xz")
    if not source.exists():
        parser.error(f"{source} not found")
    dtype = np.dtype(args.dtype)

    with tempfile.TemporaryDirectory(prefix="bench-reader-") as tmp:
        path = os.path.join(tmp, args.name)
        with lzma.open(source) as src, open(path, "wb") as dst:
            dst.write(src.read())
        size_mb = os.path.getsize(path) / 2**20

        def ours():
            return load_libsvm(path, dtype=dtype)

        def theirs():
            return load_svmlight_file(path, zero_based=False, dtype=dtype)

        # Warm-up (page cache, imports), and the identity check.
        res_ours, res_theirs = ours(), theirs()
        same = _identical(res_ours, res_theirs)
        t_ours, t_theirs = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            ours()
            t1 = time.perf_counter()
            theirs()
            t2 = time.perf_counter()
            t_ours.append(t1 - t0)
            t_theirs.append(t2 - t1)

    m_ours, m_theirs = statistics.median(t_ours), statistics.median(t_theirs)
    X = res_ours[0]
    print(f"{args.name}: {X.shape[0]} rows, {X.shape[1]} features, {X.nnz} stored values, "
          f"{size_mb:.1f} MiB text, dtype {dtype}")
    print(f"onlinekern.io.load_libsvm           median {m_ours * 1e3:8.1f} ms "
          f"(min {min(t_ours) * 1e3:.1f})")
    print(f"sklearn load_svmlight_file          median {m_theirs * 1e3:8.1f} ms "
          f"(min {min(t_theirs) * 1e3:.1f})")
    print(f"speed-up {m_theirs / m_ours:.1f}x, outputs identical: {same}")
    print()
    print("| file | rows | load_libsvm (ms) | sklearn (ms) | speed-up | identical |")
    print("|---|---:|---:|---:|---:|---|")
    print(f"| {args.name} | {X.shape[0]:,} | {m_ours * 1e3:.1f} | {m_theirs * 1e3:.1f} | "
          f"{m_theirs / m_ours:.1f}x | {'yes' if same else 'NO'} |")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
