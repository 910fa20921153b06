#!/usr/bin/env bash
# Rules overlays on the command line: layers over the built-in rules
# (--rules, TILEDISPATCH_RULES), --no-default-rules, provenance in `rules`,
# and `validate` per file or --together.  Exit codes and messages.
# usage: overlay_test.sh TILEDISPATCH SOURCE_ROOT
set -u
td=$1
root=$2
d="$root/tests/cli/data/overlay"
seed="$root/examples/calls/seed_local_sum.yaml"
rules="$root/rules/rules.yaml"
unset TILEDISPATCH_RULES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

# lacks 'SUBSTRING' ARGS...: exit 0 and the output does not hold it.
lacks() {
  local needle=$1
  shift
  if "$td" "$@" >"$tmp/out" 2>&1 && ! grep -qF -- "$needle" "$tmp/out"; then
    pass=$((pass + 1))
  else
    echo "FAIL: tiledispatch $*: exit $? or output holds '$needle'"
    sed 's/^/  | /' "$tmp/out"
    fail=$((fail + 1))
  fi
}
# try order of op sum as one line, from `tiledispatch rules ARGS...`
sum_order() {
  "$td" rules "$@" | awk '/op=sum target=cuda/{f=1;next} /^op=/{f=0} f && /prio=/{print $1}' | tr '\n' ' '
}
check_eq() {  # WHAT GOT WANT
  if [ "$2" = "$3" ]; then pass=$((pass + 1)); else
    echo "FAIL: $1: got '$2', want '$3'"; fail=$((fail + 1)); fi
}

# An overlay changes only what it names; everything else stays.
check_eq "built-in order" "$(sum_order)" "packed_add_sum shared_rows local shared "
check_eq "overlay order" "$(sum_order --rules "$d/raise.yaml")" "shared packed_add_sum shared_rows local "
expect 0 "  local (prio=10) disabled  [rules/rules.yaml:" rules --rules "$d/raise.yaml"
expect 0 "; overridden at $d/raise.yaml:8]" rules --rules "$d/raise.yaml"
expect 0 "shared" dispatch "$root/tests/cli/data/forced_shared.yaml" --rules "$d/raise.yaml"
expect 1 "dispatch failed: op=sum target=cuda" dispatch "$seed" --rules "$d/raise.yaml"
# The disabled row says where it was disabled: the override, not the declaration.
expect 1 '"status":"disabled","message":"","predicates":[],"file":"'"$d"'/raise.yaml","line":8}' explain "$seed" --rules "$d/raise.yaml" --json
expect 1 "| disabled | enabled: false in the rules" explain "$seed" --no-default-rules --rules "$rules" --rules "$d/raise.yaml"
# Layers apply in order: the last one wins, and both overrides are listed.
expect 0 "  shared (prio=5)  [rules/rules.yaml:" rules --rules "$d/raise.yaml" --rules "$d/lower.yaml"
expect 0 "overridden at $d/raise.yaml:4, $d/lower.yaml:3]" rules --rules "$d/raise.yaml" --rules "$d/lower.yaml"
check_eq "raise then lower" "$(sum_order --rules "$d/raise.yaml" --rules "$d/lower.yaml")" "packed_add_sum shared_rows local shared "
check_eq "lower then raise" "$(sum_order --rules "$d/lower.yaml" --rules "$d/raise.yaml")" "shared packed_add_sum shared_rows local "
# New entries next to overrides.
check_eq "new entry" "$(sum_order --rules "$d/new_entry.yaml")" "packed_add_sum shared_rows local2 local shared "
expect 0 "local2" dispatch "$seed" --rules "$d/new_entry.yaml"
expect 0 "  shared (prio=10) disabled" rules --rules "$d/new_entry.yaml"

# JSON: provenance and predicate arguments as JSON values.
expect 0 '"overrides": [{"file": "'"$d"'/raise.yaml", "line": 4}]' rules --json --rules "$d/raise.yaml"
expect 0 '"args": {"expected_scope": ["local"]}' rules --json
expect 0 '{"name": "local_valid", "args": {}}' rules --json
expect 0 '"args": {"min_version": 100}' rules --json
expect 0 '"overrides": []' rules --json
if command -v python3 >/dev/null; then
  if "$td" rules --json --rules "$d/raise.yaml" | python3 -c 'import json,sys; t=json.load(sys.stdin); assert any(r["overrides"] for r in t)'; then
    pass=$((pass + 1))
  else
    echo "FAIL: rules --json is not valid JSON"; fail=$((fail + 1))
  fi
fi

