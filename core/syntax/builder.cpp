#include "core/syntax/builder.h"

#include <algorithm>

#include "core/syntax/printer.h"

namespace qvet {

namespace {

const char* const kKeywords[] = {
    "device", "peer", "map", "into", "buffer", "on", "host", "signal", "queue", "compute", "copy",
    "ordering", "serial", "overlap", "chained", "param", "in", "submit", "wait", "read", "write",
    "free", "alloc", "repeat", "commands", "exec", "reads", "writes", "timestamp", "barrier",
    "memory_barrier", "nv", "amd", "strict"};

}  // namespace

bool is_keyword(std::string_view w) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), w) != std::end(kKeywords);
}

// ---- tokens ---------------------------------------------------------------------------------
void ProgramBuilder::read_field(std::string_view text, const Loc& loc) {
  lex_line(text, loc.file, loc.line, toks_);
  for (auto& t : toks_) t.loc = loc;
  ti_ = 0;
}

const Token& ProgramBuilder::take() {
  const Token& t = toks_[ti_];
  if (ti_ + 1 < toks_.size()) ++ti_;
  return t;
}

const Token& ProgramBuilder::expect(Tok k, const char* what) {
  if (!at(k)) fail_expected(what);
  return take();
}

void ProgramBuilder::expect_word(std::string_view w) {
  if (!at_word(w)) fail_expected(("'" + std::string(w) + "'").c_str());
  take();
}

void ProgramBuilder::expect_end() {
  if (!at(Tok::End)) {
    if (at(Tok::LBrace)) fail(peek().loc, "'{' must end the line that opens a block");
    fail_expected("end of line");
  }
}

void ProgramBuilder::fail_expected(const char* what) const {
  const Token& t = peek();
  std::string got = t.kind == Tok::End ? "end of line" : "'" + std::string(t.text) + "'";
  fail(t.loc, std::string("expected ") + what + ", found " + got);
}

