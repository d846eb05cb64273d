#!/bin/sh
# Stands in for "nvcc ... -lLIB" in program-bundle-link.test: fails like an
# unresolved cuBLAS symbol when the source's first line names
# `cudal1 link: -lcublas` and the command has no -lcublas; the program it
# builds prints a fixed checksum and GPU time.
src=$1
exe=$2
shift 2
if head -n 1 "$src" | grep -q 'cudal1 link: -lcublas'; then
  case " $* " in *" -lcublas "*) ;; *) echo "undefined reference to cublasSgemm_v2" >&2; exit 1 ;; esac
fi
printf '#!/bin/sh\necho checksum=1.5\necho gpu_ms=10\n' > "$exe"
chmod +x "$exe"
