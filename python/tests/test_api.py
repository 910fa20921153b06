"""The package surface: help() texts, signatures, the type stubs."""
import ast
import inspect
from pathlib import Path

import tiledispatch as td


def test_version():
    assert td.__version__ == td.library_version
    assert td.__version__.count(".") == 2


def test_docstrings_and_signatures():
    for obj in (td.Registry, td.Call, td.Dispatch, td.DispatchError, td.InputError,
                td.Registry.dispatch, td.Registry.explain, td.Registry.explain_text,
                td.Registry.select, td.Registry.rules, td.Call.from_yaml,
                td.Call.from_text, td.Call.with_arch, td.Dispatch.emit,
                td.Dispatch.emit_parts, td.default_rules, td.ExplainRow):
        assert obj.__doc__ and len(obj.__doc__) > 20, obj
    assert str(inspect.signature(td.Registry.dispatch)) == "(self, call, /)"
    assert str(inspect.signature(td.Dispatch.emit)) == \
        "(self, /, lang='cuda', *, indent=0, prelude=True)"
    assert "default_rules=True" in str(inspect.signature(td.Registry))
    assert td.__doc__ and "Registry" in td.__doc__


def test_help_renders():
    import pydoc
    text = pydoc.render_doc(td, renderer=pydoc.plaintext)
    for name in ("Registry", "Call", "Dispatch", "DispatchError", "InputError"):
        assert name in text


def test_stubs_cover_the_module():
    stub = Path(td.__file__).with_name("_core.pyi")
    assert stub.exists() and Path(td.__file__).with_name("py.typed").exists()
    tree = ast.parse(stub.read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    public = {n for n in dir(td._core) if not n.startswith("_") or n == "__version__"}
    assert public <= names, public - names
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for cls in ("Registry", "Call", "Dispatch"):
        stubbed = {f.name for f in classes[cls].body if isinstance(f, ast.FunctionDef)}
        real = {n for n in dir(getattr(td, cls)) if not n.startswith("_")}
        assert real <= stubbed, (cls, real - stubbed)


def test_stubs_match_the_extension():
    """mypy's stubtest: every name, signature and class flag of _core.pyi
    agrees with the built extension."""
    import subprocess
    import sys

    import pytest
    pytest.importorskip("mypy", reason="mypy not installed (scripts/test-python installs it)")
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "tiledispatch._core"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
