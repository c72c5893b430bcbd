#include "core/syntax/expect.h"

namespace qvet {

namespace {

std::string expectation_text(const Expectation& e) {
  if (e.clean) return "clean";
  auto place = [](const std::string& f, uint32_t l) { return (f.empty() ? "" : f + ":") + std::to_string(l); };
  return e.rule + "@" + place(e.file1, e.line1) + (e.line2 ? "," + place(e.file2, e.line2) : "");
}

// `l` is on `line`, and in a file named `file` (directories aside) unless `file` is empty.
bool at(const Loc& l, const std::string& file, uint32_t line, const SourceSet& src) {
  if (l.line != line) return false;
  if (file.empty()) return true;
  const std::string& n = src.name(l.file);
  return n.substr(n.find_last_of('/') + 1) == file;
}

bool matches(const Expectation& e, const Diagnostic& d, const SourceSet& src) {
  if (e.clean || e.rule != d.rule) return false;
  if (!e.line2) return at(d.loc, e.file1, e.line1, src);
  Loc rel = d.related_loc();
  return (at(d.loc, e.file1, e.line1, src) && at(rel, e.file2, e.line2, src)) ||
         (at(d.loc, e.file2, e.line2, src) && at(rel, e.file1, e.line1, src));
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
        if (!used[j] && matches(expects[i], diags[j], src)) {
          used[j] = met[i] = true;
          break;
        }
    }
  for (size_t i = 0; i < expects.size(); ++i)
    if (!met[i] && !expects[i].clean)
      out.problems.push_back(format_loc(expects[i].loc, src) + ": expected " + expectation_text(expects[i]) + " was not found");
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
