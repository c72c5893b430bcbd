// Rule `value-width`: a wait threshold or signal value outside [0, 2^w) for the operation's
// width w (model/profile.h: AMD waits and signals and NVIDIA copy releases are 32-bit). Applies
// to every command, also those that never run. NVIDIA waits compare circularly, so on `nv` a
// wait threshold, and any agent's write to a signal an `nv` queue waits on, must stay below 2^63.
#include "checkers/checker.h"
#include "core/syntax/printer.h"
#include "model/profile.h"

namespace qvet {

namespace {

class ValueWidthChecker : public Checker {
 public:
  using Checker::Checker;

  void finish() override {
    circular_ = std::vector<uint32_t>(c_.p.signals.size(), kNone);
    find_circular(c_.p.stmts);
    symbolic(c_.p.stmts);
    for (uint32_t id = 0; id < c_.t.cmds.size(); ++id) {
      const TraceCmd& c = c_.t.cmds[id];
      if (c.op != CmdOp::Wait && c.op != CmdOp::Signal) continue;
      bool wait = c.op == CmdOp::Wait;
      int w = wait ? wait_width(c_.p, c.queue) : signal_width(c_.p, c.queue);
      check({false, id}, c.value, limit(w, wait, wait ? c.queue : kNone, c.signal), wait);
    }
    for (uint32_t h = 0; h < c_.t.host.size(); ++h) {
      const HostEvent& e = c_.t.host[h];
      bool wait = e.op == HostOp::Wait;
      if (wait || e.op == HostOp::Signal) check({true, h}, e.value, limit(kHostWidth, wait, kNone, e.signal), wait);
    }
  }

 private:
  // Per signal, an `nv` queue that waits on it (kNone: none): its writes must stay below 2^63.
  std::vector<uint32_t> circular_;
  // The bound on a value, in bits, and why: the width, or the circular compare.
  struct Limit {
    int bits;
    uint32_t circular_queue = kNone;  // the queue whose circular waits set it
  };
  Limit limit(int width, bool wait, uint32_t waiting_queue, uint32_t signal) const {
    if (wait && waiting_queue != kNone && circular_waits(c_.p, waiting_queue) && width > kCircularBits)
      return {kCircularBits, waiting_queue};
    if (!wait && signal != kNone && circular_[signal] != kNone && width > kCircularBits) return {kCircularBits, circular_[signal]};
    return {width};
  }
  void find_circular(const std::vector<Stmt>& stmts) {
    for (const Stmt& s : stmts) {
      if (s.kind == StmtKind::Repeat) find_circular(s.body);
      if ((s.kind != StmtKind::Submit && s.kind != StmtKind::SubmitList) || !circular_waits(c_.p, s.id)) continue;
      for (const Command& c : s.kind == StmtKind::Submit ? s.cmds : c_.p.lists[s.id2].body)
        if (c.op == CmdOp::Wait && c.signal != kNone && circular_[c.signal] == kNone) circular_[c.signal] = s.id;
    }
  }
  std::string circular_reason(const Limit& l, bool wait, uint32_t signal) const {
    const Queue& q = c_.p.queues[l.circular_queue];
    std::string who = wait ? "queue " + q.name : "'" + c_.p.signals[signal].name + "' is waited on by queue " + q.name;
    return who + " (" + arch_name(c_.p.devices[q.device].arch) + "), whose waits compare circularly (ACQ_CIRC_GEQ: the word meets v when "
           "(word - v) mod 2^64 < 2^63), which agrees with >= only below 2^63";
  }
  // Values that depend on params only are decided for every admissible value (their constraint
  // boxes bound affine expressions exactly); values with loop variables are checked per iteration.
  void symbolic(const std::vector<Stmt>& stmts) {
    const Program& p = c_.p;
    for (const Stmt& s : stmts) {
      if (s.kind == StmtKind::Repeat) symbolic(s.body);
      if (s.kind == StmtKind::Wait || s.kind == StmtKind::Signal) {
        bool wait = s.kind == StmtKind::Wait;
        decide(s.value, s.loc, limit(kHostWidth, wait, kNone, s.id), wait, "the host", s.id);
      }
      if (s.kind != StmtKind::Submit && s.kind != StmtKind::SubmitList) continue;
      const std::vector<Command>& cmds = s.kind == StmtKind::Submit ? s.cmds : p.lists[s.id2].body;
      for (const Command& c : cmds) {
        if (c.op != CmdOp::Wait && c.op != CmdOp::Signal) continue;
        Expr e = c.value;
        for (auto& [v, a] : s.args) e = e.substitute(v, a);
        bool wait = c.op == CmdOp::Wait;
        int w = wait ? wait_width(p, s.id) : signal_width(p, s.id);
        const Queue& q = p.queues[s.id];
        decide(e, c.loc, limit(w, wait, s.id, c.signal), wait,
               "queue " + q.name + " (" + arch_name(p.devices[q.device].arch) + " " + engine_name(q.engine) + ")", c.signal);
      }
    }
  }
  void decide(const Expr& e, Loc loc, Limit lim, bool wait, const std::string& on, uint32_t signal) {
    int width = lim.bits;
    if (e.is_constant()) return;  // constants are checked with the trace
    for (auto& [v, coef] : e.terms)
      if (c_.p.vars[v].kind != Var::Param) return;
    std::vector<Interval> ranges;
    for (auto& v : c_.p.vars) ranges.push_back(v.range);
    Interval b = bounds(e, ranges);
    i128 bound = i128(1) << width;
    if (b.lo >= 0 && b.hi < bound) return;
    bool high = b.hi >= bound;
    std::string cex;
    for (auto& [v, coef] : e.terms) {
      const Interval& r = c_.p.vars[v].range;
      i128 val = (coef > 0) == high ? r.hi : r.lo;
      cex += (cex.empty() ? "" : ", ") + c_.p.vars[v].name + " = " + format_int(val);
    }
    Diagnostic d;
    d.set_rule(Rule::ValueWidth);
    d.loc = loc;
    std::string what = lim.circular_queue != kNone ? "[0, 2^63) (" + circular_reason(lim, wait, signal) + ")"
                                                   : "the " + std::to_string(width) + "-bit " + (wait ? "wait" : "signal") + " of " + on;
    d.message = std::string(wait ? "wait threshold " : "signal value ") + "'" + to_string(e, c_.p.var_names()) +
                "' does not fit " + what + " for every admissible value: with " + cex + " it is " + format_int(high ? b.hi : b.lo) +
                ", outside [0, 2^" + std::to_string(width) + ")";
    c_.sink.add(std::move(d), 0);
  }

