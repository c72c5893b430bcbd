// Clock: what an event knows has already happened, per queue, and how far the host got.
//
// For a queue q it knows the ends of: its first `done` commands; every command below `fe` that
// ends when its front end passes it (a wait, a memory_barrier: `ends_at_front_end`), so a front
// end that ran ahead of slow kernels does not collect one entry per wait; and a few runs of
// consecutive commands beyond those (overlapping and chained queues finish out of order; a chain
// of kernels behind a wait is one run, not one entry per kernel; so are runs that only front-end
// commands it knows part, as a host that waited for each release of a chained queue but the first
// learns). Queues it knows nothing of take
// no room. Host statements are totally ordered, so one number covers the host.
// join is the union of knowledge (an event after both), meet the intersection (the wait rule:
// what happens before every candidate write).
//
// Representation: a persistent radix tree over queue ids (16 ways a level; a leaf holds the
// entries of 16 consecutive queues), shared copy-on-write between clocks. Copying a clock is
// one reference; changing one queue's entry copies one path; join, meet and leq skip subtrees
// the two clocks share and take a whole subtree the other lacks. So a program whose events each
// hear of thousands of queues (a chain of waits across them, a host that waits on each in turn)
// stores clocks in room and time linear in the program, not in events times queues.
//
// A clock reads its trace's commands (to tell which end at the front end); the Trace must
// outlive it. Clocks of different traces are never mixed. Not thread-safe: the reference counts
// are plain integers, and clocks that share nodes must stay on one thread.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <unordered_map>
#include <vector>

namespace qvet {

struct Trace;

class Clock {
 public:
  Clock() = default;
  explicit Clock(const Trace* t) : t_(t) {}

