// Rule `race`: two conflicting accesses (bytes overlap, at least one writes) that no
// happens-before edge orders: neither end(a) -> start(b) nor end(b) -> start(a).
// The explanation names the consumer's nearest wait and why it does not order the producer,
// and the fix: a wait on a signal the producer's queue already writes, or a new signal/wait pair.
#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "checkers/checker.h"
#include "checkers/shadow.h"
#include "checkers/witness.h"
#include "core/syntax/printer.h"

namespace qvet {

namespace {

class RaceChecker : public Checker {
 public:
  explicit RaceChecker(const CheckContext& c) : Checker(c), shadow_(c.p.buffers.size()), groups_(c) {}

  void on_command(uint32_t id, const Clock& start, const Clock& end) override {
    const TraceCmd& cmd = c_.t.cmds[id];
    access_all({false, id}, cmd.acc_begin, cmd.acc_end, start, end);
  }
  void on_host(uint32_t h, const Clock& k) override {
    const HostEvent& e = c_.t.host[h];
    if (e.op == HostOp::Read || e.op == HostOp::Write) access_all({true, h}, e.acc_begin, e.acc_end, k, k);
  }

 private:
  ShadowMemory shadow_;
  RunArena runs_;
  std::map<uint32_t, OrderSets> sets_;  // per agent: its runs' orders, for events that meet it through different runs
  PairGroups groups_;
  std::unordered_set<uint64_t> reported_;  // partners already reported one by one for the current event (EventRef::key)

  using Intervals = std::vector<std::pair<uint64_t, uint64_t>>;  // order ranges [lo, hi)
  static constexpr uint64_t kEnd = uint64_t(1) << 32;             // past every order

  OrderSets& sets_of(uint32_t agent) {
    auto it = sets_.find(agent);
    if (it == sets_.end())
      it = sets_.try_emplace(agent, agent == kHostAgent ? c_.t.host.size() : c_.t.queue_cmds[agent].size(),
                             [this, agent](uint64_t order) { return c_.loc(event_of(agent, order)).line; }).first;
    return it->second;
  }
  EventRef event_of(uint32_t agent, uint64_t order) const {
    return agent == kHostAgent ? EventRef{true, uint32_t(order)} : EventRef{false, c_.t.queue_cmds[agent][order]};
  }
  uint32_t agent_of(EventRef ev) const { return ev.host ? kHostAgent : c_.t.cmds[ev.id].queue; }
  uint32_t order_of(EventRef ev) const { return ev.host ? ev.id : c_.t.cmds[ev.id].index; }
  // The orders of `agent` that clock `k` knows the ends of (its accesses never end at the front end).
  static Intervals known_of(const Clock& k, uint32_t agent) {
    Intervals out;
    if (agent == kHostAgent) {
      if (k.host() >= 0) out.push_back({0, uint64_t(k.host()) + 1});
    } else {
      for (auto [lo, hi] : k.known_ranges(agent)) out.push_back({lo, hi});
    }
    return out;
  }
  // What the current event's start does not know of `agent`, cached per event.
  const Intervals& unknown_of(uint32_t agent) {
    auto [it, fresh] = unknown_.try_emplace(agent);
    if (fresh) {
      uint64_t from = 0;
      for (auto [lo, hi] : known_of(*start_, agent)) {
        if (lo > from) it->second.push_back({from, lo});
        from = std::max(from, hi);
      }
      it->second.push_back({from, kEnd});
    }
    return it->second;
  }
  std::map<uint32_t, Intervals> unknown_;
  const Clock* start_ = nullptr;

  // Every earlier access of the bytes that `start` does not know races with this one, if they
  // conflict. Visible accesses are counted through their runs (shadow.h): per agent, the racing
  // ones are the run's nodes in the order ranges the start does not know. An earlier access is
  // dominated by a later one of its own agent when its end is known to the later access's end
  // and the later one conflicts with whatever it conflicts with: every event that races with it
  // races with the later one too. When a later access dominates a whole run, the run's accesses
  // move under it (`hidden`), where an event looks only when it races with the later one; the
  // segment's run starts again from the later access, so segments it covers become alike and
  // merge. Nothing is dropped: every racing pair is counted in its group's message.
  struct Source {
    uint32_t agent, head;  // a run's newest node (the event's own node left out)
    uint32_t access;       // the event's access that meets it
    uint64_t lo, hi;       // the segment
  };
  struct HiddenRoot {
    uint32_t node;
    uint32_t access;
    uint64_t lo, hi;
  };
  struct Counted {  // a run whose racing nodes were counted (resolve_later: those submitted after the event)
    uint32_t agent, head;
  };
  std::vector<Source> sources_;
  std::vector<HiddenRoot> hidden_roots_;
  std::vector<Counted> counted_;
  std::unordered_set<uint64_t> hidden_keys_;  // accesses the current access hid (Trace::accesses indices)
  std::map<std::pair<uint32_t, bool>, uint32_t> made_;  // (parent, write) -> the node the current access made on it

