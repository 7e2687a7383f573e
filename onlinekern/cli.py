"""The option grammar and output helpers shared by onlinekern's command-line tools.

``train`` (and the later ``predict``, ``sweep`` and ``report``) build their options here, so every
tool spells a hyper-parameter the same way:

* **Learner options are generated from the learner classes.**  Every ``__init__`` parameter of
  every registered learner (``cls._get_param_names()``) becomes ``--name-with-dashes``; the table
  :data:`PARAMS` adds the LIBSVM / LSOKL-style short aliases (``-g`` gamma, ``-e`` eta,
  ``-D`` n_components, ``-B`` budget, ``-s`` seed, ``-j`` n_threads), extra long names
  (``--lambda`` for ``lam``), help texts and value parsers for the names it knows.  A parameter
  the table does not know still gets an option: its parser is inferred from the ``__init__``
  default's type and its help comes from the class docstring (numpydoc ``Parameters``), so a new
  learner needs no edit here.
* **Values are parsed, not validated, here**: the learner's own ``_validate_params`` stays the one
  place that decides what is legal; tools call it before loading data.
* **Errors, exit codes and output helpers** (:func:`run_tool`, :class:`Progress`,
  :func:`summary_line`, ...) are :mod:`onlinekern.console`; this module re-exports them.
"""
import argparse
import difflib
import inspect
import math
import numbers
import os
import re
from dataclasses import dataclass

import numpy as np

from onlinekern.console import (  # noqa: F401  (re-exported: the tools use cli.<name>)
    EXIT_DATA, EXIT_INTERRUPT, EXIT_OK, EXIT_USAGE, DataError, Progress, UsageError, check_labels,
    check_writable, describe_labels, describe_os_error, error_text, load_files, mean_std, run_tool,
    size_text, summary_line, write_json)

# ---- value parsers ------------------------------------------------------------------------------
# Each takes the option's text and returns the Python value, raising argparse.ArgumentTypeError
# with a short reason (argparse prefixes "argument --name:").

_NONE_WORDS = ("none", "auto", "default")


def parse_float(text):
    """A real number (``1e-3``, ``0.5``)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def parse_int(text):
    """An integer; integral floats such as ``1e3`` are accepted."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if math.isfinite(v) and v == int(v):
        return int(v)
    raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")


def parse_optional_int(text):
    """An integer, or ``none``/``auto`` for the learner's automatic choice (None)."""
    if text.strip().lower() in _NONE_WORDS + ("all",):
        return None
    return parse_int(text)


def parse_gamma(text):
    """A positive number, ``auto`` (the scale-free default), ``median`` (median heuristic), or
    ``none`` (1/n_features)."""
    key = text.strip().lower()
    if key in ("median", "auto"):
        return key
    if key in ("none", "default"):
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number or 'median', got {text!r}") from None


