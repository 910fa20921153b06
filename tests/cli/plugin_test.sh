#!/usr/bin/env bash
# The command line with plugins (--plugin, TILEDISPATCH_PLUGINS), the
# listing commands, and the small conveniences of a command line: both
# option spellings, '-' for standard input, directories, typos.
# usage: plugin_test.sh TILEDISPATCH SOURCE_ROOT PLUGIN_DIR
set -u
td=$1
root=$2
plugins=$3
so="$plugins/libpairwise.so"
seed="$root/examples/calls/seed_local_sum.yaml"
overlay="$root/examples/rules-with-pairwise.yaml"
unset TILEDISPATCH_RULES TILEDISPATCH_PLUGINS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

# Without the plugin its names are unknown; with it every command sees it.
expect 2 "unknown impl 'pairwise'" validate "$overlay"
expect 0 "ok" --plugin "$so" validate "$overlay"
expect 0 "pairwise" --plugin "$so" --rules "$overlay" dispatch "$seed"
expect 0 "tree[0] = tree[0] + tree[1];" --plugin="$so" --rules="$overlay" emit "$seed"
expect 0 "selected=pairwise" --plugin "$so" --rules "$overlay" explain "$seed"
expect 0 "pairwise (prio=15)" --plugin "$so" --rules "$overlay" rules
expect 0 "__global__" --plugin "$so" --rules "$overlay" kernel "$seed"
TILEDISPATCH_PLUGINS="$so" expect 0 "pairwise" --rules "$overlay" dispatch "$seed"
TILEDISPATCH_PLUGINS="/nonexistent.so:$so" expect 2 "/nonexistent.so: error: cannot load plugin" dispatch "$seed"

# Listing what is registered, with the plugin's origin.
expect 0 "src_len_at_most {limit: int}  [$so, module pairwise]" --plugin "$so" predicates
expect 0 "storage_scope {expected_scope: list of strings}  [built-in]" predicates
expect 0 '"name": "limit", "type": "int", "required": true' --plugin "$so" predicates --json
expect 0 "pairwise  [$so]" --plugin "$so" impls
expect 0 "serves sum/cuda" --plugin "$so" --rules "$overlay" impls
expect 0 '"serves": [{"op": "max", "target": "cuda", "variant": "local", "enabled": true}' impls --json
expect 2 "takes no file arguments" predicates "$seed"

# Bad plugins: exit 2 with the path and the reason.
expect 2 "built for plugin ABI 5, this library has ABI 4" --plugin "$plugins/libplugin_bad_abi.so" rules
expect 2 "no symbol 'td_plugin_abi_version'" --plugin "$plugins/libplugin_no_abi.so" rules
expect 2 "td_plugin_init failed" --plugin "$plugins/libplugin_failing_init.so" rules
expect 2 "predicate 'local_valid' is already registered (by built-in)" --plugin "$plugins/libplugin_taken_name.so" rules
expect 2 "$root/rules/rules.yaml: error: cannot load plugin: not a loadable shared object" --plugin "$root/rules/rules.yaml" rules
expect 2 "option '--plugin' needs a value" --plugin

# Option spellings, standard input, directories, typos.
expect 0 "tree" --plugin "$so" --rules "$overlay" emit "$seed" --lang=tirx
expect 2 "option '--json' takes no value" rules --json=yes
expect 2 "option '--arch' needs a non-empty value" dispatch "$seed" --arch=
expect 2 "unknown option '--colour'" dispatch "$seed" --colour
"$td" dispatch - <"$seed" >"$tmp/out" 2>&1
ok "a call on standard input dispatches" grep -qx local "$tmp/out"
printf 'op: sum\ntarget: cuda\nbogus: 1\n' | "$td" dispatch - >"$tmp/out" 2>&1
ok "standard input errors name <stdin>" grep -q "^<stdin>:3:1: error" "$tmp/out"
expect 2 "$root/examples: error: is a directory, not a file" dispatch "$root/examples"
expect 2 "Did you mean 'dispatch'?" dispach "$seed"
expect 2 "Did you mean 'predicates'?" predicate
"$td" frobnicate >"$tmp/out" 2>&1
ok "no suggestion for a word far from every command" bash -c "! grep -q 'Did you mean' '$tmp/out'"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
