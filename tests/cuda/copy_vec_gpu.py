#!/usr/bin/env python3
"""The forced copy widths against the scalar copy, on a GPU.

For every call file of the given directories whose `# expect:` line names a
forced width (vec_16b .. vec_256b), the emitted CUDA body of that variant
and of the same call forced to `fallback` (element by element, through the
same layouts, no PTX) each run in a one-thread kernel over the same memory
image: every buffer of the call filled with a byte pattern (the
destination's bytes differ from the source's), shared and register
buffers staged from it and written back after the body.  The two images
after the run must be equal byte for byte, and must differ from the image
before (the copy wrote something).  This checks the PTX helpers (the
instruction, the operand constraints, the shared-address conversion, the
container views) and the addresses on real hardware, independently of the
program generator.

Cases whose `# arch:` is newer than --arch are compiled for their arch and
not run.  The kernels of all cases go into one program, compiled once.

--host builds the same program with g++ for the CPU instead (kernels as
functions, the helpers' memcpy half in place of the PTX, CUDA's headers
for the types only) and runs every case, the sm_100a ones too: the
addresses, the container views and the swizzles against the scalar copy,
without a GPU (the cuda suite runs it).

usage: copy_vec_gpu.py TILEDISPATCH DIR... [--arch sm_90a] [--nvcc PATH]
                       [--out DIR] [--compile-only] [--host]
Exit status: 0 every run case PASS (and everything compiled), 1 a FAIL or
a build error, 77 without nvcc (or, with --host, without g++ or CUDA's
headers).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

CUDA_TYPES = {"float32": "float", "float16": "__half",
              "bfloat16": "__nv_bfloat16", "float64": "double",
              "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
              "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t",
              "uint32": "uint32_t", "uint64": "uint64_t",
              "float8_e4m3fn": "__nv_fp8_e4m3", "float8_e5m2": "__nv_fp8_e5m2"}
BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1,
         "int16": 2, "int32": 4, "int64": 8, "uint8": 1, "uint16": 2,
         "uint32": 4, "uint64": 8, "float8_e4m3fn": 1, "float8_e5m2": 1}
FORCED = {"vec_16b", "vec_32b", "vec_64b", "vec_128b", "vec_256b"}
# check() of --host: the same comparison without the CUDA runtime.
HOST_CHECK = """  unsigned char *h0 = (unsigned char *)malloc(n), *h1 = (unsigned char *)malloc(n), *h2 = (unsigned char *)malloc(n);
  for (size_t i = 0; i < n; i++) h0[i] = (unsigned char)(i * 151u + (i >> 8) * 37u + 11u);
  unsigned char *d;
  if ((d = (unsigned char *)malloc(n)) == NULL) { printf("FAIL %s: malloc\\n", name); return 1; }
  memcpy(d, h0, n);
  kv(d);
  int e = 0;
  memcpy(h1, d, n);
  memcpy(d, h0, n);
  kr(d);
  int e2 = 0;
  memcpy(h2, d, n);
  free(d);
  int bad = 0;
  if (e != 0 || e2 != 0) {
    printf("FAIL %s: %s / %s\\n", name, "error", "error");
    bad = 1;
  } else if (memcmp(h2, h0, n) == 0) {
    printf("FAIL %s: the scalar copy changed nothing\\n", name);
    bad = 1;
  } else {
    for (size_t i = 0; i < n; i++)
      if (h1[i] != h2[i]) {
        printf("FAIL %s: byte %zu: vector copy 0x%02x, scalar copy 0x%02x\\n", name, i, h1[i], h2[i]);
        bad = 1;
        break;
      }
  }
  if (!bad) printf("PASS %s\\n", name);
  free(h0); free(h1); free(h2);
  return bad;
}"""
HELPER = re.compile(r"__forceinline__ __device__.*?\n}\n", re.S)


def header(path):
    expect = arch = None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\s*#\s*(expect|arch)\s*:\s*(\S+)\s*$", line)
        if m:
            if m.group(1) == "expect":
                expect = m.group(2)
            else:
                arch = m.group(2)
    return expect, arch


def buffers(text):
    """(name, scope, dtype, elements) of each buffer line; a global
    buffer gets four times the shape's product (strided views span more
    than their shape), the others the product; at least 64."""
    out = []
    for name, scope, dtype, shape in re.findall(
            r"^\s+(\w+):\s*\{\s*scope:\s*([\w.]+)\s*,\s*dtype:\s*(\w+)"
            r"\s*,\s*shape:\s*\[([\d,\s]+)\]", text, re.M):
        n = 1
        for e in shape.split(","):
            n *= int(e)
        out.append((name, scope, dtype,
                    max(4 * n if scope == "global" else n, 64)))
    return out


def emit(exe, path):
    p = subprocess.run([exe, "emit", path, "--lang", "cuda"],
                       capture_output=True, text=True,
                       env=dict(os.environ, TILEDISPATCH_RULES=""))
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    helpers = HELPER.findall(p.stdout)
    body = p.stdout
    for h in helpers:
        body = body.replace(h, "")
    incs = [l for l in body.splitlines() if l.startswith("#include")]
    body = "\n".join(l for l in body.splitlines()
                     if not l.startswith("#include"))
    return incs, helpers, body


def as_fallback(text):
    """The call forced to fallback (its config dropped: fallback reads
    none)."""
    lines = [l for l in text.splitlines()
             if not re.match(r"(dispatch|config)\s*:", l)]
    return "\n".join(lines) + "\ndispatch: fallback\n"


def last_block(text):
    """The last block of the call's grid, (x, y, z): a region that starts
    at an offset affine in the block ids is checked at its last tile, the
    one-thread kernel's `blockIdx` shadowed by it."""
    m = re.search(r"^launch:\s*\{(.*)\}", text, re.M)
    ext = dict(re.findall(r"blockIdx\.([xyz]):\s*(\d+)", m.group(1) if m else ""))
    if not ext:
        return None
    return tuple(int(ext.get(a, 1)) - 1 for a in "xyz")


