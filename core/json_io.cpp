#include "core/json_io.h"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/parser.h"
#include "core/printer.h"

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

// Lowers JSON statements to .hcq lines, remembering each line's original location.
struct Lowerer {
  uint32_t source_file;
  std::string text;
  std::vector<Loc> map;

  Loc loc_of(const J& j) const {
    if (!j.is_object() || !j.contains("loc")) return {};
    const J& l = j["loc"];
    if (!l.is_object() || !l.contains("line") || !l["line"].is_number_unsigned()) return {};
    uint32_t col = l.contains("column") && l["column"].is_number_unsigned() ? l["column"].get<uint32_t>() : 0;
    return {source_file, l["line"].get<uint32_t>(), col};
  }
  [[noreturn]] void bad(const J& j, const std::string& msg) const {
    Loc l = loc_of(j);
    throw InputError{l.valid() ? l : Loc{source_file, 0, 0}, "invalid JSON program: " + msg};
  }
  std::string str(const J& j, const char* key) const {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string()) bad(j, std::string("missing string field '") + key + "'");
    std::string s = j[key].get<std::string>();
    if (s.find('\n') != std::string::npos || s.find('#') != std::string::npos || s.find('{') != std::string::npos ||
        s.find('}') != std::string::npos)
      bad(j, std::string("field '") + key + "' holds characters that are not allowed there");
    return s;
  }
  const J& arr(const J& j, const char* key) const {
    if (!j.is_object() || !j.contains(key) || !j[key].is_array()) bad(j, std::string("missing array field '") + key + "'");
    return j[key];
  }
  void line(const std::string& s, const J& node) {
    text += s + "\n";
    map.push_back(loc_of(node));
  }
  std::string join(const J& j, const char* key) const {
    std::string s;
    for (auto& x : arr(j, key)) {
      if (!x.is_string()) bad(j, std::string("'") + key + "' must hold strings");
      s += (s.empty() ? "" : ", ") + x.get<std::string>();
    }
    return s;
  }
  void commands(const J& body, const J& owner) {
    if (!body.is_array()) bad(owner, "'body' must be an array");
    for (const J& c : body) {
      std::string op = str(c, "op");
      if (op == "wait") line("wait " + str(c, "signal") + " >= " + str(c, "value"), c);
      else if (op == "signal") line("signal " + str(c, "signal") + " = " + str(c, "value"), c);
      else if (op == "timestamp") line("timestamp " + str(c, "signal"), c);
      else if (op == "exec") {
        std::string s = "exec " + str(c, "kernel");
        if (c.contains("reads") && !arr(c, "reads").empty()) s += " reads " + join(c, "reads");
        if (c.contains("writes") && !arr(c, "writes").empty()) s += " writes " + join(c, "writes");
        line(s, c);
      } else if (op == "copy") line("copy " + str(c, "src") + " -> " + str(c, "dst"), c);
      else if (op == "barrier" || op == "memory_barrier") line(op, c);
      else bad(c, "unknown command op '" + op + "'");
    }
  }
  int depth = 0;
  void stmts(const J& list, const J& owner) {
    if (!list.is_array()) bad(owner, "statements must be an array");
    if (++depth > 256) bad(owner, "blocks nested too deeply");
    for (const J& s : list) stmt(s);
    --depth;
  }
  void stmt(const J& s) {
    std::string k = str(s, "kind");
    if (k == "device") line("device " + str(s, "name") + " " + str(s, "arch"), s);
    else if (k == "peer") {
      const J& d = arr(s, "devices");
      if (d.size() != 2 || !d[0].is_string() || !d[1].is_string()) bad(s, "'devices' must name two devices");
      line("peer " + d[0].get<std::string>() + " " + d[1].get<std::string>(), s);
    } else if (k == "map") line("map " + str(s, "object") + " into " + str(s, "into"), s);
    else if (k == "buffer") {
      if (s.contains("view")) line("buffer " + str(s, "name") + " = " + str(s, "view"), s);
      else line("buffer " + str(s, "name") + " on " + str(s, "on") + " " + str(s, "size"), s);
    } else if (k == "signal_decl") {
      line("signal " + str(s, "name") + " on " + str(s, "on") + (s.contains("init") ? " = " + str(s, "init") : ""), s);
    } else if (k == "queue") {
      line("queue " + str(s, "name") + " on " + str(s, "on") + " " + str(s, "engine") +
               (s.contains("ordering") ? " ordering " + str(s, "ordering") : ""), s);
    } else if (k == "param") line("param " + str(s, "name") + " " + join(s, "constraints"), s);
    else if (k == "commands") {
      line("commands " + str(s, "name") + "(" + join(s, "params") + ") {", s);
      commands(arr(s, "body"), s);
      line("}", s);
    } else if (k == "submit") {
      line("submit " + str(s, "queue") + " {", s);
      commands(arr(s, "body"), s);
      line("}", s);
    } else if (k == "submit_list") {
      std::string a;
      for (const J& x : arr(s, "args")) {
        if (!x.is_array() || x.size() != 2 || !x[0].is_string() || !x[1].is_string()) bad(s, "'args' holds [name, value] pairs");
        a += (a.empty() ? "" : ", ") + x[0].get<std::string>() + " = " + x[1].get<std::string>();
      }
      line("submit " + str(s, "queue") + " " + str(s, "list") + "(" + a + ")", s);
    } else if (k == "wait") line("wait " + str(s, "signal") + " >= " + str(s, "value"), s);
    else if (k == "signal") line("signal " + str(s, "signal") + " = " + str(s, "value"), s);
    else if (k == "read" || k == "write") line(k + " " + str(s, "range"), s);
    else if (k == "free" || k == "alloc") line(k + " " + str(s, "object"), s);
    else if (k == "repeat") {
      line("repeat " + str(s, "var") + " in " + str(s, "from") + ".." + str(s, "to") + " {", s);
      stmts(arr(s, "body"), s);
      line("}", s);
    } else bad(s, "unknown statement kind '" + k + "'");
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
  return out.dump(2) + "\n";
}

