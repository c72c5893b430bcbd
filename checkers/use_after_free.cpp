// Rule `use-after-free`: a command or host statement that ran and touched a buffer or signal
// that was not live when it was submitted (after its `free`, before its `alloc`).
#include "checkers/checker.h"

namespace qvet {

namespace {

class UseAfterFreeChecker : public Checker {
 public:
  using Checker::Checker;

  void finish() override {
    const Trace& t = c_.t;
    for (uint32_t id = 0; id < t.cmds.size(); ++id) {
      if (!c_.e.ran({false, id})) continue;  // commands that never run are exempt
      const TraceCmd& c = t.cmds[id];
      for (uint32_t a = c.acc_begin; a < c.acc_end; ++a)
        if (t.accesses[a].freed_by != kNone) report({false, id}, c_.p.buffers[t.accesses[a].buffer].name, t.accesses[a].freed_by);
      if (c.signal_freed_by != kNone) report({false, id}, c_.p.signals[c.signal].name, c.signal_freed_by);
    }
    for (uint32_t h = 0; h < t.host.size(); ++h) {
      if (!c_.e.ran({true, h})) continue;
      const HostEvent& e = t.host[h];
      for (uint32_t a = e.acc_begin; a < e.acc_end; ++a)
        if (t.accesses[a].freed_by != kNone) report({true, h}, c_.p.buffers[t.accesses[a].buffer].name, t.accesses[a].freed_by);
      if (e.signal_freed_by != kNone) report({true, h}, c_.p.signals[e.signal].name, e.signal_freed_by);
    }
  }

 private:
  void report(EventRef ev, const std::string& name, uint32_t free_event) {
    Diagnostic d;
    d.set_rule(Rule::UseAfterFree);
    d.loc = c_.loc(ev);
    d.message = c_.what(ev) + " uses '" + name + "', which was freed before this was submitted (its memory may belong to another allocation)";
    d.related.push_back({c_.t.host[free_event].loc, "'" + name + "' is freed here"});
    d.fixes.push_back({"move the `free " + name + "` after the last use, or `alloc " + name + "` again before it", {}});
    c_.sink.add(std::move(d), c_.ctx(ev));
  }
};

}  // namespace

std::unique_ptr<Checker> make_use_after_free_checker(const CheckContext& c) { return std::make_unique<UseAfterFreeChecker>(c); }

}  // namespace qvet
