# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""BOGD and BOGD++, Bounded Online Gradient Descent (Zhao, Wang, Wu, Jin & Hoi, ICML 2012), §3.8.

Kernel OGD (§3.2) with a hard budget B kept by random removal with unbiased rescaling:

1. f = f_t(x_t); record; g = l'(f, y_t) (a vector for multiclass).
2. alpha_i <- (1 - eta lambda) alpha_i for every SV (O(1) through the SupportSet scale).
3. If g = 0: stop.  If |S| < B: append (x_t, -eta g); stop.
4. Removal probabilities over S in insertion order (§1.1): BOGD p_i = 1/B; BOGD++
   c_p = (B - 1)/sum_j ||alpha_j|| sqrt(k_jj), p_i = 1 - c_p ||alpha_i|| sqrt(k_ii) (k_ii = 1);
   negative p_i are clamped to 0 and p renormalised; all alpha_j = 0 gives the uniform p.
5. Draw r ~ p on the CHOICE stream (§1.5), consumed in call order:
   BOGD: ``r = integers(B)``; BOGD++: ``u = random()``, c = cumsum(p) (sequential sums),
   r = the first i with c_i > u c_{B-1}.  A NumPy oracle drawing from
   ``onlinekern.seeding.rng(seed, CHOICE)`` reproduces both: ``rng.integers(B)`` and
   ``c = np.cumsum(p); r = int(np.argmax(c > rng.random() * c[-1]))``.
6. Survivors: alpha_i <- alpha_i / (1 - p_i) (BOGD++ without clamping: alpha_i/(c_p ||alpha_i||),
   an alpha_i = 0 staying 0), then every component is clipped to [-eta gamma_c, eta gamma_c].
