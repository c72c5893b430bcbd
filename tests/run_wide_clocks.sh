#!/usr/bin/env bash
# Clocks that hear of thousands of queues: a chain of waits across 10,000 queues, and a host
# that waits on each queue before it submits to the next (qvet gen --shape queue-chain,
# host-chain). Every event knows of every earlier queue; stored clocks share their trees
# (model/clock.h), so the peak stays linear: about 100 MiB here, where one entry per queue per
# stored clock took 3 GiB and more. The bound is loose (sanitizer builds use more), not a timing.
set -u
qvet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for shape in queue-chain host-chain; do
  "$qvet" gen --shape "$shape" --commands 30000 -o "$tmp/$shape.hcq" || exit 1
  out=$("$qvet" check --stats "$tmp/$shape.hcq" 2>&1); rc=$?
  mib=$(sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' <<<"$out")
  if [ "$rc" != 0 ] || [ -z "$mib" ] || [ "$mib" -gt 1000 ]; then
    echo "FAIL $shape: exit $rc (want 0: no finding), peak ${mib:-?} MiB (want <= 1000)"; tail -3 <<<"$out"; fail=1
  else
    echo "ok $shape: peak $mib MiB"
  fi
done
exit $fail
