"""Write a text-like LIBSVM stream of any length and width (issue 26's wide-data benchmark input).

    python tools/make_text_stream.py text.svm --rows 500000 --columns 1048576 --seed 0

What a row is (every number below is a module constant):

* **Vocabulary**: :data:`VOCABULARY` = 2^20 words, word w (rank w + 1) drawn with probability
  proportional to (w + 1)^-1.1 (Zipf's law, exponent :data:`ZIPF`).
* **Words per row**: a log-uniform whole number of distinct words in [30, 300] (:data:`MIN_WORDS`,
  :data:`MAX_WORDS`): the row's nonzeros.
* **Label**: two hidden topics A and B, each a set of :data:`TOPIC_WORDS` words of ranks
  100-20,000 drawn from the seed, each present in a row with probability 1/2 (then 4-8 of its
  words are in the row); the label is +1 when exactly one topic is present (A XOR B), else -1.
  No linear function of the words separates an XOR of two word groups, a Gaussian kernel can:
  measured by :func:`learnability` (``--check``): held out after 4,000 rows at 2^16 columns, a
  linear SVM errs on 51.8 % and a Gaussian-kernel SVM on 14.2 % (the majority class: 49.8 %).  The
  other words of the row are background, drawn from the Zipf distribution without the topic
  words, until the row has its number of distinct words.
* **Values**: tf-idf-like, (1 + ln tf) * ln(1 / p_w) with tf the word's count among the row's
  draws and p_w its Zipf probability, then the row divided by its Euclidean norm; written with 6
  significant digits.

**Columns and the width N** (``--columns``): word w goes to column ``P(w) + 1`` of the file, P the
permutation of [0, N) keyed by the seed (:class:`harness.ColumnPermutation`) when N >= 2^20 --
one to one, so at 2^20 and 2^24 columns the rows are the same words, values, labels and
nonzeros, only in other columns, and every Gaussian kernel value is the same -- and
``P'(w) mod N`` (P' the permutation of [0, 2^20)) when N < 2^20: the hashing trick, where the words
of a row that collide add up (measured at 2^16 columns: 12 % of the rows lose an entry, 0.12 % of
all entries), so the rows are the same up to those rare collisions.  The words, values and labels do
not depend on N: a run at 2^16, 2^20 and 2^24 columns sees the same stream, and the same number of
nonzeros per row up to the collisions at 2^16.

Streaming: rows are made and written in chunks of 4,096, so memory is one chunk plus the
2^20-entry Zipf table, at any ``--rows``.  The same ``--seed`` gives the same file.
"""
import math
import sys

import numpy as np

import harness as h

VOCABULARY = 1 << 20
ZIPF = 1.1
MIN_WORDS, MAX_WORDS = 30, 300
TOPIC_WORDS = 10
TOPIC_RANKS = (100, 20000)
TOPIC_PRESENT = (4, 8)
CHUNK = 4096


