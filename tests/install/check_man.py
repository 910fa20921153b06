#!/usr/bin/env python3
"""Checks that the man page (docs/tiledispatch.1.in, as configured) stays
true to the command line:

- every command listed by `tiledispatch --help` has an item (.TP) of its
  own under COMMANDS;
- every option `--help` lists has an item under OPTIONS;
- every TILEDISPATCH_* variable the CLI reads (getenv in its source) has an
  item under ENVIRONMENT;
- the exit codes 0..3 each have an item under EXIT STATUS.

usage: check_man.py TILEDISPATCH MAN_PAGE CLI_SOURCE.c
"""
import re
import subprocess
import sys


def sections(man):
    """{section name: [tag line of each .TP item]} of the roff text."""
    text = man.replace("\\-", "-").replace("\\&", "")
    out, cur = {}, None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r'^\.SH\s+"?([^"]+)"?\s*$', line)
        if m:
            cur = m.group(1).strip()
            out[cur] = []
        elif line.strip() == ".TP" and cur and i + 1 < len(lines):
            tag = re.sub(r"^\.[A-Z]+\s*", "", lines[i + 1])
            out[cur].append(tag.replace('"', ""))
    return out


def help_items(exe):
    text = subprocess.run([exe, "--help"], check=True, capture_output=True,
                          text=True).stdout
    commands, options, where = [], [], None
    for line in text.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            where = line[:-1]
            continue
        if where == "commands":
            m = re.match(r"^  ([a-z][\w-]*)\s", line)
            if m:
                commands.append(m.group(1))
        elif where == "options" and re.match(r"^  -", line):
            # an option's own line (not the prose around the list)
            options += re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", line)
    return commands, sorted(set(options))


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    exe, man_path, source = sys.argv[1:]
    with open(man_path, encoding="utf-8") as fh:
        secs = sections(fh.read())
    with open(source, encoding="utf-8") as fh:
        env = sorted(set(re.findall(r'getenv\("(TILEDISPATCH_\w+)"\)',
                                    fh.read())))
    commands, options = help_items(exe)
    errors = []

    def has(section, word):
        return any(re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(word), t)
                   for t in secs.get(section, []))

    if not commands or not options:
        errors.append("could not read the commands and options of --help")
    for c in commands:
        if not has("COMMANDS", c):
            errors.append("command '%s' (--help) has no item under COMMANDS"
                          % c)
    for o in options:
        if not has("OPTIONS", o):
            errors.append("option '%s' (--help) has no item under OPTIONS" % o)
    for v in env:
        if not has("ENVIRONMENT", v):
            errors.append("%s (read by %s) has no item under ENVIRONMENT"
                          % (v, source))
    for code in "0123":
        if not has("EXIT STATUS", code):
            errors.append("exit status %s has no item under EXIT STATUS"
                          % code)
    for e in errors:
        print("%s: %s" % (man_path, e))
    if not errors:
        print("%d commands, %d options, %d environment variables: all in "
              "the man page" % (len(commands), len(options), len(env)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
