"""``python -m onlinekern.train``: learn online from a LIBSVM file and report what the papers report.

    python -m onlinekern.train -a fogd-hinge data/sample_classification.libsvm
    python -m onlinekern.train -a ogd-logit train.libsvm --runs 10 --test test.libsvm --json out.json
    python -m onlinekern.train -a fogd --help      # fogd's options with fogd's defaults
    python -m onlinekern.train --list              # every algorithm

Each run presents every example once, predicting it before learning from it (ALGORITHMS.md §1.2)
and reports the online mistake rate (classification, %) or RMSE (regression).  ``--runs R``
repeats the pass over R random permutations (run r: permutation r under ``--seed S``, learner
seed S + r), as the papers do; the default is one run in file order.

``--stream`` reads FILE in chunks of at most ``--chunk-rows`` rows and 2^21 stored values
(onlinekern.io.libsvm.CHUNK_NNZ) instead of loading it, so memory is about two chunks plus the
model (any file size, any width): one run in file order, with exactly the results of the
loaded run.  The class labels, the feature count and the row count (for the curve's checkpoints)
come from a first pass over the file that parses it but keeps nothing but labels and counts;
``--classes 1,-1 --n-features D`` skip that pass (the curve is then recorded at the doubling
counts 1, 2, 4, ... and the last example, since the row count is not known in advance).

Exit status: 0 success, 1 data problem (unreadable or malformed file, labels unsuitable for the
task), 2 usage error (unknown algorithm or option, option the algorithm lacks, invalid value),
130 interrupted.
"""
import argparse
import sys

import numpy as np

import onlinekern
from onlinekern import cli
from onlinekern.cli import DataError, UsageError
from onlinekern.preprocessing import SCALE_RULES, MaxAbsScaler, TargetScaler, feature_scaler
from onlinekern.protocol import default_checkpoints, run_online, run_online_stream, trivial_error
from onlinekern.registry import available_learners, make_learner, resolve
from onlinekern.seeding import check_seed

PROG = "onlinekern.train"
USAGE = "python -m onlinekern.train -a ALGO[-LOSS] FILE [options]"

DESCRIPTION = """\
Learn online from a LIBSVM file: every example is predicted before the learner sees its label
(the protocol of the online kernel learning papers); prints the online mistake rate or RMSE.
Algorithm names are FAMILY or FAMILY-LOSS (fogd, fogd-hinge, ogd-logit, ogd-eps, perceptron,
...; see --list)."""

EPILOG = """\
examples:
  python -m onlinekern.train -a fogd-hinge data/sample_classification.libsvm
  python -m onlinekern.train -a ogd-logit train.libsvm --runs 10 -g median --test test.libsvm
  python -m onlinekern.train -a ogd-eps data/sample_regression.libsvm --scale-target --json out.json
  python -m onlinekern.train -a fogd --help      (fogd's options and defaults)

exit status: 0 ok, 1 data error, 2 usage error, 130 interrupted."""


def main(argv=None):
    """Entry point of ``python -m onlinekern.train`` / ``onlinekern-train``; returns the exit code."""
    return cli.run_tool(PROG, _main, argv)


# ---- command line ------------------------------------------------------------------------------

def _peek_algorithm(argv):
    """The -a/--algorithm value, read before the real parser is built (its help depends on it)."""
    pre = cli.Parser(add_help=False, allow_abbrev=False)
    pre.add_argument("-a", "--algorithm")
    try:
        ns, _ = pre.parse_known_args(argv)
    except UsageError:
        return None
    return ns.algorithm


