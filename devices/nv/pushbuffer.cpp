#include "devices/nv/pushbuffer.h"

#include <algorithm>
#include <set>
#include <string>

#include "core/expr.h"
#include "core/input_error.h"
#include "devices/nv/nv_methods.h"

namespace qvet::nv {

namespace {

// Bits of a QMD (or any byte string): bit 0 is the lowest bit of the first byte.
uint64_t get_bits(std::string_view b, Field f) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < f.bits; ++i) {
    uint32_t bit = f.lo + i;
    v |= uint64_t((static_cast<unsigned char>(b[bit / 8]) >> (bit % 8)) & 1u) << i;
  }
  return v;
}
void put_bits(std::string& b, Field f, uint64_t v) {
  for (uint32_t i = 0; i < f.bits; ++i) {
    uint32_t bit = f.lo + i;
    unsigned char m = static_cast<unsigned char>(1u << (bit % 8));
    b[bit / 8] = static_cast<char>((v >> i & 1) ? (static_cast<unsigned char>(b[bit / 8]) | m) : (static_cast<unsigned char>(b[bit / 8]) & ~m));
  }
}

bool is_compute_class(uint32_t c) { return c == kAmpereComputeA || c == kAmpereComputeB || c == kAdaComputeA || c == kHopperComputeA; }
bool is_copy_class(uint32_t c) { return c == kAmpereDmaCopyA || c == kAmpereDmaCopyB || c == kHopperDmaCopyA; }

const char* host_name(uint32_t m) {
  switch (m) {
    case kSetObject: return "SET_OBJECT";
    case kHostNop: return "NOP";
    case kNonStallInterrupt: return "NON_STALL_INTERRUPT";
    case kSemAddrLo: return "SEM_ADDR_LO";
    case kSemAddrHi: return "SEM_ADDR_HI";
    case kSemPayloadLo: return "SEM_PAYLOAD_LO";
    case kSemPayloadHi: return "SEM_PAYLOAD_HI";
    case kSemExecute: return "SEM_EXECUTE";
    case kWfi: return "WFI";
    default: return nullptr;
  }
}
const char* compute_name(uint32_t m) {
  switch (m) {
    case kWaitForIdle: return "WAIT_FOR_IDLE";
    case kPmTrigger: return "PM_TRIGGER";
    case kSetShaderSharedMemoryWindowA: return "SET_SHADER_SHARED_MEMORY_WINDOW_A";
    case kSetShaderSharedMemoryWindowB: return "SET_SHADER_SHARED_MEMORY_WINDOW_B";
    case kSendPcasA: return "SEND_PCAS_A";
    case kSendSignalingPcas2B: return "SEND_SIGNALING_PCAS2_B";
    case kSetShaderLocalMemoryNonThrottledA: return "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A";
    case kSetShaderLocalMemoryNonThrottledB: return "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B";
    case kSetShaderLocalMemoryNonThrottledC: return "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C";
    case kSetShaderLocalMemoryA: return "SET_SHADER_LOCAL_MEMORY_A";
    case kSetShaderLocalMemoryB: return "SET_SHADER_LOCAL_MEMORY_B";
    case kSetShaderLocalMemoryWindowA: return "SET_SHADER_LOCAL_MEMORY_WINDOW_A";
    case kSetShaderLocalMemoryWindowB: return "SET_SHADER_LOCAL_MEMORY_WINDOW_B";
    case kInvalidateShaderCachesNoWfi: return "INVALIDATE_SHADER_CACHES_NO_WFI";
    default: return nullptr;
  }
}
const char* copy_name(uint32_t m) {
  switch (m) {
    case kSetSemaphoreA: return "SET_SEMAPHORE_A";
    case kSetSemaphoreB: return "SET_SEMAPHORE_B";
    case kSetSemaphorePayload: return "SET_SEMAPHORE_PAYLOAD";
    case kLaunchDma: return "LAUNCH_DMA";
    case kOffsetInUpper: return "OFFSET_IN_UPPER";
    case kOffsetInLower: return "OFFSET_IN_LOWER";
    case kOffsetOutUpper: return "OFFSET_OUT_UPPER";
    case kOffsetOutLower: return "OFFSET_OUT_LOWER";
    case kPitchIn: return "PITCH_IN";
    case kPitchOut: return "PITCH_OUT";
    case kLineLengthIn: return "LINE_LENGTH_IN";
    case kLineCount: return "LINE_COUNT";
    default: return nullptr;
  }
}

// A register the stream writes, with whether this stream wrote it.
struct Reg {
  uint32_t v = 0;
  bool set = false;
  void write(uint32_t x) { v = x, set = true; }
};

class Decoder {
 public:
  Decoder(const StreamBinding& b, const StreamOptions& opt) : opt_(opt), index_(b) {}

  StreamResult run(std::string_view bytes, uint32_t file) {
    walk(bytes, file);
    return finish();
  }

