"""Budgeted learners with their defaults on streams where the budget binds early.

The 5,000-row slices of tests/test_defaults.py hardly fill a budget of 1,000.  Here every
registered learner with a ``budget`` runs with no other option than ``budget=200`` over 20,000
rows (ijcnn1 and cod-rna.tr, binary; letter.scale + letter.scale.t, 26 classes; cadata,
regression), so for most of the stream every update removes, merges or projects: the regime a
whole stream lives in.
Each must beat the trivial online predictor by the usual margin (mistake rate <= 0.8 x the
most-frequent-label-so-far's, RMSE <= 0.9 x the running mean's).
"""
import numpy as np
import pytest
import scipy.sparse as sp

import onlinekern as ok
from onlinekern.protocol import trivial_error
from onlinekern.seeding import permutation

BUDGET = 200
ROWS = 20000
STREAMS = {"ijcnn1": ("binary", ("ijcnn1",)), "cod-rna": ("binary", ("cod-rna.tr",)),
           "letter": ("multiclass", ("letter.scale", "letter.scale.t")), "cadata": ("regression", ("cadata",))}
RATIO = {"binary": 0.8, "multiclass": 0.8, "regression": 0.9}
# Cells that do not (yet) beat the trivial predictor by the margin, with the measured ratio
# default / trivial.  The test fails when one of them starts to learn, so the list stays true.
# All but one are ijcnn1 (9.8 % positives in these rows), where 200 support vectors leave most
# learners near the majority rate with their defaults; with the default budget of 1,000 over the
# whole stream they learn (BENCHMARKS.md "Defaults over whole streams").
SHORTFALLS = {
    ("bogd", "ijcnn1"): 1.001,
    ("bogd-hinge", "ijcnn1"): 1.001,
    ("bogd-logit", "ijcnn1"): 1.003,
    ("bogd-softmax", "ijcnn1"): 1.003,
    ("bogd-sqhinge", "ijcnn1"): 1.014,
    ("bogdpp", "ijcnn1"): 1.001,
    ("bogdpp-hinge", "ijcnn1"): 1.001,
    ("bogdpp-logit", "ijcnn1"): 1.001,
    ("bogdpp-softmax", "ijcnn1"): 1.001,
    ("bogdpp-sqhinge", "ijcnn1"): 1.003,
    ("bsgd-removal", "cadata"): 0.978,
    ("bsgd-removal", "ijcnn1"): 1.030,
    ("forgetron", "ijcnn1"): 1.331,
    ("nogd", "ijcnn1"): 0.949,
    ("nogd-hinge", "ijcnn1"): 0.949,
    ("nogd-logit", "ijcnn1"): 0.850,
    ("nogd-softmax", "ijcnn1"): 0.850,
    ("nogd-sqhinge", "ijcnn1"): 0.853,
    ("ogd", "ijcnn1"): 1.001,
    ("ogd-hinge", "ijcnn1"): 1.001,
    ("ogd-logit", "ijcnn1"): 1.001,
    ("ogd-softmax", "ijcnn1"): 1.001,
    ("ogd-sqhinge", "ijcnn1"): 0.999,
    ("rbp", "ijcnn1"): 1.374,
    ("sg", "ijcnn1"): 1.052,
}


def _cells():
    for name, info in ok.available_learners().items():
        if "budget" not in info["class"]._get_param_names():
            continue
        for data, (task, _) in STREAMS.items():
            if task in info["tasks"]:
                yield name, data


@pytest.fixture(scope="module")
def streams(shared_data):
    out = {}
    for data, (task, files) in STREAMS.items():
        parts = [ok.load_libsvm(str(shared_data.compressed(f))) for f in files]
        d = max(X.shape[1] for X, _ in parts)
        X = sp.vstack([sp.csr_matrix(X, shape=(X.shape[0], d)) if X.shape[1] < d else X for X, _ in parts]).tocsr()
        y = np.concatenate([np.asarray(y) for _, y in parts])
        p = permutation(0, 0, X.shape[0])[:ROWS]
        out[data] = (X[p], y[p])
    return out


@pytest.mark.parametrize("name,data", list(_cells()), ids=lambda v: str(v))
def test_defaults_learn_when_the_budget_binds(streams, name, data):
    X, y = streams[data]
    task = STREAMS[data][0]
    params = {"budget": BUDGET}
    if "task" in ok.available_learners()[name]["class"]._get_param_names():
        params["task"] = "regression" if task == "regression" else "classification"
    learner = ok.make_learner(name, **params)
    res = ok.run_online(learner, X, y)
    assert np.isfinite(res.error)
    assert learner.n_support_ <= BUDGET
    ratio = res.error / trivial_error(y, task)
    if (name, data) in SHORTFALLS:
        assert ratio > RATIO[task], f"{name} on {data} now learns ({ratio:.3f}): remove it from SHORTFALLS"
    else:
        assert ratio <= RATIO[task], f"{name} on {data}: default / trivial = {ratio:.3f} with budget {BUDGET}"
