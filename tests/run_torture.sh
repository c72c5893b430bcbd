#!/usr/bin/env bash
# Huge, deep and binary inputs: exit 2 with a located error, within the time limit, no crash.
set -u
qvet=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bash tests/malformed/make_torture.sh "$dir" || exit 1
fail=0
for f in "$dir"/*.hcq; do
  want=$(cat "${f%.hcq}.line")
  err=$(timeout 120 "$qvet" check "$f" 2>&1 >/dev/null); rc=$?
  if [ "$rc" != 2 ] || ! grep -qF "$f:$want:" <<<"$err"; then
    echo "FAIL $f: exit $rc, want 2 at line $want"; head -c 300 <<<"$err"; echo; fail=1
  else
    echo "ok $(basename "$f"): $(head -n1 <<<"$err" | head -c 200)"
  fi
done
exit $fail
