// Reading programs: the .hcq text parser and the loader that also accepts qvet's JSON IR.
//
// The parser is hand-written and line-oriented (one statement per line, `{` ends a line that
// opens a block, `}` stands alone). Names, expressions and every static rule of language.md go
// through ProgramBuilder (builder.h), shared with the JSON reader; the first violation is an
// InputError naming file:line:col.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/ir.h"
#include "core/syntax/lexer.h"

namespace qvet {

// Called with each top-level statement as soon as it is read (and the program read so far);
// returning true drops the statement from the Program (it was consumed, e.g. elaborated).
using StatementSink = std::function<bool(const Program&, const Stmt&)>;

// How binary streams a program submits are decoded (docs/encoded.md).
struct LoadOptions {
  // Packets accepted and skipped, per stream format (`--ignore-packet [FORMAT:]N`): the format's
  // name ("amd-pm4") and its opcode or method.
  std::vector<std::pair<std::string, uint32_t>> ignored_packets;
};

// Parses the text of `file` in `src`. Throws InputError. Stream and region files the program
// names (docs/encoded.md) are read relative to the file's directory and added to `src`.
Program parse_hcq(SourceSet& src, uint32_t file, const StatementSink* sink = nullptr, const LoadOptions& opt = {});

struct LoadResult {
  std::optional<Program> program;
  std::optional<Diagnostic> error;  // set exactly when program is not
};

// Reads `path` ("-" is standard input) as .hcq text, or as JSON IR when it starts with '{'.
LoadResult load_program(SourceSet& src, const std::string& path, const LoadOptions& opt = {});
// Same, for text already in memory; .hcq text is parsed with `sink` (see parse_hcq).
LoadResult load_program_text(SourceSet& src, const std::string& name, std::string text,
                             const StatementSink* sink = nullptr, const LoadOptions& opt = {});
// Reads a file ("-": standard input) into `text`. False when it cannot be opened or read (a
// directory, over 2 GiB); `error` then says so with the reason ("cannot open file: No such ...").
bool read_file(const std::string& path, std::string& text, std::string* error = nullptr);
// Reads `path` only when it is a regular file of at most `max_bytes` (checked before it is
// opened, without blocking): never a device, a FIFO or a directory. False otherwise.
bool read_regular_file(const std::string& path, size_t max_bytes, std::string& text);
// Reads `parts` (path components, none "..") under directory `dir` ("": the working directory)
// the same way, and only if no component is a symbolic link, as the file system stands while
// each is opened (openat with O_NOFOLLOW, from the directory before it). False otherwise, with
// `link` naming the component (relative to `dir`) that was a link, if one was.
bool read_regular_file_beneath(const std::string& dir, const std::vector<std::string>& parts, size_t max_bytes,
                               std::string& text, std::string& link);

// One `# expect:` item ("clean", "race@12,19"); throws InputError.
Expectation parse_expectation(std::string_view item, Loc loc);

}  // namespace qvet
