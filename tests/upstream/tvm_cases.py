"""Reduction programs written in TVMScript for real TVM (apache-tvm
0.27.0.post1), shared by the bridge tests (python/tests/test_tvm_bridge.py)
and the GPU program generator (gen_programs.py).

Each case is one kernel `f(A_ptr, B_ptr)` of one CTA: it stages the flat
input A (float32 or float16, n elements) into a src buffer of `src_shape`
in `src_scope`, runs one `Tx.<scope>.<op>(dst, src, axes, accum)` and
copies dst (of `dst_shape`) back to the flat output B.  B is also the
initial value of dst when `accum` is set.  The reference is computed on the
host from the same deterministic inputs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    name: str
    op: str                      # sum | max | min
    scope: str                   # thread | warp | warpgroup | cta
    threads: int                 # threadIdx.x extent of the CTA
    src_shape: tuple
    dst_shape: tuple
    axes: tuple = (-1,)
    accum: bool = False
    storage: str = "shared"      # shared | local
    dtype: str = "float32"
    guard: str | None = None     # a condition on tx around the call (thread scope)
    released_tvm_fails: bool = False   # the released wheel rejects it (issue 13)
    notes: str = ""

    @property
    def n_src(self) -> int:
        return math.prod(self.src_shape)

    @property
    def n_dst(self) -> int:
        return math.prod(self.dst_shape)


CASES = [
    Case("seed_local_sum", "sum", "thread", 1, (4,), (1,), storage="local",
         notes="the project's first example (examples/calls/seed_local_sum.yaml)"),
    Case("local_max_8", "max", "thread", 1, (8,), (1,), storage="local"),
    Case("local_min_2x4_accum", "min", "thread", 1, (2, 4), (2,), storage="local", accum=True),
    Case("shared_cta_sum_4x8", "sum", "cta", 32, (4, 8), (4,), released_tvm_fails=True,
         notes="upstream's doc example: gs=8, par=4"),
    Case("shared_cta_max_8x64", "max", "cta", 128, (8, 64), (8,), released_tvm_fails=True),
    Case("shared_cta_sum_48threads", "sum", "cta", 48, (6, 32), (6,), released_tvm_fails=True,
         notes="48 threads: upstream races on the partial warp"),
    Case("shared_warp_sum_4x8", "sum", "warp", 32, (4, 8), (4,), released_tvm_fails=True),
    Case("shared_warpgroup_min_4x32", "min", "warpgroup", 128, (4, 32), (4,),
         released_tvm_fails=True, notes="upstream hard-codes barrier id 8"),
    Case("shared_cta_sum_accum", "sum", "cta", 64, (4, 16), (4,), accum=True,
         released_tvm_fails=True),
    Case("shared_thread_sum_64", "sum", "thread", 32, (64,), (1,), guard="tx == 0",
         released_tvm_fails=True, notes="thread scope: `used without DeclBuffer` upstream"),
]

_SCOPE_NS = {"thread": "Tx", "warp": "Tx.warp", "warpgroup": "Tx.wg", "cta": "Tx.cta"}


def _unravel(flat: str, shape: tuple) -> str:
    """Row-major indices of a flat index expression."""
    idx, stride = [], math.prod(shape)
    for ext in shape:
        stride //= ext
        idx.append(f"({flat} // {stride}) % {ext}" if stride > 1 else f"{flat} % {ext}")
    return ", ".join(idx)


def source(case: Case) -> str:
    """The TVMScript text of the case's kernel."""
    t = case.threads
    ln = [
        "@T.prim_func",
        "def f(A_ptr: T.handle, B_ptr: T.handle):",
        f'    A = T.match_buffer(A_ptr, [{case.n_src}], "{case.dtype}")',
        f'    B = T.match_buffer(B_ptr, [{case.n_dst}], "{case.dtype}")',
        "    T.device_entry()",
        "    bx = T.cta_id([1])",
        f"    tx = T.thread_id([{t}])",
        f'    src = T.alloc_buffer([{", ".join(map(str, case.src_shape))}], "{case.dtype}", scope="{case.storage}")',
        f'    dst = T.alloc_buffer([{", ".join(map(str, case.dst_shape))}], "{case.dtype}", scope="{case.storage}")',
    ]
    if case.storage == "local":
        # Registers: each thread (one) stages everything itself.
        ln += [f"    for k in T.serial({case.n_src}):",
               f"        src[{_unravel('k', case.src_shape)}] = A[k]"]
        if case.accum:
            ln += [f"    for k in T.serial({case.n_dst}):",
                   f"        dst[{_unravel('k', case.dst_shape)}] = B[k]"]
    else:
        ln += [f"    for i in T.serial({math.ceil(case.n_src / t)}):",
               f"        if i * {t} + tx < {case.n_src}:",
               f"            src[{_unravel(f'(i * {t} + tx)', case.src_shape)}] = A[i * {t} + tx]"]
        if case.accum:
            ln += [f"    for i in T.serial({math.ceil(case.n_dst / t)}):",
                   f"        if i * {t} + tx < {case.n_dst}:",
                   f"            dst[{_unravel(f'(i * {t} + tx)', case.dst_shape)}] = B[i * {t} + tx]"]
        ln += ['    T.tvm_storage_sync("shared")']
    call = (f"{_SCOPE_NS[case.scope]}.{case.op}(dst, src, axes=[{', '.join(map(str, case.axes))}], "
            f"accum={case.accum})")
    if case.guard:
        ln += [f"    if {case.guard}:", f"        {call}"]
    else:
        ln += [f"    {call}"]
    if case.storage == "local":
        ln += [f"    for k in T.serial({case.n_dst}):",
               f"        B[k] = dst[{_unravel('k', case.dst_shape)}]"]
    else:
        ln += ['    T.tvm_storage_sync("shared")',
               f"    for i in T.serial({math.ceil(case.n_dst / t)}):",
               f"        if i * {t} + tx < {case.n_dst}:",
               f"            B[i * {t} + tx] = dst[{_unravel(f'(i * {t} + tx)', case.dst_shape)}]"]
    return "\n".join(ln) + "\n"


