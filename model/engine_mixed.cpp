// 64-bit waits on a signal whose 32-bit writes may keep different high halves: each 32-bit write
// read with every word it may leave where the wait sees it (semantics.md, "Profiles"), plainly.
#include "model/engine.h"

#include <algorithm>

#include "model/engine_scan.h"

namespace qvet {

const MixedOrder& Engine::mixed_order(uint32_t s) const {
  const std::vector<uint32_t>& order = processed_order_[s];
  const std::vector<SignalWrite>& ws = writes_[s];
  MixedOrder& mo = mixed_order_[s];
  for (size_t j = mo.before.size(); j < order.size(); ++j) {
    mo.before.emplace_back(), mo.after.emplace_back();
    for (size_t i = 0; i < j; ++i) {
      work_ += 2;
      if (known(*ws[order[j]].end, ws[order[i]].event)) mo.before[j].set(i), mo.after[i].set(j);
      if (known(*ws[order[i]].end, ws[order[j]].event)) mo.before[i].set(j), mo.after[j].set(i);
    }
  }
  return mo;
}

// A 32-bit write `c` that has not run lands after every 64-bit write that the wait's start knows,
// or that c's start will know: its queue's front end, the host at its submit (the host's writes
// before the submit, where the host has not reached it). So where the wait sees it, it keeps the
// high half of the latest of those, or of a 64-bit write none of them knows (run or not; not one
// that comes after the wait), or the initial value's where there are none. The highest of them.
uint64_t Engine::unrun_high(EventRef w, const WaitCond& cond, const Clock& start, bool with_dead, const SignalWrite& c) const {
  using Set = std::bitset<limits::kMaxMixedWrites>;
  const uint32_t s = cond.signal, own = w.host ? kHostAgent : t_.cmds[w.id].queue, submit = t_.cmds[c.event.id].submit;
  const std::vector<uint32_t>& order = processed_order_[s];
  const std::vector<SignalWrite>& ws = writes_[s];
  const MixedOrder& mo = mixed_order(s);
  // What c's start will know: its queue's front end, and the host at its submit (as step_queue).
  Clock own_start = qs_[c.agent].fe;
  if (host_ran_[submit]) own_start = start_at(c.agent, submit);
  else own_start.join(host_clock_);
  auto host_before = [&](const SignalWrite& p) { return p.event.host && !p.processed && p.event.id < submit; };
  // The last host write not yet made that c's submit comes after: every write the host knows now is before it.
  const SignalWrite* last_host = nullptr;
  for (const SignalWrite& p : ws)
    if (!p.narrow && host_before(p) && (with_dead || !write_dead(p))) last_host = &p;
  Set forced;
  for (size_t k = 0; k < order.size(); ++k) {
    const EventRef e = ws[order[k]].event;
    if (!ws[order[k]].narrow && (known(start, e) || known(own_start, e))) forced.set(k);
  }
  work_ += 2 * order.size() + ws.size();
  uint64_t high = forced.none() && !last_host ? init_[s] & kHighHalf : 0;
  for (size_t k = 0; k < order.size(); ++k)
    if (!ws[order[k]].narrow && (mo.after[k] & forced).none() && !(last_host && known(host_clock_, ws[order[k]].event)))
      high = std::max(high, ws[order[k]].value & kHighHalf);
  for (const SignalWrite& p : ws) {
    if (p.processed || p.narrow || p.agent == own || submitted_after(w, p)) continue;
    if ((with_dead || !write_dead(p)) && (!host_before(p) || &p == last_host)) high = std::max(high, p.value & kHighHalf);
  }
  return high;
}

// semantics.md read plainly, for a 64-bit wait on a mixed signal (as the oracle reads it). A
// 32-bit write keeps the high half of the last 64-bit write (or the initial value) to land before
// it, and where the wait sees it, every write that happens before the wait starts has landed before
// it (else that one overwrote it). So the high halves it may keep are those of the 64-bit writes
// that may land before it (not after it, nor after the wait ends) with none between them that must
// land before it (one after that write, and before it or the wait's start, not after it); the
// initial value's, where none must. A candidate may leave a word that meets the wait; a known
// write after it overwrites it where it can leave none that does. What the wait learns is the meet
// over its candidates of each one's end joined with the meet of its lenders' ends (one of them
// landed before it). Listed as pick_candidates lists them: an ordered writer's first known and
// first unknown candidate, a chained queue's every one.
// Each write's order with the others is found once (mixed_order_); then a wait costs one step per
// write and a few per pair of a 32-bit write and a 64-bit one.
void Engine::mixed_candidates(const Scan& sc, WaitResolution& r, Clock& learned) const {
  using Set = std::bitset<limits::kMaxMixedWrites>;
  const uint32_t s = sc.cond.signal;
  const std::vector<uint32_t>& order = processed_order_[s];
  const size_t n = order.size();
  const MixedOrder& mo = mixed_order(s);
  Set live, known_set, wide, meet;
  for (size_t k = 0; k < n; ++k) {
    if (sc.after(order[k])) continue;
    live.set(k);
    if (sc.known_write(order[k])) known_set.set(k);
    if (!sc.ws[order[k]].narrow) wide.set(k);
  }
  work_ += n;
  // Whether write k may leave a word that meets the wait; `lenders`: the 64-bit writes one of
  // which must land before it for that (none where the initial value's high half does).
  // The live 64-bit writes by high half, highest first, and the set of each prefix: those whose
  // high half lets a given low half meet the wait are a prefix.
  std::vector<size_t> by_high;
  for (size_t k = 0; k < n; ++k)
    if (wide.test(k) && live.test(k)) by_high.push_back(k);
  auto high_of = [&](size_t k) { return sc.ws[order[k]].value & kHighHalf; };
  std::stable_sort(by_high.begin(), by_high.end(), [&](size_t a, size_t b) { return high_of(a) > high_of(b); });
  std::vector<Set> top(by_high.size() + 1);
  for (size_t i = 0; i < by_high.size(); ++i) top[i + 1] = top[i], top[i + 1].set(by_high[i]);
  work_ += by_high.size();
  auto meets = [&](size_t k, Set& lenders) {
    const SignalWrite& w = sc.ws[order[k]];
    if (!w.narrow) return sc.cond.met_by(w.value);
    const uint64_t low = w.value & kLowHalf;
    const Set may = wide & live & ~mo.after[k], forced = may & (mo.before[k] | known_set);
    if (forced.none() && sc.cond.met_by((init_[s] & kHighHalf) | low)) return true;
    const size_t high_enough = size_t(std::partition_point(by_high.begin(), by_high.end(), [&](size_t p) {
                                        return sc.cond.met_by(high_of(p) | low);
                                      }) - by_high.begin());
    const Set could = may & top[high_enough];
    for (size_t p = could._Find_first(); p < could.size(); p = could._Find_next(p)) {
      ++work_;
      if ((mo.after[p] & forced).none()) lenders.set(p);
    }
    return lenders.any();
  };
  std::vector<Set> lenders(n);
  for (size_t k = 0; k < n; ++k)
    if (live.test(k) && meets(k, lenders[k])) meet.set(k);
  // Known: it happens before the wait starts, and so does one of its lenders, if it needs one.
  Set known_with_lender;
  for (size_t k = 0; k < n; ++k)
    if (meet.test(k) && known_set.test(k) && (lenders[k].none() || (lenders[k] & known_set).any())) known_with_lender.set(k);
  std::vector<uint32_t> found;
  r.latest_known = kNone;
  r.initial_candidate = sc.cond.met_by(init_[s]) && known_set.none();
  learned = Clock(&t_);
  bool first = true;
  for (size_t k = 0; k < n; ++k) {
    if (!meet.test(k) || (mo.after[k] & known_set & ~meet).any()) continue;
    found.push_back(order[k]);
    if (!sc.after_wait && known_with_lender.test(k) && mo.after[k].none()) r.latest_known = order[k];
    if (r.initial_candidate) continue;
    // What the wait learns from it: its end, and what every one of its lenders' ends knows.
    // (A lender ordered before it: the lenders' meet is in its end already.)
    Clock ends = *sc.ws[order[k]].end;
    if (lenders[k].any() && (lenders[k] & mo.before[k]).none()) {
      Clock lent = *sc.ws[order[lenders[k]._Find_first()]].end;
      for (size_t p = lenders[k]._Find_next(lenders[k]._Find_first()); p < lenders[k].size(); p = lenders[k]._Find_next(p), ++work_)
        lent.meet(*sc.ws[order[p]].end);
      ends.join(lent);
    }
    if (first) learned = std::move(ends), first = false;
    else learned.meet(ends);
  }
  list_in_writer_order(t_, sc.ws, std::move(found), [&](uint32_t i) { return known_with_lender.test(sc.ws[i].rank); },
                       r.candidates, r.candidate_known);
}

// The word a 32-bit write keeps the high half of: that of the latest write it knows, else the
// initial value's. Several unordered latest writes (a signal-race) leave it undetermined: the
// largest counts, as in the oracle. Cheap when every write so far has the same high half.
uint64_t Engine::high_half_before(uint32_t s, const Clock& end) const {
  uint64_t init = init_[s] & kHighHalf;
  if (uniform_high_[s]) return init;
  // Where it knows every one of the signal's latest writes (a timeline: the one before), those are
  // the latest it knows: every other write is known by one of them, and so hidden (while clocks
  // are down-closed, not Clock::open). Else the walk below, one step per write.
  uint64_t high = 0;
  std::vector<uint32_t> latest;
  if (!end.open()) known_latest(s, end, latest);
  if (!latest.empty() && latest.size() == latest_[s].live) {
    for (uint32_t m : latest) high = std::max(high, writes_[s][m].value & kHighHalf);
    return high;
  }
  latest.clear();
  std::vector<uint32_t> agents_done;
  for (auto it = processed_order_[s].rbegin(); it != processed_order_[s].rend(); ++it) {
    const SignalWrite& d = writes_[s][*it];
    ++work_;
    if (std::find(agents_done.begin(), agents_done.end(), d.agent) != agents_done.end() || !known(end, d.event)) continue;
    // An ordered agent's first known write (from the end) hides its earlier ones.
    if (ordered_agent(d.agent) || d.follows_all_prev) agents_done.push_back(d.agent);
    if (std::none_of(latest.begin(), latest.end(), [&](uint32_t m) { return known(*writes_[s][m].end, d.event); })) latest.push_back(*it);
  }
  if (latest.empty()) return init;
  for (uint32_t m : latest) high = std::max(high, writes_[s][m].value & kHighHalf);
  return high;
}

}  // namespace qvet
