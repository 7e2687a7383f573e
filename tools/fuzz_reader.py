"""Fuzz the LIBSVM reader against a small pure-Python reference parser.

Every generated input must either parse to exactly (bitwise) what :func:`ref_parse` gives, or
raise :class:`onlinekern.LibsvmFormatError` on the line the reference names; anything else — a
different result, another exception, a crash, a hang, a memory blow-up — is a failure.

Inputs are generated deterministically from ``(seed, i)``, so any one of them can be replayed
with ``--only I``.  The mix (see :func:`make_input`): valid token lists, mutations of valid text
(byte flips, truncations, insertions, deletions, duplicated tokens, CRLF and tabs), awkward
numbers (huge, tiny, 400-digit, rounding boundaries, ``nan``/``inf``, hex, underscores, unicode
digits), NUL bytes, UTF-16 / UTF-8-BOM text, binary garbage, compressed (gzip/bzip2/xz, intact,
truncated or damaged) text, index edge cases (2**31 - 1, 2**31, 2**64 + 1, leading zeros), and a
few very long lines (10**6 features, 10**6 repeated tokens).  ``--big`` adds ~1 GiB single
lines.

Each input goes through ``parse_libsvm`` on the bytes, through ``load_libsvm`` on a temporary
file, and (one in eight) through ``stream_libsvm`` with small blocks.  The inputs run in a child
process watched by the parent: a child that dies (signal), stops making progress for
``--timeout`` seconds on one input, or exceeds ``--max-rss-mb`` is killed, the input is recorded
as a failure, and a new child resumes after it.

Usage::

    python tools/fuzz_reader.py -n 100000 --seed 1
    python tools/fuzz_reader.py --only 12345 --seed 1 -v      # replay one input
    python tools/fuzz_reader.py -n 0 --big                    # only the ~1 GiB lines
"""
import argparse
import bz2
import gzip
import lzma
import math
import multiprocessing as mp
import os
import queue
import random
import re
import resource
import sys
import tempfile
import time
import traceback
import zlib

import numpy as np

INT32_MAX = 2**31 - 1

# ------------------------------------------------------------------ reference parser
# The rules of onlinekern/io/libsvm.py's docstring and tests/test_reader.py, stated directly:
# lines split at "\n"; a NUL anywhere in a line is an error; "#" starts a comment; tokens split
# on Python's bytes.split() whitespace (space, \t, \r, \v, \f); label then optional qid:digits,
# then index:value with plain-decimal 1-based strictly increasing indices <= 2**31 - 1 (and
# <= n_features when given); numbers are plain decimals converted by float(), infinities (also
# by overflow) rejected; float32 values are float64 values rounded, and must not overflow.

_NUMBER = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DIGITS = re.compile(rb"[0-9]+")


class RefError(Exception):
    """The reference rejects the input; ``line`` is the 1-based line, or None (no examples)."""

    def __init__(self, line):
        super().__init__(line)
        self.line = line


def _ref_number(tok, line):
    if not _NUMBER.fullmatch(tok):
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


# ------------------------------------------------------------------------ generator

_NUMS_VALID = [
    "0", "-0", "+0", "1", "-1", "+1", "0.5", ".5", "5.", "-.5", "1e3", "1E-3", "1e+3", "3.25",
    "0.000000e+00", "1.7976931348623157e308", "1.7976931348623158e308", "4.9e-324",
    "2.4703282292062328e-324", "2.4703282292062327e-324", "2.2250738585072014e-308",
    "9007199254740993", "9007199254740992.5", "123456789012345678901234567890e-20",
    "0.1000000000000000055511151231257827", "1e22", "1e23", "1e-22", "1e-400", "1e-99999999999",
    "0." + "3" * 150, "9" * 300 + "e-299", "0" * 200 + "1.5", "1." + "0" * 200 + "1",
    "3.4028234663852886e38", "3.4028235677973366e38", "3.4028235677973367e38", "1e39",
    "-1e-45", "7e-46", "00012", "1.e5", "18446744073709551617", "1e0000000000000000000001",
]
_NUMS_BAD = [
    "1.7976931348623159e308", "1e309", "-1e400", "1e99999999999", "9" * 400, "nan", "NaN",
    "-nan", "inf", "-inf", "+Infinity", "infinity", "0x1p3", "0X1A", "0x10", "1_000", "1,5",
    "\u0663", "\uff11", "1\u0660", "\u00b9", "1.5.2", "1e", "1e+", "e5", ".", "-", "+", "+-1",
    "--1", "1.5x", "１.5", "\u2212" + "1", "0b101", "1d3", "1f", "", ":", "1:2",
]
_SEPS = [" ", "  ", "\t", " \t ", "\x0b", "\x0c", "\r"]
_MAGIC = [b"\x1f\x8b", b"BZh9", b"\xfd7zXZ\x00", b"\x7fELF\x02\x01\x01", b"\xef\xbb\xbf",
          b"\xff\xfe", b"\xfe\xff", b"PK\x03\x04"]


