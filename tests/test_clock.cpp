#include "core/max_tree.h"
#include "model/candidate_tree.h"
#include "model/chain_index.h"
#include "model/meet_above.h"
#include "model/profile.h"
#include "model/clock.h"
#include "model/trace.h"
#include "devices/rng.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

using qvet::Clock;

TEST_CASE("clock: ends in order extend the prefix - out of order become extras") {
  Clock c;
  c.add_end(0, 1);
  CHECK(c.knows(0, 1));
  CHECK_FALSE(c.knows(0, 0));
  c.add_end(0, 0);
  CHECK(c.done(0) == 2);
  CHECK_FALSE(c.knows(1, 0));
}

TEST_CASE("clock: join is union - meet is intersection") {
  Clock a, b;
  a.add_end(0, 0), a.add_end(0, 1), a.add_end(1, 3);
  b.add_end(0, 0), b.add_end(1, 0), b.add_end(1, 3);
  b.see_host(4);
  Clock j = a;
  j.join(b);
  CHECK(j.knows(0, 1));
  CHECK(j.knows(1, 0));
  CHECK(j.knows(1, 3));
  CHECK(j.knows_host(4));
  Clock m = a;
  m.meet(b);
  CHECK(m.knows(0, 0));
  CHECK_FALSE(m.knows(0, 1));
  CHECK_FALSE(m.knows(1, 0));
  CHECK(m.knows(1, 3));
  CHECK_FALSE(m.knows_host(0));
  CHECK(m.leq(a));
  CHECK(m.leq(b));
  CHECK_FALSE(a.leq(b));
}

TEST_CASE("clock: a front end that passed many waits knows them without an entry each") {
  // One queue: exec, wait, exec, wait, ... The execs may still run when the front end passes the
  // waits; the clock must know every wait and no exec, in constant room.
  qvet::Trace t;
  t.queue_cmds.resize(2);
  for (uint32_t i = 0; i < 200; ++i) {
    qvet::TraceCmd c{};
    c.queue = 0, c.index = i, c.op = i % 2 ? qvet::CmdOp::Wait : qvet::CmdOp::Exec;
    t.queue_cmds[0].push_back(uint32_t(t.cmds.size()));
    t.cmds.push_back(c);
  }
  qvet::TraceCmd other_cmd{};
  other_cmd.queue = 1, other_cmd.op = qvet::CmdOp::Exec;
  t.queue_cmds[1].push_back(uint32_t(t.cmds.size()));
  t.cmds.push_back(other_cmd);
  Clock fe(&t);
  for (uint32_t i = 1; i < 200; i += 2) fe.add_end(0, i);
  CHECK(fe.known_ranges(0).empty());
  CHECK(fe.knows(0, 199));
  CHECK_FALSE(fe.knows(0, 198));
  CHECK(fe.done(0) == 0);
  Clock k = fe;  // an exec's end: the front end's knowledge and the exec itself
  k.add_end(0, 100);
  CHECK(k.known_ranges(0).size() == 1);
  k.add_end(0, 0);  // the first exec ends: the prefix runs through the waits to the next exec
  CHECK(k.done(0) == 2);
  Clock m = k;
  m.meet(fe);
  CHECK(m.knows(0, 199));
  CHECK_FALSE(m.knows(0, 100));
  CHECK_FALSE(m.knows(0, 0));
  CHECK(m.leq(fe));
  CHECK(fe.leq(m));
  CHECK_FALSE(k.leq(fe));
  Clock other(&t);  // another queue's clock joins what it learned
  other.add_end(1, 0);
  other.join(k);
  CHECK(other.knows(0, 100));
  CHECK(other.knows(0, 51));
  CHECK(other.knows(1, 0));
  CHECK_FALSE(other.knows(0, 2));
  // A host that waited for the execs' ends one by one (a chained queue's releases): runs parted
  // only by waits the front end passed are one run, so its clock stays small (and joins and
  // known_ranges cost a step, not one per exec). It knows exactly those execs and the waits.
  Clock host(&t);
  for (uint32_t i = 2; i <= 100; i += 2) {
    Clock end = fe;
    end.add_end(0, i);
    host.join(end);
  }
  CHECK(host.known_ranges(0) == std::vector<std::pair<uint32_t, uint32_t>>{{2, 101}});
  for (uint32_t i = 0; i < 200; ++i) CHECK(host.knows(0, i) == ((i % 2 == 1) || (i >= 2 && i <= 100)));
  Clock lone = fe;  // execs it does not know part the two: two runs, still exact
  lone.add_end(0, 2);
  Clock far = fe;
  far.add_end(0, 60);
  lone.join(far);
  CHECK(lone.known_ranges(0).size() == 2);
  CHECK_FALSE(lone.knows(0, 30));
  CHECK(lone.knows(0, 31));
}

// A clock is an exact set of known ends. Random adds, copies, joins and meets over thousands of
// queues (trees several levels deep, sparse and dense leaves, shared subtrees) against std::set.
// Queues of `cmds` commands each, a third of them waits (they end at the front end).
qvet::Trace random_trace(uint32_t queues, uint32_t cmds, qvet::Rng& rng) {
  qvet::Trace t;
  t.queue_cmds.resize(queues);
  for (uint32_t q = 0; q < queues; ++q)
    for (uint32_t i = 0; i < cmds; ++i) {
      qvet::TraceCmd c{};
      c.queue = q, c.index = i, c.op = rng.below(3) == 0 ? qvet::CmdOp::Wait : qvet::CmdOp::Exec;
      t.queue_cmds[q].push_back(uint32_t(t.cmds.size()));
      t.cmds.push_back(c);
    }
  return t;
}

