#!/bin/sh
# Stands in for "nvcc + a GPU" in test/cudal1-opt/apply-identity.test: the
# program it builds is faster when the plan drops a synchronization (so the
# tuner records a host plan), with the same checksum either way.
src=$1
exe=$2
plan=$(head -n 1 "$src" | grep 'cudal1-opt plan' || true)
ms=60
case "$plan" in *drop-sync*) ms=40 ;; esac
printf '#!/bin/sh\necho checksum=1.0\necho gpu_ms=%s\n' "$ms" > "$exe"
chmod +x "$exe"
