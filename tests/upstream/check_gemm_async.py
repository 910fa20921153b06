#!/usr/bin/env python3
"""The gemm_async differential against TVM's lowering, without TVM: every
tests/conformance/gemm_async_tvm_*.yaml that TVM lowered carries what TVM
emitted (`# tvm-desc:`, `# tvm-mma:` lines, written by
gen_gemm_async_conformance.py from tvm.compile's CUDA); this compares them
with `tiledispatch emit --lang cuda` bit for bit: each descriptor's (ldo,
sdo, swizzle), and per MMA in order the D column, the A and B start
offsets in 16-byte units, the instruction descriptor and enable_input_d.

    check_gemm_async.py TILEDISPATCH CONFORMANCE_DIR

Block-scaled calls (`sfa:` / `sfb:`) carry `# tvm-idesc-bs:` (the run-time
instruction descriptor's encode: M N K a_format b_format s_format transA
transB; `given V` for a descI local starting as V; `none` when the MMAs
name a constant) and per MMA `# tvm-bs-mma:` (D, A, B as above; the
descriptor, L for the local or a constant; the SFA and SFB addresses from
their bases; enable_input_d; the sf_id patched before it, -1 for none),
compared with td_tcgen05_idesc_bs, td_tcgen05_idesc_sf_id and
td_tcgen05_mma_bs_* in the same way; and `# tvm-idesc-values:`, the
descriptor each MMA reads as TVM's own helpers compute it (compiled for
the host by the generator), against what ours compute (our prelude's
helpers compiled for the host with c++ here).

Exit 0 when all agree (and at least one case was compared), 1 otherwise.
"""
import glob
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DESC = re.compile(r"td_tcgen05_smem_desc\((\w)_ptr, (\d+)u, (\d+), (\d+), (\d+)\)")
VAR = re.compile(r"unsigned long long (desc[AB]\w*) = (?:td_tcgen05_smem_desc_uniform\()?"
                 r"td_tcgen05_smem_desc\((\w)_ptr, 0u, (\d+), (\d+), (\d+)\)")
MMA = re.compile(r"^\s*td_tcgen05_mma_(?:ws_)?(?:ts_)?cg\d_\w+\((\w+)_taddr(?: \+ \((\d+)u << 16\))?"
                 r"(?: \+ (\d+))?, (.*), (\d+)u, (\d+)\);$", re.M)
# An operand: a descriptor plus an offset, a descriptor encoded in place,
# or (A in tensor memory) an address A_taddr + (lane << 16) + column.
OPER = re.compile(r"td_tcgen05_smem_desc_add\((\w+), (\d+)u\)|"
                  r"td_tcgen05_smem_desc\((\w)_ptr, (\d+)u, (\d+), (\d+), (\d+)\)|"
                  r"\w+_taddr(?: \+ \((\d+)u << 16\))?(?: \+ (\d+))?")


TADDR = r"\w+_taddr(?: \+ \((\d+)u << 16\))?(?: \+ (\d+))?"
BS_MMA = re.compile(rf"^\s*td_tcgen05_mma_bs_(?:ts_)?cg\d_\w+\({TADDR}, (.*), "
                    rf"(descI_local\w*|\d+u), {TADDR}, {TADDR}, (\d+)\);$", re.M)
BS_IDESC = re.compile(r"unsigned int descI_local\w* = (?:td_tcgen05_idesc_bs\((\d+)u, (\d+)u, "
                      r"(\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d), (\d)\)|(\d+)u);")
BS_SF_ID = re.compile(r"^\s*td_tcgen05_idesc_sf_id\(&descI_local\w*, (\d+)u\);$", re.M)


def addr(lane, col):
    return (int(lane or 0) << 16) + int(col or 0)


