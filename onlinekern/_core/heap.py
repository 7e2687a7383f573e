"""Give the C heap's free memory back to the operating system during long passes.

A pass over a large file allocates and frees chunks of tens of megabytes (the parsed rows) and
grows a model's buffers by reallocation.  glibc's allocator serves such blocks from the heap once
it has freed one of that size (its mmap threshold rises with the largest block freed, up to
32 MiB), and free pages between live blocks then stay resident: measured on BSGD-merge over a
500,000-row text file through ``train --stream``, about 60 MB of the peak RSS.  ``malloc_trim``
returns those pages (``madvise`` on every free page, not only the heap's top).  Where the C
library has no ``malloc_trim`` (not glibc), :func:`trim` does nothing.
"""
import ctypes
import ctypes.util

_trim = None
try:                                    # glibc only; musl and macOS have no malloc_trim
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _trim = _libc.malloc_trim
    _trim.argtypes = [ctypes.c_size_t]
    _trim.restype = ctypes.c_int
except (OSError, AttributeError):
    _trim = None

#: True where the C library can give free heap pages back (glibc).
AVAILABLE = _trim is not None


def trim():
    """Return the C heap's free pages to the operating system (glibc's ``malloc_trim(0)``).

    Returns
    -------
    bool
        True when memory was released, False when none was or the C library cannot.
    """
    return bool(_trim(0)) if _trim is not None else False
