// The least fixed point's rounds: forced waits settled from the final clocks (settle_forced),
// what the next round's overrides are (refine), and an override closed over this round's ends.
#include "model/engine.h"

#include <algorithm>
#include <map>

namespace qvet {

bool Engine::close_override(const Clock& start, Clock& learned) {
  if (start.open()) return false;
  Clock k = start;
  k.join(learned);
  uint64_t& budget = close_budget_;
  // A clock of this round (down-closed) joined in. (The nodes a comparison walks count against
  // the budget; the join walks no more of them.)
  auto join_end = [&](const Clock& end, Clock& into) {
    if (end.open()) return false;
    uint64_t looked = 0;
    if (!end.leq(into, &looked)) into.join(end);
    work_ += looked;
    if (looked > budget) return budget = 0, false;
    budget -= looked;
    return true;
  };
  // A write the override knows: run in this round, and its end joined in.
  auto close = [&](uint32_t signal, uint32_t i, Clock& into) {
    const SignalWrite& sw = writes_[signal][i];
    return sw.processed && join_end(*sw.end, into);
  };
  // Per queue, from the last write it knows down: one that follows every earlier write of its
  // queue has their ends in its own, so the rest are skipped (a gathering queue's waits, a long
  // queue's earlier writes: not walked per override).
  auto close_queue = [&](uint32_t q, Clock& into) {
    const std::vector<uint32_t>& wr = queue_writes_[q];
    auto ranges = learned.known_ranges(q);
    ++work_;
    for (size_t r = ranges.size(); r-- > 0;)
      for (auto it = std::lower_bound(wr.begin(), wr.end(), ranges[r].second); it != wr.begin() && *(it - 1) >= ranges[r].first;) {
        if (budget == 0) return false;
        --budget, ++work_;
        uint32_t id = t_.queue_cmds[q][*--it];
        const SignalWrite& sw = writes_[t_.cmds[id].signal][cmd_write_[id]];
        if (!start.knows(q, *it) && !close(t_.cmds[id].signal, cmd_write_[id], into)) return false;
        if (sw.follows_all_prev) return true;  // (set once processed, which close asked, or start knows it)
      }
    return true;
  };
  // Only the queues of subtrees the override does not share with `start`; where start knows
  // nothing of a subtree, what its queues close to is kept per node (Engine::closed_), so the
  // overrides that learned one subtree (thousands of forced waits that learned the same gathering
  // queue) close it once, not once each.
  if (!learned.join_beyond(start, closed_, close_queue, k, budget)) return false;
  // The host's writes: its last one the override knows has every earlier one's end in its own.
  if (learned.host() > start.host()) {
    // A host wait it knows and `start` does not: what the host knew after it in this round (its
    // epoch) is joined in; where the host has not run it yet, the override stays open.
    if (uint32_t w = last_host_wait_[size_t(learned.host())]; w != kNone && int64_t(w) > start.host()) {
      if (!host_ran_[w] || budget == 0) return false;
      --budget, ++work_;
      if (!join_end(*host_epochs_[host_epoch_[w]], k)) return false;
    }
    if (budget == 0) return false;
    --budget, ++work_;
    uint32_t h = last_host_write_[size_t(learned.host())];
    if (h != kNone && int64_t(h) > start.host() && !close(t_.host[h].signal, host_write_[h], k)) return false;
  }
  learned = std::move(k);
  return true;
}

Engine::Overrides Engine::refine(bool& changed) const {
  changed = false;
  // Every round's clocks are a lower bound of the fixed point's, so what a wait learns from them
  // is too, and so is the union of what the rounds learned. Keeping it (earlier rounds' overrides
  // included, for waits not forced in this one) makes the rounds climb: without, a wait that was
  // forced in one round and resolved in the next dropped what it had learned, and the rounds
  // could cycle (a 70-line program: a period of 12 rounds, 10^5 of them, 30 s). Only the
  // overrides (what a wait learns, whether the initial value is a candidate) order a round: where
  // the next round's equal this one's, it would run as this one did, and this one's candidates,
  // computed from its final clocks (settle_forced), are the fixed point's.
  Overrides out = overrides_;
  for (const Forced& f : forced_) {
    if (f.released) continue;  // it stays released (out keeps its override)
    Override o{f.next_learned, f.next_initial};
    auto it = overrides_.find(f.wait.key());
    if (it != overrides_.end()) o.learned.join(it->second.learned);
    // A wait forced without an override may be forced otherwise with one (try_wait asks it whether
    // the initial value is a candidate): the next round's input differs, so it runs.
    if (it == overrides_.end() || !(o.learned.leq(f.learned) && f.learned.leq(o.learned)) || o.initial != f.initial)
      changed = true;
    out[f.wait.key()] = std::move(o);
  }
  return out;
}

void Engine::settle_forced(EngineObserver& obs) {
  std::vector<uint32_t> order;  // the forced waits, last submitted first
  for (uint32_t k = 0; k < forced_.size(); ++k)
    if (!forced_[k].released) order.push_back(k);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return submit_key(forced_[a].wait) > submit_key(forced_[b].wait); });
  // Last submitted first, because what a wait settles to can show that writes behind it come after
  // an earlier wait: a write is no candidate of wait W when it knows a forced wait whose settled
  // end (its start joined with what it settles to) knows W, directly or through such waits. Each
  // such fact holds in the fixed point (what a wait settles to is a lower bound of what it learns
  // there), so the candidates stay a superset of the fixed point's. Where every forced wait
  // settles to what it learned, these facts are in the clocks already, so they add nothing: a
  // round that changes nothing is the fixed point, as without them. They save rounds: a timeline
  // that queues take turns writing, each batch waiting for the one before, settled one wait per
  // round from the last (qvet gen --shape timeline-turns).
  std::vector<Clock> settled(forced_.size());  // per forced wait once settled: start joined with next_learned
  std::vector<uint32_t> done;                  // the forced waits settled so far, in `order`
  std::vector<EventRef> after;
  for (uint32_t k : order) {
    Forced& f = forced_[k];
    // The forced waits submitted just after it (a window, left after kSettleGap in a row that are
    // not) whose settled ends know it, or know one found so far: per agent, the first found (a
    // write that knows a later wait of that agent's knows it too).
    after.clear();
    std::map<uint32_t, EventRef> first_of_agent;
    for (size_t d = done.size(), seen = 0, gap = 0; d-- > 0 && seen < kSettleWindow && gap < kSettleGap; ++seen) {
      const Forced& g = forced_[done[d]];
      const Clock& end = settled[done[d]];
      bool behind = known(end, f.wait);
      for (auto it = first_of_agent.begin(); !behind && it != first_of_agent.end(); ++it) behind = known(end, it->second);
      if (behind) first_of_agent.try_emplace(g.wait.host ? kHostAgent : t_.cmds[g.wait.id].queue, g.wait), gap = 0;
      else ++gap;
      work_ += 1 + first_of_agent.size();
    }
    for (auto& [agent, w] : first_of_agent) after.push_back(w);
    settle_after_ = after.empty() ? nullptr : &after;
    WaitResolution& r = resolutions_[f.resolution];
    if (settle_after_ || !settle_through_tree(f, r)) {
      WaitResolution now{f.wait, f.cond};
      candidates(f.wait, f.cond, f.start, true, now, f.next_learned);
      r.candidates = std::move(now.candidates);
      r.candidate_known = std::move(now.candidate_known);
      r.chained_spans = std::move(now.chained_spans);
      r.initial_candidate = now.initial_candidate;
      r.shared = nullptr;
      r.chained_count = now.chained_count;
      r.chained_known = now.chained_known;
      r.unlisted_first = kNone;
    }
    f.next_initial = r.initial_candidate;
    if (f.resolution < plain_answers_.size() && plain_answers_[f.resolution]) {  // Checked
      WaitAnswer a = plain(f.wait, f.cond, f.start, true);
      check_learned(f.wait, f.start, f.next_learned, a);
      a.latest_known = plain_answers_[f.resolution]->latest_known;  // (as the wait resolved)
      *plain_answers_[f.resolution] = std::move(a);
    }
    settle_after_ = nullptr;
    settled[k] = f.start;
    settled[k].join(f.next_learned);
    done.push_back(k);
  }
  for (const Forced& f : forced_)  // (in the order they were forced, as before)
    if (!f.released) obs.on_wait(resolutions_[f.resolution]);
}

