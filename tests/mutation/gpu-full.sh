#!/usr/bin/env bash
# The full mutation run on a GPU machine, one shard a call: every mutant of
# every program the GPU can run (tests/mutation/gpu_full.py: bundles of
# mutant kernels, one nvcc run per bundle, one process running a bundle's
# kernels in turn, each in exact data and then, unless exact data killed
# it, random data with two seeds), the programs the CPU stand-in cannot
# run first.
#
#   OUT=DIR SHARD=I/N tests/mutation/gpu-full.sh PROGS [--all]
#
# PROGS is scripts/gen-programs' output, a directory or a .tar.gz of one
# (made on the build machine: scripts/gen-programs P && tar czf
# progs.tar.gz -C P .).  Without --all only the programs the CPU stand-in
# cannot run (16-bit floats, inline PTX); with --all every sm_90a program.
# Run from the repository root; needs bash, python3, nvcc and the GPU (no
# build of the project).
# Each call stops starting new work at $DEADLINE seconds (default 460) and
# cuts runs 60 s later, so it ends within the device's 600 s limit; what
# is left is listed as not run.  $RUNNERS processes run on the GPU at once
# (default 12), nvcc runs on every core.  Results under $OUT:
#   results-I.tsv  one line per mutant (id, variant, operator, status,
#                  description, the first failing run, the diff lines)
#   log-I.txt      one line per program, the shard's totals and times
#                  (nvcc runs, program runs, processes, device resets)
#   score-I.txt    gpu_full.py score over this shard's results
#   env-I.txt      GPU, driver, nvcc, commit, dates
# Afterwards, with every shard's results-*.tsv in one DIR (any machine):
#   python3 tests/mutation/gpu_full.py score DIR
#
# The whole run in three device calls (docs/verification.md, "Mutation
# suite"; `python3 tests/mutation/gpu_full.py plan .dev/progs 3` prints
# each shard's expected seconds from tests/mutation/program-seconds.tsv,
# about 360 s each; two shards would need about 540 s each): on the build
# machine
#   scripts/gen-programs .dev/progs && tar czf .dev/progs.tar.gz -C .dev/progs .
# then one call per shard, carrying .dev/progs.tar.gz (about 13 MB):
#   OUT=$OUT SHARD=0/3 DEADLINE=480 tests/mutation/gpu-full.sh .dev/progs.tar.gz
#   (and SHARD=1/3, SHARD=2/3)
# Afterwards refresh the table from the calls' logs and results:
#   python3 tests/mutation/gpu_full.py times log-0.txt results-0.tsv ... \
#     -o tests/mutation/program-seconds.tsv
set -u
if [ $# -lt 1 ] || [ -z "${OUT:-}" ] || [ -z "${SHARD:-}" ]; then
  echo "usage: OUT=DIR SHARD=I/N tests/mutation/gpu-full.sh PROGS [--all]" >&2
  exit 2
fi
progs=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
k=${SHARD%%/*}
mkdir -p "$OUT"
if [ -f "$progs" ]; then
  dir=$(mktemp -d)
  tar xzf "$progs" -C "$dir" || exit 2
  progs=$dir
fi
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -n1
  # the commit, and whether the tree that ran differed from it (the device
  # gets the working tree, committed or not)
  git -C "$root" log -1 --format=%H 2>/dev/null
  git -C "$root" status --porcelain --untracked-files=no 2>/dev/null |
    awk 'END { if (NR) print NR " tracked file(s) changed from that commit"; else print "tree = commit" }'
  echo "nproc $(nproc), shard $SHARD, args: $*"
  date -u
} >"$OUT/env-$k.txt" 2>&1
jobs=$(nproc)
python3 "$root/tests/mutation/gpu_full.py" run "$progs" "$OUT" \
  --shard "$SHARD" -j "$jobs" --runners "${RUNNERS:-12}" \
  --deadline "${DEADLINE:-460}" "$@" | tail -n 3
python3 "$root/tests/mutation/gpu_full.py" score "$OUT" \
  >"$OUT/score-$k.txt" 2>&1
rc=$?
date -u >>"$OUT/env-$k.txt"
grep -E '^mutation:|^not run' "$OUT/score-$k.txt"
exit $rc
