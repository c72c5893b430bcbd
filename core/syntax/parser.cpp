#include "core/syntax/parser.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <sstream>
#include <unordered_map>

#include "core/syntax/json_io.h"
#include "core/syntax/printer.h"

namespace qvet {

namespace {

const char* const kKeywords[] = {
    "device", "peer", "map", "into", "buffer", "on", "host", "signal", "queue", "compute", "copy",
    "ordering", "serial", "overlap", "chained", "param", "in", "submit", "wait", "read", "write",
    "free", "alloc", "repeat", "commands", "exec", "reads", "writes", "timestamp", "barrier",
    "memory_barrier", "nv", "amd", "strict"};

constexpr int kMaxDepth = 256;  // nested blocks and parentheses: an implementation limit (docs/language-notes.md)

struct NameRef {
  enum Kind { Device, Buffer, Signal, Queue, Var, List } kind;
  uint32_t id;
};

const char* kind_word(NameRef::Kind k) {
  switch (k) {
    case NameRef::Device: return "a device";
    case NameRef::Buffer: return "a buffer";
    case NameRef::Signal: return "a signal";
    case NameRef::Queue: return "a queue";
    case NameRef::Var: return "a parameter";
    case NameRef::List: return "a command list";
  }
  return "a name";
}

class Parser {
 public:
  Parser(const SourceSet& src, uint32_t file, const std::vector<Loc>* map, const StatementSink* sink)
      : map_(map), sink_(sink) {
    p_.file = file;
    file_ = file;
    text_ = src.text(file);  // checked line by line as it is read (check_line_text)
  }

  Program run() {
    parse_host_block(nullptr, 0);
    if (!p_.expects.empty()) {
      bool clean = std::any_of(p_.expects.begin(), p_.expects.end(), [](auto& e) { return e.clean; });
      if (clean && p_.expects.size() > 1)
        for (auto& e : p_.expects)
          if (e.clean) throw InputError{e.loc, "'# expect: clean' must stand alone, but the file has other expectations"};
    }
    return std::move(p_);
  }

 private:
  const std::vector<Loc>* map_;
  const StatementSink* sink_;
  uint32_t file_;
  Program p_;
  std::string_view text_;
  size_t next_pos_ = 0;    // start of the next line in text_
  uint32_t next_line_ = 0;  // its number - 1
  std::vector<Token> toks_;
  size_t ti_ = 0;
  // Looked up by string_view without building a string (one lookup per name on every line).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, NameRef, NameHash, std::equal_to<>> names_;
  std::vector<std::pair<std::string, uint32_t>> scope_;  // loop variables and list parameters
  int paren_depth_ = 0;

  // ---- lines and tokens ----------------------------------------------------------------
  Loc map_loc(Loc l) const {
    if (!map_ || l.line == 0 || l.line > map_->size()) return l;
    return (*map_)[l.line - 1];
  }

  // Advances to the next line holding tokens; false at end of input.
  bool next_statement() {
    while (next_pos_ <= text_.size()) {
      uint32_t lineno = ++next_line_;
      size_t e = text_.find('\n', next_pos_);
      if (e == std::string_view::npos) e = text_.size();
      std::string_view line = text_.substr(next_pos_, e - next_pos_);
      next_pos_ = e + 1;
      check_line_text(line, file_, lineno);
      if (!map_) scan_expect(line, lineno);
      lex_line(line, file_, lineno, toks_);
      for (auto& t : toks_) t.loc = map_loc(t.loc);
      ti_ = 0;
      if (toks_.size() > 1) return true;
    }
    return false;
  }