  // A GPFIFO: 8-byte entries, each naming a pushbuffer segment in a region, decoded in order
  // through one channel state (classes, semaphore registers, chaining carry across segments).
  StreamResult run_gpfifo(std::string_view bytes, uint32_t file) {
    uint64_t n = bytes.size() / 8;
    if (n * 2 + 1 > UINT32_MAX) throw InputError{{file, 0, 0}, "GPFIFO longer than 2^31 entries (an implementation limit)", true};
    if (bytes.size() % 8)
      fail({file, uint32_t(n * 2 + 1), 0}, "GPFIFO of " + std::to_string(bytes.size()) + " bytes ends inside an entry (entries are 8 bytes)");
    for (uint64_t e = 0; e < n; ++e) {
      Loc el{file, uint32_t(2 * e + 1), 0};
      uint32_t lo = dword_at(bytes, 2 * e), hi = dword_at(bytes, 2 * e + 1);
      count_dwords(2, el);
      std::string w = "GPFIFO entry " + std::to_string(e) + " (" + format_hex(uint64_t(hi) << 32 | lo) + ") at " + at_dword(el);
      uint64_t len = gp_length(hi);
      if (len == 0) {  // a control entry
        if (gp_opcode(hi) != kGpOpcodeNop) fail(el, w + ": control opcode " + std::to_string(gp_opcode(hi)) + " is not decoded (only NOP, 0)");
        continue;
      }
      if (lo & kGpFetchConditional) fail(el, w + ": a conditional fetch (FETCH, bit 0) is not decoded");
      uint64_t addr = gp_address(lo, hi), bytes_n = len * 4;
      const StreamBinding::Region* r = index_.region_holding(addr, bytes_n);
      if (!r) fail(el, w + ": the " + std::to_string(bytes_n) + " bytes of its segment at " + format_hex(addr) + " lie in no region ('region NAME at " + format_hex(addr) + " file \"FILE\"')");
      uint64_t off = addr - r->addr;
      if (off % 4) fail(el, w + ": the segment at " + format_hex(addr) + " is not dword-aligned within region " + r->name);
      walk(std::string_view(r->bytes).substr(off, bytes_n), r->file, off / 4, addr);
    }
    return finish();
  }

 private:
  StreamResult finish() {
    StreamResult r;
    r.overlap = overlap_;
    r.unflushed = overlap_at_;
    r.overlap_why = overlap_why_;
    if ((overlap_ || opt_.queue_overlap) && first_qmd_release_.valid())
      fail(first_qmd_release_, "a QMD release fires when its own kernel ends, but " +
                                   (overlap_ ? overlap_why_ : std::string("the queue is declared 'ordering overlap'")) +
                                   ", and there a signal waits for every earlier command: not decoded (release with SEM_EXECUTE RELEASE_WFI instead)");
    r.cmds = std::move(cmds_);
    return r;
  }

  const StreamOptions& opt_;
  BindingIndex index_;
  std::vector<DecodedCommand> cmds_;
  uint64_t decoded_ = 0;
  uint32_t class_[8] = {};  // the class SET_OBJECT bound to each subchannel (0: none)
  // Host semaphore registers.
  Reg sem_lo_, sem_hi_, pay_lo_, pay_hi_;
  // Compute state.
  Reg pcas_a_;
  // Copy state.
  Reg in_hi_, in_lo_, out_hi_, out_lo_, len_, csem_hi_, csem_lo_, csem_pay_;
  // Chaining: the last command other than a signal was an exec, and no wait for idle came since.
  bool after_exec_ = false, wfi_since_exec_ = false;
  Loc last_exec_;
  bool overlap_ = false;
  Loc overlap_at_;
  std::string overlap_why_;
  Loc first_qmd_release_;

  [[noreturn]] static void fail(const Loc& l, const std::string& msg) { throw InputError{l, msg}; }

  void emit(const Loc& l, std::string text) {
    cmds_.push_back(sink_.make(l, std::move(text)));
  }
  DecodedSink sink_{opt_, index_};  // the packet it reads is a method header and its data
  static constexpr uint64_t kNotInMemory = DecodedSink::kNotInMemory;
  void count_dwords(uint64_t n, const Loc& l) {
    decoded_ += n;
    if (decoded_ > opt_.max_dwords)
      throw InputError{l, "more than " + std::to_string(opt_.max_dwords) + " dwords decoded, QMDs included (an implementation limit)", true};
  }
  // A command that is neither a signal nor an exec breaks the chain (semantics.md).
  void breaks_chain() { after_exec_ = false; }

  // Decodes `bytes`, whose first dword is dword `base` of `file` (locations count from the file's start).
  // `mem`: the address of `bytes` where they lie in memory (a GPFIFO's segment), else kNotInMemory.
  void walk(std::string_view bytes, uint32_t file, uint64_t base = 0, uint64_t mem = kNotInMemory) {
    uint64_t n = bytes.size() / 4;
    if (base + n + 1 > UINT32_MAX) throw InputError{{file, 0, 0}, "stream longer than 2^32 dwords (an implementation limit)", true};
    if (bytes.size() % 4)
      fail({file, uint32_t(base + n + 1), 0}, "stream of " + std::to_string(bytes.size()) +
                                           " bytes ends inside a dword (a pushbuffer is whole little-endian dwords)");
    auto at = [&](uint64_t k) { return Loc{file, uint32_t(base + k + 1), 0}; };
    uint64_t i = 0;
    while (i < n) {
      Loc hl = at(i);
      uint32_t h = dword_at(bytes, i);
      count_dwords(1, hl);
      if (h == 0) {  // the NOP dword
        ++i;
        continue;
      }
      uint32_t op = sec_op(h), cnt = count(h), subc = subchannel(h), m = method(h);
      auto hdr = [&] { return "method header " + format_hex(h) + " at " + at_dword(hl); };  // built only for a message
      const bool with_data = op == kIncMethod || op == kNonIncMethod || op == kOneInc;
      sink_.at_packet(mem == kNotInMemory ? mem : mem + 4 * i, 4 * (1 + (with_data ? std::min<uint64_t>(cnt, n - i - 1) : 0)));
      switch (op) {
        case kIncMethod:
        case kNonIncMethod:
        case kOneInc: {
          if (i + 1 + cnt > n)
            fail(hl, "truncated packet: " + hdr() + " has " + std::to_string(cnt) + " data dwords, but only " + std::to_string(n - i - 1) +
                         " follow before the end of the stream");
          uint64_t last = op == kIncMethod ? m + 4ull * (cnt ? cnt - 1 : 0) : op == kOneInc && cnt > 1 ? m + 4ull : m;
          if (last > kMaxMethod)
            fail(hl, "wrong count: " + hdr() + " increments past the last method (" + format_hex(kMaxMethod) + ") with " + std::to_string(cnt) + " data dwords");
          count_dwords(cnt, hl);
          for (uint32_t k = 0; k < cnt; ++k) {
            uint32_t mk = op == kIncMethod ? m + 4 * k : op == kOneInc && k > 0 ? m + 4 : m;
            write(subc, mk, dword_at(bytes, i + 1 + k), at(i + 1 + k));
          }
          i += 1 + cnt;
          break;
        }
        case kImmdDataMethod:
          write(subc, m, cnt, hl);
          ++i;
          break;
        case kEndPbSegment:
          if (i + 1 != n)
            fail(hl, "END_PB_SEGMENT (" + hdr() + ") is followed by " + std::to_string(n - i - 1) +
                         " dwords the hardware never fetches: only a segment's last dword may end it");
          ++i;
          break;
        case kGrp0UseTert:
          if (tert_op(h) == 0)
            fail(hl, "bad header: " + hdr() + " is the pre-Fermi incrementing format (SEC_OP 0, TERT_OP 0), which is not decoded");
          fail(hl, "bad header: " + hdr() + " sets, stores or uses a sub-device mask (SEC_OP 0, TERT_OP " + std::to_string(tert_op(h)) +
                       "): multi-GPU masks are not decoded");
        case kGrp2UseTert:
          fail(hl, "bad header: " + hdr() + " is the pre-Fermi non-incrementing format (SEC_OP 2), which is not decoded");
        default:
          fail(hl, "bad header: " + hdr() + " has the reserved SEC_OP 6");
      }
    }
  }

