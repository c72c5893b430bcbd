// The canonical .hcq form of a Program. print(parse(print(p))) == print(p), and parsing the
// printed text gives a Program equal to p up to source locations. `# expect:` lines are not
// printed: their line numbers refer to the original file.
#pragma once
#include <string>

#include "core/ir.h"

namespace qvet {

std::string print_program(const Program& p);
// The same, each command decoded from a binary stream followed by `# FILE:DWORD` (its packet's
// file, without directories, and 1-based dword number; docs/encoded.md): `qvet decode`.
std::string print_decoded(const Program& p, const SourceSet& src);
std::string print_range(const Program& p, const Range& r);
std::string print_command(const Program& p, const Command& c);
std::string format_size(const Expr& e, const std::vector<std::string>& names);
// Pieces the JSON writer prints the same way: `host` or the device, a view's range as written,
// a param constraint (">= 1", "in 1..2^31").
std::string owner_name(const Program& p, uint32_t owner);
std::string print_view(const Program& p, const Buffer& view);
std::string print_constraint(const Constraint& c, const std::vector<std::string>& names);

}  // namespace qvet
