"""Wide sparse data, side by side with the compact file (issue 26): what runs, at what cost.

    python tools/bench_wide.py                       # a9a, 5,000 rows, 2^22 columns; text stream 20,000 rows
    python tools/bench_wide.py --rows 0 --text-rows 500000 --json wide.json --md wide.md   # issue 26's sizes

Three parts, every run in its own process (``harness.run_measured``: exit status, wall seconds,
the process's own peak RSS; its address space capped by ``--limit-mb`` so a learner that still
allocates per column fails with MemoryError instead of crowding the machine):

1. **Width selection**: ``kernels.width_candidates`` on the compact file and on its wide copy
   (the file's columns scattered into ``--columns`` by ``tools/scatter_columns.py``'s seeded
   one-to-one map): seconds of the call, peak RSS of the process (loading included; the
   process that only loads the file is measured too) and whether the candidates are equal.
2. **Every registered learner** (one name per family) through ``python -m onlinekern.train`` on
   the compact file and on the wide copy, with no options and with ``--preset paper -g 0.05``:
   online mistake rate (RMSE for a regression-only learner: sg), learning seconds, peak RSS,
   model-file size (``--model``).  A run that
   fails (MemoryError, out of memory, any exit status) is a cell with its status and last words.
3. **The text-like stream** (``tools/make_text_stream.py``) through ``train --stream`` for
   fogd-hinge, rrf-hinge, bsgd-merge, nogd-hinge and bpas at 2^16, 2^20 and 2^24 columns (the same
   rows, words in other columns): mistake rate against the minority-class share (the majority
   predictor's error), seconds, peak RSS.

Writes JSON (``--json``, harness.write_json) and a Markdown table (``--md``, and stdout).
"""
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

import harness as h

import onlinekern as ok

TOOLS = Path(__file__).resolve().parent
TEXT_LEARNERS = ("fogd-hinge", "rrf-hinge", "bsgd-merge", "nogd-hinge", "bpas")
TEXT_WIDTHS = (1 << 16, 1 << 20, 1 << 24)
CONFIGS = {"default": [], "paper": ["--preset", "paper", "-g", "0.05"]}

SELECT = r"""
import json, sys, time
import onlinekern as ok
from onlinekern import kernels
X, y = ok.load_libsvm(sys.argv[1])
if sys.argv[2] == "select":
    t = time.perf_counter()
    c = kernels.width_candidates(X, 0)
    sec = time.perf_counter() - t
    print(json.dumps({"seconds": sec, "gammas": [g for _, g in c], "n_features": X.shape[1],
                      "scaled": [s is not None for s, _ in c]}))
else:
    print(json.dumps({"n_features": X.shape[1]}))
"""


def env():
    """The environment of a child: this worktree's onlinekern first on the path."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(h.REPO)] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    return e


def cell(run):
    """A failed run's cell text: its status and the last line it wrote to stderr."""
    last = [l for l in (run.get("stderr") or "").strip().splitlines() if l.strip()]
    why = last[-1].split("error: ", 1)[-1] if last else ""
    return f"failed ({run['status']}): {why[:90]}"


def width_selection(files, limit_mb, timeout):
    """Part 1: width_candidates on each file (and the load alone), in separate processes."""
    out = {}
    for tag, path in files.items():
        load = h.run_measured([sys.executable, "-c", SELECT, str(path), "load"], timeout, env(), limit_mb)
        run = h.run_measured([sys.executable, "-c", SELECT, str(path), "select"], timeout, env(), limit_mb)
        entry = {"status": run["status"], "peak_rss_mb": run["peak_rss_mb"],
                 "load_only_peak_rss_mb": load["peak_rss_mb"], "wall": run["seconds"]}
        if run["status"] == 0:
            entry.update(json.loads(run["stdout"].strip().splitlines()[-1]))
        else:
            entry["failure"] = cell(run)
        out[tag] = entry
    return out


def train_run(name, path, config, workdir, limit_mb, timeout, stream=False, extra=()):
    """One ``python -m onlinekern.train`` run; its figures or its failure."""
    model = Path(workdir) / "m.npz"
    js = Path(workdir) / "r.json"
    for p in (model, js):
        if p.exists():
            p.unlink()
    cmd = [sys.executable, "-m", "onlinekern.train", "-a", name, str(path), "-q", "--model", str(model),
           "--json", str(js)] + CONFIGS[config] + (["--stream"] if stream else []) + list(extra)
    run = h.run_measured(cmd, timeout, env(), limit_mb)
    entry = {"status": run["status"], "wall": run["seconds"], "peak_rss_mb": run["peak_rss_mb"]}
    if run["status"] == 0 and js.exists():
        doc = json.loads(js.read_text())
        r = doc["runs"][0]
        entry.update({"error": r["rmse"] if doc["task"] == "regression" else r["mistake_rate"],
                      "metric": "rmse" if doc["task"] == "regression" else "mistake %", "seconds": r["seconds"],
                      "model_size": r["model_size"], "model_bytes": model.stat().st_size if model.exists() else None,
                      "n_features": doc["n_features"]})
    else:
        entry["failure"] = cell(run)
    return entry


