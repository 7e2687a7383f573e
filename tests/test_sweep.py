"""Tests of ``onlinekern.sweep`` / ``python -m onlinekern.sweep``, ``onlinekern.tune`` and the
JSONL results store: cells equal single ``run_online`` passes (and ``onlinekern.train`` runs),
identical numbers for every n_jobs and backend (loky, threading, Dask), resume after ``kill -9``,
half-written lines, failed cells, grids and the tuning protocol."""
import hashlib
import re
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from onlinekern import registry
from onlinekern.io import load_libsvm, save_libsvm
from onlinekern.learners import KernelOGD as OGD
from onlinekern.protocol import run_online
from onlinekern.registry import make_learner
from onlinekern.experiments import runner
from onlinekern.experiments.data import parse_data_spec
from onlinekern.experiments.grids import (DEFAULT_GAMMAS, default_grid, expand_grid, load_grid_file,
                                          normalise_grid, parse_grid, subset_fraction, subset_indices)
from onlinekern.experiments.store import ResultStore, StoreLockedError, cell_key, read_results
from onlinekern.sweep import main, sweep
from onlinekern.experiments.tuning import tune

REPO = Path(__file__).resolve().parents[1]
CLS_DATA = str(REPO / "data" / "sample_classification.libsvm")
REG_DATA = str(REPO / "data" / "sample_regression.libsvm")


@pytest.fixture(scope="module")
def small():
    """The first 600 rows of the bundled classification sample, as arrays and as a file."""
    X, y = load_libsvm(CLS_DATA)
    return X[:600], y[:600]


def _numbers(records):
    """What must be identical between two executions of the same cells."""
    out = {}
    for r in records:
        out[r["key"]] = (r["status"], r["mistake_rate"], r["rmse"], r["n_mistakes"], r["model_size"],
                         None if r.get("curve") is None else json.dumps(
                             {k: v for k, v in r["curve"].items() if k != "seconds"}, sort_keys=True))
    return out


# ---- cells are single passes ------------------------------------------------------------------------

def test_cells_equal_run_online(small):
    X, y = small
    recs = sweep(["fogd-hinge", "ogd-logit"], (X, y), runs=3, seed=5, params={"n_components": 64},
                 grid={"eta": [0.3, 1.0]}, n_jobs=1, progress=False)
    assert len(recs) == 2 * 2 * 3
    for r in recs:
        assert r["status"] == "ok" and r["phase"] == "run"
        p = dict(r["params"])
        assert r["learner_seed"] == 5 + r["run"]
        res = run_online(make_learner(r["algorithm"], **p, seed=5 + r["run"], n_threads=1), X, y,
                         seed=5, run=r["run"])
        assert r["mistake_rate"] == res.mistake_rate and r["n_mistakes"] == res.n_mistakes
        assert r["model_size"] == res.model_size
        assert r["curve"]["mistake_rate"] == res.curve["mistake_rate"].tolist()
        assert r["curve"]["n_seen"] == res.curve["n_seen"].tolist()
    # fixed parameters apply only where they exist; runs differ by their permutations
    assert all("n_components" not in r["params"] for r in recs if r["algorithm"] == "ogd-logit")
    assert len({r["mistake_rate"] for r in recs if r["algorithm"] == "fogd-hinge"}) > 1


