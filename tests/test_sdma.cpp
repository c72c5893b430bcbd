// The AMD SDMA decoder and encoder (devices/amd/sdma.h) on small streams built here packet by packet.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "core/input_error.h"
#include "devices/amd/sdma.h"
#include "devices/amd/sdma_packets.h"

using namespace qvet;
namespace sdma = qvet::amd::sdma;

// A namespace of its own: the stream tests share helper names, and a unity build compiles them together.
namespace test_sdma {

namespace {

struct Words {
  std::vector<uint32_t> w;
  Words& raw(std::vector<uint32_t> d) {
    w.insert(w.end(), d.begin(), d.end());
    return *this;
  }
  Words& wait(uint64_t addr, uint32_t ref) {
    return raw({sdma::kPollRegmem | 5u << 28 | 1u << 31, uint32_t(addr), uint32_t(addr >> 32), ref, ~0u, 4 | 0xfffu << 16});
  }
  Words& fence(uint64_t addr, uint32_t v) { return raw({sdma::kFence | 3u << 16, uint32_t(addr), uint32_t(addr >> 32), v}); }
  Words& trap() { return raw({sdma::kTrap, 0}); }
  Words& copy(uint64_t src, uint64_t dst, uint64_t n) {
    return raw({sdma::kCopy, uint32_t(n - 1), 0, uint32_t(src), uint32_t(src >> 32), uint32_t(dst), uint32_t(dst >> 32)});
  }
  Words& timestamp(uint64_t addr) { return raw({sdma::kTimestamp | 2u << 8, uint32_t(addr), uint32_t(addr >> 32)}); }
  Words& hdp() { return raw({sdma::kPollRegmem | 1u << 26 | 3u << 28, 0x107 << 2, 0x106 << 2, 1, 1, 10 | 0xfffu << 16}); }
  Words& gcr() { return raw({sdma::kGcrReq, 0, 0xc000, 0, 0}); }
  Words& indirect(uint64_t addr, uint32_t ndw) { return raw({sdma::kIndirect, uint32_t(addr), uint32_t(addr >> 32), ndw, 0, 0}); }
  std::string bytes() const {
    std::string s;
    for (uint32_t x : w) append_dword(s, x);
    return s;
  }
};

StreamBinding binding() {
  StreamBinding b;
  b.buffers = {{0x10000, 0x1000, "a", {}}, {0x20000, 0x1000, "b", {}}};
  b.signals = {{0x30000, 16, "tl", {}}, {0x30010, 16, "mbox", {}}};
  return b;
}

std::vector<std::string> texts(const StreamResult& r) {
  std::vector<std::string> out;
  for (auto& c : r.cmds) out.push_back(c.text);
  return out;
}

InputError error(const std::string& bytes, StreamOptions o = {}, const StreamBinding& b = binding()) {
  try {
    amd::decode_sdma(b, bytes, 1, o);
  } catch (const InputError& e) {
    return e;
  }
  return {};
}
bool has(const InputError& e, const std::string& what) { return e.message.find(what) != std::string::npos; }

// The addresses of binding(): buffer 0 = a, 1 = b; signal 0 = tl, 1 = mbox.
class Space : public EncodeSpace {
 public:
  uint64_t buffer_addr(uint32_t base) override { return base == 0 ? 0x10000 : 0x20000; }
  uint64_t signal_addr(uint32_t s) override { return s == 0 ? 0x30000 : 0x30010; }
  uint64_t kernel_addr(const std::string&, const std::vector<StreamBinding::KernelArg>&, uint64_t) override {
    FAIL("SDMA binds no kernels");
    return 0;
  }
  uint64_t add_region(std::string, std::string_view, uint64_t) override {
    FAIL("SDMA adds no regions");
    return 0;
  }
  std::string& region(uint64_t) override { return dummy_; }

