#!/usr/bin/env python3
"""Writes the hand-made NVIDIA pushbuffers of corpus/encoded/ and tests/malformed/ (docs/encoded.md,
"NVIDIA pushbuffers").

The method dwords follow the layouts tinygrad's NVComputeQueue and NVCopyQueue emit (ops_nv.py:
setup's SET_OBJECT, wait, signal, exec, copy), and the QMDs the QMD V03_00 layout of NVIDIA's
clc6c0qmd.h / clcbc0qmd.h, written out here field by field from those layouts, not produced by qvet.
Each program's .hcq is written next to its streams with its `# expect:` lines, whose places are
FILE:DWORD, the 1-based dword number in a stream or region file. The outputs are committed; CTest
regenerates nothing. Run from anywhere: python3 corpus/encoded/make_nv_streams.py
"""
import os, struct

HERE = os.path.dirname(os.path.abspath(__file__))
MALFORMED = os.path.join(HERE, "..", "..", "tests", "malformed")

# Method header (cl906f.h): SEC_OP 31:29, count 28:16, subchannel 15:13, method dword address 11:0.
INC, NON_INC, IMMD, ONE_INC, RESERVED6 = 1, 3, 4, 5, 6
# Host methods (clc56f.h).
SET_OBJECT, NON_STALL_INTERRUPT, SEM_ADDR_LO, WFI = 0x000, 0x020, 0x05C, 0x078
SEM_RELEASE, SEM_ACQ_CIRC_GEQ, RELEASE_WFI, PAYLOAD_64, RELEASE_TIMESTAMP = 1, 3, 1 << 20, 1 << 24, 1 << 25
# Compute methods (clc6c0.h) and classes.
PM_TRIGGER, SEND_PCAS_A, SEND_SIGNALING_PCAS2_B = 0x140, 0x2B4, 0x2C0
SET_SHADER_LOCAL_MEMORY_WINDOW_A, SET_SHADER_SHARED_MEMORY_WINDOW_A = 0x7B0, 0x2A0
PCAS_PREFETCH_SCHEDULE = 9
HOPPER_COMPUTE_A, HOPPER_DMA_COPY_A = 0xCBC0, 0xC8B5
# Copy methods (clc6b5.h): LAUNCH_DMA fields.
SET_SEMAPHORE_A, LAUNCH_DMA, OFFSET_IN_UPPER, LINE_LENGTH_IN = 0x240, 0x300, 0x400, 0x418
NON_PIPELINED, PIPELINED, FLUSH, SEM_ONE_WORD, SEM_FOUR_WORD, SRC_PITCH, DST_PITCH = 2, 1, 1 << 2, 1 << 3, 2 << 3, 1 << 7, 1 << 8

# QMD V03_00 fields as (lowest bit, width) (clcbc0qmd.h / clc6c0qmd.h, NVC6C0_QMDV03_00_*).
QMD = dict(
    CTA_RASTER_WIDTH=(384, 32), CTA_RASTER_HEIGHT=(416, 16), CTA_RASTER_DEPTH=(448, 16),
    DEPENDENT_QMD0_POINTER=(480, 32), DEPENDENT_QMD0_ENABLE=(512, 1), DEPENDENT_QMD0_ACTION=(513, 3),
    DEPENDENT_QMD0_PREFETCH=(516, 1), QMD_MAJOR_VERSION=(580, 4),
    CTA_THREAD_DIMENSION0=(592, 16), CTA_THREAD_DIMENSION1=(608, 16), CTA_THREAD_DIMENSION2=(624, 16),
    CONSTANT_BUFFER_VALID_0=(640, 1),
    RELEASE0_ADDRESS_LOWER=(768, 32), RELEASE0_ADDRESS_UPPER=(800, 8), RELEASE0_ENABLE=(823, 1),
    RELEASE0_PAYLOAD64B=(829, 1), RELEASE0_STRUCTURE_SIZE=(830, 2),
    RELEASE0_PAYLOAD_LOWER=(832, 32), RELEASE0_PAYLOAD_UPPER=(864, 32),
    RELEASE1_ADDRESS_LOWER=(896, 32), RELEASE1_ADDRESS_UPPER=(928, 8), RELEASE1_ENABLE=(951, 1),
    RELEASE1_PAYLOAD64B=(957, 1), RELEASE1_STRUCTURE_SIZE=(958, 2),
    RELEASE1_PAYLOAD_LOWER=(960, 32), RELEASE1_PAYLOAD_UPPER=(992, 32),
    CONSTANT_BUFFER_ADDR_LOWER_0=(1024, 32), CONSTANT_BUFFER_ADDR_UPPER_0=(1056, 17),
    PROGRAM_ADDRESS_LOWER=(1536, 32), PROGRAM_ADDRESS_UPPER=(1568, 17),
)
SEMAPHORE_TWO_WORDS, QMD_SCHEDULE, PARAM_OFFSET = 2, 1, 0x160


