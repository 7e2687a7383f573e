# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""RandomStream: one numbered seed stream (onlinekern.seeding) drawn from inside nogil steps.

The bit generator is numpy's own PCG64 (reached through its capsule), so the state can be
inspected, pickled and written to model files as numpy's ``bit_generator.state`` dict, and
``integers``/``random`` reproduce ``Generator.integers(n)`` (Lemire's bounded method on 32-bit
draws for n <= 2^32, exactly as numpy's ``random_bounded_uint64_fill``) and ``Generator.random()``.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport uint32_t, uint64_t, UINT32_MAX, UINT64_MAX

import numpy as np
from onlinekern.seeding import rng

cdef extern from *:
    ctypedef unsigned long long u128 "unsigned __int128"


cdef inline uint32_t lemire32(bitgen_t* bg, uint32_t rng_incl) noexcept nogil:
    # numpy/random/src/distributions/distributions.c: buffered_bounded_lemire_uint32
    cdef uint32_t rng_excl = rng_incl + 1
    cdef uint64_t m = (<uint64_t>bg.next_uint32(bg.state)) * rng_excl
    cdef uint32_t leftover = <uint32_t>m
    cdef uint32_t threshold
    if leftover < rng_excl:
        threshold = (UINT32_MAX - rng_incl) % rng_excl
        while leftover < threshold:
            m = (<uint64_t>bg.next_uint32(bg.state)) * rng_excl
            leftover = <uint32_t>m
    return <uint32_t>(m >> 32)


cdef inline uint64_t lemire64(bitgen_t* bg, uint64_t rng_incl) noexcept nogil:
    # numpy's bounded_lemire_uint64 (128-bit product), for n > 2^32
    cdef uint64_t rng_excl = rng_incl + 1
    cdef u128 m = (<u128>bg.next_uint64(bg.state)) * rng_excl
    cdef uint64_t leftover = <uint64_t>m
    cdef uint64_t threshold
    if leftover < rng_excl:
        threshold = (UINT64_MAX - rng_incl) % rng_excl
        while leftover < threshold:
            m = (<u128>bg.next_uint64(bg.state)) * rng_excl
            leftover = <uint64_t>m
    return <uint64_t>(m >> 64)


cdef class RandomStream:
    """The numpy Generator of ``(seed, stream, *keys)`` with nogil draws.

    Parameters
    ----------
    seed : int
    stream : int, one of the stream numbers of onlinekern.seeding
    keys : ints appended to the spawn key
    state : dict, optional; numpy ``bit_generator.state`` to resume from (model files)
    """

    def __init__(self, seed, int stream, *keys, state=None):
        self.generator = rng(seed, stream, *keys)
        if state is not None:
            self.state = state
        capsule = self.generator.bit_generator.capsule
        self.bitgen = <bitgen_t*>PyCapsule_GetPointer(capsule, "BitGenerator")

    cdef Py_ssize_t integers(self, Py_ssize_t n) noexcept nogil:
        if n <= 1:
            return 0                              # numpy draws nothing when high - low == 1
        if <uint64_t>(n - 1) <= UINT32_MAX:
            if <uint64_t>(n - 1) == UINT32_MAX:
                return <Py_ssize_t>self.bitgen.next_uint32(self.bitgen.state)
            return <Py_ssize_t>lemire32(self.bitgen, <uint32_t>(n - 1))
        return <Py_ssize_t>lemire64(self.bitgen, <uint64_t>(n - 1))

    cdef double random(self) noexcept nogil:
        return self.bitgen.next_double(self.bitgen.state)

    def py_integers(self, Py_ssize_t n):
        """integers(n) from Python (tests)."""
        return self.integers(n)

    def py_random(self):
        """random() from Python (tests)."""
        return self.random()

    @property
    def state(self):
        """numpy's bit_generator.state dict (plain ints; JSON-ready)."""
        return self.generator.bit_generator.state

    @state.setter
    def state(self, value):
        self.generator.bit_generator.state = value

    def __reduce__(self):
        return (_rebuild_stream, (self.state,))


def _rebuild_stream(state):
    s = RandomStream(0, 0)
    s.state = state
    return s
