#include "devices/amd/pm4.h"

#include <algorithm>
#include <string>

#include "core/expr.h"
#include "core/input_error.h"
#include "devices/amd/pm4_packets.h"

namespace qvet::amd {

namespace pm4 {

const char* op_name(uint32_t op) {
  switch (op) {
    case kNop: return "NOP";
    case kDispatchDirect: return "DISPATCH_DIRECT";
    case kWaitRegMem: return "WAIT_REG_MEM";
    case kIndirectBuffer: return "INDIRECT_BUFFER";
    case kEventWrite: return "EVENT_WRITE";
    case kReleaseMem: return "RELEASE_MEM";
    case kAcquireMem: return "ACQUIRE_MEM";
    case kSetShReg: return "SET_SH_REG";
    default: return nullptr;
  }
}

}  // namespace pm4

namespace {


constexpr int kMaxIndirectDepth = 4;  // ring -> IB1 -> IB2 on hardware; a little more is accepted

class Pm4Decoder {
 public:
  Pm4Decoder(const StreamBinding& b, const StreamOptions& opt) : opt_(opt), index_(b) {}

  StreamResult run(std::string_view bytes, uint32_t file) {
    walk(bytes, file, 0);
    if (dispatch_pending_) mark_unflushed();
    StreamResult r;
    r.overlap = overlap_;
    r.unflushed = unflushed_;
    if (overlap_)
      r.overlap_why = "the dispatch at dword " + format_hex(unflushed_.line - 1) +
                      " is not followed by EVENT_WRITE CS_PARTIAL_FLUSH before the next dispatch or the stream's end, so they overlap";
    bool barriers = overlap_ || opt_.queue_overlap;
    for (Item& it : items_) {
      // A flush that closes its dispatch is part of the exec on a serial queue; any other is a barrier.
      if (it.flush && !barriers && it.closes) continue;
      r.cmds.push_back({it.loc, it.flush ? std::string("barrier") : std::move(it.text), std::move(it.fetched)});
    }
    return r;
  }

 private:
  struct Item {
    Loc loc;
    std::string text;
    bool flush = false;   // a CS_PARTIAL_FLUSH: a `barrier` on an overlap queue
    bool closes = false;  // the flush follows a dispatch (nothing else on a serial queue)
    std::string fetched;  // DecodedCommand::fetched
  };
  const StreamOptions& opt_;
  BindingIndex index_;
  DecodedSink sink_{opt_, index_};
  std::vector<Item> items_;
  uint64_t decoded_ = 0;
  // The compute state a DISPATCH_DIRECT reads.
  bool pgm_lo_set_ = false, pgm_hi_set_ = false, kargs_set_ = false;
  uint32_t pgm_lo_ = 0, pgm_hi_ = 0;
  uint64_t kargs_ = 0;
  Loc hdp_flush_;  // an HDP flush waiting for its ACQUIRE_MEM (line 0: none)
  bool dispatch_pending_ = false;  // the last dispatch has not been flushed yet
  Loc last_dispatch_;
  bool overlap_ = false;
  Loc unflushed_;

  [[noreturn]] static void fail(const Loc& l, const std::string& msg) { throw InputError{l, msg}; }

  void mark_unflushed() {
    if (!overlap_) unflushed_ = last_dispatch_;
    overlap_ = true;
  }

  void emit(const Loc& l, std::string text, bool flush = false, bool closes = false) {
    DecodedCommand c = sink_.make(l, std::move(text));
    items_.push_back({l, std::move(c.text), flush, closes, std::move(c.fetched)});
  }

