#!/usr/bin/env python3
"""The CuPy and PyTorch side of culua's performance suite.

The contract is docs/performance.md: the record format, the operations and how each one is
measured, and the command line, which is the same as `culua-baseline suite`'s:

    python3 scripts/bench/peers.py --impl cupy|torch [--ops LIST] [--reps R] [--launches N]
        [--bw-sizes LIST] [--transfer-sizes LIST] [--alloc-sizes LIST] [--matmul-sizes LIST]
        [--sort-keys N] [--fft-points N] [--reduce-bytes BYTES]

Standard output carries one JSON record per line and nothing else: an `info` record first, then
one record per measurement (figures, `error` or `absent`). Without the module or without a GPU
the only record is `{"impl": ..., "absent": reason}` and the exit status is 0; bad arguments
exit with 2. Only the standard library is imported at the top: numpy comes with the peer.
"""

import argparse
import functools
import gc
import json
import os
import platform
import re
import statistics
import sys
import time

GROUPS = ("launch", "add1k", "graph", "bandwidth", "transfer", "alloc", "matmul", "arrays",
          "startup")
EMPTY_SOURCE = r"""extern "C" __global__ void empty0() {}
extern "C" __global__ void empty4(float* a, const float* b, float c, int n) {}
extern "C" __global__ void empty8(float* a, const float* b, float c, int n, float* d, const float* e, double f, long long g) {}
"""
ENQUEUE_COUNT = 1000  # enqueue_* and sync_*: calls per repetition
ALLOC_COUNT, ALLOC_WARM = 1000, 100
WARM_CALLS = 100  # warm-up calls before the launch and add1k measurements
BATCH_TARGET_MS, BATCH_MAX, BATCH_PROBE = 2.0, 2000, 3
NO_RAW_KERNELS = "PyTorch launches no raw kernels"
GRAPH_NODES = 1000  # launches captured into one graph (the graph group)


class Absent(Exception):
    """An operation this implementation cannot do (reported as absent, not as a failure)."""


def emit(rec):
    print(json.dumps(rec), flush=True)


def log(msg):
    print("peers.py: " + msg, file=sys.stderr, flush=True)


def describe(exc):
    return "%s: %s" % (type(exc).__name__, str(exc).strip())


# ------------------------------------------------------------------------------------------------
# Command line


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*([KkMmGg]?)\s*", text)
    if not m or int(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError("bad size %r (bytes, optional suffix K, M or G)" % text)
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2).upper()]


def size_list(text):
    return [parse_size(t) for t in text.split(",")]


def count_list(text):
    out = []
    for t in text.split(","):
        if not re.fullmatch(r"\s*\d+\s*", t) or int(t) <= 0:
            raise argparse.ArgumentTypeError("bad matrix size %r (a plain positive N)" % t)
        out.append(int(t))
    return out


def group_list(text):
    groups = [g.strip() for g in text.split(",")]
    for g in groups:
        if g not in GROUPS:
            raise argparse.ArgumentTypeError("unknown group %r (one of %s)"
                                             % (g, ", ".join(GROUPS)))
    return groups


def positive(text):
    if not re.fullmatch(r"\d+", text) or int(text) <= 0:
        raise argparse.ArgumentTypeError("expected a positive integer, got %r" % text)
    return int(text)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    p.add_argument("--impl", required=True, choices=("cupy", "torch"))
    p.add_argument("--ops", type=group_list, default=list(GROUPS), help="comma-separated groups")
    p.add_argument("--reps", type=positive, default=11)
    p.add_argument("--launches", type=positive, default=10000)
    p.add_argument("--bw-sizes", type=size_list, default=[4096 << 2 * i for i in range(11)])
    p.add_argument("--transfer-sizes", type=size_list, default=[4096 << 2 * i for i in range(10)])
    p.add_argument("--alloc-sizes", type=size_list, default=[4096 << 2 * i for i in range(10)])
    p.add_argument("--matmul-sizes", type=count_list, default=[1024, 2048, 4096, 8192])
    p.add_argument("--sort-keys", type=positive, default=1 << 26)
    p.add_argument("--fft-points", type=positive, default=1 << 24)
    p.add_argument("--reduce-bytes", type=parse_size, default=1 << 30)
    return p.parse_args(argv)  # exits with status 2 on bad arguments


# ------------------------------------------------------------------------------------------------
# Timing, shared by both implementations. A peer gives event(), record(ev), elapsed_ms(e0, e1)
# (which waits for e1), sync() (the stream) and free().


def warm(peer, fn, calls):
    for _ in range(calls):
        fn()
    peer.sync()


def time_events(peer, fn, count):
    """Device milliseconds between events around `count` back-to-back calls."""
    e0, e1 = peer.event(), peer.event()
    peer.record(e0)
    for _ in range(count):
        fn()
    peer.record(e1)
    return peer.elapsed_ms(e0, e1)


def time_host(peer, fn, count, sync_each=False):
    """Host seconds to issue `count` calls onto the idle stream (each one waited for if
    sync_each)."""
    sync = peer.sync
    sync()
    t0 = time.perf_counter()
    if sync_each:
        for _ in range(count):
            fn()
            sync()
    else:
        for _ in range(count):
            fn()
    elapsed = time.perf_counter() - t0
    sync()
    return elapsed


