#include "model/clock.h"

#include <algorithm>
#include <array>
#include <iterator>

#include <boost/container/small_vector.hpp>

#include "model/queue_rules.h"
#include "model/trace.h"

namespace qvet {

namespace {
constexpr int kBits = 4;               // 16 ways a level
constexpr uint32_t kFan = 1u << kBits;
constexpr int kMaxHeight = 32 / kBits - 1;  // a root of this height covers every uint32_t queue id

int slot(uint32_t q, int height) { return int((q >> (kBits * height)) & (kFan - 1)); }
// The height a root needs to cover queue q.
int height_for(uint32_t q) {
  int h = 0;
  while (h < kMaxHeight && (q >> (kBits * (h + 1))) != 0) ++h;
  return h;
}

struct Entry {
  uint32_t queue;
  uint32_t done;  // commands [0, done) ended
  uint32_t fe;    // >= done: front-end commands below fe ended
  uint32_t lo_or_done() const { return done; }
  uint32_t hi_or_fe() const { return fe; }
};
// Known ends beyond the prefixes and front ends: commands [lo, hi) of a queue.
struct Run {
  uint32_t queue, lo, hi;
  uint32_t lo_or_done() const { return lo; }
  uint32_t hi_or_fe() const { return hi; }
};
struct ByQueue {
  template <class E>
  bool operator()(const E& e, uint32_t q) const { return e.queue < q; }
};
// Runs ordered by (queue, lo).
bool before(const Run& r, uint32_t q, uint32_t i) { return r.queue < q || (r.queue == q && r.lo <= i); }

bool front_end_cmd(const Trace* t, uint32_t q, uint32_t i) {
  return t && ends_at_front_end(t->cmds[t->queue_cmds[q][i]].op);
}
}  // namespace

// What a clock knows of 16 consecutive queues [base, base + 16): per queue a prefix and a
// front-end bound, plus runs of out-of-order ends. Inline storage: a leaf never allocates again.
struct Clock::Leaf : Node {
  uint32_t base = 0;
  boost::container::small_vector<Entry, kFan> q;  // sorted by queue, only queues with something known
  boost::container::small_vector<Run, 2> extra;    // sorted by (queue, lo), disjoint, not touching

