"""Atomic file writes (nothing the user asked to be written is ever left half-written) and the
one conversion of results to plain JSON types."""
import math
import numbers
import os
import tempfile

import numpy as np


def to_jsonable(obj):
    """Plain JSON types from numpy scalars/arrays, tuples; NaN and infinities become None."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        v = float(obj)
        return v if math.isfinite(v) else None
    if obj is None or isinstance(obj, str):
        return obj
    return str(obj)


def atomic_write(path, data):
    """Write ``data`` (bytes or str) to ``path`` atomically.

    The bytes go to a temporary file in the target directory, are flushed and fsync'ed, and the
    file is renamed over ``path`` (``os.replace``); the rename is made durable by fsync'ing the
    directory where the platform allows.  The new file gets the mode of the file it replaces, or
    the mode a plain ``open()`` would give (mkstemp alone would leave 0600).  On any error the
    temporary file is removed and ``path`` is untouched.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