  std::string what(const char* name, uint32_t m, const Loc& l) const {
    return std::string(name ? name : "method") + " (" + format_hex(m) + ") at " + at_dword(l);
  }

  void write(uint32_t subc, uint32_t m, uint32_t v, const Loc& l) {
    if (std::find(opt_.ignored.begin(), opt_.ignored.end(), m) != opt_.ignored.end()) return;
    if (m < kHostMethodEnd) return host(subc, m, v, l);
    uint32_t cls = class_[subc];
    if (!cls)
      fail(l, "method " + format_hex(m) + " at " + at_dword(l) + " on subchannel " + std::to_string(subc) +
                  ", to which no SET_OBJECT bound a class (the stream must bind its compute or copy class first)");
    if (is_compute_class(cls)) return compute(cls, m, v, l);
    return copy(m, v, l);
  }

  // ---- host methods ----
  void host(uint32_t subc, uint32_t m, uint32_t v, const Loc& l) {
    auto w = [&] { return what(host_name(m), m, l); };  // built only for a message
    switch (m) {
      case kSetObject: {
        uint32_t cls = v & 0xffffu;
        if (v >> 16) fail(l, w() + ": engine field " + format_hex(v >> 16) + " is not decoded (only 0)");
        if (!is_compute_class(cls) && !is_copy_class(cls))
          fail(l, w() + ": class " + format_hex(cls) +
                      " is not decoded (compute: AMPERE_COMPUTE_A/B 0xc6c0/0xc7c0, ADA_COMPUTE_A 0xc9c0, HOPPER_COMPUTE_A 0xcbc0; copy: 0xc6b5, 0xc7b5, 0xc8b5)");
        // A channel feeds one engine: a stream binds compute classes or copy classes, not both.
        for (uint32_t c : class_)
          if (c && is_compute_class(c) != is_compute_class(cls))
            fail(l, w() + ": class " + format_hex(cls) + " after " + format_hex(c) + " on this stream: a channel runs one engine (compute or copy)");
        class_[subc] = cls;
        return;
      }
      case kHostNop:
      case kNonStallInterrupt: return;  // no memory or ordering effect
      case kSemAddrLo: return sem_lo_.write(v);
      case kSemAddrHi: return sem_hi_.write(v);
      case kSemPayloadLo: return pay_lo_.write(v);
      case kSemPayloadHi: return pay_hi_.write(v);
      case kSemExecute: return sem_execute(v, l, w());
      case kWfi:
        if (v & ~kWfiScopeAll) fail(l, w() + ": data " + format_hex(v) + " is not decoded (SCOPE, bit 0, only)");
        breaks_chain();
        emit(l, "barrier");
        return;
      default:
        fail(l, "unknown host method " + format_hex(m) + " at " + at_dword(l) +
                    " (decoded: SET_OBJECT, NOP, NON_STALL_INTERRUPT, SEM_ADDR_LO/HI, SEM_PAYLOAD_LO/HI, SEM_EXECUTE, WFI)");
    }
  }

