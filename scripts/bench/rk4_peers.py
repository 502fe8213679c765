#!/usr/bin/env python3
"""The peers' side of the suite's fuse group: the RK4 loop of scripts/device_resident_loop.lua
(two N x N complex64 matrices, four RK4 stages a step, delta = sum(F) / N^2 read back by the host
every step) written as each peer's users would write it for speed:

    rk4_cupy_fuse      the step as one cupy.fuse function (coefficients as Python scalars), the
                       sum, .item()
    rk4_torch_eager    the step with in-place PyTorch operations, the sum, .item()
    rk4_torch_graph    that step and the sum captured as a CUDA graph per parity (d on the device),
                       replayed, .item()
    rk4_jax_jit        the step and the sum as one jax.jit function, float(delta)

    python3 scripts/bench/rk4_peers.py [--impl cupy|torch|jax|all] [--n N] [--steps S] [--reps R]

One JSON record per line (impl, op, size = N, steps, unit ms, median/min/max of the total time of
the steps over the repetitions after a warm-up run, delta: the last delta); a peer that is not
installed gives {"impl": ..., "absent": reason}. Standard library only at the top.
"""

import argparse
import json
import statistics
import sys
import time


def emit(rec):
    print(json.dumps(rec), flush=True)


def figures(impl, op, args, times, delta, how, first_ms=None):
    rec = {"impl": impl, "op": op, "size": args.n, "steps": args.steps, "unit": "ms",
           "median": statistics.median(times), "min": min(times), "max": max(times),
           "n": len(times), "delta": [delta.real, delta.imag], "how": how}
    if first_ms is not None:
        rec["first_call_ms"] = first_ms
    emit(rec)


def initial(xp, n, dtype_c, dtype_r):
    nn = n * n
    m = xp.arange(nn, dtype=dtype_r).reshape(n, n)
    f0 = (xp.exp(m * (2j / nn)) * 0.1).astype(dtype_c)
    g0 = (m * (0.2 / nn)).astype(dtype_c)
    return f0, g0


def coefficients(d):
    return -1j * d, 1j * d, -1j * d.conjugate()


def run_loop(args, reset, step, sync):
    """reps + 1 runs of `steps` steps (the first is the warm-up): wall ms of each, the last delta
    and the first call's wall time (the first step of the warm-up, compile included)."""
    times, first_ms, delta = [], None, None
    for r in range(args.reps + 1):
        reset()
        sync()
        d = complex(1, 0)
        t0 = time.perf_counter()
        for k in range(args.steps):
            if r == 0 and k == 0:
                t1 = time.perf_counter()
                d = step(k, d)
                first_ms = (time.perf_counter() - t1) * 1e3
            else:
                d = step(k, d)
        ms = (time.perf_counter() - t0) * 1e3
        delta = d
        if r > 0:
            times.append(ms)
    return times, delta, first_ms


def cupy_peer(args):
    import cupy as cp
    n, dt = args.n, args.dt
    nn = n * n
    f0, g0 = initial(cp, n, cp.complex64, cp.float64)

    @cp.fuse()
    def stage(f, g, x, y, af, ag, mid, idd, micd, h, w):
        kf = -2j * x + mid * (2 * y - 1)
        kg = micd * x + idd * cp.conj(x)
        return f + h * kf, g + h * kg, af + w * kf, ag + w * kg

    st = {}

    def reset():
        st["f"], st["g"] = f0.copy(), g0.copy()

    def step(k, d):
        mid, idd, micd = (cp.complex64(c) for c in coefficients(d))
        f, g = st["f"], st["g"]
        h2, h1 = cp.float32(dt / 2), cp.float32(dt)
        x, y, af, ag = stage(f, g, f, g, f, g, mid, idd, micd, h2, cp.float32(dt / 6))
        x, y, af, ag = stage(f, g, x, y, af, ag, mid, idd, micd, h2, cp.float32(dt / 3))
        x, y, af, ag = stage(f, g, x, y, af, ag, mid, idd, micd, h1, cp.float32(dt / 3))
        _, _, af, ag = stage(f, g, x, y, af, ag, mid, idd, micd, h1, cp.float32(dt / 6))
        st["f"], st["g"] = af, ag
        return complex(af.sum().item()) / nn

    times, delta, first = run_loop(args, reset, step, cp.cuda.Device().synchronize)
    figures("cupy", "rk4_cupy_fuse", args, times, delta,
            "four cupy.fuse stage calls a step (each fuses the derivatives and both sums), "
            "a.sum().item()", first)


