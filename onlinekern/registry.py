"""Learner names: ``family`` or ``family-loss`` (e.g. ``fogd-hinge``, ``ogd-logit``, ``perceptron``).

Each learner class declares its own family name, losses and tasks; this module only turns names
into classes and parameters, so adding a learner never touches a central switch.
"""
import difflib

from onlinekern._core.losses import LOSSES, MULTICLASS_LOSSES, canonical_loss

# CLI suffix -> canonical loss name (the suffixes of ALGORITHMS.md and the issue tracker)
LOSS_SUFFIXES = {
    "hinge": "hinge",
    "logit": "logistic",
    "sqhinge": "squared-hinge",
    "l2": "squared",
    "l1": "absolute",
    "eps": "epsilon-insensitive",
    "huber": "huber",
    "quantile": "quantile",
    "softmax": "softmax",
}
SUFFIX_OF = {v: k for k, v in LOSS_SUFFIXES.items()}

_FAMILIES = {}


def register(cls):
    """Class decorator / function: make ``cls`` available under its ``family`` name."""
    if not cls.family:
        raise ValueError(f"{cls.__name__} has no family name")
    _FAMILIES[cls.family] = cls
    return cls


def _loss_tasks(loss):
    # softmax on two classes is the logistic loss on the binary score (losses.binary_form)
    if loss == "softmax":
        return ("binary", "multiclass")
    if LOSSES[loss][1] == "regression":
        return ("regression",)
    # multiclass only where the loss has a multiclass form (squared hinge has none)
    return ("binary", "multiclass") if loss in MULTICLASS_LOSSES else ("binary",)


def available_learners():
    """Every learner name with its class, loss, tasks, summary and paper.

    Returns
    -------
    dict: name -> {"class", "family", "loss", "tasks", "summary", "paper"}
    """
    out = {}
    for family, cls in sorted(_FAMILIES.items()):
        base = {"class": cls, "family": family, "summary": cls.summary, "paper": cls.paper}
        if cls.losses is None:
            out[family] = dict(base, loss=None, tasks=tuple(cls.tasks))
            continue
        default = cls().loss
        out[family] = dict(base, loss=default, tasks=tuple(t for t in _loss_tasks(canonical_loss(default)) if t in cls.tasks))
        for loss in cls.losses:
            tasks = tuple(t for t in _loss_tasks(loss) if t in cls.tasks)
            if tasks:
                out[f"{family}-{SUFFIX_OF[loss]}"] = dict(base, loss=loss, tasks=tasks)
    return out


def resolve(name):
    """(class, fixed parameters) for a learner name; ValueError with a suggestion if unknown."""
    key = str(name).strip().lower().replace("++", "pp")   # projectron++ is projectronpp
    table = available_learners()
    if key in table:
        info = table[key]
        fixed = {} if info["loss"] is None or key == info["family"] else {"loss": info["loss"]}
        return info["class"], fixed
    # family-<any loss alias>, e.g. fogd-logistic or ogd-epsilon-insensitive
    for family, cls in _FAMILIES.items():
        if key.startswith(family + "-") and cls.losses is not None:
            try:
                loss = canonical_loss(key[len(family) + 1:])
            except ValueError:
                continue
            if loss in cls.losses:
                return cls, {"loss": loss}
    close = difflib.get_close_matches(key, list(table), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"unknown algorithm {name!r}{hint} (see --list)")


def make_learner(name, **params):
    """Build a learner from its CLI name, e.g. ``make_learner("fogd-hinge", n_components=1000)``."""
    cls, fixed = resolve(name)
    if params.get("loss") is not None:
        canonical_loss(params["loss"])      # unknown loss: ValueError with "did you mean" now
    clash = set(fixed) & set(params)
    if clash and any(canonical_loss(params[k]) != fixed[k] for k in clash):
        raise ValueError(f"{name!r} fixes loss={fixed['loss']!r}; do not pass a different loss")
    return cls(**{**params, **fixed})
