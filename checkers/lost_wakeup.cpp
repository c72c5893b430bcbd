// Rule `lost-wakeup` (semantics.md, "Lost wakeups"): a wait polls its word, so it is sure to see a
// value only if the value stays. P(W) is the writes of W's signal that run and do not happen after
// end(W); a write of P(W) that no other write of P(W) happens after *may be last*, and if its word
// does not meet W, some run leaves the word below W's threshold and W may never be satisfied.
//
// The rule adds no ordering; it reads the final clocks once the run is over (a write processed
// after W may still not follow it). The plain reading compares every pair of P(W) (the oracle,
// tests/oracle/oracle.cpp, does); here, per signal and writer (an agent's writes of it, in its
// order), three facts keep it near linear:
//  - a writer's writes in P(W) are a prefix of its writes, `cut` long: a write that follows end(W)
//    is followed by every later write of its agent (its start, or its exec's start, knows end(W));
//  - within a writer, write d is known by a later write of the prefix exactly when the first later
//    write that knows it (`first_knower`, computed once per writer) lies in the prefix; the writes
//    of the prefix that none knows are a set that a sweep over `cut` keeps, with the smallest
//    value (and low half) per subtree, so the latest of them whose word does not meet W is found
//    in O(log n);
//  - across writers, d is known by some write of another agent b in P(W) exactly when b's last
//    write in P(W) knows it (what b's earlier writes know of another agent, b's later commands'
//    starts know too), so the ranges those last writes know are skipped;
//  - a few of W's candidates are in P(W): what their ends know is known by a write of P(W), and a
//    write that knows d, where their ends do not, is one their ends do not know either. So only
//    the writers of writes those ends do not know matter, as writers of d and as writers that
//    know it (Engine::unknown_writers tells them without a walk over thousands of writers).
// Cost: per wait a binary search per writer of a write its candidates do not know; per writer
// asked, a sweep of O(n log n).
// A 32-bit write leaves a word whose high half depends on the run: on a signal whose 32-bit writes
// may keep different ones, the 64-bit waits are read plainly instead (check_mixed), with every
// word a write that may be last can leave.
#include <algorithm>
#include <bitset>
#include <map>
#include <set>
#include <unordered_map>

#include "checkers/checker.h"
#include "core/max_tree.h"
#include "model/limits.h"

namespace qvet {

namespace {

class LostWakeupChecker : public Checker {
 public:
  using Checker::Checker;

  void on_command(uint32_t id, const Clock&, const Clock&) override {
    if (c_.t.cmds[id].op == CmdOp::Wait) waits_.push_back({false, id});
  }
  void on_host(uint32_t h, const Clock&) override {
    if (c_.t.host[h].op == HostOp::Wait) waits_.push_back({true, h});
  }
  // A few candidates of each wait (indices into its signal's writes): writes of P(W) when they ran.
  void on_wait(const WaitResolution& r) override {
    std::vector<uint32_t>& cs = candidates_[r.wait.key()];
    auto take = [&](uint32_t i) {
      if (i != kNone && cs.size() < kCandidates && std::find(cs.begin(), cs.end(), i) == cs.end()) cs.push_back(i);
    };
    take(r.latest_known);
    for (size_t i = 0; i < r.candidates.size() && cs.size() < kCandidates; ++i) take(r.candidates[i]);
    take(r.unlisted_first);
  }

  void finish() override {
    std::map<uint32_t, std::vector<EventRef>> by_signal, mixed;
    for (EventRef w : waits_) {
      i128 v = c_.t.value(w);
      WaitCond cond = wait_cond(c_.t, w);
      if (v < 0 || v > i128(cond.mask)) continue;  // value-width's finding
      (!cond.narrow() && c_.e.reads_every_word(cond.signal) ? mixed : by_signal)[cond.signal].push_back(w);
    }
    budget_ = limits::kLostWakeupBudget + limits::kLostWakeupBudgetPerEvent * (c_.t.cmds.size() + c_.t.host.size());
    for (auto& [s, ws] : by_signal) check_signal(s, ws);
    for (auto& [s, ws] : mixed) check_mixed(s, ws);
    if (unchecked_) {  // semantics.md: an implementation bound never changes a verdict silently
      Diagnostic d{"input", Severity::Note, "", {}, {}, {}, {}, {}, {}};
      if (!c_.t.host.empty()) d.loc.file = c_.t.host[0].loc.file;
      d.message = "the lost-wakeup check ran past qvet's budget (" + std::to_string(budget_) + " steps) and left " +
                  std::to_string(unchecked_) + " wait(s) unchecked: lost wakeups at them may be missed";
      c_.sink.add(std::move(d));
    }
  }

