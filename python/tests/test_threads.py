"""One registry and one call shared by many threads (the GIL is released
while C works, so these run the library concurrently)."""
import threading

import tiledispatch as td
from conftest import CLI_DATA, DATA, GOLDEN


def test_shared_objects_across_threads(reg):
    calls = [td.Call.from_yaml(p) for p in sorted(GOLDEN.glob("*.yaml"))[:40]]
    expected = [(reg.select(c), reg.dispatch(c).emit("cuda")) for c in calls]
    nomatch = td.Call.from_yaml(CLI_DATA / "cta_local.yaml")
    nrows = len(reg.explain(nomatch))
    errors = []
    barrier = threading.Barrier(8)

    def work(k):
        try:
            barrier.wait()
            for rnd in range(25):
                for i, c in enumerate(calls):
                    d = reg.dispatch(c)
                    if (i + k + rnd) % 7 == 0:
                        assert (d.variant, d.emit("cuda")) == expected[i]
                    assert d.variant == expected[i][0]
                try:
                    reg.dispatch(nomatch)
                except td.DispatchError as e:
                    assert len(e.rows) == nrows
                else:
                    raise AssertionError("no DispatchError")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_one_dispatch_printed_from_many_threads(reg, seed):
    d = reg.dispatch(seed)
    want = d.emit("tirx")
    out = []

    def work():
        out.extend(d.emit("tirx") for _ in range(200))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [want] * 800


def test_registries_built_concurrently():
    regs = []

    def work():
        regs.append(td.Registry(rules=[DATA / "only_local.yaml"], default_rules=False))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(regs) == 6 and all(len(r.rules()) == 3 for r in regs)


def _main_thread_runs_during(work):
    """Whether this thread gets to run Python while `work` runs in another
    thread, with a switch interval so long that the interpreter never
    takes the GIL from a thread that holds it: only a thread that releases
    it (as C code does around blocking or long work) lets this one in."""
    import sys
    import time

    state = {"done": False}

    def worker():
        work()
        state["done"] = True

    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        t = threading.Thread(target=worker)
        t.start()
        time.sleep(0.05)            # let the worker start; then ask for the GIL back
        ran_during = not state["done"]
        t.join()
    finally:
        sys.setswitchinterval(old)
    return ran_during


def test_gil_is_released_while_dispatching(reg, seed):
    import time

    def pure_python():               # the control: holds the GIL throughout
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            pass

    def dispatching():
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            reg.dispatch(seed)

    assert not _main_thread_runs_during(pure_python)
    assert _main_thread_runs_during(dispatching)
