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
// Runs ordered by (queue, lo).
bool before(const Clock::Run& r, uint32_t q, uint32_t i) { return r.queue < q || (r.queue == q && r.lo <= i); }
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
  if (extra_.empty()) return false;
  // The last run that starts at or before i.
  auto it = std::partition_point(extra_.begin(), extra_.end(), [&](const Run& r) { return before(r, q, i); });
  if (it == extra_.begin()) return false;
  --it;
  return it->queue == q && i < it->hi;
}

std::vector<std::pair<uint32_t, uint32_t>> Clock::known_ranges(uint32_t q) const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  if (uint32_t d = done(q)) out.push_back({0, d});
  auto it = std::partition_point(extra_.begin(), extra_.end(), [&](const Run& r) { return r.queue < q; });
  for (; it != extra_.end() && it->queue == q; ++it) out.push_back({it->lo, it->hi});
  return out;
}

bool Clock::knows(uint32_t q, uint32_t i) const {
  if (const Entry* e = find(q)) {
    if (i < e->done) return true;
    if (i < e->fe && front_end_cmd(q, i)) return true;
  }
  return in_extras(q, i);
}

template <class Runs>
void Clock::append(Runs& runs, uint32_t q, uint32_t lo, uint32_t hi) {
  if (lo >= hi) return;
  if (!runs.empty() && runs.back().queue == q && runs.back().hi >= lo) runs.back().hi = std::max(runs.back().hi, hi);
  else runs.push_back({q, lo, hi});
}

void Clock::normalize(Entry& e) {
  uint32_t q = e.queue;
  auto first = std::partition_point(extra_.begin(), extra_.end(), [&](const Run& r) { return r.queue < q; });
  auto last = first;
  while (last != extra_.end() && last->queue == q) ++last;
  for (auto it = first;;) {
    while (it != last && it->hi <= e.done) ++it;
    if (it != last && it->lo <= e.done) {
      e.done = it->hi, ++it;
    } else if (e.done < e.fe && front_end_cmd(q, e.done)) {
      ++e.done;
    } else {
      break;
    }
  }
  e.fe = std::max(e.fe, e.done);
  if (first == last) return;
  // Runs below done go; a run that starts below it is cut.
  auto keep = first;
  for (auto it = first; it != last; ++it) {
    if (it->hi <= e.done) continue;
    Run r = *it;
    r.lo = std::max(r.lo, e.done);
    *keep++ = r;
  }
  extra_.erase(keep, last);
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
  // Insert [i, i + 1), merging with the runs it touches.
  auto it = std::partition_point(extra_.begin(), extra_.end(), [&](const Run& r) { return before(r, q, i); });
  if (it != extra_.begin()) {
    auto prev = std::prev(it);
    if (prev->queue == q && prev->hi >= i) {
      if (prev->hi > i) return;  // known
      prev->hi = i + 1;
      if (it != extra_.end() && it->queue == q && it->lo == i + 1) {
        prev->hi = it->hi;
        extra_.erase(it);
      }
      return;
    }
  }
  if (it != extra_.end() && it->queue == q && it->lo == i + 1) {
    it->lo = i;
    return;
  }
  extra_.insert(it, Run{q, i, i + 1});
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
  } else if (o.q_.size() * 8 < q_.size() && o.extra_.empty()) {
    // A small clock into a large one (the host, which hears of every queue): each of its entries
    // is looked up, and only those are normalized, so the cost does not grow with this clock.
    for (const Entry& f : o.q_) {
      Entry& e = entry(f.queue);
      e.done = std::max(e.done, f.done);
      e.fe = std::max(e.fe, f.fe);
      if (e.fe > e.done || !extra_.empty()) normalize(e);
    }
    return;
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
  if (!o.extra_.empty()) {
    decltype(extra_) merged;
    auto a = extra_.cbegin();
    auto b = o.extra_.cbegin();
    while (a != extra_.cend() || b != o.extra_.cend()) {
      bool take_a = b == o.extra_.cend() || (a != extra_.cend() && before(*a, b->queue, b->lo));
      const Run& r = take_a ? *a++ : *b++;
      append(merged, r.queue, r.lo, r.hi);
    }
    extra_ = std::move(merged);
    for (const Run& r : extra_) entry(r.queue);  // so that normalize sees every queue with runs
  }
  if (changed || !extra_.empty()) normalize_all();
}

void Clock::meet(const Clock& o) {
  if (!t_) t_ = o.t_;
  host_ = std::min(host_, o.host_);
  // Ends known to both: below both prefixes and front ends, or in a run of one that the other knows.
  decltype(extra_) kept;  // inline: no allocation in the common case (meets run per wait candidate)
  auto clip = [&](const Clock& mine, const Clock& other) {
    for (const Run& r : mine.extra_) {
      const Entry* oe = other.find(r.queue);
      uint32_t od = oe ? oe->done : 0, of = oe ? oe->fe : 0;
      // The other's prefix, then its runs, then (one by one) its front-end commands below fe.
      if (r.lo < od) kept.push_back({r.queue, r.lo, std::min(r.hi, od)});
      uint32_t lo = std::max(r.lo, od);
      for (uint32_t i = lo; i < r.hi;) {
        auto it = std::partition_point(other.extra_.begin(), other.extra_.end(), [&](const Run& x) { return before(x, r.queue, i); });
        if (it != other.extra_.begin() && std::prev(it)->queue == r.queue && std::prev(it)->hi > i) {
          uint32_t hi = std::min(r.hi, std::prev(it)->hi);
          kept.push_back({r.queue, i, hi});
          i = hi;
          continue;
        }
        // Not in the other's runs: up to the next run, only its front-end commands below fe.
        uint32_t next = it != other.extra_.end() && it->queue == r.queue ? std::min(r.hi, it->lo) : r.hi;
        for (uint32_t j = i; j < std::min(next, of); ++j)
          if (front_end_cmd(r.queue, j)) kept.push_back({r.queue, j, j + 1});
        i = next;
      }
    }
  };
  clip(*this, o);
  clip(o, *this);
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
  std::sort(kept.begin(), kept.end(), [](const Run& x, const Run& y) { return x.queue != y.queue ? x.queue < y.queue : x.lo < y.lo; });
  extra_.clear();
  for (const Run& r : kept) append(extra_, r.queue, r.lo, r.hi);
  for (const Run& r : extra_) entry(r.queue);
  normalize_all();
}

bool Clock::covers(uint32_t q, uint32_t lo, uint32_t hi) const {
  const Entry* e = find(q);
  uint32_t d = e ? e->done : 0, f = e ? e->fe : 0;
  for (uint32_t i = std::max(lo, d); i < hi;) {
    auto it = std::partition_point(extra_.begin(), extra_.end(), [&](const Run& x) { return before(x, q, i); });
    if (it != extra_.begin() && std::prev(it)->queue == q && std::prev(it)->hi > i) {
      i = std::prev(it)->hi;
      continue;
    }
    if (i < f && front_end_cmd(q, i)) {
      ++i;
      continue;
    }
    return false;
  }
  return true;
}

bool Clock::leq(const Clock& o) const {
  if (host_ > o.host_) return false;
  for (const Entry& e : q_) {
    if (!o.covers(e.queue, 0, e.done)) return false;
    const Entry* oe = o.find(e.queue);
    for (uint32_t i = std::max(oe ? oe->fe : 0, e.done); i < e.fe; ++i)
      if (front_end_cmd(e.queue, i) && !o.knows(e.queue, i)) return false;
  }
  for (const Run& r : extra_)
    if (!o.covers(r.queue, r.lo, r.hi)) return false;
  return true;
}

}  // namespace qvet
