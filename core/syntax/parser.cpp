#include "core/syntax/parser.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "core/atomic_file.h"
#include "core/stream.h"
#include "core/syntax/builder.h"
#include "core/syntax/json_io.h"
#include "devices/streams.h"

namespace qvet {

namespace {

// The .hcq grammar: lines to tokens to statements. Every name, expression and static rule goes
// through the ProgramBuilder, which the JSON reader shares.
class Parser {
 public:
  Parser(SourceSet& src, uint32_t file, const StatementSink* sink, const LoadOptions& opt)
      : src_(src), sink_(sink), opt_(opt), file_(file), b_(file) {
    text_ = src.text(file);  // checked line by line as it is read (check_line_text)
  }

  Program run() {
    parse_host_block(nullptr, 0);
    return b_.finish();
  }

 private:
  SourceSet& src_;  // stream and region files are added to it (Locs point into them)
  const StatementSink* sink_;
  const LoadOptions& opt_;
  uint32_t file_;
  ProgramBuilder b_;
  // The binding between bytes and names (docs/encoded.md): read from `at` suffixes and the
  // `kernel` and `region` statements, handed to the stream decoders.
  StreamBinding binding_;
  // Address ranges claimed so far, by start: [start, end) and who (one map for buffers and signals,
  // one for regions), so that a new claim meets only its neighbours.
  struct Claim {
    uint64_t end;
    std::string name;
    uint32_t line;
  };
  std::map<uint64_t, Claim> placed_, regions_;
  std::map<uint64_t, std::string> kernel_at_;
  std::set<std::string> kernel_names_, region_names_;
  std::set<uint32_t> submitted_;  // queues that have been submitted to
  std::string_view text_;
  size_t next_pos_ = 0;    // start of the next line in text_
  uint32_t next_line_ = 0;  // its number - 1
  Loc current_open_;

  // ---- lines and tokens ----------------------------------------------------------------
  // Advances to the next line holding tokens; false at end of input.
  bool next_statement() {
    while (next_pos_ <= text_.size()) {
      uint32_t lineno = ++next_line_;
      size_t e = text_.find('\n', next_pos_);
      if (e == std::string_view::npos) e = text_.size();
      std::string_view line = text_.substr(next_pos_, e - next_pos_);
      next_pos_ = e + 1;
      check_line_text(line, file_, lineno);
      scan_expect(line, lineno);
      lex_line(line, file_, lineno, b_.tokens());
      b_.rewind();
      if (b_.tokens().size() > 1) return true;
    }
    return false;
  }
  const Token& peek(size_t k = 0) const { return b_.peek(k); }
  const Token& take() { return b_.take(); }
  bool at(Tok k) const { return b_.at(k); }
  bool at_word(std::string_view w) const { return b_.at_word(w); }
  [[noreturn]] static void fail(const Loc& loc, std::string msg) { ProgramBuilder::fail(loc, std::move(msg)); }
  bool opens_block() {
    if (!at(Tok::LBrace)) return false;
    take();
    if (!at(Tok::End)) fail(peek().loc, "'{' must end the line that opens a block");
    return true;
  }

  // ---- expectations ---------------------------------------------------------------------
  void scan_expect(std::string_view line, uint32_t lineno) {
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') return;
    size_t j = line.find_first_not_of(" \t", i + 1);
    if (j == std::string_view::npos || line.substr(j, 7) != "expect:") return;
    size_t k = j + 7;
    bool any = false;
    while (true) {
      k = line.find_first_not_of(" \t\r", k);
      if (k == std::string_view::npos || line[k] == '#') break;
      size_t e = line.find_first_of(" \t\r#", k);
      if (e == std::string_view::npos) e = line.size();
      b_.add_expectation(parse_expectation(line.substr(k, e - k), {file_, lineno, uint32_t(k + 1)}));
      any = true;
      k = e;
    }
    if (!any) fail({file_, lineno, uint32_t(j + 1)}, "'# expect:' names no verdict (use 'clean' or RULE@LINE)");
  }

