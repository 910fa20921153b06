"""Registry construction: built-in rules, rules files, plugins, errors."""
import pytest

import tiledispatch as td
from conftest import CLI_DATA, DATA, ROOT, SEED, run_cli


def test_default_rules(reg):
    rules = reg.rules()
    assert repr(reg) == f"<tiledispatch.Registry with {len(rules)} rules>"
    names = {(r.op, r.name) for r in rules}
    assert ("sum", "local") in names and ("sum", "packed_add_sum") in names
    r = next(r for r in rules if r.name == "local")
    assert r.target == "cuda" and r.impl == "local" and r.enabled is True
    assert r.file in ("rules/rules.yaml", "<built-in rules>") and r.line > 0
    assert r.predicates[0] == ("storage_scope", "{expected_scope: [local]}")
    op, target, name, impl, prio, enabled, preds, file, line = r
    assert (op, name, prio) == (r.op, "local", r.priority)


def test_rules_match_cli(reg):
    import json
    p = run_cli("rules", "--json")
    assert p.returncode == 0
    doc = json.loads(p.stdout)
    entries = doc["rules"] if isinstance(doc, dict) and "rules" in doc else doc
    assert len(entries) == len(reg.rules())


def test_default_rules_text():
    text = td.default_rules()
    assert text == (ROOT / "rules" / "rules.yaml").read_text()


def test_rules_files_alone(seed):
    # default_rules=False: the files make the whole table.
    reg = td.Registry(rules=[DATA / "only_local.yaml"], default_rules=False)
    assert sorted({r.name for r in reg.rules()}) == ["local"]
    assert {r.op for r in reg.rules()} == {"sum", "max", "min"}
    assert reg.dispatch(seed).variant == "local"
    sum32 = td.Call.from_yaml(CLI_DATA / "sum32.yaml").with_arch("sm_100a")
    assert reg.dispatch(sum32).variant == "local"
    assert td.Registry().dispatch(sum32).variant == "packed_add_sum"


def test_rules_files_are_layers(seed):
    reg = td.Registry(rules=[DATA / "raise_shared_overlay.yaml"])
    shared = [r for r in reg.rules() if r.name == "shared"]
    assert shared and all(r.priority == 30 for r in shared)
    assert len(reg.rules()) == len(td.Registry().rules())
    rows = reg.explain(td.Call.from_yaml(CLI_DATA / "cta_local.yaml"))
    assert rows[0].variant == "shared"


def test_bad_rules_file():
    path = DATA / "bad_pred.yaml"
    with pytest.raises(td.InputError) as e:
        td.Registry(rules=[path], default_rules=False)
    assert e.value.path == str(path)
    assert e.value.line == 9 and e.value.column is not None
    assert "no_such_predicate" in e.value.message
    r = run_cli("validate", path)
    assert r.returncode == 2 and r.stderr == str(e.value) + "\n"


def test_missing_rules_file():
    with pytest.raises(td.InputError) as e:
        td.Registry(rules=["/nonexistent/rules.yaml"])
    assert e.value.code == "TD_EIO"


def test_argument_errors():
    with pytest.raises(TypeError, match="list of paths"):
        td.Registry(rules="rules.yaml")
    with pytest.raises(TypeError):
        td.Registry(rules=[42])
    with pytest.raises(TypeError):
        td.Registry([], [], True)          # default_rules is keyword-only


def test_plugin(pairwise_plugin, seed):
    rules = ROOT / "examples" / "rules-with-pairwise.yaml"
    reg = td.Registry(rules=[rules], plugins=[pairwise_plugin])
    assert "pairwise" in {r.name for r in reg.rules()}
    d = reg.dispatch(seed)
    assert d.variant == "pairwise"
    assert d.emit("cuda")
    # Without the plugin, its rules do not load.
    with pytest.raises(td.InputError, match="src_len_at_most|pairwise"):
        td.Registry(rules=[rules])


def test_bad_plugin(tmp_path):
    with pytest.raises(td.InputError) as e:
        td.Registry(plugins=[tmp_path / "missing.so"])
    assert e.value.code == "TD_EIO"
    notso = tmp_path / "not.so"
    notso.write_text("not a shared object")
    with pytest.raises(td.InputError):
        td.Registry(plugins=[notso])


