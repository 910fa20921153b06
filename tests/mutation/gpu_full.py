#!/usr/bin/env python3
"""Every mutant of every program on a GPU, in shards that fit one call.

usage: gpu_full.py run PROGDIR OUTDIR --shard I/N [-j JOBS] [--runners R]
                   [--bundle B] [--timeout S] [--deadline S] [--all]
                   [--arch ARCH] [--only NAME,...]
       gpu_full.py score OUTDIR [--equivalent FILE] [--allow-survivors]

PROGDIR is scripts/gen-programs' output (the .cu files and manifest.tsv).
`run` (on the GPU machine: python3, nvcc and the GPU only) takes the
programs of shard I of N that the GPU can run (manifest arch sm_90a or
older), by default only those the CPU stand-in cannot run (16-bit floats,
inline PTX: tests/cuda/emu.py's NOT_EMULATED), every one with --all, and
every mutant of each (tests/mutation/mutate.py, those not equivalent by
construction).  The shards split the programs by their mutant counts
(largest first onto the lightest shard: deterministic).

Compiling one program per mutant would cost an nvcc run (a few seconds of
host compilation, almost all of it the harness) per mutant.  Instead the
mutants of a program go into bundles of at most B kernels: one .cu with the
harness once and the kernel once per mutant (td_kernel_m0 the unmutated
body, td_kernel_mK mutant K), the launch picking its kernel from the
environment variable TD_MUTANT.  Each kernel is its program's td_kernel
with only its body changed, compiled on its own by ptxas, and each run is
its own process, so a run of kernel K behaves as the one-mutant program
would.  A bundle that does not compile is split in halves until the
kernel that breaks it stands alone (stillborn).

Each kernel runs like the mutation suite's programs: --data exact, --data
random, --data random --seed 2, stopping at the first run that is not a
PASS.  A mutant is KILLED when any run FAILs, crashes or runs past
--timeout seconds (a program error counts: the mutant made the program
fail), SURVIVED when all three PASS.  The unmutated kernel m0 of each
program must pass all three first, else the program's mutants are ERROR.
With --deadline S (seconds after the start) no new work starts after it,
no run goes on past S + --grace (default 60), and what is left is
reported as NOT-RUN, so a call ends in time.

Results (OUTDIR): results-I.tsv (mutant id, variant, operator, status,
description, detail, the old and new line, gpu or cpu: whether the CPU
stand-in can run the program), log-I.txt (progress, times, counts).  `score`
reads every results-*.tsv under OUTDIR and prints mutate.py's table
(equivalent.tsv applied); exit 1 on a survivor not listed there, unless
--allow-survivors.
"""
import argparse
import concurrent.futures
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402

RUNS = [["--data", "exact"], ["--data", "random"],
        ["--data", "random", "--seed", "2"]]
KERNEL = re.compile(r"^__global__ void td_kernel\(", re.M)


