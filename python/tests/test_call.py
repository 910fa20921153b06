"""Call: from_yaml, from_text, keywords, properties, with_arch, and every
way a call can be refused."""
import os
import pathlib

import pytest

import tiledispatch as td
from conftest import CLI_DATA, ROOT, SEED

SEED_KW = dict(
    op="sum", target="cuda", arch="sm_90a", scope="thread",
    launch={"threadIdx.x": 1},
    buffers={"A_local": {"scope": "local", "dtype": "float32", "shape": [4]},
             "B_local": {"scope": "local", "dtype": "float32", "shape": [1]}},
    dst="B_local", src="A_local", axes=[-1], accum=False)


def test_from_yaml_fields(seed):
    assert seed.op == "sum"
    assert seed.target == "cuda"
    assert seed.arch == "sm_90a"
    assert seed.sm_version == 90
    assert seed.scope == "thread"
    assert seed.launch == {"threadIdx.x": 1}
    assert seed.buffers == {
        "A_local": {"scope": "local", "dtype": "float32", "shape": (4,)},
        "B_local": {"scope": "local", "dtype": "float32", "shape": (1,)}}
    assert seed.dst == "B_local[0:1]"
    assert seed.src == "A_local[0:4]"
    assert seed.axes == (-1,)
    assert seed.accum is False
    assert seed.config == {}
    assert seed.dispatch is None
    assert seed.file == str(SEED)
    assert seed.script == "Tx.sum(B_local[0:1], A_local[0:4], axes=[-1], accum=False)"
    assert "Tx.sum(B_local[0:1]" in repr(seed) and "arch=sm_90a" in repr(seed)


def test_from_yaml_accepts_pathlike_and_str():
    a = td.Call.from_yaml(str(SEED))
    b = td.Call.from_yaml(pathlib.Path(SEED))
    c = td.Call.from_yaml(os.fsencode(SEED))
    assert a.script == b.script == c.script


def test_from_text_str_and_bytes():
    text = SEED.read_text()
    a = td.Call.from_text(text)
    b = td.Call.from_text(text.encode(), name="seed.yaml")
    assert a.file == "<text>" and b.file == "seed.yaml"
    assert a.script == b.script == td.Call.from_yaml(SEED).script


def test_keywords_equal_the_file(reg, seed):
    c = td.Call(**SEED_KW)
    assert c.script == seed.script
    assert c.buffers == seed.buffers and c.launch == seed.launch
    assert reg.dispatch(c).emit("cuda") == reg.dispatch(seed).emit("cuda")
    c2 = td.Call(**SEED_KW, config={"thread_reduce": False, "n": 3, "mode": "x"})
    assert c2.config == {"thread_reduce": False, "n": 3, "mode": "x"}


def test_keywords_layout_region_dispatch():
    # target defaults to "cuda" for keyword calls.
    c = td.Call(op="max", scope="warp", launch={"threadIdx.x": 32},
                buffers={"A": {"scope": "local", "dtype": "float16", "shape": [32, 4],
                               "layout": "S[(32, 4) : (1@laneid, 1)]"},
                         "B": {"scope": "local", "dtype": "float16", "shape": [32]}},
                dst="B[0:32]", src="A[0:32, 0:4]", axes=[1], accum=True, dispatch="local")
    assert c.buffers["A"]["layout"] == "S[(32, 4) : (1@laneid, 1)]"
    assert c.dispatch == "local" and c.accum is True and c.axes == (1,)
    assert c.src == "A[0:32, 0:4]" and c.target == "cuda"


def test_dispatch_names_with_arrows():
    # TVM names tensor-memory copies smem->tmem and tmem<->local: one name.
    kw = dict(op="copy_async", arch="sm_90a", scope="thread",
              buffers={"A": {"scope": "global", "dtype": "float32", "shape": [8]},
                       "S": {"scope": "shared", "dtype": "float32", "shape": [8]}},
              dst="S[0:8]", src="A[0:8]")
    assert td.Call(**kw, dispatch="smem->tmem").dispatch == "smem->tmem"
    assert td.Call(**kw, dispatch="tmem<->local").dispatch == "tmem<->local"
    for bad in ("smem-tmem", "smem->", "a<-b"):
        with pytest.raises(td.Error, match="'dispatch' must be a variant name"):
            td.Call(**kw, dispatch=bad)


