#include "core/syntax/expect.h"

namespace qvet {

namespace {

std::string describe(const Expectation& e) {
  if (e.clean) return "clean";
  return e.rule + "@" + std::to_string(e.line1) + (e.line2 ? "," + std::to_string(e.line2) : "");
}

bool matches(const Expectation& e, const Diagnostic& d) {
  if (e.clean || e.rule != d.rule) return false;
  if (!e.line2) return d.loc.line == e.line1;
  uint32_t rel = d.related_loc().line;
  return (d.loc.line == e.line1 && rel == e.line2) || (d.loc.line == e.line2 && rel == e.line1);
}

}  // namespace

ExpectOutcome match_expectations(const std::vector<Expectation>& expects, const std::vector<Diagnostic>& diags,
                                 const SourceSet& src) {
  ExpectOutcome out;
  if (expects.empty()) {
    out.problems.push_back("the file holds no '# expect:' line");
    return out;
  }
  std::vector<bool> used(diags.size(), false);
  std::vector<bool> met(expects.size(), false);
  bool clean = expects.size() == 1 && expects[0].clean;
  // Two-line expectations first: they are the most specific, so a greedy match is exact for them.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < expects.size(); ++i) {
      if (met[i] || expects[i].clean || (pass == 0) != (expects[i].line2 != 0)) continue;
      for (size_t j = 0; j < diags.size(); ++j)
        if (!used[j] && matches(expects[i], diags[j])) {
          used[j] = met[i] = true;
          break;
        }
    }
  for (size_t i = 0; i < expects.size(); ++i)
    if (!met[i] && !expects[i].clean)
      out.problems.push_back(format_loc(expects[i].loc, src) + ": expected " + describe(expects[i]) + " was not found");
  for (size_t j = 0; j < diags.size(); ++j) {
    const Diagnostic& d = diags[j];
    if (used[j] || d.severity == Severity::Note) continue;
    out.problems.push_back(format_loc(d.loc, src) + ": unexpected " + severity_name(d.severity) + " [" + d.rule + "]" +
                           (clean ? " in a file expected clean" : "") + ": " + d.message);
  }
  out.ok = out.problems.empty();
  return out;
}

}  // namespace qvet
