#include "model/deadlock_roots.h"

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>
#include <unordered_set>
// vector_as_graph first: strong_components finds its functions by name lookup at definition.
#include <boost/graph/vector_as_graph.hpp>
#include <boost/graph/strong_components.hpp>

namespace qvet {

namespace {

constexpr uint64_t kNoKey = UINT64_MAX;

// Prefix minimum over one agent's stuck waits, with values that only go down.
class PrefixMin {
 public:
  explicit PrefixMin(size_t n = 0) : t_(n + 1, kNoKey) {}
  void lower(size_t i, uint64_t v) {
    for (++i; i < t_.size(); i += i & (~i + 1)) t_[i] = std::min(t_[i], v);
  }
  uint64_t upto(size_t i) const {  // over [0, i]
    uint64_t m = kNoKey;
    for (++i; i > 0; i -= i & (~i + 1)) m = std::min(m, t_[i]);
    return m;
  }

 private:
  std::vector<uint64_t> t_;
};

class Roots {
 public:
  explicit Roots(const Engine& e) : e_(e), t_(e.trace()), nq_(uint32_t(t_.program->queues.size())), at_(nq_ + 1) {}

  DeadlockRoots run() {
    collect();
    if (nodes_.empty()) return {};
    if (!needs() || !knots() || !attribute()) return {e_.deadlocks(), true, false};
    return {std::move(roots_), false, approximated_};
  }

 private:
  struct Node {
    EventRef wait;
    uint32_t agent, place, submit;  // agent: queue id or nq_ (the host); place: in its agent's order
  };
  const Engine& e_;
  const Trace& t_;
  const uint32_t nq_;
  std::vector<Node> nodes_;
  std::vector<std::vector<uint32_t>> at_;  // per agent: its stuck waits (node ids), in its order
  std::vector<uint32_t> at_index_;         // per node: its place in at_[agent]
  std::vector<std::vector<int>> out_;      // "needs", reduced: each wait's needs are reachable
  std::vector<int> comp_;
  int ncomp_ = 0;
  std::vector<std::vector<uint32_t>> members_;  // per knot (component), its waits
  std::vector<bool> root_comp_;
  std::vector<Deadlock> roots_;
  std::unique_ptr<Engine> released_;  // the run with every stuck wait released, made when first asked
  uint64_t budget_ = limits::kRootBudget;
  uint64_t rerun_work_ = 0;    // of the runs with waits released (Engine::work, every round)
  bool approximated_ = false;  // past limits::kRootRerunWork: a cycle's knot asked from the run with all released

  bool spend(uint64_t n) { return budget_ >= n ? (budget_ -= n, true) : (budget_ = 0, false); }
  uint32_t agent_of(EventRef x) const { return x.host ? nq_ : t_.cmds[x.id].queue; }
  uint32_t place_of(EventRef x) const { return x.host ? x.id : t_.cmds[x.id].index; }
  uint32_t submit_of(EventRef x) const { return x.host ? x.id : t_.cmds[x.id].submit; }

  // The stuck waits: every wait that never ended.
  void collect() {
    for (uint32_t q = 0; q < nq_; ++q)
      for (uint32_t id : t_.queue_cmds[q])
        if (t_.cmds[id].op == CmdOp::Wait && !e_.ran({false, id})) add({false, id});
    for (uint32_t h = 0; h < t_.host.size(); ++h)
      if (t_.host[h].op == HostOp::Wait && !e_.ran({true, h})) add({true, h});
  }
  void add(EventRef w) {
    uint32_t a = agent_of(w);
    at_index_.push_back(uint32_t(at_[a].size()));
    at_[a].push_back(uint32_t(nodes_.size()));
    nodes_.push_back({w, a, place_of(w), submit_of(w)});
  }
  // The last stuck wait of `agent` before `place` in its order (its index in at_[agent]), or -1.
  int last_before(uint32_t agent, uint32_t place) const {
    const auto& v = at_[agent];
    auto it = std::partition_point(v.begin(), v.end(), [&](uint32_t n) { return nodes_[n].place < place; });
    return int(it - v.begin()) - 1;
  }
  // The stuck waits an event sits behind, as the last of each agent's (their order gives the rest).
  template <class F>
  void behind(EventRef x, F&& f) const {
    if (int i = last_before(agent_of(x), place_of(x)); i >= 0) f(agent_of(x), size_t(i));
    if (!x.host)
      if (int i = last_before(nq_, t_.cmds[x.id].submit); i >= 0) f(nq_, size_t(i));
  }