TEST_CASE("clock: the shared tree agrees with a plain set of known ends") {
  const uint32_t kQueues = 5000, kCmds = 24;
  qvet::Rng rng{12345};
  auto rnd = [&](uint64_t n) { return rng.below(n); };
  qvet::Trace t = random_trace(kQueues, kCmds, rng);
  using Known = std::set<std::pair<uint32_t, uint32_t>>;
  const int kPool = 6;
  std::vector<Clock> clocks(kPool, Clock(&t));
  std::vector<Known> sets(kPool);
  // Queues: a few hot ones (dense leaves), and any of the 5000 (sparse paths, taller roots).
  auto queue = [&]() { return uint32_t(rnd(4) ? rnd(40) : rnd(kQueues)); };
  for (int step = 0; step < 20000; ++step) {
    int a = int(rnd(kPool)), b = int(rnd(kPool));
    if (rnd(64) == 0) {
      // The same knowledge as b in nodes of its own (as a later round of refine builds): walks
      // that find the two equal link them (Clock::same_node), and writes must undo the links.
      Clock fresh(&t);
      for (auto [q, i] : sets[b]) fresh.add_end(q, i);
      clocks[a] = std::move(fresh), sets[a] = sets[b];
      continue;
    }
    switch (rnd(6)) {
      case 0:
      case 1: {
        uint32_t q = queue(), i = uint32_t(rnd(kCmds));
        clocks[a].add_end(q, i);
        sets[a].insert({q, i});
        break;
      }
      case 2:
        clocks[a] = clocks[b], sets[a] = sets[b];
        break;
      case 3: {
        clocks[a].join(clocks[b]);
        sets[a].insert(sets[b].begin(), sets[b].end());
        break;
      }
      case 4: {
        clocks[a].meet(clocks[b]);
        Known both;
        std::set_intersection(sets[a].begin(), sets[a].end(), sets[b].begin(), sets[b].end(), std::inserter(both, both.end()));
        sets[a] = std::move(both);
        break;
      }
      default: {
        bool sub = std::includes(sets[b].begin(), sets[b].end(), sets[a].begin(), sets[a].end());
        uint64_t looked = 0;
        REQUIRE(clocks[a].leq(clocks[b], &looked) == sub);
        REQUIRE((looked > 0 || sub));  // a walk that finds a difference looked at a node
        // queues_beyond: in order, among the queues a knows, and every queue where a knows an end
        // b does not (it skips only the subtrees the two share).
        std::vector<uint32_t> beyond, all;
        REQUIRE(clocks[a].queues_beyond(clocks[b], beyond, ~size_t(0)));
        REQUIRE(clocks[a].queues(all, ~size_t(0)));
        REQUIRE(std::is_sorted(beyond.begin(), beyond.end()));
        REQUIRE(std::includes(all.begin(), all.end(), beyond.begin(), beyond.end()));
        for (auto [q, i] : sets[a])
          if (!sets[b].count({q, i})) REQUIRE(std::binary_search(beyond.begin(), beyond.end(), q));
        if (clocks[a].same_tree(clocks[b])) REQUIRE(beyond.empty());
        break;
      }
    }
    if (step % 97 == 0) {  // every clock against its set
      for (int k = 0; k < kPool; ++k) {
        for (auto [q, i] : sets[k]) REQUIRE(clocks[k].knows(q, i));
        for (int probe = 0; probe < 200; ++probe) {
          uint32_t q = queue(), i = uint32_t(rnd(kCmds));
          REQUIRE(clocks[k].knows(q, i) == (sets[k].count({q, i}) > 0));
          uint32_t d = 0;
          while (d < kCmds && sets[k].count({q, d})) ++d;
          REQUIRE(clocks[k].done(q) == d);
          for (auto [lo, hi] : clocks[k].known_ranges(q))
            for (uint32_t j = lo; j < hi; ++j) REQUIRE(sets[k].count({q, j}));
        }
      }
    }
  }
}

