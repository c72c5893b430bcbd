#!/usr/bin/env bash
# Hostile files and file systems: output files are written whole or not at all, unreadable inputs
# are exit-2 errors that name the file and the reason (and do not cost the other files their
# report), a JSON program's `source` never makes qvet read or quote another file, and JSON and
# SARIF output stay valid for any file name.
set -u
qvet=$(realpath "$1")
ex=$(realpath examples/cross_queue.hcq)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# Runs qvet under `ulimit -f 0`: every write to a regular file fails. No `trap '' XFSZ` here:
# qvet must ignore SIGXFSZ itself, so the write fails with EFBIG instead of killing it with its
# temporary file left behind. Stderr goes to $tmp/err through a pipe, which the limit spares.
limited() { (ulimit -f 0; "$qvet" "$@") 2>&1 >/dev/null | cat >err; return "${PIPESTATUS[0]}"; }
unchanged() { [ "$(cat "$1")" = precious ] || fail "$2: the target lost its data"; }
no_temp_left() { ! ls -A "${1:-.}" | grep -q '^\.qvet-' || fail "$2: a temporary file was left behind"; }

# 1. Every file qvet writes: past a file-size limit, exit non-zero, name the file and the reason,
#    and leave the target as it was.
echo precious >keep.hcq
limited gen --commands 2000 -o keep.hcq; [ $? = 2 ] || fail "gen -o past the file-size limit: want exit 2"
unchanged keep.hcq "gen -o"
grep -q "cannot write 'keep.hcq': File too large" err || fail "gen -o: no message naming the file and reason: $(cat err)"
no_temp_left . "gen -o"

cp "$ex" in.hcq
echo precious >witness.json
limited check --witness=witness.json in.hcq; [ $? = 2 ] || fail "--witness=FILE past the limit: want exit 2"
unchanged witness.json "--witness=FILE"
grep -q "witness.json" err || fail "--witness=FILE: no message naming the file"

cp "$ex" fixme.hcq
cp fixme.hcq fixme.orig
limited fix fixme.hcq -o fixme.hcq && fail "fix in -o in past the limit: exit 0"
cmp -s fixme.hcq fixme.orig || fail "fix in.hcq -o in.hcq truncated its input"
grep -q "cannot write 'fixme.hcq'" err || fail "fix -o: no message: $(cat err)"
no_temp_left . "fix -o"

(ulimit -f 0; "$qvet" print in.hcq >printed.hcq) 2>&1 | cat >err
[ "${PIPESTATUS[0]}" = 2 ] || fail "print to a full standard output: want exit 2"
grep -q "cannot write standard output" err || fail "print: no message for the failed standard output"

# A directory that cannot be written (skipped as root, which may write anyway), one that does not
# exist, and a target that is a directory.
mkdir ro && echo precious >ro/out.hcq && chmod a-w ro
if ! [ -w ro ]; then
  "$qvet" fix "$ex" -o ro/out.hcq 2>err >/dev/null && fail "fix -o into a read-only directory: exit 0"
  unchanged ro/out.hcq "fix -o into a read-only directory"
  grep -q "Permission denied" err || fail "read-only directory: no reason given"
fi
"$qvet" gen -o no/such/dir/x.hcq 2>err && fail "gen -o into a missing directory: exit 0"
grep -q "No such file or directory" err || fail "missing directory: no reason given"
mkdir adir
"$qvet" gen -o adir 2>err && fail "gen -o onto a directory: exit 0"
grep -q "Is a directory" err || fail "gen -o onto a directory: no reason given"

# A successful write keeps the target's mode, and a symbolic link keeps pointing at its file.
echo old >mode.hcq && chmod 640 mode.hcq
"$qvet" gen --commands 10 -o mode.hcq || fail "gen -o: failed"
[ "$(stat -c %a mode.hcq)" = 640 ] || fail "gen -o changed the file's mode"
ln -s mode.hcq link.hcq
"$qvet" gen --commands 20 -o link.hcq || fail "gen -o through a link: failed"
[ -L link.hcq ] && cmp -s link.hcq mode.hcq || fail "gen -o replaced the link instead of its file"
no_temp_left . "successful writes"

# 2. Unreadable inputs: exit 2 with the file and the reason; the other files are still reported.
mkdir dir.hcq
"$qvet" check dir.hcq "$ex" >out 2>err; [ $? = 2 ] || fail "a directory as a program: want exit 2"
grep -q "^dir.hcq: error: cannot read file: Is a directory" err || fail "directory: message: $(cat err)"
grep -q "RAW race" out || fail "a directory on the command line cost the other file its report"
for c in print graph fix; do
  "$qvet" $c dir.hcq 2>err; [ $? = 2 ] || fail "$c of a directory: want exit 2"
  grep -q "^dir.hcq: error: cannot read file: Is a directory" err || fail "$c of a directory: $(cat err)"
