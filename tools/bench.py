"""Benchmarks of the foundation: reader, FOGD vs scikit-learn, kernel learners and threads.

Every figure is a median over ``--repeats`` runs, and every comparison times both sides
alternately in this one process (tools/harness.py), because the machine is shared and noisy.
Results print as Markdown tables (copy them into BENCHMARKS.md); ``--json OUT`` also writes them.

    python tools/bench.py                      # everything (several minutes)
    python tools/bench.py --only fogd,reader   # a subset: reader, fogd, sklearn, kernel, learners, precision, second
"""
import sys
import time

import numpy as np

import harness as h

import onlinekern as ok
from onlinekern.preprocessing import FeatureScaler


# ---- sections ------------------------------------------------------------------------------

def bench_reader(data, repeats, dtype="float64"):
    """load_libsvm against sklearn's load_svmlight_file on decompressed ijcnn1.t, alternately; the
    outputs must be identical to the byte."""
    from sklearn.datasets import load_svmlight_file
    path = str(data.plain("ijcnn1.t"))
    med, res = h.side_by_side({"ours": lambda: ok.load_libsvm(path, dtype=dtype),
                               "sklearn": lambda: load_svmlight_file(path, zero_based=False, dtype=dtype)}, repeats)
    (X1, y1), (X2, y2) = res["ours"][0], res["sklearn"][0]
    same = bool(X1.shape == X2.shape and np.array_equal(X1.indptr, X2.indptr) and np.array_equal(X1.indices, X2.indices)
                and X1.data.tobytes() == X2.data.tobytes() and y1.tobytes() == y2.tobytes())
    row = {"file": "ijcnn1.t", "rows": X1.shape[0], "dtype": dtype, "onlinekern_s": med["ours"],
           "sklearn_s": med["sklearn"], "speedup": med["sklearn"] / med["ours"], "identical": same}
    print(f"\n### Reader: load_libsvm vs sklearn.datasets.load_svmlight_file (decompressed ijcnn1.t, {dtype})\n")
    print(h.md_table(["file", "rows", "onlinekern (s)", "scikit-learn (s)", "speed-up", "identical"],
                     [["ijcnn1.t", f"{row['rows']:,}", f"{med['ours']:.3f}", f"{med['sklearn']:.3f}",
                       f"{row['speedup']:.1f}x", "yes" if same else "NO"]]))
    return row


def fogd_run(X, y, eta, seed=0, run=0, D=1000, gamma=0.5, precision="float64"):
    learner = ok.FOGD(n_components=D, gamma=gamma, eta=eta, loss="hinge", seed=seed + run, n_threads=1,
                      precision=precision)
    return ok.run_online(learner, X, y, seed=seed, run=run)


def bench_precision(data, repeats, eta):
    """FOGD with the default float64 feature map against the opt-in float32 one, D = 100, 1000,
    4000 on ijcnn1 (permutation 0), the two timed alternately; medians of ``repeats``."""
    X, y = data.load("ijcnn1", "ijcnn1.t")
    n = X.shape[0]
    print(f"\n### FOGD-hinge, float64 vs float32 feature map, ijcnn1 ({n:,} rows), eta = {eta}, gamma = 0.5, "
          f"permutation 0, medians of {repeats} alternating runs\n")
    print("| D | float64 µs / example | float32 µs / example | speed-up | mistake rate float64 / float32 (%) |")
    print("|---:|---:|---:|---:|---:|")
    out = []
    for D in (100, 1000, 4000):
        med, res = h.side_by_side({p: (lambda p=p: fogd_run(X, y, eta, D=D, precision=p)) for p in ("float64", "float32")},
                                  repeats, seconds=lambda r: r.seconds)
        us = {p: v / n * 1e6 for p, v in med.items()}
        rates = {p: v[-1].mistake_rate for p, v in res.items()}
        row = {"D": D, "us_float64": us["float64"], "us_float32": us["float32"],
               "speedup": us["float64"] / us["float32"], "mistake_rate_float64": rates["float64"],
               "mistake_rate_float32": rates["float32"]}
        print(f"| {D} | {row['us_float64']:.3f} | {row['us_float32']:.3f} | {row['speedup']:.2f}x "
              f"| {rates['float64']:.2f} / {rates['float32']:.2f} |")
        out.append(row)
    return out


