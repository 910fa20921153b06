#!/usr/bin/env bash
# The GPU run of the copy_async programs (variant ldgsts, cp.async): every
# ldgsts_* / copy_async_* conformance case and ldgsts_* golden case that
# dispatches writes its self-checking program (issue the copy, commit the
# group, cp.async.wait_all, __syncthreads, then every element of the
# shared tile copied back out and compared bit for bit), run in both data
# modes by scripts/gpu-check; and two mutants of one program, whose shared
# offsets are swapped between neighbouring 16-byte pieces or whose pieces
# all land on the first one, must FAIL (the check sees a wrong tile), as
# must the scalar-start program given another k than its reference reads.
#
#   tests/cuda/gpu-ldgsts.sh prepare DIR   # build machine: needs build/tiledispatch
#   tests/cuda/gpu-ldgsts.sh run DIR OUT   # GPU machine: needs nvcc, bash
#
# run writes OUT/gpu-check.txt, OUT/results.tsv and OUT/mutants.txt, and
# exits 0 when every program passed in both modes and both mutants failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case "${1:-}" in
prepare)
  dir=$2
  mkdir -p "$dir/progs" "$dir/mutants"
  rm -f "$dir"/progs/*.cu "$dir"/mutants/*.cu
  names=$(cd "$root/tests/conformance" &&
          ls ldgsts_*.yaml copy_async_*.yaml 2>/dev/null | sed 's/\.yaml$//')
  golden=$(cd "$root/tests/golden/cases" &&
           ls ldgsts_*.yaml 2>/dev/null | sed 's/^/golden-/; s/\.yaml$//')
  if [ -z "$names" ]; then
    echo "gpu-ldgsts: no tests/conformance/ldgsts_*.yaml" >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  python3 "$root/tests/conformance/run.py" "$root/build/tiledispatch" $names $golden \
    --cases "$root/tests/conformance" --golden "$root/tests/golden/cases" \
    --out "$dir/progs" --data both || exit 1
  # The mutants: TVM's [128, 32] int8 tile, 16-byte pieces at s_off.
  src="$dir/progs/ldgsts_tvm_128x32_int8.cu"
  grep -q 'A_smem_ptr + s_off' "$src" || { echo "gpu-ldgsts: $src has no s_off" >&2; exit 1; }
  sed 's/A_smem_ptr + s_off/A_smem_ptr + (s_off ^ 16)/' "$src" \
    >"$dir/mutants/ldgsts_swap.cu"
  sed 's/A_smem_ptr + s_off/A_smem_ptr + 0 * s_off/' "$src" \
    >"$dir/mutants/ldgsts_first.cu"
  # The scalar start: the kernel gets k = 5 (its guard still true) where
  # the reference reads the tile of k = 7 (the scalar's offset must reach
  # the index).
  src="$dir/progs/golden-ldgsts_scalar_start_f16.cu"
  grep -q 'td_sv_k = td_from_double<int>(7)' "$src" || { echo "gpu-ldgsts: $src has no k = 7" >&2; exit 1; }
  sed 's/td_sv_k = td_from_double<int>(7)/td_sv_k = td_from_double<int>(5)/' "$src" \
    >"$dir/mutants/ldgsts_scalar_k.cu"
  echo "programs in $dir/progs ($(ls "$dir"/progs/*.cu | wc -l)) and $dir/mutants (3)"
  ;;
run)
  dir=$2; out=$3
  mkdir -p "$out"
  "$root/scripts/gpu-check" "$dir/progs" -j "$(nproc)" >"$out/gpu-check.txt" 2>&1
  rc1=$?
  cp "$dir/progs/gpu-check/results.tsv" "$out/" 2>/dev/null
  tail -3 "$out/gpu-check.txt"
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
  arch=sm_${cap/./}a
  bad=0
  : >"$out/mutants.txt"
  for cu in "$dir"/mutants/*.cu; do
    n=$(basename "$cu" .cu)
    if ! "$nvcc" -O2 -arch="$arch" -o "$out/$n.bin" "$cu" >"$out/$n.compile.log" 2>&1; then
      echo "BAD $n: nvcc failed (see $n.compile.log)" >>"$out/mutants.txt"
      bad=$((bad + 1))
      continue
    fi
    for mode in exact random; do
      line=$(timeout 120 "$out/$n.bin" --data "$mode" | head -1)
      if [ "${line%% *}" = "FAIL" ]; then
        echo "ok  $n ($mode): $line" >>"$out/mutants.txt"
      else
        echo "BAD $n ($mode), want FAIL: $line" >>"$out/mutants.txt"
        bad=$((bad + 1))
      fi
    done
    rm -f "$out/$n.bin"
  done
  echo "mutants: $(grep -c '^ok' "$out/mutants.txt") runs failed as they must, $bad not"
  [ "$rc1" -eq 0 ] && [ "$bad" -eq 0 ]
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