  bool empty() const { return q.empty(); }  // every queue with a run has an entry
  bool same_as(const Leaf& o) const {  // the same entries and runs (so the same knowledge)
    auto eq = [](const auto& a, const auto& b) { return a.queue == b.queue && a.lo_or_done() == b.lo_or_done() && a.hi_or_fe() == b.hi_or_fe(); };
    return std::equal(q.begin(), q.end(), o.q.begin(), o.q.end(), eq) && std::equal(extra.begin(), extra.end(), o.extra.begin(), o.extra.end(), eq);
  }
  const Entry* find(uint32_t queue) const {
    uint32_t k = queue - base;
    if (k < q.size() && q[k].queue == queue) return &q[k];  // every queue below is present: the dense case
    auto it = std::lower_bound(q.begin(), q.end(), queue, ByQueue{});
    return it != q.end() && it->queue == queue ? &*it : nullptr;
  }
  Entry& entry(uint32_t queue) {  // found or inserted
    uint32_t k = queue - base;
    if (k < q.size() && q[k].queue == queue) return q[k];
    auto it = std::lower_bound(q.begin(), q.end(), queue, ByQueue{});
    if (it == q.end() || it->queue != queue) it = q.insert(it, Entry{queue, 0, 0});
    return *it;
  }
  bool in_extras(uint32_t queue, uint32_t i) const {
    if (extra.empty()) return false;
    // The last run that starts at or before i.
    auto it = std::partition_point(extra.begin(), extra.end(), [&](const Run& r) { return before(r, queue, i); });
    if (it == extra.begin()) return false;
    --it;
    return it->queue == queue && i < it->hi;
  }
  bool knows(const Trace* t, uint32_t queue, uint32_t i) const {
    if (const Entry* e = find(queue)) {
      if (i < e->done) return true;
      if (i < e->fe && front_end_cmd(t, queue, i)) return true;
    }
    return in_extras(queue, i);
  }
  template <class Runs>
  static void append(Runs& runs, uint32_t queue, uint32_t lo, uint32_t hi) {  // merges with the last run when they touch
    if (lo >= hi) return;
    if (!runs.empty() && runs.back().queue == queue && runs.back().hi >= lo) runs.back().hi = std::max(runs.back().hi, hi);
    else runs.push_back({queue, lo, hi});
  }
  // Restores the invariants of an entry: done as far as known ends reach, no run below done or
  // covered by fe.
  void normalize(const Trace* t, Entry& e) {
    uint32_t queue = e.queue;
    auto first = std::partition_point(extra.begin(), extra.end(), [&](const Run& r) { return r.queue < queue; });
    auto last = first;
    while (last != extra.end() && last->queue == queue) ++last;
    for (auto it = first;;) {
      while (it != last && it->hi <= e.done) ++it;
      if (it != last && it->lo <= e.done) {
        e.done = it->hi, ++it;
      } else if (e.done < e.fe && front_end_cmd(t, queue, e.done)) {
        ++e.done;
      } else {
        break;
      }
    }
    e.fe = std::max(e.fe, e.done);
    if (first == last) return;
    // Runs below done go; a run that starts below it is cut. Runs that only front-end commands
    // below fe (known) part are one: a front end that passes a wait between kernels whose ends are
    // known one by one (a chained queue's releases, each waited for) keeps one run, not one per
    // kernel. (Only the representation changes. A gap is looked at up to kBridge commands: a
    // program must put more waits than that between each two kernels to keep a run per kernel.)
    auto keep = first;
    for (auto it = first; it != last; ++it) {
      if (it->hi <= e.done) continue;
      Run r = *it;
      r.lo = std::max(r.lo, e.done);
      if (keep != first && bridged(t, e, std::prev(keep)->hi, r.lo)) std::prev(keep)->hi = r.hi;
      else *keep++ = r;
    }
    extra.erase(keep, last);
  }
  static constexpr uint32_t kBridge = 64;
  static bool bridged(const Trace* t, const Entry& e, uint32_t lo, uint32_t hi) {  // [lo, hi): known front-end commands
    if (hi > e.fe || hi - lo > kBridge) return false;
    for (uint32_t i = lo; i < hi; ++i)
      if (!front_end_cmd(t, e.queue, i)) return false;
    return true;
  }
  void normalize_all(const Trace* t) {
    for (Entry& e : q)
      if (e.fe > e.done || !extra.empty()) normalize(t, e);
  }
  void add_end(const Trace* t, uint32_t queue, uint32_t i) {
    Entry& e = entry(queue);
    if (i < e.done) return;
    if (front_end_cmd(t, queue, i)) {
      if (i < e.fe) return;
      // The front end passed it: fe moves past it when every front-end command before it is known.
      bool all = true;
      for (uint32_t j = e.fe; j < i && all; ++j) all = !front_end_cmd(t, queue, j) || in_extras(queue, j);
      if (all) {
        e.fe = i + 1;
        normalize(t, e);
        return;
      }
    }
    if (i == e.done) {
      ++e.done;
      normalize(t, e);
      return;
    }
    // Insert [i, i + 1), merging with the runs it touches.
    auto it = std::partition_point(extra.begin(), extra.end(), [&](const Run& r) { return before(r, queue, i); });
    if (it != extra.begin()) {
      auto prev = std::prev(it);
      if (prev->queue == queue && prev->hi >= i) {
        if (prev->hi > i) return;  // known
        prev->hi = i + 1;
        if (it != extra.end() && it->queue == queue && it->lo == i + 1) {
          prev->hi = it->hi;
          extra.erase(it);
        }
        return;
      }
    }
    if (it != extra.end() && it->queue == queue && it->lo == i + 1) {
      it->lo = i;
      return;
    }
    extra.insert(it, Run{queue, i, i + 1});
  }
  void join(const Trace* t, const Leaf& o) {
    bool changed = false;  // a queue needs normalizing
    if (q.size() == o.q.size() && (q.empty() || q.back().queue - base + 1 == q.size()) &&
        (o.q.empty() || o.q.back().queue - base + 1 == o.q.size())) {  // both dense over the same queues
      for (size_t k = 0, n = q.size(); k < n; ++k) {
        Entry& e = q[k];
        const Entry& f = o.q[k];
        e.done = std::max(e.done, f.done);
        e.fe = std::max(e.fe, f.fe);
        changed |= e.fe > e.done;
      }
    } else if (o.q.size() * 8 < q.size() && o.extra.empty()) {
      // A small leaf into a large one: each of its entries is looked up, and only those are
      // normalized.
      for (const Entry& f : o.q) {
        Entry& e = entry(f.queue);
        e.done = std::max(e.done, f.done);
        e.fe = std::max(e.fe, f.fe);
        if (e.fe > e.done || !extra.empty()) normalize(t, e);
      }
      return;
    } else {
      decltype(q) merged;
      auto a = q.cbegin();
      auto b = o.q.cbegin();
      while (a != q.cend() || b != o.q.cend()) {
        if (b == o.q.cend() || (a != q.cend() && a->queue < b->queue)) merged.push_back(*a++);
        else if (a == q.cend() || b->queue < a->queue) merged.push_back(*b++);
        else {
          merged.push_back({a->queue, std::max(a->done, b->done), std::max(a->fe, b->fe)});
          ++a, ++b;
        }
        changed |= merged.back().fe > merged.back().done;
      }
      q = std::move(merged);
    }
    if (!o.extra.empty()) {
      decltype(extra) merged;
      auto a = extra.cbegin();
      auto b = o.extra.cbegin();
      while (a != extra.cend() || b != o.extra.cend()) {
        bool take_a = b == o.extra.cend() || (a != extra.cend() && before(*a, b->queue, b->lo));
        const Run& r = take_a ? *a++ : *b++;
        append(merged, r.queue, r.lo, r.hi);
      }
      extra = std::move(merged);
      for (const Run& r : extra) entry(r.queue);  // so that normalize sees every queue with runs
    }
    if (changed || !extra.empty()) normalize_all(t);
  }
  void meet(const Trace* t, const Leaf& o) {
    // Ends known to both: below both prefixes and front ends, or in a run of one that the other knows.
    decltype(extra) kept;  // inline: no allocation in the common case (meets run per wait candidate)
    auto clip = [&](const Leaf& mine, const Leaf& other) {
      for (const Run& r : mine.extra) {
        const Entry* oe = other.find(r.queue);
        uint32_t od = oe ? oe->done : 0, of = oe ? oe->fe : 0;
        // The other's prefix, then its runs, then (one by one) its front-end commands below fe.
        if (r.lo < od) kept.push_back({r.queue, r.lo, std::min(r.hi, od)});
        uint32_t lo = std::max(r.lo, od);
        for (uint32_t i = lo; i < r.hi;) {
          auto it = std::partition_point(other.extra.begin(), other.extra.end(), [&](const Run& x) { return before(x, r.queue, i); });
          if (it != other.extra.begin() && std::prev(it)->queue == r.queue && std::prev(it)->hi > i) {
            uint32_t hi = std::min(r.hi, std::prev(it)->hi);
            kept.push_back({r.queue, i, hi});
            i = hi;
            continue;
          }
          // Not in the other's runs: up to the next run, only its front-end commands below fe.
          uint32_t next = it != other.extra.end() && it->queue == r.queue ? std::min(r.hi, it->lo) : r.hi;
          for (uint32_t j = i; j < std::min(next, of); ++j)
            if (front_end_cmd(t, r.queue, j)) kept.push_back({r.queue, j, j + 1});
          i = next;
        }
      }
    };
    clip(*this, o);
    clip(o, *this);
    decltype(q) both;
    auto a = q.cbegin();
    auto b = o.q.cbegin();
    while (a != q.cend() && b != o.q.cend()) {
      if (a->queue < b->queue) ++a;
      else if (b->queue < a->queue) ++b;
      else {
        Entry e{a->queue, std::min(a->done, b->done), std::min(a->fe, b->fe)};
        if (e.fe > 0) both.push_back(e);
        ++a, ++b;
      }
    }
    q = std::move(both);
    std::sort(kept.begin(), kept.end(), [](const Run& x, const Run& y) { return x.queue != y.queue ? x.queue < y.queue : x.lo < y.lo; });
    extra.clear();
    for (const Run& r : kept) append(extra, r.queue, r.lo, r.hi);
    for (const Run& r : extra) entry(r.queue);
    normalize_all(t);
  }
  bool covers(const Trace* t, uint32_t queue, uint32_t lo, uint32_t hi) const {  // knows every command in [lo, hi)
    const Entry* e = find(queue);
    uint32_t d = e ? e->done : 0, f = e ? e->fe : 0;
    for (uint32_t i = std::max(lo, d); i < hi;) {
      auto it = std::partition_point(extra.begin(), extra.end(), [&](const Run& x) { return before(x, queue, i); });
      if (it != extra.begin() && std::prev(it)->queue == queue && std::prev(it)->hi > i) {
        i = std::prev(it)->hi;
        continue;
      }
      if (i < f && front_end_cmd(t, queue, i)) {
        ++i;
        continue;
      }
      return false;
    }
    return true;
  }
  bool leq(const Trace* t, const Leaf& o) const {
    for (const Entry& e : q) {
      if (!o.covers(t, e.queue, 0, e.done)) return false;
      const Entry* oe = o.find(e.queue);
      for (uint32_t i = std::max(oe ? oe->fe : 0, e.done); i < e.fe; ++i)
        if (front_end_cmd(t, e.queue, i) && !o.knows(t, e.queue, i)) return false;
    }
    for (const Run& r : extra)
      if (!o.covers(t, r.queue, r.lo, r.hi)) return false;
    return true;
  }
};

struct Clock::Inner : Node {
  std::array<Ref, kFan> kid;
};

void Clock::destroy(Node* n) {
  Node* same = n->same.p;
  if (n->height == 0) delete static_cast<Leaf*>(n);
  else delete static_cast<Inner*>(n);  // its kids go with it (at most kMaxHeight levels deep)
  if (same) release(same);
}

void Clock::release(Node* n) {
  if (--n->refs == 0) destroy(n);
}

const Clock::Node* Clock::same_root(const Node* n) {
  const Node* root = n;
  while (root->same.p) root = root->same.p;
  // Each node on the path is pointed at the root, so chains stay short (links made in turn, each
  // from a root to a newer one, would otherwise grow one step per link).
  for (const Node* x = n; x->same.p && x->same.p != root;) {
    Node* next = x->same.p;
    ++const_cast<Node*>(root)->refs;
    x->same.p = const_cast<Node*>(root);
    if (next->refs == 1) {  // x held the last reference: next goes, and the rest of the path with it if unheld
      release(next);
      break;
    }
    --next->refs;
    x = next;
  }
  return root;
}

void Clock::link_same(const Node* a, const Node* b) {
  const Node* ra = same_root(a);
  const Node* rb = same_root(b);
  if (ra == rb) return;
  ++const_cast<Node*>(rb)->refs;
  ra->same.p = const_cast<Node*>(rb);
}

namespace {
template <class N, class R>
N& as(const R& r) { return *static_cast<N*>(r.get()); }
}  // namespace

const Clock::Leaf* Clock::leaf_of(uint32_t queue) const {
  const Node* n = root_.get();
  if (!n || height_for(queue) > n->height) return nullptr;
  for (int h = n->height; h > 0 && n; --h) n = static_cast<const Inner*>(n)->kid[slot(queue, h)].get();
  return static_cast<const Leaf*>(n);
}

void Clock::unshare(Ref& r, int height, uint32_t queue) {
  if (!r) {
    if (height == 0) {
      auto* l = new Leaf;
      l->base = queue & ~(kFan - 1);
      r = Ref(l);
    } else {
      auto* n = new Inner;
      n->height = uint8_t(height);
      r = Ref(n);
    }
  } else if (r->refs > 1) {  // shared with another clock: copy it (its kids are shared, not copied)
    Node* c = height == 0 ? static_cast<Node*>(new Leaf(as<Leaf>(r))) : new Inner(as<Inner>(r));
    c->refs = 1;
    r = Ref(c);
  }
  r->forget();  // about to be written: what any_known_queue and first_reaching found here may change
  if (Node* same = r->same.p) r->same.p = nullptr, release(same);  // and it may not stay the same as that
}

void Clock::grow(int height) {
  while (root_ && root_->height < height) {  // a taller root, with the old one as its first kid
    auto* n = new Inner;
    n->height = uint8_t(root_->height + 1);
    n->kid[0] = std::move(root_);
    root_ = Ref(n);
  }
}

Clock::Leaf& Clock::writable_leaf(uint32_t queue) {
  int need = height_for(queue);
  grow(need);
  int h = root_ ? root_->height : need;
  Ref* r = &root_;
  for (;; --h) {
    unshare(*r, h, queue);
    if (h == 0) return as<Leaf>(*r);
    r = &as<Inner>(*r).kid[slot(queue, h)];
  }
}

bool Clock::knows(uint32_t queue, uint32_t index) const {
  const Leaf* l = leaf_of(queue);
  return l && l->knows(t_, queue, index);
}

uint32_t Clock::done(uint32_t queue) const {
  const Leaf* l = leaf_of(queue);
  const Entry* e = l ? l->find(queue) : nullptr;
  return e ? e->done : 0;
}

std::vector<std::pair<uint32_t, uint32_t>> Clock::known_ranges(uint32_t queue) const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  const Leaf* l = leaf_of(queue);
  if (!l) return out;
  if (const Entry* e = l->find(queue); e && e->done) out.push_back({0, e->done});
  auto it = std::partition_point(l->extra.begin(), l->extra.end(), [&](const Run& r) { return r.queue < queue; });
  for (; it != l->extra.end() && it->queue == queue; ++it) out.push_back({it->lo, it->hi});
  return out;
}

