#!/usr/bin/env bash
# The upstream suite's runner (tests/upstream/meson.build):
#   run_suite.sh ROOT differential      real TVM's choice vs tiledispatch's
#   run_suite.sh ROOT gemm-differential  the gemm cases alone, mma.sync
#                                       issue by issue (gemm_differential.py)
#   run_suite.sh ROOT both-ways OUTDIR  every case lowered both ways + nvcc
#   run_suite.sh ROOT tvm-own-tests OUTDIR  TVM's own tile-primitive tests,
#                                       with the bridge and without
#   run_suite.sh ROOT replay-check OUTDIR   the GPU half's reference, on the CPU
#   run_suite.sh ROOT async-tirx DUMP   the async IR nodes' TIRx parsed by TVM
#   run_suite.sh ROOT mma-tirx IR_GOLDEN  the mma.sync node's TIRx parsed by TVM
#   run_suite.sh ROOT gemm-frag         TVM's gemm fragment values, dumped
#                                       again, equal the unit test's data
#   run_suite.sh ROOT gemm-async EXE    the gemm_async calls lowered by TVM
#                                       now, and tiledispatch against them
# Needs the Python package and the pinned apache-tvm in
# ROOT/build-python/venv (scripts/test-python makes it; TD_UPSTREAM_PYTHON
# names another interpreter).  Without them: one SKIP line, exit 77.
set -u
root=$1 what=$2
py=${TD_UPSTREAM_PYTHON:-$root/build-python/venv/bin/python}
if [ ! -x "$py" ]; then
  echo "SKIP upstream: no $py (scripts/test-python builds it with apache-tvm==0.27.0.post1)"
  exit 77
fi
if ! err=$("$py" -c 'import tvm, tiledispatch' 2>&1); then
  echo "SKIP upstream: $py cannot import tvm and tiledispatch: $(printf '%s' "$err" | tail -n1)"
  exit 77
fi
case $what in
  differential)
    exec "$py" "$root/tests/upstream/differential.py" ;;
  gemm-differential)
    exec "$py" "$root/tests/upstream/gemm_differential.py" ;;
  both-ways)
    out=$3
    rm -rf "$out"
    exec "$py" "$root/tests/upstream/both_ways.py" "$out" --jobs "$(nproc)" ;;
  tvm-own-tests)
    exec "$py" "$root/tests/upstream/tvm_tests/run_suite.py" "$3" ;;
  replay-check)
    exec "$py" "$root/tests/upstream/tvm_tests/check_replay.py" "$3" ;;
  async-tirx)
    exec "$py" "$root/tests/upstream/async_tirx.py" "$3" ;;
  mma-tirx)
    exec "$py" "$root/tests/upstream/mma_tirx.py" "$3" "$root/tests/golden/cases" ;;
  gemm-async)
    exec "$py" "$root/tests/upstream/gemm_async_differential.py" "$3" "$root" ;;
  gemm-frag)
    "$py" "$root/tests/upstream/dump_gemm_frag.py" |
      diff -u "$root/tests/upstream/data/gemm_frag.txt" - ;;
  *)
    echo "run_suite.sh: unknown check '$what'" >&2
    exit 2 ;;
esac
