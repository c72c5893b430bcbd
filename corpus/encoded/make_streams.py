#!/usr/bin/env python3
"""Writes the hand-made AMD PM4 streams of corpus/encoded/ and tests/malformed/ (docs/encoded.md).

The packets follow the layouts tinygrad's AMDComputeQueue emits (wait, memory_barrier, exec,
signal; bind's INDIRECT_BUFFER), written out here field by field from those layouts, not produced
by qvet. Each program's .hcq is written next to its streams with its `# expect:` lines, whose
places are FILE:DWORD, the 1-based dword number in a stream file. The outputs are committed; CTest
regenerates nothing. Run from anywhere: python3 corpus/encoded/make_streams.py
"""
import os, struct

HERE = os.path.dirname(os.path.abspath(__file__))
MALFORMED = os.path.join(HERE, "..", "..", "tests", "malformed")

# Opcodes and registers (devices/amd/pm4_packets.h holds the decoder's copy).
NOP, DISPATCH_DIRECT, WAIT_REG_MEM, INDIRECT_BUFFER = 0x10, 0x15, 0x3C, 0x3F
EVENT_WRITE, RELEASE_MEM, ACQUIRE_MEM, SET_SH_REG = 0x46, 0x49, 0x58, 0x76
PGM_LO, RSRC1, RSRC3, TMPRING, RESTART_X, USER_DATA_0, RES_LIMITS, START_X = 0x20C, 0x212, 0x228, 0x218, 0x21B, 0x240, 0x215, 0x204
CS_PARTIAL_FLUSH, EVENT_INDEX_PARTIAL_FLUSH = 7, 4
CACHE_FLUSH_AND_INV_TS_EVENT, END_OF_PIPE = 0x14, 5
HDP_FLUSH_REQ, HDP_FLUSH_DONE = 0x106, 0x107


class Stream:
    """A dword stream that remembers the dword number (1-based) of each command it emits."""

    def __init__(self):
        self.dw, self.at = [], {}

    def mark(self, name):
        self.at[name] = len(self.dw) + 1

    def pkt(self, op, *body):
        self.dw += [(3 << 30) | ((len(body) - 1) << 16) | (op << 8)] + [b & 0xFFFFFFFF for b in body]

    def wait(self, addr, ref, name=None):
        if name: self.mark(name)
        self.pkt(WAIT_REG_MEM, (1 << 4) | 5, addr & 0xFFFFFFFF, addr >> 32, ref, 0xFFFFFFFF, 4)

    def acquire_mem(self, full=True):
        gcr = 0x3FF if full else 0x0F0  # GLI/GL2 invalidate left out before a dispatch, as tinygrad does
        self.pkt(ACQUIRE_MEM, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0, gcr)

    def memory_barrier(self, name=None):
        if name: self.mark(name)
        self.pkt(WAIT_REG_MEM, (1 << 6) | 5, HDP_FLUSH_REQ, HDP_FLUSH_DONE, 0xFFFFFFFF, 0xFFFFFFFF, 4)
        self.acquire_mem()

    def exec(self, code, kargs, name=None, flush=True):
        self.acquire_mem(full=False)
        self.pkt(SET_SH_REG, PGM_LO, (code >> 8) & 0xFFFFFFFF, code >> 40)
        self.pkt(SET_SH_REG, RSRC1, 0x60AF0000, 0x0000008C)
        self.pkt(SET_SH_REG, RSRC3, 0)
        self.pkt(SET_SH_REG, TMPRING, 0)
        self.pkt(SET_SH_REG, RESTART_X, 0, 0, 0)
        self.pkt(SET_SH_REG, USER_DATA_0, kargs & 0xFFFFFFFF, kargs >> 32)
        self.pkt(SET_SH_REG, RES_LIMITS, 0)
        self.pkt(SET_SH_REG, START_X, 0, 0, 0, 64, 1, 1, 0, 0)
        if name: self.mark(name)
        self.pkt(DISPATCH_DIRECT, 4, 1, 1, (1 << 0) | (1 << 2) | (1 << 15))
        if flush: self.pkt(EVENT_WRITE, CS_PARTIAL_FLUSH | (EVENT_INDEX_PARTIAL_FLUSH << 8))

    def signal(self, addr, value, name=None):
        if name: self.mark(name)
        gcr = 0x3F << 12
        self.pkt(RELEASE_MEM, CACHE_FLUSH_AND_INV_TS_EVENT | (END_OF_PIPE << 8) | gcr, (1 << 29) | (3 << 24),
                 addr & 0xFFFFFFFF, addr >> 32, value & 0xFFFFFFFF, 0, 0)

    def indirect(self, addr, ndw):
        self.pkt(INDIRECT_BUFFER, addr & 0xFFFFFFFF, addr >> 32, ndw | (1 << 23))

    def bytes(self):
        return struct.pack("<%dI" % len(self.dw), *self.dw)


