"""End-to-end tests of ``python -m onlinekern.train`` (through ``main([...])`` and one subprocess),
of the shared option grammar in ``onlinekern.cli`` and of ``onlinekern.preprocessing``."""
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern
from onlinekern import cli, registry
from onlinekern.base import OnlineLearner
from onlinekern.io import load_libsvm, save_libsvm
from onlinekern.preprocessing import FeatureScaler, TargetScaler
from onlinekern.train import main

REPO = Path(__file__).resolve().parents[1]
CLS_DATA = str(REPO / "data" / "sample_classification.libsvm")
REG_DATA = str(REPO / "data" / "sample_regression.libsvm")

FINAL_CLS = re.compile(r"^mistake rate (\d+\.\d\d)% over 1 run, \d+\.\d+ s per run, 800 features$")


def run(capsys, *args):
    """main(args) -> (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def last_line(text):
    return text.rstrip("\n").splitlines()[-1]


@pytest.fixture(scope="module")
def multiclass_file(tmp_path_factory):
    """600 rows, 3 well separated classes around a circle (labels 1, 2, 3)."""
    rng = np.random.default_rng(7)
    n = 600
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += 3 * np.cos(2 * np.pi * y / 3)
    X[:, 1] += 3 * np.sin(2 * np.pi * y / 3)
    path = tmp_path_factory.mktemp("mc") / "three.libsvm"
    save_libsvm(path, np.round(X, 3), y + 1)
    return str(path)


# ---- the main command -----------------------------------------------------------------------------

def test_main_command(capsys):
    code, out, err = run(capsys, "-a", "fogd-hinge", CLS_DATA)
    assert code == 0, err
    m = FINAL_CLS.match(last_line(out))
    assert m, last_line(out)
    assert float(m.group(1)) < 20.0
    # header: algorithm and paper, data shape and task, parameters, seed and runs
    assert "fogd-hinge" in out and "JMLR 2016" in out
    assert "3000 rows × 6 features" in out and "binary" in out
    assert "n_components=400" in out and "eta=0.4" in out and "loss=hinge" in out
    assert "seed 0" in out
    # not a terminal: VW-style progress lines at the doubling checkpoints, on stderr
    rows = [l.split() for l in err.splitlines() if l.split() and l.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3000]
    assert rows[-1][1] == m.group(1)         # the last checkpoint's rate is the final rate
    assert "Traceback" not in err


def test_quiet_prints_only_the_final_line(capsys):
    code, out, err = run(capsys, "-a", "fogd-hinge", CLS_DATA, "--quiet")
    assert code == 0
    assert len(out.splitlines()) == 1 and FINAL_CLS.match(out.strip())
    assert err == ""


def _strip_seconds(obj):
    """The JSON results without timings (and without the command line, which names the file)."""
    if isinstance(obj, dict):
        return {k: _strip_seconds(v) for k, v in obj.items()
                if k not in ("seconds", "load_seconds", "command")}
    if isinstance(obj, list):
        return [_strip_seconds(v) for v in obj]
    return obj


def test_runs_json(tmp_path, capsys):
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    code, out, err = run(capsys, "-a", "fogd-hinge", CLS_DATA, "--runs", 3, "--json", out1)
    assert code == 0, err
    line = last_line(out)
    assert re.match(r"^mistake rate \d+\.\d\d% ± \d+\.\d\d over 3 runs, \d+\.\d+ s ± \d+\.\d+ per run, "
                    r"800 features$", line), line
    res = json.loads(out1.read_text())
    assert res["algorithm"] == "fogd-hinge" and res["task"] == "binary"
    assert res["n_examples"] == 3000 and res["n_features"] == 6
    runs = res["runs"]
    assert res["params"]["n_components"] == "auto" and res["params"]["preset"] == "auto"
    assert all(r["chosen"]["n_components"] == 400 for r in runs)     # 3,000 examples: the base D
    assert res["params"]["gamma_"] == runs[0]["chosen"]["gamma"] == runs[0]["gamma_"]
    code, out, err = run(capsys, "-a", "fogd-hinge", CLS_DATA, "--preset", "paper", "--json", out2)
    assert code == 0, err
    assert json.loads(out2.read_text())["params"]["gamma_"] == pytest.approx(1 / 6)   # the papers' 1/d
    assert [r["seed"] for r in runs] == [0, 1, 2]
    rates = [r["mistake_rate"] for r in runs]
    for r in runs:
        assert r["mistake_rate"] == pytest.approx(100 * r["n_mistakes"] / 3000)
        assert r["model_size"] == 800 and r["seconds"] >= 0
        assert r["curve"]["n_seen"][-1] == 3000
        assert r["curve"]["mistake_rate"][-1] == pytest.approx(r["mistake_rate"])
    assert len(set(rates)) > 1                       # different permutations, different numbers
    assert res["summary"]["mistake_rate"]["mean"] == pytest.approx(np.mean(rates))
    assert res["summary"]["mistake_rate"]["std"] == pytest.approx(np.std(rates, ddof=1))
    m, s = re.match(r"^mistake rate (\S+)% ± (\S+) ", line).groups()
    assert float(m) == pytest.approx(np.mean(rates), abs=0.006)
    assert float(s) == pytest.approx(np.std(rates, ddof=1), abs=0.006)
    # the same seed again: identical numbers apart from timings
    assert run(capsys, "-a", "fogd-hinge", CLS_DATA, "--runs", 3, "--json", out2, "-q")[0] == 0
    assert _strip_seconds(json.loads(out2.read_text())) == _strip_seconds(res)
    # another seed: other permutations
    assert run(capsys, "-a", "fogd-hinge", CLS_DATA, "--runs", 3, "--json", out2, "-q", "-s", 5)[0] == 0
    other = json.loads(out2.read_text())
    assert [r["seed"] for r in other["runs"]] == [5, 6, 7]
    assert [r["mistake_rate"] for r in other["runs"]] != rates


def test_shuffle_single_run_differs_from_file_order(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(capsys, "-a", "ogd-hinge", CLS_DATA, "--json", a, "-q")[0] == 0
    assert run(capsys, "-a", "ogd-hinge", CLS_DATA, "--json", b, "-q", "--shuffle")[0] == 0
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    assert ra["order"] == "file" and rb["order"] == "permutation"
    assert ra["runs"][0]["n_mistakes"] != rb["runs"][0]["n_mistakes"]


def test_test_file(tmp_path, capsys):
    X, y = load_libsvm(CLS_DATA)
    test = tmp_path / "held_out.libsvm"
    save_libsvm(test, X[:500, :4], y[:500])      # narrower file: loaded with the training width
    out_json = tmp_path / "r.json"
    code, out, err = run(capsys, "-a", "fogd-hinge", CLS_DATA, "--test", test, "--json", out_json)
    assert code == 0, err
    line = last_line(out)
    m = re.match(r"^mistake rate \S+% over 1 run, \S+ s per run, 800 features, test mistake rate (\S+)%$", line)
    assert m, line
    res = json.loads(out_json.read_text())
    t = res["runs"][0]["test"]
    assert t["n_examples"] == 500 and t["mistake_rate"] == pytest.approx(100 * t["n_mistakes"] / 500)
    assert float(m.group(1)) == pytest.approx(t["mistake_rate"], abs=0.006)
    assert t["mistake_rate"] < 25.0
    assert res["test"] == str(test) and res["n_features"] == 6


def test_regression_prints_rmse(tmp_path, capsys):
    code, out, err = run(capsys, "-a", "ogd-eps", REG_DATA)
    assert code == 0, err
    line = last_line(out)
    m = re.match(r"^RMSE (\d+\.\d{4}) over 1 run, \d+\.\d+ s per run, \d+ SVs$", line)
    assert m, line
    y = load_libsvm(REG_DATA)[1]
    assert float(m.group(1)) < 0.6 * y.std()            # clearly better than predicting the mean
    assert "regression" in out
    # scaled targets: the RMSE is on [0, 1] targets; a held-out file gets the same scaling
    out_json = tmp_path / "r.json"
    code, out, err = run(capsys, "-a", "ogd-eps", REG_DATA, "--scale-target", "--test", REG_DATA,
                         "--json", out_json, "-q")
    assert code == 0, err
    assert re.match(r"^RMSE 0\.\d{4} over 1 run, .* SVs, test RMSE 0\.\d{4}$", out.strip()), out
    res = json.loads(out_json.read_text())
    assert res["scale_target"] and res["runs"][0]["test"]["rmse"] < 0.2


def test_perceptron_regression_needs_task(capsys):
    code, out, err = run(capsys, "-a", "perceptron", REG_DATA)
    assert code == 1 and "--task regression" in err
    code, out, err = run(capsys, "-a", "perceptron", "--task", "regression", REG_DATA, "-q")
    assert code == 0 and out.startswith("RMSE ")


def test_multiclass(multiclass_file, capsys):
    code, out, err = run(capsys, "-a", "fogd-hinge", multiclass_file)
    assert code == 0, err
    assert "multiclass" in out
    rate = float(re.match(r"^mistake rate (\S+)%", last_line(out)).group(1))
    assert rate < 20.0
    code, out, err = run(capsys, "-a", "ogd-softmax", multiclass_file, "-q", "--runs", 2)
    assert code == 0, err
    assert "over 2 runs" in out


def test_binary_softmax_is_logit(capsys):
    """Two classes: the softmax loss is the logistic loss on the binary score (losses.binary_form),
    so fogd-softmax on a binary file prints fogd-logit's mistake rate."""
    code, out, err = run(capsys, "-a", "fogd-softmax", CLS_DATA, "-q")
    assert code == 0, err
    code, out2, err = run(capsys, "-a", "fogd-logit", CLS_DATA, "-q")
    assert code == 0, err
    assert last_line(out).split(",")[0] == last_line(out2).split(",")[0] and "mistake rate" in out


