#!/usr/bin/env python3
"""check-target-deps.py BUILD_DIR [TARGET]: TARGET (default `check`) builds every program
the tests run. Prints each linked program or plugin of the build (ninja's
link rules) and each ctest command inside BUILD_DIR that TARGET does not
depend on, then a summary; exits 1 if any is missing."""
import json
import os
import re
import subprocess
import sys

build = os.path.abspath(sys.argv[1])
target = sys.argv[2] if len(sys.argv) > 2 else "check"
if not os.path.exists(os.path.join(build, "build.ninja")):
    print(f"{build} is not a Ninja build (scripts/build configures with -G Ninja): "
          "the dependencies are read from ninja's graph", file=sys.stderr)
    sys.exit(1)


def ninja(*args):
    return subprocess.run(["ninja", "-C", build, *args], check=True, capture_output=True,
                          text=True).stdout.splitlines()


# Every file `check` depends on, directly or not: the nodes of its graph
# (rules are drawn as ellipses, files as boxes).
node = re.compile(r'^"0x[0-9a-f]+" \[label="([^"]*)"(, shape=ellipse)?\]$')
inputs = set()
for line in ninja("-t", "graph", target):
    m = node.match(line)
    if m and not m.group(2):
        inputs.add(m.group(1))
linked = set()
for line in ninja("-t", "targets", "all"):
    out, _, rule = line.rpartition(": ")
    if any(k in rule for k in ("_EXECUTABLE_LINKER_", "_SHARED_LIBRARY_LINKER_",
                               "_MODULE_LIBRARY_LINKER_")):
        linked.add(out)
missing = [o for o in sorted(linked) if o not in inputs]
for o in missing:
    print(f"not built by {target}: {o}")

tests = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                                  capture_output=True, text=True).stdout)["tests"]
commands = 0
unbuilt = []
for t in tests:
    cmd = t.get("command") or []
    if not cmd or not os.path.abspath(cmd[0]).startswith(build + os.sep):
        continue
    commands += 1
    rel = os.path.relpath(os.path.abspath(cmd[0]), build)
    if rel not in inputs:
        print(f"ctest {t['name']} runs {rel}, which {target} does not build")
        unbuilt.append(rel)
print(f"{target} builds {len(linked) - len(missing)} of {len(linked)} linked programs and "
      f"libraries and {commands - len(unbuilt)} of {commands} programs ctest runs from the "
      f"build dir")
sys.exit(1 if missing or unbuilt else 0)
