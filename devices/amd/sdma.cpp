#include "devices/amd/sdma.h"

#include <algorithm>
#include <string>

#include "core/expr.h"
#include "core/input_error.h"
#include "devices/amd/sdma_packets.h"

namespace qvet::amd {

namespace sdma {

const char* op_name(uint32_t op) {
  switch (op) {
    case kNop: return "NOP";
    case kCopy: return "COPY";
    case kWrite: return "WRITE";
    case kIndirect: return "INDIRECT";
    case kFence: return "FENCE";
    case kTrap: return "TRAP";
    case kSem: return "SEM";
    case kPollRegmem: return "POLL_REGMEM";
    case kCondExe: return "COND_EXE";
    case kAtomic: return "ATOMIC";
    case kConstFill: return "CONST_FILL";
    case kPtePde: return "PTEPDE";
    case kTimestamp: return "TIMESTAMP";
    case kSrbmWrite: return "SRBM_WRITE";
    case kPreExe: return "PRE_EXE";
    case kGpuvmInv: return "GPUVM_INV";
    case kGcrReq: return "GCR_REQ";
    default: return nullptr;
  }
}

}  // namespace sdma

namespace {

// The packet's length in dwords as its header sets it, or 0 where the decoder does not know it
// (an unknown op or sub-op, or a layout it does not read).
uint64_t packet_dwords(uint32_t h) {
  using namespace sdma;
  uint32_t sub = sub_op(h);
  switch (op(h)) {
    case kNop: return sub == 0 ? 1 + uint64_t(nop_count(h)) : 0;
    case kCopy: return sub == kSubCopyLinear && !(h & kCopyBroadcast) ? kCopyLinearDwords : 0;
    case kIndirect: return sub == 0 ? kIndirectDwords : 0;
    case kFence: return sub == 0 ? kFenceDwords : 0;
    case kTrap: return sub == 0 ? kTrapDwords : 0;
    case kPollRegmem: return sub == 0 ? kPollRegmemDwords : 0;
    case kTimestamp: return sub <= kSubTimestampGetGlobal ? kTimestampDwords : 0;
    case kGcrReq: return sub == 0 ? kGcrReqDwords : 0;
    case kSem: return sub == 0 ? kSemDwords : 0;
    case kCondExe: return sub == 0 ? kCondExeDwords : 0;
    case kConstFill: return sub == 0 ? kConstFillDwords : 0;
    case kSrbmWrite: return sub == 0 ? kSrbmWriteDwords : 0;
    case kPreExe: return sub == 0 ? kPreExeDwords : 0;
    default: return 0;
  }
}

constexpr const char* kDecoded = "NOP, COPY_LINEAR, INDIRECT, FENCE, TRAP, POLL_REGMEM, TIMESTAMP GET_GLOBAL, GCR_REQ";

class SdmaDecoder {
 public:
  SdmaDecoder(const StreamBinding& b, const StreamOptions& opt) : opt_(opt), index_(b) {}

  StreamResult run(std::string_view bytes, uint32_t file) {
    walk(bytes, file, 0, 0);
    StreamResult r;
    r.cmds = std::move(cmds_);
    return r;
  }

 private:
  const StreamOptions& opt_;
  BindingIndex index_;
  std::vector<DecodedCommand> cmds_;
  uint64_t decoded_ = 0;

  [[noreturn]] static void fail(const Loc& l, const std::string& msg) { throw InputError{l, msg}; }

  void emit(const Loc& l, std::string text) {
    cmds_.push_back(sink_.make(l, std::move(text)));
  }
  DecodedSink sink_{opt_, index_};
  static constexpr uint64_t kNotInMemory = DecodedSink::kNotInMemory;

  bool ignored(uint32_t op) const { return std::find(opt_.ignored.begin(), opt_.ignored.end(), op) != opt_.ignored.end(); }

