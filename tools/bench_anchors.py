"""onlinekern against every alternative, in one picture: online mistake rate against µs per example.

On ijcnn1 (ijcnn1 + ijcnn1.t, 141,691 rows) and cod-rna.tr (59,535 rows, features scaled to
[0, 1]) every online method sees permutation 0 of seed 0 (checked against ``run_online``'s order)
and predicts each example before learning from it.  One point per configuration:

* onlinekern, one thread: FAMILIES (FOGD also with the opt-in float32 map at D >= 1000), the
  budgeted ones at a few B (LASVM, the online SVM solver, among them), and unbudgeted kernel OGD
  (hinge) over the whole stream;
* the anchors a user would pick instead: scikit-learn ``RBFSampler`` / ``Nystroem`` +
  ``SGDClassifier(hinge)`` in chunks of 256 and per example (BLAS on ``--blas-threads``, 1);
  river ``RBFSampler | PAClassifier`` and ``| LogisticRegression`` per example (river draws its
  frequencies per input feature: round(1000 / d) each, about 1000 features); Vowpal Wabbit
  ``--ksvm --kernel rbf`` (LASVM, exact kernel, no budget: its cost grows with its support set,
  so it runs once, until ``--vw-seconds`` of learning, with a point at each of VW_POINTS and
  where it stopped) and VW ``--nn 40`` (VW 9 has no random-feature reduction; its nonlinear
  options are ksvm, nn, lrq, stage_poly, autolink); LIBSVM batch (``sklearn.svm.SVC``) as the
  accuracy reference: test error on a held-out split, not online, not judged.

Hyper-parameters are chosen before any timing by the mistake rate of one online pass over the
first 10 % of the permuted stream (onlinekern: each family at its middle size, over the width grid
GAMMA and a small grid of its own; scikit-learn's SGD step at 1000 components; VW --nn's rate),
river's and VW --ksvm's (width from GAMMA too) over the first ``--tune-rows`` rows (2000).  The
other anchors use the width of FOGD in BENCHMARKS.md (ijcnn1 0.5, cod-rna 1).  µs / example =
learning time / rows, input conversion excluded on every side; every point runs once, those whose
pass took under ``--slow`` seconds ``--repeats`` times in all, alternating (tools/harness.py).

The Pareto statement: an anchor point is dominated when some onlinekern point has a mistake rate
at most the anchor's on the same rows (read from onlinekern's checkpoint curve) and costs at most a
tenth per example (onlinekern's whole-stream cost: for a budget that fills or an unbudgeted model,
an upper bound of its cost on a prefix).  Needs scikit-learn, river, ``pip install vowpalwabbit``
(each optional: missing ones are skipped and said so) and matplotlib; onlinekern needs none.

    nice -n 5 python tools/bench_anchors.py --json docs/figures/anchors.json --plot docs/figures/anchors_pareto.png
    python tools/bench_anchors.py --only codrna --quick                # small prefixes, a smoke test
    python tools/bench_anchors.py --replot docs/figures/anchors.json --plot out.png --markdown
"""
import importlib
import importlib.util
import json
import sys
import time

import numpy as np

import harness as h

import onlinekern as ok
from onlinekern.preprocessing import FeatureScaler
from onlinekern.seeding import permutation