def prim_func(case: Case):
    import tvm.script

    return tvm.script.parse(source(case))


def compile_cuda(case: Case, arch: str = "sm_90a") -> str:
    """tvm.compile(..., tir_pipeline="tirx") for `arch`; the CUDA source."""
    import tvm

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    with target:
        ex = tvm.compile(tvm.IRModule({"main": prim_func(case)}), target=target,
                         tir_pipeline="tirx")
    mod = ex.mod if hasattr(ex, "mod") else ex
    return mod.imports[0].inspect_source()


def inputs(case: Case) -> tuple[list[float], list[float]]:
    """Deterministic A and initial B (small integers / 8: exact in fp16 sums)."""
    a = [((i * 37 + 11) % 23 - 11) / 8.0 for i in range(case.n_src)]
    b = [((i * 13 + 5) % 7 - 3) / 8.0 for i in range(case.n_dst)]
    return a, b


def reference(case: Case) -> list[float]:
    import itertools

    a, b = inputs(case)
    nd = len(case.src_shape)
    red = sorted({x % nd for x in case.axes})
    spatial = [d for d in range(nd) if d not in red]
    out: dict[tuple, list[float]] = {}
    for idx in itertools.product(*[range(e) for e in case.src_shape]):
        flat = 0
        for i, e in zip(idx, case.src_shape):
            flat = flat * e + i
        key = tuple(idx[d] for d in spatial)
        out.setdefault(key, []).append(a[flat])
    comb = {"sum": sum, "max": max, "min": min}[case.op]
    vals = [comb(v) for _, v in sorted(out.items())]
    if case.accum:
        vals = [comb([x, y]) for x, y in zip(vals, b)]
    return vals
