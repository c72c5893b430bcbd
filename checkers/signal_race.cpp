// Rule `signal-race`: two writes of different values to one signal whose write events are not
// ordered, so which value the signal ends up holding is not determined.
#include <map>

#include "checkers/checker.h"

namespace qvet {

namespace {

class SignalRaceChecker : public Checker {
 public:
  explicit SignalRaceChecker(const CheckContext& c) : Checker(c), last_(c.p.signals.size()) {}

  void on_command(uint32_t id, const Clock&, const Clock& end) override { write({false, id}, end); }
  void on_host(uint32_t h, const Clock& k) override { write({true, h}, k); }

 private:
  std::vector<std::map<uint32_t, const SignalWrite*>> last_;  // per signal: latest write of each agent

  void write(EventRef ev, const Clock& end) {
    const SignalWrite* w = c_.e.write_of(ev);
    if (!w) return;
    uint32_t sig = w->signal;
    for (auto& [agent, o] : last_[sig]) {
      if (o->value == w->value || c_.e.known(end, o->event)) continue;
      EventRef later = ev, earlier = o->event;
      if (c_.e.submit_key(earlier) > c_.e.submit_key(later)) std::swap(later, earlier);
      Diagnostic d;
      d.rule = "signal-race";
      d.severity = Severity::Warning;
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
      c_.sink.add(std::move(d), c_.ctx(later));
    }
    last_[sig][w->agent] = w;
  }
};

}  // namespace

std::unique_ptr<Checker> make_signal_race_checker(const CheckContext& c) { return std::make_unique<SignalRaceChecker>(c); }

}  // namespace qvet
