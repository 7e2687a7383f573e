"""Every registered learner runs through the Python API and the CLI on real binary, multiclass
and regression data (small slices of ../shared/data), and refuses an unsupported task clearly."""
import numpy as np
import pytest

import onlinekern as ok
from onlinekern.train import main as train_main
from streams import score_f

TASK_DATA = {"binary": "ijcnn1", "multiclass": "letter.scale", "regression": "casp"}
EXTRA = {}                                # per-family extra parameters (none needed)
N = 300


@pytest.fixture(scope="module")
def data(shared_data, tmp_path_factory):
    from onlinekern.preprocessing import FeatureScaler

    folder = tmp_path_factory.mktemp("slices")
    out = {}
    for task, name in TASK_DATA.items():
        X, y = ok.load_libsvm(shared_data.compressed(name))
        rows = np.sort(np.random.default_rng(0).choice(X.shape[0], N, replace=False))
        X, y = X[rows], y[rows]
        if task == "regression":
            X = FeatureScaler().fit(X).transform(X)
            y = y / np.max(np.abs(y))
        path = folder / f"{task}.libsvm"
        ok.save_libsvm(path, X, y)
        out[task] = (X, y, path)
    return out


# Learners that diverge (DivergenceError) with their defaults on these slices: none.  (DualSGD's
# Pegasos coefficients -g/(lambda t) blew up under the squared loss with lambda = 1e-4; its
# default is 2/T when T is known, as here, per ALGORITHMS.md §3.11.)
DIVERGES = set()


def cases():
    for name, info in sorted(ok.available_learners().items()):
        for task in info["tasks"]:
            marks = [pytest.mark.xfail(strict=True, raises=ok.DivergenceError,
                                       reason="diverges with the default lambda: DivergenceError")] \
                if (name, task) in DIVERGES else []
            yield pytest.param(name, task, id=f"{name}-{task}", marks=marks)


@pytest.mark.parametrize("name,task", list(cases()))
def test_python_api(data, name, task):
    X, y, _ = data[task]
    params = dict(EXTRA.get(ok.available_learners()[name]["family"], {}))
    if "task" in ok.make_learner(name).get_params():
        params["task"] = "regression" if task == "regression" else "classification"
    learner = ok.make_learner(name, n_threads=1, **params)
    res = ok.run_online(learner, X, y, seed=0)
    assert res.task == task and res.n_examples == N and res.model_size >= 0
    assert np.isfinite(res.error)
    assert np.all(np.isfinite(score_f(learner, X[:20])))


@pytest.mark.parametrize("name", sorted(n for n, i in ok.available_learners().items() if n == i["family"]))
def test_cli_and_unsupported_task(data, name, capsys):
    info = ok.available_learners()[name]
    task = info["tasks"][0]
    args = ["-a", name, str(data[task][2]), "-q", "-j", "1"]
    if info["family"] == "sg":
        args += ["--horizon", str(N)]
    if "task" in ok.make_learner(name).get_params():
        args += ["--task", "regression" if task == "regression" else "classification"]
    assert train_main(args) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert ("mistake rate" in line) or ("RMSE" in line)
    missing = [t for t in ("binary", "multiclass", "regression") if t not in info["tasks"]]
    if missing and "task" not in ok.make_learner(name).get_params():
        X, y, _ = data[missing[0]]
        with pytest.raises(ValueError):
            ok.run_online(ok.make_learner(name, **EXTRA.get(info["family"], {})), X, y)
