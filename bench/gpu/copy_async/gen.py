#!/usr/bin/env python3
"""Generates both sides of the copy_async benchmark (bench_copy_async.cu).

    PYTHON_WITH_TVM bench/gpu/copy_async/gen.py TILEDISPATCH OUTDIR
    python3 bench/gpu/copy_async/gen.py --ours TILEDISPATCH OUTDIR

(PYTHON_WITH_TVM: a Python with the released TVM 0.27 installed, e.g.
/work/main/build-python/venv/bin/python; the GPU machine has no TVM, so the
output is committed under bench/gpu/copy_async/gen/ and travels with the
tree.  --ours writes only OUTDIR/ours_gen.cu, OUTDIR/ours_tma_gen.cu and
OUTDIR/cases.h and needs no TVM: the test that the committed files are
current uses it.)

The workload (issue 24's item 6): CTAS CTAs of 128 threads each stream
TILES [128, 64] float16 tiles of A[CTAS * TILES * 128, 64] (69 MB, 66 MiB, beyond
the H200's 50 MB L2) through STAGES shared-memory stages, fold every tile
into a per-thread float checksum (thread t adds row t of the tile) and
write one float per thread; the harness checks every checksum on the host.

- ours: `TILEDISPATCH emit CALL --lang cuda` of the CTA-scope call
  `copy_async S[0:128, 0:64] <- A[0:128, 0:64]` with `dispatch: ldgsts`,
  its body pasted unchanged into __device__ ours_ldgsts_tile(A_ptr, S_ptr)
  (the preludes at file scope); a fixed pipeline skeleton (below, written
  here, not by the tool) calls it once per tile with the tile's global and
  stage pointers: STAGES - 1 tiles ahead, one commit_group per tile,
  wait_group STAGES - 1, __syncthreads, fold, __syncthreads.  The skeleton
  folds a row 16 bytes at a time starting at a chunk rotated by the thread
  (no shared-memory bank conflicts); ours_ldgsts_tvmfold folds as TVM's
  kernel does (element by element, in order), to separate the skeleton's
  fold from the load.
- ours by TMA (OUTDIR/ours_tma_gen.cu): `TILEDISPATCH emit` of the
  thread-scope call `copy_async S[0:128, 0:64] <- A[0:128, 0:64]` with
  `dispatch: tma_auto` and `mbar: "mbar[0]"` over the whole of A, pasted
  into __device__ ours_tma_tile(A_tensormap, S_ptr, mbar_ptr, tile_row);
  the host encodes the map with the C `TILEDISPATCH tensor-maps` prints
  for that call (A_tensormap_encode, pasted unchanged) and passes it as a
  __grid_constant__ kernel parameter.  tma_auto declines a region start
  over a scalar today (no dynamic coordinates), so the call's start is the
  constant row 0 and the skeleton offsets the tile's row coordinate: the
  generator emits the call at row 0 and at row 128, checks that exactly
  one coordinate of the one TMA instruction differs (0 against 128) and
  writes that coordinate as `tile_row + 0`; nothing else of the body
  changes.  The skeleton is TVM's pipeline (probe_bench.py): thread 0
  initialises one mbarrier per stage, arms it with
  mbarrier.arrive.expect_tx(16384) and issues the load; every thread
  waits on the stage's phase (parity (k / STAGES) & 1), folds its row as
  the ldgsts skeleton does (rotated 16-byte chunks), __syncthreads, and
  thread 0 refills the stage with tile k + STAGES.  The stages start on a
  128-byte boundary inside the dynamic shared memory (TMA's alignment; the
  dynamic segment is promised 16 bytes only).
- TVM's: the two TIRx kernels of design/copy_async/probes/probe_bench.py
  (tma_auto by thread 0 on one mbarrier per stage; ldgsts by the CTA), at
  each STAGES of the sweep, compiled by tvm.compile(..., tir_pipeline=
  "tirx") for sm_90a, the kernel source written to OUTDIR/tvm_NAME.cu
  unchanged (the kernel renamed through its global_symbol), with a host
  launcher appended: the launch TVM's host function makes
  (T.call_ffi_kernel: grid, block, dynamic shared memory, the argument
  order) and, for TMA, each T.tensormap_encode_tiled of its host init
  written as a cuTensorMapEncodeTiled call.

OUTDIR/cases.h lists the kernels for the harness: X(NAME, KIND, STAGES,
DESCRIPTION) with KIND 0 ours, 1 TVM (written in both modes: TVM's rows
are fixed names).  Nothing in OUTDIR is written by hand.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from gen import split_emit  # noqa: E402  (bench/gpu/gen.py)

THREADS = 128
ROWS, COLS = 128, 64          # one tile, float16
TILE_ELEMS = ROWS * COLS
TILES = 16                    # tiles per CTA
CTAS = 264                    # 2 x the H200's 132 SMs
SWEEP = (2, 3, 4, 6)          # stages in flight; 4 is the figure
MAIN_STAGES = 4

CALL = """op: copy_async
target: cuda
arch: sm_90a
scope: cta
launch: {threadIdx.x: %d}
buffers:
  A: {scope: global, dtype: float16, shape: [%d, %d]}
  S: {scope: shared, dtype: float16, shape: [%d, %d]}
