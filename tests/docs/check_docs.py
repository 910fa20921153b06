#!/usr/bin/env python3
"""Runs the shell commands shown in the documentation and compares outputs.

    check_docs.py [--root SRC] [--build BUILD] [--timeout S] [--update]
                  [--list] [FILE.md ...]

Without FILE arguments it checks README.md and docs/*.md (every *.md at
the top of the source tree and under docs/).

The convention, for fenced code blocks (``` or ~~~):

- Every fenced block names its language (```text, ```yaml, ```c, ...).
  A block without one is an error, so a command cannot hide in a block
  that is never classified.
- A block whose language is a shell (sh, bash, shell, console, zsh,
  shell-session) is *runnable* unless its info string carries the word
  `norun` (```sh norun): the first word is still the language, so it
  renders as shell. A runnable block is a transcript: a line starting with
  `$ ` is a command; a command line ending in `\\` continues on the next
  line, and a here-document (`<<'EOF'`) takes the lines up to its
  terminator; the lines after the command, up to the next `$ ` line or the
  end of the block, are its expected output (stdout and stderr merged), compared
  exactly after stripping trailing spaces from each line and trailing
  blank lines from the whole. A runnable block with text before its first
  `$ ` line, or with no command at all, is an error.
- A trailing comment `# exit N` or `# exit code N` on a command line gives
  the expected exit status; without it the command must exit 0.
- A line `...` alone in an expected output matches any number of lines
  (zero included). Use it sparingly: prefer examples whose output does not
  vary.
- A line starting with `$ ` in a block of any other language is an error
  (it would look like a command that is never run).
- In a norun block nothing runs, but every script path a command starts
  with (`scripts/...`, `build/...`, `tests/...`, `bench/...`,
  `examples/...`, `tools/...`) must exist in the source tree or the build
  directory.

How commands run: in one temporary copy of the source tree (without .git
and other hidden top-level directories but .ci, build directories and the
fuzz corpora), with `build` there a symbolic
link to the real build directory. The files are taken in the order given
(README.md, then docs/*.md by name), their commands in order, each in a
fresh `bash --norc --noprofile -c`: a file a command writes is seen by the
commands after it (use names of your own, as `my-rules.yaml`), and
nothing touches the source tree. The
environment is clean: PATH is the build directory (so `tiledispatch` is
the built binary) then /usr/local/bin:/usr/bin:/bin; HOME and TMPDIR are
inside the copy; LC_ALL=C.UTF-8; no TILEDISPATCH_* variable (the
sanitizer option variables ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS and
TSAN_OPTIONS are passed through). Standard input is empty. Each command
has a timeout (--timeout, default 120 s).

--update rewrites, in place, the expected output and the `# exit N`
comment of every command that does not match (a maintainer's convenience
after a deliberate change: review the diff). The test itself never
rewrites. --list prints every command with its place and whether it runs.

Exit status: 0 all good; 1 a command did not match or the convention was
broken; 2 usage or environment error.
"""
import argparse
import difflib
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SHELL_LANGS = {"sh", "bash", "shell", "console", "zsh", "shell-session",
               "sh-session"}
NORUN = "norun"
WILDCARD = "..."
EXIT_RE = re.compile(r"\s#\s*exit(?:\s+code)?\s+(\d+)\s*$")
HEREDOC_RE = re.compile(r"(?<!<)<<(?!<)(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
TREE_DIRS = ("bench", "codegen", "core", "docs", "examples", "include",
             "model", "predicates", "registry", "rules", "scripts", "tests",
             "tools", "variants")
PATH_SPAN_RE = re.compile(r"^(?:%s)/[a-z0-9_./-]*$" % "|".join(TREE_DIRS))
SPAN_RE = re.compile(r"(`+)(.+?)\1")
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
SCRIPT_DIRS = ("scripts/", "build/", "tests/", "bench/", "examples/",
               "tools/")
PASSED_ENV = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
              "TSAN_OPTIONS")


