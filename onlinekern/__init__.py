"""onlinekern: compiled online kernel learning.

Learners share one API (scikit-learn conventions) over compiled cores; ``run_online`` measures
the online mistake rate or RMSE the papers report; ``load_libsvm`` reads LIBSVM files fast.
"""
from onlinekern.version import __version__  # noqa: F401

try:
    from onlinekern._core import learner as _compiled  # noqa: F401
except ImportError as _exc:  # a source tree whose extensions were never built
    import os as _os
    raise ImportError(
        f"onlinekern's compiled extensions are not built in {_os.path.dirname(__file__)}: run "
        "'pip install -e .' in the source tree, or import onlinekern from outside it after 'pip install .'"
    ) from _exc

from onlinekern._core.features import RandomFourierMap
from onlinekern._core.learner import DivergenceError
from onlinekern.base import NotFittedError, OnlineLearner
from onlinekern.io import LibsvmFormatError, load_libsvm, save_libsvm, stream_libsvm
from onlinekern.io.model import ModelFormatError, load_model, save_model
from onlinekern.kernels import median_gamma
from onlinekern import learners as _learners
from onlinekern.learners import *  # noqa: F401,F403  (every learner class)
from onlinekern.protocol import OnlineResult, default_checkpoints, run_online, run_online_stream
from onlinekern.registry import available_learners, make_learner

__all__ = sorted(_learners.__all__) + [
    "DivergenceError", "LibsvmFormatError", "ModelFormatError", "NotFittedError", "OnlineLearner", "OnlineResult",
    "RandomFourierMap", "available_learners", "default_checkpoints", "load_libsvm",
    "load_model", "make_learner", "median_gamma", "run_online", "run_online_stream", "save_libsvm", "save_model",
    "stream_libsvm", "sweep", "tune",
]
from onlinekern.sweep import sweep  # noqa: E402  (python -m onlinekern.sweep stays the CLI)
from onlinekern.experiments.tuning import tune  # noqa: E402
