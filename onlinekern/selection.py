"""The online choice behind ``gamma="auto"``: several kernels side by side on the first examples.

No single width rule learns on every data set: the median heuristic gives the spread of the data,
not the scale of the classes, and dividing features by their ranges helps when their units differ
and hurts when small-range features are noise, or when outliers stretch the ranges (dividing by
the standard deviations then helps; BENCHMARKS.md "Defaults").  So the product default runs the
candidates of :func:`onlinekern.kernels.width_candidates` (up to 12: four widths in each of up to
three feature scalings) as separate models and keeps the best, by online successive halving:

* all candidates learn the first :data:`STAGES` [0] examples, the better half (ranked on that
  stage's examples) the examples up to ``STAGES[1]``, and so on until one is left, which learns
  the rest of the stream alone;
* a classification stage whose best candidate does not beat the majority-class predictor on the
  stage's examples by two standard deviations (:func:`decided`) halves nobody: near chance the
  ranking is noise, and the width that learns may be the one that starts slowest.  The last stage
  always picks (its own ranking's best);
* every candidate predicts each example before learning from it, as in any online pass, and the
  prediction that counts (mistake rate, RMSE, the returned scores) is the *follow-the-leader*
  one: the running candidate with the fewest mistakes on the examples before this one (ties: the
  smaller hinge surrogate, then the earlier candidate), or the smallest squared error in
  regression.  It depends on past examples only, so the measurement stays a genuine online one.

A stage's own examples rank the candidates, not their whole history: a sharper kernel learns more
slowly but ends better (ijcnn1: FOGD at the chosen width makes 3.71 % over 141,691 examples
against 5.08 % at the width that leads for the first 4,000).  The cost with 12 candidates is
12 x 1,000 + 6 x 2,000 + 3 x 4,000 = 36,000 example-steps when every stage decides, 12 x 7,000 =
84,000 at most (no stage before the last decides), counted in the pass's ``seconds`` (8
candidates: 24,000 and 56,000).  The choice is
made on the first call's rows (``fit``, ``run_online``, the first ``partial_fit`` call or the first
streamed chunk); a call shorter than the stages ends it with the leader.
"""
import numpy as np

from onlinekern._core.learner import DivergenceError, RowData
from onlinekern.kernels import scale_basis, scale_features
from onlinekern.protocol import majority_mistakes

#: Example counts at which the candidates still running are halved (12 -> 6 -> 3 -> 1, 8 -> 4 -> 2 -> 1).
STAGES = (1000, 3000, 7000)


