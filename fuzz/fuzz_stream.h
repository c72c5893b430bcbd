// What every stream fuzz target checks of one input (fuzz/fuzz_sdma.cpp; fuzz_pm4.cpp checks the
// same in its own body): decoding either throws an InputError that names its dword, or gives
// commands every one of which reads back through the .hcq parser (the builder's static rules) as
// the one batch of the queue that `head` declares last, and the program then elaborates and checks.
// Anything else traps.
#pragma once
#include <string>
#include <string_view>

#include "checkers/checker.h"
#include "core/syntax/parser.h"
#include "devices/streams.h"

namespace qvet::fuzz {

// `head` declares the bound names and, on its last line, the queue `queue` (no ordering).
template <class Decode>
int check_stream(std::string_view input, std::string head, const char* queue, Decode decode) {
  StreamResult r;
  try {
    r = decode(input);
  } catch (const InputError& e) {
    if (e.message.empty() || (!e.limit && e.loc.line == 0)) __builtin_trap();  // an error names its dword
    return 0;
  }
  std::string text = std::move(head);
  if (r.overlap) text.insert(text.size() - 1, " ordering overlap");
  text += std::string("submit ") + queue + " {\n";
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

}  // namespace qvet::fuzz