 private:
  // One agent's writes of one signal that ran, in its order.
  struct Writer {
    uint32_t agent;
    std::vector<uint32_t> writes;   // indices into Engine::writes(signal)
    std::vector<uint32_t> index;    // per write: its queue index, or host event id (sorted)
    std::vector<uint32_t> first_knower;  // per write: the first later write that knows it, or writes.size()
    std::vector<bool> knows_earlier;     // per write: it knows every earlier write of the writer
    uint64_t min_word = ~uint64_t(0), min_low = ~uint64_t(0);
    // By place reversed (so that "the first at or after" is "the latest at or before"): ~word and
    // ~low half, and the trees over them that find the latest write under a threshold.
    std::vector<uint64_t> rev_wide, rev_low;
    MaxTree below_wide, below_low;
    // The latest place whose word (low half, for a 32-bit wait) is below `cond`'s threshold, or kNone.
    uint32_t last_below(const WaitCond& cond) const {
      if (cond.threshold == 0) return kNone;
      size_t n = writes.size(), r = (cond.narrow() ? below_low : below_wide).next(0, ~cond.threshold + 1);
      return r < n ? uint32_t(n - 1 - r) : kNone;
    }
  };
  // One wait's question to one writer: the latest write of its prefix that no write of P(W) knows
  // and whose word does not meet the wait.
  struct Query {
    uint32_t cut;
    size_t wait;  // index into the signal's waits
  };
  // A write that may be last and the word it leaves there.
  struct Late {
    uint32_t write;  // index into the signal's writes
    uint64_t word;
  };
  std::vector<EventRef> waits_;
  // The check's budget, in clock questions (a wait asks a few per writer of writes it does not
  // know; thousands of such writers and waits would ask millions): past it, the waits left are
  // counted, and a note says so.
  uint64_t budget_ = 0, steps_ = 0, unchecked_ = 0;
  static constexpr size_t kCandidates = 4;
  std::unordered_map<uint64_t, std::vector<uint32_t>> candidates_;  // per wait (EventRef::key)

  std::vector<Writer> writers(uint32_t s) const {
    const auto& ws = c_.e.writes(s);
    std::vector<Writer> out;
    std::map<uint32_t, size_t> at;
    for (uint32_t i = 0; i < ws.size(); ++i) {
      if (!ws[i].processed) continue;
      auto [a, added] = at.try_emplace(ws[i].agent, out.size());
      if (added) out.push_back({ws[i].agent, {}, {}, {}, {}, ~uint64_t(0), ~uint64_t(0), {}, {}, {}, {}});
      Writer& wr = out[a->second];
      wr.writes.push_back(i);
      wr.min_word = std::min(wr.min_word, ws[i].value);
      wr.min_low = std::min(wr.min_low, ws[i].value & kLowHalf);
    }
    for (Writer& wr : out) {
      auto place = [&](uint32_t i) { return ws[i].agent == kHostAgent ? ws[i].event.id : c_.t.cmds[ws[i].event.id].index; };
      std::sort(wr.writes.begin(), wr.writes.end(), [&](uint32_t x, uint32_t y) { return place(x) < place(y); });
      for (uint32_t i : wr.writes) wr.index.push_back(place(i));
      for (size_t p = wr.writes.size(); p-- > 0;)
        wr.rev_wide.push_back(~ws[wr.writes[p]].value), wr.rev_low.push_back(~(ws[wr.writes[p]].value & kLowHalf));
      wr.below_wide = MaxTree(wr.rev_wide), wr.below_low = MaxTree(wr.rev_low);
      // first_knower: the writes no write so far knows, dropped as later writes' clocks know them.
      size_t n = wr.writes.size();
      wr.first_knower.assign(n, uint32_t(n));
      wr.knows_earlier.assign(n, true);
      for (uint32_t j = 1; j < n; ++j) {
        const SignalWrite& cur = ws[wr.writes[j]];
        wr.knows_earlier[j] = wr.agent == kHostAgent || cur.end->done(wr.agent) > wr.index[j - 1] ||
                              (wr.knows_earlier[j - 1] && c_.e.known(*cur.end, ws[wr.writes[j - 1]].event));
      }
      std::set<uint32_t> open;
      for (uint32_t j = 0; j < n; ++j) {
        for (auto [lo, hi] : known(*ws[wr.writes[j]].end, wr)) {
          for (auto it = open.lower_bound(lo); it != open.end() && *it < hi;) wr.first_knower[*it] = j, it = open.erase(it);
        }
        open.insert(j);
      }
    }
    return out;
  }

