// Clock: what an event knows has already happened, per queue, and how far the host got.
//
// For a queue q it knows the ends of: its first `done` commands; every command below `fe` that
// ends when its front end passes it (a wait, a memory_barrier: `ends_at_front_end`), so a front
// end that ran ahead of slow kernels does not collect one entry per wait; and a few `extras`
// beyond those, as runs of consecutive commands (overlapping and chained queues finish out of
// order; a chain of kernels behind a wait is one run, not one entry per kernel). Queues it knows nothing of
// take no room: clocks stay small when a program declares many queues but each event hears of
// few. Host statements are totally ordered, so one number covers the host.
// join is the union of knowledge (an event after both), meet the intersection (the wait rule:
// what happens before every candidate write).
//
// A clock reads its trace's commands (to tell which end at the front end); the Trace must
// outlive it. Clocks of different traces are never mixed.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace qvet {

struct Trace;

class Clock {
 public:
  Clock() = default;
  explicit Clock(const Trace* t) : t_(t) {}

  int64_t host() const { return host_; }
  void see_host(int64_t h) { host_ = std::max(host_, h); }
  void unsee_host(int64_t h) { host_ = std::min(host_, h - 1); }  // undoes see_host(h) of the next host event
  bool knows_host(uint32_t h) const { return int64_t(h) <= host_; }
  bool knows(uint32_t queue, uint32_t index) const;
  void add_end(uint32_t queue, uint32_t index);  // the end of command `index` of `queue` happened
  uint32_t done(uint32_t queue) const { const Entry* e = find(queue); return e ? e->done : 0; }
  // The known ends beyond the prefixes and front ends: runs of commands [lo, hi) of a queue, sorted.
  struct Run {
    uint32_t queue, lo, hi;
  };
  const auto& extras() const { return extra_; }
  // The commands of `queue` it knows that do not end at the front end (everything but waits and
  // memory_barriers), as sorted, disjoint index ranges [lo, hi): the prefix, then the runs.
  std::vector<std::pair<uint32_t, uint32_t>> known_ranges(uint32_t queue) const;

  void join(const Clock& o);
  void meet(const Clock& o);
  bool leq(const Clock& o) const;  // everything this clock knows, o knows too

 private:
  struct Entry {
    uint32_t queue;
    uint32_t done;  // commands [0, done) ended
    uint32_t fe;    // >= done: front-end commands below fe ended
  };
  const Entry* find(uint32_t queue) const;
  Entry& entry(uint32_t queue);  // found or inserted
  bool front_end_cmd(uint32_t queue, uint32_t index) const;
  bool in_extras(uint32_t queue, uint32_t index) const;
  bool covers(uint32_t queue, uint32_t lo, uint32_t hi) const;  // knows every command in [lo, hi)
  // Appends [lo, hi) of `queue` to sorted runs, merging it with the last run when they touch.
  template <class Runs>
  static void append(Runs& runs, uint32_t queue, uint32_t lo, uint32_t hi);
  // Restores the invariants of `queue`'s entry: done as far as known ends reach, no extra below
  // done or covered by fe.
  void normalize(Entry& e);
  void normalize_all();

  const Trace* t_ = nullptr;
  int64_t host_ = -1;
  // Sorted by queue, only queues with something known. Inline storage: copying a clock of up to
  // 24 queues allocates nothing (clocks are copied per command).
  boost::container::small_vector<Entry, 24> q_;
  boost::container::small_vector<Run, 2> extra_;  // sorted by (queue, lo), disjoint, not touching
};

}  // namespace qvet