  // Decodes `bytes`, whose first dword is dword `base` of `file` (locations count from the file's
  // start); `mem`: their address where they lie in memory (an indirect buffer), else kNotInMemory.
  static constexpr uint64_t kNotInMemory = DecodedSink::kNotInMemory;
  void walk(std::string_view bytes, uint32_t file, int depth, uint64_t base = 0, uint64_t mem = kNotInMemory) {
    uint64_t n = bytes.size() / 4;
    if (base + n + 1 > UINT32_MAX) throw InputError{{file, 0, 0}, "stream longer than 2^32 dwords (an implementation limit)", true};
    if (bytes.size() % 4)
      fail({file, uint32_t(base + n + 1), 0}, "stream of " + std::to_string(bytes.size()) +
                                           " bytes ends inside a dword (a PM4 stream is whole little-endian dwords)");
    uint64_t i = 0;
    while (i < n) {
      Loc loc{file, uint32_t(base + i + 1), 0};
      uint32_t h = dword_at(bytes, i);
      if (pm4::type(h) == 2) {  // type-2 filler: one dword
        ++i, ++decoded_;
        continue;
      }
      if (pm4::type(h) != 3)
        fail(loc, "PM4 type-" + std::to_string(pm4::type(h)) + " header " + format_hex(h) + " at " + at_dword(loc) +
                      ": only type-3 packets and type-2 filler are decoded");
      uint32_t op = pm4::opcode(h), nb = pm4::body_dwords(h);
      const char* name = pm4::op_name(op);
      std::string what = std::string(name ? name : "opcode") + " (" + format_hex(op) + ") at " + at_dword(loc);
      if (pm4::predicated(h)) fail(loc, what + ": a predicated packet (header bit 0) may not execute, which no command says: not decoded");
      if (i + 1 + nb > n)
        fail(loc, "truncated packet: " + what + " has " + std::to_string(nb) + " body dwords, but only " +
                      std::to_string(n - i - 1) + " follow before the end of the stream");
      decoded_ += 1 + nb;
      if (decoded_ > opt_.max_dwords)
        throw InputError{loc, "more than " + std::to_string(opt_.max_dwords) + " dwords decoded, indirect buffers included (an implementation limit)", true};
      std::vector<uint32_t> body(nb);
      for (uint32_t k = 0; k < nb; ++k) body[k] = dword_at(bytes, i + 1 + k);
      if (op != pm4::kAcquireMem && op != pm4::kNop) hdp_flush_ = {};  // an ignored packet cancels the flush too
      if (std::find(opt_.ignored.begin(), opt_.ignored.end(), op) != opt_.ignored.end()) {
        i += 1 + nb;
        continue;
      }
      // The packet's dwords, which the queue reads before the commands it makes start.
      sink_.at_packet(mem == kNotInMemory ? mem : mem + 4 * i, 4 * (1 + uint64_t(nb)));
      packet(op, body, loc, what, depth);
      i += 1 + nb;
    }
  }

  void need_body(const std::vector<uint32_t>& body, uint32_t want, const Loc& loc, const std::string& what) {
    if (body.size() != want)
      fail(loc, "wrong count: " + what + " has " + std::to_string(body.size()) + " body dwords, " + std::to_string(want) + " expected");
  }

  void packet(uint32_t op, const std::vector<uint32_t>& body, const Loc& loc, const std::string& what, int depth) {
    switch (op) {
      case pm4::kNop: return;
      case pm4::kWaitRegMem: return wait_reg_mem(body, loc, what);
      case pm4::kAcquireMem:
        if (body.size() != pm4::kAcquireMemBody && body.size() != pm4::kAcquireMemBodyGfx9)
          fail(loc, "wrong count: " + what + " has " + std::to_string(body.size()) + " body dwords, 6 or 7 expected");
        // After an HDP flush, a full one (every cache, the whole address range) completes a
        // memory_barrier; any other (the invalidation before a dispatch, the gfx9 form, whose
        // fields are not read) orders nothing the model knows of: that can only add findings.
        if (hdp_flush_.valid() && full_acquire(body)) emit(hdp_flush_, "memory_barrier");
        hdp_flush_ = {};
        return;
      case pm4::kReleaseMem: return release_mem(body, loc, what);
      case pm4::kEventWrite: {
        need_body(body, 1, loc, what);
        uint32_t t = pm4::event_type(body[0]);
        if (t != pm4::kEventCsPartialFlush || pm4::event_index(body[0]) != pm4::kEventIndexCsPartialFlush)
          fail(loc, what + ": event type " + format_hex(t) + ", index " + std::to_string(pm4::event_index(body[0])) +
                        " is not decoded (only CS_PARTIAL_FLUSH, " + format_hex(pm4::kEventCsPartialFlush) + ", index " +
                        std::to_string(pm4::kEventIndexCsPartialFlush) + ")");
        emit(loc, "", true, dispatch_pending_);
        dispatch_pending_ = false;
        return;
      }
      case pm4::kSetShReg: return set_sh_reg(body, loc, what);
      case pm4::kDispatchDirect: return dispatch(body, loc, what);
      case pm4::kIndirectBuffer: return indirect(body, loc, what, depth);
      default:
        fail(loc, "unknown PM4 opcode " + format_hex(op) + " at " + at_dword(loc) +
                      " (decoded: NOP, WAIT_REG_MEM, RELEASE_MEM, ACQUIRE_MEM, EVENT_WRITE, SET_SH_REG, DISPATCH_DIRECT, INDIRECT_BUFFER)");
    }
  }