TEST_CASE("clock: any_known_queue visits only queues both know of, and forgets a subtree once it is written") {
  Clock c;
  for (uint32_t q = 1; q < 2000; q += 2) c.add_end(q, 0);  // every odd queue
  std::vector<uint32_t> even, odd_tail;
  for (uint32_t q = 0; q < 2000; q += 2) even.push_back(q);
  odd_tail = {1501, 1999, 5000};
  size_t asked = 0;
  auto knows_one = [&](uint32_t q) { return ++asked, c.knows(q, 0); };
  CHECK_FALSE(c.any_known_queue(even, knows_one));
  CHECK(asked == 0);  // no even queue has an entry
  CHECK(c.any_known_queue(odd_tail, knows_one));
  CHECK(asked == 1);  // stops at the first
  // Tagged: a subtree where it held for none is skipped when asked again, by this clock or one that
  // shares it, until it is written.
  std::vector<uint32_t> odd;
  for (uint32_t q = 1; q < 2000; q += 2) odd.push_back(q);
  auto knows_two = [&](const Clock& k) { return [&](uint32_t q) { return ++asked, k.knows(q, 1); }; };
  asked = 0;
  CHECK_FALSE(c.any_known_queue(odd, knows_two(c), 7));
  CHECK(asked == odd.size());
  asked = 0;
  Clock d = c;
  CHECK_FALSE(d.any_known_queue(odd, knows_two(d), 7));
  CHECK(asked == 0);
  d.add_end(1999, 1);  // copies the path to queue 1999: that leaf and its parents are asked again
  CHECK(d.any_known_queue(odd, knows_two(d), 7));
  CHECK(asked > 0);
  CHECK(asked < 20);
  asked = 0;
  CHECK_FALSE(c.any_known_queue(odd, knows_two(c), 7));  // c was not written
  CHECK(asked == 0);
  c.add_end(3, 1);  // c owns its nodes now (d copied its path): written in place, forgotten
  CHECK(c.any_known_queue(odd, knows_two(c), 7));
  asked = 0;
  CHECK(c.any_known_queue(odd, knows_two(c), 8));  // another tag is asked afresh
  CHECK(asked == 2);
}

TEST_CASE("clock: every key and tag a node is asked keeps its answer") {
  // A node kept six keys' answers and four tags' "none here"; more signals asked in turn of one
  // gathering clock evicted each other's, and each wait walked the whole tree again.
  Clock c;
  std::vector<uint32_t> all;
  for (uint32_t q = 0; q < 3000; ++q) c.add_end(q, 0), all.push_back(q);
  size_t asked = 0;
  auto knows_two = [&](uint32_t q) { return ++asked, c.knows(q, 1); };
  for (int round = 0; round < 2; ++round)
    for (uint32_t tag = 10; tag < 30; ++tag) {
      CAPTURE(round);
      CAPTURE(tag);
      asked = 0;
      CHECK_FALSE(c.any_known_queue(all, knows_two, tag));
      CHECK(asked == (round == 0 ? all.size() : 0));
    }
  const Clock::Fresh always = [](uint64_t, uint64_t, uint64_t) { return true; };
  for (int round = 0; round < 2; ++round)
    for (uint64_t key = 0; key < 40; ++key) {
      CAPTURE(round);
      CAPTURE(key);
      uint64_t looked = 0;
      auto value = [&](uint32_t q) -> uint64_t { return (q * 7 + key * 13) % 1000; };
      uint64_t plain = 0;
      for (uint32_t q : all) plain = std::max(plain, value(q));
      CHECK(c.max_known(all, value, key, 5, 1, always, &looked) == plain);
      if (round == 0) CHECK(looked > all.size());
      else CHECK(looked == 0);  // the root's answer
    }
  c.add_end(1500, 1);  // written: the path to queue 1500 forgets what it kept, the rest does not
  asked = 0;
  CHECK(c.any_known_queue(all, knows_two, 12));
  CHECK(asked <= 16);  // the queues of the leaf of 1500, up to it
}

TEST_CASE("clock: a join that adds nothing to the other clock takes its tree") {
  // A queue's accumulated clock joins each of its ends. Where the end knows all of it, the union
  // is the end's own tree, shared: the next join skips it instead of walking every subtree both
  // ever wrote (a queue that gathers thousands of queues, one wait each: quadratic before).
  Clock end, acc;
  for (uint32_t q = 0; q < 5000; ++q) {
    Clock learned;
    learned.add_end(q * 7, 3);  // what a wait on queue 7q's signal learns
    end.join(learned);
    end.add_end(40000, q);  // the gathering queue's own command
    acc.join(end);
    REQUIRE(acc.same_tree(end));
  }
  CHECK(acc.knows(7 * 4999, 3));
  CHECK(acc.done(40000) == 5000);
  // Where the union is more than the other knows, the clock keeps its own tree, and what it knows.
  Clock more = acc;
  more.add_end(3, 0);
  more.join(end);
  CHECK(!more.same_tree(end));
  CHECK(more.knows(3, 0));
  CHECK(end.leq(more));
}

TEST_CASE("clock: a meet whose result is what the other clock knows takes its tree") {
  // Two clocks that know the same of 5,000 queues through different nodes (an earlier round's
  // override, this round's clocks): a meet of them kept a copy of the common part per meet
  // (qvet gen --shape forced-pairs, 10^5 commands: 24 GB). Where the intersection is what the
  // other knows, its nodes are taken, as join does.
  auto make = [](uint32_t extra) {
    Clock c;
    for (uint32_t q = 0; q < 5000; ++q) c.add_end(q * 3, q % 7);
    if (extra) c.add_end(extra, 0);
    return c;
  };
  Clock a = make(0), b = make(0);
  CHECK(!a.same_tree(b));
  CHECK(a.leq(b));
  CHECK(b.leq(a));
  Clock more = make(20000);  // knows one queue more than b
  more.meet(b);
  CHECK(more.same_tree(b));
  CHECK_FALSE(more.knows(20000, 0));
  CHECK(more.knows(3 * 4999, 4999 % 7));
  // Where the intersection knows less than the other, the clock keeps its own knowledge.
  Clock less = make(0);
  Clock other = make(20000);
  less.meet(other);
  CHECK(!less.same_tree(other));
  CHECK(less.leq(other));
  CHECK(other.leq(make(20000)));
  CHECK_FALSE(less.knows(20000, 0));
}

