// `qvet fix`: repairs races, signal races, free-in-flight and visibility findings with the fewest
// waits, signals and memory barriers among the fixes the checkers propose, and proves each repair
// by checking the repaired program again (for every param value, like `check`). Findings that need
// a person (a missing `peer`, a value too wide, a deadlock, a use after free) are listed, never
// papered over.
#pragma once
#include <string>
#include <vector>

#include "checkers/verify.h"
#include "core/diagnostic.h"

namespace qvet {

struct RepairResult {
  bool input_ok = true;
  Diagnostic input_error;             // when !input_ok
  std::string fixed_text;             // the repaired program (== the input when nothing applies)
  std::vector<bool> inserted;         // per line of fixed_text: added by the repair
  std::vector<Fix> applied;
  std::vector<Diagnostic> before;     // findings of the input
  std::vector<Diagnostic> after;      // findings of the repaired program (its own verification)
  std::vector<Diagnostic> unfixable;  // input findings no proposed fix addresses
  bool clean = false;                 // the repaired program has no error or warning
  bool minimal = false;               // the applied set is a smallest subset of the candidates
  size_t checks = 0;                  // programs verified during the search
};

RepairResult repair_program(const std::string& name, const std::string& text, const VerifyOptions& o);
// Insertions only, as a unified diff with 3 lines of context.
std::string unified_diff(const std::string& name, const std::string& fixed_text, const std::vector<bool>& inserted);
// Applies edits to .hcq text; `inserted` marks the new lines.
std::string apply_edits(const std::string& text, const std::vector<TextEdit>& edits, std::vector<bool>* inserted);

}  // namespace qvet
