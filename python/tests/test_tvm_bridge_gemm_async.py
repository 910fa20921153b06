"""tiledispatch.tvm with `Tx.gemm_async` (tcgen05, sm_100a) against real
TVM (apache-tvm 0.27.0.post1): every program of
tests/conformance/gemm_async_tvm_*.yaml (upstream's test_gemm_async.py
and the probes, as tests/upstream/gen_gemm_async_conformance.py builds
them for TVM) compiled by `tvm.compile(..., tir_pipeline="tirx")` for
sm_100a with the bridge installed and without.

- A call the conformance file accepts: tiledispatch dispatches it
  (stats(), strict) and the CUDA has plain TVM's tcgen05 instructions
  (the helpers' PTX), the same MMAs in order (tensor-memory address,
  instruction descriptor, disable-output-lane words, enable_input_d), the
  same descriptor encodes; compiled again with smem_desc="encode" both
  ways, every MMA's descriptor values (ldo, sdo, swizzle, the operands'
  offsets) are TVM's bit for bit.
- Block-scaled (gen.BS_CASES, SFA / SFB in tensor memory): the same
  tcgen05 PTX and, per MMA, TVM's addresses, offsets, sf_id patches and
  instruction descriptor values (gen.parse_bs); in a K loop whose SFA /
  SFB regions start at the loop variable (tmem views), the same at each
  iteration, and the starts no view expresses go back with their reason.
- A call the file refuses goes back to TVM as `no variant matched`, with
  tiledispatch's reason (the file's `# error:`) in the log (a call the
  loader refuses, `# expect: error`: `not expressible`).

The programs guard a thread-scope call with `if tid == 0`, the guard
TVM's dispatch context understands (its active set narrows to one thread:
the bridge's `active:`); under the generator's `if tid < 1` TVM reports
the whole CTA and tiledispatch refuses the call (D3).  Compiled only: no
GPU here has tensor memory; with nvcc on PATH five kernels (three
block-scaled) are also built by nvcc for sm_100a.

Skipped, with the reason, where TVM is not installed."""
import logging
import re
import shutil
import sys
from pathlib import Path

import pytest

tvm = pytest.importorskip("tvm", reason="apache-tvm not installed (pip install apache-tvm==0.27.0.post1)")

import tiledispatch.tvm as tdtvm  # noqa: E402
from conftest import ROOT, compile_cuda  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "upstream"))
import gen_gemm_async_conformance as gen  # noqa: E402

CONF = ROOT / "tests" / "conformance"
OP = "tirx.tile.gemm_async"


@pytest.fixture
def bridge(monkeypatch):
    """The bridge for one test: every body built directly is also parsed
    by TVMScript (the same PrimFunc, or BridgeError), the stats start
    empty, and the bridge is uninstalled afterwards.  TVM compiles its
    CUDA with its default compiler (test_nvcc_sm100a builds with nvcc)."""
    monkeypatch.setattr(tdtvm, "_verify", True)
    monkeypatch.delenv("TVM_CUDA_COMPILE_MODE", raising=False)
    tdtvm.reset_stats()
    yield
    tdtvm.uninstall()
    tdtvm.reset_stats()


def header(name: str) -> str:
    return (CONF / f"gemm_async_tvm_{name}.yaml").read_text()


ACCEPTED = [c["name"] for c in gen.CASES if "# expect: tcgen05" in header(c["name"])]
REJECTED = [c["name"] for c in gen.CASES if c["name"] not in ACCEPTED]
# Block scaling (SFA / SFB): accepted, refused by the variant (TVM's
# reasons), refused by the call loader (`# expect: error`, our deviation).
BS_ACCEPTED = [c["name"] for c in gen.BS_CASES if "# expect: tcgen05" in header(c["name"])]
BS_LOAD_ERRORS = [c["name"] for c in gen.BS_CASES if "# expect: error" in header(c["name"])]
BS_REJECTED = [c["name"] for c in gen.BS_CASES
               if c["name"] not in BS_ACCEPTED + BS_LOAD_ERRORS]


def case(name: str, **cfg) -> dict:
    c = next(c for c in gen.CASES + gen.BS_CASES if c["name"] == name)
    return dict(c, cfg={**c["cfg"], **cfg})


def program(c: dict):
    return gen.build(c, guard="eq")[0]


def bridged(c: dict) -> tuple[str, str]:
    """(plain TVM's CUDA, the bridge's CUDA) of case `c`: the bridge
    strict, the call dispatched by tcgen05, nothing handed back."""
    func = program(c)
    plain = compile_cuda(func, arch=c["arch"])
    tdtvm.reset_stats()
    tdtvm.install(strict=True)
    try:
        ours = compile_cuda(func, arch=c["arch"])
    finally:
        tdtvm.uninstall()
    assert tdtvm.stats() == {"dispatched": {"gemm_async": {"tcgen05": 1}},
                             "handed_back": {}}, tdtvm.stats()
    return plain, ours


