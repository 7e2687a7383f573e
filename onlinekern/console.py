"""Running a command-line tool: exit codes, one-line errors, data checks and output helpers.

* **Errors map to exit codes**: :class:`UsageError` → 2, :class:`DataError`, a
  :class:`~onlinekern.LibsvmFormatError` or a file that cannot be read/written → 1, Ctrl-C → 130;
  each prints one line ``PROG: error: ...`` and no traceback (:func:`run_tool`).
* **Output helpers**: :class:`Progress` (a one-line bar on a terminal, VW-style lines at the
  doubling checkpoints otherwise), :func:`summary_line` (the final ``mistake rate 3.41% ± 0.05
  over 10 runs, ...`` line), :func:`write_json` (atomic).

The option grammar the tools share is :mod:`onlinekern.cli`, which re-exports these names.
"""
import json
import math
import os
import sys
import time

import numpy as np

from onlinekern.io import LibsvmFormatError, load_libsvm
from onlinekern.io.atomic import atomic_write, to_jsonable

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_INTERRUPT = 130


class UsageError(Exception):
    """Bad command line: unknown option or algorithm, option not applicable, invalid value (exit 2)."""


class DataError(Exception):
    """Input data that cannot be used: unreadable file, labels unsuitable for the task (exit 1)."""


# ---- running a tool ----------------------------------------------------------------------------

def run_tool(prog, func, argv=None):
    """Call ``func(argv)`` and turn its errors into one stderr line and an exit code.

    UsageError → 2; DataError, LibsvmFormatError, unreadable/unwritable file, out of memory → 1;
    Ctrl-C → 130.
    ``--help`` (SystemExit) passes its code through.  Unexpected exceptions are bugs: they keep
    their traceback.
    """
    try:
        return int(func(argv) or 0)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except UsageError as exc:
        _error(prog, exc)
        return EXIT_USAGE
    except (DataError, LibsvmFormatError) as exc:
        _error(prog, exc)
        return EXIT_DATA
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            # stdout closed early (e.g. piped into head): no message, no traceback
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            return EXIT_DATA
        _error(prog, describe_os_error(exc))
        return EXIT_DATA
    except MemoryError as exc:
        _error(prog, f"out of memory{': ' + str(exc) if str(exc) else ''}")
        return EXIT_DATA
    except KeyboardInterrupt:
        Progress.clear_line()
        print(f"{prog}: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPT


def describe_os_error(exc):
    """``path: reason`` for an OSError (``FileNotFoundError`` -> ``x: No such file or directory``)."""
    if exc.filename is not None:
        return f"{os.fsdecode(exc.filename)}: {exc.strerror or exc}"
    return exc.strerror or str(exc)


def _error(prog, exc):
    Progress.clear_line()
    msg = " ".join(str(exc).split("\n"))
    print(f"{prog}: error: {msg}", file=sys.stderr, flush=True)


# ---- data --------------------------------------------------------------------------------------

def load_files(train, test=None):
    """Load ``train`` (and ``test``) with one common width: max of both files' widths.

    Returns (X, y, X_test, y_test, seconds); the test pair is None without ``test``.
    """
    import scipy.sparse as sp
    t0 = time.perf_counter()
    X, y = load_libsvm(train)
    Xt = yt = None
    if test is not None:
        Xt, yt = load_libsvm(test)
        d = max(X.shape[1], Xt.shape[1])

        def widen(A):
            if A.shape[1] == d:
                return A
            B = sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], d), copy=False)
            B.has_sorted_indices = A.has_sorted_indices
            return B
        X, Xt = widen(X), widen(Xt)
    return X, y, Xt, yt, time.perf_counter() - t0


