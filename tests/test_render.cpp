#include <doctest/doctest.h>

#include "core/diagnostic.h"
#include "core/render.h"

using namespace qvet;

namespace {
std::vector<Diagnostic> sample(SourceSet& src) {
  uint32_t f = src.add("p.hcq", "device g nv\n  exec k writes a\n  copy a -> b\n");
  Diagnostic d;
  d.rule = "race";
  d.message = "RAW race on bytes [0, 4) of 'a'";
  d.loc = {f, 3, 3};
  d.related.push_back({{f, 2, 3}, "the earlier access"});
  d.notes.push_back({{}, "nothing orders them"});
  d.fixes.push_back({"add `wait s >= 1` before line 3", {{{f, 3, 3}, false, "wait s >= 1"}}});
  return {d};
}
}  // namespace

TEST_CASE("render: clang-style text with source line - caret - notes and fix") {
  SourceSet src;
  std::string out = render_text(sample(src), src);
  CHECK(out ==
        "p.hcq:3:3: error: RAW race on bytes [0, 4) of 'a' [race]\n"
        "    copy a -> b\n"
        "    ^\n"
        "p.hcq:2:3: note: the earlier access\n"
        "    exec k writes a\n"
        "    ^\n"
        "note: nothing orders them\n"
        "  fix: add `wait s >= 1` before line 3\n");
}

TEST_CASE("render: JSON has rule - severity - locations - notes - fixes and a summary") {
  SourceSet src;
  std::string out = render_json(sample(src), src);
  CHECK(out.find("\"rule\": \"race\"") != std::string::npos);
  CHECK(out.find("\"severity\": \"error\"") != std::string::npos);
  CHECK(out.find("\"line\": 3") != std::string::npos);
  CHECK(out.find("\"fixes\"") != std::string::npos);
  CHECK(out.find("\"errors\": 1") != std::string::npos);
  CHECK(render_json(sample(src), src) == render_json(sample(src), src));
}

TEST_CASE("render: SARIF 2.1.0 lists every rule and related locations") {
  SourceSet src;
  std::string out = render_sarif(sample(src), src);
  CHECK(out.find("\"version\": \"2.1.0\"") != std::string::npos);
  for (auto& r : all_rules()) CHECK(out.find(std::string("\"id\": \"") + r.id + "\"") != std::string::npos);
  CHECK(out.find("\"ruleId\": \"race\"") != std::string::npos);
  CHECK(out.find("\"relatedLocations\"") != std::string::npos);
  CHECK(out.find("\"startLine\": 2") != std::string::npos);
  CHECK(out.find("\"uri\": \"p.hcq\"") != std::string::npos);
}

TEST_CASE("render: a 2 MB line is not echoed whole") {
  SourceSet src;
  std::string line(2 << 20, 'x');
  uint32_t f = src.add("big.hcq", line + "\n");
  Diagnostic d;
  d.rule = "input";
  d.message = "bad";
  d.loc = {f, 1, 1000000};
  CHECK(render_text({d}, src).size() < 1000);
}
