// Diagnostics: one value type for every finding and every input error, rendered as
// clang-style text, JSON or SARIF 2.1.0. The same diagnostics give byte-identical output (SARIF
// also reads the working directory, to make paths relative to it).
#pragma once
#include <string>
#include <vector>

#include "core/source.h"

namespace qvet {

enum class Severity { Note, Warning, Error };
const char* severity_name(Severity s);

// The rules of diagnostics.md (core/rules.def).
enum class Rule : uint8_t {
#define RULE(name, id, severity, fixable, summary) name,
#include "core/rules.def"
#undef RULE
};

// One rule: stable id, default severity, whether `qvet fix` can repair it, one-line description.
struct RuleInfo {
  Rule rule;
  const char* id;
  Severity severity;
  bool fixable;
  const char* summary;
};
const std::vector<RuleInfo>& all_rules();
const RuleInfo& rule_info(Rule r);
const RuleInfo* find_rule(std::string_view id);

struct Related {
  Loc loc;
  std::string message;
};

// One line of .hcq text to insert, before or after a source line (indented like that line).
struct TextEdit {
  Loc at;
  bool after = false;
  std::string text;
  friend bool operator==(const TextEdit&, const TextEdit&) = default;
};

// A repair: what it does in words, and the edits that do it (empty when it needs a person:
// `qvet fix` applies only fixes with edits).
struct Fix {
  std::string description;  // "add `wait tl >= 3` before line 12 on queue c1"
  std::vector<TextEdit> edits;
};

// One event of a witness schedule: an execution the model allows, in time order.
struct ScheduleStep {
  uint64_t time = 0;
  std::string event;  // "start", "end" (device commands) or "at" (host statements)
  std::string what;   // "`exec k` on c0", "host `write`"
  Loc loc;
  bool racing = false;  // one of the two accesses the schedule shows overlapping
  // Which event of the checked Trace this is, so that the simulator can replay the schedule:
  // a host statement's index, or a command's id (in submission order).
  bool host = false;
  uint32_t id = UINT32_MAX;
};

struct Diagnostic {
  std::string rule;  // a RuleInfo id, or "input" for invalid input
  Severity severity = Severity::Error;
  std::string message;
  Loc loc;
  std::vector<Related> related;  // related[0] is the rule's "related location", if any
  std::vector<Related> notes;    // explanation lines; a note may have no location
  std::vector<Fix> fixes;
  std::vector<ScheduleStep> witness;  // races, with --witness: a schedule in which they overlap
  // Rules grouped per queue (diagnostics.md): the group's other findings besides `related`, as
  // its note says them, for tools that read diagnostics in process.
  struct Group {
    uint64_t others = 0;          // how many other commands
    std::vector<uint32_t> lines;  // their lines, sorted, at most 8
    bool cut = false;             // there are more lines than `lines`
  } group;

  // Sets the rule's id and default severity.
  void set_rule(Rule r) {
    rule = rule_info(r).id;
    severity = rule_info(r).severity;
  }
  bool is(Rule r) const { return rule == rule_info(r).id; }
  // The rule's related location (invalid when there is none).
  Loc related_loc() const { return related.empty() ? Loc{} : related[0].loc; }
};

// Errors, warnings and notes in `ds`.
void count_severities(const std::vector<Diagnostic>& ds, int& errors, int& warnings, int& notes);

// Order used for output: by primary location, then rule, then message.
void sort_diagnostics(std::vector<Diagnostic>& ds);

// "file:line:col" (or "file" / "file:line" when parts are unknown).
std::string format_loc(const Loc& loc, const SourceSet& src);

}  // namespace qvet
