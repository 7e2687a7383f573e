"""Model files: bit-identical round trips, exact resumption, and clear errors for bad files."""
import io
import json
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern.io import atomic
from streams import score_f

RNG = np.random.default_rng(7)
X = RNG.normal(size=(240, 6))
Y = {
    "binary": np.where(X[:, 0] * X[:, 1] > 0, 1, 0),
    "multiclass": (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.3).astype(int) * 2,
    "regression": np.sin(X[:, 0]) + 0.5 * X[:, 2],
}
CASES = [
    ("perceptron", "binary", {}),
    ("perceptron", "multiclass", {}),
    ("perceptron", "regression", {"task": "regression"}),
    ("ogd-hinge", "binary", {"lam": 0.01}),
    ("ogd-softmax", "multiclass", {}),
    ("ogd-eps", "regression", {"lam": 0.001}),
    ("fogd-logit", "binary", {"n_components": 64, "lam": 0.001, "average": True}),
    ("fogd-hinge", "multiclass", {"n_components": 32}),
    ("fogd-huber", "regression", {"n_components": 48}),
    ("son-hinge", "binary", {"n_components": 24, "sketch_size": 3}),
    ("son-softmax", "multiclass", {"n_components": 16, "sketch_size": 2}),
    ("son-l2", "regression", {"n_components": 20, "sketch_size": 4}),
    ("lasvm", "binary", {"budget": 30, "c": 5.0}),
    ("kons-hinge", "binary", {"budget": 25}),
    ("kons-softmax", "multiclass", {"budget": 20}),
    ("kons-l2", "regression", {"budget": 30, "restart": True}),
]


def fitted(name, task, params):
    learner = ok.make_learner(name, **params)
    return learner.fit(X[:160], Y[task][:160])


@pytest.mark.parametrize("name,task,params", CASES)
def test_round_trip_predicts_and_resumes_identically(tmp_path, name, task, params):
    learner = fitted(name, task, params)
    path = tmp_path / "m.okm"
    ok.save_model(learner, path, extra={"note": "x", "scale": np.arange(3.0)})
    loaded, extra = ok.load_model(path, return_extra=True)
    assert type(loaded) is type(learner)
    assert loaded.get_params() == learner.get_params()
    assert np.array_equal(extra["scale"], np.arange(3.0)) and extra["note"] == "x"
    assert np.array_equal(score_f(loaded, X[160:]), score_f(learner, X[160:]))
    assert np.array_equal(loaded.predict(X[160:]), learner.predict(X[160:]))
    # resuming online learning continues exactly as if never saved
    learner.partial_fit(X[160:], Y[task][160:])
    loaded.partial_fit(X[160:], Y[task][160:])
    assert loaded.n_seen_ == learner.n_seen_ == 240
    assert np.array_equal(score_f(loaded, sp.csr_matrix(X)), score_f(learner, sp.csr_matrix(X)))


def test_unfitted_learner_cannot_be_saved(tmp_path):
    with pytest.raises(ok.NotFittedError):
        ok.save_model(ok.FOGD(), tmp_path / "m")


