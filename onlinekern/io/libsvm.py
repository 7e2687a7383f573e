"""Reading and writing LIBSVM / svmlight text files.

The parsing itself is done by :func:`onlinekern.io._libsvm.parse_libsvm` (Cython, GIL released);
this module opens files, detects compression from the first bytes, turns decompression failures
and malformed lines into :class:`LibsvmFormatError`, and builds the CSR matrices.

Format
------
One example per line: ``label [qid:N] index:value index:value ...``.  Indices are 1-based
decimal integers, strictly increasing within a line; they become 0-based columns.  ``#`` starts
a comment anywhere; blank lines and lines holding only a comment are skipped; a line with only a
label is an example with no stored features.  Tokens are separated by spaces, tabs, ``\\r``,
``\\v`` or ``\\f`` (so CRLF files work), lines end at ``\\n`` (the final one may lack it).
Numbers follow Python's ``float()`` exactly for plain decimal notation; NaN, infinities, hex
floats and ``_`` digit separators are rejected.  Explicit zeros (``3:0.0``) are kept as stored
entries, as :func:`sklearn.datasets.load_svmlight_file` keeps them.
"""
import bz2
import gzip
import lzma
import operator
import os
import zlib
from contextlib import ExitStack

import numpy as np
import scipy.sparse as sp

from onlinekern.io.atomic import atomic_write

from ._libsvm import ParseError, parse_libsvm

__all__ = ["LibsvmFormatError", "load_libsvm", "save_libsvm", "stream_libsvm"]

_INT32_MAX = np.iinfo(np.int32).max

# Magic bytes -> (name used in messages, opener taking a binary file object).
_MAGIC = (
    (b"\x1f\x8b", "gzip", lambda f: gzip.GzipFile(fileobj=f, mode="rb")),
    (b"BZh", "bzip2", lambda f: bz2.BZ2File(f, mode="rb")),
    (b"\xfd7zXZ\x00", "xz", lambda f: lzma.LZMAFile(f, mode="rb")),
)

# What the decompressors raise on damaged input: EOFError for a stream cut short, the
# module-specific errors (gzip.BadGzipFile is an OSError) for corrupt data.
_DECOMPRESSION_ERRORS = (EOFError, lzma.LZMAError, OSError, zlib.error)

_BLOCK_SIZE = 1 << 20
#: stream_libsvm ends a chunk once it holds this many stored values (2^21: 24 MiB of float64 CSR),
#: whatever its rows: 65,536 rows of text (~120 nonzeros a row) or of a dense 1,000-column file
#: would otherwise be ~100 MB and ~800 MB, held twice while the chunk is assembled
CHUNK_NNZ = 1 << 21


class LibsvmFormatError(ValueError):
    """A LIBSVM file that cannot be read: malformed line, damaged compression, no examples.

    Parameters
    ----------
    path : str
        The file being read.
    line : int or None
        1-based number of the offending line, or None when the problem is not tied to a line
        (empty file, truncated or corrupt compressed stream).
    reason : str
        What is wrong.

    Notes
    -----
    ``str(err)`` is ``"{path}:{line}: {reason}"``, or ``"{path}: {reason}"`` when ``line`` is
    None.
    """

    def __init__(self, path, line, reason):
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(path, line, reason)

    def __str__(self):
        if self.line is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path}:{self.line}: {self.reason}"


def _check_dtype(dtype):
    """Return True for float32, False for float64; anything else is refused."""
    dt = np.dtype(dtype)
    if dt == np.float64:
        return False
    if dt == np.float32:
        return True
    raise ValueError(f"dtype must be float64 or float32, got {dt}")


def _check_n_features(n_features):
    """0 for None, else a validated positive int."""
    if n_features is None:
        return 0
    if isinstance(n_features, (bool, np.bool_)):
        raise TypeError("n_features must be an integer or None, got a bool")
    n = operator.index(n_features)
    if n < 1 or n > _INT32_MAX:
        raise ValueError(f"n_features must be in [1, {_INT32_MAX}], got {n}")
    return n


def _display(path):
    return os.fsdecode(path)


