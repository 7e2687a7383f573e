"""Experiment files with a ``[figure]`` table (onlinekern.experiments.figures): the Shrinking
Gradient and DSG figures run by ``python -m onlinekern.sweep --config`` and redrawn by
``python -m onlinekern.report --config``."""
import json

import numpy as np
import pytest

from onlinekern.experiments import curves, shrinking
from onlinekern.experiments.config import ExperimentError, available_experiments, load_experiment
from onlinekern.experiments.figures import KINDS, Figure, PointStore, override
from onlinekern.report import main as report_main
from onlinekern.sweep import main

TINY = """\
[experiment]
title = "tiny shrinking"
out = "{out}"

[figure]
kind = "shrinking"
dims = [30]
T = 40
n_test = 20
budgets = [1]
etas = [0.25, 1.0]
norm_bounds = [1.0]
seeds = 2
tune_seeds = 1
test_samples = 200
"""


def _file(tmp_path, text=TINY):
    path = tmp_path / "fig.toml"
    path.write_text(text.format(out=tmp_path / "res" / "tiny.json"))
    return path


def test_figure_file_runs_the_experiment_and_report_redraws_it(tmp_path, capsys):
    path = _file(tmp_path)
    fig = load_experiment(path)
    assert isinstance(fig, Figure) and fig.kind == "shrinking"
    assert fig.params["support"] == shrinking.PARAMS["support"]          # defaults kept
    assert main(["--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "D=30: MSE loss of f_t" in out
    summary = json.loads((tmp_path / "res" / "tiny.json").read_text())
    assert summary["kind"] == "shrinking" and summary["dims"] == [30]
    # the same numbers as the module called directly (same seeds, same protocol)
    direct = shrinking.run(fig.params, None, open("/dev/null", "w"))
    for m in shrinking.METHODS:
        assert summary["by_dim"][0][m]["runs"] == direct["by_dim"][0][m]["runs"]
    pytest.importorskip("matplotlib")
    assert (tmp_path / "res" / "shrinking_fig1_coordinate.png").stat().st_size > 0
    assert report_main(["--config", str(path), "--output-dir", str(tmp_path / "figs")]) == 0
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == [
        "shrinking_budget_coordinate.png", "shrinking_fig1_coordinate.png"]


def test_param_overrides_a_figure_parameter(tmp_path, capsys):
    fig = load_experiment(_file(tmp_path))
    new = override(fig, ["dims=40,50", "budget_rule=per-point", "gamma=1"])
    assert new.params["dims"] == [40, 50] and new.params["budget_rule"] == "per-point"
    assert new.params["gamma"] == 1.0 and fig.params["dims"] == [30]
    assert shrinking.tag(new.params) == "coordinate_per_point"
    with pytest.raises(ExperimentError, match="budget_rule: expected a str"):
        override(fig, ["budget_rule=all"])
    with pytest.raises(ExperimentError, match="NAME one of"):
        override(fig, ["colour=1"])
    assert main(["--config", str(_file(tmp_path)), "--param", "T=many"]) == 2
    assert "cannot read 'many' as int" in capsys.readouterr().err
    assert main(["--config", str(_file(tmp_path)), "--runs", "3"]) == 2
    assert "drop --runs" in capsys.readouterr().err


def test_stopped_figure_run_resumes_at_its_first_unfinished_point(tmp_path, monkeypatch, capsys):
    """Each finished point is saved as it finishes; the same command after a stop computes only
    the rest, and the summary equals an uninterrupted run's.  The budget sweep's (D, k) point that
    the first figure already has is not computed twice."""
    text = TINY.replace("dims = [30]", "dims = [30, 36]\nbudget_dim = 30").replace("budgets = [1]", "budgets = [1, 2]")
    path = _file(tmp_path, text)
    real, calls = shrinking.evaluate, []

    def stop_at_third(D, bud, args):
        calls.append((D, bud["k"]))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(D, bud, args)

    monkeypatch.setattr(shrinking, "evaluate", stop_at_third)
    assert main(["--config", str(path)]) == 130
    assert "finished points are kept" in capsys.readouterr().err
    saved = list((tmp_path / "res").glob("tiny.json.*.points.json"))
    assert len(saved) == 1 and not (tmp_path / "res" / "tiny.json").exists()
    assert sorted(json.loads(saved[0].read_text())["points"]) == ["D=30 k=1", "D=36 k=1"]
    out = str(tmp_path / "res" / "tiny.json")
    assert PointStore(out, "shrinking", load_experiment(path).params).resumed == 2
    assert PointStore(out, "shrinking", override(load_experiment(path), ["T=30"]).params).resumed == 0
    damaged = saved[0].read_text()
    saved[0].write_text(damaged[:len(damaged) // 2])
    assert main(["--config", str(path)]) == 2
    assert "not a points file of this figure" in capsys.readouterr().err
    saved[0].write_text(damaged)
    calls.clear()
    monkeypatch.setattr(shrinking, "evaluate", lambda D, bud, args: (calls.append((D, bud["k"])), real(D, bud, args))[1])
    assert main(["--config", str(path)]) == 0
    assert "resuming: 2 finished points" in capsys.readouterr().out
    assert calls == [(30, 2)]                          # D=30 k=1 is the budget sweep's first point
    assert not saved[0].exists()                       # removed once the summary is written
    resumed = json.loads((tmp_path / "res" / "tiny.json").read_text())
    fresh = shrinking.run(load_experiment(path).params, None, open("/dev/null", "w"))
    for key in ("by_dim", "by_budget"):
        for got, want in zip(resumed[key], fresh[key]):
            for m in shrinking.METHODS:
                assert got[m]["runs"] == want[m]["runs"] and got[m]["eta"] == want[m]["eta"]


@pytest.mark.parametrize("edit, message", [
    (('kind = "shrinking"', 'kind = "pie"'), "figure.kind: expected one of"),
    (("T = 40", "T = 4.5"), "figure.T: expected a int"),
    (("T = 40", "colour = 1"), "figure.colour: unknown parameter of shrinking"),
    (("[figure]", "[data.x]\n[figure]"), "data: a [figure] file has only"),
    (('title = "tiny shrinking"', "seed = 1"), "experiment.seed: unknown key"),
])
def test_figure_file_errors_name_file_and_key(tmp_path, capsys, edit, message):
    path = _file(tmp_path, TINY.replace(*edit))
    with pytest.raises(ExperimentError, match="fig.toml: " + message.replace("[", r"\[")):
        load_experiment(path)
    assert main(["--config", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_dsg_synthetic_rate_matches_predict(tmp_path, capsys):
    """A short run of the O(1/t) figure: the incrementally tracked f_t equals predict() at every
    checkpoint (run_synthetic raises otherwise), and the error falls."""
    p = dict(curves.SYNTHETIC, iters=64, batch=8, block=8, points=6, n_test=200)
    s = curves.run_synthetic(p, None, open("/dev/null", "w"))
    assert s["t"][-1] == 64 and len(s["err"]) == len(s["t"])
    assert s["err"][-1] < s["err"][0]


def test_dsg_objective_on_a_slice(shared_data, tmp_path, capsys):
    shared_data.compressed("casp")
    p = dict(curves.OBJECTIVE, datasets=["casp"], rows=1280, holdout=200, points=5)
    s = curves.run_objective(p, str(shared_data.root), open("/dev/null", "w"))
    runs = s["results"]["casp"]
    assert set(runs) == {"DSG", "UDSG", "CDSG"}
    for rec in runs.values():
        assert rec["iter"][-1] == 20 and np.all(np.isfinite(rec["J"]))
        assert rec["work"] == sorted(rec["work"])


def test_missing_data_file_is_a_data_error(tmp_path, capsys):
    assert main(["--config", "dsg-objective", "--data-dir", str(tmp_path), "--dry-run"]) == 1
    assert "casp.xz" in capsys.readouterr().err


@pytest.mark.parametrize("name", [n for n in available_experiments() if isinstance(load_experiment(n), Figure)])
def test_shipped_figure_files_name_known_parameters(name):
    fig = load_experiment(name)
    assert fig.kind in KINDS and set(fig.params) == set(KINDS[fig.kind].params)
    assert fig.out.endswith(".json")
