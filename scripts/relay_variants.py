#!/usr/bin/env python3
"""Random relay- and timeline-shaped programs for the differential test (the oracle's random
programs seldom have several queues handing one timeline on, where Engine::derive works).

    scripts/relay_variants.py COUNT SEED DIR [relay|chain|stray|many|relay-many]
    build/qvet_differential --files DIR/*.hcq

Queue i waits for s >= i (give or take one), does up to three random things (more waits on s or
t, execs, writes of s or t) and signals s = i + 1; queues may be submitted in any order, the host
may write a signal between submits and wait at the end. Program k uses seed SEED + k.

`chain`: queue i is released by a timeline t (wait t >= i, give or take one) and hands it on
(signal t = i + 1) after random waits and writes of other signals, with low, repeated values, so
that those signals are no timeline and their waits hang on t's (derive across signals, foresee).

`stray`: chain programs with one to three more queues, each writing s once or twice out of the
relay, some after a wait of their own: waits and writes that know every write of s but a few
writers' (Engine::unknown_writers, resolve_unlisted).

`many`: more unordered writers of one signal than Engine::kLatest (64), for the paths where a
clock is asked only of the writers whose queues it knows (Engine::known_latest, knows_no_write,
Clock::any_known_queue and the signals its tree nodes remember). 65 to 80 queues write s once (1,
2 or 3; some after a wait on t); two to five more wait on s or t, write them and run an exec on
one buffer. Queue ids are shuffled, so writers and waiters share every subtree of a clock. (A bug
that let a write's end remember "no write of s" before that write counted as made disagreed with
the oracle on 331 of 3,000.)

`relay-many`: queues q0..qk handed on by t (wait t >= i; signal t = i + 1), each with random waits
on s (thresholds 0 to 4), writes of s and execs, and 65 to 90 stray queues writing s (0 to 3, once
or twice, a few after a wait on t, some submitted between the relay's); the host may write s or
wait on it between submits; strict, amd (32-bit) or nv queues, ids shuffled. Each relay wait knows
a few latest writes of s among many it does not (Engine::resolve_unlisted_many, the clock tree's
cached bounds and stamped "none here" tags).
"""
import os
import random
import sys


def header(r, k, signals):
    """A device of a random kind, a buffer, the signals' declarations and k queues."""
    return ([f"device g {r.choice(['nv', 'amd', 'strict'])}", f"buffer a on g {16 * (k + 2)}"] +
            [f"signal {name} on host = {init}" for name, init in signals(r)] +
            [f"queue q{i} on g compute" for i in range(k)])


def submit_order(r, k, p):
    order = list(range(k))
    if r.random() < p:
        r.shuffle(order)
    return order


def random_exec(r, k):
    x = 16 * r.randint(0, k)
    return f"  exec k {r.choice(['reads', 'writes'])} a[{x}:{x + 16}]"


def program(r):
    k = r.randint(2, 8)
    lines = header(r, k, lambda r: [("s", 0), ("t", 0)])
    order = submit_order(r, k, 0.3)
    for i in order:
        lines += [f"submit q{i} {{", f"  wait s >= {max(i + r.choice([0, 0, 0, -1, 1]), 0)}"]
        for _ in range(r.randint(0, 3)):
            c = r.random()
            if c < 0.4:
                lines.append(f"  wait {r.choice(['s', 's', 't'])} >= {max(0, i + r.choice([-1, 0, 0, 1]))}")
            elif c < 0.7:
                lines.append(random_exec(r, k))
            elif c < 0.85:
                lines.append(f"  signal {r.choice(['s', 't'])} = {max(0, i + r.choice([0, 1, -1]))}")
            else:
                p = 16 * max(i - 1, 0)
                lines.append(f"  exec k reads a[{p}:{p + 16}] writes a[{16 * i}:{16 * i + 16}]")
        lines += [f"  signal s = {i + 1}", "}"]
        if r.random() < 0.1:
            lines.append(f"signal {r.choice(['s', 't'])} = {r.randint(0, k)}")
    if r.random() < 0.3:
        lines.append(f"wait s >= {r.randint(0, k)}")
    return "\n".join(lines) + "\n"


def stray_submit(r, x):
    """Queue x{x}: maybe a wait, then one or two writes of s."""
    ops = [f"  wait {r.choice(['s', 't', 'u'])} >= {r.randint(0, 3)}"] if r.random() < 0.4 else []
    ops += [f"  signal s = {r.randint(0, 3)}" for _ in range(r.randint(1, 2))]
    return [f"submit x{x} {{"] + ops + ["}"]


