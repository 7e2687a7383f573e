"""This checkout against another build of onlinekern, side by side: learning time per cell.

Answers "did this change make anything slower?" with ratios measured in one script: every cell
(learner, data, parameters) runs in a fresh process of each checkout in turn, ``--repeats``
rounds, so drifts in the machine's load hit both alike; the figure is the median learning time
(``run_online``'s seconds: loading excluded) and its ratio this / baseline.  Errors (mistake
rate in %, or RMSE) are compared too (the same mistakes are expected unless the change is meant to alter them).

The baseline is any checkout with its extensions built in place, e.g. the previous commit::

    git worktree add --detach ../base HEAD~1 && (cd ../base && python setup.py build_ext --inplace)
    python tools/bench_versus.py --baseline ../base --repeats 5 --json versus.json

``--files`` takes LIBSVM files instead (each learner of ``--only`` over each, with no options or
``--params``).
The default cells are the dense-data timings the wide-sparse work must not slow down: the
random-feature and budgeted learners of docs/performance.md at their paper settings on ijcnn1
and cod-rna.tr (``--rows`` caps every data set).
"""
import json
import subprocess
import sys
from pathlib import Path

import harness as h

# (learner, data, parameters): the paper settings of docs/performance.md's rows
CELLS = [
    ("fogd-hinge", "ijcnn1", dict(gamma=0.5, eta=1.0, n_components=1000, preset="paper")),
    ("rrf-hinge", "ijcnn1", dict(gamma=0.5, eta=1.0, eta_gamma=0.01, n_components=100, preset="paper")),
    ("bogd-hinge", "ijcnn1", dict(gamma=1.0, budget=1000, preset="paper")),
    ("nogd-hinge", "cod-rna.tr", dict(gamma=1.0, budget=1000, preset="paper")),
    ("bsgd-merge", "ijcnn1", dict(gamma=1.0, budget=1000, preset="paper")),
    ("bpas", "cod-rna.tr", dict(gamma=1.0, budget=1000, preset="paper")),
    ("perceptron", "cod-rna.tr", dict(gamma=1.0, preset="paper")),
    ("ogd-hinge", "cod-rna.tr", dict(gamma=1.0, preset="paper")),
]

WORKER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import onlinekern as ok
X, y = ok.load_libsvm(sys.argv[2])
rows = int(sys.argv[5])
if rows:
    X, y = X[:rows], y[:rows]
est = ok.make_learner(sys.argv[3], n_threads=1, **json.loads(sys.argv[4]))
r = ok.run_online(est, X, y, seed=0, run=0, checkpoints=None)
print(json.dumps({"seconds": r.seconds, "error": r.error, "file": ok.__file__}))
"""


def run_cell(tree, path, name, params, rows):
    """One fresh process of the checkout ``tree``: (learning seconds, error)."""
    out = subprocess.run([sys.executable, "-c", WORKER, str(tree), str(path), name, json.dumps(params), str(rows)],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if not res["file"].startswith(str(Path(tree).resolve())):
        raise SystemExit(f"{tree}: the worker imported {res['file']}, not this checkout's onlinekern")
    return res


def main(argv=None):
    ap = h.parser(__doc__, repeats=5)
    ap.add_argument("--baseline", required=True, help="checkout of the baseline build (extensions built in place)")
    ap.add_argument("--rows", type=int, default=0, help="cap every data set at this many rows (0: all)")
    ap.add_argument("--only", help="comma-separated learners of the default cells")
    ap.add_argument("--files", help="comma-separated LIBSVM files instead of the default cells: each learner "
                                    "of --only over each, with no options (e.g. prefixes of the text-like stream)")
    ap.add_argument("--params", default="{}", help="JSON parameters of the --files cells (default: none)")
    a = ap.parse_args(argv)
    data = h.Data(a.data_dir)
    trees = {"this": h.REPO, "baseline": Path(a.baseline).resolve()}
    if a.files:
        if not a.only:
            ap.error("--files needs --only (the learners to run on them)")
        cells = [(name, Path(f), json.loads(a.params)) for f in a.files.split(",") for name in a.only.split(",")]
    else:
        cells = [c for c in CELLS if not a.only or c[0] in a.only.split(",")]
    print(h.machine_line(), flush=True)
    rows, out = [], []
    for name, dname, params in cells:
        path = dname if isinstance(dname, Path) else data.plain(dname)
        dname = getattr(dname, "name", dname)
        fns = {k: (lambda t=t: run_cell(t, path, name, params, a.rows)) for k, t in trees.items()}
        med, res = h.side_by_side(fns, a.repeats, seconds=lambda r: r["seconds"])
        err = {k: res[k][0]["error"] for k in trees}
        ratio = med["this"] / med["baseline"]
        rows.append([name, dname, f"{med['this']:.3f}", f"{med['baseline']:.3f}", f"{ratio:.3f}",
                     f"{err['this']:.3f}", f"{err['baseline']:.3f}"])
        out.append({"learner": name, "data": dname, "params": params, "seconds": med, "ratio": ratio,
                    "error": err, "runs": {k: [r["seconds"] for r in v] for k, v in res.items()}})
        print(rows[-1], flush=True)
    print(h.md_table(["learner", "data", "this (s)", "baseline (s)", "ratio", "error this", "error baseline"], rows))
    if a.json:
        h.write_json(a.json, {"machine": h.machine(), "baseline": str(trees["baseline"]), "rows": a.rows,
                              "repeats": a.repeats, "cells": out})
    data.close()


if __name__ == "__main__":
    main()
