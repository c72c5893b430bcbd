// libFuzzer target: any bytes as an AMD PM4 stream (devices/amd/pm4.h) against a fixed binding
// in which the input itself is also a region (so INDIRECT_BUFFER packets can call into it).
// Decoding either throws InputError or gives commands every one of which reads back through the
// .hcq parser (the builder's static rules) as part of a program that then elaborates and checks
// (fuzz_stream.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "devices/amd/pm4.h"
#include "fuzz/fuzz_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qvet;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  StreamBinding b = fuzz_binding();
  b.regions = {{0x30000000, "kargs", fuzz_words({0x10000000, 0x10010800, 0x10010000, 7, 0x10000ff8}), 2, {}},
               {0x40000000, "input", std::string(input), 1, {}}};
  return fuzz_stream(input, b, "amd", amd::decode_pm4);
}