def check_labels(y, kind, path, tasks=None, name=None, has_task_param=False):
    """The task ('binary', 'multiclass' or 'regression') of labels ``y``, or DataError.

    Classification needs at least two distinct, integer-valued labels (LIBSVM class labels);
    ``tasks`` (the algorithm's supported tasks) is checked when given.
    """
    if kind == "regression":
        task = "regression"
    else:
        labels = np.unique(y)
        if labels.size < 2:
            only = f"only label {labels[0]:g}" if labels.size else "no labels"
            raise DataError(f"{path}: classification needs at least 2 classes, the file has {only}")
        frac = labels[labels != np.round(labels)]
        if frac.size:
            hint = " or --task regression" if has_task_param else ""
            raise DataError(f"{path}: labels are not class labels (e.g. {frac[0]:g} is not an integer); "
                            f"for regression use a regression loss such as -a ogd-eps{hint}")
        task = "binary" if labels.size == 2 else "multiclass"
    if tasks is not None and task not in tasks:
        raise DataError(f"{path}: {name or 'this algorithm'} does not support {task} data "
                        f"(it supports {', '.join(tasks)})")
    return task


def describe_labels(y, task, max_classes=6):
    """``binary: -1 (1500), +1 (1500)`` or ``regression: targets in [-0.25, 1.02], mean 0.11``."""
    if task == "regression":
        return f"regression: targets in [{y.min():.4g}, {y.max():.4g}], mean {y.mean():.4g}"
    labels, counts = np.unique(y, return_counts=True)
    fmt = "+g" if labels[0] < 0 else "g"          # -1 / +1 reads better than -1 / 1
    parts = [f"{lab:{fmt}} ({c})" for lab, c in zip(labels[:max_classes], counts[:max_classes])]
    more = f", ... ({labels.size} classes)" if labels.size > max_classes else ""
    return f"{task}: " + ", ".join(parts) + more


def print_list(out):
    """Every algorithm name with its tasks, grouped by family with its summary and paper."""
    from onlinekern.registry import available_learners
    table = available_learners()
    width = max(len(n) for n in table) + 4
    tw = max(len(", ".join(i["tasks"])) for i in table.values()) + 2
    for family in sorted({i["family"] for i in table.values()}):
        info = table[family]
        cls = info["class"]
        print(f"{family:<{width}}{', '.join(info['tasks']):<{tw}}{cls.summary}", file=out)
        print(f"{'':<{width}}{'':<{tw}}{cls.paper}" + (f"  [{cls.__name__}]"), file=out)
        for name, i in table.items():
            if i["family"] == family and name != family:
                print(f"  {name:<{width - 2}}{', '.join(i['tasks']):<{tw}}loss {i['loss']}", file=out)
    print("\nName an algorithm as FAMILY or FAMILY-LOSS; `-a NAME --help` shows its options.", file=out)


# ---- output ------------------------------------------------------------------------------------