  void access_all(EventRef ev, uint32_t begin, uint32_t end, const Clock& start, const Clock& end_clock) {
    reported_.clear();
    unknown_.clear();
    sources_.clear();
    hidden_roots_.clear();
    counted_.clear();
    start_ = &start;
    uint32_t agent = agent_of(ev), order = order_of(ev);
    Intervals own_known = known_of(end_clock, agent);
    for (uint32_t a = begin; a < end; ++a) {
      const Access& acc = c_.t.accesses[a];
      if (acc.freed_by != kNone) continue;  // use-after-free reports it; the memory may be another buffer's
      ShadowAccess self{ev, a, acc.write, nullptr};
      hidden_keys_.clear();
      made_.clear();
      // Runs move under this access only where the segments it covers differ in them: where
      // they are one history, the access goes on top and they stay alike (and its racing
      // partners stay counted, not walked).
      bool differ[2] = {false, false}, first = true;
      uint32_t seen[2] = {kNoNode, kNoNode};
      shadow_.for_range(acc.buffer, acc.lo, acc.hi, [&](uint64_t, ShadowSegment& seg) {
        for (int w = 0; w < 2; ++w) {
          const Run* r = find_run(seg, agent, bool(w));
          uint32_t head = r ? r->head : kNoNode;
          if (first) seen[w] = head;
          else differ[w] |= seen[w] != head;
        }
        first = false;
      });
      shadow_.for_range(acc.buffer, acc.lo, acc.hi, [&](uint64_t lo, ShadowSegment& seg) {
        for (const Run& r : seg.runs) {
          if (!r.write && !acc.write) continue;  // reads do not race with reads
          uint32_t head = r.head;
          if (head != kNoNode && runs_[head].entry.ev == ev) {  // the event's earlier access: not a partner, but
            if (runs_[head].entry.hidden) hidden_roots_.push_back({head, a, lo, seg.hi});  // what it hid may be
            head = runs_[head].parent;
          }
          if (head == kNoNode) continue;
          sources_.push_back({r.agent, head, a, lo, seg.hi});
          // Racing nodes that hide accesses: those are looked under, one by one.
          for (auto [ulo, uhi] : unknown_of(r.agent))
            for (uint32_t x = runs_.prev_hidden(runs_.below(head, uhi)); x != kNoNode && runs_[x].index >= ulo;
                 x = runs_.prev_hidden(runs_[x].parent))
              hidden_roots_.push_back({x, a, lo, seg.hi});
        }
        update_runs(seg, self, agent, order, own_known, differ);
      });
      if (self.hidden)  // made when the first access was hidden: every node of this access gets it
        for (auto& [key, id] : made_) runs_.set_hidden(id, self.hidden);
      shadow_.coalesce(acc.buffer, acc.lo, acc.hi);
    }
    std::stable_sort(sources_.begin(), sources_.end(), [](const Source& x, const Source& y) { return x.agent < y.agent; });
    for (size_t i = 0, j; i < sources_.size(); i = j) {
      for (j = i; j < sources_.size() && sources_[j].agent == sources_[i].agent; ++j) {}
      races_with_agent(ev, i, j);
    }
    for (const HiddenRoot& h : hidden_roots_) {
      ShadowAccess x{ev, h.access, c_.t.accesses[h.access].write, nullptr};
      for (const ShadowAccess& o : *runs_[h.node].entry.hidden) visit(o, x, start, h.lo, h.hi);
    }
  }

  static Run* find_run(ShadowSegment& seg, uint32_t agent, bool write) {
    for (Run& r : seg.runs)
      if (r.agent == agent && r.write == write) return &r;
    return nullptr;
  }
  Run& run_of(ShadowSegment& seg, uint32_t agent, bool write) {
    Run* r = find_run(seg, agent, write);
    return r ? *r : seg.runs.emplace_back(Run{agent, write});
  }
  // Puts `e` under `self` (once per access, whichever segments it is hidden from).
  void hide(ShadowAccess& self, const ShadowAccess& e) {
    if (!self.hidden) self.hidden.create();
    if (hidden_keys_.insert(uint64_t(e.access)).second) self.hidden->push_back(e);
  }
  // Adds the access `self` to the segment: what it dominates moves under it.
  void update_runs(ShadowSegment& seg, ShadowAccess& self, uint32_t agent, uint32_t order, const Intervals& own_known,
                   const bool differ[2]) {
    EventRef ev = self.ev;
    auto own = [&](const Run& r) { return r.head != kNoNode && runs_[r.head].entry.ev == ev; };
    if (!self.write) {  // the event writes these bytes too: that write stands for this read
      if (const Run* w = find_run(seg, agent, true); w && own(*w)) return;
    } else {  // the event's own read of these bytes: its write stands for it, and takes what it hid
      Run& reads = run_of(seg, agent, false);
      if (own(reads)) {
        if (const HiddenList& h = runs_[reads.head].entry.hidden)
          for (const ShadowAccess& e : *h) hide(self, e);
        reads.head = runs_[reads.head].parent;
      }
      if (differ[0]) hide_if_dominated(reads, self, own_known);
    }
    Run& mine = run_of(seg, agent, self.write);
    if (own(mine)) return;  // one node per event and run
    if (differ[self.write]) hide_if_dominated(mine, self, own_known);
    auto [it, fresh] = made_.try_emplace({mine.head, self.write}, kNoNode);
    if (fresh) it->second = runs_.push(mine.head, self, order, c_.loc(ev).line);
    mine.head = it->second;
  }
  // Moves the whole run under `self` when the access's end knows every access in it.
  void hide_if_dominated(Run& r, ShadowAccess& self, const Intervals& own_known) {
    if (r.head == kNoNode) return;
    // Only the known ranges that meet the run's orders [oldest, newest] count: an agent known with
    // many holes (each batch of a chained queue) has thousands of ranges, the run a few nodes.
    const uint64_t newest = runs_[r.head].index, oldest = runs_[runs_.at_depth(r.head, 1)].index;
    uint64_t known = 0;
    for (auto it = std::partition_point(own_known.begin(), own_known.end(), [&](const auto& k) { return k.second <= oldest; });
         it != own_known.end() && it->first <= newest; ++it)
      known += runs_.count(r.head, it->first, it->second);
    if (known != runs_.depth(r.head)) return;
    std::vector<uint32_t> nodes;
    for (uint32_t x = r.head; x != kNoNode; x = runs_[x].parent) nodes.push_back(x);
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) hide(self, runs_[*it].entry);  // oldest first
    r.head = kNoNode;
  }

