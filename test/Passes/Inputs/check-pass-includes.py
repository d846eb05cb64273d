#!/usr/bin/env python3
"""check-pass-includes.py PASSES_DIR: each pass (PASSES_DIR/NAME.cpp, NAME.h)
includes, of the headers in PASSES_DIR, only its own NAME.h; what passes
share belongs in lib/ (include/cudal1/...). AllPasses.cpp, the registry,
includes them all. Prints one line per offending include, exits 1 if any."""
import os
import re
import sys

root = sys.argv[1]
names = sorted(f for f in os.listdir(root) if f.endswith((".cpp", ".h")))
pass_headers = {f for f in names if f.endswith(".h")}
include = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
bad = 0
checked = 0
for f in names:
    if f == "AllPasses.cpp":
        continue
    checked += 1
    own = os.path.splitext(f)[0] + ".h"
    text = open(os.path.join(root, f), encoding="utf-8").read()
    for m in include.finditer(text):
        inc = m.group(1)
        if inc in pass_headers and inc != own:
            line = text.count("\n", 0, m.start()) + 1
            print(f"{os.path.join(root, f)}:{line}: includes another pass's header {inc}")
            bad += 1
print(f"checked {checked} files, {bad} cross-pass includes")
sys.exit(1 if bad else 0)