  // Decodes `bytes`, whose first dword is dword `base` of `file` (locations count from the file's start).
  // `mem`: the address of `bytes` where they lie in memory (an indirect buffer), else kNotInMemory.
  void walk(std::string_view bytes, uint32_t file, int depth, uint64_t base, uint64_t mem = kNotInMemory) {
    uint64_t n = bytes.size() / 4;
    if (base + n + 1 > UINT32_MAX) throw InputError{{file, 0, 0}, "stream longer than 2^32 dwords (an implementation limit)", true};
    if (bytes.size() % 4)
      fail({file, uint32_t(base + n + 1), 0}, "stream of " + std::to_string(bytes.size()) +
                                                  " bytes ends inside a dword (an SDMA stream is whole little-endian dwords)");
    uint64_t i = 0;
    while (i < n) {
      Loc loc{file, uint32_t(base + i + 1), 0};
      uint32_t h = dword_at(bytes, i);
      uint32_t op = sdma::op(h), sub = sdma::sub_op(h);
      const char* name = sdma::op_name(op);
      std::string what = std::string(name ? name : "op") + " (" + format_hex(op) + ", sub-op " + format_hex(sub) + ") at " + at_dword(loc);
      uint64_t len = packet_dwords(h);
      if (!len) {
        if (op == sdma::kCopy && sub == sdma::kSubCopyLinear)
          fail(loc, what + ": a broadcast COPY_LINEAR (header bit 27) is not decoded");
        if (ignored(op))
          fail(loc, what + " is listed by --ignore-packet, but its length is not known to the SDMA decoder (SDMA headers carry no count), so it cannot be skipped");
        if (op == sdma::kWrite || op == sdma::kAtomic || op == sdma::kPtePde || op == sdma::kGpuvmInv)
          fail(loc, what + " is not decoded, and its length is not known to the SDMA decoder (so --ignore-packet cannot skip it)");
        if (name) fail(loc, "unknown SDMA sub-op " + format_hex(sub) + " of " + name + " (" + format_hex(op) + ") at " + at_dword(loc) + " (decoded: " + kDecoded + ")");
        fail(loc, "unknown SDMA op " + format_hex(op) + " at " + at_dword(loc) + " (decoded: " + kDecoded + ")");
      }
      if (i + len > n)
        fail(loc, "truncated packet: " + what + " is " + std::to_string(len) + " dwords long, but only " + std::to_string(n - i) +
                      " remain before the end of the stream");
      decoded_ += len;
      if (decoded_ > opt_.max_dwords)
        throw InputError{loc, "more than " + std::to_string(opt_.max_dwords) + " dwords decoded, indirect buffers included (an implementation limit)", true};
      sink_.at_packet(mem == kNotInMemory ? mem : mem + 4 * i, 4 * len);
      if (!ignored(op)) packet(h, bytes.substr(i * 4, len * 4), loc, what, depth);
      i += len;
    }
  }

  const StreamBinding::Placed& signal(uint64_t addr, const Loc& loc, const std::string& what) {
    const StreamBinding::Placed* s = index_.signal_at(addr);
    if (!s) fail(loc, what + ": address " + format_hex(addr) + " is no signal's ('signal NAME on DEV at " + format_hex(addr) + "')");
    return *s;
  }

  // `b[lo:hi]` for the `n` bytes at `addr`, which must lie in one buffer.
  std::string range(uint64_t addr, uint64_t n, const char* side, const Loc& loc, const std::string& what) {
    const StreamBinding::Placed* b = index_.buffer_containing(addr);
    if (!b) fail(loc, what + ": the copy's " + side + " address " + format_hex(addr) + " lies in no buffer ('buffer NAME on DEV SIZE at ADDR')");
    uint64_t lo = addr - b->addr;
    if (n > b->size - lo)
      fail(loc, what + ": the copy's " + side + " [" + format_hex(addr) + ", +" + format_hex(n) + ") runs past the end of " + b->name + " (" +
                    format_hex(b->size) + " bytes at " + format_hex(b->addr) + ")");
    return b->name + "[" + format_hex(lo) + ":" + format_hex(lo + n) + "]";
  }

