// The engine's run: the facade (model/engine.h), the scheduler (ready queues, host epochs, park
// and wake), each queue's and the host's steps, and --engine checked's comparison with the plain
// rule (model/wait_rule.h).
#include "model/engine.h"
#include "model/writer_index.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>

namespace qvet {

Engine::~Engine() = default;

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
  host_epoch_.resize(t.host.size(), 0);
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
  last_host_wait_.assign(t.host.size(), kNone);
  for (uint32_t h = 0, last = kNone; h < t.host.size(); ++h) last_host_wait_[h] = last = t.host[h].op == HostOp::Wait ? h : last;
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
    if (narrow && differ) (writes_[s].size() <= limits::kMaxMixedWrites ? mixed_ : past_bound)[s] = 1;
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
  index_ = std::make_unique<WriterIndexes>();
  index_->per_signal.resize(p_.signals.size());
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

bool Engine::ordered_agent(uint32_t agent) const {
  return ordered_writer(agent, agent == kHostAgent ? Mode::Serial : qs_[agent].order.mode());
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
  // The batch's first command: later ones know it through the front end, unless that is open (an
  // earlier round's clock may know the submit without what the host knew at it).
  if (!start.knows_host(submit) || start.open()) {
    start.join(*host_epochs_[host_epoch_[submit]]);
    start.see_host(submit);
  }
  return start;
}

// Where a stuck wait starts: as step_queue and step_host give it.
Clock Engine::wait_start(EventRef w) const { return w.host ? host_clock_ : start_at(t_.cmds[w.id].queue, t_.cmds[w.id].submit); }

Engine::WaitStep Engine::try_wait(EventRef w, uint32_t agent, const WaitCond& cond, bool& forced,
                                  uint64_t& blocked_at, const Clock& start, Clock& learned, EngineObserver& obs) {
  if (!overrides_.empty())
    if (auto it = overrides_.find(w.key()); it != overrides_.end() && it->second.release)
      return release(w, cond, start, learned), WaitStep::Resolved;
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
      if (auto it = overrides_.find(w.key()); it != overrides_.end()) none = it->second.initial;
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
  // A wait starts a new epoch: the host's clock after it, which its batches submitted next start
  // from, and which an override that knows the wait closes over (close_override). (A copy of a
  // clock shares its nodes.)
  k.see_host(h);
  if (e.op == HostOp::Wait) host_epochs_.push_back(std::make_shared<const Clock>(k));
  if (e.op == HostOp::Wait || e.op == HostOp::Submit) host_epoch_[h] = uint32_t(host_epochs_.size() - 1);
  if (e.op == HostOp::Free) kept_host_clocks_.push_back({h, std::make_shared<const Clock>(k)});
  if (host_write_[h] != kNone) record_write(e.signal, host_write_[h], k);
  host_ran_[h] = 1;
  ++host_pos_;
  obs.on_host(h, k);
  return true;
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
  else if (WaitCond cond = wait_cond(t_, {false, t_.queue_cmds[q][st.pos]}); mixed(cond)) waiting_on_[c.signal].any.push_back(q);
  else (cond.narrow() ? waiting_on_[c.signal].at32 : waiting_on_[c.signal].at64).insert({cond.threshold, q});
  parked_.push_back(q);
}

EngineStats Engine::stats() const {
  EngineStats st{episodes_, latest_steps_, 0, bound_reached_, mixed_bound_reached_};
  for (const ChainedMeets& c : chained_meets_) st.chained_meets += c.wide.meets() + c.narrow.meets();
  for (const auto& agents : by_agent_)
    for (const AgentWrites& aw : agents) st.chained_meets += aw.chain ? aw.chain->meets() : 0;
  return st;
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
  return plain_wait(t_, writes_[cond.signal], init_[cond.signal], {w, cond, &start, after_wait, after_wait ? settle_after_ : nullptr});
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
