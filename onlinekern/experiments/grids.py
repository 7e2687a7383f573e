"""Hyper-parameter grids: the papers' defaults, the grid syntax, grid files, tuning subsets.

The tuning protocol that searches these grids is :mod:`onlinekern.experiments.tuning`.

Default grids
-------------
The paper's grids (ALGORITHMS.md §4.2) are in the reference toolboxes' conventions:

* λ ∈ {2^{2j}/M : j = −2..8}, M = number of rows of the **full** data set (the data the chosen
  setting is run on; the paper's "number of data points").  λ·M stays the same whatever the
  subset size, so the total shrink (1 − ηλ)^M of a pass over the full data is what was tuned.
* η ∈ {1e−5, 3e−5, 1e−4, 3e−4, 1e−3, 3e−3, 1e−2}.
* γ ∈ {2⁻⁸, 2⁻⁴, 2⁻², 2⁰, 2², 2⁴, 2⁸}.

Converted to onlinekern's conventions (ALGORITHMS.md §1.3), for the parameters the learner
actually has (``cls._get_param_names()``; parameters fixed by the caller are not tuned):

* **Random-feature learners** (a ``FeatureLearner`` with ``n_components`` and ``eta``: FOGD, RRF,
  ...) use z(x) = D^{−1/2}[cos; sin] where LSOKL and the RRF code use unscaled features, so
  η = D·η_ref and λ = λ_ref/D (identical predictions).  With D = 1000 the η grid is
  {0.01, 0.03, 0.1, 0.3, 1, 3, 10}; with D̂ = 4000, {0.04, 0.12, 0.4, 1.2, 4, 12, 40}.
  Kernel-expansion learners (and DualSGD / DSG, whose reference code already scales) keep
  η and λ unchanged.
* **Kernel width.**  The paper's "γ" is each toolbox's own width parameter: BudgetedSVM, LIBSVM,
  KOL and tund/dsgd use exp(−γ‖Δ‖²) (g = γ); LSOKL's Matlab code uses σ with exp(−‖Δ‖²/(2σ²))
  (g = 1/(2σ²) = 2^{−2k−1} for σ = 2^k); tund/RRF draws ω = γ·randn (g = γ²/2 = 2^{2k−1}), which
  gives the same set as LSOKL.  onlinekern has one convention, g, for every learner, so the
  default g grid is the **union** of the two images: 14 values
  {2⁻¹⁷, 2⁻⁹, 2⁻⁸, 2⁻⁵, 2⁻⁴, 2⁻², 2⁻¹, 1, 4, 8, 16, 128, 256, 2¹⁵}; it contains every source's
  grid whatever the algorithm (this is the "extension our convention needs").  FOGD's known good
  setting on ijcnn1 (g = 0.5, η = 1 at D = 1000) is σ = 1, η_ref = 1e−3 of the paper's grid.

A learner class may override all this with a class attribute or classmethod ``default_grid``
(a dict, or a callable ``default_grid(n_rows=M, params=fixed)`` returning one).

Grid syntax (``--grid`` and :func:`parse_grid`)
-----------------------------------------------
``eta=1e-3:1e-1:log:5,gamma=0.5,1,2`` — comma-separated; a token with ``=`` starts a parameter,
the tokens after it add values.  A value is a number (``2^-3`` allowed), a word the parameter's
option accepts (``gamma=median``, ``loss=logit``), or a range ``START:STOP:NUM`` (NUM evenly
spaced values, ends included), ``START:STOP:lin:NUM`` (the same) or ``START:STOP:log:NUM``
(``log10``/``log2`` are synonyms: NUM geometrically spaced values).  Integer parameters
(``n_components``) round range values to integers.  A grid file (JSON or TOML) maps parameter
names to lists, range strings or ``{start, stop, num, scale}`` tables; a file whose values are all
tables of parameters is a per-algorithm grid (keys: algorithm names, ``"*"`` for every
algorithm).
"""
import itertools
import json
import numbers
import os
import re

import numpy as np

from onlinekern.params import is_auto

