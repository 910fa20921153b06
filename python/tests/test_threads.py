"""One registry and one call shared by many threads (the GIL is released
while C works, so these run the library concurrently)."""
import threading

import tiledispatch as td
from conftest import CLI_DATA, DATA, GOLDEN


def test_shared_objects_across_threads(reg):
    calls = [td.Call.from_yaml(p) for p in sorted(GOLDEN.glob("*.yaml"))[:40]]
    expected = [(reg.select(c), reg.dispatch(c).emit("cuda")) for c in calls]
    nomatch = td.Call.from_yaml(CLI_DATA / "cta_local.yaml")
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
                    assert len(e.rows) == 3
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
