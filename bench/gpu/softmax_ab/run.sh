#!/bin/bash
# The softmax A/B run (docs/python.md, "The softmax example"): on the build
# machine, export the two builds and splice the variants:
#   build-python/venv/bin/python examples/tvm_softmax.py --quiet --export DIR
#   python3 bench/gpu/softmax_ab/splice.py DIR
# then on the GPU machine (DIR carried):  bench/gpu/softmax_ab/run.sh DIR
# Prints one line per variant and round: median and min µs, PASS/FAIL.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
d=$(cd "$1" && pwd)
vs="td hybrid td_subTVM td_expTVM td_divTVM td_allTVM"
for v in $vs; do
  nvcc -O3 -arch=sm_90a -I"$d" -DKFILE="\"$v.cu\"" -DNAME="\"$v\"" \
       "$here/harness.cu" -o "$d/$v.bin" 2>/dev/null &
done
wait
for r in 1 2 3; do for v in $vs; do "$d/$v.bin"; done; done
