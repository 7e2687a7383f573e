"""``onlinekern.sweep``: algorithms × grid × runs over data sets, tuned or not, as records.

Python: ``onlinekern.sweep(["fogd-hinge"], "ijcnn1", runs=10, grid={"eta": [0.3, 1]})`` returns
the records (a pandas DataFrame with ``as_frame=True``).  Cells, seeds, the record format and
parallelism are described in :mod:`onlinekern.experiments.runner`.
"""
from onlinekern.experiments.data import NoPairsError, datasets_from
from onlinekern.experiments.grids import expand_grid, grid_for, normalise_grid
from onlinekern.experiments.runner import PROG, Session, make_cell
from onlinekern.experiments.specs import (algorithm_list, applicable_grid, check_grid_names,
                                          normalise_params, positive_int_arg)
from onlinekern.experiments.tuning import tune_pairs
from onlinekern.seeding import check_seed

__all__ = ["records_frame", "run_sweep", "sweep"]


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
        ``seed + r`` (:mod:`onlinekern.experiments.runner`).
    seed : int
        The root seed.
    grid : dict, str or path, optional
        ``{param: values}``, grid text (``"eta=0.1,0.3"``), a per-algorithm dict
        ``{algorithm: {param: values}, "*": {...}}`` or a JSON/TOML grid file.  Without
        ``tune`` every grid point gets R runs; with ``tune`` the grid is searched on the subset
        (default: the IJCAI'17 grid, :func:`onlinekern.experiments.grids.default_grid`).
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
    runs = positive_int_arg("runs", runs)
    tune_runs = positive_int_arg("tune_runs", tune_runs)
    seed = check_seed(seed)
    algs = algorithm_list(algorithms)
    params = normalise_params(params, algs)
    norm = normalise_grid(grid)
    if norm is not None:
        check_grid_names(norm, algs, params)
    datasets = datasets_from(data, scale, scale_target)
    with Session(out=out, n_jobs=n_jobs, backend=backend, scheduler=scheduler, client=client,
                  progress=progress, retry_failed=retry_failed) as session:
        records = run_sweep(session, algs, datasets, runs, seed, norm, params, tune, subset,
                             tune_runs, file_order)
    if as_frame:
        return records_frame(records)
    return records


def run_sweep(session, algs, datasets, runs, seed, norm, params, tune, subset, tune_runs,
              file_order, tie_break="grid", tune_permutation=None):
    """The cells of a sweep in ``session``: tuning first (``tune``), then the runs; the records.

    The arguments are :func:`sweep`'s, normalised (``norm``: the grid, ``params``: the fixed
    parameters); ``tie_break`` and ``tune_permutation`` are those of
    :func:`~onlinekern.experiments.tuning.tune_pairs` (``tie_break``, ``permutation``)."""
    pairs = session.pairs(datasets, algs, params)
    if not pairs:
        raise NoPairsError("no algorithm can learn from the data given (see the messages above)")
    records = []
    settings = []
    if tune:
        results = tune_pairs(session, pairs, grid=norm, subset=subset, seed=seed, runs=tune_runs,
                             tie_break=tie_break, permutation=tune_permutation)
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
            g = applicable_grid(g, p)
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
