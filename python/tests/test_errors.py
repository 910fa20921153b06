"""DispatchError (no match) and the input errors dispatch can raise."""
import pytest

import tiledispatch as td
from conftest import CLI_DATA, DATA, run_cli


def test_no_match_raises_dispatch_error(reg, cta_local):
    with pytest.raises(td.DispatchError) as e:
        reg.dispatch(cta_local)
    err = e.value
    assert isinstance(err, td.Error)
    # Every CUDA sum candidate of the built-in rules, in try order, rejected.
    names = [r.variant for r in err.rows]
    want = [r.name for r in reg.rules() if r.op == "sum" and r.target == "cuda"]
    assert names == want and names[0] == "packed_add_sum"
    assert names.index("local") < names.index("shared")
    assert {r.status for r in err.rows} == {"rejected"}
    assert err.rows[0].reasons == ("exec_scope: unsupported exec_scope cta",
                                   "sm_version: sm_version 90 < 100")
    assert err.reason is None
    assert err.call is cta_local
    assert str(err).startswith("dispatch failed: op=sum target=cuda\n")
    assert err.text == str(err) + "\n"
    assert err.rows == reg.explain(cta_local)
    with pytest.raises(td.DispatchError):
        reg.select(cta_local)


def test_dispatch_error_text_is_the_cli_text(reg, cta_local):
    r = run_cli("dispatch", CLI_DATA / "cta_local.yaml")
    assert r.returncode == 1
    with pytest.raises(td.DispatchError) as e:
        reg.dispatch(cta_local)
    assert e.value.text == r.stderr


def test_forced_unknown_variant(reg):
    call = td.Call.from_yaml(CLI_DATA / "forced_unknown.yaml")
    with pytest.raises(td.DispatchError) as e:
        reg.dispatch(call)
    assert e.value.rows == []
    assert e.value.reason == ("no variant named '__nonexistent__' is registered "
                              "for op=sum target=cuda")
    assert e.value.reason in str(e.value)


def test_unknown_op_is_an_input_error(reg):
    path = CLI_DATA / "unknown_op.yaml"
    call = td.Call.from_yaml(path)
    with pytest.raises(td.InputError) as e:
        reg.dispatch(call)
    err = e.value
    assert (err.path, err.line, err.column) == (str(path), 1, 5)
    assert err.message.startswith("unknown op 'prod' (expected one of: add, ")
    assert err.source_line == "op: prod"          # read back from the file
    r = run_cli("dispatch", path)
    assert r.returncode == 2 and str(err) + "\n" == r.stderr


def test_unknown_op_from_text_shows_the_line(reg):
    call = td.Call.from_text((CLI_DATA / "unknown_op.yaml").read_text(), name="t.yaml")
    with pytest.raises(td.InputError) as e:
        reg.dispatch(call)
    assert e.value.source_line == "op: prod"
    assert str(e.value).splitlines()[1:] == ["  op: prod", "      ^"]
    with pytest.raises(td.InputError):
        reg.explain(call)


def test_no_rules_at_all():
    reg = td.Registry(default_rules=False)
    assert reg.rules() == []
    call = td.Call.from_yaml(CLI_DATA / "sum32.yaml")
    with pytest.raises(td.DispatchError) as e:
        reg.dispatch(call)
    assert e.value.rows == []
    assert e.value.reason.startswith("no registered variants")


def test_disabled_rows(tmp_path):
    reg = td.Registry(rules=[DATA / "disabled_local.yaml"], default_rules=False)
    call = td.Call.from_yaml(CLI_DATA / "sum32.yaml")
    with pytest.raises(td.DispatchError) as e:
        reg.dispatch(call)
    (row,) = e.value.rows
    assert row.status == "disabled" and row.variant == "local"
    assert row.reasons[0].startswith("enabled: false in the rules (")
