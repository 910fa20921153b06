#!/usr/bin/env bash
# An edit of rules/rules.yaml that does not load fails the build, with the
# positioned error naming rules/rules.yaml:LINE:COL: a copy of the source
# tree with a typo planted in a predicate name is configured and built.
# usage: rules_build_test.sh MESON SOURCE_ROOT
set -u
meson=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$root" && git ls-files -co --exclude-standard -z) |
    tar -C "$root" --null -T - -cf - | tar -C "$tmp/src" -xf -
else
  tar -C "$root" --exclude='./build*' -cf - . | tar -C "$tmp/src" -xf -
fi
sed -i 's/- shared_rows_valid$/- shared_rows_vald/' "$tmp/src/rules/rules.yaml"
line=$(grep -n -- '- shared_rows_vald$' "$tmp/src/rules/rules.yaml" | cut -d: -f1)
if [ -z "$line" ]; then
  echo "FAIL: could not plant the typo"; exit 1
fi
"$meson" setup "$tmp/b" "$tmp/src" -Dtests=false >"$tmp/setup.log" 2>&1 || {
  echo "FAIL: meson setup"; cat "$tmp/setup.log"; exit 1; }
if "$meson" compile -C "$tmp/b" >"$tmp/build.log" 2>&1; then
  echo "FAIL: the build succeeded with a typo in rules/rules.yaml"; exit 1
fi
want="rules/rules.yaml:$line:9: error: unknown predicate 'shared_rows_vald' (did you mean 'shared_rows_valid'?)"
if ! grep -qF -- "$want" "$tmp/build.log"; then
  echo "FAIL: the build log lacks '$want'"; tail -30 "$tmp/build.log"; exit 1
fi
echo "ok: the build fails with: $want"
