#!/usr/bin/env python3
"""Checks that vec_auto's and ldstmatrix's emitted copies move every
element to its place.

For each call file given whose emitted TIRx is a vec_auto body (a round
loop of T.ptx.ld/st), the script evaluates the printed offsets (g_lin,
s_off, s_base + ds, r_w: Python expressions) for every thread and round
and checks, with the operands' own layouts (tile, swizzle, register
thread axes), that each element of the source region lands on the
destination element of the same row-major position, each exactly once.
A region that starts at an offset affine in the block ids is checked for
the first, second and last block of the call's grid (the bodies read
blockIdx there).
A register buffer without thread axes is every thread's own copy.  For an
ldstmatrix body the row addresses are evaluated for every lane and warp
and the instruction's fragment semantics applied (x{num}: lane 8j + r
addresses row r of matrix j; thread t's word j holds row t / 4, columns
2 (t % 4) and + 1, or with .trans column t / 4 of rows 2 (t % 4) and + 1).

usage: check_copy_offsets.py TILEDISPATCH (CALL.yaml | DIR)...

(a directory stands for its copy_*.yaml files)

With TD_TEST_QUICK set (not empty, not 0: the plain `meson test`) every
file is emitted but a stratified part of the bodies is checked: the first
body of each (kind, scope) and every eighth one of each
kind (ldstmatrix, register, vec_auto) after it.

Exit status: 0 all good (and at least one body checked), 1 otherwise.
"""
import glob
import itertools
import os
import re
import subprocess
import sys
import types

import yaml

_BYTES = {"float8_e4m3fn": 1, "float8_e5m2": 1, "int8": 1, "uint8": 1, "float16": 2,
          "bfloat16": 2, "int16": 2, "uint16": 2, "float32": 4, "int32": 4, "uint32": 4}


def elem_offset(text):
    """The element offset of the first computed address in `text`: TIRx
    prints it as a byte offset, T.ptr_byte_offset(T.address_of(A[0, 0]),
    BYTES, "dtype"); as Python, BYTES floor-divided by the element size."""
    m = re.search(r'T\.ptr_byte_offset\(T\.address_of\(\w+\[[0-9, ]+\]\), (.*?), "(\w+)"\)',
                  text)
    return f"({m.group(1)}) // {_BYTES[m.group(2)]}"


def parse_layout(text, shape):
    swz = None
    m = re.match(r"ComposeLayout\((\d+), (\d+), (\d+), TileLayout\((.*)\)\)$", text or "")
    if m:
        swz = tuple(map(int, m.groups()[:3])); text = m.group(4)
    if not text:
        st, s = [], 1
        for d in reversed(shape): st.append(s); s *= d
        return list(shape), list(reversed(st)), swz
    m = re.match(r"S\[\((.*)\)\s*:\s*\((.*)\)\]$", text)
    if m:
        ex = [int(x) for x in m.group(1).split(",")]
        stv = [int(x) for x in m.group(2).split(",")]
        return ex, stv, swz
    m = re.match(r"S\[(\d+)\s*:\s*(\d+)\]$", text)
    return [int(m.group(1))], [int(m.group(2))], swz

def phys(lay, shape, coord):
    ex, st, swz = lay
    flat = 0
    for c, d in zip(coord, shape): flat = flat * d + c
    off = 0
    for e, s in zip(reversed(ex), reversed(st)):
        off += (flat % e) * s; flat //= e
    if swz:
        p, s, a = swz
        off ^= ((off >> (p + a)) & ((1 << s) - 1)) << p
    return off

# The block whose tile is checked: a region may start at an offset affine
# in the block ids ("A[bx * 64:bx * 64 + 64, 0:64]"), and the bodies then
# read blockIdx.x; every file is checked for the first, second and last
# block of its grid.
BLK = types.SimpleNamespace(x=0, y=0, z=0)


def bound(text):
    return eval(text, {"bx": BLK.x, "by": BLK.y, "bz": BLK.z, "blockIdx": BLK})


def region(r, bufs):
    """(name, [(lo, hi) per dim]) of a region ("A" alone: the buffer)."""
    m = re.match(r"(\w+)\[(.*)\]$", r)
    if m is None:
        return r.strip(), [(0, d) for d in bufs[r.strip()]["shape"]]
    out = []
    for x in m.group(2).split(","):
        if ":" in x:
            a, b = x.split(":")
            out.append((bound(a), bound(b)))
        else:
            a = bound(x)
            out.append((a, a + 1))
    return m.group(1), out


def blocks(call):
    """The block ids to check: the first, the second and the last."""
    ext = [int(call.get("launch", {}).get("blockIdx." + a, 1)) for a in "xyz"]
    return sorted({(0, 0, 0), tuple(min(1, e - 1) for e in ext), tuple(e - 1 for e in ext)})


AX_SCALE = {"laneid": 1, "tid_in_wg": 1, "tx": 1, "wid_in_wg": 32, "warpid": 32}

