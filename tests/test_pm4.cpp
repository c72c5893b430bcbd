// The AMD PM4 decoder (devices/amd/pm4.h) on small streams built here packet by packet.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/input_error.h"
#include "devices/amd/pm4.h"
#include "devices/amd/pm4_packets.h"

using namespace qvet;
namespace pm4 = qvet::amd::pm4;

// A namespace of its own: the stream tests share helper names, and a unity build compiles them together.
namespace test_pm4 {

namespace {

struct Words {
  std::vector<uint32_t> w;
  Words& pkt(uint32_t op, std::vector<uint32_t> body) {
    w.push_back(pm4::header(op, uint32_t(body.size())));
    w.insert(w.end(), body.begin(), body.end());
    return *this;
  }
  Words& wait(uint64_t addr, uint32_t ref) { return pkt(pm4::kWaitRegMem, {(1u << 4) | 5, uint32_t(addr), uint32_t(addr >> 32), ref, ~0u, 4}); }
  Words& release(uint64_t addr, uint32_t v, uint32_t sel = 1) {
    return pkt(pm4::kReleaseMem, {0x14 | (5u << 8), sel << 29, uint32_t(addr), uint32_t(addr >> 32), v, 0, 0});
  }
  Words& acquire() { return pkt(pm4::kAcquireMem, {0, ~0u, ~0u, 0, 0, 0, 0x3ff}); }
  Words& hdp() { return pkt(pm4::kWaitRegMem, {(1u << 6) | 5, 0x106, 0x107, ~0u, ~0u, 4}); }
  Words& dispatch(uint64_t code, uint64_t kargs, bool flush = true) {
    pkt(pm4::kSetShReg, {pm4::kRegComputePgmLo, uint32_t(code >> 8), uint32_t(code >> 40)});
    pkt(pm4::kSetShReg, {pm4::kRegComputeUserData0, uint32_t(kargs), uint32_t(kargs >> 32)});
    pkt(pm4::kDispatchDirect, {1, 1, 1, 1});
    if (flush) pkt(pm4::kEventWrite, {pm4::kEventCsPartialFlush | (4u << 8)});
    return *this;
  }
  std::string bytes() const {
    std::string s;
    for (uint32_t x : w)
      for (int i = 0; i < 4; ++i) s += char((x >> (8 * i)) & 0xff);
    return s;
  }
};

StreamBinding binding() {
  StreamBinding b;
  b.buffers = {{0x10000, 0x1000, "a", {}}, {0x20000, 0x1000, "b", {}}};
  b.signals = {{0x30000, 16, "tl", {}}};
  b.kernels = {{0x70000, "k", {{StreamBinding::Arg::Reads}, {StreamBinding::Arg::Value}, {StreamBinding::Arg::Writes}}, {}}};
  std::string kargs;
  for (uint64_t p : {0x10100ull, 5ull, 0x20000ull})
    for (int i = 0; i < 8; ++i) kargs += char((p >> (8 * i)) & 0xff);
  b.regions = {{0x40000, "kargs", kargs, 7, {}}};
  return b;
}

std::vector<std::string> texts(const StreamResult& r) {
  std::vector<std::string> out;
  for (auto& c : r.cmds) out.push_back(c.text);
  return out;
}

}  // namespace

TEST_CASE("pm4: filler, NOP, wait, HDP flush + ACQUIRE_MEM, dispatch, release, timestamp") {
  Words s;
  s.w.push_back(pm4::kType2Filler);
  s.pkt(pm4::kNop, {0xdead, 0xbeef}).wait(0x30000, 3).hdp().acquire().acquire().dispatch(0x70000, 0x40000);
  s.release(0x30000, 4).release(0x30008, 0, 3);
  StreamResult r = amd::decode_pm4(binding(), s.bytes(), 1);
  CHECK(texts(r) == std::vector<std::string>{"wait tl >= 3", "memory_barrier", "exec k reads a[0x100:0x1000] writes b[0x0:0x1000]",
                                             "signal tl = 4", "timestamp tl"});
  CHECK(!r.overlap);
  CHECK(r.cmds[0].loc == Loc{1, 5, 0});  // after the filler (1) and the NOP (2..4)
  CHECK(r.cmds[1].loc.line == 12);       // the memory_barrier sits at its HDP flush
}

TEST_CASE("pm4: a dispatch without CS_PARTIAL_FLUSH makes the stream overlap, and flushes barriers") {
  Words s;
  s.dispatch(0x70000, 0x40000, false).dispatch(0x70000, 0x40000).release(0x30000, 1);
  StreamResult r = amd::decode_pm4(binding(), s.bytes(), 1);
  CHECK(r.overlap);
  CHECK(r.unflushed.line == 9);  // the first DISPATCH_DIRECT
  CHECK(texts(r) == std::vector<std::string>{"exec k reads a[0x100:0x1000] writes b[0x0:0x1000]",
                                             "exec k reads a[0x100:0x1000] writes b[0x0:0x1000]", "barrier", "signal tl = 1"});
  // Flushed everywhere: on a serial queue the flushes add nothing, on an overlap queue they are barriers.
  Words f;
  f.dispatch(0x70000, 0x40000);
  CHECK(amd::decode_pm4(binding(), f.bytes(), 1).cmds.size() == 1);
  StreamOptions o;
  o.queue_overlap = true;
  CHECK(texts(amd::decode_pm4(binding(), f.bytes(), 1, o)).back() == "barrier");
  // The stream's end counts as "before the next dispatch" (the next batch may overlap it).
  Words e;
  e.dispatch(0x70000, 0x40000, false);
  CHECK(amd::decode_pm4(binding(), e.bytes(), 1).overlap);
}

TEST_CASE("pm4: INDIRECT_BUFFER decodes a region in place, located in the region's file") {
  StreamBinding b = binding();
  Words ib;
  ib.wait(0x30000, 1).release(0x30000, 2);
  std::string pad(8, '\0');  // the IB starts 2 dwords into its region
  b.regions.push_back({0x50000, "ib", pad + ib.bytes(), 9, {}});
  Words ring;
  ring.pkt(pm4::kIndirectBuffer, {0x50008, 0, uint32_t(ib.w.size()) | (1u << 23)}).release(0x30000, 3);
  StreamResult r = amd::decode_pm4(b, ring.bytes(), 1);
  REQUIRE(r.cmds.size() == 3);
  CHECK(r.cmds[0].loc == Loc{9, 3, 0});
  CHECK(r.cmds[1].loc == Loc{9, 10, 0});
  CHECK(r.cmds[2].loc == Loc{1, 5, 0});
  // An IB past its region, or calling itself without end, is an input error at its dword.
  Words bad;
  bad.pkt(pm4::kIndirectBuffer, {0x50008, 0, 1000});
  CHECK_THROWS_AS(amd::decode_pm4(b, bad.bytes(), 1), InputError);
  Words self;
  self.pkt(pm4::kIndirectBuffer, {0x60000, 0, 4u | (1u << 23)});
  b.regions.push_back({0x60000, "self", self.bytes(), 10, {}});
  try {
    amd::decode_pm4(b, self.bytes(), 1);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.message.find("nested deeper") != std::string::npos);
    CHECK(e.loc.file == 10);
  }
}

