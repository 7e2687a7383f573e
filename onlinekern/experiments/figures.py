"""Experiment files whose figure is not a sweep: a ``[figure]`` table names an experiment
program of the package and its parameters.

    # Livni et al. (ICML 2017), Figure 1 ...
    [experiment]
    title = "Livni et al. (ICML 2017), Figure 1"
    out = "results/shrinking_coordinate.json"    # the JSON summary; figures are drawn beside it

    [figure]
    kind = "shrinking"          # one of KINDS
    setting = "coordinate"      # the kind's parameters (omitted ones keep their defaults)

``python -m onlinekern.sweep --config NAME --data-dir DIR`` runs it (``--param NAME=VALUE``
overrides a parameter, ``--dry-run`` prints the plan and checks the data files);
``python -m onlinekern.report --config NAME`` draws the figures again from the JSON.

A figure is computed in *points* (a D of the Shrinking Gradient figure, a data set of the DSG
objective): each finished point is saved at once beside the summary, in
``<out>.<hash>.points.json`` (hash: the kind and its parameters), so a run that is stopped resumes
at its first unfinished point with the same command; the file is removed when the summary is
written.
"""
import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from onlinekern.experiments import curves, shrinking
from onlinekern.experiments.store import cell_key
from onlinekern.io.atomic import atomic_write, to_jsonable

__all__ = ["KINDS", "ExperimentError", "Figure", "Kind", "PointStore", "load_figure", "override",
           "render_figure", "run_figure"]


class ExperimentError(ValueError):
    """An experiment file is malformed or names something unknown (the message says where)."""


@dataclass(frozen=True)
class Kind:
    """An experiment program: its parameters' defaults and choices, plan, run and figures.

    ``describe(params, data_dir, stream)`` prints the plan and returns the number of passes;
    ``run(params, data_dir, stream, point)`` returns a JSON-able summary, computing each point of
    the figure as ``point(key, compute)`` (a :class:`PointStore`, or any callable returning
    ``compute()``); ``render(summary, folder)`` draws the figures and returns their paths."""

    params: dict
    choices: dict
    describe: object
    run: object
    render: object


KINDS = {"shrinking": Kind(shrinking.PARAMS, shrinking.CHOICES, shrinking.describe, shrinking.run,
                           shrinking.render),
         "dsg-objective": Kind(curves.OBJECTIVE, {"datasets": tuple(curves.FILES)}, curves.describe_objective,
                               curves.run_objective, curves.render_objective),
         "dsg-synthetic": Kind(curves.SYNTHETIC, {}, curves.describe_synthetic, curves.run_synthetic,
                               curves.render_synthetic)}
"""The figure kinds an experiment file may name."""


@dataclass(frozen=True)
class Figure:
    """A validated ``[figure]`` experiment file: ``name``, ``path``, ``title``, ``out`` (the JSON
    summary), ``kind`` (a key of :data:`KINDS`) and ``params`` (every parameter of the kind)."""

    name: str
    path: str
    title: str
    out: str
    kind: str
    params: dict


def _check(kind, key, value, fail):
    """``value`` converted to the type of the default of parameter ``key`` (or ``fail``)."""
    spec = KINDS[kind]
    if key not in spec.params:
        fail(f"figure.{key}", f"unknown parameter of {kind} (allowed: {', '.join(sorted(spec.params))})")
    default = spec.params[key]

    def one(v, like):
        if isinstance(like, bool):
            ok = isinstance(v, bool)
        elif isinstance(like, int):
            ok = isinstance(v, int) and not isinstance(v, bool)
        elif isinstance(like, float):
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
            v = float(v) if ok else v
        else:
            ok = isinstance(v, str) and (key not in spec.choices or v in spec.choices[key])
        if not ok:
            allowed = f" (one of {', '.join(spec.choices[key])})" if key in spec.choices else ""
            fail(f"figure.{key}", f"expected a {type(like).__name__}{allowed}, got {v!r}")
        return v

    if isinstance(default, list):
        if not isinstance(value, list) or not value:
            fail(f"figure.{key}", f"expected a non-empty list, got {value!r}")
        return [one(v, default[0]) for v in value]
    return one(value, default)


