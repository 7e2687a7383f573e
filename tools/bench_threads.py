"""Where does a second thread pay, and does the thread policy hold on a busy machine?

``support`` (default): for support sets of growing size, time predictions (the kernel row plus
the weighted sum) with 1 thread and with 2 threads forced parallel, alternately, medians over
repeats.  The smallest work size n_SV * (nnz + 8) above which 2 threads win every time is the
threshold SupportSet uses (``par_threshold``); its value in onlinekern/_core/support.pyx comes
from this table.  ``dsg``: the same for DSG's per-example prediction over m blocks (regenerated
or stored), by the core's work units.  Both force the threads (the thread policy is told the
machine is quiet): run them on a quiet machine.

``busy``: start ``--hogs`` CPU-bound processes (default 2), then run each learner with no
options (all cores allowed, the thread policy of onlinekern._core.threads deciding) and with
``n_threads=1``, alternately, over the first ``--rows`` rows of each data set; medians over
repeats and their ratio, worst first.  The policy holds when no ratio is far above 1.

    python tools/bench_threads.py [support|dsg] [--repeats 21]
    python tools/bench_threads.py busy [--hogs 2] [--rows 20000] [--repeats 3] [--learners a,b]
"""
import subprocess
import sys

import numpy as np
import scipy.sparse as sp

import harness as h

import onlinekern as ok
from onlinekern._core.threads import POLICY

# one default name per family (the CLI's spelling), the learners whose steps have parallel parts first
BUSY_LEARNERS = ["ogd-hinge", "perceptron", "projectron", "projectronpp", "rbp", "forgetron", "bpas",
                 "bsgd-removal", "bsgd-merge", "bogd-hinge", "bogdpp-hinge", "nogd-hinge", "fogd-hinge",
                 "rrf-hinge", "dualsgd-hinge", "dsg-hinge", "udsg-hinge", "cdsg-hinge", "sg"]
BUSY_SETS = {"w8a": ("w8a",), "ijcnn1": ("ijcnn1", "ijcnn1.t")}


