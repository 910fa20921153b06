# shellcheck shell=bash
# Shell functions shared by the GPU scripts of a family (gpu-copy.sh,
# gpu-ldgsts.sh, gpu-permute.sh, gpu-gemm.sh, gpu-cluster.sh, gpu-tma.sh):
# sourced, not run.  Each script writes the family's
# self-checking programs on the build machine and, on the GPU machine, runs
# them through scripts/gpu-check and compiles and runs its own programs
# that must PASS or FAIL in a given way (fakes, mutants).
# The caller sets root (the source tree).

# gpu_prepare_progs DIR NAMES GOLDEN: DIR/progs holds the programs of the
# conformance cases NAMES and the golden cases GOLDEN (golden-NAME), both
# data modes, with run.py's manifest; $TILEDISPATCH names the binary
# (default build/tiledispatch).
gpu_prepare_progs() {
  # shellcheck disable=SC2086
  python3 "$root/tests/conformance/run.py" "${TILEDISPATCH:-$root/build/tiledispatch}" $2 $3 \
    --cases "$root/tests/conformance" --golden "$root/tests/golden/cases" \
    --out "$1/progs" --data both
}

# gpu_prepare_family DIR PREFIX LABEL: gpu_prepare_progs over every
# tests/conformance/PREFIX*.yaml and every tests/golden/cases/PREFIX*.yaml;
# fails (LABEL: ...) when the conformance folder has none.
gpu_prepare_family() {
  local names golden
  names=$(cd "$root/tests/conformance" && ls "$2"*.yaml 2>/dev/null | sed 's/\.yaml$//')
  if [ -z "$names" ]; then
    echo "$3: no tests/conformance/$2*.yaml" >&2
    return 1
  fi
  golden=$(cd "$root/tests/golden/cases" && ls "$2"*.yaml 2>/dev/null | sed 's/^/golden-/; s/\.yaml$//')
  gpu_prepare_progs "$1" "$names" "$golden"
}

# gpu_build_tiledispatch BUILDDIR OUT LABEL: builds tiledispatch in
# $root/BUILDDIR (set up again unless its build.ninja is there), the log
# in OUT/build.txt (its tail printed on failure); sets exe to the binary.
gpu_build_tiledispatch() {
  if ! (cd "$root" &&
        { [ -f "$1/build.ninja" ] || { rm -rf "$1"; meson setup "$1" >"$2/build.txt" 2>&1; }; } &&
        ninja -C "$1" tiledispatch >>"$2/build.txt" 2>&1); then
    echo "$3: building tiledispatch failed ($2/build.txt):"
    tail -20 "$2/build.txt"
    return 1
  fi
  exe=$root/$1/tiledispatch
}

# gpu_check_progs DIR OUT: scripts/gpu-check over DIR/progs into
# OUT/gpu-check.txt and OUT/results.tsv; its exit status.
gpu_check_progs() {
  local rc
  "$root/scripts/gpu-check" "$1/progs" -j "$(nproc)" >"$2/gpu-check.txt" 2>&1
  rc=$?
  cp "$1/progs/gpu-check/results.tsv" "$2/" 2>/dev/null
  tail -3 "$2/gpu-check.txt"
  return $rc
}

# gpu_run_expected OUT LOG PROGRAM.cu...: compiles each program for this
# GPU's arch and runs it in both data modes; gpu_want NAME (the caller's
# function) prints the word the first line must start with (PASS or FAIL)
# and, on the next line, text it must hold (empty: anything).  One line per
# run in OUT/LOG (ok / BAD); sets gpu_bad to the number of BAD lines.
gpu_run_expected() {
  local out=$1 log=$2 nvcc cap arch cu n want tail mode line
  shift 2
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
  arch=sm_${cap/./}a
  gpu_bad=0
  : >"$out/$log"
  for cu in "$@"; do
    n=$(basename "$cu" .cu)
    { IFS= read -r want; IFS= read -r tail; } < <(gpu_want "$n")
    if ! "$nvcc" -O2 -arch="$arch" -o "$out/$n.bin" "$cu" >"$out/$n.compile.log" 2>&1; then
      echo "BAD $n: nvcc failed (see $n.compile.log)" >>"$out/$log"
      gpu_bad=$((gpu_bad + 1))
      continue
    fi
    for mode in exact random; do
      line=$(timeout 120 "$out/$n.bin" --data "$mode" | head -1)
      if [ "${line%% *}" = "$want" ] && [[ "$line" == *"$tail"* ]]; then
        echo "ok  $n ($mode): $line" >>"$out/$log"
      else
        echo "BAD $n ($mode), want $want${tail:+ '$tail'}: $line" >>"$out/$log"
        gpu_bad=$((gpu_bad + 1))
      fi
    done
    rm -f "$out/$n.bin"
  done
}

# gpu_run DIR OUT SUB LABEL DONE: the GPU side of a family's script:
# gpu_check_progs over DIR/progs, then gpu_run_expected over DIR/SUB/*.cu
# into OUT/SUB.txt, and the line "LABEL: N DONE, M not".  Exit status 0
# when every program passed and every one of SUB did what it must.
gpu_run() {
  local dir=$1 out=$2 sub=$3 rc
  mkdir -p "$out"
  gpu_check_progs "$dir" "$out"
  rc=$?
  gpu_run_expected "$out" "$sub.txt" "$dir/$sub"/*.cu
  echo "$4: $(grep -c '^ok' "$out/$sub.txt") $5, $gpu_bad not"
  [ "$rc" -eq 0 ] && [ "$gpu_bad" -eq 0 ]
}
