#!/usr/bin/env bash
# The GPU run of the permute_layout programs: every permute_* conformance
# and golden case's self-checking program in both data modes (the copy's
# program: each logical element's bits must reach dst's layout;
# scripts/gpu-check), and one mutant that must FAIL: the SF shared case
# with the store of register slot r taking slot r ^ 1 (a permutation of
# the right values into the wrong places).
#
#   tests/cuda/gpu-permute.sh prepare DIR   # build machine: needs build/tiledispatch
#   tests/cuda/gpu-permute.sh run DIR OUT   # GPU machine: needs nvcc, bash
#
# run writes OUT/gpu-check.txt, OUT/results.tsv (the conformance programs)
# and OUT/mut.txt (the mutant, one line per data mode) and exits 0 when
# every program passed in both modes and the mutant failed in both.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cuda/gpu-lib.sh
. "$here/gpu-lib.sh"

gpu_want() {
  case "$1" in
  permute_mut_*) printf 'FAIL\nfirst mismatch at \n' ;;
  *) printf 'PASS\nbit-exact\n' ;;
  esac
}
case "${1:-}" in
prepare)
  dir=$2
  mkdir -p "$dir/progs" "$dir/mut"
  rm -f "$dir"/progs/*.cu "$dir"/mut/*.cu
  gpu_prepare_family "$dir" permute_ gpu-permute || exit 1
  src="$dir/progs/permute_tvm_shared_to_shared_uses_direct_ldst_uint32.cu"
  mut="$dir/mut/permute_mut_slot_swap.cu"
  sed 's/^\( *td_ptx_st_shared_b32(.*\), regs\[r_1\]);$/\1, regs[r_1 ^ 1]);/' "$src" >"$mut"
  if cmp -s "$src" "$mut"; then
    echo "gpu-permute: the mutant's store line was not found in $src" >&2
    exit 1
  fi
  echo "programs in $dir/progs ($(ls "$dir"/progs/*.cu | wc -l)) and $dir/mut ($(ls "$dir"/mut/*.cu | wc -l))"
  ;;
run)
  gpu_run "$2" "$3" mut "mutants" "failed as they must"
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
