#!/usr/bin/env bash
# The GPU run of the dsmem variant's emitted bodies: tests/cuda/dsmem_gpu.py
# wraps each dsmem_* conformance case that dispatches to dsmem in a
# two-CTA cluster program (the caller's protocol of docs/copy_async.md)
# that checks every destination element; its mutants map every copy into
# the issuing CTA itself and must FAIL.
#
#   tests/cuda/gpu-dsmem.sh prepare DIR   # build machine: needs build/tiledispatch, PyYAML
#   tests/cuda/gpu-dsmem.sh run DIR OUT   # GPU machine (sm_90): needs nvcc, bash
#
# run writes OUT/dsmem.txt (one line per program: PASS/FAIL, then the
# mutants: "ok (mutant caught)" or "MUTANT SURVIVED") and exits 0 when
# every program passed and every mutant was caught.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case "${1:-}" in
prepare)
  dir=$2
  mkdir -p "$dir/good" "$dir/mutant"
  cases=$(grep -l '^# expect: dsmem$' "$root"/tests/conformance/dsmem_*.yaml)
  # shellcheck disable=SC2086
  python3 "$here/dsmem_gpu.py" "$root/build/tiledispatch" "$dir/good" $cases &&
  python3 "$here/dsmem_gpu.py" --mutant "$root/build/tiledispatch" "$dir/mutant" $cases
  ;;
run)
  out=$3
  dir=$2
  mkdir -p "$out" "$out/bin"
  status=0
  : > "$out/dsmem.txt"
  for kind in good mutant; do
    for cu in "$dir/$kind"/*.cu; do
      name=$(basename "$cu" .cu)
      bin="$out/bin/$kind-$name"
      if ! nvcc -arch=sm_90a -o "$bin" "$cu" 2> "$out/bin/$kind-$name.nvcc.txt"; then
        echo "FAIL $kind $name: nvcc (bin/$kind-$name.nvcc.txt)" | tee -a "$out/dsmem.txt"
        status=1
        continue
      fi
      line=$(timeout 20 "$bin" 2>&1)
      rc=$?
      if [ "$kind" = good ]; then
        [ $rc -eq 0 ] || status=1
        echo "${line:-FAIL $name: exit $rc}" | tee -a "$out/dsmem.txt"
      elif [ $rc -eq 1 ]; then
        echo "ok (mutant caught) $line" | tee -a "$out/dsmem.txt"
      else
        echo "MUTANT SURVIVED (exit $rc) $line" | tee -a "$out/dsmem.txt"
        status=1
      fi
    done
  done
  exit $status
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
