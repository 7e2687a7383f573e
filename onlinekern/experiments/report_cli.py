"""``python -m onlinekern.report``: tables (text, Markdown, CSV) and plots of sweep results.

    python -m onlinekern.report results.jsonl                      # text table
    python -m onlinekern.report results.jsonl --format markdown    # best error in bold
    python -m onlinekern.report results.jsonl --format csv > table.csv
    python -m onlinekern.report results.jsonl --plot curves.png    # needs matplotlib
    python -m onlinekern.report --config ijcai17-table1            # an experiment file's outputs
"""
import os
import sys

from onlinekern import cli
from onlinekern.cli import DataError, UsageError
from onlinekern.experiments.config import ExperimentError, load_experiment, render_outputs
from onlinekern.experiments.figures import Figure, render_figure
from onlinekern.experiments.report import format_table, load_results, plot

__all__ = ["build_parser", "main"]

PROG = "onlinekern.report"


def build_parser():
    """The argument parser of ``python -m onlinekern.report``."""
    p = cli.Parser(prog=PROG, usage=("python -m onlinekern.report RESULTS.jsonl [...] [options] | "
                                     "--config NAME [RESULTS.jsonl]"),
                   description="Tables (text, Markdown, CSV) and plots of onlinekern.sweep results.",
                   formatter_class=cli.HelpFormatter, allow_abbrev=False)
    p.add_argument("results", nargs="*", metavar="RESULTS.jsonl", help="results files of onlinekern.sweep")
    p.add_argument("--config", metavar="NAME|FILE",
                   help="write the tables and plots an experiment file lists ([[output]]), from its "
                        "results file or the RESULTS given")
    p.add_argument("--output-dir", metavar="DIR", default=".",
                   help="with --config: where the outputs go (default: the working directory)")
    p.add_argument("--format", choices=("text", "markdown", "csv"), default="text",
                   help="table format (default: text)")
    p.add_argument("--plot", metavar="OUT.png",
                   help="draw error, model size and time against examples seen (needs matplotlib); "
                        "with several n_components also OUT-D.png")
    p.add_argument("--phase", choices=("run", "tune", "all"), default="run",
                   help="which records: the runs (default) or the tuning passes")
    p.add_argument("--data", action="append", metavar="NAME", help="only these data sets")
    p.add_argument("-a", "--algorithm", action="append", metavar="ALGO", help="only these algorithms")
    p.add_argument("--no-time", action="store_true", help="leave the time columns out")
    p.add_argument("--dpi", type=int, default=120, help="resolution of the plots (default: 120)")
    return p


def _main(argv):
    ns = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if ns.config:
        return _render_config(ns)
    if not ns.results:
        raise UsageError("no results file given (or --config NAME)")
    for path in ns.results:
        if not os.path.exists(path):
            raise DataError(f"{path}: No such file or directory")
    recs = load_results(ns.results)
    if ns.data:
        recs = [r for r in recs if r.get("data") in ns.data]
    if ns.algorithm:
        wanted = {a.strip().lower() for x in ns.algorithm for a in x.split(",")}
        recs = [r for r in recs if r.get("algorithm") in wanted]
    if not recs:
        raise DataError("no records match")
    phase = None if ns.phase == "all" else ns.phase
    text = format_table(recs, ns.format, phase=phase, time=not ns.no_time)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if ns.plot:
        cli.check_writable(ns.plot, "plot")
        try:
            written = plot(recs, ns.plot, phase=ns.phase if ns.phase != "all" else "run", dpi=ns.dpi)
        except ImportError as exc:
            raise UsageError(str(exc)) from None
        except ValueError as exc:
            raise DataError(str(exc)) from None
        for w in written:
            print(f"plot written to {w}", file=sys.stderr)
    return cli.EXIT_OK


def _render_config(ns):
    try:
        exp = load_experiment(ns.config)
    except ExperimentError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(exp, Figure):
        try:
            written = render_figure(exp, ns.results[0] if ns.results else None, ns.output_dir)
        except OSError as exc:
            raise DataError(f"{exc.filename}: {exc.strerror} (run python -m onlinekern.sweep --config "
                            f"{ns.config} first)") from None
        except ImportError as exc:
            raise UsageError(str(exc)) from None
        except (ExperimentError, ValueError) as exc:
            raise DataError(str(exc)) from None
        for w in written:
            print(f"written {w}", file=sys.stderr)
        return cli.EXIT_OK
    paths = ns.results or [exp.out]
    for path in paths:
        if not os.path.exists(path):
            raise DataError(f"{path}: No such file or directory (run python -m onlinekern.sweep "
                            f"--config {ns.config} first)")
    try:
        written = render_outputs(exp, load_results(paths), results=", ".join(paths),
                                 output_dir=ns.output_dir)
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    except ExperimentError as exc:
        raise DataError(str(exc)) from None
    for w in written:
        print(f"written {w}", file=sys.stderr)
    return cli.EXIT_OK


def main(argv=None):
    """Entry point of ``python -m onlinekern.report``; returns the exit code."""
    return cli.run_tool(PROG, _main, argv)