  // ---- device commands ------------------------------------------------------------------
  // Parses command lines up to the closing '}' of a block opened at `open`.
  void parse_command_block(std::vector<Command>& out, const Loc& open) {
    out.reserve(16);
    while (true) {
      if (!next_statement()) fail(open, "block opened here is never closed");
      if (at(Tok::RBrace)) {
        take();
        if (!at(Tok::End)) fail(peek().loc, "'}' must stand on its own line");
        return;
      }
      out.push_back(parse_command());
    }
  }
  Command parse_command() {
    Command c;
    const Token& kw = take();
    c.loc = kw.loc;
    if (kw.kind != Tok::Ident) fail(kw.loc, "expected a device command, found '" + std::string(kw.text) + "'");
    std::string_view w = kw.text;
    bool common = w == "exec" || w == "wait" || w == "copy" || (w == "signal" && peek(1).text != "on");
    if (!common && (w == "device" || w == "peer" || w == "map" || w == "buffer" || w == "queue" || w == "param" ||
                    w == "commands" || w == "signal"))
      fail(kw.loc, "declarations belong at top level, not inside blocks");
    if (!common && (w == "submit" || w == "repeat" || w == "read" || w == "write" || w == "free" || w == "alloc"))
      fail(kw.loc, "'" + std::string(w) + "' is a host statement and cannot appear inside a command block");
    if (w == "wait") {
      c.op = CmdOp::Wait;
      c.signal = b_.signal(take());
      b_.expect(Tok::Ge, "'>='");
      c.value = b_.expr();
    } else if (w == "signal") {
      c.op = CmdOp::Signal;
      c.signal = b_.signal(take());
      b_.expect(Tok::Assign, "'='");
      c.value = b_.expr();
    } else if (w == "timestamp") {
      c.op = CmdOp::Timestamp;
      c.signal = b_.signal(take());
    } else if (w == "exec") {
      c.op = CmdOp::Exec;
      b_.set_kernel(c, take());
      bool seen_reads = false, seen_writes = false;
      while (at_word("reads") || at_word("writes")) {
        bool reads = peek().text == "reads";
        Loc l = take().loc;
        bool& seen = reads ? seen_reads : seen_writes;
        if (seen) fail(l, std::string("'") + (reads ? "reads" : "writes") + "' appears twice");
        seen = true;
        auto& list = reads ? c.reads : c.writes;
        list.push_back(b_.range());
        while (at(Tok::Comma)) take(), list.push_back(b_.range());
      }
    } else if (w == "copy") {
      c.op = CmdOp::Copy;
      c.reads.push_back(b_.range());
      b_.expect(Tok::Arrow, "'->'");
      c.writes.push_back(b_.range());
      b_.check_copy(c, "");
    } else if (w == "barrier") {
      c.op = CmdOp::Barrier;
    } else if (w == "memory_barrier") {
      c.op = CmdOp::MemoryBarrier;
    } else {
      fail(kw.loc, "unknown device command '" + std::string(w) + "'");
    }
    b_.expect_end();
    return c;
  }

  // ---- host statements and declarations -------------------------------------------------
  // Parses statements until the '}' closing a block opened at `open` (or end of input at top level).
  void parse_host_block(std::vector<Stmt>* out, int depth) {
    Loc open = depth ? current_open_ : Loc{};
    while (true) {
      if (!next_statement()) {
        if (depth) fail(open, "block opened here is never closed");
        return;
      }
      if (at(Tok::RBrace)) {
        Loc l = take().loc;
        if (!at(Tok::End)) fail(peek().loc, "'}' must stand on its own line");
        if (!depth) fail(l, "stray '}' closes no block");
        return;
      }
      if (parse_binding(depth)) continue;
      Stmt s = parse_statement(depth);
      if (out) out->push_back(std::move(s));
      else if (!sink_ || !(*sink_)(b_.program(), s)) b_.program().stmts.push_back(std::move(s));
    }
  }

