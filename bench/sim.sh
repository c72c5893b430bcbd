#!/usr/bin/env bash
# Simulator benchmark (issue 11; not a test). Targets: one run of the 10^6-command generated
# program in at most 2 s; 1,000 runs of a 200-command program in at most 2 s. Prints
# `qvet sim --stats` (the simulate phase is the figure; loading and elaboration are apart).
# Usage: bench/sim.sh [QVET]   (default: build-rel/qvet, built Release like bench/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
q=${1:-}
if [ -z "$q" ]; then
  cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-rel -j"$(nproc)" --target qvet >/dev/null
  q=build-rel/qvet
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$q" gen --devices 8 --queues-per-device 3 --commands 1000000 --seed 1 >"$dir/big.hcq"
"$q" gen --devices 2 --queues-per-device 2 --commands 200 --seed 1 >"$dir/small.hcq"
for p in random pct; do
  echo "1 run, 10^6 commands, $p:"
  "$q" sim --runs 1 --policy "$p" --stats "$dir/big.hcq" 2>&1 >/dev/null | grep stats
  echo "1000 runs, 200 commands, $p:"
  "$q" sim --runs 1000 --policy "$p" --stats "$dir/small.hcq" 2>&1 >/dev/null | grep stats
done
echo "1000 runs, 200 commands, delay:"
"$q" sim --runs 1000 --policy delay --stats "$dir/small.hcq" 2>&1 >/dev/null | grep stats
