"""Pure-NumPy oracles for NOGD (§3.10), DualSGD (§3.11) and kernel Pegasos, from ALGORITHMS.md.

Conventions as tests/reference.py: targets already encoded (binary +-1, multiclass class index,
regression real), every oracle returns the *pre-update* score of each example (§1.2).  Nothing
here shares code with the compiled learners: the kernel matrix is decomposed by
numpy.linalg.eigh (eigenvectors may differ in sign from LAPACK's dsyevr, so tests compare
sign-invariant quantities: scores, M^T M, M^T w), and DualSGD shrinks every coefficient explicitly.
"""
import numpy as np

from reference import fourier_E, fourier_z, grad, rbf

EIG_FLOOR = 1e-12


def _zero(C):
    return np.zeros(C) if C else 0.0


def _nonzero(gr):
    return bool(np.any(np.asarray(gr) != 0))


# --- §3.10 NOGD ----------------------------------------------------------------------------------

def nystrom(SV, alpha, g, rank):
    """Steps 1-3 of the switch: (M (k x B), w (k,) or (k, C), eigenvalues kept)."""
    K = np.array([rbf(x, SV, g) for x in SV])
    lam, V = np.linalg.eigh(K)
    order = np.argsort(lam)[::-1]                          # descending
    lam, V = lam[order], V[:, order]
    top = min(rank, len(SV))
    k = int(np.sum(lam[:top] > EIG_FLOOR * lam[0]))
    lam, V = lam[:k], V[:, :k]
    M = (V / np.sqrt(lam)).T                               # Lambda^{-1/2} V^T
    w = np.sqrt(lam)[:, None] * (V.T @ alpha) if alpha.ndim == 2 else np.sqrt(lam) * (V.T @ alpha)
    return M, w, lam


def ref_nogd(X, y, task, g, B, rank, eta=0.2, eta_lin=0.2, loss_name="hinge", epsilon=0.1,
             huber_delta=1.0, quantile=0.5, n_classes=None):
    """Returns a dict: scores, SV (landmarks), alpha (phase-1 coefficients), switch (1-based step
    or None), M, w, w_switch (w right after steps 1-3), beta (coefficients over the landmarks of
    the final predictor) and beta_avg (of the mean of the predictors after each step)."""
    X = np.asarray(X, dtype=float)
    T = len(X)
    C = n_classes if task == "multiclass" else None
    lp = (epsilon, huber_delta, quantile)
    SV, alpha, scores, models = [], [], [], []
    M = w = w_switch = None
    switch = None
    for t in range(T):
        x = X[t]
        if switch is None:
            kS = rbf(x, np.array(SV), g) if SV else np.zeros(0)
            f = kS @ np.array(alpha) if SV else _zero(C)
            scores.append(f)
            gr = grad(task, loss_name, f, y[t], *lp)
            if _nonzero(gr):
                if len(SV) < B:
                    SV.append(x); alpha.append(-eta * gr)
                else:                                      # switch, then step 4 in phase 2
                    A = np.array(alpha)
                    M, w, _ = nystrom(np.array(SV), A, g, rank)
                    w_switch = w.copy()
                    z = M @ kS
                    w = w - eta_lin * (np.outer(z, gr) if C else gr * z)
                    switch = t + 1
        else:
            z = M @ rbf(x, np.array(SV), g)
            f = z @ w
            scores.append(f)
            gr = grad(task, loss_name, f, y[t], *lp)
            w = w - eta_lin * (np.outer(z, gr) if C else gr * z)
        # the predictor after this step, as coefficients over the landmarks stored so far
        models.append(np.array(alpha).copy() if switch is None else M.T @ w)
    nB = len(SV)
    shape = (nB, C) if C else (nB,)
    total = np.zeros(shape)
    for m in models:
        total[:len(m)] += m
    beta = models[-1] if models else np.zeros(shape)
    return dict(scores=np.array(scores, dtype=float), SV=np.array(SV).reshape(nB, X.shape[1]),
                alpha=np.array(alpha).reshape(shape), switch=switch, M=M, w=w, w_switch=w_switch,
                beta=np.asarray(beta).reshape(shape), beta_avg=total / max(T, 1))


# --- kernel Pegasos (for §5.1) ---------------------------------------------------------------

