// The rule pages (docs/rules/RULE.md), built into the binary: `qvet help RULE` prints one, and
// SARIF's rule list carries each one's first paragraph and its path as helpUri. Generated from
// the pages by cmake/rule_pages.cmake; tests/run_rule_pages.sh checks every rule of
// core/rules.def has a page and that each page's example output is what qvet prints.
#pragma once
#include <string_view>
#include <vector>

namespace qvet {

struct RulePage {
  std::string_view id;    // the rule's stable id
  std::string_view text;  // the page, markdown
};
const std::vector<RulePage>& rule_pages();

// The page of rule `id`, or empty.
inline std::string_view rule_page(std::string_view id) {
  for (const RulePage& p : rule_pages())
    if (p.id == id) return p.text;
  return {};
}

// The page's first paragraph after its title: what the rule means, for SARIF's help.text.
inline std::string_view rule_page_summary(std::string_view page) {
  size_t a = page.find("\n\n");
  if (a == std::string_view::npos) return {};
  a += 2;
  size_t b = page.find("\n\n", a);
  return page.substr(a, b == std::string_view::npos ? std::string_view::npos : b - a);
}

}  // namespace qvet
