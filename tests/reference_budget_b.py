"""Pure-NumPy oracles for BSGD (§3.7), BOGD/BOGD++ (§3.8) and kernel Pegasos (§5.1), written from
../shared/ALGORITHMS.md, not from the compiled code.

Conventions as tests/reference.py: targets already encoded (binary +-1, multiclass class index,
regression real), the *pre-update* score of every example is returned, coefficients are shrunk
explicitly (O(|S|) per step; the learners use a scale factor and must agree to ~1e-12).  S is a
plain list in insertion order (§1.1): position 0 is the oldest SV, a new SV goes to the end, a
deleted one is popped, and a merged SV takes the place of x_{m*}.

Ties.  Under Pegasos steps every SV that was never merged has ||alpha|| = 1/(lambda t) exactly,
so the argmin of the norms is an exact-arithmetic tie and symmetric merge problems are common.
onlinekern resolves such ties as exact arithmetic would (bsgd.pyx docstring), and so do these
oracles: norms within relative 1e-9 of the minimum tie and the oldest SV wins; a denominator
alpha_mc + alpha_nc that cancels to relative 1e-9 counts as zero; golden-section values within
1e-12 of the size of their terms count as equal and keep the left part; merge partners whose
degradation L lies within 1e-12 (|alpha_m| + |alpha_n|)^2 of the least tie and the oldest wins.
"""
import numpy as np

from reference import dloss, grad, rbf, runner_up, stream

CHOICE = 3                       # §1.5 stream of removal/sampling choices
GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


def _zero_score(C):
    return np.zeros(C) if C else 0.0


def _score(x, SV, alpha, g, C):
    if not SV:
        return _zero_score(C), np.zeros(0)
    k = rbf(x, np.array(SV), g)
    return k @ np.array(alpha), k


def _pack(scores, SV, alpha, d, C):
    scores = np.array(scores, dtype=float)
    SV = np.array(SV, dtype=float).reshape(-1, d)
    alpha = np.array(alpha, dtype=float).reshape((-1, C) if C else (-1,))
    return scores, SV, alpha


def pegasos_step(task, f, y, lam, t, epsilon, C):
    """The Pegasos coefficient of x_t (§3.7 step 3), or None when the loss has no gradient."""
    a = 1.0 / (lam * t)
    if task == "binary":
        return y / (lam * t) if y * f < 1 else None
    if task == "multiclass":
        r = runner_up(f, y)
        if f[y] - f[r] >= 1:
            return None
        v = np.zeros(C)
        v[y], v[r] = a, -a                            # C&S step of size 1/(lambda t)
        return v
    d = dloss("epsilon-insensitive", f, y, epsilon)   # regression ext
    return -d / (lam * t) if d != 0 else None


# --- §5.1 kernel Pegasos (no budget) ---------------------------------------------------------------

def ref_pegasos(X, y, task, g, lam, epsilon=0.1, n_classes=None):
    """Kernel Pegasos, eta_t = 1/(lambda t): returns (scores, SV, alpha)."""
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else None
    SV, alpha, scores = [], [], []
    for t in range(1, T + 1):
        x = X[t - 1]
        f, _ = _score(x, SV, alpha, g, C)
        scores.append(f)
        alpha = [(1.0 - 1.0 / t) * a for a in alpha]
        a = pegasos_step(task, f, y[t - 1], lam, t, epsilon, C)
        if a is not None:
            SV.append(x); alpha.append(a)
    return _pack(scores, SV, alpha, d, C)


# --- §3.7 the merge problem -----------------------------------------------------------------------

def merge_J(h, kappa, a1, a2):
    """J(h) = -(a1 kappa^((1-h)^2) + a2 kappa^(h^2)) and the size of its two terms."""
    t1 = kappa ** ((1.0 - h) * (1.0 - h))
    t2 = kappa ** (h * h)
    return -(a1 * t1 + a2 * t2), abs(a1) * t1 + abs(a2) * t2