def test_median_gamma_and_lambda_alias(tmp_path, capsys):
    out_json = tmp_path / "r.json"
    code, out, err = run(capsys, "-a", "ogd-hinge", CLS_DATA, "-g", "median", "--lambda", "0.01",
                         "--runs", 2, "--json", out_json, "-q")
    assert code == 0, err
    res = json.loads(out_json.read_text())
    assert res["params"]["gamma"] == "median" and res["params"]["lam"] == 0.01
    gammas = [r["gamma_"] for r in res["runs"]]
    assert all(g > 0 for g in gammas)
    assert gammas[0] == pytest.approx(onlinekern.median_gamma(load_libsvm(CLS_DATA)[0], seed=0))


def test_scale(tmp_path, capsys):
    # a non-negative sparse file: scaling maps zero to zero, so the data stay sparse
    rng = np.random.default_rng(3)
    A = rng.random((300, 20)) * 5 * (rng.random((300, 20)) < 0.2)
    A[:, 0] = rng.random(300) * 3
    y = np.where(A[:, 0] + A[:, 1] > 2, 1, -1)
    path = tmp_path / "sparse.libsvm"
    save_libsvm(path, A, y)
    X, _ = load_libsvm(path)
    s = FeatureScaler().fit(X)
    Z = s.transform(X)
    assert sp.issparse(Z) and Z.nnz == X.nnz
    assert Z.min() >= 0.0 and Z.max() <= 1.0
    np.testing.assert_allclose(Z.toarray().max(axis=0)[A.max(axis=0) > 0], 1.0)
    code, out, err = run(capsys, "-a", "ogd-hinge", path, "--scale", "--json", tmp_path / "r.json")
    assert code == 0, err
    assert "scaled  features to [0, 1]" in out
    assert json.loads((tmp_path / "r.json").read_text())["scale"] is True
    # the sample data have negative coordinates: scaled values still lie in [0, 1]
    code, out, err = run(capsys, "-a", "fogd", CLS_DATA, "--scale", "--test", CLS_DATA, "-q")
    assert code == 0, err