  Stmt parse_statement(int depth) {
    const Token& kw = peek();
    if (kw.kind != Tok::Ident) fail(kw.loc, "expected a statement, found '" + std::string(kw.text) + "'");
    std::string w(kw.text);
    Stmt s;
    s.loc = kw.loc;
    bool sig_decl = w == "signal" && peek(2).kind == Tok::Ident && peek(2).text == "on";
    bool decl = w == "device" || w == "peer" || w == "map" || w == "buffer" || w == "queue" || w == "param" ||
                w == "commands" || sig_decl;
    if (decl && depth) fail(kw.loc, "declarations belong at top level, not inside blocks");
    take();
    // Declarations, then host statements, each parsed by its own function below.
    if (w == "device") parse_device(s);
    else if (w == "peer") {
      const Token& a = take();
      b_.add_peer(s, a, take());
    } else if (w == "map") {
      ObjectRef o = b_.memory(take(), "map");
      b_.expect_word("into");
      b_.add_map(s, o, b_.device(take()));
    } else if (w == "buffer") parse_buffer(s);
    else if (sig_decl) parse_signal_decl(s);
    else if (w == "queue") parse_queue(s);
    else if (w == "param") parse_param(s);
    else if (w == "commands") parse_command_list(s);
    else if (w == "submit") parse_submit(s);
    else if (w == "wait") {
      s.kind = StmtKind::Wait;
      s.id = b_.signal(take());
      b_.expect(Tok::Ge, "'>='");
      s.value = b_.expr();
    } else if (w == "signal") {
      s.kind = StmtKind::Signal;
      s.id = b_.signal(take());
      if (at_word("on")) fail(peek().loc, "signal declarations belong at top level");
      b_.expect(Tok::Assign, "'='");
      s.value = b_.expr();
    } else if (w == "read" || w == "write") {
      s.kind = w == "read" ? StmtKind::Read : StmtKind::Write;
      s.range = b_.range();
    } else if (w == "free" || w == "alloc") {
      s.kind = w == "free" ? StmtKind::Free : StmtKind::Alloc;
      s.object = b_.memory(take(), w.c_str());
    } else if (w == "repeat") {
      parse_repeat(s, depth);
      return s;
    } else if (w == "exec" || w == "copy" || w == "barrier" || w == "memory_barrier" || w == "timestamp") {
      fail(kw.loc, "'" + w + "' is a device command: put it inside 'submit QUEUE { ... }'");
    } else if (w == "into" || w == "on") {
      fail(kw.loc, "unexpected '" + w + "'");
    } else {
      fail(kw.loc, "unknown statement '" + w + "'");
    }
    if (s.kind != StmtKind::Submit && s.kind != StmtKind::CommandList) b_.expect_end();
    return s;
  }

  void parse_device(Stmt& s) {
    std::string n = b_.declare_name(take());
    b_.add_device(s, n, b_.arch(take()));
  }

  void parse_buffer(Stmt& s) {
    std::string n = b_.declare_name(take());
    if (at(Tok::Assign)) {
      take();
      b_.add_view(s, n, b_.range());
      return;
    }
    b_.expect_word("on");
    uint32_t owner = b_.owner();
    Loc sl = peek().loc;
    b_.add_base_buffer(s, n, owner, b_.expr(), sl);
    if (at_word("at")) {
      const Expr& size = b_.program().buffers[s.id].size;
      if (!size.is_constant()) fail(sl, "a buffer with an address ('at') needs a constant size");
      place(binding_.buffers, n, uint64_t(size.constant));
    }
  }

  void parse_signal_decl(Stmt& s) {
    std::string n = b_.declare_name(take());
    b_.expect_word("on");
    uint32_t owner = b_.owner();
    std::optional<std::pair<Expr, Loc>> init;
    if (at(Tok::Assign)) {
      take();
      Loc il = peek().loc;
      init = {b_.expr(), il};
    }
    b_.add_signal(s, n, owner, std::move(init));
    if (at_word("at")) place(binding_.signals, n, 16);  // the value word and the timestamp slot
  }

  void parse_queue(Stmt& s) {
    std::string n = b_.declare_name(take());
    b_.expect_word("on");
    uint32_t dev = b_.device(take());
    EngineKind e = b_.engine(take());
    Ordering o = Ordering::Default;
    if (at_word("ordering")) {
      take();
      o = b_.ordering(take());
    }
    b_.add_queue(s, n, dev, e, o);
  }

