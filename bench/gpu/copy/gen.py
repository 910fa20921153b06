#!/usr/bin/env python3
"""Generates both sides of the copy benchmark (bench_copy.cu).

    PYTHON_WITH_TVM bench/gpu/copy/gen.py TILEDISPATCH OUTDIR

(PYTHON_WITH_TVM: a Python with the released TVM 0.27 installed, e.g.
/work/main/build-python/venv/bin/python; the GPU machine has no TVM, so
the output is committed under bench/gpu/copy/gen/ and travels with the
tree.)

Every case of GSG and LDST below is one tile per CTA of 128 threads, in two
forms written by two code generators from the same calls:

- ours: for each copy call, `TILEDISPATCH emit CALL --lang cuda`, its body
  pasted unchanged into a __global__ kernel of OUTDIR/ours_gen.cu (the
  preludes merged at file scope, as bench/gpu/gen.py does);
- TVM's: the same calls written as a TVMScript kernel (Tx.cta.copy),
  compiled by tvm.compile(..., tir_pipeline="tirx") for sm_90a, and the
  kernel source TVM generates written to OUTDIR/tvm_NAME.cu unchanged,
  with a host launcher appended.

Two kinds of case:

- gsg: A (global) -> Sm (shared) -> B (global), two copies and a CTA
  barrier between them, no compute; the tile of CTA b is rows
  [b*R, (b+1)*R) of A and B.  Both get it through the region
  A[bx*R:(bx+1)*R, :] of the whole array, the kernel parameter A_ptr
  itself: ours adds blockIdx.x * R*C inside its 32-bit index, as TVM's
  does.
- ldst: A -> Sm once, then ITERS round trips shared -> registers -> shared
  through ldmatrix / stmatrix (each iteration Sm -> Rg -> Sm2 -> Rg -> Sm,
  a __syncwarp after each store), then Sm -> B.  The register layout is the mma
  fragment of TVM's test_ld_stmatrix.py; both sides get the same syncs.

OUTDIR/cases.h lists the cases for the harness: X(NAME, KIND, ELEM_BYTES,
TILE_ELEMS, THREADS, TILES, ITERS, SHARED LAYOUT).  Nothing in OUTDIR is
written by hand; TVM's kernels embed the TVMScript they come from in their
opening comment.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from gen import split_emit  # noqa: E402  (bench/gpu/gen.py)

THREADS = 128
CTYPE = {"float16": "half", "float32": "float",
         "float8_e4m3fn": "__nv_fp8_e4m3"}
BYTES = {"float16": 2, "float32": 4, "float8_e4m3fn": 1}

# name, dtype, rows, cols, swizzle per_element (None: row-major), tiles.
# Tiles: 512 MiB read and 512 MiB written per launch (1 GiB moved).
GSG = [
    ("f16_128x64_swz", "float16", 128, 64, 3, 32768),
    ("f32_64x128_swz", "float32", 64, 128, 2, 16384),
    ("f8_128x128_swz", "float8_e4m3fn", 128, 128, 4, 32768),
    ("f16_128x64_rm", "float16", 128, 64, None, 32768),
    ("f32_64x128_rm", "float32", 64, 128, None, 16384),
    ("f8_128x128_rm", "float8_e4m3fn", 128, 128, None, 32768),
]

# name, shared strides of the [4, 8, 4, 4, 2] float16 tile (TVM's
# test_ld_stmatrix.py, x4: N the plain fragment, T the transposed one),
# swizzled or not, tiles, round trips.
LDST_SHAPE = (4, 8, 4, 4, 2)
LDST_REG = "S[(4, 8, 4, 4, 2) : (32@tx, 4@tx, 1@tx, 2, 1)]"
LDST = [
    ("ldst_N_x4_swz", (256, 32, 2, 8, 1), True, 16896, 64),
    ("ldst_T_x4_swz", (256, 1, 64, 8, 32), True, 16896, 64),
    ("ldst_N_x4_rm", (256, 32, 2, 8, 1), False, 16896, 64),
]


def die(msg):
    sys.stderr.write("copy/gen.py: error: %s\n" % msg)
    sys.exit(2)


def run(tool, args):
    p = subprocess.run([tool] + args, capture_output=True, text=True)
    if p.returncode != 0:
        die("%s %s failed (exit %d):\n%s" % (tool, " ".join(args),
                                             p.returncode, p.stderr))
    return p.stdout


def dims(shape):
    return "(%s)" % ", ".join(map(str, shape))


def regions(shape):
    return ", ".join("0:%d" % d for d in shape)


def smem_layout(shape, strides, per_element):
    tile = "S[%s : %s]" % (dims(shape), dims(strides))
    if per_element is None:
        return tile
    return "ComposeLayout(%d, 3, 3, TileLayout(%s))" % (per_element, tile)


def call_yaml(dtype, buffers, dst, src, tiles=None):
    launch = "threadIdx.x: %d" % THREADS
    if tiles is not None:
        launch += ", blockIdx.x: %d" % tiles
    lines = ["op: copy", "target: cuda", "arch: sm_90a", "scope: cta",
             "launch: {%s}" % launch, "buffers:"]
    for name, scope, layout in buffers:
        shape = "[%s]" % ", ".join(map(str, layout[0]))
        lay = ', layout: "%s"' % layout[1] if layout[1] else ""
        lines.append("  %s: {scope: %s, dtype: %s, shape: %s%s}"
                     % (name, scope, dtype, shape, lay))
    lines += ['dst: "%s"' % dst, 'src: "%s"' % src]
    return "\n".join(lines) + "\n"


class Ours:
    """The emitted bodies, merged into one translation unit."""

    def __init__(self, tool, tmp):
        self.tool, self.tmp = tool, tmp
        self.preludes, self.funcs, self.n = [], [], 0

    def body(self, text, expect):
        self.n += 1
        path = os.path.join(self.tmp, "call%d.yaml" % self.n)
        with open(path, "w") as f:
            f.write(text)
        variant = run(self.tool, ["dispatch", path]).strip()
        if variant != expect:
            die("expected variant %s, got %s for\n%s" % (expect, variant,
                                                         text))
        pre, body = split_emit(run(self.tool, ["emit", path, "--lang",
                                               "cuda"]))
        for block in pre.split("\n\n"):
            parts = (block.splitlines(keepends=True)
                     if block.startswith("#") else [block])
            for part in parts:
                part = part.strip("\n") + "\n"
                if part.strip() and part not in self.preludes:
                    self.preludes.append(part)
        # each body in its own block: the emitted names (tmp, tid, f)
        # repeat from one call to the next
        return ("  /* tiledispatch emit (%s) */\n  {\n%s  }\n"
                % (variant, "".join("    " + l if l.strip() else l
                                    for l in body.splitlines(True))))


# blocks per SM at full occupancy, for the harness's report
OCCUPANCY = """
extern "C" int %s_blocks_per_sm_%s(void)
{
  int n = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, %s, %d, 0);
  return n;
}

