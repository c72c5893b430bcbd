#!/usr/bin/env bash
# The GPU check: builds qvet, replays the corpus (corpus/ and corpus/encoded/) on an NVIDIA GPU with `qvet run --on cuda
# --compare` (clean programs as they are, programs with errors with --force to observe their
# races; predicted deadlocks are never submitted), and writes a report to OUTDIR:
#   report.md, report.json    per program: runs, ordering checks and edge violations,
#                             soundness violations, races predicted and observed, time
#   json/NAME.json, log/NAME.txt   each program's --compare report and its standard error
#   gpus.txt                  nvidia-smi -L
# The 64-bit wrap and host-wait cases are corpus programs (replay_wrap64_fixed,
# replay_host_wait_fixed) and come first. Meant to finish within 10 minutes on one GPU, build
# included. Exit 0: every program replayed without a soundness violation; 1: some did not;
# 4: no CUDA device (nothing else ran).
#
#   scripts/gpu-check.sh OUTDIR [RUNS]
# Environment: QVET_GPU_CHECK_ON=sim|hip (another back end), QVET_GPU_QVET=PATH (a qvet already
# built: no build), QVET_GPU_TIMEOUT_MS (the watchdog's bound, default 2000). With the stand-in
# drivers (QVET_CUDA_LIBRARY, docs/replay.md) the test suite runs this script without a GPU.
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR [RUNS]}
runs=${2:-20}
on=${QVET_GPU_CHECK_ON:-cuda}  # sim: the same check through the sim back end (to try the script without a GPU)
cd "$(dirname "$0")/.."
mkdir -p "$out/json" "$out/log"
start=$(date +%s)
build=${QVET_GPU_BUILD:-build-gpu}
qvet=${QVET_GPU_QVET:-$build/qvet}
if [ -z "${QVET_GPU_QVET:-}" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/log/build.txt" 2>&1 &&
    cmake --build "$build" -j"$(nproc)" --target qvet >>"$out/log/build.txt" 2>&1 || { echo "build failed: $out/log/build.txt"; exit 3; }
fi
timeout_ms=${QVET_GPU_TIMEOUT_MS:-2000}
{ command -v nvidia-smi >/dev/null && nvidia-smi -L || echo "no nvidia-smi"; } >"$out/gpus.txt" 2>&1
echo "$on" >"$out/backend.txt"
if ! "$qvet" run --on "$on" --runs 1 corpus/replay_host_wait_fixed.hcq >/dev/null 2>"$out/log/probe.txt"; then
  if grep -q "device not available" "$out/log/probe.txt"; then cat "$out/log/probe.txt"; exit 4; fi
fi
programs=(corpus/replay_wrap64_fixed.hcq corpus/replay_host_wait_fixed.hcq)
for f in corpus/*.hcq corpus/encoded/*.hcq; do case $f in corpus/replay_*) ;; *) programs+=("$f") ;; esac; done
for f in "${programs[@]}"; do
  n=$(basename "$f" .hcq)
  "$qvet" check "$f" >"$out/log/$n.check.txt" 2>&1
  check_rc=$?
  kind=clean force=()
  if [ $check_rc != 0 ]; then
    if grep -q "\[deadlock\]" "$out/log/$n.check.txt"; then kind=deadlock; else kind=errors force=(--force); fi
  fi
  t0=$(date +%s.%N)
  if [ $kind = deadlock ]; then
    rc=skipped
  else
    timeout 120 "$qvet" run --on "$on" --compare --format json --runs "$runs" --timeout-ms "$timeout_ms" "${force[@]}" "$f" \
      >"$out/json/$n.json" 2>"$out/log/$n.txt"
    rc=$?
  fi
  t1=$(date +%s.%N)
  echo "$n $kind $rc $(echo "$t1 - $t0" | bc)" >>"$out/log/summary.txt"
  echo "$n: $kind, exit $rc"
done
python3 - "$out" "$runs" "$start" <<'PY'
import json, os, sys, time
out, runs, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = []
for line in open(os.path.join(out, "log", "summary.txt")):
    name, kind, rc, secs = line.split()
    row = {"program": name, "kind": kind, "exit": rc, "seconds": round(float(secs), 2)}
    path = os.path.join(out, "json", name + ".json")
    if rc != "skipped" and os.path.getsize(path) > 0:
        try:
            j = json.load(open(path))
            row.update(runs=j["runs"], ordering_checks=j.get("ordering_checks", 0), edge_violations=j.get("edge_violations", 0),
                       soundness_violations=j["soundness_violations"],
                       other_differences=sum(1 for v in j["violations"] if not v["soundness"]),
                       races_predicted=len(j["races"]), races_observed=sum(1 for r in j["races"] if r["manifested"]),
                       violations=[v["kind"] + " line " + str(v["line"]) for v in j["violations"]])
        except ValueError:
            row["error"] = open(os.path.join(out, "log", name + ".txt")).read().strip()[-300:]
    elif rc != "skipped":
        row["error"] = open(os.path.join(out, "log", name + ".txt")).read().strip()[-300:]
    rows.append(row)
gpus = open(os.path.join(out, "gpus.txt")).read().strip()
backend = open(os.path.join(out, "backend.txt")).read().strip()
total = {k: sum(r.get(k, 0) for r in rows) for k in ("ordering_checks", "edge_violations", "soundness_violations", "races_predicted", "races_observed")}
report = {"backend": backend, "gpus": gpus, "runs_per_program": runs, "wall_seconds": int(time.time()) - start, "totals": total, "programs": rows}
json.dump(report, open(os.path.join(out, "report.json"), "w"), indent=2)
md = ["# qvet GPU check", "", f"Back end: `{backend}`; GPUs: `{gpus}`", "", f"{runs} runs per program; {report['wall_seconds']} s in all, build included.", "",
      "| totals | ordering checks | edge violations | soundness violations | races predicted | races observed |", "|---|---|---|---|---|---|",
      f"| | {total['ordering_checks']} | {total['edge_violations']} | {total['soundness_violations']} | {total['races_predicted']} | {total['races_observed']} |", "",
      "| program | kind | exit | runs | ordering checks | edge violations | soundness violations | other differences | races predicted | observed | s |",
      "|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    if r["exit"] == "skipped":
        md.append(f"| {r['program']} | {r['kind']} | never submitted | | | | | | | | |")
    elif "error" in r:
        md.append(f"| {r['program']} | {r['kind']} | {r['exit']} | error: {r['error'].splitlines()[-1] if r['error'] else ''} | | | | | | | {r['seconds']} |")
    else:
        md.append(f"| {r['program']} | {r['kind']} | {r['exit']} | {r['runs']} | {r['ordering_checks']} | {r['edge_violations']} | "
                  f"{r['soundness_violations']} | {r['other_differences']} | {r['races_predicted']} | {r['races_observed']} | {r['seconds']} |")
bad = [r for r in rows if r.get("soundness_violations") or "error" in r]
md += ["", "Programs with a soundness violation or an error:" if bad else "No program had a soundness violation or an error.", ""]
for r in bad:
    md.append(f"- {r['program']}: " + ", ".join(r.get("violations", [])) + (r.get("error", "")))
open(os.path.join(out, "report.md"), "w").write("\n".join(md) + "\n")
print(f"report: {out}/report.md ({len(rows)} programs, {total['soundness_violations']} soundness violations)")
sys.exit(1 if bad else 0)
PY
