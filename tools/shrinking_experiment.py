"""The synthetic experiment of Livni, Carmon & Globerson, ICML 2017, Section 6 / Figure 1:
Shrinking Gradient against fixed random features and doubly stochastic gradients at equal
feature budgets, squared loss against the input dimension D = 550, 600, ..., 800 with T = 200.

What the paper states (Section 6) and what this script adds where it is silent:

* Data: x_1..x_T in R^D drawn from a standard Gaussian with negative values clipped to zero; a
  weight vector a = a random sparse linear combination of the training points (so the target is
  in the RKHS); labels y_i = a . x_i.  Unstated and chosen here: the sparsity (``--support`` 10
  training points with N(0, 1) weights), a global input scale (x divided by sqrt(D/2), so
  E||x||^2 = 1 and the coordinate feature sqrt(D) x_w has E psi^2 = 1, the paper's |psi| < 1
  regime), labels divided by max_i |y_i| over the training set so y lies in [-1, 1] (Section 2: Y = [-1, 1]), and a test
  set of ``--n-test`` fresh points labelled by the same a.
* Features: "a random feature w corresponds to a uniform choice of coordinate w in x", i.e.
  psi(x; w) = sqrt(D) x_w with kernel E_w psi(x; w) psi(x'; w) = x^T x' (``--setting
  coordinate``, the paper).  ``--setting fourier`` repeats the comparison with the Gaussian
  kernel's random Fourier features (ext; target a = sparse combination of k(x_j, .)), using
  onlinekern's FOGD (squared loss) as the fixed-feature model and onlinekern's DSG (``dsg-l2``,
  batch size 1) when it is available.
* Methods: Fixed-Random (r features drawn once, evaluated on every point; online gradient descent
  on z(x) = psi(x; W)/sqrt(r)); Doubly-Stoch (Dai et al. 2014: every training point draws k new
  features that are used from then on; in the coordinate setting a minimal implementation in this
  script, because onlinekern's DSG draws Gaussian Fourier blocks only); Shrink-Grad
  (onlinekern.ShrinkingGradient, m estimator samples per prediction).  All make one pass.  As a
  reference without budget, the same algorithm with exact kernel sums (kernel OGD, squared loss)
  is drawn dashed: the gap between it and Shrink-Grad is the price of the estimator's noise.
* Equal budgets: "we choose r, k, m so that the same overall number of features is calculated".
  Default ``--budget-rule evaluations`` counts feature evaluations psi(x; w) during training:
  Fixed-Random r per example (r T in all), DSG k t at step t (x_t against every feature so far,
  k T (T + 1)/2 in all), Shrinking Gradient 2m per example (psi(x_i; w) and psi(x_t; w), 2 m T).
  A budget is given by k: per-example budget b = k (T + 1)/2, r = round(b), m = round(b/2).
  ``--budget-rule per-point`` reads the sentence with each method's own description ("each
  training point samples k / m features", r features evaluated on every point): r = k = m.
  ``--budget-rule samples`` counts distinct features drawn instead (r = k T, m = k).  In the
  Fourier setting one evaluation is one projection w^T x (cos and sin of it count once).
* Step sizes: "for all methods we explored different initial step sizes and schedules": for each
  method and D the step eta (grid ``--etas``) and the schedule (constant, eta/sqrt(t), eta/t;
  Shrinking Gradient: ``--sg-schedules``, all three by default, 'const' being Theorem 1's
  eta = B/sqrt(T) form) are chosen on ``--tune-seeds`` separate data sets by ``--tune-on`` (default:
  the loss the figure plots, below); Shrinking Gradient also has B_n tuned (``--norm-bounds``: its
  shrink threshold 16 B_n; with |y| <= 1 the theory's B_n >= 1 never shrinks here; the number of
  shrinks is reported).  Results are then averaged over ``--seeds`` fresh data sets.
* Loss: the figure's axis says only "loss", and Section 6 describes a training set only: "all
  algorithms perform one pass over the data, to emulate the online regret setting".  The regret
  of eq. (7), which Theorem 1 bounds, sums l_t(f_t) = 1/2 (<f_t, Phi(x_t)> - y_t)^2 (eq. 6): the
  loss of the learner's function f_t at x_t, not of the noisy estimate E_t it learns from.  The
  primary column is therefore (1/T) sum_t (f_t(x_t) - y_t)^2 with f_t(x_t) exact (for the
  baselines, whose features are evaluated and not estimated, it is their prediction; for
  Shrinking Gradient sum_i alpha_i k(x_i, x_t), recorded before each step and never fed back).
  Also reported: the online MSE of the predictions each algorithm makes (Shrinking Gradient: E_t
  with m samples), and the test MSE of the final model on ``--n-test`` fresh points; Shrinking
  Gradient estimates a test point with its own ``--test-samples`` (Theorem 1, part 3: m =
  O(B^4 T log(1/delta)/eps_0^2) for accuracy eps_0, independent of the training budget) and, as a
  second column, with the training m.

Usage::

    python tools/shrinking_experiment.py                 # coordinate setting (paper)
    python tools/shrinking_experiment.py --setting fourier
    python tools/shrinking_experiment.py --quick         # a smoke run

Writes ``shrinking_fig1_<setting>.png`` (loss vs D), ``shrinking_budget_<setting>.png`` (loss vs
budget at D = ``--budget-dim``) and ``shrinking_<setting>.json`` into ``--out``.
"""
import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import onlinekern as ok  # noqa: E402

