#!/usr/bin/env bash
# `meson install` into a temporary DESTDIR, then use what was installed the
# way a user would:
#   - the files: shared library (with its soname links), static library,
#     headers, tiledispatch.pc, the default rules, the man page, the binary;
#   - a program (use_library.c) compiled with `pkg-config --cflags --libs
#     tiledispatch` against the shared library (run with LD_LIBRARY_PATH)
#     and with `pkg-config --static` against the static one: it dispatches
#     the seed's call to `local` with the built-in and the installed rules;
#   - the headers compile as C11 with every warning, and as C++;
#   - the installed binary and man page;
#   - the example plugins (examples/plugins/pairwise.c, a reduction, and
#     ewise_binary.c, an elementwise variant) built against the installed
#     headers exactly as docs/plugins.md says, loaded by the installed
#     binary (their dispatch and emitted code) and through
#     td_registry_load_plugin;
#   - their self-checking programs (`tiledispatch --plugin P kernel`) run
#     on the CPU stand-in of the CUDA runtime as docs/plugins.md shows
#     (tests/cuda/emu.py; needs g++) and compiled by nvcc; each prints a
#     `skip:` line where its compiler is absent.
#
# usage: install_test.sh MESON BUILD_ROOT SRC_ROOT SANITIZE   (CC from env)
# SANITIZE is meson's b_sanitize ("none", "address,undefined", ...): the
# programs are built with the same -fsanitize as the library.
set -euo pipefail

meson=$1 build=$2 src=$3 sanitize=${4:-none}
cc=${CC:-cc}
# meson test points LD_LIBRARY_PATH at the build tree; only what was
# installed may be used here.
unset LD_LIBRARY_PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

"$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet \
  >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }

