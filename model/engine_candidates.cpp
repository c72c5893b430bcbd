// The indexed wait rule: a wait's candidates from the writers that can matter to it (the writer
// index), in two passes (what the wait knows of each writer, then the candidates), through each
// chained writer's ChainIndex; the plain rule it is checked against is model/wait_rule.cpp.
#include "model/engine.h"
#include "model/writer_index.h"

#include <algorithm>

#include "model/engine_scan.h"

namespace qvet {

// Whether `k` knows any processed write of signal `s` on the (chained) queue of `aw`: the queue's
// known ends are a prefix plus a few runs.
bool Engine::knows_any_write(const Clock& k, uint32_t s, const AgentWrites& aw, size_t n) const {
  if (n == kNone) n = aw.processed;
  if (n == 0) return false;
  uint32_t q = aw.agent;
  auto index_of = [&](size_t j) { return t_.cmds[writes_[s][aw.idx[j]].event.id].index; };
  // A known range (the prefix, then the runs) that holds one of its writes (their queue indices
  // grow in agent order).
  for (auto [lo_cmd, hi_cmd] : k.known_ranges(q)) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (index_of(mid) < lo_cmd) lo = mid + 1;
      else hi = mid;
    }
    if (lo < n && index_of(lo) < hi_cmd) return true;
  }
  return false;
}

size_t Engine::first_match(const AgentWrites& aw, size_t from, const WaitCond& cond) const {
  // Unprocessed writes still hold their pre-run bound in `vals` (a 32-bit write's high half is
  // only known once it runs), which is what a pending write can be compared with.
  if (from < aw.vals.size() && cond.met_by(aw.vals[from])) return from;  // the usual case
  if (cond.narrow() ? aw.monotone32 : aw.monotone) {
    auto it = std::partition_point(aw.vals.begin() + long(from), aw.vals.end(), [&](uint64_t x) { return !cond.met_by(x); });
    return size_t(it - aw.vals.begin());
  }
  const auto& ws = writes_[cond.signal];
  const auto& sm = cond.narrow() ? aw.suffix_max32 : aw.suffix_max;
  for (size_t j = from; j < aw.idx.size() && sm[j] >= cond.threshold; ++j)
    if (cond.met_by(ws[aw.idx[j]].value)) return j;
  return aw.idx.size();
}

uint32_t Engine::pending_candidate(EventRef w, const AgentWrites& aw, const WaitCond& cond) const {
  if (aw.processed == aw.idx.size()) return kNone;
  const auto& sm = cond.narrow() ? aw.suffix_max32 : aw.suffix_max;
  if (sm[aw.processed] < cond.threshold) return kNone;
  if (aw.agent == kHostAgent ? host_dead_ : qs_[aw.agent].dead) return kNone;
  size_t j = first_match(aw, aw.processed, cond);
  if (j == aw.idx.size()) return kNone;
  const SignalWrite& sw = writes_[cond.signal][aw.idx[j]];
  // Writes are in submission order on each agent: if this one is submitted after a host wait (or
  // never, because the host is dead), so are all later ones.
  if (submitted_after(w, sw)) return kNone;
  if (write_dead(sw)) return kNone;
  return aw.idx[j];
}

bool Engine::submitted_after(EventRef w, const SignalWrite& sw) const {
  return w.host && !sw.event.host && t_.cmds[sw.event.id].submit > w.id;
}

