"""Registry.dispatch / select / Dispatch.emit against the golden cases and
the command line."""
import pytest

import tiledispatch as td
from conftest import GOLDEN, SEED, run_cli


def golden_cases():
    return sorted(p.stem for p in GOLDEN.glob("*.yaml"))


def parse_expected(text):
    parts, key = {}, None
    for line in text.splitlines(keepends=True):
        if line.startswith("== "):
            key = line[3:].strip()
            parts[key] = ""
        else:
            parts[key] += line
    return parts


def test_seed(reg, seed):
    d = reg.dispatch(seed)
    assert d.variant == "local"
    assert d.impl == "local"
    assert d.priority == 10
    assert d.call is seed and d.registry is reg
    assert d.emit("cuda") == (
        "B_local_ptr[0] = 0.000000e+00f;\n"
        "for (int red = 0; red < 4; ++red) {\n"
        "  B_local_ptr[0] = B_local_ptr[0] + A_local_ptr[red];\n"
        "}\n")
    assert d.emit() == d.emit("cuda")
    assert d.emit("tirx").startswith("for spa in T.serial(1):\n")
    assert repr(d) == "<tiledispatch.Dispatch variant='local' priority=10>"
    assert reg.select(seed) == "local"


@pytest.mark.parametrize("name", golden_cases())
def test_golden(reg, name):
    expected = parse_expected((GOLDEN / f"{name}.expected").read_text())
    d = reg.dispatch(td.Call.from_yaml(GOLDEN / f"{name}.yaml"))
    assert d.variant == expected["variant"].strip()
    assert d.emit("tirx") == expected["tirx"]
    assert d.emit("cuda") == expected["cuda"]


def test_emit_parts_and_indent(reg):
    # A warp reduction needs the CUDA prelude (the shuffle helper).
    calls = [td.Call.from_yaml(GOLDEN / f"{n}.yaml") for n in golden_cases()]
    with_prelude = None
    for c in calls:
        d = reg.dispatch(c)
        prelude, body = d.emit_parts("cuda")
        if prelude:
            with_prelude = d
            assert d.emit("cuda") == prelude + "\n" + body
            assert d.emit("cuda", prelude=False) == body
            break
    assert with_prelude is not None, "no golden case needs a CUDA prelude"
    d = reg.dispatch(td.Call.from_yaml(SEED))
    assert d.emit_parts("tirx") == ("", d.emit("tirx"))
    indented = d.emit("cuda", indent=2)
    assert all(l.startswith("    ") for l in indented.splitlines())
    with pytest.raises(ValueError, match="expected 'cuda' or 'tirx'"):
        d.emit("ptx")
    with pytest.raises(ValueError):
        d.emit("cuda", indent=-1)
    with pytest.raises(TypeError):
        d.emit("cuda", 2)          # indent is keyword-only


def test_dispatch_matches_cli(reg):
    r = run_cli("emit", SEED, "--lang", "cuda")
    assert r.returncode == 0
    assert reg.dispatch(td.Call.from_yaml(SEED)).emit("cuda") == r.stdout


def test_dispatch_type_errors(reg):
    with pytest.raises(TypeError, match="tiledispatch.Call"):
        reg.dispatch("call.yaml")
    with pytest.raises(TypeError):
        reg.dispatch()
    with pytest.raises(TypeError):
        td.Dispatch()


def test_dispatch_result_outlives_registry_and_call():
    reg = td.Registry()
    d = reg.dispatch(td.Call.from_yaml(SEED))
    del reg
    import gc
    gc.collect()
    assert d.variant == "local" and "A_local_ptr" in d.emit()
