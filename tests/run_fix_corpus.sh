#!/usr/bin/env bash
# `qvet fix` on every buggy corpus program: every repair it calls clean must check clean on its
# own, and at least 90% of the programs whose findings are all repairable (races, visibility,
# signal races) must be repaired.
set -u
qvet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repairable=0 repaired=0 other=0 bad=0
for f in corpus/*_bug.hcq; do
  out="$tmp/$(basename "$f")"
  "$qvet" fix -o "$out" "$f" >/dev/null 2>"$tmp/err"; rc=$?
  if grep -q "cannot fix" "$tmp/err"; then other=$((other + 1)); continue; fi
  repairable=$((repairable + 1))
  if [ "$rc" = 0 ]; then
    if "$qvet" check --werror "$out" >/dev/null 2>&1; then repaired=$((repaired + 1)); else echo "BAD: $f: fix said clean, check disagrees"; bad=1; fi
  else
    echo "not repaired: $f"; sed 's/^/  /' "$tmp/err" | head -5
  fi
done
echo "fix: repaired $repaired of $repairable repairable buggy corpus programs ($other need a person)"
[ "$bad" = 0 ] && [ $((repaired * 10)) -ge $((repairable * 9)) ]
