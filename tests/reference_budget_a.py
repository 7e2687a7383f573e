"""Pure-NumPy oracles for RBP (§3.3), Forgetron (§3.4), Projectron/Projectron++ (§3.5) and BPAs
(§3.6), written from ../shared/ALGORITHMS.md (not from the compiled code).

Conventions as in tests/reference.py: targets already encoded (binary +-1, multiclass class
index, regression real), every oracle returns the *pre-update* score of each example.  The SV
list S is kept in insertion order (§1.1); lists are rebuilt explicitly (explicit shrinks,
explicit deletions), nothing is optimised.
"""
import numpy as np

from reference import rbf, runner_up, stream

CHOICE = 3                                  # §1.5 stream of RBP's removal choices


def _score(x, SV, alpha, C, g):
    """f(x) = sum_i alpha_i k(x_i, x); 0 (or the zero vector) for an empty S."""
    if not SV:
        return np.zeros(C) if C else 0.0
    return rbf(x, np.array(SV), g) @ np.array(alpha)


def _pack(scores, SV, alpha, d, C):
    scores = np.array(scores, dtype=float)
    SV = np.array(SV, dtype=float).reshape(-1, d)
    alpha = np.array(alpha, dtype=float).reshape((-1, C) if C else (-1,))
    return scores, SV, alpha


def perceptron_step(task, f, y, C, eta, epsilon):
    """The Perceptron's coefficient for a new SV (§3.1), or None when it does not update."""
    if task == "binary":
        return float(y) if y * f <= 0 else None
    if task == "multiclass":
        r = runner_up(f, y)
        if f[y] - f[r] <= 0:                                # C&S step a = 1
            a = np.zeros(C); a[y] += 1.0; a[r] -= 1.0
            return a
        return None
    if abs(y - f) > epsilon:                                # epsilon-mistake
        return eta * np.sign(y - f)
    return None


# --- §3.3 RBP ------------------------------------------------------------------------------------

def ref_rbp(X, y, task, g, B, eta=0.1, epsilon=0.1, n_classes=None, seed=0):
    """Returns (scores, SV, alpha) with S in insertion order."""
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else None
    choice = stream(seed, CHOICE)
    SV, alpha, scores = [], [], []
    for t in range(T):
        f = _score(X[t], SV, alpha, C, g)
        scores.append(f)
        a = perceptron_step(task, f, y[t], C, eta, epsilon)
        if a is None:
            continue
        if len(SV) == B:                                    # uniform removal before the append
            j = int(choice.integers(B))
            del SV[j], alpha[j]
        SV.append(X[t]); alpha.append(a)
    return _pack(scores, SV, alpha, d, C)


# --- §3.4 Forgetron ------------------------------------------------------------------------------

def forgetron_phi(delta, mu, Q, M):
    """Largest phi in (0, 1] with (delta phi)^2 + 2 delta phi - 2 delta mu phi^2 + Q <= 15/32 M."""
    A = delta ** 2 - 2 * delta * mu
    b = 2 * delta
    c = Q - 15.0 / 32.0 * M
    if A + b + c <= 0:
        return 1.0
    return -2 * c / (b + np.sqrt(b * b - 4 * A * c))


