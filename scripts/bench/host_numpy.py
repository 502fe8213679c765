#!/usr/bin/env python3
"""The numpy side of the host group of culua's performance suite.

The contract is docs/performance.md ("The host group"): the operations, the byte and flop counts
and the timing rule are those of scripts/bench/host.lua (culua on the host backend) and
culua-host-baseline (native loops):

    python3 scripts/bench/host_numpy.py [--ops LIST] [--reps R] [--sizes LIST]
        [--matmul-sizes LIST] [--quick]

Standard output carries one JSON record per line and nothing else: an `info` record first
(numpy's version and the BLAS it runs), then one record per measurement (figures or `error`).
Without numpy the only record is {"impl": "numpy", "absent": reason} and the exit status is 0;
bad arguments exit with 2. Standard library and numpy only.
"""

import argparse
import ctypes
import json
import os
import platform
import re
import statistics
import sys
import time

OPS = ("copy", "add", "sum", "transpose", "matmul")
BATCH_TARGET_MS, BATCH_MAX, BATCH_PROBE = 2.0, 2000, 3
MiB = 1 << 20
DEFAULT_SIZES = [MiB << 2 * i for i in range(5)]  # 1 MiB .. 256 MiB
DEFAULT_MATMUL = [512, 1024, 2048]
QUICK_SIZES, QUICK_MATMUL, QUICK_REPS = [64 << 10, MiB], [64, 128], 3
# Environment variables that set the BLAS's threads (recorded in the info record).
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "CULUA_HOST_THREADS")


def emit(rec):
    print(json.dumps(rec), flush=True)


def describe(exc):
    return "%s: %s" % (type(exc).__name__, str(exc).strip())


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*([KkMmGg]?)\s*", text)
    size = int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[
        m.group(2).upper()] if m else 0
    if size <= 0 or size % 4:
        raise argparse.ArgumentTypeError(
            "bad size %r (a positive multiple of 4 bytes, optional suffix K, M or G)" % text)
    return size


def size_list(text):
    return [parse_size(t) for t in text.split(",")]


def count_list(text):
    out = []
    for t in text.split(","):
        if not re.fullmatch(r"\s*\d+\s*", t) or int(t) <= 0:
            raise argparse.ArgumentTypeError("bad matrix size %r (a plain positive N)" % t)
        out.append(int(t))
    return out


def op_list(text):
    ops = [o.strip() for o in text.split(",")]
    for o in ops:
        if o not in OPS:
            raise argparse.ArgumentTypeError("unknown op %r (one of %s)" % (o, ", ".join(OPS)))
    return ops


def positive(text):
    if not re.fullmatch(r"\d+", text) or int(text) <= 0:
        raise argparse.ArgumentTypeError("expected a positive integer, got %r" % text)
    return int(text)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    p.add_argument("--ops", type=op_list, default=list(OPS), help="comma-separated operations")
    p.add_argument("--reps", type=positive, default=None)
    p.add_argument("--sizes", type=size_list, default=None, help="bytes of one array")
    p.add_argument("--matmul-sizes", type=count_list, default=None)
    p.add_argument("--quick", action="store_true",
                   help="64 KiB and 1 MiB, matmul 64 and 128, 3 repetitions")
    args = p.parse_args(argv)  # exits with status 2 on bad arguments
    if args.reps is None:
        args.reps = QUICK_REPS if args.quick else 11
    if args.sizes is None:
        args.sizes = QUICK_SIZES if args.quick else DEFAULT_SIZES
    if args.matmul_sizes is None:
        args.matmul_sizes = QUICK_MATMUL if args.quick else DEFAULT_MATMUL
    return args


# ------------------------------------------------------------------------------------------------
# Timing: the host clock around a batch (numpy's operations are synchronous)


def batch_ms(fn, batch):
    t0 = time.perf_counter()
    for _ in range(batch):
        fn()
    return (time.perf_counter() - t0) * 1e3 / batch


def batched(fn, reps):
    """Warm-up (2 calls), a probe of 3 calls, then `reps` batches of about 2 ms (1..2000 calls)."""
    fn()
    fn()
    probe = batch_ms(fn, BATCH_PROBE)
    batch = BATCH_MAX if probe <= 0 else max(1, min(BATCH_MAX, int(BATCH_TARGET_MS / probe + 0.5)))
    return [batch_ms(fn, batch) for _ in range(reps)], batch


def sig(x):
    return float("%.6g" % x)


def rate_record(op, size, unit, scale, per_ms, amount, how, batch):
    v = [amount / (max(ms, 1e-9) * scale) for ms in per_ms]
    return {"impl": "numpy", "op": "host_" + op, "size": size, "unit": unit,
            "median": sig(statistics.median(v)), "min": sig(min(v)), "max": sig(max(v)),
            "n": len(v), "batch": batch, "how": how}


# ------------------------------------------------------------------------------------------------
# The operations


def m_copy(np, size, reps):
    n = size // 4
    src, dst = np.full(n, 1.5, np.float32), np.zeros(n, np.float32)
    per, batch = batched(lambda: np.copyto(dst, src), reps)
    if dst[-1] != 1.5:
        raise RuntimeError("copy: wrong result")
    return rate_record("copy", size, "GB/s", 1e6, per, 2 * size, "np.copyto(dst, src)", batch)


