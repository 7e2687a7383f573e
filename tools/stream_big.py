"""Stream a multi-gigabyte LIBSVM file through ``python -m onlinekern.train --stream`` and report
its peak memory.

Writes a deterministic ijcnn1-like file (22 features, labels from a fixed non-linear rule with
10 % label noise; rows drawn from a pool of 2^18 pre-formatted rows, so gigabytes take seconds)
of about ``--gigabytes`` GB, runs FOGD-hinge on it in one streaming pass in a child process and
prints the child's peak RSS (``getrusage(RUSAGE_CHILDREN)``), rows, seconds and mistake rate.
The file is deleted afterwards unless ``--keep``.

    python tools/stream_big.py [--gigabytes 5] [--out DIR] [--keep] [--chunk-rows 65536]
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import harness as h
from harness import REPO

D = 22
POOL = 1 << 18
BLOCK = 1 << 17


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


def main(argv=None):
    p = h.parser(__doc__, repeats=None, data=False)
    p.add_argument("--gigabytes", type=float, default=5.0, help="file size in GB (default: 5)")
    p.add_argument("--out", help="directory for the file (default: a new temporary directory)")
    p.add_argument("--keep", action="store_true", help="keep the file (and reuse it if present)")
    p.add_argument("--chunk-rows", type=int, default=65536)
    p.add_argument("--n-components", type=int, default=400)
    p.add_argument("--gamma", type=float, default=0.1, help="kernel width (default: 0.1)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    tmp = None
    if a.out is None:
        tmp = tempfile.mkdtemp(prefix="onlinekern-stream-")
        out = Path(tmp)
    else:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
    path = out / f"stream_big_{a.gigabytes:g}GB_seed{a.seed}.libsvm"
    try:
        if a.keep and path.exists():
            n_rows, n_bytes, gen_s = None, path.stat().st_size, 0.0
            print(f"reusing {path} ({n_bytes / 1e9:.2f} GB)", flush=True)
        else:
            print(f"writing {path} ...", flush=True)
            n_rows, n_bytes, gen_s = write_file(path, a.gigabytes, a.seed)
            print(f"wrote {n_rows} rows, {n_bytes / 1e9:.2f} GB in {gen_s:.1f} s", flush=True)
        res_json = out / "stream_big_result.json"
        cmd = [sys.executable, "-m", "onlinekern.train", "-a", "fogd-hinge", str(path), "--stream",
               "--classes", "1,-1", "--n-features", str(D), "-g", str(a.gamma),
               "--n-components", str(a.n_components), "--chunk-rows", str(a.chunk_rows),
               "--seed", str(a.seed), "-q", "--json", str(res_json)]
        print("running: " + " ".join(cmd), flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss   # KiB on Linux
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            return proc.returncode
        doc = json.loads(res_json.read_text())
        run = doc["runs"][0]
        figures = {
            "file_gb": n_bytes / 1e9, "rows": run["n_examples"],
            "peak_rss_mb": peak_kib / 1024.0, "wall_seconds": wall,
            "learning_seconds": run["seconds"], "mistake_rate": run["mistake_rate"],
            "model_size": run["model_size"], "chunk_rows": a.chunk_rows,
            "n_components": a.n_components, "generate_seconds": gen_s,
            "throughput_mb_s": n_bytes / 1e6 / wall, "machine": h.machine(),
        }
        print(h.machine_line(figures["machine"]))
        print(proc.stdout.strip())
        print(f"rows {figures['rows']}, file {figures['file_gb']:.2f} GB, peak RSS "
              f"{figures['peak_rss_mb']:.1f} MB (target < 300 MB), wall {wall:.1f} s "
              f"({figures['throughput_mb_s']:.0f} MB/s), learning {run['seconds']:.1f} s, "
              f"mistake rate {run['mistake_rate']:.3f}%", flush=True)
        h.write_json(a.json, figures)
        return 0 if figures["peak_rss_mb"] < 300 else 1
    finally:
        if not a.keep:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                for f in (path, out / "stream_big_result.json"):
                    try:
                        os.remove(f)
                    except FileNotFoundError:
                        pass


if __name__ == "__main__":
    sys.exit(main())
