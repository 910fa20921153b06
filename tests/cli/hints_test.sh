#!/usr/bin/env bash
# Command-line tests of the hints at mistakes: "did you mean" or the valid
# names for every unknown name, per-command help, the listings that still
# work when the rules do not load, the environment variable named when its
# file fails, validate of the built-in rules file, and the completion
# scripts.
# usage: hints_test.sh TILEDISPATCH SOURCE_ROOT
set -u
td=$1
root=$2
data="$root/tests/cli/data"
seed="$root/examples/calls/seed_local_sum.yaml"
rules="$root/rules/rules.yaml"
unset TILEDISPATCH_RULES TILEDISPATCH_PLUGINS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

# Names in a call: op and target (an unknown target is bad input, exit 2).
sed 's/^op: sum/op: summ/' "$seed" >"$tmp/summ.yaml"
expect 2 "summ.yaml:3:5: error: unknown op 'summ' (did you mean 'sum'?)" dispatch "$tmp/summ.yaml"
expect 2 "unknown op 'summ' (did you mean 'sum'?)" explain "$tmp/summ.yaml"
sed 's/^target: cuda/target: CUDA/' "$seed" >"$tmp/cuda.yaml"
expect 2 "error: unknown target 'CUDA' (did you mean 'cuda'? names are case-sensitive)" dispatch "$tmp/cuda.yaml"
sed 's/^target: cuda/target: rocm/' "$seed" >"$tmp/rocm.yaml"
expect 2 "error: unknown target 'rocm' (expected one of: cuda)" emit "$tmp/rocm.yaml"

sed 's/__nonexistent__/sharde/' "$data/forced_unknown.yaml" >"$tmp/forced.yaml"
expect 1 "no variant named 'sharde' is registered for op=sum target=cuda (did you mean 'shared'?)" dispatch "$tmp/forced.yaml"

# Names in rules files.
cat >"$tmp/typos.yaml" <<'YAML'
version: 1
variants:
  - name: mine
    impl: local
    ops: [sum]
    target: cuda
    priority: 1
    when:
      - shared_rows_vald
YAML
expect 2 "typos.yaml:9:9: error: unknown predicate 'shared_rows_vald' (did you mean 'shared_rows_valid'?)" validate "$tmp/typos.yaml"
sed 's/- shared_rows_vald/- reduction_len: {minlen: 64}/' "$tmp/typos.yaml" >"$tmp/arg.yaml"
expect 2 "predicate 'reduction_len': unknown argument 'minlen' (did you mean 'min_len'?)" validate "$tmp/arg.yaml"
sed 's/ops: \[sum\]/ops: [summ]/' "$tmp/arg.yaml" >"$tmp/op.yaml"
expect 2 "unknown op 'summ' (did you mean 'sum'?)" validate "$tmp/op.yaml"
sed 's/impl: local/impl: my_plugin_impl/' "$tmp/arg.yaml" >"$tmp/impl.yaml"
expect 2 "unknown impl 'my_plugin_impl'; if a plugin provides it, load it with --plugin or TILEDISPATCH_PLUGINS" validate "$tmp/impl.yaml"
printf 'version: 1\nvariants:\n  - {name: shared_row, target: cuda, override: true, enabled: false}\n' >"$tmp/over.yaml"
expect 2 "override of variant 'shared_row' for target 'cuda' matches no earlier entry (did you mean 'shared_rows'?)" validate "$tmp/over.yaml"
printf 'version: 1\nvariants:\n  - {name: shared_rows, enabled: false}\n' >"$tmp/noover.yaml"
expect 2 "variant entry is missing 'ops'; variant 'shared_rows' exists (declared for target 'cuda' at rules/rules.yaml:" validate "$tmp/noover.yaml"
expect 2 "to change it, add 'override: true'" validate "$tmp/noover.yaml"