def kernel(name, bufs, body, offsets, host=False, blk=None):
    """A one-thread kernel over the image: globals point into it, shared
    and register buffers are staged from it and written back (on the
    host: a function, shared arrays static)."""
    lines = [f"{'' if host else '__global__ '}void {name}(unsigned char *img) {{"]
    if blk is not None:
        lines.append("  const uint3 blockIdx = {%du, %du, %du};" % blk)
    for b, scope, dtype, n in bufs:
        t = CUDA_TYPES[dtype]
        off = offsets[b]
        if scope == "global":
            lines.append(f"  {t} *{b}_ptr = ({t} *)(img + {off});")
            continue
        if host:
            q = "alignas(16) static " if scope.startswith("shared") else \
                "alignas(16) "
        else:
            q = "__shared__ alignas(16) " if scope.startswith("shared") \
                else "alignas(16) "
        lines.append(f"  {q}{t} {b}_ptr[{n}];")
        lines.append(f"  memcpy((void *){b}_ptr, img + {off}, "
                     f"{n * BYTES[dtype]});")
    lines.append("  {")
    lines.append(body)
    lines.append("  }")
    for b, scope, dtype, n in bufs:
        if scope != "global":
            lines.append(f"  memcpy(img + {offsets[b]}, (const void *){b}_ptr, "
                         f"{n * BYTES[dtype]});")
    lines.append("}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or
                    "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--out")
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--host", action="store_true")
    args = ap.parse_args()
    cuda_inc = os.path.join(os.path.dirname(os.path.dirname(
        os.path.realpath(args.nvcc))), "include")
    if args.host and (shutil.which("g++") is None or
                      not os.path.exists(os.path.join(cuda_inc,
                                                      "cuda_fp16.h"))):
        print("SKIP: no g++ or no CUDA headers")
        return 77
    if not args.host and not os.path.exists(args.nvcc):
        print("SKIP: no nvcc")
        return 77
    out = args.out or tempfile.mkdtemp(prefix="copy_vec_gpu.")
    os.makedirs(out, exist_ok=True)
    run_ver = int(re.search(r"\d+", args.arch).group(0))
    cases = []
    for d in args.dirs:
        for f in sorted(os.listdir(d)):
            if not (f.startswith("copy") and f.endswith(".yaml")):
                continue
            path = os.path.join(d, f)
            expect, arch = header(path)
            text = open(path, encoding="utf-8").read()
            m = re.search(r"^dispatch:\s*(\w+)", text, re.M)
            variant = expect if expect in FORCED else (
                m.group(1) if m and m.group(1) in FORCED and expect is None
                else None)
            if variant is None:
                continue
            m = re.search(r"^arch:\s*(\S+)", text, re.M)
            arch = arch or (m.group(1) if m else args.arch)
            cases.append((f[:-5], path, text, arch))
    groups = {}
    failed = 0
    for name, path, text, arch in cases:
        ident = re.sub(r"\W", "_", name)
        ref = os.path.join(out, name + ".fallback.yaml")
        with open(ref, "w", encoding="utf-8") as fh:
            fh.write(as_fallback(text))
        try:
            inc_v, hel_v, body_v = emit(args.exe, path)
            inc_r, hel_r, body_r = emit(args.exe, ref)
        except RuntimeError as e:
            print(f"FAIL {name}: emit: {e}")
            failed += 1
            continue
        bufs = buffers(text)
        offsets, size = {}, 0
        for b, _, dtype, n in bufs:
            offsets[b] = size
            size += (n * BYTES[dtype] + 255) // 256 * 256
        g = groups.setdefault(arch, {"inc": set(), "hel": [], "k": [],
                                     "cases": []})
        g["inc"].update(inc_v + inc_r)
        for h in hel_v + hel_r:
            if h not in g["hel"]:
                g["hel"].append(h)
        blk = last_block(text)
        g["k"].append(kernel("k_vec_" + ident, bufs, body_v, offsets,
                             args.host, blk))
        g["k"].append(kernel("k_ref_" + ident, bufs, body_r, offsets,
                             args.host, blk))
        g["cases"].append((name, ident, size))
    if args.host:
        # One program for every arch: the host runs them all.
        merged = {"inc": set(), "hel": [], "k": [], "cases": []}
        for g in groups.values():
            merged["inc"] |= g["inc"]
            merged["hel"] += [h for h in g["hel"] if h not in merged["hel"]]
            merged["k"] += g["k"]
            merged["cases"] += g["cases"]
        groups = {"host": merged} if merged["cases"] else {}
    for arch, g in sorted(groups.items()):
        ver = 0 if args.host else int(re.search(r"\d+", arch).group(0))
        runs = not args.compile_only and ver <= run_ver
        rt = ["#include <cstdlib>", "#include <cuda_runtime_api.h>",
              "#define __forceinline__ inline", "#define __device__",
              "#define __host__"] if args.host else \
            ["#include <cuda_runtime.h>"]
        src = ["#include <cstdio>", "#include <cstring>"] + rt + \
            sorted(g["inc"]) + g["hel"] + g["k"]
        src.append("static int check(const char *name, void (*kv)(unsigned "
                   "char *), void (*kr)(unsigned char *), size_t n) {")
        src.append("""  unsigned char *h0 = (unsigned char *)malloc(n), *h1 = (unsigned char *)malloc(n), *h2 = (unsigned char *)malloc(n);
  for (size_t i = 0; i < n; i++) h0[i] = (unsigned char)(i * 151u + (i >> 8) * 37u + 11u);
  unsigned char *d;
  if (cudaMalloc(&d, n) != cudaSuccess) { printf("FAIL %s: cudaMalloc\\n", name); return 1; }
  cudaMemcpy(d, h0, n, cudaMemcpyHostToDevice);
  kv<<<1, 1>>>(d);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(h1, d, n, cudaMemcpyDeviceToHost);
  cudaMemcpy(d, h0, n, cudaMemcpyHostToDevice);
  kr<<<1, 1>>>(d);
  cudaError_t e2 = cudaDeviceSynchronize();
  cudaMemcpy(h2, d, n, cudaMemcpyDeviceToHost);
  cudaFree(d);
  int bad = 0;
  if (e != cudaSuccess || e2 != cudaSuccess) {
    printf("FAIL %s: %s / %s\\n", name, cudaGetErrorString(e), cudaGetErrorString(e2));
    bad = 1;
  } else if (memcmp(h2, h0, n) == 0) {
    printf("FAIL %s: the scalar copy changed nothing\\n", name);
    bad = 1;
  } else {
    for (size_t i = 0; i < n; i++)
      if (h1[i] != h2[i]) {
        printf("FAIL %s: byte %zu: vector copy 0x%02x, scalar copy 0x%02x\\n", name, i, h1[i], h2[i]);
        bad = 1;
        break;
      }
  }
  if (!bad) printf("PASS %s\\n", name);
  free(h0); free(h1); free(h2);
  return bad;
}""")
        if args.host:
            # check() without the CUDA runtime, on host memory.
            src[-1] = HOST_CHECK
        src.append("int main() {\n  int bad = 0;")
        for name, ident, size in g["cases"]:
            src.append(f'  bad += check("{name}", k_vec_{ident}, '
                       f'k_ref_{ident}, {size});')
        src.append('  printf("%d failed\\n", bad);\n  return bad != 0;\n}')
        cu = os.path.join(out, f"copy_vec_{arch}.cu")
        with open(cu, "w", encoding="utf-8") as fh:
            fh.write("\n".join(src) + "\n")
        exe = os.path.join(out, f"copy_vec_{arch}")
        cmd = ["g++", "-std=c++17", "-w", "-I", cuda_inc, "-x", "c++", "-o",
               exe, cu] if args.host else \
            [args.nvcc, f"-arch={arch}", "-o", exe, cu]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL build {arch}:\n{p.stderr}")
            failed += 1
            continue
        print(f"built {exe} ({len(g['cases'])} cases)")
        if not runs:
            print(f"not run: {arch} ({len(g['cases'])} cases, compile only)")
            continue
        p = subprocess.run([exe], capture_output=True, text=True)
        sys.stdout.write(p.stdout + p.stderr)
        if p.returncode != 0:
            failed += 1
    print("copy_vec_gpu:", "FAILED" if failed else "ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
