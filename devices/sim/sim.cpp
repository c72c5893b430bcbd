#include "devices/sim/sim.h"

#include <algorithm>
#include <map>
#include <queue>
#include <unordered_map>

#include "devices/rng.h"
#include "model/profile.h"

namespace qvet {

const char* policy_name(Policy p) {
  switch (p) {
    case Policy::Random: return "random";
    case Policy::Pct: return "pct";
    case Policy::Delay: return "delay";
    case Policy::Witness: return "witness";
  }
  return "?";
}

bool parse_policy(const std::string& s, Policy& p) {
  for (Policy x : {Policy::Random, Policy::Pct, Policy::Delay, Policy::Witness})
    if (s == policy_name(x)) return p = x, true;
  return false;
}

namespace {

// A delay-policy stretch: long enough that everything not ordered after the stretched access
// runs meanwhile (simulated nanoseconds; the held access waits half of it).
constexpr uint64_t kStretch = uint64_t(1) << 40;
constexpr uint64_t kReplayStep = 10;  // simulated ns between consecutive steps of a replayed schedule

enum class Act : uint8_t { Host, Front, End, Poll };

struct Action {
  uint64_t time;
  int64_t prio;  // higher runs first among actions at the same time
  uint64_t seq;
  uint32_t agent;  // queue, or the host (= number of queues)
  Act act;
  uint32_t id;  // Front: queue; End: command; Poll: index into Machine::polls_
};
struct Later {
  bool operator()(const Action& a, const Action& b) const {
    if (a.time != b.time) return a.time > b.time;
    if (a.prio != b.prio) return a.prio < b.prio;
    return a.seq > b.seq;
  }
};

struct Segment {
  uint64_t hi;
  Version version;
};

class Machine {
 public:
  Machine(const Trace& t, const std::vector<uint64_t>& init, const SimOptions& o, uint64_t index)
      : t_(t), p_(*t.program), o_(o), rng_{mix(o.seed, index)}, nq_(t.queue_cmds.size()) {
    size_t nc = t.cmds.size(), nh = t.host.size();
    obs_.cmd_start.assign(nc, kNever);
    obs_.cmd_end.assign(nc, kNever);
    obs_.cmd_t0.assign(nc, kNever);
    obs_.cmd_t1.assign(nc, kNever);
    obs_.fired_by.assign(nc, kNone);
    obs_.host_order.assign(nh, kNever);
    obs_.host_time.assign(nh, kNever);
    obs_.read_digest.assign(t.accesses.size(), 0);
    access_owner_.assign(t.accesses.size(), kNone);
    last_writer_.assign(init.size(), EventRef{false, kNone});
    word_ = init;
    init_word_ = init;
    history_.resize(init.size());
    waiters_.resize(word_.size());
    avail_.assign(nc, kNever);
    ended_.assign(nc, 0);
    qs_.resize(nq_);
    for (uint32_t q = 0; q < nq_; ++q) {
      qs_[q].mode = queue_mode(p_, q);
      qs_[q].wait_mask = width_mask(wait_width(p_, q));
      qs_[q].signal_mask = width_mask(signal_width(p_, q));
      qs_[q].needs_acquire = profile_of(p_.devices[p_.queues[q].device].arch).reads_need_acquire;
    }
    memory_.resize(p_.buffers.size());
    inflight_.resize(p_.buffers.size());
    draw_schedule(index);
  }

  ObservedRun run() {
    push(0, Act::Host, 0);
    while (!heap_.empty()) {
      Action a = heap_.top();
      heap_.pop();
      if (a.prio != prio_[a.agent]) {  // PCT lowered the agent's priority since it was queued
        a.prio = prio_[a.agent];
        heap_.push(a);
        continue;
      }
      now_ = a.time;
      switch (a.act) {
        case Act::Host: host_step(); break;
        case Act::Front: front(a.id); break;
        case Act::End: end_command(a.id); break;
        case Act::Poll: poll(a.id); break;
      }
      if (o_.policy == Policy::Pct)
        for (++steps_; next_change_ < change_points_.size() && change_points_[next_change_] <= steps_;)
          prio_[a.agent] = change_prio_[next_change_++];  // below every initial priority (those are >= d)
    }
    collect_hangs();
    obs_.final_value = word_;
    return std::move(obs_);
  }

