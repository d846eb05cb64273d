#!/bin/sh
# loop-streams on the GPU (issue 18): its rewrites against the original.
#   loop-streams.sh derive CUDAL1-OPT SOURCE_ROOT OUTDIR
#     where cudal1-opt is built: writes the original and the variants
#     (S = 2 and 4) of test/Passes/Inputs/loop-streams-main.cu to OUTDIR, for
#     a GPU machine without LLVM (.device-carry/loop-streams).
#   loop-streams.sh check CUDAL1-OPT|"" NVCC SOURCE_ROOT WORKDIR
#     derives the variants with CUDAL1-OPT when it is given, else takes them
#     from $CUDAL1_LOOP_STREAMS_VARIANTS (default SOURCE_ROOT/.device-carry/
#     loop-streams); exit 77 (skipped) without them or without a GPU.
# Each is built with nvcc and run three times; every checksum line must equal
# the original's exactly (each element is computed by one thread in a fixed
# order whatever the stream; a missing join shows as a stale sum). The
# first loop's time (its events) is printed.
set -u
mode=$1
plan() { echo "@loop#7: loop-streams(streams=$1); @loop#3: loop-streams(streams=$1); @loop#2: loop-streams(streams=$1)"; }

derive() { # OPT ROOT OUT
  opt=$1 root=$2 out=$3
  mkdir -p "$out" || return 1
  cp "$root/test/Passes/Inputs/loop-streams-main.cu" "$out/original.cu" || return 1
  for s in 2 4; do
    "$opt" "$root/test/Passes/Inputs/loop-streams-main.cu" --plan "$(plan $s)" -o "$out/s$s.cu" \
      || { echo "loop-streams: FAIL: cannot derive s$s"; return 1; }
  done
  echo "loop-streams: variants written to $out"
}

if [ "$mode" = derive ]; then
  derive "$2" "$3" "$4"
  exit $?
fi
[ "$mode" = check ] || { echo "usage: loop-streams.sh derive|check ..."; exit 2; }
opt=$2 nvcc=$3 root=$4 work=$5
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "loop-streams: no GPU here: skipped"; exit 77
fi
rm -rf "$work" && mkdir -p "$work/bin" || exit 1
if [ -n "$opt" ] && [ -x "$opt" ]; then
  derive "$opt" "$root" "$work/src" || exit 1
else
  carried=${CUDAL1_LOOP_STREAMS_VARIANTS:-$root/.device-carry/loop-streams}
  if [ ! -f "$carried/s2.cu" ]; then
    echo "loop-streams: no cudal1-opt and no variants at $carried (test/gpu/loop-streams.sh derive): skipped"
    exit 77
  fi
  cp -r "$carried" "$work/src"
fi
fail=0
for v in original s2 s4; do
  grep -q "cudal1 loop-streams" "$work/src/$v.cu" || [ "$v" = original ] \
    || { echo "loop-streams: FAIL: $v.cu is not rewritten"; fail=1; }
  "$nvcc" -O3 -arch=sm_90 -std=c++17 "$work/src/$v.cu" -o "$work/bin/$v" > "$work/bin/$v.log" 2>&1 \
    || { echo "loop-streams: FAIL: $v does not build"; head -5 "$work/bin/$v.log"; fail=1; }
done
[ $fail = 0 ] || exit 1
for r in 1 2 3; do
  for v in original s2 s4; do
    "$work/bin/$v" > "$work/$v.$r.out" 2>&1 || { echo "loop-streams: FAIL: $v exits $?"; fail=1; continue; }
    grep -v '^time ' "$work/$v.$r.out" > "$work/$v.$r.sums"
    [ -s "$work/$v.$r.sums" ] || { echo "loop-streams: FAIL: $v printed no checksum"; fail=1; }
  done
  for v in s2 s4; do
    if cmp -s "$work/original.$r.sums" "$work/$v.$r.sums"; then
      echo "run $r $v: $(wc -l < "$work/$v.$r.sums") checksum lines equal to the original's"
    else
      echo "loop-streams: FAIL: run $r $v differs from the original:"
      diff "$work/original.$r.sums" "$work/$v.$r.sums" | head -10
      fail=1
    fi
  done
  for v in original s2 s4; do
    printf 'run %s %-8s %s\n' "$r" "$v" "$(grep '^time loop1' "$work/$v.$r.out")"
  done
done
[ $fail = 0 ] && echo "loop-streams: PASS"
exit $fail
