#!/usr/bin/env bash
# Prepares, on this (GPU-less) machine, everything the GPU half of the
# suite tvm-own-tests and of examples/tvm_softmax.py needs on the H200,
# in one folder that travels to the device (under 64 MiB):
#
#   tests/upstream/tvm_tests/prepare_gpu.sh BUNDLE
#
#   BUNDLE/tests/    every item's compiled library and inputs, with the
#                    bridge (run_suite.py --only on --export; kept when
#                    BUNDLE/tests/manifest.jsonl exists already)
#   BUNDLE/softmax/  td.so, hybrid.so (and tvm.so where plain TVM builds it)
#   BUNDLE/lib/      TVM's runtime: libtvm_runtime.so, libtvm_runtime_cuda.so
#   BUNDLE/wheels/   apache-tvm-ffi for the device's Python (3.12), by pip
#   BUNDLE/gpu.sh, BUNDLE/gpu_run.py   what runs there
#
# Then, on the device:  bash BUNDLE/gpu.sh   (writes $OUT/summary.json,
# $OUT/tests.tar, $OUT/gpu.log), and back here:
#   tests/upstream/tvm_tests/check_gpu.sh RESULTS_FOLDER
# replays every item's own check with the GPU's outputs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bundle=${1:?usage: prepare_gpu.sh BUNDLE}
mkdir -p "$bundle"
bundle=$(cd "$bundle" && pwd)
py=${TD_UPSTREAM_PYTHON:-$root/build-python/venv/bin/python}

if [ ! -f "$bundle/tests/manifest.jsonl" ]; then
  "$py" "$here/run_suite.py" "$bundle/run" --only on --export "$bundle/tests"
fi
"$py" "$root/examples/tvm_softmax.py" --quiet --export "$bundle/softmax"

tvmlib=$("$py" -c 'import os, tvm; print(os.path.join(os.path.dirname(tvm.__file__), "lib"))')
mkdir -p "$bundle/lib" "$bundle/wheels"
cp "$tvmlib/libtvm_runtime.so" "$tvmlib/libtvm_runtime_cuda.so" "$bundle/lib/"
# The CUDA runtime TVM's CUDA module links (used there only if the
# machine's own is not on the loader's path).
cudart=$(ldd "$tvmlib/libtvm_runtime_cuda.so" | awk '/libcudart/ {print $3}')
[ -n "$cudart" ] && cp -L "$cudart" "$bundle/lib/libcudart.so.13"
ffi_version=$("$py" -c 'import importlib.metadata as m; print(m.version("apache-tvm-ffi"))')
if ! ls "$bundle/wheels"/apache_tvm_ffi-"$ffi_version"-cp312-*.whl >/dev/null 2>&1; then
  "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$bundle/wheels" "apache-tvm-ffi==$ffi_version"
fi
cp "$here/gpu_run.py" "$here/gpu.sh" "$bundle/"
rm -rf "$bundle/run"
du -sh "$bundle"
