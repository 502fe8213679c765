#!/bin/sh
# Generates the fused kernels of tests/fuse/gen_sources.lua with culua (host backend: no GPU
# needed) and compiles every one with NVRTC (tests/fuse/nvrtc_compile.py; exit 69 without the
# CUDA toolkit). Usage: run_nvrtc_sources.sh CULUA SOURCE_ROOT
set -e
culua=$1
root=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$culua" --backend host "$root/tests/fuse/gen_sources.lua" "$root" "$dir"
python3 "$root/tests/fuse/nvrtc_compile.py" "$dir"/*.cu
