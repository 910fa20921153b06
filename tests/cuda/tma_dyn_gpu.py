#!/usr/bin/env python3
"""The TMA variants' emitted bodies on a GPU: dynamic coordinates and
multicast, one program per call file.

`tiledispatch kernel` writes TMA programs, but runs each declared scalar
at one value and writes none for a cluster launch (a multicast); this
harness covers those: it wraps the body `tiledispatch emit --lang cuda` prints for a tma_auto call in a
kernel with the protocol docs/copy_async.md says the caller owns, and
encodes the tensor map on the host from the `# host:` encode line of
`emit --lang tirx` (cuTensorMapEncodeTiled with the same numbers).  The
global buffer holds a byte pattern; every run (the declared scalars at
their lowest and highest values, every block of the launch) checks the
whole tile:

- a load: thread 0 initialises the barriers (count 1), the CTAs of a
  cluster sync, each CTA arms the barrier the call names with
  expect_tx(the tile's bytes), thread 0 issues the body (in a multicast,
  CTA rank 0 alone), each CTA the mask names waits on its barrier (bounded:
  a hang is a failure) and copies its shared tile out; the host compares
  each element at its shared offset (the layout's strides, then its
  swizzle) with the global element the region names for that block and
  those scalar values;
- a store: the CTA fills its tile with a pattern of its block, fences the
  async proxy, thread 0 issues the body, commits and waits on the bulk
  group; the host checks every global element (the tiles of all blocks,
  the rest untouched).

The mutant drops the coordinates' non-constant parts (the scalars and
block ids read 0 in the body: what a plan of constant starts would
issue; a constant multicast mask becomes 1, the issuing CTA alone);
every mutant must FAIL.

usage: tma_dyn_gpu.py TILEDISPATCH OUTDIR CALL.yaml...
  writes OUTDIR/good/NAME.cu, OUTDIR/mutant/NAME.cu and OUTDIR/run.sh;
  on an sm_90 machine `bash OUTDIR/run.sh OUT` builds (nvcc -gencode
  arch=compute_90a,code=sm_90a -lcuda) and runs each program, writes
  OUT/tma_dyn.txt and exits 0 when every program passed and every mutant
  failed.
"""
import math
import re
import subprocess
import sys
from pathlib import Path

import yaml

CTYPE = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}
BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1, "uint8": 1,
         "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "uint64": 8}
CU_DTYPE = {"uint8": "UINT8", "int8": "UINT8", "uint16": "UINT16",
            "uint32": "UINT32", "uint64": "UINT64", "float16": "FLOAT16",
            "bfloat16": "BFLOAT16", "float32": "FLOAT32", "int32": "INT32"}


class Unsupported(Exception):
    """A call this harness does not wrap (it says why)."""


def layout_of(buf: dict):
    """(extents, strides, swizzle (P, L, A) or None) of a shared buffer:
    row-major without a layout."""
    lay = (buf.get("layout") or "").replace(" ", "")
    swz = None
    m = re.fullmatch(r"ComposeLayout\((\d+),(\d+),(\d+),(.*)\)", lay)
    if m:
        swz = tuple(int(m.group(i)) for i in (1, 2, 3))
        lay = m.group(4)
    m = re.fullmatch(r"(?:TileLayout\()?S\[\((.*)\):\((.*)\)\]\)?", lay)
    if m:
        return ([int(x) for x in m.group(1).split(",")],
                [int(x) for x in m.group(2).split(",")], swz)
    if lay:
        raise Unsupported(f"layout {lay!r}")
    ext = list(buf["shape"])
    st, acc = [], 1
    for e in reversed(ext):
        st.insert(0, acc)
        acc *= e
    return ext, st, swz


def region(text: str, buf: dict):
    """[(start C expression, extent)] per dimension of 'B[a:b, c]' or 'B'."""
    m = re.fullmatch(r"\s*(\w+)\s*(?:\[(.*)\])?\s*", text)
    if not m.group(2):
        return [("0", e) for e in buf["shape"]]
    out = []
    for part in m.group(2).split(","):
        if ":" in part:
            lo, hi = part.split(":")
            ext = eval(f"({hi}) - ({lo})", {}, _Sym())  # noqa: S307
            out.append((lo.strip(), int(ext)))
        else:
            out.append((part.strip(), 1))
    return out


class _Sym(dict):
    """Names evaluate to 0 and cancel: the extent of a slice is constant."""

    def __missing__(self, key):
        return 0


