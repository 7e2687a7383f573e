"""The tuning protocol of the papers (Nguyen et al., IJCAI 2017, §4.3) over a session.

Grid search on a random subset of the data (10 % of medium data sets, 1 % above 500k rows),
selecting the setting with the lowest online mistake rate (or RMSE) of one pass (exact ties: the
first in grid order, or the lowest mean online loss, :func:`select_best`); then R single passes
over random permutations of the full data with the chosen setting.  :func:`tune` does the
first half for one learner (``train --tune`` reuses it); ``onlinekern.sweep(..., tune=True)``
does both.  The grids are :mod:`onlinekern.experiments.grids`.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from onlinekern.experiments.data import dataset_from
from onlinekern.experiments.grids import (default_grid, expand_grid, grid_for, normalise_grid,
                                          subset_fraction)
from onlinekern.experiments.runner import Session, make_cell
from onlinekern.experiments.specs import applicable_grid, canonical_name, metric_of, resolved_params
from onlinekern.seeding import check_seed

__all__ = ["TIE_BREAKS", "TuneResult", "select_best", "tune", "tune_pairs"]


# ---- the result of tuning -------------------------------------------------------------------------

@dataclass
class TuneResult:
    """What the grid search found.

    Attributes
    ----------
    algorithm : str
    metric : 'mistake_rate' or 'rmse'
    best_params : dict
        Everything to pass to ``make_learner`` besides the seed: the fixed parameters plus the
        chosen grid point.  None if every grid point failed.
    best_error : float
        The chosen point's online error on the subset (mean over ``runs`` passes).
    best_point : dict
        The chosen grid values alone.
    table : list of dict
        One row per grid point, in grid order: ``params`` (the grid values), ``error``,
        ``error_std``, ``seconds``, ``model_size``, ``status``, ``message`` (and ``loss``, the
        mean online loss, when ties are broken by it).
    grid : dict
        The grid searched.
    n_subset, n_rows : int
        Rows of the subset and of the full data.
    records : list of dict
        The tuning passes' records (as stored in a results file).
    """

    algorithm: str
    metric: str
    best_params: object
    best_error: float
    best_point: object
    table: list = field(repr=False)
    grid: dict = field(repr=False)
    n_subset: int = 0
    n_rows: int = 0
    subset: float = 0.1
    seed: int = 0
    records: list = field(default_factory=list, repr=False)

    def frame(self):
        """The table as a pandas DataFrame, one column per grid parameter."""
        import pandas as pd
        rows = []
        for row in self.table:
            r = {k: v for k, v in row.items() if k != "params"}
            r.update(row["params"])
            rows.append(r)
        return pd.DataFrame(rows)


TIE_BREAKS = ("grid", "loss")


def _mean_loss(recs):
    """Mean of the passes' ``mean_loss`` (None if a learner has no loss: no tie-break by it)."""
    losses = [r.get("mean_loss") for r in recs]
    if any(v is None for v in losses):
        return None
    return float(np.mean(losses))


def select_best(points, records_by_point, metric, tie_break="grid"):
    """(table, best index or None): the grid point with the lowest mean error.

    ``tie_break`` decides between points with exactly the same mean error: ``"grid"`` takes the
    first in grid order; ``"loss"`` the lowest mean online loss of the passes (the records'
    ``mean_loss``, :func:`~onlinekern.experiments.runner.mean_online_loss`), then grid order.
    A mistake rate is a count, and on a small subset many points tie on it exactly (a learner
    predicting the majority class at every small step); the loss it descends tells them apart.
    A point with any failed or non-finite run is not eligible, and with ``"loss"`` neither is
    one whose mean loss is not finite (a learner without a loss keeps grid order).  The table
    rows get a ``loss`` entry with ``"loss"``.
    """
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    table = []
    best = best_key = None
    for i, (point, recs) in enumerate(zip(points, records_by_point)):
        errs = [r.get(metric) for r in recs]
        ok = all(r.get("status") == "ok" for r in recs) and all(
            e is not None and math.isfinite(e) for e in errs)
        row = {"params": dict(point), "status": "ok" if ok else "failed",
               "error": float(np.mean(errs)) if ok else None,
               "error_std": float(np.std(errs, ddof=1)) if ok and len(errs) > 1 else (0.0 if ok else None),
               "seconds": float(np.mean([r.get("seconds") or 0.0 for r in recs])),
               "model_size": float(np.mean([r.get("model_size") or 0 for r in recs])) if ok else None,
               "message": next((r.get("error") for r in recs if r.get("status") != "ok"), None)}
        key = (row["error"],)
        if tie_break == "loss":
            row["loss"] = _mean_loss(recs) if ok else None
            ok = ok and (row["loss"] is None or math.isfinite(row["loss"]))
            key += (0.0 if row["loss"] is None else row["loss"],)
        table.append(row)
        if ok and (best is None or key < best_key):
            best, best_key = i, key
    return table, best


