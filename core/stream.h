// What a decoder of a binary command stream is given and what it hands back (docs/encoded.md).
//
// The .hcq parser reads the binding (`at` addresses of buffers and signals, `kernel` code
// addresses with their argument roles, `region` files at addresses) into a StreamBinding and
// hands it with the stream's bytes to a decoder (devices/amd/pm4.h). The decoder resolves
// addresses to names and returns each command as one line of .hcq text with the Loc of the
// packet it came from (`line` = 1-based dword number, `col` 0); the parser reads those lines
// through the same ProgramBuilder calls as any `submit` block, so every static rule holds.
// Plain data: no part of core/syntax, so a decoder depends on core/ alone.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/source.h"

namespace qvet {

// The parser guarantees what the decoders rely on: buffers and signals do not overlap one another,
// regions do not overlap each other, and no two kernels share a code address.
struct StreamBinding {
  // A base buffer at [addr, addr + size) or a signal whose 64-bit value word is at `addr` (its
  // timestamp slot at addr + 8, as tinygrad lays HCQ signals out: a signal spans 16 bytes).
  struct Placed {
    uint64_t addr = 0, size = 0;
    std::string name;
    Loc loc;
  };
  enum class Arg : uint8_t { Reads, Writes, Value };  // a kernel argument: pointer read, written, or not a pointer
  struct KernelArg {
    static constexpr uint64_t kToEnd = UINT64_MAX;
    Arg role = Arg::Value;
    uint64_t extent = kToEnd;  // bytes accessed from the pointer (`reads 4K`), or to the buffer's end
    friend bool operator==(const KernelArg&, const KernelArg&) = default;
  };
  struct Kernel {
    uint64_t addr = 0;  // code address (COMPUTE_PGM_LO/HI << 8 on AMD)
    std::string name;
    std::vector<KernelArg> args;  // 8 bytes each, in order
    Loc loc;
  };
  struct Region {
    uint64_t addr = 0;
    std::string name, bytes;  // the file's contents
    uint32_t file = 0;        // SourceSet index of the file (Locs of packets decoded from it)
    Loc loc;
  };
  std::vector<Placed> buffers, signals;
  std::vector<Kernel> kernels;
  std::vector<Region> regions;
};

// One decoded command: `text` is a device command line ("wait tl >= 3"). `fetched`: the buffers
// over the command memory its packet lies in ("ib[0x10:0x1c]", comma separated; an indirect
// buffer's region), which its queue reads from the submit until the command starts: the command
// reads them too (docs/encoded.md, "What a decoded command reads").
struct DecodedCommand {
  Loc loc;
  std::string text;
  std::string fetched;
  // A 32-bit signal that also writes 0 to the word's high half (NVIDIA's four-word semaphore
  // release on a copy queue): the model's 32-bit write keeps that half, so the two agree only
  // while no write can leave it nonzero, which the parser checks (docs/encoded.md).
  bool zero_high = false;
};

}  // namespace qvet
