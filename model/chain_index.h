// ChainIndex: one chained queue's writes of one signal, in its queue order, as a segment tree
// that answers a wait's questions about a range of them without visiting them one by one: the
// last that meets it, the last that does not and follows every earlier write of the queue (which
// ends a wait's look back), the ones that do or do not meet it from the right, the meet of the
// ends of those that meet it, with their count, and the join of the ends of those that do not.
//
// Why: a chained queue's releases finish out of order, so every one of its writes that meets a
// wait is a candidate, back to a known lower write that follows all earlier ones, unless a known
// lower write follows it. A wait that knows some write of the signal looked at them one by one,
// and stopped at a bound (4,096 looked at, 1,024 taken), past which it learned the meet of too few
// ends, or took overwritten writes for candidates. Here the candidates are met in O(log n) stored
// subtree meets per range, and the known lower writes of a range joined in O(log n) stored joins
// (a candidate is overwritten exactly when the join knows it).
//
// Writes are added in queue order (the engine processes a queue's writes in order); a node's meet
// (and join) is computed the first time a question takes the whole node, once every write under it is added
// (so a writer whose waits never ask costs no meet). A node where writes that meet a wait and
// writes that do not alternate (both its halves hold some of each) is not descended: its writes
// sorted by value, with the meets of each suffix, answer for it (made the first time a question
// needs them), so a question costs O(log^2 n) steps whatever the order of the values, and the
// sorted nodes at most n log n meets and clocks in all. Not thread-safe (Clocks are not).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "model/clock.h"

namespace qvet {

class ChainIndex {
 public:
  static constexpr size_t kNoPos = ~size_t(0);
  explicit ChainIndex(size_t size);
  size_t added() const { return added_; }
  // Adds the write at position added(): its word and whether it follows every earlier write of its
  // queue (SignalWrite::follows_all_prev).
  void add(uint64_t value, bool follows_all_prev, const Clock& end);

  // Over positions [lo, hi) of added writes, for a wait for `threshold` at 64 bits or, `narrow`, at
  // the low 32:
  struct Cond {
    uint64_t threshold;
    bool narrow;
  };
  size_t last_meeting(size_t lo, size_t hi, Cond c) const;  // or kNoPos
  size_t last_barrier_below(size_t lo, size_t hi, Cond c) const;  // a follows_all_prev write that does not meet it
  // Calls f(pos) for each position that meets it (`meets`) or does not, from the right, until f
  // returns false.
  void each_from_right(size_t lo, size_t hi, Cond c, bool meets, const std::function<bool(size_t)>& f) const;
  // Joins into `count` how many meet it and meets into `meet` their ends (`meet` is taken as empty
  // while count is 0).
  void meet_meeting(size_t lo, size_t hi, Cond c, Clock& meet, size_t& count) const;
  // Joins into `join` the ends of those that do not meet it (`join` is taken as empty while `any`
  // is false; `any` is set once one is taken): what the known lower writes of a range know, for
  // whether one of them comes after a candidate (an event is known to a join exactly when it is
  // known to one of the joined clocks).
  void join_below(size_t lo, size_t hi, Cond c, Clock& join, bool& any) const;
  uint64_t meets() const { return meets_; }  // Clock meets and joins done so far (tests count them)

 private:
  struct Node {
    uint64_t max64 = 0, max32 = 0, min64 = ~uint64_t(0), min32 = ~uint64_t(0);
    uint64_t barrier_min64 = ~uint64_t(0), barrier_min32 = ~uint64_t(0);  // of follows_all_prev writes
    Clock meet;  // while `met`; a leaf's is its write's end
    Clock join;  // of an inner node, while `joined`
    bool met = false, joined = false;
  };
  const Clock& meet_of(size_t k) const;  // of a node whose writes are all added
  const Clock& join_of(size_t k) const;  // likewise
  bool right_holds_write(size_t k) const;
  // A node's writes by value at one width, with the meet of the ends of each suffix and (made when
  // a join first asks) the join of the ends of each prefix.
  struct Sorted {
    std::vector<uint64_t> values;  // increasing
    std::vector<uint32_t> at;      // their positions
    std::vector<Clock> suffix;     // suffix[i]: the meet of the ends of entries i..end
    mutable std::vector<Clock> prefix;  // prefix[i]: the join of the ends of entries 0..i
  };
  const Sorted& sorted(size_t k, size_t lo, size_t hi, bool narrow) const;
  mutable std::vector<std::unique_ptr<Sorted>> sorted64_, sorted32_;  // per node, once made
  std::vector<const Clock*> ends_;  // per position
  uint64_t max_of(const Node& n, Cond c) const { return c.narrow ? n.max32 : n.max64; }
  uint64_t min_of(const Node& n, Cond c) const { return c.narrow ? n.min32 : n.min64; }
  uint64_t barrier_min_of(const Node& n, Cond c) const { return c.narrow ? n.barrier_min32 : n.barrier_min64; }
  // Node k covers positions [lo, hi) (the root, 1, covers [0, leaves_)).
  size_t last_node(size_t k, size_t lo, size_t hi, size_t qlo, size_t qhi, const std::function<bool(const Node&)>& may,
                   const std::function<bool(const Node&)>& leaf) const;
  bool each_node(size_t k, size_t lo, size_t hi, size_t qlo, size_t qhi, Cond c, bool meets, const std::function<bool(size_t)>& f) const;
  void meet_node(size_t k, size_t lo, size_t hi, size_t qlo, size_t qhi, Cond c, Clock& meet, size_t& count) const;
  void join_node(size_t k, size_t lo, size_t hi, size_t qlo, size_t qhi, Cond c, Clock& join, bool& any) const;
  bool mixed(size_t k, Cond c) const {  // it holds writes that meet c and writes that do not
    return min_of(nodes_[k], c) < c.threshold && max_of(nodes_[k], c) >= c.threshold;
  }
  void take(Clock& meet, size_t& count, const Clock& m, size_t n) const;
  size_t leaves_ = 1, size_, added_ = 0;
  mutable std::vector<Node> nodes_;
  mutable uint64_t meets_ = 0;
};

}  // namespace qvet