_ASM = re.compile(r'asm volatile\("([^"]*tcgen05[^"]*)"')
_MMA = re.compile(r"\b(tvm_builtin_ptx_tcgen05_mma_\w+)\((.*)\);$", re.M)
_ENC = re.compile(r"tvm_builtin_ptx_tcgen05_encode_matrix_descriptor\(\(&\(\w+\[0\]\)\), "
                  r"(.*), (\d+), (\d+), (\d+)\);$", re.M)


def facts(src: str) -> dict:
    """What the comparison holds a kernel's CUDA to: the tcgen05 PTX of
    its helpers, the MMAs in order (the helper, the tensor-memory
    address, the instruction descriptor, the lane masks and
    enable_input_d: every argument but the two descriptors, whose values
    the smem_desc="encode" compile compares), and the descriptor encodes
    (the shared operand and its byte offset, ldo, sdo, swizzle)."""
    mmas = [(fn, [re.sub(r"get_tmem_addr\(\(uint\)", "get_tmem_addr(", a)
                  for i, a in enumerate(gen.split_args(args)) if i not in (1, 2)])
            for fn, args in _MMA.findall(src)]
    encodes = sorted(_ENC.findall(gen.base_offsets(src)))
    return {"ptx": sorted(set(_ASM.findall(src))), "mmas": mmas,
            "encodes": encodes, "commit": src.count("tcgen05.commit")}


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_as_tvm(bridge, name):
    c = case(name)
    plain, ours = bridged(c)
    want, got = facts(plain), facts(ours)
    assert got["mmas"], ours
    assert got == want
    # The header's count of MMAs is what both issue.
    count = int(re.search(r"^# count: (\d+)$", header(name), re.M).group(1))
    assert len(got["mmas"]) == count
    # Descriptor values, bit for bit: both compiled with a fresh encode
    # per MMA, whose operands are byte offsets (what the conformance
    # header records).
    plain_e, ours_e = bridged(case(name, smem_desc="encode"))
    assert gen.parse(ours_e) == gen.parse(plain_e)
    assert len(gen.parse(ours_e)[1]) == count


@pytest.mark.parametrize("name", BS_ACCEPTED)
def test_block_scaled_as_tvm(bridge, name):
    """A block-scaled call (SFA / SFB in tensor memory) the conformance
    file accepts: tiledispatch dispatches it and the CUDA has TVM's
    tcgen05 PTX (mma with block_scale and its scale_vec), the same MMAs in
    order (D address, the operands' descriptor offsets, the run-time
    instruction descriptor, SFA's and SFB's tensor-memory addresses,
    enable_input_d, the sf_id patched before each), the same hoisted
    shared-memory descriptors and descriptor encode, and each MMA's
    instruction descriptor value as TVM's own helpers compute it."""
    c = case(name)
    plain, ours = bridged(c)
    want, got = gen.parse_bs(plain), gen.parse_bs(ours)
    assert got[1], ours
    assert got == want
    assert facts(ours)["ptx"] == facts(plain)["ptx"]
    assert any("block_scale" in p for p in facts(ours)["ptx"])
    count = int(re.search(r"^# count: (\d+)$", header(name), re.M).group(1))
    assert len(got[1]) == count
    # TVM's values are the conformance header's (its descriptor values).
    values = re.search(r"^# tvm-idesc-values: (.*)$", header(name), re.M)
    if values:
        assert got[0]["V"] == [int(v) for v in values.group(1).split()]


def test_block_scaled_keeps_descI_at_the_call(bridge):
    """Hoisting with block scaling: the shared-memory descriptors go
    after the buffers' definitions, outside the guard; the instruction
    descriptor (descI_local, encoded, or given) stays at the call, as in
    TVM."""
    def before_guard(src: str) -> str:
        kernel = src[src.index('extern "C" __global__'):]
        return kernel[:kernel.index("if (")]

    for name in ("bs_fp8_sf_id", "bs_descI_given"):
        plain, ours = bridged(case(name))
        for src in (plain, ours):
            assert before_guard(src).count("encode_matrix_descriptor(") == 2
            assert "descI_local" not in before_guard(src)
            assert "descI_local" in src


def goes_back_not_expressible(f, caplog, reason: str) -> str:
    """Compiles f for sm_100a with the bridge installed: its one gemm_async
    must go back to TVM as not expressible, the log naming `reason`;
    returns TVM's CUDA (None where TVM's own lowering then fails)."""
    tdtvm.install()
    out = None
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        try:
            out = compile_cuda(f, arch="sm_100a")
        except Exception:  # noqa: BLE001  TVM's own lowering, after the hand-back
            pass
    assert tdtvm.stats() == {"dispatched": {}, "handed_back": {
        "not expressible as a tiledispatch call": {OP: 1}}}, tdtvm.stats()
    assert reason in caplog.text, caplog.text
    return out


