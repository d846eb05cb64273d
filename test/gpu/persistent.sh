#!/bin/sh
# persistent on the GPU (issue 18 item 1): its rewrites against the originals.
#   persistent.sh derive CUDAL1-OPT SOURCE_ROOT OUTDIR
#     where cudal1-opt is built: writes the variants (and the originals) to
#     OUTDIR, for a GPU machine without LLVM (.device-carry/persistent).
#   persistent.sh check CUDAL1-OPT|"" NVCC SOURCE_ROOT WORKDIR
#     derives the variants with CUDAL1-OPT when it is given, else takes them
#     from $CUDAL1_PERSISTENT_VARIANTS (default SOURCE_ROOT/.device-carry/
#     persistent); exit 77 (skipped) without them or without a GPU.
# The variants: the five host loops of test/Passes/Inputs/persistent-kernels.cu
# (driven by persistent-main.cu) in each form, and the corpus's launch-bound
# programs in their legal forms. Each is built with nvcc and run forced
# (CUDAL1_PERSISTENT=always: the persistent kernel runs whatever the cost
# rule says) and by the cost rule, the corpus programs at --quick and default
# sizes; every checksum line must equal the original's to a relative 1e-5
# (equal ones are counted as exact), and a forced run must have launched the
# persistent kernel once per rewritten loop (CUDAL1_PERSISTENT_LOG). A table
# of times (the loops' own events, the programs' gpu_ms) is printed.
set -u
mode=$1
loops_plan_grid='@loop#0: persistent(form=grid); @loop#1: persistent(form=grid); @loop#2: persistent(form=grid); @loop#3: persistent(form=grid); @loop#4: persistent(form=grid)'
loops_plan_block='@loop#0: persistent(form=block); @loop#1: persistent(form=block); @loop#2: persistent(form=block); @loop#3: persistent(form=block); @loop#4: persistent(form=block)'
loops_plan_owner='@loop#1: persistent(form=owner)'
# program form... (loop #3 of each: its timed host loop)
corpus="hpc_heat1d_small:grid,block l3_rnn_tanh:grid,block l3_gru_sequence:grid,block hpc_wave2d:grid l1_daxpy:owner,grid"

derive() { # OPT ROOT OUT
  opt=$1 root=$2 out=$3
  mkdir -p "$out" || return 1
  cp "$root/test/Passes/Inputs/persistent-kernels.cu" "$out/loops.original.cu"
  for f in grid block owner; do
    eval plan=\$loops_plan_$f
    "$opt" "$root/test/Passes/Inputs/persistent-kernels.cu" --plan "$plan" -o "$out/loops.$f.cu" \
      || { echo "persistent: FAIL: cannot derive loops.$f"; return 1; }
  done
  for entry in $corpus; do
    p=${entry%%:*}
    cp "$root/bench/corpus/$p.cu" "$out/$p.original.cu"
    for f in $(echo "${entry#*:}" | tr ',' ' '); do
      "$opt" "$root/bench/corpus/$p.cu" --plan "@loop#3: persistent(form=$f)" -o "$out/$p.$f.cu" \
        -- -x cuda --cuda-gpu-arch=sm_90 -I "$root/bench/corpus" \
        || { echo "persistent: FAIL: cannot derive $p.$f"; return 1; }
    done
  done
  echo "persistent: variants written to $out"
}

if [ "$mode" = derive ]; then
  derive "$2" "$3" "$4"
  exit $?
fi
[ "$mode" = check ] || { echo "usage: persistent.sh derive|check ..."; exit 2; }
opt=$2 nvcc=$3 root=$4 work=$5
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "persistent: no GPU here: skipped"; exit 77
fi
rm -rf "$work" && mkdir -p "$work/bin" || exit 1
if [ -n "$opt" ] && [ -x "$opt" ]; then
  derive "$opt" "$root" "$work/src" || exit 1
else
  carried=${CUDAL1_PERSISTENT_VARIANTS:-$root/.device-carry/persistent}
  if [ ! -f "$carried/loops.grid.cu" ]; then
    echo "persistent: no cudal1-opt and no variants at $carried (test/gpu/persistent.sh derive): skipped"
    exit 77
  fi
  cp -r "$carried" "$work/src"
