"""The synthetic experiment of Livni, Carmon & Globerson, ICML 2017, Section 6 / Figure 1:
Shrinking Gradient against fixed random features and doubly stochastic gradients at equal
feature budgets, squared loss against the input dimension D = 550, 600, ..., 800 with T = 200.

Run by an experiment file with ``[figure] kind = "shrinking"`` (``papers/shrinking-fig1.toml``)::

    python -m onlinekern.sweep --config shrinking-fig1 --out results/shrinking_coordinate.json
    python -m onlinekern.report --config shrinking-fig1 --output-dir docs/figures

The file's ``[figure]`` keys are the names of :data:`PARAMS` (``--param NAME=VALUE`` overrides
one).  What the paper states and what is chosen here where it is silent:

* Data (:func:`make_data`): x in R^D standard Gaussian with negative values clipped to zero
  (``data = "sparse-symmetric"``: zeroed at random instead, zero mean); the target a is a sparse
  combination of ``support`` training points with N(0, 1) weights (Fourier setting: of
  k(x_j, .)); x is divided by sqrt(D/2) (E||x||^2 = 1), labels by max |y| over the training set
  (Y = [-1, 1], Section 2); ``n_test`` fresh test points labelled by the same a.
* Features: "a random feature w corresponds to a uniform choice of coordinate w in x",
  psi(x; w) = sqrt(D) x_w (``setting = "coordinate"``, the paper); ``"fourier"`` repeats the
  comparison with the Gaussian kernel's random Fourier features (FOGD with squared loss as
  Fixed-Random, onlinekern's ``dsg-l2`` with batch size 1 as DSG).
* Methods, one pass each: Fixed-Random (r features drawn once; OGD on psi(x; W)/sqrt(r)),
  Doubly-Stoch (Dai et al. 2014: every point draws k new features; a minimal implementation in
  the coordinate setting, since onlinekern's DSG draws Fourier blocks only), Shrink-Grad
  (:class:`onlinekern.ShrinkingGradient`, m samples per prediction), and as a reference without
  budget the same algorithm with exact kernel sums (kernel OGD).
* Equal budgets (:func:`budgets`): ``budget_rule = "evaluations"`` counts feature evaluations
  during training (r T, k T (T + 1)/2, 2 m T: r = round(k (T + 1)/2), m = round(r/2));
  ``"per-point"`` r = k = m; ``"samples"`` counts features drawn (r = k T, m = k).
* Step sizes: for each method and D the step (``etas``) and schedule (constant, eta/sqrt(t),
  eta/t; Shrinking Gradient: ``sg_schedules``, and B_n from ``norm_bounds``) are chosen on
  ``tune_seeds`` separate data sets by ``tune_on``; results are means over ``seeds`` fresh ones.
* Loss: the primary column is the regret's loss of eq. (6)-(7), (1/T) sum_t (f_t(x_t) - y_t)^2
  with f_t(x_t) exact (Shrinking Gradient: sum_i alpha_i k(x_i, x_t), recorded before each step,
  never fed back); also the online MSE of the predictions made (Shrinking Gradient: its estimate
  E_t) and the test MSE of the final model, Shrinking Gradient estimating a test point with
  ``test_samples`` samples (Theorem 1, part 3) and, as a second column, with the training m.

:func:`run` returns a JSON-able summary; :func:`render` draws ``shrinking_fig1_<tag>.png`` (loss
vs D) and ``shrinking_budget_<tag>.png`` (loss vs budget at D = ``budget_dim``).
"""
import math
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from onlinekern.learners.shrinking import ShrinkingGradient
from onlinekern.protocol import run_online
from onlinekern.registry import make_learner

__all__ = ["PARAMS", "CHOICES", "budgets", "describe", "make_data", "render", "run", "shrinking",
           "step_size", "tag"]

