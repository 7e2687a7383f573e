from libc.stdint cimport uint32_t, uint64_t
from numpy.random cimport bitgen_t

# A numpy PCG64 stream usable without the GIL.  integers(n) and random() consume the bit
# generator exactly as numpy's Generator.integers(n) and Generator.random() do, so a NumPy
# reference that draws from rng(seed, stream) sees the same numbers in the same order.
cdef class RandomStream:
    cdef object generator               # numpy.random.Generator (keeps the bit generator alive)
    cdef bitgen_t* bitgen
    cdef Py_ssize_t integers(self, Py_ssize_t n) noexcept nogil    # uniform in [0, n)
    cdef double random(self) noexcept nogil                        # uniform in [0, 1)