"""


def ours_gsg(o, name, dtype, rows, cols, per_element, tiles):
    ct = CTYPE[dtype]
    g = ((tiles * rows, cols), None)
    s = ((rows, cols), smem_layout((rows, cols), (cols, 1), per_element))
    full = "[%s]" % regions((rows, cols))
    tile = "[bx * %d:(bx + 1) * %d, 0:%d]" % (rows, rows, cols)
    g2s = o.body(call_yaml(dtype, [("A", "global", g), ("Sm", "shared", s)],
                           "Sm" + full, "A" + tile, tiles), "vec_auto")
    s2g = o.body(call_yaml(dtype, [("B", "global", g), ("Sm", "shared", s)],
                           "B" + tile, "Sm" + full, tiles), "vec_auto")
    n = rows * cols
    return """__global__ void __launch_bounds__(%d) ours_%s(%s *__restrict__ A_ptr, %s *__restrict__ B_ptr)
{
  __shared__ __align__(128) %s Sm_ptr[%d];
%s  __syncthreads();
%s}

extern "C" void ours_launch_%s(const void *A, void *B, cudaStream_t s)
{
  ours_%s<<<%d, %d, 0, s>>>((%s *)A, (%s *)B);
}

""" % (THREADS, name, ct, ct, ct, n, g2s, s2g,
       name, name, tiles, THREADS, ct, ct) + OCCUPANCY % (
           "ours", name, "ours_" + name, THREADS)


def ours_ldst(o, name, strides, swz, tiles, iters):
    dtype, ct, n = "float16", "half", 1
    for d in LDST_SHAPE:
        n *= d
    d0 = LDST_SHAPE[0]
    g = ((tiles * d0,) + LDST_SHAPE[1:], None)
    s = (LDST_SHAPE, smem_layout(LDST_SHAPE, strides, 3 if swz else None))
    r = (LDST_SHAPE, LDST_REG)
    full = "[%s]" % regions(LDST_SHAPE)
    tile = "[bx * %d:(bx + 1) * %d, %s]" % (d0, d0, regions(LDST_SHAPE[1:]))
    g2s = o.body(call_yaml(dtype, [("A", "global", g), ("Sm", "shared", s)],
                           "Sm" + full, "A" + tile, tiles), "vec_auto")
    s2g = o.body(call_yaml(dtype, [("B", "global", g), ("Sm", "shared", s)],
                           "B" + tile, "Sm" + full, tiles), "vec_auto")
    ld1 = o.body(call_yaml(dtype, [("Sm", "shared", s), ("Rg", "local", r)],
                           "Rg" + full, "Sm" + full), "ldstmatrix")
    st1 = o.body(call_yaml(dtype, [("Sm2", "shared", s),
                                   ("Rg", "local", r)],
                           "Sm2" + full, "Rg" + full), "ldstmatrix")
    ld2 = o.body(call_yaml(dtype, [("Sm2", "shared", s),
                                   ("Rg", "local", r)],
                           "Rg" + full, "Sm2" + full), "ldstmatrix")
    st2 = o.body(call_yaml(dtype, [("Sm", "shared", s), ("Rg", "local", r)],
                           "Sm" + full, "Rg" + full), "ldstmatrix")
    per_thread = n // THREADS
    return """__global__ void __launch_bounds__(%d) ours_%s(half *__restrict__ A_ptr, half *__restrict__ B_ptr)
{
  __shared__ __align__(128) half Sm_ptr[%d];
  __shared__ __align__(128) half Sm2_ptr[%d];
  __align__(16) half Rg_ptr[%d];
%s  __syncthreads();
  for (int it = 0; it < %d; ++it) {
%s%s  __syncwarp();
%s%s  __syncwarp();
  }
  __syncthreads();
%s}

