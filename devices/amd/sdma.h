// The AMD SDMA copy-queue decoder and encoder: a little-endian dword stream, as tinygrad's
// AMDCopyQueue writes it, decoded into device commands of the .hcq language (docs/encoded.md,
// "AMD SDMA"), and a batch of an amd copy queue lowered to such a stream.
//
// decode_sdma walks SDMA packets (each packet's length set by its op and sub-op; NOPs skipped),
// follows INDIRECT into the binding's regions, resolves every address through the StreamBinding
// and returns one DecodedCommand per command, located at its packet (`line` = 1-based dword
// number in the file the packet lies in). Anything it cannot decode honestly (an unknown op or
// sub-op, a packet cut off by the end, a field it does not model, an address bound to nothing, a
// copy past its buffer) throws InputError at that dword, naming the dword offset and the address
// in hex. Pure: no files, no Program.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "devices/streams.h"

namespace qvet::amd {

// Throws InputError. `file` is the stream's SourceSet index. SDMA runs its packets one after
// another: the result never asks for an overlap queue.
// The name of an op decode_sdma reads as a command or a wait (COPY, FENCE, POLL_REGMEM,
// TIMESTAMP, INDIRECT), for --ignore-packet.
const char* sdma_decoded_packet(uint32_t op);
StreamResult decode_sdma(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt = {});

// One batch of an amd copy queue as tinygrad's AMDCopyQueue lowers it: POLL_REGMEM for a wait,
// FENCE + TRAP for a signal, COPY_LINEAR for a copy, TIMESTAMP GET_GLOBAL for a timestamp. Throws
// CannotEncode for an exec or memory_barrier (no compute on SDMA), a barrier (SDMA has no barrier
// packet), a value past 32 bits, a copy of more than 2^30 bytes, or a chained queue.
std::string encode_sdma(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space);

}  // namespace qvet::amd
