"""The one harness of the benchmarks in tools/: timing, the machine, the shared data, output.

Every script in tools/ imports this module (``import harness as h``) instead of carrying its own
copies.  Importing it puts the repository root first on ``sys.path``, so ``python tools/X.py``
runs the worktree's onlinekern.

* timing: :func:`side_by_side` times several callables alternately (so drifts in the machine's
  load hit all alike) and reports medians over repeats; :func:`ratios` divides them;
* the machine: :func:`machine` (CPU model, the SIMD level onlinekern dispatches to, cores, load)
  and :func:`machine_line`;
* the shared data: :class:`Data` decompresses ``../shared/data/NAME.xz`` once into a temporary
  folder and loads (and caches) files, concatenations and row slices;
* output: :func:`write_json` (atomic), :func:`md_table`, :func:`parser` (the common options);
* wide data: :class:`ColumnPermutation` (a seeded one-to-one map of column indices of any width,
  computed, never stored) and :func:`run_measured` (a command in its own process: exit status,
  seconds, peak RSS).
"""
import argparse
import json
import lzma
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

import onlinekern as ok  # noqa: E402
from onlinekern._core import vmath  # noqa: E402
from onlinekern.io.atomic import atomic_write, to_jsonable  # noqa: E402

DATA_DIR = REPO.parent / "shared" / "data"
LEVELS = {0: "baseline", 1: "AVX2+FMA", 2: "AVX-512"}


# ---- timing ------------------------------------------------------------------------------------

def median(xs):
    """Median of a non-empty sequence."""
    return statistics.median(xs)


def side_by_side(fns, repeats, seconds=None):
    """Run every callable of ``fns`` (name -> callable) in turn, ``repeats`` rounds.

    Parameters
    ----------
    fns : dict
        Name -> callable without arguments.
    repeats : int
        Rounds; in each round every callable runs once, in order.
    seconds : callable, optional
        Maps a callable's return value to the seconds it reports (e.g. ``lambda r: r.seconds``
        for ``run_online``'s learning time); default: the wall time of the call.

    Returns
    -------
    medians : dict
        Name -> median seconds over the rounds.
    results : dict
        Name -> list of the return values, one per round.
    """
    times = {k: [] for k in fns}
    results = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t = time.perf_counter()
            r = fn()
            times[k].append(time.perf_counter() - t if seconds is None else seconds(r))
            results[k].append(r)
    return {k: median(v) for k, v in times.items()}, results


def ratios(medians, base):
    """Each median divided by the one named ``base`` (a side-by-side ratio)."""
    return {k: v / medians[base] for k, v in medians.items()}


# ---- the machine -------------------------------------------------------------------------------

def loadavg():
    """The 1-minute load average (NaN where the platform has none)."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else float("nan")


def cpu_model():
    """The CPU model name from /proc/cpuinfo (``platform.processor()`` elsewhere)."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine():
    """The machine a figure was measured on: CPU, SIMD level onlinekern runs at, cores, load."""
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "simd": LEVELS[vmath.simd_level()],
            "libmvec": bool(vmath.vector_math()), "loadavg": loadavg(), "python": platform.python_version(),
            "numpy": np.__version__, "onlinekern": ok.__version__, "date": time.strftime("%Y-%m-%d %H:%M")}


def machine_line(info=None):
    """One printable line of :func:`machine`."""
    i = machine() if info is None else info
    return (f"machine: {i['cpu']}, {i['cores']} cores, SIMD {i['simd']} (libmvec {i['libmvec']}), load average "
            f"{i.get('loadavg')}; Python {i['python']}, numpy {i['numpy']}, onlinekern {i['onlinekern']}")


# ---- the shared data ---------------------------------------------------------------------------

class Data:
    """The shared LIBSVM files (``NAME.xz`` in ``root``), decompressed once, loaded once.

    Parameters
    ----------
    root : path-like
        Folder holding ``NAME.xz`` (default ``../shared/data`` beside the repository).
    """

    def __init__(self, root=DATA_DIR):
        self.root = Path(root)
        self.tmp = Path(tempfile.mkdtemp(prefix="onlinekern-bench-"))
        self.cache = {}

    def plain(self, *names):
        """Path of the decompressed concatenation of ``names`` (in a temporary folder)."""
        out = self.tmp / "+".join(names)
        if not out.exists():
            with open(out, "wb") as dst:
                for name in names:
                    src = self.root / (name + ".xz")
                    if not src.exists():
                        raise SystemExit(f"{src}: not found (use --data-dir)")
                    with lzma.open(src) as f:
                        shutil.copyfileobj(f, dst)
        return out

    def load(self, *names, rows=None, dtype=np.float64):
        """(X CSR, y) of the files ``names`` one after another, optionally the first ``rows``."""
        key = (names, np.dtype(dtype).str)
        if key not in self.cache:
            self.cache[key] = ok.load_libsvm(self.plain(*names), dtype=dtype)
        X, y = self.cache[key]
        return (X, y) if rows is None else (X[:rows], y[:rows])

    def close(self):
        """Remove the decompressed copies."""
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---- output ------------------------------------------------------------------------------------