  // Whether `x` comes after stuck wait `w` ends, by the trace's order alone (nothing that never
  // runs orders anything but what follows it on its queue, or, for the host, what it submits).
  bool after(const Node& w, EventRef x) const {
    if (agent_of(x) == w.agent) return place_of(x) > w.place;
    return w.wait.host && !x.host && t_.cmds[x.id].submit > w.place;
  }

  // Whether host statement `x` happens before stuck wait `w` starts. (A queue's command before
  // a wait need not end before the wait starts: only blocking commands do.)
  bool before(EventRef x, const Node& w) const { return x.host && x.id < w.submit; }

  // One signal's writes as "needs" reads them.
  struct Writers {
    std::vector<std::vector<uint32_t>> lists;  // per writer (SignalWrite::pos), in its order
    bool narrow = false;                       // some write is a 32-bit one
    std::vector<uint32_t> host_ids;            // the host's 64-bit writes: their statements, in order
    std::vector<int> hidden_at;                // per write: the least `ell` whose host write hides it
    std::vector<int> ell_own;                  // per 32-bit write: `ell` of the host's last 64-bit write before its submit
    std::vector<uint32_t> wide;                // the 64-bit writes, by hidden_at, highest first
    std::vector<uint32_t> unrun_wide;          // the 64-bit writes that have not run
  };
  // What the 32-bit writes that land after host write `ell` leave in the high half, for a wait:
  // at least (base, from writes that ran) and at most (high); `low`, the largest low half of one
  // that does not meet the wait with `base`.
  struct HalfBound {
    uint64_t base = 0, high = 0, low = 0;
    bool lent = false;
  };

  bool index_writers(const std::vector<SignalWrite>& ws, Writers& out) {
    if (!spend(4 * ws.size())) return false;
    for (uint32_t i = 0; i < ws.size(); ++i) {
      if (out.lists.size() <= ws[i].pos) out.lists.resize(ws[i].pos + 1);
      out.lists[ws[i].pos].push_back(i);
      out.narrow |= ws[i].narrow;
    }
    if (!out.narrow) return true;
    std::vector<uint32_t> host;  // indices of the host's 64-bit writes, in host order
    for (uint32_t i = 0; i < ws.size(); ++i)
      if (!ws[i].narrow && ws[i].event.host) host.push_back(i);
    std::sort(host.begin(), host.end(), [&](uint32_t a, uint32_t b) { return ws[a].event.id < ws[b].event.id; });
    for (uint32_t i : host) out.host_ids.push_back(ws[i].event.id);
    // The host's writes that ran are a prefix of its order, and each knows what the ones before it know.
    size_t ran = size_t(std::partition_point(host.begin(), host.end(), [&](uint32_t i) { return ws[i].processed; }) - host.begin());
    out.hidden_at.assign(ws.size(), int(host.size()));
    for (uint32_t k = 0; k < host.size(); ++k) out.hidden_at[host[k]] = int(k) + 1;
    for (uint32_t i = 0; i < ws.size(); ++i) {
      if (ws[i].narrow) continue;
      out.wide.push_back(i);
      if (!ws[i].processed) out.unrun_wide.push_back(i);
      if (ws[i].event.host || !ws[i].processed) continue;
      auto k = std::partition_point(host.begin(), host.begin() + ptrdiff_t(ran),
                                    [&](uint32_t h) { return !e_.known(*ws[h].end, ws[i].event); });
      out.hidden_at[i] = int(k - host.begin());
    }
    std::sort(out.wide.begin(), out.wide.end(), [&](uint32_t a, uint32_t b) { return out.hidden_at[a] > out.hidden_at[b]; });
    out.ell_own.assign(ws.size(), -1);
    for (uint32_t i = 0; i < ws.size(); ++i)
      if (ws[i].narrow) out.ell_own[i] = last_host_before(out, submit_of(ws[i].event));
    return true;
  }
  // The place of the host's last 64-bit write before statement `bound` (-1: none).
  static int last_host_before(const Writers& ws, uint32_t bound) {
    return int(std::partition_point(ws.host_ids.begin(), ws.host_ids.end(), [&](uint32_t id) { return id < bound; }) -
               ws.host_ids.begin()) - 1;
  }
  // base and high of every `ell` in `halves`, for wait `w`.
  void high_halves(const Writers& wr, const std::vector<SignalWrite>& ws, const Node& w, uint64_t initial,
                   std::map<int, HalfBound>& halves) const {
    uint64_t base = 0, high = 0;
    size_t k = 0;
    for (auto h = halves.rbegin(); h != halves.rend(); ++h) {
      for (; k < wr.wide.size() && wr.hidden_at[wr.wide[k]] > h->first; ++k) {
        const SignalWrite& x = ws[wr.wide[k]];
        if (after(w, x.event)) continue;
        high = std::max(high, x.value & ~kLowHalf);
        if (x.processed) base = std::max(base, x.value & ~kLowHalf);
      }
      h->second.base = base, h->second.high = high;
      if (h->first < 0) h->second.base = std::max(base, initial), h->second.high = std::max(high, initial);
    }
  }