  // Whether it may not be down-closed: it may know an event without knowing all that the event's
  // end knows, or know events not run yet (Engine: an earlier round's clock that a forced wait
  // learned from). Joins and meets carry it; the shortcuts that rest on down-closed clocks ask it.
  bool open() const { return open_; }
  void set_open(bool open) { open_ = open; }
  int64_t host() const { return host_; }
  void see_host(int64_t h) { host_ = h > host_ ? int32_t(h) : host_; }
  void unsee_host(int64_t h) { host_ = h - 1 < host_ ? int32_t(h - 1) : host_; }  // undoes see_host(h) of the next host event
  bool knows_host(uint32_t h) const { return int64_t(h) <= host_; }
  bool knows(uint32_t queue, uint32_t index) const;
  void add_end(uint32_t queue, uint32_t index);  // the end of command `index` of `queue` happened
  uint32_t done(uint32_t queue) const;            // commands [0, done) of `queue` are known
  // The commands of `queue` it knows that do not end at the front end (everything but waits and
  // memory_barriers), as sorted, disjoint index ranges [lo, hi): the prefix, then the runs.
  std::vector<std::pair<uint32_t, uint32_t>> known_ranges(uint32_t queue) const;
  // Appends the queues it knows anything of, in increasing order, to `out`; false (and `out` cut
  // short) once there are more than `limit` of them, so a caller can choose the cheaper walk.
  bool queues(std::vector<uint32_t>& out, size_t limit) const;
  // The same, but for the subtrees it shares with `o` (one tree there, so nothing beyond o's
  // knowledge): a clock made from `o` by a few joins is asked for the queues it may add to `o`.
  bool queues_beyond(const Clock& o, std::vector<uint32_t>& out, size_t limit) const;
  // Clocks a caller derives from subtrees, one per node, kept while the Derived lives (Engine: the
  // join of a round's ends of the writes an override knows there, for the thousands of overrides
  // that learned the same subtree). It holds the nodes it keeps a clock for.
  class Derived;
  // Joins into `into` what `of_queue` derives from each queue this clock knows in subtrees it does
  // not share with `o` (those queues_beyond lists). `of_queue(q, c)` joins into c what it derives
  // from this clock's entry for q (false where it cannot), and may depend on o only through what o
  // knows of q. Where o knows nothing of a whole subtree, the join of what `of_queue` gives for its
  // queues is kept in `derived` under the subtree's node, and taken from there when a clock that
  // holds that node (or one linked to it) asks again: `of_queue` must give the same for as long as
  // `derived` lives. `budget` goes down by one per queue asked and by the nodes a comparison of a
  // kept clock with `into` walks; false when it runs out, or where `of_queue` is false.
  using OfQueue = std::function<bool(uint32_t queue, Clock& into)>;
  bool join_beyond(const Clock& o, Derived& derived, const OfQueue& of_queue, Clock& into, uint64_t& budget) const;
  // Calls `f` for each of `among` (sorted queue ids) that it knows anything of, in order, until
  // `f` returns true (then true): walks only the subtrees that hold both, not every queue it knows.
  // With a `tag` other than kNoTag, a subtree where `f` held for none is remembered as such (every
  // tag a node is asked), and skipped when a clock that shares it is asked again: the caller promises that `f`
  // depends only on the clock's entry for the queue and that, for one tag, `among` and `f` never
  // change. (A relay of thousands of queues asks each start of the same, mostly shared, tree.)
  // `looked`, if given, grows by the nodes and queues it looked at (a deterministic cost).
  static constexpr uint32_t kNoTag = ~uint32_t(0);
  static constexpr uint64_t kNoKey = ~uint64_t(0);
  // Callers' keys (below) are under 2^63: keys with the top bit are the clock's own (tags).
  static constexpr uint64_t kNoneKey = uint64_t(1) << 63;
  bool any_known_queue(const std::vector<uint32_t>& among, const std::function<bool(uint32_t)>& f,
                       uint32_t tag = kNoTag, uint64_t* looked = nullptr) const;
  // The same walk, but it calls `f` for every such queue (it never stops early), and `f` may
  // change as the caller's state does: a "none here" is remembered under `key` with the caller's
  // `stamp`, and `fresh(lo, hi, stamp)` says whether one remembered at `stamp` still holds for
  // queues [lo, hi). Stamps must tell apart every state of every caller whose clocks share nodes
  // (Engine: one counter for the process). Keys are shared with first_reaching's and max_known's.
  // (Engine::known_latest: the latest writes a start knows, among thousands no start knows.)
  using Fresh = std::function<bool(uint64_t lo, uint64_t hi, uint64_t stamp)>;
  void each_known_queue(const std::vector<uint32_t>& among, const std::function<bool(uint32_t)>& f, uint64_t key,
                        uint64_t stamp, const Fresh& fresh, uint64_t* looked = nullptr) const;
  // The largest `f(q)` over the queues of `among` (sorted queue ids) it knows anything of, or 0:
  // cached per node under `key` with `arg` and the caller's `stamp`, and taken from the cache
  // while `fresh` says it holds, so clocks sharing a subtree compute it once while nothing under
  // it changed. `f` may depend only on the clock's entry for q, on `arg` and on caller state that
  // `fresh` answers for. (Engine::top_known_latest: a start's last latest write that meets a
  // wait, among thousands it knows.) With `holds`, an answer `value` remembered for another
  // argument `then` is taken where `holds(then, value, arg)` says it is the answer for `arg` too
  // (a wait for more than one remembered, whose answer meets it as well: waits whose thresholds
  // alternate share one slot). With `below`, `below(q)` is the largest argument under `arg` at
  // which f(q) may differ (0: none), and an answer remembered for `then` is taken for any `arg` in
  // (the largest below(q) under the node, then]: thresholds that fall, with no value between.
  using Holds = std::function<bool(uint64_t then, uint64_t value, uint64_t arg)>;
  uint64_t max_known(const std::vector<uint32_t>& among, const std::function<uint64_t(uint32_t)>& f, uint64_t key,
                     uint64_t arg, uint64_t stamp, const Fresh& fresh, uint64_t* looked = nullptr,
                     const Holds* holds = nullptr, const std::function<uint64_t(uint32_t)>* below = nullptr) const;