def cexpr(e: str) -> str:
    return re.sub(r"\bb([xyz])\b", r"(int)blockIdx.\1", e)


def encode_line(tiledispatch: str, path: Path) -> dict:
    p = subprocess.run([tiledispatch, "emit", str(path), "--lang", "tirx"],
                       capture_output=True, text=True, check=True)
    m = re.search(r"T\.tensormap_encode_tiled\((\w+), T\.handle_add_byte_offset\("
                  r"\w+\.data, (\d+)\), ([\d, ]+), descriptor_dtype=\"(\w+)\", rank=(\d+), "
                  r"interleave=(\d+), swizzle=(\d+), l2_promotion=(\d+), oob_fill=(\d+)",
                  p.stdout)
    if not m or p.stdout.count("tensormap_encode_tiled") != 1:
        raise Unsupported("not one tensor map")
    nums = [int(x) for x in m.group(3).split(",")]
    r = int(m.group(5))
    return {"name": m.group(1), "offset": int(m.group(2)), "dims": nums[:r],
            "strides": nums[r:2 * r - 1], "box": nums[2 * r - 1:3 * r - 1],
            "estr": nums[3 * r - 1:4 * r - 1], "dtype": m.group(4), "rank": r,
            "swizzle": int(m.group(7)), "l2": int(m.group(8)),
            "oob": int(m.group(9))}