def torch_peers(args):
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device for PyTorch")
    dev = torch.device("cuda")
    n, dt = args.n, args.dt
    nn = n * n
    m = torch.arange(nn, dtype=torch.float64, device=dev).reshape(n, n)
    f0 = (torch.exp(m * (2j / nn)) * 0.1).to(torch.complex64)
    g0 = (m * (0.2 / nn)).to(torch.complex64)
    names = ["F", "G", "Fa", "Ga", "Fb", "Gb", "X1", "Y1", "X2", "Y2", "kF", "kG", "tmp"]
    s = {k: torch.empty((n, n), dtype=torch.complex64, device=dev) for k in names}

    def derivatives(X, Y, mid, idd, micd):
        torch.mul(Y, 2, out=s["tmp"])
        s["tmp"].sub_(1).mul_(mid)
        torch.mul(X, -2j, out=s["kF"])
        s["kF"].add_(s["tmp"])
        torch.conj_physical(X, out=s["tmp"])
        s["tmp"].mul_(idd)
        torch.mul(X, micd, out=s["kG"])
        s["kG"].add_(s["tmp"])

    def combine(F, G, h, Xn, Yn, w, aF, aG, bF, bG):
        if Xn is not None:
            torch.add(F, s["kF"], alpha=h, out=Xn)
            torch.add(G, s["kG"], alpha=h, out=Yn)
        torch.add(aF, s["kF"], alpha=w, out=bF)
        torch.add(aG, s["kG"], alpha=w, out=bG)

    def rk4(F, G, Fn, Gn, mid, idd, micd):
        derivatives(F, G, mid, idd, micd)
        combine(F, G, dt / 2, s["X1"], s["Y1"], dt / 6, F, G, s["Fa"], s["Ga"])
        derivatives(s["X1"], s["Y1"], mid, idd, micd)
        combine(F, G, dt / 2, s["X2"], s["Y2"], dt / 3, s["Fa"], s["Ga"], Fn, Gn)
        derivatives(s["X2"], s["Y2"], mid, idd, micd)
        combine(F, G, dt, s["X1"], s["Y1"], dt / 3, Fn, Gn, s["Fa"], s["Ga"])
        derivatives(s["X1"], s["Y1"], mid, idd, micd)
        combine(F, G, None, None, None, dt / 6, s["Fa"], s["Ga"], Fn, Gn)

    def reset():
        s["F"].copy_(f0)
        s["G"].copy_(g0)

    # Eager: coefficients as Python complex numbers, ping-pong F/Fb.
    pair = [("F", "G", "Fb", "Gb"), ("Fb", "Gb", "F", "G")]

    def eager_step(k, d):
        a, b, c, e = pair[k % 2]
        mid, idd, micd = coefficients(d)
        rk4(s[a], s[b], s[c], s[e], mid, idd, micd)
        return complex(s[c].sum().item()) / nn

    times, delta, first = run_loop(args, reset, eager_step, torch.cuda.synchronize)
    figures("torch", "rk4_torch_eager", args, times, delta,
            "the step's ~64 in-place operations with out=, the sum, .item()", first)

    # CUDA graph per parity: d, its coefficients and the new delta on the device.
    dd = torch.ones((), dtype=torch.complex64, device=dev)
    coef = [torch.empty((), dtype=torch.complex64, device=dev) for _ in range(3)]
    total = torch.empty((), dtype=torch.complex64, device=dev)

    def graph_body(a, b, c, e):
        torch.mul(dd, -1j, out=coef[0])
        torch.mul(dd, 1j, out=coef[1])
        torch.mul(torch.conj_physical(dd), -1j, out=coef[2])
        rk4(s[a], s[b], s[c], s[e], coef[0], coef[1], coef[2])
        total.copy_(s[c].sum())
        torch.div(total, nn, out=dd)

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up before capture, as PyTorch asks
        for p in pair:
            graph_body(*p)
    torch.cuda.current_stream().wait_stream(stream)
    graphs = []
    for p in pair:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            graph_body(*p)
        graphs.append(g)

    def graph_reset():
        reset()
        dd.fill_(1)

    def graph_step(k, d):
        graphs[k % 2].replay()
        return complex(dd.item())

    times, delta, _ = run_loop(args, graph_reset, graph_step, torch.cuda.synchronize)
    figures("torch", "rk4_torch_graph", args, times, delta,
            "a CUDA graph per parity (coefficients, the step, sum, division on the device), "
            "replay, .item()")


