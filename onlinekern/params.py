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

__all__ = ["AUTO", "AUTO_BUDGET", "FEATURE_GROWTH", "FEATURE_HORIZON", "FEATURE_WORK", "LAM_SHRINK",
           "PARAM_CHECKS", "PASS_WORK", "PRESETS", "check_nonnegative", "check_positive", "feature_cost",
           "horizon_shrink", "stream_components", "stream_lam", "check_positive_int", "is_auto", "row_cost",
           "store_width", "stream_bound", "stream_budget", "sv_cost"]

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


#: ``n_components="auto"``: streams of at most this many examples (the 5,000-row benchmark's) get
#: the learner's base D, the papers' value; longer ones more (:func:`stream_components`).
FEATURE_HORIZON = 5000
#: ... at most this many times the base D (FOGD: 4,000, the papers' largest D for ijcnn1 and poker).
FEATURE_GROWTH = 10
#: The work a pass of a random-feature learner may spend on a grown D, in :data:`PASS_WORK` units:
#: half of it, ~3 s of one thread (FOGD-hinge over min-max scaled ijcnn1 + ijcnn1.t at D = 2,128:
#: 9.6e9 units, 2.7 s).  They are the fast family; D stops growing where a pass would stop being
#: a matter of seconds (the 500,000-row text streams of BENCHMARKS.md, ~117 nonzeros per row, keep
#: the base D).
FEATURE_WORK = PASS_WORK / 2


def feature_cost(X, n_outputs, reads=1):
    """Work of one random frequency (a cos/sin pair of features) for one example of X, in
    :data:`PASS_WORK` units: reads x nnz + 6 + 4 C (nnz: :func:`row_cost`, C = ``n_outputs``).

    The projection omega . x is nnz multiply-adds (``reads``: how many times a step goes over the
    nonzeros with the frequencies, 2 for RRF, whose width gradient reads them again), the vector
    cos/sin ~6, the score and the gradient step 2 C each.

    Parameters
    ----------
    X : array or sparse matrix, the first rows.
    n_outputs : int
    reads : int, optional

    Returns
    -------
    float
    """
    return float(reads) * row_cost(X) + 6.0 + 4.0 * float(n_outputs)


def stream_components(X, n_outputs, n_stream, base, reads=1):
    """The product default of ``n_components`` (D) of the first-order random-feature learners (FOGD,
    RRF, DualSGD): ``base`` (the papers' D) times sqrt(T / :data:`FEATURE_HORIZON`) for a stream of
    T examples, rounded to a multiple of 16, within [base, :data:`FEATURE_GROWTH` x base] and
    within :data:`FEATURE_WORK` (:func:`stream_bound` at :func:`feature_cost`), never below ``base``.

    A fixed D caps what a long stream can learn: the random-feature approximation's error, not the
    data, becomes the limit (FOGD-hinge over ijcnn1 + ijcnn1.t, 141,691 examples: 3.71 % at D =
    400, 3.13 % at 1,000, 3.07 % at 2,000), and the number of random features a learner needs for
    the kernel method's rate grows as the square root of the number of examples (Rudi & Rosasco,
    NeurIPS 2017).  A stream of unknown length (``partial_fit``) or of at most
    :data:`FEATURE_HORIZON` examples keeps ``base``; so does one whose examples are so costly
    (many nonzeros, many classes) that a larger D would take the pass past :data:`FEATURE_WORK` --
    the wide text streams of BENCHMARKS.md, whose D therefore does not depend on the length.
    The rule reads the number of nonzeros per row, never the width d, so a data set and its
    columns scattered into a wider space get the same D.

    Parameters
    ----------
    X : array or sparse matrix, the first rows.
    n_outputs : int
    n_stream : int or None, the stream's length T.
    base : int, the learner's D at short or unknown horizons.
    reads : int, passes of a step over the nonzeros (:func:`feature_cost`).

    Returns
    -------
    int
    """
    base = int(base)
    if n_stream is None or int(n_stream) <= FEATURE_HORIZON:
        return base
    top = FEATURE_GROWTH * base
    grown = 16 * int(base * (int(n_stream) / FEATURE_HORIZON) ** 0.5 / 16 + 0.5)
    afford = stream_bound(n_stream, feature_cost(X, n_outputs, reads), base, top, base, FEATURE_WORK)
    return int(max(base, min(grown, top, afford)))


#: :func:`stream_lam` lowers a regression lam at most this many times (0.03 -> 0.01, reached at
#: 45,000 examples): 0.01 is the smallest of {1e-3, 3e-3, 0.01, 0.03} at which DualSGD-l2 learns
#: on each of the whole casp, cadata and abalone streams (3e-3: abalone RMSE 19.8 against 2.7).
LAM_SHRINK = 3.0


def stream_lam(base, n_stream):
    """The product ``lam`` of the Pegasos-step learners in regression (BSGD, DualSGD): ``base`` (the
    value measured on streams of :data:`FEATURE_HORIZON` examples) times sqrt(:data:`FEATURE_HORIZON`
    / T) for a stream of T > :data:`FEATURE_HORIZON` examples, at least
    ``base`` / :data:`LAM_SHRINK`; ``base`` for a shorter stream or one of unknown length.

    Every coefficient is -g/(lam t) and the older ones shrink by (1 - 1/t), so the model after T
    steps is -1/(lam T) times the sum of the gradients' kernels: lam is the ridge of kernel ridge
    regression, whose best value falls as the stream grows.  A fixed lam measured on 5,000 rows
    regularises a whole stream too much once the budget binds (casp, 45,730 rows, RMSE over the
    running mean's: DualSGD-eps 0.909 at 0.03, 0.869 at 0.0099; BSGD-merge 0.909 -> 0.872); the
    square root, not 1/T, because the squared loss's steps grow with 1/lam (DualSGD-l2 over casp:
    RMSE 5.34 at 0.01, 5.99 at 0.003, 4e5 at 0.001), and not below ``base`` / :data:`LAM_SHRINK`:
    the first steps, 1/lam each, are what a small lam makes unstable, and they do not get fewer on
    a longer stream.

    Parameters
    ----------
    base : float, lam at short or unknown horizons.
    n_stream : int or None, the stream's length T.

    Returns
    -------
    float
    """
    return horizon_shrink(base, n_stream, 0.5, LAM_SHRINK)


def horizon_shrink(base, n_stream, power, most):
    """``base`` times (:data:`FEATURE_HORIZON` / T) ** ``power`` for a stream of T >
    :data:`FEATURE_HORIZON` examples, at least ``base`` / ``most``; ``base`` for a shorter stream or
    one of unknown length (None).  The form of the step and regularisation rules that keep the value
    measured on the 5,000-row benchmark and shrink it for a long stream known in advance
    (:func:`stream_lam`; DSG's ``t0``).

    Parameters
    ----------
    base : float
    n_stream : int or None
    power : float > 0
    most : float >= 1, the largest factor by which ``base`` is lowered.

    Returns
    -------
    float
    """
    if n_stream is None or int(n_stream) <= FEATURE_HORIZON:
        return float(base)
    return float(base) * max((FEATURE_HORIZON / int(n_stream)) ** power, 1.0 / most)
