#!/usr/bin/env python3
"""Embeds the CUDA text fragments of the self-checking programs.

usage: embed_fragments.py OUT.c OUT.h FRAGMENT...

Each fragment tools/kernel/fragments/NAME.cuh becomes
`const char td__kp_frag_NAME[]` in OUT.c, declared in OUT.h.  The lines at
the top of a fragment that start with "//!" say what the fragment is for;
they are not part of the text the programs receive.  Everything else is
copied byte for byte, so a program's text is the fragments in the order the
generator writes them.
"""
import os
import re
import sys


def c_literal(text):
    """The text as C string literal lines, one per source line."""
    out = []
    for line in text.splitlines(keepends=True):
        esc = (line.replace('\\', '\\\\').replace('"', '\\"')
               .replace('\n', '\\n').replace('\t', '\\t'))
        # "??" would start a trigraph in older C modes.
        esc = esc.replace('??', '?\\?')
        out.append('    "%s"' % esc)
    return '\n'.join(out) if out else '    ""'


def main():
    out_c, out_h, frags = sys.argv[1], sys.argv[2], sys.argv[3:]
    names = []
    bodies = []
    for path in frags:
        name = os.path.splitext(os.path.basename(path))[0]
        if not re.fullmatch(r'[a-z][a-z0-9_]*', name):
            sys.exit('embed_fragments.py: bad fragment name %r' % name)
        with open(path, encoding='utf-8', newline='') as f:
            lines = f.read().splitlines(keepends=True)
        while lines and lines[0].startswith('//!'):
            lines.pop(0)
        names.append(name)
        bodies.append(''.join(lines))
    guard = 'TD_KP_FRAGMENTS_H'
    with open(out_h, 'w', newline='\n') as f:
        f.write('/* Generated from tools/kernel/fragments by '
                'scripts/embed_fragments.py:\n'
                ' * the CUDA text of the self-checking programs. */\n')
        f.write('#ifndef %s\n#define %s\n\n' % (guard, guard))
        for n in names:
            f.write('extern const char td__kp_frag_%s[];\n' % n)
        f.write('\n#endif\n')
    with open(out_c, 'w', newline='\n') as f:
        f.write('/* Generated from tools/kernel/fragments by '
                'scripts/embed_fragments.py. */\n')
        f.write('#include "%s"\n' % os.path.basename(out_h))
        for n, b in zip(names, bodies):
            f.write('\nconst char td__kp_frag_%s[] =\n%s;\n' % (n, c_literal(b)))


if __name__ == '__main__':
    main()
