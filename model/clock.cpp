#include "model/clock.h"

#include <algorithm>
#include <iterator>

#include "model/queue_rules.h"
#include "model/trace.h"

namespace qvet {

namespace {
struct ByQueue {
  template <class E>
  bool operator()(const E& e, uint32_t q) const { return e.queue < q; }
};
}  // namespace

const Clock::Entry* Clock::find(uint32_t q) const {
  if (q < q_.size() && q_[q].queue == q) return &q_[q];  // every queue below q is present: the dense case
  auto it = std::lower_bound(q_.begin(), q_.end(), q, ByQueue{});
  return it != q_.end() && it->queue == q ? &*it : nullptr;
}

Clock::Entry& Clock::entry(uint32_t q) {
  if (q < q_.size() && q_[q].queue == q) return q_[q];
  auto it = std::lower_bound(q_.begin(), q_.end(), q, ByQueue{});
  if (it == q_.end() || it->queue != q) it = q_.insert(it, Entry{q, 0, 0});
  return *it;
}

bool Clock::front_end_cmd(uint32_t q, uint32_t i) const {
  return t_ && ends_at_front_end(t_->cmds[t_->queue_cmds[q][i]].op);
}

bool Clock::in_extras(uint32_t q, uint32_t i) const {
  return !extra_.empty() && std::binary_search(extra_.begin(), extra_.end(), std::pair{q, i});
}

bool Clock::knows(uint32_t q, uint32_t i) const {
  if (const Entry* e = find(q)) {
    if (i < e->done) return true;
    if (i < e->fe && front_end_cmd(q, i)) return true;
  }
  return in_extras(q, i);
}

void Clock::normalize(Entry& e) {
  uint32_t q = e.queue;
  auto first = std::lower_bound(extra_.begin(), extra_.end(), std::pair{q, uint32_t(0)});
  auto last = first;
  while (last != extra_.end() && last->first == q) ++last;
  for (auto it = first;;) {
    while (it != last && it->second < e.done) ++it;
    if (it != last && it->second == e.done) {
      ++e.done, ++it;
    } else if (e.done < e.fe && front_end_cmd(q, e.done)) {
      ++e.done;
    } else {
      break;
    }
  }
  e.fe = std::max(e.fe, e.done);
  if (first == last) return;
  auto covered = [&](const std::pair<uint32_t, uint32_t>& x) {
    return x.second < e.done || (x.second < e.fe && front_end_cmd(q, x.second));
  };
  extra_.erase(std::remove_if(first, last, covered), last);
}

void Clock::normalize_all() {
  for (Entry& e : q_)
    if (e.fe > e.done || !extra_.empty()) normalize(e);
}

void Clock::add_end(uint32_t q, uint32_t i) {
  Entry& e = entry(q);
  if (i < e.done) return;
  if (front_end_cmd(q, i)) {
    if (i < e.fe) return;
    // The front end passed it: fe moves past it when every front-end command before it is known.
    bool all = true;
    for (uint32_t j = e.fe; j < i && all; ++j) all = !front_end_cmd(q, j) || in_extras(q, j);
    if (all) {
      e.fe = i + 1;
      normalize(e);
      return;
    }
  }
  if (i == e.done) {
    ++e.done;
    normalize(e);
    return;
  }
  auto it = std::lower_bound(extra_.begin(), extra_.end(), std::pair{q, i});
  if (it == extra_.end() || *it != std::pair{q, i}) extra_.insert(it, {q, i});
}

void Clock::join(const Clock& o) {
  if (!t_) t_ = o.t_;
  host_ = std::max(host_, o.host_);
  bool changed = false;  // a queue needs normalizing
  if (q_.size() == o.q_.size() && (q_.empty() || q_.back().queue + 1 == q_.size()) &&
      (o.q_.empty() || o.q_.back().queue + 1 == o.q_.size())) {  // both dense over the same queues
    for (size_t k = 0, n = q_.size(); k < n; ++k) {
      Entry& e = q_[k];
      const Entry& f = o.q_[k];
      e.done = std::max(e.done, f.done);
      e.fe = std::max(e.fe, f.fe);
      changed |= e.fe > e.done;
    }
  } else {
    decltype(q_) merged;
    merged.reserve(std::max(q_.size(), o.q_.size()));
    auto a = q_.cbegin();
    auto b = o.q_.cbegin();
    while (a != q_.cend() || b != o.q_.cend()) {
      if (b == o.q_.cend() || (a != q_.cend() && a->queue < b->queue)) merged.push_back(*a++);
      else if (a == q_.cend() || b->queue < a->queue) merged.push_back(*b++);
      else {
        merged.push_back({a->queue, std::max(a->done, b->done), std::max(a->fe, b->fe)});
        ++a, ++b;
      }
      changed |= merged.back().fe > merged.back().done;
    }
    q_ = std::move(merged);
  }
  if (!o.extra_.empty() || !extra_.empty()) {
    decltype(extra_) merged;
    std::set_union(extra_.begin(), extra_.end(), o.extra_.begin(), o.extra_.end(), std::back_inserter(merged));
    extra_ = std::move(merged);
    for (auto& [q, i] : extra_) entry(q);  // so that normalize sees every queue with extras
    changed = true;
  }
  if (changed) normalize_all();
}

void Clock::meet(const Clock& o) {
  if (!t_) t_ = o.t_;
  host_ = std::min(host_, o.host_);
  // Ends known to both: below both prefixes and front ends, or an extra of one the other knows.
  decltype(extra_) kept;
  for (auto& e : extra_)
    if (o.knows(e.first, e.second)) kept.push_back(e);
  for (auto& e : o.extra_)
    if (knows(e.first, e.second)) kept.push_back(e);
  decltype(q_) both;
  auto a = q_.cbegin();
  auto b = o.q_.cbegin();
  while (a != q_.cend() && b != o.q_.cend()) {
    if (a->queue < b->queue) ++a;
    else if (b->queue < a->queue) ++b;
    else {
      Entry e{a->queue, std::min(a->done, b->done), std::min(a->fe, b->fe)};
      if (e.fe > 0) both.push_back(e);
      ++a, ++b;
    }
  }
  q_ = std::move(both);
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  extra_ = std::move(kept);
  for (auto& [q, i] : extra_) entry(q);
  normalize_all();
}

bool Clock::leq(const Clock& o) const {
  if (host_ > o.host_) return false;
  for (const Entry& e : q_) {
    const Entry* oe = o.find(e.queue);
    uint32_t od = oe ? oe->done : 0, of = oe ? oe->fe : 0;
    for (uint32_t i = od; i < e.done; ++i)
      if (!o.knows(e.queue, i)) return false;
    for (uint32_t i = std::max(of, e.done); i < e.fe; ++i)
      if (front_end_cmd(e.queue, i) && !o.knows(e.queue, i)) return false;
  }
  for (auto& e : extra_)
    if (!o.knows(e.first, e.second)) return false;
  return true;
}

}  // namespace qvet
