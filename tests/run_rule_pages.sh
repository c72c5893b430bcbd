#!/usr/bin/env bash
# Every rule of core/rules.def has a page (docs/rules/RULE.md) with an example that qvet checks as
# the page says, the pages' outputs are what qvet prints today, `qvet help RULE` prints the page,
# and SARIF's rules point at the pages.
set -eu
qvet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scripts/gen_rule_docs.sh "$qvet" "$tmp"
for id in $(sed -n 's/^RULE([A-Za-z]*, "\([a-z-]*\)".*/\1/p' core/rules.def); do
  diff -u "docs/rules/$id.md" "$tmp/$id.md" || { echo "docs/rules/$id.md is stale: run scripts/gen_rule_docs.sh"; exit 1; }
  "$qvet" check --expect "docs/rules/examples/$id.hcq" >/dev/null || { echo "docs/rules/examples/$id.hcq: not as its expect line says"; exit 1; }
  "$qvet" help "$id" | cmp -s - "docs/rules/$id.md" || { echo "qvet help $id: not the page (rebuild after editing it)"; exit 1; }
done
set +e
"$qvet" check --format sarif "docs/rules/examples/race.hcq" >"$tmp/s.json"
set -e
python3 - "$tmp/s.json" <<'PY'
import json, sys
rules = json.load(open(sys.argv[1]))["runs"][0]["tool"]["driver"]["rules"]
for r in rules:
    assert r["helpUri"] == "docs/rules/" + r["id"] + ".md", r
    assert r["help"]["text"] and "\n" not in r["help"]["text"], r
PY
echo "rule pages: ok"
