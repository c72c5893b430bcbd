// Values that the command line and libqvet take as text: an integer written as in .hcq, and a
// comma-separated list of rule ids. One reading for both, so `--param n=0x10` and
// qvet_options_set_param(o, "n", "0x10") agree.
#pragma once
#include <string>
#include <vector>

#include "core/expr.h"

namespace qvet {

// An integer literal as .hcq writes it (decimal, 0x, 2^k, K/M/G suffixes); false when `s` is not one.
bool parse_integer(const std::string& s, i128& out);
// Rule ids separated by commas ("none": the ordering engine alone). False, with the first id that
// names no rule in `unknown`, when one does not.
bool parse_rule_list(const std::string& list, std::vector<std::string>& out, std::string& unknown);

}  // namespace qvet
