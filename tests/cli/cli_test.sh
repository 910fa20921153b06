#!/usr/bin/env bash
# Command-line tests: exit codes (contract section 5), messages and outputs.
# usage: cli_test.sh TILEDISPATCH SOURCE_ROOT
set -u
td=$1
root=$2
data="$root/tests/cli/data"
seed="$root/examples/calls/seed_local_sum.yaml"
rules="$root/rules/rules.yaml"
unset TILEDISPATCH_RULES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

# The seed's example end to end.
expect 0 "local" dispatch "$seed"
expect 0 "for (int red = 0; red < 4; ++red)" emit "$seed" --lang cuda
expect 0 "B_local_ptr[0] = B_local_ptr[0] + A_local_ptr[red];" emit "$seed"
expect 0 "T.serial(4)" emit "$seed" --lang tirx
expect 0 "selected=local" explain "$seed"
expect 0 '"selected":"local"' explain "$seed" --json
[ "$("$td" dispatch "$seed")" = "local" ] && pass=$((pass + 1)) ||
  { echo "FAIL: dispatch output is not exactly 'local'"; fail=$((fail + 1)); }

# No variant matches: exit 1, the table on stderr (dispatch/emit) or stdout (explain).
expect 1 "dispatch failed: op=sum target=cuda" dispatch "$data/cta_local.yaml"
expect 1 "| packed_add_sum (prio=20)" explain "$data/cta_local.yaml" --format tvm
expect 1 "rejected: exec_scope — unsupported exec_scope cta" explain "$data/cta_local.yaml" --format tvm
expect 1 "rejected: local_valid — unsupported exec_scope cta for local reduction" explain "$data/cta_local.yaml" --format tvm
expect 1 "| shared (prio=10)" explain "$data/cta_local.yaml" --format tvm
expect 1 "opcall:" explain "$data/cta_local.yaml" --format tvm
expect 1 '"selected":null' explain "$data/cta_local.yaml" --json
# The default table: the call once, one status per row, one reason per line,
# at most 100 columns; disabled entries are rows too.
expect 1 "call: Tx.cta.sum(B_local[0:1], A_local[0:16], axes=[-1], accum=False)" explain "$data/cta_local.yaml"
expect 1 "| packed_add_sum |   20 | rejected | exec_scope: unsupported exec_scope cta" explain "$data/cta_local.yaml"
expect 1 "|                |      |          | sm_version: sm_version 90 < 100" explain "$data/cta_local.yaml"
expect 1 "|                |      |          |   expected [shared*]" explain "$data/cta_local.yaml"
"$td" explain "$data/cta_local.yaml" >"$tmp/table" 2>&1
if [ "$(grep -c 'opcall' "$tmp/table")" = 0 ] &&
   [ "$(LC_ALL=C.UTF-8 awk '{ if (length($0) > w) w = length($0) } END { print w }' "$tmp/table")" -le 100 ]; then
  pass=$((pass + 1))
else
  echo "FAIL: the explain table is wider than 100 columns or repeats the call"; fail=$((fail + 1))
fi
expect 1 "| local   |   10 | disabled | enabled: false in the rules" explain "$seed" --no-default-rules --rules "$data/disable_local.yaml"
expect 1 "dispatch failed: op=sum target=cuda" dispatch "$seed" --no-default-rules --rules "$data/disable_local.yaml"
expect 1 "| local   |   10 | disabled |" dispatch "$seed" --no-default-rules --rules "$data/disable_local.yaml"
expect 1 "no enabled variants for this op/target (1 disabled)" dispatch "$seed" --no-default-rules --rules "$data/disable_local.yaml" --format tvm
expect 0 "| shared         |   10 | not tried | an earlier candidate won" explain "$seed"
expect 2 "--format 'html': expected text, tvm or json" explain "$seed" --format html
expect 2 "--format applies to explain and to the failure table of a call, not 'rules'" rules --format tvm
expect 1 "dispatch failed" emit "$data/cta_local.yaml"
expect 1 "no variant named '__nonexistent__' is registered" dispatch "$data/forced_unknown.yaml"
expect 2 "no_target.yaml:2:9: error: unknown target 'trn' (expected one of: cuda)" dispatch "$data/no_target.yaml"
expect 2 "unknown target 'trn' (expected one of: cuda)" explain "$data/no_target.yaml"
expect 0 "shared" dispatch "$data/forced_shared.yaml"
expect 1 "variant 'shared' is disabled in the rules for op=sum target=cuda" dispatch "$data/forced_shared.yaml" --rules "$data/raise_shared.yaml"