def _open(path, stack):
    """Open ``path`` for binary reading, decompressing when its first bytes say so.

    Returns ``(file object, compression name or None)``; the files are registered on stack.
    """
    raw = stack.enter_context(open(path, "rb"))
    head = raw.read(6)
    raw.seek(0)
    for magic, name, opener in _MAGIC:
        if head.startswith(magic):
            return stack.enter_context(opener(raw)), name
    return raw, None


def _read(f, size, path, kind):
    """``f.read(size)``, with decompression failures reported as LibsvmFormatError."""
    if kind is None:
        return f.read(size)
    try:
        return f.read(size)
    except _DECOMPRESSION_ERRORS as exc:
        raise LibsvmFormatError(
            _display(path), None, f"truncated or corrupt {kind} stream ({exc})") from None


def _csr(data, indices, indptr, n_rows, width):
    """CSR matrix on the parser's arrays: int32 indices and indptr when nnz allows it."""
    if len(data) <= _INT32_MAX:
        indptr = indptr.astype(np.int32)
    else:
        indices = indices.astype(np.int64)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, width), copy=False)
    # The parser enforces strictly increasing indices per row.
    X.has_sorted_indices = True
    X.has_canonical_format = True
    return X


def _width(n_features, max_index):
    # Without n_features, the width is the largest index; a file with no feature at all gets
    # width 1, as sklearn.datasets.load_svmlight_file gives.
    return n_features if n_features else max(max_index, 1)


def load_libsvm(path, n_features=None, dtype=np.float64):
    """Load a LIBSVM / svmlight text file (plain, gzip, bzip2 or xz) into a CSR matrix.

    Parameters
    ----------
    path : str or os.PathLike
        File to read.  Compression is detected from the first bytes (gzip ``1f 8b``, bzip2
        ``BZh``, xz ``fd 37 7a 58 5a 00``), not from the file name.
    n_features : int, optional
        Number of columns.  Default: the largest feature index in the file (1 if there is
        none).  An index larger than ``n_features`` is an error.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Dtype of ``X.data``.  float32 values are the float64 values rounded to float32 (as
        sklearn does); a value beyond the float32 range is an error.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        0-based, sorted column indices (int32 unless there are more than 2**31 - 1 stored
        values); explicit zeros in the file are kept as stored entries.
    y : ndarray of shape (n_rows,), float64
        Labels.

    Raises
    ------
    LibsvmFormatError
        Malformed line (with its line number), no example in the file, truncated or corrupt
        compressed stream.
    FileNotFoundError
        ``path`` does not exist.

    Notes
    -----
    The whole (decompressed) file is held in memory while parsing; use :func:`stream_libsvm`
    for bounded memory.  The result equals that of
    ``sklearn.datasets.load_svmlight_file(path, zero_based=False, n_features=n_features)``
    (except the index dtype, int64 there) on every file both accept.

    Examples
    --------
    >>> X, y = load_libsvm("ijcnn1.t")  # doctest: +SKIP
    >>> X.shape
    (91701, 22)
    """
    f32 = _check_dtype(dtype)
    nf = _check_n_features(n_features)
    with ExitStack() as stack:
        f, kind = _open(path, stack)
        buf = _read(f, -1, path, kind)
    try:
        data, indices, indptr, labels, max_index, _, _ = parse_libsvm(
            buf, 0, 1, True, nf, f32, 0)
    except ParseError as exc:
        raise LibsvmFormatError(_display(path), exc.line, exc.reason) from None
    del buf
    if len(labels) == 0:
        raise LibsvmFormatError(
            _display(path), None,
            "no examples found (the file is empty or has only comments and blank lines)")
    return _csr(data, indices, indptr, len(labels), _width(nf, max_index)), labels