def batched_ms(peer, fn, reps):
    """The batch rule: a batch lasts about 2 ms (1..2000 operations), chosen once from a warm
    batch of a few; returns (batch, milliseconds per operation of each repetition)."""
    warm(peer, fn, 2)
    probe = time_events(peer, fn, BATCH_PROBE) / BATCH_PROBE
    batch = BATCH_MAX if probe <= 0 else max(1, min(BATCH_MAX, int(round(BATCH_TARGET_MS / probe))))
    return batch, [time_events(peer, fn, batch) / batch for _ in range(reps)]


def sig(x):
    return float("%.6g" % x)


def figures(unit, values, how, batch=None):
    rec = {"unit": unit, "median": sig(statistics.median(values)), "min": sig(min(values)),
           "max": sig(max(values)), "n": len(values)}
    if batch is not None:
        rec["batch"] = batch
    rec["how"] = how
    return rec


def guarded(peer, op, size, body, out=emit):
    """Runs one measurement: its figures, or an absent or error record; then frees memory."""
    rec = {"impl": peer.impl, "op": op}
    if size is not None:
        rec["size"] = size
    error = None
    try:
        rec.update(body())
    except Absent as e:
        rec["absent"] = str(e)
    except Exception as e:  # one failed measurement must not stop the run
        error = describe(e)[:2000]
    if error is not None:  # outside the handler: the traceback no longer holds the arrays
        rec["error"] = error
    out(rec)
    peer.free()


# ------------------------------------------------------------------------------------------------
# The measurements of the contract, on a peer's callables


def m_launch_events(peer, make, args):
    fn, how = make()
    warm(peer, fn, WARM_CALLS)
    n = args.launches
    vals = [time_events(peer, fn, n) * 1e3 / n for _ in range(args.reps)]
    return figures("us", vals, "%s; events around %d back-to-back calls, / %d" % (how, n, n))


def m_enqueue(peer, make, args):
    fn, how = make()
    warm(peer, fn, WARM_CALLS)
    vals = [time_host(peer, fn, ENQUEUE_COUNT) * 1e6 / ENQUEUE_COUNT for _ in range(args.reps)]
    return figures("us", vals, "%s; host time of %d calls onto the idle stream, / %d"
                   % (how, ENQUEUE_COUNT, ENQUEUE_COUNT))


def m_sync(peer, make, args):
    fn, how = make()
    warm(peer, fn, WARM_CALLS)
    vals = [time_host(peer, fn, ENQUEUE_COUNT, sync_each=True) * 1e6 / ENQUEUE_COUNT
            for _ in range(args.reps)]
    return figures("us", vals, "%s; host time of %d x (call, stream.synchronize()), / %d"
                   % (how, ENQUEUE_COUNT, ENQUEUE_COUNT))


def m_bandwidth(peer, op, size, args):
    fn, how, moved = peer.bandwidth(op, size)
    batch, ms = batched_ms(peer, fn, args.reps)
    vals = [moved / (t * 1e-3) / 1e9 for t in ms]
    return figures("GB/s", vals, "%s; %d bytes moved; events around a batch" % (how, moved), batch)


def m_transfer(peer, op, size, args):
    fn, how, clock = peer.transfer(op, size)
    warm(peer, fn, 2)
    if clock == "events":
        ms = [time_events(peer, fn, 1) for _ in range(args.reps)]
        how += "; events around one copy"
    else:
        ms = [time_host(peer, fn, 1) * 1e3 for _ in range(args.reps)]
        how += "; host clock (time.perf_counter) around one copy"
    return figures("GB/s", [size / (t * 1e-3) / 1e9 for t in ms], how)


def m_alloc(peer, size, args):
    fn, how = peer.alloc(size)
    warm(peer, fn, ALLOC_WARM)
    vals = [time_host(peer, fn, ALLOC_COUNT) * 1e6 / ALLOC_COUNT for _ in range(args.reps)]
    return figures("us", vals, "%s; host time of %d pairs after %d, / %d"
                   % (how, ALLOC_COUNT, ALLOC_WARM, ALLOC_COUNT))


def m_matmul(peer, dtype, n, args):
    fn, how = peer.matmul(dtype, n)
    batch, ms = batched_ms(peer, fn, args.reps)
    vals = [2.0 * n ** 3 / (t * 1e-3) / 1e12 for t in ms]
    return figures("TFLOP/s", vals, "%s; 2N^3 flops; events around a batch" % how, batch)


def graph_record(rec):
    rec["nodes"] = GRAPH_NODES
    return rec