def m_add(np, size, reps):
    n = size // 4
    a, b, c = np.full(n, 1.5, np.float32), np.full(n, 2.25, np.float32), np.zeros(n, np.float32)
    per, batch = batched(lambda: np.add(a, b, out=c), reps)
    if c[0] != 3.75 or c[-1] != 3.75:
        raise RuntimeError("add: wrong result")
    return rate_record("add", size, "GB/s", 1e6, per, 3 * size, "np.add(a, b, out=c)", batch)


def m_sum(np, size, reps):
    n = size // 4
    a = np.full(n, 1.0, np.float32)
    per, batch = batched(a.sum, reps)
    if abs(float(a.sum()) - n) > 1e-5 * n:
        raise RuntimeError("sum: wrong result")
    return rate_record("sum", size, "GB/s", 1e6, per, size, "a.sum() (float32)", batch)


def m_transpose(np, size, reps):
    n = int(round((size / 4) ** 0.5))
    if n * n * 4 != size:
        raise RuntimeError("transpose: the size is not 4*n*n bytes")
    src = np.random.default_rng(1).random((n, n), dtype=np.float32)
    dst = np.zeros((n, n), np.float32)
    t = src.T
    per, batch = batched(lambda: np.copyto(dst, t), reps)
    if dst[0, n - 1] != src[n - 1, 0] or dst[n - 1, n - 2] != src[n - 2, n - 1]:
        raise RuntimeError("transpose: wrong result")
    return rate_record("transpose", size, "GB/s", 1e6, per, 2 * size,
                       "np.copyto(dst, src.T), %dx%d" % (n, n), batch)


def m_matmul(np, dtype, n, reps):
    rng = np.random.default_rng(2)
    a = (rng.random((n, n)) * 2 - 1).astype(dtype)
    b = (rng.random((n, n)) * 2 - 1).astype(dtype)
    c = np.empty((n, n), dtype)
    per, batch = batched(lambda: np.matmul(a, b, out=c), reps)
    want = float(np.dot(a[n - 1].astype(np.float64), b[:, 0].astype(np.float64)))
    if abs(float(c[n - 1, 0]) - want) > (1e-3 if dtype == "float32" else 1e-9) * n:
        raise RuntimeError("matmul: wrong result")
    short = {"float32": "f32", "float64": "f64"}[dtype]
    return rate_record("matmul_" + short, n, "GFLOP/s", 1e6, per, 2 * n ** 3,
                       "np.matmul(a, b, out=c), %s, uniform in [-1, 1)" % short, batch)


# ------------------------------------------------------------------------------------------------
# numpy's BLAS: the build's view and the libraries actually loaded


def loaded_blas():
    """Paths of the BLAS libraries mapped into this process (after a matmul has run)."""
    found = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                path = parts[-1] if len(parts) >= 6 else ""
                name = os.path.basename(path).lower()
                if path.startswith("/") and re.search(r"blas|mkl|blis|accelerate", name):
                    real = os.path.realpath(path)
                    if real not in found:
                        found.append(real)
    except OSError:
        pass
    return found


def openblas_runtime(paths):
    """OpenBLAS's own configuration string and thread count, where a loaded library has them."""
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("", ""), ("scipy_", "64_"), ("", "64_"), ("scipy_", "")):
            try:
                config = getattr(lib, "%sopenblas_get_config%s" % (prefix, suffix))
                threads = getattr(lib, "%sopenblas_get_num_threads%s" % (prefix, suffix))
            except AttributeError:
                continue
            config.restype = ctypes.c_char_p
            threads.restype = ctypes.c_int
            return {"library": path, "config": config().decode(errors="replace"),
                    "threads": threads()}
    return None


def blas_info(np):
    info = {"loaded": loaded_blas()}
    runtime = openblas_runtime(info["loaded"])
    if runtime:
        info["openblas"] = runtime
    try:  # numpy >= 1.25
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        info["build"] = deps.get("blas")
    except Exception:  # older numpy: the distutils view
        try:
            opt = np.__config__.get_info("blas_opt_info")
            info["build"] = {k: v for k, v in opt.items() if k in ("libraries", "library_dirs")}
        except Exception as e:
            info["build"] = describe(e)
    return info


# ------------------------------------------------------------------------------------------------


def main(argv=None):
    args = parse_args(argv)
    try:
        import numpy as np
    except ImportError as e:
        emit({"impl": "numpy", "absent": "%s (%s)" % (e, sys.executable)})
        return 0
    x = np.ones((64, 64))
    x @ x  # loads the BLAS, so that /proc/self/maps shows it
    info = {"numpy": np.__version__, "python": platform.python_version(),
            "executable": sys.executable, "cpu_threads": os.cpu_count()}
    try:
        info["blas"] = blas_info(np)
    except Exception as e:
        info["blas"] = describe(e)
    for var in THREAD_VARS:
        if os.environ.get(var):
            info[var] = os.environ[var]
    emit({"impl": "numpy", "info": info})

    def run(op, size, body):
        try:
            emit(body())
        except Exception as e:  # one failed measurement must not stop the run
            emit({"impl": "numpy", "op": "host_" + op, "size": size, "error": describe(e)[:2000]})

    measures = {"copy": m_copy, "add": m_add, "sum": m_sum, "transpose": m_transpose}
    for op in args.ops:
        if op == "matmul":
            for dtype in ("float32", "float64"):
                for n in args.matmul_sizes:
                    run("matmul_" + dtype.replace("float", "f"), n,
                        lambda: m_matmul(np, dtype, n, args.reps))
        else:
            for size in args.sizes:
                run(op, size, lambda: measures[op](np, size, args.reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
