"""Figures and measurements for the doubly stochastic family (DSG, UDSG, CDSG; ALGORITHMS.md
§3.13-3.15).  Every figure is a PNG written to ``--out`` (default docs/figures/).

    python tools/dsg_curves.py objective   # Li & Poczos 2016 Fig. 1 analogue on casp and ijcnn1
    python tools/dsg_curves.py synthetic   # Dai et al. 2014 Fig. 4(2): O(1/t) on 2-D kernel ridge
    python tools/dsg_curves.py threads     # 1 vs 2 threads per prediction (the parallel threshold)
    python tools/dsg_curves.py all

objective
    One pass of DSG, UDSG (G = U = 1) and CDSG (M, sigma = 1) with the spec defaults (B = 64,
    F = 32, nu = 1e-5, gamma_i = 1e4 / (i + 1e4), median-heuristic width) over a random
    permutation (seed 0) of

    * casp (regression, squared loss): features and target min-max scaled to [0, 1]; 2,000 random
      rows are held out of training;
    * ijcnn1 (binary, logistic loss): the 49,990 training rows; 2,000 random rows of ijcnn1.t
      held out.

    The objective, evaluated after iteration i on the fixed held-out sample S (|S| = 2,000) at 25
    log-spaced iterations, is

        J_i = (1/|S|) sum_{(x, y) in S} l(f_i(x), y) + (nu/2) sum_j ||A_j||_F^2,

    i.e. the regularised risk of the random-feature model the blocks form (f_i lies outside the
    RKHS, Dai et al. §3, so the coefficient norm is the norm the model carries; with nu = 1e-5 it
    is below 1e-3 of J in these runs and the printout reports the exact ratio).  Each figure has
    three panels: J against iterations, J against training work (the block evaluations spent on
    predictions, sum over examples of the model's m, which is what UDSG and CDSG save), and m
    against iterations.  ``dsg_cost.png`` shows the measured per-example prediction time (regenerating
    the blocks, and with ``store_omega``) against iterations on ijcnn1.  Training runs with
    ``store_omega=True`` for speed: its predictions are bit-identical to regeneration (tested).

synthetic
    Dai et al. 2014, §7.1: y = cos(0.5 pi ||x||) exp(-0.1 pi ||x||) + 0.1 e, x ~ U[-5, 5]^2,
    e ~ N(0, 1); Gaussian kernel with sigma = 0.1 x median pairwise distance (median_scale 0.1);
    nu = 1e-6; squared loss (kernel ridge regression).  Scaled down from the paper (2^20 samples,
    B = F = 2^10) to T = 4096 iterations of B = F = 32 (131,072 samples) so it runs in minutes on
    two cores; the step is gamma_i = 50 / (i + 50) (the paper gives no values; theta/t decay is
    what its O(1/t) theorem assumes).  Plotted: E_x |f(x) - f_true(x)|^2 over 2,000 test points for
    the last iterate f_t and the average solution f_hat_t = (1/t) sum_i f_i (the paper's curve),
    with a 1/t reference line.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import onlinekern as ok  # noqa: E402
from onlinekern.learners.dsg import DSGCore  # noqa: E402
from onlinekern.preprocessing import FeatureScaler, TargetScaler  # noqa: E402
from onlinekern.seeding import permutation  # noqa: E402

COLORS = {"DSG": "tab:blue", "UDSG": "tab:orange", "CDSG": "tab:green"}


def load(data_dir, name):
    """A LIBSVM .xz file of ../shared/data as (CSR X, y)."""
    return ok.load_libsvm(Path(data_dir) / f"{name}.xz")[:2]


def loss_values(loss, f, y):
    if loss == "squared":
        return 0.5 * (f - y) ** 2
    z = y * f                                   # logistic, y in {-1, +1}
    return np.log1p(np.exp(-np.abs(z))) + np.maximum(0.0, -z)


def scores(learner, X):
    """f(x): a regressor's ``predict`` (it has no ``decision_function``), a classifier's decision values."""
    return learner.predict(X) if learner.task_ == "regression" else learner.decision_function(X)


def objective(learner, Xs, ys, loss):
    f = scores(learner, Xs)
    data = float(np.mean(loss_values(loss, f, ys)))
    reg = 0.5 * learner.nu * float(np.sum(np.asarray(learner.coef_) ** 2))
    return data + reg, reg


def regenerating_twin(learner):
    """A core with the same model that regenerates its blocks (timing only)."""
    st = learner.core_.get_state()
    st["store_omega"] = False
    core = DSGCore.__new__(DSGCore)
    core.set_state(st)
    core.set_threads(1)
    return core


def train_curve(learner, X, y, classes, Xs, ys, loss, n_points=25, timing_rows=None):
    """One pass, batch by batch; the objective and timings at log-spaced iterations."""
    B = learner.batch_size
    n_iter = X.shape[0] // B
    cps = set(np.unique(np.round(np.logspace(0, np.log10(n_iter), n_points)).astype(int)))
    rec = {"iter": [], "J": [], "reg": [], "work": [], "m": [], "t_regen": [], "t_store": []}
    work = 0
    seconds = 0.0
    for i in range(1, n_iter + 1):
        m_before = learner.n_blocks_ if i > 1 else 0
        t = time.perf_counter()
        learner.partial_fit(X[(i - 1) * B:i * B], y[(i - 1) * B:i * B], classes=classes if i == 1 else None)
        seconds += time.perf_counter() - t
        work += B * m_before
        if i in cps:
            J, reg = objective(learner, Xs, ys, loss)
            rec["iter"].append(i)
            rec["J"].append(J)
            rec["reg"].append(reg)
            rec["work"].append(work)
            rec["m"].append(learner.n_blocks_)
            if timing_rows is not None:
                core = regenerating_twin(learner)
                rec["t_regen"].append(time_rows(core, timing_rows))
                learner.core_.set_threads(1)
                rec["t_store"].append(time_rows(learner.core_, timing_rows))
    rec["seconds"] = seconds
    return rec


def time_rows(core, rows, repeats=3):
    """Median seconds per example of predict_row (the training path) over ``rows``."""
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        core.predict_rows(rows)
        out.append((time.perf_counter() - t) / rows.shape[0])
    return statistics.median(out)


def prepare(data_dir, name):
    """(X_train, y_train, X_sample, y_sample, loss, classes) as described in the module docstring."""
    rng = np.random.default_rng(0)
    if name == "casp":
        X, y = load(data_dir, "casp")
        X = FeatureScaler().fit_transform(X.toarray())
        y = TargetScaler().fit_transform(y)
        hold = np.zeros(len(y), dtype=bool)
        hold[rng.choice(len(y), 2000, replace=False)] = True
        Xtr, ytr, Xs, ys = X[~hold], y[~hold], X[hold], y[hold]
        loss, classes = "squared", None
    else:
        Xtr, ytr = load(data_dir, "ijcnn1")
        Xt, yt = load(data_dir, "ijcnn1.t")
        pick = rng.choice(Xt.shape[0], 2000, replace=False)
        Xs, ys = Xt[pick], yt[pick]
        Xtr, ytr = Xtr.toarray(), np.asarray(ytr)
        Xs = Xs.toarray()
        loss, classes = "logistic", np.array([-1.0, 1.0])
        ys = np.where(ys > 0, 1.0, -1.0)
    order = permutation(0, 0, Xtr.shape[0])
    return np.ascontiguousarray(Xtr[order]), np.asarray(ytr)[order], np.ascontiguousarray(Xs), ys, loss, classes


def cmd_objective(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(args.out)
    results = {}
    for name in ("casp", "ijcnn1"):
        Xtr, ytr, Xs, ys, loss, classes = prepare(args.data, name)
        if args.rows:
            Xtr, ytr = Xtr[:args.rows], ytr[:args.rows]
        timing = Xs[:200] if name == "ijcnn1" else None
        runs = {}
        for label, cls in (("DSG", ok.DSG), ("UDSG", ok.UDSG), ("CDSG", ok.CDSG)):
            learner = cls(loss=loss, store_omega=True, n_threads=1)
            rec = train_curve(learner, Xtr, ytr, classes, Xs, ys, loss, timing_rows=timing)
            rec["reused"] = learner.n_reused_
            rec["gamma"] = learner.gamma_
            runs[label] = rec
            print(f"{name:7s} {label:5s} J={rec['J'][-1]:.5f} (reg/J max {max(r / j for r, j in zip(rec['reg'], rec['J'])):.1e}) "
                  f"m={rec['m'][-1]} reused={rec['reused']} iters={rec['iter'][-1]} work={rec['work'][-1]:.3g} "
                  f"train {rec['seconds']:.1f}s g={rec['gamma']:.4g}", flush=True)
        results[name] = runs
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
        for label, rec in runs.items():
            kw = dict(color=COLORS[label], label=f"{label} ({rec['seconds']:.0f} s, m = {rec['m'][-1]})", marker=".")
            axes[0].plot(rec["iter"], rec["J"], **kw)
            axes[1].plot(np.maximum(rec["work"], 1), rec["J"], **kw)
            axes[2].plot(rec["iter"], rec["m"], **kw)
        what = ("casp (regression, squared loss, [0, 1]-scaled)" if name == "casp"
                else "ijcnn1 (binary, logistic loss)")
        axes[0].set(xscale="log", yscale="log", xlabel="iteration i (B = 64 examples each)",
                    ylabel="objective J on held-out sample", title=f"{what}: objective vs iterations")
        axes[1].set(xscale="log", yscale="log", xlabel="training work: sum over examples of blocks m",
                    ylabel="objective J", title="objective vs prediction work")
        axes[2].set(xlabel="iteration i", ylabel="blocks m (features = 64 m)", title="model growth")
        for ax in axes:
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / f"dsg_objective_{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print("wrote", path)
    runs = results["ijcnn1"]
    fig, ax = plt.subplots(1, 1, figsize=(7, 4.5))
    for label, rec in runs.items():
        ax.plot(rec["iter"], np.array(rec["t_regen"]) * 1e6, color=COLORS[label], marker=".",
                label=f"{label}, regenerating E_j")
        ax.plot(rec["iter"], np.array(rec["t_store"]) * 1e6, color=COLORS[label], ls="--",
                label=f"{label}, store_omega")
    ax.set(yscale="log", xlabel="iteration i", ylabel="prediction time per example (µs, 1 thread)",
           title="ijcnn1: per-example prediction cost vs iterations (d = 22, F = 32)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "dsg_cost.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)
    for label, rec in runs.items():
        i = rec["iter"][-1]
        print(f"ijcnn1 {label:5s} at i={i}: m={rec['m'][-1]}, {rec['t_regen'][-1] * 1e6:.0f} µs/example regenerating, "
              f"{rec['t_store'][-1] * 1e6:.1f} µs/example stored; per block "
              f"{rec['t_regen'][-1] / rec['m'][-1] * 1e6:.2f} / {rec['t_store'][-1] / rec['m'][-1] * 1e6:.3f} µs")


def f_true(X):
    r = np.linalg.norm(X, axis=1)
    return np.cos(0.5 * np.pi * r) * np.exp(-0.1 * np.pi * r)


def cmd_synthetic(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    T, B, F, theta, t0, nu = args.iters, args.batch, args.block, args.theta, args.t0, 1e-6
    rng = np.random.default_rng(0)
    X = rng.uniform(-5, 5, size=(T * B, 2))
    y = f_true(X) + 0.1 * rng.normal(size=T * B)
    Xt = rng.uniform(-5, 5, size=(2000, 2))
    ft = f_true(Xt)
    learner = ok.DSG(batch_size=B, block_size=F, nu=nu, theta=theta, t0=t0, loss="squared", median_scale=0.1,
                     store_omega=True, n_threads=1)
    f = np.zeros(len(Xt))
    fsum = np.zeros(len(Xt))
    cps = set(np.unique(np.round(np.logspace(0, np.log10(T), 40)).astype(int)))
    ts, err, err_avg = [], [], []
    start = time.perf_counter()
    for i in range(1, T + 1):
        learner.partial_fit(X[(i - 1) * B:i * B], y[(i - 1) * B:i * B])
        # f_i on the test points, updated incrementally: decay, then the new block's contribution
        g = learner.gamma_
        E = learner.core_.block_E(learner.n_blocks_)
        A = np.sqrt(2.0 * g) * (Xt @ E)
        Z = np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(F)
        f = (1.0 - theta / (i + t0) * nu) * f + Z @ learner.coef_[-1]
        fsum += f
        if i in cps:
            exact = scores(learner, Xt)
            assert np.allclose(f, exact, rtol=1e-8, atol=1e-10), "incremental test predictions drifted"
            f = exact
            ts.append(i)
            err.append(float(np.mean((f - ft) ** 2)))
            err_avg.append(float(np.mean((fsum / i - ft) ** 2)))
            print(f"t={i:5d}  ||f_t - f*||^2 = {err[-1]:.3e}   ||fhat_t - f*||^2 = {err_avg[-1]:.3e}   "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    ts = np.array(ts)
    tail = ts >= ts[-1] / 16
    slope = np.polyfit(np.log(ts[tail]), np.log(np.array(err)[tail]), 1)[0]
    slope_avg = np.polyfit(np.log(ts[tail]), np.log(np.array(err_avg)[tail]), 1)[0]
    print(f"log-log slope over the last 4 octaves: last iterate {slope:.2f}, average {slope_avg:.2f}")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    g = np.linspace(-5, 5, 200)
    GX, GY = np.meshgrid(g, g)
    im = axes[0].imshow(f_true(np.c_[GX.ravel(), GY.ravel()]).reshape(GX.shape), extent=(-5, 5, -5, 5),
                        origin="lower", cmap="viridis")
    fig.colorbar(im, ax=axes[0])
    axes[0].set(title=r"$f^*(x) = \cos(0.5\pi\|x\|)\,\exp(-0.1\pi\|x\|)$", xlabel="$x_1$", ylabel="$x_2$")
    ax = axes[1]
    ax.loglog(ts, err, "o-", ms=3, color="tab:blue", label=f"last iterate $f_t$ (slope {slope:.2f})")
    ax.loglog(ts, err_avg, "s-", ms=3, color="tab:red", label=rf"average $\hat f_t$ (slope {slope_avg:.2f})")
    tr = ts[ts >= ts[-1] / 64]
    ax.loglog(tr, 2 * err[-1] * ts[-1] / tr, "k:", label="$1/t$ reference")
    ax.set(xlabel="iteration t", ylabel="$E_x |f(x) - f^*(x)|^2$  (2,000 test points)",
           title=f"DSG, kernel ridge regression on the 2-D synthetic data\n"
                 f"B = F = {B}, $\\gamma_t$ = {theta:g}/(t + {t0:g}), $\\nu$ = 1e-6, {T * B:,} samples")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(args.out) / "dsg_synthetic_rate.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path, f"({time.perf_counter() - start:.0f} s)")


def cmd_threads(args):
    """Per-example prediction with 1 thread and with 2 threads forced parallel, by work size."""
    rng = np.random.default_rng(0)
    print("| mode | d | F | blocks m | work units | 1 thread (µs) | 2 threads (µs) | speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for store in (False, True):
        for d, F in ((8, 32), (22, 32)):
            for m in (2, 4, 8, 16, 32, 64, 128):
                X = rng.normal(size=(4 * m, d))
                learner = ok.DSG(batch_size=4, block_size=F, gamma=0.1, store_omega=store, n_threads=1)
                learner.fit(X, np.where(X[:, 0] > 0, 1, 0))
                Q = rng.normal(size=(100, d))
                core = learner.core_
                core.par_threshold = 0
                t1s, t2s = [], []
                for _ in range(args.repeats):       # alternate: the machine is shared
                    core.set_threads(1)
                    t1s.append(time_rows(core, Q, 1))
                    core.set_threads(2)
                    t2s.append(time_rows(core, Q, 1))
                t1, t2 = statistics.median(t1s), statistics.median(t2s)
                print(f"| {'stored' if store else 'regenerating'} | {d} | {F} | {m} | {core.work_units(d):.0f} | "
                      f"{t1 * 1e6:.1f} | {t2 * 1e6:.1f} | {t1 / t2:.2f} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("objective", "synthetic", "threads", "all"))
    ap.add_argument("--out", default=str(REPO / "docs" / "figures"), help="directory for the PNGs")
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"), help="the shared data folder")
    ap.add_argument("--rows", type=int, default=0, help="train on the first ROWS rows only (0: all)")
    ap.add_argument("--iters", type=int, default=4096, help="synthetic: iterations T")
    ap.add_argument("--batch", type=int, default=32, help="synthetic: batch size B")
    ap.add_argument("--block", type=int, default=32, help="synthetic: block size F")
    ap.add_argument("--theta", type=float, default=50.0, help="synthetic: theta of theta/(i + t0)")
    ap.add_argument("--t0", type=float, default=50.0, help="synthetic: t0 of theta/(i + t0)")
    ap.add_argument("--repeats", type=int, default=7, help="threads: repeats per size")
    args = ap.parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    if args.what in ("objective", "all"):
        cmd_objective(args)
    if args.what in ("synthetic", "all"):
        cmd_synthetic(args)
    if args.what in ("threads", "all"):
        cmd_threads(args)


if __name__ == "__main__":
    main()
