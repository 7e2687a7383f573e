# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""RRF, Reparameterized Random Features (Nguyen, Le, Bui & Phung, IJCAI 2017), ALGORITHMS.md §3.12.

The random Fourier map of FOGD with one learned log-scale per input feature: Omega = diag(e^rho) E,
E fixed (FEATURES stream), so the kernel approximated is exp(-sum_n g_n (x_n - x'_n)^2) with
g_n = e^{2 rho_n} / 2.  One step (paper Alg. 1 and eq. (9); spec §3.12 steps 1-5):

1. a = Omega^T x; z = D^{-1/2} [cos a; sin a]; f = w^T z; record.
2. h = l'(f, y) and v = w (binary, regression); multiclass: h = l'_m of the margin m = f_y - f_r
   with the runner-up r held fixed, v = w_y - w_r.
3. grad_w = h z + lambda w (multiclass: +h z on w_y, -h z on w_r, lambda w_c on every class).
4. grad_rho_n = h x_n e^{rho_n} sum_j E_nj q_j,  q_j = D^{-1/2}(v^s_j cos a_j - v^c_j sin a_j):
   one O(nnz D) pass like the projection, over the nonzeros of x only.
5. w <- w - eta grad_w; rho <- clip(rho - eta_rho grad_rho) (both from the pre-update values).

Overflow guard (not in the paper): rho_n is clipped to [rho_0 - L, rho_0 + L], L = ln(1e8), i.e.
every per-feature frequency scale e^{rho_n} stays within a factor 1e8 of its start sqrt(2 g0)
(g_n within 1e16 of g0).  The rho-gradient carries a factor e^{rho_n}, so a too large eta_rho
feeds on itself: rho grows, the gradient grows, and without a bound e^{rho} overflows and the
features become cos(inf) = NaN.  Inside the interval |a_j| <= 1e8 e^{rho_0} sum_n |x_n E_nj|, so
scores stay finite; a width 1e8 times narrower or wider than the initial one is far outside any
useful kernel (the IJCAI'17 grid spans 2^-8..2^8).  A non-finite step (NaN) leaves rho_n
unchanged.  Every clipped or refused coordinate update is counted in ``n_rho_clips``.
The guard keeps scores finite; it does not make a too large eta_rho harmless.  One large negative
step can push rho_n far down, and since the gradient carries e^{rho_n} the feature then stays out
of the kernel: on ijcnn1 at eta_rho = 3e-2 (three times the paper's largest step) this happens in
2 of 10 permutations, at 1e-2 in none (BENCHMARKS.md, RRF section).

Wide data (the feature map's keyed rule, onlinekern._core.features): rho, e^rho and the gradient
accumulator live at the *slots* of a ColumnMap (columns numbered in order of first appearance)
instead of at the column index, so their memory follows the columns seen, not n_features.  A
column enters the map (rho_0, e^{rho_0} = sqrt(2 g0), as every column starts) when a training step
first meets it; prediction only looks columns up, and a column never trained on scales by
sqrt(2 g0), its initial value, exactly as a stored rho_0 would.  The arrays grow geometrically
(a failed growth stops the run with MemoryError).  Every operation on a nonzero is the same as on
stored-E data, with E's row drawn from the keyed rule.
"""
from libc.math cimport exp, log, sqrt
from onlinekern._core.learner cimport TASK_MULTICLASS, OK_PREFETCH
from onlinekern._core.features cimport FeatureCore
from onlinekern._core.columns cimport ColumnMap
from onlinekern._core.losses cimport TaskLoss, runner_up
from onlinekern._core.vmath cimport ok_dot

cdef extern from *:
    """
    /* Step 4's dots out[k] = E_{idx[k]} . q (rows of length D) for k < nnz, four rows at a time
     * so that their chains of adds overlap.  Per row these are exactly ok_dot's operations: 16
     * partial sums (lanes 0-7 and 8-15 of two vectors), the same tail and the same reduction,
     * so every out[k] is bit-identical to ok_dot(E + idx[k] D, q, D).  AVX-512 only (32 registers
     * hold the four rows' 8 accumulators); the other levels call ok_dot per row. */
    #define OKR_FINISH(lo, hi, a, OUT) {                                                      \
        for (j = 0; i + j < D; j++) {                                                         \
            if (j < 8) lo[j] += a[i + j] * q[i + j]; else hi[j - 8] += a[i + j] * q[i + j];   \
        }                                                                                     \
        lo = lo + hi;                                                                         \
        OUT = ((lo[0] + lo[4]) + (lo[2] + lo[6])) + ((lo[1] + lo[5]) + (lo[3] + lo[7]));     \
    }
    static void okrrf_row_dots_base_(const double *restrict E, int D, const int *restrict idx, int nnz,
                                     const double *restrict q, double *restrict out) {
        for (int k = 0; k < nnz; k++)
            out[k] = ok_dot(E + (ptrdiff_t)idx[k] * D, q, D);
    }
    #ifdef OK_X86
    /* AVX2 has 16 registers of 4 doubles: eight rows' worth of accumulators would spill, so that
     * level keeps one ok_dot per row */
    #define okrrf_row_dots_avx2_ okrrf_row_dots_base_
    __attribute__((target("avx512f"))) static void okrrf_row_dots_avx512_(const double *restrict E, int D,
            const int *restrict idx, int nnz, const double *restrict q, double *restrict out) {
        int k = 0, i, j;
        ok_v8d_ l0, h0, l1, h1, l2, h2, l3, h3, bl, bh;
        for (; k + 4 <= nnz; k += 4) {
            const double *a0 = E + (ptrdiff_t)idx[k] * D, *a1 = E + (ptrdiff_t)idx[k + 1] * D;
            const double *a2 = E + (ptrdiff_t)idx[k + 2] * D, *a3 = E + (ptrdiff_t)idx[k + 3] * D;
            l0 = h0 = l1 = h1 = l2 = h2 = l3 = h3 = (ok_v8d_){0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            i = 0;
            for (int q_ = 0; q_ < D / 16; q_++, i += 16) {
                bl = OK_VLOAD(ok_v8d_, q + i); bh = OK_VLOAD(ok_v8d_, q + i + 8);
                l0 += OK_VLOAD(ok_v8d_, a0 + i) * bl; h0 += OK_VLOAD(ok_v8d_, a0 + i + 8) * bh;
                l1 += OK_VLOAD(ok_v8d_, a1 + i) * bl; h1 += OK_VLOAD(ok_v8d_, a1 + i + 8) * bh;
                l2 += OK_VLOAD(ok_v8d_, a2 + i) * bl; h2 += OK_VLOAD(ok_v8d_, a2 + i + 8) * bh;
                l3 += OK_VLOAD(ok_v8d_, a3 + i) * bl; h3 += OK_VLOAD(ok_v8d_, a3 + i + 8) * bh;
            }
            OKR_FINISH(l0, h0, a0, out[k]) OKR_FINISH(l1, h1, a1, out[k + 1])
            OKR_FINISH(l2, h2, a2, out[k + 2]) OKR_FINISH(l3, h3, a3, out[k + 3])
        }
        for (; k < nnz; k++)
            out[k] = ok_dot(E + (ptrdiff_t)idx[k] * D, q, D);
    }
    OK_DISPATCH(void, okrrf_row_dots, (const double *restrict E, int D, const int *restrict idx, int nnz,
                                       const double *restrict q, double *restrict out), (E, D, idx, nnz, q, out))
    #else
    #define okrrf_row_dots okrrf_row_dots_base_
    #endif
    """
    void okrrf_row_dots(const double* E, int D, const int* idx, int nnz, const double* q,
                        double* out) noexcept nogil
from onlinekern._core.weights cimport ScaledWeights

import numbers
import numpy as np
from onlinekern._core.losses import TaskLoss as PyTaskLoss
from onlinekern.base import FeatureLearner
from onlinekern.losses import canonical_loss, smooth_step
from onlinekern.params import stream_components

#: Regression losses whose gradient keeps its size at the optimum (|l'| = 1 off the tube): under
#: the product preset RRF's step for them starts at the papers' 0.3 and falls as 1/sqrt(t) to a
#: third of it, 0.1, at t = WARM_T0 (WARM_ETA).  The third is the better constant over long
#: streams (first 5,000 rows, RMSE / running mean on casp 0.92 -> 0.88 (absolute) and 0.90 -> 0.87
#: (epsilon-insensitive), and lower on cadata and abalone too; whole casp and cadata: 0.1 beats 0.2
#: and 0.3), but with a gradient of constant size the first examples move the model only 0.1 per
#: step: one pass over scikit-learn's 200-row regression check reached R^2 0.49 / 0.48.  The warm
#: start gives 0.76 / 0.71 there and a lower RMSE in 18 of the 20 cells of both defaults
#: benchmarks (casp, cadata, abalone; raw and scaled; 5,000 rows and whole; both losses), the
#: other two 0.10 and 0.26 % higher (BENCHMARKS.md "Defaults over whole streams"); of WARM_T0 in
#: {300, 1,000, 3,000}, 1,000 was best.
NONSMOOTH_REGRESSION = ("absolute", "epsilon-insensitive")
WARM_T0 = 1000
WARM_CAP = 3.0                           # the first steps: WARM_CAP times the third, the papers' 0.3
WARM_ETA = f"clip(0.1 sqrt({WARM_T0}/t), 0.1, {0.1 * WARM_CAP:g})"
from onlinekern.learners.ogd import task_loss
from onlinekern.seeding import INIT, rng

RRF_LOSSES = ("hinge", "logistic", "squared", "absolute", "epsilon-insensitive")
# half-width of the rho interval around rho_0: e^{rho_n} / e^{rho_0} in [1e-8, 1e8]
RHO_RANGE = float(np.log(1e8))
# init="reference": the tund/RRF code's w0 = 0.01 randn on unscaled features, i.e.
# 0.01 sqrt(D) randn in onlinekern's D^{-1/2} scaling (§1.3 step-size conversion)
REFERENCE_INIT = 0.01


cdef class RRFCore(FeatureCore):
    cdef public double eta, eta_rho, lam
    cdef public double warm_t0, warm_cap     # warm_t0 > 0: eta_t = eta min(warm_cap, sqrt(warm_t0 / t)), at least eta
    cdef public TaskLoss loss
    cdef readonly double rho0, rho_lo, rho_hi
    cdef public long long n_rho_clips
    cdef object rho_, fscale_, grho_, q_    # numpy buffers kept alive
    cdef double* rho                        # d (or slots): log-scales
    cdef double* fscale                     # d (or slots): e^{rho}, refreshed only where rho changed
    cdef double* grho                       # d (or slots): rho-gradient accumulator, all zero between steps
    # wide data (keyed feature rule): per-column state at the slots of ``cols``; None otherwise
    cdef public ColumnMap cols
    cdef Py_ssize_t rcap                    # slots the rho arrays have room for
    cdef object slots_                      # int32 buffer: the slots of the current row's nonzeros
    cdef int* slotbuf
    cdef int slotcap
    cdef const int* sl                      # the nonzeros' state indices: idx (stored E) or slotbuf
    cdef double* q                          # D: q_j without the factor h D^{-1/2} scale
    cdef double h                           # l' (binary/regression) or l'_m (multiclass) of the last example
    cdef int r                              # its runner-up (multiclass)

    def _setup_rrf(self, double gamma0):
        """rho_n = 1/2 ln(2 g0) for every feature (spec §3.12 table)."""
        self.rho0 = 0.5 * log(2.0 * gamma0)
        self.rho_lo = self.rho0 - RHO_RANGE
        self.rho_hi = self.rho0 + RHO_RANGE
        self.n_rho_clips = 0
        # e^{rho_0} is stored as sqrt(2 g0), FOGD's scale, so that eta_rho = 0 reproduces FOGD
        # bit for bit (§5.3); exp(0.5 log(2 g0)) may differ from it in the last bit.
        if self.fmap.keyed:
            self._bind(np.zeros(0), np.zeros(0), ColumnMap())
        else:
            self._bind(np.full(self.n_features, self.rho0), np.full(self.n_features, self.fmap.root))

    def _bind(self, rho, fscale, cols=None):
        """Take rho and e^rho: per column (cols None) or per slot of the ColumnMap ``cols``."""
        self.cols = cols
        n = len(rho)
        cap = n if cols is None else max(64, n)
        self.rho_ = np.full(cap, self.rho0)
        self.fscale_ = np.full(cap, self.fmap.root)
        self.rho_[:n] = rho
        self.fscale_[:n] = fscale
        self.grho_ = np.zeros(cap)
        self.rcap = cap
        self.q_ = np.zeros(self.fmap.D)
        self._bind_arrays()
        self.slots_ = np.zeros(64, dtype=np.int32)
        cdef int[::1] sv = self.slots_
        self.slotbuf = &sv[0]
        self.slotcap = 64

    def _bind_arrays(self):
        cdef double[::1] a = self.rho_, b = self.fscale_, c = self.grho_, e = self.q_
        self.rho = &a[0] if a.shape[0] else NULL
        self.fscale = &b[0] if b.shape[0] else NULL
        self.grho = &c[0] if c.shape[0] else NULL
        self.q = &e[0]

    def _grow(self, Py_ssize_t need_slots, int need_nnz):
        """Room for ``need_slots`` slots (geometric) and a slot buffer of ``need_nnz``."""
        cdef int[::1] sv
        if need_slots > self.rcap:
            cap = max(need_slots, 2 * self.rcap)
            self.rho_ = np.concatenate([self.rho_, np.full(cap - self.rcap, self.rho0)])
            self.fscale_ = np.concatenate([self.fscale_, np.full(cap - self.rcap, self.fmap.root)])
            self.grho_ = np.concatenate([self.grho_, np.zeros(cap - self.rcap)])
            self.rcap = cap
            self._bind_arrays()
        if need_nnz > self.slotcap:
            self.slotcap = max(need_nnz, 2 * self.slotcap)
            self.slots_ = np.zeros(self.slotcap, dtype=np.int32)
            sv = self.slots_
            self.slotbuf = &sv[0]

    cdef int _slots(self, const int* idx, int nnz, bint add) noexcept nogil:
        """Point ``sl`` at the state indices of the row's nonzeros: ``idx`` itself on stored-E
        data; on wide data their slots, new columns added (``add``, a training step) or -1
        (prediction).  0, or -1 without memory."""
        cdef int rc = 0, k, n
        if self.cols is None:
            self.sl = idx
            return 0
        if nnz > self.slotcap:
            with gil:
                try:
                    self._grow(0, nnz)
                except Exception:
                    return -1
        if add:
            if self.cols.insert(idx, nnz, self.slotbuf) != 0:
                return -1
            if self.cols.n > self.rcap:
                with gil:
                    try:
                        self._grow(self.cols.n, 0)
                    except Exception:
                        rc = -1
        else:
            self.cols.lookup(idx, nnz, self.slotbuf)
        self.sl = self.slotbuf
        if rc != 0:
            return rc
        # the step reads e^rho at every slot (projection), then grho and rho: on wide data the
        # slots of rare columns are far apart in memory, so ask for all of their lines at once
        for k in range(nnz):
            n = self.slotbuf[k]
            if n >= 0:
                OK_PREFETCH(self.fscale + n)
                OK_PREFETCH(self.grho + n)
                OK_PREFETCH(self.rho + n)
        return 0

    # -- the pieces of one step, shared by step() and py_gradients() ----------------------------
    cdef double _forward(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        """Steps 1-2: z, f (into out), g = dl/df (grad_buf), h and r.  Returns the loss."""
        cdef double* g = self.grad_buf
        cdef double val
        cdef int yi
        self.fmap.features_at(x, idx, nnz, self.fscale, self.sl)
        self.w.scores(self.fmap.cs, self.fmap.norm, out)
        val = self.loss.grad(out, y, self.n_outputs, g)
        if self.task == TASK_MULTICLASS:
            yi = <int>y
            # the loss took the same runner-up (same function, same scores); g_y = l'_m, g_r = -l'_m
            self.r = runner_up(out, yi, self.n_outputs)
            self.h = g[yi]
        else:
            self.r = -1
            self.h = g[0]
        return val

    cdef void _rho_gradient(self, const double* x, const int* idx, int nnz, double y) noexcept nogil:
        """Step 4: grho[n] += h x_n e^{rho_n} E_n . q for the nonzeros of x (pre-update w);
        n is the nonzero's state index (``sl``)."""
        cdef int D = self.fmap.D, j, k, n, k0, m
        cdef double dots[64]
        cdef const double* c = self.fmap.cs
        cdef const double* s = self.fmap.cs + D
        cdef const double* vy
        cdef const double* vr
        cdef double coef, u
        if self.task == TASK_MULTICLASS:
            vy = self.w.W + <Py_ssize_t>(<int>y) * self.w.F
            vr = self.w.W + <Py_ssize_t>self.r * self.w.F
            for j in range(D):
                self.q[j] = (vy[D + j] - vr[D + j]) * c[j] - (vy[j] - vr[j]) * s[j]
        else:
            vy = self.w.W
            for j in range(D):
                self.q[j] = vy[D + j] * c[j] - vy[j] * s[j]
        # the stored weights are w / scale, and z carries D^{-1/2}: fold both into one scalar
        coef = self.h * self.fmap.norm * self.w.scale
        k0 = 0
        while k0 < nnz:                        # the dots E_n . q of up to 64 nonzeros at a time
            m = nnz - k0 if nnz - k0 < 64 else 64
            if self.fmap.keyed:              # the rows the projection pinned (kept_row)
                for k in range(m):
                    dots[k] = ok_dot(self.fmap.kept_row(k0 + k, idx[k0 + k]), self.q, D)
            else:
                okrrf_row_dots(self.fmap.E, D, idx + k0, m, self.q, dots)
            for k in range(m):
                n = self.sl[k0 + k]
                u = x[k0 + k] * self.fscale[n]     # = x_n e^{rho_n}, the projection's own factor
                if u != 0.0:
                    self.grho[n] += coef * u * dots[k]
            k0 += m

    cdef void _update_w(self) noexcept nogil:
        """Step 5 for w: w_c <- (1 - eta_t lambda) w_c - eta_t g_c z (FOGD's exact operations); eta_t =
        eta, or under the warm start (warm_t0 > 0) eta clip(sqrt(warm_t0 / t), 1, warm_cap)."""
        cdef double* g = self.grad_buf
        cdef int c
        cdef double eta = self.eta, f
        if self.n_seen + 1 < self.warm_t0:    # the warm start's early steps (warm_t0 = 0: never)
            f = sqrt(self.warm_t0 / <double>(self.n_seen + 1))
            eta = self.eta * (f if f < self.warm_cap else self.warm_cap)
        if self.lam > 0.0:
            self.w.shrink(1.0 - eta * self.lam)
        for c in range(self.n_outputs):
            if g[c] != 0.0:
                self.w.axpy(c, -eta * g[c] * self.fmap.norm, self.fmap.cs)

    cdef void _update_rho(self, const int* idx, int nnz) noexcept nogil:
        """Step 5 for rho, clipped; e^{rho_n} recomputed only where rho_n changed."""
        cdef int k, n
        cdef double gr, new
        for k in range(nnz):
            n = self.sl[k]
            gr = self.grho[n]
            if gr == 0.0:                      # x_n = 0, or already applied (duplicate index)
                continue
            self.grho[n] = 0.0
            new = self.rho[n] - self.eta_rho * gr
            if new > self.rho_hi:
                new = self.rho_hi
                self.n_rho_clips += 1
            elif new < self.rho_lo:
                new = self.rho_lo
                self.n_rho_clips += 1
            elif new != new:                   # NaN (0 * inf in the gradient): refuse the step
                new = self.rho[n]
                self.n_rho_clips += 1
            if new != self.rho[n]:
                self.rho[n] = new
                self.fscale[n] = exp(new)

    cdef int predict_row(self, const double* x, const int* idx, int nnz, double* out) noexcept nogil:
        if self._slots(idx, nnz, False) != 0:
            return -1
        self.fmap.features_at(x, idx, nnz, self.fscale, self.sl)
        self.w.scores(self.fmap.cs, self.fmap.norm, out)
        return 0

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        if self._slots(idx, nnz, True) != 0:
            return -1
        self._forward(x, idx, nnz, y, out)
        # h = 0 (flat side of a kink) or eta_rho = 0: rho does not move, skip the O(nnz D) pass
        cdef bint move_rho = self.h != 0.0 and self.eta_rho != 0.0
        if move_rho:
            self._rho_gradient(x, idx, nnz, y)
        self._update_w()
        if move_rho:
            self._update_rho(idx, nnz)
        return 0

    # -- Python access for tests and the learner's attributes -----------------------------------
    def py_gradients(self, x, y):
        """(J, grad_w, grad_rho) at one example, without changing the model.

        Computed by the compiled pieces of ``step`` (the same z, f, loss, h, runner-up and
        rho pass).  J = l(f, y) + lambda/2 ||w||^2 is the objective whose gradient ``step``
        follows; grad_w has shape (n_outputs, 2D), grad_rho shape (n_features,).  ``x`` is a dense
        row; ``y`` is encoded (+-1, class index, or real target).
        """
        cdef double[::1] xv = np.ascontiguousarray(x, dtype=np.float64).ravel()
        if xv.shape[0] != self.n_features:
            raise ValueError(f"x has {xv.shape[0]} values, expected {self.n_features}")
        if self.task == TASK_MULTICLASS and not (0 <= y < self.n_outputs and y == int(y)):
            raise ValueError("y must be a class index")
        # stored E: every column (the step's exact operations); wide data: the nonzeros, whose
        # columns enter the map as a step would add them (grad_rho is zero elsewhere either way)
        iarr = np.arange(self.n_features, dtype=np.int32) if self.cols is None else \
            np.flatnonzero(np.asarray(xv)).astype(np.int32)
        if iarr.shape[0] == 0:
            iarr = np.zeros(1, dtype=np.int32)
        xarr = np.ascontiguousarray(np.asarray(xv)[iarr])
        cdef int[::1] iv = iarr
        cdef double[::1] xs = xarr
        cdef int nnz = <int>iarr.shape[0]
        f = np.zeros(self.n_outputs)
        cdef double[::1] fv = f
        cdef double yy = y, val
        if self._slots(&iv[0], nnz, True) != 0:
            raise MemoryError("cannot grow the column map")
        with nogil:
            val = self._forward(&xs[0], &iv[0], nnz, yy, &fv[0])
            if self.h != 0.0:
                self._rho_gradient(&xs[0], &iv[0], nnz, yy)
        if self.cols is None:
            grad_rho = np.array(self.grho_)
        else:
            grad_rho = np.zeros(self.n_features)
            sl = self.cols.slots(iarr)
            grad_rho[iarr] = self.grho_[sl]
        self.grho_[...] = 0.0
        g = np.array([self.grad_buf[c] for c in range(self.n_outputs)])
        z = self.fmap.norm * np.array([self.fmap.cs[j] for j in range(2 * self.fmap.D)])
        w = self.w.values
        grad_w = np.outer(g, z) + self.lam * w
        return float(val) + 0.5 * self.lam * float(np.sum(w * w)), grad_w, grad_rho

    def transform(self, rows):
        """z(x) of the learned map (Omega = diag(e^rho) E) for every row: array (n, 2D)."""
        return self.fmap.transform_rows(rows, self.fscale, self.cols)

    def _dense(self, arr, fill):
        if self.cols is None:
            return np.array(arr)
        out = np.full(self.n_features, fill)
        out[self.cols.columns()] = arr[:len(self.cols)]
        return out

    @property
    def log_bandwidth(self):
        """rho (copy), shape (n_features,) (on wide data rho_0 at the columns never trained on)."""
        return self._dense(self.rho_, self.rho0)

    @property
    def feature_scale(self):
        """e^{rho} as used by the feature map (copy), shape (n_features,)."""
        return self._dense(self.fscale_, self.fmap.root)

    @property
    def column_log_bandwidth(self):
        """(columns, rho): the columns that have state and their rho (every column on stored-E data,
        the columns trained on, in order of first appearance, on wide data)."""
        if self.cols is None:
            return np.arange(self.n_features, dtype=np.int32), np.array(self.rho_)
        n = len(self.cols)
        return self.cols.columns(), np.array(self.rho_[:n])

    def get_state(self):
        st = FeatureCore.get_state(self)
        n = self.rcap if self.cols is None else len(self.cols)
        st.update(eta=self.eta, eta_rho=self.eta_rho, lam=self.lam, warm_t0=self.warm_t0, warm_cap=self.warm_cap,
                  loss=self.loss.spec, rho0=self.rho0,
                  rho=np.array(self.rho_[:n]), feat_scale=np.array(self.fscale_[:n]), n_rho_clips=self.n_rho_clips)
        if self.cols is not None:
            st["columns"] = self.cols.columns()
        return st

    def set_state(self, st):
        FeatureCore.set_state(self, st)
        self.eta, self.eta_rho, self.lam = float(st["eta"]), float(st["eta_rho"]), float(st["lam"])
        self.warm_t0, self.warm_cap = float(st.get("warm_t0", 0.0)), float(st.get("warm_cap", 1.0))
        self.loss = task_loss(st["loss"], self.task)
        rho0 = float(st["rho0"])
        rho = np.asarray(st["rho"], dtype=np.float64)
        fscale = np.asarray(st["feat_scale"], dtype=np.float64)
        cols = None
        if self.fmap.keyed:
            if "columns" not in st:
                raise ValueError("a keyed-rule RRF state needs its columns")
            columns = np.asarray(st["columns"])
            if columns.ndim != 1 or (columns.size and (columns.min() < 0 or columns.max() >= self.n_features)):
                raise ValueError(f"columns must be a vector of indices in [0, {self.n_features})")
            cols = ColumnMap(columns)
            if len(cols) != columns.shape[0]:
                raise ValueError("columns must not repeat")
            d = columns.shape[0]
        else:
            d = self.n_features
        if rho.shape != (d,) or fscale.shape != (d,):
            raise ValueError(f"rho and feat_scale must have shape ({d},)")
        if not (np.isfinite(rho0) and np.all(np.isfinite(rho)) and np.all(np.isfinite(fscale))):
            raise ValueError("rho and feat_scale must be finite")
        if np.any(np.abs(rho - rho0) > RHO_RANGE * (1 + 1e-12)):
            raise ValueError("rho lies outside its clipping interval")
        if np.any(np.abs(fscale / np.exp(rho) - 1.0) > 1e-12):
            raise ValueError("feat_scale does not equal exp(rho)")
        if not (self.eta > 0 and self.eta_rho >= 0 and self.lam >= 0):
            raise ValueError("eta must be > 0, eta_rho and lam >= 0")
        self.rho0 = rho0
        self.rho_lo = rho0 - RHO_RANGE
        self.rho_hi = rho0 + RHO_RANGE
        self.n_rho_clips = int(st["n_rho_clips"])
        self._bind(rho, fscale, cols)


#: Product step of the log-bandwidths rho over a stream of at most :data:`ETA_GAMMA_T0` examples
#: or of unknown length: 1e-3 (the reference demo's 1e-4 barely moves the widths: RRF-hinge on
#: ijcnn1 + ijcnn1.t, permutation 0, no other option: 5.13 % at 1e-4, 3.87 % at 1e-3, 3.45 % at
#: 3e-3, 3.28 % at 1e-2, the paper's largest step, with no clipped update in any; past 1e-2
#: features were lost: BENCHMARKS.md).
AUTO_ETA_GAMMA = 1e-3
#: Over a stream of known length T > ETA_GAMMA_T0 the step grows as sqrt(T / ETA_GAMMA_T0) (at most
#: 10 x): a long stream gives the widths the time to move and pays back a larger step, a short one
#: does not (3e-3 on the 5,000-row benchmark: rrf-hinge pendigits scaled 4.14 -> 4.36 %, past
#: 1.25 x its tuned 3.44 %).  ijcnn1 (141,691 rows): 3.07e-3.
ETA_GAMMA_T0 = 15000


class RRF(FeatureLearner):
    """Reparameterized random features: FOGD that also learns one kernel width per input feature.

    Nguyen, Le, Bui & Phung, "Large-scale online kernel learning with random feature
    reparameterization", IJCAI 2017 (Algorithm 1, eq. (9)).  ALGORITHMS.md §3.12.
    Omega = diag(e^rho) E with E ~ N(0, 1)^{d x D} fixed (FEATURES stream); w and the log-scales
    rho are updated by one stochastic gradient step each per example.  The learned kernel is
    exp(-sum_n g_n (x_n - x'_n)^2) with g_n = e^{2 rho_n}/2 (``bandwidth_``).

    Overflow guard: rho_n is clipped to rho_0 +- ln(1e8) (e^{rho_n} within a factor 1e8 of
    its initial sqrt(2 g0)), so a diverging eta_gamma can never make a score NaN or infinite;
    ``n_rho_clips_`` counts the clipped coordinate updates.  A too large eta_gamma can still
    drive one feature's width to a useless value from which it does not return; the IJCAI'17
    step range (up to 1e-2) is the safe one (BENCHMARKS.md).

    Parameters
    ----------
    n_components : int or 'auto'
        Number of frequencies D (2D weights); 'auto' (default): 100 (paper §4.2, the 'paper'
        preset's value) for a stream of at most 5,000 examples or of unknown length, more for a
        longer one known in advance: 100 sqrt(T / 5,000) up to 1,000, within the pass's work bound
        (:func:`onlinekern.params.stream_components`).
    gamma : float, 'auto', 'median' or None
        Initial per-feature width g0.  'auto' (default): chosen online on the first few thousand
        examples among multiples of the median-heuristic width, with and without dividing each
        feature by its range or standard deviation (onlinekern.selection); the 'paper' preset: 0.5 (rho = 0, paper Alg. 1);
        None = 1/n_features.
    eta : float or 'auto'
        Step size of w in the scaled-feature convention; 'auto' (default): 0.3 (the 'paper' preset:
        the reference demo's 0.003 times D), times 4 for the logistic loss and max(2, K/2) for
        softmax over K classes (:func:`onlinekern.losses.smooth_step`); for the absolute and
        epsilon-insensitive losses 0.3 at first, falling as 1/sqrt(t) to a third of it from
        t = 1,000 on (WARM_ETA, shown as ``eta_ = "clip(0.1 sqrt(1000/t), 0.1, 0.3)"``).
    eta_gamma : float or 'auto'
        Step size of the log-bandwidths rho.  'auto' (default): 1e-3 (AUTO_ETA_GAMMA), times
        sqrt(T / 15,000) between 1 and 10 when the stream length T is known (``fit``,
        ``run_online``, the CLI; ijcnn1's 141,691 rows: 3.07e-3); the 'paper' preset: 1e-4
        (reference demo learning_rate_gamma; paper Alg. 1 uses eta for both, up to 1e-2);
        0 = FOGD with g = g0, bit for bit (§5.3).
    lam : float
        L2 regularisation of w (0, paper Alg. 1).
    init : float or 'reference'
        Initial weights w0 = init * N(0, 1) draws from the INIT stream (0: w0 = 0, the paper);
        'reference' = 0.01 sqrt(D), the tund/RRF code's 0.01 randn in this scaling.
    loss : str
        hinge (default) or logistic (binary; multiclass in margin form with the runner-up);
        squared (l2), absolute (l1), epsilon-insensitive (eps; the regression default) for
        regression.
    epsilon : float
        Width of the epsilon-insensitive tube (0.1).
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Decides E (FEATURES stream), w0 (INIT stream) and the median heuristic.
    n_threads : int or None
        Accepted for a uniform API; an RRF step at D = 100 is too small to split.

    Attributes
    ----------
    log_bandwidth_ : ndarray (n_features,)
        rho (a dense array; on wide data prefer ``column_log_bandwidth_``).
    column_log_bandwidth_ : (ndarray of int32, ndarray)
        (columns, rho) of the columns that have state: every column on narrow data; on wide data
        (the keyed feature rule) the columns trained on, in order of first appearance -- every
        other column keeps rho_0.
    bandwidth_ : ndarray (n_features,)
        Per-feature kernel widths g_n = e^{2 rho_n}/2.
    n_rho_clips_ : int
        Coordinate updates of rho clipped by the overflow guard.
    coef_ : ndarray (2D,) or (C, 2D)
        Weights of z(x).
    feature_map_ : RandomFourierMap
        Holds E (or, on wide data, draws its rows: ``feature_map_.rows(columns)``) and g0; its ``transform`` is the *initial* map.  ``RRF.transform`` applies the
        learned one.
    """

    family = "rrf"
    losses = RRF_LOSSES
    summary = ("reparameterized random features: FOGD learning one kernel width per input feature "
               "(e^rho kept within a factor 1e8 of its start)")
    paper = "Nguyen, Le, Bui & Phung, IJCAI 2017"
    paper_defaults = {"gamma": 0.5, "eta_gamma": 1e-4, "eta": 0.3, "n_components": 100}

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """eta_gamma: :data:`AUTO_ETA_GAMMA` under the product preset, times
        sqrt(T / :data:`ETA_GAMMA_T0`) (1 to 10) when the stream length T is known; n_components:
        100, grown with a known horizon (:func:`onlinekern.params.stream_components`)."""
        if name == "n_components":     # the width gradient reads the nonzeros' rows a second time
            return stream_components(X, n_outputs, n_stream, self.paper_defaults[name], reads=2)
        if name == "eta_gamma":
            T = n_stream or 0
            return AUTO_ETA_GAMMA * min(10.0, max(1.0, (T / ETA_GAMMA_T0) ** 0.5))
        if name == "eta":       # 0.3, times 1/L for a smooth loss (onlinekern.losses.smooth_step)
            if canonical_loss(self.loss) in NONSMOOTH_REGRESSION and task == "regression":
                return WARM_ETA
            return smooth_step(self.paper_defaults["eta"], self.loss, task, n_outputs)
        return self.paper_defaults[name]

    def __init__(self, n_components="auto", gamma="auto", eta="auto", eta_gamma="auto", lam=0.0, init=0.0,
                 loss="hinge", epsilon=0.1, preset="auto", seed=0, n_threads=None):
        self.n_components = n_components
        self.gamma = gamma
        self.preset = preset
        self.eta = eta
        self.eta_gamma = eta_gamma
        self.lam = lam
        self.init = init
        self.loss = loss
        self.epsilon = epsilon
        self.seed = seed
        self.n_threads = n_threads

    def _init_scale(self):
        init = self.init
        if isinstance(init, str):
            if init.strip().lower() != "reference":
                raise ValueError(f"init must be a non-negative number or 'reference', got {init!r}")
            return REFERENCE_INIT * np.sqrt(int(self.param_value("n_components")))
        if isinstance(init, (bool, np.bool_)) or not isinstance(init, numbers.Real) or not np.isfinite(init) or init < 0:
            raise ValueError(f"init must be a non-negative number or 'reference', got {init!r}")
        return float(init)

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        eg = self.param_value("eta_gamma")
        if isinstance(eg, (bool, np.bool_)) or not isinstance(eg, numbers.Real) or not np.isfinite(eg) or eg < 0:
            raise ValueError(f"eta_gamma must be a non-negative finite number, got {eg!r}")
        s = self._init_scale()
        core = RRFCore()
        core._setup_features(n_features, task, n_outputs, int(self.param_value("n_components")), gamma, self.seed, None,
                             self._n_threads())
        eta = self.param_value("eta")
        warm = eta == WARM_ETA                 # 0.1, times up to WARM_CAP before t = WARM_T0
        core.eta = self.paper_defaults["eta"] / WARM_CAP if warm else float(eta)
        core.eta_rho, core.lam = float(eg), float(self.lam)
        if warm:
            core.warm_t0, core.warm_cap = WARM_T0, WARM_CAP
        core.loss = PyTaskLoss(self.loss, task == TASK_MULTICLASS, self.epsilon)
        core._setup_rrf(gamma)
        if s > 0:
            w0 = s * rng(self.seed, INIT).standard_normal((core.n_outputs, 2 * int(self.param_value("n_components"))))
            core.w = ScaledWeights(core.n_outputs, 2 * int(self.param_value("n_components")), w0)
        return core

    def transform(self, X):
        """z(x) = D^{-1/2}[cos Omega^T x; sin Omega^T x] with the learned Omega = diag(e^rho) E.

        (``feature_map_.transform`` gives the initial map, Omega = sqrt(2 g0) E.)  The scores are
        ``transform(X) @ coef_.T``.
        """
        self._check_fitted()
        return self.core_.transform(self.row_data(self._validate_X(X, reset=False)))

    @property
    def log_bandwidth_(self):
        """Learned log-scales rho, shape (n_features,)."""
        self._check_fitted()
        return self.core_.log_bandwidth

    @property
    def column_log_bandwidth_(self):
        """(columns, rho) of the columns with state (see the class docstring)."""
        self._check_fitted()
        return self.core_.column_log_bandwidth

    @property
    def bandwidth_(self):
        """Learned per-feature kernel widths g_n = e^{2 rho_n}/2, shape (n_features,)."""
        return 0.5 * np.exp(2.0 * self.log_bandwidth_)

    @property
    def n_rho_clips_(self):
        """Coordinate updates of rho clipped by the overflow guard."""
        self._check_fitted()
        return int(self.core_.n_rho_clips)
