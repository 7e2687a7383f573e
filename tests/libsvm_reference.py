"""The pure-Python reference of the LIBSVM text format, and the check that onlinekern's reader
agrees with it (tests/test_fuzz.py fuzzes it; tests/test_reader.py uses the reference).

Every input must either parse to exactly (bitwise) what :func:`ref_parse` gives, or raise
:class:`onlinekern.LibsvmFormatError` on the line the reference names; anything else is a failure.
"""
import bz2
import gzip
import lzma
import math
import re
import zlib

import numpy as np
import scipy.sparse as sp

from onlinekern.io import LibsvmFormatError, load_libsvm, stream_libsvm
from onlinekern.io import libsvm as libsvm_module
from onlinekern.io._libsvm import ParseError, parse_libsvm

INT32_MAX = 2**31 - 1

# ------------------------------------------------------------------ reference parser
# The rules of onlinekern/io/libsvm.py's docstring and tests/test_reader.py, stated directly:
# lines split at "\n"; a NUL anywhere in a line is an error; "#" starts a comment; tokens split
# on Python's bytes.split() whitespace (space, \t, \r, \v, \f); label then optional qid:digits,
# then index:value with plain-decimal 1-based strictly increasing indices <= 2**31 - 1 (and
# <= n_features when given); numbers are plain decimals converted by float(), infinities (also
# by overflow) rejected; float32 values are float64 values rounded, and must not overflow.

NUMBER = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DIGITS = re.compile(rb"[0-9]+")


class RefError(Exception):
    """The reference rejects the input; ``line`` is the 1-based line, or None (no examples)."""

    def __init__(self, line):
        super().__init__(line)
        self.line = line


def _ref_number(tok, line):
    if not NUMBER.fullmatch(tok):
        raise RefError(line)
    v = float(tok)
    if math.isinf(v):
        raise RefError(line)
    return v


def ref_parse(text, n_features=0, float32=False):
    """Parse ``text`` (bytes): ``(data, indices, indptr, labels, max_index)`` or RefError."""
    labels, data, indices, indptr, max_index = [], [], [], [0], 0
    for lineno, line in enumerate(text.split(b"\n"), 1):
        if b"\0" in line:
            raise RefError(lineno)
        toks = line.split(b"#", 1)[0].split()
        if not toks:
            continue
        labels.append(_ref_number(toks[0], lineno))
        feats = toks[1:]
        if feats and feats[0].startswith(b"qid:"):
            if not _DIGITS.fullmatch(feats[0][4:]):
                raise RefError(lineno)
            feats = feats[1:]
        prev = 0
        for tok in feats:
            head, colon, value = tok.partition(b":")
            if not colon or not _DIGITS.fullmatch(head):
                raise RefError(lineno)
            idx = int(head)
            if idx == 0 or idx > INT32_MAX or idx <= prev or (n_features and idx > n_features):
                raise RefError(lineno)
            v = _ref_number(value, lineno)
            if float32:
                with np.errstate(over="ignore"):
                    if np.isinf(np.float32(v)):
                        raise RefError(lineno)
            data.append(v)
            indices.append(idx - 1)
            prev = idx
        max_index = max(max_index, prev)
        indptr.append(len(data))
    return (np.array(data, dtype=np.float32 if float32 else np.float64),
            np.array(indices, dtype=np.int32), np.array(indptr, dtype=np.int64),
            np.array(labels, dtype=np.float64), max_index)


def ref_decompress(content):
    """Decompressed bytes when the magic bytes say compressed (None if not); RefError(None)
    when the stream is damaged."""
    for magic, func in ((b"\x1f\x8b", gzip.decompress), (b"BZh", bz2.decompress),
                        (b"\xfd7zXZ\x00", lzma.decompress)):
        if content.startswith(magic):
            try:
                return func(content)
            except (EOFError, OSError, lzma.LZMAError, zlib.error, ValueError):
                raise RefError(None) from None
    return None



