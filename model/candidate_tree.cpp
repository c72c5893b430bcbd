#include "model/candidate_tree.h"

namespace qvet {

CandidateTree::CandidateTree(std::vector<uint32_t> list, const std::vector<const Clock*>& ends, const Trace* t)
    : list_(std::move(list)), t_(t) {
  while (leaves_ < list_.size()) leaves_ *= 2;
  meet_.assign(2 * leaves_, Clock(t));
  join_.assign(2 * leaves_, Clock(t));
  for (size_t k = 0; k < list_.size(); ++k) meet_[leaves_ + k] = join_[leaves_ + k] = *ends[k];
  // Node n covers leaves [lo, lo + span): its left child's first half. A node whose right child
  // holds no entry takes its left child's clocks.
  for (size_t n = leaves_ - 1, span = 2, row = leaves_ / 2; n >= 1; --n) {
    if (n < row) row /= 2, span *= 2;
    size_t lo = (n - row) * span;
    if (lo >= list_.size()) continue;
    meet_[n] = meet_[2 * n];
    join_[n] = join_[2 * n];
    if (lo + span / 2 < list_.size()) {
      meet_[n].meet(meet_[2 * n + 1]);
      join_[n].join(join_[2 * n + 1]);
    }
  }
}

size_t CandidateTree::next_node(size_t node, size_t lo, size_t hi, size_t from, const After& after) const {
  if (hi <= from || lo >= list_.size()) return size();
  if (after(meet_[node])) return size();  // every entry under it comes after
  if (node >= leaves_) return lo;
  size_t mid = (lo + hi) / 2;
  size_t found = next_node(2 * node, lo, mid, from, after);
  return found != size() ? found : next_node(2 * node + 1, mid, hi, from, after);
}

size_t CandidateTree::next(size_t from, const After& after) const {
  if (list_.empty()) return 0;
  return next_node(1, 0, leaves_, from, after);
}

void CandidateTree::meet_node(size_t node, size_t lo, size_t hi, const After& after, Clock& out, size_t& count) const {
  if (lo >= list_.size() || after(meet_[node])) return;  // empty, or every entry comes after
  if (node >= leaves_ || !after(join_[node])) {  // no entry under it comes after: all of them count
    if (count == 0) out = meet_[node];
    else out.meet(meet_[node]);
    count += std::min(hi, list_.size()) - lo;
    return;
  }
  size_t mid = (lo + hi) / 2;
  meet_node(2 * node, lo, mid, after, out, count);
  meet_node(2 * node + 1, mid, hi, after, out, count);
}

Clock CandidateTree::meet(const After& after, size_t& count) const {
  Clock out(t_);
  count = 0;
  if (!list_.empty()) meet_node(1, 0, leaves_, after, out, count);
  return out;
}

}  // namespace qvet
