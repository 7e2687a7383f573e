"""The online protocol (ALGORITHMS.md §1.2): predict each example, record, then learn from it.

``run_online`` is the measurement behind every table of the papers: one pass over the data, in
file order or in the permutation of run ``run`` under ``seed``; a mistake is a pre-update margin
<= 0 (binary y f <= 0; multiclass f_y - max_{c != y} f_c <= 0); regression reports the RMSE of
the pre-update predictions.  Time counts learning only (data loading excluded).
"""
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from onlinekern._core import heap
from onlinekern.seeding import permutation


def default_checkpoints(n, n_even=15):
    """About ``n_even`` evenly spaced counts (every ceil(n/15), LSOKL's t_tick), the doubling
    counts 1, 2, 4, ... (as VW reports), and n itself; sorted, unique, 1-based."""
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    tick = max(1, math.ceil(n / n_even))
    pts = set(range(tick, n + 1, tick))
    p = 1
    while p <= n:
        pts.add(p)
        p *= 2
    pts.add(n)
    return np.array(sorted(pts), dtype=np.int64)


@dataclass
class OnlineResult:
    """What one online pass measured.

    Attributes
    ----------
    task : 'binary', 'multiclass' or 'regression'
    n_examples : examples presented
    n_mistakes : mistakes (classification; None for regression)
    mistake_rate : 100 * n_mistakes / n_examples, in percent (classification)
    rmse : root mean squared pre-update error (regression)
    seconds : learning time of the pass (loading excluded)
    model_size : support vectors, or weights per output for feature learners, at the end
    curve : dict of arrays at the checkpoints: ``n_seen``, ``mistake_rate`` or ``rmse``,
        ``model_size``, ``seconds``
    scores : pre-update scores in presentation order (``keep_scores=True``), (n,) or (n, C)
    order : the presentation order (None = file order)
    """

    task: str
    n_examples: int
    n_mistakes: object
    mistake_rate: object
    rmse: object
    seconds: float
    model_size: int
    curve: dict = field(repr=False)
    scores: object = field(default=None, repr=False)
    order: object = field(default=None, repr=False)

    @property
    def error(self):
        """The headline number: mistake rate (%) or RMSE."""
        return self.rmse if self.task == "regression" else self.mistake_rate

    def to_dict(self, with_curve=True):
        """Plain JSON-ready dict (no arrays of scores)."""
        d = {"task": self.task, "n_examples": self.n_examples, "n_mistakes": self.n_mistakes,
             "mistake_rate": self.mistake_rate, "rmse": self.rmse, "seconds": self.seconds,
             "model_size": self.model_size}
        if with_curve:
            d["curve"] = {k: np.asarray(v).tolist() for k, v in self.curve.items()}
        return d


def run_online(learner, X, y, seed=None, run=0, checkpoints="default", classes=None,
               keep_scores=False, callback=None, reset=True):
    """Present (X, y) once to ``learner``, predicting each example before learning from it.

    Parameters
    ----------
    learner : OnlineLearner
    X : array or sparse matrix (n, d);  y : labels or targets (n,)
    seed : int or None
        None: file order; otherwise the permutation ``rng(seed, PERMUTATION, run).permutation(n)``.
    run : int
        Run index r of a permutation experiment (selects the permutation under ``seed``).
    checkpoints : "default", None, or increasing 1-based counts at which to record the curve.
    classes : labels, optional (default: the distinct values of y).
    keep_scores : bool
        Keep every pre-update score in ``result.scores``.
    callback : callable(n_done, n_mistakes, sq_error, model_size, seconds), optional
        Called at each checkpoint (progress reports); may raise to stop.
    reset : bool
        Start from an empty model (True, the papers' protocol) or continue the current one.

    Returns
    -------
    OnlineResult
    """
    X = learner._check_X(X)
    y = np.asarray(y)
    n = X.shape[0]
    if len(y) != n:
        raise ValueError(f"X has {n} rows but y has {len(y)} labels")
    if n == 0:
        raise ValueError("no examples to learn from")
    if reset:
        learner._reset()
    if "core_" not in learner.__dict__:
        learner._initialize(X, y, classes, n_stream=n)
    core = learner.core_
    core.set_threads(learner._n_threads())
    order = None if seed is None else permutation(seed, run, n)
    if checkpoints is None:
        cps = np.zeros(0, dtype=np.int64)
    elif isinstance(checkpoints, str):
        if checkpoints != "default":
            raise ValueError(f"checkpoints must be 'default', None or a list of counts, got {checkpoints!r}")
        cps = default_checkpoints(n)
    else:
        cps = np.unique(np.asarray(checkpoints, dtype=np.int64))
        if cps.size and (cps[0] < 1 or cps[-1] > n):
            raise ValueError(f"checkpoints must lie in 1..{n}")
    scores = np.zeros((n, core.n_outputs)) if keep_scores else None
    with learner._pass_context(n):
        res = learner.run_core(X, learner._encode_y(y), order, cps, scores, callback)
    core = learner.core_             # the chosen candidate when gamma="auto" picked one
    regression = learner.task_ == "regression"
    k = len(res["cp_mistakes"])
    seen = cps[:k]
    curve = {"n_seen": seen, "model_size": res["cp_size"], "seconds": res["cp_seconds"]}
    if regression:
        curve["rmse"] = np.sqrt(res["cp_sq_error"] / np.maximum(seen, 1))
    else:
        curve["mistake_rate"] = 100.0 * res["cp_mistakes"] / np.maximum(seen, 1)
    if scores is not None and scores.shape[1] == 1:
        scores = scores[:, 0]
    return OnlineResult(
        task=learner.task_,
        n_examples=n,
        n_mistakes=None if regression else res["n_mistakes"],
        mistake_rate=None if regression else 100.0 * res["n_mistakes"] / n,
        rmse=math.sqrt(res["sq_error"] / n) if regression else None,
        seconds=res["seconds"],
        model_size=int(core.size),
        curve=curve,
        scores=scores,
        order=order,
    )


