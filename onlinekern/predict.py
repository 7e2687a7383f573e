"""``python -m onlinekern.predict``: predict a LIBSVM file with a saved model (like LIBSVM's svm-predict).

    python -m onlinekern.predict model.okm test.libsvm
    python -m onlinekern.predict model.okm test.libsvm --output pred.txt --scores

Loads a model written by ``python -m onlinekern.train --model`` (or :func:`onlinekern.save_model`)
without unpickling anything, applies the feature and target scalers that ``train --scale`` /
``--scale-target`` stored in the model, predicts every row of FILE (read in chunks, plain, gzip,
bzip2 or xz) and prints ``accuracy = 97.31% (N/M)`` (classification) or ``RMSE = 0.1234 (M
examples)`` (regression, in the file's units; with a target scaler the RMSE on scaled targets, the
number ``train`` reports, follows).  With ``--output`` one prediction per line is written,
atomically, followed with ``--scores`` by the decision value(s) of the model (binary: f(x);
multiclass: one score per class in the order of the model's classes; regression: the raw model
output, on the scaled targets if the model was trained with ``--scale-target``).  Numbers are
written with 17 significant digits, so they round-trip exactly.

A row whose label is not one of the model's classes counts as a mistake (a warning says how many).

Exit status: 0 success, 1 data problem (unreadable, corrupt or foreign model file, malformed data
file, more features in FILE than the model has), 2 usage error, 130 interrupted.
"""
import argparse
import sys

import numpy as np
import scipy.sparse as sp

import onlinekern
from onlinekern import cli
from onlinekern.cli import DataError, UsageError
from onlinekern.io import stream_libsvm
from onlinekern.io.atomic import atomic_write
from onlinekern.io.model import ModelFormatError, load_model
from onlinekern.preprocessing import TargetScaler, scaler_from_state

PROG = "onlinekern.predict"
USAGE = "python -m onlinekern.predict MODEL FILE [--output PRED.txt] [--scores]"


def main(argv=None):
    """Entry point of ``python -m onlinekern.predict`` / ``onlinekern-predict``; returns the exit code."""
    return cli.run_tool(PROG, _main, argv)


def _positive_int(text):
    v = cli.parse_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def build_parser():
    p = cli.Parser(prog=PROG, usage=USAGE, description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                   epilog="exit status: 0 ok, 1 data error, 2 usage error, 130 interrupted.",
                   formatter_class=cli.HelpFormatter, allow_abbrev=False)
    p.add_argument("model", metavar="MODEL", help="model file written by onlinekern.train --model")
    p.add_argument("file", metavar="FILE", help="data to predict, LIBSVM/svmlight text (plain, gzip, bzip2 or xz)")
    p.add_argument("-o", "--output", metavar="PRED", help="write one prediction per line here (atomically)")
    p.add_argument("--scores", action="store_true",
                   help="with --output: the decision value(s) after each prediction")
    p.add_argument("--chunk-rows", type=_positive_int, default=65536, metavar="N",
                   help="rows read and predicted at a time (default: 65536)")
    p.add_argument("-q", "--quiet", action="store_true", help="no warnings")
    p.add_argument("--version", action="version", version=f"onlinekern {onlinekern.__version__}")
    return p


def _scalers(extra, path, n_features):
    """(FeatureScaler, MaxAbsScaler or None, TargetScaler or None) from a model's ``extra`` dict."""
    extra = extra if isinstance(extra, dict) else {}
    fs = ts = None
    try:
        if extra.get("feature_scaler") is not None:
            fs = scaler_from_state(extra["feature_scaler"])
            if fs.n_features_in_ != n_features:
                raise ValueError(f"the feature scaler has {fs.n_features_in_} features, the model {n_features}")
        if extra.get("target_scaler") is not None:
            ts = TargetScaler.from_state(extra["target_scaler"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFormatError(path, f"invalid scaler in the model ({exc})") from None
    return fs, ts


def _fmt(values):
    """Numbers with 17 significant digits (exact round trip; integers print without a point)."""
    return [format(float(v), ".17g") for v in values]


def _main(argv):
    argv = list(sys.argv[1:] if argv is None else argv)
    ns = build_parser().parse_args(argv)
    if ns.scores and not ns.output:
        raise UsageError("--scores needs --output (the scores are written to the prediction file)")
    if ns.output:
        cli.check_writable(ns.output, "predictions")
    try:
        learner, extra = load_model(ns.model, return_extra=True)
    except ModelFormatError as exc:
        raise DataError(str(exc)) from None
    nf = int(learner.n_features_in_)
    try:
        fs, ts = _scalers(extra, ns.model, nf)
    except ModelFormatError as exc:
        raise DataError(str(exc)) from None
    task = learner.task_
    classes = None if task == "regression" else np.asarray(learner.classes_)

    n = correct = unknown = 0
    sq = sq_scaled = 0.0
    lines = [] if ns.output else None
    for Xc, yc in stream_libsvm(ns.file, ns.chunk_rows):
        m = Xc.shape[0]
        if m == 0:
            continue
        if Xc.shape[1] > nf:
            raise DataError(f"{ns.file}: feature index {Xc.shape[1]} (row ≤ {n + m}) is beyond the "
                            f"model's {nf} features; was the model trained on other data?")
        if Xc.shape[1] < nf:
            Xc = sp.csr_matrix((Xc.data, Xc.indices, Xc.indptr), shape=(m, nf))
        if fs is not None:
            Xc = fs.transform(Xc)
        # a regressor has no decision_function (scikit-learn's rule): its prediction is the score
        scores = learner.predict(Xc) if task == "regression" else learner.decision_function(Xc)
        if task == "regression":
            raw = np.asarray(scores, dtype=np.float64)
            pred = ts.inverse_transform(raw) if ts is not None else raw
            sq += float(np.sum((pred - yc) ** 2))
            if ts is not None:
                sq_scaled += float(np.sum((raw - ts.transform(yc)) ** 2))
        else:
            if task == "binary":
                pred = classes[(scores >= 0).astype(np.intp)]
            else:
                pred = classes[np.argmax(scores, axis=1)]
            correct += int(np.sum(pred == yc))
            unknown += int(np.sum(~np.isin(yc, classes)))
        n += m
        if lines is not None:
            cols = [_fmt(pred)]
            if ns.scores:
                s2 = np.asarray(scores).reshape(m, -1)
                cols += [_fmt(s2[:, c]) for c in range(s2.shape[1])]
            lines.append("".join(" ".join(row) + "\n" for row in zip(*cols)))
    if n == 0:
        raise DataError(f"{ns.file}: no examples")
    if unknown and not ns.quiet:
        print(f"{PROG}: warning: {unknown} rows of {ns.file} have labels the model does not know "
              f"(classes {', '.join(_fmt(classes))}); they count as mistakes", file=sys.stderr)
    if lines is not None:
        atomic_write(ns.output, "".join(lines))
    if task == "regression":
        line = f"RMSE = {np.sqrt(sq / n):.6g} ({n} examples)"
        if ts is not None:
            line += f"; RMSE on targets scaled to [{ts.lower:g}, {ts.upper:g}] = {np.sqrt(sq_scaled / n):.6g}"
    else:
        line = f"accuracy = {100.0 * correct / n:.2f}% ({correct}/{n})"
    print(line, flush=True)
    return cli.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
