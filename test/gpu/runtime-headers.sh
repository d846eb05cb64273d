#!/bin/sh
# Each header of passes/runtime and lib/Rewrite/runtime compiles alone with
# nvcc (issue 16 item 5; test/Rewrite/runtime-headers.test does it with clang).
# Usage: runtime-headers.sh NVCC SOURCE_ROOT WORKDIR
nvcc=$1 root=$2 work=$3
mkdir -p "$work" || exit 1
fail=0
for h in "$root"/passes/runtime/*.cuh "$root"/lib/Rewrite/runtime/*.cuh; do
  name=$(basename "$h" .cuh)
  printf '#include "%s"\n' "$h" > "$work/$name.cu"
  if "$nvcc" -std=c++17 -arch=sm_90 -Werror all-warnings -c "$work/$name.cu" -o "$work/$name.o" \
      > "$work/$name.log" 2>&1; then
    echo "[ ok ] $name.cuh"
  else
    echo "[FAIL] $name.cuh"; sed 's/^/    /' "$work/$name.log" | head -20; fail=1
  fi
done
exit $fail