bool Clock::queues_node(const Node* n, std::vector<uint32_t>& out, size_t limit) {
  if (!n) return true;
  if (n->height == 0) {
    for (const Entry& e : static_cast<const Leaf*>(n)->q) {
      if (out.size() == limit) return false;
      out.push_back(e.queue);
    }
    return true;
  }
  for (const Ref& k : static_cast<const Inner*>(n)->kid)
    if (!queues_node(k.get(), out, limit)) return false;
  return true;
}

bool Clock::queues(std::vector<uint32_t>& out, size_t limit) const { return queues_node(root_.get(), out, limit); }

bool Clock::ask_leaf(const Node* a, const OfQueue& f, Clock& into, uint64_t& budget) {
  for (const Entry& e : static_cast<const Leaf*>(a)->q) {
    if (budget == 0) return false;
    --budget;
    if (!f(e.queue, into)) return false;
  }
  return true;
}

const Clock* Clock::derived_of(const Node* a, Derived& d, const OfQueue& f, uint64_t& budget) const {
  auto it = d.at_.find(a);
  if (it == d.at_.end() && a->same.p) it = d.at_.find(same_root(a));  // one found to know the same
  if (it != d.at_.end()) return &it->second.second;
  Clock c(t_);
  if (a->height == 0) {
    if (!ask_leaf(a, f, c, budget)) return nullptr;
  } else {
    for (const Ref& k : static_cast<const Inner*>(a)->kid)
      if (k) {
        const Clock* kc = derived_of(k.get(), d, f, budget);
        if (!kc) return nullptr;
        c.join(*kc);
      }
  }
  Node* held = const_cast<Node*>(a);
  ++held->refs;  // kept with its clock: the node cannot go, nor be written in place, while kept
  return &d.at_.emplace(a, std::make_pair(Ref(held), std::move(c))).first->second.second;
}