  const Token& peek(size_t k = 0) const { return toks_[std::min(ti_ + k, toks_.size() - 1)]; }
  const Token& take() {
    const Token& t = toks_[ti_];
    if (ti_ + 1 < toks_.size()) ++ti_;
    return t;
  }
  [[noreturn]] void fail(const Loc& loc, std::string msg) { throw InputError{loc, std::move(msg)}; }
  // The one of `values` whose name (core/ir.cpp) the word is: "an architecture", "an engine", ...
  template <class E>
  E word_of(const Token& t, const char* what, const char* (*name)(E), std::initializer_list<E> values) {
    for (E v : values)
      if (t.kind == Tok::Ident && t.text == name(v)) return v;
    const E* v = values.begin();
    std::string list;  // "a, b or c"
    for (size_t k = 0; k < values.size(); ++k) list += std::string(k == 0 ? "" : k + 1 == values.size() ? " or " : ", ") + name(v[k]);
    if (t.kind != Tok::Ident) fail(t.loc, std::string("expected an ") + what + " (" + list + ")");
    fail(t.loc, std::string("unknown ") + what + " '" + std::string(t.text) + "' (expected " + list + ")");
  }
  [[noreturn]] void fail_expected(const char* what) {
    const Token& t = peek();
    std::string got = t.kind == Tok::End ? "end of line" : "'" + std::string(t.text) + "'";
    fail(t.loc, std::string("expected ") + what + ", found " + got);
  }
  bool at(Tok k) const { return peek().kind == k; }
  bool at_word(std::string_view w) const { return peek().kind == Tok::Ident && peek().text == w; }
  const Token& expect(Tok k, const char* what) {
    if (!at(k)) fail_expected(what);
    return take();
  }
  void expect_word(std::string_view w) {
    if (!at_word(w)) fail_expected(("'" + std::string(w) + "'").c_str());
    take();
  }
  void expect_end() {
    if (!at(Tok::End)) {
      if (at(Tok::LBrace)) fail(peek().loc, "'{' must end the line that opens a block");
      fail_expected("end of line");
    }
  }
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
      p_.expects.push_back(parse_expect_item(line.substr(k, e - k), {file_, lineno, uint32_t(k + 1)}));
      any = true;
      k = e;
    }
    if (!any) fail({file_, lineno, uint32_t(j + 1)}, "'# expect:' names no verdict (use 'clean' or RULE@LINE)");
  }

 public:
  static Expectation parse_expect_item(std::string_view item, Loc loc) {
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
    std::string_view rest = item.substr(at + 1);
    size_t comma = rest.find(',');
    x.line1 = num(rest.substr(0, comma));
    if (comma != std::string_view::npos) x.line2 = num(rest.substr(comma + 1));
    return x;
  }

