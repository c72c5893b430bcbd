#!/usr/bin/env bash
# Chains as deep as the program: 50,000 execs of one queue each hide the previous writer of a
# buffer (checkers/shadow.h HiddenList) and the visibility rule's write nodes chain the same way;
# a read on another queue races with all of them. Under a 1 MiB stack, neither taking the chain
# apart nor walking it may recurse: exit 1 (the race), never a crash.
set -u
qvet=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/deep.hcq" <<'HCQ'
device gpu0 amd
buffer a on gpu0 4K
queue c0 on gpu0 compute
queue c1 on gpu0 compute
repeat i in 0..49999 {
  submit c0 {
    exec k writes a
  }
}
submit c1 {
  exec r reads a
}
HCQ
(ulimit -s 1024; "$qvet" check "$tmp/deep.hcq" >"$tmp/out.txt" 2>&1); rc=$?
[ $rc = 1 ] || { echo "deep chain: want exit 1 (a race), got $rc"; tail -5 "$tmp/out.txt"; exit 1; }
grep -q "\[race\]" "$tmp/out.txt" || { echo "deep chain: want the race reported"; exit 1; }
