#!/bin/sh
# The copy_async benchmark in one command (see bench_copy_async.cu and gen.py):
#
#   bench/gpu/copy_async/run.sh [--gen] [WORKDIR]
#
# 1. with --gen (needs TVM 0.27 and the tool's build, so not on the GPU
#    machine): regenerates gen/ (PYTHON, default python3, must import tvm;
#    TILEDISPATCH defaults to build/tiledispatch);
# 2. nvcc -O3 -arch=sm_90a (NVCC_ARCH overrides): WORKDIR/bench_copy_async
#    from bench_copy_async.cu and every generated file of gen/, each its
#    own translation unit, JOBS (default 8) at a time; the ptxas report in
#    WORKDIR/ptxas.log and the SASS of every kernel in WORKDIR/sass.txt;
#    with BUILD_ONLY=1 it stops here;
# 3. runs it: each kernel's check verdict as it comes, then the tables, on
#    stdout (and WORKDIR/table.md), every timed sample in
#    WORKDIR/bench_copy_async.csv.
# With RESULTS=DIR set, copies table.md, bench_copy_async.csv, ptxas.log
# and sass.txt into DIR at the end.  WORKDIR defaults to
# build/bench-copy-async.  Exit 1 if a kernel failed (wrong checksums, a
# CUDA error or a hang: reported FAILED by name, the tables still show the
# others), 2 if the build fails, 3 if the harness could not run (no device).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
if [ "${1:-}" = "--gen" ]; then
    shift
    "${PYTHON:-python3}" "$here/gen.py" \
        "${TILEDISPATCH:-$root/build/tiledispatch}" "$here/gen"
fi
work=${1:-$root/build/bench-copy-async}
mkdir -p "$work"
work=$(cd "$work" && pwd)
arch=${NVCC_ARCH:-sm_90a}
flags="-O3 -std=c++17 -arch=$arch -lineinfo -I$here/gen -Xptxas -v"
rm -f "$work"/*.o "$work"/*.o.log
export work flags
# shellcheck disable=SC2016
ls "$here/bench_copy_async.cu" "$here"/gen/*.cu | xargs -P "${JOBS:-8}" -I{} sh -c '
    o=$work/$(basename "$1" .cu).o
    nvcc $flags -c -o "$o" "$1" >"$o.log" 2>&1 || { cat "$o.log" >&2; exit 255; }
' sh {} || exit 2
cat "$work"/*.o.log >"$work/ptxas.log"
# TVM's kernel sources each define the same non-inline host helpers (TVM's
# fixed prelude); the copies are the same text, so the linker may keep any
# one.  TVM's tensor maps are encoded through
# cudaGetDriverEntryPointByVersion; ours through the C that `tiledispatch
# tensor-maps` prints, which calls cuTensorMapEncodeTiled: -lcuda.
nvcc -arch="$arch" -Xlinker --allow-multiple-definition \
    -o "$work/bench_copy_async" "$work"/*.o -lcuda || exit 2
cuobjdump -sass "$work/bench_copy_async" >"$work/sass.txt" 2>&1 || true
if [ -n "${BUILD_ONLY:-}" ]; then
    exit 0
fi
# through tee, so a log shows each verdict as it comes; the harness's exit
# status through a file (a pipeline's status is tee's)
rm -f "$work/rc"
{
    rc=0
    "$work/bench_copy_async" "$work/bench_copy_async.csv" || rc=$?
    echo "$rc" >"$work/rc"
} | tee "$work/table.md"
rc=$(cat "$work/rc" 2>/dev/null || echo 3)
if [ -n "${RESULTS:-}" ]; then
    # the files worth keeping, flat (the device returns few files); those
    # there are (no CSV when the harness stopped early)
    mkdir -p "$RESULTS"
    for f in table.md bench_copy_async.csv ptxas.log sass.txt; do
        if [ -f "$work/$f" ]; then
            cp "$work/$f" "$RESULTS/"
        fi
    done
fi
exit "$rc"