 private:
  struct QueueState {
    Mode mode = Mode::Serial;
    uint64_t wait_mask = 0, signal_mask = 0;
    uint32_t pos = 0;                // next command the front end fetches (index in the queue)
    uint32_t ended_prefix = 0;       // commands [0, ended_prefix) have all ended
    uint32_t fe_block = kNone;       // a command whose end the front end waits for
    bool front_queued = false;
    uint32_t chain_exec = kNone;     // chained: the exec the chain continues from
    int releases_left = 0;           // chained: release slots chain_exec still has (its QMD holds two)
    uint32_t batch = kNone;          // the batch (submitting host event) of the command the front end reached
    std::vector<uint32_t> prefix_waiters;  // commands that end once every earlier command ended
    size_t prefix_head = 0;                // the first of them not ended yet
    bool needs_acquire = false;      // its device reads other agents' data only after a memory_barrier
    uint64_t acquired_at = 0;        // the start order of its last ended memory_barrier (+1; 0: none)
  };

  // ---- schedule -------------------------------------------------------------------------------

  // PCT and replay decide the order by priorities and given times alone: no durations of their own.
  bool timeless() const { return o_.policy == Policy::Pct || o_.policy == Policy::Witness; }

  void draw_schedule(uint64_t index) {
    if (o_.policy == Policy::Witness && o_.replay) {
      fixed_start_.assign(t_.cmds.size(), 0);
      fixed_end_.assign(t_.cmds.size(), 0);
      fixed_host_.assign(t_.host.size(), 0);
      for (const Schedule::Event& e : o_.replay->events) {
        uint64_t at = (e.time + 1) * kReplayStep;
        if (e.kind == Schedule::Kind::At) fixed_host_[e.event.id] = at;
        else (e.kind == Schedule::Kind::Start ? fixed_start_ : fixed_end_)[e.event.id] = at;
      }
    }
    // Durations per (operation, engine) for this run, jittered per command.
    for (auto& per_engine : base_)
      for (uint64_t& b : per_engine) b = timeless() ? 0 : rng_.range(10, 1000);
    latency_.resize(nq_);
    for (uint64_t& l : latency_) l = timeless() ? 0 : rng_.range(0, 500);
    int d = std::max(1, o_.pct_depth);
    // Priorities: a random permutation of [d, d + agents); change points take 0 .. d - 2.
    std::vector<int64_t> perm(nq_ + 1);
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = int64_t(d + i);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng_.below(i)]);
    prio_ = perm;
    if (o_.policy == Policy::Pct) {
      uint64_t steps = 2 * t_.cmds.size() + t_.host.size() + 1;
      for (int i = 0; i + 1 < d; ++i) change_points_.push_back(rng_.range(1, steps));
      std::sort(change_points_.begin(), change_points_.end());
      // Change point i (in the paper's numbering, drawn at random) lowers its agent to priority i.
      for (int i = 0; i + 1 < d; ++i) change_prio_.push_back(i);
      for (size_t i = change_prio_.size(); i > 1; --i) std::swap(change_prio_[i - 1], change_prio_[rng_.below(i)]);
    }
    if (o_.policy == Policy::Delay && !o_.delay_pairs.empty()) {
      auto [a, b] = o_.delay_pairs[(index / 2) % o_.delay_pairs.size()];
      if (index % 2) std::swap(a, b);
      if (a.host) std::swap(a, b);  // only a device command can be stretched
      if (!a.host) {
        stretch_ = a.id;
        held_ = b;
      }
    }
  }

  uint64_t duration(uint32_t id) {
    const TraceCmd& c = t_.cmds[id];
    uint64_t b = base_[size_t(c.op)][size_t(p_.queues[c.queue].engine)];
    uint64_t d = b ? b / 2 + rng_.below(b + 1) : 0;
    if (id == stretch_) d += kStretch;
    return d;
  }
  uint64_t small_delay() { return timeless() ? 0 : rng_.range(0, 20); }
  // An end, no earlier than a replayed schedule puts it.
  void push_end(uint64_t time, uint32_t id) { push(fixed_end_.empty() ? time : std::max(time, fixed_end_[id]), Act::End, id); }

  // ---- event bookkeeping ----------------------------------------------------------------------