dispatch: ldgsts
dst: "S[0:%d, 0:%d]"
src: "A[0:%d, 0:%d]"
""" % (THREADS, ROWS, COLS, ROWS, COLS, ROWS, COLS, ROWS, COLS)


def die(msg):
    sys.stderr.write("copy_async/gen.py: error: %s\n" % msg)
    sys.exit(2)


def run(tool, args):
    p = subprocess.run([tool] + args, capture_output=True, text=True)
    if p.returncode != 0:
        die("%s %s failed (exit %d):\n%s" % (tool, " ".join(args),
                                             p.returncode, p.stderr))
    return p.stdout


# The pipeline around the emitted body.  The cp.async group instructions
# belong to the caller (ldgsts emits none); without __CUDA_ARCH__ (the CPU
# stand-in) the emitted helper copied at once, so there is nothing to wait
# for.  FOLD 0: 16-byte chunks of the row from a rotated start; FOLD 1:
# TVM's order, element by element.
SKELETON = r"""
#ifdef __CUDA_ARCH__
#define OURS_COMMIT() asm volatile("cp.async.commit_group;" : : : "memory")
#define OURS_WAIT(n) asm volatile("cp.async.wait_group %0;" : : "n"(n) : "memory")
#else
#define OURS_COMMIT() ((void)0)
#define OURS_WAIT(n) ((void)0)
#endif

enum { OURS_TILES = TILES_, OURS_TILE = TILE_ELEMS_, OURS_COLS = COLS_ };

template <int STAGES, int FOLD>
__global__ void __launch_bounds__(THREADS_)
ours_ldgsts_kernel(const half *__restrict__ A, float *__restrict__ Out)
{
  extern __shared__ __align__(128) unsigned char ours_smem[];
  half *stage = (half *)ours_smem;
  const half *a = A + (size_t)blockIdx.x * OURS_TILES * OURS_TILE;
  float acc = 0.0f;
  for (int s = 0; s < STAGES - 1; ++s) {
    ours_ldgsts_tile(a + (size_t)s * OURS_TILE, stage + s * OURS_TILE);
    OURS_COMMIT();
  }
  for (int k = 0; k < OURS_TILES; ++k) {
    int ahead = k + STAGES - 1;
    if (ahead < OURS_TILES)
      ours_ldgsts_tile(a + (size_t)ahead * OURS_TILE,
                       stage + (ahead % STAGES) * OURS_TILE);
    OURS_COMMIT(); /* an empty group at the tail keeps the count */
    OURS_WAIT(STAGES - 1);
    __syncthreads();
    const half *row = stage + (k % STAGES) * OURS_TILE +
                      threadIdx.x * OURS_COLS;
    if (FOLD == 0) {
      for (int i = 0; i < OURS_COLS / 8; ++i) {
        int c = (i + (int)threadIdx.x) % (OURS_COLS / 8);
        uint4 v = *(const uint4 *)(row + 8 * c);
        const __half2 *h = (const __half2 *)&v;
        for (int e = 0; e < 4; ++e) {
          float2 f = __half22float2(h[e]);
          acc += f.x;
          acc += f.y;
        }
      }
    } else {
      for (int j = 0; j < OURS_COLS; ++j)
        acc += __half2float(row[j]);
    }
    __syncthreads();
  }
  Out[blockIdx.x * THREADS_ + threadIdx.x] = acc;
}

template <int STAGES, int FOLD>
static int ours_launch(const void *A, float *Out, int ctas, cudaStream_t s)
{
  int smem = STAGES * OURS_TILE * (int)sizeof(half);
  static bool ready; /* set once: a launch is timed */
  if (!ready) {
    cudaError_t e = cudaFuncSetAttribute(
        ours_ldgsts_kernel<STAGES, FOLD>,
        cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
      return (int)e;
    ready = true;
  }
  ours_ldgsts_kernel<STAGES, FOLD><<<ctas, THREADS_, smem, s>>>(
      (const half *)A, Out);
  return 0;
}

template <int STAGES, int FOLD>
static int ours_occupancy(void)
{
  int n = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &n, ours_ldgsts_kernel<STAGES, FOLD>, THREADS_,
      STAGES * OURS_TILE * sizeof(half));
  return n;
}
"""

OURS_ENTRY = """
extern "C" int %(name)s_launch(const void *A, float *Out, int ctas, cudaStream_t s)
{
  return ours_launch<%(stages)d, %(fold)d>(A, Out, ctas, s);
}

