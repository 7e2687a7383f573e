"""Data input/output: the LIBSVM / svmlight text format (plain, gzip, bzip2, xz)."""
from .libsvm import LibsvmFormatError, load_libsvm, save_libsvm, stream_libsvm

__all__ = ["LibsvmFormatError", "load_libsvm", "save_libsvm", "stream_libsvm"]
