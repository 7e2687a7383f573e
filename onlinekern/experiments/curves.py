"""Learning curves of the doubly stochastic family (DSG, UDSG, CDSG; ALGORITHMS.md §3.13-3.15):
the objective on a held-out sample against iterations, and the O(1/t) rate on synthetic data.

Run by experiment files with ``[figure] kind = "dsg-objective"`` or ``"dsg-synthetic"``
(``papers/dsg-objective.toml``, ``papers/dsg-synthetic.toml``)::

    python -m onlinekern.sweep --config dsg-objective --data-dir DIR
    python -m onlinekern.report --config dsg-objective --output-dir docs/figures

dsg-objective (:func:`run_objective`, Li & Poczos 2016 Fig. 1 analogue)
    One pass of DSG, UDSG (G = U = 1) and CDSG (M, sigma = 1) at the papers' defaults
    (``preset="paper"``; the product defaults standardise regression targets) (B = 64,
    F = 32, nu = 1e-5, gamma_i = 1e4 / (i + 1e4), median-heuristic width) over a random
    permutation (seed 0) of casp (squared loss; features and target min-max scaled to [0, 1],
    ``holdout`` random rows held out of training) and of the ijcnn1 training rows (logistic loss;
    ``holdout`` random rows of ijcnn1.t held out).  At ``points`` log-spaced iterations the
    objective on the held-out sample S,

        J_i = (1/|S|) sum_{(x, y) in S} l(f_i(x), y) + (nu/2) sum_j ||A_j||_F^2,

    the training work (sum over examples of the model's m, what UDSG and CDSG save), the blocks m
    and, on ijcnn1, the per-example prediction time of ``timing_rows`` rows with the blocks
    regenerated and stored (``store_omega``; training stores them, bit-identical predictions).

dsg-synthetic (:func:`run_synthetic`, Dai et al. 2014 §7.1, Fig. 4(2))
    y = cos(0.5 pi ||x||) exp(-0.1 pi ||x||) + 0.1 e, x ~ U[-5, 5]^2; Gaussian kernel with
    sigma = 0.1 x median pairwise distance; nu = 1e-6; squared loss; ``preset="paper"`` (raw
    targets: the running-target standardisation of the product defaults would change f).  Scaled down from the paper
    (2^20 samples, B = F = 2^10) to ``iters`` iterations of B = F = 32; step theta/(i + t0).  The
    error E_x |f(x) - f*(x)|^2 over ``n_test`` points of the last iterate f_t and of the average
    f_hat_t = (1/t) sum_i f_i, with a 1/t reference line.
"""
import statistics
import time
from pathlib import Path

import numpy as np

from onlinekern.experiments.data import find_file
from onlinekern.io import load_libsvm
from onlinekern.learners.dsg import CDSG, DSG, UDSG, DSGCore
from onlinekern.losses import get_loss
from onlinekern.preprocessing import FeatureScaler, TargetScaler
from onlinekern.seeding import permutation

__all__ = ["OBJECTIVE", "SYNTHETIC", "describe_objective", "describe_synthetic", "render_objective",
           "render_synthetic", "run_objective", "run_synthetic"]

OBJECTIVE = {"datasets": ["casp", "ijcnn1"], "rows": 0, "holdout": 2000, "points": 25, "timing_rows": 200}
"""Parameters of dsg-objective; ``rows`` > 0 trains on the first ``rows`` rows only."""
SYNTHETIC = {"iters": 4096, "batch": 32, "block": 32, "theta": 50.0, "t0": 50.0, "nu": 1e-6, "points": 40,
             "n_test": 2000}
"""Parameters of dsg-synthetic."""
FILES = {"casp": ["casp"], "ijcnn1": ["ijcnn1", "ijcnn1.t"]}
COLORS = {"DSG": "tab:blue", "UDSG": "tab:orange", "CDSG": "tab:green"}


def _loss_values(loss, f, y):
    """l(f_k, y_k) for every k, by the learners' own loss (onlinekern.losses)."""
    value = get_loss(loss).py_loss
    return np.array([value(float(a), float(b)) for a, b in zip(f, y)])


def _scores(learner, X):
    return learner.predict(X) if learner.task_ == "regression" else learner.decision_function(X)


def _time_rows(core, rows, repeats=3):
    """Median seconds per example of predict_rows (the training path)."""
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        core.predict_rows(rows)
        out.append((time.perf_counter() - t) / rows.shape[0])
    return statistics.median(out)


def _regenerating_twin(learner):
    st = learner.core_.get_state()
    st["store_omega"] = False
    core = DSGCore.__new__(DSGCore)
    core.set_state(st)
    core.set_threads(1)
    return core


