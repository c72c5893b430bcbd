#!/usr/bin/env bash
# scripts/gpu-check.sh end to end on the stand-in drivers (docs/replay.md): every corpus program
# replayed through `qvet run --on API --compare`, the script's report produced, no soundness
# violation and no device error, and predicted races observed as data in some runs.
#   tests/run_fake_gpu_check.sh QVET cuda|hip FAKE_DRIVER_DIR RUNS
set -u
qvet=$1 api=$2 dir=$3 runs=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "fake-gpu-check ($api): $*"; exit 1; }
export QVET_CUDA_LIBRARY=$dir/libcuda.so.1 QVET_HIP_LIBRARY=$dir/libamdhip64.so.6
QVET_GPU_CHECK_ON=$api QVET_GPU_QVET=$qvet QVET_GPU_TIMEOUT_MS=1000 scripts/gpu-check.sh "$tmp/out" "$runs" >"$tmp/log.txt" 2>&1
rc=$?
tail -1 "$tmp/log.txt"
[ $rc = 0 ] || { cat "$tmp/out/report.md" 2>/dev/null | grep -A40 "soundness violation or an error"; fail "gpu-check exit $rc"; }
python3 - "$tmp/out/report.json" "$api" <<'PY' || fail "report"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["totals"]
assert r["backend"] == sys.argv[2], r["backend"]
assert len(r["programs"]) > 100, len(r["programs"])
assert t["soundness_violations"] == 0, t
assert t["ordering_checks"] > 1000, t
assert t["races_observed"] > 0, t  # concurrent streams: races show as data
for p in r["programs"]:
    assert p["exit"] in ("0", "1", "skipped") and "error" not in p, p
print(f"{len(r['programs'])} programs, {t['ordering_checks']} ordering checks, {t['races_observed']} of {t['races_predicted']} predicted races observed")
PY