TEST_CASE("clock: nodes found to know the same are linked, and a write undoes the link") {
  // An override (an earlier round's clock) and this round's clocks know the same of thousands of
  // queues through different nodes; each forced pair met the two, walking all of it (qvet gen
  // --shape forced-pairs: quadratic). Once one walk finds them equal, later walks take a step.
  auto make = [] {
    Clock c;
    for (uint32_t q = 0; q < 5000; ++q) c.add_end(q * 3, q % 7);
    return c;
  };
  Clock a = make(), b = make();
  uint64_t looked = 0;
  CHECK(a.leq(b, &looked));
  CHECK(looked > 300);  // every node: nothing shared, nothing linked yet
  Clock m = a;  // shares a's nodes
  m.meet(b);    // finds them equal to b's: linked
  CHECK(m.same_tree(b));
  looked = 0;
  CHECK(a.leq(b, &looked));
  CHECK(b.leq(a, &looked));
  CHECK(looked == 0);
  Clock j = a;
  j.join(b);
  CHECK(j.same_tree(b));
  std::vector<uint32_t> beyond;
  CHECK(a.queues_beyond(b, beyond, ~size_t(0)));
  CHECK(beyond.empty());
  // A write to one of them drops its link where it writes (its own copy, or the node itself).
  Clock keep = a;
  a.add_end(3 * 17, 6);
  CHECK(a.knows(3 * 17, 6));
  CHECK_FALSE(a.leq(b));
  CHECK(b.leq(a));
  CHECK_FALSE(b.knows(3 * 17, 6));
  CHECK_FALSE(keep.knows(3 * 17, 6));
  looked = 0;
  CHECK(keep.leq(b, &looked));
  CHECK(looked == 0);
  Clock lone = make();  // held by one clock: written in place, so its link must go
  Clock lone_copy = lone;
  Clock probe = lone_copy;
  probe.meet(b);  // links lone's nodes (shared by lone and lone_copy) to b's
  lone_copy = Clock();  // lone holds them alone now
  lone.add_end(3 * 4000, 6);
  CHECK_FALSE(lone.leq(b));
  Clock k = b;
  k.meet(lone);
  CHECK_FALSE(k.knows(3 * 4000, 6));
  CHECK(k.knows(3 * 4000, 4000 % 7));
  k = b;
  k.join(lone);
  CHECK(k.knows(3 * 4000, 6));
  // Links made in turn (a to b, b's root to c, ...) are followed and shortened, not walked.
  Clock c = make(), d = make();
  Clock c2 = c, d2 = d;
  c2.meet(b);  // c -> b
  Clock b2 = b;
  b2.meet(d);  // b -> d
  looked = 0;
  CHECK(c.leq(d, &looked));
  CHECK(looked == 0);
}

TEST_CASE("clock: join_beyond asks each queue beyond the other clock, and once per subtree the other knows nothing of") {
  // Thousands of overrides that learned one gathering queue's subtree, each closed over the round
  // on its own: the queues of that subtree were asked once per override (Engine::close_override).
  Clock a;
  for (uint32_t q = 0; q < 100; ++q) a.add_end(q, 0);
  Clock o = a;  // shares a's nodes so far
  for (uint32_t q = 100; q < 5000; ++q) a.add_end(q, 0);
  o.add_end(2500, 0);  // a leaf o knows part of (as does 96..111): asked each time, not kept
  std::vector<uint32_t> asked;
  Clock::Derived kept;
  uint64_t budget = 1 << 20;
  Clock into;
  bool fail_4321 = false;
  auto f = [&](uint32_t q, Clock& c) {  // what the caller derives from q
    asked.push_back(q);
    c.add_end(100000 + q, 0);
    return !(fail_4321 && q == 4321);
  };
  REQUIRE(a.join_beyond(o, kept, f, into, budget));
  std::sort(asked.begin(), asked.end());
  CHECK(std::adjacent_find(asked.begin(), asked.end()) == asked.end());  // each once
  for (uint32_t q = 100; q < 5000; ++q) CHECK(std::binary_search(asked.begin(), asked.end(), q));
  for (uint32_t q = 0; q < 96; ++q) CHECK_FALSE(std::binary_search(asked.begin(), asked.end(), q));  // leaves o holds alike
  for (uint32_t q = 100; q < 5000; ++q) REQUIRE(into.knows(100000 + q, 0));
  CHECK(budget <= (1u << 20) - 4900);
  // A clock that shares a's nodes but one path: only the queues of the leaf it wrote and of the
  // two leaves o knows part of are asked again; the rest is taken from what was kept.
  Clock a2 = a;
  a2.add_end(3000, 1);
  asked.clear();
  Clock into2;
  REQUIRE(a2.join_beyond(o, kept, f, into2, budget));
  CHECK(asked.size() <= 48);
  for (uint32_t q = 100; q < 5000; ++q) REQUIRE(into2.knows(100000 + q, 0));
  // Where the caller cannot derive (a write not run yet), false; and past the budget, false.
  Clock a3 = a;
  a3.add_end(4321, 1);
  fail_4321 = true;
  Clock into3;
  CHECK_FALSE(a3.join_beyond(o, kept, f, into3, budget));
  uint64_t little = 10;
  Clock into4;
  Clock fresh;
  for (uint32_t q = 0; q < 5000; ++q) fresh.add_end(q, 2);
  CHECK_FALSE(fresh.join_beyond(o, kept, f, into4, little));
  CHECK(little == 0);
}

