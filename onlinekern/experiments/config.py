"""Experiments as data: a TOML file names the data sets, algorithms, grids, tuning protocol,
runs, seed and outputs of a paper's table or figure.

    python -m onlinekern.sweep --config ijcai17-table1 --data-dir DIR    # run (resumable)
    python -m onlinekern.report --config ijcai17-table1                  # tables and plots

A file with a ``[figure]`` table instead runs one of the package's experiment programs
(:mod:`~onlinekern.experiments.figures`: the Shrinking Gradient and DSG figures).

A name without a path is one of the files shipped in ``onlinekern/experiments/papers/``
(:func:`available_experiments`).  The format::

    [experiment]
    title = "Nguyen et al. (IJCAI 2017), Table 1"
    seed = 0                  # the root seed: permutations, subsets, learner seeds
    runs = 10                 # runs per setting
    out = "ijcai17-table1.jsonl"   # results file (relative to the working directory)
    file_order = false
    preset = "paper"          # optional: every algorithm's preset ("paper": the papers' settings)

    [tuning]                  # optional: the papers' protocol (omit: every grid point is run)
    subset = "auto"           # fraction of the rows, or "auto" (1 % above 500,000 rows, else 10 %)
    runs = 1                  # passes per grid point
    narrow = 3                # optional: only the middle 3 values of each default-grid parameter
    tie_break = "grid"        # exact ties of the error: first in grid order, or "loss": lowest
                              # mean online loss of the passes (then grid order)
    permutation = 1000        # optional: the subset is the first rows of permutation 1000 of the
                              # data, pass t presents it in permutation 1000 + t

    [data.ijcnn1]             # one table per data set, run in file order
    files = ["ijcnn1", "ijcnn1.t"]   # rows concatenated; NAME or NAME.xz under --data-dir
    scale = false             # min-max scale the features to [0, 1]
    scale_target = false      # regression: scale the targets to [0, 1] ("max": divide by the max)
    rows = 2000               # optional: only this many random rows (quick checks)
    vars = { B = 1000 }       # values of "@B" in the algorithms' parameters for this data set

    [algorithms.nogd-hinge]   # fixed parameters; "@rows" = the rows each run sees
    budget = "@B"
    rank = "@k"
    data = ["ijcnn1"]         # optional: only on these data sets

    [grid."*"]                # optional grids ("*" = every algorithm), as for --grid-file;
    gamma = [0.5, 1, 2]       # with [tuning] and no grid for an algorithm: its default grid
    [grid.bsgd-merge]
    lam = "default"           # "default": this parameter's values in the default grid

    [paper.ijcnn1]            # optional: the paper's numbers, set beside ours by "compare"
    perceptron = { label = "Perceptron", error = "12.85 ± 0.09", seconds = "728" }

    [[output]]                # rendered by python -m onlinekern.report --config
    kind = "table"            # "table" (text, markdown or csv), "compare" (Markdown beside
    format = "markdown"       # [paper]), "paired" (Markdown: run r of one algorithm against
    file = "ijcai17-table1.md"   # run r of another) or "plot" (curves, PNG)
    ddof = 1                  # table, compare, paired: the std's ddof (0: population std)

    [[output]]
    kind = "paired"
    pairs = [["rrf-hinge", "fogd-hinge"]]   # [A, B]: A - B per run, on every data set
    file = "rrf-vs-fogd.md"

Every error names the file and the key (``ijcai17-table1.toml: data.ijcnn1.rows: ...``).
"""
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from onlinekern.experiments.data import dataset_from, find_file, row_sample
from onlinekern.experiments.figures import ExperimentError, load_figure
from onlinekern.experiments.grids import default_grid, expand_grid, grid_for, normalise_grid
from onlinekern.experiments.report import (format_comparison, format_paired, format_table, load_results,
                                           plot)
from onlinekern.experiments.runner import Session, make_cell
from onlinekern.experiments.specs import (ROWS, applicable_grid, canonical_name, check_grid_names,
                                          normalise_params, params_for)
