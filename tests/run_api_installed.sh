#!/bin/bash
# libqvet from an installed prefix, as a user gets it: `cmake --install`, then the C example built
# with pkg-config and with CMake's find_package, against libqvet.so and libqvet.a, and the Python
# example, each on a program with a race and on a clean one: the same JSON and exit code as
# `qvet check --format json`.
# usage: tests/run_api_installed.sh BUILD_DIR PYTHON (from the repository root)
set -u
build=$1 py=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
p=$tmp/prefix
cmake --install "$build" --prefix "$p" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
for f in bin/qvet lib/libqvet.so.1 lib/libqvet.a include/qvet/qvet.h lib/pkgconfig/qvet.pc lib/pkgconfig/qvet-static.pc \
         lib/cmake/qvet/qvetConfig.cmake lib/python3/site-packages/qvet/__init__.py; do
  [ -e "$p/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
cc -std=c99 -Wall -Werror examples/api/check_file.c $(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs qvet) \
  -Wl,-rpath,"$p/lib" -o "$tmp/check_pc" || { echo "FAIL: the C example with pkg-config"; exit 1; }
cc -std=c99 -Wall -Werror examples/api/check_file.c $(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs qvet-static) \
  -o "$tmp/check_static_pc" || { echo "FAIL: the C example with pkg-config qvet-static"; exit 1; }
# libqvet.a's only global symbols are the header's (GNU unique symbols of inline statics aside).
other=$(nm -g --defined-only "$p/lib/libqvet.a" 2>/dev/null | awk 'NF == 3 && $2 != "u" && $3 !~ /^qvet_/')
[ -z "$other" ] || { echo "FAIL: libqvet.a exports more than the header: $(head -3 <<<"$other")"; exit 1; }
mkdir -p "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(check_file C)
find_package(qvet 0.1 REQUIRED)
add_executable(check_cmake $PWD/examples/api/check_file.c)
target_link_libraries(check_cmake PRIVATE qvet::qvet)
add_executable(check_cmake_static $PWD/examples/api/check_file.c)
target_link_libraries(check_cmake_static PRIVATE qvet::static)
CM
(cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$p" >/dev/null && cmake --build "$tmp/cm/build" >/dev/null) ||
  { echo "FAIL: the C example with find_package(qvet)"; exit 1; }
fail=0
for prog in corpus/cross_gpu_copy_bug.hcq corpus/cross_gpu_copy_fixed.hcq; do
  want=$("$p/bin/qvet" check --format json "$prog" 2>/dev/null; echo "exit $?")
  for run in "$tmp/check_pc" "$tmp/cm/build/check_cmake" "$tmp/check_static_pc" "$tmp/cm/build/check_cmake_static" "env -u QVET_LIBRARY PYTHONPATH=$p/lib/python3/site-packages $py examples/api/check_file.py"; do
    got=$($run "$prog" 2>/dev/null; echo "exit $?")
    [ "$got" = "$want" ] || { echo "FAIL: $run $prog"; diff <(echo "$want") <(echo "$got") | head; fail=1; }
  done
done
[ $fail = 0 ] && echo "api/installed: the C example (pkg-config, find_package; shared and static) and the Python example agree with qvet check"
exit $fail
