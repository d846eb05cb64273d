#!/bin/sh
# cudal1-eval's command line on bad input: clear messages, non-zero exits.
# Usage: eval-cli.sh CUDAL1_EVAL
set -u
eval=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # expect CODE PATTERN -- cmd...
  code=$1; pat=$2; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ] || ! printf '%s' "$out" | grep -q -- "$pat"; then
    echo "FAIL: $* -> exit $rc, output: $out (wanted exit $code and '$pat')"
    fail=1
  else
    echo "ok: $*"
  fi
}
expect 0 "usage: cudal1-eval BUNDLE" -- "$eval" --help
expect 0 "bundle format 1" -- "$eval" --version
expect 1 "no bundle given" -- "$eval"
expect 1 "unknown option --frob" -- "$eval" --frob
expect 1 "not a number" -- "$eval" x --jobs many
expect 1 "not a bundle: cannot open" -- "$eval" "$tmp/none"
mkdir "$tmp/b"
printf 'cudal1-bundle 1\nkernel-key k\nargs f32*\ncapture c.capture\noriginal o.cu\nvariant v o.cu bogus=1\n' > "$tmp/b/manifest.txt"
expect 1 "manifest.txt:6: unknown key 'bogus'" -- "$eval" "$tmp/b"
printf 'cudal1-bundle 1\nkernel-key k\nargs f32*\ncapture c.capture\noriginal o.cu\n' > "$tmp/b/manifest.txt"
expect 1 "'c.capture' does not exist" -- "$eval" "$tmp/b"
printf 'extern "C" __global__ void k(float*){}\n' > "$tmp/b/o.cu"
printf 'CUDAL1CPgarbage-garbage-garbage-garbage' > "$tmp/b/c.capture"
expect 2 "c.capture: capture format version" -- "$eval" "$tmp/b"
expect 1 "--hold-max: 'soon' is not a number" -- "$eval" --hold-context --hold-max soon
# With a GPU the holder ends at once on a closed input; without one it says why.
if "$eval" --probe > /dev/null 2>&1; then
  expect 0 "holding " -- "$eval" --hold-context < /dev/null
else
  expect 2 "cannot hold a context on GPU 0" -- "$eval" --hold-context < /dev/null
fi
exit $fail