# Storage the emitters cannot index, and in-place overlap: refused with reasons.
expect 1 "declined — layout of A is not row-major storage (S[8 : 2])" explain "$data/thread_gapped_layout.yaml" --format tvm
expect 1 "rejected: local_valid — layout of A is not row-major storage" explain "$data/thread_gapped_layout.yaml" --format tvm
expect 1 "rejected: local_valid — dst and src regions of A overlap" explain "$data/thread_inplace_overlap.yaml" --format tvm
expect 1 "rejected: shared_valid — layout of A is not row-major storage" explain "$data/shared_colmajor_layout.yaml" --format tvm

# --arch overrides the call's arch.
expect 0 "local" dispatch "$data/sum32.yaml" --arch sm_90a
expect 2 "--arch" dispatch "$seed" --arch volta

# Bad input: exit 2 with a positioned message.
expect 2 "bad_dtype.yaml:4:" dispatch "$data/bad_dtype.yaml"
expect 2 "unknown dtype 'float8'" dispatch "$data/bad_dtype.yaml"
expect 2 "unknown op 'prod'" dispatch "$data/unknown_op.yaml"
expect 2 "unknown_op.yaml:1:5" dispatch "$data/unknown_op.yaml"
# The op's operand check (a reduction: one region source, no extras):
# exit 2 with the position, from every command that dispatches.
for cmd in dispatch explain emit kernel; do
  expect 2 "sum_two_srcs.yaml:7:11: error: op 'sum': expects one source region, got 2 operands" $cmd "$data/sum_two_srcs.yaml"
