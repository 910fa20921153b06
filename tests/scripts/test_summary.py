#!/usr/bin/env python3
"""Tests of scripts/summary.py, the closing lines of scripts/test, on
synthetic meson test logs: per-configuration counts, the total alone on the
last line, failures, and configurations that ran nothing."""
import json
import os
import subprocess
import sys
import tempfile

SUMMARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "scripts", "summary.py")
failed = 0


def log(d, name, results):
    path = os.path.join(d, name + ".json")
    with open(path, "w") as f:
        for i, r in enumerate(results):
            f.write(json.dumps({"name": f"t{i}", "result": r}) + "\n")
    return path


def summary(*args):
    p = subprocess.run([sys.executable, SUMMARY] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines(), p.stdout + p.stderr


def expect(what, ok, out):
    global failed
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        print("    " + out.replace("\n", "\n    "))
        failed += 1


def main():
    with tempfile.TemporaryDirectory() as d:
        plain = log(d, "plain", ["OK"] * 5 + ["SKIP", "EXPECTEDFAIL"])
        asan = log(d, "asan", ["OK"] * 4)
        # The same log file under two names counts twice: each
        # configuration is counted from the log it names.
        rc, lines, out = summary(f"plain={plain}:0", f"asan={asan}:0",
                                 f"valgrind={asan}")
        expect("counts every configuration, total alone on the last line",
               rc == 0 and lines[-1] == "14 passed, 0 failed, 1 skipped"
               and lines[0].split() == ["plain", "6", "passed,", "0",
                                        "failed,", "1", "skipped"]
               and lines[1].startswith("asan ")
               and lines[2].startswith("valgrind ")
               and len(lines) == 4, out)

        bad = log(d, "bad", ["OK", "FAIL", "TIMEOUT", "UNEXPECTEDPASS",
                             "ERROR", "SKIP"])
        rc, lines, out = summary(f"plain={plain}:0", f"asan={bad}:1")
        expect("FAIL, TIMEOUT, UNEXPECTEDPASS, ERROR are failures",
               rc == 1 and lines[-1] == "7 passed, 4 failed, 2 skipped", out)

        empty = log(d, "empty", [])
        rc, lines, out = summary(f"plain={plain}:0", f"tsan={empty}:0")
        expect("a configuration whose log lists no test fails",
               rc == 1 and "tsan" in lines[1] and "ran nothing" in lines[1]
               and lines[-1] == "6 passed, 1 failed, 1 skipped", out)

        rc, lines, out = summary(f"plain={plain}:0",
                                 f"valgrind={os.path.join(d, 'none.json')}:1")
        expect("a configuration without a log fails",
               rc == 1 and "ran nothing" in lines[1]
               and lines[-1] == "6 passed, 1 failed, 1 skipped", out)

        rc, lines, out = summary(f"plain={plain}:2")
        expect("meson test failing with no failed test is a failure",
               rc == 1 and "exited 2" in lines[0]
               and lines[-1] == "6 passed, 1 failed, 1 skipped", out)

        garbage = os.path.join(d, "garbage.json")
        with open(garbage, "w") as f:
            f.write("not json\n")
        rc, lines, out = summary(f"plain={garbage}:0")
        expect("an unreadable log is a failure",
               rc == 1 and "ran nothing" in lines[0], out)

        rc, lines, out = summary()
        expect("no configuration is a usage error", rc == 2, out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
