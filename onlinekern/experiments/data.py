"""The data sets of a sweep: loaded once, identified by content, shared with the workers.

A data argument is a LIBSVM path, ``"a+b"`` (rows of the files concatenated in order),
``"NAME=a+b"``, a list of paths, an ``(X, y)`` pair or a :class:`DataSet`.  A data set's identity
(sha256 of the files' bytes or of the arrays, preprocessing, tuning subset) enters every cell
key, so a results file never mixes runs on different data under one key.
"""
import errno
import hashlib
import os
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from onlinekern.experiments.grids import subset_indices
from onlinekern.experiments.store import sha256_file
from onlinekern.io import load_libsvm
from onlinekern.preprocessing import FeatureScaler, TargetScaler

__all__ = ["DataSet", "NoPairsError", "dataset_from", "datasets_from", "display_name", "find_file",
           "parse_data_spec", "row_sample", "subset_of"]


@dataclass
class DataSet:
    """One data set of a sweep: arrays shared with the workers plus its identity.

    ``X`` is CSR (float64 data, int32 indices and indptr when they fit) or a C-contiguous
    float64 array; ``identity`` (sha256, preprocessing, subset) enters every cell key.
    """

    name: str
    X: object
    y: np.ndarray
    files: list
    sha256: str
    preprocess: dict
    n_rows_full: int
    subset: object = None
    _args: object = field(default=None, repr=False)

    @property
    def n_rows(self):
        """Rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_features(self):
        """Columns of ``X``."""
        return int(self.X.shape[1])

    @property
    def identity(self):
        """What enters the cell key: sha256, preprocessing and tuning subset."""
        return {"sha256": self.sha256, "preprocess": self.preprocess, "subset": self.subset}

    def worker_args(self):
        """The positional arguments of a task: the same array objects every time, so joblib
        dumps (loky) or scatters (dask) each of them once per phase."""
        if self._args is None:
            if sp.issparse(self.X):
                self._args = ("csr", self.X.shape, self.X.data, self.X.indices, self.X.indptr, self.y)
            else:
                self._args = ("dense", self.X.shape, self.X, None, None, self.y)
        return self._args

    def record_fields(self):
        """The data fields of a record: name, files, sha256, shape and preprocessing."""
        return {"data": self.name, "data_files": self.files, "data_sha256": self.sha256,
                "n_rows": self.n_rows, "n_features": self.n_features,
                "preprocess": dict(self.preprocess, subset=self.subset)}


def _canonical_csr(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.nnz <= np.iinfo(np.int32).max and X.indptr.dtype != np.int32:
        # int32 indices and indptr: scipy keeps them as they are and the learner loop reads
        # the indices without a converted copy
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                          shape=X.shape, copy=False)
        X.has_sorted_indices = True
    return X


def _hash_arrays(X, y):
    h = hashlib.sha256(b"onlinekern-arrays-v1\n")
    if sp.issparse(X):
        h.update(f"csr {X.shape[0]} {X.shape[1]}\n".encode())
        for a in (X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)):
            h.update(np.ascontiguousarray(a).tobytes())
    else:
        h.update(f"dense {X.shape[0]} {X.shape[1]}\n".encode())
        h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    y = np.asarray(y)
    h.update(f"y {y.dtype.str}\n".encode())
    h.update(np.ascontiguousarray(y).tobytes() if y.dtype != object else repr(y.tolist()).encode())
    return h.hexdigest()


_SHA_CACHE = {}


def _file_sha(path):
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        _SHA_CACHE[key] = sha256_file(path)
    return _SHA_CACHE[key]


def _files_sha(paths):
    """sha256 of the files' bytes in order (``cat a b | sha256sum``); one file: its own sha256."""
    if len(paths) == 1:
        return _file_sha(paths[0])
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


_STRIP_EXT = (".xz", ".gz", ".bz2", ".libsvm", ".svm")


def display_name(path):
    """``data/ijcnn1.t.xz`` -> ``ijcnn1.t``: the base name without compression / LIBSVM suffixes."""
    name = os.path.basename(path)
    changed = True
    while changed:
        changed = False
        for ext in _STRIP_EXT:
            if name.lower().endswith(ext) and len(name) > len(ext):
                name = name[:-len(ext)]
                changed = True
    return name


def _missing(path):
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)


class NoPairsError(ValueError):
    """No algorithm of the sweep supports the task of any of its data sets."""


def parse_data_spec(spec):
    """``(name, [paths])`` of a data argument: ``FILE``, ``FILE+FILE`` (rows concatenated in
    order) or ``NAME=FILE[+FILE...]``."""
    text = os.fspath(spec)
    if os.path.exists(text):
        return display_name(text), [text]
    name = None
    head, sep, rest = text.partition("=")
    if sep and head and os.sep not in head and "+" not in head:
        name, text = head, rest
        if os.path.exists(text):
            return name, [text]
    paths = [p for p in text.split("+") if p]
    if not paths:
        raise ValueError(f"empty data specification {spec!r}")
    for p in paths:
        if not os.path.exists(p):
            raise _missing(p)
    return name or "+".join(display_name(p) for p in paths), paths


