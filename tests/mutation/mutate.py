#!/usr/bin/env python3
"""Mutants of the self-checking programs' emitted bodies.

usage: mutate.py list PROG.cu...              the mutants, one a line
       mutate.py show PROG.cu MUTANT_ID       the mutant's source on stdout
       mutate.py write PROG.cu... -o DIR      every mutant as DIR/FILE.cu
       mutate.py gpu-dir OUT PROGDIR [options] [NAME...]
       mutate.py gpu-score OUT [--equivalent FILE] [--allow-survivors]

A program written by `tiledispatch kernel` (or scripts/gen-programs) holds
the body the dispatcher emitted after the line
`/* The emitted body (variant X). */`, inside the braces that follow.  A
mutant is that program with ONE change inside those braces, never outside
them (the harness, the reference and the comparison stay as they are).
The operators:

  aor     arithmetic: a binary + - * / % (+ <-> -, * -> /, / -> *,
          % -> /), a compound += -= *= /= (the other of its pair), and the
          add/sub intrinsics (__hadd <-> __hsub and their 2-wide forms,
          tvm_builtin_ptx_add_* <-> _sub_* where the program defines both);
  ror     comparisons outside a for header: < <-> <=, > <-> >=, == <-> !=;
  const   literals: a float 0 -> 1, 1 -> 0, a large identity (FLT_MAX,
          INFINITY, +-65504, the bfloat16 maximum) negated, any other
          float c -> c+1; an integer c -> c+1 (1 -> 0);
  index   an integer literal that is an operand of a binary + or * in a
          subscript or an int initialisation: k -> k+1;
  loop    a for header: the start literal c -> c+1, the bound N -> N-1,
          < -> <= (> -> >=);
  drop    a statement removed: a store or assignment (not a declaration),
          __syncthreads(), __syncwarp(...), an asm bar.sync;
  minmax  fmaxf <-> fminf, fmax <-> fmin, max <-> min, __hmax <-> __hmin,
          __hmax2 <-> __hmin2, and any other *max*/*min* function whose
          swapped name the program defines (the PTX max3/min3 helpers, the
          warp reductions);
  shfl    a shuffle's lane argument: __shfl_xor_sync(m, v, k) k -> k/2
          (1 -> 2); the same for __shfl_down_sync/__shfl_up_sync/
          __shfl_sync.

Masks are not mutated: the CPU stand-in ignores them, and on the GPU a mask
that leaves out a calling lane is undefined behaviour, not a wrong answer
a check could be asked to catch.  A for header's increment is not mutated
(a mutant that never ends proves nothing a bound mutant does not).

Each mutant has a stable id PROGRAM:OP:LINE:COL, the position of the
changed token in the body (line 0 is the line of the opening brace;
columns from 1), so an id survives changes to the harness around the body.
A mutant that removes the body's closing barrier (__syncthreads(),
__syncwarp(), bar.sync), where the harness's next statement is
__syncthreads() or the kernel ends, is marked equivalent by construction, and so is a
modulus of threadIdx.x (or threadIdx.x / d) N -> N+1 where the launch's
block (the program's `launch:` line) keeps the value below N.

gpu-dir writes the mutants of PROGDIR's programs (scripts/gen-programs;
every program, 16-bit floats and inline PTX included) as OUT/FILE.cu with
a manifest.tsv scripts/gpu-check runs (each mutant in exact data and random
data with two seeds), the unmutated programs as FILE `NAME__orig`, and
OUT/mutants.tsv naming each file's mutant; gpu-score reads gpu-check's
results back (OUT/gpu-check/results.tsv, or OUT/shard*/gpu-check/...) and
prints the score.  tests/mutation/gpu-run.sh does both on a GPU machine.
"""
import argparse
import collections
import fnmatch
import os
import re
import sys
import zlib

MARKER = re.compile(r"/\* The emitted body \(variant ([^)]*)\)\. \*/")
OPS = ("aor", "ror", "const", "index", "loop", "drop", "minmax", "shfl")
# The data modes every mutant runs in: exact inputs, random inputs from the
# default seed and from a second one (scripts/gpu-check's MODE[:SEED]).
MODES = ("exact", "random", "random:2")

TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<pp>\#[^\n]*)
  | (?P<str>"(?:\\.|[^"\\])*")
  | (?P<chr>'(?:\\.|[^'\\])*')
  | (?P<num>0[xX][0-9a-fA-F]+[uUlL]*
      |(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFuUlL]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=
      |&=|\|=|\^=|::|[-+*/%<>=!~&|^?:;,.()\[\]{}])