def program(tiledispatch: str, path: Path, mutant: bool) -> str:
    spec = yaml.safe_load(path.read_text())
    if spec.get("op") != "copy_async":
        raise Unsupported("not copy_async")
    if (spec.get("arch") or "sm_90a") != "sm_90a":
        raise Unsupported(f"arch {spec.get('arch')}: the programs run on sm_90a")
    if "use_tma_reduce" in (spec.get("config") or {}):
        raise Unsupported("a reduction (the check reads a plain store)")
    bufs = spec["buffers"]
    g2s = bufs[re.match(r"\s*(\w+)", str(spec["src"])).group(1)]["scope"] == "global"
    gname = re.match(r"\s*(\w+)", str(spec["src" if g2s else "dst"])).group(1)
    sname = re.match(r"\s*(\w+)", str(spec["dst" if g2s else "src"])).group(1)
    gb, sb = bufs[gname], bufs[sname]
    esz = BYTES[gb["dtype"]]
    gr = region(str(spec["src" if g2s else "dst"]), gb)
    sr = region(str(spec["dst" if g2s else "src"]), sb)
    gx = [e for _, e in gr if e != 1]
    sx = [e for _, e in sr if e != 1]
    if gx != sx:
        raise Unsupported("regions of different squeezed shapes")
    n = math.prod(e for _, e in gr)
    ext, st, swz = layout_of(sb)
    enc = encode_line(tiledispatch, path)
    emitted = subprocess.run([tiledispatch, "emit", str(path), "--lang", "cuda"],
                             capture_output=True, text=True, check=True).stdout
    helpers = emitted[:emitted.rindex("}\n") + 2]
    body = "\n".join(ln for ln in emitted[len(helpers):].splitlines()
                     if ln.strip() and not ln.startswith("//"))
    scalars = spec.get("scalars") or {}
    launch = spec.get("launch") or {}
    grid = [launch.get(f"blockIdx.{a}", 1) for a in "xyz"]
    cluster = launch.get("cluster")
    cfg = spec.get("config") or {}
    mask = cfg.get("cta_mask", 0)
    mc = mask not in (0, None)
    original = body
    if mutant:
        for name in scalars:
            body = re.sub(rf"\b{name}\b", "0", body)
        body = re.sub(r"\(int\)blockIdx\.[xyz]", "0", body)
        if body == original and mc:
            # A constant multicast: the mask names the issuing CTA alone,
            # so the others' barriers never complete.
            body = re.sub(r"\(uint16_t\)\w+", "(uint16_t)1", body)
        if body == original:
            raise Unsupported("nothing dynamic to drop")
    threads = launch.get("threadIdx.x", 128)
    # The scalar values a run passes: each at its lowest and highest.
    names = list(scalars)
    ranges = [(scalars[s] or {}).get("range", [0, 1]) for s in names]
    combos = [[]]
    for lo, hi in ranges:
        combos = [c + [v] for c in combos for v in sorted({lo, hi - 1})]
    sdecl = ", ".join(f"int {s}" for s in names)
    sargs = "".join(f", {s}" for s in names)
    mbar = None
    if g2s:
        mm = re.fullmatch(r"\s*(\w+)\s*\[(.*)\]\s*", str(cfg["mbar"]))
        mbar = (mm.group(1), mm.group(2), bufs[mm.group(1)]["shape"][0])
    snelem = math.prod(sb["shape"])
    tile_bytes = snelem * esz
    if tile_bytes > 40 * 1024:
        raise Unsupported(f"a tile of {tile_bytes} bytes (static shared memory)")
    gbytes = math.prod(gb["shape"]) * esz
    nblocks = math.prod(grid)
    gstart = " ".join(f"int gs{d} = {cexpr(s).replace('(int)blockIdx.', 'b')};"
                      for d, (s, _) in enumerate(gr))
    sstart = " ".join(f"int ss{d} = {s};" for d, (s, _) in enumerate(sr))
    gext = ", ".join(str(e) for _, e in gr)
    sext_r = ", ".join(str(e) for _, e in sr)
    gshape = ", ".join(str(e) for e in gb["shape"])
    sshape = ", ".join(str(e) for e in sb["shape"])
    lext = ", ".join(map(str, ext))
    lst = ", ".join(map(str, st))
    swzc = (f"o ^= ((o >> ({swz[0]} + {swz[2]})) & ((1 << {swz[1]}) - 1)) << {swz[0]};"
            if swz else "")
    mask_c = str(mask) if isinstance(mask, int) else cexpr(str(mask))
    csync = ('asm volatile("barrier.cluster.arrive.release.aligned; '
             'barrier.cluster.wait.acquire.aligned;" ::: "memory");')
    untouched = "" if g2s else (
        f"for (long i = 0; i < {gbytes}; ++i) if (!written[i] && A[i] != init[i] "
        f'&& bad++ < 5) printf("  {path.stem}: byte %ld outside the tiles changed\\n", i);')
    if g2s:
        kernel_body = f"""
  __shared__ alignas(8) unsigned long long {mbar[0]}_ptr[{mbar[2]}];
  unsigned rank = 0;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  (void)rank;
  if (threadIdx.x == 0) {{
    for (int i = 0; i < {mbar[2]}; ++i)
      asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"((unsigned)__cvta_generic_to_shared(&{mbar[0]}_ptr[i])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }}
  __syncthreads();
  {csync if cluster else ""}
  unsigned long long *bar = &{mbar[0]}_ptr[{cexpr(mbar[1])}];
  unsigned mine = {"(unsigned)(" + mask_c + ") >> rank & 1u" if mc else "1u"};
  if (threadIdx.x == 0 && mine)
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], {tile_bytes};" :: "r"((unsigned)__cvta_generic_to_shared(bar)) : "memory");
  {csync if mc else ""}
  if (threadIdx.x == 0 && {"rank == 0" if mc else "1"}) {{
{body}
  }}
  if (mine) {{
    unsigned done = 0;
    long long t0 = clock64();  /* about 2 s at most: a hang fails */
    while (!done && clock64() - t0 < 4000000000LL)
      asm volatile("{{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }}"
                   : "=r"(done) : "r"((unsigned)__cvta_generic_to_shared(bar)) : "memory");
    if (!done && threadIdx.x == 0) atomicAdd(hung, 1u);
  }}
  __syncthreads();
  unsigned char *o = out + (size_t)blk * {tile_bytes};
  const unsigned char *s = (const unsigned char *){sname}_ptr;
  for (int i = threadIdx.x; i < {tile_bytes}; i += blockDim.x) o[i] = mine ? s[i] : 0;
  {csync if cluster else ""}
"""
    else:
        kernel_body = f"""
  unsigned char *s = (unsigned char *){sname}_ptr;
  for (int i = threadIdx.x; i < {tile_bytes}; i += blockDim.x) s[i] = (unsigned char)(i * 13 + blk * 101 + 7);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {{
{body}
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }}
  __syncthreads();
"""
    cu_dt = CU_DTYPE[enc["dtype"]]
    swz_names = ["NONE", "32B", "64B", "128B"]
    l2_names = ["NONE", "L2_64B", "L2_128B", "L2_256B"]
    r = enc["rank"]
    return f"""// {path.name}{' (mutant: the coordinates without their block ids and scalars)' if mutant else ''}
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
{helpers}
#ifndef __CUDA_ARCH__
void td_emu_mbar_init(uint64_t *, unsigned) {{}}
void td_emu_mbar_arrive_expect_tx(uint64_t *, unsigned) {{}}
bool td_emu_mbar_try_wait(uint64_t *, unsigned) {{ return true; }}
void td_emu_tma_load(void *, const CUtensorMap *, int, const int *, uint64_t *) {{}}
void td_emu_tma_store(const CUtensorMap *, int, const int *, const void *, int) {{}}
#endif

__global__ void __launch_bounds__({threads}) kernel(unsigned char *out, unsigned *hung{", " + sdecl if sdecl else ""},
    const __grid_constant__ CUtensorMap {enc['name']}) {{
  __shared__ alignas(1024) {CTYPE[esz]} {sname}_ptr[{snelem}];
  int blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  (void)out; (void)hung;
{kernel_body}
}}

static void unravel(long i, const long *ext, int n, long *idx) {{
  for (int d = n - 1; d >= 0; --d) {{ idx[d] = i % ext[d]; i /= ext[d]; }}
}}

int main() {{
  const long gshape[] = {{{gshape}}}, sshape[] = {{{sshape}}};
  const long gext[] = {{{gext}}}, sext[] = {{{sext_r}}};
  const long lext[] = {{{lext}}}, lst[] = {{{lst}}};
  const int gn = {len(gb['shape'])}, sn = {len(sb['shape'])}, ln = {len(ext)};
  unsigned char *dA, *dOut; unsigned *dHung;
  cudaMalloc(&dA, {gbytes}); cudaMalloc(&dOut, (size_t){nblocks} * {tile_bytes}); cudaMalloc(&dHung, 4);
  std::vector<unsigned char> A({gbytes}), out((size_t){nblocks} * {tile_bytes}), init({gbytes});
  for (long i = 0; i < {gbytes}; ++i) init[i] = (unsigned char)(i * 131 + (i >> 8) * 7 + 1);
  CUtensorMap map;
  const cuuint64_t dims[{r}] = {{{", ".join(f"{x}u" for x in enc['dims'])}}};
  const cuuint64_t strides[{max(r - 1, 1)}] = {{{", ".join(f"{x}u" for x in enc['strides']) or "0u"}}};
  const cuuint32_t box[{r}] = {{{", ".join(f"{x}u" for x in enc['box'])}}};
  const cuuint32_t estr[{r}] = {{{", ".join(f"{x}u" for x in enc['estr'])}}};
  CUresult cr = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_{cu_dt}, {r}, dA + {enc['offset']},
      dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_{swz_names[enc['swizzle']]},
      CU_TENSOR_MAP_L2_PROMOTION_{l2_names[enc['l2']]}, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (cr != CUDA_SUCCESS) {{ printf("FAIL {path.stem}: cuTensorMapEncodeTiled %d\\n", (int)cr); return 1; }}
  const int combos[][{max(len(names), 1)}] = {{{", ".join("{" + (", ".join(map(str, c)) or "0") + "}" for c in combos)}}};
  long bad = 0, checked = 0;
  for (unsigned ci = 0; ci < sizeof combos / sizeof combos[0]; ++ci) {{
    {" ".join(f"int {s} = combos[ci][{i}];" for i, s in enumerate(names))}
    cudaMemcpy(dA, init.data(), {gbytes}, cudaMemcpyHostToDevice);
    cudaMemset(dOut, 0, (size_t){nblocks} * {tile_bytes}); cudaMemset(dHung, 0, 4);
    cudaLaunchConfig_t lc = {{}};
    lc.gridDim = dim3({grid[0]}, {grid[1]}, {grid[2]}); lc.blockDim = dim3({threads});
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = {(cluster or [1])[0]}; at[0].val.clusterDim.y = {(cluster or [1, 1])[1] if cluster and len(cluster) > 1 else 1}; at[0].val.clusterDim.z = {(cluster[2] if cluster and len(cluster) > 2 else 1)};
    lc.attrs = at; lc.numAttrs = {1 if cluster else 0};
    cudaError_t e = cudaLaunchKernelEx(&lc, kernel, dOut, dHung{sargs}, map);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {{ printf("FAIL {path.stem}: %s\\n", cudaGetErrorString(e)); return 1; }}
    unsigned hung = 0;
    cudaMemcpy(&hung, dHung, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(A.data(), dA, {gbytes}, cudaMemcpyDeviceToHost);
    cudaMemcpy(out.data(), dOut, out.size(), cudaMemcpyDeviceToHost);
    if (hung) {{ printf("FAIL {path.stem}: %u barrier waits timed out\\n", hung); return 1; }}
    std::vector<char> written({gbytes}, 0);
    for (int bz = 0; bz < {grid[2]}; ++bz) for (int by = 0; by < {grid[1]}; ++by) for (int bx = 0; bx < {grid[0]}; ++bx) {{
      (void)bx; (void)by; (void)bz;
      long blk = bx + {grid[0]}L * (by + {grid[1]}L * bz);
      {"unsigned rank = (unsigned)(blk % " + str(math.prod(cluster or [1])) + "); unsigned mine = (unsigned)(" + mask_c + ") >> rank & 1u; if (!mine) continue;" if mc else ""}
      {gstart} {sstart}
      long gs[] = {{{", ".join(f"gs{d}" for d in range(len(gr)))}}}, ss[] = {{{", ".join(f"ss{d}" for d in range(len(sr)))}}};
      for (long i = 0; i < {n}; ++i) {{
        long gi[8], si[8], li[16];
        unravel(i, gext, gn, gi); unravel(i, sext, sn, si);
        long go = 0, f = 0;
        for (int d = 0; d < gn; ++d) go = go * gshape[d] + gs[d] + gi[d];
        for (int d = 0; d < sn; ++d) f = f * sshape[d] + ss[d] + si[d];
        unravel(f, lext, ln, li);
        long o = 0;
        for (int d = 0; d < ln; ++d) o += li[d] * lst[d];
        {swzc}
        for (int b = 0; b < {esz}; ++b) {{
          ++checked;
          {"unsigned char want = init[go * " + str(esz) + " + b], got = out[blk * " + str(tile_bytes) + " + o * " + str(esz) + " + b];" if g2s else "unsigned char want = (unsigned char)((o * " + str(esz) + " + b) * 13 + blk * 101 + 7), got = A[go * " + str(esz) + " + b]; written[go * " + str(esz) + " + b] = 1;"}
          if (want != got && bad++ < 5)
            printf("  {path.stem}: block %ld element %ld byte %d: want %u got %u\\n", blk, i, b, want, got);
        }}
      }}
    }}
    {untouched}
  }}
  printf("%s {path.stem}: %ld bytes checked, %ld wrong\\n", bad ? "FAIL" : "PASS", checked, bad);
  return bad != 0;
}}
"""


