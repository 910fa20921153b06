#!/usr/bin/env bash
# The mutation suite on a GPU machine, in one call: the mutants of every
# program of PROGDIR (scripts/gen-programs' output: conformance and golden
# programs, 16-bit floats and inline PTX included), compiled with nvcc and
# run by scripts/gpu-check (which picks -arch=sm_90a on an H200), then
# scored.
#
#   OUT=DIR tests/mutation/gpu-run.sh PROGDIR [PER_PROGRAM]
#
# Run from the repository root.  Needs bash, python3, nvcc and a GPU.  To
# stay within about 8 minutes on 16 cores it keeps PER_PROGRAM mutants of
# each program (default 3; mutate.py's pick: spread over the operators and
# through the body, deterministic), about 1,300 mutants of 443 programs
# plus the 443 unmutated programs (each must pass, else its mutants are
# reported as errors).  Each runs in exact data and random data with two
# seeds (a manifest mode random:2).  The files are split into four shards,
# each checked by its own scripts/gpu-check -j 4 at the same time (16
# compilations at once; the runs of one shard overlap the compilations of
# the others); a run may take 10 s (TD_RUN_TIMEOUT), a mutant that hangs is
# killed.  Results under $OUT:
#   score.txt      the score per variant and operator, the survivors with
#                  their diff lines (mutate.py gpu-score --allow-survivors)
#   results.tsv    every run (gpu-check's rows, the four shards together)
#   mutants.tsv    file, mutant id, variant, operator, description, diff
#   gpu-check.txt  the four gpu-check outputs
#   env.txt        GPU, driver, nvcc, commit, times
set -u
if [ $# -lt 1 ] || [ -z "${OUT:-}" ]; then
  echo "usage: OUT=DIR tests/mutation/gpu-run.sh PROGDIR [PER_PROGRAM]" >&2
  exit 2
fi
progdir=$1
per=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
mkdir -p "$OUT"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -n1
  # the commit, and whether the tree that ran differed from it (the device
  # gets the working tree, committed or not)
  git -C "$root" log -1 --format=%H 2>/dev/null
  git -C "$root" status --porcelain --untracked-files=no 2>/dev/null |
    awk 'END { if (NR) print NR " tracked file(s) changed from that commit"; else print "tree = commit" }'
  date -u
} >"$OUT/env.txt" 2>&1
t0=$(date +%s)
python3 "$root/tests/mutation/mutate.py" gpu-dir "$work" "$progdir" \
  --per-program "$per" --shards 4 | tee -a "$OUT/env.txt"
for k in 0 1 2 3; do
  TD_RUN_TIMEOUT=10 "$root/scripts/gpu-check" "$work/shard$k" -j 4 \
    >"$work/gpu-check-$k.txt" 2>&1 &
done
wait
cat "$work"/gpu-check-*.txt >"$OUT/gpu-check.txt"
cat "$work"/shard*/gpu-check/results.tsv >"$OUT/results.tsv"
cp "$work/mutants.tsv" "$OUT/mutants.tsv"
echo "gpu-check done in $(( $(date +%s) - t0 )) s" >>"$OUT/env.txt"
python3 "$root/tests/mutation/mutate.py" gpu-score "$work" \
  --allow-survivors >"$OUT/score.txt" 2>&1
rc=$?
echo "total $(( $(date +%s) - t0 )) s, gpu-score exit $rc" >>"$OUT/env.txt"
grep -E '^summary:' "$OUT/gpu-check.txt"
grep -E '^\(all\)|^mutation:' "$OUT/score.txt"
rm -rf "$work"
exit $rc