def seeded_runs(name, path, config, workdir, limit_mb, timeout, seeds):
    """``train_run`` once per learner seed (``train --seed``): the mean error over the seeds (each
    in ``errors``), the median learning seconds, the largest peak RSS; the first failure if any
    run fails.  No seeds: one run with the default seed."""
    if not seeds:
        return train_run(name, path, config, workdir, limit_mb, timeout)
    runs = [train_run(name, path, config, workdir, limit_mb, timeout, extra=("--seed", str(s))) for s in seeds]
    bad = [r for r in runs if r["status"] != 0]
    if bad:
        return bad[0]
    entry = dict(runs[-1])
    entry.update({"seeds": list(seeds), "errors": [r["error"] for r in runs],
                  "error": float(np.mean([r["error"] for r in runs])),
                  "seconds": float(np.median([r["seconds"] for r in runs])),
                  "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)})
    return entry


def fmt(e, key, spec):
    return format(e[key], spec) if e.get(key) is not None else "-"


def main(argv=None):
    ap = h.parser(__doc__, repeats=None)
    ap.add_argument("--data", default="a9a", help="shared data set for parts 1-2 (default a9a)")
    ap.add_argument("--rows", type=int, default=5000, help="its first ROWS rows (0: all; default 5000)")
    ap.add_argument("--columns", type=int, default=1 << 22, help="width of the wide copy (default 2^22)")
    ap.add_argument("--text-rows", type=int, default=20000, help="rows of the text stream (default 20000)")
    ap.add_argument("--learners", help="comma-separated names for part 2 (default: one per family) and part 3 "
                    "(a subset of its five)")
    ap.add_argument("--parts", default="1,2,3", help="which parts to run (default 1,2,3)")
    ap.add_argument("--limit-mb", type=int, default=6000, help="address-space cap of each run (MB; default 6000)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds before a run is stopped (default 600)")
    ap.add_argument("--md", help="also write the Markdown tables here")
    ap.add_argument("--seed", type=int, default=0, help="seed of the column maps and the text stream")
    ap.add_argument("--learner-seeds", help="comma-separated learner seeds for part 2 (train --seed): each "
                    "cell the mean error over them (default: one run, seed 0)")
    ap.add_argument("--text-dir", help="keep the text streams here (text<columns>.svm) and reuse those present "
                    "(written by the same --seed and --text-rows)")
    ns = ap.parse_args(argv)
    parts = {int(p) for p in ns.parts.split(",") if p.strip()}
    seeds = [int(v) for v in ns.learner_seeds.split(",") if v.strip()] if ns.learner_seeds else []
    data = h.Data(ns.data_dir)
    work = Path(tempfile.mkdtemp(prefix="onlinekern-wide-"))
    doc = {"machine": h.machine(), "data": ns.data, "rows": ns.rows, "columns": ns.columns,
           "text_rows": ns.text_rows, "limit_mb": ns.limit_mb, "seed": ns.seed, "learner_seeds": seeds}
    md = [h.machine_line(doc["machine"]), ""]
    try:
        compact = work / f"{ns.data}.svm"
        src = data.plain(ns.data)
        with open(src) as fin, open(compact, "w") as fout:
            for i, line in enumerate(fin):
                if ns.rows and i >= ns.rows:
                    break
                fout.write(line)
        wide = work / f"{ns.data}.wide.svm"
        scatter = h.run_measured([sys.executable, str(TOOLS / "scatter_columns.py"), str(compact), str(wide),
                                  "--columns", str(ns.columns), "--seed", str(ns.seed)], None, env())
        if scatter["status"] != 0:
            raise SystemExit(f"scatter_columns failed: {scatter['stderr']}")
        files = {"compact": compact, "wide": wide}
        what = f"{ns.data}{'' if not ns.rows else f' ({ns.rows} rows)'}"

        if 1 in parts:
            sel = width_selection(files, ns.limit_mb, ns.timeout)
            doc["width_selection"] = sel
            rows = []
            for tag in files:
                e = sel[tag]
                rows.append([tag, e.get("n_features", "-"), fmt(e, "seconds", ".3f"), fmt(e, "peak_rss_mb", ".0f"),
                             fmt(e, "load_only_peak_rss_mb", ".0f"), e.get("failure", "ok")])
            same = sel["compact"].get("gammas") == sel["wide"].get("gammas")
            doc["width_selection"]["same_candidates"] = same
            md += [f"### Width selection on {what}, compact and scattered into {ns.columns} columns", "",
                   h.md_table(["file", "columns", "seconds", "peak RSS MB", "load alone MB", "status"], rows),
                   "", f"same gamma candidates: {same}", ""]

        if 2 in parts:
            names = (ns.learners.split(",") if ns.learners else
                     sorted(n for n, i in ok.available_learners().items() if n == i["family"]))
            res = {}
            for config in CONFIGS:
                rows = []
                for name in names:
                    pair = {tag: seeded_runs(name, path, config, work, ns.limit_mb, ns.timeout, seeds)
                            for tag, path in files.items()}
                    res.setdefault(config, {})[name] = pair
                    c, w = pair["compact"], pair["wide"]
                    row = [name]
                    for e in (c, w):
                        row += ([fmt(e, "error", ".2f"), fmt(e, "seconds", ".2f"), fmt(e, "peak_rss_mb", ".0f"),
                                 fmt(e, "model_bytes", ",")] if e["status"] == 0 else [e["failure"], "", "", ""])
                    rows.append(row)
                    print(f"[{config}] {name}: compact {c.get('error', c.get('failure'))}, wide {w.get('error', w.get('failure'))}",
                          file=sys.stderr, flush=True)
                opts = " ".join(CONFIGS[config]) or "no options"
                md += [f"### Every learner on {what}: compact vs {ns.columns} columns ({opts})", "",
                       h.md_table(["learner", "compact %", "s", "RSS MB", "model B", "wide %", "s", "RSS MB", "model B"], rows), ""]
            doc["learners"] = res

        if 3 in parts and ns.text_rows:
            sys.path.insert(0, str(TOOLS))
            import make_text_stream as mts
            names = [n for n in TEXT_LEARNERS if not ns.learners or n in ns.learners.split(",")]
            res, rows, paths, info = {}, [], {}, {}
            for width in TEXT_WIDTHS:              # every width first: a learner's widths then run back to back
                paths[width] = Path(ns.text_dir or work) / f"text{width}.svm"
                gen = mts.TextStream(width, ns.seed)
                if not (ns.text_dir and paths[width].exists()):   # else kept from an earlier run
                    gen.write(paths[width], ns.text_rows)
                nnz = n_pos = 0
                for _, vals, _, labels in gen.chunks(ns.text_rows):
                    nnz += len(vals)
                    n_pos += int((labels > 0).sum())
                info[width] = {"minority": 100.0 * min(n_pos, ns.text_rows - n_pos) / ns.text_rows,
                               "nnz_per_row": nnz / ns.text_rows}
            for name in names:
                for width in TEXT_WIDTHS:
                    e = train_run(name, paths[width], "default", work, ns.limit_mb, ns.timeout, stream=True,
                                  extra=["--classes=-1,1", f"--n-features={width}"])
                    e.update(info[width])
                    res.setdefault(name, {})[width] = e
                    print(f"[text 2^{width.bit_length() - 1}] {name}: {e.get('error', e.get('failure'))} "
                          f"({e.get('seconds', e['wall']):.1f} s, {e['peak_rss_mb']:.0f} MB)", file=sys.stderr, flush=True)
                    h.write_json(ns.json, {**doc, "text_stream": res})      # a stopped run keeps its cells
            for name in names:
                row = [name]
                for width in TEXT_WIDTHS:
                    e = res[name][width]
                    row += ([fmt(e, "error", ".2f"), fmt(e, "seconds", ".1f"), fmt(e, "peak_rss_mb", ".0f")]
                            if e["status"] == 0 else [e["failure"], "", ""])
                secs = [res[name][w].get("seconds") for w in TEXT_WIDTHS]
                row.append(f"{max(secs) / min(secs):.2f}" if all(secs) else "-")
                rows.append(row)
            head = ["learner"]
            for width in TEXT_WIDTHS:
                head += [f"2^{width.bit_length() - 1} %", "s", "RSS MB"]
            head.append("slowest / fastest s")
            minority = info[TEXT_WIDTHS[0]]["minority"]
            md += [f"### Text-like stream, {ns.text_rows} rows, train --stream (no options; minority share "
                   f"{minority:.2f} %)", "", h.md_table(head, rows), ""]
            doc["text_stream"] = res
    finally:
        data.close()
        for p in work.iterdir():
            p.unlink()
        work.rmdir()
    text = "\n".join(md)
    print(text)
    if ns.md:
        from onlinekern.io.atomic import atomic_write
        atomic_write(ns.md, text + "\n")
    h.write_json(ns.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