def _checkpoints(n, points):
    return set(np.unique(np.round(np.logspace(0, np.log10(n), points)).astype(int)))


def train_curve(learner, X, y, classes, Xs, ys, loss, points=25, timing_rows=None):
    """One pass, batch by batch; the objective, work, m (and timings) at log-spaced iterations."""
    B = learner.batch_size
    n_iter = X.shape[0] // B
    cps = _checkpoints(n_iter, points)
    rec = {"iter": [], "J": [], "reg": [], "work": [], "m": [], "t_regen": [], "t_store": []}
    work, seconds = 0, 0.0
    for i in range(1, n_iter + 1):
        m_before = learner.n_blocks_ if i > 1 else 0
        t = time.perf_counter()
        learner.partial_fit(X[(i - 1) * B:i * B], y[(i - 1) * B:i * B], classes=classes if i == 1 else None)
        seconds += time.perf_counter() - t
        work += B * m_before
        if i in cps:
            reg = 0.5 * learner.nu * float(np.sum(np.asarray(learner.coef_) ** 2))
            rec["J"].append(float(np.mean(_loss_values(loss, _scores(learner, Xs), ys))) + reg)
            rec["reg"].append(reg)
            rec["iter"].append(i)
            rec["work"].append(work)
            rec["m"].append(learner.n_blocks_)
            if timing_rows is not None:
                rec["t_regen"].append(_time_rows(_regenerating_twin(learner), timing_rows))
                learner.core_.set_threads(1)
                rec["t_store"].append(_time_rows(learner.core_, timing_rows))
    rec["seconds"] = seconds
    return rec


def _prepare(data_dir, name, holdout):
    """(X_train, y_train, X_sample, y_sample, loss, classes) as the module docstring says."""
    rng = np.random.default_rng(0)
    if name == "casp":
        X, y = load_libsvm(find_file(data_dir, "casp"))[:2]
        X = FeatureScaler().fit_transform(X.toarray())
        y = TargetScaler().fit_transform(y)
        hold = np.zeros(len(y), dtype=bool)
        hold[rng.choice(len(y), holdout, replace=False)] = True
        Xtr, ytr, Xs, ys = X[~hold], y[~hold], X[hold], y[hold]
        loss, classes = "squared", None
    else:
        Xtr, ytr = load_libsvm(find_file(data_dir, "ijcnn1"))[:2]
        Xt, yt = load_libsvm(find_file(data_dir, "ijcnn1.t"))[:2]
        pick = rng.choice(Xt.shape[0], holdout, replace=False)
        Xtr, ytr, Xs = Xtr.toarray(), np.asarray(ytr), Xt[pick].toarray()
        ys = np.where(yt[pick] > 0, 1.0, -1.0)
        loss, classes = "logistic", np.array([-1.0, 1.0])
    order = permutation(0, 0, Xtr.shape[0])
    return np.ascontiguousarray(Xtr[order]), np.asarray(ytr)[order], np.ascontiguousarray(Xs), ys, loss, classes


def describe_objective(p, data_dir, stream):
    """Print the plan of :func:`run_objective` after checking its files exist; the passes."""
    for name in p["datasets"]:
        paths = [find_file(data_dir, f) for f in FILES[name]]
        print(f"dsg-objective on {name} ({', '.join(paths)}): DSG, UDSG, CDSG, one pass each, "
              f"{p['holdout']} held-out rows, {p['points']} checkpoints"
              + (f", first {p['rows']} rows" if p["rows"] else ""), file=stream)
    return 3 * len(p["datasets"])


def _objective_runs(p, data_dir, name):
    """DSG, UDSG and CDSG's curves on data set ``name`` (one point of :func:`run_objective`)."""
    Xtr, ytr, Xs, ys, loss, classes = _prepare(data_dir, name, p["holdout"])
    if p["rows"]:
        Xtr, ytr = Xtr[:p["rows"]], ytr[:p["rows"]]
    timing = Xs[:p["timing_rows"]] if name == "ijcnn1" and p["timing_rows"] else None
    runs = {}
    for label, cls in (("DSG", DSG), ("UDSG", UDSG), ("CDSG", CDSG)):
        learner = cls(preset="paper", batch_size=cls.paper_defaults["batch_size"], loss=loss,
                      store_omega=True, n_threads=1)         # the batches are walked one by one
        rec = train_curve(learner, Xtr, ytr, classes, Xs, ys, loss, p["points"], timing)
        rec["reused"], rec["gamma"] = learner.n_reused_, learner.gamma_
        runs[label] = rec
    return runs


