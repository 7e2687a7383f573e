# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Cython core of the LIBSVM / svmlight text reader.

One function, :func:`parse_libsvm`, turns a bytes-like buffer into CSR arrays.  It is shared by
``load_libsvm`` (whole file, ``final=True``) and ``stream_libsvm`` (blocks, ``final=False``: only
complete lines are parsed and the caller carries the rest over).  Everything that touches a byte
runs without the GIL on raw pointers; Python objects are made only once, at the end, or when an
error has to be reported.

Grammar accepted (one example per ``\\n``-terminated line)::

    line    := blank* (label (blank+ qid)? (blank+ feature)*)? blank* comment? "\\n"
    label   := number
    qid     := "qid:" digit+                  (only directly after the label; ignored)
    feature := digit+ ":" number              (index 1-based, strictly increasing)
    number  := [+-]? (digit+ ("." digit*)? | "." digit+) ([eE] [+-]? digit+)?
    blank   := " " | "\\t" | "\\r" | "\\v" | "\\f"
    comment := "#" anything up to the end of the line

Numbers are converted exactly as Python's ``float()`` converts them (correctly rounded); NaN,
infinities (also by overflow such as ``1e400``), hexadecimal floats and underscores are rejected.
A NUL byte anywhere is an error (binary data, UTF-16 text).
"""

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.math cimport isinf
from cpython.pycapsule cimport PyCapsule_New, PyCapsule_GetPointer

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    """
    /* Locale-independent strtod.  strtod() follows LC_NUMERIC, and a program may have switched
     * it to a locale whose decimal point is ',' (then "0.5" would parse as 0).  Where the C
     * library offers strtod_l we pass it a private "C" locale; elsewhere the '.' of the
     * (already validated) token is replaced by the current locale's decimal point, as CPython
     * did in its own PyOS_ascii_strtod. */
    #include <stdlib.h>
    #include <string.h>
    #include <locale.h>
    #if defined(__APPLE__) || defined(__FreeBSD__)
    #include <xlocale.h>
    #endif
    #if defined(_MSC_VER)
    static _locale_t ok_c_locale = NULL;
    static int ok_c_locale_init(void) {
        if (!ok_c_locale) ok_c_locale = _create_locale(LC_NUMERIC, "C");
        return ok_c_locale != NULL;
    }
    static double ok_strtod_c(char *s, char **end) { return _strtod_l(s, end, ok_c_locale); }
    #elif defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__)
    static locale_t ok_c_locale = (locale_t)0;
    static int ok_c_locale_init(void) {
        if (!ok_c_locale) ok_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        return ok_c_locale != (locale_t)0;
    }
    static double ok_strtod_c(char *s, char **end) { return strtod_l(s, end, ok_c_locale); }
    #else
    static int ok_c_locale_init(void) { return 1; }
    static double ok_strtod_c(char *s, char **end) {
        const char *dp = localeconv()->decimal_point;
        char *dot = strchr(s, '.');
        if (dot && dp && dp[0] && dp[1] == '\\0') *dot = dp[0];
        return strtod(s, end);
    }
    #endif
    """
    int ok_c_locale_init()
    double ok_strtod_c(char *s, char **end) noexcept nogil

if not ok_c_locale_init():
    raise ImportError("onlinekern.io: could not create the C numeric locale")

# Byte classes used by the tokenizer.  A table lookup per byte is cheaper than a chain of
# comparisons and keeps the rules (what separates tokens, what ends a line) in one place.
cdef enum:
    C_TOKEN = 0     # part of a token
    C_BLANK = 1     # ' ', '\t', '\r', '\v', '\f': the bytes Python's bytes.split() splits on
    C_NL = 2        # '\n': the only line terminator (CRLF works because '\r' is blank)
    C_HASH = 3      # '#': comment to end of line, also right after a token
    C_NUL = 4       # '\0': never valid; signals binary data or UTF-16 text

cdef unsigned char CLS[256]
for _i in range(256):
    CLS[_i] = C_TOKEN
for _i in (0x20, 0x09, 0x0D, 0x0B, 0x0C):
    CLS[_i] = C_BLANK
CLS[0x0A] = C_NL
CLS[0x23] = C_HASH
CLS[0x00] = C_NUL

# Exact powers of ten: every 10**k with k <= 22 is representable in a double, which is what
# makes the fast path below correctly rounded (Clinger 1990).
cdef double P10[23]
for _i in range(23):
    P10[_i] = float(10 ** _i)
del _i

cdef enum:
    NUM_OK = 0
    NUM_BAD = 1         # not a decimal number (syntax), or followed by a non-separator
    NUM_NONFINITE = 2   # overflows to +-inf
    NUM_NUL = 3         # token runs into a NUL byte
    NUM_NOMEM = 4

# Error codes reported by the region parser (turned into messages in _raise_error).
cdef enum:
    E_NONE = 0
    E_NUL = 1
    E_LABEL = 2             # label token (rc tells syntax / non-finite / NUL)
    E_QID = 3
    E_INDEX = 4             # token does not start with digits followed by ':'
    E_INDEX_RANGE = 5       # index does not fit in int32
    E_INDEX_ZERO = 6
    E_NOT_INCREASING = 7
    E_INDEX_EXCEEDS = 8     # index > n_features
    E_VALUE = 9             # value token (rc tells syntax / non-finite / NUL)
    E_FLOAT32 = 10          # finite double that overflows float32
    E_NOMEM = 11

cdef extern from *:
    """
    /* Compile-time constants (Cython module globals would be re-read inside the loops). */
    #define OK_INT32_MAX ((int64_t)2147483647)
    #define OK_TWO53 ((uint64_t)1 << 53)
    #define OK_MAX_FAST_DIGITS 19   /* 19 decimal digits always fit in a uint64 */
    """
    int64_t OK_INT32_MAX
    uint64_t OK_TWO53
    int OK_MAX_FAST_DIGITS

cdef const char *EMPTY = ""


cdef struct Out:
    # Growable output buffers (malloc'd so they can grow without the GIL).
    char *data             # float64 or float32 values, elsize bytes each
    int32_t *indices       # 0-based column indices
    int64_t *indptr        # rows + 1 entries, indptr[0] = 0
    double *labels
    Py_ssize_t nnz
    Py_ssize_t nnz_cap
    Py_ssize_t rows
    Py_ssize_t rows_cap    # capacity of labels; indptr has rows_cap + 1 slots
    Py_ssize_t elsize


cdef struct State:
    Py_ssize_t line        # 1-based number of the line being parsed
    Py_ssize_t n_newlines  # '\n' consumed
    int64_t max_index      # largest 1-based index seen
    int err                # E_* code
    int rc                 # NUM_* code for E_LABEL / E_VALUE
    Py_ssize_t err_line
    Py_ssize_t tok_a       # offending token [tok_a, tok_b) as offsets into the buffer
    Py_ssize_t tok_b
    int64_t aux1
    int64_t aux2


cdef inline const unsigned char *_token_end(const unsigned char *p,
                                            const unsigned char *end) noexcept nogil:
    while p < end and CLS[p[0]] == C_TOKEN:
        p += 1
    return p


cdef double _slow_strtod(const unsigned char *a, Py_ssize_t n, int *rc) noexcept nogil:
    """Correctly rounded conversion of a validated token through the C library.

    strtod needs a NUL-terminated string and the token sits inside the file buffer, so it is
    copied (onto the stack unless it is very long).  The grammar was already checked, so
    strtod's extensions (hex floats, "nan", "inf") can never be reached from here.
    """
    cdef char local[128]
    cdef char *b = local
    cdef char *e = NULL
    cdef double v
    if n >= 128:
        b = <char *>malloc(n + 1)
        if b == NULL:
            rc[0] = NUM_NOMEM
            return 0.0
    memcpy(b, a, n)
    b[n] = 0
    v = ok_strtod_c(b, &e)
    if e != b + n:
        # Cannot happen for a validated token; refuse rather than return a wrong number.
        rc[0] = NUM_BAD
    if b != local:
        free(b)
    return v


cdef inline int _scan_number(const unsigned char *p, const unsigned char *end,
                             const unsigned char **stop, double *out) noexcept nogil:
    """Parse one number starting at p; *stop is set to the byte after it.

    Short mantissas (<= 19 significant digits, value <= 2**53, |exponent| <= 22) are converted
    with one exact multiplication or division, which IEEE arithmetic rounds correctly; this
    covers almost every number found in LIBSVM files.  Everything else goes to strtod.
    """
    cdef const unsigned char *body      # first byte after the sign
    cdef bint neg = False
    cdef bint slow = False
    cdef uint64_t m = 0
    cdef int nd = 0            # significant digits held in m
    cdef int64_t e10 = 0       # decimal exponent of m
    cdef Py_ssize_t ndigits = 0
    cdef int64_t ev = 0
    cdef bint eneg = False
    cdef Py_ssize_t edigits = 0
    cdef unsigned int d
    cdef double v
    cdef int rc = NUM_OK

    if p < end and (p[0] == b'+' or p[0] == b'-'):
        neg = p[0] == b'-'
        p += 1
    body = p
    while p < end:
        d = <unsigned int>p[0] - 48u
        if d > 9u:
            break
        if nd < OK_MAX_FAST_DIGITS:
            m = m * 10u + d
            if m != 0:
                nd += 1
        else:
            slow = True
        ndigits += 1
        p += 1
    if p < end and p[0] == b'.':
        p += 1
        while p < end:
            d = <unsigned int>p[0] - 48u
            if d > 9u:
                break
            if nd < OK_MAX_FAST_DIGITS:
                m = m * 10u + d
                if m != 0:
                    nd += 1
                e10 -= 1
            else:
                slow = True
            ndigits += 1
            p += 1
    if ndigits == 0:
        stop[0] = p
        return NUM_BAD
    if p < end and (p[0] | 0x20) == b'e':
        p += 1
        if p < end and (p[0] == b'+' or p[0] == b'-'):
            eneg = p[0] == b'-'
            p += 1
        while p < end:
            d = <unsigned int>p[0] - 48u
            if d > 9u:
                break
            if ev < 100000000:     # clamp: any larger exponent over/underflows anyway
                ev = ev * 10 + d
            edigits += 1
            p += 1
        if edigits == 0:
            stop[0] = p
            return NUM_BAD
        e10 += -ev if eneg else ev
    stop[0] = p
    # The number must end at a separator: "1.5x", "0x1p3", "1:2" as a label are all invalid.
    if p < end:
        if CLS[p[0]] == C_TOKEN:
            return NUM_BAD
        if CLS[p[0]] == C_NUL:
            return NUM_NUL

    if not slow and m == 0:
        v = 0.0
    elif not slow and m <= OK_TWO53 and -22 <= e10 <= 22:
        v = <double>m
        if e10 < 0:
            v = v / P10[-e10]
        else:
            v = v * P10[e10]
    else:
        # The sign is applied below, so strtod gets the token without it.
        v = _slow_strtod(body, p - body, &rc)
        if rc != NUM_OK:
            return rc
        if isinf(v):
            return NUM_NONFINITE
    out[0] = -v if neg else v
    return NUM_OK


cdef int _grow_nnz(Out *o) noexcept nogil:
    cdef Py_ssize_t cap = o.nnz_cap * 2 + 1024
    cdef char *d = <char *>realloc(o.data, cap * o.elsize)
    if d == NULL:
        return -1
    o.data = d
    cdef int32_t *ix = <int32_t *>realloc(o.indices, cap * sizeof(int32_t))
    if ix == NULL:
        return -1
    o.indices = ix
    o.nnz_cap = cap
    return 0


cdef int _grow_rows(Out *o) noexcept nogil:
    cdef Py_ssize_t cap = o.rows_cap * 2 + 256
    cdef double *lb = <double *>realloc(o.labels, cap * sizeof(double))
    if lb == NULL:
        return -1
    o.labels = lb
    cdef int64_t *ip = <int64_t *>realloc(o.indptr, (cap + 1) * sizeof(int64_t))
    if ip == NULL:
        return -1
    o.indptr = ip
    o.rows_cap = cap
    return 0


cdef inline const unsigned char *_comment_end(const unsigned char *p,
                                             const unsigned char *end) noexcept nogil:
    """From a '#': the line's '\\n' (or end), or an earlier NUL byte, which is an error."""
    while p < end and p[0] != b'\n' and p[0] != 0:
        p += 1
    return p


