#!/usr/bin/env python3
"""The dsmem variant's emitted body on a GPU: a two-CTA cluster program per
call file.

`tiledispatch kernel` writes no cluster programs yet, so this harness
wraps the body `tiledispatch emit --lang cuda` prints for a dsmem call
(float16 tiles, strided or row-major layouts, peers 0 <-> 1) in a kernel
launched as clusters of two CTAs, with the protocol docs/copy_async.md
says the caller owns: every CTA fills its source tile with a pattern of
its rank and offset and its destination buffer with a sentinel, fences
the async proxy, initialises its barrier (count 1) before a cluster sync,
arms its own barrier with expect_tx(the region's bytes), issues the body
(the copy into its peer), waits on its barrier (bounded: a hang is a
failure), and then checks every destination element: the region's
elements hold the peer's source elements (by the two layouts' storage
offsets, computed here from the call file), every other element still
holds the sentinel. A cluster sync before exit keeps a CTA alive while its
peer copies into it.

usage: dsmem_gpu.py TILEDISPATCH OUTDIR CALL.yaml...   (writes OUTDIR/NAME.cu)
       dsmem_gpu.py --run TILEDISPATCH OUTDIR CALL.yaml...   (also builds
       with nvcc -arch=sm_90a and runs each; exit 1 on any failure)
       dsmem_gpu.py --run --mutant ...   (each program's mapa maps into the
       issuing CTA itself: every program must FAIL; exit 1 if one passes)
"""
import itertools
import re
import struct
import subprocess
import sys
from pathlib import Path

import yaml

class Unsupported(Exception):
    """A call this harness does not wrap (it says why)."""


# The value outside the copied elements: not a pattern value (patterns are
# 0..2047) and exactly a float16, or the untouched elements would compare
# unequal to it after the round trip (4095 rounds to 4096 in float16, which
# failed every tile with gaps on the H200).
SENTINEL = -1
assert struct.unpack("<e", struct.pack("<e", float(SENTINEL)))[0] == SENTINEL

# The mutant: every mapa maps into the issuing CTA (its own rank), so the
# copy lands in its own tile; the check must see its own pattern, not the
# peer's (a self-reference is not expanded again by the preprocessor).
MUTANT = ("#define td_mapa_shared_cluster(p, r) "
          "td_mapa_shared_cluster((p), td_rank())")


def strides(buf: dict) -> list:
    """The storage strides of a buffer: its layout `S[(a, b):(c, d)]` or
    `S[a, b]` (row-major), or row-major over its shape."""
    lay = buf.get("layout", "")
    m = re.fullmatch(r"S\[\((.*)\)\s*:\s*\((.*)\)\]", lay.replace(" ", ""))
    if m:
        return [int(x) for x in m.group(2).split(",") if x]
    if lay and not re.fullmatch(r"S\[[\d,\s]+\]", lay):
        raise Unsupported(f"layout {lay!r}: only strided layouts are checked here")
    shape = buf["shape"]
    out, acc = [], 1
    for e in reversed(shape):
        out.insert(0, acc)
        acc *= e
    return out


def region(text: str) -> tuple:
    """(buffer name, [(start, stop)...]) of "B[0:8, 0:128]"."""
    m = re.fullmatch(r"(\w+)\[(.*)\]", text.replace(" ", ""))
    dims = []
    for part in m.group(2).split(","):
        if ":" in part:
            a, b = part.split(":")
            dims.append((int(a), int(b)))
        else:
            dims.append((int(part), int(part) + 1))
    return m.group(1), dims


def offsets(buf: dict, dims: list) -> list:
    """Storage offsets of the region's elements, row-major over it."""
    st = strides(buf)
    return [sum(i * s for i, s in zip(idx, st))
            for idx in itertools.product(*[range(a, b) for a, b in dims])]


def span(buf: dict) -> int:
    return sum((e - 1) * s for e, s in zip(buf["shape"], strides(buf))) + 1


def split_emitted(text: str) -> tuple:
    """(prelude, body) of `tiledispatch emit --lang cuda`."""
    fns = re.findall(r"__forceinline__ __device__.*?\n}\n", text, re.S)
    decl = re.findall(r"#ifndef __CUDA_ARCH__\n.*?#endif\n", text, re.S)
    body = text
    for f in fns + decl:
        body = body.replace(f, "")
    incs = [ln for ln in body.splitlines() if ln.startswith("#include")]
    body = "\n".join(ln for ln in body.splitlines() if not ln.startswith("#include"))
    return "\n".join(incs) + "\n" + "".join(decl) + "".join(fns), body


