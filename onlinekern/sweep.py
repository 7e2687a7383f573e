"""Sweeps: algorithms × hyper-parameter grid × runs over data sets, in parallel, never losing a run.

    python -m onlinekern.sweep -a fogd-hinge,ogd-hinge --data ijcnn1 --runs 10 --n-jobs 2 \\
        --out results.jsonl --grid eta=0.3,1,3 -D 1000
    python -m onlinekern.sweep -a fogd-hinge --data ijcnn1+ijcnn1.t --tune --out results.jsonl
    python -m onlinekern.report results.jsonl --format markdown --plot curves.png

Python: ``onlinekern.sweep(["fogd-hinge"], "ijcnn1", runs=10, grid={"eta": [0.3, 1]})`` returns
the records (a pandas DataFrame with ``as_frame=True``).

Cells and seeds
---------------
A *cell* is one single pass: (phase, algorithm, parameters, data set, root seed S, run r).  Run r
presents the data in the order ``onlinekern.seeding.permutation(S, r, n)``, i.e. the numpy
Generator of ``SeedSequence(entropy=S, spawn_key=(PERMUTATION=0, r))``, and builds its learner
with ``seed = S + r`` (ALGORITHMS.md §1.5) and ``n_threads = 1``.  Both depend only on (S, r), not
on the algorithm, the parameters or the order in which cells execute, so

* every algorithm and grid point sees the same R permutations (paired comparisons, as in the
  papers' tables), and a sweep is reproducible whatever ``n_jobs``, backend or interruption;
* cell (algorithm A, params P, data F, S, r) is exactly run r of
  ``python -m onlinekern.train -a A FILE --runs R --seed S`` with P as options (any R > r; with
  R = 1 add ``--shuffle``), or in Python
  ``run_online(make_learner(A, **P, seed=S + r, n_threads=1), X, y, seed=S, run=r)``.

``file_order=True`` presents every run in file order (runs then differ only by the learner seed).
Tuning passes (``tune=True``) run on the subset ``onlinekern.tune.subset_indices(n, subset, S)``
in the permutations t = 0..tune_runs-1 of the subset, learner seed S + t.

Results
-------
Each finished cell is appended at once to the JSONL file ``out`` (flush + fsync; see
:mod:`onlinekern.results`) with: key, phase, algorithm, params (as given: fixed parameters and the
grid point), resolved_params (every learner parameter), data (name), data_files (path and sha256
of each file as given), data_sha256 (of the files' bytes in order), n_rows, n_features,
preprocess (scaling, tuning subset), seed, run, order, learner_seed, status ("ok"/"failed"),
error (the message of a failed cell), task, n_examples, n_mistakes, mistake_rate or rmse,
seconds (learning time of the pass), model_size, size_name, gamma_ (the width used), curve
(mistake rate or RMSE, model size and seconds at the checkpoints; omitted for tuning passes),
version, machine (hostname, cpu, cores, platform, python), pid and finished_at.  Re-running the
same command skips the cells already in the file (``retry_failed`` re-runs failed ones).

Parallelism
-----------
Cells run through joblib: ``backend="loky"`` (processes, the default), ``"threading"`` or
``"dask"`` (a ``dask.distributed`` cluster: ``scheduler="tcp://host:8786"`` or ``client=``).
Every worker runs one cell at a time on one thread (learner ``n_threads=1``, OpenMP/BLAS pools
limited to 1 with ``threadpoolctl``), so ``n_jobs`` workers use ``n_jobs`` cores.  Data arrays
are passed as arguments, so joblib memory-maps them once per phase for loky workers
(copy-on-write, no copy per task) and Dask scatters them once; only the parent process writes
the results file.  Timings of concurrent runs share memory bandwidth: compare times from runs
made with the same ``n_jobs`` on an otherwise idle machine.
"""
import argparse
import datetime
import math
import os
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

import onlinekern
from onlinekern import cli
from onlinekern.cli import DataError, UsageError
from onlinekern.results import (MemoryStore, ResultStore, StoreLockedError, cell_key,
                                machine_info, to_jsonable)
from onlinekern.seeding import check_seed
from onlinekern.tune import (TuneResult, default_grid, expand_grid, grid_for, normalise_grid,
                             select_best, subset_fraction, subset_indices)

__all__ = ["sweep", "main"]

# ``onlinekern/__init__.py`` imports this module to export ``onlinekern.sweep`` (the function),
# so ``python -m onlinekern.sweep`` finds it in sys.modules before running it as __main__ and
# runpy warns that this "may result in unpredictable behaviour".  It does not here: __main__
# only calls the imported module's ``main``.
warnings.filterwarnings("ignore", message=r"'onlinekern\.sweep' found in sys\.modules",
                        category=RuntimeWarning)

PROG = "onlinekern.sweep"
BACKENDS = ("loky", "threading", "dask")


# ---- data sets --------------------------------------------------------------------------------------

@dataclass
class DataSet:
    """One data set of a sweep: arrays shared with the workers plus its identity.

    ``X`` is CSR (float64 data, int32 indices and indptr when they fit) or a C-contiguous
    float64 array; ``identity`` (sha256, preprocessing, subset) enters every cell key.
    """

    name: str
    X: object
    y: np.ndarray
    files: list
    sha256: str
    preprocess: dict
    n_rows_full: int
    subset: object = None
    _args: object = field(default=None, repr=False)

    @property
    def n_rows(self):
        return int(self.X.shape[0])

    @property
    def n_features(self):
        return int(self.X.shape[1])

    @property
    def identity(self):
        return {"sha256": self.sha256, "preprocess": self.preprocess, "subset": self.subset}

    def worker_args(self):
        """The positional arguments of a task: the same array objects every time, so joblib
        dumps (loky) or scatters (dask) each of them once per phase."""
        if self._args is None:
            if sp.issparse(self.X):
                self._args = ("csr", self.X.shape, self.X.data, self.X.indices, self.X.indptr, self.y)
            else:
                self._args = ("dense", self.X.shape, self.X, None, None, self.y)
        return self._args

    def record_fields(self):
        return {"data": self.name, "data_files": self.files, "data_sha256": self.sha256,
                "n_rows": self.n_rows, "n_features": self.n_features,
                "preprocess": dict(self.preprocess, subset=self.subset)}


def _canonical_csr(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.nnz <= np.iinfo(np.int32).max and X.indptr.dtype != np.int32:
        # int32 indices and indptr: scipy keeps them as they are and the learner loop reads
        # the indices without a converted copy
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                          shape=X.shape, copy=False)
        X.has_sorted_indices = True
    return X