done
"$qvet" check - <dir.hcq 2>err; [ $? = 2 ] || fail "a directory as standard input: want exit 2"
"$qvet" check missing.hcq 2>err; [ $? = 2 ] || fail "a missing file: want exit 2"
grep -q "^missing.hcq: error: cannot open file: No such file or directory" err || fail "missing file: $(cat err)"

# A file name that is not UTF-8: JSON output stays UTF-8, SARIF URIs are percent-encoded.
valid_utf8() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1; }
bad=$(printf 'bad\377name.hcq')
cp "$ex" "$bad"
"$qvet" check --format json "$bad" >out.json; [ $? = 1 ] || fail "non-UTF-8 name, --format json: want exit 1"
valid_utf8 out.json || fail "JSON output with a non-UTF-8 file name is not UTF-8"
"$qvet" check --format sarif "$bad" >out.sarif; [ $? = 1 ] || fail "non-UTF-8 name, --format sarif: want exit 1"
valid_utf8 out.sarif || fail "SARIF output with a non-UTF-8 file name is not UTF-8"
grep -q '"uri": "bad%FFname.hcq"' out.sarif || fail "SARIF URI of a non-UTF-8 name not percent-encoded"
"$qvet" check --witness=w.json "$bad" >/dev/null; valid_utf8 w.json || fail "witness file is not UTF-8"

# SARIF URIs: percent-encoded, relative, and `.//sub/x.hcq` stays relative.
mkdir sub && cp "$ex" "sub/a b.hcq"
"$qvet" check --format sarif ".//sub/a b.hcq" >out.sarif
grep -q '"uri": "sub/a%20b.hcq"' out.sarif || fail "SARIF URI of .//sub/a b.hcq: $(grep -m1 uri out.sarif)"
"$qvet" check --format sarif "$tmp/sub/a b.hcq" >out.sarif
grep -q '"uri": "sub/a%20b.hcq"' out.sarif || fail "SARIF URI of an absolute path inside the working directory"

# 3. A JSON program's `source` is quoted only when it is the program's own .hcq source.
"$qvet" print --format json "$ex" >prog.json
with_source() { sed "s|\"source\": \"[^\"]*\"|\"source\": \"$1\"|" prog.json >src.json; }
with_source "$ex"
"$qvet" check src.json >out; grep -q "^    copy act -> act1" out || fail "the program's own source is not quoted"
mkfifo fifo.hcq
for s in /etc/passwd /dev/zero "$tmp/fifo.hcq" "$tmp/sub" "$tmp/in.hcq.missing"; do
  with_source "$s"
  timeout 60 "$qvet" check src.json >out 2>&1; rc=$?
  [ $rc = 1 ] || fail "source $s: exit $rc, want 1 (the program's race)"
  grep -q "RAW race" out || fail "source $s: no report"
  ! grep -q "^    " out || fail "source $s was quoted: $(grep -m1 '^    ' out)"
done
gen_src=$(realpath keep.hcq)  # a .hcq file that is not this program's source
with_source "$gen_src"
"$qvet" check src.json >out; ! grep -q "^    " out || fail "another program's source was quoted"

# A caret column far past the end of its line prints one short line, not gigabytes.
sed 's/"column": 3/"column": 4000000000/' prog.json >far.json
with_source "$ex" && sed -i 's/"column": 3/"column": 4000000000/' src.json
"$qvet" check src.json >out; [ $? = 1 ] || fail "far column: want exit 1"
[ "$(wc -c <out)" -lt 100000 ] || fail "a far column printed $(wc -c <out) bytes"
# A program past the event limit is refused before its events are allocated: under a 300 MB
# address-space limit (skipped for sanitizer builds, which reserve terabytes of address space).
if (ulimit -v 300000; "$qvet" --version) >/dev/null 2>&1; then
  src=$(dirname "$ex")/../tests/malformed
  for f in limit_repeat_2pow40 limit_nested_repeat; do
    (ulimit -v 300000; timeout 20 "$qvet" check "$src/$f.hcq") >/dev/null 2>err; rc=$?
    [ $rc = 2 ] || fail "$f under a memory limit: exit $rc, want 2"
    grep -q "expands to more than" err || fail "$f: $(cat err)"
  done