done
expect 2 "srcs: [A, {value: 1.5, dtype: float32}]" explain "$data/sum_two_srcs.yaml" --json
# gemm (variants/gemm_ops.c, variants/gemm_mma.c): a call loads and prints
# in upstream's form and dispatches to TVM's mma.m16n8k* (one m16n8k16
# mma.sync); a decline of its emitter is exit 1 with TVM's text; shapes that
# disagree and config keys are the op's refusals (exit 2 at the operand or
# key, from every command that dispatches); the other ops' keys are refused
# at load.
gemm="$root/tests/call/data/good/gemm_k16_f16.yaml"
expect 0 "mma.m16n8k*" dispatch "$gemm"
expect 0 "call: Tx.warp.gemm(D[0:16, 0:8], A[0:16, 0:16], B[0:16, 0:8], C[0:16, 0:8], False, False, T.float32(1.0), T.float32(0.0))" explain "$gemm"
expect 0 '"selected":"mma.m16n8k*"' explain "$gemm" --json
expect 0 "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" emit "$gemm"
expect 0 'T.ptx.mma(D.local()[0], D.local()[1], D.local()[2], D.local()[3], A.local().view("uint32")[0]' emit --lang tirx "$gemm"
expect 1 "declined by emitter | gemm mma supports only alpha=1, got" dispatch "$data/gemm_alpha2.yaml"
expect 1 "gemm mma supports only alpha=1, got alpha=T.float32(2.0)" explain "$data/gemm_alpha2.yaml" --json
expect 1 '{"name":"full_active_lanes","ok":false,"reason":"mma.sync is warp-collective; thread scope is not supported"}' explain "$data/gemm_thread_scope.yaml" --json
# "no mma instruction fits" is TVM's text for a fragment that does not carve
# too (plan D8): the message stays TVM's, and explain adds why each
# instruction was passed over, as reasons of their own (JSON: "account").
swapped="$root/tests/conformance/gemm_tvm_swapped_B.yaml"
expect 1 "| m16n8k16.f16: fragment B.K: frag group 1 is not a |" explain "$swapped"
expect 1 "| other dtypes: m16n8k16.bf16, m16n8k8.bf16         |" dispatch "$swapped"
expect 1 "\"message\":\"declined — no mma instruction fits M=16, N=8, K=16, dtypes=('float16', 'float16', 'float32', 'float32')\",\"account\":[\"m16n8k16.f16: fragment B.K: frag group 1 is not a single iter\",\"m16n8k8.f16: fragment B.K: frag group 1 is not a single iter\",\"other dtypes: m16n8k16.bf16, m16n8k8.bf16\"]" explain "$swapped" --json
expect 1 "| mma.m16n8k* (prio=10) | declined — no mma instruction fits M=16, N=8, K=16, dtypes=('float16', 'float16', 'float32', 'float32')             |" explain "$swapped" --format tvm --rules "$root/rules/upstream.yaml"
expect 1 "| m16n8k16.bf16: needs sm_80 " explain "$root/tests/conformance/gemm_k16_bf16_sm75.yaml"
# tiledispatch's own mma.sync forms (mma_ext.m16n8k*, plan 1.6): float16
# accumulation, tf32 only with allow_tf32, off under rules/upstream.yaml.
ext="$root/tests/conformance"
expect 0 "mma_ext.m16n8k*" dispatch "$ext/gemm_ext_k16_f16acc.yaml"
expect 0 "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" emit "$ext/gemm_ext_k16_f16acc.yaml"
expect 1 "| mma_ext.m16n8k* |    5 | disabled            | enabled: false in the rules" explain "$ext/gemm_ext_k16_f16acc.yaml" --rules "$root/rules/upstream.yaml"
expect 0 "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" emit "$ext/gemm_ext_k8_tf32.yaml"
expect 1 "| m16n8k8.tf32: float32 operands compute in tf32    |" explain "$ext/gemm_ext_k8_tf32_no_opt_in.yaml"
expect 1 "| m16n8k32.e4m3: needs sm_89 " explain "$ext/gemm_ext_k32_e4m3_sm80.yaml"
for cmd in dispatch explain emit kernel; do
  expect 2 "gemm_k_mismatch.yaml:15:4: error: op 'gemm': gemm mma: A K=16 != B K=8" $cmd "$data/gemm_k_mismatch.yaml"