def test_cell_equals_train_cli_run(tmp_path):
    from onlinekern.train import main as train_main
    out = tmp_path / "t.json"
    assert train_main(["-a", "fogd-hinge", CLS_DATA, "--runs", "3", "--seed", "2", "-D", "100",
                       "--eta", "0.5", "-q", "--json", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    recs = sweep("fogd-hinge", CLS_DATA, runs=3, seed=2, params={"n_components": 100, "eta": 0.5},
                 n_jobs=1, progress=False)
    assert [r["mistake_rate"] for r in recs] == [r["mistake_rate"] for r in runs]
    assert [r["curve"]["mistake_rate"] for r in recs] == [r["curve"]["mistake_rate"] for r in runs]


def test_identical_numbers_for_any_n_jobs_and_backend(small):
    X, y = small
    kw = dict(runs=3, seed=1, params={"n_components": 50}, progress=False)
    algs = ["fogd-hinge", "fogd-logit", "ogd-hinge"]
    one = sweep(algs, (X, y), n_jobs=1, **kw)
    two = sweep(algs, (X, y), n_jobs=2, **kw)
    thr = sweep(algs, (X, y), n_jobs=2, backend="threading", **kw)
    assert _numbers(one) == _numbers(two) == _numbers(thr)
    assert [r["key"] for r in one] == [r["key"] for r in two]


def test_identical_numbers_on_ijcnn1_slice(shared_data):
    """Acceptance 1 in small: three learners, n_jobs 1 and 2 give identical numbers on real data."""
    X, y = load_libsvm(shared_data.plain("ijcnn1"))
    X, y = X[:1500], y[:1500]
    kw = dict(runs=2, seed=0, params={"n_components": 100}, progress=False)
    algs = ["fogd-hinge", "fogd-logit", "ogd-hinge"]
    a = sweep(algs, {"ijcnn1[:1500]": (X, y)}, n_jobs=1, **kw)
    b = sweep(algs, {"ijcnn1[:1500]": (X, y)}, n_jobs=2, **kw)
    assert _numbers(a) == _numbers(b)
    assert all(r["status"] == "ok" for r in a)


def test_dask_local_cluster_identical(small, tmp_path):
    distributed = pytest.importorskip("distributed")
    X, y = small
    kw = dict(runs=2, seed=3, params={"n_components": 40}, progress=False)
    local = sweep(["fogd-hinge", "ogd-hinge"], (X, y), n_jobs=1, **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = sweep(["fogd-hinge", "ogd-hinge"], (X, y), backend="dask", client=client, **kw)
        # the CLI form: --backend dask --scheduler ADDRESS
        path = REPO / "data" / "sample_classification.libsvm"
        recs = sweep("fogd-hinge", str(path), runs=1, scheduler=cluster.scheduler_address,
                     params={"n_components": 40}, progress=False)
        out = tmp_path / "d.jsonl"
        assert main(["-a", "fogd-hinge", "--data", str(path), "--runs", "1", "-D", "40", "-q",
                     "--backend", "dask", "--scheduler", cluster.scheduler_address,
                     "--out", str(out)]) == 0
    assert _numbers(local) == _numbers(remote)
    assert _numbers(read_results(out)) == _numbers(recs)
    ref = sweep("fogd-hinge", str(path), runs=1, params={"n_components": 40}, n_jobs=1, progress=False)
    assert _numbers(recs) == _numbers(ref)


# ---- the results file --------------------------------------------------------------------------------

def test_resume_skips_finished_cells(tmp_path, small):
    X, y = small
    out = tmp_path / "r.jsonl"
    kw = dict(runs=2, grid={"eta": [0.5, 1.0]}, params={"n_components": 30}, out=out, n_jobs=1,
              progress=False)
    first = sweep("fogd-hinge", (X, y), **kw)
    text = out.read_text()
    assert len(text.splitlines()) == 4
    again = sweep("fogd-hinge", (X, y), **kw)
    assert out.read_text() == text                      # nothing recomputed, nothing appended
    assert _numbers(first) == _numbers(again)
    more = sweep("fogd-hinge", (X, y), **dict(kw, runs=3))   # one more run per setting
    assert len(out.read_text().splitlines()) == 6 and len(more) == 6
    rec = json.loads(text.splitlines()[0])
    for field in ("algorithm", "params", "data", "data_sha256", "seed", "run", "status",
                  "mistake_rate", "seconds", "model_size", "curve", "version", "machine", "key"):
        assert field in rec
    assert {"hostname", "cpu", "cores"} <= set(rec["machine"])


def test_half_written_last_line_is_dropped(tmp_path, small):
    X, y = small
    out = tmp_path / "r.jsonl"
    sweep("ogd-hinge", (X, y), runs=3, out=out, n_jobs=1, progress=False)
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]) + lines[2][:37])       # killed inside write()
    assert len(read_results(out)) == 2                          # readers ignore the partial line
    with ResultStore(out) as store:
        assert store.truncated == 37 and len(store.records) == 2
    assert out.read_bytes() == b"".join(lines[:2])              # ... and a writer truncates it
    recs = sweep("ogd-hinge", (X, y), runs=3, out=out, n_jobs=1, progress=False)
    assert len(out.read_bytes().splitlines()) == 3
    assert out.read_bytes().splitlines()[:2] == [l.rstrip(b"\n") for l in lines[:2]]
    assert [r["run"] for r in recs] == [0, 1, 2]


