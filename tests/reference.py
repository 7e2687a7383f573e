"""Pure-NumPy test oracles written from ../shared/ALGORITHMS.md (not from the compiled code).

Every oracle walks the stream in the given order and returns the *pre-update* score of each
example (§1.2) plus the final model.  Targets are already encoded: binary y in {-1, +1},
multiclass y in {0..C-1} (int), regression y real.  ``task`` is "binary", "multiclass" or
"regression".  Nothing here is optimised; it reads like the pseudo-code of §2 and §3.
"""
import numpy as np

REGRESSION_LOSSES = ("squared", "absolute", "epsilon-insensitive", "huber", "quantile")


# --- §1.5 seeds, §1.3 kernel and random Fourier features ------------------------------------------

def stream(seed, s, *keys):
    """Random stream s (with keys) of §1.5."""
    ss = np.random.SeedSequence(entropy=seed, spawn_key=(s, *keys))
    return np.random.Generator(np.random.PCG64(ss))


def permutation(seed, n, run=0):
    """Data order of run r (stream PERMUTATION)."""
    return stream(seed, 0, run).permutation(n)


def fourier_E(seed, d, D):
    """E in R^{d x D}: one standard_normal((d, D)) call on stream FEATURES."""
    return stream(seed, 1).standard_normal((d, D))


def rbf(x, X, g):
    """[k(x, X_i)]_i with k(x, x') = exp(-g ||x - x'||^2)."""
    X = np.atleast_2d(X)
    return np.exp(-g * np.sum((X - x) ** 2, axis=1))


def fourier_z(X, E, g):
    """Rows z(x) = D^{-1/2} [cos(Omega^T x); sin(Omega^T x)], Omega = sqrt(2g) E."""
    A = np.atleast_2d(X) @ (np.sqrt(2.0 * g) * E)
    return np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(E.shape[1])


def fourier_a32(x, E, g):
    """Omega^T x as FOGD's precision="float32" computes it: E rounded to float32, v_k =
    float32(x_k sqrt(2g)), then a = 0; a = a + E32[k] * v_k over the nonzeros in order, every
    multiply and add rounded to float32 (NumPy float32 arithmetic: the same IEEE operations)."""
    E32 = np.asarray(E, dtype=np.float32)
    x = np.asarray(x, dtype=float).ravel()
    a = np.zeros(E.shape[1], dtype=np.float32)
    for k in np.flatnonzero(x):
        a = a + E32[k] * np.float32(x[k] * np.sqrt(2.0 * g))
    return a


def fourier_z32(X, E, g):
    """Rows z(x) of the float32 path: float32 Omega^T x, cos/sin in float64 of that argument (the
    kernel's float32 cos/sin is within 1.2e-7 of them)."""
    A = np.array([fourier_a32(x, E, g) for x in np.atleast_2d(X)], dtype=np.float64)
    return np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(E.shape[1])


# --- §2 losses: value and derivative with respect to the prediction u ----------------------------

def _sigmoid(z):
    """1/(1 + e^{-z}) without overflow."""
    if z >= 0:
        return 1.0 / (1.0 + np.exp(-z))
    e = np.exp(z)
    return e / (1.0 + e)


def loss(name, u, y, epsilon=0.1, huber_delta=1.0, quantile=0.5):
    r = u - y
    if name == "hinge":
        return max(0.0, 1.0 - y * u)
    if name == "logistic":
        z = y * u
        return np.log1p(np.exp(-abs(z))) + max(0.0, -z)
    if name == "squared-hinge":
        return 0.5 * max(0.0, 1.0 - y * u) ** 2
    if name == "squared":
        return 0.5 * r * r
    if name == "absolute":
        return abs(r)
    if name == "epsilon-insensitive":
        return max(0.0, abs(r) - epsilon)
    if name == "huber":
        return 0.5 * r * r if abs(r) <= huber_delta else huber_delta * (abs(r) - huber_delta / 2)
    if name == "quantile":
        return max(quantile * (y - u), (1.0 - quantile) * (u - y))
    raise ValueError(name)


def dloss(name, u, y, epsilon=0.1, huber_delta=1.0, quantile=0.5):
    r = u - y
    if name == "hinge":
        return -y if y * u < 1 else 0.0
    if name == "logistic":
        return -y * _sigmoid(-y * u)          # = -y / (1 + e^{yu})
    if name == "squared-hinge":
        return u - y if y * u < 1 else 0.0
    if name == "squared":
        return r
    if name == "absolute":
        return float(np.sign(r))
    if name == "epsilon-insensitive":
        return float(np.sign(r)) if abs(r) > epsilon else 0.0
    if name == "huber":
        return r if abs(r) <= huber_delta else huber_delta * float(np.sign(r))
    if name == "quantile":
        return 1.0 - quantile if u >= y else -quantile
    raise ValueError(name)


def runner_up(f, y):
    """argmax_{c != y} f_c, lowest index on ties."""
    best = None
    for c in range(len(f)):
        if c != y and (best is None or f[c] > f[best]):
            best = c
    return best


