"""The suite `tvm-own-tests`: TVM's own tile-primitive test files for the
families tiledispatch has (vendored under tests/python/, see README.md),
run twice side by side, with the bridge installed and with plain TVM, and
the two compared.

    python run_suite.py OUTDIR [--only on|off] [-k EXPR] [--export DIR]

It passes when every item that compiles with plain TVM also passes with
the bridge, no item fails with the bridge unless expected.json lists it
with its reason, and every item whose outcome differs between the two
runs is listed there with its reason (a listed difference that no longer
happens fails too, so the list stays true).  OUTDIR gets on.jsonl /
off.jsonl (one line per item: outcome, tiledispatch's choices, the calls
handed back to TVM, the GPU half), the pytest logs and summary.json.

--export DIR (with --only on) also exports each item's compiled library
and inputs for the GPU half (gpu_run.py).  Without a GPU the kernels are
compiled, not run: each item's report says "needs a GPU (not run here)".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE / "tests" / "python" / "tirx" / "operator" / "tile_primitive" / "cuda"


def pytest_cmd(mode: str, out: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--rootdir", str(HERE), "-c", os.devnull, "-p", "td_plugin",
            "-W", "ignore", f"--td-bridge={mode}", f"--td-report={out / f'{mode}.jsonl'}",
            *extra, str(TESTS)]


def read(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    return {r["nodeid"].split("cuda/", 1)[-1]: r
            for r in map(json.loads, path.read_text().splitlines())}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--only", choices=("on", "off"))
    ap.add_argument("-k", dest="k", default=None)
    ap.add_argument("--export", type=Path, default=None)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    modes = [args.only] if args.only else ["on", "off"]
    extra = ["-k", args.k] if args.k else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    t0 = time.time()
    procs = {}
    for mode in modes:
        cmd = pytest_cmd(mode, args.out, extra + (
            [f"--td-export={args.export}"] if args.export and mode == "on" else []))
        log = open(args.out / f"{mode}.log", "w")
        procs[mode] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                        cwd=args.out), log)
    rcs = {}
    for mode, (p, log) in procs.items():
        rcs[mode] = p.wait()
        log.close()
    wall = time.time() - t0

    runs = {m: read(args.out / f"{m}.jsonl") for m in modes}
    expected = json.loads((HERE / "expected.json").read_text())
    problems: list[str] = []
    summary: dict = {"wall_s": round(wall, 1)}
    for m in modes:
        c = Counter(r["outcome"] for r in runs[m].values())
        summary[m] = dict(c)
        print(f"{'bridge' if m == 'on' else 'plain TVM'}: {c['passed']} passed, "
              f"{c['failed']} failed, {c['skipped']} skipped ({len(runs[m])} items)")
        if not runs[m]:
            problems.append(f"the {m} run reported no item (see {args.out / (m + '.log')})")
    if "on" in runs:
        choices = Counter()
        gpu = Counter()
        for r in runs["on"].values():
            for op, vs in (r.get("dispatched") or {}).items():
                for v, n in vs.items():
                    choices[f"{op}/{v}"] += n
            gpu[r.get("gpu_half") or "none"] += 1
        summary["dispatched"] = dict(sorted(choices.items()))
        summary["gpu_half"] = dict(gpu)
        print("tiledispatch chose:", ", ".join(f"{k} x{n}" for k, n in sorted(choices.items())))
        for nodeid, r in sorted(runs["on"].items()):
            if r["outcome"] == "failed" and nodeid not in expected["bridge_fails"]:
                problems.append(f"fails with the bridge: {nodeid}: {r.get('reason', '')}")
        for nodeid in expected["bridge_fails"]:
            if nodeid in runs["on"] and runs["on"][nodeid]["outcome"] != "failed":
                problems.append(f"expected.json says it fails with the bridge, it "
                                f"{runs['on'][nodeid]['outcome']}: {nodeid}")
    if len(runs) == 2:
        diff = {n: (runs["on"][n]["outcome"], runs["off"].get(n, {}).get("outcome"))
                for n in runs["on"] if runs["on"][n]["outcome"] !=
                runs["off"].get(n, {}).get("outcome")}
        summary["differences"] = {n: f"bridge {a}, plain TVM {b}" for n, (a, b) in diff.items()}
        want = expected["differences"]
        for n, (a, b) in sorted(diff.items()):
            print(f"differs: {n}: bridge {a}, plain TVM {b}"
                  + (f" ({want[n]['reason']})" if n in want else " (NOT LISTED)"))
            if n not in want:
                problems.append(f"not in expected.json: {n}: bridge {a}, plain TVM {b}")
            elif (want[n]["bridge"], want[n]["plain"]) != (a, b):
                problems.append(f"expected.json says bridge {want[n]['bridge']}, plain "
                                f"{want[n]['plain']}: {n}: now bridge {a}, plain TVM {b}")
        for n in want:
            if n not in diff and n in runs["on"]:
                problems.append(f"expected.json lists a difference that no longer happens: {n}")
    summary["problems"] = problems
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    for p in problems:
        print("FAIL", p)
    print(f"{wall:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