TEST_CASE("pm4: what is not decoded is an input error naming the dword and the address; ignorable opcodes skip") {
  auto error = [](const Words& s, StreamOptions o = {}) -> InputError {
    try {
      amd::decode_pm4(binding(), s.bytes(), 1, o);
    } catch (const InputError& e) {
      return e;
    }
    return {};
  };
  Words w;
  w.release(0x30000, 1).pkt(0x99, {1});
  InputError e = error(w);
  CHECK(e.loc.line == 9);
  CHECK(e.message.find("unknown PM4 opcode 0x99 at dword 0x8 (byte 0x20)") != std::string::npos);
  StreamOptions o;
  o.ignored = {0x99};
  CHECK(amd::decode_pm4(binding(), w.bytes(), 1, o).cmds.size() == 1);
  Words u;
  u.wait(0x30004, 1);
  CHECK(error(u).message.find("address 0x30004 is no signal's") != std::string::npos);
  Words p;
  p.pkt(pm4::kSetShReg, {pm4::kRegComputePgmLo, 0x700, 0}).pkt(pm4::kSetShReg, {pm4::kRegComputeUserData0, 0x40008, 0});
  p.pkt(pm4::kDispatchDirect, {1, 1, 1, 1});
  CHECK(error(p).message.find("lie in no region") != std::string::npos);  // 24 argument bytes from 0x40008 pass the region's end
  Words sel;
  sel.release(0x30000, 1, 2);
  CHECK(error(sel).message.find("data select 2") != std::string::npos);
  std::string odd = Words().wait(0x30000, 1).bytes() + "xy";
  try {
    amd::decode_pm4(binding(), odd, 1);
    FAIL("no error");
  } catch (const InputError& x) {
    CHECK(x.loc.line == 8);
  }
}

