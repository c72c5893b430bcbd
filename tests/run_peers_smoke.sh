#!/usr/bin/env bash
# Smoke test of the peer comparison (bench/peers, docs/peers.md): the subset's corpus programs
# through qvet and syncval. Skips (77) where the validation layer, lavapipe or glslang is missing.
set -u
sv=${1:-}
[ -n "$sv" ] && [ -x "$sv" ] || { echo "skip: qvet_syncval was not built (no Vulkan headers)"; exit 77; }
out=$("$sv" compare corpus/overlap_*.hcq 2>&1)
rc=$?
[ "$rc" = 4 ] && { echo "$out"; exit 77; }
[ "$rc" = 0 ] || { echo "$out"; exit 1; }
echo "$out"
# Both tools find the plain read-after-write, and agree that the barrier and the host wait order.
for row in "| corpus/overlap_raw_bug.hcq | 11 | 11 |" "| corpus/overlap_raw_fixed.hcq | - | - |" "| corpus/overlap_host_wait_fixed.hcq | - | - |"; do
  grep -qF "$row" <<<"$out" || { echo "missing: $row"; exit 1; }
done
grep -q '^agreement: [0-9]*/10 programs$' <<<"$out" || { echo "want 10 programs compared"; exit 1; }
