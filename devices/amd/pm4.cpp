#include "devices/amd/pm4.h"

#include <algorithm>
#include <map>
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

class Decoder {
 public:
  Decoder(const StreamBinding& b, const Pm4Options& opt) : opt_(opt) {
    // Looked up by address once per packet: ordered maps, so a large binding costs log n a lookup.
    for (auto& s : b.signals) signals_.emplace(s.addr, &s);
    for (auto& x : b.buffers) buffers_.emplace(x.addr, &x);
    for (auto& k : b.kernels) kernels_.emplace(k.addr, &k);
    for (auto& r : b.regions) regions_.emplace(r.addr, &r);
  }

  Pm4Result run(std::string_view bytes, uint32_t file) {
    walk(bytes, file, 0);
    if (dispatch_pending_) mark_unflushed();
    Pm4Result r;
    r.overlap = overlap_;
    r.unflushed = unflushed_;
    bool barriers = overlap_ || opt_.queue_overlap;
    for (Item& it : items_) {
      if (it.flush && !barriers) continue;
      r.cmds.push_back({it.loc, it.flush ? std::string("barrier") : std::move(it.text)});
    }
    return r;
  }

 private:
  struct Item {
    Loc loc;
    std::string text;
    bool flush = false;  // a CS_PARTIAL_FLUSH: a `barrier` on an overlap queue, nothing on a serial one
  };
  const Pm4Options& opt_;
  std::map<uint64_t, const StreamBinding::Placed*> signals_, buffers_;  // by address (they do not overlap)
  std::map<uint64_t, const StreamBinding::Kernel*> kernels_;
  std::map<uint64_t, const StreamBinding::Region*> regions_;
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

  // "dword 0x4 (byte 0x10)": the 0-based offset of a dword in its file.
  static std::string at_dword(const Loc& l) {
    return "dword " + format_hex(l.line - 1) + " (byte " + format_hex(uint64_t(l.line - 1) * 4) + ")";
  }
  [[noreturn]] static void fail(const Loc& l, const std::string& msg) { throw InputError{l, msg}; }

  void mark_unflushed() {
    if (!overlap_) unflushed_ = last_dispatch_;
    overlap_ = true;
  }

