"""Streaming (``run_online_stream``, ``train --stream``) equals ``run_online`` on the loaded file."""
import bz2
import gzip
import lzma
import os

import numpy as np
import pytest

import onlinekern as ok
from onlinekern._core import heap
from onlinekern.io import load_libsvm, save_libsvm
from onlinekern.protocol import run_online, run_online_stream
from onlinekern.registry import make_learner
from onlinekern.train import main as train_main
from streams import score_f

N = 157


def _data(task, rng):
    X = rng.normal(size=(N, 6))
    X[rng.random(X.shape) < 0.3] = 0.0
    w = rng.normal(size=6)
    if task == "binary":
        y = np.where(X @ w + 0.3 * rng.normal(size=N) > 0, 1.0, -1.0)
    elif task == "multiclass":
        y = np.digitize(X @ w, [-0.5, 0.5]).astype(float) + 1.0
    else:
        y = X @ w + 0.1 * rng.normal(size=N)
    return X, y


def _write(path, X, y, comp=None):
    plain = path.with_suffix(".txt")
    save_libsvm(plain, X, y)
    if comp is None:
        return plain
    opener = {"gz": gzip.open, "xz": lzma.open, "bz2": bz2.open}[comp]
    out = path.with_suffix("." + comp)
    with opener(out, "wb") as f:
        f.write(plain.read_bytes())
    return out


CASES = [("fogd-hinge", "binary", {"n_components": 40, "gamma": 0.3, "seed": 3}),
         ("ogd-eps", "regression", {"gamma": 0.2}),
         ("perceptron", "multiclass", {"gamma": 0.5}),
         ("fogd-eps", "regression", {"n_components": 30, "gamma": 0.2, "seed": 1})]


@pytest.mark.parametrize("algo,task,params", CASES)
@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_stream_equals_loaded(tmp_path, algo, task, params, chunk):
    X, y = _data(task, np.random.default_rng(hash(task) % 1000))
    path = _write(tmp_path / "d", X, y)
    Xl, yl = load_libsvm(path)
    ref = run_online(make_learner(algo, **params), Xl, yl, keep_scores=True)
    lr = make_learner(algo, **params)
    got = run_online_stream(lr, path, chunk_rows=chunk, keep_scores=True)
    assert got.n_examples == ref.n_examples == N
    assert got.n_mistakes == ref.n_mistakes
    assert got.model_size == ref.model_size
    if task == "regression":
        assert got.rmse == ref.rmse            # bit-identical, not approximately
    else:
        assert got.mistake_rate == ref.mistake_rate
    np.testing.assert_array_equal(got.scores, ref.scores)
    assert set(got.curve) == set(ref.curve)
    for key in got.curve:
        if key != "seconds":
            np.testing.assert_array_equal(got.curve[key], ref.curve[key], err_msg=key)
    # the learned models are the same too
    ref_l = make_learner(algo, **params)
    run_online(ref_l, Xl, yl)
    np.testing.assert_array_equal(score_f(lr, Xl), score_f(ref_l, Xl))


@pytest.mark.parametrize("comp", ["gz", "xz", "bz2"])
def test_stream_compressed(tmp_path, comp):
    X, y = _data("binary", np.random.default_rng(5))
    path = _write(tmp_path / "d", X, y, comp)
    Xl, yl = load_libsvm(path)
    params = {"n_components": 40, "gamma": 0.3, "seed": 3}
    ref = run_online(make_learner("fogd-hinge", **params), Xl, yl, keep_scores=True)
    got = run_online_stream(make_learner("fogd-hinge", **params), path, chunk_rows=7, keep_scores=True)
    assert got.n_mistakes == ref.n_mistakes
    np.testing.assert_array_equal(got.scores, ref.scores)
    np.testing.assert_array_equal(got.curve["mistake_rate"], ref.curve["mistake_rate"])


def test_single_pass_options(tmp_path):
    """classes + n_features + doubling checkpoints: no first pass; same mistakes and scores."""
    X, y = _data("binary", np.random.default_rng(6))
    path = _write(tmp_path / "d", X, y)
    Xl, yl = load_libsvm(path)
    ref = run_online(make_learner("ogd-hinge", gamma=0.3), Xl, yl, keep_scores=True,
                     checkpoints=[1, 2, 4, 8, 16, 32, 64, 128, N])
    got = run_online_stream(make_learner("ogd-hinge", gamma=0.3), path, chunk_rows=10,
                            classes=[-1, 1], n_features=Xl.shape[1], checkpoints="doubling",
                            keep_scores=True)
    np.testing.assert_array_equal(got.scores, ref.scores)
    np.testing.assert_array_equal(got.curve["n_seen"], ref.curve["n_seen"])
    np.testing.assert_array_equal(got.curve["mistake_rate"], ref.curve["mistake_rate"])


