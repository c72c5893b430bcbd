#include "core/diagnostic.h"

#include <algorithm>

namespace qvet {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

const std::vector<RuleInfo>& all_rules() {
  static const std::vector<RuleInfo> rules = {
#define RULE(name, id, severity, fixable, summary) {Rule::name, id, Severity::severity, fixable, summary},
#include "core/rules.def"
#undef RULE
  };
  return rules;
}

const RuleInfo& rule_info(Rule r) { return all_rules()[size_t(r)]; }

const RuleInfo* find_rule(std::string_view id) {
  for (auto& r : all_rules())
    if (id == r.id) return &r;
  return nullptr;
}

void count_severities(const std::vector<Diagnostic>& ds, int& e, int& w, int& n) {
  e = w = n = 0;
  for (auto& d : ds) (d.severity == Severity::Error ? e : d.severity == Severity::Warning ? w : n)++;
}

void sort_diagnostics(std::vector<Diagnostic>& ds) {
  std::stable_sort(ds.begin(), ds.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.loc != b.loc) return a.loc < b.loc;
    if (a.rule != b.rule) return a.rule < b.rule;
    Loc ra = a.related_loc(), rb = b.related_loc();
    if (ra != rb) return ra < rb;
    return a.message < b.message;
  });
}

std::string format_loc(const Loc& loc, const SourceSet& src) {
  std::string s = src.name(loc.file);
  if (s.empty()) s = "<input>";
  if (loc.line) s += ":" + std::to_string(loc.line);
  if (loc.line && loc.col) s += ":" + std::to_string(loc.col);
  return s;
}

}  // namespace qvet
