// Rule `stale-wait` (note): a wait that an older value can already satisfy (the initial value,
// or a write that happens before the wait) while a newer, unordered write could satisfy it too:
// it need not wait for the newer write, which is usually what the author meant it to do.
#include "checkers/checker.h"

namespace qvet {

namespace {

class StaleWaitChecker : public Checker {
 public:
  using Checker::Checker;

  void on_wait(const WaitResolution& r) override {
    if (!c_.threshold_fits(r)) return;
    // The older write: the latest write the wait knows that meets it (nothing follows it), else
    // the first known candidate; the newer: the first unknown candidate.
    uint32_t older = r.latest_known != kNone ? r.latest_known : r.first_known(), newer = r.first_unknown();
    if (newer == kNone || (older == kNone && !r.initial_candidate)) return;
    const auto& ws = c_.e.writes(r.cond.signal);
    const std::string& sname = c_.p.signals[r.cond.signal].name;
    Diagnostic d;
    d.set_rule(Rule::StaleWait);
    d.loc = c_.loc(r.wait);
    std::string old_text = older != kNone ? c_.signal_write_text(ws[older])
                                          : "the initial value " + std::to_string(c_.e.initial_value(r.cond.signal));
    d.message = c_.what(r.wait) + " may already be satisfied by " + old_text + ", so it need not wait for " +
                c_.signal_write_text(ws[newer]);
    d.related.push_back({older != kNone ? c_.loc(ws[older].event) : c_.p.signals[r.cond.signal].loc,
                         older != kNone ? "the older write" : "'" + sname + "' is declared here with its initial value"});
    c_.sink.add(std::move(d), c_.ctx(r.wait), {c_.e.submit_key(r.wait), 0});  // of repeats, the first submitted
  }
};

}  // namespace

std::unique_ptr<Checker> make_stale_wait_checker(const CheckContext& c) { return std::make_unique<StaleWaitChecker>(c); }

}  // namespace qvet