class TextStream:
    """The generator behind the script: :meth:`chunks` yields (cols, values, indptr, labels).

    Parameters
    ----------
    n_columns : int
        Width N of the output (columns are 0-based here, 1-based in the file).
    seed : int
    """

    def __init__(self, n_columns, seed):
        self.n_columns = int(n_columns)
        self.seed = int(seed)
        ranks = np.arange(1, VOCABULARY + 1, dtype=np.float64)
        p = ranks ** -ZIPF
        p /= p.sum()
        self.idf = -np.log(p)
        rng = np.random.default_rng([self.seed, 0])
        topics = rng.choice(np.arange(*TOPIC_RANKS), size=2 * TOPIC_WORDS, replace=False) - 1
        self.topic_a, self.topic_b = np.sort(topics[:TOPIC_WORDS]), np.sort(topics[TOPIC_WORDS:])
        q = p.copy()
        q[topics] = 0.0                       # background words are never topic words
        self.cdf = np.cumsum(q)
        self.cdf /= self.cdf[-1]
        if self.n_columns >= VOCABULARY:
            self.perm = h.ColumnPermutation(self.n_columns, self.seed)
            self.column_of = self.perm
        else:
            self.perm = h.ColumnPermutation(VOCABULARY, self.seed)
            self.column_of = lambda w: self.perm(w) % self.n_columns

    def _background(self, rng, need):
        """For each row r, ``need[r]`` distinct background words and their counts (flat, by row)."""
        R = need.size
        rows_out, words_out, tf_out = [], [], []
        pending = np.arange(R)
        factor = 2.0
        while pending.size:
            lens = np.ceil(need[pending] * factor).astype(np.int64) + 8
            rid = np.repeat(pending, lens)
            w = np.minimum(np.searchsorted(self.cdf, rng.random(rid.size), side="right"), VOCABULARY - 1)
            key = rid * VOCABULARY + w
            uk, first, cnt = np.unique(key, return_index=True, return_counts=True)
            o = np.argsort(first, kind="stable")
            uk, cnt = uk[o], cnt[o]
            urow = uk // VOCABULARY
            # rows are contiguous in the draws, so ordering by first draw keeps them grouped
            change = np.concatenate([[True], urow[1:] != urow[:-1]])
            starts = np.flatnonzero(change)
            counts = np.diff(np.concatenate([starts, [urow.size]]))
            row_ids = urow[starts]
            rank = np.arange(urow.size) - np.repeat(starts, counts)
            keep = rank < need[urow]
            done = np.zeros(R, dtype=bool)
            done[row_ids[counts >= need[row_ids]]] = True
            sel = keep & done[urow]
            rows_out.append(urow[sel])
            words_out.append(uk[sel] % VOCABULARY)
            tf_out.append(cnt[sel])
            pending = pending[~done[pending]]
            factor *= 2.0
        rows = np.concatenate(rows_out)
        o = np.argsort(rows, kind="stable")
        return rows[o], np.concatenate(words_out)[o], np.concatenate(tf_out)[o]

    def chunks(self, n_rows):
        """Yield (columns, values, indptr, labels) of ``CHUNK`` rows at a time, ``n_rows`` in all.

        Columns are 0-based and increasing within each row; the words, values and labels of row i
        depend only on the seed and i // CHUNK (never on N).
        """
        for c0 in range(0, n_rows, CHUNK):
            R = min(CHUNK, n_rows - c0)
            rng = np.random.default_rng([self.seed, 1, c0 // CHUNK])
            n_words = np.floor(np.exp(rng.uniform(math.log(MIN_WORDS), math.log(MAX_WORDS + 1), R))).astype(np.int64)
            n_words = np.clip(n_words, MIN_WORDS, MAX_WORDS)
            has_a, has_b = rng.random(R) < 0.5, rng.random(R) < 0.5
            t_a = np.where(has_a, rng.integers(TOPIC_PRESENT[0], TOPIC_PRESENT[1] + 1, R), 0)
            t_b = np.where(has_b, rng.integers(TOPIC_PRESENT[0], TOPIC_PRESENT[1] + 1, R), 0)
            labels = np.where(has_a ^ has_b, 1, -1)
            # topic words: the first t of a per-row random order of the topic's words
            pa = np.argsort(rng.random((R, TOPIC_WORDS)), axis=1)
            pb = np.argsort(rng.random((R, TOPIC_WORDS)), axis=1)
            ma = np.arange(TOPIC_WORDS)[None, :] < t_a[:, None]
            mb = np.arange(TOPIC_WORDS)[None, :] < t_b[:, None]
            ta_rows, ta_pos = np.nonzero(ma)
            tb_rows, tb_pos = np.nonzero(mb)
            brow, bword, btf = self._background(rng, n_words - t_a - t_b)
            rows = np.concatenate([brow, ta_rows, tb_rows])
            words = np.concatenate([bword, self.topic_a[pa[ta_rows, ta_pos]], self.topic_b[pb[tb_rows, tb_pos]]])
            tf = np.concatenate([btf, np.ones(ta_rows.size + tb_rows.size, dtype=np.int64)])
            vals = (1.0 + np.log(tf)) * self.idf[words]
            cols = self.column_of(words)
            # per row: sort by column, add up colliding words (hashed widths only), normalise
            key = rows * np.int64(self.n_columns) + cols
            uk, inv = np.unique(key, return_inverse=True)
            summed = np.bincount(inv.ravel(), weights=vals, minlength=uk.size)
            urow = uk // self.n_columns
            ucol = uk % self.n_columns
            norms = np.sqrt(np.bincount(urow, weights=summed * summed, minlength=R))
            summed = summed / norms[urow]
            indptr = np.concatenate([[0], np.cumsum(np.bincount(urow, minlength=R))])
            yield ucol, summed, indptr, labels

    def write(self, path, n_rows):
        """Write ``n_rows`` rows to ``path`` (LIBSVM text, 1-based columns); returns the nonzeros."""
        nnz = 0
        with open(path, "w") as f:
            for cols, vals, indptr, labels in self.chunks(n_rows):
                ctext = (cols + 1).tolist()
                vtext = ["%.6g" % v for v in vals.tolist()]
                ip = indptr.tolist()
                lines = []
                for i, lab in enumerate(labels.tolist()):
                    a, b = ip[i], ip[i + 1]
                    lines.append(("+1 " if lab > 0 else "-1 ")
                                 + " ".join([f"{c}:{v}" for c, v in zip(ctext[a:b], vtext[a:b])]) + "\n")
                f.write("".join(lines))
                nnz += int(indptr[-1])
        return nnz


def learnability(n_rows=4000, n_columns=1 << 16, seed=0):
    """Online-free check that the label needs a nonlinear kernel: held-out errors (%) of a linear SVM
    and of a Gaussian-kernel SVM (scikit-learn) trained on ``n_rows`` rows, tested on as many more."""
    import scipy.sparse as sp
    from sklearn.svm import SVC, LinearSVC
    parts = list(TextStream(n_columns, seed).chunks(2 * n_rows))
    X = sp.vstack([sp.csr_matrix((v, c, p), shape=(p.size - 1, n_columns)) for c, v, p, _ in parts]).tocsr()
    y = np.concatenate([lab for *_, lab in parts])
    tr, te = slice(0, n_rows), slice(n_rows, 2 * n_rows)
    lin = LinearSVC(C=1.0).fit(X[tr], y[tr])
    rbf = SVC(C=10.0, gamma=1.0).fit(X[tr], y[tr])
    return {"majority": 100.0 * min(np.mean(y[te] > 0), np.mean(y[te] < 0)),
            "linear": 100.0 * np.mean(lin.predict(X[te]) != y[te]),
            "gaussian": 100.0 * np.mean(rbf.predict(X[te]) != y[te])}


def main(argv=None):
    ap = h.parser(__doc__, repeats=None, data=False, json=False)
    ap.add_argument("output", help="LIBSVM file to write (plain text)")
    ap.add_argument("--rows", type=int, required=True, help="number of rows")
    ap.add_argument("--columns", type=int, default=VOCABULARY, metavar="N",
                    help="width N of the file (default 2^20)")
    ap.add_argument("--seed", type=int, default=0, help="seed of everything (default 0)")
    ap.add_argument("--check", action="store_true",
                    help="print the linear and Gaussian-kernel SVM errors on 4,000 rows and exit")
    ns = ap.parse_args(argv)
    if ns.check:
        print(learnability(n_columns=ns.columns, seed=ns.seed))
        return 0
    if ns.rows < 1 or ns.columns < 1:
        ap.error("--rows and --columns must be positive")
    nnz = TextStream(ns.columns, ns.seed).write(ns.output, ns.rows)
    print(f"{ns.output}: {ns.rows} rows, {ns.columns} columns, {nnz} nonzeros ({nnz / ns.rows:.1f} per row)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