def test_plugin_loader_errors():
    """The loader's refusals (built by meson next to the example plugin)."""
    import os
    from pathlib import Path
    p = os.environ.get("TD_PLUGIN_PAIRWISE")
    if not p:
        pytest.skip("TD_PLUGIN_PAIRWISE not set (scripts/test-python sets it from build/)")
    d = Path(p).parent
    for name, code in (("bad_abi", "TD_ESCHEMA"), ("no_abi", "TD_ESCHEMA"),
                       ("taken_name", "TD_EEXIST")):
        with pytest.raises(td.InputError) as e:
            td.Registry(plugins=[d / f"libplugin_{name}.so"])
        assert e.value.code == code, (name, str(e.value))
    # A failing init leaves nothing registered: the registry still works.
    with pytest.raises(td.Error):
        td.Registry(plugins=[d / "libplugin_failing_init.so"])
    assert td.Registry(plugins=[p]).dispatch(td.Call.from_yaml(SEED)).variant == "local"


def test_environment_rules(monkeypatch, seed):
    """TILEDISPATCH_RULES layers load before rules=, as on the command line."""
    overlay = DATA / "raise_shared_overlay.yaml"
    monkeypatch.setenv("TILEDISPATCH_RULES", f"{overlay}::")
    reg = td.Registry()
    shared = [r for r in reg.rules() if r.name == "shared"]
    assert shared and all(r.priority == 30 for r in shared)
    assert reg.listing() == run_cli_env("rules").stdout
    plain = td.Registry(environment=False)
    assert all(r.priority != 30 for r in plain.rules() if r.name == "shared")
    # The variable's layers come first: rules= goes over them.
    monkeypatch.setenv("TILEDISPATCH_RULES", "/nonexistent/env.yaml")
    with pytest.raises(td.InputError) as e:
        td.Registry(rules=[overlay])
    assert e.value.path == "/nonexistent/env.yaml"
    # --no-default-rules keeps the variable's layers too.
    monkeypatch.setenv("TILEDISPATCH_RULES", str(DATA / "only_local.yaml"))
    reg = td.Registry(default_rules=False)
    assert sorted({r.name for r in reg.rules()}) == ["local"]
    assert reg.dispatch(seed).variant == "local"


def test_environment_plugins(monkeypatch, pairwise_plugin, seed):
    rules = ROOT / "examples" / "rules-with-pairwise.yaml"
    monkeypatch.setenv("TILEDISPATCH_PLUGINS", f":{pairwise_plugin}")
    reg = td.Registry(rules=[rules])
    assert "pairwise" in {r.name for r in reg.rules()}
    with pytest.raises(td.InputError):
        td.Registry(rules=[rules], environment=False)
    monkeypatch.setenv("TILEDISPATCH_PLUGINS", f"/nonexistent.so:{pairwise_plugin}")
    with pytest.raises(td.InputError) as e:
        td.Registry()
    assert "/nonexistent.so" in str(e.value) and "cannot load plugin" in str(e.value)


def run_cli_env(*args):
    """The command line with this process's environment (the variables the
    test set), unlike run_cli, which clears them."""
    import os
    import subprocess
    from conftest import cli_path
    exe = cli_path()
    if exe is None:
        pytest.skip("no tiledispatch command line built (set TD_CLI or build build/)")
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True,
                          env=dict(os.environ))


@pytest.mark.parametrize("what", ["rules", "predicates", "impls"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_listing_matches_cli(reg, what, fmt):
    args = [what] + (["--json"] if fmt == "json" else [])
    p = run_cli(*args)
    assert p.returncode == 0
    assert reg.listing(what, fmt) == p.stdout


def test_listing_errors(reg):
    with pytest.raises(ValueError, match="what 'layers'"):
        reg.listing("layers")
    with pytest.raises(ValueError, match="format 'yaml'"):
        reg.listing("rules", "yaml")


def test_has_op():
    """has_op: the ops a call may name, built-in whatever the rules."""
    reg = td.Registry()
    assert reg.has_op("exp") and reg.has_op("sum") and reg.has_op("fma")
    assert reg.has_op("copy") and reg.has_op("gemm")   # gemm: no variant yet
    assert not reg.has_op("binary_chain") and not reg.has_op("")
    assert td.Registry(default_rules=False, environment=False).has_op("exp")
    with pytest.raises(TypeError):
        reg.has_op(3)
