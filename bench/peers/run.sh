#!/usr/bin/env bash
# qvet and its peer, Vulkan synchronization validation (syncval), on the same programs
# (docs/peers.md). Not a test. Needs `scripts/setup.sh --peers` (Vulkan loader and headers,
# lavapipe, the validation layer, glslang).
#   bench/peers/run.sh          300 random programs + the corpus; speed at 10^3, 10^4, 10^5 commands
#   bench/peers/run.sh --quick  40 random programs + the corpus; speed at 10^3, 10^4 (a smoke run)
# Ends with `agreement: A/B programs` and `speed: qvet is R x faster than syncval at N commands`.
set -euo pipefail
cd "$(dirname "$0")/../.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-rel -j"$(nproc)" --target qvet >/dev/null
if ! cmake --build build-rel -j"$(nproc)" --target qvet_syncval >/dev/null 2>&1; then
  echo "skip: the Vulkan loader or headers are missing (scripts/setup.sh --peers)"
  exit 4
fi
sv=build-rel/qvet_syncval
q=build-rel/qvet
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(dpkg-query -W -f='vulkan-validationlayers ${Version}, ' vulkan-validationlayers 2>/dev/null)$(dpkg-query -W -f='mesa-vulkan-drivers ${Version}' mesa-vulkan-drivers 2>/dev/null)"
echo
random=300
[ "$quick" = 1 ] && random=40
echo "## Verdicts: qvet's races and syncval's hazards (the corpus programs in the subset, then $random random ones of 40 commands)"
echo
set +e
"$sv" compare --random "$random" --seed 1 --commands 40 corpus/*.hcq >"$dir/verdicts.txt"
rc=$?
set -e
if [ "$rc" = 4 ]; then cat "$dir/verdicts.txt"; exit 4; fi
[ "$rc" = 0 ] || { cat "$dir/verdicts.txt"; exit "$rc"; }
grep -v '^agreement:' "$dir/verdicts.txt"
echo
echo "## Speed: syncval's validation time (record + submit + wait with the layer, minus without; best of 5, the runs taking turns) against \`qvet check\` (wall; best of 3)"
echo
echo "| commands | qvet check s | syncval s | (Vulkan without the layer s) | qvet us/cmd | syncval us/cmd | qvet faster by |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
sizes="1000 10000 100000"
[ "$quick" = 1 ] && sizes="1000 10000"
last=""
for n in $sizes; do
  f=$dir/speed$n.hcq
  "$sv" gen --seed 1 --commands "$n" -o "$f"
  best=""
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    "$q" check "$f" >/dev/null || true
    t1=$(date +%s.%N)
    best=$(awk -v a="$best" -v b="$(awk -v x="$t0" -v y="$t1" 'BEGIN { print y - x }')" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  read -r _ without _ with _ syncval _ _ < <("$sv" time "$f")
  ratio=$(awk -v a="$best" -v b="$syncval" 'BEGIN { printf "%.2f", b / a }')
  awk -v n="$n" -v q="$best" -v s="$syncval" -v w="$without" -v r="$ratio" 'BEGIN {
    printf "| %d | %.3f | %.3f | %.3f | %.1f | %.1f | %s x |\n", n, q, s, w, q * 1e6 / n, s * 1e6 / n, r }'
  last="$n $ratio"
done
echo
grep '^agreement:' "$dir/verdicts.txt"
read -r n ratio <<<"$last"
echo "speed: qvet is $ratio x faster than syncval at 10^$(( ${#n} - 1 )) commands"