  void sem_execute(uint32_t v, const Loc& l, const std::string& w) {
    uint32_t op = sem_operation(v);
    if (!sem_lo_.set || !sem_hi_.set || !pay_lo_.set || ((v & kSemPayload64) && !pay_hi_.set))
      fail(l, w + ": the stream did not set SEM_ADDR_LO/HI and SEM_PAYLOAD_LO/HI before it");
    if (sem_lo_.v & 3) fail(l, w + ": SEM_ADDR_LO " + format_hex(sem_lo_.v) + " is not 4-byte aligned (OFFSET is bits 31:2)");
    if (sem_hi_.v >> 8) fail(l, w + ": SEM_ADDR_HI " + format_hex(sem_hi_.v) + " has bits above 7:0 (the address is 40 bits)");
    uint64_t addr = uint64_t(sem_hi_.v) << 32 | sem_lo_.v;
    uint64_t payload = (v & kSemPayload64) ? (uint64_t(pay_hi_.v) << 32 | pay_lo_.v) : pay_lo_.v;
    if (op == kSemRelease) {
      if (v & ~(7u | kSemReleaseWfi | kSemPayload64 | kSemReleaseTimestamp))
        fail(l, w + ": fields " + format_hex(v & ~(7u | kSemReleaseWfi | kSemPayload64 | kSemReleaseTimestamp)) +
                    " of a release are not decoded (only RELEASE_WFI, PAYLOAD_SIZE, RELEASE_TIMESTAMP)");
      if (!(v & kSemReleaseWfi))
        fail(l, w + ": a release without RELEASE_WFI (bit 20) is written while earlier work may still run; only WFI releases are decoded");
      if (!(v & kSemPayload64))
        fail(l, w + ": a 32-bit release keeps the word's high half; the nv profile's host release is 64-bit (PAYLOAD_SIZE bit 24)");
      if (const StreamBinding::Placed* s = index_.signal_at(addr)) {
        // A copy queue's signals are 32-bit in the nv profile (they keep the word's high half);
        // this one writes all 64 bits, which no copy-queue `signal` says.
        if (opt_.engine == EngineKind::Copy)
          fail(l, w + ": a 64-bit host release to " + s->name + " on a copy queue writes the whole word, and the nv profile's copy-queue "
                      "signals are 32-bit: not decoded (signal with the copy engine's semaphore, as tinygrad's copy queue does)");
        // RELEASE_TIMESTAMP writes the clock at addr + 8: the signal's own timestamp slot.
        wfi_since_exec_ = true;
        return emit(l, "signal " + s->name + " = " + std::to_string(payload));
      }
      const StreamBinding::Placed* t = addr >= 8 ? index_.signal_at(addr - 8) : nullptr;
      if (t && !(v & kSemReleaseTimestamp)) {
        // The payload lands in the signal's timestamp slot, its value word untouched: a timestamp.
        wfi_since_exec_ = true;
        return emit(l, "timestamp " + t->name);
      }
      if (t) fail(l, w + ": a release with RELEASE_TIMESTAMP at " + format_hex(addr) + " (" + t->name + "'s timestamp slot) writes the clock at " +
                         format_hex(addr + 8) + ", outside " + t->name + "; not decoded");
      fail(l, w + ": address " + format_hex(addr) + " is no signal's ('signal NAME on DEV at " + format_hex(addr) + "', or its timestamp slot at + 8)");
    }
    if (op == kSemAcqCircGeq || op == kSemAcqStrictGeq) {
      if (v & ~(7u | kSemAcquireSwitchTsg | kSemPayload64))
        fail(l, w + ": fields " + format_hex(v & ~(7u | kSemAcquireSwitchTsg | kSemPayload64)) +
                    " of an acquire are not decoded (only ACQUIRE_SWITCH_TSG, PAYLOAD_SIZE)");
      if (!(v & kSemPayload64))
        fail(l, w + ": a 32-bit acquire compares the low word; the nv profile's waits are 64-bit (PAYLOAD_SIZE bit 24)");
      const StreamBinding::Placed* s = index_.signal_at(addr);
      if (!s) fail(l, w + ": address " + format_hex(addr) + " is no signal's ('signal NAME on DEV at " + format_hex(addr) + "')");
      // ACQ_CIRC_GEQ compares (value - payload) as a signed 64-bit number: the same as the
      // model's unsigned >= while the payload (and the values written) stay below 2^63.
      if (op == kSemAcqCircGeq && payload >> 63)
        fail(l, w + ": ACQ_CIRC_GEQ with payload " + format_hex(payload) + " (2^63 or more) compares circularly, which no `wait` says: not decoded");
      breaks_chain();
      return emit(l, "wait " + s->name + " >= " + std::to_string(payload));
    }
    fail(l, w + ": operation " + std::to_string(op) + " is not decoded (RELEASE 1, ACQ_STRICT_GEQ 2, ACQ_CIRC_GEQ 3)");
  }

  // ---- compute-class methods ----
  void compute(uint32_t cls, uint32_t m, uint32_t v, const Loc& l) {
    auto w = [&] { return what(compute_name(m), m, l); };  // built only for a message
    switch (m) {
      case kSendPcasA: return pcas_a_.write(v);
      case kSendSignalingPcas2B: {
        uint32_t action = v & 0xfu;
        if (v >> 4) fail(l, w() + ": data " + format_hex(v) + " has bits above PCAS_ACTION (3:0)");
        if (action != kPcasSchedule && action != kPcasInvalidateCopySchedule && action != kPcasPrefetchSchedule)
          fail(l, w() + ": PCAS_ACTION " + std::to_string(action) + " is not decoded (SCHEDULE 2, INVALIDATE_COPY_SCHEDULE 3, PREFETCH_SCHEDULE 9)");
        return launch(cls, l, w());
      }
      case kInvalidateShaderCachesNoWfi:
        // tinygrad's memory_barrier; it waits for nothing (NO_WFI) and breaks the chain.
        breaks_chain();
        return emit(l, "memory_barrier");
      case kWaitForIdle:
        breaks_chain();
        return emit(l, "barrier");
      case kPmTrigger:
      case kSetShaderSharedMemoryWindowA: case kSetShaderSharedMemoryWindowB:
      case kSetShaderLocalMemoryNonThrottledA: case kSetShaderLocalMemoryNonThrottledB: case kSetShaderLocalMemoryNonThrottledC:
      case kSetShaderLocalMemoryA: case kSetShaderLocalMemoryB:
      case kSetShaderLocalMemoryWindowA: case kSetShaderLocalMemoryWindowB:
        return;  // state that orders nothing and touches no bound memory
      default:
        fail(l, "unknown compute method " + format_hex(m) + " at " + at_dword(l) + " (class " + format_hex(cls) +
                    "; decoded: SEND_PCAS_A, SEND_SIGNALING_PCAS2_B, INVALIDATE_SHADER_CACHES_NO_WFI, WAIT_FOR_IDLE, PM_TRIGGER, SET_SHADER_*)");
    }
  }