printf 'version: 1\nvariant: []\n' >"$tmp/top.yaml"
expect 2 "unknown top-level key 'variant' (did you mean 'variants'?)" validate "$tmp/top.yaml"
printf 'version: 1\nvariants:\n  - {name: x, opts: [sum]}\n' >"$tmp/key.yaml"
expect 2 "unknown key 'opts' in variant entry (did you mean 'ops'?)" validate "$tmp/key.yaml"

# A failing file of TILEDISPATCH_RULES says where it came from.
TILEDISPATCH_RULES="$tmp/typos.yaml" expect 2 "(did you mean 'shared_rows_valid'?) (a file named by TILEDISPATCH_RULES)" dispatch "$seed"
expect 2 "(did you mean 'shared_rows_valid'?)" dispatch "$seed" --rules "$tmp/typos.yaml"
if "$td" dispatch "$seed" --rules "$tmp/typos.yaml" 2>&1 | grep -q TILEDISPATCH_RULES; then
  echo "FAIL: a --rules file is named as coming from TILEDISPATCH_RULES"; fail=$((fail + 1))
else
  pass=$((pass + 1))
fi

# predicates and impls list what is registered even when the rules fail,
# with the error on stderr and exit 2.
TILEDISPATCH_RULES="$tmp/typos.yaml" expect 2 "shared_rows_valid" predicates
TILEDISPATCH_RULES="$tmp/typos.yaml" expect 2 "warning: the rules did not load" impls
TILEDISPATCH_RULES="$tmp/typos.yaml" "$td" predicates >"$tmp/out" 2>"$tmp/err"
ok "predicates lists on stdout when the rules fail" grep -q "^shared_rows_valid" "$tmp/out"
ok "predicates reports the rules error on stderr" grep -q "unknown predicate 'shared_rows_vald'" "$tmp/err"
expect 2 "local" impls --rules "$tmp/typos.yaml" --json

# validate of the built-in rules file itself (and of a copy being edited):
# checked in place of the built-in rules, not over them.
expect 0 "rules.yaml: ok, 25 entries" validate "$rules"
expect 0 "upstream.yaml: ok, 2 entries (2 overrides)" validate "$rules" "$root/rules/upstream.yaml"
sed 's/- shared_rows_valid$/- shared_rows_vald/' "$rules" >"$tmp/rules.yaml"
expect 2 "rules.yaml:66:9: error: unknown predicate 'shared_rows_vald' (did you mean 'shared_rows_valid'?)" validate "$tmp/rules.yaml"

# A copy of the whole table given as a layer: the duplicate says how to
# use it instead.
expect 2 "(this file is a complete table: load it in place of the built-in rules, e.g. with --no-default-rules)" rules --rules "$rules"
expect 0 "op=sum target=cuda" rules --no-default-rules --rules "$rules"

# Options: the close one, the valid values, --json as --format json.
expect 2 "Did you mean '--rules'?" dispatch "$seed" --rule x.yaml
expect 2 "Did you mean '--format'?" explain "$seed" --fromat=json
expect 2 "--lang 'cudaa': expected cuda or tirx (did you mean 'cuda'?)" emit "$seed" --lang cudaa
expect 2 "--format 'jsn': expected text, tvm or json (did you mean 'json'?)" explain "$seed" --format jsn
expect 0 "local" dispatch "$seed" --json
expect 1 '"selected":null' dispatch "$data/cta_local.yaml" --json
expect 1 '"selected":null' emit "$data/cta_local.yaml" --json
expect 1 '"selected":null' dispatch "$data/cta_local.yaml" --format json

# Help per command, both ways; help alone is the full usage.
for c in dispatch explain emit kernel tensor-maps rules validate predicates impls help; do
  expect 0 "usage: tiledispatch $c" help "$c"
  expect 0 "usage: tiledispatch $c" "$c" --help