  void wait_reg_mem(const std::vector<uint32_t>& body, const Loc& loc, const std::string& what) {
    need_body(body, pm4::kWaitRegMemBody, loc, what);
    uint32_t info = body[0];
    uint32_t space = pm4::wrm_mem_space(info), oper = pm4::wrm_operation(info);
    if (space == pm4::kWrmSpaceRegister && oper == pm4::kWrmOpWriteWait) {
      hdp_flush_ = loc;  // tinygrad's memory_barrier: write HDP_FLUSH_REQ, wait on HDP_FLUSH_DONE
      return;
    }
    if (space != pm4::kWrmSpaceMemory || oper != pm4::kWrmOpWait)
      fail(loc, what + ": only a wait on memory (memory space 1, operation 0) or an HDP flush (register space, operation 1) is decoded, found space " +
                    std::to_string(space) + ", operation " + std::to_string(oper));
    if (pm4::wrm_function(info) != pm4::kWrmFunctionGe)
      fail(loc, what + ": compare function " + std::to_string(pm4::wrm_function(info)) + " is not decoded (only >=, function 5)");
    if (body[4] != 0xffffffffu) fail(loc, what + ": mask " + format_hex(body[4]) + " is not decoded (only 0xffffffff)");
    uint64_t addr = uint64_t(body[1]) | uint64_t(body[2]) << 32;
    const StreamBinding::Placed* s = index_.signal_at(addr);
    if (!s) fail(loc, what + ": address " + format_hex(addr) + " is no signal's ('signal NAME on DEV at " + format_hex(addr) + "')");
    emit(loc, "wait " + s->name + " >= " + std::to_string(body[3]));
  }

  void release_mem(const std::vector<uint32_t>& body, const Loc& loc, const std::string& what) {
    need_body(body, pm4::kReleaseMemBody, loc, what);
    if (pm4::event_index(body[0]) != pm4::kEventIndexEndOfPipe)
      fail(loc, what + ": event index " + std::to_string(pm4::event_index(body[0])) + " is not decoded (only end-of-pipe, 5)");
    if (pm4::rm_dst_sel(body[1]) != 0) fail(loc, what + ": destination select " + std::to_string(pm4::rm_dst_sel(body[1])) + " is not memory (0)");
    uint32_t sel = pm4::rm_data_sel(body[1]);
    uint64_t addr = uint64_t(body[2]) | uint64_t(body[3]) << 32;
    if (sel == pm4::kDataSelGpuClock) {
      const StreamBinding::Placed* s = addr >= 8 ? index_.signal_at(addr - 8) : nullptr;
      if (!s) fail(loc, what + ": timestamp address " + format_hex(addr) + " is no signal's timestamp slot (a signal's address + 8)");
      emit(loc, "timestamp " + s->name);
      return;
    }
    if (sel != pm4::kDataSel32Low)
      fail(loc, what + ": data select " + std::to_string(sel) +
                    " is not decoded (1, the low 32 bits, as semantics.md's amd profile releases; 3, the GPU clock)");
    // semantics.md's signal is a release with cache write-back: the event that flushes and
    // invalidates the caches before the write. Another event may write before the data is visible.
    if (pm4::event_type(body[0]) != pm4::kEventCacheFlushAndInvTs)
      fail(loc, what + ": event type " + format_hex(pm4::event_type(body[0])) + " is not decoded for a signal (only CACHE_FLUSH_AND_INV_TS_EVENT, " +
                    format_hex(pm4::kEventCacheFlushAndInvTs) + ", which writes back the caches before the value)");
    const StreamBinding::Placed* s = index_.signal_at(addr);
    if (!s) fail(loc, what + ": address " + format_hex(addr) + " is no signal's ('signal NAME on DEV at " + format_hex(addr) + "')");
    emit(loc, "signal " + s->name + " = " + std::to_string(body[4]));
  }

  static bool full_acquire(const std::vector<uint32_t>& b) {
    return b.size() == pm4::kAcquireMemBody && b[1] == pm4::kAcquireSizeLoAll && (b[2] & pm4::kAcquireSizeHiAll) == pm4::kAcquireSizeHiAll &&
           b[3] == 0 && b[4] == 0 && (b[6] & pm4::kAcquireGcrFull) == pm4::kAcquireGcrFull;
  }