  void parse_param(Stmt& s) {
    std::string n = b_.declare_name(take());
    std::vector<Constraint> cs;
    do {
      if (!cs.empty()) b_.expect(Tok::Comma, "','");
      cs.push_back(b_.constraint());
    } while (!at(Tok::End));
    b_.add_param(s, n, std::move(cs));
  }

  void parse_command_list(Stmt& s) {
    b_.begin_list(s, b_.declare_name(take()));
    b_.expect(Tok::LParen, "'('");
    for (bool first = true; !at(Tok::RParen); first = false) {
      if (!first) b_.expect(Tok::Comma, "','");
      b_.add_list_param(take());
    }
    take();
    if (!opens_block()) b_.fail_expected("'{'");
    std::vector<Command> body;
    parse_command_block(body, s.loc);
    b_.end_list(s, std::move(body));
  }

  void parse_submit(Stmt& s) {
    uint32_t q = b_.queue(take());
    bool earlier = !submitted_.insert(q).second;
    if (at_word("stream") && peek(1).kind == Tok::Ident) return parse_stream_submit(s, q, earlier);
    if (at(Tok::LBrace)) {
      s.kind = StmtKind::Submit;
      s.id = q;
      opens_block();
      parse_command_block(s.cmds, s.loc);
      return;
    }
    b_.begin_submit_list(s, q, b_.list(take()));
    b_.expect(Tok::LParen, "'('");
    while (!at(Tok::RParen)) {
      if (!s.args.empty()) b_.expect(Tok::Comma, "','");
      uint32_t v = b_.argument(s, take());
      b_.expect(Tok::Assign, "'='");
      s.args.push_back({v, b_.expr()});
    }
    const Token& rp = take();
    b_.end_submit_list(s, rp.loc);
    b_.expect_end();
  }

  // ---- the binding between bytes and names (docs/encoded.md) -------------------------------
  // `at ADDR` after a buffer or signal declaration: the thing occupies [ADDR, ADDR + size).
  void place(std::vector<StreamBinding::Placed>& table, const std::string& name, uint64_t size) {
    Loc l = take().loc;
    note_binding(l);
    uint64_t addr = address();
    claim(placed_, addr, size, name, l);
    table.push_back({addr, size, name, l});
  }
  void note_binding(const Loc& l) {
    if (!b_.program().binding.line) b_.program().binding = l;
  }
  // [addr, addr + size) for `name`, unless it passes 2^64 or overlaps an earlier claim in `m`.
  void claim(std::map<uint64_t, Claim>& m, uint64_t addr, uint64_t size, const std::string& name, const Loc& l) {
    if (size > UINT64_MAX - addr) fail(l, "'" + name + "' at " + format_hex(addr) + " would end past 2^64");
    // An empty range claims nothing: kept, it would take its address's key, and a later claim
    // there (and every overlap with that one) would go unchecked.
    if (size == 0) return;
    auto next = m.lower_bound(addr);
    for (auto it : {next, next == m.begin() ? m.end() : std::prev(next)})
      if (it != m.end() && addr < it->second.end && it->first < addr + size)
        fail(l, "the addresses [" + format_hex(addr) + ", " + format_hex(addr + size) + ") of '" + name + "' overlap those of '" + it->second.name +
                    "' (line " + std::to_string(it->second.line) + ")");
    m.emplace(addr, Claim{addr + size, name, l.line});
  }
  uint64_t address() { return word("an address", 0); }
  // A constant that must be a 64-bit word of at least `min` (an address, an argument's size).
  uint64_t word(const char* what, i128 min) {
    Loc l = peek().loc;
    i128 v = b_.constant_expr(what).constant;
    if (v < min || v > kU64Max) fail(l, std::string(what) + " must lie in [" + i128_to_string(min) + ", 2^64)");
    return uint64_t(v);
  }

