#include "cli/encode.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "core/expr.h"
#include "core/input_error.h"
#include "devices/streams.h"
#include "model/profile.h"

namespace qvet {

namespace {

// Where the encoder puts things: buffers from 4 GiB, then signals, kernels and regions each from
// its own 4 GiB boundary past everything before (32, 36 and 40 GiB while the buffers fit below
// 32 GiB), so that nothing reaches anything else.
constexpr uint64_t kBufferBase = 0x100000000ull, kSignalBase = 0x800000000ull, kSpan = 0x100000000ull;

uint64_t align_up(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

class Space : public EncodeSpace {
 public:
  // Throws InputError when the program's buffers do not fit below the top of the address space.
  explicit Space(const Program& p) : p_(p) {
    using u128 = unsigned __int128;  // (a size near 2^64 rounded up in 64 bits wraps to 0)
    u128 end = kBufferBase;
    for (const Buffer& b : p.buffers) {
      if (!b.size.is_constant() || b.is_view()) continue;
      end += (u128(std::max<uint64_t>(uint64_t(b.size.constant), 1)) + 0xffff) / 0x10000 * 0x10000;
      if (end > u128(UINT64_MAX - 4 * kSpan))
        throw InputError{b.loc, "the program's buffers, up to '" + b.name + "', take more address space than encode can lay out below 2^64"};
    }
    signal_base_ = std::max<uint64_t>(kSignalBase, align_up(uint64_t(end), kSpan));
    next_kernel_ = kernel_base_ = signal_base_ + kSpan;
    next_region_ = region_base_ = kernel_base_ + kSpan;
  }

  uint64_t buffer_addr(uint32_t base) override {
    auto [it, fresh] = buffers_.try_emplace(base, 0);
    if (fresh) {
      it->second = next_buffer_;
      next_buffer_ = align_up(next_buffer_ + std::max<uint64_t>(uint64_t(p_.buffers[base].size.constant), 1), 0x10000);
    }
    return it->second;
  }
  uint64_t signal_addr(uint32_t s) override {
    auto [it, fresh] = signals_.try_emplace(s, signal_base_ + 16 * signals_.size());
    return it->second;
  }
  uint64_t kernel_addr(const std::string& name, const std::vector<StreamBinding::KernelArg>& args, uint64_t align) override {
    for (auto& k : kernels_)
      if (k.name == name && k.args == args && k.addr % std::max<uint64_t>(align, 1) == 0) return k.addr;
    // One binding per name and argument list: the first keeps the name, later ones get NAME_2, ...
    // (never a name the program or another binding uses).
    std::string bound = name;
    for (int n = 2; bound_.count(bound) || (bound != name && reserved_.count(bound)); ++n) bound = name + "_" + std::to_string(n);
    bound_.insert(bound);
    next_kernel_ = align_up(next_kernel_, std::max<uint64_t>(align, 256));
    kernels_.push_back({name, bound, args, next_kernel_});
    next_kernel_ += 0x1000;
    return kernels_.back().addr;
  }
  uint64_t add_region(std::string bytes, std::string_view, uint64_t align) override {
    uint64_t a = align_up(next_region_, std::max<uint64_t>(align, 8));
    next_region_ = a + std::max<size_t>(bytes.size(), 1);
    regions_.emplace(a, std::move(bytes));
    return a;
  }
  std::string& region(uint64_t addr) override { return regions_.at(addr); }

  // The program's kernel names: a NAME_2 never takes one of them.
  void reserve_name(const std::string& n) { reserved_.insert(n); }

  struct Kernel {
    std::string name, bound;
    std::vector<StreamBinding::KernelArg> args;
    uint64_t addr;
  };
  const Program& p_;
  std::map<uint32_t, uint64_t> buffers_, signals_;
  std::vector<Kernel> kernels_;
  std::set<std::string> bound_, reserved_;
  std::map<uint64_t, std::string> regions_;  // node-based: region() references stay valid
  uint64_t signal_base_ = 0, kernel_base_ = 0, region_base_ = 0;
  uint64_t next_buffer_ = kBufferBase, next_kernel_ = 0, next_region_ = 0;

  // All regions as one file's bytes, from region_base_ (gaps zero).
  std::string memory() const {
    std::string m;
    for (auto& [a, b] : regions_) {
      m.resize(a - region_base_, '\0');
      m += b;
    }
    return m;
  }
};

struct Batch {
  const Stmt* stmt = nullptr;
  const StreamFormat* format = nullptr;
  EncodeQueue queue;
  std::vector<ConcreteCommand> cmds;
  std::string file, bytes;
};

Ordering effective_ordering(const Program& p, uint32_t q) {
  switch (queue_mode(p, q)) {
    case Mode::Serial: return Ordering::Serial;
    case Mode::Overlap: return Ordering::Overlap;
    case Mode::Chained: return Ordering::Chained;
  }
  return Ordering::Serial;
}

// The batch's commands with every value and range concrete, or a reason why not.
bool concrete(const Program& p, const Stmt& s, std::vector<ConcreteCommand>& out, std::string& why) {
  auto range = [&](const Range& r, ConcreteRange& c) {
    const Buffer& b = p.buffers[r.buffer];
    const Buffer& base = p.buffers[r.base];
    if (!r.lo.is_constant() || !r.hi.is_constant() || !b.base_lo.is_constant() || !base.size.is_constant()) {
      why = "the range " + std::string(p.buffers[r.buffer].name) + " depends on a variable";
      return false;
    }
    c.base = r.base;
    c.lo = uint64_t(b.base_lo.constant + r.lo.constant);
    c.hi = uint64_t(b.base_lo.constant + r.hi.constant);
    if (c.lo >= uint64_t(base.size.constant)) {
      why = "the range of " + std::string(p.buffers[r.buffer].name) + " starts at its base buffer's end, where no pointer into it lies";
      return false;
    }
    return true;
  };
  for (const Command& c : s.cmds) {
    ConcreteCommand k;
    k.op = c.op;
    k.loc = c.loc;
    k.signal = c.signal;
    if (c.op == CmdOp::Wait || c.op == CmdOp::Signal) {
      if (!c.value.is_constant()) return why = "line " + std::to_string(c.loc.line) + ": its value depends on a variable", false;
      if (c.value.constant < 0 || c.value.constant > kU64Max)
        return why = "line " + std::to_string(c.loc.line) + ": its value is no 64-bit word", false;
      k.value = uint64_t(c.value.constant);
    }
    if (c.op == CmdOp::Exec) k.kernel = p.kernels[c.kernel];
    for (auto [from, to] : {std::pair{&c.reads, &k.reads}, std::pair{&c.writes, &k.writes}})
      for (const Range& r : *from) {
        to->emplace_back();
        if (!range(r, to->back())) return why = "line " + std::to_string(c.loc.line) + ": " + why, false;
      }
    out.push_back(std::move(k));
  }
  return true;
}

std::string place_text(const std::string& file, uint32_t line) { return file + ":" + std::to_string(line); }

// The line a decoder gives back for `c` (the decoders' shared spelling: `a[0x10:0x20]` for ranges,
// reads before writes, the kernel under its bound name), to check each stream before it is written.
std::string expected_text(const Program& p, const ConcreteCommand& c, const Space& space) {
  auto range = [&](const ConcreteRange& r) { return p.buffers[r.base].name + "[" + format_hex(r.lo) + ":" + format_hex(r.hi) + "]"; };
  auto list = [&](const std::vector<ConcreteRange>& rs) {
    std::string s;
    for (auto& r : rs) s += (s.empty() ? "" : ", ") + range(r);
    return s;
  };
  switch (c.op) {
    case CmdOp::Wait: return "wait " + p.signals[c.signal].name + " >= " + std::to_string(c.value);
    case CmdOp::Signal: return "signal " + p.signals[c.signal].name + " = " + std::to_string(c.value);
    case CmdOp::Timestamp: return "timestamp " + p.signals[c.signal].name;
    case CmdOp::Copy: return "copy " + range(c.reads[0]) + " -> " + range(c.writes[0]);
    case CmdOp::Exec: {
      std::vector<StreamBinding::KernelArg> args;
      for (auto& r : c.reads) args.push_back({StreamBinding::Arg::Reads, r.hi - r.lo});
      for (auto& r : c.writes) args.push_back({StreamBinding::Arg::Writes, r.hi - r.lo});
      std::string name = "?";
      for (auto& k : space.kernels_)
        if (k.name == c.kernel && k.args == args) name = k.bound;
      return "exec " + name + (c.reads.empty() ? "" : " reads " + list(c.reads)) + (c.writes.empty() ? "" : " writes " + list(c.writes));
    }
    default: return cmd_op_name(c.op);
  }
}

}  // namespace

EncodeOutput encode_program(const Program& p, const SourceSet& src, const EncodeOptions& opt) {
  // The text the Program was parsed from (JSON input is refused by the caller: its `source` need not match it).
  const std::string& text = src.text(p.file);
  for (auto& f : opt.formats)
    if (!find_stream_format(f)) throw InputError{{p.file, 0, 0}, "unknown stream format '" + f + "'"};

  // The binding is encode's to write: a second one would name the same things twice.
  if (p.binding.line)
    throw InputError{p.binding, "this program already binds bytes to names (`at`, `kernel`, `region`), and encode writes that binding "
                                "itself: encode the program without it (docs/encoded.md)"};
  EncodeOutput out;
  Space space(p);
  for (auto& k : p.kernels) space.reserve_name(k);
  std::vector<Batch> batches;
  std::map<std::string, int> per_queue;  // stream files per queue, for their names

  std::function<void(const std::vector<Stmt>&)> collect = [&](const std::vector<Stmt>& ss) {
    for (const Stmt& s : ss) {
      if (s.kind == StmtKind::Repeat) collect(s.body);
      if (s.kind == StmtKind::SubmitList) {
        out.notes.push_back("line " + std::to_string(s.loc.line) + ": kept as text: a command-list submit is not encoded");
        ++out.kept;
      }
      if (s.kind != StmtKind::Submit) continue;
      for (const Command& c : s.cmds)
        if (c.loc.file != p.file)
          throw InputError{s.loc, "encode reads programs whose batches are .hcq text, and this one submits a stream (qvet decode prints it as text)"};
      const Queue& q = p.queues[s.id];
      Batch b;
      b.stmt = &s;
      b.format = stream_format_for(p.devices[q.device].arch, q.engine);
      for (auto& f : opt.formats)  // --format names the format to use where several serve the queue
        if (const StreamFormat* named = find_stream_format(f); named->serves(p.devices[q.device].arch, q.engine)) {
          b.format = named;
          break;
        }
      auto keep = [&](const std::string& why) {
        out.notes.push_back("line " + std::to_string(s.loc.line) + ": kept as text: " + why);
        ++out.kept;
      };
      if (!b.format) {
        keep("no stream format serves " + std::string(arch_name(p.devices[q.device].arch)) + " " + engine_name(q.engine) + " queues");
        continue;
      }
      if (!opt.formats.empty() && std::find(opt.formats.begin(), opt.formats.end(), b.format->name) == opt.formats.end()) {
        keep(std::string(b.format->name) + " is not among --format");
        continue;
      }
      std::string why;
      if (!concrete(p, s, b.cmds, why)) {
        keep(why);
        continue;
      }
      b.queue = {p.devices[q.device].arch, q.engine, effective_ordering(p, s.id)};
      try {
        b.bytes = b.format->encode(b.cmds, b.queue, space);
      } catch (const CannotEncode& e) {
        keep("line " + std::to_string(e.loc.line) + ": " + e.why);
        continue;
      }
      std::string ext = b.format->name;
      ext = ext.substr(ext.find('-') == std::string::npos ? 0 : ext.find('-') + 1);
      b.file = opt.stem + "_" + q.name + "_" + std::to_string(++per_queue[q.name]) + "." + ext;
      ++out.encoded;
      batches.push_back(std::move(b));
    }
  };
  collect(p.stmts);

  // The binding the encoded program declares, and each stream decoded with it: the Loc of every
  // command's packet, and the check that the decoder gives the batch back.
  std::string mem_file = opt.stem + ".mem";
  StreamBinding binding;
  for (auto& [base, addr] : space.buffers_)
    binding.buffers.push_back({addr, uint64_t(p.buffers[base].size.constant), p.buffers[base].name, {}});
  for (auto& [s, addr] : space.signals_) binding.signals.push_back({addr, 16, p.signals[s].name, {}});
  for (auto& k : space.kernels_) binding.kernels.push_back({k.addr, k.bound, k.args, {}});
  std::string memory = space.memory();
  if (!memory.empty()) binding.regions.push_back({space.region_base_, "mem", memory, 1, {}});
  std::vector<std::string> file_names = {"", mem_file};  // Loc.file: 1 the region, 2 + i batch i
  std::map<std::pair<uint32_t, uint32_t>, std::pair<std::string, uint32_t>> cmd_place;  // (file, line) -> (FILE, DWORD)
  for (size_t i = 0; i < batches.size(); ++i) {
    Batch& b = batches[i];
    file_names.push_back(b.file);
    StreamOptions so;
    so.queue_overlap = b.queue.ordering == Ordering::Overlap;
    so.engine = b.queue.engine;
    StreamResult r;
    try {
      r = b.format->decode(binding, b.bytes, uint32_t(2 + i), so);
    } catch (const InputError& e) {  // the encoder wrote what its decoder cannot read: our bug, not the input's
      throw std::logic_error("the " + std::string(b.format->name) + " encoding of the batch at line " + std::to_string(b.stmt->loc.line) +
                             " does not decode: dword " + std::to_string(e.loc.line) + ": " + e.message);
    }
    if (r.cmds.size() != b.cmds.size() || (r.overlap && !so.queue_overlap))
      throw std::logic_error("the " + std::string(b.format->name) + " encoding of the batch at line " + std::to_string(b.stmt->loc.line) +
                             " decodes to " + std::to_string(r.cmds.size()) + " command(s), not " + std::to_string(b.cmds.size()));
    for (size_t k = 0; k < r.cmds.size(); ++k) {
      std::string want = expected_text(p, b.cmds[k], space);
      if (r.cmds[k].text != want)
        throw std::logic_error("the " + std::string(b.format->name) + " encoding of line " + std::to_string(b.cmds[k].loc.line) +
                               " decodes to '" + r.cmds[k].text + "', not '" + want + "'");
      cmd_place[{p.file, b.cmds[k].loc.line}] = {file_names[r.cmds[k].loc.file], r.cmds[k].loc.line};
    }
  }

  // ---- the program's text, rewritten ----
  std::vector<std::string> lines;
  for (size_t b = 0; b <= text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    lines.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  if (!text.empty() && text.back() == '\n') lines.pop_back();
  bool crlf = !lines.empty() && !lines[0].empty() && lines[0].back() == '\r';
  auto strip_cr = [](std::string l) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    return l;
  };
  // A suffix goes before a line's comment ('#' starts one; declaration lines hold no strings).
  auto add_suffix = [&](uint32_t line, const std::string& suffix) {
    std::string l = strip_cr(lines[line - 1]);
    size_t hash = l.find('#');
    std::string head = l.substr(0, hash), tail = hash == std::string::npos ? "" : l.substr(hash);
    while (!head.empty() && (head.back() == ' ' || head.back() == '\t')) head.pop_back();
    lines[line - 1] = head + suffix + (tail.empty() ? "" : "  " + tail) + (crlf ? "\r" : "");
  };
  for (const Stmt& s : p.stmts) {
    if (s.kind == StmtKind::Buffer && space.buffers_.count(s.id)) add_suffix(s.loc.line, " at " + format_hex(space.buffers_[s.id]));
    if (s.kind == StmtKind::SignalDecl && space.signals_.count(s.id)) add_suffix(s.loc.line, " at " + format_hex(space.signals_[s.id]));
  }
  // Each encoded batch's lines, `submit` to `}`, become one line.
  std::map<uint32_t, std::pair<uint32_t, std::string>> replaced;  // first line -> (last line, new text)
  std::set<uint32_t> expect_lines;
  for (const Expectation& e : p.expects) expect_lines.insert(e.loc.line);
  for (const Batch& b : batches) {
    uint32_t first = b.stmt->loc.line, last = first;
    for (const Command& c : b.stmt->cmds) last = std::max(last, c.loc.line);
    while (last < lines.size()) {
      std::string l = strip_cr(lines[last - 1 + 1]);
      l = l.substr(0, l.find('#'));
      l.erase(0, l.find_first_not_of(" \t"));
      while (!l.empty() && (l.back() == ' ' || l.back() == '\t')) l.pop_back();
      ++last;
      if (l == "}") break;
    }
    std::string indent = lines[first - 1].substr(0, lines[first - 1].find_first_not_of(" \t"));
    replaced[first] = {last, indent + "submit " + p.queues[b.stmt->id].name + " stream " + b.format->name + " \"" + b.file + "\""};
  }
  // The binding's statements go before the first host statement (top level, before any use).
  std::vector<std::string> binding_lines;
  for (auto& k : space.kernels_) {
    std::string args;
    for (auto& a : k.args) {
      args += args.empty() ? "" : ", ";
      if (a.role == StreamBinding::Arg::Value) {
        args += "-";
        continue;
      }
      args += a.role == StreamBinding::Arg::Reads ? "reads" : "writes";
      if (a.extent != StreamBinding::KernelArg::kToEnd) args += " " + format_hex(a.extent);
    }
    binding_lines.push_back("kernel " + k.bound + " at " + format_hex(k.addr) + " args(" + args + ")");
  }
  if (!memory.empty()) binding_lines.push_back("region mem at " + format_hex(space.region_base_) + " file \"" + mem_file + "\"");
  uint32_t insert_at = uint32_t(lines.size()) + 1;
  for (const Stmt& s : p.stmts)
    if (s.kind >= StmtKind::Submit) {
      insert_at = s.loc.line;
      break;
    }
  if (binding_lines.size()) binding_lines.insert(binding_lines.begin(), "# the binding written by qvet encode (docs/encoded.md)");

  std::vector<std::string> result;
  std::map<uint32_t, uint32_t> new_line;  // old line -> new line
  for (uint32_t l = 1; l <= lines.size();) {
    if (l == insert_at)
      for (auto& b : binding_lines) result.push_back(b + (crlf ? "\r" : ""));
    if (auto it = replaced.find(l); it != replaced.end()) {
      result.push_back(it->second.second + (crlf ? "\r" : ""));
      uint32_t submit_line = uint32_t(result.size());
      for (uint32_t k = l; k <= it->second.first; ++k) {
        new_line[k] = submit_line;
        if (k > l && expect_lines.count(k)) result.push_back(lines[k - 1]), new_line[k] = uint32_t(result.size());
      }
      l = it->second.first + 1;
      continue;
    }
    result.push_back(lines[l - 1]);
    new_line[l] = uint32_t(result.size());
    ++l;
  }
  if (insert_at > lines.size())
    for (auto& b : binding_lines) result.push_back(b + (crlf ? "\r" : ""));

  // `# expect:` places follow what they name.
  std::string hcq = opt.stem + ".hcq";
  std::map<uint32_t, std::vector<const Expectation*>> expects_on;
  for (const Expectation& e : p.expects) expects_on[e.loc.line].push_back(&e);
  auto moved = [&](const std::string& file, uint32_t line) {
    if (!file.empty()) return place_text(file, line);  // already a stream's dword: the program submits none
    if (auto it = cmd_place.find({p.file, line}); it != cmd_place.end()) return place_text(it->second.first, it->second.second);
    auto nl = new_line.find(line);
    return place_text(hcq, nl == new_line.end() ? line : nl->second);
  };
  for (auto& [line, es] : expects_on) {
    std::string items;
    for (const Expectation* e : es) {
      items += items.empty() ? "" : " ";
      if (e->clean) items += "clean";
      else items += e->rule + "@" + moved(e->file1, e->line1) + (e->line2 ? "," + moved(e->file2, e->line2) : "");
    }
    std::string& l = result[new_line[line] - 1];
    size_t at = l.find("expect:");
    l = (at == std::string::npos ? strip_cr(l) + "  # " : l.substr(0, at)) + "expect: " + items + (crlf ? "\r" : "");
  }

  std::string hcq_text;
  for (auto& l : result) hcq_text += l + "\n";
  out.files.push_back({hcq, hcq_text});
  for (const Batch& b : batches) out.files.push_back({b.file, b.bytes});
  if (!memory.empty()) out.files.push_back({mem_file, memory});
  return out;
}

}  // namespace qvet
