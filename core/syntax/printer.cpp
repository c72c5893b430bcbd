#include "core/syntax/printer.h"

namespace qvet {


std::string format_size(const Expr& e, const std::vector<std::string>& names) {
  if (e.is_constant() && e.constant > 0) {
    i128 v = e.constant;
    if (v % (i128(1) << 30) == 0) return i128_to_string(v >> 30) + "G";
    if (v % (i128(1) << 20) == 0) return i128_to_string(v >> 20) + "M";
    if (v % (i128(1) << 10) == 0) return i128_to_string(v >> 10) + "K";
  }
  return to_string(e, names);
}

std::string print_range(const Program& p, const Range& r) {
  const std::string& n = p.buffers[r.buffer].name;
  if (r.whole) return n;
  auto names = p.var_names();
  return n + "[" + format_size(r.lo, names) + ":" + format_size(r.hi, names) + "]";
}

std::string print_command(const Program& p, const Command& c) {
  auto names = p.var_names();
  auto sig = [&] { return p.signals[c.signal].name; };
  switch (c.op) {
    case CmdOp::Wait: return "wait " + sig() + " >= " + to_string(c.value, names);
    case CmdOp::Signal: return "signal " + sig() + " = " + to_string(c.value, names);
    case CmdOp::Timestamp: return "timestamp " + sig();
    case CmdOp::Exec: {
      std::string s = "exec " + p.kernels[c.kernel];
      for (auto [word, list] : {std::pair{" reads ", &c.reads}, std::pair{" writes ", &c.writes}}) {
        if (list->empty()) continue;
        s += word;
        for (size_t i = 0; i < list->size(); ++i) s += (i ? ", " : "") + print_range(p, (*list)[i]);
      }
      return s;
    }
    case CmdOp::Copy: return "copy " + print_range(p, c.reads[0]) + " -> " + print_range(p, c.writes[0]);
    case CmdOp::Barrier: return "barrier";
    case CmdOp::MemoryBarrier: return "memory_barrier";
  }
  return "";
}

std::string owner_name(const Program& p, uint32_t owner) { return owner == kHostAgent ? "host" : p.devices[owner].name; }

std::string print_view(const Program& p, const Buffer& b) {
  Range r{b.loc, b.parent, false, b.lo, b.hi, b.base};
  return print_range(p, r);
}

std::string print_constraint(const Constraint& c, const std::vector<std::string>& names) {
  switch (c.kind) {
    case Constraint::Ge: return ">= " + to_string(c.a, names);
    case Constraint::Le: return "<= " + to_string(c.a, names);
    case Constraint::In: return "in " + to_string(c.a, names) + ".." + to_string(c.b, names);
  }
  return "";
}

namespace {

// `src` set: a command decoded from another file (a stream) carries `# FILE:DWORD` (qvet decode).
void print_stmts(const Program& p, const std::vector<Stmt>& stmts, int indent, std::string& out, const SourceSet* src) {
  auto names = p.var_names();
  std::string pad(indent * 2, ' ');
  auto line = [&](const std::string& s) { out += pad + s + "\n"; };
  auto block = [&](const std::string& head, const std::vector<Command>& cmds) {
    line(head + " {");
    for (auto& c : cmds) {
      out += pad + "  " + print_command(p, c);
      if (src && c.loc.valid() && c.loc.file != p.file) {
        const std::string& f = src->name(c.loc.file);
        out += "  # " + f.substr(f.find_last_of('/') + 1) + ":" + std::to_string(c.loc.line);
      }
      out += "\n";
    }
    line("}");
  };
  for (const Stmt& s : stmts) {
    switch (s.kind) {
      case StmtKind::Device: line("device " + p.devices[s.id].name + " " + arch_name(p.devices[s.id].arch)); break;
      case StmtKind::Peer: line("peer " + p.devices[s.id].name + " " + p.devices[s.id2].name); break;
      case StmtKind::Map: line("map " + p.object_name(s.object) + " into " + p.devices[s.id2].name); break;
      case StmtKind::Buffer: {
        const Buffer& b = p.buffers[s.id];
        if (b.is_view()) {
          line("buffer " + b.name + " = " + print_view(p, b));
        } else {
          line("buffer " + b.name + " on " + owner_name(p, b.owner) + " " + format_size(b.size, names));
        }
        break;
      }
      case StmtKind::SignalDecl: {
        const Signal& g = p.signals[s.id];
        line("signal " + g.name + " on " + owner_name(p, g.owner) + (g.init_written ? " = " + to_string(g.init, names) : ""));
        break;
      }
      case StmtKind::Queue: {
        const Queue& q = p.queues[s.id];
        std::string t = "queue " + q.name + " on " + p.devices[q.device].name + " " + engine_name(q.engine);
        if (q.ordering != Ordering::Default) t += std::string(" ordering ") + ordering_name(q.ordering);
        line(t);
        break;
      }
      case StmtKind::Param: {
        const Var& v = p.vars[s.id];
        std::string t = "param " + v.name;
        for (size_t i = 0; i < v.constraints.size(); ++i) t += (i ? ", " : " ") + print_constraint(v.constraints[i], names);
        line(t);
        break;
      }
      case StmtKind::CommandList: {
        const CommandList& cl = p.lists[s.id];
        std::string head = "commands " + cl.name + "(";
        for (size_t i = 0; i < cl.params.size(); ++i) head += (i ? ", " : "") + p.vars[cl.params[i]].name;
        block(head + ")", cl.body);
        break;
      }
      case StmtKind::Submit: block("submit " + p.queues[s.id].name, s.cmds); break;
      case StmtKind::SubmitList: {
        std::string t = "submit " + p.queues[s.id].name + " " + p.lists[s.id2].name + "(";
        for (size_t i = 0; i < s.args.size(); ++i)
          t += (i ? ", " : "") + p.vars[s.args[i].first].name + " = " + to_string(s.args[i].second, names);
        line(t + ")");
        break;
      }
      case StmtKind::Wait: line("wait " + p.signals[s.id].name + " >= " + to_string(s.value, names)); break;
      case StmtKind::Signal: line("signal " + p.signals[s.id].name + " = " + to_string(s.value, names)); break;
      case StmtKind::Read: line("read " + print_range(p, s.range)); break;
      case StmtKind::Write: line("write " + print_range(p, s.range)); break;
      case StmtKind::Free: line("free " + p.object_name(s.object)); break;
      case StmtKind::Alloc: line("alloc " + p.object_name(s.object)); break;
      case StmtKind::Repeat:
        line("repeat " + p.vars[s.id].name + " in " + to_string(s.lo, names) + ".." + to_string(s.hi, names) + " {");
        print_stmts(p, s.body, indent + 1, out, src);
        line("}");
        break;
    }
  }
}

}  // namespace

std::string print_program(const Program& p) {
  std::string out;
  print_stmts(p, p.stmts, 0, out, nullptr);
  return out;
}

std::string print_decoded(const Program& p, const SourceSet& src) {
  std::string out;
  print_stmts(p, p.stmts, 0, out, &src);
  return out;
}

}  // namespace qvet