done
expect 2 "gemm_config_key.yaml:16:10: error: op 'gemm': unknown config key 'cta_group' (known: allow_tf32)" explain "$data/gemm_config_key.yaml"
expect 2 "gemm_src.yaml:14:1: error: 'src' is not a key of a gemm call" dispatch "$root/tests/call/data/bad/gemm_src.yaml"
# gemm_async (variants/gemm_async.c): tcgen05.mma at thread or warp scope
# (sm_100a); the op refuses unknown config keys and values and TVM's shape
# asserts at the operand (D4, D9); an unguarded thread-scope call is
# rejected with the active set's size (D3); the wrong arch (D2).
ga="$root/tests/conformance/gemm_async_tvm_f16_128x64x64_sw128.yaml"
expect 0 "tcgen05" dispatch "$ga"
expect 0 'call: Tx.gemm_async(C[0:128, 0:64], A[0:128, 0:64], B[0:64, 0:64], transA=False, transB=False, accum=False)' explain "$ga"
expect 0 "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, {%4, %5, %6, %7}, p;" emit "$ga"
expect 0 'T.uint32(135266320), T.uint32(0), T.uint32(0), T.uint32(0), T.uint32(0), T.bool(False), "mma", "cta_group::1", "kind::f16", "", "p8")' emit --lang tirx "$ga"
expect 2 "no self-checking program for tensor memory" kernel "$ga"
expect 0 "the call gives no arch: tcgen05.mma needs sm_100a (not checked)" explain --json "$data/gemm_async_noarch.yaml"
expect 2 "gemm_async_config_key.yaml:18:10: error: op 'gemm_async': unknown config key 'cta_gruop' (known: cta_group, mma_m, mma_n, smem_desc, is_AB_tf32, weight_stationary, descI)" dispatch "$data/gemm_async_config_key.yaml"
expect 2 "gemm_async_smem_desc_value.yaml:18:21: error: op 'gemm_async': smem_desc: expected one of hoist, local_hoist, encode, recompute, got 'hoisted'" explain "$data/gemm_async_smem_desc_value.yaml"
expect 2 "gemm_async_k_mismatch.yaml:14:4: error: op 'gemm_async': tcgen05: A_K=64 doesn't match B_K=32" emit "$data/gemm_async_k_mismatch.yaml"
expect 2 "gemm_async_gemm_key.yaml:15:1: error: 'transpose_A' is not a key of a gemm_async call" dispatch "$data/gemm_async_gemm_key.yaml"
expect 1 '{"name":"single_thread_or_warp","ok":false,"reason":"thread scope issues tcgen05.mma from every active thread; guard the call to one thread (active set has 128 threads)"}' explain "$data/gemm_async_noguard.yaml" --json
expect 1 "rejected: tcgen05_arch — tcgen05.mma needs tensor memory (sm_100a, sm_101a, sm_103a or sm_110a), got sm_90a" explain "$root/tests/conformance/gemm_async_tvm_rejects_sm90a.yaml" --format tvm
# A in tensor memory (the [a_tmem] form) and the batched .ws folds: the
# op's shape asserts read A[2, M, K] and C[2, M, N/2] (at a, at b); the
# emitter's refusals of a flat A under .ws and of a layout TVM's allocator
# would not give A, with TVM's texts; explain's note names A_taddr.
gta="$root/tests/conformance/gemm_async_tvm_tmem_a_ws_packed_c.yaml"
expect 0 "td_tcgen05_mma_ws_ts_cg1_f16(C_taddr, A_taddr, td_tcgen05_smem_desc_add(descB, 0u), 69207184u, 0);" emit "$gta"
expect 0 "tcgen05.mma.ws.cta_group::1.kind::f16 [%0], [%1], %2, %3, p, %5;" emit "$gta"
expect 0 "A_taddr is where A lies in tensor memory" explain "$gta"
expect 2 "gemm_async_batched_a_m.yaml:13:4: error: op 'gemm_async': tcgen05: A_M=32 doesn't match M=64 from C region" dispatch "$data/gemm_async_batched_a_m.yaml"
expect 2 "gemm_async_batched_c_n.yaml:14:4: error: op 'gemm_async': tcgen05: B_N=64 * cta_group=1=64 doesn't match N=128" explain "$data/gemm_async_batched_c_n.yaml"
expect 1 "declined — gemm_async[tcgen05]: an M=64 cta_group::1 .ws GEMM with A in TMEM reads A from both 64-lane halves" explain "$root/tests/conformance/gemm_async_tvm_rejects_tmem_a_ws_flat_a.yaml" --format tvm
expect 1 "TMEM A layout does not match tmem_pool.alloc_tcgen05_mma_A semantic layout" explain "$root/tests/conformance/gemm_async_tvm_rejects_tmem_a_cta2_flat.yaml" --format tvm
expect 2 "gemm_async_tmem_a_lane_191.yaml:10:66: error: tmem buffer 'A': its layout reaches lane 191; tensor memory has 128 lanes" dispatch "$data/gemm_async_tmem_a_lane_191.yaml"
expect 1 "declined — gemm_async: A's region starts at element column 1 of its tensor memory, inside a 32-bit cell (2 bfloat16 to a cell); the MMA reads A from whole cells" explain "$data/gemm_async_tmem_a_mid_cell.yaml" --format tvm
# The confined dtypes of block-scaled MMA (docs/contract.md): refused at the
# load, at the dtype, by every command; where gemm_async allows float4_e2m1fn
# (A and B in shared memory) the call loads and tcgen05 declines it.
bad="$root/tests/call/data/bad"
for cmd in dispatch explain emit kernel; do
  expect 2 "dtype_fp4_copy.yaml:7:29: error: dtype 'float4_e2m1fn' (buffer 'A') is only accepted by gemm_async's A and B (block-scaled MMA, in shared memory); copy does not support it" $cmd "$bad/dtype_fp4_copy.yaml"
