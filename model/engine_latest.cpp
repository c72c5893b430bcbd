// The latest writes of each signal (those no later write knows), and what they answer: which
// writers a clock does not know (unknown_writers), waits resolved without listing their known
// candidates (resolve_unlisted), shared candidate lists of waits that know no write, and the
// per-signal trees a clock's nodes remember answers in (ManyLatest).
#include "model/engine.h"
#include "model/writer_index.h"

#include <algorithm>
#include <functional>

namespace qvet {

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
      // (first_match reads the values' bounds from before the run, a binary search on a timeline;
      // a write before the one it finds does not meet the wait, and one it finds may not.)
      for (size_t k = first_match(aw, 0, cond); k < aw.processed; k = first_match(aw, k + 1, cond), ++work_)
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
  // writers to scan for unknown candidates. Chained writers' scans are bounded (limits::kMaxChainedScan):
  // only while no bound can be reached, and only ordered writers are scanned here.
  if (processed_order_[s].empty() || chained_max_[s] > limits::kMaxChainedCandidates) return false;
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
  // most limits::kMaxChainedCandidates writes, or resolve_unlisted is not asked).
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

bool Engine::knows_write_command(uint32_t s, const Clock& k) const {
  const auto& agents = by_agent_[s];
  if (!agents.empty() && agents.back().agent == kHostAgent && k.knows_host(writes_[s][agents.back().idx[0]].event.id))
    return true;
  return k.any_known_queue(writer_queues_[s], [&](uint32_t q) { return knows_write_command_of(k, s, agents[pos_of(s, q)]); },
                          Clock::kNoTag, &work_);
}

void Engine::record_write(uint32_t s, size_t index, const Clock& end) {
  SignalWrite& w = writes_[s][index];
  if (w.narrow) w.value = written_word(high_half_before(s, end), w.value, 32);
  AgentWrites* aw = &by_agent_[s][w.pos];
  WriterIndex& ix = writer_index(s);
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
  auto unpark = [&](uint32_t q) {
    if (parked_on_[q] == s) parked_on_[q] = kNone;
    wake(q);
  };
  Parked& parked = waiting_on_[s];
  for (uint32_t q : parked.any) unpark(q);
  parked.any.clear();
  for (auto* at : {&parked.at64, &parked.at32}) {
    auto end = at->upper_bound(at == &parked.at32 ? w.value & kLowHalf : w.value);
    for (auto it = at->begin(); it != end; ++it) unpark(it->second);
    at->erase(at->begin(), end);
  }
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

}  // namespace qvet
