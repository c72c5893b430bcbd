// Rule `deadlock`: a wait that no write can ever satisfy, or waits caught in a cycle.
// The engine (model/engine.h) finds them while it resolves waits; this file explains them:
// the value the signal can reach, the writes that could have satisfied it and why they cannot,
// or the cycle, and how much of the program never runs because of it.
#include "checkers/checker.h"

namespace qvet {

namespace {

class DeadlockChecker : public Checker {
 public:
  using Checker::Checker;

  void finish() override {
    for (const Deadlock& dl : c_.e.deadlocks()) {
      EventRef last = dl.waits.back();
      Diagnostic d;
      d.set_rule(Rule::Deadlock);
      d.loc = c_.loc(last);
      WaitCond cond = wait_cond(c_.t, last);
      if (dl.cycle) {
        d.message = "waits form a cycle: " + c_.what(last) + " can only be satisfied after the other waits of the cycle end, and they wait for it";
        d.related.push_back({c_.loc(dl.waits.front()), "the wait that closes the cycle: " + c_.what(dl.waits.front())});
        for (EventRef w : dl.waits) {
          WaitCond wc = wait_cond(c_.t, w);
          TextList writers;
          for (const SignalWrite& x : c_.e.writes(wc.signal))
            if (wc.met_by(x.value)) writers.add([&] { return c_.signal_write_text(x); });
          d.notes.push_back({c_.loc(w), c_.what(w) + " waits for " + (writers.empty() ? "a write that does not exist" : writers.str())});
        }
      } else {
        const auto& ws = c_.e.writes(cond.signal);
        uint64_t reach = c_.e.initial_value(cond.signal) & cond.mask;
        for (const SignalWrite& x : ws) reach = std::max(reach, x.value & cond.mask);
        const std::string& sname = c_.p.signals[cond.signal].name;
        d.message = c_.what(last) + " can never be satisfied: no write that can run before it gives '" + sname + "' a value >= " +
                    std::to_string(cond.threshold) + " ('" + sname + "' reaches at most " + std::to_string(reach) + ")";
        // A large enough write that ran and does not follow the wait was overwritten by a smaller
        // one before the wait began; the others can only run after it (or never run).
        TextList after, overwritten;
        for (const SignalWrite& x : ws) {
          if (!cond.met_by(x.value)) continue;
          bool over = x.processed && !c_.e.known(*x.end, last);
          (over ? overwritten : after).add([&] { return c_.signal_write_text(x); });
        }
        if (!overwritten.empty())
          d.notes.push_back({{}, "writes of a large enough value ran but a smaller value overwrote them before the wait began: " + overwritten.str()});
        if (!after.empty())
          d.notes.push_back({{}, "writes of a large enough value exist but can only run after the wait: " + after.str()});
        if (after.empty() && overwritten.empty())
          d.notes.push_back({c_.p.signals[cond.signal].loc, "no write of '" + sname + "' has a value >= " + std::to_string(cond.threshold)});
      }
      if (dl.blocked_cmds || dl.blocked_host)
        d.notes.push_back({{}, "blocked by it: " + std::to_string(dl.blocked_cmds) + " device command(s) and " +
                                   std::to_string(dl.blocked_host) + " host statement(s) never run"});
      c_.sink.add(std::move(d), c_.ctx(last));
    }
  }
};

}  // namespace

std::unique_ptr<Checker> make_deadlock_checker(const CheckContext& c) { return std::make_unique<DeadlockChecker>(c); }

}  // namespace qvet
