"""Synthetic streams and small helpers shared by the learner tests (fixed seeds)."""
import json
import os
import subprocess
import sys

import numpy as np

import onlinekern as ok


def load_tool(name):
    """The module tools/<name>.py (tools/ is not a package), for tests of a benchmark's own logic;
    tools/ goes on sys.path, as when the script runs, for its ``import harness``."""
    import importlib.util
    from pathlib import Path
    tools = Path(__file__).resolve().parents[1] / "tools"
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    path = tools / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_X(T, d, seed, sparsity=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    X[rng.random((T, d)) < sparsity] = 0.0        # real zeros, so CSR input is really sparse
    return X


def make_data(task, T=200, d=4, seed=0, noise=0.3):
    X = make_X(T, d, seed)
    rng = np.random.default_rng(seed + 1000)
    if task == "binary":
        s = X[:, 0] * X[:, 1] + 0.7 * np.sin(2 * X[:, 2]) + noise * rng.normal(size=T)
        y = np.where(s > 0, 7, 3)                  # raw labels {3, 7}: 3 -> -1, 7 -> +1
    elif task == "multiclass":
        s = np.stack([X[:, 0] + X[:, 1] ** 2 - 0.5, -X[:, 0] + 0.5 * X[:, 2], X[:, 3] - X[:, 1]], 1)
        c = np.argmax(s + noise * rng.normal(size=s.shape), axis=1)
        y = np.array([10, 20, 30])[c]              # raw labels {10, 20, 30}
    else:
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=T)
    return X, y


def encode(y, task):
    if task == "regression":
        return y.astype(float)
    classes = np.unique(y)
    if task == "binary":
        return np.where(y == classes[1], 1.0, -1.0)
    return np.searchsorted(classes, y)


def online(learner, X, y, **kw):
    res = ok.run_online(learner, X, y, keep_scores=True, **kw)
    return res, np.asarray(res.scores)


def run_at_levels(child, levels=(None, "avx2", "scalar")):
    """Run the Python source ``child`` (which prints one JSON document) in a fresh process per SIMD
    level (None: the machine's widest; else ONLINEKERN_SIMD=level) and return the parsed outputs."""
    results = []
    for level in levels:
        env = dict(os.environ)
        env.pop("ONLINEKERN_SIMD", None)
        if level is not None:
            env["ONLINEKERN_SIMD"] = level
        out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout))
    return results


def score_f(learner, X):
    """f(x) of any fitted learner: a classifier's ``decision_function``, a regressor's ``predict``.

    A regressor has no ``decision_function`` (scikit-learn's rule); its prediction is the score.
    """
    if getattr(learner, "task_", None) == "regression":
        return learner.predict(X)
    return learner.decision_function(X)