# ---- model file ------------------------------------------------------------------------------------

def test_model(tmp_path, capsys):
    model = pytest.importorskip("onlinekern.io.model")
    path = tmp_path / "m.model"
    out_json = tmp_path / "r.json"
    code, out, err = run(capsys, "-a", "ogd-eps", REG_DATA, "--scale", "--scale-target", "--runs", 2,
                         "--test", REG_DATA, "--model", path, "--json", out_json)
    assert code == 0, err
    assert path.exists()
    learner, extra = model.load_model(path, return_extra=True)
    assert type(learner).__name__ == "KernelOGD" and learner.seed == 1     # the last run's learner
    fs = FeatureScaler.from_state(extra["feature_scaler"])
    ts = TargetScaler.from_state(extra["target_scaler"])
    X, y = load_libsvm(REG_DATA)
    pred = learner.predict(fs.transform(X))
    rmse = float(np.sqrt(np.mean((pred - ts.transform(y)) ** 2)))
    res = json.loads(out_json.read_text())
    assert rmse == pytest.approx(res["runs"][-1]["test"]["rmse"], rel=1e-9)


# ---- listing and help -----------------------------------------------------------------------------

def test_list(capsys):
    code, out, err = run(capsys, "--list")
    assert code == 0
    table = onlinekern.available_learners()
    words = {l.split()[0] for l in out.splitlines() if l.strip()}
    assert set(table) <= words
    for info in table.values():
        assert info["paper"] in out and info["summary"] in out
    assert re.search(r"^\s*ogd-eps\s+regression\b", out, re.M)