def stream_libsvm(path, chunk_rows=100000, n_features=None, dtype=np.float64, chunk_nnz=CHUNK_NNZ, first_rows=None):
    """Read a LIBSVM file incrementally, yielding CSR chunks of ``chunk_rows`` rows (fewer when
    ``chunk_nnz`` stored values come first).

    The file (plain, gzip, bzip2 or xz, detected from its first bytes) is read in blocks of
    1 MiB; complete lines are parsed and the partial last line is carried over to the next
    block, so memory stays bounded by one chunk plus one block (plus the longest line).

    Parameters
    ----------
    path : str or os.PathLike
        File to read.
    chunk_rows : int, default=100000
        Rows per chunk; the last chunk may be shorter.
    chunk_nnz : int, default=CHUNK_NNZ (2^21)
        A chunk also ends at the end of the 1 MiB block in which it reaches this many stored
        values, so its memory is bounded whatever the width of the rows.
    first_rows : int, optional
        The first chunk has exactly this many rows (or the whole file), whatever ``chunk_rows``
        and ``chunk_nnz``: :func:`onlinekern.run_online_stream` resolves the adaptive defaults
        and races the kernel widths on the first chunk, which must hold the race.
    n_features : int, optional
        When given, every chunk has this many columns and a larger index is an error.
        When None, each chunk's width is the largest index seen so far in the file (the
        running maximum, at least 1), so widths never decrease and the last chunk has the
        width :func:`load_libsvm` would give.  Pass ``n_features`` when every chunk must
        have the same shape (for example to feed a learner of fixed dimension).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Dtype of the chunks' data.

    Yields
    ------
    X_chunk : scipy.sparse.csr_matrix of shape (rows, width)
    y_chunk : ndarray of shape (rows,), float64

    Raises
    ------
    LibsvmFormatError
        As :func:`load_libsvm`, raised when the offending line or block is reached (chunks
        before it have already been yielded); line numbers count from the start of the file.
    FileNotFoundError
        ``path`` does not exist (raised on the first ``next()``).

    Notes
    -----
    gzip checks its CRC only at the end of the stream (bzip2 and xz at the end of each
    block), so with a corrupt compressed file, chunks yielded before the damage is detected
    may hold damaged values; :func:`load_libsvm` decompresses everything before parsing and
    never does.  When a line fails to parse, the rest of a compressed stream is checked
    first, so corruption is reported as "truncated or corrupt ... stream".

    Stacking the chunks (after widening them to the last chunk's width when ``n_features``
    is None) gives exactly ``load_libsvm(path, n_features, dtype)``.
    """
    f32 = _check_dtype(dtype)
    nf = _check_n_features(n_features)
    chunk_rows = int(chunk_rows)
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1, got {chunk_rows}")
    chunk_nnz = int(chunk_nnz)
    if chunk_nnz < 1:
        raise ValueError(f"chunk_nnz must be >= 1, got {chunk_nnz}")
    if first_rows is not None and int(first_rows) < 1:
        raise ValueError(f"first_rows must be >= 1, got {first_rows}")
    return _stream(path, chunk_rows, nf, f32, chunk_nnz, None if first_rows is None else int(first_rows))