extern "C" void ours_launch_%s(const void *A, void *B, cudaStream_t s)
{
  ours_%s<<<%d, %d, 0, s>>>((half *)A, (half *)B);
}

""" % (THREADS, name, n, n, per_thread, g2s, iters, ld1, st1, ld2,
       st2, s2g, name, name, tiles, THREADS) + OCCUPANCY % (
           "ours", name, "ours_" + name, THREADS)


def tvm_layout(text):
    """A layout of ours as TVMScript (as tests/upstream/differential.py)."""
    m = re.fullmatch(r"ComposeLayout\((\d+), (\d+), (\d+), (.*)\)", text)
    if m:
        return "T.ComposeLayout(%s, %s, %s, %s)" % (
            m.group(1), m.group(2), m.group(3), tvm_layout(m.group(4)))
    m = re.fullmatch(r"TileLayout\((.*)\)", text)
    if m:
        text = m.group(1)
    body = re.sub(r"(-?\d+)@(\w+)", r"\1 @ Axis.\2", text)
    body = re.sub(r"\bS\[", "T.S[", body).replace(" : ", ":")
    return "T.TileLayout(%s)" % body


def tvm_script_gsg(name, dtype, rows, cols, per_element, tiles):
    lay = tvm_layout(smem_layout((rows, cols), (cols, 1), per_element))
    tile = "bx * %d:bx * %d + %d, 0:%d" % (rows, rows, rows, cols)
    return f"""
