"""``python -m onlinekern.predict``: svm-predict-style prediction with a saved model."""
import gzip

import numpy as np
import pytest

import onlinekern as ok
from onlinekern.io import load_libsvm, save_libsvm
from onlinekern.predict import main as predict_main
from onlinekern.preprocessing import FeatureScaler, TargetScaler
from onlinekern.train import main as train_main
from streams import score_f


def _data(rng, n=120, d=5, task="binary"):
    X = rng.uniform(-3, 7, size=(n, d))
    X[rng.random(X.shape) < 0.3] = 0.0
    w = rng.normal(size=d)
    if task == "binary":
        y = np.where(X @ w > np.median(X @ w), 1.0, -1.0)
    elif task == "multiclass":
        y = np.digitize(X @ w, np.quantile(X @ w, [0.33, 0.66])).astype(float)
    else:
        y = 10.0 + X @ w
    return X, y


def _run(fn, argv, capsys):
    code = fn([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    X, y = _data(rng)
    save_libsvm(tmp_path / "train.libsvm", X, y)
    Xt, yt = _data(rng, n=40)
    save_libsvm(tmp_path / "test.libsvm", Xt, yt)
    return tmp_path


def test_binary_scaled_matches_python(files, capsys):
    model, pred = files / "m.okm", files / "pred.txt"
    code, out, err = _run(train_main, ["-a", "ogd-hinge", files / "train.libsvm", "--scale", "-g", "0.5",
                                       "--model", model, "-q", "--progress", "off"], capsys)
    assert code == 0, err
    code, out, err = _run(predict_main, [model, files / "test.libsvm", "--output", pred, "--scores"], capsys)
    assert code == 0, err
    # the same computation by hand: the training scaler, then the model
    X, _ = load_libsvm(files / "train.libsvm")
    Xt, yt = load_libsvm(files / "test.libsvm", n_features=X.shape[1])
    learner, extra = ok.load_model(str(model), return_extra=True)
    sc = FeatureScaler.from_state(extra["feature_scaler"])
    np.testing.assert_array_equal(sc.data_min_, FeatureScaler().fit(X).data_min_)
    f = score_f(learner, sc.transform(Xt))
    p = learner.predict(sc.transform(Xt))
    rows = [line.split() for line in pred.read_text().splitlines()]
    assert len(rows) == len(yt)
    np.testing.assert_array_equal([float(r[0]) for r in rows], p)
    np.testing.assert_array_equal([float(r[1]) for r in rows], f)     # 17 digits: exact
    correct = int(np.sum(p == yt))
    assert out.strip() == f"accuracy = {100 * correct / len(yt):.2f}% ({correct}/{len(yt)})"
    # without scaling the predictions differ (the scaler really is applied)
    assert not np.array_equal(score_f(learner, Xt), f)


def test_multiclass_and_gzip(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X, y = _data(rng, task="multiclass")
    save_libsvm(tmp_path / "tr.libsvm", X, y)
    with gzip.open(tmp_path / "tr.gz", "wb") as fh:
        fh.write((tmp_path / "tr.libsvm").read_bytes())
    lr = ok.make_learner("perceptron", gamma=0.05).fit(X, y)
    ok.save_model(lr, str(tmp_path / "m.okm"))
    code, out, err = _run(predict_main, [tmp_path / "m.okm", tmp_path / "tr.gz", "-o", tmp_path / "p",
                                         "--scores", "--chunk-rows", "7"], capsys)
    assert code == 0, err
    rows = np.array([[float(v) for v in line.split()] for line in (tmp_path / "p").read_text().splitlines()])
    assert rows.shape == (len(y), 1 + 3)
    Xl, _ = load_libsvm(tmp_path / "tr.gz")       # sparse, as predict reads it
    np.testing.assert_array_equal(rows[:, 0], lr.predict(Xl))
    np.testing.assert_array_equal(rows[:, 1:], score_f(lr, Xl))
    assert out.startswith("accuracy = ") and f"/{len(y)})" in out


def test_regression_target_scaler(tmp_path, capsys):
    rng = np.random.default_rng(2)
    X, y = _data(rng, task="regression")
    save_libsvm(tmp_path / "tr.libsvm", X, y)
    model = tmp_path / "m.okm"
    code, out, err = _run(train_main, ["-a", "ogd-eps", tmp_path / "tr.libsvm", "--scale-target", "-g", "0.1",
                                       "--model", model, "-q"], capsys)
    assert code == 0, err
    code, out, err = _run(predict_main, [model, tmp_path / "tr.libsvm", "-o", tmp_path / "p"], capsys)
    assert code == 0, err
    learner, extra = ok.load_model(str(model), return_extra=True)
    ts = TargetScaler.from_state(extra["target_scaler"])
    Xl, yl = load_libsvm(tmp_path / "tr.libsvm")
    pred = ts.inverse_transform(score_f(learner, Xl))
    got = np.array([float(v) for v in (tmp_path / "p").read_text().split()])
    np.testing.assert_array_equal(got, pred)
    assert pred.min() > 1.0                      # original units, not [0, 1]
    rmse = np.sqrt(np.mean((pred - yl) ** 2))
    assert out.startswith(f"RMSE = {rmse:.6g} ({len(yl)} examples)")


def test_errors(files, capsys):
    model = files / "m.okm"
    code, out, err = _run(train_main, ["-a", "ogd-hinge", files / "train.libsvm", "-g", "0.5",
                                       "--model", model, "-q"], capsys)
    assert code == 0, err
    # corrupt / foreign model files: one line, exit 1
    bad = files / "bad.okm"
    bad.write_bytes(model.read_bytes()[:200])
    code, out, err = _run(predict_main, [bad, files / "test.libsvm"], capsys)
    assert code == 1 and err.count("\n") == 1 and "error" in err
    pkl = files / "p.pkl"
    import pickle
    pkl.write_bytes(pickle.dumps({"a": 1}))
    code, out, err = _run(predict_main, [pkl, files / "test.libsvm"], capsys)
    assert code == 1 and err.count("\n") == 1
    code, out, err = _run(predict_main, [files / "missing.okm", files / "test.libsvm"], capsys)
    assert code == 1
    # more features than the model
    wide = files / "wide.libsvm"
    wide.write_text("1 1:0.5 9:1\n-1 2:1\n")
    code, out, err = _run(predict_main, [model, wide], capsys)
    assert code == 1 and "beyond the model's 5 features" in err
    # fewer features is fine
    narrow = files / "narrow.libsvm"
    narrow.write_text("1 1:0.5\n-1 2:1\n")
    code, out, err = _run(predict_main, [model, narrow], capsys)
    assert code == 0 and "(2)" not in out and out.startswith("accuracy = ")
    # unknown labels count as mistakes, with a warning
    odd = files / "odd.libsvm"
    odd.write_text("7 1:0.5\n-1 2:1\n")
    code, out, err = _run(predict_main, [model, odd], capsys)
    assert code == 0 and "warning" in err and "/2)" in out
    # malformed data
    mal = files / "mal.libsvm"
    mal.write_text("1 1:x\n")
    code, out, err = _run(predict_main, [model, mal], capsys)
    assert code == 1
    # usage errors
    for argv in ([], [model], [model, files / "test.libsvm", "--scores"],
                 [model, files / "test.libsvm", "--bogus"], [model, files / "test.libsvm", "--chunk-rows", "0"]):
        code, out, err = _run(predict_main, argv, capsys)
        assert code == 2, argv
    # an unwritable output leaves nothing behind and fails before predicting
    code, out, err = _run(predict_main, [model, files / "test.libsvm", "-o", files / "nodir" / "p"], capsys)
    assert code == 1 and not (files / "nodir").exists()


def test_output_atomic_on_failure(files, capsys):
    """A data error half-way leaves an existing output file untouched."""
    model = files / "m.okm"
    _run(train_main, ["-a", "ogd-hinge", files / "train.libsvm", "-g", "0.5", "--model", model, "-q"], capsys)
    out_file = files / "pred.txt"
    out_file.write_text("old\n")
    data = files / "late.libsvm"
    data.write_text("1 1:0.5\n" * 20 + "1 1:zz\n")
    code, out, err = _run(predict_main, [model, data, "-o", out_file, "--chunk-rows", "5"], capsys)
    assert code == 1
    assert out_file.read_text() == "old\n"


def test_module_entry_point(files):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "onlinekern.predict", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "MODEL FILE" in r.stdout
