"""Hyper-parameter checks and presets shared by every learner.

:data:`PARAM_CHECKS` maps a parameter name to the check every learner with that parameter runs in
``OnlineLearner._validate_params``; the public checks are reused by learners for their own
parameters.  :data:`PRESETS` are the values of ``preset``, :data:`AUTO` the adaptive default.
"""
import numbers

import numpy as np

from onlinekern._core.features import PRECISIONS
from onlinekern._core.support import WIDE_D
from onlinekern.kernels import resolve_gamma
from onlinekern.seeding import check_seed

__all__ = ["AUTO", "AUTO_BUDGET", "PARAM_CHECKS", "PASS_WORK", "PRESETS", "check_nonnegative", "check_positive",
           "check_positive_int", "is_auto", "row_cost", "store_width", "stream_bound", "stream_budget",
           "sv_cost"]

#: The product default of ``budget="auto"`` (BOGD, BOGD++, NOGD, BSGD, RBP, Forgetron, BPAs): at
#: the papers' 50-100 support vectors a budget is full after a few hundred examples and the budget maintenance
#: (random removal, smallest-norm removal or merging, the Nystrom switch) decides what is learned;
#: 1,000 lets them learn like unbudgeted kernel OGD/Pegasos for the first 1,000 examples and keeps
#: the removal noise ~3x smaller, at O(1000 d) per step (BENCHMARKS.md "Defaults").
AUTO_BUDGET = 1000

#: The work one pass may cost under the stream-length bounds (``budget="auto"``,
#: ``max_blocks="auto"``) of the learners whose model grows with the stream by definition (kernel
#: Perceptron and OGD, Projectron(++), the doubly stochastic family), in the units of
#: :func:`sv_cost`: ~1 ns of one thread each on the 2-core machine under load, so ~20 s per pass
#: there (a support set of 4,000 on ijcnn1 measured 0.92 ns per unit, a DSG block 0.84 ns).
PASS_WORK = 2e10


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


def check_flag(name, v):
    """ValueError naming ``name`` unless ``v`` is True, False or ``"auto"``."""
    if not (is_auto(v) or isinstance(v, (bool, np.bool_))):
        raise ValueError(f"{name} must be True, False or 'auto', got {v!r}")


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


def row_cost(X):
    """What one stored vector costs a query row of X, in multiply-adds: the mean number of
    nonzeros of a sparse row (its entries are gathered), the width of a dense one.

    Parameters
    ----------
    X : array or sparse matrix (the first rows of the stream)

    Returns
    -------
    float
    """
    n = max(1, X.shape[0])
    return float(X.nnz) / n if hasattr(X, "nnz") else float(X.shape[1])


def sv_cost(X, n_outputs):
    """Work of one support vector for one example of X, in :data:`PASS_WORK` units:
    nnz + 12 + C + d/32 (nnz: :func:`row_cost`, C = ``n_outputs``, d the width).

    Fitted to one-thread passes of kernel OGD and the Perceptron with a full support set of
    4,000 (ns per support vector and example, on the 2-core machine under load): ijcnn1 22.9,
    casp 19, w8a 39.7, poker (10 classes) 24, letter.scale (26 classes) 33; the kernel value is
    ~nnz + 12 (the exponential, the norms), a score C more, and the dense store of a wide sparse
    set (w8a, d = 300) d/32 more.
    """
    return row_cost(X) + 12.0 + float(n_outputs) + store_width(X) / 32.0


def store_width(X):
    """Doubles per support vector of a dense-layout store for data like X: the width d, or for
    wide sparse data (d > :data:`onlinekern._core.support.WIDE_D`, stored over the columns
    present) the number of distinct columns of the sample X.

    Parameters
    ----------
    X : array or sparse matrix (the first rows of the stream)

    Returns
    -------
    int
    """
    d = X.shape[1]
    if d > WIDE_D and hasattr(X, "indices"):
        return int(np.unique(np.asarray(X.indices)).size)
    return d


def stream_bound(n_stream, unit_cost, low, high, unknown, work=None):
    """The size bound of a model whose every stored element costs ``unit_cost`` per example:
    the largest m with ``n_stream * m * unit_cost <= work``, within [low, high].

    A model that would grow past it on the whole stream (one support vector, or one block of
    random features, per update) keeps the pass within ``work``; a short stream gets ``high``,
    i.e. in practice no bound.

    Parameters
    ----------
    n_stream : int or None
        Length T of the stream when known (fit, run_online, the CLI); None (partial_fit): the
        bound is ``unknown``.
    unit_cost : float
        Work of one stored element (support vector, block) for one example.
    low, high, unknown : int
    work : float, optional
        Default: :data:`PASS_WORK`.

    Returns
    -------
    int
    """
    if n_stream is None:
        return int(unknown)
    work = PASS_WORK if work is None else work
    m = int(work // (max(1, int(n_stream)) * max(float(unit_cost), 1.0)))
    return int(min(max(m, low), high))


#: Bounds of :func:`stream_budget`: at least this many support vectors whatever the stream's length.
STREAM_BUDGET_MIN = 2000
#: ... and at most this many (the memory of the store, d doubles twice per SV).
STREAM_BUDGET_MAX = 1 << 16


def stream_budget(X, n_outputs, n_stream):
    """The product default of ``budget`` of the learners whose support set grows with the stream
    (Perceptron, kernel OGD): :func:`stream_bound` at the cost of one support
    vector (:func:`sv_cost`), within [:data:`STREAM_BUDGET_MIN`,
    :data:`STREAM_BUDGET_MAX`]; :data:`AUTO_BUDGET` x 4 when the stream's
    length is unknown (``partial_fit``).

    Once the support set is full a pass costs ~T B c (T examples, c the cost of one SV), so
    B = PASS_WORK / (T c) keeps the pass within :data:`PASS_WORK`; a short
    stream (the 5,000-row benchmark) gets a budget its model never reaches.

    Parameters
    ----------
    X : array or sparse matrix, the first rows.
    n_outputs : int
    n_stream : int or None, the stream's length T.

    Returns
    -------
    int
    """
    return stream_bound(n_stream, sv_cost(X, n_outputs), STREAM_BUDGET_MIN, STREAM_BUDGET_MAX, 4 * AUTO_BUDGET)