  void launch(uint32_t cls, const Loc& l, const std::string& w) {
    if (!pcas_a_.set) fail(l, w + ": no SEND_PCAS_A gave the QMD address before it");
    if (after_exec_ && !wfi_since_exec_ && !overlap_) {
      overlap_ = true;
      overlap_at_ = l;
      overlap_why_ = "the launch at " + at_dword(l) + " follows the kernel at " + at_dword(last_exec_) +
                     " with neither dependent-QMD chaining nor a wait for idle between, so they overlap";
    }
    uint64_t addr = uint64_t(pcas_a_.v) << kQmdAddressShift;
    std::set<uint64_t> seen;
    Loc at = l;
    bool first = true;
    std::string ctx = w;
    for (;;) {
      if (!seen.insert(addr).second) fail(at, ctx + ": the dependent QMD at " + format_hex(addr) + " is already in this chain (a cycle)");
      Loc qloc = qmd(cls, addr, first ? l : Loc{}, at, ctx);
      first = false;
      if (!next_dependent_) break;
      at = qloc;
      ctx = "the QMD at " + format_hex(addr) + " (" + at_dword(qloc) + ")";
      addr = next_addr_;
    }
  }

  bool next_dependent_ = false;
  uint64_t next_addr_ = 0;

  // Decodes the QMD at `addr`: its exec (at `eloc`, or at the QMD's first dword when invalid) and
  // its releases. `at`/`ctx` locate and name what launched it. Returns the QMD's location.
  Loc qmd(uint32_t cls, uint64_t addr, Loc eloc, const Loc& at, const std::string& ctx) {
    const StreamBinding::Region* r = index_.region_holding(addr, kQmdV03.bytes);
    if (!r) fail(at, ctx + ": the QMD at " + format_hex(addr) + " lies in no region ('region NAME at " + format_hex(addr) + " file \"FILE\"')");
    uint64_t off = addr - r->addr;
    if (off % 4) fail(at, ctx + ": the QMD at " + format_hex(addr) + " is not dword-aligned within region " + r->name);
    Loc ql{r->file, uint32_t(off / 4 + 1), 0};
    std::string_view q = std::string_view(r->bytes).substr(off);
    uint32_t major = uint32_t(get_bits(q, kQmdMajorVersion));
    const QmdLayout* L = major == 3 ? &kQmdV03 : major == 4 && cls == kHopperComputeA ? &kQmdV04 : nullptr;
    std::string qw = "the QMD at " + format_hex(addr) + " (" + r->name + ", " + at_dword(ql) + ")";
    if (!L)
      fail(at, ctx + ": " + qw + " has QMD_MAJOR_VERSION " + std::to_string(major) + ", which class " + format_hex(cls) +
                   " does not decode (V03_00 on Ampere, Ada and Hopper; V04_00 on Hopper)");
    if (q.size() < L->bytes) fail(at, ctx + ": " + qw + " runs past the end of its region (" + std::to_string(L->bytes) + " bytes)");
    count_dwords(L->bytes / 4, at);
    auto g = [&](Field f) { return get_bits(q, f); };
    if (L->major == 3 ? g(L->is_queue) != 0 : (g(L->is_queue) < kQmdTypeGridCta || g(L->is_queue) > kQmdTypeLastGrid))
      fail(at, ctx + ": " + qw + " is not a grid launch (" + (L->major == 3 ? "IS_QUEUE set" : "QMD_TYPE " + std::to_string(g(L->is_queue))) + ")");
    if (g(L->dep1_enable)) fail(at, ctx + ": " + qw + " enables DEPENDENT_QMD1, which is not decoded");
    if ((L->major == 4 || cls == kHopperComputeA) && g(L->rel2_enable))
      fail(at, ctx + ": " + qw + " enables a third release, which is not decoded (an exec carries two)");
    uint64_t code = g(L->prog_hi) << 32 | g(L->prog_lo);
    const StreamBinding::Kernel* k = index_.kernel_at(code);
    if (!k) fail(at, ctx + ": " + qw + " runs code at " + format_hex(code) + ", no kernel's ('kernel NAME at " + format_hex(code) + " args(...)')");
    uint64_t cb = 0;
    if (!k->args.empty()) {
      if (!g(L->cb0_valid)) fail(at, ctx + ": " + qw + " has no valid constant buffer 0, where " + k->name + "'s arguments lie");
      cb = (g(L->cb0_addr_hi) << 32 | g(L->cb0_addr_lo)) << L->cb0_shift;
    }
    // The launch reads its QMD and its arguments over its run (docs/encoded.md).
    std::string access = index_.kernel_access(*k, cb + kParamOffset, at,
                                              ctx + ": " + qw + " (arguments at constant buffer 0 + " + format_hex(kParamOffset) + ")",
                                              {{addr, L->bytes}});
    emit(eloc.valid() ? eloc : ql, "exec " + k->name + access);
    last_exec_ = eloc.valid() ? eloc : ql;
    after_exec_ = true;
    wfi_since_exec_ = false;
    for (int i = 0; i < 2; ++i) {
      if (!g(L->rel_enable[i])) continue;
      Loc rl{ql.file, ql.line + L->rel_addr_lo[i].lo / 32, 0};
      std::string rw = qw + ", release " + std::to_string(i);
      if (g(L->rel_reduction[i])) fail(rl, rw + ": a reduction, which is not decoded");
      uint64_t size = g(L->rel_size[i]), wide = g(L->rel_payload64[i]);
      uint64_t value = g(L->rel_payload_lo[i]);
      if (wide && (size == kReleaseFourWords || size == kReleaseTwoWords)) value |= g(L->rel_payload_hi[i]) << 32;
      else if (wide || size != kReleaseFourWords)
        fail(rl, rw + ": STRUCTURE_SIZE " + std::to_string(size) + " with PAYLOAD64B " + std::to_string(wide) +
                     " is not decoded (four words, or two words with a 64-bit payload)");
      uint64_t ra = g(L->rel_addr_hi[i]) << 32 | g(L->rel_addr_lo[i]);
      const StreamBinding::Placed* s = index_.signal_at(ra);
      if (!s) fail(rl, rw + ": address " + format_hex(ra) + " is no signal's ('signal NAME on DEV at " + format_hex(ra) + "')");
      if (!first_qmd_release_.valid()) first_qmd_release_ = rl;
      emit(rl, "signal " + s->name + " = " + std::to_string(value));
    }
    next_dependent_ = g(L->dep_enable) != 0;
    if (next_dependent_) {
      if (g(L->dep_action) != kDependentActionSchedule)
        fail(at, ctx + ": " + qw + " has DEPENDENT_QMD0_ACTION " + std::to_string(g(L->dep_action)) + ", which is not decoded (only QMD_SCHEDULE, 1)");
      next_addr_ = g(L->dep_pointer) << kQmdAddressShift;
    }
    return ql;
  }

