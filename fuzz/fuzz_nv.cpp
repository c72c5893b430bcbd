// libFuzzer target: any bytes as an NVIDIA pushbuffer (devices/nv/pushbuffer.h) against a fixed
// binding in which the input itself is also a region (so SEND_PCAS_A and dependent-QMD pointers can
// name QMDs inside it, and QMD V03/V04 fields come from the input), and the same bytes as a GPFIFO
// (devices/nv `nv-gpfifo`) whose entries name segments inside them. Decoding either throws
// InputError or gives commands every one of which reads back through the .hcq parser (the
// builder's static rules) as part of a program that then elaborates and checks (fuzz_stream.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "devices/nv/pushbuffer.h"
#include "fuzz/fuzz_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qvet;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  StreamBinding b = fuzz_binding();
  // Constant buffer 0 at 0x30000000: the 0x160-byte driver prefix, then arguments.
  std::string cb = std::string(0x160, '\0') + fuzz_words({0x10000000, 0x10010800, 0x10010000, 7, 0x10000ff8});
  b.regions = {{0x30000000, "cbuf0", cb, 2, {}}, {0x40000000, "input", std::string(input), 1, {}}};
  fuzz_stream(input, b, "nv", nv::decode_nv);
  return fuzz_stream(input, b, "nv", nv::decode_nv_gpfifo);  // the same bytes as GPFIFO entries into themselves
}
