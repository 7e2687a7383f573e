"""Cost model per learner: the arithmetic an example costs, the bound it implies on this machine,
and the measured time per example against it (issue 7; docs/performance.md sections 2-3).

Each learner at its paper setting makes one pass (one thread, permutation 0 of seed 0, ~100
checkpoints, pre-update scores kept); from that run come the average model size S, the update
fraction u, nnz and d; the per-example operation counts follow the learner's code, and the
machine's measured primitives (tools/bench_primitives.py, top level, portable build) turn them
into a time:

    bound(ns / example) = n_exp * exp_ns + n_cossin * cossin_ns + n_normal * normal_ns
                          + max(n_madd * roof_ns,  sum_parts bytes_part / bandwidth(level(ws_part)))

roof_ns: ns per lane multiply-add at peak FMA; exp_ns, cossin_ns: ok_vexp / ok_vcossin at n =
1000; normal_ns: one normal of the counter-based generator (a uniform counts as one normal);
bandwidth(level): streaming read of the level holding the part's working set (<= 48 KB L1,
<= 1 MB L2, <= 32 MB L3, else DRAM); a multiply-add is two flops of any kind.  Scalar libm calls
are counted at the vector price.  The ratio is measured / bound; the target is <= 2.

    python tools/bench_bounds.py --json bounds.json      # measures the primitives first (~1 min)
    python tools/bench_primitives.py --json prim.json && python tools/bench_bounds.py --primitives prim.json
    python tools/bench_bounds.py --only fogd,rbp --repeats 1
    python tools/bench_bounds.py --rows 20000          # cap every data set at 20,000 rows
"""
import json
import math
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import harness as h

import onlinekern as ok
from onlinekern._core import counter_rng
from onlinekern.preprocessing import FeatureScaler

LEVEL_LIMITS = (("L1", 48 * 1024), ("L2", 1024 * 1024), ("L3", 32 * 1024 * 1024), ("DRAM", float("inf")))
STREAM_NAMES = {"L1": "stream read 16 KB (L1)", "L2": "stream read 256 KB (L2)",
                "L3": "stream read 4 MB (L3)", "DRAM": "stream read 256 MB (DRAM)"}
FORMULA = ("bound(ns/ex) = n_exp*exp_ns + n_cossin*cossin_ns + n_normal*normal_ns + "
           "max(n_madd*roof_ns, sum_parts bytes/bandwidth(level(working set)))")

# ---- primitives -------------------------------------------------------------------------------


def load_primitives(path):
    if path and Path(path).exists():
        doc = json.loads(Path(path).read_text())
        src = str(path)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="bounds-prim-")) / "prim.json"
        script = h.REPO / "tools" / "bench_primitives.py"
        subprocess.run([sys.executable, str(script), "--json", str(tmp)], check=True)
        doc = json.loads(tmp.read_text())
        src = f"{script} (run now)"
    res = [r for r in doc["results"] if r.get("build") == "portable"]
    levels = {r["level"] for r in res}
    top = "avx512" if any(lv.startswith("avx512") for lv in levels) else (
        "avx2" if any(lv.startswith("avx2") for lv in levels) else "base")

    def pick(prim, n=None, level_prefix=top):
        c = [r for r in res if r["primitive"] == prim and r["level"].startswith(level_prefix)
             and (n is None or r["n"] == n)]
        if not c:
            raise SystemExit(f"bench_bounds: primitive {prim!r} (level {level_prefix}, n {n}) not in {src}")
        return c[0]

    fma = [r for r in res if r["primitive"] == "peak FMA" and r["level"].startswith(top)]
    fma = min(fma, key=lambda r: r["ns_per_unit"])
    p = {"source": src, "level": top, "roof_ns": fma["ns_per_unit"], "roof_level": fma["level"],
         "exp_ns": pick("ok_vexp", 1000)["ns_per_unit"],
         "cossin_ns": pick("ok_vcossin (cos+sin)", 1000)["ns_per_unit"], "bw": {}}
    for lv, name in STREAM_NAMES.items():
        r = pick(name)
        p["bw"][lv] = 8.0 / r["ns_per_unit"]          # bytes per ns = GB/s (one double per unit)
    p["normal_ns"], p["uniform_ns"] = measure_rng()
    p["machine_busy"] = doc.get("machine_busy")
    return p


