"""Shared fixtures.

Real benchmark data lives in ``../shared/data`` beside the checkout (never in the repo).  Every
test that needs it goes through the ``shared_data`` fixture: it skips with a reason when the data
is absent, and fails loudly instead when ``ONLINEKERN_REQUIRE_DATA=1`` (CI sets it), so a CI run
can never pass by silently skipping the real-data tests.
"""
import lzma
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("ONLINEKERN_SHARED_DATA", REPO.parent / "shared" / "data"))


class SharedData:
    """Locate and decompress files of ../shared/data (cached per session in a tmp dir)."""

    def __init__(self, root, cache):
        self.root = root
        self.cache = cache

    def compressed(self, name):
        """Path of ``name.xz`` (``name`` without the .xz suffix)."""
        path = self.root / (name + ".xz")
        if not path.exists():
            _missing(f"{path} not found")
        return path

    def plain(self, name):
        """Path of a decompressed copy of ``name`` (made once per session)."""
        out = self.cache / name
        if not out.exists():
            with lzma.open(self.compressed(name)) as src:
                tmp = out.with_suffix(".part")
                tmp.write_bytes(src.read())
                tmp.rename(out)
        return out

    def names(self):
        """Every data set name in the shared folder (without .xz)."""
        files = sorted(p.name[:-3] for p in self.root.glob("*.xz"))
        if not files:
            _missing(f"no .xz files in {self.root}")
        return files


def _missing(reason):
    if os.environ.get("ONLINEKERN_REQUIRE_DATA") == "1":
        pytest.fail(f"shared benchmark data required (ONLINEKERN_REQUIRE_DATA=1): {reason}")
    pytest.skip(f"shared benchmark data not available: {reason}")


@pytest.fixture(scope="session")
def shared_data(tmp_path_factory):
    if not SHARED_DATA.is_dir():
        _missing(f"{SHARED_DATA} is not a directory")
    return SharedData(SHARED_DATA, tmp_path_factory.mktemp("shared-data"))


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch):
    """The thread policy (onlinekern._core.threads) counts the machine as quiet with at least two
    cores, so a test that asks for two threads gets them however busy the machine running the
    suite is: the 1-vs-2-thread tests always exercise the parallel path.  tests/test_threads.py
    sets the policy's readings itself."""
    from onlinekern._core.threads import POLICY

    monkeypatch.setattr(POLICY, "reader", lambda: 0)
    monkeypatch.setattr(POLICY, "cores", max(POLICY.cores, 2))
    monkeypatch.setattr(POLICY, "free", None)
    monkeypatch.setattr(POLICY, "reading", None)
    monkeypatch.setattr(POLICY, "last", None)


@pytest.fixture
def force_parallel():
    """Kernel rows split over threads whatever their size, so 1-vs-2-thread tests exercise the
    parallel path (the production threshold is tuned for speed and may change)."""
    from onlinekern._core import support

    old = support.set_par_threshold(0)
    yield
    support.set_par_threshold(old)
