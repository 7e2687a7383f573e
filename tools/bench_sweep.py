"""Parallel speed-up of ``onlinekern.sweep``: the same sweep with n_jobs = 1 and n_jobs = 2.

A 10-run sweep of three learners (fogd-hinge and fogd-logit with D = 400, ogd-hinge) on ijcnn1
(the first ``--rows`` rows of the LIBSVM training file, so kernel OGD stays modest), timed
wall-clock with n_jobs = 1 and n_jobs = N alternately (``--repeats`` times, medians reported),
checking that every run gives identical numbers.  The machine is shared: the load average is
printed with the figures.

    python tools/bench_sweep.py                    # ../shared/data/ijcnn1.xz, 20000 rows
    python tools/bench_sweep.py --rows 49990 --repeats 3 --json out.json
"""
import os
import sys
import time

import harness as h

from onlinekern.io import load_libsvm
from onlinekern.sweep import sweep

ALGORITHMS = ["fogd-hinge", "fogd-logit", "ogd-hinge"]


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
        parallel = time.perf_counter() - t0
    return parallel / serial


def numbers(records):
    return [(r["key"], r["status"], r["mistake_rate"], r["model_size"], r["curve"]["mistake_rate"])
            for r in sorted(records, key=lambda r: r["key"])]


def main(argv=None):
    p = h.parser(__doc__, repeats=1, data=False)
    p.add_argument("--data", default=str(h.DATA_DIR / "ijcnn1.xz"), help="a LIBSVM file (plain or compressed)")
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--jobs", type=int, default=2, help="n_jobs of the parallel sweep (default 2)")
    p.add_argument("--backend", default="loky")
    ns = p.parse_args(argv)
    X, y = load_libsvm(ns.data)
    X, y = X[:ns.rows], y[:ns.rows]
    data = {f"ijcnn1[:{ns.rows}]": (X, y)}
    kw = dict(runs=ns.runs, seed=0, params={"n_components": 400, "gamma": 0.5, "eta": 0.5},
              progress=False)
    times = {1: [], ns.jobs: []}
    busy = {1: [], ns.jobs: []}
    ref = None
    load0 = os.getloadavg()
    for rep in range(ns.repeats):
        for jobs in (1, ns.jobs):
            t0 = time.perf_counter()
            recs = sweep(ALGORITHMS, data, n_jobs=jobs, backend=ns.backend, **kw)
            times[jobs].append(time.perf_counter() - t0)
            # worker occupancy: task time over (workers x wall); ~1 means the engine kept every
            # worker busy, so a ratio above 1/jobs comes from CPUs not being free, not from it
            busy[jobs].append(sum(r["wall_seconds"] for r in recs) / (jobs * times[jobs][-1]))
            got = numbers(recs)
            if ref is None:
                ref = got
            elif got != ref:
                raise SystemExit(f"n_jobs={jobs}: numbers differ from the first sweep")
            print(f"repeat {rep + 1}: n_jobs={jobs}: {times[jobs][-1]:.2f} s, worker occupancy "
                  f"{busy[jobs][-1]:.2f}, load average {h.loadavg()}", flush=True)
    load1 = os.getloadavg()
    control = control_ratio(ns.jobs)
    t1, tn = h.median(times[1]), h.median(times[ns.jobs])
    out = {"rows": ns.rows, "runs": ns.runs, "algorithms": ALGORITHMS, "backend": ns.backend,
           "seconds_n_jobs_1": t1, f"seconds_n_jobs_{ns.jobs}": tn, "ratio": tn / t1,
           "identical": True, "cells": len(ref), "loadavg_before": load0, "loadavg_after": load1,
           "control_ratio": control,
           "occupancy_n_jobs_1": h.median(busy[1]),
           f"occupancy_n_jobs_{ns.jobs}": h.median(busy[ns.jobs]),
           "machine": h.machine()}
    print(f"{len(ref)} runs ({ns.runs} runs x {len(ALGORITHMS)} learners, {ns.rows} rows): "
          f"n_jobs=1 {t1:.2f} s, n_jobs={ns.jobs} {tn:.2f} s, ratio {tn / t1:.3f}; "
          f"identical numbers: yes; worker occupancy {h.median(busy[1]):.2f} / "
          f"{h.median(busy[ns.jobs]):.2f}; load average {load0[0]:.2f} -> {load1[0]:.2f} "
          f"on {os.cpu_count()} cores; control (busy loops in {ns.jobs} processes / serial): "
          f"{control:.2f}")
    h.write_json(ns.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
