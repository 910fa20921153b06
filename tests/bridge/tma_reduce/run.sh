#!/bin/sh
# The issue's TMA kernel on an sm_90 GPU (see gen.py): builds harness.cu,
# which includes the CUDA TVM generated through the tiledispatch bridge
# (kernel.cu) and the maps and data gen.py wrote (params.h), with
# nvcc -arch=sm_90a, runs it under a timeout (a lost mbarrier phase hangs),
# then the same with -DTD_MUTANT (the load's map one row late), which must
# FAIL.  Writes under $OUT (default .): gpu.txt (the GPU), build.log,
# program.txt and mutant.txt (each run's output and exit status) and
# result.txt: "PASS ..." when the program passed and the mutant failed,
# else "FAIL ..."; the exit status is 0 only for PASS.
# Needs no TVM: kernel.cu and params.h are committed; regenerate them with
# gen.py where TVM is installed.
# Usage: OUT=/some/dir sh tests/bridge/tma_reduce/run.sh   (from anywhere)
set -u
out=${OUT:-.}
dir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
{ command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$out/gpu.txt" 2>&1
# -diag-suppress 174,177: TVM's kernel keeps unused launch variables.
flags="-arch=sm_90a -diag-suppress 174,177"
if ! nvcc $flags -o "$out/tma_reduce" "$dir/harness.cu" > "$out/build.log" 2>&1 ||
   ! nvcc $flags -DTD_MUTANT -o "$out/tma_reduce_mutant" "$dir/harness.cu" >> "$out/build.log" 2>&1; then
    echo "FAIL build (build.log)" > "$out/result.txt"
    cat "$out/build.log" "$out/result.txt"
    exit 1
fi
run() {  # BINARY LOG: its output, a line for a hang, its exit status
    timeout 60 "$1" > "$2" 2>&1
    rc=$?
    [ $rc -eq 124 ] && echo "FAIL timed out (a hang: the mbarrier or the bulk group)" >> "$2"
    echo "exit $rc" >> "$2"
    return $rc
}
run "$out/tma_reduce" "$out/program.txt"; prc=$?
run "$out/tma_reduce_mutant" "$out/mutant.txt"; mrc=$?
if [ $prc -eq 0 ] && [ $mrc -ne 0 ]; then
    echo "PASS the bridge's TMA load / sum / TMA store kernel matches numpy; its mutant fails" > "$out/result.txt"
    rc=0
else
    echo "FAIL program exit $prc (must be 0), mutant exit $mrc (must not be 0)" > "$out/result.txt"
    rc=1
fi
cat "$out/gpu.txt" "$out/program.txt" "$out/mutant.txt" "$out/result.txt"
exit $rc