cdef inline Py_ssize_t _fail(State *st, int code, int rc, Py_ssize_t line,
                             const unsigned char *buf, const unsigned char *a,
                             const unsigned char *b, int64_t aux1, int64_t aux2) noexcept nogil:
    st.err = code
    st.rc = rc
    st.err_line = line
    st.tok_a = a - buf
    st.tok_b = b - buf
    st.aux1 = aux1
    st.aux2 = aux2
    return -1


cdef Py_ssize_t _parse_region(const unsigned char *buf, Py_ssize_t start, Py_ssize_t stop,
                              int64_t n_features, bint f32, Py_ssize_t max_rows,
                              Out *o, State *st) noexcept nogil:
    """Parse lines in buf[start:stop]; return the offset reached, or -1 with st.err set.

    With max_rows > 0 parsing stops right after the line that completes row max_rows.
    """
    cdef const unsigned char *p = buf + start
    cdef const unsigned char *end = buf + stop
    cdef const unsigned char *tok
    cdef const unsigned char *q
    cdef unsigned char c
    cdef unsigned int d
    cdef int rc
    cdef double v
    cdef float fv
    cdef int64_t idx
    cdef int64_t prev
    cdef bint first
    cdef Py_ssize_t line = st.line
    cdef Py_ssize_t nl = st.n_newlines
    cdef int64_t maxi = st.max_index
    cdef float *data32 = <float *>o.data
    cdef double *data64 = <double *>o.data

    while p < end:
        # ---- start of a line: blanks, then blank line / comment / label
        while p < end and CLS[p[0]] == C_BLANK:
            p += 1
        if p == end:
            break
        c = CLS[p[0]]
        if c == C_NL:
            p += 1
            line += 1
            nl += 1
            continue
        if c == C_HASH:
            p = _comment_end(p, end)
            if p < end and p[0] == 0:
                return _fail(st, E_NUL, 0, line, buf, p, p, 0, 0)
            if p < end:
                p += 1
                line += 1
                nl += 1
            continue
        if c == C_NUL:
            return _fail(st, E_NUL, 0, line, buf, p, p, 0, 0)

        rc = _scan_number(p, end, &q, &v)
        if rc != NUM_OK:
            return _fail(st, E_LABEL, rc, line, buf, p, _token_end(p, end), 0, 0)
        if o.rows == o.rows_cap and _grow_rows(o) != 0:
            return _fail(st, E_NOMEM, 0, line, buf, p, p, 0, 0)
        o.labels[o.rows] = v
        p = q
        prev = 0
        first = True

        # ---- features up to the end of the line
        while True:
            while p < end and CLS[p[0]] == C_BLANK:
                p += 1
            if p == end:
                break
            c = CLS[p[0]]
            if c == C_NL:
                p += 1
                line += 1
                nl += 1
                break
            if c == C_HASH:
                p = _comment_end(p, end)
                if p < end and p[0] == 0:
                    return _fail(st, E_NUL, 0, line, buf, p, p, 0, 0)
                if p < end:
                    p += 1
                    line += 1
                    nl += 1
                break
            if c == C_NUL:
                return _fail(st, E_NUL, 0, line, buf, p, p, 0, 0)
            tok = p

            if first:
                first = False
                # "qid:N" is only meaningful right after the label; skip it after validation.
                if (end - p >= 4 and p[0] == b'q' and p[1] == b'i' and p[2] == b'd'
                        and p[3] == b':'):
                    p += 4
                    q = p
                    while p < end and <unsigned int>p[0] - 48u <= 9u:
                        p += 1
                    if p == q or (p < end and CLS[p[0]] != C_BLANK and CLS[p[0]] != C_NL
                                  and CLS[p[0]] != C_HASH):
                        return _fail(st, E_QID, 0, line, buf, tok, _token_end(tok, end), 0, 0)
                    continue

            # index: plain decimal digits, then ':'
            idx = 0
            q = p
            while p < end:
                d = <unsigned int>p[0] - 48u
                if d > 9u:
                    break
                if idx <= OK_INT32_MAX:       # stop growing once too large: no overflow
                    idx = idx * 10 + d
                p += 1
            if p == q or p == end or p[0] != b':':
                return _fail(st, E_INDEX, 0, line, buf, tok, _token_end(tok, end), 0, 0)
            if idx > OK_INT32_MAX:
                return _fail(st, E_INDEX_RANGE, 0, line, buf, tok, p, 0, 0)
            if idx == 0:
                return _fail(st, E_INDEX_ZERO, 0, line, buf, tok, p, 0, 0)
            if idx <= prev:
                return _fail(st, E_NOT_INCREASING, 0, line, buf, tok, p, idx, prev)
            if n_features > 0 and idx > n_features:
                return _fail(st, E_INDEX_EXCEEDS, 0, line, buf, tok, p, idx, n_features)
            p += 1

            rc = _scan_number(p, end, &q, &v)
            if rc != NUM_OK:
                return _fail(st, E_VALUE, rc, line, buf, p, _token_end(p, end), idx, 0)
            if o.nnz == o.nnz_cap:
                if _grow_nnz(o) != 0:
                    return _fail(st, E_NOMEM, 0, line, buf, p, p, 0, 0)
                data32 = <float *>o.data
                data64 = <double *>o.data
            if f32:
                # Same double rounding as sklearn: decimal -> double -> float32.
                fv = <float>v
                if isinf(fv):
                    return _fail(st, E_FLOAT32, 0, line, buf, p, q, idx, 0)
                data32[o.nnz] = fv
            else:
                data64[o.nnz] = v
            o.indices[o.nnz] = <int32_t>(idx - 1)
            o.nnz += 1
            prev = idx
            p = q

        # indices are strictly increasing, so the last one is the row's largest
        if prev > maxi:
            maxi = prev
        o.rows += 1
        o.indptr[o.rows] = o.nnz
        if max_rows > 0 and o.rows >= max_rows:
            break

    st.line = line
    st.n_newlines = nl
    st.max_index = maxi
    return p - buf


