#!/usr/bin/env python3
"""Runs the mutants of the emulatable programs on the CPU stand-in.

usage: cpu.py [-j N] [--programs N] [--per-program N] [--timeout S]
              [--equivalent FILE] [--allow-survivors] [--results FILE]
              [--mutants ID[,ID...]]
              (PROGDIR | --gen TILEDISPATCH CASES_DIR [GOLDEN_DIR]) [NAME...]

The programs are those of PROGDIR (scripts/gen-programs) that the stand-in
runs (emu.py's NOT_EMULATED: no 16-bit float arithmetic, no inline PTX
but bar.sync and helpers with a host path), compiled with g++ against the
stand-in runtime the way tests/cuda/emu.py does (its functions, imported).
--gen writes the programs first (emu.py --gen's way).  Each unmutated
program must pass first (else its mutants prove nothing: an error).  Each
mutant of tests/mutation/mutate.py is compiled (one that does not compile
is stillborn) and run with --data exact, --data random and --data random
--seed 2, stopping at the first run that is not a PASS: KILLED when one
FAILs, crashes or runs past --timeout seconds, SURVIVED when all three
PASS.  A survivor listed in --equivalent (default
tests/mutation/equivalent.tsv: id or glob, tab, reason) counts as
equivalent; any other survivor fails the run unless --allow-survivors.

--programs N keeps a stratified sample of the programs: run.py's strata
(one per variant, exec scope and dtype class and one per variant and op,
as the cuda suite's sample), cut to N programs spread over the strata's
order; --per-program N keeps at most N mutants of each, spread over the
operators (mutate.py's pick).  Both are deterministic, so the ids in
equivalent.tsv stay comparable between runs.  --mutants ID,... keeps only
the named mutants (ids or globs): a rerun of known survivors.
"""
import argparse
import concurrent.futures
import fnmatch
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


