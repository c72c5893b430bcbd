#!/usr/bin/env python3
"""Writes the hand-made AMD SDMA streams of corpus/encoded/ and tests/malformed/ (docs/encoded.md, "AMD SDMA").

The packets follow the layouts tinygrad's AMDCopyQueue emits (wait = POLL_REGMEM, signal = FENCE +
TRAP, copy = COPY_LINEAR, timestamp = TIMESTAMP GET_GLOBAL, bind = INDIRECT after NOP padding;
GCR_REQ around copies as older versions emit it), written out here field by field from the SDMA
packet headers' layouts, not produced by qvet. The PM4 compute streams beside them come from
make_streams.py's Stream. Each program's .hcq is written next to its streams with its `# expect:`
lines, whose places are FILE:DWORD, the 1-based dword number in a stream file. The outputs are
committed; CTest regenerates nothing. Run from anywhere: python3 corpus/encoded/make_sdma_streams.py
"""
import os, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # importing make_streams leaves no __pycache__ here
sys.path.insert(0, HERE)
from make_streams import Stream as Pm4Stream, write, A, B, HIN, TL, S1, S2, KARGS, K_STEP  # noqa: E402

MALFORMED = os.path.join(HERE, "..", "..", "tests", "malformed")

# Ops and sub-ops (devices/amd/sdma_packets.h holds the decoder's copy).
OP_NOP, OP_COPY, OP_INDIRECT, OP_FENCE, OP_TRAP, OP_POLL_REGMEM, OP_TIMESTAMP, OP_GCR_REQ = 0, 1, 4, 5, 6, 8, 13, 17
SUB_COPY_LINEAR, SUB_TIMESTAMP_GET_GLOBAL = 0, 2
FUNC_EQ, FUNC_GE = 3, 5
HDP_FLUSH_REQ, HDP_FLUSH_DONE = 0x106, 0x107
HOUT = 0x1003_0000
IB = 0x4001_0000


def lo(x): return x & 0xFFFFFFFF
def hi(x): return x >> 32


class Sdma:
    """An SDMA dword stream that remembers the dword number (1-based) of each command it emits."""

    def __init__(self):
        self.dw, self.at = [], {}

    def mark(self, name):
        if name: self.at[name] = len(self.dw) + 1

    def q(self, *dws):
        self.dw += [d & 0xFFFFFFFF for d in dws]

    def nop(self, n=1):  # n one-dword NOPs: zero dwords, as tinygrad pads
        self.q(*([0] * n))

    def wait(self, addr, ref, name=None):
        self.mark(name)
        # header: op, func (30:28) >=, mem_poll (31); addr lo, hi; reference; mask; interval 4 | retry 0xfff << 16
        self.q(OP_POLL_REGMEM | (FUNC_GE << 28) | (1 << 31), lo(addr), hi(addr), ref, 0xFFFFFFFF, 4 | (0xFFF << 16))

    def hdp_flush(self):
        # header: op, hdp_flush (26), func ==; the done and request registers (byte offsets), reference, mask, dw5
        self.q(OP_POLL_REGMEM | (1 << 26) | (FUNC_EQ << 28), HDP_FLUSH_DONE << 2, HDP_FLUSH_REQ << 2, 1, 1, 10 | (0xFFF << 16))

    def gcr(self, control):
        # header, base VA, GCR control 15:0 << 16 | base VA hi, limit VA, limit VA hi | vmid
        self.q(OP_GCR_REQ, 0, (control & 0xFFFF) << 16, 0xFFFFFF80, 0xFFFF)

    def copy(self, dst, src, size, name=None):
        self.gcr(0x4000 | 0x0020)  # GL2 and GLM invalidate before, as older tinygrad brackets a copy
        self.mark(name)
        # header: op | sub-op << 8; count = bytes - 1; parameter 0; src lo, hi; dst lo, hi
        self.q(OP_COPY | (SUB_COPY_LINEAR << 8), size - 1, 0, lo(src), hi(src), lo(dst), hi(dst))
        self.gcr(0x8000)  # GL2 write-back after

    def signal(self, addr, value, name=None):
        self.mark(name)
        self.q(OP_FENCE | (3 << 16), lo(addr), hi(addr), value)  # MTYPE 3 (gfx10+)
        self.q(OP_TRAP, 0)  # interrupt context 0, as on an AM device

    def timestamp(self, addr, name=None):
        self.mark(name)
        self.q(OP_TIMESTAMP | (SUB_TIMESTAMP_GET_GLOBAL << 8), lo(addr), hi(addr))

    def indirect(self, addr, ndw):
        # The packet must end on an 8-dword boundary: NOPs before it (tinygrad's _submit).
        self.nop((8 - (len(self.dw) + 6) % 8) % 8)
        self.q(OP_INDIRECT, lo(addr), hi(addr), ndw, 0, 0)

    def bytes(self):
        return struct.pack("<%dI" % len(self.dw), *self.dw)