def _number(rnd, bad_rate=0.0):
    if rnd.random() < bad_rate:
        return rnd.choice(_NUMS_BAD)
    k = rnd.randrange(8)
    if k == 0:
        return rnd.choice(_NUMS_VALID)
    if k == 1:
        return repr(rnd.uniform(-1e3, 1e3))
    if k == 2:
        return "%.17g" % (rnd.gauss(0, 1) * 10.0 ** rnd.randrange(-320, 308))
    if k == 3:
        return str(rnd.randrange(-10**6, 10**6))
    if k == 4:
        return "%.6e" % rnd.gauss(0, 1)
    if k == 5:
        return "%d" % rnd.randrange(-1, 2)
    # free-form decimal, including 19-20 digit mantissas (fast/slow path boundary)
    s = rnd.choice(["", "+", "-"])
    whole = "".join(rnd.choice("0123456789") for _ in range(rnd.randrange(0, 24)))
    frac = None if rnd.random() < 0.4 else "".join(
        rnd.choice("0123456789") for _ in range(rnd.randrange(0, 24)))
    if not whole and not frac:
        whole = "0"
    s += whole + ("." + frac if frac is not None else "")
    if rnd.random() < 0.5:
        top = 340 if rnd.random() < 0.1 else 30      # rarely near the overflow boundary
        s += rnd.choice("eE") + rnd.choice(["", "+", "-"]) + str(rnd.randrange(0, top))
    return s


def _index_list(rnd):
    k = rnd.randrange(10)
    if k == 0:
        return [rnd.choice([1, INT32_MAX - 1, INT32_MAX])]
    n = rnd.randrange(0, 9)
    return sorted(rnd.sample(range(1, 60), n))


def _valid_line(rnd, bad_rate=0.0):
    k = rnd.randrange(12)
    if k == 0:
        return rnd.choice(["", "   ", "# comment", " # 1:2 x", "\t#", "#\r"])
    parts = [_number(rnd, bad_rate)]
    if rnd.randrange(6) == 0:
        parts.append("qid:%d" % rnd.randrange(0, 100))
    for i in _index_list(rnd):
        istr = str(i)
        if rnd.random() < 0.05:
            istr = "0" * rnd.randrange(1, 4) + istr          # leading zeros are decimal
        parts.append("%s:%s" % (istr, _number(rnd, bad_rate)))
    sep = rnd.choice(_SEPS[:4])
    line = sep.join(parts)
    if rnd.randrange(4) == 0:
        line = rnd.choice(["", " ", "\t"]) + line
    if rnd.randrange(5) == 0:
        line += rnd.choice([" # c", "#c", "\r", " \t", "#", " # \xe9".encode().decode()])
    return line


def _valid_text(rnd, bad_rate=0.0, max_lines=12):
    lines = [_valid_line(rnd, bad_rate) for _ in range(rnd.randrange(0, max_lines + 1))]
    text = "\n".join(lines)
    if rnd.random() < 0.5:
        text += "\n"
    return text.encode("utf-8")


_MUT_BYTES = b"0123456789:.eE+-# \t\r\n\x00\x0b\x0cxqidnafX_"


