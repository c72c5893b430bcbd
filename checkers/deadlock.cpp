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
      uint32_t sig;
      uint64_t v;
      wait_of(last, sig, v);
      if (dl.cycle) {
        d.message = "waits form a cycle: " + c_.what(last) + " can only be satisfied after the other waits of the cycle end, and they wait for it";
        d.related.push_back({c_.loc(dl.waits.front()), "the wait that closes the cycle: " + c_.what(dl.waits.front())});
        for (EventRef w : dl.waits) {
          uint32_t s;
          uint64_t val;
          wait_of(w, s, val);
          std::string writers;
          for (const SignalWrite& x : c_.e.writes(s))
            if ((x.value & mask_of(w)) >= val) writers += (writers.empty() ? "" : ", ") + c_.signal_write_text(x);
          d.notes.push_back({c_.loc(w), c_.what(w) + " waits for " + (writers.empty() ? "a write that does not exist" : writers)});
        }
      } else {
        const auto& ws = c_.e.writes(sig);
        uint64_t mask = mask_of(last);
        uint64_t reach = c_.e.initial_value(sig) & mask;
        for (const SignalWrite& x : ws) reach = std::max(reach, x.value & mask);
        const std::string& sname = c_.p.signals[sig].name;
        d.message = c_.what(last) + " can never be satisfied: no write that can run before it gives '" + sname + "' a value >= " +
                    std::to_string(v) + " ('" + sname + "' reaches at most " + std::to_string(reach) + ")";
        // A large enough write that ran and does not follow the wait was overwritten by a smaller
        // one before the wait began; the others can only run after it (or never run).
        std::string after, overwritten;
        for (const SignalWrite& x : ws) {
          if ((x.value & mask) < v) continue;
          bool over = x.processed && !c_.e.known(*x.end, last);
          (over ? overwritten : after) += std::string((over ? overwritten : after).empty() ? "" : ", ") + c_.signal_write_text(x);
        }
        if (!overwritten.empty())
          d.notes.push_back({{}, "writes of a large enough value ran but a smaller value overwrote them before the wait began: " + overwritten});
        if (!after.empty())
          d.notes.push_back({{}, "writes of a large enough value exist but can only run after the wait: " + after});
        if (after.empty() && overwritten.empty())
          d.notes.push_back({c_.p.signals[sig].loc, "no write of '" + sname + "' has a value >= " + std::to_string(v)});
      }
      if (dl.blocked_cmds || dl.blocked_host)
        d.notes.push_back({{}, "blocked by it: " + std::to_string(dl.blocked_cmds) + " device command(s) and " +
                                   std::to_string(dl.blocked_host) + " host statement(s) never run"});
      c_.sink.add(std::move(d), c_.ctx(last));
    }
  }

 private:
  void wait_of(EventRef w, uint32_t& sig, uint64_t& v) const {
    if (w.host) sig = c_.t.host[w.id].signal, v = uint64_t(c_.t.host[w.id].value);
    else sig = c_.t.cmds[w.id].signal, v = uint64_t(c_.t.cmds[w.id].value);
    v &= mask_of(w);
  }
  uint64_t mask_of(EventRef w) const { return c_.e.word_mask(w.host ? kHostAgent : c_.t.cmds[w.id].queue, true); }
};

}  // namespace

std::unique_ptr<Checker> make_deadlock_checker(const CheckContext& c) { return std::make_unique<DeadlockChecker>(c); }

}  // namespace qvet