def _positive_int(text):
    v = cli.parse_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _algorithm_description(name, cls, fixed):
    info = available_learners().get(name.strip().lower())
    tasks = ", ".join(info["tasks"] if info else cls.tasks)
    if cls.losses is not None and "loss" not in (fixed or {}):
        tasks = f"{', '.join(cls.tasks)} (by --loss; the default loss {cls().loss} does {tasks})"
    names = [n for n, i in available_learners().items() if i["class"] is cls]
    doc = cli.docstring_summary(cls)
    lines = [f"{name}: {cls.summary}" if cls.summary else name,
             f"paper: {cls.paper}" if cls.paper else "",
             f"tasks: {tasks}; model size counted in {cls.size_name}",
             f"names: {', '.join(names)}",
             "", doc]
    if fixed:
        lines.insert(3, "fixed by the name: " + ", ".join(f"{k}={v}" for k, v in fixed.items()))
    return "\n".join(l for l in lines if l is not None).strip() + "\n"


def build_parser(cls=None, fixed=None, name=None):
    """The argument parser; with ``cls`` its help shows that algorithm's options and defaults."""
    description = DESCRIPTION if cls is None else _algorithm_description(name, cls, fixed) + "\n" + DESCRIPTION
    p = cli.Parser(prog=PROG, usage=USAGE, description=description, epilog=EPILOG,
                   formatter_class=cli.HelpFormatter, allow_abbrev=False)
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="training data, LIBSVM/svmlight text (plain, gzip, bzip2 or xz)")
    g = p.add_argument_group("run options")
    g.add_argument("-a", "--algorithm", metavar="ALGO[-LOSS]",
                   help="algorithm, e.g. fogd-hinge, ogd-logit, perceptron (see --list)")
    g.add_argument("--list", action="store_true", help="list every algorithm with its tasks and paper, then exit")
    g.add_argument("--runs", type=_positive_int, default=1, metavar="R",
                   help="R runs over random permutations of the data (default: 1 run in file order)")
    g.add_argument("--shuffle", action="store_true",
                   help="permute the data for a single run too (permutation 0 under --seed)")
    g.add_argument("--test", metavar="FILE",
                   help="held-out file: after each run report its mistake rate or RMSE")
    g.add_argument("--scale", action="store_true",
                   help="scale features, learned from the training file (applied to --test too): "
                        "min-max to [0, 1] (implicit zeros included), or for files wider than "
                        "65536 columns divided by their max |x| (zeros kept); see --scale-rule")
    g.add_argument("--scale-rule", choices=SCALE_RULES, metavar="{auto,minmax,maxabs}",
                   help="with --scale (implies it): auto (default: min-max up to 65536 columns, "
                        "max-abs above), minmax, or maxabs (scikit-learn's MaxAbsScaler)")
    g.add_argument("--scale-target", action="store_true",
                   help="regression: scale targets to [0, 1] (the papers report RMSE on scaled targets)")
    g.add_argument("--stream", action="store_true",
                   help="read FILE in chunks instead of loading it (memory: one chunk plus the "
                        "model); one run in file order, same results as without --stream")
    g.add_argument("--chunk-rows", type=_positive_int, default=65536, metavar="N",
                   help="--stream: rows per chunk at most (default: 65536; a chunk also ends at 2^21 stored values)")
    g.add_argument("--classes", metavar="C1,C2,...",
                   help="--stream: every class label of the file (with --n-features: no first pass)")
    g.add_argument("--n-features", type=_positive_int, metavar="D",
                   help="--stream: feature count (a larger index in FILE is an error)")
    g.add_argument("--model", metavar="OUT", help="save the model of the last run (with the scalers)")
    g.add_argument("--json", metavar="OUT", help="write every result as JSON (atomically)")
    g.add_argument("-q", "--quiet", action="store_true", help="print only the final line")
    g.add_argument("--tune", action="store_true",
                   help="the papers' protocol: grid search (gamma, eta, lambda as the learner has them) "
                        "on a random 10%% subset, then the runs with the chosen values")
    g.add_argument("--progress", choices=("auto", "bar", "lines", "off"), default="auto",
                   help="progress display on stderr: a bar on a terminal, else lines at the "
                        "doubling checkpoints (default: auto)")
    g.add_argument("--version", action="version", version=f"onlinekern {onlinekern.__version__}")
    p.algorithm = name
    title = "learner options" if cls is None else f"{name} options (defaults of {cls.__name__})"
    cli.add_learner_options(p, cls, fixed, title=title)
    return p


