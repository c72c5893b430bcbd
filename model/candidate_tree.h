// CandidateTree: one list of candidate writes shared by many waits, each of which takes only the
// entries that do not come after it, walked through a segment tree of their ends' meets and
// joins instead of being copied per wait.
//
// Why: waits forced before their signal's writes were made (Engine::unstick) have as candidates,
// once the run is over, every write that meets them but those that come after them. Where the
// wait knows no write of the signal, that is one list (each writer's first matching write) less a
// few entries per wait: thousands of queues `wait s >= 1; signal s = 1` with s = 1 each lose only
// their own write. Per wait, `next` and `meet` cost steps of the boundaries between entries that
// come after the wait and entries that do not (times the tree's height), not of the list.
//
// "Comes after" is a predicate on an end clock that a meet and a join preserve: the clock knows
// the wait's end (a meet knows it iff every clock met does, a join iff one of them does).
// Immutable once built; shared by shared_ptr. Not thread-safe (Clocks are not).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "model/clock.h"

namespace qvet {

class CandidateTree {
 public:
  using After = std::function<bool(const Clock&)>;
  // `list`: indices into a signal's writes; `ends[k]`: the end of write list[k].
  CandidateTree(std::vector<uint32_t> list, const std::vector<const Clock*>& ends, const Trace* t);
  const std::vector<uint32_t>& list() const { return list_; }
  size_t size() const { return list_.size(); }
  // The first entry at or after `from` whose end does not come after (list positions), or size().
  size_t next(size_t from, const After& after) const;
  // The meet of the ends of the entries that do not come after, with their count (0: an empty
  // clock of `t`).
  Clock meet(const After& after, size_t& count) const;

 private:
  size_t next_node(size_t node, size_t lo, size_t hi, size_t from, const After& after) const;
  void meet_node(size_t node, size_t lo, size_t hi, const After& after, Clock& out, size_t& count) const;
  std::vector<uint32_t> list_;
  size_t leaves_ = 1;  // a power of two at least list_.size(); node 1 is the root, leaf k is node leaves_ + k
  std::vector<Clock> meet_, join_;  // per node, over its entries (an empty node: an empty clock, unused)
  const Trace* t_;
};

}  // namespace qvet
