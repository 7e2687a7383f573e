"""Do the defaults learn?  Every registered learner x every shared data set of its task.

``--rows all`` is the whole-stream mode: every data set at full length (ijcnn1 = ijcnn1 +
ijcnn1.t, 141,691 rows), scaled on all its rows, with each run stopped and recorded as failed past
``--max-seconds``; the report adds the slowest cells.  Its yardstick for the budgeted learners is
the ``whole-stream-tuned`` experiment file (their own tuned errors over the same streams).

    python tools/bench_defaults.py --rows all --out docs/figures/defaults_whole.jsonl --max-seconds 300

For each cell -- the first ``--rows`` rows (5,000) of permutation 0 of seed 0, once with the
features as in the file ("raw") and once min-max scaled to [0, 1] on those rows ("scaled"),
targets as in the file -- one online pass with no options at all, and the trivial online
predictor on the same stream (the most frequent label so far, or the running mean).  A cell
*learns* when the mistake rate is <= 0.8 x the trivial one, or the RMSE <= 0.9 x.  With
``--tuned`` it also runs the learner's own tuned error (``onlinekern.tune`` on a 10 % subset with
the papers' preset and grid, then one pass with the chosen point), and the cells where no learner
learns even tuned count as learning when the default is within 1.1 x the best tuned learner
(``--report`` gives both counts: under the bar alone, and with that rule; ``--tuned-from`` takes
the tuned errors of experiment files such as ``whole-stream-tuned`` and ``hard-sets-tuned``).

    python tools/bench_defaults.py --data-dir ../shared/data --out defaults.jsonl   # resumable

Unbudgeted kernel OGD and the doubly stochastic family cost O(t^2) per pass (up to minutes per
cell at 5,000 rows on 2 cores); ``--slow-rows N`` runs them on the first N rows of the same
permutation (default: all ``--rows``, as in BENCHMARKS.md).
    python tools/bench_defaults.py --out defaults.jsonl --report            # tables + plot only
    python tools/bench_defaults.py --only fogd-hinge,ogd-l2 --sets a9a,abalone --tuned
"""
import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import harness as h
import onlinekern as ok
from onlinekern.preprocessing import FeatureScaler
from onlinekern.protocol import trivial_error
from onlinekern.seeding import permutation

SETS = {
    "binary": ["a9a", "ijcnn1", "cod-rna.tr", "w8a", "magic04", "mushrooms", "australian",
               "german.numer", "splice", "svmguide1"],
    "multiclass": ["pendigits", "letter.scale", "poker"],
    "regression": ["casp", "cadata", "abalone"],
}
RATIO = {"binary": 0.8, "multiclass": 0.8, "regression": 0.9}


WHOLE = {"ijcnn1": ("ijcnn1", "ijcnn1.t")}     # the files of a whole stream, where more than one


def load_cell(data, name, rows):
    """The first ``rows`` rows (None: all, the whole stream's files) of permutation 0 of seed 0 of
    ``name`` (``data``: a harness.Data)."""
    X, y = data.load(*(WHOLE.get(name, (name,)) if rows is None else (name,)))
    p = permutation(0, 0, X.shape[0])[:rows]
    return X[p], np.asarray(y)[p]


class TooSlow(Exception):
    """A run went past ``--max-seconds``."""


def task_params(name, task):
    """``{"task": ...}`` for learners with a ``task`` parameter, else ``{}``."""
    if "task" in ok.available_learners()[name]["class"]._get_param_names():
        return {"task": "regression" if task == "regression" else "classification"}
    return {}


def run_cell(name, task, X, y, max_seconds=None):
    """(error, seconds, chosen, failure) of one pass with the defaults; error inf if it failed or
    went past ``max_seconds`` (checked at the protocol's checkpoints)."""
    def stop(n, mis, sq, size, sec):
        if max_seconds is not None and sec > max_seconds:
            raise TooSlow(f"stopped after {sec:.0f} s at example {n:,} of {len(y):,}")
    try:
        learner = ok.make_learner(name, **task_params(name, task))
        res = ok.run_online(learner, X, y, checkpoints="default" if max_seconds else None, callback=stop)
        return float(res.error), float(res.seconds), learner.chosen_params(), None
    except (ValueError, FloatingPointError, MemoryError, TooSlow) as exc:
        return math.inf, 0.0, None, f"{type(exc).__name__}: {exc}"