def not_emulated():
    """tests/cuda/emu.py's test of what the CPU stand-in cannot run."""
    spec = importlib.util.spec_from_file_location(
        "td_emu", os.path.join(HERE, "..", "cuda", "emu.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.NOT_EMULATED


def kernel_span(src):
    """[start, end) of the td_kernel function in a program."""
    m = KERNEL.search(src)
    if m is None:
        return None
    end = src.find("\n}\n", m.end())
    return (m.start(), end + 3) if end >= 0 else None


def bundle(src, texts):
    """The program with one kernel per text (texts[0] the program itself,
    the others its mutants, each differing only inside td_kernel's body)
    and the launch picking one through TD_MUTANT."""
    a, b = kernel_span(src)
    kernels = []
    for k, t in enumerate(texts):
        ka, kb = kernel_span(t)
        kernels.append(t[ka:kb].replace("void td_kernel(",
                                        f"void td_kernel_m{k}(", 1))
    n = len(texts)
    pick = (
        "/* The bundle's kernels: m0 the program's body, mK its mutant K;\n"
        " * TD_MUTANT=K picks the one the launch runs. */\n"
        f"static decltype(&td_kernel_m0) const td_kernels[{n}] = {{"
        + ", ".join(f"td_kernel_m{k}" for k in range(n)) + "};\n"
        "static int td_pick_kernel(void)\n{\n"
        "    const char *v = getenv(\"TD_MUTANT\");\n"
        "    const int k = v != NULL ? atoi(v) : 0;\n"
        f"    if (k < 0 || k >= {n}) {{\n"
        "        fprintf(stderr, \"TD_MUTANT out of range\\n\");\n"
        "        exit(2);\n    }\n    return k;\n}\n"
        "static const int td_picked = td_pick_kernel();\n"
        "#define td_kernel (td_kernels[td_picked])\n")
    return src[:a] + "\n".join(kernels) + pick + src[b:]


def shard_of(counts, k, n):
    """The programs of shard k of n: largest first onto the lightest,
    the programs the CPU stand-in cannot run (counts[name][0] true)
    spread first and on their own, so every shard has its share of them."""
    load = [[0] * n, [0] * n]
    owner = {}
    for name in sorted(counts, key=lambda x: (not counts[x][0],
                                              -counts[x][1], x)):
        cls = 0 if counts[name][0] else 1
        j = min(range(n), key=lambda i: (load[cls][i], i))
        load[cls][j] += counts[name][1] + 3  # the unmutated program's runs
        owner[name] = j
    return {name for name, j in owner.items() if j == k}


def run_cmd(args):
    t0 = time.monotonic()
    k, n = (int(x) for x in args.shard.split("/"))
    os.makedirs(args.outdir, exist_ok=True)
    log = open(os.path.join(args.outdir, f"log-{k}.txt"), "w")
    lock = threading.Lock()

    def say(msg):
        with lock:
            line = f"[{time.monotonic() - t0:6.1f} s] {msg}"
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()

    rows = [r for r in mutate.read_manifest(args.progdir)
            if not (args.only and r[0] not in args.only.split(","))]
    ne = not_emulated()
    progs = {}
    for r in rows:
        arch = re.sub(r"\D", "", r[2]) or "0"
        if int(arch) > int(re.sub(r"\D", "", args.arch)):
            continue
        with open(os.path.join(args.progdir, r[0] + ".cu")) as f:
            src = f.read()
        if not args.all and not ne.search(src):
            continue
        progs[r[0]] = (r, src, bool(ne.search(src)))
    counts = {}
    muts = {}
    for name, (r, src, gpu_only) in progs.items():
        ms = [m for m in mutate.mutants_of(src, name) if m.equivalent is None]
        muts[name] = ms
        counts[name] = (gpu_only, len(ms))
    names = shard_of(counts, k, n)
    # The programs only the GPU can run first (a deadline cuts the
    # others), the ones with the most mutants first within each class (so
    # no large program starts last).
    mine = sorted((r for r in rows if r[0] in names),
                  key=lambda r: (not progs[r[0]][2], -counts[r[0]][1], r[0]))
    nm = sum(counts[r[0]][1] for r in mine)
    ng = sum(1 for r in mine if progs[r[0]][2])
    say(f"shard {k}/{n}: {len(mine)} programs ({ng} the CPU stand-in "
        f"cannot run), {nm} mutants (all shards: {len(progs)} programs, "
        f"{sum(c[1] for c in counts.values())} mutants), "
        f"-j {args.j}, {args.runners} runners, bundles of {args.bundle}")
    deadline = t0 + args.deadline if args.deadline else None
    hard_end = deadline + args.grace if deadline is not None else None
    results = {}   # mutant id -> (mutant, status, detail)
    tmp = tempfile.mkdtemp(prefix="gpu_full_")
    nvcc = os.environ.get("NVCC", "nvcc")
    stats = {"compiles": 0, "compile_s": 0.0, "runs": 0, "run_s": 0.0}

    def late():
        return deadline is not None and time.monotonic() > deadline

    def compile_bundle(name, src, idx, tag):
        """Binary path for kernels idx of the program (None: failed)."""
        texts = [src] + [muts[name][i].apply(src) for i in idx]
        cu = os.path.join(tmp, f"{name}__{tag}.cu")
        with open(cu, "w") as f:
            f.write(bundle(src, texts))
        exe = cu[:-3]
        c0 = time.monotonic()
        p = subprocess.run([nvcc, "-O2", f"-arch={args.arch}", "-o", exe, cu],
                           capture_output=True, text=True)
        with lock:
            stats["compiles"] += 1
            stats["compile_s"] += time.monotonic() - c0
        os.unlink(cu)
        return exe if p.returncode == 0 else None, p.stderr

    def run_kernel(exe, slot, pname, limit):
        """('PASS', '', the longest run's seconds) or the first run that
        did not pass."""
        longest = 0.0
        for a in RUNS:
            if late():
                return "NOT-RUN", "past the deadline", longest
            r0 = time.monotonic()
            # No run goes on past the deadline's grace (the call's end):
            # one cut short there was not run, not killed.
            cut = limit if hard_end is None else \
                min(limit, max(1.0, hard_end - r0))
            try:
                p = subprocess.run([exe] + a, capture_output=True, text=True,
                                   timeout=cut,
                                   env=dict(os.environ, TD_MUTANT=str(slot)))
                first = (p.stdout.strip().splitlines() or [""])[0]
                rc = p.returncode
            except subprocess.TimeoutExpired:
                if cut < limit:
                    return "NOT-RUN", "cut at the deadline's grace", longest
                first, rc = f"timeout after {limit:.0f} s", None
            took = time.monotonic() - r0
            longest = max(longest, took)
            with lock:
                stats["runs"] += 1
                stats["run_s"] += took
            if rc == 0 and first.startswith(f"PASS {pname} "):
                continue
            if rc == 77:
                return "SKIP", first[:200], longest
            return "FAIL", f"{' '.join(a)}: exit {rc}: {first[:200]}", longest
        return "PASS", "", longest

    runner = concurrent.futures.ThreadPoolExecutor(max(1, args.runners))

    def program(r):
        name, src = r[0], progs[r[0]][1]
        m = re.search(r'TD_NAME\[\] = "([^"]*)"', src)
        pname = m.group(1) if m else name
        ms = muts[name]
        pending = list(range(len(ms)))
        groups = [pending[i:i + args.bundle]
                  for i in range(0, len(pending), args.bundle)] or [[]]
        base = None
        bare_ok = False
        limit = args.timeout
        gi = 0
        while groups:
            idx = groups.pop(0)
            if late():
                for i in idx:
                    results[ms[i].id] = (ms[i], "not-run", "past the deadline")
                continue
            exe, err = compile_bundle(name, src, idx, f"b{gi}")
            gi += 1
            if exe is None and base is None and idx and not bare_ok:
                # Does the program itself compile?  If not, its mutants
                # prove nothing (errors, not stillborn).
                bare, berr = compile_bundle(name, src, [], f"b{gi}")
                gi += 1
                if bare is None:
                    for i in pending:
                        results[ms[i].id] = (ms[i], "error", "unmutated "
                                             "program: nvcc: "
                                             + berr.strip()[:300])
                    break
                os.unlink(bare)
                bare_ok = True
            if exe is None:
                if len(idx) <= 1:
                    if not idx:
                        base = ("error", "nvcc: " + err.strip()[:300])
                    for i in idx:
                        results[ms[i].id] = (ms[i], "stillborn",
                                             err.strip().splitlines()[0][:200]
                                             if err.strip() else "nvcc failed")
                    continue
                h = len(idx) // 2
                groups[:0] = [idx[:h], idx[h:]]
                continue
            if base is None:
                st, det, took = runner.submit(run_kernel, exe, 0, pname,
                                              args.base_timeout).result()
                base = ("ok", "") if st == "PASS" else \
                    ("not-run", det) if st == "NOT-RUN" else \
                    ("error", f"unmutated program: {st} {det}")
                # A mutant may take a few times the unmutated program's
                # longest run before it counts as hanging (killed).
                limit = max(args.timeout, 3.0 * took + 2.0)
            futs = []
            for j, i in enumerate(idx):
                if base[0] != "ok":
                    results[ms[i].id] = (ms[i], base[0], base[1])
                    continue
                futs.append((i, runner.submit(run_kernel, exe, j + 1, pname,
                                              limit)))
            for i, fu in futs:
                st, det, _ = fu.result()
                status = {"PASS": "survived", "FAIL": "killed",
                          "SKIP": "skipped", "NOT-RUN": "not-run"}[st]
                results[ms[i].id] = (ms[i], status, det)
            os.unlink(exe)
        if base is not None and base[0] != "ok" and not ms:
            say(f"{name}: {base[1]}")
        done = sum(1 for m in ms if m.id in results)
        say(f"{name}: {done} mutants, "
            f"{sum(1 for m in ms if results.get(m.id, (0, ''))[1] == 'killed')}"
            f" killed" + ("" if base is None or base[0] == "ok"
                          else f" ({base[1][:120]})"))

    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as ex:
        list(ex.map(program, mine))
    runner.shutdown()
    with open(os.path.join(args.outdir, f"results-{k}.tsv"), "w") as f:
        for r in mine:
            src = progs[r[0]][1]
            for m in muts[r[0]]:
                _, st, det = results.get(m.id, (m, "not-run", ""))
                old, new = m.diff(src)
                f.write("\t".join(x.replace("\t", " ").replace("\n", " ")
                                  for x in [m.id, m.variant, m.op, st,
                                            m.desc, det, old, new,
                                            "gpu" if progs[r[0]][2]
                                            else "cpu"]) + "\n")
    by = {}
    for _, st, _ in results.values():
        by[st] = by.get(st, 0) + 1
    say(f"shard {k}/{n} done: {len(results)} of {nm} mutants: " +
        ", ".join(f"{v} {s}" for s, v in sorted(by.items())) +
        f"; {stats['compiles']} nvcc runs ({stats['compile_s']:.0f} s), "
        f"{stats['runs']} program runs ({stats['run_s']:.0f} s)")
    log.close()
    return 0


def score_cmd(args):
    rows = []
    seen_err = set()
    files = sorted(f for f in (os.listdir(args.outdir)
                               if os.path.isdir(args.outdir) else [])
                   if re.fullmatch(r"results-\d+\.tsv", f))
    if not files:
        print(f"gpu_full.py: no results-*.tsv in {args.outdir}")
        return 2
    eq = mutate.read_equivalent(args.equivalent)
    notrun = notrun_gpu = skipped = 0
    for fn in files:
        with open(os.path.join(args.outdir, fn)) as f:
            for line in f:
                mid, variant, op, st, desc, det, old, new, where = \
                    line.rstrip("\n").split("\t")
                prog, _, ln, col = mid.rsplit(":", 3)
                m = mutate.Mutant(id=mid, program=prog, variant=variant,
                                  op=op, line=int(ln), col=int(col), start=0,
                                  end=0, new="", desc=desc)
                if st == "not-run":
                    notrun += 1
                    notrun_gpu += where == "gpu"
                    continue
                if st == "skipped":
                    skipped += 1
                    continue
                if st == "error":
                    if prog in seen_err:
                        continue
                    seen_err.add(prog)
                if st == "survived":
                    why = mutate.equivalent_reason(m, eq)
                    if why:
                        st, det = "equivalent", why
                rows.append({"mutant": m, "status": st, "detail": det,
                             "old": old, "new": new})
    if notrun or skipped:
        print(f"not run: {notrun} (past a shard's deadline; {notrun_gpu} "
              f"of programs the CPU stand-in cannot run), skipped: "
              f"{skipped} (no device)")
    rc = mutate.score(rows, args.equivalent, args.allow_survivors)
    return rc if not (notrun or skipped) else max(rc, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("run")
    a.add_argument("progdir")
    a.add_argument("outdir")
    a.add_argument("--only", default="",
                   help="NAME,NAME...: only these programs (a test)")
    a.add_argument("--shard", default="0/1")
    a.add_argument("-j", type=int, default=os.cpu_count() or 1,
                   help="programs (nvcc jobs) at once")
    a.add_argument("--runners", type=int, default=12,
                   help="program runs at once on the GPU")
    a.add_argument("--bundle", type=int, default=64)
    a.add_argument("--timeout", type=float, default=10.0,
                   help="a mutant's run at least (3 times the unmutated "
                   "program's longest run plus 2 s where that is more)")
    a.add_argument("--base-timeout", type=float, default=120.0,
                   help="an unmutated program's run")
    a.add_argument("--deadline", type=float, default=None,
                   help="seconds after the start: no new work after it")
    a.add_argument("--grace", type=float, default=60.0,
                   help="seconds after the deadline that runs may go on")
    a.add_argument("--all", action="store_true",
                   help="the emulatable programs too")
    a.add_argument("--arch", default=os.environ.get("NVCC_ARCH", "sm_90a"))
    a = sub.add_parser("score")
    a.add_argument("outdir")
    a.add_argument("--equivalent",
                   default=os.path.join(HERE, "equivalent.tsv"))
    a.add_argument("--allow-survivors", action="store_true")
    args = ap.parse_args()
    return run_cmd(args) if args.cmd == "run" else score_cmd(args)


if __name__ == "__main__":
    sys.exit(main())