  bool needs() {
    // Each wait looks at every writer of its signal: refuse at once where that is past the budget.
    std::map<uint32_t, uint64_t> writers_of;
    uint64_t looks = 0;
    for (const Node& w : nodes_) {
      uint32_t s = wait_cond(t_, w.wait).signal;
      auto [it, fresh] = writers_of.try_emplace(s, 0);
      if (fresh)
        for (const SignalWrite& x : e_.writes(s)) it->second = std::max<uint64_t>(it->second, x.pos + 1);
      looks += it->second;
    }
    if (!spend(looks)) return false;
    out_.assign(nodes_.size(), {});
    std::map<uint32_t, Writers> writers;
    for (size_t n = 0; n < nodes_.size(); ++n) {
      const Node& w = nodes_[n];
      auto edge = [&](uint32_t agent, size_t i) { out_[n].push_back(int(at_[agent][i])); };
      behind(w.wait, edge);
      const WaitCond cond = wait_cond(t_, w.wait);
      const auto& ws = e_.writes(cond.signal);
      auto [it, fresh] = writers.try_emplace(cond.signal);
      if (fresh && !index_writers(ws, it->second)) return false;
      const Writers& wr = it->second;  // (a lambda cannot name a structured binding in clang 14)
      // A 32-bit write keeps the word's high half: that of a 64-bit write that does not come after
      // the wait and that no 64-bit write landing first (before the 32-bit write or before the wait
      // starts) follows; or the initial value's where none lands first. Of the writes that land
      // first, the host's last one before the wait's submit or the 32-bit write's hides what it
      // follows: `ell` is its place among the host's 64-bit writes of the signal (-1: none).
      std::map<int, HalfBound> halves;  // per `ell` in use
      const int ell_wait = wr.narrow ? last_host_before(wr, w.submit) : -1;
      auto ell_of = [&](uint32_t i) { return std::max(ell_wait, wr.ell_own[i]); };  // of 32-bit write i
      // The host's writes are not the only ones that land first: a 64-bit write of the wait's own
      // queue, or of one the fixed point orders before the wait, hides a lender too. The run with
      // every stuck wait released runs every write and asks the wait rule itself; it knows no order
      // this one does not, so a 32-bit write that is no candidate there is none here. (It lists an
      // ordered writer's first candidates only: the writer's later writes stay in question.)
      std::unordered_set<uint64_t> taken;         // its candidates there
      std::unordered_map<uint32_t, uint32_t> from;  // per ordered writer: the place of its first one
      bool asked = false;
      auto may_take = [&](const SignalWrite& x) {
        if (!x.narrow || !asked || taken.count(x.event.key())) return true;
        auto it = from.find(x.pos);
        return it != from.end() && it->second <= place_of(x.event);
      };
      if (wr.narrow && !cond.narrow()) {
        if (!spend(4 * ws.size())) return false;
        if (const WaitResolution* r = all_released().released_resolution(w.wait)) {
          asked = true;
          if (!spend(r->count())) return false;
          for (size_t k = 0; k < r->count(); ++k) {
            const SignalWrite& c = released_->writes(cond.signal)[r->candidate(k)];
            taken.insert(c.event.key());
            if (ordered_writer(t_, c.agent)) {
              auto [it, fresh] = from.try_emplace(c.pos, place_of(c.event));
              if (!fresh) it->second = std::min(it->second, place_of(c.event));
            }
          }
        }
        for (uint32_t i = 0; i < ws.size(); ++i)
          if (ws[i].narrow) halves.try_emplace(ell_of(i));
        high_halves(wr, ws, w, e_.initial_value(cond.signal) & ~kLowHalf, halves);
        for (uint32_t i = 0; i < ws.size(); ++i) {  // the largest low half of a 32-bit write that does not meet it
          const SignalWrite& x = ws[i];
          if (!x.narrow || after(w, x.event) || !may_take(x)) continue;
          HalfBound& h = halves.at(ell_of(i));
          if (!cond.met_by(h.base | (x.value & kLowHalf))) h.lent = true, h.low = std::max(h.low, x.value & kLowHalf);
        }
        // A 64-bit write that has not run lends its high half to a 32-bit write that meets the
        // wait only with it: the wait needs what the lender sits behind too.
        for (const auto& [ell, h] : halves) {
          if (!h.lent) continue;
          if (!spend(wr.unrun_wide.size())) return false;
          for (uint32_t i : wr.unrun_wide) {
            const SignalWrite& x = ws[i];
            if (!after(w, x.event) && wr.hidden_at[i] > ell && cond.met_by((x.value & ~kLowHalf) | h.low))
              behind(x.event, edge);
          }
        }
      }
      // Each other writer's last write that may meet it and does not come after it. (Its own
      // writer's before it sit behind no wait its place does not; after it, they come after it.)
      for (const auto& list : wr.lists) {
        if (list.empty() || ws[list[0]].agent == w.agent) continue;
        size_t end = list.size();
        if (w.wait.host)  // a host wait comes before every batch submitted after it
          end = size_t(std::partition_point(list.begin(), list.end(),
                                            [&](uint32_t i) { return submit_of(ws[i].event) < w.place; }) - list.begin());
        for (size_t k = end; k-- > 0;) {
          if (k + 1 < end && !spend(1)) return false;  // (the first look is paid for above)
          const SignalWrite& x = ws[list[k]];
          if (!may_take(x)) continue;
          if (!cond.met_by(x.narrow && !halves.empty() ? halves.at(ell_of(list[k])).high | (x.value & kLowHalf) : x.value)) continue;
          if (!x.processed) behind(x.event, edge);
          break;
        }
      }
    }
    return true;
  }

