#!/usr/bin/env bash
# `tiledispatch tensor-maps`: the host's encode of a TMA call's tensor maps
# as C or JSON, the answer for a call without maps, and the refusals.  Then
# the printed C of every TMA conformance case (tests/conformance/tma_*.yaml
# that lowers to a map) is compiled with g++ against the CPU stand-in
# (tests/cuda/emu/cuda_runtime.h, whose cuTensorMapEncodeTiled checks the
# limits the driver documents) and every map is encoded there; with NVCC
# given, the same C is compiled by nvcc for sm_90a (suite cuda); with
# --run after it (a GPU machine), linked with -lcuda and run, so the
# driver itself encodes every map for a device buffer.
# usage: tensor_maps_test.sh TILEDISPATCH SOURCE_ROOT [NVCC [--run]]
set -u
td=$1
root=$2
nvcc=${3:-}
gpu_run=${4:-}
conf="$root/tests/conformance"
seed="$root/examples/calls/seed_local_sum.yaml"
unset TILEDISPATCH_RULES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

if [ -z "$nvcc" ]; then
# C: one static encode function per map, named after the map.
expect 0 "static CUresult A_tensormap_encode(CUtensorMap *map, void *global_base)" tensor-maps "$conf/tma_g2s_sw128.yaml"
expect 0 "#include <cuda.h>" tensor-maps "$conf/tma_g2s_sw128.yaml" --format c
expect 0 "CU_TENSOR_MAP_SWIZZLE_128B," tensor-maps "$conf/tma_g2s_sw128.yaml"
expect 0 "static const cuuint64_t global_dim[2] = {64u, 256u};" tensor-maps "$conf/tma_g2s_128x64.yaml"
expect 0 "static const cuuint32_t box_dim[2] = {64u, 128u};" tensor-maps "$conf/tma_g2s_128x64.yaml"
# JSON: one array, an object per map with its name and buffer first.
expect 0 '[{"name": "A_tensormap", "buffer": "A", "dtype": "float16", "cu_dtype": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "rank": 2, "global_dims": [64, 256], "global_strides": [128], "box_dims": [64, 128], "element_strides": [1, 1], "interleave": 0, "swizzle": 0, "l2_promotion": 2, "oob_fill": 0, "base_byte_offset": 0, "coordinates": [0, 0]}]' \
  tensor-maps "$conf/tma_g2s_128x64.yaml" --format json
expect 0 '"swizzle": 3' tensor-maps "$conf/tma_g2s_sw128.yaml" --json
"$td" tensor-maps "$conf/tma_s2g_plain.yaml" --json >"$tmp/j.json" &&
  python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert isinstance(a, list) and len(a) == 1 and a[0]["buffer"] == "A", a' "$tmp/j.json" &&
  pass=$((pass + 1)) || { echo "FAIL: tensor-maps --json is not one JSON array of one map"; fail=$((fail + 1)); }
# A call without a TMA copy has no maps: said, exit 0 (a script can take
# any call), stdout still in the format asked for.
expect 0 "/* The call uses no tensor map. */" tensor-maps "$seed"
expect 0 "tiledispatch: note: variant local uses no tensor map" tensor-maps "$seed"
"$td" tensor-maps "$seed" --json 2>/dev/null >"$tmp/e" && [ "$(cat "$tmp/e")" = "[]" ] &&
  pass=$((pass + 1)) || { echo "FAIL: tensor-maps --json of a call without maps is not []"; fail=$((fail + 1)); }
# No variant: the failure table and exit 1, as dispatch; JSON with --json.
expect 1 "dispatch failed: op=sum target=cuda" tensor-maps "$root/tests/cli/data/cta_local.yaml"
expect 1 '"selected":null' tensor-maps "$root/tests/cli/data/cta_local.yaml" --json
expect 1 "global-to-shared TMA requires mbar" tensor-maps "$conf/tma_g2s_no_mbar.yaml"
# Bad input and usage: positioned errors, exit 2.
sed 's/A: {scope: global, dtype: float16/A: {scope: global, dtype: flaot16/' \
  "$conf/tma_g2s_128x64.yaml" >"$tmp/bad.yaml"