def test_with_arch(seed):
    c = seed.with_arch("sm_100a")
    assert c.arch == "sm_100a" and c.sm_version == 100
    assert seed.arch == "sm_90a"          # the original is unchanged
    with pytest.raises(ValueError, match="expected sm_NN"):
        seed.with_arch("volta")
    with pytest.raises(TypeError):
        seed.with_arch(90)


def test_calls_are_immutable(seed):
    with pytest.raises(AttributeError):
        seed.op = "max"


def test_missing_file():
    with pytest.raises(td.InputError) as e:
        td.Call.from_yaml("/nonexistent/call.yaml")
    assert e.value.path == "/nonexistent/call.yaml"
    assert e.value.code == "TD_EIO"
    assert isinstance(e.value, ValueError) and isinstance(e.value, td.Error)


def test_positioned_error_from_file():
    with pytest.raises(td.InputError) as e:
        td.Call.from_yaml(CLI_DATA / "bad_dtype.yaml")
    err = e.value
    assert err.path == str(CLI_DATA / "bad_dtype.yaml")
    assert (err.line, err.column) == (4, 28)
    assert "float8" in err.message
    assert err.source_line == "  A: {scope: local, dtype: float8, shape: [4]}"
    lines = str(err).split("\n")
    assert lines[0].startswith(f"{err.path}:4:28: error: ")
    assert lines[2].strip() == "^"


def test_error_text_matches_cli():
    from conftest import run_cli
    r = run_cli("dispatch", CLI_DATA / "bad_dtype.yaml")
    assert r.returncode == 2
    with pytest.raises(td.InputError) as e:
        td.Call.from_yaml(CLI_DATA / "bad_dtype.yaml")
    assert str(e.value) + "\n" == r.stderr


def test_parse_errors_from_text():
    with pytest.raises(td.InputError) as e:
        td.Call.from_text("op: sum\nfoo: 1\n", name="mine.yaml")
    assert (e.value.path, e.value.line, e.value.column) == ("mine.yaml", 2, 1)
    assert e.value.code == "TD_ESCHEMA"
    with pytest.raises(td.InputError) as e:
        td.Call.from_text("op: [unclosed\n")
    assert e.value.code == "TD_EPARSE" and e.value.line is not None
    with pytest.raises(td.InputError):
        td.Call.from_text("")
    with pytest.raises(TypeError):
        td.Call.from_text(42)
    with pytest.raises(UnicodeDecodeError):
        td.Call.from_text(b"\xff\xfe")


def test_keyword_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        td.Call(**SEED_KW, colour="red")
    with pytest.raises(TypeError, match="keyword arguments only"):
        td.Call("sum")
    with pytest.raises(TypeError, match="plain data"):
        td.Call(**dict(SEED_KW, config={"x": object()}))
    kw = dict(SEED_KW)
    kw["buffers"] = {"A_local": {"scope": "local", "dtype": "float33", "shape": [4]},
                     "B_local": {"scope": "local", "dtype": "float32", "shape": [1]}}
    with pytest.raises(td.InputError) as e:
        td.Call(**kw)
    assert e.value.path == "<Call>" and "float33" in str(e.value)
    assert "float33" in e.value.source_line
    kw = dict(SEED_KW)
    del kw["op"]
    with pytest.raises(td.InputError, match="op"):
        td.Call(**kw)