fi
src=$work/src
# Build everything, 8 at a time.
ls "$src" | sed 's/\.cu$//' | xargs -P 8 -I{} sh -c '
  case {} in
    loops.*) "$0" -O3 -arch=sm_90 -std=c++17 -I "$1/src" -DLOOPS="\"$1/src/{}.cu\"" \
               "$2/test/gpu/persistent-main.cu" -o "$1/bin/{}" > "$1/bin/{}.log" 2>&1 ;;
    *) "$0" -O3 -arch=sm_90 -std=c++17 -I "$2/bench/corpus" "$1/src/{}.cu" -o "$1/bin/{}" \
         > "$1/bin/{}.log" 2>&1 ;;
  esac || echo "persistent: FAIL: {} does not build"' "$nvcc" "$work" "$root" | tee "$work/build.txt"
fail=0
[ -s "$work/build.txt" ] && { fail=1; for l in "$work"/bin/*.log; do head -5 "$l"; done; }

# compare NAME ORIGINAL-OUTPUT VARIANT-OUTPUT: checksum lines equal to 1e-5.
compare() {
  awk -v what="$1" '
    FNR == NR { if ($1 != "time" && $1 !~ /^gpu_ms=/ && $1 !~ /^floor:/) want[++n] = $0; next }
    $1 == "time" || $1 ~ /^gpu_ms=/ || $1 ~ /^floor:/ { next }
    { ++m; if ($0 == want[m]) { exact++; next }
      split(want[m], a, /[ =]+/); split($0, b, /[ =]+/); bad = 0
      for (i in a) if (a[i] != b[i]) {
        d = a[i] - b[i]; d = d < 0 ? -d : d; s = a[i] < 0 ? -a[i] : a[i]
        if (a[i] + 0 != a[i] || d > 1e-5 * (s > 1e-30 ? s : 1e-30)) bad = 1 }
      if (bad) { printf "persistent: FAIL: %s: %s, the original %s\n", what, $0, want[m]; failed = 1 }
      else close_++ }
    END { if (m != n) { printf "persistent: FAIL: %s: %d lines, the original %d\n", what, m, n; failed = 1 }
          printf "%s: %d checksum lines, %d exact, %d within 1e-5\n", what, m, exact, close_
          exit failed }' "$2" "$3"
}
ms() { awk '$1 == "time" { t += $3 } $1 ~ /^gpu_ms=/ { split($1, a, "="); t += a[2] } END { printf "%.4f", t }' "$1"; }

printf '%-22s %-6s %-8s %-7s %12s %9s %s\n' program size form mode ms speedup on-device > "$work/table.txt"
for b in "$work"/bin/*.original; do
  [ -x "$b" ] || continue
  p=$(basename "$b" .original)
  for size in default quick; do
    args=""; [ "$size" = quick ] && args=--quick
    [ "$p" = loops ] && [ "$size" = quick ] && continue
    "$b" $args > "$work/$p.$size.original.out" 2>&1 || { echo "persistent: FAIL: $p original exits $?"; fail=1; continue; }
    base=$(ms "$work/$p.$size.original.out")
    printf '%-22s %-6s %-8s %-7s %12s %9s %s\n' "$p" "$size" original - "$base" 1.00 - >> "$work/table.txt"
    for v in "$work"/bin/"$p".*; do
      f=${v##*/$p.}
      case $f in original|*.log) continue ;; esac
      [ -x "$v" ] || continue
      for m in always auto; do
        o="$work/$p.$size.$f.$m"
        env CUDAL1_PERSISTENT=$m CUDAL1_PERSISTENT_LOG=1 "$v" $args > "$o.out" 2> "$o.err" \
          || { echo "persistent: FAIL: $p $f $m exits $?"; cat "$o.err" | head -5; fail=1; continue; }
        compare "$p $size form=$f $m" "$work/$p.$size.original.out" "$o.out" || fail=1
        on=$(grep -c 'on the device' "$o.err")
        want=1
        [ "$p" = loops ] && [ "$f" != owner ] && want=5
        if [ "$m" = always ] && [ "$on" -ne "$want" ]; then
          echo "persistent: FAIL: $p $f forced: $on persistent launches, expected $want"; fail=1
        fi
        t=$(ms "$o.out")
        printf '%-22s %-6s %-8s %-7s %12s %9s %s\n' "$p" "$size" "$f" "$m" "$t" \
          "$(awk -v a="$base" -v b="$t" 'BEGIN { printf "%.2f", b > 0 ? a / b : 0 }')" "$on" >> "$work/table.txt"
      done
    done
  done
done
cat "$work/table.txt"
grep -h 'cudal1 persistent:' "$work"/*.auto.err 2>/dev/null | sort | uniq -c | sed 's/^/  cost rule: /'
[ $fail -eq 0 ] && echo "persistent: every rewrite printed the original's checksums"
exit $fail