def _hash_arrays(X, y):
    import hashlib
    h = hashlib.sha256(b"onlinekern-arrays-v1\n")
    if sp.issparse(X):
        h.update(f"csr {X.shape[0]} {X.shape[1]}\n".encode())
        for a in (X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)):
            h.update(np.ascontiguousarray(a).tobytes())
    else:
        h.update(f"dense {X.shape[0]} {X.shape[1]}\n".encode())
        h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    y = np.asarray(y)
    h.update(f"y {y.dtype.str}\n".encode())
    h.update(np.ascontiguousarray(y).tobytes() if y.dtype != object else repr(y.tolist()).encode())
    return h.hexdigest()


_SHA_CACHE = {}


def _file_sha(path):
    from onlinekern.results import sha256_file
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        _SHA_CACHE[key] = sha256_file(path)
    return _SHA_CACHE[key]


def _files_sha(paths):
    """sha256 of the files' bytes in order (``cat a b | sha256sum``); one file: its own sha256."""
    import hashlib
    if len(paths) == 1:
        return _file_sha(paths[0])
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


_STRIP_EXT = (".xz", ".gz", ".bz2", ".libsvm", ".svm")


def _display_name(path):
    """``data/ijcnn1.t.xz`` -> ``ijcnn1.t``: the base name without compression / LIBSVM suffixes."""
    name = os.path.basename(path)
    changed = True
    while changed:
        changed = False
        for ext in _STRIP_EXT:
            if name.lower().endswith(ext) and len(name) > len(ext):
                name = name[:-len(ext)]
                changed = True
    return name


def _missing(path):
    import errno
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)


class NoPairsError(ValueError):
    """No algorithm of the sweep supports the task of any of its data sets."""


def parse_data_spec(spec):
    """``(name, [paths])`` of a data argument: ``FILE``, ``FILE+FILE`` (rows concatenated in
    order) or ``NAME=FILE[+FILE...]``."""
    text = os.fspath(spec)
    if os.path.exists(text):
        return _display_name(text), [text]
    name = None
    head, sep, rest = text.partition("=")
    if sep and head and os.sep not in head and "+" not in head:
        name, text = head, rest
        if os.path.exists(text):
            return name, [text]
    paths = [p for p in text.split("+") if p]
    if not paths:
        raise ValueError(f"empty data specification {spec!r}")
    for p in paths:
        if not os.path.exists(p):
            raise _missing(p)
    return name or "+".join(_display_name(p) for p in paths), paths


def _load_files(paths):
    from onlinekern.io import load_libsvm
    Xs, ys = [], []
    for p in paths:
        X, y = load_libsvm(p)
        Xs.append(X)
        ys.append(y)
    d = max(X.shape[1] for X in Xs)
    Xs = [sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d)) for X in Xs]
    X = Xs[0] if len(Xs) == 1 else sp.vstack(Xs, format="csr")
    return X, np.concatenate(ys)


def _dataset_from(spec, scale=False, scale_target=False, name=None):
    """A DataSet from a path / ``"a+b"`` / ``NAME=...`` string, a list of paths (concatenated),
    an ``(X, y)`` pair, or an existing DataSet."""
    from onlinekern.preprocessing import FeatureScaler, TargetScaler
    if isinstance(spec, DataSet):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2 and not isinstance(spec[0], (str, os.PathLike)):
        X, y = spec
        X = _canonical_csr(X) if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"X has {X.shape[0]} rows but y has shape {y.shape}")
        sha = _hash_arrays(X, y)
        files = []
        name = name or f"arrays-{sha[:8]}"
    else:
        if isinstance(spec, (list, tuple)):
            paths = [os.fspath(p) for p in spec]
            for p in paths:
                if not os.path.exists(p):
                    raise _missing(p)
            auto = "+".join(_display_name(p) for p in paths)
        else:
            auto, paths = parse_data_spec(spec)
        X, y = _load_files(paths)
        X = _canonical_csr(X)
        sha = _files_sha(paths)
        files = [{"path": p, "sha256": _file_sha(p)} for p in paths]
        name = name or auto
    if scale:
        X = FeatureScaler(0.0, 1.0).fit_transform(X)
        X = _canonical_csr(X) if sp.issparse(X) else np.ascontiguousarray(X)
    if scale_target:
        y = TargetScaler(0.0, 1.0).fit_transform(np.asarray(y, dtype=np.float64))
    pre = {"scale": bool(scale), "scale_target": bool(scale_target)}
    return DataSet(name, X, y, files, sha, pre, int(X.shape[0]))


def _datasets(data, scale, scale_target):
    """Normalise the ``data`` argument of :func:`sweep` to a list of DataSets."""
    if isinstance(data, dict):
        return [_dataset_from(v, scale, scale_target, name=str(k)) for k, v in data.items()]
    if isinstance(data, (str, os.PathLike, DataSet)):
        return [_dataset_from(data, scale, scale_target)]
    if isinstance(data, tuple) and len(data) == 2 and not isinstance(data[0], (str, os.PathLike)):
        return [_dataset_from(data, scale, scale_target)]
    return [_dataset_from(d, scale, scale_target) for d in data]


def _subset(ds, fraction, seed):
    """The tuning subset of ``ds`` as a DataSet of its own (rows in file order)."""
    idx = subset_indices(ds.n_rows, fraction, seed)
    X = ds.X[idx]
    X = _canonical_csr(X) if sp.issparse(X) else np.ascontiguousarray(X)
    sub = {"fraction": float(fraction), "seed": int(seed), "rows": int(len(idx))}
    return DataSet(ds.name, X, np.asarray(ds.y)[idx], ds.files, ds.sha256, ds.preprocess,
                   ds.n_rows_full, sub)


# ---- one cell, in a worker -----------------------------------------------------------------------------

_WATCHING = False


def _watch_parent(parent_pid):
    """In a loky worker: exit when the sweep process is gone (``kill -9``), instead of idling
    as an orphan until loky's idle timeout.  Checked once a second by a daemon thread."""
    global _WATCHING
    if _WATCHING or os.getpid() == parent_pid or os.getppid() != parent_pid:
        return
    import threading

    def watch():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="onlinekern-parent-watch", daemon=True).start()
    _WATCHING = True