bool Clock::join_beyond_node(const Node* a, const Node* b, Derived& d, const OfQueue& f, Clock& into, uint64_t& budget) const {
  if (!a || same_node(a, b)) return true;
  if (!b) {  // o knows nothing here: the subtree's derived clock, made once
    const Clock* c = derived_of(a, d, f, budget);
    if (!c) return false;
    uint64_t looked = 0;
    if (!c->leq(into, &looked)) into.join(*c);
    if (looked > budget) return budget = 0, false;
    budget -= looked;
    return true;
  }
  if (a->height == 0) return ask_leaf(a, f, into, budget);
  for (uint32_t k = 0; k < kFan; ++k)
    if (!join_beyond_node(static_cast<const Inner*>(a)->kid[k].get(), static_cast<const Inner*>(b)->kid[k].get(), d, f, into, budget))
      return false;
  return true;
}

bool Clock::join_beyond(const Clock& o, Derived& d, const OfQueue& f, Clock& into, uint64_t& budget) const {
  const Node* a = root_.get();
  const Node* b = o.root_.get();
  if (!a || same_node(a, b)) return true;
  // Aligned as in queues_beyond: ours above the other's height has no counterpart but its first kids.
  while (b && b->height > a->height) b = static_cast<const Inner*>(b)->kid[0].get();
  std::vector<const Node*> rest;
  while (b && a->height > b->height) {
    rest.push_back(a);
    a = static_cast<const Inner*>(a)->kid[0].get();
    if (!a) break;
  }
  if (!join_beyond_node(a, b, d, f, into, budget)) return false;
  for (auto it = rest.rbegin(); it != rest.rend(); ++it)
    for (uint32_t k = 1; k < kFan; ++k)
      if (!join_beyond_node(static_cast<const Inner*>(*it)->kid[k].get(), nullptr, d, f, into, budget)) return false;
  return true;
}