def load_figure(path, doc, fail):
    """The :class:`Figure` of a parsed experiment file ``doc`` (``fail(key, message)`` raises)."""
    for section in doc:
        if section not in ("experiment", "figure"):
            fail(section, "a [figure] file has only [experiment] and [figure] tables")
    ex, fig = doc.get("experiment", {}), dict(doc["figure"])
    for k in ex:
        if k not in ("title", "out"):
            fail(f"experiment.{k}", "unknown key of a [figure] file (allowed: out, title)")
    kind = fig.pop("kind", None)
    if kind not in KINDS:
        fail("figure.kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    params = dict(KINDS[kind].params)
    params.update({k: _check(kind, k, v, fail) for k, v in fig.items()})
    name = Path(path).stem
    return Figure(name=name, path=str(path), title=str(ex.get("title", name)),
                  out=str(ex.get("out", f"results/{name}.json")), kind=kind, params=params)


def override(figure, items):
    """``figure`` with parameters replaced by ``NAME=VALUE`` strings (lists comma-separated)."""
    def fail(key, msg):
        raise ExperimentError(f"--param {key[len('figure.'):]}: {msg}")

    params = dict(figure.params)
    for item in items or []:
        key, sep, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in params:
            fail(f"figure.{key}", f"expected NAME=VALUE with NAME one of {', '.join(sorted(params))}")
        default = params[key]
        like = default[0] if isinstance(default, list) else default
        conv = ((lambda t: t.lower() in ("1", "true", "yes")) if isinstance(like, bool) else
                type(like) if isinstance(like, (int, float)) else str)
        try:
            vals = [conv(t.strip()) for t in text.split(",")]
        except ValueError:
            fail(f"figure.{key}", f"cannot read {text!r} as {type(like).__name__}")
        params[key] = _check(figure.kind, key, vals if isinstance(default, list) else vals[0], fail)
    return replace(figure, params=params)


def _plain(obj):
    """JSON types from numpy scalars and arrays (for ``json.dumps(default=...)``)."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"cannot save {type(obj).__name__} in a figure point")


class PointStore:
    """The finished points of one figure run, saved as each finishes (atomic rewrite of one
    JSON file) and read back by a run with the same kind and parameters.

    Calling the store, ``store(key, compute)``, returns the saved value of ``key`` or computes,
    saves and returns it.  Values round-trip exactly: floats are written with ``repr`` precision,
    infinities and NaN as JSON's ``Infinity``/``NaN``, tuples come back as lists.
    """

    def __init__(self, out, kind, params):
        key = cell_key({"kind": kind, "params": params})[:12]
        self.path = f"{os.path.abspath(out)}.{key}.points.json"
        self.kind, self.params, self.points, self.resumed = kind, params, {}, 0
        if os.path.exists(self.path):
            try:
                with open(self.path) as f:
                    saved = json.load(f)
                same = saved.get("kind") == kind and saved.get("params") == json.loads(json.dumps(params))
                points = dict(saved["points"]) if same else {}
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise ExperimentError(f"{self.path}: not a points file of this figure ({exc}); delete it to "
                                      "start the figure afresh") from None
            self.points, self.resumed = points, len(points)

    def __call__(self, key, compute):
        if key in self.points:
            return self.points[key]
        value = json.loads(json.dumps(compute(), default=_plain))      # what a resumed run reads
        self.points[key] = value
        atomic_write(self.path, json.dumps({"kind": self.kind, "params": self.params, "points": self.points},
                                           default=_plain, indent=1) + "\n")
        return value

    def remove(self):
        """Delete the points file (its summary has been written)."""
        if os.path.exists(self.path):
            os.unlink(self.path)


def run_figure(figure, data_dir, out=None, dry_run=False, stream=None):
    """Run ``figure``; write its JSON summary to ``out`` and the figures beside it.

    Finished points are kept in a :class:`PointStore` beside ``out`` until the summary is
    written: a stopped run resumes with the same call.  With ``dry_run`` only the plan is
    printed (a missing data file raises FileNotFoundError, as in a run); returns the summary
    (None on a dry run)."""
    stream = sys.stdout if stream is None else stream
    kind = KINDS[figure.kind]
    if dry_run:
        n = kind.describe(figure.params, data_dir, stream)
        print(f"{figure.name}: {n} learner passes in all", file=stream)
        return None
    out = out or figure.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    points = PointStore(out, figure.kind, figure.params)
    if points.resumed:
        print(f"resuming: {points.resumed} finished points read from {points.path}", file=stream)
    summary = kind.run(figure.params, data_dir, stream, points)
    summary = {"experiment": figure.name, "kind": figure.kind, **summary}
    atomic_write(out, json.dumps(to_jsonable(summary), indent=1) + "\n")
    points.remove()
    print(f"wrote {out}", file=stream)
    try:
        for path in kind.render(summary, os.path.dirname(os.path.abspath(out))):
            print(f"wrote {path}", file=stream)
    except ImportError:
        print("figures need matplotlib: pip install 'onlinekern[plot]'", file=stream)
    return summary


def render_figure(figure, results=None, output_dir=None):
    """Draw the figures of ``figure`` from its JSON summary (``results``, default its ``out``)
    into ``output_dir`` (default: the working directory); the paths written."""
    path = results or figure.out
    with open(path) as f:
        summary = json.load(f)
    if summary.get("kind") != figure.kind:
        raise ExperimentError(f"{path}: not a {figure.kind} summary (kind {summary.get('kind')!r})")
    try:
        return KINDS[figure.kind].render(summary, output_dir or ".")
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'onlinekern[plot]'") from None
