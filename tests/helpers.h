// Test helpers: parse and check .hcq text held in a string.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker.h"
#include "core/syntax/parser.h"

namespace qvet::test {

struct Checked {
  SourceSet src;
  std::unique_ptr<Program> program;
  std::optional<Diagnostic> input_error;
  Trace trace;
  std::vector<Diagnostic> diags;

  // "rule@line" or "rule@line,line" for every diagnostic, sorted; notes included.
  std::vector<std::string> summary(bool with_notes = false) const {
    std::vector<std::string> out;
    for (auto& d : diags) {
      if (d.severity == Severity::Note && !with_notes) continue;
      std::string s = d.rule + "@" + std::to_string(d.loc.line);
      if (!d.related.empty() && d.related[0].loc.valid()) s += "," + std::to_string(d.related[0].loc.line);
      out.push_back(s);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  bool has(const std::string& rule) const {
    return std::any_of(diags.begin(), diags.end(), [&](auto& d) { return d.rule == rule; });
  }
};

inline std::unique_ptr<Checked> check(const std::string& text, std::vector<std::pair<std::string, i128>> params = {}) {
  auto c = std::make_unique<Checked>();
  LoadResult r = load_program_text(c->src, "t.hcq", text);
  if (!r.program) {
    c->input_error = r.error;
    return c;
  }
  c->program = std::make_unique<Program>(std::move(*r.program));
  try {
    c->trace = elaborate(*c->program, bind_params(*c->program, params));
  } catch (const InputError& e) {
    c->input_error = input_diagnostic(e);
    return c;
  }
  c->diags = check_trace(c->trace).diagnostics;
  return c;
}

// The input error for `text` ("line: message"), or "" when it is valid.
inline std::string input_error(const std::string& text) {
  auto c = check(text);
  if (!c->input_error) return "";
  return std::to_string(c->input_error->loc.line) + ": " + c->input_error->message;
}

}  // namespace qvet::test
