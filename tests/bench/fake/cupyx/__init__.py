"""Fake cupyx for tests/bench (see _fakegpu.py)."""
import _fakegpu
import numpy

_fakegpu.missing("cupyx")


def empty_pinned(shape, dtype=float, order="C"):
    return numpy.ndarray(shape, numpy.dtype(dtype), pinned=True)
