#!/bin/bash
# Baseline of the plan's GEMM bench (design/gemm/plan.md 7.3) on the H200:
# TVM 0.27's own lowering of probes/gemm_kernel.py (4096^3, exported to
# tvm_gemm.cu.txt, cut from out_gemm_kernel.txt of `gemm_kernel.py 4096 4096
# 4096 sm_90a`; kept as .txt: it is TVM's output, not a source of ours) against
# cuBLAS.
# Usage (repository root): design/gemm/probes/bench/run.sh ; results in $OUT
# (or ./gemm_bench_out when OUT is unset).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/gemm_bench_out}
mkdir -p "$out"
cp "$here/tvm_gemm.cu.txt" "$out/tvm_gemm.cu"
nvcc -O3 -w -arch=sm_90a -I"$out" -DKFILE='"tvm_gemm.cu"' -DNAME='"tvm_gemm"' \
     "$here/harness.cu" -lcublas -o "$out/tvm_gemm.bin"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
for r in 1 2 3; do "$out/tvm_gemm.bin"; done | tee "$out/results.txt"
