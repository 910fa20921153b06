#!/usr/bin/env python3
"""Checks tests/mutation/mutate.py on a tiny fixed program: each operator
yields exactly the expected mutants, the ids do not move when the harness
around the body changes, no mutant touches anything outside the body, the
per-program pick is deterministic and spread over the operators, and the
score fails on an unlisted survivor (passes with it listed, or with
--allow-survivors).  Then the GPU path without a GPU: gpu-dir writes the
mutants and a manifest in scripts/gpu-check's format (three data modes),
and gpu-score reads a results.tsv in gpu-check's format back.  And
gpu_full.py's pieces: a bundle holds the harness once and one kernel per
mutant (each the program's td_kernel with that mutant's body, renamed),
the shards split the programs without overlap (by seconds, a long
program in pieces), and its score counts killed, equivalent and not-run
mutants.  And the mutants mutate.py marks itself: undefined on their face
(stillborn) and the swizzle mask's dead bit (equivalent).

usage: test_mutate.py
"""
import io
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402
import gpu_full  # noqa: E402

TINY = r"""int td_outside(void) { return 1 + 2 < 4; }
__global__ void td_kernel(const float *A_ptr, float *B_ptr)
{
    float before = 0.0f + 1.0f * A_ptr[2 + 1];
    /* The emitted body (variant local). */
    {
        __shared__ float part[4];
        float acc = -FLT_MAX;
        for (int red = 0; red < 8; ++red) {
          acc = fmaxf(acc, A_ptr[red * 2 + 1]);
        }
        acc = fmaxf(acc, __shfl_xor_sync(0xffffffffu, acc, 4, 32));
        if (threadIdx.x == 0) {
          B_ptr[0] = acc + 1.5f;
        }
        __syncwarp();
        asm volatile("bar.sync %0, %1;" :: "r"(1), "r"(64) : "memory");
        B_ptr[1] -= B_ptr[2] / td_from_double<float>(2.0);
        __syncthreads();
    }
    __syncthreads();
    float after = fminf(3.0f * 4.0f, before);
}
"""

EXPECTED = """\
tiny:const:2:21 -FLT_MAX -> FLT_MAX
tiny:loop:3:24 loop start 0 -> 1
tiny:loop:3:31 loop condition < -> <=
tiny:loop:3:33 loop bound 8 -> 7
tiny:drop:4:11 drop acc = fmaxf(acc, A_ptr[red * 2 + 1]);
tiny:minmax:4:17 fmaxf -> fminf
tiny:aor:4:38 * -> /
tiny:index:4:40 index 2 -> 3
tiny:aor:4:42 + -> -
tiny:index:4:44 index 1 -> 2
tiny:drop:6:9 drop acc = fmaxf(acc, __shfl_xor_sync(0xffffffffu, acc, 4, 32));
tiny:minmax:6:15 fmaxf -> fminf
tiny:shfl:6:60 __shfl_xor_sync lane 4 -> 2
tiny:ror:7:25 == -> !=
tiny:const:7:28 0 -> 1
tiny:drop:8:11 drop B_ptr[0] = acc + 1.5f;
tiny:const:8:17 0 -> 1
tiny:aor:8:26 + -> -
tiny:const:8:28 1.5f -> 2.5f
tiny:drop:10:9 drop __syncwarp();
tiny:drop:11:9 drop asm volatile("bar.sync %0, %1;" :: "r"(1), "r"(64) : "mem...
tiny:drop:12:9 drop B_ptr[1] -= B_ptr[2] / td_from_double<float>(2.0);
tiny:const:12:15 1 -> 0
tiny:aor:12:18 -= -> +=
tiny:const:12:27 2 -> 3
tiny:aor:12:30 / -> *
tiny:const:12:54 2.0 -> 3.0
tiny:drop:13:9 drop __syncthreads();
"""

failed = 0


def expect(what, ok, detail=""):
    global failed
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + ("" if ok else
                                                   f": {detail}"))
    failed += not ok


def listing(ms):
    return "".join(f"{m.id} {m.desc}\n" for m in ms)