  void push(uint64_t time, Act act, uint32_t id) {
    EventRef polled = act == Act::Poll ? polls_[id] : EventRef{};
    uint32_t agent = act == Act::Host || (act == Act::Poll && polled.host) ? uint32_t(nq_)
                     : act == Act::Front                                 ? id
                     : act == Act::Poll                                  ? t_.cmds[polled.id].queue
                                                                         : t_.cmds[id].queue;
    heap_.push({time, prio_[agent], seq_++, agent, act, id});
  }
  void queue_front(uint32_t q, uint64_t time) {
    if (qs_[q].front_queued) return;
    qs_[q].front_queued = true;
    push(time, Act::Front, q);
  }
  void mark_start(uint32_t id) {
    obs_.cmd_start[id] = order_++;
    obs_.cmd_t0[id] = now_;
  }
  void mark_host(uint32_t h) {
    obs_.host_order[h] = order_++;
    obs_.host_time[h] = now_;
  }

  // ---- host thread ----------------------------------------------------------------------------

  void host_step() {
    if (host_pos_ >= t_.host.size()) return;
    uint32_t h = uint32_t(host_pos_);
    const HostEvent& e = t_.host[h];
    if (held_.host && held_.id == h && !held_done_) {
      held_done_ = true;
      push(now_ + kStretch / 2, Act::Host, 0);
      return;
    }
    if (!fixed_host_.empty() && fixed_host_[h] > now_) return push(fixed_host_[h], Act::Host, 0);
    switch (e.op) {
      case HostOp::Wait:
        if (!host_released_ && !satisfied(e.signal, uint64_t(e.value), width_mask(kHostWidth))) {
          waiters_[e.signal].push_back({true, h});
          host_wait_reached_ = order_;
          return;  // a write of the signal resumes the host
        }
        if (!host_released_) obs_.releases.push_back({{true, h}, last_writer_[e.signal]});
        host_released_ = false;
        mark_host(h);
        break;
      case HostOp::Submit:
        mark_host(h);
        for (uint32_t c = e.cmd_begin; c < e.cmd_end; ++c) avail_[c] = now_ + latency_[e.queue];
        if (e.cmd_begin < e.cmd_end) queue_front(e.queue, now_ + latency_[e.queue]);
        break;
      case HostOp::Signal:
        mark_host(h);
        write_signal(e.signal, uint64_t(e.value), width_mask(kHostWidth), {true, h});
        break;
      case HostOp::Read:
      case HostOp::Write:
        mark_host(h);
        for (uint32_t a = e.acc_begin; a < e.acc_end; ++a) host_access(a, {true, h});
        break;
      case HostOp::Free:
      case HostOp::Alloc: mark_host(h); break;
    }
    ++host_pos_;
    push(now_ + (timeless() ? 0 : rng_.range(1, 50)), Act::Host, 0);
  }

  // ---- signals --------------------------------------------------------------------------------

  bool satisfied(uint32_t s, uint64_t threshold, uint64_t mask) const { return (word_[s] & mask) >= (threshold & mask); }

  bool satisfies(EventRef w, uint32_t s) const {
    return w.host ? satisfied(s, uint64_t(t_.host[w.id].value), width_mask(kHostWidth))
                  : satisfied(s, uint64_t(t_.cmds[w.id].value), qs_[t_.cmds[w.id].queue].wait_mask);
  }

  // A store of `value` at `mask`'s width: a 32-bit store replaces the low half and keeps the rest.
  // A wait polls (semantics.md, "Lost wakeups"): a store that satisfies it makes it look again a
  // drawn moment later, and it is released only if the word still satisfies it then.
  void write_signal(uint32_t s, uint64_t value, uint64_t mask, EventRef writer) {
    word_[s] = (word_[s] & ~mask) | (value & mask);
    last_writer_[s] = writer;
    history_[s].push_back({order_, word_[s]});
    auto& ws = waiters_[s];
    for (size_t i = 0; i < ws.size();) {
      if (!satisfies(ws[i], s)) {
        ++i;
        continue;
      }
      polls_.push_back(ws[i]);
      push(now_ + small_delay(), Act::Poll, uint32_t(polls_.size() - 1));
      ws[i] = ws.back();
      ws.pop_back();
    }
  }

  // A wait looks at its word: released if it still satisfies it, else it goes on waiting.
  void poll(uint32_t k) {
    EventRef w = polls_[k];
    uint32_t s = t_.signal(w);
    if (!satisfies(w, s)) return waiters_[s].push_back(w);
    obs_.releases.push_back({w, last_writer_[s]});
    if (w.host) {
      host_released_ = true;
      push(now_ + small_delay(), Act::Host, 0);
    } else {
      push_end(now_ + small_delay(), w.id);
    }
  }

  // ---- front ends -----------------------------------------------------------------------------