def test_algorithm_help(capsys):
    code, out, err = run(capsys, "-a", "fogd", "--help")
    assert code == 0
    opt = re.search(r"^\s*-D, --n-components D\s+(.*?)(?=^\s*-)", out, re.M | re.S)
    assert opt and "(default: auto)" in " ".join(opt.group(1).split())
    assert "sqrt" in opt.group(1)                                  # says how 'auto' grows
    assert "Lu, Hoi, Wang, Zhao & Liu" in out
    assert "--budget" not in out and "--task" not in out         # not fogd's options
    code, out, err = run(capsys, "-a", "perceptron", "--help")
    assert code == 0 and "(default: 0.1)" in out and "--n-components" not in out
    code, out, err = run(capsys, "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "default: depends on the algorithm" in text
    for option in ("--gamma", "--eta", "--lam", "--lambda", "--loss", "--epsilon", "--huber-delta",
                   "--quantile", "--n-components", "--average", "--task", "--n-threads", "--seed"):
        assert option in out, option


# ---- errors ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, status, words", [
    (["-a", "fogg", CLS_DATA], 2, ["unknown algorithm", "did you mean 'fogd'"]),
    (["-a", "fogd", "--budget", "50", CLS_DATA], 2, ["--budget", "fogd"]),
    (["-a", "perceptron", "--loss", "hinge", CLS_DATA], 2, ["--loss", "perceptron"]),
    (["-a", "fogd", "--eta", "-1", CLS_DATA], 2, ["eta", "-1"]),
    (["-a", "fogd", "--eta", "fast", CLS_DATA], 2, ["--eta", "fast"]),
    (["-a", "fogd", "-g", "-2", CLS_DATA], 2, ["gamma"]),
    (["-a", "fogd", "--n-compnents", "5", CLS_DATA], 2, ["did you mean --n-components"]),
    (["-a", "fogd-hinge", "--loss", "logit", CLS_DATA], 2, ["loss"]),
    (["-a", "ogd-hinge", "--scale-target", CLS_DATA], 2, ["--scale-target"]),
    (["-a", "fogd"], 2, ["no data file"]),
    ([CLS_DATA], 2, ["no algorithm"]),
    (["-a", "fogd", "no_such_file.libsvm"], 1, ["no_such_file.libsvm", "No such file"]),
    (["-a", "fogd-hinge", REG_DATA], 1, ["not class labels"]),
])
def test_errors(args, status, words, capsys):
    code, out, err = run(capsys, *args)
    assert code == status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onlinekern.train: error: "), err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert "Traceback" not in err


def test_no_arguments_prints_usage(capsys):
    code, out, err = run(capsys)
    assert code == 2 and "usage:" in err


def test_malformed_file(tmp_path, capsys):
    bad = tmp_path / "bad.libsvm"
    bad.write_text("1 1:0.5 2:1\n-1 1:0.25\n1 1:0.5 2:oops\n")
    code, out, err = run(capsys, "-a", "fogd", bad)
    assert code == 1
    assert f"{bad}:3:" in err and "Traceback" not in err
    only_one = tmp_path / "one.libsvm"
    only_one.write_text("1 1:0.5\n1 1:0.25\n")
    code, out, err = run(capsys, "-a", "fogd", only_one)
    assert code == 1 and "at least 2 classes" in err