def test_keyword_document_is_json_with_one_key_a_line():
    """Call(**kw) writes its document as json.dumps(doc, indent=1) would (in
    C, for speed): an error about the last field is positioned on the line
    json gives it, whatever the values before it (escapes, non-ASCII,
    floats, int subclasses, tuples, empty containers, non-string keys)."""
    import enum
    import json

    class Width(enum.IntEnum):
        WIDE = 7

    order = ("op", "target", "arch", "scope", "launch", "buffers", "dst", "src", "axes",
             "accum", "config")
    ok = {"quote": 'back\\slash "q" caf\u00e9 \n\t', "big": 2 ** 40, "enum": Width.WIDE,
          "yes": True}
    # Each config is refused at its last entry (config values are ints,
    # booleans and strings): the error quotes that entry's line.
    for last in (-0.0, 5e-324, 1.5, 1e300, [], {}, (1, (2, 3)),
                 {"a": [{"b": None, "c": [1.0, False]}]}):
        kw = dict(SEED_KW, config={**ok, "last": last})
        doc = {k: kw[k] for k in order}
        lines = json.dumps(doc, indent=1).split("\n")
        with pytest.raises(td.InputError) as e:
            td.Call(**kw)
        assert e.value.source_line == lines[e.value.line - 1], last
        assert e.value.source_line.lstrip().startswith('"last": '), last
    with pytest.raises(TypeError, match="plain data.*keys must be str"):
        td.Call(**dict(SEED_KW, config={(1, 2): 1}))
    with pytest.raises(TypeError, match="plain data.*Circular"):
        loop: list = []
        loop.append(loop)
        td.Call(**dict(SEED_KW, config={"x": loop}))


def test_limits_are_input_errors():
    bufs = {f"B{i}": {"scope": "local", "dtype": "float32", "shape": [1]} for i in range(40)}
    with pytest.raises(td.InputError):
        td.Call(**dict(SEED_KW, buffers=bufs))
    with pytest.raises(td.InputError):
        td.Call(**dict(SEED_KW, op="x" * 200))


def test_every_example_call_loads():
    files = sorted((ROOT / "examples" / "calls").glob("*.yaml"))
    assert files
    ops = ("sum", "max", "min", "zero", "fill", "reciprocal", "sqrt", "exp",
           "exp2", "log2", "silu", "add", "sub", "mul", "fdiv", "maximum",
           "cast", "fma")
    for f in files:
        assert td.Call.from_yaml(f).op in ops


def test_keywords_srcs_and_extras():
    buffers = {"A": {"scope": "local", "dtype": "float32", "shape": [4]},
               "B": {"scope": "local", "dtype": "float32", "shape": [4]}}
    c = td.Call(op="exp", buffers=buffers, dst="B", srcs=["A[0:4]"],
                extras={"bias": 0.5, "scale": {"scalar": "log2e", "dtype": "float32"}})
    assert c.src == "A[0:4]"
    assert c.srcs == ("A[0:4]",)
    assert c.extras == {"bias": {"value": 0.5, "dtype": "float32"},
                        "scale": {"scalar": "log2e", "dtype": "float32"}}
    assert c.script == "Tx.exp(B[0:4], A[0:4], T.float32(0.5), log2e)"
    # A literal first source: no src region; the mapping forms keep their dtype.
    c = td.Call(op="add", buffers=buffers, dst="B",
                srcs=[2, "A", {"value": 18446744073709551615, "dtype": "uint64"}])
    assert c.src is None
    assert c.srcs == ({"value": 2.0, "dtype": "float32"}, "A[0:4]",
                      {"value": 18446744073709551615, "dtype": "uint64"})
    assert c.extras == {}
    # No source at all (zero); the file form reads the same.
    z = td.Call(op="zero", buffers=buffers, dst="B")
    assert z.srcs == () and z.src is None and z.script == "Tx.zero(B[0:4])"
    f = td.Call.from_yaml(ROOT / "tests" / "call" / "data" / "good" / "fma_scalar.yaml")
    assert f.srcs == ("A[0:8]", {"scalar": "alpha", "dtype": "float32"},
                      {"value": 0.5, "dtype": "float32"})