  // `kernel NAME at ADDR args(ROLE, ...)` and `region NAME at ADDR file "FILE"`: contextual words,
  // recognized only where a statement begins and `at` follows the name (never reserved).
  bool parse_binding(int depth) {
    if (!at(Tok::Ident) || (peek().text != "kernel" && peek().text != "region") || peek(1).kind != Tok::Ident ||
        peek(2).kind != Tok::Ident || peek(2).text != "at")
      return false;
    if (depth) fail(peek().loc, "declarations belong at top level, not inside blocks");
    bool kernel = take().text == "kernel";
    const Token& nt = take();
    std::string name(nt.text);
    if (is_keyword(name)) fail(nt.loc, "'" + name + "' is a reserved keyword and cannot name anything");
    note_binding(take().loc);  // at
    Loc al = peek().loc;
    uint64_t addr = address();
    if (kernel) {
      // NVIDIA program sections are 128-byte aligned (PM4's COMPUTE_PGM_LO/HI reach multiples of 256).
      if (addr % 128) fail(al, "a kernel's code address is a multiple of 128");
      if (!kernel_names_.insert(name).second) fail(nt.loc, "kernel '" + name + "' is already bound");
      if (!kernel_at_.emplace(addr, name).second) fail(al, "kernel '" + kernel_at_[addr] + "' is already at " + format_hex(addr));
      StreamBinding::Kernel k{addr, name, {}, nt.loc};
      b_.expect_word("args");
      b_.expect(Tok::LParen, "'('");
      while (!at(Tok::RParen)) {
        if (!k.args.empty()) b_.expect(Tok::Comma, "','");
        if (at(Tok::Minus)) {
          take(), k.args.push_back({StreamBinding::Arg::Value});
          continue;
        }
        if (at_word("reads")) take(), k.args.push_back({StreamBinding::Arg::Reads});
        else if (at_word("writes")) take(), k.args.push_back({StreamBinding::Arg::Writes});
        else b_.fail_expected("an argument role ('reads', 'writes' or '-')");
        // `reads SIZE`: the bytes the kernel accesses from the pointer (else to the buffer's end).
        if (!at(Tok::Comma) && !at(Tok::RParen)) k.args.back().extent = word("an argument's size", 1);
      }
      take();
      b_.expect_end();
      binding_.kernels.push_back(std::move(k));
      return true;
    }
    b_.expect_word("file");
    const Token& ft = b_.expect(Tok::Str, "a file name in quotes");
    Loc fl = ft.loc;
    std::string file(ft.text);
    b_.expect_end();
    if (!region_names_.insert(name).second) fail(nt.loc, "region '" + name + "' is already declared");
    StreamBinding::Region r{addr, name, "", 0, nt.loc};
    r.file = read_bound_file(file, fl, r.bytes);
    claim(regions_, addr, r.bytes.size(), name, al);
    binding_.regions.push_back(std::move(r));
    return true;
  }

  // A stream or region file: named relative to this file's directory, never absolute, never
  // through '..', not a symbolic link; a regular file of at most kMaxBoundFile bytes. Returns
  // its SourceSet index.
  static constexpr size_t kMaxBoundFile = size_t(16) << 20, kMaxBoundTotal = size_t(256) << 20;
  size_t bound_bytes_ = 0;  // read so far, streams and regions together
  uint64_t decoded_events_ = 0;  // commands and byte ranges the program's streams made so far (kMaxDecodedEvents)
  uint32_t read_bound_file(const std::string& name, const Loc& at, std::string& bytes) {
    namespace fs = std::filesystem;
    fs::path rel(name);
    if (name.empty() || rel.is_absolute() || name[0] == '/')
      fail(at, "file '" + name + "' must be named relative to the program's directory");
    for (auto& part : rel)
      if (part == "..") fail(at, "file '" + name + "' must not leave the program's directory ('..')");
    fs::path dir = fs::path(src_.name(file_)).parent_path();
    if (src_.name(file_) == "<stdin>") dir.clear();
    std::string path = (dir / rel).string();
    // No component may be a symbolic link: `sub/x.bin` with `sub -> /etc` would leave the directory.
    std::vector<std::string> parts;
    for (auto& part : rel)
      if (part != ".") parts.push_back(part.string());
    std::string link;
    if (!read_regular_file_beneath(dir.string(), parts, kMaxBoundFile, bytes, link)) {
      if (!link.empty())
        fail(at, "file '" + path + "': '" + (dir / link).string() + "' is a symbolic link (only regular files under the program's directory are read)");
      fail(at, "cannot read '" + path + "': missing, not a regular file, or larger than 16 MiB");
    }
    if ((bound_bytes_ += bytes.size()) > kMaxBoundTotal)
      throw InputError{at, "the program's stream and region files exceed 256 MiB in all (an implementation limit)", true};
    uint32_t id = src_.add(path, "");  // no text: diagnostics there quote nothing
    b_.program().stream_files[id] = rel.filename().string();
    return id;
  }

