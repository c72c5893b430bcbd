// What every stream-decoder fuzz target checks of a decode that did not throw (fuzz_pm4.cpp,
// fuzz_sdma.cpp, fuzz_nv.cpp): each command has a location and reads back through the .hcq parser (the builder's
// static rules) after the declarations of the binding's names, as a `submit c0` block (the queue
// made `ordering overlap` when the stream says so), and the program elaborates and checks.
// The targets share their binding (fuzz_binding) and differ in the regions they add.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "checkers/checker.h"
#include "core/input_error.h"
#include "core/syntax/parser.h"
#include "devices/streams.h"

namespace qvet {

// The binding every stream target uses, before its regions: buffers a, b, signals tl, s1, kernels
// k0 (reads, writes) and k1 (writes, -, reads).
inline StreamBinding fuzz_binding() {
  StreamBinding b;
  b.buffers = {{0x10000000, 4096, "a", {}}, {0x10010000, 4096, "b", {}}};
  b.signals = {{0x20000000, 16, "tl", {}}, {0x20000100, 16, "s1", {}}};
  b.kernels = {{0x70000000, "k0", {{StreamBinding::Arg::Reads}, {StreamBinding::Arg::Writes}}, {}},
               {0x70001000, "k1", {{StreamBinding::Arg::Writes}, {StreamBinding::Arg::Value}, {StreamBinding::Arg::Reads}}, {}}};
  return b;
}
// Little-endian 64-bit words: kernel arguments.
inline std::string fuzz_words(std::initializer_list<uint64_t> ws) {
  std::string s;
  for (uint64_t p : ws)
    for (int i = 0; i < 8; ++i) s += char((p >> (8 * i)) & 0xff);
  return s;
}

// The declarations of fuzz_binding's names on a device of `arch`, ending with queue c0 of `engine`.
inline void check_decoded(const StreamResult& r, const char* arch, const char* engine) {
  std::string text = std::string("device gpu0 ") + arch + R"(
buffer a on gpu0 4K
buffer b on gpu0 4K
signal tl on host = 0
signal s1 on gpu0
queue c0 on gpu0 )" + engine + "\n";
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
}

// Decodes `input` with `decode(binding, bytes, file, options)`: an InputError must name its dword
// (or be an implementation limit) and say something; a decode must pass check_decoded.
template <class Decode>
int fuzz_stream(std::string_view input, const StreamBinding& b, const char* arch, Decode decode, const char* engine = "compute",
                StreamOptions opt = {}) {
  opt.max_dwords = 1 << 16;
  opt.engine = std::string_view(engine) == "copy" ? EngineKind::Copy : EngineKind::Compute;
  StreamResult r;
  try {
    r = decode(b, input, 1, opt);
  } catch (const InputError& e) {
    if (e.message.empty() || (!e.limit && e.loc.line == 0)) __builtin_trap();
    return 0;
  }
  check_decoded(r, arch, engine);
  return 0;
}

}  // namespace qvet