from onlinekern.experiments.sweep import run_sweep
from onlinekern.experiments.tuning import TIE_BREAKS
from onlinekern.base import PRESETS
from onlinekern.io.atomic import atomic_write
from onlinekern.registry import resolve
from onlinekern.seeding import check_seed

__all__ = ["Experiment", "ExperimentError", "available_experiments", "experiment_path",
           "load_data", "load_experiment", "plan", "render_outputs", "run_experiment"]

PAPERS = Path(__file__).resolve().parent / "papers"
_SECTIONS = {"experiment", "tuning", "data", "algorithms", "grid", "paper", "output"}
_EXPERIMENT_KEYS = {"title", "seed", "runs", "out", "file_order", "preset"}
_TUNING_KEYS = {"subset", "runs", "narrow", "tie_break", "permutation"}
_DATA_KEYS = {"files", "scale", "scale_target", "rows", "vars"}
_OUTPUT_KINDS = {"table": {"kind", "format", "file", "phase", "time", "ddof"},
                 "compare": {"kind", "file", "phase", "ddof"},
                 "paired": {"kind", "file", "phase", "pairs", "ddof"},
                 "plot": {"kind", "file", "phase", "dpi"}}
_PAPER_KEYS = {"label", "error", "seconds"}


@dataclass
class Experiment:
    """A validated experiment file.

    Attributes
    ----------
    name, path, title : str
    seed, runs : int
    out : str
        The results file (JSONL).
    file_order : bool
    tuning : dict or None
        ``subset``, ``runs``, ``narrow`` (None: no narrowing), ``tie_break`` and
        ``permutation`` (None: the subset stream), or None without tuning.
    data : dict
        Name -> ``files``, ``scale``, ``scale_target`` (bool or ``"max"``), ``rows``, ``vars``.
    algorithms : dict
        Canonical name -> ``params`` (fixed, with ``@var`` placeholders) and ``data`` (None: all).
    grid : dict or None
        Normalised grid (``{"*" or algorithm: {param: values}}``); ``"default"`` entries kept.
    paper : dict
        Data set -> algorithm -> ``label``, ``error``, ``seconds`` (the paper's, as printed).
    outputs : list of dict
    """

    name: str
    path: str
    title: str
    seed: int
    runs: int
    out: str
    file_order: bool
    tuning: object
    data: dict
    algorithms: dict
    grid: object
    paper: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)


def available_experiments():
    """Names of the experiment files shipped with onlinekern (``papers/*.toml``)."""
    return sorted(p.stem for p in PAPERS.glob("*.toml"))


def experiment_path(name):
    """The file of an experiment: ``name`` itself when it is a file, else a shipped one."""
    if os.path.isfile(os.fspath(name)):
        return Path(name)
    stem = os.fspath(name)
    stem = stem[:-5] if stem.endswith(".toml") else stem
    path = PAPERS / f"{stem}.toml"
    if os.sep in stem or not path.is_file():
        raise ExperimentError(f"{name}: no such experiment file, and not one of the shipped "
                              f"experiments ({', '.join(available_experiments())})")
    return path


def _toml(path):
    try:
        import tomllib
    except ImportError:          # Python < 3.11
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentError(f"{path}: {exc}") from None


def _check_keys(where, table, allowed, fail):
    if not isinstance(table, dict):
        fail(where, f"expected a table, got {type(table).__name__}")
    for k in table:
        if k not in allowed:
            fail(f"{where}.{k}" if where else k, f"unknown key (allowed: {', '.join(sorted(allowed))})")


def _int(v, where, fail, minimum=1):
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        fail(where, f"expected an integer >= {minimum}, got {v!r}")
    return v


def _bool(v, where, fail):
    if not isinstance(v, bool):
        fail(where, f"expected true or false, got {v!r}")
    return v