  bool knots() {
    comp_.assign(nodes_.size(), 0);
    ncomp_ = boost::strong_components(out_, boost::make_iterator_property_map(comp_.begin(), boost::get(boost::vertex_index, out_)));
    members_.assign(size_t(ncomp_), {});
    for (uint32_t n = 0; n < nodes_.size(); ++n) members_[size_t(comp_[n])].push_back(n);
    const auto& members = members_;
    root_comp_.assign(size_t(ncomp_), false);
    for (int c = 0; c < ncomp_; ++c) {
      // Every knot is asked, but one that holds every stuck wait (nothing outside to release). A
      // knot that needs no other may still end once others are released: a write behind them can
      // run and take a candidate of a wait before it, which then learns less, so that a write
      // it overwrote no longer is (qvet_differential --seed 707952).
      // A single wait is asked from the run with every stuck wait released, itself included. Where
      // that run says it ends and it needs no other knot, it is asked with a run of its own: writes
      // behind it ran in that run, and a wait they released learned less, so that a write its own
      // queue overwrites before it may have stayed its candidate there
      // (corpus/deadlock_candidate_behind_itself.hcq). Past the budget such a knot is a root: it
      // would be counted in no root's message.
      if (members[size_t(c)].size() < nodes_.size()) {
        const auto& m = members[size_t(c)];
        const bool rerun = rerun_work_ < limits::kRootRerunWork + limits::kRootRerunWorkPerRun * e_.work();
        bool stuck = false;
        if (m.size() > 1 && rerun) {
          stuck = stays_stuck(m);
        } else {
          approximated_ |= m.size() > 1;
          if (!stays_stuck(all_released(), m, stuck)) return false;
          if (!stuck && std::all_of(m.begin(), m.end(), [&](uint32_t n) { return needs_none(n); })) {
            if (rerun) stuck = stays_stuck(m);  // (a cycle's knot here is past the budget: no rerun)
            else stuck = approximated_ = true;
          }
        }
        if (!stuck) continue;
      }
      root_comp_[size_t(c)] = true;
      Deadlock d;
      for (uint32_t n : members[size_t(c)]) d.waits.push_back(nodes_[n].wait);
      std::sort(d.waits.begin(), d.waits.end(), [&](EventRef a, EventRef b) { return e_.submit_key(a) < e_.submit_key(b); });
      d.cycle = d.waits.size() > 1;
      roots_.push_back(std::move(d));
    }
    return true;
  }