class _PoolLimit:
    """OpenMP/BLAS pools of this process limited to 1 thread while any task holds the limit.

    Tasks running concurrently in one process (Dask worker threads) share the limit: the first
    to enter sets it (threadpoolctl), the last to leave restores the original sizes, so a task
    that ends early never lifts the limit under another, and none leaves it behind."""

    import threading as _threading
    _lock = _threading.Lock()
    _holders = 0
    _limiter = None

    def __init__(self):
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            self.active = False
            return
        self.active = True
        with _PoolLimit._lock:
            if _PoolLimit._holders == 0:
                _PoolLimit._limiter = threadpool_limits(limits=1)
            _PoolLimit._holders += 1

    def restore_original_limits(self):
        if not self.active:
            return
        self.active = False
        with _PoolLimit._lock:
            _PoolLimit._holders -= 1
            if _PoolLimit._holders == 0 and _PoolLimit._limiter is not None:
                _PoolLimit._limiter.restore_original_limits()
                _PoolLimit._limiter = None


def _limit_threads():
    """Limit this process's OpenMP/BLAS thread pools to 1 until ``restore_original_limits()``."""
    return _PoolLimit()


def _rebuild(kind, shape, a, b, c):
    if kind == "csr":
        X = sp.csr_matrix((a, b, c), shape=tuple(shape), copy=False)
        X.has_sorted_indices = True
        return X
    return a


