// Rule `deadlock`: a wait that no write can ever satisfy, or waits caught in a cycle.
// The engine (model/engine.h) finds them while it resolves waits; this file explains them:
// the value the signal can reach, the writes that could have satisfied it and why they cannot,
// or the cycle, and how much of the program never runs because of it.
#include "checkers/checker.h"
#include "core/max_tree.h"
#include "model/deadlock_roots.h"

namespace qvet {

namespace {

// The writes of one signal, compared at one width: which meet a threshold, in program order,
// and how many, without a walk over those that do not (a cycle of thousands of waits on one
// timeline names each wait's writers).
class WritesAtWidth {
 public:
  WritesAtWidth(const std::vector<SignalWrite>& ws, uint64_t mask) {
    for (const SignalWrite& w : ws) sorted_.push_back(w.value & mask);
    tree_ = MaxTree(sorted_);
    std::sort(sorted_.begin(), sorted_.end());
  }
  // The first write at or after `from` whose value is at least v, or the number of writes.
  size_t next(size_t from, uint64_t v) const { return tree_.next(from, v); }
  uint64_t count(uint64_t v) const { return uint64_t(sorted_.end() - std::lower_bound(sorted_.begin(), sorted_.end(), v)); }
  uint64_t largest() const { return sorted_.empty() ? 0 : sorted_.back(); }

 private:
  MaxTree tree_;
  std::vector<uint64_t> sorted_;
};

class DeadlockChecker : public Checker {
 public:
  using Checker::Checker;

  const WritesAtWidth& writes_at(uint32_t signal, uint64_t mask) {
    auto it = at_width_.find({signal, mask});
    if (it == at_width_.end()) it = at_width_.emplace(std::pair{signal, mask}, WritesAtWidth(c_.e.writes(signal), mask)).first;
    return it->second;
  }

  void finish() override {
    DeadlockRoots found = deadlock_roots(c_.e);
    Loc file;  // the program's file, no line: a note about the whole check
    if (!c_.t.host.empty()) file.file = c_.t.host[0].loc.file;
    if (found.budget_reached)
      c_.sink.add({"input", Severity::Note,
                   "telling deadlock roots from the waits blocked behind them ran past qvet's budget "
                   "(docs/language-notes.md): the deadlocks are grouped as the engine found them",
                   file, {}, {}, {}, {}, {}});
    if (found.reruns_reached)
      c_.sink.add({"input", Severity::Note,
                   "asking whether knots of stuck waits stay stuck on their own ran past qvet's budget "
                   "(docs/language-notes.md): the later cycles were asked with their own waits released too, "
                   "so some may be counted as blocked, and the later knots that need no other are "
                   "reported as roots",
                   file, {}, {}, {}, {}, {}});
    for (const Deadlock& dl : found.roots) {
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
          const auto& xs = c_.e.writes(wc.signal);
          const WritesAtWidth& at = writes_at(wc.signal, wc.mask);
          TextList writers;
          for (size_t i = at.next(0, wc.threshold); i < xs.size() && !writers.full(); i = at.next(i + 1, wc.threshold))
            writers.add([&] { return c_.signal_write_text(xs[i]); });
          writers.count(at.count(wc.threshold) - std::min<uint64_t>(at.count(wc.threshold), TextList::kMax));
          d.notes.push_back({c_.loc(w), c_.what(w) + " waits for " + (writers.empty() ? "a write that does not exist" : writers.str())});
        }
      } else {
        const auto& ws = c_.e.writes(cond.signal);
        const WritesAtWidth& at = writes_at(cond.signal, cond.mask);
        uint64_t reach = std::max(c_.e.initial_value(cond.signal) & cond.mask, at.largest());
        const std::string& sname = c_.p.signals[cond.signal].name;
        d.message = c_.what(last) + " can never be satisfied: no write that can run before it gives '" + sname + "' a value >= " +
                    std::to_string(cond.threshold) + " ('" + sname + "' reaches at most " + std::to_string(reach) + ")";
        // A large enough write that ran and does not follow the wait was overwritten by a smaller
        // one before the wait began; the others can only run after it (or never run).
        // A 32-bit write whose word meets it only through the high half it keeps: where the wait
        // could see it, that half is one that leaves it smaller (semantics.md, Profiles).
        TextList after, overwritten, kept;
        // Every write that meets it is looked at (the counts are exact), and only those.
        for (size_t i = at.next(0, cond.threshold); i < ws.size(); i = at.next(i + 1, cond.threshold)) {
          const SignalWrite& x = ws[i];
          bool over = x.processed && !c_.e.known(*x.end, last);
          bool high = over && x.narrow && cond.mask == ~uint64_t(0) && c_.e.reads_every_word(cond.signal);
          (high ? kept : over ? overwritten : after).add([&] { return c_.signal_write_text(x); });
        }
        if (!overwritten.empty())
          d.notes.push_back({{}, "writes of a large enough value ran but a smaller value overwrote them before the wait began: " + overwritten.str()});
        if (!kept.empty())
          d.notes.push_back({{}, "32-bit writes that keep the word's high half could leave a large enough value, but not where "
                                 "the wait sees them (the high half they keep there, or a smaller write after them, leaves it "
                                 "smaller): " + kept.str()});
        if (!after.empty())
          d.notes.push_back({{}, "writes of a large enough value exist but can only run after the wait: " + after.str()});
        if (after.empty() && overwritten.empty() && kept.empty())
          d.notes.push_back({c_.p.signals[cond.signal].loc, "no write of '" + sname + "' has a value >= " + std::to_string(cond.threshold)});
      }
      if (dl.blocked_cmds || dl.blocked_host)
        d.notes.push_back({{}, "blocked by it: " + std::to_string(dl.blocked_cmds) + " device command(s) and " +
                                   std::to_string(dl.blocked_host) + " host statement(s) never run" +
                                   (dl.blocked_waits ? ", " + std::to_string(dl.blocked_waits) + " of them waits" : "")});
      c_.sink.add(std::move(d), c_.ctx(last));
    }
  }

 private:
  std::map<std::pair<uint32_t, uint64_t>, WritesAtWidth> at_width_;
};

}  // namespace

std::unique_ptr<Checker> make_deadlock_checker(const CheckContext& c) { return std::make_unique<DeadlockChecker>(c); }

}  // namespace qvet
