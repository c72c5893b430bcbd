// Invalid input: text or meaning that breaks language.md, or an implementation limit. Thrown
// by the front ends (syntax/) and by elaboration (model/trace), reported as a Diagnostic with
// rule "input" and exit code 2.
#pragma once
#include <string>

#include "core/diagnostic.h"
#include "core/source.h"

namespace qvet {

struct InputError {
  Loc loc;
  std::string message;
  bool limit = false;  // an implementation limit was reached (the input may be valid)
};

// An InputError as a Diagnostic (rule "input").
inline Diagnostic input_diagnostic(const InputError& e) {
  Diagnostic d;
  d.rule = "input";
  d.severity = Severity::Error;
  d.message = e.message;
  d.loc = e.loc;
  return d;
}

}  // namespace qvet
