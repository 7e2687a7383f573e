"""Model files: everything needed to predict and to resume online learning, never pickled.

Format (version 1): a NumPy ``.npz`` archive (a zip of ``.npy`` arrays) holding

* ``__header__``: UTF-8 JSON (stored as a uint8 array) with ``format`` = "onlinekern-model",
  ``version``, the library version, the learner ``class`` and ``family``, its hyper-parameters,
  its fitted attributes (``classes_``, ``task_``, ``gamma_``, ``n_features_in_``, and the adaptive
  defaults' ``feature_scale_`` and ``resolved_params_``), the compiled
  core's class and state, and the caller's ``extra`` dict (e.g. the CLI's scalers);
* one array per array-valued piece of state, referenced from the JSON as
  ``{"__array__": "name"}``.

``feature_scale_`` is an array of ``n_features_in_`` factors, or for wide sparse data the dict of
a :class:`onlinekern.kernels.ColumnScale` (``kind``, ``columns``, ``factors``, ``n_features``:
two arrays of the columns the width selection saw), so a wide model's file holds no array of the
data's width.

Loading uses ``numpy.load(..., allow_pickle=False)`` and only instantiates classes of the
``onlinekern`` package that are registered learners and compiled cores; anything else, and any
truncated, corrupted, wrong-version or inconsistent file, raises :class:`ModelFormatError`.
Writes go to a temporary file in the target directory and are renamed over the target, so a crash
never leaves a half-written model.
"""
import importlib
import io
import json
import zipfile

import numpy as np

from onlinekern.io.atomic import atomic_write
from onlinekern.kernels import ColumnScale

FORMAT = "onlinekern-model"
VERSION = 1
_FITTED = ("classes_", "task_", "gamma_", "horizon_", "n_features_in_", "feature_scale_", "feature_scale_basis_",
           "resolved_params_")


class ModelFormatError(ValueError):
    """A model file that cannot be loaded: truncated, corrupted, hand-edited or of another version."""

    def __init__(self, path, reason):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def _flatten(value, prefix, arrays):
    """JSON-ready copy of ``value`` with arrays moved into ``arrays``."""
    if isinstance(value, dict):
        return {str(k): _flatten(v, f"{prefix}/{k}", arrays) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_flatten(v, f"{prefix}/{i}", arrays) for i, v in enumerate(value)]
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise TypeError(f"cannot store object array at {prefix}")
        arrays[prefix] = value
        return {"__array__": prefix}
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if value is None or isinstance(value, (int, float, str)):
        return value
    raise TypeError(f"cannot store {type(value).__name__} at {prefix}")


def _unflatten(value, arrays, path):
    if isinstance(value, dict):
        if set(value) == {"__array__"}:
            key = value["__array__"]
            if key not in arrays:
                raise ModelFormatError(path, f"missing array {key!r}")
            return arrays[key]
        return {k: _unflatten(v, arrays, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_unflatten(v, arrays, path) for v in value]
    return value


def save_model(learner, path, extra=None):
    """Save a fitted learner to ``path`` (atomic).  ``extra``: a JSON-ready dict stored alongside.

    ``load_model(path)`` gives a learner that predicts bit-identically and continues learning
    with ``partial_fit`` exactly as the saved one would.
    """
    from onlinekern.version import __version__

    learner._check_fitted()
    arrays = {}
    fitted = {}
    for attr in _FITTED:
        if attr in learner.__dict__:
            value = learner.__dict__[attr]
            if isinstance(value, ColumnScale):
                value = value.get_state()
            fitted[attr] = _flatten(value, f"fitted/{attr}", arrays)
    core = learner.core_
    header = {
        "format": FORMAT,
        "version": VERSION,
        "library": __version__,
        "class": type(learner).__name__,
        "family": learner.family,
        "params": _flatten(learner.get_params(), "params", arrays),
        "fitted": fitted,
        "core_class": f"{type(core).__module__}.{type(core).__name__}",
        "core": _flatten(core.get_state(), "core", arrays),
        "extra": _flatten(extra or {}, "extra", arrays),
    }
    buf = io.BytesIO()
    payload = {"__header__": np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)}
    payload.update(arrays)
    np.savez(buf, **payload)
    atomic_write(path, buf.getvalue())