def test_keywords_nonfinite_literals():
    # json writes inf/nan as bare Infinity/NaN; they must reach the loader
    # as YAML's .inf/.nan (literals), not as region names; strings that
    # merely contain those words stay strings.
    buffers = {"A": {"scope": "local", "dtype": "float32", "shape": [4]},
               "NaN": {"scope": "local", "dtype": "float32", "shape": [4]}}
    c = td.Call(op="maximum", buffers=buffers, dst="A",
                srcs=["NaN", float("-inf")])
    assert c.srcs[0] == "NaN[0:4]"
    assert c.srcs[1]["dtype"] == "float32"
    assert c.srcs[1]["value"] == float("-inf")
    c = td.Call(op="add", buffers=buffers, dst="A",
                srcs=["A", {"value": float("nan"), "dtype": "float16"}])
    v = c.srcs[1]["value"]
    assert v != v and c.srcs[1]["dtype"] == "float16"


def test_keywords_srcs_errors():
    buffers = {"A": {"scope": "local", "dtype": "float32", "shape": [4]}}
    with pytest.raises(td.InputError, match=r"srcs\[1\]: unknown dtype 'f32'"):
        td.Call(op="add", buffers=buffers, dst="A",
                srcs=["A", {"value": 1, "dtype": "f32"}])
    with pytest.raises(td.InputError, match="'src' .* not both"):
        td.Call(op="add", buffers=buffers, dst="A", src="A", srcs=["A"])


def test_keywords_gemm_async(reg):
    """gemm_async names a and b, takes transA / transB and accum as a
    bool or an expression of its scalars (the file form's keys: the
    golden case built from keywords dispatches the same body)."""
    f = td.Call.from_yaml(ROOT / "tests" / "golden" / "cases" / "gemm_async_accum_scalar.yaml")
    kw = dict(op="gemm_async", arch="sm_100a", scope="thread", launch={"threadIdx.x": 128},
              active={"tx": [0, 1]}, scalars={"k": {"dtype": "int32", "range": [0, 8]}},
              buffers=f.buffers, dst=f.dst, a="A[0:128, 0:64]", b="B[0:64, 0:64]",
              accum="k > 0")
    c = td.Call(**kw)
    assert f.accum == c.accum == "k > 0"
    assert reg.dispatch(c).emit("tirx") == reg.dispatch(f).emit("tirx")
    t = td.Call(**dict(kw, transA=False, transB=True, accum=True))
    assert t.accum is True
    assert "transA=False, transB=True, accum=True" in t.script
    with pytest.raises(td.InputError, match="'transA' is a key of gemm_async"):
        td.Call(op="add", buffers=f.buffers, dst=f.dst, srcs=["A", "B"], transA=True)


def test_keywords_gemm_async_block_scaled(reg):
    """gemm_async's scale factors sfa and sfb are regions as a and b are
    (sources 3 and 4, both or neither); the script line has them after B,
    as upstream's Tx.gemm_async(C, A, B, SFA, SFB, ...); tcgen05 takes
    block scaling and declines this A (no swizzled layout) for its
    descriptor, as TVM does.  The confined dtypes float8_e8m0fnu and
    float4_e2m1fn load where gemm_async allows them, and nowhere else."""
    f = td.Call.from_yaml(ROOT / "tests" / "call" / "data" / "good" / "gemm_async_mxfp4.yaml")
    kw = dict(op="gemm_async", arch="sm_100a", scope="thread", launch={"threadIdx.x": 128},
              active={"tx": [0, 1]}, buffers=f.buffers, dst=f.dst, a="A[0:128, 0:128]",
              b="B[0:64, 0:128]", sfa="SFA[0:128, 0:4]", sfb="SFB[0:64, 0:4]")
    c = td.Call(**kw)
    assert c.buffers["A"]["dtype"] == "float4_e2m1fn"
    assert c.buffers["SFA"]["dtype"] == "float8_e8m0fnu"
    assert c.srcs == f.srcs == ("A[0:128, 0:128]", "B[0:64, 0:128]", "SFA[0:128, 0:4]",
                                "SFB[0:64, 0:4]")
    assert c.script == f.script == (
        "Tx.gemm_async(C[0:128, 0:64], A[0:128, 0:128], B[0:64, 0:128], SFA[0:128, 0:4], "
        "SFB[0:64, 0:4], transA=False, transB=False, accum=False)")
    with pytest.raises(td.DispatchError,
                       match=r"(?s)tcgen05 .* declined by emitter \| gemm_async: no-swizzle SMEM "
                             r"descriptors currently require"):
        reg.dispatch(c)
    with pytest.raises(td.InputError, match="'sfa' without 'sfb'"):
        td.Call(**dict(kw, sfb=None))
    with pytest.raises(td.InputError, match="'sfb' is a key of gemm_async calls only"):
        td.Call(op="add", buffers={"A": {"scope": "local", "dtype": "float32", "shape": [4]}},
                dst="A", srcs=["A", "A"], sfb="A")
    with pytest.raises(td.InputError,
                       match="dtype 'float4_e2m1fn' \\(buffer 'A'\\) is only accepted by "
                             "gemm_async's A and B .*; copy does not support it"):
        td.Call(op="copy", buffers={"A": {"scope": "shared", "dtype": "float4_e2m1fn",
                                          "shape": [64]},
                                    "B": {"scope": "shared", "dtype": "float4_e2m1fn",
                                          "shape": [64]}},
                dst="B", src="A")


