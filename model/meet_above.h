// MeetAbove: entries keyed by a value, each with an end clock, that answers for any threshold the
// meet of the ends of every entry at or above it, how many there are, and the one first in a
// caller's order, in O(log n) meets per entry added and per question.
//
// Why: a wait that knows no write of its signal has as candidates every write of a chained queue
// that meets it (its releases may finish out of order) and learns the meet of their ends. Met
// one by one per wait that is quadratic in the chained queue's writes (thousands of waits, each
// for one more value); here a wait meets the stored meets of O(log n) subtrees. Engine keeps one
// per signal and width (the values at 64 and at 32 bits).
//
// A treap keyed by (value, tie) whose priorities come from the tie (deterministic runs); each
// node keeps its subtree's size and first entry, and its subtree's meet once a question needed it
// (an insert marks the nodes it changed; a signal whose waits never ask costs no meet). Entries
// are never removed. Not thread-safe (Clocks are not).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "model/clock.h"

namespace qvet {

class MeetAbove {
 public:
  static constexpr uint32_t kNoEntry = ~uint32_t(0);
  struct Answer {
    size_t count = 0;               // entries at or above the threshold
    Clock meet;                     // the meet of their ends (when count > 0)
    uint64_t first_order = ~uint64_t(0);
    uint32_t first = kNoEntry;      // the `id` of the one with the least order
  };
  // `tie` tells apart entries of one key (Engine: the write's processing rank, unique); `order`
  // ranks entries for Answer::first; `id` is the caller's name for the entry.
  void insert(uint64_t key, uint32_t tie, uint64_t order, uint32_t id, const Clock& end);
  Answer at_least(uint64_t key) const;
  size_t size() const { return nodes_.size(); }
  uint64_t meets() const { return meets_; }  // Clock meets done so far (tests count them)

 private:
  static constexpr uint32_t kNil = ~uint32_t(0);
  struct Node {
    uint64_t key, order;
    uint32_t tie, id, priority;
    uint32_t left = kNil, right = kNil;
    Clock end;
    // Of the subtree rooted here; `meet` only while `met`.
    Clock meet;
    bool met = false;
    size_t count = 1;
    uint64_t first_order;
    uint32_t first;
  };
  bool below(uint32_t a, uint32_t b) const {
    return nodes_[a].key != nodes_[b].key ? nodes_[a].key < nodes_[b].key : nodes_[a].tie < nodes_[b].tie;
  }
  uint32_t insert_under(uint32_t n, uint32_t x);
  void pull(uint32_t n);
  const Clock& meet_of(uint32_t n) const;  // the subtree's meet, computed where it is not kept
  void take(Answer& a, const Clock& meet, size_t count, uint64_t order, uint32_t id) const;
  mutable std::vector<Node> nodes_;
  uint32_t root_ = kNil;
  mutable uint64_t meets_ = 0;
};

}  // namespace qvet