bool Clock::queues_beyond(const Clock& o, std::vector<uint32_t>& out, size_t limit) const {
  Derived walked;  // (each subtree once: nothing kept past this walk)
  Clock none(t_);
  uint64_t budget = limit;
  return join_beyond(o, walked, [&](uint32_t q, Clock&) { return out.push_back(q), true; }, none, budget);
}

struct Clock::Walk {
  const std::function<bool(uint32_t)>& f;
  uint32_t tag;  // any_known_queue's static tag (Node::none_for)
  uint64_t key;  // each_known_queue's stamped memo
  uint64_t stamp;
  const Fresh* fresh;  // null: any_known_queue (stops at the first queue f holds for)
  uint64_t& looked;
};

namespace {
// Queues [base, end) a node of this height covers.
uint64_t end_of(uint64_t base, int height) { return base + (uint64_t(kFan) << (kBits * height)); }
}  // namespace

bool Clock::any_known_node(const Node* n, uint64_t base, const uint32_t* lo, const uint32_t* hi, const Walk& w) {
  if (!n || lo == hi) return false;
  if (w.tag != kNoTag && n->none_for(w.tag)) return false;
  if (w.fresh)
    if (const Node::Slot* at = n->recalled(w.key); at && (*w.fresh)(base, end_of(base, n->height), at->stamp)) return false;
  ++w.looked;
  bool found = false;
  if (n->height == 0) {
    w.looked += uint64_t(hi - lo);
    const Leaf& l = *static_cast<const Leaf*>(n);
    for (const uint32_t* q = lo; q != hi && !(found && !w.fresh); ++q)
      if (l.find(*q) && w.f(*q)) found = true;
  } else {
    const uint64_t span = uint64_t(1) << (kBits * n->height);  // queues under each kid
    for (uint32_t k = 0; k < kFan && lo != hi && !(found && !w.fresh); ++k) {
      uint64_t end = base + (k + 1) * span;
      const uint32_t* mid = std::partition_point(lo, hi, [&](uint32_t q) { return q < end; });
      found |= any_known_node(static_cast<const Inner*>(n)->kid[k].get(), base + k * span, lo, mid, w);
      lo = mid;
    }
  }
  if (!found && w.fresh) n->remember(w.key).stamp = w.stamp;
  if (!found && w.tag != kNoTag) n->remember_none(w.tag);
  return found;
}

