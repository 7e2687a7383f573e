"""The online protocol (ALGORITHMS.md §1.2): predict each example, record, then learn from it.

``run_online`` is the measurement behind every table of the papers: one pass over the data, in
file order or in the permutation of run ``run`` under ``seed``; a mistake is a pre-update margin
<= 0 (binary y f <= 0; multiclass f_y - max_{c != y} f_c <= 0); regression reports the RMSE of
the pre-update predictions.  Time counts learning only (data loading excluded).
"""
import math
from dataclasses import dataclass, field

import numpy as np

from onlinekern._core.learner import RowData
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
        learner._initialize(X, y, classes)
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
    rows = RowData(X, learner.n_features_in_)
    res = core.run(rows, learner._encode_y(y), order, cps, scores, callback)
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