  // ---- copy-class methods ----
  void copy(uint32_t m, uint32_t v, const Loc& l) {
    auto w = [&] { return what(copy_name(m), m, l); };  // built only for a message
    auto upper = [&](Reg& r) {
      if (v >> 17) fail(l, w() + ": " + format_hex(v) + " has bits above 16:0 (the address is 49 bits)");
      r.write(v);
    };
    switch (m) {
      case kSetSemaphoreA: return upper(csem_hi_);
      case kSetSemaphoreB: return csem_lo_.write(v);
      case kSetSemaphorePayload: return csem_pay_.write(v);
      case kOffsetInUpper: return upper(in_hi_);
      case kOffsetInLower: return in_lo_.write(v);
      case kOffsetOutUpper: return upper(out_hi_);
      case kOffsetOutLower: return out_lo_.write(v);
      case kLineLengthIn: return len_.write(v);
      case kPitchIn: case kPitchOut: case kLineCount: return;  // read only by multi-line transfers, which are refused
      case kLaunchDma: return launch_dma(v, l, w());
      default:
        fail(l, "unknown copy method " + format_hex(m) + " at " + at_dword(l) +
                    " (decoded: SET_SEMAPHORE_A/B/PAYLOAD, LAUNCH_DMA, OFFSET_IN/OUT_UPPER/LOWER, PITCH_IN/OUT, LINE_LENGTH_IN, LINE_COUNT)");
    }
  }

  std::string range(uint64_t a, uint64_t n, const Loc& l, const std::string& w, const char* side) {
    const StreamBinding::Placed* b = index_.buffer_containing(a);
    if (!b) fail(l, w + ": the " + side + " address " + format_hex(a) + " is in no buffer ('buffer NAME on DEV SIZE at ADDR')");
    uint64_t lo = a - b->addr;
    if (n > b->size - lo) fail(l, w + ": the " + std::to_string(n) + " " + side + " bytes at " + format_hex(a) + " run past the end of " + b->name);
    return b->name + "[" + format_hex(lo) + ":" + format_hex(lo + n) + "]";
  }

  void launch_dma(uint32_t v, const Loc& l, const std::string& w) {
    if (v & ~kDmaDecodedBits)
      fail(l, w + ": fields " + format_hex(v & ~kDmaDecodedBits) +
                  " are not decoded (multi-line, remap, physical addresses, semaphore reductions, VPR, reserved bits)");
    uint32_t t = dma_transfer_type(v), sem = dma_semaphore_type(v);
    if (t == kTransferPipelined) fail(l, w + ": a pipelined transfer may overlap the one before it; only non-pipelined transfers (2) are decoded");
    if (t != kTransferNone && t != kTransferNonPipelined) fail(l, w + ": DATA_TRANSFER_TYPE " + std::to_string(t) + " is not decoded");
    if (sem == kSemaphoreConditionalIntr) fail(l, w + ": a conditional-interrupt semaphore (SEMAPHORE_TYPE 3) is not decoded");
    if (sem != kSemaphoreNone && !(v & kDmaFlushEnable))
      fail(l, w + ": a semaphore release without FLUSH_ENABLE (bit 2) may land before the copied data; not decoded");
    if (t == kTransferNonPipelined) {
      if ((v & (kDmaSrcPitch | kDmaDstPitch)) != (kDmaSrcPitch | kDmaDstPitch))
        fail(l, w + ": a block-linear layout (SRC/DST_MEMORY_LAYOUT 0) is not decoded; only pitch to pitch");
      if (!in_hi_.set || !in_lo_.set || !out_hi_.set || !out_lo_.set || !len_.set)
        fail(l, w + ": the stream did not set OFFSET_IN/OUT_UPPER/LOWER and LINE_LENGTH_IN before it");
      if (!len_.v) fail(l, w + ": a transfer of 0 bytes (LINE_LENGTH_IN 0)");
      uint64_t src = uint64_t(in_hi_.v) << 32 | in_lo_.v, dst = uint64_t(out_hi_.v) << 32 | out_lo_.v;
      std::string s = range(src, len_.v, l, w, "source"), d = range(dst, len_.v, l, w, "destination");
      breaks_chain();
      emit(l, "copy " + s + " -> " + d);
    }
    if (sem != kSemaphoreNone) {
      if (!csem_hi_.set || !csem_lo_.set || !csem_pay_.set) fail(l, w + ": the stream did not set SET_SEMAPHORE_A/B/PAYLOAD before it");
      uint64_t addr = uint64_t(csem_hi_.v) << 32 | csem_lo_.v;
      const StreamBinding::Placed* s = index_.signal_at(addr);
      if (!s) fail(l, w + ": semaphore address " + format_hex(addr) + " is no signal's ('signal NAME on DEV at " + format_hex(addr) + "')");
      emit(l, "signal " + s->name + " = " + std::to_string(csem_pay_.v));
      cmds_.back().zero_high = sem == kSemaphoreFourWord;
    }
  }
};