RUN_SH = """#!/usr/bin/env bash
# Builds and runs the TMA programs of tests/cuda/tma_dyn_gpu.py on an sm_90
# GPU: every good program must PASS, every mutant FAIL.
#   bash run.sh OUT
set -u
dir=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out/bin"
status=0
: > "$out/tma_dyn.txt"
for kind in good mutant; do
  for cu in "$dir/$kind"/*.cu; do
    name=$(basename "$cu" .cu)
    bin="$out/bin/$kind-$name"
    if ! nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -o "$bin" "$cu" -lcuda \\
         2> "$out/bin/$kind-$name.nvcc.txt"; then
      echo "FAIL $kind $name: nvcc (bin/$kind-$name.nvcc.txt)" | tee -a "$out/tma_dyn.txt"
      status=1
      continue
    fi
    res=$(timeout 60 "$bin" 2>&1); rc=$?
    if [ "$kind" = good ]; then
      echo "$res" | tee -a "$out/tma_dyn.txt"
      [ $rc -eq 0 ] || status=1
    elif [ $rc -ne 0 ]; then
      echo "ok (mutant caught) $name" | tee -a "$out/tma_dyn.txt"
    else
      echo "MUTANT SURVIVED $name: $res" | tee -a "$out/tma_dyn.txt"
      status=1
    fi
  done
done
echo "exit $status" | tee -a "$out/tma_dyn.txt"
exit $status
"""


def main(argv: list) -> int:
    if len(argv) < 4:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    exe, outdir = argv[1], Path(argv[2])
    (outdir / "good").mkdir(parents=True, exist_ok=True)
    (outdir / "mutant").mkdir(parents=True, exist_ok=True)
    for c in argv[3:]:
        p = Path(c)
        try:
            good = program(exe, p, False)
        except Unsupported as e:
            print(f"skip {p.stem}: {e}")
            continue
        (outdir / "good" / f"{p.stem}.cu").write_text(good)
        try:
            (outdir / "mutant" / f"{p.stem}.cu").write_text(program(exe, p, True))
        except Unsupported as e:
            print(f"no mutant for {p.stem}: {e}")
        print(f"wrote {p.stem}")
    (outdir / "run.sh").write_text(RUN_SH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
