#!/bin/sh
# Has the CUDA driver encode every golden tensor map of tests/tma/cases.txt
# (one GPU, sm_90 or later): builds the checker, writes the maps' printed C
# with a main, links it with -lcuda, runs it, and leaves the program's text
# and output under $OUT (default: ./tma-out).  Run from the repository root:
#   OUT=/some/dir sh tests/tma/gpu_encode.sh
set -eu
OUT=${OUT:-tma-out}
mkdir -p "$OUT"
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ ! -d build-tma ]; then
    meson setup build-tma >"$OUT/setup.log" 2>&1
fi
ninja -C build-tma tests/tma/test_tensor_map_nvcc tests/tma/test_tensor_map \
    >"$OUT/build.log" 2>&1
build-tma/tests/tma/test_tensor_map tests/tma/cases.txt 2>&1 | tee "$OUT/unit.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1 || true
build-tma/tests/tma/test_tensor_map_nvcc "$NVCC" tests/tma/cases.txt "$OUT" --run \
    2>&1 | tee "$OUT/encode.txt"