  void front(uint32_t q) {
    QueueState& s = qs_[q];
    s.front_queued = false;
    const auto& list = t_.queue_cmds[q];
    while (s.fe_block == kNone && s.pos < list.size()) {
      uint32_t id = list[s.pos];
      const TraceCmd& c = t_.cmds[id];
      if (avail_[id] == kNever) return;  // not submitted yet: the submit wakes the front end
      if (avail_[id] > now_) return queue_front(q, avail_[id]);
      if (!held_.host && held_.id == id && !held_done_) {
        held_done_ = true;
        return queue_front(q, now_ + kStretch / 2);
      }
      if (!fixed_start_.empty() && fixed_start_[id] > now_) return queue_front(q, fixed_start_[id]);
      if (s.mode == Mode::Serial && s.ended_prefix < s.pos) return;  // the previous command has not ended
      bool chained = s.mode == Mode::Chained;
      if (c.submit != s.batch) s.batch = c.submit, break_chain(s);  // a new batch is a new queue object: no QMD to chain to
      if (chained && c.op == CmdOp::Exec && s.chain_exec != kNone && !ended_[s.chain_exec]) return;  // QMD chaining
      start_command(q, id);
    }
  }

  void start_command(uint32_t q, uint32_t id) {
    QueueState& s = qs_[q];
    const TraceCmd& c = t_.cmds[id];
    bool chained = s.mode == Mode::Chained;
    uint32_t index = s.pos++;
    mark_start(id);
    switch (c.op) {
      case CmdOp::Exec:
      case CmdOp::Copy:
        for (uint32_t a = c.acc_begin; a < c.acc_end; ++a) begin_access(a, {false, id});
        push_end(now_ + duration(id), id);
        if (chained) {
          s.chain_exec = c.op == CmdOp::Exec ? id : kNone;  // a copy breaks the chain
          s.releases_left = c.op == CmdOp::Exec ? 2 : 0;
        }
        break;
      case CmdOp::MemoryBarrier:
        push_end(now_ + duration(id), id);
        s.fe_block = id;
        break_chain(s);
        break;
      case CmdOp::Wait:
        s.fe_block = id;
        break_chain(s);
        if (satisfied(c.signal, uint64_t(c.value), s.wait_mask)) {
          obs_.releases.push_back({{false, id}, last_writer_[c.signal]});
          push_end(now_ + small_delay(), id);
        } else {
          waiters_[c.signal].push_back({false, id});
        }
        break;
      case CmdOp::Barrier:
        s.fe_block = id;
        break_chain(s);
        wait_for_prefix(q, index, id);
        break;
      case CmdOp::Signal:
      case CmdOp::Timestamp:
        if (chained && s.chain_exec != kNone && s.releases_left > 0) {
          --s.releases_left;  // written into the exec's QMD: fires when the exec ends
          obs_.fired_by[id] = s.chain_exec;
          if (ended_[s.chain_exec]) finish_command(id);
          else releases_[s.chain_exec].push_back(id);
          break;
        }
        if (chained) s.fe_block = id;  // a WFI release holds the front end
        wait_for_prefix(q, index, id);
        break;
    }
  }

  static void break_chain(QueueState& s) {
    s.chain_exec = kNone;
    s.releases_left = 0;
  }

  // `id` (at `index` in its queue) ends once every earlier command of the queue has ended.
  void wait_for_prefix(uint32_t q, uint32_t index, uint32_t id) {
    QueueState& s = qs_[q];
    if (s.ended_prefix >= index) push_end(now_ + small_delay(), id);
    else s.prefix_waiters.push_back(id);
  }

  void end_command(uint32_t id) {
    const TraceCmd& c = t_.cmds[id];
    finish_command(id);
    if (auto it = releases_.find(id); it != releases_.end()) {
      // The QMD's releases fire at its end, in no documented order.
      std::vector<uint32_t> rs = std::move(it->second);
      releases_.erase(it);
      if (rs.size() == 2 && rng_.below(2)) std::swap(rs[0], rs[1]);
      for (uint32_t r : rs) finish_command(r);
    }
    queue_front(c.queue, now_);
  }

