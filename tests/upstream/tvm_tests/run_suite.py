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

The folders for sm_100a alone (SM100A_DIRS: gemm_async) run in the
sm_100a pass, then once more with every tmem buffer at address 0
(td_plugin's --td-tmem-addr-const: upstream's allocated_addr=tmem_addr[0]
fails inside tvm.compile, D5), where an item that does not pass both ways
must be listed in expected.json's `tmem_addr_const`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE / "tests" / "python" / "tirx" / "operator" / "tile_primitive" / "cuda"
# Folders whose every item is for sm_100a (tcgen05 has no sm_90 form; a
# bare Target("cuda") there means sm_100a, design/gemm/plan.md D11): they
# run in the sm_100a pass only, compiled, never exported for the H200.
SM100A_DIRS = ("gemm_async",)


def pytest_cmd(mode: str, report: Path, arch: str, targets: list[str],
               extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--rootdir", str(HERE), "-c", os.devnull, "-p", "td_plugin",
            "-W", "ignore", f"--td-bridge={mode}", f"--td-arch={arch}",
            f"--td-report={report}", *extra, *targets]


def run_pass(modes: list[str], arch: str, tag: str, targets: list[str], extra: list[str],
             out: Path, export: Path | None) -> None:
    """Both modes at once (one process each: the two cores)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    procs = []
    for mode in modes:
        ex = [f"--td-export={export}"] if export is not None and mode == "on" else []
        log = open(out / f"{mode}{tag}.log", "w")
        cmd = pytest_cmd(mode, out / f"{mode}{tag}.jsonl", arch, targets, extra + ex)
        procs.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                       cwd=out), log))
    for p, log in procs:
        p.wait()
        log.close()


def read(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    return {r["nodeid"].split("cuda/", 1)[-1]: r
            for r in map(json.loads, path.read_text().splitlines())}


def tmem_addr_const(modes: list[str], args: argparse.Namespace, expected: dict,
                    summary: dict) -> list[str]:
    """The pass behind D5: every item not passed both ways there (with
    the bridge alone: not passed) is listed in expected.json's
    `tmem_addr_const` with both outcomes and the reason; a listed item
    that now passes fails too."""
    runs = {m: read(args.out / f"{m}-tmemconst.jsonl") for m in modes}
    table = expected.get("tmem_addr_const", [])
    problems: list[str] = []
    used: set[int] = set()
    for m in modes:
        c = Counter(r["outcome"] for r in runs[m].values())
        summary[f"{m}-tmemconst"] = dict(c)
        print(f"tmem at address 0, {'bridge' if m == 'on' else 'plain TVM'}: "
              f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped")
    for n in sorted(set().union(*(r.keys() for r in runs.values()))):
        got = tuple(runs[m].get(n, {}).get("outcome") for m in modes)
        e = next((e for e in table if re.fullmatch(e["match"], n)), None)
        if e is not None:
            used.add(id(e))
            want = tuple(e["bridge" if m == "on" else "plain"] for m in modes)
            if got != want:
                problems.append(f"tmem at address 0: expected.json says {want}, now {got}: {n}")
        elif any(o != "passed" for o in got):
            problems.append(f"tmem at address 0: not in expected.json: {n}: {got}")
    if args.k is None:
        problems += [f"expected.json (tmem_addr_const) lists what no longer happens: "
                     f"{e['match']}" for e in table if id(e) not in used]
    return problems


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
    if args.export is not None:
        args.export.mkdir(parents=True, exist_ok=True)
        (args.export / "manifest.jsonl").unlink(missing_ok=True)
    t0 = time.time()
    for m in modes:
        for stale in args.out.glob(f"{m}*.jsonl"):
            stale.unlink()
    ignore = [f"--ignore={TESTS / d}" for d in SM100A_DIRS]
    run_pass(modes, "sm_90a", "", [str(TESTS)], extra + ignore, args.out, args.export)
    # The items that gate themselves on sm_100 (the packed f32x2 paths,
    # copy's vec_256b) skip at sm_90a: their compile path runs again for
    # sm_100a.
    first = read(args.out / f"{modes[0]}.jsonl")
    # (copy's 32-byte accesses say "needs cuda compute >= 10.0").
    gated = sorted(n for n, r in first.items()
                   if r["outcome"] == "skipped" and re.search(
                       r"sm_100|compute >= 10", r.get("reason", "")))
    # With them, the sm_100a folders (under -k as the first pass).
    # Compiled only: the H200 (sm_90) cannot run them, so none is exported.
    run_pass(modes, "sm_100a", "-sm100a",
             [str(TESTS / n) for n in gated] + [str(TESTS / d) for d in SM100A_DIRS],
             extra, args.out, None)
    # Behind D5: the sm_100a folders again with every tmem buffer declared
    # at address 0 (td_plugin's --td-tmem-addr-const), so that what the
    # items compile behind TVM's failure on allocated_addr=tmem_addr[0]
    # is checked too.
    run_pass(modes, "sm_100a", "-tmemconst", [str(TESTS / d) for d in SM100A_DIRS],
             extra + ["--td-tmem-addr-const"], args.out, None)
    wall = time.time() - t0

    runs = {}
    for m in modes:
        runs[m] = read(args.out / f"{m}.jsonl")
        for n, r in read(args.out / f"{m}-sm100a.jsonl").items():
            r["arch"] = "sm_100a"
            runs[m][n] = r
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
    def entry(nodeid: str, table: list[dict]) -> dict | None:
        return next((e for e in table if re.fullmatch(e["match"], nodeid)), None)

    fails, diffs = expected["bridge_fails"], expected["differences"]
    used: set[int] = set()
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
        summary["handed_back"] = {n: r["log"] for n, r in sorted(runs["on"].items())
                                  if r.get("log")}
        print("tiledispatch chose:", ", ".join(f"{k} x{n}" for k, n in sorted(choices.items())))
        print(f"items with a call handed back to TVM: "
              f"{len(summary['handed_back'])} (summary.json says which and why)")
        for nodeid, r in sorted(runs["on"].items()):
            e = entry(nodeid, fails)
            if r["outcome"] == "failed" and e is None:
                problems.append(f"fails with the bridge: {nodeid}: {r.get('reason', '')}")
            elif e is not None:
                used.add(id(e))
                if r["outcome"] != "failed":
                    problems.append(f"expected.json says it fails with the bridge, it "
                                    f"{r['outcome']}: {nodeid}")
    if len(runs) == 2:
        diff = {n: (runs["on"][n]["outcome"], runs["off"].get(n, {}).get("outcome"))
                for n in runs["on"] if runs["on"][n]["outcome"] !=
                runs["off"].get(n, {}).get("outcome")}
        summary["differences"] = {n: f"bridge {a}, plain TVM {b}" for n, (a, b) in diff.items()}
        listed = Counter()
        for n, (a, b) in sorted(diff.items()):
            e = entry(n, diffs)
            if e is None:
                print(f"differs: {n}: bridge {a}, plain TVM {b} (NOT LISTED)")
                problems.append(f"not in expected.json: {n}: bridge {a}, plain TVM {b}")
                continue
            used.add(id(e))
            listed[e["reason"]] += 1
            if (e["bridge"], e["plain"]) != (a, b):
                problems.append(f"expected.json says bridge {e['bridge']}, plain "
                                f"{e['plain']}: {n}: now bridge {a}, plain TVM {b}")
        for reason, n in listed.items():
            print(f"differs ({n} items): {reason}")
        if args.k is None:
            for e in diffs + fails:
                if id(e) not in used:
                    problems.append(f"expected.json lists what no longer happens: {e['match']}")
    problems += tmem_addr_const(modes, args, expected, summary)
    summary["problems"] = problems
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    for p in problems:
        print("FAIL", p)
    print(f"{wall:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
