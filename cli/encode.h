// `qvet encode`: a .hcq program's batches as the binary streams runtimes submit (docs/encoded.md).
//
// Every `submit Q { ... }` batch whose commands are concrete (no param, loop or list variable in
// a value or range) goes to the stream format that serves its queue (devices/streams.h: amd-pm4,
// ...), one stream file per batch. The program's text is kept line for line, except that:
// encoded batches become `submit Q stream FORMAT "FILE"`, the buffers and signals the streams
// name get `at ADDR`, the kernels and one memory region (kernel arguments, QMDs) are declared
// before the first host statement, and `# expect:` places move with what they name (a command's
// to the FILE:DWORD of its packet). What a format cannot carry (a value wider than its field, a
// copy on an amd compute queue, ...) stays `.hcq` text, and a note says why.
//
// Each stream is decoded again here and must give back its batch's commands; a mismatch is an
// internal error (never silently written). The corpus round trip (tests/run_roundtrip.sh) then
// checks the encoded program independently: same verdict, same resolved commands.
#pragma once
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/source.h"

namespace qvet {

struct EncodeOptions {
  std::vector<std::string> formats;  // --format: only these formats (empty: every format)
  std::string stem;                  // file names start with it ("eager" -> eager.hcq, eager_c0_1.pm4)
};

struct EncodeOutput {
  struct File {
    std::string name, bytes;
  };
  std::vector<File> files;  // files[0] is STEM.hcq; then the streams and STEM.mem
  std::vector<std::string> notes;  // "line 12: kept as text: ..."
  size_t encoded = 0, kept = 0;    // batches
};

// `p` must have been parsed from the .hcq text of `src.text(p.file)` (not JSON). Throws InputError
// for a program it cannot rewrite (one that submits streams) and std::logic_error when a decoder
// does not give a batch back.
EncodeOutput encode_program(const Program& p, const SourceSet& src, const EncodeOptions& opt);

}  // namespace qvet
