"""The JSONL results store of ``onlinekern.sweep``: one finished run per line, never lost.

Every finished run (a *cell*: algorithm × parameters × data × seed × run) is appended at once as
one JSON line, then flushed and fsynced, so a sweep killed at any moment (Ctrl-C, ``kill -9``, a
lost Dask worker, a power cut) keeps everything it finished.  Only the parent process writes;
workers return their records to it, so lines never interleave.

* **Resuming.**  Every record carries a ``key`` (:func:`cell_key`), a hash of what determines
  the run's result: phase, algorithm, resolved parameters, data sha256 and preprocessing, root
  seed, run index and presentation order.  Re-running the same command skips every key already
  in the file.
* **A half-written last line** (the process died inside ``write``) is detected on opening: the
  file is truncated back to its last complete line before anything is appended, and the lost
  cell simply runs again.  A complete line that does not parse (damaged by hand) is reported and
  ignored, never rewritten.
* **One writer at a time.**  :class:`ResultStore` takes an exclusive ``flock`` on the file for its
  lifetime (released by the kernel even on ``kill -9``), so two sweeps appending to the same file
  are refused instead of interleaving.
* When a key occurs more than once (``retry_failed`` re-ran a failed cell), the **last** record
  wins in :func:`read_results`.
"""
import hashlib
import json
import math
import numbers
import os
import platform
import socket
import warnings

import numpy as np

from onlinekern.io.atomic import to_jsonable  # noqa: F401  (re-exported: part of this module's API)

__all__ = ["ResultStore", "StoreLockedError", "canonical", "cell_key", "machine_info",
           "read_results", "sha256_file", "to_jsonable"]

FORMAT_VERSION = 1


class StoreLockedError(RuntimeError):
    """Another process holds the results file open for writing."""


def canonical(obj):
    """A canonical form for hashing: numbers as floats (``1`` and ``1.0`` are the same
    hyper-parameter value), dict keys sorted by ``json.dumps(sort_keys=True)``."""
    if isinstance(obj, dict):
        return {str(k): canonical(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, numbers.Real):
        v = float(obj)
        return v if math.isfinite(v) else repr(v)
    if obj is None or isinstance(obj, str):
        return obj
    return repr(obj)


def cell_key(identity):
    """The resume key of a cell: sha256 (first 24 hex digits) of its canonical identity dict."""
    text = json.dumps(canonical(identity), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def sha256_file(path, chunk=1 << 20):
    """sha256 of a file's bytes, as given (a compressed file hashes its compressed bytes)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


_MACHINE = None


def _cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info():
    """{hostname, cpu, cores, platform, python} of the machine running this process (cached)."""
    global _MACHINE
    if _MACHINE is None:
        _MACHINE = {"hostname": socket.gethostname(), "cpu": _cpu_name(), "cores": os.cpu_count(),
                    "platform": platform.platform(terse=True),
                    "python": platform.python_version()}
    return dict(_MACHINE)


def _parse_lines(raw, path):
    """Records of the complete lines of ``raw`` (bytes ending in a newline)."""
    records = []
    for i, line in enumerate(raw.split(b"\n")[:-1], 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            warnings.warn(f"{path}:{i}: not a JSON record, ignored", stacklevel=3)
            continue
        if isinstance(rec, dict) and "key" in rec:
            records.append(rec)
        else:
            warnings.warn(f"{path}:{i}: not a sweep record (no key), ignored", stacklevel=3)
    return records


def read_results(path, latest=True):
    """Records of a results file; a half-written last line is ignored (the file is not changed).

    Parameters
    ----------
    path : str or PathLike
    latest : bool
        Keep only the last record of each key (the default), in first-appearance order.

    Returns
    -------
    list of dict
    """
    with open(path, "rb") as f:
        raw = f.read()
    end = raw.rfind(b"\n") + 1
    records = _parse_lines(raw[:end], os.fspath(path))
    if not latest:
        return records
    last = {}
    for rec in records:
        last.pop(rec["key"], None)       # re-insert: a retried cell moves to its new position
        last[rec["key"]] = rec
    return list(last.values())


class ResultStore:
    """Append-only JSONL file of sweep records, safe against being killed at any moment.

    Parameters
    ----------
    path : str or PathLike
        Created if missing.  Opening it takes an exclusive lock and truncates a half-written
        last line (``truncated`` tells how many bytes were dropped).

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self._f = open(self.path, "a+b")
        try:
            self._lock()
            self._f.seek(0)
            raw = self._f.read()
            end = raw.rfind(b"\n") + 1
            self.truncated = len(raw) - end
            if self.truncated:
                # The previous writer died inside write(): drop the partial line so the next
                # record starts on a line of its own.
                self._f.truncate(end)
                self._f.flush()
                os.fsync(self._f.fileno())
            self.records = _parse_lines(raw[:end], self.path)
        except BaseException:
            self._f.close()
            raise
        self._by_key = {}
        for rec in self.records:
            self._by_key[rec["key"]] = rec

    def _lock(self):
        try:
            import fcntl
        except ImportError:      # Windows: no advisory lock, single-writer by convention
            return
        try:
            fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise StoreLockedError(f"{self.path} is being written by another sweep "
                                   "(wait for it to finish or use another --out file)") from None

    def get(self, key):
        """The latest record of ``key``, or None."""
        return self._by_key.get(key)

    def __contains__(self, key):
        return key in self._by_key

    def append(self, record):
        """Write one record as one line, then flush and fsync before returning."""
        line = json.dumps(to_jsonable(record), allow_nan=False, separators=(",", ":")) + "\n"
        data = line.encode("utf-8")
        self._f.seek(0, os.SEEK_END)
        self._f.write(data)
        self._f.flush()
        os.fsync(self._f.fileno())
        record = json.loads(line)       # what a later read of the file gives
        self.records.append(record)
        self._by_key[record["key"]] = record

    def close(self):
        if not self._f.closed:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class MemoryStore:
    """The same interface without a file (a sweep without ``out``)."""

    path = None
    truncated = 0

    def __init__(self):
        self.records = []
        self._by_key = {}

    def get(self, key):
        return self._by_key.get(key)

    def __contains__(self, key):
        return key in self._by_key

    def append(self, record):
        record = json.loads(json.dumps(to_jsonable(record), allow_nan=False))
        self.records.append(record)
        self._by_key[record["key"]] = record

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


