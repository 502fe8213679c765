"""Fake numpy for tests/bench (see _fakegpu.py): scalar types, dtypes, host arrays."""
import _fakegpu

_fakegpu.missing("numpy")
__version__ = "0.0-fake"


class _Type:
    def __init__(self, name, itemsize, kind):
        self.name, self.itemsize, self.kind = name, itemsize, kind

    def __call__(self, value):
        return _Scalar(self, value)

    def __repr__(self):
        return "dtype(%r)" % self.name


class _Scalar:
    def __init__(self, dtype, value):
        self.dtype, self.value = dtype, value


float32, float64 = _Type("float32", 4, "f"), _Type("float64", 8, "f")
int32, int64, uint8 = _Type("int32", 4, "i"), _Type("int64", 8, "i"), _Type("uint8", 1, "u")


def dtype(x):
    if isinstance(x, _Type):
        return x
    raise TypeError("fake numpy: unknown dtype %r" % (x,))


class ndarray:
    def __init__(self, shape, dtype, pinned=False):
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.dtype, self.pinned, self.touched = dtype, pinned, False
        self.size = 1
        for d in self.shape:
            self.size *= d
        self.nbytes = self.size * dtype.itemsize

    def __setitem__(self, key, value):
        self.touched = True


def ones(shape, dtype=float64):
    a = ndarray(shape, dtype)
    a.touched = True
    return a
