"""Pure-NumPy oracle of KONS on an adaptive Nystrom embedding (onlinekern.learners.kons), written
from PROS-N-KONS (Calandriello, Lazaric & Valko, NeurIPS 2017) with the dictionary of KORS and the
choices of the module's docstring.  Everything is solved directly each step (numpy.linalg on
explicit matrices: K_I + mu diag(p), A), not through the compiled learner's incremental factors.
"""
import numpy as np

from onlinekern.seeding import CHOICE, rng


class KONSRef:
    """KONS, Gaussian kernel; ``step(x, y)`` returns the pre-update scores (C,).

    ``grad(f, y)`` gives the loss gradient in the C scores; ``floor``: A gains
    max(eta ||h||^2, 1) z z^T (the curvature floor)."""

    def __init__(self, d, gamma, grad, C=1, budget=400, alpha=0.1, eta=1.0, mu=0.01, oversample=1.0,
                 restart=False, seed=0, floor=False):
        self.gamma, self.grad, self.C, self.B = gamma, grad, C, budget
        self.alpha, self.eta, self.mu, self.over, self.restart = alpha, eta, mu, oversample, restart
        self.floor = floor
        self.rng = rng(seed, CHOICE)
        self.X = np.zeros((0, d))
        self.p = np.zeros(0)
        self.w = np.zeros((C, 0))          # weights over the embedding's coordinates
        self.A = np.zeros((0, 0))

    def kern(self, A, B):
        return np.exp(-self.gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    def factor(self):
        """L, L L^T = K_I + mu diag(p)."""
        return np.linalg.cholesky(self.kern(self.X, self.X) + self.mu * np.diag(self.p))

    def embed(self, x):
        if not len(self.p):
            return np.zeros(0)
        return np.linalg.solve(self.factor(), self.kern(self.X, x[None])[:, 0])

    def scores(self, x):
        return self.w @ self.embed(x)

    @property
    def beta(self):
        """Coefficients over the landmarks: L^{-T} w (n_landmarks, C)."""
        if not len(self.p):
            return np.zeros((0, self.C))
        return np.linalg.solve(self.factor().T, self.w.T)

    def step(self, x, y):
        z = self.embed(x)
        f = self.w @ z
        h = np.atleast_1d(self.grad(f, y))
        if not np.any(h):
            return f
        j = len(self.p)
        if j < self.B:
            r = 1.0 - z @ z
            p = min(1.0, self.over * r / self.mu) if r > 0 else 0.0
            if self.rng.random() < p and r + self.mu * p > 1e-12:
                self.X = np.vstack([self.X, x])
                self.p = np.append(self.p, p)
                self.w = np.hstack([self.w, np.zeros((self.C, 1))])
                A = self.alpha * np.eye(j + 1)
                A[:j, :j] = self.A
                self.A = A
                if self.restart:
                    self.w[:] = 0.0
                    self.A = self.alpha * np.eye(j + 1)
                    return f
                z = self.embed(x)
        weight = self.eta * np.sum(h * h)
        self.A = self.A + (max(weight, 1.0) if self.floor else weight) * np.outer(z, z)
        v = np.linalg.solve(self.A, z)
        self.w = self.w - np.outer(h, v)
        return f