def check_gpu_full(ms):
    live = [m for m in ms if not m.equivalent][:3]
    # A program has a main and state after td_kernel (the bundle's main
    # runs the program's main once per run, its state put back first).
    prog = TINY + ("static long long td_mismatches = 0;\n"
                   "static char td_first[512];\n"
                   "int main(int argc, char **argv)\n{\n    return 0;\n}\n")
    texts = [prog] + [m.apply(prog) for m in live]
    b = gpu_full.bundle(prog, texts)
    a0, a1 = gpu_full.kernel_span(prog)
    head = prog[:a0]
    kernels = [t[slice(*gpu_full.kernel_span(t))].replace(
        "void td_kernel(", f"void td_kernel_m{k}(", 1)
        for k, t in enumerate(texts)]
    expect("gpu_full bundle: the harness once, then m0 (the program's "
           "kernel) and one kernel per mutant, each with its body",
           b.startswith(head + "\n".join(kernels)) and
           b.count("__global__ void td_kernel_m") == 4 and
           "void td_kernel(" not in b, b[:200])
    expect("gpu_full bundle: the launch runs td_kernels[td_picked], the "
           "program's main is td_main_one, the bundle's main runs the "
           "kernels its arguments name, putting the state back each run",
           "#define td_kernel (td_kernels[td_picked])" in b and
           "td_kernels[4] = {td_kernel_m0, td_kernel_m1, td_kernel_m2, "
           "td_kernel_m3}" in b and
           "static int td_main_one(int argc, char **argv)" in b and
           b.count("int main(int argc, char **argv)") == 1 and
           "memcpy(&td_mismatches, td_saved_td_mismatches" in b and
           "memcpy(&td_first, td_saved_td_first" in b and
           "TD_BROKEN" in b and "cudaDeviceReset()" in b,
           b[len(head):][-1500:])
    counts = {f"p{i}": (i % 3 == 0, 10 + i) for i in range(20)}
    shards = [gpu_full.shard_of(counts, k, 3) for k in range(3)]
    gpu = [sum(1 for n in sh if counts[n][0]) for sh in shards]
    expect("gpu_full shards: every program in exactly one shard, the "
           "GPU-only ones spread evenly",
           sorted(n for sh in shards for n in sh) == sorted(counts) and
           max(gpu) - min(gpu) <= 1, (shards, gpu))
    # Undefined on their face, and the swizzle mask's dead bit 0.
    ub = TINY.replace("B_ptr[1] -= B_ptr[2] / td_from_double<float>(2.0);",
                      "unsigned int tmp[2];\n        "
                      "td_ptx_ld_global_v2_u32(tmp[0], tmp[1], A_ptr + 0);\n"
                      "        int s = (threadIdx.x * 8 & 448) / 8;\n"
                      "        float a3[3];\n        a3[2] = 0.0f;")
    ms = {m.id.split(":", 1)[1]: m for m in mutate.mutants_of(ub, "ub")}
    bad = sorted(k for k, m in ms.items() if m.invalid)
    why = sorted(ms[k].invalid for k in bad)
    expect("undefined mutants: the load into tmp[0] or tmp[1] twice and "
           "a3[3] past a3[3] are invalid, nothing else",
           len(bad) == 3 and "writes tmp[0] twice" in why[0] and
           "writes tmp[1] twice" in why[1] and
           "a3[3] past the end of a3[3]" in why[2], (bad, why))
    # An mma.sync in place: a mutant naming one D register twice among
    # the first four operands is undefined; the same index in C's place
    # (operands 8..11, D's registers again) is an ordinary mutant.
    mma = TINY.replace(
        "B_ptr[1] -= B_ptr[2] / td_from_double<float>(2.0);",
        "td_ptx_mma_sync_aligned_m16n8k8_row_col_f32_f16_f16_f32(D_ptr[0], "
        "D_ptr[1], D_ptr[2], D_ptr[3], ((unsigned int *)A_ptr)[0], "
        "((unsigned int *)A_ptr)[1], ((unsigned int *)B_ptr)[0], D_ptr[0], "
        "D_ptr[1], D_ptr[2], D_ptr[3]);\n        "
        "td_ptx_mma_sync_aligned_m16n8k8_row_col_f16_f16_f16_f16("
        "((unsigned int *)E_ptr)[0], ((unsigned int *)E_ptr)[1], "
        "((unsigned int *)A_ptr)[0], ((unsigned int *)A_ptr)[1], "
        "((unsigned int *)B_ptr)[0], ((unsigned int *)E_ptr)[0], "
        "((unsigned int *)E_ptr)[1]);")
    def text_line(m):
        return mma[mma.rfind("\n", 0, m.start) + 1:mma.find("\n", m.start)]
    mm = [m for m in mutate.mutants_of(mma, "mma") if m.op == "const"
          and "td_ptx_mma" in text_line(m)]
    lines = sorted({m.line for m in mm})
    first = [m for m in mm if m.line == lines[0]]
    second = [m for m in mm if m.line == lines[-1]]
    why = [m.invalid for m in first if m.invalid]
    why2 = sorted(m.invalid for m in second if m.invalid)
    expect("mma mutants: a constant of D's first three registers (0 -> 1, "
           "1 -> 0, 2 -> 3) writes one twice; D's last (3 -> 4) and A's, "
           "B's and C's are defined; with a float16 accumulator its two "
           "words count, C's words (the same) do not",
           len(lines) == 2 and len(first) == 11 and len(why) == 3 and
           all("an mma.sync writes D_ptr[" in w for w in why) and
           [m.col for m in first if m.invalid] == [m.col for m in first[:3]]
           and len(second) == 7 and len(why2) == 2 and
           "writes E_ptr[0] twice" in why2[0] and
           "writes E_ptr[1] twice" in why2[1] and
           not any(m.invalid for m in second[2:]),
           [(m.line, m.col, m.desc, m.invalid) for m in mm])
    eqv = [k for k, m in ms.items() if m.equivalent and "mask" in
           m.equivalent]
    expect("the mask's bit 0 under / 8 is equivalent (448 -> 449 only)",
           len(eqv) == 1 and ms[eqv[0]].new == "449", eqv)
    # beta = 0: a tile's D registers zeroed, then its first mma takes
    # them as C; a C operand moved to another zeroed register reads the
    # same 0 (equivalent), one moved to C's own value (D_ptr[3] <- 1.5f)
    # or past the zeroed ones, and the second mma's C (the first's
    # results), do not.  A body with a loop gets no such marks.
    zero = ("__global__ void td_kernel(float *D_ptr)\n{\n"
            "    /* The emitted body (variant mma.m16n8k*). */\n    {\n"
            "        D_ptr[0] = 0.000000e+00f;\n"
            "        D_ptr[1] = 0.000000e+00f;\n"
            "        D_ptr[2] = 0.000000e+00f;\n"
            "        D_ptr[3] = 1.5f;\n"
            "        td_ptx_mma_sync_aligned_m16n8k8_row_col_f32_f16_f16_f32("
            "D_ptr[0], D_ptr[1], D_ptr[2], D_ptr[3], ((unsigned int *)A_ptr)"
            "[0], ((unsigned int *)A_ptr)[1], ((unsigned int *)B_ptr)[0], "
            "D_ptr[0], D_ptr[1], D_ptr[2], D_ptr[3]);\n"
            "        td_ptx_mma_sync_aligned_m16n8k8_row_col_f32_f16_f16_f32("
            "D_ptr[0], D_ptr[1], D_ptr[2], D_ptr[3], ((unsigned int *)A_ptr)"
            "[0], ((unsigned int *)A_ptr)[1], ((unsigned int *)B_ptr)[1], "
            "D_ptr[0], D_ptr[1], D_ptr[2], D_ptr[3]);\n"
            "    }\n    __syncthreads();\n}\n")
    zm = mutate.mutants_of(zero, "z")
    same = sorted(m.id for m in zm if m.equivalent and "holds" in
                  m.equivalent)
    expect("mma C operands: 0 -> 1 and 1 -> 0 among zeroed registers of "
           "the first mma are equivalent; 2 -> 3 (1.5f), the second mma's "
           "and the stores' are not",
           same == ["z:const:5:195", "z:const:5:205"], same)
    # A float16 accumulator: the mma's C and D are 32-bit word views, each
    # holding two halves.  Word 0 -> 1 among zeroed halves of the first
    # mma is equivalent; a word whose half holds 1.5 is not, nor is the
    # second mma's C (the first's results).
    h16 = ("__global__ void td_kernel(__half *x)\n{\n"
           "    __align__(16) __half D_ptr[4 + 8];\n"
           "    /* The emitted body (variant mma_ext.m16n8k*). */\n    {\n"
           "        D_ptr[0] = __float2half(0.000000e+00f);\n"
           "        D_ptr[1] = __float2half(0.000000e+00f);\n"
           "        D_ptr[2] = __float2half(0.000000e+00f);\n"
           "        D_ptr[3] = __float2half(1.5f);\n"
           "        td_ptx_mma_sync_aligned_m16n8k8_row_col_f16_f16_f16_f16("
           "((unsigned int *)D_ptr)[0], ((unsigned int *)D_ptr)[1], "
           "((unsigned int *)A_ptr)[0], ((unsigned int *)A_ptr)[1], "
           "((unsigned int *)B_ptr)[0], ((unsigned int *)D_ptr)[0], "
           "((unsigned int *)D_ptr)[1]);\n"
           "        td_ptx_mma_sync_aligned_m16n8k8_row_col_f16_f16_f16_f16("
           "((unsigned int *)D_ptr)[0], ((unsigned int *)D_ptr)[1], "
           "((unsigned int *)A_ptr)[0], ((unsigned int *)A_ptr)[1], "
           "((unsigned int *)B_ptr)[1], ((unsigned int *)D_ptr)[0], "
           "((unsigned int *)D_ptr)[1]);\n"
           "    }\n    __syncthreads();\n}\n")
    hm = mutate.mutants_of(h16, "h")
    hsame = [(m.id, m.desc) for m in hm
             if m.equivalent and "holds" in m.equivalent]
    expect("float16 accumulator: C word 0 -> 1 is not equivalent (word 1 "
           "holds 1.5), and no other C word of either mma is",
           hsame == [], hsame)
    h16z = h16.replace("__float2half(1.5f)", "__float2half(0.000000e+00f)")
    hz = mutate.mutants_of(h16z, "hz")
    hzsame = sorted((m.line, m.desc) for m in hz
                    if m.equivalent and "holds" in m.equivalent)
    expect("float16 accumulator, every half zeroed: the first mma's C "
           "words 0 -> 1 and 1 -> 0 are equivalent, the second's are not",
           hzsame == [(5, "0 -> 1"), (5, "1 -> 0")], hzsame)
    loop = zero.replace("        D_ptr[0] = 0.000000e+00f;\n",
                        "        for (int i = 0; i < 1; ++i)\n"
                        "            D_ptr[0] = 0.000000e+00f;\n")
    expect("no equivalent C operands in a body with a loop",
           not any(m.equivalent for m in mutate.mutants_of(loop, "l")),
           [m.id for m in mutate.mutants_of(loop, "l") if m.equivalent])
    # By the table's seconds: a long program cut into pieces, every
    # mutant in exactly one shard, the shards' seconds even.
    counts = {"long": (True, 99), "a": (True, 9), "b": (True, 9),
              "new": (True, 19)}
    rates = {"long": 3.0, "a": 1.0, "b": 1.0}
    shards = [gpu_full.shard_of(counts, k, 3, rates, cap=50.0)
              for k in range(3)]
    cost = gpu_full.costs_of(counts, rates)
    got = sorted((n, i) for sh in shards for n, idx in sh.items()
                 for i in idx)
    per = [sum(cost[n][1] * len(i) / counts[n][1] for n, i in sh.items())
           for sh in shards]
    expect("gpu_full shards by seconds: the 300 s program in 3 pieces, "
           "every mutant once, the new one at the median rate (1 s)",
           got == sorted((n, i) for n, (_, c) in counts.items()
                         for i in range(c)) and
           all("long" in sh for sh in shards) and
           cost["new"][1] == 20.0 and max(per) - min(per) < 40, (shards, per))
    with tempfile.TemporaryDirectory() as tmp:
        rows = [(live[0], "killed"), (live[1], "survived"),
                (live[2], "not-run")]
        with open(os.path.join(tmp, "results-0.tsv"), "w") as f:
            for m, st in rows:
                f.write("\t".join([m.id, m.variant, m.op, st, m.desc, "",
                                   "a", "b", "gpu"]) + "\n")
        eqf = os.path.join(tmp, "eq.tsv")
        with open(eqf, "w") as f:
            f.write(f"{live[1].id}\tsee why\n")
        p = subprocess.run([sys.executable,
                            os.path.join(HERE, "gpu_full.py"), "score", tmp,
                            "--equivalent", eqf],
                           capture_output=True, text=True)
        expect("gpu_full score: 1 killed, 1 equivalent, 1 not run -> "
               "exit 1", p.returncode == 1 and "not run: 1 (past a shard's "
               "deadline; 1 of programs" in p.stdout and
               "2 mutants, 1 killed, 0 survived, 1 equivalent" in p.stdout,
               p.stdout + p.stderr)
    # known gaps: a listed survivor counts in the score, fails nothing; an
    # unlisted one still fails.
    with tempfile.TemporaryDirectory() as tmp:
        gf = os.path.join(tmp, "gaps.tsv")
        with open(gf, "w") as f:
            f.write(f"{live[0].id}\tthe program runs one value only\n")
        rows = [{"mutant": live[0], "status": "survived", "detail": "",
                 "old": "a", "new": "b"},
                {"mutant": live[1], "status": "killed", "detail": "",
                 "old": "a", "new": "b"}]
        buf = io.StringIO()
        rc = mutate.score(rows, "eq.tsv", False, out=buf, gaps_file=gf)
        expect("a known-gap survivor: reported, counted in the score (50%), "
               "exit 0", rc == 0 and "known gaps (1;" in buf.getvalue() and
               "score 50.0%" in buf.getvalue(), buf.getvalue())
        rows.append({"mutant": live[2], "status": "survived", "detail": "",
                     "old": "a", "new": "b"})
        buf = io.StringIO()
        rc = mutate.score(rows, "eq.tsv", False, out=buf, gaps_file=gf)
        expect("an unlisted survivor beside a known gap still fails",
               rc == 1 and "FAIL: 1 survivors not listed" in buf.getvalue(),
               buf.getvalue())
    # carry: an earlier run's rows hold only for the same program and the
    # same mutant; --done leaves exactly those out of a run.
    with tempfile.TemporaryDirectory() as tmp:
        old, new = os.path.join(tmp, "old"), os.path.join(tmp, "new")
        os.makedirs(old)
        os.makedirs(new)
        changed = TINY.replace("float before", "float before_y")
        for d, a, b in ((old, TINY, TINY), (new, TINY, changed)):
            for name, text in (("same", a), ("moved", b)):
                with open(os.path.join(d, name + ".cu"), "w") as f:
                    f.write(text)
        res = os.path.join(tmp, "results-0.tsv")
        same = [m for m in mutate.mutants_of(TINY, "same")
                if m.equivalent is None]
        moved = [m for m in mutate.mutants_of(TINY, "moved")
                 if m.equivalent is None]
        with open(res, "w") as f:
            for m, st in ((same[0], "killed"), (same[1], "survived"),
                          (same[2], "not-run"), (moved[0], "killed")):
                f.write(gpu_full.result_line(
                    [m.id, m.variant, m.op, st, m.desc, ""] +
                    list(m.diff(TINY)) + ["gpu"]))
            # A row whose mutant today changes another line: not carried.
            m = same[3]
            f.write(gpu_full.result_line(
                [m.id, m.variant, m.op, "killed", m.desc, "", "x", "y",
                 "gpu"]))
        out = os.path.join(tmp, "results-carried.tsv")
        p = subprocess.run([sys.executable,
                            os.path.join(HERE, "gpu_full.py"), "carry", old,
                            new, res, "-o", out],
                           capture_output=True, text=True)
        got = [r[0] for r in gpu_full.read_rows(out)] \
            if os.path.exists(out) else []
        expect("gpu_full carry keeps the decided rows of an unchanged "
               "program whose mutant is unchanged, and only those",
               p.returncode == 0 and got == [same[0].id, same[1].id] and
               "left out 1: mutant changed" in p.stdout and
               "left out 1: not decided" in p.stdout and
               "left out 1: program changed" in p.stdout,
               (got, p.stdout, p.stderr))
        done = gpu_full.read_done([out])
        expect("--done leaves out exactly the carried mutants",
               [m.id for m in same
                if done.get(m.id) == gpu_full.clean_diff(m, TINY)] ==
               [same[0].id, same[1].id], sorted(done))


