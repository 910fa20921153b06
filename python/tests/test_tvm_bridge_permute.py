"""tiledispatch.tvm with Tx.warp.permute_layout against real TVM
(apache-tvm 0.27.0.post1): TVM's own warp_xor_swizzle never lowers (its
body uses a threadIdx.x it does not declare, and TVM's well-formedness
check rejects it: docs/upstream.md), so the upstream test programs that
should compile do so only through tiledispatch; the ones its emitter
declines go back to TVM with the reason, in TVM's words, and a region
tiledispatch cannot take (a loop variable's start) goes back as not
expressible, saying why.

Skipped, with the reason, where TVM is not installed."""
import logging

import pytest

tvm = pytest.importorskip("tvm", reason="apache-tvm not installed (pip install apache-tvm==0.27.0.post1)")

import tiledispatch.tvm as tdtvm  # noqa: E402
from conftest import compile_cuda  # noqa: E402

pytestmark = pytest.mark.usefixtures("tvm_bridge")


def glob_kernel(shape, dtype, pre, post, dst_dtype=None):
    """Upstream's global -> global program: one warp permutes a tile from
    layout `pre` to layout `post`."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    dst_dtype = dst_dtype or dtype

    @T.prim_func
    def f(A: T.handle, B: T.handle):
        A_buf = T.match_buffer(A, shape, dtype, layout=pre)
        B_buf = T.match_buffer(B, shape, dst_dtype, layout=post)
        T.device_entry()
        T.cta_id([1])
        T.thread_id([32])
        Tx.warp.permute_layout(B_buf, A_buf)

    return f


def smem_kernel(dtype):
    """Upstream's shared path: stage, permute in shared memory, write back."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    shape = (4, 32)
    pre = TileLayout(S[shape:(32, 1)])
    post = TileLayout(S[shape:(1, 4)])

    @T.prim_func
    def f(A: T.handle, B: T.handle):
        A_buf = T.match_buffer(A, shape, dtype, layout=pre)
        B_buf = T.match_buffer(B, shape, dtype, layout=post)
        T.device_entry()
        T.cta_id([1])
        T.thread_id([32])
        sA = T.alloc_buffer(shape, dtype, scope="shared", layout=pre)
        sB = T.alloc_buffer(shape, dtype, scope="shared", layout=post)
        Tx.cta.copy(sA[:, :], A_buf[:, :])
        T.cuda.cta_sync()
        Tx.warp.permute_layout(sB[:, :], sA[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B_buf[:, :], sB[:, :])

    return f


def L(shape, strides):
    from tvm.tirx.layout import S, TileLayout

    return TileLayout(S[shape:strides])


@pytest.mark.parametrize("shape,dtype", [((8, 32), "uint32"), ((16, 32), "float32"),
                                         ((4, 32), "uint32")])
def test_global_permute_compiles_only_through_tiledispatch(shape, dtype):
    rows = shape[0]
    func = glob_kernel(shape, dtype, L(shape, (32, 1)), L(shape, (1, rows)))
    with pytest.raises(Exception, match="undefined variable threadIdx.x"):
        compile_cuda(func)      # TVM's own lowering (docs/upstream.md)
    tdtvm.install(strict=True)
    cuda = compile_cuda(func)
    assert tdtvm.stats() == {"dispatched": {"permute_layout": {"warp_xor_swizzle": 1}},
                             "handed_back": {}}
    # A warp transpose through registers: each thread loads its column and
    # stores its row; the source and destination are global.
    assert "threadIdx.x" in cuda and "B_buf" in cuda


def test_shared_permute_with_copies():
    tdtvm.install(strict=True)
    compile_cuda(smem_kernel("float32"))
    assert tdtvm.stats()["dispatched"] == {"copy": {"vec_auto": 2},
                                           "permute_layout": {"warp_xor_swizzle": 1}}


def test_declines_go_back_with_tvm_reason(caplog):
    """float16 has no bank-free XOR: tiledispatch's emitter declines in
    TVM's words; the call goes to TVM (which fails on its own defect)."""
    func = glob_kernel((4, 32), "float16", L((4, 32), (32, 1)), L((4, 32), (1, 4)))
    tdtvm.install()
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        with pytest.raises(Exception):
            compile_cuda(func)
    assert tdtvm.stats()["handed_back"] == {"no variant matched":
                                            {"tirx.tile.permute_layout": 1}}
    assert "no XOR-bits k" in caplog.text and "makes both phases bank-free" in caplog.text
    tdtvm.install(strict=True)
    with pytest.raises(RuntimeError, match="(?s)tiledispatch: .*no XOR-bits k"):
        compile_cuda(func)


def test_loop_variable_start_not_expressible(caplog):
    """A region starting at a loop variable (upstream's scale-factor
    program, one stage per iteration): only copies take variable starts,
    so the bridge hands the call back, saying why."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    shape = (2, 1, 4, 32)
    pre, post = L(shape, (128, 128, 32, 1)), L(shape, (128, 128, 1, 4))

    @T.prim_func
    def f(A: T.handle, B: T.handle):
        A_buf = T.match_buffer(A, shape, "uint32", layout=pre)
        B_buf = T.match_buffer(B, shape, "uint32", layout=post)
        T.device_entry()
        T.cta_id([1])
        T.thread_id([32])
        for s in T.serial(0, 2):
            Tx.warp.permute_layout(B_buf[s, 0:1, 0:4, 0:32], A_buf[s, 0:1, 0:4, 0:32])

    tdtvm.install()
    with caplog.at_level(logging.INFO, logger="tiledispatch.tvm"):
        with pytest.raises(Exception):
            compile_cuda(f)
    assert tdtvm.stats()["handed_back"] == {"not expressible as a tiledispatch call":
                                            {"tirx.tile.permute_layout": 1}}
    assert "region start of B_buf must be a constant, got s" in caplog.text
