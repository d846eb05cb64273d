#!/bin/sh
# The fault table through --tune (issue 15): with CUDAL1_TEST_TRANSFORMS=1 the
# heuristic proposes the test-only `break` faults (passes/Break.h) first;
# every one must be rejected, by replay (--judge auto) and as a whole program
# (--judge program), and the tuned output must contain none of them.
# Usage: tune-faults.sh CUDAL1_OPT OUTDIR   (writes OUTDIR/tune-faults.md)
opt=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" || exit 1
status=0
for judge in auto program; do
  rm -f "$out/$judge.db"
  CUDAL1_TEST_TRANSFORMS=1 "$opt" "$here/faults/program.cu" --tune --budget 16 --judge "$judge" \
    --db "$out/$judge.db" -o "$out/tuned-$judge.cu" -- -x cuda --cuda-gpu-arch=sm_90 \
    > "$out/tune-$judge.log" 2>&1 || { echo "--tune --judge $judge failed"; tail -20 "$out/tune-$judge.log"; status=1; }
  if grep -q "cudal1 break\|cudal1BreakRacyAdd\|cudal1BreakSideStream\|(threadIdx.x & 1) ? (void)0\|\[(i) + 1\]" "$out/tuned-$judge.cu" 2>/dev/null; then
    echo "[FAIL] the tuned output of --judge $judge contains a fault"; status=1
  fi
done
python3 - "$out" <<'PY' || status=1
import os, re, sqlite3, sys
out = sys.argv[1]
rows, bad = [], 0
for judge in ("auto", "program"):
    db = os.path.join(out, judge + ".db")
    if not os.path.exists(db):
        print("no database for --judge " + judge); bad += 1; continue
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    for plan, kernel, outcome, seen_judge in c.execute(
            "select plan, kernel_name, outcome, judge from measurements_view "
            "where plan like '%break(%' order by id"):
        kind = re.search(r"break\(kind=([a-z-]+)\)", plan).group(1)
        ok = outcome not in ("ok",)
        # A host fault is never judged by replay (Transform::editsHostCode).
        if kind == "side-stream" and seen_judge != "program":
            ok = False
        bad += not ok
        rows.append((kind, kernel, judge, seen_judge, outcome, "yes" if ok else "NO"))
kinds = {(r[0], r[1], r[2]) for r in rows}
lines = ["# Faults proposed through --tune (test/gpu/tune-faults.sh)", "",
         "| fault | kernel | --judge | judged by | expected | seen | pass |",
         "| --- | --- | --- | --- | --- | --- | --- |"]
for r in rows:
    lines.append("| %s | %s | %s | %s | rejected | %s | %s |" % (r[0], r[1], r[2], r[3], r[4], r[5]))
# Every kind each kernel offers, at both settings.
expected = [(k, "scale") for k in ("off-by-one", "partial-write", "skip-work", "side-stream")] + \
           [(k, "sum_squares") for k in ("race", "skip-work")]
for judge in ("auto", "program"):
    for k, kern in expected:
        if (k, kern, judge) not in kinds:
            lines.append("| %s | %s | %s | - | rejected | not proposed | NO |" % (k, kern, judge))
            bad += 1
lines.append("")
lines.append("%d of %d proposed faults rejected" % (sum(r[5] == "yes" for r in rows), len(rows)))
open(os.path.join(out, "tune-faults.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(1 if bad else 0)
PY
exit $status
