"""The loss functions of ALGORITHMS.md §2 (compiled; ``py_loss``/``py_dloss`` for Python use)."""
from onlinekern._core.losses import (  # noqa: F401
    ALIASES, LOSSES, MULTICLASS_LOSSES, Absolute, EpsilonInsensitive, Hinge, Huber, Logistic,
    MulticlassHinge, MulticlassLogistic, Quantile, Softmax, Squared, SquaredHinge, TaskLoss,
    canonical_loss, get_loss, get_multiclass_loss, loss_task,
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
        On a multiclass task the logistic loss is the softmax (L = 1/2).

    Returns
    -------
    float
    """
    name = canonical_loss(loss)
    if task == "multiclass" and name == "logistic":
        name = "softmax"
    return SMOOTHNESS.get(name, 1.0)


def smooth_step(eta, loss, task):
    """The product step of an OGD-style learner whose papers' step ``eta`` was set for the hinge loss
    (kernel OGD, BOGD, BOGD++, NOGD, FOGD, RRF).

    eta / L for a loss whose second derivative is at most L < 1 (logistic: 4 eta; softmax, the
    multiclass logistic loss: 2 eta), else eta.  The hinge step moves a logistic model less: its
    gradient is 1/2 at the decision boundary and fades with the margin, and 1/L is the classical
    stable step on an L-smooth loss with features of norm <= 1.  Measured (5,000 rows of each
    shared set, BENCHMARKS.md "Defaults"): FOGD-logit on ijcnn1 9.96 -> 8.86 %, mushrooms
    1.60 -> 0.66 %, pendigits 4.94 -> 3.36 %; NOGD-logit a9a 18.3 -> 16.5 %, cod-rna 12.5 -> 9.2 %;
    BOGD-logit a9a 18.1 -> 17.7 %.

    Parameters
    ----------
    eta : float
    loss : str
    task : {'binary', 'multiclass', 'regression'}

    Returns
    -------
    float
    """
    return eta / min(1.0, smoothness(loss, task))
