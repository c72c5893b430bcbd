#include "tests/oracle/oracle.h"

#include <algorithm>
#include <map>
#include <set>

#include "model/profile.h"

namespace qvet::oracle {

namespace {

// A set of nodes as a bitset.
struct Bits {
  std::vector<uint64_t> w;
  explicit Bits(size_t n = 0) : w((n + 63) / 64, 0) {}
  bool get(size_t i) const { return (w[i / 64] >> (i % 64)) & 1; }
  void set(size_t i) { w[i / 64] |= uint64_t(1) << (i % 64); }
  void operator|=(const Bits& o) {
    for (size_t i = 0; i < w.size(); ++i) w[i] |= o.w[i];
  }
  void operator&=(const Bits& o) {
    for (size_t i = 0; i < w.size(); ++i) w[i] &= o.w[i];
  }
  friend bool operator==(const Bits&, const Bits&) = default;
};

constexpr uint32_t kHostQueue = UINT32_MAX;  // the host counts as one queue when grouping

// An event: a device command (two nodes) or a host statement (one node).
struct Ev {
  bool host;
  uint32_t id;
};

struct Write {  // a signal write
  Ev ev;
  uint32_t signal;
  uint64_t raw;  // the value as written, masked to the width
  bool narrow;   // 32-bit: keeps the word's high half
  uint64_t word = 0;  // the word after the write (computed from happens-before)
};

struct WaitInfo {
  Ev ev;
  uint32_t signal;
  uint64_t v, mask;
  bool fits = true;  // the threshold fits the wait's width (else value-width, and no note)
};

struct Raw {  // one finding before grouping and merging
  std::string rule;
  Ev primary;
  Ev related;
  bool has_related;
  uint32_t decl_line = 0;  // peer-access: the related location is a declaration, not an event
};

class Oracle {
 public:
  explicit Oracle(const Trace& t) : t_(t), p_(*t.program), nc_(t.cmds.size()), n_(2 * (nc_ + t.host.size())) {}

  std::vector<Finding> run() {
    collect();
    fixed_point();
    deadlock_roots();
    rules();
    return group_and_merge();
  }

 private:
  const Trace& t_;
  const Program& p_;
  size_t nc_, n_;
  std::vector<Bits> base_;       // direct predecessors from the queue, host and submit rules
  std::vector<Bits> reach_;      // reach_[y]: every x with x ->+ y
  std::vector<bool> dead_cmd_, dead_host_;
  std::vector<Write> writes_;
  std::vector<WaitInfo> waits_;
  std::vector<Bits> wait_pred_;  // per wait: the nodes its end is ordered after
  struct Resolution {
    std::vector<size_t> cands;  // indices into writes_
    // Per candidate: the 64-bit writes one of which must land first for its word to meet the wait
    // (a 32-bit write's high half), or none where it meets without.
    std::vector<std::vector<size_t>> lenders;
    bool initial = false;
  };
  std::vector<Resolution> res_;
  std::vector<Raw> raw_;
  std::vector<bool> released_;   // per wait: treated as ended, learning nothing (a root test's outside)

  // Two nodes per event; a host statement's start and end are one instant, but a host wait's end
  // learns what its start did not know.
  size_t S(const Ev& e) const { return 2 * (e.host ? nc_ + e.id : e.id); }
  size_t E(const Ev& e) const { return S(e) + 1; }
  bool hb(size_t x, size_t y) const { return reach_[y].get(x); }
  bool dead(const Ev& e) const { return e.host ? dead_host_[e.id] : dead_cmd_[e.id]; }
  uint32_t line(const Ev& e) const { return e.host ? t_.host[e.id].loc.line : t_.cmds[e.id].loc.line; }
  static uint64_t key(const Ev& e) { return uint64_t(e.host) << 40 | e.id; }
  uint64_t submit_key(const Ev& e) const {
    if (e.host) return uint64_t(e.id) << 32;
    const TraceCmd& c = t_.cmds[e.id];
    return uint64_t(c.submit) << 32 | (e.id - t_.host[c.submit].cmd_begin + 1);
  }
  uint32_t queue_of(const Ev& e) const { return e.host ? kHostQueue : t_.cmds[e.id].queue; }
  uint64_t queue_order(const Ev& e) const { return e.host ? e.id : t_.cmds[e.id].index; }
  uint32_t agent(const Ev& e) const { return e.host ? kHostAgent : p_.queues[t_.cmds[e.id].queue].device; }
  void edge(size_t from, size_t to) { base_[to].set(from); }

