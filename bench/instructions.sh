#!/usr/bin/env bash
# Instructions per command of `qvet check` on the stress shapes at 10^4 and 10^5 commands, counted
# by valgrind (callgrind): deterministic, unlike time on a shared machine, so it tells work that
# grows with the program from caches that stop fitting. Not a test; about 20 minutes for every
# shape on 2 cores (param-loop and chained-waits take most of it).
# Usage: bench/instructions.sh [SHAPE...]   (default: every shape of bench/run.sh --shapes)
# Needs valgrind (Debian package `valgrind`) and a built build/qvet.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "bench/instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(chained-waits chained-writers chained-known chained-alternating chained-host-waits sliding-reads many-queues param-loop overlap-copies racing-pairs host-refill
                                   crossing-races queue-chain host-chain fan-in timeline-relay handoff handoff-stray handoff-strays handoff-cascade fan-in-relay initial-forced forced-pairs handoff-many-strays gather-pending gather-alternating gather-falling gather-signals fan-in-signals gather-forced gather-forced-host gather-forced-wide gather-forced-chain gather-forced-pairs)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
count() {  # FILE -> instructions (the check's exit status is its findings', not a failure here)
  { valgrind --tool=callgrind --callgrind-out-file=/dev/null build/qvet check "$1" || true; } 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
echo "| shape | 10^4 | 10^5 | growth |"
echo "| --- | ---: | ---: | ---: |"
for s in "${shapes[@]}"; do
  build/qvet gen --shape "$s" --commands 10000 -o "$dir/a.hcq"
  build/qvet gen --shape "$s" --commands 100000 -o "$dir/b.hcq"
  a=$(count "$dir/a.hcq") b=$(count "$dir/b.hcq")
  awk -v s="$s" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %d | %d | %.2fx |\n", s, a / 1e4, b / 1e5, (b / 1e5) / (a / 1e4) }'
done
