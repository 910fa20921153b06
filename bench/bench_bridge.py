#!/usr/bin/env python3
"""The TVM bridge's cost inside tvm.compile, next to TVM's own dispatcher.

    bench/bench_bridge.py [--runs N] [--ops K ...] [--cpu] [--cold]

For a TIRx kernel of K elementwise tile ops on shared memory at CTA scope
(`Tx.cta.add` with a broadcast row, `mul` by a scalar parameter, `exp`,
`sub` of a constant, `maximum`, in turn; K = 1 and 20 by default), compiled
with `tvm.compile(..., tir_pipeline="tirx")` for sm_90a, N times with TVM's
own dispatcher and N times through `tiledispatch.tvm` (strict, so every
call is tiledispatch's), the two interleaved run by run so that both see
the machine alike.  Printed, as medians over the runs:

    compile             the whole tvm.compile, in ms
    dispatch / call     time inside dispatcher.run_dispatch per tile call
                        (TVM's variant search and emit, or the bridge), ms
    bridge breakdown    per call: to_call (TVM objects -> tiledispatch.Call),
                        dispatch + emit in C (reg.dispatch(call).emit),
                        build (the PrimFunc built with TVM's IR builder from
                        the printed body), parse (TVMScript's parser, where
                        the body leaves what the builder handles: 0 here)

The bridge keeps the statements of each body text it has built (a plan
per distinct text), the call-file entries of the TVM buffers and launch
parameters it has converted (per object), the default layouts per shape
and the operator functions per operand types; --cold forgets all of them
before every compile (tiledispatch.tvm._forget()), so every compile pays
for Python's `ast` of its texts and converts its buffers again.

Needs apache-tvm 0.27.0.post1 and the package installed (scripts/test-python
makes build-python/venv with both).  No GPU: the CUDA source is generated,
not run.
"""
import argparse
import statistics
import time

import tvm
import tvm.script

import tiledispatch.tvm as tdtvm

CLOCK = time.perf_counter
COLD = False

_OPS = [
    "Tx.cta.add(A, A, b)",
    "Tx.cta.mul(A, A, alpha)",
    "Tx.cta.exp(A, A)",
    "Tx.cta.sub(A, A, T.float32(1.0))",
    "Tx.cta.maximum(A, A, B)",
]


def kernel_source(k: int) -> str:
    ln = ["@T.prim_func",
          "def f(X_ptr: T.handle, alpha: T.float32):",
          '    X = T.match_buffer(X_ptr, [16, 64], "float32")',
          "    T.device_entry()",
          "    bx = T.cta_id([1])",
          "    tx = T.thread_id([128])",
          '    A = T.alloc_buffer([16, 64], "float32", scope="shared")',
          '    B = T.alloc_buffer([16, 64], "float32", scope="shared")',
          '    b = T.alloc_buffer([64], "float32", scope="shared")',
          "    for i in T.serial(8):",
          "        A[(i * 128 + tx) // 64, (i * 128 + tx) % 64] = X[(i * 128 + tx) // 64, (i * 128 + tx) % 64]",
          "        B[(i * 128 + tx) // 64, (i * 128 + tx) % 64] = X[(i * 128 + tx) // 64, (i * 128 + tx) % 64]",
          "    if tx < 64:",
          "        b[tx] = X[0, tx]",
          '    T.tvm_storage_sync("shared")']
    ln += [f"    {_OPS[i % len(_OPS)]}" for i in range(k)]
    ln += ["    for i in T.serial(8):",
           "        X[(i * 128 + tx) // 64, (i * 128 + tx) % 64] = A[(i * 128 + tx) // 64, (i * 128 + tx) % 64]"]
    return "\n".join(ln) + "\n"