 private:
  // ---- names ----------------------------------------------------------------------------
  std::string declare_name(const Token& t) {
    if (t.kind != Tok::Ident) fail_expected("a name");
    std::string n(t.text);
    if (is_keyword(n)) fail(t.loc, "'" + n + "' is a reserved keyword and cannot name anything");
    if (names_.count(n) || std::any_of(scope_.begin(), scope_.end(), [&](auto& s) { return s.first == n; }))
      fail(t.loc, "'" + n + "' is already declared");
    return n;
  }
  NameRef lookup(const Token& t) {
    if (t.kind != Tok::Ident) fail(t.loc, "expected a name, found '" + std::string(t.text) + "'");
    std::string_view n = t.text;
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->first == n) return {NameRef::Var, it->second};
    auto it = names_.find(n);
    if (it == names_.end()) fail(t.loc, "undeclared name '" + std::string(n) + "'");
    return it->second;
  }
  uint32_t lookup_as(const Token& t, NameRef::Kind kind) {
    NameRef r = lookup(t);
    if (r.kind != kind)
      fail(t.loc, "'" + std::string(t.text) + "' is " + kind_word(r.kind) + ", not " + kind_word(kind));
    return r.id;
  }
  ObjectRef lookup_memory(const Token& t, const char* verb) {
    NameRef r = lookup(t);
    if (r.kind == NameRef::Signal) return {ObjectRef::Signal, r.id};
    if (r.kind != NameRef::Buffer)
      fail(t.loc, "'" + std::string(t.text) + "' is " + kind_word(r.kind) + ", not a buffer or signal");
    if (p_.buffers[r.id].is_view())
      fail(t.loc, std::string(verb) + " applies to base buffers, and '" + std::string(t.text) + "' is a view");
    return {ObjectRef::Buffer, r.id};
  }
  // `host` or a device name.
  uint32_t parse_owner() {
    if (at_word("host")) {
      take();
      return kHostAgent;
    }
    return lookup_as(take(), NameRef::Device);
  }

  // ---- expressions ----------------------------------------------------------------------
  // Every variable's range, indexed by variable id (rebuilt only when variables were added).
  const std::vector<Interval>& ranges() {
    if (ranges_.size() != p_.vars.size()) {
      ranges_.clear();
      for (auto& v : p_.vars) ranges_.push_back(v.range);
    }
    return ranges_;
  }
  std::vector<Interval> ranges_;
  bool uses_list_param(const Expr& e) const {
    for (auto& [v, c] : e.terms)
      if (p_.vars[v].kind == Var::ListParam) return true;
    return false;
  }
  // Every intermediate result stays within kValueLimit, so the arithmetic is exact (core/expr.h).
  Expr within_limit(Expr e, const Loc& loc, const std::string& context = "") {
    if (magnitude(e, ranges()) <= kValueLimit) return e;
    throw InputError{loc, "value too large: the expression can exceed " + format_int(kValueLimit) +
                              " in magnitude, the limit of qvet's exact arithmetic" + context, true};
  }
  Expr parse_expr() {
    Loc loc = peek().loc;
    Expr e;
    bool neg = false;
    if (at(Tok::Minus)) take(), neg = true;
    e = parse_term();
    if (neg) e = e.scaled(-1);
    while (at(Tok::Plus) || at(Tok::Minus)) {
      bool minus = take().kind == Tok::Minus;
      Expr t = parse_term();
      e = within_limit(minus ? e - t : e + t, loc);
    }
    return e;
  }
  Expr parse_term() {
    Loc loc = peek().loc;
    Expr e = parse_factor();
    while (at(Tok::Star)) {
      take();
      Expr f = parse_factor();
      if (!e.is_constant() && !f.is_constant())
        fail(loc, "expression is not affine: it multiplies two variables");
      e = within_limit(e.is_constant() ? f.scaled(e.constant) : e.scaled(f.constant), loc);
    }
    return e;
  }
  Expr parse_factor() {
    const Token& t = peek();
    if (t.kind == Tok::Int) return Expr::of(take().value);
    if (t.kind == Tok::Ident) {
      if (is_keyword(t.text)) fail_expected("an expression");
      return Expr::var(lookup_as(take(), NameRef::Var));
    }
    if (t.kind == Tok::LParen) {
      if (++paren_depth_ > kMaxDepth) fail(t.loc, "expression nested too deeply");
      take();
      Expr e = parse_expr();
      expect(Tok::RParen, "')'");
      --paren_depth_;
      return e;
    }
    fail_expected("an expression");
  }
  std::string show(const Expr& e) const { return to_string(e, p_.var_names()); }
  std::string show_interval(Interval i) const { return i128_to_string(i.lo) + " to " + i128_to_string(i.hi); }
  // A size, offset or bound: must lie in [0, 2^64) for every admissible binding.
  void check_u64(const Expr& e, const Loc& loc, const char* what) {
    if (uses_list_param(e)) return;  // checked where the list is submitted
    Interval b = bounds(e, ranges());
    if (e.is_constant() && (b.lo < 0 || b.hi > kU64Max))
      fail(loc, std::string(what) + " " + i128_to_string(e.constant) + " is outside [0, 2^64)");
    if (b.lo < 0 || b.hi > kU64Max)
      fail(loc, std::string(what) + " '" + show(e) + "' can be outside [0, 2^64) (it ranges from " + show_interval(b) + ")");
  }
  Expr parse_constant_expr(const char* what) {
    Loc loc = peek().loc;
    Expr e = parse_expr();
    if (!e.is_constant()) fail(loc, std::string(what) + " must be a constant");
    check_u64(e, loc, what);
    return e;
  }

  // ---- ranges -----------------------------------------------------------------------------
  Range parse_range() {
    Range r;
    const Token& name = take();
    r.loc = name.loc;
    r.buffer = lookup_as(name, NameRef::Buffer);
    const Buffer& b = p_.buffers[r.buffer];
    if (at(Tok::LBracket)) {
      take();
      r.whole = false;
      Loc lo_loc = peek().loc;
      r.lo = parse_expr();
      expect(Tok::Colon, "':'");
      Loc hi_loc = peek().loc;
      r.hi = parse_expr();
      expect(Tok::RBracket, "']'");
      check_u64(r.lo, lo_loc, "range start");
      check_u64(r.hi, hi_loc, "range end");
    } else {
      r.lo = Expr::of(0);
      r.hi = b.size;
    }
    r.base = b.base;
    check_range(r, "");
    return r;
  }
  // Non-empty and within the buffer for every admissible binding.
  void check_range(const Range& r, const std::string& context) {
    if (uses_list_param(r.lo) || uses_list_param(r.hi)) return;
    const Buffer& b = p_.buffers[r.buffer];
    const auto& rg = ranges();
    bool empty = bounds(r.hi - r.lo, rg).lo < 1;
    bool out = bounds(b.size - r.hi, rg).lo < 0 || bounds(r.lo, rg).lo < 0;
    if (!empty && !out) return;
    auto names = p_.var_names();
    std::string what = "range " + b.name + "[" + format_size(r.lo, names) + ":" + format_size(r.hi, names) + "]";
    bool fixed = r.lo.is_constant() && r.hi.is_constant() && b.size.is_constant();
    std::string is = fixed ? " is " : " can be ";
    if (empty) fail(r.loc, what + is + "empty" + context);
    fail(r.loc, what + is + "out of bounds of '" + b.name + "' (" + format_size(b.size, names) + " bytes)" + context);
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
    bool common = w == "exec" || w == "wait" || w == "copy" || (w == "signal" && peek(2).text != "on");
    if (!common && (w == "device" || w == "peer" || w == "map" || w == "buffer" || w == "queue" || w == "param" ||
                    w == "commands" || w == "signal"))
      fail(kw.loc, "declarations belong at top level, not inside blocks");
    if (!common && (w == "submit" || w == "repeat" || w == "read" || w == "write" || w == "free" || w == "alloc"))
      fail(kw.loc, "'" + std::string(w) + "' is a host statement and cannot appear inside a command block");
    if (w == "wait") {
      c.op = CmdOp::Wait;
      c.signal = lookup_as(take(), NameRef::Signal);
      expect(Tok::Ge, "'>='");
      c.value = parse_expr();
    } else if (w == "signal") {
      c.op = CmdOp::Signal;
      c.signal = lookup_as(take(), NameRef::Signal);
      expect(Tok::Assign, "'='");
      c.value = parse_expr();
    } else if (w == "timestamp") {
      c.op = CmdOp::Timestamp;
      c.signal = lookup_as(take(), NameRef::Signal);
    } else if (w == "exec") {
      c.op = CmdOp::Exec;
      const Token& k = take();
      if (k.kind != Tok::Ident) fail(k.loc, "expected a kernel name after 'exec'");
      if (is_keyword(k.text)) fail(k.loc, "'" + std::string(k.text) + "' is a reserved keyword and cannot name a kernel");
      std::string kn(k.text);
      auto it = std::find(p_.kernels.begin(), p_.kernels.end(), kn);
      c.kernel = uint32_t(it - p_.kernels.begin());
      if (it == p_.kernels.end()) p_.kernels.push_back(kn);
      bool seen_reads = false, seen_writes = false;
      while (at_word("reads") || at_word("writes")) {
        bool reads = peek().text == "reads";
        Loc l = take().loc;
        bool& seen = reads ? seen_reads : seen_writes;
        if (seen) fail(l, std::string("'") + (reads ? "reads" : "writes") + "' appears twice");
        seen = true;
        auto& list = reads ? c.reads : c.writes;
        list.push_back(parse_range());
        while (at(Tok::Comma)) take(), list.push_back(parse_range());
      }
    } else if (w == "copy") {
      c.op = CmdOp::Copy;
      c.reads.push_back(parse_range());
      expect(Tok::Arrow, "'->'");
      c.writes.push_back(parse_range());
      check_copy(c, "");
    } else if (w == "barrier") {
      c.op = CmdOp::Barrier;
    } else if (w == "memory_barrier") {
      c.op = CmdOp::MemoryBarrier;
    } else {
      fail(kw.loc, "unknown device command '" + std::string(w) + "'");
    }
    expect_end();
    return c;
  }
  void check_copy(const Command& c, const std::string& context) {
    const Range &s = c.reads[0], &d = c.writes[0];
    if (uses_list_param(s.lo) || uses_list_param(s.hi) || uses_list_param(d.lo) || uses_list_param(d.hi)) return;
    Interval diff = bounds((s.hi - s.lo) - (d.hi - d.lo), ranges());
    if (diff.lo != 0 || diff.hi != 0)
      fail(c.loc, "copy length mismatch: source has " + show(s.hi - s.lo) + " bytes, destination " + show(d.hi - d.lo) + context);
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
      Stmt s = parse_statement(depth);
      if (out) out->push_back(std::move(s));
      else if (!sink_ || !(*sink_)(p_, s)) p_.stmts.push_back(std::move(s));
    }
  }
  Loc current_open_;

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
    else if (w == "peer") parse_peer(s);
    else if (w == "map") parse_map(s);
    else if (w == "buffer") parse_buffer(s);
    else if (sig_decl) parse_signal_decl(s);
    else if (w == "queue") parse_queue(s);
    else if (w == "param") parse_param(s);
    else if (w == "commands") parse_command_list(s);
    else if (w == "submit") parse_submit(s);
    else if (w == "wait") {
      s.kind = StmtKind::Wait;
      s.id = lookup_as(take(), NameRef::Signal);
      expect(Tok::Ge, "'>='");
      s.value = parse_expr();
    } else if (w == "signal") {
      s.kind = StmtKind::Signal;
      s.id = lookup_as(take(), NameRef::Signal);
      if (at_word("on")) fail(peek().loc, "signal declarations belong at top level");
      expect(Tok::Assign, "'='");
      s.value = parse_expr();
    } else if (w == "read" || w == "write") {
      s.kind = w == "read" ? StmtKind::Read : StmtKind::Write;
      s.range = parse_range();
    } else if (w == "free" || w == "alloc") {
      s.kind = w == "free" ? StmtKind::Free : StmtKind::Alloc;
      s.object = lookup_memory(take(), w.c_str());
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
    if (s.kind != StmtKind::Submit && s.kind != StmtKind::CommandList) expect_end();
    return s;
  }

  void parse_device(Stmt& s) {
    s.kind = StmtKind::Device;
    std::string n = declare_name(take());
    Device d{n, word_of(take(), "architecture", arch_name, {Arch::Nv, Arch::Amd, Arch::Strict}), s.loc};
    s.id = add(n, NameRef::Device, p_.devices, std::move(d));
  }

  void parse_peer(Stmt& s) {
    s.kind = StmtKind::Peer;
    const Token& a = take();
    s.id = lookup_as(a, NameRef::Device);
    s.id2 = lookup_as(take(), NameRef::Device);
    if (s.id == s.id2) fail(a.loc, "a device cannot be its own peer");
    p_.peers.push_back({s.id, s.id2});
  }

  void parse_map(Stmt& s) {
    s.kind = StmtKind::Map;
    s.object = lookup_memory(take(), "map");
    expect_word("into");
    s.id2 = lookup_as(take(), NameRef::Device);
    p_.maps.push_back({s.object, s.id2});
  }

  void parse_buffer(Stmt& s) {
    s.kind = StmtKind::Buffer;
    const Token& nt = take();
    std::string n = declare_name(nt);
    Buffer b;
    b.name = n;
    b.loc = s.loc;
    if (at(Tok::Assign)) {
      take();
      Range r = parse_range();
      const Buffer& parent = p_.buffers[r.buffer];
      b.owner = parent.owner;
      b.parent = r.buffer;
      b.lo = r.lo, b.hi = r.hi;
      b.size = r.hi - r.lo;
      b.base = parent.base;
      b.base_lo = parent.base_lo + r.lo, b.base_hi = parent.base_lo + r.hi;
    } else {
      expect_word("on");
      b.owner = parse_owner();
      Loc sl = peek().loc;
      b.size = parse_expr();
      check_u64(b.size, sl, "buffer size");
      if (bounds(b.size, ranges()).lo < 1) fail(sl, "buffer size can be 0");
      b.base = uint32_t(p_.buffers.size());
      b.base_lo = Expr::of(0);
      b.base_hi = b.size;
    }
    s.id = add(n, NameRef::Buffer, p_.buffers, std::move(b));
  }

  void parse_signal_decl(Stmt& s) {
    s.kind = StmtKind::SignalDecl;
    std::string n = declare_name(take());
    expect_word("on");
    Signal g{n, s.loc, parse_owner(), Expr::of(0), false};
    if (at(Tok::Assign)) {
      take();
      Loc il = peek().loc;
      g.init = parse_expr();
      g.init_written = true;
      check_u64(g.init, il, "initial value");
    }
    s.id = add(n, NameRef::Signal, p_.signals, std::move(g));
  }

  void parse_queue(Stmt& s) {
    s.kind = StmtKind::Queue;
    std::string n = declare_name(take());
    expect_word("on");
    Queue q{n, s.loc, lookup_as(take(), NameRef::Device), EngineKind::Compute, Ordering::Default};
    q.engine = word_of(take(), "engine", engine_name, {EngineKind::Compute, EngineKind::Copy});
    if (at_word("ordering")) {
      take();
      q.ordering = word_of(take(), "ordering", ordering_name, {Ordering::Serial, Ordering::Overlap, Ordering::Chained});
    }
    s.id = add(n, NameRef::Queue, p_.queues, std::move(q));
  }

  void parse_param(Stmt& s) {
    s.kind = StmtKind::Param;
    std::string n = declare_name(take());
    Var v{Var::Param, n, s.loc, {}, {0, kU64Max}};
    do {
      if (!v.constraints.empty()) expect(Tok::Comma, "','");
      Constraint c;
      if (at(Tok::Ge)) take(), c.kind = Constraint::Ge, c.a = parse_constant_expr("a bound");
      else if (at(Tok::Le)) take(), c.kind = Constraint::Le, c.a = parse_constant_expr("a bound");
      else if (at_word("in")) {
        take();
        c.kind = Constraint::In;
        c.a = parse_constant_expr("a bound");
        expect(Tok::DotDot, "'..'");
        c.b = parse_constant_expr("a bound");
      } else fail_expected("a constraint ('>= E', '<= E' or 'in E..E')");
      if (c.kind != Constraint::Le) v.range.lo = std::max(v.range.lo, c.a.constant);
      if (c.kind == Constraint::Le) v.range.hi = std::min(v.range.hi, c.a.constant);
      if (c.kind == Constraint::In) v.range.hi = std::min(v.range.hi, c.b.constant);
      v.constraints.push_back(c);
    } while (!at(Tok::End));
    if (v.range.lo > v.range.hi) fail(s.loc, "param '" + n + "' has no admissible value");
    s.id = add(n, NameRef::Var, p_.vars, std::move(v));
  }

  void parse_command_list(Stmt& s) {
    s.kind = StmtKind::CommandList;
    std::string n = declare_name(take());
    CommandList cl{n, s.loc, {}, {}};
    expect(Tok::LParen, "'('");
    size_t scope_mark = scope_.size();
    while (!at(Tok::RParen)) {
      if (!cl.params.empty()) expect(Tok::Comma, "','");
      const Token& pt = take();
      std::string pn = declare_name(pt);
      scope_.push_back({pn, uint32_t(p_.vars.size())});
      cl.params.push_back(uint32_t(p_.vars.size()));
      p_.vars.push_back({Var::ListParam, pn, pt.loc, {}, {0, kU64Max}});
    }
    take();
    if (!opens_block()) fail_expected("'{'");
    parse_command_block(cl.body, s.loc);
    scope_.resize(scope_mark);
    s.id = add(n, NameRef::List, p_.lists, std::move(cl));
  }

  void parse_submit(Stmt& s) {
    s.id = lookup_as(take(), NameRef::Queue);
    if (at(Tok::LBrace)) {
      s.kind = StmtKind::Submit;
      opens_block();
      parse_command_block(s.cmds, s.loc);
    } else {
      s.kind = StmtKind::SubmitList;
      const Token& lt = take();
      s.id2 = lookup_as(lt, NameRef::List);
      const CommandList& cl = p_.lists[s.id2];
      expect(Tok::LParen, "'('");
      while (!at(Tok::RParen)) {
        if (!s.args.empty()) expect(Tok::Comma, "','");
        const Token& at_ = take();
        auto it = std::find_if(cl.params.begin(), cl.params.end(), [&](uint32_t v) { return p_.vars[v].name == at_.text; });
        if (it == cl.params.end())
          fail(at_.loc, "command list '" + cl.name + "' has no parameter '" + std::string(at_.text) + "'");
        if (std::any_of(s.args.begin(), s.args.end(), [&](auto& a) { return a.first == *it; }))
          fail(at_.loc, "argument '" + std::string(at_.text) + "' is given twice");
        expect(Tok::Assign, "'='");
        // Arguments are checked where they are used: as range bounds at this submit (below),
        // as wait and signal values by the rule `value-width`.
        s.args.push_back({*it, parse_expr()});
      }
      const Token& rp = take();
      for (uint32_t v : cl.params)
        if (std::none_of(s.args.begin(), s.args.end(), [&](auto& a) { return a.first == v; }))
          fail(rp.loc, "missing argument '" + p_.vars[v].name + "' for command list '" + cl.name + "'");
      expect_end();
      check_list_instance(s);
    }
  }

  void parse_repeat(Stmt& s, int depth) {
    s.kind = StmtKind::Repeat;
    const Token& vt = take();
    std::string n = declare_name(vt);
    expect_word("in");
    Loc ll = peek().loc;
    s.lo = parse_expr();
    expect(Tok::DotDot, "'..'");
    Loc hl = peek().loc;
    s.hi = parse_expr();
    check_u64(s.lo, ll, "loop bound");
    check_u64(s.hi, hl, "loop bound");
    if (!opens_block()) fail_expected("'{'");
    const auto& rg = ranges();
    s.id = uint32_t(p_.vars.size());
    p_.vars.push_back({Var::Loop, n, vt.loc, {}, {bounds(s.lo, rg).lo, bounds(s.hi, rg).hi}});
    scope_.push_back({n, s.id});
    if (depth + 1 > kMaxDepth) fail(s.loc, "blocks nested too deeply");
    Loc saved = current_open_;
    current_open_ = s.loc;
    parse_host_block(&s.body, depth + 1);
    current_open_ = saved;
    scope_.pop_back();
  }

  // Checks a command list's deferred range rules with this submit's arguments substituted.
  void check_list_instance(const Stmt& s) {
    const CommandList& cl = p_.lists[s.id2];
    std::string ctx = " when submitted at line " + std::to_string(s.loc.line);
    for (const Command& c : cl.body) {
      Command x = c;
      auto subst = [&](Expr& e) {
        for (auto& [v, a] : s.args) e = within_limit(e.substitute(v, a), c.loc, ctx);
      };
      subst(x.value);
      for (auto* list : {&x.reads, &x.writes})
        for (Range& r : *list) {
          subst(r.lo), subst(r.hi);
          for (const Expr* e : {&r.lo, &r.hi}) {
            Interval b = bounds(*e, ranges());
            if (b.lo < 0 || b.hi > kU64Max) fail(r.loc, "range bound '" + show(*e) + "' can be outside [0, 2^64)" + ctx);
          }
          check_range(r, ctx);
        }
      if (x.op == CmdOp::Copy) check_copy(x, ctx);
    }
  }

  template <class T>
  uint32_t add(const std::string& n, NameRef::Kind k, std::vector<T>& table, T&& v) {
    uint32_t id = uint32_t(table.size());
    table.push_back(std::move(v));
    names_[n] = {k, id};
    return id;
  }
};

}  // namespace

