#include "model/chain_index.h"

#include <algorithm>

#include "model/profile.h"

namespace qvet {

ChainIndex::ChainIndex(size_t size) : size_(size) {
  while (leaves_ < size_) leaves_ *= 2;
  nodes_.resize(2 * leaves_);
  sorted64_.resize(leaves_), sorted32_.resize(leaves_);  // inner nodes only
  ends_.reserve(size_);
}

void ChainIndex::add(uint64_t value, bool follows_all_prev, const Clock& end) {
  const size_t pos = added_++;
  const uint64_t v32 = value & kLowHalf;
  size_t k = leaves_ + pos;
  Node& leaf = nodes_[k];
  leaf.max64 = leaf.min64 = value;
  leaf.max32 = leaf.min32 = v32;
  if (follows_all_prev) leaf.barrier_min64 = value, leaf.barrier_min32 = v32;
  leaf.meet = end;
  leaf.met = true;
  ends_.push_back(&leaf.meet);  // nodes_ never grows: the address stays
  for (; k > 1; k /= 2) {  // the values at every ancestor
    Node& up = nodes_[k / 2];
    up.max64 = std::max(up.max64, value), up.min64 = std::min(up.min64, value);
    up.max32 = std::max(up.max32, v32), up.min32 = std::min(up.min32, v32);
    if (follows_all_prev) up.barrier_min64 = std::min(up.barrier_min64, value), up.barrier_min32 = std::min(up.barrier_min32, v32);
  }
}

bool ChainIndex::right_holds_write(size_t k) const {  // an inner node's right child covers a position < size_
  size_t span = 1;
  for (size_t j = k; j < leaves_; j *= 2) span *= 2;  // positions under k
  return k * span - leaves_ + span / 2 < size_;
}

const Clock& ChainIndex::meet_of(size_t k) const {
  Node& n = nodes_[k];
  if (!n.met) {  // an inner node: its left child, then its right one where that holds a write
    Clock m = meet_of(2 * k);
    if (right_holds_write(k)) m.meet(meet_of(2 * k + 1)), ++meets_;
    n.meet = std::move(m);
    n.met = true;
  }
  return n.meet;
}

const Clock& ChainIndex::join_of(size_t k) const {
  if (k >= leaves_) return nodes_[k].meet;  // a leaf: its write's end
  Node& n = nodes_[k];
  if (!n.joined) {  // as meet_of
    Clock j = join_of(2 * k);
    if (right_holds_write(k)) j.join(join_of(2 * k + 1)), ++meets_;
    n.join = std::move(j);
    n.joined = true;
  }
  return n.join;
}

void ChainIndex::take(Clock& meet, size_t& count, const Clock& m, size_t n) const {
  if (count == 0) meet = m;
  else meet.meet(m), ++meets_;
  count += n;
}

size_t ChainIndex::last_node(size_t k, size_t lo, size_t hi, size_t qlo, size_t qhi, const std::function<bool(const Node&)>& may,
                             const std::function<bool(const Node&)>& leaf) const {
  if (hi <= qlo || lo >= qhi || !may(nodes_[k])) return kNoPos;
  if (hi - lo == 1) return leaf(nodes_[k]) ? lo : kNoPos;
  size_t mid = (lo + hi) / 2;
  size_t r = last_node(2 * k + 1, mid, hi, qlo, qhi, may, leaf);
  return r != kNoPos ? r : last_node(2 * k, lo, mid, qlo, qhi, may, leaf);
}

size_t ChainIndex::last_meeting(size_t lo, size_t hi, Cond c) const {
  return last_node(1, 0, leaves_, lo, std::min(hi, added_), [&](const Node& n) { return max_of(n, c) >= c.threshold; },
                   [&](const Node& n) { return max_of(n, c) >= c.threshold; });
}

size_t ChainIndex::last_barrier_below(size_t lo, size_t hi, Cond c) const {
  auto below = [&](const Node& n) { return barrier_min_of(n, c) < c.threshold; };
  return last_node(1, 0, leaves_, lo, std::min(hi, added_), below, below);
}

bool ChainIndex::each_node(size_t k, size_t lo, size_t hi, size_t qlo, size_t qhi, Cond c, bool meets,
                           const std::function<bool(size_t)>& f) const {
  if (hi <= qlo || lo >= qhi) return true;
  const Node& n = nodes_[k];
  if (meets ? max_of(n, c) < c.threshold : min_of(n, c) >= c.threshold) return true;  // none here
  if (hi - lo == 1) return f(lo);
  size_t mid = (lo + hi) / 2;
  return each_node(2 * k + 1, mid, hi, qlo, qhi, c, meets, f) && each_node(2 * k, lo, mid, qlo, qhi, c, meets, f);
}

void ChainIndex::each_from_right(size_t lo, size_t hi, Cond c, bool meets, const std::function<bool(size_t)>& f) const {
  each_node(1, 0, leaves_, lo, std::min(hi, added_), c, meets, f);
}

const ChainIndex::Sorted& ChainIndex::sorted(size_t k, size_t lo, size_t hi, bool narrow) const {
  auto& slot = (narrow ? sorted32_ : sorted64_)[k];
  if (!slot) {
    hi = std::min(hi, size_);
    std::vector<std::pair<uint64_t, size_t>> by_value;
    for (size_t j = lo; j < hi; ++j) {
      const Node& leaf = nodes_[leaves_ + j];
      by_value.push_back({narrow ? leaf.max32 : leaf.max64, j});
    }
    std::sort(by_value.begin(), by_value.end());
    slot = std::make_unique<Sorted>();
    for (auto& [v, j] : by_value) slot->at.push_back(uint32_t(j));
    slot->suffix.resize(by_value.size());
    for (size_t i = by_value.size(); i-- > 0;) {
      slot->suffix[i] = *ends_[by_value[i].second];
      if (i + 1 < by_value.size()) slot->suffix[i].meet(slot->suffix[i + 1]), ++meets_;
    }
    for (auto& [v, j] : by_value) slot->values.push_back(v);
  }
  return *slot;
}

void ChainIndex::meet_node(size_t k, size_t lo, size_t hi, size_t qlo, size_t qhi, Cond c, Clock& meet, size_t& count) const {
  if (hi <= qlo || lo >= qhi) return;
  const Node& n = nodes_[k];
  if (max_of(n, c) < c.threshold) return;
  if (qlo <= lo && hi <= qhi) {  // every write under it is added
    if (min_of(n, c) >= c.threshold) {  // all of it
      take(meet, count, meet_of(k), std::min(hi, size_) - lo);
      return;
    }
    if (hi - lo > 2 && mixed(2 * k, c) && mixed(2 * k + 1, c)) {  // both halves mixed: by value
      const Sorted& s = sorted(k, lo, hi, c.narrow);
      size_t i = size_t(std::lower_bound(s.values.begin(), s.values.end(), c.threshold) - s.values.begin());
      take(meet, count, s.suffix[i], s.values.size() - i);
      return;
    }
  }
  size_t mid = (lo + hi) / 2;
  meet_node(2 * k, lo, mid, qlo, qhi, c, meet, count);
  meet_node(2 * k + 1, mid, hi, qlo, qhi, c, meet, count);
}

void ChainIndex::meet_meeting(size_t lo, size_t hi, Cond c, Clock& meet, size_t& count) const {
  meet_node(1, 0, leaves_, lo, std::min(hi, added_), c, meet, count);
}

void ChainIndex::join_node(size_t k, size_t lo, size_t hi, size_t qlo, size_t qhi, Cond c, Clock& join, bool& any) const {
  if (hi <= qlo || lo >= qhi) return;
  const Node& n = nodes_[k];
  if (min_of(n, c) >= c.threshold) return;  // every write here meets it
  auto take_join = [&](const Clock& j) {
    if (!any) join = j, any = true;
    else join.join(j), ++meets_;
  };
  if (qlo <= lo && hi <= qhi) {  // every write under it is added
    if (max_of(n, c) < c.threshold) return take_join(join_of(k));  // all of it
    if (hi - lo > 2 && mixed(2 * k, c) && mixed(2 * k + 1, c)) {  // both halves mixed: by value
      const Sorted& s = sorted(k, lo, hi, c.narrow);
      if (s.prefix.empty()) {
        s.prefix.resize(s.at.size());
        for (size_t i = 0; i < s.at.size(); ++i) {
          s.prefix[i] = *ends_[s.at[i]];
          if (i > 0) s.prefix[i].join(s.prefix[i - 1]), ++meets_;
        }
      }
      size_t i = size_t(std::lower_bound(s.values.begin(), s.values.end(), c.threshold) - s.values.begin());
      return take_join(s.prefix[i - 1]);  // i > 0: the node holds a lower write
    }
  }
  size_t mid = (lo + hi) / 2;
  join_node(2 * k, lo, mid, qlo, qhi, c, join, any);
  join_node(2 * k + 1, mid, hi, qlo, qhi, c, join, any);
}

void ChainIndex::join_below(size_t lo, size_t hi, Cond c, Clock& join, bool& any) const {
  join_node(1, 0, leaves_, lo, std::min(hi, added_), c, join, any);
}

}  // namespace qvet
