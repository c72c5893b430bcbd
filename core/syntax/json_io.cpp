#include "core/syntax/json_io.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/syntax/builder.h"
#include "core/syntax/json_positions.h"
#include "core/syntax/parser.h"
#include "core/syntax/printer.h"

namespace qvet {

using J = nlohmann::ordered_json;

namespace {

J loc_json(const Loc& l) { return J{{"line", l.line}, {"column", l.col}}; }

struct Writer {
  const Program& p;
  bool locs;
  std::vector<std::string> names = p.var_names();

  void put_loc(J& j, const Loc& l) const {
    if (locs) j["loc"] = loc_json(l);
  }
  std::string ex(const Expr& e) const { return to_string(e, names); }

  J command(const Command& c) const {
    J j{{"op", cmd_op_name(c.op)}};
    switch (c.op) {
      case CmdOp::Wait:
      case CmdOp::Signal:
        j["signal"] = p.signals[c.signal].name;
        j["value"] = ex(c.value);
        break;
      case CmdOp::Timestamp: j["signal"] = p.signals[c.signal].name; break;
      case CmdOp::Exec: {
        j["kernel"] = p.kernels[c.kernel];
        J r = J::array(), w = J::array();
        for (auto& x : c.reads) r.push_back(print_range(p, x));
        for (auto& x : c.writes) w.push_back(print_range(p, x));
        j["reads"] = r;
        j["writes"] = w;
        break;
      }
      case CmdOp::Copy:
        j["src"] = print_range(p, c.reads[0]);
        j["dst"] = print_range(p, c.writes[0]);
        break;
      default: break;
    }
    put_loc(j, c.loc);
    return j;
  }
  J commands(const std::vector<Command>& cs) const {
    J a = J::array();
    for (auto& c : cs) a.push_back(command(c));
    return a;
  }
  J stmts(const std::vector<Stmt>& ss) const {
    J a = J::array();
    for (const Stmt& s : ss) a.push_back(stmt(s));
    return a;
  }
  J stmt(const Stmt& s) const {
    J j;
    switch (s.kind) {
      case StmtKind::Device:
        j = {{"kind", "device"}, {"name", p.devices[s.id].name}, {"arch", arch_name(p.devices[s.id].arch)}};
        break;
      case StmtKind::Peer: j = {{"kind", "peer"}, {"devices", {p.devices[s.id].name, p.devices[s.id2].name}}}; break;
      case StmtKind::Map: j = {{"kind", "map"}, {"object", p.object_name(s.object)}, {"into", p.devices[s.id2].name}}; break;
      case StmtKind::Buffer: {
        const Buffer& b = p.buffers[s.id];
        j = {{"kind", "buffer"}, {"name", b.name}};
        if (b.is_view()) {
          j["view"] = print_view(p, b);
        } else {
          j["on"] = owner_name(p, b.owner);
          j["size"] = format_size(b.size, names);
        }
        j["resolved"] = {{"base", p.buffers[b.base].name}, {"lo", ex(b.base_lo)}, {"hi", ex(b.base_hi)}};
        break;
      }
      case StmtKind::SignalDecl: {
        const Signal& g = p.signals[s.id];
        j = {{"kind", "signal_decl"}, {"name", g.name}, {"on", owner_name(p, g.owner)}};
        if (g.init_written) j["init"] = ex(g.init);
        break;
      }
      case StmtKind::Queue: {
        const Queue& q = p.queues[s.id];
        j = {{"kind", "queue"}, {"name", q.name}, {"on", p.devices[q.device].name}, {"engine", engine_name(q.engine)}};
        if (q.ordering != Ordering::Default) j["ordering"] = ordering_name(q.ordering);
        break;
      }
      case StmtKind::Param: {
        const Var& v = p.vars[s.id];
        J cs = J::array();
        for (auto& c : v.constraints) cs.push_back(print_constraint(c, names));
        j = {{"kind", "param"}, {"name", v.name}, {"constraints", cs}};
        break;
      }
      case StmtKind::CommandList: {
        const CommandList& cl = p.lists[s.id];
        J ps = J::array();
        for (uint32_t v : cl.params) ps.push_back(p.vars[v].name);
        j = {{"kind", "commands"}, {"name", cl.name}, {"params", ps}, {"body", commands(cl.body)}};
        break;
      }
      case StmtKind::Submit: j = {{"kind", "submit"}, {"queue", p.queues[s.id].name}, {"body", commands(s.cmds)}}; break;
      case StmtKind::SubmitList: {
        J args = J::array();
        for (auto& [v, e] : s.args) args.push_back({p.vars[v].name, ex(e)});
        j = {{"kind", "submit_list"}, {"queue", p.queues[s.id].name}, {"list", p.lists[s.id2].name}, {"args", args}};
        break;
      }
      case StmtKind::Wait: j = {{"kind", "wait"}, {"signal", p.signals[s.id].name}, {"value", ex(s.value)}}; break;
      case StmtKind::Signal: j = {{"kind", "signal"}, {"signal", p.signals[s.id].name}, {"value", ex(s.value)}}; break;
      case StmtKind::Read: j = {{"kind", "read"}, {"range", print_range(p, s.range)}}; break;
      case StmtKind::Write: j = {{"kind", "write"}, {"range", print_range(p, s.range)}}; break;
      case StmtKind::Free: j = {{"kind", "free"}, {"object", p.object_name(s.object)}}; break;
      case StmtKind::Alloc: j = {{"kind", "alloc"}, {"object", p.object_name(s.object)}}; break;
      case StmtKind::Repeat:
        j = {{"kind", "repeat"}, {"var", p.vars[s.id].name}, {"from", ex(s.lo)}, {"to", ex(s.hi)}, {"body", stmts(s.body)}};
        break;
    }
    put_loc(j, s.loc);
    return j;
  }
};

// What a JSON string field must hold. The builder reads each field as tokens, so each is checked
// token by token first: a field holds only what its kind allows (a kernel "k writes b" is not a
// name, a range "a, b" is not one range), and the message says so in the JSON's terms.
enum class Field { Name, Word, Expr, Range, Constraint };

const char* describe(Field f) {
  switch (f) {
    case Field::Name: return "a name ([A-Za-z_][A-Za-z0-9_]*, not a keyword)";
    case Field::Word: return "a word ([A-Za-z_][A-Za-z0-9_]*)";
    case Field::Expr: return "an expression";
    case Field::Range: return "a buffer or a range (NAME or NAME[lo:hi])";
    case Field::Constraint: return "a constraint (>= E, <= E or in E..E)";
  }
  return "a string";
}

bool is_name(const Token& t) { return t.kind == Tok::Ident && !is_keyword(t.text); }

bool is_expr_token(const Token& t) {
  switch (t.kind) {
    case Tok::Ident: return !is_keyword(t.text);
    case Tok::Int: case Tok::Plus: case Tok::Minus: case Tok::Star: case Tok::LParen: case Tok::RParen: return true;
    default: return false;
  }
}

// True when `s` has the tokens `kind` allows (the .hcq parser checks the rest).
bool has_shape(const std::string& s, Field kind) {
  if (std::any_of(s.begin(), s.end(), [](char c) { return c < 32 || c > 126 || c == '#'; })) return false;
  std::vector<Token> toks;
  try {
    lex_line(s, 0, 1, toks);
  } catch (const InputError&) {
    return false;
  }
  toks.pop_back();  // the end-of-line token
  if (toks.empty()) return false;
  auto rest_are = [&](size_t from, auto also) {
    return std::all_of(toks.begin() + long(from), toks.end(), [&](const Token& t) { return is_expr_token(t) || also(t.kind); });
  };
  auto nothing = [](Tok) { return false; };
  switch (kind) {
    case Field::Word: return toks.size() == 1 && toks[0].kind == Tok::Ident;
    case Field::Name: return toks.size() == 1 && is_name(toks[0]);
    case Field::Expr: return rest_are(0, nothing);
    case Field::Range:
      return is_name(toks[0]) && rest_are(1, [](Tok k) { return k == Tok::LBracket || k == Tok::RBracket || k == Tok::Colon; });
    case Field::Constraint:
      return toks.size() > 1 && (toks[0].kind == Tok::Ge || toks[0].kind == Tok::Le || toks[0].text == "in") &&
             rest_are(1, [](Tok k) { return k == Tok::DotDot; });
  }
  return false;
}

// A field's text as an error message may show it: printable, at most 60 characters.
std::string shown(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += c >= 32 && c < 127 ? c : '?';
  return s.size() > 60 ? out + "..." : out;
}

// Builds the Program from JSON statements through the same ProgramBuilder as the .hcq parser:
// names, expressions, ranges and every static rule are shared. Each field's tokens (and each
// error) are located at the node's "loc" in the source, else at the node's place in the JSON text.
struct Reader {
  JsonPositions& pos;
  uint32_t source_file;
  ProgramBuilder b{source_file};
  int depth = 0;

