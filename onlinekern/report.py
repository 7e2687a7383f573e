"""``python -m onlinekern.report``: runs :func:`onlinekern.experiments.report_cli.main`.

The tables and plots themselves are :mod:`onlinekern.experiments.report`.
"""
import sys

from onlinekern.experiments.report_cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