def test_unwritable_output_fails_before_learning(tmp_path, capsys):
    code, out, err = run(capsys, "-a", "fogd", CLS_DATA, "--json", tmp_path / "missing_dir" / "r.json")
    assert code == 1 and "missing_dir" in err and out == ""


def test_ctrl_c_exits_130(monkeypatch, capsys):
    import onlinekern.train as train

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(train, "run_online", interrupted)
    code, out, err = run(capsys, "-a", "fogd", CLS_DATA)
    assert code == 130 and err.strip().splitlines()[-1] == "onlinekern.train: interrupted"


def test_subprocess(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-m", "onlinekern.train", "-a", "fogd-hinge", CLS_DATA, "-q"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert FINAL_CLS.match(p.stdout.strip()), p.stdout
    bad = tmp_path / "bad.libsvm"
    bad.write_text("1 1:0.5\n+1 2:x\n")
    p = subprocess.run([sys.executable, "-m", "onlinekern.train", "-a", "fogd", str(bad)],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert p.returncode == 1
    assert f"{bad}:2:" in p.stderr and "Traceback" not in p.stderr


# ---- the option grammar ---------------------------------------------------------------------------

class _NewLearner(OnlineLearner):
    """A learner the CLI has never heard of.

    Parameters
    ----------
    budget : int
        Maximum number of support vectors.
    shrink_rate : float
        How fast old support vectors fade.
    gamma : float, 'median' or None
    keep_all : bool
    """

    family = "newlearner"
    summary = "a test learner"
    paper = "nobody, 2099"

    def __init__(self, budget=100, shrink_rate=0.5, gamma=None, keep_all=False, seed=0):
        self.budget = budget
        self.shrink_rate = shrink_rate
        self.gamma = gamma
        self.keep_all = keep_all
        self.seed = seed


def test_new_learner_options_appear_automatically(monkeypatch, capsys):
    monkeypatch.setitem(registry._FAMILIES, "newlearner", _NewLearner)
    table = cli.learner_options()
    assert table["shrink_rate"].parse is cli.parse_float           # inferred from the default
    assert table["keep_all"].parse is cli.FLAG
    parse = table["budget"].parse                                   # from the table, "auto" let through
    assert (parse("12"), parse("none"), parse("auto")) == (12, None, "auto")
    code, out, err = run(capsys, "-a", "newlearner", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "-B, --budget B" in text and "(default: 100)" in text
    assert "--shrink-rate SHRINK_RATE How fast old support vectors fade (default: 0.5)" in text
    assert "--keep-all, --no-keep-all" in text
    # fogd still has no budget: the option exists now, and does not apply
    code, out, err = run(capsys, "-a", "fogd", "-B", "20", CLS_DATA)
    assert code == 2 and "option -B does not apply to fogd" in err


def test_value_parsers():
    assert cli.parse_gamma("median") == "median" and cli.parse_gamma("0.5") == 0.5
    assert cli.parse_gamma("none") is None
    assert cli.parse_int("1e3") == 1000 and cli.parse_optional_int("auto") is None
    assert cli.parse_loss("logit") == "logistic" and cli.parse_loss("eps") == "epsilon-insensitive"
    assert cli.parse_task("binary") == "classification"
    for parser, bad in ((cli.parse_int, "2.5"), (cli.parse_float, "x"), (cli.parse_gamma, "wide"),
                        (cli.parse_loss, "hingee"), (cli.parse_task, "ranking")):
        with pytest.raises(Exception) as exc:
            parser(bad)
        assert bad in str(exc.value)


def test_summary_line_format():
    line = cli.summary_line("binary", [3.36, 3.41, 3.46], [0.20, 0.21, 0.22], [2000] * 3, "features")
    assert line == "mistake rate 3.41% ± 0.05 over 3 runs, 0.21 s ± 0.01 per run, 2000 features"
    line = cli.summary_line("regression", [0.241], [1.5], [812], "SVs")
    assert line == "RMSE 0.2410 over 1 run, 1.50 s per run, 812 SVs"


def test_progress_modes():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    s = Tty()
    p = cli.Progress(100, "binary", "SVs", stream=s, min_interval=0.0).start()
    assert p.mode == "bar"
    p(50, 5, 0.0, 7, 0.01)
    p(100, 8, 0.0, 9, 0.02)
    p.finish()
    text = s.getvalue()
    assert "\r" in text and "\n" not in text and "100/100" in text and "8.00%" in text
    s = io.StringIO()
    p = cli.Progress(100, "regression", "features", stream=s).start()
    for k in range(1, 101):
        p(k, 0, 0.25 * k, 800, 0.001 * k)
    lines = s.getvalue().splitlines()
    assert lines[0].split() == ["n_seen", "RMSE", "features", "seconds"]
    assert [int(l.split()[0]) for l in lines[1:]] == [1, 2, 4, 8, 16, 32, 64, 100]
    assert lines[-1].split()[1] == "0.5000"


# ---- preprocessing --------------------------------------------------------------------------------

def test_feature_scaler_matches_min_max_scaling():
    from sklearn.preprocessing import MinMaxScaler
    rng = np.random.default_rng(0)
    A = rng.normal(size=(80, 7)) * (rng.random((80, 7)) < 0.5)
    A[:, 2] = 4.0                    # constant: maps to lower
    A[:, 3] = 0.0                    # never seen
    A[:, 4] = np.abs(A[:, 4])        # min 0: zero stays zero
    for lower, upper in ((0.0, 1.0), (-1.0, 1.0)):
        dense = FeatureScaler(lower, upper).fit_transform(A)
        ref = MinMaxScaler(feature_range=(lower, upper)).fit_transform(A)
        np.testing.assert_allclose(dense, ref, atol=1e-12)
        Z = FeatureScaler(lower, upper).fit(sp.csr_matrix(A)).transform(sp.csr_matrix(A))
        assert sp.issparse(Z)
        np.testing.assert_allclose(Z.toarray(), ref, atol=1e-12)
    # implicit zeros count: a sparse column with only positive stored values has min 0
    X = sp.csr_matrix(np.array([[0.0, 2.0], [4.0, 0.0], [2.0, 1.0]]))
    s = FeatureScaler().fit(X)
    assert s.data_min_.tolist() == [0.0, 0.0] and s.zero_preserving()
    Z = s.transform(X)
    assert Z.nnz == X.nnz and Z.toarray().tolist() == [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]
    # a column whose zero does not map to zero becomes dense-valued, the others stay sparse
    X = sp.csr_matrix(np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 3.0]]))
    Z = FeatureScaler().fit(X).transform(X)
    assert Z.toarray().tolist() == [[0.0, 0.0], [1.0, 0.0], [0.5, 1.0]]
    assert Z.nnz == 4                # column 0 fully stored (3), column 1 as before (1)


