// Rule `value-width`: a wait threshold or signal value outside [0, 2^w) for the operation's
// width w (model/profile.h: AMD waits and signals and NVIDIA copy releases are 32-bit). Applies
// to every command, also those that never run.
#include "checkers/checker.h"
#include "core/syntax/printer.h"
#include "model/profile.h"

namespace qvet {

namespace {

class ValueWidthChecker : public Checker {
 public:
  using Checker::Checker;

  void finish() override {
    symbolic(c_.p.stmts);
    for (uint32_t id = 0; id < c_.t.cmds.size(); ++id) {
      const TraceCmd& c = c_.t.cmds[id];
      if (c.op != CmdOp::Wait && c.op != CmdOp::Signal) continue;
      int w = c.op == CmdOp::Wait ? wait_width(c_.p, c.queue) : signal_width(c_.p, c.queue);
      check({false, id}, c.value, w, c.op == CmdOp::Wait);
    }
    for (uint32_t h = 0; h < c_.t.host.size(); ++h) {
      const HostEvent& e = c_.t.host[h];
      if (e.op == HostOp::Wait || e.op == HostOp::Signal) check({true, h}, e.value, kHostWidth, e.op == HostOp::Wait);
    }
  }

 private:
  // Values that depend on params only are decided for every admissible value (their constraint
  // boxes bound affine expressions exactly); values with loop variables are checked per iteration.
  void symbolic(const std::vector<Stmt>& stmts) {
    const Program& p = c_.p;
    for (const Stmt& s : stmts) {
      if (s.kind == StmtKind::Repeat) symbolic(s.body);
      if (s.kind == StmtKind::Wait || s.kind == StmtKind::Signal) decide(s.value, s.loc, kHostWidth, s.kind == StmtKind::Wait, "the host");
      if (s.kind != StmtKind::Submit && s.kind != StmtKind::SubmitList) continue;
      const std::vector<Command>& cmds = s.kind == StmtKind::Submit ? s.cmds : p.lists[s.id2].body;
      for (const Command& c : cmds) {
        if (c.op != CmdOp::Wait && c.op != CmdOp::Signal) continue;
        Expr e = c.value;
        for (auto& [v, a] : s.args) e = e.substitute(v, a);
        bool wait = c.op == CmdOp::Wait;
        int w = wait ? wait_width(p, s.id) : signal_width(p, s.id);
        const Queue& q = p.queues[s.id];
        decide(e, c.loc, w, wait, "queue " + q.name + " (" + arch_name(p.devices[q.device].arch) + " " + engine_name(q.engine) + ")");
      }
    }
  }
  void decide(const Expr& e, Loc loc, int width, bool wait, const std::string& on) {
    if (e.is_constant()) return;  // constants are checked with the trace
    for (auto& [v, coef] : e.terms)
      if (c_.p.vars[v].kind != Var::Param) return;
    std::vector<Interval> ranges;
    for (auto& v : c_.p.vars) ranges.push_back(v.range);
    Interval b = bounds(e, ranges);
    i128 limit = i128(1) << width;
    if (b.lo >= 0 && b.hi < limit) return;
    bool high = b.hi >= limit;
    std::string cex;
    for (auto& [v, coef] : e.terms) {
      const Interval& r = c_.p.vars[v].range;
      i128 val = (coef > 0) == high ? r.hi : r.lo;
      cex += (cex.empty() ? "" : ", ") + c_.p.vars[v].name + " = " + format_int(val);
    }
    Diagnostic d;
    d.set_rule(Rule::ValueWidth);
    d.loc = loc;
    d.message = std::string(wait ? "wait threshold " : "signal value ") + "'" + to_string(e, c_.p.var_names()) +
                "' does not fit the " + std::to_string(width) + "-bit " + (wait ? "wait" : "signal") + " of " + on +
                " for every admissible value: with " + cex + " it is " + format_int(high ? b.hi : b.lo) +
                ", outside [0, 2^" + std::to_string(width) + ")";
    c_.sink.add(std::move(d), 0);
  }

  void check(EventRef ev, i128 v, int width, bool wait) {
    i128 limit = i128(1) << width;
    if (v >= 0 && v < limit) return;
    Diagnostic d;
    d.set_rule(Rule::ValueWidth);
    d.loc = c_.loc(ev);
    std::string on = ev.host ? "the host" : "queue " + c_.p.queues[c_.t.cmds[ev.id].queue].name + " (" +
                                               arch_name(c_.p.devices[c_.p.queues[c_.t.cmds[ev.id].queue].device].arch) + " " +
                                               engine_name(c_.p.queues[c_.t.cmds[ev.id].queue].engine) + ")";
    d.message = std::string(wait ? "wait threshold " : "signal value ") + i128_to_string(v) + " does not fit the " +
                std::to_string(width) + "-bit " + (wait ? "wait" : "signal") + " of " + on + ": values must lie in [0, 2^" +
                std::to_string(width) + ")";
    if (width == 32 && v >= limit)
      d.notes.push_back({{}, "the hardware compares or writes only the low 32 bits (" + i128_to_string(v & (limit - 1)) + ")"});
    c_.sink.add(std::move(d), c_.ctx(ev));
  }
};

}  // namespace

std::unique_ptr<Checker> make_value_width_checker(const CheckContext& c) { return std::make_unique<ValueWidthChecker>(c); }

}  // namespace qvet
