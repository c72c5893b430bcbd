// libFuzzer target: any bytes as an AMD SDMA stream (devices/amd/sdma.h) against a fixed binding
// in which the input itself is also a region (so INDIRECT packets can call into it). The checks
// are fuzz/fuzz_stream.h's; SDMA never makes its queue overlap.
#include <cstddef>
#include <cstdint>
#include <string>

#include "devices/amd/sdma.h"
#include "devices/amd/sdma_packets.h"
#include "fuzz/fuzz_stream.h"

namespace {

// The names the binding below gives addresses to, as a program declares them.
const char* kHead = R"(device gpu0 amd
buffer a on gpu0 4K
buffer b on host 4K
signal tl on host = 0
signal s1 on gpu0
queue x0 on gpu0 copy
)";

qvet::StreamBinding binding(std::string_view input) {
  qvet::StreamBinding b;
  b.buffers = {{0x10000000, 4096, "a", {}}, {0x10010000, 4096, "b", {}}};
  b.signals = {{0x20000000, 16, "tl", {}}, {0x20000100, 16, "s1", {}}};
  b.regions = {{0x40000000, "input", std::string(input), 1, {}}};
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qvet;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  StreamBinding b = binding(input);
  StreamOptions opt;
  opt.max_dwords = 1 << 16;
  opt.ignored = {amd::sdma::kConstFill};  // one ignorable packet, so the skip path runs too
  return fuzz::check_stream(input, kHead, "x0", [&](std::string_view in) {
    StreamResult r = amd::decode_sdma(b, in, 1, opt);
    if (r.overlap) __builtin_trap();  // SDMA is serial
    return r;
  });
}
