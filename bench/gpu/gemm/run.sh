#!/bin/sh
# The GEMM bench (design/gemm/plan.md 7.3, issue 25 item 7) in one command:
#
#   bench/gpu/gemm/run.sh [--gen] [WORKDIR [ROUNDS]]
#
# 1. with --gen (the build machine: needs TVM 0.27 and the tiledispatch
#    package, PYTHON defaults to build-python/venv/bin/python): compiles
#    examples/tvm_gemm.py's kernel at 4096^3 for sm_90a through
#    tiledispatch's bridge and through TVM's own dispatcher, and its
#    cp.async-pipelined kernel (--stages 2) the same two ways, and writes
#    the four CUDA sources to gen/{td,tvm,td2,tvm2}_gemm.cu.txt (.txt:
#    generated, kept out of the sources check) and the sizes to gen/gemm.h,
#    and stops there unless a WORKDIR follows;
# 2. nvcc -O3 -arch=sm_90a (NVCC_ARCH overrides) builds WORKDIR/gemm_bench
#    from harness.cu and the four kernels, each its own translation unit
#    (kernel.cu), linked with cuBLAS; the ptxas report goes to
#    WORKDIR/ptxas.log;
# 3. runs it from WORKDIR (ROUNDS rounds of 10 timed launches each, default
#    5): the checks and the table on stdout and in WORKDIR/results.txt,
#    every timed launch in WORKDIR/gemm_times.csv; where ncu is installed
#    (NCU=0 skips it), one Nsight Compute pass over a launch of each
#    kernel into WORKDIR/ncu_KERNEL.txt.
# WORKDIR defaults to $OUT where set, else build/bench-gemm.  Exit 1 if a
# check fails (the timings still print), 2 if the build fails.  With
# BUILD_ONLY=1, stops after step 2 (77, meson's skip, without nvcc): the
# suite cuda test bench-gemm-build.
#
# On the H200 (nvcc and cuBLAS there, no TVM needed; gen/ is committed):
#   bench/gpu/gemm/run.sh "$OUT"
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
if [ "${1:-}" = "--gen" ]; then
    shift
    tmp=$(mktemp -d)
    py=${PYTHON:-$root/build-python/venv/bin/python}
    "$py" "$root/examples/tvm_gemm.py" --export "$tmp" >/dev/null
    cp "$tmp/td.cu" "$here/gen/td_gemm.cu.txt"
    cp "$tmp/tvm.cu" "$here/gen/tvm_gemm.cu.txt"
    mkdir -p "$tmp/2"
    "$py" "$root/examples/tvm_gemm.py" --stages 2 --export "$tmp/2" >/dev/null
    cp "$tmp/2/td.cu" "$here/gen/td2_gemm.cu.txt"
    cp "$tmp/2/tvm.cu" "$here/gen/tvm2_gemm.cu.txt"
    python3 - "$tmp/gemm.json" "$here/gen/gemm.h" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    f.write("// Written by bench/gpu/gemm/run.sh --gen from examples/tvm_gemm.py --export.\n")
    for k, v in (("M", g["M"]), ("N", g["N"]), ("K", g["K"]), ("ALPHA", repr(float(g["alpha"])) + "f"),
                 ("THREADS", g["block"][0]), ("BM", g["M"] // g["grid"][1]),
                 ("BN", g["N"] // g["grid"][0])):
        f.write(f"#define GEMM_{k} {v}\n")
    f.write(f'#define GEMM_ARCH "{g["arch"]}"\n')
PY
    rm -rf "$tmp"
    if [ $# -eq 0 ]; then
        exit 0      # --gen alone: the build machine has no GPU to run on
    fi
fi
if [ "${BUILD_ONLY:-0}" = 1 ] && ! command -v nvcc >/dev/null 2>&1; then
    echo "SKIP: no nvcc on PATH"
    exit 77
fi
work=${1:-${OUT:-$root/build/bench-gemm}}
rounds=${2:-5}
mkdir -p "$work"
work=$(cd "$work" && pwd)
arch=${NVCC_ARCH:-sm_90a}
kernels="td tvm td2 tvm2"
for k in $kernels; do
    cp "$here/gen/${k}_gemm.cu.txt" "$work/$k.cu"
done
cp "$here/gen/gemm.h" "$work/gemm.h"
flags="-O3 -std=c++17 -arch=$arch -lineinfo -I$work -diag-suppress 174,177,550"
: >"$work/ptxas.log"
# $flags splits into its words on purpose.
# shellcheck disable=SC2086
for k in $kernels; do
    if ! nvcc $flags -Xptxas -v -DKFILE="\"$k.cu\"" -Dgemm_kernel=${k}_gemm_kernel \
            -DLAUNCH=launch_$k -c "$here/kernel.cu" -o "$work/$k.o" 2>>"$work/ptxas.log"; then
        cat "$work/ptxas.log" >&2
        exit 2
    fi
done
# shellcheck disable=SC2086
if ! nvcc $flags "$here/harness.cu" "$work/td.o" "$work/tvm.o" "$work/td2.o" "$work/tvm2.o" \
        -lcublas \
        -o "$work/gemm_bench"; then
    exit 2
fi
grep -E "Compiling entry|registers|spill" "$work/ptxas.log" || true
if [ "${BUILD_ONLY:-0}" = 1 ]; then
    exit 0
fi
cd "$work"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit --format=csv,noheader \
    >gpu.txt 2>/dev/null || true
rc=0
./gemm_bench "$rounds" | tee results.txt || rc=$?
# One Nsight Compute pass over one launch of each kernel (where ncu is
# installed and may read the counters; NCU=0 skips it): what limits them.
if [ "${NCU:-1}" != 0 ] && command -v ncu >/dev/null 2>&1; then
    for k in $kernels; do
        ncu --kernel-name "${k}_gemm_kernel" --launch-skip 2 --launch-count 1 \
            --section SpeedOfLight --section Occupancy --section WarpStateStats \
            --section MemoryWorkloadAnalysis ./gemm_bench 1 >"ncu_$k.txt" 2>&1 ||
            echo "ncu failed for $k (see $work/ncu_$k.txt)"
    done
fi
exit $rc
