#!/bin/sh
# Opens a tuning report (docs/Report.md) in a real browser: headless
# chromium loads the page from disk, runs its inline self-check (kernel
# sections, plots, samples, each plot laid out with a size), and we read the
# verdict from the DOM it dumps. Also takes a screenshot to look at.
# Exit 77 (ctest: skipped) when chromium is not installed.
# usage: report-in-chromium.sh CUDAL1-OPT SOURCE-DIR WORK-DIR
# CUDAL1_CHROMIUM names the browser (default: chromium on PATH).
set -eu
opt=$1
src=$2
work=$3
chromium=${CUDAL1_CHROMIUM-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ] || [ ! -x "$chromium" ]; then
  echo "chromium is not installed (scripts/setup installs it): skipped"
  exit 77
fi
inputs=$src/test/cudal1-opt/Inputs
rm -rf "$work"
mkdir -p "$work/bin" "$work/profile"
cp "$inputs/fake-nvidia-smi" "$work/bin/nvidia-smi"
cp "$inputs/tune-me.cu" "$work/app.cu"
printf 'bw_gbs=1000 sgemm_gflops=10000 dgemm_gflops=5000\n' > "$work/ceilings.txt"

# 1. A report from a real --tune run (fake GPU and compiler, as in lit's
# test/cudal1-opt/report.test).
PATH="$work/bin:$PATH" "$opt" "$work/app.cu" --tune --budget 6 --db "$work/tune.db" \
  --build-cmd "sh $inputs/report-build.sh {src} {exe}" --time-regex '^gpu_ms=(\S+)' \
  --report "$work/report.html" --report-ceilings "$work/ceilings.txt" \
  -o "$work/tuned.cu" -- -x cuda > "$work/tune.log" 2>&1 || {
  cat "$work/tune.log"
  echo "FAIL: cudal1-opt --tune did not write the report"
  exit 1
}

browse() {
  timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --user-data-dir="$work/profile" "$@" 2>> "$work/chromium.log"
}

# 2. The DOM after the page's script ran.
browse --dump-dom "file://$work/report.html" > "$work/dom.html" || {
  tail -20 "$work/chromium.log"
  echo "FAIL: chromium could not load the report"
  exit 1
}
# The element's text, not the script's source (which the DOM also holds).
verdict=$(grep -o '<span id="selfcheck"[^>]*>[^<]*' "$work/dom.html" | sed 's/.*>//' || true)
echo "$verdict"
case "$verdict" in
"selfcheck: ok (2/2 kernel sections, 2/2 plots, 2 rendered, "*) ;;
*)
  echo "FAIL: expected 'selfcheck: ok' with 2 kernel sections and 2 rendered plots"
  exit 1
  ;;
esac
# The samples the browser counted are those the results carry (not zero).
case "$verdict" in
*", 0/0 samples)") echo "FAIL: no samples drawn"; exit 1 ;;
esac

# 3. A screenshot for people (build dir: WORK-DIR/report.png).
browse --screenshot="$work/report.png" --window-size=1280,2600 --hide-scrollbars \
  "file://$work/report.html" > /dev/null || true
if [ ! -s "$work/report.png" ]; then
  echo "FAIL: no screenshot"
  exit 1
fi
echo "PASS: report rendered in $("$chromium" --version 2>/dev/null || echo chromium); screenshot $work/report.png"