def parse_loss(text):
    """A loss name or alias (``hinge``, ``logit``, ``eps``, ...), returned in canonical form."""
    from onlinekern._core.losses import canonical_loss
    try:
        return canonical_loss(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_task(text):
    """``classification`` (also ``binary``, ``multiclass``) or ``regression``."""
    key = text.strip().lower()
    if key in ("classification", "binary", "multiclass", "class", "c"):
        return "classification"
    if key in ("regression", "reg", "r"):
        return "regression"
    raise argparse.ArgumentTypeError(f"expected 'classification' or 'regression', got {text!r}")


def parse_str(text):
    return text


def parse_auto(text):
    """Generic value: ``none`` → None, else an int, a float, or the text itself."""
    key = text.strip().lower()
    if key in ("none", "null"):
        return None
    if key in ("true", "yes", "on"):
        return True
    if key in ("false", "no", "off"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


FLAG = "flag"   # marker parser: a boolean switch --name / --no-name


# ---- the parameter table ----------------------------------------------------------------------

@dataclass(frozen=True)
class ParamSpec:
    """How one hyper-parameter appears on the command line.

    short : one-letter alias (``-g``) or None;  aliases : extra long options (``--lambda``);
    help : text (the default is appended automatically);  parse : value parser, :data:`FLAG`, or
    None (infer from the default);  metavar : placeholder;  none_means : how to show a None default.
    """

    short: object = None
    aliases: tuple = ()
    help: str = ""
    parse: object = None
    metavar: object = None
    none_means: str = "none"


# parameter name -> ParamSpec.  Names not listed here still get an option (generic fallback).
PARAMS = {
    "gamma": ParamSpec("-g", (), "kernel width g of exp(-g ||x - x'||^2): a positive number, "
                       "'auto' (chosen online among multiples of the median heuristic's width, features "
                       "as given, divided by their ranges or by their standard deviations), "
                       "'median' (median heuristic) or 'none' (1/n_features)", parse_gamma, "G",
                       "1/n_features"),
    "preset": ParamSpec(None, (), "'auto' (the product defaults, fitted to the data) or 'paper' (the "
                        "papers' settings for every parameter left at 'auto')", parse_str, "NAME"),
    "eta": ParamSpec("-e", (), "step size (learning rate)", parse_float, "ETA"),
    "lam": ParamSpec(None, ("--lambda",), "L2 regularisation lambda (OGD-style learners shrink by "
                     "1 - eta*lambda per step, Pegasos-style ones use steps 1/(lambda*t): see -a NAME --help)",
                     parse_float, "LAMBDA"),
    "loss": ParamSpec(None, (), "loss: hinge, logistic (logit), squared-hinge (sqhinge), softmax; "
                      "regression: squared (l2), absolute (l1), epsilon-insensitive (eps), huber, "
                      "quantile", parse_loss, "LOSS"),
    "epsilon": ParamSpec(None, (), "width of the epsilon-insensitive tube (regression)", parse_float, "EPS"),
    "huber_delta": ParamSpec(None, (), "threshold delta of the Huber loss", parse_float, "DELTA"),
    "quantile": ParamSpec(None, (), "level tau in (0, 1) of the quantile (pinball) loss", parse_float, "TAU"),
    "n_components": ParamSpec("-D", (), "number D of random Fourier frequencies (2D weights); 'auto': the "
                              "papers' D (FOGD 400, RRF 100, DualSGD 200), times sqrt(T / 5,000) up to 10x over "
                              "a stream of T > 5,000 examples",
                              parse_int, "D"),
    "budget": ParamSpec("-B", (), "budget: maximum number of support vectors", parse_optional_int, "B"),
    "average": ParamSpec(None, (), "predict with averaged weights (Perceptron, RBP: the average of the "
                         "hypotheses so far, online too; FOGD, NOGD: after training)", FLAG),
    "task": ParamSpec(None, (), "'classification' or 'regression' (learners without a loss)",
                      parse_task, "TASK"),
    "n_threads": ParamSpec("-j", (), "threads for the compiled loops ('auto': all cores, or OMP_NUM_THREADS)",
                           parse_optional_int, "N", "all cores"),
    "seed": ParamSpec("-s", (), "the one seed behind everything random: data permutations, "
                      "random features, sampling choices", parse_int, "S"),
    "median_scale": ParamSpec(None, (), "c in sigma = c * median distance (with --gamma median)",
                              parse_float, "C"),
    "rank": ParamSpec(None, (), "Nystrom rank k", parse_optional_int, "K", "0.2 * budget"),
    "eta_linear": ParamSpec(None, (), "step size of the linear phase", parse_float, "ETA"),
    "k_merge": ParamSpec(None, (), "support vectors moved per maintenance step", parse_int, "K"),
    "maintenance": ParamSpec(None, (), "budget maintenance strategy", parse_str, "RULE"),
    "merge_tol": ParamSpec(None, (), "golden-section tolerance of merging", parse_float, "TOL"),
    "coef_bound": ParamSpec(None, (), "bound on |alpha_i| after removal (in units of eta)",
                            parse_float, "C"),
    "sampling": ParamSpec(None, (), "'uniform' or 'nonuniform' removal sampling", parse_str, "RULE"),
    "proj_eta": ParamSpec(None, (), "projection threshold on delta", parse_float, "ETA"),
    "c": ParamSpec("-c", (), "PA-I aggressiveness C", parse_float, "C"),
    "margin_rule": ParamSpec(None, (), "margin-update rule", parse_str, "RULE"),
    "batch_size": ParamSpec(None, (), "examples per mini-batch", parse_int, "B"),
    "block_size": ParamSpec(None, (), "new random frequencies per iteration", parse_int, "F"),
    "nu": ParamSpec(None, (), "regularisation nu", parse_float, "NU"),
    "theta": ParamSpec(None, (), "step-size scale theta of theta/(i + t0)", parse_float, "THETA"),
    "t0": ParamSpec(None, (), "step-size offset t0 of theta/(i + t0)", parse_float, "T0"),
    "eta_gamma": ParamSpec(None, (), "step size of the log-bandwidths", parse_float, "ETA"),
    "init": ParamSpec(None, (), "initial weights: std s of w0 = s*N(0,1) (0 = zeros) or 'reference'",
                      parse_auto, "S"),
    "norm_bound": ParamSpec(None, (), "radius of the competitor ball", parse_float, "B"),
    "n_samples": ParamSpec(None, (), "estimator samples per prediction", parse_int, "M"),
    "predict_samples": ParamSpec(None, (), "estimator samples per prediction after training (ext; Theorem 1, part 3)",
                                parse_optional_int, "M", "n_samples"),
    "horizon": ParamSpec(None, (), "stream length T used to set the step size", parse_optional_int, "T"),
}

def known_param_options():
    """Every option string of the table :data:`PARAMS` (``-B``, ``--budget``, ...)."""
    out = set()
    for name, spec in PARAMS.items():
        out.add(option_name(name))
        out.update(spec.aliases)
        if spec.short:
            out.add(spec.short)
        if spec.parse is FLAG:
            out.add("--no-" + name.replace("_", "-"))
    return out


# What the tools treat specially: these options exist for every algorithm.
ALWAYS_ALLOWED = ("seed",)


def option_name(param):
    """``n_components`` -> ``--n-components``."""
    return "--" + param.replace("_", "-")


# ---- learner classes and their parameters ---------------------------------------------------------

def learner_classes():
    """The registered learner classes, one per family, in --list order."""
    from onlinekern.registry import available_learners
    seen = []
    for info in available_learners().values():
        if info["class"] not in seen:
            seen.append(info["class"])
    return seen


def class_defaults(cls):
    """{parameter: default} of ``cls.__init__`` (in signature order)."""
    sig = inspect.signature(cls.__init__)
    return {name: sig.parameters[name].default for name in cls._get_param_names()}


_DOC_PARAM = re.compile(r"^(\w[\w, ]*?)\s*:\s*(.*)$")


def docstring_params(cls):
    """{parameter: first sentence of its description} from the numpydoc ``Parameters`` section."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    lines = doc.splitlines()
    out = {}
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == "Parameters"
                     and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"})
    except StopIteration:
        return out
    i = start + 2
    while i < len(lines):
        line = lines[i]
        if line and not line.startswith(" "):
            if i + 1 < len(lines) and lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"}:
                break                                     # next section
            m = _DOC_PARAM.match(line)
            names = [n.strip() for n in (m.group(1) if m else line).split(",")]
            desc = []
            j = i + 1
            while j < len(lines) and (not lines[j] or lines[j].startswith(" ")):
                if lines[j].strip():
                    desc.append(lines[j].strip())
                j += 1
            text = " ".join(desc) or (m.group(2) if m else "")
            first = re.split(r"(?<=[.;])\s", text, maxsplit=1)[0].rstrip(".;")
            for n in names:
                if n:
                    out.setdefault(n, first)
            i = j
        else:
            i += 1
    return out


def docstring_summary(cls):
    """The docstring before its first numpydoc section (summary, paper, notes)."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    lines = doc.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].strip() and set(lines[i + 1].strip()) == {"-"} and len(lines[i + 1].strip()) >= 3:
            lines = lines[:i]
            break
    return "\n".join(lines).strip()


def _infer_parser(defaults):
    vals = [d for d in defaults if d is not None and d is not inspect.Parameter.empty]
    if vals and all(isinstance(v, (bool, np.bool_)) for v in vals):
        return FLAG
    if vals and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in vals):
        return parse_int if len(vals) == len(defaults) else parse_optional_int
    if vals and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in vals):
        return parse_float if len(vals) == len(defaults) else parse_auto
    if vals and all(isinstance(v, str) for v in vals):
        return parse_str
    return parse_auto