  [[noreturn]] void bad_at(const Loc& l, const std::string& msg) const { throw InputError{l, "invalid JSON program: " + msg}; }
  [[noreturn]] void bad(const J& node, const std::string& msg) const { bad_at(pos.of(node), msg); }
  [[noreturn]] void bad_field(const J& object, const char* key, const std::string& msg) const {
    bad_at(pos.of_field(object, key), msg);
  }

  // The source location in `node`'s "loc"; invalid when it has none (or line 0).
  Loc loc_of(const J& node) const {
    if (!node.is_object() || !node.contains("loc")) return {};
    const J& l = node["loc"];
    if (!l.is_object() || !l.contains("line")) bad_field(node, "loc", "'loc' must be {\"line\": L, \"column\": C}");
    auto number = [&](const char* key) -> uint32_t {
      if (!l.contains(key)) return 0;
      const J& v = l[key];
      if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
        bad_field(l, key, std::string("'") + key + "' must be an integer in [0, 2^32)");
      return uint32_t(v.get<uint64_t>());
    };
    return {source_file, number("line"), number("column")};
  }
  Loc where(const J& node) const {
    Loc l = loc_of(node);
    return l.valid() ? l : pos.of(node);
  }
  // object[key], which must exist and be of `type` (`type_name` in words).
  const J& get(const J& object, const char* key, J::value_t type, const char* type_name) const {
    if (!object.contains(key)) bad(object, std::string("missing field '") + key + "'");
    const J& v = object[key];
    if (v.type() != type) bad_field(object, key, std::string("'") + key + "' must be " + type_name);
    return v;
  }
  const J& arr(const J& object, const char* key) const { return get(object, key, J::value_t::array, "an array"); }
  const std::string& str(const J& object, const char* key, Field kind) const {
    const std::string& s = get(object, key, J::value_t::string, "a string").get_ref<const std::string&>();
    if (!has_shape(s, kind)) bad_field(object, key, std::string("'") + key + "' must be " + describe(kind) + ", got '" + shown(s) + "'");
    return s;
  }
  // The strings of the array object[key], each of shape `kind`.
  std::vector<const std::string*> list(const J& object, const char* key, Field kind) const {
    std::vector<const std::string*> out;
    for (const J& x : arr(object, key)) {
      if (!x.is_string() || !has_shape(x.get_ref<const std::string&>(), kind))
        bad_field(object, key, std::string("'") + key + "' must hold strings, each " + describe(kind));
      out.push_back(&x.get_ref<const std::string&>());
    }
    return out;
  }
  // Makes the builder read the text of a field (checked to be of its shape), located at `l`.
  void read(const std::string& text, const Loc& l) { b.read_field(text, l); }
  void read(const J& object, const char* key, Field kind, const Loc& l) { read(str(object, key, kind), l); }
  Token token(const J& object, const char* key, Field kind, const Loc& l) {
    read(object, key, kind, l);
    return b.take();
  }
  Token token(const std::string& text, const Loc& l) {
    read(text, l);
    return b.take();
  }
  Expr expr(const J& object, const char* key, const Loc& l) {
    read(object, key, Field::Expr, l);
    Expr e = b.expr();
    b.expect_end();
    return e;
  }
  Range range(const std::string& text, const Loc& l) {
    read(text, l);
    Range r = b.range();
    b.expect_end();
    return r;
  }
  std::vector<Range> ranges(const J& c, const char* key, const Loc& l) {
    std::vector<Range> out;
    if (c.contains(key))
      for (const std::string* s : list(c, key, Field::Range)) out.push_back(range(*s, l));
    return out;
  }
  // The objects of `array` (statements, commands), each checked to be an object.
  void each_object(const J& array, const char* what, const std::function<void(const J&)>& f) {
    for (const J& x : array) {
      if (!x.is_object()) bad(array, std::string("every ") + what + " must be an object");
      f(x);
    }
  }
  std::vector<Command> commands(const J& body) {
    std::vector<Command> out;
    each_object(body, "command", [&](const J& j) {
      Command c;
      c.loc = where(j);
      const Loc& l = c.loc;
      const std::string& op = str(j, "op", Field::Word);
      if (op == "wait" || op == "signal") {
        c.op = op == "wait" ? CmdOp::Wait : CmdOp::Signal;
        c.signal = b.signal(token(j, "signal", Field::Name, l));
        c.value = expr(j, "value", l);
      } else if (op == "timestamp") {
        c.op = CmdOp::Timestamp;
        c.signal = b.signal(token(j, "signal", Field::Name, l));
      } else if (op == "exec") {
        c.op = CmdOp::Exec;
        b.set_kernel(c, token(j, "kernel", Field::Name, l));
        c.reads = ranges(j, "reads", l);
        c.writes = ranges(j, "writes", l);
      } else if (op == "copy") {
        c.op = CmdOp::Copy;
        c.reads.push_back(range(str(j, "src", Field::Range), l));
        c.writes.push_back(range(str(j, "dst", Field::Range), l));
        b.check_copy(c, "");
      } else if (op == "barrier") c.op = CmdOp::Barrier;
      else if (op == "memory_barrier") c.op = CmdOp::MemoryBarrier;
      else bad_field(j, "op", "unknown command op '" + op + "'");
      out.push_back(std::move(c));
    });
    return out;
  }
  std::vector<Stmt> stmts(const J& list) {
    std::vector<Stmt> out;
    each_object(list, "statement", [&](const J& s) { out.push_back(stmt(s)); });
    return out;
  }
  std::string declare(const J& s, const char* key, const Loc& l) { return b.declare_name(token(s, key, Field::Name, l)); }
  Stmt stmt(const J& s) {
    const std::string& k = str(s, "kind", Field::Word);
    Stmt st;
    st.loc = where(s);
    const Loc& l = st.loc;
    if (k == "device") {
      std::string n = declare(s, "name", l);
      b.add_device(st, n, b.arch(token(s, "arch", Field::Word, l)));
    } else if (k == "peer") {
      std::vector<const std::string*> d = list(s, "devices", Field::Name);
      if (d.size() != 2) bad_field(s, "devices", "'devices' must name two devices");
      Token first = token(*d[0], l);
      b.add_peer(st, first, token(*d[1], l));
    } else if (k == "map") {
      ObjectRef o = b.memory(token(s, "object", Field::Name, l), "map");
      b.add_map(st, o, b.device(token(s, "into", Field::Name, l)));
    } else if (k == "buffer") {
      std::string n = declare(s, "name", l);
      if (s.contains("view")) {
        b.add_view(st, n, range(str(s, "view", Field::Range), l));
      } else {
        read(s, "on", Field::Word, l);
        uint32_t owner = b.owner();
        b.add_base_buffer(st, n, owner, expr(s, "size", l), l);
      }
    } else if (k == "signal_decl") {
      std::string n = declare(s, "name", l);
      read(s, "on", Field::Word, l);
      uint32_t owner = b.owner();
      std::optional<std::pair<Expr, Loc>> init;
      if (s.contains("init")) init = {expr(s, "init", l), l};
      b.add_signal(st, n, owner, std::move(init));
    } else if (k == "queue") {
      std::string n = declare(s, "name", l);
      uint32_t dev = b.device(token(s, "on", Field::Name, l));
      EngineKind e = b.engine(token(s, "engine", Field::Word, l));
      Ordering o = s.contains("ordering") ? b.ordering(token(s, "ordering", Field::Word, l)) : Ordering::Default;
      b.add_queue(st, n, dev, e, o);
    } else if (k == "param") {
      std::string n = declare(s, "name", l);
      std::vector<Constraint> cs;
      for (const std::string* c : list(s, "constraints", Field::Constraint)) {
        read(*c, l);
        cs.push_back(b.constraint());
        b.expect_end();
      }
      if (cs.empty()) bad_field(s, "constraints", "'constraints' must hold at least one constraint");
      b.add_param(st, n, std::move(cs));
    } else if (k == "commands") {
      b.begin_list(st, declare(s, "name", l));
      for (const std::string* p : list(s, "params", Field::Name)) b.add_list_param(token(*p, l));
      b.end_list(st, commands(arr(s, "body")));
    } else if (k == "submit") {
      st.kind = StmtKind::Submit;
      st.id = b.queue(token(s, "queue", Field::Name, l));
      st.cmds = commands(arr(s, "body"));
    } else if (k == "submit_list") {
      uint32_t q = b.queue(token(s, "queue", Field::Name, l));
      b.begin_submit_list(st, q, b.list(token(s, "list", Field::Name, l)));
      for (const J& x : arr(s, "args")) {
        bool pair = x.is_array() && x.size() == 2 && x[0].is_string() && x[1].is_string() &&
                    has_shape(x[0].get_ref<const std::string&>(), Field::Name) && has_shape(x[1].get_ref<const std::string&>(), Field::Expr);
        if (!pair) bad_field(s, "args", "'args' holds [name, expression] pairs");
        uint32_t v = b.argument(st, token(x[0].get_ref<const std::string&>(), l));
        read(x[1].get_ref<const std::string&>(), l);
        st.args.push_back({v, b.expr()});
        b.expect_end();
      }
      b.end_submit_list(st, l);
    } else if (k == "wait" || k == "signal") {
      st.kind = k == "wait" ? StmtKind::Wait : StmtKind::Signal;
      st.id = b.signal(token(s, "signal", Field::Name, l));
      st.value = expr(s, "value", l);
    } else if (k == "read" || k == "write") {
      st.kind = k == "read" ? StmtKind::Read : StmtKind::Write;
      st.range = range(str(s, "range", Field::Range), l);
    } else if (k == "free" || k == "alloc") {
      st.kind = k == "free" ? StmtKind::Free : StmtKind::Alloc;
      st.object = b.memory(token(s, "object", Field::Name, l), k.c_str());
    } else if (k == "repeat") {
      if (++depth > kMaxDepth) bad(s, "blocks nested too deeply");
      std::string n = declare(s, "var", l);
      Expr lo = expr(s, "from", l), hi = expr(s, "to", l);
      b.begin_repeat(st, n, l, std::move(lo), l, std::move(hi), l, depth - 1);
      st.body = stmts(arr(s, "body"));
      b.end_repeat();
      --depth;
    } else {
      bad_field(s, "kind", "unknown statement kind '" + shown(k) + "'");
    }
    return st;
  }
  // One entry of "expect": {"clean": true} or {"rule": R, "lines": [L] or [L1, L2]}.
  Expectation expectation(const J& e) const {
    Loc l = where(e);
    if (e.contains("clean")) {
      if (e["clean"] != true || e.contains("rule") || e.contains("lines"))
        bad_field(e, "clean", "an expectation is {\"clean\": true} or {\"rule\": R, \"lines\": [L] or [L1, L2]}");
      Expectation x;
      x.loc = l;
      x.clean = true;
      return x;
    }
    std::string rule = get(e, "rule", J::value_t::string, "a string").get<std::string>();
    if (!find_rule(rule)) bad_field(e, "rule", "unknown rule '" + shown(rule) + "' in an expectation");
    const J& lines = arr(e, "lines");
    bool ok = !lines.empty() && lines.size() <= 2;
    for (const J& n : lines) ok = ok && n.is_number_unsigned() && n.get<uint64_t>() >= 1 && n.get<uint64_t>() <= UINT32_MAX;
    if (!ok) bad_field(e, "lines", "'lines' must hold one or two line numbers");
    std::string item = rule + "@" + std::to_string(lines[0].get<uint64_t>());
    if (lines.size() == 2) item += "," + std::to_string(lines[1].get<uint64_t>());
    return parse_expectation(item, l);
  }
};

// Line and column of byte offset `off` in `text`.
Loc offset_loc(const std::string& text, size_t off, uint32_t file) {
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < off && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return {file, line, col};
}

}  // namespace

std::string write_json_program(const Program& p, const SourceSet& src, bool with_locs) {
  Writer w{p, with_locs};
  J out{{"format", "qvet-program"}, {"version", 1}, {"source", src.name(p.file)}};
  out["statements"] = w.stmts(p.stmts);
  J ex = J::array();
  for (auto& e : p.expects) {
    J j = e.clean ? J{{"clean", true}} : J{{"rule", e.rule}, {"lines", e.line2 ? J{e.line1, e.line2} : J{e.line1}}};
    if (with_locs) j["loc"] = loc_json(e.loc);
    ex.push_back(j);
  }
  out["expect"] = ex;
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

J parse_json(const std::string& text, uint32_t file) {
  try {
    // Deeply nested JSON would exhaust the stack later (destruction, lowering): refuse it here.
    J::parser_callback_t depth_guard = [file](int depth, J::parse_event_t, J&) {
      if (depth > 512) throw InputError{{file, 1, 1}, "invalid JSON program: nested deeper than 512 levels"};
      return true;
    };
    return J::parse(text, depth_guard, true, false);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    auto p = msg.find("] ");
    throw InputError{offset_loc(text, e.byte ? e.byte - 1 : 0, file), "invalid JSON: " + (p == std::string::npos ? msg : msg.substr(p + 2))};
  } catch (const nlohmann::json::exception& e) {
    throw InputError{{file, 1, 1}, std::string("invalid JSON: ") + e.what()};
  }
}

// The top-level fields other than "statements" and "expect": "format", "version", "source".
// Returns the source's name.
std::string check_header(const J& j, JsonPositions& pos, uint32_t file, const std::string& file_name) {
  if (!j.is_object() || !j.contains("format") || j["format"] != "qvet-program")
    throw InputError{j.is_object() ? pos.of_field(j, "format") : Loc{file, 1, 1},
                     "JSON input is not a qvet program (expected \"format\": \"qvet-program\")"};
  if (auto [at, key] = pos.duplicate_key(); at.valid())
    throw InputError{at, "invalid JSON program: key '" + shown(key) + "' appears twice in one object"};
  if (j.contains("version") && j["version"] != 1)
    throw InputError{pos.of_field(j, "version"), "invalid JSON program: unsupported 'version' (this qvet reads version 1)"};
  if (!j.contains("source")) return file_name;
  const J& s = j["source"];
  bool ok = s.is_string() && !s.get_ref<const std::string&>().empty() && s.get_ref<const std::string&>().size() <= 4096 &&
            std::none_of(s.get_ref<const std::string&>().begin(), s.get_ref<const std::string&>().end(),
                         [](char c) { return (c >= 0 && c < 32) || c == 127; });
  if (!ok) throw InputError{pos.of_field(j, "source"), "invalid JSON program: 'source' must be a file name (a string without control characters)"};
  return s.get<std::string>();
}

// Quotes the .hcq source a valid JSON program's locations refer to only when that is safe and
// it is the program's own source: a `.hcq` regular file (never a device, a FIFO or a directory;
// checked before it is opened) of at most 16 MiB whose program prints the same as `p`. A
// `source` naming /etc/passwd or /dev/zero is never read, let alone quoted.
void attach_own_source(SourceSet& src, uint32_t source_file, const Program& p) {
  const std::string& name = src.name(source_file);
  constexpr size_t kMaxQuotedSource = 16u << 20;
  std::string text;
  if (name.size() < 4 || name.compare(name.size() - 4, 4, ".hcq") != 0 || !read_regular_file(name, kMaxQuotedSource, text)) return;
  SourceSet scratch;
  try {
    if (print_program(parse_hcq(scratch, scratch.add(name, text))) != print_program(p)) return;
  } catch (const InputError&) {
    return;
  }
  src.set_text(source_file, std::move(text));
}

}  // namespace

Program read_json_program(SourceSet& src, uint32_t file) {
  const std::string& text = src.text(file);
  J j = parse_json(text, file);
  JsonPositions pos(text, j, file);
  std::string source = check_header(j, pos, file, src.name(file));
  bool is_itself = source == src.name(file);  // locations in the JSON text: the file the user named
  uint32_t source_file = src.add(source, is_itself ? text : "");
  Reader r{pos, source_file};
  try {
    r.b.program().stmts = r.stmts(r.arr(j, "statements"));
    if (j.contains("expect"))
      r.each_object(r.arr(j, "expect"), "expectation", [&](const J& e) { r.b.add_expectation(r.expectation(e)); });
  } catch (const nlohmann::json::exception& e) {  // a check above missed a type: still an input error
    throw InputError{{file, 1, 1}, std::string("invalid JSON program: ") + e.what()};
  }
  Program p = r.b.finish();
  if (!is_itself) attach_own_source(src, source_file, p);
  return p;
}

}  // namespace qvet
