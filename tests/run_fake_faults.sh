#!/usr/bin/env bash
# Injected driver faults (the stand-ins' QVET_FAKE_FAULT, docs/replay.md): each gives one line naming
# the call and the error and exit 4, or, for a wait that never completes, a hang of that wait
# released by the watchdog; never a hang of qvet, and everything created is released (the stand-in
# exits 70 naming what was not; the sanitized build's leak checker sees the rest).
#   tests/run_fake_faults.sh QVET FAKE_DRIVER_DIR "cuda hip"   (the stand-ins this build has)
set -u
qvet=$1 dir=$2 apis=" $3 "
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "fake-faults: $*"; cat "$tmp/e.txt" "$tmp/o.txt" 2>/dev/null; exit 1; }
export QVET_CUDA_LIBRARY=$dir/libcuda.so.1 QVET_HIP_LIBRARY=$dir/libamdhip64.so.6
amd=corpus/eager_amd_fixed.hcq nv=corpus/eager_nv_fixed.hcq
# run API FAULT FILE [ENV...]: qvet run with the fault injected; rc, o.txt and e.txt left behind.
run() {
  local api=$1 fault=$2 file=$3
  shift 3
  rc=skip
  [[ $apis == *" $api "* ]] || return 0
  env QVET_FAKE_FAULT="$fault" "$@" timeout 60 "$qvet" run --on "$api" --runs 3 --timeout-ms 300 "$file" >"$tmp/o.txt" 2>"$tmp/e.txt"
  rc=$?
  [ $rc != 124 ] || fail "$api $fault: qvet hung"
  [ $rc != 70 ] || fail "$api $fault: the driver's objects were not all released"
}
# error API FAULT WANT [ENV...]: exit 4 and one line containing WANT.
error() {
  local api=$1 fault=$2 want=$3
  shift 3
  run "$api" "$fault" "$amd" "$@"
  [ $rc = skip ] && return 0
  [ $rc = 4 ] || fail "$api $fault: want exit 4, got $rc"
  [ "$(wc -l <"$tmp/e.txt")" = 1 ] || fail "$api $fault: want one line"
  grep -qF -- "$want" "$tmp/e.txt" || fail "$api $fault: want '$want'"
  echo "$api $fault: $(cat "$tmp/e.txt")"
}
# The fault-free replay first: what the faults are measured against.
for api in cuda hip; do
  run "$api" "" "$amd"
  [ $rc = skip ] || [ $rc = 0 ] || fail "$api: a clean replay exits $rc"
done
error cuda cuInit:CUDA_ERROR_NOT_INITIALIZED "device not available: cuda: cuInit failed: CUDA_ERROR_NOT_INITIALIZED"
error cuda "" "reports no CUDA device" QVET_FAKE_DEVICES=0
error cuda cuMemHostAlloc:CUDA_ERROR_OUT_OF_MEMORY "cuMemHostAlloc failed: CUDA_ERROR_OUT_OF_MEMORY"
error cuda cuStreamCreate:CUDA_ERROR_OUT_OF_MEMORY#2 "cuStreamCreate failed: CUDA_ERROR_OUT_OF_MEMORY"
error cuda cuModuleLoadData:CUDA_ERROR_INVALID_IMAGE "cuModuleLoadData (the probe kernel's PTX"
error cuda "cuLaunchKernel:CUDA_ERROR_LAUNCH_FAILED#9" "device failed in run 1: cuda: cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED"
error cuda "cuLaunchKernel:CUDA_ERROR_ILLEGAL_ADDRESS#9" "device failed in run 1: cuda: cuStreamQuery failed: CUDA_ERROR_ILLEGAL_ADDRESS"
error cuda "cuStreamWriteValue32:CUDA_ERROR_INVALID_VALUE#4" "cuStreamWriteValue32 failed: CUDA_ERROR_INVALID_VALUE"
error hip hipInit:hipErrorNotInitialized "device not available: hip: hipInit failed: hipErrorNotInitialized"
error hip "" "hipGetDeviceCount failed: hipErrorNoDevice" QVET_FAKE_DEVICES=0
error hip hipHostMalloc:hipErrorOutOfMemory "hipHostMalloc failed: hipErrorOutOfMemory"
error hip "" "accepts none of the embedded code objects" QVET_FAKE_GFX=gfx942
error hip "hipModuleLaunchKernel:hipErrorLaunchFailure#9" "device failed in run 1: hip: hipModuleLaunchKernel failed: hipErrorLaunchFailure"
error hip "hipModuleLaunchKernel:hipErrorIllegalAddress#9" "device failed in run 1: hip: hipStreamQuery failed: hipErrorIllegalAddress"
# A wait that never completes (its word already satisfies it): the watchdog releases it with a
# new value, the run reports the hang of that wait, and --compare counts it as unpredicted.
for hang in "cuda cuStreamWaitValue32:hang $amd 16:3: hang observed: \`wait tl >= 0\` on c0" \
            "cuda cuStreamWaitValue64:hang#2 $nv 21:3: hang observed: \`wait tl >= 1\`" \
            "hip hipStreamWaitValue32:hang $amd 16:3: hang observed: \`wait tl >= 0\` on c0"; do
  read -r api fault file want <<<"$hang"
  run "$api" "$fault" "$file"
  [ $rc = skip ] && continue
  [ $rc = 1 ] || fail "$api $fault: want exit 1 (a hang observed), got $rc"
  grep -qF "$file:$want" "$tmp/o.txt" || fail "$api $fault: want '$file:$want'"
  grep -q "hung.*; the watchdog wrote tl = " "$tmp/e.txt" || fail "$api $fault: want the watchdog's note"
  echo "$api $fault: $(grep -F "$want" "$tmp/o.txt")"
done
[[ $apis == *" cuda "* ]] || { echo "fake-faults: passed (no cuda stand-in)"; exit 0; }
env QVET_FAKE_FAULT=cuStreamWaitValue32:hang timeout 60 "$qvet" run --on cuda --compare --runs 2 --timeout-ms 300 "$amd" >"$tmp/o.txt" 2>"$tmp/e.txt"
rc=$?
[ $rc = 1 ] || fail "--compare with a hang: want exit 1, got $rc"
grep -q "violation \[hang\] $amd:16: .wait tl >= 0. on c0" "$tmp/o.txt" || fail "--compare: want the hang of line 16 as a violation"
echo "fake-faults: all passed"