@dataclass
class LearnerOption:
    """One generated option: its parameter, spec, and default per learner class."""

    param: str
    spec: ParamSpec
    parse: object
    defaults: dict            # class -> default
    doc: str


def learner_options(classes=None):
    """{parameter: LearnerOption} over every parameter of ``classes`` (default: all learners)."""
    classes = learner_classes() if classes is None else list(classes)
    table = {}
    for cls in classes:
        docs = docstring_params(cls)
        for name, default in class_defaults(cls).items():
            opt = table.get(name)
            if opt is None:
                spec = PARAMS.get(name, ParamSpec())
                opt = table[name] = LearnerOption(name, spec, spec.parse, {}, "")
            opt.defaults[cls] = default
            if not opt.doc and docs.get(name):
                opt.doc = docs[name]
    for opt in table.values():
        if opt.parse is None:
            opt.parse = _infer_parser(list(opt.defaults.values()))
        elif opt.parse is not FLAG and any(isinstance(d, str) and d == "auto" for d in opt.defaults.values()):
            opt.parse = _or_auto(opt.parse)
    return table


def _or_auto(parse):
    """``parse``, letting the word ``auto`` through (a parameter whose default adapts to the data)."""
    def parse_or_auto(text):
        return "auto" if text.strip().lower() == "auto" else parse(text)
    parse_or_auto.__doc__ = parse.__doc__
    parse_or_auto.__wrapped__ = parse          # what it parses besides "auto" (the sweep grids' integers)
    return parse_or_auto


