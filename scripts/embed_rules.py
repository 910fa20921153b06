#!/usr/bin/env python3
"""Writes a C file defining td_default_rules() from rules/rules.yaml."""
import sys

src, dst = sys.argv[1], sys.argv[2]
data = open(src, 'rb').read()
with open(dst, 'w') as f:
    f.write('/* Generated from rules/rules.yaml by scripts/embed_rules.py. */\n')
    f.write('#include <stddef.h>\n\n')
    # The public declaration (with TD_API) gives the definition its
    # exported visibility.
    f.write('#include "tiledispatch/td_registry.h"\n\n')
    f.write('static const char rules_text[] = {\n')
    for i in range(0, len(data), 12):
        f.write('    ' + ', '.join('0x%02x' % b for b in data[i:i + 12]) + ',\n')
    f.write('    0x00\n};\n\n')
    f.write('const char *td_default_rules(size_t *len)\n{\n')
    f.write('    if (len != NULL)\n        *len = sizeof rules_text - 1;\n')
    f.write('    return rules_text;\n}\n')