bool Clock::any_known_queue(const std::vector<uint32_t>& among, const std::function<bool(uint32_t)>& f, uint32_t tag,
                            uint64_t* looked) const {
  uint64_t n = 0;
  bool any = any_known_node(root_.get(), 0, among.data(), among.data() + among.size(), {f, tag, kNoKey, 0, nullptr, n});
  if (looked) *looked += n;
  return any;
}

void Clock::each_known_queue(const std::vector<uint32_t>& among, const std::function<bool(uint32_t)>& f, uint64_t key,
                             uint64_t stamp, const Fresh& fresh, uint64_t* looked) const {
  uint64_t n = 0;
  any_known_node(root_.get(), 0, among.data(), among.data() + among.size(), {f, kNoTag, key, stamp, &fresh, n});
  if (looked) *looked += n;
}

struct Clock::Fold {
  const std::function<uint64_t(uint32_t)>& f;
  uint64_t key, arg, stamp;
  const Fresh& fresh;
  uint64_t& looked;
  const Holds* holds;
  const std::function<uint64_t(uint32_t)>* below;
};

uint64_t Clock::max_known_node(const Node* n, uint64_t base, const uint32_t* lo, const uint32_t* hi, const Fold& w, uint64_t& low) {
  if (!n || lo == hi) return 0;
  if (const Node::Slot* sl = n->recalled(w.key);
      sl && (sl->arg == w.arg || (w.holds && (*w.holds)(sl->arg, sl->value, w.arg)) || (w.below && sl->low < w.arg && w.arg < sl->arg)) &&
      w.fresh(base, end_of(base, n->height), sl->stamp)) {
    low = std::max(low, sl->low);  // (taken through `holds`: it holds for every argument from then to arg)
    return sl->value;
  }
  ++w.looked;
  uint64_t v = 0, mine = 0;
  if (n->height == 0) {
    w.looked += uint64_t(hi - lo);
    const Leaf& l = *static_cast<const Leaf*>(n);
    for (const uint32_t* q = lo; q != hi; ++q)
      if (l.find(*q)) {
        v = std::max(v, w.f(*q));
        if (w.below) mine = std::max(mine, (*w.below)(*q));
      }
  } else {
    const uint64_t span = uint64_t(1) << (kBits * n->height);
    for (uint32_t k = 0; k < kFan && lo != hi; ++k) {
      const uint32_t* mid = std::partition_point(lo, hi, [&](uint32_t q) { return q < base + (k + 1) * span; });
      v = std::max(v, max_known_node(static_cast<const Inner*>(n)->kid[k].get(), base + k * span, lo, mid, w, mine));
      lo = mid;
    }
  }
  Node::Slot& sl = n->remember(w.key);
  sl.value = v, sl.arg = w.arg, sl.stamp = w.stamp, sl.low = w.below ? std::min(mine, w.arg) : w.arg;
  low = std::max(low, sl.low);
  return v;
}

uint64_t Clock::max_known(const std::vector<uint32_t>& among, const std::function<uint64_t(uint32_t)>& f, uint64_t key,
                          uint64_t arg, uint64_t stamp, const Fresh& fresh, uint64_t* looked, const Holds* holds,
                          const std::function<uint64_t(uint32_t)>* below) const {
  uint64_t n = 0, low = 0;
  uint64_t v = max_known_node(root_.get(), 0, among.data(), among.data() + among.size(), {f, key, arg, stamp, fresh, n, holds, below}, low);
  if (looked) *looked += n;
  return v;
}

struct Clock::Reach {
  const Bound& b;
  uint64_t at_least;
  const std::function<bool(uint32_t)>& take;
  const std::function<uint32_t(uint64_t, uint64_t)>& take_unknown;
  uint64_t& looked;
};

// The queues [base, base + 16^(height + 1)) a node of that height covers.
uint64_t Clock::bound_node(const Node* n, uint64_t base, int height, const Reach& r) {
  const uint64_t end = end_of(base, height);
  if (!n) return r.b.unknown(base, end);
  if (const Node::Slot* sl = n->recalled(r.b.key)) return sl->value;
  ++r.looked;
  uint64_t v = 0;
  if (height == 0) {
    uint64_t next = base;  // the first queue not valued yet
    for (const Entry& e : static_cast<const Leaf*>(n)->q) {
      if (e.queue > next) v = std::max(v, r.b.unknown(next, e.queue));
      v = std::max(v, r.b.known(e.queue));
      next = uint64_t(e.queue) + 1;
    }
    if (next < end) v = std::max(v, r.b.unknown(next, end));
  } else {
    const uint64_t span = uint64_t(1) << (kBits * height);
    for (uint32_t k = 0; k < kFan; ++k) v = std::max(v, bound_node(static_cast<const Inner*>(n)->kid[k].get(), base + k * span, height - 1, r));
  }
  n->remember(r.b.key).value = v;
  return v;
}