TEST_CASE("max tree: next, max_in, set and erase agree with a plain walk") {
  qvet::Rng rng{99};
  for (int round = 0; round < 200; ++round) {
    size_t n = rng.below(70) + 1;
    std::vector<uint64_t> v(n);
    for (auto& x : v) x = rng.below(20);
    std::vector<bool> present(n, true);
    qvet::MaxTree t(v);
    for (int op = 0; op < 50; ++op) {
      size_t i = rng.below(n);
      if (rng.below(3) == 0) t.erase(i), present[i] = false;
      else v[i] = rng.below(20), present[i] = true, t.set(i, v[i]);
      size_t lo = rng.below(n + 1), hi = rng.below(n + 2);
      uint64_t m = 0, at = rng.below(22);
      for (size_t k = lo; k < std::min(hi, n); ++k)
        if (present[k]) m = std::max(m, v[k]);
      CHECK(t.max_in(lo, hi) == m);
      size_t first = lo;
      while (first < n && !(present[first] && v[first] >= at)) ++first;
      CHECK(t.next(lo, at) == std::min(first, n));
    }
  }
}

TEST_CASE("clock: first_reaching and each_known_queue find what a plain walk over the queues finds") {
  // Clocks that share subtrees (copies, then a few more ends each), over queues far apart in id;
  // the values they cache on their nodes (first_reaching's bounds, each_known_queue's stamped
  // "none here") are reused by clocks that share a node and forgotten when one is written.
  const uint32_t kQueues = 600;
  qvet::Rng rng{4242};
  auto rnd = [&](uint64_t n) { return rng.below(n); };
  auto queue_id = [](uint64_t k) { return uint32_t(k < 500 ? k : 70000 + 37 * k); };  // some past a first root's reach
  std::vector<uint32_t> ids;
  for (uint32_t k = 0; k < kQueues; ++k) ids.push_back(queue_id(k));
  std::vector<uint64_t> fixed(kQueues);  // a queue's value where the clock knows nothing of it
  for (auto& v : fixed) v = rnd(50);
  auto slot = [&](uint64_t q) -> int64_t {
    auto it = std::lower_bound(ids.begin(), ids.end(), q);
    return it != ids.end() && *it == q ? it - ids.begin() : -1;
  };
  std::vector<Clock> clocks(1);
  // each_known_queue: queue q "has" the ends in `live[q]`; adding one stamps q, dropping does not.
  std::vector<std::set<uint32_t>> live(kQueues);
  std::vector<uint64_t> changed(kQueues, 0), touched(kQueues, 0);  // an end added; added or dropped
  uint64_t stamp = 1;
  for (int round = 0; round < 3000; ++round) {
    Clock c = clocks[rnd(clocks.size())];
    for (uint64_t n = rnd(4); n-- > 0;) c.add_end(ids[rnd(kQueues)], uint32_t(rnd(12)));
    if (rnd(3) == 0) c.join(clocks[rnd(clocks.size())]);
    clocks.push_back(c);
    if (clocks.size() > 40) clocks.erase(clocks.begin() + long(rnd(clocks.size())));
    std::vector<uint32_t> known;
    REQUIRE(c.queues(known, ~size_t(0)));
    auto has = [&](uint32_t q) { return std::binary_search(known.begin(), known.end(), q); };
    // first_reaching: a queue it knows is worth its prefix plus a fixed part; one it does not, the
    // fixed part; accepted when its slot is odd (unknown) or its prefix is (known).
    const uint64_t at_least = rnd(60);
    const Clock::Bound b{5, [&](uint32_t q) -> uint64_t { int64_t k = slot(q); return k < 0 ? 0 : c.done(q) + fixed[size_t(k)]; },
                         [&](uint64_t lo, uint64_t hi) {
                           uint64_t m = 0;
                           for (auto it = std::lower_bound(ids.begin(), ids.end(), lo); it != ids.end() && *it < hi; ++it)
                             m = std::max(m, fixed[size_t(it - ids.begin())]);
                           return m;
                         },
                         0, nullptr, {}};
    auto take = [&](uint32_t q) { return slot(q) >= 0 && c.done(q) % 2 == 1; };
    auto take_unknown = [&](uint64_t lo, uint64_t hi) {
      for (auto it = std::lower_bound(ids.begin(), ids.end(), lo); it != ids.end() && *it < hi; ++it)
        if (size_t k = size_t(it - ids.begin()); fixed[k] >= at_least && k % 2 == 1) return *it;
      return Clock::kNoQueue;
    };
    uint32_t plain = Clock::kNoQueue;
    for (size_t k = 0; k < kQueues && plain == Clock::kNoQueue; ++k) {
      uint32_t q = ids[k];
      if (has(q) ? c.done(q) + fixed[k] >= at_least && take(q) : fixed[k] >= at_least && k % 2 == 1) plain = q;
    }
    CHECK(c.first_reaching(b, at_least, take, take_unknown) == plain);
    // The same with a stamped "none taken here": take_live may change, but only where `fresh`
    // (the queue got a live end since) says so; a queue losing one only takes less.
    const Clock::Fresh fresh_live = [&](uint64_t lo, uint64_t hi, uint64_t at) {
      for (auto it = std::lower_bound(ids.begin(), ids.end(), lo); it != ids.end() && *it < hi; ++it)
        if (changed[size_t(it - ids.begin())] > at) return false;
      return true;
    };
    auto unknown_live = [&](uint32_t q) {
      for (uint32_t i : live[size_t(slot(q))])
        if (!c.knows(q, i)) return true;
      return false;
    };
    auto take_live = [&](uint32_t q) { return slot(q) >= 0 && unknown_live(q); };
    auto take_unknown_live = [&](uint64_t lo, uint64_t hi) {
      for (auto it = std::lower_bound(ids.begin(), ids.end(), lo); it != ids.end() && *it < hi; ++it)
        if (size_t k = size_t(it - ids.begin()); fixed[k] >= at_least && !live[k].empty()) return *it;
      return Clock::kNoQueue;
    };
    Clock::Bound stamped = b;
    stamped.key = 6, stamped.stamp = stamp, stamped.fresh = &fresh_live;
    plain = Clock::kNoQueue;
    for (size_t k = 0; k < kQueues && plain == Clock::kNoQueue; ++k) {
      uint32_t q = ids[k];
      if (has(q) ? c.done(q) + fixed[k] >= at_least && take_live(q) : fixed[k] >= at_least && !live[k].empty()) plain = q;
    }
    CHECK(c.first_reaching(stamped, at_least, take_live, take_unknown_live) == plain);
    // The same with a take that depends on at_least, and `refused`: a subtree where none was taken
    // is skipped for any at_least above the most its refused queues could be taken for (thresholds
    // falling from round to round). A queue's worth: the most of its unknown live ends' weights.
    auto worth = [&](uint32_t q) {
      uint64_t m = 0;
      for (uint32_t i : live[size_t(slot(q))])
        if (!c.knows(q, i)) m = std::max<uint64_t>(m, (i * 5) % 11 + 1);
      return m;
    };
    const uint64_t high = 6 + rnd(8);
    for (uint64_t as_high : {high, rnd(high), rnd(3)}) {  // falling, on one clock: the second and third reuse what the first remembered
      auto take_worth = [&](uint32_t q) { return slot(q) >= 0 && worth(q) >= as_high; };
      Clock::Bound refusing = stamped;
      refusing.key = 11, refusing.refused = [&](uint32_t q) { return slot(q) >= 0 ? worth(q) : 0; };
      plain = Clock::kNoQueue;
      for (size_t k = 0; k < kQueues && plain == Clock::kNoQueue; ++k) {
        uint32_t q = ids[k];
        if (has(q) ? c.done(q) + fixed[k] >= as_high && take_worth(q) : fixed[k] >= as_high && fixed[k] % 16 == 0 && !live[k].empty()) plain = q;
      }
      auto take_unknown_high = [&](uint64_t lo, uint64_t hi) {
        for (auto it = std::lower_bound(ids.begin(), ids.end(), lo); it != ids.end() && *it < hi; ++it)
          if (size_t k = size_t(it - ids.begin()); fixed[k] >= as_high && fixed[k] % 16 == 0 && !live[k].empty()) return *it;  // seldom
        return Clock::kNoQueue;
      };
      CHECK(c.first_reaching(refusing, as_high, take_worth, take_unknown_high) == plain);
    }
    // max_known: per queue the highest live end it knows, not counting those `arg` names; the
    // cache holds for one arg, while nothing under it changed (adding or dropping an end).
    const uint64_t arg = rnd(3);
    auto top = [&](uint32_t q) {
      uint64_t m = 0;
      for (uint32_t i : live[size_t(slot(q))])
        if (c.knows(q, i) && i % 3 != arg) m = std::max<uint64_t>(m, i + 1);
      return m;
    };
    const Clock::Fresh fresh_any = [&](uint64_t lo, uint64_t hi, uint64_t at) {
      for (auto it = std::lower_bound(ids.begin(), ids.end(), lo); it != ids.end() && *it < hi; ++it)
        if (touched[size_t(it - ids.begin())] > at) return false;
      return true;
    };
    uint64_t want_top = 0;
    for (uint32_t q : known)
      if (slot(q) >= 0) want_top = std::max(want_top, top(q));
    CHECK(c.max_known(ids, top, 7, arg, stamp, fresh_any) == want_top);
    // With `holds`: per queue the highest live end it knows whose value (a fixed function of the
    // end) meets a threshold; an answer remembered for a lower threshold that meets this one too
    // is this one's (the waits of Engine::top_known_latest, thresholds changing from round to round).
    auto value = [](uint64_t i) { return (i * 7) % 5; };
    for (uint64_t threshold : {rnd(6), rnd(6), rnd(6)}) {  // on one clock: each reuses what the one before remembered
      auto top_meeting = [&](uint32_t q) {
        uint64_t m = 0;
        for (uint32_t i : live[size_t(slot(q))])
          if (c.knows(q, i) && value(i) >= threshold) m = std::max<uint64_t>(m, i + 1);
        return m;
      };
      const Clock::Holds holds = [&](uint64_t then, uint64_t best, uint64_t t) { return t >= then && (best == 0 || value(best - 1) >= t); };
      uint64_t want_meeting = 0;
      for (uint32_t q : known)
        if (slot(q) >= 0) want_meeting = std::max(want_meeting, top_meeting(q));
      CHECK(c.max_known(ids, top_meeting, 8, threshold, stamp, fresh_any, nullptr, &holds) == want_meeting);
      // And with `below` (the largest value of a known live end that does not meet it): an answer
      // remembered for a higher threshold is taken where no such value lies between the two.
      const std::function<uint64_t(uint32_t)> below = [&](uint32_t q) {
        uint64_t m = 0;
        for (uint32_t i : live[size_t(slot(q))])
          if (c.knows(q, i) && value(i) < threshold) m = std::max<uint64_t>(m, value(i));
        return m;
      };
      CHECK(c.max_known(ids, top_meeting, 10, threshold, stamp, fresh_any, nullptr, &holds, &below) == want_meeting);
    }
    // each_known_queue: the queues whose live ends it knows.
    for (uint64_t n = rnd(3); n-- > 0;) {
      size_t k = rnd(kQueues);
      if (rnd(2) && !live[k].empty()) live[k].erase(live[k].begin()), touched[k] = ++stamp;  // dropped: stays "none"
      else live[k].insert(uint32_t(rnd(12))), changed[k] = touched[k] = ++stamp;
    }
    auto knows_live = [&](uint32_t q) {
      for (uint32_t i : live[size_t(slot(q))])
        if (c.knows(q, i)) return true;
      return false;
    };
    const Clock::Fresh fresh = [&](uint64_t lo, uint64_t hi, uint64_t at) {
      for (auto it = std::lower_bound(ids.begin(), ids.end(), lo); it != ids.end() && *it < hi; ++it)
        if (changed[size_t(it - ids.begin())] > at) return false;
      return true;
    };
    std::vector<uint32_t> found, want;
    c.each_known_queue(ids, [&](uint32_t q) { return knows_live(q) && (found.push_back(q), true); }, 9, stamp, fresh);
    for (uint32_t q : known)
      if (slot(q) >= 0 && knows_live(q)) want.push_back(q);
    CHECK(found == want);
  }
}