def load_experiment(name):
    """Read and check an experiment file (a path or a shipped name); an :class:`Experiment`, or
    a :class:`~onlinekern.experiments.figures.Figure` for a file with a ``[figure]`` table."""
    path = experiment_path(name)
    doc = _toml(path)

    def fail(key, msg):
        raise ExperimentError(f"{path.name}: {key}: {msg}")

    if "figure" in doc:
        return load_figure(path, doc, fail)
    _check_keys("", doc, _SECTIONS, fail)
    ex = doc.get("experiment", {})
    _check_keys("experiment", ex, _EXPERIMENT_KEYS, fail)
    try:
        seed = check_seed(ex.get("seed", 0))
    except ValueError as exc:
        fail("experiment.seed", str(exc))
    runs = _int(ex.get("runs", 10), "experiment.runs", fail)
    tuning = None
    if "tuning" in doc:
        t = doc["tuning"]
        _check_keys("tuning", t, _TUNING_KEYS, fail)
        subset = t.get("subset", 0.1)
        if not (subset == "auto" or (isinstance(subset, (int, float)) and not isinstance(subset, bool)
                                     and 0 < subset <= 1)):
            fail("tuning.subset", f"expected a fraction in (0, 1] or \"auto\", got {subset!r}")
        tie_break = t.get("tie_break", "grid")
        if tie_break not in TIE_BREAKS:
            fail("tuning.tie_break", f"expected one of {', '.join(map(repr, TIE_BREAKS))}, got {tie_break!r}")
        tuning = {"subset": subset, "runs": _int(t.get("runs", 1), "tuning.runs", fail),
                  "narrow": _int(t["narrow"], "tuning.narrow", fail) if "narrow" in t else None,
                  "tie_break": tie_break,
                  "permutation": _int(t["permutation"], "tuning.permutation", fail, 0)
                  if "permutation" in t else None}
    data = {}
    for dname, d in (doc.get("data") or {}).items():
        where = f"data.{dname}"
        _check_keys(where, d, _DATA_KEYS, fail)
        files = d.get("files")
        if isinstance(files, str):
            files = [files]
        if not files or not all(isinstance(f, str) and f for f in files):
            fail(f"{where}.files", "expected a list of file names")
        vars_ = d.get("vars", {})
        if not isinstance(vars_, dict):
            fail(f"{where}.vars", "expected a table of values")
        scale_target = d.get("scale_target", False)
        if scale_target != "max":
            scale_target = _bool(scale_target, f"{where}.scale_target", fail)
        data[dname] = {"files": list(files), "scale": _bool(d.get("scale", False), f"{where}.scale", fail),
                       "scale_target": scale_target,
                       "rows": _int(d["rows"], f"{where}.rows", fail, 2) if "rows" in d else None,
                       "vars": dict(vars_)}
    if not data:
        fail("data", "no data set: add a [data.NAME] table")
    algorithms = {}
    for aname, a in (doc.get("algorithms") or {}).items():
        where = f"algorithms.{aname}"
        if not isinstance(a, dict):
            fail(where, "expected a table of fixed parameters")
        try:
            canon = canonical_name(aname)
        except ValueError as exc:
            fail(where, str(exc))
        params = {k: v for k, v in a.items() if k != "data"}
        only = a.get("data")
        if only is not None:
            only = [only] if isinstance(only, str) else list(only)
            for n in only:
                if n not in data:
                    fail(f"{where}.data", f"no data set {n!r} (data sets: {', '.join(data)})")
        for k, v in params.items():
            if isinstance(v, str) and v.startswith("@") and v != ROWS:
                missing = [n for n in (only or data) if v[1:] not in data[n]["vars"]]
                if missing:
                    fail(f"{where}.{k}", f"{v} is not in the vars of data set {missing[0]}")
        algorithms[canon] = {"params": params, "data": only}
    if not algorithms:
        fail("algorithms", "no algorithm: add an [algorithms.NAME] table")
    preset = ex.get("preset")
    if preset is not None:       # every algorithm's preset unless its own table sets one
        if preset not in PRESETS:
            fail("experiment.preset", f"expected one of {', '.join(map(repr, PRESETS))}, got {preset!r}")
        for canon, a in algorithms.items():
            if "preset" in resolve(canon)[0]._get_param_names():
                a["params"].setdefault("preset", preset)
    grid = None
    if "grid" in doc:
        raw = doc["grid"]
        if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
            fail("grid", 'expected tables of parameters: [grid."*"] or [grid.ALGORITHM]')
        grid = {}
        for scope, g in raw.items():
            scope = "*" if scope == "*" else canonical_name(scope)
            if scope != "*" and scope not in algorithms:
                fail(f"grid.{scope}", "names an algorithm that is not in [algorithms]")
            targets = list(algorithms) if scope == "*" else [scope]
            for k in g:
                key = "lam" if k == "lambda" else k
                if not any(key in resolve(t)[0]._get_param_names() for t in targets):
                    fail(f"grid.{scope}.{k}", f"no algorithm of the grid has a parameter {k!r}")
            plain = {k: v for k, v in g.items() if v != "default"}
            try:
                norm = normalise_grid({scope: plain})[scope] if plain else {}
            except (ValueError, TypeError) as exc:
                fail(f"grid.{scope}", str(exc))
            # in the file's order, the grid order (the first parameter varies slowest)
            grid[scope] = {}
            for k, v in g.items():
                key = str(k).lstrip("-").replace("-", "_")
                key = "lam" if key == "lambda" else key
                grid[scope][key] = "default" if v == "default" else norm[key]
    paper = {}
    for dname, table in (doc.get("paper") or {}).items():
        if dname not in data:
            fail(f"paper.{dname}", f"no data set {dname!r} (data sets: {', '.join(data)})")
        if not isinstance(table, dict):
            fail(f"paper.{dname}", "expected a table of algorithms")
        paper[dname] = {}
        for aname, entry in table.items():
            _check_keys(f"paper.{dname}.{aname}", entry, _PAPER_KEYS, fail)
            canon = canonical_name(aname)
            if canon not in algorithms:
                fail(f"paper.{dname}.{aname}", "names an algorithm that is not in [algorithms]")
            paper[dname][canon] = {k: str(v) for k, v in entry.items()}
    outputs = []
    for i, o in enumerate(doc.get("output") or []):
        where = f"output[{i}]"
        kind = o.get("kind") if isinstance(o, dict) else None
        if kind not in _OUTPUT_KINDS:
            fail(f"{where}.kind", f"expected one of {', '.join(sorted(_OUTPUT_KINDS))}, got {kind!r}")
        _check_keys(where, o, _OUTPUT_KINDS[kind], fail)
        if not isinstance(o.get("file"), str):
            fail(f"{where}.file", "expected a file name")
        if kind == "table" and o.get("format", "markdown") not in ("text", "markdown", "csv"):
            fail(f"{where}.format", f"expected text, markdown or csv, got {o.get('format')!r}")
        if o.get("phase", "run") not in ("run", "tune"):
            fail(f"{where}.phase", f"expected run or tune, got {o.get('phase')!r}")
        if o.get("ddof", 1) not in (0, 1) or isinstance(o.get("ddof"), bool):
            fail(f"{where}.ddof", f"expected 0 or 1, got {o.get('ddof')!r}")
        if kind == "paired":
            pairs = o.get("pairs")
            if not (isinstance(pairs, list) and pairs and all(
                    isinstance(p, list) and len(p) == 2 and all(isinstance(a, str) for a in p) for p in pairs)):
                fail(f"{where}.pairs", "expected a list of [A, B] algorithm names")
            try:
                pairs = [[canonical_name(a) for a in p] for p in pairs]
            except ValueError as exc:
                fail(f"{where}.pairs", str(exc))
            for a in (a for p in pairs for a in p):
                if a not in algorithms:
                    fail(f"{where}.pairs", f"{a} is not in [algorithms]")
            o = dict(o, pairs=pairs)
        outputs.append(dict(o))
    return Experiment(name=path.stem, path=str(path), title=str(ex.get("title", path.stem)), seed=seed,
                      runs=runs, out=str(ex.get("out", f"{path.stem}.jsonl")),
                      file_order=_bool(ex.get("file_order", False), "experiment.file_order", fail),
                      tuning=tuning, data=data, algorithms=algorithms, grid=grid, paper=paper,
                      outputs=outputs)


