#!/usr/bin/env python3
"""The closing lines of scripts/test: what ran, per configuration.

usage: summary.py NAME=LOG[:RC] ...

Each argument is one configuration (one `meson test` run): its name, the
JSON test log that run wrote (meson-logs/*.json, one JSON object per test)
and, optionally, the exit status of `meson test`.  Prints one line per
configuration,

    plain      28 passed, 0 failed, 1 skipped

then the total alone on the last line:

    N passed, N failed, N skipped

A result of OK or EXPECTEDFAIL is passed, SKIP is skipped, anything else
(FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS, INTERRUPT) is failed.  A
configuration whose log is missing, unreadable or lists no test ran nothing:
that is a failure (its line says why; the total counts it as one failed),
and so is a non-zero exit status of `meson test` whose log shows no failed
test.  Exit status: 0 when nothing failed, 1 otherwise.
"""
import json
import sys

PASSED = ("OK", "EXPECTEDFAIL")
SKIPPED = ("SKIP",)


def count(path):
    """(passed, failed, skipped) of one meson test log; raises OSError or
    ValueError when it cannot be read."""
    passed = failed = skipped = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            res = json.loads(line).get("result")
            if res in PASSED:
                passed += 1
            elif res in SKIPPED:
                skipped += 1
            else:
                failed += 1
    return passed, failed, skipped


def main(argv):
    if not argv:
        print("usage: summary.py NAME=LOG[:RC] ...", file=sys.stderr)
        return 2
    total = [0, 0, 0]
    width = max(len(a.split("=", 1)[0]) for a in argv)
    for arg in argv:
        name, sep, rest = arg.partition("=")
        if not sep or not name:
            print(f"summary.py: bad argument '{arg}' (want NAME=LOG[:RC])",
                  file=sys.stderr)
            return 2
        path, rc = rest, None
        head, colon, tail = rest.rpartition(":")
        if colon and tail.lstrip("-").isdigit():
            path, rc = head, int(tail)
        note = ""
        try:
            p, f, s = count(path)
        except (OSError, ValueError) as e:
            p = f = s = 0
            note = f"ran nothing (no readable test log: {e})"
        else:
            if p + f + s == 0:
                note = "ran nothing (the test log lists no test)"
            elif rc not in (None, 0) and f == 0:
                note = f"meson test exited {rc} with no failed test"
        line = f"{name:<{width}}  {p} passed, {f} failed, {s} skipped"
        if note:
            line += f"  FAIL: {note}"
            f += 1
        print(line)
        total[0] += p
        total[1] += f
        total[2] += s
    print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