  // The queue rules of semantics.md, "Order inside a queue", as edges.
  void collect() {
    base_.assign(n_, Bits(n_));
    dead_cmd_.assign(nc_, false);
    dead_host_.assign(t_.host.size(), false);
    for (size_t x = 0; x < n_; x += 2) edge(x, x + 1);
    for (uint32_t h = 0; h < t_.host.size(); ++h) {
      if (h > 0) edge(E({true, h - 1}), S({true, h}));
      for (uint32_t c = t_.host[h].cmd_begin; c < t_.host[h].cmd_end; ++c) edge(E({true, h}), 2 * c);
    }
    for (uint32_t q = 0; q < p_.queues.size(); ++q) {
      Mode m = queue_mode(p_, q);
      const auto& list = t_.queue_cmds[q];
      long chain = -1;       // chained: the exec the next exec or release follows
      std::vector<uint32_t> chain_releases;  // ... and its releases, which end with it
      int releases = 0;      // chained: releases that exec can still carry
      long blocker = -1;     // the latest command that blocks the front end until it ends
      for (size_t i = 0; i < list.size(); ++i) {
        uint32_t id = list[i];
        const TraceCmd& c = t_.cmds[id];
        if (i > 0 && t_.cmds[list[i - 1]].submit != c.submit) {
          // v3: each batch is a new queue object; its first exec has no earlier QMD to chain to.
          chain = -1;
          releases = 0;
          chain_releases.clear();
        }
        if (i > 0) edge(2 * list[i - 1], 2 * id);
        if (m == Mode::Serial && i > 0) edge(2 * list[i - 1] + 1, 2 * id);
        if (blocker >= 0) edge(2 * size_t(blocker) + 1, 2 * id);
        auto after_all_earlier = [&] {
          for (size_t j = 0; j < i; ++j) edge(2 * list[j] + 1, 2 * id + 1);
        };
        bool blocks = m == Mode::Serial;
        switch (c.op) {
          case CmdOp::Wait: blocks = true; break;
          case CmdOp::Barrier: after_all_earlier(); blocks = true; break;
          case CmdOp::MemoryBarrier: blocks = true; break;
          case CmdOp::Signal:
          case CmdOp::Timestamp:
            if (m == Mode::Chained && chain >= 0 && releases > 0) {
              edge(2 * size_t(chain) + 1, 2 * id + 1);  // the exec's release: ends with the exec
              chain_releases.push_back(id);
              --releases;
            } else {
              after_all_earlier();
              releases = 0;
              if (m == Mode::Chained) blocks = true;  // a WFI release
            }
            break;
          case CmdOp::Exec:
            if (m == Mode::Chained && chain >= 0) {
              // The release ends with its exec, so the chain goes on through it too.
              edge(2 * size_t(chain) + 1, 2 * id);
              for (uint32_t r : chain_releases) edge(2 * r + 1, 2 * id);
            }
            break;
          case CmdOp::Copy: break;
        }
        if (c.op == CmdOp::Exec) {
          chain = id;
          releases = 2;
          chain_releases.clear();
        } else if (c.op != CmdOp::Signal && c.op != CmdOp::Timestamp) {
          chain = -1;
          releases = 0;
          chain_releases.clear();
        }
        if (blocks) blocker = id;
      }
    }
    for (uint32_t c = 0; c < nc_; ++c) {
      const TraceCmd& tc = t_.cmds[c];
      if (tc.op == CmdOp::Signal)
        writes_.push_back({{false, c}, tc.signal, uint64_t(tc.value) & width_mask(signal_width(p_, tc.queue)),
                           signal_width(p_, tc.queue) < 64});
      if (tc.op == CmdOp::Wait) {
        int width = wait_width(p_, tc.queue);
        uint64_t m = width_mask(width);
        waits_.push_back({{false, c}, tc.signal, uint64_t(tc.value) & m, m, tc.value >= 0 && tc.value < (i128(1) << width)});
      }
    }
    for (uint32_t h = 0; h < t_.host.size(); ++h) {
      const HostEvent& e = t_.host[h];
      if (e.op == HostOp::Signal) writes_.push_back({{true, h}, e.signal, uint64_t(e.value), false});
      if (e.op == HostOp::Wait) waits_.push_back({{true, h}, e.signal, uint64_t(e.value), ~uint64_t(0), e.value >= 0 && e.value <= kU64Max});
    }
    released_.resize(waits_.size(), false);
  }

  void closure() {
    reach_ = base_;
    for (size_t i = 0; i < waits_.size(); ++i) reach_[E(waits_[i].ev)] |= wait_pred_[i];
    for (size_t k = 0; k < n_; ++k)
      for (size_t y = 0; y < n_; ++y)
        if (reach_[y].get(k)) reach_[y] |= reach_[k];
  }

  // One word per write, for signal-race (as its message gives it) and for telling a cycle's waits:
  // a 32-bit write keeps the high half of the latest write ordered before it (the largest, if
  // several are latest), else of the initial value. A wait's candidates read every word a 32-bit
  // write may leave where the wait sees it (may_meet).
  void compute_words() {
    std::vector<size_t> order(writes_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    // Predecessors first: count of writes of the same signal ordered before each.
    std::vector<size_t> before(writes_.size(), 0);
    for (size_t i = 0; i < writes_.size(); ++i)
      for (size_t j = 0; j < writes_.size(); ++j)
        if (i != j && writes_[i].signal == writes_[j].signal && hb(E(writes_[j].ev), E(writes_[i].ev))) ++before[i];
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return before[a] < before[b]; });
    for (size_t i : order) {
      Write& w = writes_[i];
      if (!w.narrow) {
        w.word = w.raw;
        continue;
      }
      uint64_t prev = init(w.signal);
      bool found = false;
      for (size_t j = 0; j < writes_.size(); ++j) {
        const Write& d = writes_[j];
        if (j == i || d.signal != w.signal || !hb(E(d.ev), E(w.ev))) continue;
        bool latest = true;
        for (size_t k = 0; k < writes_.size() && latest; ++k)
          if (k != j && k != i && writes_[k].signal == w.signal && hb(E(d.ev), E(writes_[k].ev)) && hb(E(writes_[k].ev), E(w.ev)))
            latest = false;
        if (latest && (!found || d.word > prev)) prev = d.word, found = true;
      }
      w.word = (prev & ~uint64_t(0xffffffffu)) | (w.raw & 0xffffffffu);
    }
  }
  uint64_t init(uint32_t s) const { return uint64_t(evaluate(p_.signals[s].init, t_.binding)); }

