"""Compiles the self-checking programs of the conformance corpus with nvcc,
many to a translation unit (run.py --compile uses it unless --singly).

Most of what one nvcc run costs is fixed: the host preprocessor, cudafe++,
two cicc runs (-arch=sm_NNa: the arch's SASS and the generic compute_NN
PTX) and the host compiler each parse the CUDA runtime headers again, about
2.5 s of CPU time, where the program itself adds a few tenths of a second.
So the programs are compiled together, with the same flags as one by one:

- byte-identical programs (a golden case and the conformance case of the
  same call, say) are compiled once; the others are reported as covered by
  the one compiled, and fail with it;
- the rest are grouped by arch and by the set of headers they include, so
  that every program of a translation unit sees the headers it includes
  itself and no other; a group is cut into batches of at most
  BATCH_BYTES of source and BATCH_PROGRAMS programs;
- a batch holds each program in a namespace of its own (td_batch_N), its
  #include lines blanked (the group's headers come first, once) and a
  `#line 1 "PATH"` in front, so that a diagnostic names the program's own
  file and line; every macro the program defines is #undef'd after it;
- a batch that fails is compiled again one program at a time, which names
  the programs that fail exactly as a compile on their own does (a program
  that compiles alone passes: the batch is only a faster way to the same
  answer).

What a batch cannot see: a use of a header's name above that header's
#include line in the same program (the batch includes every header first).
The program generator puts every #include above the code it serves.
"""
import concurrent.futures
import hashlib
import os
import re
import subprocess

BATCH_BYTES = 1_000_000
BATCH_PROGRAMS = 32

INCLUDE = re.compile(r"^[ \t]*#[ \t]*include\b.*$", re.M)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)


def nvcc_flags(arch, sass_only):
    """The nvcc flags of a program for `arch`: -arch=ARCH -c, or with
    sass_only the arch's SASS only as a cubin (the cuda suite's sample)."""
    if sass_only:
        return ["-gencode",
                f"arch={arch.replace('sm_', 'compute_')},code={arch}",
                "-cubin"]
    return ["-arch=" + arch, "-c"]


def nvcc(nvcc_path, flags, cu):
    """Compiles `cu`; returns None, or the first 20 lines of nvcc's
    stderr."""
    obj = cu[:-3] + (".cubin" if "-cubin" in flags else ".o")
    p = subprocess.run([nvcc_path] + flags + [cu, "-o", obj],
                       capture_output=True, text=True)
    try:
        os.remove(obj)
    except OSError:
        pass
    if p.returncode == 0:
        return None
    return f"nvcc {' '.join(flags)} failed:\n" + \
        "\n".join(p.stderr.strip().splitlines()[:20])


def headers(text):
    """The distinct #include lines of a program, in order."""
    seen = []
    for m in INCLUDE.finditer(text):
        line = re.sub(r"\s+", " ", m.group(0).strip())
        if line not in seen:
            seen.append(line)
    return seen


def batch_source(progs):
    """One translation unit holding `progs` (dicts with cu and text), each
    in its own namespace, its diagnostics attributed to its own file."""
    out = []
    for p in progs:
        out += [h for h in headers(p["text"]) if h not in out]
    for i, p in enumerate(progs):
        # A blank line in place of each #include keeps the line numbers.
        body = INCLUDE.sub("", p["text"])
        out.append(f"namespace td_batch_{i} {{")
        out.append(f'#line 1 "{os.path.abspath(p["cu"])}"')
        out.append(body.rstrip("\n"))
        out.append("}")
        out += [f"#undef {d}" for d in sorted(set(DEFINE.findall(body)))]
    return "\n".join(out) + "\n"


def plan(progs):
    """(batches, copies): the batches (lists of programs, largest first)
    and {name of a byte-identical copy: name of the program compiled in
    its place}."""
    first, copies, groups = {}, {}, {}
    for p in progs:
        digest = hashlib.sha1(p["text"].encode()).hexdigest()
        if digest in first:
            copies[p["name"]] = first[digest]["name"]
            continue
        first[digest] = p
        key = (p["arch"], tuple(sorted(headers(p["text"]))))
        groups.setdefault(key, []).append(p)
    batches = []
    for key in sorted(groups):
        cur, size = [], 0
        for p in sorted(groups[key], key=lambda p: -len(p["text"])):
            if cur and (size + len(p["text"]) > BATCH_BYTES or
                        len(cur) >= BATCH_PROGRAMS):
                batches.append(cur)
                cur, size = [], 0
            cur.append(p)
            size += len(p["text"])
        if cur:
            batches.append(cur)
    batches.sort(key=lambda b: -sum(len(p["text"]) for p in b))
    return batches, copies


def compile_all(progs, nvcc_path, sass_only, jobs, outdir, progress=None):
    """Compiles `progs` (dicts: name, cu (the program's path), arch) in
    batches, `jobs` nvcc runs at a time.  progress(done, total, failed) is
    called after each batch.  Returns {name: None, or the error} and
    {name: note} (byte-identical copies; programs whose batch failed
    although each compiles alone)."""
    for p in progs:
        with open(p["cu"], encoding="utf-8") as f:
            p["text"] = f.read()
    batches, copies = plan(progs)
    errors, notes = {}, {}

    def run(k, batch):
        flags = nvcc_flags(batch[0]["arch"], sass_only)
        cu = os.path.join(outdir, f"td_batch_{k}_{batch[0]['arch']}.cu")
        with open(cu, "w", encoding="utf-8") as f:
            f.write(batch_source(batch))
        err = nvcc(nvcc_path, flags, cu)
        os.remove(cu)
        if err is None:
            return {p["name"]: None for p in batch}
        if len(batch) == 1:
            return {batch[0]["name"]: err}
        alone = {p["name"]: nvcc(nvcc_path, flags, p["cu"]) for p in batch}
        if all(e is None for e in alone.values()):
            # Programs that clash only together: worth a look, no failure.
            for p in batch:
                notes[p["name"]] = "its batch failed, alone it compiles"
        return alone

    done = nfail = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as ex:
        futs = [ex.submit(run, k, b) for k, b in enumerate(batches)]
        for fut in concurrent.futures.as_completed(futs):
            got = fut.result()
            errors.update(got)
            done += 1
            nfail += sum(e is not None for e in got.values())
            if progress:
                progress(done, len(batches), nfail)
    for name, rep in copies.items():
        errors[name] = errors[rep] and \
            f"byte-identical to {rep}, which failed:\n{errors[rep]}"
        notes[name] = f"byte-identical to {rep}, compiled as it"
    return errors, notes
