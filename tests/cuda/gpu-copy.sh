#!/usr/bin/env bash
# The GPU run of the copy programs: every copy_* conformance and golden
# case's self-checking program in both data modes (scripts/gpu-check; the
# sm_100a ones are listed "not run" on an H200), and the
# unit test's fake-variant programs (tests/cuda/test_kernel_copy.c: global,
# shared and register operands), whose good ones must PASS and whose wrong
# ones (one store past the region, a transposed index, a dropped store)
# must FAIL naming what they did.
#
#   tests/cuda/gpu-copy.sh prepare DIR   # build machine: needs build/tiledispatch
#                                        # and build/tests/cuda/cuda_test_kernel_copy
#   tests/cuda/gpu-copy.sh run DIR OUT   # GPU machine: needs nvcc, bash
#
# run writes OUT/gpu-check.txt, OUT/results.tsv (the conformance programs)
# and OUT/fake.txt (the fake programs, one line per run) and exits 0 when
# every conformance program passed in both modes and every fake program
# did what it must.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cuda/gpu-lib.sh
. "$here/gpu-lib.sh"

# What a fake program must print: PASS bit-exact, or FAIL naming its fault.
gpu_want() {
  case "$1" in
  *_copy_past) printf 'FAIL\nwritten outside the region\n' ;;
  *_copy_transpose|*_copy_drop) printf 'FAIL\nfirst mismatch at \n' ;;
  cp_g2l_holes) printf 'FAIL\na register slot no element owns\n' ;;
  cp_g2s_holes) printf 'FAIL\na hole no element has\n' ;;
  *) printf 'PASS\nbit-exact\n' ;;
  esac
}
case "${1:-}" in
prepare)
  dir=$2
  mkdir -p "$dir/progs" "$dir/fake"
  rm -f "$dir"/progs/*.cu "$dir"/fake/*.cu
  gpu_prepare_family "$dir" copy_ gpu-copy || exit 1
  TD_COPY_DUMP="$dir/fake" "$root/build/tests/cuda/cuda_test_kernel_copy" \
    >/dev/null 2>&1 || exit 1
  echo "programs in $dir/progs ($(ls "$dir"/progs/*.cu | wc -l)) and $dir/fake ($(ls "$dir"/fake/*.cu | wc -l))"
  ;;
run)
  gpu_run "$2" "$3" fake "fake programs" "runs as they must"
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
