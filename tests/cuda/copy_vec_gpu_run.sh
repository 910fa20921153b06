#!/bin/sh
# The forced copy widths against the scalar copy on the GPU, in one go
# (for the device machine): builds tiledispatch into build-copy-gpu if
# needed, runs tests/cuda/copy_vec_gpu.py over the conformance and golden
# copy cases (sm_90a cases run, sm_100a ones compile), and leaves the
# output and the generated programs under $OUT (default ./copy-gpu-out).
# Exit status: the checker's (0 all PASS).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/copy-gpu-out}
mkdir -p "$out"
cd "$root" || exit 1
if [ ! -x build-copy-gpu/tiledispatch ]; then
    { meson setup build-copy-gpu >/dev/null && ninja -C build-copy-gpu tiledispatch; } \
        >"$out/build.log" 2>&1 || { echo "build failed: $out/build.log"; exit 1; }
fi
nvidia-smi -L >"$out/device.txt" 2>&1
python3 tests/cuda/copy_vec_gpu.py build-copy-gpu/tiledispatch \
    tests/conformance tests/golden/cases --arch sm_90a --out "$out/programs" \
    2>&1 | tee "$out/copy_vec_gpu.txt"

# tee's status hides the checker's; read it from the last line
grep -q "^copy_vec_gpu: ok" "$out/copy_vec_gpu.txt" && exit 0
exit 1
