#!/usr/bin/env python3
"""Every conformance case lowered both ways: the CUDA real TVM (apache-tvm
0.27.0.post1) generates with its own dispatcher and the CUDA it generates
with tiledispatch's bridge installed, each as a self-checking program.

    both_ways.py OUT [--jobs N] [--link] [NAME...]
    both_ways.py --run DIR            # on the GPU machine: runs DIR/*.tvm, DIR/*.bridge

For each call file (tests/conformance/*.yaml) the kernel is the one
differential.py compiles (the call's buffers in their scopes, one
`Tx.<scope>.<op>(dst, src, ...)`, the call's launch), with two global
float64 buffers around it: every buffer is staged from IN (cast to its
dtype; a thread stages all of a local buffer, a CTA shares the staging of
a shared one), the call runs (at thread scope on shared memory, on thread
0 only), and the whole dst buffer is copied, as float64, to OUT by thread
0 of block 0.  The host `main` launches it on the call's grid, compares
OUT with a reference computed here from the same inputs (integer sums wrap
as the dtype does), prints `PASS|FAIL NAME max_err=E hash=H` and exits
0/1; H (a hash of OUT's bits) shows whether TVM's and the bridge's program
computed the same bits.

Each program is compiled with nvcc (-arch=sm_90a; sm_100a for the packed
cases, which the H200 cannot run: compile only).  Cases whose buffers are
distributed over lanes by a layout (the warp / warpgroup register views)
are lowered (differential.py's kernel, without inputs) and compiled both
ways but not run: TVM lowers no direct store to such a buffer, so it
cannot be staged from TVMScript (`tiledispatch kernel` builds its own
harness for these).

Prints one line per case and the counts; exit 1 when a lowering the
bridge should do fails, or an nvcc compile fails.  With --run, exits 1 on
any FAIL or a hash mismatch between the two programs of a case.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import math
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
D = td = None  # differential and tiledispatch; --run needs neither (main imports them)

_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64,
         "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


def _arch(call: td.Call) -> str:
    arch = call.arch or "sm_90a"
    return arch if arch.endswith("a") or int(re.sub(r"\D", "", arch)) < 90 else arch + "a"


def _region(text: str, shape: list[int]) -> tuple[str, list[tuple[int, int]]]:
    m = re.fullmatch(r"\s*(\w+)\s*(?:\[(.*)\])?\s*", text)
    name, body = m.group(1), m.group(2)
    if body is None:
        return name, [(0, e) for e in shape]
    out = []
    for part in body.split(","):
        if ":" in part:
            lo, hi = part.split(":")
            out.append((int(lo), int(hi)))
        else:
            out.append((int(part), int(part) + 1))
    return name, out


def _unravel(flat: str, shape: list[int]) -> str:
    idx, stride = [], math.prod(shape)
    for ext in shape:
        stride //= ext
        idx.append(f"({flat} // {stride}) % {ext}" if stride > 1 else f"{flat} % {ext}")
    return ", ".join(idx)


def runnable(call: td.Call) -> str | None:
    """Why the case is compiled but not run, or None."""
    if any("layout" in b for b in call.buffers.values()):
        return "buffers distributed over lanes by a layout"
    return None


def layout(call: td.Call) -> dict[str, int]:
    """Each buffer's offset in IN, and IN's length."""
    off, out = 0, {}
    for name, b in call.buffers.items():
        out[name] = off
        off += math.prod(b["shape"])
    out[""] = off
    return out


def program_source(call: td.Call) -> str:
    """The TVMScript kernel f(IN, OUT) around the call."""
    D.tvm_source(call)  # raises Unsupported as the differential does
    launch = call.launch
    threads = launch.get("threadIdx.x", 1)
    blocks = [launch.get(f"blockIdx.{a}", 1) for a in "xyz"]
    while len(blocks) > 1 and blocks[-1] == 1:
        blocks.pop()
    offs = layout(call)
    dname, _ = _region(call.dst, call.buffers[re.match(r"\w+", call.dst).group(0)]["shape"])
    dbuf = call.buffers[dname]
    n_out = math.prod(dbuf["shape"])
    bvars = ["bx", "by", "bz"][:len(blocks)]
    first = " and ".join([f"{v} == 0" for v in bvars] + ["tx == 0"])
    ln = ["@T.prim_func",
          "def f(IN_ptr: T.handle, OUT_ptr: T.handle):",
          f'    IN = T.match_buffer(IN_ptr, [{offs[""]}], "float64")',
          f'    OUT = T.match_buffer(OUT_ptr, [{n_out}], "float64")',
          "    T.device_entry()",
          f"    {', '.join(bvars)} = T.cta_id([{', '.join(map(str, blocks))}])",
          f"    tx = T.thread_id([{threads}])"]
    for name, b in call.buffers.items():
        lay = f", layout={D.tvm_layout(b['layout'])}" if "layout" in b else ""
        ln.append(f'    {name} = T.alloc_buffer([{", ".join(map(str, b["shape"]))}], '
                  f'"{b["dtype"]}", scope="{b["scope"]}"{lay})')
    shared = False
    for name, b in call.buffers.items():
        n, o, shape = math.prod(b["shape"]), offs[name], b["shape"]
        cast = f'T.Cast("{b["dtype"]}", IN[{o} + k])'
        if b["scope"] == "local":
            ln += [f"    for k in T.serial({n}):", f"        {name}[{_unravel('k', shape)}] = {cast}"]
        else:
            shared = True
            ln += [f"    for i in T.serial({math.ceil(n / threads)}):",
                   f"        k = i * {threads} + tx",
                   f"        if k < {n}:",
                   f"            {name}[{_unravel('k', shape)}] = {cast}"]
    if shared:
        ln.append('    T.tvm_storage_sync("shared")')
    kw = [f"axes=[{', '.join(map(str, call.axes))}]", f"accum={call.accum}"]
    kw += [f"{k}={v!r}" for k, v in call.config.items()]
    if call.dispatch:
        kw.append(f"dispatch={call.dispatch!r}")
    stmt = f"{D._NS[call.scope]}.{call.op}({call.dst}, {call.src}, {', '.join(kw)})"
    if call.scope == "thread" and shared:
        ln += ["    if tx == 0:", f"        {stmt}"]
    else:
        ln.append(f"    {stmt}")
    if shared:
        ln.append('    T.tvm_storage_sync("shared")')
    ln += [f"    if {first}:",
           f"        for k in T.serial({n_out}):",
           f'            OUT[k] = T.Cast("float64", {dname}[{_unravel("k", dbuf["shape"])}])']
    return "\n".join(ln) + "\n"


def inputs(call: td.Call) -> list[float]:
    vals = []
    for _, b in call.buffers.items():
        dt = b["dtype"]
        for i in range(math.prod(b["shape"])):
            v = (i * 37 + 11) % 23
            if dt.startswith("uint"):
                vals.append(float(v))
            elif dt.startswith("int"):
                vals.append(float(v - 11))
            else:
                vals.append((v - 11) / 8.0)
    return vals


def reference(call: td.Call) -> list[float]:
    import numpy as np

    vin = np.array(inputs(call), dtype=np.float64)
    offs = layout(call)
    arrays = {n: vin[offs[n]:offs[n] + math.prod(b["shape"])].reshape(b["shape"]).copy()
              for n, b in call.buffers.items()}
    sname, sreg = _region(call.src, call.buffers[re.match(r"\w+", call.src).group(0)]["shape"])
    dname, dreg = _region(call.dst, call.buffers[re.match(r"\w+", call.dst).group(0)]["shape"])
    sub = arrays[sname][tuple(slice(a, b) for a, b in sreg)]
    axes = tuple(sorted({a % sub.ndim for a in call.axes}))
    dt = call.buffers[dname]["dtype"]
    if call.op == "sum":
        res = sub.sum(axis=axes)
    elif call.op == "max":
        res = sub.max(axis=axes)
    else:
        res = sub.min(axis=axes)
    dsl = tuple(slice(a, b) for a, b in dreg)
    old = arrays[dname][dsl]
    res = res.reshape(old.shape)
    if call.accum:
        res = {"sum": np.add, "max": np.maximum, "min": np.minimum}[call.op](res, old)
    if dt in _BITS:  # wraps as the dtype does
        bits = _BITS[dt]
        res = np.array([((int(x) + (1 << (bits - 1) if not dt.startswith("u") else 0))
                         % (1 << bits)) - ((1 << (bits - 1)) if not dt.startswith("u") else 0)
                         for x in res.ravel()], dtype=np.float64).reshape(res.shape)
    arrays[dname][dsl] = res
    return [float(x) for x in arrays[dname].ravel()]


def tolerance(dtype: str) -> float:
    return {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-5}.get(dtype, 0.0)


def host_main(name: str, call: td.Call) -> str:
    vin, ref = inputs(call), reference(call)
    dname = re.match(r"\w+", call.dst).group(0)
    tol = tolerance(call.buffers[dname]["dtype"])
    launch = call.launch
    grid = ", ".join(str(launch.get(f"blockIdx.{a}", 1)) for a in "xyz")
    dbl = lambda xs: ", ".join(repr(x) for x in xs)  # noqa: E731
    return f"""
