#!/bin/sh
# The reproducibility check refuses a plan whose gain was drift (issue 15,
# docs/Tuning.md "Reproducibility check"). test/gpu/drift/program.cu gets
# slower with every run (a run counter in a file of the work dir); the plan
# (drop-sync of its loop's synchronization) is a real but small gain.
#   1. control: the program without drift (`fixed`): the check passes.
#   2. drift: the original's last third of rounds is about 3x its first
#      third, far more than the gain: the check fails, for the drift.
# Usage: drift-check.sh CUDAL1-OPT|"" WORK-DIR   (writes WORK-DIR/drift-check.md)
# Exit 77 (skipped) without a GPU or without cudal1-opt (a GPU-only build:
# scripts/gpu-check drift runs it with the packed tuner).
set -u
opt=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "drift-check: FAIL: $*"; exit 1; }
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "drift-check: no GPU here: skipped"; exit 77
fi
if [ -z "$opt" ] || [ ! -x "$opt" ]; then
  echo "drift-check: no cudal1-opt in this build: skipped"; exit 77
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
plan='@sync#0: drop-sync'
# The plan must apply (and be the loop's synchronization) before anything runs.
"$opt" "$here/drift/program.cu" --plan "$plan" -o "$work/planned.cu" -- -x cuda --cuda-gpu-arch=sm_90 \
  || fail "the plan does not apply"
grep -q 'cudal1 drop-sync: CHECK(cudaDeviceSynchronize())' "$work/planned.cu" || fail "drop-sync did not edit the loop"
check() { # NAME RUN-ARGS
  "$opt" "$here/drift/program.cu" --check-plan "$plan" --time-regex '^gpu_ms=(\S+)' \
    --build-cmd "$nvcc -O3 -arch=sm_90 {src} -o {exe}" --run-cmd "{exe} $work/$1.counter $2" \
    -- -x cuda --cuda-gpu-arch=sm_90 > "$work/$1.log" 2>&1 || { cat "$work/$1.log"; fail "--check-plan ($1) exited $?"; }
  cat "$work/$1.log"
}
check fixed fixed
check drift ""
line() { grep '^reproducibility check: ' "$work/$1.log" | head -1; }
fixed=$(line fixed) drift=$(line drift)
[ -n "$fixed" ] && [ -n "$drift" ] || fail "no check line"
# Figures of the drift run: speedup, its lower bound, the drift (%).
set -- $(echo "$drift" | sed -n 's/^reproducibility check: \([0-9.]*\)x \[\([0-9.]*\), [0-9.]*\], original drift \([0-9.]*\)%.*/\1 \2 \3/p')
[ $# -eq 3 ] || fail "cannot read the drift run's figures: $drift"
speedup=$1 lo=$2 pct=$3
status=0
verdict() { case "$1" in *": passed") echo passed;; *"failed, the original is kept") echo failed;; *) echo "?";; esac; }
vf=$(verdict "$fixed") vd=$(verdict "$drift")
reason=$(sed -n 's/^reason: //p' "$work/drift.log" | head -1)
{
  echo "# The reproducibility check and drift (test/gpu/drift-check.sh)"
  echo
  echo "plan: \`$plan\` on test/gpu/drift/program.cu, \`cudal1-opt --check-plan\` ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1))"
  echo
  echo "| run | expected | check line | verdict | pass |"
  echo "| --- | --- | --- | --- | --- |"
  p=$([ "$vf" = passed ] && echo yes || echo NO)
  echo "| fixed (no drift) | passed | $fixed | $vf | $p |"
  p=$([ "$vd" = failed ] && echo yes || echo NO)
  echo "| drift (1.03x a run) | failed: drift | $drift | $vd ($reason) | $p |"
} > "$work/drift-check.md"
[ "$vf" = passed ] || { echo "the plan's gain did not pass without drift: the test shows nothing"; status=1; }
[ "$vd" = failed ] || { echo "the check did not refuse the drifting run"; status=1; }
# The drift must be far more than the gain, and the refusal must be for it
# (the measured interval itself above 1).
awk -v d="$pct" -v s="$speedup" 'BEGIN { exit !(1 + d / 100 > 1.5 * s) }' ||
  { echo "the drift ($pct%) is not far above the gain (${speedup}x)"; status=1; }
awk -v l="$lo" 'BEGIN { exit !(l > 1) }' ||
  { echo "the drifting run's own interval is not above 1 (lower bound $lo): refused, but not for the drift"; status=1; }
[ "$reason" = "the original drifted by more than the gain within the check" ] ||
  { echo "refused for another reason: $reason"; status=1; }
cat "$work/drift-check.md"
[ $status -eq 0 ] && echo "drift-check: ok" || echo "drift-check: FAIL"
exit $status
