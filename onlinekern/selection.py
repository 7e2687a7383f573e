"""The online choice behind ``gamma="auto"``: several kernels side by side on the first examples.

No single width rule learns on every data set: the median heuristic gives the spread of the data,
not the scale of the classes, and dividing features by their ranges helps when their units differ
and hurts when small-range features are noise (BENCHMARKS.md "Defaults").  So the product default
runs the candidates of :func:`onlinekern.kernels.width_candidates` as separate models on the first
:data:`PREFIX` examples of the stream and keeps the best:

* every candidate predicts each example before learning from it, as in any online pass;
* the prediction that counts (mistake rate, RMSE, the returned scores) is that of the
  *follow-the-leader* candidate: the one with the fewest mistakes on the examples before this one
  (ties: the smaller surrogate loss, then the earlier candidate), or the smallest squared error in
  regression.  It depends on past examples only, so the measurement stays a genuine online one;
* after the prefix the leader continues alone; the others are dropped.

The cost is one pass per candidate over the prefix (at most 8 x 1,000 examples), counted in the
pass's ``seconds``.  The choice is made on the first call's rows (``fit``, ``run_online``, the
first ``partial_fit`` call or the first streamed chunk).
"""
import numpy as np

from onlinekern._core.learner import DivergenceError, RowData
from onlinekern.kernels import scale_features

#: Examples of the first call on which the candidates compete.
PREFIX = 1000


def losses(scores, y, task):
    """Per-example (mistake, surrogate) of pre-update scores: the keys of follow-the-leader.

    Parameters
    ----------
    scores : ndarray (n, C)
    y : ndarray (n,), encoded targets (+-1, class index or real)
    task : {'binary', 'multiclass', 'regression'}

    Returns
    -------
    (ndarray (n,), ndarray (n,)): mistakes (0/1; regression: the squared error) and the hinge
    surrogate max(0, 1 - margin) capped at 10 (regression: zeros).
    """
    if task == "regression":
        err = (y - scores[:, 0]) ** 2
        return err, np.zeros_like(err)
    if task == "binary":
        margin = y * scores[:, 0]
    else:
        yi = y.astype(np.intp)
        rows = np.arange(len(yi))
        own = scores[rows, yi]
        other = scores.copy()
        other[rows, yi] = -np.inf
        margin = own - other.max(axis=1)
    return (margin <= 0.0).astype(np.float64), np.minimum(np.maximum(0.0, 1.0 - margin), 10.0)


def leaders(mistakes, surrogate):
    """Follow-the-leader: for each example t, the candidate best on examples 0..t-1.

    Parameters
    ----------
    mistakes, surrogate : ndarray (K, n)
        Per-candidate, per-example losses (a diverged candidate: +inf mistakes).

    Returns
    -------
    ndarray (n + 1,) of int: entry t is the leader before example t (entry n: after the prefix).
    """
    K, n = mistakes.shape
    zero = np.zeros((K, 1))
    cm = np.concatenate([zero, np.cumsum(mistakes, axis=1)], axis=1)
    cs = np.concatenate([zero, np.cumsum(surrogate, axis=1)], axis=1)
    # lexicographic (mistakes, surrogate, index): candidate order breaks the remaining ties
    order = np.lexsort((np.arange(K)[:, None].repeat(n + 1, axis=1), cs, cm), axis=0)
    return order[0]