__all__ = ["DEFAULT_GAMMAS", "ETA_REF", "GAMMA_REF", "LAMBDA_EXPONENTS", "default_grid",
           "expand_grid", "grid_for", "load_grid_file", "normalise_grid", "parse_grid",
           "subset_fraction", "subset_indices"]

# ---- the paper's grids (ALGORITHMS.md §4.2), in the reference toolboxes' conventions --------------
ETA_REF = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
LAMBDA_EXPONENTS = tuple(range(-2, 9))                       # lambda = 2^(2j) / M
GAMMA_REF = (2.0 ** -8, 2.0 ** -4, 2.0 ** -2, 1.0, 2.0 ** 2, 2.0 ** 4, 2.0 ** 8)
# onlinekern's g for every source convention of the grid value v (module docstring):
#   g = v (BudgetedSVM, LIBSVM, KOL, tund/dsgd);  g = 1/(2 v^2) (LSOKL sigma);  g = v^2/2 (tund/RRF)
DEFAULT_GAMMAS = tuple(sorted(set(GAMMA_REF) | {1.0 / (2.0 * v * v) for v in GAMMA_REF}
                              | {v * v / 2.0 for v in GAMMA_REF}))

# The seed stream of the tuning subset.  seeding.py owns the stream numbers; 7 is the next free
# one (0-6 are taken) and is used until seeding.py names it.
try:
    from onlinekern.seeding import SUBSET as SUBSET_STREAM
except ImportError:
    SUBSET_STREAM = 7


def _round(v):
    """Products like 4000 * 3e-5 printed as 0.12, not 0.12000000000000001."""
    return float(f"{v:.12g}")


def _learner_class(algorithm):
    from onlinekern.registry import resolve
    if isinstance(algorithm, type):
        return algorithm, {}
    return resolve(algorithm)


def _class_default(cls, name):
    import inspect
    return inspect.signature(cls.__init__).parameters[name].default


def default_grid(algorithm, n_rows, params=None):
    """The IJCAI'17 grid converted to onlinekern's conventions for one algorithm.

    Parameters
    ----------
    algorithm : str or learner class
    n_rows : int
        M, the number of rows of the full data set (λ = 2^{2j}/M).
    params : dict, optional
        Fixed parameters: they are not tuned, and ``n_components`` among them sets D of the
        η/λ conversion (default: the class default).

    Returns
    -------
    dict: parameter -> list of values (only parameters the learner has; ``{}`` if none).
    """
    cls, name_fixed = _learner_class(algorithm)
    fixed = dict(params or {})
    fixed.update(name_fixed)
    hook = getattr(cls, "default_grid", None)
    if hook is not None:
        grid = hook(n_rows=n_rows, params=fixed) if callable(hook) else hook
        return {k: list(v) for k, v in dict(grid).items() if k not in fixed}
    names = cls._get_param_names()
    from onlinekern.base import FeatureLearner
    scale = 1.0
    if issubclass(cls, FeatureLearner) and "n_components" in names and "eta" in names:
        D = fixed.get("n_components", _class_default(cls, "n_components"))
        scale = float(cls.paper_defaults["n_components"] if is_auto(D) else D)
    M = max(int(n_rows), 1)
    grid = {}
    if "gamma" in names and "gamma" not in fixed:
        grid["gamma"] = [_round(g) for g in DEFAULT_GAMMAS]
    if "eta" in names and "eta" not in fixed:
        grid["eta"] = [_round(e * scale) for e in ETA_REF]
    if "lam" in names and "lam" not in fixed:
        grid["lam"] = [_round(2.0 ** (2 * j) / M / scale) for j in LAMBDA_EXPONENTS]
    return grid


# ---- grid syntax --------------------------------------------------------------------------------

_RANGE_SCALES = {"lin": "lin", "linear": "lin", "log": "log", "log10": "log", "log2": "log",
                 "geom": "log"}


def _number(text):
    t = text.strip()
    m = re.fullmatch(r"([-+]?[0-9.]+(?:[eE][-+]?\d+)?)\s*(?:\^|\*\*)\s*([-+]?[0-9.]+)", t)
    if m:
        return float(m.group(1)) ** float(m.group(2))
    return float(t)


