"""Tests of the LIBSVM reader/writer (onlinekern.io).

The reference for valid files is ``sklearn.datasets.load_svmlight_file(zero_based=False)``;
for arbitrary bytes it is the tiny pure-Python parser below, which states the accepted
grammar in a dozen lines.
"""
import bz2
import contextlib
import gzip
import lzma
import math
import os
import random
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from onlinekern.io import LibsvmFormatError, load_libsvm, save_libsvm, stream_libsvm
from onlinekern.io import libsvm as libsvm_module

# The 22 files of ../shared/data (see its README.md).
SHARED_NAMES = [
    "cod-rna.tr", "ijcnn1", "ijcnn1.t", "a9a", "a9a.t", "w8a", "w8a.t", "casp", "poker",
    "letter.scale", "letter.scale.t", "pendigits", "pendigits.t", "cadata", "abalone",
    "magic04", "mushrooms", "australian", "german.numer", "splice", "svmguide1", "svmguide1.t",
]

INT32_MAX = 2**31 - 1


# --------------------------------------------------------------------------- helpers

def assert_same(X, y, Xr, yr, *, check_index_dtype=True):
    """Exact equality of two (X, y) pairs: structure, values (bitwise) and dtypes."""
    assert sp.isspmatrix_csr(X)
    assert X.shape == Xr.shape
    np.testing.assert_array_equal(X.indptr, Xr.indptr)
    np.testing.assert_array_equal(X.indices, Xr.indices)
    assert X.data.dtype == Xr.data.dtype
    # Bitwise, so -0.0 vs 0.0 and every last ulp count.
    assert X.data.tobytes() == Xr.data.tobytes()
    assert y.dtype == np.float64 and yr.dtype == np.float64
    assert y.tobytes() == yr.tobytes()
    if check_index_dtype:
        assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32


def sklearn_load(path, **kw):
    X, y = load_svmlight_file(str(path), zero_based=False, **kw)
    return sp.csr_matrix(X), y


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    return path


@contextlib.contextmanager
def block_size(n):
    """Make stream_libsvm read tiny blocks, to exercise lines carried across blocks."""
    old = libsvm_module._BLOCK_SIZE
    libsvm_module._BLOCK_SIZE = n
    try:
        yield
    finally:
        libsvm_module._BLOCK_SIZE = old


def stack_chunks(chunks):
    """Concatenate stream_libsvm chunks, widening them to the last chunk's width."""
    width = chunks[-1][0].shape[1]
    widths = [X.shape[1] for X, _ in chunks]
    assert widths == sorted(widths)     # running maximum: never decreases
    Xs = [sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))
          for X, _ in chunks]
    return sp.vstack(Xs, format="csr"), np.concatenate([y for _, y in chunks])


def random_sparse(rng, n_rows, n_cols, density, dtype):
    X = sp.random(n_rows, n_cols, density=density, format="csr", random_state=rng,
                  dtype=np.float64)
    X.data = (rng.standard_normal(X.nnz) * 10.0 ** rng.integers(-8, 8, X.nnz)).astype(dtype)
    return X


# ------------------------------------------------------------- pure-Python reference

# The one reference of the format lives in tests/libsvm_reference.py (tests/test_fuzz.py checks
# generated inputs against it); here it only gets a CSR front end.
from libsvm_reference import RefError, ref_parse as ref_arrays  # noqa: E402


def ref_parse(text, n_features=0, float32=False):
    """The accepted grammar, line by line; returns (X, y) or raises RefError(line)."""
    data, indices, indptr, labels, max_index = ref_arrays(text, n_features, float32)
    if not len(labels):
        raise RefError(None)
    width = n_features or max(max_index, 1)
    X = sp.csr_matrix((data, indices, indptr.astype(np.int32)), shape=(len(labels), width))
    return X, labels


# ------------------------------------------------------------------- shared data sets