def format_value(value, none_means="none"):
    """A parameter value as a person reads it (None -> ``none_means``)."""
    if value is None:
        return none_means
    if isinstance(value, (bool, np.bool_)):
        return "on" if value else "off"
    if isinstance(value, float) or isinstance(value, np.floating):
        return f"{float(value):g}"
    return str(value)


def _default_text(opt, cls=None, fixed=None):
    if cls is not None:
        if fixed and opt.param in fixed:
            return f"{format_value(fixed[opt.param])}, set by the algorithm name"
        return format_value(opt.defaults[cls], opt.spec.none_means)
    texts = {c: format_value(d, opt.spec.none_means) for c, d in opt.defaults.items()}
    if len(set(texts.values())) == 1:
        return next(iter(texts.values()))
    return "depends on the algorithm: " + ", ".join(f"{c.family} {t}" for c, t in texts.items())


class _ParamAction(argparse.Action):
    """Store a learner parameter in ``namespace.learner_params`` with the option string used."""

    def __init__(self, option_strings, dest, param=None, flag=False, **kwargs):
        if flag:
            kwargs["nargs"] = 0
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, **kwargs)
        self.param = param
        self.flag = flag

    def __call__(self, parser, namespace, values, option_string=None):
        if self.flag:
            values = not option_string.startswith("--no-")
        given = getattr(namespace, "learner_params", None)
        if given is None:
            given = {}
            setattr(namespace, "learner_params", given)
        given[self.param] = (values, option_string)


