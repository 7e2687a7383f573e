# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Loss functions of ALGORITHMS.md §2, shared by every learner.

Sign convention: ``dloss(p, y) = d loss / d p`` (the derivative with respect to the prediction,
scikit-learn's ``dloss``).  Binary labels are -1/+1; regression residual r = p - y.  At a kink the
subgradient on the flat side is taken (hinge: 0 at y*p = 1), as in Nguyen et al. 2017 and
Dai et al. 2014.  ``py_loss``/``py_dloss`` (and ``py_grad`` for multiclass) expose the compiled
functions to Python for tests.
"""
from libc.math cimport exp, log1p, fabs, fmax, INFINITY
import numpy as np

cdef class Loss:
    """Base class: a loss of one prediction p against one target y."""

    cdef double loss(self, double p, double y) noexcept nogil:
        return 0.0

    cdef double dloss(self, double p, double y) noexcept nogil:
        return 0.0

    def py_loss(self, double p, double y):
        """loss(p, y) from Python."""
        return self.loss(p, y)

    def py_dloss(self, double p, double y):
        """d loss / d p from Python."""
        return self.dloss(p, y)

    def get_params(self):
        return {}

    def __reduce__(self):
        return (type(self), tuple(self.get_params().values()))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


cdef class Hinge(Loss):
    """max(0, 1 - y p)."""

    def __cinit__(self):
        self.name = "hinge"
        self.classification = True

    cdef double loss(self, double p, double y) noexcept nogil:
        return fmax(0.0, 1.0 - y * p)

    cdef double dloss(self, double p, double y) noexcept nogil:
        return -y if y * p < 1.0 else 0.0


cdef class Logistic(Loss):
    """log(1 + exp(-y p)), evaluated stably."""

    def __cinit__(self):
        self.name = "logistic"
        self.classification = True

    cdef double loss(self, double p, double y) noexcept nogil:
        cdef double z = y * p
        return log1p(exp(-fabs(z))) + fmax(0.0, -z)

    cdef double dloss(self, double p, double y) noexcept nogil:
        cdef double z = y * p, e
        # -y / (1 + e^z), written so neither branch overflows
        if z > 0:
            e = exp(-z)
            return -y * e / (1.0 + e)
        return -y / (1.0 + exp(z))


cdef class SquaredHinge(Loss):
    """0.5 max(0, 1 - y p)^2."""

    def __cinit__(self):
        self.name = "squared-hinge"
        self.classification = True

    cdef double loss(self, double p, double y) noexcept nogil:
        cdef double m = fmax(0.0, 1.0 - y * p)
        return 0.5 * m * m

    cdef double dloss(self, double p, double y) noexcept nogil:
        # d/dp 0.5 (1 - y p)^2 = -y (1 - y p) = p - y for y in {-1, +1}
        return p - y if y * p < 1.0 else 0.0


cdef class Squared(Loss):
    """0.5 (p - y)^2."""

    def __cinit__(self):
        self.name = "squared"
        self.classification = False

    cdef double loss(self, double p, double y) noexcept nogil:
        return 0.5 * (p - y) * (p - y)

    cdef double dloss(self, double p, double y) noexcept nogil:
        return p - y


cdef class Absolute(Loss):
    """|p - y|."""

    def __cinit__(self):
        self.name = "absolute"
        self.classification = False

    cdef double loss(self, double p, double y) noexcept nogil:
        return fabs(p - y)

    cdef double dloss(self, double p, double y) noexcept nogil:
        cdef double r = p - y
        return 1.0 if r > 0 else (-1.0 if r < 0 else 0.0)


cdef class EpsilonInsensitive(Loss):
    """max(0, |p - y| - epsilon)."""

    def __cinit__(self, double epsilon=0.1):
        if not epsilon >= 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
        self.name = "epsilon-insensitive"
        self.classification = False
        self.epsilon = epsilon

    def get_params(self):
        return {"epsilon": self.epsilon}

    cdef double loss(self, double p, double y) noexcept nogil:
        return fmax(0.0, fabs(p - y) - self.epsilon)

    cdef double dloss(self, double p, double y) noexcept nogil:
        cdef double r = p - y
        if r > self.epsilon:
            return 1.0
        if r < -self.epsilon:
            return -1.0
        return 0.0


cdef class Huber(Loss):
    """0.5 r^2 if |r| <= delta else delta (|r| - delta / 2)."""

    def __cinit__(self, double delta=1.0):
        if not delta > 0:
            raise ValueError(f"huber_delta must be > 0, got {delta!r}")
        self.name = "huber"
        self.classification = False
        self.delta = delta

    def get_params(self):
        return {"delta": self.delta}

    cdef double loss(self, double p, double y) noexcept nogil:
        cdef double r = fabs(p - y)
        if r <= self.delta:
            return 0.5 * r * r
        return self.delta * (r - 0.5 * self.delta)

    cdef double dloss(self, double p, double y) noexcept nogil:
        cdef double r = p - y
        if r > self.delta:
            return self.delta
        if r < -self.delta:
            return -self.delta
        return r


cdef class Quantile(Loss):
    """max(tau (y - p), (1 - tau)(p - y)) (pinball loss)."""

    def __cinit__(self, double tau=0.5):
        if not 0.0 < tau < 1.0:
            raise ValueError(f"quantile must be in (0, 1), got {tau!r}")
        self.name = "quantile"
        self.classification = False
        self.tau = tau

    def get_params(self):
        return {"tau": self.tau}

    cdef double loss(self, double p, double y) noexcept nogil:
        return fmax(self.tau * (y - p), (1.0 - self.tau) * (p - y))

    cdef double dloss(self, double p, double y) noexcept nogil:
        return 1.0 - self.tau if p >= y else -self.tau


cdef int runner_up(const double* f, int y, int C) noexcept nogil:
    """argmax_{c != y} f_c, lowest index on ties (ALGORITHMS.md §1.1)."""
    cdef int c, r = -1
    cdef double best = -INFINITY
    for c in range(C):
        if c != y and (r < 0 or f[c] > best):
            best = f[c]
            r = c
    return r


cdef class MulticlassLoss:
    """Base class: a loss of a score vector f in R^C against a class index y."""

    cdef double grad(self, const double* f, int y, int C, double* g, int* runner) noexcept nogil:
        return 0.0

    def py_loss(self, f, int y):
        """Loss value at scores f for class y."""
        return self.py_grad(f, y)[0]

    def py_grad(self, f, int y):
        """(loss, gradient wrt f, runner-up) from Python."""
        cdef double[::1] fv = np.ascontiguousarray(f, dtype=np.float64)
        cdef int C = fv.shape[0]
        if not 0 <= y < C:
            raise ValueError(f"class index {y} out of range for {C} classes")
        g = np.zeros(C)
        cdef double[::1] gv = g
        cdef int r = -1
        cdef double val = self.grad(&fv[0], y, C, &gv[0], &r)
        return val, g, r

    def __reduce__(self):
        return (type(self), ())

    def __repr__(self):
        return f"{type(self).__name__}()"


cdef class MulticlassHinge(MulticlassLoss):
    """Crammer & Singer: max(0, 1 - m), m = f_y - f_r; g = -e_y + e_r if m < 1."""

    def __cinit__(self):
        self.name = "hinge"

    cdef double grad(self, const double* f, int y, int C, double* g, int* runner) noexcept nogil:
        cdef int c, r = runner_up(f, y, C)
        cdef double m = f[y] - f[r]
        for c in range(C):
            g[c] = 0.0
        runner[0] = r
        if m < 1.0:
            g[y] = -1.0
            g[r] = 1.0
            return 1.0 - m
        return 0.0


cdef class MulticlassLogistic(MulticlassLoss):
    """Margin form log(1 + exp(-m)); g = -sig(-m)(e_y - e_r)."""

    def __cinit__(self):
        self.name = "logistic"

    cdef double grad(self, const double* f, int y, int C, double* g, int* runner) noexcept nogil:
        cdef int c, r = runner_up(f, y, C)
        cdef double m = f[y] - f[r], s
        for c in range(C):
            g[c] = 0.0
        runner[0] = r
        # sig(-m) = 1 / (1 + e^m), computed without overflow
        if m > 0:
            s = exp(-m) / (1.0 + exp(-m))
        else:
            s = 1.0 / (1.0 + exp(m))
        g[y] = -s
        g[r] = s
        return log1p(exp(-fabs(m))) + fmax(0.0, -m)


cdef class Softmax(MulticlassLoss):
    """-f_y + log sum_c exp(f_c); g_c = p_c - [c = y]."""

    def __cinit__(self):
        self.name = "softmax"

    cdef double grad(self, const double* f, int y, int C, double* g, int* runner) noexcept nogil:
        cdef int c
        cdef double mx = f[0], z = 0.0
        for c in range(1, C):
            if f[c] > mx:
                mx = f[c]
        for c in range(C):
            g[c] = exp(f[c] - mx)
            z += g[c]
        for c in range(C):
            g[c] /= z
        g[y] -= 1.0
        runner[0] = -1
        return -(f[y] - mx) + log1p(z - 1.0)


# ---- registry: CLI names, aliases and the tasks each loss serves ----------------------------

LOSSES = {
    # canonical name: (class, task, constructor parameter name or None)
    "hinge": (Hinge, "classification", None),
    "logistic": (Logistic, "classification", None),
    "squared-hinge": (SquaredHinge, "classification", None),
    "squared": (Squared, "regression", None),
    "absolute": (Absolute, "regression", None),
    "epsilon-insensitive": (EpsilonInsensitive, "regression", "epsilon"),
    "huber": (Huber, "regression", "huber_delta"),
    "quantile": (Quantile, "regression", "quantile"),
}

MULTICLASS_LOSSES = {
    "hinge": MulticlassHinge,
    "logistic": MulticlassLogistic,
    "softmax": Softmax,
}

ALIASES = {
    "logit": "logistic", "log": "logistic", "log_loss": "logistic",
    "sqhinge": "squared-hinge", "squared_hinge": "squared-hinge",
    "l2": "squared", "squared_error": "squared", "squared_loss": "squared",
    "l1": "absolute",
    "eps": "epsilon-insensitive", "epsilon_insensitive": "epsilon-insensitive", "epsilon": "epsilon-insensitive",
}


def canonical_loss(name):
    """Canonical loss name for ``name`` or one of its aliases (ValueError if unknown)."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in LOSSES and key not in MULTICLASS_LOSSES:
        import difflib
        known = sorted(set(LOSSES) | set(MULTICLASS_LOSSES) | set(ALIASES))
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown loss {name!r}{hint} (known: {', '.join(sorted(LOSSES) + ['softmax'])})")
    return key


def loss_task(name):
    """'classification' or 'regression' for a loss name."""
    key = canonical_loss(name)
    return "classification" if key not in LOSSES else LOSSES[key][1]


def binary_form(name):
    """The canonical name of the loss that ``name`` means on a binary (+-1) task.

    The softmax loss over two classes is the logistic loss on the binary score: with scores
    (s_0, s_1), -s_y + log(e^{s_0} + e^{s_1}) = log(1 + e^{-y f}) for f = s_1 - s_0 and y = +-1,
    so a binary learner keeps the one free score f and takes the logistic loss ("softmax" ->
    "logistic").  Every other name is returned canonical and unchanged.
    """
    key = canonical_loss(name)
    return "logistic" if key == "softmax" else key


def get_loss(name, epsilon=0.1, huber_delta=1.0, quantile=0.5):
    """Build the binary/regression loss object for ``name`` (softmax: the logistic loss, see
    :func:`binary_form`)."""
    key = binary_form(name)
    cls, _, param = LOSSES[key]
    if param is None:
        return cls()
    return cls({"epsilon": epsilon, "huber_delta": huber_delta, "quantile": quantile}[param])


def get_multiclass_loss(name):
    """Build the multiclass loss object for ``name`` (hinge = Crammer & Singer)."""
    key = canonical_loss(name)
    if key not in MULTICLASS_LOSSES:
        raise ValueError(f"loss {name!r} has no multiclass form (use hinge, logistic or softmax)")
    return MULTICLASS_LOSSES[key]()


cdef class TaskLoss:
    """The loss of a learner for its task: binary/regression ``Loss`` or ``MulticlassLoss``.

    ``grad(f, y, C, g)`` writes dloss/df into g[0:C] and returns the loss value; y is +-1, a
    class index, or a real target.  ``spec`` (a plain dict) rebuilds it: pickling and model files.
    On a binary task ``name="softmax"`` builds the logistic loss on the one score f
    (:func:`binary_form`) and ``spec["name"]`` is then ``"logistic"``.
    """

    def __init__(self, name, bint multiclass=False, epsilon=0.1, huber_delta=1.0, quantile=0.5):
        # on a binary task the softmax loss is the logistic loss (binary_form); spec names the loss in force
        self.spec = {"name": canonical_loss(name) if multiclass else binary_form(name),
                     "multiclass": bool(multiclass), "epsilon": float(epsilon),
                     "huber_delta": float(huber_delta), "quantile": float(quantile)}
        self.multiclass = multiclass
        if multiclass:
            self.mloss = get_multiclass_loss(name)
        else:
            self.loss = get_loss(name, epsilon, huber_delta, quantile)

    cdef double grad(self, const double* f, double y, int C, double* g) noexcept nogil:
        cdef int r
        if self.multiclass:
            return self.mloss.grad(f, <int>y, C, g, &r)
        g[0] = self.loss.dloss(f[0], y)
        return self.loss.loss(f[0], y)

    @property
    def name(self):
        return self.spec["name"]

    def __reduce__(self):
        s = self.spec
        return (TaskLoss, (s["name"], s["multiclass"], s["epsilon"], s["huber_delta"], s["quantile"]))

    def __repr__(self):
        return f"TaskLoss({self.spec})"