cdef void _capsule_free(object capsule) noexcept:
    free(PyCapsule_GetPointer(capsule, NULL))


cdef object _owning_array(void *ptr, Py_ssize_t n, Py_ssize_t elsize, int typenum):
    """Wrap a malloc'd buffer in an ndarray that frees it (no copy of the parsed data).

    On failure the buffer is freed here, so the caller never frees it after this call.
    """
    cdef cnp.npy_intp dims = n
    cdef void *shrunk
    cdef cnp.ndarray arr
    # Give back the spare capacity of the geometric growth (at least one byte: realloc(p, 0)
    # may free).
    shrunk = realloc(ptr, n * elsize if n > 0 else 1)
    if shrunk != NULL:
        ptr = shrunk
    try:
        capsule = PyCapsule_New(ptr, NULL, _capsule_free)
    except BaseException:
        free(ptr)
        raise
    # From here the capsule owns ptr.
    arr = cnp.PyArray_SimpleNewFromData(1, &dims, typenum, ptr)
    cnp.set_array_base(arr, capsule)
    return arr


cdef void _free_out(Out *o) noexcept:
    free(o.data)
    free(o.indices)
    free(o.indptr)
    free(o.labels)
    o.data = NULL
    o.indices = NULL
    o.indptr = NULL
    o.labels = NULL


