#!/usr/bin/env python3
"""has-helper.py OUTPUT.cu HELPER.cuh...: for each helper file, prints
whether OUTPUT.cu holds its exact bytes (what the pass embedded is the file)."""
import os
import sys

out = open(sys.argv[1], "rb").read()
for path in sys.argv[2:]:
    text = open(path, "rb").read()
    name = os.path.basename(path)
    print(f"{name}: {'verbatim' if text and text in out else 'MISSING'}")
