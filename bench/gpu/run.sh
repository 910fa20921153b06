#!/bin/sh
# The GPU reduction benchmark in one command (see bench_reduce.cu):
#
#   bench/gpu/run.sh [--layouts] [--gen-only] [WORKDIR]
#
# (--layouts: build and run layouts.cu instead of bench_reduce.cu: the
# emitted code for the calls in layouts/calls/, each with its config
# knobs, beside hand-written layouts for the same shapes)
# 1. unless WORKDIR already holds bench_gen.cuh and TILEDISPATCH is not
#    executable: WORKDIR/bench_gen.cuh <- gen.py (the tool's emitted code for
#    calls/*.yaml; TILEDISPATCH defaults to build/tiledispatch);
# 2. nvcc -O3 -arch=sm_90 WORKDIR/bench_reduce (NVCC_ARCH overrides);
# 3. runs it: the tables on stdout, per-run lines on stderr,
#    WORKDIR/bench.csv.
# WORKDIR defaults to build/bench-gpu.  BENCH_ONLY="NAME..." (names of
# calls/, e.g. "r8x1024_t256_sum r1x4096_t256_max") restricts the run to
# those cases, in that order.  BENCH_CONFIG="KEY: VALUE, ..." gives every
# call of calls/ that config for the default's body (gen.py), e.g.
# BENCH_CONFIG="one_block_per_sm: true".  On a machine without the tool's
# build (the GPU machine), run `bench/gpu/run.sh --gen-only DIR` where it is
# built, copy DIR and bench/gpu over, and run `bench/gpu/run.sh DIR` there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gen_only=0
prog=bench_reduce
if [ "${1:-}" = "--layouts" ]; then
    # layouts.cu: hand-written layouts beside the emitted code, for the
    # shapes it names
    prog=layouts
    shift
fi
if [ "${1:-}" = "--gen-only" ]; then gen_only=1; shift; fi
work=${1:-$root/build/bench-gpu}
tool=${TILEDISPATCH:-$root/build/tiledispatch}
mkdir -p "$work"
calls=$here/calls
[ $prog = layouts ] && calls=$here/layouts/calls
if [ -n "${BENCH_ONLY:-}" ]; then
    rm -rf "$work/only" && mkdir -p "$work/only/calls"
    for n in $BENCH_ONLY; do
        cp "$calls/$n.yaml" "$work/only/calls/" || exit 2
        echo "$n" >>"$work/only/cases.txt"
    done
    calls=$work/only/calls
fi
if [ -x "$tool" ]; then
    python3 "$here/gen.py" "$tool" "$calls" "$work/bench_gen.cuh"
    echo "generated $work/bench_gen.cuh with $tool" >&2
elif [ -f "$work/bench_gen.cuh" ]; then
    echo "using $work/bench_gen.cuh ($tool not built)" >&2
else
    echo "run.sh: error: $tool is not built and $work/bench_gen.cuh is absent" >&2
    exit 2
fi
[ $gen_only = 1 ] && exit 0
arch=${NVCC_ARCH:-sm_90}
nvcc -O3 -std=c++17 -arch="$arch" -lineinfo -I"$work" -Xptxas -v \
    -o "$work/$prog" "$here/$prog.cu" 2>"$work/ptxas.log" || {
    cat "$work/ptxas.log" >&2
    exit 2
}
if [ $prog = layouts ]; then
    "$work/layouts"
else
    "$work/bench_reduce" "$work/bench.csv"
fi