def add_learner_options(parser, cls=None, fixed=None, classes=None, title=None):
    """Add one option per learner parameter to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    cls : learner class, optional
        The chosen algorithm: its defaults appear in the help and options of other learners are
        hidden from the help (they still parse, so the tool can say they do not apply).
    fixed : dict, optional
        Parameters fixed by the algorithm name (``fogd-logit`` fixes the loss).
    classes : learner classes, default: every registered learner.

    Returns
    -------
    dict: parameter -> LearnerOption
    """
    table = learner_options(classes)
    taken = set(parser._option_string_actions)
    group = parser.add_argument_group(title or "learner options")
    all_classes = learner_classes() if classes is None else list(classes)
    for name, opt in table.items():
        spec = opt.spec
        strings = [option_name(name), *spec.aliases]
        if spec.short:
            strings.insert(0, spec.short)
        strings = [s for s in strings if s not in taken]
        if not any(s.startswith("--") for s in strings):
            strings.append("--learner-" + name.replace("_", "-"))
        flag = opt.parse is FLAG
        if flag:
            strings += ["--no-" + s[2:] for s in strings if s.startswith("--")]
            strings = [s for s in strings if s not in taken]
        taken.update(strings)
        applicable = cls is None or cls in opt.defaults
        helptext = argparse.SUPPRESS
        if applicable:
            helptext = spec.help or opt.doc or f"see the {' / '.join(c.__name__ for c in opt.defaults)} docstring"
            if cls is None and len(opt.defaults) < len(all_classes):
                helptext += f" [{', '.join(c.family for c in opt.defaults)} only]"
            helptext += f" (default: {_default_text(opt, cls, fixed)})"
            helptext = helptext.replace("%", "%%")
        kwargs = dict(param=name, flag=flag, dest="_lp_" + name, help=helptext)
        if not flag:
            kwargs.update(type=opt.parse, metavar=spec.metavar or name.upper())
        group.add_argument(*strings, action=_ParamAction, **kwargs)
    return table


def given_params(namespace):
    """{parameter: (value, option string used)} of the learner options given on the command line."""
    return dict(getattr(namespace, "learner_params", None) or {})


def check_applicable(cls, given, algorithm, always=ALWAYS_ALLOWED):
    """UsageError naming the first given option that ``cls`` (algorithm ``algorithm``) lacks."""
    names = set(cls._get_param_names()) | set(always)
    for param, (_, option_string) in given.items():
        if param not in names:
            own = ", ".join(option_name(p) for p in cls._get_param_names())
            raise UsageError(f"option {option_string} does not apply to {algorithm} "
                             f"(its options: {own})")


# ---- the argument parser -----------------------------------------------------------------------

class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """``-D, --n-components D`` instead of ``-D D, --n-components D``; descriptions kept as written."""

    def __init__(self, prog, indent_increment=2, max_help_position=30, width=None):
        if width is None:
            try:
                width = min(os.get_terminal_size().columns, 110) - 2
            except OSError:
                width = 98
        super().__init__(prog, indent_increment, max_help_position, width)

    def _format_action_invocation(self, action):
        if not action.option_strings or action.nargs == 0:
            return super()._format_action_invocation(action)
        metavar = self._format_args(action, self._get_default_metavar_for_optional(action))
        return ", ".join(action.option_strings) + " " + metavar


class Parser(argparse.ArgumentParser):
    """ArgumentParser that raises :class:`UsageError` instead of printing and exiting, and
    suggests the closest option for a misspelt one."""

    algorithm = None   # the chosen algorithm's name, for messages

    def error(self, message):
        m = re.match(r"unrecognized arguments: (\S+)", message)
        if m:
            bad = m.group(1)
            if bad.startswith("-"):
                key = bad.split("=", 1)[0]
                if key in known_param_options():
                    # a parameter of the specification that no available learner has (yet)
                    raise UsageError(f"option {key} does not apply to "
                                     f"{self.algorithm or 'any available algorithm'}")
                close = difflib.get_close_matches(key, list(self._option_string_actions), n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]}?" if close else ""
                raise UsageError(f"unknown option {key}{hint} (see --help)")
            raise UsageError(f"unexpected argument {bad!r} (see --help)")
        raise UsageError(message)
