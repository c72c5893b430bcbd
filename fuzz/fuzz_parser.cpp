// libFuzzer target: any bytes go through the loader (.hcq or JSON), and programs that parse go
// through elaboration (capped) and every checker. Invalid input must end in an InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checkers/checker.h"
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
  return 0;
}