def main():
    ms = mutate.mutants_of(TINY, "tiny")
    got = listing(ms)
    expect("the tiny program's mutants, ids and descriptions", got ==
           EXPECTED, "\n" + got)
    expect("every operator yields a mutant",
           {m.op for m in ms} == set(mutate.OPS), {m.op for m in ms})
    eq = [m for m in ms if m.equivalent]
    expect("the closing __syncthreads() before the harness's own is "
           "equivalent by construction",
           [m.id for m in eq] == ["tiny:drop:13:9"], [m.id for m in eq])
    # A modulus of threadIdx.x that the launch makes moot.
    lanes = (" * launch:  grid (1, 1, 1), block (BLK, 1, 1);\n"
             "__global__ void td_kernel(float *B_ptr)\n{\n"
             "    /* The emitted body (variant local). */\n    {\n"
             "        int lane = (int)threadIdx.x % 32;\n"
             "        int warp = (int)threadIdx.x / 32 % 4;\n"
             "        int q = 2 * threadIdx.x % 32;\n"
             "        B_ptr[lane + warp + q] = 1.0f;\n    }\n}\n")

    def moot(blk):
        return sorted(m.desc for m in mutate.mutants_of(
            lanes.replace("BLK", str(blk)), "l")
            if m.equivalent and "thread block" in m.equivalent)
    expect("threadIdx.x % 32 -> % 33 and threadIdx.x / 32 % 4 -> % 5 are "
           "equivalent by construction in a 32-thread block, only the "
           "second in a 128-thread one, neither in a 129-thread one; "
           "2 * threadIdx.x % 32 never",
           moot(32) == ["32 -> 33", "4 -> 5"] and moot(128) == ["4 -> 5"]
           and moot(129) == [], (moot(32), moot(128), moot(129)))
    # Stable ids: more harness before the body, other names outside.
    moved = ("/* two more\n   harness lines */\n" + TINY).replace(
        "float before", "double before_x")
    expect("ids and descriptions do not move with the harness",
           listing(mutate.mutants_of(moved, "tiny")) == got)
    expect("the same program gives the same mutants twice",
           listing(mutate.mutants_of(TINY, "tiny")) == got)
    # Nothing outside the body.
    _, b0, b1 = mutate.find_body(TINY)
    outside = []
    for m in ms:
        text = m.apply(TINY)
        tail = len(TINY) - b1
        if not (b0 < m.start and m.end < b1 and text[:b0 + 1] ==
                TINY[:b0 + 1] and text[len(text) - tail - 1:] ==
                TINY[b1 - 1:] and text != TINY):
            outside.append(m.id)
    expect("every mutant changes the body and only the body", not outside,
           outside)
    m = next(m for m in ms if m.id == "tiny:shfl:6:60")
    expect("a mutant's text: the shuffle's lane 4 -> 2",
           "__shfl_xor_sync(0xffffffffu, acc, 2, 32)" in m.apply(TINY))
    m = next(m for m in ms if m.id == "tiny:drop:11:9")
    expect("a dropped bar.sync leaves an empty statement",
           m.diff(TINY) == (
               'asm volatile("bar.sync %0, %1;" :: "r"(1), "r"(64) : '
               '"memory");', ";"), m.diff(TINY))
    expect("a program without an emitted body has no mutants",
           mutate.mutants_of(TINY.replace("The emitted body", "A body"),
                             "tiny") == [])
    # The pick.
    p1 = [m.id for m in mutate.pick(ms, 9)]
    p2 = [m.id for m in mutate.pick(mutate.mutants_of(TINY, "tiny"), 9)]
    expect("pick(9) is deterministic, 9 mutants over 8 operators",
           p1 == p2 and len(p1) == 9 and
           len({i.split(":")[1] for i in p1}) == 8, p1)
    # The score.
    rows = [{"mutant": ms[0], "status": "killed", "old": "", "new": "",
             "detail": ""},
            {"mutant": ms[1], "status": "survived", "old": "a", "new": "b",
             "detail": ""}]
    out = io.StringIO()
    rc = mutate.score(rows, "equivalent.tsv", False, out)
    expect("an unlisted survivor fails the score",
           rc == 1 and "tiny:loop:3:24" in out.getvalue() and
           "1 survived" in out.getvalue(), out.getvalue())
    expect("--allow-survivors passes with it",
           mutate.score(rows, "x", True, io.StringIO()) == 0)
    with tempfile.TemporaryDirectory() as tmp:
        eqf = os.path.join(tmp, "eq.tsv")
        with open(eqf, "w") as f:
            f.write("# comment\ntiny:loop:*\tthe start is unused\n")
        why = mutate.equivalent_reason(ms[1], mutate.read_equivalent(eqf))
        expect("equivalent.tsv: a glob line names the mutant",
               why == "the start is unused", why)
        # The GPU path: gpu-dir, then gpu-score on made-up results.
        prog = os.path.join(tmp, "progs")
        os.makedirs(prog)
        with open(os.path.join(prog, "tiny.cu"), "w") as f:
            f.write(TINY)
        with open(os.path.join(prog, "manifest.tsv"), "w") as f:
            f.write("tiny\tlocal\tsm_90a\texact,random\tlocal/thread/"
                    "float32/max\n")
        out = os.path.join(tmp, "out")
        tool = os.path.join(HERE, "mutate.py")
        p = subprocess.run([sys.executable, tool, "gpu-dir", out, prog,
                            "--per-program", "5"],
                           capture_output=True, text=True)
        with open(os.path.join(out, "manifest.tsv")) as f:
            man = [line.rstrip("\n").split("\t") for line in f]
        expect("gpu-dir: the unmutated program and 5 mutants, three data "
               "modes each", p.returncode == 0 and len(man) == 6 and
               man[0][0] == "tiny__orig" and
               all(r[3] == "exact,random,random:2" for r in man) and
               all(os.path.exists(os.path.join(out, r[0] + ".cu"))
                   for r in man), p.stdout + p.stderr + str(man))
        os.makedirs(os.path.join(out, "gpu-check"))
        with open(os.path.join(out, "gpu-check", "results.tsv"), "w") as f:
            for i, r in enumerate(man):
                for mode in ("exact", "random", "random:2"):
                    res = "FAIL" if i in (1, 2) and mode == "exact" else \
                        "FAIL (compile)" if i == 3 else "PASS"
                    f.write(f"{r[0]}\t{mode}\tlocal\t{res}\t-\n")
        p = subprocess.run([sys.executable, tool, "gpu-score", out,
                            "--equivalent", eqf],
                           capture_output=True, text=True)
        expect("gpu-score: 2 killed, 1 stillborn, 2 survivors -> exit 1",
               p.returncode == 1 and "5 mutants, 2 killed, 2 survived, "
               "0 equivalent, 1 stillborn" in p.stdout, p.stdout + p.stderr)
    check_gpu_full(ms)
    print(f"test_mutate: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