TEST_CASE("candidate tree: the entries that do not come after a wait, and their meet, as a plain walk finds them") {
  const uint32_t kQueues = 40, kCmds = 24;
  qvet::Rng rng{777};
  auto rnd = [&](uint64_t n) { return rng.below(n); };
  qvet::Trace t = random_trace(kQueues, kCmds, rng);
  for (int round = 0; round < 300; ++round) {
    // Ends that know a prefix of a few queues, some of them the wait's queue far enough.
    size_t n = rnd(round % 10 == 0 ? 200 : 40);
    std::vector<Clock> ends(n, Clock(&t));
    for (Clock& e : ends)
      for (uint64_t k = rnd(6); k-- > 0;) {
        uint32_t q = uint32_t(rnd(6)), upto = uint32_t(rnd(kCmds));
        for (uint32_t i = 0; i <= upto; ++i) e.add_end(q, i);
      }
    std::vector<uint32_t> list(n);
    std::vector<const Clock*> ptrs(n);
    for (size_t k = 0; k < n; ++k) list[k] = uint32_t(1000 + k), ptrs[k] = &ends[k];
    qvet::CandidateTree tree(list, ptrs, &t);
    for (int probe = 0; probe < 20; ++probe) {
      uint32_t q = uint32_t(rnd(6)), i = uint32_t(rnd(kCmds));
      auto after = [&](const Clock& c) { return c.knows(q, i); };
      std::vector<size_t> kept;
      for (size_t k = 0; k < n; ++k)
        if (!after(ends[k])) kept.push_back(k);
      std::vector<size_t> walked;
      for (size_t k = tree.next(0, after); k < tree.size(); k = tree.next(k + 1, after)) walked.push_back(k);
      REQUIRE(walked == kept);
      size_t count = 0;
      Clock m = tree.meet(after, count);
      REQUIRE(count == kept.size());
      Clock plain(&t);
      for (size_t j = 0; j < kept.size(); ++j) j == 0 ? void(plain = ends[kept[j]]) : plain.meet(ends[kept[j]]);
      CHECK(m.leq(plain));
      CHECK(plain.leq(m));
    }
  }
}