def tuned_cell(name, task, X, y):
    """The learner's own tuned error: papers' grid on a 10 % subset, then one pass."""
    fixed = {"preset": "paper", **task_params(name, task)}
    try:
        best = ok.tune(name, X, y, params=fixed, subset=0.1, seed=0, n_jobs=1).best_params
        return float(ok.run_online(ok.make_learner(name, **best), X, y).error), best
    except (ValueError, FloatingPointError, MemoryError) as exc:
        return math.inf, {"error": str(exc)}


SLOW = ("ogd", "dsg", "udsg", "cdsg")    # families measured on --slow-rows rows (O(t^2) passes)


def distinct_learners():
    """Registered names without aliases: ``bogd`` and ``bogd-hinge`` are one learner (the name
    with the loss suffix is kept)."""
    seen = {}
    for name, info in ok.available_learners().items():
        key = (info["class"], info["loss"])
        if key not in seen or "-" in name and "-" not in seen[key]:
            seen[key] = name
    return [n for n in ok.available_learners() if n in seen.values()]


def cells(only, sets):
    for name in distinct_learners():
        info = ok.available_learners()[name]
        if only and name not in only:
            continue
        for task in info["tasks"]:
            for data in SETS[task]:
                if not sets or data in sets:
                    yield name, task, data


def measure(args):
    out = Path(args.out)
    done = {}
    if out.exists():
        for r in load(out):
            done[r["learner"], r["data"], r["features"]] = r
    cache, shared = {}, h.Data(args.data_dir)
    simd = h.machine()["simd"]
    with out.open("a") as f:
        for name, task, data in cells(args.only, args.sets):
            slow = ok.available_learners()[name]["family"] in SLOW and args.rows is not None
            rows = min(args.rows, args.slow_rows or args.rows) if slow else args.rows
            for features in ("raw", "scaled"):
                prev = done.get((name, data, features))
                if prev is not None and (not args.tuned or "tuned" in prev):
                    continue
                if (data, features, rows) not in cache:
                    X, y = load_cell(shared, data, rows)
                    if features == "scaled":
                        X = FeatureScaler(0.0, 1.0).fit(X).transform(X)
                    cache[data, features, rows] = (X, y, trivial_error(y, task))
                X, y, triv = cache[data, features, rows]
                t0 = time.perf_counter()
                if prev is None:
                    err, sec, chosen, why = run_cell(name, task, X, y, args.max_seconds)
                    rec = {"learner": name, "task": task, "data": data, "features": features,
                           "rows": int(len(y)), "default": err, "trivial": triv, "seconds": sec,
                           "chosen": chosen, "failure": why, "simd": simd}
                else:                  # a default measured earlier: add the tuned error to it
                    rec = {"learner": name, "data": data, "features": features}
                    err = prev["default"]
                if args.tuned:
                    rec["tuned"], rec["tuned_params"] = tuned_cell(name, task, X, y)
                rec["wall"] = time.perf_counter() - t0
                f.write(json.dumps(rec, default=float) + "\n"), f.flush()
                print(f"{name:18s} {data:13s} {features:6s} default {err:10.4g}  trivial {triv:10.4g}"
                      + (f"  tuned {rec['tuned']:10.4g}" if args.tuned else ""), flush=True)
    shared.close()


def learns(r, best, tuned=None):
    """The issue's criterion for one record.  ``best``: the lowest error any learner reached on the
    same (data, features, rows), default or tuned -- a data set counts as one that no learner learns
    only when none of them does, by either setting.  ``tuned``: the lowest *tuned* error there; if
    given, a cell of such a data set learns when its default is within 1.1 x that (the issue's
    words, "the best tuned learner"), else within 1.1 x ``best`` (stricter: a better default of
    one learner raises the bar for all)."""
    if not math.isfinite(r["default"]):
        return False
    if r["default"] <= RATIO[r["task"]] * r["trivial"]:
        return True
    key = (r["data"], r["features"], r["rows"])
    b, ref = best.get(key), (best if tuned is None else tuned).get(key)
    return b is not None and ref is not None and b > RATIO[r["task"]] * r["trivial"] and r["default"] <= 1.1 * ref


