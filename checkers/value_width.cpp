// Rule `value-width`: a wait threshold or signal value outside [0, 2^w) for the operation's
// width w (model/profile.h: AMD waits and signals and NVIDIA copy releases are 32-bit). Applies
// to every command, also those that never run.
#include "checkers/checker.h"
#include "model/profile.h"

namespace qvet {

namespace {

class ValueWidthChecker : public Checker {
 public:
  using Checker::Checker;

  void finish() override {
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
  void check(EventRef ev, i128 v, int width, bool wait) {
    i128 limit = i128(1) << width;
    if (v >= 0 && v < limit) return;
    Diagnostic d;
    d.rule = "value-width";
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