done
expect 0 "usage: tiledispatch COMMAND" help
expect 0 "usage: tiledispatch explain" explain -h
expect 2 "unknown command 'dispach'" help dispach
expect 2 "Did you mean 'dispatch'?" help dispach
expect 0 "tiledispatch " --version
# Help and version need no loadable rules.
TILEDISPATCH_RULES="$tmp/typos.yaml" expect 0 "usage: tiledispatch predicates" predicates --help
TILEDISPATCH_RULES="$tmp/typos.yaml" expect 0 "tiledispatch " --version

# The completion scripts: valid syntax, and they offer every command.
bash_comp="$root/completions/tiledispatch.bash"
ok "bash -n completions/tiledispatch.bash" bash -n "$bash_comp"
got=$(bash -c '. "$1"; COMP_WORDS=(tiledispatch ""); COMP_CWORD=1; _tiledispatch; echo "${COMPREPLY[*]}"' _ "$bash_comp")
for c in dispatch explain emit kernel tensor-maps rules validate predicates impls help; do
  case " $got " in
    *" $c "*) pass=$((pass + 1)) ;;
    *) echo "FAIL: bash completion lacks '$c' (got: $got)"; fail=$((fail + 1)) ;;
  esac
done
got=$(bash -c '. "$1"; COMP_WORDS=(tiledispatch explain x.yaml --format ""); COMP_CWORD=4; _tiledispatch; echo "${COMPREPLY[*]}"' _ "$bash_comp")
ok "bash completion offers the --format values" test "$got" = "text tvm json"
got=$(bash -c '. "$1"; COMP_WORDS=(tiledispatch dispatch --ru); COMP_CWORD=2; _tiledispatch; echo "${COMPREPLY[*]}"' _ "$bash_comp")
ok "bash completion offers --rules" test "$got" = "--rules"
# Every command of the usage text is in both scripts.
for c in $("$td" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
  ok "completions name the command '$c'" grep -q "$c" "$bash_comp" "$root/completions/_tiledispatch"
done
if command -v zsh >/dev/null; then
  ok "zsh -n completions/_tiledispatch" zsh -n "$root/completions/_tiledispatch"
fi

# Variant names with '->' and '<->' (TVM's smem->tmem, tmem<->local): a rules
# entry may be named so, a call may force it, and both print it as written;
# any other punctuation is refused with the position.
copy="$root/tests/golden/cases/copy_auto_thread_g2r_nc.yaml"
printf 'version: 1\nvariants:\n  - name: "g2r->fb"\n    impl: fallback\n    ops: [copy]\n    target: cuda\n    priority: 1\n' >"$tmp/arrow.yaml"
{ cat "$copy"; echo 'dispatch: "g2r->fb"'; } >"$tmp/arrow_call.yaml"
expect 0 "selected=g2r->fb" explain --rules "$tmp/arrow.yaml" "$tmp/arrow_call.yaml"
expect 0 'dispatch="g2r->fb"' explain --rules "$tmp/arrow.yaml" "$tmp/arrow_call.yaml"
{ cat "$copy"; echo 'dispatch: "tmem<->local"'; } >"$tmp/both_call.yaml"
expect 1 "no variant named 'tmem<->local' is registered for op=copy target=cuda" dispatch "$tmp/both_call.yaml"
{ cat "$copy"; echo 'dispatch: "g2r=>fb"'; } >"$tmp/bad_arrow.yaml"
expect 2 "bad_arrow.yaml:12:11: error: 'dispatch' must be a variant name (letters, digits and '_' (words joined by '.', the last may end in '*'), parts joined by '->' or '<->'), got 'g2r=>fb'" dispatch "$tmp/bad_arrow.yaml"
sed 's/g2r->fb/g2r-fb/' "$tmp/arrow.yaml" >"$tmp/bad_rules.yaml"
expect 2 "bad_rules.yaml:3:11: error: variant name 'g2r-fb' must be" rules --rules "$tmp/bad_rules.yaml"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
