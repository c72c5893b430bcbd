#!/usr/bin/env bash
# `qvet check --witness=FILE` schedules replayed by `qvet sim --policy witness`: for every
# param-free corpus program with a race, each schedule must replay exactly, with the two
# accesses overlapping. The programs listed below are known not to (docs/simulator.md says why);
# they must keep failing, so that a fix is noticed and the list shrinks.
set -eu
qvet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
known=" eager_amd_bug diff_seed9381 "
bad=0 replayed=0
for f in corpus/*.hcq; do
  grep -q '^param' "$f" && continue  # a witness holds for the binding it was found with
  n=$(basename "$f" .hcq)
  "$qvet" check --witness="$tmp/w.json" "$f" >/dev/null 2>&1 || true
  grep -q '"schedule"' "$tmp/w.json" 2>/dev/null || continue
  set +e
  "$qvet" sim --policy witness --witness="$tmp/w.json" "$f" >"$tmp/out.txt" 2>&1
  rc=$?
  set -e
  case "$known" in
    *" $n "*) [ $rc = 1 ] || { echo "$n: replays now (rc $rc): take it off the known list"; bad=1; } ;;
    *) if [ $rc = 0 ]; then replayed=$((replayed + 1)); else echo "$n: rc $rc"; cat "$tmp/out.txt"; bad=1; fi ;;
  esac
  rm -f "$tmp/w.json"
done
[ "$replayed" -ge 15 ] || { echo "only $replayed programs replayed"; bad=1; }
echo "witness replay: $replayed programs replayed exactly"
exit $bad
