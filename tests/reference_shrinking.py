"""Pure-NumPy oracle of Shrinking Gradient (ALGORITHMS.md §3.16; Livni, Carmon & Globerson,
ICML 2017, Algorithms 1-2), written from the spec and the element layout documented in
``onlinekern.learners.shrinking.ShrinkingGradient``.  It draws the very counter-based numbers the
compiled code draws (``onlinekern._core.counter_rng.uniforms/normals``, stream ESTIMATOR = 4).

Targets are encoded: regression real, binary +-1, multiclass class index (one-vs-rest +-1).
"""
import numpy as np

from onlinekern._core.counter_rng import normals, uniforms

ESTIMATOR = 4
POST_KEY = 2 ** 63
RENORM = 1e-100


def lowbit(j):
    return j & (-j)


class Fenwick:
    """Append-only Fenwick tree over non-negative weights (1-based nodes)."""

    def __init__(self):
        self.tree = []

    def append(self, v):
        n = len(self.tree) + 1
        s = v
        j, lim = n - 1, n - lowbit(n)
        while j > lim:
            s += self.tree[j - 1]
            j -= lowbit(j)
        self.tree.append(s)

    def total(self):
        s, j = 0.0, len(self.tree)
        while j > 0:
            s += self.tree[j - 1]
            j -= lowbit(j)
        return s

    def find(self, target, weights):
        """Slot i with prefix(i) <= target < prefix(i + 1); ``weights`` for the rounding fallback."""
        n = len(self.tree)
        pos, step = 0, 1
        while step * 2 <= n:
            step *= 2
        while step > 0:
            nxt = pos + step
            if nxt <= n and self.tree[nxt - 1] <= target:
                pos = nxt
                target -= self.tree[nxt - 1]
            step >>= 1
        if pos >= n:
            pos = n - 1
            while pos > 0 and weights[pos] == 0.0:
                pos -= 1
        return pos


def stride(feature, d):
    return 2 + d + (d & 1) if feature == "fourier" else 2


def feature_product(feature, seed, key1, first, xi, x, g):
    """psi(x_i; w) psi(x; w) with w drawn from elements first, first + 1, ..."""
    d = len(x)
    if feature == "fourier":
        b = 2 * np.pi * uniforms(seed, ESTIMATOR, key1, 1, first=first)[0]
        e = normals(seed, ESTIMATOR, key1, d, first=first + 1)
        ai = np.sqrt(2 * g) * (e @ xi)
        a = np.sqrt(2 * g) * (e @ x)
        return (np.sqrt(2) * np.cos(ai + b)) * (np.sqrt(2) * np.cos(a + b))
    w = min(int(uniforms(seed, ESTIMATOR, key1, 1, first=first)[0] * d), d - 1)
    return (np.sqrt(d) * xi[w]) * (np.sqrt(d) * x[w])


def exact_kernel(feature, SV, x, g):
    if feature == "fourier":
        return np.exp(-g * np.sum((SV - x) ** 2, axis=1))
    return SV @ x


class RefShrinking:
    """State: SV list, scaled coefficients coef (n, C), scale[c], one Fenwick tree per output."""

    def __init__(self, d, C, g, eta, norm_bound, m, seed, feature="fourier", exact=False):
        self.d, self.C, self.g, self.eta, self.B, self.m = d, C, g, eta, norm_bound, m
        self.seed, self.feature, self.exact = seed, feature, exact
        self.SV, self.coef = [], []
        self.scale = [1.0] * C
        self.trees = [Fenwick() for _ in range(C)]
        self.n_pred = 0
        self.n_shrinks = 0

    @property
    def alpha(self):
        if not self.SV:
            return np.zeros((0, self.C))
        return np.array(self.coef) * np.array(self.scale)[None, :]

    def estimate(self, x, key1, m=None):
        """EST(alpha_c, x, m) for every output c (Algorithm 2)."""
        m = self.m if m is None else m
        out = np.zeros(self.C)
        S = stride(self.feature, self.d)
        for c in range(self.C):
            tot = self.trees[c].total() if self.SV else 0.0
            if not tot > 0.0:
                continue
            w = [row[c] for row in self.coef]
            acc = 0.0
            for k in range(m):
                base = (c * m + k) * S
                u = uniforms(self.seed, ESTIMATOR, key1, 1, first=base)[0]
                i = self.trees[c].find(u * tot, w)
                sgn = 1.0 if w[i] > 0.0 else -1.0
                acc += sgn * feature_product(self.feature, self.seed, key1, base + 1, self.SV[i], x, self.g)
            out[c] = (self.scale[c] * tot / m) * acc
        return out

    def scores(self, x, key1):
        if self.exact:
            if not self.SV:
                return np.zeros(self.C)
            return exact_kernel(self.feature, np.array(self.SV), x, self.g) @ self.alpha
        return self.estimate(x, key1)

    def shrink(self, c):
        self.n_shrinks += 1
        self.scale[c] *= 0.25
        if self.scale[c] < RENORM:
            for row in self.coef:
                row[c] *= self.scale[c]
            self.scale[c] = 1.0
            self.trees[c] = Fenwick()
            for row in self.coef:
                self.trees[c].append(abs(row[c]))

    def step(self, x, y, t, task):
        E = self.scores(x, t)
        a = np.zeros(self.C)
        for c in range(self.C):
            target = (1.0 if c == int(y) else -1.0) if task == "multiclass" else y
            if abs(E[c]) < 16 * self.B:
                a[c] = self.eta * (target - E[c]) / self.scale[c]      # descent sign (§3.16)
            else:
                self.shrink(c)
        if np.any(a != 0.0):
            self.SV.append(np.array(x, dtype=float))
            self.coef.append(list(a))
            for c in range(self.C):
                self.trees[c].append(abs(a[c]))
        return E

    def predict(self, x):
        if self.exact:
            return self.scores(x, None)
        out = self.estimate(x, POST_KEY + self.n_pred)
        self.n_pred += 1
        return out


def ref_shrinking(X, y, task, g, eta, norm_bound=1.0, m=100, seed=0, feature="fourier", exact=False,
                  n_classes=None):
    """Online pass: (pre-update scores (T, C), the oracle model)."""
    X = np.asarray(X, dtype=float)
    C = n_classes if task == "multiclass" else 1
    model = RefShrinking(X.shape[1], C, g, eta, norm_bound, m, seed, feature, exact)
    scores = np.array([model.step(x, yy, t, task) for t, (x, yy) in enumerate(zip(X, y), start=1)])
    return scores, model