  // `submit Q stream FORMAT "FILE"`: the stream decoded into Q's commands, each read through the
  // builder as the line of a `submit` block would be, located at its packet's dword.
  // `earlier`: the queue's batches submitted before this statement in the text.
  void parse_stream_submit(Stmt& s, uint32_t q, bool earlier) {
    take();  // stream
    const Token& f1 = take();
    std::string fmt(f1.text);
    if (at(Tok::Minus)) take(), fmt += "-" + std::string(b_.expect(Tok::Ident, "a stream format").text);
    const StreamFormat* format = find_stream_format(fmt);
    if (!format) {
      std::string known;
      for (const StreamFormat& f : stream_formats()) known += (known.empty() ? "" : ", ") + std::string(f.name);
      fail(f1.loc, "unknown stream format '" + fmt + "' (expected " + known + ")");
    }
    const Token& ft = b_.expect(Tok::Str, "a file name in quotes");
    Loc fl = ft.loc;
    std::string file(ft.text);
    b_.expect_end();
    const Queue& queue = b_.program().queues[q];
    if (!format->serves(b_.program().devices[queue.device].arch, queue.engine)) {
      std::string engines = format->serves(format->arch, EngineKind::Compute) ? "compute" : "";
      if (format->serves(format->arch, EngineKind::Copy)) engines += engines.empty() ? "copy" : " or copy";
      fail(fl, "a " + fmt + " stream goes to a " + engines + " queue of an " + arch_name(format->arch) + " device, and '" + queue.name + "' is not one");
    }
    std::string bytes;
    uint32_t fid = read_bound_file(file, fl, bytes);
    StreamOptions opt;
    opt.max_events = kMaxDecodedEvents - decoded_events_;
    opt.submit = s.loc;
    opt.queue_overlap = queue.ordering == Ordering::Overlap;
    opt.engine = queue.engine;
    for (auto& [f, packet] : opt_.ignored_packets)
      if (f == fmt) opt.ignored.push_back(packet);
    StreamResult r = format->decode(binding_, bytes, fid, opt);
    if (r.overlap && queue.ordering != Ordering::Overlap) {
      const std::string& why = r.overlap_why;
      if (queue.ordering != Ordering::Default)
        fail(r.unflushed, why + ", but queue '" + queue.name + "' is declared 'ordering " + ordering_name(queue.ordering) + "'");
      if (earlier)
        fail(r.unflushed, why + ", but earlier batches of queue '" + queue.name + "' were read as serial: declare it 'ordering overlap'");
      b_.program().queues[q].ordering = Ordering::Overlap;
    }
    // A queue declared serial orders more than an NVIDIA compute stream's launches do. (A stream's
    // first launch chains to nothing, as the model reads every batch: semantics.md v3.)
    const Device& dev = b_.program().devices[queue.device];
    bool nv_compute = dev.arch == Arch::Nv && queue.engine == EngineKind::Compute;
    if (nv_compute && queue.ordering == Ordering::Serial)
      fail(fl, "an " + fmt + " stream's launches run chained or overlapped, not serial, and queue '" + queue.name +
                   "' is declared 'ordering serial'");
    s.kind = StmtKind::Submit;
    s.id = q;
    s.cmds.reserve(r.cmds.size());
    for (const DecodedCommand& c : r.cmds) {
      b_.read_field(c.text, c.loc);
      Command& cmd = s.cmds.emplace_back(parse_command());
      if (c.zero_high) b_.note_zero_high(cmd.signal, c.loc);
      if (!c.fetched.empty()) {
        b_.read_field(c.fetched, c.loc);
        cmd.reads.push_back(b_.range());
        while (at(Tok::Comma)) take(), cmd.reads.push_back(b_.range());
        b_.expect_end();
      }
      decoded_events_ += 1 + cmd.reads.size() + cmd.writes.size();
    }
  }