def qmd(prog, cbuf, releases=(), chain=None):
    """A QMD V03_00 (256 bytes): one CTA of one thread running `prog` with constant buffer 0 at
    `cbuf`, its release slots [(addr, value)], DEPENDENT_QMD0 scheduling `chain` when it ends."""
    bits = [0]
    def put(name, v):
        lo, width = QMD[name]
        assert 0 <= v < (1 << width), name
        bits[0] |= v << lo
    put("QMD_MAJOR_VERSION", 3)
    for f in ("CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH", "CTA_THREAD_DIMENSION0", "CTA_THREAD_DIMENSION1", "CTA_THREAD_DIMENSION2"):
        put(f, 1)
    put("PROGRAM_ADDRESS_LOWER", prog & 0xFFFFFFFF); put("PROGRAM_ADDRESS_UPPER", prog >> 32)
    put("CONSTANT_BUFFER_VALID_0", 1)
    put("CONSTANT_BUFFER_ADDR_LOWER_0", cbuf & 0xFFFFFFFF); put("CONSTANT_BUFFER_ADDR_UPPER_0", cbuf >> 32)
    for i, (addr, value) in enumerate(releases):
        r = "RELEASE%d_" % i
        put(r + "ENABLE", 1); put(r + "STRUCTURE_SIZE", SEMAPHORE_TWO_WORDS); put(r + "PAYLOAD64B", 1)
        put(r + "ADDRESS_LOWER", addr & 0xFFFFFFFF); put(r + "ADDRESS_UPPER", addr >> 32)
        put(r + "PAYLOAD_LOWER", value & 0xFFFFFFFF); put(r + "PAYLOAD_UPPER", value >> 32)
    if chain is not None:
        put("DEPENDENT_QMD0_ENABLE", 1); put("DEPENDENT_QMD0_ACTION", QMD_SCHEDULE); put("DEPENDENT_QMD0_PREFETCH", 1)
        put("DEPENDENT_QMD0_POINTER", chain >> 8)
    return bits[0].to_bytes(256, "little")


def release_dword(qmd_addr, slot):
    """The 1-based dword, in the memory region's file, of a QMD release (its ADDRESS_LOWER field)."""
    return (qmd_addr - MEM) // 4 + 1 + QMD["RELEASE%d_ADDRESS_LOWER" % slot][0] // 32


def qmd_dword(qmd_addr):
    return (qmd_addr - MEM) // 4 + 1