def scan_libsvm(path, chunk_rows=65536, n_features=None):
    """One cheap pass over a LIBSVM file: (n_rows, n_features, sorted distinct labels).

    Memory is one chunk plus the distinct labels (all values for regression targets are not kept:
    only classification needs them, so the label set is capped at 10000 values and ``None`` is
    returned beyond that).  The width is what :func:`onlinekern.io.load_libsvm` would give.
    """
    from onlinekern.io import stream_libsvm
    n, width, labels = 0, 0, np.zeros(0)
    for Xc, yc in stream_libsvm(path, chunk_rows, n_features=n_features):
        n += Xc.shape[0]
        width = Xc.shape[1]
        if labels is not None:
            labels = np.union1d(labels, yc)
            if labels.size > 10000:
                labels = None
    return n, width, labels


def _doubling_until(lo, hi):
    """The powers of two p with lo < p <= hi."""
    pts = []
    p = 1
    while p <= hi:
        if p > lo:
            pts.append(p)
        p *= 2
    return pts


#: Rows of run_online_stream's first chunk at most (the width race needs its rows in one chunk: 7,000
#: examples, BOGD's 21 B, 21,000 at B = 1,000); later chunks hold at most chunk_rows rows and
#: onlinekern.io.libsvm.CHUNK_NNZ stored values.
FIRST_CHUNK_ROWS = 24576