  void parse_repeat(Stmt& s, int depth) {
    const Token& vt = take();
    Loc var_loc = vt.loc;
    std::string n = b_.declare_name(vt);
    b_.expect_word("in");
    Loc ll = peek().loc;
    Expr lo = b_.expr();
    b_.expect(Tok::DotDot, "'..'");
    Loc hl = peek().loc;
    Expr hi = b_.expr();
    b_.begin_repeat(s, n, var_loc, std::move(lo), ll, std::move(hi), hl, depth);
    if (!opens_block()) b_.fail_expected("'{'");
    Loc saved = current_open_;
    current_open_ = s.loc;
    parse_host_block(&s.body, depth + 1);
    current_open_ = saved;
    b_.end_repeat();
  }
};

}  // namespace

Expectation parse_expectation(std::string_view item, Loc loc) {
  Expectation x;
  x.loc = loc;
  if (item == "clean") {
    x.clean = true;
    return x;
  }
  size_t at = item.find('@');
  if (at == std::string_view::npos)
    throw InputError{loc, "expectation '" + std::string(item) + "' is not 'clean' or RULE@LINE[,LINE]"};
  x.rule = std::string(item.substr(0, at));
  if (!find_rule(x.rule)) throw InputError{loc, "unknown rule '" + x.rule + "' in expectation"};
  auto num = [&](std::string_view s) -> uint32_t {
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw InputError{loc, "expectation line '" + std::string(s) + "' is not a line number"};
    uint32_t v = uint32_t(std::stoul(std::string(s)));
    if (v == 0) throw InputError{loc, "expectation line numbers start at 1"};
    return v;
  };
  // LINE, or FILE:LINE for a dword of a stream file (docs/encoded.md).
  auto place = [&](std::string_view s, std::string& file) -> uint32_t {
    size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) return num(s);
    file = std::string(s.substr(0, colon));
    if (file.empty() || !std::all_of(file.begin(), file.end(), [](char c) {
          return std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
        }))
      throw InputError{loc, "expectation file '" + file + "' is not a file name (letters, digits, '_', '.', '-')"};
    return num(s.substr(colon + 1));
  };
  std::string_view rest = item.substr(at + 1);
  size_t comma = rest.find(',');
  x.line1 = place(rest.substr(0, comma), x.file1);
  if (comma != std::string_view::npos) x.line2 = place(rest.substr(comma + 1), x.file2);
  return x;
}

Program parse_hcq(SourceSet& src, uint32_t file, const StatementSink* sink, const LoadOptions& opt) {
  return Parser(src, file, sink, opt).run();
}

LoadResult load_program_text(SourceSet& src, const std::string& name, std::string text, const StatementSink* sink,
                             const LoadOptions& opt) {
  LoadResult r;
  bool json = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    json = c == '{';
    break;
  }
  uint32_t file = src.add(name, std::move(text));
  try {
    r.program = json ? read_json_program(src, file) : parse_hcq(src, file, sink, opt);
  } catch (const InputError& e) {
    r.error = input_diagnostic(e);
  } catch (const std::bad_alloc&) {
    r.error = input_diagnostic({{file, 0, 0}, "input is too large to read"});
  }
  return r;
}