  // The event's races with the visible accesses of one agent, sources_[i, j).
  void races_with_agent(EventRef ev, size_t i, size_t j) {
    uint32_t agent = sources_[i].agent;
    const Intervals& unknown = unknown_of(agent);
    // Submitted before the event: orders below `split` (an agent's events are submitted in order).
    uint64_t key = c_.e.submit_key(ev), split;
    if (agent == kHostAgent) {
      split = uint64_t(std::partition_point(c_.t.host.begin(), c_.t.host.end(), [&](const HostEvent& h) {
                         return c_.e.submit_key({true, uint32_t(&h - c_.t.host.data())}) < key;
                       }) - c_.t.host.begin());
    } else {
      const auto& cmds = c_.t.queue_cmds[agent];
      split = uint64_t(std::partition_point(cmds.begin(), cmds.end(), [&](uint32_t id) { return c_.e.submit_key({false, id}) < key; }) -
                       cmds.begin());
    }
    bool one_run = std::all_of(sources_.begin() + long(i), sources_.begin() + long(j), [&](const Source& s) { return s.head == sources_[i].head; });
    if (!one_run) {  // met through different runs (buffers, segments): each partner once
      // A few racing nodes before it are walked: a run's set costs a path per node of the run,
      // racing or not, the first time it is asked.
      uint64_t before = 0;
      for (size_t s = i; s < j; ++s)
        for (auto [lo, hi] : unknown) before += runs_.count(sources_[s].head, lo, std::min(hi, split));
      bool walk = before <= kWalkedNodes;
      uint64_t from = walk ? 0 : split;
      // Submitted after it (and all of them, walking): one by one, each later one the primary of its own group.
      for (size_t s = i; s < j; ++s)
        for (auto [lo, hi] : unknown)
          for (uint32_t x = runs_.below(sources_[s].head, hi); x != kNoNode && runs_[x].index >= std::max(lo, from); x = runs_[x].parent)
            report_node(x, sources_[s], ev);
      if (!walk) count_union(ev, i, j, unknown, split);
      return;
    }
    const Source& src = sources_[i];
    counted_.push_back({agent, src.head});
    // Submitted after it: each partner is the primary of its own group. The stretches of the run
    // are kept and counted at the end, for all events at once (resolve_later).
    for (auto [lo, hi] : unknown) {
      uint64_t from = std::max(lo, split);
      if (from >= hi) continue;
      uint32_t top = runs_.below(src.head, hi), bottom = runs_.below(src.head, from);
      if (top != bottom) later_.push_back({agent_of(ev), order_of(ev), ev, top, bottom, src.access, src.lo, src.hi});
    }
    // Submitted before it: one group, counted, with the others' lines.
    uint64_t count = 0;
    uint32_t last = kNoNode;
    std::vector<std::pair<uint32_t, uint32_t>> stretches;  // (top, bottom depth), newest first
    for (auto it = unknown.rbegin(); it != unknown.rend(); ++it) {
      uint64_t lo = it->first, hi = std::min(it->second, split);
      if (lo >= hi) continue;
      uint32_t top = runs_.below(src.head, hi), bottom = runs_.depth(runs_.below(src.head, lo));
      if (runs_.depth(top) == bottom) continue;
      count += runs_.depth(top) - bottom;
      if (last == kNoNode) last = top;
      stretches.push_back({top, bottom});
    }
    if (!count) return;
    // The others' lines, oldest first, a stretch of nodes on one line at a time (the related
    // command, `last`, aside).
    LineSample lines;
    for (auto it = stretches.rbegin(); it != stretches.rend(); ++it) {
      auto [top, bottom] = *it;
      uint32_t x = runs_.at_depth(top, bottom + 1);
      for (uint32_t d = bottom + 1; d <= runs_.depth(top) && !lines.full();) {
        // The newest depth on x's line (nodes on one line share line_from): most often x's own.
        uint32_t from = runs_[x].line_from, lo = d, hi = runs_.depth(top);
        uint32_t next = d < hi ? runs_.at_depth(top, d + 1) : kNoNode;
        if (next != kNoNode && runs_[next].line_from == from) {
          while (lo < hi) {
            uint32_t m = lo + (hi - lo + 1) / 2;
            if (runs_[runs_.at_depth(top, m)].line_from == from) lo = m;
            else hi = m - 1;
          }
          next = lo < runs_.depth(top) ? runs_.at_depth(top, lo + 1) : kNoNode;
        }
        uint32_t n = lo - d + 1 - (top == last && lo == runs_.depth(top) ? 1 : 0);
        if (n) lines.add(runs_[x].line, n);
        d = lo + 1;
        x = next;
      }
    }
    bool more = lines.more(count - 1);
    const ShadowAccess& p = runs_[last].entry;
    if (Diagnostic* d = groups_.add_many(ev, p.ev, count, lines.lines, more)) {
      found_order_[{ev.key(), p.ev.key()}] = {p.ev, ev};
      const Access& pa = c_.t.accesses[p.access];
      // The first segment (in the event's order) where they meet.
      for (size_t s = i; s < j; ++s) {
        const Source& at = sources_[s];
        if (pa.hi <= at.lo || at.hi <= pa.lo) continue;
        describe(*d, ev, at.access, p.ev, p.access, std::max(at.lo, pa.lo), std::min(at.hi, pa.hi));
        break;
      }
    }
  }
  static constexpr uint64_t kWalkedNodes = 64;  // racing nodes before an event below which its runs are walked, not united

