"""NumPy oracles of DSG, UDSG and CDSG written from the papers' text, not from the compiled code.

Sources (../shared/papers), quoted where they decide something:

* Dai et al., NIPS 2014 (001), Algorithms 1-2 and eq. (7): after t iterations the model is the
  unrolled sum f_{t+1}(.) = sum_{i<=t} a_t^i zeta_i(.), a_t^i = -gamma_i prod_{j=i+1}^t (1 - gamma_j nu),
  where zeta_i(.) = l'(f_i(x_i), y_i) phi_omega_i(x_i) phi_omega_i(.) is iteration i's doubly
  stochastic functional gradient.  The oracle keeps that sum literally: one record per iteration
  (its block, its step, its batch and gradients) and the coefficients a_t^i recomputed from the
  product of all later decays, instead of decaying stored coefficients in place.
* Li & Poczos, UAI 2016 (000), Algorithm 3 (UDSG), Algorithm 4 and eq. (9) (CDSG), Assumption 2.3
  (M bounds every example's |l'|).  A reuse iteration with step eta decays every earlier term by
  (1 - eta nu) and adds -eta zeta on the old block, so a_t^i uses each iteration's own step.
* ALGORITHMS.md §3.13-3.15 for what the papers leave open: the block of F paired features
  z_j(x) = F^{-1/2}[cos Omega_j^T x; sin Omega_j^T x], the mini-batch mean gradient, (i - 1) mod (G + U)
  for UDSG, the block preconditioner; §1.5 for the random draws: E_j is the public counter-based
  generator counter_rng.normals(seed, DSG_BLOCK = 2, j, (d, F)), Omega_j = sqrt(2g) E_j, and UDSG's
  choices come from the public stream (seed, CHOICE = 3) of tests/reference.py.

Without the preconditioner a term is evaluated through the kernel estimate the block carries,
z_j(x) . z_j(x_b) = (1/F) sum_c cos(omega_c^T (x - x_b)), so predictions never form the block
coefficients; ``blocks`` forms them (sum of a_t^i times the feature-space gradient) for comparing
models.  Targets are encoded as in tests/reference.py (binary +-1, class index, real).
"""
import numpy as np

from onlinekern._core.counter_rng import normals

import reference as ref

DSG_BLOCK, CHOICE = 2, 3          # ALGORITHMS.md §1.5 stream numbers


def block_E(seed, j, d, F):
    """E_j (d x F) of block j >= 1: standard normals of the public counter-based generator."""
    return normals(seed, DSG_BLOCK, j, (d, F))


def z_block(X, E, g):
    """Rows z_j(x) = F^{-1/2} [cos(Omega^T x); sin(Omega^T x)], Omega = sqrt(2g) E."""
    A = np.atleast_2d(X) @ (np.sqrt(2.0 * g) * E)
    return np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(E.shape[1])


def grad(loss, task, f, y, **kw):
    """l'(f, y) as a vector of length C (C = 1 for binary/regression); ALGORITHMS.md §2."""
    if task == "multiclass":
        return ref.grad(task, loss, f, int(y))
    return np.array([ref.dloss(loss, f[0], y, **kw)])


def loss_bound(loss, task, huber_delta=1.0, quantile=0.5):
    """sup over f, y of ||l'(f, y)|| (Assumption 2.3's M), from the §2 derivative formulas; None
    when l' grows without bound (squared: f - y; squared hinge: -2y max(0, 1 - yf))."""
    if task == "multiclass":       # softmax p - e_y, Crammer-Singer e_r - e_y: two unit-size entries
        return np.sqrt(2.0)
    return {"hinge": 1.0, "logistic": 1.0, "absolute": 1.0, "epsilon-insensitive": 1.0,
            "novelty": 1.0, "huber": huber_delta, "quantile": max(quantile, 1.0 - quantile)}.get(loss)