def print_list(out):
    """Every algorithm name with its tasks, grouped by family with its summary and paper."""
    table = available_learners()
    width = max(len(n) for n in table) + 4
    tw = max(len(", ".join(i["tasks"])) for i in table.values()) + 2
    for family in sorted({i["family"] for i in table.values()}):
        info = table[family]
        cls = info["class"]
        print(f"{family:<{width}}{', '.join(info['tasks']):<{tw}}{cls.summary}", file=out)
        print(f"{'':<{width}}{'':<{tw}}{cls.paper}" + (f"  [{cls.__name__}]"), file=out)
        for name, i in table.items():
            if i["family"] == family and name != family:
                print(f"  {name:<{width - 2}}{', '.join(i['tasks']):<{tw}}loss {i['loss']}", file=out)
    print("\nName an algorithm as FAMILY or FAMILY-LOSS; `-a NAME --help` shows its options.", file=out)


def _usage_short(stream):
    print(f"usage: {USAGE}\n"
          f"       {USAGE.split(' -a')[0]} --list | -a ALGO --help\n"
          f"{PROG}: error: no algorithm and data file given (see --help, --list)", file=stream)


# ---- the run -------------------------------------------------------------------------------------

def _check_outputs(ns):
    """--model and --json must be writable before any work is done (exit 1)."""
    if ns.model:
        cli.check_writable(ns.model, "model")
    if ns.json:
        cli.check_writable(ns.json, "JSON results")


def _format_params(params, gamma_note):
    parts = []
    for k, v in params.items():
        spec = cli.PARAMS.get(k, cli.ParamSpec())
        text = cli.format_value(v, spec.none_means)
        if k == "gamma" and gamma_note:
            text += f" ({gamma_note})"
        parts.append(f"{k}={text}")
    lines, line = [], ""
    for p in parts:
        if line and len(line) + len(p) + 2 > 88:
            lines.append(line)
            line = ""
        line = f"{line}  {p}" if line else p
    lines.append(line)
    return ("\n" + " " * 10).join(lines)


def _test_error(learner, Xt, yt, task):
    pred = learner.predict(Xt)
    if task == "regression":
        return {"rmse": float(np.sqrt(np.mean((np.asarray(pred, dtype=float) - yt) ** 2))),
                "n_examples": int(len(yt))}
    wrong = int(np.sum(pred != yt))
    return {"mistake_rate": 100.0 * wrong / len(yt), "n_mistakes": wrong, "n_examples": int(len(yt))}


