"""``python -m onlinekern.sweep``: the sweep command line.

    python -m onlinekern.sweep -a fogd-hinge,ogd-hinge --data ijcnn1 --runs 10 --n-jobs 2 \\
        --out results.jsonl --grid eta=0.3,1,3 -D 1000
    python -m onlinekern.sweep -a fogd-hinge --data ijcnn1+ijcnn1.t --tune --out results.jsonl
    python -m onlinekern.sweep --config ijcai17-table1 --data-dir DIR      # an experiment file
"""
import argparse
import io
import sys
import time

from onlinekern.version import __version__
from onlinekern import cli
from onlinekern.cli import DataError, UsageError
from onlinekern.console import print_list
from onlinekern.experiments.config import (ExperimentError, available_experiments, load_experiment,
                                           run_experiment)
from onlinekern.experiments.data import NoPairsError, datasets_from
from onlinekern.experiments.figures import Figure, override, run_figure
from onlinekern.experiments.grids import default_grid, expand_grid, grid_for, normalise_grid
from onlinekern.experiments.report import format_table
from onlinekern.experiments.runner import BACKENDS, PROG, Session, hms, make_cell
from onlinekern.experiments.specs import (ROWS, algorithm_list, applicable_grid, check_grid_names,
                                          normalise_params, params_for, resolved_params)
from onlinekern.experiments.store import StoreLockedError
from onlinekern.experiments.sweep import run_sweep
from onlinekern.registry import resolve
from onlinekern.seeding import check_seed

__all__ = ["build_parser", "main"]


USAGE = ("python -m onlinekern.sweep -a ALGO[,ALGO...] --data FILE [--data FILE ...] [--runs R] "
         "[--seed S] [--n-jobs N] [--out RESULTS.jsonl] [--grid NAME=VALUES] [--tune] [options]")

DESCRIPTION = """\
Run algorithms × hyper-parameter grid × R random permutations over data sets, in parallel, and
append every finished run to a JSONL file at once: a sweep killed at any moment resumes where it
stopped when the same command is run again.  Run r of every setting presents permutation r under
--seed and uses learner seed SEED + r, exactly as `python -m onlinekern.train --runs R --seed S`
does.  --tune follows the papers' protocol: grid search on a random --subset of the rows
(selecting by online mistake rate or RMSE), then R runs with the chosen setting."""

EPILOG = """\
grid syntax: NAME=V1,V2,... with ranges START:STOP:NUM (linear), START:STOP:log:NUM; several
parameters in one option (eta=1e-3:1e-1:log:5,gamma=0.5,1,2) or repeated --grid options.
Learner options (-D 1000, --eta 0.3, ... as in onlinekern.train) or --param NAME=VALUE fix
parameters; each applies to the algorithms that have it.

examples:
  python -m onlinekern.sweep -a fogd-hinge,ogd-hinge --data ijcnn1 --runs 10 --out r.jsonl
  python -m onlinekern.sweep -a fogd-hinge --data ijcnn1+ijcnn1.t -D 1000 --tune --out r.jsonl
  python -m onlinekern.sweep -a fogd-hinge --data casp --scale --grid n_components=100,400,1600 \\
      --grid-file grid.toml --backend dask --scheduler tcp://10.0.0.1:8786 --out r.jsonl
  python -m onlinekern.report r.jsonl --format markdown --plot curves.png

exit status: 0 ok (failed runs are recorded, not fatal), 1 data error, 2 usage error,
130 interrupted (finished runs are kept: run the same command again to resume)."""


def _positive_int(text):
    v = cli.parse_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _jobs(text):
    v = cli.parse_int(text)
    if v == 0:
        raise argparse.ArgumentTypeError("expected a non-zero integer (-1: all cores)")
    return v


def _fraction(text):
    if text.strip().lower() == "auto":
        return "auto"
    v = cli.parse_float(text)
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1], got {text!r}")
    return v


