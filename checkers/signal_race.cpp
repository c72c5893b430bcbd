// Rule `signal-race`: two writes of different values to one signal whose write events are not
// ordered, so which value the signal ends up holding is not determined.
#include <map>

#include "checkers/checker.h"

namespace qvet {

namespace {

class SignalRaceChecker : public Checker {
 public:
  explicit SignalRaceChecker(const CheckContext& c) : Checker(c), by_agent_(c.p.signals.size()), groups_(c) {}

  void on_command(uint32_t id, const Clock&, const Clock& end) override { write({false, id}, end); }
  void on_host(uint32_t h, const Clock& k) override { write({true, h}, k); }
  void finish() override { groups_.flush(); }

 private:
  std::vector<std::map<uint32_t, std::vector<const SignalWrite*>>> by_agent_;  // per signal, per agent: writes so far
  PairGroups groups_;

  // Every earlier write the new one does not know is a partner (the two releases of one exec
  // included). Per agent, the scan stops at a known write that follows all earlier ones.
  void write(EventRef ev, const Clock& end) {
    const SignalWrite* w = c_.e.write_of(ev);
    if (!w) return;
    for (auto& [agent, list] : by_agent_[w->signal])
      for (size_t i = list.size(); i-- > 0;) {
        const SignalWrite* o = list[i];
        if (c_.e.known(end, o->event)) {
          if (o->follows_all_prev) break;
          continue;
        }
        if (o->value != w->value) pair(*w, *o);
      }
    by_agent_[w->signal][w->agent].push_back(w);
  }

  void pair(const SignalWrite& a, const SignalWrite& b) {
    EventRef later = a.event, earlier = b.event;
    if (c_.e.submit_key(earlier) > c_.e.submit_key(later)) std::swap(later, earlier);
    Diagnostic* dp = groups_.add(later, earlier);
    if (!dp) return;
    Diagnostic& d = *dp;
    uint32_t sig = a.signal;
    d.set_rule(Rule::SignalRace);
    d.loc = c_.loc(later);
    d.message = c_.what(later) + " and " + c_.what(earlier) + " (line " + std::to_string(c_.loc(earlier).line) +
                ") write different values to '" + c_.p.signals[sig].name + "' and nothing orders them: its final value is not determined";
    d.related.push_back({c_.loc(earlier), "the other write: " + c_.what(earlier)});
    // Order the later write after the earlier one: wait for the earlier value first.
    const SignalWrite* ew = c_.e.write_of(earlier);
    if (ew && !later.host) {
      std::string wait = "wait " + c_.p.signals[sig].name + " >= " + std::to_string(ew->value);
      d.fixes.push_back({"add `" + wait + "` before line " + std::to_string(c_.loc(later).line) + " on queue " +
                             c_.p.queues[c_.t.cmds[later.id].queue].name,
                         {{c_.loc(later), false, wait}}});
    }
  }
};

}  // namespace

std::unique_ptr<Checker> make_signal_race_checker(const CheckContext& c) { return std::make_unique<SignalRaceChecker>(c); }

}  // namespace qvet