""", re.S | re.X)

TYPES = {"int", "float", "double", "char", "short", "long", "unsigned",
         "signed", "bool", "void", "const", "volatile", "auto", "static",
         "__shared__", "register", "uint2", "uint4", "float2", "float4",
         "int2", "int4", "__half", "__half2", "__nv_bfloat16",
         "__nv_bfloat162", "half", "half2", "size_t"}
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "else", "do",
            "case", "asm", "volatile"}
BUILTIN_SWAPS = {
    "minmax": {"fmaxf": "fminf", "fminf": "fmaxf", "fmax": "fmin",
               "fmin": "fmax", "max": "min", "min": "max",
               "__hmax": "__hmin", "__hmin": "__hmax",
               "__hmax2": "__hmin2", "__hmin2": "__hmax2"},
    "aor": {"__hadd": "__hsub", "__hsub": "__hadd", "__hadd2": "__hsub2",
            "__hsub2": "__hadd2"},
}
IDENTITIES = {"FLT_MAX", "DBL_MAX", "INFINITY", "HUGE_VALF", "HUGE_VAL"}
SHUFFLES = {"__shfl_xor_sync", "__shfl_down_sync", "__shfl_up_sync",
            "__shfl_sync"}
SYNCS = {"__syncthreads", "__syncwarp"}


class Tok:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind, text, start, end):
        self.kind, self.text, self.start, self.end = kind, text, start, end

    def __repr__(self):
        return f"{self.kind}:{self.text}"


class Mutant:
    """One change: the text [start, end) of the program replaced by new."""
    __slots__ = ("id", "program", "variant", "op", "line", "col", "start",
                 "end", "new", "desc", "equivalent", "gpu_only", "invalid")

    def __init__(self, **kw):
        self.equivalent = None
        self.invalid = None
        self.gpu_only = False
        for k, v in kw.items():
            setattr(self, k, v)

    def apply(self, src):
        return src[:self.start] + self.new + src[self.end:]

    def diff(self, src):
        """(old line, new line) of the program around the change."""
        a = src.rfind("\n", 0, self.start) + 1
        b = src.find("\n", self.end)
        b = len(src) if b < 0 else b
        old = src[a:b]
        new = src[a:self.start] + self.new + src[self.end:b]
        return old.strip(), new.strip()


def tokenize(text, base=0):
    toks = []
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot tokenize at offset {base + pos}: "
                             f"{text[pos:pos + 20]!r}")
        kind = m.lastgroup
        if kind not in ("ws", "comment", "pp"):
            toks.append(Tok(kind, m.group(), base + m.start(),
                            base + m.end()))
        pos = m.end()
    return toks


def find_body(src):
    """(variant, start, end): the body's braces are src[start] and
    src[end - 1]; None when the program has no emitted body."""
    m = MARKER.search(src)
    if not m:
        return None
    open_at = src.find("{", m.end())
    if open_at < 0:
        return None
    depth = 0
    for t in tokenize(src[open_at:], open_at):
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
            if depth == 0:
                return m.group(1), open_at, t.end
    return None


def int_value(text):
    s = text.rstrip("uUlL")
    return int(s, 16) if s[:2].lower() == "0x" else int(s)


def is_float(text):
    return not text.lower().startswith("0x") and (
        "." in text or "e" in text.lower() or text[-1] in "fF")


def bump_int(text):
    """An integer literal c as c+1 (1 as 0), its suffix kept."""
    suf = text[len(text.rstrip("uUlL")):]
    v = int_value(text)
    return str(0 if v == 1 else v + 1) + suf


def bump_float(text):
    """A float literal: 0 -> 1, 1 -> 0, c -> c+1 (suffix kept)."""
    suf = "f" if text[-1] in "fF" else ""
    v = float(text.rstrip("fF"))
    nv = 1.0 if v == 0 else 0.0 if v == 1 else v + 1
    return repr(nv) + suf


class Frame:
    """An open ( or [: kind for/call/group/index, the call's name, the
    argument (or for-clause) index."""
    __slots__ = ("kind", "name", "arg", "open")

    def __init__(self, kind, name, open_index):
        self.kind, self.name, self.arg, self.open = kind, name, 0, open_index


# A frame as it stood at one token.
Snap = collections.namedtuple("Snap", "kind name arg")


def is_type_start(toks, i):
    """Whether toks[i] starts a declaration."""
    t = toks[i]
    if t.kind != "id":
        return False
    if t.text in TYPES or t.text.endswith("_t"):
        return True
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    return nxt is not None and (nxt.kind == "id" or (
        nxt.text == "*" and i + 2 < len(toks) and toks[i + 2].kind == "id"
        and t.text not in KEYWORDS))


def operand_end(tok):
    """Whether tok can end an operand (so a following + - * is binary)."""
    return (tok.kind in ("num", "chr") or tok.text in (")", "]")
            or (tok.kind == "id" and tok.text not in KEYWORDS
                and tok.text not in TYPES))


ARRAY_DECL = re.compile(r"^\s*(?:__shared__\s+)?(?:[A-Za-z_]\w*\s+)+"
                        r"([A-Za-z_]\w*)\[(\d+)\];", re.M)
PTX_OUT = re.compile(r"\btd_ptx_(?:ld_\w+|ldmatrix_\w+)\(([^;]*)\);")
# An mma.sync helper's call (codegen/print_mma.c): its first 4 operands
# are D's registers (2 with a float16 accumulator: f16_f16_f16_f16), the
# rest A, B and C, which may name D's registers again (accumulation in
# place).
MMA_CALL = re.compile(r"\btd_ptx_mma_sync_aligned_\w+?_row_col_(\w+)\("
                      r"([^;]*)\);")
WORD_VIEW = re.compile(r"\(\(unsigned int \*\)(\w+)\)")


def mma_outputs(types, args):
    """The registers an mma helper call writes, as NAME[K] texts."""
    regs = [WORD_VIEW.sub(r"\1", a.strip()) for a in args.split(",")]
    return regs[:2 if types == "f16_f16_f16_f16" else 4]


LOOP_HEAD = re.compile(r"for \(int (\w+) = 0; \1 (<=|<) (\d+); (?:\+\+\1|\1\+\+)\) \{")


def loop_past_array(msrc, m, sizes):
    """The reason a mutant's loop runs past an array the body declares
    (its head at the mutant's place, its variable V indexing NAME[V] in
    the loop's body, V reaching NAME's size), or None."""
    a = msrc.rfind("\n", 0, m.start) + 1
    head = LOOP_HEAD.search(msrc, a, msrc.find("\n", m.start))
    if head is None:
        return None
    var, rel, k = head.group(1), head.group(2), int(head.group(3))
    last = k if rel == "<=" else k - 1
    depth, i = 1, head.end()
    while i < len(msrc) and depth:
        depth += {"{": 1, "}": -1}.get(msrc[i], 0)
        i += 1
    body = msrc[head.end():i]
    for name in re.findall(r"\b([A-Za-z_]\w*)\[" + var + r"\]", body):
        if name in sizes and last >= sizes[name]:
            return (f"undefined: the loop's last step ({var} = {last}) "
                    f"indexes {name}[{last}] past the end of "
                    f"{name}[{sizes[name]}]")
    return None


def undefined(src, b0, b1, out):
    """Marks the mutants (m.invalid, a reason) whose program has undefined
    behaviour on its face, so no run can be trusted to show it: a constant
    index past the end of an array the body declares (NAME[K] with K >= N
    for `T NAME[N];`), or a PTX load (td_ptx_ld_*, td_ptx_ldmatrix_*)
    naming the same destination twice (which value it gets is not
    defined, and the one left out is read uninitialised), or an mma.sync
    helper naming one D register twice.  They count as
    stillborn: a program that is not valid CUDA, as one that does not
    compile."""
    sizes = {m.group(1): int(m.group(2))
             for m in ARRAY_DECL.finditer(src, b0, b1)}
    for m in out:
        if m.equivalent is not None:
            continue
        _, new = m.diff(src)
        for name, k in re.findall(r"\b([A-Za-z_]\w*)\[(\d+)\]", new):
            if name in sizes and int(k) >= sizes[name]:
                m.invalid = (f"undefined: {name}[{k}] past the end of "
                             f"{name}[{sizes[name]}]")
                break
        if m.invalid is None:
            m.invalid = loop_past_array(m.apply(src), m, sizes)
        if m.invalid is None:
            for call in PTX_OUT.finditer(new):
                regs = re.findall(r"\b\w+\[\d+\]", call.group(1).split(
                    "_ptr +")[0])
                dup = sorted({r for r in regs if regs.count(r) > 1})
                if dup:
                    m.invalid = (f"undefined: a PTX load writes {dup[0]} "
                                 "twice (the other destination is left "
                                 "uninitialised)")
                    break
        if m.invalid is None:
            for call in MMA_CALL.finditer(new):
                outs = mma_outputs(call.group(1), call.group(2))
                dup = sorted({r for r in outs if outs.count(r) > 1})
                if dup:
                    m.invalid = (f"undefined: an mma.sync writes {dup[0]} "
                                 "twice (the other D register is left "
                                 "uninitialised)")
                    break


# A plain store of a literal (`D_ptr[1] = 0.000000e+00f;`), or of anything.
STORE = re.compile(r"^\s*(\w+\[\d+\])\s*=\s*([^;]*);", re.M)
FLOAT_LIT = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?f?$")
# A float16 literal: `__float2half(0.000000e+00f)`.
HALF_LIT = re.compile(r"^__float2half\(([^()]*)\)$")
# A 32-bit word view of a register array: `((unsigned int *)D_ptr)[1]`.
WORD_REG = re.compile(r"^\(\(unsigned int \*\)(\w+)\)\[(\d+)\]$")


def is_literal(v):
    h = HALF_LIT.match(v)
    return FLOAT_LIT.match(h.group(1) if h else v) is not None


def register_parts(src, r):
    """The registers an mma operand names: itself, or for a word view of a
    float16 array (a float16 accumulator's C and D) its two halves; None
    for a word view of anything else."""
    w = WORD_REG.match(r)
    if w is None:
        return [r]
    name, k = w.group(1), int(w.group(2))
    if not re.search(r"\b__half %s\[" % re.escape(name), src):
        return None
    return [f"{name}[{2 * k}]", f"{name}[{2 * k + 1}]"]


def mma_same_constant(src, b0, b1, out):
    """Marks equivalent the mutants that make an mma.sync read its C
    operand from another register holding the same literal: in a
    straight-line body (no loop, no branch), a register's value at the
    call is its last store before it (an mma's D registers are its
    results, each its own).  At beta = 0 the body zeroes a tile's D
    registers and its first mma takes them as C, so C operand D_ptr[1] ->
    D_ptr[0] passes 0 for 0: nothing a program can observe."""
    body = src[b0:b1]
    if re.search(r"\b(?:for|while|if)\s*\(", body):
        return
    calls = list(MMA_CALL.finditer(src, b0, b1))
    for m in out:
        if m.op != "const" or m.equivalent is not None:
            continue
        call = next((c for c in calls if c.start(2) <= m.start < c.end(2)),
                    None)
        if call is None:
            continue
        args, at = [], call.start(2)
        for a in call.group(2).split(","):
            args.append((at, at + len(a), a))
            at += len(a) + 1
        idx = next(i for i, (a0, a1, _) in enumerate(args)
                   if a0 <= m.start < a1)
        n_c = len(mma_outputs(call.group(1), call.group(2)))
        if idx < len(args) - n_c:
            continue
        a0, a1, old = args[idx]
        new = src[a0:m.start] + m.new + src[m.end:a1]
        old, new = old.strip(), new.strip()
        # Each register's last write before the call: a store's value, or
        # an earlier mma's result (its own, never a literal).
        # A float16 accumulator's operands are word views: each names
        # the two halves the body stored.
        events = [(st.start(), st.group(1), st.group(2).strip())
                  for st in STORE.finditer(src, b0, call.start())]
        for c in calls:
            if c.start() < call.start():
                raw = [a.strip() for a in c.group(2).split(",")]
                n_out = len(mma_outputs(c.group(1), c.group(2)))
                for i, r in enumerate(raw[:n_out]):
                    for j, part in enumerate(register_parts(src, r) or [r]):
                        events.append((c.start(), part,
                                       f"mma result {c.start()}:{i}:{j}"))
        value = {}
        for _, r, v in sorted(events):
            value[r] = v
        p_old, p_new = register_parts(src, old), register_parts(src, new)
        if p_old is None or p_new is None or len(p_old) != len(p_new):
            continue
        v_old = [value.get(r) for r in p_old]
        v_new = [value.get(r) for r in p_new]
        if (None not in v_old and v_old == v_new and
                all(is_literal(v) for v in v_old)):
            v_old = v_old[0] if len(set(v_old)) == 1 else ", ".join(v_old)
            m.equivalent = (f"the mma's C operand {new} holds {v_old}, as "
                            f"{old} does (both stored before it, neither "
                            "written since)")


def mutants_of(src, program="prog"):
    """Every mutant of the program src (a list, in body order)."""
    found = find_body(src)
    if found is None:
        return []
    variant, b0, b1 = found
    toks = tokenize(src[b0:b1], b0)
    line0 = src.count("\n", 0, b0)
    defined = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", src))
    out = []

    def pos(off):
        line = src.count("\n", 0, off) - line0
        col = off - (src.rfind("\n", 0, off) + 1) + 1
        return line, col

    def add(op, tok_or_span, new, desc, **kw):
        if isinstance(tok_or_span, Tok):
            start, end = tok_or_span.start, tok_or_span.end
        else:
            start, end = tok_or_span
        line, col = pos(start)
        out.append(Mutant(id=f"{program}:{op}:{line}:{col}", program=program,
                          variant=variant, op=op, line=line, col=col,
                          start=start, end=end, new=new, desc=desc, **kw))

    # Pass 1: each token's enclosing frames, and statement starts.
    stack = []
    ctx = []          # per token: tuple(stack frames) at the token
    stmt_start = []   # token indexes that start a statement
    prev_sig = "{"
    paren_closes = {}  # index of ')' -> Frame it closed
    for i, t in enumerate(toks):
        if not stack and (prev_sig in ("{", "}", ";", "else") or
                          (prev_sig == ")" and paren_closes.get(i - 1) and
                           paren_closes[i - 1].kind in ("if", "for",
                                                        "while"))):
            if t.text not in ("{", "}"):
                stmt_start.append(i)
        ctx.append(tuple(Snap(f.kind, f.name, f.arg) for f in stack))
        if t.text == "(":
            p = toks[i - 1] if i else None
            if p is not None and p.text in ("for", "if", "while", "switch"):
                stack.append(Frame(p.text, p.text, i))
            elif p is not None and p.text in ("asm", "volatile"):
                stack.append(Frame("asm", "asm", i))
            elif p is not None and p.kind == "id" and p.text not in TYPES:
                stack.append(Frame("call", p.text, i))
            else:
                stack.append(Frame("group", None, i))
        elif t.text == "[":
            stack.append(Frame("index", None, i))
        elif t.text in (")", "]") and stack:
            paren_closes[i] = stack.pop()
        elif t.text == "," and stack:
            stack[-1].arg += 1
        elif t.text == ";" and stack and stack[-1].kind == "for":
            stack[-1].arg += 1
        prev_sig = t.text

    def frame_of(i, kind):
        for f in reversed(ctx[i]):
            if f.kind == kind:
                return f
        return None

    def in_for(i, clause=None):
        f = ctx[i][-1] if ctx[i] else None
        return f is not None and f.kind == "for" and (
            clause is None or f.arg == clause)

    def in_asm(i):
        return any(f.kind == "asm" for f in ctx[i])

    # The statement each token belongs to (its first token).
    stmt_of = [None] * len(toks)
    for s in stmt_start:
        j = s
        depth = 0
        while j < len(toks):
            stmt_of[j] = s
            if toks[j].text in ("(", "["):
                depth += 1
            elif toks[j].text in (")", "]"):
                depth -= 1
            elif toks[j].text in (";", "{", "}") and depth == 0:
                break
            j += 1

    def int_decl_init(i):
        """Whether toks[i] lies in an integer declaration's initialiser."""
        s = stmt_of[i]
        return (s is not None and toks[s].text in ("int", "const", "unsigned",
                                                   "long")
                and (toks[s].text != "const" or toks[s + 1].text == "int"))

    def template_bracket(i):
        t = toks[i]
        if t.text == "<":
            return (i + 2 < len(toks) and toks[i + 1].kind == "id" and
                    toks[i + 2].text == ">" and toks[i - 1].kind == "id"
                    and (toks[i + 1].text in TYPES or
                         toks[i + 1].text.endswith("_t")))
        if t.text == ">":
            return (i >= 3 and toks[i - 2].text == "<" and
                    template_bracket(i - 2))
        return False

    for i, t in enumerate(toks):
        if in_asm(i) or t.kind in ("str", "chr"):
            continue
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        fr = ctx[i][-1] if ctx[i] else None
        for_incr = any(f.kind == "for" and f.arg == 2 for f in ctx[i])
        if for_incr:
            continue
        # Comparisons: in a for condition (loop) or elsewhere (ror).
        swap = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=",
                "!=": "=="}
        if t.text in swap and not template_bracket(i):
            if in_for(i, 1):
                add("loop", t, swap[t.text],
                    f"loop condition {t.text} -> {swap[t.text]}")
            else:
                add("ror", t, swap[t.text], f"{t.text} -> {swap[t.text]}")
            continue
        # Arithmetic.
        arith = {"+": "-", "-": "+", "*": "/", "/": "*", "%": "/"}
        if t.text in arith and prev is not None and operand_end(prev) and \
                nxt is not None and nxt.text not in (")", ",", ";"):
            add("aor", t, arith[t.text], f"{t.text} -> {arith[t.text]}")
            continue
        comp = {"+=": "-=", "-=": "+=", "*=": "/=", "/=": "*="}
        if t.text in comp:
            add("aor", t, comp[t.text], f"{t.text} -> {comp[t.text]}")
            continue
        # Function names: max/min and add/sub swaps.
        if t.kind == "id" and nxt is not None and nxt.text == "(":
            for op in ("minmax", "aor"):
                other = BUILTIN_SWAPS[op].get(t.text)
                if other is None and op == "minmax":
                    m = re.search(r"max|min", t.text)
                    if m:
                        other = (t.text[:m.start()] +
                                 ("min" if m.group() == "max" else "max") +
                                 t.text[m.end():])
                        other = other if other in defined else None
                if other is None and op == "aor" and \
                        t.text.startswith("tvm_builtin_ptx_"):
                    m = re.search(r"_(add|sub)_", t.text)
                    if m:
                        other = (t.text[:m.start()] + ("_sub_" if m.group(1)
                                                       == "add" else "_add_")
                                 + t.text[m.end():])
                        other = other if other in defined else None
                if other is not None:
                    add(op, t, other, f"{t.text} -> {other}")
            continue
        # Identity constants: FLT_MAX, INFINITY and their negations.
        if t.kind == "id" and t.text in IDENTITIES:
            if prev is not None and prev.text == "-" and not operand_end(
                    toks[i - 2]):
                add("const", (prev.start, t.end), t.text,
                    f"-{t.text} -> {t.text}")
            else:
                add("const", t, "-" + t.text, f"{t.text} -> -{t.text}")
            continue
        if t.kind != "num":
            continue
        # Literals.
        if fr is not None and fr.kind == "call" and fr.name in SHUFFLES:
            if fr.arg == 2 and not is_float(t.text):
                v = int_value(t.text)
                nv = v // 2 if v > 1 else 2
                add("shfl", t, str(nv), f"{fr.name} lane {v} -> {nv}")
            continue
        if prev is not None and prev.text == "[" and i >= 3 and \
                toks[i - 2].kind == "id" and toks[i - 3].kind == "id" and \
                toks[i - 3].text not in KEYWORDS:
            continue   # an array's size in its declaration
        neg = prev is not None and prev.text == "-" and (
            i < 2 or not operand_end(toks[i - 2]))
        if is_float(t.text):
            v = float(t.text.rstrip("fF"))
            if abs(v) >= 1e4:
                if neg:
                    add("const", (prev.start, t.end), t.text,
                        f"-{t.text} -> {t.text}")
                else:
                    add("const", t, "-" + t.text, f"{t.text} -> -{t.text}")
            else:
                nv = bump_float(t.text)
                add("const", t, nv, f"{'-' if neg else ''}{t.text} -> "
                    f"{'-' if neg else ''}{nv}")
            continue
        new = bump_int(t.text)
        if in_for(i, 0):
            add("loop", t, new, f"loop start {t.text} -> {new}")
        elif in_for(i, 1):
            add("loop", t, str(int_value(t.text) - 1),
                f"loop bound {t.text} -> {int_value(t.text) - 1}")
        elif ((prev is not None and prev.text in ("+", "*") and i >= 2 and
               operand_end(toks[i - 2])) or
              (nxt is not None and nxt.text in ("+", "*") and
               (prev is None or not (prev.text in ("*", "/", "%"))))) and \
                (frame_of(i, "index") is not None or int_decl_init(i)):
            new = str(int_value(t.text) + 1)
            add("index", t, new, f"index {t.text} -> {new}")
        else:
            add("const", t, new, f"{t.text} -> {new}")

    # Dropped statements.
    last_real = None
    for s in stmt_start:
        t = toks[s]
        j = s
        while j < len(toks) and stmt_of[j] == s:
            j += 1
        end_tok = toks[j - 1]
        if end_tok.text != ";":
            continue
        span = (t.start, end_tok.end)
        text = src[t.start:end_tok.end]
        kind = None
        if t.text in SYNCS:
            kind = f"{t.text}()"
        elif t.text == "asm" and "bar.sync" in text:
            kind = "bar.sync"
        elif t.kind == "id" and t.text in KEYWORDS:
            continue
        elif not is_type_start(toks, s) and t.text != "asm":
            depth = 0
            for k in range(s, j):
                if toks[k].text in ("(", "["):
                    depth += 1
                elif toks[k].text in (")", "]"):
                    depth -= 1
                elif depth == 0 and toks[k].text in (
                        "=", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^="):
                    kind = "store"
                    break
        if kind is None:
            continue
        short = " ".join(text.split())
        if len(short) > 60:
            short = short[:57] + "..."
        add("drop", span, ";", f"drop {short}")
        last_real = (s, j, kind)
    # The body's closing barrier, where the harness's next statement is
    # __syncthreads() (as strong or stronger) or the kernel's end:
    # removing it changes nothing the program can observe.
    if last_real is not None and last_real[1] == len(toks) - 1 and \
            last_real[2] in ("__syncthreads()", "__syncwarp()", "bar.sync"):
        after = src[b1:b1 + 200].lstrip()
        if after.startswith("__syncthreads();"):
            out[-1].equivalent = ("the body's closing barrier; the harness "
                                  "syncs right after the body")
        elif after.startswith("}"):
            out[-1].equivalent = ("the body's closing barrier at the "
                                  "kernel's end: nothing of the kernel "
                                  "runs after it")
    # A modulus of threadIdx.x (or of threadIdx.x / d) at least as large
    # as the values the launch gives it: the mutant's N + 1 leaves every
    # value as it is, as N did.
    blk = re.search(r"^ \* launch: .*block \((\d+), \d+, \d+\)", src, re.M)
    for m in out if blk else ():
        if m.op != "const" or not src[m.start:m.end].isdigit():
            continue
        n = int(src[m.start:m.end])
        before = src[max(0, m.start - 40):m.start]
        t = re.search(r"([^\s])\s*(?:\(int\)\s*)?threadIdx\.x\s*"
                      r"(?:/\s*(\d+)\s*)?%\s*$", before)
        # Not an operand of * / % before it (a * threadIdx.x % N takes the
        # product's modulus).
        if t is None or t.group(1) in "*/%" or m.new != str(n + 1):
            continue
        d = int(t.group(2) or 1)
        top = (int(blk.group(1)) - 1) // d   # the largest value taken
        if top < n:
            x = "threadIdx.x" + (f" / {d}" if d > 1 else "")
            m.equivalent = (f"a {blk.group(1)}-thread block: {x} is at most "
                            f"{top}, so % {n + 1} == % {n}")
    # A mask's lowest bit set where the masked value is then divided by a
    # power of two D that the mask is a multiple of (the swizzle's row
    # term `(x & 448) / 8`): (x & (M + 1)) / D adds x's bit 0 to a
    # multiple of D, which the division drops.
    for m in out:
        if m.op != "const" or not src[m.start:m.end].isdigit():
            continue
        n = int(src[m.start:m.end])
        before = src[max(0, m.start - 8):m.start]
        after = re.match(r"\s*\)\s*/\s*(\d+)\b", src[m.end:m.end + 20])
        if not re.search(r"[^&]&\s*$", before) or after is None or \
                m.new != str(n + 1):
            continue
        d = int(after.group(1))
        if d >= 2 and d & (d - 1) == 0 and n % d == 0:
            m.equivalent = (f"(x & {n + 1}) / {d} == (x & {n}) / {d}: the "
                            f"mask's bit 0 is below the division by {d}")
    mma_same_constant(src, b0, b1, out)
    undefined(src, b0, b1, out)
    out.sort(key=lambda m: (m.line, m.col, OPS.index(m.op)))
    ids = [m.id for m in out]
    assert len(ids) == len(set(ids)), "mutant ids must be unique"
    return out


def read_equivalent(path):
    """{id or glob: reason} from a TSV file (# comments allowed)."""
    eq = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                cols = line.rstrip("\n").split("\t")
                eq[cols[0]] = cols[1] if len(cols) > 1 else "(no reason)"
    return eq


def equivalent_reason(m, eq):
    if m.equivalent:
        return m.equivalent
    if m.id in eq:
        return eq[m.id]
    for pat, why in eq.items():
        if any(c in pat for c in "*?[") and fnmatch.fnmatchcase(m.id, pat):
            return why
    return None


def pick(mutants, limit):
    """At most limit mutants, spread over the operators in turn (each
    operator's mutants evenly spaced through the body), the turn starting
    at an operator the program's name picks (so that a small limit still
    reaches every operator over many programs): deterministic."""
    if limit is None or len(mutants) <= limit:
        return list(mutants)
    by_op = {op: [m for m in mutants if m.op == op] for op in OPS}
    take = {op: 0 for op in OPS}
    first = zlib.crc32(mutants[0].program.encode()) % len(OPS)
    order = OPS[first:] + OPS[:first]
    left = limit
    while left:
        progressed = False
        for op in order:
            if left and take[op] < len(by_op[op]):
                take[op] += 1
                left -= 1
                progressed = True
        if not progressed:
            break
    kept = []
    for op in OPS:
        ms, k = by_op[op], take[op]
        if k:
            kept += [ms[(2 * j + 1) * len(ms) // (2 * k)] for j in range(k)]
    return sorted(kept, key=lambda m: (m.line, m.col, OPS.index(m.op)))


def file_name(m):
    """The mutant's file name (no extension): NAME__OP_LlineCcol."""
    return f"{m.program}__{m.op}_L{m.line}C{m.col}"


# Scoring -----------------------------------------------------------------

def score(rows, eq_file_used, allow_survivors, out=sys.stdout,
          gaps_file=None):
    """rows: dicts with mutant (Mutant), status (killed / survived /
    stillborn / equivalent / error), old, new, detail.  Prints the table per
    variant and operator and the survivors; returns the exit status."""
    def p(s=""):
        print(s, file=out)

    variants = sorted({r["mutant"].variant for r in rows})
    cols = ("killed", "survived", "equivalent", "stillborn")
    p(f"{'variant':16} {'op':7} {'mutants':>7} {'killed':>7} "
      f"{'survived':>8} {'equiv':>6} {'stillb':>6} {'score':>6}")

    def line(v, op, rs):
        n = len(rs)
        c = {k: sum(r["status"] == k for r in rs) for k in cols}
        live = c["killed"] + c["survived"]
        sc = f"{100.0 * c['killed'] / live:5.1f}%" if live else "    -"
        p(f"{v:16} {op:7} {n:7} {c['killed']:7} {c['survived']:8} "
          f"{c['equivalent']:6} {c['stillborn']:6} {sc:>6}")

    for v in variants:
        for op in OPS:
            rs = [r for r in rows if r["mutant"].variant == v and
                  r["mutant"].op == op]
            if rs:
                line(v, op, rs)
    for op in OPS:
        rs = [r for r in rows if r["mutant"].op == op]
        if rs:
            line("(all)", op, rs)
    line("(all)", "(all)", rows)
    errors = [r for r in rows if r["status"] == "error"]
    surv = [r for r in rows if r["status"] == "survived"]
    eqv = [r for r in rows if r["status"] == "equivalent"]
    stillborn = [r for r in rows if r["status"] == "stillborn"]
    p()
    if eqv:
        p(f"equivalent ({len(eqv)}, not counted in the score):")
        for r in eqv:
            p(f"  {r['mutant'].id}: {r['detail']}")
    if stillborn:
        p(f"stillborn ({len(stillborn)}, did not compile; not counted):")
        for r in stillborn:
            p(f"  {r['mutant'].id}: {r['mutant'].desc}")
    if gaps_file is None:
        gaps_file = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "known-gaps.tsv")
    gaps = read_equivalent(gaps_file)
    known = [r for r in surv if equivalent_reason(r["mutant"], gaps)]
    surv_new = [r for r in surv if r not in known]
    if known:
        # Survivors that are not equivalent, whose gap is known and written
        # down: still survivors (they count against the score), but they
        # do not fail the suite; the reason says what would close them.
        p(f"known gaps ({len(known)}; survivors listed in {gaps_file}, "
          f"counted in the score):")
        for r in known:
            p(f"  {r['mutant'].id}: "
              f"{equivalent_reason(r['mutant'], gaps)}")
    if surv_new:
        p(f"survivors ({len(surv_new)}; not in {eq_file_used}):")
        for r in surv_new:
            m = r["mutant"]
            p(f"  {m.id}: {m.desc}")
            p(f"      - {r['old']}")
            p(f"      + {r['new']}")
    for r in errors:
        p(f"error {r['mutant'].program}: {r['detail']}")
    n = len(rows)
    k = sum(r["status"] == "killed" for r in rows)
    p(f"mutation: {n} mutants, {k} killed, {len(surv)} survived, "
      f"{len(eqv)} equivalent, {len(stillborn)} stillborn"
      + (f", {len(errors)} errors" if errors else "")
      + (f"; score {100.0 * k / (k + len(surv)):.1f}%" if k + len(surv)
         else ""))
    if errors:
        p("FAIL: an unmutated program did not pass (see above)")
        return 1
    if surv_new and not allow_survivors:
        p(f"FAIL: {len(surv_new)} survivors not listed as equivalent "
          f"or as a known gap")
        return 1
    if surv_new:
        p(f"note: {len(surv_new)} survivors allowed (--allow-survivors)")
    return 0


# GPU mode ----------------------------------------------------------------

def read_manifest(d):
    rows = []
    with open(os.path.join(d, "manifest.tsv")) as f:
        for line in f:
            if line.strip():
                rows.append(line.rstrip("\n").split("\t"))
    return rows


def gpu_dir(args):
    rows = read_manifest(args.progdir)
    if args.names:
        rows = [r for r in rows if r[0] in args.names]
    os.makedirs(args.out, exist_ok=True)
    manifest, table = [], []
    total = 0
    for r in rows:
        name = r[0]
        with open(os.path.join(args.progdir, name + ".cu")) as f:
            src = f.read()
        ms = [m for m in mutants_of(src, name)
              if m.equivalent is None and m.invalid is None]
        total += len(ms)
        ms = pick(ms, args.per_program)
        if not ms:
            continue
        rest = r[1:3] + [",".join(MODES)] + r[4:5]
        orig = name + "__orig"
        with open(os.path.join(args.out, orig + ".cu"), "w") as f:
            f.write(src)
        manifest.append([orig] + rest)
        for m in ms:
            fn = file_name(m)
            with open(os.path.join(args.out, fn + ".cu"), "w") as f:
                f.write(m.apply(src))
            manifest.append([fn] + rest)
            old, new = m.diff(src)
            table.append([fn, m.id, m.variant, m.op, m.desc, old, new])
    shards = max(1, args.shards)
    for k in range(shards):
        part = manifest[k::shards] if shards > 1 else manifest
        path = (os.path.join(args.out, "manifest.tsv") if shards == 1 else
                os.path.join(args.out, f"shard{k}", "manifest.tsv"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            for row in part:
                f.write("\t".join(row) + "\n")
        if shards > 1:
            for row in part:
                dst = os.path.join(os.path.dirname(path), row[0] + ".cu")
                if not os.path.exists(dst):
                    os.link(os.path.join(args.out, row[0] + ".cu"), dst)
    with open(os.path.join(args.out, "mutants.tsv"), "w") as f:
        for row in table:
            f.write("\t".join(c.replace("\t", " ") for c in row) + "\n")
    print(f"gpu-dir: {len(table)} mutants (of {total}) of "
          f"{len(manifest) - len(table)} programs in {args.out}"
          + (f", {shards} shards" if shards > 1 else ""))
    return 0


def gpu_score(args):
    results = {}
    found = False
    for root, _dirs, files in os.walk(args.out):
        if "results.tsv" in files and os.path.basename(root) == "gpu-check":
            found = True
            with open(os.path.join(root, "results.tsv")) as f:
                for line in f:
                    c = line.rstrip("\n").split("\t")
                    if len(c) >= 4:
                        results.setdefault(c[0], []).append((c[1], c[3]))
    if not found:
        print(f"gpu-score: no gpu-check/results.tsv under {args.out}")
        return 2
    eq = read_equivalent(args.equivalent)
    rows = []
    with open(os.path.join(args.out, "mutants.tsv")) as f:
        for line in f:
            fn, mid, variant, op, desc, old, new = \
                line.rstrip("\n").split("\t")
            prog, _, ln, col = mid.rsplit(":", 3)
            m = Mutant(id=mid, program=prog, variant=variant, op=op,
                       line=int(ln), col=int(col), start=0, end=0, new="",
                       desc=desc)
            rs = results.get(fn)
            base = results.get(prog + "__orig", [])
            if not rs or any(res.startswith("not run") for _, res in rs):
                continue
            if any(not res.startswith("PASS") for _, res in base):
                rows.append({"mutant": m, "status": "error", "old": old,
                             "new": new, "detail": "unmutated program: " +
                             ", ".join(f"{md} {res}" for md, res in base)})
                continue
            why = equivalent_reason(m, eq)
            if any(res == "FAIL (compile)" for _, res in rs):
                st = "stillborn"
            elif any(res.startswith("FAIL") for _, res in rs):
                st = "killed"
            elif any(res.startswith("SKIP") for _, res in rs):
                continue
            else:
                st = "survived"
            if st == "survived" and why:
                st = "equivalent"
            rows.append({"mutant": m, "status": st, "old": old, "new": new,
                         "detail": why or ""})
    return score(rows, args.equivalent, args.allow_survivors)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(
        description="Mutants of the programs' emitted bodies.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("list")
    a.add_argument("programs", nargs="+")
    a = sub.add_parser("show")
    a.add_argument("program")
    a.add_argument("id")
    a = sub.add_parser("write")
    a.add_argument("programs", nargs="+")
    a.add_argument("-o", dest="out", required=True)
    a = sub.add_parser("gpu-dir")
    a.add_argument("out")
    a.add_argument("progdir")
    a.add_argument("names", nargs="*")
    a.add_argument("--per-program", type=int, default=None,
                   help="at most N mutants per program (spread over the "
                   "operators)")
    a.add_argument("--shards", type=int, default=1,
                   help="split the manifest into OUT/shardK/ for parallel "
                   "gpu-check runs")
    a = sub.add_parser("gpu-score")
    a.add_argument("out")
    a.add_argument("--equivalent",
                   default=os.path.join(here, "equivalent.tsv"))
    a.add_argument("--allow-survivors", action="store_true")
    args = ap.parse_args()

    def name_of(path):
        return os.path.basename(path)[:-3] if path.endswith(".cu") else \
            os.path.basename(path)

    if args.cmd == "list":
        for p in args.programs:
            with open(p) as f:
                for m in mutants_of(f.read(), name_of(p)):
                    print(f"{m.id}\t{m.desc}" + (
                        f"\t(equivalent: {m.equivalent})" if m.equivalent
                        else ""))
        return 0
    if args.cmd == "show":
        with open(args.program) as f:
            src = f.read()
        for m in mutants_of(src, name_of(args.program)):
            if m.id == args.id:
                sys.stdout.write(m.apply(src))
                return 0
        print(f"mutate.py: no mutant {args.id}", file=sys.stderr)
        return 1
    if args.cmd == "write":
        os.makedirs(args.out, exist_ok=True)
        n = 0
        for p in args.programs:
            with open(p) as f:
                src = f.read()
            for m in mutants_of(src, name_of(p)):
                with open(os.path.join(args.out, file_name(m) + ".cu"),
                          "w") as f:
                    f.write(m.apply(src))
                n += 1
        print(f"write: {n} mutants in {args.out}")
        return 0
    if args.cmd == "gpu-dir":
        return gpu_dir(args)
    return gpu_score(args)


if __name__ == "__main__":
    sys.exit(main())
