#!/usr/bin/env python3
"""Prints one closing line 'N passed, N failed, N skipped' over the given
meson test logs (testlog.json files, one per `meson test` run)."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                res = r.get("result")
                if res in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif res == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except FileNotFoundError:
        pass
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
