// Verification of a whole Program, for every admissible value of its params.
//
// Programs without params are elaborated and checked once (no solver call). Otherwise every
// comparison the model can make between values (write values against wait thresholds and the
// initial value, write values against each other, byte ranges against each other) is collected
// as an affine atom over the params; the SMT layer (smt/) splits the admissible param space into
// the regions where those atoms have one truth value each, and one binding per region is
// checked concretely. Inside a region the model's decisions are the same, so the regions' verdicts
// are the verdicts for all values. A finding that holds in some regions only says so, with a
// counterexample binding. Params that bound `repeat` loops change the program's shape: those are
// checked by unrolling a bounded number of iteration counts (said in the notes).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <optional>

#include "core/diagnostic.h"
#include "core/ir.h"
#include "core/syntax/parser.h"
#include "model/trace.h"
#include "model/wait_rule.h"

namespace qvet {

struct VerifyOptions {
  std::vector<std::pair<std::string, i128>> fixed;  // --param bindings
  std::vector<std::string> rules;                   // empty: all
  EngineMode engine = EngineMode::Indexed;  // --engine (model/wait_rule.h)
  size_t region_limit = 64;
  size_t max_atoms = 20;
  int unroll = 4;        // loop-bound params with many counts: their smallest value and this many more
  int unroll_all = 64;   // loop-bound params with fewer counts than this: every count
  unsigned timeout_ms = 10000;
  // Events (commands and host statements) elaborated and checked across iteration counts and
  // regions; past it, the iteration counts between the smallest few and the largest are left out
  // (said in a note). The smallest and the largest count are checked whatever it says.
  size_t event_budget = 4'000'000;
  bool witness = false;  // races carry a witness schedule
};

struct VerifyResult {
  std::vector<Diagnostic> diagnostics;  // sorted
  std::vector<std::string> notes;       // how the params were covered (for standard error)
  size_t commands = 0, host = 0;        // of the first elaboration
};

// Throws InputError for invalid input (including a binding that breaks a lifetime rule).
VerifyResult verify_program(const Program& p, const VerifyOptions& o);

// Large param-free .hcq texts (8 MB or more) are elaborated while they are read: their batches
// are never all in memory, and they are checked as one trace (check_trace). Smaller ones keep the
// whole program, so fixes can be written the way the source writes values, with loop variables.
bool streamable(const std::string& text);
// Reads a streamable text into `keep` (its declarations) and `t` (its trace, which refers to
// `keep`), or sets `error` and returns false. `elaborate_s`: the time spent elaborating.
bool load_streamed(SourceSet& src, const std::string& file, std::string text, const LoadOptions& opt,
                   std::optional<Program>& keep, Trace& t, std::optional<Diagnostic>& error, double* elaborate_s = nullptr);

}  // namespace qvet