  // Submitted before the event, met through the runs of sources_[i, j): one group, the runs'
  // sets of orders united and counted (a partner in several runs counts once), with the others'
  // lines, every one of them as far as the message lists them.
  void count_union(EventRef ev, size_t i, size_t j, const Intervals& unknown, uint64_t split) {
    uint32_t agent = sources_[i].agent, u = OrderSets::kEmpty;
    OrderSets& sets = sets_of(agent);
    for (size_t s = i; s < j; ++s) u = sets.unite(u, sets.of_run(runs_, sources_[s].head));
    uint64_t count = 0, last = OrderSets::kNone;
    for (auto [lo, hi] : unknown) {
      uint64_t g = sets.greatest(u, lo, std::min(hi, split));
      if (g == OrderSets::kNone) continue;
      count += sets.count(u, lo, std::min(hi, split));
      if (last == OrderSets::kNone || g > last) last = g;
    }
    // Partners met again under hidden accesses are counted already.
    for (size_t s = i; s < j; ++s)
      if (s == i || sources_[s].head != sources_[s - 1].head) counted_.push_back({agent, sources_[s].head});
    if (!count) return;
    OrderSets::Lines lines;  // the others': the related command, `last`, aside
    for (auto [lo, hi] : unknown) sets.add_lines(u, lo, std::min({hi, split, last}), lines);
    // The related access: in the first run that holds `last` (where a walk would meet it first).
    for (size_t s = i; s < j; ++s) {
      const Source& at = sources_[s];
      uint32_t x = runs_.below(at.head, last + 1);
      if (x == kNoNode || runs_[x].index != last) continue;
      const ShadowAccess& p = runs_[x].entry;
      if (Diagnostic* d = groups_.add_many(ev, p.ev, count, {lines.v.begin(), lines.v.begin() + lines.n}, false)) {
        found_order_[{ev.key(), p.ev.key()}] = {p.ev, ev};
        const Access& pa = c_.t.accesses[p.access];
        describe(*d, ev, at.access, p.ev, p.access, std::max(at.lo, pa.lo), std::min(at.hi, pa.hi));
      }
      return;
    }
  }
  void report_node(uint32_t x, const Source& s, EventRef ev) {
    const Access& pa = c_.t.accesses[runs_[x].entry.access];
    report(runs_[x].entry, {ev, s.access, c_.t.accesses[s.access].write, nullptr}, std::max(s.lo, pa.lo), std::min(s.hi, pa.hi));
  }
  // True when `partner` was counted in a group of the current event.
  bool counted(EventRef partner) const {
    uint32_t agent = agent_of(partner), order = order_of(partner);
    for (const Counted& c : counted_) {
      if (c.agent != agent) continue;
      uint32_t x = runs_.below(c.head, uint64_t(order) + 1);
      if (x != kNoNode && runs_[x].index == order) return true;
    }
    return false;
  }

  // Racing accesses submitted after the event that met them: each is the primary of a group of
  // the event's agent. Kept per event and run as a stretch of the run, and counted at the end.
  struct Later {
    uint32_t agent, order;  // the event's agent and order: the group's related queue
    EventRef ev;
    uint32_t top, bottom;  // the stretch: the nodes from `top` down to `bottom` (not included)
    uint32_t access;       // the event's access, and its segment, for the message
    uint64_t lo, hi;
  };
  std::vector<Later> later_;

