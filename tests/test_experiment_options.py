"""The experiment engine's options for the RRF reference protocol: the tuning subset drawn from a
reserved permutation (``[tuning] permutation``), the labels of a subset that lacks some, targets
divided by their maximum (``scale_target = "max"``), grids in the file's order and the paired
output.  Each against a hand computation with ``run_online`` / NumPy on small data.  (The
tie-break by the loss: tests/test_rrf.py; paired differences and population standard deviations:
tests/test_report.py.)"""
import re
from pathlib import Path

import numpy as np
import pytest

import onlinekern as ok
from onlinekern.experiments.config import ExperimentError, load_data, load_experiment, plan, render_outputs
from onlinekern.experiments.data import dataset_from, subset_of
from onlinekern.experiments.grids import subset_indices
from onlinekern.experiments.runner import Session, make_cell
from onlinekern.experiments.store import cell_key, read_results
from onlinekern.experiments.tuning import tune_pairs
from onlinekern.preprocessing import FeatureScaler
from onlinekern.seeding import permutation as run_order
from onlinekern.sweep import main

REPO = Path(__file__).resolve().parents[1]


def _blobs(n=240, seed=0, rare=None):
    """Three Gaussian blobs in 2-D (labels 10, 20, 30); ``rare`` rows get label 99."""
    rng = np.random.default_rng(seed)
    y = rng.choice([10, 20, 30], size=n)
    X = rng.normal(size=(n, 2)) + np.stack([y == 20, y == 30], axis=1) * 2.5
    if rare is not None:
        y[rare] = 99
    return X, y


def _pass(algorithm, X, y, seed, run, learner_seed, classes=None, **params):
    learner = ok.make_learner(algorithm, seed=learner_seed, n_threads=1, **params)
    return ok.run_online(learner, X, y, seed=seed, run=run, checkpoints=None, classes=classes)


# ---- the tuning subset of a reserved permutation --------------------------------------------------

def test_subset_of_a_permutation_is_the_first_rows_of_that_runs_order():
    idx = subset_indices(1000, 0.1, 5, permutation=1000)
    assert np.array_equal(idx, np.sort(run_order(5, 1000, 1000)[:100]))
    assert not np.array_equal(idx, subset_indices(1000, 0.1, 5))          # not the subset stream
    X, y = _blobs()
    ds = dataset_from((X, y))
    sub = subset_of(ds, 0.25, 3, permutation=7)
    assert sub.subset == {"fraction": 0.25, "seed": 3, "rows": 60, "permutation": 7}
    assert subset_of(ds, 0.25, 3).subset == {"fraction": 0.25, "seed": 3, "rows": 60}   # as before


@pytest.mark.parametrize("runs", [1, 2])
def test_tuning_passes_of_a_reserved_permutation_equal_run_online_by_hand(runs):
    """Pass t presents the subset in permutation P + t to a learner seeded S + t."""
    X, y = _blobs()
    seed, P = 4, 1000
    with Session(progress=False) as session:
        (res,) = tune_pairs(session, [(dataset_from((X, y)), "fogd-hinge", {"n_components": 20})],
                            grid={"eta": [0.3, 3.0]}, subset=0.25, seed=seed, runs=runs, permutation=P)
    sub = np.sort(run_order(seed, P, len(y))[:60])
    for row in res.table:
        errs = [_pass("fogd-hinge", X[sub], y[sub], seed, P + t, seed + t, n_components=20, **row["params"]).error
                for t in range(runs)]
        assert row["error"] == np.mean(errs)
    recs = res.records
    assert {(r["run"], r["permutation"], r["learner_seed"]) for r in recs} == {(t, P + t, seed + t) for t in range(runs)}