  void packet(uint32_t h, std::string_view p, const Loc& loc, const std::string& what, int depth) {
    auto dw = [&](uint64_t k) { return dword_at(p, k); };
    auto addr = [&](uint64_t k) { return uint64_t(dw(k)) | uint64_t(dw(k + 1)) << 32; };
    switch (sdma::op(h)) {
      case sdma::kNop:
      case sdma::kTrap:    // an interrupt for the host (tinygrad's wake-up after a FENCE); no command
      case sdma::kGcrReq:  // cache write-back/invalidate: copy engines need no acquire (semantics.md)
        return;
      case sdma::kCopy: {
        if (h & sdma::kCopyBackwards) fail(loc, what + ": a backwards COPY_LINEAR (header bit 25) is not decoded");
        if (dw(1) & ~sdma::kCopyCountMask) fail(loc, what + ": count dword " + format_hex(dw(1)) + " sets reserved bits 31:30");
        uint64_t n = uint64_t(dw(1) & sdma::kCopyCountMask) + 1;
        std::string src = range(addr(3), n, "source", loc, what), dst = range(addr(5), n, "destination", loc, what);
        emit(loc, "copy " + src + " -> " + dst);
        return;
      }
      case sdma::kFence: emit(loc, "signal " + signal(addr(1), loc, what).name + " = " + std::to_string(dw(3))); return;
      case sdma::kPollRegmem: return poll(h, p, loc, what);
      case sdma::kTimestamp: {
        if (sdma::sub_op(h) != sdma::kSubTimestampGetGlobal)
          fail(loc, what + ": only TIMESTAMP GET_GLOBAL (sub-op 2) is decoded (SET and GET, the engine-local clock, are not)");
        uint64_t a = addr(1);
        if (a % 8) fail(loc, what + ": timestamp address " + format_hex(a) + " is not 8-byte aligned (the packet holds bits 63:3)");
        const StreamBinding::Placed* s = a >= 8 ? index_.signal_at(a - 8) : nullptr;
        if (!s) fail(loc, what + ": timestamp address " + format_hex(a) + " is no signal's timestamp slot (a signal's address + 8)");
        emit(loc, "timestamp " + s->name);
        return;
      }
      case sdma::kIndirect: return indirect(p, loc, what, depth);
      default:
        fail(loc, what + " is not decoded (its " + std::to_string(p.size() / 4) + " dwords can be skipped with --ignore-packet amd-sdma:" +
                      format_hex(sdma::op(h)) + ")");
    }
  }

  void poll(uint32_t h, std::string_view p, const Loc& loc, const std::string& what) {
    if (sdma::poll_hdp_flush(h)) {
      // The HDP flush (write the flush request register, poll the done register). It makes the
      // host's writes through the HDP reach memory; copy engines read memory directly and need no
      // acquire, and memory_barrier is a compute-queue command (semantics.md): no command.
      if (sdma::poll_mem(h)) fail(loc, what + ": an HDP flush (header bit 26) that polls memory (bit 31) is not decoded");
      return;
    }
    if (!sdma::poll_mem(h)) fail(loc, what + ": a register poll (mem_poll 0) without the HDP flush bit is not decoded");
    if (sdma::poll_func(h) != sdma::kFuncGe)
      fail(loc, what + ": compare function " + std::to_string(sdma::poll_func(h)) + " is not decoded (only >=, function 5)");
    uint32_t mask = dword_at(p, 4);
    if (mask != 0xffffffffu) fail(loc, what + ": mask " + format_hex(mask) + " is not decoded (only 0xffffffff)");
    uint64_t a = uint64_t(dword_at(p, 1)) | uint64_t(dword_at(p, 2)) << 32;
    emit(loc, "wait " + signal(a, loc, what).name + " >= " + std::to_string(dword_at(p, 3)));
  }

  void indirect(std::string_view p, const Loc& loc, const std::string& what, int depth) {
    if (depth > 0) fail(loc, what + ": an INDIRECT inside an indirect buffer is not decoded (SDMA indirect buffers do not nest)");
    uint64_t a = uint64_t(dword_at(p, 1)) | uint64_t(dword_at(p, 2)) << 32;
    uint64_t n = uint64_t(sdma::ib_size_dwords(dword_at(p, 3))) * 4;
    if (a % sdma::kIndirectAlign) fail(loc, what + ": indirect buffer address " + format_hex(a) + " is not 32-byte aligned");
    BindingIndex::Indirect ib = index_.indirect(a, n, loc, what);
    walk(ib.bytes, ib.file, depth + 1, ib.first_dword, a);
  }
};

// ---- the encoder: tinygrad's AMDCopyQueue lowering -----------------------------------------
class SdmaEncoder {
 public:
  SdmaEncoder(const EncodeQueue& q, EncodeSpace& space) : q_(q), space_(space) {}

