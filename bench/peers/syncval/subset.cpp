#include "bench/peers/syncval/subset.h"

#include "cli/gen.h"
#include "model/profile.h"

namespace qvet::peers {

std::string outside_subset(const Trace& t, uint64_t alignment) {
  const Program& p = *t.program;
  auto at = [&](const Loc& l) { return " (line " + std::to_string(l.line) + ")"; };
  if (p.devices.size() != 1) return "not one device";
  if (p.queues.size() != 1) return "not one queue";
  if (p.queues[0].engine != EngineKind::Compute || queue_mode(p, 0) != Mode::Overlap) return "the queue is not compute in overlap mode";
  std::vector<i128> last(p.signals.size(), -1);  // per signal: the last value a device signal wrote
  for (const TraceCmd& c : t.cmds) {
    switch (c.op) {
      case CmdOp::Exec:
        for (uint32_t a = c.acc_begin; a < c.acc_end; ++a)
          if (t.accesses[a].lo % alignment) return "an exec range not on the " + std::to_string(alignment) + "-byte storage alignment" + at(c.loc);
        break;
      case CmdOp::Copy: {
        const Access &s = t.accesses[c.acc_begin], &d = t.accesses[c.acc_begin + 1];
        if (s.buffer == d.buffer && s.lo < d.hi && d.lo < s.hi) return "a copy within one buffer whose ranges overlap" + at(c.loc);
        break;
      }
      case CmdOp::Barrier:
      case CmdOp::MemoryBarrier: break;
      case CmdOp::Signal:
        if (c.value <= last[c.signal] || c.value < 0 || c.value > i128(UINT64_MAX)) return "signal values that do not rise" + at(c.loc);
        last[c.signal] = c.value;
        break;
      default: return "a command Vulkan's subset leaves out (wait, timestamp)" + at(c.loc);
    }
  }
  std::fill(last.begin(), last.end(), -1);
  for (const HostEvent& h : t.host) {
    if (h.op == HostOp::Submit) {
      for (uint32_t id = h.cmd_begin; id < h.cmd_end; ++id)
        if (t.cmds[id].op == CmdOp::Signal) last[t.cmds[id].signal] = t.cmds[id].value;
    } else if (h.op == HostOp::Wait) {
      if (last[h.signal] < h.value) return "a host wait that no submitted signal satisfies" + at(h.loc);
      if (evaluate(p.signals[h.signal].init, t.binding) >= h.value) return "a host wait the initial value satisfies" + at(h.loc);
    } else {
      return "a host statement other than submit and wait" + at(h.loc);
    }
  }
  return "";
}

std::string random_subset_program(uint64_t seed, uint64_t commands) {
  GenOptions o;
  o.shape = "overlap-copies";
  o.seed = seed;
  o.commands = commands;
  return generate_program(o, nullptr);
}

}  // namespace qvet::peers
