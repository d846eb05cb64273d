#!/bin/sh
# A stand-in for nvcc in gpu-verify.test: the "program" it builds prints a
# checksum and a time chosen by marks in the source (FAIL-MARK: no build,
# WRONG-MARK: another checksum, FAST-MARK: half the time, HANG-MARK: sleeps).
src=""; exe=""
while [ $# -gt 0 ]; do
  case "$1" in -o) exe=$2; shift 2 ;; -I) shift 2 ;; *.cu) src=$1; shift ;; *) shift ;; esac
done
if grep -q FAIL-MARK "$src"; then echo "$src(1): error: FAIL-MARK" >&2; exit 2; fi
sum=1.000000000000000e+00; ms=2.0; pause=0
grep -q WRONG-MARK "$src" && sum=1.100000000000000e+00
grep -q FAST-MARK "$src" && ms=1.0
grep -q HANG-MARK "$src" && pause=30
printf '#!/bin/sh\nsleep %s\necho checksum=%s\necho gpu_ms=%s\n' "$pause" "$sum" "$ms" > "$exe"
chmod +x "$exe"
