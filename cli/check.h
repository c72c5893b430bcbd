// `qvet check FILE...`: every file verified on its own (in parallel with -j), printed in the order
// of the command line as text, JSON or SARIF, or matched against its `# expect:` lines.
#pragma once
#include "cli/args.h"

namespace qvet::cli {

extern const char* const kCheckHelp;
int cmd_check(const Args& a);

}  // namespace qvet::cli