extern "C" int %(name)s_blocks_per_sm(void)
{
  return ours_occupancy<%(stages)d, %(fold)d>();
}
"""


def ours_kernels():
    """(name, stages, fold, description) of every kernel of ours."""
    rows = [("ours_ldgsts_s%d" % s, s, 0,
             "ldgsts, %d stages (tiledispatch emit, rotated 16-byte fold)"
             % s) for s in SWEEP]
    rows.append(("ours_ldgsts_tvmfold_s%d" % MAIN_STAGES, MAIN_STAGES, 1,
                 "ldgsts, %d stages (tiledispatch emit, TVM's fold)"
                 % MAIN_STAGES))
    return rows


TMA_CALL = """op: copy_async
target: cuda
arch: sm_90a
scope: thread
launch: {threadIdx.x: %d}
buffers:
  A: {scope: global, dtype: float16, shape: [%d, %d]}
  S: {scope: shared, dtype: float16, shape: [%d, %d]}
  mbar: {scope: shared, dtype: uint64, shape: [1]}
dispatch: tma_auto
dst: "S[0:%d, 0:%d]"
src: "A[ROW0:ROW1, 0:%d]"
config: {mbar: "mbar[0]"}
""" % (THREADS, CTAS * TILES * ROWS, COLS, ROWS, COLS, ROWS, COLS, COLS)


def tma_call(row):
    return TMA_CALL.replace("ROW0", str(row)).replace("ROW1", str(row + ROWS))


# The TMA pipeline around the emitted body (TVM's, probe_bench.py's
# tma_kernel): the mbarrier helpers are the skeleton's (the op never
# waits: its caller arms and waits), PTX on the GPU, the stand-in's
# functions in a host build.
TMA_SKELETON = r"""
__device__ __forceinline__ void ours_mbar_init(unsigned long long *bar, unsigned n)
{
#ifdef __CUDA_ARCH__
  asm volatile("mbarrier.init.shared.b64 [%0], %1;"
               : : "r"((unsigned)__cvta_generic_to_shared(bar)), "r"(n) : "memory");
#else
  td_emu_mbar_init((uint64_t *)bar, n);
#endif
}

__device__ __forceinline__ void ours_mbar_arrive_expect_tx(unsigned long long *bar, unsigned bytes)
{
#ifdef __CUDA_ARCH__
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;"
               : : "r"((unsigned)__cvta_generic_to_shared(bar)), "r"(bytes) : "memory");
#else
  td_emu_mbar_arrive_expect_tx((uint64_t *)bar, bytes);
#endif
}

__device__ __forceinline__ void ours_mbar_wait(unsigned long long *bar, unsigned parity)
{
#ifdef __CUDA_ARCH__
  unsigned a = (unsigned)__cvta_generic_to_shared(bar), done = 0;
  while (!done)
    asm volatile("{\n  .reg .pred p;\n  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "  selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(a), "r"(parity) : "memory");
#else
  while (!td_emu_mbar_try_wait((uint64_t *)bar, parity)) {
  }
#endif
}

enum { OURS_TILES = TILES_, OURS_TILE = TILE_ELEMS_, OURS_COLS = COLS_,
       OURS_ROWS = ROWS_, OURS_TILE_BYTES = TILE_ELEMS_ * 2 };

template <int STAGES>
__global__ void __launch_bounds__(THREADS_)
ours_tma_kernel(const __grid_constant__ CUtensorMap A_tensormap, float *__restrict__ Out)
{
  extern __shared__ __align__(128) unsigned char ours_tma_smem[];
  __shared__ unsigned long long ours_mbar[STAGES];
  /* TMA writes 128-byte aligned destinations */
  half *tma_stage = (half *)(((uintptr_t)ours_tma_smem + 127) & ~(uintptr_t)127);
  const int row0 = (int)blockIdx.x * OURS_TILES * OURS_ROWS;
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; ++s)
      ours_mbar_init(&ours_mbar[s], 1);
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES && s < OURS_TILES; ++s) {
      ours_mbar_arrive_expect_tx(&ours_mbar[s], OURS_TILE_BYTES);
      ours_tma_tile(A_tensormap, tma_stage + s * OURS_TILE, &ours_mbar[s],
                    row0 + s * OURS_ROWS);
    }
  float acc = 0.0f;
  for (int k = 0; k < OURS_TILES; ++k) {
    ours_mbar_wait(&ours_mbar[k % STAGES], (unsigned)(k / STAGES) & 1u);
    const half *row = tma_stage + (size_t)(k % STAGES) * OURS_TILE +
                      threadIdx.x * OURS_COLS;
    for (int i = 0; i < OURS_COLS / 8; ++i) {
      int c = (i + (int)threadIdx.x) % (OURS_COLS / 8);
      uint4 v = *(const uint4 *)(row + 8 * c);
      const __half2 *h = (const __half2 *)&v;
      for (int e = 0; e < 4; ++e) {
        float2 f = __half22float2(h[e]);
        acc += f.x;
        acc += f.y;
      }
    }
    __syncthreads(); /* every thread is done with the stage */
    int next = k + STAGES;
    if (threadIdx.x == 0 && next < OURS_TILES) {
      ours_mbar_arrive_expect_tx(&ours_mbar[k % STAGES], OURS_TILE_BYTES);
      ours_tma_tile(A_tensormap, tma_stage + (k % STAGES) * OURS_TILE,
                    &ours_mbar[k % STAGES], row0 + next * OURS_ROWS);
    }
  }
  Out[blockIdx.x * THREADS_ + threadIdx.x] = acc;
}

