"""Side-by-side anchors (issue 7): onlinekern FOGD and RRF against scikit-learn, river, Vowpal
Wabbit and batch LIBSVM, on ijcnn1 (ijcnn1 + ijcnn1.t, gamma = 0.5) and cod-rna.tr (scaled to
[0, 1], gamma = 1).  Every online method sees permutation 0 of seed 0 (checked against
``run_online``'s order) and predicts each example before learning from it.

Rows: onlinekern FOGD-hinge (D = 1000; float64 and the opt-in float32 map) and RRF-hinge
(D = 100), one thread, whole stream, their mistake rate on each prefix read from the checkpoint
curve; scikit-learn ``RBFSampler`` + ``SGDClassifier(hinge)`` in chunks of 256 over the whole
stream and per example on the first ``--prefix`` rows (1000 and 2000 components); river
``RBFSampler | PAClassifier`` per example (river's RBFSampler draws n_components frequencies
*per input feature*: the main row uses round(1000 / d) per feature, about 1000 features, a second
row the literal 1000 on ``--river-wide-prefix`` rows); Vowpal Wabbit ``--ksvm --kernel rbf``
(LASVM, no budget) per example on the prefix and on ``--vw-long-prefix`` rows; LIBSVM batch
(``sklearn.svm.SVC``) as the accuracy reference, run once.

Hyper-parameters are chosen before any timing by the online mistake rate of one pass: onlinekern
on ijcnn1 uses BENCHMARKS.md's tuned settings, on cod-rna the first 10 % of the stream, as
scikit-learn's SGD step; river's PA C / mode and VW's --l2 on the prefix itself (an advantage to
them).  scikit-learn's BLAS gets ``--blas-threads`` (1).  µs / example = learning time / rows,
input conversion excluded on every side; medians of ``--repeats``, methods alternating
(tools/harness.py).  docs/performance.md section 4 reads the figures.

    python tools/bench_anchors.py --json anchors.json                         # about 3 minutes
    python tools/bench_anchors.py --only ijcnn1 --repeats 1 --prefix 500      # quick look
    python tools/bench_anchors.py --skip libsvm,river-wide                    # leave out slow rows
    python tools/bench_anchors.py --vw-curve 40000 --only ijcnn1              # VW vs FOGD by prefix length
"""
import json
import sys
import time

import numpy as np

import harness as h

import onlinekern as ok
from onlinekern.preprocessing import FeatureScaler
from onlinekern.seeding import permutation

from bench import sklearn_chunks as bench_chunks

SEED, RUN = 0, 0
CHUNK = 256
SGD_CANDIDATES = ({"learning_rate": "optimal"},
                  {"learning_rate": "constant", "eta0": 0.01, "alpha": 1e-6},
                  {"learning_rate": "constant", "eta0": 0.1, "alpha": 1e-6},
                  {"learning_rate": "constant", "eta0": 1.0, "alpha": 1e-6})
RIVER_PA = tuple({"C": C, "mode": mode} for mode in (1, 2) for C in (0.01, 0.1, 1.0))
VW_L2 = (1.0, 0.1, 0.01)            # ksvm's lambda (0 means 1 in VW); scores are sum(alpha K) / lambda
OK_FOGD_ETA = (0.1, 0.3, 1.0, 3.0)  # cod-rna grid (first 10 % of the permuted stream)
OK_RRF_ETA = (0.1, 0.3, 1.0, 3.0)
OK_RRF_ETA_GAMMA = (1e-3, 3e-3, 1e-2)   # within the IJCAI'17 step range (tools/bench_rrf.py)

SETS = {
    "ijcnn1": {"files": ("ijcnn1", "ijcnn1.t"), "gamma": 0.5, "scale": False,
               "fogd": {"eta": 1.0}, "rrf": {"eta": 1.0, "gamma": 0.5, "eta_gamma": 0.01},
               "label": "ijcnn1 (ijcnn1 + ijcnn1.t)"},
    "codrna": {"files": ("cod-rna.tr",), "gamma": 1.0, "scale": True, "fogd": None, "rrf": None,
               "label": "cod-rna.tr (features scaled to [0, 1])"},
}