  void check(EventRef ev, i128 v, Limit lim, bool wait) {
    if (v < 0) lim = {kHostWidth};  // below 0: the operation's width says it (every width here is 64 or 32)
    if (v < 0 && !ev.host) lim = {wait ? wait_width(c_.p, c_.t.cmds[ev.id].queue) : signal_width(c_.p, c_.t.cmds[ev.id].queue)};
    int width = lim.bits;
    i128 bound = i128(1) << width;
    if (v >= 0 && v < bound) return;
    Diagnostic d;
    d.set_rule(Rule::ValueWidth);
    d.loc = c_.loc(ev);
    std::string on = ev.host ? "the host" : "queue " + c_.p.queues[c_.t.cmds[ev.id].queue].name + " (" +
                                               arch_name(c_.p.devices[c_.p.queues[c_.t.cmds[ev.id].queue].device].arch) + " " +
                                               engine_name(c_.p.queues[c_.t.cmds[ev.id].queue].engine) + ")";
    if (lim.circular_queue != kNone)
      d.message = std::string(wait ? "wait threshold " : "signal value ") + i128_to_string(v) + " does not fit below 2^63 on " + on +
                  ": " + circular_reason(lim, wait, c_.t.signal(ev)) + "; values must lie in [0, 2^63)";
    else
      d.message = std::string(wait ? "wait threshold " : "signal value ") + i128_to_string(v) + " does not fit the " +
                  std::to_string(width) + "-bit " + (wait ? "wait" : "signal") + " of " + on + ": values must lie in [0, 2^" +
                  std::to_string(width) + ")";
    if (width == 32 && v >= bound)
      d.notes.push_back({{}, "the hardware compares or writes only the low 32 bits (" + i128_to_string(v & (bound - 1)) + ")"});
    c_.sink.add(std::move(d), c_.ctx(ev));
  }
};

}  // namespace

std::unique_ptr<Checker> make_value_width_checker(const CheckContext& c) { return std::make_unique<ValueWidthChecker>(c); }

}  // namespace qvet
