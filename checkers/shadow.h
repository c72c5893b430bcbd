// Shadow memory for the race and visibility rules: per base buffer, an interval map from byte
// ranges to the accesses of those bytes that may still matter. Accesses arrive in happens-before
// order (the engine's processing order); each rule decides which ones a newer access makes
// redundant (never merely because the list grew).
#pragma once
#include <cstddef>
#include <cstdint>
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

 private:
  std::vector<RunNode> nodes_;
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
