#!/bin/sh
# The split path's kernel part on a GPU (issue 15 item 6): a kernel-level
# plan emitted with --emit-bundle is judged by replay on the GPU machine.
#   split-kernel-bundle.sh emit CUDAL1-OPT SOURCE_ROOT BUNDLE
#     where cudal1-opt is built: writes the bundle of
#     test/gpu/inputs/sum-squares-two-shapes.cu (the corpus's float-atomic
#     sum of squares, launched with two shapes: warp-reduce, a plan of
#     device code only, and plans that change the launch, launch-config
#     and coarsen, listed with their launch remap, launch=) for a GPU
#     machine without LLVM (BUNDLE: .device-carry/split-kernel).
#   split-kernel-bundle.sh check CUDAL1-OPT|"" CUDAL1-EVAL SOURCE_ROOT WORKDIR
#     emits the bundle with CUDAL1-OPT when it is given, else copies
#     $CUDAL1_SPLIT_KERNEL_BUNDLE (default SOURCE_ROOT/.device-carry/
#     split-kernel); runs cudal1-eval on it; the kernel must have been
#     captured and replayed (kernels/status.txt), its original verified
#     against the double reference, warp-reduce verified and timed, and
#     every launch-changing variant replayed with its remap applied to
#     each of the two shapes' captured launches, verified and timed (none
#     left to the program level). With
#     CUDAL1-OPT the import follows here: sumSquares' best plan must be
#     warp-reduce judged by replay-double-reference. Without it the
#     evaluated bundle is left in WORKDIR/b (scripts/gpu-check brings it
#     back) for `split-kernel-bundle.sh import` where cudal1-opt is built.
#     Exit 77 (skipped) without a GPU or without a bundle.
#   split-kernel-bundle.sh import CUDAL1-OPT SOURCE_ROOT BUNDLE
#     the import of an evaluated bundle, with the same check; it writes the
#     final plan's reproducibility check (BUNDLE/check) for the GPU machine
#     (cudal1-eval BUNDLE/check --rounds 30, then this import again). In
#     check mode with CUDAL1-OPT the check is evaluated and imported here.
set -u
mode=$1
fail() { echo "split-kernel-bundle: FAIL: $*"; exit 1; }
program=test/gpu/inputs/sum-squares-two-shapes.cu

emit() { # OPT ROOT BUNDLE
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  rm -rf "$3"
  "$1" "$2/$program" --emit-bundle "$3" --budget 9 --time-regex '^gpu_ms=(\S+)' \
    --transforms warp-reduce,launch-config,coarsen \
    --build-cmd "$nvcc -O3 -arch=sm_90 {src} -o {exe}" -- -x cuda --cuda-gpu-arch=sm_90 ||
    fail "cudal1-opt --emit-bundle failed"
  test -f "$3/kernels/manifest.txt" || fail "no kernel part in $3"
  grep -q '^variant ' "$3/kernels/manifest.txt" || fail "no kernel-level variant in $3/kernels"
  grep -q 'warp-reduce' "$3/plans.tsv" || fail "no warp-reduce plan in $3"
  for step in reshape divide-x; do
    grep -q "^variant .* launch=$step(" "$3/kernels/manifest.txt" ||
      fail "no launch-changing variant with launch=$step(...) in $3/kernels/manifest.txt"
  done
}

import() { # OPT ROOT BUNDLE [EVAL]
  "$1" "$2/$program" --import-results "$3" -o "$3/tuned.cu" -- -x cuda --cuda-gpu-arch=sm_90 \
    > "$3/import.log" 2>&1 || { rc=$?; cat "$3/import.log"; fail "cudal1-opt --import-results exited $rc"; }
  cat "$3/import.log"
  line=$(grep -E '^sumSquares ' "$3/import.log" | head -1)
  echo "$line" | grep -q 'warp-reduce.*(replay-double-reference' ||
    fail "sumSquares: warp-reduce was not judged by replay against the double reference: $line"
  # The final plan is used only after its reproducibility check (B/check):
  # measured here when cudal1-eval is at hand, else left for the GPU machine.
  if [ -f "$3/check/manifest.txt" ] && [ ! -f "$3/check/results.txt" ]; then
    if [ -z "${4:-}" ]; then
      echo "split-kernel-bundle: ok (imported: $line; the final plan's check is in $3/check:" \
           "cudal1-eval $3/check --rounds 30 on a GPU machine, then import again)"
      return 0
    fi
    "$4" "$3/check" --rounds 30 > "$3/check-eval.log" 2>&1 ||
      { rc=$?; cat "$3/check-eval.log"; fail "cudal1-eval $3/check exited $rc"; }
    "$1" "$2/$program" --import-results "$3" -o "$3/tuned.cu" -- -x cuda --cuda-gpu-arch=sm_90 \
      > "$3/import2.log" 2>&1 || { rc=$?; cat "$3/import2.log"; fail "the import after the check exited $rc"; }
    cat "$3/import2.log"
    grep -q '^reproducibility check: ' "$3/import2.log" || fail "the second import applied no check"
    test -f "$3/tuned.cu" || fail "no output after the check"
  fi
  echo "split-kernel-bundle: ok (imported: $line; $(grep '^reproducibility check: ' "$3/import2.log" "$3/import.log" 2>/dev/null | head -1 | sed 's/^[^:]*://'))"
}

