#!/usr/bin/env bash
# The GPU run of the gemm programs (and permute_layout's, which are cheap):
# every gemm_* and permute_* conformance and golden case that dispatches to
# a variant gets its self-checking program (tiledispatch kernel: gemm's
# fragments staged through their layouts, D against a double reference,
# exact data with ==, random data within the float32 accumulation bound;
# permute's bit for bit), compiled for this GPU's arch and run in both data
# modes (scripts/gpu-check).  Then mutants of two gemm programs that must
# FAIL in both modes on the hardware:
#   gemm_mut_b_word_swap    k16, beta 1: the mma's two B words swapped (the
#                           right values in the wrong K rows);
#   gemm_mut_a_word_swap    k16, beta 0: A words 1 and 2 swapped (rows
#                           8..15 take K 8..15 of rows 0..7);
#   gemm_mut_init_dropped   k16, beta 0: D's first register not set to 0
#                           (it keeps the NaN the program staged);
#   gemm_mut_c_read         k16, beta 0: D's register 0 starts from C
#                           (NaN at beta 0) instead of 0;
#   gemm_mut_s8_b_word_swap  the same B swap in the int8 k32 program
#                           (int32 accumulator: exact in both modes);
#   gemm_mut_tf32_a_word_swap  tf32 k8: A words 1 and 2 swapped (rows
#                           8..15 and K 4..7 trade places);
#   gemm_mut_e4m3_b_word_swap  e4m3 k32: the B words swapped;
#   gemm_mut_f16acc_c_read  float16 accumulator k16, beta 0: D's first
#                           half starts from C (NaN at beta 0);
#   permute_mut_slot_swap   gpu-permute.sh's mutant.
#
#   tests/cuda/gpu-gemm.sh prepare DIR   # build machine: needs build/tiledispatch
#   tests/cuda/gpu-gemm.sh run DIR OUT   # GPU machine: needs nvcc, nvidia-smi, bash
#
# run writes OUT/gpu-check.txt, OUT/results.tsv (the conformance programs,
# one line per program and data mode) and OUT/mut.txt (the mutants), and
# exits 0 when every program passed in both modes and every mutant failed
# in both.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cuda/gpu-lib.sh
. "$here/gpu-lib.sh"

gpu_want() {
  case "$1" in
  *_mut_*) printf 'FAIL\nround=\n' ;;
  *) printf 'PASS\n\n' ;;
  esac
}

# mutant SRC DST SED: DST is SRC through the sed script; it must differ.
mutant() {
  sed "$3" "$1" >"$2"
  if cmp -s "$1" "$2"; then
    echo "gpu-gemm: the mutant $(basename "$2") changed nothing in $1" >&2
    exit 1
  fi
}

case "${1:-}" in
prepare)
  dir=$2
  mkdir -p "$dir/progs" "$dir/mut"
  rm -f "$dir"/progs/*.cu "$dir"/mut/*.cu
  # gemm and permute_layout cases (not gemm_async: sm_100a), conformance
  # NAME and golden golden-NAME.
  names=''
  golden=''
  for f in "$root"/tests/conformance/gemm_*.yaml "$root"/tests/conformance/permute_*.yaml; do
    n=$(basename "$f" .yaml)
    case "$n" in gemm_async_*) continue ;; esac
    [ -f "$f" ] && names="$names $n"
  done
  if [ -z "$names" ]; then
    echo "gpu-gemm: no tests/conformance/gemm_*.yaml" >&2
    exit 1
  fi
  for f in "$root"/tests/golden/cases/gemm_*.yaml "$root"/tests/golden/cases/permute_*.yaml; do
    n=$(basename "$f" .yaml)
    case "$n" in gemm_async_*) continue ;; esac
    [ -f "$f" ] && golden="$golden golden-$n"
  done
  gpu_prepare_progs "$dir" "$names" "$golden" || exit 1
  # Cases that decline, or whose body is compiled only, have no program
  # (run.py leaves them out of the manifest).
  p=$dir/progs
  k16b1=$p/gemm_tvm_tiled_1x1x1_k16_f16_b1.cu
  k16b0=$p/gemm_tvm_tiled_1x1x1_k16_f16_b0.cu
  call='td_ptx_mma_sync_aligned_m16n8k16_row_col_f32_f16_f16_f32('
  b0='((unsigned int \*)B_ptr)\[0\]'
  b1='((unsigned int \*)B_ptr)\[1\]'
  a1='((unsigned int \*)A_ptr)\[1\]'
  a2='((unsigned int \*)A_ptr)\[2\]'
  mutant "$k16b1" "$dir/mut/gemm_mut_b_word_swap.cu" \
    "/$call/s/$b0, $b1/((unsigned int *)B_ptr)[1], ((unsigned int *)B_ptr)[0]/"
  mutant "$k16b0" "$dir/mut/gemm_mut_a_word_swap.cu" \
    "/$call/s/$a1, $a2/((unsigned int *)A_ptr)[2], ((unsigned int *)A_ptr)[1]/"
  mutant "$k16b0" "$dir/mut/gemm_mut_init_dropped.cu" \
    '/^ *D_ptr\[0\] = 0\.0*e+00f;$/d'
  mutant "$k16b0" "$dir/mut/gemm_mut_c_read.cu" \
    's/^\( *D_ptr\[0\] = \)0\.0*e+00f;$/\1C_ptr[0];/'
  # The extension instructions (mma_ext.m16n8k*): a word swap in each
  # kind of input, and a C read in the float16 accumulator.
  mutant "$p/gemm_ext_k32_s8.cu" "$dir/mut/gemm_mut_s8_b_word_swap.cu" \
    "/td_ptx_mma_sync_aligned_m16n8k32_row_col_s32_s8_s8_s32(/s/$b0, $b1/((unsigned int *)B_ptr)[1], ((unsigned int *)B_ptr)[0]/"
  mutant "$p/gemm_ext_k8_tf32.cu" "$dir/mut/gemm_mut_tf32_a_word_swap.cu" \
    "/td_ptx_mma_sync_aligned_m16n8k8_row_col_f32_tf32_tf32_f32(/s/$a1, $a2/((unsigned int *)A_ptr)[2], ((unsigned int *)A_ptr)[1]/"
  mutant "$p/gemm_ext_k32_e4m3.cu" "$dir/mut/gemm_mut_e4m3_b_word_swap.cu" \
    "/td_ptx_mma_sync_aligned_m16n8k32_row_col_f32_e4m3_e4m3_f32(/s/$b0, $b1/((unsigned int *)B_ptr)[1], ((unsigned int *)B_ptr)[0]/"
  mutant "$p/gemm_ext_k16_f16acc.cu" "$dir/mut/gemm_mut_f16acc_c_read.cu" \
    's/^\( *D_ptr\[0\] = \)__float2half(0\.0*e+00f);$/\1C_ptr[0];/'
  src="$p/permute_tvm_shared_to_shared_uses_direct_ldst_uint32.cu"
  if [ -f "$src" ]; then
    mutant "$src" "$dir/mut/permute_mut_slot_swap.cu" \
      's/^\( *td_ptx_st_shared_b32(.*\), regs\[r_1\]);$/\1, regs[r_1 ^ 1]);/'
  fi
  np=$(find "$dir/progs" -name '*.cu' | wc -l)
  nm=$(find "$dir/mut" -name '*.cu' | wc -l)
  echo "programs in $dir/progs ($np) and $dir/mut ($nm)"
  ;;
run)
  gpu_run "$2" "$3" mut "mutants" "failed as they must"
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
