#!/usr/bin/env bash
# Usage: run_malformed.sh QVET FILE — FILE's first line is `# error-line: N` (a JSON file's first
# line holds `"error-line": N`, a key qvet ignores); qvet check must exit 2 and report FILE:N: on
# stderr, and never crash.
set -u
qvet=$1 file=$2
want=$(sed -n -e '1s/^# error-line: *\([0-9]*\).*/\1/p' -e '1s/.*"error-line": *\([0-9]*\).*/\1/p' "$file")
[ -n "$want" ] || { echo "$file: no '# error-line: N' (or \"error-line\": N) on line 1"; exit 1; }
err=$("$qvet" check "$file" 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] || { echo "$file: exit $rc, want 2"; echo "$err"; exit 1; }
grep -qF "$file:$want:" <<<"$err" || { echo "$file: error not at line $want:"; echo "$err"; exit 1; }
echo "ok: $(head -n1 <<<"$err")"