SCHEDULES = ("const", "sqrt", "inv")
METHODS = ("Fixed-Random", "Doubly-Stoch", "Shrink-Grad")
EXACT = "Kernel-OGD (exact)"       # reference: Shrinking Gradient with exact kernel sums, no budget


def step_size(eta, schedule, t):
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


# ---- Fourier features: onlinekern's FOGD and DSG, or the minimal DSG -----------------------------

def fixed_random_fourier(X, y, Xt, r, eta, schedule, seed, gamma):
    L = ok.make_learner("fogd-l2", n_components=r, gamma=gamma, eta=eta, seed=seed, n_threads=1,
                        preset="paper")
    res = ok.run_online(L, X, y, keep_scores=True)
    return np.asarray(res.scores).ravel(), L.predict(Xt)


def have_dsg():
    try:
        ok.make_learner("dsg-l2")
        return True
    except (ValueError, ImportError):
        return False


def dsg_fourier(X, y, Xt, k, eta, schedule, seed, gamma):
    """onlinekern's DSG, batch size 1, block size k: gamma_i = theta/(i + t0); the schedules map to
    t0 = 1e9 (constant), and t0 = 0 (eta/t); eta/sqrt(t) is not available there (skipped)."""
    t0 = 1e9 if schedule == "const" else 0.0
    L = ok.make_learner("dsg-l2", preset="paper", batch_size=1, block_size=k, gamma=gamma, theta=eta * (1 + t0), t0=t0,
                        nu=1e-5, seed=seed, n_threads=1)
    res = ok.run_online(L, X, y, keep_scores=True)
    return np.asarray(res.scores).ravel(), L.predict(Xt)


def dsg_fourier_minimal(X, y, Xt, k, eta, schedule, rng, gamma, nu=1e-5):
    """Minimal DSG with psi = sqrt(2) cos(w^T x + b) (one feature per draw, Dai et al.'s form)."""
    T, D = X.shape
    Om = np.zeros((k * T, D))
    B = np.zeros(k * T)
    beta = np.zeros(k * T)
    f = np.zeros(T)
    for t in range(T):
        n = k * t
        f[t] = np.sqrt(2) * np.cos(Om[:n] @ X[t] + B[:n]) @ beta[:n]
        g = step_size(eta, schedule, t + 1)
        beta[:n] *= 1.0 - g * nu
        Om[n:n + k] = np.sqrt(2 * gamma) * rng.standard_normal((k, D))
        B[n:n + k] = 2 * np.pi * rng.random(k)
        beta[n:n + k] = -g * (f[t] - y[t]) * np.sqrt(2) * np.cos(Om[n:n + k] @ X[t] + B[n:n + k]) / k
    return f, (np.sqrt(2) * np.cos(Xt @ Om.T + B) @ beta)


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
    L = ok.ShrinkingGradient(preset="paper", eta=eta, n_samples=m, norm_bound=norm_bound, feature=setting, gamma=gamma,
                             seed=seed, n_threads=1)
    T = len(y)
    f = np.zeros(T)            # E_t, the estimate the algorithm predicts with and learns from
    fx = np.zeros(T)           # <f_t, Phi(x_t)> exactly: the argument of the loss l_t(f_t) of eq. (6)
    for t in range(T):
        if t:
            fx[t] = L.core_.exact_py(X[t])[0]          # reads the model only
            L.core_.eta = step_size(eta, schedule, t + 1)
        f[t] = np.asarray(ok.run_online(L, X[t:t + 1], y[t:t + 1], keep_scores=True, reset=t == 0).scores).ravel()[0]
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
        L = ok.ShrinkingGradient(preset="paper", eta=eta, exact_predict=True, norm_bound=1e300, feature=args.setting,
                                 gamma=args.gamma, n_threads=1)
        f = np.asarray(ok.run_online(L, X, y, keep_scores=True).scores).ravel()
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
        elif args.use_dsg:
            f, ft = dsg_fourier(X, y, Xt, bud["k"], eta, schedule, seed, args.gamma)
        else:
            f, ft = dsg_fourier_minimal(X, y, Xt, bud["k"], eta, schedule, rng, args.gamma)
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
    if args.setting == "fourier" and method == "Doubly-Stoch" and args.use_dsg:
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
        out["paired"][base] = {key: {"mean": float(diff[:, j].mean()), "se": float(diff[:, j].std(ddof=1) / np.sqrt(len(diff))),
                                     "sg_lower": int(np.sum(diff[:, j] < 0)), "n": len(diff)}
                               for j, key in enumerate(("regret", "online", "test"))}
    zero = np.mean([np.mean(d[1] ** 2) for d in eval_data])
    zero_test = np.mean([np.mean(d[3] ** 2) for d in eval_data])
    out["predict-zero"] = {"regret_mse": float(zero), "online_mse": float(zero), "test_mse": float(zero_test)}
    return out


