"""Scatter a LIBSVM file's columns into N columns by a seeded one-to-one map (issue 26's wide copies).

    python tools/scatter_columns.py a9a a9a.wide --columns 4194304 --seed 0
    python tools/scatter_columns.py a9a.wide a9a.back --columns 4194304 --seed 0 --inverse

Column j (1-based, as in the file) becomes ``P(j - 1) + 1``, with P the permutation of
[0, N) of :class:`harness.ColumnPermutation` keyed by ``--seed``: one to one, so every Gaussian
kernel value, dot product and norm of the wide copy is exactly the one of the input; labels, row
order and the value text are kept (each row's entries are re-sorted by their new column, as
LIBSVM wants).  ``--inverse`` applies the inverse map, so scattering a scattered file back with
the same N and seed gives the input again.  Streaming: memory is one row plus the map of the
columns met so far.  Input may be plain, gzip, bzip2 or xz (by its extension); output is plain
text.  Every index must be at most N.
"""
import bz2
import gzip
import lzma
import sys

import numpy as np

import harness as h

OPENERS = {".xz": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


def open_text(path):
    """A text reader of ``path``, decompressing by its extension."""
    for ext, opener in OPENERS.items():
        if str(path).endswith(ext):
            return opener(path, "rt")
    return open(path)


class ColumnMapper:
    """The 1-based column map of one scatter (or its inverse), cached for the columns met."""

    def __init__(self, n_columns, seed, inverse=False):
        self.perm = h.ColumnPermutation(n_columns, seed)
        self.n = n_columns
        self.step = self.perm.inverse if inverse else self.perm
        self.cache = {}

    def __call__(self, cols):
        """New 1-based columns of the 1-based ``cols`` (list of int)."""
        new = [c for c in cols if c not in self.cache]
        if new:
            arr = np.asarray(sorted(set(new)), dtype=np.int64)
            if arr[0] < 1 or arr[-1] > self.n:
                raise ValueError(f"column index {arr[-1] if arr[-1] > self.n else arr[0]} outside [1, {self.n}]")
            for c, m in zip(arr.tolist(), (self.step(arr - 1) + 1).tolist()):
                self.cache[c] = m
        return [self.cache[c] for c in cols]


def scatter_line(line, mapper):
    """One LIBSVM line with its columns mapped (comment and blank lines unchanged)."""
    body, hash_, comment = line.rstrip("\n").partition("#")
    parts = body.split()
    if not parts:
        return line if line.endswith("\n") else line + "\n"
    label, feats = parts[0], parts[1:]
    pairs = []
    for tok in feats:
        idx, sep, val = tok.partition(":")
        if not sep:
            raise ValueError(f"malformed feature {tok!r}")
        if idx == "qid":
            raise ValueError("qid is not supported")
        pairs.append((int(idx), val))
    cols = mapper([c for c, _ in pairs])
    out = sorted(zip(cols, (v for _, v in pairs)))
    text = " ".join([label] + [f"{c}:{v}" for c, v in out])
    return text + (f" #{comment}" if hash_ else "") + "\n"


def scatter(src, dst, n_columns, seed, inverse=False):
    """Write the scattered copy of the LIBSVM file ``src`` to ``dst``; returns the row count."""
    mapper = ColumnMapper(n_columns, seed, inverse)
    rows = 0
    with open_text(src) as fin, open(dst, "w") as fout:
        for number, line in enumerate(fin, 1):
            try:
                fout.write(scatter_line(line, mapper))
            except ValueError as exc:
                raise SystemExit(f"{src}:{number}: {exc}") from None
            rows += 1
    return rows


def main(argv=None):
    ap = h.parser(__doc__, repeats=None, data=False, json=False)
    ap.add_argument("input", help="LIBSVM file (plain, .gz, .bz2 or .xz)")
    ap.add_argument("output", help="the scattered copy (plain text)")
    ap.add_argument("--columns", type=int, required=True, metavar="N", help="width of the copy")
    ap.add_argument("--seed", type=int, default=0, help="key of the column map (default 0)")
    ap.add_argument("--inverse", action="store_true", help="apply the inverse map (scatter back)")
    ns = ap.parse_args(argv)
    if ns.columns < 1:
        ap.error("--columns must be positive")
    rows = scatter(ns.input, ns.output, ns.columns, ns.seed, ns.inverse)
    print(f"{ns.output}: {rows} rows, columns {'gathered back' if ns.inverse else 'scattered'} "
          f"over {ns.columns} by seed {ns.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