  void set_sh_reg(const std::vector<uint32_t>& body, const Loc& loc, const std::string& what) {
    if (body.size() < 2) fail(loc, "wrong count: " + what + " sets no register");
    uint32_t reg = body[0] & 0xffffu;
    size_t nv = body.size() - 1;
    // The argument pointer is read from a packet that starts at USER_DATA_0; any other write to
    // the user data could change it unseen.
    if (reg != pm4::kRegComputeUserData0 && reg < pm4::kRegComputeUserData0 + pm4::kUserDataRegs && reg + nv > pm4::kRegComputeUserData0)
      fail(loc, what + ": writes COMPUTE_USER_DATA registers from " + format_hex(reg) + "; only a packet that starts at COMPUTE_USER_DATA_0 (" +
                    format_hex(pm4::kRegComputeUserData0) + ") is decoded (the kernel-argument pointer is its last two dwords)");
    for (size_t k = 0; k < nv; ++k) {
      if (reg + k == pm4::kRegComputePgmLo) pgm_lo_ = body[1 + k], pgm_lo_set_ = true;
      if (reg + k == pm4::kRegComputePgmHi) pgm_hi_ = body[1 + k], pgm_hi_set_ = true;
    }
    if (reg == pm4::kRegComputeUserData0) {
      // tinygrad writes all user data in one packet from USER_DATA_0, the kernel-argument pointer last.
      if (nv % 2) fail(loc, what + ": " + std::to_string(nv) + " user-data dwords from COMPUTE_USER_DATA_0; the kernel-argument pointer is the last two");
      kargs_ = uint64_t(body[nv - 1]) | uint64_t(body[nv]) << 32;
      kargs_set_ = true;
    }
  }

  void dispatch(const std::vector<uint32_t>& body, const Loc& loc, const std::string& what) {
    need_body(body, pm4::kDispatchDirectBody, loc, what);
    if (!pgm_lo_set_ || !pgm_hi_set_) fail(loc, what + ": no COMPUTE_PGM_LO/HI was set before it (SET_SH_REG " + format_hex(pm4::kRegComputePgmLo) + ")");
    if (!kargs_set_) fail(loc, what + ": no kernel-argument pointer was set before it (SET_SH_REG COMPUTE_USER_DATA_0, " + format_hex(pm4::kRegComputeUserData0) + ")");
    uint64_t code = (uint64_t(pgm_hi_) << 32 | pgm_lo_) << pm4::kCodeAddressShift;
    const StreamBinding::Kernel* k = index_.kernel_at(code);
    if (!k) fail(loc, what + ": code address " + format_hex(code) + " is no kernel's ('kernel NAME at " + format_hex(code) + " args(...)')");
    std::string access = index_.kernel_access(*k, kargs_, loc, what);
    if (dispatch_pending_) mark_unflushed();
    dispatch_pending_ = true;
    last_dispatch_ = loc;
    emit(loc, "exec " + k->name + access);
  }

  void indirect(const std::vector<uint32_t>& body, const Loc& loc, const std::string& what, int depth) {
    need_body(body, pm4::kIndirectBufferBody, loc, what);
    uint64_t addr = uint64_t(body[0] & ~3u) | uint64_t(body[1] & 0xffffu) << 32;
    uint64_t n = uint64_t(pm4::ib_size_dwords(body[2])) * 4;
    if (!pm4::ib_valid(body[2])) fail(loc, what + ": the VALID bit (control bit 23) is clear");
    // A chained IB does not return: what follows it in the caller never runs.
    if (pm4::ib_chain(body[2])) fail(loc, what + ": a chained indirect buffer (CHAIN, control bit 20) is not decoded");
    if (depth + 1 > kMaxIndirectDepth) fail(loc, what + ": indirect buffers nested deeper than " + std::to_string(kMaxIndirectDepth));
    BindingIndex::Indirect ib = index_.indirect(addr, n, loc, what);
    walk(ib.bytes, ib.file, depth + 1, ib.first_dword, addr);
  }

};

// ---- the encoder: tinygrad's AMDComputeQueue lowering --------------------------------------
class Pm4Encoder {
 public:
  Pm4Encoder(const EncodeQueue& q, EncodeSpace& space) : q_(q), space_(space) {}

  std::string run(const std::vector<ConcreteCommand>& cmds) {
    refuse_chained(cmds, q_, "PM4");
    for (const ConcreteCommand& c : cmds) command(c);
    return std::move(out_);
  }