  // Whether stuck wait `n` needs no wait outside its knot.
  bool needs_none(uint32_t n) const {
    return std::all_of(out_[n].begin(), out_[n].end(), [&](int to) { return comp_[size_t(to)] == comp_[n]; });
  }
  // A run with the stuck waits but `kept` released, through the rounds to the least fixed point
  // as a check runs them (one round's forced waits learn only a lower bound, and a wait may then
  // seem to take a write that the fixed point orders before an overwrite).
  std::unique_ptr<Engine> release_but(const std::vector<uint32_t>& kept) {
    std::vector<bool> keep(nodes_.size(), false);
    for (uint32_t n : kept) keep[n] = true;
    Engine::Overrides o;
    for (uint32_t n = 0; n < nodes_.size(); ++n)
      if (!keep[n]) o[nodes_[n].wait.key()] = {Clock(&t_), true, true};
    // The rounds to the least fixed point, as check_trace runs them.
    uint64_t work = 0;
    for (int round = 1;; ++round) {
      auto e = std::make_unique<Engine>(t_, std::move(o));
      EngineObserver none;
      e->run(none);
      bool changed = false;
      o = e->refine(changed);
      work += e->work();
      rerun_work_ += e->work();
      if (!changed || (round >= 2 && work >= limits::kRoundWork)) return e;
    }
  }
  // The run with every stuck wait released: what each could take.
  const Engine& all_released() {
    if (!released_) released_ = release_but({});
    return *released_;
  }
  // A cycle's knot, asked as semantics.md says: some wait of it never ends in the run with every
  // stuck wait outside it released. (Its waits that end learn what the wait rule gives them,
  // which the run with all released does not tell.)
  bool stays_stuck(const std::vector<uint32_t>& members) {
    auto e = release_but(members);
    return std::any_of(members.begin(), members.end(), [&](uint32_t n) { return !e->ran(nodes_[n].wait); });
  }

