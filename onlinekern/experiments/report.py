"""The papers' tables and curves from sweep results (``python -m onlinekern.report``).

    python -m onlinekern.report results.jsonl                      # text table
    python -m onlinekern.report results.jsonl --format markdown    # best error in bold
    python -m onlinekern.report results.jsonl --format csv > table.csv
    python -m onlinekern.report results.jsonl --plot curves.png    # needs matplotlib

The table has one row per algorithm (with the parameters that vary between its settings on a
data set, e.g. ``fogd-hinge (n_components=400)``) and, per data set, the online mistake rate (%)
or RMSE and the learning time per run, as ``mean ± std`` over the runs (sample standard
deviation, ddof = 1), as Tables 1–2 of Nguyen et al. (IJCAI 2017) report them.  Runs with
``status: "failed"`` are left out of the means and listed under the table.

``--plot OUT.png`` draws, per data set, the mistake rate (or RMSE), the model size and the time
against the number of examples seen, one line per algorithm with a ±std band across runs; when a
sweep varies ``n_components`` it also writes ``OUT-D.png``: mistake rate (or RMSE) and time
against D, as Figure 2 of the paper.
"""
import csv
import io
import json
import math
import os
import sys

import numpy as np

from onlinekern.experiments.store import read_results

__all__ = ["format_comparison", "format_paired", "format_seconds", "format_table", "load_results", "plot",
           "summarize"]


