"""Does a budgeted learner cost O(B) per example?  Time one pass over ijcnn1 at B = 250 ... 2000.

Doubling the budget B should at most double the time per example.  Every registered learner
class with a ``budget`` parameter is included, with its default loss, ``--gamma`` and the papers'
values of the other parameters (``preset="paper"``); one pass in file order over ijcnn1 + ijcnn1.t, learning time only, medians of
``--repeats`` runs interleaved (repeat, learner, B).  Output: µs per example and the ratios
time(2B)/time(B), then mistake rates and final model sizes (a model that never reaches B does not
test its B-sized cost).  ``--steady`` also times a second pass without reset, with the model full
(no filling, no one-off switch such as NOGD's eigendecomposition).  ``--rank K`` holds NOGD's rank
at K (default round(0.2 B), so its O(kB) projection grows as B^2).

    python tools/bench_budget_scaling.py                               # every budgeted learner
    python tools/bench_budget_scaling.py --learners rbp,forgetron --rows 20000
"""
import sys
import time

import harness as h

import onlinekern as ok


def budgeted_learners():
    """{family name: class} of every registered learner class with a ``budget`` parameter (the
    family name runs its default loss)."""
    return {info["family"]: info["class"] for info in ok.available_learners().values()
            if "budget" in info["class"]._get_param_names()}


def make(cls, budget, gamma, threads, rank=None):
    """``cls`` at ``budget`` with the kernel width, threads and rank where it has them."""
    given = {"budget": budget, "rank": rank, "gamma": gamma, "n_threads": threads, "preset": "paper"}
    return cls(**{k: v for k, v in given.items() if v is not None and k in cls._get_param_names()})


def ratio_table(table, budgets, us, failed, tolerance, what):
    """Markdown: µs per example at each B, the ratios time(2B)/time(B), and whether all are <= 2."""
    head = ["learner"] + [f"B={b} (µs/ex, {what})" if i == 0 else f"B={b}" for i, b in enumerate(budgets)] + \
        [f"{b2}/{b1}" for b1, b2 in zip(budgets, budgets[1:])] + \
        ["all ratios <= 2" + (f" (1 + {tolerance:g})" if tolerance else "")]
    rows = []
    for name in table:
        ratios = [] if name in failed else [us[(name, b2)] / us[(name, b1)] for b1, b2 in zip(budgets, budgets[1:])]
        rows.append([name, f"failed: {failed[name]}"] if name in failed else
                    [name] + [f"{us[(name, b)]:.2f}" for b in budgets] + [f"{r:.2f}" for r in ratios]
                    + ["yes" if all(r <= 2.0 * (1 + tolerance) for r in ratios) else "no"])
    return h.md_table(head, rows)


def main(argv=None):
    ap = h.parser(__doc__, repeats=3)
    ap.add_argument("--rows", type=int, default=None, help="use the first N rows (default: all 141,691)")
    ap.add_argument("--budgets", default="250,500,1000,2000", help="comma-separated budgets")
    ap.add_argument("--learners", default=None,
                    help="comma-separated family names (default: every learner with a budget)")
    ap.add_argument("--gamma", type=float, default=1.0, help="kernel width g (1.0)")
    ap.add_argument("--threads", type=int, default=1, help="n_threads of every learner (1)")
    ap.add_argument("--tolerance", type=float, default=0.0,
                    help="measurement slack of the verdict: a ratio passes if <= 2 (1 + TOL) (0)")
    ap.add_argument("--steady", action="store_true",
                    help="also time a second pass with the model full (reset=False)")
    ap.add_argument("--rank", type=int, default=None, help="NOGD's rank held fixed (default: 0.2 B)")
    ns = ap.parse_args(argv)

    table = budgeted_learners()
    if ns.learners:
        wanted = [w.strip() for w in ns.learners.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in table]
        if unknown:
            raise SystemExit(f"bench_budget_scaling: no budgeted learner {unknown} (have: {', '.join(table)})")
        table = {w: table[w] for w in wanted}
    budgets = [int(b) for b in ns.budgets.split(",")]
    data = h.Data(ns.data_dir)
    X, y = data.load("ijcnn1", "ijcnn1.t", rows=ns.rows)
    data.close()
    print(h.machine_line(), file=sys.stderr)
    n = X.shape[0]
    print(f"ijcnn1: {n} rows, {X.shape[1]} features; gamma = {ns.gamma:g}, threads = {ns.threads}, "
          f"median of {ns.repeats}; learners: {', '.join(table)}", file=sys.stderr)

    times = {(name, b): [] for name in table for b in budgets}
    steady = {(name, b): [] for name in table for b in budgets}
    errors = {}
    sizes = {}
    failed = {}
    t_start = time.time()
    for rep in range(ns.repeats):
        for name, cls in table.items():
            for b in budgets:
                if name in failed:
                    continue
                try:
                    learner = make(cls, b, ns.gamma, ns.threads, ns.rank)
                    res = ok.run_online(learner, X, y, checkpoints=None)
                    if ns.steady:
                        steady[(name, b)].append(ok.run_online(learner, X, y, checkpoints=None, reset=False).seconds)
                except Exception as exc:  # noqa: BLE001 - report and go on with the others
                    failed[name] = f"{type(exc).__name__}: {exc}"
                    continue
                times[(name, b)].append(res.seconds)
                errors[(name, b)] = res.error
                sizes[(name, b)] = res.model_size
                print(f"  repeat {rep + 1}: {name:<14} B={b:<5} {1e6 * res.seconds / n:9.2f} us/example, "
                      f"error {res.error:.2f}, size {res.model_size}  [{time.time() - t_start:.0f} s]",
                      file=sys.stderr, flush=True)

    us = {k: 1e6 * h.median(v) / n for k, v in times.items() if v}
    us_steady = {k: 1e6 * h.median(v) / n for k, v in steady.items() if v}
    print(ratio_table(table, budgets, us, failed, ns.tolerance, "one pass from an empty model"))
    print()
    if ns.steady:
        print(ratio_table(table, budgets, us_steady, failed, ns.tolerance, "second pass, model full"))
        print()
    print(h.md_table(["learner"] + [f"B={b}: error (size)" for b in budgets],
                     [[name] + [f"{errors[(name, b)]:.2f} ({sizes[(name, b)]})" for b in budgets]
                      for name in table if name not in failed]))
    if ns.json:
        h.write_json(ns.json, {"machine": h.machine(), "rows": n, "gamma": ns.gamma, "threads": ns.threads,
                               "repeats": ns.repeats, "budgets": budgets,
               "us_per_example": {f"{k[0]}@{k[1]}": v for k, v in us.items()},
               "us_per_example_steady": {f"{k[0]}@{k[1]}": v for k, v in us_steady.items()}, "rank": ns.rank,
               "error": {f"{k[0]}@{k[1]}": v for k, v in errors.items()},
               "model_size": {f"{k[0]}@{k[1]}": v for k, v in sizes.items()}, "failed": failed})


if __name__ == "__main__":
    main()