def _range(start, stop, num, scale):
    start, stop = _number(str(start)), _number(str(stop))
    num = int(_number(str(num)))
    if num < 1:
        raise ValueError(f"a range needs at least 1 value, got {num}")
    scale = _RANGE_SCALES.get(str(scale).lower())
    if scale is None:
        raise ValueError("range scale must be lin or log")
    if scale == "log":
        if start <= 0 or stop <= 0:
            raise ValueError(f"a log range needs positive ends, got {start:g}:{stop:g}")
        vals = np.geomspace(start, stop, num)
    else:
        vals = np.linspace(start, stop, num)
    return [_round(v) for v in vals]


def _parse_range(text):
    parts = text.split(":")
    if len(parts) == 3:
        return _range(parts[0], parts[1], parts[2], "lin")
    if len(parts) == 4:
        return _range(parts[0], parts[1], parts[3], parts[2])
    raise ValueError(f"bad range {text!r}: use START:STOP:NUM or START:STOP:lin|log:NUM")


def _value_parser(name):
    """The parser of ``--name`` (onlinekern.cli), or a generic one."""
    from onlinekern import cli
    opt = cli.learner_options().get(name)
    parse = opt.parse if opt is not None else None
    if parse is None or parse is cli.FLAG:
        return cli.parse_auto, False
    return parse, getattr(parse, "__wrapped__", parse) in (cli.parse_int, cli.parse_optional_int)


def _convert(name, values):
    """Parse the text values of one parameter; integer parameters get integers."""
    import argparse
    parse, integral = _value_parser(name)
    out = []
    for v in values:
        if isinstance(v, str):
            text = v.strip()
            if ":" in text and re.fullmatch(r"[-+0-9.eE^*]+(:[-+0-9.eE^*a-zA-Z]+){2,3}", text):
                vals = _parse_range(text)
                out.extend(int(round(x)) if integral else x for x in vals)
                continue
            try:
                out.append(parse(text))
            except (argparse.ArgumentTypeError, ValueError) as exc:
                try:
                    num = _number(text)
                except ValueError:
                    raise ValueError(f"grid value for {name}: {exc}") from None
                out.append(int(round(num)) if integral else num)
        elif isinstance(v, dict):
            keys = set(v)
            if not {"start", "stop", "num"} <= keys <= {"start", "stop", "num", "scale"}:
                raise ValueError(f"grid range for {name} needs start, stop, num (and scale), got {sorted(keys)}")
            vals = _range(v["start"], v["stop"], v["num"], v.get("scale", "lin"))
            out.extend(int(round(x)) if integral else x for x in vals)
        else:
            if integral and isinstance(v, numbers.Real) and not isinstance(v, bool):
                v = int(round(v))
            out.append(v)
    return _unique(out)


def _unique(values):
    """Keep the order, drop repeats (a range and a list may overlap)."""
    seen = []
    for v in values:
        if not any(_same_value(v, s) for s in seen):
            seen.append(v)
    return seen


def _same_value(a, b):
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b and type(a) is type(b)


def parse_grid(text, grid=None):
    """Parse ``eta=1e-3:1e-1:log:5,gamma=0.5,1,2`` into ``{"eta": [...], "gamma": [0.5, 1.0, 2.0]}``.

    ``text`` may be a list of such strings (repeated ``--grid`` options); values of a parameter
    named twice are appended.  ``grid`` is an existing dict to add to.
    """
    grid = {} if grid is None else grid
    texts = [text] if isinstance(text, str) else list(text)
    for t in texts:
        key = None
        for token in t.split(","):
            token = token.strip()
            if not token:
                continue
            if "=" in token:
                key, token = token.split("=", 1)
                key = key.strip().lstrip("-").replace("-", "_")
                if key == "lambda":
                    key = "lam"
                if not key:
                    raise ValueError(f"grid {t!r}: empty parameter name")
                grid.setdefault(key, [])
                token = token.strip()
                if not token:
                    continue
            if key is None:
                raise ValueError(f"grid {t!r}: values must follow NAME= (e.g. eta=0.1,0.3)")
            grid[key].extend(_convert(key, [token]))
    for k, v in grid.items():
        if not v:
            raise ValueError(f"grid parameter {k} has no values")
        grid[k] = _unique(v)
    return grid