SEED, RUN, CHUNK = 0, 0, 256
GAMMA = (0.5, 1.0, 2.0, 4.0)
VW_POINTS = (2000, 10000, 20000, 40000, 60000, 100000)
SETS = {
    "ijcnn1": {"files": ("ijcnn1", "ijcnn1.t"), "gamma": 0.5, "scale": False, "label": "ijcnn1 (ijcnn1 + ijcnn1.t)"},
    "codrna": {"files": ("cod-rna.tr",), "gamma": 1.0, "scale": True, "label": "cod-rna.tr (scaled to [0, 1])"},
}
# family -> (class, its size parameter, sizes, fixed parameters, tuning grid beside GAMMA)
FAMILIES = {
    "FOGD": (ok.FOGD, "n_components", (100, 400, 1000, 4000), {"loss": "hinge"}, {"eta": (0.3, 1.0, 3.0)}),
    "RRF": (ok.RRF, "n_components", (100, 200, 400, 1000), {"loss": "hinge"},
            {"eta": (0.3, 1.0, 3.0), "eta_gamma": (1e-3, 1e-2)}),
    "BPAs": (ok.BPAs, "budget", (250, 1000, 4000), {}, {"c": (1.0, 10.0)}),
    "BSGD-merge": (ok.BSGDMerge, "budget", (100, 1000), {}, {"lam": (1e-5, 1e-4, 1e-3)}),
    "Projectron++": (ok.ProjectronPP, "budget", (250, 1000), {"average": False}, {"proj_eta": (0.1, 0.3)}),
    "NOGD": (ok.NOGD, "budget", (250, 1000), {"loss": "hinge"}, {"eta": (0.2, 1.0)}),
    "DualSGD": (ok.DualSGD, "budget", (250, 1000), {"loss": "hinge", "horizon": "@rows"}, {}),
    "kernel OGD": (ok.KernelOGD, None, (None,), {"loss": "hinge"}, {"eta": (0.2, 1.0)}),
    "SON": (ok.SON, "n_components", (400, 1000, 2000), {"loss": "hinge", "sketch_size": 40}, {"alpha": (0.1, 1.0)}),
    "LASVM": (ok.LASVM, "budget", (250, 1000, 4000, 8000), {}, {"c": (1.0, 10.0)}),
    "KONS": (ok.KONS, "budget", (100, 400, 1000), {"loss": "hinge"}, {"alpha": (0.01, 0.03, 0.1)}),
}
SGD_CANDIDATES = ({"learning_rate": "optimal"},
                  {"learning_rate": "constant", "eta0": 0.01, "alpha": 1e-6},
                  {"learning_rate": "constant", "eta0": 0.1, "alpha": 1e-6},
                  {"learning_rate": "constant", "eta0": 1.0, "alpha": 1e-6})
RIVER_PA = tuple({"C": C, "mode": mode} for mode in (1, 2) for C in (0.01, 0.1, 1.0))
RIVER_LR = (0.01, 0.1, 1.0)
VW_L2 = (1.0, 0.1, 0.01)            # ksvm's lambda; scores are sum(alpha K) / lambda
VW_NN_L = (0.1, 0.5, 2.0)


class Skip(Exception):
    """An anchor that cannot run here (package missing or unusable); the reason is the message."""