def run_online_stream(learner, path, chunk_rows=65536, classes=None, n_features=None,
                      checkpoints="default", keep_scores=False, callback=None, reset=True,
                      n_examples=None):
    """Present a LIBSVM file to ``learner`` once, in file order, reading it in chunks.

    Memory is bounded by one chunk plus the model: the file is never loaded whole.  The result
    is exactly :func:`run_online` on the loaded file in file order (``seed=None``): the same
    pre-update scores, mistakes, RMSE and curve (``seconds`` excepted: it is measured).  There is
    no ``seed``/``run``: a random permutation needs the whole file, so streaming is file order
    only.

    Parameters
    ----------
    learner : OnlineLearner
    path : str or os.PathLike
        LIBSVM file, plain, gzip, bzip2 or xz (read incrementally by
        :func:`onlinekern.io.stream_libsvm`).
    chunk_rows : int
        Rows parsed and learned per chunk at most (also at most
        :data:`onlinekern.io.libsvm.CHUNK_NNZ` stored values, except the first chunk, which is
        ``min(chunk_rows, FIRST_CHUNK_ROWS)`` whole rows).
    classes : labels, optional
        All class labels (classification).  When None they are read by a first pass over the
        file (see below).
    n_features : int, optional
        Feature count of the model (a larger index in the file is an error).  When None it is
        the largest index of the file, read by the first pass.
    checkpoints : "default", "doubling", None, or increasing 1-based counts
        "default" are :func:`default_checkpoints` of the file's row count, as :func:`run_online`
        records them (needs the row count: ``n_examples`` or the first pass).  "doubling" are
        1, 2, 4, ... and the last example, which needs no row count in advance.
    keep_scores, callback, reset : as :func:`run_online` (``keep_scores`` keeps n scores, so
        memory is then no longer bounded by the chunk).
    n_examples : int, optional
        Row count of the file when known (saves the first pass for "default" checkpoints).

    Notes
    -----
    The first pass happens only when something is missing: ``classes`` (classification),
    ``n_features``, or the row count for "default" checkpoints.  It parses the file once with
    the same reader (labels, widths and row count are kept, never the rows), so it costs about
    as much parsing as the learning pass; give ``classes``, ``n_features`` and
    ``checkpoints="doubling"`` (or ``n_examples``) for a single pass.  ``gamma="auto"`` and
    ``"median"`` are resolved on the first chunk, the first data the learner sees.

    Returns
    -------
    OnlineResult (``order`` None)
    """
    import scipy.sparse as sp
    from onlinekern.io import stream_libsvm

    chunk_rows = int(chunk_rows)
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1, got {chunk_rows}")
    if reset:
        learner._reset()
    fresh = "core_" not in learner.__dict__
    learner._validate_params()
    classify = learner._task_kind() == "classification"
    if not fresh:
        n_features = learner.n_features_in_ if n_features is None else n_features
        if classify and classes is None:
            classes = learner.classes_
    if isinstance(checkpoints, str) and checkpoints not in ("default", "doubling"):
        raise ValueError(f"checkpoints must be 'default', 'doubling', None or a list of counts, got {checkpoints!r}")
    need_n = isinstance(checkpoints, str) and checkpoints == "default" and n_examples is None
    if n_features is None or (classify and classes is None) or need_n:
        n_scan, width, labels = scan_libsvm(path, chunk_rows, n_features)
        if n_features is None:
            n_features = width
        if classify and classes is None:
            if labels is None:
                raise ValueError("more than 10000 distinct labels: classification needs classes")
            classes = labels
        if n_examples is None:
            n_examples = n_scan
    n_features = int(n_features)
    if n_features < 1:
        raise ValueError("X has no features")

    doubling = False
    if checkpoints is None:
        cps = np.zeros(0, dtype=np.int64)
    elif isinstance(checkpoints, str):
        if checkpoints == "default":
            cps = default_checkpoints(int(n_examples))
        else:
            doubling = True
            cps = None
    else:
        cps = np.unique(np.asarray(checkpoints, dtype=np.int64))
        if cps.size and cps[0] < 1:
            raise ValueError("checkpoints must be >= 1")

    # the first chunk is where the adaptive defaults are resolved and the widths raced: whole rows
    # up to FIRST_CHUNK_ROWS (chunk_rows if smaller), later chunks bounded in nonzeros too
    chunks = stream_libsvm(path, chunk_rows, n_features=n_features, first_rows=min(chunk_rows, FIRST_CHUNK_ROWS))
    first = next(chunks, None)
    if fresh:
        # The first chunk is the first data the learner sees: "auto" and "median" widths and
        # the other adaptive defaults are resolved on it, as partial_fit's first call would.
        X0, y0 = first if first is not None else (sp.csr_matrix((0, n_features)), np.zeros(0))
        learner._initialize(X0, y0, classes, n_stream=n_examples)
        X0 = y0 = None
        heap.trim()               # the width race's losing candidates are freed by now
    stream = [] if first is None else itertools.chain([first], chunks)
    first = None                  # each chunk is freed once learned (memory: about two chunks)
    core = learner.core_
    core.set_threads(learner._n_threads())
    C = core.n_outputs
    regression = learner.task_ == "regression"

    n = 0
    n_mis = 0
    sq = 0.0
    seconds = 0.0
    cp_n, cp_mis, cp_sq, cp_size, cp_sec = [], [], [], [], []
    kept = [] if keep_scores else None
    buf = None
    for Xc, yc in stream:
        heap.trim()               # the previous chunk is freed by now
        m = Xc.shape[0]
        if m == 0:
            continue
        if doubling:
            local = np.array(_doubling_until(n, n + m), dtype=np.int64) - n
        else:
            lo, hi = np.searchsorted(cps, [n + 1, n + m + 1])
            local = cps[lo:hi] - n
        if buf is None or buf.shape[0] < m:
            buf = np.zeros((m, C))
        scores = buf[:m]
        cb = None
        if callback is not None:
            # progress during the chunk: offsets added; the squared error passed on is an
            # approximation (carry + chunk sum) for display only.
            def cb(t, nm, s, size, sec, _n=n, _mis=n_mis, _sq=sq, _sec=seconds):
                callback(_n + t, _mis + nm, _sq + s, size, _sec + sec)
        y_enc = learner._encode_y(yc)
        with learner._pass_context(len(yc)):
            res = learner.run_core(Xc, y_enc, None, local, scores, cb)
        core = learner.core_
        k = len(res["cp_mistakes"])
        cp_n.extend((local[:k] + n).tolist())
        cp_mis.extend((res["cp_mistakes"] + n_mis).tolist())
        cp_size.extend(res["cp_size"].tolist())
        cp_sec.extend((res["cp_seconds"] + seconds).tolist())
        if regression:
            # The compiled loop sums (y - f)^2 in one running double; summing per chunk and
            # adding the sums would round differently.  add.accumulate is strictly sequential,
            # so carrying the running sum in front reproduces the loop bit for bit.
            diff = np.asarray(y_enc, dtype=np.float64) - scores[:, 0]
            acc = np.add.accumulate(np.concatenate(([sq], diff * diff)))
            cp_sq.extend(acc[local[:k]].tolist())
            sq = float(acc[-1])
        n_mis += res["n_mistakes"]
        seconds += res["seconds"]
        n += m
        if kept is not None:
            kept.append(scores.copy())
    if n == 0:
        raise ValueError("no examples to learn from")
    if doubling and (not cp_n or cp_n[-1] != n):
        # the last example closes the curve (its values are the final totals)
        cp_n.append(n)
        cp_mis.append(n_mis)
        cp_sq.append(sq)
        cp_size.append(int(core.size))
        cp_sec.append(seconds)
        if callback is not None:
            callback(n, n_mis, sq, int(core.size), seconds)
    seen = np.asarray(cp_n, dtype=np.int64)
    curve = {"n_seen": seen, "model_size": np.asarray(cp_size, dtype=np.int64),
             "seconds": np.asarray(cp_sec, dtype=np.float64)}
    if regression:
        curve["rmse"] = np.sqrt(np.asarray(cp_sq, dtype=np.float64) / np.maximum(seen, 1))
    else:
        curve["mistake_rate"] = 100.0 * np.asarray(cp_mis, dtype=np.int64) / np.maximum(seen, 1)
    scores_all = None
    if kept is not None:
        scores_all = np.concatenate(kept) if kept else np.zeros((0, C))
        if C == 1:
            scores_all = scores_all[:, 0]
    return OnlineResult(
        task=learner.task_,
        n_examples=n,
        n_mistakes=None if regression else n_mis,
        mistake_rate=None if regression else 100.0 * n_mis / n,
        rmse=math.sqrt(sq / n) if regression else None,
        seconds=seconds,
        model_size=int(core.size),
        curve=curve,
        scores=scores_all,
        order=None,
    )


