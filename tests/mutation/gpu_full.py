#!/usr/bin/env python3
"""Every mutant of every program on a GPU, in shards that fit one call.

usage: gpu_full.py run PROGDIR OUTDIR --shard I/N [-j JOBS] [--runners R]
                   [--bundle B] [--timeout S] [--deadline S] [--all]
                   [--arch ARCH] [--only NAME,...] [--emu]
       gpu_full.py score OUTDIR [--equivalent FILE] [--allow-survivors]
       gpu_full.py times LOG RESULTS [LOG RESULTS ...] [-o TABLE]
       gpu_full.py plan PROGDIR N [--times TABLE] [--cap S] [--all]

PROGDIR is scripts/gen-programs' output (the .cu files and manifest.tsv).
`run` (on the GPU machine: python3, nvcc and the GPU only) takes the
programs of shard I of N that the GPU can run (manifest arch sm_90a or
older), by default only those the CPU stand-in cannot run (16-bit floats,
inline PTX: tests/cuda/emu.py's NOT_EMULATED), every one with --all, and
every mutant of each (tests/mutation/mutate.py, those not equivalent by
construction).  The shards split the programs by their expected seconds
(largest first onto the lightest shard: deterministic): a program's
mutant count times its seconds a mutant in program-seconds.tsv (`times`
writes it from a run's logs and results), the table's median for a
program it does not hold; a program expected to take over --cap seconds
is cut into pieces of its mutants in several shards.  `plan` prints each
shard's expected seconds for PROGDIR (sum / 16: the programs' times are
wall times with 16 programs at once).

Compiling one program per mutant would cost an nvcc run (a few seconds of
host compilation, almost all of it the harness) per mutant.  Instead the
mutants of a program go into bundles of at most B kernels: one .cu with the
harness once and the kernel once per mutant (td_kernel_m0 the unmutated
body, td_kernel_mK mutant K), each its program's td_kernel with only its
body changed, compiled on its own by ptxas.  A bundle that does not compile
is split in halves until the kernel that breaks it stands alone
(stillborn).

Running one process per run would cost a CUDA context per run: on the
H200 with 12 runners that was about 3.2 s of a runner a run (12 runners
finished about 3.5 runs a second, each run a few launches of
milliseconds), so 2,450 mutants took two 450 s calls.  Instead one
process runs the bundle's kernels in turn (the bundle's main, see
bundle()): m0 first, then each mutant, the harness's state (counters,
first mismatch, generator, options, td_fill's shift) put back to its
startup values before every run, every buffer allocated and staged anew
by the run itself, so a run of kernel K computes what the one-mutant
program's run would.  A run that breaks the context (a trap, an illegal
or misaligned address: 547 of the 2,134 kills of the first shards) makes
the process reset the device and run m0 once more; where that fails the
process exits and a fresh one runs the rest, as it does after a crash or
a run past the time limit (that kernel killed).  Only then is a context
created again.

Each kernel runs like the mutation suite's programs: --data exact, --data
random, --data random --seed 2, stopping at the first run that is not a
PASS (the random modes run only for the mutants exact data did not kill).
A mutant is KILLED when any run FAILs, crashes or runs past --timeout
seconds (at least; 3 times the unmutated program's longest run plus 2 s
where that is more; a program error counts: the mutant made the program
fail), SURVIVED when all three PASS.  The unmutated kernel m0 of each
program must pass all three first, else the program's mutants are ERROR.
With --deadline S (seconds after the start) no new process starts after
it, no process goes on past S + --grace (default 60), and what is left is
reported as NOT-RUN, so a call ends in time.  --emu compiles with g++ for
the CPU stand-in instead (a check of this driver without a GPU, on the
programs it can run: --all --only NAME,...).

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
import queue
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


def load_emu():
    """tests/cuda/emu.py (the CPU stand-in's driver) as a module."""
    spec = importlib.util.spec_from_file_location(
        "td_emu", os.path.join(HERE, "..", "cuda", "emu.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def not_emulated():
    """tests/cuda/emu.py's test of what the CPU stand-in cannot run."""
    return load_emu().NOT_EMULATED


def kernel_span(src):
    """[start, end) of the td_kernel function in a program."""
    m = KERNEL.search(src)
    if m is None:
        return None
    end = src.find("\n}\n", m.end())
    return (m.start(), end + 3) if end >= 0 else None


# The harness's mutable file-scope state (the counters, the first
# mismatch, the generator's state, the options), which every run starts
# from afresh: its values at startup are saved and put back before each
# run.  Pointers are left out (lazily allocated buffers that every run
# fills before use).
STATE = re.compile(r"^static\s+(?!inline\b|const\b|constexpr\b|__)"
                   r"[\w\s]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*(?:=[^;]*)?;", re.M)
# td_fill's position shift, drawn once per run: a function-local static
# the state above cannot reach, so the bundle makes it file-scope.
FILL_SHIFT = "static long long shift = -1;"
MAIN = "int main(int argc, char **argv)\n{"


def bundle(src, texts):
    """The program with one kernel per text (texts[0] the program itself,
    the others its mutants, each differing only inside td_kernel's body)
    and a main that runs the kernels named on its command line in turn,
    each in the suite's data modes (RUNS), in one process.

    The program's own main becomes td_main_one; before each run the
    harness's state is put back to its startup values, so a run behaves
    as the one-mutant program's run would.  Per run it prints
    `TD_RUN K M`, the program's own lines, then `TD_RC K M STATUS`; the
    modes of a kernel stop at the first that does not pass.  After a run
    that does not pass with the CUDA context broken (a sticky error: a
    trap, an illegal or misaligned address) it resets the device, and
    when the unmutated kernel m0 does not pass afterwards (or the reset
    fails) it prints `TD_BROKEN` and exits 3: the driver runs the rest in
    a fresh process."""
    a, b = kernel_span(src)
    kernels = []
    for k, t in enumerate(texts):
        ka, kb = kernel_span(t)
        kernels.append(t[ka:kb].replace("void td_kernel(",
                                        f"void td_kernel_m{k}(", 1))
    n = len(texts)
    pick = (
        "/* The bundle's kernels: m0 the program's body, mK its mutant K;\n"
        " * td_picked is the one the launch runs. */\n"
        f"static decltype(&td_kernel_m0) const td_kernels[{n}] = {{"
        + ", ".join(f"td_kernel_m{k}" for k in range(n)) + "};\n"
        "static int td_picked = 0;\n"
        "#define td_kernel (td_kernels[td_picked])\n")
    head, tail = src[:a], src[b:]
    shift = FILL_SHIFT in head
    if shift:
        head = ("/* td_fill's shift, file-scope so every run starts it "
                "afresh. */\nstatic long long td_fill_shift = -1;\n"
                + head.replace(FILL_SHIFT,
                               "long long &shift = td_fill_shift;"))
    if MAIN not in tail:
        raise ValueError("bundle: the program's main not found")
    tail = tail.replace(MAIN, "static int td_main_one(int argc, char **argv)"
                        "\n{", 1)
    names = STATE.findall(head + tail)
    modes = ", ".join("{" + ", ".join(f'"{x}"' for x in ["td"] + r) + "}"
                      for r in RUNS)
    width = max(len(r) for r in RUNS) + 1
    save = "".join(f"static unsigned char td_saved_{v}[sizeof {v}];\n"
                   for v in names)
    batch = (
        "\n/* The bundle's main: the kernels named by its arguments in turn,"
        "\n * each in the mutation suite's data modes, the harness's state "
        "put\n * back before every run. */\n" + save +
        "static void td_state(bool restore)\n{\n" +
        "".join(f"    if (restore)\n        memcpy(&{v}, td_saved_{v}, "
                f"sizeof {v});\n    else\n        memcpy(td_saved_{v}, "
                f"&{v}, sizeof {v});\n" for v in names) +
        "}\n"
        f"static const char *td_modes[{len(RUNS)}][{width}] = {{{modes}}};\n"
        f"static const int td_nargs[{len(RUNS)}] = {{"
        + ", ".join(str(len(r) + 1) for r in RUNS) + "};\n"
        "/* One run of kernel k in mode m: its exit status. */\n"
        "static int td_run_one(int k, int m)\n{\n"
        "    td_picked = k;\n"
        "    td_state(true);\n"
        "    printf(\"TD_RUN %d %d\\n\", k, m);\n"
        "    const int rc = td_main_one(td_nargs[m], (char **)td_modes[m]);\n"
        "    printf(\"TD_RC %d %d %d\\n\", k, m, rc);\n"
        "    return rc;\n}\n"
        "/* Whether the context still works after a run that did not pass "
        "(a\n * sticky error breaks it: then a reset and m0 once more). */\n"
        "static bool td_context_ok(void)\n{\n"
        "#if defined(__CUDACC__)\n"
        "    if (cudaDeviceSynchronize() == cudaSuccess &&\n"
        "        cudaGetLastError() == cudaSuccess)\n"
        "        return true;\n"
        "    if (cudaDeviceReset() != cudaSuccess)\n"
        "        return false;\n"
        "    printf(\"TD_RESET\\n\");\n"
        "    return td_run_one(0, 0) == 0;\n"
        "#else\n"
        "    return cudaGetLastError() == cudaSuccess;\n"
        "#endif\n}\n"
        "int main(int argc, char **argv)\n{\n"
        "    setvbuf(stdout, NULL, _IOLBF, 0);\n"
        "    td_state(false);\n"
        "    /* The context first, so no run's time counts its creation. */\n"
        "    int td_ndev = 0;\n"
        "    (void)cudaGetDeviceCount(&td_ndev);\n"
        "    (void)cudaFree(0);\n"
        "    printf(\"TD_READY\\n\");\n"
        "    for (int i = 1; i < argc; ++i) {\n"
        "        const int k = atoi(argv[i]);\n"
        f"        if (k < 0 || k >= {n}) {{\n"
        "            fprintf(stderr, \"kernel %s out of range\\n\", argv[i]);\n"
        "            return 2;\n        }\n"
        f"        for (int m = 0; m < {len(RUNS)}; ++m) {{\n"
        "            if (td_run_one(k, m) == 0)\n"
        "                continue;\n"
        "            if (!td_context_ok()) {\n"
        "                printf(\"TD_BROKEN\\n\");\n"
        "                return 3;\n            }\n"
        "            break;\n        }\n    }\n"
        "    return 0;\n}\n")
    return head + "\n".join(kernels) + pick + tail + batch


TIMES = os.path.join(HERE, "program-seconds.tsv")
# A program expected to take longer than this (seconds, as the table
# measures them) is cut into pieces in several shards.
CAP = 240.0


def read_times(path):
    """{program: seconds a mutant} from a `times` table (name, mutants,
    seconds, how); {} when there is none."""
    out = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                name, n, sec, _ = line.rstrip("\n").split("\t")
                out[name] = float(sec) / max(1, int(n))
    return out


def costs_of(counts, rates):
    """Each program's expected seconds in a run (its wall time with -j 16
    programs and 12 runners at once, as the table measured it): its mutant
    count (plus the unmutated program's run) times its seconds a mutant
    from the table, or, for a program the table does not hold, times the
    median rate of the table's programs of its class (the CPU stand-in
    cannot run it, or can): a count-based estimate."""
    med = {}
    for cls in (True, False):
        r = sorted(rates[x] for x in rates if x in counts and
                   counts[x][0] == cls)
        med[cls] = r[len(r) // 2] if r else 1.0
    return {name: (gpu, (n + 1) * rates.get(name, med[gpu]))
            for name, (gpu, n) in counts.items()}


def shard_of(counts, k, n, rates=None, cap=None):
    """The mutants of shard k of n, {program: [mutant index, ...]}: the
    programs by expected seconds (costs_of), a program expected to take
    over `cap` seconds cut into pieces of consecutive mutants (at most n:
    one a shard), so no shard waits on one long program; largest first
    onto the shard with the least so far (deterministic), the programs
    the CPU stand-in cannot run (counts[name][0] true) spread first and on
    their own, so every shard has its share of them (the others come last
    in a shard, where a deadline cuts them)."""
    cost = costs_of(counts, rates or {})
    items = []
    for name, (gpu, c) in cost.items():
        cnt = counts[name][1]
        pieces = 1
        if cap and c > cap:
            pieces = max(1, min(n, cnt, int(-(-c // cap))))
        for i in range(pieces):
            items.append((name, i, cnt * i // pieces, cnt * (i + 1) // pieces,
                          c / pieces))
    load = [[0.0] * n, [0.0] * n]
    mine = {}
    for name, i, lo, hi, c in sorted(items, key=lambda x: (
            not counts[x[0]][0], -x[4], x[0], x[1])):
        cls = 0 if counts[name][0] else 1
        j = min(range(n), key=lambda q: (load[cls][q], q))
        load[cls][j] += c
        if j == k:
            mine.setdefault(name, []).extend(range(lo, hi))
    return mine


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
    done = read_done(args.done)
    if done:
        # Mutants an earlier run already decided (gpu_full.py carry wrote
        # them, each checked against this program and this mutant): left out
        # before the shards are cut, so the shards split only the rest.
        before = sum(len(v) for v in muts.values())
        for name in list(muts):
            src = progs[name][1]
            muts[name] = [m for m in muts[name]
                          if done.get(m.id) != clean_diff(m, src)]
            counts[name] = (counts[name][0], len(muts[name]))
            if not muts[name]:
                del muts[name], counts[name]
        say(f"{before - sum(len(v) for v in muts.values())} mutants left "
            f"out: decided by an earlier run ({', '.join(args.done)})")
    rates = read_times(args.times)
    names = shard_of(counts, k, n, rates, args.cap)
    # This shard's mutants only (a long program's are cut into pieces).
    muts = {name: [muts[name][i] for i in idx]
            for name, idx in names.items()}
    # The programs only the GPU can run first (a deadline cuts the
    # others), the longest expected first within each class (so no long
    # program starts last).
    est = costs_of(counts, rates)
    mine = sorted((r for r in rows if r[0] in names),
                  key=lambda r: (not progs[r[0]][2],
                                 -est[r[0]][1] * len(muts[r[0]]) /
                                 max(1, counts[r[0]][1]), r[0]))
    nm = sum(len(muts[r[0]]) for r in mine)
    ng = sum(1 for r in mine if progs[r[0]][2])
    say(f"shard {k}/{n}: {len(mine)} programs ({ng} the CPU stand-in "
        f"cannot run), {nm} mutants (all shards: {len(progs)} programs, "
        f"{sum(c[1] for c in counts.values())} mutants), "
        f"-j {args.j}, {args.runners} runners, bundles of {args.bundle}; "
        f"expected {sum(est[r[0]][1] * len(muts[r[0]]) / max(1, counts[r[0]][1]) for r in mine) / 16:.0f} s "
        f"(sum of the programs' seconds / 16)")
    deadline = t0 + args.deadline if args.deadline else None
    hard_end = deadline + args.grace if deadline is not None else None
    results = {}   # mutant id -> (mutant, status, detail)
    tmp = tempfile.mkdtemp(prefix="gpu_full_")
    nvcc = os.environ.get("NVCC", "nvcc")
    emu = emu_inc = None
    if args.emu:
        emu = load_emu()
        emu_inc = emu.precompile(tmp)
    stats = {"compiles": 0, "compile_s": 0.0, "runs": 0, "run_s": 0.0,
             "procs": 0, "resets": 0}

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
        if emu is not None:
            # The CPU stand-in (a check of this driver without a GPU).
            with open(cu) as f:
                out, err = emu.compile_program(f.read(), f"{name}__{tag}x",
                                               tmp, emu_inc)
            if out is not None:
                os.replace(out, exe)
            p = subprocess.CompletedProcess([], 0 if out else 1, "", err)
        else:
            p = subprocess.run([nvcc, "-O2", f"-arch={args.arch}", "-o", exe,
                                cu], capture_output=True, text=True)
        with lock:
            stats["compiles"] += 1
            stats["compile_s"] += time.monotonic() - c0
        os.unlink(cu)
        return exe if p.returncode == 0 else None, p.stderr

    def run_batch(exe, slots, pname, lim):
        """{slot: (status, detail, the longest run's seconds)} for the
        kernels `slots` of a bundle: PASS (every mode passed), FAIL (the
        first run that did not), SKIP, NOT-RUN (past the deadline) or
        ERROR (the process ended before it ran anything).  One process
        runs them in turn; a process that crashes, hangs (a run past
        `limit` seconds: that kernel FAILs) or finds its context broken
        ends, and a fresh one runs the rest.  Kernel 0 (the unmutated
        program: first when in `slots`) may run --base-timeout seconds
        and sets lim[0], the others' limit, from its longest run; when it
        does not pass, the rest are not run (BASE)."""
        out = {}
        todo = list(slots)
        while todo:
            if late():
                for k in todo:
                    out[k] = ("NOT-RUN", "past the deadline", 0.0)
                break
            p = subprocess.Popen([exe] + [str(k) for k in todo],
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True,
                                 errors="replace")
            lines = queue.Queue()

            def read(f=p.stdout, q=lines):
                for line in f:
                    q.put(line.rstrip("\n"))
                q.put(None)
            threading.Thread(target=read, daemon=True).start()
            with lock:
                stats["procs"] += 1
            cur = None   # [kernel, mode, start, the program's first line]
            ready = False
            longest = {}
            cut = None   # why the process was killed
            while True:
                wait = lim[0] if ready and (cur is None or cur[0] != 0) \
                    else args.base_timeout
                if hard_end is not None:
                    wait = min(wait, max(0.5, hard_end - time.monotonic()))
                try:
                    line = lines.get(timeout=wait)
                except queue.Empty:
                    past = hard_end is not None and \
                        time.monotonic() >= hard_end - 0.01
                    cut = "deadline" if past or not ready else "timeout"
                    if not ready and not past:
                        cut = "start"
                    p.kill()
                    break
                if line is None:
                    break
                if line == "TD_READY":
                    ready = True
                elif line.startswith("TD_RUN "):
                    k, m = (int(x) for x in line.split()[1:3])
                    cur = [k, m, time.monotonic(), None]
                elif line.startswith("TD_RC ") and cur is not None:
                    k, m, rc = (int(x) for x in line.split()[1:4])
                    took = time.monotonic() - cur[2]
                    longest[k] = max(longest.get(k, 0.0), took)
                    with lock:
                        stats["runs"] += 1
                        stats["run_s"] += took
                    first = cur[3] or ""
                    cur = None
                    if k not in todo or k in out:
                        continue  # the reset's check run of m0
                    if rc == 0 and first.startswith(f"PASS {pname} "):
                        if m == len(RUNS) - 1:
                            out[k] = ("PASS", "", longest[k])
                            if k == 0:
                                # A mutant may take a few times the
                                # unmutated program's longest run before it
                                # counts as hanging (killed).
                                lim[0] = max(args.timeout,
                                             3.0 * longest[0] + 2.0)
                                lim[1] = longest[0]
                                if longest[0] > args.slow and \
                                        len(todo) > 2:
                                    # A slow program: the caller spreads
                                    # its mutants over several processes.
                                    cut = "slow"
                                    p.kill()
                                    break
                    elif rc == 77:
                        out[k] = ("SKIP", first[:200], longest[k])
                    else:
                        out[k] = ("FAIL", f"{' '.join(RUNS[m])}: exit {rc}: "
                                  f"{first[:200]}", longest[k])
                    if k == 0 and out.get(0, ("PASS",))[0] != "PASS":
                        p.kill()
                        break
                elif line == "TD_RESET":
                    with lock:
                        stats["resets"] += 1
                elif line == "TD_BROKEN":
                    pass
                elif cur is not None and cur[3] is None:
                    cur[3] = line
            p.wait()
            p.stdout.close()
            if cut == "slow":
                return out
            if cur is not None and cur[0] in todo and cur[0] not in out:
                k, m = cur[0], cur[1]
                took = time.monotonic() - cur[2]
                if cut == "deadline":
                    out[k] = ("NOT-RUN", "cut at the deadline's grace", took)
                elif cut == "timeout":
                    out[k] = ("FAIL", f"{' '.join(RUNS[m])}: timeout after "
                              f"{wait:.0f} s", took)
                else:
                    out[k] = ("FAIL", f"{' '.join(RUNS[m])}: exit "
                              f"{p.returncode}: {(cur[3] or '')[:200]}", took)
            rest = [k for k in todo if k not in out]
            if 0 in out and out[0][0] != "PASS":
                for k in rest:
                    out[k] = ("BASE", "", 0.0)
                break
            if cut == "deadline" or (cut == "start" and late()):
                for k in rest:
                    out[k] = ("NOT-RUN", "cut at the deadline's grace", 0.0)
                break
            if len(rest) == len(todo):
                # Nothing ran (the process did not start or died before
                # its first run): its kernels prove nothing.
                for k in rest:
                    out[k] = ("ERROR", f"the bundle's process: exit "
                              f"{p.returncode}" + (f" ({cut})" if cut else ""),
                              0.0)
                break
            todo = rest
        return out

    runner = concurrent.futures.ThreadPoolExecutor(max(1, args.runners))

    def program(r):
        name, src = r[0], progs[r[0]][1]
        p_t0 = time.monotonic()
        m = re.search(r'TD_NAME\[\] = "([^"]*)"', src)
        pname = m.group(1) if m else name
        ms = muts[name]
        # Undefined on their face (mutate.undefined): stillborn, not run.
        for m in ms:
            if m.invalid:
                results[m.id] = (m, "stillborn", m.invalid)
        pending = [i for i in range(len(ms)) if not ms[i].invalid]
        groups = [pending[i:i + args.bundle]
                  for i in range(0, len(pending), args.bundle)] or [[]]
        base = None
        bare_ok = False
        lim = [args.timeout, 0.0]  # a mutant's limit, m0's longest run
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
            slots = ([0] if base is None else []) + \
                [j + 1 for j in range(len(idx))]
            got = {} if base is not None and lim[1] > args.slow else \
                runner.submit(run_batch, exe, slots, pname, lim).result()
            rest = [k for k in slots if k not in got]
            if rest:
                # m0's runs took over --slow seconds: the rest in parts of
                # about --part seconds of runs each, on runners at once.
                n = max(1, int(args.part / max(lim[1], 1e-3)))
                parts = [runner.submit(run_batch, exe, rest[i:i + n], pname,
                                       lim)
                         for i in range(0, len(rest), n)]
                for fu in parts:
                    got.update(fu.result())
            if base is None:
                st, det, _ = got[0]
                base = ("ok", "") if st == "PASS" else \
                    ("not-run", det) if st == "NOT-RUN" else \
                    ("error", f"unmutated program: {st} {det}")
            for j, i in enumerate(idx):
                st, det, _ = got[j + 1]
                if base[0] != "ok":
                    results[ms[i].id] = (ms[i], base[0], base[1])
                    continue
                status = {"PASS": "survived", "FAIL": "killed",
                          "SKIP": "skipped", "NOT-RUN": "not-run",
                          "ERROR": "error", "BASE": "error"}[st]
                results[ms[i].id] = (ms[i], status, det)
            os.unlink(exe)
        if base is not None and base[0] != "ok" and not ms:
            say(f"{name}: {base[1]}")
        done = sum(1 for m in ms if m.id in results)
        say(f"{name}: {done} mutants, "
            f"{sum(1 for m in ms if results.get(m.id, (0, ''))[1] == 'killed')}"
            f" killed in {time.monotonic() - p_t0:.1f} s"
            + ("" if base is None or base[0] == "ok"
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
                f.write(result_line([m.id, m.variant, m.op, st, m.desc, det,
                                     old, new, "gpu" if progs[r[0]][2]
                                     else "cpu"]))
    by = {}
    for _, st, _ in results.values():
        by[st] = by.get(st, 0) + 1
    say(f"shard {k}/{n} done: {len(results)} of {nm} mutants: " +
        ", ".join(f"{v} {s}" for s, v in sorted(by.items())) +
        f"; {stats['compiles']} nvcc runs ({stats['compile_s']:.0f} s), "
        f"{stats['runs']} program runs ({stats['run_s']:.0f} s) in "
        f"{stats['procs']} processes, {stats['resets']} device resets")
    log.close()
    return 0


def result_line(fields):
    """One line of a results-I.tsv: the fields, tabs and newlines inside
    them turned into spaces."""
    return "\t".join(x.replace("\t", " ").replace("\n", " ")
                     for x in fields) + "\n"


def clean_diff(m, src):
    """A mutant's (old line, new line) as a results file holds them."""
    return tuple(x.replace("\t", " ").replace("\n", " ")
                 for x in m.diff(src))


def read_done(paths):
    """{mutant id: (old line, new line)} of the decided mutants (any status
    but not-run and skipped) in results files (gpu_full.py carry's)."""
    done = {}
    for p in paths or []:
        for f in read_rows(p):
            if f[3] not in ("not-run", "skipped"):
                done[f[0]] = (f[6], f[7])
    return done


def carry_cmd(args):
    """Results of an earlier run that still hold: a row is carried when its
    program is byte for byte the same in OLD (the programs that run ran)
    and NEW (today's), and today's mutant with the row's id changes the
    same line into the same line (so it is the same mutant of the same
    program); not-run and skipped rows, and mutants that today are
    equivalent by construction (never run), are not carried.  Writes the
    carried rows (a results file: score reads results-carried*.tsv beside
    results-I.tsv) and says what it left out and why."""
    srcs, muts, kept = {}, {}, []
    why = {}
    for path in args.results:
        for f in read_rows(path):
            if f[3] in ("not-run", "skipped"):
                why["not decided"] = why.get("not decided", 0) + 1
                continue
            prog = f[0].rsplit(":", 3)[0]
            if prog not in srcs:
                texts = []
                for d in (args.old, args.new):
                    q = os.path.join(d, prog + ".cu")
                    texts.append(open(q).read() if os.path.exists(q)
                                 else None)
                srcs[prog] = texts[1] if texts[0] == texts[1] else None
                if srcs[prog] is not None:
                    muts[prog] = {m.id: m for m in
                                  mutate.mutants_of(srcs[prog], prog)}
            if srcs[prog] is None:
                why["program changed"] = why.get("program changed", 0) + 1
                continue
            m = muts[prog].get(f[0])
            if m is None or clean_diff(m, srcs[prog]) != (f[6], f[7]):
                why["mutant changed"] = why.get("mutant changed", 0) + 1
                continue
            if m.equivalent is not None:
                why["now equivalent by construction"] = \
                    why.get("now equivalent by construction", 0) + 1
                continue
            kept.append(f)
    with open(args.out, "w") as out:
        for f in kept:
            out.write(result_line(f))
    print(f"carried {len(kept)} decided mutants from "
          f"{len(args.results)} results file(s)" +
          "".join(f"; left out {v}: {k}" for k, v in sorted(why.items())))
    return 0


def score_cmd(args):
    rows = []
    seen_err = set()
    files = sorted(f for f in (os.listdir(args.outdir)
                               if os.path.isdir(args.outdir) else [])
                   if re.fullmatch(r"results-(\d+|carried[\w-]*)\.tsv",
                                   f))
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


def read_rows(path):
    """The result lines of a results-I.tsv (or .tsv.gz) split by tab."""
    import gzip
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return [line.rstrip("\n").split("\t") for line in f]


def times_cmd(args):
    """The table of programs' seconds from runs' logs and results (LOG
    RESULTS pairs): a program's wall time from its start to its log line,
    scaled up by mutants / mutants run when a deadline cut it; programs
    with nothing run are left out (costs_of estimates them).  A log line
    without its seconds (before they were logged) gets the time from the
    start the pool gave it: the first -j programs at the shard's start,
    each later one at the next program's end, in the order run_cmd
    submits them."""
    if len(args.files) % 2:
        print("gpu_full.py times: give LOG RESULTS pairs", file=sys.stderr)
        return 2
    table = {}
    for log_path, res_path in zip(args.files[::2], args.files[1::2]):
        n, run, gpu = {}, {}, {}
        for f in read_rows(res_path):
            prog = f[0].rsplit(":", 3)[0]
            n[prog] = n.get(prog, 0) + 1
            run[prog] = run.get(prog, 0) + (f[3] != "not-run")
            gpu[prog] = f[8] == "gpu"
        with open(log_path) as f:
            lines = f.read().splitlines()
        head = re.match(r"\[\s*([\d.]+) s\] shard .* -j (\d+)", lines[0])
        t_start, jobs = float(head.group(1)), int(head.group(2))
        ends, own = {}, {}
        for line in lines[1:]:
            m = re.match(r"\[\s*([\d.]+) s\] (\S+): \d+ mutants, \d+ "
                         r"killed( in ([\d.]+) s)?", line)
            if m and m.group(2) in n:
                ends[m.group(2)] = float(m.group(1))
                if m.group(4):
                    own[m.group(2)] = float(m.group(4))
        order = sorted(ends, key=lambda x: (not gpu[x], -n[x], x))
        done = sorted(ends.values())
        for i, prog in enumerate(order):
            start = t_start if i < jobs else done[i - jobs]
            sec = own.get(prog, ends[prog] - start)
            if run[prog] == 0 or sec <= 0:
                continue
            how = "measured" if run[prog] == n[prog] else \
                f"scaled from {run[prog]} of {n[prog]} mutants"
            c, t, h = table.get(prog, (0, 0.0, ""))
            table[prog] = (c + n[prog], t + sec * n[prog] / run[prog],
                           how if not h else f"{h}; {how}")
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    out.write("# program\tmutants\tseconds\thow (tests/mutation/gpu_full.py "
              "times " + " ".join(os.path.basename(x) for x in args.files)
              + ")\n")
    for prog in sorted(table):
        c, sec, how = table[prog]
        out.write(f"{prog}\t{c}\t{sec:.1f}\t{how}\n")
    return 0


def plan_cmd(args):
    """Each shard's expected seconds for PROGDIR's programs (as run)."""
    rows = mutate.read_manifest(args.progdir)
    ne = not_emulated()
    done = read_done(args.done)
    counts = {}
    for r in rows:
        arch = re.sub(r"\D", "", r[2]) or "0"
        if int(arch) > int(re.sub(r"\D", "", args.arch)):
            continue
        with open(os.path.join(args.progdir, r[0] + ".cu")) as f:
            src = f.read()
        if not args.all and not ne.search(src):
            continue
        ms = [m for m in mutate.mutants_of(src, r[0]) if m.equivalent is None
              and done.get(m.id) != clean_diff(m, src)]
        if ms:
            counts[r[0]] = (bool(ne.search(src)), len(ms))
    rates = read_times(args.times)
    cost = costs_of(counts, rates)
    n = int(args.shards)
    print(f"{len(counts)} programs, {sum(c[1] for c in counts.values())} "
          f"mutants, {sum(1 for x in counts if x in rates)} in the table")
    for k in range(n):
        mine = shard_of(counts, k, n, rates, args.cap)
        part = {x: cost[x][1] * len(i) / max(1, counts[x][1])
                for x, i in mine.items()}
        tot = sum(part.values())
        top = max(part.values(), default=0.0)
        print(f"shard {k}/{n}: {len(mine)} programs, "
              f"{sum(len(i) for i in mine.values())} mutants, "
              f"sum {tot:.0f} s "
              f"/ 16 = {tot / 16:.0f} s, longest program {top:.0f} s")
    return 0


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
    a.add_argument("--timeout", type=float, default=5.0,
                   help="a mutant's run at least (3 times the unmutated "
                   "program's longest run plus 2 s where that is more)")
    a.add_argument("--slow", type=float, default=0.5,
                   help="seconds: when the unmutated program's longest run "
                   "takes more, its mutants run in parts on several runners")
    a.add_argument("--part", type=float, default=20.0,
                   help="seconds of runs (m0's longest run each) a part "
                   "holds")
    a.add_argument("--base-timeout", type=float, default=120.0,
                   help="an unmutated program's run")
    a.add_argument("--deadline", type=float, default=None,
                   help="seconds after the start: no new work after it")
    a.add_argument("--grace", type=float, default=60.0,
                   help="seconds after the deadline that runs may go on")
    a.add_argument("--all", action="store_true",
                   help="the emulatable programs too")
    a.add_argument("--arch", default=os.environ.get("NVCC_ARCH", "sm_90a"))
    a.add_argument("--times", default=TIMES,
                   help="the programs' seconds (gpu_full.py times) the "
                   "shards are balanced by")
    a.add_argument("--cap", type=float, default=CAP,
                   help="expected seconds over which a program's mutants "
                   "are cut into pieces in several shards")
    a.add_argument("--emu", action="store_true",
                   help="compile with g++ for the CPU stand-in "
                   "(tests/cuda/emu.py), not nvcc: a check of this driver "
                   "without a GPU (with --all and emulatable programs)")
    a.add_argument("--done", action="append", default=[],
                   help="RESULTS: leave out the mutants this results file "
                   "decided (gpu_full.py carry's output; repeatable)")
    a = sub.add_parser("carry")
    a.add_argument("old", help="the programs the earlier run ran")
    a.add_argument("new", help="today's programs")
    a.add_argument("results", nargs="+",
                   help="the earlier run's results-I.tsv(.gz) files")
    a.add_argument("-o", "--out", required=True)
    a = sub.add_parser("score")
    a.add_argument("outdir")
    a.add_argument("--equivalent",
                   default=os.path.join(HERE, "equivalent.tsv"))
    a.add_argument("--allow-survivors", action="store_true")
    a = sub.add_parser("times")
    a.add_argument("files", nargs="+", help="LOG RESULTS pairs")
    a.add_argument("-o", "--out", default="-")
    a = sub.add_parser("plan")
    a.add_argument("progdir")
    a.add_argument("shards")
    a.add_argument("--times", default=TIMES)
    a.add_argument("--cap", type=float, default=CAP)
    a.add_argument("--all", action="store_true")
    a.add_argument("--arch", default=os.environ.get("NVCC_ARCH", "sm_90a"))
    a.add_argument("--done", action="append", default=[])
    args = ap.parse_args()
    return {"run": run_cmd, "score": score_cmd, "times": times_cmd,
            "plan": plan_cmd, "carry": carry_cmd}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
