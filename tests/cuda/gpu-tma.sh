#!/usr/bin/env bash
# The GPU run of the TMA programs: every tests/conformance/tma_*.yaml case
# that dispatches to tma_auto or tma_explicit and that `tiledispatch
# kernel` writes a program for (sm_100, cta_group 2 and multicast cases are
# refused with their reason, listed in refused.txt) is compiled with
# -arch=sm_90a and run with exact data and with random data (seed 1); each
# must PASS.  Two mutants of the 128-byte-swizzled load must FAIL: the
# box one row off (its outer coordinate + 1) and the map encoded without
# its swizzle (the check reads the tile through the call's swizzled
# layout).
#
#   OUT=DIR bash tests/cuda/gpu-tma.sh          # all on the GPU machine:
#                                               # builds build-gpu-tma/ first
#   tests/cuda/gpu-tma.sh prepare DIR           # build machine: build/tiledispatch
#   tests/cuda/gpu-tma.sh run DIR OUT           # GPU machine: nvcc, bash
#
# run writes OUT/results.txt (one line per run: ok / BAD), OUT/summary.txt
# (counts, the refused cases, the device) and each program's nvcc log and
# output; it exits 0 when every program passed in both modes and both
# mutants failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/cuda/gpu-lib.sh
. "$here/gpu-lib.sh"
exe=${TILEDISPATCH:-$root/build/tiledispatch}

prepare() {
  local dir=$1 f name v
  mkdir -p "$dir/progs" "$dir/mutants"
  rm -f "$dir"/progs/*.cu "$dir"/mutants/*.cu
  : >"$dir/refused.txt"
  for f in "$root"/tests/conformance/tma_*.yaml; do
    name=$(basename "$f" .yaml)
    v=$("$exe" dispatch "$f" 2>/dev/null)
    case "$v" in tma_auto | tma_explicit) ;; *) continue ;; esac
    if ! "$exe" kernel "$f" -o "$dir/progs/$name.cu" 2>"$dir/$name.err"; then
      echo "$name: $(cat "$dir/$name.err")" >>"$dir/refused.txt"
      rm -f "$dir/progs/$name.cu"
    fi
    rm -f "$dir/$name.err"
  done
  local src="$dir/progs/tma_g2s_sw128.cu"
  local call='td_tma_load_2d(S_ptr, &A_tensormap, 0, 64, mbar_ptr);'
  grep -qF "$call" "$src" || { echo "gpu-tma: $src has no '$call'" >&2; return 1; }
  grep -q 'CU_TENSOR_MAP_SWIZZLE_128B,' "$src" || { echo "gpu-tma: $src has no SWIZZLE_128B" >&2; return 1; }
  sed 's/td_tma_load_2d(S_ptr, &A_tensormap, 0, 64, mbar_ptr);/td_tma_load_2d(S_ptr, \&A_tensormap, 0, 65, mbar_ptr);/' \
    "$src" >"$dir/mutants/tma_g2s_sw128_row_off.cu"
  sed 's/CU_TENSOR_MAP_SWIZZLE_128B,/CU_TENSOR_MAP_SWIZZLE_NONE,/' \
    "$src" >"$dir/mutants/tma_g2s_sw128_no_swizzle.cu"
  echo "gpu-tma: $(ls "$dir"/progs/*.cu | wc -l) programs, 2 mutants," \
       "$(wc -l <"$dir/refused.txt") refused"
}

run() {
  local dir=$1 out=$2 nvcc cu n kind mode line rc pass=0 bad=0
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  mkdir -p "$out/logs"
  : >"$out/results.txt"
  for kind in progs mutants; do
    for cu in "$dir/$kind"/*.cu; do
      n=$(basename "$cu" .cu)
      if ! "$nvcc" -O2 -arch=sm_90a -o "$out/logs/$n.bin" "$cu" \
          >"$out/logs/$n.nvcc.txt" 2>&1; then
        echo "BAD $n: nvcc failed (logs/$n.nvcc.txt)" >>"$out/results.txt"
        bad=$((bad + 1))
        continue
      fi
      for mode in "--data exact" "--data random --seed 1"; do
        # shellcheck disable=SC2086
        timeout 60 "$out/logs/$n.bin" $mode >"$out/logs/$n.out.txt" \
          2>>"$out/logs/$n.stderr.txt"
        rc=$?
        line=$(head -1 "$out/logs/$n.out.txt")
        if { [ "$kind" = progs ] && [ "${line%% *}" = PASS ]; } ||
           { [ "$kind" = mutants ] && [ "${line%% *}" = FAIL ]; }; then
          echo "ok  $kind $n ($mode): $line" >>"$out/results.txt"
          pass=$((pass + 1))
        else
          echo "BAD $kind $n ($mode, exit $rc): ${line:-no output (hang or crash?)}" \
            >>"$out/results.txt"
          bad=$((bad + 1))
        fi
      done
      rm -f "$out/logs/$n.bin"
    done
  done
  {
    echo "gpu-tma: $pass runs as they must, $bad not"
    nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>/dev/null
    echo "refused (no program written):"
    cat "$dir/refused.txt"
  } >"$out/summary.txt"
  cat "$out/summary.txt"
  grep '^BAD' "$out/results.txt"
  [ "$bad" -eq 0 ] && [ "$pass" -gt 0 ]
}

case "${1:-}" in
prepare) prepare "$2" ;;
run) run "$2" "$3" ;;
"")
  # Everything on the GPU machine: build, write, compile, run.
  : "${OUT:?set OUT to the folder for the results}"
  mkdir -p "$OUT"
  if [ -z "${TILEDISPATCH:-}" ]; then
    gpu_build_tiledispatch build-gpu-tma "$OUT" gpu-tma || exit 1
  fi
  work=$(mktemp -d)
  prepare "$work" && run "$work" "$OUT"
  ;;
*)
  echo "usage: OUT=DIR $0 | $0 prepare DIR | $0 run DIR OUT" >&2
  exit 2
  ;;
esac