def write(dirname, name, data):
    with open(os.path.join(dirname, name), "wb") as f: f.write(data)


def kargs(*ptrs):
    return struct.pack("<%dQ" % len(ptrs), *ptrs)


# The address map every program uses.
A, B, HIN = 0x1000_0000, 0x1001_0000, 0x1002_0000
TL, S1, S2 = 0x2000_0000, 0x2000_0100, 0x2000_0200
KARGS = 0x3000_0000
K_FILL, K_STEP, K_USE = 0x7000_0000, 0x7000_1000, 0x7000_2000
IB = 0x4000_0000

HEAD = """device gpu0 amd
buffer hin on host 4K at 0x10020000
buffer a on gpu0 4K at 0x10000000
buffer b on gpu0 4K at 0x10010000
signal tl on host = 0 at 0x20000000
kernel fill at 0x70000000 args(reads, writes)
kernel step at 0x70001000 args(reads, writes, -)
kernel use at 0x70002000 args(reads, writes)
region kargs at 0x30000000 file "kargs.bin"
"""
# fill(hin, a) at +0, step(a, b, 7) at +0x40, use(a, b) at +0x80
KARGS_BIN = kargs(HIN, A) + bytes(0x30) + kargs(A, B, 7) + bytes(0x28) + kargs(A, B)


def program(name, comment, expect, body):
    text = "".join("# " + l + "\n" for l in comment.strip().split("\n")) + "# expect: " + expect + "\n" + body
    with open(os.path.join(HERE, name + ".hcq"), "w") as f: f.write(text)