class Push:
    """A pushbuffer that remembers the dword number (1-based) of each command it emits: the data
    dword of the method that triggers it (SEM_EXECUTE, SEND_SIGNALING_PCAS2_B, LAUNCH_DMA)."""

    def __init__(self):
        self.dw, self.at = [], {}

    def mark(self, name):
        if name: self.at[name] = len(self.dw)

    def nvm(self, subc, method, *data, op=INC):
        self.dw += [(op << 29) | (len(data) << 16) | (subc << 13) | (method >> 2)] + [d & 0xFFFFFFFF for d in data]

    def setup_compute(self):  # NVCommandQueue.setup on the compute queue
        self.nvm(1, SET_OBJECT, HOPPER_COMPUTE_A)
        self.nvm(1, SET_SHADER_LOCAL_MEMORY_WINDOW_A, 0x729, 0x0)
        self.nvm(1, SET_SHADER_SHARED_MEMORY_WINDOW_A, 0x728, 0x0)

    def setup_copy(self):
        self.nvm(4, SET_OBJECT, HOPPER_DMA_COPY_A)

    def wait(self, addr, value, name=None):
        self.nvm(0, SEM_ADDR_LO, addr & 0xFFFFFFFF, addr >> 32, value & 0xFFFFFFFF, value >> 32, SEM_ACQ_CIRC_GEQ | PAYLOAD_64)
        self.mark(name)

    def signal(self, addr, value, name=None):  # a host release: WFI, 64-bit payload, timestamp
        self.nvm(0, SEM_ADDR_LO, addr & 0xFFFFFFFF, addr >> 32, value & 0xFFFFFFFF, value >> 32,
                 SEM_RELEASE | RELEASE_WFI | PAYLOAD_64 | RELEASE_TIMESTAMP)
        self.mark(name)
        self.nvm(0, NON_STALL_INTERRUPT, 0)

    def launch(self, qmd_addr, name=None):
        self.nvm(1, PM_TRIGGER, 0)
        self.nvm(1, SEND_PCAS_A, qmd_addr >> 8)
        self.nvm(1, SEND_SIGNALING_PCAS2_B, PCAS_PREFETCH_SCHEDULE)
        self.mark(name)

    def copy(self, dst, src, n, name=None, launch=NON_PIPELINED | SRC_PITCH | DST_PITCH):
        self.nvm(4, OFFSET_IN_UPPER, src >> 32, src & 0xFFFFFFFF, dst >> 32, dst & 0xFFFFFFFF)
        self.nvm(4, LINE_LENGTH_IN, n)
        self.nvm(4, LAUNCH_DMA, launch)
        self.mark(name)

    def copy_signal(self, addr, value, name=None, sem=SEM_ONE_WORD):  # the copy engine's semaphore: 32-bit payload
        self.nvm(4, SET_SEMAPHORE_A, addr >> 32, addr & 0xFFFFFFFF, value)
        self.nvm(4, LAUNCH_DMA, FLUSH | sem)
        self.mark(name)

    def bytes(self):
        return struct.pack("<%dI" % len(self.dw), *self.dw)


