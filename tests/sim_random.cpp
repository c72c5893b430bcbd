// The simulator against the engine on random programs (the differential test's generator):
// every program runs under each policy and `Comparison` checks every run. Zero soundness
// violations pass; the other differences (docs/simulator.md) are counted and printed.
// With --replay, the runs are replays (devices/replay.h) through the sim back end instead: the
// plan and the replay driver checked on random programs (those with a predicted deadlock, which
// replay never submits, are skipped).
//
//   qvet_sim_random [--seed S] [--count N] [--runs R] [--print] [--replay]
//
// Program k uses seed S + k; reproduce one with `qvet_differential --seed S+k --count 1 --print`
// (it prints the program) and `qvet sim --compare` on it.
#include <iostream>
#include <map>
#include <string>

#include "core/syntax/parser.h"
#include "devices/compare.h"
#include "devices/plan.h"
#include "devices/replay.h"
#include "devices/sim/backend.h"
#include "devices/sim/sim.h"
#include "tests/oracle/random_program.h"

using namespace qvet;

int main(int argc, char** argv) {
  uint64_t seed = 1, count = 300, runs = 30;
  bool print = false, replay_runs = false;
  uint64_t skipped = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (a == "--count" && i + 1 < argc) count = std::stoull(argv[++i]);
    else if (a == "--runs" && i + 1 < argc) runs = std::stoull(argv[++i]);
    else if (a == "--print") print = true;
    else if (a == "--replay") replay_runs = true;
    else {
      std::cerr << "usage: qvet_sim_random [--seed S] [--count N] [--runs R] [--print] [--replay]\n";
      return 2;
    }
  }
  std::cout << "sim-random: seed " << seed << ", " << count << " programs, " << runs
            << (replay_runs ? " replays through the sim back end\n" : " runs per policy\n");
  uint64_t failed = 0, races = 0, manifested = 0, invalid = 0;
  std::map<std::string, uint64_t> differences;
  for (uint64_t k = 0; k < count; ++k) {
    std::string text = oracle::random_program(seed + k);
    SourceSet src;
    LoadResult r = load_program_text(src, "random.hcq", text);
    if (!r.program) {
      ++invalid;
      continue;
    }
    Trace t;
    try {
      t = elaborate(*r.program, bind_params(*r.program, {}));
    } catch (const InputError&) {
      ++invalid;
      continue;
    }
    Prediction pred(t);
    Simulator sim(t);
    Comparison cmp(pred);
    if (replay_runs) {
      bool deadlock = false;
      for (const Diagnostic& d : pred.diagnostics()) deadlock |= d.rule == "deadlock";
      if (deadlock) {
        ++skipped;
        continue;
      }
      SimBackend b;
      std::string error;
      PlanOptions po;
      po.seed = seed + k;
      Plan plan = make_plan(t, po);
      b.open(plan.layout, {}, error);
      for (uint64_t i = 0; i < runs; ++i) {
        po.seed = seed + k + i;
        redraw_durations(plan, t, po);
        ReplayRun rr = replay(t, plan, b, seed + k + i, ReplayOptions{});
        if (!rr.error.empty()) std::cout << "--- seed " << seed + k << ": replay failed: " << rr.error << "\n";
        else cmp.add(rr.run, i);
      }
    }
    for (Policy p : {Policy::Random, Policy::Pct, Policy::Delay}) {
      if (replay_runs) break;
      SimOptions o;
      o.policy = p;
      o.seed = seed + k;
      o.record_seen = true;
      o.delay_pairs = pred.races();
      for (uint64_t i = 0; i < runs; ++i) cmp.add(sim.run(o, i), i);
    }
    cmp.finish();
    for (const Violation& v : cmp.violations())
      if (!v.soundness) ++differences[v.kind];
    for (const auto& c : cmp.coverage()) races++, manifested += c.manifested();
    if (cmp.soundness_violations()) ++failed;
    if (print || cmp.soundness_violations())
      std::cout << "--- seed " << seed + k << "\n" << cmp.table("random.hcq");
  }
  std::cout << count - failed - invalid - skipped << " passed, " << failed << " failed";
  if (invalid) std::cout << ", " << invalid << " invalid (a generator bug)";
  if (skipped) std::cout << ", " << skipped << " skipped (a predicted deadlock)";
  std::cout << "; " << manifested << " of " << races << " predicted races manifested";
  for (auto& [kind, n] : differences) std::cout << "; " << n << " program(s) with " << kind;
  std::cout << "\n";
  return failed || invalid ? 1 : 0;
}
