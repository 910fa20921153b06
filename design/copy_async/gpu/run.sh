#!/bin/sh
# Builds and runs async_facts.cu (design/copy_async/plan.md §4 A4 and A6) on
# an sm_90 GPU; the build log and the program's output go to $OUT (default .).
# Usage (from the repository root): OUT=/some/dir sh design/copy_async/gpu/run.sh
set -u
out=${OUT:-.}
dir=$(dirname "$0")
{ command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$out/gpu.txt" 2>&1
if ! nvcc -arch=sm_90a -Werror all-warnings -o "$out/async_facts" "$dir/async_facts.cu" \
        > "$out/build.log" 2>&1; then
    cat "$out/build.log"
    exit 1
fi
timeout 120 "$out/async_facts" > "$out/async_facts.txt" 2>&1
rc=$?
cat "$out/gpu.txt" "$out/async_facts.txt"
echo "exit $rc" >> "$out/async_facts.txt"
exit $rc
