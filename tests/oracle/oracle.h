// The oracle: a second, deliberately plain reading of semantics.md and diagnostics.md (v3), for
// small concrete programs only. It exists to be obviously right and to be compared with the
// engine and the checkers (tests/oracle/differential.cpp), never to be fast: events are nodes of
// a graph, the queue rules add edges, the wait rule is iterated to its least fixed point over a
// bitset transitive closure, every rule is decided by brute force over pairs, then findings are
// grouped per queue and repeats merged.
//
// It shares nothing with model/ or checkers/ but the IR (the Trace that elaboration makes:
// loops unrolled, lists expanded, ranges resolved) and the profile table (model/profile.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"

namespace qvet::oracle {

// One diagnostic as the differential test compares it. `related` is 0 when the rule has no
// related location; for notes (`stale-wait`, `redundant-wait`) only rule and line are compared.
// `others`: for the rules grouped per queue, how many other commands its group holds.
struct Finding {
  std::string rule;
  uint32_t line = 0, related = 0;
  uint64_t others = 0;
  friend auto operator<=>(const Finding&, const Finding&) = default;
};

// Every finding of `t` (a trace of a param-free program), sorted.
std::vector<Finding> check(const Trace& t);

// "race@12,19" / "race@12,19+3" (3 others) / "deadlock@4" / "stale-wait@7".
std::string to_string(const Finding& f);

}  // namespace qvet::oracle
