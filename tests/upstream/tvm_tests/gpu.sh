#!/usr/bin/env bash
# Runs on the GPU machine (an H200): the bundle prepare_gpu.sh made, with
# TVM's runtime and apache-tvm-ffi from the bundle, numpy and torch from the
# machine's Python.  Writes $OUT/summary.json (the softmax against numpy
# and its timings; how many test items ran), $OUT/tests.tar (each item's
# tensors after its kernel, for check_gpu.sh) and $OUT/gpu.log.
#
#   bash BUNDLE/gpu.sh            (OUT defaults to ./gpu-out)
set -euo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --target "$site" "$bundle"/wheels/*.whl
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.log"
python3 "$bundle/gpu_run.py" "$bundle" "$out" 2>&1 | tee -a "$out/gpu.log"
rm -rf "$out/tests"
