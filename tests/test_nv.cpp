// The NVIDIA pushbuffer decoder and encoder (devices/nv/pushbuffer.h) on small streams built here
// method by method, and encode -> decode round trips of small command lists.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "core/input_error.h"
#include "devices/nv/nv_methods.h"
#include "devices/nv/pushbuffer.h"

using namespace qvet;
namespace nvm = qvet::nv;

// A namespace of its own: the stream tests share helper names, and a unity build compiles them together.
namespace test_nv {

namespace {

std::string le(const std::vector<uint32_t>& w) {
  std::string s;
  for (uint32_t x : w) append_dword(s, x);
  return s;
}

// A QMD built field by field (V03_00 or V04_00).
struct Qmd {
  const nvm::QmdLayout* L;
  std::string b;
  explicit Qmd(int major = 3) : L(major == 4 ? &nvm::kQmdV04 : &nvm::kQmdV03), b(L->bytes, '\0') {
    set(nvm::kQmdMajorVersion, uint64_t(major));
    if (major == 4) set(L->is_queue, nvm::kQmdTypeGridCta);
  }
  void set(nvm::Field f, uint64_t v) {
    for (uint32_t i = 0; i < f.bits; ++i) {
      uint32_t bit = f.lo + i;
      if (v >> i & 1) b[bit / 8] = char(b[bit / 8] | (1 << (bit % 8)));
      else b[bit / 8] = char(b[bit / 8] & ~(1 << (bit % 8)));
    }
  }
  Qmd& prog(uint64_t code) { return set(L->prog_lo, uint32_t(code)), set(L->prog_hi, code >> 32), *this; }
  Qmd& cb0(uint64_t a) {
    set(L->cb0_valid, 1);
    return set(L->cb0_addr_lo, uint32_t(a >> L->cb0_shift)), set(L->cb0_addr_hi, (a >> L->cb0_shift) >> 32), *this;
  }
  Qmd& release(int i, uint64_t addr, uint64_t v, uint64_t size = nvm::kReleaseTwoWords, uint64_t wide = 1) {
    set(L->rel_enable[i], 1), set(L->rel_size[i], size), set(L->rel_payload64[i], wide);
    set(L->rel_addr_lo[i], uint32_t(addr)), set(L->rel_addr_hi[i], addr >> 32);
    return set(L->rel_payload_lo[i], uint32_t(v)), set(L->rel_payload_hi[i], v >> 32), *this;
  }
  Qmd& chain(uint64_t next) {
    set(L->dep_enable, 1), set(L->dep_action, nvm::kDependentActionSchedule), set(L->dep_prefetch, 1);
    return set(L->dep_pointer, next >> 8), *this;
  }
};

struct Push {
  std::vector<uint32_t> w;
  Push& m(uint32_t subc, uint32_t method, std::vector<uint32_t> data, nvm::SecOp op = nvm::kIncMethod) {
    w.push_back(nvm::header(op, subc, method, uint32_t(data.size())));
    w.insert(w.end(), data.begin(), data.end());
    return *this;
  }
  Push& compute(uint32_t cls = nvm::kHopperComputeA) { return m(1, nvm::kSetObject, {cls}); }
  Push& copyclass() { return m(4, nvm::kSetObject, {nvm::kHopperDmaCopyA}); }
  Push& sem(uint64_t addr, uint64_t v, uint32_t exec) {
    return m(0, nvm::kSemAddrLo, {uint32_t(addr), uint32_t(addr >> 32), uint32_t(v), uint32_t(v >> 32), exec});
  }
  Push& wait(uint64_t addr, uint64_t v) { return sem(addr, v, nvm::kSemAcqCircGeq | nvm::kSemPayload64); }
  Push& release(uint64_t addr, uint64_t v) {
    sem(addr, v, nvm::kSemRelease | nvm::kSemReleaseWfi | nvm::kSemPayload64 | nvm::kSemReleaseTimestamp);
    return m(0, nvm::kNonStallInterrupt, {0});
  }
  Push& launch(uint64_t qmd) { return m(1, nvm::kSendPcasA, {uint32_t(qmd >> 8)}).m(1, nvm::kSendSignalingPcas2B, {nvm::kPcasPrefetchSchedule}); }
  std::string bytes() const { return le(w); }
};

// Buffers a (0x10000, 4K) and b (0x20000, 4K), signals tl (0x30000) and s1 (0x30100), kernel k at
// 0x70000 args(reads, -, writes); a memory region at 0x40000 holding constant buffer 0 (arguments
// a+0x100, 5, b) at +0, and QMDs the tests place at 0x40200, 0x40400, ...
constexpr uint64_t kA = 0x10000, kB = 0x20000, kTl = 0x30000, kS1 = 0x30100, kK = 0x70000, kMem = 0x40000;
StreamBinding binding(const std::map<uint64_t, std::string>& qmds = {}) {
  StreamBinding b;
  b.buffers = {{kA, 0x1000, "a", {}}, {kB, 0x1000, "b", {}}};
  b.signals = {{kTl, 16, "tl", {}}, {kS1, 16, "s1", {}}};
  b.kernels = {{kK, "k", {{StreamBinding::Arg::Reads}, {StreamBinding::Arg::Value}, {StreamBinding::Arg::Writes}}, {}}};
  std::string mem(0x1000, '\0');
  uint64_t args[] = {kA + 0x100, 5, kB};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 8; ++k) mem[nvm::kParamOffset + 8 * i + k] = char(args[i] >> (8 * k));
  for (auto& [addr, q] : qmds) mem.replace(addr - kMem, q.size(), q);
  b.regions = {{kMem, "mem", mem, 7, {}}};
  return b;
}

std::vector<std::string> texts(const StreamResult& r) {
  std::vector<std::string> out;
  for (auto& c : r.cmds) out.push_back(c.text);
  return out;
}

InputError error(const StreamBinding& b, const std::string& bytes, StreamOptions o = {}) {
  try {
    nvm::decode_nv(b, bytes, 1, o);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error");
  return {};
}

const char* kExec = "exec k reads a[0x100:0x1000] writes b[0x0:0x1000]";

}  // namespace

TEST_CASE("nv: SEC_OP modes write the methods they name; NOP dwords and END_PB_SEGMENT") {
  Push p;
  p.w.push_back(0);  // NOP
  p.compute();
  // Non-incrementing: three writes to SEM_ADDR_LO, the last one counts.
  p.m(0, nvm::kSemAddrLo, {0x999, 0x777, uint32_t(kTl)}, nvm::kNonIncMethod);
  // Increment-once: SEM_ADDR_HI, then SEM_PAYLOAD_LO twice.
  p.m(0, nvm::kSemAddrHi, {0, 1, 3}, nvm::kOneInc);
  p.m(0, nvm::kSemPayloadHi, {0}, nvm::kIncMethod);
  p.m(0, nvm::kSemExecute, {nvm::kSemAcqCircGeq | nvm::kSemPayload64});
  p.m(0, nvm::kWfi, {}, nvm::kIncMethod);  // a header with no data writes nothing
  p.w.push_back(nvm::header(nvm::kImmdDataMethod, 0, nvm::kWfi, 1));  // WFI SCOPE_ALL as immediate data
  p.w.push_back(nvm::header(nvm::kEndPbSegment, 0, 0, 0));
  StreamResult r = nvm::decode_nv(binding(), p.bytes(), 1);
  CHECK(texts(r) == std::vector<std::string>{"wait tl >= 3", "barrier"});
  CHECK(r.cmds[0].loc == Loc{1, 15, 0});  // SEM_EXECUTE's data dword
  CHECK(r.cmds[1].loc == Loc{1, 17, 0});  // the immediate-data header
  // END_PB_SEGMENT anywhere but last, reserved and legacy modes are bad headers at their dword.
  Push e;
  e.w = {nvm::header(nvm::kEndPbSegment, 0, 0, 0), 0};
  CHECK(error(binding(), e.bytes()).message.find("END_PB_SEGMENT") != std::string::npos);
  for (uint32_t h : {nvm::header(nvm::kReserved6, 0, 0x100, 1), nvm::header(nvm::kGrp2UseTert, 0, 0x100, 1), 0x00040000u | 0x10u, 0x00010000u}) {
    Push b;
    b.compute();
    b.w.push_back(h);
    b.w.push_back(0);
    InputError x = error(binding(), b.bytes());
    CHECK(x.loc.line == 3);
    CHECK(x.message.find("bad header") != std::string::npos);
  }
}

TEST_CASE("nv: a launch reads its QMD: program, constant buffer 0 arguments, releases, dependent chain (V03 and V04)") {
  for (int major : {3, 4}) {
    CAPTURE(major);
    Qmd q2(major);
    q2.prog(kK).cb0(kMem).release(0, kTl, 0x100000002ull);
    Qmd q1(major);
    q1.prog(kK).cb0(kMem).release(0, kS1, 1).release(1, kTl, 1, nvm::kReleaseFourWords, 0).chain(0x40400);
    StreamBinding b = binding({{0x40200, q1.b}, {0x40400, q2.b}});
    Push p;
    p.compute().wait(kTl, 0).launch(0x40200);
    StreamResult r = nvm::decode_nv(b, p.bytes(), 1);
    CHECK(texts(r) == std::vector<std::string>{"wait tl >= 0", kExec, "signal s1 = 1", "signal tl = 1", kExec, "signal tl = 4294967298"});
    CHECK(!r.overlap);
    CHECK(r.cmds[1].loc == Loc{1, 12, 0});  // PCAS2_B's data dword
    const nvm::QmdLayout& L = major == 4 ? nvm::kQmdV04 : nvm::kQmdV03;
    CHECK(r.cmds[2].loc == Loc{7, 0x200 / 4 + 1 + L.rel_addr_lo[0].lo / 32, 0});  // the release in the QMD's region
    CHECK(r.cmds[4].loc == Loc{7, 0x400 / 4 + 1, 0});                             // the chained exec at its QMD
  }
  // V04 on Ampere's class is not decoded; a QMD major version 5 nowhere.
  Qmd v4(4);
  v4.prog(kK).cb0(kMem);
  Push p;
  p.compute(nvm::kAmpereComputeA).launch(0x40200);
  CHECK(error(binding({{0x40200, v4.b}}), p.bytes()).message.find("QMD_MAJOR_VERSION 4") != std::string::npos);
}

TEST_CASE("nv: chaining is decoded honestly: back-to-back launches overlap, a WFI release between orders them") {
  Qmd q;
  q.prog(kK).cb0(kMem);
  StreamBinding b = binding({{0x40200, q.b}, {0x40400, q.b}});
  Push p;
  p.compute().launch(0x40200).launch(0x40400).release(kTl, 1);
  StreamResult r = nvm::decode_nv(b, p.bytes(), 1);
  CHECK(r.overlap);
  CHECK(r.unflushed.line == 10);  // the second launch's PCAS2_B
  CHECK(r.overlap_why.find("neither dependent-QMD chaining nor a wait for idle") != std::string::npos);
  // A WFI release between: the second kernel starts after the first ended (chained in the model).
  Push f;
  f.compute().launch(0x40200).release(kS1, 1).launch(0x40400);
  CHECK(!nvm::decode_nv(b, f.bytes(), 1).overlap);
  // A wait between breaks the chain: no overlap needed, the model lets them race.
  Push w;
  w.compute().launch(0x40200).wait(kTl, 0).launch(0x40400);
  CHECK(!nvm::decode_nv(b, w.bytes(), 1).overlap);
  // QMD releases cannot be read on an overlap queue: an error at the release.
  Qmd rq;
  rq.prog(kK).cb0(kMem).release(0, kTl, 1);
  StreamBinding b2 = binding({{0x40200, rq.b}, {0x40400, q.b}});
  Push o;
  o.compute().launch(0x40200).launch(0x40400);
  InputError e = error(b2, o.bytes());
  CHECK(e.loc.file == 7);
  CHECK(e.message.find("a QMD release fires when its own kernel ends") != std::string::npos);
  StreamOptions ov;
  ov.queue_overlap = true;
  Push one;
  one.compute().launch(0x40200);
  CHECK(error(b2, one.bytes(), ov).message.find("declared 'ordering overlap'") != std::string::npos);
  // A dependent chain that loops is an error, not a hang.
  Qmd loop;
  loop.prog(kK).cb0(kMem).chain(0x40200);
  CHECK(error(binding({{0x40200, loop.b}}), one.bytes()).message.find("cycle") != std::string::npos);
}

TEST_CASE("nv: copy engine transfers and semaphores; host releases, timestamps, invalidations, WFI") {
  Push p;
  p.copyclass();
  p.m(4, nvm::kOffsetInUpper, {0, uint32_t(kA + 0x10), 0, uint32_t(kB)});
  p.m(4, nvm::kLineLengthIn, {0x20});
  p.m(4, nvm::kLaunchDma, {nvm::kDmaCopy});
  p.m(4, nvm::kSetSemaphoreA, {0, uint32_t(kTl), 7});
  p.m(4, nvm::kLaunchDma, {nvm::kDmaFlushEnable | nvm::kSemaphoreFourWord << 3});
  p.sem(kTl + 8, 0, nvm::kSemRelease | nvm::kSemReleaseWfi | nvm::kSemPayload64);  // into tl's timestamp slot
  StreamResult r = nvm::decode_nv(binding(), p.bytes(), 1);
  CHECK(texts(r) == std::vector<std::string>{"copy a[0x10:0x30] -> b[0x0:0x20]", "signal tl = 7", "timestamp tl"});
  // Pipelined, block-linear, no flush before a semaphore: refused at the LAUNCH_DMA's dword.
  for (uint32_t v : {uint32_t(nvm::kTransferPipelined | nvm::kDmaSrcPitch | nvm::kDmaDstPitch), uint32_t(nvm::kTransferNonPipelined),
                     uint32_t(nvm::kSemaphoreOneWord << 3), uint32_t(nvm::kDmaCopy | 1u << 9)}) {
    Push bad = p;
    bad.w.resize(9);  // through the LINE_LENGTH_IN packet
    bad.m(4, nvm::kSetSemaphoreA, {0, uint32_t(kTl), 7});
    bad.m(4, nvm::kLaunchDma, {v});
    CHECK(error(binding(), bad.bytes()).loc.line == bad.w.size());
  }
  // A transfer past its buffer.
  Push past;
  past.copyclass().m(4, nvm::kOffsetInUpper, {0, uint32_t(kA + 0xff0), 0, uint32_t(kB)}).m(4, nvm::kLineLengthIn, {0x20});
  past.m(4, nvm::kLaunchDma, {nvm::kDmaCopy});
  CHECK(error(binding(), past.bytes()).message.find("run past the end of a") != std::string::npos);
  // Compute: INVALIDATE_SHADER_CACHES_NO_WFI is a memory_barrier, WAIT_FOR_IDLE and host WFI barriers.
  Push c;
  c.compute().m(1, nvm::kInvalidateShaderCachesNoWfi, {nvm::kInvalidateAll}).m(1, nvm::kWaitForIdle, {0}).m(0, nvm::kWfi, {1});
  c.m(1, nvm::kPmTrigger, {0}).release(kS1, 9);
  CHECK(texts(nvm::decode_nv(binding(), c.bytes(), 1)) == std::vector<std::string>{"memory_barrier", "barrier", "barrier", "signal s1 = 9"});
}

TEST_CASE("nv: what is not decoded is an input error at its dword, naming offsets and addresses in hex; ignorable methods skip") {
  Push u;
  u.compute().m(1, 0x200, {1});
  InputError e = error(binding(), u.bytes());
  CHECK(e.loc.line == 4);
  CHECK(e.message.find("unknown compute method 0x200 at dword 0x3 (byte 0xc)") != std::string::npos);
  StreamOptions o;
  o.ignored = {0x200};
  CHECK(nvm::decode_nv(binding(), u.bytes(), 1, o).cmds.empty());
  Push both;
  both.compute().copyclass();
  CHECK(error(binding(), both.bytes()).message.find("a channel runs one engine") != std::string::npos);
  Push noobj;
  noobj.launch(0x40200);
  CHECK(error(binding(), noobj.bytes()).message.find("no SET_OBJECT") != std::string::npos);
  Push addr;
  addr.wait(kTl + 4, 1);
  CHECK(error(binding(), addr.bytes()).message.find("address 0x30004 is no signal's") != std::string::npos);
  Push nowfi;
  nowfi.sem(kTl, 1, nvm::kSemRelease | nvm::kSemPayload64);
  CHECK(error(binding(), nowfi.bytes()).message.find("without RELEASE_WFI") != std::string::npos);
  Push narrow;
  narrow.wait(kTl, 1);
  narrow.w.back() = nvm::kSemAcqCircGeq;
  CHECK(error(binding(), narrow.bytes()).message.find("32-bit acquire") != std::string::npos);
  Push trunc;
  trunc.wait(kTl, 1);
  trunc.w.pop_back();
  InputError t = error(binding(), trunc.bytes());
  CHECK(t.loc.line == 1);
  CHECK(t.message.find("truncated packet") != std::string::npos);
  Push past;
  past.m(0, nvm::kMaxMethod, {0, 0});
  CHECK(error(binding(), past.bytes()).message.find("wrong count") != std::string::npos);
  // QMD problems: in no region, an unbound program, arguments outside the region, a 32-bit release.
  Push l;
  l.compute().launch(0x90000);
  CHECK(error(binding(), l.bytes()).message.find("lies in no region") != std::string::npos);
  Qmd q;
  q.prog(0x70100).cb0(kMem);
  l.w = Push().compute().launch(0x40200).w;
  CHECK(error(binding({{0x40200, q.b}}), l.bytes()).message.find("no kernel's") != std::string::npos);
  Qmd far;
  far.prog(kK).cb0(kMem + 0xff0);
  CHECK(error(binding({{0x40200, far.b}}), l.bytes()).message.find("lie in no region") != std::string::npos);
  Qmd one;
  one.prog(kK).cb0(kMem).release(0, kTl, 1, nvm::kReleaseOneWord, 0);
  CHECK(error(binding({{0x40200, one.b}}), l.bytes()).message.find("STRUCTURE_SIZE 1") != std::string::npos);
  std::string odd = Push().wait(kTl, 1).bytes() + "xy";
  CHECK(error(binding(), odd).loc.line == 7);
}

namespace {

// An EncodeSpace that places buffers, signals, kernels and regions, and gives the binding back.
class TestSpace : public EncodeSpace {
 public:
  uint64_t buffer_addr(uint32_t base) override { return 0x10000000 + uint64_t(base) * 0x100000; }
  uint64_t signal_addr(uint32_t s) override { return 0x20000000 + uint64_t(s) * 16; }
  uint64_t kernel_addr(const std::string& name, const std::vector<StreamBinding::KernelArg>& args, uint64_t align) override {
    CHECK(align == 256);
    for (auto& k : kernels)
      if (k.name == name && k.args == args) return k.addr;
    kernels.push_back({0x70000000 + kernels.size() * 0x1000, name, args, {}});
    return kernels.back().addr;
  }
  uint64_t add_region(std::string bytes, std::string_view, uint64_t align) override {
    next = (next + align - 1) / align * align;
    uint64_t a = next;
    next += bytes.size();
    regions[a] = std::move(bytes);
    return a;
  }
  std::string& region(uint64_t addr) override { return regions.at(addr); }