fi
# Stream and region files (docs/encoded.md): a symbolic link, a FIFO and a directory are never
# read (a FIFO would block), each an exit-2 error at the statement that names it.
mkdir -p streams/dir
printf 'device g amd\nqueue c on g compute\nsubmit c stream amd-pm4 "%s"\n' link.pm4 >streams/link.hcq
ln -s /etc/hostname streams/link.pm4
mkfifo streams/fifo.pm4
sed 's/link.pm4/fifo.pm4/' streams/link.hcq >streams/fifo.hcq
sed 's/link.pm4/dir/' streams/link.hcq >streams/dir.hcq
for f in link fifo dir; do
  timeout 20 "$qvet" check "streams/$f.hcq" >/dev/null 2>err; rc=$?
  [ $rc = 2 ] || fail "stream file $f: exit $rc, want 2"
  grep -q "streams/$f.hcq:3:" err || fail "stream file $f: error not at the submit: $(cat err)"
done
grep -q "symbolic link" <("$qvet" check streams/link.hcq 2>&1) || fail "stream symlink: no message saying so"
# A directory on the way that is a symbolic link leaves the program's directory too.
mkdir -p outside && printf 'x' >outside/s.pm4 && ln -s ../outside streams/up
sed 's|link.pm4|up/s.pm4|' streams/link.hcq >streams/via.hcq
"$qvet" check streams/via.hcq >/dev/null 2>err; rc=$?
[ $rc = 2 ] || fail "a stream through a linked directory: exit $rc, want 2"
grep -q "streams/up' is a symbolic link" err || fail "a stream through a linked directory: $(cat err)"
# ... also when the directory turns into a link while qvet reads: a directory and a link to one
# outside swap places atomically (renameat2 RENAME_EXCHANGE) as fast as they can, and no run may
# read the outside file (a stream that does not decode). Where renameat2 is missing, skipped.
mkdir -p race/sub race/outside && : >race/sub/s.pm4 && printf '\xff\xff\xff\xff' >race/outside/s.pm4
sed 's|link.pm4|sub/s.pm4|' streams/link.hcq >race/p.hcq && ln -s outside race/lnk
python3 - race <<'PY' &
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
if hasattr(libc, "renameat2"):
    while True: libc.renameat2(-100, b"sub", -100, b"lnk", 2)  # AT_FDCWD, RENAME_EXCHANGE
PY
swapper=$!
for _ in $(seq 200); do
  "$qvet" check race/p.hcq >/dev/null 2>err
  grep -q "race/sub/s.pm4:" err && { kill $swapper; fail "a directory swapped for a link was read through: $(cat err)"; }
done
kill $swapper 2>/dev/null; wait $swapper 2>/dev/null

# A kernel of 2,000 pointer arguments launched 12,000 times (2.4 MB of PM4): the commands and byte
# ranges streams decode to are counted as they are made, so it is refused at the submit, in
# bounded memory, not after gigabytes.
mkdir -p blowup && python3 -B - "$(dirname "$ex")/../corpus/encoded" blowup <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
from make_streams import Stream
out, n = sys.argv[2], 2000
open(out + "/kargs.bin", "wb").write(struct.pack("<%dQ" % n, *([0x10000000] * n)))
ring = Stream()
for _ in range(12000): ring.exec(0x70000000, 0x30000000)
open(out + "/ptr.pm4", "wb").write(ring.bytes())
open(out + "/ptr.hcq", "w").write("device g amd\nbuffer a on g 4K at 0x10000000\nkernel k at 0x70000000 args(" + ", ".join(["reads"] * n) +
    ")\nregion kargs at 0x30000000 file \"kargs.bin\"\nqueue c on g compute\nsubmit c stream amd-pm4 \"ptr.pm4\"\n")
PY
# (The address-space limit only where the build runs under one: not for sanitizer builds.)
limit=unlimited
if (ulimit -v 1500000; "$qvet" --version) >/dev/null 2>&1; then limit=1500000; fi
(ulimit -v $limit; timeout 120 "$qvet" check blowup/ptr.hcq) >/dev/null 2>err; rc=$?
[ $rc = 2 ] || fail "2,000 pointer arguments x 12,000 dispatches: exit $rc, want 2"
grep -q "ptr.hcq:6:1: error: the program's streams decode to more than" err || fail "2,000 pointer arguments: $(cat err)"

