// Clock: what an event knows has already happened, as a vector clock over queues.
//
// For every queue q, `done[q]` says the ends of its first done[q] commands happen before the
// event; `extra` lists further ended commands beyond that prefix (overlapping and chained queues
// finish out of order). Host statements are totally ordered, so one number covers the host.
// join is the union of knowledge (an event after both), meet the intersection (the wait rule:
// what happens before every candidate write).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace qvet {

class Clock {
 public:
  Clock() = default;
  explicit Clock(size_t queues) : done_(queues, 0) {}

  int64_t host() const { return host_; }
  void see_host(int64_t h) { host_ = std::max(host_, h); }
  bool knows_host(uint32_t h) const { return int64_t(h) <= host_; }
  bool knows(uint32_t queue, uint32_t index) const;
  void add_end(uint32_t queue, uint32_t index);  // the end of command `index` of `queue` happened
  uint32_t done(uint32_t queue) const { return done_[queue]; }
  // The known ends beyond the prefixes, as (queue, index), sorted.
  const auto& extras() const { return extra_; }

  void join(const Clock& o);
  void meet(const Clock& o);
  bool leq(const Clock& o) const;  // everything this clock knows, o knows too

 private:
  void normalize(uint32_t queue);
  void normalize_all();
  // Inline storage: copying a clock of up to 32 queues allocates nothing (clocks are copied per command).
  int64_t host_ = -1;
  boost::container::small_vector<uint32_t, 32> done_;
  boost::container::small_vector<std::pair<uint32_t, uint32_t>, 2> extra_;  // (queue, index), sorted, index >= done_[queue]
};

}  // namespace qvet
