"""Scaling figures (issue 7): time per example against D, against B and against t, on log-log axes.

Every section times learners on a prefix of ijcnn1 (ijcnn1 + ijcnn1.t) in permutation 0 of seed
0, one thread, learning time only; each figure is the median of ``--repeats`` runs interleaved
(repeat, then size, then learner), with the load average recorded per section.

D      FOGD-hinge (gamma 0.5, eta 1) and RRF-hinge (the rrf-ijcnn1-casp file's ijcnn1 point), D in
       {50, ..., 4000}, the first ``--rows-d`` rows.
B      Every budgeted learner at B in {100, ..., 2000} with the budget-family-ijcnn1 experiment file's
       settings (``BUDGETED`` below; NOGD rank 0.2 B): the *steady-state* time, from the first
       checkpoint at which the model reached its largest size to the end of the stream, so
       neither the filling phase nor a one-off switch is averaged in.  Projectron++ stops at
       B = 1000 unless ``--uncapped``.
t      DSG, UDSG and CDSG (spec defaults), both block modes, time per example in the windows
       between ~25 log-spaced checkpoints of the first ``--rows-t`` rows.
sweep  onlinekern.sweep's parallel speed-up: a 10-run sweep of fogd-hinge, fogd-logit (D = 400)
       and ogd-hinge on the first ``--sweep-rows`` rows, n_jobs = 1 and 2 alternately, medians of
       ``--sweep-repeats``, identical numbers checked; a two-process busy loop as the control.

Slopes: least squares of log(time per example) on log(size) over the upper half of the points;
expected ~1 (FOGD/RRF in D, O(B) kernel steps in B, DSG in t), 1-2 where an O(B^2) update is
paid only by the updating examples (Projectron(++), NOGD).  Output: Markdown tables, and
``docs/figures/scaling_{D,B,t}.png`` with every raw number in ``docs/figures/scaling.json``
(atomic; ``--only`` keeps the other sections of an existing file).

    python tools/bench_scaling.py                      # everything (~10 minutes on 2 idle cores)
    python tools/bench_scaling.py --quick              # smoke run (a temporary folder unless --out)
    python tools/bench_scaling.py --only D,t --repeats 5   # re-measure two sections, keep the others
    python tools/bench_scaling.py --replot                 # tables and figures again from the JSON
"""
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import harness as h

import onlinekern as ok
from onlinekern.experiments.config import load_experiment, plan
from onlinekern.seeding import permutation
from onlinekern.sweep import sweep

from bench import fogd_run
from bench_budget_scaling import budgeted_learners, make

FULL = 141_691          # rows of ijcnn1 + ijcnn1.t

# RRF-hinge at the point the rrf-ijcnn1-casp experiment chooses on ijcnn1 (BENCHMARKS.md: eta 1, g0 0.5,
# eta_gamma 0.01); FOGD-hinge as tools/bench.py runs it on ijcnn1 (gamma 0.5, eta 1)
RRF_PARAMS = {"eta": 1.0, "gamma": 0.5, "eta_gamma": 0.01}
FOGD_ETA = 1.0

