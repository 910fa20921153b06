"""A check, on the CPU, of the GPU half's reference: that replaying an
item's own run_and_check with a GPU's outputs (td_plugin.py
--td-gpu-results) compares them with the reference of the input the GPU
ran on, so that a replay's PASS means the output is right.

    python check_replay.py [WORKDIR]

The items are TVM's test_cast_cta_local_view[float32-float16] and
[float32-bfloat16] (test_unary.py): float32 inputs drawn with numpy's
unseeded global generator, cast to 16 bits, reference `A.astype(dtype)`
(ml_dtypes for bfloat16).  The export runs both items in one process and
the replay the bfloat16 one alone, as the real GPU half does (two
processes, different company): before the plugin seeded every item from
its id, the replay drew another input than the export and failed 98% of
the elements of a right kernel.  The GPU is played by numpy: the kernel's
output is the float32 input rounded to bfloat16 to nearest, ties to even,
computed here on the bits (independently of ml_dtypes, which the
reference uses).  Checked:

1. the rounding itself: on ties (a float32 whose low 16 bits are 0x8000)
   and on random values it equals ml_dtypes' cast, and differs from
   truncation on ties and from rounding ties away from zero;
2. the replay passes the right output (TVM's assertion, checked against
   the outputs given: the item's report says so);
3. the replay fails an output computed from another input (what the
   unseeded replay did to a right kernel);
4. the replay fails when the input the GPU ran on is not the one the item
   gives (the plugin's own input check), naming the argument.

Exit status 0 when all hold, 1 otherwise.  Needs the pinned apache-tvm
(build-python/venv); run by the suite tvm-own-tests
(tests/upstream/meson.build).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gpu_run import input_digest  # noqa: E402  (the digest the GPU half writes)
UNARY = (HERE / "tests" / "python" / "tirx" / "operator" / "tile_primitive" / "cuda" /
         "elementwise" / "test_unary.py")
ITEMS = "test_cast_cta_local_view"
BF16 = "test_cast_cta_local_view and bfloat16"


def bf16_rne(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits (uint16), to nearest, ties to even
    (finite inputs)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    lsb = (bits >> 16) & 1
    return ((bits + 0x7FFF + lsb) >> 16).astype(np.uint16)


def bf16_trunc(x: np.ndarray) -> np.ndarray:
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_ties_away(x: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x8000) >> 16).astype(np.uint16)


def check_rounding() -> list[str]:
    import ml_dtypes

    fails = []
    hi = np.arange(0x3F00, 0x3F40, dtype=np.uint32)        # values in [0.5, 0.75]
    ties = ((hi << 16) | 0x8000).view(np.float32)            # exactly halfway
    ref = ties.astype(ml_dtypes.bfloat16).view(np.uint16)
    if not np.array_equal(bf16_rne(ties), ref):
        fails.append("rounding: ties to even differs from ml_dtypes' cast on ties")
    if np.array_equal(bf16_trunc(ties), ref) or np.array_equal(bf16_ties_away(ties), ref):
        fails.append("rounding: truncation or ties-away agrees with ml_dtypes on every tie "
                     "(the tie cases would not tell them apart)")
    odd = hi[hi % 2 == 1]
    want = (odd + 1).astype(np.uint16)                       # odd halves round up to even
    if not np.array_equal(bf16_rne(((odd << 16) | 0x8000).view(np.float32)), want):
        fails.append("rounding: a tie above an odd bfloat16 does not round up")
    rnd = np.random.default_rng(1).standard_normal(1 << 16).astype(np.float32)
    if not np.array_equal(bf16_rne(rnd), rnd.astype(ml_dtypes.bfloat16).view(np.uint16)):
        fails.append("rounding: differs from ml_dtypes' cast on random values")
    return fails


def pytest(work: Path, name: str, expr: str, extra: list[str]) -> list[dict]:
    """Runs the items matching `expr` under td_plugin; their report lines."""
    report = work / f"{name}.jsonl"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "--rootdir", str(HERE), "-c", os.devnull, "-p", "td_plugin", "-W", "ignore",
           "--td-bridge=on", "--td-arch=sm_90a", f"--td-report={report}", "-k", expr,
           *extra, str(UNARY)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    with open(work / f"{name}.log", "w") as log:
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
    if not report.exists():
        return []
    return [json.loads(line) for line in report.read_text().splitlines()]


def gpu_results(export: Path, out: Path, output: str) -> int:
    """What gpu_run.py sends back, with numpy for the GPU: per exported
    call, KEY.TAG.sent.json and KEY.TAG.out.npz (the input unchanged, the
    output computed from the input by `output`: "right" (the cast of the
    input sent), "other-input" (the cast of another input) or "right,
    other-sent" (the right output, but the digest of an input that is not
    what the item draws)).  Returns the number of calls."""
    out.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(ln) for ln in (export / "manifest.jsonl").read_text().splitlines()]
    for row in rows:
        name = f"{row['key']}.{row['tag']}"
        inp = dict(np.load(export / f"{name}.in.npz"))
        a = inp["a0"]
        if output == "other-input":
            a = np.random.default_rng(7).random(a.shape).astype(np.float32)
        if row.get("dtypes", {}).get("1") == "bfloat16":
            res = bf16_rne(a)
        else:
            res = a.astype(inp["a1"].dtype)
        np.savez(out / f"{name}.out.npz", a0=inp["a0"], a1=res)
        if output == "right, other-sent":
            inp["a0"] = np.nextafter(inp["a0"], np.float32(2))   # one ulp off
        (out / f"{name}.sent.json").write_text(
            json.dumps({k: input_digest(v) for k, v in inp.items()}))
    return len(rows)


def main() -> int:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    fails = check_rounding()

    export = work / "export"
    rows = pytest(work, "export", ITEMS, [f"--td-export={export}"])
    exported = [r for r in rows if r.get("gpu_half") == "exported for the GPU"]
    if len(exported) != 2 or not (export / "manifest.jsonl").exists():
        print(f"FAIL export: {len(exported)} of 2 items exported (see {work}/export.log)")
        return 1

    cases = [("right", "passed", "checked against the GPU's outputs"),
             ("other-input", "failed", "Mismatched elements"),
             ("right, other-sent", "failed", "argument 0 of the replay is not the input")]
    for output, outcome, why in cases:
        results = work / output.replace(", ", "_")
        n = gpu_results(export, results, output)
        rows = pytest(work, results.name, BF16, [f"--td-gpu-results={results}"])
        got = [r for r in rows if "bfloat16" in r["nodeid"]]
        if len(got) != 1 or n != 2:
            fails.append(f"{output}: {len(got)} replayed items, {n} calls "
                         f"(see {work}/{results.name}.log)")
            continue
        r = got[0]
        text = json.dumps(r) + (work / f"{results.name}.log").read_text()
        if r["outcome"] != outcome or why not in text:
            fails.append(f"{output}: the replay says {r['outcome']} "
                         f"({r.get('reason') or r.get('gpu_half')}); want {outcome} ({why})")
    for f in fails:
        print("FAIL", f)
    if not fails:
        print("replay reference: PASS (ties to even on the bits = ml_dtypes' cast; the replay "
              "passes the right bfloat16 output, fails one from another input and fails "
              "when the input sent is not the item's)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