def test_keywords_gemm(reg):
    """gemm names its operands a, b, c; alpha and beta keep the Python
    number's kind (an int prints bare, as TVMScript prints it); the file
    form reads the same; row-major register tiles fit no mma.sync
    fragment (TVM's mma.m16n8k* declines them), the fragments of the file
    form dispatch to it; shapes that disagree are the op's refusal, at the
    operand."""
    buffers = {"A": {"scope": "local", "dtype": "float16", "shape": [16, 16]},
               "B": {"scope": "local", "dtype": "float16", "shape": [8, 16]},
               "C": {"scope": "local", "dtype": "float32", "shape": [16, 8]}}
    c = td.Call(op="gemm", scope="warp", buffers=buffers, dst="C", a="A", b="B",
                c="C", transpose_B=True, alpha=1, beta=1.0)
    assert c.srcs == ("A[0:16, 0:16]", "B[0:8, 0:16]", "C[0:16, 0:8]")
    assert c.script == ("Tx.warp.gemm(C[0:16, 0:8], A[0:16, 0:16], B[0:8, 0:16], "
                        "C[0:16, 0:8], False, True, 1, T.float32(1.0))")
    with pytest.raises(td.DispatchError,
                       match=r"(?s)dispatch failed: op=gemm.*declined by emitter"
                             r".*no mma instruction fits"):
        reg.dispatch(c)
    f = td.Call.from_yaml(ROOT / "tests" / "call" / "data" / "good" / "gemm_k16_f16.yaml")
    assert f.script.startswith("Tx.warp.gemm(D[0:16, 0:8], A[0:16, 0:16], B[0:16, 0:8]")
    d = reg.dispatch(f)
    assert d.variant == "mma.m16n8k*"
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in d.emit()
    with pytest.raises(td.InputError, match="'srcs' is not a key of a gemm call"):
        td.Call(op="gemm", buffers=buffers, dst="C", srcs=["A", "B", "C"])
    with pytest.raises(td.InputError, match="'a' is a key of gemm calls only, not of op 'add'"):
        td.Call(op="add", buffers=buffers, dst="C", a="A")
    bad = td.Call.from_yaml(CLI_DATA / "gemm_k_mismatch.yaml")
    with pytest.raises(td.InputError, match=r"op 'gemm': gemm mma: A K=16 != B K=8") as e:
        reg.dispatch(bad)
    assert (e.value.line, e.value.column) == (15, 4)