def test_one_writer_at_a_time(tmp_path):
    out = tmp_path / "r.jsonl"
    with ResultStore(out):
        with pytest.raises(StoreLockedError):
            ResultStore(out)
    ResultStore(out).close()


def test_kill_9_then_resume(tmp_path):
    """Acceptance 2: kill -9 a running sweep, re-run the same command: every cell exactly once,
    and the records written before the kill are kept as they were (none recomputed)."""
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "onlinekern.sweep", "-a", "ogd-hinge,fogd-hinge", "--data", CLS_DATA,
           "--runs", "12", "--n-jobs", "1", "--out", str(out), "-q", "--progress", "off", "-D", "400"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if out.exists() and out.read_bytes().count(b"\n") >= 3:
                break
            if proc.poll() is not None:
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    before = out.read_bytes()
    complete = before[:before.rfind(b"\n") + 1].splitlines()
    assert 3 <= len(complete) < 24
    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    after = out.read_bytes().splitlines()
    assert after[:len(complete)] == complete                   # kept byte for byte
    keys = [json.loads(l)["key"] for l in after]
    assert len(keys) == len(set(keys)) == 24                   # exactly one record per cell
    assert all(json.loads(l)["status"] == "ok" for l in after)
    again = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, timeout=300)
    assert again.returncode == 0 and out.read_bytes().splitlines() == after


# ---- failures -----------------------------------------------------------------------------------------

class _Exploding(OGD):
    """OGD that raises when eta > 1 (a learner bug in one grid point)."""

    family = "exploding"

    def _make_core(self, n_features, task, n_outputs, gamma, X):
        if self.eta > 1:
            raise RuntimeError("boom at eta > 1")
        return super()._make_core(n_features, task, n_outputs, gamma, X)


def test_failed_cells_are_recorded_and_do_not_stop_the_sweep(monkeypatch, tmp_path, small):
    monkeypatch.setitem(registry._FAMILIES, "exploding", _Exploding)
    X, y = small
    out = tmp_path / "r.jsonl"
    recs = sweep("exploding", (X, y), runs=2, grid={"eta": [0.5, 2.0]}, out=out, n_jobs=2,
                 backend="threading", progress=False)
    assert [r["status"] for r in recs] == ["ok", "ok", "failed", "failed"]
    assert all("RuntimeError: boom at eta > 1" in r["error"] for r in recs[2:])
    assert len(read_results(out)) == 4
    # failed cells are finished cells ... unless retry_failed
    n = len(out.read_text().splitlines())
    sweep("exploding", (X, y), runs=2, grid={"eta": [0.5, 2.0]}, out=out, n_jobs=1, progress=False)
    assert len(out.read_text().splitlines()) == n
    sweep("exploding", (X, y), runs=2, grid={"eta": [0.5, 2.0]}, out=out, n_jobs=1, progress=False,
          retry_failed=True)
    assert len(out.read_text().splitlines()) == n + 2
    assert len(read_results(out)) == 4


def test_diverging_regression_is_a_failed_cell():
    X, y = load_libsvm(REG_DATA)
    recs = sweep("ogd-l2", (X[:300], y[:300] * 1e200), runs=1, params={"eta": 1e6}, n_jobs=1,
                 progress=False)
    # the loop stops at the first non-finite score (DivergenceError); the cell is recorded as failed
    assert recs[0]["status"] == "failed" and "diverged" in recs[0]["error"]


# ---- data ------------------------------------------------------------------------------------------------

def test_data_specs_and_sha256(tmp_path):
    X, y = load_libsvm(CLS_DATA)
    a, b = tmp_path / "a.libsvm", tmp_path / "b.libsvm"
    save_libsvm(a, X[:100], y[:100])
    save_libsvm(b, X[100:250, :4], y[100:250])                 # narrower: widened on loading
    assert parse_data_spec(f"{a}+{b}") == ("a+b", [str(a), str(b)])
    assert parse_data_spec(f"both={a}+{b}") == ("both", [str(a), str(b)])
    recs = sweep("ogd-hinge", f"both={a}+{b}", runs=1, n_jobs=1, progress=False)
    r = recs[0]
    assert r["data"] == "both" and r["n_rows"] == 250 and r["n_features"] == X.shape[1]
    assert r["data_sha256"] == hashlib.sha256(a.read_bytes() + b.read_bytes()).hexdigest()
    assert [f["sha256"] for f in r["data_files"]] == [hashlib.sha256(p.read_bytes()).hexdigest()
                                                      for p in (a, b)]
    Xab = sp.vstack([X[:100], sp.csr_matrix(X[100:250, :4], shape=(150, X.shape[1]))]).tocsr()
    ref = run_online(make_learner("ogd-hinge", n_threads=1), Xab, y[:250], seed=0, run=0)
    assert r["mistake_rate"] == ref.mistake_rate


