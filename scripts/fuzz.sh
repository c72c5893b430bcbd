#!/usr/bin/env bash
# Runs a fuzzer for a fixed time (default 600 s) under ASan/UBSan. Crashing inputs are kept in
# fuzz/crashes/.
#   hcq (default): any bytes through the loader and every checker, seeded with the corpus and the
#                  malformed tests;
#   json:          JSON programs (fuzz/fuzz_json.cpp), seeded with the corpus printed as JSON and
#                  the malformed JSON tests, with a dictionary of the format's keys;
#   pm4:           any bytes as an AMD PM4 stream (fuzz/fuzz_pm4.cpp), seeded with the encoded
#                  corpus's streams and the malformed ones;
#   sdma:          any bytes as an AMD SDMA stream (fuzz/fuzz_sdma.cpp), seeded likewise;
#   nv:            any bytes as an NVIDIA pushbuffer and as a GPFIFO (fuzz/fuzz_nv.cpp), the input also a
#                  region holding QMDs and segments, seeded with the encoded corpus's pushbuffers, GPFIFOs
#                  and regions and the malformed ones.
# Usage: scripts/fuzz.sh [SECONDS] [hcq|json|pm4|sdma|nv]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
kind=${2:-hcq}
case $kind in
  hcq) target=qvet_fuzz_parser extra=() ;;
  json) target=qvet_fuzz_json extra=(-dict=fuzz/json.dict) ;;
  pm4) target=qvet_fuzz_pm4 extra=() ;;
  sdma) target=qvet_fuzz_sdma extra=() ;;
  nv) target=qvet_fuzz_nv extra=() ;;
  *) echo "usage: scripts/fuzz.sh [SECONDS] [hcq|json|pm4|sdma|nv]" >&2; exit 2 ;;
esac
QVET_FUZZ=1 scripts/setup.sh
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQVET_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "$target" qvet
seeds=fuzz/corpus-run
[ "$kind" = json ] && seeds=fuzz/corpus-json
[ "$kind" = pm4 ] && seeds=fuzz/corpus-pm4
[ "$kind" = sdma ] && seeds=fuzz/corpus-sdma
[ "$kind" = nv ] && seeds=fuzz/corpus-nv
mkdir -p "$seeds" fuzz/crashes
if [ "$kind" = json ]; then
  for f in corpus/*.hcq examples/*.hcq; do
    out=$seeds/$(basename "$f" .hcq).json
    [ -e "$out" ] || build-fuzz/qvet print --format json "$f" >"$out"
  done
  cp -n tests/malformed/*.json "$seeds"/ 2>/dev/null || true
elif [ "$kind" = pm4 ]; then
  cp -n corpus/encoded/*.pm4 corpus/encoded/*.bin tests/malformed/*.pm4 "$seeds"/ 2>/dev/null || true
elif [ "$kind" = sdma ]; then
  cp -n corpus/encoded/*.sdma corpus/encoded/sdma_*.bin tests/malformed/*.sdma "$seeds"/ 2>/dev/null || true
elif [ "$kind" = nv ]; then
  cp -n corpus/encoded/*.nv corpus/encoded/*.gpfifo corpus/encoded/nv_*.bin tests/malformed/*.nv tests/malformed/nv_*.bin "$seeds"/ 2>/dev/null || true
else
  cp -n corpus/*.hcq tests/malformed/*.hcq examples/*.hcq "$seeds"/ 2>/dev/null || true
fi
# Fuzz from an empty scratch directory: a JSON `source` field names files relative to it.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
root=$PWD
(cd "$scratch" && "$root/build-fuzz/fuzz/$target" "$root/$seeds" "${extra[@]/#-dict=/-dict=$root/}" \
  -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$root/fuzz/crashes/" \
  -print_final_stats=1 2>&1 | tail -n 25)
echo "crashing inputs kept: $(ls fuzz/crashes | wc -l)"
