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
# shellcheck source=tests/cuda/gpu-lib.sh
. "$here/gpu-lib.sh"

# A mutant must FAIL (its check sees a wrong tile), whatever it names.
gpu_want() { printf 'FAIL\n\n'; }
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
  gpu_prepare_progs "$dir" "$names" "$golden" || exit 1
  # The mutants: TVM's [128, 32] int8 tile, 16-byte pieces at s_off.
  src="$dir/progs/ldgsts_tvm_128x32_int8.cu"
  grep -q 'A_smem_ptr + s_off' "$src" || { echo "gpu-ldgsts: $src has no s_off" >&2; exit 1; }
  sed 's/A_smem_ptr + s_off/A_smem_ptr + (s_off ^ 16)/' "$src" \
    >"$dir/mutants/ldgsts_swap.cu"
  sed 's/A_smem_ptr + s_off/A_smem_ptr + 0 * s_off/' "$src" \
    >"$dir/mutants/ldgsts_first.cu"
  # The scalar start: in the rounds of k = 7 the kernel gets k = 5 (its
  # guard still true) where the reference reads the tile of k = 7 (the
  # scalar's offset must reach the index; the program runs every k of
  # the declared range, one set of values per two rounds).
  src="$dir/progs/golden-ldgsts_scalar_start_f16.cu"
  kset='td_sv_k = td_from_double<int>(td_sv_set\[td_svi\]\[0\])'
  grep -q "$kset" "$src" || { echo "gpu-ldgsts: $src passes no k from its sets" >&2; exit 1; }
  sed "s/$kset/td_sv_k = td_sv_set[td_svi][0] == 7 ? 5 : (int)td_sv_set[td_svi][0]/" "$src" \
    >"$dir/mutants/ldgsts_scalar_k.cu"
  echo "programs in $dir/progs ($(ls "$dir"/progs/*.cu | wc -l)) and $dir/mutants (3)"
  ;;
run)
  gpu_run "$2" "$3" mutants "mutants" "runs failed as they must"
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
