#!/bin/bash
# The engine's indexes against the plain wait rule (model/wait_rule.h), wait by wait:
# `qvet check --engine checked` on every corpus program and example, on every `qvet gen` shape at
# 10^3 commands, and on bench/runtime_programs.py's programs (exit 3 at the first difference); the corpus's expectations also hold
# with the rule alone (`--engine plain`).
# usage: tests/run_engine_checked.sh QVET (from the repository root)
set -u
qvet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
files=$(ls corpus/*.hcq corpus/encoded/*.hcq)
for mode in checked plain; do
  # shellcheck disable=SC2086
  out=$("$qvet" check --expect --engine "$mode" -j 2 $files 2>&1)
  if [ $? -ne 0 ]; then echo "$out" | grep -v '^PASS\|: note: ' | head -20; echo "FAIL: corpus with --engine $mode"; fail=1; fi
done
for f in examples/*.hcq; do
  "$qvet" check --engine checked "$f" >/dev/null 2>"$tmp/err" || [ $? -lt 2 ] || { cat "$tmp/err"; echo "FAIL: $f"; fail=1; }
done
# The shapes, as `qvet gen --help` lists them (a new shape is checked without editing this).
shapes=$("$qvet" gen --help | sed -n '/--shape S/,$p' | grep -oE '^ {28}[a-z][a-z0-9-]+' | tr -d ' ')
[ "$(echo "$shapes" | wc -w)" -ge 30 ] || { echo "FAIL: could not read the gen shapes from qvet gen --help"; exit 1; }
for s in eager $shapes; do
  "$qvet" gen --shape "$s" --commands 1000 -o "$tmp/$s.hcq" 2>/dev/null || { echo "FAIL: gen --shape $s"; fail=1; continue; }
  "$qvet" check --engine checked "$tmp/$s.hcq" >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc -ge 2 ]; then cat "$tmp/err"; echo "FAIL: --shape $s (exit $rc)"; fail=1; fi
done
for arch in amd mixed strict; do
  "$qvet" gen --arch $arch --commands 2000 --seed 7 -o "$tmp/eager-$arch.hcq" 2>/dev/null
  "$qvet" check --engine checked "$tmp/eager-$arch.hcq" >/dev/null 2>"$tmp/err" || [ $? -lt 2 ] || { cat "$tmp/err"; echo "FAIL: eager --arch $arch"; fail=1; }
done
# Programs as runtimes build them (bench/runtime_programs.py), which check clean.
for prog in graph-replay transfers; do
  python3 bench/runtime_programs.py "$prog" 3000 >"$tmp/$prog.hcq"
  "$qvet" check --engine checked "$tmp/$prog.hcq" >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 0 ]; then cat "$tmp/err"; echo "FAIL: $prog (exit $rc)"; fail=1; fi
done
[ $fail -eq 0 ] && echo "engine-checked: corpus, examples and $(echo "$shapes" | wc -w) shapes agree"
exit $fail
