#!/bin/sh
# The float32 [64, 128] A/B run (see README.md here): builds ab.cu (five
# forms of our copy loop around one tile) with TVM's generated kernel of
# the same copy (../gen/tvm_f32_64x128_swz.cu) and runs the timing three
# times.  WORKDIR (default build/bench-copy-ab) holds the build.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-$here/../../../../build/bench-copy-ab}
mkdir -p "$work"
nvcc -O3 -std=c++17 -arch=sm_90a -Xptxas -v -c -o "$work/ab.o" "$here/ab.cu" 2>"$work/ptxas.log"
nvcc -O3 -std=c++17 -arch=sm_90a -Xptxas -v -c -o "$work/tvm.o" \
    "$here/../gen/tvm_f32_64x128_swz.cu" 2>>"$work/ptxas.log"
nvcc -arch=sm_90a -Xlinker --allow-multiple-definition -o "$work/ab" "$work/ab.o" "$work/tvm.o"
grep -E "Compiling|registers|spill" "$work/ptxas.log"
for i in 1 2 3; do "$work/ab"; done