def _mutate(rnd, data):
    data = bytearray(data)
    for _ in range(rnd.randrange(1, 6)):
        op = rnd.randrange(8)
        i = rnd.randrange(len(data) + 1)
        b = rnd.choice(_MUT_BYTES) if rnd.random() < 0.7 else rnd.randrange(256)
        if op == 0:
            data.insert(i, b)
        elif op == 1 and i < len(data):
            data[i] = b
        elif op == 2 and i < len(data):
            data[i] ^= 1 << rnd.randrange(8)                  # bit flip
        elif op == 3 and i < len(data):
            del data[i:i + rnd.randrange(1, 8)]
        elif op == 4:
            del data[i:]                                       # truncation
        elif op == 5 and data:
            # duplicate a token (or any span) in place
            toks = [m.span() for m in re.finditer(rb"\S+", bytes(data))]
            if toks:
                a, b2 = rnd.choice(toks)
                data[b2:b2] = b" " + data[a:b2]
        elif op == 6:
            data = bytearray(bytes(data).replace(b"\n", b"\r\n") if rnd.random() < 0.5
                             else bytes(data).replace(b" ", b"\t"))
        else:
            data[i:i] = rnd.choice([b"nan", b"inf", b"0x1p3", b"1e400", b"\xef\xbb\xbf",
                                    "\u0663".encode(), b"2147483648:1", b"qid:", b"#", b":"])
    return bytes(data)


def _garbage(rnd):
    n = rnd.randrange(0, 300)
    k = rnd.randrange(4)
    if k == 0:
        return bytes(rnd.randrange(256) for _ in range(n))
    if k == 1:
        return rnd.choice(_MAGIC) + bytes(rnd.randrange(256) for _ in range(n))
    if k == 2:                                              # printable ASCII soup
        return bytes(rnd.choice(b"0123456789:. \t\n#-+eE") for _ in range(n))
    return bytes(rnd.randrange(0x80, 0x100) for _ in range(n))


def _encoded(rnd):
    text = _valid_text(rnd).decode()
    enc = rnd.choice(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
    return text.encode(enc)


def _compressed(rnd):
    text = _valid_text(rnd, bad_rate=rnd.choice([0.0, 0.05]), max_lines=30)
    func = rnd.choice([gzip.compress, bz2.compress, lzma.compress])
    packed = func(text)
    k = rnd.randrange(4)
    if k == 0:
        return packed
    if k == 1:
        return packed[:rnd.randrange(len(packed))]
    if k == 2:
        d = bytearray(packed)
        i = rnd.randrange(len(d))
        d[i] ^= 1 << rnd.randrange(8)
        return bytes(d)
    return packed + bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 20)))


def _index_edge(rnd):
    idx = rnd.choice([INT32_MAX, INT32_MAX + 1, 2**32, 2**32 + 1, 2**63 - 1, 2**63, 2**64,
                      2**64 + 1, 2**64 + 2, 10**30, 0, 1])
    istr = str(idx)
    if rnd.random() < 0.2:
        istr = "0" * rnd.randrange(1, 30) + istr
    pre = rnd.choice(["", "1:1 ", "5:2 "])
    return ("1 %s%s:%s\n" % (pre, istr, _number(rnd))).encode()


def _long_line(rnd, n):
    k = rnd.randrange(5)
    if k == 0:                                               # n increasing features
        return b"1 " + b" ".join(b"%d:%d" % (i, i % 7) for i in range(1, n + 1)) + b"\n"
    if k == 1:                                               # n repeated tokens: rejected
        return b"1" + b" 1:1" * n + b"\n"
    if k == 2:                                               # n repeated labels-only lines
        return b"1\n" * n
    if k == 3:                                               # n blanks then one feature
        return b"1" + b" \t" * n + b"3:1.5\n"
    return b"1 1:" + b"0" * n + b"7\n"                      # n leading zeros


def make_input(seed, i):
    """The i-th input: ``(content bytes, n_features or None, float32 flag, kind name)``."""
    rnd = random.Random(seed * 1_000_003 + i)
    r = rnd.random()
    # Mostly unconstrained reads, so that most valid texts parse; sometimes a width limit or
    # float32 (both reject some otherwise valid lines).
    n_features = rnd.choice([None] * 12 + [1, 30, 60, INT32_MAX])
    float32 = rnd.random() < 0.1
    if i % 25_000 == 24_999:
        return _long_line(rnd, 10**6), None, False, "long"
    if r < 0.30:
        kind, content = "valid", _valid_text(rnd)
    elif r < 0.62:
        kind, content = "mutated", _mutate(rnd, _valid_text(rnd))
    elif r < 0.72:
        kind, content = "numbers", _valid_text(rnd, bad_rate=0.3)
    elif r < 0.78:
        kind, content = "garbage", _garbage(rnd)
    elif r < 0.82:
        kind, content = "encoded", _encoded(rnd)
    elif r < 0.87:
        kind, content = "compressed", _compressed(rnd)
    elif r < 0.92:
        kind, content = "index", _index_edge(rnd)
    elif r < 0.97:
        t = _valid_text(rnd)
        j = rnd.randrange(len(t) + 1)
        kind, content = "nul", t[:j] + b"\x00" + t[j:]
    else:
        kind, content = "medium", _long_line(rnd, rnd.randrange(1, 3000))
    return content, n_features, float32, kind


