"""What a sweep asks for: algorithm names, fixed parameters and the grid each algorithm gets.

Fixed parameters are normalised to ``{"*": {...}, algorithm: {...}}`` (:func:`normalise_params`);
``"@rows"`` (:data:`ROWS`) as a value stands for the number of rows of the data a cell runs on.
Every check here raises ValueError with a message naming the offending parameter or algorithm.
"""
import numpy as np

from onlinekern.registry import make_learner, resolve

__all__ = ["ROWS", "algorithm_list", "applicable_grid", "canonical_name", "check_grid_names",
           "metric_of", "normalise_params", "params_for", "positive_int_arg", "resolved_params",
           "substitute_rows"]

ROWS = "@rows"
"""A parameter value standing for the number of rows of the data a cell runs on (e.g.
``params={"horizon": ROWS}``: the stream length T of learners whose step size depends on it;
a tuning pass on a subset gets the subset's length)."""


def substitute_rows(params, n_rows):
    """``params`` with every :data:`ROWS` value replaced by ``n_rows``."""
    return {k: (int(n_rows) if isinstance(v, str) and v == ROWS else v) for k, v in params.items()}


def resolved_params(algorithm, params, validate=True, n_rows=1):
    """(learner, every hyper-parameter of the learner built from ``params``; seed and
    n_threads dropped).  ``validate`` runs the learner's own parameter checks."""
    learner = make_learner(algorithm, **substitute_rows(params, n_rows))
    if validate:
        learner._validate_params()
    got = dict(learner.get_params())
    got.pop("seed", None)
    got.pop("n_threads", None)
    return learner, got


def metric_of(pair):
    """``"rmse"`` for a regression learner, else ``"mistake_rate"``."""
    learner, _ = resolved_params(pair.algorithm, pair.fixed, validate=False)
    return "rmse" if learner._task_kind() == "regression" else "mistake_rate"


def applicable_grid(g, pair):
    """The part of grid ``g`` whose parameters ``pair``'s learner has; ValueError for a
    parameter both fixed and in the grid, or for seed / n_threads."""
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


def canonical_name(name):
    """The registry's spelling of an algorithm name (``FOGD-Hinge`` -> ``fogd-hinge``)."""
    key = str(name).strip().lower()
    resolve(key)               # ValueError with a suggestion if unknown
    return key


def algorithm_list(algorithms):
    """Canonical names, in order and once each, from a name, ``"a,b"`` or a list of those."""
    if isinstance(algorithms, str):
        algorithms = [algorithms]
    out = []
    for a in algorithms:
        for part in str(a).split(","):
            if part.strip():
                name = canonical_name(part)
                if name not in out:
                    out.append(name)
    if not out:
        raise ValueError("no algorithm given")
    return out


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
    names = set(resolve(algorithm)[0]._get_param_names())
    out = {k: v for k, v in nparams.get("*", {}).items() if k in names}
    out.update(nparams.get(algorithm, {}))
    return out


def check_grid_names(norm, algs, nparams):
    """ValueError unless every grid parameter applies to an algorithm of the sweep and is not
    also fixed; ``norm`` is a normalised grid, ``nparams`` normalised fixed parameters."""
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


def positive_int_arg(name, v):
    """``int(v)``, or ValueError naming ``name`` unless ``v`` is a positive integer."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)
