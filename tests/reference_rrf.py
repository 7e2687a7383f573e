"""NumPy oracle of RRF (Nguyen, Le, Bui & Phung, IJCAI 2017, Alg. 1), written from
ALGORITHMS.md §3.12 (not from the compiled code).

Targets are encoded as in tests/reference.py: binary y in {-1, +1}, multiclass class index,
regression real.  Nothing is optimised: every step forms Omega = diag(e^rho) E explicitly.
"""
import numpy as np

import reference as ref

INIT = 6                                  # §1.5 stream of the random weight initialisation
RHO_RANGE = np.log(1e8)                   # overflow guard: |rho_n - rho_0| <= ln(1e8)


def rrf_gradients(x, y, task, w, rho, E, lam=0.0, loss_name="hinge", epsilon=0.1):
    """Objective J = l(f, y) + lam/2 ||w||^2 and its gradients at one example (§3.12 steps 1-4).

    w: (C, 2D) (C = 1 for binary/regression); rho: (d,).  Returns (J, grad_w, grad_rho, f).
    """
    x = np.asarray(x, dtype=float)
    D = E.shape[1]
    Om = np.exp(rho)[:, None] * E                       # Omega = diag(e^rho) E
    a = x @ Om                                          # a_j = omega_j^T x
    z = np.concatenate([np.cos(a), np.sin(a)]) / np.sqrt(D)
    f = w @ z                                           # (C,)
    if task == "multiclass":
        val, g, r = ref.mc_grad(loss_name, f, y)        # runner-up r held fixed
        h = g[y]                                        # hinge: -1 if m < 1; logistic: -sig(-m)
        v = w[y] - w[r]
    else:
        val = ref.loss(loss_name, f[0], y, epsilon)
        h = ref.dloss(loss_name, f[0], y, epsilon)
        g = np.array([h])
        v = w[0]
    grad_w = np.outer(g, z) + lam * w                   # step 3 (multiclass: +hz on y, -hz on r)
    vc, vs = v[:D], v[D:]
    q = (vs * np.cos(a) - vc * np.sin(a)) / np.sqrt(D)  # q_j = df/da_j
    grad_rho = h * x * (Om @ q)                         # step 4: h (x ⊙ Omega q)
    return val + 0.5 * lam * np.sum(w * w), grad_w, grad_rho, f


def ref_rrf(X, y, task, g0, D, eta=0.3, eta_rho=1e-4, lam=0.0, loss_name="hinge", epsilon=0.1,
            n_classes=None, seed=0, init=0.0):
    """Algorithm 1 of the paper in the spec's form (§3.12 steps 1-5).

    Returns (scores, w, rho, n_clips): scores (T,) or (T, C) pre-update; w (2D,) or (C, 2D).
    ``eta`` may be a function of the 1-based example count t (a step schedule).
    """
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else 1
    E = ref.fourier_E(seed, d, D)
    rho0 = 0.5 * np.log(2.0 * g0)
    rho = np.full(d, rho0)
    w = init * ref.stream(seed, INIT).standard_normal((C, 2 * D)) if init > 0 else np.zeros((C, 2 * D))
    scores, clips = [], 0
    for t in range(T):
        _, gw, gr, f = rrf_gradients(X[t], y[t], task, w, rho, E, lam, loss_name, epsilon)
        scores.append(f if task == "multiclass" else f[0])     # record
        w = w - (eta(t + 1) if callable(eta) else eta) * gw     # step 5, both from the
        new = rho - eta_rho * gr                                # pre-update values
        clips += int(np.sum((new > rho0 + RHO_RANGE) | (new < rho0 - RHO_RANGE)))
        rho = np.clip(new, rho0 - RHO_RANGE, rho0 + RHO_RANGE)
    return np.array(scores), (w if task == "multiclass" else w[0]), rho, clips


def rrf_z(X, E, rho):
    """Rows z(x) with Omega = diag(e^rho) E."""
    A = np.atleast_2d(X) @ (np.exp(rho)[:, None] * E)
    return np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(E.shape[1])