def trivial_error(y, task, order=None):
    """The online error of the trivial predictor on the stream (y in ``order``).

    Classification: predict the label seen most often so far (ties and the first example: the
    smallest such label), count a mistake when it differs; regression: predict the mean of the
    targets seen so far (0 for the first).  This is the baseline every learner must beat: a mistake
    rate (%) or an RMSE, comparable with :attr:`OnlineResult.error` of a run over the same order.

    Parameters
    ----------
    y : array (n,)
        Labels or targets as the user gave them.
    task : {'binary', 'multiclass', 'regression'}
    order : array of int or None
        Presentation order (``OnlineResult.order``); None = file order.

    Returns
    -------
    float
    """
    y = np.asarray(y)
    if order is not None:
        y = y[np.asarray(order)]
    n = len(y)
    if n == 0:
        raise ValueError("no examples")
    if task == "regression":
        y = y.astype(np.float64)
        before = np.concatenate([[0.0], np.cumsum(y)[:-1] / np.arange(1, n)])
        return float(np.sqrt(np.mean((y - before) ** 2)))
    return 100.0 * float(majority_mistakes(y).sum()) / n


def majority_mistakes(y):
    """Per example, 1.0 where the online majority-class predictor of :func:`trivial_error` errs
    (it predicts the label seen most often before the example; ties and the first example: the
    smallest such label), else 0.0.

    Parameters
    ----------
    y : array (n,)
        Labels in presentation order.

    Returns
    -------
    ndarray (n,) of float64
    """
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    out = np.zeros(len(codes))
    counts = np.zeros(int(codes.max()) + 1 if len(codes) else 1, dtype=np.int64)
    leader = 0
    for t, c in enumerate(codes.tolist()):
        out[t] = c != leader
        counts[c] += 1
        if counts[c] > counts[leader] or (counts[c] == counts[leader] and c < leader):
            leader = c
    return out
