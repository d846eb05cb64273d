#!/bin/sh
# A stand-in cudal1-opt --tune: the "tuned" output of configuration
# `--judge auto` runs twice as fast (FAST marker), `--judge program` is the
# original; it prints the summary lines bench/tune/compare reads.
src=$1; shift
out=; judge=; strategy=; strategies=0; budget=; budgets=0; transforms=
while [ $# -gt 0 ]; do
  case $1 in -o) out=$2; shift;; --judge) judge=$2; shift;;
    --strategy) strategy=$2; strategies=$((strategies + 1)); shift;;
    --budget) budget=$2; budgets=$((budgets + 1)); shift;;
    --transforms=*) transforms=${1#--transforms=};; --) break;; esac
  shift
done
# What a configuration passed: the lit test reads it from the log.
echo "fake-opt: judge=$judge transforms=${transforms:-all} strategy=$strategy budget=$budget"
# The strategy is always named, once (cudal1-opt refuses an option given
# twice): the heuristic unless the configuration names another.
[ "$strategies" = 1 ] || { echo "fake-opt: one --strategy expected, got $strategies" >&2; exit 3; }
[ "$budgets" = 1 ] || { echo "fake-opt: one --budget expected, got $budgets" >&2; exit 3; }
if [ "$judge" = auto ]; then
  { echo "// FAST"; grep -q MOVE-WHEN-TUNED "$src" && echo "// MOVED"; cat "$src"; } > "$out"
  echo "variants: ok=30 refused=2 wrong=2"
  echo "result: 2.000x [1.900, 2.100] (whole program) with '@k: warp-reduce'"
  echo "reproducibility check: 2.010x [1.990, 2.020], original drift 0.0%, checked interval [1.990, 2.020]: passed"
else
  cp "$src" "$out"
  echo "variants: ok=12"
  echo "result: no variant was faster; the original is kept"
fi