PARAMS = {"setting": "coordinate", "data": "clipped", "dims": [550, 600, 650, 700, 750, 800], "T": 200,
          "n_test": 1000, "support": 10, "k": 1, "budget_rule": "evaluations", "budgets": [1, 2, 4, 8],
          "budget_dim": 550,
          "etas": [0.00390625, 0.0078125, 0.015625, 0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
          "norm_bounds": [0.015625, 0.0625, 0.25, 1.0], "sg_schedules": ["const", "sqrt", "inv"],
          "test_samples": 10000, "tune_on": "regret", "gamma": 0.5, "seeds": 10, "tune_seeds": 3}
"""The parameters of the experiment and their defaults (the paper's setting, the choices above)."""
CHOICES = {"setting": ("coordinate", "fourier"), "data": ("clipped", "sparse-symmetric"),
           "budget_rule": ("evaluations", "per-point", "samples"), "tune_on": ("regret", "online", "test"),
           "sg_schedules": ("const", "sqrt", "inv")}
"""The values a string parameter (or each entry of a list of strings) may take."""

SCHEDULES = ("const", "sqrt", "inv")
METHODS = ("Fixed-Random", "Doubly-Stoch", "Shrink-Grad")
EXACT = "Kernel-OGD (exact)"       # reference: Shrinking Gradient with exact kernel sums, no budget


def step_size(eta, schedule, t):
    """The step at example t (from 1): ``eta`` ("const"), eta/sqrt(t) ("sqrt") or eta/t ("inv")."""
    if schedule == "const":
        return eta
    if schedule == "sqrt":
        return eta / math.sqrt(t)
    return eta / t


# ---- data ----------------------------------------------------------------------------------------

def make_data(D, T, n_test, support, setting, gamma, seed, data="clipped"):
    """Training and test sets of Section 6 (see the module docstring for the unstated choices)."""
    rng = np.random.default_rng([seed, D, 0x5EC6])
    Z = rng.standard_normal((T + n_test, D))
    if data == "clipped":                     # the paper: negative values clipped to zero
        X = np.maximum(Z, 0.0)
    else:                                     # ext: the same sparsity with zero mean
        X = np.where(rng.random(Z.shape) < 0.5, Z, 0.0)
    X /= np.sqrt(D / 2.0)
    J = rng.choice(T, size=support, replace=False)
    c = rng.standard_normal(support)
    if setting == "coordinate":
        a = c @ X[J]
        y = X @ a
    else:
        sq = np.sum(X ** 2, 1)
        K = np.exp(-gamma * np.maximum(sq[:, None] + sq[J][None, :] - 2 * X @ X[J].T, 0.0))
        y = K @ c
    y = y / np.max(np.abs(y[:T]))
    return X[:T], y[:T], X[T:], y[T:]


# ---- budgets -------------------------------------------------------------------------------------

def budgets(k, T, rule):
    """(r, k, m) with equal training budgets; and the evaluation counts of each method."""
    if rule == "evaluations":
        b = k * (T + 1) / 2.0
        r, m = max(1, round(b)), max(1, round(b / 2.0))
    elif rule == "per-point":
        r, m = k, k
    else:
        r, m = k * T, k
    counts = {"Fixed-Random": r * T, "Doubly-Stoch": k * T * (T + 1) // 2, "Shrink-Grad": 2 * m * T}
    samples = {"Fixed-Random": r, "Doubly-Stoch": k * T, "Shrink-Grad": m * T}
    return {"r": r, "k": k, "m": m, "evaluations": counts, "samples": samples}


# ---- coordinate features: the baselines ---------------------------------------------------------

def fixed_random_coord(X, y, Xt, r, eta, schedule, rng):
    """OGD on z(x) = sqrt(D) x_W / sqrt(r) with r coordinates W drawn once (with replacement)."""
    D = X.shape[1]
    W = rng.integers(D, size=r)
    Z = np.sqrt(D) * X[:, W] / np.sqrt(r)
    theta = np.zeros(r)
    f = np.zeros(len(y))
    for t in range(len(y)):
        f[t] = Z[t] @ theta
        theta -= step_size(eta, schedule, t + 1) * (f[t] - y[t]) * Z[t]
    return f, (np.sqrt(D) * Xt[:, W] / np.sqrt(r)) @ theta


def dsg_coord(X, y, Xt, k, eta, schedule, rng, nu=1e-5):
    """Dai et al. 2014 with coordinate features: f = sum_j beta_j psi(x; w_j); every example draws
    k new coordinates, beta_new = -gamma_t (f - y) psi(x_t; w)/k; old beta shrink by 1 - gamma_t nu."""
    T, D = X.shape
    W = np.zeros(k * T, dtype=np.int64)
    beta = np.zeros(k * T)
    f = np.zeros(T)
    sd = np.sqrt(D)
    for t in range(T):
        n = k * t
        f[t] = sd * X[t, W[:n]] @ beta[:n]
        g = step_size(eta, schedule, t + 1)
        beta[:n] *= 1.0 - g * nu
        w = rng.integers(D, size=k)
        W[n:n + k] = w
        beta[n:n + k] = -g * (f[t] - y[t]) * sd * X[t, w] / k
    return f, sd * Xt[:, W] @ beta


# ---- Fourier features: onlinekern's FOGD and DSG ---------------------------------------------------

def fixed_random_fourier(X, y, Xt, r, eta, schedule, seed, gamma):
    """onlinekern's FOGD (squared loss, r frequencies, constant step): (online scores, test predictions)."""
    L = make_learner("fogd-l2", n_components=r, gamma=gamma, eta=eta, seed=seed, n_threads=1,
                     preset="paper")
    res = run_online(L, X, y, keep_scores=True)
    return np.asarray(res.scores).ravel(), L.predict(Xt)


def dsg_fourier(X, y, Xt, k, eta, schedule, seed, gamma):
    """onlinekern's DSG, batch size 1, block size k: gamma_i = theta/(i + t0); the schedules map to
    t0 = 1e9 (constant), and t0 = 0 (eta/t); eta/sqrt(t) is not available there (skipped)."""
    t0 = 1e9 if schedule == "const" else 0.0
    L = make_learner("dsg-l2", preset="paper", batch_size=1, block_size=k, gamma=gamma, theta=eta * (1 + t0), t0=t0,
                     nu=1e-5, seed=seed, n_threads=1)
    res = run_online(L, X, y, keep_scores=True)
    return np.asarray(res.scores).ravel(), L.predict(Xt)


# ---- Shrinking Gradient --------------------------------------------------------------------------

def shrinking(X, y, Xt, m, eta, schedule, norm_bound, setting, seed, gamma, m_test):
    """onlinekern.ShrinkingGradient, one pass, one example at a time (the same keys and states as
    one ``run_online`` call): before each step the exact <f_t, Phi(x_t)> is recorded, and a
    decaying schedule sets the core's step (the learner itself has the constant step of
    Theorem 1).  Test points: EST with
    the training m (``predict``) and, if m_test > 0, EST with m_test samples (Theorem 1,
    part 3: a test point is estimated to accuracy eps_0 with its own m = O(B^4 T log(1/delta) /
    eps_0^2), independent of the training budget); keys continue the model's post-training
    counter 2^63 + j, so the two test columns use disjoint draws."""
    L = ShrinkingGradient(preset="paper", eta=eta, n_samples=m, norm_bound=norm_bound, feature=setting, gamma=gamma,
                             seed=seed, n_threads=1)
    T = len(y)
    f = np.zeros(T)            # E_t, the estimate the algorithm predicts with and learns from
    fx = np.zeros(T)           # <f_t, Phi(x_t)> exactly: the argument of the loss l_t(f_t) of eq. (6)
    for t in range(T):
        if t:
            fx[t] = L.core_.exact_py(X[t])[0]          # reads the model only
            L.core_.eta = step_size(eta, schedule, t + 1)
        f[t] = np.asarray(run_online(L, X[t:t + 1], y[t:t + 1], keep_scores=True, reset=t == 0).scores).ravel()[0]
    ft_m = L.predict(Xt)
    if m_test > 0:
        j0 = 2 ** 63 + len(Xt)
        ft = np.array([L.estimate(x, m_test, key=j0 + j)[0] for j, x in enumerate(Xt)])
    else:
        ft = ft_m
    # a step adds x_t unless it shrinks (a zero coefficient has probability 0)
    info = {"shrinks": len(y) - L.model_size_, "alpha_norm1": float(L.core_.alpha_norm1[0])}
    return f, fx, ft, ft_m, info


# ---- one run -------------------------------------------------------------------------------------

def run_method(method, data, bud, eta, schedule, seed, args, with_test=True):
    """One pass of ``method``: [regret-loss MSE (exact f_t(x_t)), online MSE of the predictions
    made, test MSE] and extras (Shrinking Gradient: the test MSE
    with the training m, the number of shrinks and ||alpha||_1 at the end).  ``schedule`` is the
    step schedule, for Shrinking Gradient the pair (schedule, B_n)."""
    X, y, Xt, yt = data
    if not with_test and args.tune_on != "test":     # tuning on an online loss: no test points
        Xt, yt = Xt[:1], yt[:1]
    rng = np.random.default_rng([seed, 0xB05E])
    extra = {}
    fx = None
    if method == EXACT:
        L = ShrinkingGradient(preset="paper", eta=eta, exact_predict=True, norm_bound=1e300, feature=args.setting,
                                 gamma=args.gamma, n_threads=1)
        f = np.asarray(run_online(L, X, y, keep_scores=True).scores).ravel()
        ft = L.predict(Xt)
    elif method == "Shrink-Grad":
        sched, norm_bound = schedule
        f, fx, ft, ft_m, extra = shrinking(X, y, Xt, bud["m"], eta, sched, norm_bound, args.setting, seed, args.gamma,
                                       args.test_samples if with_test or args.tune_on == "test" else 0)
        extra["test_mse_train_m"] = float(np.mean((ft_m - yt) ** 2))
    elif method == "Fixed-Random":
        if args.setting == "coordinate":
            f, ft = fixed_random_coord(X, y, Xt, bud["r"], eta, schedule, rng)
        else:
            f, ft = fixed_random_fourier(X, y, Xt, bud["r"], eta, schedule, seed, args.gamma)
    else:
        if args.setting == "coordinate":
            f, ft = dsg_coord(X, y, Xt, bud["k"], eta, schedule, rng)
        else:
            f, ft = dsg_fourier(X, y, Xt, bud["k"], eta, schedule, seed, args.gamma)
    # the baselines' f_t(x_t) is exact already (their features are evaluated, not estimated)
    regret = float(np.mean(((f if fx is None else fx) - y) ** 2))
    online = float(np.mean((f - y) ** 2))
    test = float(np.mean((ft - yt) ** 2))
    return [v if np.isfinite(v) else math.inf for v in (regret, online, test)], extra


def schedules_for(method, args):
    """The second tuned hyper-parameter: the step schedule; for Shrinking Gradient the pairs
    (schedule, B_n) (Section 6: "for all methods we explored different initial step sizes and
    schedules"; B_n sets its shrink threshold 16 B_n)."""
    if method == "Shrink-Grad":
        return tuple((sc, b) for sc in args.sg_schedules for b in args.norm_bounds)
    if method == EXACT:
        return ("const",)
    if args.setting == "fourier" and method == "Fixed-Random":
        return ("const",)                 # FOGD has a constant step
    if args.setting == "fourier" and method == "Doubly-Stoch":
        return ("const", "inv")
    return SCHEDULES


def evaluate(D, bud, args):
    """Tune (eta, schedule) per method on the tuning seeds, then average over the seeds."""
    tune_data = [make_data(D, args.T, args.n_test, args.support, args.setting, args.gamma, 10_000 + s, args.data)
                 for s in range(args.tune_seeds)]
    eval_data = [make_data(D, args.T, args.n_test, args.support, args.setting, args.gamma, s, args.data)
                 for s in range(args.seeds)]
    out = {}
    crit = ("regret", "online", "test").index(args.tune_on)
    for method in METHODS + (EXACT,):
        best = None
        for schedule in schedules_for(method, args):
            for eta in args.etas:
                with np.errstate(all="ignore"):
                    loss = np.mean([run_method(method, d, bud, eta, schedule, 10_000 + s, args, False)[0][crit]
                                    for s, d in enumerate(tune_data)])
                if best is None or loss < best[0]:
                    best = (loss, eta, schedule)
        _, eta, schedule = best
        with np.errstate(all="ignore"):
            got = [run_method(method, d, bud, eta, schedule, s, args) for s, d in enumerate(eval_data)]
        runs = np.array([g[0] for g in got])
        n = len(runs)
        r = {"eta": eta, "runs": runs.tolist()}
        for j, key in enumerate(("regret", "online", "test")):
            r[f"{key}_mse"] = float(runs[:, j].mean())
            r[f"{key}_se"] = float(runs[:, j].std(ddof=1) / np.sqrt(n))
        if method == "Shrink-Grad":
            r["schedule"], r["norm_bound"] = schedule
            tm = np.array([g[1]["test_mse_train_m"] for g in got])
            r["test_mse_train_m"], r["test_se_train_m"] = float(tm.mean()), float(tm.std(ddof=1) / np.sqrt(n))
            r["shrinks"] = [g[1]["shrinks"] for g in got]
            r["alpha_norm1"] = [g[1]["alpha_norm1"] for g in got]
        else:
            r["schedule"] = schedule
        out[method] = r
    # paired over the evaluation data sets (every method sees the same ones): Shrink-Grad - baseline
    sg = np.array(out["Shrink-Grad"]["runs"])
    out["paired"] = {}
    for base in ("Fixed-Random", "Doubly-Stoch"):
        diff = sg - np.array(out[base]["runs"])
        se = diff.std(axis=0, ddof=1) / np.sqrt(len(diff))
        out["paired"][base] = {key: {"mean": float(diff[:, j].mean()), "se": float(se[j]),
                                     "sg_lower": int(np.sum(diff[:, j] < 0)), "n": len(diff)}
                               for j, key in enumerate(("regret", "online", "test"))}
    zero = np.mean([np.mean(d[1] ** 2) for d in eval_data])
    zero_test = np.mean([np.mean(d[3] ** 2) for d in eval_data])
    out["predict-zero"] = {"regret_mse": float(zero), "online_mse": float(zero), "test_mse": float(zero_test)}
    return out


def hyper(r):
    """The chosen schedule of a method's result (and B_n for Shrinking Gradient), for printing."""
    return f"{r['schedule']}, B_n {r['norm_bound']:g}" if "norm_bound" in r else r["schedule"]


# ---- plots ---------------------------------------------------------------------------------------

COLORS = {"Fixed-Random": "tab:blue", "Doubly-Stoch": "tab:orange", "Shrink-Grad": "tab:green"}


def plot(xs, results, xlabel, title, path, logx=False):
    """Three panels (loss of f_t, online MSE, test MSE) of every method against ``xs``, to ``path``."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(16, 4.4))
    axes = fig.subplots(1, 3)
    for ax, key, name in ((axes[0], "regret", "online loss of f_t: mean (f_t(x_t) - y_t)^2"),
                          (axes[1], "online", "online MSE of the predictions made"),
                          (axes[2], "test", "test mean squared error (final model)")):
        for method in METHODS:
            mu = np.array([r[method][f"{key}_mse"] for r in results])
            se = np.array([r[method][f"{key}_se"] for r in results])
            ax.errorbar(xs, mu, yerr=se, marker="o", capsize=3, label=method, color=COLORS[method])
        if key == "test" and "test_mse_train_m" in results[0]["Shrink-Grad"]:
            ax.plot(xs, [r["Shrink-Grad"]["test_mse_train_m"] for r in results], "--", marker="x",
                    color=COLORS["Shrink-Grad"], label="Shrink-Grad, test EST with the training m")
        ax.plot(xs, [r[EXACT][f"{key}_mse"] for r in results], "--", color="gray",
                label="kernel OGD, exact kernel (no budget)")
        ax.plot(xs, [r["predict-zero"][f"{key}_mse"] for r in results], "k:", label="predict 0")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(name)
        ax.set_yscale("log")
        if logx:
            ax.set_xscale("log", base=2)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def render(summary, out):
    """Draw the two figures of a :func:`run` summary into folder ``out``; the paths written."""
    a = summary["args"]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t = tag(a)
    bud = summary["budget"]
    title = (f"Livni et al. ICML'17 Fig. 1 setting ({a['setting']} features, {a['data']} data), T={a['T']}, equal "
             f"budgets ({a['budget_rule']}: r={bud['r']}, k={bud['k']}, m={bud['m']}), "
             f"mean ± s.e. over {a['seeds']} data sets")
    plot(summary["dims"], summary["by_dim"], "input dimension D", title, out / f"shrinking_fig1_{t}.png")
    sweep = summary["budget_sweep"]
    if a["budget_rule"] == "evaluations":
        xs, xl = [b["evaluations"]["Fixed-Random"] / a["T"] for b in sweep], "feature evaluations per training example"
    elif a["budget_rule"] == "per-point":
        xs, xl = [b["k"] for b in sweep], "features per training example (r = k = m)"
    else:
        xs, xl = [b["samples"]["Fixed-Random"] for b in sweep], "features drawn in total"
    plot(xs, summary["by_budget"], xl, f"{a['setting']} features, D={a['budget_dim']}, T={a['T']}: loss vs budget "
         f"(k = {[b['k'] for b in sweep]})", out / f"shrinking_budget_{t}.png", logx=True)
    return [str(out / f"shrinking_fig1_{t}.png"), str(out / f"shrinking_budget_{t}.png")]




# ---- the experiment --------------------------------------------------------------------------------

def tag(p):
    """The file-name tag of a parameter set: the setting and every option off the default."""
    return (p["setting"] + ("" if p["budget_rule"] == "evaluations" else "_" + p["budget_rule"].replace("-", "_"))
            + ("" if p["data"] == "clipped" else "_symmetric")
            + ("" if p["tune_on"] == "regret" else "_tuned_" + p["tune_on"])
            + ("" if list(p["sg_schedules"]) == list(SCHEDULES) else "_sg_" + "_".join(p["sg_schedules"])))


def describe(p, data_dir, stream):
    """Print what :func:`run` would do (it reads no data); the number of learner passes."""
    args = SimpleNamespace(**p)
    per = sum(len(schedules_for(m, args)) * len(p["etas"]) * p["tune_seeds"] + p["seeds"] for m in METHODS + (EXACT,))
    n = (len(p["dims"]) + len(p["budgets"])) * per
    bud = budgets(p["k"], p["T"], p["budget_rule"])
    print(f"shrinking ({tag(p)}): D in {p['dims']}, T = {p['T']}, budget k = {p['k']} (r = {bud['r']}, "
          f"m = {bud['m']}), budget sweep k in {p['budgets']} at D = {p['budget_dim']}; {per} passes per point "
          f"({p['tune_seeds']} tuning and {p['seeds']} evaluation data sets), {n} passes in all", file=stream)
    return n


def run(p, data_dir, stream, point=None):
    """Run the experiment with parameters ``p`` (:data:`PARAMS`); a JSON-able summary.

    Each (D, k) point is computed as ``point(key, compute)`` (default: ``compute()``), which may
    return a saved result instead (:class:`onlinekern.experiments.figures.PointStore`); the
    budget sweep's point at D = ``budget_dim`` and k = ``k`` is the first figure's, computed once."""
    args = SimpleNamespace(**p)
    point = point or (lambda key, compute: compute())
    t0 = time.time()
    dsg = "onlinekern dsg-l2 (batch 1)" if args.setting == "fourier" else "a minimal DSG over coordinates"
    print(f"setting {args.setting}; T={args.T}; budget rule {args.budget_rule}; DSG = {dsg}", file=stream)
    bud = budgets(args.k, args.T, args.budget_rule)
    print(f"budget k={bud['k']}: r={bud['r']}, m={bud['m']}; training evaluations {bud['evaluations']}", file=stream)
    by_dim = []
    for D in args.dims:
        res = point(f"D={D} k={args.k}", lambda: evaluate(D, bud, args))
        by_dim.append(res)
        line = "  ".join(f"{m} {res[m]['regret_mse']:.4f}±{res[m]['regret_se']:.4f} / {res[m]['online_mse']:.4f} / "
                         f"{res[m]['test_mse']:.4f} (eta {res[m]['eta']:g}, {hyper(res[m])})" for m in METHODS)
        sg = res["Shrink-Grad"]
        print(f"D={D}: MSE loss of f_t / of the predictions / test:  {line}  [Shrink-Grad test with the training m "
              f"{sg['test_mse_train_m']:.4f}, shrinks {np.mean(sg['shrinks']):.1f}, ||alpha||_1 "
              f"{np.mean(sg['alpha_norm1']):.2f}; exact {res[EXACT]['regret_mse']:.4f} / {res[EXACT]['test_mse']:.4f}, "
              f"zero {res['predict-zero']['online_mse']:.4f}]", file=stream, flush=True)
        print("    paired Shrink-Grad - baseline (mean ± s.e., Shrink-Grad lower in n of N): " + "; ".join(
            f"{b} {key} {v['mean']:+.4f}±{v['se']:.4f} ({v['sg_lower']}/{v['n']})"
            for b, pr in res["paired"].items() for key, v in pr.items() if key != "online"), file=stream, flush=True)
    by_budget, sweep = [], []
    for k in args.budgets:
        b = budgets(k, args.T, args.budget_rule)
        res = point(f"D={args.budget_dim} k={k}", lambda: evaluate(args.budget_dim, b, args))
        by_budget.append(res)
        sweep.append(b)
        line = "  ".join(f"{m} {res[m]['regret_mse']:.4f} / {res[m]['online_mse']:.4f} / {res[m]['test_mse']:.4f}"
                         for m in METHODS)
        print(f"k={k} (r={b['r']}, m={b['m']}): {line}  [Shrink-Grad test with the training m "
              f"{res['Shrink-Grad']['test_mse_train_m']:.4f}]", file=stream, flush=True)
    return {"args": dict(p), "budget": bud, "dims": list(args.dims), "by_dim": by_dim, "budget_sweep": sweep,
            "by_budget": by_budget, "seconds": time.time() - t0}
