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


def predict_with(learner, Q, threads):
    """Predict Q with ``threads`` threads, the parallel path forced (threshold 0)."""
    learner.core_.sv.par_threshold = 0
    learner.n_threads = threads
    learner.decision_function(Q)


def dsg_table(repeats):
    """Per-example DSG prediction, 1 thread against 2 threads forced parallel, by work size."""
    rng = np.random.default_rng(0)
    rows = []
    print("| mode | d | F | blocks m | work units | 1 thread (µs) | 2 threads (µs) | speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for store in (False, True):
        for d, F in ((8, 32), (22, 32)):
            for m in (2, 4, 8, 16, 32, 64, 128):
                X = rng.normal(size=(4 * m, d))
                core = ok.DSG(batch_size=4, block_size=F, gamma=0.1, store_omega=store, n_threads=1).fit(
                    X, np.where(X[:, 0] > 0, 1, 0)).core_
                core.par_threshold = 0
                Q = rng.normal(size=(100, d))
                med, _ = h.side_by_side({t: (lambda t=t: (core.set_threads(t), core.predict_rows(Q))) for t in (1, 2)},
                                        repeats)
                t1, t2 = med[1] / len(Q), med[2] / len(Q)
                rows.append({"store": store, "d": d, "F": F, "m": m, "us_1": t1 * 1e6, "us_2": t2 * 1e6})
                print(f"| {'stored' if store else 'regenerating'} | {d} | {F} | {m} | {core.work_units(d):.0f} | "
                      f"{t1 * 1e6:.1f} | {t2 * 1e6:.1f} | {h.ratios(med, 2)[1]:.2f}x |", flush=True)
    return rows


def main(argv=None):
    ap = h.parser(__doc__, repeats=21, data=False)
    ap.add_argument("what", nargs="?", choices=("support", "dsg"), default="support")
    args = ap.parse_args(argv)
    print(h.machine_line())
    if args.what == "dsg":
        return h.write_json(args.json, {"machine": h.machine(), "dsg": dsg_table(args.repeats)})
    rows = []
    print("| rows | n_SV | nnz | work n_SV*(nnz+8) | 1 thread (µs) | 2 threads (µs) | speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, d, density in (("dense d=8 (cod-rna)", 8, 1.0), ("sparse d=22, 13 nnz (ijcnn1)", 22, 13 / 22),
                              ("sparse d=300, 12 nnz (w8a)", 300, 0.04)):
        for n_sv in (128, 256, 512, 1024, 2048, 4096, 8192):
            learner, Q = support_learner(n_sv, d, density)
            nnz = d if density == 1 else Q.nnz / Q.shape[0]
            med, _ = h.side_by_side({t: (lambda t=t: predict_with(learner, Q, t)) for t in (1, 2)}, args.repeats)
            t1, t2 = med[1] / Q.shape[0], med[2] / Q.shape[0]
            rows.append({"rows": label, "n_sv": n_sv, "nnz": nnz, "us_1": t1 * 1e6, "us_2": t2 * 1e6})
            print(f"| {label} | {n_sv} | {nnz:.0f} | {n_sv * (nnz + 8):,.0f} | {t1 * 1e6:.2f} | {t2 * 1e6:.2f} | {h.ratios(med, 2)[1]:.2f}x |", flush=True)
    h.write_json(args.json, {"machine": h.machine(), "rows": rows})


if __name__ == "__main__":
    main()