def gp_entry(addr, ndw):
    """A GPFIFO entry as tinygrad's _submit_to_gpfifo writes it: the segment's address (dword
    aligned, 40 bits), LEVEL subroutine (bit 41), LENGTH in dwords from bit 42 (cl906f.h, GP_ENTRY*)."""
    return struct.pack("<Q", (addr // 4 << 2) | (ndw << 42) | (1 << 41))


def write(dirname, name, data):
    with open(os.path.join(dirname, name), "wb") as f: f.write(data)


# The address map every program uses.
A, B, HIN, HOUT = 0x1000_0000, 0x1001_0000, 0x1002_0000, 0x1003_0000
TL, S1, S2, S3 = 0x2000_0000, 0x2000_0100, 0x2000_0200, 0x2000_0300
K_FILL, K_STEP, K_USE = 0x7000_0000, 0x7000_1000, 0x7000_2000
MEM = 0x3000_0000
CB_FILL, CB_STEP, CB_USE = MEM + 0x000, MEM + 0x200, MEM + 0x400  # constant buffers 0: 0x160 bytes, then arguments
Q = [MEM + 0x1000 + 0x100 * i for i in range(8)]                   # QMD slots, 256-aligned

HEAD = """device gpu0 nv
buffer hin on host 4K at 0x10020000
buffer hout on host 4K at 0x10030000
buffer a on gpu0 4K at 0x10000000
buffer b on gpu0 4K at 0x10010000
signal tl on host = 0 at 0x20000000
signal s1 on gpu0 = 0 at 0x20000100
signal s2 on gpu0 = 0 at 0x20000200
signal s3 on gpu0 = 0 at 0x20000300
kernel fill at 0x70000000 args(reads, writes)
kernel step at 0x70001000 args(reads, writes, -)
kernel use at 0x70002000 args(reads, writes)
"""


def memory(qmds):
    """The region of constant buffers and QMDs: fill(hin, a), step(a, b, 7), use(a, b), then `qmds` {addr: bytes}."""
    mem = bytearray(0x1800)
    for cb, args in ((CB_FILL, (HIN, A)), (CB_STEP, (A, B, 7)), (CB_USE, (A, B))):
        struct.pack_into("<%dQ" % len(args), mem, cb - MEM + PARAM_OFFSET, *args)
    for addr, q in qmds.items(): mem[addr - MEM:addr - MEM + len(q)] = q
    return bytes(mem)


def program(name, comment, expect, body):
    text = "".join("# " + l + "\n" for l in comment.strip().split("\n")) + "# expect: " + expect + "\n" + body
    with open(os.path.join(HERE, name + ".hcq"), "w") as f: f.write(text)


def region(name):
    return 'region mem at 0x30000000 file "%s_mem.bin"\n' % name


def one_queue(n, s, qmds, comment, expect, host):
    """Program `n`: pushbuffer `s` on compute queue c0 with the region of `qmds`; `host` is the host's
    statements, SUBMIT standing for the stream's submit."""
    write(HERE, n + ".nv", s.bytes())
    write(HERE, n + "_mem.bin", memory(qmds))
    program(n, comment, expect, HEAD + region(n) + "queue c0 on gpu0 compute\n\n" + host.replace("SUBMIT", 'submit c0 stream nv "%s.nv"' % n))


def race(n, s, later, earlier):
    return "race@{0}.nv:{1},{0}.nv:{2}".format(n, s.at[later], s.at[earlier])


def corpus():
    # 1. tinygrad's eager pattern on NV: wait, launch (the QMD's release 0 is the signal), twice.
    s = Push()
    s.setup_compute()
    s.wait(TL, 0)
    s.launch(Q[0])
    s.wait(TL, 1)
    s.launch(Q[1])
    one_queue("nv_eager_fixed", s, {Q[0]: qmd(K_FILL, CB_FILL, [(TL, 1)]), Q[1]: qmd(K_STEP, CB_STEP, [(TL, 2)])}, """
tinygrad's eager pattern on nv as a pushbuffer (devices/nv, docs/encoded.md): SET_OBJECT, then a host
SEM acquire, SEND_PCAS_A + SEND_SIGNALING_PCAS2_B of a QMD whose release 0 is the timeline's signal,
twice; the second kernel waits for the first's release: clean.""", "clean", "write hin\nSUBMIT\nwait tl >= 2\nread b\n")

    # 1b. The same batches reached through a GPFIFO: two entries, one per submitted segment, both in
    #     one region; the class the first segment binds holds for the second (one channel).
    seg1, seg2 = Push(), Push()
    seg1.setup_compute()
    seg1.wait(TL, 0)
    seg1.launch(Q[0])
    seg2.wait(TL, 1)
    seg2.launch(Q[1])
    n = "nv_gpfifo_fixed"
    PB = 0x3800_0000
    write(HERE, n + "_pb.bin", seg1.bytes() + seg2.bytes())
    write(HERE, n + ".gpfifo", gp_entry(PB, len(seg1.dw)) + gp_entry(PB + 4 * len(seg1.dw), len(seg2.dw)))
    write(HERE, n + "_mem.bin", memory({Q[0]: qmd(K_FILL, CB_FILL, [(TL, 1)]), Q[1]: qmd(K_STEP, CB_STEP, [(TL, 2)])}))
    program(n, """
The eager pattern of nv_eager_fixed submitted as tinygrad does: GPFIFO entries (format nv-gpfifo),
each naming a pushbuffer segment in a region; the decoded commands are located in the segments'
file: clean.""", "clean",
            HEAD + region(n) + 'region pb at 0x38000000 file "%s_pb.bin"\nqueue c0 on gpu0 compute\n\n'
            'write hin\nsubmit c0 stream nv-gpfifo "%s.gpfifo"\nwait tl >= 2\nread b\n' % (n, n))

    # 2. Back to back: the second launch neither chained nor behind a wait for idle overlaps the first
    #    (the queue is decoded as overlap); the twin chains the QMDs (DEPENDENT_QMD0).
    for fixed in (False, True):
        s = Push()
        s.setup_compute()
        s.launch(Q[0], name="fill")
        if fixed:
            qmds = {Q[0]: qmd(K_FILL, CB_FILL, chain=Q[1]), Q[1]: qmd(K_STEP, CB_STEP, [(TL, 1)])}
        else:
            s.launch(Q[1], name="step")
            s.signal(TL, 1)
            qmds = {Q[0]: qmd(K_FILL, CB_FILL), Q[1]: qmd(K_STEP, CB_STEP)}
        n = "nv_back_to_back_" + ("fixed" if fixed else "bug")
        one_queue(n, s, qmds, ("fill's QMD schedules step's when it ends (DEPENDENT_QMD0, action SCHEDULE): step reads a after fill\n"
                    "wrote it; step's release 0 signals the host: clean." if fixed else
                    "Two SEND_PCAS launches back to back, neither chained through DEPENDENT_QMD0 nor separated by a wait\n"
                    "for idle: the kernels overlap (the queue is decoded as 'ordering overlap'), and step reads a while\n"
                    "fill writes it."),
                  "clean" if fixed else race(n, s, "step", "fill"), "write hin\nSUBMIT\nwait tl >= 1\nread b\n")

    # 3. A wait breaks the chain (semantics.md): the launch after it does not wait for the kernel
    #    before it. The bug waits for a signal that is already there; the twin waits for fill's release.
    for fixed in (False, True):
        s = Push()
        s.setup_compute()
        s.launch(Q[0], name="fill")        # fill writes a; its release 0: s1 = 1
        s.wait(S1 if fixed else TL, 1 if fixed else 0)
        s.launch(Q[1], name="use")         # use reads a, writes b; its release 0: tl = 1
        n = "nv_wait_breaks_chain_" + ("fixed" if fixed else "bug")
        qmds = {Q[0]: qmd(K_FILL, CB_FILL, [(S1, 1)]), Q[1]: qmd(K_USE, CB_USE, [(TL, 1)])}
        one_queue(n, s, qmds, ("The wait is for fill's own release (s1 >= 1): use starts after fill ended: clean." if fixed else
                    "A host SEM acquire between two launches breaks the chain: use starts as soon as the acquire passes,\n"
                    "and it waits for tl >= 0, which holds from the start, so use reads a while fill may still write it."),
                  "clean" if fixed else race(n, s, "use", "fill"), "write hin\nSUBMIT\nwait tl >= 1\nread b\n")

    # 4. A QMD has two release slots, which fire together when the kernel ends, in no documented
    #    order: two values into one signal race. tinygrad writes a third signal as a host WFI
    #    release, which ends after the kernel and its releases: the twin's tl = 2 comes last.
    for fixed in (False, True):
        s = Push()
        s.setup_compute()
        s.launch(Q[0], name="step")
        if fixed:
            rel = [(S1, 1), (S2, 1)]
            s.signal(TL, 2, name="third")
        else:
            rel = [(TL, 1), (TL, 2)]
        n = "nv_third_release_" + ("fixed" if fixed else "bug")
        one_queue(n, s, {Q[0]: qmd(K_STEP, CB_STEP, rel)}, ("step's QMD releases s1 and s2; the third signal, tl = 2, is a host SEM release with WFI: it ends\n"
                    "after the kernel, so the host's wait orders the read of b: clean." if fixed else
                    "Both release slots of step's QMD write tl (1 and 2): they fire when the kernel ends, in no\n"
                    "documented order (a signal race between the two QMD fields)."),
                  # line 20: the host's `wait tl >= 2`, which release 0 (tl = 1) may end below
                  "clean" if fixed else "signal-race@{0}_mem.bin:{1},{0}_mem.bin:{2} lost-wakeup@20,{0}_mem.bin:{2}".format(
                      n, release_dword(Q[0], 1), release_dword(Q[0], 0)),
                  "SUBMIT\nwait tl >= 2\nread b\n")

    # 5. Copy engine: the copy queue copies b out while the compute queue writes it; the twin's
    #    copy stream first acquires the compute kernel's release.
    for fixed in (False, True):
        c, x = Push(), Push()
        c.setup_compute()
        c.launch(Q[0], name="step")        # writes b; release 0: tl = 1
        x.setup_copy()
        if fixed: x.wait(TL, 1)
        x.copy(HOUT, B, 0x1000, name="copy")
        x.copy_signal(S3, 1, sem=SEM_FOUR_WORD)  # as tinygrad's copy queue signals (LAUNCH_DMA 0x14)
        n = "nv_copy_" + ("fixed" if fixed else "bug")
        write(HERE, n + "_c0.nv", c.bytes())
        write(HERE, n + "_x0.nv", x.bytes())
        write(HERE, n + "_mem.bin", memory({Q[0]: qmd(K_STEP, CB_STEP, [(TL, 1)])}))
        # The host then resets s3 through a command list: its four-word release decodes, as the list's
        # argument (0) keeps s3 below 2^32 (the list's parameter alone could be any value).
        decl, reset = ("commands reset(v) {\n  signal s3 = v\n}\n", "\nsubmit c0 reset(v = 0)\n") if fixed else ("", "")
        program(n, ("The copy stream begins with a host SEM acquire of tl >= 1, step's release, and the host resets s3\n"
                    "once the copy has signalled it: clean." if fixed else
                    "A copy queue's LAUNCH_DMA reads b, which the compute queue's kernel writes, and the copy stream\n"
                    "has no acquire of the kernel's release: a race between the two streams."),
                "clean" if fixed else "race@{0}_x0.nv:{1},{0}_c0.nv:{2}".format(n, x.at["copy"], c.at["step"]),
                HEAD + region(n) + "queue c0 on gpu0 compute\nqueue x0 on gpu0 copy\n" + decl + "\n"
                'submit c0 stream nv "%s_c0.nv"\nsubmit x0 stream nv "%s_x0.nv"\nwait s3 >= 1\nwait tl >= 1\nread hout\n' % (n, n) + reset)


def malformed():
    def case(name, stream, where, head_extra="", queue="queue c0 on gpu0 compute\n", mem=None):
        write(MALFORMED, name + ".nv", stream)
        extra = head_extra
        if mem is not None:
            write(MALFORMED, name + "_mem.bin", mem)
            extra += 'region mem at 0x30000000 file "%s_mem.bin"\n' % name
        with open(os.path.join(MALFORMED, name + ".hcq"), "w") as f:
            f.write("# error-at: %s\n" % where + HEAD + extra + queue + 'submit c0 stream nv "%s.nv"\n' % name)
    plain = memory({Q[0]: qmd(K_STEP, CB_STEP), Q[1]: qmd(K_USE, CB_USE)})
    s = Push(); s.setup_compute(); s.wait(TL, 0); s.signal(TL, 1)
    case("nv_truncated", s.bytes()[:-4 * 4], "nv_truncated.nv:%d" % (len(s.dw) - 8 + 1))  # the release's header, 3 of its 5 dwords left
    s = Push(); s.setup_compute(); s.nvm(0, SEM_ADDR_LO, TL, 0, 1, 0, SEM_ACQ_CIRC_GEQ | PAYLOAD_64, 0)  # a sixth dword: method 0x70
    case("nv_wrong_count", s.bytes(), "nv_wrong_count.nv:%d" % len(s.dw))
    s = Push(); s.setup_compute(); s.dw.append((RESERVED6 << 29) | (1 << 16) | (1 << 13) | (SEND_PCAS_A >> 2)); s.dw.append(0)
    case("nv_bad_header", s.bytes(), "nv_bad_header.nv:%d" % (len(s.dw) - 1))
    s = Push(); s.setup_compute(); s.dw.append((1 << 18) | (1 << 13) | (0x2B4 >> 2)); s.dw.append(0)  # pre-Fermi incrementing header
    case("nv_old_header", s.bytes(), "nv_old_header.nv:%d" % (len(s.dw) - 1))
    s = Push(); s.setup_compute(); s.nvm(1, 0x200, 1)
    case("nv_unknown_method", s.bytes(), "nv_unknown_method.nv:%d" % len(s.dw))
    s = Push(); s.setup_compute(); s.wait(TL + 0x40, 1)
    case("nv_unknown_address", s.bytes(), "nv_unknown_address.nv:%d" % len(s.dw))
    s = Push(); s.launch(Q[0])
    case("nv_no_set_object", s.bytes(), "nv_no_set_object.nv:2", mem=plain)  # PM_TRIGGER's data dword
    s = Push(); s.setup_compute(); s.launch(Q[2])
    case("nv_unknown_kernel", s.bytes(), "nv_unknown_kernel.nv:%d" % len(s.dw), mem=memory({Q[2]: qmd(0x7000_3000, CB_STEP)}))
    s = Push(); s.setup_compute(); s.launch(0x5000_0000)
    case("nv_qmd_no_region", s.bytes(), "nv_qmd_no_region.nv:%d" % len(s.dw), mem=plain)
    s = Push(); s.setup_compute(); s.nvm(0, SEM_ADDR_LO, TL, 0, 1, 0, SEM_RELEASE | PAYLOAD_64)
    case("nv_release_no_wfi", s.bytes(), "nv_release_no_wfi.nv:%d" % len(s.dw))
    # Back-to-back launches make the queue overlap; a QMD release cannot be read there.
    s = Push(); s.setup_compute(); s.launch(Q[0]); s.launch(Q[1])
    case("nv_overlap_release", s.bytes(), "nv_overlap_release_mem.bin:%d" % release_dword(Q[0], 0),
         mem=memory({Q[0]: qmd(K_STEP, CB_STEP, [(TL, 1)]), Q[1]: qmd(K_USE, CB_USE)}))
    # ... and a queue declared chained cannot become overlap.
    s = Push(); s.setup_compute(); s.launch(Q[0]); s.launch(Q[1])
    case("nv_overlap_declared", s.bytes(), "nv_overlap_declared.nv:%d" % len(s.dw), queue="queue c0 on gpu0 compute ordering chained\n", mem=plain)
    # A GPFIFO entry whose segment lies in no region: the error is at the entry.
    write(MALFORMED, "nv_gpfifo_no_region.gpfifo", gp_entry(0x3800_0000, 4))
    with open(os.path.join(MALFORMED, "nv_gpfifo_no_region.hcq"), "w") as f:
        f.write("# error-at: nv_gpfifo_no_region.gpfifo:1\n" + HEAD + "queue c0 on gpu0 compute\n"
                'submit c0 stream nv-gpfifo "nv_gpfifo_no_region.gpfifo"\n')
    s = Push(); s.setup_copy(); s.copy(HOUT, B, 0x100, launch=PIPELINED | SRC_PITCH | DST_PITCH)
    case("nv_pipelined_copy", s.bytes(), "nv_pipelined_copy.nv:%d" % len(s.dw), queue="queue c0 on gpu0 copy\n")
    # A four-word release (payload and a zero high word, as tinygrad's copy queue signals) on a word
    # the host sets to 2^32 + 1: the model's 32-bit copy signal would keep that high word.
    s = Push(); s.setup_copy(); s.copy_signal(TL, 2, sem=SEM_FOUR_WORD)
    case("nv_four_word_high", s.bytes(), "nv_four_word_high.nv:%d" % len(s.dw), queue="queue c0 on gpu0 copy\nsignal tl = 2^32 + 1\n")


if __name__ == "__main__":
    corpus()
    malformed()
