// qvet's JSON form of a Program (schema: docs/json.md). Writing is total; reading builds the
// Program through the ProgramBuilder the .hcq parser uses (core/syntax/builder.h), so both inputs
// obey exactly the same rules; errors point at each node's "loc" in the source, else at the node.
#pragma once
#include <string>

#include "core/ir.h"
#include "core/syntax/lexer.h"

namespace qvet {

// `with_locs` false leaves out every "loc" (used to compare programs structurally).
std::string write_json_program(const Program& p, const SourceSet& src, bool with_locs = true);
// Reads the JSON text of `file`. Throws InputError.
Program read_json_program(SourceSet& src, uint32_t file);

}  // namespace qvet
