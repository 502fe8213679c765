"""numpy's matmul of the cases that tests/numpy/test_matmul_numpy.lua writes (JSON), for that
test to compare with culua's results. Usage: matmul_reference.py CASES.json RESULTS.json.
Exits 77 (skipped) when numpy is not installed."""
import json
import sys

try:
    import numpy as np
except ImportError:
    sys.exit(77)

NUMPY = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8, "i16": np.int16,
    "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u32": np.uint32, "bool": np.bool_,
    "u16": np.uint16, "u64": np.uint64,
    "c64": np.complex64, "c128": np.complex128,
}
CULUA = {np.dtype(v).name: k for k, v in NUMPY.items()}


def operand(spec):
    values = spec["values"]
    if spec["dtype"] in ("c64", "c128"):
        values = [complex(re, im) for re, im in values]
    a = np.array(values, dtype=NUMPY[spec["dtype"]]).reshape(spec["shape"])
    if spec.get("trans") and a.ndim >= 2:
        a = a.swapaxes(-1, -2)
    return a


def plain(x):
    if isinstance(x, (complex, np.complexfloating)):
        return [float(x.real), float(x.imag)]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    return float(x)


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    results = []
    for case in cases:
        with np.errstate(all="ignore"):
            r = np.matmul(operand(case["a"]), operand(case["b"]))
        r = np.asarray(r)
        # u64 values as their int64 bit patterns: Lua integers are signed (the test reads culua's
        # u64 results through astype("i64") too)
        flat = r.reshape(-1)
        if r.dtype == np.uint64:
            flat = flat.view(np.int64)
        results.append({
            "dtype": CULUA[r.dtype.name],
            "shape": list(r.shape),
            "values": [plain(x) for x in flat.tolist()],
        })
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)


main()