// ---- host harness (tests/upstream/both_ways.py) ----
#include <cstdio>
#include <cmath>
#include <cstring>
int main() {{
  static const double hIN[{len(vin)}] = {{{dbl(vin)}}};
  static const double ref[{len(ref)}] = {{{dbl(ref)}}};
  static double hOUT[{len(ref)}];
  double *dIN = nullptr, *dOUT = nullptr;
  if (cudaMalloc(&dIN, sizeof hIN) != cudaSuccess || cudaMalloc(&dOUT, sizeof hOUT) != cudaSuccess) {{
    printf("FAIL {name} cudaMalloc\\n"); return 1; }}
  cudaMemcpy(dIN, hIN, sizeof hIN, cudaMemcpyHostToDevice);
  cudaMemset(dOUT, 0, sizeof hOUT);
  f_kernel<<<dim3({grid}), {launch.get("threadIdx.x", 1)}>>>(dIN, dOUT);
  cudaError_t err = cudaGetLastError();   /* no image for this GPU, bad launch */
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {{ printf("FAIL {name} %s\\n", cudaGetErrorString(err)); return 1; }}
  cudaMemcpy(hOUT, dOUT, sizeof hOUT, cudaMemcpyDeviceToHost);
  double max_err = 0;
  unsigned long long h = 1469598103934665603ull;
  for (int i = 0; i < {len(ref)}; ++i) {{
    double e = std::fabs(hOUT[i] - ref[i]) / (1.0 + std::fabs(ref[i]));
    if (!(e <= max_err)) max_err = e;   /* NaN sticks */
    unsigned long long b; std::memcpy(&b, &hOUT[i], 8);
    h = (h ^ b) * 1099511628211ull;
  }}
  bool ok = max_err <= {tol!r};
  printf("%s {name} max_err=%g hash=%016llx\\n", ok ? "PASS" : "FAIL", max_err, h);
  return ok ? 0 : 1;
}}
"""


def lower(call: td.Call, bridge: bool) -> str:
    import tvm
    import tvm.script
    import tiledispatch.tvm as tdtvm

    if bridge:
        tdtvm.install(tdtvm.default_registry())
    try:
        # A lane-distributed buffer cannot be staged from TVMScript: the
        # differential's kernel (no inputs), to compile.
        text = program_source(call) if runnable(call) is None else D.tvm_source(call)
        func = tvm.script.parse(text)
        target = tvm.target.Target({"kind": "cuda", "arch": call.arch or "sm_90a"})
        with target:
            ex = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        return (ex.mod if hasattr(ex, "mod") else ex).imports[0].inspect_source()
    finally:
        if bridge:
            tdtvm.uninstall()


def nvcc(path: Path, arch: str, link: bool) -> str:
    out = str(path.with_suffix("")) if link else os.devnull
    # Linked against the shared CUDA runtime: small programs to carry.
    cmd = ["nvcc", f"-arch={arch}", "-cudart", "shared", "-o", out, str(path)]
    if not link:
        cmd[1:1] = ["-c"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 0:
        return "ok"
    err = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:100])
    return "FAILS: " + err.strip()[:120]


def generate(args) -> int:
    import tvm  # noqa: F401

    reg = td.Registry()
    files = sorted(args.cases.glob("*.yaml"))
    if args.names:
        files = [f for f in files if f.stem in args.names]
    args.out.mkdir(parents=True, exist_ok=True)
    jobs, rows = [], {}
    counts = dict(cases=0, tvm=0, bridge=0, both=0, compiled_tvm=0, compiled_bridge=0,
                  to_run=0, compile_only=0, not_run=0)
    bad = 0
    for f in files:
        name = f.stem
        counts["cases"] += 1
        try:
            call = td.Call.from_yaml(f)
        except td.InputError as e:
            # A case whose expectation is the loader's refusal (upstream's
            # scale factors past lane 127): no call, so no program.
            rows[name] = [f"not run (refused at load: {str(e).splitlines()[0]})"]
            counts["not_run"] += 1
            continue
        ours = D._select(reg, call)
        try:
            program_source(call)
        except D.Unsupported as e:
            rows[name] = [f"not run ({e})"]
            counts["not_run"] += 1
            continue
        why = runnable(call)
        arch = _arch(call)
        # The H200 runs sm_90a code: sm_100a programs are compiled only.
        run = why is None and int(re.sub(r"\D", "", arch)) < 100
        row = rows.setdefault(name, [])
        lowered = {}
        for mode in ("tvm", "bridge"):
            try:
                src = lower(call, mode == "bridge")
            except Exception as e:  # noqa: BLE001
                row.append(f"{mode}: cannot lower ({D._first_line(e)[:90]})")
                if mode == "bridge" and ours != "no match":
                    bad += 1
                continue
            counts[mode] += 1
            lowered[mode] = src
        if len(lowered) == 2:
            counts["both"] += 1
        for mode, src in lowered.items():
            path = args.out / f"{name}.{mode}.cu"
            if why is None:
                path.write_text(src + host_main(name, call))
            else:
                path.write_text(src)
            jobs.append((name, mode, path, arch, run and args.link))
        if lowered and run:
            counts["to_run"] += 1
        elif lowered:
            counts["compile_only"] += 1
            row.append("compile only: " + (why or f"{arch} (not on the H200)"))
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        futs = {ex.submit(nvcc, p, a, link): (n, m) for n, m, p, a, link in jobs}
        for fut in cf.as_completed(futs):
            n, m = futs[fut]
            res = fut.result()
            rows[n].append(f"{m}: nvcc {res}")
            if res == "ok":
                counts[f"compiled_{m}"] += 1
            else:
                bad += 1
    for name in sorted(rows):
        print(f"{name}: " + "; ".join(sorted(rows[name])))
    print()
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    print(f"failures (bridge cannot lower a case tiledispatch selects, or nvcc fails): {bad}")
    return 1 if bad else 0


def _run_one(exe: Path) -> str:
    try:
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        return (r.stdout.strip().splitlines() or [f"FAIL {exe.stem} no output"])[-1]
    except subprocess.TimeoutExpired:
        return f"FAIL {exe.stem} timeout"


def run(directory: Path, jobs: int) -> int:
    res: dict[str, dict[str, tuple[str, str]]] = {}
    exes = [e for e in sorted(directory.iterdir())
            if e.suffix in (".tvm", ".bridge") and os.access(e, os.X_OK)]
    with cf.ThreadPoolExecutor(jobs) as ex:
        lines = list(ex.map(_run_one, exes))
    for exe, line in zip(exes, lines):
        print(f"{exe.suffix[1:]:6} {line}", flush=True)
        m = re.search(r"hash=(\w+)", line)
        res.setdefault(exe.stem, {})[exe.suffix[1:]] = (line.split()[0], m.group(1) if m else "")
    n = dict(programs=0, passed=0, both=0, both_pass=0, same_bits=0)
    bad = 0
    for name, r in sorted(res.items()):
        for st, _ in r.values():
            n["programs"] += 1
            n["passed"] += st == "PASS"
            bad += st != "PASS"
        if len(r) == 2:
            n["both"] += 1
            n["both_pass"] += all(st == "PASS" for st, _ in r.values())
            same = r["tvm"][1] == r["bridge"][1]
            n["same_bits"] += same
            if not same:
                print(f"differ {name}: tvm {r['tvm'][1]} bridge {r['bridge'][1]}")
    print(" ".join(f"{k}={v}" for k, v in n.items()))
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=Path,
                    default=Path(__file__).resolve().parents[2] / "tests" / "conformance")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--link", action="store_true", help="link the runnable programs")
    ap.add_argument("--run", type=Path, help="run the programs linked in DIR")
    ap.add_argument("names", nargs="*", help="OUT, then the cases to run (default: all)")
    args = ap.parse_intermixed_args()
    args.out = Path(args.names.pop(0)) if args.names else None
    if args.run:
        return run(args.run, args.jobs)
    global D, td
    import differential as D  # noqa: E402
    import tiledispatch as td  # noqa: E402
    try:
        import tvm  # noqa: F401
    except ImportError:
        print("SKIP upstream: apache-tvm is not installed (pip install apache-tvm==0.27.0.post1)")
        return 77
    if args.out is None:
        ap.error("OUT is required")
    return generate(args)


if __name__ == "__main__":
    sys.exit(main())
