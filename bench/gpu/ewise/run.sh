#!/bin/sh
# The elementwise GPU benchmark (docs/performance.md, "Elementwise").
#
#   bench/gpu/ewise/run.sh DIR [--run]
#
# Writes the call files (bench/gpu/ewise/calls/) and DIR/bench_ewise_gen.cuh
# from build/tiledispatch (TILEDISPATCH overrides) with TVM's code for the
# same calls when TVM_PYTHON names a Python that imports TVM 0.27, then
# builds DIR/bench_ewise and DIR/pair_bits with nvcc (-arch=$NVCC_ARCH,
# default sm_90a; EWISE_NVCC_FLAGS adds flags, e.g. -DBENCH_UNROLL1=1 for
# the build whose iteration loop stays rolled).  --run runs both (on a machine with the GPU): the table
# goes to DIR/bench.csv, the bit check to DIR/pair_bits.txt.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dir=${1:?usage: run.sh DIR [--run]}
mkdir -p "$dir"
tool=${TILEDISPATCH:-$root/build/tiledispatch}
if [ -n "${TVM_PYTHON:-}" ]; then
  python3 "$here/gen.py" "$tool" "$dir/bench_ewise_gen.cuh" --tvm "$TVM_PYTHON"
else
  python3 "$here/gen.py" "$tool" "$dir/bench_ewise_gen.cuh"
fi
arch=${NVCC_ARCH:-sm_90a}
nvcc -O3 -arch="$arch" -std=c++17 -diag-suppress 177,550 ${EWISE_NVCC_FLAGS:-} -I"$dir" \
  -o "$dir/bench_ewise" "$here/bench_ewise.cu"
nvcc -O3 -arch="$arch" -o "$dir/pair_bits" "$here/pair_bits.cu"
if [ "${2:-}" = "--run" ]; then
  "$dir/pair_bits" | tee "$dir/pair_bits.txt"
  "$dir/bench_ewise" | tee "$dir/bench.csv"
fi
