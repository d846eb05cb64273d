#!/usr/bin/env python3
"""Times `cudal1-opt F.cu --list-transforms` and `--analyze` on translation
units of N trivial kernels (make-kernels.py) and writes the table of
docs/results/list-transforms-scaling.md (issue 19 item 7). Regenerate with

  python3 bench/scaling/run.py --opt build/bin/cudal1-opt \\
      --out docs/results/list-transforms-scaling.md

Each figure is the median of --runs whole-process wall times."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd):
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opt", default="build/bin/cudal1-opt")
    ap.add_argument("--sizes", default="100,1000,5000,20000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="list-scaling-")
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        cu = os.path.join(work, "k%d.cu" % n)
        with open(cu, "w") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "make-kernels.py"), str(n)],
                           stdout=f, check=True)
        lines = sum(1 for _ in open(cu))
        row = [n, lines]
        for mode in ["--list-transforms", "--analyze"]:
            ts = [timed([args.opt, cu, mode]) for _ in range(args.runs)]
            row.append(statistics.median(ts))
        rows.append(row)
        print("N=%d list %.2f s analyze %.2f s" % (n, row[2], row[3]), file=sys.stderr)
    out = ["| kernels N | lines | --list-transforms s | s per kernel (ms) | --analyze s "
           "| s per kernel (ms) |", "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n, lines, lt, an in rows:
        out.append("| %d | %d | %.2f | %.3f | %.2f | %.3f |" %
                   (n, lines, lt, 1000 * lt / n, an, 1000 * an / n))
    text = "\n".join(out) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
