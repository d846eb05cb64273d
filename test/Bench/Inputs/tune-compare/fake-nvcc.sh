#!/bin/sh
# A stand-in nvcc: the "executable" prints the corpus lines; a source with
# the FAST marker reports half the time, one with MOVED another checksum.
src=; exe=
while [ $# -gt 0 ]; do
  case $1 in -o) exe=$2; shift;; *.cu) src=$1;; esac
  shift
done
case $src in *ceilings.cu) printf '#!/bin/sh\necho "bw_gbs=4000 sgemm_gflops=50000 dgemm_gflops=50000"\n' > "$exe"; chmod +x "$exe"; exit 0;; esac
ms=10; sum=1.000000e+03
grep -q FAST "$src" && ms=5
grep -q MOVED "$src" && sum=1.100000e+03
printf '#!/bin/sh\necho "floor: bytes=8000000000 flops=0"\necho "checksum=%s"\necho "gpu_ms=%s"\n' "$sum" "$ms" > "$exe"
chmod +x "$exe"