class Timer:
    """Wraps module attribute `name` of `mod`, summing the seconds spent in
    it and counting the calls (the outermost call only)."""

    def __init__(self, mod, name):
        self.mod, self.name, self.real = mod, name, getattr(mod, name)
        self.spent, self.calls, self.depth = 0.0, 0, 0

        def timed(*a, **kw):
            self.depth += 1
            t = CLOCK()
            try:
                return self.real(*a, **kw)
            finally:
                self.depth -= 1
                if self.depth == 0:
                    self.spent += CLOCK() - t
                    self.calls += 1
        setattr(mod, name, timed)

    def restore(self):
        setattr(self.mod, self.name, self.real)


def compile_once(func, target, bridge: bool):
    """(compile seconds, dispatch seconds, tile calls, {part: seconds})."""
    from tvm.tirx.operator.tile_primitive import dispatcher

    if bridge:
        tdtvm.install(strict=True)
    parts = {}
    if bridge:
        if COLD:
            tdtvm._forget()
        parts = {"to_call": Timer(tdtvm, "_to_call"), "dispatch+emit": None,
                 "build": Timer(tdtvm, "_build_body"), "parse": Timer(tdtvm, "_parse_body")}
        lower = Timer(tdtvm, "_lower")
    outer = Timer(dispatcher, "run_dispatch")
    try:
        t = CLOCK()
        with target:
            tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
        total = CLOCK() - t
    finally:
        outer.restore()
        if bridge:
            lower.restore()
            parts["parse"].restore()
            parts["build"].restore()
            parts["to_call"].restore()
            tdtvm.uninstall()
    out = {}
    if bridge:
        out = {"to_call": parts["to_call"].spent,
               "dispatch+emit": lower.spent - parts["parse"].spent - parts["build"].spent,
               "build": parts["build"].spent, "parse": parts["parse"].spent}
    return total, outer.spent, outer.calls, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--ops", type=int, nargs="+", default=[1, 20])
    ap.add_argument("--cpu", action="store_true",
                    help="the thread's CPU time instead of wall time (a busy machine "
                         "preempting the process does not inflate it)")
    ap.add_argument("--cold", action="store_true",
                    help="forget the bridge's caches (per-text plans, per-object "
                         "conversions) before every compile")
    args = ap.parse_args()
    global CLOCK, COLD
    COLD = args.cold
    if args.cpu:
        CLOCK = time.thread_time
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    print(f"tvm {tvm.__version__}, {args.runs} interleaved runs each, medians, "
          f"{'thread CPU' if args.cpu else 'wall'} time"
          f"{', plans forgotten before each compile' if COLD else ''}")
    for k in args.ops:
        func = tvm.script.parse(kernel_source(k))
        compile_once(func, target, False)   # warm both paths (imports, caches)
        compile_once(func, target, True)
        rows = {False: [], True: []}
        for r in range(args.runs):
            for bridge in ((False, True) if r % 2 == 0 else (True, False)):
                rows[bridge].append(compile_once(func, target, bridge))
        calls = rows[True][0][2]
        assert calls == k and rows[False][0][2] == k, (calls, k)

        def med(bridge, i):
            return statistics.median(r[i] for r in rows[bridge]) * 1e3

        print(f"\n{k} tile op(s) per kernel")
        print(f"  {'':22} {'TVM':>10} {'bridge':>10} {'TVM/bridge':>11}")
        c0, c1 = med(False, 0), med(True, 0)
        d0, d1 = med(False, 1) / k, med(True, 1) / k
        print(f"  {'compile (ms)':22} {c0:10.2f} {c1:10.2f} {c0 / c1:10.2f}x")
        print(f"  {'dispatch / call (ms)':22} {d0:10.3f} {d1:10.3f} {d0 / d1:10.2f}x")
        for part in ("to_call", "dispatch+emit", "build", "parse"):
            v = statistics.median(r[3][part] for r in rows[True]) * 1e3 / k
            print(f"  {'  bridge: ' + part:22} {'':10} {v:10.3f}")


if __name__ == "__main__":
    main()