def measure_rng(n=2_000_000, repeats=5):
    """ns per standard normal / per uniform of the counter-based generator (compiled loop), medians."""
    counter_rng.normals(0, 2, 1, 1000)
    med, _ = h.side_by_side({"normal": lambda: counter_rng.normals(0, 2, 1, n),
                             "uniform": lambda: counter_rng.uniforms(0, 2, 1, n // 4)}, repeats)
    return med["normal"] / n * 1e9, med["uniform"] / (n // 4) * 1e9


def level_of(ws):
    """The memory level a working set of ``ws`` bytes fits in."""
    return next(name for name, lim in LEVEL_LIMITS if ws <= lim)


# ---- cost models ------------------------------------------------------------------------------
# Every model returns per-example averages: madd, exp, cossin, normal, and parts = [(label, bytes,
# working set bytes)].  st: the run's statistics (arrays over the presented examples).


@dataclass
class Cost:
    madd: float = 0.0
    exp: float = 0.0
    cossin: float = 0.0
    normal: float = 0.0
    parts: dict = field(default_factory=dict)     # label -> [bytes per example, working set]
    notes: list = field(default_factory=list)

    def mem(self, label, nbytes, ws):
        if label in self.parts:
            self.parts[label][0] += nbytes
            self.parts[label][1] = max(self.parts[label][1], ws)
        else:
            self.parts[label] = [float(nbytes), float(ws)]


def kernel_pred(cost, S, st, cap, C, dense_query=None, weight=1.0, label="SV store"):
    """Feature-major kernel scores over S SVs (ok_sqdist_fm + vexp + alpha.k), S an array over examples
    or a scalar; weight: fraction of examples paying it (array or scalar)."""
    d, nz = st["d"], st["nnz"]
    dense = st["dense"] if dense_query is None else dense_query
    per_sv_madd = 1.5 * d if dense else 2.5 * nz
    per_sv_bytes = 8 * (d if dense else nz) + 8 * (2 + C)    # XT rows, sqn, k, coef
    Sw = np.mean(np.asarray(S, dtype=float) * weight)
    cost.madd += Sw * (per_sv_madd + C)
    cost.exp += Sw
    cost.mem(label, Sw * per_sv_bytes, cap * 8 * (2 * d + 2 + C))   # X + XT mirror + sqn/k/coef


def append_cost(cost, st, frac, cap):
    """SupportSet.append/replace: memset + scatter of the row, the strided mirror write (d lines)."""
    cost.mem("SV store", frac * 8 * 2 * st["d"], cap * 8 * 2 * st["d"])


def model_kernel(name, case, st, p):
    """The kernel learners (§3.1-3.8)."""
    c = Cost()
    C, d = st["C"], st["d"]
    S, upd, full = st["S_t"], st["upd"], st["full"]
    B = case.get("budget")
    cap = B if B else max(st["S_max"], 1)
    fam = case["family"]
    kernel_pred(c, S, st, cap, C)
    u = float(np.mean(upd))
    uf = float(np.mean(upd & full))
    append_cost(c, st, u, cap)
    if fam == "forgetron":
        # at the budget: f(x_r) of the oldest SV (a dense query over S) + the oldest scan
        kernel_pred(c, S, st, cap, C, dense_query=True, weight=(upd & full))
        c.mem("SV store", uf * 8 * cap, cap * 8 * 2 * d)
    elif fam == "bpas":
        c.madd += uf * B * 4 * C                # Q_r for every SV: ~8 flops
        c.mem("SV store", uf * B * 16 * C, cap * 8 * 2 * d)
    elif fam in ("bogd", "bogdpp"):
        extra = 2 * C if fam == "bogdpp" else C     # (++) norms, then the rescale of every survivor
        c.madd += uf * B * (extra + 1)
        c.mem("SV store", uf * B * 8 * (2 * C + 2), cap * 8 * 2 * d)
    elif fam in ("bsgd-removal", "bsgd-merge"):
        c.madd += uf * B * (C + 1)                  # duplicate scan + norms + argmin
        c.mem("SV store", uf * B * 8 * (C + 3), cap * 8 * 2 * d)
        if fam == "bsgd-merge":
            tol = case["params"].get("merge_tol", 1e-4)
            it = math.ceil(math.log(1.0 / (2 * tol)) / math.log(2 / (math.sqrt(5) - 1)))   # bracket [0, 1]
            # per candidate: kernel_sv (1.5 d madd + 1 exp), golden section (2 + it evaluations of
            # 2 pows, kappa^e = exp(-g dist e): one exp each) + the final 2 pows; ~10 flops per pow
            c.madd += uf * B * (1.5 * d + (2 * (2 + it) + 2) * 5 + 6 * C)
            c.exp += uf * B * (1 + 2 * (2 + it) + 2)
            c.mem("SV rows (merge)", uf * B * 8 * (d + C), cap * 8 * 2 * d)
            c.madd += uf * 2 * d                    # z = h x_m + (1 - h) x_n
            c.notes.append(f"golden-section {it} iterations per candidate (bracket [0,1], tol {tol:g}; 22 for [1,6])")
    elif fam == "lasvm":
        # the kernel rows of SVs the core computed (cache misses: a dense query over S each); per
        # direction search the gradient update g -= lam (k_i - k_j) (2 madd, 3 arrays per SV); per
        # working-pair scan the extremes over alpha, bounds, g (4 arrays) and the first-slot pass
        # (3 arrays); the cleanup pass (alpha, y, g) once per example; the eviction scan per
        # insertion at the budget
        n = st["n"]
        miss = (st["rows_asked"] - st["rows_hit"]) / n
        kernel_pred(c, S, st, cap, C, dense_query=True, weight=miss, label="SV store (SV rows)")
        srch, scans, S_avg = st["searches"] / n, st["scans"] / n, float(np.mean(S))
        ws = cap * 8 * (5 + case["params"].get("cache_rows", 32))
        c.madd += S_avg * (2 * srch + 2 * scans + 1) + uf * B * 2
        c.mem("gradients, bounds, rows", S_avg * 8 * (3 * srch + 7 * scans + 3 + miss) + uf * B * 8 * 3, ws)
        c.notes.append(f"per example: {miss:.2f} SV kernel rows computed ({st['rows_hit'] / max(st['rows_asked'], 1):.0%} "
                       f"of those asked for cached), {srch:.2f} direction searches, {scans:.2f} pair scans")
    elif fam == "kons":
        # per update (h != 0) over the S landmarks present: the rank-one update of P's LDL^T factor
        # (S^2/2 entries, method C1: 2 madd per entry, read and written; it leaves the forward
        # substitution's result on the way), then the backward substitution (S^2/2 madd, the factor
        # read again), beta -= h v (S C); while the dictionary can grow (S < B) also z = L^{-1} k
        # (S^2/2 madd, L read once)
        grow = upd & (S < B - 0.5)
        S2 = np.mean(np.where(upd, S.astype(float) ** 2, 0.0))
        G2 = np.mean(np.where(grow, S.astype(float) ** 2, 0.0))
        Su = np.mean(np.where(upd, S.astype(float), 0.0))
        c.madd += 1.5 * S2 + 0.5 * G2 + Su * (C + 1)
        c.mem("factor of P (+ L while growing)", 8 * S2 / 2 * 3 + 8 * G2 / 2, 2 * 8 * cap * (cap + 1) / 2)
    elif fam in ("projectron", "projectronpp"):
        # K^{-1} k_t from the upper triangle: S^2/2 elements, each a dot and an axpy term (S^2 madd),
        # read once (8 S^2 / 2 bytes); then alpha += tau d (S C).  Appends: the block formula
        # (S^2/2 madd over the triangle, read + write) -- amortised over the stream
        inv = upd & (S > 0)
        S2 = np.mean(np.where(inv, S.astype(float) ** 2, 0.0))
        kcap = 1 << int(math.ceil(math.log2(max(st["S_max"], 1)))) if not B else min(B, 1 << int(math.ceil(math.log2(max(st["S_max"], 1)))))
        kcap = max(kcap, st["S_max"])
        c.madd += S2 + np.mean(np.where(inv, S, 0.0)) * (C + 1)
        c.mem("K^-1", 8 * S2 / 2, 8 * kcap * kcap)
        app = st["appends"]
        c.madd += app / 2 / st["n"]
        c.mem("K^-1", app * 8 / st["n"], 8 * kcap * kcap)
        c.notes.append(f"K^-1 {8 * kcap * kcap / 2**20:.1f} MB")
    return c


def rf_features(c, st, D, C, ws_E, weight=1.0, nnz=None):
    """RandomFourierMap.features + ScaledWeights.scores: projection nnz*D madd (E rows streamed),
    D cos/sin pairs, the dot over 2D*C weights."""
    nz = st["nnz"] if nnz is None else nnz
    c.madd += weight * (nz * D + 2 * D * C)
    c.cossin += weight * D
    c.mem("E", weight * nz * D * 8, ws_E)
    c.mem("w", weight * 2 * D * C * 8, 2 * D * C * 8)


def model_feature(name, case, st, p):
    c = Cost()
    C, d, nz = st["C"], st["d"], st["nnz"]
    fam = case["family"]
    upd = st["upd"]
    u = float(np.mean(upd))
    if fam in ("fogd", "rrf"):
        D = case["params"]["n_components"]
        rf_features(c, st, D, C, d * D * 8)
        c.madd += u * 2 * D * C                    # w axpy
        c.mem("w", u * 2 * D * C * 16, 2 * D * C * 8)
        if fam == "rrf":
            # rho gradient when h != 0: q (2D), one dot of D per nonzero; e^rho of changed rho
            c.madd += u * (2 * D + nz * D)
            c.exp += u * nz
            c.mem("E", u * nz * D * 8, d * D * 8)
    elif fam == "son":
        # FOGD's map and scores; per update (h != 0) with k sketch rows (k ~ 1.5 m between shrinks,
        # from m - 1 to 2m - 1): u = S z and v = z - S^T u (2 k F madd, S read twice), the new row
        # and z.z (2F), the Cholesky row and solve (2 k^2), the weights' axpy (F C); per shrink
        # (every ~m updates) the symmetric eigenproblem of order 2m priced at LAPACK's 9 n^3 and
        # the rows recombined (m x 2m x F), u recomputed (m F)
        D, m = case["params"]["n_components"], case["params"]["sketch_size"]
        F, k = 2 * D, 1.5 * m
        rf_features(c, st, D, C, d * D * 8)
        c.madd += u * (2 * k * F + F * (2 + C) + 2 * k * k)
        c.mem("sketch S", u * 2 * k * F * 8, 2 * m * F * 8)
        sh = st["shrinks"] / st["n"]
        c.madd += sh * (9 * (2 * m) ** 3 + m * 2 * m * F + m * F)
        c.mem("sketch S", sh * 2 * 2 * m * F * 8, 2 * m * F * 8)
        c.notes.append(f"{st['shrinks']:,} shrinks ({sh:.3f} per example), k taken as 1.5 m = {k:g}")
    elif fam == "nogd":
        B, k = case["params"]["budget"], st["rank"]
        n1, n = st["n1"], st["n"]
        ph1 = np.arange(n) < n1
        kernel_pred(c, st["S_t"], st, B, C, weight=ph1)
        append_cost(c, st, float(np.mean(upd & ph1)), B)
        w2 = float(np.mean(~ph1))
        u2 = float(np.mean(upd & ~ph1))
        kernel_pred(c, B, st, B, C, weight=w2)      # k_S(x) over the B landmarks + beta . k (lazy)
        if not st["lazy"]:
            c.madd += w2 * k * B
            c.mem("M", w2 * k * B * 8, k * B * 8)
        else:
            c.madd += u2 * (2 * k * B + k + B * C)  # z = M k, u = M^T z, w and beta axpys
            c.mem("M", u2 * 2 * k * B * 8, k * B * 8)
        if st["switched"]:
            # switch: B^2/2 kernel values, dsyevr (~4/3 B^3 flops tridiagonal + 2 k B^2 back-transform)
            one = B * B / 2 * (1.5 * d) + 2.0 / 3.0 * B ** 3 + 2 * k * B * B + k * B
            c.madd += one / n
            c.exp += B * B / 2 / n
        c.notes.append(f"phase 1 for {n1:,} examples, rank {k}, lazy={st['lazy']}")
    elif fam == "dualsgd":
        B, D = case["params"]["budget"], case["params"].get("n_components", 200)
        S, full = st["S_t"], st["full"]
        kernel_pred(c, S, st, B, C)
        append_cost(c, st, u, B)
        rf_on = np.maximum.accumulate(full)           # W != 0 from the first maintenance on
        rf_features(c, st, D, C, d * D * 8, weight=float(np.mean(rf_on)))
        uf = float(np.mean(upd & full))
        # k-merging: every update at the budget moves one SV (amortised) into W: its features from
        # the stored dense row (zeros skipped: ~nnz) and an axpy over 2D C; the selection scans S
        rf_features(c, st, D, C, d * D * 8, weight=uf)
        c.madd += uf * (2 * D * C + B)
        c.mem("w", uf * 2 * D * C * 16, 2 * D * C * 8)
    return c


def model_dsg(name, case, st, p):
    """DSG/UDSG/CDSG: prediction over the m blocks (F frequencies each) of the model; per block the
    F normals of each nonzero feature are regenerated (or read with store_omega), nnz F madd, F
    cos/sin pairs, 2F C madd.  The update adds one block's features per batch example."""
    c = Cost()
    C, d, nz = st["C"], st["d"], st["nnz"]
    F = case["params"].get("block_size", 32)
    store = case["params"].get("store_omega", False)
    m_t = st["S_t"] / (2 * F)                       # model_size = m 2F
    m = float(np.mean(m_t))
    blocks = m + 1.0                                # + the batch's new block (per example)
    c.madd += blocks * (nz * F + 2 * F * C)
    c.cossin += blocks * F
    if store:
        c.mem("Omega", blocks * nz * F * 8, st["m_max"] * d * F * 8)
    else:
        c.normal += blocks * nz * F
    c.mem("A", blocks * 2 * F * C * 8, st["m_max"] * 2 * F * C * 8)
    c.notes.append(f"avg blocks {m:.0f} (max {st['m_max']}), F = {F}, store_omega={store}")
    return c


def model_sg(name, case, st, p):
    """Shrinking Gradient (Fourier feature): C m samples per example, each a uniform + Fenwick
    search (log2 S random lines), a uniform for b and d normals for w, w.x_i (d madd) and w.x
    (nnz madd), two scalar cos (one cos/sin pair's price)."""
    c = Cost()
    C, d, nz = st["C"], st["d"], st["nnz"]
    msamp = case["params"].get("n_samples", 100)
    S = np.maximum(st["S_t"], 1.0)
    ns = C * msamp
    c.madd += ns * (d + nz + 4)
    c.normal += ns * (d + (d & 1) + 2) * 1.0       # d normals + 2 uniforms (counted as normals)
    c.cossin += ns
    c.mem("SV store", ns * (8 * d + 64 * float(np.mean(np.log2(S)))), st["S_max"] * 8 * (2 * d + 4))
    return c


# ---- cases ------------------------------------------------------------------------------------

IJ = ("ijcnn1", ("ijcnn1", "ijcnn1.t"))
COD = ("cod-rna", ("cod-rna.tr",))
K = "kernel"


def cases():
    g4 = {"gamma": 4.0, "budget": 1000}
    L = [
        # ijcnn1, B = 1000: parameters tuned by the budget-family-ijcnn1 experiment file (BENCHMARKS.md)
        ("rbp", IJ, "rbp", dict(g4), "B=1000, γ=4", K, None),
        ("forgetron", IJ, "forgetron", dict(g4), "B=1000, γ=4", K, None),
        ("projectron", IJ, "projectron", dict(g4, proj_eta=0.1), "B=1000, γ=4, η_proj=0.1", K, None),
        ("projectronpp", IJ, "projectronpp", dict(g4, proj_eta=0.1), "B=1000, γ=4, η_proj=0.1", K, None),
        ("bpas", IJ, "bpas", dict(g4, c=10.0), "B=1000, γ=4, C=10", K, None),
        ("bsgd-removal", IJ, "bsgd-removal", dict(g4, lam=1.1e-4), "B=1000, γ=4, λ=1.1e-4 (BSGD-M's)", K, None),
        ("bsgd-merge", IJ, "bsgd-merge", dict(g4, lam=1.1e-4), "B=1000, γ=4, λ=1.1e-4", K, None),
        ("bogd-hinge", IJ, "bogd", dict(g4, eta=1.0, lam=1e-4), "B=1000, γ=4, η=1, λ=1e-4", K, None),
        ("bogdpp-hinge", IJ, "bogdpp", dict(g4, eta=1.0, lam=1e-4), "B=1000, γ=4, η=1, λ=1e-4 (BOGD's)", K, None),
        ("nogd-hinge", IJ, "nogd", {"gamma": 0.5, "eta": 1.0, "budget": 1000, "rank": 200, "eta_linear": 0.2},
         "B=1000, k=200, γ=0.5, η=1", "feature", None),
        ("dualsgd-hinge", IJ, "dualsgd", {"gamma": 1.0, "budget": 1000, "horizon": "@rows", "n_components": 200},
         "B=1000, D=200, k=20, γ=1, λ=2/T", "feature", None),
        ("fogd-hinge", IJ, "fogd", {"n_components": 1000, "gamma": 0.5, "eta": 1.0}, "D=1000, γ=0.5, η=1", "feature", None),
        ("fogd-logit", IJ, "fogd", {"n_components": 1000, "gamma": 0.5, "eta": 1.0}, "D=1000, γ=0.5, η=1", "feature", None),
        ("fogd-hinge", IJ, "fogd", {"n_components": 4000, "gamma": 0.5, "eta": 1.0}, "D̂=4000, γ=0.5, η=1", "feature", None),
        ("rrf-hinge", IJ, "rrf", {"n_components": 100, "eta": 1.0, "gamma": 0.5, "eta_gamma": 0.01},
         "D=100, η=1, g0=0.5, η_ρ=0.01", "feature", None),
        ("rrf-logit", IJ, "rrf", {"n_components": 100, "eta": 1.0, "gamma": 0.5, "eta_gamma": 0.01},
         "D=100, η=1, g0=0.5, η_ρ=0.01", "feature", None),
        # DSG family: spec defaults (B=64, F=32, logistic, median width), first rows of ijcnn1 (the
        # model grows by one block per batch, so a pass costs O(n^2))
        ("dsg-logit", IJ, "dsg", {"store_omega": True}, "B=64, F=32, cached ω", "dsg", 20000),
        ("dsg-logit", IJ, "dsg", {"store_omega": False}, "B=64, F=32, regenerated ω", "dsg", 5000),
        ("udsg-logit", IJ, "udsg", {"store_omega": True}, "G=U=1, B=64, F=32, cached ω", "dsg", 20000),
        ("cdsg-logit", IJ, "cdsg", {"store_omega": True}, "B=64, F=32, cached ω", "dsg", 20000),
        # cod-rna (features scaled to [0, 1]); Perceptron / OGD as tools/bench.py (γ = 1, η = 0.5)
        ("perceptron", COD, "perceptron", {"gamma": 1.0}, "γ=1 (unbounded)", K, None),
        ("ogd-hinge", COD, "ogd", {"gamma": 1.0, "eta": 0.5}, "γ=1, η=0.5 (unbounded)", K, None),
        ("ogd-logit", COD, "ogd", {"gamma": 1.0, "eta": 0.5}, "γ=1, η=0.5 (unbounded)", K, None),
        # cod-rna B = 400 (paper budget; γ = 1 as above, not tuned)
        ("rbp", COD, "rbp", {"gamma": 1.0, "budget": 400}, "B=400, γ=1", K, None),
        ("projectron", COD, "projectron", {"gamma": 1.0, "budget": 400, "proj_eta": 0.1}, "B=400, γ=1", K, None),
        ("bogd-hinge", COD, "bogd", {"gamma": 1.0, "budget": 400, "eta": 1.0, "lam": 1e-4}, "B=400, γ=1", K, None),
        ("nogd-hinge", COD, "nogd", {"gamma": 1.0, "budget": 400, "rank": 80, "eta": 0.5, "eta_linear": 0.2},
         "B=400, k=80, γ=1", "feature", None),
        ("dualsgd-hinge", COD, "dualsgd", {"gamma": 1.0, "budget": 400, "horizon": "@rows", "n_components": 200},
         "B=400, D=200, γ=1, λ=2/T", "feature", None),
        ("fogd-hinge", COD, "fogd", {"n_components": 1600, "gamma": 1.0, "eta": 0.5}, "D̂=1600, γ=1, η=0.5", "feature", None),
        # SON on FOGD's width (tools/bench.py --only second), the product's D and m
        ("son-hinge", IJ, "son", {"n_components": 400, "sketch_size": 20, "gamma": 0.5}, "D=400, m=20, γ=0.5, α=0.1",
         "feature", None),
        # LASVM (no paper budget: the budgets of the anchors tool, its tuned width and C)
        ("lasvm", IJ, "lasvm", {"gamma": 2.0, "c": 10.0, "budget": 1000}, "B=1000, γ=2, C=10", K, None),
        ("lasvm", IJ, "lasvm", {"gamma": 2.0, "c": 10.0, "budget": 8000}, "B=8000, γ=2, C=10", K, None),
        ("lasvm", COD, "lasvm", {"gamma": 1.0, "c": 10.0, "budget": 1000}, "B=1000, γ=1, C=10", K, None),
        # KONS at the product's B, alpha, eta (the anchors' width)
        ("kons-hinge", IJ, "kons", {"gamma": 2.0, "budget": 400}, "B=400, γ=2, α=0.03, η=0.3", K, None),
        ("kons-hinge", COD, "kons", {"gamma": 1.0, "budget": 400}, "B=400, γ=1, α=0.03, η=0.3", K, None),
        ("sg", COD, "sg", {"task": "classification", "n_samples": 100}, "m=100, Fourier, γ=1/d", "sg", None),
    ]
    return [{"name": name, "data": data[0], "files": data[1], "family": fam, "params": params, "setting": setting,
             "kind": kind, "rows": rows, "budget": params.get("budget")} for name, data, fam, params, setting, kind, rows in L]


MISTAKE = ("perceptron", "rbp", "forgetron", "projectron")
#: Families run with preset="paper": averaged predictions (the product default of the mistake-driven
#: learners) are not the scores their updates are decided on, and the DSG rows are the papers' B, F.
PAPERS = MISTAKE + ("projectronpp", "bpas", "dsg", "udsg", "cdsg", "lasvm")


def update_mask(case, f, y, res):
    m = y * f
    name, fam = case["name"], case["family"]
    if fam in MISTAKE:
        return m <= 0
    if fam in ("projectronpp",):
        return m < 1
    if "logit" in name or fam in ("dsg", "udsg", "cdsg", "sg"):
        return np.ones(len(f), dtype=bool)
    return m < 1                                     # hinge-type: bpas (PA), bsgd (hinge), *-hinge


def run_case(case, X, y, n_cp=100):
    params = {k: (X.shape[0] if v == "@rows" else v) for k, v in case["params"].items()}
    if case["family"] in PAPERS:        # the papers' learners: update_mask reads their own scores
        params.setdefault("preset", "paper")
    learner = ok.make_learner(case["name"], n_threads=1, **params)
    n = X.shape[0]
    cps = np.unique(np.linspace(1, n, n_cp).astype(np.int64))
    res = ok.run_online(learner, X, y, seed=0, keep_scores=True, checkpoints=cps)
    return learner, res


def stats(case, learner, X, y, res):
    n, d = X.shape
    nnz_row = np.diff(X.indptr) if hasattr(X, "indptr") else np.full(n, d)
    f = np.asarray(res.scores, dtype=float)
    if f.ndim > 1:
        f = f[:, 0]
    yo = np.asarray(y)[res.order] if res.order is not None else np.asarray(y)
    ys = np.where(yo > 0, 1.0, -1.0)
    ns = np.concatenate([[0], np.asarray(res.curve["n_seen"], dtype=float)])
    ms = np.concatenate([[0], np.asarray(res.curve["model_size"], dtype=float)])
    t = np.arange(n, dtype=float)
    S_t = np.interp(t, ns, ms)                      # model size when example t arrives (approx.)
    B = case.get("budget")
    st = {"n": n, "d": d, "C": 1, "nnz": float(nnz_row.mean()), "dense": bool(np.all(nnz_row == d)),
          "S_t": S_t, "S_avg": float(np.trapezoid(ms, ns) / n), "S_max": int(ms.max()),
          "upd": update_mask(case, f, ys, res), "full": (S_t >= B - 0.5) if B else np.zeros(n, bool)}
    core = learner.core_
    fam = case["family"]
    if fam in ("projectron", "projectronpp"):
        st["appends"] = float(np.sum(S_t ** 2 * np.diff(np.interp(np.arange(n + 1), ns, ms))))
    if fam == "nogd":
        st.update(n1=int(core.n1), rank=int(core.k) or int(core.kcap), switched=bool(core.switched), lazy=bool(core.lazy))
    if fam in ("dsg", "udsg", "cdsg"):
        st["m_max"] = int(ms.max() // (2 * core.F))
    if fam == "son":
        st["shrinks"] = int(core.n_shrinks)
    if fam == "lasvm":
        st.update(rows_asked=int(core.n_rows), rows_hit=int(core.n_hits), searches=int(core.n_searches),
                  scans=int(core.n_scans))
    st["u"] = float(np.mean(st["upd"]))
    return st


def model_for(case, st, p):
    if case["kind"] == K:
        return model_kernel(case["name"], case, st, p)
    if case["kind"] == "dsg":
        return model_dsg(case["name"], case, st, p)
    if case["kind"] == "sg":
        return model_sg(case["name"], case, st, p)
    return model_feature(case["name"], case, st, p)


def bound(cost, p):
    compute = cost.madd * p["roof_ns"]
    mem = 0.0
    levels = []
    for label, (nb, ws) in cost.parts.items():
        lv = level_of(ws)
        mem += nb / p["bw"][lv]
        levels.append((nb, lv, label))
    fixed = cost.exp * p["exp_ns"] + cost.cossin * p["cossin_ns"] + cost.normal * p["normal_ns"]
    total = fixed + max(compute, mem)
    terms = {"exp": cost.exp * p["exp_ns"], "cossin": cost.cossin * p["cossin_ns"],
             "normal": cost.normal * p["normal_ns"], "madd": compute, "memory": mem}
    dom_level = max(levels)[1] if levels else "-"
    return total, terms, dom_level


def fmt_n(v):
    """A count in a few characters: 0, 3.21, 1.2k, 45k, 1.23M."""
    for lim, div, spec, suffix in ((1e6, 1e6, ".2f", "M"), (1e4, 1e3, ".0f", "k"), (1e3, 1e3, ".1f", "k")):
        if v >= lim:
            return f"{v / div:{spec}}{suffix}"
    return "0" if v == 0 else f"{v:.3g}"


def main(argv=None):
    ap = h.parser(__doc__, repeats=3)
    ap.add_argument("--primitives", default=None, help="JSON of tools/bench_primitives.py (default: measure now)")
    ap.add_argument("--only", help="comma-separated learner names or families (e.g. fogd,rbp,dsg-logit)")
    ap.add_argument("--rows", type=int, help="cap every data set at this many rows")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    p = load_primitives(args.primitives)
    info = h.machine()
    load0 = info["loadavg"]
    print(h.machine_line(info))
    print(f"primitives: {p['source']} (level {p['level']}, portable build)")
    print(f"  roof {p['roof_ns']:.4f} ns/madd ({p['roof_level']}), exp {p['exp_ns']:.3f} ns, cos+sin {p['cossin_ns']:.3f} ns, "
          f"normal {p['normal_ns']:.2f} ns (uniform {p['uniform_ns']:.2f} ns, measured now); read bandwidth GB/s: "
          + ", ".join(f"{k} {v:.0f}" for k, v in p["bw"].items()))
    print(f"  {FORMULA}")
    print("  working-set levels: <= 48 KB L1, <= 1 MB L2, <= 32 MB L3, else DRAM")

    sel = cases()
    if args.only:
        want = set(args.only.split(","))
        sel = [c for c in sel if c["name"] in want or c["family"] in want]
    data = h.Data(args.data_dir)
    mats = {}
    for c in sel:
        key = (c["data"], c["rows"] if args.rows is None else min(args.rows, c["rows"] or args.rows))
        if key not in mats:
            X, y = data.load(*c["files"])
            if c["data"] == "cod-rna":
                X = FeatureScaler(0.0, 1.0).fit(X).transform(X)
            if key[1]:
                X, y = X[:key[1]], y[:key[1]]
            mats[key] = (X, y)
        c["key"] = key
    times = {i: [] for i in range(len(sel))}
    keep = {}
    for r in range(args.repeats):
        seq = range(len(sel)) if r % 2 == 0 else reversed(range(len(sel)))   # alternate the order
        for i in seq:
            c = sel[i]
            X, y = mats[c["key"]]
            learner, res = run_case(c, X, y)
            times[i].append(res.seconds / X.shape[0] * 1e6)
            if i not in keep:
                keep[i] = (learner, res)
            if r == 0:
                print(f"  ran {c['name']} on {c['data']} ({X.shape[0]:,} rows): {res.seconds:.2f} s", flush=True)

    rows = []
    for i, c in enumerate(sel):
        X, y = mats[c["key"]]
        learner, res = keep[i]
        st = stats(c, learner, X, y, res)
        cost = model_for(c, st, p)
        b_ns, terms, lvl = bound(cost, p)
        meas = h.median(times[i])
        total_bytes = sum(v[0] for v in cost.parts.values())
        dom = max(terms, key=terms.get)
        rows.append({"learner": c["name"], "family": c["family"], "data": c["data"], "rows": X.shape[0],
                     "setting": c["setting"], "params": c["params"], "S_avg": st["S_avg"], "S_max": st["S_max"],
                     "u": st["u"], "nnz": st["nnz"], "d": st["d"], "madd": cost.madd, "exp": cost.exp,
                     "cossin": cost.cossin, "normal": cost.normal, "bytes": total_bytes, "level": lvl,
                     "parts": {k: {"bytes": v[0], "ws": v[1], "level": level_of(v[1])} for k, v in cost.parts.items()},
                     "terms_ns": terms, "dominant": dom, "bound_us": b_ns / 1e3, "measured_us": meas,
                     "measured_all_us": times[i], "ratio": meas / (b_ns / 1e3), "notes": cost.notes,
                     "error": res.error})
    load1 = h.loadavg()
    data.close()
    print(f"\n### Cost model per learner: bound vs measured µs per example (one thread; load average "
          f"{load0} at start, {load1} at end; median of {args.repeats})\n")
    print("| learner | data, rows | setting | S avg | u | madd/ex | exp/ex | cossin/ex | normals/ex | bytes/ex (level) | "
          "bound µs | measured µs | ratio | ≤ 2? | dominant term |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|")
    for r in rows:
        print(f"| {r['learner']} | {r['data']}, {r['rows']:,} | {r['setting']} | {r['S_avg']:,.0f} | {r['u']:.3f} | "
              f"{fmt_n(r['madd'])} | {fmt_n(r['exp'])} | {fmt_n(r['cossin'])} | {fmt_n(r['normal'])} | "
              f"{fmt_n(r['bytes'])} ({r['level']}) | {r['bound_us']:.3f} | {r['measured_us']:.3f} | {r['ratio']:.2f} | "
              f"{'yes' if r['ratio'] <= 2 else '**no**'} | {r['dominant']} |")
    notes = [(r["learner"], r["data"], n) for r in rows for n in r["notes"]]
    if notes:
        print()
        for l, dname, n in notes:
            print(f"- {l} ({dname}): {n}")
    print(f"\nwall time {time.perf_counter() - t_start:.0f} s")
    h.write_json(args.json, {"machine": info, "primitives": p, "formula": FORMULA, "loadavg_start": load0,
                             "loadavg_end": load1, "repeats": args.repeats, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
