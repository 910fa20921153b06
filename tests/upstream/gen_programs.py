#!/usr/bin/env python3
"""Self-checking CUDA programs from real TVM's compile of the cases in
tvm_cases.py: for each case, the CUDA that `tvm.compile(...,
tir_pipeline="tirx")` generates for sm_90a with TVM's own dispatcher
(NAME.tvm.cu, where TVM can lower the case) and with tiledispatch's bridge
installed (NAME.bridge.cu), each followed by a host `main` that stages the
case's deterministic inputs, launches the kernel on one CTA, and compares
with the reference computed here (PASS/FAIL, exit 0/1).

    gen_programs.py OUT [--nvcc] [--build]

--nvcc checks that every program compiles (nvcc -arch=sm_90a -c);
--build also links each into OUT/NAME.{tvm,bridge} for a GPU machine.
Prints one line per case: what TVM and the bridge did.
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tvm_cases as tc  # noqa: E402


def host_main(case: tc.Case, kernel: str = "f_kernel") -> str:
    a, b = tc.inputs(case)
    ref = tc.reference(case)
    fl = lambda xs: ", ".join(f"{x!r}f" for x in xs)  # noqa: E731
    return f"""
// ---- host harness (tests/upstream/gen_programs.py) ----
#include <cstdio>
#include <cmath>
int main() {{
  static const float hA[{case.n_src}] = {{{fl(a)}}};
  static float hB[{case.n_dst}] = {{{fl(b)}}};
  static const double ref[{case.n_dst}] = {{{", ".join(repr(x) for x in ref)}}};
  float *dA = nullptr, *dB = nullptr;
  if (cudaMalloc(&dA, sizeof hA) != cudaSuccess || cudaMalloc(&dB, sizeof hB) != cudaSuccess) {{
    printf("FAIL {case.name} cudaMalloc\\n"); return 1; }}
  cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice);
  {kernel}<<<1, {case.threads}>>>(dA, dB);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {{ printf("FAIL {case.name} %s\\n", cudaGetErrorString(err)); return 1; }}
  cudaMemcpy(hB, dB, sizeof hB, cudaMemcpyDeviceToHost);
  double max_err = 0;
  for (int i = 0; i < {case.n_dst}; ++i) {{
    double e = std::fabs((double)hB[i] - ref[i]);
    if (e > max_err) max_err = e;
  }}
  bool ok = max_err <= 1e-5;
  printf("%s {case.name} max_err=%g\\n", ok ? "PASS" : "FAIL", max_err);
  return ok ? 0 : 1;
}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--nvcc", action="store_true")
    ap.add_argument("--build", action="store_true")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    import tiledispatch.tvm as tdtvm

    from tvm.tirx.operator.tile_primitive import dispatcher

    def timed(fn, sink):
        def run(op_call, sctx):
            t = time.perf_counter()
            try:
                return fn(op_call, sctx)
            finally:
                sink.append(time.perf_counter() - t)
        return run

    failures = 0
    for case in tc.CASES:
        line = [case.name]
        for mode in ("tvm", "bridge"):
            if mode == "bridge":
                tdtvm.install()
            else:
                tdtvm.uninstall()
            spent: list[float] = []
            inner = dispatcher.run_dispatch
            dispatcher.run_dispatch = timed(inner, spent)
            t0 = time.perf_counter()
            try:
                src = tc.compile_cuda(case)
            except Exception as e:  # TVM's failure
                lines = str(e).splitlines()
                first = next((ln for ln in lines if "Invalid use" in ln or "DeclBuffer" in ln),
                             next((ln for ln in lines if "exception" in ln), lines[0]))
                first = first.strip().strip("|").strip()
                line.append(f"{mode}: cannot lower ({first.strip()[:100]})")
                if mode == "bridge" or not case.released_tvm_fails:
                    failures += 1
                continue
            finally:
                dispatcher.run_dispatch = inner
            ms = (time.perf_counter() - t0) * 1e3
            path = args.out / f"{case.name}.{mode}.cu"
            path.write_text(src + host_main(case))
            status = (f"{mode}: lowered (dispatch {sum(spent) * 1e3:.2f} ms of "
                      f"tvm.compile {ms:.0f} ms)")
            if args.nvcc or args.build:
                cmd = ["nvcc", "-arch=sm_90a", "-o", str(path.with_suffix("")), str(path)]
                if not args.build:
                    cmd = ["nvcc", "-arch=sm_90a", "-c", "-o", os.devnull, str(path)]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    status += " nvcc FAILED: " + r.stderr.strip().splitlines()[0][:120]
                    failures += 1
                else:
                    status += " nvcc ok"
            line.append(status)
        tdtvm.uninstall()
        print(" | ".join(line), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