def same_arrays(got, exp):
    """Bitwise equality of (data, indices, indptr, labels, width) tuples."""
    gd, gi, gp, gl, gw = got
    ed, ei, ep, el, ew = exp
    return (gw == ew and gd.dtype == ed.dtype and gd.tobytes() == ed.tobytes()
            and np.array_equal(gi, ei) and np.array_equal(np.asarray(gp, np.int64), ep)
            and gl.tobytes() == el.tobytes())


def check_input(content, n_features, float32, path, stream=False):
    """Return ``"equal"`` or ``"rejected"``; raise AssertionError on any disagreement."""
    dtype = np.float32 if float32 else np.float64
    compressed = content.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00"))
    try:
        text = ref_decompress(content)
        compressed = text is not None
        if not compressed:
            text = content
        d, ix, ip, lb, mx = ref_parse(text, n_features or 0, float32)
        if len(lb) == 0:
            raise RefError(None)
        expected = (d, ix, ip, lb, n_features or max(mx, 1))
        ref_line = "ok"
    except RefError as exc:
        expected = None
        ref_line = exc.line

    # 1. the parser on the raw bytes (not for compressed input: decompression is load's job)
    if not compressed:
        try:
            pd, pix, pip, plb, pmx, used, _ = parse_libsvm(
                content, 0, 1, True, n_features or 0, float32, 0)
            got = (pd, pix, pip, plb, n_features or max(pmx, 1))
            assert used == len(content), f"parse_libsvm consumed {used} of {len(content)} bytes"
            if expected is None:
                assert len(plb) == 0 and ref_line is None, \
                    f"parse_libsvm accepted input the reference rejects at line {ref_line}"
            else:
                assert same_arrays(got, expected), "parse_libsvm result differs from the reference"
        except ParseError as exc:
            assert expected is None, f"parse_libsvm rejected valid input: {exc}"
            assert exc.line == ref_line, f"error line {exc.line}, reference {ref_line}"

    # 2. load_libsvm on a file
    with open(path, "wb") as f:
        f.write(content)
    try:
        X, y = load_libsvm(path, n_features=n_features, dtype=dtype)
    except LibsvmFormatError as exc:
        assert expected is None, f"load_libsvm rejected valid input: {exc}"
        if ref_line is not None or not compressed:
            assert exc.line == ref_line, f"error line {exc.line}, reference {ref_line}"
        result = "rejected"
    else:
        assert expected is not None, f"load_libsvm accepted input the reference rejects " \
                                     f"(line {ref_line})"
        got = (X.data, X.indices, X.indptr, y, X.shape[1])
        assert X.shape[0] == len(y) and same_arrays(got, expected), \
            "load_libsvm result differs from the reference"
        result = "equal"

    # 3. stream_libsvm with small blocks and chunks
    if stream:
        old = libsvm_module._BLOCK_SIZE
        libsvm_module._BLOCK_SIZE = 7
        try:
            chunks = list(stream_libsvm(path, chunk_rows=3, n_features=n_features, dtype=dtype))
        except LibsvmFormatError as exc:
            assert expected is None, f"stream_libsvm rejected valid input: {exc}"
            if not compressed:
                assert exc.line == ref_line, f"stream error line {exc.line}, ref {ref_line}"
        else:
            assert expected is not None, "stream_libsvm accepted input the reference rejects"
            width = chunks[-1][0].shape[1]
            Xs = sp.vstack([sp.csr_matrix((c.data, c.indices, c.indptr),
                                          shape=(c.shape[0], width)) for c, _ in chunks],
                           format="csr")
            ys = np.concatenate([c[1] for c in chunks])
            assert same_arrays((Xs.data, Xs.indices, Xs.indptr, ys, width), expected), \
                "stream_libsvm result differs from the reference"
        finally:
            libsvm_module._BLOCK_SIZE = old
    return result