done
expect 2 "dtype_e8m0_ewise.yaml:8:28: error: dtype 'float8_e8m0fnu' (buffer 'B') is only accepted by gemm_async's SFA and SFB (block-scaled MMA's scale factors); add does not support it" dispatch "$bad/dtype_e8m0_ewise.yaml"
expect 2 "gemm_async_fp4_odd_start.yaml:14:4: error: a: float4_e2m1fn packs two elements to a byte" dispatch "$bad/gemm_async_fp4_odd_start.yaml"
# Every bad call file of the confined dtypes and of sfa/sfb: exit 2 and the
# loader's message at its position (the file's "# expect:" line).
for f in "$bad"/dtype_e8m0_*.yaml "$bad"/dtype_fp4_*.yaml "$bad"/gemm_async_fp4_*.yaml \
         "$bad"/gemm_async_e8m0_*.yaml "$bad"/gemm_async_sf*.yaml "$bad"/sf*_in_*.yaml; do
  want="$(basename "$f"):$(sed -n '1s/^# expect: \([0-9]*:[0-9]*\): /\1: error: /p' "$f")"
  expect 2 "$want" dispatch "$f"
done
expect 1 "got float4_e2m1fn" explain "$root/tests/call/data/good/gemm_async_fp4.yaml" --format tvm
expect 2 "gemm_async_sfa.yaml:16:1: error: 'sfa' without 'sfb': block scaling takes both scale factors" dispatch "$data/gemm_async_sfa.yaml"
expect 0 "tcgen05 (prio=10) | selected" explain "$root/tests/call/data/good/gemm_async_sf_fp8.yaml" --format tvm
expect 0 "td_tcgen05_mma_bs_cg1_mxf8f6f4(C_taddr, td_tcgen05_smem_desc_add(descA, 0u), td_tcgen05_smem_desc_add(descB, 0u), descI_local, SFA_taddr, SFB_taddr, 0);" emit "$root/tests/call/data/good/gemm_async_sf_fp8.yaml" --lang cuda
expect 1 "declined — tcgen05 block-scaled schedule expected SFA_scope=tmem, SFB_scope=tmem, got SFA_scope=shared.dyn, SFB_scope=shared.dyn" explain "$root/tests/call/data/good/gemm_async_sf_shared.yaml" --format tvm
expect 1 "tcgen05: SFA K extent=2 must be in {16, 1, 4}" dispatch "$root/tests/conformance/gemm_async_tvm_bs_rejects_sf_k.yaml"
expect 1 "SFA: layout does not match atom direct_sum outer pattern" dispatch "$root/tests/conformance/gemm_async_tvm_bs_rejects_sf_layout.yaml"
expect 2 "gemm_async_tvm_bs_lane_bases.yaml:16:69: error: tmem buffer 'SFA': its layout reaches lane 128; tensor memory has 128 lanes" dispatch "$root/tests/conformance/gemm_async_tvm_bs_lane_bases.yaml"
expect 1 "Tx.gemm_async(C[0:128, 0:64], A[0:128, 0:128], B[0:64, 0:128], SFA[0:128, 0:4], SFB[0:64, 0:4], transA=False, transB=False, accum=False)" dispatch "$root/tests/call/data/good/gemm_async_mxfp4.yaml"
expect 2 "sfb_in_gemm.yaml:14:1: error: 'sfb' is a key of gemm_async calls only, not of op 'gemm'" dispatch "$bad/sfb_in_gemm.yaml"
expect 1 "declined — gemm_async: is_AB_tf32 reads A and B as 32-bit tf32 elements; bfloat16 storage would be read 2 elements to a word (TVM lowers it so); store A and B as float32" explain "$data/gemm_async_tf32_bf16.yaml" --format tvm
expect 1 "declined — gemm_async: C's region of tensor memory is not the layout the MMA writes, S[(128, 64) : (1@TLane, 1@TCol)] at the region's first lane and column" explain "$data/gemm_async_c_strided.yaml" --format tvm
# permute_layout (variants/permute.c): its one variant has no predicates and
# declines in its emitter, which every explain format shows as a decline,
# never as a rejected predicate; a call it takes says P and k in its note.
perm="$root/tests/conformance/permute_tvm_reject_non_warp_scope.yaml"
expect 1 "| warp_xor_swizzle |   20 | declined by emitter | scope 'cta' is not 'warp'" explain "$perm"
expect 1 "declined — scope 'cta' is not 'warp'" explain "$perm" --format tvm
expect 1 '"status":"declined","message":"declined — scope '"'"'cta'"'"' is not '"'"'warp'"'"'","predicates":[]' explain "$perm" --json
expect 0 "note: P=4 per lane, XOR bits k=2 (shift 3, mask 3)" explain "$root/tests/conformance/permute_tvm_shared_to_shared_uses_direct_ldst_uint32.yaml"
expect 0 "warp_xor_swizzle" dispatch "$root/tests/conformance/permute_tvm_identity_passes_through_as_copy.yaml"
expect 2 "cannot open" dispatch "$tmp/missing.yaml"
expect 2 "bad_rules_pred.yaml:8:9: error: unknown predicate 'no_such_predicate'" validate "$data/bad_rules_pred.yaml"
expect 2 "^" validate "$data/bad_rules_pred.yaml"
expect 2 "not_yaml.yaml:" validate "$data/not_yaml.yaml"
expect 2 "unknown predicate" dispatch "$seed" --rules "$data/bad_rules_pred.yaml"
TILEDISPATCH_RULES="$data/bad_rules_pred.yaml" expect 2 "unknown predicate" dispatch "$seed"

