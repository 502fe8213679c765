#!/usr/bin/env python3
"""numpy as the reference for culua's tests (tests/numpy/npref.lua drives it).

Reads a JSON list of cases from the file argv[1]; each case is
    {"expr": "np.sort(a, stable=True)", "inputs": {"a": {"dtype": "f32", "shape": [2, 3],
     "values": [...]}}, "scalars": {"k": 2}}
and writes to argv[2] a JSON list of results, one per case:
    {"dtype": "f32", "shape": [...], "values": [...]}          an array (or a numpy scalar)
    {"tuple": [result, result, ...]}                          a tuple of arrays
    {"error": "ValueError: ..."}                              numpy raised
Values are flat, in row-major order. Floats that JSON cannot hold are strings: "nan", "inf",
"-inf", and -0.0 is "-0"; complex values are [re, im] pairs; bools are true/false.
Python standard library and numpy only.
"""
import json
import math
import sys

import numpy as np

DTYPES = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}


def decode_float(v):
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}[v]
    return float(v)


def to_array(d):
    dt = d["dtype"]
    if dt == "bf16":
        raise ValueError("numpy has no bfloat16: give the values as f32")
    t = DTYPES[dt]
    vals = d["values"] or []  # culua's JSON writes an empty list as {}
    if dt in ("c64", "c128"):
        flat = [complex(decode_float(v[0]), decode_float(v[1])) for v in vals]
    elif dt in ("f16", "f32", "f64"):
        flat = [decode_float(v) for v in vals]
    else:
        flat = vals
    return np.array(flat, dtype=t).reshape(d["shape"] or [])


def encode_float(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0 and math.copysign(1.0, x) < 0:
        return "-0"
    return x


def from_array(r):
    if isinstance(r, tuple) or (isinstance(r, list) and r and isinstance(r[0], np.ndarray)):
        return {"tuple": [from_array(x) for x in r]}
    a = np.asarray(r)
    name = NAMES.get(a.dtype)
    if name is None:
        return {"error": "unsupported result dtype %s" % a.dtype}
    flat = a.reshape(-1).tolist()
    if name in ("c64", "c128"):
        vals = [[encode_float(v.real), encode_float(v.imag)] for v in flat]
    elif name in ("f16", "f32", "f64"):
        vals = [encode_float(v) for v in flat]
    else:
        vals = flat
    return {"dtype": name, "shape": list(a.shape), "values": vals}


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    out = []
    for case in cases or []:
        env = {"np": np, "math": math}
        try:
            for k, v in (case.get("inputs") or {}).items():
                env[k] = to_array(v)
            env.update(case.get("scalars") or {})
            with np.errstate(all="ignore"):
                out.append(from_array(eval(case["expr"], env)))
        except Exception as e:  # noqa: BLE001 (numpy's error is the expected result)
            out.append({"error": "%s: %s" % (type(e).__name__, e)})
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