# The B sweep: learner -> (algorithm of the budget-family-ijcnn1 experiment file whose settings it takes,
# the grid point that table's search chose on ijcnn1 (BENCHMARKS.md, "Budgeted kernel family"),
# prefix rows, cost of one step at full budget (d = 22 features), expected slope: "1–2" where an
# O(B^2) update is paid only on the examples that update, a fraction that falls as B grows).
# BSGD-removal and BOGD++ are not in that table: they take their siblings' settings (BSGD-merge's
# lambda, BOGD's point).
LAM_BSGD = 2.0 ** 4 / FULL      # the 'paper' lambda grid point 2^{2j}/M, j = 2, that BSGD-M chose
BUDGETED = {
    "rbp": ("rbp", {"gamma": 4.0}, FULL, "O(Bd)", "1"),
    "forgetron": ("forgetron", {"gamma": 4.0}, FULL, "O(Bd)", "1"),
    "projectron": ("projectron", {"gamma": 4.0, "proj_eta": 0.1}, FULL,
                   "O(Bd) + mistakes × O(B²) (d = K⁻¹k)", "1–2"),
    "projectronpp": ("projectronpp", {"gamma": 4.0, "proj_eta": 0.1}, FULL,
                     "O(Bd) + (mistakes + margin errors) × O(B²)", "1–2"),
    "bpas": ("bpas", {"gamma": 4.0, "c": 10.0}, 50_000, "O(Bd)", "1"),
    "bsgd-removal": ("bsgd-merge", {"gamma": 4.0, "lam": LAM_BSGD}, 50_000, "O(Bd)", "1"),
    "bsgd-merge": ("bsgd-merge", {"gamma": 4.0, "lam": LAM_BSGD}, 50_000,
                   "O(Bd) + margin errors × O(B) merge search", "1"),
    "bogd": ("bogd-hinge", {"gamma": 4.0, "eta": 1.0, "lam": 1e-4}, 50_000, "O(Bd)", "1"),
    "bogdpp": ("bogd-hinge", {"gamma": 4.0, "eta": 1.0, "lam": 1e-4}, 50_000, "O(Bd)", "1"),
    "nogd-hinge": ("nogd-hinge", {"gamma": 0.5, "eta": 1.0}, 50_000,
                   "O(Bd) + margin errors × O(kB), k = 0.2 B", "1–2"),
    "dualsgd-hinge": ("dualsgd-hinge", {"gamma": 1.0}, 50_000, "O(Bd) + O(Dd), D = 200 fixed", "1"),
}
CAPS = {"projectronpp": 1000}   # largest budget run by default (the step is O(B^2): ~90 s a run at 2000)