def load_emu():
    spec = importlib.util.spec_from_file_location(
        "td_emu", os.path.join(HERE, "..", "cuda", "emu.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


emu = load_emu()
# At most 64 rounds a run (the emulated launches cost milliseconds; a max
# over a 4096-term row has thousands of rounds): enough for every position
# of the sample's rows to hold an extreme in some round and row.
ROUNDS = ["--rounds", "64"]
RUNS = [["--data", "exact"] + ROUNDS, ["--data", "random"] + ROUNDS,
        ["--data", "random", "--seed", "2"] + ROUNDS]


def run_one(exe, args, timeout, pname):
    """'PASS', or why the run did not pass."""
    try:
        p = subprocess.run([exe] + args, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout} s ({' '.join(args)})"
    first = (p.stdout.strip().splitlines() or [""])[0]
    if p.returncode == 0 and first.startswith(f"PASS {pname} "):
        return "PASS"
    if first.startswith("FAIL"):
        return f"FAIL ({' '.join(args)}): {first[:160]}"
    return f"exit {p.returncode} ({' '.join(args)}): {first[:160]}"


def choose_programs(rows, limit):
    kept, _ = emu.load_run_py().sample(rows, lambda r: r["name"],
                                       lambda r: r["class"])
    if limit is None or len(kept) <= limit:
        return kept
    # Evenly spread over the sample, which run.py keeps in manifest order
    # (by family and name).
    return [kept[(2 * j + 1) * len(kept) // (2 * limit)]
            for j in range(limit)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--programs", type=int, default=None)
    ap.add_argument("--all-programs", action="store_true",
                    help="every emulatable program (no sample)")
    ap.add_argument("--per-program", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--equivalent",
                    default=os.path.join(HERE, "equivalent.tsv"))
    ap.add_argument("--allow-survivors", action="store_true")
    ap.add_argument("--results", help="also write one TSV line per mutant")
    ap.add_argument("--gen", action="store_true")
    ap.add_argument("--mutants",
                    help="only these mutant ids (comma-separated ids or "
                         "globs, as in equivalent.tsv): a rerun of named "
                         "survivors")
    ap.add_argument("rest", nargs="+")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.gen:
            if len(args.rest) not in (2, 3):
                ap.error("--gen TILEDISPATCH CASES_DIR [GOLDEN_DIR]")
            progdir = os.path.join(tmp, "progs")
            if not emu.gen(args.rest[0], args.rest[1],
                           args.rest[2] if len(args.rest) > 2 else None,
                           progdir, args.j):
                return 1
            names = []
        else:
            progdir, names = args.rest[0], args.rest[1:]
        return run(args, progdir, names, tmp)


def run(args, progdir, names, tmp):
    rows = emu.read_manifest(progdir)
    if names:
        rows = [r for r in rows if r["name"] in names]
    emulated = []
    for r in rows:
        with open(os.path.join(progdir, r["name"] + ".cu")) as f:
            r["src"] = f.read()
        if not emu.NOT_EMULATED.search(r["src"]):
            emulated.append(r)
    progs = emulated if (names or args.all_programs) else \
        choose_programs(emulated, args.programs)
    eq = mutate.read_equivalent(args.equivalent)
    jobs = []       # (row, mutant or None for the unmutated program)
    total = 0
    for r in progs:
        ms = mutate.mutants_of(r["src"], r["name"])
        total += len(ms)
        if args.mutants:
            pats = args.mutants.split(",")
            ms = [m for m in ms
                  if any(fnmatch.fnmatchcase(m.id, q) for q in pats)]
        r["mutants"] = mutate.pick(ms, args.per_program)
        jobs.append((r, None))
        jobs += [(r, m) for m in r["mutants"]]
    nmut = len(jobs) - len(progs)
    print(f"mutation: {nmut} mutants (of {total}) of {len(progs)} programs "
          f"(of {len(emulated)} emulatable), -j {args.j}", flush=True)
    inc = emu.precompile(tmp)
    base_ok = {}
    base_ev = {r["name"]: threading.Event() for r in progs}
    lock = threading.Lock()
    state = {"done": 0}
    start = time.monotonic()
    results = []

    def work(job):
        r, m = job
        name = r["name"]
        pname = re.search(r'TD_NAME\[\] = "([^"]*)"', r["src"])
        pname = pname.group(1) if pname else name
        if m is None:
            exe, err = emu.compile_program(r["src"], name + "__orig", tmp,
                                           inc)
            why = "g++: " + err[:500] if exe is None else None
            for a in RUNS:
                if why is None:
                    res = run_one(exe, a, args.timeout * 3, pname)
                    why = None if res == "PASS" else res
            base_ok[name] = why
            base_ev[name].set()
            return None
        if m.equivalent:
            status, detail = "equivalent", m.equivalent
        elif m.invalid:
            status, detail = "stillborn", m.invalid
        else:
            fn = mutate.file_name(m)
            exe, err = emu.compile_program(m.apply(r["src"]), fn, tmp, inc)
            if exe is None:
                status, detail = "stillborn", err.strip().splitlines()[0] \
                    if err.strip() else "g++ failed"
            else:
                status, detail = "survived", ""
                for a in RUNS:
                    res = run_one(exe, a, args.timeout, pname)
                    if res != "PASS":
                        status, detail = "killed", res
                        break
                os.unlink(exe)
            os.unlink(os.path.join(tmp, fn + ".cpp"))
        base_ev[name].wait()
        if base_ok[name] is not None:
            status, detail = "error", base_ok[name]
        elif status == "survived":
            why = mutate.equivalent_reason(m, eq)
            if why:
                status, detail = "equivalent", why
        old, new = m.diff(r["src"])
        with lock:
            state["done"] += 1
            if state["done"] % 25 == 0 or state["done"] == nmut:
                print(f"progress: {state['done']}/{nmut} mutants, "
                      f"{time.monotonic() - start:.0f} s", flush=True)
        return {"mutant": m, "status": status, "detail": detail,
                "old": old, "new": new}

    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as ex:
        for res in ex.map(work, jobs):
            if res is not None:
                results.append(res)
    print(f"mutation: {time.monotonic() - start:.0f} s")
    if args.results:
        with open(args.results, "w") as f:
            for x in results:
                m = x["mutant"]
                f.write("\t".join([m.id, m.variant, m.op, x["status"],
                                   m.desc, x["detail"].replace("\t", " ")])
                        + "\n")
    # One error line per program, not per mutant.
    seen, rows = set(), []
    for x in results:
        if x["status"] == "error":
            if x["mutant"].program in seen:
                continue
            seen.add(x["mutant"].program)
        rows.append(x)
    return mutate.score(rows, args.equivalent, args.allow_survivors)


if __name__ == "__main__":
    sys.exit(main())
