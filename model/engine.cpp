#include "model/engine.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <functional>
// vector_as_graph first: strong_components finds its functions by name lookup at definition.
#include <boost/graph/vector_as_graph.hpp>
#include <boost/graph/strong_components.hpp>

namespace qvet {


Engine::Engine(const Trace& t, Overrides overrides, EngineMode mode)
    : overrides_(std::move(overrides)), mode_(mode), t_(t), p_(*t.program), nq_(t.program->queues.size()) {
  qs_.resize(nq_);
  for (uint32_t q = 0; q < nq_; ++q) {
    qs_[q].order = QueueOrder(queue_mode(p_, q));
    qs_[q].fe = qs_[q].acc = qs_[q].chain_end = qs_[q].chain_next = Clock(&t_);
  }
  host_clock_ = Clock(&t_);
  cmd_ran_.assign(t.cmds.size(), 0);
  host_ran_.assign(t.host.size(), 0);
  submit_epoch_.resize(t.host.size(), 0);
  host_epochs_.push_back(std::make_shared<const Clock>(&t_));
  cmd_write_.assign(t.cmds.size(), kNone);
  host_write_.assign(t.host.size(), kNone);
  cmd_resolution_.assign(t.cmds.size(), kNone);
  host_resolution_.assign(t.host.size(), kNone);
  queue_dead_cause_.assign(nq_, kNone);
  is_ready_.assign(nq_, 0);
  parked_on_.assign(nq_, kNone);
  stuck_node_of_queue_.assign(nq_, -1);
  tree_of_.assign(nq_, {~uint64_t(0), kNone});
  group_budget_ = kGroupBudget + kGroupBudgetPerEvent * (t.cmds.size() + t.host.size());
  close_budget_ = kCloseBudget + kCloseBudgetPerEvent * (t.cmds.size() + t.host.size());
  waiting_on_.resize(p_.signals.size());
  writes_.resize(p_.signals.size());
  by_agent_.resize(p_.signals.size());
  for (size_t s = 0; s < p_.signals.size(); ++s) init_.push_back(uint64_t(evaluate(p_.signals[s].init, t.binding)));

  // Writers are added queue by queue, then the host: by_agent_[s] is sorted by agent id.
  auto add = [&](uint32_t s, EventRef e, uint32_t agent, i128 value, int width) {
    uint32_t idx = uint32_t(writes_[s].size());
    auto& agents = by_agent_[s];
    if (agents.empty() || agents.back().agent != agent) {
      AgentWrites a;
      a.agent = agent;
      agents.push_back(std::move(a));
    }
    uint32_t pos = uint32_t(agents.size() - 1);
    writes_[s].push_back({e, agent, s, uint64_t(value) & width_mask(width), width < 64, false, false, nullptr, pos, 0, false, {}});
    agents.back().idx.push_back(idx);
    return idx;
  };
  for (uint32_t q = 0; q < nq_; ++q)
    for (uint32_t id : t.queue_cmds[q])
      if (t.cmds[id].op == CmdOp::Signal) cmd_write_[id] = add(t.cmds[id].signal, {false, id}, q, t.cmds[id].value, signal_width(p_, q));
  for (uint32_t h = 0; h < t.host.size(); ++h)
    if (t.host[h].op == HostOp::Signal) host_write_[h] = add(t.host[h].signal, {true, h}, kHostAgent, t.host[h].value, kHostWidth);
  queue_writes_.resize(nq_);
  for (uint32_t q = 0; q < nq_; ++q)
    for (uint32_t id : t.queue_cmds[q])
      if (cmd_write_[id] != kNone) queue_writes_[q].push_back(t.cmds[id].index);
  last_host_write_.assign(t.host.size(), kNone);
  for (uint32_t h = 0, last = kNone; h < t.host.size(); ++h) last_host_write_[h] = last = host_write_[h] != kNone ? h : last;
  // Until a 32-bit write runs, its word's high half is bounded by the highest one any 64-bit write
  // (or the initial value) can leave there.
  processed_order_.resize(p_.signals.size());
  uniform_high_.assign(p_.signals.size(), true);
  sig_epoch_.assign(p_.signals.size(), 0);
  top_high_.assign(p_.signals.size(), 0);
  for (size_t s = 0; s < p_.signals.size(); ++s) {
    uint64_t& high = top_high_[s] = init_[s] & kHighHalf;
    for (auto& w : writes_[s])
      if (!w.narrow) high = std::max(high, w.value & kHighHalf);
    for (auto& w : writes_[s])
      if (w.narrow) w.value |= high;
  }
  mixed_.assign(p_.signals.size(), 0);
  mixed_order_.resize(p_.signals.size());
  std::vector<uint8_t> past_bound(p_.signals.size(), 0);
  for (size_t s = 0; s < p_.signals.size(); ++s) {
    bool narrow = false, differ = false;
    for (const auto& w : writes_[s])
      if (w.narrow) narrow = true;
      else differ |= ((w.value ^ init_[s]) & kHighHalf) != 0;
    if (narrow && differ) (writes_[s].size() <= kMaxMixedWrites ? mixed_ : past_bound)[s] = 1;
  }
  for (uint32_t c = 0; c < t.cmds.size(); ++c)
    if (t.cmds[c].op == CmdOp::Wait && past_bound[t.cmds[c].signal] && wait_cond(t, {false, c}).mask == ~uint64_t(0)) mixed_bound_reached_ = true;
  for (uint32_t h = 0; h < t.host.size(); ++h)
    if (t.host[h].op == HostOp::Wait && past_bound[t.host[h].signal]) mixed_bound_reached_ = true;  // (64-bit)
  for (size_t s = 0; s < p_.signals.size(); ++s)
    for (auto& a : by_agent_[s]) {
      size_t n = a.idx.size();
      a.vals.resize(n);
      for (size_t j = 0; j < n; ++j) a.vals[j] = writes_[s][a.idx[j]].value;
      a.suffix_max.assign(n + 1, 0);
      a.suffix_max32.assign(n + 1, 0);
      a.suffix_min.assign(n + 1, ~uint64_t(0));
      for (size_t j = n; j-- > 0;) {
        const SignalWrite& wj = writes_[s][a.idx[j]];
        uint64_t v = wj.value;
        a.suffix_max[j] = std::max(a.suffix_max[j + 1], v);
        a.suffix_min[j] = std::min(a.suffix_min[j + 1], wj.narrow ? v & kLowHalf : v);
        a.suffix_max32[j] = std::max(a.suffix_max32[j + 1], v & kLowHalf);
        if (j + 1 < n) {
          uint64_t next = writes_[s][a.idx[j + 1]].value;
          a.monotone &= v <= next;
          a.monotone32 &= (v & kLowHalf) <= (next & kLowHalf);
        }
      }
    }
  next_wait_.assign(t.cmds.size(), kNone);
  for (const auto& list : t.queue_cmds)
    for (size_t k = list.size(), next = kNone; k-- > 0;) {
      next_wait_[list[k]] = uint32_t(next);
      if (t.cmds[list[k]].op == CmdOp::Wait) next = list[k];
    }
  index_.resize(p_.signals.size());
  unprocessed_.resize(p_.signals.size());
  chained_max_.assign(p_.signals.size(), 0);
  chained_meets_.resize(p_.signals.size());
  shared_.resize(p_.signals.size());
  trees_.resize(p_.signals.size());
  latest_.resize(p_.signals.size());
  writer_queues_.resize(p_.signals.size());
  many_latest_.resize(p_.signals.size());
  {
    static std::atomic<uint64_t> next_stamp{1};
    uint64_t writes = 1;
    for (const auto& w : writes_) writes += w.size() + 1;
    stamp_base_ = next_stamp.fetch_add(writes);
  }
  for (uint32_t s = 0; s < p_.signals.size(); ++s) {
    latest_[s].in.assign(writes_[s].size(), 0);
    for (const AgentWrites& aw : by_agent_[s])
      if (aw.agent != kHostAgent) writer_queues_[s].push_back(aw.agent);
  }
  timeline64_.assign(p_.signals.size(), 1);
  timeline32_.assign(p_.signals.size(), 1);
  agent_signals_.resize(nq_ + 1);
  for (uint32_t s = 0; s < p_.signals.size(); ++s)
    for (uint32_t pos = 0; pos < by_agent_[s].size(); ++pos) {
      signals_of(by_agent_[s][pos].agent).push_back({s, pos});
      index_pending(s, pos, true);
    }
}

WaitCond wait_cond(const Trace& t, EventRef w) {
  if (w.host) return {t.host[w.id].signal, uint64_t(t.host[w.id].value), width_mask(kHostWidth)};
  const TraceCmd& c = t.cmds[w.id];
  uint64_t mask = width_mask(wait_width(*t.program, c.queue));
  return {c.signal, uint64_t(c.value) & mask, mask};
}

uint64_t Engine::word_mask(uint32_t agent, bool wait) const {
  if (agent == kHostAgent) return width_mask(kHostWidth);
  return width_mask(wait ? wait_width(p_, agent) : signal_width(p_, agent));
}

const WaitResolution* Engine::resolution(EventRef w) const {
  uint32_t r = w.host ? host_resolution_[w.id] : cmd_resolution_[w.id];
  if (r == kNone) return nullptr;
  WaitResolution& res = resolutions_[r];
  if (res.unlisted) list_candidates(res);
  if (!res.chained_spans.empty()) {
    list_chained_spans(res);
  } else if (res.chained_count) {  // the chained queues' writes, with the ordered writers' in writer order
    res.shared = shared_with_chained(res.cond, res.chained_made, res.shared, res.shared_count);
    res.shared_count = res.shared->size();
    res.chained_count = 0;
  } else if (res.shared && res.shared_count > 1) {  // in writer order
    auto& [list_ref, sorted] = sorted_shared_[{res.shared.get(), res.shared_count}];
    if (!sorted) {
      list_ref = res.shared;
      std::vector<uint32_t> list(res.shared->begin(), res.shared->begin() + long(res.shared_count));
      sorted = in_writer_order(res.cond.signal, list) ? res.shared : std::make_shared<const std::vector<uint32_t>>(std::move(list));
    }
    res.shared = sorted;
  }
  if (res.tree) {  // the entries that do not come after it, in order
    auto after = [&](const Clock& k) { return known(k, res.wait); };
    for (size_t k = res.tree->next(0, after); k < res.tree->size(); k = res.tree->next(k + 1, after)) {
      res.candidates.push_back(res.tree->list()[k]);
      res.candidate_known.push_back(false);
    }
    res.tree = nullptr;
  }
  return &resolutions_[r];
}

const Clock* Engine::host_clock_at(uint32_t h) const {
  auto it = std::lower_bound(kept_host_clocks_.begin(), kept_host_clocks_.end(), h,
                             [](auto& a, uint32_t b) { return a.first < b; });
  return it != kept_host_clocks_.end() && it->first == h ? it->second.get() : nullptr;
}

bool Engine::write_dead(const SignalWrite& w) const {
  if (w.event.host) return host_dead_;
  const TraceCmd& c = t_.cmds[w.event.id];
  return qs_[c.queue].dead || (host_dead_ && !host_ran_[c.submit]);
}

bool Engine::ordered_agent(uint32_t agent) const { return agent == kHostAgent || qs_[agent].order.mode() != Mode::Chained; }

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

namespace {
// Past this many latest writes of one writer, they are searched per known range of its queue.
constexpr size_t kFewLatest = 8;
}  // namespace

bool Engine::latest_by_ranges(const AgentWrites& aw) const {
  return aw.latest.size() > kFewLatest && aw.agent != kHostAgent;  // (the host has one at most)
}

std::set<uint32_t>::const_iterator Engine::latest_from(uint32_t s, const AgentWrites& aw, uint32_t lo) const {
  // Its first write at or after queue index `lo` (write and queue indices grow together along a
  // writer), then the first latest write from there.
  auto j = std::partition_point(aw.idx.begin(), aw.idx.end(), [&](uint32_t i) { return t_.cmds[writes_[s][i].event.id].index < lo; });
  return j == aw.idx.end() ? aw.latest.end() : aw.latest.lower_bound(*j);
}

template <class F>
void Engine::each_known_latest(const Clock& k, uint32_t s, const AgentWrites& aw, F&& f) const {
  if (!latest_by_ranges(aw)) {
    for (uint32_t i : aw.latest)
      if (++latest_steps_, known(k, writes_[s][i].event)) f(i);
    return;
  }
  for (auto [lo, hi] : k.known_ranges(aw.agent)) {
    auto it = latest_from(s, aw, lo);
    if (++latest_steps_, it == aw.latest.end()) break;  // nothing at or after this range
    for (; it != aw.latest.end() && t_.cmds[writes_[s][*it].event.id].index < hi; ++it) ++latest_steps_, f(*it);
  }
}

uint32_t Engine::last_unknown_latest(const Clock& k, uint32_t s, const AgentWrites& aw) const {
  if (!latest_by_ranges(aw)) {
    for (auto it = aw.latest.rbegin(); it != aw.latest.rend(); ++it)
      if (++latest_steps_, !known(k, writes_[s][*it].event)) return *it;
    return kNone;
  }
  const auto ranges = k.known_ranges(aw.agent);  // sorted, disjoint
  // From the last latest write down: one inside a known range skips below that range's start.
  for (auto it = aw.latest.end(); it != aw.latest.begin();) {
    const uint32_t c = t_.cmds[writes_[s][*--it].event.id].index;
    ++latest_steps_;
    auto r = std::partition_point(ranges.begin(), ranges.end(), [&](const auto& x) { return x.first <= c; });
    if (r == ranges.begin() || c >= std::prev(r)->second) return *it;
    it = latest_from(s, aw, std::prev(r)->first);
  }
  return kNone;
}

bool Engine::covers_previous(uint32_t s, const SignalWrite& w) const {
  const AgentWrites& aw = by_agent_[s][w.pos];
  if (aw.processed == 0) return true;
  const SignalWrite& prev = writes_[s][aw.idx[aw.processed - 1]];
  if (!prev.covered) return !w.covered;
  if (!w.covered) return true;
  // Both lists go by writer (queues in order, then the host): each of prev's entries needs one of
  // the same writer in w's, no earlier (a writer's writes are indexed in its order).
  size_t j = 0;
  for (uint32_t c : prev.cover) {
    while (j < w.cover.size() && writes_[s][w.cover[j]].pos != writes_[s][c].pos) ++j;
    if (j == w.cover.size() || w.cover[j] < c) return false;
  }
  return true;
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
  if (add) index_[s].pending.insert(wide), index_[s].pending32.insert(low);
  else index_[s].pending.erase(wide), index_[s].pending32.erase(low);
}

uint32_t Engine::pos_of(uint32_t s, uint32_t agent) const {
  const auto& agents = by_agent_[s];
  auto it = std::partition_point(agents.begin(), agents.end(), [&](const AgentWrites& a) { return a.agent < agent; });
  return it != agents.end() && it->agent == agent ? uint32_t(it - agents.begin()) : kNone;
}

void Engine::matching_writers(const WaitCond& cond, std::vector<uint32_t>& out) const {
  const auto& done = cond.narrow() ? index_[cond.signal].done32 : index_[cond.signal].done;
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

void Engine::find_cover(uint32_t s, SignalWrite& w, const Clock& end) const {
  std::vector<uint32_t> queues;
  if (!end.queues(queues, kCoverQueues)) return;  // too many to look at: not covered
  auto last_known = [&](const AgentWrites& aw) {
    if (size_t n = known_prefix(end, s, aw, aw.processed)) w.cover.push_back(aw.idx[n - 1]);
  };
  const auto& agents = by_agent_[s];
  for (uint32_t q : queues) {
    uint32_t pos = pos_of(s, q);
    if (q == w.agent || pos == kNone) continue;
    if (!ordered_agent(q)) {  // a chained queue's known writes need not be a prefix
      if (knows_some_write(end, s, agents[pos])) return w.cover.clear();
      continue;
    }
    last_known(agents[pos]);
  }
  if (w.agent != kHostAgent && !agents.empty() && agents.back().agent == kHostAgent) last_known(agents.back());
  w.covered = true;
}

bool Engine::unknown_writers(uint32_t s, const Clock& k, std::vector<uint32_t>& agents) const {
  // Every write is known by one of the latest, so by `k` if it knows that one. A write `k` does
  // not know leaves unknown its own agent's writes before it and, of other agents' writes, only
  // ones its cover knows: so follow the covers of the unknown writes, a few steps at most.
  // Where `k` need not be down-closed (Clock::open: an earlier round's override), knowing a write
  // need not mean knowing what it knew: then only none unknown (knows_every_write) is told.
  agents.clear();
  const LatestWrites& latest = latest_[s];
  std::vector<uint32_t> todo;
  if (latest.live <= kLatest || !latest.covers_in_order) {
    for (uint32_t i : latest.order)
      if (++latest_steps_, latest.in[i] && !known(k, writes_[s][i].event)) todo.push_back(i);
  } else {  // a writer's last unknown latest write covers what its earlier ones do
    // (Fewer writes to start from, so the bound below is reached later: past kLatest this can
    // answer where walking every unknown latest write gave up; the answer is the same writers.)
    for (uint32_t pos : latest.holders)
      if (uint32_t i = last_unknown_latest(k, s, by_agent_[s][pos]); i != kNone) todo.push_back(i);
  }
  if (!todo.empty() && k.open()) return false;
  const size_t bound = todo.size() + kLatest;  // the unknown latest writes, and a few steps below them
  for (size_t steps = 0; !todo.empty(); ++steps) {
    const SignalWrite& w = writes_[s][todo.back()];
    todo.pop_back();
    ++latest_steps_;
    if (!w.covered || steps == bound) return false;
    agents.push_back(w.agent);
    for (uint32_t c : w.cover)
      if (!known(k, writes_[s][c].event)) todo.push_back(c);
  }
  std::sort(agents.begin(), agents.end());
  agents.erase(std::unique(agents.begin(), agents.end()), agents.end());
  return true;
}

bool Engine::knows_no_write(uint32_t s, const Clock& k) const {
  // Asked only of the writers whose queues `k` knows anything of. (Of a clock that need not be
  // down-closed, Clock::open, not asked, as the other shortcuts that rest on it.)
  if (k.open()) return false;
  const auto& agents = by_agent_[s];
  if (!agents.empty() && agents.back().agent == kHostAgent && knows_some_write(k, s, agents.back())) return false;
  // What is asked of a writer is whether `k` knows any of its write commands, made or not: it
  // depends on the clock's entry alone, so it can be tagged with the signal, and subtrees that
  // later clocks share are asked once; knowing none of them, `k` knows no write made either.
  // (Asking of the writes made was wrong here: the end of a write being recorded knows it before
  // it counts as made, so that end's nodes were tagged as knowing none, and a later clock that
  // shared them and knew the write was told it knew none: a stale-wait missed; test_model.)
  return !k.any_known_queue(writer_queues_[s], [&](uint32_t q) { return knows_write_command_of(k, s, agents[pos_of(s, q)]); }, s, &work_);
}

bool Engine::knows_write_command_of(const Clock& k, uint32_t s, const AgentWrites& aw) const {
  return ordered_agent(aw.agent) ? known(k, writes_[s][aw.idx[0]].event) : knows_any_write(k, s, aw, aw.idx.size());
}

bool Engine::knows_every_write(uint32_t s, const Clock& k) const {
  const LatestWrites& latest = latest_[s];
  if (latest.live > kLatest) {  // some writer with a latest write may be one whose queue it knows nothing of
    if (knows_no_write(s, k)) return false;
    size_t known_queues = 0;
    bool many = k.any_known_queue(writer_queues_[s], [&](uint32_t) { return ++known_queues + 1 >= latest.agents; }, Clock::kNoTag, &work_);
    if (!many && known_queues + 1 < latest.agents) return false;  // the host aside
  }
  if (latest.live > kLatest)
    return std::all_of(latest.holders.begin(), latest.holders.end(), [&](uint32_t pos) { return last_unknown_latest(k, s, by_agent_[s][pos]) == kNone; });
  return std::all_of(latest.order.begin(), latest.order.end(), [&](uint32_t i) { return ++latest_steps_, !latest.in[i] || known(k, writes_[s][i].event); });
}

namespace {
// A value as ManyLatest and resolve_unlisted_many keep it: 0 for none, else one more (at most
// 2^64 - 1), so that a wait for 0 is told from a writer with nothing to offer it.
uint64_t reach(bool any, uint64_t v) { return any ? std::min(v, ~uint64_t(0) - 1) + 1 : 0; }
}  // namespace

Engine::ManyLatest& Engine::many_latest(uint32_t s) const {
  auto& m = many_latest_[s];
  if (!m) {
    const auto& agents = by_agent_[s];
    const size_t n = writer_queues_[s].size();
    std::vector<uint64_t> rank(n), will(n), will32(n), wrote(n), wrote32(n), will_below(n), wrote_below(n);
    for (size_t pos = 0; pos < n; ++pos) {
      const AgentWrites& aw = agents[pos];
      rank[pos] = aw.processed ? stamp_base_ + writes_[s][aw.idx[aw.processed - 1]].rank + 1 : 0;
      will[pos] = reach(!aw.idx.empty(), aw.suffix_max[0]), will32[pos] = reach(!aw.idx.empty(), aw.suffix_max32[0]);
      wrote[pos] = reach(aw.processed, aw.processed_max), wrote32[pos] = reach(aw.processed, aw.processed_max32);
      will_below[pos] = aw.idx.empty() ? 0 : ~aw.suffix_min[0], wrote_below[pos] = aw.processed ? ~aw.processed_min : 0;
    }
    m = std::make_unique<ManyLatest>(ManyLatest{MaxTree(rank), MaxTree(will), MaxTree(will32), MaxTree(wrote), MaxTree(wrote32),
                                                MaxTree(will_below), MaxTree(wrote_below)});
    work_ += n;
  }
  return *m;
}

std::pair<size_t, size_t> Engine::writer_places(uint32_t s, uint64_t lo_queue, uint64_t hi_queue) const {
  const auto& wq = writer_queues_[s];
  auto at = [&](uint64_t q) { return size_t(std::partition_point(wq.begin(), wq.end(), [&](uint32_t x) { return x < q; }) - wq.begin()); };
  return {at(lo_queue), at(hi_queue)};
}

void Engine::known_latest(uint32_t s, const Clock& k, std::vector<uint32_t>& out) const {
  out.clear();
  const LatestWrites& latest = latest_[s];
  if (latest.live <= kLatest) {
    for (uint32_t i : latest.order)
      if (latest.in[i] && known(k, writes_[s][i].event)) out.push_back(i);
    return;
  }
  // Many: the subtrees of the clock that know one, skipping those found to know none while no
  // writer under them has written since (and, cheaper still, clocks that know no write at all).
  if (knows_no_write(s, k)) return;
  const auto& agents = by_agent_[s];
  const Clock::Fresh fresh = fresh_for(s);
  auto take = [&](const AgentWrites& aw) {
    const size_t before = out.size();
    each_known_latest(k, s, aw, [&](uint32_t i) { out.push_back(i); });
    return out.size() > before;
  };
  k.each_known_queue(writer_queues_[s], [&](uint32_t q) { return take(agents[pos_of(s, q)]); }, kLatestTag | s,
                     stamp_now(s), fresh, &work_);
  if (!agents.empty() && agents.back().agent == kHostAgent) take(agents.back());
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) { return writes_[s][a].rank < writes_[s][b].rank; });
}