def cdsg_step(beta, gbar, gam, M, sigma, B):
    """|eta| of eq. (9): the most negative eta with
    2||beta + eta gbar||^2 + 2 (eta M sigma)^2 / B^2 <= ||beta||^2 + gam^2 ||gbar||^2,
    0 if no negative eta satisfies it.  The inequality is expanded as a polynomial in eta by
    numpy.polynomial and its real roots bound the feasible interval."""
    P = np.polynomial.Polynomial
    beta, gbar = np.atleast_1d(beta).astype(float), np.atleast_1d(gbar).astype(float)
    lhs = sum(2.0 * P([b, g]) ** 2 for b, g in zip(beta, gbar)) + P([0.0, 0.0, 2.0 * (M * sigma / B) ** 2])
    poly = lhs - (beta @ beta + gam * gam * (gbar @ gbar))
    coef = np.trim_zeros(poly.coef, "b")
    if len(coef) < 3:              # gbar = 0 and sigma M = 0: no step changes the left side
        return 0.0
    a2, a1, a0 = coef
    disc = a1 * a1 - 4.0 * a2 * a0
    if disc < 0.0:                 # (9) holds for no eta
        return 0.0
    lo = min(P(coef).roots().real)  # the feasible set is [lo, hi]; a descent step needs eta < 0
    return max(0.0, -lo)


class Model:
    """f_{t+1} = sum_i a_t^i zeta_i: one record per iteration, coefficients from the step history."""

    def __init__(self, g, C, seed, d, F):
        self.g, self.C, self.seed, self.d, self.F = g, C, seed, d, F
        self.omegas = []           # Omega_j of block j + 1
        self.terms = []            # (block index, batch rows, gradients (B, C), H (2F, C) or None)
        self.steps = []            # eta of every iteration (the step its own term enters with)

    def new_block(self):
        self.omegas.append(np.sqrt(2.0 * self.g) * block_E(self.seed, len(self.omegas) + 1, self.d, self.F))
        return len(self.omegas) - 1

    def add(self, k, Xb, Gb, eta, H=None):
        self.terms.append((k, Xb, Gb, H))
        self.steps.append(eta)

    def a(self, nu):
        """a_t^i = -eta_i prod_{j > i} (1 - eta_j nu) for every term i."""
        decay = [1.0 - e * nu for e in self.steps] + [1.0]
        tail = np.cumprod(decay[::-1])[::-1]          # tail[i] = prod_{j >= i} decay_j
        return [-e * tail[i + 1] for i, e in enumerate(self.steps)]

    def f(self, Xq, nu):
        """f(x) for the rows of Xq, (n, C)."""
        Xq = np.atleast_2d(Xq)
        out = np.zeros((Xq.shape[0], self.C))
        for ai, (k, Xb, Gb, H) in zip(self.a(nu), self.terms):
            Om = self.omegas[k]
            if H is None:          # zeta(x) = (1/B) sum_b g_b (1/F) sum_c cos(omega_c^T (x - x_b))
                K = np.cos((Xq @ Om)[:, None, :] - (Xb @ Om)[None, :, :]).mean(axis=2)
                out += ai * (K @ Gb) / Xb.shape[0]
            else:                  # preconditioned: z(x)^T P^{-1} (1/B) sum_b z(x_b) g_b^T
                out += ai * (z_block(Xq, Om / np.sqrt(2.0 * self.g), self.g) @ H)
        return out

    def blocks(self, nu):
        """Block coefficients A_j (2F x C) and scalar parts beta_j (C): sums of a_t^i times the
        feature-space gradient (1/B) sum_b z_j(x_b) g_b^T and times the mean gradient."""
        A = [np.zeros((2 * self.F, self.C)) for _ in self.omegas]
        beta = [np.zeros(self.C) for _ in self.omegas]
        for ai, (k, Xb, Gb, H) in zip(self.a(nu), self.terms):
            if H is None:
                H = z_block(Xb, self.omegas[k] / np.sqrt(2.0 * self.g), self.g).T @ Gb / Xb.shape[0]
            A[k] = A[k] + ai * H
            beta[k] = beta[k] + ai * Gb.mean(axis=0)
        return A, beta