class ParseError(ValueError):
    """A malformed line found by :func:`parse_libsvm` (the public wrapper adds the path).

    Attributes
    ----------
    line : int or None
        1-based line number.
    reason : str
        What is wrong with the line.
    """

    def __init__(self, line, reason):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


_NONFINITE_WORDS = (b"nan", b"inf", b"infinity")


def _show(tok):
    """Printable, bounded form of an offending token for an error message."""
    text = tok[:40].decode("utf-8", "backslashreplace")
    if len(tok) > 40:
        text += "..."
    return repr(text)


def _number_problem(tok, rc, what, where):
    """Reason for a bad label or value token (``where`` says which feature, for values)."""
    if rc == NUM_NONFINITE or tok.lower().lstrip(b"+-") in _NONFINITE_WORDS:
        return f"{what} {_show(tok)}{where} is not finite (NaN and infinity are not allowed)"
    return f"invalid {what} {_show(tok)}{where}: not a decimal number"


cdef object _raise_error(const unsigned char[::1] buf, State *st):
    """Raise ParseError (or MemoryError) for the failure recorded in st."""
    cdef Py_ssize_t a = st.tok_a
    cdef Py_ssize_t b = st.tok_b
    tok = bytes(buf[a:b])
    code = st.err
    if code == E_NOMEM:
        raise MemoryError("out of memory while parsing LIBSVM data")
    # A token cut short by a NUL byte is reported as binary input, not as a bad token.
    if code == E_NUL or st.rc == NUM_NUL or (
            code in (E_LABEL, E_VALUE, E_QID, E_INDEX) and b < buf.shape[0] and buf[b] == 0):
        reason = "NUL byte in input (binary data or UTF-16 text?)"
    elif code == E_LABEL:
        reason = _number_problem(tok, st.rc, "label", "")
    elif code == E_VALUE:
        reason = _number_problem(tok, st.rc, "value", f" for feature {st.aux1}")
    elif code == E_QID:
        reason = f"invalid query id {_show(tok)}: expected qid:<non-negative integer>"
    elif code == E_INDEX:
        head, colon, _ = tok.partition(b":")
        if not colon:
            reason = f"feature {_show(tok)} has no ':' (expected index:value)"
        elif head[:1] == b"-" and head[1:].isdigit():
            reason = f"feature index {_show(head)} is not positive (indices are 1-based)"
        else:
            reason = f"feature index {_show(head)} is not a plain decimal integer"
    elif code == E_INDEX_RANGE:
        reason = f"feature index {_show(tok)} is too large (does not fit in a 32-bit integer)"
    elif code == E_INDEX_ZERO:
        reason = f"feature index {_show(tok)} is not positive (indices are 1-based)"
    elif code == E_NOT_INCREASING:
        reason = (f"feature index {st.aux1} is not greater than the previous index {st.aux2} "
                  f"(indices must be strictly increasing)")
    elif code == E_INDEX_EXCEEDS:
        reason = f"feature index {st.aux1} exceeds n_features={st.aux2}"
    elif code == E_FLOAT32:
        reason = f"value {_show(tok)} for feature {st.aux1} overflows float32"
    else:
        reason = f"parse error (code {code})"
    raise ParseError(st.err_line, reason)


