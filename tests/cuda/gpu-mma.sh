#!/usr/bin/env bash
# The mma.sync helpers on a GPU: tests/cuda/emu/mma_sync.cu with the
# helpers as codegen/print_mma.c prints them, every instruction kind on two
# warps with exact and random data against a plain product (the same
# program the CPU stand-in runs in suite cuda-slow, cuda-emu-mma).
#
#   tests/cuda/gpu-mma.sh prepare DIR   # build machine: needs build/tests/codegen/ir_golden
#   tests/cuda/gpu-mma.sh run DIR OUT   # GPU machine (sm_90 or newer): nvcc, nvidia-smi
#
# run writes OUT/mma_sync.txt (a line per kind and data mode, then PASS or
# FAIL) and OUT/nvcc.txt, and exits with the program's status (0 PASS).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case "${1:-}" in
prepare)
  python3 "$here/emu_mma.py" --prepare "$root/build/tests/codegen/ir_golden" "$2"
  ;;
run)
  dir=$2
  out=$3
  mkdir -p "$out"
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
  arch=sm_${cap/./}a
  if ! "$nvcc" -O2 -arch="$arch" -I "$dir" -o "$out/mma_sync" "$dir/mma_sync.cu" \
      >"$out/nvcc.txt" 2>&1; then
    echo "FAIL mma_sync: nvcc for $arch (see nvcc.txt)" | tee "$out/mma_sync.txt"
    exit 1
  fi
  "$out/mma_sync" >"$out/mma_sync.txt" 2>&1
  status=$?
  cat "$out/mma_sync.txt"
  exit $status
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