@pytest.mark.parametrize("name", SHARED_NAMES)
def test_shared_file_matches_sklearn(shared_data, name):
    path = shared_data.plain(name)
    X, y = load_libsvm(path)
    Xr, yr = sklearn_load(path)
    assert_same(X, y, Xr, yr)
    assert X.has_sorted_indices


@pytest.mark.parametrize("name", ["svmguide1.t", "ijcnn1.t", "a9a.t", "casp"])
def test_shared_file_matches_sklearn_float32(shared_data, name):
    path = shared_data.plain(name)
    X, y = load_libsvm(path, dtype=np.float32)
    Xr, yr = sklearn_load(path, dtype=np.float32)
    assert_same(X, y, Xr, yr)


@pytest.mark.parametrize("name", SHARED_NAMES)
def test_shared_xz_equals_plain(shared_data, name):
    X, y = load_libsvm(shared_data.plain(name))
    Xz, yz = load_libsvm(shared_data.compressed(name))
    assert_same(Xz, yz, X, y)


def test_explicit_zeros_are_kept_like_sklearn(shared_data):
    # svmguide1.t writes 0.000000e+00 and ijcnn1.t writes 0.0 as stored values; sklearn keeps
    # them as explicit zeros, and so must we.
    for name in ("svmguide1.t", "ijcnn1.t"):
        path = shared_data.plain(name)
        X, _ = load_libsvm(path)
        Xr, _ = sklearn_load(path)
        n_zero = int(np.count_nonzero(X.data == 0))
        assert n_zero > 0
        assert n_zero == int(np.count_nonzero(Xr.data == 0))


def test_shared_n_features_larger(shared_data):
    path = shared_data.plain("australian")
    X, y = load_libsvm(path, n_features=50)
    Xr, yr = sklearn_load(path, n_features=50)
    assert X.shape == (690, 50)
    assert_same(X, y, Xr, yr)


def test_shared_stream_chunks(shared_data):
    path = shared_data.compressed("australian")
    X, y = load_libsvm(path)
    for chunk_rows in (1, 7, 10_000):
        with block_size(4096):
            chunks = list(stream_libsvm(path, chunk_rows=chunk_rows))
        assert all(len(c[1]) == chunk_rows for c in chunks[:-1])
        Xs, ys = stack_chunks(chunks)
        assert_same(Xs, ys, X, y)


# ----------------------------------------------------------------- generated files

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("writer", ["sklearn", "save_libsvm"])
def test_generated_matches_sklearn(tmp_path, dtype, writer):
    rng = np.random.default_rng(0 if dtype == np.float64 else 1)
    X0 = random_sparse(rng, 300, 40, 0.2, dtype)
    X0 = X0[:, :35]                 # the last 5 columns are empty: max index < n_features
    y0 = rng.integers(-3, 4, 300).astype(np.float64) / 2.0
    path = tmp_path / "gen.svm"
    if writer == "sklearn":
        dump_svmlight_file(X0, y0, str(path), zero_based=False, comment="generated\nfor a test")
    else:
        save_libsvm(path, X0, y0)
    for n_features in (None, 35, 60):
        X, y = load_libsvm(path, n_features=n_features, dtype=dtype)
        Xr, yr = sklearn_load(path, n_features=n_features, dtype=dtype)
        assert_same(X, y, Xr, yr)
    if writer == "save_libsvm":
        # save_libsvm round-trips exactly (values through their shortest repr).
        X, y = load_libsvm(path, n_features=35, dtype=dtype)
        assert_same(X, y, sp.csr_matrix(X0), y0)


def test_generated_with_query_ids_matches_sklearn(tmp_path):
    rng = np.random.default_rng(2)
    X0 = random_sparse(rng, 50, 10, 0.3, np.float64)
    y0 = rng.standard_normal(50)
    path = tmp_path / "qid.svm"
    dump_svmlight_file(X0, y0, str(path), zero_based=False, query_id=rng.integers(0, 5, 50))
    assert b"qid:" in path.read_bytes()
    assert_same(*load_libsvm(path), *sklearn_load(path))


