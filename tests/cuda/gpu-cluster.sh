#!/usr/bin/env bash
# The GPU run of the cluster-launch programs: every tests/conformance case
# that dispatches to dsmem (shared -> shared into a peer CTA) or that
# multicasts a TMA load (cta_mask in a cluster launch), and the three of
# tests/cuda/data (a 2 x 2 cluster; a peer and a barrier that move with a scalar;
# a mask leaving the issuer out), gets its program
# from `tiledispatch kernel` (clusters launched with cudaLaunchKernelEx;
# one the generator refuses is listed in refused.txt with its reason),
# compiled with -arch=sm_90a and run with exact data and with random data
# (seed 1); each must PASS.  Mutants that must FAIL (a clean FAIL line,
# not a hang):
#   dsmem_contiguous_2d_mapa_self   every mapa names the issuing CTA itself
#                                   (the copy lands in its own tile)
#   dsmem_same_buffer_mapa_self     the same where one buffer holds both rows
#   dsmem_nested_3d_src_off         each 128-byte chunk read 64 elements on
#   tma_g2s_multicast_cluster_row_off  the multicast box one row off
#   dsmem_contiguous_1d_mbar_out    the barrier's rank 1 + cbx (2: outside)
#   dsmem_contiguous_1d_size_513    a copy of 513 bytes (not 16 x n)
#   dsmem_cluster_2x2_mbar_next     the barrier's rank (rank + 1) % 4
#
# and one program whose outcome is recorded, not judged (kind "observed"):
#   dsmem_cluster_2x2_mbar_next_unchecked  the barrier mutant without
#                                   TD_CHECKED.  PTX leaves a cluster copy
#                                   whose barrier is not in the destination
#                                   CTA undefined; on the H200 (2026-12-03)
#                                   it PASSes: the bytes complete as if on
#                                   the destination's own barrier, so only
#                                   the checked mode's trap catches it
#                                   (docs/verification.md).
#
#   OUT=DIR bash tests/cuda/gpu-cluster.sh      # all on the GPU machine:
#                                               # builds build-gpu-cluster/
#   tests/cuda/gpu-cluster.sh prepare DIR [--compile]
#                         # build machine: build/tiledispatch; --compile
#                         # also builds every program with nvcc (sm_90a)
#                         # as the GPU run will (exit 77 without nvcc)
#   tests/cuda/gpu-cluster.sh run DIR OUT       # GPU machine: nvcc, bash
#
# run writes OUT/results.tsv (name, kind, mode, ok/BAD, exit, the
# program's line), OUT/summary.txt (counts, the refused cases, the device)
# and each program's nvcc log and output under OUT/logs; it exits 0 when
# every program passed in both modes and every mutant failed in both.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cuda/gpu-lib.sh
. "$here/gpu-lib.sh"
exe=${TILEDISPATCH:-$root/build/tiledispatch}
# -gencode, not -arch: -arch=sm_90a also embeds compute_90 PTX, for which
# ptxas advises against .multicast::cluster (docs/copy_async.md).
nvcc_flags="-O2 -gencode arch=compute_90a,code=sm_90a -diag-suppress 177"

# mutant NAME SRC FROM TO: SRC with the first line holding FROM changed
# (FROM must be there), as DIR/mutants/NAME.cu.
mutant() {
  local dir=$1 name=$2 src=$3 from=$4 to=$5
  grep -qF -- "$from" "$src" || { echo "gpu-cluster: $src has no '$from'" >&2; return 1; }
  FROM=$from TO=$to python3 -c '
import os, sys
s = open(sys.argv[1]).read()
f, t = os.environ["FROM"], os.environ["TO"]
sys.stdout.write(s.replace(f, t, 1))' "$src" >"$dir/mutants/$name.cu"
}

