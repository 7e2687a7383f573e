"""Tests of ``onlinekern.report`` / ``python -m onlinekern.report``: the paper-style table in
text, Markdown and CSV from sweep records, and the curve plots."""
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from onlinekern.experiments.report import format_paired, format_table, load_results, plot, summarize
from onlinekern.experiments.store import ResultStore, cell_key
from onlinekern.report import main

REPO = Path(__file__).resolve().parents[1]
CLS_DATA = str(REPO / "data" / "sample_classification.libsvm")


def _rec(alg, data, run, err, secs, size=100, params=None, status="ok", task="binary", phase="run",
         n=1000, error=None):
    params = params or {}
    metric = "rmse" if task == "regression" else "mistake_rate"
    seen = [1, n // 2, n]
    rec = {"key": cell_key({"a": alg, "d": data, "r": run, "p": params, "ph": phase}), "phase": phase,
           "algorithm": alg, "params": params, "resolved_params": params, "data": data, "run": run,
           "seed": 0, "status": status, "task": task, "mistake_rate": None, "rmse": None,
           "seconds": secs, "model_size": size, "size_name": "SVs", "error": error,
           "curve": None if err is None else {
               "n_seen": seen, metric: [err * 3, err * 1.5, err], "model_size": [1, size // 2, size],
               "seconds": [0.0, secs / 2, secs]}}
    rec[metric] = err if status == "ok" else None
    return rec


@pytest.fixture
def records():
    recs = []
    for r, (a, b, c) in enumerate([(3.1, 4.0, 0.25), (3.3, 4.2, 0.27), (3.2, 4.4, 0.26)]):
        recs.append(_rec("fogd-hinge", "ijcnn1", r, a, 0.40 + r / 100))
        recs.append(_rec("ogd-hinge", "ijcnn1", r, b, 12.0 + r))
        recs.append(_rec("fogd-l2", "casp", r, c, 0.05, task="regression"))
    recs.append(_rec("ogd-hinge", "cod-rna", 0, 7.0, 1.0))
    recs.append(_rec("ogd-hinge", "cod-rna", 1, None, 1.0, status="failed", error="RuntimeError: boom"))
    return recs


def test_summarize(records):
    rows = {(r["data"], r["label"]): r for r in summarize(records)}
    f = rows[("ijcnn1", "fogd-hinge")]
    assert f["n_runs"] == 3 and f["metric"] == "mistake_rate"
    assert f["error_mean"] == pytest.approx(3.2) and f["error_std"] == pytest.approx(0.1)
    assert f["seconds_mean"] == pytest.approx(0.41)
    c = rows[("casp", "fogd-l2")]
    assert c["metric"] == "rmse" and c["error_mean"] == pytest.approx(0.26)
    o = rows[("cod-rna", "ogd-hinge")]
    assert o["n_runs"] == 1 and o["n_failed"] == 1 and o["failures"] == ["RuntimeError: boom"]


def test_text_table(records):
    text = format_table(records, "text")
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["algorithm", "ijcnn1", "mistake"]
    assert "casp RMSE" in lines[0] and "cod-rna mistake (%)" in lines[0]
    row = next(l for l in lines if l.startswith("fogd-hinge"))
    assert "3.20 ± 0.10" in row and "0.41 ± 0.01" in row
    row = next(l for l in lines if l.startswith("fogd-l2"))
    assert "0.2600 ± 0.0100" in row
    assert "7.00 [1/2 runs]" in text
    assert "ogd-hinge on cod-rna: 1 failed run(s): RuntimeError: boom" in text
    assert "mean ± standard deviation over 3 runs" in text


def test_markdown_table_bolds_the_best(records):
    md = format_table(records, "markdown")
    lines = md.splitlines()
    assert lines[0].startswith("| algorithm | ijcnn1 mistake (%) | ijcnn1 time (s) |")
    assert lines[1] == "|" + "---|" * 7
    fogd = next(l for l in lines if l.startswith("| fogd-hinge"))
    ogd = next(l for l in lines if l.startswith("| ogd-hinge"))
    assert "**3.20 ± 0.10**" in fogd and "**" not in ogd.split("|")[2]
    assert "**7.00** [1/2 runs]" in ogd                       # alone on cod-rna: the best
    assert "**0.2600 ± 0.0100**" in md


def test_csv_table(records):
    rows = list(csv.DictReader(io.StringIO(format_table(records, "csv"))))
    assert len(rows) == 4
    r = next(r for r in rows if r["algorithm"] == "ogd-hinge" and r["data"] == "ijcnn1")
    assert float(r["error_mean"]) == pytest.approx(4.2) and r["n_runs"] == "3"
    assert json.loads(r["params"]) == {} and r["metric"] == "mistake_rate"


def test_labels_show_the_varying_parameters():
    recs = [_rec("fogd-hinge", "d", r, 5.0 + D / 100, 0.1, params={"n_components": D, "eta": 1.0})
            for D in (100, 200) for r in range(2)]
    text = format_table(recs, "text")
    assert "fogd-hinge (n_components=100)" in text and "fogd-hinge (n_components=200)" in text
    assert "eta=" not in text
    # tuned runs: one setting per data set, the row is the algorithm
    recs = [_rec("fogd-hinge", d, 0, 3.0, 0.1, params={"eta": e}) for d, e in (("a", 0.3), ("b", 3.0))]
    recs[0]["tuned"] = {"point": {"eta": 0.3}, "grid_size": 7, "n_subset": 100}
    text = format_table(recs, "text")
    assert text.splitlines()[1].startswith("fogd-hinge ") and "tuned eta=0.3 (7 grid points on 100 rows)" in text
    assert format_table([], "text") == "(no finished runs)"


def test_plots(tmp_path, records):
    pytest.importorskip("matplotlib")
    out = tmp_path / "curves.png"
    assert plot(records, out, dpi=40) == [str(out)]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    recs = [_rec("fogd-hinge", "d", r, 5.0 + 100 / D, 0.1 * D, params={"n_components": D})
            for D in (100, 200, 400) for r in range(3)]
    written = plot(recs, tmp_path / "d.png", dpi=40)
    assert written == [str(tmp_path / "d.png"), str(tmp_path / "d-D.png")]
    assert all(Path(w).stat().st_size > 5000 for w in written)
    with pytest.raises(ValueError):
        plot([r for r in records if r["status"] == "failed"], tmp_path / "none.png")


def test_report_cli(tmp_path, capsys, records):
    path = tmp_path / "r.jsonl"
    with ResultStore(path) as store:
        for r in records:
            store.append(r)
    assert [r["key"] for r in load_results(path)] == [r["key"] for r in records]
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "fogd-hinge" in out and "3.20 ± 0.10" in out
    assert main([str(path), "--format", "markdown", "--data", "casp"]) == 0
    out = capsys.readouterr().out
    assert "casp RMSE" in out and "ijcnn1" not in out
    assert main([str(path), "--format", "csv", "-a", "ogd-hinge", "--no-time"]) == 0
    out = capsys.readouterr().out
    assert "fogd" not in out and out.startswith("data,task,metric")
    assert main([str(path), "--data", "nothing"]) == 1
    assert main([str(tmp_path / "missing.jsonl")]) == 1
    assert "No such file" in capsys.readouterr().err
    pytest.importorskip("matplotlib")
    assert main([str(path), "--plot", str(tmp_path / "p.png"), "--dpi", "40"]) == 0
    assert "plot written to" in capsys.readouterr().err and (tmp_path / "p.png").exists()


def test_report_of_a_real_sweep(tmp_path, capsys):
    from onlinekern.sweep import sweep
    out = tmp_path / "r.jsonl"
    sweep(["fogd-hinge", "ogd-hinge"], CLS_DATA, runs=2, params={"n_components": 40}, out=out,
          n_jobs=1, progress=False)
    assert main([str(out), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert sum(l.startswith("| ") for l in md.splitlines()) == 3 and "sample_classification mistake (%)" in md
    rows = summarize(load_results(out))
    assert {r["label"] for r in rows} == {"fogd-hinge", "ogd-hinge"}
    assert all(r["n_runs"] == 2 and np.isfinite(r["error_mean"]) for r in rows)


def test_different_data_under_one_name_are_not_mixed():
    a = [dict(_rec("fogd-l2", "casp", r, 0.3, 0.1, task="regression"), data_sha256="aa" * 32,
              preprocess={"scale": False}) for r in range(2)]
    b = [dict(_rec("fogd-l2", "casp", r + 5, 0.2, 0.1, task="regression"), data_sha256="aa" * 32,
              preprocess={"scale": True}) for r in range(2)]
    rows = summarize(a + b)
    assert sorted(r["data"] for r in rows) == ["casp [scale]", "casp [unscaled]"]
    c = [dict(r, data_sha256="bb" * 32) for r in b]
    assert sorted(r["data"] for r in summarize(a + c)) == ["casp [sha aaaaaaaa]", "casp [sha bbbbbbbb]"]


def test_paired_differences_and_population_std_against_numpy():
    """Run r of A against run r of B: the mean ± std of A - B and how often A is better, as NumPy
    computes them; ddof=0 is numpy's std(), ddof=1 (the default) the sample std."""
    a = np.array([20.5, 21.0, 19.75, 20.25])
    b = np.array([25.0, 20.5, 24.0, 26.0])
    recs = ([_rec("rrf-hinge", "letter", r, e, 0.1, task="multiclass") for r, e in enumerate(a)]
            + [_rec("fogd-hinge", "letter", r, e, 0.1, task="multiclass") for r, e in enumerate(b)])
    recs.append(_rec("fogd-hinge", "letter", 9, 1.0, 0.1, task="multiclass"))   # no partner: left out
    text = format_paired(recs, [["rrf-hinge", "fogd-hinge"]], ddof=0)
    d = a - b
    assert f"| {d.mean():+.3f} ± {d.std():.3f} | 3 of 4 |" in text
    assert f"| {a.mean():.2f} ± {a.std():.2f} % | {b.mean():.2f} ± {b.std():.2f} % |" in text
    assert f"{d.std(ddof=1):.3f} |" in format_paired(recs, [["rrf-hinge", "fogd-hinge"]])
    rows = {r["algorithm"]: r for r in summarize(recs, ddof=0)}
    assert rows["rrf-hinge"]["error_std"] == pytest.approx(a.std())
    assert rows["rrf-hinge"]["error_std"] != pytest.approx(a.std(ddof=1))
    assert f"{a.mean():.2f} ± {a.std(ddof=1):.2f}" in format_table(recs, "markdown")
    assert f"{a.mean():.2f} ± {a.std():.2f}" in format_table(recs, "markdown", ddof=0)
    # several settings of A: one row each, against B's one
    more = recs + [_rec("rrf-hinge", "letter", r, e + 1, 0.1, task="multiclass", params={"eta_gamma": 0.1})
                   for r, e in enumerate(a)]
    assert len(format_paired(more, [["rrf-hinge", "fogd-hinge"]]).splitlines()) == 4
    assert format_paired(recs, [["rrf-logit", "fogd-hinge"]]).startswith("_no runs")
