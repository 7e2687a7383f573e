"""Where does a second thread pay for the kernel sum over support vectors?

For support sets of growing size, time predictions (the kernel row plus the weighted sum) with
1 thread and with 2 threads forced parallel, alternately, medians over repeats.  The smallest
work size n_SV * (nnz + 8) above which 2 threads win every time is the threshold SupportSet
uses (``par_threshold``); its value in onlinekern/_core/support.pyx comes from this script.

    python tools/bench_threads.py [--repeats 21]
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


def main(argv=None):
    args = h.parser(__doc__, repeats=21, data=False).parse_args(argv)
    print(h.machine_line())
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
