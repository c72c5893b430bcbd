#!/usr/bin/env bash
# Whether two qvet builds give the same output: `qvet check F` (text and exit code) per program.
# For engine changes that must not change a verdict (docs/architecture.md, "A faster path for the wait rule").
#
#   scripts/same_output.sh OLD_QVET NEW_QVET FILE_OR_DIR...   (a directory: its *.hcq, recursively)
#
# Prints each program whose output differs and a summary line; exits 1 if any differs.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OLD_QVET NEW_QVET FILE_OR_DIR..." >&2; exit 2; }
old=$1 new=$2; shift 2
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for p in "$@"; do
  if [ -d "$p" ]; then find "$p" -name '*.hcq' -type f; else echo "$p"; fi
done | sort >"$list"
one() {
  local a b
  a=$("$1" check "$3" 2>&1; echo "exit $?")
  b=$("$2" check "$3" 2>&1; echo "exit $?")
  [ "$a" = "$b" ] && echo same || echo "differs: $3"
}
export -f one
out=$(xargs -d '\n' -P "$(nproc)" -I{} bash -c 'one "$@"' _ "$old" "$new" {} <"$list")
grep '^differs' <<<"$out" || true
total=$(wc -l <"$list") differ=$(grep -c '^differs' <<<"$out" || true)
echo "$((total - differ)) of $total programs: same output"
[ "$differ" = 0 ]
