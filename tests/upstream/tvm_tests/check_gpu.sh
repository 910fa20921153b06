#!/usr/bin/env bash
# The last step of the GPU half of tvm-own-tests, back on this machine:
# replays every exported item's own run_and_check (TVM's assertions,
# unmodified) with the tensors the H200 produced, and prints the counts.
#
#   tests/upstream/tvm_tests/check_gpu.sh RESULTS [OUTDIR [PYTEST ARGS...]]
#
# RESULTS is the folder the device run wrote ($OUT: tests.tar,
# summary.json).  An item passes when its check passes on the GPU's
# outputs, fails when it does not, and is skipped with the reason where
# the GPU produced nothing for it (not exported, or its run failed there:
# summary.json says why).  Exit status 1 when an item failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
results=$(cd "${1:?usage: check_gpu.sh RESULTS [OUTDIR]}" && pwd)
out=${2:-$root/build/tvm_own_tests_gpu}
shift $(($# < 2 ? $# : 2))
py=${TD_UPSTREAM_PYTHON:-$root/build-python/venv/bin/python}
mkdir -p "$out"
rm -rf "$out/tests"
tar -C "$out" -xf "$results/tests.tar"
cd "$out"
rc=0
PYTHONPATH=$here "$py" -m pytest -q -p no:cacheprovider --rootdir "$here" -c /dev/null \
  -p td_plugin -W ignore --td-bridge=on --td-report="$out/gpu.jsonl" \
  --td-gpu-results="$out/tests" "$@" "$here/tests" >"$out/replay.log" 2>&1 || rc=$?
"$py" - "$out/gpu.jsonl" <<'PY'
import collections, json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
c = collections.Counter(r["outcome"] for r in rows)
checked = sum(r.get("gpu_half") == "checked against the GPU's outputs" for r in rows)
print(f"GPU half: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped "
      f"({checked} items checked against the H200's outputs)")
for r in rows:
    if r["outcome"] == "failed":
        print("FAIL", r["nodeid"].split("cuda/", 1)[-1], "|", r.get("reason", ""))
skips = collections.Counter(r.get("reason", "") for r in rows if r["outcome"] == "skipped")
for why, n in skips.most_common(8):
    print(f"skipped x{n}: {why[:160]}")
PY
exit $rc
