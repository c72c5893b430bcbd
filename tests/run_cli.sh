#!/usr/bin/env bash
# The CLI's promises: exit codes, formats, determinism, print round trip, JSON input.
set -eu
qvet=$1
ex=examples/cross_queue.hcq
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set +e
"$qvet" check "$ex" >"$tmp/a.txt"; [ $? = 1 ] || { echo "check: want exit 1 (the example has a race)"; exit 1; }
"$qvet" check "$ex" >"$tmp/b.txt"; cmp -s "$tmp/a.txt" "$tmp/b.txt" || { echo "output not deterministic"; exit 1; }
"$qvet" check --bogus "$ex" 2>/dev/null; [ $? = 2 ] || { echo "bad option: want exit 2"; exit 1; }
"$qvet" check --format sarif "$ex" >"$tmp/s.json"; [ $? = 1 ] || exit 1
"$qvet" check --format json "$ex" >"$tmp/j.json"; [ $? = 1 ] || exit 1
"$qvet" check /nonexistent.hcq 2>/dev/null; [ $? = 2 ] || { echo "missing file: want exit 2"; exit 1; }
set -e
grep -q '"ruleId": "race"' "$tmp/s.json"
# -j: files checked at once print exactly what one by one prints, in command-line order.
set +e
for fmt in text json sarif; do
  "$qvet" check -j 1 --format "$fmt" corpus/*.hcq >"$tmp/j1" 2>"$tmp/j1e"; r1=$?
  "$qvet" check -j 3 --format "$fmt" corpus/*.hcq >"$tmp/j3" 2>"$tmp/j3e"; r3=$?
  cmp -s "$tmp/j1" "$tmp/j3" && cmp -s "$tmp/j1e" "$tmp/j3e" && [ $r1 = $r3 ] || { echo "check -j 3 --format $fmt differs from -j 1"; exit 1; }
done
"$qvet" check -j 2 --expect corpus/*.hcq >"$tmp/je" 2>/dev/null; [ $? = 0 ] || { echo "check -j 2 --expect: want exit 0"; exit 1; }
"$qvet" check -j 0 "$ex" 2>/dev/null; [ $? = 2 ] || { echo "check -j 0: want exit 2"; exit 1; }
set -e
grep -q '"version": "2.1.0"' "$tmp/s.json"
grep -q '"executionSuccessful": true' "$tmp/s.json"
# A file that cannot be checked: SARIF says the run did not succeed, and why (not a clean run).
printf 'garbage !!\n' >"$tmp/bad.hcq"
set +e
"$qvet" check --format sarif "$tmp/bad.hcq" "$ex" >"$tmp/bad.sarif" 2>/dev/null; [ $? = 2 ] || { echo "sarif, bad input: want exit 2"; exit 1; }
set -e
grep -q '"executionSuccessful": false' "$tmp/bad.sarif" || { echo "sarif, bad input: executionSuccessful not false"; exit 1; }
grep -q "bad.hcq:1:9: error: unexpected character" "$tmp/bad.sarif" || { echo "sarif, bad input: no notification"; exit 1; }
grep -q '"ruleId": "race"' "$tmp/bad.sarif" || { echo "sarif, bad input: the other file's results are missing"; exit 1; }
grep -q '"rule": "race"' "$tmp/j.json"
"$qvet" print "$ex" >"$tmp/p1.hcq"
"$qvet" print "$tmp/p1.hcq" >"$tmp/p2.hcq"
cmp "$tmp/p1.hcq" "$tmp/p2.hcq"
"$qvet" print --format json "$ex" >"$tmp/p.json"
"$qvet" print "$tmp/p.json" >"$tmp/p3.hcq"
cmp "$tmp/p1.hcq" "$tmp/p3.hcq"
set +e
"$qvet" check "$tmp/p.json" >"$tmp/c.txt"; [ $? = 1 ] || { echo "JSON input: want exit 1"; exit 1; }
set -e
grep -q "race" "$tmp/c.txt"
"$qvet" graph "$ex" | grep -q "digraph"
"$qvet" graph --around 18 "$ex" | grep -q "color=red"
"$qvet" version | grep -q qvet
for c in check print graph gen; do "$qvet" $c --help >/dev/null; done

# The README shows real output for the bundled example.
"$qvet" check "$ex" >"$tmp/readme.txt" || true
sed -n '/^examples\/cross_queue.hcq:18/,/^qvet: /p' README.md | diff - "$tmp/readme.txt"
echo "readme ok"

# Grouped findings count commands (a loop's repeats included), and stay exact on the shape where
# every write races with every earlier one (issue 10: computed per range of partners, not per pair).
"$qvet" check corpus/signal_race_group_counts_commands.hcq | grep -q "the same holds for 2 earlier command(s) of queue c0 (line 11)" ||
  { echo "signal-race group: want 2 earlier commands"; exit 1; }
"$qvet" gen --shape chained-waits --commands 2000 -o "$tmp/cw.hcq"
"$qvet" check "$tmp/cw.hcq" >"$tmp/cw.txt" || true
grep -q "the same holds for 398 earlier command(s) of queue c0 (line 12, 15, 18, 21, 24, 27, 30, 33, …)" "$tmp/cw.txt" ||
  { echo "chained-waits: the last signal's group is not 398 earlier commands"; exit 1; }
[ "$(grep -c 'signal-race\]' "$tmp/cw.txt")" = 399 ] || { echo "chained-waits: want 399 signal races"; exit 1; }
echo "groups ok"

# Encoded streams (docs/encoded.md): `qvet decode` expands a stream with each command's FILE:DWORD,
# and `qvet print` of the decoded program reads back as the same program.
"$qvet" decode corpus/encoded/pm4_no_flush_bug.hcq >"$tmp/dec.hcq"
grep -qF "exec use reads a[0:4K] writes b[0:4K]  # pm4_no_flush_bug.pm4:94" "$tmp/dec.hcq" || { echo "decode: no dword comment"; exit 1; }
grep -qF "queue c0 on gpu0 compute ordering overlap" "$tmp/dec.hcq" || { echo "decode: the unflushed queue is not overlap"; exit 1; }
"$qvet" print corpus/encoded/eager_pm4_fixed.hcq >"$tmp/e1.hcq"
"$qvet" print "$tmp/e1.hcq" >"$tmp/e2.hcq"
cmp "$tmp/e1.hcq" "$tmp/e2.hcq"
"$qvet" decode --help >/dev/null
# --ignore-packet: the bad opcode of a malformed stream is skipped with its body.
"$qvet" check --ignore-packet 0x99 tests/malformed/pm4_bad_opcode.hcq >/dev/null || { echo "--ignore-packet 0x99: want exit 0"; exit 1; }
set +e
"$qvet" fix corpus/encoded/pm4_no_flush_bug.hcq >/dev/null 2>&1; [ $? = 2 ] || { echo "fix on a stream program: want exit 2"; exit 1; }
set -e
"$qvet" check corpus/encoded/pm4_two_queues_bug.hcq | grep -qF "on c0 (pm4_two_queues_bug_c0.pm4:45) may still write them" ||
  { echo "a message names a decoded command by line, not by FILE:DWORD"; exit 1; }
echo "decode ok"

# `qvet encode` (docs/encoded.md): the encoded program checks with its moved expectations, keeps
# CRLF line ends, --ignore-packet names a format, and bad requests are exit 2 with the input kept.
"$qvet" encode corpus/eager_amd_bug.hcq -o "$tmp/enc" >/dev/null
"$qvet" encode corpus/diff_seed5.hcq -o "$tmp/enc5" >/dev/null 2>"$tmp/enc.err"
grep -q "kept as text: line 17: SDMA has no chained ordering" "$tmp/enc.err" || { echo "encode: no note for the batches kept as text"; exit 1; }
"$qvet" check --expect "$tmp/enc/eager_amd_bug.hcq" | grep -q PASS || { echo "encode: the encoded program fails its expectations"; exit 1; }
grep -q 'submit c0 stream amd-pm4 "eager_amd_bug_c0_1.pm4"' "$tmp/enc/eager_amd_bug.hcq" || { echo "encode: no stream submit"; exit 1; }
grep -q 'submit x0 stream amd-sdma "eager_amd_bug_x0_1.sdma"' "$tmp/enc/eager_amd_bug.hcq" || { echo "encode: no SDMA stream submit"; exit 1; }
sed 's/$/\r/' corpus/amd_overlap_bug.hcq >"$tmp/crlf.hcq"
"$qvet" encode "$tmp/crlf.hcq" -o "$tmp/enc2" >/dev/null
[ "$(grep -c $'\r$' "$tmp/enc2/crlf.hcq")" = "$(wc -l <"$tmp/enc2/crlf.hcq")" ] || { echo "encode: CRLF not kept"; exit 1; }
"$qvet" check --expect "$tmp/enc2/crlf.hcq" | grep -q PASS || { echo "encode: the CRLF program fails"; exit 1; }
"$qvet" check --ignore-packet amd-pm4:0x99 tests/malformed/pm4_bad_opcode.hcq >/dev/null || { echo "--ignore-packet amd-pm4:0x99: want exit 0"; exit 1; }
cp corpus/amd_overlap_bug.hcq "$tmp/self.hcq"
set +e
"$qvet" encode "$tmp/self.hcq" -o "$tmp" >/dev/null 2>&1; [ $? = 2 ] || { echo "encode over its input: want exit 2"; exit 1; }
cmp -s corpus/amd_overlap_bug.hcq "$tmp/self.hcq" || { echo "encode over its input: the input changed"; exit 1; }
"$qvet" encode corpus/amd_overlap_bug.hcq >/dev/null 2>&1; [ $? = 2 ] || { echo "encode without -o: want exit 2"; exit 1; }
"$qvet" encode "$tmp/p.json" -o "$tmp/enc3" >/dev/null 2>&1; [ $? = 2 ] || { echo "encode of JSON: want exit 2"; exit 1; }
"$qvet" encode corpus/encoded/eager_pm4_fixed.hcq -o "$tmp/enc4" >/dev/null 2>&1; [ $? = 2 ] || { echo "encode of a stream program: want exit 2"; exit 1; }
"$qvet" check --ignore-packet nosuch:0x1 "$ex" >/dev/null 2>&1; [ $? = 2 ] || { echo "--ignore-packet of an unknown format: want exit 2"; exit 1; }
# encode writes the binding itself: a program that has one is refused at its first `at`; buffers
# past 28 GiB push the signals above them, and the program written checks.
printf 'device g nv\nsignal s on g = 0\nqueue c on g compute\nbuffer b on g 4K at 0x10000\nsubmit c {\n  exec k writes b\n  signal s = 1\n}\n' >"$tmp/bound.hcq"
"$qvet" encode "$tmp/bound.hcq" -o "$tmp/enc_bound" 2>"$tmp/enc1.txt"; [ $? = 2 ] || { echo "encode of a bound program: want exit 2"; exit 1; }
grep -q "bound.hcq:4:[0-9]*: error: this program already binds bytes to names" "$tmp/enc1.txt" || { echo "encode: want the first 'at'"; cat "$tmp/enc1.txt"; exit 1; }
printf 'device g nv\nsignal s on g = 0\nqueue c on g compute\nbuffer b on g 30G\nsubmit c {\n  exec k writes b\n  signal s = 1\n}\nwait s >= 1\n' >"$tmp/big.hcq"
"$qvet" encode "$tmp/big.hcq" -o "$tmp/enc_big" >/dev/null 2>&1 && (cd "$tmp/enc_big" && "$qvet" check big.hcq >/dev/null) || { echo "encode of a 30 GiB buffer: want a program that checks"; exit 1; }
# A buffer that ends near 2^64 cannot be laid out: exit 2 at the buffer, not a wrapped address.
printf 'device g amd\nbuffer a on g 18446744073709547520\nbuffer b on g 8192\nqueue c on g compute\nsubmit c {\n  exec k reads a writes b\n}\n' >"$tmp/top.hcq"
"$qvet" encode "$tmp/top.hcq" -o "$tmp/enc_top" 2>"$tmp/enc2.txt"; [ $? = 2 ] || { echo "encode of a buffer near 2^64: want exit 2"; cat "$tmp/enc2.txt"; exit 1; }
grep -q "top.hcq:2:1: error: the program's buffers, up to 'a'," "$tmp/enc2.txt" || { echo "encode near 2^64: want the buffer's line"; cat "$tmp/enc2.txt"; exit 1; }
# A packet the decoder reads (a dispatch, a copy's LAUNCH_DMA) cannot be skipped: that would drop
# commands and turn a racy stream clean.
for p in 0x15 amd-sdma:0x1 nv:0x300; do
  "$qvet" check --ignore-packet $p corpus/encoded/pm4_no_flush_bug.hcq >/dev/null 2>"$tmp/ip.txt"; [ $? = 2 ] || { echo "--ignore-packet $p: want exit 2"; exit 1; }
  grep -q "the decoder reads .* as a command or its ordering" "$tmp/ip.txt" || { echo "--ignore-packet $p: want the reason"; cat "$tmp/ip.txt"; exit 1; }
done
set -e
cp corpus/amd_overlap_bug.hcq "$tmp/we ird\"name.hcq"
"$qvet" encode "$tmp/we ird\"name.hcq" -o "$tmp/enc5" >/dev/null
"$qvet" check --expect "$tmp/enc5/we_ird_name.hcq" | grep -q PASS || { echo "encode: a file name with a space and a quote"; exit 1; }
echo "encode ok"

# The fan-in and timeline-relay shapes are gen shapes: valid programs, the
# fan-in's readers racing its writers (every writer a candidate), the relay clean.
set +e
"$qvet" gen --shape fan-in --commands 60 | "$qvet" check - >/dev/null; [ $? = 1 ] || { echo "gen fan-in: want exit 1 (races)"; exit 1; }
"$qvet" gen --shape timeline-relay --commands 30 | "$qvet" check - >/dev/null; [ $? = 0 ] || { echo "gen timeline-relay: want exit 0"; exit 1; }
set -e
