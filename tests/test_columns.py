"""ColumnMap: columns numbered in order of first appearance, checked against a dict."""
import pickle

import numpy as np

from onlinekern._core.columns import ColumnMap


def test_slots_follow_first_appearance_like_a_dict():
    rng = np.random.default_rng(0)
    cols = rng.integers(0, 2**31 - 1, size=20000)
    cols = np.concatenate([cols, cols[:500], [0, 2**31 - 1]])
    m = ColumnMap()
    got = m.add_all(cols)
    ref = {}
    want = np.array([ref.setdefault(int(c), len(ref)) for c in cols])
    np.testing.assert_array_equal(got, want)
    assert len(m) == len(ref)
    np.testing.assert_array_equal(m.columns(), np.array(list(ref), dtype=np.int32))


def test_unknown_columns_are_minus_one_and_not_added():
    m = ColumnMap([7, 3, 1 << 24])
    np.testing.assert_array_equal(m.slots([3, 4, 1 << 24, 7]), [1, -1, 2, 0])
    assert len(m) == 3


def test_pickle_keeps_slots():
    m = ColumnMap(np.arange(1000)[::-1] * 4099)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.columns(), m.columns())
    np.testing.assert_array_equal(m2.slots([4099 * 5, 1]), m.slots([4099 * 5, 1]))


def test_memory_follows_the_columns_not_their_largest_index():
    m = ColumnMap(np.arange(100) * (1 << 24))
    assert m.nbytes() < 4096


def test_out_of_range_columns_are_refused():
    import pytest
    with pytest.raises(ValueError):
        ColumnMap([-1])
