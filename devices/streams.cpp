#include "devices/streams.h"

#include <algorithm>

#include "core/expr.h"
#include "core/input_error.h"
#include "devices/amd/pm4.h"
#include "devices/amd/sdma.h"
#include "devices/nv/pushbuffer.h"

namespace qvet {

const std::vector<StreamFormat>& stream_formats() {
  static const std::vector<StreamFormat> formats = {
      {"amd-pm4", Arch::Amd, 1 << unsigned(EngineKind::Compute), "opcode", 0xff, amd::pm4_decoded_packet, amd::decode_pm4, amd::encode_pm4},
      {"amd-sdma", Arch::Amd, 1 << unsigned(EngineKind::Copy), "opcode", 0xff, amd::sdma_decoded_packet, amd::decode_sdma, amd::encode_sdma},
      {"nv", Arch::Nv, 1 << unsigned(EngineKind::Compute) | 1 << unsigned(EngineKind::Copy), "method", 0x3ffc, nv::decoded_method, nv::decode_nv,
       nv::encode_nv},
      {"nv-gpfifo", Arch::Nv, 1 << unsigned(EngineKind::Compute) | 1 << unsigned(EngineKind::Copy), "method", 0x3ffc, nv::decoded_method,
       nv::decode_nv_gpfifo, nv::encode_nv_gpfifo},
  };
  return formats;
}

const StreamFormat* find_stream_format(std::string_view name) {
  for (const StreamFormat& f : stream_formats())
    if (name == f.name) return &f;
  return nullptr;
}

const StreamFormat* stream_format_for(Arch arch, EngineKind engine) {
  for (const StreamFormat& f : stream_formats())
    if (f.serves(arch, engine)) return &f;
  return nullptr;
}

BindingIndex::BindingIndex(const StreamBinding& b) {
  for (auto& s : b.signals) signals_.emplace(s.addr, &s);
  for (auto& x : b.buffers) buffers_.emplace(x.addr, &x);
  for (auto& k : b.kernels) kernels_.emplace(k.addr, &k);
  for (auto& r : b.regions) regions_.emplace(r.addr, &r);
}

namespace {
// The entry of `m` that starts last at or before `addr`, or nullptr.
template <class T>
const T* last_at_or_before(const std::map<uint64_t, const T*>& m, uint64_t addr) {
  auto it = m.upper_bound(addr);
  return it == m.begin() ? nullptr : std::prev(it)->second;
}
}  // namespace

const StreamBinding::Placed* BindingIndex::signal_at(uint64_t addr) const {
  auto it = signals_.find(addr);
  return it == signals_.end() ? nullptr : it->second;
}
const StreamBinding::Placed* BindingIndex::buffer_containing(uint64_t addr) const {
  const StreamBinding::Placed* x = last_at_or_before(buffers_, addr);
  return x && addr - x->addr < x->size ? x : nullptr;
}
const StreamBinding::Kernel* BindingIndex::kernel_at(uint64_t code) const {
  auto it = kernels_.find(code);
  return it == kernels_.end() ? nullptr : it->second;
}
const StreamBinding::Region* BindingIndex::region_holding(uint64_t addr, uint64_t n) const {
  const StreamBinding::Region* r = last_at_or_before(regions_, addr);
  return r && addr - r->addr <= r->bytes.size() && r->bytes.size() - (addr - r->addr) >= n ? r : nullptr;
}

void BindingIndex::overlapping(uint64_t addr, uint64_t n, std::string& list) const {
  if (n == 0) return;
  const uint64_t end = n > UINT64_MAX - addr ? UINT64_MAX : addr + n;
  auto it = buffers_.upper_bound(addr);
  if (it != buffers_.begin()) --it;
  for (; it != buffers_.end() && it->first < end; ++it) {
    const StreamBinding::Placed* b = it->second;
    const uint64_t b_end = b->size > UINT64_MAX - b->addr ? UINT64_MAX : b->addr + b->size;
    if (b_end <= addr) continue;
    list += (list.empty() ? "" : ", ") + b->name + "[" + format_hex(std::max(addr, b->addr) - b->addr) + ":" +
            format_hex(std::min(end, b_end) - b->addr) + "]";
  }
}

DecodedCommand DecodedSink::make(const Loc& at, std::string text) {
  if (made_++ >= opt_.max_commands)
    throw InputError{at, "more than " + std::to_string(opt_.max_commands) + " commands decoded from one stream (an implementation limit)", true};
  std::string fetched;
  if (bytes_) index_.overlapping(addr_, bytes_, fetched);
  // Its byte ranges are the "name[lo:hi]" of its text and of `fetched`.
  events_ += 1 + uint64_t(std::count(text.begin(), text.end(), '[')) + uint64_t(std::count(fetched.begin(), fetched.end(), '['));
  if (events_ > opt_.max_events)
    throw InputError{opt_.submit.file || opt_.submit.line ? opt_.submit : at,
                     "the program's streams decode to more than " + std::to_string(kMaxDecodedEvents) +
                         " commands and byte ranges (an implementation limit)", true};
  return {at, std::move(text), std::move(fetched)};
}

std::string BindingIndex::kernel_access(const StreamBinding::Kernel& k, uint64_t args, const Loc& at, const std::string& what,
                                        const std::vector<std::pair<uint64_t, uint64_t>>& also_read) const {
  std::string reads, writes;
  for (auto [addr, n] : also_read) overlapping(addr, n, reads);
  if (k.args.empty()) return reads.empty() ? "" : " reads " + reads;
  uint64_t n = k.args.size() * 8;
  const StreamBinding::Region* r = n > UINT64_MAX - args ? nullptr : region_holding(args, n);
  if (!r)
    throw InputError{at, what + ": the " + std::to_string(n) + " bytes of " + k.name + "'s arguments at " + format_hex(args) +
                             " lie in no region ('region NAME at ADDR file \"FILE\"')"};
  overlapping(args, n, reads);
  for (size_t a = 0; a < k.args.size(); ++a) {
    const StreamBinding::KernelArg& arg = k.args[a];
    if (arg.role == StreamBinding::Arg::Value) continue;
    uint64_t off = args - r->addr + a * 8;
    uint64_t p = uint64_t(dword_at(std::string_view(r->bytes).substr(off), 0)) |
                 uint64_t(dword_at(std::string_view(r->bytes).substr(off), 1)) << 32;
    const StreamBinding::Placed* buf = buffer_containing(p);
    if (!buf)
      throw InputError{at, what + ": argument " + std::to_string(a) + " of " + k.name + " (read at " + format_hex(args + a * 8) +
                               ") points at " + format_hex(p) + ", in no buffer ('buffer NAME on DEV SIZE at ADDR')"};
    uint64_t lo = p - buf->addr, hi = buf->size;
    if (arg.extent != StreamBinding::KernelArg::kToEnd) {
      if (arg.extent > buf->size - lo)
        throw InputError{at, what + ": argument " + std::to_string(a) + " of " + k.name + " points at " + format_hex(p) + ", and its " +
                                 format_hex(arg.extent) + " bytes run past the end of " + buf->name};
      hi = lo + arg.extent;
    }
    std::string& list = arg.role == StreamBinding::Arg::Reads ? reads : writes;
    list += (list.empty() ? "" : ", ") + buf->name + "[" + format_hex(lo) + ":" + format_hex(hi) + "]";
  }
  return (reads.empty() ? "" : " reads " + reads) + (writes.empty() ? "" : " writes " + writes);
}

BindingIndex::Indirect BindingIndex::indirect(uint64_t addr, uint64_t n, const Loc& at, const std::string& what) const {
  const StreamBinding::Region* r = region_holding(addr, n);
  if (!r)
    throw InputError{at, what + ": the " + std::to_string(n) + " bytes at " + format_hex(addr) + " lie in no region ('region NAME at " +
                             format_hex(addr) + " file \"FILE\"')"};
  uint64_t off = addr - r->addr;
  if (off % 4) throw InputError{at, what + ": address " + format_hex(addr) + " is not dword-aligned within region " + r->name};
  return {std::string_view(r->bytes).substr(off, n), r->file, off / 4};
}

uint32_t fits32(const ConcreteCommand& c, const char* field) {
  if (c.value > UINT32_MAX) throw CannotEncode{c.loc, std::string(field) + " carries 32 bits, and " + std::to_string(c.value) + " does not fit"};
  return uint32_t(c.value);
}

void refuse_chained(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, const char* format) {
  if (q.ordering == Ordering::Chained)
    throw CannotEncode{cmds.empty() ? Loc{} : cmds[0].loc, std::string(format) + " has no chained ordering (the queue is declared 'ordering chained')"};
}

std::string at_dword(const Loc& l) {
  return "dword " + format_hex(l.line - 1) + " (byte " + format_hex(uint64_t(l.line - 1) * 4) + ")";
}

uint32_t dword_at(std::string_view bytes, uint64_t i) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes.data()) + i * 4;
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

void append_dword(std::string& out, uint32_t v) {
  for (int k = 0; k < 4; ++k) out.push_back(char((v >> (8 * k)) & 0xff));
}

}  // namespace qvet