HEAD = """device gpu0 amd
buffer hin on host 4K at 0x10020000
buffer a on gpu0 4K at 0x10000000
buffer b on gpu0 4K at 0x10010000
buffer hout on host 4K at 0x10030000
signal tl on host = 0 at 0x20000000
kernel step at 0x70001000 args(reads, writes, -)
region kargs at 0x30000000 file "kargs.bin"
"""


def program(name, comment, expect, body):
    text = "".join("# " + l + "\n" for l in comment.strip().split("\n")) + "".join("# expect: %s\n" % e for e in expect) + body
    with open(os.path.join(HERE, name + ".hcq"), "w") as f: f.write(text)


def corpus():
    # 1. tinygrad's copy-in / compute / copy-out on one device: the copy queue's batches lie in an
    #    indirect buffer each (bind), the compute queue's stream is PM4. Every step waits for the last.
    inb, outb = Sdma(), Sdma()
    inb.wait(TL, 0)
    inb.hdp_flush()
    inb.copy(A, HIN, 0x1000)
    inb.timestamp(TL + 8)
    inb.signal(TL, 1)
    inb.nop((8 - len(inb.dw) % 8) % 8)  # bind rounds the queue up to 8 dwords
    outb.wait(TL, 2)
    outb.copy(HOUT, B, 0x1000)
    outb.signal(TL, 3)
    outb.nop((8 - len(outb.dw) % 8) % 8)
    write(HERE, "sdma_eager_ib.bin", inb.bytes() + bytes(0x100 - 4 * len(inb.dw)) + outb.bytes())
    ring_in, ring_out = Sdma(), Sdma()
    ring_in.indirect(IB, len(inb.dw))
    ring_out.indirect(IB + 0x100, len(outb.dw))
    write(HERE, "sdma_eager_in.sdma", ring_in.bytes())
    write(HERE, "sdma_eager_out.sdma", ring_out.bytes())
    c = Pm4Stream()
    c.wait(TL, 1)
    c.exec(K_STEP, KARGS + 0x40)  # step reads a, writes b
    c.signal(TL, 2)
    write(HERE, "sdma_eager_c0.pm4", c.bytes())
    program("sdma_eager_fixed", """
tinygrad's eager pattern on amd with SDMA (devices/amd/sdma.cpp, docs/encoded.md): the copy queue's
batches are INDIRECT buffers (bind) of POLL_REGMEM, HDP flush, GCR_REQ + COPY_LINEAR + GCR_REQ,
TIMESTAMP, FENCE + TRAP; the compute queue's is PM4. Each step waits for the one before: clean.""", ["clean"],
            HEAD + 'region sdma_ib at 0x40010000 file "sdma_eager_ib.bin"\nqueue c0 on gpu0 compute\nqueue x0 on gpu0 copy\n\n'
            'write hin\nsubmit x0 stream amd-sdma "sdma_eager_in.sdma"\nsubmit c0 stream amd-pm4 "sdma_eager_c0.pm4"\n'
            'submit x0 stream amd-sdma "sdma_eager_out.sdma"\nwait tl >= 3\nread hout\n')

    # 2. An SDMA copy racing a dispatch: the copy queue's stream lacks the POLL_REGMEM for the
    #    compute queue's release, so its copy out of b runs while the dispatch writes b.
    for fixed in (False, True):
        c, x = Pm4Stream(), Sdma()
        c.exec(K_STEP, KARGS + 0x40, name="produce")  # writes b
        c.signal(S1, 1)
        if fixed: x.wait(S1, 1)
        x.copy(HOUT, B, 0x1000, name="copy")  # reads b
        x.signal(S2, 1)
        n = "sdma_copy_race_" + ("fixed" if fixed else "bug")
        write(HERE, n + "_c0.pm4", c.bytes())
        write(HERE, n + "_x0.sdma", x.bytes())
        program(n, ("The copy queue's stream begins with POLL_REGMEM s1 >= 1, the compute queue's release: clean." if fixed else
                    "An SDMA copy racing a dispatch: the copy queue's COPY_LINEAR reads b, which the compute queue's\n"
                    "dispatch writes, and the SDMA stream has no POLL_REGMEM for the dispatch's release: a race between\n"
                    "dword %d of the SDMA stream and dword %d of the PM4 stream." % (x.at["copy"], c.at["produce"])),
                ["clean"] if fixed else ["race@{0}_x0.sdma:{1},{0}_c0.pm4:{2}".format(n, x.at["copy"], c.at["produce"])],
                HEAD + "signal s1 on gpu0 = 0 at 0x20000100\nsignal s2 on gpu0 = 0 at 0x20000200\n"
                'queue c0 on gpu0 compute\nqueue x0 on gpu0 copy\n\n'
                'submit c0 stream amd-pm4 "%s_c0.pm4"\nsubmit x0 stream amd-sdma "%s_x0.sdma"\n'
                'wait s1 >= 1\nwait s2 >= 1\nread hout\n' % (n, n))

    # 3. A 32-bit fence wrap: FENCE writes 32 bits, so timeline value 2^32 lands as 0.
    for fixed in (False, True):
        x = Sdma()
        x.copy(HOUT, A, 0x1000)
        x.signal(TL, 0xFFFFFFFF if fixed else 0)  # the value 2^32, truncated to the FENCE's 32 bits
        n = "sdma_fence_wrap_" + ("fixed" if fixed else "bug")
        write(HERE, n + ".sdma", x.bytes())
        head = HEAD.replace("signal tl on host = 0 at", "signal tl on host = %s at" % ("0xfffffffe" if fixed else "0xffffffff"))
        body = head + 'queue x0 on gpu0 copy\n\nsubmit x0 stream amd-sdma "%s.sdma"\n' % n
        line = body.count("\n") + 1 + 3  # the host wait's line (after the 2 comment lines and the expect line)
        body += "wait tl >= %s\nread hout\n" % ("0xffffffff" if fixed else "2^32")
        program(n, ("The timeline stays below 2^32: the FENCE of 0xffffffff is what the host waits for: clean."
                    if fixed else
                    "A 32-bit fence wrap on SDMA: the timeline is at 0xffffffff and the runtime releases 2^32, but\n"
                    "FENCE carries 32 bits: the word becomes 0 and the host's 64-bit wait never ends."),
                ["clean"] if fixed else ["deadlock@%d" % line], body)