def build_parser():
    """The argument parser of ``python -m onlinekern.sweep``."""
    p = cli.Parser(prog=PROG, usage=USAGE, description=DESCRIPTION, epilog=EPILOG,
                   formatter_class=cli.HelpFormatter, allow_abbrev=False)
    g = p.add_argument_group("sweep options")
    g.add_argument("-a", "--algorithm", "--algorithms", dest="algorithms", action="append",
                   metavar="ALGO[,ALGO...]", help="algorithms (comma-separated or repeated; see --list)")
    g.add_argument("--data", action="append", metavar="FILE",
                   help="LIBSVM data set; FILE+FILE concatenates rows (ijcnn1+ijcnn1.t), "
                        "NAME=FILE names it; repeat for several data sets")
    g.add_argument("--config", metavar="NAME|FILE",
                   help="run an experiment file (TOML; a shipped name such as ijcai17-table1, see "
                        "--list-configs) instead of -a/--data/--grid/--tune options")
    g.add_argument("--data-dir", metavar="DIR", default=".",
                   help="with --config: where the data files are (NAME or NAME.xz; default: .)")
    g.add_argument("--only", action="append", metavar="NAME",
                   help="with --config: only these data sets of the experiment (-a: only these "
                        "algorithms of it)")
    g.add_argument("--list-configs", action="store_true", help="list the shipped experiment files, then exit")
    g.add_argument("--runs", type=_positive_int, default=None, metavar="R",
                   help="runs per setting, each over its own random permutation (default: 10)")
    g.add_argument("--n-jobs", type=_jobs, default=None, metavar="N",
                   help="parallel workers, one core each (default: all cores; -1 all, -2 all but one)")
    g.add_argument("--out", metavar="RESULTS.jsonl",
                   help="append every finished run to this JSONL file and skip the runs already "
                        "in it (resume)")
    g.add_argument("--grid", action="append", metavar="NAME=VALUES",
                   help="hyper-parameter grid, e.g. eta=0.1,0.3,1 or eta=1e-3:1e-1:log:5,gamma=0.5,1")
    g.add_argument("--grid-file", metavar="FILE", help="grid as JSON or TOML (see onlinekern.experiments.grids)")
    g.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="fix a learner parameter (same as its learner option); the value @rows "
                        "stands for the number of rows of each run's data (--param horizon=@rows); "
                        "with a [figure] --config: set one of its parameters (--param dims=550,600)")
    g.add_argument("--tune", action="store_true",
                   help="grid search on a random subset, then the R runs with the best setting "
                        "(default grid: the IJCAI'17 one in onlinekern's conventions)")
    g.add_argument("--subset", type=_fraction, default=0.1, metavar="F",
                   help="fraction of rows to tune on (default: 0.1); 'auto': the paper's rule, "
                        "0.01 above 500,000 rows, else 0.1")
    g.add_argument("--tune-runs", type=_positive_int, default=1, metavar="T",
                   help="passes per grid point when tuning (default: 1)")
    g.add_argument("--backend", choices=BACKENDS, default=None,
                   help="joblib backend (default: loky processes; dask with --scheduler)")
    g.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler, e.g. tcp://host:8786")
    g.add_argument("--scale", action="store_true", help="min-max scale features to [0, 1]")
    g.add_argument("--scale-target", action="store_true", help="regression: scale targets to [0, 1]")
    g.add_argument("--file-order", action="store_true",
                   help="present every run in file order instead of a permutation")
    g.add_argument("--retry-failed", action="store_true", help="re-run cells recorded as failed")
    g.add_argument("--dry-run", action="store_true",
                   help="print how many runs the sweep has and how many are done, then exit")
    g.add_argument("--list", action="store_true", help="list every algorithm, then exit")
    g.add_argument("--progress", choices=("auto", "bar", "lines", "off"), default="auto",
                   help="progress on stderr (default: a bar on a terminal, else a line every 10 s)")
    g.add_argument("-q", "--quiet", action="store_true", help="print no summary table")
    g.add_argument("--version", action="version", version=f"onlinekern {__version__}")
    cli.add_learner_options(p, title="learner options (fixed parameters; see onlinekern.train -a ALGO --help)")
    return p