// ---- the encoder: tinygrad's NVComputeQueue / NVCopyQueue lowering ----------------------------
class Encoder {
 public:
  Encoder(const EncodeQueue& q, EncodeSpace& space, const NvTarget& t) : q_(q), space_(space), t_(t) {}

  std::string run(const std::vector<ConcreteCommand>& cmds) {
    Loc first = cmds.empty() ? Loc{} : cmds[0].loc;
    if (!is_compute_class(t_.compute_class) || !is_copy_class(t_.copy_class))
      throw CannotEncode{first, "the nv encoder's target classes are not ones the decoder reads"};
    if (t_.qmd_major != 3 && !(t_.qmd_major == 4 && t_.compute_class == kHopperComputeA))
      throw CannotEncode{first, "QMD V0" + std::to_string(t_.qmd_major) + "_00 is not a layout class " + format_hex(t_.compute_class) + " decodes"};
    L_ = t_.qmd_major == 4 ? &kQmdV04 : &kQmdV03;
    compute_ = q_.engine == EngineKind::Compute;
    if (compute_ && q_.ordering == Ordering::Serial)
      throw CannotEncode{first, "an nv compute stream runs its launches chained or overlapped, never serial (the queue is 'ordering serial')"};
    chained_ = compute_ && q_.ordering == Ordering::Chained;
    method(compute_ ? kSubcCompute : kSubcCopy, kSetObject, {compute_ ? t_.compute_class : t_.copy_class});
    for (const ConcreteCommand& c : cmds) command(c);
    return std::move(out_);
  }

 private:
  const EncodeQueue& q_;
  EncodeSpace& space_;
  const NvTarget& t_;
  const QmdLayout* L_ = nullptr;
  bool compute_ = true, chained_ = true;
  std::string out_;
  bool qmd_open_ = false;  // the last command was an exec (or one of its QMD releases): chain or release into it
  uint64_t qmd_addr_ = 0;
  int releases_ = 0;

  void method(uint32_t subc, uint32_t m, std::initializer_list<uint32_t> data) {
    append_dword(out_, header(kIncMethod, subc, m, uint32_t(data.size())));
    for (uint32_t v : data) append_dword(out_, v);
  }
  static uint32_t lo(uint64_t v) { return uint32_t(v); }
  static uint32_t hi(uint64_t v) { return uint32_t(v >> 32); }
  static void fits(const ConcreteCommand& c, uint64_t v, int bits, const std::string& what) {
    if (bits < 64 && v >> bits)
      throw CannotEncode{c.loc, what + " carries " + std::to_string(bits) + " bits, and " + format_hex(v) + " does not fit"};
  }

  void host_sem(const ConcreteCommand& c, uint64_t addr, uint64_t payload, uint32_t exec) {
    fits(c, addr, 40, "SEM_ADDR_LO/HI");
    method(kSubcHost, kSemAddrLo, {lo(addr), hi(addr), lo(payload), hi(payload), exec});
  }

  void command(const ConcreteCommand& c) {
    switch (c.op) {
      case CmdOp::Wait:
        // tinygrad's circular acquire, which is the model's >= only below 2^63; strict beyond it.
        host_sem(c, space_.signal_addr(c.signal), c.value, (c.value >> 63 ? kSemAcqStrictGeq : kSemAcqCircGeq) | kSemPayload64);
        qmd_open_ = false;
        return;
      case CmdOp::Signal: return signal(c);
      case CmdOp::Timestamp:
        // A WFI release of a 64-bit 0 into the signal's timestamp slot: its value word stays untouched.
        host_sem(c, space_.signal_addr(c.signal) + 8, 0, kSemRelease | kSemReleaseWfi | kSemPayload64);
        qmd_open_ = false;
        return;
      case CmdOp::Barrier:
        method(kSubcHost, kWfi, {kWfiScopeAll});
        qmd_open_ = false;
        return;
      case CmdOp::MemoryBarrier:
        if (!compute_) throw CannotEncode{c.loc, "a memory_barrier needs a compute queue (INVALIDATE_SHADER_CACHES_NO_WFI is a compute method)"};
        method(kSubcCompute, kInvalidateShaderCachesNoWfi, {kInvalidateAll});
        qmd_open_ = false;
        return;
      case CmdOp::Exec:
        if (!compute_) throw CannotEncode{c.loc, "an exec needs a compute queue (the copy class launches no kernel)"};
        return exec(c);
      case CmdOp::Copy:
        if (compute_) throw CannotEncode{c.loc, "an nv compute stream carries no copy (tinygrad copies on the copy engine's queue)"};
        return copy(c);
    }
  }

  void signal(const ConcreteCommand& c) {
    uint64_t a = space_.signal_addr(c.signal);
    if (!compute_) {
      fits(c, c.value, 32, "the copy engine's semaphore payload");
      fits(c, a, 49, "SET_SEMAPHORE_A/B");
      method(kSubcCopy, kSetSemaphoreA, {hi(a), lo(a), lo(c.value)});
      method(kSubcCopy, kLaunchDma, {kDmaFlushEnable | kSemaphoreOneWord << 3});
      return;
    }
    if (chained_ && qmd_open_ && releases_ < 2) {
      fits(c, a, L_->rel_addr_hi[0].bits + 32, "a QMD release address");
      std::string& qmd = space_.region(qmd_addr_);
      int i = releases_++;
      put_bits(qmd, L_->rel_enable[i], 1);
      put_bits(qmd, L_->rel_size[i], kReleaseTwoWords);
      put_bits(qmd, L_->rel_payload64[i], 1);
      put_bits(qmd, L_->rel_addr_lo[i], lo(a));
      put_bits(qmd, L_->rel_addr_hi[i], hi(a));
      put_bits(qmd, L_->rel_payload_lo[i], lo(c.value));
      put_bits(qmd, L_->rel_payload_hi[i], hi(c.value));
      return;
    }
    // The QMD's two slots are taken (or no exec precedes): a WFI release, as tinygrad writes it.
    host_sem(c, a, c.value, kSemRelease | kSemReleaseWfi | kSemPayload64 | kSemReleaseTimestamp);
    method(kSubcHost, kNonStallInterrupt, {0});
    qmd_open_ = false;
  }