def need(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise Skip(f"{module.split('.')[0]} not installed") from None


def rate(mistakes, n):
    """Mistakes in percent of n."""
    return 100.0 * mistakes / n


def call(name, params):
    """A printable constructor call, e.g. ``FOGD(n_components=1000, gamma=0.5)``."""
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"


# ---- onlinekern ------------------------------------------------------------------------------

def ok_params(fam, size, n, **p):
    cls, size_key, _, fixed, _ = FAMILIES[fam]
    q = dict(fixed, **p)
    if size_key:
        q[size_key] = size
    if q.get("horizon") == "@rows":
        q["horizon"] = n
    return q


def ok_make(fam, q, **extra):
    return FAMILIES[fam][0](seed=SEED, n_threads=1, **q, **extra)


def run_ok(learner, X, y, order, points):
    """One pass in permutation 0 of seed 0: (seconds, mistake rate, {prefix: rate})."""
    res = ok.run_online(learner, X, y, seed=SEED, run=RUN, checkpoints=sorted(set(points) | {X.shape[0]}))
    if not np.array_equal(res.order, order):
        raise SystemExit("bench_anchors: run_online's order is not onlinekern.seeding.permutation(0, 0, n)")
    at = dict(zip(res.curve["n_seen"].tolist(), res.curve["mistake_rate"].tolist()))
    return res.seconds, res.mistake_rate, {p: at[p] for p in points}


def tune_ok(fam, Xp, yp, n):
    """Width and the family's own parameters by one pass over the first 10 % at the middle size."""
    _, _, sizes, _, grid = FAMILIES[fam]
    m = max(Xp.shape[0] // 10, 1)
    size = sizes[len(sizes) // 2]
    keys = ["gamma"] + list(grid)
    best, best_rate = None, np.inf
    for vals in np.array(np.meshgrid(GAMMA, *grid.values(), indexing="ij")).reshape(len(keys), -1).T:
        p = {k: float(v) for k, v in zip(keys, vals)}
        r = ok.run_online(ok_make(fam, ok_params(fam, size, n, **p)), Xp[:m], yp[:m], checkpoints=None).mistake_rate
        if r < best_rate:
            best, best_rate = p, r
    return best, best_rate


# ---- scikit-learn ----------------------------------------------------------------------------

def sk_map(kind, n_components, gamma, Xp):
    """RBFSampler (fit only reads the width of X) or Nystroem on the first n_components rows of
    the stream (an online learner cannot see later ones)."""
    ka = need("sklearn.kernel_approximation")
    if kind == "RBFSampler":
        return ka.RBFSampler(gamma=gamma, n_components=n_components, random_state=SEED).fit(Xp[:1])
    return ka.Nystroem(gamma=gamma, n_components=n_components, random_state=SEED).fit(Xp[:n_components])


def sk_chunks(kind, nc, gamma, sgd, Xp, yp, chunk=CHUNK):
    """Predict each chunk of ``chunk`` rows, then partial_fit it (the first chunk counts as all
    mistakes, there being no model yet).  Nystroem's fit is inside the timing."""
    SGDClassifier = need("sklearn.linear_model").SGDClassifier
    mistakes, n = 0, Xp.shape[0]
    t = time.perf_counter()
    fmap, clf = sk_map(kind, nc, gamma, Xp), SGDClassifier(loss="hinge", random_state=SEED, **sgd)
    for s in range(0, n, chunk):
        Z, yy = fmap.transform(Xp[s:s + chunk]), yp[s:s + chunk]
        mistakes += int(np.sum(clf.predict(Z) != yy)) if s else len(yy)
        clf.partial_fit(Z, yy, classes=[-1.0, 1.0])
    return time.perf_counter() - t, rate(mistakes, n)


def sk_rows(kind, nc, gamma, sgd, rows, Xp, yp):
    """Per example: transform one row, predict it (the first counts as a mistake), partial_fit it."""
    SGDClassifier = need("sklearn.linear_model").SGDClassifier
    labels = [yp[i:i + 1] for i in range(len(rows))]
    t = time.perf_counter()
    fmap, clf = sk_map(kind, nc, gamma, Xp), SGDClassifier(loss="hinge", random_state=SEED, **sgd)
    clf.partial_fit(fmap.transform(rows[0]), labels[0], classes=np.array([-1.0, 1.0]))
    mistakes = 1
    for i in range(1, len(rows)):
        z = fmap.transform(rows[i])
        mistakes += int(clf.predict(z)[0] != labels[i][0])
        clf.partial_fit(z, labels[i])
    return time.perf_counter() - t, rate(mistakes, len(rows))


# ---- river -----------------------------------------------------------------------------------

def river_model(kind, gamma, per_feature, p):
    fx, lm = need("river.feature_extraction"), need("river.linear_model")
    if kind == "PA":
        head = lm.PAClassifier(**p)
    else:
        head = lm.LogisticRegression(optimizer=need("river.optim").SGD(p["lr"]))
    return fx.RBFSampler(gamma=gamma, n_components=per_feature, seed=SEED) | head


def river_rows(kind, gamma, per_feature, p, dicts, yp):
    model = river_model(kind, gamma, per_feature, p)
    labels = [bool(v > 0) for v in yp[:len(dicts)]]
    mistakes = 0
    t = time.perf_counter()
    for x, lab in zip(dicts, labels):
        # predict_one gives False on the empty model: a mistake on a positive example, as
        # onlinekern counts a zero score as a mistake
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


def vw_rows(args, lines, yp, points=(), budget=np.inf):
    """VW over ``lines`` (predict, then learn, each example), stopping after the block of 1000 in
    which its learning time passed ``budget`` seconds: (seconds, mistake rate, {p: (rate, seconds)}
    after the first p rows, for each of ``points`` reached and the row it stopped at)."""
    vw = need("vowpalwabbit")
    try:
        ws = vw.Workspace(args + " --quiet")
    except Exception as e:          # a wheel built without the reduction, or options it rejects
        raise Skip(f"vowpalwabbit refused '{args}': {e}") from None
    mistakes, at, points, i, sec = 0, {}, set(points), 0, 0.0
    try:
        for s in range(0, len(lines), 1000):
            exs = [ws.parse(line) for line in lines[s:s + 1000]]      # parsing is loading: not timed
            t = time.perf_counter()
            for ex, lab in zip(exs, yp[s:s + 1000]):
                i += 1
                ws.learn(ex)                                          # predicts (into ex), then learns
                mistakes += ex.get_simplelabel_prediction() * lab <= 0
                ws.finish_example(ex)
                if i in points:
                    at[i] = (rate(mistakes, i), sec + time.perf_counter() - t)
            sec += time.perf_counter() - t
            if sec > budget:
                at[i] = (rate(mistakes, i), sec)
                break
    finally:
        ws.finish()
    return sec, rate(mistakes, i), at


def best_of(score, candidates):
    """(best candidate, its rate, {str(candidate): rate}) by the lowest ``score(candidate)``."""
    scored = {json.dumps(c): score(c) for c in candidates}
    key = min(scored, key=scored.get)
    return json.loads(key), scored[key], scored


# ---- LIBSVM ----------------------------------------------------------------------------------

def libsvm_batch(Xtr, ytr, Xte, yte, gamma, C):
    SVC = need("sklearn.svm").SVC
    t = time.perf_counter()
    model = SVC(C=C, gamma=gamma, kernel="rbf", cache_size=500).fit(Xtr, ytr)
    sec = time.perf_counter() - t
    err = 100.0 * float(np.mean(model.predict(Xte) != yte))
    return {"train_rows": Xtr.shape[0], "test_rows": Xte.shape[0], "train_seconds": sec,
            "n_sv": int(model.support_.shape[0]), "test_error": err}


# ---- one data set ----------------------------------------------------------------------------

def load_set(key, data):
    spec = SETS[key]
    X, y = data.load(*spec["files"])
    if spec["scale"]:
        X = FeatureScaler(0.0, 1.0).fit(X).transform(X)
    return spec, X.tocsr(), y


def bench_set(key, data, args):
    spec, X, y = load_set(key, data)
    n, d = X.shape
    if args.rows:
        X, y, n = X[:args.rows], y[:args.rows], min(n, args.rows)
    gamma = spec["gamma"]
    order = permutation(SEED, RUN, n)
    Xp, yp = X[order], y[order]
    m10, T = max(n // 10, CHUNK), min(args.tune_rows, n)
    V = min(args.vw_rows or n, n)
    vw_pts = sorted({p for p in VW_POINTS if p < V} | {V})
    out = {"label": spec["label"], "rows": n, "features": d, "gamma": gamma, "vw_rows": V, "tune_rows": T,
           "points": {}, "chosen": {}, "skipped": {}}
    print(f"\n### {spec['label']}: {n:,} rows, {d} features, anchors' gamma = {gamma}, permutation 0 of seed 0\n",
          flush=True)
    methods = {}      # key -> dict(label, family, kind, command, rows, fn -> (seconds, rate, {p: rate}))

    def add(k, family, kind, command, rows, fn):
        methods[k] = {"label": k, "family": family, "kind": kind, "command": command, "rows": rows, "fn": fn}

    # -- onlinekern: tune each family, then its points
    for fam, (cls, size_key, sizes, _, _) in FAMILIES.items():
        if fam.lower() in args.skip:
            continue
        p, r = tune_ok(fam, Xp, yp, n)
        out["chosen"][fam] = {"params": p, "tune_rate": r, "how": f"first 10 % ({m10:,} rows)"}
        precisions = ("float64", "float32") if fam == "FOGD" else (None,)
        for size in sizes:
            for prec in precisions:
                if prec == "float32" and size < 1000:
                    continue
                q = ok_params(fam, size, n, **p)
                extra = {"precision": prec} if prec == "float32" else {}
                name = fam + (f", {'D' if size_key == 'n_components' else 'B'} = {size}" if size else ", no budget")
                name += ", float32" if extra else ""
                add(name, fam + (" float32" if extra else ""), "onlinekern", call(cls.__name__, dict(q, **extra)), n,
                    lambda q=q, extra=extra, fam=fam: run_ok(ok_make(fam, q, **extra), X, y, order, vw_pts))

    # -- scikit-learn
    try:
        sgd, r, cands = best_of(lambda c: sk_chunks("RBFSampler", 1000, gamma, c, Xp[:m10], yp[:m10])[1],
                                SGD_CANDIDATES)
        out["chosen"]["scikit-learn SGD"] = {"params": sgd, "tune_rate": r, "candidates": cands,
                                            "how": f"first 10 % ({m10:,} rows), chunks of {CHUNK}, RBFSampler(1000)"}
        rows = [Xp[i] for i in range(n)]
        for kind, nc in (("RBFSampler", 1000), ("RBFSampler", 2000), ("Nystroem", 1000)):
            cmd = f"{kind}(gamma={gamma:g}, n_components={nc}) + SGDClassifier(loss='hinge', {', '.join(f'{k}={v!r}' for k, v in sgd.items())})"
            add(f"scikit-learn {kind}({nc}) + SGD, chunks of {CHUNK}", "scikit-learn, chunks", "anchor",
                cmd + f", chunks of {CHUNK}", n, lambda kind=kind, nc=nc: sk_chunks(kind, nc, gamma, sgd, Xp, yp) + ({},))
            if nc == 1000:
                add(f"scikit-learn {kind}({nc}) + SGD, per example", "scikit-learn, per example", "anchor",
                    cmd + ", per example", n, lambda kind=kind, nc=nc: sk_rows(kind, nc, gamma, sgd, rows, Xp, yp) + ({},))
    except Skip as e:
        out["skipped"]["scikit-learn"] = str(e)

    # -- river
    try:
        need("river.feature_extraction")
        per_feature = max(1, round(1000 / d))
        dicts = [dict(zip(Xp.indices[Xp.indptr[i]:Xp.indptr[i + 1]].tolist(),
                          Xp.data[Xp.indptr[i]:Xp.indptr[i + 1]].tolist())) for i in range(n)]
        for kind, grid, head in (("PA", RIVER_PA, "PAClassifier(**{})"), ("logistic", [{"lr": v} for v in RIVER_LR],
                                                                          "LogisticRegression(optim.SGD({lr}))")):
            p, r, cands = best_of(lambda c, kind=kind: river_rows(kind, gamma, per_feature, c, dicts[:T], yp)[1], grid)
            out["chosen"][f"river {kind}"] = {"params": p, "tune_rate": r, "candidates": cands,
                                              "how": f"first {T:,} rows"}
            cmd = (f"RBFSampler(gamma={gamma:g}, n_components={per_feature}) | "
                   + (head.format(p) if kind == "PA" else head.format(lr=p["lr"])))
            add(f"river RBFSampler({per_feature * d} features) + {kind}", "river", "anchor", cmd, n,
                lambda kind=kind, p=p: river_rows(kind, gamma, per_feature, p, dicts, yp) + ({},))
    except Skip as e:
        out["skipped"]["river"] = str(e)

    # -- Vowpal Wabbit: --nn over the whole stream; --ksvm once, on the first V rows
    try:
        lines = vw_lines(Xp, yp, n)
        p, r, cands = best_of(lambda c: vw_rows(f"--nn 40 --loss_function logistic -l {c}", lines[:m10], yp)[1],
                              VW_NN_L)
        out["chosen"]["VW --nn"] = {"params": {"l": p}, "tune_rate": r, "candidates": cands,
                                    "how": f"first 10 % ({m10:,} rows)"}
        nn_args = f"--nn 40 --loss_function logistic -l {p}"
        add("VW --nn 40", "VW --nn", "anchor", "vw " + nn_args, n, lambda: vw_rows(nn_args, lines, yp))
        p, r, cands = best_of(lambda c: vw_rows(f"--ksvm --kernel rbf --bandwidth {c[0]} --l2 {c[1]} --noconstant",
                                                lines[:T], yp)[1], [[g, l2] for g in GAMMA for l2 in VW_L2])
        out["chosen"]["VW --ksvm"] = {"params": {"bandwidth": p[0], "l2": p[1]}, "tune_rate": r,
                                      "candidates": cands, "how": f"first {T:,} rows"}
        ksvm_args = f"--ksvm --kernel rbf --bandwidth {p[0]} --l2 {p[1]} --noconstant"
        print(f"- VW {ksvm_args}: one pass over at most {V:,} rows, for at most {args.vw_seconds:g} s", flush=True)
        at = vw_rows(ksvm_args, lines[:V], yp, vw_pts, args.vw_seconds)[2]
        vw_pts = sorted(at)         # the onlinekern passes below (not yet run) read their rates on these rows
        out["vw_rows"] = vw_pts[-1]
        for q in vw_pts:
            out["points"][f"VW --ksvm, first {q:,} rows"] = {
                "family": "VW --ksvm", "kind": "anchor", "command": "vw " + ksvm_args, "rows": q, "prefix": q < n,
                "us": at[q][1] / q * 1e6, "rate": at[q][0], "seconds": [at[q][1]]}
    except Skip as e:
        out["skipped"]["Vowpal Wabbit"] = str(e)

    for k, v in out["chosen"].items():
        print(f"- chosen for {k}: {json.dumps(v['params'])} (mistake rate {v['tune_rate']:.2f} % on the {v['how']})",
              flush=True)

    # -- timed passes: every method once, then the fast ones again, alternating
    _, first = h.side_by_side({k: v["fn"] for k, v in methods.items()}, 1, seconds=lambda r: r[0])
    fast = [k for k in methods if first[k][0][0] < args.slow]
    more = h.side_by_side({k: methods[k]["fn"] for k in fast}, args.repeats - 1, seconds=lambda r: r[0])[1] \
        if args.repeats > 1 and fast else {}
    for k, v in methods.items():
        runs = first[k] + more.get(k, [])
        if len({r[1] for r in runs}) > 1:
            print(f"- warning: {k} gave different mistake rates across repeats: {[r[1] for r in runs]}")
        out["points"][k] = {"family": v["family"], "kind": v["kind"], "command": v["command"], "rows": v["rows"],
                            "prefix": False, "us": h.median([r[0] for r in runs]) / v["rows"] * 1e6,
                            "rate": runs[0][1], "seconds": [r[0] for r in runs],
                            "rate_at": {str(q): r for q, r in runs[0][2].items()}}

    # -- LIBSVM batch reference
    if "libsvm" not in args.skip:
        try:
            if key == "ijcnn1" and not args.rows:
                n_tr = data.load("ijcnn1")[0].shape[0]
                split, how = (X[:n_tr], y[:n_tr], X[n_tr:], y[n_tr:]), "trained on ijcnn1, tested on ijcnn1.t"
            else:
                half = n // 2
                mt = min(half, args.libsvm_max_train)
                split = (Xp[:mt], yp[:mt], Xp[half:], yp[half:])
                how = f"permuted rows 50/50; trained on {mt:,} of the first half, tested on the second half"
            lib = libsvm_batch(*split, gamma=gamma, C=args.libsvm_C)
            out["libsvm"] = dict(lib, how=how, command=f"SVC(C={args.libsvm_C:g}, gamma={gamma:g}, kernel='rbf')")
        except Skip as e:
            out["skipped"]["LIBSVM"] = str(e)
    out["verdicts"] = verdicts(out["points"], n)
    print(markdown(out))
    return out


# ---- the Pareto statement --------------------------------------------------------------------

def ok_rate_on(e, rows, n):
    """An onlinekern point's mistake rate on the first ``rows`` rows."""
    return e["rate"] if rows == n else e["rate_at"][str(rows)]


def verdicts(points, n, factor=10.0):
    """For every anchor point: the onlinekern points at least as accurate on the same rows and at
    least ``factor`` times cheaper; else the closest ones on each axis."""
    oks = {k: e for k, e in points.items() if e["kind"] == "onlinekern"}
    out = {}
    for k, a in points.items():
        if a["kind"] != "anchor":
            continue
        rates = {j: ok_rate_on(e, a["rows"], n) for j, e in oks.items()}
        dom = [j for j, e in oks.items() if rates[j] <= a["rate"] and a["us"] / e["us"] >= factor]
        cheap = [j for j, e in oks.items() if a["us"] / e["us"] >= factor]
        acc = [j for j in oks if rates[j] <= a["rate"]]
        v = {"dominated": bool(dom), "n_dominating": len(dom)}
        for tag, j in (("by", min(dom, key=rates.get, default=None)), ("cheap", min(cheap, key=rates.get, default=None)),
                       ("accurate", min(acc, key=lambda j: oks[j]["us"], default=None))):
            if j is not None:
                v[tag] = j
                v[tag + "_rate"] = rates[j]
                v[tag + "_ratio"] = a["us"] / oks[j]["us"]
        out[k] = v
    return out


def markdown(res):
    """The points of one data set as a Markdown table, then the verdict per anchor."""
    n = res["rows"]
    lines = [f"{res['label']}: {n:,} rows, one pass in permutation 0 of seed 0", "",
             "| configuration | rows | µs / example | mistake rate (%) | command |", "|---|---:|---:|---:|---|"]
    pts = sorted(res["points"].items(), key=lambda kv: (kv[1]["kind"] != "onlinekern", kv[1]["us"]))
    for k, e in pts:
        rows = f"{e['rows']:,}" + (" (prefix)" if e["prefix"] else "")
        name = f"**{k}**" if e["kind"] == "onlinekern" else k
        lines.append(f"| {name} | {rows} | {e['us']:,.2f} | {e['rate']:.2f} | `{e['command'].replace('|', chr(92) + '|')}` |")
    lib = res.get("libsvm")
    if lib:
        lines.append(f"| LIBSVM batch (not online; {lib['how']}) | {lib['train_rows']:,} train | "
                     f"{lib['train_seconds'] / lib['train_rows'] * 1e6:,.1f} (training) | {lib['test_error']:.2f} "
                     f"(test error) | `{lib['command']}` |")
    lines += ["", "| anchor | its µs / its rate (%) | dominated (rate ≤, ≥ 10× cheaper, same rows) | "
              "most accurate onlinekern ≥ 10× cheaper | cheapest onlinekern at least as accurate |",
              "|---|---:|---|---|---|"]
    for k, v in res["verdicts"].items():
        a = res["points"][k]
        cell = (lambda t: f"{v[t]}: {v[t + '_rate']:.2f} %, {v[t + '_ratio']:,.0f}× cheaper" if t in v else "none")
        lines.append(f"| {k} | {a['us']:,.1f} / {a['rate']:.2f} | "
                     + (f"**yes** ({v['n_dominating']} points), e.g. {cell('by')}" if v["dominated"] else "**no**")
                     + f" | {cell('cheap')} | {cell('accurate')} |")
    for k, why in res.get("skipped", {}).items():
        lines.append(f"- {k}: skipped ({why})")
    return "\n".join(lines)


# ---- the picture -----------------------------------------------------------------------------

def plot(results, path):
    """Both data sets side by side: onlinekern's families as coloured circles joined along D or B,
    the anchors as grey markers; VW --ksvm's prefix points hollow, each tied by a dotted line to
    the most accurate onlinekern point >= 10x cheaper, placed at its mistake rate on the same rows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter
    sets = list(results["sets"].values())
    fig, axes = plt.subplots(1, len(sets), figsize=(7 * len(sets), 6), squeeze=False)
    fams = list(dict.fromkeys(e["family"] for r in sets for e in r["points"].values()))
    mine = [f for f in fams if any(e["family"] == f and e["kind"] == "onlinekern" for r in sets for e in r["points"].values())]
    colors = dict(zip(mine, plt.cm.tab20(np.arange(len(mine)) % 20 * (1 if len(mine) > 10 else 2) % 20)))
    marks = dict(zip([f for f in fams if f not in colors], "sDv^P<>"))
    for ax, r in zip(axes[0], sets):
        for fam in fams:
            pts = sorted((e for e in r["points"].values() if e["family"] == fam), key=lambda e: e["us"])
            if not pts:
                continue
            xs, ys = [e["us"] for e in pts], [e["rate"] for e in pts]
            if fam in colors:
                ax.plot(xs, ys, "o-", color=colors[fam], ms=6, mec="k", mew=0.4, lw=1, label=fam, zorder=3)
                for e in pts:
                    size = e["command"].split("n_components=" if "n_components" in e["command"] else "budget=")
                    if len(size) > 1:
                        ax.annotate(size[1].split(",")[0].rstrip(")"), (e["us"], e["rate"]), fontsize=6,
                                    xytext=(2, -8), textcoords="offset points", color=colors[fam])
            else:
                face = ["white" if e["prefix"] else "0.45" for e in pts]
                ax.plot(xs, ys, ":", color="0.45", lw=0.8)
                ax.scatter(xs, ys, marker=marks[fam], c=face, edgecolors="k", s=40, zorder=4, label=fam)
        for k, v in r["verdicts"].items():
            a = r["points"][k]
            if a["prefix"] or (a["family"] == "VW --ksvm" and a["rows"] == r["rows"]):
                ax.annotate(f"first {a['rows'] // 1000}k", (a["us"], a["rate"]), fontsize=6, xytext=(4, 3),
                            textcoords="offset points")
            if a["prefix"] and "cheap" in v:
                o = r["points"][v["cheap"]]
                ax.plot([o["us"], a["us"]], [v["cheap_rate"], a["rate"]], ":", color=colors[o["family"]], lw=0.8)
                ax.plot([o["us"]], [v["cheap_rate"]], "x", color=colors[o["family"]], ms=6)
        lib = r.get("libsvm")
        if lib:
            ax.scatter([lib["train_seconds"] / lib["train_rows"] * 1e6], [lib["test_error"]], marker="*", s=140,
                       c="k", zorder=4, label="LIBSVM batch (x: training µs per row;\ny: test error; not online)")
        ax.set(xscale="log", yscale="log", xlabel="µs per example (log scale; one thread)",
               ylabel="online mistake rate over the rows seen (%, log scale)", title=f"{r['label']}, {r['rows']:,} rows")
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
        ax.tick_params(which="minor", labelsize=6)
        ax.grid(True, which="both", alpha=0.25)
    legend = {lb: hd for ax in axes[0][::-1] for hd, lb in zip(*ax.get_legend_handles_labels())}
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=5, fontsize=7, frameon=False)
    m = results["machine"]
    fig.suptitle("onlinekern (circles, labelled with D or B) against the alternatives (grey).\nHollow: VW --ksvm on a "
                 "prefix, its rate over those rows; the x on its dotted line: onlinekern's most accurate point >= 10x "
                 f"cheaper, its rate on the same rows.\n{m['cpu']}, SIMD {m['simd']}, one thread, {m['date']}", fontsize=8)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None):
    ap = h.parser(__doc__, repeats=3)
    ap.add_argument("--only", default="ijcnn1,codrna", help="data sets: ijcnn1, codrna")
    ap.add_argument("--skip", default="", help="comma-separated families to leave out (e.g. 'kernel ogd,libsvm')")
    ap.add_argument("--rows", type=int, default=0, help="use only the first ROWS rows of each file (0: all)")
    ap.add_argument("--quick", action="store_true", help="smoke test: --rows 6000 --vw-rows 3000 --repeats 1")
    ap.add_argument("--vw-rows", type=int, default=0, help="rows of VW --ksvm's one pass at most (0: all)")
    ap.add_argument("--vw-seconds", type=float, default=600, help="VW --ksvm stops after this learning time (600)")
    ap.add_argument("--tune-rows", type=int, default=2000, help="rows river and VW --ksvm are tuned on (2000)")
    ap.add_argument("--slow", type=float, default=10.0, help="passes longer than this (s) run once (10)")
    ap.add_argument("--libsvm-C", type=float, default=10.0, help="C of the LIBSVM reference (10)")
    ap.add_argument("--libsvm-max-train", type=int, default=20000, help="cap on cod-rna's LIBSVM training rows")
    ap.add_argument("--blas-threads", type=int, default=1, help="BLAS threads for scikit-learn (1; 0 = default)")
    ap.add_argument("--plot", help="draw the figure (both data sets side by side) into this PNG")
    ap.add_argument("--replot", metavar="JSON", help="no measuring: read the results from JSON")
    ap.add_argument("--markdown", action="store_true", help="with --replot: print the tables")
    args = ap.parse_args(argv)
    if args.replot:
        with open(args.replot) as f:
            results = json.load(f)
        for r in results["sets"].values():
            print(markdown(r) if args.markdown else r["label"])
        if args.plot:
            plot(results, args.plot)
        return 0
    if args.quick:
        args.rows, args.vw_rows, args.vw_seconds, args.repeats = args.rows or 6000, 3000, 60, 1
    blas = "library default"
    if args.blas_threads > 0:
        try:
            from threadpoolctl import threadpool_limits
            args._blas_limit = threadpool_limits(limits=args.blas_threads, user_api="blas")
            blas = str(args.blas_threads)
        except ImportError:
            blas = "library default (threadpoolctl not installed)"
    args.skip = [s.strip().lower() for s in args.skip.split(",") if s.strip()]
    data = h.Data(args.data_dir)
    info = h.machine()
    print(h.machine_line(info))
    versions = {mod: getattr(importlib.util.find_spec(mod) and importlib.import_module(mod), "__version__", None)
                for mod in ("sklearn", "river", "vowpalwabbit")}
    print("anchors: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in versions.items())
          + f"; BLAS threads {blas}; repeats {args.repeats} (passes over {args.slow:g} s: 1)")
    results = {"machine": info, "versions": versions, "blas_threads": blas,
               "args": {k: v for k, v in vars(args).items() if not k.startswith("_")}, "sets": {}}
    t0 = time.perf_counter()
    try:
        for key in args.only.split(","):
            if key.strip() not in SETS:
                raise SystemExit(f"bench_anchors: unknown data set {key!r} (ijcnn1, codrna)")
            results["sets"][key.strip()] = bench_set(key.strip(), data, args)
            h.write_json(args.json, results)          # after each set: a killed run keeps what it has
    finally:
        data.close()
    results["wall_seconds"] = time.perf_counter() - t0
    print(f"\n(total {results['wall_seconds'] / 60:.1f} min)")
    h.write_json(args.json, results)
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
