#include "bench/peers/syncval/subset.h"

#include "devices/rng.h"
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
  Rng rng{seed};
  auto pick = [&](uint64_t n) { return rng.below(n); };
  const int nbuf = 4;
  const uint64_t kBuf = 4096, kAlign = 256;
  std::string s = "# qvet_syncval gen --seed " + std::to_string(seed) + " --commands " + std::to_string(commands) + "\n";
  s += "device d0 strict\n";
  for (int b = 0; b < nbuf; ++b) s += "buffer b" + std::to_string(b) + " on d0 " + std::to_string(kBuf) + "\n";
  s += "signal done on host = 0\nqueue q on d0 compute ordering overlap\n";
  auto range = [&](uint64_t max_chunks) {
    uint64_t chunks = 1 + pick(max_chunks), lo = pick(kBuf / kAlign - chunks + 1) * kAlign;
    return "b" + std::to_string(pick(nbuf)) + "[" + std::to_string(lo) + ":" + std::to_string(lo + chunks * kAlign) + "]";
  };
  uint64_t n = 0, fence = 0;
  while (n < commands) {
    s += "submit q {\n";
    uint64_t batch = std::min<uint64_t>(commands - n, 4 + pick(12));
    for (uint64_t i = 0; i < batch; ++i, ++n) {
      uint64_t r = pick(100);
      if (r < 55) {
        s += "  exec k reads " + range(2) + (pick(2) ? ", " + range(2) : "") + " writes " + range(2) + "\n";
      } else if (r < 70) {
        // Different buffers: Vulkan forbids overlapping ranges within one buffer.
        uint64_t a = pick(nbuf), b = (a + 1 + pick(nbuf - 1)) % nbuf, len = (1 + pick(4)) * 64;
        uint64_t lo1 = pick(kBuf - len + 1), lo2 = pick(kBuf - len + 1);
        s += "  copy b" + std::to_string(a) + "[" + std::to_string(lo1) + ":" + std::to_string(lo1 + len) + "] -> b" + std::to_string(b) +
             "[" + std::to_string(lo2) + ":" + std::to_string(lo2 + len) + "]\n";
      } else if (r < 88) {
        s += "  barrier\n";
      } else if (r < 94) {
        s += "  memory_barrier\n";
      } else {
        s += "  signal done = " + std::to_string(++fence) + "\n";
      }
    }
    s += "}\n";
    if (fence && pick(3) == 0) s += "wait done >= " + std::to_string(fence) + "\n";
  }
  return s;
}

}  // namespace qvet::peers