def corrupt(tmp_path, mutate):
    """Save a model, let ``mutate(header, arrays)`` edit it, and write it back as a raw npz."""
    path = tmp_path / "m.npz"
    ok.save_model(fitted("ogd-hinge", "binary", {}), path)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(arrays.pop("__header__").tobytes())
    mutate(header, arrays)
    buf = io.BytesIO()
    np.savez(buf, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    path.write_bytes(buf.getvalue())
    return path


@pytest.mark.parametrize("mutate,word", [
    (lambda h, a: h.update(version=99), "version"),
    (lambda h, a: h.update(format="something-else"), "not an onlinekern model"),
    (lambda h, a: h.pop("core"), "lacks"),
    (lambda h, a: h.update(core_class="os.system"), "outside onlinekern"),
    (lambda h, a: h.update(core_class="onlinekern.base.OnlineLearner"), "not a learner core"),
    (lambda h, a: h.update({"class": "Evil", "family": "evil"}), "unknown learner"),
    (lambda h, a: a.update({"core/sv/X": np.zeros((3, 2))}), "inconsistent"),
    (lambda h, a: a.update({"core/sv/stamp": np.zeros(1, dtype=np.int64)}), "inconsistent"),
    (lambda h, a: a.pop("core/sv/coef"), "missing array"),
    (lambda h, a: h["core"].update(n_features=0), "inconsistent"),
    (lambda h, a: h["params"].update(eta=-1.0), "inconsistent"),
    (lambda h, a: h["core"]["loss"].update(name="nonsense"), "inconsistent"),
    (lambda h, a: h["core"]["loss"].update(multiclass=True), "inconsistent"),
    (lambda h, a: h["fitted"].update(task_="multiclass"), "does not match"),
])
def test_hand_edited_files_raise_model_format_error(tmp_path, mutate, word):
    path = corrupt(tmp_path, mutate)
    with pytest.raises(ok.ModelFormatError, match=word):
        ok.load_model(path)


def test_truncated_and_garbage_files(tmp_path):
    path = tmp_path / "m.npz"
    ok.save_model(fitted("fogd-hinge", "binary", {"n_components": 16}), path)
    data = path.read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 5):
        bad = tmp_path / f"cut{cut}.npz"
        bad.write_bytes(data[:cut])
        with pytest.raises(ok.ModelFormatError):
            ok.load_model(bad)
    junk = tmp_path / "junk"
    junk.write_bytes(bytes(RNG.integers(0, 256, 4000, dtype=np.uint8)))
    with pytest.raises(ok.ModelFormatError):
        ok.load_model(junk)
    with pytest.raises(FileNotFoundError):
        ok.load_model(tmp_path / "missing.npz")


def test_pickled_payload_is_never_loaded(tmp_path):
    """An object array (which numpy would unpickle) is refused, not executed."""
    path = tmp_path / "m.npz"
    ok.save_model(fitted("perceptron", "binary", {}), path)
    with zipfile.ZipFile(path, "a") as z:
        buf = io.BytesIO()
        np.save(buf, np.array([object()], dtype=object), allow_pickle=True)
        z.writestr("evil.npy", buf.getvalue())
    with pytest.raises(ok.ModelFormatError):
        ok.load_model(path)


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "m.npz"
    ok.save_model(fitted("perceptron", "binary", {}), path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        ok.save_model(fitted("ogd-hinge", "binary", {}), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


def _read_only(obj):
    if isinstance(obj, np.ndarray):
        obj = obj.copy()
        obj.flags.writeable = False
        return obj
    if isinstance(obj, dict):
        return {k: _read_only(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_read_only(v) for v in obj)
    return obj


@pytest.mark.parametrize("family", sorted(n for n, i in ok.available_learners().items() if n == i["family"]))
def test_every_core_rebuilds_from_read_only_state(family):
    """set_state only reads its arrays (memory-mapped pickles and model files hand them over
    read-only); the rebuilt core resumes exactly like the original."""
    from onlinekern._core.learner import _rebuild_core

    kw = {"horizon": 240} if family == "sg" else {}
    if "budget" in ok.make_learner(family, **kw).get_params() and family not in ("projectron", "projectronpp"):
        kw["budget"] = 50
    a = ok.make_learner(family, **kw).fit(X[:160], Y["binary"][:160])
    b = ok.make_learner(family, **kw).fit(X[:160], Y["binary"][:160])
    b.core_ = _rebuild_core(type(a.core_), _read_only(a.core_.get_state()))
    a.partial_fit(X[160:], Y["binary"][160:])
    b.partial_fit(X[160:], Y["binary"][160:])
    if family != "sg":                           # sg's prediction is a fresh Monte-Carlo estimate
        assert np.array_equal(score_f(a, X), score_f(b, X))
    assert a.n_seen_ == b.n_seen_ == 240
