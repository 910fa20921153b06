"""Registry.explain / explain_text."""
import json

import pytest

import tiledispatch as td
from conftest import CLI_DATA, SEED, run_cli


def test_explain_rows(reg, seed):
    rows = reg.explain(seed)
    by_name = {r.variant: r for r in rows}
    assert tuple(rows[0])[:3] == ("packed_add_sum", 20, "rejected")
    assert tuple(by_name["local"])[:3] == ("local", 10, "selected")
    assert tuple(by_name["shared"])[:3] == ("shared", 10, "not_tried")
    assert [r.variant for r in rows] == [r.name for r in reg.rules()
                                         if r.op == "sum" and r.target == "cuda"]
    variant, priority, status, reasons = by_name["local"]
    assert reasons == ("2 of 2 predicates passed; the emitter accepted",)
    assert by_name["shared"].reasons == ("an earlier candidate won",)
    preds = rows[0].predicates
    assert [p.name for p in preds][:2] == ["exec_scope", "local_scope"]
    assert all(isinstance(p.ok, bool) for p in preds)
    failed = [p for p in preds if not p.ok]
    assert [f"{p.name}: {p.reason}" for p in failed] == list(rows[0].reasons)
    assert all(p.reason == "" for p in preds if p.ok)
    assert rows[0].message.startswith("rejected: ")
    # Each outcome carries the arguments its rules entry binds, as `rules`
    # lists them.
    rule = next(r for r in reg.rules() if r.op == "sum" and r.name == "local")
    assert [(p.name, p.args) for p in by_name["local"].predicates] == \
        list(rule.predicates)
    assert len(tuple(preds[0])) == 3    # args is an attribute, not an item
    # No built-in predicate has a display name of its own.
    assert all(p.shown == p.name for p in preds)


def test_explain_text_matches_cli(reg, seed, cta_local):
    for call, path in ((seed, SEED), (cta_local, CLI_DATA / "cta_local.yaml")):
        r = run_cli("explain", path)
        assert reg.explain_text(call) == r.stdout
        r = run_cli("explain", path, "--json")
        assert reg.explain_text(call, "json") == r.stdout
        r = run_cli("explain", path, "--format", "tvm")
        assert reg.explain_text(call, format="tvm") == r.stdout


def test_explain_json(reg, seed):
    doc = json.loads(reg.explain_text(seed, "json"))
    assert doc["selected"] == "local"
    assert [c["variant"] for c in doc["candidates"]] == [r.variant for r in reg.explain(seed)]
    assert [c["status"] for c in doc["candidates"]] == [r.status for r in reg.explain(seed)]


def test_explain_errors(reg, seed):
    with pytest.raises(ValueError, match="expected 'text', 'json' or 'tvm'"):
        reg.explain_text(seed, "yaml")
    with pytest.raises(TypeError):
        reg.explain(None)
