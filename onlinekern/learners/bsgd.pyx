# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""BSGD, Budgeted Stochastic Gradient Descent (Wang, Crammer & Vucetic, JMLR 13, 2012), §3.7.

Kernel Pegasos with a hard budget B.  Step t (1-based, counted over everything the learner has
seen, so ``partial_fit`` chunks continue the same schedule):

1. f = f_t(x_t); record.
2. alpha_i <- (1 - 1/t) alpha_i for every SV (O(1) through the SupportSet scale).
3. If the loss has a gradient g = l'(f, y_t) != 0, append (x_t, -g/(lambda t)): binary hinge
   (y/(lambda t) when y f < 1), multiclass Crammer–Singer hinge ((e_y - e_r)/(lambda t) when
   m < 1), regression (ext) epsilon-insensitive.
4. If |S| > B: a duplicate of x_t (k >= 1 - 1e-8) absorbs the new SV (``merging``) or the new SV
   is dropped (``removal``); otherwise ``removal`` deletes argmin ||alpha_i||^2 k(x_i, x_i) and
   ``merging`` merges m* = argmin ||alpha_i||^2 with the partner n* whose merge degrades the
   model least (golden-section search for the merge position h of each candidate; candidates
   whose lower bound on the degradation provably exceeds a searched one's are skipped, which
   changes no result: BSGDCore.candidates).

Ties decided in exact arithmetic, not by rounding noise
------------------------------------------------------
Under Pegasos steps every SV that was never merged has ||alpha_i|| = 1/(lambda t) *exactly*
(added with 1/(lambda tau), shrunk by prod_{s=tau+1..t} (1 - 1/s) = tau/t), so the argmin of the
norms is a tie among all of them, and pairs of such SVs give exactly symmetric merge problems.
Floating point would break these ties by accumulated rounding (BudgetedSVM does), which makes the
result depend on how the shrink is stored.  onlinekern decides them as exact arithmetic would:

