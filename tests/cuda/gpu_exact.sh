#!/usr/bin/env bash
# The GPU check of the self-checking programs' data: every corpus program
# in both data modes (scripts/gpu-check) and the mutants of
# tests/cuda/gpu_mutants.py (16-bit sums and max included), which must FAIL
# while their programs PASS.
#
#   tests/cuda/gpu_exact.sh prepare DIR   # build machine: needs build/tiledispatch
#   tests/cuda/gpu_exact.sh run DIR OUT   # GPU machine: needs nvcc, python3
#
# run writes OUT/gpu-check.txt, OUT/results.tsv and OUT/mutants.txt and
# exits 0 when every program passed in every mode and every mutant was
# caught (a mutant is caught when any mode fails: tests/cuda/gpu_mutants.py).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case "${1:-}" in
prepare)
  dir=$2
  "$root/scripts/gen-programs" "$dir/progs" --data both || exit 1
  python3 "$here/gpu_mutants.py" prepare "$root/build/tiledispatch" "$dir/mutants"
  ;;
run)
  dir=$2; out=$3
  mkdir -p "$out"
  "$root/scripts/gpu-check" "$dir/progs" -j "$(nproc)" >"$out/gpu-check.txt" 2>&1
  rc1=$?
  cp "$dir/progs/gpu-check/results.tsv" "$out/" 2>/dev/null
  tail -5 "$out/gpu-check.txt"
  python3 "$here/gpu_mutants.py" run "$dir/mutants" "$out" | tail -3
  rc2=${PIPESTATUS[0]}
  [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ]
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