  // The entry of `m` that starts last at or before `addr`, or nullptr.
  template <class T>
  static const T* last_at_or_before(const std::map<uint64_t, const T*>& m, uint64_t addr) {
    auto it = m.upper_bound(addr);
    return it == m.begin() ? nullptr : std::prev(it)->second;
  }
  const StreamBinding::Placed* signal_at(uint64_t addr) const {
    auto it = signals_.find(addr);
    return it == signals_.end() ? nullptr : it->second;
  }
  const StreamBinding::Placed* buffer_containing(uint64_t addr) const {
    const StreamBinding::Placed* x = last_at_or_before(buffers_, addr);
    return x && addr - x->addr < x->size ? x : nullptr;
  }
  // The region holding [addr, addr + n), or nullptr (regions do not overlap).
  const StreamBinding::Region* region_holding(uint64_t addr, uint64_t n) const {
    const StreamBinding::Region* r = last_at_or_before(regions_, addr);
    return r && addr - r->addr <= r->bytes.size() && r->bytes.size() - (addr - r->addr) >= n ? r : nullptr;
  }
  static uint32_t dword_of(std::string_view bytes, uint64_t i) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes.data()) + i * 4;
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }

  void emit(const Loc& l, std::string text, bool flush = false) {
    if (items_.size() >= opt_.max_commands)
      throw InputError{l, "more than " + std::to_string(opt_.max_commands) + " commands decoded from one stream (an implementation limit)", true};
    items_.push_back({l, std::move(text), flush});
  }

  // Decodes `bytes`, whose first dword is dword `base` of `file` (locations count from the file's start).
  void walk(std::string_view bytes, uint32_t file, int depth, uint64_t base = 0) {
    uint64_t n = bytes.size() / 4;
    if (base + n + 1 > UINT32_MAX) throw InputError{{file, 0, 0}, "stream longer than 2^32 dwords (an implementation limit)", true};
    if (bytes.size() % 4)
      fail({file, uint32_t(base + n + 1), 0}, "stream of " + std::to_string(bytes.size()) +
                                           " bytes ends inside a dword (a PM4 stream is whole little-endian dwords)");
    uint64_t i = 0;
    while (i < n) {
      Loc loc{file, uint32_t(base + i + 1), 0};
      uint32_t h = dword_of(bytes, i);
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
      if (i + 1 + nb > n)
        fail(loc, "truncated packet: " + what + " has " + std::to_string(nb) + " body dwords, but only " +
                      std::to_string(n - i - 1) + " follow before the end of the stream");
      decoded_ += 1 + nb;
      if (decoded_ > opt_.max_dwords)
        throw InputError{loc, "more than " + std::to_string(opt_.max_dwords) + " dwords decoded, indirect buffers included (an implementation limit)", true};
      std::vector<uint32_t> body(nb);
      for (uint32_t k = 0; k < nb; ++k) body[k] = dword_of(bytes, i + 1 + k);
      if (std::find(opt_.ignored.begin(), opt_.ignored.end(), uint8_t(op)) != opt_.ignored.end()) {
        i += 1 + nb;
        continue;
      }
      if (op != pm4::kAcquireMem && op != pm4::kNop) hdp_flush_ = {};
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
        // After an HDP flush it completes a memory_barrier; alone (the cache invalidation before
        // a dispatch, or after a timestamp) it orders nothing the model knows of.
        if (hdp_flush_.valid()) emit(hdp_flush_, "memory_barrier");
        hdp_flush_ = {};
        return;
      case pm4::kReleaseMem: return release_mem(body, loc, what);
      case pm4::kEventWrite: {
        if (body.empty()) need_body(body, 1, loc, what);
        uint32_t t = pm4::event_type(body[0]);
        if (t != pm4::kEventCsPartialFlush)
          fail(loc, what + ": event type " + format_hex(t) + " is not decoded (only CS_PARTIAL_FLUSH, " + format_hex(pm4::kEventCsPartialFlush) + ")");
        dispatch_pending_ = false;
        emit(loc, "", true);
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
    const StreamBinding::Placed* s = signal_at(addr);
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
      const StreamBinding::Placed* s = addr >= 8 ? signal_at(addr - 8) : nullptr;
      if (!s) fail(loc, what + ": timestamp address " + format_hex(addr) + " is no signal's timestamp slot (a signal's address + 8)");
      emit(loc, "timestamp " + s->name);
      return;
    }
    if (sel != pm4::kDataSel32Low)
      fail(loc, what + ": data select " + std::to_string(sel) +
                    " is not decoded (1, the low 32 bits, as semantics.md's amd profile releases; 3, the GPU clock)");
    const StreamBinding::Placed* s = signal_at(addr);
    if (!s) fail(loc, what + ": address " + format_hex(addr) + " is no signal's ('signal NAME on DEV at " + format_hex(addr) + "')");
    emit(loc, "signal " + s->name + " = " + std::to_string(body[4]));
  }

  void set_sh_reg(const std::vector<uint32_t>& body, const Loc& loc, const std::string& what) {
    if (body.size() < 2) fail(loc, "wrong count: " + what + " sets no register");
    uint32_t reg = body[0] & 0xffffu;
    size_t nv = body.size() - 1;
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
    auto kit = kernels_.find(code);
    const StreamBinding::Kernel* k = kit == kernels_.end() ? nullptr : kit->second;
    if (!k) fail(loc, what + ": code address " + format_hex(code) + " is no kernel's ('kernel NAME at " + format_hex(code) + " args(...)')");
    std::string reads, writes;
    if (!k->args.empty()) {
      uint64_t n = k->args.size() * 8;
      const StreamBinding::Region* r = region_holding(kargs_, n);
      if (!r)
        fail(loc, what + ": the " + std::to_string(n) + " bytes of " + k->name + "'s arguments at " + format_hex(kargs_) +
                      " lie in no region ('region NAME at ADDR file \"FILE\"')");
      for (size_t a = 0; a < k->args.size(); ++a) {
        if (k->args[a] == StreamBinding::Arg::Value) continue;
        uint64_t p = 0, off = kargs_ - r->addr + a * 8;
        for (int byte = 7; byte >= 0; --byte) p = p << 8 | uint64_t((unsigned char)r->bytes[off + size_t(byte)]);
        const StreamBinding::Placed* buf = buffer_containing(p);
        if (!buf)
          fail(loc, what + ": argument " + std::to_string(a) + " of " + k->name + " (read at " + format_hex(kargs_ + a * 8) + ") points at " +
                        format_hex(p) + ", in no buffer ('buffer NAME on DEV SIZE at ADDR')");
        // The kernel may touch the buffer from the pointer to the buffer's end.
        std::string range = buf->name + "[" + format_hex(p - buf->addr) + ":" + format_hex(buf->size) + "]";
        std::string& list = k->args[a] == StreamBinding::Arg::Reads ? reads : writes;
        list += (list.empty() ? "" : ", ") + range;
      }
    }
    if (dispatch_pending_) mark_unflushed();
    dispatch_pending_ = true;
    last_dispatch_ = loc;
    emit(loc, "exec " + k->name + (reads.empty() ? "" : " reads " + reads) + (writes.empty() ? "" : " writes " + writes));
  }

  void indirect(const std::vector<uint32_t>& body, const Loc& loc, const std::string& what, int depth) {
    need_body(body, pm4::kIndirectBufferBody, loc, what);
    uint64_t addr = uint64_t(body[0] & ~3u) | uint64_t(body[1] & 0xffffu) << 32;
    uint64_t n = uint64_t(pm4::ib_size_dwords(body[2])) * 4;
    if (depth + 1 > kMaxIndirectDepth) fail(loc, what + ": indirect buffers nested deeper than " + std::to_string(kMaxIndirectDepth));
    const StreamBinding::Region* r = region_holding(addr, n);
    if (!r) fail(loc, what + ": the " + std::to_string(n) + " bytes at " + format_hex(addr) + " lie in no region ('region NAME at " + format_hex(addr) + " file \"FILE\"')");
    uint64_t off = addr - r->addr;
    if (off % 4) fail(loc, what + ": address " + format_hex(addr) + " is not dword-aligned within region " + r->name);
    // Locations inside the region count dwords from the region file's start.
    walk(std::string_view(r->bytes).substr(off, n), r->file, depth + 1, off / 4);
  }

};

}  // namespace

Pm4Result decode_pm4(const StreamBinding& b, std::string_view bytes, uint32_t file, const Pm4Options& opt) {
  return Decoder(b, opt).run(bytes, file);
}

}  // namespace qvet::amd