  StreamBinding binding() const {
    StreamBinding b;
    for (uint32_t i = 0; i < 3; ++i) b.buffers.push_back({0x10000000 + uint64_t(i) * 0x100000, 0x10000, "b" + std::to_string(i), {}});
    for (uint32_t i = 0; i < 3; ++i) b.signals.push_back({0x20000000 + uint64_t(i) * 16, 16, "s" + std::to_string(i), {}});
    b.kernels = kernels;
    uint32_t file = 10;
    for (auto& [a, bytes] : regions) b.regions.push_back({a, "r" + std::to_string(file), bytes, file++, {}});
    return b;
  }
  std::vector<StreamBinding::Kernel> kernels;
  std::map<uint64_t, std::string> regions;
  uint64_t next = 0x40000000;
};

ConcreteCommand cmd(CmdOp op, uint32_t signal = kNone, uint64_t value = 0) {
  ConcreteCommand c;
  c.op = op, c.signal = signal, c.value = value;
  return c;
}
ConcreteCommand exec(const std::string& k, std::vector<ConcreteRange> r, std::vector<ConcreteRange> w) {
  ConcreteCommand c = cmd(CmdOp::Exec);
  c.kernel = k, c.reads = std::move(r), c.writes = std::move(w);
  return c;
}

StreamResult round_trip(const std::vector<ConcreteCommand>& cmds, EncodeQueue q, const nvm::NvTarget& t = {}) {
  TestSpace space;
  std::string s = nvm::encode_nv_for(cmds, q, space, t);
  StreamOptions o;
  o.queue_overlap = q.ordering == Ordering::Overlap;
  return nvm::decode_nv(space.binding(), s, 1, o);
}

}  // namespace

TEST_CASE("nv: encode -> decode gives the commands back (chained compute, V03 and V04, overlap, copy)") {
  std::vector<ConcreteCommand> cmds = {
      cmd(CmdOp::Wait, 0, 3),
      exec("gemm", {{0, 0, 0x100}, {1, 0x40, 0x80}}, {{2, 0x10, 0x20}}),
      cmd(CmdOp::Signal, 0, 4),
      cmd(CmdOp::Signal, 1, uint64_t(1) << 40),
      exec("gemm", {{0, 0, 0x100}, {1, 0x40, 0x80}}, {{2, 0x10, 0x20}}),  // chained after the first
      exec("relu", {{2, 0x10, 0x20}}, {{2, 0x10, 0x20}}),
      cmd(CmdOp::Signal, 0, 5),
      cmd(CmdOp::Signal, 1, 6),
      cmd(CmdOp::Signal, 2, 7),  // the third: a WFI release
      exec("relu", {{2, 0x10, 0x20}}, {{2, 0x10, 0x20}}),
      cmd(CmdOp::Timestamp, 2),
      cmd(CmdOp::MemoryBarrier),
      exec("zero", {}, {{1, 0, 0x10000}}),
      cmd(CmdOp::Barrier),
      cmd(CmdOp::Signal, 0, 8),
  };
  std::vector<std::string> want = {
      "wait s0 >= 3",
      "exec gemm reads b0[0x0:0x100], b1[0x40:0x80] writes b2[0x10:0x20]",
      "signal s0 = 4",
      "signal s1 = 1099511627776",
      "exec gemm reads b0[0x0:0x100], b1[0x40:0x80] writes b2[0x10:0x20]",
      "exec relu reads b2[0x10:0x20] writes b2[0x10:0x20]",
      "signal s0 = 5",
      "signal s1 = 6",
      "signal s2 = 7",
      "exec relu reads b2[0x10:0x20] writes b2[0x10:0x20]",
      "timestamp s2",
      "memory_barrier",
      "exec zero writes b1[0x0:0x10000]",
      "barrier",
      "signal s0 = 8",
  };
  EncodeQueue q{Arch::Nv, EngineKind::Compute, Ordering::Chained};
  for (uint32_t major : {3u, 4u}) {
    CAPTURE(major);
    StreamResult r = round_trip(cmds, q, {nvm::kHopperComputeA, major, nvm::kHopperDmaCopyA});
    CHECK(texts(r) == want);
    CHECK(!r.overlap);
  }
  // Ampere's class with QMD V03.
  CHECK(texts(round_trip(cmds, q, {nvm::kAmpereComputeA, 3, nvm::kAmpereDmaCopyB})) == want);
  // Overlap: no chaining, no QMD releases; the decoder reads it on an overlap queue.
  EncodeQueue ov{Arch::Nv, EngineKind::Compute, Ordering::Overlap};
  CHECK(texts(round_trip(cmds, ov)) == want);
  // A serial compute queue, V04 on Ampere, an exec on a copy queue, a copy on a compute queue: CannotEncode.
  TestSpace sp;
  CHECK_THROWS_AS(nvm::encode_nv(cmds, EncodeQueue{Arch::Nv, EngineKind::Compute, Ordering::Serial}, sp), CannotEncode);
  CHECK_THROWS_AS(nvm::encode_nv_for(cmds, q, sp, {nvm::kAmpereComputeA, 4, nvm::kAmpereDmaCopyB}), CannotEncode);
  CHECK_THROWS_AS(nvm::encode_nv(cmds, EncodeQueue{Arch::Nv, EngineKind::Copy, Ordering::Serial}, sp), CannotEncode);
  ConcreteCommand cp = cmd(CmdOp::Copy);
  cp.reads = {{0, 0, 0x40}}, cp.writes = {{1, 0x40, 0x80}};
  CHECK_THROWS_AS(nvm::encode_nv({cp}, q, sp), CannotEncode);
  // Copy queue: waits, copies, 32-bit copy-engine semaphores, timestamps, barriers.
  EncodeQueue cq{Arch::Nv, EngineKind::Copy, Ordering::Serial};
  std::vector<ConcreteCommand> copies = {cmd(CmdOp::Wait, 1, uint64_t(1) << 33), cp, cmd(CmdOp::Signal, 0, 0xffffffff), cmd(CmdOp::Barrier),
                                         cmd(CmdOp::Timestamp, 2), cmd(CmdOp::Signal, 2, 1)};
  CHECK(texts(round_trip(copies, cq)) == std::vector<std::string>{"wait s1 >= 8589934592", "copy b0[0x0:0x40] -> b1[0x40:0x80]",
                                                                  "signal s0 = 4294967295", "barrier", "timestamp s2", "signal s2 = 1"});
  CHECK_THROWS_AS(nvm::encode_nv({cmd(CmdOp::Signal, 0, uint64_t(1) << 32)}, cq, sp), CannotEncode);
  CHECK_THROWS_AS(nvm::encode_nv({cmd(CmdOp::MemoryBarrier)}, cq, sp), CannotEncode);
}

TEST_CASE("nv-gpfifo: entries name pushbuffer segments decoded in order with one channel state; encode -> decode") {
  Qmd q;
  q.prog(kK).cb0(kMem).release(0, kTl, 1);
  StreamBinding b = binding({{0x40200, q.b}});
  Push seg1, seg2;
  seg1.compute().wait(kS1, 0);
  seg2.launch(0x40200);  // the class bound by the first segment still holds
  std::string pb = std::string(8, '\0') + seg1.bytes() + seg2.bytes();
  b.regions.push_back({0x50000, "pb", pb, 9, {}});
  auto entry = [](uint64_t addr, uint32_t len) {
    return std::vector<uint32_t>{uint32_t(addr) & ~3u, uint32_t(addr >> 32) | nvm::kGpLevelSubroutine | len << 10};
  };
  std::vector<uint32_t> ring = entry(0x50008, uint32_t(seg1.w.size()));
  ring.push_back(0), ring.push_back(0);  // a NOP control entry
  for (uint32_t x : entry(0x50008 + 4 * seg1.w.size(), uint32_t(seg2.w.size()))) ring.push_back(x);
  StreamResult r = nvm::decode_nv_gpfifo(b, le(ring), 1);
  CHECK(texts(r) == std::vector<std::string>{"wait s1 >= 0", kExec, "signal tl = 1"});
  CHECK(r.cmds[0].loc == Loc{9, 2 + 8, 0});  // SEM_EXECUTE: dword 8 of the segment, 2 dwords into the region
  CHECK(r.cmds[1].loc == Loc{9, 2 + 8 + 4, 0});  // PCAS2_B, the second segment's fourth dword
  // Control opcodes, conditional fetches, segments in no region, a torn entry: errors at the entry.
  std::vector<std::vector<uint32_t>> bad = {{0, 1}, {0x50009, 1u << 10}, {0x90000, 4u << 10}};
  for (auto& e : bad) {
    try {
      nvm::decode_nv_gpfifo(b, le(e), 1);
      FAIL("no error");
    } catch (const InputError& ge) {
      CHECK(ge.loc == Loc{1, 1, 0});
      CHECK(ge.message.find("GPFIFO entry 0") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(nvm::decode_nv_gpfifo(b, le(ring) + "abcd", 1), InputError);
  // The encoder: one entry naming the pushbuffer in a region.
  TestSpace space;
  std::vector<ConcreteCommand> cmds = {cmd(CmdOp::Wait, 0, 1), exec("k", {{0, 0, 0x10}}, {{1, 0, 0x10}}), cmd(CmdOp::Signal, 0, 2)};
  std::string g = nvm::encode_nv_gpfifo(cmds, EncodeQueue{Arch::Nv, EngineKind::Compute, Ordering::Chained}, space);
  CHECK(g.size() == 8);
  CHECK(texts(nvm::decode_nv_gpfifo(space.binding(), g, 1)) ==
        std::vector<std::string>{"wait s0 >= 1", "exec k reads b0[0x0:0x10] writes b1[0x0:0x10]", "signal s0 = 2"});
}

TEST_CASE("nv: a 64-bit host release on a copy queue and a circular acquire past 2^63 are refused") {
  StreamOptions copy;
  copy.engine = EngineKind::Copy;
  Push rel;
  rel.copyclass().release(kTl, 5);
  CHECK(error(binding(), rel.bytes(), copy).message.find("copy queue") != std::string::npos);
  CHECK(texts(nvm::decode_nv(binding(), rel.bytes(), 1)) == std::vector<std::string>{"signal tl = 5"});  // on a compute queue
  Push circ;
  circ.compute().wait(kTl, uint64_t(1) << 63);
  CHECK(error(binding(), circ.bytes()).message.find("circularly") != std::string::npos);
  Push strict;
  strict.compute().sem(kTl, uint64_t(1) << 63, nvm::kSemAcqStrictGeq | nvm::kSemPayload64);
  CHECK(texts(nvm::decode_nv(binding(), strict.bytes(), 1)) == std::vector<std::string>{"wait tl >= 9223372036854775808"});
}

}  // namespace test_nv