class Block:
    def __init__(self, path, fence_line, indent, lang, words):
        self.path = path
        self.fence_line = fence_line  # 1-based line of the opening fence
        self.indent = indent
        self.lang = lang
        self.words = words
        self.lines = []  # (lineno, text) of the content, indent removed
        self.closed = False

    @property
    def shell(self):
        return self.lang in SHELL_LANGS

    @property
    def norun(self):
        return NORUN in self.words


class Command:
    def __init__(self, path, lineno, text, out_start, out_end, expected,
                 block):
        self.path = path
        self.lineno = lineno        # 1-based line of the `$ ` line
        self.text = text            # the command, continuation lines joined
        self.out_start = out_start  # 0-based index range of the expected
        self.out_end = out_end      # output lines in the file
        self.expected = expected    # expected output lines
        self.block = block
        self.exit = 0
        self.cmd_last_line = lineno - 1  # 0-based line of the exit comment


def parse_blocks(path, lines, problems):
    """The fenced code blocks of a Markdown file."""
    blocks = []
    cur = None
    for i, raw in enumerate(lines):
        line = raw.rstrip("\n")
        m = FENCE_RE.match(line)
        if cur is None:
            if m:
                info = m.group(3).strip()
                if m.group(2)[0] == "`" and "`" in info:
                    continue  # inline code spans, not a fence
                words = info.split()
                cur = Block(path, i + 1, len(m.group(1)),
                            words[0] if words else "", words[1:])
                cur.fence = m.group(2)
            continue
        if (m and m.group(3).strip() == "" and m.group(2)[0] == cur.fence[0]
                and len(m.group(2)) >= len(cur.fence)):
            cur.closed = True
            blocks.append(cur)
            cur = None
            continue
        text = line
        strip = min(cur.indent, len(text) - len(text.lstrip(" ")))
        cur.lines.append((i + 1, text[strip:]))
    if cur is not None:
        problems.append(f"{path}:{cur.fence_line}: code block is never "
                        f"closed")
    return blocks


def check_paths(path, root, build, lines, blocks, problems):
    """Source paths named in inline code (`registry/rules.c`) and relative
    link targets must exist, so the prose cannot point at moved files.
    Spans with capitals or wildcards (`tests/fuzz/corpus/TARGET/`) are
    placeholders and are not checked; a path may also name something
    built (`bench/bench_dispatch`)."""
    in_block = set()
    for b in blocks:
        in_block.update(range(b.fence_line, b.fence_line + len(b.lines) + 2))
    base = os.path.dirname(os.path.join(root, path))
    for i, line in enumerate(lines, 1):
        if i in in_block:
            continue
        for m in SPAN_RE.finditer(line):
            span = m.group(2).strip()
            if PATH_SPAN_RE.match(span) and not any(
                    os.path.exists(os.path.join(d, span))
                    for d in (root, build)):
                problems.append(f"{path}:{i}: `{span}` does not exist in the "
                                f"source tree or the build directory")
        for m in LINK_RE.finditer(SPAN_RE.sub("", line)):
            target = m.group(1).split("#")[0]
            if not target or re.match(r"^[a-z]+:", target):
                continue
            if not os.path.exists(os.path.join(base, target)):
                problems.append(f"{path}:{i}: link target '{target}' does "
                                f"not exist")


def is_cmd(text):
    return text.startswith("$ ") or text == "$"