def bench_fogd(data, repeats, eta):
    X, y = data.load("ijcnn1", "ijcnn1.t")
    n = X.shape[0]
    res = [fogd_run(X, y, eta, run=r) for r in range(repeats)]
    rates = [r.mistake_rate for r in res]
    secs = [r.seconds for r in res]
    row = {"rows": n, "D": 1000, "gamma": 0.5, "eta": eta, "runs": repeats, "mistake_rate_mean": float(np.mean(rates)),
           "mistake_rate_std": float(np.std(rates)), "seconds_median": h.median(secs), "us_per_example": h.median(secs) / n * 1e6}
    print(f"\n### FOGD-hinge on ijcnn1 (ijcnn1 + ijcnn1.t, {n:,} rows), D = 1000, gamma = 0.5, eta = {eta}, "
          f"{repeats} permutations\n")
    print("| mistake rate (%) | learning time (s, median) | µs / example |")
    print("|---:|---:|---:|")
    print(f"| {row['mistake_rate_mean']:.2f} ± {row['mistake_rate_std']:.2f} | {row['seconds_median']:.3f} | {row['us_per_example']:.2f} |")
    return row


SGD_DEFAULT = {"learning_rate": "constant", "eta0": 0.01, "alpha": 1e-6}


def sklearn_chunks(X, y, n_components, predict, chunk=256, seed=0, gamma=0.5, sgd=None):
    """RBFSampler + SGDClassifier(hinge).partial_fit in chunks (with ``predict``: each chunk is
    predicted before it is learned, the first counting as all mistakes); (seconds, mistake %)."""
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.linear_model import SGDClassifier
    rbf = RBFSampler(gamma=gamma, n_components=n_components, random_state=seed).fit(X[:1])
    clf = SGDClassifier(loss="hinge", random_state=seed, **(SGD_DEFAULT if sgd is None else sgd))
    mistakes = 0
    t = time.perf_counter()
    for s in range(0, X.shape[0], chunk):
        Z = rbf.transform(X[s:s + chunk])
        yy = y[s:s + chunk]
        if predict:
            mistakes += int(np.sum(clf.predict(Z) != yy)) if s else len(yy)
        clf.partial_fit(Z, yy, classes=[-1.0, 1.0])
    return time.perf_counter() - t, 100.0 * mistakes / X.shape[0]


def bench_sklearn(data, repeats, eta):
    X, y = data.load("ijcnn1", "ijcnn1.t")
    n = X.shape[0]
    fns = {"onlinekern": lambda: (lambda r: (r.seconds, r.mistake_rate))(fogd_run(X, y, eta, run=0))}
    for key, nc, pred in (("skl1000", 1000, False), ("skl1000p", 1000, True), ("skl2000", 2000, False),
                          ("skl2000p", 2000, True)):
        fns[key] = lambda nc=nc, pred=pred: sklearn_chunks(X, y, nc, pred)
    med, res = h.side_by_side(fns, repeats, seconds=lambda r: r[0])
    rates = {k: v[-1][1] for k, v in res.items() if k == "onlinekern" or k.endswith("p")}
    us, speedup = {k: v / n * 1e6 for k, v in med.items()}, h.ratios(med, "onlinekern")
    print(f"\n### FOGD vs scikit-learn RBFSampler + SGDClassifier.partial_fit (chunks of 256), ijcnn1 {n:,} rows, "
          f"one pass, medians of {repeats} alternating runs\n")
    print("| method | µs / example | onlinekern speed-up | online mistake rate (%) |")
    print("|---|---:|---:|---:|")
    print(f"| onlinekern FOGD, D = 1000 (2000 features), per example | {us['onlinekern']:.2f} | 1.0x | {rates['onlinekern']:.2f} |")
    labels = {"skl1000": "scikit-learn, 1000 components, partial_fit only",
              "skl1000p": "scikit-learn, 1000 components, predict + partial_fit per chunk",
              "skl2000": "scikit-learn, 2000 components, partial_fit only",
              "skl2000p": "scikit-learn, 2000 components, predict + partial_fit per chunk"}
    for k, label in labels.items():
        print(f"| {label} | {us[k]:.2f} | {speedup[k]:.1f}x | {rates.get(k, float('nan')):.2f} |")
    return {"us_per_example": us, "mistake_rate": rates}


