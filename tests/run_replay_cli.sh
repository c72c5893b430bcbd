#!/usr/bin/env bash
# `qvet run`'s promises without a GPU: exit 4 and one line naming the library when a driver or
# device is missing; refusals; bad input and usage; the plan printed deterministically; the sim
# back end observes a race as data; --trace writes trace events.
set -u
qvet=$1 dump=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "run-cli: $*"; exit 1; }
bug=corpus/eager_amd_bug.hcq fixed=corpus/eager_amd_fixed.hcq
# No driver here: exit 4, one line, the library named. (Where a driver and GPU exist, 0 or 1.)
for on in cuda hip; do
  "$qvet" run --on $on --runs 1 "$fixed" >"$tmp/o.txt" 2>"$tmp/e.txt"; rc=$?
  if [ $rc = 4 ]; then
    [ "$(wc -l <"$tmp/e.txt")" = 1 ] || fail "$on: want one line on exit 4"; cat "$tmp/e.txt"
    grep -q "^qvet run: device not available: " "$tmp/e.txt" || fail "$on: want 'device not available'"
    case $on in
      cuda) grep -Eq "libcuda|cuda: " "$tmp/e.txt" || fail "cuda: want the library or call named" ;;
      hip) grep -Eq "libamdhip64|hip: " "$tmp/e.txt" || fail "hip: want the library or call named" ;;
    esac
  else
    [ $rc = 0 ] || [ $rc = 1 ] || fail "$on: want exit 0, 1 or 4, got $rc"
  fi
done
"$qvet" run --on tpu "$fixed" 2>/dev/null; [ $? = 2 ] || fail "unknown back end: want exit 2"
"$qvet" run "$fixed" 2>/dev/null; [ $? = 2 ] || fail "no --on: want exit 2"
"$qvet" run --on sim tests/malformed/alloc_live.hcq 2>"$tmp/e.txt"; [ $? = 2 ] || fail "bad input: want exit 2"
grep -q '^tests/malformed/alloc_live.hcq:8:1: error' "$tmp/e.txt" || fail "bad input: want file:line"
"$qvet" run --on sim "$bug" 2>"$tmp/e.txt"; [ $? = 1 ] || fail "errors without --force: want exit 1"
grep -q -- "--force" "$tmp/e.txt" || fail "errors without --force: want the refusal to name --force"
"$qvet" run --on sim --force corpus/deadlock_cycle2_bug.hcq 2>"$tmp/e.txt"; [ $? = 1 ] || fail "deadlock: want exit 1"
grep -q "never submitted" "$tmp/e.txt" || fail "deadlock: want it refused even with --force"
"$qvet" run --on sim --map nosuch=0 "$fixed" 2>/dev/null; [ $? = 2 ] || fail "--map of an unknown device: want exit 2"
# The sim back end observes the race as data, deterministically.
"$qvet" run --on sim --force --runs 20 "$bug" >"$tmp/a.txt"; [ $? = 1 ] || fail "race observed: want exit 1"
"$qvet" run --on sim --force --runs 20 "$bug" >"$tmp/b.txt"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || fail "output not deterministic"
grep -q "race observed" "$tmp/a.txt" || fail "want a race observed"
"$qvet" run --on sim --runs 5 "$fixed" >/dev/null; [ $? = 0 ] || fail "fixed program: want exit 0"
"$qvet" run --on sim --plan "$bug" >"$tmp/p1.txt" && "$qvet" run --on sim --plan "$bug" >"$tmp/p2.txt"
cmp -s "$tmp/p1.txt" "$tmp/p2.txt" || fail "--plan not deterministic"
"$qvet" run --on sim --force --runs 2 --trace "$tmp/t.json" "$bug" >/dev/null
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["traceEvents"]; assert any(x["ph"]=="X" for x in e)' "$tmp/t.json" ||
  fail "--trace: want trace events with slices"
"$qvet" run --on sim --compare --format json --runs 5 "$fixed" >"$tmp/c.json" || fail "--compare json: want exit 0"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/c.json" || fail "--compare json: want JSON"
# The embedded probe kernels: PTX that assembles for sm_80 and sm_90; one AMD ELF per target.
"$dump" "$tmp/probe" || fail "qvet_probe_dump failed"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [ -s "$tmp/probe/probe.ptx" ]; then
  if [ -x "$ptxas" ]; then
    for sm in sm_80 sm_90; do "$ptxas" -arch=$sm "$tmp/probe/probe.ptx" -o "$tmp/probe.$sm.cubin" || fail "ptxas $sm"; done
    echo "PTX assembles for sm_80 and sm_90"
  else
    echo "no ptxas here: the PTX was not assembled"
  fi
  grep -q "globaltimer" "$tmp/probe/probe.ptx" || fail "the PTX does not read %globaltimer"
  grep -q "^.version 7.0" "$tmp/probe/probe.ptx" || fail "the PTX must declare ISA 7.0, which every driver since CUDA 11.0 loads"
fi
for co in "$tmp"/probe/*.co; do
  [ -e "$co" ] || continue
  t=$(basename "$co" .co)
  python3 - "$co" "$t" <<'PY' || fail "$t: not a valid AMD GPU code object"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "64-bit little-endian ELF"
e_type, e_machine = struct.unpack_from("<HH", data, 16)
assert e_type == 3 and e_machine == 224, (e_type, e_machine)  # ET_DYN, EM_AMDGPU
mach = struct.unpack_from("<I", data, 48)[0] & 0xff
want = {"gfx908": 0x30, "gfx90a": 0x3f, "gfx1030": 0x36}
assert sys.argv[2] not in want or mach == want[sys.argv[2]], (hex(mach), sys.argv[2])
assert b"qvet_probe.kd" in data, "kernel descriptor"
PY
  echo "$t: AMD GPU code object with qvet_probe"
done
exit 0