bool Engine::unchanged_since(uint32_t s, uint64_t lo, uint64_t hi, uint64_t stamp) const {
  if (stamp < stamp_base_ || stamp > stamp_base_ + writes_[s].size()) return false;  // another engine's (clocks shared through overrides)
  auto [a, b] = writer_places(s, lo, hi);
  return many_latest(s).last_rank.max_in(a, b) <= stamp;
}

uint32_t Engine::top_known_latest(const WaitCond& cond, const Clock& start) const {
  const uint32_t s = cond.signal;
  const auto& agents = by_agent_[s];
  // Per writer, one more than the rank of its last latest write the start knows that meets the
  // wait (a writer's latest writes change only where it writes or loses one: unchanged_since).
  auto top = [&](const AgentWrites& aw) {
    uint64_t best = 0;
    each_known_latest(start, s, aw, [&](uint32_t i) {
      if (const SignalWrite& w = writes_[s][i]; cond.met_by(w.value)) best = std::max<uint64_t>(best, w.rank + 1);
    });
    return best;
  };
  const Clock::Fresh fresh = fresh_for(s);
  // The last write meeting a threshold `then` that meets `t >= then` too is the last meeting t
  // (and none meeting then: none meeting t). `best` may be another engine's (fresh refuses it).
  const Clock::Holds holds = [&](uint64_t then, uint64_t best, uint64_t t) {
    return t >= then && (best == 0 || (best <= processed_order_[s].size() &&
                                       WaitCond{s, t, cond.mask}.met_by(writes_[s][processed_order_[s][best - 1]].value)));
  };
  // A lower wait's answer differs only where a known latest write meets it and not the higher.
  const std::function<uint64_t(uint32_t)> below = [&](uint32_t q) {
    uint64_t most = 0;
    each_known_latest(start, s, agents[pos_of(s, q)], [&](uint32_t i) {
      if (const SignalWrite& w = writes_[s][i]; !cond.met_by(w.value)) most = std::max(most, w.value & cond.mask);
    });
    return most;
  };
  many_latest(s);  // before anything is remembered: from now on, each lost latest write is stamped (drop_known_latest)
  uint64_t best = 0;
  if (!knows_no_write(s, start))
    best = start.max_known(writer_queues_[s], [&](uint32_t q) { return top(agents[pos_of(s, q)]); }, kTopKey | uint64_t(s) << 1 | uint64_t(cond.narrow()),
                           cond.threshold, stamp_now(s), fresh, &work_, &holds, &below);
  if (!agents.empty() && agents.back().agent == kHostAgent) best = std::max(best, top(agents.back()));
  return best ? processed_order_[s][best - 1] : kNone;
}