def _is_param_table(v):
    return isinstance(v, dict) and not ({"start", "stop", "num"} <= set(v))


def normalise_grid(grid):
    """A grid argument (None, dict, per-algorithm dict, grid text, or grid-file path) as
    ``None``, ``{"*": {param: [values]}}`` or ``{algorithm|"*": {param: [values]}}``."""
    if grid is None:
        return None
    if isinstance(grid, (str, os.PathLike)) and os.path.isfile(os.fspath(grid)):
        return load_grid_file(grid)
    if isinstance(grid, (str, list, tuple)):
        return {"*": parse_grid(grid)}
    if not isinstance(grid, dict):
        raise TypeError(f"grid must be a dict, grid text or a grid file, got {type(grid).__name__}")
    if grid and all(_is_param_table(v) for v in grid.values()):
        return {str(alg).lower(): _param_grid(g) for alg, g in grid.items()}
    return {"*": _param_grid(grid)}


def _param_grid(g):
    out = {}
    for k, v in g.items():
        key = str(k).lstrip("-").replace("-", "_")
        key = "lam" if key == "lambda" else key
        vals = v if isinstance(v, (list, tuple)) else [v]
        if isinstance(v, np.ndarray):
            vals = v.tolist()
        out[key] = _convert(key, vals)
        if not out[key]:
            raise ValueError(f"grid parameter {key} has no values")
    return out


def load_grid_file(path):
    """Read a JSON or TOML grid file (module docstring) into the normalised per-algorithm form."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    if path.lower().endswith(".toml"):
        try:
            import tomllib
        except ImportError:          # Python < 3.11
            try:
                import tomli as tomllib
            except ImportError:
                raise ValueError(f"{path}: reading TOML needs Python >= 3.11 or the tomli package") from None
        try:
            doc = tomllib.loads(raw.decode("utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: {exc}") from None
    else:
        try:
            doc = json.loads(raw.decode("utf-8"))
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not doc:
        raise ValueError(f"{path}: a grid file holds a table of parameters")
    try:
        return normalise_grid(doc)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def grid_for(grid, algorithm):
    """The parameter grid of ``algorithm`` from a normalised grid (``"*"`` merged with its own)."""
    if grid is None:
        return None
    out = dict(grid.get("*", {}))
    out.update(grid.get(str(algorithm).lower(), {}))
    return out


def expand_grid(grid):
    """Every combination of a ``{param: values}`` grid, in order (first parameter slowest)."""
    if not grid:
        return [{}]
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


LARGE_ROWS = 500_000


def subset_fraction(subset, n_rows):
    """The tuning fraction: ``subset`` itself, or for ``"auto"`` the paper's rule (1 % of data
    sets above 500,000 rows, 10 % of the others; Nguyen et al. 2017, §4.3)."""
    if isinstance(subset, str):
        if subset.strip().lower() != "auto":
            raise ValueError(f"subset must be a fraction in (0, 1] or 'auto', got {subset!r}")
        return 0.01 if n_rows > LARGE_ROWS else 0.1
    if isinstance(subset, bool) or not 0 < subset <= 1:
        raise ValueError(f"subset must be a fraction in (0, 1] or 'auto', got {subset!r}")
    return float(subset)


def subset_indices(n, fraction, seed, permutation=None):
    """Sorted row indices of the tuning subset: ``round(fraction * n)`` rows (at least 2) drawn
    without replacement by ``rng(seed, SUBSET_STREAM).permutation(n)``.

    With ``permutation`` P the rows are instead the first ones of the data order of run P,
    ``onlinekern.seeding.permutation(seed, P, n)`` (the convention of the RRF reference
    benchmark, which reserves a run index no evaluation run uses for its tuning subset)."""
    from onlinekern.seeding import permutation as run_order, rng
    if not 0 < fraction <= 1:
        raise ValueError(f"subset must be a fraction in (0, 1], got {fraction!r}")
    m = min(n, max(2, int(round(fraction * n))))
    order = rng(seed, SUBSET_STREAM).permutation(n) if permutation is None else run_order(seed, permutation, n)
    return np.sort(order[:m])
