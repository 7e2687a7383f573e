"""Running cells: one pass each, in parallel workers, every finished one stored at once.

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
Tuning passes (``tune=True``) run on the subset ``onlinekern.experiments.grids.subset_indices(n, subset, S)``
in the permutations t = 0..tune_runs-1 of the subset, learner seed S + t (with a reserved
permutation P, :func:`~onlinekern.experiments.tuning.tune_pairs`: the subset's rows come first in
permutation P of the data, and pass t presents them in permutation P + t).

Results
-------
Each finished cell is appended at once to the JSONL file ``out`` (flush + fsync; see
:mod:`onlinekern.experiments.store`) with: key, phase, algorithm, params (as given: fixed parameters and the
grid point), resolved_params (every learner parameter), data (name), data_files (path and sha256
of each file as given), data_sha256 (of the files' bytes in order), n_rows, n_features,
preprocess (scaling, tuning subset), seed, run, order, learner_seed, status ("ok"/"failed"),
error (the message of a failed cell), task, n_examples, n_mistakes, mistake_rate or rmse,
seconds (learning time of the pass), model_size, size_name, gamma_ (the width used), chosen
(what the adaptive defaults chose: ``OnlineLearner.chosen_params``), curve
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
import datetime
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from onlinekern.version import __version__
from onlinekern import cli
from onlinekern.cli import DataError, UsageError
from onlinekern.experiments.data import DataSet, subset_of
from onlinekern.experiments.specs import params_for, resolved_params, substitute_rows
from onlinekern.experiments.store import MemoryStore, ResultStore, cell_key, machine_info, to_jsonable
from onlinekern.losses import get_loss, get_multiclass_loss
from onlinekern.protocol import run_online
from onlinekern.registry import available_learners, make_learner, resolve

__all__ = ["BACKENDS", "Cell", "Pair", "Session", "SweepProgress", "hms", "keyed_run_cell",
           "limit_threads", "make_cell", "mean_online_loss", "run_cell"]

PROG = "onlinekern.sweep"
BACKENDS = ("loky", "threading", "dask")


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


def limit_threads():
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


def mean_online_loss(learner, result, y):
    """Mean online loss of a pass: the learner's own loss at its pre-update scores.

    Parameters
    ----------
    learner : OnlineLearner
        The learner after the pass (its ``loss``, ``classes_`` and, when it has them,
        ``epsilon``, ``huber_delta`` and ``quantile``).
    result : OnlineResult
        Of ``run_online(..., keep_scores=True)``.
    y : array
        The labels or targets of the pass, in file order (``result.order`` presents them).

    Returns
    -------
    float, or None when the learner has no ``loss`` parameter or the pass kept no scores.
    Binary labels map to classes_[0] -> -1, classes_[1] -> +1 (the learner's encoding);
    multiclass scores take the margin form of the loss with the label's column.
    """
    name = getattr(learner, "loss", None)
    if not isinstance(name, str) or result.scores is None:
        return None
    f = np.asarray(result.scores, dtype=np.float64)
    yo = np.asarray(y) if result.order is None else np.asarray(y)[result.order]
    if f.ndim == 2:
        fn = get_multiclass_loss(name).py_loss
        idx = np.searchsorted(learner.classes_, yo)
        return float(np.mean([fn(f[i], int(idx[i])) for i in range(len(idx))]))
    opts = {k: getattr(learner, k) for k in ("epsilon", "huber_delta", "quantile")
            if isinstance(getattr(learner, k, None), (int, float))}
    fn = get_loss(name, **opts).py_loss
    if learner.task_ != "regression":
        yo = np.where(yo == learner.classes_[1], 1.0, -1.0)
    return float(np.mean([fn(float(a), float(b)) for a, b in zip(f, yo)]))


def run_cell(spec, kind, shape, a, b, c, y):
    """Run one cell (in a worker) and return its measured fields.

    ``spec``: algorithm, learner_params (seed and n_threads included), perm_seed (None = file
    order), run (the permutation index), checkpoints, keep_curve, limit_threads, and optionally
    classes (the labels, when they are not those of ``y``) and mean_loss (also measure
    :func:`mean_online_loss`).  Any exception becomes ``status: "failed"`` with its message; so
    does a non-finite mistake rate or RMSE.
    """
    t0 = time.time()
    out = {}
    if spec.get("parent_pid"):
        _watch_parent(spec["parent_pid"])
    # loky workers already start with OMP_NUM_THREADS=1 (inner_max_num_threads); a Dask worker
    # is someone else's process: limit its pools for the duration of the task only
    limiter = limit_threads() if spec.get("limit_threads") else None
    try:
        X = _rebuild(kind, shape, a, b, c)
        learner = make_learner(spec["algorithm"], **spec["learner_params"])
        res = run_online(learner, X, y, seed=spec["perm_seed"], run=spec["run"],
                         checkpoints="default" if spec["keep_curve"] else None,
                         classes=spec.get("classes"), keep_scores=bool(spec.get("mean_loss")))
        out = res.to_dict(with_curve=spec["keep_curve"])
        if spec.get("mean_loss"):
            out["mean_loss"] = mean_online_loss(learner, res, y)
        out.pop("curve", None) if not spec["keep_curve"] else None
        out["size_name"] = type(learner).size_name
        gamma = getattr(learner, "gamma_", None)
        out["gamma_"] = float(gamma) if gamma is not None else None
        out["chosen"] = learner.chosen_params()
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
    out.update(version=__version__, machine=machine_info(), pid=os.getpid(),
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


def make_cell(pair, params, seed, run, phase, file_order, dataset=None, keep_curve=True,
              permutation=None, classes=None, mean_loss=False):
    """The cell of ``pair`` with ``params`` (fixed + grid point), run ``run`` under ``seed``.

    Run r presents the data in permutation r and seeds its learner ``seed + r``; ``permutation``
    P presents it in permutation P instead (the learner seed stays ``seed + r``).  ``classes``
    are the labels of the learner when the data set lacks some (a tuning subset); ``mean_loss``
    also measures the pass's :func:`mean_online_loss`.  Each enters the key only when given, so
    the keys of every other cell stay what they were."""
    ds = dataset if dataset is not None else pair.dataset
    names = pair.cls._get_param_names()
    # not validated here: a grid point the learner rejects becomes a failed cell, not a crash
    _, resolved = resolved_params(pair.algorithm, params, validate=False, n_rows=ds.n_rows)
    order = "file" if file_order else "permutation"
    identity = {"phase": phase, "algorithm": pair.algorithm, "params": resolved,
                "data": ds.identity, "seed": seed, "run": run, "order": order}
    extra = {}
    if permutation is not None:
        extra["permutation"] = int(permutation)
    if classes is not None:
        extra["classes"] = to_jsonable(np.asarray(classes).tolist())
    identity.update(extra)
    if mean_loss:
        identity["measure"] = ["mean_loss"]
    key = cell_key(identity)
    learner_seed = seed + run if "seed" in names else None
    lp = substitute_rows(params, ds.n_rows)
    if "seed" in names:
        lp["seed"] = learner_seed
    if "n_threads" in names:
        lp["n_threads"] = 1
    static = {"key": key, "phase": phase, "algorithm": pair.algorithm, "params": dict(params),
              "resolved_params": resolved, **ds.record_fields(), "seed": seed, "run": run,
              "order": order, "learner_seed": learner_seed, **extra}
    spec = {"algorithm": pair.algorithm, "learner_params": lp,
            "perm_seed": None if file_order else seed, "run": run if permutation is None else permutation,
            "keep_curve": keep_curve, "classes": None if classes is None else np.asarray(classes),
            "mean_loss": bool(mean_loss)}
    return Cell(key, static, spec, ds)


# ---- progress --------------------------------------------------------------------------------------------

def hms(seconds):
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
        s += f", {hms(el)} elapsed"
        if 0 < self.done < self.total:
            s += f", ETA {hms(el / self.done * (self.total - self.done))}"
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


class Session:
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
    def is_done(self, cell):
        """Whether ``cell`` is in the store (ok, or failed and not to be retried)."""
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
            if self.is_done(c):
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
        limiter = limit_threads()
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
            return delayed(keyed_run_cell)(spec, *c.dataset.worker_args())

        # threads share the process's pools: limit them once around the whole call
        guard = limit_threads() if self.backend == "threading" else None
        try:
            with parallel_config(**self._config()):
                par = Parallel(n_jobs=self.effective_jobs(), batch_size=1, pre_dispatch="2*n_jobs",
                               return_as=_RETURN_AS)
                for key, out in par(task(c) for c in cells):
                    self._finish(by_key[key], out, progress)
        finally:
            if guard is not None:
                guard.restore_original_limits()

    def subset(self, dataset, fraction, seed, permutation=None):
        """The tuning subset of ``dataset`` (:func:`~onlinekern.experiments.data.subset_of`),
        made once per session."""
        sid = (id(dataset), fraction, seed, permutation)
        if sid not in self._subsets:
            self._subsets[sid] = subset_of(dataset, fraction, seed, permutation)
        return self._subsets[sid]

    # -- phases ----------------------------------------------------------------------------------
    def pairs(self, datasets, algorithms, params, warn=True):
        """The (data set, algorithm) pairs that can run; incompatible ones are reported.

        ``params``: normalised fixed parameters (:func:`normalise_params`)."""
        table = available_learners()
        pairs = []
        for ds in datasets:
            for alg in algorithms:
                cls, _ = resolve(alg)
                names = set(cls._get_param_names())
                fixed = params_for(params, alg)
                learner, resolved = resolved_params(alg, fixed, n_rows=ds.n_rows)
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


def keyed_run_cell(spec, kind, shape, a, b, c, y):
    """run_cell returning (key, fields): generator_unordered gives results out of order."""
    return spec["key"], run_cell(spec, kind, shape, a, b, c, y)


def _parent_failure(cell, exc, lost):
    msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    if isinstance(exc, lost):
        msg = "the worker running this cell died: " + msg
    return {"status": "failed", "error": msg, "version": __version__,
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