def corpus():
    write(HERE, "kargs.bin", KARGS_BIN)

    # 1. The tinygrad eager pattern: wait, memory_barrier (the host wrote the input), dispatch +
    #    flush, release; the batch lies in an indirect buffer the ring calls, as AMDComputeQueue.bind does.
    ib = Stream()
    ib.wait(TL, 0)
    ib.memory_barrier()
    ib.exec(K_FILL, KARGS + 0x00)
    ib.signal(TL, 1)
    ib.wait(TL, 1)
    ib.exec(K_STEP, KARGS + 0x40)
    ib.signal(TL, 2)
    write(HERE, "eager_ib.bin", ib.bytes())
    ring = Stream()
    ring.indirect(IB, len(ib.dw))
    write(HERE, "eager_ring.pm4", ring.bytes())
    program("eager_pm4_fixed", """
tinygrad's eager pattern on amd as PM4 (devices/amd, docs/encoded.md): the ring calls an indirect
buffer holding wait, HDP flush + ACQUIRE_MEM, SET_SH_REG + DISPATCH_DIRECT + CS_PARTIAL_FLUSH,
RELEASE_MEM, twice; every dispatch flushed, so the queue stays serial: clean.""", "clean",
            HEAD + 'region eager at 0x40000000 file "eager_ib.bin"\nqueue c0 on gpu0 compute\n\nwrite hin\n'
            'submit c0 stream amd-pm4 "eager_ring.pm4"\nwait tl >= 2\nread b\n')

    # 2. A dispatch without CS_PARTIAL_FLUSH: the next dispatch overlaps it (the queue becomes overlap).
    for fixed in (False, True):
        s = Stream()
        s.exec(K_STEP, KARGS + 0x40, name="first", flush=fixed)  # step writes b
        s.exec(K_USE, KARGS + 0x80, name="second")               # use reads a, writes b
        s.signal(TL, 1)
        n = "pm4_no_flush_" + ("fixed" if fixed else "bug")
        write(HERE, n + ".pm4", s.bytes())
        program(n, ("Both dispatches flushed (EVENT_WRITE CS_PARTIAL_FLUSH after each): the queue stays serial: clean."
                    if fixed else
                    "The first dispatch is not followed by EVENT_WRITE CS_PARTIAL_FLUSH, so the second overlaps it:\n"
                    "the queue is decoded as 'ordering overlap' and both write b (dwords are the stream's)."),
                "clean" if fixed else "race@{0}.pm4:{1},{0}.pm4:{2}".format(n, s.at["second"], s.at["first"]),
                HEAD + 'queue c0 on gpu0 compute\n\nsubmit c0 stream amd-pm4 "%s.pm4"\nwait tl >= 1\nread b\n' % n)

    # 3. A 32-bit fence wrap: RELEASE_MEM writes the low dword only, so timeline value 2^32 lands as 0.
    for fixed in (False, True):
        s = Stream()
        s.exec(K_STEP, KARGS + 0x40)
        s.signal(TL, 0xFFFFFFFF if fixed else 0)  # the value 2^32, truncated to its low dword
        n = "pm4_fence_wrap_" + ("fixed" if fixed else "bug")
        write(HERE, n + ".pm4", s.bytes())
        head = HEAD.replace("signal tl on host = 0 at", "signal tl on host = %s at" % ("0xfffffffe" if fixed else "0xffffffff"))
        body = head + 'queue c0 on gpu0 compute\n\nsubmit c0 stream amd-pm4 "%s.pm4"\n' % n
        line = body.count("\n") + 1 + 3  # the host wait's line (after the 3 comment/expect lines)
        body += "wait tl >= %s\nread b\n" % ("0xffffffff" if fixed else "2^32")
        program(n, ("The timeline stays below 2^32: the 32-bit release of 0xffffffff is what the host waits for: clean."
                    if fixed else
                    "A 32-bit fence wrap: the timeline is at 0xffffffff and the runtime releases 2^32, but RELEASE_MEM\n"
                    "(data select 1) writes the low dword only: the word becomes 0 and the host's 64-bit wait never ends."),
                "clean" if fixed else "deadlock@%d" % line, body)

    # 4. Two queues: the consumer's stream lacks the wait for the producer's release (race); the twin waits.
    for fixed in (False, True):
        p, c = Stream(), Stream()
        p.exec(K_STEP, KARGS + 0x40, name="produce")  # writes b
        p.signal(S1, 1)
        if fixed: c.wait(S1, 1)
        c.exec(K_FILL, KARGS + 0x00 + 0xC0, name="consume")  # reads b, writes a (kargs at +0xc0)
        c.signal(S2, 1)
        n = "pm4_two_queues_" + ("fixed" if fixed else "bug")
        write(HERE, n + "_c0.pm4", p.bytes())
        write(HERE, n + "_c1.pm4", c.bytes())
        head = HEAD.replace('region kargs at 0x30000000 file "kargs.bin"\n', 'region kargs at 0x30000000 file "kargs2.bin"\n')
        head += "signal s1 on gpu0 = 0 at 0x20000100\nsignal s2 on gpu0 = 0 at 0x20000200\n"
        program(n, ("The consumer's stream begins with WAIT_REG_MEM s1 >= 1: clean." if fixed else
                    "Two compute queues: c1's dispatch reads b, which c0's dispatch writes, and c1's stream has no\n"
                    "WAIT_REG_MEM for c0's release: a race between dword %d of the c1 stream and dword %d of c0's."
                    % (c.at["consume"], p.at["produce"])),
                "clean" if fixed else "race@{0}_c1.pm4:{1},{0}_c0.pm4:{2}".format(n, c.at["consume"], p.at["produce"]),
                head + 'queue c0 on gpu0 compute\nqueue c1 on gpu0 compute\n\n'
                'submit c0 stream amd-pm4 "%s_c0.pm4"\nsubmit c1 stream amd-pm4 "%s_c1.pm4"\n'
                'wait s1 >= 1\nwait s2 >= 1\nread a\n' % (n, n))
    write(HERE, "kargs2.bin", KARGS_BIN + bytes(0x30) + kargs(B, A))

    # 5. ACQUIRE_MEM without the HDP flush before it is no memory_barrier (docs/encoded.md): the
    #    host-written input is read without an acquire (visibility); the twin flushes HDP first.
    for fixed in (False, True):
        s = Stream()
        if fixed: s.memory_barrier()
        else: s.acquire_mem()
        s.exec(K_FILL, KARGS + 0x00, name="read")  # reads hin
        s.signal(TL, 1)
        n = "pm4_acquire_only_" + ("fixed" if fixed else "bug")
        write(HERE, n + ".pm4", s.bytes())
        body = HEAD + "queue c0 on gpu0 compute\n\n"
        line = body.count("\n") + 1 + 3  # the host write's line (after the 3 comment/expect lines)
        body += 'write hin\nsubmit c0 stream amd-pm4 "%s.pm4"\nwait tl >= 1\nread a\n' % n
        program(n, ("The HDP flush (WAIT_REG_MEM register write-wait) and then ACQUIRE_MEM: a memory_barrier: clean."
                    if fixed else
                    "A full ACQUIRE_MEM without the HDP flush before it: no memory_barrier, so the dispatch reads the\n"
                    "host's write of hin without an acquire (amd needs one for data another agent wrote)."),
                "clean" if fixed else "visibility@%s.pm4:%d,%d" % (n, s.at["read"], line), body)


