#!/bin/sh
# remap-matches-plan.sh BUNDLE: for each variant of BUNDLE/kernels/manifest.txt
# with a launch remap (launch=), prints "matches: PLAN REMAP" when the remap
# is the one its plan in BUNDLE/plans.tsv gives (launch-config(block=B):
# reshape(B); coarsen(factor=F): divide-x(F)), else "differs: ...".
b=$1
sed -n 's/^variant \([^ ]*\) .* launch=\([^ ]*\).*/\1 \2/p' "$b/kernels/manifest.txt" |
while read -r id remap; do
  plan=$(awk -F '\t' -v id="$id" '$1 == id { print $4 }' "$b/plans.tsv")
  want=$(printf '%s\n' "$plan" | sed -n \
    -e 's/^@[^:]*: launch-config(block=\([0-9x]*\))$/reshape(\1)/p' \
    -e 's/^@[^:]*: coarsen(factor=\([0-9]*\))$/divide-x(\1)/p')
  if [ -n "$want" ] && [ "$want" = "$remap" ]; then
    echo "matches: $plan $remap"
  else
    echo "differs: $id: plan '$plan' wants '$want', the manifest has '$remap'"
  fi
done