  // Whether write `c` can leave a word that meets wait W where W sees it. A 64-bit write leaves its
  // value. A 32-bit write keeps the high half of the word it lands on, which is that of the last
  // 64-bit write (or the initial value) to land before it; where W sees it, every write that
  // happens before W starts has landed before it too (else that write overwrote it). So the high
  // halves it may keep are those of the 64-bit writes p that may land before it (not after it, nor
  // after W ends) with no 64-bit write in between that must land before it: one ordered after p and
  // before c or before W's start, and not after c. The initial value's, if there is no such write.
  // `lenders`: the 64-bit writes whose high half makes it meet W (one must land before it); none
  // where the initial value's does, or it is a 64-bit write.
  // `with_dead`: as if the writes that never run ran too (what a write that never runs would have left).
  bool may_meet(size_t c, const WaitInfo& W, std::vector<size_t>* lenders = nullptr, bool with_dead = false) const {
    const Write& w = writes_[c];
    if (!w.narrow || W.mask != ~uint64_t(0)) return (w.raw & W.mask) >= W.v;  // a 32-bit wait reads only the low half
    auto lands_before = [&](size_t q) {
      const Write& o = writes_[q];
      return q != c && o.signal == w.signal && !o.narrow && (with_dead || !dead(o.ev)) && !hb(E(w.ev), E(o.ev)) &&
             (hb(E(o.ev), E(w.ev)) || hb(E(o.ev), S(W.ev)));
    };
    auto meets = [&](uint64_t word) { return ((word & ~uint64_t(0xffffffffu)) | (w.raw & 0xffffffffu)) >= W.v; };
    bool any_forced = false;
    for (size_t q = 0; q < writes_.size() && !any_forced; ++q) any_forced = lands_before(q);
    if (!any_forced && meets(init(w.signal))) return true;
    bool any = false;
    for (size_t p = 0; p < writes_.size(); ++p) {
      const Write& o = writes_[p];
      if (p == c || o.signal != w.signal || o.narrow || (!with_dead && dead(o.ev)) || hb(E(w.ev), E(o.ev)) || hb(E(W.ev), E(o.ev)) || !meets(o.raw))
        continue;
      bool hidden = false;
      for (size_t q = 0; q < writes_.size() && !hidden; ++q) hidden = q != p && lands_before(q) && hb(E(o.ev), E(writes_[q].ev));
      if (!hidden && !lenders) return true;
      if (!hidden) lenders->push_back(p), any = true;
    }
    return any;
  }

  // semantics.md, "Signals and waits": the candidates of wait `i` under the current relation.
  // `with_dead`: among every write, also those that never run (what a stuck wait needs).
  Resolution candidates(size_t i, bool with_dead = false) const {
    const WaitInfo& W = waits_[i];
    Resolution r;
    if (released_[i]) return r.initial = true, r;
    bool any_before = false;
    for (size_t c = 0; c < writes_.size(); ++c) {
      const Write& w = writes_[c];
      if (w.signal != W.signal || (!with_dead && dead(w.ev))) continue;
      if (hb(E(w.ev), S(W.ev))) any_before = true;
      std::vector<size_t> lenders;
      if (hb(E(W.ev), E(w.ev)) || E(W.ev) == E(w.ev) || !may_meet(c, W, &lenders, with_dead)) continue;
      bool overwritten = false;
      for (size_t d = 0; d < writes_.size() && !overwritten; ++d) {
        const Write& o = writes_[d];
        overwritten = d != c && o.signal == W.signal && (with_dead || !dead(o.ev)) && hb(E(w.ev), E(o.ev)) &&
                      hb(E(o.ev), S(W.ev)) && !may_meet(d, W, nullptr, with_dead);
      }
      if (!overwritten) r.cands.push_back(c), r.lenders.push_back(std::move(lenders));
    }
    r.initial = (init(W.signal) & W.mask) >= W.v && !any_before;
    return r;
  }

  void kill_queue_from(uint32_t cmd) {
    const TraceCmd& c = t_.cmds[cmd];
    for (size_t k = c.index; k < t_.queue_cmds[c.queue].size(); ++k) dead_cmd_[t_.queue_cmds[c.queue][k]] = true;
  }
  void kill(const Ev& w) {
    if (!w.host) return kill_queue_from(w.id);
    for (uint32_t h = w.id; h < t_.host.size(); ++h) {
      dead_host_[h] = true;
      for (uint32_t c = t_.host[h].cmd_begin; c < t_.host[h].cmd_end; ++c) dead_cmd_[c] = true;
    }
  }
  void report_deadlock(std::vector<Ev> ws) {
    std::sort(ws.begin(), ws.end(), [&](const Ev& a, const Ev& b) { return submit_key(a) < submit_key(b); });
    if (ws.size() == 1) raw_.push_back({"deadlock", ws[0], {}, false});
    else raw_.push_back({"deadlock", ws.back(), ws.front(), true});
  }