def load(path):
    """The cells of a results file: records of the same cell merged in order (a later ``--tuned``
    run adds its tuned error to the default measured before)."""
    cells_ = {}
    for line in Path(path).read_text().splitlines():
        r = json.loads(line)
        cells_.setdefault((r["learner"], r["data"], r["features"]), {}).update(r)
    return list(cells_.values())


def tuned_from(recs, path):
    """Add to the cells of ``recs`` the tuned errors of a sweep's results file (the ``run``
    records of an experiment such as ``whole-stream-tuned``: run 0 is permutation 0, the stream
    of the cell), unless the cell has its own.  The experiment's data set NAME is the raw cell of
    the shared set NAME (``cod-rna``: cod-rna.tr, ``german``: german.numer), NAME-scaled its
    min-max scaled cell (``scale = true``, as ``hard-sets-tuned``)."""
    names = {"cod-rna": "cod-rna.tr", "german": "german.numer"}
    tuned = {}
    for line in Path(path).read_text().splitlines():
        r = json.loads(line)
        if r.get("phase") == "run" and r.get("run") == 0 and r.get("status") == "ok":
            err = r["mistake_rate"] if r["rmse"] is None else r["rmse"]
            data, scaled = r["data"], r["data"].endswith("-scaled")
            data = data[:-len("-scaled")] if scaled else data
            tuned[r["algorithm"], names.get(data, data), "scaled" if scaled else "raw"] = (err, r["params"])
    for r in recs:
        hit = tuned.get((r["learner"], r["data"], r["features"]))
        if hit and "tuned" not in r:
            r["tuned"], r["tuned_params"] = hit
    return recs