def select_width(learner, candidates, X, y, order=None, checkpoints=None, scores=None, callback=None):
    """One pass of ``learner`` over (X, y) that first lets the kernel ``candidates`` compete.

    Parameters
    ----------
    learner : OnlineLearner
        Initialised; its ``core_`` becomes the chosen candidate's, and ``gamma_`` and
        ``feature_scale_`` are set to the chosen kernel.
    candidates : list of (feature scale or None, gamma, core)
    X : array or sparse matrix, validated, not scaled
    y, order, checkpoints, scores, callback
        As for ``LearnerCore.run``.

    Returns
    -------
    dict, as ``LearnerCore.run`` returns, for the whole pass.
    """
    n = X.shape[0] if order is None else len(order)
    n0 = min(n, PREFIX)
    head = np.arange(n0, dtype=np.int64) if order is None else np.asarray(order[:n0], dtype=np.int64)
    cps = np.zeros(0, dtype=np.int64) if checkpoints is None else np.asarray(checkpoints, dtype=np.int64)
    cps_head = cps[cps <= n0]
    task = learner.task_
    C = learner.core_.n_outputs
    yv = np.ascontiguousarray(y, dtype=np.float64)
    scaled = {}
    runs, mis, sur, first_error = [], [], [], None
    threads = learner.core_.n_threads
    for s, gamma, core in candidates:
        core.set_threads(threads)
        key = None if s is None else id(s)
        if key not in scaled:
            Xs = X if s is None else scale_features(X, s)
            scaled[key] = RowData(Xs, learner.n_features_in_)
        sc = np.zeros((n0, C))
        try:
            res = core.run(scaled[key], yv, head, cps_head, sc, None)
            m, g = losses(sc, yv[head], task)
        except DivergenceError as exc:
            first_error = first_error or exc
            res, m, g = None, np.full(n0, np.inf), np.full(n0, np.inf)
        runs.append((res, sc))
        mis.append(m)
        sur.append(g)
    if all(r is None for r, _ in runs):
        raise first_error
    lead = leaders(np.array(mis), np.array(sur))
    k = int(lead[-1])
    s, gamma, core = candidates[k]
    learner.core_ = core
    learner.gamma_ = float(gamma)
    if s is None:
        learner.__dict__.pop("feature_scale_", None)
    else:
        learner.feature_scale_ = s
    learner.width_choice_ = {"candidate": k, "of": len(candidates), "prefix": n0}

    # the prefix as measured: each example scored by its leader
    head_scores = np.stack([runs[int(lead[t])][1][t] for t in range(n0)]) if n0 else np.zeros((0, C))
    m_head, _ = losses(head_scores, yv[head], task)
    if scores is not None:
        scores[:n0] = head_scores
    cum = np.cumsum(m_head)
    at = cps_head - 1
    regression = task == "regression"
    out = {"n_mistakes": 0 if regression else int(cum[-1]) if n0 else 0,
           "sq_error": float(cum[-1]) if regression and n0 else 0.0,
           "seconds": sum(r["seconds"] for r, _ in runs if r is not None),
           "n_done": n0,
           "cp_mistakes": np.zeros(len(at), dtype=np.int64) if regression else cum[at].astype(np.int64),
           "cp_sq_error": cum[at] if regression else np.zeros(len(at)),
           "cp_size": np.array([runs[int(lead[t + 1])][0]["cp_size"][i] if runs[int(lead[t + 1])][0] else 0
                                for i, t in enumerate(at)], dtype=np.int64),
           "cp_seconds": np.array([sum(r["cp_seconds"][i] for r, _ in runs if r is not None)
                                   for i in range(len(at))])}
    if callback is not None:
        for i, t in enumerate(cps_head):
            callback(int(t), int(out["cp_mistakes"][i]), float(out["cp_sq_error"][i]),
                     int(out["cp_size"][i]), float(out["cp_seconds"][i]))
    if n0 == n:
        return out

    # the rest: the chosen candidate alone
    tail = np.arange(n0, n, dtype=np.int64) if order is None else np.asarray(order[n0:], dtype=np.int64)
    cps_tail = cps[cps > n0] - n0
    base_mis, base_sq, base_sec = out["n_mistakes"], out["sq_error"], out["seconds"]
    cb = None
    if callback is not None:
        def cb(t, nm, sq, size, sec):
            callback(n0 + t, base_mis + nm, base_sq + sq, size, base_sec + sec)
    key = None if s is None else id(s)
    res = core.run(scaled[key], yv, tail, cps_tail, None if scores is None else scores[n0:], cb)
    return {"n_mistakes": base_mis + res["n_mistakes"], "sq_error": base_sq + res["sq_error"],
            "seconds": base_sec + res["seconds"], "n_done": n0 + res["n_done"],
            "cp_mistakes": np.concatenate([out["cp_mistakes"], res["cp_mistakes"] + base_mis]),
            "cp_sq_error": np.concatenate([out["cp_sq_error"], res["cp_sq_error"] + base_sq]),
            "cp_size": np.concatenate([out["cp_size"], res["cp_size"]]),
            "cp_seconds": np.concatenate([out["cp_seconds"], res["cp_seconds"] + base_sec])}