def _finite(v):
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def run_cell(spec, kind, shape, a, b, c, y):
    """Run one cell (in a worker) and return its measured fields.

    ``spec``: algorithm, learner_params (seed and n_threads included), perm_seed (None = file
    order), run, checkpoints, keep_curve, limit_threads.  Any exception becomes
    ``status: "failed"`` with its message; so does a non-finite mistake rate or RMSE.
    """
    from onlinekern.protocol import run_online
    from onlinekern.registry import make_learner
    t0 = time.time()
    out = {}
    if spec.get("parent_pid"):
        _watch_parent(spec["parent_pid"])
    # loky workers already start with OMP_NUM_THREADS=1 (inner_max_num_threads); a Dask worker
    # is someone else's process: limit its pools for the duration of the task only
    limiter = _limit_threads() if spec.get("limit_threads") else None
    try:
        X = _rebuild(kind, shape, a, b, c)
        learner = make_learner(spec["algorithm"], **spec["learner_params"])
        res = run_online(learner, X, y, seed=spec["perm_seed"], run=spec["run"],
                         checkpoints="default" if spec["keep_curve"] else None)
        out = res.to_dict(with_curve=spec["keep_curve"])
        out.pop("curve", None) if not spec["keep_curve"] else None
        out["size_name"] = type(learner).size_name
        gamma = getattr(learner, "gamma_", None)
        out["gamma_"] = float(gamma) if gamma is not None else None
        err = res.error
        if not _finite(err):
            what = "RMSE" if res.task == "regression" else "mistake rate"
            out.update(status="failed", error=f"non-finite {what} ({err!r}): the learner diverged")
        else:
            out.update(status="ok", error=None)
    except Exception as exc:  # noqa: BLE001 - a failing cell is a result, not a crash
        tb = traceback.format_exc(limit=-3).strip().splitlines()
        out = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
               "traceback": "\n".join(tb[-6:])}
    finally:
        if limiter is not None:
            limiter.restore_original_limits()
    out.update(version=onlinekern.__version__, machine=machine_info(), pid=os.getpid(),
               wall_seconds=time.time() - t0,
               finished_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    return to_jsonable(out)


# ---- cells --------------------------------------------------------------------------------------------

@dataclass
class Cell:
    key: str
    static: dict          # identity fields copied into the record
    spec: dict            # what the worker needs
    dataset: DataSet


@dataclass
class Pair:
    """One (data set, algorithm) of a sweep with its fixed parameters."""

    dataset: DataSet
    algorithm: str
    cls: type
    fixed: dict           # parameters fixed by the caller that this learner has
    resolved: dict = None


ROWS = "@rows"
"""A parameter value standing for the number of rows of the data a cell runs on (e.g.
``params={"horizon": ROWS}``: the stream length T of learners whose step size depends on it;
a tuning pass on a subset gets the subset's length)."""


def _substitute_rows(params, n_rows):
    return {k: (int(n_rows) if isinstance(v, str) and v == ROWS else v) for k, v in params.items()}


def _resolved_params(algorithm, params, validate=True, n_rows=1):
    """Every hyper-parameter of the learner built from ``params`` (seed, n_threads dropped)."""
    from onlinekern.registry import make_learner
    learner = make_learner(algorithm, **_substitute_rows(params, n_rows))
    if validate:
        learner._validate_params()
    got = dict(learner.get_params())
    got.pop("seed", None)
    got.pop("n_threads", None)
    return learner, got


def make_cell(pair, params, seed, run, phase, file_order, dataset=None, keep_curve=True):
    """The cell of ``pair`` with ``params`` (fixed + grid point), run ``run`` under ``seed``."""
    ds = dataset if dataset is not None else pair.dataset
    names = pair.cls._get_param_names()
    # not validated here: a grid point the learner rejects becomes a failed cell, not a crash
    _, resolved = _resolved_params(pair.algorithm, params, validate=False, n_rows=ds.n_rows)
    order = "file" if file_order else "permutation"
    identity = {"phase": phase, "algorithm": pair.algorithm, "params": resolved,
                "data": ds.identity, "seed": seed, "run": run, "order": order}
    key = cell_key(identity)
    learner_seed = seed + run if "seed" in names else None
    lp = _substitute_rows(params, ds.n_rows)
    if "seed" in names:
        lp["seed"] = learner_seed
    if "n_threads" in names:
        lp["n_threads"] = 1
    static = {"key": key, "phase": phase, "algorithm": pair.algorithm, "params": dict(params),
              "resolved_params": resolved, **ds.record_fields(), "seed": seed, "run": run,
              "order": order, "learner_seed": learner_seed}
    spec = {"algorithm": pair.algorithm, "learner_params": lp,
            "perm_seed": None if file_order else seed, "run": run, "keep_curve": keep_curve}
    return Cell(key, static, spec, ds)


# ---- progress --------------------------------------------------------------------------------------------

def _hms(seconds):
    seconds = int(round(max(seconds, 0)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class SweepProgress:
    """``sweep: 12/60 runs (1 failed), 0:32 elapsed, ETA 2:08`` on stderr.

    mode 'bar' rewrites one line (terminals), 'lines' prints a line every ``interval`` seconds
    and at the end, 'off' prints nothing; 'auto' picks 'bar' on a terminal, else 'lines'.
    """

    def __init__(self, total, label="runs", stream=None, mode="auto", interval=10.0):
        self.total = total
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        if mode == "auto":
            isatty = getattr(self.stream, "isatty", None)
            mode = "bar" if isatty is not None and isatty() else "lines"
        self.mode = mode
        self.interval = interval
        self.done = self.failed = 0
        self.t0 = time.monotonic()
        self._last = -math.inf

    def text(self):
        el = time.monotonic() - self.t0
        s = f"sweep: {self.done}/{self.total} {self.label}"
        if self.failed:
            s += f" ({self.failed} failed)"
        s += f", {_hms(el)} elapsed"
        if 0 < self.done < self.total:
            s += f", ETA {_hms(el / self.done * (self.total - self.done))}"
        return s

    def update(self, status="ok"):
        self.done += 1
        self.failed += status != "ok"
        self.show(final=self.done >= self.total)

    def show(self, final=False):
        if self.mode == "off":
            return
        now = time.monotonic()
        if self.mode == "bar":
            if final or now - self._last >= 0.2:
                self.stream.write("\r\x1b[K" + self.text() + ("\n" if final else ""))
                self.stream.flush()
                self._last = now
        elif final or now - self._last >= self.interval:
            print(self.text(), file=self.stream, flush=True)
            self._last = now

    def close(self):
        if self.mode == "bar" and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()


# ---- the session: store, workers, phases ------------------------------------------------------------

def _worker_lost_errors():
    errs = []
    try:
        from joblib.externals.loky.process_executor import TerminatedWorkerError
        errs.append(TerminatedWorkerError)
    except ImportError:
        pass
    try:
        from distributed.scheduler import KilledWorker
        errs.append(KilledWorker)
    except ImportError:
        pass
    return tuple(errs)


class _Session:
    """Owns the results store and the parallel backend for one sweep or tune call."""

    def __init__(self, out=None, n_jobs=None, backend=None, scheduler=None, client=None,
                 progress=None, retry_failed=False, stream=None):
        if backend is None:
            backend = "dask" if (scheduler is not None or client is not None) else "loky"
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        if (scheduler is not None or client is not None) and backend != "dask":
            raise ValueError("a scheduler or client needs backend='dask'")
        if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer))
                                   or n_jobs == 0):
            raise ValueError(f"n_jobs must be a non-zero integer (negative: all cores but n - 1), got {n_jobs!r}")
        self.backend = backend
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self.client = client
        self._own_client = None
        self.retry_failed = retry_failed
        self.stream = sys.stderr if stream is None else stream
        self.progress_mode = ("off" if progress is False else "auto" if progress in (None, True)
                              else progress)
        self.store = ResultStore(out) if out is not None else MemoryStore()
        if self.store.truncated:
            print(f"{PROG}: {out}: dropped a half-written last line ({self.store.truncated} bytes) "
                  "left by an interrupted sweep", file=self.stream)
        self.skipped = 0
        self.ran = 0
        self._finished_now = set()     # keys finished by this session
        self._subsets = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.store.close()
        if self._own_client is not None:
            try:
                self._own_client.close()
            except Exception:  # noqa: BLE001
                pass
            self._own_client = None

    # -- backend ------------------------------------------------------------------------------
    def effective_jobs(self):
        if self.backend == "dask":
            return -1
        if self.n_jobs is None:
            return -1
        return self.n_jobs

    def _sequential(self):
        if self.backend == "dask":
            return False
        import joblib
        n = self.effective_jobs()
        return (joblib.cpu_count() + 1 + n if n < 0 else n) <= 1

    def _dask_client(self):
        if self.client is not None:
            return self.client
        if self._own_client is None:
            try:
                from distributed import Client, get_client
            except ImportError:
                raise UsageError("--backend dask needs dask.distributed: pip install 'dask[distributed]'") from None
            if self.scheduler is not None:
                self._own_client = Client(self.scheduler, set_as_default=False)
            else:
                try:
                    return get_client()
                except ValueError:
                    raise UsageError("--backend dask needs --scheduler ADDRESS (or a Client in Python)") from None
        return self._own_client

    def _config(self):
        cfg = {"backend": self.backend}
        if self.backend == "loky":
            # copy-on-write memory maps: writable views of the shared arrays (the compiled loop
            # takes non-const memoryviews) that no worker ever copies
            cfg.update(inner_max_num_threads=1, mmap_mode="c")
        if self.backend == "dask":
            cfg["client"] = self._dask_client()
        return cfg

    # -- running cells --------------------------------------------------------------------------
    def _done(self, cell):
        rec = self.store.get(cell.key)
        return rec is not None and (rec.get("status") == "ok" or not self.retry_failed)

    def run_cells(self, cells, label="runs"):
        """Run the cells not yet in the store; return the records of all ``cells`` in order."""
        seen = set()
        todo = []
        for c in cells:
            if c.key in seen:
                continue
            seen.add(c.key)
            if self._done(c):
                self.skipped += 1
            else:
                todo.append(c)
        if todo:
            progress = SweepProgress(len(todo), label, self.stream, self.progress_mode)
            try:
                self._execute(todo, progress)
            finally:
                progress.close()
        return [self.store.get(c.key) for c in cells]

    def _finish(self, cell, out, progress):
        rec = dict(cell.static)
        rec.update(out)
        self.store.append(rec)
        self._finished_now.add(cell.key)
        self.ran += 1
        progress.update(rec.get("status", "failed"))

    def _execute(self, todo, progress):
        if self._sequential():
            self._run_here(todo, progress)
            return
        pending = list(todo)
        isolate = False
        stalls = 0
        lost = _worker_lost_errors()
        while pending:
            before = len(pending)
            if isolate:
                # Workers died twice in a row without any run finishing in between: run the rest
                # one per call, so a cell that kills its worker is identified and recorded as
                # failed instead of failing the sweep forever.
                for c in pending:
                    try:
                        self._dispatch([c], progress)
                    except KeyboardInterrupt:
                        raise
                    except Exception as exc:  # noqa: BLE001
                        if c.key not in self._finished_now:
                            self._finish(c, _parent_failure(c, exc, lost), progress)
            else:
                try:
                    self._dispatch(pending, progress)
                except KeyboardInterrupt:
                    raise
                except Exception as exc:  # noqa: BLE001 - worker lost, cluster trouble
                    left = sum(c.key not in self._finished_now for c in pending)
                    first = str(exc).splitlines()[0] if str(exc) else ""
                    print(f"{PROG}: {type(exc).__name__}: {first}; retrying the {left} unfinished "
                          "runs", file=self.stream, flush=True)
            pending = [c for c in pending if c.key not in self._finished_now]
            stalls = stalls + 1 if pending and len(pending) >= before else 0
            isolate = isolate or stalls >= 2

    def _run_here(self, todo, progress):
        limiter = _limit_threads()
        try:
            for c in todo:
                args = c.dataset.worker_args()
                self._finish(c, run_cell(dict(c.spec), *args), progress)
        finally:
            if limiter is not None:
                limiter.restore_original_limits()

    def _dispatch(self, cells, progress):
        from joblib import Parallel, delayed, parallel_config
        by_key = {c.key: c for c in cells}
        limit = self.backend != "threading"

        parent = os.getpid() if self.backend == "loky" else None

        def task(c):
            spec = dict(c.spec, limit_threads=limit, key=c.key, parent_pid=parent)
            return delayed(_keyed_run_cell)(spec, *c.dataset.worker_args())

        # threads share the process's pools: limit them once around the whole call
        guard = _limit_threads() if self.backend == "threading" else None
        try:
            with parallel_config(**self._config()):
                par = Parallel(n_jobs=self.effective_jobs(), batch_size=1, pre_dispatch="2*n_jobs",
                               return_as=_RETURN_AS)
                for key, out in par(task(c) for c in cells):
                    self._finish(by_key[key], out, progress)
        finally:
            if guard is not None:
                guard.restore_original_limits()

    # -- phases ----------------------------------------------------------------------------------
    def pairs(self, datasets, algorithms, params, warn=True):
        """The (data set, algorithm) pairs that can run; incompatible ones are reported.

        ``params``: normalised fixed parameters (:func:`normalise_params`)."""
        from onlinekern.registry import available_learners, resolve
        table = available_learners()
        pairs = []
        for ds in datasets:
            for alg in algorithms:
                cls, _ = resolve(alg)
                names = set(cls._get_param_names())
                fixed = params_for(params, alg)
                learner, resolved = _resolved_params(alg, fixed, n_rows=ds.n_rows)
                kind = learner._task_kind()
                info = table.get(alg)
                tasks = info["tasks"] if info else cls.tasks
                try:
                    cli.check_labels(np.asarray(ds.y, dtype=np.float64) if ds.y.dtype != object else ds.y,
                                     kind, ds.name, tasks, alg, "task" in names)
                except DataError as exc:
                    if warn:
                        print(f"{PROG}: skipping {alg} on {ds.name}: {str(exc).split(': ', 1)[-1]}",
                              file=self.stream, flush=True)
                    continue
                pairs.append(Pair(ds, alg, cls, fixed, resolved))
        return pairs

    def tune_pairs(self, pairs, grid=None, subset=0.1, seed=0, runs=1):
        """Grid search for each pair; returns one TuneResult per pair."""
        seed = check_seed(seed)
        norm = normalise_grid(grid)
        made = []
        for p in pairs:
            if isinstance(p, tuple):
                ds, alg, fixed = p
                p = self.pairs([ds], [_canonical_name(alg)], {_canonical_name(alg): dict(fixed)},
                               warn=False)
                if not p:
                    learner, _ = _resolved_params(_canonical_name(alg), fixed, n_rows=ds.n_rows)
                    raise ValueError(f"{alg} cannot learn from {ds.name} ({learner._task_kind()} learner)")
                p = p[0]
            made.append(p)
        jobs = []
        for p in made:
            g = grid_for(norm, p.algorithm)
            if g is None:
                g = default_grid(p.algorithm, p.dataset.n_rows_full, p.fixed)
            g = _applicable_grid(g, p)
            points = expand_grid(g)
            frac = subset_fraction(subset, p.dataset.n_rows)
            sid = (id(p.dataset), frac, seed)
            if sid not in self._subsets:
                self._subsets[sid] = _subset(p.dataset, frac, seed)
            sub = self._subsets[sid]
            cells = [[make_cell(p, {**p.fixed, **pt}, seed, t, "tune", False, dataset=sub,
                                keep_curve=False) for t in range(runs)] for pt in points]
            jobs.append((p, g, points, cells, sub))
        flat = [c for _, _, _, cells, _ in jobs for cs in cells for c in cs]
        self.run_cells(flat, label="tuning runs")
        results = []
        for p, g, points, cells, sub in jobs:
            recs = [[self.store.get(c.key) for c in cs] for cs in cells]
            metric = _metric_of(p)
            table, best = select_best(points, recs, metric)
            res = TuneResult(
                algorithm=p.algorithm, metric=metric,
                best_params=None if best is None else {**p.fixed, **points[best]},
                best_error=None if best is None else table[best]["error"],
                best_point=None if best is None else dict(points[best]),
                table=table, grid=g, n_subset=sub.n_rows, n_rows=p.dataset.n_rows,
                subset=sub.subset["fraction"], seed=seed,
                records=[r for rs in recs for r in rs if r is not None])
            results.append(res)
        return results


