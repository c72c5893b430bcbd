// libFuzzer target: any bytes go through the loader (.hcq or JSON), and programs that parse go
// through elaboration (capped) and every checker. Invalid input must end in an InputError.
// Programs read as .hcq text are also encoded (cli/encode.h): the encoder decodes every stream it
// writes and throws std::logic_error when a decoder does not give the batch back, a crash here.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checkers/checker.h"
#include "cli/encode.h"
#include "core/input_error.h"
#include "core/syntax/parser.h"
#include "core/syntax/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qvet;
  SourceSet src;
  LoadResult r = load_program_text(src, "fuzz.hcq", std::string(reinterpret_cast<const char*>(data), size));
  if (!r.program) return 0;
  // Printing and re-parsing must succeed and be a fixed point.
  std::string once = print_program(*r.program);
  LoadResult again = load_program_text(src, "printed.hcq", once);
  if (!again.program || print_program(*again.program) != once) __builtin_trap();
  try {
    Trace t = elaborate(*r.program, bind_params(*r.program, {}), 20000);
    check_trace(t);
  } catch (const InputError&) {
  }
  if (r.program->file == 1) {  // .hcq text, not JSON
    try {
      encode_program(*r.program, src, {{}, "fuzz"});
    } catch (const InputError&) {  // a program that submits streams
    }
  }
  return 0;
}
