#!/bin/sh
# The issue's TMA kernel on an sm_90 GPU (see gen.py): builds harness.cu,
# which includes the CUDA TVM generated through the tiledispatch bridge
# (kernel.cu) and the maps and data gen.py wrote (params.h), with
# nvcc -arch=sm_90a, runs it under a timeout (a lost mbarrier phase hangs)
# and writes under $OUT (default .): gpu.txt (the GPU), build.log,
# result.txt (the program's PASS or FAIL line and its exit status).
# Needs no TVM: kernel.cu and params.h are committed; regenerate them with
# gen.py where TVM is installed.
# Usage: OUT=/some/dir sh tests/bridge/tma_reduce/run.sh   (from anywhere)
set -u
out=${OUT:-.}
dir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
{ command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$out/gpu.txt" 2>&1
# -diag-suppress 174,177: TVM's kernel keeps unused launch variables.
if ! nvcc -arch=sm_90a -diag-suppress 174,177 -o "$out/tma_reduce" "$dir/harness.cu" \
        > "$out/build.log" 2>&1; then
    echo "FAIL build (build.log)" > "$out/result.txt"
    cat "$out/build.log" "$out/result.txt"
    exit 1
fi
timeout 60 "$out/tma_reduce" > "$out/result.txt" 2>&1
rc=$?
[ $rc -eq 124 ] && echo "FAIL timed out (a hang: the mbarrier or the bulk group)" >> "$out/result.txt"
echo "exit $rc" >> "$out/result.txt"
cat "$out/gpu.txt" "$out/result.txt"
exit $rc
