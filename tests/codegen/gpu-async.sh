#!/usr/bin/env bash
# The GPU run of the asynchronous IR nodes (tests/codegen/async_gpu.c): a
# kernel printed from the IR loads a [128, 64] float16 tile by TMA on an
# mbarrier (expect_tx, parity wait, L2 cache policy, tensor-map prefetch),
# copies it out, stores it by TMA and adds it twice by TMA reductions
# (bulk commit, wait_group.read); the host encodes both maps with the
# printed C and checks all 3 x 8192 elements.  A mutant that loads rows
# 0:128 instead of 128:256 must FAIL.
#
#   tests/codegen/gpu-async.sh prepare DIR   # build machine: needs
#                                            # build/tests/codegen/codegen_async_gpu, nvcc
#   tests/codegen/gpu-async.sh run DIR OUT   # GPU machine (sm_90): needs nvcc, bash
#
# run writes OUT/async.txt and exits 0 when the program passed and the
# mutant failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
case "${1:-}" in
prepare)
  dir=$2
  mkdir -p "$dir"
  "$root/build/tests/codegen/codegen_async_gpu" "$nvcc" "$dir" || exit 1
  src="$dir/async_gpu.cu"
  grep -q 'td_tma_load_2d_cache_hint(S_ptr, &A_tensormap, 0, 128,' "$src" ||
    { echo "gpu-async: $src has no load at row 128" >&2; exit 1; }
  sed 's/td_tma_load_2d_cache_hint(S_ptr, &A_tensormap, 0, 128,/td_tma_load_2d_cache_hint(S_ptr, \&A_tensormap, 0, 0,/' \
    "$src" >"$dir/async_gpu_mutant_row0.cu"
  rm -f "$dir/async_gpu"
  echo "gpu-async: prepared $dir (async_gpu.cu, async_gpu_mutant_row0.cu)" ;;
run)
  dir=$2 out=$3
  mkdir -p "$out"
  log="$out/async.txt"
  : >"$log"
  rc=0
  for prog in async_gpu async_gpu_mutant_row0; do
    if ! "$nvcc" -gencode arch=compute_90a,code=sm_90a -Werror all-warnings \
        "$dir/$prog.cu" -o "$out/$prog" -lcuda >>"$log" 2>&1; then
      echo "$prog: COMPILE FAILED" | tee -a "$log"
      rc=1
      continue
    fi
    timeout 20 "$out/$prog" >"$out/$prog.txt" 2>&1
    st=$?
    echo "$prog: exit $st: $(tail -n 1 "$out/$prog.txt")" | tee -a "$log"
    if [ "$prog" = async_gpu ] && [ $st -ne 0 ]; then rc=1; fi
    if [ "$prog" != async_gpu ] && [ $st -eq 0 ]; then
      echo "$prog: the mutant passed" | tee -a "$log"
      rc=1
    fi
    rm -f "$out/$prog"
  done
  exit $rc ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2 ;;
esac
