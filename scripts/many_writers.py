#!/usr/bin/env python3
"""Random programs with more unordered writers of one signal than Engine::kLatest (64), for the
differential test: the paths where a clock is asked only of the writers whose queues it knows
(Engine::known_latest, knows_no_write, Clock::any_known_queue and the signals its tree nodes
remember). The oracle's random programs have a handful of queues.

    scripts/many_writers.py COUNT SEED DIR
    build/qvet_differential --files DIR/*.hcq

65 to 80 queues write s once (1, 2 or 3; some after a wait on t); two to five more queues wait on
s or t, write them and run an exec on one buffer. Queue ids are shuffled, so writers and waiters
share the subtrees of every clock. Program k uses seed SEED + k. (A bug that let a write's end
remember "no write of s" before that write counted as made disagreed on 331 of 3,000.)
"""
import os
import random
import sys


def program(rng):
    writers, mains = rng.randint(65, 80), rng.randint(2, 5)
    names = [f"st{j}" for j in range(writers)] + [f"m{i}" for i in range(mains)]
    rng.shuffle(names)
    p = "device g strict\nbuffer a on g 4K\nsignal s on host = 0\nsignal t on host = 0\n"
    p += "".join(f"queue {x} on g compute\n" for x in names)
    for j in range(writers):
        wait = f"  wait t >= {rng.randint(1, 3)}\n" if rng.random() < 0.1 else ""
        p += f"submit st{j} {{\n{wait}  signal s = {rng.choice([1, 1, 2, 3])}\n}}\n"
    for i in range(mains):
        body = ""
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            if op < 0.4: body += f"  wait s >= {rng.randint(1, 6)}\n"
            elif op < 0.6: body += f"  wait t >= {rng.randint(0, 3)}\n"
            elif op < 0.8: body += f"  signal s = {rng.randint(1, 6)}\n"
            else: body += f"  signal t = {rng.randint(1, 3)}\n"
        body += f"  exec k{i} {'writes' if rng.random() < 0.5 else 'reads'} a\n"
        p += f"submit m{i} {{\n{body}}}\n"
    return p


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: scripts/many_writers.py COUNT SEED DIR")
    count, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    for k in range(count):
        with open(os.path.join(out, f"p{k}.hcq"), "w") as f:
            f.write(program(random.Random(seed + k)))


if __name__ == "__main__":
    main()