7. Delete r; append (x_t, -eta g).
"""
from libc.math cimport isfinite
from libc.string cimport memmove

from onlinekern._core.support cimport KernelCore, ok_first_gt, ok_find_i64, ok_coef_norms

cdef extern from *:
    """
    /* Step 6 for every coefficient: a = scale coef; a / den unless a = 0; clipped to [-bound,
     * bound]; stored back as a / scale -- the scalar rule's operations in its order, as
     * elementwise loops gcc vectorises (the division is computed for a = 0 too and discarded).
     * den[i] per slot (C coefficients each), or the constant den0 when den is NULL. */
    OKSV_MULTI(void, okbogd_rescale, (double *restrict coef, double scale, int C, Py_ssize_t n,
                                      const double *restrict den, double den0, double bound),
               (coef, scale, C, n, den, den0, bound),
        double a, q;
        if (den == NULL) {
            for (Py_ssize_t i = 0; i < n * C; i++) {
                a = scale * coef[i];
                q = a / den0;
                a = a != 0.0 ? q : a;
                a = a > bound ? bound : (a < -bound ? -bound : a);
                coef[i] = a / scale;
            }
            return;
        }
        if (C == 1) {
            for (Py_ssize_t i = 0; i < n; i++) {
                a = scale * coef[i];
                q = a / den[i];
                a = a != 0.0 ? q : a;
                a = a > bound ? bound : (a < -bound ? -bound : a);
                coef[i] = a / scale;
            }
            return;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            for (int c = 0; c < C; c++) {
                a = scale * coef[i * C + c];
                q = a / den[i];
                a = a != 0.0 ? q : a;
                a = a > bound ? bound : (a < -bound ? -bound : a);
                coef[i * C + c] = a / scale;
            })

    /* p_i = 1 - cp norm_i per slot, clamped at 0 (which changes nothing unless some p_i < 0, and
     * then step 4 clamps them); returns 1 if some p_i < 0.  Branch-free: about half of the p_i
     * are negative when any is. */
    OKSV_MULTI(int, okbogd_probs, (const double *restrict norms, double cp, Py_ssize_t n,
                                   double *restrict p), (norms, cp, n, p),
        int neg = 0;
        double q;
        for (Py_ssize_t i = 0; i < n; i++) {
            q = 1.0 - cp * norms[i];
            neg |= q < 0.0;
            p[i] = q < 0.0 ? 0.0 : q;
        }
        return neg;)

    /* The denominators of step 6 per slot: 1 - p_i (p clamped, renormalised or uniform), else
     * c_p norm_i. */
    OKSV_MULTI(void, okbogd_dens, (const double *restrict p, const double *restrict norms, double cp,
                                   int clamped, Py_ssize_t n, double *restrict den),
               (p, norms, cp, clamped, n, den),
        if (clamped)
            for (Py_ssize_t i = 0; i < n; i++) den[i] = 1.0 - p[i];
        else
            for (Py_ssize_t i = 0; i < n; i++) den[i] = cp * norms[i];)

    /* BOGD++ with one coefficient per SV: the norms ||alpha_i|| = sqrt(0 + a_i^2) by insertion
     * position, W gathered at a time and stored by slot, fused with their total in insertion
     * order, so the gathers hide in the latency of the sequential adds.  sqrt(RN(a^2)) = |a|
     * exactly in binary floating point when a^2 neither overflows nor underflows (Boldo, "Stupid
     * is as stupid does: taking the square root of the square of a floating-point number",
     * 2015), so lanes with 2^-500 < |a| < 2^500 take |a| and the others (0, tiny, huge, inf,
     * NaN) the square root itself: the same values as ok_coef_norms. */
    #define OKBOGD_TOTAL_BODY(VD, VL, W)                                                                 \
        VD av, lo, hi;                                                                                   \
        VL absm, ok;                                                                                     \
        double t = 0.0, a;                                                                               \
        Py_ssize_t j = 0, b_, nb = n / W;                                                                \
        int k;                                                                                           \
        for (k = 0; k < W; k++) { lo[k] = 0x1p-500; hi[k] = 0x1p500; absm[k] = 0x7fffffffffffffffLL; }   \
        for (b_ = 0; b_ < nb; b_++, j += W) {                                                            \
            for (k = 0; k < W; k++) av[k] = coef[pos[j + k]];                                            \
            for (k = 0; k < W; k++) av[k] = scale * av[k];                                               \
            av = (VD)((VL)av & absm);                                                                    \
            ok = (av > lo) & (av < hi);                                                                  \
            if (OKV_ANYW(W, ~ok))                                                                        \
                for (k = 0; k < W; k++)                                                                  \
                    if (!ok[k]) { a = av[k]; av[k] = sqrt(0.0 + a * a); }                                \
            for (k = 0; k < W; k++) {                                                                    \
                norms[pos[j + k]] = av[k];                                                               \
                t += av[k];                                                                              \
            }                                                                                            \
        }                                                                                                \
        for (; j < n; j++) {                                                                             \
            a = scale * coef[pos[j]];                                                                    \
            a = sqrt(0.0 + a * a);                                                                       \
            norms[pos[j]] = a;                                                                           \
            t += a;                                                                                      \
        }                                                                                                \
        return t;
    OKSV_MULTI_W(double, okbogd_total, (const double *restrict coef, double scale, const long long *restrict pos,
                                      Py_ssize_t n, double *restrict norms), (coef, scale, pos, n, norms), OKBOGD_TOTAL_BODY)

    /* The sum of the clamped p in insertion order (p_i at slot pos[j]), W gathered at a time;
     * loads only, so the gathers run ahead of the sequential adds. */
    #define OKBOGD_SUM_POS_BODY(VD, VL, W)                   \
        VD v;                                                \
        double s = 0.0;                                      \
        Py_ssize_t j = 0, b_, nb = n / W;                    \
        int k;                                               \
        for (b_ = 0; b_ < nb; b_++, j += W) {                \
            for (k = 0; k < W; k++) v[k] = ps[pos[j + k]];   \
            for (k = 0; k < W; k++) s += v[k];               \
        }                                                    \
        for (; j < n; j++) s += ps[pos[j]];                  \
        return s;
    OKSV_MULTI_W(double, okbogd_sum_pos, (const double *restrict ps, const long long *restrict pos, Py_ssize_t n),
               (ps, pos, n), OKBOGD_SUM_POS_BODY)

    /* ... and their renormalisation p_i / s (a true division, at the level's vector width). */
    OKSV_MULTI(void, okbogd_divide, (double *restrict ps, double s, Py_ssize_t n), (ps, s, n),
        for (Py_ssize_t i = 0; i < n; i++) ps[i] = ps[i] / s;)

    /* BOGD++ with one coefficient per SV: the cumulative sum of p in insertion order
     * (p[j] = ps[pos[j]], kept for the draw) fused with step 6 for W slots per W
     * positions, so the vector work hides in the latency of the sequential adds.  The
     * denominator of slot i is c_p norm_i when p is unclamped, else 1 - p_i (clamped,
     * renormalised or uniform).  The same operations as okbogd_dens + okbogd_rescale. */
    #define OKBOGD_CUM_RESCALE_BODY(VD, VL, W)                                                         \
        VD sv, cpv, bv, nbv, zero, one, av, qv;                                                        \
        double c = 0.0, a, q;                                                                          \
        Py_ssize_t j = 0, b_, nb = n / W;                                                              \
        int k;                                                                                         \
        for (k = 0; k < W; k++) {                                                                      \
            sv[k] = scale; cpv[k] = cp; bv[k] = bound; nbv[k] = -bound; zero[k] = 0.0; one[k] = 1.0;   \
        }                                                                                              \
        for (b_ = 0; b_ < nb; b_++, j += W) {                                                          \
            av = sv * OKV_LOADT(VD, coef + j);                                                         \
            if (clamped)                                                                               \
                qv = av / (one - OKV_LOADT(VD, ps + j));                                               \
            else                                                                                       \
                qv = av / (cpv * OKV_LOADT(VD, norms + j));                                            \
            av = (VD)OKV_SELT(VL, av != zero, qv, av);                                                 \
            av = (VD)OKV_SELT(VL, av > bv, bv, OKV_SELT(VL, av < nbv, nbv, av));                       \
            av = av / sv;                                                                              \
            memcpy(coef + j, &av, sizeof av);                                                          \
            for (k = 0; k < W; k++) {                                                                  \
                p[j + k] = ps[pos[j + k]];                                                             \
                c += p[j + k];                                                                         \
                cum[j + k] = c;                                                                        \
            }                                                                                          \
        }                                                                                              \
        for (; j < n; j++) {                                                                           \
            a = scale * coef[j];                                                                       \
            q = a / (clamped ? 1.0 - ps[j] : cp * norms[j]);                                           \
            a = a != 0.0 ? q : a;                                                                      \
            a = a > bound ? bound : (a < -bound ? -bound : a);                                         \
            coef[j] = a / scale;                                                                       \
            p[j] = ps[pos[j]];                                                                         \
            c += p[j];                                                                                 \
            cum[j] = c;                                                                                \
        }                                                                                              \
        return c;
    OKSV_MULTI_W(double, okbogd_cum_rescale, (double *restrict coef, double scale, const long long *restrict pos,
                                            const double *restrict ps, const double *restrict norms, double cp,
                                            int clamped, double bound, Py_ssize_t n, double *restrict p,
                                            double *restrict cum),
               (coef, scale, pos, ps, norms, cp, clamped, bound, n, p, cum), OKBOGD_CUM_RESCALE_BODY)
    """
    void okbogd_rescale(double* coef, double scale, int C, Py_ssize_t n, const double* den, double den0,
                        double bound) noexcept nogil
    int okbogd_probs(const double* norms, double cp, Py_ssize_t n, double* p) noexcept nogil
    double okbogd_total(const double* coef, double scale, const long long* pos, Py_ssize_t n,
                        double* norms) noexcept nogil
    double okbogd_cum_rescale(double* coef, double scale, const long long* pos, const double* ps,
                              const double* norms, double cp, int clamped, double bound, Py_ssize_t n, double* p,
                              double* cum) noexcept nogil
    double okbogd_sum_pos(const double* ps, const long long* pos, Py_ssize_t n) noexcept nogil
    void okbogd_divide(double* ps, double s, Py_ssize_t n) noexcept nogil
    void okbogd_dens(const double* p, const double* norms, double cp, int clamped, Py_ssize_t n,
                     double* den) noexcept nogil
from onlinekern._core.losses cimport TaskLoss
from onlinekern._core.rng cimport RandomStream

import numbers

import numpy as np

from onlinekern.base import KernelLearner, is_auto
from onlinekern.losses import smooth_step
from onlinekern.learners.ogd import ALL_LOSSES, learner_loss, task_loss
from onlinekern.seeding import CHOICE

cdef enum Sampling:
    SAMPLING_UNIFORM = 0      # BOGD
    SAMPLING_NONUNIFORM = 1   # BOGD++

UNIFORM = SAMPLING_UNIFORM
NONUNIFORM = SAMPLING_NONUNIFORM


cdef bint nonuniform_probabilities(const double* norms, Py_ssize_t n, double* p, double* cp) noexcept nogil:
    """BOGD++ removal probabilities from the norms ||alpha_i|| sqrt(k_ii) (step 4).

    Writes p[0:n] and c_p (0 when every norm is 0); returns True when p is not the closed form
    1 - c_p ||alpha_i|| (clamped and renormalised, or uniform because all alpha are 0).
    """
    cdef Py_ssize_t i
    cdef double total = 0.0, s = 0.0
    cdef bint clamped = False
    for i in range(n):
        total += norms[i]
    if not total > 0.0:
        cp[0] = 0.0
        for i in range(n):
            p[i] = 1.0 / n
        return True
    cp[0] = (n - 1) / total
    for i in range(n):
        p[i] = 1.0 - cp[0] * norms[i]
        if p[i] < 0.0:
            clamped = True
    if clamped:
        for i in range(n):
            if p[i] < 0.0:
                p[i] = 0.0
            s += p[i]
        for i in range(n):
            p[i] = p[i] / s
    return clamped


def bogdpp_probabilities(norms):
    """BOGD++ removal probabilities (step 4 of §3.8) from Python (tests, §5.12).

    Parameters
    ----------
    norms : array (n,) of ||alpha_i|| sqrt(k_ii) >= 0, in insertion order.

    Returns
    -------
    (p, c_p, clamped)
    """
    cdef double[::1] nv = np.ascontiguousarray(norms, dtype=np.float64)
    cdef Py_ssize_t n = nv.shape[0]
    if n < 1:
        raise ValueError("need at least one norm")
    if not np.all(np.isfinite(nv)) or np.any(np.asarray(nv) < 0):
        raise ValueError("norms must be finite and non-negative")
    p = np.zeros(n)
    cdef double[::1] pv = p
    cdef double cp
    clamped = nonuniform_probabilities(&nv[0], n, &pv[0], &cp)
    return p, cp, bool(clamped)


cdef class BOGDCore(KernelCore):
    cdef public double eta, lam, coef_bound
    cdef readonly Py_ssize_t budget
    cdef readonly int sampling
    cdef public TaskLoss loss
    cdef public RandomStream rng
    cdef object buf_                  # scratch arrays below (kept alive here)
    cdef long long* pos               # budget: slot of the SV at insertion position j (0 = oldest)
    cdef double* p                    # budget: removal probabilities of the last removal step
    cdef double* norms                # budget: ||alpha_i|| by slot
    cdef double* ps                   # budget: removal probabilities by slot
    cdef double* cum                  # budget: their cumulative sum in insertion order
    cdef double* den                  # budget: rescaling denominators by slot
    cdef public Py_ssize_t n_p        # length of the last p (0 before any removal)
    cdef bint p_uniform               # the last removal drew uniformly (p_j = 1/n_p)
    cdef public long long n_removals

    def _setup_budget(self, Py_ssize_t budget, int sampling, double eta, double lam, double coef_bound, seed,
                      rng_state=None):
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        if sampling not in (UNIFORM, NONUNIFORM):
            raise ValueError(f"unknown sampling {sampling!r}")
        for name, v in (("eta", eta), ("coef_bound", coef_bound)):
            if not (isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        if not (isfinite(lam) and lam >= 0):
            raise ValueError(f"lam must be a non-negative finite number, got {lam!r}")
        if self.sv.n > budget:
            raise ValueError("support set holds more vectors than the budget")
        self.budget = budget
        self.sampling = sampling
        self.eta, self.lam, self.coef_bound = eta, lam, coef_bound
        self.rng = RandomStream(seed, CHOICE, state=rng_state)
        self.buf_ = (np.zeros(budget, dtype=np.int64), np.zeros(5 * budget))
        cdef long long[::1] a = self.buf_[0]
        cdef double[::1] b = self.buf_[1]
        self.pos = &a[0]
        self.p = &b[0]
        self.norms = &b[budget]
        self.ps = &b[2 * budget]
        self.cum = &b[3 * budget]
        self.den = &b[4 * budget]
        order = self.sv.insertion_order
        self.buf_[0][:len(order)] = order
        self.n_p = 0
        self.p_uniform = False

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef int c
        cdef bint nonzero = False
        cdef Py_ssize_t slot
        self.kernel_scores(x, idx, nnz, out)                   # 1.
        self.loss.grad(out, y, self.n_outputs, g)
        if self.lam > 0.0:                                     # 2. (exactly kernel OGD's shrink)
            self.sv.shrink(1.0 - self.eta * self.lam)
        for c in range(self.n_outputs):
            nonzero = nonzero or g[c] != 0.0
            g[c] = -self.eta * g[c]
        if not nonzero:                                        # 3.
            return 0
        if self.sv.n >= self.budget:                           # 4.-7.
            self.remove_one()
        slot = self.sv.append(x, idx, nnz, self.xsq, g)
        if slot < 0:
            return -1
        self.pos[self.sv.n - 1] = slot
        return 0

    cdef void remove_one(self) noexcept nogil:
        # The same operations as the rule of the module docstring, arranged so that every O(S)
        # pass is elementwise over the slots (vectorised C above) and only the sums that are
        # defined in insertion order stay sequential: the total of the norms, the sum of clamped p
        # and the cumulative sum, which is kept so that the draw is one vector search.
        cdef Py_ssize_t n = self.sv.n, j, r, i
        cdef int C = self.n_outputs
        cdef double cp = 0.0, bound = self.eta * self.coef_bound, u, cum, total, s
        cdef bint clamped = True, fused
        cdef double* ps = self.ps
        cdef long long* pos = self.pos
        if self.sampling == SAMPLING_UNIFORM:
            # p_j = 1/n for every position (last_probabilities builds it when asked)
            r = self.rng.integers(n)
            self.p_uniform = True
            # 6. with den = 1 - p_j; slot pos[r] is rescaled too, and deleted below
            okbogd_rescale(self.sv.coef, self.sv.scale, C, n, NULL, 1.0 - 1.0 / n, bound)
        else:
            self.p_uniform = False
            # 4. the norms by slot and their total in insertion order (§1.1)
            if C == 1:
                total = okbogd_total(self.sv.coef, self.sv.scale, pos, n, self.norms)
            else:
                ok_coef_norms(self.sv.coef, self.sv.scale, C, n, 1, self.norms)
                total = 0.0
                for j in range(n):
                    total += self.norms[pos[j]]
            if not total > 0.0:
                for i in range(n):
                    ps[i] = 1.0 / n
            else:
                cp = (n - 1) / total
                clamped = okbogd_probs(self.norms, cp, n, ps)
                if clamped:                                    # (clamped above) renormalise by the
                    s = okbogd_sum_pos(ps, pos, n)             # sum in insertion order
                    okbogd_divide(ps, s, n)
            fused = C == 1
            if fused:                                          # 5. c = cumsum(p), with 6.
                cum = okbogd_cum_rescale(self.sv.coef, self.sv.scale, pos, ps, self.norms, cp, clamped, bound,
                                         n, self.p, self.cum)
            else:
                cum = 0.0                                      # 5. c = cumsum(p)
                for j in range(n):
                    self.p[j] = ps[pos[j]]
                    cum += self.p[j]
                    self.cum[j] = cum
            u = self.rng.random() * cum
            r = ok_first_gt(self.cum, n, u)
            if r < 0:                                          # rounding guard: last p_j > 0
                r = n - 1
                while r > 0 and self.p[r] == 0.0:
                    r -= 1
            # 6. (BOGD++ without clamping: alpha_i / (c_p ||alpha_i||) = 1 - p_i before rounding)
            if not fused:
                okbogd_dens(ps, self.norms, cp, clamped, n, self.den)
                okbogd_rescale(self.sv.coef, self.sv.scale, C, n, self.den, 1.0, bound)
        self.n_p = n
        self.remove_position(r)                                # 7.
        self.n_removals += 1

    cdef void remove_position(self, Py_ssize_t j) noexcept nogil:
        """Delete the SV at insertion position j and keep pos consistent with the slot layout."""
        cdef Py_ssize_t n = self.sv.n, slot = self.pos[j], last = n - 1, q
        memmove(self.pos + j, self.pos + j + 1, (n - 1 - j) * sizeof(long long))
        self.sv.remove(slot)                                   # slot `last` moves into `slot`
        if slot != last:
            q = ok_find_i64(self.pos, n - 1, last)
            if q >= 0:
                self.pos[q] = slot

    @property
    def last_probabilities(self):
        """Removal probabilities of the last removal step, by insertion position (tests, §5.12)."""
        if self.p_uniform:
            return np.full(self.n_p, 1.0 / self.n_p)
        return np.array([self.p[j] for j in range(self.n_p)])

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(eta=self.eta, lam=self.lam, coef_bound=self.coef_bound, budget=self.budget,
                  sampling=self.sampling, loss=self.loss.spec, rng=self.rng.state, n_removals=self.n_removals)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        budget = int(st["budget"])
        if self.sv.budget != budget:
            raise ValueError("support set does not match the budget")
        self._setup_budget(budget, int(st["sampling"]), float(st["eta"]), float(st["lam"]),
                           float(st["coef_bound"]), 0, st["rng"])
        self.loss = task_loss(st["loss"], self.task)
        self.n_removals = int(st["n_removals"])


class _BOGD(KernelLearner):
    """Shared Python half of BOGD and BOGDPlusPlus (not registered: no family)."""

    losses = ALL_LOSSES
    tasks = ("binary", "multiclass", "regression")
    paper = "Zhao, Wang, Wu, Jin & Hoi, ICML 2012"
    _sampling = UNIFORM
    paper_defaults = {"gamma": None, "budget": 100, "eta": 0.2, "lam": 1e-3}
    #: gamma="auto" races the widths until the budget has filled 3 times
    #: (:func:`onlinekern.selection.race_stages`): BOGD adds nearly every example, and a sharp
    #: kernel leads only once the budget is full (whole streams, permutation 0: ijcnn1 9.57 %, the
    #: majority rate, -> 8.79 %; w8a 2.98 -> 2.54 %; a9a 17.99 -> 18.22 %; cod-rna.tr 13.04 -> 12.98 %).
    race_budget_fills = 3

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """budget: :data:`onlinekern.params.AUTO_BUDGET`; eta: 0.2 times 1/L for a smooth loss
        (:func:`onlinekern.losses.smooth_step`); lam: 1/(eta B), the shrink that cancels the rescaling.

        After the budget fills, every step rescales the survivors by about B/(B - 1) (exactly so
        for BOGD's uniform removal), so with the papers' lam = 1e-3 (shrink 1 - 2e-4 per step at
        eta = 0.2) the old coefficients grow geometrically until the clip at eta gamma_c holds
        them, and the prediction is a sum of B clipped, randomly surviving terms: BOGD regression
        was no better than the running mean on casp, cadata and abalone.  A shrink of
        1 - eta lam = 1 - 1/B cancels the growth on average (the coefficients stay at the size
        they entered with), and a budget of 1,000 makes the removal noise ~3x smaller than at
        100 (BENCHMARKS.md "Defaults": BOGD-l2 RMSE / running mean 0.67-0.87 on the three
        regression sets against 0.96-1.06 with the papers' values).
        """
        if name == "eta":
            return smooth_step(self.paper_defaults["eta"], self.loss, task, n_outputs, self.quantile)
        if name == "lam":                   # budget and eta are resolved before lam (signature order)
            budget = self.budget_ if is_auto(self.budget) else self.budget
            eta = self.eta_ if is_auto(self.eta) else self.eta
            return 1.0 / (float(eta) * budget)
        return super().auto_value(name, X, task, n_outputs, n_stream)

    def __init__(self, budget="auto", gamma="auto", eta="auto", lam="auto", coef_bound=10.0, loss="hinge", epsilon=0.1,
                 huber_delta=1.0, quantile=0.5, preset="auto", seed=0, n_threads=None):
        self.budget = budget
        self.gamma = gamma
        self.preset = preset
        self.eta = eta
        self.lam = lam
        self.coef_bound = coef_bound
        self.loss = loss
        self.epsilon = epsilon
        self.huber_delta = huber_delta
        self.quantile = quantile
        self.seed = seed
        self.n_threads = n_threads

    def _validate_params(self):
        super()._validate_params()
        v = self.coef_bound
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
            raise ValueError(f"coef_bound must be a positive finite number, got {v!r}")

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = BOGDCore()
        budget = int(self.param_value("budget"))
        core._setup_kernel(n_features, task, n_outputs, gamma, budget, self._n_threads())
        core._setup_budget(budget, self._sampling, float(self.param_value("eta")), float(self.param_value("lam")),
                           float(self.coef_bound), self.seed)
        core.loss = learner_loss(self, task)
        return core

    @property
    def n_removals_(self):
        """Removal steps so far."""
        self._check_fitted()
        return int(self.core_.n_removals)


class BOGD(_BOGD):
    """BOGD: kernel OGD on a budget with uniform random removal and unbiased rescaling.

    Zhao, Wang, Wu, Jin & Hoi, "Fast bounded online gradient descent algorithms for scalable
    kernel-based online learning", ICML 2012.  ALGORITHMS.md §3.8 (``--sampling uniform``).

    Parameters
    ----------
    budget : int or 'auto'
        Maximum number of SVs B; 'auto' (default): 1,000 (the 'paper' preset: 100, KOL).
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online among multiples
        of the median-heuristic width, with and without dividing each feature by its range or standard deviation, by a
        race whose first halving waits until the budget has filled 3 times (3 B, 9 B and 21 B
        examples: onlinekern.selection.race_stages; the 'paper' preset: the papers' width);
        None = 1/n_features.
    eta : float or 'auto'
        Step size; 'auto' (default): 0.2 (the 'paper' preset: LSOKL Matlab), times 4 for the logistic loss and max(2, K/2) for softmax over K classes (:func:`onlinekern.losses.smooth_step`).
    lam : float or 'auto'
        Regularisation: every step shrinks all coefficients by 1 - eta*lam; 'auto' (default):
        1/(eta B), which cancels the removals' rescaling on average (the 'paper' preset: 1e-3, KOL).
    coef_bound : float
        gamma_c: after a removal every survivor's coefficient is clipped to [-eta gamma_c,
        eta gamma_c] (10, LSOKL Matlab ``gamma``).
    loss : str
        hinge (default), logistic, squared-hinge; squared, absolute, epsilon-insensitive, huber,
        quantile (regression); multiclass (ext, vector alpha): hinge (Crammer–Singer), logistic,
        softmax.  Softmax on two classes is the logistic loss on the binary score f = s_1 - s_0
        (:func:`onlinekern.losses.binary_form`): one score, the logistic step, and
        ``predict_proba`` is [1 - sig(f), sig(f)].
    epsilon, huber_delta, quantile : float
        Loss parameters.
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Seeds the removal choices (CHOICE stream) and the median heuristic.
    n_threads : int or None
        Threads for kernel sums (None: all cores, or OMP_NUM_THREADS); results never depend on it.
    """

    family = "bogd"
    summary = "bounded OGD: uniform random removal with unbiased rescaling"
    _sampling = UNIFORM


class BOGDPlusPlus(_BOGD):
    """BOGD++: BOGD removing an SV with probability decreasing in its coefficient norm.

    Zhao, Wang, Wu, Jin & Hoi, ICML 2012.  ALGORITHMS.md §3.8 (``--sampling nonuniform``):
    p_i = 1 - c_p ||alpha_i||, c_p = (B - 1)/sum_j ||alpha_j|| (clamped at 0 and renormalised).

    Parameters
    ----------
    budget : int or 'auto'
        Maximum number of SVs B; 'auto' (default): 1,000 (the 'paper' preset: 100, KOL).
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online among multiples
        of the median-heuristic width, with and without dividing each feature by its range or standard deviation, by a
        race whose first halving waits until the budget has filled 3 times (3 B, 9 B and 21 B
        examples: onlinekern.selection.race_stages; the 'paper' preset: the papers' width);
        None = 1/n_features.
    eta : float or 'auto'
        Step size; 'auto' (default): 0.2 (the 'paper' preset: LSOKL Matlab), times 4 for the logistic loss and max(2, K/2) for softmax over K classes (:func:`onlinekern.losses.smooth_step`).
    lam : float or 'auto'
        Regularisation: every step shrinks all coefficients by 1 - eta*lam; 'auto' (default):
        1/(eta B), which cancels the removals' rescaling on average (the 'paper' preset: 1e-3, KOL).
    coef_bound : float
        gamma_c: after a removal every survivor's coefficient is clipped to [-eta gamma_c,
        eta gamma_c] (10, LSOKL Matlab ``gamma``).
    loss : str
        hinge (default), logistic, squared-hinge; squared, absolute, epsilon-insensitive, huber,
        quantile (regression); multiclass (ext, vector alpha): hinge (Crammer–Singer), logistic,
        softmax.  Softmax on two classes is the logistic loss on the binary score f = s_1 - s_0
        (:func:`onlinekern.losses.binary_form`): one score, the logistic step, and
        ``predict_proba`` is [1 - sig(f), sig(f)].
    epsilon, huber_delta, quantile : float
        Loss parameters.
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Seeds the removal choices (CHOICE stream) and the median heuristic.
    n_threads : int or None
        Threads for kernel sums (None: all cores, or OMP_NUM_THREADS); results never depend on it.
    """

    family = "bogdpp"
    summary = "bounded OGD++: removal probability decreasing in the coefficient norm"
    _sampling = NONUNIFORM
