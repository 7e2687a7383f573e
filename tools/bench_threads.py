"""Where does a second thread pay for a prediction?

``support`` (default): for support sets of growing size, time predictions (the kernel row plus
the weighted sum) with 1 thread and with 2 threads forced parallel, alternately, medians over
repeats.  The smallest work size n_SV * (nnz + 8) above which 2 threads win every time is the
threshold SupportSet uses (``par_threshold``); its value in onlinekern/_core/support.pyx comes
from this table.  ``dsg``: the same for DSG's per-example prediction over m blocks (regenerated
or stored), by the core's work units.

    python tools/bench_threads.py [support|dsg] [--repeats 21]
"""
import numpy as np
import scipy.sparse as sp

import harness as h

import onlinekern as ok


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


def main(argv=None):
    ap = h.parser(__doc__, repeats=21, data=False)
    ap.add_argument("what", nargs="?", choices=("support", "dsg"), default="support")
    args = ap.parse_args(argv)
    print(h.machine_line())
    if args.what == "dsg":
        rows = threads_table(["mode", "d", "F", "blocks m", "work units"], dsg_cases(), args.repeats)
    else:
        rows = threads_table(["rows", "n_SV", "nnz", "work n_SV*(nnz+8)"], support_cases(), args.repeats)
    h.write_json(args.json, {"machine": h.machine(), args.what: rows})


if __name__ == "__main__":
    main()
