#!/usr/bin/env bash
# `qvet fix` promises: every independent race fixed in one run, line ends kept, 32-bit AMD waits,
# a stale wait raised rather than doubled, the producer never made to wait for the consumer when
# the consumer can wait, a diff that ends before the summary, and `-o` that never truncates.
set -u
qvet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# N independent races: queue c0 writes b_i and releases s_i; c1 reads b_i without waiting.
races() {
  echo "device gpu0 nv"; echo "queue c0 on gpu0 compute"; echo "queue c1 on gpu0 compute"
  for i in $(seq 1 "$1"); do echo "buffer b$i on gpu0 4K"; echo "signal s$i on host = 0"; done
  for i in $(seq 1 "$1"); do printf 'submit c0 {\n  exec p%d writes b%d\n  signal s%d = 1\n}\nsubmit c1 {\n  exec q%d reads b%d\n}\n' $i $i $i $i $i; done
}

# Five independent races: five fixes in one run, and the result checks clean.
races 5 >"$tmp/five.hcq"
"$qvet" fix -o "$tmp/five_fixed.hcq" "$tmp/five.hcq" >"$tmp/five.diff" 2>"$tmp/five.err" || fail "five races: exit $?"
[ "$(grep -c '^applied: ' "$tmp/five.err")" = 5 ] || fail "five races: want 5 fixes"
"$qvet" check --werror "$tmp/five_fixed.hcq" >/dev/null || fail "five races: the repaired program does not check clean"
for i in 1 2 3 4 5; do grep -q "^+  wait s$i >= 1" "$tmp/five.diff" || fail "five races: no wait for s$i"; done

# The diff ends with a line end: merged with the summary, no line runs into it.
[ "$(tail -c1 "$tmp/five.diff" | od -An -c | tr -d ' ')" = '\n' ] || fail "the diff does not end with a line end"
"$qvet" fix "$tmp/five.hcq" >"$tmp/merged.txt" 2>&1
grep -q '.applied: ' "$tmp/merged.txt" && fail "a diff line runs into the summary"

# CRLF stays CRLF, added lines included; a missing final line end stays missing.
sed 's/$/\r/' "$tmp/five.hcq" >"$tmp/crlf.hcq"
"$qvet" fix -o "$tmp/crlf_fixed.hcq" "$tmp/crlf.hcq" >/dev/null 2>&1 || fail "CRLF: exit $?"
[ "$(grep -c $'\r$' "$tmp/crlf_fixed.hcq")" = "$(wc -l <"$tmp/crlf_fixed.hcq")" ] || fail "CRLF: some lines lost their CR"
[ "$(wc -l <"$tmp/crlf_fixed.hcq")" = $(( $(wc -l <"$tmp/crlf.hcq") + 5 )) ] || fail "CRLF: want 5 added lines"
printf '%s' "$(cat "$tmp/five.hcq")" >"$tmp/nonl.hcq"
"$qvet" fix -o "$tmp/nonl_fixed.hcq" "$tmp/nonl.hcq" >"$tmp/nonl.diff" 2>/dev/null || fail "no final newline: exit $?"
[ "$(tail -c1 "$tmp/nonl_fixed.hcq")" = "}" ] || fail "no final newline: one was added"
grep -q '^\\ No newline at end of file' "$tmp/nonl.diff" || fail "no final newline: the diff does not say so"

# AMD waits compare the low dword: the suggested threshold fits 32 bits.
cat >"$tmp/amd.hcq" <<'HCQ'
device gpu0 amd
device gpu1 nv
peer gpu0 gpu1
buffer a on gpu0 4K
signal s on host = 0
queue n1 on gpu1 compute
queue c0 on gpu0 compute
submit n1 {
  exec p writes a
  signal s = 4294967300
}
submit c0 {
  exec k reads a
}
HCQ
"$qvet" fix -o "$tmp/amd_fixed.hcq" "$tmp/amd.hcq" >"$tmp/amd.diff" 2>&1 || { cat "$tmp/amd.diff"; fail "AMD: exit $?"; }
grep -q '^+  wait s >= 4$' "$tmp/amd.diff" || { cat "$tmp/amd.diff"; fail "AMD: want the low dword, wait s >= 4"; }
"$qvet" check --werror "$tmp/amd_fixed.hcq" >/dev/null || fail "AMD: the repaired program does not check clean"

# A stale wait is raised, not doubled.
"$qvet" fix corpus/stale_wait_bug.hcq >"$tmp/stale.diff" 2>/dev/null || fail "stale wait: exit $?"
grep -q '^-  wait tl >= 1 ' "$tmp/stale.diff" && grep -q '^+  wait tl >= 2$' "$tmp/stale.diff" || { cat "$tmp/stale.diff"; fail "stale wait: not raised"; }
[ "$(grep -c '^+' "$tmp/stale.diff")" = 2 ] || fail "stale wait: want one line replaced, nothing added"

# Two reads after one write: the wait before the first also orders the second, so one wait.
printf 'device gpu0 amd\nbuffer b on gpu0 4K\nsignal s on host = 0\nqueue c0 on gpu0 compute\nqueue c1 on gpu0 compute\nsubmit c0 {\n  exec p writes b\n  signal s = 1\n}\nsubmit c1 {\n  exec q1 reads b\n  exec q2 reads b\n}\n' >"$tmp/two.hcq"
"$qvet" fix "$tmp/two.hcq" >"$tmp/two.diff" 2>/dev/null || fail "two reads: exit $?"
[ "$(grep -c '^+  wait s >= 1$' "$tmp/two.diff")" = 1 ] || { cat "$tmp/two.diff"; fail "two reads: want one wait"; }

# The consumer waits for the producer; making the producer wait for the consumer comes last.
"$qvet" fix examples/cross_queue.hcq 2>&1 >/dev/null | grep -q 'applied: add `wait tl >= 1` before line 18 ' ||
  fail "cross_queue: want the consumer (line 18) to wait"

# -o through a temporary file: a write that fails (file-size limit) leaves the target as it was.
races 60 >"$tmp/big.hcq"
cp "$tmp/big.hcq" "$tmp/big_orig.hcq"
# (standard error goes through a pipe, which the limit does not cover)
err=$( (trap '' XFSZ; ulimit -f 1; exec "$qvet" fix -o "$tmp/big.hcq" "$tmp/big.hcq") 2>&1 >/dev/null ) && fail "-o: a failed write exits 0"
grep -q "cannot write" <<<"$err" || { echo "$err"; fail "-o: no error message"; }
cmp -s "$tmp/big.hcq" "$tmp/big_orig.hcq" || fail "-o: the target changed after a failed write"
[ -z "$(ls "$tmp" | grep qvet-)" ] || fail "-o: a temporary file was left behind"
# The diff is a patch: applied to the input it gives what -o writes (CRLF and a replaced line too).
if command -v patch >/dev/null; then
  cp corpus/stale_wait_bug.hcq "$tmp/stale.hcq"
  "$qvet" fix -o "$tmp/stale_fixed.hcq" "$tmp/stale.hcq" >/dev/null 2>&1
  for f in crlf stale; do
    "$qvet" fix "$tmp/$f.hcq" 2>/dev/null | (cd "$tmp" && patch -s -o "$f.patched" "$f.hcq") || fail "$f: the diff does not apply"
    cmp -s "$tmp/$f.patched" "$tmp/${f}_fixed.hcq" || fail "$f: the diff and -o disagree"
  done
fi
echo "fix cases: ok"