# ---- where things went (meson's prefix, libdir, ... under DESTDIR) --------
pc=$(find "$dest" -name tiledispatch.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no tiledispatch.pc installed"; exit 1; }
pcdir=$(dirname "$pc")
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# The .pc names the configured prefix; the sysroot maps its -I and -L
# flags into DESTDIR.
export PKG_CONFIG_SYSROOT_DIR=$dest
# A variable under DESTDIR (pkgconf maps variables into the sysroot too,
# freedesktop pkg-config does not).
pcvar() {
  local v
  v=$(pkg-config --variable="$1" tiledispatch)
  case $v in "$dest"/*) echo "$v";; *) echo "$dest$v";; esac
}
version=$(pkg-config --modversion tiledispatch)
prefix=$(pcvar prefix)
libdir=$(pcvar libdir)
includedir=$(pcvar includedir)
rulesfile=$(pcvar rulesfile)
bindir=$prefix/bin
echo "installed $version under $prefix"

# ---- the files -------------------------------------------------------------
soname=$(readelf -d "$libdir/libtiledispatch.so" 2>/dev/null |
         sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
[ "$soname" = libtiledispatch.so.0 ] && ok "SONAME $soname" ||
  fail "SONAME is '$soname', expected libtiledispatch.so.0"
for f in "libtiledispatch.so.$version" libtiledispatch.so.0 libtiledispatch.so \
         libtiledispatch.a; do
  [ -e "$libdir/$f" ] || fail "missing $libdir/$f"
done
[ "$(readlink "$libdir/libtiledispatch.so.0")" = "libtiledispatch.so.$version" ] ||
  fail "libtiledispatch.so.0 does not point at libtiledispatch.so.$version"
[ -f "$includedir/tiledispatch.h" ] || fail "missing include/tiledispatch.h"
for h in "$src"/{core,model,codegen,predicates,registry}/include/tiledispatch/*.h; do
  [ -f "$includedir/tiledispatch/$(basename "$h")" ] ||
    fail "missing include/tiledispatch/$(basename "$h")"
done
[ -f "$includedir/tiledispatch/td_version.h" ] ||
  fail "missing include/tiledispatch/td_version.h"
stray=$(find "$includedir/tiledispatch" -type f ! -name '*.h')
[ -z "$stray" ] || fail "not headers in include/tiledispatch: $stray"
[ -f "$includedir/tiledispatch/td_kernel.h" ] &&
  fail "td_kernel.h (the program generator, not in the library) is installed"
cmp -s "$rulesfile" "$src/rules/rules.yaml" && ok "rules at $rulesfile" ||
  fail "the installed rules ($rulesfile) differ from rules/rules.yaml"
cmp -s "$(dirname "$rulesfile")/upstream.yaml" "$src/rules/upstream.yaml" &&
  ok "the TVM-identical overlay beside them" ||
  fail "rules/upstream.yaml is not installed beside $rulesfile"
man=$prefix/share/man/man1/tiledispatch.1
if [ -f "$man" ]; then
  grep -q '@[A-Z]*@' "$man" && fail "unsubstituted @VAR@ in the man page"
  grep -qF "${rulesfile#"$dest"}" "$man" || fail "the man page does not name $rulesfile"
  if command -v groff >/dev/null 2>&1; then
    warn=$(groff -man -ww -z "$man" 2>&1) && [ -z "$warn" ] &&
      ok "man page formats without warnings" || fail "groff: $warn"
  fi
else
  fail "missing $man"
fi
[ -x "$bindir/tiledispatch" ] || fail "missing $bindir/tiledispatch"
# Shell completion where bash-completion and zsh look for it.
for f in share/bash-completion/completions/tiledispatch \
         share/zsh/site-functions/_tiledispatch; do
  cmp -s "$prefix/$f" "$src/completions/$(basename "$f" | sed 's/^tiledispatch$/tiledispatch.bash/')" &&
    ok "completion $f" || fail "missing or different $prefix/$f"
done

# ---- a program built with pkg-config ---------------------------------------
san=()
[ "$sanitize" != none ] && san=("-fsanitize=$sanitize")
cflags=$(pkg-config --cflags tiledispatch)
libs=$(pkg-config --libs tiledispatch)
slibs=$(pkg-config --static --libs tiledispatch)
echo "cflags: $cflags"
echo "libs: $libs"
echo "static libs: $slibs"
case " $libs " in *" -ltiledispatch "*) ;; *) fail "Libs lacks -ltiledispatch";; esac
pkg-config --print-requires-private tiledispatch | grep -q '^yaml-0.1' ||
  fail "yaml-0.1 is not in Requires.private"
prog=$src/tests/install/use_library.c
call=$src/examples/calls/seed_local_sum.yaml
want=$tmp/want.txt
{ echo local; "$bindir/tiledispatch" emit "$call" --lang cuda; } >"$want"

# shared
# shellcheck disable=SC2086
$cc -std=c11 -Wall -Wextra -Werror -pedantic "${san[@]}" "$prog" \
  -o "$tmp/use_shared" $cflags $libs
readelf -d "$tmp/use_shared" | grep -q 'NEEDED.*libtiledispatch\.so\.0' ||
  fail "use_shared does not need libtiledispatch.so.0"
if LD_LIBRARY_PATH="$libdir" "$tmp/use_shared" "$call" "$rulesfile" \
     >"$tmp/got_shared.txt"; then
  cmp -s "$tmp/got_shared.txt" "$want" && ok "shared: seed call -> local" ||
    { fail "shared: unexpected output"; diff "$want" "$tmp/got_shared.txt" || true; }
else
  fail "shared: use_library failed"
fi

# static: the archive, even with the shared library next to it
slibs_static=${slibs/-ltiledispatch/-Wl,-Bstatic -ltiledispatch -Wl,-Bdynamic}
# shellcheck disable=SC2086
$cc -std=c11 -Wall -Wextra -Werror -pedantic "${san[@]}" "$prog" \
  -o "$tmp/use_static" $cflags $slibs_static
readelf -d "$tmp/use_static" | grep -q 'NEEDED.*libtiledispatch' &&
  fail "use_static needs the shared libtiledispatch"
if "$tmp/use_static" "$call" "$rulesfile" >"$tmp/got_static.txt"; then
  cmp -s "$tmp/got_static.txt" "$want" && ok "static: seed call -> local" ||
    { fail "static: unexpected output"; diff "$want" "$tmp/got_static.txt" || true; }
else
  fail "static: use_library failed"
fi

# The headers alone, as C++ (extern "C", no C-only constructs).
cxx=${CXX:-c++}
if command -v "${cxx%% *}" >/dev/null 2>&1; then
  echo '#include <tiledispatch.h>' >"$tmp/cxx.cc"
  # shellcheck disable=SC2086
  $cxx -fsyntax-only -Wall -Wextra -Werror $cflags "$tmp/cxx.cc" &&
    ok "headers compile as C++" || fail "headers do not compile as C++"
fi

# ---- the installed command line ---------------------------------------------
got=$("$bindir/tiledispatch" --version)
[ "$got" = "tiledispatch $version" ] && ok "tiledispatch --version: $got" ||
  fail "tiledispatch --version printed '$got'"
got=$("$bindir/tiledispatch" dispatch "$call" --no-default-rules --rules "$rulesfile")
[ "$got" = local ] && ok "installed CLI with the installed rules -> local" ||
  fail "installed CLI chose '$got'"

# ---- plugins built against the installed headers ---------------------------
# The example plugins, built as docs/plugins.md says (no link to the
# library: their td_* calls resolve in the program that loads them),
# loaded by the installed command line and, through
# td_registry_load_plugin, by programs linked against the shared and the
# static library.
check_plugins() {
  local so=$tmp/libpairwise.so rules=$src/examples/rules-with-pairwise.yaml
  local use=$src/tests/install/use_plugin.c got
  # shellcheck disable=SC2086
  if ! $cc -std=c11 -Wall -Wextra -Werror "${san[@]}" -shared -fPIC \
       -fvisibility=hidden -o "$so" "$src/examples/plugins/pairwise.c" $cflags; then
    fail "the example plugin does not build against the installed headers"
    return
  fi
  got=$("$bindir/tiledispatch" --plugin "$so" --rules "$rules" dispatch "$call") &&
    [ "$got" = pairwise ] && ok "installed CLI --plugin: seed call -> pairwise" ||
    fail "installed CLI with the plugin chose '$got'"
  got=$(TILEDISPATCH_PLUGINS=$so "$bindir/tiledispatch" predicates) &&
    grep -q "^src_len_at_most .*\[$so, module pairwise\]" <<<"$got" &&
    ok "TILEDISPATCH_PLUGINS: the plugin's predicate is listed" ||
    fail "predicates with TILEDISPATCH_PLUGINS: $got"

  # shellcheck disable=SC2086
  $cc -std=c11 -Wall -Wextra -Werror "${san[@]}" "$use" -o "$tmp/use_plugin" \
    $cflags $libs
  got=$(LD_LIBRARY_PATH="$libdir" "$tmp/use_plugin" "$so" "$rules" "$call") &&
    [ "$got" = pairwise ] && ok "td_registry_load_plugin (shared library)" ||
    fail "use_plugin (shared) chose '$got'"
  # A static embedder exports the library's td_* functions for plugins.
  # shellcheck disable=SC2086
  $cc -std=c11 -Wall -Wextra -Werror "${san[@]}" "$use" \
    -o "$tmp/use_plugin_static" -Wl,--export-dynamic $cflags $slibs_static
  got=$("$tmp/use_plugin_static" "$so" "$rules" "$call") &&
    [ "$got" = pairwise ] && ok "td_registry_load_plugin (static, --export-dynamic)" ||
    fail "use_plugin (static) chose '$got'"
}
check_plugins

# The elementwise example: built the same way; the installed command line
# picks its variant for the two calls it lowers and emits what
# tests/install/expected/ shows.
ewise_so=$tmp/libewise_binary.so
ewise_rules=$src/examples/rules-with-ewise-binary.yaml
check_ewise_plugin() {
  local name got
  # shellcheck disable=SC2086
  if ! $cc -std=c11 -Wall -Wextra -Werror "${san[@]}" -shared -fPIC \
       -fvisibility=hidden -o "$ewise_so" \
       "$src/examples/plugins/ewise_binary.c" $cflags; then
    fail "the elementwise example plugin does not build against the installed headers"
    return
  fi
  for name in cta_smem_add cta_smem_mul_scalar; do
    got=$("$bindir/tiledispatch" --plugin "$ewise_so" --rules "$ewise_rules" \
          dispatch "$src/examples/calls/$name.yaml") &&
      [ "$got" = binary_flat ] && ok "ewise plugin: $name -> binary_flat" ||
      fail "ewise plugin: $name chose '$got'"
    for lang in cuda tirx; do
      if "$bindir/tiledispatch" --plugin "$ewise_so" --rules "$ewise_rules" \
           emit "$src/examples/calls/$name.yaml" --lang "$lang" \
           >"$tmp/$name.$lang" &&
         cmp -s "$tmp/$name.$lang" "$src/tests/install/expected/$name.$lang"; then
        ok "ewise plugin: $name emits tests/install/expected/$name.$lang"
      else
        fail "ewise plugin: $name --lang $lang differs from tests/install/expected/$name.$lang"
        diff "$src/tests/install/expected/$name.$lang" "$tmp/$name.$lang" || true
      fi
    done
  done
  # Without the overlay the built-in rules stay in charge.
  got=$("$bindir/tiledispatch" --plugin "$ewise_so" dispatch \
        "$src/examples/calls/cta_smem_add.yaml") && [ "$got" = smem ] &&
    ok "ewise plugin without its rules: smem" ||
    fail "ewise plugin without its rules chose '$got'"
  got=$(LD_LIBRARY_PATH="$libdir" "$tmp/use_plugin" "$ewise_so" \
        "$ewise_rules" "$src/examples/calls/cta_smem_add.yaml") &&
    [ "$got" = binary_flat ] && ok "td_registry_load_plugin: ewise plugin" ||
    fail "use_plugin with the ewise plugin chose '$got'"
}
check_ewise_plugin

# The plugins' self-checking programs, as docs/plugins.md runs them: the
# installed command line writes them, the CPU stand-in runs them in both
# data modes (the pairwise sum rounds, so the random mode sees an error
# within tolerance), nvcc compiles them.
check_plugin_programs() {
  local progs=$tmp/progs out
  mkdir -p "$progs"
  "$bindir/tiledispatch" --plugin "$tmp/libpairwise.so" \
    --rules "$src/examples/rules-with-pairwise.yaml" \
    kernel "$call" -o "$progs/pairwise.cu" &&
  "$bindir/tiledispatch" --plugin "$ewise_so" --rules "$ewise_rules" \
    kernel "$src/examples/calls/cta_smem_add.yaml" -o "$progs/ewise_add.cu" &&
  "$bindir/tiledispatch" --plugin "$ewise_so" --rules "$ewise_rules" \
    kernel "$src/examples/calls/cta_smem_mul_scalar.yaml" \
    -o "$progs/ewise_mul.cu" ||
    { fail "tiledispatch kernel with a plugin"; return; }
  grep -q 'variant binary_flat' "$progs/ewise_add.cu" &&
    ok "kernel: the program holds binary_flat's body" ||
    fail "kernel: ewise_add.cu does not hold binary_flat's body"
  printf '%s\t%s\tsm_90a\texact,random\n' pairwise pairwise \
    ewise_add binary_flat ewise_mul binary_flat >"$progs/manifest.tsv"
  if command -v g++ >/dev/null 2>&1; then
    if out=$(python3 "$src/tests/cuda/emu.py" -j 2 "$progs" 2>&1); then
      ok "the plugins' programs pass on the CPU stand-in"
    else
      fail "the plugins' programs on the CPU stand-in:"
    fi
    echo "$out" | sed 's/^/  /'
  else
    echo "skip: g++ not found, the plugins' programs were not run on the CPU stand-in"
  fi
  local nvcc
  nvcc=$(command -v nvcc || true)
  [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
  if [ -n "$nvcc" ]; then
    for f in pairwise ewise_add ewise_mul; do
      "$nvcc" -arch=sm_90a -c "$progs/$f.cu" -o "$progs/$f.o" 2>"$progs/$f.log" &&
        ok "nvcc -arch=sm_90a compiles $f.cu" ||
        { fail "nvcc on $f.cu"; head -n 20 "$progs/$f.log"; }
    done
  else
    echo "skip: nvcc not found, the plugins' programs were not compiled"
  fi
}
check_plugin_programs

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "install: all checks passed"
