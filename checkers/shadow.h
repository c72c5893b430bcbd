// Shadow memory for the race and visibility rules: per base buffer, an interval map from byte
// ranges to the accesses of those bytes that may still matter. Accesses arrive in happens-before
// order (the engine's processing order); each rule decides which ones a newer access makes
// redundant (never merely because the list grew).
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "model/engine.h"

namespace qvet {

struct ShadowAccess;

// race: the earlier accesses of its queue to some bytes that an access dominates (race.cpp),
// shared between the segments it covers. Lists hold accesses that hold lists: a chain can be as
// long as the program, so the last owner takes it apart with a loop, never by recursion (which
// would overflow the stack).
class HiddenList {
 public:
  HiddenList() = default;
  HiddenList(std::nullptr_t) {}
  HiddenList(const HiddenList&) = default;
  HiddenList(HiddenList&&) noexcept = default;
  HiddenList& operator=(HiddenList o) noexcept {  // `o` takes the old list with it
    std::swap(p_, o.p_);
    return *this;
  }
  ~HiddenList();
  void create();
  explicit operator bool() const { return bool(p_); }
  std::vector<ShadowAccess>* operator->() const { return p_.get(); }
  std::vector<ShadowAccess>& operator*() const { return *p_; }
  bool same(const HiddenList& o) const { return p_ == o.p_; }

 private:
  std::shared_ptr<std::vector<ShadowAccess>> p_;
};

struct ShadowAccess {
  EventRef ev;
  uint32_t access;  // Trace::accesses index
  bool write = false;
  HiddenList hidden;
};

inline void HiddenList::create() { p_ = std::make_shared<std::vector<ShadowAccess>>(); }

inline HiddenList::~HiddenList() {
  if (!p_ || p_.use_count() > 1) return;  // not the last owner: dropping a reference is all
  std::vector<std::shared_ptr<std::vector<ShadowAccess>>> doomed;
  doomed.push_back(std::move(p_));
  while (!doomed.empty()) {
    std::shared_ptr<std::vector<ShadowAccess>> list = std::move(doomed.back());
    doomed.pop_back();
    if (list.use_count() > 1) continue;
    for (ShadowAccess& a : *list)
      if (a.hidden.p_ && a.hidden.p_.use_count() == 1) doomed.push_back(std::move(a.hidden.p_));
  }  // each list dies with its accesses' lists already taken out: no recursion
}

// race: a segment's visible accesses, per agent and kind (reads, writes), as persistent lists in
// one arena, newest first. An agent's accesses reach a list in its order (queue index, host
// event), so the nodes of any order range are a stretch of the list: Myers' jump pointers find
// the newest node below an order in O(log n), and each node knows how many nodes lie on its
// path, so the nodes of a range are counted without visiting them (an overlapping queue whose
// accesses nothing orders keeps them all visible: the race rule counts them). Segments share
// lists: splitting one copies a head per list, and a node, once made, never changes but for the
// hidden list its access gets while it is processed. Nothing is freed before the rule ends.
constexpr uint32_t kNoNode = UINT32_MAX;

struct RunNode {
  ShadowAccess entry;
  uint32_t index;        // the entry's event's order in its agent
  uint32_t parent, jump;
  uint32_t depth;        // nodes on its path, itself included
  uint32_t prev_hidden;  // the newest node on its path (itself included) whose entry hides others
  uint32_t line;         // the source line of its event
  uint32_t line_from;    // the depth where the stretch of nodes on this line, down to it, begins
};

class RunArena {
 public:
  const RunNode& operator[](uint32_t id) const { return nodes_[id]; }
  uint32_t depth(uint32_t id) const { return id == kNoNode ? 0 : nodes_[id].depth; }
  uint32_t prev_hidden(uint32_t id) const { return id == kNoNode ? kNoNode : nodes_[id].prev_hidden; }
  // A new newest node on top of `parent` (kNoNode: a new list).
  uint32_t push(uint32_t parent, const ShadowAccess& e, uint32_t index, uint32_t line) {
    uint32_t jump = parent;
    if (parent != kNoNode) {
      uint32_t j = nodes_[parent].jump;
      if (j != kNoNode && depth(parent) - depth(j) == depth(j) - depth(nodes_[j].jump)) jump = nodes_[j].jump;
    }
    uint32_t id = uint32_t(nodes_.size()), d = depth(parent) + 1;
    uint32_t from = parent != kNoNode && nodes_[parent].line == line ? nodes_[parent].line_from : d;
    nodes_.push_back({e, index, parent, jump, d, e.hidden ? id : prev_hidden(parent), line, from});
    return id;
  }
  // Gives a node made for the access being processed the access's hidden list.
  void set_hidden(uint32_t id, const HiddenList& h) {
    nodes_[id].entry.hidden = h;
    nodes_[id].prev_hidden = id;
  }
  // The newest node of the list from `head` whose order is below `t` (kNoNode: none).
  uint32_t below(uint32_t head, uint64_t t) const {
    uint32_t x = head;
    while (x != kNoNode && nodes_[x].index >= t) {
      uint32_t j = nodes_[x].jump;
      x = j != kNoNode && nodes_[j].index >= t ? j : nodes_[x].parent;  // a jump skips only orders >= t
    }
    return x;
  }
  // The node of the list from `head` with `d` nodes on its path (1 <= d <= depth(head)).
  uint32_t at_depth(uint32_t head, uint32_t d) const {
    uint32_t x = head;
    while (depth(x) > d) {
      uint32_t j = nodes_[x].jump;
      x = j != kNoNode && depth(j) >= d ? j : nodes_[x].parent;
    }
    return x;
  }
  // Nodes of the list from `head` with order in [lo, hi).
  uint32_t count(uint32_t head, uint64_t lo, uint64_t hi) const {
    return lo >= hi ? 0 : depth(below(head, hi)) - depth(below(head, lo));
  }
  uint32_t size() const { return uint32_t(nodes_.size()); }