def _core_class(name, path):
    from onlinekern._core.learner import LearnerCore

    module, _, cls = str(name).rpartition(".")
    if not module.startswith("onlinekern."):
        raise ModelFormatError(path, f"refusing core class {name!r} outside onlinekern")
    try:
        obj = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError):
        raise ModelFormatError(path, f"unknown core class {name!r}") from None
    if not (isinstance(obj, type) and issubclass(obj, LearnerCore)):
        raise ModelFormatError(path, f"{name!r} is not a learner core")
    return obj


def read_model_file(path):
    """(header dict, arrays dict) of a model file, validated; ModelFormatError otherwise."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
        raise ModelFormatError(path, f"not a readable model file ({exc})") from None
    if "__header__" not in arrays:
        raise ModelFormatError(path, "no header: not an onlinekern model file")
    try:
        header = json.loads(arrays.pop("__header__").tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFormatError(path, f"corrupt header ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ModelFormatError(path, "not an onlinekern model file")
    if header.get("version") != VERSION:
        raise ModelFormatError(path, f"model format version {header.get('version')!r}; this onlinekern reads version {VERSION}")
    for key in ("class", "family", "params", "fitted", "core_class", "core", "extra"):
        if key not in header:
            raise ModelFormatError(path, f"header lacks {key!r}")
    return header, arrays


def load_model(path, return_extra=False):
    """Load a learner saved by :func:`save_model` (and its ``extra`` dict if ``return_extra``)."""
    from onlinekern.registry import available_learners

    header, arrays = read_model_file(path)
    families = {info["family"]: info["class"] for info in available_learners().values()}
    cls = families.get(header["family"])
    if cls is None or cls.__name__ != header["class"]:
        raise ModelFormatError(path, f"unknown learner {header['class']!r} ({header['family']!r})")
    try:
        params = _unflatten(header["params"], arrays, path)
        learner = cls(**params)
        learner._validate_params()
        for attr, value in _unflatten(header["fitted"], arrays, path).items():
            if attr not in _FITTED:
                raise ModelFormatError(path, f"unexpected fitted attribute {attr!r}")
            learner.__dict__[attr] = value
        scale = learner.__dict__.get("feature_scale_")
        if isinstance(scale, dict):
            scale = ColumnScale.from_state(scale)
            if scale.n_features != learner.__dict__.get("n_features_in_"):
                raise ModelFormatError(path, "feature_scale_ does not match n_features_in_")
            learner.__dict__["feature_scale_"] = scale
        elif scale is not None:
            scale = np.asarray(scale, dtype=np.float64)
            if scale.shape != (learner.__dict__.get("n_features_in_"),) or not np.all(np.isfinite(scale)):
                raise ModelFormatError(path, "feature_scale_ does not match n_features_in_")
            learner.__dict__["feature_scale_"] = scale
        resolved = learner.__dict__.get("resolved_params_", {})
        if not isinstance(resolved, dict):
            raise ModelFormatError(path, "resolved_params_ is not a mapping")
        for name, value in resolved.items():      # eta_, ... (resolve_params' fitted attributes)
            learner.__dict__[f"{name}_"] = value
        core_cls = _core_class(header["core_class"], path)
        core = core_cls.__new__(core_cls)
        core.set_state(_unflatten(header["core"], arrays, path))
        if core.n_features != learner.__dict__.get("n_features_in_"):
            raise ModelFormatError(path, "core and learner disagree on n_features")
        task = learner.__dict__.get("task_")
        if task != core.task_name:
            raise ModelFormatError(path, f"learner task {task!r} does not match the core's {core.task_name!r}")
        if task in ("binary", "multiclass"):
            n_classes = len(np.asarray(learner.__dict__.get("classes_", [])))
            if n_classes != (2 if task == "binary" else core.n_outputs):
                raise ModelFormatError(path, "classes_ does not match the model's outputs")
        learner.core_ = core
        extra = _unflatten(header["extra"], arrays, path)
    except ModelFormatError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, MemoryError) as exc:
        raise ModelFormatError(path, f"inconsistent model state ({type(exc).__name__}: {exc})") from None
    return (learner, extra) if return_extra else learner