def ref_dsg(X, y, task, *, C=1, g, B, F, nu=1e-5, theta=1e4, t0=1e4, seed=0, loss="logistic",
            variant="dsg", G=1, U=1, M=None, sigma=1.0, precondition=False, novelty=False,
            epsilon=0.1, huber_delta=1.0, quantile=0.5, return_state=False):
    """Pre-update scores (T, C) of DSG / UDSG / CDSG on the stream (X, y) in row order.

    Every example of a mini-batch is scored by the model of the start of its iteration; the update
    follows the B-th example and a trailing partial batch stays pending.  ``M=None``: Assumption
    2.3's bound of the loss (``loss_bound``), or for a loss without one the largest ||l'|| of the
    examples seen so far (this iteration's included).  With ``novelty`` the loss is
    max(0, o - f) (§2): l' = -1 when f < o, the score is f - o and o += gamma_i (nu - fraction).
    """
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)
    T, d = X.shape
    kw = dict(epsilon=epsilon, huber_delta=huber_delta, quantile=quantile)
    model = Model(g, C, seed, d, F)
    choice = ref.stream(seed, CHOICE)
    M_loss = loss_bound("novelty" if novelty else loss, task, huber_delta, quantile)
    largest_seen = 0.0
    o, i, n_reuse = 0.0, 0, 0
    scores = np.zeros((T, C))
    for start in range(0, T, B):
        rows = np.arange(start, min(start + B, T))
        scores[rows] = model.f(X[rows], nu) - o
        if len(rows) < B:
            break                                   # pending: scored, not learned from
        i += 1
        gam = theta / (i + t0)                      # gamma_i = theta / (i + t0)
        if novelty:
            Gb = np.where(scores[rows] < 0.0, -1.0, 0.0)
        else:
            Gb = np.array([grad(loss, task, scores[r], y[r], **kw) for r in rows])
        gbar = Gb.mean(axis=0)
        m = len(model.omegas)
        k, eta = None, gam                          # None: Alg. 1's new block
        if variant == "cdsg":
            largest_seen = max(largest_seen, float(np.max(np.linalg.norm(Gb, axis=1))))
        if variant == "udsg" and m > 0 and (i - 1) % (G + U) >= G:
            k = int(choice.integers(m))             # Alg. 3: omega_k from the m old blocks, uniformly
        elif variant == "cdsg" and m > 0:
            Mi = M if M is not None else (M_loss if M_loss is not None else largest_seen)
            _, beta = model.blocks(nu)
            etas = np.array([cdsg_step(b, gbar, gam, Mi, sigma, B) for b in beta])
            if etas.max() > gam:                    # Alg. 4: reuse when the best |eta_k| beats gamma_t
                k = int(np.flatnonzero(etas == etas.max())[0])
                eta = float(etas[k])
        if k is None:
            k = model.new_block()
        else:
            n_reuse += 1
        H = None
        if precondition:
            Z = z_block(X[rows], model.omegas[k] / np.sqrt(2.0 * g), g)
            H = np.linalg.solve(Z.T @ Z / B + (nu + 1e-7) * np.eye(2 * F), Z.T @ Gb / B)
        model.add(k, X[rows], Gb, eta, H)
        if novelty:
            o += gam * (nu - np.mean(Gb[:, 0] != 0.0))
    if return_state:
        A, beta = model.blocks(nu)
        state = dict(A=A, beta=beta, E=[Om / np.sqrt(2.0 * g) for Om in model.omegas], offset=o, n_iter=i,
                     n_reuse=n_reuse, pending=T % B, model=model, nu=nu)
        return scores, state
    return scores


def decision(state, Xq, g, C=1, novelty=False):
    """f(x) (- o) of the oracle model for the rows of Xq, (n, C)."""
    Xq = np.asarray(Xq.toarray() if hasattr(Xq, "toarray") else Xq, dtype=float)
    out = state["model"].f(Xq, state["nu"])
    return out - state["offset"] if novelty else out