  // Counts, for every node, the stretches of each agent that cover it, per source line of the
  // stretches' events: a stretch adds one (on its line) at its top and takes one at its bottom,
  // and a node's counts are the sums over the nodes above it (made after it, on top of it),
  // summed from the newest node down; only covered nodes (one per group member) and stretch ends
  // are touched, and the counts move up a chain without being copied. The related event (the
  // last stretch covering the node) comes from painting the stretches from the last, each node
  // once (a union-find skips painted ones). Then each partner's nodes make one group per agent.
  void resolve_later() {
    using Lines = std::map<uint32_t, int64_t>;  // line -> stretches
    std::stable_sort(later_.begin(), later_.end(), [](const Later& x, const Later& y) { return x.agent < y.agent; });
    for (size_t i = 0, j; i < later_.size(); i = j) {
      for (j = i; j < later_.size() && later_[j].agent == later_[i].agent; ++j) {}
      struct Acc {
        Lines lines;
        int64_t total = 0;
      };
      std::unordered_map<uint32_t, Acc> acc;
      std::priority_queue<uint32_t> todo;  // newest node first: a node's children come before it
      auto add = [&](uint32_t n, Acc&& m) {
        auto [it, fresh] = acc.try_emplace(n);
        if (fresh) todo.push(n);
        Acc& a = it->second;
        if (a.lines.size() < m.lines.size()) std::swap(a, m);  // the smaller into the larger
        a.total += m.total;
        for (auto [line, v] : m.lines)
          if ((a.lines[line] += v) == 0) a.lines.erase(line);
      };
      for (size_t k = i; k < j; ++k) {
        uint32_t line = c_.loc(later_[k].ev).line;
        add(later_[k].top, Acc{{{line, 1}}, 1});
        if (later_[k].bottom != kNoNode) add(later_[k].bottom, Acc{{{line, -1}}, -1});
      }
      struct Cover {
        uint64_t count = 0;
        std::vector<std::pair<uint32_t, uint64_t>> lines;  // the first 10 (line, stretches)
        bool more_lines = false;
      };
      std::map<uint32_t, Cover> cover;  // node -> the stretches covering it
      while (!todo.empty()) {
        uint32_t n = todo.top();
        todo.pop();
        Acc m = std::move(acc[n]);
        acc.erase(n);
        if (m.lines.empty()) continue;
        Cover& c = cover[n];
        c.count = uint64_t(m.total);
        for (auto it = m.lines.begin(); it != m.lines.end() && c.lines.size() < 10; ++it) c.lines.push_back({it->first, uint64_t(it->second)});
        c.more_lines = m.lines.size() > 10;
        if (runs_[n].parent != kNoNode) add(runs_[n].parent, std::move(m));
      }
      // Paint: the last stretch covering each node.
      std::unordered_map<uint32_t, uint32_t> skip;  // union-find: a painted node -> the next one to look at
      auto find = [&](uint32_t x) {
        uint32_t r = x;
        for (auto it = skip.find(r); it != skip.end(); it = skip.find(r)) r = it->second;
        for (auto it = skip.find(x); it != skip.end() && it->second != r; it = skip.find(x)) x = std::exchange(it->second, r);
        return r;
      };
      std::unordered_map<uint32_t, size_t> last;
      for (size_t k = j; k-- > i;)
        for (uint32_t x = find(later_[k].top); x != kNoNode && runs_.depth(x) > runs_.depth(later_[k].bottom); x = find(runs_[x].parent)) {
          last.try_emplace(x, k);
          skip[x] = runs_[x].parent;
        }
      // One group per partner event (its nodes in different runs add up).
      struct Group {
        uint64_t count = 0;
        size_t last = 0;
        uint32_t node = kNoNode;  // the partner's node the last stretch covers
        std::map<uint32_t, uint64_t> lines;
        bool more_lines = false;
      };
      std::map<uint64_t, Group> groups;  // by EventRef::key of the partner
      for (auto& [n, c] : cover) {
        Group& g = groups[runs_[n].entry.ev.key()];
        g.count += c.count;
        size_t l = last.at(n);
        if (g.node == kNoNode || later_[l].order > later_[g.last].order) g.last = l, g.node = n;
        for (auto [line, v] : c.lines) g.lines[line] += v;
        g.more_lines |= c.more_lines;
      }
      for (auto& [key, g] : groups) {
        // The others' lines: the related event's stretch aside.
        if (auto it = g.lines.find(c_.loc(later_[g.last].ev).line); it != g.lines.end() && --it->second == 0) g.lines.erase(it);
        std::vector<uint32_t> lines;
        for (auto [line, v] : g.lines)
          if (lines.size() < 9) lines.push_back(line);
        bool more = g.more_lines || lines.size() > 8;
        lines.resize(std::min<size_t>(lines.size(), 8));
        const Later& l = later_[g.last];
        const ShadowAccess& p = runs_[g.node].entry;
        if (Diagnostic* d = groups_.add_many(p.ev, l.ev, g.count, lines, more)) {
          found_order_[{p.ev.key(), l.ev.key()}] = {p.ev, l.ev};
          const Access& pa = c_.t.accesses[p.access];
          describe(*d, p.ev, p.access, l.ev, l.access, std::max(l.lo, pa.lo), std::min(l.hi, pa.hi));
        }
      }
    }
    later_.clear();
  }