# A K loop over the scale factors (fp8 with e8m0 and nvfp4): the case whose
# A / B layouts it takes, SF's dtype, SF_K and sf_mma_k of the buffers,
# and each iteration's columns.
SF_LOOPS = {"fp8": ("bs_fp8_sf_id", gen.T_E8, 8, 1, 4),
            "nvfp4": ("bs_nvfp4_cta_group_1", gen.T_E4, 32, 4, 16)}


def sf_loop_kernel(kind: str, sfa_step: int | None = None, sfb_step: int | None = None):
    """A two-iteration K loop whose gemm_async reads SFA[:, k * step:k * step
    + n] and SFB likewise (step n unless given), the scale factors of the
    whole loop in tensor memory as TVM's sf_tmem_layout lays them out (SFA
    at column 32, SFB after it, gen.sf_pair); A and B are the case's."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    name, sf_dtype, sf_k, per, n = SF_LOOPS[kind]
    c = case(name)
    _, Al, Bl = gen.build(c)
    (A_shape, dt, _, _), (B_shape, _, _, _) = c["A"], c["B"]
    sf = gen.sf_pair(sf_dtype, 128, 32, sf_k, per, 32)
    (SFA_shape, _, SFA_text, SFA_addr), (SFB_shape, _, SFB_text, SFB_addr) = sf["sfa"], sf["sfb"]
    SFAl, SFBl = gen.tmem_layout(SFA_text), gen.tmem_layout(SFB_text)
    Cl = TileLayout(S[(128, 512):(1 @ TLane, 1 @ TCol)])
    sa, sb = sfa_step or n, sfb_step or n

    @T.prim_func
    def f():
        T.device_entry()
        T.cta_id([1])
        T.thread_id([128])
        tid = T.thread_id_in_wg([128])
        A_smem = T.alloc_buffer(A_shape, dt, scope="shared", layout=Al)
        B_smem = T.alloc_buffer(B_shape, dt, scope="shared", layout=Bl)
        C = T.decl_buffer((128, 512), "float32", scope="tmem", allocated_addr=0, layout=Cl)
        SFA = T.decl_buffer(SFA_shape, sf_dtype, scope="tmem", allocated_addr=SFA_addr,
                            layout=SFAl)
        SFB = T.decl_buffer(SFB_shape, sf_dtype, scope="tmem", allocated_addr=SFB_addr,
                            layout=SFBl)
        for k in range(2):
            if tid == 0:
                Tx.gemm_async(C[:, 0:32], A_smem[:, :], B_smem[:, :],
                              SFA=SFA[:, k * sa:k * sa + n], SFB=SFB[:, k * sb:k * sb + n],
                              accum=k > 0, dispatch="tcgen05")

    return f, SFA_addr, SFB_addr


def at_iteration(src: str, k: int):
    """gen.parse_bs of a kernel's CUDA with the loop variable at `k`: per MMA
    the SFA / SFB addresses, the sf_id patch, and the rest, as values."""
    head, _, loop = src.partition("for (int k = 0; k < 2; ++k)")
    return gen.parse_bs(head + re.sub(r"\bk\b", str(k), loop))


@pytest.mark.parametrize("kind", SF_LOOPS)
def test_block_scaled_sf_at_a_loop_variable(bridge, kind):
    """Scale factors at a variable column (a K loop's SFA[:, k * 4:k * 4 +
    4]): each region becomes the whole of a tmem view of the buffer there
    (its sliced layout, the address moved by the start's whole 32-bit
    columns); in every iteration each MMA gets TVM's SFA and SFB addresses,
    sf_id patch, descriptors and instruction descriptor values."""
    f, sfa0, sfb0 = sf_loop_kernel(kind)
    plain = compile_cuda(f, arch="sm_100a")
    tdtvm.install(strict=True)
    ours = compile_cuda(f, arch="sm_100a")
    assert tdtvm.stats() == {"dispatched": {"gemm_async": {"tcgen05": 1}},
                             "handed_back": {}}, tdtvm.stats()
    moved = []
    for k in (0, 1):
        want, got = at_iteration(plain, k), at_iteration(ours, k)
        assert got[1], ours
        assert got == want
        moved.append(got[1][0][4:6])
    # The first MMA of the first iteration reads the buffers' first
    # columns, that of the second iteration further on.
    (a0, b0), (a1, b1) = moved
    assert (a0, b0) == (sfa0, sfb0) and a1 > a0 and b1 > b0


@pytest.mark.parametrize("steps, reason", [
    ((None, 2), "SFB[0, k * 2] (start at a variable): its column offset k * 2 (in 8-bit "
                "scale factors) is not a whole number of 32-bit tensor-memory columns"),
    ((2, None), "SFA[0, k * 2] (start at a variable): its layout S[(4, 32, 2, 4) : (4@TCol, "
                "1@TLane, 16@TCol, 1@TCol)] + R[4 : 32@TLane] has no slice there")])
def test_block_scaled_sf_not_a_view_goes_back(bridge, caplog, steps, reason):
    """SFB's start `k * 2` (extent 4) is two scale factors into a 32-bit
    column for odd k: TVM's addresses take the column and its sf_id the
    position in it, which no view with constant starts expresses.  SFA's
    `k * 2` cuts across its layout's groups of 4 scale factors along K
    (K 8 is 2 x 4: no slice of the layout there; TVM's own lowering
    refuses it too).  Either way the call
    goes back to TVM as not expressible, saying why."""
    f, _, _ = sf_loop_kernel("fp8", sfa_step=steps[0], sfb_step=steps[1])
    goes_back_not_expressible(f, caplog, reason)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_nvcc_sm100a_sf_at_a_loop_variable(bridge, monkeypatch):
    """The bridged K loop over nvfp4's scale factors builds with nvcc for
    sm_100a (the moved SF addresses are run-time values of k)."""
    monkeypatch.setenv("TVM_CUDA_COMPILE_MODE", "nvcc")
    f, _, _ = sf_loop_kernel("nvfp4")
    tdtvm.install(strict=True)
    assert "block_scale" in compile_cuda(f, arch="sm_100a")
    assert tdtvm.stats()["dispatched"] == {"gemm_async": {"tcgen05": 1}}


def test_hoist_places_descriptors_after_the_buffers(bridge):
    """smem_desc hoist (the default): the descriptors are encoded right
    after the shared buffers' definitions, outside the guard, as TVM's
    tcgen05 does it (sctx.add_post_buffer_def_stmt); the call site only
    adds the offsets.  local_hoist encodes at the call, inside it."""
    def encodes_before_guard(src: str) -> int:
        kernel = src[src.index('extern "C" __global__'):]
        return kernel[:kernel.index("if (")].count("encode_matrix_descriptor(")

    plain, ours = bridged(case("f16_128x64x64_sw128"))
    assert ours == plain
    assert encodes_before_guard(ours) == 2
    plain, ours = bridged(case("f16_warp"))
    assert encodes_before_guard(ours) == encodes_before_guard(plain) == 2
    _, ours = bridged(case("smem_desc_local_hoist"))
    assert encodes_before_guard(ours) == 0 and ours.count("encode_matrix_descriptor(") == 3


def test_accum_expression_in_a_k_loop(bridge):
    """upstream's `accum=k > 0` in a K loop: a run-time flag (the call's
    named int td_accum), the descriptors encoded once before the loop,
    the first MMA of each iteration accumulating when k > 0."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    _, Al, Bl = gen.build(case("f16_128x64x64_sw128"))
    Cl = TileLayout(S[(128, 64):(1 @ TLane, 1 @ TCol)])

    @T.prim_func
    def f():
        T.device_entry()
        T.cta_id([1])
        T.thread_id([128])
        tid = T.thread_id_in_wg([128])
        A = T.alloc_buffer((128, 64), "float16", scope="shared", layout=Al)
        B = T.alloc_buffer((64, 64), "float16", scope="shared", layout=Bl)
        C = T.decl_buffer((128, 64), "float32", scope="tmem", allocated_addr=0, layout=Cl)
        for k in range(4):
            if tid == 0:
                Tx.gemm_async(C[:, :], A[:, :], B[:, :], accum=k > 0, dispatch="tcgen05")

    plain = compile_cuda(f, arch="sm_100a")
    tdtvm.install(strict=True)
    ours = compile_cuda(f, arch="sm_100a")
    assert tdtvm.stats()["dispatched"] == {"gemm_async": {"tcgen05": 1}}
    for src in (plain, ours):
        kernel = src[src.index('extern "C" __global__'):]
        loop = kernel.index("for (int k = 0;")
        assert kernel[:loop].count("encode_matrix_descriptor(") == 2
        assert kernel[loop:].count("encode_matrix_descriptor(") == 0
    want, got = facts(plain), facts(ours)
    assert got["ptx"] == want["ptx"] and got["encodes"] == want["encodes"]
    assert [m[1][:-1] for m in got["mmas"]] == [m[1][:-1] for m in want["mmas"]]
    # enable_input_d: k > 0 for the first MMA, true for the other three.
    first = got["mmas"][0][1][-1]
    assert "k" in first and "0" in first, first
    assert [m[1][-1] for m in got["mmas"][1:]] == ["(bool)1"] * 3