bool is_keyword(std::string_view w) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), w) != std::end(kKeywords);
}

Expectation parse_expectation(std::string_view item, Loc loc) { return Parser::parse_expect_item(item, loc); }

Program parse_hcq(const SourceSet& src, uint32_t file, const std::vector<Loc>* line_map, const StatementSink* sink) {
  try {
    return Parser(src, file, line_map, sink).run();
  } catch (InputError& e) {
    // Errors found before tokens were mapped (non-text bytes) still point at the lowered text.
    if (line_map && e.loc.file == file && e.loc.line >= 1 && e.loc.line <= line_map->size() &&
        (*line_map)[e.loc.line - 1].valid())
      e.loc = (*line_map)[e.loc.line - 1];
    throw;
  }
}

LoadResult load_program_text(SourceSet& src, const std::string& name, std::string text, const StatementSink* sink) {
  LoadResult r;
  bool json = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    json = c == '{';
    break;
  }
  uint32_t file = src.add(name, std::move(text));
  try {
    r.program = json ? read_json_program(src, file) : parse_hcq(src, file, nullptr, sink);
  } catch (const InputError& e) {
    r.error = input_diagnostic(e);
  } catch (const std::bad_alloc&) {
    r.error = input_diagnostic({{file, 0, 0}, "input is too large to read"});
  }
  return r;
}