uint32_t Engine::pending_blocker(EventRef w, const AgentWrites& aw, const WaitCond& cond, const Clock& start) const {
  if (!mixed(cond)) return pending_candidate(w, aw, cond);
  if (aw.agent == kHostAgent ? host_dead_ : qs_[aw.agent].dead) return kNone;
  // A pending 32-bit write may keep one of the high halves unrun_high bounds; a 64-bit one may lend
  // its high half to a 32-bit write that ran or may still run before the wait ends, the highest
  // low half of which counts. (The bound falls as front ends and the host move on; a parked wait
  // is looked at again when its signal is written or an agent dies, else when unstick forces it.)
  const uint32_t own = w.host ? kHostAgent : t_.cmds[w.id].queue;
  bool looked = false, any_low = false;  // the highest such low half, found once
  uint64_t top_low = 0;
  auto lent = [&](uint64_t high) {
    if (!looked) {
      looked = true;
      for (const SignalWrite& c : writes_[cond.signal]) {
        ++work_;
        if (c.narrow && (c.processed || (c.agent != own && !write_dead(c) && !submitted_after(w, c))))
          top_low = std::max(top_low, c.value & kLowHalf), any_low = true;
      }
    }
    return any_low ? high | top_low : 0;
  };
  for (size_t j = aw.processed; j < aw.idx.size(); ++j) {
    const SignalWrite& sw = writes_[cond.signal][aw.idx[j]];
    ++work_;
    if (!cond.met_by(sw.narrow ? unrun_high(w, cond, start, false, sw) | (sw.value & kLowHalf) : std::max(sw.value, lent(sw.value & kHighHalf))))
      continue;
    if (submitted_after(w, sw)) return kNone;  // as pending_candidate
    if (write_dead(sw)) return kNone;
    return aw.idx[j];
  }
  return kNone;
}

void Engine::index_pending(uint32_t s, uint32_t pos, bool add) {
  const AgentWrites& aw = by_agent_[s][pos];
  if (aw.processed == aw.idx.size()) return;
  std::pair<uint64_t, uint32_t> wide{aw.suffix_max[aw.processed], pos}, low{aw.suffix_max32[aw.processed], pos};
  if (add) writer_index(s).pending.insert(wide), writer_index(s).pending32.insert(low);
  else writer_index(s).pending.erase(wide), writer_index(s).pending32.erase(low);
}

uint32_t Engine::pos_of(uint32_t s, uint32_t agent) const {
  const auto& agents = by_agent_[s];
  auto it = std::partition_point(agents.begin(), agents.end(), [&](const AgentWrites& a) { return a.agent < agent; });
  return it != agents.end() && it->agent == agent ? uint32_t(it - agents.begin()) : kNone;
}

void Engine::matching_writers(const WaitCond& cond, std::vector<uint32_t>& out) const {
  const auto& done = writer_index(cond.signal).done_at(cond.narrow());
  for (auto it = done.lower_bound({cond.threshold, 0}); it != done.end(); ++it) out.push_back(it->second);
}

void Engine::sorted_matching_writers(const WaitCond& cond, std::vector<uint32_t>& out) const {
  matching_writers(cond, out);
  std::sort(out.begin(), out.end());
}

size_t Engine::known_prefix(const Clock& k, uint32_t s, const AgentWrites& aw, size_t n) const {
  return size_t(std::partition_point(aw.idx.begin(), aw.idx.begin() + long(n), [&](uint32_t i) { return known(k, writes_[s][i].event); }) -
                aw.idx.begin());
}

bool Engine::knows_some_write(const Clock& k, uint32_t s, const AgentWrites& aw) const {
  if (aw.processed == 0) return false;
  // An ordered agent's known writes are a prefix.
  return ordered_agent(aw.agent) ? known(k, writes_[s][aw.idx[0]].event) : knows_any_write(k, s, aw);
}