def hyper(r):
    return f"{r['schedule']}, B_n {r['norm_bound']:g}" if "norm_bound" in r else r["schedule"]


# ---- plots ---------------------------------------------------------------------------------------

COLORS = {"Fixed-Random": "tab:blue", "Doubly-Stoch": "tab:orange", "Shrink-Grad": "tab:green"}


def plot(xs, results, xlabel, title, path, logx=False):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
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
    plt.close(fig)


def figures(summary, out, tag):
    a = summary["args"]
    bud = summary["budget"]
    title = (f"Livni et al. ICML'17 Fig. 1 setting ({a['setting']} features, {a['data']} data), T={a['T']}, equal "
             f"budgets ({a['budget_rule']}: r={bud['r']}, k={bud['k']}, m={bud['m']}), mean ± s.e. over {a['seeds']} data sets")
    plot(summary["dims"], summary["by_dim"], "input dimension D", title, out / f"shrinking_fig1_{tag}.png")
    sweep = summary["budget_sweep"]
    if a["budget_rule"] == "evaluations":
        xs, xl = [b["evaluations"]["Fixed-Random"] / a["T"] for b in sweep], "feature evaluations per training example"
    elif a["budget_rule"] == "per-point":
        xs, xl = [b["k"] for b in sweep], "features per training example (r = k = m)"
    else:
        xs, xl = [b["samples"]["Fixed-Random"] for b in sweep], "features drawn in total"
    plot(xs, summary["by_budget"], xl, f"{a['setting']} features, D={a['budget_dim']}, T={a['T']}: loss vs budget "
         f"(k = {[b['k'] for b in sweep]})", out / f"shrinking_budget_{tag}.png", logx=True)