def mean_std(values):
    """(mean, sample standard deviation with ddof=1; 0 for a single value)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def _pm(values, fmt, unit=""):
    m, s = mean_std(values)
    if len(values) > 1:
        return f"{m:{fmt}}{unit} ± {s:{fmt}}"
    return f"{m:{fmt}}{unit}"


def _seconds_fmt(values):
    m = float(np.mean(values))
    return ".2f" if m >= 0.1 else ".3f"


def error_text(task, values):
    """``mistake rate 3.41% ± 0.05`` or ``RMSE 0.2410 ± 0.0012`` (no ± part for one value)."""
    if task == "regression":
        return "RMSE " + _pm(values, ".4f")
    return "mistake rate " + _pm(values, ".2f", "%")


def size_text(sizes, size_name):
    """``800 features``; ``1523 ± 12 SVs`` when the runs differ."""
    sizes = list(sizes)
    if len(set(sizes)) <= 1:
        return f"{int(sizes[0]) if sizes else 0} {size_name}"
    return f"{_pm(sizes, '.0f')} {size_name}"


def summary_line(task, errors, seconds, sizes, size_name, test_errors=None):
    """The final line, e.g.
    ``mistake rate 3.41% ± 0.05 over 10 runs, 0.21 s ± 0.01 per run, 2000 features``
    (with a held-out set: ``, test mistake rate 3.80% ± 0.10`` appended)."""
    n = len(errors)
    runs = f"over {n} run" + ("s" if n != 1 else "")
    line = (f"{error_text(task, errors)} {runs}, "
            f"{_pm(seconds, _seconds_fmt(seconds), ' s')} per run, {size_text(sizes, size_name)}")
    if test_errors is not None and len(test_errors):
        line += f", test {error_text(task, test_errors)}"
    return line


class Progress:
    """Progress of one online pass, fed by ``run_online``'s ``callback``.

    ``mode``: 'bar' (one self-overwriting line, for terminals), 'lines' (VW-style lines at the
    doubling checkpoints 1, 2, 4, ... and the last one), 'off', or 'auto' ('bar' if ``stream`` is a
    terminal, else 'lines').
    """

    _active = None     # the bar currently drawn, so errors can clear it first

    def __init__(self, n, task, size_name="SVs", stream=None, mode="auto", label="", width=30,
                 min_interval=0.1):
        self.n = int(n)
        self.task = task
        self.size_name = size_name
        self.stream = sys.stderr if stream is None else stream
        if mode == "auto":
            isatty = getattr(self.stream, "isatty", None)
            mode = "bar" if isatty is not None and isatty() else "lines"
        if mode not in ("bar", "lines", "off"):
            raise ValueError(f"mode must be 'auto', 'bar', 'lines' or 'off', got {mode!r}")
        self.mode = mode
        self.label = label
        self.width = width
        self.min_interval = min_interval
        self._last = -math.inf
        self._drawn = False
        self._next_line = 1

    @property
    def metric(self):
        return "RMSE" if self.task == "regression" else "mistake%"

    def _value(self, n_done, n_mistakes, sq_error):
        if self.task == "regression":
            return math.sqrt(sq_error / max(n_done, 1))
        return 100.0 * n_mistakes / max(n_done, 1)

    def _fmt_value(self, v):
        return f"{v:.4f}" if self.task == "regression" else f"{v:.2f}"

    def start(self):
        if self.mode == "lines":
            head = f"{'n_seen':>10} {self.metric:>10} {self.size_name:>10} {'seconds':>9}"
            print(f"{self.label}{head}", file=self.stream, flush=True)
        return self

    def __call__(self, n_done, n_mistakes, sq_error, model_size, seconds):
        if self.mode == "off":
            return
        value = self._value(n_done, n_mistakes, sq_error)
        if self.mode == "lines":
            if n_done >= self._next_line or n_done == self.n:
                while self._next_line <= n_done:
                    self._next_line *= 2
                print(f"{self.label}{n_done:>10} {self._fmt_value(value):>10} {model_size:>10} "
                      f"{seconds:>9.3f}", file=self.stream, flush=True)
            return
        now = time.monotonic()
        if n_done < self.n and now - self._last < self.min_interval:
            return
        self._last = now
        frac = n_done / max(self.n, 1)
        k = int(round(self.width * frac))
        metric = "RMSE " if self.task == "regression" else "mistakes "
        unit = "" if self.task == "regression" else "%"
        text = (f"{self.label}[{'#' * k}{'.' * (self.width - k)}] {100 * frac:3.0f}% "
                f"{n_done}/{self.n}  {metric}{self._fmt_value(value)}{unit}  "
                f"{model_size} {self.size_name}  {seconds:.1f} s")
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        self._drawn = True
        Progress._active = self

    def finish(self):
        """Clear the bar (lines stay)."""
        if self.mode == "bar" and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False
        if Progress._active is self:
            Progress._active = None

    @classmethod
    def clear_line(cls):
        """Clear a bar left on the screen (before an error message)."""
        if cls._active is not None:
            try:
                cls._active.finish()
            except (OSError, ValueError):
                pass


def write_json(path, obj):
    """Write ``obj`` as JSON atomically: a temporary file in the same directory, then os.replace."""
    text = json.dumps(to_jsonable(obj), indent=1, allow_nan=False) + "\n"
    atomic_write(path, text)


def check_writable(path, what):
    """DataError unless ``path`` can be created: its directory exists and is writable."""
    directory = os.path.dirname(os.path.abspath(os.fspath(path)))
    if not os.path.isdir(directory):
        raise DataError(f"cannot write {what} {path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise DataError(f"cannot write {what} {path}: directory {directory} is not writable")
    if os.path.isdir(path):
        raise DataError(f"cannot write {what} {path}: it is a directory")