def race_stages(learner):
    """The stage ends of ``learner``'s race: :data:`STAGES`, or later ones for a budgeted learner
    whose class sets ``race_budget_fills`` = f > 0.

    Then the first halving waits until the budget B has been filled f times over (at least
    ``STAGES[0]`` examples) and the later stages keep the 1 : 3 : 7 pattern of :data:`STAGES`:
    ``(f B, 3 f B, 7 f B)``.  A learner that adds an example at (nearly) every step fills its
    budget within its first B examples, and a sharp kernel, which predicts from the nearest stored
    examples, trails a smooth one until the budget has filled and only then leads: BOGD on ijcnn1
    at B = 1000, by the 64 x median width against the median width, makes 11.0 % against 9.8 % of
    the first 1,000 examples and 8.7 % against 9.6 % of the next 1,000, so the race of
    :data:`STAGES` keeps the median width, which predicts the majority class for the whole stream.
    """
    fills = getattr(learner, "race_budget_fills", 0)
    if not fills:
        return STAGES
    first = max(STAGES[0], int(fills * int(learner.param_value("budget"))))
    return tuple(first * e // STAGES[0] for e in STAGES)


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


def leaders(mistakes, surrogate, m0=None, s0=None):
    """Follow-the-leader: for each example t, the candidate best on the examples before t.

    Parameters
    ----------
    mistakes, surrogate : ndarray (K, n)
        Per-candidate, per-example losses (a diverged candidate: +inf mistakes).
    m0, s0 : ndarray (K,), optional
        The candidates' totals before these examples (earlier stages).

    Returns
    -------
    ndarray (n + 1,) of int: entry t is the leader before example t (entry n: after them).
    """
    K, n = mistakes.shape
    m0 = np.zeros(K) if m0 is None else np.asarray(m0, dtype=np.float64)
    s0 = np.zeros(K) if s0 is None else np.asarray(s0, dtype=np.float64)
    cm = np.concatenate([m0[:, None], m0[:, None] + np.cumsum(mistakes, axis=1)], axis=1)
    cs = np.concatenate([s0[:, None], s0[:, None] + np.cumsum(surrogate, axis=1)], axis=1)
    # lexicographic (mistakes, surrogate, index): candidate order breaks the remaining ties
    order = np.lexsort((np.arange(K)[:, None].repeat(n + 1, axis=1), cs, cm), axis=0)
    return order[0]


def decided(mistakes, trivial):
    """Whether a stage can rank its candidates: its best candidate beats the majority-class
    predictor by more than two standard deviations of a count (2 sqrt(m), m the predictor's
    mistakes on the stage).

    Near chance every candidate's count is noise, and halving on noise can drop the one width that
    learns (FOGD on an XOR-of-topics text stream over 2^24 columns: 493-511 mistakes of the first
    1,000 each, and the width that makes 1,630 of the next 4,000 against 1,963-2,014 was dropped).
    An undecided stage keeps every candidate; the next stage's examples rank them.

    Parameters
    ----------
    mistakes : ndarray (K, n), the running candidates' mistakes on the stage's examples
    trivial : ndarray (n,), the majority-class predictor's (:func:`onlinekern.protocol.majority_mistakes`)

    Returns
    -------
    bool
    """
    m = float(trivial.sum())
    return float(mistakes.sum(axis=1).min()) < m - 2.0 * np.sqrt(m)


def survivors(alive, mistakes, surrogate, keep=None):
    """The better half (rounded up) of ``alive`` (or its best ``keep``), ranked on one stage's
    examples only.

    A stage's own examples judge the candidates as they are now, not their start: a sharper kernel
    is slower to learn but ends better (ijcnn1: 16 x the median width trails the median width for
    the first 4,000 examples and makes 3.7 % against 5.1 % over 141,691).
    """
    key = sorted(range(len(alive)), key=lambda i: (mistakes[i].sum(), surrogate[i].sum(), i))
    keep = (len(alive) + 1) // 2 if keep is None else keep
    return [alive[i] for i in sorted(key[:keep])]


def select_width(learner, candidates, X, y, order=None, checkpoints=None, scores=None, callback=None):
    """One pass of ``learner`` over (X, y) in which the kernel ``candidates`` compete first.

    Online successive halving: all candidates learn the examples up to the first stage end
    (:func:`race_stages`: ``STAGES[0]``, or later for a budgeted learner that asks for it), the
    better half of them those up to the second, and so on until one is left, which learns the rest.
    Every example is predicted by the follow-the-leader candidate among those still running.

    Parameters
    ----------
    learner : OnlineLearner
        Initialised; its ``core_`` becomes the chosen candidate's, and ``gamma_``,
        ``feature_scale_`` and ``width_choice_`` describe the chosen kernel (``width_choice_``:
        the candidate's index, their number, the example at which the race ended and the stage
        ends at which no candidate was dropped).
    candidates : list of (feature scale or None, gamma, core)
    X : array or sparse matrix, validated, not scaled
    y, order, checkpoints, scores, callback
        As for ``LearnerCore.run``.

    Returns
    -------
    dict, as ``LearnerCore.run`` returns, for the whole pass.
    """
    n = X.shape[0] if order is None else len(order)
    idx = np.arange(n, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
    cps = np.zeros(0, dtype=np.int64) if checkpoints is None else np.asarray(checkpoints, dtype=np.int64)
    task = learner.task_
    regression = task == "regression"
    C = learner.core_.n_outputs
    yv = np.ascontiguousarray(y, dtype=np.float64)
    threads = learner.core_.max_threads
    stages = race_stages(learner)
    head_n = min(stages[-1], n)
    yh = yv[idx[:head_n]]
    first_error = None
    for s, _, core in candidates:
        core.set_threads(threads)
        if core is not candidates[0][2]:    # caches of the same numbers: one for all (keyed rows)
            core.join_caches(candidates[0][2])
    K = len(candidates)
    alive = list(range(K))
    tot_m, tot_s = np.zeros(K), np.zeros(K)
    run_m = run_sq = seconds = 0.0
    cp_m, cp_sq, cp_size, cp_sec = [], [], [], []
    a = 0
    trivial = None if regression else majority_mistakes(yh)
    undecided = []                  # stage ends where every candidate went on
    for si, end in enumerate(stages):
        if len(alive) == 1 or a >= n:
            break
        b = min(end, n)
        local = cps[(cps > a) & (cps <= b)] - a
        # the stage's examples, copied in stream order and scaled once per scaling still running
        # (as each partial_fit call gets its own rows): the memory of one stage's examples per
        # scaling, not of the race's prefix or of X; the winner scales X after the race
        Xs, ys, at = X[idx[a:b]], yh[a:b], np.arange(b - a, dtype=np.int64)
        rows = {}
        mis, sur, outs = [], [], []
        for k in alive:                 # the candidates running share one cache's memory
            candidates[k][2].share_caches(len(alive))
        for k in alive:
            s, _, core = candidates[k]
            key = None if s is None else id(s)
            if key not in rows:
                rows[key] = RowData(Xs if s is None else scale_features(Xs, s), learner.n_features_in_)
            sc = np.zeros((b - a, C))
            try:
                res = core.run(rows[key], ys, at, local, sc, None)
                m, g = losses(sc, ys, task)
            except DivergenceError as exc:
                first_error = first_error or exc
                res, m, g = None, np.full(b - a, np.inf), np.full(b - a, np.inf)
            mis.append(m)
            sur.append(g)
            outs.append((res, sc))
        del rows, Xs
        if all(r is None for r, _ in outs):
            raise first_error
        mis, sur = np.array(mis), np.array(sur)
        lead = leaders(mis, sur, tot_m[alive], tot_s[alive])
        pick = lead[:-1]
        seg_scores = np.stack([outs[j][1][t] for t, j in enumerate(pick)])
        m_seg, _ = losses(seg_scores, ys, task)
        if scores is not None:
            scores[a:b] = seg_scores
        cum = run_m + np.cumsum(m_seg)
        seg_sec = sum(r["seconds"] for r, _ in outs if r is not None)
        for i, t in enumerate(local):
            j = int(lead[t])                    # the leader after example t of the stage
            r = outs[j][0]
            cp_m.append(0 if regression else int(cum[t - 1]))
            cp_sq.append(float(cum[t - 1]) if regression else 0.0)
            cp_size.append(int(r["cp_size"][i]) if r is not None else 0)
            cp_sec.append(seconds + sum(o["cp_seconds"][i] for o, _ in outs if o is not None))
        if callback is not None:
            for i, t in enumerate(local):
                callback(int(a + t), int(cp_m[-len(local) + i]), float(cp_sq[-len(local) + i]),
                         int(cp_size[-len(local) + i]), float(cp_sec[-len(local) + i]))
        run_m = float(cum[-1])
        seconds += seg_sec
        tot_m[alive] += np.where(np.isfinite(mis), mis, np.inf).sum(axis=1)
        tot_s[alive] += sur.sum(axis=1)
        if b >= n:
            alive = [alive[int(lead[-1])]]
        elif si == len(stages) - 1:             # the last stage picks its own ranking's best
            alive = survivors(alive, mis, sur, keep=1)
        elif trivial is None or decided(mis, trivial[a:b]):
            alive = survivors(alive, mis, sur)
        else:
            undecided.append(int(b))
        for j in set(range(K)) - set(alive):    # a dropped candidate's model goes now
            candidates[j] = candidates[j][:2] + (None,)
        a = b
    k = alive[0] if len(alive) == 1 else alive[int(leaders(np.zeros((len(alive), 0)), np.zeros((len(alive), 0)),
                                                             tot_m[alive], tot_s[alive])[-1])]
    s, gamma, core = candidates[k]
    del candidates[:]            # the other candidates' models and caches go now, not after the pass
    if K > 1:
        core.share_caches(1)
    learner.core_ = core
    learner.gamma_ = float(gamma)
    if s is None:
        learner.__dict__.pop("feature_scale_", None)
        learner.__dict__.pop("feature_scale_basis_", None)
    else:
        learner.feature_scale_, learner.feature_scale_basis_ = s, scale_basis(s)
    learner.width_choice_ = {"candidate": k, "of": K, "decided_at": int(a), "undecided": undecided}
    head = {"n_mistakes": 0 if regression else int(run_m), "sq_error": run_m if regression else 0.0,
            "seconds": seconds, "n_done": int(a),
            "cp_mistakes": np.array(cp_m, dtype=np.int64), "cp_sq_error": np.array(cp_sq, dtype=np.float64),
            "cp_size": np.array(cp_size, dtype=np.int64), "cp_seconds": np.array(cp_sec, dtype=np.float64)}
    if a >= n:
        return head

    # the rest: the chosen candidate alone
    cb = None
    if callback is not None:
        def cb(t, nm, sq, size, sec):
            callback(a + t, head["n_mistakes"] + nm, head["sq_error"] + sq, size, seconds + sec)
    rest = RowData(X if s is None else scale_features(X, s), learner.n_features_in_)
    res = core.run(rest, yv, idx[a:], cps[cps > a] - a,
                   None if scores is None else scores[a:], cb)
    return {"n_mistakes": head["n_mistakes"] + res["n_mistakes"], "sq_error": head["sq_error"] + res["sq_error"],
            "seconds": seconds + res["seconds"], "n_done": a + res["n_done"],
            "cp_mistakes": np.concatenate([head["cp_mistakes"], res["cp_mistakes"] + head["n_mistakes"]]),
            "cp_sq_error": np.concatenate([head["cp_sq_error"], res["cp_sq_error"] + head["sq_error"]]),
            "cp_size": np.concatenate([head["cp_size"], res["cp_size"]]),
            "cp_seconds": np.concatenate([head["cp_seconds"], res["cp_seconds"] + seconds])}
