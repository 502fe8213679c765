"""Fake torch for tests/bench (see _fakegpu.py)."""
import types

import _fakegpu
from _fakegpu import on_stream

_fakegpu.missing("torch")
__version__ = "0.0-fake"


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize


float32, bfloat16, float64, uint8 = (dtype("float32", 4), dtype("bfloat16", 2),
                                     dtype("float64", 8), dtype("uint8", 1))


class device:
    def __init__(self, kind, index=0):
        self.type, self.index = kind, index


class Tensor:
    def __init__(self, size, dtype=None, device=None, pin_memory=False):
        self.shape = tuple(size) if isinstance(size, (tuple, list)) else (size,)
        self.dtype = dtype or float32
        self.is_cuda = device is not None and (getattr(device, "type", device) == "cuda")
        self.pinned = pin_memory
        if pin_memory and self.is_cuda:
            raise RuntimeError("fake torch: pinned device tensor")
        n = 1
        for d in self.shape:
            n *= d
        self.numel = n
        if self.is_cuda:
            self.mem = _fakegpu.Memory(n * self.dtype.itemsize)

    def element_size(self):
        return self.dtype.itemsize

    def _work(self):
        if self.is_cuda:
            on_stream()

    def fill_(self, value):
        self._work()
        return self

    def copy_(self, src, non_blocking=False):
        if self.shape != src.shape:
            raise RuntimeError("fake torch: copy_ between shapes")
        host = [t for t in (self, src) if not t.is_cuda]
        if non_blocking and host and not host[0].pinned:
            raise RuntimeError("fake torch: non_blocking copy with pageable memory")
        if self.is_cuda or src.is_cuda:
            on_stream()
        return self

    def sum(self):
        self._work()
        return Tensor((), self.dtype, device("cuda") if self.is_cuda else None)

    def to(self, dt):
        return Tensor(self.shape, dt, device("cuda") if self.is_cuda else None)

    def __mul__(self, other):
        self._work()
        return Tensor(self.shape, self.dtype, device("cuda") if self.is_cuda else None)

    __sub__ = __add__ = __mul__


def empty(*size, dtype=None, device=None, pin_memory=False):
    return Tensor(size[0] if len(size) == 1 else size, dtype, device, pin_memory)


def ones(*size, dtype=None, device=None):
    return empty(*size, dtype=dtype, device=device)


def full(size, value, dtype=None, device=None):
    return empty(size, dtype=dtype, device=device)


def rand(size, dtype=None, device=None):
    return empty(size, dtype=dtype, device=device)


def _same(*ts):
    if len({(t.shape, t.dtype.name, t.is_cuda) for t in ts}) != 1:
        raise RuntimeError("fake torch: operands differ")


def add(a, b, out=None):
    _same(a, b, out)
    on_stream()
    return out


def matmul(a, b, out=None):
    _same(a, b, out)
    on_stream()
    if a.dtype is float32 and backends.cuda.matmul.allow_tf32:
        raise RuntimeError("fake torch: TF32 allowed for an f32 matmul")
    return out


class _Matmul:
    allow_tf32 = True
    allow_bf16_reduced_precision_reduction = True


backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=_Matmul()))
version = types.SimpleNamespace(cuda="12.4")


class Event(_fakegpu.Event):
    def __init__(self, enable_timing=False):
        super().__init__()
        if not enable_timing:
            raise RuntimeError("fake torch: event without timing")

    def elapsed_time(self, end):
        return self.ms_to(end)


def _stream(device=None, priority=0):
    return _fakegpu.Stream(non_blocking=True)


def _sync():
    if _fakegpu.capturing():
        raise RuntimeError("fake torch: torch.cuda.synchronize() while capturing")
    _fakegpu.context()


_CAPTURE_MODES = ("global", "thread_local", "relaxed")


class CUDAGraph:
    def __init__(self):
        self.stream, self.nodes = None, None

    def capture_begin(self, pool=None, capture_error_mode="global"):
        if capture_error_mode not in _CAPTURE_MODES:
            raise RuntimeError("fake torch: capture_error_mode %r" % (capture_error_mode,))
        s = _fakegpu.state["streams"][-1]
        if s is None or not s.non_blocking:
            raise RuntimeError("fake torch: CUDA graphs must be captured on a non-default stream")
        s.start_capture()
        self.stream = s

    def capture_end(self):
        if self.stream is None or self.stream is not _fakegpu.state["streams"][-1]:
            raise RuntimeError("fake torch: capture_end on another stream than capture_begin")
        self.nodes = self.stream.stop_capture()

    def replay(self):
        _fakegpu.launch_graph(_fakegpu.state["streams"][-1], self.nodes)


class graph:
    """torch.cuda.graph: the context manager. The fake insists on stream= (without it PyTorch
    captures on a side stream of its own, not the suite's stream)."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        if stream is None:
            raise RuntimeError("fake torch: torch.cuda.graph without stream=")
        self.g, self.pool, self.stream, self.mode = cuda_graph, pool, stream, capture_error_mode

    def __enter__(self):
        _sync()
        self.stream.__enter__()
        self.g.capture_begin(self.pool, capture_error_mode=self.mode)

    def __exit__(self, *exc):
        self.g.capture_end()
        self.stream.__exit__(*exc)


cuda = types.SimpleNamespace(
    is_available=lambda: _fakegpu.MODE != "nogpu", init=lambda: None, synchronize=_sync,
    set_device=lambda i: None, Stream=_stream, stream=lambda s: s, Event=Event,
    get_device_name=lambda i=0: "Fake GPU", empty_cache=lambda: None, CUDAGraph=CUDAGraph,
    graph=graph)