 private:
  std::vector<RunNode> nodes_;
};

// A map from 64-bit keys (never UINT64_MAX) to 32-bit values, open addressing with each key
// beside its value, for tables of millions of small entries (a node per entry would cost more
// than the entry, and a cache miss more per lookup).
class FlatMap64 {
 public:
  // The value of `k`, made `v` when absent (`fresh`); valid until the next call.
  uint32_t& try_emplace(uint64_t k, uint32_t v, bool& fresh) {
    if (4 * (size_ + 1) > 3 * slots_.size()) grow();  // at most 3/4 full: probes stay short
    Slot& e = slots_[find(k)];
    fresh = e.key() == kFree;
    if (fresh) {
      e = Slot::of(k, v);
      ++size_;
    }
    return e.value;
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kFree = UINT64_MAX;
  struct Slot {  // 12 bytes: the key as two halves keeps it 4-aligned
    uint32_t lo = UINT32_MAX, hi = UINT32_MAX, value = 0;
    uint64_t key() const { return uint64_t(hi) << 32 | lo; }
    static Slot of(uint64_t k, uint32_t v) { return {uint32_t(k), uint32_t(k >> 32), v}; }
  };
  size_t find(uint64_t k) const {
    uint64_t h = (k ^ (k >> 31)) * 0x7FB5D329728EA185ull;  // keys are pairs of small numbers: mix them
    h = (h ^ (h >> 27)) * 0x81DADEF4BC2DD44Dull;
    size_t mask = slots_.size() - 1, i = size_t(h ^ (h >> 33)) & mask;
    while (slots_[i].key() != kFree && slots_[i].key() != k) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old(std::max<size_t>(64, 2 * slots_.size()));
    old.swap(slots_);
    for (const Slot& e : old)
      if (e.key() != kFree) slots_[find(e.key())] = e;
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// race: the orders of one agent's runs as sets, for an event that meets the agent through
// different runs (two buffers, segments whose histories differ), where one partner can be in
// several and must count once. A set is a persistent binary trie over the orders' bits, 32
// orders to a leaf word: a run's set is its parent's plus one path (made on first use, kept per
// run node; runs with the same orders get one set), and the union of two nodes, once made, is
// remembered. Runs that grow by a node between two events then unite in a path's worth of new
// nodes, not a walk of their racing nodes. Each node keeps its count, and its smallest distinct
// source lines once asked (a group lists its others' first 8 lines, and says when there are
// more; a new node is mostly on the path to the newest partner, which a range cuts, so never
// asked).
class OrderSets {
 public:
  static constexpr uint32_t kEmpty = 0;
  static constexpr uint64_t kNone = UINT64_MAX;
  static constexpr size_t kLines = 9;  // 8 shown, and one to know there are more
  struct Lines {
    uint32_t n = 0;
    std::array<uint32_t, kLines> v{};  // ascending, distinct
    friend bool operator==(const Lines&, const Lines&) = default;
    void add(const Lines& o) { *this = merge(*this, o); }
    void add(uint32_t line) { add(Lines{1, {line}}); }
  };
  using LineOf = std::function<uint32_t(uint64_t order)>;

  // One agent's: every order is below `orders`; `line_of` gives an order's source line.
  OrderSets(uint64_t orders, LineOf line_of)
      : levels_(uint32_t(std::bit_width((std::max<uint64_t>(orders, 1) - 1) >> kWordBits))), line_of_(std::move(line_of)) {
    nodes_.push_back({{0, 0}, 0, 0});
    lines_.push_back({});
  }
  // The set of the orders on the run from `head`.
  uint32_t of_run(const RunArena& runs, uint32_t head) {
    if (run_sets_.size() < runs.size()) run_sets_.resize(runs.size(), kUnset);
    std::vector<uint32_t> todo;  // a loop, not recursion: runs are as long as the program
    uint32_t x = head;
    for (; x != kNoNode && run_sets_[x] == kUnset; x = runs[x].parent) todo.push_back(x);
    uint32_t s = x == kNoNode ? kEmpty : run_sets_[x];
    for (auto it = todo.rbegin(); it != todo.rend(); ++it) s = run_sets_[*it] = insert(s, runs[*it].index);
    return s;
  }
  uint32_t unite(uint32_t a, uint32_t b) { return unite(a, b, levels_); }
  // Orders of `s` in [lo, hi).
  uint64_t count(uint32_t s, uint64_t lo, uint64_t hi) const { return count(s, levels_, 0, lo, hi); }
  // The greatest order of `s` in [lo, hi); kNone: none.
  uint64_t greatest(uint32_t s, uint64_t lo, uint64_t hi) const { return greatest(s, levels_, 0, lo, hi); }
  // Adds the smallest lines of the orders of `s` in [lo, hi) to `out`.
  void add_lines(uint32_t s, uint64_t lo, uint64_t hi, Lines& out) { add_lines(s, levels_, 0, lo, hi, out); }

 private:
  static constexpr uint32_t kWordBits = 5;  // a leaf holds 32 orders: a word, its mask
  static constexpr uint32_t kUnset = UINT32_MAX;
  struct Node {
    std::array<uint32_t, 2> child;  // a leaf: its word (order >> kWordBits) and mask
    uint32_t count;
    uint32_t lines;  // lines_ index (shared with a child when the same), kUnset until asked
  };
  static Lines merge(const Lines& a, const Lines& b) {
    Lines m;
    uint32_t i = 0, j = 0;
    while (m.n < kLines && (i < a.n || j < b.n)) {
      uint32_t v = j == b.n || (i < a.n && a.v[i] < b.v[j]) ? a.v[i] : b.v[j];
      if (i < a.n && a.v[i] == v) ++i;
      if (j < b.n && b.v[j] == v) ++j;
      m.v[m.n++] = v;
    }
    return m;
  }
  static uint64_t key(uint32_t a, uint32_t b) { return uint64_t(a) << 32 | b; }
  uint32_t leaf(uint32_t word, uint32_t mask) {
    nodes_.push_back({{word, mask}, uint32_t(std::popcount(mask)), kUnset});
    return uint32_t(nodes_.size() - 1);
  }
  uint32_t make(uint32_t l, uint32_t r) {
    if (l == kEmpty && r == kEmpty) return kEmpty;
    nodes_.push_back({{l, r}, nodes_[l].count + nodes_[r].count, kUnset});
    return uint32_t(nodes_.size() - 1);
  }
  // A run's orders reach its set in ascending order, so runs with the same orders add them in
  // the same sequence from the empty set: remembering each (set, order) makes them one node, and
  // an event's nodes in runs of one history cost one lookup, not a path.
  uint32_t insert(uint32_t s, uint32_t order) {
    bool fresh;
    uint32_t root = s, memo = inserts_.try_emplace(key(root, order), kEmpty, fresh);
    if (!fresh) return memo;
    std::array<uint32_t, 64> path;  // the node at each level, the root's last
    for (uint32_t h = levels_; h > 0; --h) {
      path[h] = s;
      s = nodes_[s].child[(order >> (h - 1 + kWordBits)) & 1];
    }
    uint32_t mask = (s == kEmpty ? 0 : nodes_[s].child[1]) | uint32_t(1) << (order & 31);
    s = s != kEmpty && mask == nodes_[s].child[1] ? s : leaf(order >> kWordBits, mask);
    for (uint32_t h = 1; h <= levels_; ++h) {
      const auto& c = nodes_[path[h]].child;
      uint32_t bit = (order >> (h - 1 + kWordBits)) & 1;
      s = c[bit] == s ? path[h] : bit ? make(c[0], s) : make(s, c[1]);
    }
    return inserts_.try_emplace(key(root, order), kEmpty, fresh) = s;
  }
  // Remembered per pair of nodes: the runs an event meets are mostly those the last one met,
  // each grown by a node, so all but the path to the new orders is found.
  uint32_t unite(uint32_t a, uint32_t b, uint32_t h) {
    if (a == b || b == kEmpty) return a;
    if (a == kEmpty) return b;
    const std::array<uint32_t, 2> ca = nodes_[a].child, cb = nodes_[b].child;
    if (h == 0) {
      uint32_t mask = ca[1] | cb[1];
      return mask == ca[1] ? a : mask == cb[1] ? b : leaf(ca[0], mask);
    }
    bool fresh;
    uint64_t k = key(std::min(a, b), std::max(a, b));
    uint32_t u = unions_.try_emplace(k, kEmpty, fresh);
    if (fresh) {
      std::array<uint32_t, 2> c{unite(ca[0], cb[0], h - 1), unite(ca[1], cb[1], h - 1)};
      u = c == ca ? a : c == cb ? b : make(c[0], c[1]);  // a side that adds nothing: the other
      unions_.try_emplace(k, kEmpty, fresh) = u;  // the inner unions may have moved the entry
    }
    return u;
  }
  // The node `s` at level `h` holds orders [base, base + span(h)); a leaf's range mask.
  static uint64_t span(uint32_t h) { return uint64_t(1) << (h + kWordBits); }
  static uint32_t in_range(uint64_t base, uint64_t lo, uint64_t hi) {
    uint64_t from = std::max(lo, base) - base, to = std::min(hi, base + 32) - base;
    return uint32_t(((uint64_t(1) << to) - 1) & ~((uint64_t(1) << from) - 1));
  }
  uint64_t count(uint32_t s, uint32_t h, uint64_t base, uint64_t lo, uint64_t hi) const {
    uint64_t end = base + span(h);
    if (s == kEmpty || hi <= base || end <= lo) return 0;
    if (lo <= base && end <= hi) return nodes_[s].count;
    if (h == 0) return uint64_t(std::popcount(nodes_[s].child[1] & in_range(base, lo, hi)));
    return count(nodes_[s].child[0], h - 1, base, lo, hi) + count(nodes_[s].child[1], h - 1, base + span(h - 1), lo, hi);
  }
  uint64_t greatest(uint32_t s, uint32_t h, uint64_t base, uint64_t lo, uint64_t hi) const {
    uint64_t end = base + span(h);
    if (s == kEmpty || hi <= base || end <= lo) return kNone;
    if (h == 0) {
      uint32_t m = nodes_[s].child[1] & in_range(base, lo, hi);
      return m ? base + uint64_t(std::bit_width(m) - 1) : kNone;
    }
    uint64_t g = greatest(nodes_[s].child[1], h - 1, base + span(h - 1), lo, hi);
    return g != kNone ? g : greatest(nodes_[s].child[0], h - 1, base, lo, hi);
  }
  void add_lines(uint32_t s, uint32_t h, uint64_t base, uint64_t lo, uint64_t hi, Lines& out) {
    uint64_t end = base + span(h);
    if (s == kEmpty || hi <= base || end <= lo) return;
    if (lo <= base && end <= hi) return out.add(lines_of(s, h));
    if (h == 0) {
      for (uint32_t m = nodes_[s].child[1] & in_range(base, lo, hi); m; m &= m - 1) out.add(line_of_(base + uint64_t(std::countr_zero(m))));
      return;
    }
    add_lines(nodes_[s].child[0], h - 1, base, lo, hi, out);
    add_lines(nodes_[s].child[1], h - 1, base + span(h - 1), lo, hi, out);
  }
  // The smallest lines of node `s` at level `h`, made once (recursion as deep as the trie).
  const Lines& lines_of(uint32_t s, uint32_t h) {
    if (nodes_[s].lines == kUnset) {
      uint32_t id;
      if (h == 0) {
        Lines m;
        uint64_t base = uint64_t(nodes_[s].child[0]) << kWordBits;
        for (uint32_t bits = nodes_[s].child[1]; bits; bits &= bits - 1) m.add(line_of_(base + uint64_t(std::countr_zero(bits))));
        id = uint32_t(lines_.size());
        lines_.push_back(m);
      } else {
        auto [l, r] = nodes_[s].child;
        Lines left = lines_of(l, h - 1);  // a copy: lines_ may grow under the right one
        Lines m = merge(left, lines_of(r, h - 1));
        id = m == lines_[nodes_[l].lines] ? nodes_[l].lines : m == lines_[nodes_[r].lines] ? nodes_[r].lines : uint32_t(lines_.size());
        if (id == lines_.size()) lines_.push_back(m);
      }
      nodes_[s].lines = id;
    }
    return lines_[nodes_[s].lines];
  }

  uint32_t levels_;  // the root's: a leaf is level 0
  LineOf line_of_;
  std::vector<Node> nodes_;  // 0: the empty set
  std::vector<Lines> lines_;
  FlatMap64 inserts_, unions_;  // (set, order), (a, b) -> node
  std::vector<uint32_t> run_sets_;  // per run node: its run's set, once asked
};

// One agent's visible reads, or its visible writes, of a segment.
struct Run {
  uint32_t agent;
  bool write;
  uint32_t head = kNoNode;
  friend bool operator==(const Run&, const Run&) = default;
};

struct ShadowSegment {
  uint64_t hi = 0;
  boost::container::small_vector<Run, 2> runs;
  bool alike(const ShadowSegment& o) const { return runs == o.runs; }
};

// Per base buffer, an interval map from byte ranges to a Segment (which has `uint64_t hi`, the
// end of its range, and whatever a rule keeps for those bytes).
template <class Segment>
class ShadowMap {
 public:
  using Map = std::map<uint64_t, Segment>;  // key: segment start

  explicit ShadowMap(size_t buffers) : maps_(buffers) {}
  // Merges the segments of [lo, hi), and the one on each side, with a neighbour they touch and
  // are alike (Segment::alike): what a later access splits, an access that covers it all joins.
  void coalesce(uint32_t buffer, uint64_t lo, uint64_t hi) {
    Map& m = maps_[buffer];
    auto it = m.upper_bound(lo);
    if (it != m.begin()) --it;
    if (it != m.begin()) --it;
    while (it != m.end() && it->first <= hi) {
      auto next = std::next(it);
      if (next != m.end() && it->second.hi == next->first && it->second.alike(next->second)) {
        it->second.hi = next->second.hi;
        m.erase(next);
      } else {
        it = next;
      }
    }
  }
  // Makes segments tile [lo, hi) exactly and calls f(lo, segment) for each, in order.
  template <class F>
  void for_range(uint32_t buffer, uint64_t lo, uint64_t hi, F&& f) {
    Map& m = maps_[buffer];
    split(m, lo);
    split(m, hi);
    uint64_t pos = lo;
    auto it = m.lower_bound(lo);
    while (pos < hi) {
      if (it == m.end() || it->first > pos) {
        Segment fresh{};
        fresh.hi = it == m.end() ? hi : std::min(hi, it->first);
        it = m.emplace_hint(it, pos, std::move(fresh));
      }
      f(it->first, it->second);
      pos = it->second.hi;
      ++it;
    }
  }

 private:
  static void split(Map& m, uint64_t x) {
    auto it = m.upper_bound(x);
    if (it == m.begin()) return;
    --it;
    if (it->first < x && x < it->second.hi) {
      Segment right = it->second;
      it->second.hi = x;
      m.emplace(x, std::move(right));
    }
  }
  std::vector<Map> maps_;
};

using ShadowMemory = ShadowMap<ShadowSegment>;

}  // namespace qvet
