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