def m_graph_replay(peer, make, args):
    """Per node of a graph of GRAPH_NODES calls: events around `launches` / GRAPH_NODES replays
    (at least one), divided by the nodes they ran."""
    fn, how = make()
    warm(peer, fn, GRAPH_NODES)  # eagerly: kernels compiled and loaded before the capture
    launch, graph_how = peer.graph(fn, GRAPH_NODES)
    warm(peer, launch, 2)
    replays = max(1, args.launches // GRAPH_NODES)
    nodes = replays * GRAPH_NODES
    vals = [time_events(peer, launch, replays) * 1e3 / nodes for _ in range(args.reps)]
    return graph_record(figures("us", vals, "%d x (%s) captured: %s; events around %d replays, / "
                                "%d nodes" % (GRAPH_NODES, how, graph_how, replays, nodes), nodes))


def m_graph_capture(peer, make, args):
    """Host time to capture GRAPH_NODES calls and instantiate the graph, the stream idle."""
    fn, how = make()
    warm(peer, fn, GRAPH_NODES)
    peer.capture(fn, GRAPH_NODES)  # warm-up
    vals = []
    for _ in range(args.reps):
        peer.sync()
        seconds, capture_how = peer.capture(fn, GRAPH_NODES)
        vals.append(seconds * 1e3)
    return graph_record(figures("ms", vals, "%d x (%s); host time of %s, the stream idle"
                                % (GRAPH_NODES, how, capture_how)))


def m_graph_instantiate(peer, make, args):
    make()  # absent as the other graph operations where the peer cannot run the kernel
    raise Absent(peer.INSTANTIATE_ALONE)


def run_groups(peer, args):
    groups = args.ops
    if "launch" in groups:
        log("launch")
        for k in (0, 4, 8):
            make = functools.partial(peer.empty_kernel, k)
            guarded(peer, "launch_rtc%d" % k, None, lambda: m_launch_events(peer, make, args))
            guarded(peer, "enqueue_rtc%d" % k, None, lambda: m_enqueue(peer, make, args))
        make0 = functools.partial(peer.empty_kernel, 0)
        guarded(peer, "sync_empty", None, lambda: m_sync(peer, make0, args))
    if "add1k" in groups:
        log("add1k")
        guarded(peer, "launch_add1k", None, lambda: m_launch_events(peer, peer.add1k, args))
        guarded(peer, "enqueue_add1k", None, lambda: m_enqueue(peer, peer.add1k, args))
        guarded(peer, "sync_add1k", None, lambda: m_sync(peer, peer.add1k, args))
    if "graph" in groups:
        log("graph")
        for kind, make in (("empty", functools.partial(peer.empty_kernel, 0)),
                           ("add1k", peer.add1k)):
            guarded(peer, "graph_" + kind, None, lambda: m_graph_replay(peer, make, args))
            guarded(peer, "graph_capture_" + kind, None, lambda: m_graph_capture(peer, make, args))
            guarded(peer, "graph_instantiate_" + kind, None,
                    lambda: m_graph_instantiate(peer, make, args))
    if "bandwidth" in groups:
        log("bandwidth")
        for size in args.bw_sizes:
            for op in ("copy", "add", "sum", "cast"):
                guarded(peer, op, size, lambda: m_bandwidth(peer, op, size, args))
    if "transfer" in groups:
        log("transfer")
        for size in args.transfer_sizes:
            for op in ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"):
                guarded(peer, op, size, lambda: m_transfer(peer, op, size, args))
    if "alloc" in groups:
        log("alloc")
        for size in args.alloc_sizes:
            guarded(peer, "alloc", size, lambda: m_alloc(peer, size, args))
    if "matmul" in groups:
        log("matmul")
        for n in args.matmul_sizes:
            for dtype in ("f32", "bf16", "f64"):
                guarded(peer, "matmul_" + dtype, n, lambda: m_matmul(peer, dtype, n, args))
    if "arrays" in groups:
        log("arrays")
        for op in ("sort_f32", "argsort_f32", "sort_i32", "argsort_i32", "fft_c64", "cumsum", "any",
                   "any_bool", "std"):
            size = (args.fft_points if op == "fft_c64" else
                    args.sort_keys if "sort" in op else args.reduce_bytes)
            guarded(peer, op, size, lambda: m_arrays(peer, op, size, args))


# ------------------------------------------------------------------------------------------------
# The arrays group: the numbers of culua-baseline's fill_uniform (a splitmix64 hash of the index
# and a seed), made with numpy or CuPy (xp), so that every side sorts and transforms the same keys
# and the suite can compare the results (the records' `check`).

SEEDS = {"f32": 0x243f6a8885a308d3, "i32": 0x13198a2e03707344, "re": 0x452821e638d01377,
         "im": 0x0be5466cf34e90c6}


def hash_bits(xp, n, seed):
    u = xp.uint64
    x = u(seed) ^ (xp.arange(n, dtype=xp.uint64) * u(0xd1b54a32d192ed03))
    x = x + u(0x9e3779b97f4a7c15)
    x = (x ^ (x >> u(30))) * u(0xbf58476d1ce4e5b9)
    x = (x ^ (x >> u(27))) * u(0x94d049bb133111eb)
    return x ^ (x >> u(31))


def fill_keys(xp, n, dtype, seed):
    """float32 uniform in [-1, 1) (2 k / 2^24 - 1, k the hash's top 24 bits) or int32 (the hash's
    top 32 bits), as culua-baseline's fill_uniform."""
    x = hash_bits(xp, n, seed)
    if dtype == "i32":
        return (x >> xp.uint64(32)).astype(xp.uint32).view(xp.int32)
    f = xp.float32
    return f(2) * ((x >> xp.uint64(40)).astype(f) * f(2.0 ** -24)) - f(1)


def check_positions(n):
    """The 0-based indices of the 1-based positions 1, n/4, n/2, 3n/4, n (suite.lua's)."""
    return [max(p, 1) - 1 for p in (1, n // 4, n // 2, 3 * n // 4, n)]


def m_arrays(peer, op, size, args):
    """sort_*, argsort_* and fft_c64: ms per call; cumsum, any, any_bool, std: GB/s. Each result
    is checked once before timing."""
    fn, how, moved, check = peer.arrays(op, size)
    batch, ms = batched_ms(peer, fn, args.reps)
    if moved is None:
        rec = figures("ms", ms, how + "; events around a batch", batch)
    else:
        rec = figures("GB/s", [moved / (t * 1e-3) / 1e9 for t in ms],
                      "%s; %d bytes moved; events around a batch" % (how, moved), batch)
    if check is not None:
        rec["check"] = check
    return rec


def arrays_check(xp, op, a, result):
    """Checks a sort, argsort or fft result of the peer's array module xp; returns the values the
    suite compares with the native side's (None for argsort)."""
    n = a.shape[0]
    if op.startswith("sort"):
        if n > 1 and not bool((result[1:] >= result[:-1]).all()):
            raise RuntimeError("the sort's output is not sorted")
        return [float(result[i]) for i in check_positions(n)]
    if op.startswith("argsort"):
        if not bool((a[result] == xp.sort(a)).all()):
            raise RuntimeError("a[argsort(a)] is not sorted")
        return None
    back = xp.fft.ifft(result)
    err = float(abs(back - a).max())
    if not err <= 1e-4:
        raise RuntimeError("ifft(fft(x)) differs from x by %g" % err)
    out = []
    for k in (0, 1, n // 2, n - 1):
        z = complex(result[k])
        out += [z.real, z.imag]
    return out


# ------------------------------------------------------------------------------------------------
# CuPy


class CupyPeer:
    impl = "cupy"

    def __init__(self):
        # f32 matmul without TF32: CuPy reads CUPY_TF32 at its first matmul.
        self.tf32_env = os.environ.pop("CUPY_TF32", None)
        import cupy  # raises ImportError where CuPy (or numpy) is missing
        self.cp = cupy
        self.stream = None
        self._bf16 = None

    def device_missing(self):
        n = self.cp.cuda.runtime.getDeviceCount()  # no context yet (cudaGetDeviceCount)
        return None if n > 0 else "no CUDA device (cupy.cuda.runtime.getDeviceCount() = 0)"

    def create_context(self):
        self.cp.cuda.runtime.free(0)
        return ("cupy.cuda.runtime.free(0) (cudaFree(0) creates the primary context of device 0); "
                "cupy.cuda.runtime.getDeviceCount() ran before it and is not counted")

    def setup(self):
        import numpy
        import cupyx
        self.np, self.cupyx = numpy, cupyx
        self.cp.cuda.Device(0).use()
        self.stream = self.cp.cuda.Stream(non_blocking=True)
        self.sync = self.stream.synchronize

    def current(self):
        return self.stream  # `with stream:` makes it current

    def event(self):
        return self.cp.cuda.Event()

    def record(self, ev):
        ev.record(self.stream)

    def elapsed_ms(self, e0, e1):
        e1.synchronize()
        return self.cp.cuda.get_elapsed_time(e0, e1)

    def free(self):
        gc.collect()
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()

    def info(self):
        rt, cp = self.cp.cuda.runtime, self.cp
        ver = lambda v: "%d.%d" % (v // 1000, v % 1000 // 10)
        info = {"cupy": cp.__version__, "cuda": ver(rt.runtimeGetVersion()),
                "driver": ver(rt.driverGetVersion()),
                "device": _text(rt.getDeviceProperties(0)["name"]),
                "numpy": self.np.__version__, "python": platform.python_version()}
        if self.tf32_env is not None:
            info["CUPY_TF32"] = "removed from the environment (was %r)" % self.tf32_env
        return info

    def first_kernel(self):
        x = self.cp.empty(1, dtype=self.cp.float32)  # the allocation stays out of the figure
        t0 = time.perf_counter()
        x.fill(1.0)
        self.stream.synchronize()
        return (time.perf_counter() - t0, "x.fill(1.0) on a float32[1] (CuPy's elementwise copy "
                "kernel: NVRTC compile or CuPy's on-disk kernel cache, module load), then "
                "stream.synchronize()")

    def empty_kernel(self, k):
        cp, np = self.cp, self.np
        if not hasattr(self, "_empty"):
            module = cp.RawModule(code=EMPTY_SOURCE)
            self._empty = {i: module.get_function("empty%d" % i) for i in (0, 4, 8)}
            self._buf = cp.ones(256, dtype=cp.float32)
        buf = self._buf
        kernel_args = {0: (),
                       4: (buf, buf, np.float32(1.5), np.int32(256)),
                       8: (buf, buf, np.float32(1.5), np.int32(256), buf, buf, np.float64(2.5),
                           np.int64(7))}[k]
        argtext = {0: "()", 4: "(buf, buf, numpy.float32(1.5), numpy.int32(256))",
                   8: "(buf, buf, numpy.float32(1.5), numpy.int32(256), buf, buf, "
                      "numpy.float64(2.5), numpy.int64(7))"}[k]
        fn = functools.partial(self._empty[k], (1,), (1,), kernel_args)
        return fn, ("cupy.RawModule(code=<contract source>).get_function('empty%d')"
                    "((1,), (1,), %s), buf = float32[256]" % (k, argtext))

    def add1k(self):
        cp = self.cp
        a, b = cp.ones(1024, dtype=cp.float32), cp.full(1024, 2.0, dtype=cp.float32)
        c = cp.empty(1024, dtype=cp.float32)
        return functools.partial(cp.add, a, b, out=c), "cupy.add(a, b, out=c), float32[1024]"

    INSTANTIATE_ALONE = "Stream.end_capture() instantiates the graph: timed with the capture"

    def _capture(self, fn, nodes):
        """The graph of `nodes` calls of fn captured on the stream (thread-local mode, as culua
        captures, where this CuPy has the constant)."""
        s, runtime = self.stream, self.cp.cuda.runtime
        mode = getattr(runtime, "streamCaptureModeThreadLocal", None)
        if mode is None:
            s.begin_capture()
        else:
            s.begin_capture(mode=mode)
        try:
            for _ in range(nodes):
                fn()
        finally:
            graph = s.end_capture()  # instantiates
        text = "s.begin_capture(%s); %d calls; g = s.end_capture()" % (
            "" if mode is None else "mode=cupy.cuda.runtime.streamCaptureModeThreadLocal", nodes)
        return graph, text

    def graph(self, fn, nodes):
        graph, text = self._capture(fn, nodes)
        return functools.partial(graph.launch, stream=self.stream), text + "; g.launch(stream=s)"

    def capture(self, fn, nodes):
        t0 = time.perf_counter()
        graph, text = self._capture(fn, nodes)
        seconds = time.perf_counter() - t0
        del graph
        return seconds, text + " (which instantiates the graph)"

    def bfloat16(self):
        """ml_dtypes.bfloat16 where this CuPy supports it (newer CuPy with ml_dtypes), else
        Absent: CuPy itself has no bfloat16 dtype, and float16 is no substitute."""
        if self._bf16 is None:
            try:
                import ml_dtypes
                dt = self.np.dtype(ml_dtypes.bfloat16)
                probe = self.cp.ones((16, 16), dtype=self.cp.float32).astype(dt)
                self.cp.matmul(probe, probe)
                self.stream.synchronize()
                self._bf16 = dt
            except Exception as e:
                self._bf16 = "CuPy has no bfloat16 dtype (CuPy %s: %s)" % (self.cp.__version__,
                                                                             describe(e))
        if isinstance(self._bf16, str):
            raise Absent(self._bf16)
        return self._bf16

    def bandwidth(self, op, size):
        cp = self.cp
        n = max(1, size // 4)
        a = cp.ones(n, dtype=cp.float32)
        if op == "copy":
            dst = cp.empty(n, dtype=cp.float32)
            fn, how = functools.partial(cp.copyto, dst, a), "cupy.copyto(dst, src), float32"
            return fn, how, 2 * a.nbytes
        if op == "add":
            b, c = cp.full(n, 2.0, dtype=cp.float32), cp.empty(n, dtype=cp.float32)
            fn, how = functools.partial(cp.add, a, b, out=c), "cupy.add(a, b, out=c), float32"
            return fn, how, 3 * a.nbytes
        if op == "sum":
            return a.sum, "a.sum(), float32, into a new 0-d device array (no host read)", a.nbytes
        if op == "cast":
            dst = cp.empty(n, dtype=self.bfloat16())
            return (functools.partial(cp.copyto, dst, a, casting="unsafe"),
                    "cupy.copyto(dst, src, casting='unsafe'), float32 -> ml_dtypes.bfloat16",
                    a.nbytes + dst.nbytes)
        raise ValueError(op)

    def transfer(self, op, size):
        cp, np, s = self.cp, self.np, self.stream
        dev = cp.ones(size, dtype=cp.uint8)
        if op.endswith("pinned"):
            host = self.cupyx.empty_pinned((size,), dtype=np.uint8)
            host[...] = 1
            if op == "h2d_pinned":
                return (functools.partial(dev.set, host, stream=s),
                        "d.set(h, stream=s), h = cupyx.empty_pinned(uint8)", "events")
            try:  # CuPy >= 13 waits for the copy unless blocking=False
                dev.get(stream=s, out=host, blocking=False)
                fn = functools.partial(dev.get, stream=s, out=host, blocking=False)
                text = ", blocking=False"
            except TypeError:  # older CuPy: a copy on a given stream is asynchronous
                fn, text = functools.partial(dev.get, stream=s, out=host), ""
            s.synchronize()
            return fn, "d.get(stream=s, out=h%s), h = cupyx.empty_pinned(uint8)" % text, "events"
        host = np.ones(size, dtype=np.uint8)  # pageable, touched
        sync = s.synchronize
        if op == "h2d_pageable":
            def h2d():
                dev.set(host)
                sync()
            return h2d, "d.set(h) then stream.synchronize(), h = numpy.ones(uint8)", "host"

        def d2h():
            dev.get(out=host)
            sync()
        return d2h, "d.get(out=h) then stream.synchronize(), h = numpy.ones(uint8)", "host"

    def alloc(self, size):
        cp = self.cp

        def pair():
            x = cp.empty(size, dtype=cp.uint8)
            del x
        return pair, "x = cupy.empty(size, dtype=cupy.uint8); del x (CuPy's default memory pool)"

    def matmul(self, dtype, n):
        cp = self.cp
        dt = {"f32": cp.float32, "f64": cp.float64, "bf16": None}[dtype]
        if dt is None:
            dt = self.bfloat16()
        gen = cp.float64 if dtype == "f64" else cp.float32
        a = (cp.random.random((n, n), dtype=gen) * 2 - 1).astype(dt)
        b = (cp.random.random((n, n), dtype=gen) * 2 - 1).astype(dt)
        c = cp.empty((n, n), dtype=dt)
        how = "cupy.matmul(a, b, out=c), %s, operands uniform in [-1, 1)" % dtype
        if dtype == "f32":
            how += ", no TF32 (CUPY_TF32 %s)" % ("unset" if self.tf32_env is None
                                                  else "removed, was %r" % self.tf32_env)
        elif dtype == "bf16":
            how += " (ml_dtypes.bfloat16, cuBLAS compute 32F)"
        return functools.partial(cp.matmul, a, b, out=c), how


    def arrays(self, op, size):
        """(fn, how, bytes moved or None for a time, check values) of an arrays-group operation."""
        cp = self.cp
        if "sort" in op or op == "fft_c64":
            if op == "fft_c64":
                a = cp.empty(size, dtype=cp.complex64)
                a.real[...] = fill_keys(cp, size, "f32", SEEDS["re"])
                a.imag[...] = fill_keys(cp, size, "f32", SEEDS["im"])
                fn, how = functools.partial(cp.fft.fft, a), "cupy.fft.fft(a), complex64"
            else:
                dtype = op.split("_")[1]
                a = fill_keys(cp, size, dtype, SEEDS[dtype])
                f = cp.sort if op.startswith("sort") else cp.argsort
                fn, how = functools.partial(f, a), "cupy.%s(a), %s" % (f.__name__, dtype)
            self.stream.synchronize()
            check = arrays_check(cp, op, a, fn())
            return fn, how + " (the suite's fill formula; a new array each call)", None, check
        n = size // 4
        if op == "cumsum":
            a, c = cp.random.random(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)
            fn = functools.partial(cp.cumsum, a, out=c)
            fn()
            if abs(float(c[-1]) - float(a.sum())) > 1e-3 * float(a.sum()):
                raise RuntimeError("cumsum's last element is not the sum")
            return fn, "cupy.cumsum(a, out=c), float32 uniform in [0, 1)", 2 * a.nbytes, None
        if op in ("any", "any_bool"):
            a = cp.zeros(n if op == "any" else size, dtype=cp.float32 if op == "any" else cp.bool_)
            if bool(a.any()):
                raise RuntimeError("any() of zeros is true")
            return a.any, "a.any(), %s zeros, into a new 0-d device array" % a.dtype, a.nbytes, None
        if op == "std":
            a = cp.random.random(n, dtype=cp.float32)
            if abs(float(a.std()) - (1 / 12) ** 0.5) > 0.02:
                raise RuntimeError("std() of uniform [0, 1) is %g" % float(a.std()))
            return a.std, "a.std(), float32 uniform in [0, 1), into a new 0-d device array", \
                a.nbytes, None
        raise ValueError(op)

def _text(name):
    return name.decode(errors="replace") if isinstance(name, bytes) else str(name)


# ------------------------------------------------------------------------------------------------
# PyTorch


class TorchPeer:
    impl = "torch"

    def __init__(self):
        import torch  # raises ImportError where PyTorch is missing
        self.torch = torch
        self.stream = None

    def device_missing(self):
        t = self.torch
        if t.cuda.is_available():  # cudaGetDeviceCount, no context
            return None
        if t.version.cuda is None:
            return "torch.cuda.is_available() is False (a CPU-only build of PyTorch)"
        return "torch.cuda.is_available() is False (no usable CUDA device)"

    def create_context(self):
        self.torch.cuda.init()
        self.torch.cuda.synchronize()
        return ("torch.cuda.init() then torch.cuda.synchronize() (cudaDeviceSynchronize creates "
                "the primary context of device 0); torch.cuda.is_available() ran before it and "
                "is not counted")

    def setup(self):
        t = self.torch
        t.cuda.set_device(0)
        self.dev = t.device("cuda", 0)
        self.stream = t.cuda.Stream(device=self.dev)  # PyTorch creates it non-blocking
        self.sync = self.stream.synchronize

    def current(self):
        return self.torch.cuda.stream(self.stream)

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def record(self, ev):
        ev.record(self.stream)

    def elapsed_ms(self, e0, e1):
        e1.synchronize()
        return e0.elapsed_time(e1)

    def free(self):
        gc.collect()
        self.torch.cuda.empty_cache()

    def info(self):
        t = self.torch
        return {"torch": t.__version__, "cuda": t.version.cuda,
                "device": t.cuda.get_device_name(0), "python": platform.python_version()}

    def first_kernel(self):
        x = self.torch.empty(1, device=self.dev)  # the allocation stays out of the figure
        t0 = time.perf_counter()
        x.fill_(1.0)
        self.stream.synchronize()
        return (time.perf_counter() - t0, "x.fill_(1.0) on a float32[1] (PyTorch's precompiled "
                "fill kernel, lazy module load), then stream.synchronize()")

    def empty_kernel(self, k):
        raise Absent(NO_RAW_KERNELS)

    def add1k(self):
        t, dev = self.torch, self.dev
        a = t.ones(1024, device=dev)
        b, c = t.full((1024,), 2.0, device=dev), t.empty(1024, device=dev)
        return functools.partial(t.add, a, b, out=c), "torch.add(a, b, out=c), float32[1024]"

    INSTANTIATE_ALONE = "CUDAGraph.capture_end() instantiates the graph: timed with the capture"

    def graph(self, fn, nodes):
        """torch.cuda.graph on the stream, thread-local capture mode as culua's (where this
        PyTorch has capture_error_mode)."""
        t = self.torch
        g = t.cuda.CUDAGraph()
        try:
            ctx = t.cuda.graph(g, stream=self.stream, capture_error_mode="thread_local")
            mode = ", capture_error_mode='thread_local'"
        except TypeError:  # PyTorch before 2.1: global mode only
            ctx, mode = t.cuda.graph(g, stream=self.stream), ""
        with ctx:
            for _ in range(nodes):
                fn()
        return g.replay, ("g = torch.cuda.CUDAGraph(); with torch.cuda.graph(g, stream=s%s): "
                          "%d calls; g.replay()" % (mode, nodes))

    def capture(self, fn, nodes):
        """capture_begin() to capture_end() (which instantiates): what torch.cuda.graph's
        __enter__ and __exit__ call, without its torch.cuda.synchronize(), gc.collect() and
        torch.cuda.empty_cache()."""
        g = self.torch.cuda.CUDAGraph()
        t0 = time.perf_counter()
        try:
            g.capture_begin(capture_error_mode="thread_local")
            mode = "capture_error_mode='thread_local'"
        except TypeError:  # PyTorch before 2.1: global mode only
            g.capture_begin()
            mode = ""
        try:
            for _ in range(nodes):
                fn()
        finally:
            g.capture_end()
        seconds = time.perf_counter() - t0
        del g
        return seconds, ("g.capture_begin(%s); %d calls; g.capture_end() (which instantiates "
                         "the graph), g = torch.cuda.CUDAGraph() made before, s current"
                         % (mode, nodes))

    def bandwidth(self, op, size):
        t, dev = self.torch, self.dev
        n = max(1, size // 4)
        a = t.ones(n, device=dev)
        nbytes = a.element_size() * n
        if op == "copy":
            dst = t.empty(n, device=dev)
            return functools.partial(dst.copy_, a), "dst.copy_(src), float32", 2 * nbytes
        if op == "add":
            b, c = t.full((n,), 2.0, device=dev), t.empty(n, device=dev)
            fn, how = functools.partial(t.add, a, b, out=c), "torch.add(a, b, out=c), float32"
            return fn, how, 3 * nbytes
        if op == "sum":
            return a.sum, "a.sum(), float32, into a new 0-d device tensor (no host read)", nbytes
        if op == "cast":
            dst = t.empty(n, dtype=t.bfloat16, device=dev)
            return (functools.partial(dst.copy_, a), "dst.copy_(src), float32 -> bfloat16",
                    nbytes + dst.element_size() * n)
        raise ValueError(op)

    def transfer(self, op, size):
        t = self.torch
        dev = t.ones(size, dtype=t.uint8, device=self.dev)
        if op.endswith("pinned"):
            host = t.empty(size, dtype=t.uint8, pin_memory=True).fill_(1)
            clock, nb, kind = "events", True, "torch.empty(size, dtype=uint8, pin_memory=True)"
        else:
            host = t.ones(size, dtype=t.uint8)  # pageable, touched
            clock, nb, kind = "host", False, "torch.ones(size, dtype=uint8) on the CPU"
        if op.startswith("h2d"):
            return (functools.partial(dev.copy_, host, non_blocking=nb),
                    "d.copy_(h, non_blocking=%s), h = %s" % (nb, kind), clock)
        return (functools.partial(host.copy_, dev, non_blocking=nb),
                "h.copy_(d, non_blocking=%s), h = %s" % (nb, kind), clock)

    def alloc(self, size):
        t, dev = self.torch, self.dev

        def pair():
            x = t.empty(size, dtype=t.uint8, device=dev)
            del x
        return pair, ("x = torch.empty(size, dtype=torch.uint8, device='cuda'); del x "
                      "(PyTorch's caching allocator)")

    def matmul(self, dtype, n):
        t, dev = self.torch, self.dev
        t.backends.cuda.matmul.allow_tf32 = False
        flags = "torch.backends.cuda.matmul.allow_tf32 = False"
        if dtype == "bf16" and hasattr(t.backends.cuda.matmul,
                                       "allow_bf16_reduced_precision_reduction"):
            t.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
            flags += ", allow_bf16_reduced_precision_reduction = False (f32 accumulation)"
        dt = {"f32": t.float32, "bf16": t.bfloat16, "f64": t.float64}[dtype]
        gen = t.float64 if dtype == "f64" else t.float32
        a = (t.rand((n, n), dtype=gen, device=dev) * 2 - 1).to(dt)
        b = (t.rand((n, n), dtype=gen, device=dev) * 2 - 1).to(dt)
        c = t.empty((n, n), dtype=dt, device=dev)
        how = "torch.matmul(a, b, out=c), %s, operands uniform in [-1, 1), %s" % (dtype, flags)
        return functools.partial(t.matmul, a, b, out=c), how


    def arrays(self, op, size):
        """(fn, how, bytes moved or None for a time, check values) of an arrays-group operation.
        The keys come from numpy on the host (PyTorch has no uint64 arithmetic to hash with)."""
        t, dev = self.torch, self.dev
        import numpy
        if "sort" in op or op == "fft_c64":
            if op == "fft_c64":
                re = t.from_numpy(fill_keys(numpy, size, "f32", SEEDS["re"])).to(dev)
                im = t.from_numpy(fill_keys(numpy, size, "f32", SEEDS["im"])).to(dev)
                a = t.complex(re, im)
                fn, how = functools.partial(t.fft.fft, a), "torch.fft.fft(a), complex64"
            else:
                dtype = op.split("_")[1]
                a = t.from_numpy(fill_keys(numpy, size, dtype, SEEDS[dtype])).to(dev)
                if op.startswith("sort"):
                    fn = lambda: t.sort(a).values
                    how = "torch.sort(a) (values and indices), %s" % dtype
                else:
                    fn, how = functools.partial(t.argsort, a), "torch.argsort(a), %s" % dtype
            self.stream.synchronize()
            check = arrays_check(TorchModule(t), op, a, fn())
            return fn, how + " (the suite's fill formula; new tensors each call)", None, check
        n = size // 4
        if op == "cumsum":
            a, c = t.rand(n, device=dev), t.empty(n, device=dev)
            fn = functools.partial(t.cumsum, a, 0, out=c)
            fn()
            if abs(float(c[-1]) - float(a.sum())) > 1e-3 * float(a.sum()):
                raise RuntimeError("cumsum's last element is not the sum")
            return fn, "torch.cumsum(a, 0, out=c), float32 uniform in [0, 1)", 2 * n * 4, None
        if op in ("any", "any_bool"):
            a = t.zeros(n if op == "any" else size, device=dev,
                        dtype=t.float32 if op == "any" else t.bool)
            if bool(a.any()):
                raise RuntimeError("any() of zeros is true")
            return a.any, "a.any(), %s zeros, into a new 0-d tensor" % a.dtype, \
                a.element_size() * a.numel(), None
        if op == "std":
            a = t.rand(n, device=dev)
            fn = functools.partial(t.std, a, correction=0)
            if abs(float(fn()) - (1 / 12) ** 0.5) > 0.02:
                raise RuntimeError("std of uniform [0, 1) is %g" % float(fn()))
            return fn, "torch.std(a, correction=0), float32 uniform in [0, 1), into a new 0-d " \
                "tensor", n * 4, None
        raise ValueError(op)


class TorchModule:
    """The few array-module functions arrays_check calls, for PyTorch."""

    def __init__(self, torch):
        self.fft = torch.fft
        self._torch = torch

    def sort(self, a):
        return self._torch.sort(a).values

# ------------------------------------------------------------------------------------------------


def main(argv=None):
    args = parse_args(argv)
    impl = args.impl
    try:
        peer = {"cupy": CupyPeer, "torch": TorchPeer}[impl]()
    except Exception as e:
        emit({"impl": impl, "absent": str(e) if isinstance(e, ImportError) else describe(e)})
        return 0
    try:
        missing = peer.device_missing()
    except Exception as e:
        missing = describe(e)
    if missing:
        emit({"impl": impl, "absent": missing})
        return 0

    gc.disable()  # no cycle collection inside timed loops; free() collects between measurements
    held = []  # the startup records follow the info record, but are measured first
    startup = "startup" in args.ops
    t0 = time.perf_counter()
    try:
        how = peer.create_context()
    except Exception as e:
        emit({"impl": impl, "absent": "cannot create a CUDA context: " + describe(e)})
        return 0
    ctx_ms = (time.perf_counter() - t0) * 1e3
    if startup:
        held.append(dict({"impl": impl, "op": "context"}, **figures("ms", [ctx_ms], how)))
    try:
        peer.setup()
    except Exception as e:
        emit({"impl": impl, "absent": "cannot set up device 0: " + describe(e)})
        return 0
    with peer.current():
        if startup:
            def first():
                seconds, how = peer.first_kernel()
                return figures("ms", [seconds * 1e3], how)
            guarded(peer, "first_kernel", None, first, out=held.append)
        try:
            info = peer.info()
        except Exception as e:
            info = {"error": describe(e), "python": platform.python_version()}
        emit({"impl": impl, "info": info})
        for rec in held:
            emit(rec)
        run_groups(peer, args)
        peer.sync()
    return 0


if __name__ == "__main__":
    sys.exit(main())