# ---- running ---------------------------------------------------------------------------------------

def load_data(exp, name, data_dir):
    """The DataSet of data set ``name`` of ``exp``, its files looked up in ``data_dir``."""
    d = exp.data[name]
    paths = [find_file(data_dir, f) for f in d["files"]]
    ds = dataset_from(paths, scale=d["scale"], scale_target=d["scale_target"], name=name)
    if d["rows"] is not None and d["rows"] < ds.n_rows:
        ds = row_sample(ds, d["rows"], exp.seed, name=f"{name} ({d['rows']} rows)")
    return ds


def _substitute(params, vars_):
    return {k: (vars_[v[1:]] if isinstance(v, str) and v.startswith("@") and v != ROWS else v)
            for k, v in params.items()}


def _narrow(values, n):
    mid = len(values) // 2
    lo = max(0, mid - (n - 1) // 2)
    return values[lo:lo + n]


def plan(exp, name, ds):
    """(algorithms, fixed parameters, per-algorithm grid) of data set ``name`` (loaded as ``ds``).

    With tuning, an algorithm no ``[grid]`` table applies to gets its default grid
    (:func:`~onlinekern.experiments.grids.default_grid`, λ's M = ``ds.n_rows_full``);
    ``"default"`` entries and ``tuning.narrow`` are resolved against that grid."""
    algs = [a for a, spec in exp.algorithms.items() if spec["data"] is None or name in spec["data"]]
    vars_ = exp.data[name]["vars"]
    params = {a: _substitute(exp.algorithms[a]["params"], vars_) for a in algs}
    narrow = exp.tuning["narrow"] if exp.tuning else None
    grid = {}
    for a in algs:
        default = default_grid(a, ds.n_rows_full, params[a])
        applies = exp.grid is not None and ("*" in exp.grid or a in exp.grid)
        if not applies:
            g = dict(default) if exp.tuning is not None else {}
        else:
            g = {k: (default.get(k, []) if v == "default" else v) for k, v in grid_for(exp.grid, a).items()}
        names = set(resolve(a)[0]._get_param_names())
        g = {k: v for k, v in g.items() if k in names}
        if narrow is not None:
            g = {k: (_narrow(v, narrow) if k in default and v == default[k] else v) for k, v in g.items()}
        grid[a] = g
    return algs, params, grid


def run_experiment(exp, data_dir, out=None, n_jobs=None, backend=None, scheduler=None, client=None,
                   progress=None, retry_failed=False, only=None, algorithms=None, dry_run=False,
                   stream=None):
    """Run every data set of ``exp`` (resumable through its results file); the records.

    ``only`` and ``algorithms`` restrict the run to some of the experiment's data sets and
    algorithms (the cells are the same as in a full run, so a later full run skips them).

    With ``dry_run`` nothing runs: the plan and the number of runs are printed on ``stream``
    and the cells already in the results file are counted."""
    stream = sys.stdout if stream is None else stream
    out = exp.out if out is None else out
    records = []
    names = list(exp.data) if not only else list(only)
    for n in names:
        if n not in exp.data:
            raise ExperimentError(f"{Path(exp.path).name}: no data set {n!r} ({', '.join(exp.data)})")
    if out and not dry_run and os.path.dirname(os.path.abspath(out)):
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    wanted = None
    if algorithms:
        wanted = [canonical_name(a) for a in algorithms]
        for a in wanted:
            if a not in exp.algorithms:
                raise ExperimentError(f"{Path(exp.path).name}: no algorithm {a!r} in [algorithms]")
    total = 0
    for name in names:
        ds = load_data(exp, name, data_dir)
        algs, params, grid = plan(exp, name, ds)
        if wanted is not None:
            algs = [a for a in algs if a in wanted]
            params = {a: params[a] for a in algs}
            grid = {a: grid[a] for a in algs}
        if not algs:
            print(f"{exp.name}: no algorithm of the selection runs on {name}", file=stream)
            continue
        nparams = normalise_params(params, algs)
        norm = normalise_grid(grid)
        check_grid_names(norm, algs, nparams)
        if dry_run:
            total += _dry_run(exp, name, ds, algs, nparams, norm, stream,
                              Session(out=out if out and os.path.exists(out) else None, progress=False,
                                      stream=stream))
            continue
        with Session(out=out, n_jobs=n_jobs, backend=backend, scheduler=scheduler, client=client,
                     progress=progress, retry_failed=retry_failed) as session:
            tune = exp.tuning is not None
            records += run_sweep(session, algs, [ds], exp.runs, exp.seed, norm, nparams, tune,
                                 exp.tuning["subset"] if tune else 0.1,
                                 exp.tuning["runs"] if tune else 1, exp.file_order,
                                 tie_break=exp.tuning["tie_break"] if tune else "grid",
                                 tune_permutation=exp.tuning["permutation"] if tune else None)
    if dry_run:
        print(f"{exp.name}: {total} runs in all", file=stream)
    return records


def _dry_run(exp, name, ds, algs, nparams, norm, stream, session):
    with session:
        pairs = session.pairs([ds], algs, nparams)
        n = 0
        print(f"{name}: {ds.n_rows:,} rows, {ds.n_features} features, {len(pairs)} algorithms",
              file=stream)
        for p in pairs:
            g = grid_for(norm, p.algorithm)
            if exp.tuning is not None:
                g = default_grid(p.algorithm, ds.n_rows_full, p.fixed) if g is None else g
                points = len(expand_grid(applicable_grid(g, p)))
                k = points * exp.tuning["runs"] + exp.runs
                what = f"{points} grid points × {exp.tuning['runs']} tuning passes, then {exp.runs} runs"
                done = ""
            else:
                pts = expand_grid(applicable_grid(g or {}, p))
                k = len(pts) * exp.runs
                cells = [make_cell(p, {**params_for(nparams, p.algorithm), **pt}, exp.seed, r, "run",
                                   exp.file_order) for pt in pts for r in range(exp.runs)]
                done = f", {sum(session.is_done(c) for c in cells)} done"
                what = f"{len(pts)} settings × {exp.runs} runs"
            print(f"  {p.algorithm}: {what}{done}", file=stream)
            n += k
    return n


# ---- outputs ---------------------------------------------------------------------------------------

def render_outputs(exp, records=None, results=None, output_dir=None):
    """Write every ``[[output]]`` of ``exp`` from its records; the paths written.

    ``records`` default to the experiment's results file (or ``results``); file names are
    relative to ``output_dir`` (default: the working directory)."""
    if records is None:
        records = load_results(results or exp.out)
    record_names = {n: (f"{n} ({d['rows']} rows)" if d["rows"] else n) for n, d in exp.data.items()}
    names = set(exp.data) | set(record_names.values())
    recs = [r for r in records if r is not None and r.get("data") in names
            and r.get("algorithm") in exp.algorithms]
    if not recs:
        raise ExperimentError(f"{exp.name}: no records of this experiment in {results or exp.out}")
    written = []
    for o in exp.outputs:
        path = Path(output_dir or ".") / o["file"]
        path.parent.mkdir(parents=True, exist_ok=True)
        phase = o.get("phase", "run")
        ddof = o.get("ddof", 1)
        if o["kind"] == "table":
            text = format_table(recs, o.get("format", "markdown"), phase=phase, time=o.get("time", True),
                                ddof=ddof)
            atomic_write(str(path), text if text.endswith("\n") else text + "\n")
            written.append(str(path))
        elif o["kind"] == "compare":
            reference = {record_names[n]: table for n, table in exp.paper.items()}
            atomic_write(str(path), format_comparison(recs, reference, phase=phase, ddof=ddof))
            written.append(str(path))
        elif o["kind"] == "paired":
            atomic_write(str(path), format_paired(recs, o["pairs"], phase=phase, ddof=ddof))
            written.append(str(path))
        else:
            written += plot(recs, str(path), phase=phase, dpi=o.get("dpi", 120))
    return written
