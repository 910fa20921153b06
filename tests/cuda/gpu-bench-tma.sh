#!/bin/sh
# The GPU run of `tiledispatch tensor-maps` and of the copy_async bench
# with ours by TMA, in one device call from the repository root:
#
#   OUT=DIR sh tests/cuda/gpu-bench-tma.sh
#
# 1. builds the tool (meson, in build-gpu-tma; needs meson and ninja) and
#    has the real driver encode every tensor map that `tiledispatch
#    tensor-maps` prints for the TMA conformance cases
#    (tests/cli/tensor_maps_test.sh with --run: nvcc, -lcuda) ->
#    OUT/tensor-maps.txt;
# 2. runs the bench (bench/gpu/copy_async/run.sh, its generated gen/ as
#    committed; ours_tma_s2 .. s6 beside ours by ldgsts, TVM's two kernels
#    and the D2D baselines) -> OUT/table.md, bench_copy_async.csv,
#    ptxas.log, sass.txt, and its stdout in OUT/bench.txt.
# Exit 0 when both passed; else the first failing step's status.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-gpu-bench-tma-out}
mkdir -p "$OUT"
cd "$root" || exit 3
nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1 || true
status=0
if [ ! -d build-gpu-tma ]; then
    meson setup build-gpu-tma >"$OUT/setup.log" 2>&1 || status=2
fi
if [ "$status" = 0 ]; then
    ninja -C build-gpu-tma tiledispatch >"$OUT/build.log" 2>&1 || status=2
fi
if [ "$status" = 0 ]; then
    bash tests/cli/tensor_maps_test.sh build-gpu-tma/tiledispatch "$root" \
        "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --run \
        >"$OUT/tensor-maps.txt" 2>&1 || status=1
    tail -3 "$OUT/tensor-maps.txt"
else
    echo "tensor-maps: not run, the tool did not build (see $OUT/*.log)"
fi
brc=0
RESULTS=$OUT sh bench/gpu/copy_async/run.sh /tmp/bench-copy-async-tma \
    >"$OUT/bench.txt" 2>&1 || brc=$?
tail -40 "$OUT/bench.txt"
[ "$status" = 0 ] && status=$brc
exit "$status"
