"""gemm through the TVM bridge (tiledispatch.tvm): a `Tx.warp.gemm(D, A,
B, C, transpose_A, transpose_B, alpha, beta)` call's operands as a
tiledispatch call writes them, and the active thread set TVM's guards
leave (`sctx.intra`) as the call's `active:`.

TVM's `Gemm` takes its eight operands positionally: four regions, two
Python bools and two scalars.  tiledispatch's gemm call names them (dst,
a, b, c, transpose_A, transpose_B, alpha, beta: docs/gemm.md) and takes
alpha and beta as literals only; a scalar TVM does not know as a constant
is not expressible (the bridge hands the call back, saying so).  Written
against apache-tvm 0.27.0.post1; imported by tiledispatch.tvm only.
"""

from __future__ import annotations

from typing import Any

from ._tvm_base import BridgeError, active_axes, const_flag


def _flag(x: Any, what: str) -> bool:
    """A transpose flag: a Python bool or an integer constant."""
    return const_flag(x, "gemm", what)


def _literal(x: Any, what: str) -> float | int:
    """alpha or beta: a number, or TVM's FloatImm / IntImm (a literal of
    the call: an int stays an int, as TVMScript prints it)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return x
    from tvm.tirx import FloatImm, IntImm

    if isinstance(x, FloatImm):
        return float(x.value)
    if isinstance(x, IntImm) and "int" in str(x.dtype):
        return int(x.value)
    raise BridgeError(f"gemm {what} must be a constant (tiledispatch takes alpha and beta "
                      f"as literals), got {x!r}")


def fields(op_call: Any, ops: Any) -> dict[str, Any]:
    """dst, a, b, c, transpose_A, transpose_B, alpha and beta of a gemm
    call; `ops` (tiledispatch.tvm's _Operands) names the buffers."""
    args = list(op_call.args)
    if len(args) != 8:
        raise BridgeError(f"gemm takes 8 operands (D, A, B, C, transpose_A, transpose_B, "
                          f"alpha, beta), got {len(args)}")
    d, a, b, c = (ops.region(x) for x in args[:4])
    return dict(dst=d, a=a, b=b, c=c,
                transpose_A=_flag(args[4], "transpose_A"),
                transpose_B=_flag(args[5], "transpose_B"),
                alpha=_literal(args[6], "alpha"), beta=_literal(args[7], "beta"))


def active(sctx: Any) -> dict[str, list[int]] | None:
    """The threads of the call's scope that reach it, as the call file's
    `active:` ({axis: [begin, end)}): TVM's DispatchContext.intra maps
    each thread axis of the scope to (extent, offset), narrowed by the
    guards around the call (`if lane < 16:`).  None when TVM gives none."""
    return active_axes([getattr(sctx, "intra", None)])