  // `root` and what it hides, against the access `x` of the event being processed, on the
  // segment [lo, hi) that `x` covers. A loop, not recursion: what an access hides can be as deep
  // as the program. A hidden entry counts where it touches the segment (an entry hides what it
  // covered anywhere, and a merged segment can be wider than that).
  void visit(const ShadowAccess& root, const ShadowAccess& x, const Clock& start, uint64_t lo, uint64_t hi) {
    std::vector<const ShadowAccess*> todo{&root};
    while (!todo.empty()) {
      const ShadowAccess& o = *todo.back();
      todo.pop_back();
      const Access& oa = c_.t.accesses[o.access];
      if (oa.hi <= lo || hi <= oa.lo) continue;  // elsewhere: what it hid here, it hid where it was
      bool own = o.ev == x.ev;
      if (!own && c_.e.known(start, o.ev)) continue;  // it knows `o`, hence all `o` hides
      if (!o.write && !x.write) continue;           // reads hide only reads
      if (!own) report(o, x, std::max(lo, oa.lo), std::min(hi, oa.hi));
      // What `o` hides races with this access too unless this event knows it (the group's message
      // counts and lists them all): the cost is the number of racing pairs found.
      if (o.hidden)
        for (auto h = o.hidden->rbegin(); h != o.hidden->rend(); ++h) todo.push_back(&*h);  // in list order
    }
  }

  // `first` was processed before `second`.
  void report(const ShadowAccess& first, const ShadowAccess& second, uint64_t lo, uint64_t hi) {
    if (counted(first.ev) || !reported_.insert(first.ev.key()).second) return;
    // Primary: the access submitted later; related: the earlier one.
    ShadowAccess later = second, earlier = first;
    if (c_.e.submit_key(first.ev) > c_.e.submit_key(second.ev)) std::swap(later, earlier);
    Diagnostic* d = groups_.add(later.ev, earlier.ev);
    if (!d) return;
    found_order_[{later.ev.key(), earlier.ev.key()}] = {first.ev, second.ev};
    describe(*d, later.ev, later.access, earlier.ev, earlier.access, lo, hi);
  }
  // The finding (later, earlier), submitted in that order, through accesses `lacc` and `eacc`,
  // on bytes [lo, hi).
  void describe(Diagnostic& d, EventRef later, uint32_t lacc, EventRef earlier, uint32_t eacc, uint64_t lo, uint64_t hi) {
    const Access& la = c_.t.accesses[lacc];
    const Access& ea = c_.t.accesses[eacc];
    // The kind reads in submission order: the earlier access first.
    std::string kindname = ea.write ? (la.write ? "WAW" : "RAW") : "WAR";
    const Buffer& buf = c_.p.buffers[la.buffer];
    d.set_rule(Rule::Race);
    d.loc = c_.loc(later);
    d.message = kindname + " race on bytes [" + std::to_string(lo) + ", " + std::to_string(hi) + ") of '" + buf.name + "': " +
                c_.what(later) + " " + (la.write ? "writes" : "reads") + " them while " + c_.what(earlier) + " (" +
                c_.line_text(c_.loc(earlier)) + ") may still " + (ea.write ? "write" : "read") + " them";
    d.related.push_back({c_.loc(earlier), "the earlier access: " + c_.what(earlier)});
  }
  // (later, earlier) by EventRef::key -> the two in processing order (for witnesses)
  std::map<std::pair<uint64_t, uint64_t>, std::pair<EventRef, EventRef>> found_order_;

  // The last wait before `ev` on its queue (or the host's last wait before a host event).
  EventRef nearest_wait(EventRef ev) const {
    const auto& waits = c_.positions(ev.host ? kHostAgent : c_.t.cmds[ev.id].queue, true);
    uint32_t at = ev.host ? ev.id : c_.t.cmds[ev.id].index;
    auto it = std::lower_bound(waits.begin(), waits.end(), at);
    if (it == waits.begin()) return {};
    --it;
    return ev.host ? EventRef{true, *it} : EventRef{false, c_.t.queue_cmds[c_.t.cmds[ev.id].queue][*it]};
  }

