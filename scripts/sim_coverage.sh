#!/usr/bin/env bash
# The simulator's coverage over the corpus (docs/simulator.md, "Results"): for every corpus
# program, `qvet sim --compare --runs N --policy P`; prints how many of the corpus's predicted races
# manifested and how many of its predicted lost wakeups hung, each one that did not, and the
# soundness violations. Exits 1 below MIN percent of races or MIN_LOST percent of lost wakeups, or
# on any violation (CTest `sim/coverage` runs it: 95% of races and 90% of lost wakeups within
# 1,000 runs).
# Usage: scripts/sim_coverage.sh [QVET] [RUNS] [POLICY] [MIN] [MIN_LOST]   (default build/qvet 1000 pct,delay 95 90)
set -euo pipefail
cd "$(dirname "$0")/.."
q=${1:-build/qvet} runs=${2:-1000} policy=${3:-pct,delay} min=${4:-95} min_lost=${5:-90}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for f in corpus/*.hcq; do
  "$q" sim --compare --runs "$runs" --policy "$policy" --format json "$f" >"$dir/$(basename "$f" .hcq).json" || true
done
python3 - "$dir" "$min" "$min_lost" <<'PY'
import glob, json, sys
total = manifested = violations = lost = hung = 0
missed = []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    j = json.load(open(f))
    violations += j["soundness_violations"]
    for r in j["races"]:
        total += 1
        if r["manifested"]:
            manifested += 1
        else:
            missed.append(f"{j['file']}:{r['line']} / line {r['related_line']}")
    for l in j.get("lost_wakeups", []):
        lost += 1
        if l["manifested"]:
            hung += 1
        else:
            missed.append(f"lost wakeup {j['file']}:{l['line']}")
print(f"{manifested} of {total} predicted races manifested ({100.0 * manifested / max(total, 1):.1f}%); "
      f"{hung} of {lost} predicted lost wakeups hung ({100.0 * hung / max(lost, 1):.1f}%); {violations} soundness violation(s)")
for m in missed:
    print("  did not manifest:", m)
sys.exit(1 if violations or manifested * 100 < float(sys.argv[2]) * total or hung * 100 < float(sys.argv[3]) * lost else 0)
PY