def test_scaling_and_regression():
    from onlinekern.preprocessing import FeatureScaler, TargetScaler
    X, y = load_libsvm(REG_DATA)
    X, y = X[:400], y[:400]
    recs = sweep("fogd-eps", (X, y), runs=2, scale=True, scale_target=True, n_jobs=1,
                 params={"n_components": 50}, progress=False)
    Xs, ys = FeatureScaler().fit_transform(X), TargetScaler().fit_transform(y)
    for r in recs:
        assert r["task"] == "regression" and r["mistake_rate"] is None
        res = run_online(make_learner("fogd-eps", n_components=50, seed=r["run"], n_threads=1),
                         Xs, ys, seed=0, run=r["run"])
        assert r["rmse"] == res.rmse
        assert r["preprocess"]["scale"] and r["preprocess"]["scale_target"]
    # classification learners are skipped on regression data, with a message
    recs = sweep(["fogd-hinge", "ogd-l2"], (X, y), runs=1, n_jobs=1, progress=False)
    assert [r["algorithm"] for r in recs] == ["ogd-l2"]


def test_file_order_runs():
    recs = sweep("ogd-hinge", CLS_DATA, runs=2, file_order=True, n_jobs=1, progress=False)
    X, y = load_libsvm(CLS_DATA)
    ref = run_online(make_learner("ogd-hinge", n_threads=1), X, y)
    assert recs[0]["mistake_rate"] == ref.mistake_rate and recs[0]["order"] == "file"


# ---- grids and tuning ---------------------------------------------------------------------------------------

def test_parse_grid():
    g = parse_grid("eta=1e-3:1e-1:log:3,gamma=0.5,1,2")
    assert g == {"eta": [0.001, 0.01, 0.1], "gamma": [0.5, 1.0, 2.0]}
    g = parse_grid(["n_components=100:400:4", "lambda=2^-4,2^-2", "loss=logit,hinge", "gamma=median"])
    assert g["n_components"] == [100, 200, 300, 400] and all(isinstance(v, int) for v in g["n_components"])
    b = parse_grid("budget=100:400:4")["budget"]          # "auto"-default integers stay integers
    assert b == [100, 200, 300, 400] and all(isinstance(v, int) for v in b)
    assert g["lam"] == [0.0625, 0.25] and g["loss"] == ["logistic", "hinge"]
    assert g["gamma"] == ["median"]
    assert parse_grid("eta=0.1:0.3:lin:3,0.3")["eta"] == [0.1, 0.2, 0.3]   # repeats dropped
    for bad in ("0.1,0.3", "eta=", "eta=1:0:log:3", "eta=x", "eta=1:2:cubic:3"):
        with pytest.raises(ValueError):
            parse_grid(bad)
    assert expand_grid({"a": [1, 2], "b": [3]}) == [{"a": 1, "b": 3}, {"a": 2, "b": 3}]
    assert expand_grid({}) == [{}]


def test_grid_files(tmp_path):
    j = tmp_path / "g.json"
    j.write_text(json.dumps({"eta": [0.1, 0.3], "gamma": "0.5:2:log:3",
                             "n_components": {"start": 10, "stop": 30, "num": 3}}))
    g = load_grid_file(j)["*"]
    assert g == {"eta": [0.1, 0.3], "gamma": [0.5, 1.0, 2.0], "n_components": [10, 20, 30]}
    t = tmp_path / "g.toml"
    t.write_text('["*"]\neta = [0.1, 0.3]\n\n[fogd-hinge]\nn_components = [10, 20]\n')
    g = load_grid_file(t)
    assert g == {"*": {"eta": [0.1, 0.3]}, "fogd-hinge": {"n_components": [10, 20]}}
    assert normalise_grid({"eta": 0.5}) == {"*": {"eta": [0.5]}}
    (tmp_path / "bad.json").write_text("{eta: 1}")
    with pytest.raises(ValueError, match="bad.json"):
        load_grid_file(tmp_path / "bad.json")