  // Whether some wait of the knot `members` never ends, its waits outside released: a wait ends
  // once the knot's waits before it (on its queue, or the host's before its submit) have ended,
  // and those before one of its candidates (or the initial value is one).
  bool stays_stuck(const Engine& released, const std::vector<uint32_t>& members, bool& stuck) {
    std::vector<bool> ended(members.size(), false);
    std::map<uint32_t, uint32_t> low;  // per agent: the first place of a member not ended
    for (bool changed = true; changed;) {
      changed = false;
      low.clear();
      for (size_t i = 0; i < members.size(); ++i)
        if (!ended[i]) {
          const Node& m = nodes_[members[i]];
          auto [it, fresh] = low.try_emplace(m.agent, m.place);
          if (!fresh) it->second = std::min(it->second, m.place);
        }
      auto free_from = [&](uint32_t agent, uint32_t place) {  // no member not ended comes before it
        auto it = low.find(agent);
        return it == low.end() || it->second >= place;
      };
      auto can_run = [&](EventRef x) {
        return e_.ran(x) || (free_from(agent_of(x), place_of(x)) && (x.host || free_from(nq_, t_.cmds[x.id].submit)));
      };
      for (size_t i = 0; i < members.size(); ++i) {
        if (ended[i]) continue;
        const Node& m = nodes_[members[i]];
        if (!free_from(m.agent, m.place) || (!m.wait.host && !free_from(nq_, m.submit))) continue;
        const WaitResolution* r = released.released_resolution(m.wait);
        bool takes = r && r->initial_candidate;
        for (size_t k = 0; r && !takes && k < r->count(); ++k) {
          if (!spend(1)) return false;
          takes = can_run(released.writes(r->cond.signal)[r->candidate(k)].event);
        }
        if (takes) ended[i] = changed = true;
      }
      if (!spend(members.size())) return false;
    }
    stuck = std::find(ended.begin(), ended.end(), false) != ended.end();
    return true;
  }

  // Blocked waits, commands and host statements that never run: each in the first-submitted
  // root it needs, directly or through blocked waits. Components come sinks first, so what a
  // knot needs is settled before it; a prefix minimum per agent gives the first root among
  // the waits an event sits behind.
  bool attribute() {
    std::vector<PrefixMin> best;
    for (const auto& v : at_) best.emplace_back(v.size());
    std::vector<uint64_t> key(size_t(ncomp_), kNoKey);
    std::map<uint64_t, size_t> root_of_key;
    for (size_t r = 0; r < roots_.size(); ++r) {
      uint64_t k = e_.submit_key(roots_[r].waits.front());
      root_of_key[k] = r;
    }
    const auto& members = members_;
    for (int c = 0; c < ncomp_; ++c) {
      uint64_t k = kNoKey;
      if (root_comp_[size_t(c)]) {
        for (uint32_t n : members[size_t(c)]) k = std::min(k, e_.submit_key(nodes_[n].wait));
      } else {
        for (uint32_t n : members[size_t(c)])
          for (int to : out_[n])
            if (comp_[size_t(to)] != c) {
              const Node& v = nodes_[size_t(to)];
              k = std::min(k, best[v.agent].upto(at_index_[size_t(to)]));
            }
        if (!spend(members[size_t(c)].size())) return false;
      }
      key[size_t(c)] = k;
      for (uint32_t n : members[size_t(c)]) best[nodes_[n].agent].lower(at_index_[n], k);
    }
    auto count = [&](uint64_t k, bool host, bool wait) {
      auto it = root_of_key.find(k);
      if (it == root_of_key.end()) return;
      Deadlock& d = roots_[it->second];
      ++(host ? d.blocked_host : d.blocked_cmds);
      d.blocked_waits += wait;
    };
    auto first_root = [&](EventRef x) {
      uint64_t k = kNoKey;
      behind(x, [&](uint32_t agent, size_t i) { k = std::min(k, best[agent].upto(i)); });
      return k;
    };
    std::vector<int> node_of_cmd(t_.cmds.size(), -1), node_of_host(t_.host.size(), -1);
    for (uint32_t n = 0; n < nodes_.size(); ++n) (nodes_[n].wait.host ? node_of_host : node_of_cmd)[nodes_[n].wait.id] = int(n);
    auto settle = [&](EventRef x, int n) {
      if (n >= 0 && root_comp_[size_t(comp_[size_t(n)])]) return;  // a root's own wait
      count(n >= 0 ? key[size_t(comp_[size_t(n)])] : first_root(x), x.host, n >= 0);
    };
    for (uint32_t id = 0; id < t_.cmds.size(); ++id)
      if (!e_.ran({false, id})) settle({false, id}, node_of_cmd[id]);
    for (uint32_t h = 0; h < t_.host.size(); ++h)
      if (!e_.ran({true, h})) settle({true, h}, node_of_host[h]);
    return spend(t_.cmds.size() + t_.host.size());
  }
};

}  // namespace

DeadlockRoots deadlock_roots(const Engine& e) { return Roots(e).run(); }

}  // namespace qvet
