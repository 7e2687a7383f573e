"""The loss functions of ALGORITHMS.md §2 (compiled; ``py_loss``/``py_dloss`` for Python use)."""
from onlinekern._core.losses import (  # noqa: F401
    ALIASES, LOSSES, MULTICLASS_LOSSES, Absolute, EpsilonInsensitive, Hinge, Huber, Logistic,
    MulticlassHinge, MulticlassLogistic, Quantile, Softmax, Squared, SquaredHinge, TaskLoss,
    binary_form, canonical_loss, get_loss, get_multiclass_loss, loss_task,
)

#: Upper bounds L on the second derivative, in the margin, of the smooth losses: logistic 1/4, the
#: largest eigenvalue of the softmax Hessian 1/2, squared hinge 2 (the others: none, see
#: :func:`smoothness`).  The product defaults take steps of order 1/L for them.
SMOOTHNESS = {"logistic": 0.25, "softmax": 0.5, "squared-hinge": 2.0}


def smoothness(loss, task):
    """L = sup l'' of ``loss`` on ``task`` (:data:`SMOOTHNESS`), 1.0 for the other losses.

    Parameters
    ----------
    loss : str
        Any loss name or alias (``logit``, ``sqhinge``, ...).
    task : {'binary', 'multiclass', 'regression'}
        On a multiclass task the logistic loss is the softmax (L = 1/2); on a binary task the
        softmax is the logistic loss on the one score f = s_1 - s_0 (L = 1/4,
        :func:`~onlinekern._core.losses.binary_form`).

    Returns
    -------
    float
    """
    name = canonical_loss(loss)
    if task == "multiclass" and name == "logistic":
        name = "softmax"
    elif task == "binary":
        name = binary_form(name)
    return SMOOTHNESS.get(name, 1.0)


def smooth_step(eta, loss, task, n_classes=2, quantile=None):
    """The product step of an OGD-style learner whose papers' step ``eta`` was set for the hinge loss
    (kernel OGD, BOGD, BOGD++, NOGD, FOGD, RRF).

    eta / L for a loss whose second derivative is at most L < 1 (logistic: 4 eta), else eta.  The
    hinge step moves a logistic model less: its gradient is 1/2 at the decision boundary and fades
    with the margin, and 1/L is the classical stable step on an L-smooth loss with features of
    norm <= 1.  Measured (5,000 rows of each shared set, BENCHMARKS.md "Defaults"): FOGD-logit on
    ijcnn1 9.96 -> 8.86 %, mushrooms 1.60 -> 0.66 %; NOGD-logit a9a 18.3 -> 16.5 %, cod-rna
    12.5 -> 9.2 %; BOGD-logit a9a 18.1 -> 17.7 %.

    Softmax over K classes: eta * max(2, K/2).  The Hessian of the softmax loss in the scores,
    diag(p) - p p^T, has largest eigenvalue at most 1/2 (the 2) but trace sum_c p_c (1 - p_c) <=
    1 - 1/K over its K - 1 directions, so its mean curvature is at most 1/K; the step takes L = 2/K,
    twice that mean, when it is below the worst-direction bound (K > 4).  A measured rule, not a
    theorem: 5,000 rows, scaled features, eta * 2 -> eta * K/2: FOGD pendigits 4.10 -> 3.02 %,
    letter 29.0 -> 23.2 %; NOGD 4.20 -> 3.00, 34.2 -> 27.0; BOGD 3.62 -> 3.08, 26.2 -> 25.9; kernel
    OGD 2.76 -> 2.30, 18.1 -> 17.6; on poker (10 classes, where no learner beats the majority on
    5,000 rows) 0.5-1.5 points worse.

    Quantile (pinball) loss at level tau, when ``quantile`` is given: eta / max(tau, 1 - tau), so
    that its steeper side moves the model as far as the absolute loss's unit subgradient (with the
    absolute loss's step the pinball loss at the median learns at half its speed).  Given by the
    support-vector learners (kernel OGD, NOGD, BOGD, BOGD++), where it was measured neutral to
    better: scikit-learn's check_regressors_train set (200 rows, one pass) R^2 0.47 / 0.47 / 0.44
    -> 0.65 / 0.65 / 0.64 (the absolute loss: 0.65); the first 5,000 rows of casp, cadata and
    abalone (RMSE, raw features) kernel OGD 5.20 / 72,689 / 2.436 -> 5.16 / 72,004 / 2.438, NOGD
    5.26 / 72,587 / 2.438 -> 5.24 / 72,310 / 2.435, BOGD 5.49 / 83,178 / 2.618 -> 5.50 / 82,280 /
    2.626.  Not by FOGD (casp 5.24 -> 5.51, cadata 71,781 -> 76,450, abalone 2.43 -> 2.57 with the
    doubled step), nor by the DSG family, whose step rule is its own (doubling theta: casp 5.54 ->
    5.71, cadata 78,227 -> 80,570 for DSG; CDSG past 0.9 x the running mean on casp).

    Parameters
    ----------
    eta : float
    loss : str
    task : {'binary', 'multiclass', 'regression'}
    n_classes : int
        Number of classes K (multiclass only).
    quantile : float in (0, 1) or None
        Level tau of the quantile loss (other losses ignore it); None: no quantile rule.

    Returns
    -------
    float
    """
    step = eta / min(1.0, smoothness(loss, task))
    if quantile is not None and canonical_loss(loss) == "quantile":
        step = eta / max(quantile, 1.0 - quantile)
    if task == "multiclass" and canonical_loss(loss) in ("logistic", "softmax"):
        step = max(step, eta * n_classes / 2.0)
    return step
