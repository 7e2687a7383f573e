"""Fuzzing of the LIBSVM reader against the pure-Python reference (tests/libsvm_reference.py).

Each input (tests/fuzz_inputs.py draws it from ``random.Random(seed)``, the seed from hypothesis, so a
failure names the seed that replays it) goes
through ``parse_libsvm`` on the bytes, ``load_libsvm`` on a file and, when hypothesis says so,
``stream_libsvm`` with 7-byte blocks; all must agree bitwise with the reference or reject the
line it names.  Fast by default (ONLINEKERN_FUZZ_EXAMPLES, default 1000 inputs, derandomized: the
same inputs every run); the long run that BENCHMARKS.md cites::

    ONLINEKERN_FUZZ_EXAMPLES=100000 python -m pytest tests/test_fuzz.py -s -k generated

and the ~1 GiB single lines (about 2 GB of memory)::

    ONLINEKERN_FUZZ_BIG=1 python -m pytest tests/test_fuzz.py -s -k big
"""
import os
import random
import re
import resource
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzz_inputs as fi
import libsvm_reference as lr
from onlinekern.io import load_libsvm, stream_libsvm

N_EXAMPLES = int(os.environ.get("ONLINEKERN_FUZZ_EXAMPLES", "1000"))
LONG = 10**6 if N_EXAMPLES >= 100_000 else 10**4        # tokens of the long lines
FUZZ = settings(max_examples=N_EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def test_generated_inputs_agree_with_reference(tmp_path):
    path = str(tmp_path / "fuzz.svm")
    counts, kinds = Counter(), Counter()
    t0 = time.monotonic()

    @FUZZ
    @given(seed=st.integers(0, 2**64 - 1), stream=st.integers(0, 7))
    def one(seed, stream):
        content, n_features, float32, kind = fi.make_input(random.Random(seed))
        kinds[kind] += 1
        counts[lr.check_input(content, n_features, float32, path, stream=stream == 0)] += 1

    one()
    n = sum(counts.values())
    print(f"\nreader fuzzing: {n:,} inputs, 0 failures ({counts['equal']:,} parsed equal, {counts['rejected']:,} "
          f"rejected with LibsvmFormatError), peak RSS {_peak_rss_mb():.0f} MB, {time.monotonic() - t0:.1f} s; "
          f"kinds {dict(kinds)}")
    # the mix really exercises both outcomes
    assert n >= N_EXAMPLES and counts["equal"] > n // 10 and counts["rejected"] > n // 4


@settings(max_examples=max(200, N_EXAMPLES // 5), deadline=None, derandomize=True, database=None)
@given(content=st.binary(max_size=300), n_features=st.sampled_from([None, None, 3, 30]), float32=st.booleans())
def test_arbitrary_bytes_agree_with_reference(tmp_path_factory, content, n_features, float32):
    path = str(tmp_path_factory.getbasetemp() / "bytes.svm")
    assert lr.check_input(content, n_features, float32, path, stream=True) in ("equal", "rejected")


@pytest.mark.parametrize("seed", range(5))
def test_long_lines(tmp_path, seed):
    # LONG-token lines of each long kind (10**6 in the long run)
    content = fi.long_line(random.Random(seed), LONG)
    lr.check_input(content, None, False, str(tmp_path / "long.svm"), stream=True)


@pytest.mark.parametrize("content", [
    b"1 2147483647:1\n", b"1 2147483648:1\n", b"1 18446744073709551617:1\n",
    b"1 0000000000000000000000000000002:1\n", b"\xff\xfe1\x00 \x001\x00:\x002\x00",
    "\u0663 1:1\n".encode(), b"1 1:0x1p3\n", b"nan\n", b"1 1:1e309\n", b"1 1:1.7976931348623158e308\n",
])
def test_edge_inputs(tmp_path, content):
    for nf in (None, 5):
        lr.check_input(content, nf, False, str(tmp_path / "edge.svm"), stream=True)


def test_planted_reference_bug_is_caught(tmp_path, monkeypatch):
    # Tests must be able to fail: a reference that accepts hex floats disagrees with the reader.
    monkeypatch.setattr(lr, "NUMBER", re.compile(rb"[0-9a-fxp.+-]+"))
    monkeypatch.setattr(lr, "float", lambda t: float.fromhex(t.decode()), raising=False)
    with pytest.raises(AssertionError):
        lr.check_input(b"1 1:0x1p3\n", None, False, str(tmp_path / "hex.svm"))


@pytest.mark.skipif(os.environ.get("ONLINEKERN_FUZZ_BIG") != "1", reason="~1 GiB lines: set ONLINEKERN_FUZZ_BIG=1")
@pytest.mark.parametrize("case", range(4))
def test_big_single_lines(tmp_path, case):
    size = int(os.environ.get("ONLINEKERN_FUZZ_BIG_BYTES", str(1 << 30)))
    name, writer, (d, ix, ip, lb, w) = list(fi.big_inputs(size))[case]
    path = tmp_path / "big.svm"
    with open(path, "wb") as f:
        writer(f)
    expected = (np.array(d), np.array(ix, np.int32), np.array(ip, np.int64), np.array(lb), w)
    t = time.monotonic()
    X, y = load_libsvm(path)
    assert lr.same_arrays((X.data, X.indices, X.indptr, y, X.shape[1]), expected), name
    assert sum(len(c[1]) for c in stream_libsvm(path, chunk_rows=1)) == len(lb), name
    print(f"\nbig {name}: ok ({path.stat().st_size / 2**30:.2f} GiB, {time.monotonic() - t:.1f} s, "
          f"peak RSS {_peak_rss_mb():.0f} MB)")
