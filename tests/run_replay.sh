#!/usr/bin/env bash
# `qvet run --on sim --compare` on one program: zero soundness violations. A program with a
# predicted deadlock must be refused (exit 1, "never submitted"); one with errors runs with --force.
set -u
qvet=$1 file=$2
out=$("$qvet" run --on sim --compare --force --runs 20 "$file" 2>&1)
rc=$?
if grep -q "a deadlock is never submitted" <<<"$out"; then
  [ $rc = 1 ] || { echo "refused deadlock: want exit 1, got $rc"; echo "$out"; exit 1; }
  "$qvet" check "$file" | grep -q "\[deadlock\]" || { echo "refused, but check reports no deadlock"; exit 1; }
  exit 0
fi
[ $rc = 0 ] || { echo "run --on sim --compare: exit $rc"; echo "$out"; exit 1; }
grep -q " 0 soundness violation(s)" <<<"$out" || { echo "$out"; exit 1; }