  void finish_command(uint32_t id) {
    const TraceCmd& c = t_.cmds[id];
    QueueState& s = qs_[c.queue];
    obs_.cmd_end[id] = order_++;
    obs_.cmd_t1[id] = now_;
    ended_[id] = 1;
    if (c.op == CmdOp::Signal) write_signal(c.signal, uint64_t(c.value), s.signal_mask, {false, id});
    if (c.op == CmdOp::MemoryBarrier) s.acquired_at = std::max(s.acquired_at, obs_.cmd_start[id] + 1);
    for (uint32_t a = c.acc_begin; a < c.acc_end; ++a) end_access(a, {false, id});
    if (s.fe_block == id) s.fe_block = kNone;
    const auto& list = t_.queue_cmds[c.queue];
    while (s.ended_prefix < list.size() && ended_[list[s.ended_prefix]]) ++s.ended_prefix;
    while (s.prefix_head < s.prefix_waiters.size()) {
      uint32_t w = s.prefix_waiters[s.prefix_head];
      if (s.ended_prefix < t_.cmds[w].index) break;
      ++s.prefix_head;
      push_end(now_ + small_delay(), w);
    }
  }

  // ---- memory ---------------------------------------------------------------------------------

  // Calls f(lo, hi, version) for the segments of [lo, hi) of `buffer`, initial bytes included.
  template <class F>
  void for_segments(uint32_t buffer, uint64_t lo, uint64_t hi, F f) const {
    const auto& m = memory_[buffer];
    auto it = m.upper_bound(lo);
    if (it != m.begin()) --it;
    uint64_t at = lo;
    for (; it != m.end() && it->first < hi; ++it) {
      if (it->second.hi <= at) continue;
      uint64_t b = std::max(it->first, at);
      if (b > at) f(at, b, Version{});
      uint64_t e = std::min(it->second.hi, hi);
      f(b, e, it->second.version);
      at = e;
    }
    if (at < hi) f(at, hi, Version{});
  }

  void stamp(uint32_t buffer, uint64_t lo, uint64_t hi, Version v) {
    auto& m = memory_[buffer];
    auto split = [&](uint64_t x) {
      auto it = m.upper_bound(x);
      if (it == m.begin()) return;
      --it;
      if (it->first < x && it->second.hi > x) {
        m.emplace(x, it->second);
        it->second.hi = x;
      }
    };
    split(lo);
    split(hi);
    m.erase(m.lower_bound(lo), m.lower_bound(hi));
    m.emplace(lo, Segment{hi, v});
  }

  void see(uint32_t a, bool at_end, EventRef reader) {
    const Access& acc = t_.accesses[a];
    uint64_t& digest = obs_.read_digest[a];
    // An exec's read of another agent's write needs a memory_barrier of its queue that started
    // after the write ended and ended before the read (copy engines read memory directly).
    const QueueState* acquire = nullptr;
    if (!reader.host && !at_end && t_.cmds[reader.id].op == CmdOp::Exec && qs_[t_.cmds[reader.id].queue].needs_acquire)
      acquire = &qs_[t_.cmds[reader.id].queue];
    for_segments(acc.buffer, acc.lo, acc.hi, [&](uint64_t lo, uint64_t hi, Version v) {
      digest = mix(mix(mix(digest + 1, lo), hi), uint64_t(v.code) << 1 | at_end);
      if (o_.record_seen) obs_.seen.push_back({a, lo, hi, v, at_end});
      if (acquire && !v.initial() && agent_of(v.event()) != p_.queues[t_.cmds[reader.id].queue].device &&
          acquire->acquired_at <= obs_.end(v.event()))
        obs_.unacquired.push_back({a, v});
    });
  }
  uint32_t agent_of(EventRef e) const { return e.host ? kHostAgent : p_.queues[t_.cmds[e.id].queue].device; }

  void overlaps_with_inflight(uint32_t a, EventRef self) {
    const Access& acc = t_.accesses[a];
    for (uint32_t b : inflight_[acc.buffer]) {
      const Access& o = t_.accesses[b];
      if (!(acc.write || o.write) || o.hi <= acc.lo || acc.hi <= o.lo) continue;
      if (!self.host && access_owner_[b] == self.id) continue;
      obs_.overlaps.push_back({b, a});
    }
  }

  void begin_access(uint32_t a, EventRef self) {
    const Access& acc = t_.accesses[a];
    overlaps_with_inflight(a, self);
    inflight_[acc.buffer].push_back(a);
    access_owner_[a] = self.id;
    if (!acc.write) see(a, false, self);
  }

  void end_access(uint32_t a, EventRef self) {
    const Access& acc = t_.accesses[a];
    auto& in = inflight_[acc.buffer];
    auto it = std::find(in.begin(), in.end(), a);
    if (it != in.end()) {
      *it = in.back();
      in.pop_back();
    }
    if (acc.write) stamp(acc.buffer, acc.lo, acc.hi, Version::of(self));
    else see(a, true, self);
  }