def parse_libsvm(const unsigned char[::1] buf, Py_ssize_t start=0, Py_ssize_t first_line=1,
                 bint final=True, Py_ssize_t n_features=0, bint float32=False,
                 Py_ssize_t max_rows=0):
    """Parse LIBSVM text in ``buf[start:]`` into CSR arrays.

    Parameters
    ----------
    buf : bytes-like
        C-contiguous buffer of bytes (``bytes``, ``bytearray``, ``memoryview``, ``mmap``).
    start : int, default=0
        Offset at which parsing starts (must be the start of a line).
    first_line : int, default=1
        1-based line number of the line starting at ``start`` (for error messages).
    final : bool, default=True
        True when ``buf`` holds the end of the input: a last line without ``\\n`` is parsed.
        False when more data follows: parsing stops after the last ``\\n`` and the caller
        keeps the unconsumed bytes for the next call.
    n_features : int, default=0
        When positive, an index larger than this is an error.
    float32 : bool, default=False
        Store values as float32 (converted from the correctly rounded double, as sklearn
        does); a value outside the float32 range is an error.
    max_rows : int, default=0
        When positive, stop after this many rows (right after the line that ends the last one).

    Returns
    -------
    data : ndarray of float64 or float32
    indices : ndarray of int32
        0-based column indices, strictly increasing within each row.
    indptr : ndarray of int64
        Row pointers, ``len(labels) + 1`` entries starting at 0.
    labels : ndarray of float64
    max_index : int
        Largest 1-based feature index seen (0 when there is none).
    consumed : int
        Bytes consumed from ``start`` (always up to the end of a complete line, or the whole
        rest when ``final``).
    n_lines : int
        Newlines consumed (``first_line + n_lines`` is the line number at ``start + consumed``).

    Raises
    ------
    ParseError
        On the first malformed line, with its 1-based line number.
    MemoryError
        When the output buffers cannot grow.
    """
    cdef Py_ssize_t n = buf.shape[0]
    cdef Py_ssize_t stop = n
    cdef Py_ssize_t pos
    cdef Py_ssize_t span
    cdef const unsigned char *base
    cdef Out o
    cdef State st
    cdef int data_type = cnp.NPY_FLOAT32 if float32 else cnp.NPY_FLOAT64
    cdef void *ptr

    if start < 0 or start > n:
        raise ValueError(f"start={start} is outside the buffer (length {n})")
    if first_line < 1:
        raise ValueError("first_line must be >= 1")
    if n_features < 0 or max_rows < 0:
        raise ValueError("n_features and max_rows must be >= 0")

    if n > 0:
        base = &buf[0]
    else:
        base = <const unsigned char *>EMPTY   # never dereferenced: start == stop == 0
    if not final:
        # Only complete lines: everything after the last '\n' waits for more data.
        stop = n
        while stop > start and base[stop - 1] != b'\n':
            stop -= 1

    o.elsize = sizeof(float) if float32 else sizeof(double)
    span = stop - start
    # Initial capacities from the byte count (LIBSVM values take >= ~4 bytes each); they only
    # need to be in the right range since the buffers grow geometrically.
    o.nnz_cap = span // 8 + 64
    o.rows_cap = span // 64 + 64
    if max_rows > 0:
        o.rows_cap = min(o.rows_cap, max_rows)
        o.nnz_cap = min(o.nnz_cap, 64 * max_rows + 64)
    o.nnz = 0
    o.rows = 0
    o.data = <char *>malloc(o.nnz_cap * o.elsize)
    o.indices = <int32_t *>malloc(o.nnz_cap * sizeof(int32_t))
    o.labels = <double *>malloc(o.rows_cap * sizeof(double))
    o.indptr = <int64_t *>malloc((o.rows_cap + 1) * sizeof(int64_t))
    if o.data == NULL or o.indices == NULL or o.labels == NULL or o.indptr == NULL:
        _free_out(&o)
        raise MemoryError("out of memory while parsing LIBSVM data")
    o.indptr[0] = 0

    st.line = first_line
    st.n_newlines = 0
    st.max_index = 0
    st.err = E_NONE
    st.rc = NUM_OK
    with nogil:
        pos = _parse_region(base, start, stop, n_features, float32, max_rows, &o, &st)
    if pos < 0:
        _free_out(&o)
        _raise_error(buf, &st)

    # Hand the buffers to numpy without copying.  Each pointer is detached from o before the
    # call that takes it over (which frees it itself on failure); the finally frees the rest.
    try:
        ptr = <void *>o.data
        o.data = NULL
        data = _owning_array(ptr, o.nnz, o.elsize, data_type)
        ptr = <void *>o.indices
        o.indices = NULL
        indices = _owning_array(ptr, o.nnz, sizeof(int32_t), cnp.NPY_INT32)
        ptr = <void *>o.indptr
        o.indptr = NULL
        indptr = _owning_array(ptr, o.rows + 1, sizeof(int64_t), cnp.NPY_INT64)
        ptr = <void *>o.labels
        o.labels = NULL
        labels = _owning_array(ptr, o.rows, sizeof(double), cnp.NPY_FLOAT64)
    finally:
        _free_out(&o)
    return data, indices, indptr, labels, int(st.max_index), pos - start, st.n_newlines