expect 2 "bad.yaml:10:29: error: unknown dtype 'flaot16' (did you mean 'float16'?)" tensor-maps "$tmp/bad.yaml"
expect 2 "--format 'tvm': expected c or json" tensor-maps "$seed" --format tvm
expect 2 "--json and --format c contradict each other" tensor-maps "$seed" --format c --json
expect 2 "'tensor-maps' takes exactly one CALL.yaml" tensor-maps
expect 2 "--lang applies to emit, not 'tensor-maps'" tensor-maps "$seed" --lang cuda
expect 0 "usage: tiledispatch tensor-maps CALL.yaml" help tensor-maps
expect 2 "Did you mean 'tensor-maps'?" tensor-map "$seed"
fi

# Every TMA conformance case that lowers to maps: its C in a namespace of
# its own, and a main that encodes each map for an aligned buffer.
n=0
{
  if [ -z "$nvcc" ]; then echo '#include <cuda_runtime.h>'; else echo '#include <cuda.h>'; echo '#include <cuda_runtime.h>'; fi
  echo '#include <stdint.h>'
  echo '#include <stdio.h>'
} >"$tmp/all.cpp"
if [ -n "$gpu_run" ]; then
  main='int main(void) { void *buf = 0; if (cudaMalloc(&buf, 1 << 20) != cudaSuccess) { printf("no device\n"); return 2; } CUtensorMap m; int bad = 0;'
else
  main='int main(void) { static __attribute__((aligned(1024))) unsigned char buf[1 << 20]; CUtensorMap m; int bad = 0;'
fi
for f in "$conf"/tma_*.yaml; do
  "$td" tensor-maps "$f" >"$tmp/one.h" 2>/dev/null || continue
  grep -q "_encode(CUtensorMap" "$tmp/one.h" || continue
  n=$((n + 1))
  echo "namespace case$n {" >>"$tmp/all.cpp"
  grep -v '^#include' "$tmp/one.h" >>"$tmp/all.cpp"
  echo "}" >>"$tmp/all.cpp"
  for fn in $(sed -n 's/^static CUresult \([A-Za-z0-9_]*\)(.*/\1/p' "$tmp/one.h"); do
    main="$main if (case$n::$fn(&m, buf) != CUDA_SUCCESS) { printf(\"FAIL $(basename "$f") $fn\\n\"); bad++; }"
  done
done
echo "$main printf(\"%d failed\\n\", bad); return bad != 0; }" >>"$tmp/all.cpp"
ok "at least 12 TMA conformance cases lower to maps (got $n)" test "$n" -ge 12
if [ -z "$nvcc" ]; then
  if command -v g++ >/dev/null; then
    ok "the printed C of $n cases compiles against the stand-in" \
      g++ -std=c++17 -Wall -Wextra -Werror -pthread -I "$root/tests/cuda/emu" -o "$tmp/all" "$tmp/all.cpp"
    ok "the stand-in encodes every map of the $n cases" "$tmp/all"
    # The check can fail: a map the driver would refuse is refused.
    sed 's/static const cuuint64_t global_strides\[1\] = {\([0-9]*\)u};/static const cuuint64_t global_strides[1] = {\1u + 8u};/' \
      "$tmp/all.cpp" >"$tmp/bad.cpp"
    if g++ -std=c++17 -w -pthread -I "$root/tests/cuda/emu" -o "$tmp/bad" "$tmp/bad.cpp" &&
       ! "$tmp/bad" >/dev/null 2>&1; then
      pass=$((pass + 1))
    else
      echo "FAIL: misaligned strides were not refused by the stand-in"; fail=$((fail + 1))
    fi
  else
    echo "SKIP: no g++ for the stand-in encode"
  fi
else
  cp "$tmp/all.cpp" "$tmp/all.cu"
  if [ -n "$gpu_run" ]; then
    ok "the printed C of $n cases compiles and links with nvcc (sm_90a, -lcuda)" \
      "$nvcc" -arch=sm_90a -Werror all-warnings -o "$tmp/all" "$tmp/all.cu" -lcuda
    ok "the driver encodes every map of the $n cases" "$tmp/all"
  else
    ok "the printed C of $n cases compiles with nvcc (sm_90a)" \
      "$nvcc" -arch=sm_90a -Werror all-warnings -c -o "$tmp/all.o" "$tmp/all.cu"
  fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