# Options that were ignored or wrapped: refused with exit 2 and the option's name.
usage() {
  "$qvet" "$@" </dev/null >/dev/null 2>err; rc=$?
  [ $rc = 2 ] || fail "qvet $*: exit $rc, want 2"
}
usage graph --radius 2^31 "$ex"; grep -q -- "--radius is between 0 and" err || fail "graph --radius 2^31: $(cat err)"
usage graph --around 2^32 "$ex"; grep -q -- "--around is between 1 and" err || fail "graph --around 2^32: $(cat err)"
usage check - -; grep -q "standard input ('-') can be read once" err || fail "check - -: $(cat err)"
usage sim --trace= "$ex"; grep -q -- "--trace needs a file name" err || fail "sim --trace=: $(cat err)"
usage sim --timeline= "$ex"; grep -q -- "--timeline needs a file name" err || fail "sim --timeline=: $(cat err)"

# A program or witness that is not text (/dev/zero, a binary file): refused at its first NUL byte,
# at once (reading stops there), not after reading 2 GiB.
for args in "check /dev/zero" "sim --policy witness --witness=/dev/zero $ex"; do
  # shellcheck disable=SC2086
  timeout 10 "$qvet" $args >/dev/null 2>err; rc=$?
  [ $rc = 2 ] || fail "qvet $args: exit $rc, want 2: $(cat err)"
done
"$qvet" check /dev/zero 2>&1 | grep -q "^/dev/zero:1:1: error" || fail "check /dev/zero: $("$qvet" check /dev/zero 2>&1)"

# No output replaces an input of the same command, however it is named (exit 2, input intact).
mkdir -p same && cp "$ex" same/prog.mem && cp "$ex" same/p.hcq
(cd same && "$qvet" encode prog.mem -o . >/dev/null 2>../err); rc=$?
[ $rc = 2 ] && cmp -s same/prog.mem "$ex" || fail "encode prog.mem -o .: exit $rc, the input replaced: $(cat err)"
grep -q "it is an input of this command" err || fail "encode prog.mem -o .: $(cat err)"
for out in "--trace same/p.hcq" "--timeline same/p.hcq"; do
  # shellcheck disable=SC2086
  "$qvet" sim same/p.hcq --runs 2 $out >/dev/null 2>err; rc=$?
  [ $rc = 2 ] && cmp -s same/p.hcq "$ex" || fail "sim $out: exit $rc, the input replaced: $(cat err)"
done
"$qvet" check --witness=same/p.hcq same/p.hcq >/dev/null 2>err; rc=$?
[ $rc = 2 ] && cmp -s same/p.hcq "$ex" || fail "check --witness=INPUT: exit $rc, the input replaced"

# A program named with a byte that is not UTF-8 and a control character: traces, timelines and
# JSON reports stay well-formed (names are replaced where they cannot be said), never exit 3.
odd=$(printf 'x\377\001y').hcq
cp "$ex" "$odd"
"$qvet" sim "$odd" --runs 3 --trace odd_trace.json --timeline odd.svg >/dev/null 2>err; rc=$?
[ $rc = 1 ] || fail "sim --trace/--timeline on an odd name: exit $rc: $(cat err)"
"$qvet" sim "$odd" --runs 3 --compare --format json >odd_compare.json 2>err || fail "sim --compare --format json on an odd name: exit $?"
"$qvet" run --on sim --force "$odd" --runs 2 --trace odd_run.json >/dev/null 2>err; rc=$?
[ $rc = 1 ] || fail "run --trace on an odd name: exit $rc: $(cat err)"
python3 -c 'import json, sys, xml.dom.minidom as m
for f in sys.argv[1:4]: json.load(open(f))
m.parse(sys.argv[4])' odd_trace.json odd_compare.json odd_run.json odd.svg || fail "an odd name made a trace, report or timeline that is not well-formed"

# gen keeps to --commands whatever --sync-every says; 160,000 distinct kernel names load at once.
"$qvet" gen --sync-every 1000000 --commands 100 -o gen100.hcq
n=$(grep -c '^  \(exec\|copy\|wait\|signal\|memory_barrier\)' gen100.hcq)
[ "$n" -le 110 ] || fail "gen --sync-every 1000000 --commands 100 wrote $n commands"
{ echo "device g nv"; echo "buffer a on g 64"; echo "queue c on g compute"; echo "submit c {"
  awk 'BEGIN { for (i = 0; i < 160000; i++) print "  exec k" i " reads a" }'; echo "}"; } >kernels.hcq
timeout 120 "$qvet" check --rules none kernels.hcq >/dev/null 2>err || fail "160,000 kernel names: exit $?: $(head -3 err)"

echo "hostile io ok"
