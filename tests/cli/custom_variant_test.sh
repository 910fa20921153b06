#!/usr/bin/env bash
# examples/custom_variant.c: a variant registered in C is selected after a
# rules overlay adds it, declines nothing it accepted, and leaves other calls alone.
set -u
exe=$1
root=$2
ex="$root/examples"
fail=0
check() {  # DESCRIPTION CONDITION-COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=$((fail + 1)); fi
}
out=$("$exe" "$ex/rules-with-pairwise.yaml" "$ex/calls/seed_local_sum.yaml" cuda)
check "seed call goes to pairwise" grep -q "^variant: pairwise" <<<"$out"
check "tree fold in the CUDA" grep -qF "tree[k] = tree[k] + tree[k + 2];" <<<"$out"
check "last level unrolled" grep -qF "tree[0] = tree[0] + tree[1];" <<<"$out"
check "result stored" grep -qF "B_local_ptr[0] = tree[0];" <<<"$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'version: 1\nvariants: []\n' >"$tmp/empty.yaml"
out=$("$exe" "$tmp/empty.yaml" "$ex/calls/seed_local_sum.yaml" cuda 2>&1)
check "default rules keep local" grep -q "^variant: local" <<<"$out"
out=$("$exe" "$ex/rules-with-pairwise.yaml" "$root/tests/golden/cases/sum_3d_axes_0_2.yaml" cuda 2>&1)
check "3-D call still goes to local" grep -q "^variant: local" <<<"$out"
echo "$((6 - fail)) passed, $fail failed"
[ $fail -eq 0 ]
