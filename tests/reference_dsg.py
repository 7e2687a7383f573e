"""Pure-NumPy oracles of DSG (§3.13), UDSG (§3.14) and CDSG (§3.15), written from
../shared/ALGORITHMS.md and the papers, not from the compiled code.

Blocks: E_j = counter_rng.normals(seed, DSG_BLOCK = 2, j, (d, F)) (the same function of (seed, j)
as the compiled generator, §1.5), Omega_j = sqrt(2g) E_j, z_j(x) = F^{-1/2}[cos Omega_j^T x;
sin Omega_j^T x].  The oracle keeps every coefficient explicitly (no scale trick) and decays them
one by one, stores Omega_j (it is an oracle), and follows the mini-batch protocol literally: the
scores of a batch come from the model at the start of the iteration, the update follows the B-th
example; a trailing partial batch is left pending.  Targets are encoded as in tests/reference.py.
"""
import numpy as np

from onlinekern._core.counter_rng import normals

import reference as ref

UNBOUNDED = ("squared", "squared-hinge")


def block_E(seed, j, d, F):
    """E_j (d x F), j >= 1."""
    return normals(seed, 2, j, (d, F))


def z_block(X, E, g):
    """Rows z_j(x) = F^{-1/2} [cos(Omega^T x); sin(Omega^T x)]."""
    A = np.atleast_2d(X) @ (np.sqrt(2.0 * g) * E)
    return np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(E.shape[1])


def grad(loss, task, f, y, **kw):
    """l'(f, y) as a vector of length C (C = 1 for binary/regression); §2 tables."""
    if task == "multiclass":
        return ref.grad(task, loss, f, int(y))
    return np.array([ref.dloss(loss, f[0], y, **kw)])


def cdsg_step(beta, gbar, gam, M, sigma, B):
    """Largest s >= 0 with 2||beta - s gbar||^2 + 2 s^2 M^2 sigma^2/B^2 <= ||beta||^2 + gam^2||gbar||^2."""
    a = float(gbar @ gbar)
    b = float(beta @ gbar)
    c = float(beta @ beta)
    v = (M * sigma / B) ** 2
    if a + v == 0.0:
        return 0.0
    delta = b * b - 0.5 * (a + v) * (c - gam * gam * a)
    if delta < 0:
        return 0.0
    return max(0.0, (b + np.sqrt(delta)) / (a + v))


def ref_dsg(X, y, task, *, C=1, g, B, F, nu=1e-5, theta=1e4, t0=1e4, seed=0, loss="logistic",
            variant="dsg", G=1, U=1, M=None, sigma=1.0, precondition=False, novelty=False,
            epsilon=0.1, huber_delta=1.0, quantile=0.5, return_state=False):
    """Pre-update scores (T, C) of DSG / UDSG / CDSG on the stream (X, y) in row order.

    ``C``: classes for multiclass (1 otherwise).  ``M=None``: automatic M (§3.15).  The UDSG choice
    stream is numpy's Generator of (seed, CHOICE = 3).  With ``novelty`` the scores are f - o.
    """
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)
    T, d = X.shape
    kw = dict(epsilon=epsilon, huber_delta=huber_delta, quantile=quantile)
    Es, A, beta = [], [], []           # per block: E_j, A_j (2F x C), beta_j (C)
    o = 0.0
    i = 0
    m_run = 0.0
    n_reuse = 0
    choice = ref.stream(seed, 3)
    scores = np.zeros((T, C))
    batch = []

    def f_of(x):
        out = np.zeros(C)
        for E, Aj in zip(Es, A):
            out += z_block(x, E, g)[0] @ Aj
        return out

    for t in range(T):
        f = f_of(X[t])
        scores[t] = f - o if novelty else f
        batch.append(t)
        if len(batch) < B:
            continue
        i += 1
        gam = theta / (i + t0)
        rows = np.array(batch)
        batch = []
        if novelty:
            Gb = np.array([[-1.0 if scores[r][0] < 0 else 0.0] for r in rows])
        else:
            Gb = np.array([grad(loss, task, scores[r], y[r], **kw) for r in rows])
        gbar = Gb.mean(axis=0)
        m = len(Es)
        new, k, step = True, None, gam
        if variant == "udsg":
            if m > 0 and (i - 1) % (G + U) >= G:
                new, k = False, int(choice.integers(m))
        elif variant == "cdsg":
            if M is not None:
                Mi = M
            elif (not novelty) and loss in UNBOUNDED:
                m_run = max(m_run, np.max(np.linalg.norm(Gb, axis=1)))   # per-example bound
                Mi = m_run
            else:
                Mi = 1.0
            if m > 0:
                s = [cdsg_step(bj, gbar, gam, Mi, sigma, B) for bj in beta]
                kk = int(np.argmax(s))          # first maximiser: lowest index on ties
                if s[kk] > gam:
                    new, k, step = False, kk, s[kk]
        if new:
            E = block_E(seed, m + 1, d, F)
            Z = z_block(X[rows], E, g)
        else:
            Z = z_block(X[rows], Es[k], g)
        H = Z.T @ Gb / B                            # (2F, C) = (1/B) sum_b z_b g_b^T
        if precondition:
            P = Z.T @ Z / B + (nu + 1e-7) * np.eye(2 * F)
            H = np.linalg.solve(P, H)
        for j in range(m):                          # explicit decay of every old block
            A[j] = (1.0 - step * nu) * A[j]
            beta[j] = (1.0 - step * nu) * beta[j]
        if new:
            Es.append(E)
            A.append(-gam * H)
            beta.append(-gam * gbar)
        else:
            A[k] = A[k] - step * H
            beta[k] = beta[k] - step * gbar
            n_reuse += 1
        if novelty:
            frac = np.mean(Gb[:, 0] != 0.0)
            o = o + gam * (nu - frac)
    if return_state:
        return scores, dict(A=A, beta=beta, E=Es, offset=o, n_iter=i, n_reuse=n_reuse, pending=len(batch))
    return scores


def decision(state, Xq, g, C=1, novelty=False):
    """f(x) (- o) of the oracle model for the rows of Xq, (n, C)."""
    Xq = np.asarray(Xq.toarray() if hasattr(Xq, "toarray") else Xq, dtype=float)
    out = np.zeros((Xq.shape[0], C))
    for E, Aj in zip(state["E"], state["A"]):
        out += z_block(Xq, E, g) @ Aj
    return out - state["offset"] if novelty else out