def ref_forgetron(X, y, task, g, B, eta=0.1, epsilon=0.1, n_classes=None):
    """Returns (scores, SV, alpha, log); log[t] = (Q, M, phi or None) after step t.

    The state is kept as the spec writes it: binary alpha_i = sigma_i y_i; multiclass
    alpha_i = sigma_i (e_{y_i} - e_{c_i}) with the runner-up c_i stored; regression alpha_i =
    eta sigma_i s_i with s_i = sign(y - f) at insertion.
    """
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    C = n_classes if task == "multiclass" else None
    SV, sigma, lab, run_up, scores, log = [], [], [], [], [], []
    Q, M = 0.0, 0

    def alphas():
        out = []
        for s, yl, cr in zip(sigma, lab, run_up):
            if task == "multiclass":
                a = np.zeros(C); a[yl] = s; a[cr] = -s
            elif task == "regression":
                a = eta * s * yl
            else:
                a = s * yl
            out.append(a)
        return out

    for t in range(T):
        f = _score(X[t], SV, alphas(), C, g)
        scores.append(f)
        phi = None
        a = perceptron_step(task, f, y[t], C, eta, epsilon)
        if a is not None:
            M += 1                                               # 2.
            SV.append(X[t]); sigma.append(1.0)
            if task == "multiclass":
                lab.append(y[t]); run_up.append(runner_up(f, y[t]))
            elif task == "regression":
                lab.append(float(np.sign(y[t] - f))); run_up.append(None)
            else:
                lab.append(float(y[t])); run_up.append(None)
            if len(SV) > B:
                fr = rbf(SV[0], np.array(SV), g) @ np.array(alphas())   # 3. f' includes x_t
                if task == "multiclass":
                    delta = np.sqrt(2) * sigma[0]
                    mu = (fr[lab[0]] - fr[run_up[0]]) / np.sqrt(2)
                elif task == "regression":
                    a0 = eta * sigma[0] * lab[0]
                    delta = abs(a0) / eta
                    mu = np.sign(a0) * fr / eta
                else:
                    delta = sigma[0]
                    mu = lab[0] * fr
                phi = forgetron_phi(delta, mu, Q, M)             # 4.
                sigma = [phi * s for s in sigma]                 # 5. explicit shrink
                Q += (delta * phi) ** 2 + 2 * delta * phi - 2 * delta * mu * phi ** 2
                del SV[0], sigma[0], lab[0], run_up[0]           # 6. forget the oldest
        log.append((Q, M, phi))
    scores, SV, alpha = _pack(scores, SV, alphas(), d, C)
    return scores, SV, alpha, log


# --- §3.5 Projectron / Projectron++ --------------------------------------------------------------

def ref_projectron(X, y, task, g, proj_eta=0.1, B=None, plus=False, rule="eta", eta=0.1,
                   epsilon=0.1, n_classes=None):
    """Returns (scores, SV, alpha, Kinv, delta2s); delta2s[t] = delta^2 of step t or None."""
    X = np.asarray(X, dtype=float)
    T, dim = X.shape
    C = n_classes if task == "multiclass" else None
    SV, scores, delta2s = [], [], []
    alpha = np.zeros((0, C)) if C else np.zeros(0)
    Kinv = np.zeros((0, 0))
    U = 0.25 * np.sqrt((B + 1) / np.log(B + 1)) if B else None
    for t in range(T):
        x, yt = X[t], y[t]
        k = rbf(x, np.array(SV), g) if SV else np.zeros(0)
        f = k @ alpha if SV else (np.zeros(C) if C else 0.0)
        scores.append(f)
        delta2s.append(None)
        # the direction e of an update, its step, and whether it is a mistake / margin error
        if task == "binary":
            m = yt * f
            mistake, step, e = m <= 0, float(yt), 1.0
        elif task == "multiclass":
            r = runner_up(f, yt)
            m = f[yt] - f[r]
            e = np.zeros(C); e[yt] = 1.0; e[r] = -1.0
            mistake, step = m <= 0, 1.0
        else:
            m = None
            step = eta * np.sign(yt - f) if abs(yt - f) > epsilon else 0.0
            mistake, e = step != 0.0, 1.0
        margin = plus and task != "regression" and not mistake and 0 < m < 1
        if not (mistake or margin):
            continue
        if not SV:                                           # 1. S = ((x_t, step e)), K^-1 = [1]
            SV.append(x)
            alpha = np.array([step * e]) if C else np.array([step])
            Kinv = np.array([[1.0]])
            continue
        d = Kinv @ k                                         # 2.
        P = k @ d
        delta2 = max(1.0 - P, 0.0)
        delta = np.sqrt(delta2)
        delta2s[-1] = delta2
        if mistake:                                          # 3.
            if delta <= proj_eta or delta2 <= 1e-12 or (B is not None and len(SV) == B):
                alpha = alpha + step * (np.outer(d, e) if C else d)
            else:
                SV.append(x)
                alpha = np.concatenate([alpha, [step * e] if C else [step]])
                n = len(d)
                K2 = np.zeros((n + 1, n + 1))
                K2[:n, :n] = Kinv + np.outer(d, d) / delta2
                K2[:n, n] = K2[n, :n] = -d / delta2
                K2[n, n] = 1.0 / delta2
                Kinv = K2
            continue
        l = 1.0 - m                                          # 4. Projectron++ margin error
        Pp, dp = (2 * P, np.sqrt(2) * delta) if C else (P, delta)
        if not Pp > 0:
            continue
        if rule == "eta":
            if proj_eta > 0:
                thr = dp / proj_eta
            elif dp == 0:
                thr = 0.0
            else:
                continue
            if not l > thr:
                continue
            tau = min(l / Pp, 1.0, 2 * (l - thr) / Pp)
        else:
            tau = min(l / Pp, 1.0)
            if not tau * (2 * l - tau * Pp - 2 * U * dp) >= 0:
                continue
        alpha = alpha + tau * step * (np.outer(d, e) if C else d)
    scores = np.array(scores, dtype=float)
    SV = np.array(SV, dtype=float).reshape(-1, dim)
    return scores, SV, alpha, Kinv, delta2s