namespace {

constexpr size_t kMaxInputBytes = size_t(2) << 30;  // an implementation limit (docs/language-notes.md)

// Reads `fd` to its end; false with errno set (EFBIG past `max_bytes`). Where `text_only` (a
// program or a witness is text), reading stops after the first NUL byte: its reader reports it
// at its line, and /dev/zero or a binary file costs one read, not 2 GiB.
bool read_all(int fd, std::string& text, size_t max_bytes, bool text_only = false) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) return errno = EISDIR, false;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) text.reserve(std::min(size_t(st.st_size), max_bytes));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    if (text.size() + size_t(n) > max_bytes) return errno = EFBIG, false;
    if (const void* nul = text_only ? std::memchr(buf, 0, size_t(n)) : nullptr) {
      text.append(buf, size_t(static_cast<const char*>(nul) - buf) + 1);
      return true;
    }
    text.append(buf, size_t(n));
  }
}

}  // namespace

bool read_file(const std::string& path, std::string& text, std::string* error) {
  text.clear();
  int fd = path == "-" ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (error) *error = std::string("cannot open file: ") + std::strerror(errno);
    return false;
  }
  if (fd != 0) note_input_file(fd);
  bool ok = read_all(fd, text, kMaxInputBytes, true);
  int err = errno;
  if (fd != 0) ::close(fd);
  if (!ok && error)
    *error = err == EFBIG ? "cannot read file: larger than 2 GiB (an implementation limit)"
                          : std::string("cannot read file: ") + std::strerror(err);
  return ok;
}

namespace {

// Reads `name` (relative to directory `at`) only when it is a regular file of at most
// `max_bytes`, looked at before it is opened (a FIFO or a device is never opened) and read only
// if the file opened is the one looked at (it may be replaced in between). `nofollow`: a
// symbolic link is not followed (false, with `*was_link` set).
bool read_regular_at(int at, const char* name, size_t max_bytes, bool nofollow, std::string& text, bool* was_link = nullptr) {
  struct stat st {}, opened {};
  if (::fstatat(at, name, &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) != 0) return false;
  if (S_ISLNK(st.st_mode) && was_link) *was_link = true;
  if (!S_ISREG(st.st_mode) || size_t(st.st_size) > max_bytes) return false;
  int fd = ::openat(at, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
  if (fd < 0) return false;
  note_input_file(fd);
  bool ok = ::fstat(fd, &opened) == 0 && opened.st_dev == st.st_dev && opened.st_ino == st.st_ino && read_all(fd, text, max_bytes);
  ::close(fd);
  return ok;
}

}  // namespace

bool read_regular_file(const std::string& path, size_t max_bytes, std::string& text) {
  text.clear();
  return read_regular_at(AT_FDCWD, path.c_str(), max_bytes, false, text);
}

bool read_regular_file_beneath(const std::string& dir, const std::vector<std::string>& parts, size_t max_bytes,
                               std::string& text, std::string& link) {
  text.clear();
  link.clear();
  if (parts.empty()) return false;
  // Each component is opened from the one before it and never followed if it is a link, so a
  // directory replaced by a link while this runs is refused, not walked through.
  int at = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  std::string walked;
  auto is_link = [&](const std::string& part) {
    struct stat st {};
    return ::fstatat(at, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
  };
  for (size_t i = 0; at >= 0 && i + 1 < parts.size(); ++i) {
    walked += (walked.empty() ? "" : "/") + parts[i];
    int next = ::openat(at, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && is_link(parts[i])) link = walked;
    ::close(at);
    at = next;
  }
  if (at < 0) return false;
  walked += (walked.empty() ? "" : "/") + parts.back();
  bool was_link = false;
  bool ok = read_regular_at(at, parts.back().c_str(), max_bytes, true, text, &was_link);
  if (was_link) link = walked;
  ::close(at);
  return ok;
}

LoadResult load_program(SourceSet& src, const std::string& path, const LoadOptions& opt) {
  std::string text, error;
  if (!read_file(path, text, &error)) {
    LoadResult r;
    uint32_t f = src.add(path == "-" ? "<stdin>" : path, "");
    r.error = input_diagnostic({{f, 0, 0}, error});
    return r;
  }
  return load_program_text(src, path == "-" ? "<stdin>" : path, std::move(text), nullptr, opt);
}

}  // namespace qvet
