// Rule `redundant-wait` (note): a wait whose condition already holds through ordering its
// queue has: every write that can satisfy it (or the initial value) happens before it starts,
// so it adds no ordering.
#include "checkers/checker.h"

namespace qvet {

namespace {

class RedundantWaitChecker : public Checker {
 public:
  using Checker::Checker;

  void on_wait(const WaitResolution& r) override {
    if (r.adds_ordering || !c_.threshold_fits(r)) return;
    if (r.any_unknown()) return;  // unordered candidates: stale-wait's business
    Diagnostic d;
    d.set_rule(Rule::RedundantWait);
    d.loc = c_.loc(r.wait);
    d.message = c_.what(r.wait) + " adds no ordering: " +
                (r.initial_candidate ? std::string("the initial value already satisfies it")
                                     : "every write that satisfies it already happens before it");
    c_.sink.add(std::move(d), c_.ctx(r.wait), {c_.e.submit_key(r.wait), 0});  // of repeats, the first submitted
  }
};

}  // namespace

std::unique_ptr<Checker> make_redundant_wait_checker(const CheckContext& c) { return std::make_unique<RedundantWaitChecker>(c); }

}  // namespace qvet