Program read_json_program(SourceSet& src, uint32_t file) {
  const std::string& text = src.text(file);
  J j;
  try {
    // Deeply nested JSON would exhaust the stack later (destruction, lowering): refuse it here.
    J::parser_callback_t depth_guard = [file](int depth, J::parse_event_t, J&) {
      if (depth > 512) throw InputError{{file, 1, 1}, "invalid JSON program: nested deeper than 512 levels"};
      return true;
    };
    j = J::parse(text, depth_guard, true, false);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    auto p = msg.find("] ");
    throw InputError{offset_loc(text, e.byte ? e.byte - 1 : 0, file), "invalid JSON: " + (p == std::string::npos ? msg : msg.substr(p + 2))};
  } catch (const nlohmann::json::exception& e) {
    throw InputError{{file, 1, 1}, std::string("invalid JSON: ") + e.what()};
  }
  if (!j.is_object() || j.value("format", "") != "qvet-program")
    throw InputError{{file, 1, 1}, "JSON input is not a qvet program (expected \"format\": \"qvet-program\")"};
  // Locations refer to the .hcq source the JSON was printed from; quote it when it is readable.
  std::string source = j.contains("source") && j["source"].is_string() ? j["source"].get<std::string>() : src.name(file);
  uint32_t source_file = src.add(source, "");
  if (std::ifstream in{source, std::ios::binary}) src.set_text(source_file, std::string(std::istreambuf_iterator<char>(in), {}));
  Lowerer low{source_file, {}, {}};
  try {
    if (!j.contains("statements")) low.bad(j, "missing 'statements'");
    low.stmts(j["statements"], j);
  } catch (const nlohmann::json::exception& e) {
    throw InputError{{file, 1, 1}, std::string("invalid JSON program: ") + e.what()};
  }
  uint32_t lowered = src.add(src.name(file) + " (lowered)", std::move(low.text));
  for (Loc& l : low.map)
    if (!l.valid()) l = Loc{file, 1, 1};
  Program p = parse_hcq(src, lowered, &low.map);
  p.file = source_file;
  if (j.contains("expect") && j["expect"].is_array()) {
    for (const J& e : j["expect"]) {
      Loc l = low.loc_of(e);
      if (!l.valid()) l = {file, 1, 1};
      if (e.is_object() && e.value("clean", false)) {
        Expectation x;
        x.loc = l;
        x.clean = true;
        p.expects.push_back(x);
      } else if (e.is_object() && e.contains("rule") && e["rule"].is_string() && e.contains("lines") && e["lines"].is_array() &&
                 !e["lines"].empty() && e["lines"].size() <= 2 && e["lines"][0].is_number_unsigned()) {
        std::string item = e["rule"].get<std::string>() + "@" + std::to_string(e["lines"][0].get<uint64_t>());
        if (e["lines"].size() == 2 && e["lines"][1].is_number_unsigned()) item += "," + std::to_string(e["lines"][1].get<uint64_t>());
        p.expects.push_back(parse_expectation(item, l));
      } else {
        throw InputError{l, "invalid JSON program: malformed expectation"};
      }
    }
  }
  return p;
}

}  // namespace qvet
