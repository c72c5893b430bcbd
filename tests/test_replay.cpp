// Replay (devices/plan.h, replay.h, backend.h): the plan as golden text for the three queue
// mappings and the wrap rule, and replays through the sim back end: races seen as data,
// determinism, the watchdog, and the failure paths of loading a GPU library.
#include <cstdlib>
#include <doctest/doctest.h>

#include <set>

#include "devices/backend.h"
#include "devices/compare.h"
#include "devices/dynlib.h"
#include "devices/plan.h"
#include "devices/replay.h"
#include "devices/sim/backend.h"
#include "helpers.h"

using namespace qvet;
using qvet::test::check;

namespace {

std::string plan_text(const char* program) {
  auto c = check(program);
  REQUIRE(c->program);
  return describe(make_plan(c->trace, PlanOptions{}), c->trace);
}

// Runs of `t` replayed through the sim back end.
std::vector<ReplayRun> replays(const Trace& t, int n, uint64_t seed = 1) {
  SimBackend b;
  std::string error;
  std::vector<ReplayRun> out;
  PlanOptions o;
  o.seed = seed;
  Plan p = make_plan(t, o);
  REQUIRE(b.open(p.layout, {}, error));
  for (int i = 0; i < n; ++i) {
    o.seed = seed + uint64_t(i);
    redraw_durations(p, t, o);
    out.push_back(replay(t, p, b, seed + uint64_t(i), ReplayOptions{}));
    REQUIRE(out.back().error.empty());
  }
  return out;
}

}  // namespace