TEST_CASE("pm4: the implementation limits are input errors marked as limits") {
  Words s;
  s.wait(0x30000, 1).wait(0x30000, 2).wait(0x30000, 3);
  StreamOptions o;
  o.max_commands = 2;
  try {
    amd::decode_pm4(binding(), s.bytes(), 1, o);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.limit);
    CHECK(e.loc.line == 15);
  }
  o = {};
  o.max_dwords = 10;
  CHECK_THROWS_AS(amd::decode_pm4(binding(), s.bytes(), 1, o), InputError);
}

TEST_CASE("pm4: argument extents bound the ranges; an extent past the buffer is an error at the dispatch") {
  Words s;
  s.dispatch(0x70000, 0x40000);
  StreamBinding b = binding();
  b.kernels[0].args[0].extent = 0x10;
  b.kernels[0].args[2].extent = 0x1000;
  StreamResult r = amd::decode_pm4(b, s.bytes(), 1);
  CHECK(texts(r) == std::vector<std::string>{"exec k reads a[0x100:0x110] writes b[0x0:0x1000]"});
  b.kernels[0].args[0].extent = 0xf01;  // a + 0x100 + 0xf01 passes a's end
  try {
    amd::decode_pm4(b, s.bytes(), 1);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.message.find("run past the end of a") != std::string::npos);
    CHECK(e.loc.line == 9);  // the DISPATCH_DIRECT, after two SET_SH_REG packets of 4 dwords
  }
}

namespace {
// An EncodeSpace for unit tests: things at fixed addresses, regions kept for a StreamBinding.
struct TestSpace : EncodeSpace {
  StreamBinding b = binding();
  uint64_t next = 0x50000;
  uint64_t buffer_addr(uint32_t base) override { return b.buffers[base].addr; }
  uint64_t signal_addr(uint32_t s) override { return b.signals[s].addr; }
  uint64_t kernel_addr(const std::string& name, const std::vector<StreamBinding::KernelArg>& args, uint64_t) override {
    for (auto& k : b.kernels)
      if (k.name == name && k.args == args) return k.addr;
    b.kernels.push_back({0x80000 + 0x1000 * b.kernels.size(), name, args, {}});
    return b.kernels.back().addr;
  }
  uint64_t add_region(std::string bytes, std::string_view, uint64_t) override {
    uint64_t a = next;
    next += (bytes.size() + 0xff) & ~uint64_t(0xff);
    b.regions.push_back({a, "r", std::move(bytes), 9, {}});
    return a;
  }
  std::string& region(uint64_t addr) override {
    for (auto& r : b.regions)
      if (r.addr == addr) return r.bytes;
    throw std::logic_error("no region");
  }
};
ConcreteCommand cmd(CmdOp op, uint32_t signal = kNone, uint64_t value = 0) {
  ConcreteCommand c;
  c.op = op, c.signal = signal, c.value = value, c.loc = {1, 1, 0};
  return c;
}
}  // namespace