template <int STAGES>
static int ours_tma_launch(const void *A, float *Out, int ctas, cudaStream_t s)
{
  /* the map holds A's address: encoded once per A, by tensor-maps' C */
  static CUtensorMap map;
  static const void *encoded_for;
  if (encoded_for != A) {
    CUresult r = A_tensormap_encode(&map, (void *)A);
    if (r != CUDA_SUCCESS)
      return -2000 - (int)r;
    encoded_for = A;
  }
  int smem = STAGES * OURS_TILE * (int)sizeof(half) + 128;
  static bool ready; /* set once: a launch is timed */
  if (!ready) {
    cudaError_t e = cudaFuncSetAttribute(
        ours_tma_kernel<STAGES>,
        cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
      return (int)e;
    ready = true;
  }
  ours_tma_kernel<STAGES><<<ctas, THREADS_, smem, s>>>(map, Out);
  return 0;
}

template <int STAGES>
static int ours_tma_occupancy(void)
{
  int n = 0;
  int smem = STAGES * OURS_TILE * (int)sizeof(half) + 128;
  cudaFuncSetAttribute(ours_tma_kernel<STAGES>,
                       cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &n, ours_tma_kernel<STAGES>, THREADS_, smem);
  return n;
}
"""

TMA_ENTRY = """
extern "C" int %(name)s_launch(const void *A, float *Out, int ctas, cudaStream_t s)
{
  return ours_tma_launch<%(stages)d>(A, Out, ctas, s);
}

extern "C" int %(name)s_blocks_per_sm(void)
{
  return ours_tma_occupancy<%(stages)d>();
}
"""


def ours_tma_kernels():
    return [("ours_tma_s%d" % s, s,
             "tma_auto by thread 0, mbarrier per stage, %d stages "
             "(tiledispatch emit + tensor-maps)" % s) for s in SWEEP]


def fill(sk):
    for key, val in (("THREADS_", THREADS), ("TILES_", TILES),
                     ("TILE_ELEMS_", TILE_ELEMS), ("COLS_", COLS),
                     ("ROWS_", ROWS)):
        sk = sk.replace(key, str(val))
    return sk


def ours_tma_source(tool, tmp):
    bodies = []
    for row in (0, ROWS):
        path = os.path.join(tmp, "tma_tile_%d.yaml" % row)
        with open(path, "w") as f:
            f.write(tma_call(row))
        variant = run(tool, ["dispatch", path]).strip()
        if variant != "tma_auto":
            die("expected variant tma_auto, got %s for\n%s"
                % (variant, tma_call(row)))
        bodies.append(split_emit(run(tool, ["emit", path, "--lang", "cuda"])))
    (pre, body), (pre1, body1) = bodies
    maps = run(tool, ["tensor-maps", os.path.join(tmp, "tma_tile_0.yaml")])
    # The row coordinate: the one operand of the one TMA instruction that
    # moves with the region's start (0 at row 0, 128 at row 128).
    lines = [ln for ln in body.splitlines() if ln.strip()]
    lines1 = [ln for ln in body1.splitlines() if ln.strip()]
    if pre != pre1 or len(lines) != len(lines1):
        die("the TMA call at rows 0 and %d emits different preludes or "
            "bodies" % ROWS)
    pat = re.compile(r"^(td_tma_load_2d\()(.*)(\);)$")
    out = []
    found = 0
    for a, b in zip(lines, lines1):
        if a == b:
            out.append(a)
            continue
        ma, mb = pat.match(a.strip()), pat.match(b.strip())
        if not ma or not mb:
            die("the TMA body changes outside a td_tma_load_2d call:\n%s\n%s"
                % (a, b))
        xa = [x.strip() for x in ma.group(2).split(",")]
        xb = [x.strip() for x in mb.group(2).split(",")]
        diff = [i for i in range(len(xa)) if xa[i] != xb[i]]
        if len(xa) != len(xb) or len(diff) != 1 or \
                (xa[diff[0]], xb[diff[0]]) != ("0", str(ROWS)):
            die("expected one coordinate 0 / %d in\n%s\n%s" % (ROWS, a, b))
        xa[diff[0]] = "tile_row + 0"
        out.append(ma.group(1) + ", ".join(xa) + ma.group(3))
        found += 1
    if found != 1:
        die("expected one TMA instruction whose row coordinate moves, "
            "found %d" % found)
    if "A_tensormap_encode(CUtensorMap *map, void *global_base)" not in maps:
        die("tensor-maps printed no A_tensormap_encode:\n%s" % maps)
    body = "".join("  " + ln + "\n" for ln in out)
    text = ("/* Generated by bench/gpu/copy_async/gen.py with %s: the body "
            "`tiledispatch emit --lang cuda` prints for the call below, in "
            "ours_tma_tile, with the TMA instruction's row coordinate offset "
            "by the skeleton's tile_row (tma_auto takes constant region "
            "starts only), and the host encode `tiledispatch tensor-maps` "
            "prints for it, unchanged; the pipeline around them is gen.py's "
            "fixed skeleton.  Do not edit.\n%s*/\n"
            "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n"
            % (os.path.basename(tool), tma_call(0)))
    text += pre + "\n"
    text += ("/* tiledispatch tensor-maps: the host encode of A_tensormap. "
             "*/\n%s\n" % maps.split("#include <stdint.h>\n", 1)[-1].lstrip("\n"))
    text += ("/* tiledispatch emit (tma_auto): the [%d, %d] tile at row "
             "tile_row of A into S_ptr by the calling thread, completing on "
             "mbar_ptr. */\n"
             "__device__ __forceinline__ void ours_tma_tile(const CUtensorMap "
             "&A_tensormap, half *S_ptr, unsigned long long *mbar_ptr, "
             "int tile_row)\n{\n%s}\n" % (ROWS, COLS, body))
    text += fill(TMA_SKELETON)
    for name, stages, _ in ours_tma_kernels():
        text += TMA_ENTRY % {"name": name, "stages": stages}
    return text


def ours_source(tool, tmp):
    path = os.path.join(tmp, "ldgsts_tile.yaml")
    with open(path, "w") as f:
        f.write(CALL)
    variant = run(tool, ["dispatch", path]).strip()
    if variant != "ldgsts":
        die("expected variant ldgsts, got %s for\n%s" % (variant, CALL))
    pre, body = split_emit(run(tool, ["emit", path, "--lang", "cuda"]))
    body = "".join("  " + line if line.strip() else line
                   for line in body.splitlines(True))
    sk = fill(SKELETON)
    text = ("/* Generated by bench/gpu/copy_async/gen.py with %s: the body "
            "`tiledispatch emit --lang cuda` prints for the call below, "
            "unchanged, in ours_ldgsts_tile; the pipeline around it is "
            "gen.py's fixed skeleton.  Do not edit.\n%s*/\n"
            "#include <cuda_runtime.h>\n"
            % (os.path.basename(tool), CALL))
    if "#include <cuda_fp16.h>" not in pre:
        text += "#include <cuda_fp16.h>\n"
    text += pre + "\n"
    text += ("/* tiledispatch emit (%s): one [%d, %d] tile from A_ptr into "
             "S_ptr by the CTA's %d threads. */\n"
             "__device__ __forceinline__ void ours_ldgsts_tile("
             "const half *__restrict__ A_ptr, half *S_ptr)\n{\n%s}\n"
             % (variant, ROWS, COLS, THREADS, body))
    text += sk
    for name, stages, fold, _ in ours_kernels():
        text += OURS_ENTRY % {"name": name, "stages": stages, "fold": fold}
    return text


# TVM's kernels -------------------------------------------------------------

# cuTensorMapEncodeTiled's enums by the numbers TVM's host init passes.
TMAP_DTYPE = {"float16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
              "bfloat16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
              "float32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
              "uint8": "CU_TENSOR_MAP_DATA_TYPE_UINT8",
              "uint16": "CU_TENSOR_MAP_DATA_TYPE_UINT16",
              "uint32": "CU_TENSOR_MAP_DATA_TYPE_UINT32"}
TMAP_INTERLEAVE = ["CU_TENSOR_MAP_INTERLEAVE_NONE",
                   "CU_TENSOR_MAP_INTERLEAVE_16B",
                   "CU_TENSOR_MAP_INTERLEAVE_32B"]
TMAP_SWIZZLE = ["CU_TENSOR_MAP_SWIZZLE_NONE", "CU_TENSOR_MAP_SWIZZLE_32B",
                "CU_TENSOR_MAP_SWIZZLE_64B", "CU_TENSOR_MAP_SWIZZLE_128B"]
TMAP_L2 = ["CU_TENSOR_MAP_L2_PROMOTION_NONE",
           "CU_TENSOR_MAP_L2_PROMOTION_L2_64B",
           "CU_TENSOR_MAP_L2_PROMOTION_L2_128B",
           "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"]
TMAP_OOB = ["CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
            "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"]

ENCODE_RE = re.compile(
    r"T\.tensormap_encode_tiled\((\w+), T\.handle_add_byte_offset\("
    r"(\w+)\.data, (\d+)\), ([\d, ]+), descriptor_dtype=\"(\w+)\", "
    r"rank=(\d+), interleave=(\d+), swizzle=(\d+), l2_promotion=(\d+), "
    r"oob_fill=(\d+), force_cu_dtype=(-?\d+)\)")
LAUNCH_RE = re.compile(r'T\.call_ffi_kernel\("(\w+)", (.*?), launch_params=')


# The alignment a TMA destination needs by the map's swizzle: the hardware
# takes the swizzle pattern from address bits, so a swizzled stage must
# start on a multiple of the pattern (8 rows of the atom; SWIZZLE_128B:
# 1024 bytes); unswizzled, TMA needs 128.
TMA_ALIGN = {"NONE": 128, "32B": 256, "64B": 512, "128B": 1024}


def tma_alignment_problem(text):
    """Why text (a generated kernel file with its launcher) would misplace
    a TMA destination, or None.  The kernel's one dynamic shared array
    must be declared with the alignment its tensor maps' swizzle needs:
    ptxas places the dynamic segment by that alignment after the static
    shared variables (TVM's mbarriers), and nothing at launch moves it."""
    swz = re.findall(r"CU_TENSOR_MAP_SWIZZLE_(NONE|32B|64B|128B)\b", text)
    if not swz:
        return None
    need = max(TMA_ALIGN[s] for s in swz)
    decls = re.findall(r"extern __shared__ __align__\((\d+)\) \w+ (\w+)\[\];",
                       text)
    if len(decls) != 1:
        return ("expected one dynamic shared array, found %d" % len(decls))
    align, var = int(decls[0][0]), decls[0][1]
    if align < need:
        return ("the dynamic shared array %s is declared __align__(%d), but "
                "its tensor maps (SWIZZLE_%s) need %d-byte aligned "
                "destinations: give the probe's shared.dyn buffer align=%d"
                % (var, align, max(swz, key=lambda s: TMA_ALIGN[s]), need,
                   need))
    return None


def base_name(var):
    """TVM's buffer var A_1 of the host function is the parameter A."""
    return re.sub(r"_\d+$", "", var)


def encode_c(m):
    """One T.tensormap_encode_tiled as a cuTensorMapEncodeTiled call."""
    (var, buf, off, nums, dtype, rank, inter, swz, l2, oob,
     force) = m.groups()
    rank = int(rank)
    nums = [int(x) for x in nums.split(",")]
    if len(nums) != 4 * rank - 1:
        die("tensormap_encode_tiled of %s: %d numbers for rank %d"
            % (var, len(nums), rank))
    if int(force) != -1 or dtype not in TMAP_DTYPE:
        die("tensormap_encode_tiled of %s: dtype %s / force_cu_dtype %s "
            "not handled" % (var, dtype, force))
    dims = nums[:rank]
    strides = nums[rank:2 * rank - 1]
    box = nums[2 * rank - 1:3 * rank - 1]
    estr = nums[3 * rank - 1:]
    base = base_name(buf)
    return """  {
    /* %s */
    cuuint64_t dims[%d] = {%s};
    cuuint64_t strides[%d] = {%s};
    cuuint32_t box[%d] = {%s};
    cuuint32_t estrides[%d] = {%s};
    CUresult r = encode(&maps->%s, %s, %d, (char *)%s + %s, dims, strides, box,
                        estrides, %s, %s, %s, %s);
    if (r != CUDA_SUCCESS)
      return -(int)r;
  }
""" % (m.group(0), rank, ", ".join("%d" % d for d in dims), max(rank - 1, 1),
       ", ".join("%d" % s for s in strides) or "0", rank,
       ", ".join(map(str, box)), rank, ", ".join(map(str, estr)), var,
       TMAP_DTYPE[dtype], rank, base, off, TMAP_INTERLEAVE[int(inter)],
       TMAP_SWIZZLE[int(swz)], TMAP_L2[int(l2)], TMAP_OOB[int(oob)])


def tvm_compile(name, func):
    """TVM's CUDA source of func and its host function's text."""
    import tvm
    from tvm.ir.instrument import pass_instrument

    host = []

    @pass_instrument
    class Grab:
        def run_after_pass(self, mod, info):
            text = mod.script()
            if "T.call_ffi_kernel" in text:
                host[:] = [text]

    func = func.with_attr("global_symbol", name)
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with target, tvm.transform.PassContext(instruments=[Grab()]):
        ex = tvm.compile(tvm.IRModule({"main": func}), target=target,
                         tir_pipeline="tirx")
    mod = ex.mod if hasattr(ex, "mod") else ex
    src = "".join(m.inspect_source() for m in mod.imports)
    if not host:
        die("%s: no T.call_ffi_kernel in TVM's host function" % name)
    return tvm.__version__, src, host[0]


def launch_line(host, m):
    """The whole line of TVM's host function that holds the launch."""
    start = host.rfind("\n", 0, m.start()) + 1
    end = host.find("\n", m.end())
    return host[start:end if end >= 0 else len(host)].strip()


def tvm_launcher(name, src, host):
    heads = re.findall(r'extern "C" __global__ void (?:__launch_bounds__'
                       r'\((\d+)\) )?(\w+)\(([^)]*)\)\s*\{', src)
    if len(heads) != 1:
        die("%s: expected one kernel definition in TVM's source, found %d"
            % (name, len(heads)))
    bound, kname, params = heads[0]
    if bound and int(bound) != THREADS:
        die("%s: TVM's kernel is for %s threads" % (name, bound))
    ptypes = [p.strip() for p in params.split(",")]
    m = LAUNCH_RE.search(host)
    if not m or m.group(1) != kname:
        die("%s: no launch of %s in TVM's host function" % (name, kname))
    args = [a.strip() for a in m.group(2).split(",")]
    nparams = len(ptypes)
    if len(args) != nparams + 3:
        die("%s: launch of %s has %d arguments for %d parameters"
            % (name, kname, len(args), nparams))
    grid, block = int(args[nparams]), int(args[nparams + 1])
    sm = re.fullmatch(r"T\.int64\((\d+)\)|(\d+)", args[nparams + 2])
    if not sm or block != THREADS or grid != CTAS:
        die("%s: unexpected launch %s" % (name, args[nparams:]))
    smem = int(sm.group(1) or sm.group(2))
    encodes = list(ENCODE_RE.finditer(host))
    if host.count("tensormap_encode_tiled") != len(encodes):
        die("%s: a tensormap_encode_tiled the generator cannot read" % name)
    maps = [e.group(1) for e in encodes]
    call = []
    for a, ptype in zip(args[:nparams], ptypes):
        if a in maps:
            call.append("maps->" + a)
        elif a.endswith(".data") and base_name(a[:-5]) in ("A", "Out"):
            t = re.sub(r"\s*__restrict__\s*", " ", ptype.rsplit(" ", 1)[0])
            call.append("(%s)%s" % (t.strip(), base_name(a[:-5])))
        else:
            die("%s: kernel argument %s not handled" % (name, a))
    out = ['\n/* Host side, written by bench/gpu/copy_async/gen.py from '
           'TVM\'s host function:\n   %s */\n'
           % launch_line(host, m).replace("*/", "* /")]
    if maps:
        out.append("#include <cudaTypedefs.h>\n"
                   "struct %s_maps {\n%s};\n\n"
                   "static int %s_encode(struct %s_maps *maps, const void *A)\n"
                   "{\n"
                   "  static PFN_cuTensorMapEncodeTiled_v12000 encode;\n"
                   "  if (!encode) {\n"
                   "    cudaDriverEntryPointQueryResult q;\n"
                   "    if (cudaGetDriverEntryPointByVersion(\n"
                   "            \"cuTensorMapEncodeTiled\", (void **)&encode, "
                   "12000, cudaEnableDefault, &q) != cudaSuccess ||\n"
                   "        q != cudaDriverEntryPointSuccess || !encode) {\n"
                   "      encode = 0;\n"
                   "      return -1;\n"
                   "    }\n"
                   "  }\n%s  return 0;\n}\n"
                   % (name, "".join("  CUtensorMap %s;\n" % v for v in maps),
                      name, name, "".join(encode_c(e) for e in encodes)))
    out.append('\nextern "C" int %s_launch(const void *A, float *Out, '
               'int ctas, cudaStream_t s)\n{\n' % name)
    if maps:
        out.append("  /* the maps hold A's address: encoded once per A */\n"
                   "  static struct %s_maps m;\n"
                   "  static const void *encoded_for;\n"
                   "  struct %s_maps *maps = &m;\n"
                   "  if (encoded_for != A) {\n"
                   "    int r = %s_encode(maps, A);\n"
                   "    if (r != 0)\n"
                   "      return r;\n"
                   "    encoded_for = A;\n"
                   "  }\n" % (name, name, name))
    out.append("  if (ctas != %d)\n    return -1000; /* TVM's grid is fixed */\n"
               "  static int ready; /* set once: a launch is timed */\n"
               "  if (!ready) {\n"
               "    cudaError_t e = cudaFuncSetAttribute(%s, "
               "cudaFuncAttributeMaxDynamicSharedMemorySize, %d);\n"
               "    if (e != cudaSuccess)\n      return (int)e;\n"
               "    ready = 1;\n  }\n"
               "  %s<<<%d, %d, %d, s>>>(%s);\n  return 0;\n}\n"
               % (CTAS, kname, smem, kname, grid, block, smem,
                  ", ".join(call)))
    out.append('\nextern "C" int %s_blocks_per_sm(void)\n{\n  int n = 0;\n'
               "  cudaFuncSetAttribute(%s, "
               "cudaFuncAttributeMaxDynamicSharedMemorySize, %d);\n"
               "  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, %s, %d, "
               "%d);\n  return n;\n}\n"
               % (name, kname, smem, kname, block, smem))
    return "".join(out)


TVM_KINDS = (("tma", "tma_kernel", "tma_auto by thread 0, mbarrier per stage"),
             ("ldgsts", "ldgsts_kernel", "ldgsts by the CTA"))


def tvm_cases():
    """(name, stages, description) of TVM's kernels, without TVM."""
    return [("tvm_%s_s%d" % (kind, s), s, "%s, %d stages (TVM)" % (desc, s))
            for kind, _, desc in TVM_KINDS for s in SWEEP]


def tvm_sources():
    """(name, stages, description, source) of TVM's kernels."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "design",
                                    "copy_async", "probes"))
    import probe_bench as pb
    if (pb.TILES, pb.CTAS, pb.NT) != (TILES, CTAS, THREADS):
        die("probe_bench.py's TILES/CTAS/NT differ from gen.py's")
    rows = []
    for kind, make, desc in TVM_KINDS:
        for s in SWEEP:
            pb.STAGES = s  # read when the kernel is parsed
            name = "tvm_%s_s%d" % (kind, s)
            ver, src, host = tvm_compile(name, getattr(pb, make)())
            text = ("/* Generated by bench/gpu/copy_async/gen.py: the CUDA "
                    "that TVM %s generates (tvm.compile, tir_pipeline="
                    "\"tirx\", sm_90a) for %s() of design/copy_async/probes/"
                    "probe_bench.py with STAGES = %d, the kernel named %s "
                    "through its global_symbol; unchanged, and a host "
                    "launcher.  Do not edit. */\n%s%s"
                    % (ver, make, s, name, src,
                       tvm_launcher(name, src, host)))
            why = tma_alignment_problem(text)
            if why:
                die("%s: %s" % (name, why))
            rows.append((name, s, "%s, %d stages (TVM)" % (desc, s), text))
    return rows


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    argv = sys.argv[1:]
    ours_only = bool(argv) and argv[0] == "--ours"
    if ours_only:
        argv = argv[1:]
    if len(argv) != 2:
        die("usage: gen.py [--ours] TILEDISPATCH OUTDIR")
    tool, out = argv
    if not os.access(tool, os.X_OK):
        die("%s is not an executable (build the tool first)" % tool)
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        write(os.path.join(out, "ours_gen.cu"), ours_source(tool, tmp))
        write(os.path.join(out, "ours_tma_gen.cu"), ours_tma_source(tool, tmp))
    if not ours_only:
        for name, s, desc, text in tvm_sources():
            write(os.path.join(out, name + ".cu"), text)
    cases = ['X(%s, 0, %d, "%s")' % (n, s, d) for n, s, _, d in ours_kernels()]
    cases += ['X(%s, 0, %d, "%s")' % (n, s, d) for n, s, d in ours_tma_kernels()]
    cases += ['X(%s, 1, %d, "%s")' % (n, s, d) for n, s, d in tvm_cases()]
    write(os.path.join(out, "cases.h"),
          "/* Generated by bench/gpu/copy_async/gen.py; do not edit.\n"
          "   X(NAME, KIND 0 ours / 1 TVM, STAGES, DESCRIPTION) */\n"
          "#define ASYNC_TILES %d\n#define ASYNC_CTAS %d\n"
          "#define ASYNC_THREADS %d\n#define ASYNC_TILE_ROWS %d\n"
          "#define ASYNC_TILE_COLS %d\n#define ASYNC_CASES(X) \\\n    "
          % (TILES, CTAS, THREADS, ROWS, COLS)
          + " \\\n    ".join(cases) + "\n")


if __name__ == "__main__":
    main()