def parse_reg(text, shape):
    """(extents, strides, axes) of a register layout; none: row-major."""
    if not text:
        ex, st, _ = parse_layout(None, shape)
        return ex, st, [None] * len(ex)
    m = re.match(r"S\[\((.*)\)\s*:\s*\((.*)\)\]$", text)
    if m:
        ex = [int(x) for x in m.group(1).split(",")]
        sts = [x.strip() for x in m.group(2).split(",")]
    else:
        m = re.match(r"S\[(\d+)\s*:\s*(\S+)\]$", text)
        ex, sts = [int(m.group(1))], [m.group(2)]
    st, ax = [], []
    for x in sts:
        if "@" in x:
            a, b = x.split("@"); st.append(int(a)); ax.append(b)
        else:
            st.append(int(x)); ax.append(None)
    return ex, st, ax

def reg_place(lay, shape, coord):
    ex, st, ax = lay
    flat = 0
    for c, d in zip(coord, shape): flat = flat * d + c
    tid = slot = 0
    for e, s, a in zip(reversed(ex), reversed(st), reversed(ax)):
        dgt = flat % e; flat //= e
        if a is None: slot += dgt * s
        else: tid += dgt * s * AX_SCALE[a]
    return tid, slot

def check_reg(f, call, tx):
    bufs = call["buffers"]
    dn, dreg = region(call["dst"], call["buffers"]); sn, sreg = region(call["src"], call["buffers"])
    rn, rreg, mn, mreg = (sn, sreg, dn, dreg) if bufs[sn]["scope"] == "local" else (dn, dreg, sn, sreg)
    rb, mb = bufs[rn], bufs[mn]
    rlay = parse_reg(rb.get("layout"), rb["shape"])
    mlay = parse_layout(mb.get("layout"), mb["shape"])
    rounds = int(re.search(r"T.serial\((\d+)\)", tx).group(1))
    env_lines = [l.strip() for l in tx.splitlines() if re.match(r"\s*\w+: T.int32 = ", l)]
    m = re.search(r'"(v4|v2)", "u32"', tx)
    lanes = {"v4": 4, "v2": 2}[m.group(1)] if m else 1
    cbits = 32 if '"u32"' in tx else 16 if '"u16"' in tx else 8
    dt = rb["dtype"]
    eb = 8 if ("float8" in dt or dt in ("int8", "uint8")) else 16 if "16" in dt else 32 if "32" in dt else 64
    vec = lanes * cbits // eb
    T = {"thread": 1, "warp": 32, "warpgroup": 128}.get(call["scope"], call["launch"]["threadIdx.x"])
    addr = elem_offset(tx)
    rcoords = list(itertools.product(*[range(a, z) for a, z in rreg]))
    mcoords = list(itertools.product(*[range(a, z) for a, z in mreg]))
    has_thread = any(a is not None for a in rlay[2])
    rpos = {}
    for k, c in enumerate(rcoords):
        rpos[reg_place(rlay, rb["shape"], c)] = k
    mpos = {phys(mlay, mb["shape"], c): k for k, c in enumerate(mcoords)}
    seen = set()
    # Compiled once: eval of a string compiles it on every call.
    env_code = [(name, compile(e, name, "eval")) for name, e in
                (l.split(": T.int32 = ") for l in env_lines)]
    addr_code = compile(addr, "addr", "eval")
    for tid in range(T):
        for fr in range(rounds):
            env = {"f": fr, "tid": tid, "blockIdx": BLK}
            for name, e in env_code:
                if name != "tid":
                    env[name] = eval(e, dict(env))
            off = eval(addr_code, dict(env))
            slot0 = env["r_w"] * cbits // eb
            for l in range(vec):
                k1 = mpos.get(off + l)
                k2 = rpos.get((tid if has_thread else 0, slot0 + l))
                if k1 is None or k1 != k2:
                    return False
                seen.add((tid, k1))
    want = len(rcoords) if has_thread else len(rcoords) * T
    return len(seen) == want