def report(args):
    recs = load(args.out)
    for path in args.tuned_from or ():
        recs = tuned_from(recs, path)
    best_tuned, tuned_only = {}, {}
    for r in recs:
        key = (r["data"], r["features"], r["rows"])
        best_tuned[key] = min(best_tuned.get(key, math.inf), r["default"], r.get("tuned", math.inf))
        if math.isfinite(r.get("tuned", math.inf)):
            tuned_only[key] = min(tuned_only.get(key, math.inf), r["tuned"])
    rows = sorted({r["rows"] for r in recs})
    print(f"{len(recs)} cells of {' or '.join(map(str, rows))} rows\n")
    print("| features | cells | under the bar (%) | learn (strict) | % | learn, issue's rule (%) | non-finite or failed |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for feat in ("raw", "scaled"):
        sub = [r for r in recs if r["features"] == feat]
        n_bar = sum(math.isfinite(r["default"]) and r["default"] <= RATIO[r["task"]] * r["trivial"] for r in sub)
        n_ok = sum(learns(r, best_tuned) for r in sub)
        n_lit = sum(learns(r, best_tuned, tuned_only) for r in sub)
        bad = sum(not math.isfinite(r["default"]) for r in sub)
        print(f"| {feat} | {len(sub)} | {n_bar} ({100 * n_bar / max(len(sub), 1):.1f}) | {n_ok} | "
              f"{100 * n_ok / max(len(sub), 1):.1f} | {n_lit} ({100 * n_lit / max(len(sub), 1):.1f}) | {bad} |")
    for key, title in (("learner", "learner"), ("data", "data set")):
        print(f"\n| {title} | cells | learn (raw, issue's rule) | learn (scaled, issue's rule) | default within 1.25 x tuned |")
        print("|---|---:|---:|---:|---:|")
        for k in sorted({r[key] for r in recs}):
            sub = [r for r in recs if r[key] == k]
            raw = [r for r in sub if r["features"] == "raw"]
            sc = [r for r in sub if r["features"] == "scaled"]
            tuned = [r for r in sub if math.isfinite(r.get("tuned", math.inf))]
            close = (f"{sum(r['default'] <= 1.25 * r['tuned'] for r in tuned)}/{len(tuned)}"
                     if tuned else "-")
            print(f"| {k} | {len(sub)} | {sum(learns(r, best_tuned, tuned_only) for r in raw)}/{len(raw)} | "
                  f"{sum(learns(r, best_tuned, tuned_only) for r in sc)}/{len(sc)} | {close} |")
    hatch = {}
    for r in recs:
        if r["default"] > RATIO[r["task"]] * r["trivial"] and learns(r, best_tuned, tuned_only):
            hatch.setdefault((r["data"], r["features"], r["rows"], r["trivial"]), []).append(r["learner"])
    print("\ncells counted under the issue's rule (no learner learns this data set even tuned; default"
          " within 1.1 x the best tuned error):")
    for (data, feat, n, triv), names in sorted(hatch.items()):
        print(f"  {data} {feat}: threshold {1.1 * tuned_only[data, feat, n]:.4g}, trivial {triv:.4g}, "
              f"{len(names)} cells: {', '.join(names)}")
    slowest = sorted((r for r in recs if r.get("seconds")), key=lambda r: -r["seconds"])[:10]
    print("\nslowest cells: learner data features seconds (SIMD level)")
    for r in slowest:
        print(f"  {r['learner']} {r['data']} {r['features']} {r['seconds']:.1f} ({r.get('simd', '?')})")
    failed = [r for r in recs if not learns(r, best_tuned)]
    print(f"\ncells that do not learn under the strict rule ({len(failed)}): learner data features default / trivial"
          " [the learner's own tuned error there, and whether it too misses the rule]")
    for r in failed:
        own = ""
        if math.isfinite(r.get("tuned", math.inf)):
            miss = r["tuned"] > RATIO[r["task"]] * r["trivial"]
            own = f"  [tuned {r['tuned']:.4g}: {'misses too' if miss else 'learns'}]"
        print(f"  {r['learner']} {r['data']} {r['features']} {r['default']:.4g} / {r['trivial']:.4g}{own}")
    if args.plot and any("tuned" in r for r in recs):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 5))
        for feat, mark in (("raw", "o"), ("scaled", "x")):
            pts = [(r["tuned"] / r["trivial"], r["default"] / r["trivial"]) for r in recs
                   if r["features"] == feat and math.isfinite(r.get("tuned", math.inf))
                   and math.isfinite(r["default"]) and r["trivial"] > 0]
            if pts:
                a = np.array(pts)
                ax.scatter(a[:, 0], np.minimum(a[:, 1], 3), marker=mark, s=12, label=feat)
        ax.plot([0, 3], [0, 3], "k-", lw=0.8)
        ax.set(xlabel="tuned error / trivial", ylabel="default error / trivial (capped at 3)")
        ax.legend(), fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"\nplot written to {args.plot}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", default=str(h.DATA_DIR))
    p.add_argument("--rows", type=lambda v: None if v == "all" else int(v), default=5000,
                   help="rows of each stream (5000), or 'all': the whole stream")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="stop a run past this many seconds and record it as failed")
    p.add_argument("--slow-rows", type=int, default=None,
                   help=f"rows for the O(t^2) families {', '.join(SLOW)}")
    p.add_argument("--only", type=lambda s: set(s.split(",")), default=None, help="learner names")
    p.add_argument("--sets", type=lambda s: set(s.split(",")), default=None, help="data set names")
    p.add_argument("--tuned", action="store_true", help="also the learner's own tuned error (slow)")
    p.add_argument("--out", default="defaults.jsonl", help="JSONL results, appended (resumable)")
    p.add_argument("--report", action="store_true", help="only print the tables of --out")
    p.add_argument("--plot", help="PNG: default against tuned error, one point per cell")
    p.add_argument("--tuned-from", action="append",
                   help="a sweep's JSONL results (e.g. results/whole-stream-tuned.jsonl): tuned errors for "
                        "its cells (repeatable)")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    if not args.report:
        measure(args)
    report(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