  void exec(const ConcreteCommand& c) {
    std::vector<StreamBinding::KernelArg> args;
    std::string cb(kParamOffset, '\0');  // the driver's prefix of constant buffer 0, then the arguments
    for (auto* list : {&c.reads, &c.writes})
      for (const ConcreteRange& r : *list) {
        args.push_back({list == &c.reads ? StreamBinding::Arg::Reads : StreamBinding::Arg::Writes, r.hi - r.lo});
        uint64_t p = space_.buffer_addr(r.base) + r.lo;
        append_dword(cb, lo(p)), append_dword(cb, hi(p));
      }
    uint64_t code = space_.kernel_addr(c.kernel, args, 256);
    fits(c, code, 32 + L_->prog_hi.bits, "the QMD's program address");
    uint64_t cb_addr = space_.add_region(std::move(cb), "cbuf0", 256);
    fits(c, cb_addr >> L_->cb0_shift, 32 + L_->cb0_addr_hi.bits, "the QMD's constant buffer address");
    std::string qmd(L_->bytes, '\0');
    put_bits(qmd, kQmdMajorVersion, L_->major);
    if (L_->major == 4) put_bits(qmd, L_->is_queue, kQmdTypeGridCta);
    for (int d = 0; d < 3; ++d) put_bits(qmd, L_->grid[d], 1), put_bits(qmd, L_->block[d], 1);
    put_bits(qmd, L_->prog_lo, lo(code));
    put_bits(qmd, L_->prog_hi, hi(code));
    put_bits(qmd, L_->cb0_valid, 1);
    put_bits(qmd, L_->cb0_addr_lo, lo(cb_addr >> L_->cb0_shift));
    put_bits(qmd, L_->cb0_addr_hi, hi(cb_addr >> L_->cb0_shift));
    uint64_t qaddr = space_.add_region(std::move(qmd), "qmd", uint64_t(1) << kQmdAddressShift);
    fits(c, qaddr >> kQmdAddressShift, 32, "a QMD address >> 8");
    if (chained_ && qmd_open_) {
      // Directly after an exec: the previous QMD schedules this one when its kernel ends.
      std::string& prev = space_.region(qmd_addr_);
      put_bits(prev, L_->dep_enable, 1);
      put_bits(prev, L_->dep_action, kDependentActionSchedule);
      put_bits(prev, L_->dep_prefetch, 1);
      put_bits(prev, L_->dep_pointer, qaddr >> kQmdAddressShift);
    } else {
      method(kSubcCompute, kSendPcasA, {uint32_t(qaddr >> kQmdAddressShift)});
      method(kSubcCompute, kSendSignalingPcas2B, {kPcasPrefetchSchedule});
    }
    qmd_open_ = chained_;
    qmd_addr_ = qaddr;
    releases_ = 0;
  }

  void copy(const ConcreteCommand& c) {
    if (c.reads.empty() || c.writes.empty()) throw CannotEncode{c.loc, "a copy without its source and destination ranges"};
    const ConcreteRange &s = c.reads[0], &d = c.writes[0];
    uint64_t n = s.hi - s.lo;
    if (n != d.hi - d.lo || n == 0) throw CannotEncode{c.loc, "a copy's ranges must be non-empty and of one length"};
    fits(c, n, 32, "LINE_LENGTH_IN");
    uint64_t src = space_.buffer_addr(s.base) + s.lo, dst = space_.buffer_addr(d.base) + d.lo;
    fits(c, src, 49, "OFFSET_IN_UPPER/LOWER");
    fits(c, dst, 49, "OFFSET_OUT_UPPER/LOWER");
    method(kSubcCopy, kOffsetInUpper, {hi(src), lo(src), hi(dst), lo(dst)});
    method(kSubcCopy, kLineLengthIn, {uint32_t(n)});
    method(kSubcCopy, kLaunchDma, {kDmaCopy});
  }
};

}  // namespace

const char* decoded_method(uint32_t m) {
  if (m == kHostNop) return nullptr;
  if (const char* n = host_name(m)) return n;
  if (const char* n = compute_name(m)) return n;
  return copy_name(m);
}

StreamResult decode_nv(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt) {
  return Decoder(b, opt).run(bytes, file);
}

StreamResult decode_nv_gpfifo(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt) {
  return Decoder(b, opt).run_gpfifo(bytes, file);
}

std::string encode_nv_gpfifo(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space) {
  std::string pb = encode_nv(cmds, q, space);
  uint64_t len = pb.size() / 4;
  Loc first = cmds.empty() ? Loc{} : cmds[0].loc;
  if (len > kGpMaxLength) throw CannotEncode{first, "the pushbuffer's " + std::to_string(len) + " dwords exceed one GPFIFO entry's LENGTH (21 bits)"};
  uint64_t addr = space.add_region(std::move(pb), "pushbuf", 256);
  if (addr >> 40) throw CannotEncode{first, "the pushbuffer's address " + format_hex(addr) + " exceeds a GPFIFO entry's 40 bits"};
  std::string out;
  append_dword(out, uint32_t(addr) & ~3u);
  append_dword(out, uint32_t(addr >> 32) | kGpLevelSubroutine | uint32_t(len) << 10);
  return out;
}

std::string encode_nv_for(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space, const NvTarget& t) {
  return Encoder(q, space, t).run(cmds);
}

std::string encode_nv(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space) {
  return encode_nv_for(cmds, q, space, NvTarget{});
}

}  // namespace qvet::nv
