// The AMD PM4 compute decoder: a little-endian dword stream, as tinygrad's AMDComputeQueue
// writes it, decoded into device commands of the .hcq language (docs/encoded.md).
//
// decode_pm4 walks type-3 packets (type-2 filler and NOP skipped), follows INDIRECT_BUFFER into
// the binding's regions, resolves every address through the StreamBinding and returns one
// DecodedCommand per command, located at its packet (`line` = 1-based dword number in the file
// the packet lies in, the stream's or a region's). Anything it cannot decode honestly (an
// unknown opcode, a count past the end, a field it does not model, an address bound to
// nothing) throws InputError at that dword, naming the dword offset and the address in hex.
// Pure: no files, no Program; the parser feeds the result through its ProgramBuilder.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/stream.h"

namespace qvet::amd {

struct Pm4Result {
  std::vector<DecodedCommand> cmds;
  // Set when a dispatch is not followed by EVENT_WRITE CS_PARTIAL_FLUSH before the next dispatch
  // or the stream's end: the queue must be `ordering overlap`. `unflushed` is that dispatch.
  bool overlap = false;
  Loc unflushed;
};

struct Pm4Options {
  bool queue_overlap = false;         // the queue already runs `ordering overlap`
  std::vector<uint8_t> ignored;       // opcodes accepted and skipped with their bodies
  uint64_t max_dwords = uint64_t(1) << 24;    // dwords decoded in all, indirect buffers included
  uint64_t max_commands = uint64_t(1) << 20;  // commands one stream decodes to
};

// Throws InputError. `file` is the stream's SourceSet index.
Pm4Result decode_pm4(const StreamBinding& b, std::string_view bytes, uint32_t file, const Pm4Options& opt = {});

}  // namespace qvet::amd
