#!/usr/bin/env bash
# Usage: run_malformed.sh QVET FILE — FILE's first line is `# error-line: N` (a JSON file's first
# line holds `"error-line": N`, a key qvet ignores); qvet check must exit 2 and report FILE:N: on
# stderr, and never crash.
set -u
qvet=$1 file=$2
# A program that submits a binary stream may instead say `# error-at: STREAM:N` (N the 1-based dword
# number in STREAM, a file next to FILE; docs/encoded.md).
want=$(sed -n -e '1s/^# error-line: *\([0-9]*\).*/\1/p' -e '1s/.*"error-line": *\([0-9]*\).*/\1/p' "$file")
where="$file:$want:"
at=$(sed -n -e '1s/^# error-at: *\([A-Za-z0-9_.]*:[0-9]*\).*/\1/p' "$file")
[ -n "$at" ] && where="$(dirname "$file")/$at:" want=$at
[ -n "$want" ] || { echo "$file: no '# error-line: N' (or \"error-line\": N, or '# error-at: STREAM:N') on line 1"; exit 1; }
err=$("$qvet" check "$file" 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] || { echo "$file: exit $rc, want 2"; echo "$err"; exit 1; }
grep -qF "$where" <<<"$err" || { echo "$file: error not at $where"; echo "$err"; exit 1; }
echo "ok: $(head -n1 <<<"$err")"