def test_default_grid_conventions():
    M = 141691
    g = default_grid("fogd-hinge", M, {"n_components": 1000})
    assert set(g) == {"gamma", "eta", "lam"}
    assert g["eta"] == [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]          # D * eta_ref
    assert 0.5 in g["gamma"] and 1.0 in g["gamma"]                     # sigma = 1 (LSOKL), gamma = 1
    assert np.allclose(g["lam"], [2.0 ** (2 * j) / M / 1000 for j in range(-2, 9)], rtol=1e-10)
    assert len(g["gamma"]) == 14 and tuple(g["gamma"]) == DEFAULT_GAMMAS
    k = default_grid("ogd-hinge", M)
    assert k["eta"] == [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2]      # kernel learners: unchanged
    assert np.allclose(k["lam"], [2.0 ** (2 * j) / M for j in range(-2, 9)], rtol=1e-10)
    assert set(default_grid("perceptron", M)) == {"gamma", "eta"}      # no lam: not tuned
    assert "eta" not in default_grid("fogd-hinge", M, {"eta": 0.3})   # fixed: not tuned
    assert default_grid("fogd", M)["eta"][0] == 400 * 1e-5             # class default D = 400


def test_subset_indices():
    idx = subset_indices(1000, 0.1, 0)
    assert len(idx) == 100 and np.all(np.diff(idx) > 0)
    assert np.array_equal(idx, subset_indices(1000, 0.1, 0))
    assert not np.array_equal(idx, subset_indices(1000, 0.1, 1))
    with pytest.raises(ValueError):
        subset_indices(10, 0.0, 0)


def test_tune_picks_the_lowest_error(small):
    X, y = small
    grid = {"eta": [0.01, 0.3, 3.0], "gamma": [0.05, 0.5]}
    res = tune("fogd-hinge", X, y, grid=grid, subset=0.5, seed=4, n_jobs=1,
               params={"n_components": 40})
    assert len(res.table) == 6 and res.n_subset == 300 and res.metric == "mistake_rate"
    errors = [row["error"] for row in res.table]
    assert res.best_error == min(errors)
    assert res.best_point == res.table[int(np.argmin(errors))]["params"]
    assert res.best_params == {"n_components": 40, **res.best_point}
    # a tuning pass is run 0 of the subset, learner seed 4
    idx = subset_indices(600, 0.5, 4)
    ref = run_online(make_learner("fogd-hinge", n_components=40, seed=4, n_threads=1, **res.best_point),
                     X[idx], y[idx], seed=4, run=0)
    assert ref.mistake_rate == res.best_error


def test_sweep_with_tuning_resumes(tmp_path, small):
    X, y = small
    out = tmp_path / "r.jsonl"
    kw = dict(runs=2, tune=True, grid="eta=0.1,1", subset=0.5,
              params={"n_components": 30}, out=out, n_jobs=1, progress=False)
    recs = sweep("fogd-hinge", (X, y), **kw)
    assert [r["phase"] for r in recs] == ["tune", "tune", "run", "run"]
    tuned = [r for r in recs if r["phase"] == "tune"]
    best = min(tuned, key=lambda r: r["mistake_rate"])
    assert recs[-1]["params"] == best["params"] and recs[-1]["tuned"]["point"] == {"eta": best["params"]["eta"]}
    assert tuned[0]["preprocess"]["subset"] == {"fraction": 0.5, "seed": 0, "rows": 300}
    assert tuned[0].get("curve") is None and recs[-1]["curve"] is not None
    text = out.read_text()
    assert sweep("fogd-hinge", (X, y), **kw) == recs and out.read_text() == text


def test_as_frame(small):
    pd = pytest.importorskip("pandas")
    X, y = small
    df = sweep("fogd-hinge", (X, y), runs=2, grid={"eta": [0.5, 1]}, params={"n_components": 20},
               n_jobs=1, progress=False, as_frame=True)
    assert isinstance(df, pd.DataFrame) and len(df) == 4
    assert list(df["param_eta"]) == [0.5, 0.5, 1, 1]
    assert df.groupby("param_eta")["mistake_rate"].mean().shape == (2,)


