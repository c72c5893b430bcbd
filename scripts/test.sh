#!/usr/bin/env bash
# The full test suite: build (warnings are errors), unit tests and corpus through CTest, then the
# whole suite again in an ASan/UBSan build compiled file by file (no unity build: each source
# must compile on its own includes).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQVET_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DQVET_WERROR=ON -DQVET_SANITIZE=ON -DQVET_UNITY_BUILD=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest --output-on-failure -j"$jobs")