@T.prim_func
def {name}(A_ptr: T.handle, B_ptr: T.handle):
    A = T.match_buffer(A_ptr, ({tiles * rows}, {cols}), "{dtype}")
    B = T.match_buffer(B_ptr, ({tiles * rows}, {cols}), "{dtype}")
    T.device_entry()
    bx = T.cta_id([{tiles}])
    T.warp_id([{THREADS // 32}])
    T.lane_id([32])
    tx = T.thread_id([{THREADS}])
    Sm = T.alloc_buffer(({rows}, {cols}), "{dtype}", scope="shared", layout={lay})
    Tx.cta.copy(Sm[0:{rows}, 0:{cols}], A[{tile}])
    T.cuda.cta_sync()
    Tx.cta.copy(B[{tile}], Sm[0:{rows}, 0:{cols}])
"""


def tvm_script_ldst(name, strides, swz, tiles, iters):
    lay = tvm_layout(smem_layout(LDST_SHAPE, strides, 3 if swz else None))
    reg = tvm_layout(LDST_REG)
    d0 = LDST_SHAPE[0]
    rest = ", ".join("0:%d" % d for d in LDST_SHAPE[1:])
    gshape = ", ".join(map(str, (tiles * d0,) + LDST_SHAPE[1:]))
    tile = "bx * %d:bx * %d + %d, %s" % (d0, d0, d0, rest)
    full = regions(LDST_SHAPE)
    return f"""
@T.prim_func
def {name}(A_ptr: T.handle, B_ptr: T.handle):
    A = T.match_buffer(A_ptr, ({gshape}), "float16")
    B = T.match_buffer(B_ptr, ({gshape}), "float16")
    T.device_entry()
    bx = T.cta_id([{tiles}])
    T.warp_id([{THREADS // 32}])
    T.lane_id([32])
    tx = T.thread_id([{THREADS}])
    Sm = T.alloc_buffer({LDST_SHAPE}, "float16", scope="shared", layout={lay})
    Sm2 = T.alloc_buffer({LDST_SHAPE}, "float16", scope="shared", layout={lay})
    Rg = T.alloc_buffer({LDST_SHAPE}, "float16", scope="local", layout={reg})
    Tx.cta.copy(Sm[{full}], A[{tile}])
    T.cuda.cta_sync()
    for it in T.serial({iters}):
        Tx.cta.copy(Rg[{full}], Sm[{full}])
        Tx.cta.copy(Sm2[{full}], Rg[{full}])
        T.cuda.warp_sync()
        Tx.cta.copy(Rg[{full}], Sm2[{full}])
        Tx.cta.copy(Sm[{full}], Rg[{full}])
        T.cuda.warp_sync()
    T.cuda.cta_sync()
    Tx.cta.copy(B[{tile}], Sm[{full}])
"""


def tvm_compile(name, script, tiles, tmp):
    """TVM's kernel source for the script, with a host launcher."""
    import tvm
    from tvm.script import tirx as T  # noqa: F401  (the script's names)
    from tvm.script.tirx import tile as Tx  # noqa: F401
    from tvm.tirx.layout import Axis  # noqa: F401

    path = os.path.join(tmp, name + "_tvm.py")
    with open(path, "w") as f:
        f.write(script)
    scope = {"T": T, "Tx": Tx, "Axis": Axis}
    exec(compile(script, path, "exec"), scope)  # noqa: S102
    func = scope[name]
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with target:
        ex = tvm.compile(tvm.IRModule({"main": func}), target=target,
                         tir_pipeline="tirx")
    mod = ex.mod if hasattr(ex, "mod") else ex
    src = "".join(m.inspect_source() for m in mod.imports)
    heads = re.findall(r'extern "C" __global__ void (?:__launch_bounds__'
                       r'\((\d+)\) )?(\w+)\(([^)]*)\)\s*\{', src)
    if len(heads) != 1:
        die("%s: expected one kernel definition in TVM's source, found %d"
            % (name, len(heads)))
    bound, kname, params = heads[0]
    if bound and int(bound) != THREADS:
        die("%s: TVM's kernel is for %s threads" % (name, bound))
    if "extern __shared__" in src:
        die("%s: TVM's kernel uses dynamic shared memory; the launcher "
            "passes none" % name)
    types = [re.sub(r"\s*__restrict__\s*", " ", p.rsplit(" ", 1)[0]).strip()
             for p in params.split(",")]
    if len(types) != 2:
        die("%s: TVM's kernel has %d parameters, expected A and B"
            % (name, len(types)))
    launcher = ('\nextern "C" void tvm_launch_%s(const void *A, void *B, '
                'cudaStream_t s)\n{\n  %s<<<%d, %d, 0, s>>>((%s)A, (%s)B);\n'
                '}\n' % (name, kname, tiles, THREADS, types[0], types[1]))
    launcher += OCCUPANCY % ("tvm", name, kname, THREADS)
    return ("/* Generated by bench/gpu/copy/gen.py: the CUDA that TVM %s "
            "generates (tvm.compile, tir_pipeline=\"tirx\", sm_90a) for the "
            "TVMScript below, unchanged, and a host launcher.\n%s*/\n%s%s"
            % (tvm.__version__, script.replace("*/", "* /"), src, launcher))


def main():
    if len(sys.argv) != 3:
        die("usage: gen.py TILEDISPATCH OUTDIR")
    tool, out = sys.argv[1:]
    if not os.access(tool, os.X_OK):
        die("%s is not an executable (build the tool first)" % tool)
    os.makedirs(out, exist_ok=True)
    kernels, cases = [], []
    with tempfile.TemporaryDirectory() as tmp:
        o = Ours(tool, tmp)
        for name, dtype, rows, cols, pe, tiles in GSG:
            kernels.append(ours_gsg(o, name, dtype, rows, cols, pe, tiles))
            src = tvm_compile(name, tvm_script_gsg(name, dtype, rows, cols,
                                                   pe, tiles), tiles, tmp)
            with open(os.path.join(out, "tvm_%s.cu" % name), "w") as f:
                f.write(src)
            cases.append('X(%s, 0, %d, %d, %d, %d, 1, "%s")'
                         % (name, BYTES[dtype], rows * cols, THREADS, tiles,
                            "swizzled" if pe is not None else "row-major"))
        for name, strides, swz, tiles, iters in LDST:
            kernels.append(ours_ldst(o, name, strides, swz, tiles, iters))
            src = tvm_compile(name, tvm_script_ldst(name, strides, swz,
                                                    tiles, iters),
                              tiles, tmp)
            with open(os.path.join(out, "tvm_%s.cu" % name), "w") as f:
                f.write(src)
            n = 1
            for d in LDST_SHAPE:
                n *= d
            cases.append('X(%s, 1, 2, %d, %d, %d, %d, "%s")'
                         % (name, n, THREADS, tiles, iters,
                            "swizzled" if swz else "row-major"))
        with open(os.path.join(out, "ours_gen.cu"), "w") as f:
            f.write("/* Generated by bench/gpu/copy/gen.py with %s: the "
                    "bodies `tiledispatch emit --lang cuda` prints for the "
                    "copy calls of each case, unchanged, in kernels; do not "
                    "edit. */\n#include <cuda_fp16.h>\n#include <cuda_fp8.h>\n"
                    % os.path.basename(tool))
            f.write("".join(o.preludes) + "\n")
            f.write("".join(kernels))
    with open(os.path.join(out, "cases.h"), "w") as f:
        f.write("/* Generated by bench/gpu/copy/gen.py; do not edit.\n"
                "   X(NAME, KIND 0 gsg / 1 ldst, ELEM_BYTES, TILE_ELEMS, "
                "THREADS, TILES, ITERS, SHARED LAYOUT) */\n#define COPY_CASES(X) \\\n"
                "    " + " \\\n    ".join(cases) + "\n")


if __name__ == "__main__":
    main()
