"""Reference counting and memory: 100 000 dispatches (and the error paths)
leave reference counts unchanged and the process's memory bounded.

Python-side allocations are watched with tracemalloc; the library's own
allocations (malloc, outside tracemalloc's view) through the resident set
size after a warm-up."""
import gc
import sys
import tracemalloc

import pytest

import tiledispatch as td
from conftest import CLI_DATA


def rss_kib():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import os
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="RSS is read from /proc (Linux)")


def run_bounded(fn, n, rss_slack_kib=2048, py_slack=64 * 1024):
    for _ in range(2000):          # warm-up: caches, free lists, arenas
        fn()
    gc.collect()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    rss0 = rss_kib()
    for _ in range(n):
        fn()
    gc.collect()
    rss1 = rss_kib()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    assert grown < py_slack, f"Python heap grew by {grown} bytes over {n} runs"
    assert rss1 - rss0 < rss_slack_kib, f"RSS grew by {rss1 - rss0} KiB over {n} runs"


def test_refcounts_stable(reg, seed):
    before = (sys.getrefcount(reg), sys.getrefcount(seed))
    for _ in range(1000):
        d = reg.dispatch(seed)
        d.emit("cuda")
        reg.explain(seed)
    del d
    assert (sys.getrefcount(reg), sys.getrefcount(seed)) == before


def test_100k_dispatches(reg, seed):
    def fn():
        reg.dispatch(seed).variant
    run_bounded(fn, 100_000)


def test_dispatch_and_emit(reg, seed):
    def fn():
        reg.dispatch(seed).emit("cuda")
    run_bounded(fn, 20_000)


def test_no_match_path(reg, cta_local):
    def fn():
        try:
            reg.dispatch(cta_local)
        except td.DispatchError:
            pass
    run_bounded(fn, 5_000)


def test_input_error_paths(reg):
    bad = (CLI_DATA / "bad_dtype.yaml").read_text()
    unknown = td.Call.from_yaml(CLI_DATA / "unknown_op.yaml")

    def fn():
        try:
            td.Call.from_text(bad)
        except td.InputError:
            pass
        try:
            reg.dispatch(unknown)
        except td.InputError:
            pass
    run_bounded(fn, 5_000)


def test_objects_freed(seed):
    def fn():
        r = td.Registry()
        c = td.Call.from_text("op: sum\ntarget: cuda\nbuffers:\n"
                              "  A: {scope: local, dtype: float32, shape: [4]}\n"
                              "  B: {scope: local, dtype: float32, shape: [1]}\n"
                              "dst: B\nsrc: A\n")
        r.dispatch(c).emit("tirx")
        r.rules()
        r.explain(c)
        c.with_arch("sm_100a")
    run_bounded(fn, 3_000)