def test_stream_errors(tmp_path):
    X, y = _data("binary", np.random.default_rng(7))
    path = _write(tmp_path / "d", X, y)
    with pytest.raises(ValueError):          # an index beyond n_features
        run_online_stream(make_learner("ogd-hinge", gamma=0.3), path, n_features=2)
    with pytest.raises(ValueError):          # a label outside the given classes
        run_online_stream(make_learner("ogd-hinge", gamma=0.3), path, classes=[1, 2])


def _train(argv, capsys):
    code = train_main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_cli_stream_equals_loaded(tmp_path, capsys):
    X, y = _data("binary", np.random.default_rng(8))
    path = str(_write(tmp_path / "d", X, y, "gz"))
    common = ["-a", "fogd-hinge", "--n-components", "40", "-g", "0.3", "-q", "--progress", "off"]
    code, out_l, err = _train(common + [path, "--json", str(tmp_path / "l.json")], capsys)
    assert code == 0, err
    code, out_s, err = _train(common + [path, "--stream", "--chunk-rows", "9",
                                        "--json", str(tmp_path / "s.json"),
                                        "--model", str(tmp_path / "m.okm")], capsys)
    assert code == 0, err
    import json
    a = json.loads((tmp_path / "l.json").read_text())["runs"][0]
    b = json.loads((tmp_path / "s.json").read_text())["runs"][0]
    assert a["n_mistakes"] == b["n_mistakes"] and a["curve"]["mistake_rate"] == b["curve"]["mistake_rate"]
    m = ok.load_model(str(tmp_path / "m.okm"))
    assert m.n_features_in_ == X.shape[1]
    # single pass: classes and n_features given
    code, out, err = _train(common + [path, "--stream", "--classes", "1,-1", "--n-features", "6"], capsys)
    assert code == 0, err
    assert out.split()[2] == out_l.split()[2]          # same mistake rate


@pytest.mark.parametrize("extra", [["--runs", "2"], ["--shuffle"], ["--scale"],
                                   ["--chunk-rows", "0"], ["--test", "x.libsvm"]])
def test_cli_stream_usage(tmp_path, capsys, extra):
    X, y = _data("binary", np.random.default_rng(9))
    path = str(_write(tmp_path / "d", X, y))
    code, out, err = _train(["-a", "ogd-hinge", path, "--stream", "-q"] + extra, capsys)
    assert code == 2, err
    assert "error" in err


def test_stream_resolves_the_adaptive_defaults_on_the_first_chunk(tmp_path):
    """gamma="auto" (and "median") are resolved on the first streamed chunk: with one chunk the
    streamed pass is run_online's in file order, bit for bit."""
    X, y = _data("binary", np.random.default_rng(4))
    path = str(_write(tmp_path / "d", X, y))
    X, y = ok.load_libsvm(path)
    for gamma in ("auto", "median"):
        a = ok.run_online(ok.make_learner("fogd-hinge", gamma=gamma, n_components=20), X, y, keep_scores=True)
        streamed = ok.make_learner("fogd-hinge", gamma=gamma, n_components=20)
        b = ok.run_online_stream(streamed, path, chunk_rows=10 ** 6, keep_scores=True)
        assert a.n_mistakes == b.n_mistakes
        np.testing.assert_array_equal(a.scores, b.scores)
        assert streamed.gamma_ > 0


def test_cli_stream_bad_data(tmp_path, capsys):
    p = tmp_path / "bad.libsvm"
    p.write_text("1 1:0.5\n-1 2:x\n")
    code, out, err = _train(["-a", "ogd-hinge", str(p), "--stream", "-q", "-g", "1"], capsys)
    assert code == 1 and "error" in err
    code, out, err = _train(["-a", "ogd-hinge", str(p), "--stream", "-q", "-g", "1",
                             "--classes", "1,-1", "--n-features", "1"], capsys)
    assert code == 1 and "error" in err


def _rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) << 10
    raise OSError("no VmRSS")


@pytest.mark.skipif(not heap.AVAILABLE or not os.path.exists("/proc/self/status"),
                    reason="needs glibc's malloc_trim and /proc")
def test_heap_trim_returns_free_pages_between_live_blocks():
    """After a 16 MiB block is freed, glibc serves 1 MiB blocks from the heap; freed, they stay
    resident while a live block sits above them, until heap.trim() gives the pages back."""
    big = np.ones(2 << 20)
    del big
    blocks = [np.ones(1 << 17) for _ in range(100)]
    keep = blocks[-1]
    del blocks
    before = _rss()
    assert heap.trim()
    assert before - _rss() > 50 << 20
    assert keep[0] == 1.0


def test_stream_trims_the_heap_once_per_chunk(tmp_path, monkeypatch):
    X, y = _data("binary", np.random.default_rng(0))
    path = str(tmp_path / "d.svm")
    save_libsvm(path, X, y)
    calls = []
    monkeypatch.setattr(heap, "trim", lambda: calls.append(1) or False)
    run_online_stream(make_learner("perceptron", gamma=0.5), path, chunk_rows=40)
    assert len(calls) == 1 + 4                         # after the width choice, then per chunk