  // A value per queue that the caller computes from what the clock knows of it, and the largest of
  // them over a subtree, cached on the subtree's node under `key` (a few keys a node) so that
  // clocks sharing a subtree compute it once. `known(q)` values a queue the clock has an entry
  // for; `unknown(lo, hi)` the queues [lo, hi) it knows nothing of, together. Both must depend on
  // nothing but those entries and never change for one key (nor for a clock of the same trace).
  // With `fresh`, a subtree where no queue was taken is remembered too, with `stamp`, and
  // skipped for an `at_least` as high while `fresh` says it holds: then `take` may also depend on
  // caller state that `fresh` answers for (writes made since), and on nothing else. With
  // `refused`, `refused(q)` for a queue `take` refused is the largest `at_least` at which it might
  // take it (0: none), and the subtree is skipped for any `at_least` above the largest of those
  // and of the values that fell short: waits whose thresholds fall, each refused the same writers.
  struct Bound {
    uint64_t key;
    std::function<uint64_t(uint32_t)> known;
    std::function<uint64_t(uint64_t, uint64_t)> unknown;
    uint64_t stamp = 0;
    const Fresh* fresh = nullptr;
    std::function<uint64_t(uint32_t)> refused;
  };
  // The first queue, in id order, whose value reaches `at_least` and that the caller accepts
  // (`take(q)` for a queue with an entry, `take_unknown(lo, hi)` returning the first it accepts of
  // the queues [lo, hi) it knows nothing of, or kNoQueue), or kNoQueue: subtrees whose largest
  // value falls short are skipped, so the cost is that of the subtrees that reach it.
  // (Engine::resolve_unlisted: a wait's first candidate among thousands of writers.)
  static constexpr uint32_t kNoQueue = ~uint32_t(0);
  uint32_t first_reaching(const Bound& b, uint64_t at_least, const std::function<bool(uint32_t)>& take,
                          const std::function<uint32_t(uint64_t, uint64_t)>& take_unknown, uint64_t* looked = nullptr) const;

  // Whether the two hold one tree (not only the same knowledge): a join that adds nothing to what
  // `o` knows leaves this clock holding o's tree, so later joins of the two skip it.
  bool same_tree(const Clock& o) const { return root_.get() == o.root_.get(); }
  void join(const Clock& o);
  void meet(const Clock& o);
  // Everything this clock knows, o knows too. `looked`, if given, grows by the nodes it walked.
  bool leq(const Clock& o, uint64_t* looked = nullptr) const;

 private:
  struct Node {  // the tree's nodes: a Leaf at height 0, an Inner above (clock.cpp)
    uint32_t refs = 1;
    uint8_t height = 0;
    // What first_reaching, max_known and each_known_queue found here, per key: a value (a
    // largest value, or the stamp of a "none here"), and for stamped answers the argument and
    // stamp they hold for (first_reaching: the least `at_least` no queue here was taken for;
    // max_known: its `arg`). Made when first asked; reset when written, and a copy of the node
    // (copy on write) starts without them. Every key asked is kept: a few signals asked in turn,
    // each under three or four keys, evicted each other's answers from a fixed few slots, and each
    // wait walked the whole tree again. A slot is made only after a walk below the node, so slots
    // are fewer than the walks' steps. Past kScan keys, an index finds them.
    struct Slot {
      uint64_t key = kNoKey, value = 0, arg = 0, stamp = 0;
      uint64_t low = 0;  // max_known with `below`: the answer holds for arguments in (low, arg]
    };
    struct Memo {
      static constexpr size_t kScan = 8;
      std::vector<Slot> slot;
      std::unordered_map<uint64_t, uint32_t> at;  // key -> place in slot, once slot has more than kScan
    };
    struct MemoPtr {
      Memo* p = nullptr;
      MemoPtr() = default;
      MemoPtr(const MemoPtr&) {}
      MemoPtr& operator=(const MemoPtr&) { return reset(), *this; }
      ~MemoPtr() { reset(); }
      void reset() { delete p, p = nullptr; }
    };
    mutable MemoPtr memo;
    // Another node found to hold the same knowledge (a counted reference; not copied with the
    // node, dropped when it is written): rounds of Engine::refine build equal subtrees from
    // different nodes (an override's, this round's), and once one walk has found two of them
    // equal, later joins, meets and comparisons of the two take one step, not a walk (see
    // Clock::same_node). Links only go from a node to one without a link, so they form trees.
    struct Link {
      Node* p = nullptr;
      Link() = default;
      Link(const Link&) {}
      Link& operator=(const Link&) { return *this; }
    };
    mutable Link same;
    Slot* recalled(uint64_t key) const {
      if (!memo.p) return nullptr;
      std::vector<Slot>& sl = memo.p->slot;
      if (sl.size() > Memo::kScan) {
        auto it = memo.p->at.find(key);
        return it == memo.p->at.end() ? nullptr : &sl[it->second];
      }
      for (Slot& x : sl)
        if (x.key == key) return &x;
      return nullptr;
    }
    Slot& remember(uint64_t key) const {  // the slot for `key`, made where there was none
      if (Slot* x = recalled(key)) return *x;
      if (!memo.p) memo.p = new Memo;
      std::vector<Slot>& sl = memo.p->slot;
      sl.push_back(Slot{key});
      if (sl.size() > Memo::kScan) {
        if (memo.p->at.empty())
          for (uint32_t i = 0; i < sl.size(); ++i) memo.p->at.emplace(sl[i].key, i);
        else
          memo.p->at.emplace(key, uint32_t(sl.size() - 1));
      }
      return sl.back();
    }
    // any_known_queue found nothing here for `tag` (a slot of its own key, kNoneKey | tag).
    bool none_for(uint32_t tag) const { return recalled(kNoneKey | tag) != nullptr; }
    void remember_none(uint32_t tag) const { remember(kNoneKey | tag); }
    void forget() const { memo.reset(); }
  };
  struct Leaf;
  struct Inner;
  static void destroy(Node* n);
  static void release(Node* n);  // drops a counted reference held outside a Ref (Node::same)
  // The node at the end of n's links (n itself without one); shortens the path it walked.
  static const Node* same_root(const Node* n);
  // Whether two nodes are known to hold the same knowledge: one node, or linked.
  static bool same_node(const Node* a, const Node* b) {
    return a == b || (a && b && (a->same.p || b->same.p) && same_root(a) == same_root(b));
  }
  static void link_same(const Node* a, const Node* b);  // a and b were found to hold the same
  // A counted reference to a node (null: the subtree knows nothing).
  class Ref {
   public:
    Ref() = default;
    explicit Ref(Node* n) : n_(n) {}  // adopts a new node
    Ref(const Ref& o) : n_(o.n_) { if (n_) ++n_->refs; }
    Ref(Ref&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
    Ref& operator=(Ref o) noexcept { std::swap(n_, o.n_); return *this; }
    ~Ref() { if (n_ && --n_->refs == 0) destroy(n_); }
    Node* get() const { return n_; }
    Node* operator->() const { return n_; }
    explicit operator bool() const { return n_ != nullptr; }

   private:
    Node* n_ = nullptr;
  };