prepare() {
  local dir=$1 f name v n
  mkdir -p "$dir/progs" "$dir/mutants" "$dir/observed"
  rm -f "$dir"/progs/*.cu "$dir"/mutants/*.cu "$dir"/observed/*.cu
  : >"$dir/refused.txt"
  for f in "$root"/tests/conformance/dsmem_*.yaml "$root"/tests/conformance/tma_*multicast*.yaml \
           "$root"/tests/cuda/data/dsmem_*.yaml "$root"/tests/cuda/data/tma_multicast_*.yaml; do
    name=$(basename "$f" .yaml)
    v=$("$exe" dispatch "$f" 2>/dev/null)
    case "$v" in dsmem | tma_auto | tma_explicit) ;; *) continue ;; esac
    if ! "$exe" kernel "$f" -o "$dir/progs/$name.cu" 2>"$dir/$name.err"; then
      echo "$name: $(cat "$dir/$name.err")" >>"$dir/refused.txt"
      rm -f "$dir/progs/$name.cu"
    fi
    rm -f "$dir/$name.err"
  done
  # The mapa mutants: a self-reference is not expanded again, so the
  # macro turns every call into one naming the CTA's own rank.
  local self='#define td_mapa_shared_cluster(p, r) td_mapa_shared_cluster((p), (unsigned int)(blockIdx.x % 2))
__global__ void td_kernel('
  mutant "$dir" dsmem_contiguous_2d_mapa_self "$dir/progs/dsmem_contiguous_2d.cu" \
    '__global__ void td_kernel(' "$self" || return 1
  mutant "$dir" dsmem_same_buffer_mapa_self "$dir/progs/dsmem_same_buffer.cu" \
    '__global__ void td_kernel(' "$self" || return 1
  mutant "$dir" dsmem_nested_3d_src_off "$dir/progs/dsmem_nested_3d.cu" \
    'td_bulk_copy_s2c(cluster_dst, S_src_ptr + (c0 * 1024 + c1 * 64), 128' \
    'td_bulk_copy_s2c(cluster_dst, S_src_ptr + (c0 * 1024 + c1 * 64 + 64), 128' || return 1
  # The barrier's rank and the copy's size (docs/verification.md, "Cluster
  # copies: a wrong barrier"): a rank outside the cluster and a size of
  # 513 trap in the checked mode; in the 2 x 2 cluster a wrong rank inside
  # it (rank + 1 mod 4) traps there too (getctarank), and with the checked
  # mode off the snapshot after the wait sees CTA 1 pass its wait before
  # CTA 2's bytes land.
  mutant "$dir" dsmem_contiguous_1d_mbar_out "$dir/progs/dsmem_contiguous_1d.cu" \
    'td_mapa_shared_cluster(mbar_ptr, 1 - td_cluster_ctaid_x())' \
    'td_mapa_shared_cluster(mbar_ptr, 1 + td_cluster_ctaid_x())' || return 1
  mutant "$dir" dsmem_contiguous_1d_size_513 "$dir/progs/dsmem_contiguous_1d.cu" \
    'td_bulk_copy_s2c(cluster_dst, S_src_ptr, 512, remote_mbar)' \
    'td_bulk_copy_s2c(cluster_dst, S_src_ptr, 513, remote_mbar)' || return 1
  local inrange='td_mapa_shared_cluster(mbar_ptr, (td_cluster_ctaid_x() + 2 * td_cluster_ctaid_y() + 1) % 4)'
  mutant "$dir" dsmem_cluster_2x2_mbar_next "$dir/progs/dsmem_cluster_2x2.cu" \
    'td_mapa_shared_cluster(mbar_ptr, 3 - (td_cluster_ctaid_x() + 2 * td_cluster_ctaid_y()))' \
    "$inrange" || return 1
  mutant "$dir" dsmem_cluster_2x2_mbar_next_unchecked "$dir/mutants/dsmem_cluster_2x2_mbar_next.cu" \
    '#define TD_CHECKED 1' '#define TD_UNCHECKED_RUN 1' || return 1
  mv "$dir/mutants/dsmem_cluster_2x2_mbar_next_unchecked.cu" "$dir/observed/"
  mutant "$dir" tma_g2s_multicast_cluster_row_off "$dir/progs/tma_g2s_multicast_cluster.cu" \
    'td_tma_load_2d_multicast(A_smem_ptr, &A_tensormap, 0, 0, mbar_ptr' \
    'td_tma_load_2d_multicast(A_smem_ptr, &A_tensormap, 0, 1, mbar_ptr' || return 1
  n=$(ls "$dir"/progs/*.cu | wc -l)
  echo "gpu-cluster: $n programs, $(ls "$dir"/mutants/*.cu | wc -l) mutants," \
       "$(ls "$dir"/observed/*.cu | wc -l) observed, $(wc -l <"$dir/refused.txt") refused"
  [ "$n" -gt 0 ]
}

# Every program and mutant compiled as run() compiles it (the build
# machine's check that the GPU run is not the first compile).
compile_all() {
  local dir=$1 nvcc cu bad=0
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  [ -x "$nvcc" ] || { echo "gpu-cluster: no nvcc (skipped)"; return 77; }
  mkdir -p "$dir/bin"
  for cu in "$dir"/progs/*.cu "$dir"/mutants/*.cu "$dir"/observed/*.cu; do
    # shellcheck disable=SC2086
    if ! "$nvcc" $nvcc_flags -o "$dir/bin/$(basename "$cu" .cu)" "$cu" \
        >"$dir/bin/$(basename "$cu" .cu).nvcc.txt" 2>&1; then
      echo "gpu-cluster: nvcc failed on $cu:"
      cat "$dir/bin/$(basename "$cu" .cu).nvcc.txt"
      bad=1
    fi
  done
  [ "$bad" -eq 0 ] && echo "gpu-cluster: every program and mutant compiles for sm_90a"
  return $bad
}

run() {
  local dir=$1 out=$2 nvcc cu n kind mode line rc ok pass=0 bad=0
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  mkdir -p "$out/logs"
  printf 'name\tkind\tmode\tresult\texit\tline\n' >"$out/results.tsv"
  for kind in progs mutants observed; do
    for cu in "$dir/$kind"/*.cu; do
      n=$(basename "$cu" .cu)
      # shellcheck disable=SC2086
      if ! "$nvcc" $nvcc_flags -o "$out/logs/$n.bin" "$cu" \
          >"$out/logs/$n.nvcc.txt" 2>&1; then
        printf '%s\t%s\t-\tBAD\t-\tnvcc failed (logs/%s.nvcc.txt)\n' "$n" "$kind" "$n" >>"$out/results.tsv"
        bad=$((bad + 1))
        continue
      fi
      for mode in exact random; do
        timeout 60 "$out/logs/$n.bin" --data $mode --seed 1 >"$out/logs/$n.$mode.txt" \
          2>>"$out/logs/$n.stderr.txt"
        rc=$?
        line=$(head -1 "$out/logs/$n.$mode.txt")
        [ $rc -eq 124 ] && line="timed out after 60 s (a barrier never completed?)"
        ok=BAD
        if [ "$kind" = observed ]; then
          ok=seen
        elif { [ "$kind" = progs ] && [ "${line%% *}" = PASS ]; } ||
           { [ "$kind" = mutants ] && [ "${line%% *}" = FAIL ] && [ $rc -eq 1 ]; }; then
          ok=ok
          pass=$((pass + 1))
        else
          bad=$((bad + 1))
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$kind" "$mode" "$ok" "$rc" "${line:-no output}" >>"$out/results.tsv"
      done
      rm -f "$out/logs/$n.bin"
    done
  done
  {
    echo "gpu-cluster: $pass runs as they must, $bad not"
    nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>/dev/null
    echo "refused (no program written):"
    cat "$dir/refused.txt"
  } >"$out/summary.txt"
  cat "$out/summary.txt"
  column -t -s "$(printf '\t')" "$out/results.tsv" 2>/dev/null || cat "$out/results.tsv"
  [ "$bad" -eq 0 ] && [ "$pass" -gt 0 ]
}

case "${1:-}" in
prepare)
  [ $# -ge 2 ] || { echo "usage: $0 prepare DIR [--compile]" >&2; exit 2; }
  prepare "$2" || exit 1
  if [ "${3:-}" = --compile ]; then compile_all "$2"; exit $?; fi
  ;;
run) run "$2" "$3" ;;
"")
  # Everything on the GPU machine: build, write, compile, run.
  : "${OUT:?set OUT to the folder for the results}"
  mkdir -p "$OUT"
  if [ -z "${TILEDISPATCH:-}" ]; then
    gpu_build_tiledispatch build-gpu-cluster "$OUT" gpu-cluster || exit 1
  fi
  work=$(mktemp -d)
  prepare "$work" && run "$work" "$OUT"
  ;;
*)
  echo "usage: OUT=DIR $0 | $0 prepare DIR [--compile] | $0 run DIR OUT" >&2
  exit 2
  ;;
esac
