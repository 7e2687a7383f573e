"""RandomStream draws exactly what numpy's Generator draws for the same seed stream."""
import pickle

import pytest

from onlinekern._core.rng import RandomStream
from onlinekern.seeding import CHOICE, rng


@pytest.mark.parametrize("bounds", [[1, 2, 3, 7, 100, 1000], [2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 40, 5]])
def test_integers_and_random_match_numpy(bounds):
    ours = RandomStream(42, CHOICE)
    ref = rng(42, CHOICE)
    for i in range(3000):
        n = bounds[i % len(bounds)]
        if i % 7 == 3:
            assert ours.py_random() == ref.random()
        else:
            assert ours.py_integers(n) == ref.integers(n)


def test_keys_and_state_round_trip():
    a = RandomStream(5, CHOICE, 3)
    ref = rng(5, CHOICE, 3)
    assert [a.py_integers(10) for _ in range(20)] == [int(v) for v in ref.integers(10, size=20)]
    b = pickle.loads(pickle.dumps(a))
    c = RandomStream(0, 0, state=a.state)
    draws = [a.py_integers(1000) for _ in range(50)]
    assert draws == [b.py_integers(1000) for _ in range(50)] == [c.py_integers(1000) for _ in range(50)]