class Skip(Exception):
    """An anchor that cannot run here (package missing or unusable); the reason is the message."""


def need(module):
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        raise Skip(f"skipped: {module.split('.')[0]} not installed") from None


def rate(mistakes, n):
    return 100.0 * mistakes / n


# ---- onlinekern ------------------------------------------------------------------------------

def make_fogd(gamma, eta, seed=SEED, precision="float64", D=1000):
    return ok.FOGD(n_components=D, gamma=gamma, eta=eta, loss="hinge", seed=seed, n_threads=1,
                   precision=precision)


def make_rrf(gamma, eta, eta_gamma, seed=SEED):
    return ok.RRF(n_components=100, gamma=gamma, eta=eta, eta_gamma=eta_gamma, loss="hinge", seed=seed,
                  n_threads=1)


def run_ok(learner, X, y, order, points):
    """One pass in permutation 0 of seed 0; mistake rate overall and at each of ``points``."""
    res = ok.run_online(learner, X, y, seed=SEED, run=RUN, checkpoints=sorted(set(points) | {X.shape[0]}))
    if not np.array_equal(res.order, order):
        raise SystemExit("bench_anchors: run_online's order is not onlinekern.seeding.permutation(0, 0, n)")
    at = dict(zip(res.curve["n_seen"].tolist(), res.curve["mistake_rate"].tolist()))
    return res.seconds, res.mistake_rate, {p: at[p] for p in points}