def test_a_subset_lacking_a_label_is_learnt_with_every_label():
    X, y = _blobs(rare=[3, 150])
    seed = 0
    sub = subset_indices(len(y), 0.1, seed)
    assert 99 not in y[sub]                                # the subset lacks the rare label
    with Session(progress=False) as session:
        (res,) = tune_pairs(session, [(dataset_from((X, y)), "fogd-hinge", {"n_components": 20})],
                            grid={"eta": [0.3, 3.0]}, subset=0.1, seed=seed)
    full = np.unique(y)
    for row, rec in zip(res.table, res.records):
        want = _pass("fogd-hinge", X[sub], y[sub], seed, 0, seed, classes=full, n_components=20, **row["params"])
        without = _pass("fogd-hinge", X[sub], y[sub], seed, 0, seed, n_components=20, **row["params"])
        assert row["error"] == want.error
        assert rec["classes"] == full.tolist()
    assert any(row["error"] != _pass("fogd-hinge", X[sub], y[sub], seed, 0, seed, n_components=20,
                                     **row["params"]).error for row in res.table)   # it matters here
    # a subset with every label: no classes in the record, the key of before
    X2, y2 = _blobs()
    with Session(progress=False) as session:
        (res2,) = tune_pairs(session, [(dataset_from((X2, y2)), "fogd-hinge", {"n_components": 20})],
                             grid={"eta": [0.3]}, subset=0.1, seed=seed)
    assert "classes" not in res2.records[0]


def test_new_cell_options_leave_every_other_key_as_it_was():
    X, y = _blobs()
    ds = dataset_from((X, y))
    with Session(progress=False) as session:
        (pair,) = session.pairs([ds], ["fogd-hinge"], {"fogd-hinge": {"n_components": 20}})
    cell = make_cell(pair, {"n_components": 20, "eta": 0.5}, 3, 2, "run", False)
    identity = {"phase": "run", "algorithm": "fogd-hinge", "params": cell.static["resolved_params"],
                "data": ds.identity, "seed": 3, "run": 2, "order": "permutation"}
    assert cell.key == cell_key(identity)
    other = make_cell(pair, {"n_components": 20, "eta": 0.5}, 3, 2, "run", False, permutation=9)
    assert other.key != cell.key and other.spec["run"] == 9 and other.spec["learner_params"]["seed"] == 5
    assert make_cell(pair, {"n_components": 20, "eta": 0.5}, 3, 2, "run", False, mean_loss=True).key != cell.key


# ---- targets divided by their maximum -------------------------------------------------------------

def test_scale_target_max_divides_by_the_maximum():
    rng = np.random.default_rng(1)
    X, y = rng.random((50, 3)), rng.random(50) * 20.999
    ds = dataset_from((X, y), scale=True, scale_target="max")
    assert np.array_equal(ds.y, y / y.max()) and ds.preprocess == {"scale": True, "scale_target": "max"}
    assert np.array_equal(ds.X, FeatureScaler(0.0, 1.0).fit(X).transform(X))
    assert dataset_from((X, y), scale_target=True).preprocess["scale_target"] is True
    assert not np.array_equal(dataset_from((X, y), scale_target=True).y, ds.y)    # min-max is another map
    with pytest.raises(ValueError, match="scale_target"):
        dataset_from((X, y), scale_target="min")


# ---- experiment files -----------------------------------------------------------------------------

EXPERIMENT = """\
[experiment]
seed = 2
runs = 3
out = "{out}"

[tuning]
subset = 0.2
tie_break = "loss"
permutation = 1000

[data.sample]
files = ["sample_classification.libsvm"]
rows = 400

[algorithms.fogd-hinge]
n_components = 20

[algorithms.rrf-hinge]
n_components = 20

[grid."*"]
eta = "default"
gamma = [0.5, 2.0]

[grid.rrf-hinge]
eta_gamma = [1e-3, 1e-2]

[[output]]
kind = "paired"
pairs = [["rrf-hinge", "fogd-hinge"]]
file = "paired.md"
ddof = 0

[[output]]
kind = "table"
file = "table.md"
ddof = 0
"""


def _file(tmp_path, text=EXPERIMENT):
    path = tmp_path / "exp.toml"
    path.write_text(text.format(out=tmp_path / "exp.jsonl"))
    return path


