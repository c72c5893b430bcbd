// The simulator's machine (semantics.md's hardware sentences, one by one) and the comparison's
// checks, each shown to fire on a run that breaks it.
#include <doctest/doctest.h>

#include <set>

#include "devices/compare.h"
#include "devices/sim/sim.h"
#include "helpers.h"

using namespace qvet;
using qvet::test::check;

namespace {

// Every run of every policy, `n` each.
template <class F>
void each_run(const Trace& t, int n, F f) {
  Simulator sim(t);
  Prediction pred(t);
  for (Policy p : {Policy::Random, Policy::Pct, Policy::Delay}) {
    SimOptions o;
    o.policy = p;
    o.record_seen = true;
    o.delay_pairs = pred.races();
    for (int i = 0; i < n; ++i) f(sim.run(o, uint64_t(i)));
  }
}

const char* kStrict =
    "device g strict\n"            // 1
    "buffer a on g 4K\n"           // 2
    "signal s on host\n"           // 3
    "queue c0 on g compute\n"      // 4
    "queue c1 on g compute\n";     // 5

}  // namespace

TEST_CASE("sim: a serial queue starts each command after the previous one ended") {
  auto c = check(std::string(kStrict) + "submit c0 {\n  exec k1 writes a\n  exec k2 writes a\n}\n");
  each_run(c->trace, 50, [&](const ObservedRun& r) {
    CHECK(r.cmd_start[1] > r.cmd_end[0]);
    CHECK(r.overlaps.empty());
  });
}

TEST_CASE("sim: an overlapping queue runs execs at once; its signal ends after every earlier command") {
  auto c = check(std::string(kStrict) +
                 "queue c2 on g compute ordering overlap\n"  // 6
                 "submit c2 {\n  exec k1 writes a\n  exec k2 writes a\n  signal s = 1\n}\n");
  size_t overlapped = 0;
  each_run(c->trace, 50, [&](const ObservedRun& r) {
    overlapped += !r.overlaps.empty();
    CHECK(r.cmd_end[2] > r.cmd_end[0]);
    CHECK(r.cmd_end[2] > r.cmd_end[1]);
    CHECK(r.final_value[0] == 1);
  });
  CHECK(overlapped > 0);
}

TEST_CASE("sim: chained releases fire at the exec's end, in either order; a third signal is a WFI release") {
  auto c = check(
      "device g nv\nbuffer a on g 4K\nsignal s on host\nsignal t on host\nqueue c0 on g compute\n"
      "submit c0 {\n  exec k writes a\n  signal s = 1\n  signal s = 2\n  signal t = 3\n  exec k2 reads a\n}\n");
  std::set<uint64_t> finals;
  each_run(c->trace, 50, [&](const ObservedRun& r) {
    uint64_t e = r.cmd_end[0];
    CHECK(((r.cmd_end[1] == e + 1 && r.cmd_end[2] == e + 2) || (r.cmd_end[2] == e + 1 && r.cmd_end[1] == e + 2)));
    CHECK(r.cmd_start[4] > r.cmd_end[3]);  // the WFI release held the front end
    finals.insert(r.final_value[0]);
  });
  CHECK(finals == std::set<uint64_t>{1, 2});
}

TEST_CASE("sim: a 32-bit signal keeps the high half; a 32-bit wait compares the low dword") {
  auto c = check(
      "device g amd\nsignal s on host = 2^32 + 5\nsignal u on host = 2^32\nqueue c0 on g compute\nqueue c1 on g compute\n"
      "submit c0 {\n  signal s = 7\n}\nsubmit c1 {\n  wait u >= 1\n}\n");
  each_run(c->trace, 20, [&](const ObservedRun& r) {
    CHECK(r.final_value[0] == (uint64_t(1) << 32) + 7);
    REQUIRE(r.hung.size() == 1);
    CHECK(r.hung[0].wait == EventRef{false, 1});
  });
}

TEST_CASE("sim: a read sees the version of the write ordered before it") {
  auto c = check(std::string(kStrict) +
                 "submit c0 {\n  exec w writes a\n  signal s = 1\n}\n"   // 6-9
                 "submit c1 {\n  wait s >= 1\n  exec r reads a\n}\n");  // 10-13
  each_run(c->trace, 50, [&](const ObservedRun& r) {
    REQUIRE(!r.seen.empty());
    for (const SeenVersion& s : r.seen) CHECK(s.version == Version::of({false, 0}));
  });
}

