#!/usr/bin/env bash
# Re-runs every mutant of a few named programs on a GPU machine, in one
# call: for programs whose data or harness changed after a full run
# (tests/mutation/gpu-full.sh), so their survivors can be checked again
# without a whole new run.  It is gpu-full.sh's work (gpu_full.py run:
# bundles of mutant kernels, exact data then random data with two seeds)
# over one shard holding only the named programs (gpu_full.py run's
# --only), the CPU-emulatable ones included (--all).
#
#   OUT=DIR tests/mutation/gpu-rerun.sh PROGS NAME[,NAME...]
#
# PROGS is a directory or .tar.gz written by scripts/gen-programs (or
# tests/conformance/run.py --out DIR --data both ... NAME...) on the build
# machine from the tree under test.  Results under $OUT as gpu-full.sh
# writes them for shard 0 (results-0.tsv, log-0.txt, score-0.txt,
# env-0.txt); the score fails on any survivor that
# tests/mutation/equivalent.tsv does not list.  $DEADLINE (default 480)
# as in gpu-full.sh.
set -u
if [ $# -ne 2 ] || [ -z "${OUT:-}" ]; then
  echo "usage: OUT=DIR tests/mutation/gpu-rerun.sh PROGS NAME[,NAME...]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$OUT SHARD=0/1 DEADLINE=${DEADLINE:-480} \
  "$root/tests/mutation/gpu-full.sh" "$1" --all --only "$2"