case $mode in
emit) emit "$2" "$3" "$4"; exit 0 ;;
import) import "$2" "$3" "$4"; exit 0 ;;
check) ;;
*) fail "usage: split-kernel-bundle.sh emit|check|import ..." ;;
esac
opt=$2 eval=$3 root=$4 work=$5
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "split-kernel-bundle: no GPU here: skipped"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
b=$work/b
if [ -n "$opt" ] && [ -x "$opt" ]; then
  emit "$opt" "$root" "$b"
else
  carried=${CUDAL1_SPLIT_KERNEL_BUNDLE:-$root/.device-carry/split-kernel}
  if [ ! -f "$carried/kernels/manifest.txt" ]; then
    echo "split-kernel-bundle: no cudal1-opt and no bundle at $carried" \
         "(split-kernel-bundle.sh emit build/bin/cudal1-opt . $carried): skipped"
    exit 77
  fi
  cp -r "$carried" "$b" || fail "cannot copy $carried"
fi
"$eval" "$b" > "$work/eval.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$work/eval.log"; fail "cudal1-eval exited $rc"; }
cat "$work/eval.log"
cat "$b/kernels/status.txt"
key=$(sed -n 's/^kernel \([^ ]*\) name=sumSquares .*/\1/p' "$b/kernels/manifest.txt")
[ -n "$key" ] || fail "sumSquares is not in the kernel part's manifest"
grep -q "^kernel $key replay launches=[1-9]" "$b/kernels/status.txt" ||
  fail "sumSquares ($key) was not captured and replayed"
kres=$b/kernels/$(sed -n "s/^kernel $key replay .*results=\([^ ]*\).*/\1/p" "$b/kernels/status.txt")/results.txt
test -f "$kres" || fail "no replay results ($kres)"
cat "$kres"
grep -q '^result original outcome=ok ' "$kres" ||
  fail "the original did not verify against the double reference"
grep -q '^result v[0-9]* outcome=ok .*speedup=' "$kres" || fail "no variant was verified and timed by replay"
# The plans that change the launch: replayed with their remap, which the
# worker applies to each captured launch (kN/manifest.txt: remap=; the two
# shapes remap to two configurations), verified against the reference, timed.
grep -q "^kernel $key replay launches=\([2-9]\|[1-9][0-9]\)" "$b/kernels/status.txt" ||
  fail "sumSquares: fewer than two captured launches (the program launches it with two shapes)"
launched=$(sed -n "s/^variant \([^ ]*\) kernel=$key .* launch=\([^ ]*\).*/\1/p" "$b/kernels/manifest.txt")
[ -n "$launched" ] || fail "no launch-changing variant in the kernel part"
for id in $launched; do
  if grep -q "^variant $id program" "$b/kernels/status.txt"; then
    fail "$id (launch $(sed -n "s/^variant $id .* launch=\([^ ]*\).*/\1/p" "$b/kernels/manifest.txt")) was left to the program level: $(grep "^variant $id program" "$b/kernels/status.txt")"
  fi
  grep -q "^variant $id .*remap=" "$(dirname "$kres")/manifest.txt" ||
    fail "$id: no remap= in $(dirname "$kres")/manifest.txt"
  grep -q "^result $id outcome=ok .*speedup=" "$kres" ||
    fail "$id (a launch-changing plan) was not verified and timed by replay: $(grep "^result $id " "$kres")"
done
echo "split-kernel-bundle: launch-changing variants replayed: $launched"
if [ -n "$opt" ] && [ -x "$opt" ]; then
  import "$opt" "$root" "$b" "$eval"
else
  echo "split-kernel-bundle: ok (evaluated; import $b where cudal1-opt is built:" \
       "split-kernel-bundle.sh import build/bin/cudal1-opt . BUNDLE)"
fi
exit 0