namespace {
// What a plain walk says of the clocks the two indexes below meet: each compared on every end
// the random clocks may hold.
bool same_knowledge(const Clock& a, const Clock& b) {
  for (uint32_t q = 0; q < 6; ++q)
    for (uint32_t i = 0; i < 8; ++i)
      if (a.knows(q, i) != b.knows(q, i)) return false;
  return a.host() == b.host();
}
Clock random_end(qvet::Rng& rng) {
  Clock c;
  for (uint32_t q = 0; q < 6; ++q)
    for (uint32_t i = 0; i < 8; ++i)
      if (rng.below(3)) c.add_end(q, i);
  c.see_host(int64_t(rng.below(5)));
  return c;
}
}  // namespace

TEST_CASE("chain index and meet-above agree with a plain walk - whatever the order of values") {
  qvet::Rng rng{777};
  for (int round = 0; round < 60; ++round) {
    const size_t n = 1 + rng.below(round < 30 ? 40 : 300);
    const int pattern = round % 3;  // random values, alternating high and low, growing
    std::vector<uint64_t> vals;
    std::vector<bool> barrier;
    std::vector<Clock> ends;
    for (size_t j = 0; j < n; ++j) {
      vals.push_back(pattern == 0 ? rng.below(20) : pattern == 1 ? (j % 2 ? j : 1000 + j) : j / 3);
      if (rng.below(7) == 0) vals.back() |= uint64_t(1) << 40;  // a high half: the widths differ
      barrier.push_back(rng.below(5) == 0);
      ends.push_back(random_end(rng));
    }
    const size_t added = n - rng.below(n / 4 + 1);
    qvet::ChainIndex ci(n);
    qvet::MeetAbove wide, narrow;
    std::vector<uint64_t> orders;
    for (size_t j = 0; j < added; ++j) {
      ci.add(vals[j], barrier[j], ends[j]);
      const uint64_t order = rng.next() >> 1;
      orders.push_back(order);
      wide.insert(vals[j], uint32_t(j), order, uint32_t(j), ends[j]);
      narrow.insert(vals[j] & qvet::kLowHalf, uint32_t(j), order, uint32_t(j), ends[j]);
    }
    for (int ask = 0; ask < 40; ++ask) {
      const bool is_narrow = rng.below(2);
      const uint64_t t = pattern == 1 && rng.below(2) ? rng.below(n + 2) : rng.below(22);
      auto value = [&](size_t j) { return is_narrow ? vals[j] & qvet::kLowHalf : vals[j]; };
      size_t lo = rng.below(added + 1), hi = rng.below(added + 1);
      if (lo > hi) std::swap(lo, hi);
      const qvet::ChainIndex::Cond c{t, is_narrow};
      // meet_meeting
      Clock want, got;
      size_t want_n = 0, got_n = 0;
      for (size_t j = lo; j < hi; ++j)
        if (value(j) >= t) {
          if (want_n++ == 0) want = ends[j];
          else want.meet(ends[j]);
        }
      ci.meet_meeting(lo, hi, c, got, got_n);
      REQUIRE(got_n == want_n);
      if (want_n) CHECK(same_knowledge(got, want));
      // join_below, and a join knows an event exactly when one of the joined ends does (the engine
      // asks the join whether some known lower write comes after a candidate)
      Clock want_join, got_join;
      bool want_any = false, got_any = false;
      for (size_t j = lo; j < hi; ++j)
        if (value(j) < t) {
          if (!want_any) want_join = ends[j], want_any = true;
          else want_join.join(ends[j]);
        }
      ci.join_below(lo, hi, c, got_join, got_any);
      REQUIRE(got_any == want_any);
      if (want_any) {
        CHECK(same_knowledge(got_join, want_join));
        for (uint32_t q = 0; q < 7; ++q)
          for (uint32_t i = 0; i < 10; ++i) {
            bool one = false;
            for (size_t j = lo; j < hi && !one; ++j) one = value(j) < t && ends[j].knows(q, i);
            CHECK(got_join.knows(q, i) == one);
          }
      }
      // last_meeting, last_barrier_below, each_from_right
      size_t last = qvet::ChainIndex::kNoPos, last_barrier = qvet::ChainIndex::kNoPos;
      std::vector<size_t> meeting, other;
      for (size_t j = hi; j-- > lo;) {
        if (value(j) >= t && last == qvet::ChainIndex::kNoPos) last = j;
        if (value(j) < t && barrier[j] && last_barrier == qvet::ChainIndex::kNoPos) last_barrier = j;
        (value(j) >= t ? meeting : other).push_back(j);
      }
      CHECK(ci.last_meeting(lo, hi, c) == last);
      CHECK(ci.last_barrier_below(lo, hi, c) == last_barrier);
      std::vector<size_t> seen_meeting, seen_other;
      ci.each_from_right(lo, hi, c, true, [&](size_t j) { return seen_meeting.push_back(j), true; });
      ci.each_from_right(lo, hi, c, false, [&](size_t j) { return seen_other.push_back(j), true; });
      CHECK(seen_meeting == meeting);
      CHECK(seen_other == other);
      // MeetAbove over every added write
      const qvet::MeetAbove::Answer a = (is_narrow ? narrow : wide).at_least(t);
      size_t above = 0, first = qvet::MeetAbove::kNoEntry;
      Clock m;
      for (size_t j = 0; j < added; ++j)
        if (value(j) >= t) {
          if (above++ == 0) m = ends[j];
          else m.meet(ends[j]);
          if (first == qvet::MeetAbove::kNoEntry || orders[j] < orders[first]) first = j;
        }
      REQUIRE(a.count == above);
      CHECK(a.first == first);
      if (above) CHECK(same_knowledge(a.meet, m));
    }
  }
}
