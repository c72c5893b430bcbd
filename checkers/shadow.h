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

struct ShadowSegment {
  uint64_t hi = 0;
  boost::container::small_vector<ShadowAccess, 1> writers, readers;
  // Same entries (an access's entry is shared by the segments it covers): the two can be one.
  bool alike(const ShadowSegment& o) const {
    auto eq = [](const auto& a, const auto& b) {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (a[i].access != b[i].access || !(a[i].ev == b[i].ev) || !a[i].hidden.same(b[i].hidden)) return false;
      return true;
    };
    return eq(writers, o.writers) && eq(readers, o.readers);
  }
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