* argmin of ||alpha_i||^2: every SV within relative 1e-9 of the minimum ties; the oldest wins
  (BudgetedSVM's first-in-storage-order rule, its store being in insertion order);
* a1, a2: a denominator alpha_mc + alpha_nc that cancels to within relative 1e-9 of
  |alpha_mc| + |alpha_nc| is zero (and replaced by 1e-4 as the spec says);
* golden section: J(p) and J(q) within 1e-12 of the size of their terms count as equal (an
  exact tie, e.g. a1 = a2 at the first symmetric probes, keeps the left part, as ``fp <= fq``
  does);
* argmin of L_n: every candidate whose L is within 1e-12 (|alpha_m| + |alpha_n|)^2 (the size of
  L's terms) of the least ties, and the oldest wins.  The kernel values behind L are sums whose
  rounding depends on the order of the features -- a dense store sums the columns in order, a
  sparse one the nonzeros in the order of their (possibly scattered) indices -- and moves L by
  ~1e-16 of its terms; candidates equal in exact arithmetic (binary data with duplicate rows
  make them common) would otherwise be told apart by that rounding, so the same data in other
  columns chose other partners (a9a scattered into 2^22 columns: 16.69 % mistakes against
  16.75 %).  The search's own tolerance moves L far more than the band;
* the duplicate partner: exact comparison, the oldest SV wins ties.

The merged SV replaces x_{m*} in place (it keeps m*'s insertion rank, as in BudgetedSVM), so the
insertion order of the store is the list order of the reference implementation.
"""
from libc.math cimport fabs, sqrt, isfinite, INFINITY
from cython.parallel cimport prange

from onlinekern._core.learner cimport TASK_MULTICLASS, TASK_REGRESSION
from onlinekern._core.support cimport (KernelCore, sv_alpha, ok_scan_min, ok_first_ge, ok_coef_norms,
                                       STORE_DENSE, STORE_SLAB)

cdef extern from *:
    """
    /* Among the i < n with v[i] <= limit, the one with the smallest stamp, the first slot on equal
     * stamps (-1: none) -- the scan `if v[i] <= limit and (best < 0 or stamp[i] < stamp[best])`.
     * Four sets of W lanes each keep their own first minimum (starting from LLONG_MAX);
     * merging them by (stamp, slot) gives the scan's answer and the tail continues the scan.  A
     * stamp of LLONG_MAX (never produced by the store's clock) cannot win a lane, so when the
     * answer is such an SV or none, the plain scan decides. */
    #define OKBSGD_LANE(VD, VL, s_, off)                                                         \
        st = OKV_LOADT(VL, stamp + i + off);                                                     \
        e = (OKV_LOADT(VD, v + i + off) <= lim) & (st < bs[s_]);                                 \
        bs[s_] = OKV_SELT(VL, e, st, bs[s_]);                                                    \
        bi[s_] = OKV_SELT(VL, e, ix + off, bi[s_]);
    #define OKBSGD_OLDEST_LE_BODY(VD, VL, W)                                                                   \
        VD lim;                                                                                                \
        VL bs[4], bi[4], e, st, ix;                                                                            \
        Py_ssize_t i = 0, b_, nb = n / (4 * W), best = -1, j;                                                  \
        int k, s;                                                                                              \
        for (k = 0; k < W; k++) {                                                                              \
            lim[k] = limit; ix[k] = k;                                                                         \
            for (s = 0; s < 4; s++) { bs[s][k] = LLONG_MAX; bi[s][k] = -1; }                                   \
        }                                                                                                      \
        for (b_ = 0; b_ < nb; b_++, i += 4 * W) {                                                              \
            OKBSGD_LANE(VD, VL, 0, 0)                                                                          \
            OKBSGD_LANE(VD, VL, 1, W)                                                                          \
            OKBSGD_LANE(VD, VL, 2, 2 * W)                                                                      \
            OKBSGD_LANE(VD, VL, 3, 3 * W)                                                                      \
            ix += 4 * W;                                                                                       \
        }                                                                                                      \
        for (nb = (n - i) / W, b_ = 0; b_ < nb; b_++, i += W) {                                                \
            OKBSGD_LANE(VD, VL, 0, 0)                                                                          \
            ix += W;                                                                                           \
        }                                                                                                      \
        for (s = 0; s < 4; s++)                                                                                \
            for (k = 0; k < W; k++) {                                                                          \
                j = (Py_ssize_t)bi[s][k];                                                                      \
                if (j >= 0 && (best < 0 || stamp[j] < stamp[best] || (stamp[j] == stamp[best] && j < best)))   \
                    best = j;                                                                                  \
            }                                                                                                  \
        for (; i < n; i++)                                                                                     \
            if (v[i] <= limit && (best < 0 || stamp[i] < stamp[best]))                                         \
                best = i;                                                                                      \
        if (best < 0 || stamp[best] == LLONG_MAX) {                                                            \
            best = -1;                                                                                         \
            for (i = 0; i < n; i++)                                                                            \
                if (v[i] <= limit && (best < 0 || stamp[i] < stamp[best]))                                     \
                    best = i;                                                                                  \
        }                                                                                                      \
        return best;
    OKSV_MULTI_W(Py_ssize_t, okbsgd_oldest_le, (const double *restrict v, const long long *restrict stamp,
                                              Py_ssize_t n, double limit), (v, stamp, n, limit), OKBSGD_OLDEST_LE_BODY)

    /* The golden-section search of golden_lanes for the n independent lanes idx[0..n) (one merge
     * candidate each; lk, a1, a2, lo, hi indexed by lane), over vectors of lanes: every lane makes exactly the decisions and computes
     * exactly the values of the scalar one-pair search (the same operations in the same order;
     * the build has -ffp-contract=off, so no FMA), both moves computed and one kept by a masked
     * select.  Each round is one fused pass (take the new probe's J, decide, move the bracket,
     * write the next probe's two exponents) and one vector exp.
     *
     * The lanes are copied into two groups by the width of their first bracket ([0, 1] against
     * [1, 6] or [-5, 0]), each padded to a multiple of eight with idle lanes (an empty bracket),
     * and each group runs its own rounds until its own lanes are done: a bracket shrinks by the
     * golden ratio per round, so the lanes of a group finish together, and the work is the sum of
     * the lanes' own iterations instead of S times the slowest lane's.  The lanes never interact
     * and exp is element-wise, so the grouping changes no bit.  A group runs in tiles of
     * OKBSGD_TILE lanes, all rounds of one tile before the next: a tile's 18 arrays (18 KB) stay
     * in L1 where the whole group's would stream from L2 every round (~5% of BSGD-merge's time on
     * ijcnn1).  w: scratch of 18 (n + 16).
     *
     * OKBSGD_MULTI is OKSV_MULTI with each SIMD level's native width (SSE2 2 lanes, AVX2 4,
     * AVX-512 8; vd_/vl_/W_ in the body): eight-lane vectors at AVX2 are split and spilled, which
     * made that level slower than the scalar loop. */
    typedef double okv2d __attribute__((vector_size(16)));
    typedef long long okv2l __attribute__((vector_size(16)));
    typedef double okv4d __attribute__((vector_size(32)));
    typedef long long okv4l __attribute__((vector_size(32)));
    #ifdef OK_X86
    #define OKBSGD_MULTI(RET, NAME, PARAMS, ARGS, ...)                                            \
        static RET NAME##_base_ PARAMS {                                                        \
            typedef okv2d vd_; typedef okv2l vl_; enum { W_ = 2 }; __VA_ARGS__ }                 \
        __attribute__((target("avx2,fma"))) static RET NAME##_avx2_ PARAMS {                     \
            typedef okv4d vd_; typedef okv4l vl_; enum { W_ = 4 }; __VA_ARGS__ }                 \
        __attribute__((target("avx512f"))) static RET NAME##_avx512_ PARAMS {                    \
            typedef okv8d vd_; typedef okv8l vl_; enum { W_ = 8 }; __VA_ARGS__ }                 \
        OK_DISPATCH(RET, NAME, PARAMS, ARGS)
    #else
    #define OKBSGD_MULTI(RET, NAME, PARAMS, ARGS, ...) static RET NAME PARAMS {                 \
            typedef okv2d vd_; typedef okv2l vl_; enum { W_ = 2 }; __VA_ARGS__ }
    #endif
    #define OKBSGD_LD(p) ({ vd_ v_; memcpy(&v_, (p), sizeof v_); v_; })
    #define OKBSGD_LDL(p) ({ vl_ v_; memcpy(&v_, (p), sizeof v_); v_; })
    #define OKBSGD_ST(p, v) do { vd_ t_ = (v); memcpy((p), &t_, sizeof t_); } while (0)
    #define OKBSGD_STL(p, v) do { vl_ t_ = (v); memcpy((p), &t_, sizeof t_); } while (0)
    #define OKBSGD_SELD(m, a, b) ((vd_)(((m) & (vl_)(a)) | (~(m) & (vl_)(b))))   /* m ? a : b */
    #define OKBSGD_ABS(v) ((vd_)((vl_)(v) & absm))
    #define OKBSGD_TILE 128
    #define OKBSGD_IDLE(j) do { LK[j] = 0.0; A1[j] = 0.0; A2[j] = 0.0; LO[j] = 0.0; HI[j] = 0.0; ID[j] = -1.0; } while (0)
    /* kpow: the exponent e ln kappa of kappa^e, 0 when e = 0 (kappa^0 = 1 also for kappa = 0) */
    #define OKBSGD_KPOW(x, l) ({ vd_ x_ = (x); OKBSGD_SELD(x_ == zero, zero, x_ * (l)); })
    OKBSGD_MULTI(void, okbsgd_golden, (Py_ssize_t n, const Py_ssize_t *restrict idx, const double *restrict lk,
                                     const double *restrict a1,
                                     const double *restrict a2, double *restrict lo, double *restrict hi,
                                     double tol, double golden, double tie, int max_sections,
                                     double *restrict w),
               (n, idx, lk, a1, a2, lo, hi, tol, golden, tie, max_sections, w),
        vd_ zero, one, ttol, gv, tiev, vlk, va1, va2, vlo, vhi, vp, vq, vfp, vfq, vsp, vsq, t, e1, e2,
            fn, sn, nlo, nhi, np_, nq, nfp, nsp, pt;
        vl_ absm, act, left, mp, mq, busy;
        long long any;
        Py_ssize_t i, j, r, na = 0, ja, jb, pa, np, g, g0, g1, ng;
        int k, it;
        for (k = 0; k < W_; k++) {
            zero[k] = 0.0; one[k] = 1.0; ttol[k] = 2.0 * tol; gv[k] = golden; tiev[k] = tie;
            absm[k] = 0x7fffffffffffffffLL;
        }
        for (r = 0; r < n; r++)
            na += !(hi[idx[r]] - lo[idx[r]] > 1.0);
        pa = (na + 7) & ~(Py_ssize_t)7;
        np = pa + ((n - na + 7) & ~(Py_ssize_t)7);
        double *LK = w, *A1 = w + np, *A2 = w + 2 * np, *LO = w + 3 * np, *HI = w + 4 * np,
               *P = w + 5 * np, *Q = w + 6 * np, *FP = w + 7 * np, *FQ = w + 8 * np, *SP = w + 9 * np,
               *SQ = w + 10 * np, *ID = w + 11 * np, *MP = w + 12 * np, *MQ = w + 13 * np, *E = w + 14 * np;
        for (r = 0, ja = 0, jb = pa; r < n; r++) {
            i = idx[r];
            j = hi[i] - lo[i] > 1.0 ? jb++ : ja++;
            LK[j] = lk[i]; A1[j] = a1[i]; A2[j] = a2[i]; LO[j] = lo[i]; HI[j] = hi[i]; ID[j] = (double)i;
        }
        for (; ja < pa; ja++)                               /* the padding: idle lanes */
            OKBSGD_IDLE(ja);
        for (; jb < np; jb++)
            OKBSGD_IDLE(jb);
        for (g0 = 0; g0 < np; g0 = g1) {
            /* a tile [g0, g1) of at most OKBSGD_TILE lanes of one group */
            g = g0 < pa ? pa : np;
            g1 = g - g0 > OKBSGD_TILE ? g0 + OKBSGD_TILE : g;
            ng = g1 - g0;
            double *e = E + 3 * g0;     /* e[i], e[ng + i], ... (i in [g0, g1)): E[4 g0, 4 g1) */
            /* the first two probes of every lane and their J (one vector exp for both) */
            for (i = g0; i < g1; i += W_) {
                vlo = OKBSGD_LD(LO + i); vhi = OKBSGD_LD(HI + i); vlk = OKBSGD_LD(LK + i);
                vp = vhi - gv * (vhi - vlo);
                vq = vlo + gv * (vhi - vlo);
                OKBSGD_ST(P + i, vp);
                OKBSGD_ST(Q + i, vq);
                t = one - vp;
                OKBSGD_ST(e + i, OKBSGD_KPOW(t * t, vlk));
                OKBSGD_ST(e + ng + i, OKBSGD_KPOW(vp * vp, vlk));
                t = one - vq;
                OKBSGD_ST(e + 2 * ng + i, OKBSGD_KPOW(t * t, vlk));
                OKBSGD_ST(e + 3 * ng + i, OKBSGD_KPOW(vq * vq, vlk));
            }
            ok_vexp(e + g0, e + g0, (int)(4 * ng));
            for (i = g0; i < g1; i += W_) {
                va1 = OKBSGD_LD(A1 + i); va2 = OKBSGD_LD(A2 + i);
                e1 = OKBSGD_LD(e + i); e2 = OKBSGD_LD(e + ng + i);
                OKBSGD_ST(SP + i, OKBSGD_ABS(va1) * e1 + OKBSGD_ABS(va2) * e2);
                OKBSGD_ST(FP + i, -(va1 * e1 + va2 * e2));
                e1 = OKBSGD_LD(e + 2 * ng + i); e2 = OKBSGD_LD(e + 3 * ng + i);
                OKBSGD_ST(SQ + i, OKBSGD_ABS(va1) * e1 + OKBSGD_ABS(va2) * e2);
                OKBSGD_ST(FQ + i, -(va1 * e1 + va2 * e2));
                OKBSGD_STL(MP + i, (vl_)zero);
                OKBSGD_STL(MQ + i, (vl_)zero);
            }
            for (it = 0; it < max_sections; it++) {
                busy = (vl_)zero;
                for (i = g0; i < g1; i += W_) {
                    /* the J of last round's probe (e holds its two powers) replaces fp or fq */
                    va1 = OKBSGD_LD(A1 + i); va2 = OKBSGD_LD(A2 + i); vlk = OKBSGD_LD(LK + i);
                    e1 = OKBSGD_LD(e + i); e2 = OKBSGD_LD(e + ng + i);
                    sn = OKBSGD_ABS(va1) * e1 + OKBSGD_ABS(va2) * e2;
                    fn = -(va1 * e1 + va2 * e2);
                    mp = OKBSGD_LDL(MP + i); mq = OKBSGD_LDL(MQ + i);
                    vfp = OKBSGD_SELD(mp, fn, OKBSGD_LD(FP + i));
                    vsp = OKBSGD_SELD(mp, sn, OKBSGD_LD(SP + i));
                    vfq = OKBSGD_SELD(mq, fn, OKBSGD_LD(FQ + i));
                    vsq = OKBSGD_SELD(mq, sn, OKBSGD_LD(SQ + i));
                    vlo = OKBSGD_LD(LO + i); vhi = OKBSGD_LD(HI + i);
                    vp = OKBSGD_LD(P + i); vq = OKBSGD_LD(Q + i);
                    /* the decision of the one-pair search, fp <= fq within the tie band */
                    act = vhi - vlo >= ttol;
                    left = vfp <= vfq + tiev * (vsp + vsq);
                    busy |= act;
                    nlo = OKBSGD_SELD(left, vlo, vp);
                    nhi = OKBSGD_SELD(left, vq, vhi);
                    np_ = OKBSGD_SELD(left, nhi - gv * (nhi - nlo), vq);
                    nq = OKBSGD_SELD(left, vp, nlo + gv * (nhi - nlo));
                    nfp = OKBSGD_SELD(left, vfp, vfq);      /* the kept probe's J */
                    nsp = OKBSGD_SELD(left, vsp, vsq);
                    pt = OKBSGD_SELD(act, OKBSGD_SELD(left, np_, nq), vp);
                    mp = act & left;                        /* left: the new probe is p, q <- old p */
                    mq = act & ~left;                       /* right: the new probe is q, p <- old q */
                    OKBSGD_ST(LO + i, OKBSGD_SELD(act, nlo, vlo));
                    OKBSGD_ST(HI + i, OKBSGD_SELD(act, nhi, vhi));
                    OKBSGD_ST(P + i, OKBSGD_SELD(act, np_, vp));
                    OKBSGD_ST(Q + i, OKBSGD_SELD(act, nq, vq));
                    OKBSGD_ST(FQ + i, OKBSGD_SELD(mp, nfp, vfq));
                    OKBSGD_ST(SQ + i, OKBSGD_SELD(mp, nsp, vsq));
                    OKBSGD_ST(FP + i, OKBSGD_SELD(mq, nfp, vfp));
                    OKBSGD_ST(SP + i, OKBSGD_SELD(mq, nsp, vsp));
                    OKBSGD_STL(MP + i, mp);
                    OKBSGD_STL(MQ + i, mq);
                    t = one - pt;
                    OKBSGD_ST(e + i, OKBSGD_KPOW(t * t, vlk));
                    OKBSGD_ST(e + ng + i, OKBSGD_KPOW(pt * pt, vlk));
                }
                for (any = 0, k = 0; k < W_; k++)
                    any |= busy[k];
                if (!any)
                    break;
                ok_vexp(e + g0, e + g0, (int)(2 * ng));
            }
        }
        for (j = 0; j < np; j++)
            if (ID[j] >= 0.0) {
                i = (Py_ssize_t)ID[j];
                lo[i] = LO[j];
                hi[i] = HI[j];
            })


    /* ln k(x_m, x_i) = -gamma ||x_m - x_i||^2 for the candidates i in [a, b) (the row-major SV
     * store X, d features): SupportSet.log_kernel_sv in one loop, with ok_sqdist's own body
     * (OK_SQDIST_BODY, so the same sums in the same order) inlined instead of one cross-module
     * call and dispatch per candidate.  Slot m gets its own value (0) like the scalar loop. */
    static inline double okbsgd_sqdist_(const double *a, const double *b, int n) { OK_SQDIST_BODY }
    OKSV_MULTI(void, okbsgd_log_kernels, (const double *restrict X, int d, Py_ssize_t m, Py_ssize_t a,
                                          Py_ssize_t b, double gamma, double *restrict out),
               (X, d, m, a, b, gamma, out),
        for (Py_ssize_t i = a; i < b; i++)
            out[i] = -gamma * okbsgd_sqdist_(X + m * d, X + i * d, d);)

    /* One output (C = 1: binary, regression), candidates i in [a, b) of SV m, vectorised (the
     * scalar loops' branches on the signs are coin flips):
     * okbsgd_coefs1: a1, a2 and the first bracket of merge_coefficients, the same operations
     * (0.0 + am / den, as its sum from 0) so the same bits;
     * okbsgd_prune1: merge_loss_bound for each candidate (t: PIECES arrays of b - a,
     * kappa^((j/P)^2) for j = 1..P-1 then kappa) against ub, and the candidates kept in idx
     * (returns their number); a pruned one gets L = +inf.  keep: scratch of b - a. */
    #define OKBSGD_P 4                  /* = PIECES */
    OKBSGD_MULTI(void, okbsgd_coefs1, (const double *restrict coef, double scale, Py_ssize_t m, Py_ssize_t a,
                                       Py_ssize_t b, double cancel, double zden, double *restrict a1,
                                       double *restrict a2, double *restrict lo, double *restrict hi),
                 (coef, scale, m, a, b, cancel, zden, a1, a2, lo, hi),
        vd_ zero, one, vam, van, den, x1, x2, vcan, vzd, vsix, vm5;
        vl_ absm, mask, pos;
        double am = scale * coef[m];
        Py_ssize_t i;
        int k;
        for (k = 0; k < W_; k++) {
            zero[k] = 0.0; one[k] = 1.0; vam[k] = am; vcan[k] = cancel; vzd[k] = zden; vsix[k] = 6.0;
            vm5[k] = -5.0; absm[k] = 0x7fffffffffffffffLL;
        }
        for (i = a; i + W_ <= b; i += W_) {
            van = scale * OKBSGD_LD(coef + i);
            den = vam + van;
            mask = OKBSGD_ABS(den) <= vcan * (OKBSGD_ABS(vam) + OKBSGD_ABS(van));
            den = OKBSGD_SELD(mask, vzd, den);
            x1 = zero + vam / den;
            x2 = zero + van / den;
            OKBSGD_ST(a1 + i, x1);
            OKBSGD_ST(a2 + i, x2);
            mask = x1 * x2 > zero;
            pos = x1 > zero;
            OKBSGD_ST(lo + i, OKBSGD_SELD(mask, zero, OKBSGD_SELD(pos, one, vm5)));
            OKBSGD_ST(hi + i, OKBSGD_SELD(mask, one, OKBSGD_SELD(pos, vsix, zero)));
        }
        for (; i < b; i++) {
            double an = scale * coef[i], d = am + an, y1, y2;
            if (fabs(d) <= cancel * (fabs(am) + fabs(an)))
                d = zden;
            y1 = 0.0 + am / d;
            y2 = 0.0 + an / d;
            a1[i] = y1;
            a2[i] = y2;
            lo[i] = y1 * y2 > 0.0 ? 0.0 : (y1 > 0.0 ? 1.0 : -5.0);
            hi[i] = y1 * y2 > 0.0 ? 1.0 : (y1 > 0.0 ? 6.0 : 0.0);
        })
    OKBSGD_MULTI(Py_ssize_t, okbsgd_prune1, (const double *restrict coef, double scale, Py_ssize_t m, Py_ssize_t a,
                                             Py_ssize_t b, const double *restrict lo, const double *restrict t,
                                             double ub, double rtol, double *restrict L, Py_ssize_t *restrict idx,
                                             double *restrict keep),
                 (coef, scale, m, a, b, lo, t, ub, rtol, L, idx, keep),
        vd_ zero, one, two, vam, aam, van, aan, kap, base, z, w, lb, lbo, u, v, vub, vrt, vlo, tj[OKBSGD_P + 1];
        vl_ absm;
        double am = scale * coef[m];
        Py_ssize_t i, n = b - a, ns = 0;
        int k, j;
        for (k = 0; k < W_; k++) {
            zero[k] = 0.0; one[k] = 1.0; two[k] = 2.0; vam[k] = am; vub[k] = ub; vrt[k] = rtol;
            absm[k] = 0x7fffffffffffffffLL;
        }
        aam = OKBSGD_ABS(vam);
        tj[0] = one;
        for (i = 0; i + W_ <= n; i += W_) {
            for (j = 1; j <= OKBSGD_P; j++)
                tj[j] = OKBSGD_LD(t + (j - 1) * n + i);
            kap = tj[OKBSGD_P];
            van = scale * OKBSGD_LD(coef + a + i);
            aan = OKBSGD_ABS(van);
            base = zero + (vam * vam + van * van + two * kap * vam * van);
            vlo = OKBSGD_LD(lo + a + i);
            u = OKBSGD_SELD(vlo > zero, one, kap);
            v = OKBSGD_SELD(vlo > zero, kap, one);
            w = aam * u + aan * v;
            lbo = base - (zero + w * w);
            lb = base - (zero + (aam * tj[OKBSGD_P - 1] + aan * tj[0]) * (aam * tj[OKBSGD_P - 1] + aan * tj[0]));
            for (j = 1; j < OKBSGD_P; j++) {
                w = aam * tj[OKBSGD_P - 1 - j] + aan * tj[j];
                z = base - (zero + w * w);
                lb = OKBSGD_SELD(z < lb, z, lb);
            }
            lb = OKBSGD_SELD(vlo != zero, lbo, lb);
            w = aam + aan;
            OKBSGD_STL(keep + i, ~(lb > vub + vrt * (zero + w * w)));
        }
        for (; i < n; i++) {
            double an = scale * coef[a + i], kp = t[(OKBSGD_P - 1) * n + i], bs, ww, lbs, zz, tt[OKBSGD_P + 1];
            long long kk;
            tt[0] = 1.0;
            for (j = 1; j <= OKBSGD_P; j++)
                tt[j] = t[(j - 1) * n + i];
            bs = 0.0 + (am * am + an * an + 2.0 * kp * am * an);
            if (lo[a + i] != 0.0) {
                ww = fabs(am) * (lo[a + i] > 0.0 ? 1.0 : kp) + fabs(an) * (lo[a + i] > 0.0 ? kp : 1.0);
                lbs = bs - (0.0 + ww * ww);
            } else {
                lbs = INFINITY;
                for (j = 0; j < OKBSGD_P; j++) {
                    ww = fabs(am) * tt[OKBSGD_P - 1 - j] + fabs(an) * tt[j];
                    zz = bs - (0.0 + ww * ww);
                    lbs = zz < lbs ? zz : lbs;
                }
            }
            ww = fabs(am) + fabs(an);
            kk = !(lbs > ub + rtol * (0.0 + ww * ww)) ? -1 : 0;
            memcpy(keep + i, &kk, sizeof kk);
        }
        for (i = 0; i < n; i++) {               /* the kept lanes, in slot order, without branches */
            long long kk;
            memcpy(&kk, keep + i, sizeof kk);
            kk = kk && a + i != m;
            idx[ns] = a + i;
            ns += kk;
            L[a + i] = kk ? L[a + i] : INFINITY;
        }
        return ns;)
    """
    Py_ssize_t okbsgd_oldest_le(const double* v, const long long* stamp, Py_ssize_t n, double limit) noexcept nogil
    void okbsgd_log_kernels(const double* X, int d, Py_ssize_t m, Py_ssize_t a, Py_ssize_t b, double gamma,
                            double* out) noexcept nogil
    void okbsgd_coefs1(const double* coef, double scale, Py_ssize_t m, Py_ssize_t a, Py_ssize_t b, double cancel,
                       double zden, double* a1, double* a2, double* lo, double* hi) noexcept nogil
    Py_ssize_t okbsgd_prune1(const double* coef, double scale, Py_ssize_t m, Py_ssize_t a, Py_ssize_t b,
                             const double* lo, const double* t, double ub, double rtol, double* L, Py_ssize_t* idx,
                             double* keep) noexcept nogil
    void okbsgd_golden(Py_ssize_t n, const Py_ssize_t* idx, const double* lk, const double* a1, const double* a2, double* lo, double* hi,
                       double tol, double golden, double tie, int max_sections, double* w) noexcept nogil
from onlinekern._core.losses cimport TaskLoss
from onlinekern._core.vmath cimport ok_vexp

import numbers

import numpy as np

from onlinekern._core.losses import TaskLoss as PyTaskLoss
from onlinekern.base import KernelLearner, is_auto
from onlinekern.params import stream_lam

cdef enum Maintenance:
    MAINTAIN_REMOVAL = 0
    MAINTAIN_MERGING = 1

REMOVAL = MAINTAIN_REMOVAL
MERGING = MAINTAIN_MERGING

cdef double GOLDEN = (sqrt(5.0) - 1.0) / 2.0     # 0.618..., the golden-section ratio
cdef double DUPLICATE_K = 1.0 - 1e-8            # k(x_j, x_t) >= this: x_t duplicates SV j
cdef double ZERO_DENOMINATOR = 1e-4             # spec: a zero alpha_mc + alpha_nc becomes 1e-4
cdef double NORM_TIE_RTOL = 1e-9                # see "Ties decided in exact arithmetic"
cdef double CANCEL_RTOL = 1e-9
cdef double J_TIE_RTOL = 1e-12
cdef double L_TIE_RTOL = 1e-12                # argmin of L: ties within this of (|alpha_m| + |alpha_n|)^2
cdef int MAX_SECTIONS = 400                     # safety net: tol is validated > 0, this never binds
cdef double PRUNE_RTOL = 1e-9                 # pruning margin, relative to (|alpha_m| + |alpha_n|)^2
cdef enum:
    GOLDEN_WORK = 18                            # golden_lanes' scratch per lane (n + 16 lanes)
    MAX_CHUNKS = 64                             # candidate blocks (threads) of one merge, at most
    PROBES = 8                                  # candidates searched first, for the pruning bound
    PIECES = 4                                  # pieces of [0, 1] in the lower bound on L


# --- the merge problem of §3.7 (nogil; also exposed to Python for the §5.13 test) ----------------

cdef inline double kpow(double e, double lk) noexcept nogil:
    """The exponent of kappa^e = exp(e ln kappa), with kappa^0 = 1 also when kappa = 0."""
    return 0.0 if e == 0.0 else e * lk


cdef void eval_J(Py_ssize_t n, const double* lk, const double* a1, const double* a2, const double* h,
                 double* f, double* size, double* e) noexcept nogil:
    """J(h_i) = -(a1_i kappa_i^((1-h_i)^2) + a2_i kappa_i^(h_i^2)) and size_i = |a1_i| kappa^.. +
    |a2_i| kappa^.. for n lanes at once: the 2n powers kappa^e = exp(e ln kappa) go through one
    vector exp (e: scratch of 2n)."""
    cdef Py_ssize_t i
    for i in range(n):
        e[i] = kpow((1.0 - h[i]) * (1.0 - h[i]), lk[i])
        e[n + i] = kpow(h[i] * h[i], lk[i])
    ok_vexp(e, e, <int>(2 * n))
    for i in range(n):
        size[i] = fabs(a1[i]) * e[i] + fabs(a2[i]) * e[n + i]
        f[i] = -(a1[i] * e[i] + a2[i] * e[n + i])


cdef void golden_lanes(Py_ssize_t n, const Py_ssize_t* idx, const double* lk, const double* a1,
                       const double* a2, double* lo, double* hi, double tol, double* w) noexcept nogil:
    """Minimise J_i on [lo_i, hi_i] by golden-section search for the n independent lanes
    i = idx[0..n) (§3.7; the loop of BudgetedSVM's goldenSectionSearch): each lane makes exactly
    the decisions of the one-pair search -- fp <= fq (+ the J_TIE_RTOL tie band) keeps the left
    part -- and stops when its bracket is narrower than 2 tol; lanes whose first brackets have the
    same width run in lockstep, eight to a vector, with one vector exp per round (okbsgd_golden
    above).  On return lo_i and hi_i hold the final bracket (h_i is its midpoint).  w: scratch of
    GOLDEN_WORK (n + 16) doubles.  The lanes never interact, so any split of the candidates into
    blocks (threads) or subsets gives the same bits."""
    okbsgd_golden(n, idx, lk, a1, a2, lo, hi, tol, GOLDEN, J_TIE_RTOL, MAX_SECTIONS, w)


cdef inline void merge_coefficients(const double* cm, double sm, const double* cn, double sn, int C,
                                    double* a1, double* a2, double* lo, double* hi) noexcept nogil:
    """a1 = sum_c alpha_mc / (alpha_mc + alpha_nc), a2 likewise (alpha_m = sm cm, alpha_n = sn cn),
    and the bracket of §3.7."""
    cdef int c
    cdef double am, an, den
    a1[0] = 0.0
    a2[0] = 0.0
    for c in range(C):
        am = sm * cm[c]
        an = sn * cn[c]
        den = am + an
        if fabs(den) <= CANCEL_RTOL * (fabs(am) + fabs(an)):
            den = ZERO_DENOMINATOR
        a1[0] = a1[0] + am / den
        a2[0] = a2[0] + an / den
    if a1[0] * a2[0] > 0.0:
        lo[0] = 0.0
        hi[0] = 1.0
    elif a1[0] > 0.0:
        lo[0] = 1.0
        hi[0] = 6.0
    else:
        lo[0] = -5.0
        hi[0] = 0.0


cdef inline double merge_magnitude(const double* cm, const double* cn, double sc, int C) noexcept nogil:
    """sum_c (|alpha_mc| + |alpha_nc|)^2 (alpha = sc c): the size of the terms of L for the merge of
    SVs m and n, the scale of PRUNE_RTOL and L_TIE_RTOL."""
    cdef int c
    cdef double am, an, mag = 0.0
    for c in range(C):
        am = fabs(sc * cm[c])
        an = fabs(sc * cn[c])
        mag = mag + (am + an) * (am + an)
    return mag


cdef inline double merge_loss(const double* cm, double sm, const double* cn, double sn, int C,
                              double kappa, double k1, double k2) noexcept nogil:
    """L = sum_c alpha_mc^2 + alpha_nc^2 + 2 kappa alpha_mc alpha_nc - alpha_zc^2, with
    alpha_z = alpha_m kappa^((1-h)^2) + alpha_n kappa^(h^2) = alpha_m k1 + alpha_n k2."""
    cdef int c
    cdef double am, an, az, L = 0.0
    for c in range(C):
        am = sm * cm[c]
        an = sn * cn[c]
        az = am * k1 + an * k2
        L = L + (am * am + an * an + 2.0 * kappa * am * an - az * az)
    return L


cdef void finish_lanes(Py_ssize_t n, const Py_ssize_t* idx, const double* lk, const double* lo,
                       const double* hi, double* h, double* k1, double* k2, double* kappa, double* e) noexcept nogil:
    """For the lanes i = idx[0..n): h_i = the bracket midpoint, k1_i = kappa_i^((1-h_i)^2),
    k2_i = kappa_i^(h_i^2) and kappa_i itself, through one vector exp (e: scratch of 3n)."""
    cdef Py_ssize_t i, r
    for r in range(n):
        i = idx[r]
        h[i] = 0.5 * (lo[i] + hi[i])
        e[r] = kpow((1.0 - h[i]) * (1.0 - h[i]), lk[i])
        e[n + r] = kpow(h[i] * h[i], lk[i])
        e[2 * n + r] = lk[i]
    ok_vexp(e, e, <int>(3 * n))
    for r in range(n):
        i = idx[r]
        k1[i] = e[r]
        k2[i] = e[n + r]
        kappa[i] = e[2 * n + r]


cdef double merge_loss_bound(const double* cm, double sm, const double* cn, double sn, int C, double lo,
                             const double* t) noexcept nogil:
    """A lower bound on the degradation L of the merge (merge_loss) at any h of the first bracket
    [lo, hi] (merge_coefficients), so at the h the search returns.  alpha_zc = alpha_mc k1 +
    alpha_nc k2 with 0 <= k1 = kappa^((1-h)^2) <= u and 0 <= k2 = kappa^(h^2) <= v, so
    alpha_zc^2 <= (|alpha_mc| u + |alpha_nc| v)^2: on [1, 6] u = 1, v = kappa; on [-5, 0] u = kappa,
    v = 1; on the piece [j/P, (j+1)/P] of [0, 1] u = t_(P-1-j), v = t_j, t_j = kappa^((j/P)^2).
    t: t_0 = 1, ..., t_(P-1), then t_P = kappa."""
    cdef int c, j
    cdef double am, an, base = 0.0, z, bound, u, v, w
    for c in range(C):
        am = sm * cm[c]
        an = sn * cn[c]
        base = base + (am * am + an * an + 2.0 * t[PIECES] * am * an)
    if lo != 0.0:
        u = 1.0 if lo > 0.0 else t[PIECES]
        v = t[PIECES] if lo > 0.0 else 1.0
        z = 0.0
        for c in range(C):
            w = fabs(sm * cm[c]) * u + fabs(sn * cn[c]) * v
            z = z + w * w
        return base - z
    bound = INFINITY
    for j in range(PIECES):
        z = 0.0
        for c in range(C):
            w = fabs(sm * cm[c]) * t[PIECES - 1 - j] + fabs(sn * cn[c]) * t[j]
            z = z + w * w
        if base - z < bound:
            bound = base - z
    return bound


def merge_search(kappa, alpha_m, alpha_n, tol=1e-4):
    """The merge of §3.7 for one pair, from Python (tests, §5.13).

    Parameters
    ----------
    kappa : float, k(x_m, x_n) in (0, 1].
    alpha_m, alpha_n : float or array (C,), the coefficients of the SV being merged and its partner.
    tol : float, golden-section tolerance.

    Returns
    -------
    dict with ``h`` (merged point z = h x_m + (1 - h) x_n), ``a1``, ``a2``, the bracket ``lo``,
    ``hi``, ``alpha_z`` (array (C,)) and the degradation ``loss`` L.
    """
    cdef double[::1] am = np.atleast_1d(np.ascontiguousarray(alpha_m, dtype=np.float64))
    cdef double[::1] an = np.atleast_1d(np.ascontiguousarray(alpha_n, dtype=np.float64))
    if am.shape[0] != an.shape[0] or am.shape[0] < 1:
        raise ValueError("alpha_m and alpha_n must have the same positive length")
    if not (isfinite(kappa) and 0.0 <= kappa <= 1.0):
        raise ValueError(f"kappa must lie in [0, 1], got {kappa!r}")
    if not (isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    cdef int C = <int>am.shape[0]
    cdef double lk = np.log(kappa) if kappa > 0 else -np.inf
    cdef double a1, a2, lo, hi, h, k1, k2, kap
    cdef double[::1] w = np.zeros(GOLDEN_WORK * 17)
    cdef Py_ssize_t zero = 0
    merge_coefficients(&am[0], 1.0, &an[0], 1.0, C, &a1, &a2, &lo, &hi)
    cdef double lo0 = lo, hi0 = hi
    golden_lanes(1, &zero, &lk, &a1, &a2, &lo, &hi, tol, &w[0])
    finish_lanes(1, &zero, &lk, &lo, &hi, &h, &k1, &k2, &kap, &w[0])
    a_m, a_n = np.asarray(am), np.asarray(an)
    return {"h": h, "a1": a1, "a2": a2, "lo": lo0, "hi": hi0, "alpha_z": a_m * k1 + a_n * k2,
            "loss": merge_loss(&am[0], 1.0, &an[0], 1.0, C, kappa, k1, k2)}


def merge_objective_value(h, kappa, a1, a2):
    """J(h) of §3.7 (tests), through the learner's own evaluation."""
    cdef double lk = np.log(kappa) if kappa > 0 else -np.inf
    cdef double hh = h, b1 = a1, b2 = a2, f, size
    cdef double e[2]
    eval_J(1, &lk, &b1, &b2, &hh, &f, &size, e)
    return f


# --- the learner core --------------------------------------------------------------------------

cdef class BSGDCore(KernelCore):
    cdef public double lam, merge_tol
    cdef public double lam_t              # > 0: anytime lambda_t = min(lam, lam_t / t) (ANYTIME_LAM, step)
    cdef readonly Py_ssize_t budget
    cdef readonly int maintenance
    cdef public TaskLoss loss
    cdef object buf_                  # scratch arrays below (kept alive here)
    cdef double* lane                 # 10 (B + 1): per merge candidate ln kappa, a1, a2, lo, hi,
                                      # h, k1, k2, kappa, L (structure of arrays)
    cdef double* work                 # GOLDEN_WORK (B + 1 + 16 MAX_CHUNKS): golden_lanes / finish_lanes
    cdef Py_ssize_t* lidx             # B + 1: the lanes (candidates) left to search
    cdef Py_ssize_t lcap              # B + 1
    cdef double* norms                # B + 1: ||alpha_i||^2
    cdef double* az                   # C: alpha of the merged SV
    cdef public long long n_maintenance   # budget maintenance steps so far
    cdef public long long n_merges        # merges of two distinct SVs so far

    def _setup_budget(self, Py_ssize_t budget, int maintenance, double lam, double merge_tol, double lam_t=0.0):
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        if maintenance not in (REMOVAL, MERGING):
            raise ValueError(f"unknown maintenance {maintenance!r}")
        if not (isfinite(lam) and lam > 0):
            raise ValueError(f"lam must be a positive finite number, got {lam!r}")
        if not (isfinite(merge_tol) and merge_tol > 0):
            raise ValueError(f"merge_tol must be a positive finite number, got {merge_tol!r}")
        self.budget = budget
        self.maintenance = maintenance
        self.lam = lam
        self.lam_t = lam_t if lam_t > 0 else 0.0
        self.merge_tol = merge_tol
        self.lcap = budget + 1
        self.buf_ = (np.zeros(1), np.zeros(10 * self.lcap), np.zeros(budget + 1),
                     np.zeros(self.n_outputs), np.zeros(GOLDEN_WORK * (self.lcap + 16 * MAX_CHUNKS)),
                     np.zeros(self.lcap, dtype=np.intp))
        cdef double[::1] a = self.buf_[0], b = self.buf_[1], c = self.buf_[2], e = self.buf_[3], f = self.buf_[4]
        cdef Py_ssize_t[::1] g = self.buf_[5]
        self.lidx = &g[0]
        self.lane = &b[0]
        self.norms = &c[0]
        self.az = &e[0]
        self.work = &f[0]

    cdef int step(self, const double* x, const int* idx, int nnz, double y, double* out) noexcept nogil:
        cdef double* g = self.grad_buf
        cdef double t = <double>(self.n_seen + 1)
        cdef double lam = self.lam, step_t
        cdef int c
        cdef bint nonzero = False
        cdef Py_ssize_t n_old
        # anytime lambda (lam_t > 0) past t = lam_t / lam: lambda_t = lam_t / t, and every SV keeps
        # the coefficient 1/(lambda_t t) = 1/lam_t it would have under a fixed lambda_t (the shrink
        # lambda_{t-1} (t - 1) / (lambda_t t) is 1)
        cdef bint anytime = self.lam_t > 0.0 and self.lam_t < lam * t
        self.kernel_scores(x, idx, nnz, out)                 # 1. f, and k(x_i, x_t) in self.sv.k
        self.loss.grad(out, y, self.n_outputs, g)
        if not anytime:
            self.sv.shrink(1.0 - 1.0 / t)                    # 2. Pegasos shrink (t = 1: to 0)
        for c in range(self.n_outputs):
            nonzero = nonzero or g[c] != 0.0
        if not nonzero:
            return 0
        step_t = self.lam_t if anytime else self.lam * t     # lambda_t t
        for c in range(self.n_outputs):                      # 3. append -g/(lambda t)
            g[c] = -g[c] / step_t
        n_old = self.sv.n
        if self.sv.append(x, idx, nnz, self.xsq, g) < 0:
            return -1
        if self.sv.n > self.budget:                          # 4. budget maintenance
            return self.maintain(n_old, g)
        return 0

    cdef Py_ssize_t oldest_of_min(self, Py_ssize_t n) noexcept nogil:
        """argmin of self.norms[0:n], ties (relative NORM_TIE_RTOL) to the oldest SV: the minimum
        (exact in any order), then the oldest SV within the tie band, both in vector lanes."""
        cdef double vmin = ok_scan_min(self.norms, n)
        return okbsgd_oldest_le(self.norms, self.sv.stamp, n, vmin + NORM_TIE_RTOL * vmin)

    cdef int maintain(self, Py_ssize_t n_old, const double* a_new) noexcept nogil:
        cdef Py_ssize_t i, j, new = self.sv.n - 1
        self.n_maintenance += 1
        # a duplicate of x_t among the old SVs (the kernel row of step 1 is still in self.sv.k;
        # the most similar one, ties to the oldest): a vector scan finds the first SV with
        # k >= DUPLICATE_K, and the rare case that there is one continues the scalar rule from it
        j = ok_first_ge(self.sv.k, n_old, DUPLICATE_K)
        if j >= 0:
            for i in range(j + 1, n_old):
                if self.sv.k[i] >= DUPLICATE_K and (self.sv.k[i] > self.sv.k[j]
                                               or (self.sv.k[i] == self.sv.k[j] and self.sv.stamp[i] < self.sv.stamp[j])):
                    j = i
            if self.maintenance == MAINTAIN_MERGING:
                self.sv.add_coef(j, a_new)                # alpha_j += alpha_new
            self.sv.remove(new)
            return 0
        # ||alpha_i||^2 k(x_i, x_i), k(x_i, x_i) = 1 for the Gaussian kernel
        ok_coef_norms(self.sv.coef, self.sv.scale, self.n_outputs, self.sv.n, 0, self.norms)
        if self.maintenance == MAINTAIN_REMOVAL:
            self.sv.remove(self.oldest_of_min(self.sv.n))
            return 0
        return self.merge(self.oldest_of_min(self.sv.n))

    cdef int merge(self, Py_ssize_t m) noexcept nogil:
        cdef Py_ssize_t n = self.sv.n, i, best = -1, ch, nch = 1
        cdef int c, C = self.n_outputs
        cdef Py_ssize_t dd = self.sv.w            # values per kernel evaluation (dense: d)
        cdef double h, k1, k2, lmin = INFINITY
        cdef double* L = self.lane + 9 * self.lcap
        if self.sv.mode == STORE_SLAB:
            dd = <Py_ssize_t>(self.sv.nnz_total // n)
        self.sv.begin_sv_query(m)                       # SV m: the query of every candidate's kernel
        # every candidate partner is independent: split them over threads when worth it (the
        # lanes never interact, so the blocks give the same bits as one); the argmin below runs
        # serially in slot order, so the result never depends on the threads
        if self.n_threads > 1 and n * (dd + 64) >= self.sv.par_threshold:
            nch = min(self.n_threads, MAX_CHUNKS)
        if nch > 1:
            for ch in prange(nch, num_threads=self.n_threads, schedule="static"):
                self.candidates(m, ch * n // nch, (ch + 1) * n // nch, ch)
        else:
            self.candidates(m, 0, n, 0)
        self.sv.end_sv_query()
        for i in range(n):                              # the least L (pruned candidates: +inf)
            if i != m and L[i] < lmin:
                lmin = L[i]
        for i in range(n):                              # the oldest within the tie band of it
            if i == m or not L[i] < INFINITY:           # pruned (+inf), or not a number
                continue
            if L[i] > lmin and L[i] - lmin > L_TIE_RTOL * merge_magnitude(self.sv.coef + m * C, self.sv.coef + i * C,
                                                                         self.sv.scale, C):
                continue
            if best < 0 or self.sv.stamp[i] < self.sv.stamp[best]:
                best = i
        if best < 0:                                    # no finite L at all: the first candidate
            best = 1 if m == 0 else 0
        h = self.lane[5 * self.lcap + best]
        k1 = self.lane[6 * self.lcap + best]
        k2 = self.lane[7 * self.lcap + best]
        for c in range(C):
            self.az[c] = sv_alpha(self.sv, m, c) * k1 + sv_alpha(self.sv, best, c) * k2
        # z = h x_m + (1 - h) x_n takes x_m*'s place (BudgetedSVM order)
        if self.sv.merge_into(m, best, h, self.az) != 0:
            return -1
        self.sv.remove(best)
        self.n_merges += 1
        return 0

    cdef void candidates(self, Py_ssize_t m, Py_ssize_t a, Py_ssize_t b, Py_ssize_t ch) noexcept nogil:
        """Merge candidates a..b-1 (partners of SV m): ln kappa (SupportSet.log_kernel_sv's sums),
        a1, a2 and the bracket of each, then the golden-section search, h, k1, k2, kappa and the
        degradation L of those that can be the best partner (lane m is left with L unset).

        Pruning, which changes no result: the PROBES nearest candidates (largest kappa) are searched
        first, and their least degradation U bounds the best one from above.  A candidate whose
        lower bound on L (merge_loss_bound, at any h of its bracket, so at the one the search
        would return) exceeds U by more than PRUNE_RTOL (|alpha_m| + |alpha_n|)^2 -- far above the
        rounding of L and of the bound -- has L > U >= the best L, so it can be neither the argmin
        nor tie with it: it gets L = +inf and no search.  Every other lane is searched exactly as
        before (the lanes never interact), so the chosen partner and the merged SV keep their bits.
        On ijcnn1 (B = 1000, gamma = 4) about 90% of the candidates are pruned."""
        cdef Py_ssize_t i, j, r, cap = self.lcap, npr = 0, ns = 0
        cdef int C = self.n_outputs
        cdef double sc = self.sv.scale, ub = INFINITY, lb
        cdef double* lk = self.lane
        cdef double* L = self.lane + 9 * cap
        cdef double* cm = self.sv.coef + m * C
        cdef double* cn
        cdef double* wk = self.work + GOLDEN_WORK * (a + 16 * ch)   # block ch's own scratch
        cdef Py_ssize_t* idx = self.lidx + a                      # block ch's lane list
        cdef Py_ssize_t probe[PROBES]
        cdef double pl[PROBES]
        cdef double t[PIECES + 1]
        if self.sv.mode == STORE_DENSE:
            okbsgd_log_kernels(self.sv.X, self.sv.d, m, a, b, self.sv.gamma, lk)
        else:
            self.sv.log_kernels_sv(m, a, b, lk)
        if C == 1:
            okbsgd_coefs1(self.sv.coef, sc, m, a, b, CANCEL_RTOL, ZERO_DENOMINATOR, lk + cap, lk + 2 * cap,
                          lk + 3 * cap, lk + 4 * cap)
        for i in range(a, b):
            if i == m:
                continue
            if C != 1:
                merge_coefficients(cm, sc, self.sv.coef + i * C, sc, C,
                                   lk + cap + i, lk + 2 * cap + i, lk + 3 * cap + i, lk + 4 * cap + i)
            # the PROBES largest ln kappa so far, in decreasing order (ties: the earlier slot)
            if npr < PROBES or lk[i] > lk[probe[npr - 1]]:
                j = npr if npr < PROBES else PROBES - 1
                while j > 0 and lk[i] > lk[probe[j - 1]]:
                    probe[j] = probe[j - 1]
                    j -= 1
                probe[j] = i
                if npr < PROBES:
                    npr += 1
        self.search(m, npr, probe, wk)
        for r in range(npr):
            if L[probe[r]] < ub:
                ub = L[probe[r]]
        # the lower bounds: kappa^((j/P)^2), j = 1..P-1, and kappa of every other candidate in one
        # vector exp (wk holds 4 per lane: GOLDEN_WORK >= PIECES)
        for i in range(a, b):
            for j in range(1, PIECES + 1):
                wk[(j - 1) * (b - a) + i - a] = kpow(<double>(j * j) / <double>(PIECES * PIECES), lk[i])
        ok_vexp(wk, wk, <int>(PIECES * (b - a)))
        if C == 1:
            # the probes' brackets are searched already (so no longer first brackets): their L is
            # kept as it is and they are dropped from the list
            for r in range(npr):
                pl[r] = L[probe[r]]
            ns = okbsgd_prune1(self.sv.coef, sc, m, a, b, lk + 3 * cap, wk, ub, PRUNE_RTOL, L, idx,
                               wk + PIECES * (b - a))
            for r in range(npr):
                L[probe[r]] = pl[r]
            j = 0
            for r in range(ns):
                for c in range(npr):
                    if probe[c] == idx[r]:
                        break
                else:
                    idx[j] = idx[r]
                    j += 1
            self.search(m, j, idx, wk)
            return
        t[0] = 1.0
        for i in range(a, b):
            if i == m:
                continue
            for r in range(npr):
                if probe[r] == i:
                    break
            else:
                for j in range(1, PIECES + 1):
                    t[j] = wk[(j - 1) * (b - a) + i - a]
                cn = self.sv.coef + i * C
                lb = merge_loss_bound(cm, sc, cn, sc, C, lk[3 * cap + i], t)
                if lb > ub + PRUNE_RTOL * merge_magnitude(cm, cn, sc, C):
                    L[i] = INFINITY
                else:
                    idx[ns] = i
                    ns += 1
        self.search(m, ns, idx, wk)

    cdef void search(self, Py_ssize_t m, Py_ssize_t n, const Py_ssize_t* idx, double* wk) noexcept nogil:
        """The golden-section search, h, k1, k2, kappa and L of the candidates idx[0..n)."""
        cdef Py_ssize_t r, i, cap = self.lcap
        cdef int C = self.n_outputs
        cdef double* lk = self.lane
        cdef double* cm = self.sv.coef + m * C
        golden_lanes(n, idx, lk, lk + cap, lk + 2 * cap, lk + 3 * cap, lk + 4 * cap, self.merge_tol, wk)
        finish_lanes(n, idx, lk, lk + 3 * cap, lk + 4 * cap, lk + 5 * cap, lk + 6 * cap, lk + 7 * cap,
                     lk + 8 * cap, wk)
        for r in range(n):
            i = idx[r]
            lk[9 * cap + i] = merge_loss(cm, self.sv.scale, self.sv.coef + i * C, self.sv.scale, C,
                                         lk[8 * cap + i], lk[6 * cap + i], lk[7 * cap + i])

    def get_state(self):
        st = KernelCore.get_state(self)
        st.update(lam=self.lam, lam_t=self.lam_t, merge_tol=self.merge_tol, budget=self.budget, maintenance=self.maintenance,
                  loss=self.loss.spec, n_maintenance=self.n_maintenance, n_merges=self.n_merges)
        return st

    def set_state(self, st):
        KernelCore.set_state(self, st)
        budget = int(st["budget"])
        self._setup_budget(budget, int(st["maintenance"]), float(st["lam"]), float(st["merge_tol"]),
                           float(st.get("lam_t", 0.0)))
        if self.sv.budget != budget + 1 or self.sv.n > budget:
            raise ValueError("support set does not match the budget")
        self.loss = _bsgd_loss(st["loss"]["epsilon"], self.task)
        if self.loss.spec != st["loss"]:
            raise ValueError("BSGD uses the hinge (classification) or epsilon-insensitive (regression) loss")
        self.n_maintenance = int(st["n_maintenance"])
        self.n_merges = int(st["n_merges"])


def _bsgd_loss(epsilon, int task):
    """Hinge (binary), Crammer–Singer hinge (multiclass) or epsilon-insensitive (regression)."""
    if task == TASK_REGRESSION:
        return PyTaskLoss("epsilon-insensitive", False, float(epsilon))
    return PyTaskLoss("hinge", task == TASK_MULTICLASS)


#: lam of the product preset for regression: the first Pegasos step 1/lam ~ 33 on targets
#: standardised online.  The papers' 1e-4 (BSGD) or 2/T (DualSGD) makes every coefficient
#: -g/(lam t), so early predictions reach 1e4 target units and the squared loss diverges; measured on
#: the first 2,000 rows of casp, cadata and abalone, lam in [0.01, 0.1] is the best of
#: {1e-4, ..., 1} for both learners; on 5,000 rows (budget 1,000) 0.03 beats 0.1 on all three
#: (RMSE / running mean's, merge: casp 0.95 -> 0.91, cadata 0.89 -> 0.77, abalone 0.87 -> 0.83;
#: removal 0.97 / 0.94 / 0.89 -> 0.94 / 0.85 / 0.85), and 0.01 is unstable for DualSGD-l2 (cadata 1.18).
REGRESSION_LAM = 0.03
#: Product lam of classification when the stream length T is not known (a first ``partial_fit``):
#: 1e-3 (the papers' 1e-4 makes the first steps 1/(lam t) = 10^4; on the first 5,000 rows of the
#: shared classification sets at B = 1000, 1e-3 lowered both learners' mistake rate on poker, a9a,
#: magic04 and cod-rna, e.g. BSGD-merge poker 51.7 -> 47.9 %, a9a 18.2 -> 17.1 %, and raised it on
#: ijcnn1 (8.8 -> 9.3 %): BENCHMARKS.md "Defaults").  It is :data:`LAM_T` / T for T = 4,000.
CLASSIFICATION_LAM = 1e-3
#: Product lam of classification when T is known (``fit``, ``run_online``, the CLI): LAM_T / T,
#: the Pegasos form of a C-SVM with C = 1/(lam T) = 1/4 whatever the length, and at most
#: CLASSIFICATION_LAM (a stream shorter than 4,000 keeps the value measured on short streams).  A fixed lam
#: regularises a long stream far too much once the budget binds: on the whole sets (permutation 0,
#: B = 1000, gamma "auto") lam = 1e-3 gave BSGD-merge ijcnn1 (141,691 rows) 7.92 %, a9a 17.36,
#: cod-rna.tr 7.43, w8a 2.70 and BSGD-removal 9.07 / 18.00 / 20.56 / 2.51; lam = 4/T gives
#: 2.36 / 16.67 / 6.36 / 2.12 and 7.87 / 17.82 / 9.75 / 2.71 (of lam T in {1, 2, 4, 16, 64}, 4 is
#: the best for merging on all four sets; removal's best lam T is 0.25-4 by set).  Smaller lam also
#: means fewer margin errors, so fewer merges: BSGD-merge on w8a 20.3 -> 9.6 s of learning.
LAM_T = 4.0
#: Product lam of classification when T is not known (a first ``partial_fit``, ``train --stream``
#: with ``--classes`` and ``--n-features``, the river adapter): lambda_t = min(CLASSIFICATION_LAM,
#: ANYTIME_LAM_T / t), the model at every t the one a fixed lambda_t would give, with every SV's
#: coefficient 1/(lambda_t t) (a C-SVM's C = 1 over the examples seen so far): Pegasos up to
#: t = 1,000, then no shrink and a step of 1 per margin error.  A fixed 1e-3 regularises a long
#: stream ever more (whole ijcnn1 in one pass: BSGD-merge 7.85 %; the 500,000-row text stream:
#: 40.4 % at 65,536 rows against 10.7 % with T known).  Measured over whole ijcnn1, a9a, w8a and
#: cod-rna.tr (permuted, one pass, BENCHMARKS.md "Defaults over whole streams"): ANYTIME_LAM_T = 1
#: beat 4 on 7 of the 8 (learner, set) cells and the known-length rule on 7 (ijcnn1 merging 2.18 %
#: against 2.38; a9a merging 16.65 against 16.63); the variant that kept the Pegasos shrink
#: (older SVs weighted tau / t) was worse (ijcnn1 merging 2.73 %).
ANYTIME_LAM_T = 1.0
ANYTIME_LAM = f"min({CLASSIFICATION_LAM:g}, {ANYTIME_LAM_T:g}/t)"


class _BSGD(KernelLearner):
    """Shared Python half of BSGDRemoval and BSGDMerge (not registered: no family)."""

    paper_defaults = {"gamma": None, "lam": 1e-4, "budget": 50}

    losses = None
    tasks = ("binary", "multiclass", "regression")
    paper = "Wang, Crammer & Vucetic, JMLR 2012"
    _maintenance = REMOVAL

    def auto_value(self, name, X, task, n_outputs, n_stream):
        """lam: :data:`LAM_T` / T, at most :data:`CLASSIFICATION_LAM`, for classification when the
        stream length T is known, else :data:`CLASSIFICATION_LAM` (papers: 1e-4);
        :data:`REGRESSION_LAM` for regression, lowered with a known horizon
        (:func:`onlinekern.params.stream_lam`);
        budget: :data:`onlinekern.params.AUTO_BUDGET` (a9a, ijcnn1 and w8a learn within 5,000
        examples at 1,000 support vectors, not at 50: BENCHMARKS.md "Defaults")."""
        if name == "lam":
            if task == "regression":
                return stream_lam(REGRESSION_LAM, n_stream)
            return min(CLASSIFICATION_LAM, LAM_T / n_stream) if n_stream else ANYTIME_LAM
        return super().auto_value(name, X, task, n_outputs, n_stream)

    def _validate_params(self):
        super()._validate_params()
        if is_auto(self.lam):
            pass
        elif isinstance(self.lam, (bool, np.bool_)) or not isinstance(self.lam, numbers.Real) \
                or not np.isfinite(self.lam) or self.lam <= 0:
            raise ValueError(f"lam must be a positive finite number (Pegasos steps 1/(lam t)), got {self.lam!r}")
        tol = getattr(self, "merge_tol", 1e-4)
        if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real) or not np.isfinite(tol) or tol <= 0:
            raise ValueError(f"merge_tol must be a positive finite number, got {tol!r}")

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        core = BSGDCore()
        # one slot beyond the budget: step 3 appends before step 4 restores |S| <= B
        budget = int(self.param_value("budget"))
        core._setup_kernel(n_features, task, n_outputs, gamma, budget + 1, self._n_threads())
        lam = self.param_value("lam")
        anytime = lam == ANYTIME_LAM
        core._setup_budget(budget, self._maintenance, CLASSIFICATION_LAM if anytime else float(lam),
                           float(getattr(self, "merge_tol", 1e-4)), ANYTIME_LAM_T if anytime else 0.0)
        core.loss = _bsgd_loss(self.epsilon, task)
        return core

    @property
    def n_maintenance_(self):
        """Budget maintenance steps (removals or merges, duplicates included) so far."""
        self._check_fitted()
        return int(self.core_.n_maintenance)


class BSGDRemoval(_BSGD):
    """BSGD with removal: kernel Pegasos that deletes the smallest-norm SV when over budget.

    Wang, Crammer & Vucetic, "Breaking the curse of kernelization: budgeted stochastic gradient
    descent for large-scale SVM training", JMLR 13 (2012).  ALGORITHMS.md §3.7.

    Parameters
    ----------
    budget : int or 'auto'
        Maximum number of SVs B; 'auto' (default): 1,000 (the 'paper' preset: 50, BudgetedSVM ``-B``).
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    lam : float or 'auto'
        Pegasos regularisation lambda > 0, step 1/(lambda t).  'auto' (default): for
        classification min(1e-3, 4/T) when the stream length T is known (``fit``, ``run_online``,
        the CLI; LAM_T: a C-SVM's C = 1/(lambda T) = 1/4 at any length past 4,000 examples) and
        min(1e-3, 1/t) when it is not (a first ``partial_fit``, ``train --stream`` with the
        classes given: ANYTIME_LAM, C = 1 over the examples seen so far, shown as
        ``lam_ = "min(0.001, 1/t)"``); 0.03 for regression (REGRESSION_LAM), down to 0.01 on a
        long stream of known length (:func:`onlinekern.params.stream_lam`); the 'paper' preset:
        1e-4 (BudgetedSVM ``-L``).
    epsilon : float
        Regression tube of the epsilon-insensitive loss (0.1; regression is ext).
    task : {'classification', 'regression'}
        Hinge / Crammer–Singer hinge, or epsilon-insensitive regression.
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Seed (used by gamma='median').
    n_threads : int or None
        Threads for kernel sums (None: all cores, or OMP_NUM_THREADS); results never depend on it.
    """

    family = "bsgd-removal"
    summary = "budgeted Pegasos (BSGD): delete the smallest-norm SV when over budget"
    _maintenance = REMOVAL

    def __init__(self, budget="auto", gamma="auto", lam="auto", epsilon=0.1, task="classification", preset="auto", seed=0,
                 n_threads=None):
        self.budget = budget
        self.gamma = gamma
        self.preset = preset
        self.lam = lam
        self.epsilon = epsilon
        self.task = task
        self.seed = seed
        self.n_threads = n_threads


class BSGDMerge(_BSGD):
    """BSGD with merging (BSGD-M): the smallest-norm SV is merged with its best partner.

    Wang, Crammer & Vucetic, JMLR 13 (2012), merging for the Gaussian kernel; the
    golden-section search follows BudgetedSVM (djurikom/BudgetedSVM).  ALGORITHMS.md §3.7.  The IJCAI'17 "BSGD-M".

    Parameters
    ----------
    budget : int or 'auto'
        Maximum number of SVs B; 'auto' (default): 1,000 (the 'paper' preset: 50, BudgetedSVM ``-B``).
    gamma : float, 'auto', 'median' or None
        Kernel width g of exp(-g ||x - x'||^2); 'auto' (default): chosen online on the first few
        thousand examples among multiples of the median-heuristic width, with and without
        dividing each feature by its range or standard deviation (onlinekern.selection; the 'paper' preset: the papers' width);
        None = 1/n_features.
    lam : float or 'auto'
        Pegasos regularisation lambda > 0, step 1/(lambda t).  'auto' (default): for
        classification min(1e-3, 4/T) when the stream length T is known (``fit``, ``run_online``,
        the CLI; LAM_T: a C-SVM's C = 1/(lambda T) = 1/4 at any length past 4,000 examples) and
        min(1e-3, 1/t) when it is not (a first ``partial_fit``, ``train --stream`` with the
        classes given: ANYTIME_LAM, C = 1 over the examples seen so far, shown as
        ``lam_ = "min(0.001, 1/t)"``); 0.03 for regression (REGRESSION_LAM), down to 0.01 on a
        long stream of known length (:func:`onlinekern.params.stream_lam`); the 'paper' preset:
        1e-4 (BudgetedSVM ``-L``).
    merge_tol : float
        Golden-section tolerance: stop when the bracket is narrower than 2 merge_tol (1e-4,
        BudgetedSVM).
    epsilon : float
        Regression tube of the epsilon-insensitive loss (0.1; regression is ext).
    task : {'classification', 'regression'}
        Hinge / Crammer–Singer hinge, or epsilon-insensitive regression.
    preset : {'auto', 'paper'}
        'auto' (default): parameters left at 'auto' take the product defaults, resolved on the
        first data (fitted attributes ``gamma_``, ``feature_scale_``, ...), and regression targets
        are standardised online (running mean and standard deviation; predictions and RMSE stay in
        the user's units).  'paper': every 'auto' parameter takes the papers' value
        (``paper_defaults``, ALGORITHMS.md's tables) and targets are used as given.
    seed : int
        Seed (used by gamma='median').
    n_threads : int or None
        Threads for kernel sums and merge candidates (None: all cores, or OMP_NUM_THREADS); results never depend on it.
    """

    family = "bsgd-merge"
    summary = "budgeted Pegasos (BSGD-M): merge the smallest-norm SV with its best partner"
    _maintenance = MERGING
    #: gamma="auto" races the widths until the budget has filled 3 times
    #: (:func:`onlinekern.selection.race_stages`): every margin error adds an SV, so the budget
    #: fills within the first B examples, and only then do merges show what a width costs.  On the
    #: text-like stream (tools/make_text_stream.py, 2^20 columns, first 40,000 rows) the race of the
    #: first 7,000 kept gamma = 17.95, whose merges of nearly orthogonal rows undo what was learned
    #: (18.4 % of the first 2,048 examples, 38.9 % of the first 32,768); the 3 B race keeps 1.12
    #: (18.7 % of all 40,000).
    race_budget_fills = 3

    def __init__(self, budget="auto", gamma="auto", lam="auto", merge_tol=1e-4, epsilon=0.1, task="classification",
                 preset="auto", seed=0, n_threads=None):
        self.budget = budget
        self.gamma = gamma
        self.preset = preset
        self.lam = lam
        self.merge_tol = merge_tol
        self.epsilon = epsilon
        self.task = task
        self.seed = seed
        self.n_threads = n_threads

    @property
    def n_merges_(self):
        """Merges of two distinct SVs so far (duplicates absorbed are not counted)."""
        self._check_fitted()
        return int(self.core_.n_merges)