TEST_CASE("compare: each check fires on a run that breaks it") {
  auto c = check(std::string(kStrict) +
                 "submit c0 {\n  exec w writes a\n  signal s = 1\n}\n"   // 6-9
                 "submit c1 {\n  wait s >= 1\n  exec r reads a\n}\n");  // 10-13
  Prediction pred(c->trace);
  SimOptions o;
  o.record_seen = true;
  ObservedRun good = Simulator(c->trace).run(o, 0);
  auto kinds = [&](const ObservedRun& r) {
    Comparison cmp(pred);
    cmp.add(r, 0);
    cmp.finish();
    std::set<std::string> k;
    for (const Violation& v : cmp.violations()) k.insert(v.kind);
    return k;
  };
  CHECK(kinds(good).empty());

  ObservedRun early = good;  // the read starts before the write ends
  early.cmd_start[3] = good.cmd_start[0];
  CHECK(kinds(early).count("edge"));

  ObservedRun overlap = good;  // the two accesses reported in progress at once
  overlap.overlaps.push_back({0, 1});
  CHECK(kinds(overlap).count("overlap"));

  ObservedRun stale = good;  // the read saw the buffer's initial contents
  for (SeenVersion& s : stale.seen) s.version = Version{};
  CHECK(kinds(stale).count("stale-read"));

  ObservedRun hang = good;  // the wait never ended
  hang.cmd_end[2] = hang.cmd_start[3] = hang.cmd_end[3] = kNever;
  hang.hung.push_back({{false, 2}, false});
  CHECK(kinds(hang).count("hang"));
}

TEST_CASE("compare: a predicted race manifests, and a different final value needs a signal-race") {
  auto c = check(std::string(kStrict) + "submit c0 {\n  exec w writes a\n}\nsubmit c1 {\n  exec r reads a\n}\n");
  Prediction pred(c->trace);
  REQUIRE(pred.races().size() == 1);
  Comparison cmp(pred);
  Simulator sim(c->trace);
  SimOptions o;
  o.policy = Policy::Delay;
  o.delay_pairs = pred.races();
  for (uint64_t i = 0; i < 4; ++i) cmp.add(sim.run(o, i), i);
  cmp.finish();
  CHECK(cmp.soundness_violations() == 0);
  REQUIRE(cmp.coverage().size() == 1);
  CHECK(cmp.coverage()[0].overlapped);

  ObservedRun r = sim.run(o, 0);  // the same program, once ending with s = 5: no signal-race names s
  Comparison cmp2(pred);
  cmp2.add(r, 0);
  r.final_value[0] = 5;
  cmp2.add(r, 1);
  cmp2.finish();
  CHECK(cmp2.soundness_violations() == 1);
}

TEST_CASE("sim: an amd exec that reads another agent's data needs a memory_barrier of its queue between") {
  std::string head = "device g amd\nbuffer a on host 4K\nqueue c0 on g compute\nwrite a\n";
  auto bare = check(head + "submit c0 {\n  exec k reads a\n}\n");
  auto acquired = check(head + "submit c0 {\n  memory_barrier\n  exec k reads a\n}\n");
  each_run(bare->trace, 20, [&](const ObservedRun& r) { CHECK(r.unacquired.size() == 1); });
  each_run(acquired->trace, 20, [&](const ObservedRun& r) { CHECK(r.unacquired.empty()); });

  // The acquired program predicts no visibility finding: a run that says otherwise is a violation.
  Prediction pred(acquired->trace);
  ObservedRun r = Simulator(acquired->trace).run(SimOptions{}, 0);
  Comparison cmp(pred);
  cmp.add(r, 0);
  CHECK(cmp.soundness_violations() == 0);
  r.unacquired.push_back({1, Version::of({true, 0})});
  cmp.add(r, 1);
  REQUIRE(cmp.soundness_violations() == 1);
  CHECK(cmp.violations()[0].kind == "unreported-visibility");
}

TEST_CASE("sim: pct of depth 1 runs agents by strict priority; deeper runs preempt") {
  auto c = check(std::string(kStrict) + "submit c0 {\n  exec w writes a\n}\nsubmit c1 {\n  exec r writes a\n}\n");
  Simulator sim(c->trace);
  SimOptions o;
  o.policy = Policy::Pct;
  o.pct_depth = 1;
  std::set<bool> first;
  for (uint64_t i = 0; i < 50; ++i) {
    ObservedRun r = sim.run(o, i);
    CHECK(r.overlaps.empty());  // no change point: one queue's exec ends before the other starts
    first.insert(r.cmd_start[0] < r.cmd_start[1]);
  }
  CHECK(first.size() == 2);  // the priorities differ between runs: both orders
  o.pct_depth = 3;
  size_t overlapped = 0;
  for (uint64_t i = 0; i < 200; ++i) overlapped += !sim.run(o, i).overlaps.empty();
  CHECK(overlapped > 0);  // a change point inside an exec lets the other queue run meanwhile
}
