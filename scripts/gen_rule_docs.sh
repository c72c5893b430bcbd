#!/usr/bin/env bash
# Regenerates the example part of docs/rules/RULE.md (everything after "## Example") from
# docs/rules/examples/RULE.hcq and what qvet prints for it, for every rule of core/rules.def.
# Usage: scripts/gen_rule_docs.sh [QVET] [OUTDIR]   (defaults: build/qvet, docs/rules)
set -euo pipefail
cd "$(dirname "$0")/.."
qvet=${1:-build/qvet}
out=${2:-docs/rules}
mkdir -p "$out"
for id in $(sed -n 's/^RULE([A-Za-z]*, "\([a-z-]*\)".*/\1/p' core/rules.def); do
  page=docs/rules/$id.md ex=docs/rules/examples/$id.hcq
  [ -f "$page" ] && [ -f "$ex" ] || { echo "rule $id has no page ($page) or example ($ex)" >&2; exit 1; }
  {
    sed '/^## Example$/q' "$page"
    echo
    echo '```'
    cat "$ex"
    echo '```'
    echo
    echo "\`qvet check $ex\`:"
    echo
    echo '```'
    "$qvet" check "$ex" 2>&1 || true
    echo '```'
  } >"$out/$id.md.tmp"
  mv "$out/$id.md.tmp" "$out/$id.md"
done