def load_results(paths):
    """Records of one or more results files (latest record per cell key)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = []
    seen = {}
    for p in paths:
        for rec in read_results(p):
            if rec["key"] in seen:
                out[seen[rec["key"]]] = rec
            else:
                seen[rec["key"]] = len(out)
                out.append(rec)
    return out


def _records(src):
    if isinstance(src, (str, os.PathLike)):
        recs = load_results(src)
    elif hasattr(src, "to_dict") and hasattr(src, "columns"):       # a DataFrame
        recs = src.to_dict("records")
    else:
        recs = [r for r in src if r is not None]
    return _disambiguate(recs)


def _identity(r):
    pre = dict(r.get("preprocess") or {})
    pre.pop("subset", None)
    return r.get("data_sha256"), _canon(pre)


def _disambiguate(recs):
    """Records of different data (other files, or other scaling) under one name get distinct
    names, ``casp [scale]`` / ``casp [sha 1a2b3c4d]``, so their runs are never averaged together."""
    ids = {}
    for r in recs:
        ids.setdefault(r.get("data"), {}).setdefault(_identity(r), None)
    clash = {name for name, i in ids.items() if len(i) > 1}
    if not clash:
        return recs
    out = []
    for r in recs:
        if r.get("data") in clash:
            sha, pre = _identity(r)
            flags = [k for k, v in json.loads(pre).items() if v is True]
            others = [i for i in ids[r["data"]] if i != (sha, pre)]
            if all(o[0] == sha for o in others):
                tag = "+".join(flags) if flags else "unscaled"
            else:
                tag = f"sha {str(sha)[:8]}"
            r = dict(r, data=f"{r['data']} [{tag}]")
        out.append(r)
    return out


def _metric(rec):
    return "rmse" if rec.get("task") == "regression" else "mistake_rate"


def _canon(v):
    return json.dumps(v, sort_keys=True, default=str)


def _fmt(v, digits=None):
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _labels(records):
    """label of each (algorithm, params) group: the algorithm plus the parameters that take
    more than one value for that algorithm on one data set."""
    values = {}
    for r in records:
        alg = r["algorithm"]
        for k, v in (r.get("params") or {}).items():
            values.setdefault((alg, r.get("data")), {}).setdefault(k, set()).add(_canon(v))
    varying = {}
    for (alg, _), kv in values.items():
        for k, vs in kv.items():
            if len(vs) > 1:
                varying.setdefault(alg, [])
                if k not in varying[alg]:
                    varying[alg].append(k)

    def label(r):
        alg = r["algorithm"]
        ks = varying.get(alg, [])
        if not ks:
            return alg
        p = r.get("params") or {}
        return f"{alg} (" + ", ".join(f"{k}={_fmt(p.get(k))}" for k in ks) + ")"
    return label


def _ms(values, ddof=1):
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=ddof)) if v.size > 1 else 0.0


def summarize(records, phase="run", ddof=1):
    """One row per (data set, algorithm setting): run counts and mean/std of error, time, size.

    ``ddof`` is the standard deviations' (1: the sample std, the default; 0: the population
    std, as numpy's ``std()`` and the RRF reference benchmark).

    Returns
    -------
    list of dict with data, task, metric, algorithm, label, params, n_runs, n_failed, failures
    (messages), error_mean, error_std, seconds_mean, seconds_std, model_size_mean,
    model_size_std, size_name, tuned (the tuning summary of tuned runs).
    """
    recs = [r for r in _records(records) if phase in (None, "all") or r.get("phase", "run") == phase]
    label = _labels(recs)
    groups = {}
    for r in recs:
        key = (r.get("data"), label(r), _canon(r.get("params") or {}))
        groups.setdefault(key, []).append(r)
    # the same label on one data set with different params (tuned runs): keep one row per label
    rows = []
    for (data, lab, _), rs in groups.items():
        ok = [r for r in rs if r.get("status") == "ok"]
        bad = [r for r in rs if r.get("status") != "ok"]
        first = ok[0] if ok else rs[0]
        metric = _metric(first)
        em, es = _ms([r[metric] for r in ok], ddof)
        tm, ts = _ms([r["seconds"] for r in ok], ddof)
        sm, ss = _ms([r["model_size"] for r in ok], ddof)
        rows.append({
            "data": data, "task": first.get("task"), "metric": metric,
            "algorithm": first["algorithm"], "label": lab, "params": first.get("params") or {},
            "n_runs": len(ok), "n_failed": len(bad),
            "failures": sorted({r.get("error") or "failed" for r in bad}),
            "error_mean": em, "error_std": es, "seconds_mean": tm, "seconds_std": ts,
            "model_size_mean": sm, "model_size_std": ss, "size_name": first.get("size_name"),
            "tuned": first.get("tuned"),
        })
    return rows


def _fmt_error(metric, m, s, n):
    if not math.isfinite(m):
        return "—"
    if metric == "rmse":
        return f"{m:.4f} ± {s:.4f}" if n > 1 else f"{m:.4f}"
    return f"{m:.2f} ± {s:.2f}" if n > 1 else f"{m:.2f}"


def _seconds_digits(m):
    if m >= 100:
        return 0
    if m >= 10:
        return 1
    if m >= 0.1:
        return 2
    return 3


def format_seconds(m, s, n):
    """``mean ± std`` of seconds over ``n`` runs, with as many digits as the mean needs."""
    if not math.isfinite(m):
        return "—"
    d = _seconds_digits(m)
    return f"{m:.{d}f} ± {s:.{d}f}" if n > 1 else f"{m:.{d}f}"


def _metric_title(metric):
    return "RMSE" if metric == "rmse" else "mistake (%)"


def _grid(rows):
    """(data sets, labels, {(data, label): row}) in first-appearance order."""
    datasets, labels, cell = [], [], {}
    for r in rows:
        if r["data"] not in datasets:
            datasets.append(r["data"])
        if r["label"] not in labels:
            labels.append(r["label"])
        cell[(r["data"], r["label"])] = r
    return datasets, labels, cell


def format_table(records, format="text", phase="run", time=True, ddof=1):
    """The paper-style table of ``records`` (a list, a DataFrame or a results path).

    format : 'text', 'markdown' or 'csv'.  Markdown marks the best mean error of each data set
    in bold.  CSV is long-form: one line per (data set, algorithm setting).  ``ddof``: as
    :func:`summarize`.
    """
    rows = summarize(records, phase, ddof)
    if format == "csv":
        return _csv(rows)
    if format not in ("text", "markdown"):
        raise ValueError(f"format must be text, markdown or csv, got {format!r}")
    if not rows:
        return "(no finished runs)" if format == "text" else "_no finished runs_\n"
    datasets, labels, cell = _grid(rows)
    metric_of = {d: next(r["metric"] for r in rows if r["data"] == d) for d in datasets}
    n_max = max(r["n_runs"] for r in rows)
    best = {}
    for d in datasets:
        vals = [cell[(d, l)]["error_mean"] for l in labels if (d, l) in cell
                and math.isfinite(cell[(d, l)]["error_mean"])]
        best[d] = min(vals) if vals else None
    header = ["algorithm"]
    for d in datasets:
        header.append(f"{d} {_metric_title(metric_of[d])}")
        if time:
            header.append(f"{d} time (s)")
    body = []
    for lab in labels:
        line = [lab]
        for d in datasets:
            r = cell.get((d, lab))
            if r is None:
                line += ["", ""] if time else [""]
                continue
            e = _fmt_error(r["metric"], r["error_mean"], r["error_std"], r["n_runs"])
            if format == "markdown" and best[d] is not None and r["error_mean"] == best[d]:
                e = f"**{e}**"
            if r["n_failed"]:
                e += f" [{r['n_runs']}/{r['n_runs'] + r['n_failed']} runs]"
            elif r["n_runs"] != n_max:
                e += f" [{r['n_runs']} runs]"
            line.append(e)
            if time:
                line.append(format_seconds(r["seconds_mean"], r["seconds_std"], r["n_runs"]))
        body.append(line)
    notes = []
    if n_max > 1:
        notes.append(f"mean ± {'population ' if ddof == 0 else ''}standard deviation over {n_max} runs "
                     "(random permutations)")
    for r in rows:
        if r["n_failed"]:
            notes.append(f"{r['label']} on {r['data']}: {r['n_failed']} failed run(s): "
                         + "; ".join(m[:200] for m in r["failures"]))
    tuned = [r for r in rows if r.get("tuned")]
    for r in tuned:
        t = r["tuned"]
        pt = ", ".join(f"{k}={_fmt(v)}" for k, v in (t.get("point") or {}).items())
        notes.append(f"{r['label']} on {r['data']}: tuned {pt} ({t.get('grid_size')} grid points "
                     f"on {t.get('n_subset')} rows)")
    if format == "markdown":
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in body]
        if notes:
            out.append("")
            out += [f"- {n}" for n in notes]
        return "\n".join(out) + "\n"
    widths = [max(len(row[i]) for row in [header] + body) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in body]
    lines += notes
    return "\n".join(lines)


def format_comparison(records, reference, phase="run", ddof=1):
    """Markdown tables setting the records' errors and times beside a paper's.

    ``reference``: ``{data name: {algorithm: {"label": ..., "error": ..., "seconds": ...}}}``
    (strings as printed in the paper; algorithms without an entry get ``—``).  One section per
    data set: algorithm, our mean ± std error (best in bold), the paper's, our time per run,
    the paper's, and the parameters the runs used (tuned and fixed; ``task`` left out).
    ``ddof``: as :func:`summarize`.
    """
    rows = summarize(records, phase, ddof)
    out = []
    for data in dict.fromkeys(r["data"] for r in rows):
        mine = [r for r in rows if r["data"] == data]
        ref = reference.get(data, {})
        regression = mine[0]["metric"] == "rmse"
        fmt = ".4f" if regression else ".2f"
        metric = "RMSE" if regression else "mistake rate (%)"
        finite = [r["error_mean"] for r in mine if math.isfinite(r["error_mean"])]
        best = min(finite) if finite else None
        out += [f"## {data}", "",
                f"| algorithm | onlinekern | {metric} | paper | time (s) | paper time (s) | setting |",
                "|---|---|---|---|---|---|---|"]
        for r in sorted(mine, key=lambda r: (r["algorithm"] not in ref, list(ref).index(r["algorithm"])
                                             if r["algorithm"] in ref else 0)):
            e = ref.get(r["algorithm"], {})
            if math.isfinite(r["error_mean"]):
                ours = f"{r['error_mean']:{fmt}} ± {r['error_std']:{fmt}}"
                ours = f"**{ours}**" if r["error_mean"] == best else ours
            else:
                ours = "failed"
            if r["n_failed"]:
                ours += f" ({r['n_failed']} of {r['n_runs'] + r['n_failed']} runs failed)"
            setting = _setting(r["params"])
            out.append(f"| {e.get('label', '—')} | `{r['algorithm']}` | {ours} | {e.get('error', '')} | "
                       f"{format_seconds(r['seconds_mean'], r['seconds_std'], r['n_runs'])} | "
                       f"{e.get('seconds', '')} | {setting} |")
        out.append("")
    return "\n".join(out)


def _setting(params):
    """The parameters of a run as ``k=v, ...`` (``task`` left out)."""
    return ", ".join(f"{k}={_fmt(v)}" for k, v in (params or {}).items() if k != "task")


def format_paired(records, pairs, phase="run", ddof=1):
    """Markdown table of paired differences: run r of algorithm A against run r of B.

    Run r of every algorithm sees the same permutation (:mod:`onlinekern.experiments.runner`), so
    the difference of their errors run by run removes the order's share of the noise.  For each
    data set and ``[A, B]`` of ``pairs`` (and each setting of A and of B when they have several):
    A's and B's mean ± std error, the mean ± std of A − B over the runs both finished, and in
    how many of them A made fewer mistakes (lower RMSE).  ``ddof``: as :func:`summarize`.
    """
    recs = [r for r in _records(records) if r.get("phase", "run") == phase and r.get("status") == "ok"]
    label = _labels(recs)
    groups = {}                       # (data, algorithm) -> setting -> (label, run -> record)
    for r in recs:
        setting = groups.setdefault((r.get("data"), r["algorithm"]), {}).setdefault(
            _canon(r.get("params") or {}), (label(r), {}))
        setting[1][(r.get("seed"), r.get("run"), r.get("order"))] = r
    out = ["| data | A | B | A | B | A − B, paired | A better in | A setting | B setting |",
           "|---|---|---|---:|---:|---:|---:|---|---|"]
    for data in dict.fromkeys(r.get("data") for r in recs):
        for a, b in pairs:
            for la, ra in groups.get((data, a), {}).values():
                for lb, rb in groups.get((data, b), {}).values():
                    both = [k for k in ra if k in rb]
                    if not both:
                        continue
                    metric = _metric(ra[both[0]])
                    ea = np.array([ra[k][metric] for k in both])
                    eb = np.array([rb[k][metric] for k in both])
                    d = ea - eb
                    fmt, dfmt = (".4f", ".5f") if metric == "rmse" else (".2f", ".3f")
                    unit = "" if metric == "rmse" else " %"
                    (ma, sa), (mb, sb), (md, sdd) = (_ms(v, ddof) for v in (ea, eb, d))
                    out.append(f"| {data} | `{la}` | `{lb}` | {ma:{fmt}} ± {sa:{fmt}}{unit} | "
                               f"{mb:{fmt}} ± {sb:{fmt}}{unit} | {md:+{dfmt}} ± {sdd:{dfmt}} | "
                               f"{int((d < 0).sum())} of {d.size} | {_setting(ra[both[0]]['params'])} | "
                               f"{_setting(rb[both[0]]['params'])} |")
    if len(out) == 2:
        return "_no runs of both algorithms of a pair_\n"
    return "\n".join(out) + "\n"


def _csv(rows):
    buf = io.StringIO()
    cols = ["data", "task", "metric", "algorithm", "label", "params", "n_runs", "n_failed",
            "error_mean", "error_std", "seconds_mean", "seconds_std", "model_size_mean",
            "model_size_std", "size_name"]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        vals = []
        for c in cols:
            v = r[c]
            if c == "params":
                v = json.dumps(v, sort_keys=True)
            elif isinstance(v, float):
                v = "" if not math.isfinite(v) else repr(v)
            vals.append(v)
        w.writerow(vals)
    return buf.getvalue()


# ---- plots ----------------------------------------------------------------------------------------------

def _curve_stats(recs, key):
    """(x, mean, std) of curve ``key`` across runs, on the first run's checkpoints."""
    curves = [r["curve"] for r in recs if r.get("curve") and r["curve"].get(key) is not None
              and r["curve"].get("n_seen")]
    if not curves:
        return None
    x = np.asarray(curves[0]["n_seen"], dtype=np.float64)
    ys = []
    for c in curves:
        cx = np.asarray(c["n_seen"], dtype=np.float64)
        cy = np.asarray([np.nan if v is None else v for v in c[key]], dtype=np.float64)
        ys.append(cy if cx.shape == x.shape and np.array_equal(cx, x) else np.interp(x, cx, cy))
    Y = np.vstack(ys)
    sd = Y.std(axis=0, ddof=1) if len(ys) > 1 else np.zeros(Y.shape[1])
    return x, Y.mean(axis=0), sd