  // The places (positions in wr) clock `k` knows of writer `wr`, as sorted position ranges.
  std::vector<std::pair<uint32_t, uint32_t>> known(const Clock& k, const Writer& wr) const {
    auto pos = [&](uint64_t i) { return uint32_t(std::lower_bound(wr.index.begin(), wr.index.end(), i) - wr.index.begin()); };
    std::vector<std::pair<uint32_t, uint32_t>> out;
    if (wr.agent == kHostAgent) {
      if (k.host() >= 0) out.push_back({0, pos(uint64_t(k.host()) + 1)});
      return out;
    }
    for (auto [lo, hi] : k.known_ranges(wr.agent))
      if (uint32_t a = pos(lo), b = pos(hi); a < b) out.push_back({a, b});
    return out;
  }

  void check_signal(uint32_t s, const std::vector<EventRef>& waits) {
    const auto& ws = c_.e.writes(s);
    std::vector<Writer> wrs = writers(s);
    std::vector<WaitCond> conds;
    for (EventRef w : waits) conds.push_back(wait_cond(c_.t, w));
    // Per wait, per writer: how many of its writes are in P(W) (computed when first needed).
    std::vector<std::unordered_map<size_t, uint32_t>> cuts(waits.size());
    auto cut_of = [&](size_t w, size_t k) {
      auto [it, fresh] = cuts[w].try_emplace(k, 0);
      if (fresh) {
        const auto& xs = wrs[k].writes;
        it->second = uint32_t(std::partition_point(xs.begin(), xs.end(), [&](uint32_t i) { return ++steps_, !c_.e.known(*ws[i].end, waits[w]); }) - xs.begin());
      }
      return it->second;
    };
    // Per wait: the join of its candidates' ends that ran (known), and the writers of the writes it
    // does not know (asked), as writer indices.
    std::map<uint32_t, size_t> writer_of;
    for (size_t k = 0; k < wrs.size(); ++k) writer_of[wrs[k].agent] = k;
    std::vector<Clock> known_by(waits.size(), Clock(&c_.t));
    std::vector<std::vector<size_t>> asked(waits.size());
    std::vector<bool> every(waits.size());  // the writers of the writes a wait does not know are not told: every writer
    uint64_t gen = 0;
    size_t last_asked = kNone;  // the last wait whose candidates' ends were asked (its known_by)
    std::vector<uint64_t> known_gen(wrs.size(), ~uint64_t(0));
    std::vector<uint32_t> known_upto(wrs.size(), 0);
    // Writers by their smallest word (low half), as lists from which a writer whose every write is
    // known in this generation is dropped: a timeline's waits then skip the writers they all know.
    struct ByMin {
      std::vector<std::pair<uint64_t, size_t>> order;  // (smallest, writer)
      std::vector<size_t> at, next, prev;              // per writer: its place; per place: links
      size_t head = 0;
      void reset() {
        size_t n = order.size();
        next.resize(n), prev.resize(n);
        for (size_t j = 0; j < n; ++j) next[j] = j + 1, prev[j] = j - 1;
        head = 0;
      }
      void drop(size_t k) {
        size_t j = at[k];
        if (prev[j] == SIZE_MAX) head = next[j];  // the first (reset gives it prev 0 - 1)
        else next[prev[j]] = next[j];
        if (next[j] < order.size()) prev[next[j]] = prev[j];
      }
    } by_min_wide, by_min_low;
    for (ByMin* b : {&by_min_wide, &by_min_low}) {
      for (size_t k = 0; k < wrs.size(); ++k) b->order.push_back({b == &by_min_wide ? wrs[k].min_word : wrs[k].min_low, k});
      std::sort(b->order.begin(), b->order.end());
      b->at.resize(wrs.size());
      for (size_t j = 0; j < b->order.size(); ++j) b->at[b->order[j].second] = j;
      b->reset();
    }
    std::vector<std::vector<Query>> queries(wrs.size());
    // Whether clock `k` knows every write of writer `wr` up to place p (then no later write of P(W)
    // is needed to know them).
    auto knows_through = [&](const Clock& k, const Writer& wr, uint32_t p) {
      ++steps_;
      if (wr.agent == kHostAgent) return k.host() >= int64_t(wr.index[p]);
      return k.done(wr.agent) > wr.index[p] || (wr.knows_earlier[p] && c_.e.known(k, ws[wr.writes[p]].event));
    };
    for (size_t w = 0; w < waits.size(); ++w) {
      ByMin& by_min = conds[w].narrow() ? by_min_low : by_min_wide;
      if (by_min.order.empty() || by_min.order[0].first >= conds[w].threshold) continue;  // every write meets it
      if (steps_ > budget_) {
        ++unchecked_;
        continue;
      }
      if (auto it = candidates_.find(waits[w].key()); it != candidates_.end())
        for (uint32_t i : it->second)
          if (ws[i].processed && !ws[i].end->open() && conds[w].met_by(ws[i].value) && !c_.e.known(*ws[i].end, waits[w]))
            known_by[w].join(*ws[i].end);  // (an open clock need not know what the events it knows knew)
      std::vector<uint32_t> agents;
      every[w] = !c_.e.unknown_writers(s, known_by[w], agents);
      for (uint32_t a : agents)
        if (auto it = writer_of.find(a); it != writer_of.end()) asked[w].push_back(it->second);
      // A writer whose writes under the threshold the candidates all know has none that may be last.
      // What one wait's candidates know, the next one's often know too (a timeline's waits, each
      // after the last): while each wait's `known_by` knows the previous one's, a writer's place
      // found known stays known (`known_upto`, valid for generation `gen`).
      if (last_asked == kNone || !known_by[last_asked].leq(known_by[w])) ++gen, by_min_wide.reset(), by_min_low.reset();
      last_asked = w;
      auto ask = [&](size_t k) {
        if (known_gen[k] == gen && known_upto[k] + 1 == wrs[k].writes.size()) return;
        uint32_t p = wrs[k].last_below(conds[w]);
        if (p == kNone || (known_gen[k] == gen && known_upto[k] >= p)) return;
        if (knows_through(known_by[w], wrs[k], p)) {
          known_gen[k] = gen, known_upto[k] = p;
          if (p + 1 == wrs[k].writes.size()) by_min_wide.drop(k), by_min_low.drop(k);
          return;
        }
        if (uint32_t c = cut_of(w, k)) queries[k].push_back({c, w});
      };
      if (!every[w]) {
        for (size_t k : asked[w]) ask(k);
      } else {  // every writer with a write under the threshold
        for (size_t j = by_min.head; j < by_min.order.size() && by_min.order[j].first < conds[w].threshold;) {
          size_t next = by_min.next[j];
          ask(by_min.order[j].second);
          j = next;
        }
      }
    }
    std::vector<std::vector<Late>> late(waits.size());  // per wait: writes that may be last and leave it unmet
    for (size_t k = 0; k < wrs.size(); ++k) {
      if (queries[k].empty()) continue;
      const Writer& wr = wrs[k];
      size_t n = wr.writes.size();
      MaxTree tw = wr.below_wide, tl = wr.below_low;  // present: the writes of the prefix that none later knows
      for (size_t r = 0; r < n; ++r) tw.erase(r), tl.erase(r);
      std::vector<std::vector<uint32_t>> knows(n);  // per write: the writes it is the first to know
      for (uint32_t p = 0; p < n; ++p)
        if (wr.first_knower[p] < n) knows[wr.first_knower[p]].push_back(p);
      std::sort(queries[k].begin(), queries[k].end(), [](const Query& a, const Query& b) { return a.cut < b.cut; });
      size_t q = 0;
      for (uint32_t c = 1; c <= n && q < queries[k].size(); ++c) {
        for (uint32_t p : knows[c - 1]) tw.erase(n - 1 - p), tl.erase(n - 1 - p);
        tw.set(n - c, wr.rev_wide[n - c]), tl.set(n - c, wr.rev_low[n - c]);
        for (; q < queries[k].size() && queries[k][q].cut == c; ++q) {
          size_t w = queries[k][q].wait;
          const WaitCond& cond = conds[w];
          if (cond.threshold == 0) continue;
          // What the candidates' ends and the other asked writers' last writes in P(W) know of this
          // one: skipped.
          std::vector<std::pair<uint32_t, uint32_t>> skip = known(known_by[w], wr);
          // (A write that knows one the candidates do not know is one they do not know either.)
          auto dominators = [&](size_t b) {
            if (b != k && !knows_through(known_by[w], wrs[b], uint32_t(wrs[b].writes.size() - 1)))
              if (uint32_t cb = cut_of(w, b))
                for (auto r : known(*ws[wrs[b].writes[cb - 1]].end, wr)) skip.push_back(r);
          };
          if (every[w])
            for (size_t b = 0; b < wrs.size(); ++b) dominators(b);
          else
            for (size_t b : asked[w]) dominators(b);
          std::sort(skip.begin(), skip.end());
          std::vector<std::pair<uint32_t, uint32_t>> merged;
          for (auto r : skip)
            if (!merged.empty() && r.first <= merged.back().second) merged.back().second = std::max(merged.back().second, r.second);
            else merged.push_back(r);
          // The gaps between them, from the latest: the latest present place that falls short.
          const MaxTree& t = cond.narrow() ? tl : tw;
          const uint64_t at_least = ~cond.threshold + 1;  // ~value >= ~threshold + 1: value < threshold
          uint32_t hi = c;
          for (size_t g = merged.size() + 1; g-- > 0 && hi > 0;) {
            uint32_t lo = g == 0 ? 0 : merged[g - 1].second;
            if (lo < hi) {
              size_t r = t.next(n - hi, at_least);
              if (r < n - lo) {
                uint32_t d = wr.writes[n - 1 - r];
                late[w].push_back({d, ws[d].value & cond.mask});
                break;
              }
            }
            if (g > 0) hi = std::min(hi, merged[g - 1].first);
          }
        }
      }
    }
    for (size_t w = 0; w < waits.size(); ++w) report(waits[w], conds[w], late[w]);
  }

