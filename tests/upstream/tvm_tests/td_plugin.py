"""The pytest plugin that runs TVM's own tile-primitive tests (vendored,
unmodified, under tests/python/ beside this file) with or without the
tiledispatch bridge.

Every adaptation the vendored files need lives here, so that they stay
byte-for-byte what apache/tvm ships:

* TVM's tests skip unless a CUDA device is present (``env.has_cuda()`` in
  their skipif marks, evaluated at import) and the upstream conftest skips
  the whole folder below compute capability 10.0.  This machine has no
  GPU, so ``has_cuda`` answers True and the conftest's blanket gate is
  lifted: each item then compiles its kernel (``tvm.compile``, nvcc
  included) and only the part that needs a device is deferred.  Items that
  gate themselves on the target's arch (the sm_100 packed paths) still do.
* ``tvm.target.Target("cuda")`` would ask the (absent) device for its arch
  and fall back to sm_50; it means ``--td-arch`` here (sm_90a: the H200).
* ``tvm.testing.run_with_gpu_lock(run_and_check)`` is where each test runs
  its kernel and compares with numpy.  Without a GPU it is not run; with
  ``--td-export DIR`` it runs against stand-in tensors that record the
  inputs, and the compiled library is exported, for the GPU half
  (gpu_run.py runs the libraries on the H200; ``--td-gpu-results DIR``
  then replays ``run_and_check`` here with the GPU's outputs, so TVM's own
  assertions judge them).
* Many items draw their inputs with numpy's global generator, unseeded
  (``np.random.rand``), and compute their reference from them.  The
  export and the replay are two processes that run different sets of
  items in different orders, so such an item would compare the GPU's
  output for one input with the reference of another.  Every item
  therefore starts from a seed of its own (from its node id): it draws
  the same inputs wherever and in whatever company it runs.  The replay
  also compares each input the item gives the kernel with the one the
  GPU ran on (``KEY.TAG.sent.json``, gpu_run.py's digest of each), bit
  for bit, and fails the item where they differ, so that a replay's PASS
  is TVM's own check of the output for the input it was computed from.
* ``--td-bridge on`` installs ``tiledispatch.tvm`` before collection;
  each item's report line (``--td-report FILE``, JSON lines) says which
  variant tiledispatch chose for each op and which calls went back to TVM.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

_GATE = "requires a CUDA compute capability 10.0 device"
# Dtypes numpy has only through ml_dtypes: exported as their bits.
_BITS = {"bfloat16": "uint16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8"}


def pytest_addoption(parser: Any) -> None:
    g = parser.getgroup("tiledispatch")
    g.addoption("--td-bridge", choices=("on", "off"), default="on",
                help="install tiledispatch.tvm (on) or run plain TVM (off)")
    g.addoption("--td-arch", default="sm_90a",
                help="the arch Target('cuda') means (default sm_90a, the H200)")
    g.addoption("--td-report", default=None, help="write one JSON line per item here")
    g.addoption("--td-export", default=None,
                help="export each item's compiled library and inputs under this folder")
    g.addoption("--td-gpu-results", default=None,
                help="replay run_and_check with the outputs gpu_run.py wrote here")
    g.addoption("--td-tmem-addr-const", action="store_true",
                help="a diagnostic: declare every tmem buffer at address 0 (the tests' "
                     "allocated_addr=tmem_addr[0] fails inside tvm.compile, D5), to see "
                     "what fails behind it")


class _HandBacks:
    """Collects the bridge's hand-back log lines (logger tiledispatch.tvm)
    of the item running now."""

    lines: list = []

    @classmethod
    def handler(cls) -> Any:
        import logging

        class H(logging.Handler):
            def emit(self, record: Any) -> None:
                cls.lines.append(record.getMessage()[:300])

        return H(level=logging.INFO)


class _State:
    item: Any = None          # the item running now
    compiled: list = []       # the Executables tvm.compile returned for it
    gpu_half = "none"         # what happened to its run_and_check
    export: Path | None = None
    results: Path | None = None
    report: Any = None


def _item_key(nodeid: str) -> str:
    """A file-name-safe key for a test id."""
    import zlib

    name = re.sub(r"[^A-Za-z0-9_-]+", "_", nodeid.split("::", 1)[-1])[:120]
    return f"{name}-{zlib.crc32(nodeid.encode()):08x}"


class _FakeTensor:
    """Stands for a tvm.runtime.Tensor of a CUDA device: holds its data on
    the host (the inputs to record, or the GPU's outputs to check)."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = np.array(data, copy=True)
        self.shape = self.data.shape
        self.dtype = str(self.data.dtype)

    def numpy(self) -> np.ndarray:
        return self.data.copy()


class _Compiled:
    """tvm.compile's result, as the test sees it: attribute access passes
    through; a call with stand-in tensors is recorded (export) or answered
    from the GPU's outputs (replay)."""

    def __init__(self, exe: Any) -> None:
        object.__setattr__(self, "_exe", exe)
        object.__setattr__(self, "_calls", 0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._exe, name)

    def __getitem__(self, name: str) -> Any:
        real = self._exe[name]

        def call(*args: Any) -> Any:
            if not any(isinstance(a, _FakeTensor) for a in args):
                return real(*args)
            return self._run(name, args)

        return call

    def __call__(self, *args: Any) -> Any:
        return self._run("main", args)

    def _run(self, fn: str, args: tuple) -> Any:
        n = self._calls
        object.__setattr__(self, "_calls", n + 1)
        idx = _State.compiled.index(self)
        tag = f"m{idx}c{n}"
        key = _item_key(_State.item.nodeid)
        if _State.results is not None:
            path = _State.results / f"{key}.{tag}.out.npz"
            if not path.exists():
                pytest.skip(f"GPU half: no GPU output {path.name}")
            out = np.load(path)
            sent = _State.results / f"{key}.{tag}.sent.json"
            if not sent.exists():
                pytest.fail(f"GPU half: no {sent.name} (what the GPU ran on; results of "
                            "an older gpu_run.py?): the test's reference cannot be "
                            "matched with the GPU's input", pytrace=False)
            _check_inputs(args, json.loads(sent.read_text()), sent.name)
            for i, a in enumerate(args):
                if isinstance(a, _FakeTensor) and f"a{i}" in out:
                    got = out[f"a{i}"]
                    if got.dtype != a.data.dtype and got.dtype.itemsize == a.data.dtype.itemsize:
                        got = got.view(a.data.dtype)   # bits of an ml_dtypes array
                    a.data = got
            _State.gpu_half = "checked against the GPU's outputs"
            return None
        if _State.export is not None:
            lib = _State.export / f"{key}.{tag}.so"
            self._exe.export_library(str(lib))
            arrays, spec, dtypes = {}, [], {}
            for i, a in enumerate(args):
                if isinstance(a, _FakeTensor):
                    name = a.data.dtype.name
                    if name in _BITS:  # ml_dtypes: saved as their bits
                        arrays[f"a{i}"] = a.data.view(_BITS[name])
                        dtypes[str(i)] = name
                    else:
                        arrays[f"a{i}"] = a.data
                    spec.append("tensor")
                elif isinstance(a, (int, float, np.number)):
                    spec.append(a.item() if isinstance(a, np.number) else a)
                else:
                    raise _NotExportable(f"argument {i} is a {type(a).__name__}")
            np.savez(_State.export / f"{key}.{tag}.in.npz", **arrays)
            with open(_State.export / "manifest.jsonl", "a") as f:
                f.write(json.dumps({"key": key, "tag": tag, "lib": lib.name, "fn": fn,
                                    "args": spec, "dtypes": dtypes,
                                    "nodeid": _State.item.nodeid}) + "\n")
            _State.gpu_half = "exported for the GPU"
            raise _Recorded()
        raise _Deferred()


def _check_inputs(args: tuple, sent: dict, what: str) -> None:
    """Fails the item unless every stand-in tensor the replay passes the
    kernel holds the array the GPU ran it on (`sent`: gpu_run.py's digest
    of each, bit for bit): TVM's check would otherwise judge the GPU's
    output against the reference of another input."""
    from gpu_run import input_digest

    for i, a in enumerate(args):
        if not isinstance(a, _FakeTensor) or f"a{i}" not in sent:
            continue
        got, want = input_digest(a.data), sent[f"a{i}"]
        if got != want:
            differ = ("another shape or dtype" if got["shape"] != want["shape"]
                      or got["itemsize"] != want["itemsize"] else "other bits")
            pytest.fail(f"GPU half: argument {i} of the replay is not the input the GPU ran "
                        f"on ({what}: {differ}); the test's reference would not be the GPU's",
                        pytrace=False)


def _seed(nodeid: str) -> None:
    """numpy's and Python's global generators seeded from the item's id."""
    import random
    import zlib

    seed = zlib.crc32(nodeid.encode())
    np.random.seed(seed)
    random.seed(seed)


class _Recorded(Exception):
    pass


class _Deferred(Exception):
    pass


class _NotExportable(Exception):
    pass


def _patch_tvm(config: Any) -> None:
    import tvm
    import tvm.runtime
    import tvm.target
    import tvm.testing
    from tvm.testing import env

    arch = config.getoption("--td-arch")
    env.has_cuda = lambda: True
    # The folder's conftest asks for compute 10.0; the items that need it
    # read the target's arch themselves.
    env.has_cuda_compute = lambda major, minor=0, exact=False: (
        (int(re.sub(r"\D", "", arch)[:-1] or 0), int(re.sub(r"\D", "", arch)[-1]))
        >= (major, minor) if not exact else False)

    target_init = tvm.target.Target.__init__

    def init(self: Any, target: Any, host: Any = None) -> None:
        if target == "cuda":
            target = {"kind": "cuda", "arch": arch}
        target_init(self, target, host)

    tvm.target.Target.__init__ = init

    real_compile = tvm.compile

    def compile_(*args: Any, **kwargs: Any) -> Any:
        out = _Compiled(real_compile(*args, **kwargs))
        _State.compiled.append(out)
        return out

    tvm.compile = compile_

    real_tensor = tvm.runtime.tensor

    def run_with_gpu_lock(func: Any, *args: Any, **kwargs: Any) -> Any:
        tvm.runtime.tensor = lambda data, dev=None, **kw: _FakeTensor(data)
        try:
            return func(*args, **kwargs)
        except (_Recorded, _Deferred):
            if _State.gpu_half == "none":
                _State.gpu_half = "needs a GPU (not run here)"
            return None
        except _NotExportable as e:
            _State.gpu_half = f"not exportable: {e}"
            return None
        finally:
            tvm.runtime.tensor = real_tensor

    tvm.testing.run_with_gpu_lock = run_with_gpu_lock

    if config.getoption("--td-tmem-addr-const"):
        _tmem_addr_const()


def _tmem_addr_const() -> None:
    """`T.decl_buffer(..., allocated_addr=tmem_addr[0])` (the address
    tcgen05.alloc wrote to shared memory) fails in tvm.compile whatever
    the kernel does with the buffer (SplitHostDevice passes the shared
    buffer to the kernel as a host argument, and MakePackedAPI finds
    `tmem_addr.source` undefined: docs/upstream.md, D5).  For a
    diagnostic run, any address that is not a constant becomes 0, so
    that what the item compiles behind that failure shows."""
    import tvm.script.tirx
    import tvm.tirx.script.builder.ir as ir
    from tvm.tirx import IntImm

    real = ir.decl_buffer

    def decl_buffer(*args: Any, allocated_addr: Any = None, **kwargs: Any) -> Any:
        if allocated_addr is not None and not isinstance(allocated_addr, (int, IntImm)):
            allocated_addr = 0
        return real(*args, allocated_addr=allocated_addr, **kwargs)

    ir.decl_buffer = decl_buffer
    tvm.script.tirx.decl_buffer = decl_buffer


def pytest_configure(config: Any) -> None:
    if not hasattr(config.option, "td_bridge"):
        return
    _patch_tvm(config)
    if config.getoption("--td-export"):
        _State.export = Path(config.getoption("--td-export"))
        _State.export.mkdir(parents=True, exist_ok=True)
    if config.getoption("--td-gpu-results"):
        _State.results = Path(config.getoption("--td-gpu-results"))
    if config.getoption("--td-report"):
        _State.report = open(config.getoption("--td-report"), "w")
    if config.getoption("--td-bridge") == "on":
        import logging

        import tiledispatch.tvm as tdtvm

        tdtvm.install()
        log = logging.getLogger("tiledispatch.tvm")
        log.setLevel(logging.INFO)
        log.addHandler(_HandBacks.handler())


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(items: list) -> Any:
    yield
    # After the vendored conftest: lift its blanket compute-10.0 gate.
    for item in items:
        item.own_markers = [m for m in item.own_markers
                            if not (m.name == "skip" and m.kwargs.get("reason") == _GATE)]


def _on_cuda(dev: Any) -> bool:
    try:
        return dev is None or int(dev.dlpack_device_type()) == 2   # kDLCUDA
    except (AttributeError, TypeError, ValueError):
        return False


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: Any) -> Any:
    """Some tests (copy's forced-vec and register paths) run their kernel
    on `tvm.cuda(0)` directly, outside run_with_gpu_lock: for the whole
    test a CUDA tensor is a stand-in too, and the first kernel call ends
    the test as run_with_gpu_lock ends run_and_check (recorded for the
    GPU half, or deferred), after the asserts on the generated code."""
    import tvm.runtime

    real_tensor = tvm.runtime.tensor

    def tensor(data: Any, dev: Any = None, *args: Any, **kwargs: Any) -> Any:
        if _on_cuda(dev):
            return _FakeTensor(data)
        return real_tensor(data, dev, *args, **kwargs)

    tvm.runtime.tensor = tensor
    try:
        return (yield)
    except (_Recorded, _Deferred):
        if _State.gpu_half == "none":
            _State.gpu_half = "needs a GPU (not run here)"
        return True
    except _NotExportable as e:
        _State.gpu_half = f"not exportable: {e}"
        return True
    finally:
        tvm.runtime.tensor = real_tensor


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Any:
    _State.item, _State.compiled, _State.gpu_half = item, [], "none"
    _seed(item.nodeid)
    bridge = item.config.getoption("--td-bridge") == "on"
    if bridge:
        import tiledispatch.tvm as tdtvm

        tdtvm.reset_stats()
    _HandBacks.lines = []
    yield
    if bridge:
        stats = tdtvm.stats()
        item.user_properties.append(("td_dispatched", stats["dispatched"]))
        item.user_properties.append(("td_handed_back", stats["handed_back"]))
        item.user_properties.append(("td_log", list(_HandBacks.lines)))
    item.user_properties.append(("gpu_half", _State.gpu_half))


def pytest_runtest_logreport(report: Any) -> None:
    if _State.report is None:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        props = dict(report.user_properties)
        line = {"nodeid": report.nodeid, "outcome": report.outcome,
                "dispatched": props.get("td_dispatched"),
                "handed_back": props.get("td_handed_back"),
                "gpu_half": props.get("gpu_half")}
        if props.get("td_log"):
            line["log"] = props["td_log"]
        if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
            line["reason"] = report.longrepr[2]
        elif report.outcome == "failed":
            crash = getattr(report.longrepr, "reprcrash", None)
            msg = crash.message if crash is not None else str(report.longrepr)
            line["reason"] = " ".join(msg.split())[:300]
        _State.report.write(json.dumps(line) + "\n")
        _State.report.flush()


def pytest_unconfigure(config: Any) -> None:
    if _State.report is not None:
        _State.report.close()
        _State.report = None
