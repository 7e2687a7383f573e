"""The loss functions of ALGORITHMS.md §2 (compiled; ``py_loss``/``py_dloss`` for Python use)."""
from onlinekern._core.losses import (  # noqa: F401
    ALIASES, LOSSES, MULTICLASS_LOSSES, Absolute, EpsilonInsensitive, Hinge, Huber, Logistic,
    MulticlassHinge, MulticlassLogistic, Quantile, Softmax, Squared, SquaredHinge, TaskLoss,
    canonical_loss, get_loss, get_multiclass_loss, loss_task,
)