  // A signal whose 32-bit writes may keep different high halves (Engine::reads_every_word: at most
  // limits::kMaxMixedWrites writes), for its 64-bit waits, plainly. A 32-bit write that may be last
  // lands after every other write of P(W), so it keeps the high half of a 64-bit write of P(W) that
  // no other 64-bit write of P(W) happens after, or the initial value's where P(W) has no other
  // 64-bit write: each of those runs is real, so any of those words below the wait loses it.
  void check_mixed(uint32_t s, const std::vector<EventRef>& waits) {
    using Set = std::bitset<limits::kMaxMixedWrites>;
    const auto& ws = c_.e.writes(s);
    const std::vector<Set>& after = c_.e.mixed_order(s).after;  // after[a]: the writes that a happens before
    const std::vector<uint32_t>& ran = c_.e.processed_writes(s);  // the writes that ran, by place
    const size_t n = ran.size();
    Set wide;
    for (size_t a = 0; a < n; ++a)
      if (!ws[ran[a]].narrow) wide.set(a);
    const uint64_t init_high = c_.e.initial_value(s) & kHighHalf;
    for (EventRef w : waits) {
      if (steps_ > budget_) {
        ++unchecked_;
        continue;
      }
      const WaitCond cond = wait_cond(c_.t, w);
      Set in_p;  // P(W): the writes that do not happen after the wait's end
      for (size_t k = 0; k < n; ++k)
        if (!c_.e.known(*ws[ran[k]].end, w)) in_p.set(k);
      steps_ += n * (1 + n / 64);
      std::vector<Late> late;
      for (size_t d = 0; d < n; ++d) {
        if (!in_p[d] || (after[d] & in_p).any()) continue;  // not in P(W), or not last
        const SignalWrite& x = ws[ran[d]];
        if (!x.narrow) {
          if (!cond.met_by(x.value)) late.push_back({ran[d], x.value});
          continue;
        }
        Set lenders = in_p & wide;
        lenders.reset(d);
        const uint64_t low = x.value & kLowHalf;
        if (lenders.none() && !cond.met_by(init_high | low)) late.push_back({ran[d], init_high | low});
        for (size_t k = 0; k < n && lenders.any(); ++k) {
          uint64_t word = (ws[ran[k]].value & kHighHalf) | low;
          if (lenders[k] && (after[k] & lenders).none() && !cond.met_by(word)) {
            late.push_back({ran[d], word});
            break;
          }
        }
      }
      report(w, cond, late);
    }
  }