// ---- names ----------------------------------------------------------------------------------
const char* ProgramBuilder::kind_word(NameRef::Kind k) {
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

std::string ProgramBuilder::declare_name(const Token& t) {
  if (t.kind != Tok::Ident) fail_expected("a name");
  std::string n(t.text);
  if (is_keyword(n)) fail(t.loc, "'" + n + "' is a reserved keyword and cannot name anything");
  if (names_.count(n) || std::any_of(scope_.begin(), scope_.end(), [&](auto& s) { return s.first == n; }))
    fail(t.loc, "'" + n + "' is already declared");
  return n;
}

ProgramBuilder::NameRef ProgramBuilder::lookup(const Token& t) const {
  if (t.kind != Tok::Ident) fail(t.loc, "expected a name, found '" + std::string(t.text) + "'");
  std::string_view n = t.text;
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
    if (it->first == n) return {NameRef::Var, it->second};
  auto it = names_.find(n);
  if (it == names_.end()) fail(t.loc, "undeclared name '" + std::string(n) + "'");
  return it->second;
}

uint32_t ProgramBuilder::lookup_as(const Token& t, NameRef::Kind kind) const {
  NameRef r = lookup(t);
  if (r.kind != kind) fail(t.loc, "'" + std::string(t.text) + "' is " + kind_word(r.kind) + ", not " + kind_word(kind));
  return r.id;
}

uint32_t ProgramBuilder::device(const Token& t) { return lookup_as(t, NameRef::Device); }
uint32_t ProgramBuilder::signal(const Token& t) { return lookup_as(t, NameRef::Signal); }
uint32_t ProgramBuilder::queue(const Token& t) { return lookup_as(t, NameRef::Queue); }
uint32_t ProgramBuilder::list(const Token& t) { return lookup_as(t, NameRef::List); }

ObjectRef ProgramBuilder::memory(const Token& t, const char* verb) {
  NameRef r = lookup(t);
  if (r.kind == NameRef::Signal) return {ObjectRef::Signal, r.id};
  if (r.kind != NameRef::Buffer) fail(t.loc, "'" + std::string(t.text) + "' is " + kind_word(r.kind) + ", not a buffer or signal");
  if (p_.buffers[r.id].is_view())
    fail(t.loc, std::string(verb) + " applies to base buffers, and '" + std::string(t.text) + "' is a view");
  return {ObjectRef::Buffer, r.id};
}

uint32_t ProgramBuilder::owner() {
  if (at_word("host")) {
    take();
    return kHostAgent;
  }
  return device(take());
}

// The one of `values` whose name (core/ir.cpp) the word is: "an architecture", "an engine", ...
template <class E>
E ProgramBuilder::word_of(const Token& t, const char* what, const char* (*name)(E), std::initializer_list<E> values) const {
  for (E v : values)
    if (t.kind == Tok::Ident && t.text == name(v)) return v;
  const E* v = values.begin();
  std::string list;  // "a, b or c"
  for (size_t k = 0; k < values.size(); ++k) list += std::string(k == 0 ? "" : k + 1 == values.size() ? " or " : ", ") + name(v[k]);
  if (t.kind != Tok::Ident) fail(t.loc, std::string("expected an ") + what + " (" + list + ")");
  fail(t.loc, std::string("unknown ") + what + " '" + std::string(t.text) + "' (expected " + list + ")");
}

Arch ProgramBuilder::arch(const Token& t) { return word_of(t, "architecture", arch_name, {Arch::Nv, Arch::Amd, Arch::Strict}); }
EngineKind ProgramBuilder::engine(const Token& t) {
  return word_of(t, "engine", engine_name, {EngineKind::Compute, EngineKind::Copy});
}
Ordering ProgramBuilder::ordering(const Token& t) {
  return word_of(t, "ordering", ordering_name, {Ordering::Serial, Ordering::Overlap, Ordering::Chained});
}

template <class T>
uint32_t ProgramBuilder::add(const std::string& n, NameRef::Kind k, std::vector<T>& table, T&& v) {
  uint32_t id = uint32_t(table.size());
  table.push_back(std::move(v));
  names_[n] = {k, id};
  return id;
}

// ---- expressions ----------------------------------------------------------------------------
const std::vector<Interval>& ProgramBuilder::ranges() {
  if (ranges_.size() != p_.vars.size()) {
    ranges_.clear();
    for (auto& v : p_.vars) ranges_.push_back(v.range);
  }
  return ranges_;
}

bool ProgramBuilder::uses_list_param(const Expr& e) const {
  for (auto& [v, c] : e.terms)
    if (p_.vars[v].kind == Var::ListParam) return true;
  return false;
}

// Every intermediate result stays within kValueLimit, so the arithmetic is exact (core/expr.h).
Expr ProgramBuilder::within_limit(Expr e, const Loc& loc, const std::string& context) {
  if (magnitude(e, ranges()) <= kValueLimit) return e;
  throw InputError{loc, "value too large: the expression can exceed " + format_int(kValueLimit) +
                            " in magnitude, the limit of qvet's exact arithmetic" + context, true};
}

Expr ProgramBuilder::expr() {
  Loc loc = peek().loc;
  bool neg = false;
  if (at(Tok::Minus)) take(), neg = true;
  Expr e = term();
  if (neg) e = e.scaled(-1);
  while (at(Tok::Plus) || at(Tok::Minus)) {
    bool minus = take().kind == Tok::Minus;
    Expr t = term();
    e = within_limit(minus ? e - t : e + t, loc);
  }
  return e;
}

Expr ProgramBuilder::term() {
  Loc loc = peek().loc;
  Expr e = factor();
  while (at(Tok::Star)) {
    take();
    Expr f = factor();
    if (!e.is_constant() && !f.is_constant()) fail(loc, "expression is not affine: it multiplies two variables");
    e = within_limit(e.is_constant() ? f.scaled(e.constant) : e.scaled(f.constant), loc);
  }
  return e;
}

Expr ProgramBuilder::factor() {
  const Token& t = peek();
  if (t.kind == Tok::Int) return Expr::of(take().value);
  if (t.kind == Tok::Ident) {
    if (is_keyword(t.text)) fail_expected("an expression");
    return Expr::var(lookup_as(take(), NameRef::Var));
  }
  if (t.kind == Tok::LParen) {
    if (++paren_depth_ > kMaxDepth) fail(t.loc, "expression nested too deeply");
    take();
    Expr e = expr();
    expect(Tok::RParen, "')'");
    --paren_depth_;
    return e;
  }
  fail_expected("an expression");
}

std::string ProgramBuilder::show(const Expr& e) const { return to_string(e, p_.var_names()); }

// A size, offset or bound: must lie in [0, 2^64) for every admissible binding.
void ProgramBuilder::check_u64(const Expr& e, const Loc& loc, const char* what) {
  if (uses_list_param(e)) return;  // checked where the list is submitted
  Interval b = bounds(e, ranges());
  if (e.is_constant() && (b.lo < 0 || b.hi > kU64Max))
    fail(loc, std::string(what) + " " + i128_to_string(e.constant) + " is outside [0, 2^64)");
  if (b.lo < 0 || b.hi > kU64Max)
    fail(loc, std::string(what) + " '" + show(e) + "' can be outside [0, 2^64) (it ranges from " +
                  i128_to_string(b.lo) + " to " + i128_to_string(b.hi) + ")");
}

Expr ProgramBuilder::constant_expr(const char* what) {
  Loc loc = peek().loc;
  Expr e = expr();
  if (!e.is_constant()) fail(loc, std::string(what) + " must be a constant");
  check_u64(e, loc, what);
  return e;
}

Constraint ProgramBuilder::constraint() {
  Constraint c;
  if (at(Tok::Ge)) take(), c.kind = Constraint::Ge, c.a = constant_expr("a bound");
  else if (at(Tok::Le)) take(), c.kind = Constraint::Le, c.a = constant_expr("a bound");
  else if (at_word("in")) {
    take();
    c.kind = Constraint::In;
    c.a = constant_expr("a bound");
    expect(Tok::DotDot, "'..'");
    c.b = constant_expr("a bound");
  } else fail_expected("a constraint ('>= E', '<= E' or 'in E..E')");
  return c;
}

// ---- ranges ---------------------------------------------------------------------------------
Range ProgramBuilder::range() {
  Range r;
  const Token& name = take();
  r.loc = name.loc;
  r.buffer = lookup_as(name, NameRef::Buffer);
  const Buffer& b = p_.buffers[r.buffer];
  if (at(Tok::LBracket)) {
    take();
    r.whole = false;
    Loc lo_loc = peek().loc;
    r.lo = expr();
    expect(Tok::Colon, "':'");
    Loc hi_loc = peek().loc;
    r.hi = expr();
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
void ProgramBuilder::check_range(const Range& r, const std::string& context) {
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

void ProgramBuilder::check_copy(const Command& c, const std::string& context) const {
  const Range &s = c.reads[0], &d = c.writes[0];
  if (uses_list_param(s.lo) || uses_list_param(s.hi) || uses_list_param(d.lo) || uses_list_param(d.hi)) return;
  Interval diff = bounds((s.hi - s.lo) - (d.hi - d.lo), const_cast<ProgramBuilder*>(this)->ranges());
  if (diff.lo != 0 || diff.hi != 0)
    fail(c.loc, "copy length mismatch: source has " + show(s.hi - s.lo) + " bytes, destination " + show(d.hi - d.lo) + context);
}

void ProgramBuilder::set_kernel(Command& c, const Token& k) {
  if (k.kind != Tok::Ident) fail(k.loc, "expected a kernel name after 'exec'");
  if (is_keyword(k.text)) fail(k.loc, "'" + std::string(k.text) + "' is a reserved keyword and cannot name a kernel");
  // By name through an index, not a walk over every kernel (160,000 distinct names: 20 s).
  if (kernel_ids_.size() != p_.kernels.size()) {  // (the table was replaced from outside)
    kernel_ids_.clear();
    for (uint32_t i = 0; i < p_.kernels.size(); ++i) kernel_ids_.emplace(p_.kernels[i], i);
  }
  auto it = kernel_ids_.find(k.text);
  if (it != kernel_ids_.end()) {
    c.kernel = it->second;
    return;
  }
  c.kernel = uint32_t(p_.kernels.size());
  p_.kernels.emplace_back(k.text);
  kernel_ids_.emplace(p_.kernels.back(), c.kernel);
}

// ---- declarations -----------------------------------------------------------------------------
void ProgramBuilder::add_device(Stmt& s, std::string name, Arch a) {
  s.kind = StmtKind::Device;
  s.id = add(name, NameRef::Device, p_.devices, Device{name, a, s.loc});
}

void ProgramBuilder::add_peer(Stmt& s, const Token& a, const Token& b) {
  s.kind = StmtKind::Peer;
  s.id = device(a);
  s.id2 = device(b);
  if (s.id == s.id2) fail(a.loc, "a device cannot be its own peer");
  p_.peers.push_back({s.id, s.id2});
}

void ProgramBuilder::add_map(Stmt& s, ObjectRef object, uint32_t dev) {
  s.kind = StmtKind::Map;
  s.object = object;
  s.id2 = dev;
  p_.maps.push_back({object, dev});
}

void ProgramBuilder::add_base_buffer(Stmt& s, std::string name, uint32_t own, Expr size, const Loc& size_loc) {
  s.kind = StmtKind::Buffer;
  check_u64(size, size_loc, "buffer size");
  if (bounds(size, ranges()).lo < 1) fail(size_loc, "buffer size can be 0");
  Buffer b;
  b.name = name;
  b.loc = s.loc;
  b.owner = own;
  b.size = size;
  b.base = uint32_t(p_.buffers.size());
  b.base_lo = Expr::of(0);
  b.base_hi = std::move(size);
  s.id = add(name, NameRef::Buffer, p_.buffers, std::move(b));
}

void ProgramBuilder::add_view(Stmt& s, std::string name, const Range& r) {
  s.kind = StmtKind::Buffer;
  const Buffer& parent = p_.buffers[r.buffer];
  Buffer b;
  b.name = name;
  b.loc = s.loc;
  b.owner = parent.owner;
  b.parent = r.buffer;
  b.lo = r.lo, b.hi = r.hi;
  b.size = r.hi - r.lo;
  b.base = parent.base;
  b.base_lo = parent.base_lo + r.lo, b.base_hi = parent.base_lo + r.hi;
  s.id = add(name, NameRef::Buffer, p_.buffers, std::move(b));
}

void ProgramBuilder::add_signal(Stmt& s, std::string name, uint32_t own, std::optional<std::pair<Expr, Loc>> init) {
  s.kind = StmtKind::SignalDecl;
  Signal g{name, s.loc, own, Expr::of(0), false};
  if (init) {
    check_u64(init->first, init->second, "initial value");
    g.init = std::move(init->first);
    g.init_written = true;
  }
  s.id = add(name, NameRef::Signal, p_.signals, std::move(g));
}

void ProgramBuilder::add_queue(Stmt& s, std::string name, uint32_t dev, EngineKind e, Ordering o) {
  s.kind = StmtKind::Queue;
  s.id = add(name, NameRef::Queue, p_.queues, Queue{name, s.loc, dev, e, o});
}

void ProgramBuilder::add_param(Stmt& s, std::string name, std::vector<Constraint> cs) {
  s.kind = StmtKind::Param;
  Var v{Var::Param, name, s.loc, {}, {0, kU64Max}};
  for (const Constraint& c : cs) {
    if (c.kind != Constraint::Le) v.range.lo = std::max(v.range.lo, c.a.constant);
    if (c.kind == Constraint::Le) v.range.hi = std::min(v.range.hi, c.a.constant);
    if (c.kind == Constraint::In) v.range.hi = std::min(v.range.hi, c.b.constant);
  }
  v.constraints = std::move(cs);
  if (v.range.lo > v.range.hi) fail(s.loc, "param '" + name + "' has no admissible value");
  s.id = add(name, NameRef::Var, p_.vars, std::move(v));
}

void ProgramBuilder::begin_list(Stmt& s, std::string name) {
  s.kind = StmtKind::CommandList;
  list_scope_ = scope_.size();
  open_list_ = CommandList{std::move(name), s.loc, {}, {}};
}

void ProgramBuilder::add_list_param(const Token& t) {
  std::string pn = declare_name(t);
  scope_.push_back({pn, uint32_t(p_.vars.size())});
  open_list_.params.push_back(uint32_t(p_.vars.size()));
  p_.vars.push_back({Var::ListParam, pn, t.loc, {}, {0, kU64Max}});
}

void ProgramBuilder::end_list(Stmt& s, std::vector<Command> body) {
  scope_.resize(list_scope_);
  CommandList cl = std::move(open_list_);
  cl.body = std::move(body);
  std::string name = cl.name;
  s.id = add(name, NameRef::List, p_.lists, std::move(cl));
}

// ---- host statements ------------------------------------------------------------------------
void ProgramBuilder::begin_submit_list(Stmt& s, uint32_t q, uint32_t l) {
  s.kind = StmtKind::SubmitList;
  s.id = q;
  s.id2 = l;
}

uint32_t ProgramBuilder::argument(const Stmt& s, const Token& param) const {
  const CommandList& cl = p_.lists[s.id2];
  auto it = std::find_if(cl.params.begin(), cl.params.end(), [&](uint32_t v) { return p_.vars[v].name == param.text; });
  if (it == cl.params.end()) fail(param.loc, "command list '" + cl.name + "' has no parameter '" + std::string(param.text) + "'");
  if (std::any_of(s.args.begin(), s.args.end(), [&](auto& a) { return a.first == *it; }))
    fail(param.loc, "argument '" + std::string(param.text) + "' is given twice");
  // Arguments are checked where they are used: as range bounds at this submit (end_submit_list),
  // as wait and signal values by the rule `value-width`.
  return *it;
}

void ProgramBuilder::end_submit_list(Stmt& s, const Loc& close) {
  const CommandList& cl = p_.lists[s.id2];
  for (uint32_t v : cl.params)
    if (std::none_of(s.args.begin(), s.args.end(), [&](auto& a) { return a.first == v; }))
      fail(close, "missing argument '" + p_.vars[v].name + "' for command list '" + cl.name + "'");
  check_list_instance(s);
}

// Checks a command list's deferred range rules with this submit's arguments substituted.
void ProgramBuilder::check_list_instance(const Stmt& s) {
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

void ProgramBuilder::begin_repeat(Stmt& s, std::string n, const Loc& var_loc, Expr lo, const Loc& lo_loc, Expr hi, const Loc& hi_loc,
                                  int depth) {
  s.kind = StmtKind::Repeat;
  check_u64(lo, lo_loc, "loop bound");
  check_u64(hi, hi_loc, "loop bound");
  const auto& rg = ranges();
  s.id = uint32_t(p_.vars.size());
  p_.vars.push_back({Var::Loop, n, var_loc, {}, {bounds(lo, rg).lo, bounds(hi, rg).hi}});
  s.lo = std::move(lo);
  s.hi = std::move(hi);
  scope_.push_back({n, s.id});
  if (depth + 1 > kMaxDepth) fail(s.loc, "blocks nested too deeply");
}

void ProgramBuilder::end_repeat() { scope_.pop_back(); }

// NVIDIA's four-word semaphore release writes its payload and a zero high word; the model's copy
// signal is 32 bits wide and keeps the high word. The two readings agree while the word's high
// half stays 0, that is while no write of the signal (its initial value included) can reach 2^32.
void ProgramBuilder::check_zero_high() {
  if (zero_high_.empty()) return;
  std::vector<Loc> reaches(p_.signals.size());  // per signal: a write that can reach 2^32
  auto note = [&](uint32_t sig, const Expr& v, const Loc& at) {
    if (!reaches[sig].valid() && bounds(v, ranges()).hi >= (i128(1) << 32)) reaches[sig] = at;
  };
  for (uint32_t i = 0; i < p_.signals.size(); ++i) note(i, p_.signals[i].init, p_.signals[i].loc);
  // A command list's signals with each submit's arguments (as value-width reads them).
  auto stmts = [&](const std::vector<Stmt>& ss, auto& self) -> void {
    for (const Stmt& s : ss) {
      if (s.kind == StmtKind::Signal) note(s.id, s.value, s.loc);
      if (s.kind == StmtKind::Repeat) self(s.body, self);
      if (s.kind != StmtKind::Submit && s.kind != StmtKind::SubmitList) continue;
      for (const Command& c : s.kind == StmtKind::Submit ? s.cmds : p_.lists[s.id2].body) {
        if (c.op != CmdOp::Signal) continue;
        Expr e = c.value;
        for (auto& [v, a] : s.args) e = e.substitute(v, a);
        note(c.signal, e, c.loc);
      }
    }
  };
  stmts(p_.stmts, stmts);
  for (auto& [sig, at] : zero_high_)
    if (reaches[sig].valid())
      fail(at, "LAUNCH_DMA's four-word semaphore release writes its payload and a zero high word to '" + p_.signals[sig].name +
                   "', where the model's copy signal is a 32-bit write that keeps the high word, and a write of '" +
                   p_.signals[sig].name + "' can reach 2^32 (" + p_.line_text(reaches[sig]) + "): not decoded; release a one-word semaphore (SEMAPHORE_TYPE 1) there");
}

Program ProgramBuilder::finish() {
  check_zero_high();
  bool clean = std::any_of(p_.expects.begin(), p_.expects.end(), [](auto& e) { return e.clean; });
  if (clean && p_.expects.size() > 1)
    for (auto& e : p_.expects)
      if (e.clean) fail(e.loc, "'# expect: clean' must stand alone, but the file has other expectations");
  return std::move(p_);
}

}  // namespace qvet