def _figure(nrows, ncols, size):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(nrows, ncols, squeeze=False))
    return fig, axes


def plot(records, out, phase="run", dpi=120):
    """Curves of ``records`` (list, DataFrame or results path) into ``out`` (PNG, PDF, SVG...).

    Returns the list of files written: ``out``, and ``<out stem>-D<ext>`` when some algorithm
    was run with several ``n_components`` on a data set.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'onlinekern[plot]'") from None
    recs = [r for r in _records(records) if r.get("phase", "run") == phase and r.get("status") == "ok"]
    if not recs:
        raise ValueError("no finished runs to plot")
    label = _labels(recs)
    datasets = []
    for r in recs:
        if r["data"] not in datasets:
            datasets.append(r["data"])
    fig, axes = _figure(len(datasets), 3, (18, 4.2 * len(datasets)))
    for i, d in enumerate(datasets):
        rs = [r for r in recs if r["data"] == d]
        metric = _metric(rs[0])
        groups = {}
        for r in rs:
            groups.setdefault(label(r), []).append(r)
        size_names = sorted({r.get("size_name") or "size" for r in rs})
        panels = [(metric, "online RMSE" if metric == "rmse" else "online mistake rate (%)"),
                  ("model_size", "model size (" + " / ".join(size_names) + ")"),
                  ("seconds", "time (s)")]
        colors = _colors(len(groups))
        for j, (key, ylabel) in enumerate(panels):
            ax = axes[i, j]
            for k, ((lab, grs), color) in enumerate(zip(groups.items(), colors)):
                st = _curve_stats(grs, key)
                if st is None:
                    continue
                x, m, s = st
                ax.plot(x, m, color=color, ls=_STYLES[(k // 10) % len(_STYLES)], lw=1.6,
                        label=f"{lab} ({len(grs)} runs)")
                # every plotted quantity is non-negative: keep the band above 0
                ax.fill_between(x, np.maximum(m - s, 0.0), m + s, color=color, alpha=0.2, lw=0)
            ax.set_xlabel("examples seen")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{d}: {ylabel.split(' (')[0]}")
            ax.grid(True, alpha=0.3)
            if key == metric:
                _set_error_ylim(ax, groups, key)
        axes[i, 2].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5),
                          title="mean ± std over runs", title_fontsize=8)
    fig.savefig(os.fspath(out), dpi=dpi)
    written = [os.fspath(out)]
    d_plot = _plot_vs_d(recs, label, out, dpi)
    if d_plot:
        written.append(d_plot)
    return written


def _set_error_ylim(ax, groups, key):
    """Skip the first few examples (100 % mistakes at n = 1) when choosing the y range."""
    lo, hi = math.inf, -math.inf
    for grs in groups.values():
        st = _curve_stats(grs, key)
        if st is None:
            continue
        x, m, s = st
        sel = x >= max(10, 0.05 * x[-1]) if x.size else x
        if np.any(sel):
            lo = min(lo, float(np.nanmin(m[sel] - s[sel])))
            hi = max(hi, float(np.nanmax(m[sel] + s[sel])))
    if math.isfinite(lo) and math.isfinite(hi) and hi > lo:
        pad = 0.08 * (hi - lo)
        ax.set_ylim(max(0.0, lo - pad), hi + pad)


def _colors(n):
    """tab10 colours; lines beyond the tenth are told apart by their line style."""
    from matplotlib import colormaps
    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


_STYLES = ("-", "--", ":", "-.")


def _plot_vs_d(recs, label, out, dpi):
    """Figure 2 of the paper: error and time against D, for sweeps varying n_components."""
    series = {}
    for r in recs:
        D = (r.get("resolved_params") or r.get("params") or {}).get("n_components")
        if D is None:
            continue
        others = {k: v for k, v in (r.get("params") or {}).items() if k != "n_components"}
        key = (r["data"], r["algorithm"], _canon(others))
        series.setdefault(key, {}).setdefault(int(D), []).append(r)
    series = {k: v for k, v in series.items() if len(v) > 1}
    if not series:
        return None
    datasets = []
    for (d, _, _) in series:
        if d not in datasets:
            datasets.append(d)
    fig, axes = _figure(len(datasets), 2, (12, 4 * len(datasets)))
    from matplotlib.ticker import NullFormatter, ScalarFormatter
    for i, d in enumerate(datasets):
        items = [(k, v) for k, v in series.items() if k[0] == d]
        colors = _colors(len(items))
        vary = {}
        for (_, _, others), _ in items:
            for k, v in json.loads(others).items():
                vary.setdefault(k, set()).add(_canon(v))
        shown = [k for k, vs in vary.items() if len(vs) > 1]
        metric = None
        allD = set()
        for k, (((_, alg, others), byD), color) in enumerate(zip(items, colors)):
            Ds = sorted(byD)
            allD.update(Ds)
            metric = _metric(byD[Ds[0]][0])
            o = json.loads(others)
            lab = alg + (" (" + ", ".join(f"{k}={_fmt(o.get(k))}" for k in shown) + ")" if shown else "")
            for j, key in enumerate((metric, "seconds")):
                ms = [_ms([r[key] for r in byD[D]]) for D in Ds]
                means = np.array([m for m, _ in ms])
                sds = np.array([s for _, s in ms])
                axes[i, j].errorbar(Ds, means, yerr=[np.minimum(sds, means), sds], color=color,
                                    ls=_STYLES[(k // 10) % len(_STYLES)], marker="o", capsize=3,
                                    label=lab)
        ylabels = ("online RMSE" if metric == "rmse" else "online mistake rate (%)", "time per run (s)")
        for j in range(2):
            ax = axes[i, j]
            ax.set_xscale("log")
            ax.set_xticks(sorted(allD))
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("random feature dimension D")
            ax.set_ylabel(ylabels[j])
            ax.set_title(f"{d}: {ylabels[j].split(' (')[0]} against D")
            ax.grid(True, alpha=0.3)
        axes[i, 0].legend(fontsize=8, title="mean ± std over runs", title_fontsize=8)
    root, ext = os.path.splitext(os.fspath(out))
    path = f"{root}-D{ext or '.png'}"
    fig.savefig(path, dpi=dpi)
    return path
