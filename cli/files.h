// What qvet's commands do with files: read a program (streamed while elaborated when it is large)
// and report why one cannot be read; write an output the user named without losing what was there.
#pragma once
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "cli/args.h"
#include "core/diagnostic.h"
#include "core/source.h"
#include "model/trace.h"

namespace qvet::cli {

// Writes a file the user named (-o, --witness=FILE); what was there survives any failure.
// `replaces_input`: `fix F -o F` (core/atomic_file.h).
bool write_output(const std::string& path, std::string_view data, bool replaces_input = false);
// Prints an input error; returns 2, the exit code.
int report_input_error(const Diagnostic& d, const SourceSet& src, std::ostream& err = std::cerr);
// Reads a streamable program (verify/verify.h) while elaborating it; prints the error and
// returns false on invalid input. The trace refers to `keep`.
bool load_streamed(SourceSet& src, const std::string& file, std::string text, const Args& a, int& rc,
                   std::optional<Program>& keep, Trace& t, std::ostream& err = std::cerr);
// Loads the one FILE and elaborates it for --param values (others: their smallest); prints the
// error and returns false on invalid input. The trace refers to `p`, which must outlive it.
bool load_elaborated(SourceSet& src, const Args& a, std::optional<Program>& p, Trace& t, int& rc);

}  // namespace qvet::cli