  void explain(Diagnostic& d, EventRef producer, EventRef consumer) {
    std::string cq = consumer.host ? "the host" : "queue " + c_.p.queues[c_.t.cmds[consumer.id].queue].name;
    EventRef w = nearest_wait(consumer);
    const WaitResolution* r = w.id != kNone ? c_.e.resolution(w) : nullptr;
    if (!r) {
      d.notes.push_back({{}, "nothing orders them: " + cq + " has no wait before " + c_.what(consumer) +
                                 " that follows " + c_.what(producer)});
    } else {
      const auto& ws = c_.e.writes(r->cond.signal);
      TextList cands;
      if (r->initial_candidate) cands.add([&] { return "the initial value " + std::to_string(c_.e.initial_value(r->cond.signal)); });
      for (size_t k = 0; k < r->count(); ++k) {
        if (cands.full()) {
          cands.count(r->count() - k);
          break;
        }
        cands.add([&] { return c_.signal_write_text(ws[r->candidate(k)]); });
      }
      d.notes.push_back({c_.loc(w), "the nearest wait, " + c_.what(w) + ", can be satisfied by " + (cands.empty() ? "nothing" : cands.str())});
      std::string early;
      if (r->initial_candidate) early = "the initial value " + std::to_string(c_.e.initial_value(r->cond.signal));
      for (size_t k = 0; k < r->count() && early.empty(); ++k)
        if (const SignalWrite& sw = ws[r->candidate(k)]; !c_.e.known(*sw.end, producer)) early = c_.signal_write_text(sw);
      if (!early.empty())
        d.notes.push_back({{}, early + " satisfies it without following " + c_.what(producer) + " (a stale wait)"});
    }
  }

 public:
  // Fixes are chosen once every write is known, so a suggested wait is checked against all of them.
  void finish() override {
    resolve_later();
    size_t witnesses = 0;
    groups_.flush([&](Diagnostic& d, EventRef later, EventRef earlier) {
      explain(d, earlier, later);
      suggest_fix(d, earlier, later);
      if (c_.witness && witnesses++ < kMaxWitnesses) {
        auto [a, b] = found_order_.at({later.key(), earlier.key()});
        d.witness = witness_schedule(c_.t, a, b);
        if (d.witness.empty())
          d.notes.push_back({{}, "no witness schedule: the order qvet derives for this pair releases a wait before any "
                                 "write satisfies it (a wait resolved from below, docs/language-notes.md)"});
      }
    });
  }

 private:
  static constexpr size_t kMaxWitnesses = 50;  // each costs a run of the engine

  // The value a wait at `consumer` must reach to see write `w`, written the way the source writes
  // it: a loop variable that also encloses the consumer stays a variable, shifted by the
  // iterations between them (`wait tl >= i - 1`), so the fix holds in every iteration.
  std::string value_for(const SignalWrite& w, EventRef consumer) const {
    const Expr* src = w.event.host ? (c_.t.host[w.event.id].src ? &c_.t.host[w.event.id].src->value : nullptr)
                                   : (c_.t.cmds[w.event.id].src ? &c_.t.cmds[w.event.id].src->value : nullptr);
    // The consumer's wait compares its own width (the low dword on amd): the number it must reach.
    std::string constant = std::to_string(w.value & c_.e.word_mask(consumer.host ? kHostAgent : c_.t.cmds[consumer.id].queue, true));
    if (!src || src->is_constant()) return constant;
    uint32_t wctx = c_.ctx(w.event), cctx = c_.ctx(consumer);
    Expr written = *src;
    if (!w.event.host)  // a command list's parameters are the submit's argument expressions
      if (const Stmt* sub = c_.t.host[c_.t.cmds[w.event.id].submit].src)
        for (auto& [v, arg] : sub->args) written = written.substitute(v, arg);
    Expr e = Expr::of(written.constant);
    for (auto& [v, coef] : written.terms) {
      std::optional<i128> pv = c_.t.value_in(wctx, v), cv = c_.t.value_in(cctx, v);
      const Var& var = c_.p.vars[v];
      if (var.kind == Var::Param) e = e + Expr::var(v).scaled(coef);
      else if (var.kind == Var::Loop && pv && cv) e = e + (Expr::var(v) + Expr::of(*pv - *cv)).scaled(coef);
      else if (pv) e = e + Expr::of(sat_mul(coef, *pv));
      else return constant;
    }
    // A wait that goes into a command list sees the list's parameters, not the loop variables
    // of the submit: `step(k = i)` lets `i` be written `k`.
    if (!consumer.host)
      if (const Stmt* sub = c_.t.host[c_.t.cmds[consumer.id].submit].src; sub && sub->kind == StmtKind::SubmitList) {
        for (auto& [k, arg] : sub->args)
          if (arg.constant == 0 && arg.terms.size() == 1 && arg.terms[0].second == 1)
            e = e.substitute(arg.terms[0].first, Expr::var(k));
        for (auto& [v, coef] : e.terms)
          if (c_.p.vars[v].kind != Var::ListParam && c_.p.vars[v].kind != Var::Param) return constant;
      }
    return to_string(e, c_.p.var_names());
  }