def test_experiment_file_options_run_the_reference_protocol(tmp_path):
    """tie_break, permutation and a paired output end to end: the chosen point is the lowest
    (error, mean loss) of passes made by hand, and the paired table is NumPy's."""
    path = _file(tmp_path)
    exp = load_experiment(path)
    assert exp.tuning["tie_break"] == "loss" and exp.tuning["permutation"] == 1000
    ds = load_data(exp, "sample", str(REPO / "data"))
    _, _, grid = plan(exp, "sample", ds)
    assert list(grid["rrf-hinge"]) == ["eta", "gamma", "eta_gamma"]       # the file's order
    assert grid["fogd-hinge"]["eta"] == pytest.approx([20 * e for e in (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2)])
    assert main(["--config", str(path), "--data-dir", str(REPO / "data"), "--n-jobs", "1", "-q"]) == 0
    recs = read_results(tmp_path / "exp.jsonl")
    X, y = ds.X, ds.y
    sub = np.sort(run_order(2, 1000, ds.n_rows)[:80])
    for alg in ("fogd-hinge", "rrf-hinge"):
        tuned = [r for r in recs if r["phase"] == "tune" and r["algorithm"] == alg]
        keys = []
        for r in tuned:
            learner = ok.make_learner(alg, seed=2, n_threads=1, **r["params"])
            res = ok.run_online(learner, X[sub], y[sub], seed=2, run=1000, checkpoints=None, keep_scores=True)
            z = np.where(y[sub][res.order] == 1, 1.0, -1.0) * np.asarray(res.scores)
            assert r["mistake_rate"] == res.error
            assert r["mean_loss"] == pytest.approx(np.maximum(0, 1 - z).mean(), rel=1e-12)
            keys.append((res.error, r["mean_loss"]))
        best = tuned[min(range(len(keys)), key=keys.__getitem__)]["params"]
        run = [r for r in recs if r["phase"] == "run" and r["algorithm"] == alg]
        assert len(run) == 3 and all(r["params"] == best for r in run)
    out = tmp_path / "out"
    render_outputs(exp, output_dir=out)
    err = {a: np.array([r["mistake_rate"] for r in sorted(recs, key=lambda r: r["run"])
                        if r["phase"] == "run" and r["algorithm"] == a]) for a in ("rrf-hinge", "fogd-hinge")}
    d = err["rrf-hinge"] - err["fogd-hinge"]
    row = (out / "paired.md").read_text().splitlines()[2]
    assert f"| {err['rrf-hinge'].mean():.2f} ± {err['rrf-hinge'].std():.2f} % |" in row
    assert f"| {d.mean():+.3f} ± {d.std():.3f} | {int((d < 0).sum())} of 3 |" in row
    assert f"{err['fogd-hinge'].mean():.2f} ± {err['fogd-hinge'].std():.2f}" in (out / "table.md").read_text()
    assert "population standard deviation" in (out / "table.md").read_text()


@pytest.mark.parametrize("edit, message", [
    (('tie_break = "loss"', 'tie_break = "coin"'), "tuning.tie_break: expected one of 'grid', 'loss'"),
    (("permutation = 1000", "permutation = -1"), "tuning.permutation: expected an integer >= 0"),
    (('rows = 400', 'rows = 400\nscale_target = "min"'), "data.sample.scale_target: expected true or false"),
    (('pairs = [["rrf-hinge", "fogd-hinge"]]', 'pairs = [["rrf-hinge"]]'), "output[0].pairs: expected a list"),
    (('pairs = [["rrf-hinge", "fogd-hinge"]]', 'pairs = [["rrf-hinge", "ogd-hinge"]]'),
     "output[0].pairs: ogd-hinge is not in [algorithms]"),
    (("ddof = 0\n\n[[output]]", "ddof = 2\n\n[[output]]"), "output[0].ddof: expected 0 or 1"),
])
def test_option_errors_name_file_and_key(tmp_path, edit, message):
    assert edit[0] in EXPERIMENT
    with pytest.raises(ExperimentError, match=re.escape(message)):
        load_experiment(_file(tmp_path, EXPERIMENT.replace(*edit)))