def mc_grad(name, f, y):
    """Multiclass loss, gradient g = grad_f loss, runner-up r (§2 multiclass table)."""
    f = np.asarray(f, dtype=float)
    C = len(f)
    r = runner_up(f, y)
    m = f[y] - f[r]
    g = np.zeros(C)
    if name == "hinge":
        value = max(0.0, 1.0 - m)
        if m < 1:
            g[y], g[r] = -1.0, 1.0
    elif name == "logistic":
        value = np.log1p(np.exp(-abs(m))) + max(0.0, -m)
        s = _sigmoid(-m)
        g[y], g[r] = -s, s
    elif name == "softmax":
        fmax = f.max()
        lse = fmax + np.log(np.sum(np.exp(f - fmax)))
        value = lse - f[y]
        g = np.exp(f - lse)
        g[y] -= 1.0
    else:
        raise ValueError(name)
    return value, g, r


def mistake(task, f, y):
    """§1.2: binary y f <= 0; multiclass f_y - f_r <= 0."""
    if task == "binary":
        return y * f <= 0
    if task == "multiclass":
        return f[y] - f[runner_up(f, y)] <= 0
    raise ValueError(task)


def grad(task, loss_name, f, y, epsilon=0.1, huber_delta=1.0, quantile=0.5):
    """l'(f, y): a float (binary/regression) or an R^C vector (multiclass)."""
    if task == "multiclass":
        return mc_grad(loss_name, f, y)[1]
    return dloss(loss_name, f, y, epsilon, huber_delta, quantile)


# --- §3.1 Kernel Perceptron ----------------------------------------------------------------------

def ref_perceptron(X, y, task, g, eta=0.1, epsilon=0.1, n_classes=None):
    """Returns (scores, SV, alpha); scores (T,) or (T, C), alpha (n_SV,) or (n_SV, C)."""
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else None
    SV, alpha, scores = [], [], []
    for t in range(T):
        x = X[t]
        if SV:
            f = rbf(x, np.array(SV), g) @ np.array(alpha)
        else:
            f = np.zeros(C) if C else 0.0
        scores.append(f)                                   # record before the update
        if task == "binary":
            if y[t] * f <= 0:
                SV.append(x); alpha.append(float(y[t]))
        elif task == "multiclass":
            r = runner_up(f, y[t])
            if f[y[t]] - f[r] <= 0:                        # C&S step a = 1
                a = np.zeros(C); a[y[t]] += 1.0; a[r] -= 1.0
                SV.append(x); alpha.append(a)
        else:                                              # epsilon-mistake
            if abs(y[t] - f) > epsilon:
                SV.append(x); alpha.append(eta * np.sign(y[t] - f))
    return _pack(scores, SV, alpha, d, C)


# --- §3.2 Kernel OGD / NORMA (explicit O(|S|) shrink; the learner must agree to 1e-12) ------------

def ref_kernel_ogd(X, y, task, g, eta=0.2, lam=0.0, loss_name="hinge", epsilon=0.1,
                   huber_delta=1.0, quantile=0.5, n_classes=None):
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else None
    SV, alpha, scores = [], [], []
    for t in range(T):
        x = X[t]
        if SV:
            f = rbf(x, np.array(SV), g) @ np.array(alpha)
        else:
            f = np.zeros(C) if C else 0.0
        scores.append(f)                                   # 1. record
        gr = grad(task, loss_name, f, y[t], epsilon, huber_delta, quantile)
        alpha = [(1.0 - eta * lam) * a for a in alpha]     # 2. explicit shrink
        if np.any(np.asarray(gr) != 0):                    # 3. append -eta g
            SV.append(x); alpha.append(-eta * gr)
    return _pack(scores, SV, alpha, d, C)


def _pack(scores, SV, alpha, d, C):
    scores = np.array(scores, dtype=float)
    SV = np.array(SV, dtype=float).reshape(-1, d)
    alpha = np.array(alpha, dtype=float).reshape((-1, C) if C else (-1,))
    return scores, SV, alpha


# --- §3.9 FOGD -----------------------------------------------------------------------------------

def ref_fogd(X, y, task, g, D, eta=0.4, lam=0.0, loss_name="hinge", epsilon=0.1,
             huber_delta=1.0, quantile=0.5, n_classes=None, seed=0, precision="float64"):
    """Returns (scores, w, w_avg_post, w_avg_pre).  precision="float32": the features of
    fourier_z32.

    w is (2D,) or (C, 2D).  The spec's "step-averaged w" (§3.9 --average) is not pinned down to
    pre- or post-update iterates, so both means are returned: w_avg_post = mean of the weights
    after each of the T steps, w_avg_pre = mean of the weights used to score the T examples.
    """
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    E = fourier_E(seed, d, D)
    w = np.zeros((n_classes, 2 * D)) if task == "multiclass" else np.zeros(2 * D)
    s_pre, s_post = np.zeros_like(w), np.zeros_like(w)
    scores = []
    for t in range(T):
        z = (fourier_z32 if precision == "float32" else fourier_z)(X[t], E, g)[0]   # 1. z, f, record, g
        f = w @ z
        scores.append(f)
        gr = grad(task, loss_name, f, y[t], epsilon, huber_delta, quantile)
        s_pre += w
        if task == "multiclass":                           # 2. w_c <- (1 - eta lam) w_c - eta g_c z
            w = (1.0 - eta * lam) * w - eta * np.outer(gr, z)
        else:
            w = (1.0 - eta * lam) * w - eta * gr * z
        s_post += w
    return np.array(scores), w, s_post / T, s_pre / T