  // The least fixed point: from no wait ordering, add what every wait gains until nothing
  // changes. Waits with no candidate, or whose ends lie on a cycle, never end; once the relation
  // is stable, the first of them in submission order is killed with all it blocks, and the
  // iteration starts again (a wait that an earlier deadlock keeps from running, or whose writes
  // it kills, is not a deadlock of its own).
  void fixed_point() {
    while (true) {
      wait_pred_.assign(waits_.size(), Bits(n_));
      std::vector<std::vector<size_t>> groups;  // deadlocked waits: one wait, or a cycle's waits
      std::vector<bool> stuck(waits_.size(), false);
      while (true) {
        closure();
        bool changed = false;
        for (size_t i = 0; i < waits_.size(); ++i) {
          size_t ei = E(waits_[i].ev);
          if (stuck[i] || dead(waits_[i].ev) || !hb(ei, ei)) continue;
          std::vector<size_t> group;
          for (size_t j = i; j < waits_.size(); ++j) {
            size_t ej = E(waits_[j].ev);
            if (!stuck[j] && !dead(waits_[j].ev) && (j == i || (hb(ei, ej) && hb(ej, ei)))) stuck[j] = true, group.push_back(j);
          }
          groups.push_back(group);
          changed = true;
        }
        compute_words();
        res_.assign(waits_.size(), {});
        std::vector<Bits> next = wait_pred_;
        for (size_t i = 0; i < waits_.size(); ++i) {
          if (dead(waits_[i].ev) || stuck[i]) continue;
          res_[i] = candidates(i);
          if (res_[i].cands.empty() && !res_[i].initial) {
            stuck[i] = true;
            groups.push_back(cycle_of(i, stuck));
            changed = true;
            continue;
          }
          next[i] = Bits(n_);
          bool first = true;
          for (size_t k = 0; k < res_[i].cands.size(); ++k) {
            if (res_[i].initial) break;
            auto upto = [&](size_t x) {  // the write's end and what happens before it
              Bits b = reach_[E(writes_[x].ev)];
              b.set(E(writes_[x].ev));
              return b;
            };
            Bits b = upto(res_[i].cands[k]);
            // A 32-bit write meets the wait only after one of its lenders landed: what all of them follow.
            const auto& lenders = res_[i].lenders[k];
            if (!lenders.empty()) {
              Bits lent = upto(lenders[0]);
              for (size_t j = 1; j < lenders.size(); ++j) lent &= upto(lenders[j]);
              b |= lent;
            }
            if (first) next[i] = b, first = false;
            else next[i] &= b;
          }
        }
        if (!changed && next == wait_pred_) break;
        wait_pred_ = std::move(next);
      }
      for (auto& g : stuck_cycles(stuck)) groups.push_back(g);
      if (groups.empty()) return;
      auto first_key = [&](const std::vector<size_t>& g) {
        uint64_t k = UINT64_MAX;
        for (size_t i : g) k = std::min(k, submit_key(waits_[i].ev));
        return k;
      };
      std::sort(groups.begin(), groups.end(), [&](auto& a, auto& b) { return first_key(a) < first_key(b); });
      // A deadlocked wait may itself never start: a wait before it may never end because of
      // another deadlock. A group goes first only if all its waits can start: it is a root,
      // whatever the others turn out to be.
      std::vector<char> can = runnable();
      auto held = [&](const std::vector<size_t>& g) {
        return std::any_of(g.begin(), g.end(), [&](size_t i) { return !can[S(waits_[i].ev)]; });
      };
      std::stable_partition(groups.begin(), groups.end(), [&](auto& g) { return !held(g); });
      for (auto& g : groups) {
        // A member that another member keeps from running (later on its queue, or submitted after
        // a host wait of the group) never starts; the group dies with the waits that block.
        bool live = std::any_of(g.begin(), g.end(), [&](size_t i) { return !dead(waits_[i].ev); });
        if (!live) continue;
        for (size_t i : g) kill(waits_[i].ev);
        break;  // the first one only: what it kills may block the others, which the next pass sees
      }
    }
  }