def host_values(helpers, init, patches):
    """The instruction descriptor each MMA reads, computed on the host by
    the CUDA helpers `helpers` (device qualifiers defined away, compiled
    with c++): `init` is C code setting `uint32_t d` (the local's start),
    `patches` per MMA the C code run before it (sf_id patches) or "" ."""
    body = "".join(f"  {p}\n  printf(\"%u\\n\", d);\n" for p in patches)
    prog = ("#include <cstdint>\n#include <cstdio>\n#define __forceinline__ inline\n"
            "#define __device__\n#define HOST_DEVICE\n" + helpers +
            "\nint main() {\n  uint32_t d = 0;\n  " + init + "\n" + body + "  return 0;\n}\n")
    # The checker's own test runs this script once per mutant over the same
    # calls: it names a directory where each distinct program's output is
    # kept (by the program's hash), so each is compiled once.
    cache = os.environ.get("TD_HOST_VALUES_CACHE")
    kept = None
    if cache:
        kept = Path(cache) / (hashlib.sha256(prog.encode()).hexdigest() + ".txt")
        if kept.exists():
            return [int(x) for x in kept.read_text().split()]
    with tempfile.TemporaryDirectory() as tmp:
        c, exe = Path(tmp) / "v.cc", Path(tmp) / "v"
        c.write_text(prog)
        subprocess.run(["c++", "-std=c++17", "-o", str(exe), str(c)], check=True,
                       capture_output=True, text=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(out)
    return [int(x) for x in out.split()]


def our_idesc_values(src, idesc, mmas):
    """What our helpers (td_tcgen05_idesc_bs, td_tcgen05_idesc_sf_id, from
    the emitted prelude) make of each MMA's descriptor."""
    if idesc[0] == "none":
        return [m[3] for m in mmas]
    parts = []
    for name in ("td_tcgen05_idesc_bs(", "td_tcgen05_idesc_sf_id("):
        i = src.find(f"__forceinline__ __device__ unsigned int {name}")
        if i < 0:
            i = src.find(f"__forceinline__ __device__ void {name}")
        if i >= 0:
            parts.append(src[i:src.index("\n}\n", i) + 3])
    init = (f"d = {idesc[1]}u;" if idesc[0] == "given" else
            "d = td_tcgen05_idesc_bs(" + ", ".join(f"{v}u" for v in idesc[:6]) +
            f", {idesc[6]}, {idesc[7]});")
    patches = [f"td_tcgen05_idesc_sf_id(&d, {m[7]}u);" if int(m[7]) >= 0 else "" for m in mmas]
    return [str(v) for v in host_values("\n".join(parts), init, patches)]


def ours_bs(src, descs):
    """(idesc, mmas) of a block-scaled body, as the headers spell them."""
    m = BS_IDESC.search(src)
    idesc = ["none"] if m is None else (["given", m.group(9)] if m.group(9) else
                                         list(m.groups()[:8]))
    mmas, pos = [], 0
    for mm in BS_MMA.finditer(src):
        c_lane, c_col, ops, i, a_lane, a_col, b_lane, b_col, en = mm.groups()
        ids = BS_SF_ID.findall(src, pos, mm.start())
        pos = mm.end()
        offs = operands(ops, descs)
        if offs is None:
            return None, f"cannot read the operands of an MMA: {ops}"
        mmas.append([str(x) for x in (addr(c_lane, c_col), offs[0], offs[1],
                                      "L" if i.startswith("descI") else i[:-1],
                                      addr(a_lane, a_col), addr(b_lane, b_col), en,
                                      ids[-1] if ids else -1)])
    return (idesc, our_idesc_values(src, idesc, mmas), mmas), None


def operands(ops, descs):
    offs = []
    for m in OPER.finditer(ops):
        var, off, op, off2, ldo, sdo, sw, a_lane, a_col = m.groups()
        if var:
            offs.append(int(off))
        elif not op:
            offs.append((int(a_lane or 0) << 16) + int(a_col or 0))
        else:
            descs[op] = (int(ldo), int(sdo), int(sw))
            offs.append(int(off2))
    return offs if len(offs) == 2 else None


def header(path, key):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            m = re.match(rf"#\s*{key}:\s*(.*)$", line)
            if m:
                out.append(m.group(1).split())
    return out


def ours(exe, path):
    p = subprocess.run([exe, "emit", path, "--lang", "cuda"], capture_output=True,
                       text=True, env=dict(os.environ, TILEDISPATCH_RULES=""))
    if p.returncode != 0:
        return None, f"emit exited {p.returncode}: {p.stderr.strip()}"
    src = p.stdout
    descs, var_of = {}, {}
    for name, op, ldo, sdo, sw in VAR.findall(src):
        var_of[name] = op
        descs[op] = (int(ldo), int(sdo), int(sw))
    if "td_tcgen05_mma_bs_" in src:
        got, err = ours_bs(src, descs)
        return (None if err else (descs, got)), err
    mmas = []
    for _, lane, col, ops, idesc, en in MMA.findall(src):
        offs = operands(ops, descs)
        if offs is None:
            return None, f"cannot read the operands of an MMA: {ops}"
        c = int(col or 0) + (int(lane or 0) << 16)
        mmas.append((c, offs[0], offs[1], int(idesc), int(en)))
    return (descs, mmas), None


def main():
    exe, cdir = sys.argv[1], sys.argv[2]
    bad = n = 0
    for path in sorted(glob.glob(os.path.join(cdir, "gemm_async_tvm_*.yaml"))):
        want_desc = header(path, "tvm-desc")
        if not want_desc:
            continue
        w = want_desc[0]  # "A ldo sdo swizzle B ..." (no A when A is in tmem)
        wd = {w[i]: tuple(map(int, w[i + 1:i + 4])) for i in range(0, len(w), 4)}
        wm = [tuple(map(int, t)) for t in header(path, "tvm-mma")]
        got, err = ours(exe, path)
        n += 1
        name = os.path.basename(path)
        if err:
            print(f"FAIL {name}: {err}")
            bad += 1
            continue
        gd, gm = got
        if header(path, "tvm-idesc-bs"):
            wi = header(path, "tvm-idesc-bs")[0]
            wv = header(path, "tvm-idesc-values")[0]
            wm = header(path, "tvm-bs-mma")
            gi, gv, gm = gm
            if gi != wi:
                print(f"FAIL {name}: instruction descriptor {gi}, TVM's {wi}")
                bad += 1
                continue
            if gv != wv:
                print(f"FAIL {name}: the descriptor each MMA reads, ours {gv}, TVM's {wv}")
                bad += 1
                continue
        if gd != wd:
            print(f"FAIL {name}: descriptors {gd}, TVM's {wd}")
            bad += 1
        elif gm != wm:
            first = next((i for i, (a, b) in enumerate(zip(gm, wm)) if a != b),
                         min(len(gm), len(wm)))
            print(f"FAIL {name}: {len(gm)} MMAs, TVM {len(wm)}; first difference at "
                  f"{first}: ours {gm[first] if first < len(gm) else None}, "
                  f"TVM's {wm[first] if first < len(wm) else None}")
            bad += 1
        else:
            print(f"ok   {name}: {len(gm)} MMAs")
    print(f"{n - bad} of {n} gemm_async cases agree with TVM's lowering")
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
