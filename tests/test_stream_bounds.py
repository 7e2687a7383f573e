"""The product defaults' bounds on the learners whose model grows with the stream by definition
(kernel Perceptron, kernel OGD, Projectron(++), DSG/UDSG/CDSG): the bound follows the stream's
length, holds on a stream longer than it, the learner still learns under it, and
``preset="paper"`` leaves the model unbounded (the papers' behaviour)."""
import numpy as np
import pytest

import onlinekern as ok
from onlinekern import params
from onlinekern.learners import dsg, projectron

from streams import make_data

T = 3000


def majority_rate(y):
    """Mistake rate of the online majority-class predictor (ties: the first label seen)."""
    counts, wrong = {}, 0
    for label in y:
        if counts:
            guess = max(counts, key=lambda k: counts[k])
            wrong += guess != label
        else:
            wrong += 1
        counts[label] = counts.get(label, 0) + 1
    return wrong / len(y)


@pytest.fixture
def small_work(monkeypatch):
    """A pass work so small that every stream-length bound sits at its (lowered) minimum."""
    monkeypatch.setattr(params, "PASS_WORK", 1.0)
    monkeypatch.setattr(params, "STREAM_BUDGET_MIN", 40)
    monkeypatch.setattr(projectron, "BUDGET_MIN", 30)
    monkeypatch.setattr(dsg, "BLOCKS_MIN", 12)


def test_stream_bound_follows_the_length():
    """m T c <= work within [low, high]; unknown length -> the fixed default."""
    assert params.stream_bound(None, 10.0, 5, 100, 42) == 42
    assert params.stream_bound(1000, 10.0, 5, 10 ** 9, 0, work=1e6) == 100
    assert params.stream_bound(2000, 10.0, 5, 10 ** 9, 0, work=1e6) == 50
    assert params.stream_bound(10, 10.0, 5, 100, 0, work=1e6) == 100          # short stream: the cap
    assert params.stream_bound(10 ** 6, 10.0, 5, 100, 0, work=1e6) == 5       # long stream: the floor
    X = np.ones((3, 8))
    assert params.stream_budget(X, 1, 10 ** 5) > params.stream_budget(X, 1, 10 ** 6)
    assert params.stream_budget(X, 1, None) == 4 * params.AUTO_BUDGET
    assert projectron.projectron_budget(X, 1, 10 ** 5, 0.3) > projectron.projectron_budget(X, 1, 10 ** 5, 0.6)


CASES = [("perceptron", {}, "budget"), ("ogd-hinge", {}, "budget"), ("ogd-logit", {"lam": 1e-3}, "budget"),
         ("projectron", {}, "budget"), ("projectronpp", {}, "budget"),
         ("dsg", {}, "max_blocks"), ("udsg", {}, "max_blocks"), ("cdsg", {}, "max_blocks")]


@pytest.mark.parametrize("name, extra, param", CASES)
def test_default_bound_holds_and_learns(small_work, name, extra, param):
    X, y = make_data("binary", T=T, d=3, seed=4, noise=0.2)
    learner = ok.make_learner(name, seed=0, n_threads=1, **extra)
    res = ok.run_online(learner, X, y)
    bound = learner.chosen_params()[param]
    assert bound == getattr(learner, param + "_")
    size = learner.model_size_ if param == "budget" else learner.n_blocks_
    assert 1 <= bound < T / 20                     # binds: the model would grow past it
    assert size <= bound
    assert res.mistake_rate <= 0.8 * 100 * majority_rate(y)
    paper = ok.make_learner(name, seed=0, n_threads=1, preset="paper", **extra)
    ok.run_online(paper, X, y)
    assert getattr(paper, param + "_") is None
    assert (paper.model_size_ if param == "budget" else paper.n_blocks_) > bound


def test_dsg_at_the_cap_reuses_old_blocks(small_work):
    """Every iteration past the cap steps on an old block: m stays at the cap, and the
    iterations count as reuses."""
    X, y = make_data("binary", T=T, d=3, seed=4)
    learner = ok.make_learner("dsg", seed=0, n_threads=1).fit(X, y)
    cap = learner.max_blocks_
    assert learner.n_blocks_ == cap
    assert learner.n_reused_ == learner.n_iterations_ - cap > 0


def test_ogd_truncation_keeps_the_newest():
    """With lam > 0 a full kernel OGD drops its oldest SV (NORMA's truncation): the SVs kept are
    the last ones added; with lam = 0 it stops adding (the first ones stay)."""
    X, y = make_data("binary", T=400, d=3, seed=4)
    trunc = ok.make_learner("ogd-logit", lam=1e-3, budget=25, seed=0, n_threads=1, gamma=1.0).fit(X, y)
    full = ok.make_learner("ogd-logit", lam=1e-3, budget=None, seed=0, n_threads=1, gamma=1.0).fit(X, y)
    kept = trunc.support_vectors_[trunc.core_.sv.insertion_order]
    assert np.array_equal(kept, full.support_vectors_[full.core_.sv.insertion_order][-25:])
    stop = ok.make_learner("ogd-logit", budget=25, seed=0, n_threads=1, gamma=1.0).fit(X, y)
    first = ok.make_learner("ogd-logit", budget=None, seed=0, n_threads=1, gamma=1.0).fit(X[:25], y[:25])
    assert np.array_equal(np.sort(stop.support_vectors_, axis=0), np.sort(first.support_vectors_, axis=0))


def test_perceptron_stoptron_keeps_its_hypothesis():
    """A full Perceptron skips updates (no removal): its SVs are those of the first mistakes."""
    X, y = make_data("binary", T=600, d=3, seed=5)
    full = ok.make_learner("perceptron", budget=30, gamma=1.0, seed=0, n_threads=1).fit(X, y)
    free = ok.make_learner("perceptron", budget=None, gamma=1.0, seed=0, n_threads=1).fit(X, y)
    assert full.model_size_ == 30 < free.model_size_
    assert np.array_equal(full.support_vectors_[full.core_.sv.insertion_order],
                          free.support_vectors_[free.core_.sv.insertion_order][:30])