 private:
  const EncodeQueue& q_;
  EncodeSpace& space_;
  std::string out_;

  void pkt(uint32_t op, std::initializer_list<uint32_t> body) {
    append_dword(out_, pm4::header(op, uint32_t(body.size())));
    for (uint32_t v : body) append_dword(out_, v);
  }
  void release(uint32_t data_sel, uint64_t addr, uint32_t data) {
    pkt(pm4::kReleaseMem, {pm4::kEventCacheFlushAndInvTs | pm4::kEventIndexEndOfPipe << 8 | pm4::kReleaseCacheActions,
                           data_sel << 29 | pm4::kReleaseIntSel, lo32(addr), hi32(addr), data, 0, 0});
  }
  void flush() { pkt(pm4::kEventWrite, {pm4::kEventCsPartialFlush | pm4::kEventIndexCsPartialFlush << 8}); }
  void acquire(uint32_t gcr) { pkt(pm4::kAcquireMem, {0, 0xffffffffu, 0xffffffffu, 0, 0, 0, gcr}); }

  void command(const ConcreteCommand& c) {
    switch (c.op) {
      case CmdOp::Wait: {
        uint64_t a = space_.signal_addr(c.signal);
        uint32_t info = pm4::kWrmFunctionGe | pm4::kWrmSpaceMemory << 4 | pm4::kWrmOpWait << 6;
        pkt(pm4::kWaitRegMem, {info, lo32(a), hi32(a), fits32(c, "WAIT_REG_MEM's reference"), 0xffffffffu, pm4::kPollInterval});
        return;
      }
      case CmdOp::Signal: return release(pm4::kDataSel32Low, space_.signal_addr(c.signal), fits32(c, "RELEASE_MEM's data (select 1)"));
      case CmdOp::Timestamp: return release(pm4::kDataSelGpuClock, space_.signal_addr(c.signal) + 8, 0);
      case CmdOp::Barrier: return flush();
      case CmdOp::MemoryBarrier: {
        uint32_t info = pm4::kWrmFunctionGe | pm4::kWrmSpaceRegister << 4 | pm4::kWrmOpWriteWait << 6;
        pkt(pm4::kWaitRegMem, {info, pm4::kRegHdpFlushReq, pm4::kRegHdpFlushDone, 0xffffffffu, 0xffffffffu, pm4::kPollInterval});
        return acquire(pm4::kAcquireGcrFull);
      }
      case CmdOp::Exec: return exec(c);
      case CmdOp::Copy: throw CannotEncode{c.loc, "an amd compute queue has no PM4 copy packet (tinygrad copies on SDMA)"};
    }
  }

  void exec(const ConcreteCommand& c) {
    // Arguments: one pointer per range, reads first, each with its extent.
    std::vector<StreamBinding::KernelArg> args;
    std::string kargs;
    for (auto* list : {&c.reads, &c.writes})
      for (const ConcreteRange& r : *list) {
        args.push_back({list == &c.reads ? StreamBinding::Arg::Reads : StreamBinding::Arg::Writes, r.hi - r.lo});
        uint64_t p = space_.buffer_addr(r.base) + r.lo;
        append_dword(kargs, lo32(p)), append_dword(kargs, hi32(p));
      }
    uint64_t code = space_.kernel_addr(c.kernel, args, uint64_t(1) << pm4::kCodeAddressShift) >> pm4::kCodeAddressShift;
    uint64_t karg_addr = kargs.empty() ? 0 : space_.add_region(std::move(kargs), "kargs", 16);
    acquire(pm4::kAcquireGcrDispatch);  // tinygrad invalidates caches before each dispatch; alone it decodes to nothing
    pkt(pm4::kSetShReg, {pm4::kRegComputePgmLo, lo32(code), hi32(code)});
    pkt(pm4::kSetShReg, {pm4::kRegComputeUserData0, lo32(karg_addr), hi32(karg_addr)});
    pkt(pm4::kDispatchDirect, {1, 1, 1, pm4::kDispatchInitiator});
    if (q_.ordering != Ordering::Overlap) flush();
  }
};

}  // namespace

std::string encode_pm4(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space) {
  return Pm4Encoder(q, space).run(cmds);
}

const char* pm4_decoded_packet(uint32_t op) { return op == pm4::kNop ? nullptr : pm4::op_name(op); }

StreamResult decode_pm4(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt) {
  return Pm4Decoder(b, opt).run(bytes, file);
}

}  // namespace qvet::amd
