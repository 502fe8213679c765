#!/usr/bin/env python3
"""Compiles CUDA sources with NVRTC (no GPU needed), as culua compiles its fused kernels
(--fmad=false -default-device, sm_90 unless --arch). Loads libnvrtc through ctypes from the CUDA
toolkit; exits 69 (skipped) when there is none. Usage: nvrtc_compile.py [--arch sm_XX] FILE..."""
import ctypes
import glob
import os
import sys


def load_nvrtc():
    candidates = ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"]
    for root in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"):
        candidates += sorted(glob.glob(os.path.join(root, "libnvrtc.so*")))
    for name in candidates:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def compile_source(nv, text, name, arch):
    prog = ctypes.c_void_p()
    rc = nv.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), name.encode(), 0, None, None)
    if rc != 0:
        return rc, "nvrtcCreateProgram failed (%d)" % rc
    opts = [("--gpu-architecture=" + arch).encode(), b"--fmad=false", b"-default-device"]
    rc = nv.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetProgramLog(prog, log)
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode(errors="replace")


def main():
    args = sys.argv[1:]
    arch = "sm_90"
    if args[:1] == ["--arch"]:
        arch, args = args[1], args[2:]
    nv = load_nvrtc()
    if nv is None:
        print("skipped: no libnvrtc (the CUDA toolkit is not installed)")
        return 69
    failed = 0
    for path in args:
        with open(path) as f:
            rc, log = compile_source(nv, f.read(), os.path.basename(path), arch)
        if rc != 0:
            failed += 1
            print("FAILED %s (nvrtc %d):\n%s" % (path, rc, log[:4000]))
        elif log.strip():
            failed += 1  # culua compiles its kernels without warnings
            print("WARNINGS %s:\n%s" % (path, log[:4000]))
        else:
            print("ok %s" % path)
    print("%d compiled, %d failed" % (len(args) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
