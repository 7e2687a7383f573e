"""One module per algorithm.  Importing this package imports every module in it and registers
each learner class it defines (a subclass of OnlineLearner with a ``family`` name), so adding a
learner means adding one file: no list to edit here or anywhere else."""
import importlib
import pkgutil

from onlinekern.base import OnlineLearner
from onlinekern.registry import register

__all__ = []

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):
        continue
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _obj in list(vars(_module).values()):
        if (isinstance(_obj, type) and issubclass(_obj, OnlineLearner) and _obj.family
                and _obj.__module__ == _module.__name__):
            register(_obj)
            globals()[_obj.__name__] = _obj
            __all__.append(_obj.__name__)
__all__.sort()