def test_scaler_states_round_trip():
    rng = np.random.default_rng(1)
    X = sp.random(50, 6, density=0.3, random_state=2, format="csr") - 0.2 * sp.eye(50, 6, format="csr")
    s = FeatureScaler().fit(X)
    state = json.loads(json.dumps(s.get_state()))         # plain JSON types
    t = FeatureScaler.from_state(state)
    assert abs(t.transform(X) - s.transform(X)).max() == 0.0
    y = rng.normal(size=40) * 3 + 1
    ts = TargetScaler().fit(y)
    z = ts.transform(y)
    assert z.min() == 0.0 and z.max() == 1.0
    ts2 = TargetScaler.from_state(json.loads(json.dumps(ts.get_state())))
    np.testing.assert_allclose(ts2.inverse_transform(ts2.transform(y)), y, rtol=1e-12)
    const = TargetScaler().fit([2.0, 2.0])
    assert const.transform([2.0]).tolist() == [0.0] and const.inverse_transform([0.3]).tolist() == [2.0]
    with pytest.raises(ValueError):
        FeatureScaler(1.0, 0.0).fit(X)
    with pytest.raises(ValueError):
        FeatureScaler().fit(X).transform(X[:, :3])


def test_sample_data_are_reproducible(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, str(REPO / "tools" / "make_sample_data.py"), str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    for name in ("sample_classification.libsvm", "sample_regression.libsvm"):
        assert (tmp_path / name).read_bytes() == (REPO / "data" / name).read_bytes(), name
        assert (REPO / "data" / name).stat().st_size < 300_000