def run_objective(p, data_dir, stream, point=None):
    """The held-out objective of DSG, UDSG and CDSG on each data set of ``p``; a summary.

    Each data set is one point, computed as ``point(name, compute)`` (default: ``compute()``;
    see :func:`onlinekern.experiments.shrinking.run`)."""
    point = point or (lambda key, compute: compute())
    results = {}
    for name in p["datasets"]:
        runs = point(name, lambda: _objective_runs(p, data_dir, name))
        for label, rec in runs.items():
            ratio = max(r / j for r, j in zip(rec["reg"], rec["J"]))
            print(f"{name:7s} {label:5s} J={rec['J'][-1]:.5f} (reg/J max {ratio:.1e}) m={rec['m'][-1]} "
                  f"reused={rec['reused']} iters={rec['iter'][-1]} work={rec['work'][-1]:.3g} "
                  f"train {rec['seconds']:.1f}s g={rec['gamma']:.4g}", file=stream, flush=True)
            if rec["t_regen"]:
                print(f"        at i={rec['iter'][-1]}: {rec['t_regen'][-1] * 1e6:.0f} µs/example regenerating, "
                      f"{rec['t_store'][-1] * 1e6:.1f} µs/example stored", file=stream)
        results[name] = runs
    return {"args": dict(p), "results": results}