// `floor` is raised to the largest `at_least` at which a queue here might be taken, where none was.
uint32_t Clock::reach_node(const Node* n, uint64_t base, int height, const Reach& r, uint64_t& floor) {
  const uint64_t end = end_of(base, height);
  auto gap = [&](uint64_t lo, uint64_t hi, uint64_t& f) {  // queues [lo, hi) it knows nothing of
    if (const uint64_t u = r.b.unknown(lo, hi); u < r.at_least) {
      f = std::max(f, u);
      return kNoQueue;
    }
    const uint32_t q = r.take_unknown(lo, hi);
    if (q == kNoQueue) f = std::max(f, r.at_least - 1);  // (at_least is at least u + 1 here)
    return q;
  };
  if (!n) return gap(base, end, floor);
  if (const uint64_t v = bound_node(n, base, height, r); v < r.at_least) {
    floor = std::max(floor, v);
    return kNoQueue;
  }
  // Taken for none here at an `at_least` this low, and nothing has changed under it since.
  const Node::Slot* sl = r.b.fresh ? n->recalled(r.b.key) : nullptr;
  if (sl && sl->arg && r.at_least >= sl->arg && (*r.b.fresh)(base, end, sl->stamp)) {
    floor = std::max(floor, sl->arg - 1);
    return kNoQueue;
  }
  ++r.looked;
  uint32_t found = kNoQueue;
  uint64_t mine = 0;
  if (height == 0) {
    uint64_t next = base;
    for (const Entry& e : static_cast<const Leaf*>(n)->q) {
      if (e.queue > next && (found = gap(next, e.queue, mine)) != kNoQueue) return found;
      if (const uint64_t kv = r.b.known(e.queue); kv < r.at_least) mine = std::max(mine, kv);
      else if (r.take(e.queue)) return e.queue;
      else mine = std::max(mine, r.b.refused ? std::min(r.b.refused(e.queue), r.at_least - 1) : r.at_least - 1);
      next = uint64_t(e.queue) + 1;
    }
    if (next < end) found = gap(next, end, mine);
  } else {
    const uint64_t span = uint64_t(1) << (kBits * height);
    for (uint32_t k = 0; k < kFan && found == kNoQueue; ++k)
      found = reach_node(static_cast<const Inner*>(n)->kid[k].get(), base + k * span, height - 1, r, mine);
  }
  if (found != kNoQueue) return found;
  floor = std::max(floor, mine);
  if (r.b.fresh)
    if (Node::Slot* slot = n->recalled(r.b.key)) slot->arg = mine + 1, slot->stamp = r.b.stamp;
  return kNoQueue;
}

uint32_t Clock::first_reaching(const Bound& b, uint64_t at_least, const std::function<bool(uint32_t)>& take,
                               const std::function<uint32_t(uint64_t, uint64_t)>& take_unknown, uint64_t* looked) const {
  uint64_t n = 0;
  Reach r{b, at_least, take, take_unknown, n};
  const int h = root_ ? root_->height : -1;
  uint64_t covered = root_ ? uint64_t(kFan) << (kBits * h) : 0;  // queues [0, covered) under the root
  uint64_t floor = 0;
  uint32_t q = root_ ? reach_node(root_.get(), 0, h, r, floor) : kNoQueue;
  const uint64_t all = uint64_t(1) << 32;
  if (q == kNoQueue && covered < all && b.unknown(covered, all) >= at_least) q = take_unknown(covered, all);
  if (looked) *looked += n;
  return q;
}

void Clock::add_end(uint32_t queue, uint32_t index) {
  if (knows(queue, index)) return;  // nothing to copy
  writable_leaf(queue).add_end(t_, queue, index);
}

bool Clock::take_if_same(Ref& a, const Ref& b, int height) {
  if (same_node(a.get(), b.get())) {  // one history, or found the same before
    if (a.get() != b.get()) a = b;
    return true;
  }
  if (!a || !b || height > 0 || !as<Leaf>(a).same_as(as<Leaf>(b))) return false;
  if (a->refs > 1) link_same(a.get(), b.get());
  a = b;
  return true;
}