def _parse_param_options(items):
    out = {}
    table = cli.learner_options()
    for item in items or []:
        name, sep, value = item.partition("=")
        name = name.strip().lstrip("-").replace("-", "_")
        name = "lam" if name == "lambda" else name
        if not sep or not name:
            raise UsageError(f"--param {item!r}: expected NAME=VALUE")
        opt = table.get(name)
        if opt is None:
            import difflib
            close = difflib.get_close_matches(name, list(table), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise UsageError(f"--param {item!r}: no learner has a parameter {name!r}{hint}")
        parse = opt.parse
        if parse is cli.FLAG:
            parse = cli.parse_auto
        if value.strip() == ROWS:
            out[name] = ROWS
            continue
        try:
            out[name] = parse(value)
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise UsageError(f"--param {name}: {exc}") from None
    return out


def _main(argv):
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    ns = parser.parse_args(argv)
    if ns.list:
        print_list(sys.stdout)
        return cli.EXIT_OK
    if ns.list_configs:
        for name in available_experiments():
            print(f"{name:<24}{load_experiment(name).title}")
        return cli.EXIT_OK
    if ns.config:
        return _run_config(ns)
    if ns.only or ns.data_dir != ".":
        raise UsageError("--data-dir and --only go with --config")
    ns.runs = 10 if ns.runs is None else ns.runs
    if not ns.algorithms:
        raise UsageError("no algorithm given: use -a ALGO[,ALGO...] (see --list)")
    if not ns.data:
        raise UsageError("no data given: use --data FILE")
    try:
        algs = algorithm_list(ns.algorithms)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    given = cli.given_params(ns)
    seed = given.pop("seed", (0, None))[0]
    if "n_threads" in given:
        raise UsageError(f"option {given['n_threads'][1]}: every worker uses one thread; "
                         "use --n-jobs for parallel runs")
    try:
        seed = check_seed(seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    params = {k: v for k, (v, _) in given.items()}
    params.update(_parse_param_options(ns.param))
    classes = {a: resolve(a)[0] for a in algs}
    for k in params:
        users = [a for a in algs if k in classes[a]._get_param_names()]
        if not users:
            raise UsageError(f"parameter {k} applies to none of {', '.join(algs)}")
        if len(users) < len(algs) and not ns.quiet:
            print(f"{PROG}: note: {cli.option_name(k)} applies to {', '.join(users)} only",
                  file=sys.stderr)
    if ns.scheduler and ns.backend not in (None, "dask"):
        raise UsageError("--scheduler needs --backend dask")
    if ns.grid and ns.grid_file:
        raise UsageError("give --grid or --grid-file, not both")
    try:
        params = normalise_params(params, algs)
        grid = normalise_grid(ns.grid_file) if ns.grid_file else (normalise_grid(ns.grid) if ns.grid else None)
        if grid is not None:
            check_grid_names(grid, algs, params)
        for a in algs:
            resolved_params(a, params_for(params, a))
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    if ns.out:
        cli.check_writable(ns.out, "results")
    try:
        datasets = datasets_from(ns.data, ns.scale, ns.scale_target)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    mode = "off" if ns.quiet and ns.progress == "auto" else ns.progress
    try:
        session = Session(out=ns.out, n_jobs=ns.n_jobs, backend=ns.backend, scheduler=ns.scheduler,
                           progress=mode, retry_failed=ns.retry_failed)
    except StoreLockedError as exc:
        raise DataError(str(exc)) from None
    with session:
        if ns.dry_run:
            return _dry_run(session, algs, datasets, ns, seed, grid, params)
        t0 = time.monotonic()
        try:
            records = run_sweep(session, algs, datasets, ns.runs, seed, grid, params, ns.tune,
                                 ns.subset, ns.tune_runs, ns.file_order)
        except KeyboardInterrupt:
            where = f" in {ns.out}" if ns.out else ""
            print(f"{PROG}: interrupted after {session.ran} new runs (kept{where}; run the same "
                  "command again to resume)", file=sys.stderr, flush=True)
            raise
        except NoPairsError as exc:
            raise DataError(str(exc)) from None
        elapsed = time.monotonic() - t0
    finals = [r for r in records if r is not None and r.get("phase") == "run"]
    failed = sum(r.get("status") != "ok" for r in records if r is not None)
    if not ns.quiet:
        print(format_table(finals, "text"))
        line = f"{session.ran} runs done in {hms(elapsed)}"
        if ns.out:
            line += f", {session.skipped} already in {ns.out}"
        if failed:
            line += f", {failed} failed"
        print(line + (f"; results in {ns.out}" if ns.out else ""))
    return cli.EXIT_OK


def _run_config(ns):
    """``--config``: run an experiment file; the options that describe a sweep are refused."""
    try:
        exp = load_experiment(ns.config)
    except ExperimentError as exc:
        raise UsageError(str(exc)) from None
    figure = isinstance(exp, Figure)
    clash = [opt for opt, given in (("--data", ns.data), ("--grid", ns.grid),
                                    ("--grid-file", ns.grid_file), ("--param", ns.param and not figure),
                                    ("--tune", ns.tune), ("--runs", ns.runs is not None),
                                    ("--scale", ns.scale), ("--scale-target", ns.scale_target),
                                    ("--file-order", ns.file_order), ("--only", ns.only and figure),
                                    ("-a", ns.algorithms and figure)) if given]
    clash += [opt for _, (_, opt) in cli.given_params(ns).items()]
    if clash:
        raise UsageError(f"--config describes the whole experiment: drop {', '.join(clash)}")
    if figure:
        try:
            run_figure(override(exp, ns.param), ns.data_dir, out=ns.out, dry_run=ns.dry_run,
                       stream=io.StringIO() if ns.quiet else None)
        except ExperimentError as exc:
            raise UsageError(str(exc)) from None
        except FileNotFoundError as exc:
            raise DataError(f"{exc.filename}: {exc.strerror}") from None
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted (finished points are kept beside {ns.out or exp.out}; run the same "
                  "command again to resume)", file=sys.stderr, flush=True)
            raise
        return cli.EXIT_OK
    out = ns.out or exp.out
    mode = "off" if ns.quiet and ns.progress == "auto" else ns.progress
    t0 = time.monotonic()
    try:
        records = run_experiment(exp, ns.data_dir, out=out, n_jobs=ns.n_jobs, backend=ns.backend,
                                 scheduler=ns.scheduler, progress=mode, retry_failed=ns.retry_failed,
                                 only=ns.only, dry_run=ns.dry_run,
                                 algorithms=[a for x in ns.algorithms or [] for a in x.split(",")
                                             if a.strip()])
    except ExperimentError as exc:
        raise UsageError(str(exc)) from None
    except (StoreLockedError, NoPairsError) as exc:
        raise DataError(str(exc)) from None
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted (finished runs are kept in {out}; run the same command again "
              "to resume)", file=sys.stderr, flush=True)
        raise
    if ns.dry_run:
        return cli.EXIT_OK
    if not ns.quiet:
        finals = [r for r in records if r is not None and r.get("phase") == "run"]
        print(format_table(finals, "text"))
        print(f"{exp.name}: {len(records)} records in {hms(time.monotonic() - t0)}; results in {out}; "
              f"tables and plots: python -m onlinekern.report --config {ns.config}"
              + (f" {out}" if ns.out else ""))
    return cli.EXIT_OK


def _dry_run(session, algs, datasets, ns, seed, grid, params):
    pairs = session.pairs(datasets, algs, params)
    n_tune = n_run = done = 0
    for p in pairs:
        if ns.tune:
            g = grid_for(grid, p.algorithm)
            g = default_grid(p.algorithm, p.dataset.n_rows_full, p.fixed) if g is None else g
            g = applicable_grid(g, p)
            n_tune += len(expand_grid(g)) * ns.tune_runs
            n_run += ns.runs
        else:
            g = applicable_grid(grid_for(grid, p.algorithm) or {}, p)
            pts = expand_grid(g)
            for pt in pts:
                for r in range(ns.runs):
                    c = make_cell(p, {**p.fixed, **pt}, seed, r, "run", ns.file_order)
                    done += session.is_done(c)
            n_run += len(pts) * ns.runs
        print(f"{p.algorithm} on {p.dataset.name}: "
              + (f"{len(expand_grid(g))} grid points × {ns.tune_runs} tuning passes, then " if ns.tune else
                 f"{len(expand_grid(g))} settings × ")
              + f"{ns.runs} runs")
    total = n_tune + n_run
    print(f"{total} runs in all ({n_tune} tuning, {n_run} final)"
          + ("" if ns.tune else f", {done} already done"))
    return cli.EXIT_OK


def main(argv=None):
    """Entry point of ``python -m onlinekern.sweep``; returns the exit code."""
    return cli.run_tool(PROG, _main, argv)
