"""The thread policy: a core never runs more threads than the machine has cores free."""
import numpy as np
import pytest

import onlinekern as ok
from onlinekern._core import threads
from onlinekern._core.threads import INTERVAL, POLICY, ThreadPolicy


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def policy(busy, cores=4):
    clock = Clock()
    seq = iter(busy)
    return ThreadPolicy(reader=lambda: next(seq), cores=cores, clock=clock), clock


def test_first_reading_gives_the_free_cores_and_never_less_than_one():
    p, _ = policy([1])
    assert p.threads(8) == 3
    p, _ = policy([9])
    assert p.threads(8) == 1
    p, _ = policy([0])
    assert p.threads(2) == 2          # never more than asked
    p, _ = policy([])                 # one thread asked: the machine is not read at all
    assert p.threads(1) == 1


def test_steps_down_at_once_and_up_only_after_two_readings():
    p, clock = policy([0, 3, 0, 0, 0])
    assert p.threads(4) == 4
    clock.t += INTERVAL
    assert p.threads(4) == 1          # three others appeared: down at once
    clock.t += INTERVAL
    assert p.threads(4) == 1          # one quiet reading is not enough
    clock.t += INTERVAL
    assert p.threads(4) == 4          # the second in a row is
    clock.t += INTERVAL
    assert p.threads(4) == 4


def test_reads_the_machine_at_most_once_per_interval():
    calls = []
    p = ThreadPolicy(reader=lambda: calls.append(1) or 0, cores=2, clock=Clock())
    for _ in range(10):
        p.threads(2)
    assert len(calls) == 1
    p.clock.t += p.interval
    p.threads(2)
    p.threads(2, force=True)
    assert len(calls) == 3


def test_busy_cores_reads_this_machine():
    n = threads.busy_cores()
    assert isinstance(n, int) and n >= 0
    assert threads.usable_cores() >= 1


@pytest.fixture
def machine(monkeypatch):
    """The process-wide policy sees a 2-core machine with ``state["busy"]`` other busy threads
    (conftest's quiet_machine has reset its readings)."""
    state = {"busy": 0}
    monkeypatch.setattr(POLICY, "reader", lambda: state["busy"])
    monkeypatch.setattr(POLICY, "cores", 2)
    return state


def stream(n=3000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(np.sin(X[:, 0] * 2) + X[:, 1] ** 2 > 0.8, 1, -1)
    return X, y


@pytest.mark.parametrize("busy, used", [(0, 2), (2, 1)])
def test_a_pass_uses_the_free_cores_and_gives_the_same_bits(machine, busy, used):
    X, y = stream()
    machine["busy"] = busy
    a = ok.KernelOGD(gamma=0.5, n_threads=2, seed=0)
    ra = ok.run_online(a, X, y, seed=0, keep_scores=True)
    assert a.core_.max_threads == 2 and a.core_.n_threads == used
    b = ok.KernelOGD(gamma=0.5, n_threads=1, seed=0)
    rb = ok.run_online(b, X, y, seed=0, keep_scores=True)
    np.testing.assert_array_equal(ra.scores, rb.scores)
    np.testing.assert_array_equal(a.decision_function(X[:50]), b.decision_function(X[:50]))


def test_a_running_pass_steps_down_when_the_machine_fills(machine, monkeypatch):
    """The pass looks again every INTERVAL seconds: with the interval shortened to 0 and other
    programs appearing after the first look, the team shrinks to one thread mid-pass."""
    X, y = stream(n=4000)
    seen = []

    def reader():
        seen.append(1)
        return 0 if len(seen) == 1 else 2
    monkeypatch.setattr(POLICY, "reader", reader)
    monkeypatch.setattr(POLICY, "interval", 0.0)
    learner = ok.KernelOGD(gamma=0.5, n_threads=2, seed=0)
    ok.run_online(learner, X, y, seed=0)
    assert len(seen) >= 2, "the pass never looked at the machine again"
    assert learner.core_.n_threads == 1 and learner.core_.max_threads == 2


def test_n_threads_none_follows_the_openmp_limits():
    """n_threads=None takes OMP_NUM_THREADS (a fresh process) and a threadpoolctl limit in force
    (joblib's workers start with one), capped at the usable cores; an explicit n_threads wins."""
    import subprocess
    import sys
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from onlinekern._core.learner import openmp_max_threads
    X = np.random.default_rng(0).normal(size=(50, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    est = ok.make_learner("ogd-hinge", gamma=0.5).fit(X, y)
    assert est.core_.max_threads == min(threads.usable_cores(), openmp_max_threads())
    with threadpoolctl.threadpool_limits(1):
        assert ok.make_learner("ogd-hinge", gamma=0.5).fit(X, y).core_.max_threads == 1
        assert ok.make_learner("ogd-hinge", gamma=0.5, n_threads=3).fit(X, y).core_.max_threads == 3
    code = ("import numpy as np, onlinekern as ok\n"
            "X = np.random.default_rng(0).normal(size=(50, 3)); y = np.where(X[:, 0] > 0, 1, -1)\n"
            "print(ok.make_learner('ogd-hinge', gamma=0.5).fit(X, y).core_.max_threads)\n")
    env = {**__import__("os").environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