  // Wait w, given the writes that may be last and leave a word that does not meet it.
  void report(EventRef w, const WaitCond& cond, std::vector<Late> last) {
    if (last.empty()) return;
    const auto& ws = c_.e.writes(cond.signal);
    auto submitted = [&](uint32_t x, uint32_t y) { return c_.e.submit_key(ws[x].event) < c_.e.submit_key(ws[y].event); };
    std::sort(last.begin(), last.end(), [&](const Late& a, const Late& b) { return submitted(a.write, b.write); });
    const SignalWrite& d = ws[last.back().write];  // the one submitted last
    // A write that satisfies the wait and that the late write may follow: a candidate of W that
    // ran, on another writer, and does not know the late one.
    uint32_t met = kNone;
    if (auto it = candidates_.find(w.key()); it != candidates_.end())
      for (uint32_t x : it->second)
        if (ws[x].processed && ws[x].agent != d.agent && cond.met_by(ws[x].value) && !c_.e.known(*ws[x].end, d.event) &&
            !c_.e.known(*ws[x].end, w) && (met == kNone || submitted(met, x)))
          met = x;
    const std::string& sname = c_.p.signals[cond.signal].name;
    Diagnostic diag;
    diag.set_rule(Rule::LostWakeup);
    diag.loc = c_.loc(w);
    uint64_t left = last.back().word & cond.mask;
    diag.message = c_.what(w) + " may never be satisfied: " + c_.signal_write_text(d) + " may be the last write to '" + sname +
                   "' before it ends, and leaves " + std::to_string(left) + ", below " + std::to_string(cond.threshold) +
                   "; the wait polls, so a value that met it may be overwritten before it looks";
    diag.related.push_back({c_.loc(d.event), "the write that may be last: " + c_.what(d.event)});
    if (last.size() > 1) {
      TextList others;
      for (size_t k = 0; k + 1 < last.size(); ++k) others.add([&] { return c_.signal_write_text(ws[last[k].write]); });
      diag.notes.push_back({{}, "so may " + others.str()});
    }
    diag.notes.push_back({{}, "nothing orders " + c_.what(d.event) + " after the wait, nor before a write of '" + sname +
                                  "' that satisfies it" + (met != kNone ? " (such as " + c_.signal_write_text(ws[met]) + ")" : "")});
    add_fixes(diag, w, d, met == kNone ? nullptr : &ws[met]);
    c_.sink.add(std::move(diag), c_.ctx(w), {c_.e.submit_key(w), c_.e.submit_key(d.event)});
  }