def bench_kernel(data, repeats):
    X, y = data.load("cod-rna.tr")
    X = FeatureScaler(0.0, 1.0).fit(X).transform(X)
    n = X.shape[0]
    rows = []
    # cod-rna.tr is sorted by label, so file order would make online learning trivial: use
    # permutation 0 of seed 0, as the papers do
    print(f"\n### Kernel Perceptron and kernel OGD on cod-rna.tr ({n:,} rows, features scaled to [0, 1], gamma = 1), "
          f"one pass in permutation 0 of seed 0, median of {repeats}\n")
    print("| learner | mistake rate (%) | SVs | 1 thread (s) | 2 threads (s) | 2-thread speed-up |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, params in (("perceptron", {"average": False}), ("ogd-hinge", {"eta": 0.5})):
        med, runs = h.side_by_side({nt: (lambda nt=nt: ok.run_online(ok.make_learner(name, gamma=1.0, n_threads=nt, **params),
                                                                      X, y, seed=0)) for nt in (1, 2)},
                                   repeats, seconds=lambda r: r.seconds)
        res = runs[1][0]
        if any(r.n_mistakes != res.n_mistakes for v in runs.values() for r in v):
            raise SystemExit(f"bench: {name} gave different results with 1 and 2 threads")
        row = {"learner": name, "params": params, "mistake_rate": res.mistake_rate, "svs": res.model_size,
               "seconds_1": med[1], "seconds_2": med[2]}
        rows.append(row)
        print(f"| {name} {params or ''} | {res.mistake_rate:.2f} | {res.model_size:,} | {row['seconds_1']:.2f} | "
              f"{row['seconds_2']:.2f} | {row['seconds_1'] / row['seconds_2']:.2f}x |")
    return rows


def bench_learners(data, repeats):
    cases = [
        ("ijcnn1", ("ijcnn1", "ijcnn1.t"), [("fogd-hinge", {"n_components": 1000, "gamma": 0.5, "eta": 1.0}),
                                            ("fogd-logit", {"n_components": 1000, "gamma": 0.5, "eta": 1.0})]),
        ("a9a", ("a9a",), [("perceptron", {"gamma": 0.05, "average": False}), ("ogd-hinge", {"gamma": 0.05, "eta": 0.5}),
                           ("fogd-hinge", {"n_components": 1000, "gamma": 0.05, "eta": 0.5})]),
        ("w8a", ("w8a",), [("perceptron", {"gamma": 0.05, "average": False}), ("fogd-hinge", {"n_components": 1000, "gamma": 0.05, "eta": 0.5})]),
        ("letter (26 classes)", ("letter.scale",), [("perceptron", {"gamma": 2.0, "average": False}), ("ogd-hinge", {"gamma": 2.0, "eta": 0.5}),
                                                    ("fogd-hinge", {"n_components": 1000, "gamma": 2.0, "eta": 1.0})]),
        ("casp (regression, targets / 20.999)", ("casp",), [("fogd-l2", {"n_components": 1000, "gamma": 1.0, "eta": 0.5}),
                                                              ("fogd-eps", {"n_components": 1000, "gamma": 1.0, "eta": 0.5})]),
    ]
    # several LIBSVM files are sorted by label (w8a, cod-rna): permutation 0 of seed 0, as the papers
    print(f"\n### Learners on the shared data (one pass in permutation 0 of seed 0; median time of {repeats})\n")
    print("| data | rows | learner | params | mistake rate (%) / RMSE | model size | seconds | µs / example |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    out = []
    for label, names, learners in cases:
        X, y = data.load(*names)
        if label.startswith("casp"):
            X = FeatureScaler(0.0, 1.0).fit(X).transform(X)
            y = y / 20.999
        for name, params in learners:
            med, runs = h.side_by_side({name: lambda: ok.run_online(ok.make_learner(name, n_threads=1, **params), X, y,
                                                                    seed=0)}, repeats, seconds=lambda r: r.seconds)
            s, res = med[name], runs[name][-1]
            err = f"{res.rmse:.4f}" if res.task == "regression" else f"{res.mistake_rate:.2f}"
            print(f"| {label} | {X.shape[0]:,} | {name} | {params} | {err} | {res.model_size:,} | {s:.3f} | {s / X.shape[0] * 1e6:.2f} |")
            out.append({"data": label, "learner": name, "params": params, "error": res.error, "seconds": s})
    return out


def bench_second(data, repeats, eta):
    """SON (second order) against FOGD on the same D frequencies and width, ijcnn1 (permutation 0),
    one thread, timed alternately; medians of ``repeats``."""
    X, y = data.load("ijcnn1", "ijcnn1.t")
    n = X.shape[0]
    print(f"\n### SON against FOGD-hinge, ijcnn1 ({n:,} rows), gamma = 0.5, FOGD eta = {eta}, SON alpha = 0.1, "
          f"eta = 1, permutation 0, one thread, medians of {repeats} alternating runs\n")
    print("| D | m | FOGD µs / example | SON µs / example | SON / FOGD | mistakes FOGD / SON (%) |")
    print("|---:|---:|---:|---:|---:|---:|")
    out = []
    for D, m in ((400, 10), (400, 20), (400, 40), (1000, 20)):
        fns = {"fogd": lambda D=D: fogd_run(X, y, eta, D=D),
               "son": lambda D=D, m=m: ok.run_online(ok.SON(n_components=D, sketch_size=m, gamma=0.5, seed=0,
                                                            n_threads=1), X, y, seed=0, run=0)}
        med, res = h.side_by_side(fns, repeats, seconds=lambda r: r.seconds)
        us = {k: v / n * 1e6 for k, v in med.items()}
        rates = {k: v[-1].mistake_rate for k, v in res.items()}
        print(f"| {D} | {m} | {us['fogd']:.2f} | {us['son']:.2f} | {us['son'] / us['fogd']:.2f} "
              f"| {rates['fogd']:.2f} / {rates['son']:.2f} |")
        out.append({"D": D, "m": m, "us": us, "mistake_rate": rates})
    return out


SECTIONS = {"reader": bench_reader, "fogd": bench_fogd, "sklearn": bench_sklearn, "kernel": bench_kernel,
            "learners": bench_learners, "precision": bench_precision, "second": bench_second}


def main(argv=None):
    ap = h.parser(__doc__)
    ap.add_argument("--eta", type=float, default=1.0, help="FOGD step size (tuned on ijcnn1)")
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ", ".join(SECTIONS))
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64", help="the reader section's dtype")
    args = ap.parse_args(argv)
    data = h.Data(args.data_dir)
    info = h.machine()
    print(h.machine_line(info))
    results = {"machine": info}
    try:
        for name in [n.strip() for n in args.only.split(",")]:
            if name not in SECTIONS:
                raise SystemExit(f"bench: unknown section {name!r}")
            extra = {"fogd": (args.eta,), "sklearn": (args.eta,), "precision": (args.eta,), "second": (args.eta,),
                     "reader": (args.dtype,)}
            results[name] = SECTIONS[name](data, args.repeats, *extra.get(name, ()))
    finally:
        data.close()
    h.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