def commands_of(block, problems):
    """Splits a runnable block into commands with their expected output."""
    cmds = []
    lines = block.lines
    i = 0
    # Text before the first command.
    while i < len(lines) and not is_cmd(lines[i][1]):
        if lines[i][1].strip():
            problems.append(
                f"{block.path}:{lines[i][0]}: runnable ```{block.lang} block "
                f"(opened at line {block.fence_line}) has text before its "
                f"first '$ ' command; write commands as '$ COMMAND' lines, "
                f"or mark the block ```{block.lang} {NORUN} if it cannot "
                f"run in the docs suite")
            return []
        i += 1
    if i == len(lines):
        problems.append(
            f"{block.path}:{block.fence_line}: ```{block.lang} block has no "
            f"'$ ' command; mark it ```{block.lang} {NORUN} or use another "
            f"language (```text)")
        return []
    while i < len(lines):
        lineno, text = lines[i]
        parts = [text[2:] if text.startswith("$ ") else ""]
        while parts[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            parts.append(lines[i][1])
        exit_line = lines[i][0]
        m = EXIT_RE.search(parts[-1])
        # Here-documents: the lines up to each terminator belong to the
        # command.
        for hm in HEREDOC_RE.finditer("\n".join(parts)):
            dash, word = hm.group(1), hm.group(3)
            while i + 1 < len(lines):
                i += 1
                parts.append(lines[i][1])
                end = lines[i][1].lstrip("\t") if dash else lines[i][1]
                if end == word:
                    break
            else:
                problems.append(f"{block.path}:{lineno}: here-document "
                                f"'{word}' is not terminated in its block")
        cmd_text = "\n".join(parts)
        last_cmd_line = lines[i][0]
        i += 1
        start = i
        while i < len(lines) and not is_cmd(lines[i][1]):
            i += 1
        expected = [t for _, t in lines[start:i]]
        # 0-based file indexes of the output lines: from the line after the
        # command up to the next command line or the closing fence.
        out_start = last_cmd_line
        out_end = lines[i][0] - 1 if i < len(lines) else lines[-1][0]
        c = Command(block.path, lineno, cmd_text, out_start, out_end,
                    expected, block)
        c.cmd_last_line = exit_line - 1
        c.exit = int(m.group(1)) if m else 0
        if not cmd_text.strip():
            problems.append(f"{block.path}:{lineno}: empty '$' command")
        else:
            cmds.append(c)
    return cmds


def norun_paths(block, root, build, problems):
    """In a norun block, script paths a command starts with must exist."""
    for lineno, text in block.lines:
        t = text[2:] if text.startswith("$ ") else text
        for part in re.split(r"&&|\|\||;|\|", t.split(" #")[0]):
            words = part.split()
            while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                words = words[1:]  # VAR=value prefixes
            if not words:
                continue
            w = words[0]
            if not w.startswith(SCRIPT_DIRS) or re.search(r"[$*?\[{]", w):
                continue  # not a script path, or one built by the shell
            if w.startswith("build/"):
                ok = os.path.exists(os.path.join(build, w[len("build/"):]))
            else:
                ok = os.path.exists(os.path.join(root, w))
            if not ok:
                problems.append(f"{block.path}:{lineno}: '{w}' does not "
                                f"exist (in a ```{block.lang} {NORUN} "
                                f"block)")


def strip_trailing(lines):
    out = [l.rstrip() for l in lines]
    while out and out[-1] == "":
        out.pop()
    return out


def matches(expected, got):
    """Line-by-line equality where an expected line `...` matches any
    number of lines."""
    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(expected):
            r = j == len(got)
        elif expected[i] == WILDCARD:
            r = any(go(i + 1, k) for k in range(j, len(got) + 1))
        else:
            r = j < len(got) and expected[i] == got[j] and go(i + 1, j + 1)
        memo[key] = r
        return r

    return go(0, 0)


def git_ignored(root):
    """The paths under root that git ignores (build directories, the Python
    venv of build-python/, scratch files), as real paths; empty when root is
    not a git checkout.  The copy leaves them out: build-python/ alone is ten
    thousand files, and what the docs run never reads them."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "--others", "--ignored",
             "--exclude-standard", "--directory", "-z"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
            timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {os.path.realpath(os.path.join(root, p.rstrip("/")))
            for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def copy_tree(root, dest, build):
    build_real = os.path.realpath(build)
    ignored = git_ignored(root)

    def ignore(d, names):
        out = set()
        for n in names:
            p = os.path.join(d, n)
            if os.path.realpath(p) in ignored:
                out.add(n)  # git ignores it (the build tree is linked below)
            elif n == ".git" or (n == "corpus" and os.path.basename(d) == "fuzz"):
                out.add(n)
            elif (d == root and n.startswith(".") and n != ".ci"
                  and os.path.isdir(p)):
                out.add(n)  # tools' scratch directories
            elif os.path.isdir(p) and (
                    os.path.exists(os.path.join(p, "meson-private")) or
                    os.path.realpath(p) == build_real):
                out.add(n)  # a build directory
        return out

    shutil.copytree(root, dest, ignore=ignore, symlinks=True)
    link = os.path.join(dest, "build")
    if os.path.lexists(link):
        if os.path.isdir(link) and not os.path.islink(link):
            shutil.rmtree(link)
        else:
            os.remove(link)
    os.symlink(os.path.realpath(build), link)


def clean_env(build, work):
    env = {
        "PATH": os.path.realpath(build) + ":/usr/local/bin:/usr/bin:/bin",
        "HOME": os.path.join(work, ".home"),
        "TMPDIR": os.path.join(work, ".tmp"),
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
    }
    for k in PASSED_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    os.makedirs(env["HOME"], exist_ok=True)
    os.makedirs(env["TMPDIR"], exist_ok=True)
    return env


def run_command(cmd, cwd, env, timeout):
    """Runs one command in its own process group, so that a timeout ends
    its children too."""
    p = subprocess.Popen(["bash", "--norc", "--noprofile", "-c", cmd.text],
                         cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = None
    return out.decode("utf-8", errors="replace").splitlines(), rc


def scratch_dir():
    """Where the copy goes: /dev/shm when it is a writable memory file
    system with room to spare (creating the copy's 3,500 files there takes
    a tenth of a second; on this machine's disk, three seconds), else the
    default temporary directory."""
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
    except OSError:
        return None
    if os.access(shm, os.W_OK) and st.f_bavail * st.f_frsize >= 1 << 30:
        return shm
    return None


def run_all(jobs, args):
    """Runs the commands of every file, file after file, in one temporary
    copy of the tree; yields (file, lines, command, output, status)."""
    with tempfile.TemporaryDirectory(prefix="td-docs-", dir=scratch_dir()) as tmp:
        work = os.path.join(tmp, "src")
        copy_tree(args.root, work, args.build)
        env = clean_env(args.build, tmp)
        for f, display, lines, cmds in jobs:
            for c in cmds:
                got, rc = run_command(c, work, env, args.timeout)
                yield f, lines, c, got, rc


def report(c, got, rc, timeout):
    exp = strip_trailing(c.expected)
    got_s = strip_trailing(got)
    ok_out = matches(exp, got_s)
    ok_rc = rc == c.exit
    if ok_out and ok_rc:
        return None
    first = c.text.splitlines()[0]
    msg = [f"{c.path}:{c.lineno}: $ {first}"]
    if rc is None:
        msg.append(f"  timed out after {timeout:g} s")
    elif not ok_rc:
        msg.append(f"  exit status: expected {c.exit}, got {rc}")
    if not ok_out:
        msg.append("  output differs:")
        for d in difflib.unified_diff(exp, got_s,
                                      f"expected ({c.path}:{c.lineno + 1})",
                                      "got", lineterm="", n=3):
            msg.append("    " + d)
    return "\n".join(msg)


def update_file(path, failures, lines):
    """Rewrites the expected outputs (and exit comments) of failures."""
    # Bottom to top so earlier indexes stay valid.
    for c, got, rc in sorted(failures, key=lambda f: -f[0].lineno):
        ind = " " * c.block.indent
        old = [l.rstrip("\n") for l in lines[c.out_start:c.out_end]]
        trailing = 0
        while trailing < len(old) and old[len(old) - 1 - trailing].strip() \
                == "":
            trailing += 1
        if WILDCARD in [l.strip() for l in old]:
            print(f"{c.path}:{c.lineno}: note: the '{WILDCARD}' lines of "
                  f"this output were replaced by the full output",
                  file=sys.stderr)
        new = [(ind + l).rstrip() + "\n" for l in strip_trailing(got)]
        new += ["\n"] * trailing
        lines[c.out_start:c.out_end] = new
        if rc is not None and rc != c.exit:
            k = c.cmd_last_line
            line = lines[k].rstrip("\n")
            line = EXIT_RE.sub("", line).rstrip()
            if rc != 0:
                line += f"    # exit {rc}"
            lines[k] = line + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)


def default_files(root):
    files = sorted(glob.glob(os.path.join(root, "*.md")))
    files += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"),
                              recursive=True))
    return files


def main():
    ap = argparse.ArgumentParser(
        description="Run the commands shown in README.md and docs/*.md and "
                    "compare their output with the one shown.")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(here)),
                    help="the source tree (default: this script's)")
    ap.add_argument("--build", help="the build directory (default: ROOT/build)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds per command (default 120)")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the outputs shown in the files to what the "
                         "commands print now")
    ap.add_argument("--list", action="store_true",
                    help="list the commands and whether they run; run nothing")
    ap.add_argument("files", nargs="*", help="Markdown files (default: "
                    "README.md and docs/*.md)")
    args = ap.parse_args()
    args.root = os.path.abspath(args.root)
    args.build = os.path.abspath(args.build or os.path.join(args.root,
                                                            "build"))
    if not os.path.isfile(os.path.join(args.build, "tiledispatch")):
        print(f"check_docs: no tiledispatch binary in {args.build} "
              f"(build first, or pass --build)", file=sys.stderr)
        return 2
    files = args.files or default_files(args.root)
    if not files:
        print("check_docs: no Markdown files to check", file=sys.stderr)
        return 2

    problems = []
    plan = []  # (path, display, lines, cmds)
    norun_count = 0
    for f in files:
        display = os.path.relpath(os.path.abspath(f), args.root)
        if display.startswith(".."):
            display = f
        try:
            with open(f, encoding="utf-8") as fh:
                lines = fh.readlines()
        except OSError as e:
            print(f"check_docs: {f}: {e.strerror}", file=sys.stderr)
            return 2
        cmds = []
        blocks = parse_blocks(display, lines, problems)
        check_paths(display, args.root, args.build, lines, blocks, problems)
        for b in blocks:
            if not b.lang:
                problems.append(
                    f"{display}:{b.fence_line}: code block without a "
                    f"language; name one (```text, ```yaml, ```c, "
                    f"```console for commands to run, ```sh {NORUN} for "
                    f"commands the docs suite cannot run)")
                continue
            if not b.shell:
                for lineno, text in b.lines:
                    if is_cmd(text):
                        problems.append(
                            f"{display}:{lineno}: a '$ ' command in a "
                            f"```{b.lang} block is never run; use ```console "
                            f"(or ```console {NORUN})")
                        break
                continue
            if b.norun:
                norun_count += sum(1 for _, t in b.lines
                                   if t.strip() and not t.startswith("#"))
                if args.list:
                    for lineno, text in b.lines:
                        if text.strip():
                            print(f"{display}:{lineno}: norun: {text}")
                norun_paths(b, args.root, args.build, problems)
                continue
            cmds += commands_of(b, problems)
        if args.list:
            for c in cmds:
                print(f"{display}:{c.lineno}: run (exit {c.exit}): "
                      f"{c.text.splitlines()[0]}")
        plan.append((f, display, lines, cmds))

    if args.list:
        for p in problems:
            print(p)
        return 1 if problems else 0

    jobs = [(f, d, lines, cmds) for f, d, lines, cmds in plan if cmds]
    failures_by_file = {}
    failed = 0
    ran = 0
    for f, lines, c, got, rc in run_all(jobs, args) if jobs else ():
        ran += 1
        msg = report(c, got, rc, args.timeout)
        if msg is not None:
            failed += 1
            print(msg, flush=True)
            failures_by_file.setdefault(f, (lines, []))[1].append((c, got, rc))
    for p in problems:
        print(p)
    if args.update:
        for f, (lines, fails) in failures_by_file.items():
            update_file(f, fails, lines)
            print(f"check_docs: updated {len(fails)} output(s) in {f}")
    print(f"docs: {ran} commands run in {len(jobs)} of {len(plan)} files, "
          f"{failed} failed; {norun_count} lines in {NORUN} blocks not run; "
          f"{len(problems)} convention error(s)")
    if args.update:
        return 1 if problems else 0
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
