"""The experiment engine: sweeps, tuning, results and reports, layered so each module imports
only the ones listed before it.

* :mod:`~onlinekern.experiments.grids` — the papers' default grids, the grid syntax and grid
  files, tuning subsets.
* :mod:`~onlinekern.experiments.store` — the JSONL result store (one record per finished cell,
  resume, locking).
* :mod:`~onlinekern.experiments.specs` — algorithm names and fixed parameters of a sweep.
* :mod:`~onlinekern.experiments.data` — data sets: loading, identity, tuning subsets.
* :mod:`~onlinekern.experiments.runner` — cells, seeds and permutations, workers (joblib loky /
  threading / Dask), progress, resume.
* :mod:`~onlinekern.experiments.tuning` — the tuning protocol (:func:`tune`).
* :mod:`~onlinekern.experiments.sweep` — :func:`onlinekern.sweep`.
* :mod:`~onlinekern.experiments.report` — tables and plots of records.
* :mod:`~onlinekern.experiments.shrinking` — the Shrinking Gradient experiment (Livni et al.
  2017, Figure 1) on synthetic data.
* :mod:`~onlinekern.experiments.curves` — DSG / UDSG / CDSG objective curves and the O(1/t) rate.
* :mod:`~onlinekern.experiments.figures` — experiment files with a ``[figure]`` table: which of
  the two modules above runs, with which parameters.
* :mod:`~onlinekern.experiments.config` — TOML experiment files (``papers/*.toml``).
* :mod:`~onlinekern.experiments.sweep_cli`, :mod:`~onlinekern.experiments.report_cli` — the
  ``python -m onlinekern.sweep`` / ``python -m onlinekern.report`` command lines.
"""