void Engine::drop_known_latest(uint32_t s, const Clock& end) {
  LatestWrites& latest = latest_[s];
  std::vector<uint32_t> known_now;
  known_latest(s, end, known_now);
  for (uint32_t i : known_now) {
    latest.in[i] = 0;
    --latest.live;
    auto& own = by_agent_[s][writes_[s][i].pos].latest;
    own.erase(i);
    if (own.empty()) --latest.agents;
    // Its writer lost a latest write: what top_known_latest remembered under it may have changed.
    if (auto& m = many_latest_[s]; m && writes_[s][i].pos < writer_queues_[s].size() && by_agent_[s][writes_[s][i].pos].agent != kHostAgent)
      m->last_rank.set(writes_[s][i].pos, stamp_now(s) + 1);
  }
  if (latest.order.size() > 2 * latest.live + 16) std::erase_if(latest.order, [&](uint32_t i) { return !latest.in[i]; });
  if (latest.holders.size() > 2 * latest.agents + 16)
    std::erase_if(latest.holders, [&](uint32_t pos) {
      AgentWrites& aw = by_agent_[s][pos];
      if (!aw.latest.empty()) return false;
      aw.holder = false;
      return true;
    });
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

// A wait `derive` proved things of: whether the one writer it still needs has a pending write for it.
bool Engine::derived_blocker(EventRef w, const WaitCond& cond, bool& blocked, uint32_t& blocker) const {
  if (w.host) return false;
  const QueueState::Proof& pf = qs_[t_.cmds[w.id].queue].proof;
  if (pf.wait != w.id) return false;
  blocked = false;
  if (pf.only != kNone && pending_candidate(w, by_agent_[cond.signal][pf.only], cond) != kNone) {
    blocked = true;
    blocker = by_agent_[cond.signal][pf.only].agent;
  }
  return true;
}

bool Engine::resolvable(EventRef w, const WaitCond& cond, const Clock& start, uint32_t& blocker) const {
  if (bool blocked; derived_blocker(w, cond, blocked, blocker)) return !blocked;
  uint32_t own = w.host ? kHostAgent : t_.cmds[w.id].queue;
  auto blocks = [&](const AgentWrites& aw) {
    if (aw.agent == own || pending_blocker(w, aw, cond, start) == kNone) return false;  // its own later writes come after it
    blocker = aw.agent;
    return true;
  };
  if (!indexed(cond)) return std::none_of(by_agent_[cond.signal].begin(), by_agent_[cond.signal].end(), blocks);
  const auto& pending = cond.narrow() ? index_[cond.signal].pending32 : index_[cond.signal].pending;
  for (auto it = pending.lower_bound({cond.threshold, 0}); it != pending.end(); ++it)
    if (blocks(by_agent_[cond.signal][it->second])) return false;
  return true;
}

// One candidates() call: the wait, what its start knows, and the tests both passes ask.
struct Engine::Scan {
  const Engine& e;
  EventRef w;
  const WaitCond& cond;
  const Clock& start;
  bool after_wait;
  const std::vector<SignalWrite>& ws;
  bool match(uint32_t i) const { return cond.met_by(ws[i].value); }
  bool known_write(uint32_t i) const { return e.known(start, ws[i].event); }
  // after_wait (refine): writes that ran after the wait ended are no candidates. They are a
  // suffix of the agent's writes (on a chained queue too: a later release ends after an earlier
  // one's exec or with it); the scans still skip any of them.
  bool after(uint32_t i) const { return after_wait && e.known(*ws[i].end, w); }
  const std::vector<size_t>* limits = nullptr;  // per writer: how many writes had run (an unlisted wait, listed later)
  size_t limit(const AgentWrites& aw) const {
    if (limits) return (*limits)[size_t(&aw - e.by_agent_[cond.signal].data())];
    if (!after_wait) return aw.processed;
    return size_t(std::partition_point(aw.idx.begin(), aw.idx.begin() + long(aw.processed), [&](uint32_t i) { return !after(i); }) -
                  aw.idx.begin());
  }
  // A known candidate is overwritten when a known lower write comes after it.
  bool overwritten(uint32_t c, const LowerKnown& lower) const {
    for (uint32_t d : lower.writes)
      if (d != c && e.known(*ws[d].end, ws[c].event)) return true;
    for (const Clock& j : lower.joins())
      if (e.known(j, ws[c].event)) return true;
    return false;
  }
};

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
        if (looked++ == kMaxChainedScan) {
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
        if (taken == kMaxChainedCandidates || looked++ == kMaxChainedScan) {
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
  uint32_t at = w.event.host ? w.event.id : t_.cmds[w.event.id].index;
  return uint64_t(w.pos) << 32 | (ordered_agent(w.agent) ? at : ~at);
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

Engine::SharedCandidates& Engine::shared_candidates(const WaitCond& cond) const {
  const uint32_t s = cond.signal;
  SharedCandidates& sh = shared_[s][{cond.threshold, cond.mask}];
  const size_t made = processed_order_[s].size();
  if (sh.list && sh.version == made) return sh;
  // pick_candidates' answer where nothing is known, in the order the writes were made: an
  // ordered writer's first write that meets the wait (its writes are made in its order).
  auto add = [&](uint32_t i) {
    const SignalWrite& x = writes_[s][i];
    sh.has.insert(x.pos);
    if (sh.list->empty()) sh.ordered_meet = *x.end;
    else sh.ordered_meet.meet(*x.end);
    uint32_t first = sh.list->empty() || candidate_order(s, i) < candidate_order(s, sh.first.back()) ? i : sh.first.back();
    sh.list->push_back(i);
    sh.first.push_back(first);
  };
  if (!sh.list || made - sh.version > sh.list->size() + kLatest) {
    // Made afresh from the writers with a match, when that is cheaper than walking the writes
    // made since (one signal, thousands of thresholds, each asked once). Later waits' lists grow.
    std::vector<uint32_t> agents, found;
    sorted_matching_writers(cond, agents);
    for (uint32_t pos : agents) {
      const AgentWrites& aw = by_agent_[s][pos];
      if (!ordered_agent(aw.agent)) continue;
      for (size_t k = 0; k < aw.processed; ++k, ++work_)
        if (cond.met_by(writes_[s][aw.idx[k]].value)) {
          found.push_back(aw.idx[k]);
          break;
        }
    }
    std::sort(found.begin(), found.end(), [&](uint32_t a, uint32_t b) { return writes_[s][a].rank < writes_[s][b].rank; });
    sh = SharedCandidates{};
    sh.list = std::make_shared<std::vector<uint32_t>>();
    for (uint32_t i : found) add(i);
    work_ += 1 + agents.size() + found.size();
    sh.chained = chained_matches(cond);  // every write of a chained queue that meets it
  } else {
    // The writes made since, one step each: an ordered writer's first match joins the list, a
    // chained queue's match the chained meet (as MeetAbove would answer, without asking it).
    for (size_t v = sh.version; v < made; ++v, ++work_) {
      const uint32_t i = processed_order_[s][v];
      const SignalWrite& x = writes_[s][i];
      if (!cond.met_by(x.value)) continue;
      if (ordered_agent(x.agent)) {
        if (!sh.has.count(x.pos)) add(i);
        continue;
      }
      MeetAbove::Answer& c = sh.chained;
      if (c.count++ == 0) c.meet = *x.end;
      else c.meet.meet(*x.end);
      if (uint64_t o = candidate_order(s, i); o < c.first_order) c.first_order = o, c.first = i;
    }
  }
  sh.version = made;
  sh.meet = sh.list->empty() ? sh.chained.meet : sh.ordered_meet;
  if (!sh.list->empty() && sh.chained.count) sh.meet.meet(sh.chained.meet);
  sh.first_all = sh.list->empty() ? kNone : sh.first.back();
  if (sh.chained.count && (sh.first_all == kNone || sh.chained.first_order < candidate_order(s, sh.first_all)))
    sh.first_all = sh.chained.first;
  return sh;
}

MeetAbove::Answer Engine::chained_matches(const WaitCond& cond) const {
  const uint32_t s = cond.signal;
  ChainedMeets& cm = chained_meets_[s];
  if (cm.writes.empty()) return {};
  work_ += 1;
  if (indexed(cond)) {
    const bool narrow = cond.narrow();
    MeetAbove& tree = narrow ? cm.narrow : cm.wide;
    for (size_t& in = narrow ? cm.in_narrow : cm.in_wide; in < cm.writes.size(); ++in) {
      const uint32_t i = cm.writes[in];
      const SignalWrite& w = writes_[s][i];
      tree.insert(narrow ? w.value & kLowHalf : w.value, w.rank, candidate_order(s, i), i, *w.end);
    }
    return tree.at_least(cond.threshold);
  }
  // Another width (no profile has one): each processed write looked at.
  MeetAbove::Answer a;
  for (const AgentWrites& aw : by_agent_[s]) {
    if (ordered_agent(aw.agent)) continue;
    for (size_t k = 0; k < aw.processed; ++k, ++work_)
      if (const SignalWrite& x = writes_[s][aw.idx[k]]; cond.met_by(x.value)) {
        if (a.count++ == 0) a.meet = *x.end;
        else a.meet.meet(*x.end);
        if (uint64_t o = candidate_order(s, aw.idx[k]); o < a.first_order) a.first_order = o, a.first = aw.idx[k];
      }
  }
  return a;
}

Engine::ListRef Engine::shared_with_chained(const WaitCond& cond, size_t made, const ListRef& ordered, size_t count) const {
  const uint32_t s = cond.signal;
  ListRef& out = with_chained_[{s, cond.threshold, cond.mask, made}];
  if (out) return out;
  std::vector<uint32_t> list;
  if (ordered) list.assign(ordered->begin(), ordered->begin() + long(count));
  for (const AgentWrites& aw : by_agent_[s]) {
    if (ordered_agent(aw.agent)) continue;
    for (size_t k = 0; k < aw.processed; ++k)
      if (const SignalWrite& x = writes_[s][aw.idx[k]]; x.rank < made && cond.met_by(x.value)) list.push_back(aw.idx[k]);
  }
  in_writer_order(s, list);
  return out = std::make_shared<const std::vector<uint32_t>>(std::move(list));
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

const Engine::MixedOrder& Engine::mixed_order(uint32_t s) const {
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
  using Set = std::bitset<kMaxMixedWrites>;
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
  using Set = std::bitset<kMaxMixedWrites>;
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
  std::sort(found.begin(), found.end(), [&](uint32_t a, uint32_t b) { return candidate_order(s, a) < candidate_order(s, b); });
  uint32_t agent = kNone;
  bool known_taken = false, unknown_taken = false;
  for (uint32_t i : found) {
    const SignalWrite& w = sc.ws[i];
    const bool kn = known_with_lender.test(w.rank);
    if (w.agent != agent) agent = w.agent, known_taken = unknown_taken = false;
    if (ordered_agent(w.agent) && (kn ? known_taken : unknown_taken)) continue;  // it follows the one taken
    (kn ? known_taken : unknown_taken) = true;
    r.candidates.push_back(i);
    r.candidate_known.push_back(kn);
  }
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

uint32_t Engine::latest_known_match(const WaitCond& cond, const Clock& start) const {
  if (latest_[cond.signal].live > kLatest && indexed(cond)) return top_known_latest(cond, start);
  std::vector<uint32_t> known_now;
  known_latest(cond.signal, start, known_now);
  return last_meeting(cond, known_now);
}

uint32_t Engine::last_meeting(const WaitCond& cond, const std::vector<uint32_t>& writes) const {
  for (size_t j = writes.size(); j-- > 0;)
    if (cond.met_by(writes_[cond.signal][writes[j]].value)) return writes[j];
  return kNone;
}

bool Engine::resolve_unlisted(const WaitCond& cond, const Clock& start, WaitResolution& r) const {
  uint32_t s = cond.signal;
  // Every write is known by one of the latest. A latest write that the start knows and that meets
  // the wait is a candidate (no write follows it). What every candidate knows is at most what that
  // one knows: if the start knows that too, the wait learns nothing. (Knowing a write's end does
  // not always mean knowing all it knew: a forced wait's clock from an earlier round of refine may
  // know less. So this is asked, not assumed.)
  // The writes the start does not know are those of a few agents (unknown_writers), the only
  // writers to scan for unknown candidates. Chained writers' scans are bounded (kMaxChainedScan):
  // only while no bound can be reached, and only ordered writers are scanned here.
  if (processed_order_[s].empty() || chained_max_[s] > kMaxChainedCandidates) return false;
  // (Once a clock need not be down-closed, the proof below need not be among the candidates
  // pick_candidates lists; resolve_unlisted_many, which does not ask unknown_writers, is kept to
  // starts that are (not Clock::open), where it gives what the path below gives.)
  if (latest_[s].live > kLatest && indexed(cond) && !start.open()) return resolve_unlisted_many(cond, start, r);
  std::vector<uint32_t> known_now;
  known_latest(s, start, known_now);
  uint32_t proof = kNone;
  for (size_t j = known_now.size(); j-- > 0 && proof == kNone;)
    if (const SignalWrite& w = writes_[s][known_now[j]]; cond.met_by(w.value) && w.end->leq(start)) proof = known_now[j];
  std::vector<uint32_t> unknown;
  if (proof == kNone || !unknown_writers(s, start, unknown)) return false;
  for (uint32_t agent : unknown)
    if (!ordered_agent(agent)) return false;
  r.latest_known = last_meeting(cond, known_now);  // latest_known_match, from the list at hand
  for (uint32_t agent : unknown) {  // in increasing order, as by_agent_
    uint32_t pos = pos_of(s, agent);  // as pick_candidates: an ordered agent's first unknown match
    const AgentWrites& aw = by_agent_[s][pos];
    for (size_t k = known_prefix(start, s, aw, aw.processed); k < aw.processed; ++k)
      if (cond.met_by(writes_[s][aw.idx[k]].value)) {
        r.candidates.push_back(aw.idx[k]);
        r.candidate_known.push_back(false);
        break;
      }
  }
  return true;
}

size_t Engine::first_unknown_write(const Clock& k, uint32_t s, const AgentWrites& aw) const {
  const size_t n = aw.idx.size();
  if (ordered_agent(aw.agent)) return known_prefix(k, s, aw, n);
  // A chained queue's known commands are a prefix and a few runs (its write indices grow).
  auto index_of = [&](size_t j) { return t_.cmds[writes_[s][aw.idx[j]].event.id].index; };
  size_t j = 0;
  for (auto [lo, hi] : k.known_ranges(aw.agent)) {
    if (j == n || index_of(j) < lo) break;
    size_t a = j, b = n;
    while (a < b) {
      size_t mid = (a + b) / 2;
      if (index_of(mid) < hi) a = mid + 1;
      else b = mid;
    }
    j = a;
  }
  return j;
}

uint32_t Engine::first_unknown_candidate(const Clock& start, const WaitCond& cond, const AgentWrites& aw) const {
  const uint32_t s = cond.signal;
  if (ordered_agent(aw.agent)) {
    // pick_candidates' first unordered match: the first write after the known prefix that meets it
    // (`vals` bounds the values from above: a 32-bit write's high half is only known once it runs).
    for (size_t j = first_match(aw, known_prefix(start, s, aw, aw.processed), cond); j < aw.processed; j = first_match(aw, j + 1, cond))
      if (cond.met_by(writes_[s][aw.idx[j]].value)) return aw.idx[j];
    return kNone;
  }
  // A chained queue's, as pick_candidates scans them: its latest writes first, back to a known write
  // that does not meet it and follows every earlier one (its scan bounds cannot bind: it made at
  // most kMaxChainedCandidates writes, or resolve_unlisted is not asked).
  for (size_t j = aw.processed; j-- > 0;) {
    const SignalWrite& w = writes_[s][aw.idx[j]];
    bool kn = known(start, w.event);
    if (!cond.met_by(w.value)) {
      if (kn && w.follows_all_prev) break;
    } else if (!kn) {
      return aw.idx[j];
    }
  }
  return kNone;
}

bool Engine::knows_no_matching_writer(const WaitCond& cond, const Clock& start, bool& knows_some) const {
  const uint32_t s = cond.signal;
  const auto& agents = by_agent_[s];
  const bool narrow = cond.narrow();
  const uint64_t at_least = reach(true, cond.threshold);
  auto has_match = [&](const AgentWrites& aw) { return reach(aw.processed, narrow ? aw.processed_max32 : aw.processed_max) >= at_least; };
  // Of the queues whose write commands it knows any of (fixed by the entry), the most they will
  // write: subtrees of writers that can never meet the wait are skipped (the relay whose writes
  // are lower than the strays').
  const Clock::Fresh fresh = fresh_for(s);
  const Clock::Bound bound{
      kMatchKey | uint64_t(s) << 1 | uint64_t(narrow),
      [&](uint32_t q) -> uint64_t {
        uint32_t pos = pos_of(s, q);
        if (pos == kNone) return 0;
        const AgentWrites& aw = agents[pos];
        return knows_write_command_of(start, s, aw) ? reach(true, (narrow ? aw.suffix_max32 : aw.suffix_max)[0]) : 0;
      },
      [](uint64_t, uint64_t) -> uint64_t { return 0; },
      stamp_now(s), &fresh,
      [&](uint32_t q) -> uint64_t {  // a known writer refused is taken for a wait as high as it wrote
        uint32_t pos = pos_of(s, q);
        if (pos == kNone || !knows_some_write(start, s, agents[pos])) return 0;
        return reach(agents[pos].processed, narrow ? agents[pos].processed_max32 : agents[pos].processed_max);
      }};
  auto knows_matching = [&](const AgentWrites& aw) { return has_match(aw) && knows_some_write(start, s, aw); };
  uint32_t found = start.first_reaching(bound, at_least, [&](uint32_t q) {
    uint32_t pos = pos_of(s, q);
    return pos != kNone && knows_matching(agents[pos]);
  }, [](uint64_t, uint64_t) { return Clock::kNoQueue; }, &work_);
  if (found != Clock::kNoQueue) return false;
  if (!agents.empty() && agents.back().agent == kHostAgent && knows_matching(agents.back())) return false;
  // Whether it knows any write at all (then the initial value is overwritten): surely, where it
  // knows a latest one; otherwise not told. Asked only where the initial value meets the wait.
  if (cond.met_by(init_[s])) {
    std::vector<uint32_t> known_now;
    known_latest(s, start, known_now);
    knows_some = !known_now.empty();
  }
  return true;
}

bool Engine::resolve_unlisted_many(const WaitCond& cond, const Clock& start, WaitResolution& r) const {
  // As resolve_unlisted, without unknown_writers: what the start does not know of each writer is
  // read from its clock's entry, and the first candidate is that of the first writer (in writer
  // order) with an unknown one. Subtrees of the start's clock whose writers cannot have one are
  // skipped: the most a writer under them could still offer (a bound cached on the tree's nodes,
  // the same for every start that shares them) falls short of the wait.
  // The proof is the last latest write it knows that meets the wait (latest_known); where the
  // start does not know all that one knew, the general path decides.
  const uint32_t s = cond.signal;
  const uint32_t proof = top_known_latest(cond, start);
  if (proof == kNone || !writes_[s][proof].end->leq(start)) return false;
  r.latest_known = proof;
  const ManyLatest& m = many_latest(s);
  const auto& agents = by_agent_[s];
  const bool narrow = cond.narrow();
  uint32_t first = kNone;
  // A subtree where no writer had an unknown candidate for a wait this high keeps none until a
  // writer under it writes (writers that will write a match but have not yet: the bound lets them by).
  const Clock::Fresh fresh = fresh_for(s);
  Clock::Bound bound = will_bound(s, start, narrow ? WillOf::Low : WillOf::Word);
  bound.stamp = stamp_now(s), bound.fresh = &fresh;
  bound.refused = [&](uint32_t q) -> uint64_t {  // a writer with no unknown write made: for no wait
    uint32_t pos = pos_of(s, q);
    if (pos == kNone) return 0;
    const AgentWrites& aw = agents[pos];
    return first_unknown_write(start, s, aw) >= aw.processed ? 0 : reach(true, narrow ? aw.processed_max32 : aw.processed_max);
  };
  auto take = [&](uint32_t q) {
    uint32_t pos = pos_of(s, q);
    if (pos == kNone) return false;
    first = first_unknown_candidate(start, cond, agents[pos]);
    return first != kNone;
  };
  auto take_unknown = [&](uint64_t lo, uint64_t hi) {  // queues it knows nothing of: the first writer there with a match
    auto [a, b] = writer_places(s, lo, hi);
    const MaxTree& wrote = narrow ? m.wrote32 : m.wrote;
    // (`reach` saturates: a writer of 2^64 - 2 is found for a wait for 2^64 - 1, and passed over.)
    for (size_t pos = wrote.next(a, reach(true, cond.threshold)); pos < b; pos = wrote.next(pos + 1, reach(true, cond.threshold)))
      if ((first = first_unknown_candidate(start, cond, agents[pos])) != kNone) return writer_queues_[s][pos];
    return Clock::kNoQueue;
  };
  start.first_reaching(bound, reach(true, cond.threshold), take, take_unknown, &work_);
  if (first == kNone && !agents.empty() && agents.back().agent == kHostAgent) first = first_unknown_candidate(start, cond, agents.back());
  if (first != kNone) {
    r.candidates.push_back(first);
    r.candidate_known.push_back(false);
  }
  return true;
}

Clock::Fresh Engine::fresh_for(uint32_t s) const {
  return [this, s](uint64_t lo, uint64_t hi, uint64_t stamp) { return unchanged_since(s, lo, hi, stamp); };
}

Clock::Bound Engine::will_bound(uint32_t s, const Clock& k, WillOf of) const {
  const uint64_t key = of == WillOf::Below ? kBelowKey | s : uint64_t(s) << 1 | uint64_t(of == WillOf::Low);
  return {key,
          [this, s, &k, of](uint32_t q) -> uint64_t {  // of its writes from the first k does not know (made or not: fixed by the entry)
            uint32_t pos = pos_of(s, q);
            if (pos == kNone) return 0;
            const AgentWrites& aw = by_agent_[s][pos];
            size_t j = first_unknown_write(k, s, aw);
            if (j == aw.idx.size()) return 0;
            return of == WillOf::Below ? ~aw.suffix_min[j] : reach(true, (of == WillOf::Low ? aw.suffix_max32 : aw.suffix_max)[j]);
          },
          [this, s, of](uint64_t lo, uint64_t hi) -> uint64_t {
            auto [a, b] = writer_places(s, lo, hi);
            const ManyLatest& m = many_latest(s);
            return (of == WillOf::Below ? m.will_below : of == WillOf::Low ? m.will32 : m.will).max_in(a, b);
          },
          0, nullptr, {}};
}

bool Engine::writers_of_other_values(uint32_t s, const Clock& k, uint64_t v, std::vector<uint32_t>& out) const {
  out.clear();
  const auto& agents = by_agent_[s];
  // (Where `k` need not be down-closed, Clock::open: an ordered writer's known writes need not be
  // a prefix, which first_unknown_write rests on.)
  if (agents.size() <= kLatest || k.open()) return false;
  const ManyLatest& m = many_latest(s);
  // Two walks over k's tree: writers whose writes from the first one k does not know can be more
  // than v, and those whose can be less (the values complemented, so the larger is wanted). A
  // writer k knows nothing of counts by what it has written. Every writer the walks reach is
  // taken (a superset: the caller reads each one's writes).
  auto walk = [&](bool below) {
    if (below ? v == 0 : v == ~uint64_t(0)) return;
    // (Complemented values are kept as they are, not as `reach` keeps them: none is 0, and ~v is 0
    // only for a value below nothing. `reach` would take 0 and 1 for one.)
    const uint64_t at_least = below ? ~v + 1 : reach(true, v + 1);
    const Clock::Bound bound = will_bound(s, k, below ? WillOf::Below : WillOf::Word);
    auto take = [&](uint32_t q) { return out.push_back(q), false; };
    auto take_unknown = [&](uint64_t lo, uint64_t hi) {
      auto [a, b] = writer_places(s, lo, hi);
      const MaxTree& wrote = below ? m.wrote_below : m.wrote;
      for (size_t pos = wrote.next(a, at_least); pos < b; pos = wrote.next(pos + 1, at_least)) out.push_back(writer_queues_[s][pos]);
      return Clock::kNoQueue;
    };
    k.first_reaching(bound, at_least, take, take_unknown, &work_);
  };
  walk(false);
  walk(true);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (agents.back().agent == kHostAgent) out.push_back(kHostAgent);
  return true;
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
  if (ok && forced && overrides_.count(event_key(w))) learned.set_open(r.adds_ordering && !close_override(start, learned));
  uint32_t id = uint32_t(resolutions_.size());
  (w.host ? host_resolution_[w.id] : cmd_resolution_[w.id]) = id;
  resolutions_.push_back(std::move(r));
  if (ok && !forced) obs.on_wait(resolutions_.back());  // a forced wait's: once its candidates are known (settle_forced)
  return ok;
}

void Engine::resolve_forced(const EventRef& w, const WaitCond& cond, const Clock& start,
                            WaitResolution& r, Clock& learned) {
  const uint32_t s = cond.signal;
  if (auto it = overrides_.find(event_key(w)); it != overrides_.end()) {
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

bool Engine::close_override(const Clock& start, Clock& learned) {
  if (start.open()) return false;
  Clock k = start;
  k.join(learned);
  uint64_t& budget = close_budget_;
  // A write the override knows: run in this round, and its end (down-closed) joined in.
  // (The nodes a comparison walks count against the budget; the join walks no more of them.)
  auto close = [&](uint32_t signal, uint32_t i, Clock& into) {
    const SignalWrite& sw = writes_[signal][i];
    if (!sw.processed || sw.end->open()) return false;
    uint64_t looked = 0;
    if (!sw.end->leq(into, &looked)) into.join(*sw.end);
    work_ += looked;
    if (looked > budget) return budget = 0, false;
    budget -= looked;
    return true;
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
    Override o{f.next_learned, f.next_initial};
    auto it = overrides_.find(event_key(f.wait));
    if (it != overrides_.end()) o.learned.join(it->second.learned);
    // A wait forced without an override may be forced otherwise with one (try_wait asks it whether
    // the initial value is a candidate): the next round's input differs, so it runs.
    if (it == overrides_.end() || !(o.learned.leq(f.learned) && f.learned.leq(o.learned)) || o.initial != f.initial)
      changed = true;
    out[event_key(f.wait)] = std::move(o);
  }
  return out;
}

void Engine::settle_forced(EngineObserver& obs) {
  for (Forced& f : forced_) {
    WaitResolution& r = resolutions_[f.resolution];
    if (!settle_through_tree(f, r)) {
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
    obs.on_wait(r);
  }
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

bool Engine::knows_write_command(uint32_t s, const Clock& k) const {
  const auto& agents = by_agent_[s];
  if (!agents.empty() && agents.back().agent == kHostAgent && k.knows_host(writes_[s][agents.back().idx[0]].event.id))
    return true;
  return k.any_known_queue(writer_queues_[s], [&](uint32_t q) { return knows_write_command_of(k, s, agents[pos_of(s, q)]); },
                          Clock::kNoTag, &work_);
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

void Engine::record_write(uint32_t s, size_t index, const Clock& end) {
  SignalWrite& w = writes_[s][index];
  if (w.narrow) w.value = written_word(high_half_before(s, end), w.value, 32);
  AgentWrites* aw = &by_agent_[s][w.pos];
  WriterIndex& ix = index_[s];
  index_pending(s, w.pos, false);
  if (aw->processed) ix.done.erase({aw->processed_max, w.pos}), ix.done32.erase({aw->processed_max32, w.pos});
  find_cover(s, w, end);
  if (latest_[s].covers_in_order) latest_[s].covers_in_order = covers_previous(s, w);  // once false, it stays so
  // Does it follow every earlier write of its agent? (Always, except for chained releases.)
  w.follows_all_prev = true;
  if (aw->processed > 0) {
    const SignalWrite& prev = writes_[s][aw->idx[aw->processed - 1]];
    w.follows_all_prev = prev.follows_all_prev && known(end, prev.event);
  }
  if ((w.value ^ init_[s]) & kHighHalf) uniform_high_[s] = false;
  LatestWrites& latest = latest_[s];
  bool one = latest.live == 1;  // a timeline so far: its previous write
  uint64_t prev = 0;
  if (one)
    for (size_t j = latest.order.size(); j-- > 0;)
      if (latest.in[latest.order[j]]) {
        prev = writes_[s][latest.order[j]].value;
        break;
      }
  drop_known_latest(s, end);
  bool follows = latest.live == 0;
  timeline64_[s] &= follows && (!one || w.value >= prev);
  timeline32_[s] &= follows && (!one || (w.value & kLowHalf) >= (prev & kLowHalf));
  latest.order.push_back(uint32_t(index));
  latest.in[index] = 1;
  ++latest.live;
  if (aw->latest.empty()) ++latest.agents;
  if (!aw->holder) aw->holder = true, latest.holders.push_back(w.pos);
  aw->latest.insert(aw->latest.end(), uint32_t(index));
  w.rank = uint32_t(processed_order_[s].size());
  processed_order_[s].push_back(uint32_t(index));
  ++sig_epoch_[s];
  for (uint32_t q : waiting_on_[s]) {
    if (parked_on_[q] == s) parked_on_[q] = kNone;
    wake(q);
  }
  waiting_on_[s].clear();
  for (uint32_t q : aw->waiters) {
    if (parked_on_[q] == s) parked_on_[q] = kNone;
    wake(q);
  }
  aw->waiters.clear();
  w.processed = true;
  for (auto& tree : unprocessed_[s])
    if (tree) tree->erase(index);
  w.end = std::make_shared<const Clock>(end);
  ++aw->processed;
  if (!ordered_agent(aw->agent)) {
    chained_max_[s] = std::max(chained_max_[s], aw->processed);
    if (!aw->chain_broken && aw->idx.size() > kChainDirect) {
      if (!aw->chain) aw->chain = std::make_shared<ChainIndex>(aw->idx.size());
      if (aw->chain->added() + 1 == aw->processed && aw->idx[aw->processed - 1] == uint32_t(index))
        aw->chain->add(w.value, w.follows_all_prev, *w.end);
      else
        aw->chain = nullptr, aw->chain_broken = true;  // not in its order (never seen): read write by write
    }
    chained_meets_[s].writes.push_back(uint32_t(index));
  }
  aw->processed_max = std::max(aw->processed_max, w.value);
  aw->processed_max32 = std::max(aw->processed_max32, w.value & kLowHalf);
  aw->processed_min = std::min(aw->processed_min, w.value);
  ix.done.insert({aw->processed_max, w.pos});
  ix.done32.insert({aw->processed_max32, w.pos});
  index_pending(s, w.pos, true);
  if (auto& m = many_latest_[s]; m && aw->agent != kHostAgent) {
    m->last_rank.set(w.pos, stamp_base_ + w.rank + 1);
    m->wrote.set(w.pos, reach(true, aw->processed_max)), m->wrote32.set(w.pos, reach(true, aw->processed_max32));
    m->wrote_below.set(w.pos, ~aw->processed_min);
  }
}

void Engine::kill_agent(uint32_t agent, uint32_t cause, bool wake_all) {
  ++deaths_;
  for (auto [s, pos] : signals_of(agent)) index_pending(s, pos, false);  // its pending writes never come
  if (wake_all) wake_parked();  // their waits may now be blocked behind it
  if (agent == kHostAgent) {
    host_dead_ = true;
    host_dead_cause_ = cause;
  } else {
    qs_[agent].dead = true;
    queue_dead_cause_[agent] = cause;
  }
}

// A wait with no candidate: a deadlock of its own, or blocked behind another deadlock when the
// writes that could satisfy it never run (then it belongs to that deadlock).
uint32_t Engine::blocked_cause(EventRef wait, const WaitCond& cond, const Clock& start) {
  uint32_t own = wait.host ? kHostAgent : t_.cmds[wait.id].queue;
  const auto& ws = writes_[cond.signal];
  // The unprocessed writes that meet it, in order: the others are passed over without a look
  // (thousands of waits on one signal die, each asking). Built on first use, then kept as writes
  // are processed (record_write).
  MaxTree* tree = nullptr;
  if (indexed(cond)) {
    auto& slot = unprocessed_[cond.signal][cond.narrow()];
    if (!slot) {
      std::vector<uint64_t> vals;
      for (const SignalWrite& w : ws) vals.push_back(w.value & cond.mask);
      slot = std::make_unique<MaxTree>(vals);
      for (size_t i = 0; i < ws.size(); ++i)
        if (ws[i].processed) slot->erase(i);
    }
    tree = slot.get();
  }
  for (size_t i = tree ? tree->next(0, cond.threshold) : 0; i < ws.size(); i = tree ? tree->next(i + 1, cond.threshold) : i + 1) {
    const SignalWrite& w = ws[i];
    ++work_;
    // Writes that come after the wait anyway could never have satisfied it.
    if (w.agent == own || submitted_after(wait, w)) continue;
    if (w.processed || !write_dead(w)) continue;
    // (A mixed signal's 32-bit write: with what it could have kept, had it run.)
    if (cond.met_by(mixed(cond) && w.narrow ? unrun_high(wait, cond, start, true, w) | (w.value & kLowHalf) : w.value)) {
      bool queue_dead = w.agent != kHostAgent && qs_[w.agent].dead;
      return queue_dead ? queue_dead_cause_[w.agent] : host_dead_cause_;  // else its submit never runs
    }
  }
  return kNone;
}

Clock Engine::start_at(uint32_t q, uint32_t submit) const {
  Clock start = qs_[q].fe;
  if (!start.knows_host(submit)) {  // the batch's first command: later ones know it through the front end
    start.join(*host_epochs_[submit_epoch_[submit]]);
    start.see_host(submit);
  }
  return start;
}

// Where a stuck wait starts: as step_queue and step_host give it.
Clock Engine::wait_start(EventRef w) const { return w.host ? host_clock_ : start_at(t_.cmds[w.id].queue, t_.cmds[w.id].submit); }

Engine::WaitStep Engine::try_wait(EventRef w, uint32_t agent, const WaitCond& cond, bool& forced,
                                  uint64_t& blocked_at, const Clock& start, Clock& learned, EngineObserver& obs) {
  uint32_t blocker;
  if (!w.host) foresee(w, agent, cond), inherit(w, agent, cond);
  if (!forced && blocked_at == epoch(cond.signal)) return WaitStep::Blocked;
  if (!forced && !resolvable(w, cond, start, blocker)) {
    blocked_at = epoch(cond.signal);
    // The initial value meets it and its start knows no write of the signal: the initial value is
    // a candidate whatever the pending writes do, so the wait learns nothing (semantics.md), and
    // forcing it is exact; unstick forces all such waits at once (not one per episode: thousands
    // of queues `wait s >= 1; signal s = 1` with s = 1 took an episode each). Where a wait has an
    // override, the last round's answer (refine) says so.
    if (!w.host && cond.met_by(init_[cond.signal])) {
      bool none = knows_no_write(cond.signal, start);  // false once clocks need not be down-closed
      if (auto it = overrides_.find(event_key(w)); it != overrides_.end()) none = it->second.initial;
      qs_[agent].initial_ok = none ? w.id : kNone;
    }
    return WaitStep::Blocked;
  }
  // Forced because the initial value is a candidate: only if its candidates say so now (an
  // override's answer is the last round's, whose start may have known less); else it waits as any
  // other.
  bool for_initial = forced && !w.host && qs_[agent].initial_ok == w.id, not_initial = false;
  if (for_initial) qs_[agent].initial_ok = kNone;
  bool was_forced = forced;
  forced = false;
  if (resolve(w, cond, start, learned, obs, was_forced, for_initial ? &not_initial : nullptr)) return WaitStep::Resolved;
  if (not_initial) {
    blocked_at = epoch(cond.signal);
    return WaitStep::Blocked;
  }
  // Derived, but the writes made so far are all overwritten: then it is caught in a cycle with the
  // waits behind it (or needs a pending write after all). unstick decides, without derivations.
  if (!w.host && qs_[agent].proof.wait == w.id) {
    qs_[agent].proof = {};
    underived_.insert(w.id);
    if (!resolvable(w, cond, start, blocker)) {
      blocked_at = epoch(cond.signal);
      return WaitStep::Blocked;
    }
  }
  // Forced by unstick, but every write made so far is overwritten: it still needs a pending one.
  if (was_forced && !resolvable(w, cond, start, blocker)) {
    blocked_at = epoch(cond.signal);
    unforceable_.insert({submit_key(w), epoch(cond.signal)});
    return WaitStep::Blocked;
  }
  uint32_t cause = blocked_cause(w, cond, start);
  if (cause == kNone) {
    cause = uint32_t(deadlocks_.size());
    deadlocks_.push_back({{w}, false, 0, 0});
  }
  kill_agent(agent, cause);
  return WaitStep::Dead;
}

bool Engine::step_queue(uint32_t q, EngineObserver& obs) {
  ++work_;
  QueueState& st = qs_[q];
  const auto& list = t_.queue_cmds[q];
  if (st.dead || st.pos == list.size()) return false;
  uint32_t id = list[st.pos];
  const TraceCmd& c = t_.cmds[id];
  if (!host_ran_[c.submit]) return false;
  Clock start = start_at(q, c.submit);
  QueueOrder before = st.order;
  QueueStep rule = st.order.next(c.op, c.submit);
  if (rule.after_chain) start.join(st.chain_next);
  Clock end = start;
  if (c.op == CmdOp::Wait) {
    Clock learned;
    if (try_wait({false, id}, q, wait_cond(t_, {false, id}), st.forced, st.blocked_at, start, learned, obs) != WaitStep::Resolved) {
      st.order = before;  // the wait did not step: neither does the chain state
      return false;
    }
    end.join(learned);
  }
  if (rule.release) end.join(st.chain_end);
  else if (rule.after_all) end.join(st.acc);
  end.add_end(q, c.index);
  st.acc.join(end);
  st.fe = rule.blocks ? end : start;
  if (rule.release) st.chain_next.join(end);  // the release ends with its exec: the chain goes on through it
  if (rule.starts_chain) st.chain_end = st.chain_next = end;
  if (cmd_write_[id] != kNone) record_write(c.signal, cmd_write_[id], end), ++st.writes;
  cmd_ran_[id] = 1;
  ++st.pos;
  obs.on_command(id, start, end);
  return true;
}

bool Engine::step_host(EngineObserver& obs) {
  ++work_;
  if (host_dead_ || host_pos_ == t_.host.size()) return false;
  uint32_t h = uint32_t(host_pos_);
  const HostEvent& e = t_.host[h];
  // The host's clock is updated in place (it may know many queues: no copy per statement); a
  // wait that cannot be resolved yet leaves it as it was.
  Clock& k = host_clock_;
  if (e.op == HostOp::Wait) {
    Clock learned;
    k.see_host(h);
    if (try_wait({true, h}, kHostAgent, wait_cond(t_, {true, h}), host_forced_, host_blocked_at_, k, learned, obs) !=
        WaitStep::Resolved) {
      k.unsee_host(h);
      return false;
    }
    k.join(learned);
  }
  // A wait starts a new epoch; its clock is kept once a submit needs it (waits in a row keep one).
  if (e.op == HostOp::Wait) host_epoch_stale_ = true;
  if (e.op == HostOp::Submit) {
    if (host_epoch_stale_) host_epochs_.push_back(std::make_shared<const Clock>(k));
    host_epoch_stale_ = false;
    submit_epoch_[h] = uint32_t(host_epochs_.size() - 1);
  }
  k.see_host(h);
  if (e.op == HostOp::Free) kept_host_clocks_.push_back({h, std::make_shared<const Clock>(k)});
  if (host_write_[h] != kNone) record_write(e.signal, host_write_[h], k);
  host_ran_[h] = 1;
  ++host_pos_;
  obs.on_host(h, k);
  return true;
}

namespace {
// A multiset of (key, place) pairs that answers "how many have a key >= v, and what do their
// places add up to" in O(log^2 n), and takes single insertions in amortized O(log n): sorted runs
// of sizes 1, 2, 4, ... merged like a binary counter, each with suffix sums of its places.
class KeyCounts {
 public:
  size_t size() const { return size_; }
  void insert(uint64_t key, uint32_t place) {
    std::vector<std::pair<uint64_t, uint32_t>> carry{{key, place}};
    size_t level = 0;
    for (; level < runs_.size() && !runs_[level].items.empty(); ++level) {
      std::vector<std::pair<uint64_t, uint32_t>> merged;
      merged.reserve(carry.size() + runs_[level].items.size());
      std::merge(carry.begin(), carry.end(), runs_[level].items.begin(), runs_[level].items.end(), std::back_inserter(merged));
      carry = std::move(merged);
      runs_[level] = {};
    }
    if (level == runs_.size()) runs_.emplace_back();
    runs_[level].items = std::move(carry);
    auto& r = runs_[level];
    r.suffix.assign(r.items.size() + 1, 0);
    for (size_t i = r.items.size(); i-- > 0;) r.suffix[i] = r.suffix[i + 1] + r.items[i].second;
    ++size_;
  }
  // Moves every element of `o` into this one.
  void absorb(KeyCounts& o) {
    for (auto& r : o.runs_)
      for (auto [k, p] : r.items) insert(k, p);
    o = {};
  }
  std::pair<uint64_t, uint64_t> at_least(uint64_t v) const {  // count, sum of places
    uint64_t n = 0, sum = 0;
    for (const auto& r : runs_) {
      if (r.items.empty()) continue;
      size_t i = size_t(std::lower_bound(r.items.begin(), r.items.end(), std::pair<uint64_t, uint32_t>{v, 0}) - r.items.begin());
      n += r.items.size() - i;
      sum += r.suffix[i];
    }
    return {n, sum};
  }

 private:
  struct Run {
    std::vector<std::pair<uint64_t, uint32_t>> items;
    std::vector<uint64_t> suffix;
  };
  std::vector<Run> runs_;
  size_t size_ = 0;
};
}  // namespace

// The stuck waits of one signal (and width) prove facts of each other from below. Wait W's
// pending candidates are the writers with a pending value that meets it. Say a writer's pending
// writes are all behind the wait at the head of its queue. If every pending candidate of W is
// behind one head H, and W has no other candidate (no write made so far meets it, nor does the
// initial value), then W's end comes after H's end: every candidate does. So W hangs under H in a
// forest, and the writes of every queue in W's subtree come after H's end too: they are no
// candidates of H. A root whose remaining candidates are all in its subtree is cleared: it can
// be resolved now, with the writes made so far, and that is exactly its least-fixed-point
// resolution (every candidate it leaves out comes after it, whatever else the fixed point adds).
// A wait with one remaining writer records it, so it is resolved once that writer's writes ran.
// Each fact holds in the least fixed point, so no round of `refine` is needed for them; where
// nothing is cleared, `unstick` forces a wait as before. Cost: O(writers + waits log^2) per episode.
bool Engine::has_done(const WaitCond& cond) const {
  const auto& done = cond.narrow() ? index_[cond.signal].done32 : index_[cond.signal].done;
  return cond.met_by(init_[cond.signal]) || done.lower_bound({cond.threshold, 0}) != done.end();
}

uint64_t Engine::pending_meeting(const WaitCond& cond) const {
  const auto& pending = cond.narrow() ? index_[cond.signal].pending32 : index_[cond.signal].pending;
  return pending.size() - pending.order_of_key({cond.threshold, 0});
}

uint64_t Engine::tree_pending(uint32_t q, const WaitCond& cond) {
  auto [it, made] = qs_[q].tree.pending.try_emplace({cond.signal, cond.narrow()});
  std::vector<uint64_t>& vals = it->second;
  if (made) {
    for (const AgentWrites& aw : by_agent_[cond.signal])
      if (uint64_t key; aw.agent != kHostAgent && tree_of_[aw.agent] == std::pair{episodes_, q} && pending_top(aw, cond.narrow(), key))
        vals.push_back(key);
    work_ += by_agent_[cond.signal].size();
    std::sort(vals.begin(), vals.end());
  }
  ++work_;
  return uint64_t(vals.end() - std::lower_bound(vals.begin(), vals.end(), cond.threshold));
}

void Engine::inherit(EventRef w, uint32_t q, const WaitCond& cond) {
  QueueState::Proof& pf = qs_[q].proof;
  if (w.host || pf.wait == w.id || !indexed(cond) || underived_.count(w.id)) return;
  // A wait on another signal (or width) after a cleared one: its pending candidates, if all in
  // the tree, come after its end as the first one's did (a queue gathering from thousands of
  // stuck writers waited on a few signals in turn, an episode per wait over every stuck head).
  if (const QueueState::Tree& tr = qs_[q].tree; tr.episode == episodes_ && tr.deaths == deaths_ && tr.own == qs_[q].writes &&
                                                 (pf.signal != cond.signal || cond.narrow() != pf.narrow)) {
    ++work_;
    if (pending_meeting(cond) == tree_pending(q, cond) && has_done(cond)) pf = {w.id, kNone, cond.signal, cond.narrow(), cond.threshold, episodes_, qs_[q].writes};
    return;
  }
  if (pf.signal != cond.signal || cond.narrow() != pf.narrow || episodes_ != pf.episode) return;
  if (qs_[q].writes != pf.own) return;
  // A lower wait has the proven one's pending candidates where no writer's pending value lies
  // between the two (waits whose thresholds fall, each on the same pending writers, took an
  // episode each: thousands of stuck heads each time).
  if (cond.threshold < pf.v) {
    const auto& pending = cond.narrow() ? index_[cond.signal].pending32 : index_[cond.signal].pending;
    ++work_;
    if (auto it = pending.lower_bound({cond.threshold, 0}); it != pending.end() && it->first < pf.v) return;
  }
  uint32_t only = pf.only;
  if (only != kNone && pending_candidate(w, by_agent_[cond.signal][only], cond) == kNone) only = kNone;
  if (only == kNone && !has_done(cond)) return;  // no candidate but those behind it: unstick's cycle
  pf.wait = w.id;
  pf.only = only;
}

bool Engine::pending_top(const AgentWrites& aw, bool narrow, uint64_t& key) const {
  if (aw.processed == aw.idx.size() || (aw.agent == kHostAgent ? host_dead_ : qs_[aw.agent].dead)) return false;
  key = narrow ? aw.suffix_max32[aw.processed] : aw.suffix_max[aw.processed];
  return true;
}

void Engine::foresee(EventRef w, uint32_t q, const WaitCond& cond) {
  QueueState& st = qs_[q];
  const QueueState::Foresight& a = st.ahead;
  if (a.wait != w.id || a.episode != episodes_ || a.deaths != deaths_ || st.proof.wait == w.id || !has_done(cond)) return;
  uint64_t meet = pending_meeting(cond);
  uint32_t pos = pos_of(cond.signal, q);
  if (uint64_t key; pos != kNone && pending_top(by_agent_[cond.signal][pos], cond.narrow(), key) && key >= cond.threshold) --meet;
  if (meet != a.count) return;
  st.proof = {w.id, kNone, cond.signal, cond.narrow(), cond.threshold, episodes_, st.writes};
}

bool Engine::derive() {
  auto& nodes = stuck_nodes_;
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (!nodes[i].wait.host && indexed(nodes[i].cond) && !underived_.count(nodes[i].wait.id)) order.push_back(i);
  size_t n = order.size();
  if (n == 0) return false;
  // The (signal, width) pairs the episode asks about: those of the stuck waits, and of the waits
  // that come next on their queues (foreseen below). Per pair, the pending values, ascending, with
  // suffix sums of their places.
  using Key = std::pair<uint32_t, bool>;
  std::vector<Key> keys;
  std::vector<uint32_t> next(n, kNone);  // per member of `order`: its queue's next wait, if indexed
  std::vector<WaitCond> next_cond(n);
  for (size_t k = 0; k < n; ++k) {
    const StuckNode& sn = nodes[order[k]];
    keys.push_back({sn.cond.signal, sn.cond.narrow()});
    if (uint32_t nw = next_wait_[sn.wait.id]; nw != kNone)
      if (WaitCond c = wait_cond(t_, {false, nw}); indexed(c)) {
        next[k] = nw, next_cond[k] = c;
        keys.push_back({c.signal, c.narrow()});
      }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  auto key_of = [&](uint32_t signal, bool narrow) {
    auto it = std::lower_bound(keys.begin(), keys.end(), Key{signal, narrow});
    return it != keys.end() && *it == Key{signal, narrow} ? uint32_t(it - keys.begin()) : kNone;
  };
  struct Pending {
    std::vector<std::pair<uint64_t, uint32_t>> values;
    std::vector<uint64_t> suffix;
  };
  std::vector<Pending> pend(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    const auto& set = keys[k].second ? index_[keys[k].first].pending32 : index_[keys[k].first].pending;
    pend[k].values.assign(set.begin(), set.end());
    pend[k].suffix.assign(pend[k].values.size() + 1, 0);
    for (size_t i = pend[k].values.size(); i-- > 0;) pend[k].suffix[i] = pend[k].suffix[i + 1] + pend[k].values[i].second;
    work_ += pend[k].values.size();
  }
  auto all_at_least = [&](uint32_t k, uint64_t v) -> std::pair<uint64_t, uint64_t> {
    const auto& vals = pend[k].values;
    size_t i = size_t(std::lower_bound(vals.begin(), vals.end(), std::pair<uint64_t, uint32_t>{v, 0}) - vals.begin());
    return {vals.size() - i, pend[k].suffix[i]};
  };
  struct Node {
    uint32_t node, key, pos = kNone;  // stuck_nodes_ index; its (signal, width); its queue's place among the writers
    bool pending = false;             // its queue has a pending write of the signal, of value own_key
    uint64_t own_key = 0, v = 0, m = 0, m_sum = 0;  // m: the other writers with a pending value >= v
    bool own_counts = false;          // its own pending value is >= v (counted in its tree, not in m)
    bool has_done = false;
    uint32_t only = kNone;            // set once it hangs under the head of that writer's queue
    bool clear = false;
    uint32_t next = kNone, next_key = kNone;  // the queue's next wait, foreseen
    uint64_t next_v = 0, late = 0;    // late: writers meeting it that hang below through writes after it
  };
  // Per tree (at its union-find representative): the pending writers of its queues, per pair.
  using Members = std::map<uint32_t, KeyCounts>;
  std::vector<Node> g(n);
  std::vector<Members> members(n);
  std::vector<size_t> member_count(n, 0);
  std::vector<int> root_of(n);  // per union-find representative: the root of its tree
  std::vector<int> local(nodes.size(), -1);
  for (size_t k = 0; k < n; ++k) {
    Node& x = g[k];
    x.node = order[k];
    local[x.node] = int(k);
    const StuckNode& sn = nodes[x.node];
    uint32_t s = sn.cond.signal;
    x.key = key_of(s, sn.cond.narrow());
    x.v = sn.cond.threshold;
    root_of[k] = int(k);
    x.pos = pos_of(s, sn.agent);
    for (auto [ws, wpos] : signals_of(sn.agent))
      for (bool narrow : {false, true})
        if (uint32_t wk = key_of(ws, narrow); wk != kNone)
          if (uint64_t key; pending_top(by_agent_[ws][wpos], narrow, key)) {
            members[k][wk].insert(key, wpos);
            ++member_count[k];
            if (wk == x.key) x.pending = true, x.own_key = key;
          }
    work_ += 1 + signals_of(sn.agent).size();
    auto [m, sum] = all_at_least(x.key, x.v);
    x.own_counts = x.pending && x.own_key >= x.v;
    x.m = m - (x.own_counts ? 1 : 0);
    x.m_sum = sum - (x.own_counts ? x.pos : 0);
    x.has_done = has_done(sn.cond);
    if (next[k] != kNone)
      x.next = next[k], x.next_key = key_of(next_cond[k].signal, next_cond[k].narrow()), x.next_v = next_cond[k].threshold;
  }
  std::vector<int> uf(n);
  for (size_t k = 0; k < n; ++k) uf[k] = int(k);
  auto find = [&](int a) {
    while (uf[size_t(a)] != a) a = uf[size_t(a)] = uf[size_t(uf[size_t(a)])];
    return a;
  };
  auto in_tree = [&](int r, uint32_t key, uint64_t v) -> std::pair<uint64_t, uint64_t> {
    auto it = members[size_t(r)].find(key);
    return it == members[size_t(r)].end() ? std::pair<uint64_t, uint64_t>{0, 0} : it->second.at_least(v);
  };
  auto merge = [&](int into, int from) {  // the smaller tree's writers move into the larger's
    if (member_count[size_t(into)] < member_count[size_t(from)]) {
      std::swap(members[size_t(into)], members[size_t(from)]);
      std::swap(member_count[size_t(into)], member_count[size_t(from)]);
    }
    for (auto& [key, counts] : members[size_t(from)]) {
      KeyCounts& dst = members[size_t(into)][key];
      if (dst.size() < counts.size()) std::swap(dst, counts);
      dst.absorb(counts);
    }
    member_count[size_t(into)] += member_count[size_t(from)];
    members[size_t(from)].clear();
    member_count[size_t(from)] = 0;
  };
  std::vector<int> work(n);
  for (size_t k = 0; k < n; ++k) work[k] = int(n - 1 - k);
  while (!work.empty()) {
    int k = work.back();
    work.pop_back();
    Node& x = g[size_t(k)];
    if (x.only != kNone || x.clear) continue;
    int r = find(k);
    auto [tn, tsum] = in_tree(r, x.key, x.v);
    uint64_t own_tree = tn - (x.own_counts ? 1 : 0), own_tree_sum = tsum - (x.own_counts ? x.pos : 0);
    uint64_t left = x.m - own_tree;
    if (left == 0) {
      // With no other candidate its candidates all come after it: a cycle, which unstick reports.
      x.clear = x.has_done;
      continue;
    }
    if (left != 1 || x.has_done) continue;
    const StuckNode& sn = nodes[x.node];
    uint32_t only = uint32_t(x.m_sum - own_tree_sum);
    uint32_t agent = by_agent_[sn.cond.signal][only].agent;
    int h = agent == kHostAgent || stuck_node_of_queue_[agent] < 0 ? -1 : local[size_t(stuck_node_of_queue_[agent])];
    if (h < 0 || find(h) == r) continue;  // its writer is not a stuck head
    x.only = only;
    // The writer's queue runs its next wait before the write this tree waits for: the tree's
    // writers that meet that wait come after its end too.
    Node& hx = g[size_t(h)];
    if (hx.next != kNone) {
      uint32_t wi = pending_candidate(sn.wait, by_agent_[sn.cond.signal][only], sn.cond);
      if (wi != kNone && !writes_[sn.cond.signal][wi].event.host &&
          t_.cmds[writes_[sn.cond.signal][wi].event.id].index > t_.cmds[hx.next].index)
        hx.late += in_tree(r, hx.next_key, hx.next_v).first;
    }
    int hr = find(h), root = root_of[size_t(hr)];
    merge(hr, r);
    uf[size_t(r)] = hr;
    root_of[size_t(hr)] = root;
    work.push_back(root);
  }
  // The trees of cleared roots, for the roots' later waits (inherit).
  for (size_t k = 0; k < n; ++k)
    if (const Node& root = g[size_t(root_of[size_t(find(int(k)))])]; root.clear)
      tree_of_[nodes[g[k].node].agent] = {episodes_, nodes[root.node].agent};
  bool cleared = false;
  for (const Node& x : g) {
    if (x.clear) qs_[nodes[x.node].agent].tree = {episodes_, deaths_, qs_[nodes[x.node].agent].writes, {}};
    if (!x.clear && x.only == kNone) continue;
    const StuckNode& sn = nodes[x.node];
    QueueState& st = qs_[sn.agent];
    uint32_t s = sn.cond.signal;
    st.proof = {sn.wait.id, x.clear ? kNone : x.only, s, sn.cond.narrow(), x.v, episodes_, st.writes};
    st.ahead = {x.late ? x.next : kNone, x.late, episodes_, deaths_};
    st.blocked_at = ~uint64_t(0);
    parked_on_[sn.agent] = kNone;
    wake(sn.agent);
    cleared |= x.clear;
  }
  return cleared;
}

// The edges of stuck head `i` listed (semantics as in unstick): the heads, or the host, behind
// which a pending candidate of its wait lies, each once.
void Engine::stuck_edges(int i, std::vector<int>& to_list) {
  const StuckNode& n = stuck_nodes_[size_t(i)];
  const Clock start = mixed(n.cond) ? wait_start(n.wait) : Clock();  // (read only for a mixed signal)
  int host_node = stuck_nodes_.back().wait.host ? int(stuck_nodes_.size()) - 1 : -1;
  auto edge = [&](const AgentWrites& aw) {
    if (aw.agent == n.agent) return;
    uint32_t idx = pending_blocker(n.wait, aw, n.cond, start);
    if (idx == kNone) return;
    const SignalWrite& sw = writes_[n.cond.signal][idx];
    int to = -1;
    if (sw.event.host || !host_ran_[t_.cmds[sw.event.id].submit] || stuck_node_of_queue_[aw.agent] < 0) to = host_node;
    else to = stuck_node_of_queue_[aw.agent];
    if (to >= 0) to_list.push_back(to);
  };
  if (indexed(n.cond)) {  // only the live writers with a pending value that meets it
    const auto& pending = n.cond.narrow() ? index_[n.cond.signal].pending32 : index_[n.cond.signal].pending;
    for (auto it = pending.lower_bound({n.cond.threshold, 0}); it != pending.end(); ++it, ++work_) edge(by_agent_[n.cond.signal][it->second]);
  } else {
    work_ += by_agent_[n.cond.signal].size();
    for (const AgentWrites& aw : by_agent_[n.cond.signal]) edge(aw);
  }
  ++work_;
  std::sort(to_list.begin(), to_list.end());
  to_list.erase(std::unique(to_list.begin(), to_list.end()), to_list.end());
}

void Engine::unstick() {
  ++episodes_;
  // Nodes: the wait at the head of each stuck agent. (Buffers are members: this runs once per
  // stuck episode, which is once per cross-queue wait in timeline-heavy programs.)
  auto& nodes = stuck_nodes_;
  auto& node_of_queue = stuck_node_of_queue_;
  nodes.clear();
  for (uint32_t q : parked_) node_of_queue[q] = -1;
  int host_node = -1;
  std::sort(parked_.begin(), parked_.end());
  parked_.erase(std::unique(parked_.begin(), parked_.end()), parked_.end());
  size_t still = 0;
  for (uint32_t q : parked_) {
    QueueState& st = qs_[q];
    if (st.dead || st.pos == t_.queue_cmds[q].size()) continue;
    uint32_t id = t_.queue_cmds[q][st.pos];
    const TraceCmd& c = t_.cmds[id];
    if (!host_ran_[c.submit] || c.op != CmdOp::Wait) continue;
    parked_[still++] = q;
    node_of_queue[q] = int(nodes.size());
    nodes.push_back({{false, id}, q, wait_cond(t_, {false, id})});
  }
  parked_.resize(still);
  if (!host_dead_ && host_pos_ < t_.host.size() && t_.host[host_pos_].op == HostOp::Wait) {
    host_node = int(nodes.size());
    nodes.push_back({{true, uint32_t(host_pos_)}, kHostAgent, wait_cond(t_, {true, uint32_t(host_pos_)})});
  }
  if (nodes.empty()) {  // nothing can move and nothing waits: the rest never runs
    host_dead_ = true;
    for (auto& st : qs_) st.dead = true;
    return;
  }
  if (derive()) return;
  // Waits that learn nothing whatever the pending writes do (try_wait): forced together.
  bool forced_initial = false;
  for (const StuckNode& n : nodes)
    if (!n.wait.host && qs_[n.agent].initial_ok == n.wait.id) qs_[n.agent].forced = true, wake(n.agent), forced_initial = true;
  if (forced_initial) return;
  // The graph: an edge from each stuck head to the heads (and the host) that hold a pending
  // candidate of its wait. On a timeline it is dense (a stuck `wait t >= i` may take any later
  // queue's value: k^2 edges for k stuck queues), so a wait on the whole word or its low half gets
  // one edge, into a chain: per (signal, width), the stuck heads' writers in order of the largest
  // pending value they write in a batch already submitted, each entry pointing at the next one and
  // at its writer's head. The wait points at the first entry that meets it. Paths between heads,
  // and so the components, are those of the listed edges (the wait's own queue is in its chain: a
  // loop, which changes no component). A pending value in a batch not yet submitted, or written by
  // the host or a queue that is no stuck head, comes after the host's wait: per chain, intervals
  // of the thresholds that such a writer meets, counted. Host waits and masked waits list their
  // edges (stuck_edges). Cost: O(stuck heads + pending writers) per episode, log factors aside.
  const int n_nodes = int(nodes.size());
  auto& out = stuck_out_;
  struct Chain {
    uint32_t signal;
    bool narrow;
    std::vector<std::pair<uint64_t, int>> heads;  // (largest submitted pending value, head), ascending
    std::vector<uint64_t> lo, hi;                 // host-bound intervals [lo, hi] of thresholds, each sorted
    int base = 0;                                 // the vertex of heads[0]
    std::vector<int> minc, maxc;                  // per suffix of heads: its heads' least and greatest component
  };
  // What a stuck head's writer offers: the largest pending value in a batch already submitted
  // (false if none), and whether a larger one waits for the host (top < key).
  auto submitted_top = [&](const AgentWrites& aw, uint32_t s, bool narrow, uint64_t key, uint64_t& top) {
    // The host runs its statements in order and a writer's writes are in submission order, so the
    // submitted ones are a prefix.
    auto submitted = [&](size_t j) { return host_ran_[t_.cmds[writes_[s][aw.idx[j]].event.id].submit] != 0; };
    if (submitted(aw.idx.size() - 1)) return top = key, true;
    bool any = false;
    top = 0;
    for (size_t j = aw.processed; j < aw.idx.size() && submitted(j); ++j, ++work_)
      top = std::max(top, narrow ? aw.vals[j] & kLowHalf : aw.vals[j]), any = true;
    return any;
  };
  std::vector<Chain> chains;
  std::map<std::pair<uint32_t, bool>, int> chain_at;
  std::vector<int> chain_of(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const StuckNode& n = nodes[i];
    if (n.wait.host || !indexed(n.cond)) continue;
    auto [it, fresh] = chain_at.try_emplace({n.cond.signal, n.cond.narrow()}, int(chains.size()));
    chain_of[i] = it->second;
    if (!fresh) continue;
    Chain& c = chains.emplace_back();
    c.signal = n.cond.signal, c.narrow = n.cond.narrow();
    for (auto [key, pos] : c.narrow ? index_[c.signal].pending32 : index_[c.signal].pending) {
      const AgentWrites& aw = by_agent_[c.signal][pos];
      ++work_;
      int head = aw.agent == kHostAgent ? -1 : node_of_queue[aw.agent];
      uint64_t top = 0;
      bool any = head >= 0 && submitted_top(aw, c.signal, c.narrow, key, top);
      if (any) c.heads.push_back({top, head});
      if (!any || top < key) c.lo.push_back(any ? top + 1 : 0), c.hi.push_back(key);
    }
    std::sort(c.heads.begin(), c.heads.end());
    std::sort(c.lo.begin(), c.lo.end());
    std::sort(c.hi.begin(), c.hi.end());
  }
  int vertices = n_nodes;
  for (Chain& c : chains) c.base = vertices, vertices += int(c.heads.size());
  out.resize(size_t(vertices));
  for (auto& o : out) o.clear();
  std::vector<int> start(nodes.size(), -1);  // the chain entry a wait points at
  for (size_t i = 0; i < nodes.size(); ++i) {
    const StuckNode& n = nodes[i];
    ++work_;
    if (chain_of[i] < 0) {
      stuck_edges(int(i), out[i]);
      continue;
    }
    const Chain& c = chains[size_t(chain_of[i])];
    uint64_t v = n.cond.threshold;
    auto first = std::lower_bound(c.heads.begin(), c.heads.end(), std::pair<uint64_t, int>{v, INT_MIN});
    if (first != c.heads.end()) start[i] = c.base + int(first - c.heads.begin()), out[i].push_back(start[i]);
    // The host-bound intervals holding v, less the wait's own queue's.
    size_t held = size_t(c.hi.end() - std::lower_bound(c.hi.begin(), c.hi.end(), v)) -
                  size_t(c.lo.end() - std::upper_bound(c.lo.begin(), c.lo.end(), v));
    if (uint32_t pos = pos_of(c.signal, n.agent); held && pos != kNone)
      if (uint64_t key, top; pending_top(by_agent_[c.signal][pos], c.narrow, key) && key >= v &&
                             (!submitted_top(by_agent_[c.signal][pos], c.signal, c.narrow, key, top) || top < v))
        --held;
    if (held && host_node >= 0) out[i].push_back(host_node);
  }
  for (const Chain& c : chains)
    for (size_t j = 0; j < c.heads.size(); ++j) {
      auto& o = out[size_t(c.base) + j];
      if (j + 1 < c.heads.size()) o.push_back(c.base + int(j) + 1);
      o.push_back(c.heads[j].second);
    }
  std::vector<int> comp(size_t(vertices), 0);
  int ncomp = boost::strong_components(out, boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, out)));
  for (Chain& c : chains) {
    size_t m = c.heads.size();
    c.minc.assign(m + 1, INT_MAX), c.maxc.assign(m + 1, INT_MIN);
    for (size_t j = m; j-- > 0;) {
      int hc = comp[size_t(c.heads[j].second)];
      c.minc[j] = std::min(c.minc[j + 1], hc), c.maxc[j] = std::max(c.maxc[j + 1], hc);
    }
  }
  std::vector<bool> sink(size_t(ncomp), true);
  std::vector<std::vector<int>> members_of(static_cast<size_t>(ncomp));
  for (size_t i = 0; i < nodes.size(); ++i) {
    int ci = comp[i];
    members_of[size_t(ci)].push_back(int(i));
    for (int j : out[i]) {
      if (j < n_nodes) {
        if (comp[size_t(j)] != ci) sink[size_t(ci)] = false;
        continue;
      }
      const Chain& c = chains[size_t(chain_of[i])];
      size_t at = size_t(j - c.base);
      if (c.minc[at] != ci || c.maxc[at] != ci) sink[size_t(ci)] = false;
    }
  }
  auto has_made = [&](const StuckNode& n) {  // the initial value or a write made so far meets it
    if (indexed(n.cond)) return has_done(n.cond);
    if (mixed(n.cond)) {  // a write made that may meet it, with the highest high half any 64-bit write leaves
      if (n.cond.met_by(init_[n.cond.signal])) return true;
      for (const SignalWrite& w : writes_[n.cond.signal])
        if (w.processed && n.cond.met_by(w.narrow ? top_high_[n.cond.signal] | (w.value & kLowHalf) : w.value)) return true;
      return false;
    }
    bool has = n.cond.met_by(init_[n.cond.signal]);
    for (const AgentWrites& aw : by_agent_[n.cond.signal])
      if (aw.processed && aw.processed_max >= n.cond.threshold) has = true;
    return has;
  };
  // A component that nothing can release: its first group is a deadlock. True when that is the
  // whole component (its agents are all dead).
  auto settle = [&](const std::vector<int>& members) {
    Deadlock d;
    for (int i : deadlock_group(members)) d.waits.push_back(nodes[size_t(i)].wait);
    std::sort(d.waits.begin(), d.waits.end(), [&](EventRef a, EventRef b) { return submit_key(a) < submit_key(b); });
    d.cycle = d.waits.size() > 1;
    uint32_t cause = uint32_t(deadlocks_.size());
    deadlocks_.push_back(d);
    // The rest of the component waits behind the group: seen as blocked (or as a deadlock of its
    // own) once the group's agents are dead.
    for (EventRef w : d.waits) kill_agent(w.host ? kHostAgent : t_.cmds[w.id].queue, cause, false);
    return d.waits.size() == members.size();
  };
  // A deadlock releases nothing. When every component numbered before a non-sink one is dead,
  // its remaining edges lie within it, if none of its waits lost its last candidate (that one
  // dies blocked behind them) and none can take a write already made (that one may be forced):
  // it is a sink that nothing can release, as the next episode would find after the same steps
  // (a relay of stuck pairs dies from its end, a pair per episode: k^2 without this). Tried until
  // one is not, so a failed look costs one component's edges.
  auto ready = [&](int c) {
    std::vector<int> edges;
    for (int i : members_of[size_t(c)]) {
      const StuckNode& n = nodes[size_t(i)];
      if (n.wait.host || has_made(n)) return false;
      edges.clear();
      stuck_edges(i, edges);
      if (edges.empty()) return false;
      for (int to : edges)
        if (comp[size_t(to)] != c) return false;
    }
    return true;
  };
  bool all_dead = true;  // every component numbered so far is dead (Tarjan numbers a component after those it reaches)
  for (int c = 0; c < ncomp; ++c) {
    const std::vector<int>& members = members_of[size_t(c)];
    if (members.empty()) continue;
    if (!sink[size_t(c)]) {
      if (all_dead && ready(c)) {
        ++episodes_;  // as if it were the next episode's
        all_dead = settle(members);
      } else {
        all_dead = false;
      }
      continue;
    }
    // The group's earliest-submitted wait that some write already made can satisfy is resolved
    // with the writes made so far: the writes still held back come after it (they are submitted
    // later and wait, directly or not, for it). The others then resolve normally, seeing the
    // writes it releases. One at a time, so a later wait is never resolved before writes that
    // can legitimately satisfy it have run.
    int pick = -1;
    for (int i : members) {
      const StuckNode& n = nodes[size_t(i)];
      bool has = has_made(n) && !unforceable_.count({submit_key(n.wait), epoch(n.cond.signal)});  // unforceable: tried, its writes so far are overwritten
      if (has && (pick < 0 || submit_key(n.wait) < submit_key(nodes[size_t(pick)].wait))) pick = i;
    }
    if (pick >= 0) {
      const StuckNode& n = nodes[size_t(pick)];
      if (n.wait.host) host_forced_ = true;
      else qs_[n.agent].forced = true, wake(n.agent);
      all_dead = false;
      continue;
    }
    if (members.size() == 1) {
      // A wait with no candidate left: if a dead agent holds a write that could have met it, it
      // belongs to that deadlock (semantics.md), as try_wait would say. (A component that
      // `ready` lets through has edges.)
      const StuckNode& n = nodes[size_t(members[0])];
      std::vector<int> edges;
      stuck_edges(members[0], edges);
      if (uint32_t cause = edges.empty() ? blocked_cause(n.wait, n.cond, wait_start(n.wait)) : kNone; cause != kNone) {
        kill_agent(n.agent, cause, false);
        continue;
      }
    }
    all_dead &= settle(members);
  }
  wake_parked();
}

void Engine::wake_parked() {
  for (uint32_t q : parked_) wake(q);  // once, not once per agent killed
}

std::vector<int> Engine::deadlock_group(const std::vector<int>& members) {
  // semantics.md: the waits whose ends lie in one strongly connected component of happens-before
  // form one finding, and a wait with no candidate is one, with the waits it is caught in a cycle
  // with. "Some candidate of W lies behind head H" (the graph unstick built) is more than
  // happens-before: W's end comes after H only if every candidate of W does, and a candidate
  // behind a wait that comes after W is none. So: from nothing, each member's set of heads that
  // end before it (the intersection over its candidates' heads of that head and its set), leaving
  // out candidates behind heads that come after it, until nothing changes (as the oracle does,
  // over heads instead of events). A member then in its own set is on a cycle; one left with no
  // candidate is a deadlock with the members after it that hold a write it could take. The group
  // with the earliest-submitted wait is reported first; the others are looked at again once its
  // agents are dead. Bitsets over the members: quadratic in a component's size, which is bounded.
  size_t k = members.size();
  if (k == 1) return members;
  if (k > kMaxCycleGroup) {
    group_bound_reached_ = true;  // said in a note: the component is reported as one finding
    return members;
  }
  // The analysis is quadratic in the component and may run once per episode (a relay of stuck
  // queues gives up two at a time): past a budget linear in the program, each component is one
  // finding, and a note says so.
  if (group_work_ > group_budget_) {
    group_budget_reached_ = true;
    return members;
  }
  uint64_t work_at = work_;
  // Per stuck head, its place among the members (entries of other heads are stale: every edge of
  // a member leads to a member), and per member its edges.
  auto& local = group_local_;
  local.resize(std::max(local.size(), stuck_nodes_.size()), -1);
  for (size_t a = 0; a < k; ++a) local[size_t(members[a])] = int(a);
  std::vector<std::vector<int>> out(k);
  bool multi = false;
  for (size_t a = 0; a < k; ++a) stuck_edges(members[a], out[a]), multi |= out[a].size() > 1;
  if (!multi) return members;  // one candidate head each: the graph is happens-before
  size_t words = k / 64 + 1;  // (k + 63) / 64 would do; GCC -O3 fears it overflows (-Walloc-size-larger-than)
  using Set = std::vector<uint64_t>;
  auto has = [&](const Set& x, size_t b) { return (x[b / 64] >> (b % 64)) & 1; };
  std::vector<Set> before(k, Set(words, 0));
  std::vector<char> stuck(k, 0), none(k, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 0; b < k; ++b)  // what ends before a head that ends before a, ends before a
      for (size_t a = 0; a < k; ++a)
        if (has(before[a], b))
          for (size_t w = 0; w < words; ++w) before[a][w] |= before[b][w];
    work_ += k * k * words / 8 + 1;
    for (size_t a = 0; a < k; ++a)
      if (!stuck[a] && has(before[a], a)) stuck[a] = 1, changed = true;
    std::vector<Set> next = before;
    for (size_t a = 0; a < k; ++a) {
      if (stuck[a]) continue;
      work_ += out[a].size() * words;
      bool first = true;
      for (int to : out[a]) {
        size_t b = size_t(local[size_t(to)]);
        if (has(before[b], a)) continue;  // its write comes after this wait: no candidate
        Set x = before[b];
        x[b / 64] |= uint64_t(1) << (b % 64);
        if (first) next[a] = std::move(x), first = false;
        else for (size_t w = 0; w < words; ++w) next[a][w] &= x[w];
      }
      if (first) stuck[a] = none[a] = 1, changed = true;
    }
    changed |= next != before;
    before = std::move(next);
    if (group_work_ + (work_ - work_at) > group_budget_) {
      group_work_ += work_ - work_at;
      group_budget_reached_ = true;
      return members;
    }
  }
  group_work_ += work_ - work_at;
  std::vector<std::vector<int>> groups;
  std::vector<char> grouped(k, 0);
  for (size_t a = 0; a < k; ++a) {
    if (!stuck[a] || none[a] || grouped[a]) continue;
    groups.emplace_back();
    for (size_t b = a; b < k; ++b)
      if (stuck[b] && !none[b] && !grouped[b] && (b == a || (has(before[b], a) && has(before[a], b))))
        grouped[b] = 1, groups.back().push_back(members[b]);
  }
  for (size_t a = 0; a < k; ++a) {
    if (!none[a] || grouped[a]) continue;
    grouped[a] = 1;
    groups.push_back({members[a]});
    for (int to : out[a])
      if (size_t b = size_t(local[size_t(to)]); !grouped[b] && has(before[b], a)) grouped[b] = 1, groups.back().push_back(to);
  }
  if (groups.empty()) return members;  // each waits for one of the others: the component is the cycle
  auto first_key = [&](const std::vector<int>& g) {
    uint64_t key = ~uint64_t(0);
    for (int i : g) key = std::min(key, submit_key(stuck_nodes_[size_t(i)].wait));
    return key;
  };
  return *std::min_element(groups.begin(), groups.end(), [&](auto& x, auto& y) { return first_key(x) < first_key(y); });
}

void Engine::finish_counts() {
  std::vector<uint32_t> deadlock_of(t_.cmds.size(), kNone);  // per queue wait of a deadlock: which
  for (uint32_t d = 0; d < deadlocks_.size(); ++d)
    for (EventRef w : deadlocks_[d].waits)
      if (!w.host) deadlock_of[w.id] = d;
  for (uint32_t q = 0; q < nq_; ++q)
    for (size_t k = qs_[q].pos; k < t_.queue_cmds[q].size(); ++k) {
      uint32_t id = t_.queue_cmds[q][k];
      uint32_t cause = host_ran_[t_.cmds[id].submit] ? queue_dead_cause_[q] : host_dead_cause_;
      if (cause != kNone && deadlock_of[id] != cause) ++deadlocks_[cause].blocked_cmds;
    }
  if (host_dead_cause_ != kNone) {
    auto& waits = deadlocks_[host_dead_cause_].waits;
    bool own = std::find(waits.begin(), waits.end(), EventRef{true, uint32_t(host_pos_)}) != waits.end();
    deadlocks_[host_dead_cause_].blocked_host += uint32_t(t_.host.size() - host_pos_ - (own ? 1 : 0));
  }
}

void Engine::wake(uint32_t q) {
  if (is_ready_[q]) return;
  is_ready_[q] = 1;
  ready_.push_back(q);
  std::push_heap(ready_.begin(), ready_.end(), std::greater<>());
}

void Engine::park(uint32_t q) {
  const QueueState& st = qs_[q];
  if (st.dead || st.pos == t_.queue_cmds[q].size()) return;
  const TraceCmd& c = t_.cmds[t_.queue_cmds[q][st.pos]];
  if (!host_ran_[c.submit] || c.op != CmdOp::Wait) return;  // the host's submit wakes it
  if (parked_on_[q] == c.signal) return;
  parked_on_[q] = c.signal;
  // A derived wait needs only one writer's writes: it is not woken by every write of its signal.
  if (st.proof.wait == t_.queue_cmds[q][st.pos] && st.proof.only != kNone) by_agent_[c.signal][st.proof.only].waiters.push_back(q);
  else waiting_on_[c.signal].push_back(q);
  parked_.push_back(q);
}

void Engine::run(EngineObserver& obs) {
  // Ready queues drain as far as they can after each host statement, lowest id first, so events
  // are processed roughly in submission order (any order consistent with happens-before gives the
  // same verdicts).
  for (uint32_t q = 0; q < nq_; ++q) wake(q);
  while (true) {
    bool progress = false;
    uint64_t deaths = deaths_;
    while (!ready_.empty()) {
      std::pop_heap(ready_.begin(), ready_.end(), std::greater<>());
      uint32_t q = ready_.back();
      ready_.pop_back();
      is_ready_[q] = 0;
      bool moved = false;
      while (step_queue(q, obs)) moved = true;
      if (moved) parked_on_[q] = kNone;  // a later wait is parked afresh, even on the same signal
      progress |= moved;
      park(q);
    }
    uint32_t h = uint32_t(host_pos_);
    if (step_host(obs)) {
      if (t_.host[h].op == HostOp::Submit) wake(t_.host[h].queue);
      continue;
    }
    // A death is progress too: waits that only dead writers could satisfy are now blocked behind
    // it, and must be seen as such before the stuck waits are examined.
    if (progress || deaths != deaths_) continue;
    bool done = host_dead_ || host_pos_ == t_.host.size();
    for (uint32_t q : parked_)
      if (done && !qs_[q].dead && qs_[q].pos < t_.queue_cmds[q].size()) done = false;
    if (done) {
      // Nothing waits. Queues whose batches the host never submitted (it died) stay unrun.
      break;
    }
    unstick();
  }
  settle_forced(obs);
  finish_counts();
  if (mode_ == EngineMode::Checked) check_listed();
}

WaitAnswer Engine::plain(EventRef w, const WaitCond& cond, const Clock& start, bool after_wait) const {
  return plain_wait(t_, writes_[cond.signal], init_[cond.signal], {w, cond, &start, after_wait});
}

namespace {

std::string where(const Trace& t, EventRef e) { return "line " + std::to_string(t.loc(e).line); }

std::string listed(const Trace& t, const std::vector<SignalWrite>& ws, const std::vector<uint32_t>& cands,
                   const std::vector<bool>& known, bool initial, uint32_t latest) {
  std::string out = "candidates [";
  for (size_t i = 0; i < cands.size(); ++i)
    out += (i ? ", " : "") + where(t, ws[cands[i]].event) + (known[i] ? " known" : "");
  out += "]";
  if (initial) out += ", the initial value";
  if (latest != kNone) out += ", latest known " + where(t, ws[latest].event);
  return out;
}

}  // namespace

// The end a wait reaches is start joined with what it learns: the two answers must reach the same.
void Engine::check_learned(EventRef w, const Clock& start, const Clock& learned, const WaitAnswer& a) {
  if (!mismatch_.empty()) return;
  Clock mine = start, rule = start;
  mine.join(learned);
  rule.join(a.learned);
  if (mine.leq(rule) && rule.leq(mine)) return;
  const auto& ws = writes_[wait_cond(t_, w).signal];
  mismatch_at_ = t_.loc(w);
  mismatch_ = "the wait learns other ordering through the indexes than by the plain rule (" +
              listed(t_, ws, a.candidates, a.known, a.initial, a.latest_known) + ")";
}

// Every resolution listed, entry by entry against the plain rule's answer. Where a chained
// queue's scan reached its bound (a note says so), the indexed answer may be shorter: not compared.
void Engine::check_listed() {
  if (bound_reached_) return;
  for (size_t id = 0; id < plain_answers_.size() && mismatch_.empty(); ++id) {
    const EventRef w = resolutions_[id].wait;
    if (!plain_answers_[id] || (w.host ? host_resolution_[w.id] : cmd_resolution_[w.id]) != id) continue;  // (tried again later)
    const WaitAnswer& a = *plain_answers_[id];
    const WaitResolution& r = *resolution(w);
    std::vector<uint32_t> cands;
    std::vector<bool> known;
    for (size_t i = 0; i < r.count(); ++i) cands.push_back(r.candidate(i)), known.push_back(r.known(i));
    if (cands == a.candidates && known == a.known && r.initial_candidate == a.initial && r.latest_known == a.latest_known)
      continue;
    const auto& ws = writes_[r.cond.signal];
    mismatch_at_ = t_.loc(r.wait);
    mismatch_ = "the wait has " + listed(t_, ws, cands, known, r.initial_candidate, r.latest_known) +
                " through the indexes, and " + listed(t_, ws, a.candidates, a.known, a.initial, a.latest_known) +
                " by the plain rule";
  }
}

}  // namespace qvet
