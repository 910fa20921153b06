#!/usr/bin/env python3
"""Prints one closing line 'N passed, N failed, N skipped' over the meson
test logs of the given build directories (the last run in each)."""
import json
import sys

passed = failed = skipped = 0
for d in sys.argv[1:]:
    try:
        with open(f"{d}/meson-logs/testlog.json") as f:
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