def check_ldst(f, call, tx):
    bufs = call["buffers"]
    dn, dreg = region(call["dst"], call["buffers"]); sn, sreg = region(call["src"], call["buffers"])
    rn, rreg, mn, mreg = (sn, sreg, dn, dreg) if bufs[sn]["scope"] == "local" else (dn, dreg, sn, sreg)
    rb, mb = bufs[rn], bufs[mn]
    rlay = parse_reg(rb.get("layout"), rb["shape"])
    mlay = parse_layout(mb.get("layout"), mb["shape"])
    T = {"warp": 32, "warpgroup": 128}.get(call["scope"], call["launch"]["threadIdx.x"])
    rcoords = list(itertools.product(*[range(a, z) for a, z in rreg]))
    mcoords = list(itertools.product(*[range(a, z) for a, z in mreg]))
    rpos = {reg_place(rlay, rb["shape"], c): k for k, c in enumerate(rcoords)}
    mpos = {phys(mlay, mb["shape"], c): k for k, c in enumerate(mcoords)}
    seen = set()
    for line in tx.splitlines():
        m = re.search(r"T.ptx.(ldmatrix|stmatrix)\((.*)\)$", line.strip())
        if not m:
            continue
        words = [int(x) for x in re.findall(r'\.view\("uint32"\)\[(\d+)\]', line)]
        expr = elem_offset(line)
        num = int(re.search(r'"x(\d)"', line).group(1))
        trans = '"trans"' in line
        code = compile(expr, "row address", "eval")
        if len(words) != num:
            return False
        for w in range(T // 32):
            addr = [eval(code, {"laneid": l, "warp": w}) for l in range(32)]
            for t in range(32):
                for j in range(num):
                    for h in range(2):
                        if trans:
                            off = addr[8 * j + 2 * (t % 4) + h] + t // 4
                        else:
                            off = addr[8 * j + t // 4] + 2 * (t % 4) + h
                        k1 = mpos.get(off)
                        k2 = rpos.get((w * 32 + t, words[j] * 2 + h))
                        if k1 is None or k1 != k2 or k1 in seen:
                            return False
                        seen.add(k1)
    return len(seen) == len(rcoords)

# libyaml's loader when PyYAML has it: the pure-Python one takes most of
# the quick run's time.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
QUICK = os.environ.get("TD_TEST_QUICK", "") not in ("", "0")
strata = set(); kinds = {}; skipped = 0


def chosen(kind, call):
    """Whether this body is checked (always, unless quick)."""
    global skipped
    if not QUICK:
        return True
    key = (kind, call.get("scope"))
    k = kinds[kind] = kinds.get(kind, -1) + 1
    if key not in strata or k % 8 == 0:
        strata.add(key)
        return True
    skipped += 1
    return False


def check_vec(f, call, tx):
    rounds = int(re.search(r"T.serial\((\d+)\)", tx).group(1))
    gl = re.search(r"g_lin: T.int32 = (.*)", tx).group(1)
    so = re.search(r"s_off: T.int32 = (.*)", tx).group(1)
    m = re.search(r'"(v4|v2)", "u32"', tx)
    lanes = {"v4": 4, "v2": 2}[m.group(1)] if m else 1
    cbits = 32 if '"u32"' in tx else 16 if '"u16"' in tx else 8
    bufs = call["buffers"]
    dn, dreg = region(call["dst"], call["buffers"]); sn, sreg = region(call["src"], call["buffers"])
    dt = bufs[dn]["dtype"]
    eb = 8 if ("float8" in dt or dt in ("int8", "uint8")) else 16 if "16" in dt else 32 if "32" in dt else 64
    vec = lanes * cbits // eb
    T = {"thread": 1, "warp": 32, "warpgroup": 128}.get(call["scope"], call["launch"]["threadIdx.x"])
    gname = dn if bufs[dn]["scope"] == "global" else sn
    def mk(name, reg):
        b = bufs[name]; lay = parse_layout(b.get("layout"), b["shape"])
        pos = {}
        coords = [c for c in itertools.product(*[range(a, z) for a, z in reg])]
        for k, c in enumerate(coords): pos[phys(lay, b["shape"], c)] = k
        return pos
    dpos, spos = mk(dn, dreg), mk(sn, sreg)
    seen = set(); ok = True
    gl = compile(gl, "g_lin", "eval"); so = compile(so, "s_off", "eval")
    for fr in range(rounds):
        for tid in range(T):
            env = {"f": fr, "tid": tid, "blockIdx": BLK}
            g = eval(gl, env); s = eval(so, env)
            src0, dst0 = (g, s) if gname == sn else (s, g)
            for l in range(vec):
                a, b = spos.get(src0 + l), dpos.get(dst0 + l)
                if a is None or b is None or a != b or b in seen:
                    ok = False; break
                seen.add(b)
    if ok and len(seen) != len(dpos): ok = False
    return ok


def each_block(check, f, call, tx):
    """check() for each block of blocks(call)."""
    for BLK.x, BLK.y, BLK.z in blocks(call):
        if not check(f, call, tx):
            return False
    return True


bad = 0; n = 0
files = []
for a in sys.argv[2:]:
    files += sorted(glob.glob(os.path.join(a, "copy_*.yaml"))) if os.path.isdir(a) else [a]
for f in files:
    with open(f) as fh:
        call = yaml.load(fh, Loader=LOADER)
    out = subprocess.run([sys.argv[1], "emit", f, "--lang", "tirx"], capture_output=True, text=True)
    tx = out.stdout
    if out.returncode == 0 and ("T.ptx.ldmatrix" in tx or "T.ptx.stmatrix" in tx):
        if not chosen("ldst", call):
            continue
        n += 1
        if not each_block(check_ldst, f, call, tx):
            bad += 1; print("BAD", f)
        continue
    if out.returncode != 0 or "T.ptx." not in tx or "for f in" not in tx:
        continue
    if "g_lin" not in tx:
        if not chosen("reg", call):
            continue
        n += 1
        if not each_block(check_reg, f, call, tx):
            bad += 1; print("BAD", f)
        continue
    if not chosen("vec_auto", call):
        continue
    n += 1
    if not each_block(check_vec, f, call, tx):
        bad += 1; print("BAD", f)
print(f"{n} vec_auto and ldstmatrix bodies checked, {bad} wrong"
      + (f" (quick: {skipped} more not checked)" if QUICK else ""))
sys.exit(1 if bad or n == 0 else 0)