# Every positioned message shows its source line, also for checks made
# after loading (unknown op) and for YAML errors at the end of the text.
expect 2 "  op: prod" dispatch "$data/unknown_op.yaml"
"$td" validate "$data/not_yaml.yaml" 2>"$tmp/err"
if grep -q "not_yaml.yaml:2:25: error:" "$tmp/err" && grep -qF "  variants: [ {name: local" "$tmp/err" &&
   grep -q "^ *\^$" "$tmp/err"; then
  pass=$((pass + 1))
else
  echo "FAIL: YAML error at end of file lacks its position, line or caret"; sed 's/^/  | /' "$tmp/err"; fail=$((fail + 1))
fi

# Output that cannot be written is an internal error (3), not success.
if [ -w /dev/full ]; then
  "$td" emit "$seed" >/dev/full 2>"$tmp/err"; got=$?
  if [ $got -eq 3 ] && grep -q "cannot write the output" "$tmp/err"; then
    pass=$((pass + 1))
  else
    echo "FAIL: emit to /dev/full exited $got"; fail=$((fail + 1))
  fi
fi
expect 2 "error: cannot write $tmp/no/such/dir/x.cu" kernel "$seed" -o "$tmp/no/such/dir/x.cu"
# Tensor memory (sm_100a): no program, a reason naming the buffer; emit
# still prints the tcgen05.ld the call lowers to.
tmem="$root/tests/golden/cases/tcgen05_ld_32x32b_f32.yaml"
expect 2 "kernel: no self-checking program for tensor memory (buffer Acc; variant tmem<->local)" kernel "$tmem" -o "$tmp/tmem.cu"
expect 0 "td_tcgen05_ld_32x32b_x8(Acc_taddr + 64, (unsigned int *)Rg_ptr);" emit "$tmem"

# A gemm call's self-checking program (tools/kernel/kernel_gemm.c): the
# fragments staged through their layouts, 16-byte aligned for the word
# views, the reference over M x N x K, D's region poisoned.
gemm="$root/tests/conformance/gemm_tvm_tiled_2x2x3_k8_f16_b1.yaml"
expect 0 "" kernel "$gemm" -o "$tmp/gemm.cu"
for needle in "#define TD_GM_M 32" "#define TD_GM_N 16" "#define TD_GM_K 24" \
    "__align__(16) __half A_ptr[" "td_gm_reference(v_in_A + inst * 768LL" \
    "v_in_D[inst * 512LL + td_gm_d[q]] = TD_GM_POISON;" "#define TD_GM_POISON NAN" \
    "td_ptx_mma_sync_aligned_m16n8k8_row_col_f32_f16_f16_f32(D_ptr[0]" \
    "#define TD_EMU_16BIT_STORAGE 1"; do
  ok "gemm program holds '$needle'" grep -qF -- "$needle" "$tmp/gemm.cu"