  // The writes that could satisfy `cond` without following `found`: a write that knows `found`
  // knows what `found` follows (the producer) too, so only these can make the wait stale. Many
  // findings share their `found`; a scan of every write of the signal per finding would be
  // quadratic.
  // The writes that meet a proposed wait (fixes are chosen after the run: every write has run),
  // only the first of each agent whose writes end in order (every queue but a chained one, and
  // the host): a later one knows all the first one knows, so it is stale only if the first one
  // is. (Each finding asks; on a timeline of one queue, every later write: quadratic.)
  const std::vector<const SignalWrite*>& stale_pool(const WaitCond& cond) {
    auto [it, fresh] = stale_pools_.try_emplace({cond.signal, cond.threshold, cond.mask});
    if (fresh) {
      std::unordered_set<uint32_t> taken;  // in-order agents with a write in the pool
      for (const SignalWrite& w : c_.e.writes(cond.signal))
        if (cond.met_by(w.value) && w.processed && (!c_.e.ordered_agent(w.agent) || taken.insert(w.agent).second))
          it->second.push_back(&w);
    }
    return it->second;
  }
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, std::vector<const SignalWrite*>> stale_pools_;
  std::unordered_set<std::string> signal_names_;  // filled on first use
  std::optional<Loc> first_stmt_;                 // the first statement that is not a declaration

  void suggest_fix(Diagnostic& d, EventRef producer, EventRef consumer) {
    std::string where = consumer.host ? "before " + c_.line_text(c_.loc(consumer)) + " on the host"
                                      : "before " + c_.line_text(c_.loc(consumer)) + " on queue " +
                                            c_.p.queues[c_.t.cmds[consumer.id].queue].name;
    // A signal the producer's agent already writes after the producer, whose end follows it.
    const SignalWrite* found = c_.write_after(producer);
    if (found && !consumer.host && c_.e.known(*found->end, consumer)) found = nullptr;  // would deadlock
    // The wait must not be satisfiable by a write that does not follow the producer (a stale wait).
    if (found) {
      uint64_t mask = c_.e.word_mask(consumer.host ? kHostAgent : c_.t.cmds[consumer.id].queue, true);
      WaitCond proposed{found->signal, found->value & mask, mask};
      if (proposed.met_by(c_.e.initial_value(found->signal))) found = nullptr;
      else
        for (const SignalWrite* w : stale_pool(proposed))
          if (!c_.e.known(*w->end, found->event) && !c_.e.known(*w->end, producer) &&
              (consumer.host || !c_.e.known(*w->end, consumer))) {
            found = nullptr;
            break;
          }
    }
    Fix f;
    if (found) {
      uint32_t sig = found->signal;
      std::string wait = "wait " + c_.p.signals[sig].name + " >= " + value_for(*found, consumer);
      f.edits.push_back({c_.loc(consumer), false, wait});
      f.description = "add `" + wait + "` " + where + " (" + c_.signal_write_text(*found) + " follows the producer)";
    } else {
      std::string pq = producer.host ? "the host" : "queue " + c_.p.queues[c_.t.cmds[producer.id].queue].name;
      std::string name = "done_" + (producer.host ? std::string("host") : c_.p.queues[c_.t.cmds[producer.id].queue].name);
      if (signal_names_.empty())
        for (const Signal& s : c_.p.signals) signal_names_.insert(s.name);
      auto taken = [&](const std::string& n) { return signal_names_.count(n) > 0; };
      std::string fresh = name;
      for (int i = 2; taken(fresh); ++i) fresh = name + std::to_string(i);
      std::string wait = "wait " + fresh + " >= 1";
      f.description = "declare `signal " + fresh + " on host`, add `signal " + fresh + " = 1` after " +
                      c_.line_text(c_.loc(producer)) + " on " + pq + " and `" + wait + "` " + where;
      // The declaration goes before the first statement that is not a declaration.
      if (!first_stmt_) {
        first_stmt_ = Loc{};
        for (const Stmt& s : c_.p.stmts)
          if (s.kind >= StmtKind::CommandList) {
            first_stmt_ = s.loc;
            break;
          }
      }
      const Loc& first = *first_stmt_;
      f.edits.push_back({{first.file, first.line, 1}, false, "signal " + fresh + " on host"});
      f.edits.push_back({c_.loc(producer), true, "signal " + fresh + " = 1"});
      f.edits.push_back({c_.loc(consumer), false, wait});
    }
    d.fixes.push_back(f);
    // The other direction: the earlier-submitted command may wait for a signal written after the
    // later access (a kernel recorded before the host fills its input waits for the host's kick).
    if (!producer.host)
      if (const SignalWrite* w = c_.write_after(consumer); w && !c_.e.known(*w->end, producer)) {
        uint32_t sig = w->signal;
        std::string wait = "wait " + c_.p.signals[sig].name + " >= " + value_for(*w, producer);
        d.fixes.push_back({"or add `" + wait + "` before " + c_.line_text(c_.loc(producer)) + " on queue " +
                               c_.p.queues[c_.t.cmds[producer.id].queue].name + " (" + c_.signal_write_text(*w) +
                               " follows " + c_.what(consumer) + ")",
                           {{c_.loc(producer), false, wait}}});
      }
  }
};

}  // namespace

std::unique_ptr<Checker> make_race_checker(const CheckContext& c) { return std::make_unique<RaceChecker>(c); }

}  // namespace qvet