def test_accepted_syntax_matches_sklearn(tmp_path):
    content = (
        b"# header comment\n"
        b"\n"
        b"+1 1:0.5 3:-2\n"
        b"-1\t2:1e3\t\t4:+.5   # trailing comment\r\n"
        b"1.0 qid:7 1:5. 2:0.000000e+00\n"
        b"   \t \n"
        b"0\n"
        b"7 10:-0\n"
        b"3.25 2:1E-3 #\n"
        b"1e3 1:3#glued comment\n"
        b"  -0.5 1:1.7976931348623157e308 2:4.9e-324 3:2.2250738585072014e-308\r\n"
        b"# only a comment\n"
        b"2 5:123456789012345678901234567890e-20 6:0.1000000000000000055511151231257827\n"
        # a token longer than the parser's stack buffer for strtod
        b"-1 1:0." + b"3" * 400 + b"e-2 2:" + b"9" * 300 + b"e-299"
    )
    path = write(tmp_path, "syntax.svm", content)
    X, y = load_libsvm(path)
    Xr, yr = sklearn_load(path)
    assert_same(X, y, Xr, yr)
    assert X.shape == (10, 10)
    np.testing.assert_array_equal(y, [1, -1, 1, 0, 7, 3.25, 1000, -0.5, 2, -1])
    assert X[9, 0] == float("0." + "3" * 400 + "e-2")
    assert X[3].nnz == 0                                  # label-only line
    assert X[4, 9] == 0 and np.signbit(X[4].data[0])      # "-0" kept as -0.0


def test_concurrent_loads_release_the_gil_safely(tmp_path):
    rng = np.random.default_rng(6)
    X0 = random_sparse(rng, 2000, 50, 0.2, np.float64)
    y0 = rng.standard_normal(2000)
    path = tmp_path / "threads.svm"
    save_libsvm(path, X0, y0)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: load_libsvm(path, n_features=50), range(8)))
    for X, y in results:
        assert_same(X, y, sp.csr_matrix(X0), y0)


def test_label_only_file_has_width_one_like_sklearn(tmp_path):
    path = write(tmp_path, "labels.svm", b"1\n-1\n# c\n2\n")
    X, y = load_libsvm(path)
    Xr, yr = sklearn_load(path)
    assert X.shape == (3, 1)
    assert_same(X, y, Xr, yr)