  // Repairs, verified by `qvet fix` like every other, best first: where a write that satisfies the
  // wait may come before the late one, make its agent wait for the late write's value first (as
  // signal-race proposes); make the late writer wait until the waiter has passed (a signal after
  // the wait on the waiter's agent, a wait for it before the late write); or order the late write
  // before the write that satisfies the wait (a signal after the late write, a wait for it before
  // the satisfying one). The last two take a new signal on the host. A host write cannot wait for
  // a host wait submitted after it: the second is not offered then.
  void add_fixes(Diagnostic& diag, EventRef w, const SignalWrite& d, const SignalWrite* met) {
    if (met && !met->event.host) {
      uint64_t mask = c_.e.word_mask(c_.t.cmds[met->event.id].queue, true);
      WaitCond after_late{d.signal, d.value & mask, mask};
      if (!after_late.met_by(c_.e.initial_value(d.signal))) {
        std::string wait = "wait " + c_.p.signals[d.signal].name + " >= " + std::to_string(d.value & mask);
        Fix f;
        f.description = "add `" + wait + "` before " + c_.line_text(c_.loc(met->event)) + " on queue " +
                        c_.p.queues[c_.t.cmds[met->event.id].queue].name + " (so that " + c_.what(d.event) + " lands first)";
        if (in_text(met->event)) f.edits.push_back({c_.loc(met->event), false, wait});
        diag.fixes.push_back(std::move(f));
      }
    }
    if (!(d.event.host && w.host)) diag.fixes.push_back(order_fix(w, d.event, "passed_", "the wait has passed"));
    if (met) diag.fixes.push_back(order_fix(d.event, met->event, "landed_", "the late write has landed"));
    for (size_t i = 1; i < diag.fixes.size(); ++i) diag.fixes[i].description = "or " + diag.fixes[i].description;
  }

