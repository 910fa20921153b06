"""The GPU half of TVM's own tile-primitive tests and of the softmax
example: runs on the GPU machine the libraries that td_plugin.py (with
--td-export) and examples/tvm_softmax.py (--export) compiled here, with
TVM's runtime alone (the TVM wheel is too big to travel; its runtime
libraries, apache-tvm-ffi and this script are enough).

    python3 gpu_run.py BUNDLE OUTDIR

BUNDLE holds lib/ (libtvm_runtime.so, libtvm_runtime_cuda.so), wheels/
(apache-tvm-ffi for the GPU machine's Python; numpy and torch are
there already), tests/ (manifest.jsonl,
KEY.TAG.so, KEY.TAG.in.npz) and softmax/ (td.so, maybe tvm.so).  The
CUDA source inside each library is compiled by nvcc on the GPU machine
(every distinct source once, in parallel, before the runs), for sm_90a.

Writes OUTDIR/tests.tar (KEY.TAG.out.npz per call: each tensor argument
after the kernel ran, for check_gpu.sh to replay TVM's own assertions
with; and KEY.TAG.sent.json, a digest of each array it ran on, which the
replay requires the item to give again, so that its reference is the one
for this run: the digests, not the arrays, because the outputs alone come
near the 16 MiB a device file may have) and OUTDIR/softmax.json (the softmax against numpy, and the time of
each build).  Exit status 0 unless the bundle could not be used at all.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ARCH = os.environ.get("TD_GPU_ARCH", "sm_90a")


def input_digest(a: np.ndarray) -> dict:
    """What the replay compares an item's input with: the array's shape,
    item size and a SHA-256 of its bytes (an ml_dtypes array and the
    unsigned ints it travels as have the same bytes)."""
    a = np.ascontiguousarray(a)
    return {"shape": list(a.shape), "itemsize": int(a.dtype.itemsize),
            "sha256": hashlib.sha256(a.tobytes()).hexdigest()}


def _load_runtime(bundle: Path) -> object:
    """tvm_ffi and TVM's runtime with its CUDA module loader."""
    import tvm_ffi

    ffi_lib = Path(tvm_ffi.__file__).parent / "lib" / "libtvm_ffi.so"
    ctypes.CDLL(str(ffi_lib), ctypes.RTLD_GLOBAL)
    ctypes.CDLL(str(bundle / "lib" / "libtvm_runtime.so"), ctypes.RTLD_GLOBAL)
    try:
        ctypes.CDLL(str(bundle / "lib" / "libtvm_runtime_cuda.so"), ctypes.RTLD_GLOBAL)
    except OSError:
        # No libcudart.so.13 on the loader's path there: the bundle's.
        ctypes.CDLL(str(bundle / "lib" / "libcudart.so.13"), ctypes.RTLD_GLOBAL)
        ctypes.CDLL(str(bundle / "lib" / "libtvm_runtime_cuda.so"), ctypes.RTLD_GLOBAL)
    return tvm_ffi