bool Clock::join_node(Ref& a, const Ref& b, int height) {
  if (take_if_same(a, b, height)) return true;
  if (!b) return false;  // nothing to add
  if (!a) {
    a = b;  // a subtree only the other knows: shared, not copied
    return false;
  }
  // A node another clock holds too that turns out to know what b's knows is linked to it.
  const Node* orig = a.get();
  const bool shared = orig->refs > 1;
  unshare(a, height, 0);
  // Where the union is what b knows, b's node is taken: a queue's clocks that keep joining the
  // same history (a queue's ends into its accumulated clock) then share it, and later joins skip
  // it, instead of walking every subtree both ever wrote (a fan-in of thousands of queues).
  if (height == 0) {
    as<Leaf>(a).join(t_, as<Leaf>(b));
    if (as<Leaf>(a).same_as(as<Leaf>(b))) a = b;
    return false;
  }
  bool same = true, equal = true;
  for (uint32_t k = 0; k < kFan; ++k) {
    Ref& kid = as<Inner>(a).kid[k];
    equal &= join_node(kid, as<Inner>(b).kid[k], height - 1);
    same &= kid.get() == as<Inner>(b).kid[k].get();
  }
  if (equal && shared) link_same(orig, b.get());
  if (same) a = b;
  return equal;
}

void Clock::join(const Clock& o) {
  if (!t_) t_ = o.t_;
  open_ |= o.open_;
  see_host(o.host_);
  if (!o.root_ || root_.get() == o.root_.get()) return;
  int hb = o.root_->height;
  grow(hb);
  // The other's root covers the first queues: it meets ours along our first kids.
  Ref* r = &root_;
  for (int h = root_ ? root_->height : hb; h > hb; --h) {
    unshare(*r, h, 0);
    r = &as<Inner>(*r).kid[0];
  }
  join_node(*r, o.root_, hb);
}

bool Clock::meet_node(Ref& a, const Ref& b, int height) {
  if (take_if_same(a, b, height)) return true;
  if (!a) return false;
  if (!b) {
    a = Ref();
    return false;
  }
  const Node* orig = a.get();
  const bool shared = orig->refs > 1;
  unshare(a, height, 0);
  bool empty = true, same = true, equal = height > 0;
  if (height == 0) {
    as<Leaf>(a).meet(t_, as<Leaf>(b));
    empty = as<Leaf>(a).empty();
    same = !empty && as<Leaf>(a).same_as(as<Leaf>(b));
  } else {
    for (uint32_t k = 0; k < kFan; ++k) {
      Ref& kid = as<Inner>(a).kid[k];
      equal &= meet_node(kid, as<Inner>(b).kid[k], height - 1);
      empty &= !kid;
      same &= kid.get() == as<Inner>(b).kid[k].get();
    }
  }
  if (equal && shared) link_same(orig, b.get());
  if (empty) a = Ref();  // no empty nodes: a node is there only where something is known
  // Where the intersection is what b knows, b's node is taken (as join does): two clocks that
  // know the same there but hold different nodes (an earlier round's override, this round's
  // clocks) leave one copy, not one per meet.
  else if (same) a = b;
  return equal;
}

void Clock::meet(const Clock& o) {
  if (!t_) t_ = o.t_;
  open_ |= o.open_;  // (what an open clock knows of an event's end need not be in the other)
  host_ = std::min(host_, o.host_);
  if (root_.get() == o.root_.get()) return;
  // Only the first queues of the taller root meet the other's: its first kids down to the other's height.
  while (root_ && o.root_ && root_->height > o.root_->height) {
    Ref k = as<Inner>(root_).kid[0];
    root_ = std::move(k);
  }
  const Ref* b = &o.root_;
  while (root_ && *b && (*b)->height > root_->height) b = &as<Inner>(*b).kid[0];
  if (!*b) root_ = Ref();
  if (root_) meet_node(root_, *b, root_->height);
}

bool Clock::leq_node(const Node* a, const Node* b, int height, uint64_t* looked) const {
  if (!a || same_node(a, b)) return true;
  if (looked) ++*looked;
  if (height == 0) {
    static const Leaf kNothing;
    return static_cast<const Leaf*>(a)->leq(t_, b ? *static_cast<const Leaf*>(b) : kNothing);
  }
  for (uint32_t k = 0; k < kFan; ++k) {
    const Node* bk = b ? static_cast<const Inner*>(b)->kid[k].get() : nullptr;
    if (!leq_node(static_cast<const Inner*>(a)->kid[k].get(), bk, height - 1, looked)) return false;
  }
  return true;
}

bool Clock::leq(const Clock& o, uint64_t* looked) const {
  if (host_ > o.host_) return false;
  const Node* a = root_.get();
  const Node* b = o.root_.get();
  if (!a || same_node(a, b)) return true;
  // Align the two roots: the taller one's first kids cover the other's queues; the taller one's
  // other kids (when it is ours) must know nothing the other does not, which is nothing.
  while (b && b->height > a->height) b = static_cast<const Inner*>(b)->kid[0].get();
  while (a->height > (b ? b->height : 0) && a->height > 0) {
    const auto* in = static_cast<const Inner*>(a);
    for (uint32_t k = 1; k < kFan; ++k)
      if (!leq_node(in->kid[k].get(), nullptr, a->height - 1, looked)) return false;
    a = in->kid[0].get();
    if (!a) return true;
  }
  return leq_node(a, b, a->height, looked);
}

}  // namespace qvet