  // Whether an event is a line of .hcq text in the program's file (not decoded from a stream).
  bool in_text(EventRef e) const {
    return c_.loc(e).file == c_.p.file && (e.host ? c_.t.host[e.id].src != nullptr : c_.t.cmds[e.id].src != nullptr);
  }

  // `first` signals a new signal after it; `then` waits for it before it. The signal is declared
  // before the program's first statement that is not a declaration (as race's fixes declare theirs).
  Fix order_fix(EventRef first, EventRef then, const std::string& prefix, const std::string& until) {
    std::string name = prefix + std::to_string(c_.loc(first).line);
    auto taken = [&] { return std::any_of(c_.p.signals.begin(), c_.p.signals.end(), [&](const Signal& s) { return s.name == name; }); };
    for (int k = 2; taken(); ++k) name = prefix + std::to_string(c_.loc(first).line) + "_" + std::to_string(k);
    auto agent = [&](EventRef e) { return e.host ? "the host" : "queue " + c_.p.queues[c_.t.cmds[e.id].queue].name; };
    Fix f;
    f.description = "make " + agent(then) + " wait until " + until + ": declare `signal " + name + " on host`, add `signal " +
                    name + " = 1` after " + c_.line_text(c_.loc(first)) + " on " + agent(first) + " and `wait " + name +
                    " >= 1` before " + c_.line_text(c_.loc(then)) + " on " + agent(then);
    const Stmt* decl_at = nullptr;
    for (const Stmt& s : c_.p.stmts)
      if (s.kind >= StmtKind::CommandList) {
        decl_at = &s;
        break;
      }
    if (decl_at && in_text(first) && in_text(then)) {
      f.edits.push_back({{decl_at->loc.file, decl_at->loc.line, 1}, false, "signal " + name + " on host"});
      f.edits.push_back({c_.loc(first), true, "signal " + name + " = 1"});
      f.edits.push_back({c_.loc(then), false, "wait " + name + " >= 1"});
    }
    return f;
  }
};

}  // namespace

std::unique_ptr<Checker> make_lost_wakeup_checker(const CheckContext& c) { return std::make_unique<LostWakeupChecker>(c); }

}  // namespace qvet