  const Leaf* leaf_of(uint32_t queue) const;  // the leaf holding `queue`, or null
  Leaf& writable_leaf(uint32_t queue);        // the same, made or copied so this clock owns its path
  void unshare(Ref& r, int height, uint32_t queue);
  void grow(int height);  // a root at least this tall (the old root its first kids)  // r is this clock's own node (made when null)
  // Where a is known (one node, or linked) or found (two leaves compared) to hold what b holds: a
  // takes b's node, and a's, where another clock holds it too, is linked to b's. True then.
  bool take_if_same(Ref& a, const Ref& b, int height);
  // Both return whether a held what b holds before (then a holds b's node after).
  bool join_node(Ref& a, const Ref& b, int height);
  bool meet_node(Ref& a, const Ref& b, int height);
  bool leq_node(const Node* a, const Node* b, int height, uint64_t* looked) const;
  static bool queues_node(const Node* n, std::vector<uint32_t>& out, size_t limit);
  static bool ask_leaf(const Node* a, const OfQueue& f, Clock& into, uint64_t& budget);  // f of each of its queues
  bool join_beyond_node(const Node* a, const Node* b, Derived& d, const OfQueue& f, Clock& into, uint64_t& budget) const;
  const Clock* derived_of(const Node* a, Derived& d, const OfQueue& f, uint64_t& budget) const;  // null where f failed
  struct Walk;  // one any_known_queue or each_known_queue (clock.cpp)
  static bool any_known_node(const Node* n, uint64_t base, const uint32_t* lo, const uint32_t* hi, const Walk& w);
  struct Fold;  // one max_known (clock.cpp)
  static uint64_t max_known_node(const Node* n, uint64_t base, const uint32_t* lo, const uint32_t* hi, const Fold& w, uint64_t& low);
  struct Reach;  // one first_reaching (clock.cpp)
  static uint64_t bound_node(const Node* n, uint64_t base, int height, const Reach& r);
  static uint32_t reach_node(const Node* n, uint64_t base, int height, const Reach& r, uint64_t& floor);

  const Trace* t_ = nullptr;
  int32_t host_ = -1;  // (host events are fewer than kMaxEvents, model/trace.h: 32 bits hold them)
  bool open_ = false;
  Ref root_;  // covers queues [0, 16^(height + 1))
};

class Clock::Derived {
  friend class Clock;
  std::unordered_map<const Node*, std::pair<Ref, Clock>> at_;
};

}  // namespace qvet
