#!/bin/sh
# Stands in for `cudal1-eval --worker ...` in EvaluatorTest (no GPU needed):
# its behaviour per variant id exercises the parent's handling of reports,
# crashes, hangs and timing samples.
mode=""; work=""; ids=""; limit=0
while [ $# -gt 0 ]; do
  case "$1" in
    --worker) mode=$2; shift ;;
    --work) work=$2; shift ;;
    --id) ids="$ids $2"; shift ;;
    --candidate-timeout) limit=$2; shift ;;
  esac
  shift
done
# verify: the candidates in order, stopping after the first that is not ok,
# as lib/Eval/Cuda/Worker.cpp does.
if [ "$mode" = verify ]; then
  for id in $ids; do
    case "$id" in
      hang)  # the worker's watchdog: the report, then exit 4
        sleep "$limit"
        printf 'outcome timeout\ndetail killed after the time limit\n' > "$work/$id.verify"; exit 4 ;;
      segv) kill -SEGV $$ ;;
      illegal) printf 'outcome crash\ngpu Fake GPU\ndetail launch 0 run 0: kernel: CUDA_ERROR_ILLEGAL_ADDRESS\n' > "$work/$id.verify"; exit 3 ;;
      wrong) printf 'outcome wrong\nmode double-reference\ndetail 3 elements outside\nmismatch launch 0 run 0 arg 2 [1]: expected 1, got 2\n' > "$work/$id.verify"; exit 0 ;;
      *) printf 'outcome ok\ngpu Fake GPU\nmode double-reference\n' > "$work/$id.verify" ;;
    esac
    echo "$id" >> "$work/workers.log"
  done
  exit 0
fi
if [ "$mode" = time ]; then
  case " $ids " in
    *" boom "*)
      printf 'gpu Fake GPU\ncrashed boom CUDA_ERROR_LAUNCH_FAILED\n' > "$work/timing.txt"
      exit 3 ;;
  esac
  {
    echo "gpu Fake GPU"
    echo "rounds 12"
    echo "window-s 0.001"
    for id in $ids; do
      case "$id" in
        original) t=1.0 ;; fast) t=0.5 ;; slow) t=2.0 ;; *) t=1.0 ;;
      esac
      s=""; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do s="$s $t"; done
      echo "samples $id$s"
      echo "samples-all $id$s"
      if [ "$id" = lazy ]; then echo "revalidate $id wrong"; echo "mismatch $id timed launch 0 arg 2 [0]: expected 1, got nan"; else echo "revalidate $id ok"; fi
    done
  } > "$work/timing.txt.new"
  mv "$work/timing.txt.new" "$work/timing.txt"
  exit 0
fi
exit 2