done
# beta = 0: C's region is poisoned too (a body that reads C fails).
expect 0 "" kernel "$root/tests/conformance/gemm_tvm_tiled_1x1x1_k16_bf16_b0.yaml" -o "$tmp/gemm0.cu"
ok "gemm beta 0 program poisons C" grep -qF "v_in_C[inst * 128LL + td_gm_c[q]] = TD_GM_POISON;" "$tmp/gemm0.cu"
# The extension signatures (mma_ext.m16n8k*): each program states its
# data, its tolerance and its poison.
ext="$root/tests/conformance"
expect 0 "" kernel "$ext/gemm_ext_k32_s8.yaml" -o "$tmp/gemm_s8.cu"
for needle in "gemm (int8 into int32)" "#define TD_GM_INT 1" \
    "#define TD_GM_POISON (-2147483648.0)" "v_in_A[i] = td_rand_int(-128, 127);" \
    "td_data_random ? td_gm_rand_s32() : td_rand_int(-16777216, 16777216)"; do
  ok "int8 gemm program holds '$needle'" grep -qF -- "$needle" "$tmp/gemm_s8.cu"
done
expect 0 "" kernel "$ext/gemm_ext_k8_tf32.yaml" -o "$tmp/gemm_tf32.cu"
for needle in "#define TD_GM_TF32 1" "td_rand_int(-8, 8)" \
    "inputs truncated to tf32, then the float32 bound"; do
  ok "tf32 gemm program holds '$needle'" grep -qF -- "$needle" "$tmp/gemm_tf32.cu"
done
expect 0 "" kernel "$ext/gemm_ext_k16_f16acc.yaml" -o "$tmp/gemm_f16acc.cu"
ok "float16-accumulator gemm program's unit is 2^-10" grep -qF "#define TD_GM_TOL_UNIT 0.0009765625 /* 2^-10 */" "$tmp/gemm_f16acc.cu"
expect 0 "" kernel "$ext/gemm_ext_k32_e5m2.yaml" -o "$tmp/gemm_e5m2.cu"
for needle in "#include <cuda_fp8.h>" "#define TD_EMU_FP8_STORAGE 1" \
    "template <> __nv_fp8_e5m2 td_from_double<__nv_fp8_e5m2>(double v)" \
    "__align__(16) __nv_fp8_e5m2 A_ptr["; do
  ok "e5m2 gemm program holds '$needle'" grep -qF -- "$needle" "$tmp/gemm_e5m2.cu"
done

# Usage errors: exit 2.
expect 2 "--json applies to a call's commands, rules, predicates and impls, not 'validate'" validate "$rules" --json
expect 2 "--json and --format tvm contradict each other" explain "$seed" --json --format tvm
expect 2 "--lang applies to emit, not 'explain'" explain "$seed" --lang tirx
expect 2 "-o applies to kernel, not 'emit'" emit "$seed" -o "$tmp/x"
expect 2 "--rules does not apply" validate "$rules" --rules "$rules"
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "unknown option '--bogus'" dispatch "$seed" --bogus
expect 2 "expected cuda or tirx" emit "$seed" --lang ptx
expect 2 "takes exactly one CALL.yaml" dispatch
expect 2 "needs at least one RULES.yaml" validate
expect 2 "needs a value" dispatch "$seed" --rules
expect 2 "usage:"
expect 0 "usage: tiledispatch" --help

# rules / validate.
expect 0 "rules.yaml: ok, 25 entries" validate --no-default-rules "$rules"
expect 0 "op=sum target=cuda" rules
expect 0 "  packed_add_sum (prio=20)" rules
expect 0 '"variant": "3input_maxmin"' rules --json
expect 0 "shared (prio=30) disabled" rules --rules "$data/raise_shared.yaml"
expect 0 "local" dispatch "$seed" --rules "$data/raise_shared.yaml"
TILEDISPATCH_RULES="$data/raise_shared.yaml" expect 0 "disabled" rules

