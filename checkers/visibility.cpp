// Rule `visibility`: on a profile whose reads need an acquire (amd), a kernel that reads bytes
// last written by another agent (the host or another device) needs a `memory_barrier` on its
// queue between that write and the read: end(w) -> start(m) and end(m) -> start(r).
// Copy engines read memory directly (DMA, no cache to invalidate), so only `exec` reads count.
#include "checkers/checker.h"
#include "checkers/shadow.h"

namespace qvet {

namespace {

class VisibilityChecker : public Checker {
 public:
  explicit VisibilityChecker(const CheckContext& c)
      : Checker(c), shadow_(c.p.buffers.size()), last_mb_(c.p.queues.size()), has_mb_(c.p.queues.size(), false) {}

  void on_command(uint32_t id, const Clock& start, const Clock&) override {
    const TraceCmd& c = c_.t.cmds[id];
    if (c.op == CmdOp::MemoryBarrier) {
      last_mb_[c.queue] = start;
      has_mb_[c.queue] = true;
    }
    uint32_t dev = c_.p.queues[c.queue].device;
    bool need = profile_of(c_.p.devices[dev].arch).reads_need_acquire && c.op == CmdOp::Exec;
    for (uint32_t a = c.acc_begin; a < c.acc_end; ++a) {
      const Access& acc = c_.t.accesses[a];
      if (acc.freed_by != kNone) continue;
      if (!acc.write && need) check_read({false, id}, acc, dev, start);
    }
    for (uint32_t a = c.acc_begin; a < c.acc_end; ++a)
      if (c_.t.accesses[a].write && c_.t.accesses[a].freed_by == kNone) record_write({false, id}, a);
  }
  void on_host(uint32_t h, const Clock&) override {
    const HostEvent& e = c_.t.host[h];
    if (e.op == HostOp::Write)
      for (uint32_t a = e.acc_begin; a < e.acc_end; ++a)
        if (c_.t.accesses[a].freed_by == kNone) record_write({true, h}, a);
  }

 private:
  ShadowMemory shadow_;  // writers: the last writes of each byte range
  std::vector<Clock> last_mb_;  // per queue: what its latest memory_barrier knew when it started
  std::vector<bool> has_mb_;

  void record_write(EventRef ev, uint32_t a) {
    const Access& acc = c_.t.accesses[a];
    shadow_.for_range(acc.buffer, acc.lo, acc.hi, [&](uint64_t, ShadowSegment& seg) {
      seg.writers.assign(1, {ev, a});
    });
  }
  void check_read(EventRef r, const Access& acc, uint32_t dev, const Clock& start) {
    uint32_t q = c_.t.cmds[r.id].queue;
    shadow_.for_range(acc.buffer, acc.lo, acc.hi, [&](uint64_t lo, ShadowSegment& seg) {
      for (const ShadowAccess& w : seg.writers) {
        if (!c_.e.known(start, w.ev) || c_.agent(w.ev) == dev) continue;  // unordered: a race; same agent: coherent
        if (has_mb_[q] && c_.e.known(last_mb_[q], w.ev)) continue;
        Diagnostic d;
        d.rule = "visibility";
        d.severity = Severity::Warning;
        d.loc = c_.loc(r);
        std::string who = w.ev.host ? "the host" : "device " + c_.p.devices[c_.agent(w.ev)].name;
        d.message = c_.what(r) + " reads bytes [" + std::to_string(lo) + ", " + std::to_string(seg.hi) + ") of '" +
                    c_.p.buffers[acc.buffer].name + "' written by " + who + " with no `memory_barrier` on queue " +
                    c_.p.queues[q].name + " after that write: the " + arch_name(c_.p.devices[dev].arch) +
                    " profile needs an acquire, so the read may see stale cached data";
        d.related.push_back({c_.loc(w.ev), "the write: " + c_.what(w.ev)});
        d.fixes.push_back({"add `memory_barrier` before line " + std::to_string(c_.loc(r).line) + " on queue " + c_.p.queues[q].name,
                           {{c_.loc(r), false, "memory_barrier"}}});
        c_.sink.add(std::move(d), c_.ctx(r));
        return;
      }
    });
  }
};

}  // namespace

std::unique_ptr<Checker> make_visibility_checker(const CheckContext& c) { return std::make_unique<VisibilityChecker>(c); }

}  // namespace qvet