  void host_access(uint32_t a, EventRef self) {
    const Access& acc = t_.accesses[a];
    overlaps_with_inflight(a, self);
    if (acc.write) stamp(acc.buffer, acc.lo, acc.hi, Version::of(self));
    else see(a, false, self);
  }

  // ---- the end --------------------------------------------------------------------------------

  // Whether signal `s` held a word satisfying (threshold, mask) at some moment before `order`.
  bool held_before(uint32_t s, uint64_t order, uint64_t threshold, uint64_t mask) const {
    if ((init_word_[s] & mask) >= (threshold & mask)) return true;
    for (auto [at, word] : history_[s])
      if (at < order && (word & mask) >= (threshold & mask)) return true;
    return false;
  }

  void collect_hangs() {
    for (uint32_t id = 0; id < t_.cmds.size(); ++id) {
      const TraceCmd& c = t_.cmds[id];
      if (c.op == CmdOp::Wait && obs_.cmd_start[id] != kNever && obs_.cmd_end[id] == kNever)
        obs_.hung.push_back({{false, id}, held_before(c.signal, obs_.cmd_start[id], uint64_t(c.value), qs_[c.queue].wait_mask)});
    }
    if (host_pos_ < t_.host.size() && t_.host[host_pos_].op == HostOp::Wait) {
      const HostEvent& e = t_.host[host_pos_];
      obs_.hung.push_back({{true, uint32_t(host_pos_)}, held_before(e.signal, host_wait_reached_, uint64_t(e.value), width_mask(kHostWidth))});
    }
  }

  const Trace& t_;
  const Program& p_;
  const SimOptions& o_;
  Rng rng_;
  size_t nq_;
  ObservedRun obs_;
  uint64_t now_ = 0, order_ = 0, seq_ = 0;
  std::priority_queue<Action, std::vector<Action>, Later> heap_;
  std::vector<QueueState> qs_;
  std::vector<uint64_t> avail_;  // per command: when its batch reaches the queue's ring
  std::vector<uint8_t> ended_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> releases_;  // exec -> its release signals not yet fired
  std::vector<uint64_t> word_, init_word_;     // per signal
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> history_;  // per signal: (order, word) after each write
  std::vector<std::vector<EventRef>> waiters_;  // per signal: waits polling it
  std::vector<EventRef> polls_;                 // waits that look again (Act::Poll's id)
  std::vector<std::map<uint64_t, Segment>> memory_;  // per base buffer: versions, as disjoint segments
  std::vector<std::vector<uint32_t>> inflight_;      // per base buffer: device accesses in progress
  std::vector<uint32_t> access_owner_;  // per access in flight: its command
  std::vector<EventRef> last_writer_;    // per signal: the write its word holds (for flow arrows)
  size_t host_pos_ = 0;
  bool host_released_ = false;
  uint64_t host_wait_reached_ = 0;  // the order count when the host began its pending wait
  // Schedule
  uint64_t base_[7][2] = {};  // per (CmdOp, EngineKind)
  std::vector<uint64_t> latency_;
  std::vector<int64_t> prio_;
  std::vector<uint64_t> change_points_;
  std::vector<int64_t> change_prio_;
  size_t next_change_ = 0;
  uint64_t steps_ = 0;
  uint32_t stretch_ = kNone;
  std::vector<uint64_t> fixed_start_, fixed_end_, fixed_host_;  // Witness: the schedule's times (0: none)
  EventRef held_{false, kNone};
  bool held_done_ = false;
};

}  // namespace

std::vector<EventRef> access_owners(const Trace& t) {
  std::vector<EventRef> out(t.accesses.size());
  for (uint32_t c = 0; c < t.cmds.size(); ++c)
    for (uint32_t a = t.cmds[c].acc_begin; a < t.cmds[c].acc_end; ++a) out[a] = {false, c};
  for (uint32_t h = 0; h < t.host.size(); ++h)
    for (uint32_t a = t.host[h].acc_begin; a < t.host[h].acc_end; ++a) out[a] = {true, h};
  return out;
}

Simulator::Simulator(const Trace& t) : t_(t) {
  for (const Signal& s : t.program->signals) init_.push_back(uint64_t(evaluate(s.init, t.binding)));
}

ObservedRun Simulator::run(const SimOptions& o, uint64_t index) const { return Machine(t_, init_, o, index).run(); }

}  // namespace qvet