 private:
  std::string dummy_;
};

ConcreteCommand cmd(CmdOp op, uint32_t signal = kNone, uint64_t value = 0) {
  ConcreteCommand c;
  c.op = op, c.signal = signal, c.value = value, c.loc = {3, 7, 1};
  return c;
}
ConcreteCommand copy_cmd(uint32_t sb, uint64_t slo, uint32_t db, uint64_t dlo, uint64_t n) {
  ConcreteCommand c = cmd(CmdOp::Copy);
  c.reads = {{sb, slo, slo + n}};
  c.writes = {{db, dlo, dlo + n}};
  return c;
}

EncodeQueue copy_queue(Ordering o = Ordering::Serial) { return {Arch::Amd, EngineKind::Copy, o}; }

}  // namespace

TEST_CASE("sdma: NOP, wait, copy, fence + trap, timestamp; GCR_REQ and the HDP flush decode to nothing") {
  Words s;
  s.raw({0});                               // a one-dword NOP (tinygrad's padding)
  s.raw({sdma::kNop | 2u << 16, 0xdead, 0xbeef});  // a NOP with two dwords of payload
  s.wait(0x30000, 3).hdp().gcr().copy(0x10100, 0x20000, 0x100).gcr().fence(0x30000, 4).trap().timestamp(0x30008);
  StreamResult r = amd::decode_sdma(binding(), s.bytes(), 1);
  CHECK(texts(r) == std::vector<std::string>{"wait tl >= 3", "copy a[0x100:0x200] -> b[0x0:0x100]", "signal tl = 4", "timestamp tl"});
  CHECK(!r.overlap);
  REQUIRE(r.cmds.size() == 4);
  CHECK(r.cmds[0].loc == Loc{1, 5, 0});   // after the NOPs (1, 2..4)
  CHECK(r.cmds[1].loc.line == 5 + 6 + 6 + 5);  // after the wait, the HDP flush and a GCR_REQ
  CHECK(r.cmds[2].loc.line == 22 + 7 + 5);
  CHECK(r.cmds[3].loc.line == 34 + 4 + 2);
}

TEST_CASE("sdma: a copy of the largest count, and one that ends exactly at its buffer's end") {
  StreamBinding b = binding();
  b.buffers.push_back({0x100000000ull, uint64_t(1) << 31, "big", {}});
  b.buffers.push_back({0x200000000ull, uint64_t(1) << 30, "big2", {}});
  Words s;
  s.copy(0x100000000ull, 0x200000000ull, uint64_t(1) << 30).copy(0x10f00, 0x20000, 0x100);  // count field 0x3fffffff
  CHECK(texts(amd::decode_sdma(b, s.bytes(), 1)) ==
        std::vector<std::string>{"copy big[0x0:0x40000000] -> big2[0x0:0x40000000]", "copy a[0xf00:0x1000] -> b[0x0:0x100]"});
}

TEST_CASE("sdma: INDIRECT decodes a region in place, located in the region's file; indirect buffers do not nest") {
  StreamBinding b = binding();
  Words ib;
  ib.wait(0x30000, 1).fence(0x30000, 2).raw({0, 0});  // padded with NOPs, as tinygrad's bind rounds to 8 dwords
  std::string pad(32, '\0');  // the IB starts 8 dwords into its region
  b.regions.push_back({0x50000, "ib", pad + ib.bytes(), 9, {}});
  Words ring;
  ring.raw({0, 0}).indirect(0x50020, uint32_t(ib.w.size())).fence(0x30000, 3);
  StreamResult r = amd::decode_sdma(b, ring.bytes(), 1);
  REQUIRE(r.cmds.size() == 3);
  CHECK(r.cmds[0].loc == Loc{9, 9, 0});
  CHECK(r.cmds[1].loc == Loc{9, 15, 0});
  CHECK(r.cmds[2].loc == Loc{1, 9, 0});
  // Past its region, unaligned, or nested: input errors at the INDIRECT's dword.
  CHECK(has(error(Words().indirect(0x50020, 1000).bytes(), {}, b), "lie in no region"));
  CHECK(has(error(Words().indirect(0x50024, 2).bytes(), {}, b), "not 32-byte aligned"));
  Words inner;
  inner.indirect(0x50020, 2);
  b.regions.push_back({0x60000, "nest", inner.bytes(), 10, {}});
  InputError e = error(Words().indirect(0x60000, uint32_t(inner.w.size())).bytes(), {}, b);
  CHECK(has(e, "do not nest"));
  CHECK(e.loc == Loc{10, 1, 0});
}

TEST_CASE("sdma: what is not decoded is an input error naming the dword and the address") {
  Words w;
  w.fence(0x30000, 1).raw({0x99, 1, 2});
  InputError e = error(w.bytes());
  CHECK(e.loc == Loc{1, 5, 0});
  CHECK(has(e, "unknown SDMA op 0x99 at dword 0x4 (byte 0x10)"));
  CHECK(has(error(Words().raw({sdma::kCopy | 1u << 8, 0, 0, 0, 0, 0, 0}).bytes()), "unknown SDMA sub-op 0x1 of COPY"));
  CHECK(has(error(Words().raw({sdma::kFence | 1u << 8, 0, 0, 0}).bytes()), "unknown SDMA sub-op 0x1 of FENCE"));
  CHECK(has(error(Words().raw({sdma::kWrite, 0x10000, 0, 0, 7}).bytes()), "WRITE (0x2, sub-op 0x0) at dword 0x0 (byte 0x0) is not decoded, and its length"));
  // Truncated: the FENCE at dword 7 has 4 dwords, only 2 remain.
  std::string cut = Words().wait(0x30000, 1).fence(0x30000, 1).bytes();
  cut.resize(cut.size() - 8);
  e = error(cut);
  CHECK(e.loc.line == 7);
  CHECK(has(e, "truncated packet: FENCE (0x5, sub-op 0x0) at dword 0x6 (byte 0x18) is 4 dwords long, but only 2 remain"));
  // Addresses bound to nothing.
  CHECK(has(error(Words().wait(0x30004, 1).bytes()), "address 0x30004 is no signal's"));
  CHECK(has(error(Words().fence(0x10000, 1).bytes()), "address 0x10000 is no signal's"));
  CHECK(has(error(Words().timestamp(0x30000).bytes()), "0x30000 is no signal's timestamp slot"));
  CHECK(has(error(Words().timestamp(0x3000c).bytes()), "not 8-byte aligned"));
  CHECK(has(error(Words().copy(0x40000, 0x20000, 4).bytes()), "source address 0x40000 lies in no buffer"));
  CHECK(has(error(Words().copy(0x10000, 0x30000, 4).bytes()), "destination address 0x30000 lies in no buffer"));
  e = error(Words().copy(0x10f00, 0x20000, 0x101).bytes());
  CHECK(has(e, "source [0x10f00, +0x101) runs past the end of a"));
  CHECK(e.loc.line == 1);
  CHECK(has(error(Words().copy(0x10000, 0x20f01, 0x100).bytes()), "destination [0x20f01, +0x100) runs past the end of b"));
  // Fields the decoder does not model.
  CHECK(has(error(Words().raw({sdma::kPollRegmem | 3u << 28 | 1u << 31, 0x30000, 0, 1, ~0u, 0}).bytes()), "compare function 3"));
  CHECK(has(error(Words().raw({sdma::kPollRegmem | 5u << 28 | 1u << 31, 0x30000, 0, 1, 0xffff, 0}).bytes()), "mask 0xffff"));
  CHECK(has(error(Words().raw({sdma::kPollRegmem | 5u << 28, 0x30000, 0, 1, ~0u, 0}).bytes()), "register poll"));
  CHECK(has(error(Words().raw({sdma::kPollRegmem | 1u << 26 | 1u << 31, 0x30000, 0, 1, ~0u, 0}).bytes()), "HDP flush"));
  CHECK(has(error(Words().raw({sdma::kCopy | 1u << 25, 0, 0, 0, 0, 0, 0}).bytes()), "backwards"));
  CHECK(has(error(Words().raw({sdma::kCopy | 1u << 27, 0, 0, 0, 0, 0, 0}).bytes()), "broadcast"));
  CHECK(has(error(Words().raw({sdma::kCopy, 1u << 30, 0, 0, 0, 0, 0}).bytes()), "reserved bits"));
  CHECK(has(error(Words().raw({sdma::kTimestamp | 1u << 8, 0x30008, 0}).bytes()), "only TIMESTAMP GET_GLOBAL"));
  CHECK(has(error(Words().raw({sdma::kConstFill, 0x10000, 0, 0, 3}).bytes()), "--ignore-packet amd-sdma:0xb"));
  // A stream that ends inside a dword.
  e = error(Words().fence(0x30000, 1).bytes() + "xy");
  CHECK(e.loc.line == 5);
}

TEST_CASE("sdma: --ignore-packet skips a packet of known length; one of unknown length stays an error") {
  Words w;
  w.raw({sdma::kConstFill, 0x10000, 0, 0, 3}).fence(0x30000, 1);
  StreamOptions o;
  o.ignored = {sdma::kConstFill};
  StreamResult r = amd::decode_sdma(binding(), w.bytes(), 1, o);
  CHECK(texts(r) == std::vector<std::string>{"signal tl = 1"});
  CHECK(r.cmds[0].loc.line == 6);
  o.ignored = {sdma::kConstFill, sdma::kFence};  // a decoded packet may be ignored too
  CHECK(amd::decode_sdma(binding(), w.bytes(), 1, o).cmds.empty());
  Words u;
  u.raw({0x99, 0}).fence(0x30000, 1);
  o.ignored = {0x99};
  InputError e = error(u.bytes(), o);
  CHECK(has(e, "its length is not known"));
  CHECK(e.loc.line == 1);
}

TEST_CASE("sdma: the implementation limits are input errors marked as limits") {
  Words s;
  s.fence(0x30000, 1).fence(0x30000, 2).fence(0x30000, 3);
  StreamOptions o;
  o.max_commands = 2;
  InputError e = error(s.bytes(), o);
  CHECK(e.limit);
  CHECK(e.loc.line == 9);
  o = {};
  o.max_dwords = 10;
  e = error(s.bytes(), o);
  CHECK(e.limit);
  // A NOP whose count runs past the end is a truncated packet, never an endless loop.
  CHECK(has(error(Words().raw({sdma::kNop | 0x3fffu << 16}).bytes()), "truncated packet"));
}

TEST_CASE("sdma: encode -> decode gives the batch back") {
  Space sp;
  std::vector<ConcreteCommand> cmds = {cmd(CmdOp::Wait, 0, 5),
                                       copy_cmd(0, 0x100, 1, 0x0, 0x100),
                                       copy_cmd(1, 0x0, 0, 0xf00, 0x100),
                                       cmd(CmdOp::Timestamp, 0),
                                       cmd(CmdOp::Signal, 0, 0xffffffffu),
                                       cmd(CmdOp::Signal, 1, 0),
                                       cmd(CmdOp::Wait, 1, 0)};
  for (Ordering o : {Ordering::Serial, Ordering::Overlap}) {
    std::string bytes = amd::encode_sdma(cmds, copy_queue(o), sp);
    StreamResult r = amd::decode_sdma(binding(), bytes, 1);
    CHECK(texts(r) == std::vector<std::string>{"wait tl >= 5", "copy a[0x100:0x200] -> b[0x0:0x100]", "copy b[0x0:0x100] -> a[0xf00:0x1000]",
                                               "timestamp tl", "signal tl = 4294967295", "signal mbox = 0", "wait mbox >= 0"});
    // Each command at its own packet, in order: POLL_REGMEM 6, COPY 7, COPY 7, TIMESTAMP 3, FENCE 4 + TRAP 2, ...
    REQUIRE(r.cmds.size() == 7);
    CHECK(r.cmds[1].loc.line == 7);
    CHECK(r.cmds[3].loc.line == 21);
    CHECK(r.cmds[5].loc.line == 30);
  }
  CHECK(amd::encode_sdma({}, copy_queue(), sp).empty());
  // The largest copy one packet carries.
  std::string big = amd::encode_sdma({copy_cmd(0, 0, 1, 0, uint64_t(1) << 30)}, copy_queue(), sp);
  CHECK(dword_at(big, 1) == 0x3fffffffu);
}

TEST_CASE("sdma: what SDMA cannot carry is CannotEncode, located at the command") {
  Space sp;
  auto why = [&](std::vector<ConcreteCommand> cmds, EncodeQueue q = copy_queue()) -> std::string {
    try {
      amd::encode_sdma(cmds, q, sp);
    } catch (const CannotEncode& e) {
      CHECK(e.loc == Loc{3, 7, 1});
      return e.why;
    }
    return "";
  };
  CHECK(why({cmd(CmdOp::Signal, 0, uint64_t(1) << 32)}).find("FENCE's data carries 32 bits") != std::string::npos);
  CHECK(why({cmd(CmdOp::Wait, 0, uint64_t(1) << 32)}).find("POLL_REGMEM's reference carries 32 bits") != std::string::npos);
  CHECK(why({copy_cmd(0, 0, 1, 0, (uint64_t(1) << 30) + 1)}).find("at most 2^30 bytes") != std::string::npos);
  ConcreteCommand ex = cmd(CmdOp::Exec);
  ex.kernel = "k";
  CHECK(why({ex}).find("no kernels") != std::string::npos);
  CHECK(why({cmd(CmdOp::MemoryBarrier)}).find("compute-queue command") != std::string::npos);
  CHECK(why({cmd(CmdOp::Barrier)}).find("no barrier packet") != std::string::npos);
  CHECK(why({cmd(CmdOp::Signal, 0, 1)}, copy_queue(Ordering::Chained)).find("chained") != std::string::npos);
}

}  // namespace test_sdma