def golden_section(kappa, a1, a2, lo, hi, tol):
    """Golden-section search for min J on [lo, hi]; stop at width < 2 tol; the midpoint."""
    p = hi - GOLDEN * (hi - lo)
    q = lo + GOLDEN * (hi - lo)
    fp, sp = merge_J(p, kappa, a1, a2)
    fq, sq = merge_J(q, kappa, a1, a2)
    while hi - lo >= 2.0 * tol:
        if fp <= fq + 1e-12 * (sp + sq):              # left on (rounding-level) ties
            hi, q, fq, sq = q, p, fp, sp
            p = hi - GOLDEN * (hi - lo)
            fp, sp = merge_J(p, kappa, a1, a2)
        else:
            lo, p, fp, sp = p, q, fq, sq
            q = lo + GOLDEN * (hi - lo)
            fq, sq = merge_J(q, kappa, a1, a2)
    return (lo + hi) / 2.0


def merge_coefficients(am, an):
    """a1, a2 of §3.7 for vector (or scalar) coefficients."""
    am, an = np.atleast_1d(am).astype(float), np.atleast_1d(an).astype(float)
    a1 = a2 = 0.0
    for u, v in zip(am, an):
        den = u + v
        if abs(den) <= 1e-9 * (abs(u) + abs(v)):      # zero denominator -> 1e-4
            den = 1e-4
        a1 += u / den
        a2 += v / den
    return a1, a2


def bracket(a1, a2):
    if a1 * a2 > 0:
        return 0.0, 1.0
    if a1 > 0:
        return 1.0, 6.0
    return -5.0, 0.0


def merge(kappa, am, an, tol):
    """(h, alpha_z, L) for merging SV m into SV n at kernel value kappa (§3.7)."""
    a1, a2 = merge_coefficients(am, an)
    lo, hi = bracket(a1, a2)
    h = golden_section(kappa, a1, a2, lo, hi, tol)
    am, an = np.atleast_1d(am).astype(float), np.atleast_1d(an).astype(float)
    az = am * kappa ** ((1.0 - h) * (1.0 - h)) + an * kappa ** (h * h)
    L = float(np.sum(am ** 2 + an ** 2 + 2.0 * kappa * am * an - az ** 2))
    return h, az, L


def _oldest_min(values, rtol):
    """First (oldest) index whose value is within relative rtol of the minimum."""
    v = np.asarray(values, dtype=float)
    return int(np.flatnonzero(v <= v.min() + rtol * v.min())[0])


# --- §3.7 BSGD ------------------------------------------------------------------------------------

def ref_bsgd(X, y, task, g, budget, lam, maintenance="merging", merge_tol=1e-4, epsilon=0.1,
             n_classes=None, log=None):
    """BSGD with removal or merging: returns (scores, SV, alpha) with S in insertion order.

    ``lam`` is a number or a function of t (a schedule lambda_t: the step is 1/(lambda_t t) and
    the shrink lambda_{t-1} (t - 1) / (lambda_t t), so every never-merged SV has 1/(lambda_t t)).

    ``log`` (a list) receives one dict per maintenance step: kind, the positions involved, h, L.
    """
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else None
    SV, alpha, scores = [], [], []
    for t in range(1, T + 1):
        x = X[t - 1]
        f, k = _score(x, SV, alpha, g, C)                         # 1. record
        scores.append(f)
        if callable(lam):     # every SV at 1/(lambda_t t): shrink lambda_{t-1} (t - 1) / (lambda_t t)
            alpha = [(lam(t - 1) * (t - 1) / (lam(t) * t) if t > 1 else 0.0) * a for a in alpha]
        else:
            alpha = [(1.0 - 1.0 / t) * a for a in alpha]          # 2. shrink
        a = pegasos_step(task, f, y[t - 1], lam(t) if callable(lam) else lam, t, epsilon, C)   # 3. append
        if a is None:
            continue
        SV.append(x); alpha.append(a)
        if len(SV) <= budget:
            continue
        dup = [j for j in range(len(k)) if k[j] >= 1.0 - 1e-8]   # 4. duplicate of x_t?
        if dup:
            j = max(dup, key=lambda i: (k[i], -i))                # most similar, oldest on ties
            if maintenance == "merging":
                alpha[j] = alpha[j] + alpha[-1]
            SV.pop(); alpha.pop()
            if log is not None:
                log.append({"kind": "duplicate", "j": j})
            continue
        norms = [float(np.sum(np.square(a_i))) for a_i in alpha]  # times k(x_i, x_i) = 1
        m = _oldest_min(norms, 1e-9)
        if maintenance == "removal":
            SV.pop(m); alpha.pop(m)
            if log is not None:
                log.append({"kind": "removal", "m": m})
            continue
        cands = []
        for n in range(len(SV)):
            if n == m:
                continue
            kappa = float(rbf(SV[m], SV[n], g)[0])
            h, az, L = merge(kappa, alpha[m], alpha[n], merge_tol)
            mag = float(np.sum((np.abs(np.atleast_1d(alpha[m])) + np.abs(np.atleast_1d(alpha[n]))) ** 2))
            cands.append((n, L, h, az, mag))
        lmin = min(c[1] for c in cands)
        n, L, h, az, _ = next(c for c in cands if c[1] <= lmin + 1e-12 * c[4])   # the oldest in the band
        SV[m] = h * SV[m] + (1.0 - h) * SV[n]
        alpha[m] = az if C else float(az[0])
        SV.pop(n); alpha.pop(n)
        if log is not None:
            log.append({"kind": "merge", "m": m, "n": n, "h": h, "L": L})
    return _pack(scores, SV, alpha, d, C)