def malformed():
    def case(name, stream, expect_dword, head_extra=""):
        write(MALFORMED, name + ".pm4", stream)
        with open(os.path.join(MALFORMED, name + ".hcq"), "w") as f:
            f.write("# error-at: %s.pm4:%d\n" % (name, expect_dword) + HEAD.replace('region kargs at 0x30000000 file "kargs.bin"\n', "") +
                    head_extra + 'queue c0 on gpu0 compute\nsubmit c0 stream amd-pm4 "%s.pm4"\n' % name)
    s = Stream(); s.wait(TL, 0); s.signal(TL, 1)
    case("pm4_truncated", s.bytes()[:-8], 8)  # the RELEASE_MEM at dword 8 loses its last two dwords
    s = Stream(); s.wait(TL, 0); s.pkt(0x99, 0, 0); s.signal(TL, 1)
    case("pm4_bad_opcode", s.bytes(), 8)
    s = Stream(); s.wait(TL + 0x40, 0)
    case("pm4_unknown_address", s.bytes(), 1)
    s = Stream(); s.exec(0x7000_3000, KARGS)
    case("pm4_unknown_kernel", s.bytes(), s.dw.index((3 << 30) | (3 << 16) | (DISPATCH_DIRECT << 8)) + 1)
    s = Stream(); s.dw = [0x12345678]
    case("pm4_type0_packet", s.bytes(), 1)
    s = Stream(); s.pkt(WAIT_REG_MEM, (1 << 4) | 5, TL, 0, 1, 0xFFFFFFFF)  # 5 body dwords, 6 expected
    case("pm4_wrong_count", s.bytes(), 1)
    # For stream_serial_declared.hcq (hand-written): a dispatch without its flush on a queue declared serial.
    s = Stream(); s.exec(K_STEP, KARGS + 0x40, flush=False); s.exec(K_USE, KARGS + 0x80)
    write(MALFORMED, "stream_no_flush.pm4", s.bytes())
    write(MALFORMED, "stream_kargs.bin", KARGS_BIN)


if __name__ == "__main__":
    corpus()
    malformed()