def _keyed_run_cell(spec, kind, shape, a, b, c, y):
    """run_cell returning (key, fields): generator_unordered gives results out of order."""
    return spec["key"], run_cell(spec, kind, shape, a, b, c, y)


def _parent_failure(cell, exc, lost):
    msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    if isinstance(exc, lost):
        msg = "the worker running this cell died: " + msg
    return {"status": "failed", "error": msg, "version": onlinekern.__version__,
            "finished_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def _return_as():
    import inspect
    from joblib import Parallel
    try:
        src = inspect.signature(Parallel.__init__).parameters
    except (TypeError, ValueError):
        return "list"
    if "return_as" not in src:
        return "list"
    import joblib
    major, minor = (int(x) for x in joblib.__version__.split(".")[:2])
    return "generator_unordered" if (major, minor) >= (1, 4) else "generator"


_RETURN_AS = _return_as()


def _metric_of(pair):
    learner, _ = _resolved_params(pair.algorithm, pair.fixed, validate=False)
    return "rmse" if learner._task_kind() == "regression" else "mistake_rate"


def _applicable_grid(g, pair):
    names = set(pair.cls._get_param_names())
    out = {}
    for k, v in g.items():
        if k not in names:
            continue
        if k in pair.fixed:
            raise ValueError(f"{k} is both fixed and in the grid of {pair.algorithm}")
        if k in ("seed", "n_threads"):
            raise ValueError(f"{k} cannot be in a grid (the sweep sets it)")
        out[k] = list(v)
    return out


def _canonical_name(name):
    """The registry's spelling of an algorithm name (``FOGD-Hinge`` -> ``fogd-hinge``)."""
    from onlinekern.registry import resolve
    key = str(name).strip().lower()
    resolve(key)               # ValueError with a suggestion if unknown
    return key


def _algorithm_list(algorithms):
    if isinstance(algorithms, str):
        algorithms = [algorithms]
    out = []
    for a in algorithms:
        for part in str(a).split(","):
            if part.strip():
                name = _canonical_name(part)
                if name not in out:
                    out.append(name)
    if not out:
        raise ValueError("no algorithm given")
    return out


# ---- the public function -------------------------------------------------------------------------------

def sweep(algorithms, data, runs=10, seed=0, grid=None, params=None, tune=False, subset=0.1,
          tune_runs=1, n_jobs=None, backend=None, scheduler=None, client=None, out=None,
          scale=False, scale_target=False, file_order=False, retry_failed=False, progress=None,
          as_frame=False):
    """Run algorithms × grid × runs over data sets; return the records (one per run).

    Parameters
    ----------
    algorithms : str or list of str
        Learner names (``"fogd-hinge,ogd-hinge"`` or a list).
    data : path, ``"a+b"``, ``"NAME=a+b"``, ``(X, y)``, list of those, or dict name -> spec
        Data sets; ``a+b`` concatenates the files' rows in order (``ijcnn1+ijcnn1.t``).
    runs : int
        R passes per setting: run r uses permutation r under ``seed`` and learner seed
        ``seed + r`` (module docstring).
    seed : int
        The root seed.
    grid : dict, str or path, optional
        ``{param: values}``, grid text (``"eta=0.1,0.3"``), a per-algorithm dict
        ``{algorithm: {param: values}, "*": {...}}`` or a JSON/TOML grid file.  Without
        ``tune`` every grid point gets R runs; with ``tune`` the grid is searched on the subset
        (default: the IJCAI'17 grid, :func:`onlinekern.tune.default_grid`).
    params : dict, optional
        Fixed parameters, applied to the algorithms that have them.
    tune : bool
        The papers' protocol: pick the grid point with the lowest online error on a ``subset``
        fraction of the rows (``tune_runs`` passes), then R runs with it.
    subset : float or 'auto'
        Fraction of the rows to tune on (0.1); 'auto' = 0.01 above 500,000 rows, else 0.1
        (Nguyen et al. 2017, §4.3).
    n_jobs : int, optional
        Parallel workers (default: all cores; dask: the cluster's cores).
    backend : 'loky', 'threading' or 'dask'
        Default: 'dask' when a scheduler or client is given, else 'loky'.
    scheduler : str, optional
        Dask scheduler address (``tcp://host:8786``); or pass a ``dask.distributed.Client``
        as ``client``.
    out : path, optional
        JSONL results file: every finished run is appended at once; cells already there are
        skipped (resume).  Without it results stay in memory.
    scale, scale_target : bool
        Min-max scale features / regression targets to [0, 1] (over the whole data set).
    file_order : bool
        Present every run in file order instead of a permutation.
    retry_failed : bool
        Re-run cells recorded as failed.
    progress : None/True (auto), False, or 'bar'/'lines'/'off'
        Progress on stderr: runs done / total, elapsed, ETA.
    as_frame : bool
        Return a pandas DataFrame (one row per run; ``param_<name>`` columns).

    Returns
    -------
    list of dict (or DataFrame): the records of every cell of the sweep, tuning passes first
    (``phase == "tune"``), then the runs (``phase == "run"``).
    """
    runs = _positive_int_arg("runs", runs)
    tune_runs = _positive_int_arg("tune_runs", tune_runs)
    seed = check_seed(seed)
    algs = _algorithm_list(algorithms)
    params = normalise_params(params, algs)
    norm = normalise_grid(grid)
    if norm is not None:
        _check_grid_names(norm, algs, params)
    datasets = _datasets(data, scale, scale_target)
    with _Session(out=out, n_jobs=n_jobs, backend=backend, scheduler=scheduler, client=client,
                  progress=progress, retry_failed=retry_failed) as session:
        records = _run_sweep(session, algs, datasets, runs, seed, norm, params, tune, subset,
                             tune_runs, file_order)
    if as_frame:
        return records_frame(records)
    return records


def _run_sweep(session, algs, datasets, runs, seed, norm, params, tune, subset, tune_runs,
               file_order):
    pairs = session.pairs(datasets, algs, params)
    if not pairs:
        raise NoPairsError("no algorithm can learn from the data given (see the messages above)")
    records = []
    settings = []
    if tune:
        results = session.tune_pairs(pairs, grid=norm, subset=subset, seed=seed, runs=tune_runs)
        for res in results:
            records.extend(res.records)
        for p, res in zip(pairs, results):
            if res.best_params is None:
                msg = next((r["message"] for r in res.table if r["message"]), "")
                print(f"{PROG}: {p.algorithm} on {p.dataset.name}: every grid point failed "
                      f"({msg}); no runs", file=session.stream, flush=True)
                continue
            settings.append((p, [res.best_params], res))
    else:
        for p in pairs:
            g = grid_for(norm, p.algorithm) if norm is not None else {}
            g = _applicable_grid(g, p)
            settings.append((p, [{**p.fixed, **pt} for pt in expand_grid(g)], None))
    cells = []
    for p, psets, res in settings:
        for ps in psets:
            for r in range(runs):
                c = make_cell(p, ps, seed, r, "run", file_order)
                if res is not None:
                    c.static["tuned"] = {"point": res.best_point, "error": res.best_error,
                                         "grid_size": len(res.table), "subset": res.subset,
                                         "n_subset": res.n_subset}
                cells.append(c)
    records.extend(session.run_cells(cells, label="runs"))
    return records


def normalise_params(params, algs):
    """Fixed parameters as ``{"*": {...}, algorithm: {...}}``.

    ``params`` is ``{name: value}`` (for every algorithm that has the parameter), or a dict
    whose keys are algorithm names of the sweep and/or ``"*"`` mapping to such dicts.
    """
    params = dict(params or {})
    keys = set(params)
    if params and all(isinstance(v, dict) for v in params.values()) and keys <= set(algs) | {"*"}:
        out = {str(k).lower(): dict(v) for k, v in params.items()}
    else:
        out = {"*": params}
    from onlinekern.registry import resolve
    for scope, ps in out.items():
        for bad in ("seed", "n_threads"):
            if bad in ps:
                raise ValueError(f"{bad} is set by the sweep (root seed / one thread per worker); "
                                 "do not pass it in params")
        targets = algs if scope == "*" else [scope]
        for k in ps:
            if not any(k in resolve(a)[0]._get_param_names() for a in targets):
                raise ValueError(f"parameter {k!r} applies to none of {', '.join(targets)}")
    return out


def params_for(nparams, algorithm):
    """The fixed parameters of ``algorithm``: the shared ones it has, then its own."""
    from onlinekern.registry import resolve
    names = set(resolve(algorithm)[0]._get_param_names())
    out = {k: v for k, v in nparams.get("*", {}).items() if k in names}
    out.update(nparams.get(algorithm, {}))
    return out


def _check_grid_names(norm, algs, nparams):
    from onlinekern.registry import resolve
    classes = {a: resolve(a)[0] for a in algs}
    for scope, g in norm.items():
        targets = algs if scope == "*" else [scope]
        if scope != "*" and scope not in algs:
            raise ValueError(f"the grid names algorithm {scope!r}, which is not in the sweep "
                             f"({', '.join(algs)})")
        for k in g:
            if k in ("seed", "n_threads"):
                raise ValueError(f"{k} cannot be in a grid (the sweep sets it)")
            if not any(k in classes[a]._get_param_names() for a in targets):
                raise ValueError(f"grid parameter {k!r} applies to none of {', '.join(targets)}")
            if any(k in params_for(nparams, a) for a in targets):
                raise ValueError(f"{k} is both a fixed parameter and in the grid")


def _positive_int_arg(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


def records_frame(records):
    """Records as a pandas DataFrame, with one ``param_<name>`` column per parameter."""
    import pandas as pd
    rows = []
    for rec in records:
        row = dict(rec)
        for k, v in (rec.get("params") or {}).items():
            row[f"param_{k}"] = v
        rows.append(row)
    return pd.DataFrame(rows)


# ---- command line -------------------------------------------------------------------------------------------

USAGE = ("python -m onlinekern.sweep -a ALGO[,ALGO...] --data FILE [--data FILE ...] [--runs R] "
         "[--seed S] [--n-jobs N] [--out RESULTS.jsonl] [--grid NAME=VALUES] [--tune] [options]")

DESCRIPTION = """\
Run algorithms × hyper-parameter grid × R random permutations over data sets, in parallel, and
append every finished run to a JSONL file at once: a sweep killed at any moment resumes where it
stopped when the same command is run again.  Run r of every setting presents permutation r under
--seed and uses learner seed SEED + r, exactly as `python -m onlinekern.train --runs R --seed S`
does.  --tune follows the papers' protocol: grid search on a random --subset of the rows
(selecting by online mistake rate or RMSE), then R runs with the chosen setting."""

EPILOG = """\
grid syntax: NAME=V1,V2,... with ranges START:STOP:NUM (linear), START:STOP:log:NUM; several
parameters in one option (eta=1e-3:1e-1:log:5,gamma=0.5,1,2) or repeated --grid options.
Learner options (-D 1000, --eta 0.3, ... as in onlinekern.train) or --param NAME=VALUE fix
parameters; each applies to the algorithms that have it.

examples:
  python -m onlinekern.sweep -a fogd-hinge,ogd-hinge --data ijcnn1 --runs 10 --out r.jsonl
  python -m onlinekern.sweep -a fogd-hinge --data ijcnn1+ijcnn1.t -D 1000 --tune --out r.jsonl
  python -m onlinekern.sweep -a fogd-hinge --data casp --scale --grid n_components=100,400,1600 \\
      --grid-file grid.toml --backend dask --scheduler tcp://10.0.0.1:8786 --out r.jsonl
  python -m onlinekern.report r.jsonl --format markdown --plot curves.png

exit status: 0 ok (failed runs are recorded, not fatal), 1 data error, 2 usage error,
130 interrupted (finished runs are kept: run the same command again to resume)."""


def _positive_int(text):
    v = cli.parse_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _jobs(text):
    v = cli.parse_int(text)
    if v == 0:
        raise argparse.ArgumentTypeError("expected a non-zero integer (-1: all cores)")
    return v


def _fraction(text):
    if text.strip().lower() == "auto":
        return "auto"
    v = cli.parse_float(text)
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1], got {text!r}")
    return v


def build_parser():
    p = cli.Parser(prog=PROG, usage=USAGE, description=DESCRIPTION, epilog=EPILOG,
                   formatter_class=cli.HelpFormatter, allow_abbrev=False)
    g = p.add_argument_group("sweep options")
    g.add_argument("-a", "--algorithm", "--algorithms", dest="algorithms", action="append",
                   metavar="ALGO[,ALGO...]", help="algorithms (comma-separated or repeated; see --list)")
    g.add_argument("--data", action="append", metavar="FILE",
                   help="LIBSVM data set; FILE+FILE concatenates rows (ijcnn1+ijcnn1.t), "
                        "NAME=FILE names it; repeat for several data sets")
    g.add_argument("--runs", type=_positive_int, default=10, metavar="R",
                   help="runs per setting, each over its own random permutation (default: 10)")
    g.add_argument("--n-jobs", type=_jobs, default=None, metavar="N",
                   help="parallel workers, one core each (default: all cores; -1 all, -2 all but one)")
    g.add_argument("--out", metavar="RESULTS.jsonl",
                   help="append every finished run to this JSONL file and skip the runs already "
                        "in it (resume)")
    g.add_argument("--grid", action="append", metavar="NAME=VALUES",
                   help="hyper-parameter grid, e.g. eta=0.1,0.3,1 or eta=1e-3:1e-1:log:5,gamma=0.5,1")
    g.add_argument("--grid-file", metavar="FILE", help="grid as JSON or TOML (see onlinekern.tune)")
    g.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="fix a learner parameter (same as its learner option); the value @rows "
                        "stands for the number of rows of each run's data (--param horizon=@rows)")
    g.add_argument("--tune", action="store_true",
                   help="grid search on a random subset, then the R runs with the best setting "
                        "(default grid: the IJCAI'17 one in onlinekern's conventions)")
    g.add_argument("--subset", type=_fraction, default=0.1, metavar="F",
                   help="fraction of rows to tune on (default: 0.1); 'auto': the paper's rule, "
                        "0.01 above 500,000 rows, else 0.1")
    g.add_argument("--tune-runs", type=_positive_int, default=1, metavar="T",
                   help="passes per grid point when tuning (default: 1)")
    g.add_argument("--backend", choices=BACKENDS, default=None,
                   help="joblib backend (default: loky processes; dask with --scheduler)")
    g.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler, e.g. tcp://host:8786")
    g.add_argument("--scale", action="store_true", help="min-max scale features to [0, 1]")
    g.add_argument("--scale-target", action="store_true", help="regression: scale targets to [0, 1]")
    g.add_argument("--file-order", action="store_true",
                   help="present every run in file order instead of a permutation")
    g.add_argument("--retry-failed", action="store_true", help="re-run cells recorded as failed")
    g.add_argument("--dry-run", action="store_true",
                   help="print how many runs the sweep has and how many are done, then exit")
    g.add_argument("--list", action="store_true", help="list every algorithm, then exit")
    g.add_argument("--progress", choices=("auto", "bar", "lines", "off"), default="auto",
                   help="progress on stderr (default: a bar on a terminal, else a line every 10 s)")
    g.add_argument("-q", "--quiet", action="store_true", help="print no summary table")
    g.add_argument("--version", action="version", version=f"onlinekern {onlinekern.__version__}")
    cli.add_learner_options(p, title="learner options (fixed parameters; see onlinekern.train -a ALGO --help)")
    return p