class _Compiler:
    """tvm_callback_cuda_compile for TVM's CUDA module: nvcc, each source
    once (sources compiled ahead in parallel by precompile())."""

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.done: dict[str, bytes] = {}
        self.errors: dict[str, str] = {}

    def _one(self, code: str) -> None:
        key = hashlib.sha1(code.encode()).hexdigest()
        if key in self.done or key in self.errors:
            return
        src = self.dir / f"{key}.cu"
        out = self.dir / f"{key}.fatbin"
        src.write_text(code)
        arch = ARCH[3:]
        cmd = ["nvcc", "--fatbin", "-O3", f"-gencode=arch=compute_{arch},code=sm_{arch}",
               "-o", str(out), str(src)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            self.errors[key] = r.stderr[-2000:]
        else:
            self.done[key] = out.read_bytes()

    def precompile(self, codes: list[str]) -> None:
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
            list(pool.map(self._one, set(codes)))

    def __call__(self, code: str) -> bytes:
        self._one(code)
        key = hashlib.sha1(code.encode()).hexdigest()
        if key in self.errors:
            raise RuntimeError("nvcc failed:\n" + self.errors[key])
        return self.done[key]


def _sources(ffi: object, libs: list[Path]) -> list[str]:
    """The CUDA source inside each library, read without loading it on
    the GPU: a loader that only records what it is asked to compile."""
    seen: list[str] = []

    def record(code: str) -> bytes:
        seen.append(code)
        raise RuntimeError("recorded")

    ffi.register_global_func("tvm_callback_cuda_compile", record, override=True)
    for lib in libs:
        try:
            ffi.load_module(str(lib))
        except Exception:  # the recorder's own error, by design
            pass
    return seen


# Dtypes numpy has only through ml_dtypes: they travel as their bits
# (td_plugin.py saves them so) and torch, which has them, reads the bits.
_BITS = {"bfloat16": "uint16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8"}


def _to_device(a: np.ndarray, dtype: str | None) -> object:
    import torch

    t = torch.from_numpy(np.ascontiguousarray(a))
    if dtype in _BITS:
        t = t.view(getattr(torch, dtype))
    return t.cuda()


def _to_host(t: object, dtype: str | None) -> np.ndarray:
    import torch

    t = t.cpu()
    if dtype in _BITS:
        t = t.view(getattr(torch, _BITS[dtype]))
    return t.numpy()


def _call(ffi: object, lib: Path, name: str, arrays: list, dtypes: dict) -> list:
    import torch

    mod = ffi.load_module(str(lib))
    fn = mod[name]
    dev = [_to_device(a, dtypes.get(str(i))) if isinstance(a, np.ndarray) else a
           for i, a in enumerate(arrays)]
    fn(*[ffi.from_dlpack(d) if isinstance(d, torch.Tensor) else d for d in dev])
    torch.cuda.synchronize()
    return [_to_host(d, dtypes.get(str(i))) if isinstance(d, torch.Tensor) else None
            for i, d in enumerate(dev)]


def run_tests(ffi: object, comp: _Compiler, tests: Path, out: Path) -> dict:
    rows = [json.loads(line) for line in (tests / "manifest.jsonl").read_text().splitlines()]
    counts = {"ran": 0, "failed": 0}
    failures = []
    outdir = out / "tests"
    outdir.mkdir(parents=True, exist_ok=True)
    for row in rows:
        name = f"{row['key']}.{row['tag']}"
        try:
            inp = np.load(tests / f"{name}.in.npz")
            arrays = [inp[f"a{i}"] if spec == "tensor" else spec
                      for i, spec in enumerate(row["args"])]
            res = _call(ffi, tests / row["lib"], row.get("fn", "main"), arrays,
                        row.get("dtypes", {}))
            np.savez(outdir / f"{name}.out.npz",
                     **{f"a{i}": r for i, r in enumerate(res) if r is not None})
            (outdir / f"{name}.sent.json").write_text(
                json.dumps({k: input_digest(inp[k]) for k in inp.files}))
            counts["ran"] += 1
        except Exception as e:  # one item's failure must not stop the others
            counts["failed"] += 1
            failures.append({"nodeid": row["nodeid"], "error": str(e)[-400:]})
    with tarfile.open(out / "tests.tar", "w") as tar:
        tar.add(outdir, arcname="tests")
    return {**counts, "failures": failures[:50]}


def run_softmax(ffi: object, sm: Path) -> dict:
    import torch

    meta = json.loads((sm / "softmax.json").read_text())
    rows, cols = meta["rows"], meta["cols"]
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    res = {"meta": meta}
    for which in ("td", "hybrid", "tvm"):
        lib = sm / f"{which}.so"
        if not lib.exists():
            continue
        fn = ffi.load_module(str(lib))["main"]
        dx = torch.from_numpy(x).cuda()
        dy = torch.zeros((rows, cols), dtype=torch.float32, device="cuda")
        fx, fy = ffi.from_dlpack(dx), ffi.from_dlpack(dy)
        fn(fx, fy)
        torch.cuda.synchronize()
        err = float(np.abs(dy.cpu().numpy() - ref).max())
        # Warm, then 9 batches of 200 launches timed by CUDA events.
        for _ in range(20):
            fn(fx, fy)
        torch.cuda.synchronize()
        per = []
        for _ in range(9):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(200):
                fn(fx, fy)
            stop.record()
            stop.synchronize()
            per.append(start.elapsed_time(stop) * 1000.0 / 200)
        res[which] = {"max_abs_err": err, "pass": bool(err <= 1e-5),
                      "us_per_launch_median": round(float(np.median(per)), 2),
                      "us_per_launch_min": round(float(min(per)), 2),
                      "GB_per_s_median": round(2 * x.nbytes / (np.median(per) * 1e3), 1)}
    return res


def main() -> int:
    bundle, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    ffi = _load_runtime(bundle)
    work = Path(tempfile.mkdtemp())
    comp = _Compiler(work)
    libs = sorted((bundle / "tests").glob("*.so")) + sorted((bundle / "softmax").glob("*.so"))
    t0 = time.time()
    codes = _sources(ffi, libs)
    comp.precompile(codes)
    ffi.register_global_func("tvm_callback_cuda_compile", comp, override=True)
    print(f"nvcc: {len(set(codes))} sources, {len(comp.errors)} failed, "
          f"{time.time() - t0:.0f} s", flush=True)
    summary: dict = {"arch": ARCH, "nvcc_failed": len(comp.errors)}
    if (bundle / "softmax").is_dir():
        try:
            summary["softmax"] = run_softmax(ffi, bundle / "softmax")
        except Exception as e:  # the tests below still run
            summary["softmax"] = {"error": f"{type(e).__name__}: {e}"[-2000:]}
        print("softmax:", json.dumps(summary["softmax"]), flush=True)
    if (bundle / "tests").is_dir():
        summary["tests"] = run_tests(ffi, comp, bundle / "tests", out)
        print(f"tests: {summary['tests']['ran']} ran, {summary['tests']['failed']} failed "
              "(check_gpu.sh judges the outputs)", flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
