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
case "${1:-}" in
prepare)
  dir=$2
  mkdir -p "$dir/progs" "$dir/fake"
  rm -f "$dir"/progs/*.cu "$dir"/fake/*.cu
  names=$(cd "$root/tests/conformance" && ls copy_*.yaml 2>/dev/null | sed 's/\.yaml$//')
  if [ -z "$names" ]; then
    echo "gpu-copy: no tests/conformance/copy_*.yaml" >&2
    exit 1
  fi
  golden=$(cd "$root/tests/golden/cases" && ls copy_*.yaml 2>/dev/null | sed 's/^/golden-/; s/\.yaml$//')
  # shellcheck disable=SC2086
  python3 "$root/tests/conformance/run.py" "$root/build/tiledispatch" $names $golden \
    --cases "$root/tests/conformance" --golden "$root/tests/golden/cases" \
    --out "$dir/progs" --data both || exit 1
  TD_COPY_DUMP="$dir/fake" "$root/build/tests/cuda/cuda_test_kernel_copy" \
    >/dev/null 2>&1 || exit 1
  echo "programs in $dir/progs ($(ls "$dir"/progs/*.cu | wc -l)) and $dir/fake ($(ls "$dir"/fake/*.cu | wc -l))"
  ;;
run)
  dir=$2; out=$3
  mkdir -p "$out"
  "$root/scripts/gpu-check" "$dir/progs" -j "$(nproc)" >"$out/gpu-check.txt" 2>&1
  rc1=$?
  cp "$dir/progs/gpu-check/results.tsv" "$out/" 2>/dev/null
  tail -3 "$out/gpu-check.txt"
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
  arch=sm_${cap/./}a
  bad=0
  : >"$out/fake.txt"
  for cu in "$dir"/fake/*.cu; do
    n=$(basename "$cu" .cu)
    case "$n" in
    *_copy_past) want="FAIL"; tail="written outside the region" ;;
    *_copy_transpose|*_copy_drop) want="FAIL"; tail="first mismatch at " ;;
    cp_g2l_holes) want="FAIL"; tail="a register slot no element owns" ;;
    cp_g2s_holes) want="FAIL"; tail="a hole no element has" ;;
    *) want="PASS"; tail="bit-exact" ;;
    esac
    if ! "$nvcc" -O2 -arch="$arch" -o "$out/$n.bin" "$cu" >"$out/$n.compile.log" 2>&1; then
      echo "BAD $n: nvcc failed (see $n.compile.log)" >>"$out/fake.txt"
      bad=$((bad + 1))
      continue
    fi
    for mode in exact random; do
      line=$(timeout 120 "$out/$n.bin" --data "$mode" | head -1)
      if [ "${line%% *}" = "$want" ] && [[ "$line" == *"$tail"* ]]; then
        echo "ok  $n ($mode): $line" >>"$out/fake.txt"
      else
        echo "BAD $n ($mode), want $want '$tail': $line" >>"$out/fake.txt"
        bad=$((bad + 1))
      fi
    done
    rm -f "$out/$n.bin"
  done
  echo "fake programs: $(grep -c '^ok' "$out/fake.txt") runs as they must, $bad not"
  [ "$rc1" -eq 0 ] && [ "$bad" -eq 0 ]
  ;;
*)
  echo "usage: $0 prepare DIR | run DIR OUT" >&2
  exit 2
  ;;
esac