# --- §3.8 BOGD / BOGD++ -----------------------------------------------------------------------------

def bogdpp_probabilities(norms):
    """(p, c_p, clamped) of BOGD++ step 4 from the norms ||alpha_i|| sqrt(k_ii)."""
    norms = np.asarray(norms, dtype=float)
    B = len(norms)
    total = float(np.sum(norms))
    if total == 0:
        return np.full(B, 1.0 / B), 0.0, True
    cp = (B - 1) / total
    p = 1.0 - cp * norms
    if np.any(p < 0):
        p = np.maximum(p, 0.0)
        return p / np.sum(p), cp, True
    return p, cp, False


def ref_bogd(X, y, task, g, budget, eta=0.2, lam=1e-3, coef_bound=10.0, sampling="uniform",
             loss_name="hinge", epsilon=0.1, huber_delta=1.0, quantile=0.5, n_classes=None, seed=0,
             log=None):
    """BOGD (uniform) or BOGD++ (nonuniform): returns (scores, SV, alpha), S in insertion order.

    Draws from stream CHOICE of ``seed``: uniform ``integers(B)``; nonuniform
    ``c = cumsum(p); r = first i with c_i > random() * c[-1]``.  ``log`` receives p and r of
    every removal step and the survivors' coefficients right after it.
    """
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else None
    rng = stream(seed, CHOICE)
    SV, alpha, scores = [], [], []
    bound = eta * coef_bound
    for t in range(T):
        x = X[t]
        f, _ = _score(x, SV, alpha, g, C)                                  # 1.
        scores.append(f)
        gr = grad(task, loss_name, f, y[t], epsilon, huber_delta, quantile)
        alpha = [(1.0 - eta * lam) * a for a in alpha]                     # 2.
        if not np.any(np.asarray(gr) != 0):                                # 3.
            continue
        if len(SV) >= budget:
            B = len(SV)
            norms = np.array([np.sqrt(np.sum(np.square(a))) for a in alpha])
            if sampling == "uniform":                                      # 4.-5.
                p, cp, closed = np.full(B, 1.0 / B), None, False
                r = int(rng.integers(B))
            else:
                p, cp, clamped = bogdpp_probabilities(norms)
                closed = not clamped
                c = np.cumsum(p)
                r = int(np.argmax(c > rng.random() * c[-1]))
            for i in range(B):                                             # 6.
                if i == r:
                    continue
                den = cp * norms[i] if closed else 1.0 - p[i]
                a = np.atleast_1d(np.asarray(alpha[i], dtype=float)).copy()
                a[a != 0] = a[a != 0] / den
                a = np.clip(a, -bound, bound)
                alpha[i] = a if C else float(a[0])
            SV.pop(r); alpha.pop(r)                                        # 7.
            if log is not None:
                log.append({"t": t, "p": p, "r": r, "survivors": [np.copy(a) for a in alpha]})
        SV.append(x); alpha.append(-eta * gr)
    return _pack(scores, SV, alpha, d, C)
