// Rule `free-in-flight`: a `free` of memory that a command submitted during its lifetime may
// still be using: the command's end does not happen before the free. Grouped per queue: one
// diagnostic per (free, queue), related to the last such command of the queue.
#include "checkers/checker.h"

namespace qvet {

namespace {

class FreeInFlightChecker : public Checker {
 public:
  explicit FreeInFlightChecker(const CheckContext& c) : Checker(c), groups_(c) {}

  void finish() override {
    for (uint32_t h = 0; h < c_.t.host.size(); ++h) {
      const HostEvent& e = c_.t.host[h];
      if (e.op != HostOp::Free || !c_.e.ran({true, h})) continue;
      const Clock* k = c_.e.host_clock_at(h);
      for (uint32_t id : e.inflight) {
        if (!c_.e.ran({false, id}) || c_.e.known(*k, {false, id})) continue;
        Diagnostic* dp = groups_.add({true, h}, {false, id});
        if (!dp) continue;
        Diagnostic& d = *dp;
        std::string name = c_.p.object_name(e.object);
        d.set_rule(Rule::FreeInFlight);
        d.loc = e.loc;
        d.message = "'" + name + "' is freed while " + c_.what({false, id}) + " (" + c_.line_text(c_.t.cmds[id].loc) +
                    ") may still use it: nothing orders the command's end before the free";
        d.related.push_back({c_.t.cmds[id].loc, "the command that may still be running"});
        if (const SignalWrite* w = c_.write_after({false, id}); w && !c_.e.known(*w->end, {true, h})) {
          uint32_t sig = w->signal;
          std::string wait = "wait " + c_.p.signals[sig].name + " >= " + std::to_string(w->value);
          d.fixes.push_back({"add host `" + wait + "` before " + c_.line_text(e.loc) + " (" +
                                 c_.signal_write_text(*w) + " follows the command)",
                             {{e.loc, false, wait}}});
        } else {
          d.fixes.push_back({"wait on the host for a signal written after the command before `free " + name + "`", {}});
        }
      }
    }
    groups_.flush();
  }

 private:
  PairGroups groups_;
};

}  // namespace

std::unique_ptr<Checker> make_free_in_flight_checker(const CheckContext& c) { return std::make_unique<FreeInFlightChecker>(c); }

}  // namespace qvet