def tune_ok(make, grid, Xp, yp):
    """Best parameters by one online pass over the first 10 % of the permuted stream."""
    m = max(Xp.shape[0] // 10, 1)
    best, best_rate = None, np.inf
    for p in grid:
        r = ok.run_online(make(**p), Xp[:m], yp[:m], checkpoints=None).mistake_rate
        if r < best_rate:
            best, best_rate = p, r
    return best, best_rate


# ---- scikit-learn ----------------------------------------------------------------------------

def _sk_models(n_components, gamma, sgd, seed=0):
    RBFSampler = need("sklearn.kernel_approximation").RBFSampler
    SGDClassifier = need("sklearn.linear_model").SGDClassifier
    kw = {"loss": "hinge", "random_state": seed}
    kw.update(sgd)
    # fit only draws the random frequencies (it reads the width of X)
    return RBFSampler(gamma=gamma, n_components=n_components, random_state=seed), SGDClassifier(**kw)


def sklearn_chunks(Xp, yp, n_components, gamma, sgd, chunk=CHUNK, seed=0):
    """tools/bench.py's ``sklearn_chunks`` with predict=True: predict each chunk of 256, then
    partial_fit it (the first chunk counts as all mistakes, there being no model yet)."""
    need("sklearn")
    return bench_chunks(Xp, yp, n_components, True, chunk=chunk, seed=seed, gamma=gamma, sgd=sgd)


def sklearn_rows(rows, yp, n_components, gamma, sgd, seed=0):
    """Per example: transform one row, predict it (the first counts as a mistake), partial_fit it."""
    rbf, clf = _sk_models(n_components, gamma, sgd, seed)
    rbf.fit(rows[0])
    classes = np.array([-1.0, 1.0])
    labels = [yp[i:i + 1] for i in range(len(rows))]
    mistakes = 1
    t = time.perf_counter()
    z = rbf.transform(rows[0])
    clf.partial_fit(z, labels[0], classes=classes)
    for i in range(1, len(rows)):
        z = rbf.transform(rows[i])
        mistakes += int(clf.predict(z)[0] != labels[i][0])
        clf.partial_fit(z, labels[i])
    return time.perf_counter() - t, rate(mistakes, len(rows))


def tune_sklearn(Xp, yp, gamma):
    m = max(Xp.shape[0] // 10, CHUNK)
    scored = [(sklearn_chunks(Xp[:m], yp[:m], 1000, gamma, p)[1], i) for i, p in enumerate(SGD_CANDIDATES)]
    r, i = min(scored)
    return SGD_CANDIDATES[i], r, {fmt_sgd(SGD_CANDIDATES[j]): s for s, j in scored}


def fmt_sgd(p):
    if p["learning_rate"] == "optimal":
        return "learning_rate='optimal' (alpha 1e-4)"
    return f"eta0 = {p['eta0']:g} constant (alpha {p['alpha']:g})"


# ---- river -----------------------------------------------------------------------------------

def river_rows(dicts, yp, gamma, per_feature, pa):
    fx = need("river.feature_extraction")
    lm = need("river.linear_model")
    model = fx.RBFSampler(gamma=gamma, n_components=per_feature, seed=0) | lm.PAClassifier(**pa)
    labels = [bool(v > 0) for v in yp[:len(dicts)]]
    mistakes = 0
    t = time.perf_counter()
    for x, lab in zip(dicts, labels):
        # predict_one gives False on the empty model (ties go to the first class): a mistake on
        # a positive example, as onlinekern counts a zero score as a mistake on every example
        mistakes += model.predict_one(x) != lab
        model.learn_one(x, lab)
    return time.perf_counter() - t, rate(mistakes, len(dicts))


# ---- Vowpal Wabbit ---------------------------------------------------------------------------

def vw_lines(Xp, yp, m):
    out = []
    for i in range(m):
        a, b = Xp.indptr[i], Xp.indptr[i + 1]
        feats = " ".join(f"f{j}:{v!r}" for j, v in zip(Xp.indices[a:b].tolist(), Xp.data[a:b].tolist()))
        out.append(f"{int(yp[i])} | {feats}")
    return out


def vw_rows(lines, yp, gamma, l2, points=()):
    """VW over ``lines``: (seconds, mistake rate), and with ``points`` also {p: (mistakes, seconds)}
    after the first p rows of the same pass."""
    vw = need("vowpalwabbit")
    args = f"--ksvm --kernel rbf --bandwidth {gamma!r} --l2 {l2!r} --noconstant --quiet"
    try:
        ws = vw.Workspace(args)
    except Exception as e:          # a wheel built without ksvm, or options it rejects
        raise Skip(f"skipped: vowpalwabbit refused '{args}': {e}") from None
    try:
        exs = [ws.parse(line) for line in lines]          # parsing is loading: not timed
        mistakes, at, points = 0, {}, set(points)
        t = time.perf_counter()
        for i, (ex, lab) in enumerate(zip(exs, yp[:len(lines)]), 1):
            ws.learn(ex)                                  # predicts (into ex), then learns
            mistakes += ex.get_simplelabel_prediction() * lab <= 0
            ws.finish_example(ex)
            if i in points:
                at[i] = (int(mistakes), time.perf_counter() - t)
        sec = time.perf_counter() - t
    finally:
        ws.finish()
    return (sec, rate(mistakes, len(lines))) + ((at,) if points else ())


def tune_vw(lines, yp, gamma):
    """VW's --l2 by the mistake rate of one pass over ``lines`` (the prefix it is scored on):
    (best l2, its rate, [(rate, l2) for every candidate])."""
    scored = [(vw_rows(lines, yp, gamma, l2)[1], l2) for l2 in VW_L2]
    r, l2 = min(scored)
    return l2, r, scored


# ---- LIBSVM ----------------------------------------------------------------------------------

def libsvm_batch(Xtr, ytr, Xte, yte, gamma, C):
    SVC = need("sklearn.svm").SVC
    t = time.perf_counter()
    model = SVC(C=C, gamma=gamma, kernel="rbf", cache_size=500).fit(Xtr, ytr)
    train_s = time.perf_counter() - t
    err = rate(int(np.sum(model.predict(Xte) != yte)), Xte.shape[0])
    return {"train_rows": Xtr.shape[0], "test_rows": Xte.shape[0], "train_seconds": train_s,
            "test_error": err, "n_sv": int(model.n_support_.sum()), "C": C, "gamma": gamma}


# ---- one data set ----------------------------------------------------------------------------

def bench_set(key, data, args):
    spec, X, y = load_set(key, data)
    n, d = X.shape
    gamma = spec["gamma"]
    order = permutation(SEED, RUN, n)
    Xp, yp = X[order], y[order]
    P = min(args.prefix, n)
    Pw = min(args.river_wide_prefix, P)
    Pv = min(args.vw_long_prefix, n)
    skip = set(args.skip)
    out = {"rows": n, "features": d, "gamma": gamma, "prefix": P, "river_wide_prefix": Pw, "vw_long_prefix": Pv,
           "methods": {},
           "skipped": {}, "chosen": {}}
    print(f"\n### {spec['label']}: {n:,} rows, {d} features, gamma = {gamma}, permutation 0 of seed 0\n", flush=True)

    # -- hyper-parameters, chosen before any timing
    fogd_p, rrf_p = spec["fogd"], spec["rrf"]
    if fogd_p is None:
        fogd_p, r = tune_ok(lambda eta: make_fogd(gamma, eta), [{"eta": e} for e in OK_FOGD_ETA], Xp, yp)
        out["chosen"]["fogd"] = {"params": fogd_p, "tune_rate": r, "how": "first 10 %"}
    if rrf_p is None:
        grid = [{"eta": e, "eta_gamma": g} for e in OK_RRF_ETA for g in OK_RRF_ETA_GAMMA]
        rrf_p, r = tune_ok(lambda eta, eta_gamma: make_rrf(gamma, eta, eta_gamma), grid, Xp, yp)
        rrf_p = dict(rrf_p, gamma=gamma)
        out["chosen"]["rrf"] = {"params": rrf_p, "tune_rate": r, "how": "first 10 %"}
    rrf_p = {k: v for k, v in rrf_p.items() if k != "gamma"}

    methods = {}      # key -> (label, rows, callable returning (seconds, rate, {prefix: rate} or None))
    methods["fogd"] = ("onlinekern FOGD-hinge, D = 1000 (2000 features), per example", n,
                       lambda: run_ok(make_fogd(gamma, **fogd_p), X, y, order, [P, Pw, Pv]))
    methods["fogd32"] = ("onlinekern FOGD-hinge, D = 1000, precision=float32, per example", n,
                         lambda: run_ok(make_fogd(gamma, precision="float32", **fogd_p), X, y, order, [P, Pw, Pv]))
    methods["rrf"] = ("onlinekern RRF-hinge, D = 100, per example", n,
                      lambda: run_ok(make_rrf(gamma, **rrf_p), X, y, order, [P, Pw, Pv]))

    anchors_ok = True
    try:
        need("sklearn.kernel_approximation")
    except Skip as e:
        anchors_ok = False
        for k in ("sk_chunk1000", "sk_chunk2000", "sk_row1000", "sk_row2000"):
            out["skipped"][k] = str(e)
    if anchors_ok:
        sgd, r, table = tune_sklearn(Xp, yp, gamma)
        out["chosen"]["sklearn_sgd"] = {"params": sgd, "tune_rate": r, "candidates": table,
                                        "how": "first 10 %, chunks of 256, 1000 components"}
        rows = [Xp[i] for i in range(P)]
        for nc in (1000, 2000):
            methods[f"sk_chunk{nc}"] = (f"scikit-learn RBFSampler({nc}) + SGDClassifier, chunks of {CHUNK}", n,
                                        lambda nc=nc: sklearn_chunks(Xp, yp, nc, gamma, sgd) + (None,))
        for nc in (1000, 2000):
            methods[f"sk_row{nc}"] = (f"scikit-learn RBFSampler({nc}) + SGDClassifier, per example", P,
                                      lambda nc=nc: sklearn_rows(rows, yp, nc, gamma, sgd) + (None,))

    try:
        need("river.feature_extraction")
        per_feature = max(1, round(1000 / d))
        dicts = [dict(zip(Xp.indices[Xp.indptr[i]:Xp.indptr[i + 1]].tolist(),
                          Xp.data[Xp.indptr[i]:Xp.indptr[i + 1]].tolist())) for i in range(P)]
        scored = [(river_rows(dicts, yp, gamma, per_feature, pa)[1], i) for i, pa in enumerate(RIVER_PA)]
        r, i = min(scored)
        river_pa = RIVER_PA[i]
        out["chosen"]["river"] = {"params": river_pa, "tune_rate": r, "how": "the prefix itself",
                                  "candidates": {json.dumps(RIVER_PA[j]): s for s, j in scored}}
        methods["river"] = (f"river RBFSampler({per_feature} per feature = {per_feature * d} features) "
                            f"+ PAClassifier, per example", P,
                            lambda: river_rows(dicts, yp, gamma, per_feature, river_pa) + (None,))
        if "river-wide" not in skip:
            methods["river_wide"] = ("river RBFSampler(1000 per feature) + PAClassifier, per example", Pw,
                                     lambda: river_rows(dicts[:Pw], yp, gamma, 1000, river_pa) + (None,))
    except Skip as e:
        out["skipped"]["river"] = str(e)

    try:
        lines = vw_lines(Xp, yp, max(P, Pv))
        vw_l2, r, scored = tune_vw(lines[:P], yp, gamma)
        out["chosen"]["vw"] = {"l2": vw_l2, "tune_rate": r, "candidates": {str(c): s for s, c in scored},
                               "how": "the prefix itself"}
        methods["vw"] = (f"Vowpal Wabbit --ksvm --kernel rbf (--l2 {vw_l2:g}), per example", P,
                         lambda: vw_rows(lines[:P], yp, gamma, vw_l2) + (None,))
        if Pv > P:
            methods["vw_long"] = (f"Vowpal Wabbit --ksvm --kernel rbf (--l2 {vw_l2:g}), per example, longer prefix", Pv,
                                  lambda: vw_rows(lines, yp, gamma, vw_l2) + (None,))
    except Skip as e:
        out["skipped"]["vw"] = str(e)

    for k, v in out["chosen"].items():
        params = v.get("params", {kk: vv for kk, vv in v.items() if kk not in ("tune_rate", "how", "candidates")})
        cands = v.get("candidates")
        tail = "; candidates " + ", ".join(f"{c} -> {r:.2f} %" for c, r in cands.items()) if cands else ""
        print(f"- chosen for {k}: {json.dumps(params)} (by the mistake rate on {v['how']}: {v['tune_rate']:.2f} %{tail})",
              flush=True)

    # -- timed passes, alternating
    med, res = h.side_by_side({k: fn for k, (_, _, fn) in methods.items()}, args.repeats, seconds=lambda r: r[0])
    rates = {k: [r[1] for r in v] for k, v in res.items()}
    ok_prefix = {k: v[-1][2] for k, v in res.items() if v[-1][2] is not None}
    for k in methods:
        if max(rates[k]) != min(rates[k]):
            print(f"- warning: {k} gave different mistake rates across repeats: {rates[k]}")

    fogd_us = {f: med[f] / n * 1e6 for f in FOGDS}
    rows_md = []
    for k, (label, rows_timed, _) in methods.items():
        us = med[k] / rows_timed * 1e6
        entry = {"label": label, "rows_timed": rows_timed, "us_per_example": us, "mistake_rate": rates[k][0],
                 "seconds": [r[0] for r in res[k]]}
        for f in FOGDS:           # speed-up and mistake rate on the same rows of each FOGD variant
            entry[f"speedup_of_{f}"] = us / fogd_us[f]
            entry[f"{f}_mistake_rate_same_rows"] = rates[f][0] if rows_timed == n else ok_prefix[f][rows_timed]
        if k in ("fogd", "fogd32", "rrf"):
            entry["mistake_rate_at"] = {str(p): ok_prefix[k][p] for p in sorted(ok_prefix[k])}
        out["methods"][k] = entry
        rows_md.append((label, rows_timed, us, entry))

    print()
    print("| method | rows timed | µs / example | speed-up of FOGD (float64) | speed-up of FOGD (float32) "
          "| mistake rate (%) | FOGD float64 / float32 mistake rate on the same rows (%) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, rows_timed, us, e in rows_md:
        rows_txt = f"{rows_timed:,}" + (" (all)" if rows_timed == n else " (prefix)")
        print(f"| {label} | {rows_txt} | {us:,.2f} | {e['speedup_of_fogd']:,.1f}x | {e['speedup_of_fogd32']:,.1f}x "
              f"| {e['mistake_rate']:.2f} | {e['fogd_mistake_rate_same_rows']:.2f} / {e['fogd32_mistake_rate_same_rows']:.2f} |")
    for k in ("fogd", "fogd32", "rrf"):
        if k in out["methods"]:
            e = out["methods"][k]
            at = ", ".join(f"{v:.2f} % on the first {int(p):,} rows" for p, v in e["mistake_rate_at"].items())
            print(f"- {e['label'].split(', per example')[0]}: mistake rate {at}")
    for k, reason in out["skipped"].items():
        print(f"- {k}: {reason}")

    # -- LIBSVM batch reference
    if "libsvm" in skip:
        out["libsvm"] = None
    else:
        try:
            if key == "ijcnn1":
                n_tr = data.load("ijcnn1")[0].shape[0]
                split = (X[:n_tr], y[:n_tr], X[n_tr:], y[n_tr:])
                how = f"trained on ijcnn1 ({n_tr:,} rows), tested on ijcnn1.t ({n - n_tr:,} rows)"
            else:
                half = n // 2
                m = min(half, args.libsvm_max_train)
                split = (Xp[:m], yp[:m], Xp[half:], yp[half:])
                how = (f"permuted rows split 50/50; trained on the first {m:,} of the first half"
                       f"{' (capped by --libsvm-max-train)' if m < half else ''}, tested on the second half ({n - half:,})")
            lib = libsvm_batch(*split, gamma=gamma, C=args.libsvm_C)
            lib["how"] = how
            out["libsvm"] = lib
            print(f"\nLIBSVM batch (sklearn.svm.SVC, C = {args.libsvm_C:g}, gamma = {gamma:g}; accuracy reference, "
                  f"not online): {how}.\n")
            print("| method | train rows | training time (s) | support vectors | test error (%) |")
            print("|---|---:|---:|---:|---:|")
            print(f"| LIBSVM (SVC) batch | {lib['train_rows']:,} | {lib['train_seconds']:.1f} | {lib['n_sv']:,} "
                  f"| {lib['test_error']:.2f} |")
        except Skip as e:
            out["libsvm"] = None
            print(f"\nLIBSVM batch: {e}")

    # -- targets, for each FOGD variant
    out["targets"] = {f: verdicts(out["methods"], f) for f in FOGDS}
    for f in FOGDS:
        print(f"\nTargets for {FOGDS[f]}:")
        for line in out["targets"][f]["lines"]:
            print(line)
    return out


FOGDS = {"fogd": "FOGD (float64, the default)", "fogd32": "FOGD with precision=float32"}
WIDE_D = (4000, 16000)
CURVE_POINTS = (2000, 5000, 10000, 20000, 30000, 40000, 60000, 80000, 100000)


def load_set(key, data):
    spec = SETS[key]
    X, y = data.load(*spec["files"])
    if spec["scale"]:
        X = FeatureScaler(0.0, 1.0).fit(X).transform(X)
    return spec, X.tocsr(), y


def vw_curve(key, data, args):
    """VW against FOGD on growing prefixes of one pass (``--vw-curve ROWS``): VW's mistake rate and
    its cost per example averaged over the first p rows, beside FOGD's mistake rate on the same
    rows, for every p of CURVE_POINTS up to ROWS.  VW's --l2 and FOGD's eta are chosen as in the
    main table.  VW runs once (its cost grows from tens of microseconds to milliseconds per
    example, far beyond the machine's noise); FOGD's cost is the median of ``--repeats`` whole
    passes, as in the main table."""
    spec, X, y = load_set(key, data)
    n = X.shape[0]
    gamma = spec["gamma"]
    order = permutation(SEED, RUN, n)
    Xp, yp = X[order], y[order]
    P, N = min(args.prefix, n), min(args.vw_curve, n)
    points = sorted({p for p in CURVE_POINTS if p < N} | {N})
    fogd_p = spec["fogd"] or tune_ok(lambda eta: make_fogd(gamma, eta), [{"eta": e} for e in OK_FOGD_ETA], Xp, yp)[0]
    lines = vw_lines(Xp, yp, max(P, N))
    vw_l2 = tune_vw(lines[:P], yp, gamma)[0]
    print(f"\n### {spec['label']}: VW --ksvm (--l2 {vw_l2:g}) against FOGD (eta = {fogd_p['eta']:g}) "
          f"on growing prefixes of permutation 0 of seed 0\n", flush=True)
    _, _, vw_at = vw_rows(lines[:N], yp, gamma, vw_l2, points)
    fogd = {}
    for f, prec in (("fogd", "float64"), ("fogd32", "float32")):
        runs = [run_ok(make_fogd(gamma, precision=prec, **fogd_p), X, y, order, points) for _ in range(args.repeats)]
        fogd[f] = (h.median([r[0] for r in runs]) / n * 1e6, runs[0][2])
    # does a wider map close the accuracy gap? (mistake rates only; float32 keeps D = 16000 cheap)
    wide = {D: run_ok(make_fogd(gamma, precision="float32", D=D, **fogd_p), X, y, order, points)[2] for D in WIDE_D}
    out = {"vw_l2": vw_l2, "fogd_params": fogd_p, "fogd_us": {f: v[0] for f, v in fogd.items()}, "points": []}
    print("| first rows | VW mistake rate (%) | FOGD float64 / float32 on the same rows (%) | VW µs / example "
          "(mean over the rows) | speed-up of FOGD float64 / float32 | ≥ 200× at an equal or better rate "
          "| FOGD float32 at D = " + " / ".join(f"{D:,}" for D in WIDE_D) + " (%) |")
    print("|---:|---:|---:|---:|---:|---|---:|")
    for p in points:
        m, sec = vw_at[p]
        vw_rate, vw_us = rate(m, p), sec / p * 1e6
        r64, r32 = fogd["fogd"][1][p], fogd["fogd32"][1][p]
        x64, x32 = vw_us / fogd["fogd"][0], vw_us / fogd["fogd32"][0]
        holds = [f for f, x, r in (("float64", x64, r64), ("float32", x32, r32)) if x >= 200 and r <= vw_rate]
        out["points"].append({"rows": p, "vw_rate": vw_rate, "vw_us": vw_us, "fogd_rate": r64, "fogd32_rate": r32,
                              "speedup_fogd": x64, "speedup_fogd32": x32, "holds_for": holds,
                              "fogd32_rate_at_D": {str(D): wide[D][p] for D in WIDE_D}})
        print(f"| {p:,} | {vw_rate:.2f} | {r64:.2f} / {r32:.2f} | {vw_us:,.1f} | {x64:,.0f}× / {x32:,.0f}× "
              f"| {', '.join(holds) or 'no'} | {' / '.join(f'{wide[D][p]:.2f}' for D in WIDE_D)} |", flush=True)
    return out


def verdicts(m, fogd="fogd"):
    """FOGD >= 10x faster than scikit-learn in chunks of 256 (1000 and 2000 components) and >= 200x
    faster than the per-example anchors, each at an equal or better mistake rate on the same rows."""
    f = m[fogd]
    lines, ok_all = [], True
    for k, need_x in (("sk_chunk1000", 10), ("sk_chunk2000", 10), ("sk_row1000", 200), ("sk_row2000", 200),
                      ("river", 200), ("river_wide", 200), ("vw", 200), ("vw_long", 200)):
        if k not in m:
            lines.append(f"- target vs {k}: not measured (skipped)")
            continue
        e = m[k]
        fast = e[f"speedup_of_{fogd}"] >= need_x
        acc = e[f"{fogd}_mistake_rate_same_rows"] <= e["mistake_rate"]
        ok_all &= fast and acc
        lines.append(f"- FOGD vs {e['label']}: {e[f'speedup_of_{fogd}']:,.1f}x (target >= {need_x}x: "
                     f"{'holds' if fast else 'MISSED'}); mistake rate {e[f'{fogd}_mistake_rate_same_rows']:.2f} vs "
                     f"{e['mistake_rate']:.2f} % on the same {e['rows_timed']:,} rows "
                     f"({'equal or better' if acc else 'WORSE'})")
    missed = [ln.split(":")[0][2:] for ln in lines if "MISSED" in ln or "WORSE" in ln]
    lines.append("- all targets hold: " + ("yes" if ok_all and not missed else
                                            f"no ({len(missed)} of {len(lines)} comparisons miss speed or mistake rate)"))
    return {"all_hold": ok_all, "lines": lines, "fogd_us": f["us_per_example"]}


def main(argv=None):
    ap = h.parser(__doc__, repeats=3)
    ap.add_argument("--prefix", type=int, default=2000, help="rows timed for the per-example anchors (2000)")
    ap.add_argument("--river-wide-prefix", type=int, default=200,
                    help="rows for river with the literal n_components = 1000 per feature (200)")
    ap.add_argument("--vw-long-prefix", type=int, default=10000,
                    help="rows for a second VW row: its cost per example grows with its support vectors (10000)")
    ap.add_argument("--vw-curve", type=int, metavar="ROWS",
                    help="instead of the tables: VW against FOGD on growing prefixes up to ROWS rows "
                         "(mistake rates and VW's cost per example at each; 40000 takes about 3 minutes on ijcnn1)")
    ap.add_argument("--libsvm-C", type=float, default=10.0, help="C of the LIBSVM reference (10)")
    ap.add_argument("--libsvm-max-train", type=int, default=20000, help="cap on cod-rna's LIBSVM training rows")
    ap.add_argument("--only", default="ijcnn1,codrna", help="data sets: ijcnn1, codrna")
    ap.add_argument("--skip", default="", help="comma-separated: libsvm, river-wide")
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS threads for scikit-learn (1, as onlinekern runs n_threads=1; 0 = library default)")
    args = ap.parse_args(argv)
    blas = "library default"
    if args.blas_threads > 0:
        try:
            from threadpoolctl import threadpool_limits
            # kept for the whole run; one thread also avoids oversubscribing a shared 2-core machine
            args._blas_limit = threadpool_limits(limits=args.blas_threads, user_api="blas")
            blas = str(args.blas_threads)
        except ImportError:
            blas = "library default (threadpoolctl not installed)"
    args.skip = [s.strip() for s in args.skip.split(",") if s.strip()]
    data = h.Data(args.data_dir)
    info = h.machine()
    print(h.machine_line(info))
    versions = {}
    for mod in ("sklearn", "river", "vowpalwabbit"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = None
        except AttributeError:
            versions[mod] = "unknown"
    print("anchors: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in versions.items())
          + f"; BLAS threads {blas}; repeats {args.repeats}, prefix {args.prefix}; {time.strftime('%Y-%m-%d %H:%M')}")
    results = {"machine": info, "versions": versions, "blas_threads": blas,
               "args": {k: v for k, v in vars(args).items() if not k.startswith("_")}, "sets": {}}
    t0 = time.perf_counter()
    try:
        for key in args.only.split(","):
            key = key.strip()
            if key not in SETS:
                raise SystemExit(f"bench_anchors: unknown data set {key!r} (ijcnn1, codrna)")
            results["sets"][key] = vw_curve(key, data, args) if args.vw_curve else bench_set(key, data, args)
    finally:
        data.close()
    results["wall_seconds"] = time.perf_counter() - t0
    print(f"\n(total {results['wall_seconds'] / 60:.1f} min)")
    h.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
