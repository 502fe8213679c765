"""Fake cupy for tests/bench (see _fakegpu.py). No bfloat16, like CuPy before ml_dtypes."""
import re
import types

import _fakegpu
from _fakegpu import on_stream

_fakegpu.missing("cupy")
import numpy  # noqa: E402  (CuPy needs numpy)

__version__ = "0.0-fake"
float32, float64, uint8 = numpy.float32, numpy.float64, numpy.uint8


class ndarray:
    def __init__(self, shape, dtype=float64):
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.dtype = numpy.dtype(dtype)
        self.size = 1
        for d in self.shape:
            self.size *= d
        self.nbytes = self.size * self.dtype.itemsize
        self.mem = _fakegpu.Memory(self.nbytes)

    def sum(self):
        on_stream()
        return ndarray((), self.dtype)

    def fill(self, value):
        on_stream()

    def astype(self, dtype, copy=True):
        return ndarray(self.shape, dtype)

    def __mul__(self, other):
        return ndarray(self.shape, self.dtype)

    __sub__ = __add__ = __mul__

    def _host(self, arr):
        if (not isinstance(arr, numpy.ndarray) or arr.shape != self.shape
                or arr.dtype is not self.dtype):
            raise TypeError("fake cupy: host array does not match")

    def set(self, arr, stream=None):
        self._host(arr)
        on_stream()

    def get(self, stream=None, order="C", out=None, blocking=True):
        self._host(out)
        on_stream()
        if stream is not None and not blocking and not out.pinned:
            raise RuntimeError("fake cupy: asynchronous copy into pageable memory")
        return out


def empty(shape, dtype=float64):
    return ndarray(shape, dtype)


ones = empty


def full(shape, value, dtype=float64):
    return ndarray(shape, dtype)


def _same(*arrays):
    if len({(a.shape, a.dtype.name) for a in arrays}) != 1:
        raise ValueError("fake cupy: operands differ")


def add(a, b, out=None):
    _same(a, b, out)
    on_stream()
    return out


def copyto(dst, src, casting="same_kind", where=None):
    if dst.shape != src.shape:
        raise ValueError("fake cupy: shapes differ")
    on_stream()


def matmul(a, b, out=None):
    _same(a, b, out)
    on_stream()
    return out


random = types.SimpleNamespace(random=lambda shape, dtype=float64: ndarray(shape, dtype))


class _Pool:
    def free_all_blocks(self):
        pass


def get_default_memory_pool():
    return _Pool()


get_default_pinned_memory_pool = get_default_memory_pool
_CTYPES = {"float*": "float32", "const float*": "float32", "float": "float32", "int": "int32",
           "double": "float64", "long long": "int64"}


class RawModule:
    def __init__(self, code):
        self.params = {}
        for name, params in re.findall(r'extern "C" __global__ void (\w+)\(([^)]*)\)', code):
            self.params[name] = [p.rsplit(" ", 1)[0].strip()
                                 for p in params.split(",") if p.strip()]

    def get_function(self, name):
        params = self.params[name]

        def launch(grid, block, args, shared_mem=0):
            on_stream()
            if len(args) != len(params):
                raise TypeError("fake cupy: %s takes %d arguments" % (name, len(params)))
            for ctype, arg in zip(params, args):
                pointer = ctype.endswith("*")
                if pointer != isinstance(arg, ndarray) or arg.dtype.name != _CTYPES[ctype]:
                    raise TypeError("fake cupy: %s: %r for %s" % (name, arg, ctype))
        return launch


def _device_count():
    return 0 if _fakegpu.MODE == "nogpu" else 1


def _free(ptr):
    _fakegpu.context()


class _Device:
    def __init__(self, i):
        self.i = i

    def use(self):
        pass


class Event(_fakegpu.Event):
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        super().__init__()


class Graph:
    """cupy.cuda.graph.Graph: made by Stream.end_capture() only."""

    def __init__(self, nodes):
        self.nodes = nodes

    def launch(self, stream=None):
        _fakegpu.launch_graph(stream if stream is not None else _fakegpu.state["streams"][-1],
                              self.nodes)


class Stream(_fakegpu.Stream):
    def begin_capture(self, mode=None):
        if mode not in (None, 0, 1, 2):
            raise ValueError("fake cupy: capture mode %r" % (mode,))
        self.start_capture()

    def end_capture(self):
        return Graph(self.stop_capture())


def _stream(null=False, non_blocking=False):
    return Stream(non_blocking)


runtime = types.SimpleNamespace(
    getDeviceCount=_device_count, free=_free, runtimeGetVersion=lambda: 12040,
    driverGetVersion=lambda: 12080, getDeviceProperties=lambda i: {"name": b"Fake GPU"},
    streamCaptureModeGlobal=0, streamCaptureModeThreadLocal=1, streamCaptureModeRelaxed=2)
cuda = types.SimpleNamespace(runtime=runtime, Device=_Device, Stream=_stream, Event=Event,
                             get_elapsed_time=lambda e0, e1: e0.ms_to(e1))