def tune(algorithm, X, y=None, grid=None, subset=0.1, seed=0, n_jobs=None, params=None, runs=1,
         backend=None, scheduler=None, client=None, out=None, scale=False, scale_target=False,
         progress=False, tie_break="grid"):
    """Grid search on a random subset, selecting by online mistake rate (or RMSE).

    Parameters
    ----------
    algorithm : str
        Learner name (``fogd-hinge``, ...).
    X, y : data
        A matrix and its labels; or ``X`` a data specification of :func:`onlinekern.sweep`
        (a LIBSVM path, ``"a+b"``) and ``y`` None.
    grid : dict, str or path, optional
        ``{param: values}``, grid text (``"eta=0.1,0.3"``) or a grid file; default
        :func:`default_grid` (the IJCAI'17 grid in onlinekern's conventions).
    subset : float or 'auto'
        Fraction of the rows to tune on (0.1); 'auto' is the paper's rule, 0.01 above 500,000
        rows, else 0.1.  Rows are :func:`subset_indices` under ``seed``.
    seed : int
        Root seed: the subset, and tuning pass t presents the subset in permutation t under
        ``seed`` with learner seed ``seed + t`` (as run t of a sweep).
    runs : int
        Passes per grid point (1, as the paper); their mean error decides.
    params : dict, optional
        Fixed parameters (not tuned), e.g. ``{"n_components": 1000}``.
    n_jobs, backend, scheduler, client, out, scale, scale_target, progress
        As :func:`onlinekern.sweep`; with ``out`` every grid point's runs are stored and a
        re-run resumes.
    tie_break : 'grid' or 'loss'
        Exact ties of the error go to the first point in grid order, or (``"loss"``) to the
        lowest mean online loss of the passes (:func:`select_best`).

    Returns
    -------
    TuneResult
    """
    if y is not None:
        data = (X, y)
    else:
        data = X
    with Session(out=out, n_jobs=n_jobs, backend=backend, scheduler=scheduler, client=client,
                  progress=progress) as session:
        ds = dataset_from(data, scale=scale, scale_target=scale_target)
        results = tune_pairs(session, [(ds, algorithm, dict(params or {}))], grid=grid,
                             subset=subset, seed=seed, runs=runs, tie_break=tie_break)
    res = results[0]
    if res.best_params is None:
        msgs = {row["message"] for row in res.table if row["message"]}
        raise ValueError(f"tuning {algorithm}: every grid point failed ({'; '.join(sorted(msgs))[:500]})")
    return res


def tune_pairs(session, pairs, grid=None, subset=0.1, seed=0, runs=1, tie_break="grid",
               permutation=None):
    """Grid search for each pair on its tuning subset; one :class:`TuneResult` per pair.

    Parameters
    ----------
    session : Session
        Runs the cells and holds their records (a results file resumes).
    pairs : list of Pair or (DataSet, algorithm, fixed params) tuples
    grid : normalised grid or grid argument, optional
        Default: :func:`~onlinekern.experiments.grids.default_grid` of each algorithm.
    subset : float or 'auto'
    seed : int
        Root seed: subset rows and tuning pass t's permutation and learner seed ``seed + t``.
    runs : int
        Passes per grid point.
    tie_break : 'grid' or 'loss'
        How exact ties of the error are broken (:func:`select_best`); ``"loss"`` has every
        pass measure its mean online loss.
    permutation : int, optional
        P: the subset is the first rows of the full data's permutation P
        (:func:`~onlinekern.experiments.grids.subset_indices`) and pass t presents it in
        permutation P + t (learner seed ``seed + t`` still); default: the subset stream and
        permutation t.

    A classification subset that lacks some of the data set's labels is learnt with all of
    them (the learner the chosen setting runs with has every class).

    Returns
    -------
    list of TuneResult
    """
    seed = check_seed(seed)
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    if permutation is not None and (isinstance(permutation, bool) or not isinstance(permutation, (int, np.integer))
                                    or permutation < 0):
        raise ValueError(f"permutation must be a non-negative integer, got {permutation!r}")
    norm = normalise_grid(grid)
    made = []
    for p in pairs:
        if isinstance(p, tuple):
            ds, alg, fixed = p
            p = session.pairs([ds], [canonical_name(alg)], {canonical_name(alg): dict(fixed)},
                              warn=False)
            if not p:
                learner, _ = resolved_params(canonical_name(alg), fixed, n_rows=ds.n_rows)
                raise ValueError(f"{alg} cannot learn from {ds.name} ({learner._task_kind()} learner)")
            p = p[0]
        made.append(p)
    jobs = []
    for p in made:
        g = grid_for(norm, p.algorithm)
        if g is None:
            g = default_grid(p.algorithm, p.dataset.n_rows_full, p.fixed)
        g = applicable_grid(g, p)
        points = expand_grid(g)
        frac = subset_fraction(subset, p.dataset.n_rows)
        sub = session.subset(p.dataset, frac, seed, permutation)
        classes = None
        if metric_of(p) == "mistake_rate":
            labels = np.unique(p.dataset.y)
            if len(np.unique(sub.y)) < len(labels):
                classes = labels
        cells = [[make_cell(p, {**p.fixed, **pt}, seed, t, "tune", False, dataset=sub, keep_curve=False,
                            permutation=None if permutation is None else permutation + t,
                            classes=classes, mean_loss=tie_break == "loss")
                  for t in range(runs)] for pt in points]
        jobs.append((p, g, points, cells, sub))
    flat = [c for _, _, _, cells, _ in jobs for cs in cells for c in cs]
    session.run_cells(flat, label="tuning runs")
    results = []
    for p, g, points, cells, sub in jobs:
        recs = [[session.store.get(c.key) for c in cs] for cs in cells]
        metric = metric_of(p)
        table, best = select_best(points, recs, metric, tie_break)
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