def _parse_param_options(items):
    out = {}
    table = cli.learner_options()
    for item in items or []:
        name, sep, value = item.partition("=")
        name = name.strip().lstrip("-").replace("-", "_")
        name = "lam" if name == "lambda" else name
        if not sep or not name:
            raise UsageError(f"--param {item!r}: expected NAME=VALUE")
        opt = table.get(name)
        if opt is None:
            import difflib
            close = difflib.get_close_matches(name, list(table), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise UsageError(f"--param {item!r}: no learner has a parameter {name!r}{hint}")
        parse = opt.parse
        if parse is cli.FLAG:
            parse = cli.parse_auto
        if value.strip() == ROWS:
            out[name] = ROWS
            continue
        try:
            out[name] = parse(value)
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise UsageError(f"--param {name}: {exc}") from None
    return out


def _main(argv):
    from onlinekern.report import format_table
    from onlinekern.train import print_list
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    ns = parser.parse_args(argv)
    if ns.list:
        print_list(sys.stdout)
        return cli.EXIT_OK
    if not ns.algorithms:
        raise UsageError("no algorithm given: use -a ALGO[,ALGO...] (see --list)")
    if not ns.data:
        raise UsageError("no data given: use --data FILE")
    try:
        algs = _algorithm_list(ns.algorithms)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    given = cli.given_params(ns)
    seed = given.pop("seed", (0, None))[0]
    if "n_threads" in given:
        raise UsageError(f"option {given['n_threads'][1]}: every worker uses one thread; "
                         "use --n-jobs for parallel runs")
    try:
        seed = check_seed(seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    params = {k: v for k, (v, _) in given.items()}
    params.update(_parse_param_options(ns.param))
    from onlinekern.registry import resolve
    classes = {a: resolve(a)[0] for a in algs}
    for k in params:
        users = [a for a in algs if k in classes[a]._get_param_names()]
        if not users:
            raise UsageError(f"parameter {k} applies to none of {', '.join(algs)}")
        if len(users) < len(algs) and not ns.quiet:
            print(f"{PROG}: note: {cli.option_name(k)} applies to {', '.join(users)} only",
                  file=sys.stderr)
    if ns.scheduler and ns.backend not in (None, "dask"):
        raise UsageError("--scheduler needs --backend dask")
    if ns.grid and ns.grid_file:
        raise UsageError("give --grid or --grid-file, not both")
    try:
        params = normalise_params(params, algs)
        grid = normalise_grid(ns.grid_file) if ns.grid_file else (normalise_grid(ns.grid) if ns.grid else None)
        if grid is not None:
            _check_grid_names(grid, algs, params)
        for a in algs:
            _resolved_params(a, params_for(params, a))
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    if ns.out:
        cli.check_writable(ns.out, "results")
    try:
        datasets = _datasets(ns.data, ns.scale, ns.scale_target)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    mode = "off" if ns.quiet and ns.progress == "auto" else ns.progress
    try:
        session = _Session(out=ns.out, n_jobs=ns.n_jobs, backend=ns.backend, scheduler=ns.scheduler,
                           progress=mode, retry_failed=ns.retry_failed)
    except StoreLockedError as exc:
        raise DataError(str(exc)) from None
    with session:
        if ns.dry_run:
            return _dry_run(session, algs, datasets, ns, seed, grid, params)
        t0 = time.monotonic()
        try:
            records = _run_sweep(session, algs, datasets, ns.runs, seed, grid, params, ns.tune,
                                 ns.subset, ns.tune_runs, ns.file_order)
        except KeyboardInterrupt:
            where = f" in {ns.out}" if ns.out else ""
            print(f"{PROG}: interrupted after {session.ran} new runs (kept{where}; run the same "
                  "command again to resume)", file=sys.stderr, flush=True)
            raise
        except NoPairsError as exc:
            raise DataError(str(exc)) from None
        elapsed = time.monotonic() - t0
    finals = [r for r in records if r is not None and r.get("phase") == "run"]
    failed = sum(r.get("status") != "ok" for r in records if r is not None)
    if not ns.quiet:
        print(format_table(finals, "text"))
        line = f"{session.ran} runs done in {_hms(elapsed)}"
        if ns.out:
            line += f", {session.skipped} already in {ns.out}"
        if failed:
            line += f", {failed} failed"
        print(line + (f"; results in {ns.out}" if ns.out else ""))
    return cli.EXIT_OK


def _dry_run(session, algs, datasets, ns, seed, grid, params):
    pairs = session.pairs(datasets, algs, params)
    n_tune = n_run = done = 0
    for p in pairs:
        if ns.tune:
            g = grid_for(grid, p.algorithm)
            g = default_grid(p.algorithm, p.dataset.n_rows_full, p.fixed) if g is None else g
            g = _applicable_grid(g, p)
            n_tune += len(expand_grid(g)) * ns.tune_runs
            n_run += ns.runs
        else:
            g = _applicable_grid(grid_for(grid, p.algorithm) or {}, p)
            pts = expand_grid(g)
            for pt in pts:
                for r in range(ns.runs):
                    c = make_cell(p, {**p.fixed, **pt}, seed, r, "run", ns.file_order)
                    done += session._done(c)
            n_run += len(pts) * ns.runs
        print(f"{p.algorithm} on {p.dataset.name}: "
              + (f"{len(expand_grid(g))} grid points × {ns.tune_runs} tuning passes, then " if ns.tune else
                 f"{len(expand_grid(g))} settings × ")
              + f"{ns.runs} runs")
    total = n_tune + n_run
    print(f"{total} runs in all ({n_tune} tuning, {n_run} final)"
          + ("" if ns.tune else f", {done} already done"))
    return cli.EXIT_OK


def main(argv=None):
    """Entry point of ``python -m onlinekern.sweep``; returns the exit code."""
    return cli.run_tool(PROG, _main, argv)


if __name__ == "__main__":
    # Run the importable module's main, so that the worker function is pickled by reference to
    # onlinekern.sweep (not by value from __main__) when tasks go to other processes.
    from onlinekern.sweep import main as _entry
    sys.exit(_entry())