namespace {

constexpr size_t kMaxInputBytes = size_t(2) << 30;  // an implementation limit (docs/language-notes.md)

// Reads `fd` to its end; false with errno set (EFBIG past `max_bytes`).
bool read_all(int fd, std::string& text, size_t max_bytes) {
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
  bool ok = read_all(fd, text, kMaxInputBytes);
  int err = errno;
  if (fd != 0) ::close(fd);
  if (!ok && error)
    *error = err == EFBIG ? "cannot read file: larger than 2 GiB (an implementation limit)"
                          : std::string("cannot read file: ") + std::strerror(err);
  return ok;
}

bool read_regular_file(const std::string& path, size_t max_bytes, std::string& text) {
  text.clear();
  struct stat st {}, opened {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || size_t(st.st_size) > max_bytes) return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  // The file may have been replaced between stat and open: read only what was checked.
  bool ok = ::fstat(fd, &opened) == 0 && opened.st_dev == st.st_dev && opened.st_ino == st.st_ino &&
            read_all(fd, text, max_bytes);
  ::close(fd);
  return ok;
}

LoadResult load_program(SourceSet& src, const std::string& path) {
  std::string text, error;
  if (!read_file(path, text, &error)) {
    LoadResult r;
    uint32_t f = src.add(path == "-" ? "<stdin>" : path, "");
    r.error = input_diagnostic({{f, 0, 0}, error});
    return r;
  }
  return load_program_text(src, path == "-" ? "<stdin>" : path, std::move(text));
}

}  // namespace qvet