def chain_program(r, strays=0):
    k = r.randint(2, 9)
    lines = header(r, k, lambda r: [("s", r.choice([0, 1])), ("t", 0), ("u", 0)])
    lines += [f"queue x{x} on g compute" for x in range(strays)]
    order = submit_order(r, k, 0.2)
    stray_at = sorted(r.randint(0, k) for _ in range(strays))
    for n, i in enumerate(order):
        while stray_at and stray_at[0] == n:
            lines += stray_submit(r, strays - len(stray_at))
            stray_at.pop(0)
        lines += [f"submit q{i} {{", f"  wait t >= {max(i + r.choice([0, 0, 0, 0, -1, 1]), 0)}"]
        ops = []
        for _ in range(r.randint(1, 4)):
            c = r.random()
            if c < 0.45:
                ops.append(f"  wait {r.choice(['s', 's', 'u'])} >= {r.randint(0, 3)}")
            elif c < 0.6:
                ops.append(random_exec(r, k))
            else:
                ops.append(f"  signal {r.choice(['s', 's', 'u'])} = {r.randint(0, 3)}")
        ops.insert(r.randint(len(ops) // 2, len(ops)), f"  signal t = {i + 1}")
        lines += ops + ["}"]
        if r.random() < 0.1:
            lines.append(f"signal {r.choice(['s', 'u'])} = {r.randint(0, 3)}")
    while stray_at:
        lines += stray_submit(r, strays - len(stray_at))
        stray_at.pop(0)
    if r.random() < 0.3:
        lines.append(f"wait s >= {r.randint(0, 3)}")
    return "\n".join(lines) + "\n"


def many_writers_program(rng):
    """`many`: see the module's docstring."""
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


def relay_many_program(rng):
    """`relay-many`: see the module's docstring."""
    kind = rng.choice(["strict", "strict", "amd", "nv"])
    k, writers = rng.randint(3, 12), rng.randint(65, 90)
    names = [f"q{i}" for i in range(k)] + [f"st{j}" for j in range(writers)]
    rng.shuffle(names)
    p = f"device g {kind}\nbuffer a on g 4K\nsignal s on host = {rng.choice([0, 0, 1])}\nsignal t on host = 0\n"
    p += "".join(f"queue {x} on g compute\n" for x in names)
    stray = lambda j: (f"submit st{j} {{\n" + (f"  wait t >= {rng.randint(1, k)}\n" if rng.random() < 0.15 else "") +
                       "".join(f"  signal s = {rng.choice([0, 1, 1, 2, 3])}\n" for _ in range(rng.choice([1, 1, 1, 2]))) + "}\n")
    late = [j for j in range(writers) if rng.random() < 0.2]
    for j in range(writers):
        if j not in late: p += stray(j)
    for i in range(k):
        body = f"  wait t >= {i}\n"
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            if op < 0.5: body += f"  wait s >= {rng.choice([0, 1, 1, 2, 3, 4])}\n"
            elif op < 0.75: body += f"  signal s = {rng.choice([1, 1, 2, 3])}\n"
            else: body += f"  exec k{i} {rng.choice(['reads', 'writes'])} a[{16 * i}:{16 * i + 16}]\n"
        p += f"submit q{i} {{\n{body}  signal t = {i + 1}\n}}\n"
        if rng.random() < 0.1: p += f"signal s = {rng.randint(0, 3)}\n"
        if rng.random() < 0.1: p += f"wait s >= {rng.randint(0, 3)}\n"
        if late and rng.random() < 0.3: p += stray(late.pop())
    for j in late: p += stray(j)
    if rng.random() < 0.3: p += f"wait t >= {k}\n"
    return p


def main():
    makers = {"relay": program, "chain": chain_program, "stray": lambda r: chain_program(r, r.randint(1, 3)),
              "many": many_writers_program, "relay-many": relay_many_program}
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] not in makers):
        sys.exit(__doc__)
    count, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    make = makers[sys.argv[4] if len(sys.argv) == 5 else "relay"]
    os.makedirs(out, exist_ok=True)
    for n in range(count):
        with open(os.path.join(out, f"p{n}.hcq"), "w") as f:
            f.write(make(random.Random(seed + n)))


if __name__ == "__main__":
    main()
