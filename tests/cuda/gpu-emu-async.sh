#!/usr/bin/env bash
# The GPU half of the stand-in's async-copy checks: tests/cuda/emu/tma_async.cu
# (TMA loads with each swizzle mode and a narrow 128B-swizzled box, an
# out-of-bounds box with zero and NaN fill, a store and a reduce-add clipped
# at the bounds, an mbarrier's two phases, cuTensorMapEncodeTiled's limits)
# runs on the GPU with the same expectations it meets on the CPU stand-in
# (tests/cuda/emu.py --async-paths), so a PASS here says the stand-in's
# swizzle, fill, clipping, reduction, phase and limit rules are the
# hardware's and the driver's.  The build with -DTD_MUTANT_SWIZZLE (maps
# encoded with another swizzle mode) must FAIL.
#
#   bash tests/cuda/gpu-emu-async.sh OUT     # needs nvcc and an sm_90+ GPU
#
# Looks for tma_async.cu beside this script or in emu/ below it (so the
# two files may be copied into one folder).  Writes OUT/tma_async.txt and
# OUT/tma_async_mutant.txt (each program's output), OUT/*.compile.log and
# OUT/summary.txt; exits 0 when the program passed and the mutant failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:-}}
[ -n "$out" ] || { echo "usage: $0 OUT" >&2; exit 2; }
mkdir -p "$out"
src="$here/tma_async.cu"
[ -f "$src" ] || src="$here/emu/tma_async.cu"
[ -f "$src" ] || { echo "gpu-emu-async: no tma_async.cu" >&2; exit 2; }
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
arch=sm_${cap/./}a
rc=0
: >"$out/summary.txt"
for v in tma_async tma_async_mutant; do
  flags=""
  [ "$v" = tma_async_mutant ] && flags="-DTD_MUTANT_SWIZZLE"
  # shellcheck disable=SC2086
  if ! "$nvcc" -O2 -arch="$arch" -Werror all-warnings $flags -o "$out/$v.bin" "$src" \
       >"$out/$v.compile.log" 2>&1; then
    echo "BAD $v: nvcc failed (see $v.compile.log)" >>"$out/summary.txt"
    rc=1
    continue
  fi
  timeout 120 "$out/$v.bin" >"$out/$v.txt" 2>&1
  prc=$?
  last=$(tail -1 "$out/$v.txt")
  if [ "$v" = tma_async ]; then
    if [ $prc -eq 0 ]; then echo "ok  $v: $last" >>"$out/summary.txt"
    else echo "BAD $v (exit $prc): $last" >>"$out/summary.txt"; rc=1; fi
  else
    if [ $prc -eq 1 ] && grep -q '^FAIL swizzle_128b' "$out/$v.txt"; then
      echo "ok  $v failed as it must: $last" >>"$out/summary.txt"
    else echo "BAD $v (exit $prc) did not fail its swizzle checks: $last" >>"$out/summary.txt"; rc=1; fi
  fi
  rm -f "$out/$v.bin"
done
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $arch" >>"$out/summary.txt"
cat "$out/summary.txt" "$out/tma_async.txt" 2>/dev/null
exit $rc