TEST_CASE("plan: a chained queue: an exec chains on its lane with its release; a wait and a copy start new lanes after the front") {
  CHECK(plan_text(R"(device gpu0 nv
buffer a on gpu0 64
buffer b on gpu0 64
signal s on host = 0
queue c on gpu0 compute
submit c {
  exec k1 writes a
  signal s = 1
  exec k2 reads a writes b[0:32]
  wait s >= 1
  exec k3 reads b[16:64]
  copy a[0:32] -> b[32:64]
}
)") == R"(layout: 5 stream(s), 1 word(s), 5 cell(s), 1 scratch, 8 slot(s), 10 seen, 2 event(s)
queue c (chained, gpu0): streams 0..4
host: line 6 mark
s0: probe slot 1 11509ns writes a[0:64]
s0: write s = 1 (64)
s0: probe slot 2
s0: record e0
s0: probe slot 3 32604ns writes b[0:32] sees-at-start a[0:64] sees-at-end a[0:64]
s3: wait-event e0
s3: wait s >= 1 (64)
s3: probe slot 4
s3: record e1
s1: wait-event e1
s1: probe slot 5 29319ns sees-at-start b[16:64] sees-at-end b[16:64]
s2: wait-event e1
s2: probe slot 6 sees-at-start a[0:32]
s2: copy cells 0+1 to scratch
s2: probe slot 7 writes b[32:64] sees-at-end a[0:32]
)");
}

TEST_CASE("plan: an overlap queue: execs on lanes, a signal joins them on the release stream, a barrier on the control stream") {
  CHECK(plan_text(R"(device gpu0 amd
buffer a on gpu0 64
signal s on host = 0
queue c on gpu0 compute ordering overlap
submit c {
  exec k1 writes a
  exec k2 reads a
  signal s = 1
  barrier
  exec k3 writes a
}
wait s >= 1
)") == R"(layout: 5 stream(s), 1 word(s), 1 cell(s), 0 scratch, 7 slot(s), 2 seen, 7 event(s)
queue c (overlap, gpu0): streams 0..4
host: line 5 mark
s0: probe slot 1 11509ns writes a[0:64]
s1: probe slot 2 27004ns sees-at-start a[0:64] sees-at-end a[0:64]
s0: record e0
s4: wait-event e0
s1: record e1
s4: wait-event e1
s3: record e2
s4: wait-event e2
s4: write s = 1 (32)
s4: probe slot 3
s0: record e3
s3: wait-event e3
s1: record e4
s3: wait-event e4
s4: record e5
s3: wait-event e5
s3: probe slot 4
s3: record e6
s2: wait-event e6
s2: probe slot 5 29319ns writes a[0:64]
host: line 12 wait s >= 1
)");
}

TEST_CASE("plan: waits on a word whose values span the API's signed window spin; the others use the API's wait") {
  CHECK(plan_text(R"(device gpu0 strict
signal s on host = 0
signal t on host = 0
queue c on gpu0 compute
submit c {
  wait s >= 2^63 + 1
  wait t >= 5
}
signal s = 18446744073709551615
signal t = 7
)") == R"(layout: 1 stream(s), 2 word(s), 0 cell(s), 0 scratch, 5 slot(s), 0 seen, 0 event(s)
queue c (serial, gpu0): streams 0..0
signal s: waits spin (its values span the API's signed window)
host: line 5 mark
s0: probe slot 1 spin s >= 9223372036854775809 (64)
s0: wait t >= 5 (64)
s0: probe slot 2
host: line 9 write s = 18446744073709551615
host: line 10 write t = 7
)");
}

TEST_CASE("plan: the same program and options give the same plan; another seed changes only durations, which redraw_durations redraws") {
  auto c = check(R"(device gpu0 nv
buffer a on gpu0 64
queue c on gpu0 compute
submit c {
  exec k1 writes a
  exec k2 reads a
}
)");
  REQUIRE(c->program);
  PlanOptions o;
  std::string a = describe(make_plan(c->trace, o), c->trace), b = describe(make_plan(c->trace, o), c->trace);
  CHECK(a == b);
  o.seed = 99;
  Plan p1 = make_plan(c->trace, PlanOptions{}), p2 = make_plan(c->trace, o);
  CHECK(p1.calls.size() == p2.calls.size());
  CHECK(p1.layout.desc == p2.layout.desc);
  CHECK(p1.probes[0].duration != p2.probes[0].duration);
  redraw_durations(p1, c->trace, o);  // a plan redrawn for another seed is the plan made with it
  CHECK(describe(p1, c->trace) == describe(p2, c->trace));
}

TEST_CASE("replay: the sim back end shows an unordered read as different versions across runs, and the engine predicted the race") {
  auto c = check(R"(device gpu0 amd
buffer a on gpu0 64
queue c0 on gpu0 compute
queue c1 on gpu0 compute
submit c0 {
  exec w writes a
}
submit c1 {
  exec r reads a
}
)");
  REQUIRE(c->program);
  std::set<uint32_t> versions;
  Prediction pred(c->trace);
  Comparison cmp(pred);
  auto runs = replays(c->trace, 40);
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const SeenVersion& s : runs[i].run.seen) versions.insert(s.version.code);
    cmp.add(runs[i].run, i);
  }
  cmp.finish();
  CHECK(versions.size() == 2);  // the initial contents, and w's
  CHECK(cmp.soundness_violations() == 0);
  CHECK(cmp.coverage().at(0).manifested());
}

TEST_CASE("replay: ordered commands are seen in order; the same seed replays the same run") {
  auto c = check(R"(device gpu0 nv
buffer a on gpu0 64
signal s on host = 0
queue c0 on gpu0 compute
queue c1 on gpu0 compute
submit c0 {
  exec w writes a
  signal s = 1
}
submit c1 {
  wait s >= 1
  exec r reads a
}
)");
  REQUIRE(c->program);
  auto r1 = replays(c->trace, 5), r2 = replays(c->trace, 5);
  for (size_t i = 0; i < r1.size(); ++i) {
    const ObservedRun& r = r1[i].run;
    CHECK(r.cmd_end[0] <= r.cmd_start[3]);  // w before r
    CHECK(r.untimed[1]);                    // the signal: the API's write logs no time of its own
    CHECK(r.final_value == std::vector<uint64_t>{1});
    CHECK(r.cmd_start == r2[i].run.cmd_start);
    for (const SeenVersion& s : r.seen) CHECK(s.version.event().id == 0);
  }
}

TEST_CASE("replay: the watchdog releases a wait that outlives the timeout, reports the hang, and the run ends there") {
  // The initial value satisfies the wait, but the host may overwrite it first: a real run can
  // hang where the model's candidate says the wait ends (docs/simulator.md, hang-overwritten).
  auto c = check(R"(device gpu0 strict
signal s on host = 3
queue c on gpu0 compute
submit c {
  wait s >= 1
  signal s = 5
}
signal s = 0
)");
  REQUIRE(c->program);
  bool hung = false;
  ReplayOptions o;
  o.timeout_ns = 1'000'000;
  SimBackend b;
  std::string error;
  for (int i = 0; i < 40 && !hung; ++i) {
    PlanOptions po;
    po.seed = uint64_t(i);
    Plan p = make_plan(c->trace, po);
    if (i == 0) REQUIRE(b.open(p.layout, {}, error));
    ReplayRun r = replay(c->trace, p, b, uint64_t(i), o);
    REQUIRE(r.error.empty());
    if (r.run.hung.empty()) continue;
    hung = true;
    CHECK(r.run.hung[0].wait == EventRef{false, 0});
    CHECK(r.run.hung[0].missed);             // the initial value satisfied it
    CHECK(r.run.cmd_end[1] == kNever);        // what ran after the release is not part of the run
    CHECK(r.run.final_value == std::vector<uint64_t>{0});
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("watchdog wrote s = 1") != std::string::npos);
  }
  CHECK(hung);
}

TEST_CASE("back ends: a library that cannot be loaded, and unknown back ends, are errors with names") {
  DynamicLibrary lib;
  std::string error;
  CHECK_FALSE(lib.open("QVET_TEST_NO_SUCH_VARIABLE", {"libqvet-no-such-library.so.1"}, error));
  CHECK(error.find("libqvet-no-such-library.so.1") != std::string::npos);
  setenv("QVET_TEST_LIBRARY", "libqvet-chosen.so.1", 1);  // the variable, when set, is the only library tried
  error.clear();
  CHECK_FALSE(lib.open("QVET_TEST_LIBRARY", {"libqvet-no-such-library.so.1"}, error));
  CHECK(error.find("libqvet-chosen.so.1") != std::string::npos);
  unsetenv("QVET_TEST_LIBRARY");
  error.clear();
  CHECK_FALSE(make_backend("tpu", error));
  CHECK(error.find("tpu") != std::string::npos);
  for (const char* name : {"cuda", "hip"}) {
    error.clear();
    std::unique_ptr<Backend> b = make_backend(name, error);
    if (!b) {  // built without the vendor's headers: said so
      CHECK(error.find("built without") != std::string::npos);
      continue;
    }
    Layout l;
    l.stream_device = {0};
    l.devices = 1;
    if (!b->open(l, {}, error)) {  // no driver or no device here: one line naming what failed
      CHECK(!error.empty());
      CHECK(error.find('\n') == std::string::npos);
      CHECK((error.rfind(name, 0) == 0 || error.find(".so") != std::string::npos));
    }
  }
}
