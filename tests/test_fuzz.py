"""Fast CI subset of tools/fuzz_reader.py: the reader agrees with the pure-Python reference
parser (or raises LibsvmFormatError on the same line) on generated and adversarial input."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import fuzz_reader as fr  # noqa: E402

N_CI = 3000


def test_fuzz_subset():
    res = fr.run(N_CI, seed=7, timeout=20.0, max_rss_mb=1500.0)
    assert res["failures"] == []
    assert res["inputs"] == N_CI
    # The mix really exercises both outcomes.
    assert res["equal"] > N_CI // 5 and res["rejected"] > N_CI // 3


@pytest.mark.parametrize("seed", range(5))
def test_long_lines(tmp_path, seed):
    # 10**5-token lines of each long kind (the full tool uses 10**6).
    content = fr._long_line(fr.random.Random(seed), 10**4)
    fr.check_input(content, None, False, str(tmp_path / "long.svm"), stream=True)


@pytest.mark.parametrize("content", [
    b"1 2147483647:1\n", b"1 2147483648:1\n", b"1 18446744073709551617:1\n",
    b"1 0000000000000000000000000000002:1\n", b"\xff\xfe1\x00 \x001\x00:\x002\x00",
    "\u0663 1:1\n".encode(), b"1 1:0x1p3\n", b"nan\n", b"1 1:1e309\n", b"1 1:1.7976931348623158e308\n",
])
def test_edge_inputs(tmp_path, content):
    for nf in (None, 5):
        fr.check_input(content, nf, False, str(tmp_path / "edge.svm"), stream=True)


def test_planted_reference_bug_is_caught(tmp_path, monkeypatch):
    # Tests must be able to fail: a reference that accepts hex floats disagrees with the reader.
    monkeypatch.setattr(fr, "_NUMBER", fr.re.compile(rb"[0-9a-fxp.+-]+"))
    monkeypatch.setattr(fr, "float", lambda t: float.fromhex(t.decode()), raising=False)
    with pytest.raises(AssertionError):
        fr.check_input(b"1 1:0x1p3\n", None, False, str(tmp_path / "hex.svm"))


def test_watchdog_reports_crash_and_hang(monkeypatch):
    real = fr.check_input

    def flaky(content, n_features, float32, path, stream=False):
        i = fr._current
        if i == 3:
            os._exit(3)                     # a crash of the child
        if i == 6:
            fr.time.sleep(60)               # a hang
        return real(content, n_features, float32, path, stream)

    real_make = fr.make_input

    def tracking_make(seed, i):
        fr._current = i
        return real_make(seed, i)

    monkeypatch.setattr(fr, "check_input", flaky)
    monkeypatch.setattr(fr, "make_input", tracking_make)
    res = fr.run(10, seed=1, timeout=1.0, max_rss_mb=1500.0)
    assert [f[0] for f in res["failures"]] == [3, 6]
    assert "died" in res["failures"][0][2] and "hang" in res["failures"][1][2]
    assert res["inputs"] == 10