bool Engine::settle_through_tree(Forced& f, WaitResolution& r) {
  const WaitCond& cond = f.cond;
  const uint32_t s = cond.signal;
  if (!indexed(cond) || knows_write_command(s, f.start)) return false;
  auto& tree = trees_[s][{cond.threshold, cond.mask}];
  if (!tree) {
    // What candidates() finds for a wait that knows no write, at the end (each ordered writer's
    // first write that meets it, every chained queue's); those that come after a wait drop out per wait.
    const SharedCandidates& sh = shared_candidates(cond);
    std::vector<uint32_t> list = *sh.list;  // with the chained queues' writes, where any meets it
    if (sh.chained.count) list = *shared_with_chained(cond, sh.version, sh.list, sh.list->size());
    else in_writer_order(s, list);
    std::vector<const Clock*> ends;
    for (uint32_t i : list) ends.push_back(writes_[s][i].end.get());
    tree = std::make_shared<const CandidateTree>(std::move(list), ends, &t_);
  }
  auto after = [&](const Clock& k) { return known(k, f.wait); };
  r.candidates.clear();
  r.candidate_known.clear();
  r.shared = nullptr;
  r.chained_count = r.chained_known = 0;
  r.chained_spans.clear();
  r.initial_candidate = cond.met_by(init_[s]);
  size_t first = tree->next(0, after), count = 0;
  r.tree = first < tree->size() ? tree : nullptr;
  r.unlisted_first = first < tree->size() ? tree->list()[first] : kNone;
  f.next_learned = r.initial_candidate ? Clock(&t_) : tree->meet(after, count);
  ++work_;
  return true;
}

}  // namespace qvet
