#!/bin/sh
# fake-build.sh's program (a time and a checksum from the plan in the
# source's first line: restrict 1.25x, warp-reduce 3x) that slows down run by
# run: each run reads the counter file COUNTER, writes it back one higher and
# reports 1.03^runs times its time, so that within one interleaved
# measurement the original's last third of rounds is far slower than its
# first third. Usage: fake-build-drift.sh SRC EXE COUNTER
src=$1
exe=$2
counter=$3
plan=$(head -n 1 "$src" | grep 'cudal1-opt plan' || true)
ms=60
case "$plan" in *warp-reduce*) ms=20 ;; esac
case "$plan" in *restrict*) ms=48 ;; esac
cat > "$exe" <<SCRIPT
#!/bin/sh
n=\$(cat '$counter' 2>/dev/null || echo 0)
echo \$((n + 1)) > '$counter'
echo checksum=1.250000
awk -v n="\$n" 'BEGIN { printf "gpu_ms=%.4f\\n", $ms * exp(n * log(1.03)) }'
SCRIPT
chmod +x "$exe"
