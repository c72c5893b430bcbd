// libFuzzer target: any bytes as an AMD SDMA stream (devices/amd/sdma.h) against a fixed binding
// in which the input itself is also a region (so INDIRECT packets can call into it). The checks
// are fuzz/fuzz_stream.h's, on a copy queue; one ignorable packet is listed, so the skip path runs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "devices/amd/sdma.h"
#include "devices/amd/sdma_packets.h"
#include "fuzz/fuzz_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qvet;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  StreamBinding b = fuzz_binding();
  b.regions = {{0x40000000, "input", std::string(input), 1, {}}};
  StreamOptions opt;
  opt.ignored = {amd::sdma::kConstFill};
  auto decode = [](const StreamBinding& bb, std::string_view in, uint32_t file, const StreamOptions& o) {
    StreamResult r = amd::decode_sdma(bb, in, file, o);
    if (r.overlap) __builtin_trap();  // SDMA is serial
    return r;
  };
  return fuzz_stream(input, b, "amd", decode, "copy", opt);
}