# Try order in `rules`: packed_add_sum, shared_rows, local, shared for sum.
"$td" rules | awk '/op=sum target=cuda/{f=1;next} /^op=/{f=0} f && /prio=/{print $1}' >"$tmp/order"
if [ "$(tr '\n' ' ' <"$tmp/order")" = "packed_add_sum shared_rows local shared " ]; then
  pass=$((pass + 1))
else
  echo "FAIL: try order for sum is: $(tr '\n' ' ' <"$tmp/order")"; fail=$((fail + 1))
fi

# shared_rows wins a CTA shared reduction; explain says why shared_rows
# declines a partial warp; rules/upstream.yaml (the TVM-identical overlay)
# hands the call back to shared.
rows_call="$root/bench/gpu/calls/r32x32_t32_sum.yaml"
expect 0 "shared_rows" dispatch "$rows_call"
expect 0 "threadIdx.x extent 40 is not a multiple of 32 (shared_rows shuffles across whole warps)" \
  explain "$root/tests/conformance/rows_t40_declined_sum.yaml" --json
expect 0 "rules/upstream.yaml: ok, 2 entries (2 overrides)" validate "$root/rules/upstream.yaml"
expect 0 "shared" dispatch "$rows_call" --rules "$root/rules/upstream.yaml"
"$td" dispatch "$rows_call" --rules "$root/rules/upstream.yaml" >"$tmp/v" 2>&1
[ "$(cat "$tmp/v")" = shared ] && pass=$((pass + 1)) ||
  { echo "FAIL: upstream.yaml does not give shared: $(cat "$tmp/v")"; fail=$((fail + 1)); }

# Swizzled shared layouts and float8: the elementwise smem variant's
# refusals, said in explain; a float8 reduction is declined by every
# reduction variant.
conf="$root/tests/conformance"
expect 1 "rejected: ewise_smem_valid — the swizzle of A (ComposeLayout(3, 3, 3, TileLayout(S[(8, 60):(60, 1)]))) would move elements past its end: its 480 elements are not whole blocks of 64" \
  explain "$conf/ewise_swz_add_partial_rejected.yaml" --format tvm
expect 1 "rejected: ewise_smem_valid — layout of A is not row-major storage (ComposeLayout(3, 3, 3, TileLayout(S[(8, 64):(1, 8)]))); this path indexes its elements in row-major order" \
  explain "$conf/ewise_swz_add_colmajor_rejected.yaml" --format tvm
expect 1 "rejected: ewise_smem_valid — add computes in float8_e4m3fn, which has no arithmetic in CUDA (cast the operands to float16 or float32 first)" \
  explain "$conf/ewise_fp8_add_rejected.yaml" --format tvm
expect 1 "declined — float8_e4m3fn reduction: float8 has no arithmetic in CUDA (reduce a float16 or float32 copy)" \
  explain "$data/sum_float8.yaml" --format tvm
expect 0 "// swizzled C: 8-byte vector accesses (each inside one 16-byte XOR unit)" \
  emit "$conf/ewise_swz_add_f16_tvm.yaml"
"$td" emit "$conf/ewise_swz_add_f16_tvm.yaml" >"$tmp/a" &&
  "$td" emit "$conf/ewise_swz_add_f16_ours.yaml" >"$tmp/b" && cmp -s "$tmp/a" "$tmp/b" &&
  pass=$((pass + 1)) ||
  { echo "FAIL: TVM's ComposeLayout and our Swizzle emit different code"; fail=$((fail + 1)); }

# Deterministic output: same input, same bytes.
"$td" emit "$seed" >"$tmp/a" && "$td" emit "$seed" >"$tmp/b" && cmp -s "$tmp/a" "$tmp/b" &&
  pass=$((pass + 1)) || { echo "FAIL: emit is not deterministic"; fail=$((fail + 1)); }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