@pytest.mark.parametrize("compressor", ["gzip", "bz2", "xz"])
def test_compressed_round_trip(tmp_path, compressor):
    rng = np.random.default_rng(3)
    X0 = random_sparse(rng, 500, 30, 0.3, np.float64)
    y0 = rng.standard_normal(500)
    plain = tmp_path / "data.svm"
    save_libsvm(plain, X0, y0)
    packed = {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[compressor](
        plain.read_bytes())
    # No telling extension: detection is by magic bytes.
    path = write(tmp_path, "data.bin", packed)
    X, y = load_libsvm(path, n_features=30)
    assert_same(X, y, sp.csr_matrix(X0), y0)
    with block_size(1000):
        Xs, ys = stack_chunks(list(stream_libsvm(path, chunk_rows=64, n_features=30)))
    assert_same(Xs, ys, X, y)
    # sklearn decides by extension; give it one to compare.
    if compressor in ("gzip", "bz2"):
        ext = write(tmp_path, "data.svm." + {"gzip": "gz", "bz2": "bz2"}[compressor], packed)
        assert_same(X, y, *sklearn_load(ext, n_features=30))


def test_save_libsvm_exact_round_trip_of_awkward_values(tmp_path):
    values = np.array([0.1, -0.0, 5e-324, 1.7976931348623157e308, -2.2250738585072014e-308,
                       1 / 3, 1e22, 1e23, 123456789.123456789, 2.0**53 + 2, 0.0])
    X0 = sp.csr_matrix((values, np.arange(11), [0, 6, 11]), shape=(2, 11))
    y0 = np.array([1 / 3, -1e-300])
    path = tmp_path / "awkward.svm"
    save_libsvm(path, X0, y0)
    X, y = load_libsvm(path)
    assert_same(X, y, X0, y0)
    assert X.nnz == 11                      # explicit zeros of sparse input are written
    # float32 input comes back bit-exact with dtype=float32
    X32 = sp.csr_matrix(np.array([[0.1, 0, 3.4028234663852886e38], [1e-45, -7.5, 0]],
                                 dtype=np.float32))
    save_libsvm(path, X32, [0, 1])
    X, y = load_libsvm(path, dtype=np.float32)
    assert_same(X, y, X32, np.array([0.0, 1.0]))


def test_save_libsvm_dense_atomic_and_validation(tmp_path):
    path = tmp_path / "dense.svm"
    path.write_text("old content\n")
    os.chmod(path, 0o640)
    save_libsvm(path, np.array([[0.0, 2.5], [0.0, 0.0]]), np.array([1, -1]))
    assert path.read_bytes() == b"1 2:2.5\n-1\n"
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["dense.svm"]       # no temp file left behind
    with pytest.raises(ValueError):
        save_libsvm(path, np.array([[np.nan]]), [1])
    with pytest.raises(ValueError):
        save_libsvm(path, np.array([[1.0]]), [1, 2])
    assert path.read_bytes() == b"1 2:2.5\n-1\n"              # failed saves change nothing
    assert sorted(os.listdir(tmp_path)) == ["dense.svm"]


def test_stream_chunks_concatenate_to_load(tmp_path):
    rng = np.random.default_rng(4)
    X0 = random_sparse(rng, 333, 25, 0.2, np.float64)
    y0 = rng.standard_normal(333)
    path = tmp_path / "s.svm"
    save_libsvm(path, X0, y0)
    with open(path, "ab") as f:                 # a trailing comment, no final newline
        f.write(b"# end\n5 30:1")
    X, y = load_libsvm(path)
    for dtype in (np.float64, np.float32):
        Xd, yd = load_libsvm(path, dtype=dtype)
        for chunk_rows in (1, 7, 10_000):
            for bs in (5, 97, 1 << 20):
                with block_size(bs):
                    chunks = list(stream_libsvm(path, chunk_rows=chunk_rows, dtype=dtype))
                assert [len(c[1]) for c in chunks[:-1]] == [chunk_rows] * (len(chunks) - 1)
                assert 0 < len(chunks[-1][1]) <= chunk_rows
                Xs, ys = stack_chunks(chunks)
                assert_same(Xs, ys, Xd, yd)
    # With n_features every chunk has that width and vstack works directly.
    chunks = list(stream_libsvm(path, chunk_rows=7, n_features=40))
    assert {c[0].shape[1] for c in chunks} == {40}
    # chunk_nnz ends a chunk at the block in which it reaches that many stored values, first_rows
    # sets the first chunk's rows whatever the caps; the chunks still stack to the loaded file
    for bs in (5, 97, 400):
        with block_size(bs):
            capped = list(stream_libsvm(path, chunk_rows=10_000, chunk_nnz=50))
            first = list(stream_libsvm(path, chunk_rows=10, chunk_nnz=50, first_rows=40))
        # a block completes the lines it ends: at most a row (25 columns) plus its own bytes' values
        per_block = 25 + bs // 5 + 2
        assert len(capped) > 3 and all(50 <= c[0].nnz < 50 + per_block for c in capped[:-1])
        assert_same(*stack_chunks(capped), X, y)
        assert len(first[0][1]) == 40 and all(len(c[1]) <= 10 and c[0].nnz < 50 + per_block for c in first[1:])
        assert_same(*stack_chunks(first), X, y)
    with pytest.raises(ValueError, match="chunk_nnz"):
        next(stream_libsvm(path, chunk_nnz=0))
    with pytest.raises(ValueError, match="first_rows"):
        next(stream_libsvm(path, first_rows=0))
    Xn, yn = load_libsvm(path, n_features=40)
    assert_same(sp.vstack([c[0] for c in chunks], format="csr"),
                np.concatenate([c[1] for c in chunks]), Xn, yn)
    assert X.shape[1] == 30


def test_stream_error_line_numbers_across_blocks(tmp_path):
    lines = [b"1 1:1 2:2"] * 50 + [b"1 3:1 2:2"] + [b"1 1:1"] * 5
    path = write(tmp_path, "bad.svm", b"\n".join(lines) + b"\n")
    with pytest.raises(LibsvmFormatError) as load_err:
        load_libsvm(path)
    assert load_err.value.line == 51
    for bs in (3, 16, 1 << 20):
        for chunk_rows in (1, 8):
            with block_size(bs), pytest.raises(LibsvmFormatError) as err:
                for _ in stream_libsvm(path, chunk_rows=chunk_rows):
                    pass
            assert err.value.line == 51
            assert str(err.value) == str(load_err.value)


# ----------------------------------------------------------------- malformed input

GOOD = b"1 1:1 2:2\n"

MALFORMED = [
    # (id, content, kwargs, expected line, distinctive word of the reason)
    ("label-not-numeric", GOOD + b"abc 1:1\n", {}, 2, "label"),
    ("label-with-colon", GOOD * 2 + b"1:1 2:2\n", {}, 3, "label"),
    ("value-not-numeric", GOOD + b"1 1:2 3:x\n", {}, 2, "value"),
    ("value-empty", GOOD + b"1 1:\n", {}, 2, "value"),
    ("value-hex", GOOD + b"1 1:0x1p3\n", {}, 2, "decimal"),
    ("value-underscore", GOOD + b"1 1:1_000\n", {}, 2, "decimal"),
    ("value-trailing-junk", GOOD + b"1 1:1.5.2\n", {}, 2, "value"),
    ("no-colon", GOOD * 3 + b"1 1:1 7\n", {}, 4, "':'"),
    ("index-zero", GOOD + b"1 0:1\n", {}, 2, "positive"),
    ("index-negative", GOOD + b"1 -3:1\n", {}, 2, "positive"),
    ("index-float", GOOD + b"1 1.5:1\n", {}, 2, "integer"),
    ("index-empty", GOOD + b"1 :1\n", {}, 2, "integer"),
    ("index-plus", GOOD + b"1 +2:1\n", {}, 2, "integer"),
    ("index-not-increasing", GOOD + b"1 3:1 2:1\n", {}, 2, "increasing"),
    ("index-duplicate", GOOD * 2 + b"1 2:1 2:1\n", {}, 3, "increasing"),
    ("value-nan", GOOD + b"1 1:nan\n", {}, 2, "finite"),
    ("value-inf", GOOD + b"1 1:-inf\n", {}, 2, "finite"),
    ("value-overflow", GOOD + b"1 1:1e400\n", {}, 2, "finite"),
    ("label-nan", GOOD + b"NaN 1:1\n", {}, 2, "finite"),
    ("label-inf", GOOD + b"+Infinity\n", {}, 2, "finite"),
    ("index-exceeds-n_features", GOOD * 4 + b"1 3:1\n", {"n_features": 2}, 5, "n_features"),
    ("index-int32-overflow", GOOD + b"1 2147483648:1\n", {}, 2, "32-bit"),
    ("index-huge", GOOD + b"1 99999999999999999999999:1\n", {}, 2, "32-bit"),
    ("float32-overflow", GOOD + b"1 1:1e39\n", {"dtype": np.float32}, 2, "float32"),
    ("qid-bad", GOOD + b"1 qid:x 1:2\n", {}, 2, "query"),
    ("qid-not-first", GOOD + b"1 1:2 qid:3\n", {}, 2, "integer"),
    ("nul-in-line", GOOD * 2 + b"1 1:\x002\n", {}, 3, "NUL"),
    ("nul-in-comment", GOOD + b"1 1:2 # \x00\n", {}, 2, "NUL"),
    ("crlf-error-line", b"1 1:1\r\n1 1:1\r\n1 x\r\n", {}, 3, "':'"),
    ("after-comments", b"# a\n\n# b\n  \n1 1:1 1:1\n", {}, 5, "increasing"),
    ("empty-file", b"", {}, None, "no examples"),
    ("only-comments", b"# nothing\n\n   \n# here\n", {}, None, "no examples"),
]


@pytest.mark.parametrize("content,kwargs,line,word",
                         [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_input(tmp_path, content, kwargs, line, word):
    path = write(tmp_path, "bad.svm", content)
    with pytest.raises(LibsvmFormatError) as err:
        load_libsvm(path, **kwargs)
    e = err.value
    assert isinstance(e, ValueError)
    assert e.path == str(path)
    assert e.line == line
    assert word in e.reason
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(e) == prefix + e.reason
    # The streaming reader reports the same error, also from a compressed file.
    gz = write(tmp_path, "bad.gz", gzip.compress(content))
    with pytest.raises(LibsvmFormatError) as serr:
        for _ in stream_libsvm(gz, chunk_rows=1, **kwargs):
            pass
    assert (serr.value.line, serr.value.reason) == (line, e.reason)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_libsvm(tmp_path / "nope.svm")
    with pytest.raises(FileNotFoundError):
        next(stream_libsvm(tmp_path / "nope.svm"))


def test_bad_arguments(tmp_path):
    path = write(tmp_path, "ok.svm", GOOD)
    with pytest.raises(ValueError):
        load_libsvm(path, dtype=np.int64)
    with pytest.raises(ValueError):
        load_libsvm(path, n_features=0)
    with pytest.raises(TypeError):
        load_libsvm(path, n_features=2.5)
    with pytest.raises(ValueError):
        stream_libsvm(path, chunk_rows=0)
    assert load_libsvm(path, n_features=np.int64(3))[0].shape == (1, 3)


@pytest.mark.parametrize("compressor,kind", [(gzip.compress, "gzip"), (lzma.compress, "xz"),
                                             (bz2.compress, "bzip2")])
def test_truncated_and_corrupt_compressed(tmp_path, compressor, kind):
    rng = np.random.default_rng(5)
    text = b"".join(b"%d 1:%r 2:%r\n" % (i % 2, rng.random(), rng.random())
                    for i in range(3000))
    packed = compressor(text)
    truncated = write(tmp_path, "trunc.dat", packed[: len(packed) // 2])
    corrupt_bytes = bytearray(packed)
    for i in range(len(packed) // 3, len(packed) // 3 + 40):
        corrupt_bytes[i] ^= 0x5A
    corrupt = write(tmp_path, "corrupt.dat", bytes(corrupt_bytes))
    for path in (truncated, corrupt):
        with pytest.raises(LibsvmFormatError) as err:
            load_libsvm(path)
        assert err.value.line is None
        assert kind in err.value.reason
        with pytest.raises(LibsvmFormatError) as serr, block_size(4096):
            for _ in stream_libsvm(path, chunk_rows=100):
                pass
        assert kind in serr.value.reason
    with pytest.raises(LibsvmFormatError) as err:
        load_libsvm(truncated)
    assert "truncated or corrupt" in err.value.reason


def test_truncated_shared_xz(shared_data, tmp_path):
    packed = shared_data.compressed("a9a.t").read_bytes()
    path = write(tmp_path, "a9a.t.xz", packed[: len(packed) * 2 // 3])
    with pytest.raises(LibsvmFormatError, match="truncated or corrupt xz stream"):
        load_libsvm(path)


@pytest.mark.parametrize("kind", ["random", "utf16", "utf16-bom", "gzip-magic", "bzip2-magic",
                                  "xz-magic", "elf", "latin1-label"])
def test_binary_garbage_does_not_crash(tmp_path, kind):
    rnd = random.Random(kind)
    garbage = bytes(rnd.randrange(256) for _ in range(5000))
    text = "1 1:0.5 2:3\n-1 3:1\n"
    content = {
        "random": garbage,
        "utf16": text.encode("utf-16-le"),
        "utf16-bom": text.encode("utf-16"),
        "gzip-magic": b"\x1f\x8b" + garbage,
        "bzip2-magic": b"BZh9" + garbage,
        "xz-magic": b"\xfd7zXZ\x00" + garbage,
        "elf": b"\x7fELF\x02\x01\x01" + garbage,
        "latin1-label": "\xe91 1:2\n".encode("latin-1"),
    }[kind]
    path = write(tmp_path, "garbage.bin", content)
    with pytest.raises(LibsvmFormatError):
        load_libsvm(path)
    with pytest.raises(LibsvmFormatError):
        for _ in stream_libsvm(path):
            pass


def test_locale_with_decimal_comma(tmp_path):
    """Long mantissas go through strtod, which must ignore a ',' decimal-point locale."""
    script = textwrap.dedent("""
        import locale, sys
        from onlinekern.io import load_libsvm
        for name in ("de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE"):
            try:
                locale.setlocale(locale.LC_ALL, name)
                break
            except locale.Error:
                pass
        else:
            sys.exit(3)
        assert locale.localeconv()["decimal_point"] == ","
        X, y = load_libsvm(sys.argv[1])
        assert y[0] == float("0.12345678901234567890123"), y
        assert X.data[0] == float("1.00000000000000000000001e-5"), X.data
        assert X.data[1] == 2.5
    """)
    path = write(tmp_path, "loc.svm",
                 b"0.12345678901234567890123 1:1.00000000000000000000001e-5 2:2.5\n")
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-c", script, str(path)], env=env,
                            capture_output=True)
    if result.returncode == 3:
        # No comma locale installed: build one with localedef when it is available.
        locdir = tmp_path / "locales"
        locdir.mkdir()
        try:
            made = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8",
                                   str(locdir / "de_DE.UTF-8")], capture_output=True)
        except OSError:
            pytest.skip("no locale with a decimal comma available")
        if not (locdir / "de_DE.UTF-8").exists():
            pytest.skip(f"could not build a decimal-comma locale: {made.stderr[-200:]!r}")
        env["LOCPATH"] = str(locdir)
        result = subprocess.run([sys.executable, "-c", script, str(path)], env=env,
                                capture_output=True)
        if result.returncode == 3:
            pytest.skip("no locale with a decimal comma available")
    assert result.returncode == 0, result.stderr.decode()


# ------------------------------------------------------------------ property tests

@pytest.fixture(scope="module")
def prop_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("prop")


def _number_text():
    digits = st.text("0123456789", min_size=0, max_size=24)

    @st.composite
    def decimal(draw):
        sign = draw(st.sampled_from(["", "+", "-"]))
        whole = draw(digits)
        frac = draw(st.one_of(st.none(), digits))
        if not whole and not frac:
            whole = "0"
        s = sign + whole + ("." + frac if frac is not None else "")
        if draw(st.booleans()):
            s += draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"]))
            s += str(draw(st.integers(0, 330)))
        return s

    finite = st.floats(allow_nan=False, allow_infinity=False)
    return st.one_of(
        decimal(),
        finite.map(repr),
        finite.map(lambda v: "%.17g" % v),
        finite.map(lambda v: "%.6e" % v),
        st.integers(-10**6, 10**6).map(str),
        st.sampled_from(["+1", "-1", "1.0", "0", "7", "3.25", "1e3", ".5", "5.", "-0"]),
    )


@st.composite
def libsvm_text(draw):
    """Valid LIBSVM text (occasionally with a number overflowing to inf)."""
    num = _number_text()
    blank = st.sampled_from([" ", "  ", "\t", " \t "])
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(st.sampled_from(["", "   ", "# comment", " # 1:2 x"])))
            continue
        parts = [draw(num)]
        if draw(st.integers(0, 5)) == 0:
            parts.append("qid:%d" % draw(st.integers(0, 99)))
        idx = sorted(draw(st.sets(st.integers(1, 40), max_size=8)))
        parts += ["%d:%s" % (i, draw(num)) for i in idx]
        line = draw(blank).join(parts)
        if draw(st.integers(0, 4)) == 0:
            line += draw(st.sampled_from([" # c", "#c", "\r", " \t"]))
        lines.append(line)
    text = "\n".join(lines)
    if draw(st.booleans()):
        text += "\n"
    return text.encode("ascii")


def _check_against_reference(path, content, n_features=None, float32=False):
    dtype = np.float32 if float32 else np.float64
    try:
        expected = ref_parse(content, n_features or 0, float32)
    except RefError as ref_err:
        with pytest.raises(LibsvmFormatError) as err:
            load_libsvm(path, n_features=n_features, dtype=dtype)
        assert err.value.line == ref_err.line
        return None
    X, y = load_libsvm(path, n_features=n_features, dtype=dtype)
    assert_same(X, y, *expected)
    return X, y


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=libsvm_text(), n_features=st.sampled_from([None, None, 40, 60]),
       float32=st.booleans(), chunk_rows=st.integers(1, 5), bs=st.integers(1, 64))
def test_property_valid_text_matches_reference(prop_dir, content, n_features, float32,
                                               chunk_rows, bs):
    path = prop_dir / "valid.svm"
    path.write_bytes(content)
    result = _check_against_reference(path, content, n_features, float32)
    if result is not None:
        with block_size(bs):
            chunks = list(stream_libsvm(path, chunk_rows=chunk_rows, n_features=n_features,
                                        dtype=np.float32 if float32 else np.float64))
        assert_same(*stack_chunks(chunks), *result)


_MUTATION_BYTES = st.one_of(st.sampled_from(list(b"0123456789:.eE+-# \t\r\n\x00\x0bxqidnaf")),
                            st.integers(0, 255))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=libsvm_text(),
       mutations=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 2), _MUTATION_BYTES),
                          min_size=1, max_size=4),
       n_features=st.sampled_from([None, 30]))
def test_property_mutated_bytes(prop_dir, content, mutations, n_features):
    data = bytearray(content)
    for where, op, byte in mutations:
        i = int(where * len(data))
        if op == 0:
            data.insert(i, byte)
        elif op == 1 and i < len(data):
            data[i] = byte
        elif i < len(data):
            del data[i]
    data = bytes(data)
    path = prop_dir / "mutated.svm"
    path.write_bytes(data)
    # Either exactly the reference result, or LibsvmFormatError on the reference's line.
    _check_against_reference(path, data, n_features)


@settings(max_examples=100, deadline=None)
@given(st.lists(_number_text(), min_size=1, max_size=40))
def test_property_numbers_match_python_float(prop_dir, numbers):
    expected = []
    for s in numbers:
        v = float(s)
        expected.append(v if not math.isinf(v) else 0.5)
    text = "".join("%s 1:%s\n" % (s, s) if not math.isinf(float(s)) else "0.5 1:0.5\n"
                   for s in numbers)
    path = prop_dir / "numbers.svm"
    path.write_text(text)
    X, y = load_libsvm(path)
    assert y.tobytes() == np.array(expected).tobytes()
    assert X.data.tobytes() == np.array(expected).tobytes()
