"""Generated and adversarial LIBSVM inputs for the reader fuzzer (tests/test_fuzz.py).

:func:`make_input` draws one input from a ``random.Random``: valid token lists, mutations of
valid text (byte flips, truncations, insertions, deletions, duplicated tokens, CRLF and tabs),
awkward numbers (huge, tiny, 400-digit, rounding boundaries, ``nan``/``inf``, hex, underscores,
unicode digits), NUL bytes, UTF-16 / UTF-8-BOM text, binary garbage, compressed (gzip/bzip2/xz,
intact, truncated or damaged) text, index edge cases (2**31 - 1, 2**31, 2**64 + 1, leading
zeros) and long lines.  :func:`big_inputs` gives ~1 GiB single lines with their expected result.
"""
import bz2
import gzip
import lzma
import re

INT32_MAX = 2**31 - 1

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


def long_line(rnd, n):
    """One of five long inputs with ``n`` repeated units (features, tokens, lines, blanks, zeros)."""
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


def make_input(rnd):
    """One input: ``(content bytes, n_features or None, float32 flag, kind name)``."""
    r = rnd.random()
    # Mostly unconstrained reads, so that most valid texts parse; sometimes a width limit or
    # float32 (both reject some otherwise valid lines).
    n_features = rnd.choice([None] * 12 + [1, 30, 60, INT32_MAX])
    float32 = rnd.random() < 0.1
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
        kind, content = "medium", long_line(rnd, rnd.randrange(1, 3000))
    return content, n_features, float32, kind


def big_inputs(size):
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