# Errors: exit 2, positioned, naming both places.
expect 2 "$d/ghost.yaml:3:11: error: override of variant 'ghost' for target 'cuda' matches no earlier entry" dispatch "$seed" --rules "$d/ghost.yaml"
expect 2 "$d/dup.yaml:3:11: error: duplicate variant 'local' for target 'cuda' (first declared at rules/rules.yaml:" dispatch "$seed" --rules "$d/dup.yaml"
expect 2 "to change it, add 'override: true'" rules --rules "$d/dup.yaml"
expect 2 "  - name: ghost" rules --rules "$d/ghost.yaml"
# A whole copy of the rules repeats every entry over the built-ins...
expect 2 "duplicate variant 'packed_add_sum'" rules --rules "$rules"
# ...and is a table of its own with --no-default-rules.
check_eq "--no-default-rules" "$(sum_order --no-default-rules --rules "$rules")" "packed_add_sum shared_rows local shared "
expect 0 "local" dispatch "$seed" --no-default-rules --rules "$rules"
expect 1 "no registered variants for this op/target" dispatch "$seed" --no-default-rules
lacks "op=" rules --no-default-rules
expect 0 "local2 (prio=11)" rules --no-default-rules --rules "$rules" --rules "$d/new_entry.yaml"
expect 2 "override of variant 'shared' for target 'cuda' matches no earlier entry" rules --no-default-rules --rules "$d/new_entry.yaml"

# TILEDISPATCH_RULES: colon-separated layers, before the --rules ones.
TILEDISPATCH_RULES="$d/raise.yaml" expect 0 "overridden at $d/raise.yaml:4]" rules
TILEDISPATCH_RULES="$d/raise.yaml:$d/lower.yaml" expect 0 "  shared (prio=5)" rules
TILEDISPATCH_RULES="$d/raise.yaml" expect 0 "overridden at $d/raise.yaml:4, $d/lower.yaml:3]" rules --rules "$d/lower.yaml"
TILEDISPATCH_RULES="$d/ghost.yaml" expect 2 "ghost.yaml:3:11: error: override" dispatch "$seed"
TILEDISPATCH_RULES="$rules" expect 0 "local" dispatch "$seed" --no-default-rules

# validate: each file on its own layer over the built-ins, one line each.
expect 0 "$d/raise.yaml: ok, 2 entries (2 overrides)" validate "$d/raise.yaml"
expect 0 "$d/lower.yaml: ok, 1 entry (1 override)" validate "$d/lower.yaml"
"$td" validate "$d/raise.yaml" "$d/dup.yaml" "$d/new_entry.yaml" "$d/bad_typo.yaml" >"$tmp/out" 2>"$tmp/err"
got=$?
if [ $got -eq 2 ] &&
   grep -qxF "$d/raise.yaml: ok, 2 entries (2 overrides)" "$tmp/out" &&
   grep -qxF "$d/new_entry.yaml: ok, 2 entries (1 override)" "$tmp/out" &&
   [ "$(wc -l <"$tmp/out")" -eq 2 ] &&
   grep -qF "$d/dup.yaml:3:11: error: duplicate variant 'local'" "$tmp/err" &&
   grep -qF "$d/bad_typo.yaml:9:9: error: unknown predicate 'local_vlaid'" "$tmp/err"; then
  pass=$((pass + 1))
else
  echo "FAIL: validate per file (exit $got)"; sed 's/^/  | /' "$tmp/out" "$tmp/err"; fail=$((fail + 1))
fi
# Per file, a duplicate in one file does not hide a typo in another.
expect 2 "unknown predicate 'local_vlaid'" validate "$d/dup.yaml" "$d/bad_typo.yaml"
# The same file twice is fine per file, a duplicate --together.
expect 0 "$d/new_entry.yaml: ok, 2 entries" validate "$d/new_entry.yaml" "$d/new_entry.yaml"
expect 2 "$d/new_entry.yaml:4:11: error: duplicate variant 'local2' for target 'cuda' (first declared at $d/new_entry.yaml:4)" validate --together "$d/new_entry.yaml" "$d/new_entry.yaml"
# --together: the layers in order, counts per file.
expect 0 "$d/lower.yaml: ok, 1 entry (1 override)" validate --together "$d/raise.yaml" "$d/lower.yaml"
"$td" validate --together "$d/raise.yaml" "$d/new_entry.yaml" >"$tmp/out" 2>&1
check_eq "validate --together" "$(cat "$tmp/out")" "$d/raise.yaml: ok, 2 entries (2 overrides)
$d/new_entry.yaml: ok, 2 entries (1 override)"
# An override of an entry of an earlier file needs --together to see it.
printf 'version: 1\nvariants:\n  - {name: local2, target: cuda, override: true, priority: 1}\n' >"$tmp/o2.yaml"
expect 2 "override of variant 'local2'" validate "$d/new_entry.yaml" "$tmp/o2.yaml"
expect 0 "$tmp/o2.yaml: ok, 1 entry (1 override)" validate --together "$d/new_entry.yaml" "$tmp/o2.yaml"
expect 0 "rules.yaml: ok, 25 entries" validate --no-default-rules "$rules"
# The built-in file (marked by its first line) replaces the built-in rules;
# the same entries without that line are a layer over them: duplicates.
expect 0 "rules.yaml: ok, 25 entries" validate "$rules"
tail -n +2 "$rules" >"$tmp/layer.yaml"
expect 2 "duplicate variant 'packed_add_sum' for target 'cuda' (first declared at rules/rules.yaml:11)" validate "$tmp/layer.yaml"
expect 2 "--together applies to validate, not 'rules'" rules --together
expect 2 "cannot open" validate "$tmp/missing.yaml"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
