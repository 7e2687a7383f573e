"""``python -m onlinekern.sweep`` and ``onlinekern.sweep``: the engine is :mod:`onlinekern.experiments`.

This module only re-exports the public function and runs the command line; the package imports
it to export ``onlinekern.sweep`` (the function).
"""
import sys
import warnings

from onlinekern.experiments.sweep_cli import main
from onlinekern.experiments.sweep import sweep

__all__ = ["main", "sweep"]

# ``onlinekern/__init__.py`` imports this module, so ``python -m onlinekern.sweep`` finds it in
# sys.modules before running it as __main__ and runpy warns that this "may result in
# unpredictable behaviour".  It does not here: __main__ only calls the imported ``main``.
warnings.filterwarnings("ignore", message=r"'onlinekern\.sweep' found in sys\.modules",
                        category=RuntimeWarning)

if __name__ == "__main__":
    sys.exit(main())
