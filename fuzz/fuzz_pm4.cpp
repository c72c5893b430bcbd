// libFuzzer target: any bytes as an AMD PM4 stream (devices/amd/pm4.h) against a fixed binding
// in which the input itself is also a region (so INDIRECT_BUFFER packets can call into it).
// Decoding either throws InputError or gives commands every one of which reads back through the
// .hcq parser (the builder's static rules) as part of a program that then elaborates and checks.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checkers/checker.h"
#include "core/syntax/parser.h"
#include "devices/amd/pm4.h"

namespace {

// The names the binding below gives addresses to, as a program declares them.
const char* kHead = R"(device gpu0 amd
buffer a on gpu0 4K
buffer b on gpu0 4K
signal tl on host = 0
signal s1 on gpu0
queue c0 on gpu0 compute
)";

qvet::StreamBinding binding(std::string_view input) {
  using qvet::StreamBinding;
  StreamBinding b;
  b.buffers = {{0x10000000, 4096, "a", {}}, {0x10010000, 4096, "b", {}}};
  b.signals = {{0x20000000, 16, "tl", {}}, {0x20000100, 16, "s1", {}}};
  b.kernels = {{0x70000000, "k0", {{StreamBinding::Arg::Reads}, {StreamBinding::Arg::Writes}}, {}},
               {0x70001000, "k1", {{StreamBinding::Arg::Writes}, {StreamBinding::Arg::Value}, {StreamBinding::Arg::Reads}}, {}}};
  std::string kargs;
  for (uint64_t p : {0x10000000ull, 0x10010800ull, 0x10010000ull, 7ull, 0x10000ff8ull})
    for (int i = 0; i < 8; ++i) kargs += char((p >> (8 * i)) & 0xff);
  b.regions = {{0x30000000, "kargs", kargs, 2, {}}, {0x40000000, "input", std::string(input), 1, {}}};
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qvet;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  StreamBinding b = binding(input);
  StreamOptions opt;
  opt.max_dwords = 1 << 16;
  StreamResult r;
  try {
    r = amd::decode_pm4(b, input, 1, opt);
  } catch (const InputError& e) {
    if (e.message.empty() || (!e.limit && e.loc.line == 0)) __builtin_trap();  // an error names its dword
    return 0;
  }
  std::string text = kHead;
  if (r.overlap) text.insert(text.size() - 1, " ordering overlap");
  text += "submit c0 {\n";
  for (const DecodedCommand& c : r.cmds) {
    if (!c.loc.valid()) __builtin_trap();
    text += "  " + c.text + "\n";
  }
  text += "}\n";
  SourceSet src;
  LoadResult p = load_program_text(src, "decoded.hcq", text);
  if (!p.program) __builtin_trap();  // a decoded command the builder rejects
  try {
    Trace t = elaborate(*p.program, bind_params(*p.program, {}), 20000);
    check_trace(t);
  } catch (const InputError&) {
  }
  return 0;
}