def test_keys_ignore_int_float_spelling():
    a = cell_key({"params": {"eta": 1}, "run": 0})
    assert a == cell_key({"params": {"eta": 1.0}, "run": 0.0})
    assert a != cell_key({"params": {"eta": 1.5}, "run": 0})


# ---- the command line ------------------------------------------------------------------------------------------

def test_cli_sweep_and_progress(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    code = main(["-a", "fogd-hinge,ogd-hinge", "--data", CLS_DATA, "--runs", "2", "-D", "30",
                 "--grid", "eta=0.5,1", "--n-jobs", "1", "--out", str(out), "--progress", "lines"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert "fogd-hinge (eta=0.5)" in cap.out and "ogd-hinge (eta=1)" in cap.out
    assert "8 runs done" in cap.out
    assert "sweep: 8/8 runs" in cap.err and "note: --n-components applies to fogd-hinge only" in cap.err
    assert len(read_results(out)) == 8
    code = main(["-a", "fogd-hinge,ogd-hinge", "--data", CLS_DATA, "--runs", "2", "-D", "30",
                 "--grid", "eta=0.5,1", "--n-jobs", "1", "--out", str(out), "--dry-run"])
    assert code == 0 and "8 already done" in capsys.readouterr().out
    code = main(["-a", "fogd-hinge", "--data", CLS_DATA, "--runs", "1", "--param", "n_components=20",
                 "--tune", "--grid", "eta=0.5,1", "--subset", "0.2", "-q", "--n-jobs", "1"])
    assert code == 0


@pytest.mark.parametrize("args, message", [
    (["--data", CLS_DATA], "no algorithm"),
    (["-a", "fogd-hinge"], "no data"),
    (["-a", "fogd-hingee", "--data", CLS_DATA], "did you mean 'fogd-hinge'"),
    (["-a", "ogd-hinge", "--data", CLS_DATA, "--grid", "n_components=10,20"], "applies to none"),
    (["-a", "ogd-hinge", "--data", CLS_DATA, "-D", "20"], "applies to none"),
    (["-a", "ogd-hinge", "--data", CLS_DATA, "-j", "2"], "--n-jobs"),
    (["-a", "ogd-hinge", "--data", CLS_DATA, "--param", "etaa=1"], "did you mean eta"),
    (["-a", "ogd-hinge", "--data", CLS_DATA, "--grid", "eta=0.1", "--eta", "0.2"], "both"),
    (["-a", "ogd-hinge", "--data", CLS_DATA, "--backend", "threading", "--scheduler", "tcp://x:1"],
     "--backend dask"),
    (["-a", "ogd-hinge", "--data", CLS_DATA, "--eta", "-1"], "eta must be"),
])
def test_cli_usage_errors(capsys, args, message):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_cli_data_errors(capsys, tmp_path):
    assert main(["-a", "ogd-hinge", "--data", str(tmp_path / "missing")]) == 1
    assert "No such file" in capsys.readouterr().err
    assert main(["-a", "fogd-hinge", "--data", REG_DATA, "-q"]) == 1
    err = capsys.readouterr().err
    assert "skipping fogd-hinge" in err and "no algorithm can learn" in err


def test_per_algorithm_parameters(small):
    X, y = small
    recs = sweep(["fogd-hinge", "fogd-logit", "ogd-hinge"], (X, y), runs=1, n_jobs=1, progress=False,
                 params={"*": {"eta": 0.5}, "fogd-hinge": {"n_components": 30},
                         "fogd-logit": {"n_components": 60}})
    assert [r["params"] for r in recs] == [{"eta": 0.5, "n_components": 30},
                                           {"eta": 0.5, "n_components": 60}, {"eta": 0.5}]
    assert [r["model_size"] for r in recs[:2]] == [60, 120]
    with pytest.raises(ValueError, match="applies to none"):
        sweep("ogd-hinge", (X, y), runs=1, params={"ogd-hinge": {"n_components": 3}})


def test_a_cell_that_kills_its_worker_is_isolated_and_recorded(monkeypatch, small, capsys):
    """A worker lost on one cell (segfault, OOM kill): the other cells finish, the sweep retries,
    then runs the remaining cells one at a time and records the culprit as failed."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError
    real = runner.keyed_run_cell
    calls = []

    def flaky(spec, *args):
        calls.append(spec["run"])
        if spec["run"] == 2:
            raise TerminatedWorkerError("A worker process managed by the executor was unexpectedly terminated.")
        return real(spec, *args)

    monkeypatch.setattr(runner, "keyed_run_cell", flaky)
    X, y = small
    recs = sweep("ogd-hinge", (X, y), runs=5, n_jobs=2, backend="threading", progress=False)
    assert [r["status"] for r in recs] == ["ok", "ok", "failed", "ok", "ok"]
    assert "the worker running this cell died" in recs[2]["error"]
    assert calls.count(2) >= 3
    assert "retrying" in capsys.readouterr().err


def test_subset_fraction_rule():
    assert subset_fraction("auto", 141691) == 0.1 and subset_fraction("auto", 5929413) == 0.01
    assert subset_fraction(0.25, 10) == 0.25
    for bad in ("most", 0, 1.5, True):
        with pytest.raises(ValueError):
            subset_fraction(bad, 10)


def test_thread_pool_limits_are_shared_and_restored():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def sizes():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()]
    before = sizes()
    a, b = runner.limit_threads(), runner.limit_threads()          # two tasks in one worker process
    assert all(n == 1 for n in sizes())
    a.restore_original_limits()
    assert all(n == 1 for n in sizes())                 # b still runs: the limit stays
    b.restore_original_limits()
    b.restore_original_limits()                         # idempotent
    assert sizes() == before


# ---- experiment files (TOML) -------------------------------------------------------------------------

from onlinekern.experiments.config import (ExperimentError, available_experiments,  # noqa: E402
                                           load_experiment)
from onlinekern.report import main as report_main  # noqa: E402

EXPERIMENT = """\
[experiment]
title = "two learners on the sample"
seed = 3
runs = 2
out = "{out}"

[data.sample]
files = ["sample_classification.libsvm"]
rows = 500
vars = {{ D = 40 }}

[algorithms.fogd-hinge]
n_components = "@D"

[algorithms.ogd-hinge]

[grid."*"]
eta = [0.3, 1.0]

[paper.sample]
fogd-hinge = {{ label = "FOGD", error = "12.34 ± 0.56", seconds = "7" }}

[[output]]
kind = "compare"
file = "cmp.md"

[[output]]
kind = "table"
format = "csv"
file = "sub/table.csv"
"""


def _experiment(tmp_path, text=EXPERIMENT):
    path = tmp_path / "exp.toml"
    path.write_text(text.format(out=tmp_path / "exp.jsonl"))
    return path


def test_experiment_file_runs_the_same_cells_as_sweep(tmp_path, capsys):
    """An experiment file is a sweep: the same records as onlinekern.sweep with the same data
    set (500 rows drawn under the root seed), parameters and grid; a re-run resumes."""
    path = _experiment(tmp_path)
    data_dir = str(REPO / "data")
    assert main(["--config", str(path), "--data-dir", data_dir, "--n-jobs", "1", "-q"]) == 0
    got = read_results(tmp_path / "exp.jsonl")
    assert len(got) == 2 * 2 * 2
    exp = load_experiment(path)
    from onlinekern.experiments.config import load_data
    ds = load_data(exp, "sample", data_dir)
    assert ds.n_rows == 500 and ds.name == "sample (500 rows)"
    want = sweep(["fogd-hinge", "ogd-hinge"], {ds.name: ds}, runs=2, seed=3, grid={"eta": [0.3, 1.0]},
                 params={"fogd-hinge": {"n_components": 40}}, progress=False)
    assert sorted(r["key"] for r in got) == sorted(r["key"] for r in want)
    assert _numbers(sorted(got, key=lambda r: r["key"])) == _numbers(sorted(want, key=lambda r: r["key"]))
    assert main(["--config", str(path), "--data-dir", data_dir, "--dry-run"]) == 0
    assert capsys.readouterr().out.count("2 settings × 2 runs, 4 done") == 2
    assert main(["--config", str(path), "--data-dir", data_dir, "-q"]) == 0
    assert len(read_results(tmp_path / "exp.jsonl", latest=False)) == 8      # nothing re-run
    out_dir = tmp_path / "outputs"
    assert report_main(["--config", str(path), "--output-dir", str(out_dir)]) == 0
    cmp = (out_dir / "cmp.md").read_text()
    assert "## sample (500 rows)" in cmp and "| FOGD | `fogd-hinge` |" in cmp and "12.34 ± 0.56" in cmp
    assert "| — | `ogd-hinge` |" in cmp
    rows = (out_dir / "sub" / "table.csv").read_text().splitlines()[1:]
    assert len(rows) == 4 and all(r.startswith("sample (500 rows),classification") or
                                  r.startswith("sample (500 rows),binary") for r in rows)


def test_experiment_tuning_narrow_and_default_grid_values(tmp_path):
    text = EXPERIMENT.replace('[grid."*"]\neta = [0.3, 1.0]\n', '[grid.ogd-hinge]\ngamma = [0.5, 2]\n'
                              'lam = "default"\n') \
        .replace("[data.sample]", "[tuning]\nsubset = 0.5\nnarrow = 3\n\n[data.sample]")
    exp = load_experiment(_experiment(tmp_path, text))
    from onlinekern.experiments.config import load_data, plan
    ds = load_data(exp, "sample", str(REPO / "data"))
    algs, params, grid = plan(exp, "sample", ds)
    assert params["fogd-hinge"] == {"n_components": 40}
    full = default_grid("fogd-hinge", 500, {"n_components": 40})
    mid = len(full["eta"]) // 2
    assert grid["fogd-hinge"]["eta"] == full["eta"][mid - 1:mid + 2]
    lam = default_grid("ogd-hinge", 500)["lam"]
    assert grid["ogd-hinge"] == {"gamma": [0.5, 2.0], "lam": lam[len(lam) // 2 - 1:len(lam) // 2 + 2]}


@pytest.mark.parametrize("edit, message", [
    (("runs = 2", "runs = 0"), "experiment.runs: expected an integer >= 1"),
    (("rows = 500", "rows = 500\ncolour = 1"), "data.sample.colour: unknown key"),
    (('n_components = "@D"', 'n_components = "@E"'), "algorithms.fogd-hinge.n_components: @E is not in the vars"),
    (("[algorithms.ogd-hinge]", "[algorithms.no-such]"), "algorithms.no-such: unknown algorithm"),
    (('kind = "compare"', 'kind = "pie"'), "output[0].kind: expected one of"),
    (("[paper.sample]", "[paper.other]"), "paper.other: no data set"),
    (("eta = [0.3, 1.0]", "eta = [0.3, 1.0]\nrank = [10]"), 'grid.*.rank: no algorithm of the grid has'),
    (("title =", "title = = "), "exp.toml: "),
])
def test_experiment_file_errors_name_file_and_key(tmp_path, capsys, edit, message):
    path = _experiment(tmp_path, EXPERIMENT.replace(*edit))
    with pytest.raises(ExperimentError, match=re.escape(message)):
        load_experiment(path)
    assert main(["--config", str(path), "--data-dir", str(REPO / "data")]) == 2
    assert message in capsys.readouterr().err


def test_config_refuses_sweep_options_and_unknown_names(capsys):
    assert main(["--config", "ijcai17-table1", "--tune", "-D", "100"]) == 2
    assert "drop --tune, -D" in capsys.readouterr().err
    assert main(["--config", "no-such-paper"]) == 2
    assert "ijcai17-table1" in capsys.readouterr().err       # the shipped names are listed
    assert main(["--list-configs"]) == 0
    assert "ijcai17-table1" in capsys.readouterr().out


def test_missing_data_file_is_a_data_error(tmp_path, capsys):
    assert main(["--config", str(_experiment(tmp_path)), "--data-dir", str(tmp_path)]) == 1
    assert "sample_classification.libsvm.xz" in capsys.readouterr().err


@pytest.mark.parametrize("name", available_experiments())
def test_shipped_experiment_files_dry_run(shared_data, name, capsys):
    exp = load_experiment(name)
    if not hasattr(exp, "data"):                          # a [figure] file (tests/test_figures.py)
        for d in exp.params.get("datasets", []):
            for f in {"casp": ["casp"], "ijcnn1": ["ijcnn1", "ijcnn1.t"]}[d]:
                shared_data.compressed(f)
        assert main(["--config", name, "--data-dir", str(shared_data.root), "--dry-run"]) == 0
        assert f"{name}: " in capsys.readouterr().out
        return
    for d in exp.data.values():
        for f in d["files"]:
            shared_data.compressed(f)                    # skip (or fail in CI) without the data
    assert main(["--config", name, "--data-dir", str(shared_data.root), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{name}: " in out and " runs in all" in out
    for d in exp.data:
        assert f"{d}: " in out