def malformed():
    def case(name, stream, expect_dword):
        write(MALFORMED, name + ".sdma", stream)
        with open(os.path.join(MALFORMED, name + ".hcq"), "w") as f:
            f.write("# error-at: %s.sdma:%d\n" % (name, expect_dword) + HEAD.replace('region kargs at 0x30000000 file "kargs.bin"\n', "") +
                    'queue x0 on gpu0 copy\nsubmit x0 stream amd-sdma "%s.sdma"\n' % name)
    s = Sdma(); s.wait(TL, 0); s.signal(TL, 1)
    case("sdma_truncated", s.bytes()[:-12], 7)  # the FENCE at dword 7 loses its data; the TRAP is gone
    s = Sdma(); s.wait(TL, 0); s.q(0x99, 0, 0); s.signal(TL, 1)
    case("sdma_bad_op", s.bytes(), 7)
    s = Sdma(); s.q(OP_COPY | (3 << 8), 0, 0, 0, 0, 0, 0)  # COPY sub-op 3 (SOA): not decoded
    case("sdma_bad_subop", s.bytes(), 1)
    s = Sdma(); s.wait(TL, 0); s.signal(TL + 0x40, 1)
    case("sdma_unknown_address", s.bytes(), 7)
    s = Sdma(); s.wait(TL, 0); s.copy(B, A + 0x800, 0x1000)  # 4K from the middle of a: past its end
    case("sdma_copy_past_buffer", s.bytes(), 7 + 5)


if __name__ == "__main__":
    corpus()
    malformed()