# ---------------------------------------------------------------------------- checks

def _same(got, exp):
    """Bitwise equality of (data, indices, indptr, labels, width) tuples."""
    gd, gi, gp, gl, gw = got
    ed, ei, ep, el, ew = exp
    return (gw == ew and gd.dtype == ed.dtype and gd.tobytes() == ed.tobytes()
            and np.array_equal(gi, ei) and np.array_equal(np.asarray(gp, np.int64), ep)
            and gl.tobytes() == el.tobytes())


def check_input(content, n_features, float32, path, stream=False):
    """Return ``"equal"`` or ``"rejected"``; raise AssertionError on any disagreement."""
    from onlinekern.io import LibsvmFormatError, load_libsvm, stream_libsvm
    from onlinekern.io import libsvm as libsvm_module
    from onlinekern.io._libsvm import ParseError, parse_libsvm

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
                assert _same(got, expected), "parse_libsvm result differs from the reference"
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
        assert X.shape[0] == len(y) and _same(got, expected), \
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
            import scipy.sparse as sp
            width = chunks[-1][0].shape[1]
            Xs = sp.vstack([sp.csr_matrix((c.data, c.indices, c.indptr),
                                          shape=(c.shape[0], width)) for c, _ in chunks],
                           format="csr")
            ys = np.concatenate([c[1] for c in chunks])
            assert _same((Xs.data, Xs.indices, Xs.indptr, ys, width), expected), \
                "stream_libsvm result differs from the reference"
        finally:
            libsvm_module._BLOCK_SIZE = old
    return result


# ---------------------------------------------------------------------- child / parent

def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _child(seed, start, stop, only, progress, counters, results, tmpdir):
    """Run inputs [start, stop) (or the list ``only``).  Counts go to the shared ``counters``
    and each failure to ``results`` at once, so nothing is lost if the child is killed."""
    path = os.path.join(tmpdir, "fuzz.svm")
    indices = only if only is not None else range(start, stop)
    n_fail = 0
    for i in indices:
        progress.value = i
        content, nf, f32, kind = make_input(seed, i)
        try:
            outcome = check_input(content, nf, f32, path, stream=(i % 8 == 0))
            counters[0 if outcome == "equal" else 1] += 1
        except AssertionError as exc:
            results.put(("fail", (i, kind, str(exc))))
            n_fail += 1
        except Exception as exc:        # any other exception is a failure too
            results.put(("fail", (i, kind, f"{type(exc).__name__}: {exc}\n"
                                           + traceback.format_exc(limit=3))))
            n_fail += 1
        if n_fail > 50:
            break
    progress.value = -1
    results.put(("done", _peak_rss_mb()))


def _rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def run(n, seed, timeout, max_rss_mb, only=None, verbose=False):
    """Fuzz inputs 0..n-1 (or ``only``); return a summary dict."""
    ctx = mp.get_context("fork")
    t0 = time.monotonic()
    counts = {"equal": 0, "rejected": 0}
    failures = []
    peak = 0.0
    todo = list(only) if only is not None else None
    start = 0
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        while (todo if todo is not None else start < n):
            progress = ctx.Value("q", start)
            counters = ctx.Array("q", 2)
            results = ctx.Queue()
            proc = ctx.Process(target=_child,
                               args=(seed, start, n, todo, progress, counters, results, tmp))
            proc.start()
            last, since = progress.value, time.monotonic()
            done = False
            while True:
                try:
                    kind, payload = results.get(timeout=0.05)
                    if kind == "fail":
                        failures.append(payload)
                        continue
                    peak = max(peak, payload)
                    done = True
                    break
                except queue.Empty:
                    pass
                rss = _rss_mb(proc.pid)
                peak = max(peak, rss)
                cur = progress.value
                if cur != last:
                    last, since = cur, time.monotonic()
                problem = None
                if not proc.is_alive() and results.empty():
                    problem = f"child died (exit code {proc.exitcode})"
                elif time.monotonic() - since > timeout:
                    problem = f"no progress for {timeout} s (hang)"
                elif rss > max_rss_mb:
                    problem = f"RSS {rss:.0f} MB > {max_rss_mb} MB"
                if problem:
                    proc.kill()
                    proc.join()
                    i = progress.value
                    failures.append((i, make_input(seed, i)[3], problem))
                    if todo is not None:
                        todo = todo[todo.index(i) + 1:]
                    else:
                        start = i + 1
                    break
            counts["equal"] += counters[0]
            counts["rejected"] += counters[1]
            if done:
                proc.join()
                break
    seconds = time.monotonic() - t0
    total = counts["equal"] + counts["rejected"] + len(failures)
    return {"inputs": total, "equal": counts["equal"], "rejected": counts["rejected"],
            "failures": failures, "peak_rss_mb": peak, "seconds": seconds}