  // semantics.md, "Which stuck waits are reported" (v3). The stuck waits are those fixed_point
  // killed: they never end. W needs V when what W's queue or the host must pass to reach W, or a
  // candidate of W (among every write, also those that never run), sits behind V: V's end comes
  // before it. Knots are the strongly connected components of "needs"; a knot is a root when some
  // wait of it still never ends with every stuck wait outside it released, which is asked by
  // running the whole fixed point again on the same trace. Each root is one deadlock.
  void deadlock_roots() {
    std::vector<size_t> st;
    for (size_t i = 0; i < waits_.size(); ++i)
      if (dead(waits_[i].ev)) st.push_back(i);
    const size_t k = st.size();
    std::vector<std::vector<bool>> path(k, std::vector<bool>(k, false));  // path[a][b]: st[a] needs st[b], maybe through others
    for (size_t a = 0; a < k; ++a) {
      const Ev& w = waits_[st[a]].ev;
      Resolution r = candidates(st[a], true);
      for (size_t b = 0; b < k; ++b) {
        const size_t ev = E(waits_[st[b]].ev);
        auto behind = [&](size_t x) { return hb(ev, E(writes_[x].ev)); };
        bool needs = hb(ev, S(w));
        for (size_t c = 0; c < r.cands.size() && !needs; ++c) {
          const auto& lenders = r.lenders[c];
          needs = behind(r.cands[c]) || (!lenders.empty() && std::all_of(lenders.begin(), lenders.end(), behind));
        }
        path[a][b] = needs;
      }
    }
    for (size_t m = 0; m < k; ++m)
      for (size_t a = 0; a < k; ++a)
        for (size_t b = 0; b < k; ++b)
          if (path[a][m] && path[m][b]) path[a][b] = true;
    std::vector<bool> taken(k, false);
    for (size_t a = 0; a < k; ++a) {
      if (taken[a]) continue;
      std::vector<size_t> knot;
      for (size_t b = 0; b < k; ++b)
        if (b == a || (path[a][b] && path[b][a])) taken[b] = true, knot.push_back(st[b]);
      Oracle outside(t_);
      outside.released_.assign(waits_.size(), false);
      for (size_t i : st) outside.released_[i] = std::find(knot.begin(), knot.end(), i) == knot.end();
      outside.collect();
      outside.fixed_point();
      if (std::none_of(knot.begin(), knot.end(), [&](size_t i) { return outside.dead(waits_[i].ev); })) continue;
      std::vector<Ev> ws;
      for (size_t i : knot) ws.push_back(waits_[i].ev);
      report_deadlock(ws);
    }
  }
  // Waits that no run can release although each has candidates: every candidate lies behind
  // another such wait (three waits, each released by a write behind one of the other two, never
  // move; the intersection of the wait rule alone does not see it). Which events can happen is a
  // least fixed point of its own, from nothing: an event can happen once its predecessors can, a
  // wait once one of its candidates can. The waits that can start but never end are the heads;
  // each sink component of "a candidate of W lies behind head W2" among them is one cycle.
  std::vector<char> runnable() const {
    std::vector<int> wait_of_end(n_, -1);
    for (size_t i = 0; i < waits_.size(); ++i) wait_of_end[E(waits_[i].ev)] = int(i);
    auto node_dead = [&](size_t x) { return x / 2 < nc_ ? dead_cmd_[x / 2] : dead_host_[x / 2 - nc_]; };
    std::vector<char> can(n_, 0);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t x = 0; x < n_; ++x) {
        if (can[x] || node_dead(x)) continue;
        bool ok = true;
        for (size_t y = 0; y < n_ && ok; ++y) ok = !base_[x].get(y) || can[y];
        int w = wait_of_end[x];
        if (ok && w >= 0 && !res_[size_t(w)].initial) {
          const Resolution& r = res_[size_t(w)];
          ok = false;
          for (size_t k = 0; k < r.cands.size() && !ok; ++k)
            ok = can[E(writes_[r.cands[k]].ev)] &&
                 (r.lenders[k].empty() || std::any_of(r.lenders[k].begin(), r.lenders[k].end(), [&](size_t p) { return can[E(writes_[p].ev)] != 0; }));
        }
        if (ok) can[x] = 1, grew = true;
      }
    }
    return can;
  }
  std::vector<std::vector<size_t>> stuck_cycles(std::vector<bool>& stuck) const {
    std::vector<char> can = runnable();
    std::vector<size_t> heads;
    for (size_t i = 0; i < waits_.size(); ++i)
      if (!dead(waits_[i].ev) && !stuck[i] && can[S(waits_[i].ev)] && !can[E(waits_[i].ev)]) heads.push_back(i);
    size_t h = heads.size();
    std::vector<std::vector<bool>> path(h, std::vector<bool>(h, false));  // path[a][b]: a waits, through its candidates, on b
    for (size_t a = 0; a < h; ++a)
      for (size_t b = 0; b < h; ++b)
        for (size_t k = 0; k < res_[heads[a]].cands.size(); ++k) {
          // A candidate behind b, or whose word meets the wait only with a high half written behind b.
          const size_t eb = E(waits_[heads[b]].ev);
          const auto& lenders = res_[heads[a]].lenders[k];
          if (hb(eb, E(writes_[res_[heads[a]].cands[k]].ev)) ||
              (!lenders.empty() && std::all_of(lenders.begin(), lenders.end(), [&](size_t p) { return hb(eb, E(writes_[p].ev)); })))
            path[a][b] = true;
        }
    for (size_t k = 0; k < h; ++k)
      for (size_t a = 0; a < h; ++a)
        for (size_t b = 0; b < h; ++b)
          if (path[a][k] && path[k][b]) path[a][b] = true;
    std::vector<std::vector<size_t>> out;
    std::vector<bool> taken(h, false);
    for (size_t a = 0; a < h; ++a) {
      if (taken[a] || !path[a][a]) continue;
      std::vector<size_t> comp;
      bool sink = true;
      for (size_t b = 0; b < h; ++b) {
        if (path[a][b] && path[b][a]) comp.push_back(b);
        else if (path[a][b]) sink = false;
      }
      for (size_t b : comp) taken[b] = true;
      if (!sink) continue;
      out.emplace_back();
      for (size_t b : comp) stuck[heads[b]] = true, out.back().push_back(heads[b]);
    }
    return out;
  }
  // A wait with no candidate, and the waits it is caught in a cycle with: those that start
  // without it but end only after it, and before a write that it would have taken (a write it
  // cannot take because that write comes after its own end through them).
  std::vector<size_t> cycle_of(size_t i, std::vector<bool>& stuck) const {
    std::vector<size_t> group{i};
    const WaitInfo& W = waits_[i];
    size_t ew = E(W.ev);
    for (size_t j = 0; j < waits_.size(); ++j) {
      const WaitInfo& O = waits_[j];
      if (j == i || stuck[j] || dead(O.ev) || !hb(ew, E(O.ev)) || hb(ew, S(O.ev))) continue;
      bool takes = std::any_of(writes_.begin(), writes_.end(), [&](const Write& w) {
        return w.signal == W.signal && !dead(w.ev) && (w.word & W.mask) >= W.v && hb(E(O.ev), E(w.ev));
      });
      if (takes) stuck[j] = true, group.push_back(j);
    }
    return group;
  }
  // Whether wait `k` dying keeps event `e` from running.
  bool blocks(const Ev& k, const Ev& e) const {
    uint32_t e_submit = e.host ? e.id : t_.cmds[e.id].submit;
    if (k.host) return e_submit > k.id || (e.host && e.id > k.id);
    return !e.host && t_.cmds[e.id].queue == t_.cmds[k.id].queue && t_.cmds[e.id].index > t_.cmds[k.id].index;
  }
  struct Acc {
    Ev ev;
    const Access* a;
  };
  std::vector<Acc> live_accesses() const {
    std::vector<Acc> out;
    for (uint32_t c = 0; c < nc_; ++c)
      if (!dead_cmd_[c])
        for (uint32_t a = t_.cmds[c].acc_begin; a < t_.cmds[c].acc_end; ++a)
          if (t_.accesses[a].freed_by == kNone) out.push_back({{false, c}, &t_.accesses[a]});
    for (uint32_t h = 0; h < t_.host.size(); ++h)
      if (!dead_host_[h])
        for (uint32_t a = t_.host[h].acc_begin; a < t_.host[h].acc_end; ++a)
          if (t_.accesses[a].freed_by == kNone) out.push_back({{true, h}, &t_.accesses[a]});
    return out;
  }
  bool ordered(const Ev& a, const Ev& b) const { return hb(E(a), S(b)) || hb(E(b), S(a)); }
  void pair(const std::string& rule, const Ev& a, const Ev& b) {
    bool a_later = submit_key(a) > submit_key(b);
    raw_.push_back({rule, a_later ? a : b, a_later ? b : a, true});
  }
  static bool same(const Ev& a, const Ev& b) { return a.host == b.host && a.id == b.id; }

  void rules() {
    std::vector<Acc> acc = live_accesses();
    // race: every pair of conflicting accesses of two events that nothing orders.
    std::set<std::pair<uint64_t, uint64_t>> raced;
    for (size_t i = 0; i < acc.size(); ++i)
      for (size_t j = i + 1; j < acc.size(); ++j) {
        const Acc &x = acc[i], &y = acc[j];
        if (same(x.ev, y.ev) || x.a->buffer != y.a->buffer || !(x.a->write || y.a->write)) continue;
        if (x.a->hi <= y.a->lo || y.a->hi <= x.a->lo || ordered(x.ev, y.ev)) continue;
        uint64_t kx = key(x.ev), ky = key(y.ev);
        if (raced.insert({std::min(kx, ky), std::max(kx, ky)}).second) pair("race", x.ev, y.ev);
      }
    // use-after-free: a live event touching memory that was freed when it was submitted.
    auto uaf = [&](const Ev& e, uint32_t freed_by) {
      if (freed_by != kNone && !dead(e)) raw_.push_back({"use-after-free", e, {true, freed_by}, true});
    };
    for (uint32_t c = 0; c < nc_; ++c) {
      for (uint32_t a = t_.cmds[c].acc_begin; a < t_.cmds[c].acc_end; ++a) uaf({false, c}, t_.accesses[a].freed_by);
      uaf({false, c}, t_.cmds[c].signal_freed_by);
    }
    for (uint32_t h = 0; h < t_.host.size(); ++h) {
      for (uint32_t a = t_.host[h].acc_begin; a < t_.host[h].acc_end; ++a) uaf({true, h}, t_.accesses[a].freed_by);
      uaf({true, h}, t_.host[h].signal_freed_by);
    }
    // free-in-flight: a command of the lifetime whose end is not ordered before the free.
    for (uint32_t h = 0; h < t_.host.size(); ++h) {
      const HostEvent& e = t_.host[h];
      if (e.op != HostOp::Free || dead_host_[h]) continue;
      for (uint32_t c : e.inflight)
        if (!dead_cmd_[c] && !hb(E({false, c}), S({true, h}))) raw_.push_back({"free-in-flight", {true, h}, {false, c}, true});
    }
    // signal-race: two live writes of different values to one signal, unordered.
    for (size_t i = 0; i < writes_.size(); ++i)
      for (size_t j = i + 1; j < writes_.size(); ++j) {
        const Write &a = writes_[i], &b = writes_[j];
        if (a.signal != b.signal || dead(a.ev) || dead(b.ev) || a.word == b.word) continue;
        if (!hb(E(a.ev), E(b.ev)) && !hb(E(b.ev), E(a.ev))) pair("signal-race", a.ev, b.ev);
      }
    lost_wakeups();
    visibility(acc);
    structural();
    waits_notes();
  }

  // lost-wakeup: a wait that runs, and a write of its signal that runs, does not happen after the
  // wait's end, is followed by no other such write, and leaves a word that does not meet it. A
  // 32-bit write landing after every other write of P keeps the high half of the last 64-bit one to
  // land: any 64-bit write of P that no other 64-bit write of P (but d) happens after, or the
  // initial value where there is none.
  void lost_wakeups() {
    for (const WaitInfo& W : waits_) {
      if (dead(W.ev) || !W.fits) continue;
      std::vector<size_t> P;
      for (size_t c = 0; c < writes_.size(); ++c)
        if (writes_[c].signal == W.signal && !dead(writes_[c].ev) && !hb(E(W.ev), E(writes_[c].ev))) P.push_back(c);
      auto leaves_below = [&](size_t d) {
        const Write& x = writes_[d];
        if (!x.narrow) return (x.raw & W.mask) < W.v;
        std::vector<uint64_t> highs;
        for (size_t l : P) {
          if (l == d || writes_[l].narrow) continue;
          bool overwritten = std::any_of(P.begin(), P.end(), [&](size_t y) {
            return y != d && y != l && !writes_[y].narrow && hb(E(writes_[l].ev), E(writes_[y].ev));
          });
          if (!overwritten) highs.push_back(writes_[l].raw & ~uint64_t(0xffffffffu));
        }
        if (highs.empty()) highs.push_back(init(W.signal) & ~uint64_t(0xffffffffu));  // no 64-bit write in P but d
        return std::any_of(highs.begin(), highs.end(), [&](uint64_t h) { return ((h | (x.raw & 0xffffffffu)) & W.mask) < W.v; });
      };
      long last = -1;
      for (size_t d : P) {
        if (!leaves_below(d)) continue;
        bool followed = std::any_of(P.begin(), P.end(), [&](size_t x) { return x != d && hb(E(writes_[d].ev), E(writes_[x].ev)); });
        if (!followed && (last < 0 || submit_key(writes_[d].ev) > submit_key(writes_[size_t(last)].ev))) last = long(d);
      }
      if (last >= 0) raw_.push_back({"lost-wakeup", W.ev, writes_[size_t(last)].ev, true});
    }
  }

  // visibility: for each byte an exec reads on a profile that needs an acquire, the last writes
  // ordered before the read; one by another agent needs a memory_barrier between them.
  void visibility(const std::vector<Acc>& acc) {
    for (const Acc& r : acc) {
      if (r.ev.host || r.a->write || t_.cmds[r.ev.id].op != CmdOp::Exec) continue;
      uint32_t q = t_.cmds[r.ev.id].queue, dev = p_.queues[q].device;
      if (!profile_of(p_.devices[dev].arch).reads_need_acquire) continue;
      std::vector<uint64_t> cuts{r.a->lo, r.a->hi};
      for (const Acc& w : acc)
        if (w.a->write && w.a->buffer == r.a->buffer) cuts.push_back(w.a->lo), cuts.push_back(w.a->hi);
      std::sort(cuts.begin(), cuts.end());
      std::set<uint64_t> flagged;
      for (size_t k = 0; k + 1 < cuts.size(); ++k) {
        uint64_t lo = cuts[k], hi = cuts[k + 1];
        if (lo >= hi || lo < r.a->lo || hi > r.a->hi) continue;
        std::vector<const Acc*> before;
        for (const Acc& w : acc)
          if (w.a->write && w.a->buffer == r.a->buffer && w.a->lo <= lo && hi <= w.a->hi && !same(w.ev, r.ev) &&
              hb(E(w.ev), S(r.ev)))
            before.push_back(&w);
        for (const Acc* w : before) {
          bool last = std::none_of(before.begin(), before.end(), [&](const Acc* o) { return o != w && hb(E(w->ev), S(o->ev)); });
          if (!last || agent(w->ev) == dev) continue;
          bool acquired = false;
          for (uint32_t m : t_.queue_cmds[q])
            if (t_.cmds[m].op == CmdOp::MemoryBarrier && !dead_cmd_[m] && hb(E(w->ev), S({false, m})) && hb(E({false, m}), S(r.ev)))
              acquired = true;
          if (!acquired && flagged.insert(key(w->ev)).second)
            raw_.push_back({"visibility", r.ev, w->ev, true});
        }
      }
    }
  }

  // Whether an nv queue (circular compare) waits on `signal` anywhere in the trace.
  bool circular_signal(uint32_t signal) const {
    for (const TraceCmd& c : t_.cmds)
      if (c.op == CmdOp::Wait && c.signal == signal && circular_waits(p_, c.queue)) return true;
    return false;
  }

  // Rules that do not depend on ordering: they apply to every command, also those that never run.
  void structural() {
    auto reachable = [&](uint32_t dev, uint32_t owner, ObjectRef obj) {
      if (owner == kHostAgent || owner == dev) return true;
      for (auto [a, b] : p_.peers)
        if ((a == dev && b == owner) || (a == owner && b == dev)) return true;
      for (auto& [o, d] : p_.maps)
        if (o == obj && d == dev) return true;
      return false;
    };
    for (uint32_t c = 0; c < nc_; ++c) {
      const TraceCmd& tc = t_.cmds[c];
      const Queue& q = p_.queues[tc.queue];
      Ev ev{false, c};
      if (q.engine == EngineKind::Copy && (tc.op == CmdOp::Exec || tc.op == CmdOp::MemoryBarrier))
        raw_.push_back({"engine", ev, {}, false});
      if (tc.op == CmdOp::Wait || tc.op == CmdOp::Signal) {
        int w = tc.op == CmdOp::Wait ? wait_width(p_, tc.queue) : signal_width(p_, tc.queue);
        // nv waits compare circularly: their thresholds, and writes to what they wait on, stay below 2^63.
        if (w == 64 && (tc.op == CmdOp::Wait ? circular_waits(p_, tc.queue) : circular_signal(tc.signal))) w = 63;
        if (tc.value < 0 || tc.value >= (i128(1) << w)) raw_.push_back({"value-width", ev, {}, false});
      }
      for (uint32_t a = tc.acc_begin; a < tc.acc_end; ++a) {
        uint32_t b = t_.accesses[a].buffer;
        if (!reachable(q.device, p_.buffers[b].owner, {ObjectRef::Buffer, b}))
          raw_.push_back({"peer-access", ev, {}, false, p_.buffers[b].loc.line});
      }
      if (tc.signal != kNone && !reachable(q.device, p_.signals[tc.signal].owner, {ObjectRef::Signal, tc.signal}))
        raw_.push_back({"peer-access", ev, {}, false, p_.signals[tc.signal].loc.line});
    }
    for (uint32_t h = 0; h < t_.host.size(); ++h) {
      const HostEvent& e = t_.host[h];
      i128 top = e.op == HostOp::Signal && circular_signal(e.signal) ? (i128(1) << 63) - 1 : i128(kU64Max);
      if ((e.op == HostOp::Wait || e.op == HostOp::Signal) && (e.value < 0 || e.value > top))
        raw_.push_back({"value-width", {true, h}, {}, false});
    }
  }

  // stale-wait and redundant-wait, from the candidates at the fixed point.
  void waits_notes() {
    for (size_t i = 0; i < waits_.size(); ++i) {
      if (dead(waits_[i].ev) || !waits_[i].fits) continue;
      const Resolution& r = res_[i];
      bool known = r.initial, unknown = false;
      // A candidate happens before the wait starts, and so does what it needs to meet it: one of its
      // lenders, if it has any.
      for (size_t k = 0; k < r.cands.size(); ++k) {
        auto before = [&](size_t w) { return hb(E(writes_[w].ev), S(waits_[i].ev)); };
        bool lent = r.lenders[k].empty() || std::any_of(r.lenders[k].begin(), r.lenders[k].end(), before);
        (before(r.cands[k]) && lent ? known : unknown) = true;
      }
      if (!unknown && (known || !r.cands.empty())) raw_.push_back({"redundant-wait", waits_[i].ev, {}, false});
      if (unknown && known) raw_.push_back({"stale-wait", waits_[i].ev, {}, false});
    }
  }

  // diagnostics.md: group per (rule, primary event, queue of the related event), the related
  // being the last of that queue; then merge repeats (same lines, in either order), keeping the
  // one whose primary was submitted first (then: whose related event was).
  std::vector<Finding> group_and_merge() {
    std::map<std::tuple<std::string, uint64_t, uint32_t>, std::pair<Raw, std::set<uint64_t>>> groups;
    std::vector<std::pair<Raw, uint64_t>> single;  // with the number of others in its group
    for (const Raw& r : raw_) {
      if (!r.has_related || r.rule == "deadlock" || r.rule == "use-after-free" || r.rule == "lost-wakeup") {
        single.push_back({r, 0});
        continue;
      }
      auto k = std::make_tuple(r.rule, key(r.primary), queue_of(r.related));
      auto [it, fresh] = groups.try_emplace(k, r, std::set<uint64_t>{});
      it->second.second.insert(key(r.related));
      if (!fresh && queue_order(r.related) > queue_order(it->second.first.related)) it->second.first = r;
    }
    for (auto& [k, g] : groups) single.push_back({g.first, g.second.size() - 1});
    std::map<std::tuple<std::string, uint32_t, uint32_t>, std::pair<std::pair<uint64_t, uint64_t>, Finding>> merged;
    for (const auto& [r, others] : single) {
      Finding f{r.rule, line(r.primary), r.has_related ? line(r.related) : r.decl_line, others};
      auto k = std::make_tuple(r.rule, std::min(f.line, f.related), std::max(f.line, f.related));
      std::pair<uint64_t, uint64_t> order{submit_key(r.primary), r.has_related ? submit_key(r.related) : 0};
      auto [it, fresh] = merged.try_emplace(k, order, f);
      if (!fresh && order < it->second.first) it->second = {order, f};
    }
    std::vector<Finding> out;
    for (auto& [k, v] : merged) out.push_back(v.second);
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

std::vector<Finding> check(const Trace& t) { return Oracle(t).run(); }

std::string to_string(const Finding& f) {
  std::string s = f.rule + "@" + std::to_string(f.line);
  if (f.related) s += "," + std::to_string(f.related);
  if (f.others) s += "+" + std::to_string(f.others);
  return s;
}

}  // namespace qvet::oracle
