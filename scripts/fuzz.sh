#!/usr/bin/env bash
# Runs the parser/checker fuzzer for a fixed time (default 600 s) under ASan/UBSan, seeded with
# the corpus and the malformed tests. Crashing inputs are kept in fuzz/crashes/.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
QVET_FUZZ=1 scripts/setup.sh
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQVET_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target qvet_fuzz_parser
mkdir -p fuzz/corpus-run fuzz/crashes
cp -n corpus/*.hcq tests/malformed/*.hcq examples/*.hcq fuzz/corpus-run/ 2>/dev/null || true
build-fuzz/fuzz/qvet_fuzz_parser fuzz/corpus-run -max_total_time="$secs" -max_len=4096 -timeout=10 \
  -rss_limit_mb=4096 -artifact_prefix=fuzz/crashes/ -print_final_stats=1 2>&1 | tail -n 25
echo "crashing inputs kept: $(ls fuzz/crashes | wc -l)"