def support_learner(n_sv, d, density, seed=0):
    """A kernel OGD with logistic loss adds every example: n_sv rows give n_sv SVs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_sv, d))
    if density < 1:
        X = sp.random(n_sv, d, density=density, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    y = rng.choice([-1.0, 1.0], n_sv)
    learner = ok.KernelOGD(loss="logistic", gamma=0.1, n_threads=1).fit(X, y)
    assert learner.n_support_ == n_sv
    Q = X[: min(n_sv, 400)]
    return learner, Q


def threads_table(head, cases, repeats):
    """Print a Markdown row per case: (cells, predict(threads), rows predicted); 1 thread against
    2 threads forced parallel, alternately, medians of ``repeats``; the rows as dicts."""
    print("| " + " | ".join(head + ["1 thread (µs)", "2 threads (µs)", "speed-up"]) + " |")
    print("|---|" + "---:|" * (len(head) + 2))
    out = []
    for cells, predict, n in cases:
        med, _ = h.side_by_side({t: (lambda t=t: predict(t)) for t in (1, 2)}, repeats)
        us1, us2 = med[1] / n * 1e6, med[2] / n * 1e6
        out.append(dict(zip(head, cells), us_1=us1, us_2=us2))
        print(f"| {' | '.join(map(str, cells))} | {us1:.2f} | {us2:.2f} | {h.ratios(med, 2)[1]:.2f}x |", flush=True)
    return out


def support_cases():
    for label, d, density in (("dense d=8 (cod-rna)", 8, 1.0), ("sparse d=22, 13 nnz (ijcnn1)", 22, 13 / 22),
                              ("sparse d=300, 12 nnz (w8a)", 300, 0.04)):
        for n_sv in (128, 256, 512, 1024, 2048, 4096, 8192):
            learner, Q = support_learner(n_sv, d, density)
            learner.core_.sv.par_threshold = 0              # the parallel path forced
            nnz = d if density == 1 else Q.nnz / Q.shape[0]
            yield ([label, n_sv, f"{nnz:.0f}", f"{n_sv * (nnz + 8):,.0f}"],
                   lambda t, L=learner, Q=Q: (setattr(L, "n_threads", t), L.decision_function(Q)), Q.shape[0])


def dsg_cases():
    rng = np.random.default_rng(0)
    for store in (False, True):
        for d, F in ((8, 32), (22, 32)):
            for m in (2, 4, 8, 16, 32, 64, 128):
                X = rng.normal(size=(4 * m, d))
                core = ok.DSG(batch_size=4, block_size=F, gamma=0.1, store_omega=store, n_threads=1).fit(
                    X, np.where(X[:, 0] > 0, 1, 0)).core_
                core.par_threshold = 0                       # the parallel path forced
                Q = rng.normal(size=(100, d))
                yield ([("stored" if store else "regenerating"), d, F, m, f"{core.work_units(d):.0f}"],
                       lambda t, c=core, Q=Q: (c.set_threads(t), c.predict_rows(Q)), len(Q))


def hogs(n):
    """Start ``n`` CPU-bound processes (a busy loop each); the caller terminates them."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def busy_table(args):
    """Each learner with no options against ``n_threads=1`` beside ``args.hogs`` busy processes."""
    data = h.Data(args.data_dir)
    names = args.learners.split(",") if args.learners else BUSY_LEARNERS
    rows = []
    procs = hogs(args.hogs)
    try:
        print(h.machine_line())
        for set_name, files in BUSY_SETS.items():
            X, y = data.load(*files, rows=args.rows)
            for name in names:
                fns = {t: (lambda t=t: ok.run_online(ok.make_learner(name, n_threads=t), X, y, seed=0))
                       for t in (None, 1)}
                med, _ = h.side_by_side(fns, args.repeats, seconds=lambda r: r.seconds)
                rows.append({"learner": name, "data": set_name, "rows": X.shape[0], "s_default": med[None],
                             "s_one_thread": med[1], "ratio": med[None] / med[1]})
                print(f"{name} {set_name}: default {med[None]:.2f} s, 1 thread {med[1]:.2f} s, "
                      f"ratio {med[None] / med[1]:.2f}", flush=True)
    finally:
        for p in procs:
            p.terminate()
        data.close()
    rows.sort(key=lambda r: -r["ratio"])
    print(f"\nbeside {args.hogs} CPU-bound processes, {args.rows:,} rows, medians of {args.repeats}; worst ratios first")
    print(h.md_table(["learner", "data", "default (s)", "1 thread (s)", "ratio"],
                     [[r["learner"], r["data"], f"{r['s_default']:.2f}", f"{r['s_one_thread']:.2f}",
                       f"{r['ratio']:.2f}"] for r in rows[:args.worst]]))
    return rows


def main(argv=None):
    ap = h.parser(__doc__, repeats=21)
    ap.add_argument("what", nargs="?", choices=("support", "dsg", "busy"), default="support")
    ap.add_argument("--hogs", type=int, default=2, help="busy: CPU-bound processes beside the runs (2)")
    ap.add_argument("--rows", type=int, default=20000, help="busy: rows of each data set (20000)")
    ap.add_argument("--learners", help="busy: comma-separated names (default: one per family)")
    ap.add_argument("--worst", type=int, default=10, help="busy: rows of the printed table (10)")
    args = ap.parse_args(argv)
    if args.what == "busy":
        h.write_json(args.json, {"machine": h.machine(), "hogs": args.hogs, "busy": busy_table(args)})
        return
    POLICY.reader = lambda: 0          # the calibration forces its threads: the machine counts as quiet
    print(h.machine_line())
    if args.what == "dsg":
        rows = threads_table(["mode", "d", "F", "blocks m", "work units"], dsg_cases(), args.repeats)
    else:
        rows = threads_table(["rows", "n_SV", "nnz", "work n_SV*(nnz+8)"], support_cases(), args.repeats)
    h.write_json(args.json, {"machine": h.machine(), args.what: rows})


if __name__ == "__main__":
    main()