# --- §3.6 BPAs -------------------------------------------------------------------------------------

def ref_bpas(X, y, task, g, B, C_pa=1.0, n_classes=None):
    """Returns (scores, SV, alpha); S in slot order (SVs are replaced in place)."""
    X = np.asarray(X, dtype=float)
    T, dim = X.shape
    C = n_classes if task == "multiclass" else None
    SV, alpha, scores = [], [], []
    for t in range(T):
        x, yt = X[t], y[t]
        k = rbf(x, np.array(SV), g) if SV else np.zeros(0)
        f = k @ np.array(alpha) if SV else (np.zeros(C) if C else 0.0)
        scores.append(f)
        if task == "binary":
            l = max(0.0, 1.0 - yt * f)
            if l == 0:
                continue
            tau = min(C_pa, l / 1.0)                           # k_tt = 1
            if len(SV) < B:
                SV.append(x); alpha.append(tau * yt)
                continue
            Qs, betas = [], []
            for r in range(len(SV)):
                ar, krt = alpha[r], k[r]
                beta = ar * krt + tau * yt
                fr = f - ar * krt + beta
                Qs.append(0.5 * (ar ** 2 + beta ** 2 - 2 * ar * beta * krt) + C_pa * max(0.0, 1 - yt * fr))
                betas.append(beta)
        else:
            s = runner_up(f, yt)
            l = max(0.0, 1.0 - (f[yt] - f[s]))
            if l == 0:
                continue
            tau = min(C_pa, l / 2)
            e = np.zeros(C); e[yt] = 1.0; e[s] = -1.0
            if len(SV) < B:
                SV.append(x); alpha.append(tau * e)
                continue
            Qs, betas = [], []
            for r in range(len(SV)):
                ar, krt = alpha[r], k[r]
                beta = ar * krt + tau * e
                fr = f - ar * krt + beta
                dist = ar @ ar + beta @ beta - 2 * krt * (ar @ beta)
                lr = max(0.0, 1 - (fr[yt] - fr[runner_up(fr, yt)]))
                Qs.append(0.5 * dist + C_pa * lr)
                betas.append(beta)
        r = int(np.argmin(Qs))                                  # first on ties
        SV[r] = x
        alpha[r] = betas[r]
    return _pack(scores, SV, alpha, dim, C)


def ref_kernel_pa1(X, y, g, C_pa=1.0):
    """Unbudgeted binary kernel PA-I (§5.1: BPAs with B >= T): append tau y, tau = min(C, l)."""
    X = np.asarray(X, dtype=float)
    SV, alpha, scores = [], [], []
    for t in range(len(X)):
        f = rbf(X[t], np.array(SV), g) @ np.array(alpha) if SV else 0.0
        scores.append(f)
        l = max(0.0, 1.0 - y[t] * f)
        if l > 0:
            SV.append(X[t]); alpha.append(min(C_pa, l) * y[t])
    return np.array(scores)
