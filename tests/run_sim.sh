#!/usr/bin/env bash
# `qvet sim`'s promises: exit codes, determinism, and that --trace and --timeline open.
# The trace is checked against the trace-event format (docs/simulator.md): the fields Perfetto
# and chrome://tracing read, flow arrows in pairs, slices on one track nested or apart. The SVG
# must parse as XML and, where Chromium is installed, render to a screenshot that shows slices.
set -eu
qvet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bug=corpus/eager_amd_bug.hcq
set +e
"$qvet" sim --runs 20 "$bug" >"$tmp/a.txt"; [ $? = 1 ] || { echo "sim: want exit 1 (the program races)"; exit 1; }
"$qvet" sim --runs 20 "$bug" >"$tmp/b.txt"; cmp -s "$tmp/a.txt" "$tmp/b.txt" || { echo "sim: output not deterministic"; exit 1; }
"$qvet" sim --runs 20 corpus/eager_amd_fixed.hcq >/dev/null; [ $? = 0 ] || { echo "sim: want exit 0 on a fixed program"; exit 1; }
"$qvet" sim --policy nosuch "$bug" 2>/dev/null; [ $? = 2 ] || { echo "sim: bad policy: want exit 2"; exit 1; }
"$qvet" sim tests/malformed/alloc_live.hcq 2>"$tmp/err.txt"; [ $? = 2 ] || { echo "sim: bad input: want exit 2"; exit 1; }
"$qvet" sim --compare --runs 50 --policy pct,delay --format json "$bug" >"$tmp/c.json"; [ $? = 0 ] || { echo "sim --compare: want exit 0"; exit 1; }
"$qvet" sim --runs 1 --policy delay --trace "$tmp/t.json" --timeline "$tmp/t.svg" "$bug" >/dev/null
# A race that shows in some runs only: the timeline draws the first run that shows it, in red, and
# its title says which run and which race; --run picks another, and an out-of-range one is refused.
"$qvet" sim --runs 50 --timeline "$tmp/r.svg" corpus/nv_chain_release_bug.hcq >/dev/null
"$qvet" sim --runs 50 --run 0 --timeline "$tmp/r0.svg" corpus/nv_chain_release_bug.hcq >/dev/null
"$qvet" sim --runs 5 --run 5 --timeline "$tmp/bad.svg" corpus/nv_chain_release_bug.hcq 2>/dev/null; [ $? = 2 ] || { echo "sim --run past the runs: want exit 2"; exit 1; }
set -e
grep -q 'policy random: race between line 21 and line 13;' "$tmp/r.svg" || { echo "sim --timeline: not titled with its race"; exit 1; }
grep -q '#e74c3c' "$tmp/r.svg" || { echo "sim --timeline: the race's run has no red"; exit 1; }
grep -q '(run 0 of 50, policy random: ' "$tmp/r0.svg" || { echo "sim --run 0: not titled run 0"; exit 1; }
grep -q '^tests/malformed/alloc_live.hcq:8:1: error' "$tmp/err.txt" || { echo "sim: bad input: want file:line"; cat "$tmp/err.txt"; exit 1; }
grep -q "race observed" "$tmp/a.txt"
python3 - "$tmp/t.json" "$tmp/t.svg" "$tmp/c.json" <<'PY'
import json, sys, xml.etree.ElementTree as ET
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
assert isinstance(ev, list) and ev, "traceEvents: a non-empty array"
flows, slices = {}, {}
for e in ev:
    assert e["ph"] in ("M", "X", "i", "s", "f"), e
    assert isinstance(e["name"], str) and isinstance(e["pid"], int) and isinstance(e["tid"], int), e
    if e["ph"] == "M":
        assert e["name"] in ("process_name", "thread_name", "thread_sort_index") and "args" in e, e
        continue
    assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
    if e["ph"] == "X":
        assert e["dur"] >= 0, e
        slices.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    if e["ph"] == "i":
        assert e["s"] in ("t", "p", "g"), e
    if e["ph"] in ("s", "f"):
        flows.setdefault(e["id"], []).append(e["ph"])
assert flows, "flow arrows from signals to the waits they released"
for i, phs in flows.items():
    assert sorted(phs) == ["f", "s"], (i, phs)
for tid, ss in slices.items():  # a track's slices nest or are apart
    ss.sort()
    for (a0, a1), (b0, b1) in zip(ss, ss[1:]):
        assert b0 >= a1 - 1e-9 or b1 <= a1 + 1e-9, (tid, (a0, a1), (b0, b1))
assert any("race" in e.get("cat", "") for e in ev), "the racing accesses are marked"
svg = ET.parse(sys.argv[2]).getroot()
assert svg.tag.endswith("svg") and len(svg.findall(".//{http://www.w3.org/2000/svg}rect")) > 3
c = json.load(open(sys.argv[3]))
assert c["soundness_violations"] == 0 and c["races"] and c["races"][0]["manifested"], c
PY
# The overwritten candidate's hang is a lost wakeup (contract v3): predicted, and it manifests.
"$qvet" sim --compare --runs 100 --format json corpus/sim_disagree_overwritten_candidate.hcq | python3 -c '
import json, sys
c = json.load(sys.stdin)
assert c["soundness_violations"] == 0 and c["lost_wakeups"] and c["lost_wakeups"][0]["manifested"], c' ||
  { echo "sim_disagree_overwritten_candidate: its lost wakeup is not predicted, or never hangs"; exit 1; }
! "$qvet" sim --compare --runs 100 --format json corpus/race_group_lists_all_lines.hcq | grep -q '"kind": "race-unlisted"' ||
  { echo "race_group_lists_all_lines: the race's message does not list every line again"; exit 1; }
"$qvet" check corpus/race_group_lists_all_lines.hcq | grep -q "the same holds for 1 earlier command(s) of queue q0 (line 15)" ||
  { echo "race_group_lists_all_lines: the grouped message does not list line 15"; exit 1; }
# The SVG renders: a headless Chromium screenshot with enough non-white pixels.
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium" ]; then
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --screenshot="$tmp/t.png" --window-size=1320,200 "file://$tmp/t.svg" >/dev/null 2>&1
  convert "$tmp/t.png" ppm:- >"$tmp/t.ppm"
  python3 - "$tmp/t.ppm" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
parts = data.split(maxsplit=4)
assert parts[0] == b"P6", parts[0]
w, h, pixels = int(parts[1]), int(parts[2]), parts[4]
colored = sum(1 for i in range(0, len(pixels) - 2, 3) if pixels[i:i + 3] != b"\xff\xff\xff")
assert colored > w * h // 50, f"the screenshot is nearly blank ({colored} non-white pixels)"
PY
else
  echo "chromium not installed: the SVG was checked as XML only"
fi
echo "sim CLI: ok"
