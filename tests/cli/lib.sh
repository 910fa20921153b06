# Shared by the command-line test scripts (sourced, not run): `td` is the
# binary, `tmp` a scratch folder; `pass` and `fail` count.
pass=0
fail=0

# expect CODE 'SUBSTRING-IN-STDOUT+STDERR' ARGS...: runs tiledispatch ARGS
# (standard input closed) and checks its exit code and output.
expect() {
  local want=$1 needle=$2
  shift 2
  "$td" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: tiledispatch $* exited $got, expected $want"
    sed 's/^/  | /' "$tmp/out" "$tmp/err"
    fail=$((fail + 1))
    return
  fi
  if [ -n "$needle" ] && ! grep -qF -- "$needle" "$tmp/out" "$tmp/err"; then
    echo "FAIL: tiledispatch $*: output lacks '$needle'"
    sed 's/^/  | /' "$tmp/out" "$tmp/err"
    fail=$((fail + 1))
    return
  fi
  pass=$((pass + 1))
}

# ok DESCRIPTION COMMAND...: counts a pass when COMMAND succeeds.
ok() {
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}
