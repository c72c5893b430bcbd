#!/usr/bin/env python3
"""libqvet from Python against `qvet check` on the same program's text (not a test).

Builds an eager-like program (4 queues on 2 devices, each with its own timeline signal; each batch
waits for the previous batch's queue, runs a kernel, signals its own) of about N commands through qvet.Recorder, checks it, and times
`qvet check` on the text the same calls write. Best of 3.

Usage: PYTHONPATH=python QVET_LIBRARY=build/libqvet.so.1 bench/api.py build/qvet [N]
"""
import os
import subprocess
import sys
import tempfile
import time

import qvet


def record(n):
    rec = qvet.Recorder("eager")
    p = rec.program
    for d in ("g0", "g1"):
        p.device(d, "nv")
    p.peer("g0", "g1")
    queues = []
    for i in range(4):
        dev = f"g{i % 2}"
        p.buffer(f"b{i}", dev, 4096)
        p.signal(f"t{i}", dev, 0)
        p.queue(f"c{i}", dev, "compute")
        queues.append(rec.queue(f"c{i}"))
    done = [0] * 4  # per queue, the value its signal reached
    for k in range(n // 3):
        q, prev = k % 4, (k + 3) % 4
        queues[q].wait(f"t{prev}", done[prev]).exec(f"k{k % 7}", reads=[f"b{prev}"], writes=[f"b{q}"])
        done[q] += 1
        queues[q].signal(f"t{q}", done[q]).submit()
    for q in range(4):
        p.wait(f"t{q}", done[q])
    return rec


def best(f):
    out = None
    for _ in range(3):
        t = time.perf_counter()
        r = f()
        dt = time.perf_counter() - t
        out = dt if out is None else min(out, dt)
    return out, r


def main():
    cli = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    t_build, rec = best(lambda: record(n))
    t_check, res = best(lambda: rec.check())
    lines = []
    lines_rec = qvet.Recorder("lines")
    # The same text: Program.line is what every method calls, so record it once more, capturing lines.
    orig = qvet.Program.line

    def capture(self, text, tag=None):
        lines.append(text)
        return orig(self, text, tag)

    qvet.Program.line = capture
    record(n)
    qvet.Program.line = orig
    calls = len(lines)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "eager.hcq")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        t_cli, _ = best(lambda: subprocess.run([cli, "check", path], stdout=subprocess.DEVNULL))
    print(f"{n} commands, {calls} calls, {len(res.diagnostics)} diagnostics")
    print(f"python: build {t_build * 1e3:.1f} ms ({t_build / calls * 1e6:.1f} us per call), "
          f"check {t_check * 1e3:.1f} ms, total {(t_build + t_check) * 1e3:.1f} ms")
    print(f"qvet check on the text: {t_cli * 1e3:.1f} ms; ratio {(t_build + t_check) / t_cli:.2f}x")


if __name__ == "__main__":
    main()
