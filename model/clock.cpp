#include "model/clock.h"

#include <algorithm>
#include <iterator>

namespace qvet {

bool Clock::knows(uint32_t queue, uint32_t index) const {
  if (index < done_[queue]) return true;
  if (extra_.empty()) return false;
  return std::binary_search(extra_.begin(), extra_.end(), std::pair{queue, index});
}

void Clock::normalize(uint32_t q) {
  auto it = std::lower_bound(extra_.begin(), extra_.end(), std::pair{q, uint32_t(0)});
  auto first = it;
  while (it != extra_.end() && it->first == q && it->second <= done_[q]) {
    if (it->second == done_[q]) ++done_[q];
    ++it;
  }
  extra_.erase(first, it);
}

void Clock::add_end(uint32_t q, uint32_t index) {
  if (index < done_[q]) return;
  if (index == done_[q]) {
    ++done_[q];
    if (!extra_.empty()) normalize(q);
    return;
  }
  auto it = std::lower_bound(extra_.begin(), extra_.end(), std::pair{q, index});
  if (it == extra_.end() || *it != std::pair{q, index}) extra_.insert(it, {q, index});
}

void Clock::join(const Clock& o) {
  host_ = std::max(host_, o.host_);
  uint32_t* d = done_.data();
  const uint32_t* od = o.done_.data();
  for (size_t q = 0, n = done_.size(); q < n; ++q) d[q] = std::max(d[q], od[q]);
  if (o.extra_.empty() && extra_.empty()) return;
  boost::container::small_vector<std::pair<uint32_t, uint32_t>, 4> merged;
  std::set_union(extra_.begin(), extra_.end(), o.extra_.begin(), o.extra_.end(), std::back_inserter(merged));
  extra_.clear();
  for (auto& e : merged)
    if (e.second >= done_[e.first]) extra_.push_back(e);
  normalize_all();
}

void Clock::normalize_all() {
  for (size_t i = 0; i < extra_.size();) {
    uint32_t q = extra_[i].first;
    normalize(q);
    while (i < extra_.size() && extra_[i].first == q) ++i;
  }
}

void Clock::meet(const Clock& o) {
  host_ = std::min(host_, o.host_);
  boost::container::small_vector<std::pair<uint32_t, uint32_t>, 4> kept;
  for (auto& e : extra_)
    if (o.knows(e.first, e.second)) kept.push_back(e);
  for (auto& e : o.extra_)
    if (knows(e.first, e.second)) kept.push_back(e);
  for (size_t q = 0; q < done_.size(); ++q) done_[q] = std::min(done_[q], o.done_[q]);
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  extra_.clear();
  for (auto& e : kept)
    if (e.second >= done_[e.first]) extra_.push_back(e);
  normalize_all();
}

bool Clock::leq(const Clock& o) const {
  if (host_ > o.host_) return false;
  for (size_t q = 0; q < done_.size(); ++q)
    if (done_[q] > o.done_[q]) {
      for (uint32_t i = o.done_[q]; i < done_[q]; ++i)
        if (!o.knows(uint32_t(q), i)) return false;
    }
  for (auto& e : extra_)
    if (!o.knows(e.first, e.second)) return false;
  return true;
}

}  // namespace qvet
