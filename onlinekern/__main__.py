"""``python -m onlinekern``: the version, and which command-line tool does what.

    python -m onlinekern --version     # onlinekern X.Y.Z
    python -m onlinekern               # the list of tools below

Each tool runs as ``python -m onlinekern.TOOL`` (or the ``onlinekern-TOOL`` script) and has its
own ``--help``.
"""
import sys

import onlinekern

TOOLS = (
    ("train", "learn online from a LIBSVM file; report the online mistake rate or RMSE, save a model"),
    ("predict", "predict a LIBSVM file with a saved model"),
    ("sweep", "grid-search hyper-parameters over learners and data sets, in parallel"),
    ("report", "tables and figures from sweep results"),
)


def usage():
    """The short usage text that ``python -m onlinekern`` prints.

    Returns
    -------
    str
        One line per tool, ``python -m onlinekern.TOOL`` and what it does.
    """
    width = max(len(name) for name, _ in TOOLS)
    lines = [f"onlinekern {onlinekern.__version__}: online kernel learning", "",
             "usage: python -m onlinekern.TOOL [options]   (python -m onlinekern.TOOL --help for each)", ""]
    lines += [f"  {name:<{width}}  {what}" for name, what in TOOLS]
    lines += ["", "python -m onlinekern --version prints the version."]
    return "\n".join(lines)


def main(argv=None):
    """Entry point of ``python -m onlinekern``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0, or 2 for an unknown argument.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["--version"], ["-V"]):
        print(f"onlinekern {onlinekern.__version__}")
        return 0
    if argv in ([], ["-h"], ["--help"]):
        print(usage())
        return 0
    print(f"python -m onlinekern: error: unknown argument {argv[0]!r}; the tools are "
          f"{', '.join(name for name, _ in TOOLS)}: python -m onlinekern.{TOOLS[0][0]} ...", file=sys.stderr)
    print(usage(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
