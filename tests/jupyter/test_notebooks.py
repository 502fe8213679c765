#!/usr/bin/env python3
"""The example notebooks (examples/notebooks/*.ipynb) executed with culua's kernel by
`jupyter nbconvert --to notebook --execute`:

    test_notebooks.py CULUA [BACKEND] [OUT_DIR]

Each must run with no error output; the sweep's plot must show inline as a PNG. With OUT_DIR the
executed notebooks are written there. Exit 69 (a skip) without nbconvert or without the backend.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

CULUA = os.path.abspath(sys.argv[1])
BACKEND = sys.argv[2] if len(sys.argv) > 2 else "host"
OUT = sys.argv[3] if len(sys.argv) > 3 else None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    if subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--version"], capture_output=True).returncode:
        print("skipped: jupyter nbconvert is not installed")
        return 69
    if subprocess.run([CULUA, "--backend", BACKEND, "-e", ""], capture_output=True).returncode == 69:
        print(f"skipped: the {BACKEND} backend is unavailable")
        return 69
    tmp = tempfile.mkdtemp(prefix="culua-nb-")
    subprocess.run([CULUA, "--install-kernel", "--prefix", tmp], check=True, capture_output=True)
    env = dict(os.environ, JUPYTER_PATH=os.path.join(tmp, "share", "jupyter"), CULUA_BACKEND=BACKEND)
    out_dir = OUT or tmp
    failures = 0
    folder = os.path.join(ROOT, "examples", "notebooks")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".ipynb"):
            continue
        r = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                            "--ExecutePreprocessor.timeout=600", os.path.join(folder, name),
                            "--output-dir", out_dir, "--output", name], env=env, capture_output=True, text=True,
                           cwd=tmp)
        ok = r.returncode == 0
        errors, images = [], 0
        if ok:
            with open(os.path.join(out_dir, name)) as f:
                nb = json.load(f)
            for cell in nb["cells"]:
                for o in cell.get("outputs", []):
                    if o["output_type"] == "error":
                        errors.append(f"{o['ename']}: {o['evalue']}")
                    png = o.get("data", {}).get("image/png")
                    if png and base64.b64decode(png).startswith(b"\x89PNG"):
                        images += 1
        good = ok and not errors and (images > 0 or "plot" not in name)
        print(("ok      " if good else "FAIL    ") + f"{name}: {len(errors)} error cells, {images} images"
              + ("" if ok else "\n" + r.stderr[-2000:]) + "".join("\n  " + e for e in errors))
        failures += not good
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
