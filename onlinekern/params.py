"""Hyper-parameter checks and presets shared by every learner.

:data:`PARAM_CHECKS` maps a parameter name to the check every learner with that parameter runs in
``OnlineLearner._validate_params``; the public checks are reused by learners for their own
parameters.  :data:`PRESETS` are the values of ``preset``, :data:`AUTO` the adaptive default.
"""
import numbers

import numpy as np

from onlinekern._core.features import PRECISIONS
from onlinekern.kernels import resolve_gamma
from onlinekern.seeding import check_seed

__all__ = ["AUTO", "AUTO_BUDGET", "PARAM_CHECKS", "PRESETS", "check_nonnegative", "check_positive", "check_positive_int",
           "is_auto"]

#: The product default of ``budget="auto"`` (BOGD, BOGD++, NOGD, BSGD, RBP, Forgetron, BPAs): at
#: the papers' 50-100 support vectors a budget is full after a few hundred examples and the budget maintenance
#: (random removal, smallest-norm removal or merging, the Nystrom switch) decides what is learned;
#: 1,000 lets them learn like unbudgeted kernel OGD/Pegasos for the first 1,000 examples and keeps
#: the removal noise ~3x smaller, at O(1000 d) per step (BENCHMARKS.md "Defaults").
AUTO_BUDGET = 1000


def check_positive(name, v):
    """ValueError naming ``name`` unless ``v`` is a finite number > 0."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")


def check_nonnegative(name, v):
    """ValueError naming ``name`` unless ``v`` is a finite number >= 0."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a non-negative finite number, got {v!r}")


def check_positive_int(name, v):
    """ValueError naming ``name`` unless ``v`` is an integer >= 1."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")


def _unit_open(name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not 0 < v < 1:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {v!r}")


def _threads(name, v):
    if v is not None:
        check_positive_int(name, v)


def _seed(name, v):
    check_seed(v)


def _precision(name, v):
    if v not in PRECISIONS:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, PRECISIONS))}, got {v!r}")


def _gamma(name, v):
    if v is None or (isinstance(v, str) and v.strip().lower() in ("median", AUTO)):
        return
    resolve_gamma(v, None)


def _preset(name, v):
    if v not in PRESETS:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, PRESETS))}, got {v!r}")


AUTO = "auto"
#: ``preset="auto"``: the product defaults, resolved on the first data (scale-free kernel width,
#: regression targets standardised online, per-learner rules); ``preset="paper"``: every
#: parameter left at ``"auto"`` takes the papers' value (ALGORITHMS.md's defaults tables).
PRESETS = ("auto", "paper")


def is_auto(value):
    """Whether a hyper-parameter value is the adaptive default ``"auto"``."""
    return isinstance(value, str) and value.strip().lower() == AUTO


# Checks by parameter name, shared by every learner that has the parameter.
PARAM_CHECKS = {
    "eta": check_positive,
    "lam": check_nonnegative,
    "epsilon": check_nonnegative,
    "huber_delta": check_positive,
    "quantile": _unit_open,
    "n_components": check_positive_int,
    "budget": check_positive_int,             # None only where the learner's default is None
    "seed": _seed,
    "n_threads": _threads,
    "gamma": _gamma,
    "rank": check_positive_int,
    "k_merge": check_positive_int,
    "horizon": check_positive_int,            # None only where the learner's default is None
    "eta_linear": check_positive,
    "precision": _precision,
    "preset": _preset,
}