def parser(doc, repeats=5, data=True, json=True):
    """An ArgumentParser with the common options: --data-dir, --repeats, --json (each unless None/False)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if data:
        ap.add_argument("--data-dir", default=str(DATA_DIR), help="folder of NAME.xz (default ../shared/data)")
    if repeats is not None:
        ap.add_argument("--repeats", type=int, default=repeats, help=f"runs per figure, median reported ({repeats})")
    if json:
        ap.add_argument("--json", help="also write the figures to this JSON file")
    return ap


def write_json(path, obj):
    """Write ``obj`` as JSON (numpy values made plain) to ``path`` atomically; no-op if path is None."""
    if path:
        atomic_write(path, json.dumps(to_jsonable(obj), indent=1) + "\n")


def md_table(head, rows):
    """A Markdown table: header cells, then rows of cells (numbers right-aligned)."""
    num = [bool(rows) and (isinstance(c, (int, float)) or str(c)[:1].isdigit()) for c in rows[0]] if rows else []
    align = ["---:" if i < len(num) and num[i] else "---" for i in range(len(head))]
    lines = ["| " + " | ".join(map(str, head)) + " |", "|" + "|".join(align) + "|"]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


# ---- wide data ---------------------------------------------------------------------------------

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix64(x):
    """splitmix64's finaliser on a uint64 array (a bijection of 64-bit words; wraps silently)."""
    x = x.copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


class ColumnPermutation:
    """A seeded permutation of the column indices 0..n-1, for any n up to 2^62, in O(1) memory.

    A four-round balanced Feistel network on the smallest even number of bits 2h with 2^(2h) >= n,
    keyed by ``seed`` through splitmix64, walked in cycles until the value falls below n (the
    standard "cycle walking" restriction of a permutation of [0, 2^(2h)) to [0, n): still one to
    one, at most a few steps on average since 2^(2h) < 4 n).  :meth:`inverse` undoes it.  Same
    seed and n, same map on any machine: the tools' wide copies are reproducible from the
    command line alone.

    Parameters
    ----------
    n : int
        Size of the domain.
    seed : int
        Key of the permutation.
    """

    ROUNDS = 4

    def __init__(self, n, seed):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n = int(n)
        self.seed = int(seed)
        bits = max(2, int(n - 1).bit_length())
        self.half = (bits + 1) // 2
        self.mask = np.uint64((1 << self.half) - 1)
        base = _mix64(np.array([self.seed & ((1 << 64) - 1)], dtype=np.uint64))[0]
        self.keys = [_mix64(np.array([base + np.uint64(r + 1)], dtype=np.uint64))[0] for r in range(self.ROUNDS)]

    def _round(self, x, r):
        return _mix64(x ^ self.keys[r]) & self.mask

    def _encrypt(self, v):
        h = np.uint64(self.half)
        left, right = v >> h, v & self.mask
        for r in range(self.ROUNDS):
            left, right = right, left ^ self._round(right, r)
        return (left << h) | right

    def _decrypt(self, v):
        h = np.uint64(self.half)
        left, right = v >> h, v & self.mask
        for r in reversed(range(self.ROUNDS)):
            left, right = right ^ self._round(left, r), left
        return (left << h) | right

    def _walk(self, x, step):
        x = np.asarray(x)
        if x.size and (x.min() < 0 or x.max() >= self.n):
            raise ValueError(f"column indices must be in [0, {self.n})")
        v = step(x.astype(np.uint64))
        out = v >= np.uint64(self.n)
        while out.any():
            v[out] = step(v[out])
            out = v >= np.uint64(self.n)
        return v.astype(np.int64)

    def __call__(self, x):
        """The images of the indices ``x`` (array of int in [0, n))."""
        return self._walk(x, self._encrypt)

    def inverse(self, x):
        """The preimages of the indices ``x``: ``inverse(self(x)) == x``."""
        return self._walk(x, self._decrypt)


def run_measured(cmd, timeout=None, env=None, limit_mb=None):
    """Run ``cmd`` (a list) in its own process: exit status, wall seconds, peak RSS, output.

    The peak resident set size is the child's own (``os.wait4``'s ``ru_maxrss``), so every run of
    a benchmark is measured apart from the benchmark process and from the other runs.  A run still
    going after ``timeout`` seconds is killed and reports ``status`` "timeout"; one killed by a
    signal (e.g. the kernel's out-of-memory killer) reports a negative status.  ``limit_mb`` caps
    the child's address space (``RLIMIT_AS``), so a run that would allocate too much fails with
    MemoryError instead of crowding the machine.

    Returns
    -------
    dict with ``status`` (the exit code, negative for a signal, or "timeout"), ``seconds``,
    ``peak_rss_mb``, ``stdout`` and ``stderr``
    """
    with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        t = time.perf_counter()
        def cap():
            import resource
            lim = int(limit_mb) << 20
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env, preexec_fn=cap if limit_mb else None)
        status = "timeout"
        while True:
            pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(code)
                proc.returncode = status          # reaped here: Popen must not wait again
                break
            if timeout is not None and time.perf_counter() - t > timeout:
                proc.kill()
                pid, code, usage = os.wait4(proc.pid, 0)
                proc.returncode = -9
                break
            time.sleep(0.02)
        seconds = time.perf_counter() - t
        fo.seek(0)
        fe.seek(0)
        return {"status": status, "seconds": seconds, "peak_rss_mb": usage.ru_maxrss / 1024.0,
                "stdout": fo.read(), "stderr": fe.read()}
