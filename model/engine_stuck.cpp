// When every agent is stuck: what the stuck waits prove of each other from below (derive,
// inherit, foresee), the stuck graph, forced waits, and deadlocks (unstick). Which stuck waits
// are reported, and how they group, is model/deadlock_roots.h's.
#include "model/engine.h"
#include "model/writer_index.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <optional>
// vector_as_graph first: strong_components finds its functions by name lookup at definition.
#include <boost/graph/vector_as_graph.hpp>
#include <boost/graph/strong_components.hpp>

namespace qvet {

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
  const auto& done = writer_index(cond.signal).done_at(cond.narrow());
  return cond.met_by(init_[cond.signal]) || done.lower_bound({cond.threshold, 0}) != done.end();
}

uint64_t Engine::pending_meeting(const WaitCond& cond) const {
  const auto& pending = writer_index(cond.signal).pending_at(cond.narrow());
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
    const auto& pending = writer_index(cond.signal).pending_at(cond.narrow());
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

namespace {
// How many pending writers `pending_held_by` looks at per wait before it declines (then the wait
// is forced, as before: the answer is the same, only slower).
constexpr size_t kHeldScan = 16;
}  // namespace

bool Engine::released_only_by(EventRef v, const AgentTest& below) const {
  const WaitCond c = wait_cond(t_, v);
  // (A wait with an override may end learning less: released at once, or forced from a round's answer.)
  if (!indexed(c) || has_done(c) || overrides_.count(v.key())) return false;
  const auto& pending = writer_index(c.signal).pending_at(c.narrow());
  size_t asked = 0;
  // At least one candidate: a wait with none never ends, and is left to unstick to report as a
  // deadlock, with what it blocks, rather than proved from (corpus/derive_held_no_candidate.hcq).
  bool any = false;
  for (auto it = pending.lower_bound({c.threshold, 0}); it != pending.end(); ++it, ++work_) {
    const AgentWrites& aw = by_agent_[c.signal][it->second];
    if (++asked > kHeldScan) return false;
    uint32_t p = pending_candidate(v, aw, c);  // the writer's first that may release it
    if (p == kNone) continue;                  // none (dead, or submitted after a host wait)
    const EventRef pe = writes_[c.signal][p].event;
    if (v.host ? pe.host && pe.id > v.id
               : !pe.host && t_.cmds[pe.id].queue == t_.cmds[v.id].queue && t_.cmds[pe.id].index > t_.cmds[v.id].index)
      continue;  // its own agent's, after it
    if (!below(aw.agent)) return false;
    any = true;
  }
  return any;
}

bool Engine::pending_held_by(const StuckNode& n, const AgentTest& below) const {
  const WaitCond& cond = n.cond;
  const auto& pending = writer_index(cond.signal).pending_at(cond.narrow());
  size_t asked = 0;
  // The host's first wait from where it stands that only those can release (asked once); a batch
  // submitted after it comes after the root.
  std::optional<size_t> host_held;
  auto first_host_held = [&] {
    if (!host_held) {
      host_held = t_.host.size();
      for (size_t h = host_pos_; !host_dead_ && h < t_.host.size() && h < host_pos_ + kHeldScan; ++h)
        if (t_.host[h].op == HostOp::Wait && released_only_by({true, uint32_t(h)}, below)) {
          host_held = h;
          break;
        }
    }
    return *host_held;
  };
  for (auto it = pending.lower_bound({cond.threshold, 0}); it != pending.end(); ++it, ++work_) {
    const AgentWrites& aw = by_agent_[cond.signal][it->second];
    if (below(aw.agent)) continue;  // behind the root, or in its tree
    if (++asked > kHeldScan || aw.agent == kHostAgent) return false;
    uint32_t p = pending_candidate(n.wait, aw, cond);
    if (p == kNone) continue;
    const TraceCmd& pc = t_.cmds[writes_[cond.signal][p].event.id];
    // A wait before the write that only those can release ends after the root: the
    // writer's head or the wait after it, or, for a batch not submitted yet, a wait of the host's
    // before the submit.
    bool held = false;
    if (int h = stuck_node_of_queue_[aw.agent]; h >= 0)
      for (uint32_t i = 0, v = stuck_nodes_[size_t(h)].wait.id;
           i < 2 && !held && v != kNone && t_.cmds[v].index < pc.index && host_ran_[t_.cmds[v].submit]; ++i, v = next_wait_[v])
        held = released_only_by({false, v}, below);
    if (!held && !host_ran_[pc.submit]) held = first_host_held() < pc.submit;
    if (!held) return false;
  }
  return true;
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
    const auto& set = writer_index(keys[k].first).pending_at(keys[k].second);
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
    bool held = false;                // cleared by pending_held_by: its proof is not inherited
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
  // A root that is not cleared but has a write made that meets it: each pending candidate outside
  // its tree may still sit behind a wait that only the root's queue and its tree can release (its
  // writer's head or the wait after it, or a host wait before the batch's submit; no candidate
  // made): then it comes after that wait, which comes after the root's end, and the root is
  // cleared (pending_held_by). Without this, queues relaying a step, each waiting for two others'
  // previous step (a ring of peer copies), force an episode per step, learning only front ends,
  // and the check grows with the square of the steps.
  for (size_t k = 0; k < n; ++k) {
    Node& x = g[k];
    if (x.clear || x.only != kNone || !x.has_done) continue;
    const int r = find(int(k));
    auto below = [&](uint32_t agent) {  // the root's queue, or one whose head hangs in its tree
      int i = agent == kHostAgent ? -1 : stuck_node_of_queue_[agent];
      return i >= 0 && local[size_t(i)] >= 0 && find(local[size_t(i)]) == r;
    };
    x.held = x.clear = pending_held_by(nodes[x.node], below);
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
    // A held root's proof covers its writers' writes from the one it would take on, not all of
    // them as a tree's does: a later wait of the queue inherits none (a lower one may take an
    // earlier write of those writers), but may still take the tree's.
    st.proof = {sn.wait.id, x.clear ? kNone : x.only, x.held ? kNone : s, sn.cond.narrow(), x.v, episodes_, st.writes};
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
    const auto& pending = writer_index(n.cond.signal).pending_at(n.cond.narrow());
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
    for (auto [key, pos] : writer_index(c.signal).pending_at(c.narrow)) {
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
  // A component that nothing can release: its waits never end, and their agents are dead.
  auto settle = [&](const std::vector<int>& members) {
    Deadlock d;
    for (int i : members) d.waits.push_back(nodes[size_t(i)].wait);
    std::sort(d.waits.begin(), d.waits.end(), [&](EventRef a, EventRef b) { return submit_key(a) < submit_key(b); });
    d.cycle = d.waits.size() > 1;
    uint32_t cause = uint32_t(deadlocks_.size());
    deadlocks_.push_back(d);
    for (EventRef w : d.waits) kill_agent(w.host ? kHostAgent : t_.cmds[w.id].queue, cause, false);
    return true;
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

}  // namespace qvet