def _load_files(paths):
    Xs, ys = [], []
    for p in paths:
        X, y = load_libsvm(p)
        Xs.append(X)
        ys.append(y)
    d = max(X.shape[1] for X in Xs)
    Xs = [sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d)) for X in Xs]
    X = Xs[0] if len(Xs) == 1 else sp.vstack(Xs, format="csr")
    return X, np.concatenate(ys)


def find_file(data_dir, name):
    """The path of data file ``name`` in folder ``data_dir``: ``NAME`` itself or ``NAME.xz``."""
    base = os.path.join(os.fspath(data_dir), name)
    for cand in (base, base + ".xz"):
        if os.path.isfile(cand):
            return cand
    raise FileNotFoundError(2, f"not found (looked for {base} and {base}.xz; see --data-dir)", base)


def dataset_from(spec, scale=False, scale_target=False, name=None):
    """A DataSet from a path / ``"a+b"`` / ``NAME=...`` string, a list of paths (concatenated),
    an ``(X, y)`` pair, or an existing DataSet.

    ``scale`` min-max scales the features to [0, 1]; ``scale_target`` True min-max scales
    regression targets to [0, 1], ``"max"`` divides them by their maximum (the RRF reference
    code's casp convention: targets in [0, 1] when the smallest is 0)."""
    if isinstance(spec, DataSet):
        return spec
    if isinstance(scale_target, str) and scale_target != "max":
        raise ValueError(f"scale_target must be true, false or 'max', got {scale_target!r}")
    if isinstance(spec, tuple) and len(spec) == 2 and not isinstance(spec[0], (str, os.PathLike)):
        X, y = spec
        X = _canonical_csr(X) if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"X has {X.shape[0]} rows but y has shape {y.shape}")
        sha = _hash_arrays(X, y)
        files = []
        name = name or f"arrays-{sha[:8]}"
    else:
        if isinstance(spec, (list, tuple)):
            paths = [os.fspath(p) for p in spec]
            for p in paths:
                if not os.path.exists(p):
                    raise _missing(p)
            auto = "+".join(display_name(p) for p in paths)
        else:
            auto, paths = parse_data_spec(spec)
        X, y = _load_files(paths)
        X = _canonical_csr(X)
        sha = _files_sha(paths)
        files = [{"path": p, "sha256": _file_sha(p)} for p in paths]
        name = name or auto
    if scale:
        X = FeatureScaler(0.0, 1.0).fit_transform(X)
        X = _canonical_csr(X) if sp.issparse(X) else np.ascontiguousarray(X)
    if scale_target == "max":
        y = np.asarray(y, dtype=np.float64)
        y = y / y.max()
    elif scale_target:
        y = TargetScaler(0.0, 1.0).fit_transform(np.asarray(y, dtype=np.float64))
    pre = {"scale": bool(scale), "scale_target": "max" if scale_target == "max" else bool(scale_target)}
    return DataSet(name, X, y, files, sha, pre, int(X.shape[0]))


def datasets_from(data, scale=False, scale_target=False):
    """The ``data`` argument of :func:`onlinekern.sweep` as a list of DataSets."""
    if isinstance(data, dict):
        return [dataset_from(v, scale, scale_target, name=str(k)) for k, v in data.items()]
    if isinstance(data, (str, os.PathLike, DataSet)):
        return [dataset_from(data, scale, scale_target)]
    if isinstance(data, tuple) and len(data) == 2 and not isinstance(data[0], (str, os.PathLike)):
        return [dataset_from(data, scale, scale_target)]
    return [dataset_from(d, scale, scale_target) for d in data]


def subset_of(ds, fraction, seed, permutation=None):
    """The tuning subset of ``ds`` as a DataSet of its own (rows in file order); ``permutation``
    as :func:`~onlinekern.experiments.grids.subset_indices` (it enters the identity when given)."""
    idx = subset_indices(ds.n_rows, fraction, seed, permutation)
    X = ds.X[idx]
    X = _canonical_csr(X) if sp.issparse(X) else np.ascontiguousarray(X)
    sub = {"fraction": float(fraction), "seed": int(seed), "rows": int(len(idx))}
    if permutation is not None:
        sub["permutation"] = int(permutation)
    return DataSet(ds.name, X, np.asarray(ds.y)[idx], ds.files, ds.sha256, ds.preprocess,
                   ds.n_rows_full, sub)


def row_sample(ds, rows, seed, name=None):
    """A data set of its own made of ``rows`` random rows of ``ds`` (in file order).

    The rows are ``subset_indices(n, rows / n, seed)``, the tuning subset's rule; the result is
    identified by its arrays, so its tuning subset and runs are drawn from it afresh.
    """
    sub = subset_of(ds, min(1.0, int(rows) / ds.n_rows), seed)
    return dataset_from((sub.X, sub.y), name=name or f"{ds.name} ({sub.n_rows} rows)")