SWEEP_ALGORITHMS = ["fogd-hinge", "fogd-logit", "ogd-hinge"]
DSG_FAMILY = {"DSG": ok.DSG, "UDSG": ok.UDSG, "CDSG": ok.CDSG}
COLORS = {"DSG": "tab:blue", "UDSG": "tab:orange", "CDSG": "tab:green"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def slope(x, y):
    """Least-squares slope of log y on log x over the upper half of the points (the ceil(n/2)
    largest x, at least 2); NaN when fewer than 2 finite points remain."""
    pts = sorted((a, b) for a, b in zip(x, y) if a > 0 and b is not None and np.isfinite(b) and b > 0)
    pts = pts[len(pts) // 2:] if len(pts) >= 4 else pts[-2:]
    if len(pts) < 2:
        return float("nan")
    lx, ly = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(lx, ly, 1)[0])


def stream(data, rows):
    """The first ``rows`` rows of ijcnn1 + ijcnn1.t in permutation 0 of seed 0."""
    X, y = data.load("ijcnn1", "ijcnn1.t")
    order = permutation(0, 0, X.shape[0])[:rows]
    return X[order], y[order]


def short_cpu(info):
    return f"{info['cpu'].split(' Processor')[0]}, {info['cores']} cores"


def fmt(v, nd=2):
    return "—" if v is None or not np.isfinite(v) else f"{v:.{nd}f}"


# ---- D: random-feature learners --------------------------------------------------------------

def section_d(data, ns):
    X, y = stream(data, ns.rows_d)
    n = X.shape[0]
    Ds = ns.dims
    secs = {(name, D): [] for name in ("fogd-hinge", "rrf-hinge") for D in Ds}
    errs = {}
    load0 = h.loadavg()
    for rep in range(ns.repeats):
        for D in Ds:
            # FOGD exactly as tools/bench.py times it (its own permutation of this prefix)
            res = fogd_run(X, y, FOGD_ETA, D=D)
            secs[("fogd-hinge", D)].append(res.seconds)
            errs[("fogd-hinge", D)] = res.error
            learner = ok.make_learner("rrf-hinge", n_components=D, seed=0, n_threads=1, **RRF_PARAMS)
            res = ok.run_online(learner, X, y, seed=0, checkpoints=None)
            secs[("rrf-hinge", D)].append(res.seconds)
            errs[("rrf-hinge", D)] = res.error
            log(f"  D: repeat {rep + 1} D={D:<5} fogd {1e6 * secs[('fogd-hinge', D)][-1] / n:7.2f} "
                f"rrf {1e6 * secs[('rrf-hinge', D)][-1] / n:7.2f} us/example")
    us = {k: 1e6 * h.median(v) / n for k, v in secs.items()}
    out = {"rows": n, "dims": Ds, "repeats": ns.repeats, "loadavg": [load0, h.loadavg()],
           "params": {"fogd-hinge": {"gamma": 0.5, "eta": FOGD_ETA, "loss": "hinge"}, "rrf-hinge": RRF_PARAMS},
           "learners": {}}
    for name in ("fogd-hinge", "rrf-hinge"):
        out["learners"][name] = {"seconds": [secs[(name, D)] for D in Ds],
                                 "us_per_example": [us[(name, D)] for D in Ds],
                                 "mistake_rate": [errs[(name, D)] for D in Ds],
                                 "slope": slope(Ds, [us[(name, D)] for D in Ds])}
    return out


def report_d(out):
    Ds = out["dims"]
    print(f"\n### Time per example vs D (ijcnn1, first {out['rows']:,} rows of permutation 0, 1 thread, "
          f"median of {out['repeats']}; µs / example)\n")
    rows = [[name] + [fmt(r["us_per_example"][i]) for i in range(len(Ds))] + [fmt(r["slope"]), "1"]
            for name, r in out["learners"].items()]
    print(h.md_table(["learner"] + [f"D={D}" for D in Ds] + ["slope (upper half)", "expected"], rows))
    print()
    rows = [[name] + [fmt(r["mistake_rate"][i]) for i in range(len(Ds))] for name, r in out["learners"].items()]
    print(h.md_table(["mistake rate (%)"] + [f"D={D}" for D in Ds], rows))


# ---- B: budgeted kernel learners ---------------------------------------------------------------

def budget_params(name, B, rows):
    """Hyper-parameters of ``name`` at budget B on a ``rows``-row stream: the budget-family-ijcnn1
    experiment file's fixed settings scaled to B, plus the chosen grid point (checked to lie in its grid)."""
    if name not in BUDGETED:
        return {}, None
    key, chosen, *_ = BUDGETED[name]
    _, fixed, grids = plan(load_experiment("budget-family-ijcnn1"), "ijcnn1", SimpleNamespace(n_rows_full=FULL))
    grid, fixed = grids[key], fixed[key]
    for k, v in chosen.items():
        if not any(math.isclose(v, g, rel_tol=1e-9) for g in grid.get(k, [v])):
            raise SystemExit(f"bench_scaling: {name}: {k}={v} is not in budget-family-ijcnn1's grid {grid[k]}")
    params = dict(chosen)
    for k, v in fixed.items():
        if k in ("budget", "preset"):      # the timing runs keep the product defaults
            continue
        if k == "rank":                 # NOGD's rank is a fraction of the budget (k = 0.2 B)
            v = max(1, round(v * B / fixed["budget"]))
        elif v == "@rows":              # DualSGD's horizon T: the stream length
            v = rows
        params[k] = v
    return params, key


def steady_state(n_seen, size, seconds):
    """(µs per example after the model first reached its largest size, first row of that window);
    NaN when the window is shorter than 20 % of the stream (the budget did not fill).  The largest
    size, not a fraction of it: NOGD switches (an O(B^3) eigendecomposition) when it reaches B, and
    DualSGD, which merges k SVs at a time, first reaches B before it fluctuates below it."""
    n_seen, size, seconds = map(np.asarray, (n_seen, size, seconds))
    f = int(np.argmax(size >= size.max()))
    span = n_seen[-1] - n_seen[f]
    if span < 0.2 * n_seen[-1]:
        return float("nan"), int(n_seen[f])
    return float(1e6 * (seconds[-1] - seconds[f]) / span), int(n_seen[f])


def section_b(data, ns):
    registry = ok.available_learners()
    families = budgeted_learners()       # {family: class} of every learner with a budget
    names = [n for n in BUDGETED if registry.get(n, {}).get("family") in families]
    listed = {registry[n]["family"] for n in names}
    names += [fam for fam in families if fam not in listed]   # unlisted: defaults, reported as such
    if ns.learners_b:
        names = [n for n in names if n in ns.learners_b.split(",")]
    budgets = ns.budgets
    X, y = stream(data, FULL)
    plan = {}
    for name in names:
        rows = min(ns.rows_b or BUDGETED.get(name, (None, None, 50_000))[2], FULL)
        cap = None if ns.uncapped else CAPS.get(name)
        plan[name] = {"rows": rows, "budgets": [b for b in budgets if cap is None or b <= cap]}
    cells = {(name, b): {"seconds": [], "steady": []} for name in names for b in plan[name]["budgets"]}
    load0 = h.loadavg()
    t0 = time.time()
    for rep in range(ns.repeats):
        for b in budgets:
            for name in names:
                if b not in plan[name]["budgets"]:
                    continue
                rows = plan[name]["rows"]
                params, key = budget_params(name, b, rows)
                info = registry[name]
                learner = make(info["class"], b, params.pop("gamma", 1.0), 1).set_params(**params)
                if info["loss"]:
                    learner.set_params(loss=info["loss"])
                step = max(1, rows // 100)
                cps = np.arange(step, rows + 1, step)
                res = ok.run_online(learner, X[:rows], y[:rows], checkpoints=cps)
                c = res.curve
                us, start = steady_state(c["n_seen"], c["model_size"], c["seconds"])
                cell = cells[(name, b)]
                cell["seconds"].append(res.seconds)
                cell["steady"].append(us)
                cell.update(error=res.error, size=res.model_size, fill_row=start, rows=rows,
                            params=dict(learner.get_params(), settings_from=key),
                            curve={"n_seen": c["n_seen"].tolist(), "model_size": c["model_size"].tolist(),
                                   "seconds": c["seconds"].tolist()})
                log(f"  B: repeat {rep + 1} B={b:<5} {name:<14} {rows:>7} rows  steady {us:8.2f}  "
                    f"whole {1e6 * res.seconds / rows:8.2f} us/example  size {res.model_size} from row {start}  "
                    f"error {res.error:.2f}  [{time.time() - t0:.0f} s]")
    out = {"budgets": budgets, "repeats": ns.repeats, "loadavg": [load0, h.loadavg()], "learners": {},
           "steady_state": "µs/example from the first checkpoint at the largest model size to the end"}
    for name in names:
        bs = plan[name]["budgets"]
        steady = [h.median(cells[(name, b)]["steady"]) for b in bs]
        whole = [1e6 * h.median(cells[(name, b)]["seconds"]) / plan[name]["rows"] for b in bs]
        model, exp = (BUDGETED[name][3], BUDGETED[name][4]) if name in BUDGETED else ("not listed", None)
        out["learners"][name] = {
            "rows": plan[name]["rows"], "budgets": bs, "cost_model": model, "expected_slope": exp,
            "us_per_example_steady": steady, "us_per_example_whole_pass": whole,
            "slope_steady": slope(bs, steady), "slope_whole_pass": slope(bs, whole),
            "capped_above": None if bs == budgets else max(bs),
            "cells": {str(b): cells[(name, b)] for b in bs}}
    return out


def report_b(out):
    budgets = out["budgets"]
    print(f"\n### Time per example vs budget B (ijcnn1, permutation 0, 1 thread, median of {out['repeats']}; "
          f"steady-state µs / example once the budget is full)\n")
    rows = []
    for name, r in out["learners"].items():
        by_b = dict(zip(r["budgets"], r["us_per_example_steady"]))
        rows.append([name, f"{r['rows']:,}"] + [fmt(by_b.get(b)) if b in by_b else "capped" for b in budgets]
                    + [fmt(r["slope_steady"]), r["cost_model"], r["expected_slope"] or "?"])
    print(h.md_table(["learner", "rows"] + [f"B={b}" for b in budgets]
                   + ["slope (upper half)", "cost of a step", "expected"], rows))
    print("\nWhole-pass averages (µs / example, filling phase included) and the row at which the model "
          "first reached its largest size / final size / mistake rate (%):\n")
    rows = []
    for name, r in out["learners"].items():
        cs = r["cells"]
        cellsfmt = {b: f"{fmt(w)} ({cs[str(b)]['fill_row']:,} / {cs[str(b)]['size']} / {cs[str(b)]['error']:.2f})"
                    for b, w in zip(r["budgets"], r["us_per_example_whole_pass"])}
        rows.append([name] + [cellsfmt.get(b, "capped") for b in budgets] + [fmt(r["slope_whole_pass"])])
    print(h.md_table(["learner"] + [f"B={b}" for b in budgets] + ["slope"], rows))


# ---- t: the doubly stochastic family -----------------------------------------------------------

def section_t(data, ns):
    X, y = stream(data, ns.rows_t)
    n = X.shape[0]
    batch = ok.DSG().batch_size
    cps = np.unique(np.round(np.geomspace(4, n // batch, 25)).astype(np.int64) * batch)   # whole batches
    modes = {"regenerating": False, "store_omega": True}
    secs = {(lab, m): [] for lab in DSG_FAMILY for m in modes}
    sizes, errs, blocks = {}, {}, {}
    load0 = h.loadavg()
    for rep in range(ns.repeats):
        for lab, cls in DSG_FAMILY.items():
            for mode, store in modes.items():
                learner = cls(store_omega=store, n_threads=1)
                res = ok.run_online(learner, X, y, checkpoints=cps)
                secs[(lab, mode)].append(res.curve["seconds"])
                sizes[lab] = res.curve["model_size"].tolist()
                errs[lab] = res.error
                blocks[lab] = learner.n_blocks_
                log(f"  t: repeat {rep + 1} {lab:<5} {mode:<13} {res.seconds:7.2f} s  features {res.model_size}  "
                    f"blocks {learner.n_blocks_}")
    lo, hi = np.r_[0, cps[:-1]], cps
    mid = (lo + hi) / 2
    out = {"rows": n, "batch_size": batch, "checkpoints": cps.tolist(), "window_mid": mid.tolist(),
           "repeats": ns.repeats, "loadavg": [load0, h.loadavg()], "loss": ok.DSG().loss, "learners": {}}
    for lab in DSG_FAMILY:
        entry = {"model_size": sizes[lab], "final_blocks": blocks[lab], "mistake_rate": errs[lab]}
        for mode in modes:
            runs = np.array(secs[(lab, mode)])                       # repeats x checkpoints
            window = np.median(np.diff(np.c_[np.zeros(len(runs)), runs], axis=1), axis=0) / (hi - lo) * 1e6
            entry[mode] = {"cumulative_seconds": runs.tolist(), "us_per_example_window": window.tolist()}
        out["learners"][lab] = entry
    return derive_t(out)


def derive_t(out):
    """The slopes of the t section from its raw figures (also for a scaling.json written before
    they were recorded): time per example against the window midpoints (the first window, [0, 4
    batches], is start-up), model size against t, and µs per block in the last window (its time
    over its mean number of blocks; features = 2 x block size x blocks)."""
    mid, cps = np.array(out["window_mid"]), np.array(out["checkpoints"])
    for e in out["learners"].values():
        e["size_slope"] = slope(cps, e["model_size"])
        m_last = e["final_blocks"] * np.mean(e["model_size"][-2:]) / e["model_size"][-1]
        for mode in ("regenerating", "store_omega"):
            w = np.array(e[mode]["us_per_example_window"])
            e[mode]["slope"] = slope(mid[1:], w[1:])
            e[mode]["us_per_block_last_window"] = float(w[-1] / m_last)
    return out


def report_t(out):
    n, hi = out["rows"], np.array(out["checkpoints"])
    picks = sorted({int(np.argmin(np.abs(hi - n / 2 ** k))) for k in (4, 3, 2, 1, 0)})
    print(f"\n### Time per example vs t: DSG family (ijcnn1, first {n:,} rows of permutation 0, "
          f"{out['loss']} loss, batch {out['batch_size']}, 1 thread, median of {out['repeats']}; µs / example "
          f"in the window ending at t)\n")
    rows = []
    for lab, e in out["learners"].items():
        for mode in ("regenerating", "store_omega"):
            w = e[mode]["us_per_example_window"]
            rows.append([lab, mode] + [fmt(w[i], 1) for i in picks]
                        + [f"{e['model_size'][-1]:,} ({e['final_blocks']})", fmt(e["size_slope"]),
                           fmt(e[mode]["us_per_block_last_window"], 3), fmt(e[mode]["slope"]), "1"])
    print(h.md_table(["learner", "block mode"] + [f"t={t:,}" for t in hi[picks]]
                   + ["features (blocks) at end", "model-size slope", "µs / example / block (last window)",
                      "time slope (upper half)", "expected"], rows))


# ---- sweep: n_jobs = 1 against 2 ----------------------------------------------------------------

def _spin(n):
    s = 0
    for i in range(n):
        s += i
    return s


def control_ratio(jobs, n=10_000_000):
    """What the machine gives any program right now: ``jobs`` busy loops in parallel processes
    over the same loops run serially (1/jobs on an idle machine)."""
    from multiprocessing import get_context
    t0 = time.perf_counter()
    for _ in range(jobs):
        _spin(n)
    serial = time.perf_counter() - t0
    with get_context("spawn").Pool(jobs) as pool:
        pool.map(_spin, [1000] * jobs)              # start-up outside the timing
        t0 = time.perf_counter()
        pool.map(_spin, [n] * jobs)
        return (time.perf_counter() - t0) / serial


def section_sweep(data, ns):
    """A 10-run sweep of SWEEP_ALGORITHMS on the first rows of ijcnn1 + ijcnn1.t (file order),
    wall time with n_jobs = 1 and 2 alternately, every run's numbers checked identical."""
    X, y = data.load("ijcnn1", "ijcnn1.t", rows=ns.sweep_rows)
    runs = 2 if ns.quick else 10
    kw = dict(runs=runs, seed=0, params={"n_components": 400, "gamma": 0.5, "eta": 0.5}, progress=False)
    times, busy, ref = {1: [], 2: []}, {1: [], 2: []}, None
    load0 = h.loadavg()
    for rep in range(ns.sweep_repeats):
        for jobs in (1, 2):
            t0 = time.perf_counter()
            recs = sweep(SWEEP_ALGORITHMS, {f"ijcnn1[:{X.shape[0]}]": (X, y)}, n_jobs=jobs, backend="loky", **kw)
            times[jobs].append(time.perf_counter() - t0)
            # worker occupancy: task time over (workers x wall); ~1 means the engine kept every
            # worker busy, so a ratio above 1/jobs comes from CPUs not being free, not from it
            busy[jobs].append(sum(r["wall_seconds"] for r in recs) / (jobs * times[jobs][-1]))
            got = [(r["key"], r["status"], r["mistake_rate"], r["model_size"], r["curve"]["mistake_rate"])
                   for r in sorted(recs, key=lambda r: r["key"])]
            if ref not in (None, got):
                raise SystemExit(f"bench_scaling: sweep with n_jobs={jobs}: numbers differ from the first sweep")
            ref = got
            log(f"  sweep: repeat {rep + 1} n_jobs={jobs}: {times[jobs][-1]:.2f} s, occupancy {busy[jobs][-1]:.2f}")
    t1, t2 = h.median(times[1]), h.median(times[2])
    return {"rows": X.shape[0], "runs": runs, "algorithms": SWEEP_ALGORITHMS, "cells": len(ref),
            "seconds_n_jobs_1": t1, "seconds_n_jobs_2": t2, "ratio": t2 / t1, "speedup": t1 / t2, "identical": True,
            "occupancy_n_jobs_1": h.median(busy[1]), "occupancy_n_jobs_2": h.median(busy[2]),
            "loadavg_before": [load0], "loadavg_after": [h.loadavg()], "control_ratio": control_ratio(2),
            "sweep_command": f"python tools/bench_scaling.py --only sweep --sweep-rows {ns.sweep_rows} "
                       f"--sweep-repeats {ns.sweep_repeats}"}


def report_sweep(out):
    cmd = out.get("sweep_command") or out.get("bench_sweep_command", "tools/bench_sweep.py")
    print(f"\n### Sweep scaling ({cmd}; ijcnn1 followed by ijcnn1.t)\n\n"
          f"{out['cells']} runs ({', '.join(out['algorithms'])}) on {out['rows']:,} rows: n_jobs=1 "
          f"{out['seconds_n_jobs_1']:.2f} s, n_jobs=2 {out['seconds_n_jobs_2']:.2f} s, speed-up "
          f"{out['speedup']:.2f}x (target >= 1.8x), identical numbers; what the machine gave two busy loops "
          f"at that moment: {1.0 / out['control_ratio']:.2f}x; load average {out['loadavg_before'][0]:.2f} -> "
          f"{out['loadavg_after'][0]:.2f}")


# ---- figures -----------------------------------------------------------------------------------

def _save(fig, axes, path, legend):
    """Grid and legend on every axis, then write the figure; returns its path."""
    import matplotlib.pyplot as plt
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(**legend)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plots(results, out_dir, info):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    where = short_cpu(info)
    paths = []
    if "D" in results:
        r = results["D"]
        fig, ax = plt.subplots(figsize=(7, 5))
        for (name, e), color in zip(r["learners"].items(), ("tab:blue", "tab:red")):
            ax.loglog(r["dims"], e["us_per_example"], "o-", color=color, label=f"{name} (slope {e['slope']:.2f})")
        ref = r["learners"]["fogd-hinge"]["us_per_example"][-1]
        ax.loglog(r["dims"], [ref * D / r["dims"][-1] for D in r["dims"]], "k:", label="slope 1 reference")
        ax.set(xlabel="random-feature frequencies D (2D weights per output)", ylabel="learning time per example (µs)",
               title=f"Time per example vs D — ijcnn1, first {r['rows']:,} rows, 1 thread\n{where}")
        paths.append(_save(fig, [ax], out_dir / "scaling_D.png", {}))
    if "B" in results:
        r = results["B"]
        fig, ax = plt.subplots(figsize=(10, 6))
        cmap = plt.get_cmap("tab20")
        markers = "os^vD<>pPX*h"
        top = []
        for i, (name, e) in enumerate(r["learners"].items()):
            ax.loglog(e["budgets"], e["us_per_example_steady"], marker=markers[i % len(markers)], color=cmap(i % 20),
                      label=f"{name} (slope {e['slope_steady']:.2f}; {e['rows']:,} rows)")
            top.append(np.nanmin(e["us_per_example_steady"]))
        bs = np.array(r["budgets"], dtype=float)
        base = np.nanmin(top)
        ax.loglog(bs, base * bs / bs[0], "k:", lw=1, label="slope 1 reference")
        ax.loglog(bs, base * (bs / bs[0]) ** 2, "k--", lw=1, label="slope 2 reference")
        ax.set(xlabel="budget B (support vectors)", ylabel="learning time per example at full budget (µs)",
               title=f"Time per example vs budget — ijcnn1 (permutation 0), 1 thread, steady state\n{where}")
        paths.append(_save(fig, [ax], out_dir / "scaling_B.png",
                           {"fontsize": 8, "loc": "center left", "bbox_to_anchor": (1.01, 0.5)}))
    if "t" in results:
        r = results["t"]
        mid = np.array(r["window_mid"])
        fig, axes = plt.subplots(1, 2, figsize=(13, 5))
        for lab, e in r["learners"].items():
            for mode, ls in (("regenerating", "-"), ("store_omega", "--")):
                axes[0].loglog(mid[1:], e[mode]["us_per_example_window"][1:], ls, marker=".", color=COLORS[lab],
                               label=f"{lab}, {mode} (slope {e[mode]['slope']:.2f})")
            axes[1].loglog(r["checkpoints"], e["model_size"], "-", marker=".", color=COLORS[lab],
                           label=f"{lab} (slope {e['size_slope']:.2f}; {e['final_blocks']} blocks at the end)")
        ref = r["learners"]["DSG"]["regenerating"]["us_per_example_window"][-1]
        axes[0].loglog(mid[1:], ref * mid[1:] / mid[-1], "k:", lw=1, label="slope 1 reference")
        axes[0].set(xlabel="examples seen t", ylabel="learning time per example in the window (µs)",
                    title=f"DSG family: time per example vs t\nijcnn1, first {r['rows']:,} rows, batch "
                          f"{r['batch_size']}, 1 thread, {where}")
        axes[1].set(xlabel="examples seen t", ylabel="model size (random features = 2 × block size × blocks)",
                    title="model growth: UDSG/CDSG reuse blocks")
        paths.append(_save(fig, axes, out_dir / "scaling_t.png", {"fontsize": 8}))
    return paths


def print_slopes(results):
    rows = []
    if "D" in results:
        rows += [["vs D", name, fmt(e["slope"]), "1"] for name, e in results["D"]["learners"].items()]
    if "B" in results:
        rows += [["vs B", name, fmt(e["slope_steady"]), e["expected_slope"] or "?"]
                 for name, e in results["B"]["learners"].items()]
    if "t" in results:
        rows += [["vs t", f"{lab} ({mode})", fmt(e[mode]["slope"]), "1"]
                 for lab, e in results["t"]["learners"].items() for mode in ("regenerating", "store_omega")]
        rows += [["model size vs t", lab, fmt(e["size_slope"]), "1" if lab != "CDSG" else "≤ 1"]
                 for lab, e in results["t"]["learners"].items()]
    if "sweep" in results:
        s = results["sweep"]
        rows.append(["sweep n_jobs 1 → 2", f"{s['cells']} runs, {s['rows']:,} rows", f"{s['speedup']:.2f}x",
                     ">= 1.8x"])
    print("\n### Log-log slopes (least squares over the upper half of each range)\n")
    print(h.md_table(["sweep", "learner", "slope / speed-up", "expected"], rows))


SECTIONS = {"D": (section_d, report_d), "B": (section_b, report_b), "t": (section_t, report_t),
            "sweep": (section_sweep, report_sweep)}


def main(argv=None):
    ap = h.parser(__doc__, repeats=3, json=False)
    ap.add_argument("--out", default=None, help="folder of the PNGs and scaling.json (default docs/figures; "
                                                "--quick: a temporary folder)")
    ap.add_argument("--only", default="D,B,t,sweep", help="comma-separated sections: D, B, t, sweep")
    ap.add_argument("--rows-d", type=int, default=20_000, help="prefix rows of the D sweep (20000)")
    ap.add_argument("--rows-b", type=int, default=None, help="prefix rows of every learner in the B sweep "
                                                              "(default: per learner, see BUDGETED)")
    ap.add_argument("--rows-t", type=int, default=20_000, help="prefix rows of the t sweep (20000)")
    ap.add_argument("--sweep-rows", type=int, default=FULL, help="rows of the sweep section (141691)")
    ap.add_argument("--sweep-repeats", type=int, default=1, help="repeats of the sweep section (1)")
    ap.add_argument("--dims", default="50,100,200,500,1000,2000,4000", help="D values")
    ap.add_argument("--budgets", default="100,200,400,1000,2000", help="B values")
    ap.add_argument("--learners-b", default=None, help="comma-separated subset of the B sweep's learners")
    ap.add_argument("--uncapped", action="store_true", help="run Projectron++ at every budget")
    ap.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, one repeat, seconds")
    ap.add_argument("--replot", action="store_true", help="measure nothing: print the tables and draw the "
                                                          "figures again from OUT/scaling.json")
    ns = ap.parse_args(argv)
    if ns.quick:
        ns.repeats, ns.rows_d, ns.rows_b, ns.rows_t = 1, 2000, 3000, 1280
        ns.sweep_rows, ns.dims, ns.budgets = 2000, "50,200,1000", "100,200"
    ns.dims = [int(v) for v in ns.dims.split(",")]
    ns.budgets = [int(v) for v in ns.budgets.split(",")]
    only = [s.strip() for s in ns.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in SECTIONS]
    if unknown:
        raise SystemExit(f"bench_scaling: unknown section(s) {unknown} (have {', '.join(SECTIONS)})")
    out_dir = Path(ns.out) if ns.out else (Path(tempfile.mkdtemp(prefix="bench-scaling-")) if ns.quick
                                           else h.REPO / "docs" / "figures")
    out_dir.mkdir(parents=True, exist_ok=True)

    js = out_dir / "scaling.json"
    if ns.replot:
        if not js.exists():
            raise SystemExit(f"bench_scaling: --replot needs {js}")
        results = json.loads(js.read_text())
        info = results["machine"]
        if "t" in results:
            derive_t(results["t"])
        print(f"figures of {js} (measured from {results['started']} by: {results['command']})")
    else:
        info = h.machine()
        print(h.machine_line(info))
        command = "python tools/bench_scaling.py " + " ".join(argv if argv is not None else sys.argv[1:])
        results = {"machine": info, "command": command.strip(), "started": time.strftime("%Y-%m-%d %H:%M:%S")}
        data = h.Data(ns.data_dir)
        t0 = time.time()
        try:
            for name in only:
                t = time.time()
                results[name] = SECTIONS[name][0](data, ns)
                results[name].update(section_seconds=time.time() - t, command=results["command"],
                                     measured=time.strftime("%Y-%m-%d %H:%M:%S"))
                sys.stdout.flush()
        finally:
            data.close()
        results["total_seconds"] = time.time() - t0
        kept = [name for name in SECTIONS if name not in only]
        if kept and js.exists():
            # a partial run (--only) replaces its sections and keeps the others' figures (each
            # section records when and by which command it was measured)
            old = json.loads(js.read_text())
            kept = [name for name in kept if name in old]
            for name in kept:
                results[name] = old[name]
            if kept:
                print(f"\nkept sections {', '.join(kept)} from the previous {js}")
    for name, (_, report) in SECTIONS.items():
        if name in results:
            report(results[name])
    print_slopes(results)
    paths = plots(results, out_dir, info)
    h.write_json(js, results)
    print("\nwrote " + ", ".join(str(p) for p in paths + [js]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