def render_objective(summary, out):
    """dsg_objective_<data>.png (and dsg_cost.png with timings) into folder ``out``; the paths."""
    from matplotlib.figure import Figure
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, runs in summary["results"].items():
        fig = Figure(figsize=(15, 4.2))
        axes = fig.subplots(1, 3)
        for label, rec in runs.items():
            kw = dict(color=COLORS[label], label=f"{label} ({rec['seconds']:.0f} s, m = {rec['m'][-1]})", marker=".")
            axes[0].plot(rec["iter"], rec["J"], **kw)
            axes[1].plot(np.maximum(rec["work"], 1), rec["J"], **kw)
            axes[2].plot(rec["iter"], rec["m"], **kw)
        what = "casp (regression, squared loss, [0, 1]-scaled)" if name == "casp" else f"{name} (binary, logistic loss)"
        axes[0].set(xscale="log", yscale="log", xlabel="iteration i (B = 64 examples each)",
                    ylabel="objective J on held-out sample", title=f"{what}: objective vs iterations")
        axes[1].set(xscale="log", yscale="log", xlabel="training work: sum over examples of blocks m",
                    ylabel="objective J", title="objective vs prediction work")
        axes[2].set(xlabel="iteration i", ylabel="blocks m (features = 64 m)", title="model growth")
        for ax in axes:
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        written.append(str(out / f"dsg_objective_{name}.png"))
        fig.savefig(written[-1], dpi=110)
        if any(rec["t_regen"] for rec in runs.values()):
            fig = Figure(figsize=(7, 4.5))
            ax = fig.subplots()
            for label, rec in runs.items():
                ax.plot(rec["iter"], np.array(rec["t_regen"]) * 1e6, color=COLORS[label], marker=".",
                        label=f"{label}, regenerating E_j")
                ax.plot(rec["iter"], np.array(rec["t_store"]) * 1e6, color=COLORS[label], ls="--",
                        label=f"{label}, store_omega")
            ax.set(yscale="log", xlabel="iteration i", ylabel="prediction time per example (µs, 1 thread)",
                   title=f"{name}: per-example prediction cost vs iterations (F = 32)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
            fig.tight_layout()
            written.append(str(out / "dsg_cost.png"))
            fig.savefig(written[-1], dpi=110)
    return written


def f_true(X):
    """The target of Dai et al.'s synthetic problem, cos(0.5 pi ||x||) exp(-0.1 pi ||x||)."""
    r = np.linalg.norm(X, axis=1)
    return np.cos(0.5 * np.pi * r) * np.exp(-0.1 * np.pi * r)


def describe_synthetic(p, data_dir, stream):
    """Print the plan of :func:`run_synthetic`; one pass."""
    print(f"dsg-synthetic: {p['iters']} iterations of B = {p['batch']}, F = {p['block']} "
          f"({p['iters'] * p['batch']:,} samples), step {p['theta']:g}/(i + {p['t0']:g}), nu = {p['nu']:g}",
          file=stream)
    return 1


def run_synthetic(p, data_dir, stream, point=None):
    """DSG on the 2-D kernel ridge problem; the errors of f_t and f_hat_t at log-spaced t.

    One pass, one point: ``point`` is accepted for the figure interface and not used."""
    T, B, F, theta, t0, nu = p["iters"], p["batch"], p["block"], p["theta"], p["t0"], p["nu"]
    rng = np.random.default_rng(0)
    X = rng.uniform(-5, 5, size=(T * B, 2))
    y = f_true(X) + 0.1 * rng.normal(size=T * B)
    Xt = rng.uniform(-5, 5, size=(p["n_test"], 2))
    ft = f_true(Xt)
    learner = DSG(preset="paper", batch_size=B, block_size=F, nu=nu, theta=theta, t0=t0, loss="squared",
                  median_scale=0.1, store_omega=True, n_threads=1)
    f, fsum = np.zeros(len(Xt)), np.zeros(len(Xt))
    cps = _checkpoints(T, p["points"])
    ts, err, err_avg = [], [], []
    start = time.perf_counter()
    for i in range(1, T + 1):
        learner.partial_fit(X[(i - 1) * B:i * B], y[(i - 1) * B:i * B])
        # f_i on the test points, updated incrementally: decay, then the new block's contribution
        A = np.sqrt(2.0 * learner.gamma_) * (Xt @ learner.core_.block_E(learner.n_blocks_))
        Z = np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(F)
        f = (1.0 - theta / (i + t0) * nu) * f + Z @ learner.coef_[-1]
        fsum += f
        if i in cps:
            exact = _scores(learner, Xt)
            if not np.allclose(f, exact, rtol=1e-8, atol=1e-10):
                raise RuntimeError("incremental test predictions drifted from predict()")
            f = exact
            ts.append(i)
            err.append(float(np.mean((f - ft) ** 2)))
            err_avg.append(float(np.mean((fsum / i - ft) ** 2)))
            print(f"t={i:5d}  ||f_t - f*||^2 = {err[-1]:.3e}   ||fhat_t - f*||^2 = {err_avg[-1]:.3e}   "
                  f"{time.perf_counter() - start:.0f} s", file=stream, flush=True)
    tail = np.array(ts) >= ts[-1] / 16
    slope = float(np.polyfit(np.log(np.array(ts)[tail]), np.log(np.array(err)[tail]), 1)[0])
    slope_avg = float(np.polyfit(np.log(np.array(ts)[tail]), np.log(np.array(err_avg)[tail]), 1)[0])
    print(f"log-log slope over the last 4 octaves: last iterate {slope:.2f}, average {slope_avg:.2f}", file=stream)
    return {"args": dict(p), "t": ts, "err": err, "err_avg": err_avg, "slope": slope, "slope_avg": slope_avg,
            "seconds": time.perf_counter() - start}


def render_synthetic(summary, out):
    """dsg_synthetic_rate.png into folder ``out``; the paths written."""
    from matplotlib.figure import Figure
    p, out = summary["args"], Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ts, err, err_avg = np.array(summary["t"]), summary["err"], summary["err_avg"]
    fig = Figure(figsize=(12, 4.6))
    axes = fig.subplots(1, 2)
    g = np.linspace(-5, 5, 200)
    GX, GY = np.meshgrid(g, g)
    im = axes[0].imshow(f_true(np.c_[GX.ravel(), GY.ravel()]).reshape(GX.shape), extent=(-5, 5, -5, 5),
                        origin="lower", cmap="viridis")
    fig.colorbar(im, ax=axes[0])
    axes[0].set(title=r"$f^*(x) = \cos(0.5\pi\|x\|)\,\exp(-0.1\pi\|x\|)$", xlabel="$x_1$", ylabel="$x_2$")
    ax = axes[1]
    ax.loglog(ts, err, "o-", ms=3, color="tab:blue", label=f"last iterate $f_t$ (slope {summary['slope']:.2f})")
    ax.loglog(ts, err_avg, "s-", ms=3, color="tab:red", label=rf"average $\hat f_t$ (slope {summary['slope_avg']:.2f})")
    tr = ts[ts >= ts[-1] / 64]
    ax.loglog(tr, 2 * err[-1] * ts[-1] / tr, "k:", label="$1/t$ reference")
    ax.set(xlabel="iteration t", ylabel=f"$E_x |f(x) - f^*(x)|^2$  ({p['n_test']:,} test points)",
           title=f"DSG, kernel ridge regression on the 2-D synthetic data\n"
                 f"B = F = {p['batch']}, $\\gamma_t$ = {p['theta']:g}/(t + {p['t0']:g}), $\\nu$ = {p['nu']:g}, "
                 f"{p['iters'] * p['batch']:,} samples")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = str(out / "dsg_synthetic_rate.png")
    fig.savefig(path, dpi=110)
    return [path]
