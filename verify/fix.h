// `qvet fix`: repairs races, signal races, free-in-flight and visibility findings with waits,
// signals and memory barriers among the fixes the checkers propose, and proves each repair by
// checking the repaired program again (for every param value, like `check`). Findings that need
// a person (a missing `peer`, a value too wide, a deadlock, a use after free) are listed, never
// papered over.
#pragma once
#include <string>
#include <vector>

#include "verify/verify.h"
#include "core/diagnostic.h"

namespace qvet {

struct RepairResult {
  bool input_ok = true;
  Diagnostic input_error;             // when !input_ok
  std::string fixed_text;             // the repaired program (== the input when nothing applies)
  std::string diff;                   // unified diff from the input to fixed_text ("" when equal)
  std::vector<Fix> applied;           // descriptions name lines of the input
  std::vector<Diagnostic> before;     // findings of the input
  std::vector<Diagnostic> after;      // findings of the repaired program (its own verification)
  std::vector<Diagnostic> unfixable;  // input findings no proposed fix addresses
  bool clean = false;                 // the repaired program has no error or warning
  bool irredundant = false;           // no applied wait is redundant in the repaired program
  size_t checks = 0;                  // programs verified during the search
};

RepairResult repair_program(const std::string& name, const std::string& text, const VerifyOptions& o);

}  // namespace qvet