def replot(path, out):
    summary = json.loads(path.read_text())
    tag = path.stem[len("shrinking_"):]
    out.mkdir(parents=True, exist_ok=True)
    figures(summary, out, tag)
    print(f"wrote {out}/shrinking_fig1_{tag}.png, shrinking_budget_{tag}.png")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--setting", choices=("coordinate", "fourier"), default="coordinate",
                   help="coordinate sampling (the paper) or Gaussian random Fourier features (ext)")
    p.add_argument("--data", choices=("clipped", "sparse-symmetric"), default="clipped",
                   help="x = max(0, z) (the paper) or z zeroed at random with probability 1/2 (ext: zero mean)")
    p.add_argument("--dims", default="550,600,650,700,750,800", help="input dimensions D")
    p.add_argument("--T", type=int, default=200, help="training examples (one pass)")
    p.add_argument("--n-test", type=int, default=1000)
    p.add_argument("--support", type=int, default=10, help="training points in the sparse combination a")
    p.add_argument("--k", type=int, default=1, help="DSG features per example; sets the budget of Fig. 1")
    p.add_argument("--budget-rule", choices=("evaluations", "per-point", "samples"), default="evaluations")
    p.add_argument("--budgets", default="1,2,4,8", help="k values of the budget sweep")
    p.add_argument("--budget-dim", type=int, default=550, help="D of the budget sweep")
    p.add_argument("--etas", default="0.00390625,0.0078125,0.015625,0.03125,0.0625,0.125,0.25,0.5,1,2,4,8")
    p.add_argument("--norm-bounds", default="0.015625,0.0625,0.25,1",
                   help="B_n values tried for Shrinking Gradient (it keeps a constant step)")
    p.add_argument("--sg-schedules", default="const,sqrt,inv",
                   help="step schedules tried for Shrinking Gradient (Section 6: explored for all methods); "
                        "'const' alone is Theorem 1's constant step")
    p.add_argument("--test-samples", type=int, default=10000,
                   help="EST samples per test point for Shrinking Gradient (Theorem 1, part 3); 0 = the training m")
    p.add_argument("--tune-on", choices=("regret", "online", "test"), default="regret",
                   help="criterion for choosing step size, schedule and B_n on the tuning data sets")
    p.add_argument("--gamma", type=float, default=0.5, help="Gaussian kernel width (fourier setting)")
    p.add_argument("--seeds", type=int, default=10, help="evaluation data sets per point")
    p.add_argument("--tune-seeds", type=int, default=3, help="data sets for choosing eta and schedule")
    p.add_argument("--no-dsg-learner", action="store_true", help="fourier setting: use the minimal DSG")
    p.add_argument("--quick", action="store_true", help="small smoke run")
    p.add_argument("--out", default=str(ROOT / "docs" / "figures"))
    p.add_argument("--replot", metavar="JSON", help="redraw the figures of a results file and exit")
    args = p.parse_args(argv)
    if args.replot:
        return replot(Path(args.replot), Path(args.out))
    args.dims = [int(v) for v in args.dims.split(",")]
    args.etas = [float(v) for v in args.etas.split(",")]
    args.norm_bounds = [float(v) for v in args.norm_bounds.split(",")]
    args.sg_schedules = [v for v in args.sg_schedules.split(",")]
    if any(v not in SCHEDULES for v in args.sg_schedules):
        p.error(f"--sg-schedules takes values from {', '.join(SCHEDULES)}")
    ks = [int(v) for v in args.budgets.split(",")]
    if args.quick:
        args.dims, ks, args.seeds, args.tune_seeds, args.n_test = args.dims[:2], ks[:2], 2, 1, 200
    args.use_dsg = args.setting == "fourier" and not args.no_dsg_learner and have_dsg()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dsg_note = ("onlinekern dsg-l2 (batch 1)" if args.use_dsg else
                "minimal DSG in this script" + (" (onlinekern's DSG draws Fourier blocks only)" if args.setting == "coordinate" else ""))
    print(f"setting {args.setting}; T={args.T}; budget rule {args.budget_rule}; DSG = {dsg_note}")

    t0 = time.time()
    bud = budgets(args.k, args.T, args.budget_rule)
    print(f"budget k={bud['k']}: r={bud['r']}, m={bud['m']}; training evaluations {bud['evaluations']}")
    by_dim = []
    for D in args.dims:
        res = evaluate(D, bud, args)
        by_dim.append(res)
        line = "  ".join(f"{m} {res[m]['regret_mse']:.4f}±{res[m]['regret_se']:.4f} / {res[m]['online_mse']:.4f} / "
                         f"{res[m]['test_mse']:.4f} (eta {res[m]['eta']:g}, {hyper(res[m])})" for m in METHODS)
        sg = res["Shrink-Grad"]
        print(f"D={D}: MSE loss of f_t / of the predictions / test:  {line}  [Shrink-Grad test with the training m {sg['test_mse_train_m']:.4f}, "
              f"shrinks {np.mean(sg['shrinks']):.1f}, ||alpha||_1 {np.mean(sg['alpha_norm1']):.2f}; "
              f"exact {res[EXACT]['regret_mse']:.4f} / {res[EXACT]['test_mse']:.4f}, "
              f"zero {res['predict-zero']['online_mse']:.4f}]", flush=True)
        print("    paired Shrink-Grad - baseline (mean ± s.e., Shrink-Grad lower in n of N): " + "; ".join(
            f"{b} {key} {v['mean']:+.4f}±{v['se']:.4f} ({v['sg_lower']}/{v['n']})"
            for b, pr in res["paired"].items() for key, v in pr.items() if key != "online"), flush=True)
    by_budget = []
    sweep = []
    for k in ks:
        b = budgets(k, args.T, args.budget_rule)
        res = evaluate(args.budget_dim, b, args)
        by_budget.append(res)
        sweep.append(b)
        line = "  ".join(f"{m} {res[m]['regret_mse']:.4f} / {res[m]['online_mse']:.4f} / {res[m]['test_mse']:.4f}"
                         for m in METHODS)
        print(f"k={k} (r={b['r']}, m={b['m']}): {line}  [Shrink-Grad test with the training m "
              f"{res['Shrink-Grad']['test_mse_train_m']:.4f}]", flush=True)
    summary = {"args": {k: v for k, v in vars(args).items()}, "budget": bud,
               "dims": args.dims, "by_dim": by_dim, "budget_sweep": sweep, "by_budget": by_budget,
               "seconds": time.time() - t0}
    tag = args.setting + ("" if args.budget_rule == "evaluations" else "_" + args.budget_rule.replace("-", "_")) \
        + ("" if args.data == "clipped" else "_symmetric") + ("" if args.tune_on == "regret" else "_tuned_" + args.tune_on) \
        + ("" if args.sg_schedules == list(SCHEDULES) else "_sg_" + "_".join(args.sg_schedules))
    (out / f"shrinking_{tag}.json").write_text(json.dumps(summary, indent=1))
    figures(summary, out, tag)
    print(f"wrote {out}/shrinking_fig1_{tag}.png, shrinking_budget_{tag}.png, shrinking_{tag}.json "
          f"({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