def jax_peer(args):
    import jax
    import jax.numpy as jnp
    if not any(d.platform == "gpu" for d in jax.devices()):
        raise RuntimeError("JAX sees no GPU")
    n, dt = args.n, args.dt
    nn = n * n

    def deriv(x, y, d):
        mid, idd, micd = -1j * d, 1j * d, -1j * jnp.conj(d)
        return -2j * x + mid * (2 * y - 1), micd * x + idd * jnp.conj(x)

    @jax.jit
    def step(f, g, d):
        k1f, k1g = deriv(f, g, d)
        k2f, k2g = deriv(f + dt / 2 * k1f, g + dt / 2 * k1g, d)
        k3f, k3g = deriv(f + dt / 2 * k2f, g + dt / 2 * k2g, d)
        k4f, k4g = deriv(f + dt * k3f, g + dt * k3g, d)
        fn = f + dt / 6 * (k1f + 2 * k2f + 2 * k3f + k4f)
        gn = g + dt / 6 * (k1g + 2 * k2g + 2 * k3g + k4g)
        return fn, gn, jnp.sum(fn) / nn

    m = jnp.arange(nn, dtype=jnp.float32).reshape(n, n)
    f0 = (jnp.exp(m * (2j / nn)) * 0.1).astype(jnp.complex64)
    g0 = (m * (0.2 / nn)).astype(jnp.complex64)
    st = {}

    def reset():
        st["f"], st["g"] = f0, g0

    def one(k, d):
        st["f"], st["g"], delta = step(st["f"], st["g"], jnp.complex64(d))
        return complex(delta)

    times, delta, first = run_loop(args, reset, one, lambda: None)
    figures("jax", "rk4_jax_jit", args, times, delta,
            "the step and the sum as one jax.jit function, complex(delta)", first)


def main(argv=None):
    p = argparse.ArgumentParser(description="The RK4 loop in the peers (the suite's fuse group).")
    p.add_argument("--impl", default="all", choices=["cupy", "torch", "jax", "all"])
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--dt", type=float, default=1e-4)
    args = p.parse_args(argv)
    if args.n < 1 or args.steps < 1 or args.reps < 1:
        p.error("--n, --steps and --reps must be positive")
    peers = {"cupy": cupy_peer, "torch": torch_peers, "jax": jax_peer}
    for name in (peers if args.impl == "all" else [args.impl]):
        try:
            peers[name](args)
        except ImportError as e:
            emit({"impl": name, "absent": "%s: %s" % (type(e).__name__, e)})
        except Exception as e:  # a peer that fails reports it and the others still run
            emit({"impl": name, "op": "rk4", "size": args.n,
                  "error": "%s: %s" % (type(e).__name__, str(e).strip()[:300])})
    return 0


if __name__ == "__main__":
    sys.exit(main())
