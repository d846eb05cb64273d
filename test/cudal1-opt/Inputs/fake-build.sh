#!/bin/sh
# Stands in for "nvcc + a GPU" in the tuning tests: the program it builds
# reports a GPU time and a checksum that depend only on the plan named in
# the source's first line (cudal1-opt writes it there). warp-reduce makes it
# 3x faster, restrict 1.25x; launch-config(block=1024) makes it wrong, and
# block=64 makes it crash. The original has no plan line.
src=$1
exe=$2
plan=$(head -n 1 "$src" | grep 'cudal1-opt plan' || true)
ms=60
sum=1.250000
case "$plan" in *warp-reduce*) ms=20 ;; esac
case "$plan" in *restrict*) ms=$((ms * 4 / 5)) ;; esac
case "$plan" in *block=1024*) sum=1.375000 ;; esac
crash=
case "$plan" in *block=64*) crash='kill -SEGV $$' ;; esac
printf '#!/bin/sh\n%s\necho checksum=%s\necho gpu_ms=%s\n' "$crash" "$sum" "$ms" > "$exe"
chmod +x "$exe"
