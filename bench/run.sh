#!/usr/bin/env bash
# qvet benchmark suite (not a test): parse throughput, check throughput per rule family and in
# total, peak memory per command, and the naive transitive-closure baseline where it fits.
# Usage: bench/run.sh [MAX_COMMANDS]   (default 1000000; 10000000 needs ~10 GB and a few minutes)
#        bench/run.sh --shapes          (only the stress shapes, 10^3 to 10^5 commands; SHAPE_MAX=N to change)
#        bench/run.sh --runtime         (only programs shaped as runtimes build them, bench/runtime_programs.py,
#                                        with and without the engine's indexes; RUNTIME_MAX=N, default 10^5)
set -euo pipefail
cd "$(dirname "$0")/.."
only_shapes=0 only_runtime=0
if [ "${1:-}" = "--shapes" ]; then only_shapes=1; shift; fi
if [ "${1:-}" = "--runtime" ]; then only_runtime=1; shift; fi
max=${1:-1000000}
# The README's build: Release (-O3).
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-rel -j"$(nproc)" --target qvet qvet_bench_naive >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
q=build-rel/qvet
# measure FILE [qvet args...] -> "parse_s wall_s engine_s rss_mib" (the best of 3 runs for times)
measure() {
  local best=""
  for _ in 1 2 3; do
    local r
    r=$(measure1 "$@")
    best=$(awk -v a="$best" -v b="$r" 'BEGIN { if (a == "") { print b; exit }
      split(a, x, " "); split(b, y, " "); for (i = 1; i <= 3; i++) if (y[i] < x[i]) x[i] = y[i];
      print x[1], x[2], x[3], (y[4] > x[4] ? y[4] : x[4]) }')
  done
  echo "$best"
}
measure1() {
  local f=$1; shift
  /usr/bin/time -f "wall %e" "$q" check --stats "$@" "$f" 2>&1 >/dev/null | awk '
    /stats: parse/ { for (i = 1; i <= NF; i++) if ($i == "parse") p = $(i + 1) }
    /engine\+checkers/ { for (i = 1; i <= NF; i++) if ($i == "engine+checkers") e = $(i + 1) }
    /load/ { for (i = 1; i <= NF; i++) { if ($i == "load") l = $(i + 1); if ($i == "RSS") r = $(i + 1) } }
    /^wall/ { w = $2 }
    END { if (p == "") p = l; print p, w, e, r }'
}
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
# Programs as runtimes build them: the indexes stay where they pay on these (docs/performance.md).
if [ "$only_runtime" = 1 ]; then
  echo
  echo "| program | commands | indexed s (all rules) | plain s (all rules) | indexed engine alone s | peak MiB (indexed) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  for prog in graph-replay transfers; do
    n=1000
    while [ "$n" -le "${RUNTIME_MAX:-100000}" ]; do
      f=$dir/$prog$n.hcq
      python3 bench/runtime_programs.py "$prog" "$n" >"$f"
      cmds=$("$q" check --stats "$f" 2>&1 >/dev/null | awk '/commands,/ { print $2 }')
      read -r _ ci _ r < <(measure "$f")
      read -r _ cp _ _ < <(measure "$f" --engine plain)
      read -r _ ce _ _ < <(measure "$f" --rules none)
      echo "| $prog | $cmds | $ci | $cp | $ce | $r |"
      n=$((n * 10))
    done
  done
  exit 0
fi
if [ "$only_shapes" = 0 ]; then
echo
echo "| commands | file MB | parse s | parse MB/s | parse cmds/s | check s (all rules, end to end, wall) | check cmds/s | peak MiB | bytes/cmd | naive closure s | naive MiB |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
n=1000
while [ "$n" -le "$max" ]; do
  f=$dir/g$n.hcq
  "$q" gen --devices 8 --queues-per-device 3 --commands "$n" --seed 1 -o "$f"
  mb=$(awk -v b="$(wc -c <"$f")" 'BEGIN { printf "%.1f", b / 1e6 }')
  read -r l c e r < <(measure "$f")
  naive="-"; nmib="-"
  if [ "$n" -le 30000 ]; then
    out=$(build-rel/qvet_bench_naive "$f")
    naive=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "closure") print $(i + 1) }' <<<"$out")
    nmib=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "MiB") print $(i - 1) }' <<<"$out")
  fi
  awk -v n="$n" -v mb="$mb" -v l="$l" -v c="$c" -v r="$r" -v nv="$naive" -v nm="$nmib" 'BEGIN {
    if (l <= 0) l = 0.0005; if (c <= 0) c = 0.001;
    printf "| %d | %s | %.3f | %.0f | %.2e | %.3f | %.2e | %d | %.0f | %s | %s |\n",
      n, mb, l, mb / l, n / l, c, n / c, r, r * 1048576 / n, nv, nm }'
  n=$((n * 10))
done
echo
echo "Per rule family at the largest size (engine alone, then engine + one family; seconds):"
f=$dir/g$((n / 10)).hcq
read -r _ _ base _ < <(measure "$f" --rules none)
echo "| rules | engine+checkers s | family alone s |"
echo "| --- | ---: | ---: |"
echo "| none (ordering engine) | $base | - |"
for r in race deadlock use-after-free free-in-flight peer-access value-width engine visibility signal-race stale-wait redundant-wait; do
  read -r _ _ e _ < <(measure "$f" --rules "$r")
  awk -v r="$r" -v e="$e" -v b="$base" 'BEGIN { d = e - b; if (d < 0) d = 0; printf "| %s | %.3f | %.3f |\n", r, e, d }'
done

fi

# Shapes that stress one cost each (qvet gen --shape; docs/performance.md): the cost per command
# may not grow by more than 1.5x from 10^4 to 10^5 commands. `engine` is the ordering engine
# alone (--rules none), `all` every rule.
echo
echo "Shapes (seconds and peak MiB; per command: microseconds):"
echo "| shape | commands | all rules s | us/cmd | engine alone s | us/cmd | peak MiB |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
shape_max=${SHAPE_MAX:-100000}
for shape in chained-waits chained-writers chained-known chained-alternating chained-host-waits sliding-reads many-queues param-loop overlap-copies racing-pairs host-refill crossing-races queue-chain host-chain fan-in timeline-relay timeline-turns handoff handoff-stray handoff-strays handoff-cascade fan-in-relay initial-forced forced-pairs handoff-many-strays gather-pending gather-alternating gather-falling gather-signals fan-in-signals gather-forced gather-forced-host gather-forced-wide gather-forced-chain gather-forced-pairs; do
  n=1000
  while [ "$n" -le "$shape_max" ]; do
    f=$dir/$shape$n.hcq
    "$q" gen --shape "$shape" --commands "$n" -o "$f"
    read -r _ c _ r < <(measure1 "$f")
    read -r _ ce _ _ < <(measure1 "$f" --rules none)
    awk -v s="$shape" -v n="$n" -v c="$c" -v e="$ce" -v r="$r" 'BEGIN {
      printf "| %s | %d | %.3f | %.1f | %.3f | %.1f | %d |\n", s, n, c, c * 1e6 / n, e, e * 1e6 / n, r }'
    n=$((n * 10))
  done
done