def _stream(path, chunk_rows, nf, f32, chunk_nnz, first_rows=None):
    shown = _display(path)
    running_max = 0
    total_rows = 0
    line = 1
    parts = []          # parsed pieces of the chunk being assembled
    part_rows = 0
    part_nnz = 0
    rows_cap, nnz_cap = (chunk_rows, chunk_nnz) if first_rows is None else (first_rows, None)
    buf = bytearray()
    pos = 0             # start of the unparsed bytes in buf
    eof = False
    with ExitStack() as stack:
        f, kind = _open(path, stack)
        while not eof:
            block = _read(f, _BLOCK_SIZE, path, kind)
            eof = not block
            # Keep only the unparsed tail, then append the new block.
            del buf[:pos]
            pos = 0
            buf += block
            if not eof and b"\n" not in block:
                # buf[pos:] held no '\n' before this block, so there is still no complete
                # line: read on without calling the parser, whose search for the last '\n'
                # would rescan the whole growing line (quadratic time on very long lines).
                continue
            while True:
                try:
                    data, indices, indptr, labels, max_index, used, n_lines = parse_libsvm(
                        buf, pos, line, eof, nf, f32, rows_cap - part_rows)
                except ParseError as exc:
                    if kind is not None:
                        # Decompressors check their CRCs only at the end of a block or
                        # stream, after handing out the damaged bytes: a corrupt archive
                        # often shows up first as a bad line.  Check the rest of the
                        # stream so corruption is reported as such.
                        while _read(f, _BLOCK_SIZE, path, kind):
                            pass
                    raise LibsvmFormatError(shown, exc.line, exc.reason) from None
                pos += used
                line += n_lines
                running_max = max(running_max, max_index)
                if len(labels):
                    parts.append((data, indices, indptr, labels))
                    part_rows += len(labels)
                    part_nnz += len(data)
                if part_rows < rows_cap and (nnz_cap is None or part_nnz < nnz_cap):
                    break       # this block is exhausted: read more
                total_rows += part_rows
                chunk = _assemble(parts, part_rows, _width(nf, running_max))
                parts = []      # before the yield: the pieces must not live on beside the chunk
                part_rows = 0
                part_nnz = 0
                rows_cap, nnz_cap = chunk_rows, chunk_nnz
                yield chunk
                chunk = None
    if part_rows:
        total_rows += part_rows
        chunk = _assemble(parts, part_rows, _width(nf, running_max))
        parts = []
        yield chunk
    if total_rows == 0:
        raise LibsvmFormatError(
            shown, None,
            "no examples found (the file is empty or has only comments and blank lines)")


def _assemble(parts, n_rows, width):
    """One CSR chunk from the pieces returned by successive parser calls."""
    if len(parts) == 1:
        data, indices, indptr, labels = parts[0]
    else:
        data = np.concatenate([p[0] for p in parts])
        indices = np.concatenate([p[1] for p in parts])
        labels = np.concatenate([p[3] for p in parts])
        # Each piece's indptr starts at 0: shift by the stored values before it.
        offsets = np.cumsum([0] + [p[2][-1] for p in parts[:-1]])
        indptr = np.concatenate(
            [np.zeros(1, np.int64)] + [p[2][1:] + off for p, off in zip(parts, offsets)])
    return _csr(data, indices, indptr, n_rows, width), labels


def _format_float(v):
    """Shortest text that reads back as exactly ``v`` (``repr``), without a trailing ``.0``."""
    r = repr(v)
    return r[:-2] if r.endswith(".0") else r


def save_libsvm(path, X, y):
    """Write ``X, y`` as a LIBSVM text file, atomically.

    Parameters
    ----------
    path : str or os.PathLike
        Destination.  The text goes to a temporary file in the same directory, which is
        flushed, fsync'ed and renamed over ``path`` (``os.replace``), so readers never see a
        partial file.
    X : array-like of shape (n_rows, n_features) or scipy sparse matrix
        Dense input: zeros are not written.  Sparse input: every stored entry is written,
        explicit zeros included, so :func:`load_libsvm` gives back the same structure
        (duplicates are summed and indices sorted first).
    y : array-like of shape (n_rows,)
        Labels.

    Raises
    ------
    ValueError
        Shapes disagree, or a value or label is NaN or infinite (the reader rejects those).

    Notes
    -----
    Indices are written 1-based; numbers with ``repr`` (shortest round-trip form, ``.0``
    dropped), so ``load_libsvm`` returns exactly the float64 values written; float32 input is
    written through its exact float64 value and reads back exactly with ``dtype=np.float32``.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        X = sp.csr_matrix(X)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    if not np.all(np.isfinite(X.data)) or not np.all(np.isfinite(y)):
        raise ValueError("X and y must be finite (LIBSVM readers reject NaN and infinity)")

    values = [_format_float(v) for v in X.data.tolist()]
    cols = (X.indices.astype(np.int64) + 1).tolist()
    indptr = X.indptr.tolist()
    lines = []
    for i, label in enumerate(y.tolist()):
        a, b = indptr[i], indptr[i + 1]
        feats = " ".join([f"{c}:{v}" for c, v in zip(cols[a:b], values[a:b])])
        lines.append(f"{_format_float(label)} {feats}\n" if feats else f"{_format_float(label)}\n")
    text = "".join(lines).encode("ascii")

    atomic_write(path, text)
