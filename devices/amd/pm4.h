// The AMD PM4 compute decoder: a little-endian dword stream, as tinygrad's AMDComputeQueue
// writes it, decoded into device commands of the .hcq language (docs/encoded.md).
//
// decode_pm4 walks type-3 packets (type-2 filler and NOP skipped), follows INDIRECT_BUFFER into
// the binding's regions, resolves every address through the StreamBinding and returns one
// DecodedCommand per command, located at its packet (`line` = 1-based dword number in the file
// the packet lies in, the stream's or a region's). Anything it cannot decode honestly (an
// unknown opcode, a count past the end, a field it does not model, an address bound to
// nothing) throws InputError at that dword, naming the dword offset and the address in hex.
// Pure: no files, no Program; the parser feeds the result through its ProgramBuilder. The
// encoder writes what the decoder reads (the round trip over the corpus, docs/encoded.md).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "devices/streams.h"

namespace qvet::amd {

// Throws InputError. `file` is the stream's SourceSet index. `result.overlap` is set when a
// dispatch is not followed by EVENT_WRITE CS_PARTIAL_FLUSH before the next dispatch or the
// stream's end (the queue must be `ordering overlap`); `unflushed` is that dispatch.
// The name of an opcode decode_pm4 reads (every one it knows but NOP), for --ignore-packet.
const char* pm4_decoded_packet(uint32_t op);
StreamResult decode_pm4(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt = {});

// One batch of an amd compute queue as tinygrad's AMDComputeQueue lowers it (semantics.md's notes,
// docs/encoded.md): WAIT_REG_MEM, RELEASE_MEM, HDP flush + ACQUIRE_MEM, ACQUIRE_MEM + SET_SH_REG +
// DISPATCH_DIRECT (+ CS_PARTIAL_FLUSH on a serial queue), CS_PARTIAL_FLUSH for a barrier. Throws
// CannotEncode for a copy, a value past 32 bits, or a chained queue.
std::string encode_pm4(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space);

}  // namespace qvet::amd
