// `qvet check --expect`: matches a program's `# expect:` lines against the diagnostics found,
// one to one, exactly as language.md defines it.
#pragma once
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/ir.h"

namespace qvet {

struct ExpectOutcome {
  bool ok = false;
  std::vector<std::string> problems;  // one line each: missing expectations, unexpected diagnostics
};

ExpectOutcome match_expectations(const std::vector<Expectation>& expects, const std::vector<Diagnostic>& diags,
                                 const SourceSet& src);

}  // namespace qvet
