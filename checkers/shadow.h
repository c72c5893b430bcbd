// Shadow memory for the race and visibility rules: per base buffer, an interval map from byte
// ranges to the accesses of those bytes that may still matter. Accesses arrive in happens-before
// order (the engine's processing order); each rule decides which ones a newer access makes
// redundant (never merely because the list grew).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "model/engine.h"

namespace qvet {

struct ShadowAccess {
  EventRef ev;
  uint32_t access;  // Trace::accesses index
  bool write = false;
  // race: the earlier accesses of its queue to these bytes that this one dominates (see race.cpp)
  std::shared_ptr<std::vector<ShadowAccess>> hidden;
};

struct ShadowSegment {
  uint64_t hi = 0;
  boost::container::small_vector<ShadowAccess, 1> writers, readers;
};

// Per base buffer, an interval map from byte ranges to a Segment (which has `uint64_t hi`, the
// end of its range, and whatever a rule keeps for those bytes).
template <class Segment>
class ShadowMap {
 public:
  using Map = std::map<uint64_t, Segment>;  // key: segment start

  explicit ShadowMap(size_t buffers) : maps_(buffers) {}
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