def ref_kernel_pegasos(X, y, task, g, lam, n_classes=None):
    """Kernel Pegasos with hinge loss: shrink every alpha by (1 - 1/t), then on a margin error
    append y_t/(lam t) (multiclass: the C&S step of size 1/(lam t)).  Returns (scores, SV, alpha)."""
    X = np.asarray(X, dtype=float)
    C = n_classes if task == "multiclass" else None
    SV, alpha, scores = [], [], []
    for t in range(1, len(X) + 1):
        x = X[t - 1]
        f = rbf(x, np.array(SV), g) @ np.array(alpha) if SV else _zero(C)
        scores.append(f)
        alpha = [(1.0 - 1.0 / t) * a for a in alpha]
        yy = y[t - 1]
        if task == "binary":
            if yy * f < 1:
                SV.append(x); alpha.append(yy / (lam * t))
        else:
            r = max((c for c in range(C) if c != yy), key=lambda c: (f[c], -c))
            if f[yy] - f[r] < 1:
                a = np.zeros(C); a[yy] += 1.0 / (lam * t); a[r] -= 1.0 / (lam * t)
                SV.append(x); alpha.append(a)
    d = X.shape[1]
    return (np.array(scores, dtype=float), np.array(SV).reshape(-1, d),
            np.array(alpha).reshape((-1, C) if C else (-1,)))


# --- §3.11 DualSGD ---------------------------------------------------------------------------

def ref_dualsgd(X, y, task, g, B, k_merge, D, lam, loss_name="logistic", epsilon=0.1,
                maintenance="k-merging", n_classes=None, seed=0):
    """Returns a dict: scores, SV and alpha in insertion order, W ((2D,) or (2D, C)), merged
    (number of SVs moved into W), removed (stamps of the SVs that left S, in order)."""
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else None
    E = fourier_E(seed, d, D)
    SV, alpha, stamps, scores, removed = [], [], [], [], []
    W = np.zeros((2 * D, C)) if C else np.zeros(2 * D)
    merged = 0
    for t in range(1, T + 1):
        x = X[t - 1]
        f = rbf(x, np.array(SV), g) @ np.array(alpha) if SV else _zero(C)   # 1.
        f = f + fourier_z(x, E, g)[0] @ W
        scores.append(f)
        gr = grad(task, loss_name, f, y[t - 1], epsilon)
        alpha = [(1.0 - 1.0 / t) * a for a in alpha]                        # 2. explicit shrink
        W = (1.0 - 1.0 / t) * W
        if not _nonzero(gr):                                                # 3.
            continue
        a_new = -np.asarray(gr, dtype=float) / (lam * t)
        if len(SV) == B:                                                    # 4.
            norms = np.array([np.linalg.norm(np.atleast_1d(a)) for a in alpha])
            # "ties: older first": norms equal in exact arithmetic (every hinge SV has
            # ||alpha|| = 1/(lam t)) differ here by rounding, so compare to 9 digits
            key = np.round(norms / norms.max(), 9)
            order = np.lexsort((np.array(stamps), key))
            chosen = list(order[:1 if maintenance == "removal" else k_merge])
            if maintenance == "k-merging":
                for i in chosen:
                    z = fourier_z(SV[i], E, g)[0]
                    W = W + (np.outer(z, alpha[i]) if C else z * alpha[i])
                merged += len(chosen)
            removed += [stamps[i] for i in chosen]
            keep = [i for i in range(len(SV)) if i not in chosen]
            SV = [SV[i] for i in keep]; alpha = [alpha[i] for i in keep]; stamps = [stamps[i] for i in keep]
        SV.append(x); alpha.append(a_new if C else float(a_new)); stamps.append(t)   # 5.
    return dict(scores=np.array(scores, dtype=float), SV=np.array(SV).reshape(-1, d),
                alpha=np.array(alpha).reshape((-1, C) if C else (-1,)), W=W, merged=merged,
                removed=removed, stamps=np.array(stamps))


def dualsgd_decision(res, Xq, g, seed, D):
    """f(x) of an oracle DualSGD model for the rows of Xq."""
    Xq = np.asarray(Xq, dtype=float)
    E = fourier_E(seed, Xq.shape[1], D)
    out = fourier_z(Xq, E, g) @ res["W"]
    if len(res["SV"]):
        out = out + np.array([rbf(x, res["SV"], g) @ res["alpha"] for x in Xq])
    return out