TEST_CASE("pm4: the encoder writes what the decoder reads, serial and overlap") {
  ConcreteCommand e = cmd(CmdOp::Exec);
  e.kernel = "gemm";
  e.reads = {{0, 0x10, 0x30}};
  e.writes = {{1, 0, 0x1000}};
  std::vector<ConcreteCommand> cmds = {cmd(CmdOp::Wait, 0, 7), cmd(CmdOp::MemoryBarrier), e, cmd(CmdOp::Barrier),
                                       cmd(CmdOp::Signal, 0, 8), cmd(CmdOp::Timestamp, 0), e};
  std::vector<std::string> want = {"wait tl >= 7", "memory_barrier", "exec gemm reads a[0x10:0x30] writes b[0x0:0x1000]", "barrier",
                                   "signal tl = 8", "timestamp tl", "exec gemm reads a[0x10:0x30] writes b[0x0:0x1000]"};
  for (Ordering o : {Ordering::Serial, Ordering::Overlap}) {
    TestSpace space;
    std::string bytes = amd::encode_pm4(cmds, {Arch::Amd, EngineKind::Compute, o}, space);
    StreamOptions opt;
    opt.queue_overlap = o == Ordering::Overlap;
    StreamResult r = amd::decode_pm4(space.b, bytes, 1, opt);
    CHECK(texts(r) == want);
    CHECK(r.overlap == (o == Ordering::Overlap));  // the last dispatch is unflushed only on the overlap queue
  }
  TestSpace space;
  CHECK_THROWS_AS(amd::encode_pm4({cmd(CmdOp::Signal, 0, uint64_t(1) << 32)}, {Arch::Amd, EngineKind::Compute, Ordering::Serial}, space),
                  CannotEncode);
  CHECK_THROWS_AS(amd::encode_pm4({cmd(CmdOp::Copy)}, {Arch::Amd, EngineKind::Compute, Ordering::Serial}, space), CannotEncode);
  CHECK_THROWS_AS(amd::encode_pm4({e}, {Arch::Amd, EngineKind::Compute, Ordering::Chained}, space), CannotEncode);
}

TEST_CASE("pm4: what would order or access more than the model is told is refused or left out") {
  auto error = [](const Words& s) -> std::string {
    try {
      amd::decode_pm4(binding(), s.bytes(), 1);
    } catch (const InputError& e) {
      return e.message;
    }
    return "";
  };
  Words pred;
  pred.w.push_back(pm4::header(pm4::kNop, 1) | 1u);  // PREDICATE
  pred.w.push_back(0);
  CHECK(error(pred).find("predicated") != std::string::npos);
  Words chain;
  chain.pkt(pm4::kIndirectBuffer, {0x40000, 0, 2u | (1u << 20) | (1u << 23)});
  CHECK(error(chain).find("CHAIN") != std::string::npos);
  Words user;  // the argument pointer written from USER_DATA_0 - 2: not what the decoder reads
  user.pkt(pm4::kSetShReg, {pm4::kRegComputeUserData0 - 2, 0, 0, 0x40000, 0});
  CHECK(error(user).find("COMPUTE_USER_DATA") != std::string::npos);
  Words flush;  // EVENT_WRITE CS_PARTIAL_FLUSH with another event index
  flush.pkt(pm4::kEventWrite, {pm4::kEventCsPartialFlush});
  CHECK(error(flush).find("index") != std::string::npos);
  // An HDP flush followed by the pre-dispatch ACQUIRE_MEM (GL2 left out) is no memory_barrier.
  Words part;
  part.hdp().pkt(pm4::kAcquireMem, {0, ~0u, ~0u, 0, 0, 0, pm4::kAcquireGcrDispatch});
  CHECK(texts(amd::decode_pm4(binding(), part.bytes(), 1)).empty());
  // An ignored packet between the flush and its ACQUIRE_MEM cancels the flush.
  Words ign;
  ign.hdp().pkt(0x99, {0}).acquire();
  StreamOptions o;
  o.ignored = {0x99};
  CHECK(texts(amd::decode_pm4(binding(), ign.bytes(), 1, o)).empty());
  // A signal released on an event that does not write the caches back first.
  Words bop;
  bop.pkt(pm4::kReleaseMem, {0x28 | (5u << 8), 1u << 29, 0x30000, 0, 1, 0, 0});
  CHECK(error(bop).find("CACHE_FLUSH_AND_INV_TS_EVENT") != std::string::npos);
}

}  // namespace test_pm4