def program(exe: str, path: Path, mutant: bool = False) -> str:
    spec = yaml.safe_load(path.read_text())
    bufs = spec["buffers"]
    sname, sdims = region(spec["src"])
    dname, ddims = region(spec["dst"])
    mb = re.fullmatch(r"(\w+)\[(\d+)\]", spec["config"]["mbar"].replace(" ", ""))
    mname, midx = mb.group(1), int(mb.group(2))
    for n in (sname, dname):
        if bufs[n]["dtype"] != "float16":
            raise Unsupported("float16 tiles only")
    if sname == dname:
        raise Unsupported("one buffer holds both tiles")
    so, do = offsets(bufs[sname], sdims), offsets(bufs[dname], ddims)
    ns, nd, nm = span(bufs[sname]), span(bufs[dname]), bufs[mname]["shape"][0]
    p = subprocess.run([exe, "emit", str(path), "--lang", "cuda"],
                       capture_output=True, text=True, check=True)
    prelude, body = split_emitted(p.stdout)
    cl = spec["launch"]["cluster"]
    if list(cl) + [1] * (3 - len(cl)) != [2, 1, 1]:
        raise Unsupported("clusters of 2 only")
    arr = lambda xs: ", ".join(map(str, xs))
    return f"""// {path.name}: the dsmem body in a two-CTA cluster (tests/cuda/dsmem_gpu.py)
#include <cstdio>
#include <cstdint>
#include <cuda_fp16.h>
{prelude}
__device__ const int td_src_off[{len(so)}] = {{{arr(so)}}};
__device__ const int td_dst_off[{len(do)}] = {{{arr(do)}}};

__device__ __forceinline__ unsigned td_rank() {{
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}}
__device__ __forceinline__ void td_sync_cluster() {{
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}}

{MUTANT if mutant else ""}
extern "C" __global__ void __cluster_dims__(2, 1, 1) td_dsmem(int *bad) {{
  __shared__ alignas(128) __half {sname}_ptr[{ns}];
  __shared__ alignas(128) __half {dname}_ptr[{nd}];
  __shared__ alignas(8) unsigned long long {mname}_ptr[{nm}];
  const unsigned rank = td_rank(), peer = rank ^ 1u;
  for (int i = threadIdx.x; i < {ns}; i += blockDim.x)
    {sname}_ptr[i] = __float2half((float)((rank * 1000u + i) % 2048u));
  for (int i = threadIdx.x; i < {nd}; i += blockDim.x)
    {dname}_ptr[i] = __float2half({SENTINEL}.0f);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (threadIdx.x == 0) {{
    unsigned a = (unsigned)__cvta_generic_to_shared(&{mname}_ptr[{midx}]);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(a) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }}
  __syncthreads();
  td_sync_cluster();
  if (threadIdx.x == 0) {{
    unsigned a = (unsigned)__cvta_generic_to_shared(&{mname}_ptr[{midx}]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(a), "r"({len(so) * 2}) : "memory");
    {{
{body}
    }}
    unsigned done = 0;
    for (long spin = 0; !done && spin < (1L << 26); spin++)
      asm volatile("{{\\n .reg .pred p;\\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\\n"
                   " selp.u32 %0, 1, 0, p;\\n}}" : "=r"(done) : "r"(a) : "memory");
    if (!done) atomicAdd(bad, 1000000);
  }}
  __syncthreads();
  for (int k = threadIdx.x; k < {len(so)}; k += blockDim.x) {{
    float want = (float)((peer * 1000u + td_src_off[k]) % 2048u);
    if (__half2float({dname}_ptr[td_dst_off[k]]) != want) atomicAdd(bad, 1);
  }}
  for (int i = threadIdx.x; i < {nd}; i += blockDim.x) {{
    bool in = false;
    for (int k = 0; k < {len(do)} && !in; k++) in = td_dst_off[k] == i;
    if (!in && __half2float({dname}_ptr[i]) != {SENTINEL}.0f) atomicAdd(bad, 1);
  }}
  td_sync_cluster();
}}

int main() {{
  int *bad, h = -1;
  if (cudaMalloc(&bad, sizeof(int)) != cudaSuccess) {{ printf("SKIP no device\\n"); return 77; }}
  cudaMemset(bad, 0, sizeof(int));
  td_dsmem<<<{spec["launch"].get("blockIdx.x", 2)}, {spec["launch"].get("threadIdx.x", 128)}>>>(bad);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(&h, bad, sizeof(int), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {{ printf("FAIL {path.stem}: %s\\n", cudaGetErrorString(e)); return 1; }}
  if (h >= 1000000) {{ printf("FAIL {path.stem}: a barrier never completed (%d wrong elements besides)\\n", h - 1000000); return 1; }}
  if (h != 0) {{ printf("FAIL {path.stem}: %d wrong elements\\n", h); return 1; }}
  printf("PASS {path.stem}: {len(so)} elements, %d CTAs\\n", {spec["launch"].get("blockIdx.x", 2)});
  return 0;
}}
"""


def main(argv: list) -> int:
    run = argv[:1] == ["--run"]
    if run:
        argv = argv[1:]
    mutant = argv[:1] == ["--mutant"]
    if mutant:
        argv = argv[1:]
    if len(argv) < 3:
        print(__doc__)
        return 2
    exe, out = argv[0], Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for call in map(Path, argv[2:]):
        cu = out / (call.stem + ".cu")
        try:
            cu.write_text(program(exe, call, mutant))
        except Unsupported as e:
            print(f"skip {call.stem}: {e}")
            continue
        if not run:
            print(f"wrote {cu}")
            continue
        binary = out / call.stem
        p = subprocess.run(["nvcc", "-arch=sm_90a", "-o", str(binary), str(cu)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {call.stem}: nvcc\n{p.stderr}")
            failed += 1
            continue
        try:
            r = subprocess.run([str(binary)], capture_output=True, text=True, timeout=20)
            line = r.stdout.strip() or f"FAIL {call.stem}: exit {r.returncode}"
            if mutant:
                # The mutant must be caught: a FAIL is the good outcome.
                print(("ok (mutant caught) " if r.returncode == 1 else
                       "MUTANT SURVIVED ") + line)
                failed += r.returncode != 1
            else:
                print(line)
                failed += r.returncode != 0
        except subprocess.TimeoutExpired:
            print(f"FAIL {call.stem}: timed out")
            failed += not mutant
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