def _main(argv):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        _usage_short(sys.stderr)
        return cli.EXIT_USAGE
    out = sys.stdout

    # 1. the command line (usage errors, exit 2)
    name = _peek_algorithm(argv)
    cls = fixed = None
    if name is not None:
        try:
            cls, fixed = resolve(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    parser = build_parser(cls, fixed, name)
    ns = parser.parse_args(argv)
    if ns.list:
        print_list(out)
        return cli.EXIT_OK
    if name is None:
        raise UsageError("no algorithm given: use -a ALGO[-LOSS] (see --list)")
    if ns.file is None:
        raise UsageError("no data file given")
    given = cli.given_params(ns)
    cli.check_applicable(cls, given, name)
    seed = given.pop("seed", (0, None))[0]
    try:
        seed = check_seed(seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    params = {k: v for k, (v, _) in given.items()}
    has_seed = "seed" in cls._get_param_names()
    if has_seed:
        params["seed"] = seed
    try:
        learner = make_learner(name, **params)
        learner._validate_params()
        kind = learner._task_kind()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if ns.scale_target and kind != "regression":
        raise UsageError(f"--scale-target applies to regression only ({name} does classification)")
    if ns.scale_rule is not None:
        ns.scale = True
    runs = ns.runs
    file_order = runs == 1 and not ns.shuffle
    if ns.stream:
        return _main_stream(ns, argv, name, cls, params, learner, kind, seed, has_seed, out)
    for opt in ("classes", "n_features"):
        if getattr(ns, opt) is not None:
            raise UsageError(f"--{opt.replace('_', '-')} applies to --stream only")

    # 2. outputs must be writable before any work is done (exit 1)
    _check_outputs(ns)

    # 3. data (exit 1)
    X, y, Xt, yt, load_seconds = cli.load_files(ns.file, ns.test)
    info = available_learners().get(name.strip().lower())
    tasks = info["tasks"] if info else cls.tasks
    has_task = "task" in cls._get_param_names()
    task = cli.check_labels(y, kind, ns.file, tasks, name, has_task)
    if Xt is not None and kind != "regression":
        unseen = np.setdiff1d(np.unique(yt), np.unique(y))
        if unseen.size and not ns.quiet:
            print(f"{PROG}: warning: {ns.test}: labels not in the training file "
                  f"({', '.join(f'{v:g}' for v in unseen[:5])}) count as mistakes", file=sys.stderr)
    n, d = X.shape
    fscaler = tscaler = None
    if ns.scale:
        fscaler = feature_scaler(ns.scale_rule or "auto", d).fit(X)
        X = fscaler.transform(X)
        if Xt is not None:
            Xt = fscaler.transform(Xt)
    if ns.scale_target:
        tscaler = TargetScaler(0.0, 1.0).fit(y)
        y = tscaler.transform(y)
        if yt is not None:
            yt = tscaler.transform(yt)

    # 4. header
    quiet = ns.quiet
    gamma_note = ""
    if "gamma" in learner.get_params():
        if learner.gamma is None:
            gamma_note = f"= {1.0 / d:.4g}"
        elif learner.gamma == "median":
            gamma_note = "median heuristic, per run"
    if not quiet:
        title = f"{name}: {cls.summary}" if cls.summary else name
        print(title, file=out)
        if cls.paper:
            print(f"  paper   {cls.paper}", file=out)
        stored = X.nnz / max(n * d, 1) if hasattr(X, "nnz") else 1.0
        print(f"  data    {ns.file}: {n} rows × {d} features ({100 * stored:.3g}% stored), "
              f"{cli.describe_labels(y, task)}", file=out)
        if Xt is not None:
            print(f"  test    {ns.test}: {Xt.shape[0]} rows, {cli.describe_labels(yt, task)}", file=out)
        if fscaler is not None or tscaler is not None:
            if isinstance(fscaler, MaxAbsScaler):
                what = ["features divided by their max |x| (zeros kept)"]
                what += ["targets scaled to [0, 1]"] if tscaler is not None else []
                print(f"  scaled  {', '.join(what)}, learned from the training file", file=out)
            else:
                what = [w for w, s in (("features", fscaler), ("targets", tscaler)) if s is not None]
                print(f"  scaled  {' and '.join(what)} to [0, 1] (min/max of the training file)", file=out)
        shown = dict(learner.get_params())
        shown.pop("seed", None)
        print(f"  params  {_format_params(shown, gamma_note)}", file=out)
        order = ("file order" if file_order else
                 "random permutation 0" if runs == 1 else f"random permutations 0..{runs - 1}")
        seeds = f"learner seed {seed}" if runs == 1 else f"learner seeds {seed}..{seed + runs - 1}"
        print(f"  runs    {runs} ({order}), seed {seed}" + (f", {seeds}" if has_seed else ""), file=out)
        out.flush()

    # 5. the papers' protocol: tune on a random subset, then run with the chosen point
    if ns.tune:
        params = _tune(name, params, X, y, seed, quiet, out)

    # 6. the runs
    results = []
    learner_r = None
    cps = default_checkpoints(n)
    for r in range(runs):
        learner_r = make_learner(name, **{**params, **({"seed": seed + r} if has_seed else {})})
        mode = "off" if quiet else ns.progress
        label = f"run {r + 1}/{runs} " if runs > 1 else ""
        progress = cli.Progress(n, task, cls.size_name, sys.stderr, mode=mode, label=label)
        if progress.mode == "lines" and runs > 1:
            print(f"run {r + 1}/{runs}" + (f" (learner seed {seed + r})" if has_seed else ""),
                  file=sys.stderr, flush=True)
        if progress.mode == "lines":
            progress.label = ""
        progress.start()
        try:
            res = run_online(learner_r, X, y, seed=None if file_order else seed, run=r,
                             checkpoints=cps, callback=progress)
        except ValueError as exc:
            raise DataError(f"{ns.file}: {exc}") from None
        finally:
            progress.finish()
        entry = {"run": r, "seed": seed + r if has_seed else seed,
                 "permutation": None if file_order else r}
        entry.update(res.to_dict(with_curve=True))
        if getattr(learner_r, "gamma_", None) is not None:
            entry["gamma_"] = float(learner_r.gamma_)
        entry["chosen"] = learner_r.chosen_params()
        entry["trivial"] = trivial_error(y, task, res.order)
        if r == 0 and not quiet:
            print(f"  chose   {_format_chosen(entry['chosen'])}", file=out, flush=True)
        clips = int(getattr(learner_r, "n_rho_clips_", 0))
        if clips:
            # the overflow guard bound: the run is finite, but say so (README, numerical safety)
            entry["n_rho_clips_"] = clips
            print(f"{PROG}: warning: run {r + 1}: {clips} log-bandwidth updates were clipped by the "
                  f"overflow guard (rho within rho_0 +- ln 1e8); a smaller --eta-gamma may suit the data better",
                  file=sys.stderr)
        if Xt is not None:
            entry["test"] = _test_error(learner_r, Xt, yt, task)
        results.append(entry)
        if runs > 1 and not quiet:
            line = (f"run {r + 1}/{runs}: {cli.error_text(task, [res.error])}, "
                    f"{res.seconds:.3f} s, {res.model_size} {cls.size_name}")
            if "test" in entry:
                line += f", test {cli.error_text(task, [_metric(entry['test'], task)])}"
            print(line, file=out, flush=True)

    # 7. summary, files, final line
    key = "rmse" if task == "regression" else "mistake_rate"
    errors = [e[key] for e in results]
    _warn_trivial(task, errors, [e["trivial"] for e in results], name)
    secs = [e["seconds"] for e in results]
    sizes = [e["model_size"] for e in results]
    test_errors = [_metric(e["test"], task) for e in results] if Xt is not None else None
    summary = {key: _ms(errors), "seconds": _ms(secs), "model_size": _ms(sizes)}
    if test_errors is not None:
        summary["test_" + key] = _ms(test_errors)
    if ns.model:
        extra = {"algorithm": name,
                 "feature_scaler": fscaler.get_state() if fscaler is not None else None,
                 "target_scaler": tscaler.get_state() if tscaler is not None else None}
        onlinekern.save_model(learner_r, ns.model, extra=extra)
        if not quiet:
            print(f"model of run {runs} written to {ns.model}", file=out)
    if ns.json:
        params_out = dict(learner_r.get_params())
        if has_seed:
            params_out["seed"] = seed
        if "gamma" in params_out:
            params_out["gamma_"] = results[0].get("gamma_")
        doc = {
            "tool": PROG, "version": onlinekern.__version__, "command": argv,
            "algorithm": name, "class": cls.__name__, "paper": cls.paper,
            "params": params_out, "size_name": cls.size_name,
            "data": ns.file, "test": ns.test, "n_examples": n, "n_features": d,
            "n_test": None if Xt is None else int(Xt.shape[0]),
            "task": task, "classes": None if task == "regression" else np.unique(y).tolist(),
            "scale": bool(ns.scale), "scale_target": bool(ns.scale_target),
            "scale_rule": None if fscaler is None else
            ("maxabs" if isinstance(fscaler, MaxAbsScaler) else "minmax"),
            "seed": seed, "n_runs": runs, "order": "file" if file_order else "permutation",
            "load_seconds": load_seconds, "runs": results, "summary": summary,
            "summary_std": "sample standard deviation (ddof=1); 0 for one run",
        }
        cli.write_json(ns.json, doc)
        if not quiet:
            print(f"results written to {ns.json}", file=out)
    print(cli.summary_line(task, errors, secs, sizes, cls.size_name, test_errors), file=out, flush=True)
    return cli.EXIT_OK


def _parse_classes(text):
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"--classes: expected comma-separated numbers, got {text!r}") from None
    if len(set(vals)) < 2:
        raise UsageError(f"--classes: classification needs at least 2 distinct labels, got {text!r}")
    return np.unique(vals)


def _main_stream(ns, argv, name, cls, params, learner, kind, seed, has_seed, out):
    """``--stream``: one pass in file order over FILE read in chunks (run_online_stream)."""
    for bad, why in ((ns.runs != 1, "--runs"), (ns.shuffle, "--shuffle"),
                     (ns.scale, "--scale"), (ns.scale_target, "--scale-target"),
                     (ns.test is not None, "--test"), (ns.tune, "--tune")):
        if bad:
            raise UsageError(f"{why} cannot be used with --stream (streaming is one pass in file "
                             "order; scaling needs the min/max of the whole file; predict a "
                             "held-out file with python -m onlinekern.predict and --model)")
    classes = None
    if ns.classes is not None:
        if kind == "regression":
            raise UsageError(f"--classes applies to classification ({name} does regression)")
        classes = _parse_classes(ns.classes)
    _check_outputs(ns)
    quiet = ns.quiet
    single = ns.n_features is not None and (classes is not None or kind == "regression")
    if not quiet:
        title = f"{name}: {cls.summary}" if cls.summary else name
        print(title, file=out)
        if cls.paper:
            print(f"  paper   {cls.paper}", file=out)
        how = ("one pass (classes and feature count given)" if single else
               "a first pass for labels and counts, then the learning pass")
        print(f"  data    {ns.file}: streamed in chunks of {ns.chunk_rows} rows, {how}", file=out)
        shown = dict(learner.get_params())
        shown.pop("seed", None)
        print(f"  params  {_format_params(shown, '')}", file=out)
        print(f"  runs    1 (file order), seed {seed}" + (f", learner seed {seed}" if has_seed else ""), file=out)
        out.flush()
    mode = "off" if quiet else ns.progress
    if mode in ("auto", "bar") and single:
        mode = "lines"            # no row count in advance: no bar
    progress = cli.Progress(0, "regression" if kind == "regression" else "binary",
                            cls.size_name, sys.stderr, mode=mode)
    try:
        if not single and not quiet:
            print("first pass: labels and counts ...", file=sys.stderr, flush=True)
        n_examples = None
        if not single:
            from onlinekern.protocol import scan_libsvm
            n_examples, width, labels = scan_libsvm(ns.file, ns.chunk_rows, ns.n_features)
            if kind != "regression" and classes is None:
                if labels is None:
                    raise DataError(f"{ns.file}: more than 10000 distinct labels: not class labels")
                cli.check_labels(labels, kind, ns.file, cls.tasks, name, "task" in cls._get_param_names())
                classes = labels
            n_features = ns.n_features or width
        else:
            n_features = ns.n_features
        progress.n = n_examples or 0
        progress.start()
        res = run_online_stream(learner, ns.file, chunk_rows=ns.chunk_rows, classes=classes,
                                n_features=n_features,
                                checkpoints="doubling" if single else "default",
                                n_examples=n_examples, callback=progress)
    except ValueError as exc:
        raise DataError(f"{ns.file}: {exc}") from None
    finally:
        progress.finish()
    task = res.task
    if task not in cls.tasks:
        raise DataError(f"{ns.file}: {name} does not support {task} data")
    entry = {"run": 0, "seed": seed, "permutation": None}
    entry.update(res.to_dict(with_curve=True))
    if getattr(learner, "gamma_", None) is not None:
        entry["gamma_"] = float(learner.gamma_)
    entry["chosen"] = learner.chosen_params()
    if not quiet:
        print(f"  chose   {_format_chosen(entry['chosen'])}", file=out, flush=True)
    if ns.model:
        extra = {"algorithm": name, "feature_scaler": None, "target_scaler": None}
        onlinekern.save_model(learner, ns.model, extra=extra)
        if not quiet:
            print(f"model written to {ns.model}", file=out)
    if ns.json:
        params_out = dict(learner.get_params())
        if "gamma" in params_out:
            params_out["gamma_"] = entry.get("gamma_")
        doc = {
            "tool": PROG, "version": onlinekern.__version__, "command": argv,
            "algorithm": name, "class": cls.__name__, "paper": cls.paper,
            "params": params_out, "size_name": cls.size_name,
            "data": ns.file, "test": None, "n_examples": res.n_examples,
            "n_features": int(learner.n_features_in_), "n_test": None, "task": task,
            "classes": None if task == "regression" else learner.classes_.tolist(),
            "scale": False, "scale_target": False, "seed": seed, "n_runs": 1, "order": "file",
            "stream": {"chunk_rows": ns.chunk_rows, "first_pass": not single},
            "load_seconds": None, "runs": [entry],
            "summary": {("rmse" if task == "regression" else "mistake_rate"): _ms([res.error]),
                        "seconds": _ms([res.seconds]), "model_size": _ms([res.model_size])},
            "summary_std": "sample standard deviation (ddof=1); 0 for one run",
        }
        cli.write_json(ns.json, doc)
        if not quiet:
            print(f"results written to {ns.json}", file=out)
    print(cli.summary_line(task, [res.error], [res.seconds], [res.model_size], cls.size_name)
          + f", {res.n_examples} examples", file=out, flush=True)
    return cli.EXIT_OK


def _tune(name, params, X, y, seed, quiet, out):
    """Grid search on a random 10 % subset (onlinekern.tune); the parameters with the chosen point."""
    from onlinekern.experiments.tuning import tune
    fixed = {k: v for k, v in params.items() if k != "seed"}
    try:
        res = tune(name, X, y, params=fixed, subset=0.1, seed=seed, n_jobs=1)
    except ValueError as exc:
        raise DataError(f"--tune: {exc}") from None
    if not quiet:
        point = ", ".join(f"{k}={cli.format_value(v)}" for k, v in res.best_point.items())
        print(f"  tuned   {point}  (grid of {len(res.table)} points on {res.n_subset} random rows, "
              f"subset error {cli.error_text('regression' if res.metric == 'rmse' else 'binary', [res.best_error])})",
              file=out, flush=True)
    return {**params, **res.best_point}


def _format_chosen(chosen):
    """The one line of values the adaptive defaults chose (``chosen_params``)."""
    parts = []
    for k, v in chosen.items():
        if k == "preset":
            continue
        parts.append(f"{k}={cli.format_value(v)}" if not isinstance(v, float) else f"{k}={v:.4g}")
    return (", ".join(parts) or "nothing (every parameter given)") + f"  [preset {chosen['preset']}]"


def _warn_trivial(task, errors, trivial, name):
    """One line on stderr when the runs are no better than the trivial online predictor."""
    err, base = float(np.mean(errors)), float(np.mean(trivial))
    if err < base:
        return
    what = "the running mean of the targets" if task == "regression" else "the most frequent label so far"
    unit = "RMSE" if task == "regression" else "mistake rate"
    fmt = (lambda v: f"{v:.4g}") if task == "regression" else (lambda v: f"{v:.2f}%")
    print(f"{PROG}: warning: {name} did no better than predicting {what} ({unit} {fmt(err)} against "
          f"{fmt(base)}); try --tune (grid search on a random subset), --runs 5 --shuffle to see if the "
          f"file order is to blame, or another learner (--list)", file=sys.stderr)


def _metric(test, task):
    return test["rmse"] if task == "regression" else test["mistake_rate"]


def _ms(values):
    m, s = cli.mean_std(values)
    return {"mean": m, "std": s, "values": list(values)}


if __name__ == "__main__":
    sys.exit(main())
