#include "model/meet_above.h"

namespace qvet {

namespace {
uint32_t mix(uint32_t x) {  // a fixed scramble of the tie (splitmix64's finalizer): the treap's priority
  uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return uint32_t((z ^ (z >> 31)) >> 32);
}
}  // namespace

void MeetAbove::take(Answer& a, const Clock& meet, size_t count, uint64_t order, uint32_t id) const {
  if (a.count == 0) a.meet = meet;
  else a.meet.meet(meet), ++meets_;
  a.count += count;
  if (order < a.first_order) a.first_order = order, a.first = id;
}

void MeetAbove::pull(uint32_t n) {
  Node& x = nodes_[n];
  x.met = false;
  x.meet = Clock();
  x.count = 1;
  x.first_order = x.order, x.first = x.id;
  for (uint32_t c : {x.left, x.right}) {
    if (c == kNil) continue;
    const Node& y = nodes_[c];
    x.count += y.count;
    if (y.first_order < x.first_order) x.first_order = y.first_order, x.first = y.first;
  }
}

const Clock& MeetAbove::meet_of(uint32_t n) const {
  if (nodes_[n].met) return nodes_[n].meet;
  Clock m = nodes_[n].end;
  for (uint32_t c : {nodes_[n].left, nodes_[n].right})
    if (c != kNil) m.meet(meet_of(c)), ++meets_;
  nodes_[n].meet = std::move(m);
  nodes_[n].met = true;
  return nodes_[n].meet;
}

// Inserts node x under n (which may be kNil); returns the subtree's new root. Rotations keep the
// larger priority above; every node whose subtree changed is pulled on the way back up.
uint32_t MeetAbove::insert_under(uint32_t n, uint32_t x) {
  if (n == kNil) return x;
  if (below(x, n)) {
    uint32_t l = insert_under(nodes_[n].left, x);
    nodes_[n].left = l;
    if (nodes_[l].priority > nodes_[n].priority) {  // rotate right: l takes n's place
      nodes_[n].left = nodes_[l].right;
      pull(n);
      nodes_[l].right = n;
      n = l;
    }
  } else {
    uint32_t r = insert_under(nodes_[n].right, x);
    nodes_[n].right = r;
    if (nodes_[r].priority > nodes_[n].priority) {  // rotate left
      nodes_[n].right = nodes_[r].left;
      pull(n);
      nodes_[r].left = n;
      n = r;
    }
  }
  pull(n);
  return n;
}

void MeetAbove::insert(uint64_t key, uint32_t tie, uint64_t order, uint32_t id, const Clock& end) {
  uint32_t x = uint32_t(nodes_.size());
  nodes_.push_back(Node{key, order, tie, id, mix(tie), kNil, kNil, end, end, true, 1, order, id});
  root_ = insert_under(root_, x);
}

MeetAbove::Answer MeetAbove::at_least(uint64_t key) const {
  Answer a;
  for (uint32_t n = root_; n != kNil;) {
    const Node& x = nodes_[n];
    if (x.key < key) {
      n = x.right;
      continue;
    }
    take(a, x.end, 1, x.order, x.id);  // it and everything right of it are at or above
    if (x.right != kNil) {
      const Node& r = nodes_[x.right];
      take(a, meet_of(x.right), r.count, r.first_order, r.first);
    }
    n = x.left;
  }
  return a;
}

}  // namespace qvet