  std::string run(const std::vector<ConcreteCommand>& cmds) {
    refuse_chained(cmds, q_, "SDMA");
    for (const ConcreteCommand& c : cmds) command(c);
    return std::move(out_);
  }

 private:
  const EncodeQueue& q_;
  EncodeSpace& space_;
  std::string out_;

  void pkt(std::initializer_list<uint32_t> dws) {
    for (uint32_t v : dws) append_dword(out_, v);
  }

  void command(const ConcreteCommand& c) {
    using namespace sdma;
    switch (c.op) {
      case CmdOp::Wait: {
        uint64_t a = space_.signal_addr(c.signal);
        pkt({header(kPollRegmem) | kFuncGe << kFuncShift | kPollMem, lo32(a), hi32(a), fits32(c, "POLL_REGMEM's reference"), 0xffffffffu, kPollDw5});
        return;
      }
      case CmdOp::Signal: {
        uint64_t a = space_.signal_addr(c.signal);
        pkt({header(kFence) | kFenceMtypeUc, lo32(a), hi32(a), fits32(c, "FENCE's data")});
        pkt({header(kTrap), 0});  // the interrupt that wakes the host, as tinygrad's signal on an AM device
        return;
      }
      case CmdOp::Timestamp: {
        uint64_t a = space_.signal_addr(c.signal) + 8;
        if (a % 8) throw CannotEncode{c.loc, "TIMESTAMP writes to an 8-byte aligned address, and the signal's timestamp slot is at " + format_hex(a)};
        pkt({header(kTimestamp, kSubTimestampGetGlobal), lo32(a), hi32(a)});
        return;
      }
      case CmdOp::Copy: return copy(c);
      case CmdOp::Exec: throw CannotEncode{c.loc, "SDMA runs no kernels (an exec needs a compute queue)"};
      case CmdOp::MemoryBarrier: throw CannotEncode{c.loc, "memory_barrier is a compute-queue command (rule engine); SDMA has no acquire"};
      case CmdOp::Barrier:
        throw CannotEncode{c.loc, "SDMA has no barrier packet: the engine runs its packets one after another, and tinygrad's AMDCopyQueue emits none"};
    }
  }

  void copy(const ConcreteCommand& c) {
    if (c.reads.size() != 1 || c.writes.size() != 1 || c.reads[0].hi - c.reads[0].lo != c.writes[0].hi - c.writes[0].lo ||
        c.reads[0].hi <= c.reads[0].lo)
      throw CannotEncode{c.loc, "a copy is one source and one destination range of the same nonzero length"};
    uint64_t n = c.reads[0].hi - c.reads[0].lo;
    if (n > sdma::kCopyMaxBytes)
      throw CannotEncode{c.loc, "COPY_LINEAR carries at most 2^30 bytes (its count field holds bytes - 1 in bits 29:0), and this copy is " +
                                    std::to_string(n) + " bytes; tinygrad splits it into several packets, which decode as several copies"};
    uint64_t src = space_.buffer_addr(c.reads[0].base) + c.reads[0].lo, dst = space_.buffer_addr(c.writes[0].base) + c.writes[0].lo;
    pkt({sdma::header(sdma::kCopy, sdma::kSubCopyLinear), uint32_t(n - 1), 0, lo32(src), hi32(src), lo32(dst), hi32(dst)});
  }
};

}  // namespace

std::string encode_sdma(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space) {
  return SdmaEncoder(q, space).run(cmds);
}

const char* sdma_decoded_packet(uint32_t op) {
  bool reads = op == sdma::kCopy || op == sdma::kFence || op == sdma::kPollRegmem || op == sdma::kTimestamp || op == sdma::kIndirect;
  return reads ? sdma::op_name(op) : nullptr;
}

StreamResult decode_sdma(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt) {
  return SdmaDecoder(b, opt).run(bytes, file);
}

}  // namespace qvet::amd
