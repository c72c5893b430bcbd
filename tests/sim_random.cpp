// The simulator against the engine on random programs (the differential test's generator):
// every program runs under each policy and `Comparison` checks every run. Zero soundness
// violations pass; the other differences (docs/simulator.md) are counted and printed.
//
//   qvet_sim_random [--seed S] [--count N] [--runs R] [--print]
//
// Program k uses seed S + k; reproduce one with `qvet_differential --seed S+k --count 1 --print`
// (it prints the program) and `qvet sim --compare` on it.
#include <iostream>
#include <map>
#include <string>

#include "core/parser.h"
#include "devices/compare.h"
#include "devices/sim/sim.h"
#include "tests/oracle/random_program.h"

using namespace qvet;

int main(int argc, char** argv) {
  uint64_t seed = 1, count = 300, runs = 30;
  bool print = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (a == "--count" && i + 1 < argc) count = std::stoull(argv[++i]);
    else if (a == "--runs" && i + 1 < argc) runs = std::stoull(argv[++i]);
    else if (a == "--print") print = true;
    else {
      std::cerr << "usage: qvet_sim_random [--seed S] [--count N] [--runs R] [--print]\n";
      return 2;
    }
  }
  std::cout << "sim-random: seed " << seed << ", " << count << " programs, " << runs << " runs per policy\n";
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
    for (Policy p : {Policy::Random, Policy::Pct, Policy::Delay}) {
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
  std::cout << count - failed - invalid << " passed, " << failed << " failed";
  if (invalid) std::cout << ", " << invalid << " invalid (a generator bug)";
  std::cout << "; " << manifested << " of " << races << " predicted races manifested";
  for (auto& [kind, n] : differences) std::cout << "; " << n << " program(s) with " << kind;
  std::cout << "\n";
  return failed || invalid ? 1 : 0;
}