# ------------------------------------------------------------------------- --big

def _big_inputs(size):
    """~size-byte single lines with their expected (X, y), written without a reference run."""
    yield ("leading zeros", lambda f: (f.write(b"1 1:"), _fill(f, b"0", size), f.write(b"2.5\n")),
           ([2.5], [0], [0, 1], [1.0], 1))
    yield ("long mantissa (strtod on a 1 GiB token)",
           lambda f: (f.write(b"-1 1:1."), _fill(f, b"0", size), f.write(b"1 3:4\n")),
           ([1.0, 4.0], [0, 2], [0, 2], [-1.0], 3))
    yield ("blanks", lambda f: (f.write(b"2"), _fill(f, b" \t", size), f.write(b"7:1\n")),
           ([1.0], [6], [0, 1], [2.0], 7))
    yield ("comment", lambda f: (f.write(b"3 2:2 #"), _fill(f, b"x 1:1 ", size),
                                 f.write(b"\n4 1:1")),
           ([2.0, 1.0], [1, 0], [0, 1, 2], [3.0, 4.0], 2))


def _fill(f, unit, size):
    block = unit * ((1 << 20) // len(unit))
    for _ in range(size // len(block)):
        f.write(block)


def run_big(size, tmpdir):
    from onlinekern.io import load_libsvm, stream_libsvm
    failures = []
    path = os.path.join(tmpdir, "big.svm")
    for name, writer, (d, ix, ip, lb, w) in _big_inputs(size):
        with open(path, "wb") as f:
            writer(f)
        expected = (np.array(d), np.array(ix, np.int32), np.array(ip, np.int64),
                    np.array(lb), w)
        t = time.monotonic()
        try:
            X, y = load_libsvm(path)
            ok = _same((X.data, X.indices, X.indptr, y, X.shape[1]), expected)
            chunks = list(stream_libsvm(path, chunk_rows=1))
            ok = ok and sum(len(c[1]) for c in chunks) == len(lb)
        except Exception as exc:
            ok = False
            name += f" ({type(exc).__name__}: {exc})"
        print(f"  big {name}: {'ok' if ok else 'FAIL'} ({os.path.getsize(path) / 2**30:.2f} GiB,"
              f" {time.monotonic() - t:.1f} s, peak RSS {_peak_rss_mb():.0f} MB)")
        if not ok:
            failures.append(name)
        os.unlink(path)
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--n-inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", type=int, nargs="*", help="replay these input numbers")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds without progress")
    ap.add_argument("--max-rss-mb", type=float, default=2000.0)
    ap.add_argument("--big", action="store_true", help="also parse ~1 GiB single lines")
    ap.add_argument("--big-size", type=int, default=1 << 30, help=argparse.SUPPRESS)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.only:
        for i in args.only:
            content, nf, f32, kind = make_input(args.seed, i)
            print(f"input {i} ({kind}, n_features={nf}, float32={f32}): {content[:300]!r}")
    res = run(args.n_inputs, args.seed, args.timeout, args.max_rss_mb, only=args.only)
    print(f"inputs {res['inputs']}  parsed-equal {res['equal']}  rejected {res['rejected']}  "
          f"failures {len(res['failures'])}  peak RSS {res['peak_rss_mb']:.0f} MB  "
          f"{res['seconds']:.1f} s")
    for i, kind, msg in res["failures"][:20]:
        print(f"  FAIL input {i} ({kind}): {msg}")
    n_fail = len(res["failures"])
    if args.big:
        with tempfile.TemporaryDirectory() as tmp:
            n_fail += len(run_big(args.big_size, tmp))
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
