#!/bin/sh
# fake-build.sh for the report tests: the same plan-dependent times and
# verdicts, plus run-to-run noise (from the process id) so that the plots
# show a spread, and a roofline floor line as bench/corpus/common.h prints.
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
cat > "$exe" <<PROGRAM
#!/bin/sh
$crash
echo checksum=$sum
echo 'floor: bytes=6e9 flops=1e9 dtype=f32'
echo gpu_ms=$ms.\$((\$\$ % 10))
PROGRAM
chmod +x "$exe"