void Engine::relevant_writers(const WaitCond& cond, const Clock& start, std::vector<uint32_t>& out, bool& knows_none,
                              bool& knows_all) const {
  const auto& agents = by_agent_[cond.signal];
  auto add = [&](uint32_t pos) {
    if (agents[pos].processed) out.push_back(pos);
  };
  knows_none = knows_all = false;
  // A timeline it knows the end of: every write before is known, and each later one is at least
  // as high, so a known write that meets the wait is never overwritten by a lower one.
  if (indexed(cond) && latest_[cond.signal].live && (cond.narrow() ? timeline32_ : timeline64_)[cond.signal] &&
      knows_every_write(cond.signal, start)) {
    knows_all = true;
    sorted_matching_writers(cond, out);
    return;
  }
  // The writers whose queues the start knows anything of (the subtrees of its clock that hold
  // one), unless they are many: then every writer is looked at.
  std::vector<uint32_t> queues;
  const size_t many = agents.size() / 4;
  if (indexed(cond) && agents.size() > kLatest && knows_no_write(cond.signal, start)) {
    knows_none = true;  // the cheaper question first, where the writers are many
    return;
  }
  if (!indexed(cond) || start.any_known_queue(writer_queues_[cond.signal], [&](uint32_t q) {
        queues.push_back(q);
        return queues.size() > many;
      }, Clock::kNoTag, &work_)) {
    if (indexed(cond) && agents.size() <= kLatest && knows_no_write(cond.signal, start)) {  // many writers' queues known, none of their writes
      knows_none = true;
      return;
    }
    for (uint32_t pos = 0; pos < agents.size(); ++pos) add(pos);
    return;
  }
  knows_none = true;
  for (uint32_t q : queues)
    if (uint32_t pos = pos_of(cond.signal, q); agents[pos].processed) {
      out.push_back(pos);
      knows_none &= !knows_some_write(start, cond.signal, agents[pos]);
    }
  if (!agents.empty() && agents.back().agent == kHostAgent && agents.back().processed) {
    out.push_back(uint32_t(agents.size() - 1));
    knows_none &= !knows_some_write(start, cond.signal, agents.back());
  }
  if (knows_none) {  // the caller takes the writers with a match only if its shared list is stale
    out.clear();
    return;
  }
  matching_writers(cond, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

bool Engine::resolvable(EventRef w, const WaitCond& cond, const Clock& start, uint32_t& blocker) const {
  if (bool blocked; derived_blocker(w, cond, blocked, blocker)) return !blocked;
  uint32_t own = w.host ? kHostAgent : t_.cmds[w.id].queue;
  // An ordered writer's later writes follow its earlier ones: once one that meets the wait and
  // that the start does not know has run (never overwritten: a lower write after it that the
  // start knows would make the start know it), its pending ones add nothing to the meet and are
  // not listed (an ordered writer's first unknown candidate is). Ten thousand waits `s >= i` on
  // the host's ten thousand writes each waited for the host's last write: quadratic.
  auto has_unknown_match = [&](const AgentWrites& aw) {
    if (!ordered_agent(aw.agent) || mixed(cond) || aw.processed == 0) return false;
    if (!cond.met_by(cond.narrow() ? aw.processed_max32 : aw.processed_max)) return false;
    size_t kb = known_prefix(start, cond.signal, aw, aw.processed);
    work_ += 2;
    return first_match(aw, kb, cond) < aw.processed;
  };
  auto blocks = [&](const AgentWrites& aw) {
    if (aw.agent == own || pending_blocker(w, aw, cond, start) == kNone) return false;  // its own later writes come after it
    if (has_unknown_match(aw)) return false;
    blocker = aw.agent;
    return true;
  };
  if (!indexed(cond)) return std::none_of(by_agent_[cond.signal].begin(), by_agent_[cond.signal].end(), blocks);
  const auto& pending = writer_index(cond.signal).pending_at(cond.narrow());
  for (auto it = pending.lower_bound({cond.threshold, 0}); it != pending.end(); ++it)
    if (blocks(by_agent_[cond.signal][it->second])) return false;
  return true;
}

const std::vector<Clock>& Engine::LowerKnown::joins() const {
  if (!joined_) {
    joined_ = true;
    for (const Chain& ch : chains) {
      Clock join;
      bool any = false;
      for (auto [lo, hi] : *ch.known)
        if (hi > ch.from) ch.index->join_below(std::max(lo, ch.from), hi, cond, join, any);
      if (any) joins_.push_back(std::move(join));
    }
  }
  return joins_;
}

bool Engine::scan_known(const Scan& sc, const std::vector<uint32_t>& agents, std::vector<Span>& spans, LowerKnown& lower) const {
  lower.cond = {sc.cond.threshold, sc.cond.narrow()};
  bool any_known = false;
  spans.assign(agents.size(), {});
  for (size_t a = 0; a < agents.size(); ++a) {
    const AgentWrites& aw = by_agent_[sc.cond.signal][agents[a]];
    size_t n = sc.limit(aw);
    if (n == 0) continue;
    if (ordered_agent(aw.agent)) {
      size_t lo = known_prefix(sc.start, sc.cond.signal, aw, n);
      spans[a].kb = lo;
      any_known |= lo > 0;
      size_t j = lo;
      while (j > 0 && sc.match(aw.idx[j - 1])) --j;
      spans[a].run = j;
      if (j > 0) lower.writes.push_back(aw.idx[j - 1]);
    } else if (const ChainIndex* ci = chain_of(aw, n, sc.cond)) {
      // As below, through its ChainIndex: the look back ends at the last known lower write that
      // follows all earlier ones (found per known range); the join of the ends of the known lower
      // writes after it.
      spans[a].known = known_positions(sc.start, sc.cond.signal, aw, n);
      any_known |= !spans[a].known.empty();
      const ChainIndex::Cond c{sc.cond.threshold, sc.cond.narrow()};
      for (size_t k = spans[a].known.size(); k-- > 0;)
        if (size_t b = ci->last_barrier_below(spans[a].known[k].first, spans[a].known[k].second, c); b != ChainIndex::kNoPos) {
          spans[a].from = b;
          break;
        }
      if (!spans[a].known.empty() && spans[a].known.back().second > spans[a].from) lower.chains.push_back({ci, &spans[a].known, spans[a].from});
    } else {
      any_known |= knows_any_write(sc.start, sc.cond.signal, aw);
      // Its known lower writes may overwrite other agents' candidates too; one that follows all
      // earlier writes of the queue hides the ones before it.
      for (size_t j = n, looked = 0; j-- > 0;) {
        if (looked++ == limits::kMaxChainedScan) {
          bound_reached_ = true;
          break;
        }
        uint32_t i = aw.idx[j];
        if (sc.match(i) || !sc.known_write(i) || sc.after(i)) continue;
        lower.writes.push_back(i);
        if (sc.ws[i].follows_all_prev) break;
      }
    }
  }
  return any_known;
}

std::vector<std::pair<size_t, size_t>> Engine::not_overwritten(const Scan& sc, const AgentWrites& aw, size_t n, const Span& span,
                                                               const LowerKnown& lower) const {
  // What the lower writes' ends know of aw's writes, as ranges, merged; then the known ranges less those.
  std::vector<std::pair<size_t, size_t>> covered, out;
  auto cover = [&](const Clock& k) {
    for (auto range : known_positions(k, sc.cond.signal, aw, n)) covered.push_back(range);
  };
  for (uint32_t d : lower.writes) cover(*sc.ws[d].end);
  for (const Clock& j : lower.joins()) cover(j);
  std::sort(covered.begin(), covered.end());
  size_t m = 0;  // merged in place: disjoint, increasing
  for (auto range : covered)
    if (m > 0 && range.first <= covered[m - 1].second) covered[m - 1].second = std::max(covered[m - 1].second, range.second);
    else covered[m++] = range;
  covered.resize(m);
  size_t c = 0;  // both lists increase: one pass over each
  for (auto [lo, hi] : span.known) {
    lo = std::max(lo, span.from);
    for (; lo < hi && c < covered.size() && covered[c].first < hi; ++c) {
      if (covered[c].first > lo) out.push_back({lo, covered[c].first});
      lo = std::max(lo, covered[c].second);
      if (covered[c].second > hi) break;  // it reaches into the next known range
    }
    if (lo < hi) out.push_back({lo, hi});
  }
  return out;
}

void Engine::pick_candidates(const Scan& sc, const std::vector<uint32_t>& agents, const std::vector<Span>& spans,
                             const LowerKnown& lower, WaitResolution& r) const {
  auto add = [&](uint32_t idx, bool known) {
    r.candidates.push_back(idx);
    r.candidate_known.push_back(known);
  };
  for (size_t a = 0; a < agents.size(); ++a) {
    const AgentWrites& aw = by_agent_[sc.cond.signal][agents[a]];
    size_t n = sc.limit(aw);
    if (n == 0) continue;
    if (ordered_agent(aw.agent)) {
      // The agent's writes are a chain: the known matching run after its last known lower write;
      // the earliest of them not overwritten by another agent's lower write is the one that
      // matters for the intersection (the later ones follow it). Then its first unordered match.
      size_t kb = spans[a].kb;
      for (size_t j = spans[a].run; j < kb; ++j)
        if (!sc.overwritten(aw.idx[j], lower)) {
          add(aw.idx[j], true);
          break;
        }
      for (size_t k = kb; k < n; ++k)
        if (sc.match(aw.idx[k])) {
          add(aw.idx[k], false);
          break;
        }
    } else if (const ChainIndex* ci = chain_of(aw, n, sc.cond)) {
      // As below, through its ChainIndex. The known ones that meet it and that no known lower
      // write comes after, from the latest: the first kMaxListedKnown listed, the others left to
      // r.chained_spans as known. Of the unknown ones (between the known ranges, after the look
      // back's end), the latest is listed, the others are left to r.chained_spans. (candidates()
      // counts and meets the spans, Engine::resolution lists them.)
      const ChainIndex::Cond c{sc.cond.threshold, sc.cond.narrow()};
      const auto& known = spans[a].known;
      const size_t from = spans[a].from, first = r.candidates.size();
      bool known_match = false;  // (else no join is needed)
      for (auto [lo, hi] : known)
        known_match = known_match || (hi > from && ci->last_meeting(std::max(lo, from), hi, c) != ChainIndex::kNoPos);
      const auto live = known_match ? not_overwritten(sc, aw, n, spans[a], lower) : std::vector<std::pair<size_t, size_t>>{};
      size_t taken = 0;
      for (size_t k = live.size(); k-- > 0;) {
        auto [lo, hi] = live[k];
        size_t stop = ChainIndex::kNoPos;  // where listing stopped: [lo, stop) left to a span
        ci->each_from_right(lo, hi, c, true, [&](size_t j) {
          if (taken == kMaxListedKnown) return stop = j + 1, false;
          add(aw.idx[j], true), ++taken;
          return true;
        });
        if (stop == ChainIndex::kNoPos) continue;
        r.chained_spans.push_back({agents[a], uint32_t(lo), uint32_t(stop), true});
        while (k-- > 0)
          if (ci->last_meeting(live[k].first, live[k].second, c) != ChainIndex::kNoPos)
            r.chained_spans.push_back({agents[a], uint32_t(live[k].first), uint32_t(live[k].second), true});
        break;
      }
      bool listed = false;
      for (size_t k = known.size() + 1, hi = n; k-- > 0 && hi > from;) {  // the gaps, from the right
        size_t lo = std::max(k > 0 ? known[k - 1].second : 0, from);
        if (lo < hi) {
          size_t j = listed ? ChainIndex::kNoPos : ci->last_meeting(lo, hi, c);
          if (j != ChainIndex::kNoPos) {
            add(aw.idx[j], false);
            listed = true;
            if (j + 1 < hi) r.chained_spans.push_back({agents[a], uint32_t(j + 1), uint32_t(hi), false});
            hi = j;
          }
          if (lo < hi && listed) r.chained_spans.push_back({agents[a], uint32_t(lo), uint32_t(hi), false});
        }
        if (k > 0) hi = known[k - 1].first;
      }
      // Latest first, as below (the unknown one among the known ones).
      std::vector<std::pair<uint32_t, bool>> mine;
      for (size_t i = first; i < r.candidates.size(); ++i) mine.push_back({r.candidates[i], r.candidate_known[i]});
      std::sort(mine.begin(), mine.end(), [](auto& x, auto& y) { return x.first > y.first; });
      for (size_t i = first; i < r.candidates.size(); ++i) r.candidates[i] = mine[i - first].first, r.candidate_known[i] = mine[i - first].second;
    } else {
      // A chained queue's releases may finish out of order: every processed write counts, back to
      // a known lower write that follows all earlier writes of the queue (it overwrites them).
      size_t taken = 0, looked = 0;
      for (size_t j = n; j-- > 0;) {
        if (taken == limits::kMaxChainedCandidates || looked++ == limits::kMaxChainedScan) {
          bound_reached_ = true;
          break;
        }
        uint32_t i = aw.idx[j];
        if (sc.after(i)) continue;
        bool kn = sc.known_write(i);
        if (!sc.match(i)) {
          if (kn && sc.ws[i].follows_all_prev) break;
          continue;
        }
        if (kn && sc.overwritten(i, lower)) continue;
        add(i, kn);
        ++taken;
      }
    }
  }
}

uint64_t Engine::candidate_order(uint32_t s, uint32_t i) const {
  const SignalWrite& w = writes_[s][i];
  return listing_key(t_, w, ordered_agent(w.agent));
}

bool Engine::in_writer_order(uint32_t s, std::vector<uint32_t>& list) const {
  auto before = [&](uint32_t a, uint32_t b) { return candidate_order(s, a) < candidate_order(s, b); };
  if (std::is_sorted(list.begin(), list.end(), before)) return true;
  std::sort(list.begin(), list.end(), before);
  return false;
}

Clock Engine::meet_of_ends(uint32_t s, const std::vector<uint32_t>& list) const {
  Clock m(&t_);
  for (size_t i = 0; i < list.size(); ++i) {
    if (i == 0) m = *writes_[s][list[0]].end;
    else m.meet(*writes_[s][list[i]].end);
  }
  return m;
}

// The candidates of a wait, in two passes over the agents that write its signal: what the wait
// knows of each agent's writes (and the known writes that may overwrite a candidate), then the
// candidates themselves; `learned` is the meet of their clocks.
void Engine::candidates(EventRef w, const WaitCond& cond, const Clock& start, bool after_wait,
                        WaitResolution& r, Clock& learned) const {
  Scan sc{*this, w, cond, start, after_wait, writes_[cond.signal]};
  if (mixed(cond)) return mixed_candidates(sc, r, learned);
  if (plain_rule(cond)) {
    WaitAnswer a = plain(w, cond, start, after_wait);
    r.candidates = std::move(a.candidates);
    r.candidate_known = std::move(a.known);
    r.initial_candidate = a.initial;
    r.latest_known = a.latest_known;
    learned = std::move(a.learned);
    return;
  }
  std::vector<uint32_t> agents;
  bool knows_none = false, knows_all = false, knows_some = false;
  // Many latest writes: a start that knows writes of the signal, but none of a writer that made a
  // write meeting the wait, has the candidates of one that knows none (each such writer's first
  // match, or every match of a chained one), less the initial value if it knows a write.
  if (!after_wait && indexed(cond) && latest_[cond.signal].live > kLatest &&
      knows_no_matching_writer(cond, start, knows_some) && (knows_some || !cond.met_by(init_[cond.signal])))
    knows_none = true;
  else
    relevant_writers(cond, start, agents, knows_none, knows_all);
  work_ += 1;
  r.initial_candidate = cond.met_by(init_[cond.signal]) && !knows_some;
  if (knows_none && !after_wait) {
    // The wait knows no write (of a writer with a match): its candidates depend only on the
    // writes made so far (shared).
    const SharedCandidates& sh = shared_candidates(cond);
    if (!sh.list->empty()) r.shared = sh.list, r.shared_count = sh.list->size();
    if (sh.chained.count) r.chained_count = sh.chained.count, r.chained_made = sh.version;
    r.unlisted_first = sh.first_all;
    learned = r.initial_candidate ? Clock(&t_) : sh.meet;
    return;
  }
  if (knows_none) sorted_matching_writers(cond, agents);  // refine: writes that ran after the wait drop out, nothing is shared
  work_ += agents.size();
  std::vector<Span> spans;
  LowerKnown lower;
  bool any_known = scan_known(sc, agents, spans, lower) || knows_all;
  pick_candidates(sc, agents, spans, lower, r);
  r.initial_candidate &= !any_known;
  learned = r.initial_candidate ? Clock(&t_) : meet_of_ends(cond.signal, r.candidates);
  // The chained writers' candidates left unlisted: counted, and their ends met.
  Clock m;
  size_t count = 0;
  r.chained_known = 0;
  for (const WaitResolution::ChainSpan& sp : r.chained_spans) {
    const size_t before = count;
    by_agent_[cond.signal][sp.pos].chain->meet_meeting(sp.lo, sp.hi, {cond.threshold, cond.narrow()}, m, count);
    if (sp.known) r.chained_known += count - before;
  }
  r.chained_count = count;
  if (count && !r.initial_candidate) learned.meet(m);
}

const ChainIndex* Engine::chain_of(const AgentWrites& aw, size_t n, const WaitCond& cond) const {
  return n > kChainDirect && indexed(cond) && aw.chain && aw.chain->added() >= n ? aw.chain.get() : nullptr;
}

std::vector<std::pair<size_t, size_t>> Engine::known_positions(const Clock& k, uint32_t s, const AgentWrites& aw, size_t n) const {
  std::vector<std::pair<size_t, size_t>> out;
  auto index_of = [&](size_t j) { return t_.cmds[writes_[s][aw.idx[j]].event.id].index; };
  auto first_at = [&](uint32_t cmd) {  // the first of aw's first n writes at or after command `cmd`
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (index_of(mid) < cmd) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  for (auto [lo_cmd, hi_cmd] : k.known_ranges(aw.agent))
    if (size_t lo = first_at(lo_cmd), hi = first_at(hi_cmd); lo < hi) {
      if (!out.empty() && out.back().second == lo) out.back().second = hi;  // no write between them (waits, say)
      else out.push_back({lo, hi});
    }
  return out;
}

void Engine::list_chained_spans(WaitResolution& r) const {
  const uint32_t s = r.cond.signal;
  std::vector<std::pair<uint32_t, bool>> all;
  for (size_t i = 0; i < r.candidates.size(); ++i) all.push_back({r.candidates[i], r.candidate_known[i]});
  for (const WaitResolution::ChainSpan& sp : r.chained_spans) {
    const AgentWrites& aw = by_agent_[s][sp.pos];
    aw.chain->each_from_right(sp.lo, sp.hi, {r.cond.threshold, r.cond.narrow()}, true, [&](size_t j) {
      all.push_back({aw.idx[j], sp.known});
      return true;
    });
  }
  std::stable_sort(all.begin(), all.end(), [&](auto& a, auto& b) { return candidate_order(s, a.first) < candidate_order(s, b.first); });
  r.candidates.clear();
  r.candidate_known.clear();
  for (auto [i, known] : all) r.candidates.push_back(i), r.candidate_known.push_back(known);
  r.chained_spans.clear();
  r.chained_count = r.chained_known = 0;
}

void Engine::list_candidates(WaitResolution& r) const {
  // What candidates() would have found when the wait resolved: each writer's writes that had run.
  uint32_t s = r.cond.signal;
  std::vector<size_t> limits(by_agent_[s].size(), 0);
  for (size_t i = 0; i < r.listed_at; ++i) ++limits[writes_[s][processed_order_[s][i]].pos];
  std::vector<uint32_t> agents;
  for (uint32_t pos = 0; pos < limits.size(); ++pos)
    if (limits[pos]) agents.push_back(pos);
  Scan sc{*this, r.wait, r.cond, r.start, false, writes_[s]};
  sc.limits = &limits;
  std::vector<Span> spans;
  LowerKnown lower;
  scan_known(sc, agents, spans, lower);
  r.candidates.clear();  // the unknown ones, found as it resolved: listed again, in order
  r.candidate_known.clear();
  r.chained_spans.clear();
  pick_candidates(sc, agents, spans, lower, r);
  r.unlisted = false;
  r.start = Clock();
}

bool Engine::resolve(EventRef w, const WaitCond& cond, const Clock& start, Clock& learned,
                     EngineObserver& obs, bool forced, bool* not_initial) {
  WaitResolution r{w, cond};
  if (!forced && !mixed(cond) && mode_ != EngineMode::Plain && resolve_unlisted(cond, start, r)) {
    r.unlisted = true;
    r.listed_at = processed_order_[cond.signal].size();
    r.start = start;
    learned = Clock(&t_);  // what every candidate knows, the start knows
    work_ += 1 + r.candidates.size();
  } else {
    candidates(w, cond, start, false, r, learned);
    if (not_initial && !r.initial_candidate) return *not_initial = true, false;
    if (!mixed(cond) && mode_ != EngineMode::Plain) r.latest_known = latest_known_match(cond, start);  // (else mixed_candidates')
  }
  bool ok = r.unlisted || r.initial_candidate || r.count() > 0;
  if (mode_ == EngineMode::Checked && !mixed(cond)) {
    auto a = std::make_unique<WaitAnswer>(plain(w, cond, start, false));
    if (!forced) check_learned(w, start, learned, *a);  // (a forced wait's, once settled)
    plain_answers_.resize(resolutions_.size() + 1);
    plain_answers_.back() = std::move(a);
  }
  if (ok && forced) resolve_forced(w, cond, start, r, learned);
  r.adds_ordering = ok && !learned.leq(start);
  // An earlier round's clock that adds to this round's: what its events' ends know in this round
  // need not be in it, and it may know events this round has not run; unless it can be closed.
  if (ok && forced && overrides_.count(w.key())) learned.set_open(r.adds_ordering && !close_override(start, learned));
  uint32_t id = uint32_t(resolutions_.size());
  (w.host ? host_resolution_[w.id] : cmd_resolution_[w.id]) = id;
  resolutions_.push_back(std::move(r));
  if (ok && !forced) obs.on_wait(resolutions_.back());  // a forced wait's: once its candidates are known (settle_forced)
  return ok;
}

void Engine::release(EventRef w, const WaitCond& cond, const Clock& start, Clock& learned) {
  WaitResolution r(w, cond);
  r.initial_candidate = true;
  r.adds_ordering = false;
  learned = Clock(&t_);
  uint32_t id = uint32_t(resolutions_.size());
  (w.host ? host_resolution_[w.id] : cmd_resolution_[w.id]) = id;
  resolutions_.push_back(std::move(r));
  released_[id] = {forced_.size(), false};
  forced_.push_back({w, cond, start, learned, true, id, Clock(&t_), false, true});
}

const WaitResolution* Engine::released_resolution(EventRef w) const {
  uint32_t id = w.host ? host_resolution_[w.id] : cmd_resolution_[w.id];
  auto it = id == kNone ? released_.end() : released_.find(id);
  if (it == released_.end()) return nullptr;
  auto& [at, settled] = it->second;
  if (!settled) {
    const Forced& f = forced_[at];
    WaitResolution now{f.wait, f.cond};
    Clock learned;
    candidates(f.wait, f.cond, f.start, true, now, learned);
    resolutions_[id] = std::move(now);
    settled = true;
  }
  return resolution(w);
}

void Engine::resolve_forced(const EventRef& w, const WaitCond& cond, const Clock& start,
                            WaitResolution& r, Clock& learned) {
  const uint32_t s = cond.signal;
  if (auto it = overrides_.find(w.key()); it != overrides_.end()) {
    r.initial_candidate = it->second.initial;
    learned = it->second.learned;
  } else if (!r.initial_candidate) {
    // A held-back write will know at least what its agent's front end knows now.
    uint32_t own = w.host ? kHostAgent : t_.cmds[w.id].queue;
    for (const AgentWrites& aw : by_agent_[s])
      if (aw.agent != own && pending_blocker(w, aw, cond, start) != kNone) learned.meet(aw.agent == kHostAgent ? host_clock_ : qs_[aw.agent].fe);
  }
  forced_.push_back({w, cond, start, learned, r.initial_candidate, uint32_t(resolutions_.size()), Clock(&t_), false});
}

}  // namespace qvet