def test_two_calls_share_the_buffers(bridge):
    """Two calls on the same A and B (the two N halves of C): each hoists
    its own descriptors after the buffers' definitions, as TVM's variant
    does (it caches none), and both issue TVM's MMAs."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    Al = mma_shared_layout("float16", SwizzleMode.SWIZZLE_128B_ATOM, (128, 64))
    Bl = mma_shared_layout("float16", SwizzleMode.SWIZZLE_128B_ATOM, (128, 64))
    Cl = TileLayout(S[(128, 128):(1 @ TLane, 1 @ TCol)])

    @T.prim_func
    def f():
        T.device_entry()
        T.cta_id([1])
        T.thread_id([128])
        tid = T.thread_id_in_wg([128])
        A = T.alloc_buffer((128, 64), "float16", scope="shared", layout=Al)
        B = T.alloc_buffer((128, 64), "float16", scope="shared", layout=Bl)
        C = T.decl_buffer((128, 128), "float32", scope="tmem", allocated_addr=0, layout=Cl)
        if tid == 0:
            Tx.gemm_async(C[:, 0:64], A[:, :], B[0:64, :], dispatch="tcgen05")
            Tx.gemm_async(C[:, 64:128], A[:, :], B[64:128, :], accum=True, dispatch="tcgen05")

    plain = compile_cuda(f, arch="sm_100a")
    tdtvm.install(strict=True)
    ours = compile_cuda(f, arch="sm_100a")
    assert tdtvm.stats()["dispatched"] == {"gemm_async": {"tcgen05": 2}}
    want, got = facts(plain), facts(ours)
    assert len(got["mmas"]) == 8 and got == want
    assert ours.count("encode_matrix_descriptor((") == 4


@pytest.mark.parametrize("name", REJECTED + BS_REJECTED + BS_LOAD_ERRORS)
def test_rejected_goes_back_with_our_reason(bridge, caplog, name):
    c = case(name)
    reason = re.search(r"^# error: (.*)$", header(name), re.M).group(1)
    # The loader's refusals (a deviation's `# expect: error`) make the call
    # not expressible; the variant's make it match nothing.
    why = ("not expressible as a tiledispatch call" if name in BS_LOAD_ERRORS
           else "no variant matched")
    tdtvm.install()
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        try:
            compile_cuda(program(c), arch=c["arch"])
        except Exception:  # noqa: BLE001  TVM's own refusal, after the hand-back
            pass
    assert tdtvm.stats() == {"dispatched": {},
                             "handed_back": {why: {OP: 1}}}, tdtvm.stats()
    logs = [r.getMessage() for r in caplog.records if r.name == "tiledispatch.tvm"]
    assert len(logs) == 1 and f"{OP} handed back to TVM: {why}" in logs[0], logs
    assert reason in logs[0], (reason, logs)


def test_unnarrowed_guard_is_refused(bridge, caplog):
    """Under `if tid < 1` TVM's dispatch context reports the whole CTA:
    tiledispatch refuses a thread-scope MMA issued by 128 threads (D3),
    and TVM lowers the call itself."""
    tdtvm.install()
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        src = compile_cuda(gen.build(case("f16_128x64x64_sw128"))[0], arch="sm_100a")
    assert tdtvm.stats()["handed_back"] == {"no variant matched": {OP: 1}}
    assert "guard the call to one thread (active set has 128 threads)" in caplog.text
    assert "tcgen05.mma.cta_group::1.kind::f16" in src


def test_to_call(bridge, monkeypatch):
    """The call the bridge makes: gemm_async's operands, transposes,
    config, the active thread and the cluster of a cta_group 2 call, its
    accumulator declared per CTA."""
    seen = []
    real = tdtvm._to_call

    def spy(op_call, sctx):
        call, ops = real(op_call, sctx)
        seen.append(call)
        return call, ops

    monkeypatch.setattr(tdtvm, "_to_call", spy)
    tdtvm.install(strict=True)
    compile_cuda(program(case("cta_group_2")), arch="sm_100a")
    compile_cuda(program(case("arbitrary_tiles_transAB_K128")), arch="sm_100a")
    cta2, tt = seen
    assert cta2.op == "gemm_async" and cta2.dst == "C_tmem[0:128, 128:256]"
    assert cta2.config == {"cta_group": 2}
    assert list(cta2.buffers["C_tmem"]["shape"]) == [128, 512]
    assert cta2.launch["cluster"] == [2, 1, 1]
    assert cta2.active == {"warpid": [0, 1], "laneid": [0, 1]}
    assert "transA=True, transB=True" in tt.script


def test_not_expressible(bridge):
    """A gemm_async of neither 6 nor 8 operands (block-scaled: SFA, SFB
    after B) is not expressible: the bridge says what it takes."""
    class Fake:
        args = [None] * 7

    with pytest.raises(tdtvm.BridgeError, match=r"or 8 \(C, A, B, SFA, SFB"):
        tdtvm._gemm_async.fields(Fake(), None, {})


def test_to_call_block_scaled(bridge, monkeypatch):
    """The block-scaled call the bridge makes: sfa / sfb regions of the
    tmem scale-factor buffers (their layouts as TVM's sf_tmem_layout),
    their allocated_addr bound as SFA_taddr / SFB_taddr, fp4 data as
    float4_e2m1fn."""
    seen = []
    real = tdtvm._to_call

    def spy(op_call, sctx):
        call, ops = real(op_call, sctx)
        seen.append((call, ops))
        return call, ops

    monkeypatch.setattr(tdtvm, "_to_call", spy)
    tdtvm.install(strict=True)
    compile_cuda(program(case("bs_nvfp4_cta_group_1")), arch="sm_100a")
    (call, ops), = seen
    # a, b, then the scale factors (the call's srcs; sources 3 and 4).
    assert call.srcs == ("A_smem[0:128, 0:256]", "B_smem[0:32, 0:256]", "SFA[0:128, 0:4]",
                         "SFB[0:32, 0:4]")
    assert "SFA[0:128, 0:4], SFB[0:32, 0:4], transA=False" in call.script
    assert call.buffers["A_smem"]["dtype"] == "float4_e2m1fn"
    assert call.buffers["SFA"]["dtype"] == "float8_e4m3fn"
    assert call.buffers["SFA"]["layout"].endswith("+ R[4 : 32@TLane]")
    assert int(ops.scalars["SFA_taddr"]) == 32 and int(ops.scalars["SFB_taddr"]) == 36


def test_install_takes_gemm_async(bridge):
    tdtvm.install(ops=["gemm_async"])
    assert tdtvm.taken_ops() == {"gemm_async"}
    assert "gemm_async" in tdtvm.served_ops()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("name", ["f16_128x64x64_sw128", "f16_warp", "bs_fp8_sf_id",
                                  "bs_nvfp4_cta_group_1"])
def test_nvcc_sm100a(bridge, monkeypatch, name):
    """The bridged kernel builds with nvcc for sm_100a (ptxas accepts the
    tcgen05 instructions and the hoisted descriptors)."""
    monkeypatch.setenv("TVM_CUDA_COMPILE_MODE", "nvcc")
    bridged(case(name))


def staged_kernel(smem_desc: str, scope: str = "thread", stages: int = 3,
                  c_tiles: int = 1, c_addr: int = 0):
    """A pipelined K loop over staged operands: stage `k % stages` of a
    [stages, 128, 64] A and a [stages, 64, 64] B (TVM's 128-byte-swizzled
    MMA layout over all stages, as GEMM kernels stage their tiles), one
    gemm_async per iteration, accumulating from the second; with
    `c_tiles` > 1 into C's column tile `k % c_tiles` (C at `c_addr`)."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    sw = SwizzleMode.SWIZZLE_128B_ATOM
    Al = mma_shared_layout("float16", sw, (stages, 128, 64))
    Bl = mma_shared_layout("float16", sw, (stages, 64, 64))
    N = 64 * c_tiles
    Cl = TileLayout(S[(128, N):(1 @ TLane, 1 @ TCol)])
    warp = scope == "warp"   # under `if tid < 32`; a thread under `if tid == 0`

    @T.prim_func
    def f():
        T.device_entry()
        T.cta_id([1])
        T.thread_id([128])
        tid = T.thread_id_in_wg([128])
        A = T.alloc_buffer((stages, 128, 64), "float16", scope="shared", layout=Al)
        B = T.alloc_buffer((stages, 64, 64), "float16", scope="shared", layout=Bl)
        C = T.decl_buffer((128, N), "float32", scope="tmem", allocated_addr=c_addr, layout=Cl)
        for k in range(7):
            if warp:
                if tid < 32:
                    Tx.warp.gemm_async(C[:, :], A[k % stages, :, :], B[k % stages, :, :],
                                       accum=k > 0, dispatch="tcgen05", smem_desc=smem_desc)
            elif c_tiles > 1:
                if tid == 0:
                    Tx.gemm_async(C[:, (k % c_tiles) * 64:(k % c_tiles) * 64 + 64],
                                  A[k % stages, :, :], B[k % stages, :, :], accum=k > 0,
                                  dispatch="tcgen05", smem_desc=smem_desc)
            elif tid == 0:
                Tx.gemm_async(C[:, :], A[k % stages, :, :], B[k % stages, :, :], accum=k > 0,
                              dispatch="tcgen05", smem_desc=smem_desc)

    return f


def _balanced(text: str, at: int) -> str:
    """The parenthesised expression of `text` opening at `at`."""
    depth = 0
    for i in range(at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[at:i + 1]
    raise ValueError(text[at:at + 80])


class _At:
    """A shared address: a buffer and a byte offset from its start."""

    def __init__(self, buf: str, off: int) -> None:
        self.buf, self.off = buf, off

    def __add__(self, n: int) -> "_At":
        return _At(self.buf, self.off + n)

    def key(self) -> tuple:
        return self.buf, self.off


def descriptor_addresses(src: str, k: int) -> list[tuple]:
    """Per MMA in order, the shared addresses (buffer, byte offset) its A
    and B descriptors are encoded from, at loop iteration `k`: the
    addresses as TVM's CUDA and tiledispatch's spell them
    (`(char*)(&(A_ptr[0])) + ((k % 3) * 16384) + 32` against
    `(char*)(&(A_ptr[((k % 3) * 8192)])) + 32`), evaluated."""
    def value(expr: str) -> tuple:
        expr = re.sub(r"\((?:void|char|half)\*\)", "", expr)
        expr = re.sub(r"&\((\w+)_ptr\[", r'at("\1", ', expr).replace("])", ")")
        return eval(expr, {"at": lambda b, e: _At(b, 2 * e), "k": k}).key()  # noqa: S307

    encodes = {}
    for m in re.finditer(r"encode_matrix_descriptor\(\(&\((\w+)\[0\]\)\), ", src):
        encodes[m.group(1)] = value(_balanced(src, m.end()))
    out = []
    for fn, args in _MMA.findall(src):
        descs = []
        for a in gen.split_args(args)[1:3]:
            m = re.fullmatch(r"(\w+)\[0\]", a)
            if m:
                descs.append(encodes[m.group(1)])
            else:
                at = a.index("cvta_generic_to_shared(") + len("cvta_generic_to_shared")
                descs.append(value(_balanced(a, at)))
        out.append(tuple(descs))
    return out


def _first_accum(src: str) -> str:
    """`src` with the first MMA's enable_input_d spelt as TVM spells a
    `k > 0` flag: the bridge's named int `td_accum` tested against zero
    is `(0 < ((int)(0 < k)))` in the CUDA, the same value."""
    return src.replace("(0 < ((int)(0 < k))));", "(0 < k));")


@pytest.mark.parametrize("scope", ["thread", "warp"])
@pytest.mark.parametrize("smem_desc", ["hoist", "local_hoist", "encode", "recompute"])
def test_staged_operands_at_the_loop_variable(bridge, smem_desc, scope):
    """A and B at the loop's stage `k % 3`: each region becomes the whole
    of a view of its buffer at the stage's offset, as copy_async's do.
    hoist and local_hoist encode the descriptor from the buffer's base
    and add the stage's offset (`(k % 3) * 1024` 16-byte units) at each
    MMA, as TVM does; with hoist the encodes stay before the loop
    (after the buffers' definitions) and the offset inside it.  The
    kernel is plain TVM's (but the first MMA's spelling of `k > 0`);
    encode and recompute encode each MMA's address from the view, the
    same addresses as TVM's, evaluated for every iteration."""
    func = staged_kernel(smem_desc, scope)
    plain = compile_cuda(func, arch="sm_100a")
    tdtvm.install(strict=True)
    ours = compile_cuda(func, arch="sm_100a")
    assert tdtvm.stats() == {"dispatched": {"gemm_async": {"tcgen05": 1}},
                             "handed_back": {}}, tdtvm.stats()
    kernel = ours[ours.index('extern "C" __global__'):]
    loop = kernel.index("for (int k = 0;")
    if smem_desc == "hoist":
        assert kernel[:loop].count("encode_matrix_descriptor(") == 2
        assert kernel[loop:].count("encode_matrix_descriptor(") == 0
        assert "(k % 3) * 1024" in kernel[loop:] and "(k % 3) * 512" in kernel[loop:]
    want, got = facts(plain), facts(ours)
    assert got["ptx"] == want["ptx"] and got["commit"] == want["commit"]
    assert [m[1][:-1] for m in got["mmas"]] == [m[1][:-1] for m in want["mmas"]]
    assert len(got["mmas"]) == 4
    if smem_desc in ("hoist", "local_hoist"):
        if scope == "thread":
            assert _first_accum(ours) == plain
        # At warp scope TVM puts each MMA under its own elect_sync
        # (docs/upstream.md, the gemm_async deviations): the encodes and
        # the offsets added to the descriptors, in order, are TVM's.
        assert got["encodes"] == want["encodes"]
        added = re.compile(r"\.x \+ \(\(uint\)(.*?)\)\), ")
        assert added.findall(ours) == added.findall(plain)
        assert len(added.findall(ours)) == 8
        return
    for k in range(7):
        addrs = descriptor_addresses(ours, k)
        assert addrs == descriptor_addresses(plain, k)
        assert addrs[1] == (("A", (k % 3) * 16384 + 32), ("B", (k % 3) * 8192 + 32))


@pytest.mark.parametrize("c_addr", [0, 128])
def test_accumulator_tile_at_the_loop_variable(bridge, c_addr):
    """C's column tile `k % 2` of a [128, 128] accumulator (at tensor
    memory column `c_addr`): the region becomes the whole of a tmem view
    of its 64 columns, whose address is C's moved by the start (in 32-bit
    columns), the address TVM's tcgen05 gives each MMA; with the staged A
    and B the kernel is plain TVM's (but the spelling of `k > 0`)."""
    func = staged_kernel("hoist", c_tiles=2, c_addr=c_addr)
    plain = compile_cuda(func, arch="sm_100a")
    tdtvm.install(strict=True)
    ours = compile_cuda(func, arch="sm_100a")
    assert tdtvm.stats() == {"dispatched": {"gemm_async": {"tcgen05": 1}},
                             "handed_back": {}}, tdtvm.stats()
    assert "(k & 1) * 64" in ours
    assert _first_accum(ours) == plain


def test_accumulator_at_a_variable_lane_goes_back(bridge, caplog):
    """C's rows from a variable (a lane offset): not a view the bridge
    makes (tensor memory's lanes are the MMA's rows); the call goes back
    to TVM as not expressible, naming the start."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    sw = SwizzleMode.SWIZZLE_128B_ATOM
    Al = mma_shared_layout("float16", sw, (64, 64))
    Bl = mma_shared_layout("float16", sw, (64, 64))
    Cl = TileLayout(S[(128, 64):(1 @ TLane, 1 @ TCol)])

    @T.prim_func
    def f():
        T.device_entry()
        T.cta_id([1])
        T.thread_id([128])
        tid = T.thread_id_in_wg([128])
        A = T.alloc_buffer((64, 64), "float16", scope="shared", layout=Al)
        B = T.alloc_buffer((64, 64), "float16", scope="shared", layout=Bl)
        C = T.decl_buffer((128, 64), "float32", scope="tmem", allocated_addr=0, layout=Cl)
        for k in range(2):
            if tid == 0:
                Tx.gemm_async(C[k * 64:k * 64 + 64, :], A[:, :], B[:, :], accum=False,
                              dispatch="tcgen05")

    goes_back_not_expressible(f, caplog, "region start of C must be a constant, got k * 64")


def test_staged_operand_inside_a_swizzle_period_goes_back(bridge, caplog):
    """B's rows from `k * 4` of a 128-byte-swizzled buffer: the offset
    (k * 256 elements) is 16-byte aligned but not a multiple of the
    swizzle's period (512 elements), so no view of the buffer there has
    the buffer's swizzle; the call goes back to TVM as not expressible,
    saying which start."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.cuda.tile_primitive.tma_utils import SwizzleMode, mma_shared_layout
    from tvm.tirx.layout import S, TCol, TileLayout, TLane

    sw = SwizzleMode.SWIZZLE_128B_ATOM
    Al = mma_shared_layout("float16", sw, (128, 64))
    Bl = mma_shared_layout("float16", sw, (128, 64))
    Cl = TileLayout(S[(128, 64):(1 @ TLane, 1 @ TCol)])

    @T.prim_func
    def f():
        T.device_entry()
        T.cta_id([1])
        T.thread_id([128])
        tid = T.thread_id_in_wg([128])
        A = T.alloc_buffer((128, 64), "float16", scope="shared", layout=Al)
        B = T.alloc_buffer((128, 64), "float16", scope="shared", layout=Bl)
        C = T.decl_buffer((128, 64), "float32", scope="tmem", allocated_addr=0, layout=Cl)
        for k in range(2):
            if tid == 0:
                Tx.gemm_async(C[:, :], A[:, :], B[k * 4:k * 4 + 64, :], accum=k > 0,
                              dispatch="tcgen05")

    goes_back_not_expressible(f, caplog, "region start of B must be a constant, got k * 4")


@pytest.mark.parametrize(("dtype", "row", "taken"), [
    ("float4_e2m1fn", 16, False),   # 16 elements of 4 bits: 8 bytes a row
    ("float4_e2m1fn", 32, True),    # 16 bytes a row
    ("float16", 8, True),           # 16 bytes a row
    ("float16", 4, False),          # 8 bytes a row
])
def test_shared_view_alignment_in_bits(dtype, row, taken):
    """A shared region at row `k` of a [4, row] buffer becomes a view
    only where every row starts 16 bytes apart; sizes are counted in bits,
    so a float4 row of 16 elements (8 bytes) is refused where counting
    each element as a byte took it.  A stage `k % 4` (not affine) counts
    as one variable."""
    from tvm.ir import Range
    from tvm.tirx import BufferRegion, Var

    from tiledispatch._tvm_regions import _shared_view

    buf = tvm.tirx.decl_buffer((4, row), dtype, "S", scope="shared")
    k = Var("k", "int32")
    for start in (k, k % 4):
        region = BufferRegion(buf, [Range.from_min_extent(start, 1),
                                    Range.from_min_extent(0, row)])
        got = _shared_view(region, ())
        assert (got is not None) == taken, (dtype, row, start)
        if got is not None:
            view, text = got
            assert [int(n) for n in view.shape] == [1, row]
            assert text("S_v") == f"S_v[0:1, 0:{row}]"
