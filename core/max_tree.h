// MaxTree: values at places 0..n-1, some of them absent; finds the first present place at or
// after `from` whose value is at least v in O(log n) each, however many places fall short. Used
// where a rule looks for the writes of a signal that meet a wait, in program order, without a
// walk over every write (thousands of waits on one signal), and where the engine asks the most
// any of a range of writers wrote (max_in; Engine::ManyLatest). Not thread-safe; a value type.
#ifndef QVET_CORE_MAX_TREE_H
#define QVET_CORE_MAX_TREE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace qvet {

class MaxTree {
 public:
  MaxTree() = default;
  explicit MaxTree(const std::vector<uint64_t>& values) : n_(values.size()) {
    while (size_ < n_) size_ *= 2;
    max_.assign(2 * size_, 0);
    has_.assign(2 * size_, 0);
    for (size_t i = 0; i < n_; ++i) max_[size_ + i] = values[i], has_[size_ + i] = 1;
    for (size_t i = size_; i-- > 1;) pull(i);
  }
  size_t size() const { return n_; }
  // Place i no longer counts.
  void erase(size_t i) {
    if (i >= n_ || !has_[size_ + i]) return;
    has_[size_ + i] = 0;
    for (size_t j = (size_ + i) / 2; j >= 1; j /= 2) pull(j);
  }
  // Place i (present again) now holds v.
  void set(size_t i, uint64_t v) {
    if (i >= n_) return;
    max_[size_ + i] = v, has_[size_ + i] = 1;
    for (size_t j = (size_ + i) / 2; j >= 1; j /= 2) pull(j);
  }
  // The first present place at or after `from` with a value >= v, or size().
  size_t next(size_t from, uint64_t v) const { return from >= n_ ? n_ : find(1, 0, size_, from, v); }
  // The largest value at the present places in [lo, hi), or 0.
  uint64_t max_in(size_t lo, size_t hi) const {
    uint64_t m = 0;
    for (lo += size_, hi = std::min(hi, n_) + size_; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) m = std::max(m, has_[lo] ? max_[lo] : 0), ++lo;
      if (hi & 1) --hi, m = std::max(m, has_[hi] ? max_[hi] : 0);
    }
    return m;
  }

 private:
  void pull(size_t i) {
    has_[i] = has_[2 * i] | has_[2 * i + 1];
    max_[i] = std::max(has_[2 * i] ? max_[2 * i] : 0, has_[2 * i + 1] ? max_[2 * i + 1] : 0);
  }
  size_t find(size_t node, size_t lo, size_t hi, size_t from, uint64_t v) const {
    if (hi <= from || !has_[node] || max_[node] < v) return n_;
    if (hi - lo == 1) return lo;
    size_t mid = (lo + hi) / 2, r = find(2 * node, lo, mid, from, v);
    return r != n_ ? r : find(2 * node + 1, mid, hi, from, v);
  }
  size_t n_ = 0, size_ = 1;
  std::vector<uint64_t> max_;
  std::vector<uint8_t> has_;
};

}  // namespace qvet

#endif  // QVET_CORE_MAX_TREE_H