def test_gemm_active_keyword(reg):
    """active= (the threads the guards around a call leave, as the TVM
    bridge passes TVM's sctx.intra): a full warp dispatches, a narrowed
    one is refused in TVM's words, a non-thread axis at load."""
    f = td.Call.from_yaml(ROOT / "tests" / "call" / "data" / "good" / "gemm_k16_f16.yaml")
    fields = dict(op="gemm", arch="sm_80", scope="warp", launch={"threadIdx.x": 32},
                  buffers=f.buffers, dst=f.dst, a="A[0:16, 0:16]", b="B[0:16, 0:8]",
                  c="C[0:16, 0:8]", transpose_A=False, transpose_B=False, alpha=1.0, beta=0.0)
    full = td.Call(**fields, active={"laneid": [0, 32]})
    assert full.active == {"laneid": [0, 32]} and f.active == {}
    assert reg.dispatch(full).variant == "mma.m16n8k*"
    with pytest.raises(td.DispatchError) as e:
        reg.dispatch(td.Call(**fields, active={"laneid": [0, 16]}))
    # Every mma variant (mma.m16n8k* and mma_ext.m16n8k*) refuses in TVM's
    # words; the rows, not str(), which wraps the table's reasons column.
    assert e.value.rows and all(
        r.status == "rejected" and
        "full_active_lanes: active laneid is [0, 16), need full [0, 32)" in r.reasons
        for r in e.value.rows), e.value.rows
    with pytest.raises(td.InputError, match="active"):
        td.Call(**fields, active={"laneid": [16, 8]})


def test_reduction_with_two_sources_is_an_input_error(reg):
    c = td.Call.from_yaml(CLI_DATA / "sum_two_srcs.yaml")
    with pytest.raises(td.InputError, match="expects one source region, got 2 operands") as e:
        reg.dispatch(c)
    assert (e.value.line, e.value.column) == (7, 11)
    with pytest.raises(td.InputError):
        reg.explain(c)


ASYNC_KW = dict(
    op="copy_async", target="cuda", arch="sm_90a", scope="cta",
    launch={"threadIdx.x": 128},
    buffers={"A": {"scope": "global", "dtype": "float16", "shape": [1024, 64]},
             "S": {"scope": "shared", "dtype": "float16", "shape": [128, 64]},
             "mbar": {"scope": "shared", "dtype": "uint64", "shape": [4]}},
    dst="S")


def test_keywords_scalars_and_expressions(reg):
    c = td.Call(**ASYNC_KW, src="A[k * 128:k * 128 + 128, 0:64]",
                scalars={"k": {"dtype": "int32", "range": [0, 8]}},
                config={"predicate": "tx < 64 && k != 3"})
    assert c.src == "A[k * 128:k * 128 + 128, 0:64]"
    assert c.config == {"predicate": "tx < 64 && k != 3"}
    cuda = reg.dispatch(c).emit("cuda")
    assert "k * 8192" in cuda and "(int)threadIdx.x < 64 && k != 3" in cuda
    kw = dict(ASYNC_KW, launch={"threadIdx.x": 128, "cluster": [2, 1, 1]})
    c = td.Call(**kw, src="A[0:128, 0:64]",
                scalars={"k": {"range": [0, 64]}},
                config={"mbar": "mbar[k % 4]", "remote_cta_id": "1 - cbx"})
    assert "mbar=T.address_of(mbar[k % 4])" in c.script
    assert "remote_cta_id=1 - cbx" in c.script
    assert c.launch == {"threadIdx.x": 128, "cluster": [2, 1, 1]}
    with pytest.raises(td.Error, match="the cluster id 'cbx' needs a cluster"):
        td.Call(**ASYNC_KW, src="A[0:128, 0:64]",
                config={"remote_cta_id": "1 - cbx"})


def test_keywords_scalars_refused():
    with pytest.raises(td.Error, match="scalar 'k' has no range"):
        td.Call(**ASYNC_KW, src="A[k * 128:k * 128 + 128, 0:64]",
                scalars={"k": {"dtype": "int32"}})
    with pytest.raises(td.Error, match=r"unknown name 'n' \(declare"):
        td.Call(**ASYNC_KW, src="A[0:128, 0:64]", config={"predicate": "tx < n"})
    with pytest.raises(td.Error, match="index 0 of 'mbar' may be outside"):
        td.Call(**ASYNC_KW, src="A[0:128, 0:64]",
                scalars={"k": {"range": [0, 64]}}, config={"mbar": "mbar[k % 8]"})
